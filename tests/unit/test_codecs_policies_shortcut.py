"""`resolve`'s shortcut for messages with nothing to resolve decides as the part-by-part pass
does: the same parts, in the same order, with the same indexes."""

from __future__ import annotations

import itertools

import pytest

import threadline as tl
from threadline import Message
from threadline import ReasoningPart
from threadline import TextPart
from threadline import ToolCallPart
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import _ready
from threadline.codecs._policies import resolve
from threadline.codecs._policies import resolve_indexed
from threadline.codecs._policies import resolve_parts
from threadline.codecs.base import EncodeOptions
from threadline.codecs.base import ReasoningPolicy

_CAPS = Capabilities(
    replayable=lambda part: part.signature is not None,
    carries_file=lambda part, role: False,
    file_reasons={"user": "no files"},
    no_place="no place",
)
_OURS = tl.reasoning_part("mine", signature="sig", provider="anthropic", model="m-1")
_UNSIGNED = tl.reasoning_part("mine, unsigned", provider="anthropic")
_FOREIGN = tl.reasoning_part("theirs", provider="openai")
_REDACTED = tl.reasoning_part("", provider="openai", redacted=True, encrypted="e")
_TEXT = tl.text_part("ok")
_CALL = tl.tool_call_part("call_1", "lookup", {})
_PIECES: tuple[ReasoningPart | TextPart | ToolCallPart, ...] = (
    _OURS,
    _UNSIGNED,
    _FOREIGN,
    _REDACTED,
    _TEXT,
    _CALL,
)


def _assistant_messages() -> list[Message]:
    out: list[Message] = []
    for size in (1, 2, 3):
        for parts in itertools.product(_PIECES, repeat=size):
            if any(part is _TEXT or part is _CALL for part in parts) or size == 1:
                out.append(tl.assistant_message(*parts, id="a"))
    return out


@pytest.mark.parametrize("reasoning", ["auto", "text", "drop"])
@pytest.mark.parametrize("model", [None, "m-1", "m-2"])
def test_the_shortcut_gives_what_the_part_by_part_pass_gives(
    reasoning: ReasoningPolicy, model: str | None
) -> None:
    options = EncodeOptions(
        provider="anthropic", model=model, reasoning=reasoning, unsupported="placeholder"
    )
    taken = 0
    for message in _assistant_messages():
        full = resolve_parts(message, 0, options, _CAPS)
        assert list(resolve_indexed(message, 0, options, _CAPS)) == full
        assert list(resolve(message, 0, options, _CAPS)) == [part for _, part in full]
        taken += _ready(message, 0, options, _CAPS) is not None
    assert taken  # the shortcut was taken for some of them


def test_a_tool_message_of_text_results_is_carried_as_it_is() -> None:
    options = EncodeOptions(
        provider="anthropic", model=None, reasoning="auto", unsupported="placeholder"
    )
    message = tl.tool_message(tl.tool_result_part("call_1", "done", name="lookup"))
    assert _ready(message, 0, options, _CAPS) is message.parts
    assert resolve(message, 0, options, _CAPS) is message.parts
