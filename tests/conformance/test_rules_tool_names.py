"""Tool names outside a provider's pattern: once ``test_rules_known.py`` reproducers (each
API refuses them with a pattern error; ``mistral_common`` refuses ``files.read``), now kept by
every encoder, with every rule judged (none tolerated)."""

from __future__ import annotations

import pytest

import threadline as tl
from tests.conformance import _rules
from threadline import Message
from threadline.codecs import decode
from threadline.codecs import encode
from threadline.codecs import wire_tool_names

HOSTILE = ("files.read", "get weather", "t" * 70, "ns:lookup", "tool/v2", "météo", "1st")


def tool_round(name: str, call_id: str = "call_1") -> list[Message]:
    return [
        tl.assistant_message(tl.tool_call_part(call_id, name, {"city": "Paris"})),
        tl.tool_message(tl.tool_result_part(call_id, "18C", name=name)),
    ]


def request(fmt: str, history: list[Message]) -> dict[str, object]:
    payload = encode(history, provider=fmt)
    if fmt == "bedrock":
        payload["toolConfig"] = {"tools": []}
    return payload


@pytest.mark.parametrize("fmt", _rules.FORMATS)
@pytest.mark.parametrize("name", HOSTILE)
def test_the_encoder_keeps_the_tool_name_pattern(fmt: str, name: str) -> None:
    history = [tl.user_message("What's the weather in Paris?"), *tool_round(name)]
    _rules.judge_rules(fmt, request(fmt, history), scope="request", known=frozenset())


@pytest.mark.parametrize("fmt", _rules.FORMATS)
def test_names_that_clean_alike_stay_apart_and_come_back(fmt: str) -> None:
    names = ("files.read", "files read", "files_read", "files/read")
    history = [tl.user_message("Read them.")]
    for number, name in enumerate(names):
        history.extend(tool_round(name, f"call_{number}"))
    payload = request(fmt, history)
    _rules.judge_rules(fmt, payload, scope="request", known=frozenset())
    back = decode(payload, provider=fmt, tool_names=wire_tool_names(history, provider=fmt))
    assert [call.name for message in back for call in message.tool_calls] == list(names)
