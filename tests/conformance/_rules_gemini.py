"""The rules judge's checks of Gemini's schema fields (issue 37 items 1 and 2).

A declaration's ``parameters`` and ``generationConfig.responseSchema`` are Gemini's OpenAPI
subset (the ``Schema`` proto); ``parametersJsonSchema`` and ``responseJsonSchema`` are JSON
Schema. Each pair is mutually exclusive. The checks read the wire payload only; the rules
(with the quoted errors) are in ``_rules.RULES``.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


GEMINI_SUBSET_KEYWORDS = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "items", "minItems",
        "maxItems", "properties", "required", "minProperties", "maxProperties", "minLength",
        "maxLength", "pattern", "example", "anyOf", "propertyOrdering", "default", "minimum",
        "maximum",
    }
)  # fmt: skip
"""The ``Schema`` proto's fields on the Gemini API (the SDK's ``Schema`` also has ``ref``,
``defs`` and ``additionalProperties``, which only Vertex AI reads)."""

_SCHEMA_MAPS = ("properties", "$defs", "defs", "patternProperties")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_SINGLES = ("items", "additionalProperties", "not")


def _schema_nodes(node: Any, where: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every schema object in ``node`` (itself included), with where it is."""
    if not isinstance(node, Mapping):
        return
    yield where, node
    for key in _SCHEMA_MAPS:
        for name, sub in _dict(node.get(key)).items():
            yield from _schema_nodes(sub, f"{where}.{key}[{name}]")
    for key in _SCHEMA_LISTS:
        for index, sub in enumerate(_list(node.get(key))):
            yield from _schema_nodes(sub, f"{where}.{key}[{index}]")
    for key in _SCHEMA_SINGLES:
        yield from _schema_nodes(node.get(key), f"{where}.{key}")


def _gemini_schemas(
    payload: Mapping[str, Any], subset: bool
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The root schemas in Gemini's subset fields (``subset``) or in its JSON Schema fields."""
    field, output = ("parameters", "responseSchema") if subset else (
        "parametersJsonSchema", "responseJsonSchema"
    )  # fmt: skip
    for index, tool in enumerate(_list(payload.get("tools"))):
        for number, declaration in enumerate(_list(_dict(tool).get("functionDeclarations"))):
            schema = _dict(declaration).get(field)
            if isinstance(schema, Mapping):
                yield f"tools.{index}.functionDeclarations.{number}.{field}", schema
    schema = _dict(payload.get("generationConfig")).get(output)
    if isinstance(schema, Mapping):
        yield f"generationConfig.{output}", schema


def _is_object_type(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    return isinstance(kind, str) and kind.lower() == "object"


def gemini_subset_objects_have_properties(payload: Mapping[str, Any]) -> list[str]:
    """In the subset fields, an object schema below the root names its properties."""
    return [
        f"{where}.properties: should be non-empty for OBJECT type"
        for _, root in _gemini_schemas(payload, subset=True)
        for where, node in _schema_nodes(root, "")
        if where and _is_object_type(node) and not _dict(node.get("properties"))
    ]


def gemini_subset_enum_only_for_strings(payload: Mapping[str, Any]) -> list[str]:
    """In the subset fields, an ``enum`` sits on a ``STRING`` schema and holds strings."""
    out = []
    for base, root in _gemini_schemas(payload, subset=True):
        for where, node in _schema_nodes(root, base):
            if "enum" not in node:
                continue
            kind = node.get("type")
            strings = all(isinstance(value, str) for value in _list(node.get("enum")))
            if not (isinstance(kind, str) and kind.lower() == "string") or not strings:
                out.append(f"{where}.enum: only allowed for STRING type")
    return out


def gemini_subset_known_fields(payload: Mapping[str, Any]) -> list[str]:
    """The subset fields hold only the ``Schema`` proto's fields, a single ``type`` each."""
    out: list[str] = []
    for base, root in _gemini_schemas(payload, subset=True):
        for where, node in _schema_nodes(root, base):
            out.extend(
                f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': Cannot "
                "find field."
                for key in node
                if key not in GEMINI_SUBSET_KEYWORDS
            )
            if isinstance(node.get("type"), list):
                out.append(f"{where}.type: Proto field is not repeating, cannot start list.")
    return out


def gemini_schema_fields_exclusive(payload: Mapping[str, Any]) -> list[str]:
    """A declaration has ``parameters`` or ``parametersJsonSchema``, not both; the
    ``generationConfig`` ``responseSchema`` or ``responseJsonSchema``, not both."""
    out = []
    for index, tool in enumerate(_list(payload.get("tools"))):
        for number, declaration in enumerate(_list(_dict(tool).get("functionDeclarations"))):
            if {"parameters", "parametersJsonSchema"} <= set(_dict(declaration)):
                out.append(
                    f"tools.{index}.functionDeclarations.{number}: parametersJsonSchema is "
                    "mutually exclusive with parameters"
                )
    if {"responseSchema", "responseJsonSchema"} <= set(_dict(payload.get("generationConfig"))):
        out.append("generationConfig: responseJsonSchema is mutually exclusive with responseSchema")
    return out


def gemini_json_schema_ref_alone(payload: Mapping[str, Any]) -> list[str]:
    """In the JSON Schema fields, a ``$ref`` has nothing beside it but ``description``,
    ``default`` and ``$``-keywords."""
    return [
        f"{where}: $ref {node['$ref']!r} was set alongside unsupported fields ({', '.join(extra)})"
        ". If a schema node has $ref set, then only description and default can be set "
        "alongside it"
        for base, root in _gemini_schemas(payload, subset=False)
        for where, node in _schema_nodes(root, base)
        if "$ref" in node
        for extra in [
            sorted(k for k in node if k not in ("description", "default") and k[:1] != "$")
        ]
        if extra
    ]


def gemini_json_schema_enum_values(payload: Mapping[str, Any]) -> list[str]:
    """In the JSON Schema fields, no ``const``, and an ``enum`` of strings and numbers."""
    out = []
    for base, root in _gemini_schemas(payload, subset=False):
        for where, node in _schema_nodes(root, base):
            if "const" in node:
                out.append(f"{where}.const: Gemini refuses the JSON Schema 'const' keyword")
            values = _list(node.get("enum"))
            if any(isinstance(v, bool) or not isinstance(v, (str, int, float)) for v in values):
                out.append(f"{where}.enum: only strings and numbers")
    return out


def _required_refs(node: Any) -> Iterator[str]:
    """The ``$ref`` s a value of ``node`` must hold (through required, non-null properties,
    union branches and arrays of at least one item)."""
    if not isinstance(node, Mapping):
        return
    if isinstance(node.get("$ref"), str):
        yield node["$ref"]
        return
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in _list(node.get(key)):
            yield from _required_refs(branch)
    required = set(_list(node.get("required")))
    for name, sub in _dict(node.get("properties")).items():
        sub = _dict(sub)
        nullable = (
            sub.get("type") == "null"
            or (isinstance(sub.get("type"), list) and "null" in sub["type"])
            or any(_dict(b).get("type") == "null" for b in _list(sub.get("anyOf")))
        )
        if name in required and not nullable:
            yield from _required_refs(sub)
    minimum = node.get("minItems", 0)
    if isinstance(minimum, int) and minimum > 0:
        yield from _required_refs(node.get("items"))


def gemini_json_schema_ref_loops_optional(payload: Mapping[str, Any]) -> list[str]:
    """In the JSON Schema fields, every ``$ref`` loop passes through an optional or nullable
    property or an array that may be empty."""
    out = []
    for base, root in _gemini_schemas(payload, subset=False):
        definitions = _dict(root.get("$defs"))
        edges = {f"#/$defs/{name}": set(_required_refs(sub)) for name, sub in definitions.items()}
        for start in edges:
            seen: set[str] = set()
            stack = list(edges[start])
            while stack:
                ref = stack.pop()
                if ref == start:
                    out.append(
                        f"{base}: ref loops are only supported if they include optional or "
                        "nullable property values, or a potentially-zero-length array items, "
                        f"but a ref loop of required fields was found at {start}"
                    )
                    break
                if ref not in seen:
                    seen.add(ref)
                    stack.extend(edges.get(ref, ()))
    return out
