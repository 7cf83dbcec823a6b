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
from typing import Literal
from typing import TypeAlias
from typing import TypeVar

__all__ = [
    "DESCRIPTORS",
    "CacheMarks",
    "FormatDescriptor",
    "Is",
    "Ref",
    "Shape",
    "Telltales",
    "descriptor",
    "shape",
]

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
    encode: Ref[Any]
    """``(messages, request, options) -> (body, request, state)``, used instead of the
    format's ``encode`` (and ``encode_request``) for ``encode(cache=...)``: ``options`` hold
    ``cache``, planned once in the prepared history, and ``state`` is the plan with the
    turns the codec's loop gave the history's breakpoints
    (``threadline.codecs._caching.CacheState``)."""


@dataclasses.dataclass(frozen=True)
class Is:
    """A test of the value under one key of a `Shape` (read by ``threadline.codecs._sniff``):
    the key is there (``present``) or not (``absent``); its value is a ``list``, a non-empty
    one (``items``), a ``str``, equal to ``argument`` (``equals``), one of ``argument`` (a
    ``frozenset``: ``one of``), a mapping holding the key ``argument`` (``holds``), or a list
    whose first item (``first``) or some item (``some``) matches one of the shapes
    ``argument``."""

    kind: Literal[
        "present", "absent", "list", "items", "str", "equals", "one of", "holds", "first", "some"
    ]
    argument: Any = None


Shape: TypeAlias = "tuple[tuple[str, Is], ...]"
"""A mapping's telltale keys, each with its test: it matches when every test passes."""

PRESENT = Is("present")
ABSENT = Is("absent")
LIST = Is("list")
ITEMS = Is("items")
STR = Is("str")


def shape(**tests: Is) -> Shape:
    """The `Shape` of a mapping whose keys pass ``tests`` (``shape(choices=LIST)``)."""
    return tuple(tests.items())


@dataclasses.dataclass(frozen=True)
class Telltales:
    """What gives a format's payloads and responses away: a few keys, never the whole value.

    ``threadline.codecs._sniff`` asks each question of the formats by ``rank`` (lowest
    first), and the first whose shapes match names the format; where a value holds the
    telltales of two formats (no real one does), the lower rank wins.
    """

    rank: int
    """The order the formats are asked in."""
    responses: tuple[Shape, ...] = ()
    """A response (a JSON object) of the format."""
    loose_responses: tuple[Shape, ...] = ()
    """A response shape weaker than every format's ``responses``: asked after them."""
    bodies: tuple[Shape, ...] = ()
    """A request body of the format, by its top-level keys (a body with a ``messages`` list
    that none names is read as a message list)."""
    items: tuple[Shape, ...] = ()
    """An item of a message list that is the format's (asked first of each item; an item
    with a ``parts`` list that none names is threadline's own)."""
    messages: tuple[Shape, ...] = ()
    """A message (an item holding ``content``) that is the format's."""
    blocks: tuple[Shape, ...] = ()
    """A content block of a message that only the format has."""
    default: bool = False
    """A message list that tells nothing else is the format's (at most one format says so)."""
    usage: tuple[Shape, ...] = ()
    """A usage object of the format, told from that of another format with the same provider
    tag (both OpenAI APIs write ``openai``), for the usage threadline stored before
    ``Usage``: of such formats, one whose ``usage`` matches, else the one that has none."""


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
    """The codec module, with ``encode``, ``decode``, ``decode_response``; or an object of
    one (``"threadline.codecs._dialects:DEEPSEEK"``) with them as methods."""
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
    format's payloads and responses (Mistral's look like OpenAI Chat's): a format sniffed as
    itself has ``telltales``; one sniffed as another is not asked."""
    telltales: Telltales | None = None
    """What gives this format's payloads and responses away (``threadline.codecs._sniff``);
    ``None``: nothing does (they look like those of the format ``sniffs_as`` names)."""
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
        separator = "." if ":" in self.module else ":"  # a codec object: its method
        return Ref(f"{self.module}{separator}normalize_for_round_trip")

    def codec(self) -> Any:
        """The codec module (imported on first use)."""
        return _load(self.module)


_READERS = "threadline._usage_readers"
# Bedrock Converse content blocks: one key naming the kind, no "type".
_BEDROCK_BLOCKS = tuple(
    shape(type=ABSENT, **{kind: PRESENT})
    for kind in ("text", "image", "document", "toolUse", "toolResult", "reasoningContent")
)
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
    telltales=Telltales(
        rank=3,
        responses=(shape(type=Is("equals", "message"), content=LIST),),
        bodies=(shape(messages=LIST, system=STR),),
        blocks=(
            shape(
                type=Is(
                    "one of",
                    frozenset(
                        {"tool_use", "tool_result", "thinking", "redacted_thinking", "document"}
                    ),
                )
            ),
            shape(type=Is("equals", "image"), source=PRESENT),  # OpenAI's image has none
        ),
    ),
    cache=CacheMarks(
        "anthropic.cache_control",
        MappingProxyType({"type": "ephemeral"}),
        Ref("threadline.codecs._caching:AnthropicMarks"),
        Ref("threadline.codecs.anthropic:encode_cached"),
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
    telltales=Telltales(
        rank=5,
        responses=(shape(output=Is("holds", "message")),),
        bodies=(shape(messages=LIST, system=Is("first", _BEDROCK_BLOCKS)),),
        blocks=_BEDROCK_BLOCKS,
    ),
    cache=CacheMarks(
        "bedrock.cache_point",
        MappingProxyType({"type": "default"}),
        Ref("threadline.codecs._caching:BedrockMarks"),
        Ref("threadline.codecs.bedrock:encode_cached"),
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
    telltales=Telltales(
        rank=4,
        responses=(shape(candidates=LIST),),
        bodies=(shape(contents=PRESENT), shape(systemInstruction=PRESENT)),
        items=(
            shape(parts=LIST, role=Is("equals", "model")),
            shape(parts=Is("some", (shape(type=ABSENT),))),  # threadline's parts have a type
        ),
    ),
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
    telltales=Telltales(
        rank=1,
        responses=(shape(choices=LIST),),
        messages=(
            shape(tool_calls=PRESENT),
            shape(role=Is("one of", frozenset({"system", "tool", "developer"}))),
        ),
        blocks=(
            shape(type=Is("one of", frozenset({"image_url", "input_audio", "file", "refusal"}))),
        ),
        default=True,
        usage=(shape(prompt_tokens=PRESENT),),
    ),
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
    telltales=Telltales(
        rank=2,
        responses=(shape(object=Is("equals", "response")),),
        loose_responses=(shape(output=ITEMS),),
        bodies=(shape(input=PRESENT),),
        items=(
            shape(
                type=Is(
                    "one of",
                    frozenset(
                        {
                            "message",
                            "function_call",
                            "function_call_output",
                            "reasoning",
                            "input_text",
                        }
                    ),
                )
            ),
            shape(type=PRESENT, role=ABSENT),
        ),
    ),
    turns="input",
)

_COHERE_FIELDS = "threadline.codecs._cohere_fields"
COHERE = FormatDescriptor(
    name="cohere",
    module="threadline.codecs.cohere",
    label="Cohere v2 Chat",
    provider="cohere",
    request_fields=Ref(f"{_COHERE_FIELDS}:request_fields"),
    strict=False,
    output_schema=Ref(f"{_COHERE_FIELDS}:output_schema"),
    forced_tool=None,
    usage_reader=Ref(f"{_COHERE_FIELDS}:usage_reader"),
    stream_builder=Ref("threadline.codecs._stream_cohere:CohereBuilder"),
    sniffs_as="cohere",
    telltales=Telltales(
        rank=0,  # asked first: its telltales are its own (OpenAI Chat's tool_calls are too)
        responses=(shape(finish_reason=PRESENT, message=Is("holds", "role")),),
        messages=(shape(tool_plan=PRESENT),),
        blocks=(shape(type=Is("equals", "document"), document=PRESENT),),
    ),
    turns="messages",
)
OLLAMA = FormatDescriptor(
    name="ollama",
    module="threadline.codecs.ollama",
    label="Ollama chat",
    provider="ollama",
    request_fields=Ref(f"{_REQUESTS}:ollama"),
    strict=False,
    output_schema=Ref(f"{_STRUCTURED}:ollama_output"),
    forced_tool=None,
    usage_reader=Ref(f"{_READERS}:_ollama"),
    stream_builder=Ref("threadline.codecs._stream_ollama:OllamaBuilder"),
    sniffs_as="ollama",
    telltales=Telltales(
        # asked first: its assistant messages hold `tool_calls` too (OpenAI Chat's telltale),
        # as calls without an `id` or `type`, which no other format writes
        rank=-1,  # before Cohere (rank 0): their telltales never overlap
        responses=(shape(message=Is("holds", "role"), done=PRESENT),),
        messages=(
            shape(images=LIST),
            shape(tool_name=STR),
            shape(thinking=STR),
            shape(tool_calls=Is("first", (shape(id=ABSENT, type=ABSENT, function=PRESENT),))),
        ),
    ),
    turns="messages",
)


def _dialect(name: str, attribute: str, label: str) -> FormatDescriptor:
    """An OpenAI-compatible dialect (``threadline.codecs._dialects``): OpenAI Chat with its
    own codec name, provider tag and reasoning (in responses and streams)."""
    return dataclasses.replace(
        OPENAI_CHAT,
        name=name,
        module=f"threadline.codecs._dialects:{attribute}",
        label=label,
        provider=name,
        stream_builder=Ref(f"threadline.codecs._stream_chat:dialect_builders.{name}"),
    )


DEEPSEEK = _dialect("deepseek", "DEEPSEEK", "DeepSeek chat completions")
OPENROUTER = _dialect("openrouter", "OPENROUTER", "OpenRouter chat completions")
VLLM = _dialect("vllm", "VLLM", "vLLM chat completions")
GROQ = _dialect("groq", "GROQ", "Groq chat completions")
QWEN = _dialect("qwen", "QWEN", "Qwen chat completions")
MOONSHOT = _dialect("moonshot", "MOONSHOT", "Moonshot chat completions")
XAI = _dialect("xai", "XAI", "xAI chat completions")
TOGETHER = _dialect("together", "TOGETHER", "Together chat completions")

_DESCRIPTORS = (
    ANTHROPIC,
    BEDROCK,
    GEMINI,
    MISTRAL,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    OLLAMA,
    COHERE,
    DEEPSEEK,
    OPENROUTER,
    VLLM,
    GROQ,
    QWEN,
    MOONSHOT,
    XAI,
    TOGETHER,
)

DESCRIPTORS: Mapping[str, FormatDescriptor] = MappingProxyType(
    {d.name: d for d in sorted(_DESCRIPTORS, key=lambda d: d.name)}
)
"""The registered formats by codec name, sorted: the one table of formats."""


def descriptor(name: str) -> FormatDescriptor | None:
    """The descriptor of the format ``name``, or ``None`` when none is registered."""
    return DESCRIPTORS.get(name) if isinstance(name, str) else None
