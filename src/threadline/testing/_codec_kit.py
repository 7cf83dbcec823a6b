"""The codec kit: the codec contract as code, ``check_codec``.

What a codec may lose, and how it declares it, is in the `threadline.testing` docstring.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any

from threadline.errors import CodecError
from threadline.errors import ConformanceError
from threadline.errors import UnsupportedContentError
from threadline.messages import Message
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.serialization import dump_json
from threadline.testing._conversations import hostile_id_conversation
from threadline.testing._conversations import sample_conversations

__all__ = ["check_codec"]

_OPTION_SETS: tuple[dict[str, Any], ...] = (
    {},
    {"reasoning": "text", "unsupported": "drop", "model": "model-a"},
    {"reasoning": "drop", "model": "model-b"},
    {"reasoning": "auto", "unsupported": "drop", "model": "model-a"},
)
_PLACEHOLDER = re.compile(r"\[[^\[\]]+ omitted: not supported by [a-z_]+\]")
_NOT_PAYLOADS: tuple[Any, ...] = (42, None, "not a payload", [42], [[]], {"zzz": []})
_NOT_RESPONSES: tuple[Any, ...] = (42, None, {}, [], "{not json")


def check_codec(
    codec: Any,
    *,
    validate: Callable[[dict[str, Any]], object] | None = None,
    examples: int = 40,
    seed: int = 0,
) -> None:
    """Run the codec contract suite against a codec module.

    For generated agent conversations (every part type, files the format may not take,
    reasoning from every provider, ids it may reject, and the defects repair fixes), under
    several ``model`` / ``reasoning`` / ``unsupported`` options, it checks that:

    - ``encode`` succeeds, is deterministic, leaves its input unchanged, returns JSON values
      (``bytes`` allowed), and gives the same payload for the prepared history, also with
      ``integrity="off"`` (encode prepares first, and preparing is idempotent);
    - ``validate(payload)``, if given (say the provider SDK's types), accepts every payload;
    - ``decode(encode(m))`` equals ``normalize_for_round_trip(prepare_messages(m))`` (the
      module's declared losses) as a sequence of ``(role, part)``;
    - ``reasoning="drop"`` sends no reasoning, ``unsupported="drop"`` no placeholder, and
      ``unsupported="raise"`` raises `UnsupportedContentError` exactly
      when ``placeholder`` would have sent one;
    - tool-call ids are mapped consistently: a call and its result keep their pairing,
      different ids stay different, mapped ids survive another round trip, and the ids of
      a history do not change when it grows;
    - malformed payloads and responses raise `CodecError`, and unknown
      option values raise ``ValueError``.

    Args:
        codec: the module (or any object) with ``encode``, ``decode``, ``decode_response``
            and optionally ``normalize_for_round_trip``.
        validate: called with each payload; raise to reject it.
        examples: how many generated conversations to run.
        seed: picks the conversations; the same seed gives the same ones.

    Raises:
        ConformanceError: a law does not hold; the message says which, for what input.
    """
    name = getattr(codec, "__name__", type(codec).__name__)
    _check_surface(codec, name)
    for number, history in enumerate(sample_conversations(seed, examples)):
        for options in _OPTION_SETS:
            _check_round_trip(codec, name, history, options, validate, f"example {number}")
        _check_raise_policy(codec, name, history, f"example {number}")
    _check_ids(codec, name, validate)
    _check_bad_input(codec, name)


# ---------------------------------------------------------------------------------------------


def _fail(name: str, law: str, where: str, detail: str = "") -> ConformanceError:
    message = f"{name}: {law} ({where})"
    return ConformanceError(f"{message}\n{detail}" if detail else message)


def _check_surface(codec: Any, name: str) -> None:
    for function in ("encode", "decode", "decode_response"):
        if not callable(getattr(codec, function, None)):
            raise _fail(name, f"a codec must define {function}()", "the module")
    normalize = getattr(codec, "normalize_for_round_trip", None)
    if normalize is not None and not callable(normalize):
        raise _fail(name, "normalize_for_round_trip must be a function", "the module")


def _prepare(history: Sequence[Message]) -> list[Message]:
    from threadline.integrity import prepare_messages

    return prepare_messages(history)


def _encode(codec: Any, name: str, history: Any, options: dict[str, Any], where: str) -> Any:
    try:
        return codec.encode(history, **options)
    except Exception as error:
        raise _fail(
            name, "encode failed", f"{where}, options {options}", f"{type(error).__name__}: {error}"
        ) from error


def _check_round_trip(
    codec: Any,
    name: str,
    history: list[Message],
    options: dict[str, Any],
    validate: Callable[[dict[str, Any]], object] | None,
    where: str,
) -> None:
    where = f"{where}, options {options}"
    before = dump_json(history)
    payload = _encode(codec, name, history, options, where)
    if dump_json(history) != before:
        raise _fail(name, "encode must not change its input", where)
    if not isinstance(payload, dict):
        raise _fail(name, "encode must return a dict", where, f"got {type(payload).__name__}")
    _check_json(payload, name, where)
    if _encode(codec, name, history, options, where) != payload:
        raise _fail(name, "encode must be deterministic", where)
    prepared = _prepare(history)
    if _encode(codec, name, prepared, options, where) != payload:
        raise _fail(name, "encode(prepare_messages(m)) must equal encode(m)", where)
    if _encode(codec, name, prepared, {**options, "integrity": "off"}, where) != payload:
        raise _fail(name, 'encode of a prepared history must not depend on integrity="off"', where)
    if validate is not None:
        try:
            validate(payload)
        except Exception as error:
            raise _fail(
                name, "validate rejected the payload", where, f"{error}\npayload: {payload!r}"
            ) from error
    try:
        decoded = codec.decode(payload)
    except Exception as error:
        raise _fail(
            name, "decode must read what encode wrote", where, f"{type(error).__name__}: {error}"
        ) from error
    normalize = getattr(codec, "normalize_for_round_trip", None)
    loss_options = {key: value for key, value in options.items() if key != "integrity"}
    expected = normalize(prepared, **loss_options) if normalize is not None else prepared
    difference = _difference(_content(expected), _content(decoded))
    if difference:
        raise _fail(
            name,
            "decode(encode(m)) must equal normalize_for_round_trip(prepare_messages(m))",
            where,
            difference,
        )
    if options.get("reasoning") == "drop" and any(
        isinstance(part, ReasoningPart) for _, part in _content(decoded)
    ):
        raise _fail(name, 'reasoning="drop" must send no reasoning', where)
    if options.get("unsupported") == "drop" and _placeholders(decoded):
        raise _fail(name, 'unsupported="drop" must send no placeholder', where)


def _check_raise_policy(codec: Any, name: str, history: list[Message], where: str) -> None:
    placeholder = _encode(codec, name, history, {}, where)
    expect_raise = bool(_placeholders(codec.decode(placeholder)))
    try:
        raised = codec.encode(history, unsupported="raise")
    except UnsupportedContentError:
        if not expect_raise:
            raise _fail(
                name, 'unsupported="raise" raised, but "placeholder" sent no placeholder', where
            ) from None
        return
    if expect_raise:
        raise _fail(name, 'unsupported="raise" must raise UnsupportedContentError', where)
    if raised != placeholder:
        raise _fail(
            name, 'without unsupported parts, "raise" must send what "placeholder" does', where
        )


def _check_ids(codec: Any, name: str, validate: Callable[[dict[str, Any]], object] | None) -> None:
    where = "hostile tool-call ids"
    history = hostile_id_conversation()
    payload = _encode(codec, name, history, {}, where)
    if validate is not None:
        try:
            validate(payload)
        except Exception as error:
            raise _fail(name, "validate rejected the payload", where, str(error)) from error
    decoded = codec.decode(payload)
    calls = [part for _, part in _content(decoded) if isinstance(part, ToolCallPart)]
    results = [part for _, part in _content(decoded) if isinstance(part, ToolResultPart)]
    originals = [part for message in history for part in message.tool_calls]
    if len(calls) != len(originals) or len(results) != len(originals):
        raise _fail(name, "every tool call and result must survive", where)
    for original, call, result in zip(originals, calls, results, strict=True):
        if call.arguments != original.arguments or result.call_id != call.id:
            raise _fail(
                name,
                "a call and its result must get the same wire id",
                where,
                f"{original.id!r} became call {call.id!r} and result {result.call_id!r}",
            )
    if len({call.id for call in calls}) != len(calls):
        raise _fail(name, "different ids must stay different", where, f"{[c.id for c in calls]}")
    again = codec.decode(_encode(codec, name, decoded, {}, where))
    again_ids = [part.id for _, part in _content(again) if isinstance(part, ToolCallPart)]
    if again_ids != [call.id for call in calls]:
        raise _fail(
            name,
            "mapped ids must be valid ids: another round trip must keep them",
            where,
            f"{[call.id for call in calls]} became {again_ids}",
        )
    shorter = codec.decode(_encode(codec, name, history[:5], {}, where))
    shorter_ids = [part.id for _, part in _content(shorter) if isinstance(part, ToolCallPart)]
    if shorter_ids != [call.id for call in calls][: len(shorter_ids)]:
        raise _fail(name, "a call's wire id must not change as the history grows", where)


def _check_bad_input(codec: Any, name: str) -> None:
    for payload in _NOT_PAYLOADS:
        try:
            codec.decode(payload)
        except CodecError:
            continue
        except Exception as error:
            raise _fail(
                name,
                "decode of a malformed payload must raise CodecError",
                f"payload {payload!r}",
                f"raised {type(error).__name__}: {error}",
            ) from error
        raise _fail(
            name, "decode of a malformed payload must raise CodecError", f"payload {payload!r}"
        )
    for response in _NOT_RESPONSES:
        try:
            codec.decode_response(response)
        except CodecError:
            continue
        except Exception as error:
            raise _fail(
                name,
                "decode_response of a malformed response must raise CodecError",
                f"response {response!r}",
                f"raised {type(error).__name__}: {error}",
            ) from error
        raise _fail(
            name, "decode_response of a malformed response must raise CodecError", f"{response!r}"
        )
    history = sample_conversations(0, 1)[0]
    for option, value in (("integrity", "bogus"), ("reasoning", "bogus"), ("unsupported", "bogus")):
        try:
            codec.encode(history, **{option: value})
        except ValueError:
            continue
        raise _fail(name, f"encode must raise ValueError for {option}={value!r}", "options")


def _content(messages: Iterable[Message]) -> list[tuple[str, Any]]:
    """Messages as ``(role, part)`` pairs: what a round trip must keep, grouping aside."""
    return [(message.role, part) for message in messages for part in message.parts]


def _placeholders(messages: Iterable[Message]) -> bool:
    for _, part in _content(messages):
        if isinstance(part, TextPart) and _PLACEHOLDER.search(part.text):
            return True
        if isinstance(part, ToolResultPart):
            if isinstance(part.content, str):
                if _PLACEHOLDER.search(part.content):
                    return True
            elif any(isinstance(x, TextPart) and _PLACEHOLDER.search(x.text) for x in part.content):
                return True
    return False


def _difference(expected: list[tuple[str, Any]], got: list[tuple[str, Any]]) -> str:
    if expected == got:
        return ""
    for index, (want, have) in enumerate(zip(expected, got, strict=False)):
        if want != have:
            return f"first difference at part {index}:\n  expected {want!r}\n  got      {have!r}"
    if len(expected) > len(got):
        return f"decode lost {len(expected) - len(got)} part(s), from {expected[len(got)]!r}"
    return f"decode added {len(got) - len(expected)} part(s), from {got[len(expected)]!r}"


def _check_json(value: Any, name: str, where: str, path: str = "payload") -> None:
    """JSON values only (``bytes`` allowed: boto3-style payloads keep them)."""
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise _fail(name, "encode must return JSON values", where, f"{path} is {value}")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise _fail(name, "encode must return JSON values", where, f"{path} key {key!r}")
            _check_json(item, name, where, f"{path}.{key}")
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            _check_json(item, name, where, f"{path}[{index}]")
        return
    raise _fail(
        name,
        "encode must return JSON values (dicts, lists, str, numbers, bool, None, bytes)",
        where,
        f"{path} is a {type(value).__name__}: {json.dumps(repr(value))}",
    )
