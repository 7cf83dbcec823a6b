"""A format's declared losses, derived from its own mapping (private).

``normalize_for_round_trip(messages, ...)`` says what ``decode(encode(messages, ...))`` reads
back. Every format answers it the same way, so the answer is one driver, `read_back`:

1. the history is read exactly as ``encode`` reads it (`prepare_history`, integrity off), so
   the policies, the tool names and the wire ids are the ones ``encode`` applied;
2. each message goes as ``encode`` sends it: internal messages never; system messages where
   the format puts them (its leading system field and user notes after it, or in place);
   user texts that read like notes escaped;
3. each part the policies keep is read back by the format's `ReadBacks` for its type (a
   `Placeholder` reads back as its text everywhere); the dispatch is exhaustive, so a new
   part type that no format reads back fails the type checker here, once;
4. tool results are named after their calls, the added leading turn taken off and the
   notes read back as system messages, where the format does those.

A format states only what is its own: one read-back per part type it carries (what its
``decode`` makes of what its ``encode`` wrote), and the message-level choices above in a
`RoundTrip`. A format whose messages do not map one to one (Mistral's added turns, the
Responses format's items) uses the pieces: `prepared`, `read_parts` and `finish`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any
from typing import Generic
from typing import Literal
from typing import TypeVar

from typing_extensions import assert_never

from threadline.codecs._notes import escape_notes
from threadline.codecs._notes import note
from threadline.codecs._notes import unwrap_notes
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import Placeholder
from threadline.codecs._policies import Resolved
from threadline.codecs._policies import is_blank
from threadline.codecs._prepared import PreparedHistory
from threadline.codecs._prepared import prepare_history
from threadline.codecs._tool_names import ToolNameRule
from threadline.codecs._tools import hashed_id
from threadline.codecs._tools import name_results_after_calls
from threadline.codecs._turns import without_leading_turn
from threadline.codecs.base import ReasoningPolicy
from threadline.codecs.base import TextFilesPolicy
from threadline.codecs.base import UnsupportedPolicy
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import Part
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import Role
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

P = TypeVar("P")


@dataclasses.dataclass(frozen=True, slots=True)
class Turn:
    """One message as ``encode`` sends it, handed to the format's read-backs."""

    message: Message
    """The message sent: the history's, or the copy ``encode`` sends for it (a late system
    message as its user note, a user message with its note-like texts escaped)."""
    index: int
    """Its index in ``history.messages``."""
    role: Role
    """The role it is sent with."""
    parts: Sequence[Resolved]
    """What the policies keep of it, in order: what the read-backs are called on."""
    history: PreparedHistory
    """The history as ``encode`` read it (options, wire ids, tool names)."""
    shared: dict[str, Any]
    """Scratch kept across the messages of one call, for a read-back whose answer depends
    on earlier messages (Bedrock's document names): empty at the start of each call."""
    at: int = 0
    """The position in ``parts`` of the part being read back."""

    def wire_id(self, call_id: str) -> str:
        """The id ``encode`` sent for the tool-call id ``call_id``."""
        return self.history.ids.get(call_id, call_id)


ReadBack = Callable[[P, Turn], "Part | None"]
"""What ``decode`` reads back for one part ``encode`` sent (``None``: nothing, as blank text
in some formats)."""


@dataclasses.dataclass(frozen=True)
class ReadBacks(Generic[P]):
    """Per part type, what a format's ``decode`` reads back of what its ``encode`` wrote.

    ``None``: the format's policies never keep such a part (`resolve` drops or replaces it),
    so meeting one is a bug, reported as one.
    """

    text: ReadBack[TextPart]
    file: ReadBack[FilePart] | None = None
    call: ReadBack[ToolCallPart] | None = None
    result: ReadBack[ToolResultPart] | None = None
    reasoning: ReadBack[ReasoningPart] | None = None
    provider_call: ReadBack[ProviderToolCallPart] | None = None
    provider_result: ReadBack[ProviderToolResultPart] | None = None


@dataclasses.dataclass(frozen=True)
class RoundTrip:
    """A format's round trip: how its ``encode`` reads a history and what its ``decode``
    reads back, the two things `read_back` needs."""

    label: str
    """The format's name in messages (``"Anthropic Messages"``)."""
    provider: str
    capabilities: Capabilities
    rule: ToolNameRule
    """Its tool-name rule (as ``encode`` maps names)."""
    is_valid: Callable[[str], object]
    """Whether it takes a tool-call id as it is."""
    parts: ReadBacks[Any]
    mint: Callable[[str, int], str] = hashed_id
    """How it makes a wire id for an id ``is_valid`` refuses."""
    systems: Literal["in place", "leading"] = "in place"
    """``"leading"``: the leading system messages go to the format's system field (read back
    by ``system_text``, one text part each) and later ones as user notes (read back as
    system messages); ``"in place"``: system messages are messages like the others."""
    system_text: Callable[[TextPart], TextPart] = lambda part: TextPart(text=part.text)
    """What a leading system text reads back as (``systems="leading"``)."""
    sends_text: Callable[[str], object] = lambda text: not is_blank(text)
    """Whether ``encode`` sends a system text (``systems="leading"``): by default one that
    is not blank."""
    calls_last: bool = False
    """Tool calls read back after the other parts of their message (OpenAI-style messages
    carry them in a field of their own)."""
    leading_turn: bool = False
    """``encode`` adds a first user turn before an assistant turn; it is not read back."""
    arrange: Callable[[list[Part], Turn], list[Part]] | None = None
    """A last pass over a message's read-back parts (the order a format's fields impose)."""
    read_message: Callable[[Turn], list[Part] | None] | None = None
    """Reads a whole message back where parts are not read one by one (``None``: read them
    one by one)."""


def prepare_for(messages: Iterable[Message], spec: RoundTrip, **settings: Any) -> PreparedHistory:
    """``messages`` read for an ``encode`` of the format ``spec`` describes: `prepare_history`
    with the format's provider, capabilities, tool-name rule and id rules taken from ``spec``,
    so the format's ``encode`` and its read-back cannot disagree on them; ``settings`` are
    ``encode``'s options (``model``, ``integrity``, ``cache``...)."""
    return prepare_history(
        messages,
        provider=spec.provider,
        capabilities=spec.capabilities,
        rule=spec.rule,
        is_valid=spec.is_valid,
        mint=spec.mint,
        **settings,
    )


def prepared(
    messages: Sequence[Message],
    spec: RoundTrip,
    *,
    model: str | None,
    reasoning: ReasoningPolicy,
    unsupported: UnsupportedPolicy,
    text_files: TextFilesPolicy,
) -> PreparedHistory:
    """``messages`` read as the format's ``encode`` reads them, integrity off (the caller
    passes prepared messages)."""
    return prepare_for(
        messages,
        spec,
        model=model,
        integrity="off",
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )


def read_back(
    messages: Sequence[Message],
    spec: RoundTrip,
    *,
    model: str | None = None,
    reasoning: ReasoningPolicy = "auto",
    unsupported: UnsupportedPolicy = "placeholder",
    text_files: TextFilesPolicy = "unsupported",
) -> list[Message]:
    """What the format of ``spec`` reads back of ``messages``: its
    ``normalize_for_round_trip``."""
    history = prepared(
        messages,
        spec,
        model=model,
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )
    shared: dict[str, Any] = {}
    out: list[Message] = []
    leading = spec.systems == "leading"
    for index, message in enumerate(history.messages):
        role = message.role
        if role == "internal":
            continue
        if role == "system" and leading:
            parts: list[Part] = [spec.system_text(part) for part in _texts(message, spec)]
        else:
            leading = False
            if spec.systems == "leading":
                sent = _sent(history, index, spec)
                if sent is None:
                    continue
                message, role, resolved = sent
            else:
                resolved = history.parts(index)
            turn = Turn(message, index, role, resolved, history, shared)
            parts = read_parts(turn, spec)
        if parts:
            out.append(message.model_copy(update={"role": role, "parts": tuple(parts)}))
    return finish(out, spec)


def _texts(message: Message, spec: RoundTrip) -> list[TextPart]:
    return [p for p in message.parts if isinstance(p, TextPart) and spec.sends_text(p.text)]


def _sent(
    history: PreparedHistory, index: int, spec: RoundTrip
) -> tuple[Message, Role, Sequence[Resolved]] | None:
    """The message, role and parts ``encode`` sends for ``history.messages[index]`` after
    the leading system text: a system message as a user note (``None``: no text to send), a
    user message with its note-like texts escaped."""
    message = history.messages[index]
    if message.role == "system":
        notes = [
            TextPart(text=note(part.text), metadata=part.metadata) for part in _texts(message, spec)
        ]
        if not notes:
            return None
        sent = message.model_copy(update={"role": "user", "parts": tuple(notes)})
        return sent, "user", history.parts_of(index, sent)
    if message.role == "user":
        escaped = escape_notes(message)
        return escaped, "user", history.parts_of(index, escaped)
    return message, message.role, history.parts(index)


def read_parts(turn: Turn, spec: RoundTrip) -> list[Part]:
    """The parts of ``turn`` read back one by one (`RoundTrip.read_message` first, when the
    format reads the message whole), then arranged."""
    whole = spec.read_message(turn) if spec.read_message is not None else None
    if whole is not None:
        return whole
    parts: list[Part] = []
    calls: list[Part] = []
    for at, part in enumerate(turn.parts):
        read = _read_part(part, dataclasses.replace(turn, at=at), spec)
        if read is None:
            continue
        if spec.calls_last and isinstance(read, ToolCallPart):
            calls.append(read)
        else:
            parts.append(read)
    parts.extend(calls)
    return spec.arrange(parts, turn) if spec.arrange is not None else parts


def _read_part(part: Resolved, turn: Turn, spec: RoundTrip) -> Part | None:
    backs = spec.parts
    if isinstance(part, Placeholder):
        return TextPart(text=part.text)
    if isinstance(part, TextPart):
        return backs.text(part, turn)
    if isinstance(part, FilePart):
        return _read(backs.file, part, turn, spec)
    if isinstance(part, ToolCallPart):
        return _read(backs.call, part, turn, spec)
    if isinstance(part, ToolResultPart):
        return _read(backs.result, part, turn, spec)
    if isinstance(part, ReasoningPart):
        return _read(backs.reasoning, part, turn, spec)
    if isinstance(part, ProviderToolCallPart):
        return _read(backs.provider_call, part, turn, spec)
    if isinstance(part, ProviderToolResultPart):
        return _read(backs.provider_result, part, turn, spec)
    if isinstance(part, HookPart):
        return _read(None, part, turn, spec)
    assert_never(part)


def _read(back: ReadBack[P] | None, part: P, turn: Turn, spec: RoundTrip) -> Part | None:
    if back is None:
        kind = getattr(part, "type", type(part).__name__)
        raise AssertionError(
            f"{spec.label} has no read-back for a {kind} part, and the policies kept one on "
            f"a message of role {turn.role!r}"
        )
    return back(part, turn)


def finish(out: list[Message], spec: RoundTrip) -> list[Message]:
    """The read-back messages as ``decode`` returns them: results named after their calls,
    the added leading turn taken off and notes read back as system messages, where the
    format does those."""
    out = name_results_after_calls(out)
    if spec.leading_turn:
        out = without_leading_turn(out)
    if spec.systems == "leading":
        out = unwrap_notes(out)
    return out
