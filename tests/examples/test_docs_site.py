"""The built docs site shows cross-references as links, never as reST roles.

mkdocstrings reads docstrings as Markdown, so a Sphinx role such as ``:class:`Snapshot``` renders
literally (``:class:`` then ``Snapshot`` in code) instead of linking. Docstrings and docs write
[`Snapshot`][] (resolved where the docstring is) or [`Snapshot`][threadline.Snapshot].
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROLE = re.compile(r":(?:py:)?(?:class|meth|func|attr|data|mod|exc|obj|const):(?:`|<code)")
"""A reST role as it reaches the HTML: its backticks kept, or turned into a code span."""
UNRESOLVED = re.compile(r"\]\[(?:threadline[\w.]*)?\]")
"""A Markdown cross-reference left as text: ``][]`` or ``][threadline.X]``."""
LINK = re.compile(r'<a class="autorefs autorefs-internal"[^>]*href="([^"]*)"')


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


@pytest.mark.slow  # builds the site (the build is shared with the other docs tests)
def test_no_rest_role_survives_on_any_page(built_site: Path) -> None:
    found = [
        f"{page.relative_to(built_site)}: {match.group(0)}"
        for page in _pages(built_site)
        for match in ROLE.finditer(page.read_text(encoding="utf-8"))
    ]
    assert not found, f"{len(found)} reST roles render literally, e.g. {found[:5]}"


@pytest.mark.slow
def test_no_cross_reference_is_left_as_text(built_site: Path) -> None:
    found = [
        f"{page.relative_to(built_site)}: {match.group(0)}"
        for page in _pages(built_site)
        for match in UNRESOLVED.finditer(page.read_text(encoding="utf-8"))
    ]
    assert not found, found[:5]


@pytest.mark.slow
def test_docstring_cross_references_are_links(built_site: Path) -> None:
    history = (built_site / "reference" / "history" / "index.html").read_text(encoding="utf-8")
    targets = set(LINK.findall(history))
    # From the docstrings of threadline.history: [`Snapshot`][], [`History.version`][],
    # [`ValidationError`][], [`threadline.context.trim_messages`][].
    assert "#threadline.history.Snapshot" in targets
    assert "#threadline.history.History.version" in targets
    assert "../errors/#threadline.errors.ValidationError" in targets
    assert "../context/#threadline.context.trim_messages" in targets
    links = sum(len(LINK.findall(page.read_text(encoding="utf-8"))) for page in _pages(built_site))
    assert links > 600, links  # 574 before the roles were converted, all from signatures
