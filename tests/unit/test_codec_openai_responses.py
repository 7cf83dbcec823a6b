"""The OpenAI Responses codec: exact payloads written by hand, reasoning continuity, decode,
decode_response."""

from __future__ import annotations

import base64
import hashlib
import math
from typing import Any

import pytest

import threadline as tl
from tests.support import part_as
from tests.support import require_module
from threadline import CodecError
from threadline import IntegrityError
from threadline import UnsupportedContentError
from threadline.codecs import openai_responses

PNG = b"\x89PNG\r\n\x1a\n\xfb\xff"
PNG_URL = "data:image/png;base64,iVBORw0KGgr7/w=="  # standard alphabet: "+" and "/"
PDF = b"%PDF-1.4\n%%EOF\n"
PDF_URL = "data:application/pdf;base64," + base64.b64encode(PDF).decode()


def reasoning(item_id: str = "rs_1", **kw: Any) -> tl.ReasoningPart:
    fields: dict[str, Any] = {
        "provider": "openai",
        "model": "gpt-5",
        "item_id": item_id,
        "summary": ("Check the label.",),
        "encrypted": "gAAAA-opaque",
    }
    return tl.reasoning_part("", **{**fields, **kw})


def call(call_id: str, name: str, arguments: Any, item_id: str | None = None) -> tl.ToolCallPart:
    part = tl.tool_call_part(call_id, name, arguments)
    return part if item_id is None else part.with_metadata({"openai.item_id": item_id})


def agent_turn() -> list[tl.Message]:
    return [
        tl.system_message("Be brief."),
        tl.user_message("What is in this image?", tl.file_part(PNG, "image/png")),
        tl.assistant_message(
            reasoning(),
            call("call_1", "classify", {"labels": ["cat", "dog"], "top": 1}, "fc_1"),
        ),
        tl.tool_message(tl.tool_result_part("call_1", "cat (0.97)")),
        tl.assistant_message(
            tl.text_part(
                "A cat.", metadata={"openai.item_id": "msg_2", "openai.phase": "final_answer"}
            )
        ),
    ]


def test_an_agent_turn_is_written_exactly() -> None:
    assert openai_responses.encode(agent_turn(), system="Answer in English.") == {
        "instructions": "Answer in English.",
        "input": [
            {"type": "message", "role": "system", "content": "Be brief."},
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "What is in this image?"},
                    {"type": "input_image", "image_url": PNG_URL, "detail": "auto"},
                ],
            },
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Check the label."}],
                "encrypted_content": "gAAAA-opaque",
            },
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "classify",
                "arguments": '{"labels":["cat","dog"],"top":1}',
                "id": "fc_1",
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "cat (0.97)"},
            {
                "type": "message",
                "role": "assistant",
                "id": "msg_2",
                "status": "completed",
                "phase": "final_answer",
                "content": [{"type": "output_text", "text": "A cat.", "annotations": []}],
            },
        ],
    }


def test_decode_reads_the_agent_turn_back() -> None:
    history = agent_turn()
    decoded = openai_responses.decode(openai_responses.encode(history))
    assert [message.role for message in decoded] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert decoded[2].parts == (
        reasoning(model=None),  # the model is not on the wire
        history[2].parts[1],
    )
    assert decoded[3].parts == (tl.tool_result_part("call_1", "cat (0.97)", name="classify"),)
    assert decoded[4].parts == history[4].parts


def test_assistant_text_without_an_item_id_is_one_plain_message_per_part() -> None:
    history = [tl.user_message("hi"), tl.assistant_message("one", "", "two")]
    assert openai_responses.encode(history)["input"][1:] == [
        {"type": "message", "role": "assistant", "content": "one"},
        {"type": "message", "role": "assistant", "content": "two"},
    ]


def test_texts_of_one_output_message_go_back_as_that_message() -> None:
    annotation = {
        "type": "url_citation",
        "start_index": 0,
        "end_index": 5,
        "title": "Weather",
        "url": "https://example.com",
    }
    history = [
        tl.user_message("q"),
        tl.assistant_message(
            tl.text_part(
                "Sunny", metadata={"openai.item_id": "msg_9", "openai.annotations": [annotation]}
            ),
            tl.text_part(
                "I can't say more.", metadata={"openai.item_id": "msg_9", "openai.refusal": True}
            ),
        ),
    ]
    payload = openai_responses.encode(history)
    assert payload["input"][1] == {
        "type": "message",
        "role": "assistant",
        "id": "msg_9",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": "Sunny", "annotations": [annotation]},
            {"type": "refusal", "refusal": "I can't say more."},
        ],
    }
    assert openai_responses.decode(payload)[1].parts == history[1].parts


def test_tool_outputs_carry_text_images_and_files_and_failures_are_prefixed() -> None:
    history = [
        tl.user_message("plot it"),
        tl.assistant_message(call("call_a", "plot", {}), call("call_b", "fetch", {})),
        tl.tool_message(
            tl.tool_result_part(
                "call_a",
                [
                    tl.file_part(PNG, "image/png"),
                    "chart",
                    tl.file_part(PDF, "application/pdf", filename="a.pdf"),
                ],
                is_error=True,
            ),
            tl.tool_result_part("call_b", "timeout", is_error=True),
        ),
    ]
    payload = openai_responses.encode(history)
    assert payload["input"][3:] == [
        {
            "type": "function_call_output",
            "call_id": "call_a",
            "output": [
                {"type": "input_text", "text": "[tool error] "},
                {"type": "input_image", "image_url": PNG_URL, "detail": "auto"},
                {"type": "input_text", "text": "chart"},
                {"type": "input_file", "file_data": PDF_URL, "filename": "a.pdf"},
            ],
        },
        {"type": "function_call_output", "call_id": "call_b", "output": "[tool error] timeout"},
    ]
    results = openai_responses.decode(payload)[2].parts
    assert results == (
        tl.tool_result_part(
            "call_a",
            part_as(tl.ToolResultPart, history[2].parts[0]).content,
            name="plot",
            is_error=True,
        ),
        tl.tool_result_part("call_b", "timeout", name="fetch", is_error=True),
    )


def test_files_in_user_messages() -> None:
    history = [
        tl.user_message(
            tl.file_part(PDF, "application/pdf"),
            tl.file_part("https://example.com/paper.pdf", "application/pdf"),
            tl.file_part(
                "https://example.com/cat.png", "image/png", metadata={"openai.detail": "low"}
            ),
            tl.file_part(b"RIFF", "audio/wav"),
        )
    ]
    assert openai_responses.encode(history)["input"][0]["content"] == [
        {"type": "input_file", "file_data": PDF_URL, "filename": "document.pdf"},
        {"type": "input_file", "file_url": "https://example.com/paper.pdf"},
        {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "low"},
        {"type": "input_text", "text": "[audio/wav omitted: not supported by openai]"},
    ]
    with pytest.raises(UnsupportedContentError, match=r"openai .*messages\[0\]\.parts\[3\]"):
        openai_responses.encode(history, unsupported="raise")


def test_ids_over_64_characters_are_mapped_the_same_for_call_and_output() -> None:
    long_id = "toolu_" + "a" * 70
    history = [
        tl.user_message("go"),
        tl.assistant_message(call(long_id, "f", {})),
        tl.tool_message(tl.tool_result_part(long_id, "ok")),
    ]
    wire_id = "call_" + hashlib.sha256(long_id.encode()).hexdigest()[:24]
    items = openai_responses.encode(history)["input"]
    assert items[1]["call_id"] == items[2]["call_id"] == wire_id
    assert history[1].tool_calls[0].id == long_id


def test_custom_tool_calls_round_trip() -> None:
    shell = tl.tool_call_part(
        "call_1", "shell", {"input": "ls"}, metadata={"openai.custom_tool": True}
    )
    history = [
        tl.user_message("list"),
        tl.assistant_message(shell),
        tl.tool_message(tl.tool_result_part("call_1", "a.txt", name="shell")),
    ]
    payload = openai_responses.encode(history)
    assert payload["input"][1:] == [
        {"type": "custom_tool_call", "call_id": "call_1", "name": "shell", "input": "ls"},
        {"type": "custom_tool_call_output", "call_id": "call_1", "output": "a.txt"},
    ]
    assert [m.parts for m in openai_responses.decode(payload)] == [m.parts for m in history]


def test_integrity_runs_first() -> None:
    dangling = [tl.user_message("go"), tl.assistant_message(call("call_1", "f", {}))]
    items = openai_responses.encode(dangling)["input"]
    assert items[2]["type"] == "function_call_output"
    assert items[2]["output"].startswith("[tool error] ")
    with pytest.raises(IntegrityError):
        openai_responses.encode(dangling, integrity="strict")


# ---------------------------------------------------------------------------------------------
# Reasoning continuity


def loop(*parts: Any) -> list[tl.Message]:
    calls = [part for part in parts if isinstance(part, tl.ToolCallPart)]
    out = [tl.user_message("go"), tl.assistant_message(*parts)]
    if calls:
        out.append(tl.tool_message(*(tl.tool_result_part(c.id, "ok") for c in calls)))
    return out


def item_kinds(payload: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(item.get("type", "message"), item.get("id")) for item in payload["input"][1:]]


def test_a_reasoning_item_goes_back_for_its_model_with_the_ids_it_produced() -> None:
    history = loop(reasoning(), call("call_1", "f", {}, "fc_1"))
    for model in (None, "gpt-5"):
        assert item_kinds(openai_responses.encode(history, model=model)) == [
            ("reasoning", "rs_1"),
            ("function_call", "fc_1"),
            ("function_call_output", None),
        ]


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({"model": "gpt-4.1"}, "another model"),
        ({"reasoning": "drop"}, "reasoning='drop'"),
    ],
)
def test_a_reasoning_item_not_sent_takes_its_item_ids_with_it(
    options: dict[str, Any], why: str
) -> None:
    history = loop(
        tl.text_part("Before.", metadata={"openai.item_id": "msg_0"}),
        reasoning(),
        call("call_1", "f", {}, "fc_1"),
        tl.text_part("Done.", metadata={"openai.item_id": "msg_1"}),
    )
    assert item_kinds(openai_responses.encode(history, **options)) == [
        ("message", None),  # not the reasoning's, but from no known model: see below
        ("function_call", None),
        ("message", None),
        ("function_call_output", None),
    ], why


@pytest.mark.parametrize(
    ("options", "sent"),
    [
        ({}, True),
        ({"model": "gpt-4.1"}, True),
        ({"model": "gpt-5"}, False),
        ({"model": "gpt-4.1", "reasoning": "drop"}, False),
    ],
)
def test_item_ids_no_reasoning_item_heads_follow_the_messages_model(
    options: dict[str, Any], sent: bool
) -> None:
    # Item ids are opaque state of the model that produced them (DESIGN's reasoning policy).
    history = loop(
        tl.text_part("Checking.", metadata={"openai.item_id": "msg_0"}),
        call("call_1", "f", {}, "fc_1"),
    )
    history[1] = history[1].with_metadata(model="gpt-4.1")
    assert item_kinds(openai_responses.encode(history, **options)) == [
        ("message", "msg_0" if sent else None),
        ("function_call", "fc_1" if sent else None),
        ("function_call_output", None),
    ]


def test_reasoning_text_sends_the_summary_as_text_and_no_ids() -> None:
    history = loop(reasoning(), call("call_1", "f", {}, "fc_1"))
    payload = openai_responses.encode(history, model="gpt-4.1", reasoning="text")
    assert payload["input"][1:3] == [
        {"type": "message", "role": "assistant", "content": "Check the label."},
        {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
    ]


def test_a_reasoning_item_whose_next_item_has_no_id_is_not_sent() -> None:
    # The API finds the item a reasoning item produced by its id.
    history = loop(reasoning(), tl.text_part("Hand-written."), call("call_1", "f", {}, "fc_1"))
    assert item_kinds(openai_responses.encode(history)) == [
        ("message", None),
        ("function_call", None),
        ("function_call_output", None),
    ]


def test_a_trailing_reasoning_item_is_not_sent() -> None:
    history = [tl.user_message("go"), tl.assistant_message(reasoning()), tl.user_message("again")]
    assert [item.get("type") for item in openai_responses.encode(history)["input"]] == [
        "message",
        "message",
    ]


def test_other_providers_reasoning_never_goes_to_openai_as_reasoning() -> None:
    history = loop(
        tl.reasoning_part("Hmm.", signature="sig", provider="anthropic", item_id="rs_x"),
        call("call_1", "f", {}),
    )
    assert item_kinds(openai_responses.encode(history)) == [
        ("function_call", None),
        ("function_call_output", None),
    ]
    payload = openai_responses.encode(history, reasoning="text")
    assert payload["input"][1] == {"type": "message", "role": "assistant", "content": "Hmm."}


# ---------------------------------------------------------------------------------------------
# decode


def test_decode_reads_a_whole_request_body() -> None:
    body = {
        "model": "gpt-5",
        "instructions": "Rules.",
        "store": False,
        "input": [
            {"role": "developer", "content": "More rules."},
            {
                "role": "user",
                "content": [
                    {"type": "input_image", "image_url": "https://x.test/a.jpg", "detail": "high"}
                ],
            },
            {"role": "assistant", "content": "Sure.", "phase": "commentary"},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "not json"},
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": [{"type": "input_text", "text": "[tool error] boom"}],
            },
        ],
    }
    system, developer, user, assistant, tool = openai_responses.decode(body)
    assert system.parts == (tl.text_part("Rules."),)
    assert developer.role == "system"
    assert developer.text == "More rules."
    assert user.parts == (
        tl.file_part("https://x.test/a.jpg", "image/jpeg", metadata={"openai.detail": "high"}),
    )
    assert assistant.parts == (
        tl.text_part("Sure.", metadata={"openai.phase": "commentary"}),
        tl.ToolCallPart(id="c1", name="f", arguments={}, raw_arguments="not json"),
    )
    assert tool.parts == (
        tl.tool_result_part("c1", [tl.text_part("boom")], name="f", is_error=True),
    )


def test_decode_reads_a_string_input() -> None:
    assert openai_responses.decode({"input": "hello"})[0].parts == (tl.text_part("hello"),)


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"input": 3}, "input: expected an array"),
        (
            {"input": [{"type": "item_reference", "id": "msg_1"}]},
            r"input\[0\]\.type: an item_reference",
        ),
        ({"input": [{"role": "robot", "content": "x"}]}, r"input\[0\]\.role: unknown role"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "file-1"}]}]},
            r"input\[0\]\.content\[0\]: only files given by bytes or URL",
        ),
        (
            {"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}]},
            r"input\[0\]\.arguments: expected a string",
        ),
        ({"input": [{"type": "mystery"}]}, r"input\[0\]\.type: unknown item type 'mystery'"),
        ({"messages": []}, "input: required"),
    ],
)
def test_a_payload_not_of_the_format_names_the_format_and_the_path(payload: Any, path: str) -> None:
    with pytest.raises(CodecError, match=f"OpenAI Responses payload: {path}"):
        openai_responses.decode(payload)


# ---------------------------------------------------------------------------------------------
# decode_response, on responses built with the SDK's own model


def response(output: list[dict[str, Any]], **extra: Any) -> Any:
    responses = require_module("openai.types.responses")
    return responses.Response.model_validate(
        {
            "id": "resp_abc",
            "object": "response",
            "created_at": 1_770_000_000,
            "model": "gpt-5-2025-08-07",
            "status": "completed",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": output,
            "usage": {
                "input_tokens": 120,
                "input_tokens_details": {"cached_tokens": 64, "cache_write_tokens": 0},
                "output_tokens": 35,
                "output_tokens_details": {"reasoning_tokens": 20},
                "total_tokens": 155,
            },
            **extra,
        }
    )


def test_decode_response_reads_reasoning_calls_and_usage() -> None:
    sdk_response = response(
        [
            {
                "type": "reasoning",
                "id": "rs_9",
                "summary": [{"type": "summary_text", "text": "Two tools."}],
                "encrypted_content": "gAAAAB-enc",
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_w",
                "name": "weather",
                "arguments": '{"city":"Paris"}',
            },
            {
                "type": "function_call",
                "id": "fc_2",
                "call_id": "call_t",
                "name": "time",
                "arguments": '{"tz": "Europe/Par',
            },
        ]
    )
    for given in (
        sdk_response,
        sdk_response.model_dump(mode="json"),
        sdk_response.model_dump_json(),
    ):
        message = openai_responses.decode_response(given)
        assert message.parts == (
            tl.reasoning_part(
                "",
                encrypted="gAAAAB-enc",
                provider="openai",
                model="gpt-5-2025-08-07",
                item_id="rs_9",
                summary=("Two tools.",),
            ),
            call("call_w", "weather", {"city": "Paris"}, "fc_1"),
            tl.ToolCallPart(
                id="call_t",
                name="time",
                arguments={},
                raw_arguments='{"tz": "Europe/Par',
                metadata={"openai.item_id": "fc_2"},
            ),
        )
        assert message.metadata == {
            "provider": "openai",
            "model": "gpt-5-2025-08-07",
            "response_id": "resp_abc",
            "stop_reason": "completed",
            "usage": {
                "input_tokens": 120,
                "output_tokens": 35,
                "cache_read_tokens": 64,
                "cache_write_tokens": 0,
                "reasoning_tokens": 20,
            },
            "openai.usage": {
                "input_tokens": 120,
                "input_tokens_details": {"cached_tokens": 64, "cache_write_tokens": 0},
                "output_tokens": 35,
                "output_tokens_details": {"reasoning_tokens": 20},
                "total_tokens": 155,
            },
        }


def test_decode_response_reads_text_annotations_refusals_and_hosted_tools() -> None:
    annotation = {
        "type": "url_citation",
        "start_index": 0,
        "end_index": 5,
        "title": "W",
        "url": "https://w.test",
    }
    message = openai_responses.decode_response(
        response(
            [
                {
                    "type": "web_search_call",
                    "id": "ws_1",
                    "status": "completed",
                    "action": {"type": "search", "query": "paris weather"},
                },
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "phase": "final_answer",
                    "content": [
                        {"type": "output_text", "text": "Sunny", "annotations": [annotation]},
                        {"type": "refusal", "refusal": "No more."},
                    ],
                },
            ],
            status="incomplete",
            incomplete_details={"reason": "max_output_tokens"},
        ).model_dump(mode="json")
    )
    common = {"openai.item_id": "msg_1", "openai.phase": "final_answer"}
    assert message.parts == (
        tl.ProviderToolCallPart(
            id="ws_1",
            name="web_search",
            input={"status": "completed", "action": {"type": "search", "query": "paris weather"}},
            provider="openai",
            metadata={"openai.type": "web_search_call"},
        ),
        tl.text_part("Sunny", metadata={**common, "openai.annotations": [annotation]}),
        tl.text_part("No more.", metadata={**common, "openai.refusal": True}),
    )
    assert message.metadata["stop_reason"] == "max_output_tokens"


@pytest.mark.parametrize(
    "bad",
    [
        {},
        {"output": "text"},
        {"output": [{"type": "function_call_output", "call_id": "c", "output": "x"}]},
    ],
)
def test_decode_response_refuses_what_is_not_a_response(bad: Any) -> None:
    with pytest.raises(CodecError, match="OpenAI Responses response"):
        openai_responses.decode_response(bad)


# ---------------------------------------------------------------------------------------------
# Hostile values: a payload given as Python values (or JSON text read with NaN) need not be
# JSON; decode raises CodecError naming the value, never pydantic's or a TypeError.


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        (
            {"type": "message", "role": "assistant", "phase": ["x"], "content": "hi"},
            r"input\[0\]\.phase: expected a string",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "input_image", "image_url": "https://e/a", "detail": {}}],
            },
            r"input\[0\]\.content\[0\]\.detail: expected a string",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "input_file", "file_data": "data:pdf;base64,AA=="}],
            },
            r"input\[0\]\.content\[0\]\.file_data: the data: URL's 'pdf' is not a media type",
        ),
        (
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "x", "annotations": [{"i": math.nan}]}],
            },
            r"input\[0\]\.content\[0\]\.annotations\[0\]\.i: NaN is not a JSON value",
        ),
        (
            {"type": "file_search_call", "id": "fs", "results": [{"score": b"1"}]},
            r"input\[0\]\.results\[0\]\.score: a bytes value is not JSON",
        ),
        (
            {"type": "reasoning", "id": "rs", "summary": [], "content": [{"text": 1}]},
            r"input\[0\]\.content\[0\]\.text: expected a string",
        ),
    ],
)
def test_values_a_message_cannot_hold_are_codec_errors(item: Any, problem: str) -> None:
    with pytest.raises(CodecError, match=f"OpenAI Responses payload: {problem}"):
        openai_responses.decode({"input": [item]})


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({"usage": {"input_tokens": "120"}}, r"usage\.input_tokens: expected a count"),
        ({"usage": {"output_tokens": -2}}, r"usage\.output_tokens: expected a count"),
        ({"incomplete_details": {"reason": ["x"]}}, r"incomplete_details\.reason: expected a"),
    ],
)
def test_responses_with_values_a_message_cannot_hold_are_codec_errors(
    extra: Any, problem: str
) -> None:
    document = {"id": "r", "model": "m", "status": "incomplete", "output": [], **extra}
    with pytest.raises(CodecError, match=f"OpenAI Responses response payload: {problem}"):
        openai_responses.decode_response(document)


def test_metadata_values_of_any_json_type_never_break_encode() -> None:
    # Membership tests on these values raised TypeError for lists (unhashable).
    odd = [1]
    messages = [
        tl.user_message(
            tl.file_part("https://e/a.png", "image/png", metadata={"openai.detail": odd})
        ),
        tl.assistant_message(
            tl.text_part(
                "hi",
                metadata={
                    "openai.item_id": "msg_1",
                    "openai.phase": odd,
                    "openai.annotations": [{"type": odd}],
                },
            ),
            tl.ProviderToolCallPart(
                id="ws",
                name="web_search",
                input={},
                provider="openai",
                metadata={"openai.type": odd},
            ),
        ),
    ]
    items = openai_responses.encode(messages)["input"]
    assert items[0]["content"][0]["detail"] == "auto"
    assert items[1]["content"][0]["annotations"] == []
    assert "phase" not in items[1]
    assert items[2]["type"] == "message"  # the hosted call, unsupported: a placeholder
