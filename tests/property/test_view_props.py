"""Invariants of the viewer's page (``threadline view``) for any history.

Whatever the strings of a history hold, the page parses (``html.parser``) into properly nested
elements, holds no ``<script>``, sets only the attributes the renderer writes, draws images only
from ``data:`` URLs it wrote itself (no ``src`` that could reach a server), links only to its
own messages, and shows every message's text as text.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.property.test_cli_props import hostile_histories
from tests.strategies import any_messages
from tests.strategies import conversations
from tests.support import examples
from threadline._view._page import render_page
from threadline.messages import Message
from threadline.messages import TextPart

VOID = {"meta", "img", "br", "hr", "input", "link"}
ATTRIBUTES = {"class", "id", "href", "src", "alt", "lang", "charset", "http-equiv", "content"}
ATTRIBUTES |= {"name"}
DATA_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp|avif|bmp);base64,[A-Za-z0-9+/]*={0,2}")
OWN_LINK = re.compile(r"#m\d+")
CLASS = re.compile(r"[a-z_ -]+")


class Strict(HTMLParser):
    """Parses a page, checking nesting and attributes as it goes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.problems: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.problems.append("a <script>")
        for name, value in attrs:
            if name not in ATTRIBUTES:
                self.problems.append(f"attribute {name}={value!r} on <{tag}>")
            elif name == "src" and not DATA_IMAGE.fullmatch(value or ""):
                self.problems.append(f"src {value!r:.80}")
            elif name == "href" and not OWN_LINK.fullmatch(value or ""):
                self.problems.append(f"href {value!r:.80}")
            elif name == "class" and not CLASS.fullmatch(value or ""):
                self.problems.append(f"class {value!r:.80}")
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.open[-1] if self.open else None}>")
        else:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        if self.open and self.open[-1] != "style":
            self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.problems.append("a comment")

    def handle_decl(self, decl: str) -> None:
        if decl != "DOCTYPE html":
            self.problems.append(f"declaration {decl!r}")


def check_page(messages: list[Message]) -> None:
    page = render_page(messages, title="property")
    page.encode("utf-8")  # nothing UTF-8 cannot carry
    parser = Strict()
    parser.feed(page)
    parser.close()
    assert not parser.problems, parser.problems[:5]
    assert not parser.open, parser.open
    shown = "".join(parser.text)
    for message in messages:
        assert message.id in shown or not message.id.isprintable()
        for part in message.parts:  # each text part as written (an empty one is marked)
            if isinstance(part, TextPart) and part.text.isprintable():
                assert part.text in shown


histories = st.one_of(
    conversations(max_turns=3, replay=False),
    st.lists(any_messages(), max_size=6),
    hostile_histories(),
)


@settings(max_examples=examples(200), deadline=None)
@given(histories)
def test_any_history_renders_a_safe_well_formed_page(messages: list[Message]) -> None:
    check_page(messages)


@settings(max_examples=examples(100), deadline=None)
@given(st.text(max_size=40), st.text(max_size=40), st.binary(max_size=40))
def test_any_file_is_listed_and_drawn_only_from_its_bytes(
    url_tail: str, name: str, data: bytes
) -> None:
    files = [
        tl.file_part(data, "image/png", filename=name or None),
        tl.file_part("data:image/png;base64," + url_tail, "image/png"),
        tl.file_part("javascript:" + url_tail, "image/png"),
        tl.file_part("https://example.com/" + url_tail, "image/gif"),
    ]
    check_page([tl.user_message(*files)])
