"""The declared losses derived from each format's own mapping (issue 38, item 3).

Every format's ``normalize_for_round_trip`` is the shared driver over the format's
``ROUND_TRIP``: these tests hold each registered format to that, and the driver to its own
rules (a part type without a read-back fails loudly, naming the part, the role and the
format). The read-backs themselves are judged where they always were: ``check_codec`` and the
conformance suites compare ``decode(encode(m))`` with them.
"""

from __future__ import annotations

import dataclasses

import pytest

from threadline.codecs._formats import DESCRIPTORS
from threadline.codecs._round_trip import ReadBacks
from threadline.codecs._round_trip import RoundTrip
from threadline.codecs._round_trip import read_back
from threadline.codecs.anthropic import ROUND_TRIP as ANTHROPIC
from threadline.messages import PART_TYPES
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

FIELD_OF_PART = {
    "TextPart": "text",
    "FilePart": "file",
    "ToolCallPart": "call",
    "ToolResultPart": "result",
    "ReasoningPart": "reasoning",
    "ProviderToolCallPart": "provider_call",
    "ProviderToolResultPart": "provider_result",
}
"""The `ReadBacks` field of each part type a format may send (hook parts never reach one)."""


@pytest.mark.parametrize("name", sorted(DESCRIPTORS))
def test_every_format_states_its_round_trip(name: str) -> None:
    descriptor = DESCRIPTORS[name]
    module = descriptor.codec()  # a module, or a dialect's codec object
    spec = getattr(module, "ROUND_TRIP", None)
    assert isinstance(spec, RoundTrip), f"{descriptor.module} has no ROUND_TRIP"
    assert spec.label == module.FORMAT
    assert spec.provider == module.PROVIDER
    assert spec.capabilities is module.CAPABILITIES
    assert spec.rule is module.TOOL_NAMES


def test_every_part_type_has_a_read_back_field() -> None:
    """A new part type fails here until `ReadBacks` (and the driver's dispatch) names it."""
    fields = {field.name for field in dataclasses.fields(ReadBacks)}
    for part_type in PART_TYPES:
        if part_type is HookPart:
            continue
        assert part_type.__name__ in FIELD_OF_PART, f"no ReadBacks field for {part_type}"
        assert FIELD_OF_PART[part_type.__name__] in fields


CALL = ToolCallPart(id="call_1", name="weather", arguments={"city": "Paris"})
HISTORY = [
    Message(role="user", parts=(TextPart(text="Weather in Paris?"),)),
    Message(role="assistant", parts=(CALL,)),
    Message(role="tool", parts=(ToolResultPart(call_id="call_1", content="sunny"),)),
]


def test_a_part_without_a_read_back_fails_naming_it() -> None:
    texts_only = dataclasses.replace(ANTHROPIC, parts=ReadBacks(text=ANTHROPIC.parts.text))
    expected = r"read-back for a tool_call part.*role 'assistant'"
    with pytest.raises(AssertionError, match=expected) as caught:
        read_back(HISTORY, texts_only)
    assert "Anthropic Messages" in str(caught.value)


def test_the_driver_reads_every_kept_part_once_in_order() -> None:
    seen: list[str] = []

    def text(part: TextPart, turn: object) -> TextPart:
        seen.append(part.text)
        return part

    spec = dataclasses.replace(ANTHROPIC, parts=dataclasses.replace(ANTHROPIC.parts, text=text))
    history = [
        Message(role="system", parts=(TextPart(text="Be brief."),)),
        *HISTORY,
        Message(role="internal", parts=(TextPart(text="never sent"),)),
        Message(role="system", parts=(TextPart(text="Answer in French."),)),
    ]
    out = read_back(history, spec)
    assert seen == ["Weather in Paris?", "<system>\nAnswer in French.\n</system>"]
    assert [m.role for m in out] == ["system", "user", "assistant", "tool", "system"]
    assert out[-1].parts == (TextPart(text="Answer in French."),)
