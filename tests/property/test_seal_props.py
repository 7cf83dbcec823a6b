"""Any single-field change to a sealed message fails verification.

What a model or a tool dispatcher does depends on a message's role, ids, parts (every field of
every part, nested tool-result content included), metadata, ``created_at`` and the runtime-only
``replay`` flag; a change to any one of them, however it is made, must fail verification. Every
field but ``replay`` is in the MAC; ``replay`` is never sealed, and ``verify`` refuses it set.
The histories are drawn without the flag, as every history read back from a client is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from collections.abc import Mapping
from datetime import datetime
from datetime import timedelta
from typing import Any

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.strategies import PROVIDERS
from tests.strategies import conversations
from threadline import Message
from threadline import SealError
from threadline import TextPart
from threadline import seal
from threadline import verify

KEY = bytes(range(32))
ROLES = ("system", "user", "assistant", "tool", "internal")


def changed_values(value: object) -> Iterator[object]:
    """Values of the same field that differ from ``value`` (some may be invalid there)."""
    if isinstance(value, bool):
        yield not value
    elif isinstance(value, str):
        yield value + "x"
        yield from (name for name in (*PROVIDERS, *ROLES) if name != value)
    elif value is None:
        yield "x"
        yield {"k": 1}
    elif isinstance(value, bytes):
        yield value + b"\x00"
    elif isinstance(value, datetime):
        yield value + timedelta(seconds=1)
    elif isinstance(value, Mapping):
        yield {**value, "k": [1]}
    elif isinstance(value, tuple):
        yield (*value, "x")
        yield (*value, TextPart(text="x"))
        if value:
            yield value[:-1]
    if not isinstance(value, (bool, datetime, bytes, tuple)):
        yield [value]  # a JSON value in a list
    if isinstance(value, datetime) or value is None:
        yield datetime(2030, 1, 1).astimezone()


def changed_parts(part: Any) -> Iterator[Any]:
    """Every valid copy of ``part`` with one field changed, nested content parts included."""
    for field in dataclasses.fields(part):
        if field.name == "type":
            continue
        value = getattr(part, field.name)
        candidates = list(changed_values(value))
        if isinstance(value, tuple):  # content or summary: change one item in place
            for index, item in enumerate(value):
                if dataclasses.is_dataclass(item):
                    candidates += [
                        (*value[:index], new, *value[index + 1 :]) for new in changed_parts(item)
                    ]
        for new in candidates:
            try:
                copy = dataclasses.replace(part, **{field.name: new})
            except (pydantic.ValidationError, ValueError, TypeError):
                continue
            if copy != part:
                yield copy


def changed_messages(message: Message) -> Iterator[Message]:
    """Every valid copy of ``message`` with one field changed (a field of a part included)."""
    fields = {name: getattr(message, name) for name in Message.model_fields}
    options: list[tuple[str, object]] = [
        (name, new) for name, value in fields.items() for new in changed_values(value)
    ]
    for index, part in enumerate(message.parts):
        options += [
            ("parts", (*message.parts[:index], new, *message.parts[index + 1 :]))
            for new in changed_parts(part)
        ]
    for name, new in options:
        try:
            copy = Message(**{**fields, name: new})
        except (pydantic.ValidationError, ValueError, TypeError):
            continue
        if copy != message:
            yield copy


@given(data=st.data(), history=conversations(min_turns=1, max_turns=3, replay=False))
def test_any_single_field_change_breaks_the_seal(
    data: st.DataObject, history: list[Message]
) -> None:
    token = seal(history, KEY, conversation_id="c")
    index = data.draw(st.integers(0, len(history) - 1))
    candidates = list(changed_messages(history[index]))
    assert any(c.replay != history[index].replay for c in candidates)
    changed = data.draw(st.sampled_from(candidates))
    forged = [*history[:index], changed, *history[index + 1 :]]
    with pytest.raises(SealError) as info:
        verify(forged, token, KEY, conversation_id="c")
    assert info.value.reason == "mismatch"


@given(history=conversations(max_turns=3, replay=False))
def test_every_message_field_is_covered(history: list[Message]) -> None:
    # Exhaustive per message: no field, part field or nested content field is left out.
    token = seal(history, KEY, conversation_id="c")
    for index, message in enumerate(history[:3]):
        for changed in changed_messages(message):
            forged = [*history[:index], changed, *history[index + 1 :]]
            with pytest.raises(SealError):
                verify(forged, token, KEY, conversation_id="c")
