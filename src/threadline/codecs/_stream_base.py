"""What every format's stream builder shares: the neutral events, part numbering, the
bounds a stream is read within, and the check that streamed tool arguments are JSON.

A builder reads one provider's stream events and rebuilds the provider's *own* final response
(the document ``decode_response`` takes), so an assembled message is that codec's reading of
it by construction. While it reads, it says what arrived as neutral events.

A stream is untrusted input, read within the assembler's `Limits` as it arrives: `Bounds` holds
them while a builder runs (`bounded`), so the helpers every builder uses (`append`, `index_of`,
`pad`) refuse a text past ``max_string`` and an index or a part past ``max_parts`` before
anything is allocated, by raising `LimitExceededError`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Iterator
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any
from typing import Literal
from typing import TypeAlias

from threadline._bounded_json import _ARGUMENTS_DEPTH
from threadline._bounded_json import _OBJECT_START
from threadline._bounded_json import Limits
from threadline._bounded_json import exceeded
from threadline._bounded_json import parse_json
from threadline._bounded_json import walk
from threadline.errors import CodecError
from threadline.errors import LimitExceededError
from threadline.errors import ValidationError
from threadline.messages import Message
from threadline.messages import Part
from threadline.usage import Usage

PartKind: TypeAlias = Literal["text", "reasoning", "tool_call", "other"]
"""What a streamed part is: text, reasoning, a tool call, or another block (a server tool
call or result, a redacted thinking block...) that arrives whole."""


@dataclasses.dataclass(frozen=True)
class PartStart:
    """A part began. ``index`` numbers the stream's parts in the order they start."""

    index: int
    """The part's number in this stream (0, 1, ...); later events of the part carry it."""
    kind: PartKind
    """``text``, ``reasoning``, ``tool_call`` or ``other``."""
    id: str | None = None
    """The tool call's id, when the provider sends it at the start."""
    name: str | None = None
    """The tool's name (as on the wire), for a tool call."""


@dataclasses.dataclass(frozen=True)
class TextDelta:
    """More text of the text part ``index``."""

    index: int
    """The part's number in this stream."""
    text: str
    """The new text: append it to what the part holds."""


@dataclasses.dataclass(frozen=True)
class ReasoningDelta:
    """More reasoning text (or reasoning summary) of the reasoning part ``index``."""

    index: int
    """The part's number in this stream."""
    text: str
    """The new reasoning text."""


@dataclasses.dataclass(frozen=True)
class ToolCallDelta:
    """More of a tool call's arguments: raw JSON text pieces, valid only once joined."""

    index: int
    """The part's number in this stream."""
    arguments: str
    """The next piece of the arguments' JSON text."""


@dataclasses.dataclass(frozen=True)
class PartEnd:
    """The part ``index`` is complete; ``part`` is it as the message will hold it."""

    index: int
    """The part's number in this stream."""
    part: Part | None
    """The finished part (``None`` when it carries nothing a message keeps, such as an
    empty text)."""


@dataclasses.dataclass(frozen=True)
class Finish:
    """The response is complete."""

    stop_reason: str | None
    """The provider's own stop reason (``end_turn``, ``stop``, ``tool_calls``...)."""
    usage: Usage | None
    """The call's tokens ([`Usage`][threadline.Usage], the message's ``usage``), when the
    stream reported them."""


StreamEvent: TypeAlias = PartStart | TextDelta | ReasoningDelta | ToolCallDelta | PartEnd | Finish
"""One neutral stream event."""


class Bounds:
    """What one stream may hold (the assembler's `Limits`) and how many part slots it took."""

    __slots__ = ("event", "limits", "slots", "what")

    def __init__(self, limits: Limits, what: str = "stream") -> None:
        self.limits = limits
        self.slots = 0
        """Parts started, and the places left empty before a part's place (Responses'
        content and summary lists): together at most ``max_parts``."""
        self.what = what
        """What reads the stream, for error messages (``anthropic stream``)."""
        self.event = 0
        """The number of the event being read, for error messages."""

    def check(self, count: int, what: str) -> None:
        """Raise unless ``count`` more part slots fit.

        Raises:
            threadline.LimitExceededError: the stream would hold more than ``max_parts``.
        """
        maximum = self.limits.max_parts
        if maximum is not None and self.slots + count > maximum:
            raise self.exceeded(
                "max_parts",
                maximum,
                self.slots + count,
                f"{what} would be part {self.slots + count:,} of the stream",
            )

    def take(self, count: int, what: str) -> None:
        """Take ``count`` part slots for ``what`` (see `check`)."""
        self.check(count, what)
        self.slots += count

    def where(self) -> str:
        return f"event {self.event}" if self.event else ""

    def exceeded(
        self, limit: str, maximum: int, actual: int | None, detail: str
    ) -> LimitExceededError:
        return exceeded(
            self.what,
            limit,
            maximum,
            actual,
            self.where(),
            detail,
            hint=f"pass StreamAssembler(..., limits=Limits({limit}=...)) with a larger value if "
            "this stream is expected",
        )


CURRENT: ContextVar[Bounds | None] = ContextVar("threadline_stream_bounds", default=None)
"""The bounds of the stream being read: set around every builder call (`bounded`; the
assembler's ``feed``, the hot path, sets it directly)."""


_DEFAULT = Bounds(Limits())
"""Outside an assembler: the default limits (nothing counts slots against it)."""


def bounds() -> Bounds:
    """The bounds of the stream being read (the default `Limits` outside an assembler)."""
    return CURRENT.get() or Bounds(Limits())


@contextlib.contextmanager
def bounded(within: Bounds) -> Iterator[None]:
    """Read a stream within ``within``: the helpers below check against it."""
    token = CURRENT.set(within)
    try:
        yield
    finally:
        CURRENT.reset(token)


class Builder:
    """Reads one format's stream events; rebuilds its response. Subclasses implement
    ``feed`` and ``response``; ``wrap`` makes a response of a few blocks, for ``PartEnd``."""

    provider: str = ""

    def __init__(self) -> None:
        self.finished = False
        """The provider said the response is complete (``message()`` may answer)."""
        self.error: str | None = None
        """What an ``error`` event said, if one came."""
        self.events = 0
        self.decode: Callable[[dict[str, Any]], Message] = self._decode
        """Reads a rebuilt response: the assembler's, with its tool names and model."""
        self._open: dict[Hashable, int] = {}
        self._count = 0
        self.bounds = Bounds(Limits())
        """The limits the stream is read within (the assembler's), and the part slots taken."""

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        raise NotImplementedError

    def unwrap(self, event: Any) -> Any:
        """The event to read in place of ``event`` as it was fed (an SDK helper's wrapper
        holds the provider's event), or ``None`` for one that carries nothing to read."""
        return event

    def unfinished(self) -> str:
        """What to add to the error of a stream that did not finish (a hint, or ``""``)."""
        return ""

    def close(self) -> list[StreamEvent]:
        """The stream ended: the events still held back (none, unless a format says)."""
        return []

    def _decode(self, response: dict[str, Any]) -> Message:
        from threadline.codecs._registry import decode_response

        return decode_response(response, provider=self.provider)

    def response(self, *, partial: bool = False) -> dict[str, Any]:
        """The provider's response as far as it arrived (``partial``: cut tool arguments are
        left out rather than refused)."""
        raise NotImplementedError

    def wrap(self, blocks: list[Any]) -> dict[str, Any]:
        """A response holding only ``blocks`` (for the part a ``PartEnd`` carries)."""
        raise NotImplementedError

    def arguments(self) -> dict[str, str]:
        """``{call id or label: arguments JSON text}`` of every streamed tool call."""
        return {}

    # -- part numbering ----------------------------------------------------------------------

    def start(
        self, key: Hashable, kind: PartKind, id: str | None = None, name: str | None = None
    ) -> tuple[int, list[StreamEvent]]:
        """The number of the part ``key``, and a ``PartStart`` if it is new."""
        index = self._open.get(key)
        if index is not None:
            return index, []
        self.bounds.take(1, f"a {kind} part")
        index = self._count
        self._count += 1
        self._open[key] = index
        return index, [PartStart(index, kind, id, name)]

    def room(self, kind: str) -> None:
        """Refuse a part about to be stored (then started) past ``max_parts``, before it is."""
        self.bounds.check(1, f"a {kind} part")

    def is_open(self, key: Hashable) -> bool:
        return key in self._open

    def end(self, key: Hashable, block: Any) -> list[StreamEvent]:
        """A ``PartEnd`` for the part ``key`` holding ``block`` (nothing if it is not open)."""
        index = self._open.pop(key, None)
        if index is None:
            return []
        return [PartEnd(index, self.part_of(block))]

    def end_all(self, blocks: Mapping[Hashable, Any]) -> list[StreamEvent]:
        """``PartEnd`` for every open part, in the order they started."""
        ordered = sorted(self._open.items(), key=lambda item: item[1])
        return [event for key, _ in ordered for event in self.end(key, blocks.get(key))]

    def part_of(self, block: Any) -> Part | None:
        if block is None:
            return None
        try:
            parts = self.decode(materialize(self.wrap([block]))).parts
        except (CodecError, ValueError):
            return None
        return parts[0] if len(parts) == 1 else None


class Pieces:
    """Text arriving in pieces, joined once when read: adding to a ``str`` each time would copy
    the whole text per delta (quadratic in a long reply)."""

    __slots__ = ("_length", "_pieces")

    def __init__(self, *pieces: str) -> None:
        self._pieces = [piece for piece in pieces if piece]
        self._length = sum(len(piece) for piece in self._pieces)

    def add(self, piece: str) -> None:
        self._pieces.append(piece)
        self._length += len(piece)

    def length(self) -> int:
        """How many characters the text holds (without joining it)."""
        return self._length

    def __str__(self) -> str:
        if len(self._pieces) > 1:
            self._pieces[:] = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""


def append(container: dict[Any, Any], key: Any, piece: str) -> None:
    """Add ``piece`` to the text at ``container[key]`` (absent or ``None`` reads as ``""``).

    Raises:
        threadline.CodecError: ``piece`` or what it extends is not text.
        threadline.LimitExceededError: the text would be longer than ``max_string``; what fits
            is added first, so the text that arrived is kept up to the limit.
    """
    current = container.get(key)
    if not isinstance(piece, str) or not isinstance(current, (Pieces, str, type(None))):
        raise CodecError(f"a stream delta of {key!r} is not text: {type(piece).__name__}")
    within = CURRENT.get() or _DEFAULT
    maximum = within.limits.max_string
    if maximum is not None:
        held = current.length() if isinstance(current, Pieces) else len(current or "")
        if held + len(piece) > maximum:
            _add(container, key, current, piece[: max(0, maximum - held)])
            raise within.exceeded(
                "max_string",
                maximum,
                held + len(piece),
                f"a streamed text ({key}) of at least {held + len(piece):,} characters; the "
                f"first {maximum:,} are kept",
            )
    _add(container, key, current, piece)


def _add(container: dict[Any, Any], key: Any, current: Any, piece: str) -> None:
    if isinstance(current, Pieces):
        current.add(piece)
    else:
        container[key] = Pieces(current or "", piece)


def text_of(value: Any) -> str:
    """A text held as `Pieces` or ``str`` (``""`` for ``None``)."""
    return "" if value is None else str(value)


_PIECES_DEPTH = 12
"""How deep a rebuilt response may hold `Pieces` (Mistral's thinking text, the deepest, is at
8): below that, values are the provider's own, left as they are for the codec's limits."""


def materialize(value: Any, depth: int = 0) -> Any:
    """``value`` with every `Pieces` in it joined into its ``str`` (new containers down to
    where pieces can be; a hostile document nested deeper is not walked)."""
    if isinstance(value, Pieces):
        return str(value)
    if depth > _PIECES_DEPTH:
        return value
    if isinstance(value, dict):
        return {key: materialize(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [materialize(item, depth + 1) for item in value]
    return value


def index_of(value: Any, what: str) -> int:
    """``value`` as a stream index (a non-negative ``int``), below ``max_parts``: an index
    names a part (or a place in a list of parts), so one past the limit is refused before
    anything is stored at it.

    Raises:
        threadline.CodecError: it is not one.
        threadline.LimitExceededError: it is ``max_parts`` or more.
    """
    if type(value) is not int or value < 0:
        raise CodecError(f"a stream event's {what} is not an index: {value!r}")
    within = CURRENT.get() or _DEFAULT
    maximum = within.limits.max_parts
    if maximum is not None and value >= maximum:
        raise within.exceeded(
            "max_parts", maximum, value + 1, f"a stream event's {what} is {value:,}"
        )
    return value


def pad(entries: list[Any], at: int) -> None:
    """Make ``entries[at]`` exist: the places before it that never arrived hold ``None``, and
    each takes a part slot (so indices far apart cannot allocate past ``max_parts``).

    Raises:
        threadline.LimitExceededError: the stream would hold more than ``max_parts`` slots.
    """
    missing = at + 1 - len(entries)
    if missing <= 0:
        return
    if missing > 1:
        bounds().take(missing - 1, f"the {missing - 1:,} places before index {at:,}")
    entries.extend([None] * missing)


_DIGITS_BITS = 14_284
"""Integers of at most this many bits have at most 4,300 digits, the most any JSON reader in
Python reads back (``sys.get_int_max_str_digits``, pydantic-core's own bound)."""
_MOST_DIGITS = 10**4300


def check_event(event: Mapping[str, Any], within: Bounds) -> LimitExceededError | None:
    """Check one event's nesting, numbers and strings before a builder reads it, in one pass
    that never recurses and allocates next to nothing (it runs for every event).

    Object keys are not measured here (that would double the cost of every event): a key
    past ``max_string`` is refused when the assembled response is read.

    Returns:
        the error for a string longer than ``max_string``, or ``None``: the caller reads the
        event with such strings cut to the limit (`cut_strings`), then raises it, so what
        arrived is kept up to the limit.

    Raises:
        threadline.LimitExceededError: the event nests deeper than ``max_depth``.
        threadline.CodecError: it holds an integer of more than 4,300 digits.
    """
    limits = within.limits
    max_depth = limits.max_depth
    max_string = limits.max_string if limits.max_string is not None else 1 << 62
    longest = 0  # of the strings past max_string
    stack: list[Any] = [event]
    depths = [2]  # of the members of each container on the stack
    while stack:
        value = stack.pop()
        inner = depths.pop()
        kind = type(value)
        if kind is dict or (kind is not list and isinstance(value, Mapping)):
            members: Any = value.values()
        else:
            members = value
        for item in members:
            kind = type(item)
            if kind is str:
                if len(item) > max_string and len(item) > longest:
                    longest = len(item)
            elif kind is dict or kind is list:
                if inner > max_depth:  # an empty container nests too
                    raise _deep(within, inner)
                if item:
                    stack.append(item)
                    depths.append(inner + 1)
            elif kind is int:
                if item.bit_length() > _DIGITS_BITS and not -_MOST_DIGITS < item < _MOST_DIGITS:
                    raise CodecError(
                        f"{within.what}: {within.where()} holds an integer of more than 4,300 "
                        f"digits, which no JSON reader reads back"
                    )
            elif kind is float or kind is bool or item is None:
                continue
            elif isinstance(item, (Mapping, list, tuple)):
                if inner > max_depth:
                    raise _deep(within, inner)
                stack.append(item)
                depths.append(inner + 1)
            elif isinstance(item, str) and len(item) > max_string and len(item) > longest:
                longest = len(item)
    if longest:
        return within.exceeded(
            "max_string",
            max_string,
            longest,
            f"a string of {longest:,} characters; the first {max_string:,} are kept",
        )
    return None


def _deep(within: Bounds, depth: int) -> LimitExceededError:
    maximum = within.limits.max_depth
    return within.exceeded(
        "max_depth", maximum, depth, f"the event nests {depth} levels deep (or refers to itself)"
    )


def cut_strings(value: Any, maximum: int) -> Any:
    """``value`` with every string and key longer than ``maximum`` cut to it (containers
    copied; recursive, so for values whose nesting was checked, at most `DEPTH_CEILING`)."""
    if isinstance(value, str):
        return value[:maximum]
    if isinstance(value, Mapping):
        return {
            (key[:maximum] if isinstance(key, str) else key): cut_strings(item, maximum)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [cut_strings(item, maximum) for item in value]
    return value


def document(value: dict[str, Any]) -> dict[str, Any]:
    """A rebuilt response with its `Pieces` joined."""
    return {key: materialize(item) for key, item in value.items()}


def check_arguments(builder: Builder) -> None:
    """Raise if a streamed tool call's arguments are not one JSON object within the limits.

    Arguments that are JSON but hold a value no message can (a number of more than 4,300
    digits, ``NaN``, ``1e999``, a lone surrogate) pass: ``decode_response`` reads the call as
    an invalid one, its text kept in ``raw_arguments``, as it does for the whole response.
    """
    for label, text in builder.arguments().items():
        value, problem, kind = read_object(text, builder.bounds.limits)
        if value is None and kind != "value":
            raise CodecError(
                f"{builder.provider} stream: the arguments of tool call {label!r} {problem}"
            )


Unread: TypeAlias = Literal["", "cut", "limit", "value"]
"""Why streamed arguments are no object a message keeps: ``cut`` (not JSON, or not an
object: no whole stream sends that), ``limit`` (past the limits), ``value`` (JSON holding a
value no message can: a number of more than 4,300 digits, ``NaN``, a lone surrogate)."""


def read_object(
    text: str, limits: Limits | None = None
) -> tuple[dict[str, Any] | None, str, Unread]:
    """Streamed tool arguments as the JSON object a message keeps, read as ``decode_response``
    reads them (``{}`` for no text): bounded and never recursing, within ``limits`` (the
    stream's by default) counted from where tool arguments sit in a dumped history.

    Returns:
        ``(object, "", "")``, or ``(None, why not, what kind of problem)``.
    """
    if not text.strip():
        return {}, "", ""
    if _OBJECT_START.match(text) is None:
        return None, "are not a JSON object", "cut"
    checked = limits if limits is not None else bounds().limits
    try:
        value = parse_json(text, checked, what="tool arguments", path="arguments")
        walk(
            value,
            checked,
            "tool arguments",
            "arguments",
            _ARGUMENTS_DEPTH,
            estimate_size=False,
            check_strings=True,
            finite_floats=True,
        )
    except LimitExceededError as error:
        return None, f"go past a limit: {error}", "limit"
    except ValidationError as error:
        detail = error.errors[0] if error.errors else None
        message = detail.message if detail is not None else str(error)
        if detail is not None and detail.type == "json_invalid" and "out of range" not in message:
            return None, f"are not JSON ({message}): the stream was cut or corrupted", "cut"
        return None, f"hold a value no message can ({message})", "value"
    if type(value) is not dict:
        return None, "are not a JSON object", "cut"
    return value, "", ""


def parse_object(text: str, limits: Limits | None = None) -> dict[str, Any] | None:
    """``text`` as the JSON object a message keeps (``{}`` for no text), or ``None`` if it is
    not one within the limits (see `read_object`)."""
    return read_object(text, limits)[0]


def past_limits(text: Any) -> bool:
    """Whether argument text goes past the stream's limits, so that ``decode_response`` would
    refuse the response holding it: a partial response holds ``"{}"`` instead, and the
    assembler keeps the text in ``raw_arguments``."""
    return read_object(text_of(text))[2] == "limit"


def as_event(event: Any) -> Any:
    """A provider event as JSON values: a pydantic SDK object is dumped (unset fields left
    out, so an object parsed from a dict dumps back to that dict)."""
    if isinstance(event, (Mapping, str)):
        return event
    dump = getattr(event, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_unset=True, by_alias=True)
    to_dict = getattr(event, "to_json_dict", None)
    if callable(to_dict):
        return to_dict()
    raise CodecError(
        f"a stream event must be a dict or an SDK event object, got {type(event).__name__}"
    )
