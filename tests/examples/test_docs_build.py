"""The docs site builds with ``mkdocs build --strict``: no broken link, anchor, nav entry,
snippet, API reference or cross-reference.

Needs the docs extra (``pip install -e ".[docs]"``): skipped locally without it, a failure under
``THREADLINE_REQUIRE_ALL=1``.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.slow  # a whole mkdocs build; .ci/run also builds the site before the tests
def test_docs_build_strict(built_site: Path) -> None:
    assert (built_site / "index.html").exists()
    # The API reference was generated from the docstrings, and the changelog was included.
    assert "prepare_messages" in (built_site / "reference" / "integrity" / "index.html").read_text()
    assert "Keep a Changelog" in (built_site / "changelog" / "index.html").read_text()
