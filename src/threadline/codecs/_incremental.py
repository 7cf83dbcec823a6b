"""Incremental encoding (private): one history's body for one format and options, kept
between the steps of an agent loop so that a step encodes only what changed.

A history grows at its end. Its body is a list of wire turns (``messages``, ``contents``,
``input``) under fields that come from its start (the system prompt). The turns before the
last **boundary** never change again: a boundary is a user message that starts a wire turn of
its own (it holds text that is not blank) right after an assistant message that calls no
tool, so nothing later merges into the turns before it, answers a call before it, or moves it.
`SplicedEncoder` keeps the wire turns up to the newest boundary, encoded once, shared
read-only (``threadline._shared_json``), and encodes each step's tail, integrity included.

A segment is encoded on its own, with the format's own ``encode``: it starts at a boundary,
so it is encoded as it is inside the whole history when nothing in it depends on the turns
before it. That is checked, not assumed, and where it does not hold the encoder encodes the
whole history instead (the result is the same, only slower):

- the tool-call ids of a segment and of everything before it are disjoint (a result cannot
  answer, and integrity cannot move, a call across a boundary);
- every tool name and call id is taken by the format as it is (a wire name or id depends on
  all the names and ids of the request, in order);
- the format's own check (``FormatDescriptor.segment_check``: Bedrock names each document
  uniquely in a request, so a segment holding a document is not encoded alone);
- a segment ends with the boundary's user message, and its last wire turn must equal that
  message encoded alone, so the turns before it are exactly what the whole encode gives;
- any error: the whole history is encoded, so the error is the one ``encode`` raises.

The property (``tests/property/test_incremental_props.py``): for every registered format,
options and random history operations, the body equals a full ``encode`` of the same
messages, ``json.dumps`` of both equal, key order included.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from threadline._log import Snapshot
from threadline._log import snapshot_storage
from threadline._shared_json import share
from threadline.codecs._formats import FormatDescriptor
from threadline.codecs._tool_names import map_tool_names
from threadline.messages import Message
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

__all__ = ["SplicedEncoder", "is_boundary"]

_CALLS = (ToolCallPart, ProviderToolCallPart)


def is_boundary(messages: Sequence[Message], index: int) -> bool:
    """Whether ``messages[index]`` is a user message holding text that is not blank, right
    after an assistant message that calls no tool."""
    if index <= 0:
        return False
    message = messages[index]
    if message.role != "user":
        return False
    before = messages[index - 1]
    if before.role != "assistant" or any(isinstance(part, _CALLS) for part in before.parts):
        return False
    return any(
        type(part) is TextPart and part.text and not part.text.isspace() for part in message.parts
    )


class _Refused(Exception):
    """A segment cannot be encoded on its own: encode the whole history."""


class SplicedEncoder:
    """The body of one growing history for one format and one set of ``encode`` options.

    `encode` returns what the format's ``encode(messages, **options)`` returns for a
    `Snapshot`, encoding only the turns after the newest boundary it has not encoded yet.
    Thread safe: one step at a time.
    """

    __slots__ = (
        "_check",
        "_codec",
        "_head",
        "_ids",
        "_items",
        "_key",
        "_lock",
        "_options",
        "_rule",
        "_skeleton",
        "_start",
        "_stop",
        "_takes_id",
        "_wire",
    )

    def __init__(self, descriptor: FormatDescriptor, options: Mapping[str, Any]) -> None:
        """An encoder for ``descriptor``'s format and the codec ``options`` (``encode``'s
        ``system``, ``model``, ``integrity``, ``reasoning``, ``unsupported``,
        ``text_files``)."""
        self._codec: Any = descriptor.codec()
        self._options = dict(options)
        self._key = descriptor.turns
        self._check: Callable[[Sequence[Message]], bool] | None = (
            descriptor.segment_check.load() if descriptor.segment_check is not None else None
        )
        spec = getattr(self._codec, "ROUND_TRIP", None)
        self._rule = getattr(spec, "rule", None)
        self._takes_id: Callable[[str], object] | None = getattr(spec, "is_valid", None)
        self._lock = threading.Lock()
        self._reset(None, 0, ())

    def _reset(self, items: list[Message] | None, start: int, head: tuple[Message, ...]) -> None:
        self._items = items
        self._start = start
        self._head = head
        self._stop = 0  # the boundary: the turns of messages[:_stop] are in _wire
        self._wire: list[Any] = []
        self._skeleton: dict[str, Any] | None = None
        self._ids: set[str] = set()

    @property
    def splices(self) -> bool:
        """Whether the format can be encoded in segments at all."""
        return self._key is not None and self._rule is not None and self._takes_id is not None

    def encode(self, messages: Snapshot) -> dict[str, Any]:
        """The format's ``encode(messages, **options)``.

        Raises:
            threadline.ThreadlineError: what the format's ``encode`` raises for ``messages``.
        """
        if not self.splices:
            return self._whole(messages)
        with self._lock:
            items, start, _, head, _ = snapshot_storage(messages)
            moved = items is not self._items or start != self._start or head != self._head
            if moved or len(messages) < self._stop:  # not the history it encoded: start over
                self._reset(items, start, head)
            try:
                self._advance(messages)
                if self._skeleton is None:
                    return self._whole(messages)
                return self._spliced(messages)
            except _Refused:
                self._reset(items, start, head)
                return self._whole(messages)
            except Exception:
                self._reset(items, start, head)
                raise

    # -- the steps ----------------------------------------------------------------------------

    def _whole(self, messages: Sequence[Message]) -> dict[str, Any]:
        body: dict[str, Any] = self._codec.encode(messages, **self._options)
        return body

    def _newest_boundary(self, messages: Snapshot) -> int:
        for index in range(len(messages) - 1, self._stop, -1):
            if is_boundary(messages, index):
                return index
        return self._stop

    def _advance(self, messages: Snapshot) -> None:
        """Move the boundary to the newest one, encoding the turns up to it."""
        boundary = self._newest_boundary(messages)
        if boundary == self._stop:
            return
        segment = messages[self._stop : boundary + 1]
        ids = self._check_segment(segment)
        if self._skeleton is None:  # the first segment: the body's other fields come from it
            body = self._codec.encode(segment, **self._options)
            turns = self._turns_before(body, segment[-1])
            self._skeleton = {
                key: (None if key == self._key else share(value)) for key, value in body.items()
            }
        else:
            body = self._codec.encode(segment, **self._tail_options())
            turns = self._turns_before(body, segment[-1])
        self._ids.update(ids)
        self._wire.extend(share(turns))
        self._stop = boundary

    def _turns_before(self, body: Mapping[str, Any], boundary: Message) -> list[Any]:
        """The wire turns of a segment without the last one, which must be the boundary's
        user message as it is encoded alone."""
        turns = body.get(self._key) if self._key is not None else None
        if not isinstance(turns, list) or not turns:
            raise _Refused
        alone = self._codec.encode([boundary], **self._tail_options()).get(self._key)
        if not isinstance(alone, list) or len(alone) != 1 or alone[0] != turns[-1]:
            raise _Refused
        return turns[:-1]

    def _spliced(self, messages: Snapshot) -> dict[str, Any]:
        tail = messages[self._stop :]
        self._check_segment(tail)
        body = self._codec.encode(tail, **self._tail_options())
        turns = body.get(self._key) if self._key is not None else None
        if not isinstance(turns, list) or set(body) - {self._key}:
            raise _Refused
        assert self._skeleton is not None
        out: dict[str, Any] = {}
        for key, value in self._skeleton.items():
            # the list is the body's own; the turns before the boundary are shared, read-only
            out[key] = [*self._wire, *turns] if key == self._key else value
        return out

    def _tail_options(self) -> dict[str, Any]:
        return {**self._options, "system": None}

    def _check_segment(self, segment: Sequence[Message]) -> set[str]:
        """Refuse a segment whose encoding alone may differ from its encoding in place;
        return its tool-call ids."""
        ids, names = _ids_and_names(segment)
        if not ids.isdisjoint(self._ids):
            raise _Refused
        takes_id, rule = self._takes_id, self._rule
        assert takes_id is not None
        assert rule is not None
        if not all(takes_id(call_id) for call_id in ids):
            raise _Refused
        if map_tool_names(names, rule):
            raise _Refused
        if self._check is not None and not self._check(segment):
            raise _Refused
        return ids


def _ids_and_names(messages: Sequence[Message]) -> tuple[set[str], set[str]]:
    """The tool-call ids and the tool names of ``messages``, in one pass."""
    ids: set[str] = set()
    names: set[str] = set()
    for message in messages:
        if message.role in ("assistant", "tool"):
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    ids.add(part.id)
                    names.add(part.name)
                elif isinstance(part, ToolResultPart):
                    ids.add(part.call_id)
                    if part.name is not None:
                        names.add(part.name)
                elif isinstance(part, ProviderToolCallPart):
                    ids.add(part.id)
                elif isinstance(part, ProviderToolResultPart):
                    ids.add(part.call_id)
    return ids, names
