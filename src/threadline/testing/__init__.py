"""Conformance kits: run threadline's own contract suites against your extension.

``check_codec(module)`` holds a wire-format codec (ours or a third party's) to the codec contract;
``check_store(factory)`` and ``check_async_store(factory)`` hold a store to the store contract, and
``check_watch(factory, reopen)`` and ``check_async_watch(factory, reopen)`` its ``watch``. Each
kit raises [`ConformanceError`][threadline.testing.ConformanceError] (an ``AssertionError``, so
every test runner reports it as a failure) naming the law that broke, the input and the first
difference. They need no test dependency::

    from threadline.codecs import anthropic
    from threadline.stores import MemoryStore
    from threadline.testing import check_codec, check_store


    def test_anthropic_codec() -> None:
        check_codec(anthropic)


    def test_memory_store() -> None:
        check_store(MemoryStore)

How a codec declares its losses
-------------------------------
A round trip ``decode(encode(m))`` may lose only what DESIGN allows: message ids,
``created_at``, message metadata the format has no place for, how parts are grouped into
messages, where system text sits, reasoning per the reasoning policy and parts per the
unsupported policy. ``check_codec`` ignores the first four itself (it compares the sequence of
``(role, part)`` pairs). Everything else a format changes, the module declares in one function
that says, in threadline's terms, what reading back its own output gives::

    def normalize_for_round_trip(
        messages, *, model=None, reasoning="auto", unsupported="placeholder"
    ) -> list[Message]: ...

It receives prepared messages (the output of ``prepare_messages``) and the options ``encode``
got. A module without it declares a lossless format.
"""

from __future__ import annotations

from threadline.errors import ConformanceError
from threadline.testing._codec_kit import check_codec
from threadline.testing._store_kit import check_async_store
from threadline.testing._store_kit import check_store
from threadline.testing._store_kit_watch import check_async_watch
from threadline.testing._store_kit_watch import check_watch

__all__ = [
    "ConformanceError",
    "check_async_store",
    "check_async_watch",
    "check_codec",
    "check_store",
    "check_watch",
]
