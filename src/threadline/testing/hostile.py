"""Hostile conversation shapes: inputs of size N that once cost N squared steps (issue 19).

Each builder takes N and returns a conversation (or, for
[`invalid_messages`][threadline.testing.hostile.invalid_messages], a JSON document) in which
one thing an ordinary history holds a few of is repeated N times: calls, results, ids,
reasoning items, invalid messages. Repair, the codecs' ``encode`` and the
error report must do work linear in N on every one of them; threadline's own tests count the
lines run on them (``tests/unit/test_integrity_growth.py``) and its benchmark times them
(``bench/hostile.py``). A third-party codec or store can hold itself to the same::

    import time

    from threadline.codecs import anthropic
    from threadline.testing.hostile import misplaced

    small, large = misplaced(1_000), misplaced(10_000)
    start = time.perf_counter()
    anthropic.encode(small)
    middle = time.perf_counter()
    anthropic.encode(large)
    print(f"10x the input took {(time.perf_counter() - middle) / (middle - start):.1f}x the time")

The builders are deterministic and need no test dependency.
"""

from __future__ import annotations

import json

from threadline.messages import AssistantPart
from threadline.messages import Message
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.messages import assistant_message
from threadline.messages import internal_message
from threadline.messages import tool_call_part
from threadline.messages import tool_message
from threadline.messages import tool_result_part
from threadline.messages import user_message

__all__ = [
    "internal_after_calls",
    "invalid_messages",
    "merged",
    "misplaced",
    "provider_pairs",
    "reasoning_items",
    "reused_id",
    "shared_ids",
    "unanswered",
]


def _calls(n: int, prefix: str = "c") -> list[ToolCallPart]:
    return [tool_call_part(f"{prefix}{i}", "lookup", {"i": i}) for i in range(n)]


def _results(n: int, prefix: str = "c") -> list[ToolResultPart]:
    return [tool_result_part(f"{prefix}{i}", "ok") for i in range(n)]


def _ask() -> Message:
    return user_message("go", id="u0")


def unanswered(n: int) -> list[Message]:
    """One assistant message of N calls, none answered (a crash mid-turn)."""
    return [_ask(), assistant_message(*_calls(n), id="a0")]


def merged(n: int) -> list[Message]:
    """N - 1 missing results to merge into the tool message that answers the first call."""
    first = tool_result_part("c0", "ok")
    return [_ask(), assistant_message(*_calls(n), id="a0"), tool_message(first, id="t0")]


def misplaced(n: int) -> list[Message]:
    """N results after a later user message, each to move back after its call."""
    return [
        _ask(),
        assistant_message(*_calls(n), id="a0"),
        user_message("and?", id="u1"),
        tool_message(*_results(n), id="t0"),
    ]


def provider_pairs(n: int) -> list[Message]:
    """N provider tool calls, each followed by its result, in one assistant message."""
    parts: list[AssistantPart] = []
    for i in range(n):
        parts.append(ProviderToolCallPart(id=f"p{i}", name="web_search", provider="anthropic"))
        parts.append(ProviderToolResultPart(call_id=f"p{i}", provider="anthropic"))
    return [_ask(), assistant_message(*parts, id="a0")]


def internal_after_calls(n: int) -> list[Message]:
    """N unanswered calls followed by N internal messages, which repair looks past."""
    notes = [internal_message("ui state", id=f"i{i}") for i in range(n)]
    return [_ask(), assistant_message(*_calls(n), id="a0"), *notes]


def reused_id(n: int) -> list[Message]:
    """N turns reusing one call id, whose renames ``x~2``... are taken by the first turn."""
    taken = [f"x~{i}" for i in range(2, n + 2)]
    out = [
        _ask(),
        assistant_message(*(tool_call_part(i, "lookup", {}) for i in taken), id="a0"),
        tool_message(*(tool_result_part(i, "ok") for i in taken), id="t0"),
    ]
    for i in range(n):
        out.append(assistant_message(tool_call_part("x", "lookup", {}), id=f"a{i + 1}"))
        out.append(tool_message(tool_result_part("x", "ok"), id=f"t{i + 1}"))
    return out


def shared_ids(n: int) -> list[Message]:
    """Two turns whose N calls share ids, and N orphan results (which make renaming raise)."""
    return [
        _ask(),
        assistant_message(*_calls(n), id="a0"),
        tool_message(*_results(n), id="t0"),
        assistant_message(*_calls(n), id="a1"),
        tool_message(*_results(n), id="t1"),
        tool_message(*_results(n, prefix="ghost"), id="t2"),
    ]


def reasoning_items(n: int) -> list[Message]:
    """N OpenAI reasoning items, each heading the call it produced (Responses cuts segments)."""
    parts: list[AssistantPart] = []
    for i in range(n):
        parts.append(ReasoningPart(text="t", provider="openai", item_id=f"rs_{i}", encrypted="e"))
        parts.append(tool_call_part(f"c{i}", "f", {}, metadata={"openai.item_id": f"fc_{i}"}))
    return [_ask(), assistant_message(*parts, id="a0"), tool_message(*_results(n), id="t0")]


def invalid_messages(n: int) -> str:
    """A threadline JSON envelope of N messages without parts: N errors to report."""
    messages = [{"id": f"m{i}", "role": "user", "parts": []} for i in range(n)]
    return json.dumps({"format": "threadline", "version": 1, "messages": messages})
