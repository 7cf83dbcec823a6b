"""``<think>…</think>`` at the start of an assistant reply's text, where an OpenAI-compatible
server without a reasoning parser leaves a model's reasoning (vLLM, SGLang, Groq's ``raw``
format, Together's DeepSeek-R1).

One rule, `split_think`, read two ways: whole (a response, a request's assistant message) and
piece by piece (`ThinkSplitter`, for a stream), so that what a stream says as it arrives is
what the assembled message holds, wherever the chunks cut the tags.
"""

from __future__ import annotations

from typing import Literal
from typing import TypeAlias

__all__ = ["CLOSE", "OPEN", "Piece", "ThinkSplitter", "split_think"]

OPEN, CLOSE = "<think>", "</think>"

Piece: TypeAlias = tuple[Literal["reasoning", "text"], str]
"""A piece of a reply's text, as reasoning or as the answer."""


def split_think(text: str) -> tuple[str | None, str]:
    """The reasoning ``text`` starts with, and the answer after it.

    Text whose first characters other than blanks are ``<think>`` holds reasoning up to the
    first ``</think>``; a reply cut before the closing tag (``max_tokens`` reached while the
    model thought) is reasoning to its end. Newlines around the reasoning, and at the start of
    the answer, are left out; a ``<think>`` inside the reasoning, or anywhere in the answer,
    is text like any other.

    Returns:
        ``(reasoning, answer)``; ``(None, text)`` when ``text`` does not start with the tag
        (the reasoning is ``""`` for an empty ``<think></think>``).
    """
    stripped = text.lstrip()
    if not stripped.startswith(OPEN):
        return None, text
    thought, _, answer = stripped[len(OPEN) :].partition(CLOSE)
    return thought.strip("\n"), answer.lstrip("\n")


class ThinkSplitter:
    """`split_think` over text arriving in pieces: each piece's reasoning and answer said as
    soon as they are certain. Held back only what the next piece may change: blanks and the
    start of an opening tag at the start, newlines that may end the reasoning, the start of a
    closing tag, newlines that may start the answer. Linear in the text, whatever the cuts."""

    __slots__ = ("_blanks", "_head", "_newlines", "_said", "_state", "_tail")

    def __init__(self) -> None:
        self._state: Literal["lead", "think", "after", "text", "done"] = "lead"
        self._blanks: list[str] = []
        """Blank pieces at the start (text, if no tag follows them)."""
        self._head = ""
        """What follows those blanks, while it may still be the opening tag."""
        self._newlines = 0
        """Newlines at the end of the reasoning so far, said only if more reasoning follows."""
        self._said = False
        """Whether any reasoning was said (newlines before it are left out)."""
        self._tail = ""
        """The end of the reasoning so far that may start the closing tag."""

    def feed(self, piece: str) -> list[Piece]:
        """The reasoning and answer ``piece`` makes certain, in order."""
        state = self._state
        if state == "text":
            return [("text", piece)] if piece else []
        if state == "think":
            return self._think(piece)
        if state == "after":
            return self._after(piece)
        if state == "done":
            raise ValueError("text after the end of the reply")
        return self._lead(piece)

    def flush(self) -> list[Piece]:
        """The reply ended: what was held back, as the whole text's `split_think` reads it."""
        state, self._state = self._state, "done"
        if state == "lead":
            text = "".join(self._blanks) + self._head
            return [("text", text)] if text else []
        if state == "think":  # no closing tag came: reasoning to the end
            tail, self._tail = self._tail, ""
            return self._say(tail)
        return []

    def _lead(self, piece: str) -> list[Piece]:
        if self._head:
            self._head += piece
        else:
            head = piece.lstrip()
            self._blanks.append(piece[: len(piece) - len(head)])
            self._head = head
        head = self._head
        if head.startswith(OPEN):
            self._state = "think"
            self._blanks, self._head = [], ""
            return self._think(head[len(OPEN) :])
        if OPEN.startswith(head):  # blanks, or the tag so far
            return []
        self._state = "text"
        text = "".join(self._blanks) + head
        self._blanks, self._head = [], ""
        return [("text", text)]

    def _think(self, piece: str) -> list[Piece]:
        text = self._tail + piece
        end = text.find(CLOSE)
        if end >= 0:
            self._tail = ""
            out = self._say(text[:end])
            self._newlines = 0  # the newlines closing the reasoning are not part of it
            self._state = "after"
            return out + self._after(text[end + len(CLOSE) :])
        cut = next(
            (
                size
                for size in range(min(len(CLOSE) - 1, len(text)), 0, -1)
                if text.endswith(CLOSE[:size])
            ),
            0,
        )
        self._tail = text[len(text) - cut :] if cut else ""
        return self._say(text[: len(text) - cut])

    def _say(self, body: str) -> list[Piece]:
        """Reasoning ``body`` follows what was said: said with the newlines held before it,
        its own trailing newlines held in turn."""
        if not self._said:
            body = body.lstrip("\n")
        core = body.rstrip("\n")
        if not core:
            self._newlines += len(body)
            return []
        said = "\n" * self._newlines + core
        self._newlines = len(body) - len(core)
        self._said = True
        return [("reasoning", said)]

    def _after(self, piece: str) -> list[Piece]:
        answer = piece.lstrip("\n")
        if not answer:
            return []
        self._state = "text"
        return [("text", answer)]
