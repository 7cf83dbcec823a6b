"""The docs site builds with ``mkdocs build --strict``: no broken link, anchor, nav entry,
snippet or API reference.

Needs the docs extra (``pip install -e ".[docs]"``): skipped locally without it, a failure under
``THREADLINE_REQUIRE_ALL=1``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import require_module

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a whole mkdocs build; .ci/run also builds the site before the tests
def test_docs_build_strict(tmp_path: Path) -> None:
    require_module("mkdocs", 'pip install -e ".[docs]"')
    require_module("mkdocstrings_handlers.python", 'pip install -e ".[docs]"')
    site = tmp_path / "site"
    # The Material theme prints a banner about its successor on every build; it is not a
    # warning of ours, so keep it out of the failure output.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    built = site / "index.html"
    assert built.exists()
    # The API reference was generated from the docstrings, and the changelog was included.
    assert "prepare_messages" in (site / "reference" / "integrity" / "index.html").read_text()
    assert "Keep a Changelog" in (site / "changelog" / "index.html").read_text()
