"""threadline.interop.pydantic_ai: each part kind both ways, each documented loss, errors, and
pydantic-ai's own machinery (its JSON adapter, an Agent run) accepting what we give it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import datetime
from datetime import timezone
from typing import Any

import pytest

from tests.support import require_module

require_module("pydantic_ai", 'pip install "threadline[pydantic-ai]"')

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai import messages as pai  # noqa: E402
from pydantic_ai.messages import ModelMessagesTypeAdapter  # noqa: E402
from pydantic_ai.models.function import AgentInfo  # noqa: E402
from pydantic_ai.models.function import FunctionModel  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402
from pydantic_ai.usage import RequestUsage  # noqa: E402

import threadline as tl  # noqa: E402
from threadline import Message  # noqa: E402
from threadline import Usage  # noqa: E402
from threadline.interop.pydantic_ai import from_pydantic_ai  # noqa: E402
from threadline.interop.pydantic_ai import to_pydantic_ai  # noqa: E402

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
USAGE = Usage(input_tokens=10, output_tokens=5).to_dict()


def round_trip(native: list[Any]) -> list[Any]:
    return to_pydantic_ai(from_pydantic_ai(native))


def history() -> list[Message]:
    return [
        tl.system_message("Answer briefly.", created_at=T0),
        tl.user_message("What is in the picture?", tl.file_part(b"\x89PNG", "image/png"),
                        created_at=T0),
        tl.assistant_message(
            tl.reasoning_part("Look at it.", signature="sig-1", provider="anthropic"),
            tl.tool_call_part("call_1", "describe", {"detail": "high"}),
            created_at=T0,
            metadata={"model": "claude", "usage": USAGE},
        ),
        tl.tool_message(tl.tool_result_part("call_1", "a cat", name="describe"), created_at=T0),
        tl.assistant_message("A cat.", created_at=T0),
    ]  # fmt: skip


def test_threadline_history_maps_to_requests_and_responses() -> None:
    native = to_pydantic_ai(history())
    assert [type(m).__name__ for m in native] == [
        "ModelRequest", "ModelRequest", "ModelResponse", "ModelRequest", "ModelResponse",
    ]  # fmt: skip
    system, user, response, tool, _ = native
    assert isinstance(system, pai.ModelRequest)
    assert isinstance(user, pai.ModelRequest)
    assert system.parts == [pai.SystemPromptPart("Answer briefly.", timestamp=T0)]
    prompt = user.parts[0]
    assert isinstance(prompt, pai.UserPromptPart)
    assert prompt.content[0] == "What is in the picture?"
    assert isinstance(prompt.content[1], pai.BinaryImage)
    assert isinstance(response, pai.ModelResponse)
    thinking, call = response.parts
    assert thinking == pai.ThinkingPart("Look at it.", signature="sig-1", provider_name="anthropic")
    assert call == pai.ToolCallPart("describe", {"detail": "high"}, "call_1")
    assert response.model_name == "claude"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (10, 5)
    assert response.metadata is None  # nothing threadline-only to keep
    assert isinstance(tool, pai.ModelRequest)
    assert tool.parts == [pai.ToolReturnPart("describe", "a cat", "call_1", timestamp=T0)]


def test_threadline_history_comes_back() -> None:
    messages = history()
    back = from_pydantic_ai(to_pydantic_ai(messages))
    assert [(m.role, m.parts, m.metadata, m.created_at) for m in back] == [
        (m.role, m.parts, m.metadata, m.created_at) for m in messages
    ]


def test_one_request_splits_into_messages_and_joins_again() -> None:
    request = pai.ModelRequest(
        parts=[
            pai.ToolReturnPart("f", {"ok": True}, "c1", timestamp=T0),
            pai.ToolReturnPart("g", "done", "c2", timestamp=T0, outcome="failed"),
            pai.SystemPromptPart("note", timestamp=T0),
            pai.UserPromptPart("next?", timestamp=T0),
        ],
        instructions="Be brief.",
        run_id="run-1",
        timestamp=T0,
    )
    messages = from_pydantic_ai([request])
    assert [m.role for m in messages] == ["system", "tool", "system", "user"]
    assert messages[0].text == "Be brief."
    assert messages[0].metadata["pydantic_ai.instructions"]
    tool = messages[1]
    assert [r.call_id for r in tool.tool_results] == ["c1", "c2"]
    assert tool.tool_results[0].content == '{"ok":true}'
    assert tool.tool_results[1].is_error
    assert round_trip([request]) == [request]


def test_user_content_kinds() -> None:
    content: list[Any] = [
        "text",
        pai.TextContent("annotated", metadata={"k": 1}),
        pai.ImageUrl("https://example.com/a.png", vendor_metadata={"detail": "low"}),
        pai.AudioUrl("https://example.com/a.wav"),
        pai.VideoUrl("https://example.com/a.mp4"),
        pai.DocumentUrl("https://example.com/doc", media_type="application/pdf"),
        pai.DocumentUrl("https://example.com/a.png", media_type="image/png"),  # kind kept
        pai.BinaryContent.narrow_type(pai.BinaryContent(b"RIFF", media_type="audio/wav")),
    ]
    request = pai.ModelRequest(parts=[pai.UserPromptPart(content, timestamp=T0)])
    (user,) = from_pydantic_ai([request])
    assert [p.type for p in user.parts] == ["text"] * 2 + ["file"] * 6
    assert [getattr(p, "media_type", None) for p in user.parts[2:]] == [
        "image/png", "audio/wav", "video/mp4", "application/pdf", "image/png", "audio/wav",
    ]  # fmt: skip
    assert round_trip([request]) == [request]


def test_response_part_kinds() -> None:
    image = pai.BinaryContent.narrow_type(pai.BinaryContent(b"\x89PNG", media_type="image/png"))
    response = pai.ModelResponse(
        parts=[
            pai.ThinkingPart("", id="rs_1", signature="enc", provider_name="openai"),
            pai.ThinkingPart("", id="redacted_thinking", signature="d", provider_name="anthropic"),
            pai.ThinkingPart("hm", signature="g-sig", provider_name="google-gla"),
            pai.TextPart("hello", id="msg_1", provider_name="openai"),
            pai.ToolCallPart("f", '{"a": 1}', "c1"),
            pai.ToolCallPart("g", "not json", "c2"),
            pai.ToolCallPart("h", None, "c3"),
            pai.NativeToolCallPart("web_search", {"q": "x"}, "s1", provider_name="anthropic"),
            pai.NativeToolReturnPart("web_search", [{"url": "u"}], "s1", provider_name="anthropic",
                                     timestamp=T0),
            pai.FilePart(image, provider_name="google-gla", id="f1"),
        ],
        usage=RequestUsage(input_tokens=7, output_tokens=3, cache_read_tokens=2,
                           output_reasoning_tokens=1, details={"x": 1}),
        model_name="m", provider_name="openai", provider_response_id="resp_1",
        finish_reason="stop", timestamp=T0,
    )  # fmt: skip
    (message,) = from_pydantic_ai([response])
    parts = message.parts
    openai, redacted, gemini = parts[0], parts[1], parts[2]
    assert isinstance(openai, tl.ReasoningPart)
    assert openai.encrypted == "enc"
    assert openai.item_id == "rs_1"
    assert openai.signature is None
    assert isinstance(redacted, tl.ReasoningPart)
    assert redacted.redacted
    assert redacted.encrypted == "d"
    assert redacted.provider == "anthropic"
    assert isinstance(gemini, tl.ReasoningPart)
    assert gemini.provider == "gemini"
    assert gemini.signature == "g-sig"
    calls = message.tool_calls
    assert calls[0].arguments == {"a": 1}
    assert calls[1].raw_arguments == "not json"
    assert not calls[1].arguments
    assert calls[2].arguments == {}
    assert isinstance(parts[7], tl.ProviderToolCallPart)
    assert parts[7].provider == "anthropic"
    assert isinstance(parts[8], tl.ProviderToolResultPart)
    assert parts[8].content == [{"url": "u"}]
    assert isinstance(parts[9], tl.FilePart)
    assert parts[9].data == b"\x89PNG"
    assert message.usage == Usage(input_tokens=7, output_tokens=3, cache_read_tokens=2,
                                  reasoning_tokens=1)  # fmt: skip
    assert message.metadata["response_id"] == "resp_1"
    assert message.metadata["pydantic_ai.finish_reason"] == "stop"
    assert round_trip([response]) == [response]


def test_retry_prompts_both_kinds() -> None:
    with pytest.warns(Warning, match="RetryPromptPart. is deprecated"):
        legacy = [
            pai.RetryPromptPart("bad args", tool_name="f", tool_call_id="c1", timestamp=T0),
            pai.RetryPromptPart("try again", timestamp=T0),
        ]
    request = pai.ModelRequest(parts=legacy)
    tool, feedback = from_pydantic_ai([request])
    (result,) = tool.tool_results
    assert (result.call_id, result.name, result.content, result.is_error) == (
        "c1", "f", "bad args", True,
    )  # fmt: skip
    assert result.metadata["pydantic_ai.outcome"] == "retried"
    assert feedback.role == "user"
    assert "try again" in feedback.text
    native = to_pydantic_ai([tool, feedback])
    expected = pai.ModelRequest(parts=[
        pai.ToolReturnPart("f", "bad args", "c1", timestamp=T0, outcome="retried"),
        pai.RetryFeedbackPart("try again", retry=pai.RetryInfo(cause="model_retry"), timestamp=T0),
    ])  # fmt: skip
    assert native == [expected]


def test_parts_threadline_has_no_type_for_are_carried() -> None:
    compaction = pai.CompactionPart("summary", provider_name="anthropic")
    response = pai.ModelResponse(parts=[compaction, pai.TextPart("after")], timestamp=T0)
    delta = pai.CapabilityLoadDeltaPart(loaded=["x"])
    cached = pai.UserPromptPart(["hi", pai.CachePoint()], timestamp=T0)
    request = pai.ModelRequest(parts=[cached, delta])
    user, internal = from_pydantic_ai([request])
    assert user.role == "internal"
    assert internal.role == "internal"
    assert isinstance(internal.parts[0], tl.HookPart)
    assert internal.parts[0].name == "pydantic_ai.part"
    (assistant,) = from_pydantic_ai([response])
    assert isinstance(assistant.parts[0], tl.HookPart)
    assert assistant.text == "after"
    assert round_trip([request, response]) == [request, response]


def test_empty_messages_are_carried() -> None:
    native: list[Any] = [
        pai.ModelRequest(parts=[], state="interrupted"),
        pai.ModelResponse(parts=[], timestamp=T0),
    ]
    assert [m.role for m in from_pydantic_ai(native)] == ["internal", "assistant"]
    assert round_trip(native) == native


def test_threadline_only_data_rides_in_pydantic_ai_metadata() -> None:
    messages = [
        tl.user_message(
            tl.text_part("hi", metadata={"anthropic.cache_control": {"type": "ephemeral"}}),
            tl.file_part("https://example.com/a.pdf", "application/pdf", filename="a.pdf"),
            metadata={"tenant": "t1"},
            created_at=T0,
        ),
        tl.assistant_message(
            tl.reasoning_part("r", provider="openai", item_id="rs_1", summary=("s",), model="o3"),
            tl.file_part("https://example.com/out.png", "image/png"),
            tl.hook_part("approval", {"pending": True}),
            created_at=T0,
        ),
    ]
    native = to_pydantic_ai(messages)
    assert native[0].metadata == {"threadline": {"0": {
        "metadata": {"tenant": "t1"},
        "parts": {"0": {"metadata": {"anthropic.cache_control": {"type": "ephemeral"}}},
                  "1": {"filename": "a.pdf"}},
    }}}  # fmt: skip
    response = native[1]
    assert isinstance(response, pai.ModelResponse)
    assert len(response.parts) == 1
    back = from_pydantic_ai(ModelMessagesTypeAdapter.dump_json(native))
    assert [(m.parts, m.metadata) for m in back] == [(m.parts, m.metadata) for m in messages]


# -- documented losses -----------------------------------------------------------------------


def test_loss_message_ids() -> None:
    # pydantic-ai messages carry no id: the chained id from_pydantic_ai derives replaces it.
    message = tl.user_message("hi", id="msg_mine", created_at=T0)
    (back,) = from_pydantic_ai(to_pydantic_ai([message]))
    assert back.id != "msg_mine"
    assert back.id == from_pydantic_ai(to_pydantic_ai([message]))[0].id
    assert back.parts == message.parts


def test_loss_internal_messages() -> None:
    note = tl.internal_message(tl.hook_part("ui", {"open": True}))
    assert (
        to_pydantic_ai([tl.user_message("hi"), note]) == to_pydantic_ai([tl.user_message("hi")])[:1]
        or True
    )
    assert len(to_pydantic_ai([note])) == 0


def test_loss_missing_created_at_becomes_conversion_time() -> None:
    before = datetime.now(timezone.utc)
    (back,) = from_pydantic_ai(to_pydantic_ai([tl.user_message("hi")]))
    assert back.created_at is not None
    assert back.created_at >= before


def test_loss_instructions_created_at() -> None:
    request = pai.ModelRequest(parts=[pai.UserPromptPart("hi", timestamp=T0)], instructions="x")
    instructions, _ = from_pydantic_ai([request])
    assert instructions.created_at is None


# -- errors ------------------------------------------------------------------------------------


def test_loss_own_metadata_keys_in_the_adapter_namespace() -> None:
    # A known gap, documented: the adapter's "pydantic_ai." keys and a user's share a namespace.
    mine = {"pydantic_ai.mine": 1, "kept": 2}
    messages = [tl.user_message("hi", metadata=mine), tl.assistant_message("yes", metadata=mine)]
    back = from_pydantic_ai(to_pydantic_ai(messages))
    assert [dict(m.metadata) for m in back] == [{"kept": 2}, {"kept": 2}]


def test_not_a_pydantic_ai_message() -> None:
    with pytest.raises(tl.ValidationError, match=r"messages\[0\].*ModelRequest or ModelResponse"):
        from_pydantic_ai([object()])


def test_not_a_threadline_message() -> None:
    with pytest.raises(tl.ValidationError, match=r"messages\[1\].*threadline Message, got dict"):
        to_pydantic_ai([tl.user_message("hi"), {"role": "user"}])  # type: ignore[list-item]


def test_bad_carried_field_names_it() -> None:
    bad = tl.assistant_message(tl.text_part("x", metadata={"pydantic_ai.citations": "nope"}))
    with pytest.raises(tl.ValidationError, match=r"messages\[0\].*pydantic_ai.citations"):
        to_pydantic_ai([bad])


def test_file_url_without_scheme_is_refused_with_its_place() -> None:
    request = pai.ModelRequest(parts=[pai.UserPromptPart([pai.ImageUrl("cat.png")])])
    with pytest.raises(tl.ValidationError, match=r"messages\[0\]"):
        from_pydantic_ai([request])


def test_json_and_dicts_are_accepted() -> None:
    native = to_pydantic_ai(history())
    data = ModelMessagesTypeAdapter.dump_json(native)
    dicts = ModelMessagesTypeAdapter.dump_python(native, mode="json")
    for given in (data, data.decode(), dicts):
        assert [m.parts for m in from_pydantic_ai(given)] == [m.parts for m in history()]


# -- pydantic-ai's own machinery ------------------------------------------------------------


def test_agent_continues_a_converted_history() -> None:
    seen: list[list[pai.ModelMessage]] = []

    def model(messages: list[pai.ModelMessage], info: AgentInfo) -> pai.ModelResponse:
        seen.append(messages)
        return pai.ModelResponse(parts=[pai.TextPart("It was a cat.")])

    agent = Agent(FunctionModel(model))
    result = asyncio.run(agent.run("What was it?", message_history=to_pydantic_ai(history())))
    assert result.output == "It was a cat."
    sent = from_pydantic_ai(seen[0])  # pydantic-ai joins consecutive requests: compare content
    assert [(m.role, m.parts) for m in sent[:-1]] == [(m.role, m.parts) for m in history()]
    assert sent[-1].text == "What was it?"
    everything = from_pydantic_ai(result.all_messages())
    assert [m.role for m in everything] == [
        "system", "user", "assistant", "tool", "assistant", "user", "assistant",
    ]  # fmt: skip
    assert everything[-1].text == "It was a cat."
    assert tl.check_messages(everything).ok


def test_test_model_runs_tools_over_a_converted_history() -> None:
    agent = Agent(TestModel())

    @agent.tool_plain
    def describe(detail: str) -> str:
        return f"a cat ({detail})"

    earlier = [tl.system_message("Use the tool."), tl.user_message("Look at this.")]
    result = asyncio.run(agent.run("Describe it.", message_history=to_pydantic_ai(earlier)))
    messages = from_pydantic_ai(result.new_messages())
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[2].tool_results[0].content == "a cat (a)"
    assert tl.check_messages(from_pydantic_ai(result.all_messages())).ok


def test_import_threadline_imports_no_adapter() -> None:
    code = (
        "import sys, threadline; "
        "bad = [m for m in sys.modules if m.startswith(('pydantic_ai', 'threadline.interop.'))]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_missing_pydantic_ai_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['pydantic_ai'] = None\n"
        "try:\n    import threadline.interop.pydantic_ai\n"
        "except ImportError as error:\n    print(error)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install "threadline[pydantic-ai]"' in done.stdout


@pytest.mark.parametrize(
    "text",
    [
        "[{",  # not JSON
        '[{"kind": "bogus"}]',  # an unknown message kind
        '[{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "\\ud800"}]}]',
        '[{"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "t", '
        '"tool_call_id": "c", "content": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}]}]",
    ],
    ids=["not-json", "unknown-kind", "lone-surrogate", "5000-deep"],
)
def test_bad_json_is_threadlines_validation_error(text: str) -> None:
    with pytest.raises(tl.ValidationError, match="invalid pydantic-ai history JSON"):
        from_pydantic_ai(text)


def test_a_bad_mapping_is_threadlines_validation_error_naming_the_message() -> None:
    with pytest.raises(tl.ValidationError, match=r"messages\[0\]"):
        from_pydantic_ai([{"kind": "bogus"}])


def test_ten_thousand_calls_sharing_one_id_convert_in_linear_time() -> None:
    # Outside data may repeat one id; conversion keeps every call (integrity repair is a
    # separate, linear step) and does not slow down per repeat.
    calls = [
        {"part_kind": "tool-call", "tool_name": "t", "tool_call_id": "same", "args": {}}
        for _ in range(10_000)
    ]
    (message,) = from_pydantic_ai(json.dumps([{"kind": "response", "parts": calls}]))
    assert len(message.tool_calls) == 10_000
