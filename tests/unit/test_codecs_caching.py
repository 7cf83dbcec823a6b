"""``encode(cache=...)``: the settings checked, the breakpoints placed, and kept by decode."""

from __future__ import annotations

from typing import Any

import pytest

import threadline as tl
from tests.conformance.judges import anthropic_request_rules
from tests.conformance.judges_mistral_bedrock import bedrock_request_rules
from threadline.codecs import decode
from threadline.codecs import encode

MARK = {"type": "ephemeral"}
POINT = {"cachePoint": {"type": "default"}}


def _history() -> list[tl.Message]:
    return [
        tl.user_message("one"),
        tl.assistant_message("two"),
        tl.user_message("three"),
    ]


@pytest.mark.parametrize(
    ("cache", "path", "words"),
    [
        ("always", "cache", "is not a cache setting"),
        ({"system": True}, "cache", "is not a cache setting"),
        ([True], "cache[0]", "is not a breakpoint"),
        (["system", 3], "cache[1]", "outside the history of 3"),
        ([-4], "cache[0]", "outside the history"),
        (["system", "tools", 0, 1, 2], "cache", "at most 4"),
    ],
)
def test_a_bad_setting_names_cache_and_the_fix(cache: Any, path: str, words: str) -> None:
    with pytest.raises(tl.ValidationError, match=words) as caught:
        encode(_history(), provider="openai_chat", cache=cache)
    assert caught.value.errors[0].path == path


def test_explicit_system_without_a_system_prompt_is_refused() -> None:
    with pytest.raises(tl.ValidationError, match="has no system"):
        encode(_history(), provider="anthropic", cache=["system"])


def test_a_message_without_anything_to_mark_is_refused() -> None:
    history = [*_history(), tl.internal_message("note")]
    with pytest.raises(tl.ValidationError, match="choose another message"):
        encode(history, provider="anthropic", cache=[-1])


def test_explicit_message_breakpoints_on_anthropic() -> None:
    history = _history()
    before = list(history)
    payload = encode(history, provider="anthropic", cache=[0, -1], system="rules")
    assert payload["messages"][0]["content"][-1]["cache_control"] == MARK
    assert "cache_control" not in payload["messages"][1]["content"][-1]
    assert payload["messages"][2]["content"][-1]["cache_control"] == MARK
    assert isinstance(payload["system"], str)  # not asked for
    assert history == before  # the caller's messages are not changed
    assert all(not part.metadata for message in history for part in message.parts)


def test_explicit_message_breakpoints_on_bedrock_round_trip() -> None:
    payload = encode(_history(), provider="bedrock", cache=["system", 1], system="rules")
    assert payload["system"] == [{"text": "rules"}, POINT]
    assert payload["messages"][1]["content"] == [{"text": "two"}, POINT]
    decoded = decode(payload, provider="bedrock")
    assert decoded[2].parts[0].metadata == {"bedrock.cache_point": {"type": "default"}}
    assert encode(decoded, provider="bedrock") == payload  # decode keeps the breakpoints


def test_anthropic_cache_control_round_trips() -> None:
    payload = encode(_history(), provider="anthropic", cache="auto", system="rules")
    decoded = decode(payload, provider="anthropic")
    assert encode(decoded, provider="anthropic") == payload


def test_auto_fills_up_to_four_with_stored_breakpoints() -> None:
    marked = tl.user_message(tl.text_part("x", metadata={"anthropic.cache_control": MARK}))
    history = [marked, tl.assistant_message("a")] * 2 + [tl.user_message("last")]
    history[2] = tl.user_message(tl.text_part("y", metadata={"anthropic.cache_control": MARK}))
    system = tl.text_part("s", metadata={"anthropic.cache_control": MARK})
    history.insert(0, tl.Message(role="system", parts=(system,)))
    payload = encode(history, provider="anthropic", cache="auto")
    assert not anthropic_request_rules(payload)  # 3 stored + the newest turn = 4
    assert payload["messages"][-1]["content"][-1]["cache_control"] == MARK
    with pytest.raises(tl.ValidationError, match="at most 4"):
        encode(history, provider="anthropic", cache=[2, 4])  # 3 stored + 2 asked


def test_the_judges_count_breakpoints() -> None:
    blocks = [{"type": "text", "text": str(i), "cache_control": MARK} for i in range(5)]
    payload = {"messages": [{"role": "user", "content": blocks}]}
    assert anthropic_request_rules(payload)
    bedrock = {"messages": [{"role": "user", "content": [{"text": "a"}, POINT] * 5}]}
    assert bedrock_request_rules(bedrock)
    first = {"system": [POINT, {"text": "a"}], "messages": []}
    assert bedrock_request_rules(first)
