"""Prompt-cache breakpoints (private; ``encode(cache=...)``).

A breakpoint tells the provider to cache the request up to that point. Two formats take them:

- ``anthropic``: ``cache_control: {"type": "ephemeral"}`` on a tool definition, a system block
  or a message block; at most four per request.
- ``bedrock``: a ``{"cachePoint": {"type": "default"}}`` block after the system blocks, the
  tools or a message's blocks; at most four per request too.

The others cache on their own (OpenAI and Mistral by prefix, Gemini implicitly): nothing is
added for them, though ``cache`` is still checked.

``cache`` is ``None`` (nothing added), ``"auto"`` (the tools, the system prompt and the newest
turn: what an agent loop sends again each call), or a sequence of explicit breakpoints, each
``"tools"``, ``"system"`` or the index of a message in the history given to ``encode``
(negative counts from the end), at most four. A message breakpoint goes after the message's
last part that can carry one (text, a file, a tool call or result), as the part's metadata
(``anthropic.cache_control``, ``bedrock.cache_point``): the same place a breakpoint read by
``decode`` is kept, so a decoded request encodes back with its breakpoints.

Breakpoints the history already holds count toward the four: ``"auto"`` adds what fits (the
newest turn first, then the system prompt, then the tools); explicit breakpoints that would
pass four raise a [`ValidationError`][threadline.ValidationError].

Both process the breakpoints in the order tools, system, messages, and refuse a one-hour
breakpoint (``ttl: "1h"``) after a five-minute one (no ``ttl``, or ``"5m"``): "a ttl='1h'
cache_control block must not come after a ttl='5m' cache_control block". A breakpoint added
here has no ``ttl`` (five minutes) unless a one-hour breakpoint the history holds comes after
it; then it takes ``"1h"`` too. A history whose own breakpoints break the order is refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import ClassVar
from typing import Literal
from typing import TypeAlias

from threadline.codecs._formats import CacheMarks
from threadline.codecs._formats import descriptor
from threadline.errors import ErrorDetail
from threadline.errors import ValidationError
from threadline.messages import FilePart
from threadline.messages import Message
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

Breakpoint: TypeAlias = "int | Literal['system', 'tools']"
CacheOption: TypeAlias = "Literal['auto'] | Sequence[int | Literal['system', 'tools']] | None"

MAX_BREAKPOINTS = 4
"""Anthropic's limit of ``cache_control`` blocks per request, and Bedrock's of cache points."""

_THINKING = frozenset({"thinking", "redacted_thinking"})
_FIX = (
    "cache takes None, 'auto', or a sequence of at most 4 breakpoints, each 'tools', 'system' "
    "or a message index (for example cache=['system', -1])"
)


@dataclasses.dataclass(frozen=True)
class CachePlan:
    """Where the breakpoints go, checked."""

    auto: bool = False
    system: bool = False
    tools: bool = False
    indexes: tuple[int, ...] = ()
    """Message indexes, from 0."""


def _invalid(path: str, problem: str) -> ValidationError:
    detail = ErrorDetail(path, problem, "cache")
    return ValidationError(f"{path}: {problem}", [detail])


def plan_cache(cache: Any, messages: Sequence[Message], provider: str) -> CachePlan:
    """``cache`` checked against the history.

    Raises:
        threadline.ValidationError: ``cache`` is not one of its forms, an index is outside
            the history, or (for a format with breakpoints) the message at an index has
            nothing a breakpoint can follow; the error names ``cache[i]`` and the fix.
    """
    if cache == "auto" and isinstance(cache, str):
        return CachePlan(auto=True)
    if isinstance(cache, (str, bytes, Mapping)) or not isinstance(cache, Sequence):
        raise _invalid("cache", f"{cache!r} is not a cache setting; {_FIX}")
    system = tools = False
    indexes: dict[int, None] = {}
    count = len(messages)
    for position, item in enumerate(cache):
        where = f"cache[{position}]"
        if item == "system" and isinstance(item, str):
            system = True
        elif item == "tools" and isinstance(item, str):
            tools = True
        elif isinstance(item, int) and not isinstance(item, bool):
            if not -count <= item < count:
                fix = f"use 0 to {count - 1}, or -1 for the newest" if count else "leave it out"
                raise _invalid(
                    where, f"message index {item} is outside the history of {count}; {fix}"
                )
            index = item % count
            if _marks(provider) is not None and _marked_part(messages[index]) is None:
                raise _invalid(
                    where,
                    f"message {index} ({messages[index].role}) holds no text, file, tool call "
                    "or tool result for a breakpoint to follow; choose another message",
                )
            indexes[index] = None
        else:
            raise _invalid(where, f"{item!r} is not a breakpoint; {_FIX}")
    total = system + tools + len(indexes)
    if total > MAX_BREAKPOINTS:
        raise _invalid(
            "cache",
            f"asks for {total} breakpoints; providers take at most {MAX_BREAKPOINTS}: keep "
            "the ones before the largest stable prefixes",
        )
    return CachePlan(system=system, tools=tools, indexes=tuple(indexes))


def _marked_part(message: Message) -> int | None:
    """The index of the last part of ``message`` a breakpoint can follow, if any."""
    if message.role == "internal":
        return None
    for index in range(len(message.parts) - 1, -1, -1):
        part = message.parts[index]
        if isinstance(part, TextPart) and part.text.strip():
            return index
        if isinstance(part, (FilePart, ToolCallPart, ToolResultPart)):
            return index
    return None


def marked_messages(
    plan: CachePlan, messages: Sequence[Message], provider: str
) -> Sequence[Message]:
    """``messages`` with a breakpoint in the metadata of each explicitly chosen message's last
    part that can carry one (copies: the caller's messages are not changed)."""
    marks = _marks(provider)
    if not plan.indexes or marks is None:
        return messages
    key, mark = marks.key, marks.mark
    out = list(messages)
    for index in plan.indexes:
        message = out[index]
        at = _marked_part(message)
        assert at is not None  # plan_cache checked it
        part = message.parts[at]
        if key in part.metadata:
            continue
        later = [*message.parts[at + 1 :], *(p for m in out[index + 1 :] for p in m.parts)]
        long = any(_is_long(p.metadata.get(key)) for p in later)  # processing order: keep it
        parts = list(message.parts)
        parts[at] = part.with_metadata({key: {**mark, "ttl": LONG} if long else dict(mark)})
        out[index] = message.model_copy(update={"parts": tuple(parts)})
    return out


def plan_and_mark(
    cache: Any, messages: Iterable[Message], provider: str
) -> tuple[CachePlan, Sequence[Message]]:
    """`plan_cache` and `marked_messages` at once: the checked plan and the messages with the
    explicit breakpoints in their parts' metadata (``threadline.codecs._prepared``).

    Raises:
        threadline.ValidationError: as `plan_cache`.
    """
    listed = messages if isinstance(messages, list) else list(messages)
    plan = plan_cache(cache, listed, provider)
    return plan, marked_messages(plan, listed, provider)


@dataclasses.dataclass(frozen=True)
class CacheState:
    """What an ``encode`` with breakpoints hands on to `with_breakpoints`: the prepared
    history's plan, and the wire turns the codec's loop put a history breakpoint in."""

    plan: CachePlan
    turns: tuple[int, ...]
    """Indexes into the body's ``messages``, ascending: no other turn holds a breakpoint, so
    counting them reads these turns alone (and the newest, which may change)."""


class TurnNotes:
    """Notes, as a codec's loop maps each message into a wire turn, the turns that get a
    breakpoint from the history (a part's metadata under the format's ``key``):
    `with_breakpoints` reads those alone, not the whole body again."""

    __slots__ = ("_key", "_plan", "_turns")

    def __init__(self, plan: CachePlan, key: str) -> None:
        self._plan = plan
        self._key = key
        self._turns: list[int] = []

    def note(self, parts: Sequence[Any], turn: int) -> None:
        """Note ``turn`` (the index the message's blocks went to) when one of ``parts`` (or
        of a tool result's content) holds a breakpoint."""
        if self._turns and self._turns[-1] == turn:
            return
        if _holds_mark(parts, self._key):
            self._turns.append(turn)

    def state(self, shift: int) -> CacheState:
        """The `CacheState` once the loop is done, ``shift`` turns having been put first
        (a leading user turn)."""
        return CacheState(self._plan, tuple(turn + shift for turn in self._turns))


def _holds_mark(parts: Sequence[Any], key: str) -> bool:
    for part in parts:
        metadata = getattr(part, "metadata", None)
        if metadata and key in metadata:
            return True
        content = getattr(part, "content", None)
        if isinstance(content, tuple) and _holds_mark(content, key):
            return True
    return False


LONG = "1h"
"""The one-hour TTL; a breakpoint without ``ttl`` (or ``"5m"``) lives five minutes."""


def _marks(provider: str) -> CacheMarks | None:
    described = descriptor(provider)
    return None if described is None else described.cache


def _is_long(mark: Any) -> bool:
    return isinstance(mark, Mapping) and mark.get("ttl") == LONG


def with_breakpoints(payload: dict[str, Any], provider: str, state: CacheState) -> dict[str, Any]:
    """``payload`` with the plan's tool, system and newest-turn breakpoints added; the
    history's breakpoints are read from the turns ``state`` names alone.

    Raises:
        threadline.ValidationError: an explicit ``"system"`` / ``"tools"`` breakpoint for a
            request without one, or more than four breakpoints with those the history holds.
    """
    marks = _marks(provider)
    if marks is None:
        return payload
    writer: AnthropicMarks | BedrockMarks = marks.writer.load()()
    writer.turns = state.turns
    plan = state.plan
    out = dict(payload)
    if plan.auto:
        for place in ("turn", "system", "tools"):  # the most valuable first
            if writer.count(out) < MAX_BREAKPOINTS:
                writer.add(out, place)
        _check_order(writer, out, provider, marks.key)
        return out
    for place, wanted in (("system", plan.system), ("tools", plan.tools)):
        if wanted and not writer.add(out, place):
            raise _invalid(
                "cache",
                f"asks for a breakpoint after the {place}, but the request has no {place}; "
                f"leave {place!r} out of cache",
            )
    total = writer.count(out)
    if total > MAX_BREAKPOINTS:
        raise _invalid(
            "cache",
            f"the request would hold {total} cache breakpoints (with those the history keeps "
            f"in part metadata '{marks.key}'), but {provider} takes at most "
            f"{MAX_BREAKPOINTS}; ask for fewer",
        )
    _check_order(writer, out, provider, marks.key)
    return out


def _check_order(
    writer: AnthropicMarks | BedrockMarks, payload: Mapping[str, Any], provider: str, key: str
) -> None:
    """Raise when a one-hour breakpoint comes after a five-minute one (the ones added here
    never do: only the history's own can)."""
    short = None
    for where, mark in writer.marks(payload):
        if mark.get("ttl") != LONG:
            short = short or where
        elif short is not None:
            raise _invalid(
                "cache",
                f"the request would hold a ttl='1h' breakpoint at {where} after a five-minute "
                f"one at {short}, and {provider} refuses a ttl='1h' cache_control block after "
                "a ttl='5m' one (it reads tools, system, then messages); the history keeps "
                f"them in part metadata '{key}': give the earlier one "
                "ttl '1h', or drop the later one's ttl",
            )


class _Writer:
    """What both writers share: a writer is made for one body (`with_breakpoints`), and the
    marks of its messages before the newest are read once, on the first `marks`, from the
    turns the codec's loop noted (``turns``) alone: adding a breakpoint changes only the
    tools, the system prompt and the newest turn, so counting and checking the marks again
    walks those alone, and no unmarked turn is walked at all."""

    def __init__(self) -> None:
        self._settled: list[tuple[str, Mapping[str, Any]]] | None = None
        self.turns: Sequence[int] | None = None
        """The only turns that can hold a breakpoint (`TurnNotes`); ``None``: any."""

    def marks(self, payload: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
        """(path, mark) of each breakpoint of ``payload``, in the order the provider reads
        them: tools, system, messages."""
        found = self._head_marks(payload)
        messages = payload.get("messages") or []
        if self._settled is None:
            self._settled = []
            last = len(messages) - 1
            noted = self.turns
            for index in range(last) if noted is None else (i for i in noted if i < last):
                self._message_marks(self._settled, index, messages[index])
        found.extend(self._settled)
        if messages:
            self._message_marks(found, len(messages) - 1, messages[-1])
        return found

    def count(self, payload: Mapping[str, Any]) -> int:
        return len(self.marks(payload))

    def _head_marks(self, payload: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
        raise NotImplementedError

    def _message_marks(
        self, found: list[tuple[str, Mapping[str, Any]]], index: int, message: Any
    ) -> None:
        raise NotImplementedError


class AnthropicMarks(_Writer):
    """``cache_control`` on the last tool, the last system block, the newest turn's last
    block that can hold one (not thinking)."""

    MARK: ClassVar[dict[str, str]] = {"type": "ephemeral"}

    def _head_marks(self, payload: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
        """The marked tools and system blocks."""
        found: list[tuple[str, Mapping[str, Any]]] = []
        _visit(found, "tools", payload.get("tools"))
        _visit(found, "system", payload.get("system"))
        return found

    def _message_marks(
        self, found: list[tuple[str, Mapping[str, Any]]], index: int, message: Any
    ) -> None:
        """The marked blocks of one message (the blocks inside a tool result too)."""
        _visit(found, f"messages.{index}.content", message.get("content"))

    def add(self, payload: dict[str, Any], place: str) -> bool:
        """Mark ``place``; ``False`` when the request has none."""
        if place == "tools":
            tools = list(payload.get("tools") or [])
            if not tools:
                return False
            long = self._long_after(payload, ("system", "messages"))
            tools[-1] = self._marked(tools[-1], long)
            payload["tools"] = tools
            return True
        if place == "system":
            system = payload.get("system")
            if not system:
                return False
            blocks = [{"type": "text", "text": system}] if isinstance(system, str) else system
            long = self._long_after(payload, ("messages",))
            payload["system"] = [*blocks[:-1], self._marked(blocks[-1], long)]
            return True
        messages = list(payload.get("messages") or [])
        if not messages:
            return False
        last = dict(messages[-1])
        content = last.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        blocks = list(content or [])
        for index in range(len(blocks) - 1, -1, -1):
            block = blocks[index]
            if block.get("type") in _THINKING or (
                block.get("type") == "text" and not str(block.get("text", "")).strip()
            ):
                continue
            blocks[index] = self._marked(block)
            last["content"] = blocks
            messages[-1] = last
            payload["messages"] = messages
            return True
        return False

    def _long_after(self, payload: Mapping[str, Any], places: tuple[str, ...]) -> bool:
        """Whether a one-hour breakpoint is in ``places`` (what comes after the place marked)."""
        return any(
            where.startswith(places) and mark.get("ttl") == LONG
            for where, mark in self.marks(payload)
        )

    def _marked(self, block: Mapping[str, Any], long: bool = False) -> dict[str, Any]:
        if "cache_control" in block:
            return dict(block)
        mark = {**self.MARK, "ttl": LONG} if long else dict(self.MARK)
        return {**block, "cache_control": mark}


class BedrockMarks(_Writer):
    """A ``cachePoint`` block after the system blocks, after the tools, after the newest
    turn's blocks."""

    POINT: ClassVar[dict[str, dict[str, str]]] = {"cachePoint": {"type": "default"}}

    def _head_marks(self, payload: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
        """The cache points of ``toolConfig.tools`` and ``system``."""
        found: list[tuple[str, Mapping[str, Any]]] = []
        _points(found, "toolConfig.tools", (payload.get("toolConfig") or {}).get("tools"))
        _points(found, "system", payload.get("system"))
        return found

    def _message_marks(
        self, found: list[tuple[str, Mapping[str, Any]]], index: int, message: Any
    ) -> None:
        """The cache points of one message."""
        _points(found, f"messages.{index}.content", message.get("content"))

    def add(self, payload: dict[str, Any], place: str) -> bool:
        """Mark ``place``; ``False`` when the request has none."""
        if place == "tools":
            config = dict(payload.get("toolConfig") or {})
            tools = config.get("tools")
            if not tools:
                return False
            config["tools"] = self._ended(tools, self._long_after(payload, ("system", "messages")))
            payload["toolConfig"] = config
            return True
        if place == "system":
            if not payload.get("system"):
                return False
            payload["system"] = self._ended(
                payload["system"], self._long_after(payload, ("messages",))
            )
            return True
        messages = list(payload.get("messages") or [])
        if not messages or not messages[-1].get("content"):
            return False
        last = dict(messages[-1])
        last["content"] = self._ended(last["content"])
        messages[-1] = last
        payload["messages"] = messages
        return True

    def _long_after(self, payload: Mapping[str, Any], places: tuple[str, ...]) -> bool:
        """Whether a one-hour cache point is in ``places`` (what comes after the place marked)."""
        return any(
            where.startswith(places) and point.get("ttl") == LONG
            for where, point in self.marks(payload)
        )

    def _ended(self, blocks: Sequence[Any], long: bool = False) -> list[Any]:
        if blocks and isinstance(blocks[-1], Mapping) and "cachePoint" in blocks[-1]:
            return list(blocks)
        point = dict(self.POINT["cachePoint"])
        if long:
            point["ttl"] = LONG
        return [*blocks, {"cachePoint": point}]


def _visit(found: list[tuple[str, Mapping[str, Any]]], where: str, blocks: Any) -> None:
    """Add the ``cache_control`` of each Anthropic block of ``blocks`` at ``where`` (and of the
    blocks inside a tool result) to ``found``."""
    for index, block in enumerate(blocks if isinstance(blocks, list) else ()):
        if not isinstance(block, Mapping):
            continue
        mark = block.get("cache_control")
        if mark is not None:
            found.append((f"{where}.{index}", mark if isinstance(mark, Mapping) else {}))
        if block.get("type") == "tool_result":
            _visit(found, f"{where}.{index}.content", block.get("content"))


def _points(found: list[tuple[str, Mapping[str, Any]]], where: str, blocks: Any) -> None:
    """Add each Bedrock ``cachePoint`` of ``blocks`` at ``where`` to ``found``."""
    for number, block in enumerate(blocks or ()):
        if isinstance(block, Mapping) and (point := block.get("cachePoint", False)) is not False:
            found.append((f"{where}.{number}", point if isinstance(point, Mapping) else {}))
