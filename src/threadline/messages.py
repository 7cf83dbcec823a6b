"""The message model: [`Message`][], its part types, constructors and accessors.

A conversation is a sequence of [`Message`][]. Each message has a ``role`` and one or more
parts; parts are frozen, slotted pydantic dataclasses told apart by their ``type`` tag (the
bulk of a history's memory is parts, so they carry no ``__dict__``). Nothing here names a
provider's wire format: the codecs map parts to and from each provider, and the attribute
docstrings below say which wire field each provider slot corresponds to.

Which parts a role may hold is validated here; pairing rules (every call answered once, ids
unique) are the job of [`threadline.integrity`][].
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated
from typing import Any
from typing import Literal
from typing import Protocol
from typing import TypeAlias
from typing import TypeVar
from typing import Union
from typing import get_args

import pydantic
from pydantic import AfterValidator
from pydantic import ConfigDict
from pydantic import Field
from pydantic_core import PydanticCustomError

from threadline._bounded_json import Limits
from threadline._bounded_json import parse_arguments
from threadline._json import EMPTY
from threadline._json import FrozenJsonMap
from threadline._json import JsonValue
from threadline._message_fields import ALL_FIELDS
from threadline._message_fields import PART_CONFIG
from threadline._message_fields import REPLAY_FIELD
from threadline._message_fields import ROLE_PARTS_TEXT
from threadline._message_fields import STRICT_TEXT
from threadline._message_fields import WHERE_INSTEAD
from threadline._message_fields import Base64Bytes
from threadline._message_fields import JsonData
from threadline._message_fields import JsonObject
from threadline._message_fields import SerializedByItsClass
from threadline._message_fields import (
    is_media_type as is_media_type,  # codecs check media types with it
)
from threadline._message_fields import is_url
from threadline._message_fields import json_result_text
from threadline._message_fields import merged_metadata
from threadline._message_fields import new_message_id
from threadline._message_fields import refuse_replay_from_data
from threadline._message_fields import use_id_factory
from threadline._usage_readers import message_usage
from threadline._validation import RoleHints
from threadline._validation import register_part_tags
from threadline._validation import translate_errors
from threadline._view._notebook import HtmlRepr
from threadline.errors import ErrorDetail
from threadline.errors import ValidationError
from threadline.usage import Usage

__all__ = [
    "AssistantPart",
    "FilePart",
    "HookPart",
    "Message",
    "Part",
    "ProviderToolCallPart",
    "ProviderToolResultPart",
    "ReasoningPart",
    "Role",
    "TextPart",
    "ToolCallPart",
    "ToolResultContent",
    "ToolResultPart",
    "assistant_message",
    "file_part",
    "hook_part",
    "internal_message",
    "reasoning_part",
    "same_content",
    "system_message",
    "text_part",
    "tool_call_part",
    "tool_message",
    "tool_result_part",
    "use_id_factory",
    "user_message",
]

Role: TypeAlias = Literal["system", "user", "assistant", "tool", "internal"]
"""Who a message is from. ``internal`` messages never reach a model (UI and resume state)."""

Metadata: TypeAlias = Annotated[Mapping[str, Any], FrozenJsonMap]
"""Read-only JSON metadata, the annotation of every ``metadata`` field: constructors take any
mapping (a ``dict`` passes a type checker); the value held is a read-only ``FrozenJsonMap``."""


class _HasMetadata(Protocol):
    @property
    def metadata(self) -> Mapping[str, Any]: ...


_Self = TypeVar("_Self", bound=_HasMetadata)


class _PartBase:
    """What every part type shares, written once: `with_metadata`."""

    __slots__ = ()  # parts are slotted: a base with a __dict__ would give each part one

    def with_metadata(self: _Self, mapping: Mapping[str, Any] | None = None, /, **kv: Any) -> _Self:
        """Return a copy with ``mapping`` and ``kv`` merged into ``metadata``.

        Raises:
            threadline.ValidationError: a value is not JSON.
        """
        merged = merged_metadata(self.metadata, mapping, kv)
        return typing.cast(_Self, dataclasses.replace(typing.cast(Any, self), metadata=merged))


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=PART_CONFIG)
class TextPart(_PartBase):
    """Plain text from a user, a model or a tool."""

    type: Literal["text"] = "text"
    """The part tag, always ``"text"``."""
    text: str
    """The text. May be empty."""
    metadata: Metadata = dataclasses.field(default=EMPTY)
    """Provider details kept across persistence: Anthropic ``cache_control`` and
    ``citations``, Gemini ``thoughtSignature`` (``gemini.thought_signature``), an OpenAI
    Responses output item id (``openai.item_id``)."""


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=PART_CONFIG)
class ReasoningPart(_PartBase):
    """A model's reasoning ("thinking"), with the opaque state a provider needs to continue it.

    Opaque fields are kept byte for byte; codecs replay them only to the provider (and model)
    that produced them.
    """

    type: Literal["reasoning"] = "reasoning"
    """The part tag, always ``"reasoning"``."""
    text: str = ""
    """The readable reasoning text. Anthropic ``thinking.thinking``; OpenAI Responses
    ``reasoning.content`` text; Gemini text of a ``thought: true`` part; Mistral ``thinking``
    chunk text; Bedrock ``reasoningContent.reasoningText.text``. Empty when the provider
    only returned encrypted or redacted reasoning."""
    signature: str | None = None
    """The provider's integrity signature over the reasoning. Anthropic ``thinking.signature``;
    Gemini ``thoughtSignature`` (base64) of the thought part; Bedrock
    ``reasoningText.signature``; Mistral ``thinking`` chunk ``signature``."""
    encrypted: str | None = None
    """Encrypted or redacted reasoning the provider can read back. OpenAI Responses
    ``reasoning.encrypted_content``; Anthropic ``redacted_thinking.data``; Bedrock
    ``reasoningContent.redactedContent`` (base64)."""
    redacted: bool = False
    """True when the provider withheld the text and only ``encrypted`` carries the reasoning
    (Anthropic ``redacted_thinking``, Bedrock ``redactedContent``)."""
    provider: str | None = None
    """Which provider produced the opaque state: ``openai``, ``anthropic``, ``gemini``,
    ``mistral`` or ``bedrock``. Opaque state is never sent to another provider."""
    model: str | None = None
    """The model that produced it, when known; with ``reasoning="auto"`` a codec given another
    ``model`` drops the opaque state."""
    item_id: str | None = None
    """OpenAI Responses ``reasoning`` item ``id`` (``rs_...``)."""
    summary: tuple[str, ...] = ()
    """OpenAI Responses ``reasoning.summary[].text``, one entry per summary part."""
    metadata: Metadata = dataclasses.field(default=EMPTY)
    """Provider details kept across persistence."""


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=PART_CONFIG)
class ToolCallPart(_PartBase):
    """A model asking the application to run a tool.

    OpenAI Chat ``tool_calls[]``; OpenAI Responses ``function_call``; Anthropic ``tool_use``;
    Gemini ``functionCall``; Mistral ``tool_calls[]``; Bedrock ``toolUse``.
    """

    type: Literal["tool_call"] = "tool_call"
    """The part tag, always ``"tool_call"``."""
    id: str
    """The call id its result refers to. OpenAI Chat ``tool_calls[].id``; OpenAI Responses
    ``call_id``; Anthropic ``tool_use.id``; Gemini ``functionCall.id``; Mistral
    ``tool_calls[].id``; Bedrock ``toolUse.toolUseId``. Codecs map ids a provider would
    reject without changing the stored one."""
    name: str
    """The tool's name."""
    arguments: JsonObject
    """The arguments as a parsed JSON object (read-only). OpenAI and Mistral send a JSON string;
    Anthropic ``input``, Gemini ``args`` and Bedrock ``input`` an object."""
    raw_arguments: str | None = None
    """The text the model emitted when it was not a JSON object. Set only when ``arguments``
    is empty; such a call is invalid and [`prepare_messages`][] repairs it."""
    metadata: Metadata = dataclasses.field(default=EMPTY)
    """Provider details kept across persistence: Gemini ``gemini.thought_signature``, OpenAI
    Responses ``openai.item_id`` (the ``fc_...`` item id)."""

    def __post_init__(self) -> None:
        if self.raw_arguments is not None and self.arguments:
            raise PydanticCustomError(
                "raw_arguments",
                "raw_arguments may be set only when arguments is empty: raw_arguments keeps the "
                "text of arguments that were not a JSON object. Pass either parsed arguments "
                "or raw_arguments with arguments={}",
            )


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=PART_CONFIG)
class FilePart(_PartBase):
    """An image, document, audio or other file, by bytes or by URL (exactly one)."""

    type: Literal["file"] = "file"
    """The part tag, always ``"file"``."""
    media_type: str
    """The IANA media type, such as ``image/png`` or ``application/pdf``: ``type/subtype``
    (RFC 6838 names), optionally with parameters (``text/plain; charset=utf-8``)."""
    data: Base64Bytes | None = None
    """The file's bytes; standard base64 in JSON. OpenAI ``data:`` URLs and ``file_data``;
    Anthropic ``source.data``; Gemini ``inlineData.data``; Bedrock ``source.bytes``."""
    url: str | None = None
    """Where the file lives: a URL, which starts with a scheme (``https://``, ``gs://``,
    ``s3://``, ``data:``...); base64 text or a path is refused. OpenAI ``image_url.url``
    and ``file_url``; Anthropic ``source.url``; Gemini ``fileData.fileUri``; Bedrock
    ``s3Location.uri``."""
    filename: str | None = None
    """The file's name, where the provider takes one (OpenAI ``filename``, Bedrock document
    ``name``)."""
    metadata: Metadata = dataclasses.field(default=EMPTY)
    """Provider details kept across persistence."""

    @pydantic.field_validator("url", mode="after")
    @classmethod
    def _check_url(cls, url: str | None, info: pydantic.ValidationInfo) -> str | None:
        if url is None or is_url(url):
            return url
        media_type = info.data.get("media_type")
        if not isinstance(media_type, str) or len(media_type) > 80 or not is_media_type(media_type):
            media_type = None  # shown in the message: only a short, valid one
        raise PydanticCustomError(
            "url",
            "{url} is not a URL (it has no scheme such as https:, gs:, s3: or data:); for base64 "
            "text pass the bytes (base64.b64decode(text)) or a data URL "
            "(data:{media_type};base64,...)",
            {"url": repr(url)[:80], "media_type": media_type or "image/png"},
        )

    def __post_init__(self) -> None:
        if (self.data is None) == (self.url is None):
            raise PydanticCustomError(
                "file_source",
                "a file part needs exactly one of data (bytes) or url (str); "
                "got {which}. Use file_part(bytes_or_url, media_type)",
                {"which": "neither" if self.data is None else "both"},
            )
        if not is_media_type(self.media_type):
            raise PydanticCustomError(
                "media_type",
                "media_type {media_type} is not a media type "
                "such as 'image/png', 'application/pdf' or 'text/plain; charset=utf-8'",
                {"media_type": repr(self.media_type)[:80]},
            )

    def __repr__(self) -> str:
        source = f"data=<{len(self.data)} bytes>" if self.data is not None else f"url={self.url!r}"
        return f"FilePart(media_type={self.media_type!r}, {source}, filename={self.filename!r})"


ToolResultContent: TypeAlias = Annotated[
    Union[TextPart, FilePart],  # noqa: UP007 (pydantic needs Union)
    Field(discriminator="type"),
    SerializedByItsClass,
]
"""What a tool result's content may hold besides a plain string."""


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=PART_CONFIG)
class ToolResultPart(_PartBase):
    """What a tool returned for one call.

    OpenAI Chat ``role: "tool"`` message; OpenAI Responses ``function_call_output``; Anthropic
    ``tool_result``; Gemini ``functionResponse``; Mistral ``role: "tool"``; Bedrock
    ``toolResult``.
    """

    type: Literal["tool_result"] = "tool_result"
    """The part tag, always ``"tool_result"``."""
    call_id: str
    """The ``id`` of the [`ToolCallPart`][] this answers."""
    content: str | tuple[ToolResultContent, ...]
    """The result: a string, or text and file parts (a tool that returns an image)."""
    name: str | None = None
    """The tool's name (Gemini ``functionResponse.name`` and Mistral ``name`` need it)."""
    is_error: bool = False
    """The tool failed. Anthropic ``is_error``; Bedrock ``status: "error"``; Gemini
    ``response: {"error": ...}``; formats without a flag prefix the text with
    ``[tool error] ``."""
    metadata: Metadata = dataclasses.field(default=EMPTY)
    """Provider details and repair provenance (``threadline.repair``)."""

    @property
    def text(self) -> str:
        """The text of the result: ``content`` itself, or its text parts concatenated."""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text for part in self.content if isinstance(part, TextPart))


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=PART_CONFIG)
class HookPart(_PartBase):
    """Application state for a UI or a resumed run (a pending approval, a form). Never sent to a
    model: integrity drops it."""

    type: Literal["hook"] = "hook"
    """The part tag, always ``"hook"``."""
    name: str
    """What kind of state this is, chosen by the application (``"approval"``...)."""
    state: JsonObject
    """The state, a read-only JSON object."""
    metadata: Metadata = dataclasses.field(default=EMPTY)
    """Application details kept across persistence."""


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=PART_CONFIG)
class ProviderToolCallPart(_PartBase):
    """A tool the provider ran itself (web search, code execution).

    OpenAI Responses ``web_search_call`` and other hosted tool items; Anthropic
    ``server_tool_use``; Gemini ``executableCode``.
    """

    type: Literal["provider_tool_call"] = "provider_tool_call"
    """The part tag, always ``"provider_tool_call"``."""
    id: str
    """The provider's id for the call."""
    name: str
    """The hosted tool's name (``web_search``, ``code_execution``...)."""
    input: JsonData = None
    """The call's input as the provider sent it (any JSON value)."""
    provider: str
    """The provider that ran it; these parts are sent back only to that provider."""
    metadata: Metadata = dataclasses.field(default=EMPTY)
    """Provider details kept across persistence."""


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=PART_CONFIG)
class ProviderToolResultPart(_PartBase):
    """The result of a tool the provider ran itself; follows its call in the same message.

    Anthropic ``web_search_tool_result`` and siblings; Gemini ``codeExecutionResult``.
    """

    type: Literal["provider_tool_result"] = "provider_tool_result"
    """The part tag, always ``"provider_tool_result"``."""
    call_id: str
    """The ``id`` of the [`ProviderToolCallPart`][] this answers."""
    content: JsonData = None
    """The result as the provider sent it (any JSON value)."""
    provider: str
    """The provider that ran it."""
    is_error: bool = False
    """The hosted tool failed."""
    metadata: Metadata = dataclasses.field(default=EMPTY)
    """Provider details kept across persistence."""


Part: TypeAlias = Annotated[
    Union[  # noqa: UP007 (pydantic needs Union here on 3.10)
        TextPart,
        ReasoningPart,
        ToolCallPart,
        ToolResultPart,
        FilePart,
        HookPart,
        ProviderToolCallPart,
        ProviderToolResultPart,
    ],
    Field(discriminator="type"),
    SerializedByItsClass,
]
"""Any part, told apart by its ``type`` tag."""

AssistantPart: TypeAlias = Union[  # noqa: UP007
    TextPart, ReasoningPart, ToolCallPart, FilePart, HookPart, ProviderToolCallPart,
    ProviderToolResultPart,
]  # fmt: skip
"""The parts an assistant message may hold."""

PART_TYPES: tuple[type[_PartBase], ...] = get_args(get_args(Part)[0])
"""The part classes, in the order of the [`Part`][] union (for threadline's own modules)."""
PART_BY_TAG: dict[str, type[_PartBase]] = {
    str(next(field.default for field in dataclasses.fields(cls) if field.name == "type")): cls  # type: ignore[arg-type]
    for cls in PART_TYPES
}
"""Each part class by its ``type`` tag."""
register_part_tags(PART_BY_TAG)

_P = TypeVar("_P", bound=_PartBase)

ALLOWED_PARTS: dict[str, frozenset[type]] = {
    "system": frozenset({TextPart}),
    "user": frozenset({TextPart, FilePart}),
    "assistant": frozenset(get_args(AssistantPart)),
    "tool": frozenset({ToolResultPart}),
    "internal": frozenset({HookPart, TextPart}),
}


class Message(RoleHints, HtmlRepr):
    """One message of a conversation: a role and at least one part.

    Frozen; compare with ``==`` (every field, ids and metadata included) or
    [`same_content`][] (roles and parts only).
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        json_schema_serialization_defaults_required=True,
        defer_build=True,
        **STRICT_TEXT,
    )

    id: str = Field(default_factory=new_message_id)
    """A unique id: ``"msg_"`` and 32 hex digits unless given (see [`use_id_factory`][])."""
    role: Role
    """Who the message is from."""
    parts: tuple[Part, ...] = Field(min_length=1)
    """What the message holds, in order. Which part types are allowed depends on ``role``."""
    created_at: datetime | None = None
    """When the message was created. Never set by default (replays stay deterministic); a
    ``History(timestamps=True)`` sets it on what it stores."""
    metadata: Metadata = Field(default_factory=lambda: EMPTY)
    """Application and provider details kept across persistence (usage, response ids...)."""
    replay: Annotated[bool, AfterValidator(refuse_replay_from_data)] = REPLAY_FIELD
    """Runtime only: this message is being replayed from a stored run. Set in Python; never
    serialized, refused in data read from outside and by ``verify``."""

    @pydantic.field_validator("parts", mode="after")
    @classmethod
    def _check_parts_for_role(
        cls, parts: tuple[Any, ...], info: pydantic.ValidationInfo
    ) -> tuple[Any, ...]:
        role = info.data.get("role")
        if role is None:  # the role itself was invalid; that error is reported already
            return parts
        allowed = ALLOWED_PARTS[role]
        if allowed.issuperset(map(type, parts)):  # the common case, at C speed
            return parts
        for index, part in enumerate(parts):
            if type(part) not in allowed:
                base = next((kind for kind in PART_TYPES if isinstance(part, kind)), None)
                if base is not None and type(part) is not base:  # codecs match exact classes
                    raise PydanticCustomError(
                        "part_subclass",
                        "a {subclass}, a subclass of {base}: messages hold the part classes "
                        "themselves; build the {base} it stands for",
                        {"index": index, "subclass": type(part).__name__, "base": base.__name__},
                    )
                raise PydanticCustomError(
                    "role_part",
                    "a {part_type} part, which {article} {role} message cannot hold; "
                    "{role} messages hold {allowed} ({hint})",
                    {
                        "index": index,
                        "part_type": part.type,
                        "role": role,
                        "article": "an" if role in ("assistant", "internal") else "a",
                        "allowed": ROLE_PARTS_TEXT[role],
                        "hint": WHERE_INSTEAD[part.type],
                    },
                )
        return parts

    def model_post_init(self, context: Any, /) -> None:
        # pydantic gives every instance its own set of the fields it was given: for a message
        # read from JSON that is all five, a 728-byte set, a fifth of the memory a loaded
        # message takes. They all say the same, so they share one.
        if self.__pydantic_fields_set__ == ALL_FIELDS:
            object.__setattr__(self, "__pydantic_fields_set__", ALL_FIELDS)

    @property
    def text(self) -> str:
        """The message's text parts concatenated with no separator."""
        return "".join(part.text for part in self.parts if type(part) is TextPart)

    @property
    def tool_calls(self) -> tuple[ToolCallPart, ...]:
        """The message's tool calls, in order."""
        return tuple(part for part in self.parts if type(part) is ToolCallPart)

    @property
    def tool_results(self) -> tuple[ToolResultPart, ...]:
        """The message's tool results, in order."""
        return tuple(part for part in self.parts if type(part) is ToolResultPart)

    @property
    def usage(self) -> Usage | None:
        """The tokens the model call that made this message used, from ``metadata["usage"]``
        (which ``decode_response`` sets); ``None`` when there is none. Usage an older
        threadline stored there in the provider's own shape is read by the ``provider`` named
        in ``metadata`` (``None`` when none is named, or it cannot be read)."""
        return message_usage(self.metadata)

    def with_metadata(self, mapping: Mapping[str, Any] | None = None, /, **kv: Any) -> Message:
        """Return a copy with ``mapping`` and ``kv`` merged into ``metadata``.

        Raises:
            threadline.ValidationError: a value is not JSON.
        """
        merged = merged_metadata(self.metadata, mapping, kv)
        return self.model_copy(update={"metadata": merged})

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            if name == "replay" and not value:
                continue
            if name in ("created_at",) and value is None:
                continue
            if name == "metadata" and not value:
                continue
            yield name, value


def same_content(a: Message, b: Message, /) -> bool:
    """True when ``a`` and ``b`` have the same role and parts, whatever their ids and metadata."""
    return a.role == b.role and a.parts == b.parts


# ---------------------------------------------------------------------------------------------
# Constructors. They validate and raise threadline.ValidationError naming the field.


def _as_part(item: object) -> object:
    # A mapping, not a TextPart: validated with the message (or result) it goes into, so that a
    # bad string's error names its place (``parts[1].text``).
    return {"type": "text", "text": item} if isinstance(item, str) else item


def _message(
    role: Role,
    parts: Sequence[object],
    id: str | None,
    metadata: Mapping[str, Any] | None,
    created_at: datetime | None,
) -> Message:
    fields: dict[str, Any] = {"role": role, "parts": tuple(parts)}
    if id is not None:
        fields["id"] = id
    if metadata:
        fields["metadata"] = metadata
    if created_at is not None:
        fields["created_at"] = created_at
    try:
        return Message(**fields)
    except pydantic.ValidationError as error:
        raise translate_errors(error, f"invalid {role} message") from None


def user_message(
    *content: str | TextPart | FilePart,
    id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    created_at: datetime | None = None,
) -> Message:
    """A user message; each ``str`` becomes a text part.

    Raises:
        threadline.ValidationError: no content, or a part a user message cannot hold.
    """
    return _message("user", [_as_part(item) for item in content], id, metadata, created_at)


def assistant_message(
    *content: str | AssistantPart,
    id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    created_at: datetime | None = None,
) -> Message:
    """An assistant message; each ``str`` becomes a text part.

    Raises:
        threadline.ValidationError: no content, or a part an assistant message cannot hold.
    """
    return _message("assistant", [_as_part(item) for item in content], id, metadata, created_at)


def tool_message(
    *results: ToolResultPart,
    id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    created_at: datetime | None = None,
) -> Message:
    """A tool message holding one or more results (one per call of the turn it answers).

    Raises:
        threadline.ValidationError: no results, or something other than a tool result.
    """
    given: Sequence[object] = results  # callers without a type checker pass anything
    for index, result in enumerate(given):
        if not isinstance(result, ToolResultPart):
            detail = ErrorDetail(
                f"parts[{index}]",
                f"a tool message holds tool_result parts, not {type(result).__name__}; "
                "build each with tool_result_part(call_id, content)",
                "role_part",
            )
            raise ValidationError(f"invalid tool message: 1 problem\n  {detail}", [detail])
    return _message("tool", results, id, metadata, created_at)


def system_message(
    text: str,
    *,
    id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    created_at: datetime | None = None,
) -> Message:
    """A system message (instructions to the model).

    Raises:
        threadline.ValidationError: ``text`` is not a string.
    """
    return _message("system", [_as_part(text)], id, metadata, created_at)


def internal_message(
    *parts: str | HookPart | TextPart,
    id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    created_at: datetime | None = None,
) -> Message:
    """An internal message (UI or resume state, notes); never sent to a model.

    Raises:
        threadline.ValidationError: no parts, or a part other than hook or text.
    """
    return _message("internal", [_as_part(item) for item in parts], id, metadata, created_at)


def _part(cls: type[_P], what: str, **fields: Any) -> _P:
    fields = {key: value for key, value in fields.items() if value is not None}
    try:
        return cls(**fields)
    except pydantic.ValidationError as error:
        raise translate_errors(error, f"invalid {what} part") from None


def text_part(text: str, *, metadata: Mapping[str, Any] | None = None) -> TextPart:
    """A text part.

    Raises:
        threadline.ValidationError: ``text`` is not a string.
    """
    return _part(TextPart, "text", text=text, metadata=metadata)


def reasoning_part(text: str = "", **fields: Any) -> ReasoningPart:
    """A reasoning part; ``fields`` are [`ReasoningPart`][]'s (``signature``, ``provider``...).

    Raises:
        threadline.ValidationError: a field has the wrong type or is unknown.
    """
    return _part(ReasoningPart, "reasoning", text=text, **fields)


def tool_call_part(
    id: str,
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    metadata: Mapping[str, Any] | None = None,
) -> ToolCallPart:
    """A tool call. ``arguments`` is a mapping, or the JSON text a model emitted.

    Text that does not parse to a JSON object is kept in ``raw_arguments`` with
    ``arguments={}`` (an invalid call that [`prepare_messages`][] repairs); so
    is an object holding a number JSON cannot carry back (``NaN``, ``1e999``) or an escaped
    surrogate without its pair (``"\\ud800"``). The text is parsed by the bounded parser every
    reader uses, never by recursion.

    Raises:
        threadline.ValidationError: ``id`` or ``name`` is not a string, an argument value
            is not JSON, or the text holds an object nested too deeply to store
            (a [`LimitExceededError`][]).
    """
    raw: str | None = None
    parsed: Mapping[str, Any] | None
    if isinstance(arguments, str):
        # No size limits for a Python caller; nesting has the ceiling every reader has.
        decoded = parse_arguments(arguments, Limits.none(), what="tool_call_part")
        if decoded is not None:
            parsed = decoded
        else:
            parsed, raw = {}, arguments
    else:
        parsed = arguments
    return _part(
        ToolCallPart,
        "tool_call",
        id=id,
        name=name,
        arguments=parsed if parsed is not None else {},
        raw_arguments=raw,
        metadata=metadata,
    )


def tool_result_part(
    call_id: str,
    content: str | Sequence[str | TextPart | FilePart | Mapping[str, Any]] | JsonValue,
    *,
    name: str | None = None,
    is_error: bool = False,
    metadata: Mapping[str, Any] | None = None,
) -> ToolResultPart:
    """A tool result for the call ``call_id``.

    ``content`` is a string, or a list or tuple of text/file parts (each ``str`` a text part),
    or any other JSON value -- a dict, a list of values, an int, a float, a bool or ``None`` --
    which becomes compact JSON text (``{"temp":22}``), the form every provider accepts.

    Raises:
        threadline.ValidationError: ``content`` holds parts a tool result cannot hold, or is
            neither text, parts nor a JSON value (a set, an object, ``NaN``...).
    """
    value: object = content
    given: object = content  # callers without a type checker pass anything
    if isinstance(given, (list, tuple)) and all(map(_is_content_part, given)):
        value = tuple(_as_part(item) for item in given)
    elif not isinstance(given, str):
        value = json_result_text(given)
    return _part(
        ToolResultPart,
        "tool_result",
        call_id=call_id,
        content=value,
        name=name,
        is_error=is_error,
        metadata=metadata,
    )


def _is_content_part(item: object) -> bool:
    """Whether ``item`` reads as a part of a tool result's content (not as a JSON value)."""
    if isinstance(item, Mapping):
        return item.get("type") in ("text", "file")
    return isinstance(item, (str, _PartBase))


def file_part(
    data_or_url: bytes | str,
    media_type: str,
    *,
    filename: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> FilePart:
    """A file part: ``bytes`` become ``data``, a ``str`` is a ``url``.

    A ``str`` must be a URL with a scheme (``https://``, ``gs://``, ``s3://``, ``data:``...):
    for base64 text, pass ``base64.b64decode(text)`` or a ``data:`` URL.

    Raises:
        threadline.ValidationError: ``media_type`` is not a media type, or a ``str`` is not
            a URL.
    """
    source = "data" if isinstance(data_or_url, (bytes, bytearray, memoryview)) else "url"
    value = bytes(data_or_url) if source == "data" else data_or_url  # type: ignore[arg-type]
    return _part(
        FilePart,
        "file",
        media_type=media_type,
        filename=filename,
        metadata=metadata,
        **{source: value},
    )


def hook_part(
    name: str, state: Mapping[str, Any], *, metadata: Mapping[str, Any] | None = None
) -> HookPart:
    """A hook part holding UI or resume ``state`` (a JSON object) under ``name``.

    Raises:
        threadline.ValidationError: ``state`` holds a value that is not JSON.
    """
    return _part(HookPart, "hook", name=name, state=state, metadata=metadata)
