"""Message ids and pending calls for the pydantic-ai adapter.

`chained_id` gives the messages
[`from_pydantic_ai`][threadline.interop.pydantic_ai.from_pydantic_ai] builds deterministic ids:
each id hashes the previous message's id and the message's own JSON, so a conversion is stable
when it is done again, and when the list it converts grows at the end (``all_messages()`` after
each run, or ``new_messages()`` chained ``after=`` the last stored id). `settle_pending` applies
[`to_pydantic_ai`][threadline.interop.pydantic_ai.to_pydantic_ai]'s ``pending=`` choice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import pydantic_core

from threadline._repair import frontier_index
from threadline.errors import IntegrityError
from threadline.integrity import MISSING_RESULT_TEXT
from threadline.integrity import check_messages
from threadline.integrity import pending_calls
from threadline.messages import Message
from threadline.messages import ToolResultPart

__all__ = ["chained_id", "check_after", "settle_pending"]

_PENDING = ("answer", "keep", "refuse")


def chained_id(previous: str | None, message: Mapping[str, Any]) -> str:
    """``"msg_"`` and 32 hex digits of the SHA-256 of ``previous`` and ``message`` (a message as
    the dict conversion builds, without its id) as JSON: equal messages at different places in
    a conversation get different ids."""
    digest = hashlib.sha256((previous or "").encode())
    digest.update(b"\x00")
    digest.update(pydantic_core.to_json(message, bytes_mode="base64"))
    return "msg_" + digest.hexdigest()[:32]


def check_after(after: object) -> str | None:
    if after is None or (isinstance(after, str) and after):
        return after
    raise ValueError(
        f"after= must be the id of the message the converted ones follow (a non-empty str) or "
        f"None, got {after!r}"
    )


def settle_pending(messages: list[Message], pending: str) -> list[Message]:
    """``messages`` with their pending calls kept, answered as interrupted, or refused.

    Raises:
        threadline.IntegrityError: ``pending="refuse"`` and a call is pending.
        ValueError: ``pending`` is not one of its values.
    """
    if pending not in _PENDING:
        raise ValueError(f"pending= must be 'answer', 'keep' or 'refuse', got {pending!r}")
    if pending == "keep":
        return messages
    calls = pending_calls(messages)
    if not calls:
        return messages
    if pending == "refuse":
        issues = [
            issue
            for issue in check_messages(messages, pending="refuse").issues
            if issue.code == "pending-tool-call"
        ]
        names = ", ".join(repr(call.id) for call in calls)
        raise IntegrityError(
            f"cannot convert to pydantic-ai: tool calls {names} are pending (pending='refuse'); "
            "pass pending='keep' to let a run with no new prompt execute them, or "
            "pending='answer' to answer them as interrupted",
            issues,
        )
    return _answered(messages, calls)


def _answered(messages: list[Message], calls: Sequence[Any]) -> list[Message]:
    """``messages`` with an interrupted error result for each of ``calls`` (the pending calls
    of one assistant message), as repair answers them: in the tool message right after the
    call, or a new one with the id ``f"{call_message.id}:results"``."""
    at = frontier_index(messages)
    results = [
        ToolResultPart(
            call_id=call.id,
            content=MISSING_RESULT_TEXT,
            name=call.name,
            is_error=True,
            metadata={"threadline.repair": "missing-tool-result"},
        )
        for call in calls
    ]
    out = list(messages)
    for index in range(at + 1, len(out)):
        if out[index].role == "tool":
            message = out[index]
            out[index] = message.model_copy(update={"parts": (*message.parts, *results)})
            return out
    answer = Message(role="tool", parts=tuple(results), id=f"{messages[at].id}:results")
    out.insert(at + 1, answer)
    return out
