"""Request fields beside the history (private): tool definitions and tool choice per provider.

``threadline.encode(..., tools=, tool_choice=)`` adds these to the history fragment the codec
wrote, each in the provider's own place and shape, so that the body splats into the SDK call:

=================  ==========================================  ==============================
Format             tools                                       tool_choice
=================  ==========================================  ==============================
openai_chat        ``tools[].function``                        ``auto|none|required``, or
                                                               ``{type: function, function}``
mistral            ``tools[].function``                        ``auto|none|any``, or
                                                               ``{type: function, function}``
openai_responses   ``tools[]`` (``type: function``, flat)       ``auto|none|required``, or
                                                               ``{type: function, name}``
anthropic          ``tools[]`` (``input_schema``)              ``{type: auto|none|any|tool}``
gemini             ``tools[0].functionDeclarations``           ``toolConfig``
                                                               ``.functionCallingConfig``
bedrock            ``toolConfig.tools[].toolSpec``             ``toolConfig.toolChoice``
=================  ==========================================  ==============================

Tool names travel as their wire names (``_tool_names``): one mapping over the definitions'
names and the history's, so a definition, its calls and its results agree. Bedrock's Converse
refuses a history holding ``toolUse`` or ``toolResult`` blocks without a ``toolConfig``: with
no ``tools=`` given, the tools the history calls are declared, with a schema that takes any
object (the model may then call them again; pass ``tools=`` to say which it may call).

Each call returns a fresh tool list and fresh tool dicts, down to the adapted schemas: those
are built once per schema and dialect and shared by every body, read-only
(``threadline._shared_json``), so that an agent loop's turn does not copy 20 schemas.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

import pydantic_core

from threadline._sequences import read_messages
from threadline._shared_json import SharedDict
from threadline._shared_json import share
from threadline.codecs._formats import descriptor
from threadline.codecs._tool_names import ToolNameRule
from threadline.codecs._tool_names import map_tool_names
from threadline.codecs._tool_names import names_in
from threadline.codecs._tool_names import rename_tools
from threadline.errors import ErrorDetail
from threadline.errors import UnsupportedContentError
from threadline.errors import ValidationError
from threadline.messages import Message
from threadline.messages import ToolCallPart

if TYPE_CHECKING:
    from threadline._schemas import Dialect
    from threadline.tools import ToolDefinition

__all__ = ["ToolRequest", "drop_nulls", "prepare", "read_tools", "request_fields", "stored_names"]

CHOICES = ("auto", "none", "required")
"""The ``tool_choice`` values that are not a tool's name."""

ANY_OBJECT: dict[str, Any] = {"type": "object"}
"""The schema of a tool the history calls but ``tools=`` does not define (Bedrock only)."""


@dataclasses.dataclass(frozen=True)
class ToolRequest:
    """``encode``'s ``tools`` and ``tool_choice``, checked, with the wire names they need."""

    tools: tuple[ToolDefinition, ...]
    """The definitions, in the caller's order."""
    choice: str | None
    """``auto``, ``none``, ``required``, a tool's stored name, or ``None`` (not sent)."""
    wire: Mapping[str, str]
    """``{stored name: wire name}`` for every name the provider refuses."""
    called: Sequence[str] | None = None
    """The wire names of the tools the encoded history calls, each once, in order, when the
    codec gave them (Bedrock's does, for ``toolConfig``); ``None``: read from the body."""

    def wire_name(self, name: str) -> str:
        return self.wire.get(name, name)


def read_tools(tools: Iterable[ToolDefinition], tool_choice: str | None) -> ToolRequest:
    """``tools`` and ``tool_choice`` checked (no names mapped yet).

    Raises:
        TypeError: ``tools`` is not an iterable of ``ToolDefinition``, or ``tool_choice`` is
            neither ``None`` nor a ``str``.
        threadline.ValidationError: two definitions share a name, or ``tool_choice`` names no
            given tool (or is given without tools).
    """
    from threadline.tools import ToolDefinition

    if isinstance(tools, (ToolDefinition, str, bytes, Mapping)) or not isinstance(tools, Iterable):
        raise TypeError(
            "tools must be a list of threadline.ToolDefinition (tools=[tool]), "
            f"not {type(tools).__name__}"
        )
    checked = tuple(tools)
    seen: set[str] = set()
    for index, tool in enumerate(checked):
        if not isinstance(tool, ToolDefinition):
            raise TypeError(
                f"tools[{index}] must be a threadline.ToolDefinition (see tool_from_function), "
                f"not {type(tool).__name__}"
            )
        if tool.name in seen:
            raise _invalid(
                f"tools[{index}].name",
                f"{tool.name!r} names two tools; a model could not tell them apart",
                "duplicate_tool",
            )
        seen.add(tool.name)
    if tool_choice is not None and not isinstance(tool_choice, str):
        raise TypeError(
            f"tool_choice must be 'auto', 'none', 'required' or a tool's name, not "
            f"{type(tool_choice).__name__}"
        )
    if tool_choice is not None and not checked:
        raise _invalid(
            "tool_choice",
            f"{tool_choice!r} needs tools: pass tools=[...] with it, or leave tool_choice out",
            "tool_choice",
        )
    if tool_choice is not None and tool_choice not in CHOICES and tool_choice not in seen:
        names = ", ".join(repr(tool.name) for tool in checked)
        raise _invalid(
            "tool_choice",
            f"{tool_choice!r} is neither 'auto', 'none', 'required' nor the name of a given "
            f"tool ({names})",
            "tool_choice",
        )
    return ToolRequest(checked, tool_choice, {})


def prepare(
    messages: Iterable[Message], request: ToolRequest, rule: ToolNameRule | None
) -> tuple[Iterable[Message], ToolRequest]:
    """The history to encode and ``request`` with its wire names.

    The wire names are one mapping over the definitions' names and the history's. The codec
    maps the history's names by itself; only when adding the definitions' names changes the
    wire name of a history name (a minted name that equals a defined one) is the history
    renamed here first, so the codec then finds nothing to map.
    """
    if rule is None or not request.tools:
        return messages, request
    if _sent_as_they_are(tuple(tool.name for tool in request.tools), rule):
        # The definitions' names change no history name's wire name: the codec maps the
        # history by itself, and no scan of it is needed here.
        return messages, request
    source = read_messages(messages, "encode")
    history = names_in(source)
    own = map_tool_names(history, rule)  # what the codec maps by itself
    wire = map_tool_names([*history, *(tool.name for tool in request.tools)], rule)
    if any(wire.get(name) != own.get(name) for name in history):
        source = rename_tools(source, wire)
    return source, dataclasses.replace(request, wire=wire)


_MINTED = re.compile(r"__[0-9a-f]{10}")
"""The end of every wire name ``ToolNameRule.mint`` makes."""


@functools.lru_cache(maxsize=256)
def _sent_as_they_are(names: tuple[str, ...], rule: ToolNameRule) -> bool:
    """Whether ``rule`` takes each of ``names`` and none could be a minted wire name.

    Then adding ``names`` to the history's names changes no wire name: a minted name never
    equals one of them, so the mapping over the history alone is the mapping over both.
    """
    return all(rule.takes(name) and _MINTED.fullmatch(name[-12:]) is None for name in names)


def request_fields(provider: str, request: ToolRequest, body: Mapping[str, Any]) -> dict[str, Any]:
    """The fields ``provider``'s request takes for ``request``, beside ``body`` (the history
    fragment); empty when nothing is to be sent.

    Raises:
        threadline.UnsupportedContentError: the provider cannot express ``tool_choice``, or
            the format is a third party's, to which threadline cannot send tools.
    """
    described = descriptor(provider)
    if described is None:
        if request.tools:
            raise UnsupportedContentError(
                f"tools= cannot be sent to the codec {provider!r}: threadline writes tool "
                "definitions for its own formats only",
                provider=provider,
            )
        return {}
    build: Callable[[ToolRequest, Mapping[str, Any]], dict[str, Any]]
    build = described.request_fields.load()
    return build(request, body)


# -- Shared pieces --------------------------------------------------------------------------


def _invalid(path: str, problem: str, kind: str) -> ValidationError:
    detail = ErrorDetail(path, problem, kind)
    return ValidationError(f"encode: {detail}", [detail])


def _parameters(tool: ToolDefinition, dialect: Dialect) -> SharedDict:
    return _shared_schema(tool._text, dialect)


@functools.lru_cache(maxsize=1024)
def _shared_schema(text: str, dialect: Dialect) -> SharedDict:
    """The adapted schema of a schema's JSON ``text``, built once and shared, read-only, by
    every body that sends it (``threadline._shared_json``)."""
    from threadline._schemas import adapt_schema_text

    shared: SharedDict = share(pydantic_core.from_json(adapt_schema_text(text, dialect)))
    return shared


def _described(tool: ToolDefinition, fields: dict[str, Any], key: str = "description") -> None:
    if tool.description:
        fields[key] = tool.description


def _openai_function(tool: ToolDefinition, request: ToolRequest) -> dict[str, Any]:
    """The ``function`` object of OpenAI Chat and Mistral, and the flat Responses tool."""
    function: dict[str, Any] = {"name": request.wire_name(tool.name)}
    _described(tool, function)
    function["parameters"] = _parameters(tool, "openai_strict" if tool.strict else "standard")
    if tool.strict is not None:
        function["strict"] = tool.strict
    return function


def _refuse(provider: str, choice: str, why: str) -> UnsupportedContentError:
    return UnsupportedContentError(
        f"tool_choice={choice!r} cannot be sent to {provider}: {why}", provider=provider
    )


if TYPE_CHECKING:
    Builder = Callable[[ToolDefinition, ToolRequest], dict[str, Any]]
    """One tool in one provider's shape, with its wire name."""


def _listed(request: ToolRequest, build: Builder) -> list[dict[str, Any]]:
    """``build`` over ``request.tools``, built once per shape, definitions and wire names (an
    agent loop sends the same tools every turn).

    Each call returns a fresh list of fresh tool dicts, down to the schemas: those are shared
    by every call, read-only (``_shared_schema``). The lookup goes first by the definitions'
    identity (a definition is frozen, and the entry holds it, so its ``id`` is not reused),
    then by a key holding each definition's schema text as well: two equal definitions whose
    schemas list their keys in another order are sent each as written.
    """
    tools = request.tools
    if request.wire:
        kept = _kept(build, tuple((t, t._text, request.wire_name(t.name)) for t in tools))
    else:
        ids = (build, tuple(map(id, tools)))
        entry = _BY_IDENTITY.get(ids)
        if entry is None:
            entry = (tools, _kept(build, tuple((t, t._text, t.name) for t in tools)))
            if len(_BY_IDENTITY) >= _IDENTITY_ENTRIES:
                _BY_IDENTITY.clear()
            _BY_IDENTITY[ids] = entry
        kept = entry[1]
    return [_copied(tool, shape) for tool, shape in kept]


if TYPE_CHECKING:
    Shape = tuple[tuple[str, "Shape | None"], ...]
    """Where a built tool holds its own dicts (a nested ``Shape``) or lists of scalars
    (``None``): all else it holds is a scalar or a shared schema."""
    Kept = tuple[tuple[dict[str, Any], Shape], ...]

_IDENTITY_ENTRIES = 64
_BY_IDENTITY: dict[tuple[Builder, tuple[int, ...]], tuple[tuple[ToolDefinition, ...], Kept]] = {}
"""``_listed``'s first lookup: ``(builder, ids of the definitions)`` to the definitions (held,
so that no id is reused while its entry lives) and their built tools."""


def _copied(value: dict[str, Any], shape: Shape) -> dict[str, Any]:
    """A copy of ``value`` and of its own dicts and lists (``shape``), sharing the rest."""
    copy = value.copy()
    for key, inner in shape:
        copy[key] = list(value[key]) if inner is None else _copied(value[key], inner)
    return copy


def _shape(value: dict[str, Any]) -> Shape:
    """The ``Shape`` of a built tool: its plain dicts and lists (a shared schema is neither)."""
    return tuple(
        (key, None if type(item) is list else _shape(item))
        for key, item in value.items()
        if type(item) in (dict, list)
    )


@functools.lru_cache(maxsize=256)
def _kept(build: Builder, key: tuple[tuple[ToolDefinition, str, str], ...]) -> Kept:
    """The tools for ``key`` (definition, schema text, wire name), each with its ``Shape``;
    never given out as they are: ``_listed`` copies them down to the shared schemas."""
    tools = tuple(tool for tool, _, _ in key)
    request = ToolRequest(tools, None, {tool.name: wire for tool, _, wire in key})
    built = [build(tool, request) for tool in tools]
    return tuple((tool, _shape(tool)) for tool in built)


# -- One function per format ------------------------------------------------------------------


def openai_chat(request: ToolRequest, body: Mapping[str, Any]) -> dict[str, Any]:
    """``tools`` + ``tool_choice`` of Chat Completions."""
    return _chat_like(request, required="required")


def mistral(request: ToolRequest, body: Mapping[str, Any]) -> dict[str, Any]:
    """``tools`` + ``tool_choice`` of Mistral chat (``any`` for ``required``)."""
    return _chat_like(request, required="any")


def _chat_like(request: ToolRequest, *, required: str) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if request.tools:
        fields["tools"] = _listed(request, _chat_tool)
    choice = request.choice
    if choice in ("auto", "none"):
        fields["tool_choice"] = choice
    elif choice == "required":
        fields["tool_choice"] = required
    elif choice is not None:
        fields["tool_choice"] = {
            "type": "function",
            "function": {"name": request.wire_name(choice)},
        }
    return fields


def _chat_tool(tool: ToolDefinition, request: ToolRequest) -> dict[str, Any]:
    return {"type": "function", "function": _openai_function(tool, request)}


def ollama(request: ToolRequest, body: Mapping[str, Any]) -> dict[str, Any]:
    """``tools`` of Ollama ``/api/chat``: it has no ``tool_choice``, so only ``auto`` (what it
    does with tools) can be asked for."""
    fields: dict[str, Any] = {}
    if request.tools:
        fields["tools"] = _listed(request, _ollama_tool)
    choice = request.choice
    if choice is not None and choice != "auto":
        raise _refuse(
            "ollama",
            choice,
            "Ollama's /api/chat has no tool_choice (the model decides, as with 'auto'); pass "
            "only the tools it may call, or leave tool_choice out",
        )
    return fields


def _ollama_tool(tool: ToolDefinition, request: ToolRequest) -> dict[str, Any]:
    function: dict[str, Any] = {"name": request.wire_name(tool.name)}
    _described(tool, function)
    function["parameters"] = _parameters(tool, "standard")
    return {"type": "function", "function": function}


def openai_responses(request: ToolRequest, body: Mapping[str, Any]) -> dict[str, Any]:
    """``tools`` + ``tool_choice`` of the Responses API.

    A function tool's ``strict`` defaults to ``true`` there, which refuses most schemas: a
    definition that leaves ``strict`` to the provider is sent with ``strict: false``.
    """
    fields: dict[str, Any] = {}
    if request.tools:
        fields["tools"] = _listed(request, _responses_tool)
    choice = request.choice
    if choice in CHOICES:
        fields["tool_choice"] = choice
    elif choice is not None:
        fields["tool_choice"] = {"type": "function", "name": request.wire_name(choice)}
    return fields


def _responses_tool(tool: ToolDefinition, request: ToolRequest) -> dict[str, Any]:
    function = _openai_function(tool, request)
    function.setdefault("strict", False)
    return {"type": "function", **function}


def anthropic(request: ToolRequest, body: Mapping[str, Any]) -> dict[str, Any]:
    """``tools`` + ``tool_choice`` of the Messages API (``required`` is ``{"type": "any"}``)."""
    fields: dict[str, Any] = {}
    if request.tools:
        fields["tools"] = _listed(request, _anthropic_tool)
    choice = request.choice
    if choice in ("auto", "none"):
        fields["tool_choice"] = {"type": choice}
    elif choice == "required":
        fields["tool_choice"] = {"type": "any"}
    elif choice is not None:
        fields["tool_choice"] = {"type": "tool", "name": request.wire_name(choice)}
    return fields


def _anthropic_tool(tool: ToolDefinition, request: ToolRequest) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": request.wire_name(tool.name)}
    _described(tool, spec)
    spec["input_schema"] = _parameters(tool, "standard")
    return spec


_GEMINI_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}


def gemini(request: ToolRequest, body: Mapping[str, Any]) -> dict[str, Any]:
    """``tools[].functionDeclarations`` + ``toolConfig.functionCallingConfig``.

    A tool without arguments is declared without ``parameters``: Gemini refuses an object
    schema with no properties. A schema the OpenAPI subset cannot express as it is goes in
    ``parametersJsonSchema`` instead.

    Raises:
        threadline.UnsupportedContentError: a schema uses what Gemini refuses even as JSON
            Schema (named with the keyword and the fix).
    """
    fields: dict[str, Any] = {}
    if request.tools:
        fields["tools"] = [{"functionDeclarations": _listed(request, _gemini_tool)}]
    choice = request.choice
    if choice in _GEMINI_MODES:
        fields["toolConfig"] = {"functionCallingConfig": {"mode": _GEMINI_MODES[choice]}}
    elif choice is not None:
        fields["toolConfig"] = {
            "functionCallingConfig": {
                "mode": "ANY",
                "allowedFunctionNames": [request.wire_name(choice)],
            }
        }
    return fields


def _gemini_tool(tool: ToolDefinition, request: ToolRequest) -> dict[str, Any]:
    """A declaration with ``parameters`` (the OpenAPI subset) when the subset expresses the
    schema as it is, else ``parametersJsonSchema`` (``threadline._schemas_gemini``)."""
    from threadline._schemas_gemini import gemini_takes_subset_text

    declaration: dict[str, Any] = {"name": request.wire_name(tool.name)}
    _described(tool, declaration)
    if not gemini_takes_subset_text(tool._text):
        declaration["parametersJsonSchema"] = _parameters(tool, "gemini_json")
    elif tool.parameters.get("properties"):
        declaration["parameters"] = _parameters(tool, "gemini")
    return declaration


def bedrock(request: ToolRequest, body: Mapping[str, Any]) -> dict[str, Any]:
    """``toolConfig``: the tools and ``toolChoice``; present too, declaring the tools the
    history calls, when the history holds tool blocks and no tools were given (Converse
    requires it then).

    Raises:
        threadline.UnsupportedContentError: ``tool_choice="none"``: Converse has no such
            choice (leave the tools out instead).
    """
    specs = _listed(request, _bedrock_tool) if request.tools else []
    if not specs:
        called = request.called
        specs = bedrock_declared(_bedrock_history_tools(body) if called is None else called)
    choice = request.choice
    if choice == "none":
        raise _refuse(
            "bedrock",
            choice,
            "Converse's toolChoice is auto, any or one tool; to have no tool called, send "
            "no tools (a history holding tool calls still declares them)",
        )
    if not specs:
        return {}
    config: dict[str, Any] = {"tools": specs}
    if choice == "auto":
        config["toolChoice"] = {"auto": {}}
    elif choice == "required":
        config["toolChoice"] = {"any": {}}
    elif choice is not None:
        config["toolChoice"] = {"tool": {"name": request.wire_name(choice)}}
    return {"toolConfig": config}


def bedrock_declared(names: Iterable[str]) -> list[dict[str, Any]]:
    """``toolConfig.tools`` declaring the tools ``names`` (wire names) with any input: what
    Converse needs for a history that calls tools when no definitions were given."""
    return [
        {"toolSpec": {"name": name, "inputSchema": {"json": dict(ANY_OBJECT)}}} for name in names
    ]


def _bedrock_tool(tool: ToolDefinition, request: ToolRequest) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": request.wire_name(tool.name)}
    _described(tool, spec)
    spec["inputSchema"] = {"json": _parameters(tool, "inline")}
    return {"toolSpec": spec}


def _bedrock_history_tools(body: Mapping[str, Any]) -> list[str]:
    """The names the history's ``toolUse`` blocks call, each once (empty without tool
    blocks; a history of orphaned results alone, sent with ``integrity="off"``, names
    none)."""
    names: dict[str, None] = {}
    for message in body.get("messages") or ():
        if message.get("role") != "assistant":  # only the assistant's turns call tools
            continue
        for block in message.get("content") or ():
            if "toolUse" in block:
                names[block["toolUse"]["name"]] = None
    return list(names)


# -- Reading a response back ------------------------------------------------------------------


def stored_names(tools: Sequence[ToolDefinition], rule: ToolNameRule | None) -> dict[str, str]:
    """``{wire name: stored name}`` for the definitions' names ``rule`` refuses."""
    if rule is None:
        return {}
    return {wire: name for name, wire in map_tool_names([t.name for t in tools], rule).items()}


def drop_nulls(message: Message, provider: str, tools: Sequence[ToolDefinition]) -> Message:
    """``message`` (a decoded response, stored names back) without the ``null`` s strict
    mode added to the arguments of calls to strict tools."""
    strict = {tool.name: tool.parameters for tool in tools if tool.strict}
    described = descriptor(provider)
    if described is None or not described.strict or not strict:
        return message
    from threadline.tools import drop_strict_nulls

    parts = tuple(
        dataclasses.replace(part, arguments=drop_strict_nulls(part.arguments, strict[part.name]))
        if isinstance(part, ToolCallPart) and part.name in strict
        else part
        for part in message.parts
    )
    return message.model_copy(update={"parts": parts}) if parts != message.parts else message
