"""Gemini's two schema fields (issue 37 items 1, 2 and 6).

A schema the OpenAPI subset (``parameters``, ``responseSchema``) expresses as it is goes there;
any other goes as JSON Schema (``parametersJsonSchema``, ``responseJsonSchema``), or is refused
with a ``CodecError`` naming the keyword. Each body is judged by the rules judge.
"""

from __future__ import annotations

import enum
from typing import Any
from typing import Literal

import jsonschema
import pydantic
import pytest

import threadline as tl
from tests.conformance._rules import judge_rules
from threadline import CodecError
from threadline import ToolDefinition
from threadline._schemas import adapt_schema


def _declaration(body: dict[str, Any]) -> dict[str, Any]:
    judge_rules("gemini", body, scope="request")
    declaration: dict[str, Any] = body["tools"][0]["functionDeclarations"][0]
    return declaration


def _tool_body(tool: ToolDefinition) -> dict[str, Any]:
    return tl.encode([tl.user_message("hi")], provider="gemini", tools=[tool])


def test_a_dict_parameter_goes_as_json_schema_with_its_value_type() -> None:
    def tag(labels: dict[str, int], note: str = "") -> None:
        """Tag it."""

    declaration = _declaration(_tool_body(tl.tool_from_function(tag)))
    assert "parameters" not in declaration
    schema = declaration["parametersJsonSchema"]
    assert schema["properties"]["labels"] == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }


def test_an_untyped_string_const_gets_its_type_in_the_subset() -> None:
    tool = ToolDefinition(
        "file", parameters={"type": "object", "properties": {"kind": {"const": "bug"}}}
    )
    declaration = _declaration(_tool_body(tool))
    assert declaration["parameters"]["properties"]["kind"] == {"type": "string", "enum": ["bug"]}


class Size(enum.IntEnum):
    SMALL = 1
    LARGE = 2


class Ticket(pydantic.BaseModel):
    kind: Literal["bug"]
    level: Literal[1, 2, 3]
    size: Size
    reviewer: Ticket | None = None


def test_int_enums_and_const_go_as_json_schema_intact() -> None:
    declaration = _declaration(_tool_body(tl.tool_from_model(Ticket)))
    schema = declaration["parametersJsonSchema"]
    assert "parameters" not in declaration
    assert schema["properties"]["kind"] == {"type": "string", "enum": ["bug"]}
    assert schema["properties"]["level"]["enum"] == [1, 2, 3]
    assert "const" not in str(schema)
    for value in ({"kind": "bug", "level": 2, "size": 1}, {"kind": "bug", "level": 1, "size": 2}):
        jsonschema.Draft202012Validator(schema).validate(value)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate({"kind": "bug", "level": 4, "size": 1})


class Node(pydantic.BaseModel):
    value: int
    children: list[Node] = []


def test_a_recursive_model_keeps_its_refs_for_tools_and_output() -> None:
    declaration = _declaration(_tool_body(tl.tool_from_model(Node)))
    schema = declaration["parametersJsonSchema"]
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    body = tl.encode([tl.user_message("hi")], provider="gemini", output_schema=Node)
    judge_rules("gemini", body, scope="request")
    config = body["generationConfig"]
    assert "responseSchema" not in config
    assert config["responseJsonSchema"]["$defs"]["Node"]["type"] == "object"
    jsonschema.Draft202012Validator(config["responseJsonSchema"]).validate(
        {"value": 1, "children": [{"value": 2}]}
    )


def test_a_simple_output_schema_stays_in_the_subset() -> None:
    class Answer(pydantic.BaseModel):
        city: str

    body = tl.encode([tl.user_message("hi")], provider="gemini", output_schema=Answer)
    assert body["generationConfig"]["responseSchema"]["properties"] == {"city": {"type": "string"}}
    assert "responseJsonSchema" not in body["generationConfig"]


def test_a_ref_loop_of_required_fields_is_refused_naming_ref() -> None:
    schema = {
        "type": "object",
        "properties": {"left": {"$ref": "#/$defs/Expr"}},
        "required": ["left"],
        "$defs": {
            "Expr": {
                "type": "object",
                "properties": {"left": {"$ref": "#/$defs/Expr"}},
                "required": ["left"],
            }
        },
    }
    with pytest.raises(CodecError, match=r"\$ref") as caught:
        _tool_body(ToolDefinition("expr", parameters=schema))
    assert "optional" in str(caught.value)


def test_a_boolean_const_is_refused_naming_const() -> None:
    class Flag(pydantic.BaseModel):
        on: Literal[True]

    with pytest.raises(CodecError, match="'const'"):
        _tool_body(tl.tool_from_model(Flag))


def test_a_ref_with_siblings_keeps_only_the_ref_beside_its_description() -> None:
    schema = adapt_schema(
        {
            "type": "object",
            "properties": {
                "next": {"$ref": "#/$defs/L", "description": "the next", "minProperties": 1}
            },
            "$defs": {
                "L": {"type": "object", "properties": {"next": {"$ref": "#/$defs/L"}}},
            },
        },
        "gemini_json",
    )
    nxt = schema["properties"]["next"]
    assert nxt["description"] == "the next"
    assert nxt["anyOf"] == [{"$ref": "#/$defs/L"}]


@pytest.mark.parametrize(
    ("prop", "extra", "subset"),
    [
        ({"type": "string", "maxLength": 3}, {}, True),
        ({"enum": ["a", "b"]}, {}, True),
        ({"type": "object"}, {}, False),
        ({"enum": [1, 2]}, {}, False),
        ({"type": "integer", "exclusiveMinimum": 0}, {}, False),
        ({"type": "string"}, {"additionalProperties": False}, True),  # tool_from_function's
        ({"type": "string"}, {"additionalProperties": True}, False),
        ({"type": "object", "properties": {"b": {"type": "integer"}}}, {}, True),
    ],
)
def test_which_schemas_the_subset_takes(
    prop: dict[str, Any], extra: dict[str, Any], subset: bool
) -> None:
    from threadline._schemas_gemini import gemini_takes_subset

    schema = {"type": "object", "properties": {"a": prop}, **extra}
    assert gemini_takes_subset(schema) is subset


def test_gemini_maps_names_over_64_characters() -> None:
    name = "lookup_" + "x" * 70
    tool = ToolDefinition(name, parameters={"type": "object", "properties": {}})
    body = _tool_body(tool)
    wire = body["tools"][0]["functionDeclarations"][0]["name"]
    assert len(wire) <= 64
    assert wire != name
    assert tl.codecs.wire_tool_names([tool], provider="gemini") == {wire: name}


def test_the_json_schema_form_keeps_what_gemini_lists_and_rewrites_the_rest_exactly() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "kind": {"const": "a"},
            "level": {"enum": [1, 2], "description": "How loud."},
            "name": {"type": ["string", "null"], "format": "email", "minLength": 1},
            "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "both": {"allOf": [{"type": "object", "properties": {"x": {"type": "integer"}}}]},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}], "items": {}},
            "extra": {"type": "object", "additionalProperties": {"type": "integer"}},
            "n": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 3},
            "x": {"type": "number", "exclusiveMaximum": 1.5, "examples": [1]},
            "maybe": {"enum": ["a", None], "title": "Maybe"},
        },
        "additionalProperties": False,
    }
    out = adapt_schema(schema, "gemini_json")
    properties = out["properties"]
    assert "$schema" not in out
    assert out["additionalProperties"] is False
    assert properties["kind"] == {"enum": ["a"], "type": "string"}
    assert properties["level"] == {"enum": [1, 2], "description": "How loud.", "type": "integer"}
    assert properties["name"] == {"type": ["string", "null"], "minLength": 1}
    assert properties["pick"] == {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    assert properties["both"] == {"type": "object", "properties": {"x": {"type": "integer"}}}
    assert properties["pair"]["prefixItems"] == [{"type": "integer"}]
    assert properties["extra"]["additionalProperties"] == {"type": "integer"}
    assert properties["n"] == {"type": "integer", "minimum": 1}
    assert properties["x"] == {"type": "number", "description": "Must be less than 1.5."}
    assert properties["maybe"] == {
        "anyOf": [{"enum": ["a"], "type": "string"}, {"type": "null"}],
        "title": "Maybe",
    }
    assert adapt_schema(out, "gemini_json") == out  # idempotent
