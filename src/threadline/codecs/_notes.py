"""System messages in the middle of a conversation, where a format has no place for them
(private).

Anthropic, Bedrock and Gemini lift the leading system messages to their own field and have no
system turn after that; Mistral refuses a system message after an assistant or tool message.
Such a system message goes in the user turn, each text as its own text block wrapped in
``<system>`` tags (`as_user_note`), so the model can tell it from the user's words; ``decode``
reads a user text that is exactly such a block back as a system message (`unwrap_notes`).

A user's own text that reads like a note (after any leading backslashes) is sent with one
more backslash before it (`escape_notes`), and ``decode`` takes that backslash off again: a
user text never reads back as a system message, and every text reads back as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from threadline.codecs._policies import Resolved
from threadline.codecs._policies import is_blank
from threadline.messages import Message
from threadline.messages import Part
from threadline.messages import Role
from threadline.messages import TextPart

if TYPE_CHECKING:
    from threadline.codecs._prepared import PreparedHistory

OPEN = "<system>\n"
CLOSE = "\n</system>"


def note(text: str) -> str:
    """``text`` as the user text that stands for system text: ``<system>\\n…\\n</system>``."""
    return f"{OPEN}{text}{CLOSE}"


def note_text(text: str) -> str | None:
    """The system text ``text`` stands for, when it is a `note`; else ``None``."""
    if text.startswith(OPEN) and text.endswith(CLOSE) and len(text) >= len(OPEN) + len(CLOSE):
        return text[len(OPEN) : len(text) - len(CLOSE)]
    return None


ESCAPE = "\\"
"""Sent before a user's text that would read as a `note`."""


def _needs_escape(text: str) -> bool:
    return text.endswith(CLOSE) and note_text(text.lstrip(ESCAPE)) is not None


def escape_notes(message: Message) -> Message:
    """A user message whose texts that read like a `note` (after any leading backslashes) get
    one more backslash first; ``message`` itself when none does."""
    for part in message.parts:
        # endswith first: the test that fails for almost every text, without a call
        if isinstance(part, TextPart) and part.text.endswith(CLOSE) and _needs_escape(part.text):
            break
    else:
        return message
    parts = tuple(
        TextPart(text=ESCAPE + part.text, metadata=part.metadata)
        if isinstance(part, TextPart) and _needs_escape(part.text)
        else part
        for part in message.parts
    )
    return message.model_copy(update={"parts": parts})


def as_user_note(message: Message) -> Message | None:
    """A system message as the user message that carries it: each text that is not blank as a
    `note` (part metadata kept); ``None`` when no text is left."""
    parts = [
        TextPart(text=note(part.text), metadata=part.metadata)
        for part in message.parts
        if isinstance(part, TextPart) and not is_blank(part.text)
    ]
    if not parts:
        return None
    return message.model_copy(update={"role": "user", "parts": tuple(parts)})


def turn_parts(
    history: PreparedHistory, index: int
) -> tuple[Message, Role, Sequence[Resolved]] | None:
    """The message, role and parts a format without later system turns sends for the message
    at ``index`` of ``history`` after its leading system text (Anthropic, Bedrock): a system
    message as a user note (``None``: no text to send), a user message with its note-like
    texts escaped, and the history's parts for it unless either changed the message."""
    message = history.messages[index]
    role: Role = message.role
    if role == "system":
        user_note = as_user_note(message)
        if user_note is None:
            return None
        return user_note, "user", history.parts_of(index, user_note)
    if role == "user":
        escaped = escape_notes(message)
        if escaped is not message:
            return escaped, role, history.parts_of(index, escaped)
    ready = history.ready[index]  # most messages: the plan's parts, without a call
    return message, role, history.parts(index) if ready is None else ready


def unwrap_notes(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with each run of user texts that are `note`\\ s as a system message of
    their system texts, in place (the user message split around it), and the backslash
    `escape_notes` adds taken off."""
    out: list[Message] = []
    for message in messages:
        if message.role != "user" or not any(_is_marked(part) for part in message.parts):
            out.append(message)
            continue
        runs: list[tuple[str, list[Part]]] = []
        for part in message.parts:
            role = "user"
            if isinstance(part, TextPart) and (text := note_text(part.text)) is not None:
                role, part = "system", TextPart(text=text, metadata=part.metadata)
            elif isinstance(part, TextPart) and _needs_escape(part.text):  # escaped
                part = TextPart(text=part.text[len(ESCAPE) :], metadata=part.metadata)
            if runs and runs[-1][0] == role:
                runs[-1][1].append(part)
            else:
                runs.append((role, [part]))
        for number, (role, parts) in enumerate(runs):
            update: dict[str, object] = {"role": role, "parts": tuple(parts)}
            if number:
                update["id"] = f"{message.id}:{number}"
            out.append(message.model_copy(update=update))
    return out


def _is_marked(part: Part) -> bool:
    """A note, or an escaped text."""
    return isinstance(part, TextPart) and _needs_escape(part.text)
