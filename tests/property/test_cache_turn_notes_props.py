"""``encode(cache=...)`` reads the history's breakpoints from the turns the codec's loop
noted (issue 38, item 2): those turns hold every breakpoint the body holds, so counting and
ordering them finds what a walk of the whole body finds."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import any_messages
from tests.strategies import conversations
from tests.support import examples
from threadline.codecs import anthropic
from threadline.codecs import bedrock
from threadline.codecs._caching import AnthropicMarks
from threadline.codecs._caching import BedrockMarks
from threadline.codecs._caching import CacheState
from threadline.codecs._formats import DESCRIPTORS
from threadline.messages import Message
from threadline.messages import ToolResultPart

FORMATS: dict[str, tuple[Any, str, type[AnthropicMarks] | type[BedrockMarks]]] = {
    "anthropic": (anthropic, "anthropic.cache_control", AnthropicMarks),
    "bedrock": (bedrock, "bedrock.cache_point", BedrockMarks),
}
MARKS = [{"type": "ephemeral"}, {"type": "default", "ttl": "1h"}]
SHORT = {"type": "ephemeral"}
LONG = {"type": "ephemeral", "ttl": "1h"}


@st.composite
def marked_histories(draw: st.DrawFn, key: str) -> tuple[list[Message], str]:
    """A history (integrity on or off) with breakpoints in some parts' metadata, and in the
    content of some tool results."""
    history, integrity = draw(
        st.one_of(
            st.tuples(conversations(), st.sampled_from(["auto", "off"])),
            st.tuples(st.lists(any_messages(), min_size=1, max_size=6), st.just("off")),
        )
    )
    out = []
    for message in history:
        parts = []
        for part in message.parts:
            if isinstance(part, ToolResultPart) and not isinstance(part.content, str):
                content = tuple(
                    item.with_metadata({key: draw(st.sampled_from(MARKS))})
                    if draw(st.booleans())
                    else item
                    for item in part.content
                )
                part = dataclasses.replace(part, content=content)
            if draw(st.integers(0, 3)) == 0:
                part = part.with_metadata({key: draw(st.sampled_from(MARKS))})
            parts.append(part)
        out.append(message.model_copy(update={"parts": tuple(parts)}))
    return out, integrity


@given(st.data(), st.sampled_from(sorted(FORMATS)), st.sampled_from(["auto", "text", "drop"]))
@settings(max_examples=examples(120))
def test_the_noted_turns_hold_every_breakpoint_of_the_body(
    data: st.DataObject, name: str, reasoning: str
) -> None:
    module, key, writer = FORMATS[name]
    history, integrity = data.draw(marked_histories(key))
    options: dict[str, Any] = {
        "model": None,
        "integrity": integrity,
        "reasoning": reasoning,
        "unsupported": "placeholder",
        "cache": [],
    }
    body, _, state = module.encode_cached(history, None, options)
    assert isinstance(state, CacheState)
    assert list(state.turns) == sorted(set(state.turns))
    noted = writer()
    noted.turns = state.turns
    assert noted.marks(body) == writer().marks(body)  # the walk of every turn it replaces
    del options["cache"]
    described = DESCRIPTORS[name]
    if described.encode_request is not None:
        plain = described.encode_request.load()(history, None, options)[0]
    else:
        plain = module.encode(history, **options)
    assert plain == body  # the same body as without cache


def test_a_breakpoint_inside_a_tool_result_notes_its_turn() -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    image = tl.FilePart(media_type="image/png", data=png, metadata={FORMATS["anthropic"][1]: LONG})
    history = [
        tl.user_message("Look."),
        tl.assistant_message(tl.ToolCallPart(id="c1", name="see", arguments={})),
        tl.Message(role="tool", parts=(tl.ToolResultPart(call_id="c1", content=(image,)),)),
        tl.assistant_message("A cat."),
        tl.user_message(tl.text_part("And now?", metadata={FORMATS["anthropic"][1]: SHORT})),
        tl.assistant_message("Still a cat."),
    ]
    options = {"model": None, "integrity": "auto", "reasoning": "auto", "unsupported": "drop"}
    body, _, state = anthropic.encode_cached(history, None, {**options, "cache": []})
    assert state is not None
    assert state.turns == (2, 4)  # the result's turn (its image) and the marked question
    assert [where for where, _ in AnthropicMarks().marks(body)] == [
        "messages.2.content.0.content.0",
        "messages.4.content.0",
    ]
    # and encode takes them in order: the hour before the five minutes
    assert tl.encode(history, provider="anthropic", cache="auto")["messages"][-1]["content"][-1][
        "cache_control"
    ] == {"type": "ephemeral"}
