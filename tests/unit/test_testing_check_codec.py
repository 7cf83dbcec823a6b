"""check_codec passes our codecs and catches codecs that break the contract."""

from __future__ import annotations

import itertools
from types import ModuleType
from types import SimpleNamespace
from typing import Any

import pytest

from threadline import CodecError
from threadline import Message
from threadline import ToolResultPart
from threadline.codecs import anthropic
from threadline.codecs import openai_chat
from threadline.testing import ConformanceError
from threadline.testing import check_codec


@pytest.mark.parametrize("module", [openai_chat, anthropic], ids=lambda m: m.__name__)
def test_our_codecs_conform(module: ModuleType) -> None:
    check_codec(module, seed=3)


def wrapped(base: ModuleType, **overrides: Any) -> SimpleNamespace:
    """A codec that is ``base`` except for ``overrides``."""
    functions = {
        name: getattr(base, name)
        for name in ("encode", "decode", "decode_response", "normalize_for_round_trip")
    }
    return SimpleNamespace(__name__="broken", **{**functions, **overrides})


def decode_forgetting_errors(payload: Any) -> list[Message]:
    out = []
    for message in openai_chat.decode(payload):
        parts = tuple(
            ToolResultPart(call_id=p.call_id, content=p.content, name=p.name)
            if isinstance(p, ToolResultPart)
            else p
            for p in message.parts
        )
        out.append(message.model_copy(update={"parts": parts}))
    return out


def encode_concatenating_text(messages: Any, **kw: Any) -> dict[str, Any]:
    payload = openai_chat.encode(messages, **kw)
    for message in payload["messages"]:
        content = message.get("content")
        if isinstance(content, list) and all(block["type"] == "text" for block in content):
            message["content"] = "".join(block["text"] for block in content)
    return payload


def encode_with_results_misaddressed(messages: Any, **kw: Any) -> dict[str, Any]:
    payload = anthropic.encode(messages, **kw)
    for message in payload["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block["type"] == "tool_result":
                block["tool_use_id"] += "_x"
    return payload


counter = itertools.count()


def encode_nondeterministically(messages: Any, **kw: Any) -> dict[str, Any]:
    return {**openai_chat.encode(messages, **kw), "request": next(counter)}


def encode_ignoring_the_unsupported_policy(messages: Any, **kw: Any) -> dict[str, Any]:
    kw.pop("unsupported", None)
    return anthropic.encode(messages, **kw)


def decode_crashing(payload: Any) -> list[Message]:
    return (
        openai_chat.decode(payload)
        if isinstance(payload, dict) and "messages" in payload
        else payload["x"]
    )


@pytest.mark.parametrize(
    ("codec", "law"),
    [
        (
            wrapped(openai_chat, decode=decode_forgetting_errors),
            "decode\\(encode\\(m\\)\\) must equal",
        ),
        (
            wrapped(openai_chat, encode=encode_concatenating_text),
            "decode\\(encode\\(m\\)\\) must equal",
        ),
        (
            wrapped(anthropic, encode=encode_with_results_misaddressed),
            "decode\\(encode\\(m\\)\\) must equal",
        ),
        (wrapped(openai_chat, encode=encode_nondeterministically), "deterministic"),
        (wrapped(anthropic, encode=encode_ignoring_the_unsupported_policy), "unsupported"),
        (wrapped(openai_chat, decode=decode_crashing), "must raise CodecError"),
        (wrapped(openai_chat, decode_response=None), "must define decode_response"),
        (wrapped(anthropic, normalize_for_round_trip=None), "must equal"),
    ],
    ids=[
        "loses is_error",
        "concatenates text",
        "misaddresses results",
        "nondeterministic",
        "ignores unsupported",
        "crashes on garbage",
        "no decode_response",
        "hides its losses",
    ],
)
def test_a_broken_codec_is_caught(codec: Any, law: str) -> None:
    with pytest.raises(ConformanceError, match=law):
        check_codec(codec, examples=15)


def test_a_validator_that_rejects_fails_the_check() -> None:
    def reject_images(payload: dict[str, Any]) -> None:
        if "image_url" in repr(payload):
            raise ValueError("no images please")

    with pytest.raises(ConformanceError, match="no images please"):
        check_codec(openai_chat, validate=reject_images, examples=15)


def test_a_codec_whose_mapped_ids_collide_is_caught() -> None:
    def encode_truncating_ids(messages: Any, **kw: Any) -> dict[str, Any]:
        payload = openai_chat.encode(messages, integrity=kw.pop("integrity", "auto"), **kw)
        for message in payload["messages"]:
            for call in message.get("tool_calls", []):
                call["id"] = call["id"][:3]
            if message["role"] == "tool":
                message["tool_call_id"] = message["tool_call_id"][:3]
        return payload

    with pytest.raises(ConformanceError, match=r"must equal|different ids"):
        check_codec(wrapped(openai_chat, encode=encode_truncating_ids), examples=5)


def test_conformance_error_is_an_assertion_error() -> None:
    assert issubclass(ConformanceError, AssertionError)
    assert not issubclass(ConformanceError, CodecError)
