"""Hypothesis strategies that damage valid input: bytes-level and structure-level mutations.

Valid input goes deepest into the code under test; a few mutations of it reach the error paths
a parser's authors did not think of. ``mutated_bytes`` works on JSON text (flips, inserts of
JSON tokens, cuts, duplications); ``mutated_documents`` on a parsed document (a value anywhere
replaced by a hostile one, removed, duplicated or wrapped).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import strategies as st

from tests.strategies import json_values

# Pieces of JSON that parsers and readers trip over.
TOKENS = (
    b"[",
    b"]",
    b"{",
    b"}",
    b'"',
    b"\\",
    b",",
    b":",
    b"null",
    b"true",
    b"-0",
    b"1e999",
    b"-1e-999",
    b"123456789012345678901234567890",
    b'"\\ud800"',
    b'"\\u0000"',
    b"NaN",
    b"Infinity",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
    b'"type"',
    b'"text"',
    b'"tool_call"',
    b'"role"',
    b"[" * 300,
    b'{"a":' * 300,
    b"[" * 5000,
)


def nested(depth: int) -> Any:
    """``depth`` lists inside each other, built without recursion."""
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


# Values a hostile document puts where a reader expects something else.
HOSTILE_VALUES: tuple[Any, ...] = (
    None,
    True,
    0,
    -1,
    2**64,
    1.5,
    float("nan"),
    float("inf"),
    "",
    "x" * 5000,
    "data:image/png;base64,%%%",
    "data:,",
    "file:///etc/passwd",
    "../../etc/passwd",
    "\ud800",
    "\x00",
    [],
    {},
    [None],
    {"": None},
    {"type": "text"},
    {"type": None},
    b"\x00\xff",
    "not/a media type",
    nested(250),
    {"a": nested(120)},
    # Tool arguments as JSON text (OpenAI Chat, Mistral, Responses): deeper than the limits,
    # deeper than any parser, or holding numbers JSON text cannot carry back.
    '{"a":' + "[" * 150 + "]" * 150 + "}",
    '{"a":' + "[" * 1000 + "]" * 1000 + "}",
    "[" * 1000 + "]" * 1000,
    '{"a": NaN}',
    '{"a": 1e999}',
    '{"a": 1' + "0" * 5000 + "}",
    # Media types that carry a header or a path.
    "text/html\r\nX-Injected: 1",
    "image/png; charset=utf-8\r\n",
    # Python values JSON cannot hold, which only Python callers can hand over.
    {1: "x"},
    {None: 1},
    set(),
    10**5000,
)
# Deeper than any JSON parser reads: only Python callers can hand such a value over.
TOO_DEEP = nested(5000)


@st.composite
def mutated_bytes(draw: st.DrawFn, seed: bytes) -> bytes:
    """``seed`` with one to four byte-level mutations."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        operation = draw(st.sampled_from(["flip", "insert", "token", "cut", "repeat", "truncate"]))
        if operation == "flip" and data:
            data[min(at, len(data) - 1)] = draw(st.integers(0, 255))
        elif operation == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif operation == "token":
            data[at:at] = draw(st.sampled_from(TOKENS))
        elif operation == "cut":
            data[at : at + draw(st.integers(1, 64))] = b""
        elif operation == "repeat":
            piece = data[at : at + draw(st.integers(1, 64))]
            data[at:at] = piece * draw(st.integers(1, 3))
        elif operation == "truncate":
            del data[at:]
    return bytes(data)


def _positions(document: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in ``document``, found without recursion."""
    positions: list[tuple[Any, Any]] = []
    stack = [document]
    while stack:
        value = stack.pop()
        keys = list(value) if isinstance(value, dict) else range(len(value))
        for key in keys:
            positions.append((value, key))
            if isinstance(value[key], (dict, list)):
                stack.append(value[key])
    return positions


def copy_document(document: Any) -> Any:
    """A deep copy of the dicts and lists in ``document``, without recursion (some hostile
    values nest deeper than :func:`copy.deepcopy` can go)."""
    if not isinstance(document, (dict, list)):
        return document
    root: Any = {} if isinstance(document, dict) else []
    stack: list[tuple[Any, Any]] = [(document, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, value in items:
            if isinstance(value, (dict, list)):
                copied: Any = {} if isinstance(value, dict) else []
                stack.append((value, copied))
            else:
                copied = value
            if isinstance(target, dict):
                target[key] = copied
            else:
                target.append(copied)
    return root


def json_text(document: Any) -> bytes | None:
    """``document`` as JSON text (non-JSON values as their repr), or ``None`` when
    :func:`json.dumps` cannot write it: it nests too deeply, or holds an int too long to
    print (``10**5000``; such a number in JSON text is refused by the parser, which
    ``test_damaged_json`` reaches through mutated bytes anyway)."""
    try:
        return json.dumps(document, default=repr).encode("utf-8", "surrogatepass")
    except (RecursionError, ValueError):
        return None


@st.composite
def mutated_documents(draw: st.DrawFn, document: Any) -> Any:
    """A copy of ``document`` (dicts and lists) with one to three structural mutations, which
    may put in a value nested deeper than a JSON parser reads."""
    document = copy_document(document)
    hostile = st.sampled_from((*HOSTILE_VALUES, TOO_DEEP))
    for _ in range(draw(st.integers(1, 3))):
        positions = _positions(document) if isinstance(document, (dict, list)) else []
        if not positions:
            return copy_document(draw(hostile | json_values))
        container, key = draw(st.sampled_from(positions))
        operation = draw(st.sampled_from(["hostile", "random", "drop", "wrap", "double", "str"]))
        if operation == "hostile":
            container[key] = copy_document(draw(hostile))
        elif operation == "random":
            container[key] = draw(json_values)
        elif operation == "drop":
            del container[key]
        elif operation == "wrap":
            container[key] = draw(st.sampled_from([[container[key]], {"x": container[key]}]))
        elif operation == "double" and isinstance(container, list):
            container.insert(key, copy_document(container[key]))
        elif operation == "str" and not isinstance(container[key], (dict, list)):
            with contextlib.suppress(ValueError):  # str(10**5000) raises
                container[key] = str(container[key])
    return document
