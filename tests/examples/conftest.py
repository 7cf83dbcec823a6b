"""The docs site, built once per test session for the tests that read it; the browser that
looks at it and at the viewer's pages."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import require_module
from tests.support import unavailable

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as ``mkdocs build --strict`` writes it (a failed build fails the test).

    Needs the docs extra (``pip install -e ".[docs]"``): skipped locally without it, a failure
    under ``THREADLINE_REQUIRE_ALL=1``.
    """
    require_module("mkdocs", 'pip install -e ".[docs]"')
    require_module("mkdocstrings_handlers.python", 'pip install -e ".[docs]"')
    site = tmp_path_factory.mktemp("docs") / "site"
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
    if result.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{result.stdout}{result.stderr}")
    return site


@pytest.fixture(scope="session")
def chromium() -> str:
    """The browser binary (asked for before the site is built, so a skip costs nothing)."""
    names = [os.environ.get("THREADLINE_CHROMIUM") or "chromium", "chromium-browser"]
    found = next(filter(None, map(shutil.which, names)), None)
    if found is None:
        unavailable(f"{names[0]} is not installed (apt-get install chromium, or .ci/services.sh)")
    assert found is not None  # unavailable() raised
    return found
