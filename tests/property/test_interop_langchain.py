"""The LangChain adapter's law, over generated histories on both sides.

``from_langchain(to_langchain(m))`` is ``m`` up to the documented losses (internal content left
out, tool calls after the other parts of their message); ``to_langchain(from_langchain(p))`` is
``p`` up to the documented losses (a content list of one plain text block comes back as a
string), for native histories in every form the adapter reads.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.strategies import conversations
from tests.strategies import json_objects
from tests.strategies import json_values
from tests.strategies import names
from tests.strategies import texts
from tests.support import REQUIRE_ALL
from tests.support import examples

if not REQUIRE_ALL:  # under THREADLINE_REQUIRE_ALL=1 a missing package fails the collection
    pytest.importorskip("langchain_core")

from langchain_core.messages import AIMessage
from langchain_core.messages import BaseMessage
from langchain_core.messages import ChatMessage
from langchain_core.messages import HumanMessage
from langchain_core.messages import SystemMessage
from langchain_core.messages import ToolMessage
from langchain_core.messages import convert_to_openai_messages

from threadline import FilePart
from threadline import MemoryStore
from threadline import Message
from threadline import ToolCallPart
from threadline import ToolResultPart
from threadline import check_messages
from threadline import pending_calls
from threadline.interop.langchain import ThreadlineChatMessageHistory
from threadline.interop.langchain import from_langchain
from threadline.interop.langchain import to_langchain


def expected_round_trip(messages: list[Message]) -> list[Message]:
    """``messages`` as LangChain can carry them: no internal content, calls last."""
    out = []
    for message in messages:
        if message.role == "internal":
            continue
        parts = [part for part in message.parts if part.type != "hook"]
        if not parts:
            continue
        calls = [p for p in parts if isinstance(p, ToolCallPart) and p.raw_arguments is None]
        invalid = [p for p in parts if isinstance(p, ToolCallPart) and p.raw_arguments is not None]
        others = [p for p in parts if not isinstance(p, ToolCallPart)]
        out.append(message.model_copy(update={"parts": (*others, *calls, *invalid)}))
    return out


@given(conversations(replay=False))
def test_threadline_round_trip(messages: list[Message]) -> None:
    native = to_langchain(messages)
    assert from_langchain(native) == expected_round_trip(messages)


# ---------------------------------------------------------------------------------------------
# Native histories

ids = names.map(lambda n: "id_" + n)
b64 = st.sampled_from(["", "AAAA", "+/8=", "aGVsbG8="])
extras = st.one_of(st.none(), st.just({}), json_objects.filter(bool))


def _with(
    block: dict[str, Any], draw: st.DrawFn, **optional: st.SearchStrategy[Any]
) -> dict[str, Any]:
    for key, strategy in optional.items():
        value = draw(strategy)
        if value is not None:
            block[key] = value
    return block


@st.composite
def text_blocks(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["bare", "text", "refusal"]))
    if kind == "bare":
        return draw(texts)
    field = "text" if kind == "text" else "refusal"
    return _with({"type": kind, field: draw(texts)}, draw, extras=extras, id=st.none() | ids)


@st.composite
def file_blocks(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["v1", "v0", "image_url", "file", "input_audio"]))
    if kind == "v1":
        block: dict[str, Any] = {"type": draw(st.sampled_from(["image", "audio", "file"]))}
        if draw(st.booleans()):
            block["base64"] = draw(b64)
            block["mime_type"] = draw(st.sampled_from(["image/png", "application/pdf"]))
        else:
            block["url"] = (
                "https://example.com/" + draw(names) + draw(st.sampled_from(["", ".png"]))
            )
            _with(block, draw, mime_type=st.none() | st.just("image/webp"))
        return _with(block, draw, extras=extras, id=st.none() | ids)
    if kind == "v0":
        if draw(st.booleans()):
            return {
                "type": "image",
                "source_type": "base64",
                "data": draw(b64),
                "mime_type": "image/png",
            }
        return {"type": "file", "source_type": "url", "url": "https://example.com/a.pdf"}
    if kind == "image_url":
        url = draw(st.sampled_from(["https://example.com/a.png", "data:image/png;base64,AAAA"]))
        inner: Any = url if draw(st.booleans()) else {"url": url, "detail": "high"}
        return {"type": "image_url", "image_url": inner}
    if kind == "file":
        inner = {"file_data": "data:application/pdf;base64," + draw(b64)}
        return {"type": "file", "file": _with(inner, draw, filename=st.none() | st.just("a.pdf"))}
    audio = {"data": draw(b64), "format": draw(st.sampled_from(["wav", "mp3"]))}
    return {"type": "input_audio", "input_audio": audio}


@st.composite
def reasoning_blocks(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["thinking", "redacted_thinking", "reasoning", "server"]))
    if kind == "thinking":
        block = {"type": "thinking", "thinking": draw(texts)}
        return _with(block, draw, signature=st.none() | st.text(min_size=1, max_size=10))
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": draw(st.text(min_size=1, max_size=10))}
    if kind == "reasoning":
        block = {"type": "reasoning", "reasoning": draw(texts.filter(bool))}
        signature = st.none() | st.just({"signature": "sig"})
        return _with(block, draw, id=st.none() | ids, extras=signature)
    if draw(st.booleans()):
        return {"type": "server_tool_call", "id": draw(ids), "name": draw(names), "args": {}}
    status = draw(st.sampled_from(["success", "error"]))
    output = draw(json_values)
    return {
        "type": "server_tool_result",
        "tool_call_id": draw(ids),
        "status": status,
        "output": output,
    }


def content(blocks: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(texts, st.lists(blocks, min_size=1, max_size=3))


def common(draw: st.DrawFn) -> dict[str, Any]:
    fields: dict[str, Any] = {"id": draw(ids)}
    return _with(fields, draw, name=st.none() | names, additional_kwargs=st.none() | json_objects)


usages = st.builds(
    lambda i, o, r, extra: {
        "input_tokens": i,
        "output_tokens": o,
        "total_tokens": i + o + extra,
        **({"input_token_details": {"cache_read": r}} if r else {}),
    },
    st.integers(0, 99),
    st.integers(0, 99),
    st.integers(0, 3),
    st.integers(0, 2),
)
responses = st.fixed_dictionaries(
    {},
    optional={
        "model_name": names,
        "finish_reason": names,
        "stop_reason": st.just("end_turn"),
        "x": json_values,
    },
)


@st.composite
def native_histories(draw: st.DrawFn) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    if draw(st.booleans()):
        out.append(SystemMessage(content=draw(content(text_blocks())), **common(draw)))
    for _ in range(draw(st.integers(0, 3))):
        user = content(st.one_of(text_blocks(), file_blocks()))
        if draw(st.integers(0, 4)) == 0:
            role = draw(st.sampled_from(["user", "developer"]))
            out.append(ChatMessage(content=draw(texts), role=role, **common(draw)))
        else:
            out.append(HumanMessage(content=draw(user), **common(draw)))
        call_ids = draw(st.lists(ids, max_size=3, unique=True))
        calls = [{"name": draw(names), "args": draw(json_objects), "id": i} for i in call_ids[:2]]
        invalid = [
            {"name": draw(names), "args": "{not json", "id": i, "error": draw(st.none() | texts)}
            for i in call_ids[2:]
        ]
        ai_fields = common(draw)
        _with(ai_fields, draw, usage_metadata=st.none() | usages, response_metadata=responses)
        ai_content = draw(content(st.one_of(text_blocks(), reasoning_blocks())))
        out.append(
            AIMessage(content=ai_content, tool_calls=calls, invalid_tool_calls=invalid, **ai_fields)
        )
        for call_id in call_ids:
            result = content(st.one_of(text_blocks(), file_blocks()))
            fields = common(draw)
            fields.pop("additional_kwargs", None)
            _with(fields, draw, artifact=st.none() | json_values.filter(lambda v: v is not None))
            status = draw(st.sampled_from(["success", "error"]))
            out.append(
                ToolMessage(content=draw(result), tool_call_id=call_id, status=status, **fields)
            )
    return out


def expected_native(messages: list[BaseMessage]) -> list[BaseMessage]:
    """``messages`` up to the documented losses: one plain text block reads as a string, except
    an empty one beside tool calls (``""`` there reads as no text at all, so the block stays)."""
    out = []
    for message in messages:
        blocks = message.content
        if not isinstance(message, ToolMessage) and isinstance(blocks, list) and len(blocks) == 1:
            only = blocks[0]
            beside_calls = bool(getattr(message, "tool_calls", None)) and only == {
                "type": "text",
                "text": "",
            }
            if (
                isinstance(only, dict)
                and set(only) == {"type", "text"}
                and only["type"] == "text"
                and not beside_calls
            ):
                message = message.model_copy(update={"content": only["text"]})
        out.append(message)
    return out


@given(native_histories())
def test_langchain_round_trip(messages: list[BaseMessage]) -> None:
    assert to_langchain(from_langchain(messages)) == expected_native(messages)


@given(conversations(replay=False))
@pytest.mark.filterwarnings("ignore:OpenAI may require a filename")
def test_convert_to_openai_messages_accepts_converted_messages(messages: list[Message]) -> None:
    native = to_langchain(messages)
    if _by_url(messages):  # OpenAI Chat's own limit: files and audio only by their bytes
        with pytest.raises(ValueError, match=r"URLs|base64 is required"):
            convert_to_openai_messages(native)
        return
    converted = convert_to_openai_messages(native)
    assert isinstance(converted, list)
    roles = [item["role"] for item in converted]
    assert roles == [_openai_role(message) for message in native]


def _by_url(messages: list[Message]) -> bool:
    """Whether a file other than an image is sent by URL."""
    for message in messages:
        for part in message.parts:
            files = part.content if isinstance(part, ToolResultPart) else (part,)
            for item in files:
                if isinstance(item, FilePart) and item.url and item.media_type[:6] != "image/":
                    return True
    return False


def _openai_role(message: BaseMessage) -> str:
    return {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}.get(
        message.type, getattr(message, "role", "")
    )


# ---------------------------------------------------------------------------------------------
# The chat history's live frontier

Step = tuple[str, int, bool]
"""What an agent does next: ``("human", _, resend)``, ``("reply", calls, resend)`` (an AI
message with that many calls), ``("results", n, resend)`` (results for the first ``n`` pending
calls); ``resend`` sends the batch a second time, as a retry after a lost acknowledgement."""

steps = st.lists(
    st.tuples(st.sampled_from(["human", "reply", "results"]), st.integers(0, 3), st.booleans()),
    max_size=12,
)


@settings(max_examples=examples(100))
@given(steps)
def test_history_writes_keep_the_store_clean_up_to_its_frontier(plan: list[Step]) -> None:
    # Whatever the agent does (crashes included: a reply whose calls never get all their
    # results, followed by anything), the stored conversation has no defect but the pending
    # calls, a read keeps those, and the pending="answer" read is a valid model request.
    store = MemoryStore()
    history = ThreadlineChatMessageHistory(store, "c")
    for number, (kind, count, resend) in enumerate(plan):
        batch: list[BaseMessage]
        if kind == "human":
            batch = [HumanMessage(f"q{number}", id=f"h{number}")]
        elif kind == "reply":
            calls = [{"name": "f", "args": {}, "id": f"c{number}-{i}"} for i in range(count)]
            batch = [AIMessage(f"a{number}", id=f"a{number}", tool_calls=calls)]
        else:
            pending = history.pending_calls()[: max(count, 1)]
            batch = [
                ToolMessage("ok", tool_call_id=call["id"], id=f"t{number}-{i}")
                for i, call in enumerate(pending)
            ]
        history.add_messages(batch)
        version = store.version("c")
        if resend:
            history.add_messages(batch)
            assert store.version("c") == version
        stored = store.load("c")
        assert check_messages(stored, pending="keep").ok
        assert history.messages == to_langchain(stored)
        assert [call["id"] for call in history.pending_calls()] == [
            call.id for call in pending_calls(stored)
        ]
        ready = ThreadlineChatMessageHistory(store, "c", pending="answer").messages
        assert check_messages(from_langchain(ready)).ok
