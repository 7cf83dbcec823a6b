"""System messages in the middle of a conversation, where a format has no place for them
(private).

Anthropic, Bedrock and Gemini lift the leading system messages to their own field and have no
system turn after that; Mistral refuses a system message after an assistant or tool message.
Such a system message goes in the user turn, each text as its own text block wrapped in
``<system>`` tags (`as_user_note`), so the model can tell it from the user's words; ``decode``
reads a user text that is exactly such a block back as a system message (`unwrap_notes`).
"""

from __future__ import annotations

from collections.abc import Sequence

from threadline.codecs._policies import is_blank
from threadline.messages import Message, Part, TextPart

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


def unwrap_notes(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with each run of user texts that are `note`\\ s as a system message of
    their system texts, in place (the user message split around it)."""
    out: list[Message] = []
    for message in messages:
        if message.role != "user" or not any(_is_note(part) for part in message.parts):
            out.append(message)
            continue
        runs: list[tuple[str, list[Part]]] = []
        for part in message.parts:
            role = "user"
            if isinstance(part, TextPart) and (text := note_text(part.text)) is not None:
                role, part = "system", TextPart(text=text, metadata=part.metadata)
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


def _is_note(part: Part) -> bool:
    return isinstance(part, TextPart) and note_text(part.text) is not None
