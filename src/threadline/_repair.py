"""The machinery of `threadline.integrity`: the scan, the working state and the passes.

`threadline.integrity` holds the contract (the issue codes and their order, the report types,
the public functions and what each mode does with each code); this module finds the issues and
makes the changes, and knows nothing of modes: every pass calls `Run.report` with the code, the
input position, the call id, the problem and what repair did about it, and the contract's
subclass of `Run` turns that into an `IntegrityIssue` and decides whether the mode refuses it.

First one scan over the input finds the candidates of every check. It is the only code that
visits every message: the checks are fused into it because a scan per check would cost several
times more on a 100,000-message history. On a clean history nothing else runs. Otherwise the
passes in `PASSES` run in the order of the issue table, each on the state the last one left.

The working state is addressed by *input* positions: a dropped message or part leaves a hole,
results added to a turn are kept beside the message they join, and a tool message created by
repair hangs off the call message it follows. So no pass re-scans the history, every issue
names input indexes, and the output is assembled once at the end by copying the untouched runs
of the input. The caller's messages and parts are never mutated; changed ones are copies.

Repair takes time linear in the input whatever its shape: where a call sits in its message,
the message after a call, the place of an added result and the next free id of a rename are
looked up in indexes built once (or resumed where the last lookup stopped), never found by a
scan per call. One message of N calls, N results to move or merge, N internal messages after a
call or N renames would otherwise cost N squared steps, inside ``Limits.untrusted()``.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING
from typing import Any
from typing import Final
from typing import TypeAlias

from typing_extensions import assert_never

from threadline._json import EMPTY
from threadline._json import FrozenJsonMap
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import Part
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

if TYPE_CHECKING:
    from threadline.integrity import IssueCode

_REPAIR_KEY: Final = "threadline.repair"
_INCOMPLETE_KEY: Final = "threadline.incomplete"
_RAW_ARGUMENTS_KEY: Final = "threadline.raw_arguments"

Position: TypeAlias = tuple[int, int]
"""(message index, part index) in the input."""


# ---------------------------------------------------------------------------------------------
# The scan: one pass over the input that finds every candidate of every check.


@dataclass(slots=True)
class Scan:
    places: _CallPlaces
    """Where the calls of the messages asked about sit (an index built on demand)."""
    internal: list[int] = dataclasses.field(default_factory=list)
    hooks: list[Position] = dataclasses.field(default_factory=list)
    partless: list[int] = dataclasses.field(default_factory=list)
    orphans: list[Position] = dataclasses.field(default_factory=list)
    duplicate_calls: dict[str, list[Position]] = dataclasses.field(default_factory=dict)
    duplicate_results: list[tuple[Position, Position]] = dataclasses.field(default_factory=list)
    """(extra result, the call it is attributed to)."""
    invalid: list[Position] = dataclasses.field(default_factory=list)
    misplaced: dict[Position, Position] = dataclasses.field(default_factory=dict)
    """call -> its only result, which sits outside the call's turn."""
    missing: list[Position] = dataclasses.field(default_factory=list)
    answers: dict[Position, Position] = dataclasses.field(default_factory=dict)
    """call -> result, recorded only for calls whose id is duplicated (renaming needs it)."""
    call_ids: dict[str, int] = dataclasses.field(default_factory=dict)
    """tool call id -> the message of its latest call."""
    provider_ids: dict[str, int] = dataclasses.field(default_factory=dict)
    """provider tool call id -> the message of its latest call."""
    provider_answered: set[str] = dataclasses.field(default_factory=set)
    frontier: int = -1
    """The message whose unanswered calls are pending (the live frontier), or -1: the last
    turn anchor when it is an assistant message not marked ``threadline.incomplete``."""

    @property
    def clean(self) -> bool:
        return not (
            self.internal
            or self.hooks
            or self.partless
            or self.orphans
            or self.duplicate_calls
            or self.duplicate_results
            or self.invalid
            or self.misplaced
            or self.missing
        )


def scan_messages(items: list[Message]) -> Scan:
    """Index every defect candidate in one pass; a result belongs to the latest call of its id.

    A message's *turn anchor* is the last message before it that survives the drops and is not
    a tool message; a result is in its call's turn when its tool message's anchor is the call's
    message. The loop is the only code that visits every part, so it keeps the common case to a
    few dictionary operations per part (positions are built only when something is wrong).
    """
    scan = Scan(places=_CallPlaces(items))
    places = scan.places
    latest = scan.call_ids  # tool call id -> the message of its latest call
    provider = scan.provider_ids
    pending: dict[str, int] = {}  # tool call id -> the message of its latest call, unanswered
    duplicates = scan.duplicate_calls
    anchor = -1
    for index, message in enumerate(items):
        role = message.role
        parts = message.parts
        if role == "tool":
            for part_index, part in enumerate(parts):
                call_id = part.call_id  # type: ignore[union-attr]  # tool messages hold results
                call = pending.pop(call_id, None)
                if call != anchor or (duplicates and call_id in duplicates):
                    _note_result(scan, (index, part_index), call_id, call, anchor)
        elif role == "assistant":
            unusual = False
            for part_index, part in enumerate(parts):
                kind = type(part)
                if kind is ToolCallPart:
                    call_id = part.id  # type: ignore[union-attr]
                    if call_id in latest or call_id in provider:
                        _note_duplicate(scan, call_id, (index, part_index))
                        unanswered = pending.get(call_id)
                        if unanswered is not None:  # later results belong to this later call
                            before = part_index if unanswered == index else None
                            scan.missing.append(places.tool_call(unanswered, call_id, before))
                    latest[call_id] = pending[call_id] = index
                    if part.raw_arguments is not None:  # type: ignore[union-attr]
                        scan.invalid.append((index, part_index))
                elif kind not in _CONTENT_PARTS:
                    unusual = True
                    _note_assistant_part(scan, (index, part_index), part)
            if not unusual:
                if parts:
                    anchor = index
                else:
                    scan.partless.append(index)
            elif not all(type(part) is HookPart for part in parts):
                anchor = index
        elif role == "internal":
            scan.internal.append(index)
        elif parts:
            anchor = index
        else:
            scan.partless.append(index)
    scan.missing.extend(places.tool_call(index, call_id) for call_id, index in pending.items())
    scan.missing.sort()
    if scan.missing and scan.missing[-1][0] == anchor and is_frontier(items[anchor]):
        scan.frontier = anchor
    return scan


def is_frontier(message: Message) -> bool:
    """Whether the calls of ``message``, the history's last turn anchor, may be pending.

    An assistant message's unanswered calls are the live frontier, unless the message is a
    stream that was cut (marked ``threadline.incomplete``): its calls never completed.
    """
    return message.role == "assistant" and message.metadata.get(_INCOMPLETE_KEY) is not True


def frontier_index(items: Sequence[Message]) -> int:
    """The scan's ``frontier``, found from the end: past tool, internal and hook-only messages."""
    for index in range(len(items) - 1, -1, -1):
        message = items[index]
        role = message.role
        if role == "tool" or role == "internal" or not message.parts:
            continue
        if role == "assistant" and all(type(part) is HookPart for part in message.parts):
            continue
        return index if is_frontier(message) else -1
    return -1


_CONTENT_PARTS: Final = frozenset({TextPart, ReasoningPart, FilePart})


def _note_result(
    scan: Scan, position: Position, call_id: str, call: int | None, anchor: int
) -> None:
    """A result that is not plainly its call's answer in its call's turn (or has a reused id)."""
    if call is not None:
        at = scan.places.tool_call(call, call_id)
        if call != anchor:
            scan.misplaced[at] = position
        if call_id in scan.duplicate_calls:
            scan.answers[at] = position
    elif call_id in scan.call_ids:
        first = scan.places.tool_call(scan.call_ids[call_id], call_id)
        scan.duplicate_results.append((position, first))
        scan.misplaced.pop(first, None)  # not its only result: a duplicate instead
    else:
        scan.orphans.append(position)


def _note_assistant_part(scan: Scan, position: Position, part: Part) -> None:
    """Hook and provider tool parts, which most assistant messages do not have."""
    index = position[0]
    if isinstance(part, HookPart):
        scan.hooks.append(position)
    elif isinstance(part, ProviderToolCallPart):
        if part.id in scan.call_ids or part.id in scan.provider_ids:
            _note_duplicate(scan, part.id, position)
            scan.provider_answered.discard(part.id)
        scan.provider_ids[part.id] = index
    elif isinstance(part, ProviderToolResultPart):
        # parts are visited in order: a provider call of this id in this message came first
        if scan.provider_ids.get(part.call_id) != index:
            scan.orphans.append(position)
        elif part.call_id in scan.provider_answered:
            first = (index, scan.places.provider_call(index, part.call_id))
            scan.duplicate_results.append((position, first))
        else:
            scan.provider_answered.add(part.call_id)
    elif isinstance(part, (TextPart, ReasoningPart, FilePart, ToolCallPart, ToolResultPart)):
        raise AssertionError(f"scan_messages reads a {part.type} part itself")
    else:
        assert_never(part)


def _note_duplicate(scan: Scan, call_id: str, position: Position) -> None:
    seen = scan.duplicate_calls.get(call_id)
    if seen is not None:
        seen.append(position)
        return
    # The first repeat: exactly one call (tool or provider) had this id before.
    index = scan.call_ids.get(call_id, scan.provider_ids.get(call_id))
    assert index is not None
    scan.duplicate_calls[call_id] = [(index, scan.places.first_call(index, call_id)), position]


class _CallPlaces:
    """Where each call id sits in a message, indexed the first time a message is asked about.

    Finding a call by scanning its message would cost a message of N calls N steps per lookup,
    N squared in all; the index costs one pass over the message, then a lookup each.
    """

    __slots__ = ("_indexed", "items")

    def __init__(self, items: list[Message]) -> None:
        self.items = items
        # message index -> (tool call id -> its part indexes, provider call id -> its part indexes)
        self._indexed: dict[int, tuple[dict[str, list[int]], dict[str, list[int]]]] = {}

    def _calls(self, index: int) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
        found = self._indexed.get(index)
        if found is None:
            tool: dict[str, list[int]] = {}
            provider: dict[str, list[int]] = {}
            for j, part in enumerate(self.items[index].parts):
                kind = type(part)
                if kind is ToolCallPart:
                    tool.setdefault(part.id, []).append(j)  # type: ignore[union-attr]
                elif kind is ProviderToolCallPart:
                    provider.setdefault(part.id, []).append(j)  # type: ignore[union-attr]
            found = self._indexed[index] = (tool, provider)
        return found

    def tool_call(self, index: int, call_id: str, before: int | None = None) -> Position:
        """The position of the last tool call ``call_id`` in message ``index`` (before a part)."""
        places = self._calls(index)[0].get(call_id, [])
        count = len(places) if before is None else bisect.bisect_left(places, before)
        if not count:
            raise AssertionError(f"no tool call {call_id!r} in messages[{index}]")
        return (index, places[count - 1])

    def provider_call(self, index: int, call_id: str) -> int:
        """The part index of the first provider tool call ``call_id`` in message ``index``."""
        return self._calls(index)[1][call_id][0]

    def first_call(self, index: int, call_id: str) -> int:
        """The part index of the first call ``call_id`` (tool or provider) in message ``index``."""
        tool, provider = self._calls(index)
        return min(places[0] for places in (tool.get(call_id), provider.get(call_id)) if places)


# ---------------------------------------------------------------------------------------------
# The working state: edits addressed by input position.


class State:
    """Private edits over the input; `assemble` builds the output once."""

    __slots__ = ("_after", "added", "created", "dropped", "edited", "source")

    def __init__(self, source: list[Message]) -> None:
        self.source = source
        self.dropped: set[int] = set()
        """Input messages dropped so far; add to it with `drop` only."""
        # (message index, tool messages too) -> the first later message that survives (and is
        # not a tool message unless asked for), found once per message: the messages between
        # a call and its turn's next one can be many dropped ones, asked about once per call.
        self._after: dict[tuple[int, bool], int | None] = {}
        self.edited: dict[int, list[Part | None]] = {}
        # tool message index -> (its call message, [(call's part index, result)])
        self.added: dict[int, tuple[int, list[tuple[int, ToolResultPart]]]] = {}
        # call message index -> [(call's part index, result)] for a tool message created after it
        self.created: dict[int, list[tuple[int, ToolResultPart]]] = {}

    def drop(self, index: int) -> None:
        self.dropped.add(index)
        self._after.clear()

    def part(self, position: Position) -> Part:
        index, part_index = position
        parts = self.edited.get(index)
        part = self.source[index].parts[part_index] if parts is None else parts[part_index]
        assert part is not None, "a pass read a part an earlier pass dropped"
        return part

    def parts_of(self, index: int) -> list[Part | None]:
        parts = self.edited.get(index)
        if parts is None:
            parts = self.edited[index] = list(self.source[index].parts)
        return parts

    def replace_part(self, position: Position, part: Part | None) -> None:
        self.parts_of(position[0])[position[1]] = part

    def is_empty(self, index: int) -> bool:
        parts = self.edited.get(index, self.source[index].parts)
        return index not in self.added and all(part is None for part in parts)

    def add_result(self, call: Position, result: ToolResultPart) -> str:
        """Put ``result`` into the tool message right after ``call``'s message; return its id."""
        index, part_index = call
        target = self._tool_message_after(index)
        if target is None:
            self.created.setdefault(index, []).append((part_index, result))
            return _created_id(self.source[index])
        self.added.setdefault(target, (index, []))[1].append((part_index, result))
        return self.source[target].id

    def first_non_tool_after(self, index: int) -> int:
        """The first message after ``index`` that survives so far and is not a tool message."""
        later = self._surviving_after(index, tools=False)
        if later is None:
            raise AssertionError(f"nothing but tool messages after messages[{index}]")
        return later

    def _tool_message_after(self, index: int) -> int | None:
        later = self._surviving_after(index, tools=True)
        return later if later is not None and self.source[later].role == "tool" else None

    def _surviving_after(self, index: int, *, tools: bool) -> int | None:
        key = (index, tools)
        if key in self._after:
            return self._after[key]
        found = None
        for later in range(index + 1, len(self.source)):
            if later not in self.dropped and (tools or self.source[later].role != "tool"):
                found = later
                break
        self._after[key] = found
        return found

    def assemble(self) -> list[Message]:
        source = self.source
        touched = sorted(
            self.dropped | self.edited.keys() | self.added.keys() | self.created.keys()
        )
        out: list[Message] = []
        start = 0
        for index in touched:
            out.extend(source[start:index])
            start = index + 1
            if index not in self.dropped:
                out.append(self._rebuilt(index))
            additions = self.created.get(index)
            if additions is not None:
                additions.sort(key=itemgetter(0))
                parts = tuple(result for _, result in additions)
                out.append(Message(id=_created_id(source[index]), role="tool", parts=parts))
        out.extend(source[start:])
        return out

    def _rebuilt(self, index: int) -> Message:
        message = self.source[index]
        edited = self.edited.get(index)
        added = self.added.get(index)
        if edited is None and added is None:
            return message
        parts: list[Part] = [
            part for part in (message.parts if edited is None else edited) if part is not None
        ]
        if added is not None:
            call_index, additions = added
            parts = self._merged(parts, call_index, additions)
        return message.model_copy(update={"parts": tuple(parts)})

    def _merged(
        self, parts: list[Part], call_index: int, additions: list[tuple[int, ToolResultPart]]
    ) -> list[Part]:
        """Insert each added result before the first existing result whose call comes later.

        One merge, not an insert each: the additions go in call order, so the first existing
        result after the previous addition's place is where the search for the next resumes.
        """
        calls = self.edited.get(call_index, self.source[call_index].parts)
        order = {part.id: j for j, part in enumerate(calls) if type(part) is ToolCallPart}
        merged: list[Part] = []
        at = 0
        for key, result in sorted(additions, key=itemgetter(0)):
            while at < len(parts) and order.get(parts[at].call_id, -1) <= key:  # type: ignore[union-attr]
                merged.append(parts[at])
                at += 1
            merged.append(result)
        merged.extend(parts[at:])
        return merged


def _created_id(call_message: Message) -> str:
    return f"{call_message.id}:results"


# ---------------------------------------------------------------------------------------------
# The passes, in table order.


class Run:
    """One run of the passes: the scan, the working state, and where the passes report.

    The passes call `report` once for every issue; what a report becomes is the
    contract's business (its subclass of this class).
    """

    __slots__ = ("missing_text", "rename", "renamed", "scan", "state", "suggest_rename")

    def __init__(
        self,
        items: list[Message],
        scan: Scan,
        *,
        rename: bool,
        suggest_rename: bool,
        missing_text: str,
    ) -> None:
        self.scan = scan
        self.state = State(items)
        self.rename = rename
        """Rename unambiguous duplicate call ids."""
        self.suggest_rename = suggest_rename
        """Say in a duplicate id's problem that renaming was available."""
        self.missing_text = missing_text
        """The content of the error result that answers a call without one."""
        self.renamed: set[str] = set()

    def unresolved_duplicate(self, call_id: str) -> bool:
        """True for an id several calls share and that was not renamed.

        Which of those calls a result answers is unknown, so such a call is reported as a
        duplicate only, never also as misplaced or missing.
        """
        return call_id in self.scan.duplicate_calls and call_id not in self.renamed

    def report(
        self,
        code: IssueCode,
        position: Position | int,
        problem: str,
        *,
        action: str | None,
        call_id: str | None = None,
    ) -> None:
        """Record an issue; ``action`` is what repair did, ``None`` when it cannot repair it."""
        raise NotImplementedError

    def pending(self, call: Position, part: ToolCallPart) -> bool:
        """Record a pending call (one of the frontier's, without a result); True to answer it."""
        raise NotImplementedError


def _drop_internal_messages(run: Run) -> None:
    for index in run.scan.internal:
        run.state.drop(index)
        run.report(
            "internal-message",
            index,
            "an internal message (UI or resume state), which never reaches a model",
            action="dropped the message",
        )


def _drop_internal_parts(run: Run) -> None:
    for position in run.scan.hooks:
        run.state.replace_part(position, None)
        run.report(
            "internal-part",
            position,
            "a hook part (UI or resume state), which never reaches a model",
            action="dropped the part",
        )


def _drop_empty_messages(run: Run, candidates: Iterable[int], why: str) -> None:
    state = run.state
    for index in sorted(candidates):
        if index not in state.dropped and state.is_empty(index):
            state.drop(index)
            run.report("empty-message", index, why, action="dropped the message")


def _drop_messages_emptied_by_drops(run: Run) -> None:
    state = run.state
    for index in run.scan.partless:
        state.drop(index)
        run.report("empty-message", index, "a message with no parts", action="dropped the message")
    _drop_empty_messages(run, list(state.edited), "no parts left once its hook parts are dropped")


def _find_orphan_results(run: Run) -> None:
    for position in run.scan.orphans:
        part = run.state.part(position)
        assert isinstance(part, (ToolResultPart, ProviderToolResultPart))
        if isinstance(part, ToolResultPart):
            problem = (
                f"a result for call {part.call_id!r}, but no tool call with that id comes "
                "earlier in the history (drop the result, or restore its call before it)"
            )
        else:
            problem = (
                f"a provider tool result for {part.call_id!r}, but no provider tool call with "
                "that id comes earlier in the same assistant message"
            )
        run.report("orphan-tool-result", position, problem, action=None, call_id=part.call_id)


def _resolve_duplicate_calls(run: Run) -> None:
    scan = run.scan
    used: set[str] = set()
    numbers: dict[str, int] = {}  # call id -> the number of its latest new id
    found: list[tuple[Position, str, str, str | None]] = []  # (where, call id, problem, action)
    ambiguous = _ambiguous_calls(run) if run.rename else None
    for call_id, calls in scan.duplicate_calls.items():
        problem = f"tool call id {call_id!r} is also used by the call at {_path(calls[0])}"
        renamable = ambiguous is not None and _unambiguous(run, call_id, calls, ambiguous)
        if run.rename and not renamable:
            problem += (
                "; not renamed: the calls share an assistant message, or their results do not "
                "each follow their own call's message, so the pairing is ambiguous"
            )
        elif not run.rename and run.suggest_rename:
            problem += (
                " (rename_duplicate_ids=True renames it when each call with this id is "
                "answered in its own turn)"
            )
        for occurrence, call in enumerate(calls[1:], start=2):
            if not renamable:
                found.append((call, call_id, problem, None))
                continue
            if not used:
                used = _ids_in_use(run)
            new_id = _fresh_id(call_id, occurrence, used, numbers)
            found.extend(_rename(run, call, call_id, new_id, problem))
            run.renamed.add(call_id)
    for where, call_id, problem, action in sorted(found, key=itemgetter(0)):
        run.report("duplicate-tool-call", where, problem, action=action, call_id=call_id)


@dataclass(frozen=True, slots=True)
class _Ambiguous:
    """What makes a duplicate call id ambiguous, gathered once for every duplicated id."""

    answered_twice: frozenset[Position]
    """Calls that a duplicate result is attributed to."""
    orphan_ids: frozenset[str]
    """The call ids of orphan results."""


def _ambiguous_calls(run: Run) -> _Ambiguous:
    scan = run.scan
    return _Ambiguous(
        frozenset(call for _, call in scan.duplicate_results),
        frozenset(_call_id(run.state.part(orphan)) for orphan in scan.orphans),
    )


def _unambiguous(run: Run, call_id: str, calls: list[Position], ambiguous: _Ambiguous) -> bool:
    """Each call with this id is a tool call in its own message, answered (if at all) there."""
    scan = run.scan
    if len({index for index, _ in calls}) < len(calls):
        return False
    if any(type(run.state.part(call)) is not ToolCallPart for call in calls):
        return False
    if any(call in ambiguous.answered_twice for call in calls):
        return False
    if any(call in scan.misplaced for call in calls):
        return False
    return call_id not in ambiguous.orphan_ids


def _ids_in_use(run: Run) -> set[str]:
    orphans = {_call_id(run.state.part(position)) for position in run.scan.orphans}
    return {*run.scan.call_ids, *run.scan.provider_ids, *orphans}


def _fresh_id(call_id: str, occurrence: int, used: set[str], numbers: dict[str, int]) -> str:
    """``f"{call_id}~{n}"`` for the least ``n >= occurrence`` not in ``used``.

    Every number from ``occurrence - 1`` up to the one the previous occurrence took was in use
    then (and still is), so the search resumes after it: ids already in use are skipped once
    per call id, not once per occurrence.
    """
    number = max(occurrence, numbers.get(call_id, 0) + 1)
    while (candidate := f"{call_id}~{number}") in used:
        number += 1
    used.add(candidate)
    numbers[call_id] = number
    return candidate


def _rename(
    run: Run, call: Position, call_id: str, new_id: str, problem: str
) -> list[tuple[Position, str, str, str | None]]:
    """Rename a call and its result (if any); one report entry for each part changed."""
    state = run.state
    part = state.part(call)
    assert type(part) is ToolCallPart
    marked = _marked(part.metadata, "duplicate-tool-call")
    state.replace_part(call, dataclasses.replace(part, id=new_id, metadata=marked))
    answer = run.scan.answers.get(call)
    if answer is None:
        return [(call, call_id, problem, f"renamed to {new_id!r} (the call has no result)")]
    result = state.part(answer)
    assert type(result) is ToolResultPart
    marked = _marked(result.metadata, "duplicate-tool-call")
    state.replace_part(answer, dataclasses.replace(result, call_id=new_id, metadata=marked))
    return [
        (call, call_id, problem, f"renamed to {new_id!r} with its result at {_path(answer)}"),
        (
            answer,
            call_id,
            f"the result of the call at {_path(call)}, whose id {call_id!r} is reused",
            f"renamed to {new_id!r} with its call",
        ),
    ]


def _find_duplicate_results(run: Run) -> None:
    for position, call in sorted(run.scan.duplicate_results):
        call_id = _call_id(run.state.part(position))
        run.report(
            "duplicate-tool-result",
            position,
            f"the call at {_path(call)} already has a result before this one; each call takes "
            "exactly one result (drop the extra one)",
            action=None,
            call_id=call_id,
        )


def _rewrite_invalid_arguments(run: Run) -> None:
    state = run.state
    for position in run.scan.invalid:
        part = state.part(position)
        assert type(part) is ToolCallPart
        raw = part.raw_arguments
        marked = _marked(part.metadata, "invalid-tool-args", {_RAW_ARGUMENTS_KEY: raw})
        state.replace_part(
            position,
            dataclasses.replace(part, arguments=EMPTY, raw_arguments=None, metadata=marked),
        )
        run.report(
            "invalid-tool-args",
            position,
            f"tool call {part.id!r} ({part.name}) has arguments that are not a JSON object: "
            f"{_preview(raw or '')}",
            action=f"arguments set to {{}} and the text kept in metadata[{_RAW_ARGUMENTS_KEY!r}]",
            call_id=_input_call_id(run, position),
        )


def _move_misplaced_results(run: Run) -> None:
    state = run.state
    for call, position in sorted(run.scan.misplaced.items(), key=itemgetter(1)):
        result = state.part(position)
        assert type(result) is ToolResultPart
        if run.unresolved_duplicate(result.call_id):
            continue
        state.replace_part(position, None)
        between = state.first_non_tool_after(call[0])
        moved = dataclasses.replace(
            result, metadata=_marked(result.metadata, "misplaced-tool-result")
        )
        target = state.add_result(call, moved)
        run.report(
            "misplaced-tool-result",
            position,
            f"the only result for the call at {_path(call)} comes after messages[{between}] "
            f"(role {state.source[between].role!r}), which follows the call",
            action=f"moved into message {target!r} right after the call",
            call_id=_input_call_id(run, position),
        )


def _drop_messages_emptied_by_moves(run: Run) -> None:
    sources = {index for index, _ in run.scan.misplaced.values()}
    _drop_empty_messages(run, sources, "no parts left once its misplaced results move")


def _answer_missing_calls(run: Run) -> None:
    state = run.state
    frontier = run.scan.frontier
    for call in run.scan.missing:
        part = state.part(call)
        assert type(part) is ToolCallPart
        answer = run.pending(call, part) if call[0] == frontier else True
        if not answer or run.unresolved_duplicate(_input_call_id(run, call)):
            continue
        result = ToolResultPart(
            call_id=part.id,
            content=run.missing_text,
            name=part.name,
            is_error=True,
            metadata=_MISSING_MARK,
        )
        target = state.add_result(call, result)
        run.report(
            "missing-tool-result",
            call,
            f"tool call {part.id!r} ({part.name}) has no result after it",
            action=f"answered with an error result (is_error=True) in message {target!r}",
            call_id=_input_call_id(run, call),
        )


PASSES: Final[tuple[Callable[[Run], None], ...]] = (
    _drop_internal_messages,
    _drop_internal_parts,
    _drop_messages_emptied_by_drops,
    _find_orphan_results,
    _resolve_duplicate_calls,
    _find_duplicate_results,
    _rewrite_invalid_arguments,
    _move_misplaced_results,
    _drop_messages_emptied_by_moves,
    _answer_missing_calls,
)


def run_passes(run: Run) -> None:
    """Run every pass, in table order, over the input of ``run``."""
    for run_pass in PASSES:
        run_pass(run)


# ---------------------------------------------------------------------------------------------
# Small helpers


_MISSING_MARK: Final = FrozenJsonMap({_REPAIR_KEY: "missing-tool-result"})


def _marked(
    metadata: Mapping[str, Any], code: IssueCode, extra: Mapping[str, Any] | None = None
) -> FrozenJsonMap:
    return FrozenJsonMap({**metadata, **(extra or {}), _REPAIR_KEY: code})


def _call_id(part: Part) -> str:
    if isinstance(part, (ToolCallPart, ProviderToolCallPart)):
        return part.id
    assert isinstance(part, (ToolResultPart, ProviderToolResultPart))
    return part.call_id


def _input_call_id(run: Run, position: Position) -> str:
    index, part_index = position
    return _call_id(run.state.source[index].parts[part_index])


def _path(position: Position) -> str:
    return f"messages[{position[0]}].parts[{position[1]}]"


def _preview(text: str, limit: int = 60) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} chars)"
