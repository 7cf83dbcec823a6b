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
from threadline.messages import Part
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

__all__ = ["could_poison", "pairing_ids", "pairing_index", "refuse_unrepairable"]

_PAIRED = (ToolCallPart, ToolResultPart, ProviderToolCallPart, ProviderToolResultPart)


def could_poison(batch: Sequence[Message]) -> bool:
    """Whether ``batch`` holds a call or a result: only those can bring an unrepairable
    defect, so a batch without one needs no read of the conversation to be checked."""
    return any(isinstance(part, _PAIRED) for message in batch for part in message.parts)


def pairing_index(
    messages: Sequence[Message], into: dict[str, list[Message]] | None = None
) -> dict[str, list[Message]]:
    """For each call id, ``messages`` cut to the calls and results of that id, in order
    (added to ``into`` when given).

    The rule judges each call id alone, by its calls and results in order (which call a
    result answers; a provider result by its call in the same message), never by the text
    between them: a writer that checks many batches keeps this index between checks instead
    of reading the conversation again, and checks a batch against the ids it names
    (`pairing_ids`). The parts are the same objects.
    """
    index = {} if into is None else into
    for message in messages:
        groups: dict[str, list[Part]] = {}
        for part in message.parts:
            call_id = _pairing_id(part)
            if call_id is not None:
                groups.setdefault(call_id, []).append(part)
        for call_id, parts in groups.items():
            cut = message if len(parts) == len(message.parts) else None
            index.setdefault(call_id, []).append(
                cut or message.model_copy(update={"parts": tuple(parts)})
            )
    return index


def pairing_ids(batch: Sequence[Message]) -> list[str]:
    """The call ids of the calls and results in ``batch``, each once, in order."""
    ids = (_pairing_id(part) for message in batch for part in message.parts)
    return list(dict.fromkeys(call_id for call_id in ids if call_id is not None))


def _pairing_id(part: Part) -> str | None:
    if isinstance(part, (ToolCallPart, ProviderToolCallPart)):
        return part.id
    if isinstance(part, (ToolResultPart, ProviderToolResultPart)):
        return part.call_id
    return None


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
