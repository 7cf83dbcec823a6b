"""The codec contract: ``threadline.codecs.base`` is all a third-party codec needs."""

from __future__ import annotations

import json
import types
from typing import Any

import threadline as tl
from threadline import CodecError
from threadline import Message
from threadline import ReasoningPart
from threadline import ValidationError
from threadline.codecs import base
from threadline.limits import Limits
from threadline.testing import check_codec


def test_base_exports_the_contract_and_nothing_else() -> None:
    assert base.__all__ == [
        "TOOL_ERROR_PREFIX",
        "Codec",
        "EncodeOptions",
        "IntegrityMode",
        "ReasoningPolicy",
        "TextFilesPolicy",
        "UnsupportedPolicy",
        "prepare_for_encoding",
    ]
    public = {name for name in vars(base) if not name.startswith("_")}
    helpers = {"Reader", "fold_attachments", "strip_nulls", "map_call_ids", "merge_into_turns"}
    assert not public & helpers


def _echo_codec() -> types.SimpleNamespace:
    """A whole codec written against the contract and threadline's public API only: it sends
    the messages as threadline's own JSON document, and keeps reasoning unless told to drop
    it."""

    def kept(messages: list[Message], reasoning: base.ReasoningPolicy) -> list[Message]:
        out = []
        for message in messages:
            parts = tuple(
                part
                for part in message.parts
                if not (reasoning == "drop" and isinstance(part, ReasoningPart))
            )
            if parts:
                out.append(message.model_copy(update={"parts": parts}))
        return out

    def encode(
        messages: Any,
        *,
        system: str | None = None,
        model: str | None = None,
        integrity: base.IntegrityMode = "auto",
        reasoning: base.ReasoningPolicy = "auto",
        unsupported: base.UnsupportedPolicy = "placeholder",
    ) -> dict[str, Any]:
        prepared, options = base.prepare_for_encoding(
            messages,
            provider="echo",
            model=model,
            integrity=integrity,
            reasoning=reasoning,
            unsupported=unsupported,
        )
        history = json.loads(tl.dump_json(kept(prepared, options.reasoning)))
        payload: dict[str, Any] = {"history": history}
        if system:
            payload["system"] = system
        return payload

    def read(document: Any) -> list[Message]:
        try:
            return tl.load_json(json.dumps(document))
        except (ValidationError, TypeError, ValueError) as error:
            raise CodecError(f"not a valid echo payload: {error}") from None

    def decode(payload: Any, *, limits: Limits | None = None) -> list[Message]:
        if not isinstance(payload, dict) or "history" not in payload:
            raise CodecError("not a valid echo payload: expected {'history': ...}")
        return read(payload["history"])

    def decode_response(response: Any, *, limits: Limits | None = None) -> Message:
        if not isinstance(response, dict) or not isinstance(response.get("message"), dict):
            raise CodecError("not a valid echo response: expected {'message': {...}}")
        (message,) = read([response["message"]])
        return message

    def normalize_for_round_trip(
        messages: Any,
        *,
        model: str | None = None,
        reasoning: base.ReasoningPolicy = "auto",
        unsupported: base.UnsupportedPolicy = "placeholder",
    ) -> list[Message]:
        return kept(list(messages), reasoning)

    return types.SimpleNamespace(
        __name__="echo",
        encode=encode,
        decode=decode,
        decode_response=decode_response,
        normalize_for_round_trip=normalize_for_round_trip,
    )


def test_a_codec_built_on_the_contract_alone_passes_check_codec() -> None:
    codec = _echo_codec()
    check_codec(codec, examples=5)
    encoded = codec.encode([tl.user_message("hi")], system="be brief")
    assert encoded["system"] == "be brief"
    assert [m.text for m in codec.decode(encoded)] == ["hi"]
