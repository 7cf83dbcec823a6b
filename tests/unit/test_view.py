"""The conversation viewer's HTML (``threadline._view``), ``threadline view`` and the notebook
``_repr_html_`` of ``Message`` and ``History``.

The page is read back with ``html.parser``: what a browser would build from it is what these
tests look at (elements, attributes, text), not substrings of the markup.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from threadline import cli
from threadline._view._escape import CSP
from threadline._view._escape import CSS
from threadline._view._escape import PAGE_CSS
from threadline._view._escape import text_html
from threadline._view._page import history_fragment
from threadline._view._page import render_page
from threadline._view._seal import seal_verdict
from threadline.messages import PART_TYPES
from threadline.messages import Message
from threadline.messages import TextPart

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
KEY = bytes(range(32))


class Page(HTMLParser):
    """The elements of a page: (tag, attributes) in order, the text, and the classes of the
    element each piece of text is in."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def tags(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.elements if name == tag]

    def with_class(self, name: str) -> list[dict[str, str | None]]:
        return [a for _, a in self.elements if name in (a.get("class") or "").split()]

    @property
    def all_text(self) -> str:
        return "".join(self.text)


def page_of(messages: list[Message], **kw: Any) -> Page:
    return Page(render_page(messages, title="test", **kw))


def agent_turn() -> list[Message]:
    return [
        tl.system_message("Be brief."),
        tl.user_message("Weather in Paris?", tl.file_part(PNG, "image/png", filename="sky.png")),
        tl.assistant_message(
            tl.reasoning_part("The user wants the weather; call the tool."),
            tl.tool_call_part("call_1", "weather", {"city": "Paris"}),
            metadata={
                "usage": {"input_tokens": 120, "output_tokens": 30, "cache_read_tokens": 100}
            },
        ),
        tl.tool_message(tl.tool_result_part("call_1", "sunny, 21 C", name="weather")),
        tl.assistant_message(
            "Sunny, 21 C.", metadata={"usage": {"input_tokens": 160, "output_tokens": 8}}
        ),
    ]


# -- escaping -----------------------------------------------------------------------------------


HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "' onmouseover='alert(1)",
    "javascript:alert(1)",
    "</style><script>alert(1)</script>",
    "<!-- --><![CDATA[ ]]>",
    "&lt;already escaped&gt; &amp;",
]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_every_string_from_the_history_is_text_never_markup(hostile: str) -> None:
    messages = [
        tl.system_message(hostile, id=hostile),
        tl.user_message(
            hostile, tl.file_part("https://example.com/" + hostile, "image/png", filename=hostile)
        ),
        tl.assistant_message(
            tl.reasoning_part(hostile, provider=hostile, model=hostile),
            tl.tool_call_part(hostile, hostile, {hostile: hostile}),
            tl.tool_call_part("raw", hostile, hostile),
            metadata={"model": hostile},
        ),
        tl.tool_message(tl.tool_result_part(hostile, hostile, name=hostile, is_error=True)),
        tl.internal_message(tl.hook_part(hostile, {hostile: [hostile]})),
    ]
    page = page_of(messages)
    assert not page.tags("script")
    assert not page.tags("img")  # a URL is never drawn
    for _, attrs in page.elements:
        assert set(attrs) <= {
            "class",
            "id",
            "href",
            "src",
            "alt",
            "lang",
            "charset",
            "http-equiv",
            "content",
            "name",
        }
        assert not any(name.startswith("on") for name in attrs)
        href = attrs.get("href")
        assert href is None or re.fullmatch(r"#m\d+", href), href
    assert page.all_text.count(hostile) >= 10  # shown, as text, in every place


def test_controls_bidi_overrides_and_lone_surrogates_are_shown_escaped() -> None:
    # model_construct: validation refuses a lone surrogate, but a page must survive one anyway.
    text = "a\x1b[31m b\u202e c\ud800 d\x00 e\tf\ng"
    part = TextPart(text="")
    object.__setattr__(part, "text", text)
    message = Message.model_construct(id="m\ud800", role="user", parts=(part,))
    page = render_page([message], title="t\udcff").encode("utf-8")  # no lone surrogate left
    shown = Page(page.decode()).all_text
    for escape in ("\\x1b", "\\u202e", "\\ud800", "\\x00", "\\udcff"):
        assert escape in shown
    assert "e\tf\ng" in shown
    assert text_html("plain <b> & 'q'") == "plain &lt;b&gt; &amp; &#x27;q&#x27;"


def test_the_csp_allows_the_stylesheet_and_data_images_only() -> None:
    page = render_page(agent_turn(), title="t")
    digest = base64.b64encode(hashlib.sha256(PAGE_CSS.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in CSP
    assert "default-src 'none'" in CSP
    assert "img-src data:;" in CSP
    assert f'content="{CSP}"' in page
    assert f"<style>{PAGE_CSS}</style>" in page  # the hashed text exactly
    assert "script-src" not in CSP  # default-src 'none' covers scripts: none run


# -- what the page shows ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", PART_TYPES, ids=lambda kind: kind.__name__)
def test_every_part_type_is_rendered(kind: type[Any]) -> None:
    from tests.unit.test_part_dispatch import history

    role = "internal" if kind.__name__ == "HookPart" else "assistant"
    role = "tool" if kind.__name__ == "ToolResultPart" else role
    role = "user" if kind.__name__ == "FilePart" else role
    page = page_of(history(kind, role, include=True))
    without = page_of(history(kind, role, include=False))
    tag = next(tag for tag, cls in tl.messages.PART_BY_TAG.items() if cls is kind)
    assert len(page.with_class(tag)) > len(without.with_class(tag)) or tag == "tool_result"
    assert page.all_text != without.all_text


def test_a_tool_call_is_drawn_beside_its_result_and_reasoning_folded() -> None:
    markup = render_page(agent_turn(), title="t")
    pair = re.search(r'<div class="pair">(.*?)</div></div></div>', markup, re.S)
    assert pair is not None
    assert "weather" in pair.group(1)
    assert "sunny, 21 C" in pair.group(1)
    assert '<details class="reasoning"><summary>' in markup
    assert "<details open" not in markup
    tool = re.search(r'<section class="msg tool" id="m3">(.*?)</section>', markup, re.S)
    assert tool is not None
    assert "sunny" not in tool.group(1)


def test_images_are_drawn_from_bytes_and_a_url_is_never_fetched() -> None:
    svg = b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>"
    data_url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    messages = [
        tl.user_message(
            tl.file_part(PNG, "image/png"),
            tl.file_part("https://example.com/cat.png", "image/png"),
            tl.file_part(svg, "image/svg+xml"),
            tl.file_part(data_url, "image/png"),
            tl.file_part("data:text/html;base64,PHNjcmlwdD4=", "image/png"),
            tl.file_part(b"%PDF-1.4", "application/pdf", filename="report.pdf"),
        )
    ]
    page = page_of(messages)
    sources = [attrs["src"] for attrs in page.tags("img")]
    assert sources == [data_url, data_url]  # the bytes, and the data: URL re-encoded
    assert "https://example.com/cat.png" in page.all_text
    assert "report.pdf" in page.all_text
    assert "6 files" in page.all_text  # listed in the header


def test_usage_per_turn_and_in_total() -> None:
    text = page_of(agent_turn()).all_text
    assert "input 120 · output 30 · cache read 100 tokens" in text
    assert "input 160 · output 8 tokens" in text
    assert "Usage recorded: input 280 · output 38 · cache read 100 tokens." in text


def test_integrity_issues_are_highlighted_where_they_are() -> None:
    messages = [
        tl.user_message("hi"),
        tl.assistant_message(tl.tool_call_part("call_1", "f", "{not json")),
        tl.tool_message(tl.tool_result_part("call_1", "ok"), tl.tool_result_part("ghost", "?")),
        tl.internal_message(tl.hook_part("ui.card", {"open": True})),
        tl.assistant_message("next", tl.tool_call_part("call_2", "g", {})),
    ]
    markup = render_page(messages, title="t")
    page = Page(markup)
    flagged = [attrs["id"] for attrs in page.with_class("has-issue")]
    assert flagged == ["m1", "m2"]  # invalid arguments; the orphan result
    notes = re.findall(r'<div class="issue"><b>([a-z-]+)</b>', markup)
    assert sorted(set(notes)) == ["invalid-tool-args", "orphan-tool-result"]
    assert "2 integrity issues" in page.all_text
    assert "internal: never sent to a model" in page.all_text  # marked, not an issue
    assert "pending" in page.all_text  # the live frontier's call is not an issue


def test_a_clean_history_says_so() -> None:
    assert "No integrity issues." in page_of(agent_turn()).all_text


def test_huge_texts_render_and_long_results_fold() -> None:
    huge = "x" * 2_000_000
    messages = [
        tl.user_message(huge),
        tl.assistant_message(tl.tool_call_part("c", "f", {"q": "y" * 50_000})),
        tl.tool_message(tl.tool_result_part("c", "z" * 50_000)),
    ]
    markup = render_page(messages, title="t")
    assert huge in markup
    assert '<details class="long"><summary>' in markup


# -- seals --------------------------------------------------------------------------------------


def test_a_seal_verdict_verified_changed_and_extended() -> None:
    messages = agent_turn()
    seal = tl.seal(messages, KEY, conversation_id="c1", key_id="k2026")
    good = seal_verdict(messages, seal, KEY, conversation_id="c1")
    assert good.ok
    assert good.sealed == 5
    assert "seal verified" in good.detail
    edited = [*messages[:-1], tl.assistant_message("Rainy.", id=messages[-1].id)]
    bad = seal_verdict(edited, seal, KEY, conversation_id="c1")
    assert not bad.ok
    assert bad.sealed is None
    assert "mismatch" in bad.detail
    other = seal_verdict(messages, seal, KEY, conversation_id="c2")
    assert not other.ok
    longer = [*messages, tl.user_message("more")]
    extended = seal_verdict(longer, seal, KEY, conversation_id="c1")
    assert not extended.ok
    assert extended.sealed == 5
    page = page_of(longer, verdict=extended)
    assert [a["class"] for a in page.with_class("verdict")] == ["verdict bad"]
    assert page.all_text.count("added after sealing") == 1
    assert "the first 5 messages are exactly what was sealed" in page.all_text


# -- notebooks ----------------------------------------------------------------------------------


def test_repr_html_of_a_message_and_a_history() -> None:
    messages = agent_turn()
    history = tl.History(messages)
    assert history._repr_html_() == history_fragment(history.snapshot())
    shown = Page(history._repr_html_())
    assert len(shown.with_class("msg")) == 5
    one = Page(messages[2]._repr_html_())
    assert len(one.with_class("msg")) == 1
    assert not one.with_class("pair")
    assert "weather" in one.all_text
    assert one.tags("style")  # scoped: every rule starts with .tl
    selectors = [
        s.strip() for rule in re.findall(r"([^{}]+)\{[^}]*\}", CSS) for s in rule.split(",")
    ]
    assert selectors
    assert all(selector.startswith(".tl") for selector in selectors), selectors


def test_a_long_history_shows_its_newest_messages_in_a_notebook() -> None:
    messages = [tl.user_message(f"turn {index}") for index in range(12)]
    shown = Page(history_fragment(messages, last=5))
    assert [a["id"] for a in shown.with_class("msg")] == [f"m{i}" for i in range(7, 12)]
    assert "12 messages: 12 user." in shown.all_text  # the header covers them all
    assert "Showing messages 7 to 11; threadline view writes them all." in shown.all_text
    assert "Showing" not in Page(history_fragment(messages)).all_text


def test_import_threadline_does_not_load_the_renderer() -> None:
    code = (
        "import sys, threadline; "
        "print(sorted(m for m in sys.modules if m.startswith('threadline._view.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['threadline._view._notebook']"


# -- threadline view ----------------------------------------------------------------------------


def write(tmp_path: Path, messages: list[Message]) -> str:
    path = tmp_path / "history.json"
    path.write_bytes(tl.dump_json(messages))
    return str(path)


def test_view_writes_the_page_to_stdout_or_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write(tmp_path, agent_turn())
    assert cli.main(["view", source]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<!DOCTYPE html>")
    assert "sunny, 21 C" in out
    target = tmp_path / "page.html"
    assert cli.main(["view", source, "-o", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == out
    assert "wrote 5 messages to" in capsys.readouterr().out


def test_view_reads_a_provider_payload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "request.json"
    path.write_text('{"model": "m", "messages": [{"role": "user", "content": "hello from chat"}]}')
    assert cli.main(["view", str(path), "--from", "openai_chat"]) == 0
    assert "hello from chat" in capsys.readouterr().out


@pytest.mark.parametrize(
    "form",
    ["hex", "base64", "base64url", "env", "file"],
)
def test_view_checks_a_seal_with_the_key_in_every_form(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = secrets.token_bytes(32)
    messages = agent_turn()
    seal = tl.seal(messages, key, conversation_id="conv-1")
    source = write(tmp_path, messages)
    monkeypatch.setenv("SEAL_KEY", "hex:" + key.hex())
    (tmp_path / "key").write_bytes(key)
    given = {
        "hex": "hex:" + key.hex(),
        "base64": "base64:" + base64.b64encode(key).decode(),
        "base64url": "base64:" + base64.urlsafe_b64encode(key).decode().rstrip("="),
        "env": "env:SEAL_KEY",
        "file": f"file:{tmp_path / 'key'}",
    }[form]
    page = tmp_path / "page.html"
    argv = ["view", source, "-o", str(page), "--seal-key", given, "--seal", seal]
    assert cli.main([*argv, "--seal-conversation", "conv-1"]) == 0
    assert "seal verified" in capsys.readouterr().out
    assert 'class="verdict ok"' in page.read_text(encoding="utf-8")
    assert cli.main([*argv, "--seal-conversation", "conv-2"]) == 1  # written, and says so
    assert "seal check failed (mismatch)" in capsys.readouterr().out
    assert 'class="verdict bad"' in page.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--seal-key", "hex:00"], "missing --seal, --seal-conversation"),
        (["--seal", "x", "--seal-conversation", "c"], "missing --seal-key"),
        (["--seal-key", "secret", "--seal", "x", "--seal-conversation", "c"], "takes hex:KEY"),
        (["--seal-key", "hex:zz", "--seal", "x", "--seal-conversation", "c"], "does not decode"),
        (["--seal-key", "env:NO_SUCH_VARIABLE_42"], "is not set"),
    ],
)
def test_view_refuses_bad_seal_options_naming_them(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write(tmp_path, agent_turn())
    argv = ["view", source, "-o", str(tmp_path / "page.html"), *extra]
    if "env:" in extra[1]:
        argv += ["--seal", "x", "--seal-conversation", "c"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "secret" not in err.replace("--seal-key takes", "")  # the key is never echoed
    assert not (tmp_path / "page.html").exists()  # nothing half-written


def test_view_refuses_a_short_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messages = agent_turn()
    seal = tl.seal(messages, KEY, conversation_id="c")
    argv = ["view", write(tmp_path, messages), "--seal-key", "hex:" + "ab" * 8]
    assert cli.main([*argv, "--seal", seal, "--seal-conversation", "c"]) == 2
    assert "at least 32 random bytes" in capsys.readouterr().err


def test_view_of_an_unreadable_file_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "broken.json"
    source.write_text('{"format": "threadline", "version": 1, "messages": [{"role": "user"}]}')
    target = tmp_path / "page.html"
    assert cli.main(["view", str(source), "-o", str(target)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("threadline: error: ")
    assert not target.exists()
