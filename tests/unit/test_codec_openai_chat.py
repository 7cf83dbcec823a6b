"""The OpenAI Chat Completions codec: exact payloads written by hand, decode, decode_response."""

from __future__ import annotations

import base64
import hashlib
import json
import math
from typing import Any

import pytest

import threadline as tl
from tests.support import part_as
from tests.support import require_module
from threadline import CodecError
from threadline import IntegrityError
from threadline import UnsupportedContentError
from threadline.codecs import openai_chat

PNG = b"\x89PNG\r\n\x1a\n\xfb\xff"
PNG_B64 = base64.b64encode(PNG).decode()  # standard alphabet: this one holds "+" and "/"
PDF = b"%PDF-1.4\n%%EOF\n"


def agent_turn() -> list[tl.Message]:
    return [
        tl.system_message("Be brief."),
        tl.user_message("What is in this image?", tl.file_part(PNG, "image/png")),
        tl.assistant_message(
            tl.reasoning_part("It looks like a cat.", signature="sig", provider="anthropic"),
            "Let me check.",
            tl.tool_call_part("call_1", "classify", {"labels": ["cat", "dog"], "top": 1}),
        ),
        tl.tool_message(tl.tool_result_part("call_1", "cat (0.97)")),
        tl.assistant_message("A cat."),
    ]


def test_an_agent_turn_is_written_exactly() -> None:
    assert PNG_B64 == "iVBORw0KGgr7/w=="
    assert openai_chat.encode(agent_turn()) == {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is in this image?"},
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64,iVBORw0KGgr7/w=="},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": "Let me check.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "classify",
                            "arguments": '{"labels":["cat","dog"],"top":1}',
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "cat (0.97)"},
            {"role": "assistant", "content": "A cat."},
        ]
    }


def test_system_argument_comes_first() -> None:
    payload = openai_chat.encode([tl.user_message("hi")], system="Be kind.")
    assert payload == {
        "messages": [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}]
    }


def test_text_parts_are_never_concatenated() -> None:
    history = [tl.user_message("one", "two"), tl.assistant_message("three", "four")]
    assert openai_chat.encode(history)["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "three"}, {"type": "text", "text": "four"}],
        },
    ]


def test_a_failed_tool_result_is_prefixed_and_decoded_back_as_an_error() -> None:
    history = [
        tl.user_message("go"),
        tl.assistant_message(tl.tool_call_part("call_1", "fetch", {})),
        tl.tool_message(tl.tool_result_part("call_1", "timeout", is_error=True)),
    ]
    payload = openai_chat.encode(history)
    assert payload["messages"][2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "[tool error] timeout",
    }
    result = openai_chat.decode(payload)[2].parts[0]
    assert result == tl.tool_result_part("call_1", "timeout", name="fetch", is_error=True)


def test_a_tool_results_image_goes_in_a_user_message_after_the_tool_messages() -> None:
    history = [
        tl.user_message("plot it"),
        tl.assistant_message(
            tl.tool_call_part("call_a", "plot", {}), tl.tool_call_part("call_b", "note", {})
        ),
        tl.tool_message(
            tl.tool_result_part("call_a", ["chart:", tl.file_part(PNG, "image/png")]),
            tl.tool_result_part("call_b", "noted"),
        ),
        tl.assistant_message("Here is the chart."),
    ]
    payload = openai_chat.encode(history)
    assert payload["messages"][2:] == [
        {
            "role": "tool",
            "tool_call_id": "call_a",
            "content": [
                {"type": "text", "text": "chart:"},
                {"type": "text", "text": "[file 1 (image/png) is in the next user message]"},
            ],
        },
        {"role": "tool", "tool_call_id": "call_b", "content": "noted"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[files from tool result call_a]"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64,iVBORw0KGgr7/w=="},
                },
            ],
        },
        {"role": "assistant", "content": "Here is the chart."},
    ]
    decoded = openai_chat.decode(payload)
    assert [message.role for message in decoded] == ["user", "assistant", "tool", "assistant"]
    assert part_as(tl.ToolResultPart, decoded[2].parts[0]).content == (
        tl.text_part("chart:"),
        tl.file_part(PNG, "image/png"),
    )


def test_files_pdf_needs_a_filename_and_audio_is_input_audio() -> None:
    history = [
        tl.user_message(
            tl.file_part(PDF, "application/pdf"),
            tl.file_part(PDF, "application/pdf", filename="paper.pdf"),
            tl.file_part(b"RIFF", "audio/wav"),
            tl.file_part("https://example.com/cat.png", "image/png"),
        )
    ]
    pdf = "data:application/pdf;base64," + base64.b64encode(PDF).decode()
    assert openai_chat.encode(history)["messages"][0]["content"] == [
        {"type": "file", "file": {"file_data": pdf, "filename": "document.pdf"}},
        {"type": "file", "file": {"file_data": pdf, "filename": "paper.pdf"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    ]


def test_the_unsupported_policy() -> None:
    history = [tl.user_message("see", tl.file_part(b"\x00", "video/mp4"))]
    assert openai_chat.encode(history)["messages"][0]["content"] == [
        {"type": "text", "text": "see"},
        {"type": "text", "text": "[video/mp4 omitted: not supported by openai]"},
    ]
    assert openai_chat.encode(history, unsupported="drop")["messages"][0]["content"] == [
        {"type": "text", "text": "see"}
    ]


def test_unsupported_raise_names_the_provider_and_the_callers_indices() -> None:
    history = [
        tl.internal_message("ui state"),  # dropped by repair: indices below are the caller's
        tl.user_message("see", tl.file_part("https://example.com/a.pdf", "application/pdf")),
    ]
    with pytest.raises(UnsupportedContentError, match=r"openai .*messages\[1\]\.parts\[1\]"):
        openai_chat.encode(history, unsupported="raise")


def test_provider_tool_parts_are_unsupported_here() -> None:
    history = [
        tl.user_message("search"),
        tl.assistant_message(
            tl.ProviderToolCallPart(id="srv_1", name="web_search", input={}, provider="anthropic"),
            "Found it.",
        ),
    ]
    assert openai_chat.encode(history)["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "[provider_tool_call omitted: not supported by openai]"},
            {"type": "text", "text": "Found it."},
        ],
    }


@pytest.mark.parametrize(
    ("reasoning", "content"),
    [
        ("auto", "Done."),
        ("drop", "Done."),
        ("text", [{"type": "text", "text": "Think."}, {"type": "text", "text": "Done."}]),
    ],
)
def test_reasoning_has_no_place_here_but_text_sends_its_text(reasoning: str, content: Any) -> None:
    history = [
        tl.user_message("q"),
        tl.assistant_message(
            tl.reasoning_part("Think.", signature="s", provider="anthropic"),
            tl.reasoning_part(encrypted="opaque", redacted=True, provider="openai"),
            "Done.",
        ),
    ]
    payload = openai_chat.encode(history, reasoning=reasoning)  # type: ignore[arg-type]
    assert payload["messages"][1] == {"role": "assistant", "content": content}


def test_ids_over_40_characters_are_mapped_the_same_for_call_and_result() -> None:
    long_id = "toolu_" + "a" * 50
    history = [
        tl.user_message("go"),
        tl.assistant_message(tl.tool_call_part(long_id, "f", {})),
        tl.tool_message(tl.tool_result_part(long_id, "ok")),
    ]
    wire_id = "call_" + hashlib.sha256(long_id.encode()).hexdigest()[:24]
    messages = openai_chat.encode(history)["messages"]
    assert messages[1]["tool_calls"][0]["id"] == wire_id
    assert messages[2]["tool_call_id"] == wire_id
    assert history[1].tool_calls[0].id == long_id  # the stored id is untouched


def test_raw_arguments_are_sent_verbatim_when_integrity_is_off() -> None:
    call = tl.tool_call_part("call_1", "f", '{"a": tru')
    history = [
        tl.user_message("go"),
        tl.assistant_message(call),
        tl.tool_message(tl.tool_result_part("call_1", "x")),
    ]
    off = openai_chat.encode(history, integrity="off")["messages"][1]["tool_calls"][0]
    assert off["function"]["arguments"] == '{"a": tru'
    repaired = openai_chat.encode(history)["messages"][1]["tool_calls"][0]
    assert repaired["function"]["arguments"] == "{}"


def test_integrity_runs_first() -> None:
    dangling = [tl.user_message("go"), tl.assistant_message(tl.tool_call_part("call_1", "f", {}))]
    messages = openai_chat.encode(dangling)["messages"]
    assert messages[2]["role"] == "tool"
    assert messages[2]["content"].startswith("[tool error] ")
    with pytest.raises(IntegrityError):
        openai_chat.encode(dangling, integrity="strict")


def test_refusals_and_custom_tool_calls_round_trip() -> None:
    history = [
        tl.user_message("q"),
        tl.assistant_message(
            tl.text_part("I can't help with that.", metadata={"openai.refusal": True}),
            tl.tool_call_part(
                "call_1", "shell", {"input": "ls -la"}, metadata={"openai.custom_tool": True}
            ),
        ),
        tl.tool_message(tl.tool_result_part("call_1", "a.txt", name="shell")),
    ]
    payload = openai_chat.encode(history)
    assert payload["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "I can't help with that."}],
        "tool_calls": [
            {"id": "call_1", "type": "custom", "custom": {"name": "shell", "input": "ls -la"}}
        ],
    }
    decoded = openai_chat.decode(payload)
    assert [m.parts for m in decoded] == [m.parts for m in history]


def test_encode_never_changes_its_input() -> None:
    history = agent_turn()
    before = tl.dump_json(history)
    openai_chat.encode(history, reasoning="text", unsupported="drop")
    assert tl.dump_json(history) == before


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="reasoning must be one of"):
        openai_chat.encode([], reasoning="sometimes")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# decode


def test_decode_reads_a_whole_request_body() -> None:
    body = {
        "model": "gpt-x",
        "temperature": 0,
        "messages": [
            {"role": "developer", "content": [{"type": "text", "text": "Rules."}]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://example.com/a.jpg", "detail": "low"},
                    },
                    {"type": "image_url", "image_url": {"url": "https://example.com/img?id=3"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "f", "arguments": "not json"},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": [{"type": "text", "text": "[tool error] boom"}],
            },
        ],
    }
    system, user, assistant, tool = openai_chat.decode(body)
    assert system.role == "system"
    assert system.text == "Rules."
    assert user.parts == (
        tl.file_part("https://example.com/a.jpg", "image/jpeg", metadata={"openai.detail": "low"}),
        tl.file_part("https://example.com/img?id=3", "image/*"),
    )
    assert assistant.parts == (
        tl.ToolCallPart(id="c1", name="f", arguments={}, raw_arguments="not json"),
    )
    assert tool.parts == (
        tl.tool_result_part("c1", [tl.text_part("boom")], name="f", is_error=True),
    )


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"messages": "hi"}, "messages: expected an array"),
        ({"messages": [{"content": "hi"}]}, r"messages\[0\]\.role: required"),
        ({"messages": [{"role": "robot", "content": "x"}]}, r"messages\[0\]\.role: unknown role"),
        (
            {
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {}}}],
                    }
                ]
            },
            r"messages\[0\]\.tool_calls\[0\]\.function\.arguments: expected a string",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "image_url", "image_url": {"url": "data:image/png;base64,!!"}}
                        ],
                    }
                ]
            },
            r"messages\[0\]\.content\[0\]\.image_url\.url: not valid base64",
        ),
        ({"prompt": "hi"}, "messages: required"),
    ],
)
def test_a_payload_not_of_the_format_names_the_format_and_the_path(payload: Any, path: str) -> None:
    with pytest.raises(CodecError, match=f"OpenAI Chat Completions payload: {path}"):
        openai_chat.decode(payload)


# ---------------------------------------------------------------------------------------------
# decode_response, on responses built with the SDK's own response model


def chat_completion(message: dict[str, Any], finish_reason: str = "stop") -> Any:
    types = require_module("openai.types.chat")
    return types.ChatCompletion.model_validate(
        {
            "id": "chatcmpl-abc123",
            "object": "chat.completion",
            "created": 1_770_000_000,
            "model": "gpt-4.1-2025-04-14",
            "choices": [
                {"index": 0, "finish_reason": finish_reason, "logprobs": None, "message": message}
            ],
            "usage": {
                "prompt_tokens": 120,
                "completion_tokens": 35,
                "total_tokens": 155,
                "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
            },
        }
    )


def test_decode_response_reads_text_tool_calls_and_usage() -> None:
    response = chat_completion(
        {
            "role": "assistant",
            "content": "Checking both.",
            "tool_calls": [
                {
                    "id": "call_w",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
                },
                {
                    "id": "call_t",
                    "type": "function",
                    "function": {"name": "time", "arguments": '{"tz": "Europe/Par'},
                },
            ],
        },
        finish_reason="tool_calls",
    )
    for given in (response, response.model_dump(mode="json"), response.model_dump_json()):
        message = openai_chat.decode_response(given)
        assert message.role == "assistant"
        assert message.parts == (
            tl.text_part("Checking both."),
            tl.tool_call_part("call_w", "weather", {"city": "Paris"}),
            tl.ToolCallPart(
                id="call_t", name="time", arguments={}, raw_arguments='{"tz": "Europe/Par'
            ),
        )
        assert message.metadata == {
            "provider": "openai",
            "model": "gpt-4.1-2025-04-14",
            "response_id": "chatcmpl-abc123",
            "stop_reason": "tool_calls",
            "usage": {  # prompt_tokens counts the cached ones too
                "input_tokens": 120,
                "output_tokens": 35,
                "cache_read_tokens": 64,
                "cache_write_tokens": 0,
                "reasoning_tokens": 0,
            },
            "openai.usage": {
                "prompt_tokens": 120,
                "completion_tokens": 35,
                "total_tokens": 155,
                "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
            },
        }


def test_decode_response_reads_a_refusal_and_annotations() -> None:
    annotation = {
        "type": "url_citation",
        "url_citation": {
            "start_index": 0,
            "end_index": 5,
            "title": "Src",
            "url": "https://example.com",
        },
    }
    message = openai_chat.decode_response(
        chat_completion({"role": "assistant", "content": "Paris", "annotations": [annotation]})
    )
    assert message.parts == (tl.text_part("Paris", metadata={"openai.annotations": [annotation]}),)
    refused = openai_chat.decode_response(
        chat_completion({"role": "assistant", "content": None, "refusal": "I can't."})
    )
    assert refused.parts == (tl.text_part("I can't.", metadata={"openai.refusal": True}),)


def test_a_decoded_response_goes_back_out_unchanged() -> None:
    response = chat_completion(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "f", "arguments": '{"a":1}'},
                }
            ],
        }
    )
    history = [
        tl.user_message("go"),
        openai_chat.decode_response(response),
        tl.tool_message(tl.tool_result_part("call_1", "ok")),
    ]
    sent = openai_chat.encode(history)["messages"][1]
    assert sent == json.loads(
        json.dumps(
            response.choices[0].message.model_dump(exclude_none=True, exclude={"annotations"})
        )
    )


@pytest.mark.parametrize("response", [{}, {"choices": []}, {"choices": [{"message": 3}]}, "[1, 2"])
def test_decode_response_of_something_else_raises_codec_error(response: Any) -> None:
    with pytest.raises(CodecError, match="OpenAI Chat Completions"):
        openai_chat.decode_response(response)


# ---------------------------------------------------------------------------------------------
# Hostile values: a payload given as Python values (or JSON text read with NaN) need not be
# JSON; decode raises CodecError naming the value, never pydantic's or a TypeError.


def user_content(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": list(blocks)}]}


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        (
            user_content({"type": "image_url", "image_url": {"url": "data:png;base64,AA=="}}),
            r"messages\[0\]\.content\[0\]\.image_url\.url: the data: URL's 'png' is not a media",
        ),
        (
            user_content(
                {"type": "file", "file": {"file_data": "data:pdf;base64,AA==", "filename": "a"}}
            ),
            r"messages\[0\]\.content\[0\]\.file\.file_data: the data: URL's 'pdf'",
        ),
        (
            user_content({"type": "image_url", "image_url": {"url": "https://e/a", "detail": [1]}}),
            r"messages\[0\]\.content\[0\]\.image_url\.detail: expected a string",
        ),
        (
            {
                "messages": [
                    {"role": "assistant", "tool_calls": [{"id": "c", "type": [], "function": {}}]}
                ]
            },
            r"messages\[0\]\.tool_calls\[0\]\.type: expected a string",
        ),
    ],
)
def test_values_a_message_cannot_hold_are_codec_errors(payload: Any, problem: str) -> None:
    with pytest.raises(CodecError, match=f"OpenAI Chat Completions payload: {problem}"):
        openai_chat.decode(payload)


def completion(usage: Any, **message: Any) -> dict[str, Any]:
    return {
        "id": "r",
        "model": "m",
        "choices": [{"message": {"role": "assistant", "content": "hi", **message}}],
        "usage": usage,
    }


@pytest.mark.parametrize(
    ("response", "problem"),
    [
        (completion({"prompt_tokens": 1.5}), r"usage\.prompt_tokens: expected a count"),
        (completion({"completion_tokens": [1]}), r"usage\.completion_tokens: expected a count"),
        (completion({"details": {"n": math.nan}}), r"usage\.details\.n: NaN is not a JSON value"),
        (
            completion(None, annotations=[{"url": b"x"}]),
            r"choices\[0\]\.message\.annotations\[0\]\.url: a bytes value is not JSON",
        ),
    ],
)
def test_responses_with_values_a_message_cannot_hold_are_codec_errors(
    response: Any, problem: str
) -> None:
    with pytest.raises(CodecError, match=f"Chat Completions response payload: {problem}"):
        openai_chat.decode_response(response)


def test_usage_counts_may_be_null() -> None:
    message = openai_chat.decode_response(
        completion({"prompt_tokens": 2, "completion_tokens": None})
    )
    assert message.usage == tl.Usage(input_tokens=2)
    assert message.metadata["openai.usage"] == {"prompt_tokens": 2}


def test_nan_read_from_response_text_is_a_codec_error() -> None:
    # The JSON parser accepts NaN; a message cannot hold it.
    text = '{"id": "r", "choices": [{"message": {"content": "x"}}], "usage": {"x": NaN}}'
    with pytest.raises(CodecError, match=r"usage\.x: NaN is not a JSON value"):
        openai_chat.decode_response(text)
