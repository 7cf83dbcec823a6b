"""The docs site builds with ``mkdocs build --strict``: no broken link, anchor, nav entry,
snippet, API reference or cross-reference.

Needs the docs extra (``pip install -e ".[docs]"``): skipped locally without it, a failure under
``THREADLINE_REQUIRE_ALL=1``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest


@pytest.mark.slow  # a whole mkdocs build; .ci/run also builds the site before the tests
def test_docs_build_strict(built_site: Path) -> None:
    assert (built_site / "index.html").exists()
    # The API reference was generated from the docstrings, and the changelog was included.
    assert "prepare_messages" in (built_site / "reference" / "integrity" / "index.html").read_text()
    assert "Keep a Changelog" in (built_site / "changelog" / "index.html").read_text()


@pytest.mark.slow
def test_long_signatures_are_laid_out_one_parameter_a_line(built_site: Path) -> None:
    # Without a formatter (ruff, in the docs extra) mkdocstrings leaves each signature on one
    # line, which the reader scrolls sideways under the copy button.
    page = (built_site / "reference" / "codecs" / "index.html").read_text(encoding="utf-8")
    heading = page.index('id="threadline.codecs.encode"')
    start = page.index('<div class="doc-signature', heading)
    # The text as shown: tags dropped (link titles hold line breaks of their own).
    shown = re.sub(r"<[^>]*>", "", page[start : page.index("</code>", start)])
    assert shown.splitlines()[:2] == ["encode(", "    messages: Iterable[Message],"], shown
