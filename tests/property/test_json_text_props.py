"""Invariants of JSON text threadline parses (tool arguments) and of media types.

Whatever ``decode`` / ``decode_response`` / ``tool_call_part`` accept reloads equal through
``dump_json`` -> ``load_json`` under the same limits; what they refuse raises threadline's
own errors (never ``RecursionError`` or a pydantic-core error). A media type is accepted only
if it is one, and then it reloads.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import json_values
from threadline.limits import DEPTH_CEILING
from threadline.limits import LimitExceededError
from threadline.limits import Limits
from threadline.messages import is_media_type

EXPECTED = (tl.ValidationError, tl.CodecError)


def wrapped(value: Any, levels: int) -> Any:
    """``value`` inside ``levels`` arrays, built without recursion."""
    for _ in range(levels):
        value = [value]
    return value


@st.composite
def argument_texts(draw: st.DrawFn) -> str:
    """Text a model may emit as tool arguments: valid objects (some nested deeply), other JSON,
    hostile numbers and tokens, and broken text."""
    kind = draw(st.sampled_from(["object", "deep", "other", "hostile", "text"]))
    if kind == "object":
        return json.dumps(draw(st.dictionaries(st.text(max_size=5), json_values, max_size=4)))
    if kind == "deep":
        levels = draw(st.integers(0, 400))
        inner = json.dumps(wrapped(draw(json_values), levels))
        return '{"a": ' + inner + "}" if draw(st.booleans()) else inner
    if kind == "other":
        return json.dumps(draw(json_values))
    if kind == "hostile":
        number = draw(st.sampled_from(["NaN", "-Infinity", "1e999", "1" + "0" * 4_400, "-0"]))
        return draw(st.sampled_from(['{"a": %s}', '{"a": [%s]}', "%s"])) % number
    return draw(st.text(alphabet='{}[]",:0123456789eE.-+ \\natrufl', max_size=40))


limits_strategy = st.builds(
    lambda depth, string: dataclasses.replace(Limits.none(), max_depth=depth, max_string=string),
    st.integers(8, DEPTH_CEILING),
    st.none() | st.integers(64, 1_000),  # generated message ids are 36 characters
)


def chat(text: str) -> dict[str, Any]:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": text}}
    return {"messages": [{"role": "assistant", "content": None, "tool_calls": [call]}]}


def responses(text: str) -> dict[str, Any]:
    return {"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": text}]}


def check_reloads(messages: list[tl.Message], limits: Limits) -> None:
    assert tl.load_json(tl.dump_json(messages), limits=limits) == messages


@given(
    text=argument_texts(),
    limits=limits_strategy,
    provider=st.sampled_from(["openai_chat", "mistral", "openai_responses"]),
)
def test_decoded_arguments_reload_under_the_same_limits(
    text: str, limits: Limits, provider: str
) -> None:
    payload = responses(text) if provider == "openai_responses" else chat(text)
    try:
        messages = tl.decode(payload, provider=provider, limits=limits)
    except EXPECTED:
        return
    (call,) = messages[0].tool_calls
    assert call.raw_arguments is None or (call.arguments == {} and call.raw_arguments == text)
    check_reloads(messages, limits)


@given(text=argument_texts(), limits=limits_strategy)
def test_decoded_response_arguments_reload_under_the_same_limits(text: str, limits: Limits) -> None:
    response = {"model": "m", "choices": [{"index": 0, "message": chat(text)["messages"][0]}]}
    try:
        message = tl.decode_response(json.dumps(response), provider="openai_chat", limits=limits)
    except EXPECTED:
        return
    check_reloads([message], limits)


@given(text=argument_texts())
def test_tool_call_part_text_reloads(text: str) -> None:
    try:
        part = tl.tool_call_part("c", "f", text)
    except tl.ValidationError:
        assert text.lstrip().startswith("{")  # only an object can be refused
        return
    check_reloads([tl.assistant_message(part)], Limits.none())


@given(levels=st.integers(0, 2_000))
def test_an_object_too_deep_is_a_limit_error_never_a_crash(levels: int) -> None:
    text = '{"a": ' + "[" * levels + "]" * levels + "}"
    limits = Limits.untrusted()
    allowed = levels + 1 <= limits.max_depth - 5  # arguments stand at depth 6
    try:
        messages = tl.decode(chat(text), provider="openai_chat", limits=limits)
    except LimitExceededError as error:
        refused: LimitExceededError | None = error
    else:
        refused = None
    if refused is not None:
        assert refused.limit == "max_depth"
        assert not allowed
        return
    assert allowed
    check_reloads(messages, limits)


media_type_texts = st.one_of(
    st.text(max_size=30),
    st.text(alphabet='abcxyz019/+.-;= \t\r\n"*\\', max_size=30),
    st.sampled_from(
        [
            "image/png",
            "image/*",
            "text/plain; charset=utf-8",
            'text/plain;charset="utf-8"',
            "text/html\r\nX-Injected: 1",
            "../../etc/passwd",
        ]
    ),
)


@given(media_type=media_type_texts)
def test_a_media_type_is_accepted_only_when_it_is_one(media_type: str) -> None:
    try:
        part = tl.file_part(b"x", media_type)
    except tl.ValidationError as error:
        problem = str(error)
    else:
        problem = ""
    if problem:
        assert not is_media_type(media_type)
        assert "media_type" in problem
        return
    assert is_media_type(media_type)
    assert not {"\r", "\n", "\\"} & set(media_type)
    assert not media_type.startswith(".")
    check_reloads([tl.user_message(part)], Limits())
