"""JSON Schema adapted to what each provider takes: pure, deterministic and cached.

A tool's ``parameters`` are written once, as standard JSON Schema; providers differ in what
they read. Each *dialect* below is a function from a schema to a schema:

- ``"standard"``: unchanged (Anthropic, OpenAI without strict mode).
- ``"inline"``: every local ``$ref`` replaced by what it points to and ``$defs`` removed, for
  providers without references. A recursive schema cannot be inlined and is refused.
- ``"gemini"``: inlined, then cut to Gemini's schema subset (an OpenAPI 3.0 subset): ``type``
  lists become ``anyOf``, ``oneOf`` becomes ``anyOf``, ``allOf`` is merged into its parent,
  ``const`` becomes a one-string ``enum``, an ``enum`` of non-strings is dropped (its values
  are named in the description), and keywords Gemini rejects are removed.
- ``"gemini_json"``: JSON Schema for Gemini's JSON Schema fields (``parametersJsonSchema``,
  ``responseJsonSchema``), for the schemas the subset cannot express (the module
  ``_schemas_gemini`` says which). ``$ref`` is inlined where it can be, kept (with ``$defs``)
  where the schema is recursive; ``const`` becomes a one-value ``enum`` with its type, an integer
  ``exclusiveMinimum``/``exclusiveMaximum`` the ``minimum``/``maximum`` it means (a number's
  goes into the description), ``allOf`` is merged and keywords Gemini does not list are
  removed. Refused, with a ``threadline.UnsupportedContentError`` naming the keyword: an
  ``enum`` or ``const`` of booleans or of objects, a reference outside ``$defs`` and a
  ``$ref`` loop through required fields only (Gemini refuses those).
- ``"openai_strict"``: OpenAI's strict mode. Every object gets ``additionalProperties: false``
  and lists every property as required; a property the schema left optional is made nullable
  (``null`` then stands for "absent": ``drop_strict_nulls`` removes it from the arguments
  a model sends back). ``oneOf`` becomes ``anyOf`` and a ``default`` moves into the
  description. A schema whose objects take keys it does not name (``additionalProperties``
  other than ``false``, ``patternProperties``, an object without ``properties``) or that uses
  a keyword strict mode lacks is refused with the path of the offending schema.

The law (``tests/property/test_tool_schemas.py``): every value the original schema accepts,
the adapted one accepts too -- for strict mode, once its absent optional keys are sent as
``null`` -- and adapting an adapted schema changes nothing. Removing a keyword only ever widens
a schema; no rewrite here narrows one.

Results are cached by the schema's JSON text and dialect, and each call returns a fresh copy,
so a caller may change what it gets.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from typing import Literal
from typing import TypeAlias
from typing import get_args

import pydantic_core

from threadline._schema_nodes import _ANNOTATIONS
from threadline._schema_nodes import _GEMINI_KEYWORDS
from threadline._schema_nodes import Schema
from threadline._schema_nodes import _children
from threadline._schema_nodes import _error
from threadline._schema_nodes import _fold_all_of
from threadline._schema_nodes import _inline
from threadline._schema_nodes import _pointer
from threadline._schema_nodes import accepts_null
from threadline._schema_nodes import schema_text
from threadline._schemas_gemini import gemini_json
from threadline.errors import ValidationError

__all__ = [
    "DIALECTS",
    "Dialect",
    "accepts_null",
    "adapt_schema",
    "adapt_schema_text",
    "drop_strict_nulls",
    "schema_text",
]

Dialect: TypeAlias = Literal["standard", "inline", "gemini", "gemini_json", "openai_strict"]
DIALECTS: tuple[Dialect, ...] = get_args(Dialect)

# -- Gemini -----------------------------------------------------------------------------------

_GEMINI_FORMATS = frozenset({"date-time", "enum", "float", "double", "int32", "int64"})


def _gemini(schema: dict[str, Any]) -> Schema:
    def walk(node: Any, path: str) -> Any:
        if isinstance(node, bool):
            return {}  # Gemini takes no boolean schema; ``false`` becomes ``{}``, wider
        if not isinstance(node, dict):
            return node
        node = dict(node)
        if "allOf" in node:
            node = _fold_all_of(node)
        if "oneOf" in node:
            branches = node.pop("oneOf")
            node.setdefault("anyOf", branches)  # any of is wider than exactly one of
        if "const" in node:
            value = node.pop("const")
            if "enum" not in node:
                node["enum"] = [value]
        strings = "enum" in node and all(isinstance(value, str) for value in node["enum"])
        if strings and "type" not in node and "anyOf" not in node:
            node["type"] = "string"  # Gemini: "enum: only allowed for STRING type"
        if "enum" in node and not strings:
            values = ", ".join(json.dumps(value) for value in node.pop("enum"))
            note = f"One of: {values}."
            text = node.get("description")
            node["description"] = f"{text}\n\n{note}" if isinstance(text, str) and text else note
        kinds = node.get("type")
        if isinstance(kinds, list):
            if len(kinds) <= 1:
                node.pop("type")
                if kinds:
                    node["type"] = kinds[0]
            else:
                del node["type"]
                if "anyOf" not in node:
                    node["anyOf"] = [{"type": kind} for kind in kinds]
        if isinstance(node.get("items"), list) or "prefixItems" in node:
            # Without its prefix, ``items`` would apply to every item (narrower): drop both.
            node.pop("items", None)
        if "format" in node and node["format"] not in _GEMINI_FORMATS:
            del node["format"]
        kept = {key: value for key, value in node.items() if key in _GEMINI_KEYWORDS}
        return _children(kept, path, walk)

    return walk(schema, "#")  # type: ignore[no-any-return]


# -- OpenAI strict mode -----------------------------------------------------------------------

_STRICT_REFUSED = {
    "patternProperties": "keys matching a pattern",
    "propertyNames": "constraints on key names",
    "unevaluatedProperties": "unevaluated properties",
    "unevaluatedItems": "unevaluated items",
    "dependentSchemas": "dependent schemas",
    "dependentRequired": "dependent required keys",
    "if": "conditional schemas (if/then/else)",
    "then": "conditional schemas (if/then/else)",
    "else": "conditional schemas (if/then/else)",
    "not": "negated schemas (not)",
    "allOf": "allOf",
}


def _is_object(node: dict[str, Any]) -> bool:
    kinds = node.get("type")
    return (
        kinds == "object"
        or (isinstance(kinds, list) and "object" in kinds)
        or ("properties" in node)
    )


def _strict(schema: dict[str, Any]) -> Schema:
    def walk(node: Any, path: str) -> Any:
        if isinstance(node, bool) or not isinstance(node, dict):
            raise _error(
                path,
                "a boolean schema (any value, or none) cannot be made strict; give it a type",
                "schema_strict",
            )
        for keyword, what in _STRICT_REFUSED.items():
            if keyword in node:
                raise _error(
                    path,
                    f"OpenAI strict mode has no {what} ({keyword!r}); drop it from the schema "
                    "or send this tool with strict=False",
                    "schema_strict",
                )
        node = dict(node)
        if "oneOf" in node:
            node.setdefault("anyOf", node.pop("oneOf"))
        if "default" in node:
            note = f"Default: {json.dumps(node.pop('default'))}."
            text = node.get("description")
            if isinstance(text, str) and text.strip():
                text = text.rstrip()
                note = f"{text} {note}" if text.endswith((".", "!", "?")) else f"{text}. {note}"
            node["description"] = note
        if not any(key in node for key in ("type", "anyOf", "$ref", "enum", "const")):
            raise _error(
                path,
                "the schema accepts any value, which OpenAI strict mode cannot express; give it "
                "a type (for a Python parameter, annotate it with a JSON type, not Any)",
                "schema_strict",
            )
        if "$ref" in node:
            notes = [key for key in node if key != "$ref" and key not in _ANNOTATIONS]
            if notes:
                raise _error(
                    path,
                    f"a $ref with other keywords ({', '.join(notes)}) cannot be made strict; "
                    "move them into the definition it refers to",
                    "schema_strict",
                )
            return {"$ref": node["$ref"]}
        closed = _is_object(node)
        if closed:
            node = _strict_object(node, path)
            del node["additionalProperties"]  # ``false``, set again below: not a schema to walk
        out = _children(node, path, walk)
        if closed:
            out["additionalProperties"] = False
        if isinstance(out.get("properties"), dict):
            optional = [name for name in out["properties"] if name not in node.get("required", ())]
            for name in optional:
                prop = _nullable(out["properties"][name])
                original = node["properties"][name]
                first = prop.get("anyOf", [{}])[0]
                if isinstance(first, dict) and "$ref" in first and isinstance(original, dict):
                    # The description a $ref may not carry goes on the union around it.
                    carried = {k: original[k] for k in ("title", "description") if k in original}
                    prop = {**prop, **carried}
                out["properties"][name] = prop
            out["required"] = list(out["properties"])
        return out

    return walk(schema, "#")  # type: ignore[no-any-return]


def _strict_object(node: dict[str, Any], path: str) -> dict[str, Any]:
    extra = node.get("additionalProperties", False)
    if extra is not False:
        raise _error(
            path,
            "an object that takes keys it does not name (additionalProperties), such as a "
            "dict parameter, cannot be made strict; name its keys with a model or TypedDict, "
            "or send this tool with strict=False",
            "schema_strict",
        )
    if "properties" not in node and path != "#":
        raise _error(
            path,
            "an object without 'properties' takes any keys, which OpenAI strict mode cannot "
            "express; name its keys with a model or TypedDict, or send this tool with "
            "strict=False",
            "schema_strict",
        )
    return {**node, "properties": node.get("properties", {}), "additionalProperties": False}


def _nullable(node: Any) -> Any:
    if accepts_null(node):
        return node
    if "$ref" in node or "const" in node or ("anyOf" in node and "type" in node):
        notes = {key: node[key] for key in ("title", "description") if key in node}
        rest = {key: value for key, value in node.items() if key not in notes}
        return {"anyOf": [rest, {"type": "null"}], **notes}
    if "anyOf" in node:
        return {**node, "anyOf": [*node["anyOf"], {"type": "null"}]}
    out = dict(node)
    kinds = out.get("type")
    if kinds is not None:
        out["type"] = [*kinds, "null"] if isinstance(kinds, list) else [kinds, "null"]
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    return out


# -- The cached entry points ------------------------------------------------------------------

_ADAPTERS: dict[str, Callable[[dict[str, Any]], Schema]] = {
    "inline": _inline,
    "gemini": lambda schema: _gemini(_inline(schema)),  # type: ignore[arg-type]
    "gemini_json": gemini_json,
    "openai_strict": _strict,
}


@functools.lru_cache(maxsize=1024)
def adapt_schema_text(text: str, dialect: Dialect) -> bytes:
    """The adapted schema for a schema's JSON ``text``, as JSON bytes (cached).

    Raises:
        threadline.ValidationError: the schema cannot be adapted to ``dialect``; it names the
            path of the offending schema and the fix.
    """
    if dialect not in DIALECTS:
        raise ValueError(f"unknown schema dialect {dialect!r}; use one of {DIALECTS}")
    if dialect == "standard":
        return text.encode()
    adapted = _ADAPTERS[dialect](pydantic_core.from_json(text))
    return pydantic_core.to_json(adapted)


def adapt_schema(schema: Mapping[str, Any], dialect: Dialect) -> dict[str, Any]:
    """``schema`` adapted to ``dialect``: a fresh dict, computed once per schema and dialect.

    Raises:
        threadline.ValidationError: the schema cannot be adapted to ``dialect``; it names the
            path of the offending schema and the fix.
    """
    result: dict[str, Any] = pydantic_core.from_json(
        adapt_schema_text(schema_text(schema), dialect)
    )
    return result


def drop_strict_nulls(arguments: Any, schema: Mapping[str, Any]) -> Any:
    """The arguments a model sent under strict mode, without the ``null`` s that stand for
    parameters ``schema`` (the original, not the strict one) left optional.

    Only a ``null`` under a key that ``schema`` neither requires nor allows to be ``null`` is
    dropped: a parameter typed ``int | None`` keeps its ``null``. Objects are followed through
    ``properties``, ``items``, local ``$ref`` and the one ``anyOf``/``oneOf`` branch whose
    properties hold the object's keys. ``arguments`` itself is never changed.
    """
    root = schema

    def resolve(node: Any) -> Any:
        seen = 0
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and seen < 32:
            try:
                node = _pointer(root, node["$ref"], "")
            except ValidationError:
                return {}
            seen += 1
        return node

    def options(node: Any, depth: int) -> list[dict[str, Any]]:
        """The object schemas ``node`` may stand for, through nested unions and refs."""
        node = resolve(node)
        if not isinstance(node, dict) or depth > 16:
            return []
        found = [node] if isinstance(node.get("properties"), dict) else []
        for union in ("anyOf", "oneOf"):
            for option in node.get(union) or ():
                found.extend(options(option, depth + 1))
        return found

    def branch(node: dict[str, Any], value: dict[str, Any]) -> Any:
        """The object schema ``value`` was sent for: strict mode sends every key, so the one
        whose properties are exactly its keys, else the first that holds them all."""
        candidates = options(node, 0)
        keys = set(value)
        exact = [option for option in candidates if set(option["properties"]) == keys]
        wider = [option for option in candidates if set(option["properties"]) >= keys]
        return (exact or wider or [node])[0]

    def walk(value: Any, node: Any, depth: int) -> Any:
        node = resolve(node)
        if depth > 200 or not isinstance(node, dict):
            return value
        if isinstance(value, dict):
            node = branch(node, value)
            properties = node.get("properties")
            if not isinstance(properties, dict):
                return value
            required = node.get("required") or ()
            out: dict[str, Any] = {}
            for key, item in value.items():
                sub = properties.get(key)
                absent = item is None and key not in required and sub is not None
                if absent and not accepts_null(sub, root):
                    continue
                out[key] = walk(item, sub, depth + 1) if sub is not None else item
            return out
        if isinstance(value, list):
            items = node.get("items")
            if isinstance(items, dict):
                return [walk(item, items, depth + 1) for item in value]
            for union in ("anyOf", "oneOf"):
                for option in node.get(union) or ():
                    option = resolve(option)
                    if isinstance(option, dict) and isinstance(option.get("items"), dict):
                        return [walk(item, option["items"], depth + 1) for item in value]
        return value

    return walk(arguments, schema, 0)
