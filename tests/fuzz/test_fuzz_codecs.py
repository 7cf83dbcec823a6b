"""Fuzzing the codecs: damaged payloads and responses raise CodecError or ValidationError.

Each codec's ``decode`` gets what its own ``encode`` wrote for a random conversation, damaged;
``decode_response`` gets the seed responses of ``fuzz/corpus/codecs``, damaged as documents
and as JSON text. Every call runs under the hang guard. Defects still open (see
``fuzz/known.py``) would be reproduced by strict xfail tests; the tests at the end pin the
defects found and fixed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fuzz.known import CODEC_DEFECTS
from fuzz.known import known
from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.fuzz._guard import call_expecting
from tests.fuzz._mutations import mutated_bytes
from tests.fuzz._mutations import mutated_documents
from tests.fuzz._mutations import nested
from tests.strategies import conversations
from tests.strategies import json_values
from threadline.codecs import codec_names
from threadline.codecs import get_codec

EXPECTED = (tl.ValidationError, tl.CodecError)
# A decoded history can break the pairing rules (a result with no call): encode refuses it.
ENCODE_EXPECTED = (*EXPECTED, tl.IntegrityError)
CORPUS = Path(__file__).resolve().parents[2] / "fuzz" / "corpus" / "codecs"
NAMES = codec_names()


def responses(name: str) -> list[Any]:
    paths = sorted(CORPUS.glob(f"{name}.decode_response.*.json"))
    return [json.loads(path.read_bytes()) for path in paths]


def read(
    function: Callable[[Any], Any], value: Any, expected: tuple[type[Exception], ...] = EXPECTED
) -> Any:
    """``function(value)``: what it returns, or ``None`` for a documented error or a known
    defect; anything else fails the test."""
    try:
        return call_expecting(expected, function, value)
    except Exception as error:
        if known(error, CODEC_DEFECTS):
            return None
        raise


@pytest.mark.parametrize("name", NAMES)
@given(messages=conversations(), data=st.data())
def test_decode_of_damaged_payloads(name: str, messages: list[tl.Message], data: Any) -> None:
    codec = get_codec(name)
    payload = data.draw(mutated_documents(codec.encode(messages)))
    decoded = read(codec.decode, payload)
    if decoded is not None:
        read(codec.encode, decoded, ENCODE_EXPECTED)


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_decode_response_of_damaged_responses(name: str, data: Any) -> None:
    codec = get_codec(name)
    response = data.draw(st.sampled_from(responses(name)))
    read(codec.decode_response, data.draw(mutated_documents(response)))
    read(codec.decode_response, data.draw(mutated_bytes(json.dumps(response).encode())))


@pytest.mark.parametrize("name", NAMES)
@given(value=json_values | st.binary(max_size=200) | st.text(max_size=200))
def test_anything_else(name: str, value: Any) -> None:
    codec = get_codec(name)
    read(codec.decode, value)
    read(codec.decode_response, value)
    read(codec.decode, {"messages": value, "contents": value, "input": value})


# ---------------------------------------------------------------------------------------------
# Defects fuzzing found, fixed: each input raised something other than a threadline error.


def tool_use(value: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": "t", "name": "f", "input": value}
    return {"messages": [{"role": "assistant", "content": [block]}]}


def anthropic_response(*content: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "c",
        "stop_reason": "end_turn",
        "content": list(content),
    }


def gemini_result(response: Any) -> dict[str, Any]:
    call = {"functionCall": {"id": "c", "name": "f", "args": {}}}
    result = {"functionResponse": {"id": "c", "name": "f", "response": response}}
    return {"contents": [{"role": "model", "parts": [call]}, {"role": "user", "parts": [result]}]}


SERVER_TOOL = {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}
INVALID_VALUES = [
    (
        "anthropic",
        "decode",
        tool_use({"x": math.nan}),
        r"messages\[0\]\.content\[0\]\.input\.x: NaN is not a JSON value",
    ),
    (
        "anthropic",
        "decode_response",
        anthropic_response(
            SERVER_TOOL,
            {"type": "web_search_tool_result", "tool_use_id": "s", "content": [{"u": math.inf}]},
        ),
        r"content\[1\]\.content\[0\]\.u: Infinity is not a JSON value",
    ),
    (
        "anthropic",
        "decode",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "png", "data": "AA=="},
                        }
                    ],
                }
            ]
        },
        r"messages\[0\]\.content\[0\]\.source\.media_type: 'png' is not a media type",
    ),
    (
        "gemini",
        "decode",
        {
            "contents": [
                {
                    "role": "user",
                    "parts": [{"fileData": {"mimeType": "imageRjpeg", "fileUri": "https://e/p"}}],
                }
            ]
        },
        r"contents\[0\]\.parts\[0\]\.fileData\.mimeType: 'imageRjpeg' is not a media type",
    ),
    (
        "openai_responses",
        "decode_response",
        {
            "id": "r",
            "model": "m",
            "status": "completed",
            "output": [{"type": "web_search_call", "id": "ws", "action": {"q": math.nan}}],
        },
        r"output\[0\]\.action\.q: NaN is not a JSON value",
    ),
]


@pytest.mark.parametrize(("name", "function", "value", "message"), INVALID_VALUES)
def test_decode_translates_invalid_values_to_threadline_errors(
    name: str, function: str, value: Any, message: str
) -> None:
    # Codecs built parts directly, so pydantic's ValidationError escaped untranslated.
    with pytest.raises(tl.CodecError, match=message):
        getattr(get_codec(name), function)(value)


NOT_JSON = [
    ("anthropic", tool_use([b"x"]), r"messages\[0\]\.content\[0\]\.input\[0\]: a bytes value"),
    (
        "bedrock",
        {
            "messages": [
                {
                    "role": "assistant",
                    "content": [{"toolUse": {"toolUseId": "t", "name": "f", "input": b"x"}}],
                }
            ]
        },
        r"messages\[0\]\.content\[0\]\.toolUse\.input: a bytes value is not JSON",
    ),
    (
        "gemini",
        gemini_result({"a": b"x", "b": 1}),
        r"contents\[1\]\.parts\[0\]\.functionResponse\.response\.a: a bytes value is not JSON",
    ),
    (
        "gemini",
        gemini_result({"output": {"n": math.nan}}),
        r"functionResponse\.response\.output\.n: NaN is not a JSON value",
    ),
]


@pytest.mark.parametrize(("name", "payload", "message"), NOT_JSON)
def test_decode_of_values_json_cannot_write_is_a_threadline_error(
    name: str, payload: Any, message: str
) -> None:
    # decode json.dumps'ed values it was given (tool input that is not an object, gemini
    # functionResponse.response): a Python payload can hold bytes (a TypeError), and NaN was
    # written as the invalid JSON text NaN.
    with pytest.raises(tl.CodecError, match=message):
        get_codec(name).decode(payload)


def test_gemini_ref_that_is_not_a_string_is_read_as_json_output() -> None:
    # A $ref that is not a string was used as a dict key (TypeError: unhashable type). It
    # names none of the result's files, so the output is a JSON value like any other.
    [_, tool] = get_codec("gemini").decode(gemini_result({"output": [{"$ref": ["x"]}]}))
    assert tool.parts == (tl.ToolResultPart(call_id="c", name="f", content='[{"$ref":["x"]}]'),)


@pytest.mark.parametrize(
    ("count", "shown"),
    [
        ({"a": 1}, "an object"),
        ("7", "a string"),
        (-1, "a negative number"),
        (1.5, "1.5"),
        (True, "a boolean"),
    ],
)
def test_gemini_usage_that_is_not_a_number_is_a_codec_error(count: Any, shown: str) -> None:
    # Usage counts were added without checking they are numbers (a TypeError).
    response = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "x"}]}}],
        "usageMetadata": {"candidatesTokenCount": count, "thoughtsTokenCount": 1},
    }
    with pytest.raises(tl.CodecError, match=rf"usageMetadata\.candidatesTokenCount: .*got {shown}"):
        get_codec("gemini").decode_response(response)


DEEP_INPUTS = [
    *[(name, "decode_response", "[" * 100_000) for name in NAMES],
    (
        "anthropic",
        "decode",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "x", "cache_control": nested(5000)}],
                }
            ]
        },
    ),
    (
        "anthropic",
        "decode_response",
        anthropic_response({**SERVER_TOOL, "input": {"q": nested(5000)}}),
    ),
]


@pytest.mark.parametrize(("name", "function", "value"), DEEP_INPUTS)
def test_nesting_deeper_than_the_stack_is_a_limit_error(
    name: str, function: str, value: Any
) -> None:
    # Found by fuzzing: json.loads and recursive copies exhausted the stack. Limits fixed it.
    with pytest.raises(tl.ValidationError, match="max_depth"):
        getattr(get_codec(name), function)(value)
