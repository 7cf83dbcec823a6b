"""The interop law for pydantic-ai, over generated histories on both sides.

``from_pydantic_ai(to_pydantic_ai(m))`` gives ``m`` back (roles, parts, metadata, timestamps;
not message ids), and ``to_pydantic_ai(from_pydantic_ai(p))`` gives ``p`` back, as objects and
through pydantic-ai's own JSON (``ModelMessagesTypeAdapter``). The ids ``from_pydantic_ai`` gives
are a chain: the same from objects and from JSON, kept when the history grows at the end, and
given to the tail alone when it is chained ``after=`` the head's last id.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.support import examples
from tests.support import require_module

require_module("pydantic_ai", 'pip install "threadline[pydantic-ai]"')

from pydantic_ai.messages import ModelMessagesTypeAdapter  # noqa: E402

from tests.interop.pydantic_ai_strategies import histories  # noqa: E402
from tests.strategies import conversations  # noqa: E402
from threadline import Message  # noqa: E402
from threadline.interop.pydantic_ai import from_pydantic_ai  # noqa: E402
from threadline.interop.pydantic_ai import to_pydantic_ai  # noqa: E402


def comparable(message: Message) -> tuple[Any, ...]:
    """What the law keeps: everything but the id (and ``replay``, which is runtime only)."""
    return (message.role, message.parts, message.metadata, message.created_at)


def outside_the_adapter_namespace(messages: list[Message]) -> bool:
    """No metadata key claims the adapter's own ``pydantic_ai.`` namespace: the adapter drops
    a key there that names no field it carries (a known gap, docs/interop/pydantic-ai.md),
    which hypothesis finds by reading the constant from the adapter's source."""
    return not any(
        key.startswith("pydantic_ai.")
        for message in messages
        for metadata in (message.metadata, *(part.metadata for part in message.parts))
        for key in metadata
    )


@given(conversations(replay=False).filter(outside_the_adapter_namespace))
def test_threadline_round_trip(messages: list[Message]) -> None:
    kept = [m for m in messages if m.role != "internal"]  # never reach a model: not carried
    back = from_pydantic_ai(to_pydantic_ai(messages))
    stamped = [m if m.created_at is not None else m.model_copy(update={"created_at": b.created_at})
               for m, b in zip(kept, back, strict=True)]  # fmt: skip
    assert [comparable(m) for m in back] == [comparable(m) for m in stamped]


@pytest.mark.slow
@given(conversations(replay=False).filter(outside_the_adapter_namespace))
def test_our_output_survives_pydantic_ai_json(messages: list[Message]) -> None:
    native = to_pydantic_ai(messages)
    data = ModelMessagesTypeAdapter.dump_json(native)
    assert ModelMessagesTypeAdapter.validate_json(data) == native
    assert [comparable(m) for m in from_pydantic_ai(data)] == [
        comparable(m) for m in from_pydantic_ai(native)
    ]


@given(histories())
def test_pydantic_ai_round_trip(native: list[Any]) -> None:
    assert to_pydantic_ai(from_pydantic_ai(native)) == native


@pytest.mark.slow
@given(histories())
def test_pydantic_ai_round_trip_through_json(native: list[Any]) -> None:
    data = ModelMessagesTypeAdapter.dump_json(native)
    loaded = ModelMessagesTypeAdapter.validate_json(data)
    back = to_pydantic_ai(from_pydantic_ai(data))
    assert back == loaded
    assert ModelMessagesTypeAdapter.dump_json(back) == ModelMessagesTypeAdapter.dump_json(loaded)


@settings(max_examples=examples(100))
@given(histories(), st.data())
def test_ids_are_a_chain(native: list[Any], data: st.DataObject) -> None:
    ids = [m.id for m in from_pydantic_ai(native)]
    assert len(set(ids)) == len(ids)
    assert [m.id for m in from_pydantic_ai(ModelMessagesTypeAdapter.dump_json(native))] == ids
    split = data.draw(st.integers(0, len(native)), label="split")
    head = [m.id for m in from_pydantic_ai(native[:split])]
    assert ids[: len(head)] == head
    tail = from_pydantic_ai(native[split:], after=head[-1] if head else None)
    assert [m.id for m in tail] == ids[len(head) :]
