"""Codec names, lazy loading, and the dispatching encode / decode / decode_response."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

import threadline as tl
from tests.dialect_cases import DIALECTS
from threadline import CodecError
from threadline import UnknownProviderError
from threadline import codecs
from threadline.codecs import _dialects
from threadline.codecs import anthropic
from threadline.codecs import openai_chat

DESIGN_ENCODE_KEYWORDS = ["system", "model", "integrity", "reasoning", "unsupported"]
ENCODE_KEYWORDS = [*DESIGN_ENCODE_KEYWORDS, "text_files"]
"""DESIGN's keywords, then the options threadline adds after them."""


MODULES = (
    "anthropic",
    "bedrock",
    "cohere",
    "gemini",
    "mistral",
    "ollama",
    "openai_chat",
    "openai_responses",
)
"""The codecs that are modules of their own; the dialects are objects of ``_dialects``."""
REGISTERED = tuple(sorted((*MODULES, *DIALECTS)))


def test_the_registered_codecs() -> None:
    assert codecs.codec_names() == REGISTERED
    assert codecs.get_codec("openai_chat") is openai_chat
    assert codecs.get_codec("anthropic") is anthropic
    for name in MODULES:
        assert codecs.get_codec(name) is importlib.import_module(f"threadline.codecs.{name}")
    for name in DIALECTS:
        assert codecs.get_codec(name) is _dialects.DIALECTS[name]


@pytest.mark.parametrize("name", ["openai", "gemini-pro", "", None])
def test_an_unknown_name_lists_the_known_ones(name: object) -> None:
    with pytest.raises(
        UnknownProviderError,
        match=", ".join(repr(name) for name in REGISTERED),
    ) as caught:
        codecs.get_codec(name)  # type: ignore[arg-type]
    assert isinstance(caught.value, LookupError)
    assert isinstance(caught.value, CodecError)
    with pytest.raises(UnknownProviderError):
        codecs.encode([tl.user_message("hi")], provider=name)  # type: ignore[arg-type]


@pytest.mark.parametrize("module", [openai_chat, anthropic], ids=lambda m: m.__name__)
def test_every_codec_has_the_design_signatures(module: object) -> None:
    encode = inspect.signature(module.encode)  # type: ignore[attr-defined]
    assert [
        p.name for p in encode.parameters.values() if p.kind is p.KEYWORD_ONLY
    ] == ENCODE_KEYWORDS
    decode = inspect.signature(module.decode)  # type: ignore[attr-defined]
    assert list(decode.parameters) == ["payload", "limits"]
    assert decode.parameters["limits"].kind is inspect.Parameter.KEYWORD_ONLY
    decode_response = inspect.signature(module.decode_response)  # type: ignore[attr-defined]
    assert list(decode_response.parameters) == ["response", "limits", "choice", "model"]
    for keyword in ("limits", "choice", "model"):
        assert decode_response.parameters[keyword].kind is inspect.Parameter.KEYWORD_ONLY


def test_the_functions_dispatch_by_name() -> None:
    history = [tl.system_message("Be brief."), tl.user_message("hi")]
    for name, module in (("openai_chat", openai_chat), ("anthropic", anthropic)):
        payload = codecs.encode(history, provider=name, reasoning="drop")
        assert payload == module.encode(history, reasoning="drop")
        assert [m.parts for m in codecs.decode(payload, provider=name)] == [
            m.parts for m in history
        ]
    response = {"content": [{"type": "text", "text": "ok"}], "model": "claude-x"}
    assert codecs.decode_response(response, provider="anthropic").text == "ok"


def test_codecs_load_on_first_use() -> None:
    code = (
        "import sys, threadline, threadline.codecs; "
        "print(sorted(m for m in sys.modules if m.startswith('threadline.codecs.')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    # the descriptor table (names only: it imports nothing of threadline), never a codec
    assert loaded.stdout.strip() == (
        "['threadline.codecs._formats', 'threadline.codecs._registry', 'threadline.codecs.base']"
    )
