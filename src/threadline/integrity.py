"""Integrity: make a history satisfy the pairing and ordering rules every provider enforces.

Providers reject a request whose tool calls are not each answered exactly once, in the turn
right after the call; agent histories break those rules after a crash (a dangling call), after
trimming (a result split from its call), when a model emits malformed arguments or reuses an
id. [`check_messages`][] lists what is wrong, [`repair_messages`][] fixes what can be fixed
without guessing and raises [`IntegrityError`][] for the rest, and
[`prepare_messages`][] is the one-liner to call before every model request.
[`sanitize_untrusted`][] is the separate, stricter filter for history that came back from a
client (a browser), to run before [`prepare_messages`][].

The pipeline
------------
First one scan over the input finds the candidates of every check; on a clean history nothing
else runs, and the input comes back as a new list with nothing rebuilt. Otherwise small passes
run in the order of the issue table, each on the working state the pass before left:

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

The caller's messages and parts are never mutated; changed ones are copies. Repair takes time
linear in the input whatever its shape (one message of N calls, N results to move or merge, N
internal messages after a call, N renames).

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
done. [`check_messages`][] lists exactly what [`repair_messages`][] (without renaming)
would report, fatal issues included, and never raises over the history's content.

Input
-----
Every function takes a sequence of [`Message`][] (a list, a tuple, a
[`Snapshot`][]); mappings of message fields (parsed JSON) are validated into
messages, so a server can pass a request body's list straight to [`sanitize_untrusted`][]
(a mapping without an ``id`` gets a generated one, so only messages with ids give byte-identical
output). Anything else (a ``str``, a ``dict``, a single message, an iterator) raises
[`ValidationError`][].
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from typing import Literal
from typing import TypeAlias
from typing import get_args

import threadline._repair as _repair
from threadline._checked import checked
from threadline._sanitize import Untrusted
from threadline._sanitize import sanitized
from threadline._sequences import read_messages
from threadline.errors import IntegrityError
from threadline.limits import Limits
from threadline.messages import Message
from threadline.messages import ToolCallPart

# This module is the contract: the codes, the reports, the public functions and what each mode
# does with each code (_Run.report). The scan and the passes live in _repair, which knows nothing
# of modes and imports this module only for type checking; sanitize_untrusted's helpers live in
# _sanitize.

__all__ = [
    "ISSUE_CODES",
    "MISSING_RESULT_TEXT",
    "IntegrityIssue",
    "IntegrityReport",
    "IssueCode",
    "Pending",
    "Repaired",
    "check_messages",
    "pending_calls",
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
    "pending-tool-call",
]
"""A stable issue code; the values are listed in [`ISSUE_CODES`][]."""

ISSUE_CODES: Final[tuple[IssueCode, ...]] = get_args(IssueCode)
"""Every issue code, in the order the checks run."""

MISSING_RESULT_TEXT: Final = (
    "The tool call was interrupted before it returned a result; no result is available."
)
"""The content of the error result that repair inserts for a call without a result."""

Mode: TypeAlias = Literal["auto", "strict"]
_MODES: Final = ("auto", "strict")

Pending: TypeAlias = Literal["answer", "keep", "refuse"]
"""What to do with pending tool calls (see [`pending_calls`][]): ``"answer"`` them with an
interrupted error result (the call crashed), ``"keep"`` them unanswered (the call is in flight),
or ``"refuse"`` the history (raise [`IntegrityError`][] with code ``pending-tool-call``)."""
_PENDING: Final = ("answer", "keep", "refuse")
_UNTRUSTED: Final = Limits.untrusted()

# What repair does in each mode (the table in DESIGN.md): the drops happen in both modes; the
# fatal codes raise in both (a renamed duplicate call is the one exception: repair reports it
# with an action); the rest are repaired in auto only.
_DROP_CODES: Final = frozenset({"internal-message", "internal-part", "empty-message"})
_FATAL_CODES: Final = frozenset(
    {"orphan-tool-result", "duplicate-tool-call", "duplicate-tool-result"}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class IntegrityIssue:
    """One problem found in a history (and, in a repair report, what repair did about it)."""

    code: IssueCode
    """What is wrong, as a stable string (see [`ISSUE_CODES`][])."""
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
    """What [`check_messages`][] found, or every change [`repair_messages`][] made."""

    issues: tuple[IntegrityIssue, ...] = ()
    """The issues, in the order the checks run, by input position within one check."""
    pending: tuple[IntegrityIssue, ...] = ()
    """The pending tool calls found (code ``pending-tool-call``, in call order), whatever was
    done with them: each detail says what ``pending_choice`` did. Pending calls answered or
    refused are also in ``issues`` (as ``missing-tool-result`` or ``pending-tool-call``); kept
    ones are not, since a kept call is not a defect."""
    pending_choice: Pending = "answer"
    """The ``pending=`` choice the report was made under."""

    @property
    def ok(self) -> bool:
        """True when there is no issue at all (for a repair: nothing was changed).

        Pending calls kept under ``pending="keep"`` are not issues: see ``pending``.
        """
        return not self.issues

    @property
    def codes(self) -> tuple[IssueCode, ...]:
        """The code of each issue, in order (handy in assertions)."""
        return tuple(issue.code for issue in self.issues)

    def __str__(self) -> str:
        if not self.issues:
            text = "no integrity issues"
        else:
            lines = "\n".join(f"  {issue}" for issue in self.issues)
            text = f"{_count(len(self.issues), 'integrity issue')}:\n{lines}"
        if self.pending:
            lines = "\n".join(f"  {issue}" for issue in self.pending)
            count = _count(len(self.pending), "pending tool call")
            text += f"\n{count} (pending={self.pending_choice!r}):\n{lines}"
        return text


@dataclass(frozen=True, slots=True)
class Repaired:
    """The result of [`repair_messages`][]."""

    messages: list[Message]
    """The repaired history, a new list (the input is never changed)."""
    report: IntegrityReport
    """Every change made, with input indexes; ``report.ok`` when nothing changed."""


# ---------------------------------------------------------------------------------------------
# Public functions


def pending_calls(messages: Sequence[Message]) -> list[ToolCallPart]:
    """The tool calls of the live frontier: the newest assistant message's unanswered calls.

    Defined by position only: the calls of the newest assistant message that have no result,
    when every message after it is a tool message (a half-answered round keeps its unanswered
    calls pending). Internal messages and messages that repair drops as empty (a hook-only
    assistant message) do not count as "after". A message marked
    ``metadata["threadline.incomplete"]`` (a stream that was cut) has none: its calls never
    completed, and repair answers them like any dangling call.

    Whether a pending call is work in flight or a crash is the caller's knowledge: pass
    ``pending="keep"`` (in flight), ``"answer"`` (crashed: answered as interrupted) or
    ``"refuse"`` to [`check_messages`][], [`repair_messages`][] and [`prepare_messages`][].
    Reads only the tail of the history.

    Args:
        messages: the history: [`Message`][] objects, or mappings that
            ``Message.model_validate`` accepts (validated here).

    Returns:
        The pending calls, in call order (a new list; empty when nothing is pending).

    Raises:
        threadline.ValidationError: ``messages`` is not a sequence of messages.
    """
    items = read_messages(messages, "pending_calls", sequence=True)
    index = _repair.frontier_index(items)
    if index < 0:
        return []
    answered = {
        part.call_id  # type: ignore[union-attr]  # tool messages hold results
        for message in items[index + 1 :]
        if message.role == "tool"
        for part in message.parts
    }
    return [
        part
        for part in items[index].parts
        if type(part) is ToolCallPart and part.id not in answered
    ]


def check_messages(messages: Sequence[Message], *, pending: Pending = "answer") -> IntegrityReport:
    """List every integrity issue in ``messages`` without changing or raising over them.

    The report holds exactly the issues [`repair_messages`][] would report with the same
    ``pending``, fatal ones included, so an import pipeline or a unit test can see everything at
    once; ``report.pending`` lists the pending calls ([`pending_calls`][]) whatever ``pending``
    is.

    Args:
        messages: the history: [`Message`][] objects, or mappings that
            ``Message.model_validate`` accepts (validated here).
        pending: what repair would do with pending calls: ``"answer"`` reports each as
            ``missing-tool-result``, ``"refuse"`` as ``pending-tool-call``, ``"keep"`` reports
            nothing (they are in flight).

    Raises:
        threadline.ValidationError: ``messages`` is not a sequence of messages.
        ValueError: ``pending`` is not ``"answer"``, ``"keep"`` or ``"refuse"``.
    """
    _check_pending(pending)
    items = read_messages(messages, "check_messages", sequence=True)
    scan = _repair.scan_messages(items)
    if scan.clean:
        return IntegrityReport(pending_choice=pending)
    run = _Run(items, scan, None, rename=False, pending=pending)
    _repair.run_passes(run)
    return IntegrityReport(tuple(run.issues), tuple(run.pending_found), pending)


def repair_messages(
    messages: Sequence[Message],
    *,
    mode: Mode = "auto",
    rename_duplicate_ids: bool = False,
    pending: Pending = "answer",
) -> Repaired:
    """Return a model-ready copy of ``messages`` and a report of every change.

    In both modes internal messages, hook parts and messages left empty are dropped. ``auto``
    also repairs invalid arguments, misplaced results and missing results (see the module
    docstring); ``strict`` raises instead. Orphan results and duplicate ids raise in both modes,
    except that ``rename_duplicate_ids=True`` in ``auto`` renames a repeated call id (and its
    result) to ``f"{id}~{n}"`` (``n`` counting occurrences from 2, skipping ids already in use)
    when every call with that id sits in its own assistant message and each result follows its
    own call's message.

    Pending calls ([`pending_calls`][]) are answered, kept or refused as ``pending`` says, and
    listed in ``report.pending`` in every case. The laws hold for each value: the output is
    unchanged by a second repair with the same ``pending``, and ``auto``'s output passes
    ``strict`` with the same ``pending``.

    Args:
        messages: the history: [`Message`][] objects, or mappings that
            ``Message.model_validate`` accepts (validated here).
        mode: ``"auto"`` to repair, ``"strict"`` to refuse any change but dropping internal
            content.
        rename_duplicate_ids: in ``auto``, rename unambiguous duplicate call ids instead of
            raising.
        pending: ``"answer"`` (the default: a crashed call, answered with an interrupted error
            result in ``auto``, refused as ``missing-tool-result`` in ``strict``), ``"keep"``
            (calls in flight, left unanswered in both modes) or ``"refuse"`` (raise with code
            ``pending-tool-call``).

    Raises:
        threadline.IntegrityError: an issue this mode does not repair; ``issues`` lists every
            such issue (the changes repair would have made are not listed).
        threadline.ValidationError: ``messages`` is not a sequence of messages.
        ValueError: ``mode`` or ``pending`` is not one of its values.
    """
    _check_mode(mode)
    _check_pending(pending)
    items = read_messages(messages, "repair_messages", sequence=True)
    return _repaired(items, mode, rename=rename_duplicate_ids and mode == "auto", pending=pending)


def prepare_messages(
    messages: Sequence[Message], mode: Mode = "auto", *, pending: Pending = "answer"
) -> list[Message]:
    """Return ``messages`` ready for a model call (``repair_messages(...).messages``).

    Idempotent, deterministic, and its ``auto`` output passes ``strict`` unchanged (with the
    same ``pending``). A clean history comes back as a new list of the same message objects.
    The default ``pending="answer"`` is right for a model request, which every provider
    refuses while a call has no result; a reader of a live history (a UI, a watcher) that
    must not mistake a call in flight for a crash passes ``pending="keep"``.

    With ``pending="answer"``, ``encode`` does not run its integrity pass again on the list
    returned, as long as that list still holds exactly the messages it was returned with (so
    ``encode(prepare_messages(m), provider=...)`` checks once); a list changed in any way is
    checked in full.

    Args:
        messages: the history: [`Message`][] objects or mappings.
        mode: ``"auto"`` or ``"strict"``.
        pending: what to do with pending calls ([`pending_calls`][]): ``"answer"``,
            ``"keep"`` or ``"refuse"`` (see [`repair_messages`][]).

    Raises:
        threadline.IntegrityError: an issue this mode does not repair.
        threadline.ValidationError: ``messages`` is not a sequence of messages.
        ValueError: ``mode`` or ``pending`` is not one of its values.
    """
    _check_mode(mode)
    _check_pending(pending)
    items = read_messages(messages, "prepare_messages", sequence=True)
    prepared = _repaired(items, mode, rename=False, pending=pending).messages
    # Marked as checked, so that ``encode`` does not run the pass again while it is unchanged.
    return checked(prepared) if pending == "answer" else prepared


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
    empty. Then add the server's own system prompt and call [`prepare_messages`][].

    Host names are not resolved: a public name can still resolve to a private address, so the
    code that fetches a URL needs its own guard on the address it connects to.

    Args:
        messages: the client's history: [`Message`][] objects or mappings
            (for example the parsed JSON of a request body).
        limits: how much to accept, checked before anything is validated; ``None`` means
            [`Limits.untrusted()`][threadline.limits.Limits.untrusted], since this input comes
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
    policy = Untrusted.policy(keep_metadata=keep_metadata, allow_private_urls=allow_private_urls)
    checked = _UNTRUSTED if limits is None else limits
    items = read_messages(messages, "sanitize_untrusted", sequence=True, limits=checked)
    return sanitized(items, policy)


def _repaired(items: list[Message], mode: Mode, *, rename: bool, pending: Pending) -> Repaired:
    scan = _repair.scan_messages(items)
    if scan.clean:
        return Repaired(items, IntegrityReport(pending_choice=pending))
    run = _Run(items, scan, mode, rename=rename, pending=pending)
    _repair.run_passes(run)
    if run.refused:
        raise IntegrityError(_error_message(run.refused, mode), run.refused)
    report = IntegrityReport(tuple(run.issues), tuple(run.pending_found), pending)
    return Repaired(run.state.assemble() if run.issues else items, report)


# ---------------------------------------------------------------------------------------------
# Input


def _check_mode(mode: object) -> None:
    if mode not in _MODES:
        raise ValueError(f"mode must be 'auto' or 'strict', not {mode!r}")


def _check_pending(pending: object) -> None:
    if pending not in _PENDING:
        raise ValueError(
            f"pending must be 'answer' (a crashed call), 'keep' (a call in flight) or 'refuse', "
            f"not {pending!r}"
        )


# ---------------------------------------------------------------------------------------------
# Reports


class _Run(_repair.Run):
    """A run of the passes that reports `IntegrityIssue` objects under ``mode``.

    ``mode`` is ``None`` for `check_messages` (report only: nothing is refused).
    """

    __slots__ = ("issues", "mode", "pending_choice", "pending_found", "refused")

    def __init__(
        self,
        items: list[Message],
        scan: _repair.Scan,
        mode: Mode | None,
        *,
        rename: bool,
        pending: Pending,
    ) -> None:
        super().__init__(
            items,
            scan,
            rename=rename,
            suggest_rename=mode != "strict",
            missing_text=MISSING_RESULT_TEXT,
        )
        self.mode = mode
        self.issues: list[IntegrityIssue] = []
        self.refused: list[IntegrityIssue] = []
        self.pending_choice = pending
        self.pending_found: list[IntegrityIssue] = []

    def report(
        self,
        code: IssueCode,
        position: _repair.Position | int,
        problem: str,
        *,
        action: str | None,
        call_id: str | None = None,
    ) -> None:
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

    def pending(self, call: _repair.Position, part: ToolCallPart) -> bool:
        choice = self.pending_choice
        problem = (
            f"tool call {part.id!r} ({part.name}) is pending: the newest assistant message's "
            "call has no result yet"
        )
        done = {
            "answer": "answered as interrupted (pending='answer': the call crashed)",
            "keep": "kept unanswered (pending='keep': the call is in flight)",
            "refuse": "refused (pending='refuse')",
        }[choice]
        if choice == "answer" and self.mode is None:
            done = "pending='answer' answers it as interrupted"
        elif choice == "answer" and self.mode == "strict":
            done = "refused as missing-tool-result (pending='answer' under mode='strict')"
        self.pending_found.append(
            IntegrityIssue(
                code="pending-tool-call",
                message_index=call[0],
                part_index=call[1],
                message_id=self.state.source[call[0]].id,
                call_id=part.id,
                detail=f"{problem}; {done}",
            )
        )
        if choice == "refuse":
            self.report(
                "pending-tool-call",
                call,
                problem + " (pending='refuse'; pass pending='keep' for a call in flight or "
                "'answer' for one that crashed)",
                action=None,
                call_id=part.id,
            )
        return choice == "answer"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


_LISTED_ISSUES = 20
"""How many issues an `IntegrityError`'s message lists; ``issues`` holds them all (a hostile
history with 10,000 bad calls makes a short error, not megabytes of text)."""


def _error_message(issues: Sequence[IntegrityIssue], mode: Mode) -> str:
    lines = "\n".join(f"  {issue}" for issue in issues[:_LISTED_ISSUES])
    if len(issues) > _LISTED_ISSUES:
        lines += f"\n  ... and {len(issues) - _LISTED_ISSUES} more (the error's issues lists all)"
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
    if "pending-tool-call" in codes:
        text += (
            "\npending='refuse' refuses a history whose newest tool calls have no result: pass "
            "pending='keep' while they are in flight, or pending='answer' after a crash"
        )
    if mode == "strict" and codes - _FATAL_CODES - {"pending-tool-call"}:
        text += (
            "\nmode='strict' refuses every change but dropping internal content; mode='auto' "
            "(prepare_messages) repairs invalid-tool-args, misplaced-tool-result and "
            "missing-tool-result"
        )
    return text
