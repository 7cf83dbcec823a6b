"""What the fuzz harnesses call, without atheris, so that tests can run them on the corpus.

Each target takes the fuzzer's bytes and feeds them to threadline's entry points for outside
data. Only the errors those entry points document may escape; anything else (a ``TypeError``,
``RecursionError``, ``KeyError``...) escapes on purpose, and the fuzzer reports it as a crash.

Codec inputs start with one selector byte that picks the codec and the function (see
:data:`CODEC_TARGETS`); the rest is JSON text.
"""

from __future__ import annotations

import contextlib
import os

import pydantic_core

import threadline as tl
from fuzz.known import CODEC_DEFECTS
from fuzz.known import known
from threadline.codecs import codec_names
from threadline.codecs import get_codec
from threadline.limits import Limits

__all__ = ["CODEC_TARGETS", "codec_target", "load_json_target", "selector"]

# A decoded history may be one a model never produced: prepare_messages may refuse it, and an
# encoder may refuse content it cannot carry. Those are documented outcomes, not crashes.
READ_ERRORS = (tl.ValidationError, tl.CodecError)
PREPARE_ERRORS = (tl.IntegrityError,)

# run.py --strict sets this: known defects (fuzz/known.py) then count as crashes too.
STRICT = os.environ.get("THREADLINE_FUZZ_STRICT") == "1"

CODEC_TARGETS: tuple[tuple[str, str], ...] = tuple(
    (name, function) for name in codec_names() for function in ("decode", "decode_response")
)
"""Every (codec name, function) pair a codec input can select, in selector order."""


def selector(codec: str, function: str) -> int:
    """The first byte of a codec input that selects ``function`` of ``codec``."""
    return CODEC_TARGETS.index((codec, function))


def load_json_target(data: bytes) -> None:
    """``load_json`` with the default and the untrusted limits; what loads must survive a
    round trip and the server recipe (sanitize, then prepare)."""
    for limits in (None, Limits.untrusted()):
        try:
            messages = tl.load_json(data, limits=limits)
        except tl.ValidationError:
            continue
        again = tl.load_json(tl.dump_json(messages), limits=Limits.none())
        if again != messages:
            raise AssertionError("load_json(dump_json(messages)) != messages")
        _prepare(tl.sanitize_untrusted(messages))


def codec_target(data: bytes) -> None:
    """One codec function, selected by the first byte, on the JSON text after it.

    ``decode_response`` takes the text itself when the selector's high bit is set (it accepts
    JSON text), else the parsed document, as ``decode`` always does. What decodes is encoded
    again with the same codec. Known defects (``fuzz/known.py``) pass unless ``STRICT``.
    """
    if not data:
        return
    name, function = CODEC_TARGETS[(data[0] & 0x7F) % len(CODEC_TARGETS)]
    text = data[1:]
    codec = get_codec(name)
    document: object
    if function == "decode_response" and data[0] & 0x80:
        document = text
    else:
        try:
            document = pydantic_core.from_json(text)
        except ValueError:
            return
    try:
        if function == "decode":
            messages = codec.decode(document)
        else:
            messages = [codec.decode_response(document)]
        codec.encode(messages)
    except PREPARE_ERRORS + READ_ERRORS:
        return
    except Exception as error:
        if STRICT or not known(error, CODEC_DEFECTS):
            raise


def _prepare(messages: list[tl.Message]) -> None:
    with contextlib.suppress(*PREPARE_ERRORS):
        tl.prepare_messages(messages)
