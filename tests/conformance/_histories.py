"""Hypothesis strategies for codec tests: agent histories as they reach ``encode``.

``conversations()`` from :mod:`tests.strategies` draws well-formed histories; codecs must also
take what ``prepare_messages`` repairs and ids their format rejects, so ``agent_histories()``
adds, each at random: a lost result, a result written after the next user message, malformed
arguments, internal messages and hook parts, call ids that are too long or hold characters
some providers refuse, and whitespace-only text (which Anthropic and Bedrock refuse).
Provider tool parts tagged ``anthropic`` are made realistic (a web search as the API returns
it): threadline replays those to Anthropic verbatim, and random JSON is not something
Anthropic would have sent.

``encode_options`` draws the keyword arguments of ``encode`` that a round trip must hold under,
and ``role_parts`` is what a round-trip comparison looks at: roles and parts, not ids or how
parts are grouped into messages.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.strategies import conversations
from threadline import HookPart
from threadline import Message
from threadline import Part
from threadline import ProviderToolCallPart
from threadline import ProviderToolResultPart
from threadline import TextPart
from threadline import ToolCallPart
from threadline import ToolResultPart

encode_options = st.fixed_dictionaries(
    {},
    optional={
        "model": st.sampled_from([None, "model-a", "model-b"]),
        "reasoning": st.sampled_from(["auto", "text", "drop"]),
        "unsupported": st.sampled_from(["placeholder", "drop"]),
        "text_files": st.sampled_from(["unsupported", "inline"]),
    },
)
"""``encode`` options: another model, each reasoning policy, the non-raising unsupported
policies, text files inlined or not."""

DEFECTS = (
    "lost_result",
    "misplaced_result",
    "bad_arguments",
    "internal",
    "hook",
    "hostile_ids",
    "blank_text",
)

WEB_SEARCH_RESULTS = [
    {
        "type": "web_search_result",
        "url": "https://example.com/weather",
        "title": "Weather in Paris",
        "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2QSDBXq",
        "page_age": "April 1, 2026",
    }
]


def role_parts(messages: list[Message]) -> list[tuple[str, Any]]:
    """Each part with the role of its message, in order: a history up to ids, message
    metadata and grouping."""
    return [(message.role, part) for message in messages for part in message.parts]


def _realistic(part: Any) -> Any:
    if isinstance(part, ProviderToolCallPart) and part.provider == "anthropic":
        return ProviderToolCallPart(
            id=part.id, name="web_search", input={"query": "weather paris"}, provider="anthropic"
        )
    if isinstance(part, ProviderToolResultPart) and part.provider == "anthropic":
        return ProviderToolResultPart(
            call_id=part.call_id,
            content=WEB_SEARCH_RESULTS,
            provider="anthropic",
            metadata={"anthropic.type": "web_search_tool_result"},
        )
    return part


def _hostile(call_id: str, style: int) -> str:
    if style == 0:
        return call_id + "_" + "z" * 50  # over OpenAI Chat's 40 characters
    if style == 1:
        return call_id.replace("_", ".") + ":v2|x"  # characters Anthropic refuses
    return "call_" + "0123456789" * 5 + call_id  # shares its first 55 characters


def _rename(messages: list[Message], mapping: dict[str, str]) -> list[Message]:
    out = []
    for message in messages:
        parts = tuple(
            ToolCallPart(
                id=mapping.get(part.id, part.id),
                name=part.name,
                arguments=part.arguments,
                metadata=part.metadata,
            )
            if isinstance(part, ToolCallPart)
            else ToolResultPart(
                call_id=mapping.get(part.call_id, part.call_id),
                content=part.content,
                name=part.name,
                is_error=part.is_error,
                metadata=part.metadata,
            )
            if isinstance(part, ToolResultPart)
            else part
            for part in message.parts
        )
        out.append(message.model_copy(update={"parts": parts}))
    return out


@st.composite
def agent_histories(draw: st.DrawFn, *, max_turns: int = 4) -> list[Message]:
    """A history with every part type and any of :data:`DEFECTS` (all repairable)."""
    messages = draw(conversations(max_turns=max_turns))
    messages = [
        message.model_copy(update={"parts": tuple(_realistic(p) for p in message.parts)})
        for message in messages
    ]
    defects = draw(st.sets(st.sampled_from(DEFECTS)))
    calls = [part for message in messages for part in message.tool_calls]
    if "hostile_ids" in defects and calls:
        mapping = {
            call.id: _hostile(call.id, draw(st.integers(0, 2)))
            for call in calls
            if draw(st.booleans())
        }
        messages = _rename(messages, mapping)
    tools = [index for index, message in enumerate(messages) if message.role == "tool"]
    if "lost_result" in defects and tools:
        index = draw(st.sampled_from(tools))
        kept = messages[index].parts[1:]
        if kept:
            messages[index] = messages[index].model_copy(update={"parts": kept})
        else:
            del messages[index]
    tools = [index for index, message in enumerate(messages) if message.role == "tool"]
    if "misplaced_result" in defects and tools:
        at = draw(st.sampled_from(tools))
        later = [i for i in range(at + 1, len(messages)) if messages[i].role == "user"]
        if later:  # written after the next user message: after its call, so not an orphan
            moved = messages.pop(at)
            messages.insert(later[0], moved)
    if "bad_arguments" in defects:
        for index, message in enumerate(messages):
            if message.tool_calls:
                first = message.tool_calls[0]
                bad = ToolCallPart(
                    id=first.id, name=first.name, arguments={}, raw_arguments='{"a": tru'
                )
                parts = tuple(bad if part is first else part for part in message.parts)
                messages[index] = message.model_copy(update={"parts": parts})
                break
    if "internal" in defects:
        at = draw(st.integers(0, len(messages)))
        note = Message(id="msg_internal_note", role="internal", parts=(TextPart(text="note"),))
        messages.insert(at, note)
    if "blank_text" in defects:
        speaking = [
            i for i, message in enumerate(messages) if message.role in ("user", "assistant")
        ]
        if speaking:
            index = draw(st.sampled_from(speaking))
            blank = TextPart(text=draw(st.sampled_from([" ", "\n", " \t\n"])))
            spoken: list[Part] = list(messages[index].parts)
            spoken.insert(draw(st.integers(0, len(spoken))), blank)
            messages[index] = messages[index].model_copy(update={"parts": tuple(spoken)})
    if "hook" in defects:
        assistants = [i for i, message in enumerate(messages) if message.role == "assistant"]
        if assistants:
            index = draw(st.sampled_from(assistants))
            hook = HookPart(name="approval", state={"pending": True})
            parts = (*messages[index].parts, hook)
            messages[index] = messages[index].model_copy(update={"parts": parts})
    return messages
