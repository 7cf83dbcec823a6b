"""Gemini's two schema fields (private): which one a schema goes in, and its JSON Schema form.

Gemini reads a tool's parameters (and a structured output's schema) in either of two fields:
``parameters`` / ``responseSchema``, an OpenAPI 3.0 subset (the ``"gemini"`` dialect of
``threadline._schemas``), or ``parametersJsonSchema`` / ``responseJsonSchema``, JSON Schema
(the ``"gemini_json"`` dialect, built here). The two are mutually exclusive.

[`gemini_takes_subset`][threadline._schemas_gemini.gemini_takes_subset] decides per schema: a
schema the subset expresses as it is (its ``$ref`` s inlined; only the subset's keywords,
``const`` and ``enum`` of strings, objects that name their properties; ``additionalProperties:
false``, which ``tool_from_function`` writes on every tool, is left out: Gemini generates only
the properties a schema names) goes in the subset field, as it always has, which every
Gemini model and endpoint takes; any other goes in the JSON Schema field, where a dict's value
type, an integer enum or a recursive model arrive intact, instead of being cut down to a schema
the API refuses (``properties: should be non-empty for OBJECT type``, ``enum: only allowed for
STRING type``).

What the JSON Schema field still refuses, and what is done about it:

- a ``$ref`` with other keywords beside it (*only description and default can be set
  alongside it*): references are inlined unless the schema is recursive; a kept ``$ref`` with
  other keywords goes inside an ``anyOf`` of one branch, which carries them;
- a ``$ref`` loop through required fields only (*ref loops are only supported if they include
  optional or nullable property values, or a potentially-zero-length array items*): refused;
- ``const`` (not among the keywords Gemini lists): a one-value ``enum`` with its type;
- an ``enum`` of anything but strings and numbers: ``null`` goes into an ``anyOf`` beside the
  rest; booleans, objects and arrays are refused.

Keywords Gemini does not list are removed (which only widens the schema), except that an
integer's ``exclusiveMinimum``/``exclusiveMaximum`` becomes the ``minimum``/``maximum`` it
means and a number's is said in the description.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from threadline._schema_nodes import _ANNOTATIONS
from threadline._schema_nodes import _GEMINI_KEYWORDS
from threadline._schema_nodes import _children
from threadline._schema_nodes import _fold_all_of
from threadline._schema_nodes import _inline
from threadline._schema_nodes import accepts_null
from threadline._schema_nodes import schema_text
from threadline.errors import UnsupportedContentError
from threadline.errors import ValidationError

__all__ = ["gemini_json", "gemini_takes_subset", "gemini_takes_subset_text"]

_DROPPED_NOTES = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$anchor",
        "examples",
        "example",
        "deprecated",
        "readOnly",
        "writeOnly",
        "discriminator",
        "contentEncoding",
        "contentMediaType",
    }
)
"""Annotations: removing one changes nothing a value must be."""

_JSON_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "default",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "minProperties",
        "maxProperties",
        "propertyOrdering",
        "$ref",
        "$defs",
    }
)
"""What the JSON Schema field keeps: the keywords Gemini lists for it, and the subset's own."""

_FORMATS = frozenset({"date-time", "date", "time", "enum", "float", "double", "int32", "int64"})
_SUBSET_EXTRA = frozenset({"const", "oneOf", "$ref", "$defs", "definitions"})
_CONST_TYPES = ((bool, "boolean"), (str, "string"), (int, "integer"), (float, "number"))


def _refuse(path: str, problem: str) -> UnsupportedContentError:
    return UnsupportedContentError(
        f"tool parameters schema at {path or '#'}: {problem}", provider="gemini"
    )


# -- Which field ------------------------------------------------------------------------------


def gemini_takes_subset(schema: Mapping[str, Any]) -> bool:
    """Whether Gemini's OpenAPI subset (``parameters``, ``responseSchema``) expresses
    ``schema`` as it is; if not, it goes as JSON Schema (``parametersJsonSchema``,
    ``responseJsonSchema``). Cached by the schema's JSON text."""
    return gemini_takes_subset_text(schema_text(schema))


@functools.lru_cache(maxsize=1024)
def gemini_takes_subset_text(text: str) -> bool:
    """[`gemini_takes_subset`][threadline._schemas_gemini.gemini_takes_subset] for a schema's
    JSON text (cached)."""
    try:
        inlined = _inline(json.loads(text))
    except ValidationError:  # recursive, or too large once inlined: only $ref can say it
        return False
    return _fits(inlined, top=True)


def _fits(node: Any, *, top: bool = False) -> bool:
    if not isinstance(node, dict):
        return False  # a boolean schema
    allowed = _GEMINI_KEYWORDS | _SUBSET_EXTRA | _DROPPED_NOTES
    if node.get("additionalProperties", False) is not False:
        return False  # a dict, or an open object: only JSON Schema says what its values are
    if any(key not in allowed and key != "additionalProperties" for key in node):
        return False  # additionalProperties, allOf, exclusiveMinimum, prefixItems...
    if "const" in node and not isinstance(node["const"], str):
        return False
    if "enum" in node and not all(isinstance(value, str) for value in node["enum"]):
        return False
    kinds = node.get("type")
    is_object = kinds == "object" or (isinstance(kinds, list) and "object" in kinds)
    if (is_object or "properties" in node) and not node.get("properties") and not top:
        return False  # "properties: should be non-empty for OBJECT type"
    subs: list[Any] = list((node.get("properties") or {}).values())
    subs.extend(node.get("anyOf") or ())
    subs.extend(node.get("oneOf") or ())
    if "items" in node:
        if isinstance(node["items"], list):
            return False
        subs.append(node["items"])
    return all(_fits(sub) for sub in subs)


# -- The JSON Schema form ---------------------------------------------------------------------


def gemini_json(schema: dict[str, Any]) -> Any:
    """``schema`` for Gemini's JSON Schema fields.

    Raises:
        threadline.UnsupportedContentError: the schema uses what the field refuses (a boolean
            or object ``enum``/``const``, a reference outside ``$defs``, a ``$ref`` loop of
            required fields), naming the keyword and the fix.
    """
    try:
        inlined = _inline(schema)
    except ValidationError as error:
        if error.errors[0].type not in ("schema_recursive", "schema_too_large"):
            raise
        return _with_refs(schema)
    return _node(inlined, "#")


def _with_refs(schema: dict[str, Any]) -> Any:
    """A recursive schema: ``$defs`` kept, each ``$ref`` alone, the root an object schema."""
    definitions = dict(schema.get("$defs") or {})
    for name, sub in (schema.get("definitions") or {}).items():
        if name in definitions:
            raise _refuse(
                f"#/definitions/{name}",
                f"{name!r} is defined under both $defs and definitions; Gemini reads $defs "
                "only, so give one of them another name",
            )
        definitions[name] = sub
    root = {k: v for k, v in schema.items() if k not in ("$defs", "definitions")}
    if isinstance(root.get("$ref"), str):  # a model's schema: the root is a reference
        target = definitions.get(_def_name(root["$ref"], "#"))
        rest = {k: v for k, v in root.items() if k != "$ref"}
        root = {**(target if isinstance(target, dict) else {}), **rest}
    out = _node(root, "#")
    out["$defs"] = {name: _node(sub, f"#/$defs/{name}") for name, sub in definitions.items()}
    _refuse_required_loops(out["$defs"])
    return out


def _def_name(ref: str, path: str) -> str:
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix) and "/" not in ref[len(prefix) :]:
            return ref[len(prefix) :].replace("~1", "/").replace("~0", "~")
    raise _refuse(
        path,
        f"$ref {ref!r} in a recursive schema: Gemini resolves references to $defs only; "
        "move the definition under $defs",
    )


def _node(node: Any, path: str) -> Any:
    if node is True or node is False:
        return {}  # not a schema Gemini lists: ``true`` is ``{}``; ``false`` widens to it
    if not isinstance(node, dict):
        return node
    node = {key: value for key, value in node.items() if key not in _DROPPED_NOTES}
    if "$ref" in node:
        return _ref(node, path)
    if "allOf" in node:
        node = _fold_all_of(node)
        if "$ref" in node:
            return _ref(node, path)
    if isinstance(node.get("items"), list):  # the older spelling of prefixItems
        node["prefixItems"] = node.pop("items")
        extra = node.pop("additionalItems", None)
        if isinstance(extra, dict):
            node["items"] = extra
    if "const" in node:
        node = _const(node, path)
    _bounds(node)
    if "format" in node and node["format"] not in _FORMATS:
        del node["format"]
    if "patternProperties" in node and node.get("additionalProperties", True) is not True:
        del node["additionalProperties"]  # without its patterns it would refuse their keys
    kept = {key: value for key, value in node.items() if key in _JSON_KEYWORDS}
    extra_keys = kept.pop("additionalProperties", None)
    out = _children(kept, path, _node)
    if extra_keys is not None:
        out["additionalProperties"] = (
            extra_keys
            if isinstance(extra_keys, bool)
            else _node(extra_keys, f"{path}/additionalProperties")
        )
    if "enum" in out:
        return _enum(out, path)
    return out


def _ref(node: dict[str, Any], path: str) -> dict[str, Any]:
    """A kept ``$ref``: alone, or beside ``description`` and ``default`` only; other
    keywords go on an ``anyOf`` of one branch around it."""
    ref = node["$ref"]
    target = {"$ref": f"#/$defs/{_def_name(ref, path)}"} if isinstance(ref, str) else {}
    notes: dict[str, Any] = {k: node[k] for k in ("description", "default") if k in node}
    rules = {k: v for k, v in node.items() if k not in notes and k not in _ANNOTATIONS}
    del rules["$ref"]
    if not rules:
        return {**target, **notes}
    return {**_node(rules, path), "anyOf": [target], **notes}


def _const(node: dict[str, Any], path: str) -> dict[str, Any]:
    value = node.pop("const")
    if value is None:
        node["type"] = "null"
        return node
    if isinstance(value, (bool, dict, list)):
        raise _refuse(
            path,
            f"'const' {json.dumps(value)}: Gemini's JSON Schema takes const values (as an "
            "enum) of strings and numbers only; use a string Literal, or a plain bool field",
        )
    if "enum" in node and value not in node["enum"]:
        raise _refuse(path, "'const' is not one of its own 'enum': no value fits the schema")
    node["enum"] = [value]
    if "type" not in node:
        node["type"] = next(name for kind, name in _CONST_TYPES if isinstance(value, kind))
    return node


def _enum(node: dict[str, Any], path: str) -> dict[str, Any]:
    values = node["enum"]
    bad = [v for v in values if v is not None and not isinstance(v, (str, int, float))]
    if bad or any(isinstance(v, bool) for v in values):
        shown = json.dumps(next(v for v in values if v is not None and not _plain(v)))
        raise _refuse(
            path,
            f"'enum' holds {shown}: Gemini's JSON Schema takes enums of strings and numbers "
            "only; use strings (a Literal of strings or a str Enum)",
        )
    _enum_type(node)
    if None not in values:
        return node
    rest = {**node, "enum": [v for v in values if v is not None]}
    _enum_type(rest)
    kinds = rest.get("type")
    if isinstance(kinds, list):
        rest["type"] = [kind for kind in kinds if kind != "null"] or rest.pop("type")
    elif kinds == "null":
        del rest["type"]
    notes: dict[str, Any] = {
        k: rest.pop(k) for k in ("title", "description", "default") if k in rest
    }
    if not rest["enum"]:
        return {"type": "null", **notes}
    return {"anyOf": [rest, {"type": "null"}], **notes}


def _enum_type(node: dict[str, Any]) -> None:
    """An enum without a type gets the one its values share (strings, integers, numbers)."""
    values = [v for v in node["enum"] if v is not None]
    if "type" in node or "anyOf" in node or not values or None in node["enum"]:
        return
    if all(isinstance(v, str) for v in values):
        node["type"] = "string"
    elif all(isinstance(v, int) for v in values):
        node["type"] = "integer"
    elif all(isinstance(v, (int, float)) for v in values):
        node["type"] = "number"


def _plain(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _bounds(node: dict[str, Any]) -> None:
    """``exclusiveMinimum``/``exclusiveMaximum``, which Gemini does not list: an integer's is
    the ``minimum``/``maximum`` it means; a number's is said in the description."""
    notes = []
    for key, bound, step, word in (
        ("exclusiveMinimum", "minimum", 1, "greater"),
        ("exclusiveMaximum", "maximum", -1, "less"),
    ):
        if key not in node:
            continue
        value = node.pop(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue  # draft 4's boolean form: the bound itself then stays, wider
        if node.get("type") == "integer" and isinstance(value, int):
            inclusive: float = value + step
            current = node.get(bound)
            if isinstance(current, (int, float)) and not isinstance(current, bool):
                inclusive = max(inclusive, current) if step > 0 else min(inclusive, current)
            node[bound] = inclusive
        else:
            notes.append(f"Must be {word} than {json.dumps(value)}.")
    if notes:
        text = node.get("description")
        note = " ".join(notes)
        node["description"] = f"{text}\n\n{note}" if isinstance(text, str) and text else note


# -- Ref loops of required fields ---------------------------------------------------------


def _refuse_required_loops(definitions: Mapping[str, Any]) -> None:
    """Refuse a ``$ref`` loop every step of which is required: Gemini takes a loop only
    through an optional or nullable property or the items of an array that may be empty."""
    edges = {name: _required_refs(sub, f"$defs.{name}") for name, sub in definitions.items()}
    state: dict[str, int] = {}

    def visit(name: str) -> None:
        state[name] = 1
        for target, where in edges.get(name, ()):
            if state.get(target) == 1:
                raise _refuse(
                    "#/" + where.replace(".", "/"),
                    f"a $ref loop of required fields (back to {target!r} at {where}): Gemini "
                    "takes recursion only through an optional or nullable field or a list "
                    "that may be empty; make one field of the loop optional (a default of "
                    "None) or a list",
                )
            if state.get(target) is None and target in edges:
                visit(target)
        state[name] = 2

    for name in edges:
        if name not in state:
            visit(name)


def _required_refs(node: Any, where: str) -> list[tuple[str, str]]:
    """The ``$defs`` a value of ``node`` must hold, through required steps only."""
    if not isinstance(node, dict):
        return []
    if isinstance(node.get("$ref"), str):
        return [(node["$ref"].rsplit("/", 1)[-1], where)]
    found: list[tuple[str, str]] = []
    for union in ("anyOf", "oneOf"):
        for index, branch in enumerate(node.get(union) or ()):
            found.extend(_required_refs(branch, f"{where}.{union}.{index}"))
    required = node.get("required") or ()
    for name, sub in (node.get("properties") or {}).items():
        if name in required and not accepts_null(sub):
            found.extend(_required_refs(sub, f"{where}.properties.{name}"))
    minimum = node.get("minItems", 0)
    if isinstance(node.get("items"), dict) and isinstance(minimum, int) and minimum > 0:
        found.extend(_required_refs(node["items"], f"{where}.items"))
    for index, item in enumerate(node.get("prefixItems") or ()):
        if isinstance(minimum, int) and index < minimum:
            found.extend(_required_refs(item, f"{where}.prefixItems.{index}"))
    return found
