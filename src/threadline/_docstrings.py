"""Read a function's description and its parameters' descriptions from its docstring.

Three styles are understood, and may not be mixed within one docstring:

- Google: an ``Args:`` (or ``Arguments:``, ``Attributes:``, ``Parameters:``, ``Params:``,
  ``Keyword Args:``)
  section of ``name: text`` or ``name (type): text`` lines, continued on deeper-indented lines.
- NumPy: a ``Parameters`` heading underlined with dashes, then ``name : type`` lines with the
  text indented below them.
- Sphinx: ``:param name: text`` or ``:param type name: text`` fields.

The description is the prose before the first section or field, its paragraphs kept.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from dataclasses import field

__all__ = ["Docstring", "parse_docstring"]


@dataclass(frozen=True, slots=True)
class Docstring:
    """What a docstring says: the prose before its sections and each parameter's text."""

    description: str = ""
    parameters: dict[str, str] = field(default_factory=dict)


_GOOGLE_PARAMETERS = frozenset(
    {
        "args",
        "arguments",
        "attributes",
        "parameters",
        "params",
        "keyword args",
        "keyword arguments",
        "other parameters",
    }
)
_GOOGLE_HEADING = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_UNDERLINE = re.compile(r"^-{3,}\s*$")
_NUMPY_PARAMETERS = frozenset({"parameters", "other parameters", "keyword arguments"})
_NUMPY_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?::.*)?$")
_SPHINX_FIELD = re.compile(r"^:(\w+)(?:\s+([^:]*?))?\s*:\s*(.*)$")
_SPHINX_PARAMETERS = frozenset({"param", "parameter", "arg", "argument", "key", "keyword"})


def parse_docstring(text: str | None) -> Docstring:
    """Parse ``text`` (a raw ``__doc__``); anything not understood is left out, never an error."""
    if not text or not text.strip():
        return Docstring()
    lines = inspect.cleandoc(text).splitlines()
    start = _first_section(lines)
    description = _prose(lines[:start])
    rest = lines[start:]
    parameters = _google(rest) or _numpy(rest) or _sphinx(rest)
    return Docstring(description, parameters)


def _first_section(lines: list[str]) -> int:
    for index, line in enumerate(lines):
        stripped = line.strip()
        if line[:1].isspace() or not stripped:
            continue
        if _GOOGLE_HEADING.match(stripped) or _SPHINX_FIELD.match(stripped):
            return index
        if index + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[index + 1].strip()):
            return index
    return len(lines)


def _prose(lines: list[str]) -> str:
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n\n".join(" ".join(paragraph) for paragraph in paragraphs if paragraph)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    index = 0
    while index < len(lines):
        heading = _GOOGLE_HEADING.match(lines[index].strip())
        index += 1
        if heading is None or heading.group(1).strip().lower() not in _GOOGLE_PARAMETERS:
            continue
        body: list[str] = []
        while index < len(lines) and (not lines[index].strip() or _indent(lines[index]) > 0):
            body.append(lines[index])
            index += 1
        _entries(body, _GOOGLE_ENTRY, found, text_on_first_line=True)
    return found


def _numpy(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    index = 0
    while index + 1 < len(lines):
        title = lines[index].strip().lower()
        underlined = _NUMPY_UNDERLINE.match(lines[index + 1].strip()) is not None
        index += 1
        if not underlined or title not in _NUMPY_PARAMETERS:
            continue
        index += 1
        body: list[str] = []
        while index < len(lines) and not (
            index + 1 < len(lines)
            and lines[index].strip()
            and _NUMPY_UNDERLINE.match(lines[index + 1].strip())
        ):
            body.append(lines[index])
            index += 1
        _entries(body, _NUMPY_ENTRY, found, text_on_first_line=False)
    return found


def _entries(
    body: list[str], entry: re.Pattern[str], found: dict[str, str], *, text_on_first_line: bool
) -> None:
    """Entries start at the shallowest indent of ``body``; deeper lines continue the text."""
    indents = [_indent(line) for line in body if line.strip()]
    if not indents:
        return
    base = min(indents)
    name: str | None = None
    text: list[str] = []
    for line in body:
        stripped = line.strip()
        if not stripped or _indent(line) > base:
            text.append(stripped)  # an empty line separates paragraphs of one entry's text
            continue
        if name is not None:
            found[name] = _prose(text)
        match = entry.match(stripped)
        name = None if match is None else match.group(1)
        first = match.group(2).strip() if match is not None and text_on_first_line else ""
        text = [first] if first else []
    if name is not None:
        found[name] = _prose(text)


def _sphinx(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    name: str | None = None
    text: list[str] = []
    for line in [*lines, ":end:"]:
        stripped = line.strip()
        match = _SPHINX_FIELD.match(stripped) if not line[:1].isspace() else None
        if match is None:
            if name is not None and stripped:
                text.append(stripped)
            continue
        if name is not None:
            found[name] = " ".join(text)
        name, text = None, []
        if match.group(1) in _SPHINX_PARAMETERS and match.group(2):
            name = match.group(2).split()[-1].lstrip("*")
            text = [match.group(3).strip()] if match.group(3).strip() else []
    return found
