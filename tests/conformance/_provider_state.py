"""Hypothesis strategies that give agent histories the opaque state a provider left in them.

``agent_histories()`` draws reasoning with random opaque fields, but its text and tool-call
parts never carry the ids and signatures a provider attaches to them, so a codec's replay
paths would go untested. ``openai_histories()`` adds Responses item ids (``msg_`` / ``fc_``
in ``metadata["openai.item_id"]``), ``rs_`` ids on OpenAI reasoning, OpenAI reasoning right
before the items it produced and hosted web searches; ``gemini_histories()`` adds thought
signatures (valid base64) on text, call and file parts and on Gemini thoughts, the model that
produced a message, and code execution parts, all as the APIs return them.
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import strategies as st

from tests.conformance._histories import agent_histories
from threadline import FilePart
from threadline import Message
from threadline import ProviderToolCallPart
from threadline import ProviderToolResultPart
from threadline import ReasoningPart
from threadline import TextPart
from threadline import ToolCallPart

MODELS = ("model-a", "model-b")
signatures = st.binary(min_size=1, max_size=24).map(lambda raw: base64.b64encode(raw).decode())


def _web_search(item_id: str) -> ProviderToolCallPart:
    return ProviderToolCallPart(
        id=item_id,
        name="web_search",
        input={"action": {"type": "search", "query": "weather paris"}, "status": "completed"},
        provider="openai",
        metadata={"openai.type": "web_search_call"},
    )


@st.composite
def openai_histories(draw: st.DrawFn) -> list[Message]:
    """Agent histories whose assistant messages look like Responses API output."""
    messages = draw(agent_histories())
    out: list[Message] = []
    for number, message in enumerate(messages):
        if message.role != "assistant":
            out.append(message)
            continue
        parts: list[Any] = []
        for position, part in enumerate(message.parts):
            tag = f"{number}_{position}"
            if draw(st.integers(0, 3)) == 0:
                parts.append(
                    ReasoningPart(
                        text=draw(st.sampled_from(["", "Thinking."])),
                        encrypted=draw(st.none() | st.just(f"gAAAA{tag}")),
                        provider="openai",
                        model=draw(st.none() | st.sampled_from(MODELS)),
                        item_id=f"rs_{tag}",
                        summary=tuple(draw(st.lists(st.sampled_from(["plan", ""]), max_size=2))),
                    )
                )
                if draw(st.booleans()):
                    parts.append(_web_search(f"ws_{tag}"))
            if isinstance(part, (TextPart, ToolCallPart)) and draw(st.integers(0, 4)):
                prefix = "msg" if isinstance(part, TextPart) else "fc"
                item_id = f"{prefix}_{tag}"
                if isinstance(part, TextPart) and parts and isinstance(parts[-1], TextPart):
                    item_id = parts[-1].metadata.get("openai.item_id", item_id)
                part = part.with_metadata({"openai.item_id": item_id})
            parts.append(part)
        out.append(message.model_copy(update={"parts": tuple(parts)}))
    return out


@st.composite
def gemini_histories(draw: st.DrawFn) -> list[Message]:
    """Agent histories whose assistant messages look like generateContent output."""
    messages = draw(agent_histories())
    out: list[Message] = []
    for number, message in enumerate(messages):
        if message.role != "assistant":
            out.append(message)
            continue
        parts: list[Any] = []
        for position, part in enumerate(message.parts):
            if isinstance(part, ReasoningPart) and part.provider == "gemini":
                part = ReasoningPart(
                    text=part.text,
                    signature=draw(st.none() | signatures),
                    provider="gemini",
                    model=part.model,
                )
            elif isinstance(part, (TextPart, ToolCallPart, FilePart)) and draw(st.booleans()):
                part = part.with_metadata({"gemini.thought_signature": draw(signatures)})
            parts.append(part)
            if position == 0 and draw(st.integers(0, 3)) == 0:
                call_id = f"code_{number}"
                parts.append(
                    ProviderToolCallPart(
                        id=call_id,
                        name="code_execution",
                        input={"code": "print(1 + 1)", "language": "PYTHON"},
                        provider="gemini",
                    )
                )
                parts.append(
                    ProviderToolResultPart(
                        call_id=call_id,
                        content={"outcome": "OUTCOME_OK", "output": "2\n"},
                        provider="gemini",
                    )
                )
        message = message.model_copy(update={"parts": tuple(parts)})
        model = draw(st.none() | st.sampled_from(MODELS))
        out.append(message if model is None else message.with_metadata(model=model))
    return out
