"""The encode shortcuts (issue 20, fourth pass) decide as the walks they replace."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import any_messages
from tests.strategies import conversations
from threadline.codecs import _requests
from threadline.codecs import bedrock
from threadline.messages import Message

histories = st.one_of(
    st.tuples(conversations(), st.sampled_from(["auto", "off"])),
    # any messages, orphaned results with names no call has among them: sent as they are
    st.tuples(st.lists(any_messages(), min_size=1, max_size=6), st.just("off")),
)


def _names(body: dict[str, Any]) -> list[str]:
    return [spec["toolSpec"]["name"] for spec in body.get("toolConfig", {}).get("tools", [])]


@given(histories, st.sampled_from(["auto", "text", "drop"]))
def test_bedrock_tool_config_names_the_tools_the_body_calls(
    case: tuple[list[Message], str], reasoning: str
) -> None:
    history, integrity = case
    body, called = bedrock.encode_with_calls(
        history, model=None, integrity=integrity, reasoning=reasoning, unsupported="drop"
    )
    assert called == _requests._bedrock_history_tools(body)  # the walk it replaces
    full = tl.encode(
        history,
        provider="bedrock",
        integrity=integrity,  # type: ignore[arg-type]
        reasoning=reasoning,  # type: ignore[arg-type]
        unsupported="drop",
    )
    assert _names(full) == called
    assert full["messages"] == body["messages"]
