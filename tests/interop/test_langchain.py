"""threadline.interop.langchain: each mapping, each documented loss, the errors, and the chat
history over blocking and async stores (the round-trip laws are in
tests/property/test_interop_langchain.py)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support import REQUIRE_ALL

if not REQUIRE_ALL:  # under THREADLINE_REQUIRE_ALL=1 a missing package fails the collection
    pytest.importorskip("langchain_core")

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import AIMessage
from langchain_core.messages import BaseMessage
from langchain_core.messages import ChatMessage
from langchain_core.messages import FunctionMessage
from langchain_core.messages import HumanMessage
from langchain_core.messages import RemoveMessage
from langchain_core.messages import SystemMessage
from langchain_core.messages import ToolMessage
from langchain_core.messages import convert_to_openai_messages

from tests.support import part_as
from threadline import FilePart
from threadline import IntegrityError
from threadline import MemoryStore
from threadline import Message
from threadline import ReasoningPart
from threadline import SQLiteStore
from threadline import TextPart
from threadline import ToolCallPart
from threadline import ToolResultPart
from threadline import Usage
from threadline import ValidationError
from threadline import assistant_message
from threadline import check_messages
from threadline import hook_part
from threadline import internal_message
from threadline import prepare_messages
from threadline import text_part
from threadline import tool_call_part
from threadline import tool_message
from threadline import tool_result_part
from threadline import user_message
from threadline.integrity import MISSING_RESULT_TEXT
from threadline.interop.langchain import ThreadlineChatMessageHistory
from threadline.interop.langchain import from_langchain
from threadline.interop.langchain import to_langchain
from threadline.stores import AsyncMemoryStore
from threadline.stores import AsyncSQLiteStore
from threadline.stores import AsyncStore
from threadline.stores import Store


def one(messages: list[BaseMessage]) -> Message:
    (message,) = from_langchain(messages)
    return message


# ---------------------------------------------------------------------------------------------
# Imports


def test_import_threadline_imports_no_adapter_and_no_langchain() -> None:
    code = (
        "import json, sys, threadline, threadline.interop\n"
        "print(json.dumps([m for m in ('langchain_core', 'threadline.interop.langchain') "
        "if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout) == []


def test_missing_langchain_names_the_extra() -> None:
    code = (
        "import sys\nsys.modules['langchain_core'] = None\n"
        "try:\n    import threadline.interop.langchain\n"
        "except ImportError as error:\n    print(error)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert 'pip install "threadline[langchain]"' in out.stdout


# ---------------------------------------------------------------------------------------------
# Mappings


def test_roles_ids_and_names() -> None:
    messages = from_langchain(
        [
            SystemMessage("rules", id="s"),
            HumanMessage("hi", id="h", name="ann"),
            AIMessage("hello", id="a"),
            ChatMessage(content="be brief", role="developer", id="d"),
        ]
    )
    assert [(m.role, m.id, m.text) for m in messages] == [
        ("system", "s", "rules"),
        ("user", "h", "hi"),
        ("assistant", "a", "hello"),
        ("system", "d", "be brief"),
    ]
    assert messages[1].metadata["langchain.name"] == "ann"
    assert messages[3].metadata["langchain.chat_role"] == "developer"
    back = to_langchain(messages)
    assert isinstance(back[3], ChatMessage)
    assert back[3].role == "developer"
    assert back[1].name == "ann"


def test_tool_calls_and_results_pair_up() -> None:
    native = [
        HumanMessage("weather?", id="h"),
        AIMessage("", id="a", tool_calls=[{"name": "w", "args": {"city": "Oslo"}, "id": "c1"}]),
        ToolMessage("rain", tool_call_id="c1", id="t", name="w"),
    ]
    messages = from_langchain(native)
    call = messages[1].tool_calls[0]
    assert (call.id, call.name, dict(call.arguments)) == ("c1", "w", {"city": "Oslo"})
    assert messages[2].tool_results == (tool_result_part("c1", "rain", name="w"),)
    assert prepare_messages(messages, "strict") == messages
    assert to_langchain(messages) == native


def test_consecutive_tool_messages_form_one_tool_message() -> None:
    calls = [{"name": "f", "args": {}, "id": f"c{i}"} for i in range(3)]
    native: list[BaseMessage] = [AIMessage("", id="a", tool_calls=calls)]
    native += [ToolMessage(str(i), tool_call_id=f"c{i}", id=f"t{i}") for i in range(3)]
    messages = from_langchain(native)
    assert [m.role for m in messages] == ["assistant", "tool"]
    assert messages[1].id == "t0"
    assert [r.call_id for r in messages[1].tool_results] == ["c0", "c1", "c2"]
    assert to_langchain(messages) == native


def test_tool_error_status_is_is_error() -> None:
    native = ToolMessage("boom", tool_call_id="c", id="t", status="error")
    (result,) = one([native]).tool_results
    assert result.is_error
    assert to_langchain([tool_message(result, id="t")]) == [native]


def test_invalid_tool_calls_keep_their_raw_arguments() -> None:
    bad = {"name": "f", "args": '{"city": ', "id": "c", "error": "cut off"}
    native = AIMessage("", id="a", invalid_tool_calls=[bad])
    call = one([native]).tool_calls[0]
    assert call.raw_arguments == '{"city": '
    assert dict(call.arguments) == {}
    assert call.metadata["langchain.error"] == "cut off"
    # the threadline way: an invalid call is repaired before a request
    repaired = prepare_messages([one([native])])
    assert repaired[0].tool_calls[0].raw_arguments is None
    assert to_langchain([one([native])]) == [native]
    # and a threadline call with unparsable arguments becomes an invalid_tool_call
    native_back = to_langchain([assistant_message(tool_call_part("c", "f", "{oops"), id="a")])
    assert isinstance(native_back[0], AIMessage)
    assert native_back[0].invalid_tool_calls[0]["args"] == "{oops"


def test_text_file_and_image_blocks_in_every_form() -> None:
    content: list[str | dict[str, Any]] = [
        {"type": "text", "text": "look"},
        {"type": "image", "base64": "iVBO", "mime_type": "image/png"},
        {"type": "image", "url": "https://example.com/cat.jpg"},
        {
            "type": "file",
            "base64": "JVBE",
            "mime_type": "application/pdf",
            "extras": {"filename": "a.pdf"},
        },
        {"type": "image", "source_type": "url", "url": "https://example.com/dog.png"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO", "detail": "low"}},
        {"type": "image_url", "image_url": "https://example.com/x.webp"},
        {
            "type": "file",
            "file": {"file_data": "data:application/pdf;base64,JVBE", "filename": "b.pdf"},
        },
        {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
        "a bare string",
    ]
    native = HumanMessage(content, id="h")
    message = one([native])
    files = [part for part in message.parts if isinstance(part, FilePart)]
    assert [f.media_type for f in files] == [
        "image/png",
        "image/jpeg",  # guessed from the URL: the block had no mime_type
        "application/pdf",
        "image/png",
        "image/png",
        "image/webp",
        "application/pdf",
        "audio/wav",
    ]
    assert files[2].filename == "a.pdf"
    assert files[6].filename == "b.pdf"
    assert files[0].data == b"\x89\x50\x4e"
    assert to_langchain([message]) == [native]


def test_threadline_files_become_v1_standard_blocks() -> None:
    message = user_message(
        "see", FilePart(media_type="application/pdf", data=b"%PDF", filename="r.pdf"), id="u"
    )
    (native,) = to_langchain([message])
    assert native.content == [
        {"type": "text", "text": "see"},
        {
            "type": "file",
            "base64": "JVBERg==",
            "mime_type": "application/pdf",
            "extras": {"filename": "r.pdf"},
        },
    ]
    assert convert_to_openai_messages(native)["content"][1] == {
        "type": "file",
        "file": {"file_data": "data:application/pdf;base64,JVBERg==", "filename": "r.pdf"},
    }
    assert from_langchain([native]) == [message]


def test_anthropic_thinking_blocks_with_signatures() -> None:
    native = AIMessage(
        [
            {"type": "thinking", "thinking": "let me see", "signature": "EqQB"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "42"},
        ],
        id="a",
    )
    parts = one([native]).parts
    thinking = part_as(ReasoningPart, parts[0])
    assert (thinking.text, thinking.signature, thinking.provider) == (
        "let me see",
        "EqQB",
        "anthropic",
    )
    redacted = part_as(ReasoningPart, parts[1])
    assert redacted.redacted
    assert redacted.encrypted == "opaque"
    assert to_langchain([one([native])]) == [native]


def test_standard_reasoning_blocks() -> None:
    block = {
        "type": "reasoning",
        "reasoning": "hmm",
        "id": "rs_1",
        "extras": {"signature": "s", "k": 1},
    }
    part = part_as(ReasoningPart, one([AIMessage([block], id="a")]).parts[0])
    assert (part.text, part.item_id, part.signature, dict(part.metadata)) == (
        "hmm",
        "rs_1",
        "s",
        {"k": 1},
    )
    # reasoning another provider produced stays a standard block, with its opaque state
    openai = ReasoningPart(text="t", provider="openai", encrypted="enc", item_id="rs_2")
    (native,) = to_langchain([assistant_message(openai, id="a")])
    assert native.content == [
        {
            "type": "reasoning",
            "reasoning": "t",
            "id": "rs_2",
            "extras": {"encrypted_content": "enc", "threadline.provider": "openai"},
        }
    ]
    assert from_langchain([native])[0].parts == (openai,)


def test_refusal_blocks_are_refusal_text() -> None:
    native = AIMessage([{"type": "refusal", "refusal": "I can't"}], id="a")
    part = part_as(TextPart, one([native]).parts[0])
    assert part.text == "I can't"
    assert part.metadata["openai.refusal"] is True
    assert to_langchain([one([native])]) == [native]


def test_usage_metadata_round_trip() -> None:
    usage = {
        "input_tokens": 120,
        "output_tokens": 30,
        "total_tokens": 150,
        "input_token_details": {"cache_read": 100, "cache_creation": 10},
        "output_token_details": {"reasoning": 12},
    }
    native = AIMessage("ok", id="a", usage_metadata=usage)
    message = one([native])
    assert message.usage == Usage(
        input_tokens=120,
        output_tokens=30,
        cache_read_tokens=100,
        cache_write_tokens=10,
        reasoning_tokens=12,
    )
    assert "langchain.usage_metadata" not in message.metadata  # nothing threadline cannot count
    assert to_langchain([message]) == [native]
    # a threadline message's usage becomes usage_metadata
    ours = assistant_message(
        "hi", id="b", metadata={"usage": Usage(input_tokens=5, output_tokens=2).to_dict()}
    )
    (back,) = to_langchain([ours])
    assert isinstance(back, AIMessage)
    assert back.usage_metadata == {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}
    assert from_langchain([back]) == [ours]


def test_usage_details_threadline_has_no_count_for_are_kept() -> None:
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "total_tokens": 15,
        "input_token_details": {"audio": 4},
        "output_token_details": {"audio": 1},
    }
    native = AIMessage("ok", id="a", usage_metadata=usage)
    message = one([native])
    assert message.usage == Usage(input_tokens=10, output_tokens=5)
    assert message.metadata["langchain.usage_metadata"] == usage
    assert to_langchain([message]) == [native]


def test_response_metadata_maps_what_it_can_and_keeps_the_rest() -> None:
    response = {"model_name": "gpt-x", "id": "resp_1", "finish_reason": "stop", "logprobs": None}
    native = AIMessage("ok", id="a", response_metadata=response)
    metadata = one([native]).metadata
    assert (metadata["model"], metadata["response_id"], metadata["stop_reason"]) == (
        "gpt-x",
        "resp_1",
        "stop",
    )
    assert metadata["langchain.response_metadata"] == {"logprobs": None}
    assert to_langchain([one([native])]) == [native]
    anthropic = AIMessage("ok", id="b", response_metadata={"stop_reason": "end_turn"})
    assert one([anthropic]).metadata["stop_reason"] == "end_turn"
    assert to_langchain([one([anthropic])]) == [anthropic]


def test_threadline_metadata_and_times_ride_in_response_metadata() -> None:
    from datetime import datetime
    from datetime import timezone

    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    message = user_message(
        text_part("hi", metadata={"k": 1}), id="u", metadata={"app": [1]}, created_at=when
    )
    (native,) = to_langchain([message])
    assert native.response_metadata == {
        "threadline": {"metadata": {"app": [1]}, "created_at": when.isoformat()}
    }
    assert native.content == [{"type": "text", "text": "hi", "extras": {"k": 1}}]
    assert from_langchain([native]) == [message]


def test_tool_message_artifacts_are_kept() -> None:
    native = ToolMessage("3 rows", tool_call_id="c", id="t", artifact={"rows": [1, 2, 3]})
    assert one([native]).tool_results[0].metadata["langchain.artifact"] == {"rows": [1, 2, 3]}
    assert to_langchain([one([native])]) == [native]


# ---------------------------------------------------------------------------------------------
# Documented losses, one test each


def test_loss_internal_messages_and_hook_parts_are_left_out() -> None:
    messages = [
        user_message("hi", id="u"),
        internal_message(hook_part("approval", {"ok": True}), id="i"),
        assistant_message("yes", hook_part("form", {}), id="a"),
        assistant_message(hook_part("only", {}), id="b"),
    ]
    native = to_langchain(messages)
    assert [m.id for m in native] == ["u", "a"]
    assert native[1].content == "yes"


def test_loss_tool_calls_come_after_the_other_parts() -> None:
    message = assistant_message(tool_call_part("c", "f", {}), "after", id="a")
    (back,) = from_langchain(to_langchain([message]))
    assert [part.type for part in back.parts] == ["text", "tool_call"]


def test_loss_one_plain_text_block_comes_back_as_a_string() -> None:
    native = HumanMessage([{"type": "text", "text": "hi"}], id="h")
    assert to_langchain(from_langchain([native])) == [HumanMessage("hi", id="h")]


def test_loss_an_empty_content_list_comes_back_as_an_empty_string() -> None:
    native = HumanMessage([], id="h")
    assert to_langchain(from_langchain([native])) == [HumanMessage("", id="h")]


def test_loss_messages_and_calls_without_ids_get_ids() -> None:
    native = [
        AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": None}]),
        ToolMessage("a", tool_call_id="x"),
        ToolMessage("b", tool_call_id="y"),
    ]
    messages = from_langchain(native)
    assert messages[0].id.startswith("msg_")
    assert messages[0].tool_calls[0].id.startswith("call_")
    back = to_langchain(messages)
    assert back[1].id == messages[1].id
    assert back[2].id == f"{messages[1].id}:1"


def test_loss_tool_call_blocks_in_content_are_read_from_tool_calls() -> None:
    native = AIMessage(
        [
            {"type": "tool_use", "id": "c", "name": "f", "input": {}},
            {"type": "text", "text": "then this"},
        ],
        tool_calls=[{"name": "f", "args": {"q": 1}, "id": "c"}],
        id="a",
    )
    message = one([native])
    assert [part.type for part in message.parts] == ["tool_call", "text"]  # where the block was
    (back,) = to_langchain([message])
    assert back.content == "then this"
    assert isinstance(back, AIMessage)
    assert back.tool_calls == native.tool_calls


def test_loss_empty_reasoning_text_is_not_written() -> None:
    native = AIMessage([{"type": "reasoning", "reasoning": "", "id": "rs"}], id="a")
    (back,) = to_langchain(from_langchain([native]))
    assert back.content == [{"type": "reasoning", "id": "rs"}]


def test_loss_server_tool_blocks_without_a_provider_read_as_langchain() -> None:
    block = {"type": "server_tool_call", "id": "s", "name": "web_search", "args": {"q": "x"}}
    part = one([AIMessage([block], id="a")]).parts[0]
    assert part.type == "provider_tool_call"
    assert part.provider == "langchain"
    assert to_langchain([one([AIMessage([block], id="a")])])[0].content == [block]


def test_loss_invalid_tool_call_without_args_reads_as_empty_text() -> None:
    native = AIMessage(
        "", id="a", invalid_tool_calls=[{"name": "f", "args": None, "id": "c", "error": None}]
    )
    back = to_langchain(from_langchain([native]))[0]
    assert isinstance(back, AIMessage)
    assert back.invalid_tool_calls[0]["args"] == ""


# ---------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    ("message", "words"),
    [
        (FunctionMessage(content="x", name="f"), "FunctionMessage has no tool call id"),
        (RemoveMessage(id="m"), "RemoveMessage is an instruction"),
        (ChatMessage(content="x", role="critic"), "role 'critic'"),
        (HumanMessage([{"type": "video_call", "x": 1}]), "type 'video_call'"),
        (HumanMessage([{"type": "image", "file_id": "file-1"}]), "provider's file id"),
        (HumanMessage([{"type": "image", "base64": "AAAA"}]), "needs its mime_type"),
        (
            HumanMessage([{"type": "image", "base64": "@@", "mime_type": "image/png"}]),
            "not valid base64",
        ),
        (
            SystemMessage([{"type": "image", "url": "https://e.com/a.png"}]),
            "cannot be in this message",
        ),
        (ToolMessage("x", tool_call_id="c", artifact=object()), "artifact"),
        (
            AIMessage([{"type": "tool_call", "id": "zz", "name": "f", "args": {}}]),
            "not one of tool_calls",
        ),
    ],
)
def test_what_threadline_cannot_carry_raises_naming_the_place(
    message: BaseMessage, words: str
) -> None:
    with pytest.raises(ValidationError, match="messages\\[1\\]") as caught:
        from_langchain([HumanMessage("first"), message])
    assert words in str(caught.value)


def test_not_a_list_raises() -> None:
    with pytest.raises(ValidationError, match="list of LangChain messages"):
        from_langchain(HumanMessage("x"))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="sequence of threadline messages"):
        to_langchain(user_message("x"))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# The chat history


def conversation() -> list[BaseMessage]:
    return [
        HumanMessage("weather?", id="h1"),
        AIMessage("", id="a1", tool_calls=[{"name": "w", "args": {}, "id": "c1"}]),
        ToolMessage("sun", tool_call_id="c1", id="t1"),
        AIMessage("Sunny.", id="a2"),
    ]


StoreFactory = Callable[[Path], "Store | AsyncStore"]
STORES: dict[str, StoreFactory] = {
    "memory": lambda _: MemoryStore(),
    "sqlite": lambda path: SQLiteStore(path / "t.db"),
    "async-memory": lambda _: AsyncMemoryStore(),
    "async-sqlite": lambda path: AsyncSQLiteStore(path / "t.db"),
}


@pytest.mark.parametrize("kind", sorted(STORES))
def test_history_blocking_methods(kind: str, tmp_path: Path) -> None:
    history = ThreadlineChatMessageHistory(STORES[kind](tmp_path), "conv-1")
    assert isinstance(history, BaseChatMessageHistory)
    history.add_messages(conversation()[:2])
    history.add_messages(conversation()[2:])
    assert history.messages == conversation()
    history.add_user_message("thanks")
    assert history.messages[-1].content == "thanks"
    history.clear()
    assert history.messages == []


@pytest.mark.parametrize("kind", sorted(STORES))
def test_history_async_methods(kind: str, tmp_path: Path) -> None:
    async def run() -> None:
        history = ThreadlineChatMessageHistory(STORES[kind](tmp_path), "conv-1")
        await history.aadd_messages(conversation())
        assert await history.aget_messages() == conversation()
        await history.aclear()
        assert await history.aget_messages() == []

    asyncio.run(run())


def test_history_over_an_async_store_refuses_to_block_inside_a_loop() -> None:
    async def run() -> None:
        history = ThreadlineChatMessageHistory(AsyncMemoryStore(), "c")
        with pytest.raises(RuntimeError, match="await aget_messages"):
            _ = history.messages

    asyncio.run(run())


def test_history_keeps_a_pending_call_on_read_and_answers_it_when_asked() -> None:
    store = MemoryStore()
    history = ThreadlineChatMessageHistory(store, "c")
    history.add_messages(conversation()[:2])  # the tool runs (or the process died)
    assert history.messages == conversation()[:2]  # kept: its result is the next input
    seen = ThreadlineChatMessageHistory(store, "c", pending="answer").messages
    assert isinstance(seen[-1], ToolMessage)
    assert seen[-1].status == "error"
    assert seen[-1].content == MISSING_RESULT_TEXT
    assert len(store.load("c")) == 2  # a read never writes...
    history.add_messages(conversation()[2:])  # ...so the real result can still come
    assert history.messages == conversation()


def test_history_refuses_to_read_pending_calls_when_asked() -> None:
    store = MemoryStore()
    ThreadlineChatMessageHistory(store, "c").add_messages(conversation()[:2])
    with pytest.raises(IntegrityError, match="pending-tool-call"):
        _ = ThreadlineChatMessageHistory(store, "c", pending="refuse").messages


def stored_calls(store: MemoryStore, *results: str) -> None:
    """A conversation whose newest assistant message made calls c1 and c2, answered by
    ``results`` (call ids)."""
    calls = [tool_call_part("c1", "w", {}), tool_call_part("c2", "v", {})]
    store.append("c", [user_message("go", id="u1"), assistant_message(*calls, id="a1")])
    if results:
        store.append("c", [tool_message(*(tool_result_part(r, "ok") for r in results), id="t1")])


def called(result: Any) -> Any:
    """What a store's method returned, awaited when the store is async."""
    return asyncio.run(result) if asyncio.iscoroutine(result) else result


@pytest.mark.parametrize("kind", sorted(STORES))
def test_a_new_turn_after_pending_calls_answers_them_in_the_same_write(
    kind: str, tmp_path: Path
) -> None:
    store = STORES[kind](tmp_path)
    history = ThreadlineChatMessageHistory(store, "c")
    history.add_messages(
        [
            HumanMessage("go", id="u1"),
            AIMessage(
                "",
                id="a1",
                tool_calls=[
                    {"name": "w", "args": {}, "id": "c1"},
                    {"name": "v", "args": {}, "id": "c2"},
                ],
            ),
        ]
    )
    answered = ThreadlineChatMessageHistory(store, "c", pending="answer").messages
    before = called(store.version("c"))
    history.add_messages([HumanMessage("never mind", id="u2")])  # the process had died
    assert called(store.version("c")) == before + 1  # one write
    stored = called(store.load("c"))
    assert [m.id for m in stored] == ["u1", "a1", "a1:results", "u2"]
    assert [
        (r.call_id, r.is_error, r.metadata["threadline.repair"]) for r in stored[2].tool_results
    ] == [("c1", True, "missing-tool-result"), ("c2", True, "missing-tool-result")]
    assert check_messages(stored).ok
    # what a pending="answer" read showed is what is stored now
    assert history.messages == [*answered, HumanMessage("never mind", id="u2")]


def test_a_half_answered_round_gets_the_rest_answered() -> None:
    store = MemoryStore()
    stored_calls(store, "c1")
    history = ThreadlineChatMessageHistory(store, "c")
    assert [call["id"] for call in history.pending_calls()] == ["c2"]
    history.add_messages([HumanMessage("next", id="u2")])
    stored = store.load("c")
    assert [m.id for m in stored] == ["u1", "a1", "t1", "a1:results", "u2"]
    assert [r.call_id for r in stored[3].tool_results] == ["c2"]
    assert check_messages(stored).ok
    assert history.pending_calls() == []


def test_results_in_the_batch_answer_before_the_new_turn() -> None:
    store = MemoryStore()
    stored_calls(store)
    history = ThreadlineChatMessageHistory(store, "c")
    history.add_messages(
        [ToolMessage("ok", tool_call_id="c1", id="t1"), HumanMessage("x", id="u2")]
    )
    stored = store.load("c")
    assert [m.id for m in stored] == ["u1", "a1", "t1", "a1:results", "u2"]
    assert [r.call_id for r in stored[3].tool_results] == ["c2"]
    assert check_messages(stored).ok


def test_a_result_later_in_the_batch_is_not_answered_twice() -> None:
    store = MemoryStore()
    stored_calls(store, "c1")
    history = ThreadlineChatMessageHistory(store, "c")
    history.add_messages(
        [HumanMessage("x", id="u2"), ToolMessage("late", tool_call_id="c2", id="t2")]
    )
    stored = store.load("c")
    assert [m.id for m in stored] == ["u1", "a1", "t1", "u2", "t2"]  # misplaced, not duplicated
    codes = check_messages(stored).codes
    assert "misplaced-tool-result" in codes
    assert "duplicate-tool-result" not in codes


def test_the_answer_id_steps_past_one_in_use_and_a_replay_writes_nothing() -> None:
    store = MemoryStore()
    calls = [tool_call_part("c1", "w", {}), tool_call_part("c2", "v", {})]
    store.append("c", [assistant_message(*calls, id="a1")])
    store.append("c", [tool_message(tool_result_part("c1", "ok"), id="a1:results")])
    history = ThreadlineChatMessageHistory(store, "c")
    batch = [HumanMessage("x", id="u2"), AIMessage("y", id="a2")]
    history.add_messages(batch)
    assert [m.id for m in store.load("c")] == ["a1", "a1:results", "a1:results~2", "u2", "a2"]
    version = store.version("c")
    history.add_messages(batch)  # sent again: nothing pending now, every message a replay
    assert store.version("c") == version


def test_a_batch_with_results_can_be_sent_again() -> None:
    store = MemoryStore()
    history = ThreadlineChatMessageHistory(store, "c")
    history.add_messages(conversation()[:2])
    history.add_messages(conversation()[2:])
    version = store.version("c")
    history.add_messages(conversation()[2:])  # a retry after a write that went through
    history.add_messages(conversation())
    assert store.version("c") == version
    assert history.messages == conversation()
    changed = ToolMessage("rain", tool_call_id="c1", id="t1")  # the same id, other content
    with pytest.raises(ValidationError):
        history.add_messages([changed])
    assert store.version("c") == version


def test_pending_calls_as_langchain_tool_calls() -> None:
    store = MemoryStore()
    calls = [tool_call_part("c1", "w", {"city": "Oslo"}), tool_call_part("c2", "v", "{bad")]
    store.append("c", [assistant_message(*calls, id="a1")])
    history = ThreadlineChatMessageHistory(store, "c")
    expected = [{"name": "w", "args": {"city": "Oslo"}, "id": "c1", "type": "tool_call"}]
    assert history.pending_calls() == expected  # the call that did not parse is not runnable
    assert asyncio.run(history.apending_calls()) == expected
    over_async = ThreadlineChatMessageHistory(AsyncMemoryStore(), "c")
    assert over_async.pending_calls() == []
    history.add_messages([HumanMessage("x", id="u2")])  # both are answered, the bad one too
    assert [r.call_id for r in store.load("c")[1].tool_results] == ["c1", "c2"]


def test_history_refuses_a_batch_that_would_poison_every_request() -> None:
    store = MemoryStore()
    history = ThreadlineChatMessageHistory(store, "c")
    history.add_messages(conversation())
    with pytest.raises(IntegrityError, match="orphan-tool-result"):
        history.add_messages([ToolMessage("late", tool_call_id="nobody", id="t9")])
    with pytest.raises(IntegrityError, match="duplicate-tool-call"):
        history.add_messages(
            [AIMessage("", id="a9", tool_calls=[{"name": "w", "args": {}, "id": "c1"}])]
        )
    assert len(store.load("c")) == 4  # nothing written
    with pytest.raises(ValidationError):
        history.add_messages([FunctionMessage(content="x", name="f")])
    assert len(store.load("c")) == 4


def test_history_reads_the_conversation_once_per_write() -> None:
    class Counting(MemoryStore):
        loads = 0

        def load(self, conversation_id: str) -> list[Message]:
            self.loads += 1
            return super().load(conversation_id)

    store = Counting()
    history = ThreadlineChatMessageHistory(store, "c")
    history.add_messages([HumanMessage("hi", id="h1"), AIMessage("hello", id="a1")])
    assert store.loads == 1  # pending calls before a new turn are answered in the write
    call = AIMessage("", id="a2", tool_calls=[{"name": "w", "args": {}, "id": "c1"}])
    history.add_messages([call])
    assert store.loads == 2
    asyncio.run(history.aadd_messages([ToolMessage("ok", tool_call_id="c1", id="t1")]))
    assert store.loads == 3
    assert len(store.load("c")) == 4


def test_history_modes() -> None:
    store = MemoryStore()
    store.append("c", [assistant_message(tool_call_part("c1", "f", {}), id="a")])
    assert len(ThreadlineChatMessageHistory(store, "c").messages) == 1  # pending: kept
    assert len(ThreadlineChatMessageHistory(store, "c", pending="answer").messages) == 2
    assert len(ThreadlineChatMessageHistory(store, "c", mode=None).messages) == 1
    assert len(ThreadlineChatMessageHistory(store, "c", mode="strict").messages) == 1
    with pytest.raises(IntegrityError, match="missing-tool-result"):
        _ = ThreadlineChatMessageHistory(store, "c", mode="strict", pending="answer").messages
    store.append("c", [user_message("later", id="u")])  # a crash: repaired whatever pending is
    assert len(ThreadlineChatMessageHistory(store, "c").messages) == 3


def test_history_refuses_an_unknown_mode_at_construction() -> None:
    with pytest.raises(ValueError, match="mode must be 'auto', 'strict' or None"):
        ThreadlineChatMessageHistory(MemoryStore(), "c", mode="repair")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pending must be 'keep'"):
        ThreadlineChatMessageHistory(MemoryStore(), "c", pending="wait")  # type: ignore[arg-type]


def test_history_validates_the_conversation_id() -> None:
    with pytest.raises(ValidationError):
        ThreadlineChatMessageHistory(MemoryStore(), "../etc")


def test_converted_history_is_accepted_by_convert_to_openai_messages() -> None:
    messages = [
        user_message("hi", FilePart(media_type="image/png", data=b"\x89PNG"), id="u"),
        assistant_message(
            ReasoningPart(text="hmm", signature="sig", provider="anthropic"),
            "calling",
            tool_call_part("c1", "f", {"x": 1}),
            id="a",
        ),
        tool_message(ToolResultPart(call_id="c1", content="done", is_error=True), id="t"),
    ]
    converted = convert_to_openai_messages(to_langchain(messages))
    assert [item["role"] for item in converted] == ["user", "assistant", "tool"]
    assert converted[1]["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"x": 1}'}
    assert converted[0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw=="},
    }
    assert isinstance(messages[1].parts[2], ToolCallPart)


@pytest.mark.requires_server
def test_history_over_redis_blocking_and_async(redis_url: str, redis_prefix: str) -> None:
    from threadline.stores import AsyncRedisStore
    from threadline.stores import RedisStore

    with RedisStore(redis_url, prefix=redis_prefix) as store:
        history = ThreadlineChatMessageHistory(store, "conv-r")
        history.add_messages(conversation())
        assert history.messages == conversation()

    async def run() -> None:
        astore = AsyncRedisStore(redis_url, prefix=redis_prefix)
        try:
            history = ThreadlineChatMessageHistory(astore, "conv-r")
            assert await history.aget_messages() == conversation()
            await history.aclear()
            assert await history.aget_messages() == []
        finally:
            await astore.aclose()

    asyncio.run(run())
