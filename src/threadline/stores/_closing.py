"""``with store:`` and ``async with store:`` for the stores that hold connections, threads or a
watch: the block's end calls ``close()`` / ``aclose()`` (private)."""

from __future__ import annotations

from typing_extensions import Self

__all__ = ["AsyncClosing", "Closing"]


class Closing:
    """A context manager that closes itself at the end of the ``with`` block."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError  # every subclass has its own

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncClosing:
    """An async context manager that closes itself at the end of the ``async with`` block."""

    __slots__ = ()

    async def aclose(self) -> None:
        raise NotImplementedError  # every subclass has its own

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
