"""Anthropic Messages output, judged by the ``anthropic`` SDK's own types and client."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conformance._histories import agent_histories
from tests.conformance.capture import capture_anthropic
from tests.conformance.judges import judge_anthropic
from tests.support import require_module
from threadline import Message
from threadline.codecs import anthropic
from threadline.integrity import prepare_messages
from threadline.testing import check_codec

pytestmark = pytest.mark.requires_sdk

options = st.fixed_dictionaries(
    {},
    optional={
        "model": st.sampled_from([None, "model-a", "model-b"]),
        "reasoning": st.sampled_from(["auto", "text", "drop"]),
        "unsupported": st.sampled_from(["placeholder", "drop"]),
    },
)


@pytest.fixture(autouse=True)
def _sdk() -> None:
    require_module("anthropic")


def pairs(messages: list[Message]) -> list[tuple[str, Any]]:
    return [(message.role, part) for message in messages for part in message.parts]


@given(agent_histories(), options)
def test_every_payload_passes_the_sdk_types_and_the_api_rules(
    history: list[Message], kw: dict[str, Any]
) -> None:
    judge_anthropic(anthropic.encode(history, **kw))


@given(agent_histories(), options)
def test_decode_reads_back_the_prepared_history_up_to_the_declared_losses(
    history: list[Message], kw: dict[str, Any]
) -> None:
    decoded = anthropic.decode(anthropic.encode(history, **kw))
    expected = anthropic.normalize_for_round_trip(prepare_messages(history), **kw)
    assert pairs(decoded) == pairs(expected)


@settings(max_examples=15)
@given(agent_histories(max_turns=3))
def test_the_real_client_sends_exactly_our_payload(history: list[Message]) -> None:
    body = {"model": "claude-test", "max_tokens": 1024, **anthropic.encode(history)}
    sent = capture_anthropic(body)
    assert sent["url"].endswith("/v1/messages")
    assert sent["json"] == json.loads(json.dumps(body))


def test_check_codec_passes_with_the_sdk_judge() -> None:
    check_codec(anthropic, validate=judge_anthropic)
