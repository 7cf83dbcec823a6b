"""The rule every adapter that writes a framework's messages to a store applies to a batch.

A batch that brings a defect repair cannot fix (a result for a call the conversation never
made, a call id used twice, a call answered twice) would make every later read raise
`IntegrityError`: the conversation would be poisoned for good. Such a batch is refused before
it is written; a call whose result has not come yet is allowed (it is in flight, and repair
answers it if it never does). Defects already stored are not the batch's fault and are not
judged here.
"""

from __future__ import annotations

from collections.abc import Sequence

from threadline.errors import IntegrityError
from threadline.integrity import _FATAL_CODES as UNREPAIRABLE
from threadline.integrity import IntegrityIssue
from threadline.integrity import check_messages
from threadline.messages import Message
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

__all__ = ["could_poison", "pairing_only", "refuse_unrepairable"]

_PAIRED = (ToolCallPart, ToolResultPart, ProviderToolCallPart, ProviderToolResultPart)


def could_poison(batch: Sequence[Message]) -> bool:
    """Whether ``batch`` holds a call or a result: only those can bring an unrepairable
    defect, so a batch without one needs no read of the conversation to be checked."""
    return any(isinstance(part, _PAIRED) for message in batch for part in message.parts)


def pairing_only(messages: Sequence[Message]) -> list[Message]:
    """``messages`` cut to their calls and results, the messages left with none dropped.

    The rule judges a batch by the calls and results of each id, in order (which call a
    result answers; a provider result by its call in the same message), never by the text
    between them: a writer that checks many batches keeps this much of the conversation
    between checks instead of reading all of it again. The parts are the same objects.
    """
    out: list[Message] = []
    for message in messages:
        kept = tuple(part for part in message.parts if isinstance(part, _PAIRED))
        if len(kept) == len(message.parts):
            out.append(message)
        elif kept:
            out.append(message.model_copy(update={"parts": kept}))
    return out


def refuse_unrepairable(history: Sequence[Message], batch: Sequence[Message], writer: str) -> None:
    """Refuse ``batch`` when ``history`` (the conversation as a read will see it with the
    batch written) has an unrepairable defect at one of the batch's parts.

    ``history`` holds the batch's part objects themselves (an adapter may regroup messages
    for reading, as ``ThreadlineSession`` joins one turn added in two calls), so the defects
    are told apart by part, not by message index.

    Raises:
        threadline.IntegrityError: the batch would poison the conversation; it lists the
            issues, with indexes into ``history``.
    """
    mine = {id(part) for message in batch for part in message.parts}
    issues: list[IntegrityIssue] = [
        issue
        for issue in check_messages(history).issues
        if issue.code in UNREPAIRABLE  # repair refuses these in every mode
        and issue.part_index is not None
        and id(history[issue.message_index].parts[issue.part_index]) in mine
    ]
    if issues:
        lines = "\n".join(f"  {issue}" for issue in issues)
        raise IntegrityError(
            f"{writer}: the batch would make every later read of the conversation fail "
            f"({len(issues)} issue(s): a result for a call it never made, a call id used "
            f"twice or a call answered twice); nothing was written:\n{lines}",
            issues,
        )
