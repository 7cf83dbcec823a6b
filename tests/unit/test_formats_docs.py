"""The per-format tables of the docs agree with the format descriptors (issue 38, item 1): each
table has a row (or column) for every registered format that has the piece it describes, names
no other, and where a row states a descriptor's value (a forced tool, a cache mark, the tool
name rule) states the right one."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from threadline.codecs import get_codec
from threadline.codecs._formats import DESCRIPTORS
from threadline.codecs._formats import FormatDescriptor
from threadline.codecs._tool_names import STANDARD

DOCS = Path(__file__).resolve().parents[2] / "docs"
_NAME = re.compile(r"`([a-z_]+)`")


def table(doc: str, header: str) -> list[list[str]]:
    """The rows (cells, stripped) of the table of ``doc`` whose header line starts with
    ``header`` (is ``header``, for one ending in a newline), the header row first and the
    separator row left out."""
    lines = (DOCS / doc).read_text(encoding="utf-8").splitlines()
    starts = [at for at, line in enumerate(lines) if (line + "\n").startswith(header)]
    assert len(starts) == 1, f"docs/{doc}: {len(starts)} tables start with {header!r}"
    rows = []
    for line in lines[starts[0] :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not all(set(cell) <= set("-:") for cell in cells):
            rows.append(cells)
    return rows


def named(cell: str) -> list[str]:
    return _NAME.findall(cell)


def _every(d: FormatDescriptor) -> bool:
    return True


# (doc, header, which formats the table must name, a check of a format's row)
RowCheck = Callable[[FormatDescriptor, str], bool]
TABLES: list[tuple[str, str, Callable[[FormatDescriptor], bool], RowCheck | None]] = [
    ("providers.md", "| codec | `encode` returns", _every, None),
    ("providers.md", "| codec | the API takes | any other id", _every, None),
    (
        "providers.md",
        "| codec | the API takes |\n",
        _every,
        lambda d, row: ("`^[a-zA-Z0-9_-]{1,64}$`" in row) == (d.codec().TOOL_NAMES == STANDARD),
    ),
    ("providers.md", "| codec | reasoning goes back as", _every, None),
    ("streaming.md", "| codec name | what you feed", _every, None),
    ("usage.md", "| provider | `input_tokens`", _every, None),
    ("tools.md", "| Format | Tools |", _every, None),
    (
        "tools.md",
        "| Format | What is sent |",
        lambda d: d.output_schema is not None,
        lambda d, row: ("a forced tool" in row) == (d.forced_tool is not None),
    ),
    (
        "tools.md",
        "| Format | A breakpoint is |",
        _every,
        lambda d, row: (
            f'"type": "{d.cache.mark["type"]}"' in row if d.cache else "| nothing:" in row
        ),
    ),
]


@pytest.mark.parametrize(
    ("doc", "header", "has_piece", "check"), TABLES, ids=[f"{t[0]}:{t[1]}" for t in TABLES]
)
def test_a_per_format_table_names_every_format(
    doc: str,
    header: str,
    has_piece: Callable[[FormatDescriptor], bool],
    check: RowCheck | None,
) -> None:
    rows = table(doc, header)[1:]
    seen: list[str] = []
    for row in rows:
        names = named(row[0])
        assert names, f"docs/{doc}: a row names no codec: {row[0]!r}"
        for name in names:
            assert name in DESCRIPTORS, f"docs/{doc}: {name!r} is no registered format"
            if check is not None:
                assert check(DESCRIPTORS[name], " | ".join(row)), f"docs/{doc}: {name}'s row"
        seen.extend(names)
    expected = sorted(name for name, d in DESCRIPTORS.items() if has_piece(d))
    assert sorted(seen) == expected, f"docs/{doc}: the table {header.strip()!r}"


def test_the_carries_table_has_a_column_per_format() -> None:
    header = table("providers.md", "| part | `openai_chat`")[0]
    assert sorted(name for cell in header[1:] for name in named(cell)) == sorted(DESCRIPTORS)


def test_each_codec_module_is_in_the_api_reference() -> None:
    text = (DOCS / "reference" / "codecs.md").read_text(encoding="utf-8")
    for name, d in DESCRIPTORS.items():
        if d.module.startswith("threadline.codecs."):
            module = d.module.partition(":")[0]  # a dialect's codec object: its module
            assert f"::: {module}\n" in text + "\n", f"docs/reference/codecs.md lacks {name}"


def test_each_format_has_its_section() -> None:
    text = (DOCS / "providers.md").read_text(encoding="utf-8")
    for name in DESCRIPTORS:
        assert re.search(rf"^## .+ \(`{name}`\)$", text, re.MULTILINE), name
        assert get_codec(name).__doc__, name


PARTIAL: list[tuple[str, str]] = [("providers.md", "| format | kept | where | sent back |")]
"""Per-format tables that list only some formats (what a format keeps beyond the common
parts): a row names registered formats only."""

_FIRST_CELLS = {"codec", "codec name", "format", "provider"}


@pytest.mark.parametrize(("doc", "header"), PARTIAL)
def test_a_partial_per_format_table_names_registered_formats(doc: str, header: str) -> None:
    rows = table(doc, header)[1:]
    assert rows, f"docs/{doc}: the table {header!r} is empty"
    for row in rows:
        names = named(row[0])
        assert names, f"docs/{doc}: a row names no codec: {row[0]!r}"
        assert set(names) <= set(DESCRIPTORS), f"docs/{doc}: {names} are not all registered"


def test_the_refusals_table_names_formats_by_their_labels() -> None:
    """ "What the APIs refuse" names a format by the start of its label (``Anthropic``,
    ``OpenAI Responses``); a name that starts no registered format's label is a stale row."""
    labels = [d.label for d in DESCRIPTORS.values()]
    for row in table("providers.md", "| provider | the API refuses |")[1:]:
        for name in (part.strip() for part in row[0].split(",")):
            assert any(label.startswith(name) for label in labels), f"{name!r}: no such format"


def test_each_format_section_has_its_wire_table() -> None:
    """Each format's section of ``docs/providers.md`` says what goes on the wire, and no other
    section has such a table."""
    text = (DOCS / "providers.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.MULTILINE)
    found = []
    for section in sections:
        if "\n| threadline | on the wire |\n" in section:
            heading = section.splitlines()[0]
            names = named(heading)
            assert len(names) == 1, f"a wire table under {heading!r}, no format's section"
            found.append(names[0])
    assert sorted(found) == sorted(DESCRIPTORS)


def test_every_per_format_table_is_checked() -> None:
    """A table of the docs whose first column names formats is one of the tables above, so a
    new per-format table cannot go unchecked."""
    checked = {(doc, header.rstrip("\n")) for doc, header, _, _ in TABLES}
    checked |= set(PARTIAL)
    checked.add(("providers.md", "| provider | the API refuses |"))
    for path in sorted(DOCS.rglob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            first = line.strip("|").split("|")[0].strip() if line.startswith("|") else ""
            if first.lower() in _FIRST_CELLS:
                doc = path.relative_to(DOCS).as_posix()
                assert any(doc == d and line.startswith(h) for d, h in checked), (
                    f"docs/{doc}: the per-format table {line[:60]!r} is in no check of "
                    "tests/unit/test_formats_docs.py"
                )
