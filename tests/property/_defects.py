"""Hypothesis strategies that break well-formed conversations in the ways agent histories break.

:func:`defective_conversations` draws a conversation from ``tests.strategies.conversations()``
and applies one to ``max_defects`` injections, each one of the kinds below, in a drawn order.

Repairable kinds (``auto`` fixes them, ``strict`` refuses all but the drops):
``drop_result`` (a crash before the tool returned), ``internal_message`` (anywhere, even inside
a turn), ``hook_part`` / ``hook_message`` (UI state on or as an assistant message),
``garbage_arguments`` (a model emitted arguments that are not a JSON object) and
``move_result`` (trimming or a race put a turn's results after a later message).

Hostile kinds (issue 19: shapes that once cost repair N squared steps), repairable too:
``many_unanswered`` (an assistant message of many calls and no result), ``many_missing`` (many
calls added to an answered turn, whose results repair merges into its tool message),
``many_misplaced`` (a turn of many calls whose results, shuffled, come after a later user
message), ``provider_pairs`` (an assistant message of many provider tool calls and results;
no defect) and ``internal_after_calls`` (many internal messages between a turn's calls and its
results).

Fatal kinds (both modes raise): ``orphan_result`` (a result for a call that never happened),
``result_before_call``, ``duplicate_result``, ``duplicate_in_turn`` (two calls of one turn share
an id) and ``duplicate_across_turns`` (a later turn reuses an earlier call's id; the one kind
``rename_duplicate_ids=True`` repairs) and ``reused_many_times`` (many later turns reuse one
id, and a turn already holds the ids renaming would pick first: renamable too).

Every injected message and part is a new object with a new id (``inj_<n>``), so tests can map
output parts back to input parts by identity.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from typing import Any

from hypothesis import strategies as st

from tests.strategies import PROVIDERS
from tests.strategies import conversations
from tests.strategies import hook_parts
from tests.strategies import texts
from tests.support import part_as
from threadline import Message
from threadline import ProviderToolCallPart
from threadline import ProviderToolResultPart
from threadline import TextPart
from threadline import ToolCallPart
from threadline import ToolResultPart

HOSTILE = (
    "many_unanswered",
    "many_missing",
    "many_misplaced",
    "provider_pairs",
    "internal_after_calls",
)
REPAIRABLE = (
    "drop_result",
    "internal_message",
    "hook_part",
    "hook_message",
    "garbage_arguments",
    "move_result",
    *HOSTILE,
)
FATAL = (
    "orphan_result",
    "result_before_call",
    "duplicate_result",
    "duplicate_in_turn",
    "duplicate_across_turns",
    "reused_many_times",
)
MANY = st.integers(2, 12)
"""How many calls, results or messages a hostile kind adds."""
# Defects that leave a duplicate id answered in its own turn still renamable (nothing moves).
RENAME_SAFE = ("drop_result", "internal_message", "hook_part", "hook_message", "garbage_arguments")

GARBAGE_ARGUMENTS = ("[]", "3", "null", '"text"', '{"q": "unterminated', "", "{'q': 1}")


@dataclass(frozen=True)
class Defective:
    """A broken conversation and the defects injected into it, in order."""

    messages: list[Message]
    defects: tuple[str, ...]


Draw = Callable[[st.SearchStrategy[Any]], Any]
Inject = Callable[[Draw, list[Message], Iterator[int]], list[Message]]


@st.composite
def defective_conversations(
    draw: st.DrawFn,
    kinds: tuple[str, ...] = REPAIRABLE,
    *,
    last: str | None = None,
    min_defects: int = 1,
    max_defects: int = 4,
) -> Defective:
    """A conversation with defects of ``kinds``, then ``last`` (when given).

    A fatal defect goes last so that no later injection can undo it (moving a result that was
    put before its call back after it, say).
    """
    messages = draw(conversations(min_turns=1, max_turns=4))
    chosen = draw(st.lists(st.sampled_from(kinds), min_size=min_defects, max_size=max_defects))
    if last is not None:
        chosen.append(last)
    ids = count()
    for kind in chosen:
        messages = _INJECTORS[kind](draw, messages, ids)
    return Defective(messages, tuple(chosen))


# --- helpers ------------------------------------------------------------------------------


def _new_id(ids: Iterator[int], kind: str = "inj") -> str:
    return f"{kind}_{next(ids)}"


def _with_parts(message: Message, parts: list[Any]) -> Message:
    return message.model_copy(update={"parts": tuple(parts)})


def _indexes(messages: list[Message], role: str, *, with_calls: bool = False) -> list[int]:
    return [
        i
        for i, m in enumerate(messages)
        if m.role == role and (not with_calls or any(type(p) is ToolCallPart for p in m.parts))
    ]


def _fresh_turn(ids: Iterator[int], call_id: str | None = None) -> list[Message]:
    """A user message, an assistant message with one call, and the call's result."""
    call = ToolCallPart(id=call_id or _new_id(ids, "call"), name="lookup", arguments={"n": 1})
    return [
        Message(id=_new_id(ids), role="user", parts=(TextPart(text="go"),)),
        Message(id=_new_id(ids), role="assistant", parts=(call,)),
        Message(
            id=_new_id(ids),
            role="tool",
            parts=(ToolResultPart(call_id=call.id, content="ok", name="lookup"),),
        ),
    ]


def _ensure_call_turns(messages: list[Message], ids: Iterator[int], wanted: int) -> list[Message]:
    messages = list(messages)
    while len(_indexes(messages, "assistant", with_calls=True)) < wanted:
        messages.extend(_fresh_turn(ids))
    return messages


def _answer_message(messages: list[Message], call_index: int) -> int | None:
    """The tool message right after an assistant message (conversations() puts one there)."""
    after = call_index + 1
    if after < len(messages) and messages[after].role == "tool":
        return after
    return None


# --- repairable ----------------------------------------------------------------------------


def _drop_result(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    messages = _ensure_call_turns(messages, ids, 1)
    tools = _indexes(messages, "tool")
    if not tools:
        return messages
    index = draw(st.sampled_from(tools))
    parts = list(messages[index].parts)
    del parts[draw(st.integers(0, len(parts) - 1))]
    out = list(messages)
    if parts:
        out[index] = _with_parts(messages[index], parts)
    else:
        del out[index]
    return out


def _internal_message(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    part = draw(st.one_of(hook_parts, st.builds(TextPart, text=texts)))
    message = Message(id=_new_id(ids), role="internal", parts=(part,))
    at = draw(st.integers(0, len(messages)))
    return [*messages[:at], message, *messages[at:]]


def _hook_part(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    assistants = _indexes(messages, "assistant")
    if not assistants:
        return _hook_message(draw, messages, ids)
    index = draw(st.sampled_from(assistants))
    parts = list(messages[index].parts)
    parts.insert(draw(st.integers(0, len(parts))), draw(hook_parts))
    out = list(messages)
    out[index] = _with_parts(messages[index], parts)
    return out


def _hook_message(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    hooks = tuple(draw(st.lists(hook_parts, min_size=1, max_size=2)))
    message = Message(id=_new_id(ids), role="assistant", parts=hooks)
    at = draw(st.integers(0, len(messages)))
    return [*messages[:at], message, *messages[at:]]


def _garbage_arguments(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    messages = _ensure_call_turns(messages, ids, 1)
    index = draw(st.sampled_from(_indexes(messages, "assistant", with_calls=True)))
    parts = list(messages[index].parts)
    calls = [j for j, p in enumerate(parts) if type(p) is ToolCallPart]
    j = draw(st.sampled_from(calls))
    raw = draw(st.sampled_from(GARBAGE_ARGUMENTS))
    parts[j] = dataclasses.replace(part_as(ToolCallPart, parts[j]), arguments={}, raw_arguments=raw)
    out = list(messages)
    out[index] = _with_parts(messages[index], parts)
    return out


def _move_result(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    """Move a tool message after a later non-tool message (appending one when there is none)."""
    messages = _ensure_call_turns(messages, ids, 1)
    tools = _indexes(messages, "tool")
    if not tools:
        return messages
    index = draw(st.sampled_from(tools))
    later = [i for i in range(index + 1, len(messages)) if messages[i].role != "tool"]
    out = list(messages)
    if not later:
        out.append(Message(id=_new_id(ids), role="user", parts=(TextPart(text="?"),)))
        later = [len(out) - 1]
    after = draw(st.sampled_from(later))
    moved = out.pop(index)
    out.insert(after, moved)  # ``after`` shifted down by the pop: lands right after it
    return out


# --- hostile (repairable) ------------------------------------------------------------------


def _calls(ids: Iterator[int], count: int) -> list[ToolCallPart]:
    return [
        ToolCallPart(id=_new_id(ids, "call"), name="lookup", arguments={"n": n})
        for n in range(count)
    ]


def _answers(calls: list[ToolCallPart]) -> list[ToolResultPart]:
    return [ToolResultPart(call_id=call.id, content="ok", name=call.name) for call in calls]


def _many_unanswered(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    calls = _calls(ids, draw(MANY))
    message = Message(id=_new_id(ids), role="assistant", parts=tuple(calls))
    at = draw(st.integers(0, len(messages)))
    return [*messages[:at], message, *messages[at:]]


def _many_missing(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    """New calls at drawn places in an answered turn's assistant message, without results."""
    messages = _ensure_call_turns(messages, ids, 1)
    index = draw(st.sampled_from(_indexes(messages, "assistant", with_calls=True)))
    parts = list(messages[index].parts)
    for call in _calls(ids, draw(MANY)):
        parts.insert(draw(st.integers(0, len(parts))), call)
    out = list(messages)
    out[index] = _with_parts(messages[index], parts)
    return out


def _many_misplaced(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    """A turn whose results, in a drawn order, come after the next user message."""
    calls = _calls(ids, draw(MANY))
    results = draw(st.permutations(_answers(calls)))
    return [
        *messages,
        Message(id=_new_id(ids), role="user", parts=(TextPart(text="go"),)),
        Message(id=_new_id(ids), role="assistant", parts=tuple(calls)),
        Message(id=_new_id(ids), role="user", parts=(TextPart(text="and?"),)),
        Message(id=_new_id(ids), role="tool", parts=tuple(results)),
    ]


def _provider_pairs(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    """An assistant message of provider tool calls, each result after its call."""
    provider = draw(st.sampled_from(PROVIDERS))
    count = draw(MANY)
    calls = [
        ProviderToolCallPart(id=_new_id(ids, "srv"), name="web_search", provider=provider)
        for _ in range(count)
    ]
    results = [ProviderToolResultPart(call_id=call.id, provider=provider) for call in calls]
    if draw(st.booleans()):
        parts: list[Any] = [part for pair in zip(calls, results, strict=True) for part in pair]
    else:
        parts = [*calls, *results]
    message = Message(id=_new_id(ids), role="assistant", parts=tuple(parts))
    at = draw(st.integers(0, len(messages)))
    return [*messages[:at], message, *messages[at:]]


def _internal_after_calls(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    """Internal messages right after an assistant message with calls."""
    messages = _ensure_call_turns(messages, ids, 1)
    index = draw(st.sampled_from(_indexes(messages, "assistant", with_calls=True)))
    notes = [
        Message(id=_new_id(ids), role="internal", parts=(TextPart(text="ui state"),))
        for _ in range(draw(MANY))
    ]
    return [*messages[: index + 1], *notes, *messages[index + 1 :]]


# --- fatal -----------------------------------------------------------------------------------


def _orphan_result(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    ghost = ToolResultPart(call_id=_new_id(ids, "ghost"), content="boo")
    tools = _indexes(messages, "tool")
    out = list(messages)
    if tools and draw(st.booleans()):
        index = draw(st.sampled_from(tools))
        parts = list(out[index].parts)
        parts.insert(draw(st.integers(0, len(parts))), ghost)
        out[index] = _with_parts(out[index], parts)
        return out
    at = draw(st.integers(0, len(out)))
    out.insert(at, Message(id=_new_id(ids), role="tool", parts=(ghost,)))
    return out


def _result_before_call(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    messages = _ensure_call_turns(messages, ids, 1)
    candidates = [
        i
        for i in _indexes(messages, "assistant", with_calls=True)
        if _answer_message(messages, i) is not None
    ]
    if not candidates:
        messages = [*messages, *_fresh_turn(ids)]
        candidates = [len(messages) - 2]
    index = draw(st.sampled_from(candidates))
    out = list(messages)
    tool = out.pop(index + 1)
    out.insert(index, tool)
    return out


def _duplicate_result(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    messages = _ensure_call_turns(messages, ids, 1)
    tools = _indexes(messages, "tool")
    if not tools:
        messages = [*messages, *_fresh_turn(ids)]
        tools = [len(messages) - 1]
    index = draw(st.sampled_from(tools))
    parts = list(messages[index].parts)
    copy = dataclasses.replace(draw(st.sampled_from(parts)), content="again")
    parts.insert(draw(st.integers(0, len(parts))), copy)
    out = list(messages)
    out[index] = _with_parts(messages[index], parts)
    return out


def _duplicate_in_turn(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    """A second call with an existing call's id in the same message, answered like the first."""
    messages = _ensure_call_turns(messages, ids, 1)
    index = draw(st.sampled_from(_indexes(messages, "assistant", with_calls=True)))
    parts = list(messages[index].parts)
    original = draw(st.sampled_from([p for p in parts if type(p) is ToolCallPart]))
    twin = ToolCallPart(id=original.id, name="twin", arguments={})
    parts.insert(draw(st.integers(0, len(parts))), twin)
    out = list(messages)
    out[index] = _with_parts(messages[index], parts)
    answer = ToolResultPart(call_id=original.id, content="twin result", name="twin")
    tool_index = _answer_message(out, index)
    if tool_index is None:
        out.insert(index + 1, Message(id=_new_id(ids), role="tool", parts=(answer,)))
    else:
        out[tool_index] = _with_parts(out[tool_index], [*out[tool_index].parts, answer])
    return out


def _duplicate_across_turns(
    draw: Draw, messages: list[Message], ids: Iterator[int]
) -> list[Message]:
    """A later turn's call (and its result) takes the id of a call from an earlier turn."""
    messages = _ensure_call_turns(messages, ids, 2)
    turns = _indexes(messages, "assistant", with_calls=True)
    earlier, later = sorted(draw(st.lists(st.sampled_from(turns), min_size=2, max_size=2,
                                          unique=True)))  # fmt: skip
    reused = draw(st.sampled_from([p for p in messages[earlier].parts if type(p) is ToolCallPart]))
    parts = list(messages[later].parts)
    j = draw(st.sampled_from([j for j, p in enumerate(parts) if type(p) is ToolCallPart]))
    old_id = parts[j].id
    parts[j] = dataclasses.replace(parts[j], id=reused.id)
    out = list(messages)
    out[later] = _with_parts(messages[later], parts)
    for index in _indexes(out, "tool"):  # ids are unique: only that call's result matches
        if any(p.call_id == old_id for p in out[index].parts):  # type: ignore[union-attr]
            results = [
                dataclasses.replace(p, call_id=reused.id) if p.call_id == old_id else p  # type: ignore[union-attr]
                for p in out[index].parts
            ]
            out[index] = _with_parts(out[index], results)
    return out


def _reused_many_times(draw: Draw, messages: list[Message], ids: Iterator[int]) -> list[Message]:
    """Later turns, each reusing one earlier call's id (and answering it), after a turn whose
    calls hold the ids ``f"{id}~{n}"`` that renaming would try first."""
    messages = _ensure_call_turns(messages, ids, 1)
    earlier = draw(st.sampled_from(_indexes(messages, "assistant", with_calls=True)))
    reused = draw(st.sampled_from([p for p in messages[earlier].parts if type(p) is ToolCallPart]))
    taken = [
        ToolCallPart(id=f"{reused.id}~{n}", name="lookup", arguments={})
        for n in range(2, 2 + draw(st.integers(0, 12)))
    ]
    out = list(messages)
    if taken:
        out.extend(
            [
                Message(id=_new_id(ids), role="user", parts=(TextPart(text="go"),)),
                Message(id=_new_id(ids), role="assistant", parts=tuple(taken)),
                Message(id=_new_id(ids), role="tool", parts=tuple(_answers(taken))),
            ]
        )
    for _ in range(draw(MANY)):
        call = ToolCallPart(id=reused.id, name="lookup", arguments={})
        out.append(Message(id=_new_id(ids), role="assistant", parts=(call,)))
        out.append(Message(id=_new_id(ids), role="tool", parts=tuple(_answers([call]))))
    return out


_INJECTORS: dict[str, Inject] = {
    "drop_result": _drop_result,
    "internal_message": _internal_message,
    "hook_part": _hook_part,
    "hook_message": _hook_message,
    "garbage_arguments": _garbage_arguments,
    "move_result": _move_result,
    "orphan_result": _orphan_result,
    "result_before_call": _result_before_call,
    "duplicate_result": _duplicate_result,
    "duplicate_in_turn": _duplicate_in_turn,
    "duplicate_across_turns": _duplicate_across_turns,
    "reused_many_times": _reused_many_times,
    "many_unanswered": _many_unanswered,
    "many_missing": _many_missing,
    "many_misplaced": _many_misplaced,
    "provider_pairs": _provider_pairs,
    "internal_after_calls": _internal_after_calls,
}
