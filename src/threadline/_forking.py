"""`History.fork` and `History.afork`: branch a bound history, for "edit and regenerate".

A mixin of [`History`][threadline.History] (``history.py`` holds the contract and is kept under
the module size limit): the store's ``fork`` copies the first ``at`` messages of the bound
conversation into a new one and records its parent; the branch comes back as a new History with
the same configuration (window, token counter, error handlers, plugins; not the listeners),
bound to the new conversation in the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from threadline._binding import Binding

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Branching"]


class Branching:
    """``fork`` and ``afork``, for a class with History's internals."""

    __slots__ = ()

    _binding: Binding | None

    def _config(self) -> dict[str, Any]:
        raise NotImplementedError

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
        config = self._config()
        plugins = config.pop("plugins", ())
        branch = type(self).__new__(type(self))
        branch._configure(**config)  # type: ignore[attr-defined]
        branch._start([], 0, plugins)  # type: ignore[attr-defined]
        return branch


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
