"""Turns: merging, and the placeholder user turn before a history that opens with the
assistant (private)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from threadline.messages import Message
from threadline.messages import TextPart

LEADING_USER_TEXT = "[conversation start]"
"""The text of the user turn put before a history whose first turn is the assistant's, where
the format needs a user turn first (Bedrock, Gemini) or never pairs the first message's tool
calls (Mistral); ``decode`` leaves that turn out again."""


def merge_into_turns(
    turns: list[dict[str, Any]],
    role: str,
    blocks: list[dict[str, Any]],
    *,
    key: str = "content",
    is_result: Callable[[Mapping[str, Any]], bool] | None = None,
) -> bool:
    """Add one message's ``blocks`` as a turn of ``role``, or to the last turn when it has
    that role: one block per part, text never joined. Returns whether they went to the last
    turn.

    With ``is_result``, a message of tool results merged into a turn that already holds
    other blocks goes before them (Anthropic and Bedrock refuse a tool result after text).
    """
    if not turns or turns[-1]["role"] != role:
        turns.append({"role": role, key: blocks})
        return False
    content: list[dict[str, Any]] = turns[-1][key]
    if is_result is None or not is_result(blocks[0]) or is_result(content[-1]):
        content.extend(blocks)
        return True
    first_other = next(i for i, block in enumerate(content) if not is_result(block))
    content[first_other:first_other] = blocks
    return True


def add_leading_turn(
    turns: list[dict[str, Any]], key: str, content: Any, *, assistant_role: str = "assistant"
) -> None:
    """Put a user turn whose ``key`` is ``content`` (`LEADING_USER_TEXT` as the format
    writes it) first, when ``turns`` start with the assistant's."""
    if turns and turns[0]["role"] == assistant_role:
        turns.insert(0, {"role": "user", key: copy.deepcopy(content)})


def is_leading_turn(
    role: str,
    content: Any,
    wire: Sequence[Any],
    *,
    placeholder: Any,
    assistant_role: str = "assistant",
) -> bool:
    """Whether the first turn of ``wire`` (its ``role`` and ``content`` as read) is the one
    `add_leading_turn` writes, with ``placeholder`` as its content: ``decode`` leaves
    it out."""
    if isinstance(content, tuple):
        content = list(content)
    return (
        role == "user"
        and content == placeholder
        and len(wire) > 1
        and isinstance(wire[1], Mapping)
        and wire[1].get("role") == assistant_role
    )


def add_to_runs(runs: list[tuple[str, list[Any]]], role: str, part: Any) -> None:
    """Add ``part`` to the last run when that run is ``role``'s, else start a run: a wire
    turn's parts split, in order, into messages of one role each (``decode`` of a format whose
    user turn holds tool results and user content alike: Anthropic, Bedrock, Gemini)."""
    if runs and runs[-1][0] == role:
        runs[-1][1].append(part)
    else:
        runs.append((role, [part]))


def without_leading_turn(messages: list[Message]) -> list[Message]:
    """``messages`` without what ``decode`` leaves out of a format that lifts leading system
    messages and merges consecutive user messages: a first user turn that reads as the one
    `add_leading_turn` writes. For ``normalize_for_round_trip``."""
    start = next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))
    end = next((i for i in range(start, len(messages)) if messages[i].role == "assistant"), None)
    if end is None or end == start:
        return messages
    turn = [part for message in messages[start:end] for part in message.parts]
    if turn != [TextPart(text=LEADING_USER_TEXT)] or messages[start].role != "user":
        return messages
    return messages[:start] + messages[end:]
