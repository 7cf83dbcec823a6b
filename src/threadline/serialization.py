"""The neutral JSON format: a versioned envelope around a list of messages.

Version 1 (what [`dump_json`][] writes)::

    {"format": "threadline", "version": 1, "messages": [{"id": ..., "role": ..., "parts": [...]}]}

Every field is written, defaults included, so the ``type`` tags are never lost. File bytes are
standard base64. ``replay`` is runtime-only and never written.

Version 0 is a bare JSON list of messages (what ``History.to_json`` of early drafts and
hand-written fixtures look like); [`load_json`][] migrates it. A version newer than this
library knows is refused with [`UnsupportedVersionError`][]: reading it as
version 1 could silently drop fields.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from functools import cache
from functools import lru_cache
from itertools import compress
from itertools import repeat
from operator import attrgetter
from operator import eq
from typing import Annotated
from typing import Any
from typing import Literal

import pydantic
import pydantic_core
from pydantic_core import PydanticCustomError
from pydantic_core import core_schema
from typing_extensions import TypedDict

from threadline._blob_marks import BLOB_METADATA_KEY
from threadline._blob_marks import may_hold_blob_marks
from threadline._blob_marks import refuse_blob_marks
from threadline._json import EMPTY
from threadline._json import FrozenJsonMap
from threadline._json import find_not_unicode_in_text
from threadline._json import is_json_data_schema
from threadline._json import is_json_map_schema
from threadline._json import json_map_schema
from threadline._json import json_value_schema
from threadline._message_fields import ALL_FIELDS
from threadline._message_fields import _decode_base64 as _full_path_base64
from threadline._sequences import read_messages
from threadline._validation import translate_errors
from threadline.errors import ErrorDetail
from threadline.errors import UnsupportedVersionError
from threadline.errors import ValidationError
from threadline.limits import THREADLINE_LAYOUT
from threadline.limits import LimitExceededError
from threadline.limits import Limits
from threadline.limits import check_size
from threadline.limits import enforce_counts
from threadline.limits import enforce_limits
from threadline.limits import enforce_message_limits
from threadline.limits import parser_depth_error
from threadline.limits import resolve_limits
from threadline.messages import ALLOWED_PARTS
from threadline.messages import PART_BY_TAG
from threadline.messages import Message
from threadline.messages import ToolCallPart

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "dump_json",
    "json_schema",
    "load_json",
    "messages_from_json",
    "messages_to_json",
]

FORMAT = "threadline"
"""The ``format`` value of the envelope."""
FORMAT_VERSION = 1
"""The envelope version this library writes."""
SCHEMA_ID = f"urn:threadline:messages:v{FORMAT_VERSION}"


@pydantic.with_config(pydantic.ConfigDict(extra="forbid"))
class _Envelope(TypedDict):
    format: Literal["threadline"]
    version: Annotated[int, pydantic.Strict()]
    messages: list[Message]


@cache
def _envelope_adapter() -> pydantic.TypeAdapter[_Envelope]:
    # Built on first use: building the core schema is most of what importing would cost.
    return pydantic.TypeAdapter(_Envelope)


@cache
def _messages_adapter() -> pydantic.TypeAdapter[list[Message]]:
    return pydantic.TypeAdapter(list[Message])


def messages_to_json(messages: Iterable[Message]) -> bytes:
    """Messages as a bare, compact JSON array (version 0 of the format: no envelope).

    For code that keeps messages as JSON text of its own, such as a store: a one-message array
    is exactly ``b"[" + message.model_dump_json().encode() + b"]"``, so rows holding one
    message's JSON each can be joined with ``,`` into an array that [`messages_from_json`][]
    reads in one call. To exchange or archive a conversation, write the versioned envelope with
    [`dump_json`][] instead.

    Args:
        messages: the messages, in order.

    Raises:
        threadline.ValidationError: an item is not a [`Message`][].
    """
    return _messages_adapter().dump_json(
        read_messages(messages, "messages_to_json", mappings=False)
    )


def messages_from_json(data: bytes | bytearray | str) -> list[Message]:
    """Messages from a bare JSON array, validated in one call: what [`messages_to_json`][]
    wrote, or rows of ``Message.model_dump_json()`` joined into an array.

    For text this library or your own code wrote, such as a store's rows: there are no limits,
    no migration and no check for blob references (a store that keeps file bytes in a blob
    store restores them after). For text from anyone else, use [`load_json`][].

    Args:
        data: the JSON array, as bytes (UTF-8) or str.

    Raises:
        pydantic.ValidationError: ``data`` is not a JSON array of valid messages (a
            ``ValueError``, as ``Message.model_validate_json`` raises; a store reports it as
            [`StoreError`][] with this error as the cause).
    """
    return _messages_adapter().validate_json(data)


@lru_cache(maxsize=8)
def _bounded_validator(max_string: int, bare: bool) -> pydantic_core.SchemaValidator | None:
    """A validator like the envelope's (or the bare list's) whose every string field of a
    message or part, file bytes as base64 included, is at most ``max_string`` characters,
    checked by pydantic-core as it reads each string: ``load_json`` then needs no pass of its
    own over the strings of the messages it built (only JSON values, such as tool arguments,
    are walked after validation), and a hostile string is refused before it becomes an object.

    ``None`` when this pydantic-core cannot build one that enforces the bound (its validators
    for model classes are reused as built, say): ``load_json`` then checks after validation.
    """
    if not _bounds_enforced():
        return None
    adapter = _messages_adapter() if bare else _envelope_adapter()
    return _build_bounded(adapter.core_schema, max_string)


def _build_bounded(schema: Any, max_string: int) -> pydantic_core.SchemaValidator | None:
    try:
        # Not the validators the classes were built with (pydantic-core reuses those by
        # default, and they have no bound).
        return pydantic_core.SchemaValidator(
            _bounded_strings(schema, max_string),
            _use_prebuilt=False,
        )
    except Exception:  # any failure means: check after validation instead
        return None


@cache
def _bounds_enforced() -> bool:
    """Whether a bounded validator refuses a long string inside a part (checked once)."""
    validator = _build_bounded(_messages_adapter().core_schema, 1)
    if validator is None:
        return False
    probe = b'[{"id":"i","role":"user","parts":[{"type":"text","text":"too long"}]}]'
    try:
        validator.validate_json(probe)
    except pydantic_core.ValidationError as error:
        return any(detail["type"] == "string_too_long" for detail in error.errors())
    return False


def _bounded_strings(schema: Any, max_string: int) -> Any:
    """A copy of a core schema with ``max_length=max_string`` on every ``str`` schema.

    Only the schema's own ``dict`` and ``list`` nodes are copied: values inside it, such as a
    field's default (the shared empty ``FrozenJsonMap``, a ``dict`` subclass), stay as they are.
    """
    if type(schema) is dict:
        copy = {key: _bounded_strings(value, max_string) for key, value in schema.items()}
        if copy.get("type") == "str":
            bound = copy.get("max_length")
            copy["max_length"] = max_string if bound is None else min(bound, max_string)
        return copy
    if type(schema) is list:
        return [_bounded_strings(item, max_string) for item in schema]
    return schema


@lru_cache(maxsize=8)
def _load_validator(
    max_depth: int, max_string: int | None, bare: bool
) -> pydantic_core.SchemaValidator | None:
    """The validator ``load_json`` tries first: the envelope's (or the bare list's), rebuilt
    for reading JSON so that it checks everything the full path checks after validation, in
    pydantic-core and without a Python call per message:

    - which parts a role holds: a union tagged by ``role``, one message schema per role whose
      parts union holds only the part types of that role (in place of the role check, a
      Python call per message);
    - the JSON values inside messages (metadata, tool arguments, hook state, provider tool
      input and content): finite numbers only, nested at most ``max_depth`` levels
      (`json_value_schema`), in place of the walk after validation;
    - with ``max_string``, every string (keys of JSON values and file bytes as base64
      included) at most that long.

    And it does less than the full path's validator where reading JSON needs less: no
    ``str_min_length`` (`_without_text_check`), file bytes decoded by pydantic-core
    (`_decode_base64`), no ``model_post_init`` (`_share_fields_sets` after it).

    It only ever accepts what the full path accepts, and builds the same objects: on any
    error ``load_json`` runs the full path, whose errors say what is wrong and where.
    ``None`` when this pydantic-core cannot build it (``load_json`` then takes the full path).
    """
    adapter = _messages_adapter() if bare else _envelope_adapter()
    refs: dict[str, Any] = {}
    try:
        # A bare list of messages counts as if it stood in an envelope (at depth 2).
        schema = _for_loading(adapter.core_schema, 2 if bare else 1, max_depth, refs)
        if max_string is not None:
            schema = _bounded_strings(schema, max_string)
            refs = _bounded_strings(refs, max_string)
        schema = pydantic_core.core_schema.definitions_schema(schema, list(refs.values()))
        return pydantic_core.SchemaValidator(schema, _use_prebuilt=False)
    except Exception:  # any failure means: the full path, which needs none of this
        return None


_CONTAINERS = frozenset({"typed-dict", "list", "tuple", "dict", "model", "dataclass"})
"""Core schema types whose values are JSON objects or arrays: their members nest one deeper."""


def _for_loading(schema: Any, depth: int, max_depth: int, refs: dict[str, Any]) -> Any:
    """``schema`` for `_load_validator`, its definitions inlined (so that each place knows
    its depth in the document). Only the schema's own ``dict`` and ``list`` nodes are
    copied: values inside it, such as the shared ``EMPTY`` default, stay as they are."""
    definitions = {}
    root = schema
    if type(schema) is dict and schema.get("type") == "definitions":
        definitions = {item["ref"]: item for item in schema["definitions"]}
        root = schema["schema"]

    def copy(node: Any, level: int, metadata: bool = False) -> Any:
        # ``metadata``: under a field named metadata (a message's or a part's), whose map
        # refuses the blob mark as it is read.
        if type(node) is list:
            return [copy(item, level, metadata) for item in node]
        if type(node) is not dict:
            return node
        kind = node.get("type")
        if kind == "definition-ref" and node["schema_ref"] in definitions:
            return copy(definitions[node["schema_ref"]], level, metadata)
        if is_json_map_schema(node):
            freeze = _frozen_metadata if metadata else None
            return json_map_schema(level, max_depth, refs, freeze)
        if is_json_data_schema(node):
            return json_value_schema(level, max_depth, refs)
        if kind == "dataclass" and node.get("cls") is ToolCallPart:
            node = _without_raw_arguments(node)
        if kind in ("model", "dataclass"):
            node = _without_text_check(node)
        if kind == "function-after" and node["function"].get("function") is _full_path_base64:
            node = {**node, "function": {**node["function"], "function": _decode_base64}}
        if kind == "model" and node.get("cls") is Message:
            # Without ``model_post_init`` (a Python call per message): `_share_fields_sets`
            # does what it does for the whole list at once.
            return _by_role(
                {
                    key: copy(value, level + 1)
                    for key, value in node.items()
                    if key not in ("ref", "post_init")
                }
            )
        inner = level + 1 if kind in _CONTAINERS else level
        metadata = metadata or (kind == "dataclass-field" and node.get("name") == "metadata")
        return {
            # A model's fields by name: no ``type`` key.
            key: copy(value, inner, metadata or (kind is None and key == "metadata"))
            for key, value in node.items()
            if key != "ref"
        }

    return copy(root, depth)


def _without_raw_arguments(part: dict[str, Any]) -> dict[str, Any]:
    """The tool call schema for `_load_validator`: ``raw_arguments`` only ``null`` (an invalid
    call, which holds text there, takes the full path), so no ``__post_init__`` call is needed
    to check that a call with raw arguments has no parsed ones."""
    args = part["schema"]
    fields = []
    for field in args["fields"]:
        if field["name"] == "raw_arguments":
            if field["schema"]["type"] != "default":
                raise TypeError("not the tool call schema this was written for")
            field = {**field, "schema": {**field["schema"], "schema": core_schema.none_schema()}}
        fields.append(field)
    return {**part, "post_init": False, "schema": {**args, "fields": fields}}


def _without_text_check(node: dict[str, Any]) -> dict[str, Any]:
    """A model's or a part's schema without ``str_min_length``, which only makes pydantic-core
    count the characters of every string to refuse a lone surrogate: JSON text cannot hold one
    (its parser refuses an unpaired ``\\ud800``, and a ``str`` holding one raw is refused before
    parsing), so for `_load_validator` that is a pass over every string for nothing."""
    config = node.get("config")
    if type(config) is not dict or "str_min_length" not in config:
        return node
    return {**node, "config": {k: v for k, v in config.items() if k != "str_min_length"}}


@cache
def _base64_validator() -> pydantic_core.SchemaValidator:
    """pydantic-core's base64 decoder, for `_decode_base64`: a JSON string to its bytes."""
    config = core_schema.CoreConfig(val_json_bytes="base64")
    return pydantic_core.SchemaValidator(core_schema.bytes_schema(), config)


def _decode_base64(value: str) -> bytes:
    """A file part's bytes as `_load_validator` reads them: decoded by pydantic-core, about
    three times faster than ``binascii``. It takes padded text only (pydantic-core's decoder
    also takes unpadded text, which the full path refuses), and refuses what it cannot decode
    exactly as the full path would (the full path then says why, or takes it)."""
    if len(value) % 4 or '"' in value or "\\" in value:
        raise PydanticCustomError("base64", "not padded base64")
    try:
        decoded: bytes = _base64_validator().validate_json(f'"{value}"')
    except pydantic_core.ValidationError:
        raise PydanticCustomError("base64", "not base64 this decoder reads") from None
    return decoded


def _frozen_metadata(value: dict[str, Any]) -> FrozenJsonMap:
    """A message's or a part's metadata as read by `_load_validator`: refused (the full path
    then says where) when it holds the key only a store's blob references may hold."""
    if not value:
        return EMPTY
    if BLOB_METADATA_KEY in value:
        raise PydanticCustomError("reserved_key", "reserved key")
    return FrozenJsonMap(value)


def _by_role(message: dict[str, Any]) -> Any:
    """A copy of the message schema for each role, holding only that role's part types (and
    no role check), in a union tagged by ``role``."""
    fields = message["schema"]["fields"]
    checked = fields["parts"]["schema"]  # the role check, around the tuple of parts
    parts = checked["schema"]
    union = parts["items_schema"][0]
    if (
        checked.get("type") != "function-after"
        or parts.get("type") != "tuple"
        or union.get("type") != "tagged-union"
    ):
        raise TypeError("not the message schema this was written for")
    choices: dict[str, Any] = {}
    for role, allowed in ALLOWED_PARTS.items():
        tags = {tag: union["choices"][tag] for tag, cls in PART_BY_TAG.items() if cls in allowed}
        own_parts = {**parts, "items_schema": [{**union, "choices": tags}]}
        own_fields = {
            **fields,
            "role": {**fields["role"], "schema": core_schema.literal_schema([role])},
            "parts": {**fields["parts"], "schema": own_parts},
        }
        choices[role] = {**message, "schema": {**message["schema"], "fields": own_fields}}
    return core_schema.tagged_union_schema(choices, "role")


def dump_json(messages: Iterable[Message], *, indent: int | None = None) -> bytes:
    """Serialize messages to the versioned JSON envelope (UTF-8 bytes).

    Args:
        messages: the messages, in order.
        indent: pretty-print with this many spaces (compact when ``None``).

    Raises:
        threadline.ValidationError: an item is not a [`Message`][].
    """
    items = read_messages(messages, "dump_json", mappings=False)
    # Serialized in one piece: joining a dumped list to the envelope's bytes would copy them
    # all twice more (a sixth of the time, for a large history).
    envelope = {"format": FORMAT, "version": FORMAT_VERSION, "messages": items}
    return _envelope_adapter().dump_json(envelope, indent=indent)  # type: ignore[arg-type]


def load_json(data: bytes | bytearray | str, *, limits: Limits | None = None) -> list[Message]:
    """Read messages from the JSON envelope, or from a bare JSON list (version 0).

    Nothing is half-loaded: either every message is valid and returned, or an error is raised.
    Text larger than ``max_bytes`` is refused before it is parsed; the other limits are checked
    before anything is returned, in time linear in the size of the input.

    Args:
        data: the JSON text, as bytes (UTF-8) or str.
        limits: how much to read (see [`Limits`][]). ``None`` means
            ``Limits()``: 64 MiB, depth 64 and other generous bounds. For data a client sent,
            pass ``Limits.untrusted()``; for trusted files larger than that, ``Limits.none()``.

    Raises:
        threadline.LimitExceededError: the input exceeds a limit; it names the limit and the
            JSON path (a [`ValidationError`][]).
        threadline.UnsupportedVersionError: the envelope's version is newer than this library
            knows (upgrade threadline) or not a version at all.
        threadline.ValidationError: the input is not JSON, not a threadline envelope, or a
            message in it is invalid; ``errors`` names the JSON path of each bad field. The
            metadata key ``threadline.blob`` is refused wherever it appears: only a store
            writes blob references (see [`threadline.stores.blobs`][]); so is
            ``"replay": true``, which is runtime-only and never written.
    """
    if not isinstance(data, (bytes, bytearray, str)):
        raise ValidationError(
            f"load_json takes bytes or str, not {type(data).__name__}",
            [ErrorDetail("", "not bytes or str", "type")],
        )
    checked = resolve_limits(limits)
    bare = _starts_with_bracket(data)
    # Only the size is checked before parsing: it bounds the memory everything after can take.
    # Nesting is bounded by the parser (the "recursion limit" error below) and the walk after
    # validation. String lengths matter only in a text longer than ``max_string``: there
    # pydantic-core checks the fields of messages and parts as it reads them (a validator
    # built for that bound), and the walk the JSON values inside them.
    check_size(data, checked, what="load_json")
    maximum = checked.max_string
    loaded = _load_checked(data, checked, bare)
    if loaded is not None:
        return loaded
    bounded = None
    validated: Any
    messages: list[Message]
    if maximum is not None and len(data) > maximum:
        bounded = _bounded_validator(maximum, bare)
    try:
        if bounded is not None:
            validated = bounded.validate_json(data)
        elif bare:
            validated = _messages_adapter().validate_json(data)
        else:
            validated = _envelope_adapter().validate_json(data)
        if bare:
            messages = validated
        else:
            if validated["version"] != FORMAT_VERSION:
                raise _version_error(validated["version"])
            messages = validated["messages"]
    except pydantic.ValidationError as error:
        too_deep = parser_depth_error(
            error.errors(include_url=False)[0]["msg"], checked, what="load_json"
        )
        raise too_deep or _diagnose(data, error, bare=bare, limits=checked) from None
    # No string can be longer than the text it was read from; a bounded validator has checked
    # the string fields of messages and parts already, which leaves the JSON values inside.
    strings = maximum is not None and len(data) > maximum
    enforce_message_limits(
        messages,
        checked,
        what="load_json",
        check_strings=strings,
        check_fields=bounded is None,
    )
    if may_hold_blob_marks(data):
        refuse_blob_marks(messages, "invalid input to load_json")
    return messages


def _load_checked(
    data: bytes | bytearray | str, limits: Limits, bare: bool
) -> list[Message] | None:
    """The messages in ``data`` read by `_load_validator`, which checks them as it reads
    (``None`` when it found a problem: the full path says which)."""
    long_text = limits.max_string is not None and len(data) > limits.max_string
    validator = _load_validator(limits.max_depth, limits.max_string if long_text else None, bare)
    if validator is None:
        return None
    try:
        validated = validator.validate_json(data)
    except pydantic_core.ValidationError:
        return None
    messages: list[Message] = validated if bare else validated["messages"]
    if not bare and validated["version"] != FORMAT_VERSION:
        raise _version_error(validated["version"])
    if _may_exceed_counts(data, messages, limits):
        enforce_counts(messages, limits, what="load_json")  # which limit, and where
    _share_fields_sets(messages)
    return messages


_MIN_PART_TEXT = len('{"type":"reasoning"}')
"""The shortest JSON a part can be written as: text shorter than this many bytes per part
cannot hold more parts than that."""
_PARTS = attrgetter("parts")
_FIELDS_SET = "__pydantic_fields_set__"
_fields_set = attrgetter(_FIELDS_SET)
_ALL_FIELDS = frozenset(ALL_FIELDS)  # compared as a frozenset: faster than the set subclass


def _may_exceed_counts(
    data: bytes | bytearray | str, messages: list[Message], limits: Limits
) -> bool:
    """Whether ``messages`` exceed ``max_messages`` or ``max_parts``, counted at C speed (and
    not at all when ``data`` is too short to hold more parts than ``max_parts``)."""
    if limits.max_messages is not None and len(messages) > limits.max_messages:
        return True
    maximum = limits.max_parts
    if maximum is None or len(data) // _MIN_PART_TEXT <= maximum:
        return False
    return sum(map(len, map(_PARTS, messages))) > maximum


def _share_fields_sets(messages: list[Message]) -> None:
    """What ``Message.model_post_init`` does, for a list at once and without a Python call per
    message: a message given every serialized field (all of them, when ``dump_json`` wrote
    it) gets the one shared fields set in place of its own (728 bytes each)."""
    complete = compress(messages, map(eq, repeat(_ALL_FIELDS), map(_fields_set, messages)))
    deque(map(object.__setattr__, complete, repeat(_FIELDS_SET), repeat(ALL_FIELDS)), maxlen=0)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of what [`dump_json`][] writes (serialization mode, with ``$id``)."""
    schema = _envelope_adapter().json_schema(mode="serialization")
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}
    schema["title"] = f"threadline messages, format version {FORMAT_VERSION}"
    return schema


def _starts_with_bracket(data: bytes | bytearray | str) -> bool:
    head = data[:64].lstrip()
    if isinstance(head, str):
        return head.startswith("[")
    return head.startswith((b"[", b"\xef\xbb\xbf["))


def _diagnose(
    data: bytes | bytearray | str, error: pydantic.ValidationError, *, bare: bool, limits: Limits
) -> ValidationError:
    """Explain why validation failed: a limit exceeded (which says more about hostile input
    than its first bad field), not JSON, not an envelope, a newer version, or bad fields."""
    not_unicode = _not_unicode_error(data, bare=bare)
    if not_unicode is not None:
        return not_unicode
    exceeded = _limit_error(data, limits, bare=bare)
    if exceeded is not None:
        return exceeded
    first = error.errors(include_url=False)[0]
    if first["type"] in ("json_invalid", "json_type"):
        try:
            pydantic_core.from_json(data)
        except ValueError as json_error:
            detail = ErrorDetail("", f"not valid JSON: {json_error}", "json_invalid")
            return ValidationError(f"cannot load threadline JSON: {detail.message}", [detail])
    if bare:
        return translate_errors(error, "invalid threadline JSON", prefix="messages")
    try:
        document = pydantic_core.from_json(data)
    except ValueError as json_error:
        detail = ErrorDetail("", f"not valid JSON: {json_error}", "json_invalid")
        return ValidationError(f"cannot load threadline JSON: {detail.message}", [detail])
    if not isinstance(document, dict):
        detail = ErrorDetail(
            "", f"expected an envelope object or a list of messages, got {_kind(document)}", "type"
        )
        return ValidationError(f"cannot load threadline JSON: {detail.message}", [detail])
    if document.get("format") != FORMAT:
        detail = ErrorDetail(
            "format",
            f"expected 'threadline', got {document.get('format')!r}; this is not a threadline "
            "envelope",
            "format",
        )
        return ValidationError(f"cannot load threadline JSON: {detail}", [detail])
    version = document.get("version")
    if type(version) is not int or version != FORMAT_VERSION:
        return _version_error(version)
    return translate_errors(error, "invalid threadline JSON")


def _not_unicode_error(data: bytes | bytearray | str, *, bare: bool) -> ValidationError | None:
    """The error for text holding a lone surrogate, raw (a ``str`` can hold one; so can bytes
    encoded with ``surrogatepass``) or escaped without its pair (``"\\ud800"``), naming the
    field; ``None`` for text without one."""
    if isinstance(data, str):
        text = data
    else:
        try:
            text = bytes(data).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return None  # not UTF-8 for another reason: the JSON error says where
    found = find_not_unicode_in_text(text)
    if found is None:
        return None
    path, message = found
    if bare:
        path = "messages" + path
    detail = ErrorDetail(path, message, "string_unicode")
    return ValidationError(f"cannot load threadline JSON: {message}", [detail])


def _limit_error(
    data: bytes | bytearray | str, limits: Limits, *, bare: bool
) -> LimitExceededError | None:
    try:
        enforce_limits(
            data,
            limits,
            what="load_json",
            layout=THREADLINE_LAYOUT,
            path="messages" if bare else "",
            depth=2 if bare else 1,
        )
    except LimitExceededError as exceeded:
        return exceeded
    except ValidationError:
        pass  # not JSON: the diagnosis says so in load_json's own words
    return None


def _version_error(version: object) -> UnsupportedVersionError:
    if type(version) is int and version > FORMAT_VERSION:
        return UnsupportedVersionError(
            f"this threadline reads format versions 0 to {FORMAT_VERSION}, but the data is "
            f"version {version}: upgrade threadline to read it",
            version,
        )
    return UnsupportedVersionError(
        f"the envelope's version is {version!r}, which is not a threadline envelope version "
        f"(envelopes are version 1 to {FORMAT_VERSION}; version 0 is a bare list of messages)",
        version,
    )


def _kind(value: object) -> str:
    kinds: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}
    return kinds.get(type(value), type(value).__name__)
