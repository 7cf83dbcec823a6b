"""Tool definitions: what a model may call, written once and sent to any provider.

[`ToolDefinition`][threadline.ToolDefinition] holds a tool's name, description and the JSON
Schema of its arguments; [`tool_from_function`][threadline.tool_from_function] builds one from
a typed Python function (through pydantic, each parameter's description read from the
docstring) and [`tool_from_model`][threadline.tool_from_model] from a pydantic model. The
schema is written as standard JSON Schema; the codecs adapt it to each provider, and
[`adapted_parameters`][threadline.tools.adapted_parameters] is how they ask for it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from pydantic_core import PydanticCustomError

from threadline._bounded_json import Limits
from threadline._bounded_json import walk
from threadline._docstrings import parse_docstring
from threadline._json import EMPTY
from threadline._json import FrozenJsonMap
from threadline._json import check_json_value
from threadline._json import lone_surrogate
from threadline._json import not_unicode
from threadline._schemas import Dialect
from threadline._schemas import adapt_schema_text
from threadline._schemas import drop_strict_nulls
from threadline._schemas import schema_text
from threadline.errors import ErrorDetail
from threadline.errors import ValidationError

if typing.TYPE_CHECKING:
    import pydantic

__all__ = [
    "Dialect",
    "ToolDefinition",
    "adapted_parameters",
    "drop_strict_nulls",
    "tool_from_function",
    "tool_from_model",
]

_LIMITS = Limits.untrusted()
"""Tool schemas may come from elsewhere (an MCP server): they are read as untrusted JSON."""


def _no_parameters() -> FrozenJsonMap:
    return FrozenJsonMap({"type": "object", "properties": EMPTY})


@dataclasses.dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool a model can call, in no provider's format: the codecs send it to each one.

    Frozen; ``parameters`` and ``metadata`` are read-only JSON. Compare with ``==``. Calling
    the definition calls its ``function`` with the model's arguments as keywords.

    Raises:
        threadline.ValidationError: a field is not what it should be (``parameters`` not a
            JSON Schema object, ``metadata`` not JSON, ``strict=True`` with a schema strict
            mode cannot express, a string anywhere in it that is not Unicode text: a lone
            surrogate such as ``"\\ud800"``); the error names the field and the fix.
        threadline.LimitExceededError: ``parameters`` is larger or deeper than
            ``Limits.untrusted()`` allows.
    """

    name: str
    """The tool's name, as the model calls it. Names a provider refuses are mapped at the wire
    (and back), never changed here."""
    description: str = ""
    """What the tool does and when to use it, for the model."""
    parameters: Mapping[str, Any] = dataclasses.field(default_factory=_no_parameters, hash=False)
    """The JSON Schema of the arguments: an object schema (``{"type": "object", ...}``) whose
    properties are the arguments. Standard JSON Schema (``$defs``/``$ref`` allowed); each
    codec adapts it to what its provider takes."""
    strict: bool | None = None
    """Whether the provider should guarantee arguments valid under ``parameters`` (OpenAI's
    strict mode): ``None`` leaves it to the provider. With ``True`` every key is sent, ``null``
    for an optional one, and decoding drops those ``null`` s again (see the tools docs)."""
    metadata: Mapping[str, Any] = dataclasses.field(default=EMPTY, hash=False)
    """Read-only JSON for the application; never sent to a provider."""
    function: Callable[..., Any] | None = dataclasses.field(default=None, kw_only=True, repr=False)
    """What runs the tool, called with the model's arguments as keyword arguments (as JSON
    values: wrap it in ``pydantic.validate_call`` to have them converted;
    [`run_tool_calls`][threadline.run_tool_calls] converts them through its signature). Never
    sent."""
    retry_safe: bool = dataclasses.field(default=False, kw_only=True)
    """Whether the tool is safe to run again after a crash (a read, an idempotent write): the
    resume recipe ``run_tool_calls(pending_calls(history), tools, retry_safe_only=True)`` runs
    only such tools. Never sent."""
    _text: str = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise _invalid("name", f"must be a non-empty str, not {self.name!r}", "tool_name")
        if not isinstance(self.description, str):
            raise _invalid(
                "description", f"must be a str, not {type(self.description).__name__}", "type"
            )
        for field in ("name", "description"):
            _refuse_not_unicode(field, getattr(self, field))
        if self.strict is not None and not isinstance(self.strict, bool):
            raise _invalid("strict", f"must be True, False or None, not {self.strict!r}", "type")
        if self.function is not None and not callable(self.function):
            raise _invalid("function", "must be callable or None", "type")
        if not isinstance(self.retry_safe, bool):
            raise _invalid("retry_safe", f"must be True or False, not {self.retry_safe!r}", "type")
        object.__setattr__(self, "metadata", _json_map(self.metadata, "metadata"))
        parameters = _checked_parameters(self.parameters)
        object.__setattr__(self, "parameters", parameters)
        object.__setattr__(self, "_text", schema_text(parameters))
        if self.strict:
            adapt_schema_text(self._text, "openai_strict")  # refuse now what encode would refuse

    def __call__(self, **arguments: Any) -> Any:
        """Run the tool: ``function(**arguments)``.

        Raises:
            TypeError: the definition has no ``function``.
        """
        if self.function is None:
            raise TypeError(
                f"tool {self.name!r} has no function to run; build it with "
                "tool_from_function(...) or pass function=... to ToolDefinition"
            )
        return self.function(**arguments)


def adapted_parameters(tool: ToolDefinition, dialect: Dialect) -> dict[str, Any]:
    """``tool.parameters`` as ``dialect`` needs it: a fresh dict, computed once per schema.

    For the codecs. The dialects: ``"standard"`` (unchanged), ``"inline"`` (``$ref`` inlined),
    ``"gemini"`` (inlined, cut to Gemini's schema subset) and ``"openai_strict"`` (OpenAI's
    strict mode); the docs page "Tools and requests" says what each one changes.

    Raises:
        threadline.ValidationError: the schema cannot be adapted (a recursive schema for a
            provider without ``$ref``; an open object under strict mode), naming the path.
    """
    import pydantic_core

    result: dict[str, Any] = pydantic_core.from_json(adapt_schema_text(tool._text, dialect))
    return result


def _invalid(field: str, problem: str, kind: str) -> ValidationError:
    detail = ErrorDetail(field, problem, kind)
    return ValidationError(f"invalid ToolDefinition: {detail}", [detail])


def _refuse_not_unicode(field: str, text: str) -> None:
    # A lone surrogate ("\ud800") would pass here and fail only when the HTTP client encodes
    # the request body: refused now, with the words every other field uses.
    index = lone_surrogate(text)
    if index is not None:
        raise _invalid(field, not_unicode(f"the {field}", text, index), "string_unicode")


def _json_map(value: Any, field: str) -> FrozenJsonMap:
    if not isinstance(value, Mapping):
        raise _invalid(field, f"must be a mapping, not {type(value).__name__}", "type")
    try:
        frozen: FrozenJsonMap = _frozen(check_json_value(value, field))
    except PydanticCustomError as error:
        raise _invalid(field, error.message(), error.type) from None
    return frozen


def _frozen(value: Any) -> Any:
    """Every mapping in ``value`` (a JSON value checked, so at most 190 deep) made read-only."""
    if isinstance(value, dict):
        return FrozenJsonMap({key: _frozen(item) for key, item in value.items()})
    if isinstance(value, list):
        return [_frozen(item) for item in value]
    return value


def _checked_parameters(value: Any) -> FrozenJsonMap:
    if not isinstance(value, Mapping):
        raise _invalid(
            "parameters",
            f"must be a JSON Schema object (a mapping), not {type(value).__name__}",
            "type",
        )
    walk(value, _LIMITS, "ToolDefinition", "parameters", 1, estimate_size=True, check_strings=True)
    schema = _json_map(value, "parameters")
    if schema.get("type") != "object":
        raise _invalid(
            "parameters.type",
            f"must be 'object' (tools take named arguments), not {schema.get('type')!r}; "
            "for example {'type': 'object', 'properties': {'city': {'type': 'string'}}}",
            "tool_schema",
        )
    properties = schema.get("properties", EMPTY)
    if not isinstance(properties, Mapping) or not all(
        isinstance(sub, (Mapping, bool)) for sub in properties.values()
    ):
        raise _invalid(
            "parameters.properties",
            "must map each argument name to its schema (an object)",
            "tool_schema",
        )
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(key, str) for key in required):
        raise _invalid(
            "parameters.required", "must be a list of argument names (strings)", "tool_schema"
        )
    for key in ("$defs", "definitions"):
        if key in schema and not isinstance(schema[key], Mapping):
            raise _invalid(f"parameters.{key}", "must map names to schemas", "tool_schema")
    return schema


# -- From Python ------------------------------------------------------------------------------


def _generator() -> type[pydantic.json_schema.GenerateJsonSchema]:
    from pydantic.json_schema import GenerateJsonSchema

    class ToolJsonSchema(GenerateJsonSchema):
        """pydantic's JSON Schema without a title on every field: tokens a model reads for
        nothing (the property name says it)."""

        def field_title_should_be_set(self, schema: Any) -> bool:
            return False

    return ToolJsonSchema


_GENERATOR: list[type[Any]] = []


def _schema_generator() -> type[Any]:
    if not _GENERATOR:
        _GENERATOR.append(_generator())
    return _GENERATOR[0]


def _refuse(fn: Any, parameter: str, problem: str) -> ValidationError:
    where = getattr(fn, "__qualname__", repr(fn))
    detail = ErrorDetail(parameter, problem, "tool_parameter")
    return ValidationError(f"cannot make a tool of {where}: parameter {detail}", [detail])


def _checked_signature(fn: Callable[..., Any]) -> inspect.Signature:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as error:
        raise ValidationError(f"cannot make a tool of {fn!r}: no signature ({error})") from None
    for parameter in signature.parameters.values():
        shown = parameter.name
        if parameter.kind is parameter.VAR_POSITIONAL:
            raise _refuse(
                fn,
                f"*{shown}",
                "a model sends named arguments only, so *args cannot be filled; give each "
                "argument its own annotated parameter",
            )
        if parameter.kind is parameter.VAR_KEYWORD:
            raise _refuse(
                fn,
                f"**{shown}",
                "**kwargs has no schema a model could follow; give each argument its own "
                "annotated parameter (or take one pydantic model and use tool_from_model)",
            )
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise _refuse(
                fn,
                shown,
                "is positional-only, but a model sends arguments by name; remove the '/' "
                "from the signature",
            )
        if parameter.annotation is parameter.empty:
            hint = (
                "; for a method, pass the bound method (obj.method), whose self is already given"
                if shown in ("self", "cls")
                else "; for a value your code supplies (a context), bind it first with "
                "functools.partial(fn, value) or a closure"
            )
            raise _refuse(
                fn,
                shown,
                f"has no type annotation, so its JSON Schema is unknown; annotate it "
                f"({shown}: str, {shown}: int, ...; typing.Any accepts any JSON){hint}",
            )
    return signature


def _unwrapped(fn: Any) -> Any:
    """The function under ``functools.partial`` layers."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn


def _hints(fn: Any) -> dict[str, Any]:
    target = _unwrapped(fn)
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        target = getattr(target, "__call__", target)  # noqa: B004 -- a callable object
    return typing.get_type_hints(target, include_extras=True)


def _annotated_text(annotation: Any) -> str | None:
    """The first plain string in ``Annotated[T, ...]``'s metadata: a parameter's docs."""
    if typing.get_origin(annotation) is typing.Annotated:
        for extra in annotation.__metadata__:
            if isinstance(extra, str):
                return extra
    return None


def tool_from_function(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool | None = None,
    retry_safe: bool = False,
) -> ToolDefinition:
    """A [`ToolDefinition`][threadline.ToolDefinition] for a typed Python function.

    The arguments' JSON Schema is pydantic's for the function's signature (``Optional``,
    ``Literal``, ``Enum``, models, ``list[...]``, ``dict[...]``, ``TypedDict``...); defaults
    are kept. A parameter's description is, first found: ``Annotated[T,
    Field(description=...)]``, ``Annotated[T, "text"]``, or its entry in the docstring (Google
    ``Args:``, NumPy ``Parameters`` or Sphinx ``:param name:``). The tool's description is the
    docstring's prose before its sections. The function becomes the definition's
    ``function``.

    Every parameter must be annotated and passable by name: ``*args``, ``**kwargs`` and
    positional-only parameters are refused. A method is given bound (``obj.method``); a value
    your code supplies rather than the model (a database handle, a context) is bound first
    with ``functools.partial(fn, value)`` or a closure, so it stays out of the schema.

    Args:
        fn: the function (a coroutine function works too).
        name: the tool's name; default ``fn.__name__``.
        description: the tool's description; default from the docstring.
        strict: the definition's ``strict`` (OpenAI's strict mode; see
            [`ToolDefinition`][threadline.ToolDefinition]).
        retry_safe: the definition's ``retry_safe``: the function is safe to run again after
            a crash (see [`run_tool_calls`][threadline.run_tool_calls]).

    Raises:
        threadline.ValidationError: a parameter cannot be in a tool (named, with the fix),
            ``fn`` has no usable name and none was given, or the name, the description or a
            string of the schema is not Unicode text (a lone surrogate), naming the field.
    """
    import pydantic

    if not callable(fn):
        raise TypeError(f"tool_from_function takes a function, not {type(fn).__name__}")
    if name is None:  # an explicit name is checked as ToolDefinition checks every name
        tool_name = getattr(_unwrapped(fn), "__name__", "")
        if not isinstance(tool_name, str) or not tool_name.isidentifier():
            raise ValidationError(
                f"cannot make a tool of {fn!r}: its name {tool_name!r} is not a tool name; "
                "pass name='...'",
                [ErrorDetail("name", "pass name='...'", "tool_name")],
            )
    else:
        tool_name = name
    signature = _checked_signature(fn)
    try:
        hints = _hints(fn)
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(typing.cast(Any, fn))
        schema = adapter.json_schema(schema_generator=_schema_generator())
    except (NameError, pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError) as e:
        raise ValidationError(f"cannot make a tool of {fn!r}: {e}") from None
    docs = parse_docstring(getattr(_unwrapped(fn), "__doc__", None))
    properties = schema.get("properties", {})
    for parameter in signature.parameters:
        prop = properties.get(parameter)
        if isinstance(prop, dict) and "description" not in prop:
            text = _annotated_text(hints.get(parameter)) or docs.parameters.get(parameter)
            if text:
                prop["description"] = text
    return ToolDefinition(
        tool_name,
        docs.description if description is None else description,
        schema,
        strict,
        function=fn,
        retry_safe=retry_safe,
    )


def tool_from_model(
    model: type[pydantic.BaseModel],
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool | None = None,
) -> ToolDefinition:
    """A [`ToolDefinition`][threadline.ToolDefinition] whose arguments are a pydantic model.

    The schema is the model's validation schema; a field's description is its
    ``Field(description=...)`` or, failing that, its entry in the model docstring's
    ``Attributes:`` (or ``Args:``) section. The tool's description is the docstring's prose.
    Calling the definition validates the arguments into a model instance (its ``function`` is
    the model class).

    Args:
        model: a ``pydantic.BaseModel`` subclass.
        name: the tool's name; default the model's class name.
        description: the tool's description; default from the model's docstring.
        strict: the definition's ``strict`` (OpenAI's strict mode; see
            [`ToolDefinition`][threadline.ToolDefinition]).

    Raises:
        TypeError: ``model`` is not a pydantic model class.
    """
    import pydantic

    if not (isinstance(model, type) and issubclass(model, pydantic.BaseModel)):
        raise TypeError(
            f"tool_from_model takes a pydantic model class, not {model!r}; for a function "
            "use tool_from_function"
        )
    schema = model.model_json_schema(schema_generator=_schema_generator())
    top = schema.get("$ref")
    if isinstance(top, str) and top.startswith("#/$defs/"):
        # A recursive model is all a reference to its own definition, which stays for the
        # references inside it: the top level becomes a copy of that definition.
        schema = {**schema["$defs"][top.removeprefix("#/$defs/")], "$defs": schema["$defs"]}
    schema.pop("title", None)
    schema.pop("description", None)  # the tool's description says it
    docs = parse_docstring(model.__doc__)
    for field, prop in schema.get("properties", {}).items():
        text = docs.parameters.get(field)
        if isinstance(prop, dict) and "description" not in prop and text:
            prop["description"] = text
    return ToolDefinition(
        model.__name__ if name is None else name,
        docs.description if description is None else description,
        schema,
        strict,
        function=model,
    )
