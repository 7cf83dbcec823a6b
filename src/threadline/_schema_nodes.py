"""The pieces every schema dialect is built of (private): walking a schema, following and
inlining local ``$ref`` s, merging ``allOf``, whether a schema accepts ``null``. The dialects
are in ``threadline._schemas`` (and Gemini's JSON Schema form in ``threadline._schemas_gemini``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from typing import TypeAlias

from threadline.errors import ErrorDetail
from threadline.errors import ValidationError

__all__ = ["Schema", "accepts_null", "schema_text"]

Schema: TypeAlias = "dict[str, Any] | bool"

_MAX_INLINED_NODES = 10_000
"""How many schemas an inlined schema may hold: inlining a definition used at many places
copies it each time, so a small schema can otherwise grow exponentially."""

_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SINGLES = (
    "additionalProperties",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
)
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems", "items")
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "example", "deprecated", "$comment"}
)


def _error(path: str, problem: str, kind: str) -> ValidationError:
    where = path or "#"
    detail = ErrorDetail(where, problem, kind)
    return ValidationError(f"tool parameters schema at {where}: {problem}", [detail])


def _children(
    node: dict[str, Any], path: str, transform: Callable[[Any, str], Any]
) -> dict[str, Any]:
    """``node`` with ``transform(subschema, path)`` applied to each direct subschema."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _MAPS and isinstance(value, dict):
            out[key] = {name: transform(sub, f"{path}/{key}/{name}") for name, sub in value.items()}
        elif key in _LISTS and isinstance(value, list):
            out[key] = [transform(sub, f"{path}/{key}/{index}") for index, sub in enumerate(value)]
        elif key in _SINGLES and isinstance(value, (dict, bool)):
            out[key] = transform(value, f"{path}/{key}")
        else:
            out[key] = value
    return out


# -- $ref inlining ----------------------------------------------------------------------------


def _pointer(root: Any, ref: str, path: str) -> Any:
    if ref != "#" and not ref.startswith("#/"):
        raise _error(
            path,
            f"$ref {ref!r} is not a reference inside this schema; only local references "
            "('#/$defs/Name') can be inlined, so put the definition under $defs",
            "schema_ref",
        )
    target = root
    for raw in ref[2:].split("/") if ref != "#" else ():
        step = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and step in target:
            target = target[step]
        elif isinstance(target, list) and step.isdigit() and int(step) < len(target):
            target = target[int(step)]
        else:
            raise _error(path, f"$ref {ref!r} points to nothing in this schema", "schema_ref")
    return target


def _inline(schema: dict[str, Any]) -> Schema:
    budget = [_MAX_INLINED_NODES]

    def walk(node: Any, path: str, expanding: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        budget[0] -= 1
        if budget[0] < 0:
            raise _error(
                path,
                f"inlining its $refs makes the schema hold more than {_MAX_INLINED_NODES:,} "
                "schemas; define fewer shared models, or use a provider that takes $ref",
                "schema_too_large",
            )
        if "$ref" in node and isinstance(node["$ref"], str):
            ref = node["$ref"]
            if ref in expanding:
                raise _error(
                    path,
                    f"the schema is recursive ({ref!r} refers to itself), which cannot be "
                    "inlined for a provider without $ref; bound the nesting with separate "
                    "models for each level",
                    "schema_recursive",
                )
            target = walk(_pointer(schema, ref, path), path, (*expanding, ref))
            rest = {key: value for key, value in node.items() if key != "$ref"}
            return _with_siblings(target, walk(rest, path, expanding) if rest else {})
        out = _children(node, path, lambda sub, where: walk(sub, where, expanding))
        out.pop("$defs", None)
        out.pop("definitions", None)
        return out

    return walk(schema, "#", ())  # type: ignore[no-any-return]


def _with_siblings(target: Any, siblings: dict[str, Any]) -> Any:
    """What a ``$ref`` with sibling keywords means: both apply."""
    if not siblings:
        return target
    notes = {key: value for key, value in siblings.items() if key in _ANNOTATIONS}
    rules = {key: value for key, value in siblings.items() if key not in _ANNOTATIONS}
    if target is True:
        return {**rules, **notes}
    if target is False:
        return False
    if rules:
        return {"allOf": [target, rules], **notes}
    return {**target, **notes}


_GEMINI_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "minimum",
        "maximum",
    }
)


def _fold_all_of(node: dict[str, Any]) -> dict[str, Any]:
    """``allOf`` merged into ``node``: a keyword both define keeps the first value (wider)."""
    out = {key: value for key, value in node.items() if key != "allOf"}
    for branch in node["allOf"]:
        if isinstance(branch, dict):
            if "allOf" in branch:
                branch = _fold_all_of(branch)
            for key, value in branch.items():
                out.setdefault(key, value)
    return out


def accepts_null(node: Any, root: Mapping[str, Any] | None = None) -> bool:
    """Whether ``node`` surely accepts ``null`` (a ``$ref`` is followed only given ``root``)."""
    if isinstance(node, bool):
        return node
    if not isinstance(node, dict):
        return False
    if "$ref" in node:
        if root is None or not isinstance(node["$ref"], str):
            return False
        try:
            target = _pointer(root, node["$ref"], "")
        except ValidationError:
            return False
        if len(node) > 1 and not accepts_null({k: v for k, v in node.items() if k != "$ref"}):
            return False
        return accepts_null(target, None)  # one step only: a recursive reference must end
    if any(key in node for key in ("not", "allOf", "if")):
        return False
    kinds = node.get("type")
    if kinds is not None and kinds != "null" and not (isinstance(kinds, list) and "null" in kinds):
        return False
    if "enum" in node and (not isinstance(node["enum"], list) or None not in node["enum"]):
        return False
    if "const" in node and node["const"] is not None:
        return False
    for union in ("anyOf", "oneOf"):
        branches = node.get(union)
        if isinstance(branches, list) and not any(accepts_null(b, root) for b in branches):
            return False
    return True


def schema_text(schema: Mapping[str, Any]) -> str:
    """The JSON text a schema is cached by: compact, keys in the schema's own order."""
    return json.dumps(schema, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
