"""What [`threadline.interop.pydantic_ai`][threadline.interop.pydantic_ai] keeps in metadata.

pydantic-ai fields threadline has no slot for travel in threadline metadata under
``"pydantic_ai.<field>"`` (`extras` / `restore`); threadline data pydantic-ai has no slot for
travels in the pydantic-ai message's ``metadata["threadline"]`` (`stash_part` / `unstash_part`).
User content (text, file URLs, binary content) is mapped here too, being shared by user prompts
and tool returns.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from typing import Any

import pydantic
import pydantic_core
from pydantic.fields import FieldInfo
from pydantic_ai import messages as pai
from typing_extensions import assert_never

from threadline.errors import ErrorDetail
from threadline.errors import ValidationError
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolResultPart

PREFIX = "pydantic_ai."
"""Metadata keys holding pydantic-ai fields threadline has no slot for start with this."""
STASH = "threadline"
"""The key of a pydantic-ai message's ``metadata`` holding what only threadline has."""
CARRIED = "pydantic_ai.part"
"""The name of a hook part carrying a pydantic-ai part threadline has no type for."""
EMPTY_MESSAGE = "pydantic_ai.empty"
"""The name of a hook part standing for a pydantic-ai message with no parts."""

CONTINUES = PREFIX + "continues"  # this message is part of the previous message's ModelRequest
INSTRUCTIONS = PREFIX + "instructions"  # this system message is ModelRequest.instructions
REQUEST = PREFIX + "request."  # ModelRequest fields, on the first message of its request
ITEM_KIND = PREFIX + "item_kind"  # the user-content class, when the media type does not say
NO_MEDIA_TYPE = PREFIX + "media_type_unknown"  # a FileUrl whose media type could not be told
RETRY_FEEDBACK = PREFIX + "retry_feedback"  # this user message is a RetryFeedbackPart
CONTENT = PREFIX + "content"  # a tool return's content that is not text or files
ARGS = PREFIX + "args"  # tool-call args as the model sent them (a JSON string, or None)
PROVIDER = PREFIX + "provider_name"  # a provider name threadline spells another way
CONTENT_LIST = PREFIX + "content_list"  # a user prompt given as a list of one string

JSON_BYTES = pydantic.ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")
_GOOGLE = frozenset({"google", "google-gla", "google-vertex", "google-cloud"})
_REQUIRED = object()


# -- pydantic-ai fields carried in metadata ------------------------------------------------------


@cache
def field_names(cls: Any) -> frozenset[str]:
    return frozenset(field.name for field in dataclasses.fields(cls))


@cache
def _defaults(cls: Any, skip: frozenset[str]) -> tuple[tuple[str, Any, Any], ...]:
    """Each field of ``cls`` not in ``skip``: its name, default, and default factory."""
    out: list[tuple[str, Any, Any]] = []
    for field in dataclasses.fields(cls):
        if field.name in skip:
            continue
        if field.default is not dataclasses.MISSING:
            out.append((field.name, field.default, None))
        elif field.default_factory is not dataclasses.MISSING:
            out.append((field.name, None, field.default_factory))
        else:
            out.append((field.name, _REQUIRED, None))
    return tuple(out)


def jsonable(value: object) -> Any:
    return pydantic_core.to_jsonable_python(value, bytes_mode="base64")


def extras(obj: object, skip: frozenset[str], prefix: str = PREFIX) -> dict[str, Any]:
    """The fields of ``obj`` not in ``skip`` that differ from their default, as JSON metadata."""
    out: dict[str, Any] = {}
    cls: Any = type(obj)
    for name, default, factory in _defaults(cls, skip):
        value = getattr(obj, name)
        if value is default:  # the common case: None, False, a shared literal
            continue
        if factory is not None:
            default = factory()
        same_kind = (type(value) is bool) == (type(default) is bool)  # 0 == False, but differs
        if default is not _REQUIRED and same_kind and value == default:
            continue
        out[prefix + name] = jsonable(value)
    return out


@cache
def field_adapter(cls: Any, name: str) -> pydantic.TypeAdapter[Any]:
    """A validator of the values of the field ``name`` of ``cls``.

    The field's own ``Field(...)`` settings (an alias such as ``ModelResponse.provider_details``'
    ``validation_alias``, an ``exclude``) describe the field, not its value: pydantic warns
    (``UnsupportedFieldAttributeWarning``) when a ``TypeAdapter`` is given them, so they are left
    out, and only the constraints they hold are kept.
    """
    annotation = _value_type(typing.get_type_hints(cls, include_extras=True)[name])
    try:
        return pydantic.TypeAdapter(annotation, config=JSON_BYTES)
    except pydantic.PydanticUserError:  # a type with a config of its own
        return pydantic.TypeAdapter(annotation)


def _value_type(annotation: Any) -> Any:
    """``annotation`` without the ``Field(...)`` in its metadata (its constraints are kept)."""
    if typing.get_origin(annotation) is not typing.Annotated:
        return annotation
    metadata: list[Any] = []
    for item in annotation.__metadata__:
        if isinstance(item, FieldInfo):
            metadata.extend(item.metadata)
            if item.discriminator is not None:
                metadata.append(pydantic.Discriminator(item.discriminator))  # type: ignore[arg-type]
        else:
            metadata.append(item)
    base = typing.get_args(annotation)[0]
    if not metadata:
        return base
    return typing.Annotated.__class_getitem__((base, *metadata))


def restore(
    obj: Any, metadata: Mapping[str, Any], skip: frozenset[str], prefix: str = PREFIX
) -> Any:
    """``obj`` with the fields ``metadata`` carries for it (see `extras`) set back."""
    cls: Any = type(obj)
    names = field_names(cls)
    for key, value in metadata.items():
        if not key.startswith(prefix):
            continue
        name = key[len(prefix) :]
        if name in names and name not in skip:
            try:
                parsed = field_adapter(cls, name).validate_json(json.dumps(value))
            except pydantic.ValidationError as error:
                raise history_error(
                    f"metadata[{key!r}]", f"not a valid {type(obj).__name__}.{name}: {error}"
                ) from None
            setattr(obj, name, parsed)
    return obj


def own_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata keys that are not carried pydantic-ai fields."""
    return {key: value for key, value in metadata.items() if not key.startswith(PREFIX)}


def history_error(path: str, message: str) -> ValidationError:
    detail = ErrorDetail(path, message, "pydantic_ai")
    return ValidationError(f"invalid pydantic-ai history: {detail}", [detail])


@cache
def part_adapter(kind: str) -> pydantic.TypeAdapter[Any]:
    part_type: Any = pai.ModelRequestPart if kind == "request" else pai.ModelResponsePart
    return pydantic.TypeAdapter(part_type, config=JSON_BYTES)


def carry(part: object, kind: str) -> dict[str, Any]:
    state = part_adapter(kind).dump_python(part, mode="json")
    return {"type": "hook", "name": CARRIED, "state": {"part": state}}


def uncarry(part: HookPart, kind: str) -> Any:
    return part_adapter(kind).validate_json(json.dumps(part.state["part"]))


@cache
def threadline_part_adapter() -> pydantic.TypeAdapter[Any]:
    annotation: Any = Message.model_fields["parts"].annotation
    return pydantic.TypeAdapter(annotation)


def dump_part(part: object) -> Any:
    return threadline_part_adapter().dump_python((part,), mode="json")[0]


def load_part(data: object) -> Any:
    return threadline_part_adapter().validate_python([data])[0]


# -- providers ---------------------------------------------------------------------------------


def provider_from(name: str | None, metadata: dict[str, Any]) -> str | None:
    """threadline's name for a pydantic-ai provider (``google-gla`` is ``gemini``)."""
    if name in _GOOGLE:
        if name != "google-gla":
            metadata[PROVIDER] = name
        return "gemini"
    return name


def provider_to(name: str | None, metadata: Mapping[str, Any]) -> str | None:
    carried = metadata.get(PROVIDER)
    if isinstance(carried, str):
        return carried
    return "google-gla" if name == "gemini" else name


# -- user content --------------------------------------------------------------------------------

_URL_KINDS: dict[str, type[pai.FileUrl]] = {
    "image-url": pai.ImageUrl,
    "audio-url": pai.AudioUrl,
    "video-url": pai.VideoUrl,
    "document-url": pai.DocumentUrl,
}
SKIP_URL = frozenset({"url", "_media_type", "_identifier", "kind"})
SKIP_BINARY = frozenset({"data", "media_type", "_identifier", "kind"})
SKIP_TEXT_CONTENT = frozenset({"content", "kind"})


def url_kind(media_type: str) -> str:
    for kind in ("image", "audio", "video"):
        if media_type.startswith(kind + "/"):
            return f"{kind}-url"
    return "document-url"


def carry_identifier(item: pai.FileUrl | pai.BinaryContent, metadata: dict[str, Any]) -> None:
    given = item._identifier
    if given is not None and given != dataclasses.replace(item, _identifier=None).identifier:
        metadata[PREFIX + "identifier"] = given


Part = dict[str, Any]
"""A threadline part as the dict `Message` validates (conversion builds dicts: one validation
of the whole history is much faster than building each part)."""


def from_item(item: object) -> Part | None:
    """A user-content item as a threadline part; ``None`` when threadline has no part for it."""
    if type(item) is str:
        return {"type": "text", "text": item}
    metadata: dict[str, Any]
    if type(item) is pai.TextContent:
        metadata = {ITEM_KIND: item.kind, **extras(item, SKIP_TEXT_CONTENT)}
        return {"type": "text", "text": item.content, "metadata": metadata}
    if isinstance(item, pai.FileUrl):
        metadata = extras(item, SKIP_URL)
        carry_identifier(item, metadata)
        try:
            media_type = item.media_type
        except ValueError:  # no media type given, and none to infer from the URL
            media_type = "application/octet-stream"
            metadata[NO_MEDIA_TYPE] = True
        kind: str = getattr(item, "kind")  # noqa: B009 - declared by each FileUrl subclass
        if url_kind(media_type) != kind:
            metadata[ITEM_KIND] = kind
        return {"type": "file", "url": item.url, "media_type": media_type, "metadata": metadata}
    if isinstance(item, pai.BinaryContent):
        metadata = extras(item, SKIP_BINARY)
        carry_identifier(item, metadata)
        return {
            "type": "file",
            "data": item.data,
            "media_type": item.media_type,
            "metadata": metadata,
        }
    return None


def to_item(part: TextPart | FilePart) -> Any:
    metadata = part.metadata
    if isinstance(part, TextPart):
        if metadata.get(ITEM_KIND) == "text-content":
            return restore(pai.TextContent(part.text), metadata, SKIP_TEXT_CONTENT)
        return part.text
    if not isinstance(part, FilePart):
        assert_never(part)
    identifier = metadata.get(PREFIX + "identifier")
    if part.data is not None:
        binary = pai.BinaryContent(part.data, media_type=part.media_type, identifier=identifier)
        return pai.BinaryContent.narrow_type(restore(binary, metadata, SKIP_BINARY))
    kind = metadata.get(ITEM_KIND)
    cls = _URL_KINDS.get(
        kind if isinstance(kind, str) else url_kind(part.media_type), pai.DocumentUrl
    )
    media_type = None if metadata.get(NO_MEDIA_TYPE) else part.media_type
    url = cls(typing.cast(str, part.url), media_type=media_type, identifier=identifier)
    return restore(url, metadata, SKIP_URL)


# -- threadline-only data, kept in metadata["threadline"] ----------------------------------------


def stash_part(part: Any, lost: Mapping[str, Any] = {}) -> dict[str, Any]:
    """What of ``part`` pydantic-ai has no slot for: its own metadata, and ``lost`` fields."""
    entry: dict[str, Any] = dict(lost)
    own = own_metadata(part.metadata)
    if own:
        entry["metadata"] = own
    if type(part) is FilePart and part.filename is not None:
        entry["filename"] = part.filename
    if type(part) is ToolResultPart and not isinstance(part.content, str):
        items = {str(k): e for k, item in enumerate(part.content) if (e := stash_part(item))}
        if items:
            entry["content"] = items
    return entry


def unstash_part(part: dict[str, Any], entry: object) -> dict[str, Any]:
    """``part`` (a dict) with what `stash_part` kept of it put back."""
    if not isinstance(entry, Mapping) or not entry:
        return part
    fields = dict(entry)
    own = fields.pop("metadata", None)
    items = fields.pop("content", None)
    if isinstance(own, Mapping):
        fields["metadata"] = {**part.get("metadata", {}), **own}
    content = part.get("content")
    if isinstance(items, Mapping) and part["type"] == "tool_result" and isinstance(content, list):
        fields["content"] = [
            unstash_part(item, items.get(str(k))) for k, item in enumerate(content)
        ]
    return {**part, **fields}


def stash_message(message: Message, parts: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    own = own_metadata(message.metadata)
    if own:
        entry["metadata"] = own
    if parts:
        entry["parts"] = parts
    return entry


def build_message(
    role: str, parts: list[Part], metadata: dict[str, Any], created: datetime | None, entry: Any
) -> dict[str, Any]:
    """A threadline message as the dict `Message` validates, with what the stash ``entry``
    kept of it put back."""
    if isinstance(entry, Mapping) and entry:
        stashed = entry.get("parts")
        if isinstance(stashed, Mapping):
            parts = [unstash_part(part, stashed.get(str(j))) for j, part in enumerate(parts)]
        own = entry.get("metadata")
        if isinstance(own, Mapping):
            metadata = {**metadata, **own}
    return {"role": role, "parts": parts, "metadata": metadata, "created_at": created}


def split_native_metadata(metadata: object) -> tuple[dict[str, Any] | None, Any]:
    """A pydantic-ai message's ``metadata`` without the stash, and the stash."""
    if not isinstance(metadata, dict) or STASH not in metadata:
        return metadata, None  # type: ignore[return-value]
    rest = {key: value for key, value in metadata.items() if key != STASH}
    return rest or None, metadata[STASH]


def native_metadata(carried: object, stash: Mapping[str, Any]) -> dict[str, Any] | None:
    metadata = dict(carried) if isinstance(carried, Mapping) else None
    if stash:
        metadata = {**(metadata or {}), STASH: dict(stash)}
    return metadata


# -- reasoning -------------------------------------------------------------------------------

SKIP_THINKING = frozenset({"content", "id", "signature", "provider_name", "part_kind"})
REDACTED = frozenset({"redacted_thinking", "redacted_content"})
REASONING_FIELDS = ("text", "signature", "encrypted", "redacted", "provider", "item_id")


def reasoning_fields(part: pai.ThinkingPart, metadata: dict[str, Any]) -> dict[str, Any]:
    """The [`ReasoningPart`][threadline.ReasoningPart] fields a ``ThinkingPart`` fills: its
    ``signature`` is OpenAI's ``encrypted_content`` and Claude's redacted thinking."""
    provider = provider_from(part.provider_name, metadata)
    fields: dict[str, Any] = {
        "text": part.content,
        "signature": None,
        "encrypted": None,
        "redacted": False,
        "provider": provider,
        "item_id": part.id,
    }
    if part.id in REDACTED:
        fields.update(encrypted=part.signature, redacted=True)
    elif provider == "openai":
        fields["encrypted"] = part.signature
    else:
        fields["signature"] = part.signature
    return fields


def to_thinking(part: ReasoningPart) -> tuple[pai.ThinkingPart, dict[str, Any]]:
    metadata = part.metadata
    provider = provider_to(part.provider, metadata)
    item_id = part.item_id
    if part.redacted and item_id not in REDACTED:
        item_id = "redacted_content" if provider == "bedrock" else "redacted_thinking"
    opaque = part.redacted or (provider == "openai" and part.encrypted is not None)
    signature = part.encrypted if opaque else part.signature
    if provider is None and (signature is not None or item_id is not None):
        provider = "unknown"  # pydantic-ai wants a provider beside a signature or an id
    thinking = pai.ThinkingPart(part.text, id=item_id, signature=signature, provider_name=provider)
    thinking = restore(thinking, metadata, SKIP_THINKING)
    back = reasoning_fields(thinking, {})
    lost = {
        name: getattr(part, name) for name in REASONING_FIELDS if back[name] != getattr(part, name)
    }
    if part.model is not None:
        lost["model"] = part.model
    if part.summary:
        lost["summary"] = list(part.summary)
    return thinking, lost


# -- timestamps and outcomes -------------------------------------------------------------------


def timestamp_from(metadata: Mapping[str, Any], default: datetime) -> datetime:
    carried = metadata.get(PREFIX + "timestamp")
    if isinstance(carried, str):
        try:
            return datetime.fromisoformat(carried.replace("Z", "+00:00"))
        except ValueError:
            raise history_error(
                f"metadata[{PREFIX + 'timestamp'!r}]", "not an ISO 8601 timestamp"
            ) from None
    return default


_Outcome = typing.Literal["success", "failed", "denied", "interrupted", "retried"]
_OUTCOMES: frozenset[str] = frozenset(typing.get_args(_Outcome))


def outcome_from(metadata: Mapping[str, Any], is_error: bool) -> _Outcome:
    """A tool return's ``outcome``: carried when ``is_error`` alone does not say it."""
    carried = metadata.get(PREFIX + "outcome")
    if carried in _OUTCOMES:
        return typing.cast(_Outcome, carried)
    return "failed" if is_error else "success"


def tagged_by(provider: object, response_provider: object, model: object) -> bool:
    """Whether reasoning of ``provider`` in a response of ``response_provider`` that names
    ``model`` is that model's: the response's own provider produced it."""
    return (
        isinstance(provider, str)
        and isinstance(model, str)
        and isinstance(response_provider, str)
        and provider == provider_from(response_provider, {})
    )


def untagged(
    part: ReasoningPart, lost: dict[str, Any], metadata: Mapping[str, Any]
) -> dict[str, Any]:
    """``lost`` as the way back needs it: reading the response tags its provider's reasoning
    with its ``model_name``, so a part whose model is that one needs nothing kept, and one that
    names no model keeps ``model: None``."""
    if not tagged_by(part.provider, metadata.get("provider"), metadata.get("model")):
        return lost
    if part.model is None:
        return {**lost, "model": None}
    if part.model == metadata.get("model"):
        return {key: value for key, value in lost.items() if key != "model"}
    return lost
