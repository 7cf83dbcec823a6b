"""Text and JSON as HTML, and the stylesheet with the Content-Security-Policy that pins it."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Mapping
from typing import Any
from typing import Final

__all__ = ["CSP", "CSS", "json_html", "text_html"]

# What a reader must see rather than have acted on: C0 controls but newline, tab and carriage
# return (NUL is a parse error), DEL and the C1 controls, the bidirectional overrides and
# isolates that reorder a line as it is shown ("Trojan Source"), and lone surrogates, which
# UTF-8 cannot encode at all.
_VISIBLE: Final = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    shown = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return f'<span class="esc">{shown}</span>'


def text_html(text: str) -> str:
    """``text`` as HTML: markup escaped (``&``, ``<``, ``>``, both quotes) and each character
    a reader must see rather than have acted on shown as its escape (``\\x1b``, ``\\u202e``).

    Args:
        text: any string from a history (it may hold lone surrogates).
    """
    escaped = html.escape(text, quote=True)
    return _VISIBLE.sub(_escape_char, escaped) if _VISIBLE.search(escaped) else escaped


def _plain(value: object) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"not JSON: {type(value).__name__}")  # pragma: no cover - JSON values only


def json_html(value: object) -> str:
    """A JSON value, indented, as HTML (see [`text_html`][])."""
    return text_html(json.dumps(value, indent=2, ensure_ascii=False, default=_plain))


_ISSUE: Final = "#d7263d"
"""The colour of an integrity issue (the screenshot tests look for it)."""

CSS: Final = f"""
.tl{{--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--issue:{_ISSUE};--ok:#1a7f37;
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
max-width:1100px;margin:0 auto;padding:12px;box-sizing:border-box;overflow-wrap:anywhere}}
.tl *{{box-sizing:border-box}}
.tl pre,.tl .text{{white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word;margin:0;
font:inherit}}
.tl pre.json{{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
background:#f6f8fa;padding:6px 8px;border-radius:4px;max-height:32em;overflow:auto}}
.tl code{{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}}
.tl .esc{{color:#fff;background:#8250df;border-radius:3px;padding:0 2px;
font:11px ui-monospace,monospace}}
.tl header h1{{font-size:18px;margin:0 0 6px}}
.tl .facts{{color:var(--muted);margin:0 0 8px}}
.tl .summary{{border:1px solid var(--line);border-radius:6px;padding:8px 12px;margin:0 0 12px}}
.tl .summary ul{{margin:4px 0;padding-left:20px}}
.tl .verdict{{border-radius:6px;padding:8px 12px;margin:0 0 12px;font-weight:600}}
.tl .verdict.ok{{background:#dafbe1;border-left:6px solid var(--ok)}}
.tl .verdict.bad{{background:#ffebe9;border-left:6px solid var(--issue)}}
.tl .msg{{border:1px solid var(--line);border-left:6px solid var(--line);border-radius:6px;
margin:0 0 10px;padding:8px 12px;content-visibility:auto;contain-intrinsic-size:auto 120px}}
.tl .msg.user{{border-left-color:#1f6feb}}
.tl .msg.assistant{{border-left-color:#8250df}}
.tl .msg.system{{border-left-color:#9a6700}}
.tl .msg.tool{{border-left-color:#57606a}}
.tl .msg.internal{{border-left-color:#afb8c1;border-style:dashed;background:#f6f8fa}}
.tl .msg.has-issue{{border-color:var(--issue);border-left-color:var(--issue)}}
.tl .head{{display:flex;flex-wrap:wrap;gap:4px 10px;align-items:baseline;margin:0 0 6px}}
.tl .role{{font-weight:700;text-transform:uppercase;font-size:12px;letter-spacing:.04em}}
.tl .head .meta{{color:var(--muted);font-size:12px}}
.tl .badge{{font-size:11px;border-radius:10px;padding:1px 8px;background:#eaeef2}}
.tl .badge.internal{{background:#57606a;color:#fff}}
.tl .badge.pending{{background:#fff8c5}}
.tl .badge.unsealed{{background:#ffebe9}}
.tl .usage{{font-size:12px;color:var(--muted)}}
.tl .part{{margin:6px 0}}
.tl .issue{{background:#ffebe9;border-left:6px solid var(--issue);border-radius:4px;
padding:4px 8px;margin:4px 0;color:#82071e}}
.tl .issue b{{color:var(--issue)}}
.tl details.reasoning{{background:#fbf8ff;border-radius:4px;padding:4px 8px;color:#4c2889}}
.tl details.long>summary,.tl details.reasoning>summary{{cursor:pointer;color:var(--muted)}}
.tl .pair{{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:8px;
border:1px solid var(--line);border-radius:6px;padding:6px}}
.tl .call,.tl .result{{min-width:0}}
.tl .label{{font-size:12px;font-weight:600;color:var(--muted);margin:0 0 2px}}
.tl .result.error .label{{color:var(--issue)}}
.tl .none{{color:var(--muted);font-style:italic}}
.tl .chip{{display:inline-block;border:1px solid var(--line);border-radius:4px;
padding:4px 8px;max-width:100%}}
.tl img.inline{{display:block;max-width:100%;max-height:480px;height:auto;margin:4px 0;
border:1px solid var(--line)}}
.tl .hook{{color:var(--muted)}}
.tl a{{color:#0969da}}
"""

_PAGE_CSS: Final = CSS + "body{margin:0;background:#fff}\n"


def _csp_hash(style: str) -> str:
    digest = hashlib.sha256(style.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


PAGE_CSS: Final = _PAGE_CSS
"""The page's stylesheet: [`CSS`][] and the body's margins."""

CSP: Final = (
    "default-src 'none'; img-src data:; style-src " + _csp_hash(_PAGE_CSS) + "; "
    "base-uri 'none'; form-action 'none'"
)
"""The page's Content-Security-Policy: its own stylesheet and ``data:`` images, nothing else
(no script, no request to any server), whatever the history holds."""
