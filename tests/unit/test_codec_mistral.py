"""The Mistral chat codec: exact payloads written by hand, ids, decode, decode_response."""

from __future__ import annotations

import base64
import math
import re
from typing import Any

import pytest

import threadline as tl
from tests.support import require_module
from threadline import CodecError
from threadline import UnsupportedContentError
from threadline.codecs import mistral

PNG = b"\x89PNG\r\n\x1a\n\xfb\xff"
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
PDF_URL = "https://example.com/paper.pdf"
NINE = re.compile(r"[a-zA-Z0-9]{9}")


def agent_turn() -> list[tl.Message]:
    return [
        tl.system_message("Be brief."),
        tl.user_message("What is in this image?", tl.file_part(PNG, "image/png")),
        tl.assistant_message(
            tl.reasoning_part("It looks like a cat.", signature="sig-1", provider="mistral"),
            "Let me check.",
            tl.tool_call_part("call_1", "classify", {"labels": ["cat", "dog"], "top": 1}),
        ),
        tl.tool_message(tl.tool_result_part("call_1", "cat (0.97)")),
        tl.assistant_message("A cat."),
        tl.user_message("Thanks"),
    ]


def test_an_agent_turn_is_written_exactly() -> None:
    assert mistral.encode(agent_turn()) == {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is in this image?"},
                    {"type": "image_url", "image_url": "data:image/png;base64,iVBORw0KGgr7/w=="},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": [{"type": "text", "text": "It looks like a cat."}],
                        "signature": "sig-1",
                    },
                    {"type": "text", "text": "Let me check."},
                ],
                "tool_calls": [
                    {
                        "id": "Bu09e4fdz",
                        "type": "function",
                        "function": {
                            "name": "classify",
                            "arguments": '{"labels":["cat","dog"],"top":1}',
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "Bu09e4fdz",
                "name": "classify",
                "content": "cat (0.97)",
            },
            {"role": "assistant", "content": "A cat."},
            {"role": "user", "content": "Thanks"},
        ]
    }


def test_the_round_trip_keeps_everything_but_the_mapped_id() -> None:
    history = agent_turn()
    decoded = mistral.decode(mistral.encode(history))
    assert [m.role for m in decoded] == [m.role for m in history]
    call = decoded[2].tool_calls[0]
    assert call == tl.tool_call_part("Bu09e4fdz", "classify", {"labels": ["cat", "dog"], "top": 1})
    assert decoded[3].parts == (tl.tool_result_part("Bu09e4fdz", "cat (0.97)", name="classify"),)
    assert decoded[2].parts[0] == tl.reasoning_part(
        "It looks like a cat.", signature="sig-1", provider="mistral"
    )


# ---------------------------------------------------------------------------------------------
# ids


def test_ids_are_nine_alphanumerics_the_same_for_call_and_result() -> None:
    ids = ["call_1", "toolu_" + "x" * 80, "", "ünïcödé", "call 2", "a.b:c|d"]
    history: list[tl.Message] = [tl.user_message("go")]
    for call_id in ids:
        history.append(tl.assistant_message(tl.tool_call_part(call_id, "f", {})))
        history.append(tl.tool_message(tl.tool_result_part(call_id, "ok")))
    messages = mistral.encode(history)["messages"]
    calls = [m["tool_calls"][0]["id"] for m in messages if m["role"] == "assistant"]
    results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert calls == results
    assert all(NINE.fullmatch(wire_id) for wire_id in calls)
    assert len(set(calls)) == len(ids)
    assert calls == [
        m["tool_calls"][0]["id"]
        for m in mistral.encode(history)["messages"]
        if m["role"] == "assistant"
    ]
    assert history[1].tool_calls[0].id == "call_1"  # stored ids never change


def test_ids_mistral_issued_are_sent_as_they_are() -> None:
    history = [
        tl.user_message("go"),
        tl.assistant_message(tl.tool_call_part("D681PevKs", "f", {})),
        tl.tool_message(tl.tool_result_part("D681PevKs", "ok")),
    ]
    assert mistral.encode(history)["messages"][1]["tool_calls"][0]["id"] == "D681PevKs"


def test_a_minted_id_never_takes_an_id_already_in_the_history() -> None:
    minted = mistral.encode(
        [
            tl.assistant_message(tl.tool_call_part("call_1", "f", {})),
            tl.tool_message(tl.tool_result_part("call_1", "x")),
        ]
    )["messages"][1]["tool_calls"][0]["id"]
    assert minted == "Bu09e4fdz"
    history = [
        tl.user_message("go"),
        tl.assistant_message(
            tl.tool_call_part("call_1", "f", {}), tl.tool_call_part(minted, "g", {})
        ),
        tl.tool_message(tl.tool_result_part("call_1", "x"), tl.tool_result_part(minted, "y")),
    ]
    calls = mistral.encode(history)["messages"][1]["tool_calls"]
    assert calls[1]["id"] == minted  # the valid id keeps its place
    assert calls[0]["id"] != minted
    assert NINE.fullmatch(calls[0]["id"])


# ---------------------------------------------------------------------------------------------
# order and roles


def test_a_system_message_after_an_assistant_or_tool_message_is_sent_as_user() -> None:
    history = [
        tl.user_message("hi"),
        tl.system_message("Be formal."),  # after a user message: allowed
        tl.assistant_message("Hello."),
        tl.system_message("Now answer in French."),
    ]
    payload = mistral.encode(history)
    assert payload["messages"] == [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "Be formal."},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "<system>\nNow answer in French.\n</system>"},
    ]
    decoded = mistral.decode(payload)
    assert [(m.role, m.text) for m in decoded][2:] == [
        ("assistant", "Hello."),
        ("system", "Now answer in French."),
    ]


def test_a_leading_assistant_message_gets_a_user_message_before_it() -> None:
    history = [
        tl.assistant_message(tl.tool_call_part("call_1", "f", {})),
        tl.tool_message(tl.tool_result_part("call_1", "ok")),
    ]
    payload = mistral.encode(history)
    assert payload["messages"][0] == {"role": "user", "content": "[conversation start]"}
    assert [m.role for m in mistral.decode(payload)] == ["assistant", "tool"]
    with_system = mistral.encode(history, system="Be brief.")
    assert [m["role"] for m in with_system["messages"]] == ["system", "assistant", "tool"]


def test_text_parts_are_never_concatenated() -> None:
    history = [tl.user_message("one", "two"), tl.assistant_message("three", "four")]
    assert mistral.encode(history)["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "three"}, {"type": "text", "text": "four"}],
        },
    ]


# ---------------------------------------------------------------------------------------------
# tool results


def test_a_failed_tool_result_is_prefixed_and_decoded_back_as_an_error() -> None:
    history = [
        tl.user_message("go"),
        tl.assistant_message(tl.tool_call_part("D681PevKs", "fetch", {})),
        tl.tool_message(tl.tool_result_part("D681PevKs", "timeout", is_error=True)),
    ]
    payload = mistral.encode(history)
    assert payload["messages"][2] == {
        "role": "tool",
        "tool_call_id": "D681PevKs",
        "name": "fetch",
        "content": "[tool error] timeout",
    }
    result = mistral.decode(payload)[2].parts[0]
    assert result == tl.tool_result_part("D681PevKs", "timeout", name="fetch", is_error=True)


def test_each_call_gets_one_tool_message_named_after_the_call() -> None:
    history = [
        tl.user_message("go"),
        tl.assistant_message(
            tl.tool_call_part("aaaaaaaaa", "weather", {}),
            tl.tool_call_part("bbbbbbbbb", "time", {}),
        ),
        tl.tool_message(
            tl.tool_result_part("aaaaaaaaa", "sunny"), tl.tool_result_part("bbbbbbbbb", "noon")
        ),
    ]
    assert mistral.encode(history)["messages"][2:] == [
        {"role": "tool", "tool_call_id": "aaaaaaaaa", "name": "weather", "content": "sunny"},
        {"role": "tool", "tool_call_id": "bbbbbbbbb", "name": "time", "content": "noon"},
    ]


def test_a_tool_results_image_goes_in_a_user_message_after_the_tool_messages() -> None:
    """After an assistant message ``[tool results received]``: Mistral refuses a user message
    right after a tool message."""
    history = [
        tl.user_message("plot it"),
        tl.assistant_message(
            tl.tool_call_part("aaaaaaaaa", "plot", {}), tl.tool_call_part("bbbbbbbbb", "note", {})
        ),
        tl.tool_message(
            tl.tool_result_part(
                "aaaaaaaaa", ["chart:", tl.file_part(PNG, "image/png")], is_error=True
            ),
            tl.tool_result_part("bbbbbbbbb", "noted"),
        ),
        tl.assistant_message("Here is the chart."),
    ]
    payload = mistral.encode(history)
    assert payload["messages"][2:] == [
        {
            "role": "tool",
            "tool_call_id": "aaaaaaaaa",
            "name": "plot",
            "content": [
                {"type": "text", "text": "[tool error] chart:"},
                {"type": "text", "text": "[file 1 (image/png) is in the next user message]"},
            ],
        },
        {"role": "tool", "tool_call_id": "bbbbbbbbb", "name": "note", "content": "noted"},
        {"role": "assistant", "content": "[tool results received]"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[files from tool result aaaaaaaaa]"},
                {"type": "image_url", "image_url": "data:image/png;base64,iVBORw0KGgr7/w=="},
            ],
        },
        {"role": "assistant", "content": "Here is the chart."},
    ]
    decoded = mistral.decode(payload)
    assert [m.role for m in decoded] == ["user", "assistant", "tool", "assistant"]
    assert decoded[2].parts[0] == tl.tool_result_part(
        "aaaaaaaaa", ["chart:", tl.file_part(PNG, "image/png")], name="plot", is_error=True
    )


# ---------------------------------------------------------------------------------------------
# files


def test_files_by_url_where_bytes_cannot_go() -> None:
    history = [
        tl.user_message(
            tl.file_part(PDF_URL, "application/pdf", filename="paper.pdf"),
            tl.file_part(b"%PDF-1.4", "application/pdf"),
            tl.file_part("https://example.com/cat.png", "image/png"),
            tl.file_part(WAV, "audio/wav"),
            tl.file_part(b"not audio", "audio/wav"),
            tl.file_part("gs://bucket/cat.png", "image/png"),
        )
    ]
    assert mistral.encode(history)["messages"][0]["content"] == [
        {"type": "document_url", "document_url": PDF_URL, "document_name": "paper.pdf"},
        {"type": "text", "text": "[application/pdf omitted: not supported by mistral]"},
        {"type": "image_url", "image_url": "https://example.com/cat.png"},
        {"type": "input_audio", "input_audio": base64.b64encode(WAV).decode()},
        {"type": "text", "text": "[audio/wav omitted: not supported by mistral]"},
        {"type": "text", "text": "[image/png omitted: not supported by mistral]"},
    ]
    decoded = mistral.decode(mistral.encode(history, unsupported="drop"))
    assert decoded[0].parts == (
        tl.file_part(PDF_URL, "application/pdf", filename="paper.pdf"),
        tl.file_part("https://example.com/cat.png", "image/png"),
        tl.file_part(WAV, "audio/wav"),
    )


def test_unsupported_raise_names_the_provider_and_the_callers_indices() -> None:
    history = [
        tl.internal_message("ui state"),  # dropped by repair: indices below are the caller's
        tl.user_message("see", tl.file_part(b"%PDF-1.4", "application/pdf")),
    ]
    with pytest.raises(
        UnsupportedContentError, match=r"mistral .*messages\[1\]\.parts\[1\].*by http\(s\) URL only"
    ):
        mistral.encode(history, unsupported="raise")


# ---------------------------------------------------------------------------------------------
# reasoning


def reasoning_history() -> list[tl.Message]:
    return [
        tl.user_message("q"),
        tl.assistant_message(
            tl.reasoning_part("Mine.", signature="s1", provider="mistral", model="magistral-small"),
            tl.reasoning_part("Theirs.", signature="s2", provider="anthropic"),
            tl.reasoning_part(encrypted="opaque", redacted=True, provider="mistral"),
            "Done.",
        ),
    ]


@pytest.mark.parametrize(
    ("kw", "content"),
    [
        (
            {},
            [
                {
                    "type": "thinking",
                    "thinking": [{"type": "text", "text": "Mine."}],
                    "signature": "s1",
                },
                {"type": "text", "text": "Done."},
            ],
        ),
        (
            {"model": "magistral-small"},
            [
                {
                    "type": "thinking",
                    "thinking": [{"type": "text", "text": "Mine."}],
                    "signature": "s1",
                },
                {"type": "text", "text": "Done."},
            ],
        ),
        ({"model": "magistral-medium"}, "Done."),
        ({"reasoning": "drop"}, "Done."),
        (
            {"reasoning": "text", "model": "magistral-medium"},
            [
                {"type": "text", "text": "Mine."},
                {"type": "text", "text": "Theirs."},
                {"type": "text", "text": "Done."},
            ],
        ),
    ],
)
def test_thinking_is_replayed_only_to_mistral_and_its_model(
    kw: dict[str, Any], content: Any
) -> None:
    assert mistral.encode(reasoning_history(), **kw)["messages"][1] == {
        "role": "assistant",
        "content": content,
    }


def test_raw_arguments_are_sent_verbatim_when_integrity_is_off() -> None:
    call = tl.tool_call_part("aaaaaaaaa", "f", '{"a": tru')
    history = [
        tl.user_message("go"),
        tl.assistant_message(call),
        tl.tool_message(tl.tool_result_part("aaaaaaaaa", "x")),
    ]
    off = mistral.encode(history, integrity="off")["messages"][1]["tool_calls"][0]
    assert off["function"]["arguments"] == '{"a": tru'
    assert mistral.decode(mistral.encode(history, integrity="off"))[1].parts == (call,)
    repaired = mistral.encode(history)["messages"][1]["tool_calls"][0]
    assert repaired["function"]["arguments"] == "{}"


def test_encode_never_changes_its_input() -> None:
    history = agent_turn()
    before = tl.dump_json(history)
    mistral.encode(history, reasoning="text", unsupported="drop")
    assert tl.dump_json(history) == before


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="unsupported must be one of"):
        mistral.encode([], unsupported="sometimes")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# decode


def test_decode_reads_a_whole_request_body_in_every_spelling() -> None:
    body = {
        "model": "mistral-large-latest",
        "temperature": 0.2,
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "Rules."}]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://example.com/a.jpg", "detail": "low"},
                    },
                    {"type": "document_url", "document_url": "https://example.com/d"},
                ],
            },
            {"role": "user", "content": None},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "plain string, as mistral_common writes it"}
                ],
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "f", "arguments": {"x": [1, 2]}},
                        "index": 0,
                    },
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "g", "arguments": "not json"},
                    },
                ],
                "prefix": False,
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "name": "f",
                "content": [{"type": "text", "text": "[tool error] boom"}],
            },
            {"role": "tool", "tool_call_id": "c2", "content": None},
        ],
    }
    system, user, assistant, tool = mistral.decode(body)
    assert system.parts == (tl.text_part("Rules."),)
    assert user.parts == (
        tl.file_part("https://example.com/a.jpg", "image/jpeg"),
        tl.file_part("https://example.com/d", "application/pdf"),
    )
    assert assistant.parts == (
        tl.reasoning_part("plain string, as mistral_common writes it", provider="mistral"),
        tl.tool_call_part("c1", "f", {"x": [1, 2]}),
        tl.ToolCallPart(id="c2", name="g", arguments={}, raw_arguments="not json"),
    )
    assert tool.parts == (
        tl.tool_result_part("c1", [tl.text_part("boom")], name="f", is_error=True),
        tl.tool_result_part("c2", ""),
    )


def test_a_thinking_chunk_with_references_is_kept_whole_and_replayed_whole() -> None:
    thinking = [
        {"type": "text", "text": "Per the source, "},
        {"type": "reference", "reference_ids": [1, 2]},
        {"type": "text", "text": "it rains."},
    ]
    payload = {
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": thinking}]},
        ]
    }
    reasoning = mistral.decode(payload)[1].parts[0]
    assert reasoning == tl.reasoning_part(
        "Per the source, it rains.", provider="mistral", metadata={"mistral.thinking": thinking}
    )
    assert mistral.encode(mistral.decode(payload))["messages"][1]["content"] == [
        {"type": "thinking", "thinking": thinking}
    ]


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"messages": "hi"}, "messages: expected an array"),
        ({"messages": [{"content": "hi"}]}, r"messages\[0\]\.role: required"),
        ({"messages": [{"role": "robot", "content": "x"}]}, r"messages\[0\]\.role: unknown role"),
        (
            {"messages": [{"role": "user", "content": [{"type": "file", "file_id": "f-1"}]}]},
            r"messages\[0\]\.content\[0\]\.type: a 'file' chunk cannot be stored",
        ),
        (
            {"messages": [{"role": "tool", "content": "x"}]},
            r"messages\[0\]\.tool_call_id: required",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "input_audio", "input_audio": "!!"}]}
                ]
            },
            r"messages\[0\]\.content\[0\]\.input_audio: not valid base64",
        ),
        ({"prompt": "hi"}, "messages: required"),
    ],
)
def test_a_payload_not_of_the_format_names_the_format_and_the_path(payload: Any, path: str) -> None:
    with pytest.raises(CodecError, match=f"Mistral chat payload: {path}"):
        mistral.decode(payload)


# ---------------------------------------------------------------------------------------------
# decode_response, on responses built with the SDK's own response model


def completion(message: dict[str, Any], finish_reason: str = "stop") -> Any:
    models = require_module("mistralai.client.models")
    return models.ChatCompletionResponse.model_validate(
        {
            "id": "cmpl-e5cc70bb28c444948073e77776eb30ef",
            "object": "chat.completion",
            "model": "magistral-medium-2509",
            "created": 1_770_000_000,
            "usage": {"prompt_tokens": 120, "completion_tokens": 35, "total_tokens": 155},
            "choices": [{"index": 0, "finish_reason": finish_reason, "message": message}],
        }
    )


def test_decode_response_reads_thinking_text_tool_calls_and_usage() -> None:
    response = completion(
        {
            "role": "assistant",
            "content": [
                {
                    "type": "thinking",
                    "thinking": [{"type": "text", "text": "Two tools."}],
                    "signature": "sg",
                },
                {"type": "text", "text": "Checking both."},
            ],
            "tool_calls": [
                {
                    "id": "D681PevKs",
                    "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
                },
                {
                    "id": "Q2x9vB7rT",
                    "function": {"name": "time", "arguments": '{"tz": "Europe/Par'},
                },
            ],
        },
        finish_reason="tool_calls",
    )
    for given in (response, response.model_dump(mode="json"), response.model_dump_json()):
        message = mistral.decode_response(given)
        assert message.parts == (
            tl.reasoning_part(
                "Two tools.", signature="sg", provider="mistral", model="magistral-medium-2509"
            ),
            tl.text_part("Checking both."),
            tl.tool_call_part("D681PevKs", "weather", {"city": "Paris"}),
            tl.ToolCallPart(
                id="Q2x9vB7rT", name="time", arguments={}, raw_arguments='{"tz": "Europe/Par'
            ),
        )
        assert message.metadata == {
            "provider": "mistral",
            "model": "magistral-medium-2509",
            "response_id": "cmpl-e5cc70bb28c444948073e77776eb30ef",
            "stop_reason": "tool_calls",
            "usage": {
                "input_tokens": 120,
                "output_tokens": 35,
                "cache_read_tokens": 0,
                "cache_write_tokens": 0,
                "reasoning_tokens": 0,
            },
            "mistral.usage": {"prompt_tokens": 120, "completion_tokens": 35, "total_tokens": 155},
        }


def test_decode_response_reads_plain_text() -> None:
    message = mistral.decode_response(completion({"role": "assistant", "content": "Paris."}))
    assert message.parts == (tl.text_part("Paris."),)
    assert message.metadata["stop_reason"] == "stop"


@pytest.mark.parametrize("response", [{}, {"choices": []}, {"choices": [{"message": 3}]}, "[1, 2"])
def test_decode_response_of_something_else_raises_codec_error(response: Any) -> None:
    with pytest.raises(CodecError, match="Mistral chat"):
        mistral.decode_response(response)


# ---------------------------------------------------------------------------------------------
# Hostile values: a payload given as Python values (or JSON text read with NaN) need not be
# JSON; decode raises CodecError naming the value, never pydantic's or a TypeError.


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        (
            {"role": "user", "content": [{"type": "image_url", "image_url": "data:x;base64,AA=="}]},
            r"messages\[0\]\.content\[0\]\.image_url: the data: URL's 'x' is not a media type",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "document_url", "document_url": "data:pdf;base64,AA=="}],
            },
            r"messages\[0\]\.content\[0\]\.document_url: the data: URL's 'pdf'",
        ),
        (
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": [{"type": "x", "n": math.nan}]}],
            },
            r"messages\[0\]\.content\[0\]\.thinking\[0\]\.n: NaN is not a JSON value",
        ),
        (
            {
                "role": "assistant",
                "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": b""}}}],
            },
            r"messages\[0\]\.tool_calls\[0\]\.function\.arguments\.a: a bytes value is not JSON",
        ),
    ],
)
def test_values_a_message_cannot_hold_are_codec_errors(
    message: dict[str, Any], problem: str
) -> None:
    with pytest.raises(CodecError, match=f"Mistral chat payload: {problem}"):
        mistral.decode([message])


def test_a_data_url_without_a_media_type_is_plain_text() -> None:
    chunk = {"type": "image_url", "image_url": "data:;base64,AA=="}  # as data: URLs say
    [decoded] = mistral.decode([{"role": "user", "content": [chunk]}])
    assert decoded.parts == (tl.file_part(b"\x00", "text/plain"),)


def test_usage_that_is_not_counts_is_a_codec_error() -> None:
    document = {
        "id": "r",
        "choices": [{"message": {"role": "assistant", "content": "hi"}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": None},
    }
    assert mistral.decode_response(document).usage == tl.Usage(input_tokens=3)
    document["usage"] = {"prompt_tokens": {"n": 3}}
    with pytest.raises(CodecError, match=r"usage\.prompt_tokens: expected a count"):
        mistral.decode_response(document)
