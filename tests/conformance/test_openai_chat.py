"""OpenAI Chat Completions output, judged by the ``openai`` SDK's own types and client."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings

from tests.conformance._histories import agent_histories
from tests.conformance._histories import encode_options
from tests.conformance._histories import role_parts
from tests.conformance.capture import capture_openai_chat
from tests.conformance.judges import judge_openai_chat
from tests.support import require_module
from threadline import Message
from threadline.codecs import openai_chat
from threadline.integrity import prepare_messages
from threadline.testing import check_codec

pytestmark = pytest.mark.requires_sdk


@pytest.fixture(autouse=True)
def _sdk() -> None:
    require_module("openai")


@given(agent_histories(), encode_options)
def test_every_payload_passes_the_sdk_types_and_the_api_rules(
    history: list[Message], kw: dict[str, Any]
) -> None:
    judge_openai_chat(openai_chat.encode(history, **kw))


@given(agent_histories(), encode_options)
def test_decode_reads_back_the_prepared_history_up_to_the_declared_losses(
    history: list[Message], kw: dict[str, Any]
) -> None:
    decoded = openai_chat.decode(openai_chat.encode(history, **kw))
    expected = openai_chat.normalize_for_round_trip(prepare_messages(history), **kw)
    assert role_parts(decoded) == role_parts(expected)


@settings(max_examples=15)
@given(agent_histories(max_turns=3))
def test_the_real_client_sends_exactly_our_payload(history: list[Message]) -> None:
    body = {"model": "gpt-test", **openai_chat.encode(history)}
    sent = capture_openai_chat(body)
    assert sent["url"].endswith("/v1/chat/completions")
    assert sent["json"] == json.loads(json.dumps(body))


def test_check_codec_passes_with_the_sdk_judge() -> None:
    check_codec(openai_chat, validate=judge_openai_chat)
