"""Lists the integrity pass produced, so that ``encode`` does not run it again (private).

The documented step is ``encode(history.messages_for_model(), provider=...)``: the integrity
pass runs in ``messages_for_model`` (through `prepare_messages`), and ``encode`` would run it
again on its output. Its output is a fixed point (`prepare_messages` is idempotent, and its
``auto`` output passes ``strict`` unchanged, with the same ``pending``), so a second pass can only
give the same messages back. `prepare_messages` returns its result as a `Checked` list, which
remembers the message objects it held when it was made; ``encode`` skips its own pass only
for a `Checked` list that still holds exactly those objects, in that order (`unchanged`).
Messages and parts are frozen, so a list holding the same objects holds the same history; a
caller who appends, removes, replaces or reorders anything gets the full pass again.
"""

from __future__ import annotations

import operator

from threadline.messages import Message

__all__ = ["Checked", "checked", "unchanged"]


class Checked(list[Message]):
    """A list of messages `prepare_messages` returned with ``pending="answer"``: an ordinary
    list to its caller, with the objects it held when it was made (``held``)."""

    __slots__ = ("held",)

    held: tuple[Message, ...]


def checked(messages: list[Message]) -> list[Message]:
    """``messages`` as a `Checked` list: call only on the output of a full integrity pass
    (``auto`` or ``strict``) with ``pending="answer"``."""
    result = Checked(messages)
    result.held = tuple(result)
    return result


def unchanged(messages: object) -> bool:
    """Whether ``messages`` is a `Checked` list that still holds exactly what it was made with
    (one identity comparison per message, no message is read)."""
    if type(messages) is not Checked:
        return False
    held = messages.held
    return len(messages) == len(held) and all(map(operator.is_, messages, held))
