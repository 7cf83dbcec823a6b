"""What the examples and the README's tour say is what happened (issue 21, item 11)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.examples.test_examples import ROOT
from tests.examples.test_examples import run_python


def test_untrusted_client_says_the_file_url_was_dropped_not_refused(tmp_path: Path) -> None:
    result = run_python([str(ROOT / "examples" / "untrusted_client.py")], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("A file:// URL"))
    said = lines[at + 1]
    assert "dropped" in said, said
    assert "file://" in said, said
    assert "Every forged request was refused;" not in result.stdout


def test_the_readme_tour_says_to_json_returns_bytes() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(r"\w+: bytes = history\.to_json\(\)", readme)
