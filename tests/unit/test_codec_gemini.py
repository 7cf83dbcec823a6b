"""The Gemini codec: exact payloads written by hand, thought signatures, decode,
decode_response."""

from __future__ import annotations

import math
from typing import Any

import pytest

import threadline as tl
from tests.support import part_as
from tests.support import require_module
from threadline import CodecError
from threadline import IntegrityError
from threadline import UnsupportedContentError
from threadline.codecs import gemini

PNG = b"\x89PNG\r\n\x1a\n\xfb\xff"
PNG_B64 = "iVBORw0KGgr7/w=="
SIG = "c2lnbmF0dXJl"  # base64 of b"signature"
SKIP = "skip_thought_signature_validator"


def signed(part: Any, signature: str = SIG) -> Any:
    return part.with_metadata({"gemini.thought_signature": signature})


def agent_turn() -> list[tl.Message]:
    return [
        tl.system_message("Be brief."),
        tl.user_message("What is in this image?", tl.file_part(PNG, "image/png")),
        tl.assistant_message(
            tl.reasoning_part("Classify it.", signature=SIG, provider="gemini", model="gemini-3"),
            signed(tl.tool_call_part("call_1", "classify", {"top": 1})),
            tl.tool_call_part("call_2", "describe", {}),
        ),
        tl.tool_message(
            tl.tool_result_part("call_1", "cat (0.97)"),
            tl.tool_result_part(
                "call_2", ["looks like", tl.file_part(PNG, "image/png")], is_error=True
            ),
        ),
        tl.user_message("And the colour?"),
    ]


def test_an_agent_turn_is_written_exactly() -> None:
    assert gemini.encode(agent_turn(), system="Answer in English.") == {
        "systemInstruction": {"parts": [{"text": "Answer in English."}, {"text": "Be brief."}]},
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"text": "What is in this image?"},
                    {"inlineData": {"mimeType": "image/png", "data": PNG_B64}},
                ],
            },
            {
                "role": "model",
                "parts": [
                    {"text": "Classify it.", "thought": True, "thoughtSignature": SIG},
                    {
                        "functionCall": {"id": "call_1", "name": "classify", "args": {"top": 1}},
                        "thoughtSignature": SIG,
                    },
                    {"functionCall": {"id": "call_2", "name": "describe", "args": {}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "call_1",
                            "name": "classify",
                            "response": {"output": "cat (0.97)"},
                        }
                    },
                    {
                        "functionResponse": {
                            "id": "call_2",
                            "name": "describe",
                            "response": {"error": ["looks like", {"$ref": "file-1"}]},
                            "parts": [
                                {
                                    "inlineData": {
                                        "mimeType": "image/png",
                                        "data": PNG_B64,
                                        "displayName": "file-1",
                                    }
                                }
                            ],
                        }
                    },
                    {"text": "And the colour?"},
                ],
            },
        ],
    }


def test_decode_reads_the_agent_turn_back() -> None:
    history = agent_turn()
    decoded = gemini.decode(gemini.encode(history))
    assert [m.role for m in decoded] == ["system", "user", "assistant", "tool", "user"]
    assert (
        decoded[2].parts
        == (
            tl.reasoning_part(
                "Classify it.", signature=SIG, provider="gemini"
            ),  # no model on the wire
            *history[2].parts[1:],
        )
    )
    assert decoded[3].parts == (
        tl.tool_result_part("call_1", "cat (0.97)", name="classify"),
        tl.tool_result_part(
            "call_2", ["looks like", tl.file_part(PNG, "image/png")], name="describe", is_error=True
        ),
    )


def test_text_is_never_concatenated_and_empty_text_is_not_sent() -> None:
    history = [tl.user_message("one", "", "two"), tl.assistant_message("three", "")]
    assert gemini.encode(history)["contents"] == [
        {"role": "user", "parts": [{"text": "one"}, {"text": "two"}]},
        {"role": "model", "parts": [{"text": "three"}]},
    ]


def test_an_empty_text_that_carries_a_signature_is_sent() -> None:
    history = [tl.user_message("q"), tl.assistant_message("Answer.", signed(tl.text_part("")))]
    assert gemini.encode(history)["contents"][1]["parts"] == [
        {"text": "Answer."},
        {"text": "", "thoughtSignature": SIG},
    ]


def test_consecutive_turns_of_one_role_are_merged() -> None:
    history = [
        tl.user_message("a"),
        tl.assistant_message("thinking out loud"),
        tl.assistant_message(tl.tool_call_part("c1", "f", {})),
        tl.tool_message(tl.tool_result_part("c1", "ok")),
        tl.system_message("Now answer in French."),
        tl.user_message("b"),
    ]
    contents = gemini.encode(history)["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[2]["parts"][1:] == [
        {"text": "<system>\nNow answer in French.\n</system>"},
        {"text": "b"},
    ]


def test_a_leading_assistant_turn_gets_a_placeholder_user_turn() -> None:
    history = [tl.system_message("sys"), tl.assistant_message("Hello! How can I help?")]
    payload = gemini.encode(history)
    assert payload["contents"] == [
        {"role": "user", "parts": [{"text": "[conversation start]"}]},
        {"role": "model", "parts": [{"text": "Hello! How can I help?"}]},
    ]
    assert [m.role for m in gemini.decode(payload)] == ["system", "assistant"]


def test_ids_gemini_might_refuse_are_mapped_the_same_for_call_and_response() -> None:
    history = [
        tl.user_message("go"),
        tl.assistant_message(tl.tool_call_part("call 1|x", "f", {})),
        tl.tool_message(tl.tool_result_part("call 1|x", "ok")),
    ]
    contents = gemini.encode(history)["contents"]
    call_id = contents[1]["parts"][0]["functionCall"]["id"]
    assert call_id.startswith("call_")
    assert call_id == contents[2]["parts"][0]["functionResponse"]["id"]


def test_files_the_api_does_not_document_follow_the_unsupported_policy() -> None:
    history = [
        tl.user_message(
            tl.file_part("gs://bucket/talk.mp3", "audio/mp3"),
            tl.file_part(b"GIF89a", "image/gif"),
        )
    ]
    assert gemini.encode(history)["contents"][0]["parts"] == [
        {"fileData": {"mimeType": "audio/mp3", "fileUri": "gs://bucket/talk.mp3"}},
        {"text": "[image/gif omitted: not supported by gemini]"},
    ]
    assert gemini.encode(history, unsupported="drop")["contents"][0]["parts"] == [
        {"fileData": {"mimeType": "audio/mp3", "fileUri": "gs://bucket/talk.mp3"}}
    ]
    with pytest.raises(UnsupportedContentError, match=r"gemini .*messages\[0\]\.parts\[1\]"):
        gemini.encode(history, unsupported="raise")


def test_integrity_runs_first() -> None:
    dangling = [tl.user_message("go"), tl.assistant_message(tl.tool_call_part("c1", "f", {}))]
    response = gemini.encode(dangling)["contents"][2]["parts"][0]["functionResponse"]
    assert response["id"] == "c1"
    assert "error" in response["response"]
    with pytest.raises(IntegrityError):
        gemini.encode(dangling, integrity="strict")


# ---------------------------------------------------------------------------------------------
# Thought signatures


def loop(*parts: Any, metadata: dict[str, Any] | None = None) -> list[tl.Message]:
    calls = [part for part in parts if isinstance(part, tl.ToolCallPart)]
    out = [tl.user_message("go"), tl.assistant_message(*parts, metadata=metadata)]
    if calls:
        out.append(tl.tool_message(*(tl.tool_result_part(c.id, "ok") for c in calls)))
    return out


def model_parts(payload: dict[str, Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = payload["contents"][1]["parts"]
    return parts


def test_signatures_go_back_on_their_parts_for_their_model() -> None:
    history = loop(
        signed(tl.text_part("Let me check.")),
        signed(tl.tool_call_part("c1", "f", {}), "b3RoZXI="),
        metadata={"provider": "gemini", "model": "gemini-3-pro"},
    )
    for model in (None, "gemini-3-pro"):
        assert model_parts(gemini.encode(history, model=model)) == [
            {"text": "Let me check.", "thoughtSignature": SIG},
            {"functionCall": {"id": "c1", "name": "f", "args": {}}, "thoughtSignature": "b3RoZXI="},
        ]
    assert gemini.decode(gemini.encode(history))[1].parts == history[1].parts


@pytest.mark.parametrize("options", [{"model": "gemini-2.5-flash"}, {"reasoning": "drop"}])
def test_signatures_are_dropped_for_another_model_or_with_drop(options: dict[str, Any]) -> None:
    history = loop(
        tl.reasoning_part("Think.", signature=SIG, provider="gemini", model="gemini-3-pro"),
        signed(tl.tool_call_part("c1", "f", {})),
        metadata={"model": "gemini-3-pro"},
    )
    assert model_parts(gemini.encode(history, **options)) == [
        {"functionCall": {"id": "c1", "name": "f", "args": {}}, "thoughtSignature": SKIP},
    ]


def test_an_unsigned_call_turn_gets_the_documented_skip_signature_which_decode_drops() -> None:
    history = loop(tl.tool_call_part("c1", "f", {}), tl.tool_call_part("c2", "g", {}))
    payload = gemini.encode(history)
    assert model_parts(payload) == [
        {"functionCall": {"id": "c1", "name": "f", "args": {}}, "thoughtSignature": SKIP},
        {"functionCall": {"id": "c2", "name": "g", "args": {}}},
    ]
    assert gemini.decode(payload)[1].parts == history[1].parts


def test_other_providers_reasoning_is_dropped_or_sent_as_text() -> None:
    history = loop(tl.reasoning_part("Hmm.", signature="sig", provider="anthropic"), "Done.")
    assert model_parts(gemini.encode(history)) == [{"text": "Done."}]
    assert model_parts(gemini.encode(history, reasoning="text")) == [
        {"text": "Hmm."},
        {"text": "Done."},
    ]


def test_a_signature_that_is_not_base64_is_not_sent() -> None:
    history = loop(signed(tl.text_part("x"), "not base64!"), metadata={"model": "m"})
    assert model_parts(gemini.encode(history)) == [{"text": "x"}]


def test_code_execution_goes_back_to_gemini_only() -> None:
    code = tl.ProviderToolCallPart(
        id="code_1",
        name="code_execution",
        input={"code": "print(2)", "language": "PYTHON"},
        provider="gemini",
    )
    result = tl.ProviderToolResultPart(
        call_id="code_1", content={"outcome": "OUTCOME_OK", "output": "2\n"}, provider="gemini"
    )
    history = [tl.user_message("compute"), tl.assistant_message(code, result, "It is 2.")]
    parts = gemini.encode(history)["contents"][1]["parts"]
    assert parts == [
        {"executableCode": {"code": "print(2)", "language": "PYTHON", "id": "code_1"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "2\n", "id": "code_1"}},
        {"text": "It is 2."},
    ]
    assert gemini.decode(gemini.encode(history))[1].parts == history[1].parts


# ---------------------------------------------------------------------------------------------
# decode


def test_decode_reads_snake_case_and_pairs_calls_without_ids_by_position_and_name() -> None:
    body = {
        "system_instruction": {"parts": [{"text": "Rules."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {
                "role": "model",
                "parts": [
                    {"function_call": {"name": "f", "args": {"a": 1}}, "thought_signature": SIG},
                    {"function_call": {"name": "g"}},
                ],
            },
            {
                "parts": [
                    {"function_response": {"name": "g", "response": {"temperature": 21}}},
                    {"function_response": {"name": "f", "response": {"error": {"code": 7}}}},
                ]
            },
        ],
    }
    system, _, assistant, tool = gemini.decode(body)
    assert system.parts == (tl.text_part("Rules."),)
    assert assistant.parts == (
        signed(tl.tool_call_part("call_1_0", "f", {"a": 1})),
        tl.tool_call_part("call_1_1", "g", {}),
    )
    assert tool.parts == (
        tl.tool_result_part("call_1_1", '{"temperature":21}', name="g"),
        tl.tool_result_part("call_1_0", '{"code":7}', name="f", is_error=True),
    )


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"contents": {}}, "contents: expected an array"),
        ({"contents": [{"role": "assistant", "parts": []}]}, r"contents\[0\]\.role: unknown role"),
        (
            {"contents": [{"role": "user", "parts": [{"functionCall": {"name": "f"}}]}]},
            r"contents\[0\]\.parts\[0\]\.functionCall: function calls are only valid in model",
        ),
        (
            {
                "contents": [
                    {
                        "role": "user",
                        "parts": [{"inlineData": {"mimeType": "image/png", "data": "!!"}}],
                    }
                ]
            },
            r"contents\[0\]\.parts\[0\]\.inlineData\.data: not valid base64",
        ),
        (
            {"contents": [{"role": "model", "parts": [{"videoMetadata": {}}]}]},
            r"contents\[0\]\.parts\[0\]: a part needs",
        ),
        ({"messages": []}, "contents: required"),
    ],
)
def test_a_payload_not_of_the_format_names_the_format_and_the_path(payload: Any, path: str) -> None:
    with pytest.raises(CodecError, match=f"Gemini generateContent payload: {path}"):
        gemini.decode(payload)


# ---------------------------------------------------------------------------------------------
# decode_response, on responses built with the SDK's own model


def response(parts: list[dict[str, Any]], **extra: Any) -> Any:
    types = require_module("google.genai.types")
    return types.GenerateContentResponse.model_validate(
        {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "modelVersion": "gemini-3-pro-preview",
            "responseId": "resp-123",
            "usageMetadata": {
                "promptTokenCount": 100,
                "candidatesTokenCount": 20,
                "thoughtsTokenCount": 50,
                "totalTokenCount": 170,
            },
            **extra,
        }
    )


def rest_json(sdk_response: Any) -> dict[str, Any]:
    """The response as the REST API sends it: camelCase names, bytes in base64."""
    dumped: dict[str, Any] = sdk_response.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def test_decode_response_reads_thoughts_signed_calls_and_usage() -> None:
    sdk_response = response(
        [
            {"text": "Two calls.", "thought": True, "thoughtSignature": SIG},
            {
                "functionCall": {"id": "fc_1", "name": "weather", "args": {"city": "Paris"}},
                "thoughtSignature": SIG,
            },
            {"functionCall": {"name": "time", "args": {}}},
        ]
    )
    signature = rest_json(sdk_response)["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    for given in (
        rest_json(sdk_response),
        sdk_response,
        sdk_response.model_dump_json(by_alias=True),
    ):
        message = gemini.decode_response(given)
        thought, weather, time = message.parts
        assert thought == tl.reasoning_part(
            "Two calls.", signature=signature, provider="gemini", model="gemini-3-pro-preview"
        )
        assert weather == signed(tl.tool_call_part("fc_1", "weather", {"city": "Paris"}), signature)
        assert isinstance(time, tl.ToolCallPart)
        assert time.name == "time"
        assert time.id.startswith("call_")
        assert message.metadata == {
            "provider": "gemini",
            "model": "gemini-3-pro-preview",
            "response_id": "resp-123",
            "stop_reason": "STOP",
            "usage": {  # the thoughts are output beside the candidates
                "input_tokens": 100,
                "output_tokens": 70,
                "cache_read_tokens": 0,
                "cache_write_tokens": 0,
                "reasoning_tokens": 50,
            },
            "gemini.usage": {
                "promptTokenCount": 100,
                "candidatesTokenCount": 20,
                "thoughtsTokenCount": 50,
                "totalTokenCount": 170,
            },
        }


def test_calls_without_ids_get_ids_unique_to_their_response() -> None:
    part = {"functionCall": {"name": "time", "args": {}}}
    first = gemini.decode_response(rest_json(response([part])))
    second = gemini.decode_response(rest_json(response([part], responseId="resp-456")))
    again = gemini.decode_response(rest_json(response([part])))

    def call_id(message: tl.Message) -> str:
        return part_as(tl.ToolCallPart, message.parts[0]).id

    assert call_id(first) != call_id(second)
    assert call_id(first) == call_id(again)  # derived from the responseId


def test_decode_response_of_a_blocked_prompt() -> None:
    types = require_module("google.genai.types")
    blocked = types.GenerateContentResponse.model_validate(
        {"promptFeedback": {"blockReason": "SAFETY"}}
    )
    message = gemini.decode_response(rest_json(blocked))
    assert message.parts == (tl.text_part(""),)
    assert message.metadata["stop_reason"] == "SAFETY"


@pytest.mark.parametrize(
    "bad", [{}, {"candidates": "x"}, {"candidates": [{"content": {"parts": [{}]}}]}]
)
def test_decode_response_refuses_what_is_not_a_response(bad: Any) -> None:
    with pytest.raises(CodecError, match="Gemini generateContent response"):
        gemini.decode_response(bad)


# ---------------------------------------------------------------------------------------------
# Hostile values: a payload given as Python values (or JSON text read with NaN) need not be
# JSON; decode raises CodecError naming the value, never pydantic's or a TypeError.


def model_part(part: dict[str, Any]) -> dict[str, Any]:
    return {"contents": [{"role": "model", "parts": [part]}]}


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        (
            {"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": "png"}}]}]},
            r"contents\[0\]\.parts\[0\]\.inlineData\.mimeType: 'png' is not a media type",
        ),
        (
            {"contents": [{"role": ["user"], "parts": []}]},
            r"contents\[0\]\.role: expected a string",
        ),
        (
            model_part({"functionCall": {"name": "f", "args": {"x": [math.nan]}}}),
            r"contents\[0\]\.parts\[0\]\.functionCall\.args\.x\[0\]: NaN is not a JSON value",
        ),
        (
            model_part({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": b"1"}}),
            r"contents\[0\]\.parts\[0\]\.codeExecutionResult\.output: a bytes value is not JSON",
        ),
        (
            model_part({"toolCall": {"toolType": "GOOGLE_SEARCH_WEB", "args": {"q": math.inf}}}),
            r"contents\[0\]\.parts\[0\]\.toolCall\.args\.q: Infinity is not a JSON value",
        ),
        (
            model_part({"toolResponse": {"response": {"r": {1: 2}}}}),
            r"contents\[0\]\.parts\[0\]\.toolResponse\.response\.r: an object key is a int",
        ),
    ],
)
def test_values_a_message_cannot_hold_are_codec_errors(payload: Any, problem: str) -> None:
    with pytest.raises(CodecError, match=f"Gemini generateContent payload: {problem}"):
        gemini.decode(payload)


def test_usage_counts_may_be_null_or_absent() -> None:
    document = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "x"}]}}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": None},
    }
    message = gemini.decode_response(document)
    # proto3 JSON leaves zero counts out: no candidates count means none were produced.
    assert message.usage == tl.Usage(input_tokens=5)
    assert message.metadata["gemini.usage"] == {"promptTokenCount": 5}
    document["usageMetadata"] = {"prompt_token_count": "5"}
    with pytest.raises(CodecError, match=r"usageMetadata\.prompt_token_count: expected a count"):
        gemini.decode_response(document)


def test_metadata_and_input_values_of_any_json_type_never_break_encode() -> None:
    # Membership tests on these values raised TypeError for lists (unhashable).
    odd = ["x"]
    call = tl.ProviderToolCallPart(
        id="e1", name="code_execution", input={"code": "1", "language": odd}, provider="gemini"
    )
    result = tl.ProviderToolResultPart(call_id="e1", content={"outcome": odd}, provider="gemini")
    tool = tl.ProviderToolCallPart(
        id="t1", name="x", input={}, provider="gemini", metadata={"gemini.tool_type": odd}
    )
    contents = gemini.encode([tl.user_message("hi"), tl.assistant_message(call, result, tool)])
    texts = [part.get("text", "") for part in contents["contents"][1]["parts"]]
    assert all("omitted: not supported by gemini" in text for text in texts)
