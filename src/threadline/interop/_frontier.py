"""The write rule of an adapter whose reads keep pending calls: a new turn closes the frontier.

An adapter that reads a live history with ``pending="keep"`` leaves the calls of the newest
assistant message unanswered while their results may still come. When a message that is not a
tool message is written after such calls (a crash was followed by a new human turn), nobody is
working on them any more: they are answered as interrupted in the same write, before that
message, with the result repair would insert, so the stored conversation says what a model is
shown from then on.
"""

from __future__ import annotations

from collections.abc import Sequence

from threadline.integrity import MISSING_RESULT_TEXT
from threadline.integrity import pending_calls
from threadline.messages import Message
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.messages import tool_message
from threadline.messages import tool_result_part

__all__ = ["answer_before_new_turns"]

_MARK = {"threadline.repair": "missing-tool-result"}  # the provenance repair gives its answers


def answer_before_new_turns(stored: Sequence[Message], batch: Sequence[Message]) -> list[Message]:
    """``batch``, with a tool message answering the pending calls as interrupted before each
    message of it that is not a tool message and follows pending calls.

    A pending call that a later message of ``batch`` answers is left to that result (repair
    moves a misplaced result; answering it too would make a duplicate). A message whose id
    ``stored`` already holds is a replay (the store skips it, or refuses it when it differs):
    it stays in the batch and is not read as new. The created message's id is
    ``f"{call_message.id}:results"`` (repair's own), with ``~2``, ``~3``... when the
    conversation already holds that id, so sending the same batch again builds the same
    message, and writes nothing once the first send went through. Returns a new list.
    """
    stored_ids = {message.id for message in stored}
    out: list[Message] = []
    view: list[Message] = list(stored)  # the conversation as written so far, replays once
    for index, message in enumerate(batch):
        if message.id in stored_ids:
            out.append(message)
            continue
        if message.role != "tool":
            later = {
                part.call_id
                for item in batch[index:]
                for part in item.parts
                if isinstance(part, ToolResultPart)
            }
            calls = [call for call in pending_calls(view) if call.id not in later]
            if calls:
                answer = _answers(calls, view, batch)
                out.append(answer)
                view.append(answer)
        out.append(message)
        view.append(message)
    return out


def _answers(
    calls: list[ToolCallPart], history: list[Message], batch: Sequence[Message]
) -> Message:
    owner = next(
        message
        for message in reversed(history)
        if any(type(part) is ToolCallPart and part.id == calls[0].id for part in message.parts)
    )
    used = {message.id for message in (*history, *batch)}
    base = f"{owner.id}:results"
    identity, count = base, 1
    while identity in used:
        count += 1
        identity = f"{base}~{count}"
    results = [
        tool_result_part(
            call.id, MISSING_RESULT_TEXT, name=call.name, is_error=True, metadata=_MARK
        )
        for call in calls
    ]
    return tool_message(*results, id=identity)
