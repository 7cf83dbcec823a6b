"""pydantic-ai responses name their model (issue 37 item 7): a ``ModelResponse``'s
``model_name`` tags the reasoning its own provider produced, as ``decode_response(...,
model=...)`` tags a Bedrock reply, so that reasoning replays to that model; what threadline
gave pydantic-ai comes back unchanged."""

from __future__ import annotations

from datetime import datetime
from datetime import timezone
from typing import Any

import pytest

from tests.support import require_module

require_module("pydantic_ai", 'pip install "threadline[pydantic-ai]"')

from pydantic_ai import messages as pai  # noqa: E402

import threadline as tl  # noqa: E402
from threadline.interop.pydantic_ai import from_pydantic_ai  # noqa: E402
from threadline.interop.pydantic_ai import to_pydantic_ai  # noqa: E402

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


def _bedrock_reply(**thinking: Any) -> list[pai.ModelMessage]:
    return [
        pai.ModelRequest(parts=[pai.UserPromptPart("What purrs?", timestamp=T0)]),
        pai.ModelResponse(
            parts=[
                pai.ThinkingPart("Easy.", signature="EqQB", provider_name="bedrock", **thinking),
                pai.TextPart("A cat."),
            ],
            model_name=MODEL,
            provider_name="bedrock",
            timestamp=T0,
        ),
    ]


def test_a_bedrock_reply_from_pydantic_ai_replays_reasoning_to_its_model() -> None:
    history = from_pydantic_ai(_bedrock_reply())
    reasoning = history[1].parts[0]
    assert isinstance(reasoning, tl.ReasoningPart)
    assert (reasoning.provider, reasoning.model) == ("bedrock", MODEL)
    body = tl.encode(history, provider="bedrock", model=MODEL)
    assert body["messages"][1]["content"][0] == {
        "reasoningContent": {"reasoningText": {"text": "Easy.", "signature": "EqQB"}}
    }


def test_another_providers_reasoning_is_not_tagged() -> None:
    native = _bedrock_reply()
    response = native[1]
    assert isinstance(response, pai.ModelResponse)
    foreign = pai.ThinkingPart("Easy.", signature="EqQB", provider_name="anthropic")
    response.parts = [foreign, *response.parts[1:]]
    reasoning = from_pydantic_ai(native)[1].parts[0]
    assert isinstance(reasoning, tl.ReasoningPart)
    assert reasoning.model is None


def test_the_pydantic_ai_reply_comes_back_as_it_was() -> None:
    native = _bedrock_reply()
    assert to_pydantic_ai(from_pydantic_ai(native)) == native


@pytest.mark.parametrize("model", [None, MODEL, "anthropic.claude-opus-4-1-20250805-v1:0"])
def test_threadline_reasoning_comes_back_with_the_model_it_had(model: str | None) -> None:
    history = [
        tl.user_message("What purrs?", created_at=T0),
        tl.assistant_message(
            tl.reasoning_part("Easy.", signature="EqQB", provider="bedrock", model=model),
            "A cat.",
            created_at=T0,
            metadata={"model": MODEL, "provider": "bedrock"},
        ),
    ]
    back = from_pydantic_ai(to_pydantic_ai(history))
    assert back[1].parts == history[1].parts
    assert back[1].metadata == history[1].metadata
