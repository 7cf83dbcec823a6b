"""The streaming law: for a response R and any valid event sequence for it (random chunk
boundaries inside text, reasoning and argument JSON; parallel tool calls interleaved where the
format allows), the assembled message equals ``decode_response(R)``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.stream_cases import FINAL
from tests.stream_cases import STREAMS
from tests.support import examples
from threadline import CodecError
from threadline import Message
from threadline import assemble
from threadline import decode_response


def same(a: Message, b: Message) -> bool:
    return (a.role, a.parts, a.metadata) == (b.role, b.parts, b.metadata)


@pytest.mark.parametrize("provider", sorted(STREAMS))
@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_assembled_stream_is_the_decoded_response(provider: str, data: st.DataObject) -> None:
    response, events = data.draw(STREAMS[provider])
    expected = decode_response(response, provider=provider)
    assert same(assemble(events, provider=provider), expected)


@pytest.mark.parametrize("provider", sorted(STREAMS))
@settings(max_examples=examples(25), deadline=None)
@given(data=st.data())
def test_a_cut_stream_is_refused_and_its_partial_form_repairs(
    provider: str, data: st.DataObject
) -> None:
    from threadline import StreamAssembler
    from threadline import prepare_messages
    from threadline import user_message

    _, events = data.draw(STREAMS[provider])
    final = next(at for at, event in enumerate(events) if FINAL[provider](event))
    cut = data.draw(st.integers(0, final))
    assembler = StreamAssembler(provider)
    for event in events[:cut]:
        assembler.feed(event)
    with pytest.raises(CodecError, match="not finished"):
        assembler.message()
    partial = assembler.message(partial=True)
    assert partial.metadata["threadline.incomplete"] is True
    history: list[Any] = [user_message("hi"), partial]
    prepared = prepare_messages(history)
    assert prepare_messages(prepared, "strict") == prepared
