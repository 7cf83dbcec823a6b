"""`History.fork` / `afork`, `History.copy` and JSON: new histories with a history's configuration.

A mixin of [`History`][threadline.History] (``history.py`` holds the contract and is kept under
the module size limit). ``fork``: the store's ``fork`` copies the first ``at`` messages of the
bound conversation into a new one and records its parent; the branch comes back as a new
History with the same configuration (window, token counter, error handlers, plugins; not the
listeners), bound to the new conversation in the same way. ``copy`` (and ``copy.copy``,
pickling) makes the same kind of history in memory, with this one's messages and version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar

from threadline._binding import Binding
from threadline.serialization import dump_json
from threadline.serialization import load_json

if TYPE_CHECKING:
    from typing_extensions import Self

    from threadline._log import Snapshot
    from threadline.messages import Message

__all__ = ["Branching", "rebuild_history"]


class Branching:
    """``fork``, ``afork`` and ``copy``, for a class with History's internals."""

    __slots__ = ()

    _binding: Binding | None

    def _config(self) -> dict[str, Any]:
        raise NotImplementedError

    def snapshot(self) -> Snapshot:
        raise NotImplementedError

    def copy(self) -> Self:
        """An independent history with the same messages, version and configuration.

        The window, token counter, error handlers and plugins come along (each plugin's
        ``on_registered`` runs for the copy); listeners do not (they subscribed to this
        history), nor does a store binding.
        """
        snapshot = self.snapshot()
        return rebuild_history(type(self), list(snapshot), snapshot.version, self._config())

    def __copy__(self) -> Self:
        return self.copy()

    def __reduce__(self) -> tuple[Any, ...]:
        # Messages, version and configuration; the lock, listeners, queue and binding are not.
        # (Pickles from before this module name threadline.history._rebuild_history: kept.)
        snapshot = self.snapshot()
        return (rebuild_history, (type(self), list(snapshot), snapshot.version, self._config()))

    def to_json(self, *, indent: int | None = None) -> bytes:
        """The messages in threadline's versioned JSON envelope (see [`dump_json`][]).

        Only messages are written: configuration and listeners are the application's.

        Args:
            indent: pretty-print with this many spaces (compact when ``None``).
        """
        return dump_json(self.snapshot(), indent=indent)

    @classmethod
    def from_json(cls, data: bytes | bytearray | str) -> Self:
        """A history holding the messages of [`to_json`][] output (or any ``load_json`` input);
        for a window or other options, use ``History(load_json(data), max_messages=...)``.

        Raises:
            threadline.ValidationError: ``data`` is not valid threadline JSON.
            threadline.UnsupportedVersionError: ``data`` was written by a newer threadline.
        """
        return cls(load_json(data))  # type: ignore[call-arg]

    def fork(self, new_id: str, at: int | None = None) -> Self:
        """Branch this history for "edit and regenerate": the store forks its conversation into
        ``new_id`` (the first ``at`` messages of the stored conversation, all when ``None``;
        ``parent(new_id)`` records where it came from), and the branch comes back as a new
        History bound to ``new_id`` with [`bind`][threadline.history.History.bind] (the same
        ``on_conflict``) and this history's configuration (not its listeners).

        ``at`` counts the stored conversation, which a window does not trim. Later writes to
        either history leave the other as it is.

        Args:
            new_id: the branch's conversation id: not in use in the store.
            at: how many messages of the conversation the branch starts with.

        Raises:
            RuntimeError: the history is not bound with ``bind`` (an ``abind``-ed one forks
                with [`afork`][threadline.history.History.afork]).
            TypeError: the store has no ``fork``.
            threadline.ValidationError: the store refused the fork: ``new_id`` is in use,
                ``at`` is past the end, or the conversation holds no message (nothing written).
            threadline.StoreError: the store could not fork or load the branch.
        """
        binding = _forking(self._binding, asynchronous=False)
        binding.store.fork(binding.conversation_id, new_id, at)
        branch = self._branch()
        branch.bind(binding.store, new_id, on_conflict=binding.on_conflict)  # type: ignore[attr-defined]
        return branch

    async def afork(self, new_id: str, at: int | None = None) -> Self:
        """The async twin of [`fork`][threadline.history.History.fork], for a history bound with
        [`abind`][threadline.history.History.abind]: flushes the queued writes first (so the fork
        sees them), forks in the async store, and returns a new History ``abind``-ed to
        ``new_id``.

        Raises:
            RuntimeError: the history is not bound with ``abind``.
            TypeError: the store has no ``fork``.
            threadline.ValidationError: as for [`fork`][threadline.history.History.fork].
            threadline.StoreError: a queued write, the fork or the load failed.
        """
        await self.flush()  # type: ignore[attr-defined]
        binding = _forking(self._binding, asynchronous=True)
        await binding.store.fork(binding.conversation_id, new_id, at)
        branch = self._branch()
        await branch.abind(binding.store, new_id)  # type: ignore[attr-defined]
        return branch

    def _branch(self) -> Self:
        """A new, empty, unbound history with this one's configuration."""
        return rebuild_history(type(self), [], 0, self._config())


_H = TypeVar("_H", bound=Branching)


def rebuild_history(
    cls: type[_H], messages: list[Message], version: int, config: dict[str, Any]
) -> _H:
    """A new, unbound ``cls`` holding ``messages`` at ``version``, configured by ``config``
    (``History._config()``: its plugins are registered anew)."""
    history = cls.__new__(cls)
    plugins = config.pop("plugins", ())
    history._configure(**config)  # type: ignore[attr-defined]
    history._start(messages, version, plugins)  # type: ignore[attr-defined]
    return history


def _forking(binding: Binding | None, *, asynchronous: bool) -> Binding:
    """The binding of a history that can fork (bound the right way, to a store with fork).

    Raises:
        RuntimeError: unbound, or bound the other way.
        TypeError: the store has no ``fork``.
    """
    call, other = ("afork", "fork") if asynchronous else ("fork", "afork")
    if binding is None or binding.asynchronous != asynchronous:
        how = "abind" if asynchronous else "bind"
        state = (
            "not bound"
            if binding is None
            else f"bound with {'abind' if not asynchronous else 'bind'}"
        )
        raise RuntimeError(
            f"history.{call}() branches a history bound with {how}(), and this one is {state}"
            + ("" if binding is None else f": use history.{other}()")
            + "; to branch an unbound history, copy it (history.copy()) and restore a prefix"
        )
    if not callable(getattr(binding.store, "fork", None)):
        raise TypeError(
            f"{type(binding.store).__name__} has no fork(): every threadline store has one; a "
            "store of your own needs fork(conversation_id, new_id, at=None) and parent(new_id) "
            "(threadline.testing.check_store checks them)"
        )
    return binding
