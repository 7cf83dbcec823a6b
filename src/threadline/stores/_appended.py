"""What ``load_after`` returns: the rows appended after a version, or the whole conversation.

Every store answers ``load_after(conversation_id, version)`` with one consistent read (a
transaction, a Lua script or a lock), so the version it reports is the version of the messages
it returns. A caller that holds a conversation at ``version`` applies ``messages`` at its end,
or, when ``replaced`` is true, starts over from ``messages``.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from threadline.messages import Message

__all__ = ["Appended"]


@dataclass(frozen=True)
class Appended:
    """What a store's ``load_after(conversation_id, version)`` read, at one version.

    ``replaced`` is false when the conversation was only appended to after ``version``:
    ``messages`` are then the messages those appends stored, oldest first (``[]`` when the
    conversation is still at ``version``). It is true when the caller must start over:
    the conversation was replaced or deleted after ``version``, ``version`` is newer than
    the store's, or the store cannot tell what happened since (it keeps no record of writes
    that old); ``messages`` are then all of the conversation (``[]`` when it was deleted).
    Version 0 holds nothing, so from it everything is appended (never ``replaced``).
    """

    version: int
    """The conversation's version now: the version of what was read."""
    messages: list[Message] = field(default_factory=list)
    """The messages appended after the caller's version, or (``replaced``) all of them."""
    replaced: bool = False
    """``messages`` is the whole conversation, not what was appended."""
