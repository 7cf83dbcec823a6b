"""Anthropic Messages output, judged by the ``anthropic`` SDK's own types and client."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings

from tests.conformance._histories import agent_histories
from tests.conformance._histories import encode_options
from tests.conformance._histories import role_parts
from tests.conformance.capture import capture_anthropic
from tests.conformance.judges import judge_anthropic
from tests.support import require_module
from threadline import Message
from threadline.codecs import anthropic
from threadline.integrity import prepare_messages
from threadline.testing import check_codec

pytestmark = pytest.mark.requires_sdk


@pytest.fixture(autouse=True)
def _sdk() -> None:
    require_module("anthropic")


@given(agent_histories(), encode_options)
def test_every_payload_passes_the_sdk_types_and_the_api_rules(
    history: list[Message], kw: dict[str, Any]
) -> None:
    judge_anthropic(anthropic.encode(history, **kw))


@given(agent_histories(), encode_options)
def test_decode_reads_back_the_prepared_history_up_to_the_declared_losses(
    history: list[Message], kw: dict[str, Any]
) -> None:
    decoded = anthropic.decode(anthropic.encode(history, **kw))
    expected = anthropic.normalize_for_round_trip(prepare_messages(history), **kw)
    assert role_parts(decoded) == role_parts(expected)


@settings(max_examples=15)
@given(agent_histories(max_turns=3))
def test_the_real_client_sends_exactly_our_payload(history: list[Message]) -> None:
    body = {"model": "claude-test", "max_tokens": 1024, **anthropic.encode(history)}
    sent = capture_anthropic(body)
    assert sent["url"].endswith("/v1/messages")
    assert sent["json"] == json.loads(json.dumps(body))


def test_check_codec_passes_with_the_sdk_judge() -> None:
    check_codec(anthropic, validate=judge_anthropic)
