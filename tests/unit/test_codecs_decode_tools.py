"""``decode(payload, ..., tools=)``: a request body read back with the definitions it was
encoded with gives the stored tool names back, as ``decode_response(..., tools=)`` does."""

from __future__ import annotations

import pytest

import threadline as tl
from threadline import Message
from threadline.codecs import codec_names
from threadline.codecs import decode
from threadline.codecs import encode

REFUSED = "files/read v2"
"""Refused by every provider's pattern (Gemini too: no ``/`` or space)."""

TOOL = tl.ToolDefinition(
    REFUSED,
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
OTHER = tl.ToolDefinition("lookup", "Look something up.")


def _history() -> list[Message]:
    return [
        tl.user_message("Read a.txt."),
        tl.assistant_message(tl.tool_call_part("call_1", REFUSED, {"path": "a.txt"})),
        tl.tool_message(tl.tool_result_part("call_1", "hello", name=REFUSED)),
        tl.assistant_message(tl.text_part("It says hello.")),
    ]


def _names(messages: list[Message]) -> list[str | None]:
    calls: list[str | None] = [call.name for message in messages for call in message.tool_calls]
    return calls + [result.name for message in messages for result in message.tool_results]


@pytest.mark.parametrize("provider", codec_names())
def test_decode_with_the_tools_gives_the_stored_names_back(provider: str) -> None:
    body = encode(_history(), provider=provider, tools=[TOOL, OTHER])
    assert REFUSED not in str(body)  # the wire name went out
    plain = decode(body, provider=provider)
    assert REFUSED not in _names(plain)
    back = decode(body, provider=provider, tools=[TOOL, OTHER])
    names = _names(back)
    assert REFUSED in names
    assert set(names) <= {REFUSED, None}
    # Nothing else changes: only the names were mapped back.
    assert [message.text for message in back] == [message.text for message in plain]


@pytest.mark.parametrize("provider", ["openai_chat", "gemini"])
def test_tool_names_wins_over_tools_for_the_same_wire_name(provider: str) -> None:
    body = encode(_history(), provider=provider, tools=[TOOL])
    wire = tl.codecs.wire_tool_names([TOOL], provider=provider)
    (wire_name,) = wire
    back = decode(body, provider=provider, tools=[TOOL], tool_names={wire_name: "renamed"})
    assert set(_names(back)) <= {"renamed", None}


def test_decode_with_tools_the_provider_takes_as_they_are_changes_nothing() -> None:
    history = [
        tl.user_message("Look it up."),
        tl.assistant_message(tl.tool_call_part("call_1", "lookup", {})),
        tl.tool_message(tl.tool_result_part("call_1", "found", name="lookup")),
    ]
    body = encode(history, provider="anthropic", tools=[OTHER])
    with_tools = decode(body, provider="anthropic", tools=[OTHER])
    without = decode(body, provider="anthropic")
    assert [(m.role, m.parts) for m in with_tools] == [(m.role, m.parts) for m in without]


def test_decode_tools_must_be_a_list_of_definitions() -> None:
    body = encode(_history(), provider="openai_chat")
    with pytest.raises(TypeError, match=r"tools must be a list of threadline\.ToolDefinition"):
        decode(body, provider="openai_chat", tools=TOOL)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"tools\[0\]"):
        decode(body, provider="openai_chat", tools=["files/read v2"])  # type: ignore[list-item]
