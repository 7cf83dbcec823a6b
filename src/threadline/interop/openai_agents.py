"""An OpenAI Agents SDK ``Session`` over any threadline store: [`ThreadlineSession`][].

An Agents SDK app keeps its conversation in a ``Session``: ``Runner.run(agent, input,
session=...)`` reads the history with ``get_items`` before the first model call and saves the
turn's input and output items with ``add_items``. ``ThreadlineSession(store, session_id)`` is
that session over a threadline store (SQLite, JSONL, Redis, PostgreSQL, memory, or your own),
so the app gets crash-safe storage and integrity repair, and the history is threadline
[`Message`][threadline.Message] objects that the other codecs, `History` and the CLI read.

How items map to messages:

- ``add_items`` reads its items with the OpenAI Responses codec
  ([`threadline.codecs.openai_responses`][]), in one call: user, system and developer messages
  become ``user`` / ``system`` messages; consecutive assistant items (output messages,
  reasoning, function calls, hosted tool calls) become one ``assistant`` message and
  consecutive tool outputs one ``tool`` message. Items of one ``add_items`` call are grouped; a
  new call starts a new message.
- The codec does not carry everything an item holds (``status``, ``logprobs``, unknown fields,
  the key order), and the SDK compares the items it reads back with the ones it saved. So the
  first part read from an item keeps the difference between the item and what the codec
  writes for it in ``metadata["openai_agents.diff"]`` (a few fields, not the text), checked at
  ``add_items`` to give the item back; when no difference does (an output message without an
  ``id`` that the codec writes as one item per text), it keeps the item itself in
  ``metadata["openai_agents.item"]``. The other parts read from the same item are marked
  ``metadata["openai_agents.continued"]``. ``get_items`` returns the items exactly as they
  were added (equal, with their keys in the same order).
- An item the codec cannot read (a computer, shell or patch call or output, an image given by
  ``file_id``, an ``item_reference``) is not dropped: it is carried whole, as a provider tool
  call part (``provider="openai_agents"``, ``name`` its type, ``input`` the item) on an
  assistant message, or as a placeholder text part for a user or system message.
- ``get_items`` prepares the history with [`prepare_messages`][threadline.prepare_messages]
  (``integrity="auto"``): a call without its output that later messages follow (a crash) gets
  a synthetic failed output, written with the codec's ``encode`` (as are parts other threadline
  code wrote). The calls at the live frontier ([`pending_calls`][threadline.pending_calls]) are
  kept (``pending="keep"``): the ``Runner`` reads the session while an approved call runs (on
  resuming a ``RunState`` it compares the tail it reads with what it wrote; a synthetic output
  there breaks that), and before a model call it drops calls without an output itself.
- What repair cannot fix (an output for a call the history never made, a second output for a
  call, a call id used twice) would make every ``get_items`` raise, so ``add_items`` refuses a
  batch that brings it, storing nothing (the rule ``ThreadlineChatMessageHistory`` applies).

``limit`` counts items, not messages: ``get_items(limit=n)`` is the last ``n`` items of the
whole (prepared) history, as the SDK's own sessions return them; one message may be several
items. ``pop_item`` removes and returns the latest item that is stored (a synthetic output
repair adds is not stored, so it is the call before it), with the store's
``expected_version`` so that a concurrent write is never lost (it reloads and tries again).
"""

from __future__ import annotations

import asyncio
import dataclasses
import operator
import uuid
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal
from typing import cast

from pydantic_core import PydanticCustomError

from threadline._binding import is_async_store
from threadline._binding import load_versioned
from threadline._binding import takes_versions
from threadline._json import FrozenJsonMap
from threadline._json import check_json_value
from threadline.codecs import openai_responses
from threadline.errors import CodecError
from threadline.errors import ConflictError
from threadline.errors import ErrorDetail
from threadline.errors import ValidationError
from threadline.integrity import Pending
from threadline.integrity import prepare_messages
from threadline.interop._appends import could_poison
from threadline.interop._appends import pairing_ids
from threadline.interop._appends import pairing_index
from threadline.interop._appends import refuse_unrepairable
from threadline.interop._missing import missing
from threadline.limits import Limits
from threadline.messages import Message
from threadline.messages import Part
from threadline.messages import ProviderToolCallPart
from threadline.messages import TextPart
from threadline.stores.base import validate_conversation_id

try:
    from agents.memory.session_settings import SessionSettings
    from agents.memory.session_settings import resolve_session_limit
except ImportError as error:  # pragma: no cover - the extra is installed in the test run
    raise missing("OpenAI Agents SDK", "agents", "openai-agents", error) from error

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

__all__ = ["CONTINUED", "DIFF", "ITEM", "PROVIDER", "ThreadlineSession"]

ITEM = "openai_agents.item"
"""Part metadata: the Agents SDK item the part was read from, as it was added (kept whole only
when `DIFF` cannot give it back)."""
DIFF = "openai_agents.diff"
"""Part metadata: what turns the item the codec writes for the part back into the item it was
read from (a value for each JSON pointer to set, ``"-"`` the pointers to remove, ``"keys"``
the key order)."""
CONTINUED = "openai_agents.continued"
"""Part metadata: ``True`` on the parts after the first that were read from one item."""
PROVIDER = "openai_agents"
"""The ``provider`` of the provider tool call part that carries an item the codec cannot read."""

IntegrityMode = Literal["auto", "strict", "off"]

_ATTEMPTS = 100  # conflicting writes a pop_item or add_items outlasts before it gives up
_ADD = "ThreadlineSession.add_items"
_REQUIRED = ("load", "append", "replace", "delete")


class ThreadlineSession:
    """An Agents SDK ``Session`` (``agents.memory.Session``) over a threadline store.

    Args:
        store: any threadline store, blocking (run in a worker thread) or async (awaited).
        session_id: the conversation id in the store (see
            [`CONVERSATION_ID_PATTERN`][threadline.stores.base.CONVERSATION_ID_PATTERN]).
        session_settings: the SDK's settings; its ``limit`` is the default of ``get_items``.
        integrity: ``auto`` repairs the history ``get_items`` returns
            ([`prepare_messages`][threadline.prepare_messages]), ``strict`` raises
            [`IntegrityError`][threadline.IntegrityError] instead, ``off`` returns it as stored.
        limits: how much of each item ``add_items`` reads
            ([`Limits`][threadline.Limits]); ``None`` means the defaults.
        pending: the calls at the live frontier: ``keep`` (the ``Runner`` may still run them),
            ``answer`` (no run is live: answered as interrupted, as a model request needs)
            or ``refuse`` (``get_items`` raises while there are any); ``off`` checks none.

    Raises:
        threadline.ValidationError: ``session_id`` is not a valid conversation id.
        TypeError: ``store`` lacks a store method.
        ValueError: ``integrity`` or ``pending`` is not one of its choices.
    """

    session_id: str
    session_settings: SessionSettings | None

    def __init__(
        self,
        store: object,
        session_id: str,
        *,
        session_settings: SessionSettings | None = None,
        integrity: IntegrityMode = "auto",
        limits: Limits | None = None,
        pending: Pending = "keep",
    ) -> None:
        missing_methods = [name for name in _REQUIRED if not callable(getattr(store, name, None))]
        if missing_methods:
            raise TypeError(
                f"ThreadlineSession needs a threadline store (Store or AsyncStore); "
                f"{type(store).__name__} has no {', '.join(missing_methods)}"
            )
        if integrity not in ("auto", "strict", "off"):
            raise ValueError(
                f'integrity must be "auto" (repair), "strict" (raise) or "off", not {integrity!r}'
            )
        if pending not in ("answer", "keep", "refuse"):
            raise ValueError(f'pending must be "keep", "answer" or "refuse", not {pending!r}')
        self.session_id = validate_conversation_id(session_id)
        self.session_settings = session_settings
        self.store = store
        self.integrity: IntegrityMode = integrity
        self.limits = limits
        self.pending: Pending = pending
        self._async = is_async_store(store)
        self._versioned = takes_versions(store)
        self._checked: _Known | None = None

    def __repr__(self) -> str:
        return f"ThreadlineSession({self.store!r}, {self.session_id!r})"

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history as input items, oldest first; with ``limit``, the latest ``limit`` items.

        Raises:
            threadline.IntegrityError: the history breaks a rule ``integrity`` does not repair
                (a tool output whose call is not in the history, under ``auto``; a pending
                call, under ``pending="refuse"``).
        """
        limit = resolve_session_limit(limit, self.session_settings)
        messages: list[Message] = await self._call("load", self.session_id)
        items = items_of(messages, self.integrity, self.pending)
        if limit is not None:
            items = items[-limit:] if limit > 0 else []
        return cast("list[TResponseInputItem]", items)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Store ``items`` at the end of the history, all of them or none.

        A batch after which every ``get_items`` would raise is refused, nothing of it stored:
        an output for a call the history never made, a second output for one call, a call id
        used twice. A call whose output has not come yet is stored (it is in flight). The
        check and the write are one step: the append carries the version it checked, and a
        concurrent writer makes it check again.

        Raises:
            threadline.ValidationError: an item is not a JSON object (the message names
                ``items[i]``) or holds a value a message cannot.
            threadline.LimitExceededError: an item exceeds ``limits``.
            threadline.IntegrityError: the batch would poison the session (nothing stored;
                the issues name the call ids).
            threadline.ConflictError: other writers changed the conversation during each of
                100 attempts.
        """
        messages = messages_of(cast("Sequence[object]", items), self.limits)
        if not messages:
            return
        if not could_poison(messages):
            await self._call("append", self.session_id, messages)
            return
        for _ in range(_ATTEMPTS):
            known = await self._known()
            # a batch may join the last stored message (one turn added in two calls)
            joined = _joined([*known.tail, *messages])
            stored = [m for i in pairing_ids(messages) for m in known.pairing.get(i, ())]
            refuse_unrepairable([*stored, *joined], messages, _ADD)
            try:
                if known.version is None:
                    await self._call("append", self.session_id, messages)
                else:
                    await self._call(
                        "append", self.session_id, messages, expected_version=known.version
                    )
            except ConflictError:
                continue  # another writer moved first: check against what it wrote
            if known.version is not None:  # the write made the next version: known too
                # (the index grows in place: the old _Known is dropped with it)
                pairing = pairing_index(joined[:-1], known.pairing)
                self._checked = _Known(known.version + 1, pairing, joined[-1:])
            return
        raise ConflictError(
            f"add_items on session {self.session_id!r} lost to other writers {_ATTEMPTS} times",
            conversation_id=self.session_id,
        )

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the latest stored item and return it; ``None`` when the session is empty.

        Raises:
            threadline.ConflictError: other writers changed the conversation during each of
                100 attempts.
        """
        for _ in range(_ATTEMPTS):
            messages, version = await self._load_versioned()
            popped = pop_latest(messages)
            if popped is None:
                return None
            item, rest = popped
            try:
                if version is None:
                    await self._call("replace", self.session_id, rest)
                else:
                    await self._call("replace", self.session_id, rest, expected_version=version)
            except ConflictError:
                continue  # another writer moved first: pop from what it left
            return cast("TResponseInputItem", item)
        raise ConflictError(
            f"pop_item on session {self.session_id!r} lost to other writers {_ATTEMPTS} times",
            conversation_id=self.session_id,
        )

    async def clear_session(self) -> None:
        """Delete the conversation."""
        await self._call("delete", self.session_id)

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        method: Callable[..., Any] = getattr(self.store, name)
        if self._async:
            return await method(*args, **kwargs)
        return await asyncio.to_thread(method, *args, **kwargs)

    async def _known(self) -> _Known:
        """The stored conversation as ``add_items`` checks a batch against it: kept from the
        last check while the conversation is at the version that check left, else read."""
        checked = self._checked
        if checked is not None and await self._call("version", self.session_id) == checked.version:
            return checked
        stored, version = await self._load_versioned()
        joined = _joined(stored)
        return _Known(version, pairing_index(joined[:-1]), joined[-1:])

    async def _load_versioned(self) -> tuple[list[Message], int | None]:
        if not self._async:
            return await asyncio.to_thread(load_versioned, self.store, self.session_id)
        if not self._versioned:
            return await self._call("load", self.session_id), None
        for _ in range(_ATTEMPTS):
            before = await self._call("version", self.session_id)
            loaded: list[Message] = await self._call("load", self.session_id)
            if before == await self._call("version", self.session_id):
                return loaded, before
        raise ConflictError(
            f"could not load session {self.session_id!r} at one version: other writers "
            f"changed it during each of {_ATTEMPTS} loads",
            conversation_id=self.session_id,
        )


@dataclasses.dataclass(frozen=True, slots=True)
class _Known:
    """What ``add_items`` knows of the stored conversation at ``version`` (``None``: a store
    without versions): the calls and results of its joined messages but the last, by call id
    (`pairing_index`), and the last one whole, which the next batch may join."""

    version: int | None
    pairing: dict[str, list[Message]]
    tail: list[Message]


# ---------------------------------------------------------------------------------------------
# items -> messages

_Read = tuple[int, dict[str, Any], list[Part], bool]
"""An item's index, the item, the parts read from it, and whether it is carried whole (the
codec cannot read it)."""


def messages_of(items: Sequence[object], limits: Limits | None = None) -> list[Message]:
    """The messages ``add_items`` stores for ``items``: consecutive assistant items make one
    message, consecutive outputs one, and the first part read from each item keeps what the
    codec does not reproduce of it (module docstring).

    Raises:
        threadline.ValidationError: an item is not a JSON object, or holds a value a message
            cannot (the message names ``items[i]``).
    """
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
        raise ValidationError(f"add_items takes a list of input items, not {type(items).__name__}")
    plain = [_as_item(raw, index) for index, raw in enumerate(items)]
    runs = _read_batch(plain, limits)
    if runs is None:  # an item the codec cannot read or refuses: item by item, naming it
        runs = []
        for index, item in enumerate(plain):
            role, parts, carried = _read_item(item, index, limits)
            if runs and role in ("assistant", "tool") and runs[-1][0] == role:
                runs[-1][1].append((index, item, parts, carried))
            else:
                runs.append((role, [(index, item, parts, carried)]))
    return _tagged(runs)


def _as_item(raw: object, index: int) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    dump = getattr(raw, "model_dump", None)
    if callable(dump):  # an SDK model object instead of its dict
        dumped = dump(mode="json", exclude_unset=True)
        if isinstance(dumped, dict):
            return dumped
    raise ValidationError(
        f"items[{index}] is a {type(raw).__name__}; an input item is a JSON object "
        "(a dict, as RunResult.to_input_list() gives)"
    )


def _read_batch(
    items: list[dict[str, Any]], limits: Limits | None
) -> list[tuple[str | Message, list[_Read]]] | None:
    """``items`` read in one codec call (reading them one by one costs twice as much), the
    parts of each message shared out to the items they came from; ``None`` when the batch
    cannot be read at once or the parts do not add up (the caller reads item by item)."""
    try:
        decoded = openai_responses.decode(items, limits=limits)
    except (CodecError, ValidationError):
        return None
    runs: list[tuple[str | Message, list[_Read]]] = []
    at = 0
    for message in decoded:
        parts = message.parts
        read: list[_Read] = []
        taken = 0
        while at < len(items) and taken < len(parts):
            count = _part_count(items[at])
            if count == 0:
                return None
            read.append((at, items[at], list(parts[taken : taken + count]), False))
            taken += count
            at += 1
        if taken != len(parts):
            return None
        runs.append((message, read))
    return runs if at == len(items) else None


def _part_count(item: Mapping[str, Any]) -> int:
    """How many parts the codec reads from ``item`` (what it read is checked against it)."""
    content = item.get("content")
    if item.get("type", "message") == "message" and isinstance(content, list):
        return len(content)
    return 1


def _read_item(
    item: dict[str, Any], index: int, limits: Limits | None
) -> tuple[str, list[Part], bool]:
    """``(role, parts, carried)`` of one item."""
    try:
        decoded = openai_responses.decode([item], limits=limits)
    except CodecError:
        decoded = []
    try:
        if len(decoded) == 1:
            return decoded[0].role, list(decoded[0].parts), False
        role, parts = _carried(item)
        return role, parts, True
    except ValidationError as error:
        raise ValidationError(f"items[{index}]: {error}", error.errors) from error


def _carried(item: dict[str, Any]) -> tuple[str, list[Part]]:
    """An item the codec cannot read, carried whole (never dropped)."""
    item_type = item.get("type")
    kind = item_type if isinstance(item_type, str) and item_type else "message"
    role = item.get("role")
    if kind == "message" and role in ("user", "system", "developer"):
        text = TextPart(text=f"[{kind} item kept for the OpenAI Agents SDK]", metadata={ITEM: item})
        return ("user" if role == "user" else "system"), [text]
    identity = item.get("id") or item.get("call_id")
    part = ProviderToolCallPart(
        id=identity if isinstance(identity, str) and identity else f"item_{uuid.uuid4().hex}",
        name=kind,
        input=item,
        provider=PROVIDER,
        metadata={ITEM: item},
    )
    return "assistant", [part]


def _tagged(runs: Sequence[tuple[str | Message, list[_Read]]]) -> list[Message]:
    """The messages of the runs of items: each item's first part keeps the difference between
    the item and what the codec writes for it (``DIFF``) when that difference gives the item
    back, and the item itself (``ITEM``) otherwise; its other parts are marked ``CONTINUED``.
    The messages are written in one codec call; one by one when that call writes another
    number of items (`_kept_items` reads them back the same way)."""
    messages = [
        role
        if isinstance(role, Message)
        else Message(
            role=cast(Any, role), parts=tuple(part for _, _, own, _ in read for part in own)
        )
        for role, read in runs
    ]
    carrying = [any(carried for *_, carried in read) for _, read in runs]
    writable = [message for message, carries in zip(messages, carrying, strict=True) if not carries]
    written: list[Any] = openai_responses.encode(writable, integrity="off")["input"]
    counts = [len(read) for (_, read), carries in zip(runs, carrying, strict=True) if not carries]
    per_message: list[list[Any] | None] = []
    if len(written) == sum(counts):
        at = 0
        for count in counts:
            per_message.append(written[at : at + count])
            at += count
    else:
        for message, count in zip(writable, counts, strict=True):
            alone = openai_responses.encode([message], integrity="off")["input"]
            per_message.append(alone if len(alone) == count else None)
    bases = iter(per_message)
    heads: list[dict[str, Any]] = []  # what each first part keeps, checked in one call below
    for (_, read), carries in zip(runs, carrying, strict=True):
        base = None if carries else next(bases)
        for number, (_, item, _, carried) in enumerate(read):
            head: dict[str, Any] = {ITEM: item}
            if base is not None:
                difference = _difference(base[number], item)
                if difference is not None and _applied(base[number], difference) == item:
                    head = {DIFF: difference}
            heads.append({} if carried else head)
    checked = iter(_checked(heads, [index for _, read in runs for index, *_ in read]))
    out: list[Message] = []
    for message, (_, read) in zip(messages, runs, strict=True):
        tagged: list[Part] = []
        for _, _, own, _ in read:
            first, *rest = own
            added = next(checked)
            tagged.append(_with(first, added) if added else first)
            tagged.extend(_with(part, _CONTINUED) for part in rest)
        out.append(message.model_copy(update={"parts": tuple(tagged)}))
    return out


_CONTINUED = FrozenJsonMap({CONTINUED: True})


def _checked(heads: list[dict[str, Any]], indexes: list[int]) -> list[dict[str, Any]]:
    """``heads`` with the values they took from the items checked and copied (later changes
    to the caller's items cannot reach a message), in one call: a ``DIFF``'s pointers and key
    names are strings already (`_compare` keeps a mapping with other keys whole).

    Raises:
        threadline.ValidationError: a head holds a value that is not JSON (naming ``items[i]``).
    """
    values = [
        [value for key, value in head[DIFF].items() if key.startswith("/")]
        if DIFF in head
        else head
        for head in heads
    ]
    copies: list[Any] | None
    try:
        copies = check_json_value(values, "metadata")
    except PydanticCustomError:
        copies = None
    if copies is not None:
        out: list[dict[str, Any]] = []
        for head, copied in zip(heads, copies, strict=True):
            difference = head.get(DIFF)
            if difference is None:
                out.append(copied)
                continue
            fresh = iter(copied)
            out.append(
                {
                    DIFF: {
                        key: next(fresh) if key.startswith("/") else value
                        for key, value in difference.items()
                    }
                }
            )
        return out
    for head, index in zip(heads, indexes, strict=True):  # name the first item at fault
        try:
            check_json_value(head, "metadata")
        except PydanticCustomError as error:
            detail = ErrorDetail("metadata", error.message(), error.type)
            raise ValidationError(f"items[{index}]: invalid metadata: {detail}", [detail]) from None
    raise AssertionError("check_json_value refused the heads but none of them")  # pragma: no cover


def _with(part: Part, added: Mapping[str, Any]) -> Part:
    """``part`` with the checked ``added`` in its metadata (the part itself was validated when
    it was read, and validating it again costs as much as reading it)."""
    kind = type(part)
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(field.name for field in dataclasses.fields(kind))
    out = object.__new__(kind)  # a copy of the frozen part (copy.copy costs 7 times more)
    for name in names:
        object.__setattr__(out, name, getattr(part, name))
    object.__setattr__(out, "metadata", FrozenJsonMap({**part.metadata, **added}))
    return out


_FIELDS: dict[type, tuple[str, ...]] = {}


# ---------------------------------------------------------------------------------------------
# the difference between what the codec writes and an item


def _difference(written: dict[str, Any], item: dict[str, Any]) -> dict[str, Any] | None:
    """What turns ``written`` into ``item`` (`_applied`), flat (the store checks each list and
    mapping a part's metadata holds): a value for each JSON pointer (``"/status"``,
    ``"/content/0/logprobs"``) to set, under ``"-"`` the pointers to remove, and under
    ``"keys"`` the item's key order when it differs. The ``type`` of an output is always set:
    what the codec writes for one depends on the other messages. ``None`` when ``item`` has a
    key that is not a string (it is then kept whole, and refused as metadata)."""
    if not all(type(key) is str for key in item):
        return None
    out: dict[str, Any] = {}
    removed: list[str] = []
    _compare(written, item, "", out, removed)
    kind = item.get("type")
    if isinstance(kind, str) and kind.endswith("_output"):
        out["/type"] = kind
    if removed:
        out["-"] = removed
    order = [key for key in written if key in item]
    order.extend(key for key in item if key not in written)
    if order != list(item):
        out["keys"] = list(item)
    return out


def _compare(written: Any, item: Any, path: str, out: dict[str, Any], removed: list[str]) -> None:
    if isinstance(written, dict) and isinstance(item, dict) and all(type(k) is str for k in item):
        removed.extend(f"{path}/{_escaped(key)}" for key in written if key not in item)
        for key, value in item.items():
            if key not in written:
                out[f"{path}/{_escaped(key)}"] = value
            elif written[key] != value:
                _compare(written[key], value, f"{path}/{_escaped(key)}", out, removed)
    elif isinstance(written, list) and isinstance(item, list) and len(written) == len(item):
        for index, (was, value) in enumerate(zip(written, item, strict=True)):
            if was != value:
                _compare(was, value, f"{path}/{index}", out, removed)
    else:
        out[path] = item


def _escaped(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1") if "~" in key or "/" in key else key


def _applied(written: dict[str, Any], difference: Mapping[str, Any]) -> dict[str, Any]:
    """``written`` (the caller's, changed in place) made the item again by ``difference``."""
    for pointer, value in difference.items():
        if pointer.startswith("/"):
            parent, step = _parent(written, pointer)
            parent[step] = _copied(value)
    for pointer in difference.get("-", ()):
        parent, step = _parent(written, pointer)
        del parent[step]
    keys = difference.get("keys")
    if keys is not None:
        return {key: written[key] for key in keys}
    return written


def _parent(value: Any, pointer: str) -> tuple[Any, Any]:
    """The container a JSON pointer's last step is in, and that step."""
    steps: list[Any] = pointer.split("/")[1:]
    for number, step in enumerate(steps):
        if "~" in step:
            step = step.replace("~1", "/").replace("~0", "~")
        steps[number] = int(step) if isinstance(value, list) else step
        if number < len(steps) - 1:
            value = value[steps[number]]
    return value, steps[-1]


# ---------------------------------------------------------------------------------------------
# messages -> items


def items_of(
    messages: Sequence[Message], integrity: IntegrityMode = "auto", pending: Pending = "keep"
) -> list[Any]:
    """The input items ``get_items`` returns for stored ``messages`` (module docstring).

    Raises:
        threadline.IntegrityError: the history breaks a rule ``integrity`` does not repair.
    """
    joined = _joined(messages)
    prepared = joined
    if integrity != "off":
        prepared = prepare_messages(joined, integrity, pending=pending)
    kept = _kept_items(messages)
    if len(prepared) == len(joined) and all(map(operator.is_, prepared, joined)):
        # nothing repaired: when every part came from an item, the items are the answer
        fast = [kept[id(part)] for message in joined for part in message.parts if id(part) in kept]
        if len(fast) + _continued(joined) == sum(len(message.parts) for message in joined):
            return fast
    stored = {id(part) for message in messages for part in message.parts}
    out: list[Any] = []
    for message in prepared:
        others: list[Part] = []
        head_kept = False
        for part in message.parts:
            unchanged = id(part) in stored
            item = kept.get(id(part)) if unchanged else None
            if item is not None:
                out.extend(_encoded(message, others))
                others = []
                out.append(item)
                head_kept = True
            elif unchanged and head_kept and part.metadata.get(CONTINUED) is True:
                continue  # its item went out with the first part read from it
            else:
                others.append(part)
                head_kept = False
        out.extend(_encoded(message, others))
    return out


def _continued(messages: Sequence[Message]) -> int:
    return sum(
        1 for message in messages for part in message.parts if part.metadata.get(CONTINUED) is True
    )


def _kept_items(messages: Sequence[Message]) -> dict[int, dict[str, Any]]:
    """The item each first part read from an item stands for, by ``id`` of the part: its
    ``ITEM``, or what the codec writes for its message made the item again by its ``DIFF``.
    The messages holding a ``DIFF`` are written in one codec call (each message was checked
    to write one item per item read from it); one by one when that call disagrees."""
    kept: dict[int, dict[str, Any]] = {}
    differing: list[Message] = []
    heads: list[list[Part]] = []
    for message in messages:
        own = [part for part in message.parts if ITEM in part.metadata or DIFF in part.metadata]
        for part in own:
            item = part.metadata.get(ITEM)
            if isinstance(item, Mapping):
                kept[id(part)] = _plain(item)
        if any(DIFF in part.metadata for part in own):
            differing.append(message)
            heads.append(own)
    if not differing:
        return kept
    written: list[Any] = openai_responses.encode(differing, integrity="off")["input"]
    if len(written) != sum(map(len, heads)):
        written = []
        for message, own in zip(differing, heads, strict=True):
            alone: list[Any] = openai_responses.encode([message], integrity="off")["input"]
            written.extend(alone if len(alone) == len(own) else [None] * len(own))
    for part, base in zip((part for own in heads for part in own), written, strict=True):
        difference = part.metadata.get(DIFF)
        if isinstance(difference, Mapping) and isinstance(base, dict):
            kept[id(part)] = _applied(base, difference)
    return kept


def _joined(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with each assistant (or tool) message that ``add_items`` stored right
    after another one it stored joined to it: one turn's items added in two calls are one
    turn, as the codec reads them (integrity would otherwise move outputs between calls)."""
    runs: list[tuple[Message, list[Part]]] = []
    for message in messages:
        if runs and message.role in ("assistant", "tool") and runs[-1][0].role == message.role:
            before = runs[-1][1]
            if _from_item(before[-1]) and _from_item(message.parts[0]):
                before.extend(message.parts)
                continue
        runs.append((message, list(message.parts)))
    return [
        message
        if len(parts) == len(message.parts)
        else message.model_copy(update={"parts": tuple(parts)})
        for message, parts in runs
    ]


def _from_item(part: Part) -> bool:
    metadata = part.metadata
    return ITEM in metadata or DIFF in metadata or CONTINUED in metadata


def _encoded(message: Message, parts: list[Part]) -> list[Any]:
    """The items the codec writes for ``parts`` of ``message``."""
    if not parts:
        return []
    alone = message.model_copy(update={"parts": tuple(parts)})
    items: list[Any] = openai_responses.encode([alone], integrity="off")["input"]
    return items


def _plain(item: Mapping[str, Any]) -> dict[str, Any]:
    """A copy the caller may change (stored metadata is read-only and shared)."""
    return {key: _copied(value) for key, value in item.items()}


def _copied(value: Any) -> Any:
    """A deep copy of JSON (``copy.deepcopy`` costs several times more: it keeps a memo)."""
    if isinstance(value, Mapping):
        return {key: _copied(entry) for key, entry in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copied(entry) for entry in value]
    return value


def pop_latest(messages: Sequence[Message]) -> tuple[dict[str, Any], list[Message]] | None:
    """``(latest item, the messages without it)``, or ``None`` when nothing is left.

    The latest item is the one the last stored part was read from (its first part and the
    parts continuing it go together); a last part with no item of its own is written with the
    codec, and one the codec writes as nothing (reasoning it cannot send) goes with the item
    before it. The items left in a message that loses one keep themselves whole (``ITEM``):
    what the codec writes for the shorter message may differ.
    """
    rest = list(messages)
    kept = _kept_items(rest)
    while rest:
        last = rest.pop()
        parts = list(last.parts)
        while parts:
            end = len(parts)
            start = end - 1
            if parts[start].metadata.get(CONTINUED) is True:
                while start > 0 and id(parts[start]) not in kept:
                    start -= 1
            item: dict[str, Any] | None = kept.get(id(parts[start]))
            if item is None:
                start = end - 1
                written = _encoded(last, [parts[start]])
                item = written[-1] if written else None
            del parts[start:end]
            if item is not None:
                if parts:
                    whole = [_whole(part, kept) for part in parts]
                    rest.append(last.model_copy(update={"parts": tuple(whole)}))
                return item, rest
    return None


def _whole(part: Part, kept: Mapping[int, dict[str, Any]]) -> Part:
    """``part`` holding its item whole instead of a difference."""
    item = kept.get(id(part))
    if item is None or DIFF not in part.metadata:
        return part
    metadata = {key: value for key, value in part.metadata.items() if key != DIFF}
    bare: Part = dataclasses.replace(cast(Any, part), metadata=metadata)
    return bare.with_metadata({ITEM: item})
