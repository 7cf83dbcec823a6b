"""Reading payloads and responses (private): a `Reader` that reports a malformed
payload with its JSON path, the limits every ``decode`` and ``decode_response`` runs within,
decoded messages, and the response metadata every format writes."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import re
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any
from typing import NoReturn
from typing import TypeVar

import pydantic

from threadline._validation import translate_errors
from threadline.codecs._formats import descriptor
from threadline.codecs._sniff import guess_response_format
from threadline.codecs._sniff import looks_like
from threadline.errors import CodecError
from threadline.errors import ValidationError
from threadline.limits import LimitExceededError
from threadline.limits import Limits
from threadline.limits import enforce_counts
from threadline.limits import enforce_limits
from threadline.limits import parse_json
from threadline.limits import resolve_limits
from threadline.messages import Message
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import is_media_type
from threadline.usage import Usage


def as_json_document(response: Any, format_name: str) -> Any:
    """A response as JSON values: a mapping as is, an SDK model dumped, JSON text parsed
    (within the limits of the ``decode_response`` running, the defaults outside one).

    Raises:
        threadline.LimitExceededError: the text exceeds those limits.
        threadline.CodecError: ``response`` is none of these.
    """
    if isinstance(response, Mapping):
        return response
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(response, (str, bytes, bytearray)):
        limits, what = _READING.get()
        try:
            return parse_json(response, limits, what=what)
        except LimitExceededError:
            raise
        except ValidationError as error:
            detail = error.errors[0].message if error.errors else str(error)
            raise CodecError(f"not a valid {format_name} response: {detail}") from None
    raise CodecError(
        f"not a valid {format_name} response: expected a JSON object (dict), an SDK response "
        f"object or JSON text, got {type(response).__name__}"
    )


def read_payload(
    read: Callable[[Any], list[Message]], payload: Any, limits: Limits | None, *, what: str
) -> list[Message]:
    """``read(payload)`` within ``limits``: every codec's ``decode`` is this around its reader.

    The payload's size, nesting and strings are checked before it is read, the decoded
    messages and parts counted after; JSON text inside it (tool arguments) is parsed within
    the same limits as it is read. Text is not a payload: ``read`` refuses it.

    Raises:
        threadline.LimitExceededError: the payload exceeds a limit (``what`` names the codec).
        threadline.ValidationError: a string or key of the payload is not Unicode text (a lone
            surrogate, as ``json.loads`` reads ``"\\ud800"``), which no message can hold.
    """
    checked = resolve_limits(limits)
    if not isinstance(payload, (str, bytes, bytearray)):
        enforce_limits(payload, checked, what=what)
    with _reading(checked, what):
        messages = read(payload)
    enforce_counts(messages, checked, what=what)
    return messages


def read_response(
    read: Callable[[Any], Message],
    response: Any,
    limits: Limits | None,
    *,
    format_name: str,
    what: str,
    dump: Callable[[Any], Any] | None = None,
    model: str | None = None,
) -> Message:
    """``read(document)`` on a response within ``limits``: every codec's ``decode_response``
    is this around its reader.

    ``model`` (the caller's ``decode_response(..., model=...)``) tags a message whose response
    names no model (Bedrock's never does): its ``metadata["model"]`` and its reasoning parts'
    ``model``, so the reasoning replays to that model (`same_model` decides what matches).

    JSON text is parsed here, by a parser that refuses to nest deeper than the limits allow
    (``json.loads`` would exhaust the stack first); an SDK object is dumped to JSON values,
    by ``dump`` when the format needs its own dump (``model_dump(mode="json")`` otherwise).
    The document is checked before it is read, the parts counted after; JSON text inside it
    (tool arguments) is parsed within the same limits as it is read.

    Raises:
        threadline.LimitExceededError: the response exceeds a limit.
        threadline.ValidationError: a string in ``response`` is not Unicode text (a lone
            surrogate), which no message can hold.
        threadline.CodecError: ``response`` is text that is not JSON.
    """
    if model is not None and not isinstance(model, str):
        raise TypeError(f"model must be a str or None, not {type(model).__name__}")
    checked = resolve_limits(limits)
    document = response
    if not isinstance(response, Mapping) and callable(getattr(response, "model_dump", None)):
        document = dump(response) if dump is not None else response.model_dump(mode="json")
    try:
        document = enforce_limits(document, checked, what=what)
    except LimitExceededError:
        raise
    except ValidationError as error:  # text that is not JSON
        if error.errors and error.errors[0].type == "string_unicode":
            raise  # a string no message can hold, as from decode
        detail = error.errors[0].message if error.errors else str(error)
        raise CodecError(f"not a valid {format_name} response: {detail}") from None
    with _reading(checked, what):
        try:
            message = read(document)
        except CodecError as error:
            hint = _other_format_hint(document, what.partition(".")[0])
            if hint is None or type(error) is not CodecError:
                raise
            raise CodecError(f"{error}; {hint}") from None
    enforce_counts([message], checked, what=what)
    return message if model is None else _tag_model(message, model)


def _tag_model(message: Message, model: str) -> Message:
    """``message`` with ``model`` as its model, where it names none."""
    if message.metadata.get("model") is not None:
        return message
    parts = tuple(
        dataclasses.replace(part, model=model)
        if isinstance(part, ReasoningPart) and part.model is None
        else part
        for part in message.parts
    )
    return message.model_copy(update={"parts": parts}).with_metadata(model=model)


def _other_format_hint(document: Any, provider: str) -> str | None:
    """ "it looks like a <format> response: pass provider='<name>'" when ``document`` (a
    response ``provider``'s codec could not read, JSON text already parsed) has the telltale
    shape of another format."""
    guess = guess_response_format(document)
    described = descriptor(provider)
    if guess is None or (described is not None and guess == described.sniffs_as):
        return None
    return f"it looks like {looks_like(guess, 'response')}: pass provider={guess!r}"


_T = TypeVar("_T")

_STRICT_JSON: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
_STRICT_COMPACT_JSON: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False
).encode
_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


class Reader:
    """Reads a decoded JSON payload, raising `CodecError` with the JSON
    path of the first value that does not fit the format.

    A payload given as Python values need not be JSON at all: it can hold ``NaN``, bytes or
    object keys that are not strings (and JSON text parsed here may hold ``NaN`` and
    ``Infinity``, which the parser accepts). Values a codec keeps as they are (tool
    arguments, provider tool content, metadata) are checked where they become parts, by
    `part`, at no cost when they are valid; values it writes as JSON text go through
    `json_text`; `check_json` checks the few small ones kept elsewhere.
    """

    __slots__ = ("format_name",)

    def __init__(self, format_name: str) -> None:
        self.format_name = format_name

    def error(self, path: str, problem: str) -> CodecError:
        """The error for the value at ``path``."""
        where = path or "the top level"
        return CodecError(f"not a valid {self.format_name} payload: {where}: {problem}")

    def fail(self, path: str, problem: str) -> NoReturn:
        """Raise the error for the value at ``path``."""
        raise self.error(path, problem)

    def expect_object(self, value: Any, path: str) -> Mapping[str, Any]:
        """``value`` if it is a JSON object."""
        if not isinstance(value, Mapping):
            self.fail(path, f"expected an object, got {_kind(value)}")
        return value

    def expect_list(self, value: Any, path: str) -> Sequence[Any]:
        """``value`` if it is a JSON array."""
        if not isinstance(value, (list, tuple)):
            self.fail(path, f"expected an array, got {_kind(value)}")
        return value

    def expect_str(self, value: Any, path: str) -> str:
        """``value`` if it is a string."""
        if not isinstance(value, str):
            self.fail(path, f"expected a string, got {_kind(value)}")
        return value

    def media_type(self, value: Any, path: str) -> str:
        """``value`` if it is a string that names a media type (``image/png``), as
        `is_media_type` says."""
        text = self.expect_str(value, path)
        if not is_media_type(text):
            self.fail(
                path,
                f"{repr(text)[:80]} is not a media type such as 'image/png' or 'application/pdf'",
            )
        return text

    def utf8(self, text: str, path: str) -> bytes:
        """``text`` (at ``path``) as UTF-8 bytes: the data of a text document.

        Raises:
            threadline.CodecError: ``text`` holds a lone surrogate (``"\\ud800"``, which
                `json.loads` accepts), which UTF-8 cannot encode.
        """
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as error:
            self.fail(path, f"not valid Unicode: a lone surrogate at index {error.start}")

    def check_json(self, value: Any, path: str) -> None:
        """Raise the error for the first value inside ``value`` (at ``path``) that JSON cannot
        hold: ``NaN`` or an infinite number, an object key that is not a string, or a Python
        value of another type (bytes, a set...).

        Iterative, so nesting costs no stack; the payload's limits bound its depth anyway.
        """
        stack: list[tuple[Any, str]] = [(value, path)]
        while stack:
            item, where = stack.pop()
            if item is None or isinstance(item, (str, int)):  # bool is an int
                continue
            if isinstance(item, float):
                if not math.isfinite(item):
                    self.fail(where, f"{_number_name(item)} is not a JSON value")
                continue
            if isinstance(item, Mapping):
                members: list[tuple[Any, str]] = []
                for key, inner in item.items():
                    if not isinstance(key, str):
                        self.fail(
                            where,
                            f"an object key is a {type(key).__name__}: JSON object keys are "
                            "strings",
                        )
                    members.append((inner, _member(where, key)))
                stack.extend(reversed(members))
            elif isinstance(item, (list, tuple)):
                stack.extend((item[i], f"{where}[{i}]") for i in range(len(item) - 1, -1, -1))
            else:
                self.fail(where, f"a {type(item).__name__} value is not JSON")

    def json_text(self, value: Any, path: str, *, compact: bool = True) -> str:
        """``value`` (at ``path``) as JSON text: compact (``{"a":1}``) or, with
        ``compact=False``, as `json.dumps` spaces it (``{"a": 1}``).

        Raises:
            threadline.CodecError: ``value`` holds something JSON cannot (``NaN``, bytes...),
                naming its path.
        """
        try:
            return (_STRICT_COMPACT_JSON if compact else _STRICT_JSON)(value)
        except (TypeError, ValueError) as error:
            self.check_json(value, path)
            self.fail(path, f"cannot be written as JSON ({error})")

    def part(self, cls: Callable[..., _T], wire: Any, path: str, /, **fields: Any) -> _T:
        """``cls(**fields)``: a part built from the wire value ``wire`` at ``path``.

        Parts check the values they keep as they are built (tool arguments and provider tool
        content must be JSON, a media type must name one), so a payload's bad value surfaces
        here as pydantic's error: this raises the reader's error for it instead, naming the
        value's path inside ``wire``. Nothing is searched unless the part is invalid.

        Raises:
            threadline.CodecError: the part cannot hold a value of ``fields``.
        """
        try:
            return cls(**fields)
        except pydantic.ValidationError as error:
            self.check_json(wire, path)
            detail = translate_errors(error, "").errors[0]
            where = f"{detail.path}: " if detail.path else ""
            raise self.error(path, f"cannot be stored: {where}{detail.message}") from None

    def optional_count(self, obj: Mapping[str, Any] | None, key: str, path: str) -> int | None:
        """An optional token count of ``obj``: a non-negative integer (``None`` when absent
        or null, as SDK responses dump counts they do not have, or when ``obj`` is ``None``)."""
        value = None if obj is None else obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            shown = repr(value) if type(value) is float else _kind(value)
        elif value < 0:
            shown = "a negative number"  # not repr(): an int of 5,000 digits has none
        else:
            return value
        raise self.error(
            _join(path, key), f"expected a count (a non-negative integer), got {shown}"
        )

    def optional_json(
        self, obj: Mapping[str, Any], key: str, path: str
    ) -> Mapping[str, Any] | None:
        """An optional object key of ``obj`` kept as it is (usage, say): checked to be JSON."""
        value = self.optional_object(obj, key, path)
        if value is not None:
            self.check_json(value, _join(path, key))
        return value

    def field(self, obj: Mapping[str, Any], key: str, path: str) -> Any:
        """A required key of ``obj``."""
        if key not in obj or obj[key] is None:
            self.fail(f"{path}.{key}" if path else key, "required but missing")
        return obj[key]

    def str_field(self, obj: Mapping[str, Any], key: str, path: str) -> str:
        """A required string key of ``obj``."""
        return self.expect_str(self.field(obj, key, path), _join(path, key))

    def optional_str(self, obj: Mapping[str, Any], key: str, path: str) -> str | None:
        """An optional string key of ``obj`` (``None`` when absent or null)."""
        value = obj.get(key)
        return None if value is None else self.expect_str(value, _join(path, key))

    def optional_object(
        self, obj: Mapping[str, Any], key: str, path: str
    ) -> Mapping[str, Any] | None:
        """An optional object key of ``obj`` (``None`` when absent or null)."""
        value = obj.get(key)
        return None if value is None else self.expect_object(value, _join(path, key))

    def tagged_objects(self, value: Any, path: str) -> Iterator[tuple[str, Mapping[str, Any], str]]:
        """Each item of the array ``value`` as ``(its path, the object, its "type")``."""
        for index, raw in enumerate(self.expect_list(value, path)):
            where = f"{path}[{index}]"
            item = self.expect_object(raw, where)
            yield where, item, self.str_field(item, "type", where)

    def messages(self, payload: Any, key: str = "messages") -> Sequence[Any]:
        """The message list of a payload: ``payload[key]``, or the payload itself if a list."""
        if isinstance(payload, (list, tuple)):
            return payload
        if isinstance(payload, Mapping):
            if key not in payload:
                self.fail(key, "required but missing (pass what encode returned, or the body)")
            return self.expect_list(payload[key], key)
        raise self.error(
            "", f"expected an object with {key!r} or a list of messages, got {_kind(payload)}"
        )


def build_message(
    role: str, parts: Sequence[object], path: str, metadata: Mapping[str, Any] | None = None
) -> Message:
    """A decoded message; values threadline cannot store raise with the payload's path.

    Raises:
        threadline.ValidationError: a part holds a value a message cannot (a non-JSON number
            in tool arguments, say), naming ``path``.
    """
    fields: dict[str, Any] = {"role": role, "parts": tuple(parts)}
    if metadata:
        fields["metadata"] = metadata
    try:
        return Message(**fields)
    except pydantic.ValidationError as error:
        raise translate_errors(error, f"cannot store the message at {path}") from None


def response_message(parts: Sequence[object], path: str, metadata: Mapping[str, Any]) -> Message:
    """The assistant message ``decode_response`` returns; a response with no content gives
    one empty text part (a message holds at least one part).

    Raises:
        threadline.ValidationError: a part holds a value a message cannot, naming ``path``.
    """
    return build_message("assistant", parts or [TextPart(text="")], path, metadata)


_READING: ContextVar[tuple[Limits, str]] = ContextVar(
    "threadline_codec_reading", default=(resolve_limits(None), "decode")
)
"""The limits of the ``decode`` or ``decode_response`` running, and its name: readers pass a
`Reader` down, not the limits, and only JSON text inside a payload needs them."""


def current_limits() -> tuple[Limits, str]:
    """The limits of the ``decode`` or ``decode_response`` running, and its name (the
    defaults and ``"decode"`` outside one): for JSON text read inside a payload."""
    return _READING.get()


@contextlib.contextmanager
def _reading(limits: Limits, what: str) -> Iterator[None]:
    token = _READING.set((limits, what))
    try:
        yield
    finally:
        _READING.reset(token)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _member(path: str, key: str) -> str:
    """The path of ``key`` in the object at ``path``: ``path.key``, or ``path["a key"]`` for a
    key that is not a plain name."""
    if _NAME.fullmatch(key):
        return _join(path, key)
    return f"{path}[{json.dumps(key)}]"


def _number_name(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def _kind(value: object) -> str:
    if value is None:
        return "null"
    kinds: dict[type, str] = {
        dict: "an object",
        list: "an array",
        tuple: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }
    return kinds.get(type(value), type(value).__name__)


def response_metadata(
    *,
    provider: str,
    response_id: str | None,
    model: str | None,
    stop_reason: str | None,
    usage: Usage | None,
    raw_usage: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The message metadata every ``decode_response`` writes, under the same keys everywhere.

    ``provider``, ``model``, ``response_id``, ``stop_reason`` (the provider's own value),
    ``usage``: the normalised [`Usage`][threadline.Usage] as JSON (``Usage.to_dict``), and
    ``<provider>.usage``: the provider's own usage object, nulls left out.
    """
    metadata: dict[str, Any] = {"provider": provider}
    if model is not None:
        metadata["model"] = model
    if response_id is not None:
        metadata["response_id"] = response_id
    if stop_reason is not None:
        metadata["stop_reason"] = stop_reason
    if usage is not None:
        metadata["usage"] = usage.to_dict()
    if raw_usage is not None:
        metadata[f"{provider}.usage"] = strip_nulls(dict(raw_usage))
    return metadata


def strip_nulls(value: Any) -> Any:
    """``value`` with every ``null`` member of its objects left out, recursively.

    SDK response models dump every optional field, ``null`` when absent; the request types of
    the same API often refuse ``null`` for those fields, so responses are kept without them.
    """
    if isinstance(value, Mapping):
        return {key: strip_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [strip_nulls(item) for item in value]
    return value


def check_choice(choice: object, single: str | None = None) -> int:
    """``decode_response``'s ``choice=`` argument, checked: a non-negative ``int``.

    ``single`` names the format for one whose responses hold one message: any choice but 0
    is then refused (its responses have no ``choices`` or ``candidates`` to pick from).

    Raises:
        TypeError: ``choice`` is not an ``int``.
        ValueError: ``choice`` is negative, or not 0 for a format with one message.
    """
    if isinstance(choice, bool) or not isinstance(choice, int):
        raise TypeError(f"choice must be an int, not {type(choice).__name__}")
    if choice < 0:
        raise ValueError(f"choice must be 0 or more, not {choice}")
    if single is not None and choice != 0:
        raise ValueError(
            f"choice={choice}: a {single} response holds one message; only choice=0 exists"
        )
    return choice


def pick_choice(
    reader: Reader, items: Sequence[Any], key: str, choice: int, *, noun: str
) -> tuple[Mapping[str, Any], str]:
    """The ``choice``-th object of the array ``items`` (at ``key``), and its path.

    Raises:
        threadline.CodecError: the array is empty, or holds no item ``choice``: the message
            says how many it holds.
    """
    if not items:
        reader.fail(key, "empty: the response holds no message")
    if choice >= len(items):
        count = f"one {noun}" if len(items) == 1 else f"{len(items)} {noun}s"
        reader.fail(
            key,
            f"the response holds {count}: choice={choice} is out of range (0 to {len(items) - 1})",
        )
    path = f"{key}[{choice}]"
    return reader.expect_object(items[choice], path), path
