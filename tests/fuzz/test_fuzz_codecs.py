"""Fuzzing the codecs: damaged payloads and responses raise CodecError or ValidationError.

Each codec's ``decode`` gets what its own ``encode`` wrote for a random conversation, damaged;
``decode_response`` gets the seed responses of ``fuzz/corpus/codecs``, damaged as documents
and as JSON text. Every call runs under the hang guard. Defects already found (see
``fuzz/known.py``) are reproduced by the strict xfail tests at the end.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic
import pytest
from fuzz.known import CODEC_DEFECTS, known
from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.fuzz._guard import call_expecting
from tests.fuzz._mutations import mutated_bytes, mutated_documents, nested
from tests.strategies import conversations, json_values
from threadline.codecs import codec_names, get_codec

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
# Reproducers of defects found by fuzzing (see fuzz/known.py); each xfail is strict, so a fix
# shows up as a failure that asks for the marker and the fuzz/known.py entry to be removed.


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
    ("anthropic", "decode", tool_use({"x": math.nan})),
    (
        "anthropic",
        "decode_response",
        anthropic_response(
            SERVER_TOOL,
            {"type": "web_search_tool_result", "tool_use_id": "s", "content": [{"u": math.inf}]},
        ),
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
    ),
]


@pytest.mark.xfail(
    strict=True,
    raises=pydantic.ValidationError,
    reason="codecs build parts directly, so pydantic's ValidationError escapes untranslated "
    "(NaN or Infinity in tool input or server tool content, an invalid media type)",
)
@pytest.mark.parametrize(("name", "function", "value"), INVALID_VALUES)
def test_decode_translates_invalid_values_to_threadline_errors(
    name: str, function: str, value: Any
) -> None:
    with pytest.raises(EXPECTED):
        getattr(get_codec(name), function)(value)


NOT_JSON = [
    ("anthropic", tool_use([b"x"])),
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
    ),
    ("gemini", gemini_result({"a": b"x", "b": 1})),
]


@pytest.mark.xfail(
    strict=True,
    raises=TypeError,
    reason="decode json.dumps values it was given (tool input that is not an object, gemini "
    "functionResponse.response), and a Python payload can hold bytes",
)
@pytest.mark.parametrize(("name", "payload"), NOT_JSON)
def test_decode_of_values_json_cannot_write_is_a_threadline_error(name: str, payload: Any) -> None:
    with pytest.raises(EXPECTED):
        get_codec(name).decode(payload)


@pytest.mark.xfail(
    strict=True, raises=TypeError, reason="gemini uses a functionResponse $ref as a dict key"
)
def test_gemini_ref_that_is_not_a_string_is_a_codec_error() -> None:
    with pytest.raises(EXPECTED):
        get_codec("gemini").decode(gemini_result({"output": [{"$ref": ["x"]}]}))


@pytest.mark.xfail(
    strict=True,
    raises=TypeError,
    reason="gemini adds usage counts without checking they are numbers",
)
def test_gemini_usage_that_is_not_a_number_is_a_codec_error() -> None:
    response = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "x"}]}}],
        "usageMetadata": {"candidatesTokenCount": {"a": 1}, "thoughtsTokenCount": 1},
    }
    with pytest.raises(tl.CodecError):
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
