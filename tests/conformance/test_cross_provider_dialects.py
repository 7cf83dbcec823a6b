"""Moving a DeepSeek thinking conversation to another provider and back (issue 41 item 4).

The pairs and chains of ``test_cross_provider.py`` cover every registered format, the
dialects included. This adds what is particular to a dialect that takes its reasoning back:
a conversation started on DeepSeek thinking continues on Anthropic, OpenRouter or Ollama
(when registered) and comes back to DeepSeek; on DeepSeek, each DeepSeek turn replays its own
reasoning exactly in ``reasoning_content`` and every other turn carries an empty one (the
thinking models refuse an assistant message without the field), foreign reasoning never goes
back as reasoning, and ``reasoning="text"`` keeps its readable text as text.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given

from tests.conformance.test_cross_provider import JUDGES
from tests.conformance.test_cross_provider import Step
from tests.conformance.test_cross_provider import conversation
from tests.conformance.test_cross_provider import examples
from tests.conformance.test_cross_provider import move
from tests.conformance.test_cross_provider import play
from tests.conformance.test_cross_provider import scripts
from tests.conformance.test_cross_provider import texts
from threadline import Message
from threadline import ReasoningPart
from threadline.codecs import codec_names
from threadline.codecs import encode

pytestmark = pytest.mark.requires_sdk

AWAY = [name for name in ("anthropic", "openrouter", "ollama") if name in codec_names()]


def own_reasoning(message: Message) -> str:
    """What DeepSeek must get back for ``message``: its own reasoning, else nothing."""
    return "".join(
        part.text
        for part in message.parts
        if isinstance(part, ReasoningPart) and part.provider == "deepseek"
    )


def assistant_items(payload: dict[str, object]) -> list[dict[str, object]]:
    messages = payload["messages"]
    assert isinstance(messages, list)
    return [item for item in messages if item.get("role") == "assistant"]


@pytest.mark.parametrize("away", AWAY)
@examples(ci=40, dev=5)
@given(first=scripts, then=scripts)
def test_deepseek_thinking_goes_away_and_back(
    away: str, first: Sequence[Step], then: Sequence[Step]
) -> None:
    history = conversation("deepseek", first, system=False)
    move(history, away)  # judged there, pairing and texts kept
    continued = [*history, *play(away, then, "b", first_question=len(first))]
    JUDGES[away](encode(continued, provider=away))

    payload = encode(continued, provider="deepseek", model="deepseek-v4-pro")
    JUDGES["deepseek"](payload)
    sent = assistant_items(payload)
    expected = [own_reasoning(m) for m in continued if m.role == "assistant"]
    assert [item["reasoning_content"] for item in sent] == expected  # own exactly, others ""
    foreign = [
        part.text
        for message in continued
        for part in message.parts
        if isinstance(part, ReasoningPart) and part.provider != "deepseek" and part.text
    ]
    assert not any(
        item["reasoning_content"] in foreign for item in sent if item["reasoning_content"]
    )

    _, decoded = move(continued, "deepseek", model="deepseek-v4-pro")
    assert texts(decoded) == texts(continued)
    _, as_text = move(continued, "deepseek", reasoning="text")
    written = {text for role, text in texts(as_text) if role == "assistant"}
    assert set(foreign) <= written
