"""A stream cut at any event, stored as ``message(partial=True)`` and repaired by
``prepare_messages``, encodes to a request the provider's own SDK types and the wire rules
accept (the payload judged as in the other conformance suites)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.conformance.judges import judge_anthropic
from tests.conformance.judges import judge_dialect
from tests.conformance.judges import judge_openai_chat
from tests.conformance.judges_cohere import judge_cohere
from tests.conformance.judges_mistral_bedrock import judge_bedrock
from tests.conformance.judges_mistral_bedrock import judge_mistral
from tests.conformance.judges_ollama import judge_ollama
from tests.conformance.judges_responses_gemini import judge_gemini
from tests.conformance.judges_responses_gemini import judge_openai_responses
from tests.dialect_cases import DIALECTS
from tests.stream_cases import STREAMS
from tests.stream_recordings import RECORDED
from tests.support import require_module

pytestmark = pytest.mark.requires_sdk

JUDGES: Mapping[str, Callable[[Mapping[str, Any]], None]] = {
    "anthropic": judge_anthropic,
    "bedrock": judge_bedrock,
    "gemini": judge_gemini,
    "mistral": judge_mistral,
    "openai_chat": judge_openai_chat,
    "openai_responses": judge_openai_responses,
    "ollama": judge_ollama,
    "cohere": judge_cohere,
    **{name: functools.partial(judge_dialect, name) for name in DIALECTS},
}
SDKS: Mapping[str, tuple[str, ...]] = {
    "anthropic": ("anthropic",),
    "bedrock": ("botocore",),
    "gemini": ("google.genai",),
    "mistral": ("mistralai", "mistral_common"),
    "openai_chat": ("openai",),
    "openai_responses": ("openai",),
    "ollama": ("ollama",),
    "cohere": ("cohere",),
    **dict.fromkeys(DIALECTS, ("openai",)),
}


def _judge_every_cut(provider: str, events: list[Any]) -> None:
    for module in SDKS[provider]:
        require_module(module)
    for cut in range(len(events) + 1):
        assembler = tl.StreamAssembler(provider)
        for event in events[:cut]:
            assembler.feed(event)
        partial = assembler.message(partial=True)
        history = tl.prepare_messages([tl.user_message("Weather in Paris?"), partial])
        history.append(tl.user_message("Go on."))
        payload = tl.encode(history, provider=provider, integrity="strict")
        JUDGES[provider](payload)


@pytest.mark.parametrize("provider", sorted(RECORDED))
def test_every_cut_of_a_recorded_stream_encodes_to_an_accepted_request(provider: str) -> None:
    _judge_every_cut(provider, RECORDED[provider])


@pytest.mark.parametrize("provider", sorted(STREAMS))
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_every_cut_of_a_generated_stream_encodes_to_an_accepted_request(
    provider: str, data: st.DataObject
) -> None:
    _, events = data.draw(STREAMS[provider])
    _judge_every_cut(provider, events)
