"""Tool arguments that arrive as JSON text (OpenAI Chat, Mistral, Responses, ``tool_call_part``)
are parsed within the limits of the call that reads them, and what is accepted reloads.

A text that is not a JSON object threadline can hold (not JSON, an array, NaN, a number too
large) is an *invalid call*: ``arguments={}`` with the text in ``raw_arguments``. A JSON object
that nests deeper than the limits allow is refused with a ``LimitExceededError`` naming where
the text was, never a ``RecursionError`` or a pydantic-core error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import threadline as tl
from threadline.limits import DEPTH_CEILING
from threadline.limits import LimitExceededError
from threadline.limits import Limits


def deep_object(levels: int) -> str:
    """A JSON object whose nesting is ``levels`` (the object itself is level 1)."""
    return '{"a":' + "[" * (levels - 1) + "]" * (levels - 1) + "}"


def chat_payload(text: str) -> dict[str, Any]:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": text}}
    return {"messages": [{"role": "assistant", "content": None, "tool_calls": [call]}]}


def responses_payload(text: str) -> dict[str, Any]:
    return {"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": text}]}


def chat_response(text: str) -> dict[str, Any]:
    message = chat_payload(text)["messages"][0]
    return {
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
    }


def responses_response(text: str) -> dict[str, Any]:
    return {"model": "m", "status": "completed", "output": responses_payload(text)["input"]}


# (provider, how to wrap the text, the JSON path of the text in that payload)
DECODERS: list[tuple[str, Callable[[str], dict[str, Any]], str]] = [
    ("openai_chat", chat_payload, "messages[0].tool_calls[0].function.arguments"),
    ("mistral", chat_payload, "messages[0].tool_calls[0].function.arguments"),
    ("openai_responses", responses_payload, "input[0].arguments"),
]
RESPONSE_DECODERS: list[tuple[str, Callable[[str], dict[str, Any]], str]] = [
    ("openai_chat", chat_response, "choices[0].message.tool_calls[0].function.arguments"),
    ("mistral", chat_response, "choices[0].message.tool_calls[0].function.arguments"),
    ("openai_responses", responses_response, "output[0].arguments"),
]
IDS = [name for name, _, _ in DECODERS]


def the_call(messages: list[tl.Message]) -> tl.ToolCallPart:
    (call,) = [part for message in messages for part in message.tool_calls]
    return call


def reloads(messages: list[tl.Message], limits: Limits) -> None:
    assert tl.load_json(tl.dump_json(messages), limits=limits) == messages


@pytest.mark.parametrize(("name", "wrap", "where"), DECODERS, ids=IDS)
@pytest.mark.parametrize("levels", [150, 300, 1_000, 100_000])
def test_decode_refuses_arguments_deeper_than_the_limits(
    name: str, wrap: Callable[[str], dict[str, Any]], where: str, levels: int
) -> None:
    with pytest.raises(LimitExceededError) as info:
        tl.decode(wrap(deep_object(levels)), provider=name, limits=Limits.untrusted())
    assert info.value.limit == "max_depth"
    assert info.value.path.startswith(where)
    assert f"{name}.decode" in str(info.value)


@pytest.mark.parametrize(("name", "wrap", "where"), RESPONSE_DECODERS, ids=IDS)
@pytest.mark.parametrize("levels", [150, 1_000])
def test_decode_response_refuses_arguments_deeper_than_the_limits(
    name: str, wrap: Callable[[str], dict[str, Any]], where: str, levels: int
) -> None:
    with pytest.raises(LimitExceededError) as info:
        tl.decode_response(wrap(deep_object(levels)), provider=name, limits=Limits.untrusted())
    assert info.value.limit == "max_depth"
    assert info.value.path.startswith(where)


@pytest.mark.parametrize(("name", "wrap", "where"), DECODERS, ids=IDS)
@pytest.mark.parametrize("limits", [Limits.untrusted(), Limits(), Limits.none()])
def test_the_deepest_arguments_a_limit_allows_are_read_and_reload(
    name: str, wrap: Callable[[str], dict[str, Any]], where: str, limits: Limits
) -> None:
    # Arguments sit at depth 6 in the envelope dump_json writes, so they may nest
    # max_depth - 5 levels (the object itself is one of them).
    allowed = min(limits.max_depth - 5, 190)
    messages = tl.decode(wrap(deep_object(allowed)), provider=name, limits=limits)
    assert the_call(messages).raw_arguments is None
    reloads(messages, limits)
    with pytest.raises(tl.ValidationError):
        tl.decode(wrap(deep_object(allowed + 1)), provider=name, limits=limits)


@pytest.mark.parametrize(("name", "wrap", "where"), DECODERS, ids=IDS)
@pytest.mark.parametrize(
    "text",
    [
        pytest.param("[" * 1_000 + "]" * 1_000, id="deep array"),  # not an object, however deep
        pytest.param("[" * 100_000, id="deeper than any parser"),
        pytest.param('{"a": NaN}', id="NaN"),
        pytest.param('{"a": Infinity}', id="Infinity"),
        pytest.param('{"a": -Infinity}', id="-Infinity"),
        pytest.param('{"a": 1e999}', id="overflows to infinity"),
        pytest.param('{"a": 1' + "0" * 5_000 + "}", id="more digits than a parser reads"),
        pytest.param('{"a": "\\ud800"}', id="lone surrogate escape"),
        pytest.param('{"a": 1} trailing', id="trailing text"),
        pytest.param("", id="empty"),
    ],
)
def test_text_that_is_no_json_object_is_an_invalid_call_that_reloads(
    name: str, wrap: Callable[[str], dict[str, Any]], where: str, text: str
) -> None:
    messages = tl.decode(wrap(text), provider=name, limits=Limits.untrusted())
    call = the_call(messages)
    assert call.arguments == {}
    assert call.raw_arguments == text
    reloads(messages, Limits.untrusted())


@pytest.mark.parametrize(("name", "wrap", "where"), DECODERS, ids=IDS)
def test_arguments_within_the_limits_are_parsed(
    name: str, wrap: Callable[[str], dict[str, Any]], where: str
) -> None:
    text = '{"city": "Paris", "n": [1, 2.5, -0.0, true, null], "big": 1' + "0" * 4_000 + "}"
    messages = tl.decode(wrap(text), provider=name, limits=Limits.untrusted())
    call = the_call(messages)
    assert call.raw_arguments is None
    assert call.arguments["city"] == "Paris"
    assert call.arguments["big"] == 10**4_000
    reloads(messages, Limits.untrusted())


def test_decode_with_default_limits_names_the_text_and_the_depth() -> None:
    with pytest.raises(LimitExceededError) as info:
        tl.decode(chat_payload(deep_object(1_000)), provider="openai_chat")
    assert info.value.limit == "max_depth"
    assert info.value.maximum == Limits().max_depth
    message = str(info.value)
    assert "messages[0].tool_calls[0].function.arguments" in message


def test_tool_call_part_reads_deep_text_without_overflowing() -> None:
    text = "[" * 1_000 + "]" * 1_000
    part = tl.tool_call_part("c", "f", text)
    assert (part.arguments, part.raw_arguments) == ({}, text)
    message = tl.assistant_message(part)
    reloads([message], Limits.none())


@pytest.mark.parametrize("levels", [196, 300, 1_000, 100_000])
def test_tool_call_part_refuses_an_object_too_deep_to_reload(levels: int) -> None:
    with pytest.raises(tl.ValidationError) as info:
        tl.tool_call_part("c", "f", deep_object(levels))
    assert "arguments" in str(info.value)
    assert not isinstance(info.value.__cause__, RecursionError)


def test_tool_call_part_accepts_the_deepest_object_that_reloads() -> None:
    levels = DEPTH_CEILING - 10
    part = tl.tool_call_part("c", "f", deep_object(levels))
    assert part.raw_arguments is None
    reloads([tl.assistant_message(part)], Limits.none())


@pytest.mark.parametrize(
    "text",
    ['{"a": NaN}', '{"a": 1e999}', '{"a": 1' + "0" * 5_000 + "}"],
    ids=["NaN", "overflows", "digits"],
)
def test_tool_call_part_keeps_numbers_json_cannot_hold_as_raw_text(text: str) -> None:
    part = tl.tool_call_part("c", "f", text)
    assert (part.arguments, part.raw_arguments) == ({}, text)
    reloads([tl.assistant_message(part)], Limits())


def test_a_python_int_too_long_for_json_text_is_refused() -> None:
    # JSON parsers read at most 4,300 digits: a longer int would be written but never read back.
    tl.tool_call_part("c", "f", {"a": 10**4_299})
    with pytest.raises(tl.ValidationError, match="digits"):
        tl.tool_call_part("c", "f", {"a": 10**4_300})
    with pytest.raises(tl.ValidationError, match="digits"):
        tl.tool_call_part("c", "f", {"a": -(10**5_000)})


def test_response_text_is_parsed_by_the_bounded_parser() -> None:
    from threadline.codecs._reading import as_json_document

    with pytest.raises(LimitExceededError, match="max_depth"):
        as_json_document("[" * 100_000, "test")
    with pytest.raises(tl.CodecError, match="not a valid test response"):
        as_json_document('{"a": ', "test")
    assert as_json_document('{"a": 1}', "test") == {"a": 1}
