"""Field types and helpers behind `threadline.messages`, which keeps the types and
constructors: standard base64 for file bytes, the media-type check, metadata merging, the
message id factory, the shared fields set, the serializer of part unions and the rule that
data cannot set ``replay``; the configuration every part and message class is built with, and
the annotated field types they share."""

from __future__ import annotations

import binascii
import json
import re
import secrets
from base64 import b64decode
from base64 import b64encode
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import Annotated
from typing import Any
from typing import NoReturn

from pydantic import ConfigDict
from pydantic import Field
from pydantic import GetCoreSchemaHandler
from pydantic import GetJsonSchemaHandler
from pydantic import ValidationInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError
from pydantic_core import core_schema

from threadline._json import EMPTY
from threadline._json import JSON_DATA
from threadline._json import FrozenJsonMap
from threadline._json import check_json_value
from threadline.errors import ErrorDetail
from threadline.errors import ValidationError

__all__ = [
    "ALL_FIELDS",
    "FROM_DATA",
    "PART_CONFIG",
    "REPLAY_FIELD",
    "ROLE_PARTS_TEXT",
    "STRICT_TEXT",
    "WHERE_INSTEAD",
    "Base64Bytes",
    "JsonData",
    "JsonObject",
    "SerializedByItsClass",
    "StandardBase64",
    "is_media_type",
    "is_url",
    "json_result_text",
    "merged_metadata",
    "new_message_id",
    "refuse_replay_from_data",
    "use_id_factory",
]

# defer_build: the validators and serializers are built on first use, not at import. Building
# them is cheap, but the first build in a process makes pydantic scan every installed
# distribution for plugins (tens of milliseconds), which `import threadline` should not pay.
#
# str_min_length=0 constrains nothing, but it makes pydantic-core validate every ``str`` of a
# message or part (text, ids, names, media types, metadata keys...) as a constrained string,
# which it reads as UTF-8: a Python string holding a lone surrogate ("\ud800", which
# ``json.loads`` produces) is refused in Rust with the error ``string_unicode``, at no cost a
# Python check per field would add. Such a string could not be dumped, stored or sealed (UTF-8
# cannot encode it), so no message may hold one. JSON values inside messages (metadata values,
# tool arguments, hook state) are checked by ``check_json_value``; JSON text never yields one
# (its parser refuses an unpaired ``\ud800`` escape). tests/unit/test_surrogates.py holds it.
STRICT_TEXT = ConfigDict(str_min_length=0)
PART_CONFIG = ConfigDict(
    extra="forbid",
    json_schema_serialization_defaults_required=True,
    defer_build=True,
    **STRICT_TEXT,
)
REPLAY_FIELD: Any = Field(default=False, exclude=True)


# The error text of `threadline.messages.Message`'s role check: which parts each role holds,
# and where a part it cannot hold goes instead.
ROLE_PARTS_TEXT: dict[str, str] = {
    "system": "text parts",
    "user": "text and file parts",
    "assistant": "text, reasoning, tool_call, file, hook and provider tool parts",
    "tool": "tool_result parts",
    "internal": "hook and text parts",
}
WHERE_INSTEAD: dict[str, str] = {
    "tool_call": "put tool calls on an assistant message",
    "tool_result": "put tool results on a tool message",
    "reasoning": "put reasoning on an assistant message",
    "hook": "put hook parts on an internal or assistant message",
    "file": "put files on a user or assistant message, or in a tool result's content",
    "provider_tool_call": "put provider tool parts on an assistant message",
    "provider_tool_result": "put provider tool parts on an assistant message",
    "text": "text is not allowed here",
}


class StandardBase64:
    """``bytes`` in Python, **standard** base64 (``+/``, padded) in JSON.

    pydantic's own bytes-as-base64 mode writes the URL-safe alphabet, which providers reject in
    ``data:`` URLs; this type writes standard base64 and reads either alphabet.
    """

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        from_str = core_schema.no_info_after_validator_function(
            _decode_base64, core_schema.str_schema(strict=True)
        )
        return core_schema.json_or_python_schema(
            json_schema=from_str,
            python_schema=core_schema.union_schema(
                [core_schema.bytes_schema(strict=True), from_str], mode="left_to_right"
            ),
            serialization=core_schema.plain_serializer_function_ser_schema(
                _encode_base64, when_used="json"
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"type": "string", "contentEncoding": "base64"}


def _encode_base64(value: bytes) -> str:
    return b64encode(value).decode("ascii")


def _decode_base64(value: str) -> bytes:
    try:
        if "-" in value or "_" in value:
            return b64decode(value, altchars=b"-_", validate=True)
        return b64decode(value, validate=True)
    except (binascii.Error, ValueError) as error:
        raise PydanticCustomError(
            "base64", "file bytes are not valid base64 ({error})", {"error": str(error)}
        ) from None


_NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
_TOKEN = r"[A-Za-z0-9!#$%&'*+.^_`|~-]+"
_QUOTED = r'"(?:[\t !#-\[\]-~]|\\[\t -~])*"'
_MEDIA_TYPE = re.compile(
    rf"{_NAME}/(?:{_NAME}|\*)(?:[ \t]*;[ \t]*{_TOKEN}=(?:{_TOKEN}|{_QUOTED}))*"
)


def is_media_type(text: str) -> bool:
    """Whether ``text`` is a media type: ``type/subtype`` of RFC 6838 restricted names (or the
    subtype ``*``, for an image whose URL does not say which), then optional parameters
    (``; charset=utf-8``), as RFC 9110 writes them. Nothing else, so a media type cannot
    carry a line break into a header, or a path into a file name."""
    return _MEDIA_TYPE.fullmatch(text) is not None


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")
"""A URL starts with an RFC 3986 scheme and a colon: ``https:``, ``gs:``, ``s3:``, ``data:``,
threadline's own blob references (``threadline-blob:``, `threadline.stores.blobs`)...
Base64 text never holds a colon, and a file name or a path has no scheme. One-letter schemes
are refused: none is registered, and ``C:`` is a Windows drive. Whether a URL may be fetched
is `sanitize_untrusted`'s question, not this one."""


def is_url(text: str) -> bool:
    """Whether ``text`` is a URL a file part may hold (see `_URL`): base64 text, a file
    name or a path is not, and a provider would refuse it only when the message is sent."""
    return _URL.match(text) is not None


_RESULT_KINDS = "a str, a list of text/file parts, or a JSON value (dict, list, int, float, bool "
_RESULT_KINDS += "or None, sent as JSON text)"


def json_result_text(value: object) -> str:
    """A structured tool result as compact JSON text, the form every provider accepts.

    Raises:
        threadline.ValidationError: naming ``content``, when ``value`` is not a JSON value
            (a set, an object, ``NaN``, a lone surrogate, an int JSON readers refuse...).
    """
    try:
        checked = check_json_value(value, "content")
    except PydanticCustomError as error:
        message = f"{error.message()}; a tool result's content is {_RESULT_KINDS}"
        detail = ErrorDetail("content", message, error.type)
        summary = f"invalid tool_result part: 1 problem\n  {detail}"
        raise ValidationError(summary, [detail]) from None
    return json.dumps(checked, separators=(",", ":"), ensure_ascii=False)


def merged_metadata(
    current: Mapping[str, Any], mapping: Mapping[str, Any] | None, kv: Mapping[str, Any]
) -> FrozenJsonMap:
    merged = dict(current)
    if mapping:
        merged.update(mapping)
    merged.update(kv)
    try:
        return FrozenJsonMap(check_json_value(merged, "metadata"))
    except PydanticCustomError as error:
        detail = ErrorDetail("metadata", error.message(), error.type)
        raise ValidationError(f"invalid metadata: {detail}", [detail]) from None


_id_factory: ContextVar[Callable[[], str] | None] = ContextVar(
    "threadline_id_factory", default=None
)


def new_message_id() -> str:
    factory = _id_factory.get()
    if factory is not None:
        return factory()
    return "msg_" + secrets.token_hex(16)


@contextmanager
def use_id_factory(factory: Callable[[], str]) -> Iterator[None]:
    """Make message ids come from ``factory`` inside the ``with`` block (this context only).

    Durable workflows that replay code need the same ids on every replay::

        counter = itertools.count()
        with use_id_factory(lambda: f"msg_{next(counter)}"):
            message = user_message("hi")
    """
    token = _id_factory.set(factory)
    try:
        yield
    finally:
        _id_factory.reset(token)


def _shared_set_is_read_only(self: object, *args: object) -> NoReturn:
    raise TypeError("a message's model_fields_set is shared and read-only")


class _SharedFieldsSet(set[str]):
    """A ``model_fields_set`` shared by many messages: read-only, and copied as a plain ``set``.

    A ``set`` subclass because pydantic-core requires a ``set``. pydantic copies the fields
    set before it changes one (``model_copy(update=...)``), so each copy gets its own.
    """

    __slots__ = ()

    add = discard = remove = pop = clear = update = _shared_set_is_read_only
    difference_update = intersection_update = symmetric_difference_update = update
    __ior__ = __iand__ = __isub__ = __ixor__ = update

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> set[str]:
        return set(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (set, (sorted(self),))


ALL_FIELDS = _SharedFieldsSet({"id", "role", "parts", "created_at", "metadata"})
"""The fields set of a message given every serialized field (as ``load_json`` gives them)."""


class SerializedByItsClass:
    """Serialize a union of part classes with each value's own class serializer (and give it
    threadline's error for a bad ``type`` tag).

    pydantic-core serializes a (tagged) union to JSON by trying its choices in order until one
    accepts the value, building a Python dict on the way and serializing that: for a history,
    about half of ``dump_json``'s time. Every value of these unions is an instance of exactly
    one part class, whose own serializer writes the same JSON directly.
    """

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        schema = handler(source)
        if schema["type"] == "tagged-union":
            # Our own error for a missing or unknown tag: pydantic's repeats the tag, and a
            # hostile one (a list nested thousands deep) cannot be shown.
            tags = ", ".join(repr(tag) for tag in schema["choices"])
            schema = {
                **schema,
                "custom_error_type": "part_type",
                "custom_error_message": f"a part needs a 'type' tag: one of {tags}",
            }
        return {**schema, "serialization": core_schema.simple_ser_schema("any")}


FROM_DATA: Mapping[str, bool] = MappingProxyType({"threadline.from_data": True})
"""The validation context of a mapping read from outside (a request body, a file, a store):
``Message.model_validate(item, context=FROM_DATA)``. JSON needs none: it is always data."""

_REPLAY_FROM_DATA = (
    "`replay` is runtime-only: threadline never writes it (dump_json and model_dump leave it "
    "out), so data holding replay=true was not written by threadline and cannot set it; remove "
    "the key, and mark a replay in Python instead: Message(..., replay=True) or "
    "message.model_copy(update=...)"
)


def refuse_replay_from_data(value: bool, info: ValidationInfo) -> bool:
    """``Message.replay`` as validated: ``True`` is refused when read from JSON or from a
    mapping given to a threadline entry point (``FROM_DATA``); Python code may set it."""
    context = info.context
    from_data = isinstance(context, Mapping) and context.get("threadline.from_data") is True
    if value and (info.mode == "json" or from_data):
        raise PydanticCustomError("replay_from_data", _REPLAY_FROM_DATA)
    return value


# The annotated field types the part classes share.
Base64Bytes = Annotated[bytes, StandardBase64]
JsonObject = Annotated[Mapping[str, Any], FrozenJsonMap, Field(default_factory=lambda: EMPTY)]
JsonData = Annotated[Any, JSON_DATA]
