"""threadline.tools: ToolDefinition, tool_from_function, tool_from_model and schema adaptation."""

from __future__ import annotations

import enum
import functools
from typing import Annotated
from typing import Any
from typing import Literal
from typing import Optional

import jsonschema
import pydantic
import pytest
from typing_extensions import TypedDict

import threadline as tl
from threadline import ToolDefinition
from threadline import ValidationError
from threadline import tool_from_function
from threadline import tool_from_model
from threadline._docstrings import parse_docstring
from threadline._schemas import adapt_schema
from threadline._schemas import adapt_schema_text
from threadline._schemas import drop_strict_nulls
from threadline.tools import adapted_parameters


def _check(schema: Any, value: Any) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(value)


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Place(pydantic.BaseModel):
    city: str
    country: Optional[str] = None  # noqa: UP045 -- the spelling under test


class Window(TypedDict):
    start: int
    end: int


class TestToolDefinition:
    def test_defaults_and_exports(self) -> None:
        tool = ToolDefinition("ping")
        assert tool.description == ""
        assert tool.parameters == {"type": "object", "properties": {}}
        assert tool.strict is None
        assert tool.metadata == {}
        assert tl.ToolDefinition is ToolDefinition
        from threadline.context import ToolDefinition as from_context

        assert from_context is ToolDefinition

    def test_frozen_read_only_comparable_hashable(self) -> None:
        schema: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}}}
        tool = ToolDefinition("search", "Search.", schema, metadata={"team": "a"})
        with pytest.raises(AttributeError):
            tool.name = "other"  # type: ignore[misc]
        with pytest.raises(TypeError, match="read-only"):
            tool.parameters["properties"]["q"]["type"] = "integer"
        with pytest.raises(TypeError, match="read-only"):
            tool.metadata["team"] = "b"  # type: ignore[index]
        schema["properties"]["q"]["type"] = "integer"  # the caller's dict is not the tool's
        assert tool.parameters["properties"]["q"]["type"] == "string"
        same = ToolDefinition(
            "search",
            "Search.",
            {"type": "object", "properties": {"q": {"type": "string"}}},
            metadata={"team": "a"},
        )
        assert tool == same
        assert hash(tool) == hash(same)
        assert len({tool, same}) == 1

    @pytest.mark.parametrize(
        ("kwargs", "path"),
        [
            ({"name": ""}, "name"),
            ({"name": 3}, "name"),
            ({"description": None}, "description"),
            ({"strict": "yes"}, "strict"),
            ({"parameters": []}, "parameters"),
            ({"parameters": {"type": "string"}}, "parameters.type"),
            ({"parameters": {"properties": {}}}, "parameters.type"),
            ({"parameters": {"type": "object", "properties": []}}, "parameters.properties"),
            ({"parameters": {"type": "object", "properties": {"a": 1}}}, "parameters.properties"),
            ({"parameters": {"type": "object", "required": "a"}}, "parameters.required"),
            ({"parameters": {"type": "object", "$defs": []}}, "parameters.$defs"),
            ({"parameters": {"type": "object", "default": float("nan")}}, "parameters"),
            ({"parameters": {"type": "object", "default": object()}}, "parameters"),
            ({"metadata": {"k": {1, 2}}}, "metadata"),
            ({"metadata": "x"}, "metadata"),
        ],
    )
    def test_invalid_fields_are_named(self, kwargs: dict[str, Any], path: str) -> None:
        arguments: dict[str, Any] = {"name": "t", **kwargs}
        with pytest.raises(ValidationError) as info:
            ToolDefinition(**arguments)
        assert info.value.errors[0].path.startswith(path)

    def test_parameters_are_bounded_like_untrusted_json(self) -> None:
        deep: dict[str, Any] = {"type": "string"}
        for _ in range(40):
            deep = {"type": "array", "items": deep}
        with pytest.raises(tl.LimitExceededError, match="max_depth"):
            ToolDefinition("t", parameters={"type": "object", "properties": {"a": deep}})

    def test_strict_true_refuses_at_once_what_strict_mode_cannot_take(self) -> None:
        open_dict = {
            "type": "object",
            "properties": {"tags": {"type": "object", "additionalProperties": {"type": "string"}}},
        }
        ToolDefinition("t", parameters=open_dict)  # fine unless strict
        with pytest.raises(ValidationError, match="strict") as info:
            ToolDefinition("t", parameters=open_dict, strict=True)
        assert info.value.errors[0].path == "#/properties/tags"

    def test_calling_runs_the_function(self) -> None:
        tool = ToolDefinition("echo", function=lambda text: text * 2)
        assert tool(text="ab") == "abab"
        with pytest.raises(TypeError, match="no function"):
            ToolDefinition("echo")(text="ab")
        with pytest.raises(ValidationError, match="callable"):
            ToolDefinition("echo", function="nope")  # type: ignore[arg-type]


def get_weather(
    place: Place,
    unit: Unit = Unit.CELSIUS,
    days: Annotated[int, pydantic.Field(ge=1, le=7, description="Days to forecast.")] = 1,
    hours: Annotated[list[int], "Hours of the day."] = [],  # noqa: B006
    detail: Literal["short", "full"] = "short",
    note: Optional[str] = None,  # noqa: UP045
    labels: dict[str, str] | None = None,
    window: Window | None = None,
) -> str:
    """Get the weather forecast for a place.

    Uses the national service.

    Args:
        place: Where to forecast.
        unit (Unit): Temperature unit;
            celsius by default.
        days: Ignored: the Annotated description wins.
        note: Free text.

    Returns:
        The forecast.
    """
    return f"{place.city}: sunny"


class TestToolFromFunction:
    def test_every_common_annotation(self) -> None:
        tool = tool_from_function(get_weather)
        assert tool.name == "get_weather"
        assert (
            tool.description
            == "Get the weather forecast for a place.\n\nUses the national service."
        )
        assert tool.function is get_weather
        schema = tool.parameters
        properties = schema["properties"]
        assert schema["required"] == ["place"]
        assert properties["place"]["description"] == "Where to forecast."
        assert schema["$defs"]["Place"]["properties"]["city"] == {"type": "string"}
        assert properties["unit"]["description"] == "Temperature unit; celsius by default."
        assert schema["$defs"]["Unit"]["enum"] == ["celsius", "fahrenheit"]
        assert properties["unit"]["default"] == "celsius"
        assert properties["days"] == {
            "default": 1,
            "description": "Days to forecast.",
            "maximum": 7,
            "minimum": 1,
            "type": "integer",
        }
        assert properties["hours"]["description"] == "Hours of the day."
        assert properties["hours"]["items"] == {"type": "integer"}
        assert properties["detail"]["enum"] == ["short", "full"]
        assert properties["note"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
        assert properties["note"]["description"] == "Free text."
        assert {"type": "object", "additionalProperties": {"type": "string"}} in properties[
            "labels"
        ]["anyOf"]
        assert "title" not in properties["place"]
        _check(schema, {"place": {"city": "Oslo"}, "unit": "fahrenheit", "hours": [9]})

    def test_every_dialect_takes_a_function_schema(self) -> None:
        tool = tool_from_function(get_weather)
        arguments = {"place": {"city": "Oslo"}, "days": 3}
        for dialect in ("standard", "inline", "gemini"):
            _check(adapted_parameters(tool, dialect), arguments)
        with pytest.raises(ValidationError, match="additionalProperties") as info:
            adapted_parameters(tool, "openai_strict")  # labels is an open dict
        assert "labels" in info.value.errors[0].path

    def test_strict_function(self) -> None:
        def book(city: str, nights: int = 1, note: str | None = None) -> str:
            """Book a hotel."""
            return city

        tool = tool_from_function(book, strict=True)
        strict = adapted_parameters(tool, "openai_strict")
        assert strict["required"] == ["city", "nights", "note"]
        assert strict["additionalProperties"] is False
        assert strict["properties"]["nights"] == {
            "type": ["integer", "null"],
            "description": "Default: 1.",
        }
        sent = {"city": "Oslo", "nights": None, "note": None}
        _check(strict, sent)
        assert drop_strict_nulls(sent, tool.parameters) == {"city": "Oslo", "note": None}

    def test_numpy_docstring(self) -> None:
        def area(width: float, height: float = 1.0) -> float:
            """Compute an area.

            Parameters
            ----------
            width : float
                The width,
                in metres.
            height : float, optional
                The height.

            Returns
            -------
            float
            """
            return width * height

        tool = tool_from_function(area)
        assert tool.description == "Compute an area."
        assert tool.parameters["properties"]["width"]["description"] == "The width, in metres."
        assert tool.parameters["properties"]["height"]["description"] == "The height."

    def test_sphinx_docstring(self) -> None:
        def move(x: int, y: int) -> None:
            """Move the cursor.

            :param x: Column,
                from zero.
            :param int y: Row.
            :returns: nothing.
            """

        tool = tool_from_function(move)
        assert tool.description == "Move the cursor."
        assert tool.parameters["properties"]["x"]["description"] == "Column, from zero."
        assert tool.parameters["properties"]["y"]["description"] == "Row."

    def test_name_and_description_overrides_bound_methods_partials_coroutines(self) -> None:
        class Calculator:
            def add(self, a: int, b: int) -> int:
                """Add two numbers."""
                return a + b

        tool = tool_from_function(Calculator().add, name="plus", description="Add.")
        assert (tool.name, tool.description) == ("plus", "Add.")
        assert list(tool.parameters["properties"]) == ["a", "b"]
        assert tool(a=1, b=2) == 3

        def lookup(database: dict[str, str], key: str) -> str:
            return database[key]

        bound = tool_from_function(functools.partial(lookup, {"k": "v"}), name="lookup")
        assert list(bound.parameters["properties"]) == ["key"]
        assert bound(key="k") == "v"

        async def fetch(url: str) -> str:
            return url

        assert tool_from_function(fetch).parameters["required"] == ["url"]

    @pytest.mark.parametrize(
        ("source", "parameter", "fix"),
        [
            ("def f(a: int, *args: int) -> None: ...", "*args", "own annotated parameter"),
            ("def f(**options: int) -> None: ...", "**options", "tool_from_model"),
            ("def f(a: int, /, b: int) -> None: ...", "a", "remove the '/'"),
            ("def f(a, b: int) -> None: ...", "a", "annotate it"),
            ("def f(self, b: int) -> None: ...", "self", "bound method"),
            ("def f(ctx, b: int) -> None: ...", "ctx", "functools.partial"),
        ],
    )
    def test_parameters_a_model_cannot_fill_are_refused(
        self, source: str, parameter: str, fix: str
    ) -> None:
        namespace: dict[str, Any] = {}
        exec(source, namespace)
        with pytest.raises(ValidationError, match=fix) as info:
            tool_from_function(namespace["f"])
        assert info.value.errors[0].path == parameter

    def test_a_lambda_needs_a_name(self) -> None:
        with pytest.raises(ValidationError, match="name="):
            tool_from_function(lambda x: x)
        with pytest.raises(TypeError):
            tool_from_function("f")  # type: ignore[arg-type]
        assert tool_from_function(lambda: "x", name="now").parameters["properties"] == {}


class TestToolFromModel:
    def test_model(self) -> None:
        class Search(pydantic.BaseModel):
            """Search the web.

            Attributes:
                query: What to look for.
            """

            query: str
            limit: int = pydantic.Field(10, description="At most this many.")
            place: Place | None = None

        tool = tool_from_model(Search)
        assert (tool.name, tool.description) == ("Search", "Search the web.")
        properties = tool.parameters["properties"]
        assert properties["query"]["description"] == "What to look for."
        assert properties["limit"]["description"] == "At most this many."
        assert "title" not in tool.parameters
        assert "description" not in tool.parameters
        assert tool(query="x") == Search(query="x")
        strict = adapted_parameters(tool_from_model(Search, strict=True, name="s"), "openai_strict")
        assert strict["required"] == ["query", "limit", "place"]
        _check(strict, {"query": "q", "limit": None, "place": {"city": "Oslo", "country": None}})
        with pytest.raises(TypeError, match="pydantic model class"):
            tool_from_model(get_weather)  # type: ignore[arg-type]


class TestSchemaAdaptation:
    def test_strict_refusals_name_the_path(self) -> None:
        cases = {
            "#/properties/a": {"type": "object", "additionalProperties": True},
            "#/properties/b": {"type": "object"},
            "#/properties/c": {"type": "object", "patternProperties": {"^x": {}}},
            "#/properties/d": {"allOf": [{"type": "string"}]},
            "#/properties/e": {},
            "#/properties/f/items": {"not": {"type": "string"}},
        }
        for path, sub in cases.items():
            schema: dict[str, Any] = {"type": "object", "properties": {path.split("/")[2]: sub}}
            if path.endswith("items"):
                schema["properties"]["f"] = {"type": "array", "items": sub}
            with pytest.raises(ValidationError, match="strict") as info:
                adapt_schema(schema, "openai_strict")
            assert info.value.errors[0].path == path

    def test_recursive_schemas_are_refused_where_refs_are_inlined(self) -> None:
        class Node(pydantic.BaseModel):
            name: str
            children: list[Node] = []

        tool = tool_from_model(Node)
        assert adapted_parameters(tool, "standard")["properties"]["children"]["items"] == {
            "$ref": "#/$defs/Node"
        }
        strict = adapted_parameters(tool, "openai_strict")  # OpenAI takes recursion
        _check(strict, {"name": "a", "children": [{"name": "b", "children": []}]})
        for dialect in ("inline", "gemini"):
            with pytest.raises(ValidationError, match="recursive") as info:
                adapted_parameters(tool, dialect)
            assert (
                info.value.errors[0].path == "#/properties/children/items/properties/children/items"
            )

    def test_refs_are_inlined_with_their_siblings(self) -> None:
        schema = {
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/P", "description": "first"},
                "b": {"$ref": "#/$defs/P", "maxLength": 3},
            },
            "$defs": {"P": {"type": "string", "description": "a P"}},
        }
        inline = adapt_schema(schema, "inline")
        assert inline["properties"]["a"] == {"type": "string", "description": "first"}
        assert inline["properties"]["b"] == {
            "allOf": [{"type": "string", "description": "a P"}, {"maxLength": 3}]
        }
        assert "$defs" not in inline
        with pytest.raises(ValidationError, match="local"):
            adapt_schema(
                {"type": "object", "properties": {"a": {"$ref": "https://x/s.json"}}}, "inline"
            )
        with pytest.raises(ValidationError, match="points to nothing"):
            adapt_schema({"type": "object", "properties": {"a": {"$ref": "#/$defs/Q"}}}, "inline")

    def test_inlining_cannot_blow_up(self) -> None:
        defs = {
            f"D{i}": {"type": "array", "items": [{"$ref": f"#/$defs/D{i + 1}"}] * 2}
            for i in range(30)
        }
        defs = {
            f"D{i}": {"anyOf": [{"$ref": f"#/$defs/D{i + 1}"}, {"$ref": f"#/$defs/D{i + 1}"}]}
            for i in range(30)
        }
        defs["D30"] = {"type": "string"}
        schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/D0"}}, "$defs": defs}
        with pytest.raises(ValidationError, match="more than"):
            adapt_schema(schema, "inline")

    def test_gemini_subset(self) -> None:
        schema = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "kind": {"const": "a"},
                "level": {"enum": [1, 2], "description": "How loud."},
                "name": {"type": ["string", "null"], "format": "email", "minLength": 1},
                "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                "both": {"allOf": [{"type": "object", "properties": {"x": {"type": "integer"}}}]},
                "pair": {
                    "type": "array",
                    "prefixItems": [{"type": "integer"}],
                    "items": {"type": "string"},
                },
                "extra": {"type": "object", "additionalProperties": {"type": "integer"}},
                "n": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 3},
            },
            "additionalProperties": False,
        }
        gemini = adapt_schema(schema, "gemini")
        properties = gemini["properties"]
        assert "$schema" not in gemini
        assert "additionalProperties" not in gemini
        # Gemini: "enum: only allowed for STRING type" (issue 37 item 2)
        assert properties["kind"] == {"enum": ["a"], "type": "string"}
        assert properties["level"] == {"description": "How loud.\n\nOne of: 1, 2."}
        assert properties["name"] == {
            "minLength": 1,
            "anyOf": [{"type": "string"}, {"type": "null"}],
        }
        assert properties["pick"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
        assert properties["both"] == {"type": "object", "properties": {"x": {"type": "integer"}}}
        assert properties["pair"] == {"type": "array"}
        assert properties["extra"] == {"type": "object"}
        assert properties["n"] == {"type": "integer"}

    def test_cached_deterministic_and_fresh(self) -> None:
        schema = {"type": "object", "properties": {"a": {"type": "integer", "default": 1}}}
        first = adapt_schema(schema, "openai_strict")
        first["properties"]["a"]["type"] = "changed"  # the caller's copy
        second = adapt_schema(schema, "openai_strict")
        assert second["properties"]["a"]["type"] == ["integer", "null"]
        hits = adapt_schema_text.cache_info().hits
        adapt_schema(dict(schema), "openai_strict")
        assert adapt_schema_text.cache_info().hits == hits + 1
        with pytest.raises(ValueError, match="dialect"):
            adapt_schema(schema, "nope")  # type: ignore[arg-type]

    def test_drop_strict_nulls(self) -> None:
        schema = {
            "type": "object",
            "properties": {
                "a": {"type": "integer"},
                "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "c": {"type": "array", "items": {"$ref": "#/$defs/P"}},
                "d": {"type": "integer"},
            },
            "required": ["d"],
            "$defs": {"P": {"type": "object", "properties": {"x": {"type": "string"}}}},
        }
        sent = {"a": None, "b": None, "c": [{"x": None}, {"x": "y"}], "d": None}
        assert drop_strict_nulls(sent, schema) == {"b": None, "c": [{}, {"x": "y"}], "d": None}
        assert sent["a"] is None  # the arguments are not changed


class TestDocstrings:
    def test_google_sections_and_prose(self) -> None:
        parsed = parse_docstring(
            """Summary line
            continued.

            Second paragraph.

            Args:
                first: One.
                *rest: Many.

                    With a paragraph.
                second (int, optional): Two.

            Raises:
                ValueError: never a parameter.
            """
        )
        assert parsed.description == "Summary line continued.\n\nSecond paragraph."
        assert parsed.parameters == {
            "first": "One.",
            "rest": "Many.\n\nWith a paragraph.",
            "second": "Two.",
        }

    def test_nothing_to_read(self) -> None:
        assert parse_docstring(None).description == ""
        assert parse_docstring("   ").parameters == {}
        assert parse_docstring("Just prose.").description == "Just prose."


def test_an_explicit_name_is_checked_as_a_definition_checks_names() -> None:
    """``name=`` may be any name a definition takes (a dotted one too; codecs map it at the
    wire); only a function's own ``__name__`` must be an identifier."""

    def lookup(city: str) -> str:
        """Look up a city."""
        return city

    assert tl.tool_from_function(lookup, name="weather.current").name == "weather.current"
    with pytest.raises(tl.ValidationError, match="name"):
        tl.tool_from_function(lookup, name="")


class TestLoneSurrogates:
    """A string that is not Unicode text (a lone surrogate, as ``json.loads`` reads
    ``"\\ud800"``) is refused when the definition is built, naming the field, not when the
    HTTP client encodes the request body (issue 35, item 11)."""

    @pytest.mark.parametrize(
        ("kwargs", "path"),
        [
            ({"name": "look\ud800up"}, "name"),
            ({"description": "Looks \udc00 up."}, "description"),
            ({"description": "\ud83e"}, "description"),
        ],
    )
    def test_in_the_name_or_the_description(self, kwargs: dict[str, Any], path: str) -> None:
        arguments: dict[str, Any] = {"name": "lookup", **kwargs}
        with pytest.raises(ValidationError, match="lone surrogate") as info:
            ToolDefinition(**arguments)
        [detail] = info.value.errors
        assert (detail.path, detail.type) == (path, "string_unicode")
        assert f"the {path} is not valid Unicode text" in detail.message

    @pytest.mark.parametrize(
        ("schema", "where"),
        [
            ({"properties": {"q\ud800": {"type": "string"}}}, "parameters.properties"),
            (
                {"properties": {"q": {"type": "string", "description": "\ud800"}}},
                "parameters.properties.q.description",
            ),
            ({"title": "Look\udfffup"}, "parameters.title"),
            ({"properties": {"q": {"enum": ["a", "\ud800"]}}}, "parameters.properties.q.enum"),
        ],
    )
    def test_anywhere_in_the_schema(self, schema: dict[str, Any], where: str) -> None:
        with pytest.raises(ValidationError, match="lone surrogate") as info:
            ToolDefinition("lookup", parameters={"type": "object", **schema})
        assert where in str(info.value)

    def test_from_a_function(self) -> None:
        def lookup(city: str) -> str:
            """Look up a city."""
            return city

        def documented(city: str) -> str:
            return city

        documented.__doc__ = "Look \ud800 up.\n\nArgs:\n    city: The city."
        with pytest.raises(ValidationError, match="lone surrogate") as info:
            tool_from_function(lookup, name="look\ud800")
        assert info.value.errors[0].path == "name"
        with pytest.raises(ValidationError, match="lone surrogate") as info:
            tool_from_function(lookup, description="\udc00")
        assert info.value.errors[0].path == "description"
        with pytest.raises(ValidationError, match="lone surrogate") as info:
            tool_from_function(documented)
        assert info.value.errors[0].path == "description"
        documented.__doc__ = "Look up.\n\nArgs:\n    city: The \ud800 city."
        with pytest.raises(ValidationError, match=r"parameters\.properties\.city\.description"):
            tool_from_function(documented)

    def test_from_a_model(self) -> None:
        class Search(pydantic.BaseModel):
            query: str = pydantic.Field(title="Q\ud800")

        with pytest.raises(ValidationError, match=r"parameters\.properties\.query\.title"):
            tool_from_model(Search)
        with pytest.raises(ValidationError, match="lone surrogate") as info:
            tool_from_model(Place, description="\ud800")
        assert info.value.errors[0].path == "description"

    def test_in_an_output_schema(self) -> None:
        schema = {"type": "object", "description": "Answer \ud800.", "properties": {}}
        with pytest.raises(ValidationError, match="output_schema") as info:
            tl.encode([tl.user_message("hi")], provider="openai_chat", output_schema=schema)
        assert "description: the description is not valid Unicode text" in str(info.value)

    def test_paired_text_outside_the_bmp_is_kept(self) -> None:
        tool = ToolDefinition("lookup\U0001f9f5", "Finds \U0001f9f5 threads.")
        assert tool.description == "Finds \U0001f9f5 threads."
