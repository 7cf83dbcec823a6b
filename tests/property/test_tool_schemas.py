"""The law of schema adaptation (issue 23): an adapted schema accepts what the original accepts.

Hypothesis draws JSON Schemas (objects with optional and required properties, arrays, enums,
``const``, ``anyOf``, ``type`` lists, nested objects, ``$defs`` with ``$ref``, with and
without sibling keywords) together with values valid under them. For each dialect the adapted
schema must accept the value (checked with ``jsonschema``); under OpenAI strict mode the value
is the one a model would send, with every absent optional key ``null``, and
``drop_strict_nulls`` must turn it back into a value the original schema accepts. Adapting an
adapted schema changes nothing. Gemini's JSON Schema form (``gemini_json``) holds the same law,
or refuses the schema with an ``UnsupportedContentError`` naming the keyword.

Issue 37: schemas as pydantic writes them too. Hypothesis builds pydantic models (dicts,
``Literal`` s of one value and of several, enums of ints and of strings, nested optionals,
recursive models, ``extra="forbid"`` / ``"allow"``, bounds) with values valid for them; every
format's request body for the model as a tool and as the output schema keeps every rule of the
rules judge, or ``encode`` refuses it naming where; and Gemini's adapted schema, in whichever
field it goes, accepts every valid value.
"""

from __future__ import annotations

import enum
from typing import Any
from typing import Literal
from typing import TypeAlias

import jsonschema
import pydantic
import pytest
from hypothesis import given
from hypothesis import note
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.conformance import _rules
from tests.support import examples
from threadline import ToolDefinition
from threadline import UnsupportedContentError
from threadline import ValidationError
from threadline._schemas import adapt_schema
from threadline._schemas import drop_strict_nulls
from threadline._schemas_gemini import gemini_takes_subset

# A drawn schema with the strategy of its values: pairs (value, the value as strict mode sends it).
Pair: TypeAlias = "tuple[dict[str, Any], st.SearchStrategy[tuple[Any, Any]]]"

NAMES = st.sampled_from(["a", "b", "city", "type", "$ref", "properties", "items", "x y", "é"])


def _same(values: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[Any, Any]]:
    return values.map(lambda value: (value, value))


def _leaves(strict: bool) -> st.SearchStrategy[Pair]:
    """Leaf schemas; ``strict``: only those OpenAI strict mode can express (no open dict)."""
    texts = st.text(alphabet="ab c", max_size=4)
    open_dicts = st.just(
        (
            {"type": "object", "additionalProperties": {"type": "integer"}},
            _same(st.dictionaries(texts, st.integers(), max_size=2)),
        )
    )
    return (st.nothing() if strict else open_dicts) | st.one_of(
        st.just(({"type": "string"}, _same(texts))),
        st.integers(0, 3).map(
            lambda n: (
                {"type": "string", "minLength": n, "format": "email"},
                _same(st.text(alphabet="xy", min_size=n, max_size=n + 2)),
            )
        ),
        st.just(({"type": "integer", "minimum": -5, "maximum": 5}, _same(st.integers(-5, 5)))),
        st.just(
            (
                {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 2},
                _same(st.integers(1, 4).map(lambda n: 2 * n)),
            )
        ),
        st.just(({"type": "number"}, _same(st.floats(allow_nan=False, allow_infinity=False)))),
        st.just(({"type": "boolean", "description": "on?"}, _same(st.booleans()))),
        st.just(({"type": "null"}, _same(st.none()))),
        st.just(({"type": ["string", "null"]}, _same(st.none() | texts))),
        st.just(
            (
                {"type": ["integer", "string"], "maxLength": 2},
                _same(st.integers() | st.text(alphabet="ab", max_size=2)),
            )
        ),
        st.lists(texts, min_size=1, max_size=3, unique=True).map(
            lambda values: ({"type": "string", "enum": values}, _same(st.sampled_from(values)))
        ),
        st.lists(st.integers(-3, 3), min_size=1, max_size=3, unique=True).map(
            lambda values: ({"enum": values}, _same(st.sampled_from(values)))
        ),
        st.sampled_from([1, "x", True, None, 2.5]).map(
            lambda value: ({"const": value}, _same(st.just(value)))
        ),
        st.just(
            (
                {
                    "type": "array",
                    "prefixItems": [{"type": "integer"}],
                    "items": {"type": "string"},
                },
                _same(
                    st.tuples(st.integers(), st.lists(texts, max_size=2)).map(
                        lambda t: [t[0], *t[1]]
                    )
                ),
            )
        ),
    )


@st.composite
def _object(draw: st.DrawFn, children: st.SearchStrategy[Pair]) -> Pair:
    fields = draw(
        st.lists(
            st.tuples(NAMES, children, st.booleans()), max_size=4, unique_by=lambda field: field[0]
        )
    )
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: sub for name, (sub, _), _ in fields},
        "required": [name for name, _, required in fields if required],
    }
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    if draw(st.booleans()):
        schema["description"] = "an object"

    @st.composite
    def values(draw: st.DrawFn) -> tuple[Any, Any]:
        value: dict[str, Any] = {}
        sent: dict[str, Any] = {}
        for name, (_, pairs), required in fields:
            if required or draw(st.booleans()):
                value[name], sent[name] = draw(pairs)
            else:
                sent[name] = None
        return value, sent

    return schema, values()


def _extend(children: st.SearchStrategy[Pair], strict: bool) -> st.SearchStrategy[Pair]:
    def array(pair: Pair) -> Pair:
        sub, pairs = pair
        return (
            {"type": "array", "items": sub, "maxItems": 3},
            st.lists(pairs, max_size=3).map(
                lambda items: ([v for v, _ in items], [s for _, s in items])
            ),
        )

    def union(branches: list[Pair]) -> Pair:
        return {"anyOf": [sub for sub, _ in branches]}, st.one_of([p for _, p in branches])

    def optional(pair: Pair) -> Pair:
        sub, pairs = pair
        return {"anyOf": [sub, {"type": "null"}], "default": None}, pairs | _same(st.none())

    def all_of(pair: Pair) -> Pair:
        sub, pairs = pair
        return {"allOf": [sub]}, pairs

    return st.one_of(
        children.map(array),
        st.lists(children, min_size=1, max_size=3).map(union),
        children.map(optional),
        st.nothing() if strict else children.map(all_of),
        _object(children),
    )


def _trees(strict: bool, extra: st.SearchStrategy[Pair] | None = None) -> st.SearchStrategy[Pair]:
    base = _leaves(strict) if extra is None else _leaves(strict) | extra
    return st.recursive(base, lambda children: _extend(children, strict), max_leaves=5)


@st.composite
def schemas_and_values(draw: st.DrawFn, strict: bool = False) -> tuple[dict[str, Any], Any, Any]:
    """A tool parameters schema (an object at the top, maybe with ``$defs``), a value valid
    under it and that value as strict mode sends it; ``strict``: schemas strict mode takes."""
    definitions = draw(st.lists(_trees(strict), max_size=3))
    refs: list[Pair] = []
    for index, (_, pairs) in enumerate(definitions):
        refs.append(({"$ref": f"#/$defs/D{index}"}, pairs))
        refs.append(({"$ref": f"#/$defs/D{index}", "description": "see D"}, pairs))
    children = _trees(strict, st.sampled_from(refs) if refs else None)
    schema, pairs = draw(_object(children))
    if definitions:
        schema["$defs"] = {f"D{index}": sub for index, (sub, _) in enumerate(definitions)}
    value, sent = draw(pairs)
    return schema, value, sent


def _valid(schema: dict[str, Any], value: Any) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(value)


@given(schemas_and_values())
def test_every_dialect_accepts_what_the_original_accepts(case: tuple[Any, Any, Any]) -> None:
    schema, value, _ = case
    note(f"schema={schema!r}")
    _valid(schema, value)  # the generator's own promise
    ToolDefinition("t", parameters=schema)
    for dialect in ("standard", "inline", "gemini"):
        adapted = adapt_schema(schema, dialect)
        note(f"{dialect}: {adapted!r}")
        _valid(adapted, value)
        assert adapt_schema(adapted, dialect) == adapted  # idempotent
        assert adapt_schema(schema, dialect) == adapted  # deterministic


@given(schemas_and_values(strict=True))
def test_strict_mode_accepts_the_value_with_nulls_and_decoding_drops_them(
    case: tuple[Any, Any, Any],
) -> None:
    schema, value, sent = case
    note(f"schema={schema!r}")
    strict = adapt_schema(schema, "openai_strict")
    note(f"strict={strict!r}")
    _valid(strict, sent)
    assert adapt_schema(strict, "openai_strict") == strict
    decoded = drop_strict_nulls(sent, schema)
    _valid(schema, decoded)
    assert drop_strict_nulls(value, schema) == value  # nothing to drop in what the model sent


@given(schemas_and_values())
def test_strict_mode_refuses_only_with_the_path(case: tuple[Any, Any, Any]) -> None:
    schema, _, _ = case
    try:
        adapt_schema(schema, "openai_strict")
    except ValidationError as error:
        refusal = error
    else:
        return
    assert refusal.errors[0].path.startswith("#")
    assert "strict" in str(refusal)


@given(schemas_and_values())
def test_gemini_keeps_only_its_subset(case: tuple[Any, Any, Any]) -> None:
    schema, _, _ = case
    allowed = {
        "type", "format", "title", "description", "nullable", "enum", "items", "minItems",
        "maxItems", "properties", "required", "minProperties", "maxProperties", "minLength",
        "maxLength", "pattern", "example", "anyOf", "propertyOrdering", "default", "minimum",
        "maximum",
    }  # fmt: skip
    stack: list[Any] = [adapt_schema(schema, "gemini")]
    while stack:
        node = stack.pop()
        assert isinstance(node, dict)
        assert set(node) <= allowed, set(node) - allowed
        assert not isinstance(node.get("type"), list)
        assert all(isinstance(value, str) for value in node.get("enum", []))
        stack.extend(node.get("properties", {}).values())
        stack.extend(node.get("anyOf", []))
        if "items" in node:
            stack.append(node["items"])


# -- Gemini's JSON Schema form (issue 37) ------------------------------------------------------

GEMINI_JSON_KEYWORDS = {
    "type", "format", "title", "description", "default", "enum", "items", "prefixItems",
    "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern", "anyOf",
    "oneOf", "properties", "additionalProperties", "required", "minProperties", "maxProperties",
    "propertyOrdering", "$ref", "$defs",
}  # fmt: skip


def _gemini_json_or_refusal(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``gemini_json`` form, or ``None`` when refused (naming the keyword)."""
    try:
        return adapt_schema(schema, "gemini_json")
    except UnsupportedContentError as error:
        refusal = str(error)
    assert "tool parameters schema at #" in refusal
    assert any(word in refusal for word in ("'const'", "'enum'", "$ref")), refusal
    return None


def _nodes(schema: Any) -> list[dict[str, Any]]:
    found = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        found.append(node)
        stack.extend((node.get("properties") or {}).values())
        stack.extend((node.get("$defs") or {}).values())
        stack.extend(node.get("anyOf") or ())
        stack.extend(node.get("oneOf") or ())
        stack.extend(node.get("prefixItems") or ())
        stack.extend(node[key] for key in ("items", "additionalProperties") if key in node)
    return found


@given(schemas_and_values())
def test_gemini_json_accepts_what_the_original_accepts_or_refuses_naming_the_keyword(
    case: tuple[Any, Any, Any],
) -> None:
    schema, value, _ = case
    note(f"schema={schema!r}")
    adapted = _gemini_json_or_refusal(schema)
    if adapted is None:
        return
    note(f"gemini_json: {adapted!r}")
    _valid(adapted, value)
    assert adapt_schema(adapted, "gemini_json") == adapted  # idempotent
    for node in _nodes(adapted):
        assert set(node) <= GEMINI_JSON_KEYWORDS, set(node) - GEMINI_JSON_KEYWORDS
        assert all(
            isinstance(v, (str, int, float)) and not isinstance(v, bool)
            for v in node.get("enum", [])
        )
        if "$ref" in node:
            assert set(node) <= {"$ref", "description", "default"}


# -- Schemas as pydantic writes them -----------------------------------------------------------


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Color(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(pydantic.BaseModel):
    x: int
    y: int = 0


class Tree(pydantic.BaseModel):
    value: int
    children: list[Tree] = []


class Chain(pydantic.BaseModel):
    label: str
    next: Chain | None = None


class Lit(pydantic.BaseModel):
    kind: Literal["lit"]
    value: int


class Add(pydantic.BaseModel):
    """A loop of required fields (through a union): Gemini refuses it as JSON Schema."""

    kind: Literal["add"]
    left: Lit | Add
    right: Lit | Add


Field: TypeAlias = "tuple[Any, st.SearchStrategy[Any]]"
"""A field's annotation with the strategy of its JSON values."""

_TEXT = st.text(alphabet="ab c", max_size=4)
_TREE = st.just({"value": 1, "children": [{"value": 2}]})
_LIT = {"kind": "lit", "value": 2}
_FIELD_LEAVES: list[Field] = [
    (str, _TEXT),
    (int, st.integers(-5, 5)),
    (float, st.floats(-2, 2, allow_nan=False)),
    (bool, st.booleans()),
    (Literal["bug"], st.just("bug")),
    (Literal[3], st.just(3)),
    (Literal["a", "b"], st.sampled_from(["a", "b"])),
    (Literal[1, 2, 3], st.sampled_from([1, 2, 3])),
    (Literal[True], st.just(True)),
    (Literal["a", None], st.sampled_from(["a", None])),
    (Level, st.sampled_from([1, 2])),
    (Color, st.sampled_from(["red", "blue"])),
    (dict[str, int], st.dictionaries(_TEXT, st.integers(), max_size=2)),
    (dict[str, Any], st.dictionaries(_TEXT, st.integers() | _TEXT, max_size=2)),
    (set[str], st.lists(_TEXT, max_size=3, unique=True)),
    (Point, st.builds(lambda x, y: {"x": x, "y": y}, st.integers(), st.integers())),
    (Tree, _TREE),
    (Chain, st.just({"label": "a", "next": {"label": "b"}})),
    (Add, st.just({"kind": "add", "left": {"kind": "lit", "value": 1}, "right": _LIT})),
    (pydantic.conint(gt=0), st.integers(1, 9)),
    (pydantic.constr(max_length=3), st.text(alphabet="ab", max_size=3)),
]  # fmt: skip


def _extend_field(children: st.SearchStrategy[Field]) -> st.SearchStrategy[Field]:
    def listed(field: Field) -> Field:
        return list[field[0]], st.lists(field[1], max_size=2)  # type: ignore[valid-type]

    def optional(field: Field) -> Field:
        return field[0] | None, st.none() | field[1]

    def mapped(field: Field) -> Field:
        return dict[str, field[0]], st.dictionaries(_TEXT, field[1], max_size=2)  # type: ignore[valid-type]

    return st.one_of(children.map(listed), children.map(optional), children.map(mapped))


_FIELDS = st.recursive(st.sampled_from(_FIELD_LEAVES), _extend_field, max_leaves=3)
_COUNTER = iter(range(10**9))


@st.composite
def pydantic_models(draw: st.DrawFn) -> tuple[type[pydantic.BaseModel], dict[str, Any]]:
    """A pydantic model built from drawn fields (some optional), and a JSON value of it."""
    fields = draw(st.lists(_FIELDS, min_size=1, max_size=4))
    optional = draw(st.lists(st.booleans(), min_size=len(fields), max_size=len(fields)))
    extras: list[Literal["ignore", "forbid", "allow"]] = ["ignore", "forbid", "allow"]
    extra = draw(st.sampled_from(extras))
    definitions: dict[str, Any] = {}
    value: dict[str, Any] = {}
    for index, ((annotation, values), skip) in enumerate(zip(fields, optional, strict=True)):
        name = f"f{index}"
        if skip:
            definitions[name] = (annotation | None, None)
            if draw(st.booleans()):
                value[name] = draw(st.none() | values)
        else:
            definitions[name] = (annotation, ...)
            value[name] = draw(values)
    model = pydantic.create_model(
        f"M{next(_COUNTER)}", __config__=pydantic.ConfigDict(extra=extra), **definitions
    )
    return model, value


def _judged_or_refused(provider: str, **request: Any) -> dict[str, Any] | None:
    try:
        body = tl.encode([tl.user_message("Go.")], provider=provider, **request)
    except (ValidationError, UnsupportedContentError) as error:
        refusal = str(error)
    else:
        _rules.judge_rules(provider, body, scope="request")
        return body
    assert "#" in refusal or "output_schema" in refusal, refusal
    return None


@settings(max_examples=examples(60), deadline=None)
@given(pydantic_models())
def test_every_format_keeps_its_rules_for_any_pydantic_schema(
    case: tuple[type[pydantic.BaseModel], dict[str, Any]],
) -> None:
    model, value = case
    schema = model.model_json_schema()
    note(f"schema={schema!r}")
    model.model_validate(value)  # the generator's own promise
    tool = tl.tool_from_model(model)
    for provider in _rules.FORMATS:
        _judged_or_refused(provider, tools=[tool])
        _judged_or_refused(provider, output_schema=model)


@settings(max_examples=examples(60), deadline=None)
@given(pydantic_models())
def test_gemini_sends_any_pydantic_schema_in_the_field_that_takes_it(
    case: tuple[type[pydantic.BaseModel], dict[str, Any]],
) -> None:
    model, value = case
    tool = tl.tool_from_model(model)
    parameters = dict(tool.parameters)
    note(f"parameters={parameters!r}")
    body = _judged_or_refused("gemini", tools=[tool])
    if body is None:
        with pytest.raises(UnsupportedContentError):
            adapt_schema(parameters, "gemini_json")
        return
    declaration = body["tools"][0]["functionDeclarations"][0]
    if gemini_takes_subset(parameters):
        assert "parametersJsonSchema" not in declaration
        sent = declaration.get("parameters", {"type": "object"})
    else:
        assert "parameters" not in declaration
        sent = declaration["parametersJsonSchema"]
    jsonschema.Draft202012Validator(sent).validate(value)
