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


def test_each_format_has_its_section() -> None:
    text = (DOCS / "providers.md").read_text(encoding="utf-8")
    for name in DESCRIPTORS:
        assert re.search(rf"^## .+ \(`{name}`\)$", text, re.MULTILINE), name
        assert get_codec(name).__doc__, name
