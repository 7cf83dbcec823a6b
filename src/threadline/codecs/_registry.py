"""Codec names, the modules behind them, and the dispatching ``encode`` / ``decode`` functions.

A codec module is imported the first time its name is used, so ``import threadline`` and
``import threadline.codecs`` stay light. The formats are the descriptors of
``threadline.codecs._formats``; this module holds nothing of any one format (adding a wire
format is a descriptor there, see ``docs/architecture.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeAlias
from typing import TypeGuard
from typing import cast

from threadline.codecs._formats import DESCRIPTORS
from threadline.codecs._formats import FormatDescriptor
from threadline.codecs._formats import descriptor
from threadline.codecs.base import Codec
from threadline.codecs.base import IntegrityMode
from threadline.codecs.base import ReasoningPolicy
from threadline.codecs.base import TextFilesPolicy
from threadline.codecs.base import UnsupportedPolicy
from threadline.errors import UnknownProviderError
from threadline.limits import Limits
from threadline.messages import Message

if TYPE_CHECKING:
    from collections.abc import Callable

    from threadline.codecs._caching import CacheOption
    from threadline.codecs._caching import CacheState
    from threadline.codecs._requests import ToolRequest
    from threadline.codecs._structured import OutputSchema
    from threadline.codecs._tool_names import ToolNameRule
    from threadline.tools import ToolDefinition

    EncodeRequest: TypeAlias = Callable[
        [Iterable[Message], ToolRequest | None, dict[str, Any]],
        tuple[dict[str, Any], ToolRequest | None],
    ]
    EncodeCached: TypeAlias = Callable[
        [Iterable[Message], ToolRequest | None, dict[str, Any]],
        tuple[dict[str, Any], ToolRequest | None, CacheState | None],
    ]

__all__ = ["codec_names", "decode", "decode_response", "encode", "get_codec", "wire_tool_names"]


def codec_names() -> tuple[str, ...]:
    """The registered codec names, sorted."""
    return tuple(DESCRIPTORS)


def get_codec(name: str) -> Codec:
    """The codec module registered as ``name`` (imported on first use).

    Raises:
        threadline.UnknownProviderError: no codec has that name; the message lists the names.
    """
    return cast(Codec, format_descriptor(name).codec())


def format_descriptor(name: str) -> FormatDescriptor:
    """The descriptor of the format registered as ``name``.

    Raises:
        threadline.UnknownProviderError: no codec has that name; the message lists the names.
    """
    found = descriptor(name)
    if found is None:
        known = ", ".join(repr(known) for known in codec_names())
        raise UnknownProviderError(f"no codec named {name!r}; the codecs are {known}")
    return found


def encode(
    messages: Iterable[Message],
    *,
    provider: str,
    system: str | None = None,
    model: str | None = None,
    integrity: IntegrityMode = "auto",
    reasoning: ReasoningPolicy = "auto",
    unsupported: UnsupportedPolicy = "placeholder",
    text_files: TextFilesPolicy = "unsupported",
    tools: Iterable[ToolDefinition] = (),
    tool_choice: str | None = None,
    output_schema: OutputSchema | None = None,
    cache: CacheOption = None,
) -> dict[str, Any]:
    """Write ``messages`` as the history fragment of a request in the format ``provider``,
    plus the provider's own fields for ``tools`` and ``tool_choice``: a body to splat into
    the SDK call.

    ``encode(history, provider="anthropic")`` is ``threadline.codecs.anthropic.encode(history)``;
    see ``docs/providers.md`` for what each format carries, ``docs/tools.md`` for the tool
    fields. Nothing is added for an argument left at its default, except Bedrock's
    ``toolConfig``, which Converse requires whenever the history holds tool blocks.

    Args:
        messages: the history, in order.
        provider: a codec name: ``openai_chat``, ``anthropic``...
        system: system text placed before everything else, where the format wants it.
        model: the target model; reasoning produced by another model is not replayed (an
            alias and its dated snapshot, an inference profile and its base id, are one),
            nor is reasoning that names no model: a Bedrock reply read without
            ``decode_response(..., model=modelId)`` (Converse responses name none) or
            assembled without ``StreamAssembler(..., model=modelId)`` replays only to an
            ``encode`` given no model.
        integrity: ``auto`` repairs the history first, ``strict`` raises instead of
            repairing, ``off`` sends it as it is.
        reasoning: ``auto`` replays reasoning only to the provider and model that produced it;
            ``text`` sends other reasoning as plain text; ``drop`` sends none.
        unsupported: a part the format cannot carry becomes a placeholder text
            (``placeholder``), is left out (``drop``) or raises (``raise``).
        text_files: ``inline`` sends a text file (``text/*``, JSON, CSV) the format cannot
            carry as a file as its text, ``<file name="..." media_type="...">\\n…\\n</file>``,
            instead of applying ``unsupported`` to it (``unsupported``, the default).
        tools: the [`ToolDefinition`][threadline.ToolDefinition] s the model may call, sent
            in the provider's shape with each schema adapted to it; names the provider
            refuses are sent as wire names (one mapping with the history's tool names).
            The tool list and tool dicts are each body's own; the schemas in them are shared
            between bodies and read-only (``copy.deepcopy`` one to change it).
        tool_choice: ``"auto"``, ``"none"``, ``"required"`` (some tool must be called) or a
            tool's name (that tool must be called); ``None`` sends none.
        output_schema: ask for a reply in this shape: a JSON Schema object, a pydantic model
            class, or a [`ToolDefinition`][threadline.ToolDefinition] (its name, description
            and ``strict``). Each provider gets its own field (``response_format``,
            ``text.format``, ``generationConfig``) or, for Anthropic and Bedrock, a tool it
            must call; with thinking in the history or ``tool_choice="auto"`` (which a
            forced tool would change) their native field instead (``output_config.format``,
            ``outputConfig.textFormat``), also for ``model=None``. Pass the same value to
            ``decode_response``. See "Structured output" in ``docs/tools.md``.
        cache: prompt-cache breakpoints for the formats that take them (Anthropic
            ``cache_control``, Bedrock ``cachePoint``): ``None`` adds none, ``"auto"`` marks
            the tools, the system prompt and the newest turn, and a sequence names them:
            ``"tools"``, ``"system"`` or message indexes (``-1`` the newest), at most four.

    Raises:
        threadline.UnknownProviderError: no codec has that name.
        threadline.CodecError: Anthropic or Bedrock ``output_schema`` needs the native field
            (thinking in the history, or ``tool_choice="auto"``) and ``model`` is known to
            lack it; the error names the conflict and the fix.
        threadline.IntegrityError: the history breaks a rule ``integrity`` does not repair.
        threadline.UnsupportedContentError: ``unsupported="raise"`` and a part cannot be sent,
            the provider cannot express ``tool_choice`` (Bedrock: ``"none"``), or the codec has
            no structured output.
        threadline.ValidationError: ``tool_choice`` names no given tool, two tools share a
            name, a schema cannot be adapted to the provider (the path is named), or
            ``output_schema`` or ``cache`` cannot be sent (the error names the argument and
            the fix).
        ValueError: an option has a value outside its documented choices.
        TypeError: ``tools`` is not a list of ``ToolDefinition``.
    """
    options: dict[str, Any] = {
        "system": system,
        "model": model,
        "integrity": integrity,
        "reasoning": reasoning,
        "unsupported": unsupported,
    }
    if text_files != "unsupported":  # a codec written before the option still works
        options["text_files"] = text_files
    described = format_descriptor(provider)
    codec = cast(Codec, described.codec())
    request = None
    if tools != () or tool_choice is not None:
        from threadline.codecs import _requests

        request = _requests.read_tools(tools, tool_choice)
        messages, request = _requests.prepare(messages, request, _name_rule(codec))
    output = None
    if output_schema is not None:
        from threadline.codecs._structured import output_definition

        output = output_definition(output_schema)
    state: CacheState | None = None
    body: dict[str, Any]
    if cache is not None and described.cache is not None:
        # the plan is made once in the format's prepared history, and its loop notes the
        # turns it gives the history's breakpoints: they are not looked for again
        write_cached: EncodeCached = described.cache.encode.load()
        body, request, state = write_cached(messages, request, {**options, "cache": cache})
    else:
        if cache is not None:  # a format that caches on its own: cache is checked all the same
            from threadline.codecs._caching import plan_cache

            messages = messages if isinstance(messages, list) else list(messages)
            plan_cache(cache, messages, provider)
        if described.encode_request is not None:
            # a format whose body depends on the request (Bedrock's toolConfig) writes both
            write: EncodeRequest = described.encode_request.load()
            body, request = write(messages, request, options)
        else:
            body = _codec_body(codec, messages, options)
    # The request fields go on in prompt order: tools, then the structured output (a forced
    # tool joins the tools), then the breakpoints that may mark them.
    if request is not None:
        body.update(_requests.request_fields(provider, request, body))
    if output is not None:
        from threadline.codecs._structured import with_output_schema

        body = with_output_schema(body, provider, output, model=model, tool_choice=tool_choice)
    if state is not None:
        from threadline.codecs._caching import with_breakpoints

        body = with_breakpoints(body, provider, state)
    return body


HISTORY_BODY: ContextVar[tuple[object, Callable[[], dict[str, Any]]] | None] = ContextVar(
    "threadline_history_body", default=None
)
"""``(messages, body)`` while `History.encode` runs ``encode``: when the codec is to encode
exactly those ``messages`` (no tool renamed them, no cache mark copied them), ``body()`` gives
the same body incrementally (``threadline.codecs._incremental``)."""


def _codec_body(codec: Codec, messages: Iterable[Message], options: dict[str, Any]) -> Any:
    incremental = HISTORY_BODY.get()
    if incremental is not None and messages is incremental[0]:
        return incremental[1]()
    return codec.encode(messages, **options)


def decode(
    payload: Any,
    *,
    provider: str,
    limits: Limits | None = None,
    tool_names: Mapping[str, str] | None = None,
    tools: Iterable[ToolDefinition] = (),
) -> list[Message]:
    """Read a history fragment, or a whole request body, of the format ``provider``.

    Args:
        payload: what ``encode`` returned, a whole request body, or a message list.
        provider: a codec name: ``openai_chat``, ``anthropic``...
        limits: how much to read (`Limits`); ``None`` means the defaults.
        tool_names: ``{wire name: stored name}``, as
            [`wire_tool_names`][threadline.codecs.wire_tool_names] gives it: each tool call
            and tool result named by a key gets the stored name back.
        tools: the definitions the request was encoded with (``encode(..., tools=...)``):
            the calls and results named by their wire names get the stored names back, as
            ``decode_response(..., tools=...)`` does; ``tool_names`` wins where both name one
            wire name. Arguments are read as they were sent.

    Raises:
        threadline.UnknownProviderError: no codec has that name.
        threadline.CodecError: ``payload`` is not of the format; the message names the JSON
            path of the first value that does not fit.
        threadline.LimitExceededError: the payload exceeds ``limits``.
        threadline.ValidationError: the payload holds values threadline cannot store, or two
            of ``tools`` share a name.
        TypeError: ``tool_names`` is not a mapping of ``str`` to ``str``, or ``tools`` not a
            list of ``ToolDefinition``.
    """
    codec = get_codec(provider)
    names = _checked_names(tool_names)
    if tools != ():
        names = {**_defined_names(tools, codec), **names}
    messages = codec.decode(payload, limits=limits)
    if not names:
        return messages
    from threadline.codecs._tool_names import rename_tools

    return rename_tools(messages, names)


def decode_response(
    response: Any,
    *,
    provider: str,
    limits: Limits | None = None,
    choice: int = 0,
    tool_names: Mapping[str, str] | None = None,
    model: str | None = None,
    tools: Iterable[ToolDefinition] = (),
    output_schema: OutputSchema | None = None,
) -> Message:
    """Read a provider response (a JSON dict, JSON text or the SDK's response object) into an
    assistant message; usage and the response id are in its ``metadata``.

    Args:
        response: the response.
        provider: a codec name.
        limits: how much to read (`Limits`); ``None`` means the defaults.
        choice: which of several choices (OpenAI Chat, Mistral) or candidates (Gemini) to
            read; formats whose responses hold one message take only 0.
        tools: the definitions the request sent (``encode(..., tools=...)``): their wire
            names are mapped back, and a call to a tool with ``strict=True`` loses the
            ``null`` s strict mode sent for the parameters its schema left optional.
        tool_names: ``{wire name: stored name}``, as
            [`wire_tool_names`][threadline.codecs.wire_tool_names] gives it for the request:
            each tool call named by a key gets the stored name back.
        model: the model the request went to, for a response that names none (Bedrock's
            never does): it tags the message and its reasoning, which then replay to it.
            Without it, such reasoning names no model and replays only to an ``encode``
            given no model: ``encode(..., model=modelId)`` leaves it out.
        output_schema: the ``output_schema`` the request was encoded with: the structured
            reply becomes the message's text (for Anthropic and Bedrock the forced tool's
            arguments, as JSON text rather than a tool call, so the history stays valid; for
            OpenAI and Mistral in strict mode without the ``null`` s that stand for keys the
            schema left optional). ``Model.model_validate_json(message.text)`` reads it.

    Raises:
        threadline.UnknownProviderError: no codec has that name.
        threadline.CodecError: ``response`` is not a response of the format, or holds no
            choice ``choice``.
        threadline.LimitExceededError: the response exceeds ``limits``.
        ValueError: ``choice`` is negative, or not 0 for a format with one message.
        TypeError: ``tool_names`` is not a mapping of ``str`` to ``str``, or ``tools`` not a
            list of ``ToolDefinition``.
    """
    codec = get_codec(provider)
    names = _checked_names(tool_names)
    defined: tuple[ToolDefinition, ...] = ()
    if tools != ():
        from threadline.codecs import _requests

        defined = _requests.read_tools(tools, None).tools
        names = {**_defined_names(defined, codec), **names}
    # A third-party codec may take neither ``choice`` nor ``model``: pass them only when set.
    extra: dict[str, Any] = {}
    if not (type(choice) is int and choice == 0):
        extra["choice"] = choice
    if model is not None:
        extra["model"] = model
    output = None
    if output_schema is not None:
        from threadline.codecs._structured import output_definition

        output = output_definition(output_schema)
    message = codec.decode_response(response, limits=limits, **extra)
    if output is not None:
        from threadline.codecs._structured import structured_reply

        message = structured_reply(message, provider, output)
    if names:
        from threadline.codecs._tool_names import rename_tools

        message = rename_tools([message], names)[0]
    if defined:
        message = _requests.drop_nulls(message, provider, defined)
    return message


def wire_tool_names(
    source: Iterable[Message | ToolDefinition | str], *, provider: str
) -> dict[str, str]:
    """``{wire name: stored name}`` for each tool name in ``source`` that ``provider``'s API
    refuses, and that ``encode`` therefore sends under another name.

    Pass it to ``decode`` / ``decode_response`` as ``tool_names=`` to get the stored names
    back. A wire name depends on the name alone (``files.read`` is ``files_read__`` and 10 hex
    digits of its SHA-256 for every request), so the mapping of a history's names also maps
    the names of the reply to it. Names the API takes are sent as they are and are left out.

    Args:
        source: the history that was encoded (the names of its tool calls and results are
            read), the tool definitions sent with it, tool names, or any mix of them: pass
            the history and the definitions together to get the request's own mapping.
        provider: a codec name.

    Raises:
        threadline.UnknownProviderError: no codec has that name.
        TypeError: an item of ``source`` is neither a [`Message`][threadline.Message], a
            [`ToolDefinition`][threadline.ToolDefinition] nor a ``str``.
    """
    from threadline.codecs._tool_names import ToolNameRule
    from threadline.codecs._tool_names import map_tool_names
    from threadline.codecs._tool_names import names_in

    codec = get_codec(provider)
    rule = getattr(codec, "TOOL_NAMES", None)
    names: dict[str, None] = {}
    for index, item in enumerate(source):
        if isinstance(item, str):
            names[item] = None
        elif isinstance(item, Message):
            names.update(dict.fromkeys(names_in([item])))
        elif _is_tool(item):
            names[item.name] = None
        else:
            raise TypeError(
                f"wire_tool_names: source[{index}] must be a Message, a ToolDefinition or a "
                "tool name (str), "
                f"not {type(item).__name__}"
            )
    if not isinstance(rule, ToolNameRule):
        return {}  # a codec of its own that maps no names
    return {wire: name for name, wire in map_tool_names(names, rule).items()}


def _is_tool(item: object) -> TypeGuard[ToolDefinition]:
    from threadline.tools import ToolDefinition

    return isinstance(item, ToolDefinition)


def _defined_names(tools: Iterable[ToolDefinition], codec: Codec) -> dict[str, str]:
    """``{wire name: stored name}`` for the names of ``tools`` (checked) that ``codec``'s API
    refuses."""
    from threadline.codecs import _requests

    return _requests.stored_names(_requests.read_tools(tools, None).tools, _name_rule(codec))


def _name_rule(codec: Codec) -> ToolNameRule | None:
    from threadline.codecs._tool_names import ToolNameRule

    rule = getattr(codec, "TOOL_NAMES", None)
    return rule if isinstance(rule, ToolNameRule) else None


def _checked_names(tool_names: Mapping[str, str] | None) -> dict[str, str]:
    if tool_names is None:
        return {}
    if not isinstance(tool_names, Mapping):
        raise TypeError(
            "tool_names must be a mapping {wire name: stored name} (see wire_tool_names), "
            f"not {type(tool_names).__name__}"
        )
    for wire, name in tool_names.items():
        if not isinstance(wire, str) or not isinstance(name, str):
            raise TypeError(
                f"tool_names maps wire names to stored names, both str; got {wire!r}: {name!r}"
            )
    return dict(tool_names)
