"""One descriptor per wire format (private): everything threadline knows about a format, in one
place, and the table of them that the registry, the request fields, the usage readers, the
stream assembler, structured output and the CLI's sniffing all read.

A [`FormatDescriptor`][] names its pieces by :class:`Ref` (``"module:attribute"``), imported
on first use, so this module imports nothing of threadline and ``import threadline.codecs``
stays light. ``tests/unit/test_formats.py`` loads every piece of every registered descriptor,
so a format that lacks one fails a test naming the piece.

Adding a format is one descriptor in ``_DESCRIPTORS`` plus the pieces it names (its codec
module, its request-field builder, usage reader and stream builder). A dialect of another
format (an OpenAI-compatible API) is ``dataclasses.replace(OPENAI_CHAT, name=..., ...)``:
it overrides only what differs.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any
from typing import Generic
from typing import TypeVar

__all__ = ["DESCRIPTORS", "CacheMarks", "FormatDescriptor", "Ref", "descriptor"]

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Ref(Generic[T]):
    """A module attribute named ``"package.module:attribute"``, imported on first ``load``."""

    path: str

    def load(self) -> T:
        """The attribute (its module imported on the first call).

        Raises:
            ImportError: the module does not exist.
            AttributeError: the module has no such attribute.
        """
        loaded: T = _load(self.path)
        return loaded


@functools.cache
def _load(path: str) -> Any:
    module_name, _, attribute = path.partition(":")
    value: Any = importlib.import_module(module_name)
    for name in attribute.split(".") if attribute else ():
        value = getattr(value, name)
    return value


@dataclasses.dataclass(frozen=True)
class CacheMarks:
    """How a format takes prompt-cache breakpoints (``encode(cache=...)``)."""

    key: str
    """The part metadata key a breakpoint is kept under in the history."""
    mark: Mapping[str, str]
    """The breakpoint's value without a TTL (``{"type": "ephemeral"}``)."""
    writer: Ref[Any]
    """``() -> writer``: adds and counts the request's breakpoints
    (``threadline.codecs._caching``)."""


@dataclasses.dataclass(frozen=True)
class FormatDescriptor:
    """What threadline knows about one wire format.

    The codec module keeps its public ``encode`` / ``decode`` / ``decode_response`` (and its
    declared losses, ``normalize_for_round_trip``); the descriptor says where they are and
    holds the rest. The pieces typed ``Ref[Any]`` are loaded and called by the module that
    owns their contract (``_requests``, ``_usage_readers``, ``streaming``, ``_structured``),
    which keeps this module free of threadline imports.
    """

    name: str
    """The codec name: ``provider=`` of ``encode`` / ``decode`` / ``StreamAssembler``."""
    module: str
    """The codec module, with ``encode``, ``decode``, ``decode_response``."""
    label: str
    """What the format is called in messages (``"Anthropic Messages"``)."""
    provider: str
    """The ``provider`` tag the codec writes on reasoning and messages (``"openai"`` for both
    OpenAI APIs)."""
    request_fields: Ref[Any]
    """``(ToolRequest, body) -> dict``: the format's ``tools`` / ``tool_choice`` fields
    (``threadline.codecs._requests``)."""
    strict: bool
    """Tool and output schemas go in OpenAI's strict mode (``strict: true``), so the reply's
    ``null`` s for optional keys are dropped on reading it back."""
    output_schema: Ref[Any] | None
    """``(body, definition) -> None``: writes the structured-output field
    (``threadline.codecs._structured``); ``None``: the format has none."""
    forced_tool: Ref[Any] | None
    """Structured output is a forced tool, or the native field where that cannot work
    (Anthropic, Bedrock): a ``threadline.codecs._structured.NativeOutput`` naming that field;
    ``None``: ``output_schema`` alone writes it."""
    usage_reader: Ref[Any]
    """``(counts) -> Usage``: the format's usage object read (``threadline._usage_readers``)."""
    stream_builder: Ref[Any]
    """``() -> Builder``: a fresh builder for ``StreamAssembler`` (``threadline.codecs``)."""
    sniffs_as: str
    """The codec name the CLI's format sniffing (``threadline.codecs._sniff``) gives this
    format's payloads and responses (Mistral's look like OpenAI Chat's)."""
    cache: CacheMarks | None = None
    """Its prompt-cache breakpoints; ``None``: the format takes none (``cache=`` adds
    nothing)."""
    encode_request: Ref[Any] | None = None
    """``(messages, request, options) -> (body, request)``, used instead of the module's
    ``encode`` when ``threadline.encode`` writes a request: a format whose body depends on
    the request (Bedrock declares the tools its history calls) says so here, so the registry
    branches on no format's name."""
    turns: str | None = None
    """The body's field holding the wire turns in order (``"messages"``): the format is
    encoded incrementally by `History.encode` (``threadline.codecs._incremental``) when it
    has one and no ``encode_request``; ``None``: each step encodes the whole history."""
    segment_check: Ref[Any] | None = None
    """``(messages) -> bool``: whether a segment of a history that starts at a turn boundary
    is encoded alone as it is in place, beyond what every format shares (ids and names the
    format takes as they are, no call answered across the boundary); ``None``: always."""

    @property
    def round_trip(self) -> Ref[Any]:
        """The format's declared losses: its module's ``normalize_for_round_trip``, the shared
        driver (``threadline.codecs._round_trip.read_back``) over the module's
        ``ROUND_TRIP``."""
        return Ref(f"{self.module}:normalize_for_round_trip")

    def codec(self) -> Any:
        """The codec module (imported on first use)."""
        return _load(self.module)


_READERS = "threadline._usage_readers"
_REQUESTS = "threadline.codecs._requests"
_STRUCTURED = "threadline.codecs._structured"

ANTHROPIC = FormatDescriptor(
    name="anthropic",
    module="threadline.codecs.anthropic",
    label="Anthropic Messages",
    provider="anthropic",
    request_fields=Ref(f"{_REQUESTS}:anthropic"),
    strict=False,
    output_schema=Ref(f"{_STRUCTURED}:anthropic_output"),
    forced_tool=Ref(f"{_STRUCTURED}:ANTHROPIC_NATIVE"),
    usage_reader=Ref(f"{_READERS}:_anthropic"),
    stream_builder=Ref("threadline.codecs._stream_anthropic:AnthropicBuilder"),
    sniffs_as="anthropic",
    cache=CacheMarks(
        "anthropic.cache_control",
        MappingProxyType({"type": "ephemeral"}),
        Ref("threadline.codecs._caching:AnthropicMarks"),
    ),
    turns="messages",
)
BEDROCK = FormatDescriptor(
    name="bedrock",
    module="threadline.codecs.bedrock",
    label="Bedrock Converse",
    provider="bedrock",
    request_fields=Ref(f"{_REQUESTS}:bedrock"),
    strict=False,
    output_schema=Ref(f"{_STRUCTURED}:bedrock_output"),
    forced_tool=Ref(f"{_STRUCTURED}:BEDROCK_NATIVE"),
    usage_reader=Ref(f"{_READERS}:_bedrock"),
    stream_builder=Ref("threadline.codecs._stream_bedrock:BedrockBuilder"),
    sniffs_as="bedrock",
    cache=CacheMarks(
        "bedrock.cache_point",
        MappingProxyType({"type": "default"}),
        Ref("threadline.codecs._caching:BedrockMarks"),
    ),
    encode_request=Ref("threadline.codecs.bedrock:encode_request"),
    turns="messages",
    segment_check=Ref("threadline.codecs.bedrock:segment_alone"),
)
GEMINI = FormatDescriptor(
    name="gemini",
    module="threadline.codecs.gemini",
    label="Gemini generateContent",
    provider="gemini",
    request_fields=Ref(f"{_REQUESTS}:gemini"),
    strict=False,
    output_schema=Ref(f"{_STRUCTURED}:gemini_output"),
    forced_tool=None,
    usage_reader=Ref(f"{_READERS}:_gemini"),
    stream_builder=Ref("threadline.codecs._stream_gemini:GeminiBuilder"),
    sniffs_as="gemini",
    turns="contents",
)
OPENAI_CHAT = FormatDescriptor(
    name="openai_chat",
    module="threadline.codecs.openai_chat",
    label="OpenAI Chat Completions",
    provider="openai",
    request_fields=Ref(f"{_REQUESTS}:openai_chat"),
    strict=True,
    output_schema=Ref(f"{_STRUCTURED}:chat_output"),
    forced_tool=None,
    usage_reader=Ref(f"{_READERS}:_openai_chat"),
    stream_builder=Ref("threadline.codecs._stream_chat:openai_chat_builder"),
    sniffs_as="openai_chat",
    turns="messages",
)
MISTRAL = dataclasses.replace(
    OPENAI_CHAT,
    name="mistral",
    module="threadline.codecs.mistral",
    label="Mistral chat",
    provider="mistral",
    request_fields=Ref(f"{_REQUESTS}:mistral"),
    usage_reader=Ref(f"{_READERS}:_mistral"),
    stream_builder=Ref("threadline.codecs._stream_chat:mistral_builder"),
)
OPENAI_RESPONSES = FormatDescriptor(
    name="openai_responses",
    module="threadline.codecs.openai_responses",
    label="OpenAI Responses",
    provider="openai",
    request_fields=Ref(f"{_REQUESTS}:openai_responses"),
    strict=True,
    output_schema=Ref(f"{_STRUCTURED}:responses_output"),
    forced_tool=None,
    usage_reader=Ref(f"{_READERS}:_openai_responses"),
    stream_builder=Ref("threadline.codecs._stream_responses:ResponsesBuilder"),
    sniffs_as="openai_responses",
    turns="input",
)

_DESCRIPTORS = (ANTHROPIC, BEDROCK, GEMINI, MISTRAL, OPENAI_CHAT, OPENAI_RESPONSES)

DESCRIPTORS: Mapping[str, FormatDescriptor] = MappingProxyType(
    {d.name: d for d in sorted(_DESCRIPTORS, key=lambda d: d.name)}
)
"""The registered formats by codec name, sorted: the one table of formats."""


def descriptor(name: str) -> FormatDescriptor | None:
    """The descriptor of the format ``name``, or ``None`` when none is registered."""
    return DESCRIPTORS.get(name) if isinstance(name, str) else None
