"""The docs site in a real browser: headless Chromium loads pages of the built site, a probe
script measures them, and a screenshot of each is kept.

Checks what a reader sees: no code block or inline code runs past the right edge of the content
column or hides part of its lines behind a scrollbar (code wraps, ``docs/stylesheets/extra.css``),
and no reST role (``:class:``...) shows in the text.

Needs ``chromium`` (Debian: ``apt-get install chromium``; ``.ci/services.sh`` installs it; or set
``THREADLINE_CHROMIUM`` to a Chrome/Chromium binary): skipped locally without it, a failure under
``THREADLINE_REQUIRE_ALL=1``. Set ``THREADLINE_SCREENSHOTS`` to a directory to keep the
screenshots.
"""

from __future__ import annotations

import functools
import http.server
import io
import json
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PAGES = {
    "index": "",
    "cookbook": "cookbook/crash-recovery/",  # code lines up to 133 characters
    "cli": "cli/",  # terminal output lines up to 257 characters
    "reference": "reference/history/",  # docstrings full of cross-references
}
WIDTH, HEIGHT = 1280, 2000

PROBE = b"""<script>
window.addEventListener("load", () => {
  const column = document.querySelector("article.md-content__inner") || document.body;
  const edge = column.getBoundingClientRect().right;
  const overflow = [];
  for (const el of column.querySelectorAll("pre, code")) {
    const box = el.getBoundingClientRect();
    const hidden = el.scrollWidth > el.clientWidth + 1;  // lines cut behind a scrollbar
    if (box.width > 0 && (hidden || box.right > edge + 1)) {
      overflow.push({text: el.textContent.slice(0, 80), right: box.right, edge: edge,
                     scrollWidth: el.scrollWidth, clientWidth: el.clientWidth});
    }
  }
  const role = /:(?:py:)?(?:class|meth|func|attr|data|mod|exc|obj|const):\\S+/g;
  const probe = document.createElement("script");
  probe.type = "application/json";
  probe.id = "threadline-probe";
  probe.textContent = JSON.stringify({
    overflow: overflow,
    roles: document.body.innerText.match(role) || [],
    codeBlocks: column.querySelectorAll("pre > code").length,
  });
  document.body.appendChild(probe);
});
</script></body>"""
"""Measures the page once it has loaded and leaves the result in the DOM for --dump-dom."""
RESULT = re.compile(r'<script type="application/json" id="threadline-probe">(.*?)</script>', re.S)


class _ProbingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site, with the probe added to every HTML page."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_head(self) -> Any:
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if path.suffix != ".html" or not path.is_file():
            return super().send_head()
        body = path.read_bytes().replace(b"</body>", PROBE, 1)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


@pytest.fixture(scope="module")
def served_site(built_site: Path) -> Iterator[str]:
    handler = functools.partial(_ProbingHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _chromium_run(chromium: str, profile: Path, *args: str) -> str:
    result = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            f"--window-size={WIDTH},{HEIGHT}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PAGES))
def test_page_in_chromium(name: str, chromium: str, served_site: str, tmp_path: Path) -> None:
    url = served_site + PAGES[name]
    shots = Path(os.environ.get("THREADLINE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    screenshot = shots / f"{name}.png"
    _chromium_run(chromium, tmp_path / "profile", f"--screenshot={screenshot}", url)
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert screenshot.stat().st_size > 10_000  # a rendered page, not a blank one

    dom = _chromium_run(chromium, tmp_path / "profile", "--dump-dom", url)
    found = RESULT.search(dom)
    assert found, f"the probe did not run on {url}"
    probe = json.loads(found.group(1))
    assert probe["codeBlocks"] > 0 or name == "reference"
    assert not probe["overflow"], (
        f"{len(probe['overflow'])} code elements on {url} run past the content column or hide "
        f"part of their lines at {WIDTH}px: {probe['overflow'][:3]}"
    )
    assert not probe["roles"], f"reST roles shown on {url}: {probe['roles'][:5]}"
