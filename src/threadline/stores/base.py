"""The store protocols, conversation-id validation, and the helpers every store shares.

A store persists conversations: each is an ordered list of [`Message`][] under a
conversation id. These operations make a store, the same for [`Store`][] (blocking) and
[`AsyncStore`][] (coroutines):

- ``load(cid)`` — the conversation's messages, oldest first (``[]`` when it does not exist);
- ``append(cid, messages)`` — add a batch at the end, all of it or none of it (a message whose
  id the conversation already holds is a replay: skipped when identical, refused otherwise);
- ``replace(cid, messages)`` — swap the whole conversation at once (``[]`` deletes it);
- ``delete(cid)`` — remove it (nothing happens when it does not exist);
- ``list_conversations(limit=None, after=None)`` — the ids that hold at least one message, in
  code point order: all of them, or a page of at most ``limit`` after the id ``after``;
- ``conversation_info(cid)`` — a [`ConversationInfo`][threadline.stores.ConversationInfo]
  (version, message count, parent, times where the store keeps them) without loading the
  messages, ``None`` for a conversation that holds nothing and is no branch;
- ``version(cid)`` — the conversation's version: 0 for one never written, one more after each
  write (an ``append`` that stored something, a ``replace``, a ``delete``), never smaller;
- ``load_after(cid, version)`` — what was appended after ``version``, with the version now, in
  one consistent read: an [`Appended`][threadline.Appended] (``replaced`` when the caller must
  start over from its ``messages``, the whole conversation);
- ``fork(cid, new_id, at=None)`` — copy the first ``at`` messages (all when ``None``) into the
  new conversation ``new_id`` and record where it came from; ``parent(new_id)`` says
  ``(cid, at)`` (``None`` for a conversation that is no branch). Forking onto an id in use
  raises [`ValidationError`][] with nothing written.

``append`` and ``replace`` take ``expected_version=``: the write happens only when the
conversation is still at that version, atomically with the check, and otherwise raises
[`ConflictError`][] with nothing written. That is how several workers share one
conversation without losing each other's messages: read ``version`` with ``load``, write with
``expected_version``, and on a conflict reload and try again.

Message ids are unique within a conversation, and that makes every write idempotent: a write
whose reply was lost (a cancelled task, a connection dropped after the commit) can be sent again
and stores nothing twice (see [`replayed`][]).

Every store refuses a conversation id that does not match [`CONVERSATION_ID_PATTERN`][], so no
id can climb out of a directory (``..``, ``/``) or a key prefix, and ids stay printable.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal
from typing import Protocol
from typing import TypeVar
from typing import runtime_checkable

from threadline._sequences import read_messages
from threadline.errors import ConflictError
from threadline.errors import ErrorDetail
from threadline.errors import StoreError
from threadline.errors import ValidationError
from threadline.messages import Message

if TYPE_CHECKING:
    from threadline.stores._appended import Appended
    from threadline.stores._listing import ConversationInfo

__all__ = [
    "CONVERSATION_ID_PATTERN",
    "AsyncStore",
    "Store",
    "as_message_list",
    "check_expected_version",
    "check_list_page",
    "check_load_after",
    "check_version_argument",
    "check_write",
    "conflict",
    "replayed",
    "reused_id",
    "validate_conversation_id",
    "wrap_driver_errors",
]

CONVERSATION_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}"
"""What a conversation id may be: 1 to 200 characters of ASCII letters, digits, ``.``, ``_``,
``:`` and ``-``, starting with a letter or digit, and never containing ``..``.

So an id is a safe file name (no ``/``, no leading dot, no ``..``), a safe key suffix, and
printable. Map anything else (emails, UUIDs with braces, user input) to an id yourself, for
example with a hash.
"""

_K = TypeVar("_K")

_CONVERSATION_ID = re.compile(CONVERSATION_ID_PATTERN)
_RULE = (
    "1 to 200 characters of ASCII letters, digits, '.', '_', ':' and '-', starting with a "
    "letter or digit, with no '..'"
)


@runtime_checkable
class Store(Protocol):
    """A blocking store of conversations. Every method is safe to call from several threads.

    Guarantees a store must give (``threadline.testing.check_store`` checks them):

    - ``load`` returns messages equal to the ones written, in order (``replay`` is runtime-only
      and comes back ``False``); the list is the caller's to keep.
    - ``append`` of a batch is atomic: a reader sees all of the batch or none of it, and
      concurrent writers never interleave inside a batch or lose a message.
    - ``replace`` is atomic: a reader sees the old or the new history, never a mix.
    - Message ids are unique within a conversation, so a write can be retried: a message
      whose id the conversation already holds (or that came earlier in the same batch) is
      skipped when it is identical (the same JSON), and refused with
      [`threadline.ValidationError`][] when it differs, in which case nothing of the batch
      is written. The check is atomic with the write, so a retry racing the write it repeats
      still stores each message once, at the position of the first write that held it.
    - ``version`` starts at 0, and each write that changes the conversation (an ``append``
      that stored at least one message, every ``replace`` and ``delete``) adds exactly 1, in
      the same atomic step. It never goes back, even through a ``delete``. A write given
      ``expected_version`` checks it in that step: a different version raises
      [`threadline.ConflictError`][] and writes nothing (the check comes before the replay
      rule, so a replay with a stale version conflicts too).
    - A bad conversation id raises [`threadline.ValidationError`][] (a ``ValueError``);
      a failing driver raises [`threadline.StoreError`][] with the driver's error as
      ``__cause__``.

    Note:
        ``isinstance(x, Store)`` only checks that the ten methods exist; it cannot tell a
        blocking store from an [`AsyncStore`][].
    """

    def load(self, conversation_id: str) -> list[Message]:
        """The conversation's messages, oldest first; ``[]`` when it holds none."""
        ...

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Add ``messages`` at the end of the conversation, atomically (all or none).

        Messages whose id the conversation already holds are replays: skipped when identical,
        refused ([`threadline.ValidationError`][], nothing written) when different. With
        ``expected_version``, a conversation at another version raises
        [`threadline.ConflictError`][] (nothing written).
        """
        ...

    def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Make ``messages`` the whole conversation, atomically; ``[]`` deletes it.

        An id repeated inside ``messages`` follows the rule of [`append`][], and
        ``expected_version`` too.
        """
        ...

    def version(self, conversation_id: str) -> int:
        """The conversation's version: 0 when never written, one more after each write."""
        ...

    def load_after(self, conversation_id: str, version: int) -> Appended:
        """What was appended to the conversation after ``version``, and its version now, read
        consistently (the version is the version of what was read).

        ``replaced`` is true, and ``messages`` all of the conversation, when it was replaced or
        deleted after ``version``, ``version`` is newer than the store's, or the store cannot
        tell; at ``version`` 0 (which holds nothing) everything is appended.

        Raises:
            threadline.ValidationError: the id is invalid, or ``version`` is not an ``int``
                of at least 0.
        """
        ...

    def delete(self, conversation_id: str) -> None:
        """Remove the conversation, and step its version (even when it does not exist)."""
        ...

    def list_conversations(self, limit: int | None = None, after: str | None = None) -> list[str]:
        """The ids of the conversations that hold at least one message, in code point order:
        all of them, or with ``limit``, at most that many; with ``after``, those after it (the
        last id of the page before, stored or not).

        Raises:
            threadline.ValidationError: ``limit`` is not ``None`` or an ``int`` >= 1, or
                ``after`` is not ``None`` or a conversation id.
        """
        ...

    def conversation_info(self, conversation_id: str) -> ConversationInfo | None:
        """The conversation's version, message count, parent and times (where kept), read in
        one consistent step; ``None`` when it holds no message and is no branch.

        Raises:
            threadline.ValidationError: the id is invalid.
        """
        ...

    def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        """Copy the first ``at`` messages (all when ``None``) into the new conversation
        ``new_id``, atomically, and record its parent (see [`parent`][]).

        The branch is a copy: later writes to either conversation leave the other as it is.
        Its version steps by 1, as for any write; ``delete`` (or ``replace`` with ``[]``) of
        the branch drops its parent record.

        Raises:
            threadline.ValidationError: an id is invalid, the parent holds no message, ``at``
                is not ``None`` or an int from 0 to its length, or ``new_id`` is in use (it
                holds messages or is a branch); nothing was written.
        """
        ...

    def parent(self, conversation_id: str) -> tuple[str, int] | None:
        """``(parent id, at)`` of a conversation made by [`fork`][]; ``None`` otherwise."""
        ...


@runtime_checkable
class AsyncStore(Protocol):
    """The async twin of [`Store`][]: the same methods and guarantees, as coroutines.

    ``threadline.testing.check_async_store`` checks an implementation.
    """

    async def load(self, conversation_id: str) -> list[Message]:
        """The conversation's messages, oldest first; ``[]`` when it holds none."""
        ...

    async def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Add ``messages`` at the end of the conversation, atomically (all or none).

        Replays are skipped, reused ids refused and ``expected_version`` checked, as for
        [`Store.append`][].
        """
        ...

    async def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Make ``messages`` the whole conversation, atomically; ``[]`` deletes it."""
        ...

    async def version(self, conversation_id: str) -> int:
        """The conversation's version, as for [`Store.version`][]."""
        ...

    async def load_after(self, conversation_id: str, version: int) -> Appended:
        """What was appended after ``version``, as for [`Store.load_after`][]."""
        ...

    async def delete(self, conversation_id: str) -> None:
        """Remove the conversation, and step its version (even when it does not exist)."""
        ...

    async def list_conversations(
        self, limit: int | None = None, after: str | None = None
    ) -> list[str]:
        """The ids in code point order, a page at a time, as for [`Store.list_conversations`][]."""
        ...

    async def conversation_info(self, conversation_id: str) -> ConversationInfo | None:
        """What [`Store.conversation_info`][] says, or ``None``."""
        ...

    async def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        """Copy the first ``at`` messages into ``new_id``, as for [`Store.fork`][]."""
        ...

    async def parent(self, conversation_id: str) -> tuple[str, int] | None:
        """``(parent id, at)`` of a branch, as for [`Store.parent`][]."""
        ...


def validate_conversation_id(conversation_id: object) -> str:
    """Return ``conversation_id`` if it is a valid id (see [`CONVERSATION_ID_PATTERN`][]).

    Stores call this first in every method, so an id can never name a path outside the store's
    directory or a key outside its prefix.

    Raises:
        threadline.ValidationError: the id is not a ``str`` or breaks the rule; the message
            names the id and the rule.
    """
    if not isinstance(conversation_id, str):
        detail = ErrorDetail(
            "conversation_id",
            f"must be a str, not {type(conversation_id).__name__}",
            "conversation_id",
        )
        raise ValidationError(f"invalid conversation id {conversation_id!r}: {detail}", [detail])
    if _CONVERSATION_ID.fullmatch(conversation_id) is None or ".." in conversation_id:
        shown = conversation_id if len(conversation_id) <= 60 else conversation_id[:57] + "..."
        detail = ErrorDetail(
            "conversation_id",
            f"{shown!r} ({len(conversation_id)} characters) is not a conversation id: use "
            f"{_RULE}. Map other ids (emails, user input) to one, for example with a hash",
            "conversation_id",
        )
        raise ValidationError(f"invalid conversation id: {detail.message}", [detail])
    return conversation_id


@contextmanager
def wrap_driver_errors(action: str, *driver_errors: type[BaseException]) -> Iterator[None]:
    """Re-raise the driver's errors as [`StoreError`][], keeping the original as ``__cause__``.

    Args:
        action: what was being done, for the message (``"SQLiteStore('a.db') could not append
            to conversation 'c1'"``).
        driver_errors: the exception types the driver raises (``sqlite3.Error``, ``OSError``).

    Raises:
        threadline.StoreError: the block raised one of ``driver_errors``.
    """
    try:
        yield
    except driver_errors as error:
        raise StoreError(f"{action}: {type(error).__name__}: {error}") from error


def as_message_list(messages: object, where: str) -> list[Message]:
    """``messages`` as a new list, checking that each item is a [`Message`][].

    Args:
        messages: what the caller passed as the batch.
        where: the method, for the message (``"MyStore.append"``).

    Raises:
        threadline.ValidationError: ``messages`` is not a batch of messages, or an item is
            not a ``Message`` (mappings are validated by ``History``, not by stores); every
            problem is listed, with paths such as ``messages[1]``, as everywhere else.
    """
    return read_messages(messages, where, mappings=False)


def replayed(
    conversation_id: str,
    ids: Sequence[str],
    keys: Sequence[_K],
    stored: Mapping[str, _K],
    where: str,
) -> list[bool]:
    """Which messages of a batch are replays to skip: their id is already held, identically.

    The rule every store applies, atomically with its write: a message whose id is in
    ``stored`` (the conversation's messages) or earlier in the batch is a replay when its key
    (its JSON, or a digest of it) is the same, and is skipped; with a different key the batch
    is refused. So a batch sent again after a lost reply stores nothing twice, and a batch
    that repeats what was stored and adds more stores only the rest.

    Args:
        conversation_id: the conversation, for the message.
        ids: the batch's message ids, in order.
        keys: what identifies each message's content (``keys[i]`` for ``ids[i]``).
        stored: key of each already-stored message the batch names, by id (others may be
            left out).
        where: the method, for the message (``"SQLiteStore.append"``).

    Returns:
        ``True`` at the positions to skip.

    Raises:
        threadline.ValidationError: an id is held by a different message; nothing may be
            written. The message names the position and the id.
    """
    seen: dict[str, _K] = {}
    skip: list[bool] = []
    for index, (message_id, key) in enumerate(zip(ids, keys, strict=True)):
        held = seen.get(message_id, stored.get(message_id, _ABSENT))
        if held is _ABSENT:
            seen[message_id] = key
            skip.append(False)
            continue
        if held != key:
            raise reused_id(conversation_id, index, message_id, where)
        skip.append(True)
    return skip


def reused_id(conversation_id: str, index: int, message_id: str, where: str) -> ValidationError:
    """The error for ``messages[index]`` reusing the id of a different message."""
    detail = ErrorDetail(
        f"messages[{index}].id",
        f"{message_id!r} already names a different message in conversation "
        f"{conversation_id!r}; {where} keeps message ids unique within a conversation (an "
        "identical message is skipped as a replay). Give the new message its own id; nothing "
        "was written",
        "duplicate_id",
    )
    return ValidationError(f"invalid messages: {detail}", [detail])


def conflict(where: str, conversation_id: str, expected: int, actual: int) -> ConflictError:
    """The [`ConflictError`][] of a write to ``conversation_id`` that expected ``expected``."""
    return ConflictError(
        f"{where}: conversation {conversation_id!r} is at version {actual}, not the expected "
        f"version {expected}: another writer changed it first, and nothing was written. Reload "
        "it (load() and version()) and try again, or bind the History with "
        'on_conflict="reload" to take the other writer\'s messages first',
        conversation_id=conversation_id,
        expected=expected,
        actual=actual,
    )


_VERSION_ARGUMENTS = {
    "expected_version": "None or an int >= 0 (the version() the caller last saw)",
    "after_version": "None (from now) or an int >= 0 (a version() the caller has seen)",
}


def check_version_argument(
    value: object, name: Literal["expected_version", "after_version"], where: str
) -> int | None:
    """``value``, the argument ``name`` of ``where``, when it is ``None`` or an ``int`` of at
    least 0: what a write's ``expected_version`` and a watch's ``after_version`` take.

    Raises:
        threadline.ValidationError: it is something else (a ``bool`` included).
    """
    if value is None or (type(value) is int and value >= 0):
        return value
    detail = ErrorDetail(name, f"{where} takes {_VERSION_ARGUMENTS[name]}, not {value!r}", "type")
    raise ValidationError(f"invalid {name}: {detail.message}", [detail])


def check_expected_version(expected_version: object, where: str) -> int | None:
    """``expected_version`` checked by `check_version_argument`."""
    return check_version_argument(expected_version, "expected_version", where)


def check_load_after(conversation_id: object, version: object, where: str) -> int:
    """``version``, after checking both arguments of a ``load_after`` (``where``, as
    ``"MyStore.load_after"``).

    Raises:
        threadline.ValidationError: the id is invalid, or ``version`` is not an ``int`` of
            at least 0 (a ``bool`` included); the message names the argument.
    """
    validate_conversation_id(conversation_id)
    if type(version) is int and version >= 0:
        return version
    detail = ErrorDetail(
        "version",
        f"{where} takes the version the caller holds the conversation at: an int >= 0 "
        f"(what version() or an earlier load_after() returned), not {version!r}",
        "type",
    )
    raise ValidationError(f"invalid version: {detail.message}", [detail])


def check_list_page(limit: object, after: object, where: str) -> tuple[int | None, str | None]:
    """``(limit, after)``, the arguments of a ``list_conversations`` (``where``, as
    ``"MyStore.list_conversations"``), after checking them.

    Args:
        limit: ``None`` (every id) or the most ids to return, an ``int`` of at least 1.
        after: ``None`` (from the first id) or the last id of the page before: the page holds
            the ids after it in code point order. It must be a valid conversation id, but need
            not name a stored conversation.

    Raises:
        threadline.ValidationError: ``limit`` is not ``None`` or an ``int`` >= 1 (a ``bool``
            included), or ``after`` is not ``None`` or a valid conversation id; the message
            names the argument.
    """
    if limit is not None and not (type(limit) is int and limit >= 1):
        detail = ErrorDetail(
            "limit",
            f"{where} takes None (every id) or the most ids to return, an int >= 1, not {limit!r}",
            "type",
        )
        raise ValidationError(f"invalid limit: {detail.message}", [detail])
    if after is not None:
        try:
            validate_conversation_id(after)
        except ValidationError:
            shown = after if not isinstance(after, str) or len(after) <= 60 else after[:57] + "..."
            detail = ErrorDetail(
                "after",
                f"{where} takes None (from the first id) or the last id of the page before, "
                f"a conversation id, not {shown!r}",
                "type",
            )
            raise ValidationError(f"invalid after: {detail.message}", [detail]) from None
    return limit, after if after is None else str(after)


def check_write(
    conversation_id: str, messages: object, expected_version: object, where: str
) -> tuple[list[Message], int | None]:
    """The arguments of an ``append`` or ``replace`` (``where``, as ``"MyStore.append"``),
    checked as every store checks them before it writes: the id
    ([`validate_conversation_id`][]), then ``expected_version`` ([`check_expected_version`][]),
    then the batch, returned as a new list ([`as_message_list`][]).

    Raises:
        threadline.ValidationError: the first argument that is invalid; nothing was written.
    """
    validate_conversation_id(conversation_id)
    expected = check_expected_version(expected_version, where)
    return as_message_list(messages, where), expected


_ABSENT: Any = object()
