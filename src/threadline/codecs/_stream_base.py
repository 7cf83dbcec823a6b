"""What every format's stream builder shares: the neutral events, part numbering, and the
check that streamed tool arguments are JSON.

A builder reads one provider's stream events and rebuilds the provider's *own* final response
(the document ``decode_response`` takes), so an assembled message is that codec's reading of
it by construction. While it reads, it says what arrived as neutral events.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Mapping
from typing import Any
from typing import Literal
from typing import TypeAlias

from threadline.errors import CodecError
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

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        raise NotImplementedError

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
        index = self._count
        self._count += 1
        self._open[key] = index
        return index, [PartStart(index, kind, id, name)]

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

    __slots__ = ("_pieces",)

    def __init__(self, *pieces: str) -> None:
        self._pieces = [piece for piece in pieces if piece]

    def add(self, piece: str) -> None:
        self._pieces.append(piece)

    def __str__(self) -> str:
        if len(self._pieces) > 1:
            self._pieces[:] = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""


def append(container: dict[Any, Any], key: Any, piece: str) -> None:
    """Add ``piece`` to the text at ``container[key]`` (absent or ``None`` reads as ``""``).

    Raises:
        threadline.CodecError: ``piece`` or what it extends is not text.
    """
    current = container.get(key)
    if not isinstance(piece, str) or not isinstance(current, (Pieces, str, type(None))):
        raise CodecError(f"a stream delta of {key!r} is not text: {type(piece).__name__}")
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
    """``value`` as a stream index (a non-negative ``int``).

    Raises:
        threadline.CodecError: it is not one.
    """
    if type(value) is not int or value < 0:
        raise CodecError(f"a stream event's {what} is not an index: {value!r}")
    return value


def document(value: dict[str, Any]) -> dict[str, Any]:
    """A rebuilt response with its `Pieces` joined."""
    return {key: materialize(item) for key, item in value.items()}


def check_arguments(builder: Builder) -> None:
    """Raise if a streamed tool call's arguments are not one JSON object."""
    for label, text in builder.arguments().items():
        try:
            value = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as error:
            raise CodecError(
                f"{builder.provider} stream: the arguments of tool call {label!r} are not JSON "
                f"({error.msg} at character {error.pos}): the stream was cut or corrupted"
            ) from None
        if not isinstance(value, dict):
            raise CodecError(
                f"{builder.provider} stream: the arguments of tool call {label!r} are not a "
                f"JSON object"
            )


def parse_object(text: str) -> dict[str, Any] | None:
    """``text`` as a JSON object (``{}`` for no text), or ``None`` if it is not one."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


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
