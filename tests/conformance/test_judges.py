"""The judges reject what the APIs reject: a judge that accepts everything cannot pass here."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.conformance._payloads import changed
from tests.conformance.judges import WireError
from tests.conformance.judges import judge_anthropic
from tests.conformance.judges import judge_openai_chat
from tests.conformance.judges import type_problems
from tests.support import require_module

pytestmark = pytest.mark.requires_sdk

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

OPENAI_VALID: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this image?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            ],
        },
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": "cat"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "a cat"},
        {"role": "assistant", "content": "A cat."},
    ]
}

ANTHROPIC_VALID: dict[str, Any] = {
    "system": "Be brief.",
    "messages": [
        {"role": "user", "content": "What is the weather?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Use the tool.", "signature": "EqQBCgIYAhIM"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3p"},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "weather",
                    "input": {"city": "Paris"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01",
                    "content": "sunny",
                    "is_error": False,
                },
                {"type": "text", "text": "Thanks"},
            ],
        },
    ],
}


@pytest.fixture(autouse=True)
def _sdks() -> None:
    require_module("openai")
    require_module("anthropic")


def test_the_valid_payloads_pass() -> None:
    judge_openai_chat(OPENAI_VALID)
    judge_anthropic(ANTHROPIC_VALID)


@pytest.mark.parametrize(
    ("why", "path", "value", "says"),
    [
        (
            "arguments as a dict, where a JSON string is required",
            ("messages", 2, "tool_calls", 0, "function", "arguments"),
            {"q": "cat"},
            "arguments",
        ),
        (
            "arguments that are not JSON",
            ("messages", 2, "tool_calls", 0, "function", "arguments"),
            "{q: cat",
            "not a JSON object string",
        ),
        ("an unknown key", ("messages", 3, "is_error"), True, "is_error"),
        ("an id over 40 characters", ("messages", 2, "tool_calls", 0, "id"), "c" * 41, "40"),
        (
            "a tool result for another call",
            ("messages", 3, "tool_call_id"),
            "call_2",
            "'call_2'",
        ),
        (
            "an image in an assistant message",
            ("messages", 4, "content"),
            [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}],
            "messages.4",
        ),
        (
            "a bad part deep in a list (Iterable is validated lazily unless rewritten)",
            ("messages", 1, "content", 1, "image_url"),
            {"uri": "https://example.com/a.png"},
            "image_url",
        ),
        (
            "a value outside a literal",
            ("messages", 1, "content", 1, "image_url", "detail"),
            "ultra",
            "detail",
        ),
        ("an unanswered call", ("messages", 3), ..., "call_1"),
        ("an assistant message with nothing in it", ("messages", 4, "content"), "", "messages.4"),
    ],
)
def test_openai_chat_judge_rejects(why: str, path: tuple[Any, ...], value: Any, says: str) -> None:
    with pytest.raises(WireError, match="OpenAI") as caught:
        judge_openai_chat(changed(OPENAI_VALID, path, value))
    assert says in str(caught.value), why


def test_openai_chat_judge_rejects_a_result_before_its_call() -> None:
    payload = copy.deepcopy(OPENAI_VALID)
    payload["messages"][2], payload["messages"][3] = payload["messages"][3], payload["messages"][2]
    with pytest.raises(WireError, match="call_1"):
        judge_openai_chat(payload)


def test_openai_chat_judge_rejects_a_user_message_between_call_and_result() -> None:
    payload = copy.deepcopy(OPENAI_VALID)
    payload["messages"].insert(3, {"role": "user", "content": "wait"})
    with pytest.raises(WireError, match="no tool message before this message"):
        judge_openai_chat(payload)


@pytest.mark.parametrize(
    ("why", "path", "value", "says"),
    [
        (
            "a thinking block without its signature",
            ("messages", 1, "content", 0, "signature"),
            ...,
            "signature",
        ),
        (
            "tool input as a JSON string",
            ("messages", 1, "content", 2, "input"),
            '{"city": "Paris"}',
            "input",
        ),
        ("an unknown key", ("messages", 1, "content", 2, "arguments"), {}, "arguments"),
        (
            "an unknown key on a block the SDK's response models would accept",
            ("messages", 2, "content", 1, "extra"),
            1,
            "extra",
        ),
        (
            "a tool_use id with a pipe",
            ("messages", 1, "content", 2, "id"),
            "toolu|01",
            "must match",
        ),
        ("an empty text block", ("messages", 2, "content", 1, "text"), "", "non-empty"),
        (
            "a whitespace-only text block",
            ("messages", 2, "content", 1, "text"),
            " \n",
            "must contain non-whitespace text",
        ),
        ("a whitespace-only string turn", ("messages", 0, "content"), "  ", "non-whitespace"),
        ("a whitespace-only system prompt", ("system",), "\t", "system: text content blocks"),
        (
            "a whitespace-only tool result",
            ("messages", 2, "content", 0, "content"),
            " ",
            "tool_result: text content blocks must contain non-whitespace text",
        ),
        ("is_error as a string", ("messages", 2, "content", 0, "is_error"), "true", "is_error"),
        (
            "an unknown image media type",
            ("messages", 0, "content"),
            [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/bmp", "data": PNG},
                }
            ],
            "media_type",
        ),
        ("an unanswered tool_use", ("messages", 2, "content"), "Thanks", "without tool_result"),
    ],
)
def test_anthropic_judge_rejects(why: str, path: tuple[Any, ...], value: Any, says: str) -> None:
    with pytest.raises(WireError, match="Anthropic") as caught:
        judge_anthropic(changed(ANTHROPIC_VALID, path, value))
    assert says in str(caught.value), why


def test_anthropic_judge_rejects_a_tool_result_before_its_call() -> None:
    payload = copy.deepcopy(ANTHROPIC_VALID)
    result = payload["messages"][2]["content"][0]
    payload["messages"][0] = {"role": "user", "content": [result]}
    with pytest.raises(WireError, match="unexpected tool_use_id"):
        judge_anthropic(payload)


def test_anthropic_judge_rejects_text_before_a_tool_result() -> None:
    payload = copy.deepcopy(ANTHROPIC_VALID)
    payload["messages"][2]["content"].reverse()
    with pytest.raises(WireError, match="must come first"):
        judge_anthropic(payload)


def test_anthropic_judge_checks_merged_turns() -> None:
    payload = copy.deepcopy(ANTHROPIC_VALID)
    # Split into two user messages: the API merges them, so text still precedes the result.
    payload["messages"][2:] = [
        {"role": "user", "content": "Thanks"},
        {"role": "user", "content": [payload["messages"][2]["content"][0]]},
    ]
    with pytest.raises(WireError, match="must come first"):
        judge_anthropic(payload)


def test_anthropic_judge_rejects_thinking_in_a_user_turn() -> None:
    payload = copy.deepcopy(ANTHROPIC_VALID)
    payload["messages"][0] = {
        "role": "user",
        "content": [{"type": "thinking", "thinking": "x", "signature": "s"}],
    }
    with pytest.raises(WireError, match="only valid in assistant turns"):
        judge_anthropic(payload)


def test_type_problems_name_json_paths_without_union_branch_labels() -> None:
    # pydantic puts "list[union[...]]", "str" and TypedDict names in its error locations.
    require_module("openai")
    from tests.conformance.judges_responses_gemini import openai_responses_body

    body = {
        "model": "m",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_image"}]},
        ],
    }
    problems = type_problems(openai_responses_body(), body)
    assert problems
    for problem in problems:
        path = problem.partition(": ")[0]
        assert path.startswith("input.0.content.0"), problem
        assert "[" not in path, problem
        assert "Param" not in path, problem
        assert ".str" not in path, problem
