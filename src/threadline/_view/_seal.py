"""A seal's verdict on a history, for the page to show."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from threadline.errors import SealError
from threadline.messages import Message
from threadline.sealing import verify
from threadline.sealing import verify_prefix

__all__ = ["SealVerdict", "seal_verdict"]

_EVERY_ROLE = ("system", "user", "assistant", "tool", "internal")


@dataclass(frozen=True)
class SealVerdict:
    """Whether a history is what was sealed: ``ok``, how many messages the seal covers (when it
    matched), and a sentence for the reader."""

    ok: bool
    detail: str
    sealed: int | None = None
    """How many leading messages matched the seal; ``None`` when none did."""


def seal_verdict(
    messages: Sequence[Message], seal: str, key: bytes, *, conversation_id: str
) -> SealVerdict:
    """Check ``messages`` against ``seal`` with ``key`` for the conversation.

    The key stands for whatever key id the seal names (the reader was handed one key). A history
    longer than the seal is checked as [`verify_prefix`][threadline.sealing.verify_prefix]
    would, with every role allowed after the sealed part, so the page can mark what was added.

    Args:
        messages: the history.
        seal: the seal handed out with it.
        key: the secret key.
        conversation_id: the conversation it was sealed for.

    Raises:
        TypeError: ``key`` is not bytes.
        ValueError: ``key`` is too short, or ``conversation_id`` is empty.
    """
    fields = seal.split(".") if isinstance(seal, str) else []
    key_id = fields[1] if len(fields) == 4 else "default"
    keys = {key_id: key}
    try:
        verify(messages, seal, keys, conversation_id=conversation_id)
    except SealError as error:
        if error.reason != "count":
            return SealVerdict(False, f"seal check failed ({error.reason}): {error}")
        try:
            sealed, tail = verify_prefix(
                messages, seal, keys, conversation_id=conversation_id, tail_roles=_EVERY_ROLE
            )
        except SealError:
            return SealVerdict(False, f"seal check failed ({error.reason}): {error}")
        return SealVerdict(
            False,
            f"the first {len(sealed):,} messages are exactly what was sealed for this "
            f"conversation (key id {key_id}); the {len(tail):,} after them were added since",
            sealed=len(sealed),
        )
    return SealVerdict(
        True,
        f"seal verified: the {len(messages):,} messages are exactly what was sealed for this "
        f"conversation (key id {key_id})",
        sealed=len(messages),
    )
