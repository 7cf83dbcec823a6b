"""Codec names, the modules behind them, and the dispatching ``encode`` / ``decode`` functions.

A codec module is imported the first time its name is used, so ``import threadline`` and
``import threadline.codecs`` stay light. Adding a wire format is one line in ``_CODECS``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any, cast

from threadline.codecs.base import (
    Codec,
    IntegrityMode,
    ReasoningPolicy,
    TextFilesPolicy,
    UnsupportedPolicy,
)
from threadline.errors import UnknownProviderError
from threadline.limits import Limits
from threadline.messages import Message

__all__ = ["codec_names", "decode", "decode_response", "encode", "get_codec"]

_CODECS: dict[str, str] = {
    "anthropic": "threadline.codecs.anthropic",
    "bedrock": "threadline.codecs.bedrock",
    "gemini": "threadline.codecs.gemini",
    "mistral": "threadline.codecs.mistral",
    "openai_chat": "threadline.codecs.openai_chat",
    "openai_responses": "threadline.codecs.openai_responses",
}


def codec_names() -> tuple[str, ...]:
    """The registered codec names, sorted."""
    return tuple(sorted(_CODECS))


def get_codec(name: str) -> Codec:
    """The codec module registered as ``name`` (imported on first use).

    Raises:
        threadline.UnknownProviderError: no codec has that name; the message lists the names.
    """
    try:
        module_path = _CODECS[name]
    except (KeyError, TypeError):
        known = ", ".join(repr(known) for known in codec_names())
        raise UnknownProviderError(f"no codec named {name!r}; the codecs are {known}") from None
    return cast(Codec, importlib.import_module(module_path))


def encode(
    messages: Iterable[Message],
    *,
    provider: str,
    system: str | None = None,
    model: str | None = None,
    integrity: IntegrityMode = "auto",
    reasoning: ReasoningPolicy = "auto",
    unsupported: UnsupportedPolicy = "placeholder",
    text_files: TextFilesPolicy = "unsupported",
) -> dict[str, Any]:
    """Write ``messages`` as the history fragment of a request in the format ``provider``.

    ``encode(history, provider="anthropic")`` is ``threadline.codecs.anthropic.encode(history)``;
    see ``docs/providers.md`` for what each format carries.

    Args:
        messages: the history, in order.
        provider: a codec name: ``openai_chat``, ``anthropic``...
        system: system text placed before everything else, where the format wants it.
        model: the target model; reasoning produced by another model is not replayed.
        integrity: ``auto`` repairs the history first, ``strict`` raises instead of
            repairing, ``off`` sends it as it is.
        reasoning: ``auto`` replays reasoning only to the provider and model that produced it;
            ``text`` sends other reasoning as plain text; ``drop`` sends none.
        unsupported: a part the format cannot carry becomes a placeholder text
            (``placeholder``), is left out (``drop``) or raises (``raise``).
        text_files: ``inline`` sends a text file (``text/*``, JSON, CSV) the format cannot
            carry as a file as its text, ``<file name="..." media_type="...">\\n…\\n</file>``,
            instead of applying ``unsupported`` to it (``unsupported``, the default).

    Raises:
        threadline.UnknownProviderError: no codec has that name.
        threadline.IntegrityError: the history breaks a rule ``integrity`` does not repair.
        threadline.UnsupportedContentError: ``unsupported="raise"`` and a part cannot be sent.
        ValueError: an option has a value outside its documented choices.
    """
    options: dict[str, Any] = {}
    if text_files != "unsupported":  # a codec written before the option still works
        options["text_files"] = text_files
    return get_codec(provider).encode(
        messages,
        system=system,
        model=model,
        integrity=integrity,
        reasoning=reasoning,
        unsupported=unsupported,
        **options,
    )


def decode(payload: Any, *, provider: str, limits: Limits | None = None) -> list[Message]:
    """Read a history fragment, or a whole request body, of the format ``provider``.

    Args:
        payload: what ``encode`` returned, a whole request body, or a message list.
        provider: a codec name: ``openai_chat``, ``anthropic``...
        limits: how much to read (`Limits`); ``None`` means the defaults.

    Raises:
        threadline.UnknownProviderError: no codec has that name.
        threadline.CodecError: ``payload`` is not of the format; the message names the JSON
            path of the first value that does not fit.
        threadline.LimitExceededError: the payload exceeds ``limits``.
        threadline.ValidationError: the payload holds values threadline cannot store.
    """
    return get_codec(provider).decode(payload, limits=limits)


def decode_response(response: Any, *, provider: str, limits: Limits | None = None) -> Message:
    """Read a provider response (a JSON dict, JSON text or the SDK's response object) into an
    assistant message; usage and the response id are in its ``metadata``.

    Args:
        response: the response.
        provider: a codec name.
        limits: how much to read (`Limits`); ``None`` means the defaults.

    Raises:
        threadline.UnknownProviderError: no codec has that name.
        threadline.CodecError: ``response`` is not a response of the format.
        threadline.LimitExceededError: the response exceeds ``limits``.
    """
    return get_codec(provider).decode_response(response, limits=limits)
