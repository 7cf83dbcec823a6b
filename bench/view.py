"""Workload ``view`` (issue 42): the viewer's page for 10,000 messages, written and opened.

Two rows at 10,000 messages of agent turns (a user message; an assistant message with
reasoning, a tool call and its usage; the tool's result; every tenth turn an inline image):

- **render**: ``render_page`` in this process, the page's HTML from the messages (what
  ``threadline view`` spends beyond reading the file);
- **open in Chromium**: headless Chromium loads the page from a file and a script, run at its
  ``load`` event, forces layout and reads ``performance.now()``: the time from navigation to a
  page parsed, styled and laid out, as the browser's own clock measures it. The script is added
  to a copy of the page without its Content-Security-Policy (which allows no script); the
  policy costs nothing to check. The wall time of the whole browser run (start-up included),
  less that of an empty page, is printed beside it in the note.

No target is judged: the issue asks for the number, not a limit. Needs ``chromium`` (or
``THREADLINE_CHROMIUM``); without it the rows are skipped with a note.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import threadline as tl
from threadline._view._escape import CSP
from threadline._view._page import render_page

SIZE = 10_000
PROBE = """<script>
window.addEventListener("load", () => {
  const height = document.documentElement.scrollHeight;  // forces layout
  document.body.getBoundingClientRect();
  const out = document.createElement("script");
  out.type = "application/json";
  out.id = "bench-probe";
  out.textContent = JSON.stringify({ms: performance.now(), height: height,
    messages: document.querySelectorAll("section.msg").length});
  document.body.appendChild(out);
});
</script></body>"""
RESULT = re.compile(r'<script type="application/json" id="bench-probe">(.*?)</script>', re.S)


def _png() -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body).to_bytes(4, "big")
        return len(body).to_bytes(4, "big") + kind + body + crc

    rows = b"".join(b"\x00" + b"\x12\xb8\x86" * 32 for _ in range(32))
    header = (32).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))


def conversation(size: int) -> list[tl.Message]:
    """``size`` messages of agent turns, four messages a turn."""
    image = _png()
    out: list[tl.Message] = []
    turn = 0
    while len(out) < size:
        files = [tl.file_part(image, "image/png")] if turn % 10 == 0 else []
        call = f"call_{turn}"
        out += [
            tl.user_message(f"Question {turn}: what is the weather in city {turn}?", *files),
            tl.assistant_message(
                tl.reasoning_part("The user asks for the weather; call the tool. " * 4),
                tl.tool_call_part(call, "weather", {"city": f"city {turn}", "units": "metric"}),
                metadata={"usage": {"input_tokens": 900 + turn, "output_tokens": 40}},
            ),
            tl.tool_message(tl.tool_result_part(call, f"sunny, {turn % 30} C", name="weather")),
            tl.assistant_message(f"It is sunny and {turn % 30} C in city {turn}."),
        ]
        turn += 1
    return out[:size]


def _chromium() -> str | None:
    names = [os.environ.get("THREADLINE_CHROMIUM") or "chromium", "chromium-browser"]
    return next(filter(None, map(shutil.which, names)), None)


def _open(chromium: str, page: Path, profile: Path) -> tuple[float, dict[str, Any]]:
    """Wall seconds of one headless run on ``page``, and what the probe measured."""
    started = time.perf_counter()
    result = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            f"--user-data-dir={profile}",
            "--window-size=1280,1000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    wall = time.perf_counter() - started
    found = RESULT.search(result.stdout)
    return wall, json.loads(found.group(1)) if found else {}


def bench_view(report: Any, row: Any, samples: int) -> None:
    """The rows of the ``view`` workload; ``row`` is ``run.Row``."""
    from timing import Stat

    messages = conversation(SIZE)
    renders = []
    for _ in range(samples):
        started = time.perf_counter()
        page = render_page(messages, title="bench")
        renders.append(time.perf_counter() - started)
    stat = Stat(statistics.median(renders), min(renders), renders, 1)
    note = f"{len(page.encode()) / 1e6:.1f} MB of HTML"
    report.rows.append(row("view render", SIZE, "threadline", {"threadline": stat}, note=note))
    chromium = _chromium()
    if chromium is None:
        report.notes.append("view: open in Chromium skipped (chromium is not installed)")
        return
    meta = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        probed = folder / "page.html"
        probed.write_text(page.replace(meta, "", 1).replace("</body>", PROBE, 1), "utf-8")
        empty = folder / "empty.html"
        empty.write_text("<!DOCTYPE html><html><body>" + PROBE, "utf-8")
        profile = folder / "profile"
        _open(chromium, empty, profile)  # a first run creates the profile
        opened, walls, baselines = [], [], []
        for _ in range(samples):
            baselines.append(_open(chromium, empty, profile)[0])
            wall, probe = _open(chromium, probed, profile)
            if probe.get("messages") != SIZE:
                report.notes.append(f"view: the probe did not see the page ({probe})")
                return
            walls.append(wall)
            opened.append(probe["ms"] / 1000)
    stat = Stat(statistics.median(opened), min(opened), opened, 1)
    extra = statistics.median(walls) - statistics.median(baselines)
    note = (
        f"load + layout by the page's clock; the browser run (start-up, DOM dump) {extra:.2f} s "
        "more than an empty page's"
    )
    report.rows.append(
        row("view open in Chromium", SIZE, "threadline", {"threadline": stat}, note=note)
    )
