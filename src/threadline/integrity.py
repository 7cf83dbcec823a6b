"""Integrity: make a history satisfy the pairing and ordering rules every provider enforces.

Providers reject a request whose tool calls are not each answered exactly once, in the turn
right after the call; agent histories break those rules after a crash (a dangling call), after
trimming (a result split from its call), when a model emits malformed arguments or reuses an
id. :func:`check_messages` lists what is wrong, :func:`repair_messages` fixes what can be fixed
without guessing and raises :class:`~threadline.IntegrityError` for the rest, and
:func:`prepare_messages` is the one-liner to call before every model request.
:func:`sanitize_untrusted` is the separate, stricter filter for history that came back from a
client (a browser), to run before :func:`prepare_messages`.

The pipeline
------------
First one scan over the input finds the candidates of every check. It is the only code that
visits every message: the checks are fused into it because a scan per check would cost several
times more on a 100,000-message history. On a clean history nothing else runs, and the input
comes back as a new list with nothing rebuilt. Otherwise small passes run in the order of the
issue table, each on the working state the pass before left:

1. ``internal-message`` drops internal messages,
2. ``internal-part`` drops hook parts from assistant messages,
3. ``empty-message`` drops messages those drops left without parts.
   Internal content goes first because it never reaches a model: an internal message or a
   hook-only assistant message sitting between a call and its results must not make those
   results count as misplaced.
4. ``orphan-tool-result``, 5. ``duplicate-tool-call``, 6. ``duplicate-tool-result`` find
   what cannot be repaired without guessing which call a result answers, before anything is
   moved or invented on top of such a pairing. The duplicate-call pass renames a repeated id
   (and its result) when asked and the pairing is unambiguous.
7. ``invalid-tool-args`` rewrites malformed arguments in place (after renames, so it rewrites
   the final part; it moves nothing).
8. ``misplaced-tool-result`` moves a call's only result into the tool message right after the
   call, then ``empty-message`` runs again for tool messages the moves emptied. Moves come
   before inserts: a misplaced result is a real result, and answering its call with a
   synthetic one first would duplicate it.
9. ``missing-tool-result`` answers every call still without a result, last, so it sees the
   tool messages the moves filled, created or emptied.

A result belongs to the latest call with its id before it. A tool result is reported under one
code only, the first that applies (an orphan is never also a duplicate or misplaced), and a call
whose id is duplicated (and not renamed) is reported as a duplicate only, never also as
misplaced or missing: which call its results answer is unknown.

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

Where results go
----------------
A moved or synthetic result joins the tool message right after its call's message (ignoring
dropped internal content); when there is none, repair creates one with id
``f"{call_message.id}:results"``, so a partially answered turn never becomes two tool messages.
Inside that message the results already there keep their order, and each added result goes
before the first existing result whose call comes later in the assistant message, else at the
end: call order whenever the existing results were in call order.

Reports
-------
Issues are listed in pass order (the table's order, with an ``empty-message`` caused by a move
right after the moves), and by input position within a pass. Every index is an index into the
input, for repair too, and ``call_id`` is the id as the input has it. A repair report has one
issue per change (a renamed call and its renamed result are two); its details say what was
done. :func:`check_messages` lists exactly what :func:`repair_messages` (without renaming)
would report, fatal issues included, and never raises over the history's content.

Input
-----
Every function takes a sequence of :class:`~threadline.Message` (a list, a tuple, a
:class:`~threadline.Snapshot`); mappings of message fields (parsed JSON) are validated into
messages, so a server can pass a request body's list straight to :func:`sanitize_untrusted`
(a mapping without an ``id`` gets a generated one, so only messages with ids give byte-identical
output). Anything else (a ``str``, a ``dict``, a single message, an iterator) raises
:class:`~threadline.ValidationError`.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Final, Literal, TypeAlias, get_args

import pydantic

from threadline._json import EMPTY, FrozenJsonMap
from threadline._urls import is_public_web_url, is_web_url
from threadline._validation import translate_errors
from threadline.errors import ErrorDetail, IntegrityError, ValidationError
from threadline.limits import THREADLINE_LAYOUT, Limits, enforce_limits
from threadline.messages import (
    FilePart,
    HookPart,
    Message,
    Part,
    ProviderToolCallPart,
    ProviderToolResultPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

__all__ = [
    "ISSUE_CODES",
    "MISSING_RESULT_TEXT",
    "IntegrityIssue",
    "IntegrityReport",
    "IssueCode",
    "Repaired",
    "check_messages",
    "prepare_messages",
    "repair_messages",
    "sanitize_untrusted",
]

IssueCode: TypeAlias = Literal[
    "internal-message",
    "internal-part",
    "empty-message",
    "orphan-tool-result",
    "duplicate-tool-call",
    "duplicate-tool-result",
    "invalid-tool-args",
    "misplaced-tool-result",
    "missing-tool-result",
]
"""A stable issue code; the values are listed in :data:`ISSUE_CODES`."""

ISSUE_CODES: Final[tuple[IssueCode, ...]] = get_args(IssueCode)
"""Every issue code, in the order the checks run."""

MISSING_RESULT_TEXT: Final = (
    "The tool call was interrupted before it returned a result; no result is available."
)
"""The content of the error result that repair inserts for a call without a result."""

_REPAIR_KEY: Final = "threadline.repair"
_RAW_ARGUMENTS_KEY: Final = "threadline.raw_arguments"

Mode: TypeAlias = Literal["auto", "strict"]
_MODES: Final = ("auto", "strict")
_UNTRUSTED: Final = Limits.untrusted()

# What repair does in each mode: these three are dropped in both modes; the fatal ones raise in
# both (a renamed duplicate call is the one exception); the rest are repaired in auto only.
_DROP_CODES: Final = frozenset({"internal-message", "internal-part", "empty-message"})

Position: TypeAlias = tuple[int, int]
"""(message index, part index) in the input."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IntegrityIssue:
    """One problem found in a history (and, in a repair report, what repair did about it)."""

    code: IssueCode
    """What is wrong, as a stable string (see :data:`ISSUE_CODES`)."""
    message_index: int
    """The index of the message in the input sequence."""
    part_index: int | None
    """The index of the part in that input message; ``None`` when the issue is the whole
    message (``internal-message``, ``empty-message``)."""
    message_id: str
    """The ``id`` of that message."""
    call_id: str | None
    """The tool call id involved, for the tool-call codes; otherwise ``None``."""
    detail: str
    """A readable explanation; in a repair report it also says what repair did."""

    @property
    def location(self) -> str:
        """Where the issue is, as a path: ``messages[3].parts[1]`` or ``messages[3]``."""
        where = f"messages[{self.message_index}]"
        return where if self.part_index is None else f"{where}.parts[{self.part_index}]"

    def __str__(self) -> str:
        about = f"message {self.message_id!r}"
        if self.call_id is not None:
            about += f", call {self.call_id!r}"
        return f"{self.code} at {self.location} ({about}): {self.detail}"


@dataclass(frozen=True, slots=True)
class IntegrityReport:
    """What :func:`check_messages` found, or every change :func:`repair_messages` made."""

    issues: tuple[IntegrityIssue, ...] = ()
    """The issues, in the order the checks run, by input position within one check."""

    @property
    def ok(self) -> bool:
        """True when there is no issue at all (for a repair: nothing was changed)."""
        return not self.issues

    @property
    def codes(self) -> tuple[IssueCode, ...]:
        """The code of each issue, in order (handy in assertions)."""
        return tuple(issue.code for issue in self.issues)

    def __str__(self) -> str:
        if not self.issues:
            return "no integrity issues"
        lines = "\n".join(f"  {issue}" for issue in self.issues)
        return f"{_count(len(self.issues), 'integrity issue')}:\n{lines}"


@dataclass(frozen=True, slots=True)
class Repaired:
    """The result of :func:`repair_messages`."""

    messages: list[Message]
    """The repaired history, a new list (the input is never changed)."""
    report: IntegrityReport
    """Every change made, with input indexes; ``report.ok`` when nothing changed."""


# ---------------------------------------------------------------------------------------------
# Public functions


def check_messages(messages: Sequence[Message]) -> IntegrityReport:
    """List every integrity issue in ``messages`` without changing or raising over them.

    The report holds exactly the issues :func:`repair_messages` would report, fatal ones
    included, so an import pipeline or a unit test can see everything at once.

    Args:
        messages: the history: :class:`~threadline.Message` objects, or mappings that
            ``Message.model_validate`` accepts (validated here).

    Raises:
        threadline.ValidationError: ``messages`` is not a sequence of messages.
    """
    items = _as_messages(messages, "check_messages")
    scan = _scan(items)
    if scan.clean:
        return IntegrityReport()
    return IntegrityReport(tuple(_run_passes(items, scan, None, rename=False).issues))


def repair_messages(
    messages: Sequence[Message], *, mode: Mode = "auto", rename_duplicate_ids: bool = False
) -> Repaired:
    """Return a model-ready copy of ``messages`` and a report of every change.

    In both modes internal messages, hook parts and messages left empty are dropped. ``auto``
    also repairs invalid arguments, misplaced results and missing results (see the module
    docstring); ``strict`` raises instead. Orphan results and duplicate ids raise in both modes,
    except that ``rename_duplicate_ids=True`` in ``auto`` renames a repeated call id (and its
    result) to ``f"{id}~{n}"`` (``n`` counting occurrences from 2, skipping ids already in use)
    when every call with that id sits in its own assistant message and each result follows its
    own call's message.

    Args:
        messages: the history: :class:`~threadline.Message` objects, or mappings that
            ``Message.model_validate`` accepts (validated here).
        mode: ``"auto"`` to repair, ``"strict"`` to refuse any change but dropping internal
            content.
        rename_duplicate_ids: in ``auto``, rename unambiguous duplicate call ids instead of
            raising.

    Raises:
        threadline.IntegrityError: an issue this mode does not repair; ``issues`` lists every
            such issue (the changes repair would have made are not listed).
        threadline.ValidationError: ``messages`` is not a sequence of messages.
        ValueError: ``mode`` is neither ``"auto"`` nor ``"strict"``.
    """
    _check_mode(mode)
    items = _as_messages(messages, "repair_messages")
    return _repaired(items, mode, rename=rename_duplicate_ids and mode == "auto")


def prepare_messages(messages: Sequence[Message], mode: Mode = "auto") -> list[Message]:
    """Return ``messages`` ready for a model call (``repair_messages(...).messages``).

    Idempotent, deterministic, and its ``auto`` output passes ``strict`` unchanged. A clean
    history comes back as a new list of the same message objects.

    Args:
        messages: the history: :class:`~threadline.Message` objects or mappings.
        mode: ``"auto"`` or ``"strict"``.

    Raises:
        threadline.IntegrityError: an issue this mode does not repair.
        threadline.ValidationError: ``messages`` is not a sequence of messages.
        ValueError: ``mode`` is neither ``"auto"`` nor ``"strict"``.
    """
    _check_mode(mode)
    return _repaired(_as_messages(messages, "prepare_messages"), mode, rename=False).messages


def sanitize_untrusted(
    messages: Sequence[Message],
    *,
    limits: Limits | None = None,
    keep_metadata: Collection[str] = (),
    allow_private_urls: bool = False,
) -> list[Message]:
    """Strip what a client must not be able to inject from history it sent back.

    A server that lets a browser hold the transcript gets back whatever the browser sends:
    a forged system prompt, hook state, provider tool results, repair markers, provider state
    that costs money or names another conversation's items, file URLs that point into private
    storage. This drops system and internal messages; hook parts and provider tool parts;
    every metadata key but ``openai.refusal``, ``openai.custom_tool`` and ``openai.namespace``
    (on messages, parts and tool-result content: ``anthropic.cache_control``,
    ``openai.item_id``, ``gemini.thought_signature``, the response's ``model`` and ``usage``,
    ``threadline.*`` and keys nobody has decided on go); the opaque state of reasoning parts
    (``signature``, ``encrypted``, ``item_id``, ``provider``, ``model``: the readable text stays,
    so codecs never replay it as the model's reasoning), and reasoning parts with nothing
    readable; file parts whose URL is not ``http(s)`` or whose host is loopback, private,
    link-local, multicast, reserved, ``localhost`` or another local name in any notation
    (``http://0x7f.1/``, ``http://[::ffff:127.0.0.1]/``), also inside tool results; the
    ``replay`` flag; tool calls of the trailing assistant message that have no result after
    them (so the server never runs a tool the model did not ask for); and any message left
    empty. Then add the server's own system prompt and call :func:`prepare_messages`.

    Host names are not resolved: a public name can still resolve to a private address, so the
    code that fetches a URL needs its own guard on the address it connects to.

    Args:
        messages: the client's history: :class:`~threadline.Message` objects or mappings
            (for example the parsed JSON of a request body).
        limits: how much to accept, checked before anything is validated; ``None`` means
            :meth:`Limits.untrusted() <threadline.Limits.untrusted>`, since this input comes
            from a client.
        keep_metadata: more metadata keys to keep, exactly as spelt: your application's own
            keys, or provider keys you accept from this client. ``threadline.*`` keys are
            never kept.
        allow_private_urls: keep ``http(s)`` file URLs whatever their host, for a client you
            trust with your network (other schemes are still dropped).

    Raises:
        threadline.ValidationError: ``messages`` is not a sequence of valid messages.
        threadline.LimitExceededError: ``messages`` exceed ``limits``.
        TypeError: ``keep_metadata`` is not a collection of strings.
        ValueError: ``keep_metadata`` names a ``threadline.*`` key.
    """
    policy = _Untrusted(
        keys=_SAFE_METADATA_KEYS | _kept_keys(keep_metadata),
        url_allowed=is_web_url if allow_private_urls else is_public_web_url,
    )
    checked = _UNTRUSTED if limits is None else limits
    items = _as_messages(messages, "sanitize_untrusted", limits=checked)
    kept: list[Message] = []
    for message in items:
        if message.role in ("system", "internal"):
            continue
        cleaned = _sanitized(message, policy)
        if cleaned is not None:
            kept.append(cleaned)
    return _without_unanswered_tail(kept)


def _repaired(items: list[Message], mode: Mode, *, rename: bool) -> Repaired:
    scan = _scan(items)
    if scan.clean:
        return Repaired(items, IntegrityReport())
    run = _run_passes(items, scan, mode, rename=rename)
    if run.refused:
        raise IntegrityError(_error_message(run.refused, mode), run.refused)
    return Repaired(run.state.assemble(), IntegrityReport(tuple(run.issues)))


# ---------------------------------------------------------------------------------------------
# Input


def _check_mode(mode: object) -> None:
    if mode not in _MODES:
        raise ValueError(f"mode must be 'auto' or 'strict', not {mode!r}")


def _as_messages(messages: object, function: str, *, limits: Limits | None = None) -> list[Message]:
    """The input as a new list of messages; mappings are validated into messages.

    The one reader of "a sequence of messages or mappings" for every public function that
    takes one (integrity, sealing, the codecs' ``encode``). With ``limits``, the input is
    checked against them before anything is validated.
    """
    if isinstance(messages, (str, bytes, bytearray, memoryview, Mapping)) or not isinstance(
        messages, Sequence
    ):
        hint = (
            "pass history.snapshot(), or call history.messages_for_model()"
            if hasattr(messages, "snapshot")
            else "wrap a single message in a list, or use load_json for JSON text"
        )
        raise ValidationError(
            f"{function} takes a sequence of Message (a list, tuple or History snapshot), not "
            f"{type(messages).__name__}; {hint}",
            [ErrorDetail("messages", "not a sequence of messages", "type")],
        )
    if limits is not None:
        enforce_limits(
            messages, limits, what=function, layout=THREADLINE_LAYOUT, path="messages", depth=2
        )
    items = list(messages)
    if set(map(type, items)) <= {Message}:  # the common case, checked at C speed
        return items
    return [_as_message(item, index) for index, item in enumerate(items)]


def _as_message(item: object, index: int) -> Message:
    if isinstance(item, Message):
        return item
    if isinstance(item, Mapping):
        try:
            return Message.model_validate(item)
        except pydantic.ValidationError as error:
            raise translate_errors(
                error, f"invalid message at messages[{index}]", prefix=f"messages[{index}]"
            ) from None
    path = f"messages[{index}]"
    raise ValidationError(
        f"{path} is a {type(item).__name__}, not a Message; pass Message objects "
        "(user_message(...), assistant_message(...)...) or mappings of their fields",
        [ErrorDetail(path, "not a Message", "type")],
    )


# ---------------------------------------------------------------------------------------------
# The scan: one pass over the input that finds every candidate of every check.


@dataclass(slots=True)
class _Scan:
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


def _scan(items: list[Message]) -> _Scan:
    """Index every defect candidate in one pass; a result belongs to the latest call of its id.

    A message's *turn anchor* is the last message before it that survives the drops and is not
    a tool message; a result is in its call's turn when its tool message's anchor is the call's
    message. The loop is the only code that visits every part, so it keeps the common case to a
    few dictionary operations per part (positions are built only when something is wrong).
    """
    scan = _Scan(places=_CallPlaces(items))
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
    return scan


_CONTENT_PARTS: Final = frozenset({TextPart, ReasoningPart, FilePart})


def _note_result(
    scan: _Scan, position: Position, call_id: str, call: int | None, anchor: int
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


def _note_assistant_part(scan: _Scan, position: Position, part: Part) -> None:
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
        # The scan visits parts in order, so a provider call of this id recorded in this
        # message comes before the result.
        if scan.provider_ids.get(part.call_id) != index:
            scan.orphans.append(position)
        elif part.call_id in scan.provider_answered:
            first = (index, scan.places.provider_call(index, part.call_id))
            scan.duplicate_results.append((position, first))
        else:
            scan.provider_answered.add(part.call_id)


def _note_duplicate(scan: _Scan, call_id: str, position: Position) -> None:
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


class _State:
    """Private edits over the input; :meth:`assemble` builds the output once."""

    __slots__ = ("_after", "added", "created", "dropped", "edited", "source")

    def __init__(self, source: list[Message]) -> None:
        self.source = source
        self.dropped: set[int] = set()
        """Input messages dropped so far; add to it with :meth:`drop` only."""
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


class _Run:
    """One run of the passes: the scan, the working state and the issues found so far.

    ``mode`` is ``None`` for :func:`check_messages` (report only: nothing is refused).
    """

    __slots__ = ("issues", "mode", "refused", "rename", "renamed", "scan", "state")

    def __init__(self, items: list[Message], scan: _Scan, mode: Mode | None, rename: bool) -> None:
        self.scan = scan
        self.state = _State(items)
        self.mode = mode
        self.rename = rename
        self.issues: list[IntegrityIssue] = []
        self.refused: list[IntegrityIssue] = []
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
        index, part_index = position if isinstance(position, tuple) else (position, None)
        refused = self.mode is not None and (
            action is None or (self.mode == "strict" and code not in _DROP_CODES)
        )
        detail = problem if self.mode is None or refused else f"{problem}; {action}"
        issue = IntegrityIssue(
            code=code,
            message_index=index,
            part_index=part_index,
            message_id=self.state.source[index].id,
            call_id=call_id,
            detail=detail,
        )
        self.issues.append(issue)
        if refused:
            self.refused.append(issue)


def _drop_internal_messages(run: _Run) -> None:
    for index in run.scan.internal:
        run.state.drop(index)
        run.report(
            "internal-message",
            index,
            "an internal message (UI or resume state), which never reaches a model",
            action="dropped the message",
        )


def _drop_internal_parts(run: _Run) -> None:
    for position in run.scan.hooks:
        run.state.replace_part(position, None)
        run.report(
            "internal-part",
            position,
            "a hook part (UI or resume state), which never reaches a model",
            action="dropped the part",
        )


def _drop_empty_messages(run: _Run, candidates: Iterable[int], why: str) -> None:
    state = run.state
    for index in sorted(candidates):
        if index not in state.dropped and state.is_empty(index):
            state.drop(index)
            run.report("empty-message", index, why, action="dropped the message")


def _drop_messages_emptied_by_drops(run: _Run) -> None:
    state = run.state
    for index in run.scan.partless:
        state.drop(index)
        run.report("empty-message", index, "a message with no parts", action="dropped the message")
    _drop_empty_messages(run, list(state.edited), "no parts left once its hook parts are dropped")


def _find_orphan_results(run: _Run) -> None:
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


def _resolve_duplicate_calls(run: _Run) -> None:
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
        elif not run.rename and run.mode != "strict":
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


def _ambiguous_calls(run: _Run) -> _Ambiguous:
    scan = run.scan
    return _Ambiguous(
        frozenset(call for _, call in scan.duplicate_results),
        frozenset(_call_id(run.state.part(orphan)) for orphan in scan.orphans),
    )


def _unambiguous(run: _Run, call_id: str, calls: list[Position], ambiguous: _Ambiguous) -> bool:
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


def _ids_in_use(run: _Run) -> set[str]:
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
    run: _Run, call: Position, call_id: str, new_id: str, problem: str
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


def _find_duplicate_results(run: _Run) -> None:
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


def _rewrite_invalid_arguments(run: _Run) -> None:
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


def _move_misplaced_results(run: _Run) -> None:
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


def _drop_messages_emptied_by_moves(run: _Run) -> None:
    sources = {index for index, _ in run.scan.misplaced.values()}
    _drop_empty_messages(run, sources, "no parts left once its misplaced results move")


def _answer_missing_calls(run: _Run) -> None:
    state = run.state
    for call in run.scan.missing:
        if run.unresolved_duplicate(_input_call_id(run, call)):
            continue
        part = state.part(call)
        assert type(part) is ToolCallPart
        result = ToolResultPart(
            call_id=part.id,
            content=MISSING_RESULT_TEXT,
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


_PASSES: Final[tuple[Callable[[_Run], None], ...]] = (
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


def _run_passes(items: list[Message], scan: _Scan, mode: Mode | None, *, rename: bool) -> _Run:
    run = _Run(items, scan, mode, rename)
    for run_pass in _PASSES:
        run_pass(run)
    return run


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


def _input_call_id(run: _Run, position: Position) -> str:
    index, part_index = position
    return _call_id(run.state.source[index].parts[part_index])


def _path(position: Position) -> str:
    return f"messages[{position[0]}].parts[{position[1]}]"


def _preview(text: str, limit: int = 60) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} chars)"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


_FATAL_CODES: Final = frozenset(
    {"orphan-tool-result", "duplicate-tool-call", "duplicate-tool-result"}
)


def _error_message(issues: Sequence[IntegrityIssue], mode: Mode) -> str:
    lines = "\n".join(f"  {issue}" for issue in issues)
    text = (
        f"the history cannot be sent to a model (mode={mode!r}): "
        f"{_count(len(issues), 'integrity issue')}\n{lines}"
    )
    codes = {issue.code for issue in issues}
    if codes & _FATAL_CODES:
        text += (
            "\norphan and duplicate results and duplicate call ids are never repaired "
            "automatically (which call a result answers would be a guess): fix or drop the "
            "parts named above"
        )
    if mode == "strict" and codes - _FATAL_CODES:
        text += (
            "\nmode='strict' refuses every change but dropping internal content; mode='auto' "
            "(prepare_messages) repairs invalid-tool-args, misplaced-tool-result and "
            "missing-tool-result"
        )
    return text


# ---------------------------------------------------------------------------------------------
# sanitize_untrusted


_SAFE_METADATA_KEYS: Final = frozenset({"openai.custom_tool", "openai.namespace", "openai.refusal"})
"""The metadata keys a client may set: markers of a part's shape that name no provider-side
state, cost nothing, and that the provider checks against the server's own request (its tool
list). Every other key is dropped unless the caller keeps it; docs/integrity.md gives the
reason for each key a codec reads or writes."""


@dataclass(frozen=True)
class _Untrusted:
    """What :func:`sanitize_untrusted` keeps: metadata ``keys`` and the file URLs allowed."""

    keys: frozenset[str]
    url_allowed: Callable[[str], bool]


def _kept_keys(keep_metadata: Collection[str]) -> frozenset[str]:
    if isinstance(keep_metadata, (str, bytes)) or not isinstance(keep_metadata, Iterable):
        raise TypeError(
            f"keep_metadata takes a collection of metadata keys, got {keep_metadata!r}; "
            "for one key write keep_metadata={'key'}"
        )
    given = tuple(keep_metadata)
    if not all(isinstance(key, str) for key in given):
        raise TypeError(f"keep_metadata takes metadata keys (strings), got {given!r}")
    keys = frozenset(given)
    reserved = sorted(key for key in keys if key.startswith("threadline."))
    if reserved:
        raise ValueError(
            f"keep_metadata names {', '.join(map(repr, reserved))}: threadline.* keys are never "
            "kept from a client (they mark repairs, summaries, masked results and stored "
            "blobs, which only threadline may write)"
        )
    return keys


def _sanitized(message: Message, policy: _Untrusted) -> Message | None:
    """``message`` without the parts and metadata a client must not set; ``None`` if empty."""
    parts: list[Part] = []
    changed = False
    for part in message.parts:
        cleaned = _sanitized_part(part, policy)
        changed = changed or cleaned is not part
        if cleaned is not None:
            parts.append(cleaned)
    if not parts:
        return None
    metadata = _kept_metadata(message.metadata, policy.keys)
    if not changed and metadata is message.metadata and not message.replay:
        return message
    return message.model_copy(update={"parts": tuple(parts), "metadata": metadata, "replay": False})


def _sanitized_part(part: Part, policy: _Untrusted) -> Any:
    kind = type(part)
    if kind is HookPart or kind is ProviderToolCallPart or kind is ProviderToolResultPart:
        return None
    if isinstance(part, ReasoningPart):
        readable = _readable_reasoning(part)
        if readable is None:
            return None
        part = readable
    if isinstance(part, FilePart) and part.url is not None and not policy.url_allowed(part.url):
        return None
    if isinstance(part, ToolResultPart) and not isinstance(part.content, str):
        content = tuple(
            item
            for item in (_sanitized_part(item, policy) for item in part.content)
            if isinstance(item, (TextPart, FilePart))
        )
        if len(content) != len(part.content) or any(
            new is not old for new, old in zip(content, part.content, strict=True)
        ):
            part = dataclasses.replace(part, content=content or "")
    metadata = _kept_metadata(part.metadata, policy.keys)
    if metadata is not part.metadata:
        part = dataclasses.replace(part, metadata=metadata)
    return part


def _readable_reasoning(part: ReasoningPart) -> ReasoningPart | None:
    """``part`` without the opaque state only its provider may write; ``None`` when nothing
    readable is left (redacted or encrypted-only reasoning).

    A client-held signature, encrypted blob or item id would be replayed to the provider as
    the model's own state: forged, or another conversation's. Without ``provider`` the codecs
    treat what is left as foreign reasoning: dropped, or sent as plain text with
    ``reasoning="text"``.
    """
    if part.redacted or not (part.text or any(part.summary)):
        return None
    opaque = (part.signature, part.encrypted, part.item_id, part.provider, part.model)
    if all(value is None for value in opaque):
        return part
    return dataclasses.replace(
        part, signature=None, encrypted=None, item_id=None, provider=None, model=None
    )


def _kept_metadata(metadata: FrozenJsonMap, keys: frozenset[str]) -> FrozenJsonMap:
    """``metadata`` with only ``keys`` (the same object when it has no other key)."""
    if all(key in keys for key in metadata):
        return metadata
    kept = {key: value for key, value in metadata.items() if key in keys}
    return FrozenJsonMap(kept) if kept else EMPTY


def _without_unanswered_tail(messages: list[Message]) -> list[Message]:
    """Drop the trailing assistant message's calls that no later result answers."""
    last = len(messages) - 1
    while last >= 0 and messages[last].role == "tool":
        last -= 1
    if last < 0 or messages[last].role != "assistant":
        return messages
    answered = {
        part.call_id
        for later in messages[last + 1 :]
        for part in later.parts
        if type(part) is ToolResultPart
    }
    tail = messages[last]
    parts = tuple(
        part for part in tail.parts if type(part) is not ToolCallPart or part.id in answered
    )
    if len(parts) == len(tail.parts):
        return messages
    kept = [tail.model_copy(update={"parts": parts})] if parts else []
    return [*messages[:last], *kept, *messages[last + 1 :]]
