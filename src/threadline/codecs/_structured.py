"""Structured output: a reply in the shape of a JSON Schema, asked of each provider in its own
way (private; ``encode(output_schema=...)`` and ``decode_response(output_schema=...)``).

The schema is held as a [`ToolDefinition`][threadline.ToolDefinition] (a name, a description,
the schema as ``parameters``, ``strict``), whatever it was given as, and sent:

- ``openai_chat`` and ``mistral``: ``response_format: {"type": "json_schema", "json_schema":
  {name, description?, schema, strict}}``;
- ``openai_responses``: ``text: {"format": {"type": "json_schema", name, description?, schema,
  strict}}``;
- ``gemini``: ``generationConfig: {"responseMimeType": "application/json", "responseSchema":
  ...}`` in the ``gemini`` dialect (the OpenAPI subset every Gemini model takes, as for
  function declarations), or ``"responseJsonSchema"`` in the ``gemini_json`` dialect for a
  schema the subset cannot express as it is (a dict, an integer enum, a recursive model);
- ``anthropic`` and ``bedrock``: a *forced tool*: a tool whose input schema is the schema,
  with ``tool_choice`` (Bedrock ``toolConfig.toolChoice``) making the model call it. It works
  with every model that calls tools, takes the schema without a subset, and composes with the
  request's own tools. Both refuse a forced tool while thinking is on ("Thinking may not be
  enabled when tool_choice forces tool use."), and forcing changes the tool choice: so when
  the history holds thinking, or the caller gave ``tool_choice="auto"``, the schema goes in the
  *native* field instead (Anthropic ``output_config.format``, Bedrock
  ``outputConfig.textFormat``; in the ``openai_strict`` dialect, as both take a strict subset)
  and the tool choice is sent as given. A model known to lack the native field (Claude 3.x,
  Sonnet 4 and Opus 4) is refused with a [`CodecError`][threadline.CodecError] naming the
  conflict and the fix; an unknown model, or ``model=None``, gets the native field.

OpenAI and Mistral use strict mode unless the definition says ``strict=False``: the schema
goes in the ``openai_strict`` dialect, and the reply's ``null`` s that stand for keys the
schema left optional are dropped when it is decoded.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeAlias

import pydantic_core

from threadline.codecs._formats import descriptor
from threadline.errors import CodecError
from threadline.errors import ErrorDetail
from threadline.errors import UnsupportedContentError
from threadline.errors import ValidationError
from threadline.messages import Message
from threadline.messages import TextPart
from threadline.messages import ToolCallPart

if TYPE_CHECKING:
    import pydantic

    from threadline.tools import ToolDefinition

OutputSchema: TypeAlias = "Mapping[str, Any] | type[pydantic.BaseModel] | ToolDefinition"
"""What ``output_schema=`` takes: a JSON Schema object, a pydantic model class, or a
[`ToolDefinition`][threadline.ToolDefinition] (to choose the name, description and strictness)."""

DEFAULT_NAME = "final_answer"
"""The name a schema given as a dict is sent under (OpenAI's ``json_schema.name``, the forced
tool's name)."""

_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""A name every provider takes: OpenAI's ``json_schema.name`` rule, which fits tool names too."""


def _invalid(path: str, problem: str) -> ValidationError:
    detail = ErrorDetail(path, problem, "output_schema")
    return ValidationError(f"{path}: {problem}", [detail])


def output_definition(output_schema: Any) -> ToolDefinition:
    """``output_schema`` as a [`ToolDefinition`][threadline.ToolDefinition].

    Raises:
        threadline.ValidationError: the schema is not an object schema, or its name is not
            one every provider takes.
        TypeError: ``output_schema`` is none of the three things it may be.
    """
    from threadline.tools import ToolDefinition
    from threadline.tools import tool_from_model

    if isinstance(output_schema, ToolDefinition):
        definition = output_schema
    elif isinstance(output_schema, Mapping):
        try:
            definition = ToolDefinition(
                DEFAULT_NAME, str(output_schema.get("description") or ""), output_schema
            )
        except ValidationError as error:
            raise _invalid(
                "output_schema",
                f"must be a JSON Schema object ({{'type': 'object', 'properties': ...}}): {error}",
            ) from None
    elif isinstance(output_schema, type) and hasattr(output_schema, "model_json_schema"):
        definition = tool_from_model(output_schema)
    else:
        raise TypeError(
            "output_schema takes a JSON Schema dict, a pydantic model class or a "
            f"ToolDefinition, not {type(output_schema).__name__}"
        )
    if _NAME.fullmatch(definition.name) is None:
        raise _invalid(
            "output_schema.name",
            f"{definition.name!r} is not a name every provider takes ([a-zA-Z0-9_-], 1 to 64 "
            "characters); pass ToolDefinition(name='...', parameters=schema) as output_schema",
        )
    return definition


def is_strict(definition: ToolDefinition) -> bool:
    """Whether OpenAI / Mistral get the schema in strict mode: unless it says ``False``."""
    return definition.strict is not False


def with_output_schema(
    payload: dict[str, Any],
    provider: str,
    definition: ToolDefinition,
    *,
    model: str | None = None,
    tool_choice: str | None = None,
) -> dict[str, Any]:
    """``payload`` with ``provider``'s fields asking for a reply shaped by ``definition``.

    ``model`` and ``tool_choice`` are ``encode``'s: for Anthropic and Bedrock they choose
    between the forced tool and the native field (see the module's docstring).

    Raises:
        threadline.ValidationError: the schema cannot be adapted to the provider (strict mode,
            recursion where ``$ref`` is inlined), or the forced tool cannot join the request's
            tools (a tool of the same name; ``tool_choice`` ``none``).
        threadline.CodecError: Anthropic or Bedrock would need the native field (thinking in
            the history, or ``tool_choice="auto"``) and ``model`` is known to lack it.
        threadline.UnsupportedContentError: the format has no structured output.
    """
    out = dict(payload)
    described = descriptor(provider)
    forced = None if described is None or described.forced_tool is None else described.forced_tool
    if forced is not None:
        native: NativeOutput = forced.load()
        if _native(out, native, model, tool_choice):
            _native_output(out, provider, native, definition)
            return out
    if described is None or described.output_schema is None:
        raise UnsupportedContentError(
            f"output_schema: the codec {provider!r} has no structured output; ask for JSON in "
            "the prompt and validate the reply yourself",
            provider=provider,
        )
    write: Callable[[dict[str, Any], ToolDefinition], None] = described.output_schema.load()
    write(out, definition)
    return out


# -- Each format's field (its descriptor's ``output_schema``) ----------------------------------


def _strict_spec(definition: ToolDefinition) -> dict[str, Any]:
    from threadline.tools import adapted_parameters

    strict = is_strict(definition)
    schema = adapted_parameters(definition, "openai_strict" if strict else "standard")
    spec: dict[str, Any] = {"name": definition.name}
    if definition.description:
        spec["description"] = definition.description
    spec["schema"] = schema
    spec["strict"] = strict
    return spec


def chat_output(out: dict[str, Any], definition: ToolDefinition) -> None:
    """OpenAI Chat and Mistral: ``response_format``."""
    out["response_format"] = {"type": "json_schema", "json_schema": _strict_spec(definition)}


def responses_output(out: dict[str, Any], definition: ToolDefinition) -> None:
    """OpenAI Responses: ``text.format``."""
    spec = _strict_spec(definition)
    out["text"] = {**dict(out.get("text") or {}), "format": {"type": "json_schema", **spec}}


def gemini_output(out: dict[str, Any], definition: ToolDefinition) -> None:
    """Gemini: ``generationConfig`` (``responseMimeType`` and the schema)."""
    config = dict(out.get("generationConfig") or {})
    config["responseMimeType"] = "application/json"
    config.update(_gemini_schema(definition))
    out["generationConfig"] = config


def _gemini_schema(definition: ToolDefinition) -> dict[str, Any]:
    """``responseSchema`` (the OpenAPI subset) when it expresses the schema as it is, else
    ``responseJsonSchema``: the two are mutually exclusive (``threadline._schemas_gemini``)."""
    from threadline._schemas_gemini import gemini_takes_subset_text
    from threadline.tools import adapted_parameters

    if gemini_takes_subset_text(definition._text):
        return {"responseSchema": adapted_parameters(definition, "gemini")}
    return {"responseJsonSchema": adapted_parameters(definition, "gemini_json")}


def ollama_output(out: dict[str, Any], definition: ToolDefinition) -> None:
    """Ollama ``/api/chat``: ``format``, the JSON Schema itself."""
    from threadline.tools import adapted_parameters

    out["format"] = adapted_parameters(definition, "standard")


def _refuse_name_clash(names: list[Any], definition: ToolDefinition) -> None:
    if definition.name in names:
        raise _invalid(
            "output_schema.name",
            f"the request already has a tool named {definition.name!r}; give the output "
            "another name: output_schema=ToolDefinition(name='...', parameters=schema)",
        )


def _refuse_none() -> ValidationError:
    return _invalid(
        "tool_choice",
        "is 'none', but structured output on this provider is a tool the model must call; "
        "leave tool_choice at its default (or 'required') when passing output_schema",
    )


def anthropic_output(out: dict[str, Any], definition: ToolDefinition) -> None:
    """The forced tool joins the request's tools. With no ``tool_choice`` given (a given
    ``auto`` goes to the native field instead) and no other tool, ``tool_choice`` names it;
    with others, it is ``any`` (the model calls tools, and answers by calling this one);
    ``any`` or a named tool chosen by the caller stay."""
    from threadline.tools import adapted_parameters

    tools = list(out.get("tools") or [])
    _refuse_name_clash([tool.get("name") for tool in tools], definition)
    tool: dict[str, Any] = {"name": definition.name}
    if definition.description:
        tool["description"] = definition.description
    tool["input_schema"] = adapted_parameters(definition, "standard")
    tools.append(tool)
    choice = dict(out.get("tool_choice") or {"type": "auto"})
    if choice.get("type") == "none":
        raise _refuse_none()
    if choice.get("type") == "auto":
        kept = {k: v for k, v in choice.items() if k == "disable_parallel_tool_use"}
        forced = {"type": "tool", "name": definition.name} if len(tools) == 1 else {"type": "any"}
        choice = {**forced, **kept}
    out["tools"] = tools
    out["tool_choice"] = choice


def bedrock_output(out: dict[str, Any], definition: ToolDefinition) -> None:
    """As for Anthropic, in ``toolConfig`` (which has no ``none``)."""
    from threadline.tools import adapted_parameters

    config = dict(out.get("toolConfig") or {})
    tools = list(config.get("tools") or [])
    _refuse_name_clash(
        [tool.get("toolSpec", {}).get("name") for tool in tools if isinstance(tool, Mapping)],
        definition,
    )
    spec: dict[str, Any] = {"name": definition.name}
    if definition.description:
        spec["description"] = definition.description
    spec["inputSchema"] = {"json": adapted_parameters(definition, "inline")}
    tools.append({"toolSpec": spec})
    choice = config.get("toolChoice")
    if choice is None or "auto" in choice:
        others = sum(1 for tool in tools if "toolSpec" in tool) > 1
        choice = {"any": {}} if others else {"tool": {"name": definition.name}}
    config["tools"] = tools
    config["toolChoice"] = choice
    out["toolConfig"] = config


# -- The native field (Anthropic, Bedrock) ----------------------------------------------------

_NO_NATIVE_OUTPUT = re.compile(
    r"claude-(?:instant|v\d|[123](?:\D|$)|4-(?:opus|sonnet)"
    r"|(?:opus|sonnet)-4(?:-0|[-@]\d{8}|-latest)?(?:-v\d+(?::\d+)?)?$)"
)
"""The Claude models known to have no native structured output: Claude 1, 2, Instant, the 3.x
family, and Sonnet 4 and Opus 4 (its ``-0`` alias and ``20250514`` snapshots, their Bedrock ids).
Sonnet 4.5, Haiku 4.5, Opus 4.5 and later take it; a model not listed is given it."""
THINKING_REFUSAL = "Thinking may not be enabled when tool_choice forces tool use."
"""What both APIs answer a forced tool choice while thinking is on."""


def lacks_native_output(model: str | None) -> bool:
    """Whether ``model`` is known to have no native structured output (``None``: not known)."""
    if model is None:
        return False
    from threadline.codecs._policies import model_id

    name = model_id(model)
    name = name.removeprefix("anthropic.")
    return _NO_NATIVE_OUTPUT.match(name) is not None


@dataclasses.dataclass(frozen=True)
class NativeOutput:
    """A forced-tool format's native structured output (its descriptor's ``forced_tool``):
    where it goes, and how its body shows thinking and a ``tool_choice`` of ``auto``."""

    name: str
    """The API, in errors (``"Anthropic"``)."""
    field: str
    """The native field, in errors (``"output_config.format"``)."""
    is_thinking: Callable[[Mapping[str, Any]], bool]
    """Whether a content block of a message is thinking."""
    gave_auto: Callable[[Mapping[str, Any]], bool]
    """Whether the body's own tool choice is ``auto``."""
    write: Callable[[dict[str, Any], ToolDefinition, dict[str, Any]], None]
    """Puts the adapted schema in the body's native field."""


def _anthropic_native(out: dict[str, Any], definition: ToolDefinition, schema: Any) -> None:
    config = dict(out.get("output_config") or {})
    config["format"] = {"type": "json_schema", "schema": schema}
    out["output_config"] = config


def _bedrock_native(out: dict[str, Any], definition: ToolDefinition, schema: Any) -> None:
    spec: dict[str, Any] = {
        "schema": json.dumps(schema, ensure_ascii=False),
        "name": definition.name,
    }
    if definition.description:
        spec["description"] = definition.description
    config = dict(out.get("outputConfig") or {})
    config["textFormat"] = {"type": "json_schema", "structure": {"jsonSchema": spec}}
    out["outputConfig"] = config


ANTHROPIC_NATIVE = NativeOutput(
    name="Anthropic",
    field="output_config.format",
    is_thinking=lambda block: block.get("type") in ("thinking", "redacted_thinking"),
    gave_auto=lambda payload: dict(payload.get("tool_choice") or {}).get("type") == "auto",
    write=_anthropic_native,
)
BEDROCK_NATIVE = NativeOutput(
    name="Bedrock",
    field="outputConfig.textFormat",
    is_thinking=lambda block: "reasoningContent" in block,
    gave_auto=lambda payload: (
        "auto" in dict(dict(payload.get("toolConfig") or {}).get("toolChoice") or {})
    ),
    write=_bedrock_native,
)


def _holds_thinking(payload: Mapping[str, Any], native: NativeOutput) -> bool:
    for message in payload.get("messages") or ():
        content = message.get("content") if isinstance(message, Mapping) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, Mapping) and native.is_thinking(block):
                return True
    return False


def _gave_auto(payload: Mapping[str, Any], native: NativeOutput, tool_choice: str | None) -> bool:
    if tool_choice is not None:
        return tool_choice == "auto"
    return native.gave_auto(payload)


def _native(
    payload: Mapping[str, Any], native: NativeOutput, model: str | None, tool_choice: str | None
) -> bool:
    """Whether the schema goes in the native field rather than a forced tool.

    Raises:
        threadline.CodecError: it must, and ``model`` is known to lack the field.
    """
    thinking = _holds_thinking(payload, native)
    auto = _gave_auto(payload, native, tool_choice)
    if not (thinking or auto):
        return False
    if not lacks_native_output(model):
        return True
    field, name = native.field, native.name
    if thinking:
        raise CodecError(
            f"output_schema: the history holds thinking, and {name} refuses a forced tool "
            f"while thinking is on ({THINKING_REFUSAL!r}), but {model!r} has no native "
            f"structured output ({field}) to ask for the reply instead; encode with "
            "reasoning='drop' and send the request without thinking, use a model that has it "
            "(Claude Sonnet 4.5, Haiku 4.5, Opus 4.5 or later), or leave output_schema out "
            "and ask for JSON in the prompt"
        )
    raise CodecError(
        f"output_schema with tool_choice='auto': on {name} structured output is a tool the "
        f"model must call, which would change the tool_choice you gave, or the native field "
        f"({field}), which {model!r} does not have; leave tool_choice out (None) to let encode "
        "force the output tool, or pass tool_choice='required'"
    )


def _native_output(
    out: dict[str, Any], provider: str, native: NativeOutput, definition: ToolDefinition
) -> None:
    """The schema in the native field: Anthropic ``output_config.format``, Bedrock
    ``outputConfig.textFormat`` (whose schema is JSON text)."""
    from threadline.tools import adapted_parameters

    try:
        schema = adapted_parameters(
            definition, "openai_strict" if is_strict(definition) else "standard"
        )
    except ValidationError as error:
        raise _invalid(
            "output_schema",
            f"{provider}'s native structured output ({native.field}, used with thinking "
            f"or tool_choice='auto') takes a strict subset of JSON Schema: {error}",
        ) from None
    native.write(out, definition, schema)


# -- Reading the reply ------------------------------------------------------------------------


def structured_reply(message: Message, provider: str, definition: ToolDefinition) -> Message:
    """The decoded reply with its structured output as text.

    For a forced-tool format, each call of the output tool becomes a text part holding its
    arguments as JSON (so the history holds no call waiting for a result); other calls stay.
    For a strict format (and a forced-tool format's native reply, a text), the ``null`` s
    standing for keys the schema left optional are dropped from the JSON text. A reply that
    is not JSON (a refusal, a cut-off reply) is left as it is.
    """
    described = descriptor(provider)
    forced = described is not None and described.forced_tool is not None
    if forced:
        called = any(
            isinstance(part, ToolCallPart) and part.name == definition.name
            for part in message.parts
        )
        if called:
            return _calls_as_text(message, definition.name)
    strict = described is not None and described.strict
    if (strict or forced) and is_strict(definition):
        return _without_strict_nulls(message, definition)
    return message


def _calls_as_text(message: Message, name: str) -> Message:
    from threadline.codecs._tools import arguments_json

    if not any(isinstance(part, ToolCallPart) and part.name == name for part in message.parts):
        return message
    parts = [
        TextPart(text=arguments_json(part), metadata=part.metadata)
        if isinstance(part, ToolCallPart) and part.name == name
        else part
        for part in message.parts
    ]
    return message.model_copy(update={"parts": tuple(parts)})


def _without_strict_nulls(message: Message, definition: ToolDefinition) -> Message:
    from threadline.tools import drop_strict_nulls

    texts = [index for index, part in enumerate(message.parts) if isinstance(part, TextPart)]
    if len(texts) != 1:
        return message
    part = message.parts[texts[0]]
    assert isinstance(part, TextPart)
    try:  # bounded: pydantic_core refuses nesting deeper than it can read
        value = pydantic_core.from_json(part.text)
    except ValueError:
        return message
    cleaned = drop_strict_nulls(value, definition.parameters)
    if cleaned == value:
        return message
    text = json.dumps(cleaned, ensure_ascii=False, separators=(",", ":"))
    parts = list(message.parts)
    parts[texts[0]] = TextPart(text=text, metadata=part.metadata)
    return message.model_copy(update={"parts": tuple(parts)})
