"""The viewer's page in a real browser: headless Chromium draws it, the test looks at the pixels.

A conversation with a tool call, an inline image, reasoning, an integrity issue, a remote image
URL and a line too long for any screen is written with ``threadline view``, then:

- a screenshot must show the page (many colours, not a blank one), the highlighted issue's
  colour and the image's own pixels;
- a probe script (added to a copy of the page, with the page's CSP taken out so that the
  renderer alone is judged, not the policy guarding it) reports that no element runs past the
  right edge, the image was decoded and no resource was requested;
- Chromium runs behind a recording proxy (loopback included) that sees no connection at all;
  a control page with a remote image shows that the proxy and the probe do see one.

Needs ``chromium`` like ``test_docs_browser.py`` (the ``chromium`` fixture in ``conftest.py``).
The 10,000-message page is the full tier's; how long it takes to open is a bench row
(``bench/view.py``), not a test. ``THREADLINE_SCREENSHOTS`` keeps the screenshots.
"""

from __future__ import annotations

import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from tests.support import require_module
from threadline._view._escape import CSP
from threadline._view._page import render_page

WIDTH, HEIGHT = 1000, 1400
ISSUE = (0xD7, 0x26, 0x3D)  # --issue in threadline/_view/_escape.py
SWATCH = (0x12, 0xB8, 0x86)  # the inline image's colour, which nothing else on the page has
SIDE = 64

PROBE = """<script>
window.addEventListener("load", () => {
  const limit = document.documentElement.clientWidth;
  const overflow = [];
  for (const el of document.querySelectorAll("SELECTOR")) {
    const box = el.getBoundingClientRect();
    if (box.width > 0 && box.right > limit + 1) {
      overflow.push({tag: el.tagName, cls: el.className, right: box.right});
    }
  }
  const images = Array.from(document.images, (img) => ({done: img.complete, w: img.naturalWidth}));
  const out = document.createElement("script");
  out.type = "application/json";
  out.id = "threadline-probe";
  out.textContent = JSON.stringify({
    overflow: overflow.slice(0, 5),
    overflowCount: overflow.length,
    scrollWidth: document.documentElement.scrollWidth,
    width: limit,
    images: images,
    resources: performance.getEntriesByType("resource").map((entry) => entry.name),
    openReasoning: document.querySelectorAll("details.reasoning[open]").length,
    messages: document.querySelectorAll("section.msg").length,
  });
  document.body.appendChild(out);
});
</script></body>"""
RESULT = re.compile(r'<script type="application/json" id="threadline-probe">(.*?)</script>', re.S)


def solid_png(colour: tuple[int, int, int], side: int) -> bytes:
    """A ``side`` x ``side`` PNG of one colour."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    rows = b"".join(b"\x00" + bytes(colour) * side for _ in range(side))
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def conversation() -> list[tl.Message]:
    return [
        tl.system_message("Answer with the tool."),
        tl.user_message(
            "What is on this picture? " + "unbroken" * 300,
            tl.file_part(solid_png(SWATCH, SIDE), "image/png", filename="swatch.png"),
            tl.file_part("http://example.invalid/remote.png", "image/png"),
        ),
        tl.assistant_message(
            tl.reasoning_part("A green square. Look it up to be sure. " * 20),
            tl.tool_call_part("call_1", "describe", {"colour": "#12b886", "q": "y" * 500}),
            metadata={"usage": {"input_tokens": 1200, "output_tokens": 80}},
        ),
        tl.tool_message(tl.tool_result_part("call_1", "a green square, 64 px")),
        tl.tool_message(tl.tool_result_part("call_ghost", "a result nobody asked for")),
        tl.internal_message(tl.hook_part("ui.card", {"open": True})),
        tl.assistant_message("It is a green square."),
    ]


_BROWSER_OWN = re.compile(
    rb"^\w+ (?:https?://)?[\w.-]*\b(?:google\.com|googleapis\.com|gvt1\.com)[:/ ]"
)
"""Chromium's own traffic (component updates, its clock, accounts), whatever the page does: the
control test shows that a request the page makes is still seen."""


class RecordingProxy:
    """A TCP listener Chromium is told to use as its proxy: every connection is a request the
    page tried to make."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.1)  # so that the thread sees close() soon
        self.closed = threading.Event()
        self.port = self.server.getsockname()[1]
        self.seen: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.closed.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                connection.settimeout(10)  # a loaded machine may be slow to send the first bytes
                try:
                    request = connection.recv(200)
                except OSError:
                    request = b""
                if not _BROWSER_OWN.search(request):
                    self.seen.append(request)

    def close(self) -> None:
        self.closed.set()
        self.server.close()
        self.thread.join(timeout=10)


@pytest.fixture
def proxy() -> Iterator[RecordingProxy]:
    recorder = RecordingProxy()
    try:
        yield recorder
    finally:
        recorder.close()


def run_chromium(chromium: str, profile: Path, proxy: RecordingProxy, *args: str) -> str:
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
            "--disable-extensions",
            "--disable-default-apps",
            "--disable-domain-reliability",
            "--disable-client-side-phishing-detection",
            "--no-pings",
            "--disable-features=MediaRouter,OptimizationHints,Translate,AutofillServerCommunication",
            f"--proxy-server=http://127.0.0.1:{proxy.port}",
            "--proxy-bypass-list=<-loopback>",
            "--hide-scrollbars",
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


def probed(page: str, selector: str = "body *") -> str:
    """The page without its CSP and with the probe, which measures the elements ``selector``
    finds: the renderer's output judged on its own."""
    meta = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
    assert meta in page
    return page.replace(meta, "", 1).replace("</body>", PROBE.replace("SELECTOR", selector), 1)


def probe(chromium: str, tmp_path: Path, proxy: RecordingProxy, page: str) -> dict[str, Any]:
    path = tmp_path / "probed.html"
    path.write_text(page, encoding="utf-8")
    dom = run_chromium(chromium, tmp_path / "profile", proxy, "--dump-dom", path.as_uri())
    found = RESULT.search(dom)
    assert found, "the probe did not run"
    result: dict[str, Any] = json.loads(found.group(1))
    return result


def write_page(tmp_path: Path, messages: list[tl.Message]) -> Path:
    source = tmp_path / "history.json"
    source.write_bytes(tl.dump_json(messages))
    target = tmp_path / "page.html"
    subprocess.run(
        [sys.executable, "-m", "threadline", "view", str(source), "-o", str(target)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return target


def near(pixel: tuple[int, ...], colour: tuple[int, int, int], tolerance: int = 3) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel[:3], colour, strict=True))


def test_the_page_shows_the_issue_and_the_image_and_requests_nothing(
    chromium: str, tmp_path: Path, proxy: RecordingProxy
) -> None:
    image = require_module("PIL.Image", 'pip install -e ".[test]"')
    page = write_page(tmp_path, conversation())
    shots = Path(os.environ.get("THREADLINE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    screenshot = shots / "view.png"
    run_chromium(chromium, tmp_path / "profile", proxy, f"--screenshot={screenshot}", page.as_uri())
    with image.open(screenshot) as shot:
        colours: list[tuple[int, tuple[int, ...]]] = shot.convert("RGB").getcolors(WIDTH * HEIGHT)
    assert len(colours) > 50, "a blank page"
    issue = sum(count for count, colour in colours if near(colour, ISSUE))
    swatch = sum(count for count, colour in colours if near(colour, SWATCH))
    assert issue >= 200, f"the integrity issue is not highlighted ({issue} pixels of its colour)"
    assert swatch >= SIDE * SIDE * 0.9, f"the image is not drawn ({swatch} pixels of its colour)"
    assert proxy.seen == [], f"the page made requests: {proxy.seen}"


def test_no_element_overflows_the_image_decodes_and_nothing_is_requested(
    chromium: str, tmp_path: Path, proxy: RecordingProxy
) -> None:
    page = write_page(tmp_path, conversation()).read_text(encoding="utf-8")
    result = probe(chromium, tmp_path, proxy, probed(page))
    assert result["overflowCount"] == 0, result["overflow"]
    assert result["scrollWidth"] <= result["width"]
    assert result["images"] == [{"done": True, "w": SIDE}]
    assert result["resources"] == []
    assert result["openReasoning"] == 0  # folded
    assert result["messages"] == 7
    assert proxy.seen == [], f"the page made requests: {proxy.seen}"


@pytest.mark.slow
def test_the_probe_and_the_proxy_do_see_a_request(
    chromium: str, tmp_path: Path, proxy: RecordingProxy
) -> None:
    # The control: without this, "no request seen" could mean "cannot see requests".
    page = '<!DOCTYPE html><html><body><img src="http://example.invalid/x.png"></body></html>'
    result = probe(chromium, tmp_path, proxy, page.replace("</body>", PROBE, 1))
    assert result["overflowCount"] == 0  # (the selector matched nothing)
    assert result["resources"] == ["http://example.invalid/x.png"]
    assert proxy.seen, "the proxy saw no connection"


@pytest.mark.slow
def test_ten_thousand_messages_open_without_overflow(
    chromium: str, tmp_path: Path, proxy: RecordingProxy
) -> None:
    turn = conversation()[1:]
    messages = [
        message.model_copy(update={"id": f"msg_{round_}_{index}"})
        for round_ in range(10_000 // len(turn) + 1)
        for index, message in enumerate(turn)
    ][:10_000]
    page = render_page(messages, title="10,000 messages")
    # The first messages, not every element: measuring each of 200,000 elements of a page whose
    # off-screen messages are not laid out (content-visibility) lays each out on its own.
    first = "header, section.msg:nth-child(-n+100), section.msg:nth-child(-n+100) *"
    result = probe(chromium, tmp_path, proxy, probed(page, first))
    assert result["messages"] == 10_000
    assert result["overflowCount"] == 0, result["overflow"]
    assert result["resources"] == []
    assert proxy.seen == []
