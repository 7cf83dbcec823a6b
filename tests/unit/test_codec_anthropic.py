"""The Anthropic Messages codec: exact payloads written by hand, decode, decode_response."""

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
from threadline import UnsupportedContentError
from threadline.codecs import anthropic

PNG = b"\x89PNG\r\n\x1a\n\xfb\xff"
PDF = b"%PDF-1.4\n%%EOF\n"
PDF_B64 = base64.b64encode(PDF).decode()


def thinking(model: str | None = "claude-sonnet-4-5") -> tl.ReasoningPart:
    return tl.reasoning_part(
        "The user wants the weather.",
        signature="EqQBCgIYAhIM1gbc",
        provider="anthropic",
        model=model,
    )


def tool_loop() -> list[tl.Message]:
    return [
        tl.system_message("Be brief."),
        tl.user_message("Weather in Paris and Rome?"),
        tl.assistant_message(
            thinking(),
            tl.reasoning_part(encrypted="EmwKAhgBEgy3va3p", redacted=True, provider="anthropic"),
            "Checking.",
            tl.tool_call_part("toolu_01", "weather", {"city": "Paris"}),
            tl.tool_call_part("toolu_02", "weather", {"city": "Rome"}),
        ),
        tl.tool_message(
            tl.tool_result_part("toolu_01", "18°C"),
            tl.tool_result_part("toolu_02", "service down", is_error=True),
        ),
        tl.user_message("And in Oslo?"),
    ]


def test_a_tool_loop_is_written_exactly() -> None:
    assert anthropic.encode(tool_loop()) == {
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "The user wants the weather.",
                        "signature": "EqQBCgIYAhIM1gbc",
                    },
                    {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3p"},
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "weather",
                        "input": {"city": "Paris"},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_02",
                        "name": "weather",
                        "input": {"city": "Rome"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": "18°C"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_02",
                        "content": "service down",
                        "is_error": True,
                    },
                    {"type": "text", "text": "And in Oslo?"},
                ],
            },
        ],
    }


def test_system_texts_stay_separate_blocks_and_the_argument_comes_first() -> None:
    history = [tl.system_message("One."), tl.system_message("Two."), tl.user_message("hi")]
    assert anthropic.encode(history, system="Zero.")["system"] == [
        {"type": "text", "text": "Zero."},
        {"type": "text", "text": "One."},
        {"type": "text", "text": "Two."},
    ]


def test_a_later_system_message_becomes_a_system_note_in_the_user_turn() -> None:
    history = [
        tl.user_message("hi"),
        tl.assistant_message("hello"),
        tl.system_message("Now in French."),
    ]
    assert anthropic.encode(history) == {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
            {
                "role": "user",
                "content": [{"type": "text", "text": "<system>\nNow in French.\n</system>"}],
            },
        ]
    }
    assert [(m.role, m.text) for m in anthropic.decode(anthropic.encode(history))] == [
        ("user", "hi"),
        ("assistant", "hello"),
        ("system", "Now in French."),
    ]


def test_consecutive_turns_merge_one_block_per_part_and_empty_text_is_left_out() -> None:
    history = [
        tl.user_message("a", ""),
        tl.user_message("b"),
        tl.assistant_message("c"),
        tl.assistant_message("d"),
    ]
    assert anthropic.encode(history)["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "c"}, {"type": "text", "text": "d"}],
        },
    ]


def test_whitespace_only_text_is_left_out_everywhere() -> None:
    # The API answers 400 "text content blocks must contain non-whitespace text".
    history = [
        tl.Message(role="system", parts=(tl.text_part("Be brief."), tl.text_part(" \n"))),
        tl.user_message("hi", "  "),
        tl.assistant_message(
            "\t",
            tl.reasoning_part(" ", provider="openai"),
            tl.tool_call_part("toolu_01", "f", {}),
            tl.tool_call_part("toolu_02", "g", {}),
        ),
        tl.tool_message(
            tl.tool_result_part("toolu_01", "\n\n"),
            tl.tool_result_part("toolu_02", (tl.text_part(" "), tl.text_part("ok"))),
        ),
    ]
    payload = anthropic.encode(history, system="  ", reasoning="text")
    assert payload == {
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_01", "name": "f", "input": {}},
                    {"type": "tool_use", "id": "toolu_02", "name": "g", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_02",
                        "content": [{"type": "text", "text": "ok"}],
                    },
                ],
            },
        ],
    }
    decoded = anthropic.decode(payload)
    expected = anthropic.normalize_for_round_trip(history, reasoning="text")
    assert [(m.role, m.parts) for m in decoded] == [(m.role, m.parts) for m in expected]
    assert part_as(tl.ToolResultPart, decoded[3].parts[0]).content == ""


def test_files_images_documents_and_tool_results_with_files() -> None:
    history = [
        tl.user_message(
            tl.file_part(PNG, "image/png"),
            tl.file_part("https://example.com/cat.jpg", "image/jpeg"),
            tl.file_part(PDF, "application/pdf", filename="paper.pdf"),
            tl.file_part("https://example.com/paper.pdf", "application/pdf"),
            tl.file_part("notes, é".encode(), "text/plain", filename="notes.txt"),
        ),
        tl.assistant_message(tl.tool_call_part("toolu_1", "screenshot", {})),
        tl.tool_message(tl.tool_result_part("toolu_1", ["shot:", tl.file_part(PNG, "image/png")])),
    ]
    messages = anthropic.encode(history)["messages"]
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgr7/w=="},
    }
    assert messages[0]["content"] == [
        image,
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_B64},
            "title": "paper.pdf",
        },
        {"type": "document", "source": {"type": "url", "url": "https://example.com/paper.pdf"}},
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "notes, é"},
            "title": "notes.txt",
        },
    ]
    assert messages[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": "shot:"}, image],
        }
    ]


def test_the_unsupported_policy() -> None:
    history = [tl.user_message("listen", tl.file_part(b"RIFF", "audio/wav"))]
    assert anthropic.encode(history)["messages"][0]["content"] == [
        {"type": "text", "text": "listen"},
        {"type": "text", "text": "[audio/wav omitted: not supported by anthropic]"},
    ]
    assert anthropic.encode(history, unsupported="drop")["messages"][0]["content"] == [
        {"type": "text", "text": "listen"}
    ]
    with pytest.raises(
        UnsupportedContentError, match=r"anthropic .*audio/wav.*messages\[0\]\.parts\[1\]"
    ):
        anthropic.encode(history, unsupported="raise")


@pytest.mark.parametrize(
    ("model", "reasoning", "first_block"),
    [
        (
            None,
            "auto",
            {
                "type": "thinking",
                "thinking": "The user wants the weather.",
                "signature": "EqQBCgIYAhIM1gbc",
            },
        ),
        (
            "claude-sonnet-4-5",
            "auto",
            {
                "type": "thinking",
                "thinking": "The user wants the weather.",
                "signature": "EqQBCgIYAhIM1gbc",
            },
        ),
        ("claude-opus-4-1", "auto", {"type": "text", "text": "Done."}),
        ("claude-opus-4-1", "text", {"type": "text", "text": "The user wants the weather."}),
        (None, "drop", {"type": "text", "text": "Done."}),
    ],
)
def test_thinking_is_replayed_only_to_its_model(
    model: str | None, reasoning: str, first_block: dict[str, Any]
) -> None:
    history = [tl.user_message("q"), tl.assistant_message(thinking(), "Done.")]
    payload = anthropic.encode(history, model=model, reasoning=reasoning)  # type: ignore[arg-type]
    assert payload["messages"][1]["content"][0] == first_block


def test_foreign_or_unsigned_reasoning_is_not_replayed() -> None:
    history = [
        tl.user_message("q"),
        tl.assistant_message(
            tl.reasoning_part("openai thoughts", encrypted="gAAAA", provider="openai"),
            tl.reasoning_part("unsigned", provider="anthropic"),
            "Done.",
        ),
    ]
    assert anthropic.encode(history)["messages"][1]["content"] == [
        {"type": "text", "text": "Done."}
    ]
    assert anthropic.encode(history, reasoning="text")["messages"][1]["content"] == [
        {"type": "text", "text": "openai thoughts"},
        {"type": "text", "text": "unsigned"},
        {"type": "text", "text": "Done."},
    ]


def test_ids_outside_the_pattern_are_mapped_the_same_for_call_and_result() -> None:
    bedrock_id = "tooluse:abc.def|1"
    history = [
        tl.user_message("go"),
        tl.assistant_message(tl.tool_call_part(bedrock_id, "f", {})),
        tl.tool_message(tl.tool_result_part(bedrock_id, "ok")),
    ]
    wire_id = "call_" + hashlib.sha256(bedrock_id.encode()).hexdigest()[:24]
    messages = anthropic.encode(history)["messages"]
    assert messages[1]["content"][0]["id"] == wire_id
    assert messages[2]["content"][0]["tool_use_id"] == wire_id


def test_server_tools_go_back_to_anthropic_only() -> None:
    results = [
        {
            "type": "web_search_result",
            "url": "https://e.com",
            "title": "E",
            "encrypted_content": "Eq",
            "page_age": None,
        }
    ]
    history = [
        tl.user_message("news?"),
        tl.assistant_message(
            tl.ProviderToolCallPart(
                id="srvtoolu_1", name="web_search", input={"query": "news"}, provider="anthropic"
            ),
            tl.ProviderToolResultPart(call_id="srvtoolu_1", content=results, provider="anthropic"),
            tl.ProviderToolCallPart(
                id="ws_2", name="web_search", input={"query": "news"}, provider="openai"
            ),
            "Here is the news.",
        ),
    ]
    assert anthropic.encode(history)["messages"][1]["content"] == [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "news"},
        },
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": results},
        {"type": "text", "text": "[provider_tool_call omitted: not supported by anthropic]"},
        {"type": "text", "text": "Here is the news."},
    ]


def test_cache_control_metadata_is_the_blocks_cache_control() -> None:
    cache = {"type": "ephemeral"}
    history = [
        tl.system_message("Long rules."),
        tl.user_message(tl.text_part("Big document", metadata={"anthropic.cache_control": cache})),
    ]
    payload = anthropic.encode(history)
    assert payload["messages"][0]["content"] == [
        {"type": "text", "text": "Big document", "cache_control": cache}
    ]
    assert anthropic.decode(payload)[1].parts[0].metadata == {"anthropic.cache_control": cache}


# ---------------------------------------------------------------------------------------------
# decode


def test_decode_splits_a_user_turn_into_results_then_text() -> None:
    decoded = anthropic.decode(anthropic.encode(tool_loop()))
    assert [message.role for message in decoded] == ["system", "user", "assistant", "tool", "user"]
    assert decoded[3].parts == (
        tl.tool_result_part("toolu_01", "18°C", name="weather"),
        tl.tool_result_part("toolu_02", "service down", name="weather", is_error=True),
    )
    reasoning = part_as(tl.ReasoningPart, decoded[2].parts[0])
    assert (reasoning.signature, reasoning.provider, reasoning.model) == (
        "EqQBCgIYAhIM1gbc",
        "anthropic",
        None,
    )


def test_decode_reads_string_content_and_system_messages() -> None:
    decoded = anthropic.decode(
        {
            "model": "claude-x",
            "max_tokens": 10,
            "system": [{"type": "text", "text": "Rules."}],
            "messages": [{"role": "user", "content": "hi"}, {"role": "system", "content": "Mid."}],
        }
    )
    assert [(m.role, m.text) for m in decoded] == [
        ("system", "Rules."),
        ("user", "hi"),
        ("system", "Mid."),
    ]


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ([{"role": "user"}], r"messages\[0\]\.content: required"),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "tool_use", "id": "x", "name": "f", "input": {}}],
                }
            ],
            r"messages\[0\]\.content\[0\]\.type",
        ),
        (
            [{"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]}],
            r"messages\[0\]\.content\[0\]\.signature: required",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "image", "source": {"type": "file", "file_id": "f"}}],
                }
            ],
            r"messages\[0\]\.content\[0\]\.source\.type",
        ),
        ({"system": "x"}, "messages: required"),
    ],
)
def test_a_payload_not_of_the_format_names_the_format_and_the_path(payload: Any, path: str) -> None:
    with pytest.raises(CodecError, match=f"Anthropic Messages payload: {path}"):
        anthropic.decode(payload)


# ---------------------------------------------------------------------------------------------
# decode_response, on responses built with the SDK's own response model


def sdk_message(content: list[dict[str, Any]], stop_reason: str = "end_turn") -> Any:
    types = require_module("anthropic.types")
    return types.Message.model_validate(
        {
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 2095,
                "output_tokens": 503,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 1800,
            },
        }
    )


def test_decode_response_reads_thinking_tool_use_and_usage() -> None:
    response = sdk_message(
        [
            {"type": "thinking", "thinking": "Need the weather.", "signature": "EqQBCgIYAhIM"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3"},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_01A", "name": "weather", "input": {"city": "Paris"}},
        ],
        stop_reason="tool_use",
    )
    model = "claude-sonnet-4-5-20250929"
    for given in (response, response.model_dump(mode="json"), response.model_dump_json()):
        message = anthropic.decode_response(given)
        assert message.parts == (
            tl.reasoning_part(
                "Need the weather.", signature="EqQBCgIYAhIM", provider="anthropic", model=model
            ),
            tl.reasoning_part(
                encrypted="EmwKAhgBEgy3", redacted=True, provider="anthropic", model=model
            ),
            tl.text_part("Let me check."),
            tl.tool_call_part("toolu_01A", "weather", {"city": "Paris"}),
        )
        assert message.metadata == {
            "provider": "anthropic",
            "model": model,
            "response_id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "stop_reason": "tool_use",
            "usage": {  # input_tokens leaves out the cache: 2095 + 1800 read
                "input_tokens": 3895,
                "output_tokens": 503,
                "cache_read_tokens": 1800,
                "cache_write_tokens": 0,
                "reasoning_tokens": 0,
            },
            "anthropic.usage": {
                "input_tokens": 2095,
                "output_tokens": 503,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 1800,
            },
        }


def test_decode_response_reads_server_tools_and_citations_and_replays_them() -> None:
    citation = {
        "type": "web_search_result_location",
        "url": "https://example.com/news",
        "title": "News",
        "encrypted_index": "Eo8BCioIAhgB",
        "cited_text": "Something happened.",
    }
    result = {
        "type": "web_search_result",
        "url": "https://example.com/news",
        "title": "News",
        "encrypted_content": "EqgfCioIARgB",
        "page_age": None,
    }
    response = sdk_message(
        [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_01",
                "name": "web_search",
                "input": {"query": "news"},
            },
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [result]},
            {"type": "text", "text": "Something happened.", "citations": [citation]},
        ]
    )
    message = anthropic.decode_response(response)
    call, found, text = message.parts
    assert call == tl.ProviderToolCallPart(
        id="srvtoolu_01", name="web_search", input={"query": "news"}, provider="anthropic"
    )
    assert isinstance(found, tl.ProviderToolResultPart)
    assert found.call_id == "srvtoolu_01"
    assert not found.is_error
    assert found.content == [{key: value for key, value in result.items() if value is not None}]
    assert text.metadata["anthropic.citations"] == [citation]
    replayed = anthropic.encode([tl.user_message("news?"), message])["messages"][1]["content"]
    assert [block["type"] for block in replayed] == [
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    assert "citations" not in replayed[2]  # output annotations are not sent back


def test_decode_response_marks_a_server_tool_error() -> None:
    response = sdk_message(
        [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_02",
                "name": "web_search",
                "input": {"query": "x"},
            },
            {
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_02",
                "content": {
                    "type": "web_search_tool_result_error",
                    "error_code": "max_uses_exceeded",
                },
            },
        ]
    )
    assert part_as(tl.ProviderToolResultPart, anthropic.decode_response(response).parts[1]).is_error


@pytest.mark.parametrize("response", [{}, {"content": "hi"}, {"content": [{"type": "mystery"}]}, 7])
def test_decode_response_of_something_else_raises_codec_error(response: Any) -> None:
    with pytest.raises(CodecError, match="Anthropic Messages"):
        anthropic.decode_response(response)


# ---------------------------------------------------------------------------------------------
# Hostile values: a payload given as Python values (or JSON text read with NaN) need not be
# JSON; decode raises CodecError naming the value, never pydantic's or a TypeError.


def user_block(block: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": [block]}]}


def assistant_block(block: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [{"role": "assistant", "content": [block]}]}


def text_source(**source: Any) -> dict[str, Any]:
    return user_block({"type": "document", "source": {"type": "text", **source}})


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        (
            user_block({"type": "text", "text": "x", "cache_control": {"ttl": math.nan}}),
            r"messages\[0\]\.content\[0\]\.cache_control\.ttl: NaN is not a JSON value",
        ),
        (
            assistant_block({"type": "text", "text": "x", "citations": [{"n": b"x"}]}),
            r"messages\[0\]\.content\[0\]\.citations\[0\]\.n: a bytes value is not JSON",
        ),
        (
            assistant_block({"type": "tool_use", "id": "t", "name": "f", "input": {1: "x"}}),
            r"messages\[0\]\.content\[0\]\.input: an object key is a int",
        ),
        (
            assistant_block({"type": "tool_use", "id": "t", "name": "f", "input": [math.inf]}),
            r"messages\[0\]\.content\[0\]\.input\[0\]: Infinity is not a JSON value",
        ),
        (
            assistant_block(
                {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {"q": {b""}}}
            ),
            r"messages\[0\]\.content\[0\]\.input\.q: a set value is not JSON",
        ),
        (
            user_block({"type": "tool_result", "tool_use_id": "t", "cache_control": [-math.inf]}),
            r"messages\[0\]\.content\[0\]\.cache_control\[0\]: -Infinity is not a JSON value",
        ),
        (
            text_source(media_type="plain", data="x"),
            r"messages\[0\]\.content\[0\]\.source\.media_type: 'plain' is not a media type",
        ),
    ],
)
def test_values_a_message_cannot_hold_are_codec_errors(payload: Any, problem: str) -> None:
    with pytest.raises(CodecError, match=f"Anthropic Messages payload: {problem}"):
        anthropic.decode(payload)


def test_tool_input_that_is_not_an_object_is_kept_as_json_text() -> None:
    payload = assistant_block({"type": "tool_use", "id": "t", "name": "f", "input": ["é", 2]})
    [message] = anthropic.decode(payload)
    assert message.parts == (
        tl.ToolCallPart(id="t", name="f", arguments={}, raw_arguments='["é", 2]'),
    )


@pytest.mark.parametrize(
    ("usage", "problem"),
    [
        ({"input_tokens": "3", "output_tokens": 1}, r"usage\.input_tokens: expected a count"),
        ({"input_tokens": 3, "output_tokens": -1}, r"usage\.output_tokens: expected a count"),
        ({"input_tokens": 3, "server_tool_use": {"n": math.nan}}, r"usage\.server_tool_use\.n"),
    ],
)
def test_usage_that_is_not_counts_is_a_codec_error(usage: Any, problem: str) -> None:
    response = {"id": "m", "model": "c", "content": [], "usage": usage}
    with pytest.raises(CodecError, match=f"Anthropic Messages response payload: {problem}"):
        anthropic.decode_response(response)


def test_usage_counts_may_be_null() -> None:
    usage = {"input_tokens": 3, "output_tokens": None, "cache_read_input_tokens": None}
    message = anthropic.decode_response({"id": "m", "content": [], "usage": usage})
    assert message.usage == tl.Usage(input_tokens=3)
    assert message.metadata["anthropic.usage"] == {"input_tokens": 3}
