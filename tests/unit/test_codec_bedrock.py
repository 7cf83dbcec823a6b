"""The Bedrock Converse codec: exact payloads written by hand, alternation, ids, decode,
decode_response."""

from __future__ import annotations

import base64
import hashlib
import math
import re
from typing import Any

import pytest

import threadline as tl
from tests.support import part_as
from threadline import CodecError
from threadline import IntegrityError
from threadline import UnsupportedContentError
from threadline.codecs import bedrock

PNG = b"\x89PNG\r\n\x1a\n\xfb\xff"
PDF = b"%PDF-1.4\n%%EOF\n"
BEDROCK_ID = re.compile(r"[a-zA-Z0-9_.:-]{1,64}")


def agent_turn() -> list[tl.Message]:
    return [
        tl.system_message("Be brief."),
        tl.user_message("What is in this image?", tl.file_part(PNG, "image/png")),
        tl.assistant_message(
            tl.reasoning_part("It looks like a cat.", signature="sig-1", provider="bedrock"),
            "Let me check.",
            tl.tool_call_part("call|1", "classify", {"labels": ["cat", "dog"]}),
            tl.tool_call_part("tooluse_2", "lookup", {}),
        ),
        tl.tool_message(
            tl.tool_result_part("call|1", "cat (0.97)"),
            tl.tool_result_part("tooluse_2", "no such entry", is_error=True),
        ),
        tl.user_message("Thanks"),
    ]


def test_an_agent_turn_is_written_exactly() -> None:
    mapped = "call_" + hashlib.sha256(b"call|1").hexdigest()[:24]
    assert bedrock.encode(agent_turn()) == {
        "system": [{"text": "Be brief."}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"text": "What is in this image?"},
                    {"image": {"format": "png", "source": {"bytes": PNG}}},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "reasoningContent": {
                            "reasoningText": {"text": "It looks like a cat.", "signature": "sig-1"}
                        }
                    },
                    {"text": "Let me check."},
                    {
                        "toolUse": {
                            "toolUseId": mapped,
                            "name": "classify",
                            "input": {"labels": ["cat", "dog"]},
                        }
                    },
                    {"toolUse": {"toolUseId": "tooluse_2", "name": "lookup", "input": {}}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": mapped, "content": [{"text": "cat (0.97)"}]}},
                    {
                        "toolResult": {
                            "toolUseId": "tooluse_2",
                            "content": [{"text": "no such entry"}],
                            "status": "error",
                        }
                    },
                    {"text": "Thanks"},
                ],
            },
        ],
    }


def test_bytes_stay_bytes() -> None:
    payload = bedrock.encode(agent_turn())
    assert type(payload["messages"][0]["content"][1]["image"]["source"]["bytes"]) is bytes


def test_the_round_trip_keeps_everything_but_the_mapped_id() -> None:
    decoded = bedrock.decode(bedrock.encode(agent_turn()))
    mapped = "call_" + hashlib.sha256(b"call|1").hexdigest()[:24]
    assert [m.role for m in decoded] == ["system", "user", "assistant", "tool", "user"]
    assert decoded[1].parts == (
        tl.text_part("What is in this image?"),
        tl.file_part(PNG, "image/png"),
    )
    assert decoded[2].parts[0] == tl.reasoning_part(
        "It looks like a cat.", signature="sig-1", provider="bedrock"
    )
    assert decoded[3].parts == (
        tl.tool_result_part(mapped, "cat (0.97)", name="classify"),
        tl.tool_result_part("tooluse_2", "no such entry", name="lookup", is_error=True),
    )


def test_system_argument_comes_first_and_blank_system_text_is_left_out() -> None:
    payload = bedrock.encode(
        [tl.system_message("  "), tl.system_message("Rules."), tl.user_message("hi")],
        system="Be kind.",
    )
    assert payload == {
        "system": [{"text": "Be kind."}, {"text": "Rules."}],
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
    }


# ---------------------------------------------------------------------------------------------
# alternation


def test_roles_alternate_and_a_later_system_message_is_a_note_in_the_user_turn() -> None:
    history = [
        tl.user_message("one"),
        tl.user_message("two"),
        tl.assistant_message("three"),
        tl.system_message("Now answer in French."),
        tl.user_message("four"),
        tl.assistant_message("cinq"),
        tl.assistant_message("six"),
    ]
    assert bedrock.encode(history)["messages"] == [
        {"role": "user", "content": [{"text": "one"}, {"text": "two"}]},
        {"role": "assistant", "content": [{"text": "three"}]},
        {
            "role": "user",
            "content": [{"text": "<system>\nNow answer in French.\n</system>"}, {"text": "four"}],
        },
        {"role": "assistant", "content": [{"text": "cinq"}, {"text": "six"}]},
    ]
    decoded = bedrock.decode(bedrock.encode(history))
    assert [(m.role, m.text) for m in decoded][2:4] == [
        ("system", "Now answer in French."),
        ("user", "four"),
    ]


def test_a_leading_assistant_turn_gets_a_user_turn_before_it_that_decode_leaves_out() -> None:
    history = [
        tl.system_message("Rules."),
        tl.assistant_message("Hello! How can I help?"),
        tl.user_message("Hi"),
    ]
    payload = bedrock.encode(history)
    assert payload["messages"] == [
        {"role": "user", "content": [{"text": "[conversation start]"}]},
        {"role": "assistant", "content": [{"text": "Hello! How can I help?"}]},
        {"role": "user", "content": [{"text": "Hi"}]},
    ]
    assert [(m.role, m.text) for m in bedrock.decode(payload)] == [
        ("system", "Rules."),
        ("assistant", "Hello! How can I help?"),
        ("user", "Hi"),
    ]


def test_a_turn_left_empty_merges_its_neighbours() -> None:
    history = [
        tl.user_message("q"),
        tl.assistant_message(tl.reasoning_part("hidden", provider="openai")),  # dropped: auto
        tl.user_message("hello?"),
    ]
    assert bedrock.encode(history)["messages"] == [
        {"role": "user", "content": [{"text": "q"}, {"text": "hello?"}]}
    ]


def test_blank_text_is_left_out_and_an_empty_result_says_it_has_no_content() -> None:
    history = [
        tl.user_message("go", " \n"),
        tl.assistant_message("", tl.tool_call_part("t1", "f", {})),
        tl.tool_message(tl.tool_result_part("t1", "", is_error=True)),
    ]
    assert bedrock.encode(history)["messages"] == [
        {"role": "user", "content": [{"text": "go"}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "t1",
                        "content": [{"text": "[no content]"}],
                        "status": "error",
                    }
                }
            ],
        },
    ]


def test_integrity_runs_first() -> None:
    dangling = [tl.user_message("go"), tl.assistant_message(tl.tool_call_part("t1", "f", {}))]
    result = bedrock.encode(dangling)["messages"][2]["content"][0]["toolResult"]
    assert result["toolUseId"] == "t1"
    assert result["status"] == "error"
    with pytest.raises(IntegrityError):
        bedrock.encode(dangling, integrity="strict")


# ---------------------------------------------------------------------------------------------
# ids


def test_ids_bedrock_rejects_are_mapped_the_same_for_call_and_result() -> None:
    ids = ["tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "x" * 65, "", "a b", "call|1", "ünï", "ok.id:1-2_3"]
    history: list[tl.Message] = [tl.user_message("go")]
    for call_id in ids:
        history.append(tl.assistant_message(tl.tool_call_part(call_id, "f", {})))
        history.append(tl.tool_message(tl.tool_result_part(call_id, "ok")))
    turns = bedrock.encode(history)["messages"]
    calls = [t["content"][0]["toolUse"]["toolUseId"] for t in turns if t["role"] == "assistant"]
    results = [t["content"][0]["toolResult"]["toolUseId"] for t in turns[2:] if t["role"] == "user"]
    assert calls == results
    assert all(BEDROCK_ID.fullmatch(wire_id) for wire_id in calls)
    assert len(set(calls)) == len(ids)
    assert calls[0] == ids[0]  # valid ids are kept
    assert calls[-1] == ids[-1]
    assert calls[1] == "call_" + hashlib.sha256(ids[1].encode()).hexdigest()[:24]


# ---------------------------------------------------------------------------------------------
# files


def test_documents_get_a_format_and_a_name_bedrock_allows() -> None:
    history = [
        tl.user_message(
            tl.file_part(PDF, "application/pdf", filename="Q3 report (final).pdf"),
            tl.file_part(b"a,b\n1,2\n", "text/csv", filename="my_data.v2.csv"),
            tl.file_part(b"# Notes", "text/markdown"),
            tl.file_part("s3://my-bucket/docs/spec.pdf", "application/pdf", filename="spec.pdf"),
        )
    ]
    assert bedrock.encode(history)["messages"][0]["content"] == [
        {"document": {"format": "pdf", "name": "Q3 report (final)", "source": {"bytes": PDF}}},
        {"document": {"format": "csv", "name": "my-data-v2", "source": {"bytes": b"a,b\n1,2\n"}}},
        {"document": {"format": "md", "name": "document", "source": {"bytes": b"# Notes"}}},
        {
            "document": {
                "format": "pdf",
                "name": "spec",
                "source": {"s3Location": {"uri": "s3://my-bucket/docs/spec.pdf"}},
            }
        },
    ]
    assert bedrock.decode(bedrock.encode(history))[0].parts == (
        tl.file_part(PDF, "application/pdf", filename="Q3 report (final).pdf"),
        tl.file_part(b"a,b\n1,2\n", "text/csv", filename="my-data-v2.csv"),
        tl.file_part(b"# Notes", "text/markdown", filename="document.md"),
        tl.file_part("s3://my-bucket/docs/spec.pdf", "application/pdf", filename="spec.pdf"),
    )


def test_video_and_audio_go_to_user_turns_and_audio_not_to_tool_results() -> None:
    history = [
        tl.user_message(
            tl.file_part(b"\x00\x00\x00\x18ftypmp42", "video/mp4"),
            tl.file_part(b"RIFF", "audio/x-wav"),
        ),
        tl.assistant_message(tl.tool_call_part("t1", "record", {})),
        tl.tool_message(
            tl.tool_result_part(
                "t1", [tl.file_part(b"ID3", "audio/mpeg"), tl.file_part(PNG, "image/png")]
            )
        ),
    ]
    turns = bedrock.encode(history)["messages"]
    assert turns[0]["content"] == [
        {"video": {"format": "mp4", "source": {"bytes": b"\x00\x00\x00\x18ftypmp42"}}},
        {"audio": {"format": "wav", "source": {"bytes": b"RIFF"}}},
    ]
    assert turns[2]["content"][0]["toolResult"]["content"] == [
        {"text": "[audio/mpeg omitted: not supported by bedrock]"},
        {"image": {"format": "png", "source": {"bytes": PNG}}},
    ]


def test_files_that_cannot_go_follow_the_unsupported_policy() -> None:
    history = [
        tl.user_message(
            "see",
            tl.file_part("https://example.com/cat.png", "image/png"),
            tl.file_part(b"", "image/png"),
            tl.file_part(b"BM", "image/bmp"),
        )
    ]
    assert bedrock.encode(history)["messages"][0]["content"] == [
        {"text": "see"},
        {"text": "[image/png omitted: not supported by bedrock]"},
        {"text": "[image/png omitted: not supported by bedrock]"},
        {"text": "[image/bmp omitted: not supported by bedrock]"},
    ]
    assert bedrock.encode(history, unsupported="drop")["messages"][0]["content"] == [
        {"text": "see"}
    ]
    with pytest.raises(
        UnsupportedContentError, match=r"bedrock .*messages\[0\]\.parts\[1\].*s3:// URL"
    ):
        bedrock.encode(history, unsupported="raise")


# ---------------------------------------------------------------------------------------------
# reasoning


def reasoning_history(encrypted: str) -> list[tl.Message]:
    return [
        tl.user_message("q"),
        tl.assistant_message(
            tl.reasoning_part(
                "Mine.", signature="s1", provider="bedrock", model="anthropic.claude-x"
            ),
            tl.reasoning_part(
                encrypted=encrypted, redacted=True, provider="bedrock", model="anthropic.claude-x"
            ),
            tl.reasoning_part("Theirs.", signature="s2", provider="anthropic"),
            "Done.",
        ),
    ]


@pytest.mark.parametrize(
    ("kw", "content"),
    [
        (
            {},
            [
                {"reasoningContent": {"reasoningText": {"text": "Mine.", "signature": "s1"}}},
                {"reasoningContent": {"redactedContent": b"\x00\x01secret"}},
                {"text": "Done."},
            ],
        ),
        ({"model": "amazon.nova-pro"}, [{"text": "Done."}]),
        ({"reasoning": "drop"}, [{"text": "Done."}]),
        (
            {"reasoning": "text", "model": "amazon.nova-pro"},
            [{"text": "Mine."}, {"text": "Theirs."}, {"text": "Done."}],
        ),
    ],
)
def test_reasoning_is_replayed_only_to_bedrock_and_its_model(
    kw: dict[str, Any], content: Any
) -> None:
    history = reasoning_history(base64.b64encode(b"\x00\x01secret").decode())
    assert bedrock.encode(history, **kw)["messages"][1] == {"role": "assistant", "content": content}


def test_redacted_reasoning_that_is_not_base64_cannot_be_replayed() -> None:
    turn = bedrock.encode(reasoning_history("not base64!"))["messages"][1]
    assert {"reasoningContent": {"reasoningText": {"text": "Mine.", "signature": "s1"}}} in turn[
        "content"
    ]
    assert not any(
        "redactedContent" in block.get("reasoningContent", {}) for block in turn["content"]
    )


def test_raw_arguments_cannot_go_so_input_is_the_empty_object() -> None:
    call = tl.tool_call_part("t1", "f", '{"a": tru')
    history = [
        tl.user_message("go"),
        tl.assistant_message(call),
        tl.tool_message(tl.tool_result_part("t1", "x")),
    ]
    block = bedrock.encode(history, integrity="off")["messages"][1]["content"][0]
    assert block == {"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}


def test_encode_never_changes_its_input() -> None:
    history = agent_turn()
    before = tl.dump_json(history)
    bedrock.encode(history, reasoning="text", unsupported="drop")
    assert tl.dump_json(history) == before


# ---------------------------------------------------------------------------------------------
# decode


def test_decode_reads_the_json_spelling_too() -> None:
    body = {
        "modelId": "anthropic.claude-x",
        "system": [{"text": "Rules."}, {"cachePoint": {"type": "default"}}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "image": {
                            "format": "jpeg",
                            "source": {"bytes": base64.b64encode(b"\xff\xd8").decode()},
                        }
                    },
                    {"document": {"name": "notes", "source": {"text": "plain notes"}}},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"redactedContent": base64.b64encode(b"\x09").decode()}},
                    {"toolUse": {"toolUseId": "t1", "name": "f", "input": [1, 2]}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": "t1",
                            "content": [{"json": {"rows": 2}}, {"text": "done"}],
                            "status": "success",
                        }
                    },
                    {"cachePoint": {"type": "default"}},
                    {"text": "ok?"},
                ],
            },
        ],
    }
    system, user, assistant, tool, after = bedrock.decode(body)
    point = {"bedrock.cache_point": {"type": "default"}}  # a cache point is kept on its part
    assert system.parts == (tl.text_part("Rules.", metadata=point),)
    assert user.parts == (
        tl.file_part(b"\xff\xd8", "image/jpeg"),
        tl.file_part(b"plain notes", "text/plain", filename="notes"),
    )
    assert assistant.parts == (
        tl.reasoning_part(encrypted="CQ==", redacted=True, provider="bedrock"),
        tl.ToolCallPart(id="t1", name="f", arguments={}, raw_arguments="[1, 2]"),
    )
    assert tool.parts == (
        tl.tool_result_part(
            "t1", [tl.text_part('{"rows":2}'), tl.text_part("done")], name="f", metadata=point
        ),
    )
    assert after.parts == (tl.text_part("ok?"),)


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"messages": "hi"}, "messages: expected an array"),
        ({"messages": [{"role": "user"}]}, r"messages\[0\]\.content: required"),
        ({"messages": [{"role": "tool", "content": []}]}, r"messages\[0\]\.role: unknown role"),
        (
            {"messages": [{"role": "user", "content": [{"text": "a", "image": {}}]}]},
            r"messages\[0\]\.content\[0\]: a content block sets exactly one key",
        ),
        (
            {"messages": [{"role": "user", "content": [{"toolUse": {}}]}]},
            r"messages\[0\]\.content\[0\]\.toolUse: a user turn cannot hold",
        ),
        (
            {"messages": [{"role": "assistant", "content": [{"toolResult": {}}]}]},
            r"messages\[0\]\.content\[0\]\.toolResult: an assistant turn cannot hold",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [{"image": {"format": "png", "source": {"bytes": "!!"}}}],
                    }
                ]
            },
            r"messages\[0\]\.content\[0\]\.image\.source\.bytes: not valid base64",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"toolResult": {"toolUseId": "t", "content": [], "status": "failed"}}
                        ],
                    }
                ]
            },
            r"messages\[0\]\.content\[0\]\.toolResult\.status: expected 'success' or 'error'",
        ),
        ({"prompt": "hi"}, "messages: required"),
    ],
)
def test_a_payload_not_of_the_format_names_the_format_and_the_path(payload: Any, path: str) -> None:
    with pytest.raises(CodecError, match=f"Bedrock Converse payload: {path}"):
        bedrock.decode(payload)


# ---------------------------------------------------------------------------------------------
# decode_response


def converse_response(
    content: list[dict[str, Any]], stop_reason: str = "end_turn"
) -> dict[str, Any]:
    """A response as boto3's ``converse`` returns it (shaped by the ``ConverseResponse`` model)."""
    return {
        "ResponseMetadata": {
            "RequestId": "4c2b7a70-1f9e-4d0a-9c0e-3c1d2e5f6a7b",
            "HTTPStatusCode": 200,
            "RetryAttempts": 0,
        },
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop_reason,
        "usage": {"inputTokens": 120, "outputTokens": 35, "totalTokens": 155},
        "metrics": {"latencyMs": 640},
    }


def test_decode_response_reads_reasoning_text_tool_use_and_usage() -> None:
    response = converse_response(
        [
            {
                "reasoningContent": {
                    "reasoningText": {"text": "Call the tool.", "signature": "EqQB"}
                }
            },
            {"reasoningContent": {"redactedContent": b"\xde\xad"}},
            {"text": "Checking."},
            {
                "toolUse": {
                    "toolUseId": "tooluse_abc",
                    "name": "weather",
                    "input": {"city": "Paris"},
                }
            },
        ],
        stop_reason="tool_use",
    )
    message = bedrock.decode_response(response)
    assert message.parts == (
        tl.reasoning_part("Call the tool.", signature="EqQB", provider="bedrock"),
        tl.reasoning_part(encrypted="3q0=", redacted=True, provider="bedrock"),
        tl.text_part("Checking."),
        tl.tool_call_part("tooluse_abc", "weather", {"city": "Paris"}),
    )
    assert message.metadata == {
        "provider": "bedrock",
        "response_id": "4c2b7a70-1f9e-4d0a-9c0e-3c1d2e5f6a7b",
        "stop_reason": "tool_use",
        "usage": {
            "input_tokens": 120,
            "output_tokens": 35,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "reasoning_tokens": 0,
        },
        "bedrock.usage": {"inputTokens": 120, "outputTokens": 35, "totalTokens": 155},
    }


def test_a_decoded_response_goes_back_out_unchanged() -> None:
    content: list[dict[str, Any]] = [
        {"reasoningContent": {"reasoningText": {"text": "Call the tool.", "signature": "EqQB"}}},
        {"reasoningContent": {"redactedContent": b"\xde\xad"}},
        {"toolUse": {"toolUseId": "tooluse_abc", "name": "weather", "input": {"city": "Paris"}}},
    ]
    message = bedrock.decode_response(converse_response(content, "tool_use"))
    history = [
        tl.user_message("go"),
        message,
        tl.tool_message(tl.tool_result_part("tooluse_abc", "sunny")),
    ]
    assert bedrock.encode(history)["messages"][1] == {"role": "assistant", "content": content}


@pytest.mark.parametrize(
    "response",
    [
        {},
        {"output": {}},
        {"output": {"message": {"role": "assistant", "content": [{"video": 3}]}}},
        "[1, 2",
    ],
)
def test_decode_response_of_something_else_raises_codec_error(response: Any) -> None:
    with pytest.raises(CodecError, match="Bedrock Converse"):
        bedrock.decode_response(response)


# ---------------------------------------------------------------------------------------------
# Hostile values: a payload given as Python values (or JSON text read with NaN) need not be
# JSON; decode raises CodecError naming the value, never pydantic's or a TypeError.


def content(role: str, *blocks: Any) -> dict[str, Any]:
    return {"messages": [{"role": role, "content": list(blocks)}]}


def tool_result(*items: Any) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": "t", "content": list(items)}}


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        (
            content("user", {1: "x", "text": "y"}),
            r"messages\[0\]\.content\[0\]: a content block sets exactly one key, not \['1', 'text'",
        ),
        (
            content(
                "assistant", {"toolUse": {"toolUseId": "t", "name": "f", "input": {"a": math.nan}}}
            ),
            r"messages\[0\]\.content\[0\]\.toolUse\.input\.a: NaN is not a JSON value",
        ),
        (
            content("user", tool_result({"json": {"score": math.inf}})),
            r"messages\[0\]\.content\[0\]\.toolResult\.content\[0\]\.json\.score: Infinity",
        ),
        (
            content("user", tool_result({"json": [b"x"]})),
            r"messages\[0\]\.content\[0\]\.toolResult\.content\[0\]\.json\[0\]: a bytes value",
        ),
    ],
)
def test_values_a_message_cannot_hold_are_codec_errors(payload: Any, problem: str) -> None:
    with pytest.raises(CodecError, match=f"Bedrock Converse payload: {problem}"):
        bedrock.decode(payload)


def test_a_json_tool_result_is_written_as_compact_json() -> None:
    [_, tool] = bedrock.decode(
        {
            "messages": [
                {
                    "role": "assistant",
                    "content": [{"toolUse": {"toolUseId": "t", "name": "f", "input": {}}}],
                },
                content("user", tool_result({"json": {"é": [1, None], "x": None}}))["messages"][0],
            ]
        }
    )
    assert (
        part_as(tl.ToolResultPart, tool.parts[0]).content == '{"é":[1,null]}'
    )  # null members left out


def test_usage_that_is_not_counts_is_a_codec_error() -> None:
    document: dict[str, Any] = {
        "output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}},
        "usage": {"inputTokens": 3, "outputTokens": None},
    }
    assert bedrock.decode_response(document).usage == tl.Usage(input_tokens=3)
    document["usage"] = {"inputTokens": 3, "outputTokens": "4"}
    with pytest.raises(CodecError, match=r"usage\.outputTokens: expected a count"):
        bedrock.decode_response(document)
