"""``ThreadlineSession``: the Agents SDK ``Session`` protocol, a ``Runner`` over it, items kept
exactly, integrity repair of what ``get_items`` returns, ``limit`` and ``pop_item``."""

from __future__ import annotations

import asyncio
import copy
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from typing import cast

import pytest

from tests.support import REQUIRE_ALL
from threadline import Message
from threadline import ProviderToolCallPart
from threadline import TextPart
from threadline import ToolCallPart
from threadline import ToolResultPart
from threadline import assistant_message
from threadline import tool_message
from threadline import user_message
from threadline.codecs import openai_responses
from threadline.errors import ConflictError
from threadline.errors import IntegrityError
from threadline.errors import LimitExceededError
from threadline.errors import ValidationError
from threadline.limits import Limits
from threadline.stores import AsyncSQLiteStore
from threadline.stores import MemoryStore
from threadline.stores import SQLiteStore

try:
    from agents import Agent
    from agents import ModelResponse
    from agents import RunConfig
    from agents import Runner
    from agents import Usage
    from agents import function_tool
    from agents.memory import Session
    from agents.memory import SessionSettings
    from agents.models.interface import Model
    from openai.types.responses import ResponseFunctionToolCall
    from openai.types.responses import ResponseOutputMessage
    from openai.types.responses import ResponseOutputText
except ImportError:  # pragma: no cover - the test extra installs it
    if REQUIRE_ALL:
        raise
    pytest.skip("openai-agents is not installed (pip install -e .[test])", allow_module_level=True)

from threadline.interop.openai_agents import CONTINUED
from threadline.interop.openai_agents import DIFF
from threadline.interop.openai_agents import ITEM
from threadline.interop.openai_agents import PROVIDER
from threadline.interop.openai_agents import ThreadlineSession
from threadline.interop.openai_agents import messages_of

pytestmark = pytest.mark.requires_sdk

ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "What is 1 + 2?"},
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "add",
        "arguments": '{"a": 1, "b": 2}',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "3"},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": "It is", "annotations": [], "logprobs": []},
            {"type": "output_text", "text": " 3.", "annotations": []},
        ],
    },
]


def fresh() -> list[Any]:
    """A copy of ``ITEMS`` to add (the SDK's item types are TypedDicts)."""
    return copy.deepcopy(ITEMS)


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_it_is_an_agents_sdk_session() -> None:
    session = ThreadlineSession(MemoryStore(), "s1")
    assert isinstance(session, Session)
    typed: Session = session  # mypy checks the protocol structurally
    assert typed.session_id == "s1"
    assert typed.session_settings is None


def test_import_threadline_imports_no_adapter_or_framework() -> None:
    code = (
        "import sys, threadline, threadline.interop; "
        "bad = [m for m in sys.modules if m == 'agents' or m.startswith('agents.') "
        "or m == 'threadline.interop.openai_agents']; print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_items_come_back_exactly_and_the_store_holds_typed_messages() -> None:
    store = MemoryStore()
    session = ThreadlineSession(store, "s1")
    run(session.add_items(fresh()))
    assert run(session.get_items()) == ITEMS
    messages = store.load("s1")
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert [p.type for p in messages[1].parts] == ["reasoning", "tool_call"]
    call = messages[1].parts[1]
    assert isinstance(call, ToolCallPart)
    assert call.arguments == {"a": 1, "b": 2}
    texts = messages[3].parts
    assert [p.text for p in texts if isinstance(p, TextPart)] == ["It is", " 3."]
    # the first text keeps only what the codec does not write back (logprobs, the key order)
    assert ITEM not in texts[0].metadata
    assert "It is" not in repr(texts[0].metadata[DIFF])
    assert texts[1].metadata[CONTINUED] is True


def test_returned_items_are_the_callers_to_change() -> None:
    session = ThreadlineSession(MemoryStore(), "s1")
    run(session.add_items(fresh()))
    first = run(session.get_items())
    first[4]["content"][0]["text"] = "changed"
    assert run(session.get_items()) == ITEMS


def test_limit_counts_items_not_messages() -> None:
    session = ThreadlineSession(MemoryStore(), "s1")
    run(session.add_items(fresh()))
    assert run(session.get_items(limit=2)) == ITEMS[-2:]
    assert run(session.get_items(limit=0)) == []
    assert run(session.get_items(limit=99)) == ITEMS
    limited = ThreadlineSession(session.store, "s1", session_settings=SessionSettings(limit=3))
    assert run(limited.get_items()) == ITEMS[-3:]
    assert run(limited.get_items(limit=1)) == ITEMS[-1:]


def test_pop_item_returns_the_items_latest_first_then_none() -> None:
    store = MemoryStore()
    session = ThreadlineSession(store, "s1")
    run(session.add_items(fresh()))
    popped = [run(session.pop_item()) for _ in ITEMS]
    assert popped == ITEMS[::-1]
    assert run(session.pop_item()) is None
    assert store.load("s1") == []


def test_pop_item_splits_a_message_at_the_item() -> None:
    store = MemoryStore()
    session = ThreadlineSession(store, "s1")
    run(session.add_items(fresh()[:3]))
    assert run(session.pop_item()) == ITEMS[2]
    assert [p.type for p in store.load("s1")[-1].parts] == ["reasoning"]
    assert run(session.get_items()) == ITEMS[:2]


def test_pop_item_after_a_concurrent_write_pops_the_newer_item() -> None:
    class Racing(MemoryStore):
        """Another writer appends between this session's load and its replace, once."""

        raced = False

        def replace(self, conversation_id: str, messages: Any, **kwargs: Any) -> None:
            if not self.raced:
                self.raced = True
                self.append(conversation_id, [user_message("late")])
            super().replace(conversation_id, messages, **kwargs)

    store = Racing()
    session = ThreadlineSession(store, "s1")
    run(session.add_items(fresh()))
    popped = run(session.pop_item())
    assert popped["role"] == "user"
    assert run(session.get_items()) == ITEMS


def test_pop_item_gives_up_on_a_conversation_others_keep_changing() -> None:
    class AlwaysRacing(MemoryStore):
        def replace(self, conversation_id: str, messages: Any, **kwargs: Any) -> None:
            self.append(conversation_id, [user_message("late")])
            super().replace(conversation_id, messages, **kwargs)

    session = ThreadlineSession(AlwaysRacing(), "s1")
    run(session.add_items([{"role": "user", "content": "hi"}]))
    with pytest.raises(ConflictError, match="pop_item"):
        run(session.pop_item())


def test_a_dangling_call_gets_a_synthetic_output_the_api_accepts() -> None:
    store = MemoryStore()
    session = ThreadlineSession(store, "s1")
    run(session.add_items(fresh()[:3]))  # crashed inside the tool, or still running it
    assert run(session.get_items()) == ITEMS[:3]  # pending: kept (a Runner may run it)
    run(session.add_items([{"role": "user", "content": "Hello?"}]))  # the next turn: a crash
    items = run(session.get_items())
    assert items[:3] == ITEMS[:3]
    assert items[3]["type"] == "function_call_output"
    assert items[3]["call_id"] == "call_1"
    assert items[3]["output"].startswith("[tool error]")
    assert items[4] == {"role": "user", "content": "Hello?"}
    assert len(store.load("s1")) == 3  # repair is on the way out; the store is as written
    assert run(ThreadlineSession(store, "s1", integrity="off").get_items()) == [
        *ITEMS[:3],
        {"role": "user", "content": "Hello?"},
    ]
    with pytest.raises(IntegrityError):
        run(ThreadlineSession(store, "s1", integrity="strict").get_items())
    run(session.pop_item())
    assert run(session.pop_item()) == ITEMS[2]  # the stored item, not the synthetic output


@pytest.mark.parametrize("integrity", ["auto", "strict", "off"])
def test_pending_calls_are_kept_answered_or_refused_as_asked(integrity: Any) -> None:
    store = MemoryStore()
    run(ThreadlineSession(store, "s1").add_items(fresh()[:3]))
    kept = ThreadlineSession(store, "s1", integrity=integrity)
    assert run(kept.get_items()) == ITEMS[:3]
    answered = run(ThreadlineSession(store, "s1", pending="answer").get_items())
    assert answered[:3] == ITEMS[:3]
    assert answered[3]["call_id"] == "call_1"
    assert answered[3]["output"].startswith("[tool error]")
    with pytest.raises(IntegrityError, match="pending-tool-call"):
        run(ThreadlineSession(store, "s1", pending="refuse").get_items())
    with pytest.raises(ValueError, match='pending must be "keep", "answer" or "refuse"'):
        ThreadlineSession(store, "s1", pending=cast(Any, "drop"))


def test_history_written_by_threadline_is_encoded_with_the_codec() -> None:
    store = MemoryStore()
    messages = [
        user_message("hello"),
        assistant_message(TextPart(text="hi"), ToolCallPart(id="c9", name="f", arguments={})),
    ]
    store.append("s1", messages)
    session = ThreadlineSession(store, "s1", pending="answer")
    expected = openai_responses.encode(messages)["input"]
    assert run(session.get_items()) == expected
    assert run(session.pop_item()) == expected[2]
    assert run(session.pop_item()) == expected[1]
    assert run(session.get_items()) == expected[:1]


@pytest.mark.parametrize(
    "item",
    [
        {"type": "computer_call_output", "call_id": "cc_1", "output": {"type": "x"}},
        {"type": "item_reference", "id": "msg_old"},
        {"role": "user", "content": [{"type": "input_image", "file_id": "file-1"}]},
    ],
)
def test_an_item_the_codec_cannot_read_is_carried_whole(item: Any) -> None:
    store = MemoryStore()
    session = ThreadlineSession(store, "s1")
    run(session.add_items(copy.deepcopy([item])))
    assert run(session.get_items()) == [item]
    [message] = store.load("s1")
    part = message.parts[0]
    assert part.metadata[ITEM] == item
    if message.role == "assistant":
        assert isinstance(part, ProviderToolCallPart)
        assert part.provider == PROVIDER
    assert run(session.pop_item()) == item


def test_bad_input_names_the_item_and_the_fix() -> None:
    session = ThreadlineSession(MemoryStore(), "s1")
    with pytest.raises(ValidationError, match=r"items\[1\].*JSON object"):
        run(session.add_items([{"role": "user", "content": "hi"}, 5]))  # type: ignore[list-item]
    with pytest.raises(ValidationError, match=r"items\[0\]"):
        run(session.add_items([{"role": "user", "content": "x", "extra": {1, 2}}]))  # type: ignore[list-item]
    with pytest.raises(ValidationError, match="list of input items"):
        run(session.add_items({"role": "user", "content": "hi"}))  # type: ignore[arg-type]
    assert run(session.get_items()) == []
    with pytest.raises(ValidationError, match="conversation id"):
        ThreadlineSession(MemoryStore(), "a/b")
    with pytest.raises(TypeError, match="threadline store"):
        ThreadlineSession(object(), "s1")
    with pytest.raises(ValueError, match="integrity"):
        ThreadlineSession(MemoryStore(), "s1", integrity="maybe")  # type: ignore[arg-type]


def test_clear_session_deletes_the_conversation() -> None:
    store = MemoryStore()
    session = ThreadlineSession(store, "s1")
    run(session.add_items([{"role": "user", "content": "hi"}]))
    run(session.clear_session())
    assert run(session.get_items()) == []
    assert store.list_conversations() == []


# ---------------------------------------------------------------------------------------------
# Runner.run with a fake model


class CannedModel(Model):
    """A model that answers with canned outputs and records the input of every call."""

    def __init__(self, outputs: list[list[Any]]) -> None:
        self.outputs = outputs
        self.inputs: list[Any] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        self.inputs.append(input)
        return ModelResponse(output=self.outputs.pop(0), usage=Usage(), response_id=None)

    def stream_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests do not stream")


def said(text: str, item_id: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=item_id,
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_runner_continues_a_conversation_with_a_tool_round(tmp_path: Path, kind: str) -> None:
    store: Any = SQLiteStore(tmp_path / "s.db")
    if kind == "async":
        store = AsyncSQLiteStore(tmp_path / "a.db")
    call = ResponseFunctionToolCall(
        type="function_call",
        id="fc_1",
        call_id="call_1",
        name="add",
        arguments='{"a": 1, "b": 2}',
        status="completed",
    )
    model = CannedModel([[call], [said("1 + 2 = 3.", "msg_1")], [said("You're welcome.", "msg_2")]])
    agent = Agent(name="calculator", instructions="Add.", model=model, tools=[add])
    config = RunConfig(tracing_disabled=True)

    async def both_runs() -> tuple[Any, Any]:
        session = ThreadlineSession(store, "chat-1")
        first = await Runner.run(agent, "What is 1 + 2?", session=session, run_config=config)
        # a new session object over the same store: the conversation continues from disk
        again = ThreadlineSession(store, "chat-1")
        second = await Runner.run(agent, "Thanks!", session=again, run_config=config)
        return first, second

    first, second = run(both_runs())
    assert first.final_output == "1 + 2 = 3."
    assert second.final_output == "You're welcome."
    seen = model.inputs[2]  # what the model got on the second run: the whole conversation
    kinds = [(item.get("type", "message"), item.get("role")) for item in seen]
    assert kinds == [
        ("message", "user"),
        ("function_call", None),
        ("function_call_output", None),
        ("message", "assistant"),
        ("message", "user"),
    ]
    assert seen[2]["output"] == "3"
    loaded: list[Message] = run(store.load("chat-1")) if kind == "async" else store.load("chat-1")
    if kind == "async":
        run(store.aclose())
    else:
        store.close()
    assert [m.role for m in loaded] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert isinstance(loaded[1].parts[0], ToolCallPart)
    assert loaded[1].parts[0].arguments == {"a": 1, "b": 2}


def test_one_turn_added_in_two_calls_keeps_its_order() -> None:
    first: Any = {"type": "function_call", "call_id": "c0", "name": "f", "arguments": "{}"}
    second: Any = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    outputs: list[Any] = [
        {"type": "function_call_output", "call_id": "c0", "output": "a"},
        {"type": "function_call_output", "call_id": "c1", "output": "b"},
    ]
    session = ThreadlineSession(MemoryStore(), "s1")
    run(session.add_items([{"role": "user", "content": "go"}, copy.deepcopy(first)]))
    run(session.add_items(copy.deepcopy([second, outputs[0]])))
    run(session.add_items(copy.deepcopy([outputs[1]])))
    assert run(session.get_items()) == [{"role": "user", "content": "go"}, first, second, *outputs]


def test_a_custom_tool_output_written_by_threadline_goes_back_as_a_function_output() -> None:
    # a documented loss: parts without an item are encoded message by message, and a custom
    # tool call's output in the next message no longer sees that its call was custom
    call = ToolCallPart(id="c1", name="patch", arguments={"input": "x"}).with_metadata(
        {"openai.custom_tool": True}
    )
    messages = [
        user_message("go"),
        assistant_message(call),
        tool_message(ToolResultPart(call_id="c1", content="ok")),
    ]
    store = MemoryStore()
    store.append("s1", messages)
    items = run(ThreadlineSession(store, "s1").get_items())
    assert items[1]["type"] == "custom_tool_call"
    assert items[2] == {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    assert openai_responses.encode(messages)["input"][2]["type"] == "custom_tool_call_output"


def test_an_output_without_its_call_cannot_be_repaired() -> None:
    store = MemoryStore()
    session = ThreadlineSession(store, "s1")
    with pytest.raises(IntegrityError, match="orphan-tool-result"):
        run(session.add_items([fresh()[0], fresh()[3]]))  # refused: see the next tests
    # one stored before add_items refused it, or by other code, cannot be repaired when read
    store.append("s1", messages_of([fresh()[0], fresh()[3]]))
    with pytest.raises(IntegrityError):
        run(session.get_items())
    assert run(ThreadlineSession(store, "s1", integrity="off").get_items()) == [
        ITEMS[0],
        ITEMS[3],
    ]


CALL: Any = {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{}"}
OUTPUT: Any = {"type": "function_call_output", "call_id": "c1", "output": "3"}


@pytest.mark.parametrize(
    ("first", "poisoned", "code"),
    [
        pytest.param([CALL], [OUTPUT, OUTPUT], "duplicate-tool-result", id="two-outputs"),
        pytest.param([CALL, OUTPUT], [OUTPUT], "duplicate-tool-result", id="output-again"),
        pytest.param([CALL, OUTPUT], [CALL, OUTPUT], "duplicate-tool-call", id="id-reused"),
        pytest.param([], [CALL, CALL], "duplicate-tool-call", id="id-twice-in-one"),
        pytest.param([], [OUTPUT], "orphan-tool-result", id="orphan"),
        pytest.param([CALL], [{**OUTPUT, "call_id": "c2"}], "orphan-tool-result", id="other-id"),
    ],
)
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_batch_that_would_poison_the_session_is_refused_whole(
    tmp_path: Path, kind: str, first: list[Any], poisoned: list[Any], code: str
) -> None:
    """Issue 35, item 12: such a batch was stored, and every get_items raised from then on."""
    store: Any = SQLiteStore(tmp_path / "s.db") if kind == "sync" else None

    async def scenario() -> None:
        nonlocal store
        if store is None:
            store = AsyncSQLiteStore(tmp_path / "a.db")
        session: Session = ThreadlineSession(store, "s1")  # through the SDK's protocol
        await session.add_items(copy.deepcopy([{"role": "user", "content": "add"}, *first]))
        before = await session.get_items()
        batch = copy.deepcopy([*poisoned, {"role": "user", "content": "after"}])
        with pytest.raises(IntegrityError, match=code) as info:
            await session.add_items(batch)
        assert "ThreadlineSession.add_items" in str(info.value)
        assert "nothing was written" in str(info.value)
        assert {issue.code for issue in info.value.issues} == {code}
        assert await session.get_items() == before  # readable, nothing of the batch stored
        await session.add_items([{"role": "user", "content": "still works"}])
        assert (await session.get_items())[-1] == {"role": "user", "content": "still works"}
        if kind == "async":
            await store.aclose()

    run(scenario())
    if kind == "sync":
        store.close()


def test_a_runner_whose_model_reuses_a_call_id_leaves_the_session_readable() -> None:
    def call() -> ResponseFunctionToolCall:
        return ResponseFunctionToolCall(
            type="function_call", call_id="call_1", name="add", arguments='{"a": 1, "b": 2}'
        )

    model = CannedModel(
        [
            [call()],
            [said("3.", "msg_1")],
            [call()],  # the same call id again, as some gateways write them
            [said("3 again.", "msg_2")],
            [said("Bye.", "msg_3")],
        ]
    )
    agent = Agent(name="calculator", instructions="Add.", model=model, tools=[add])
    config = RunConfig(tracing_disabled=True)
    session = ThreadlineSession(MemoryStore(), "chat-1")

    async def runs() -> Any:
        await Runner.run(agent, "What is 1 + 2?", session=session, run_config=config)
        before = await session.get_items()
        with pytest.raises(IntegrityError, match="duplicate-tool-call"):
            await Runner.run(agent, "And again?", session=session, run_config=config)
        after = await session.get_items()  # before the fix: IntegrityError, for good
        assert after == [*before, {"role": "user", "content": "And again?"}]
        model.outputs.pop(0)  # the answer the refused run never asked for
        return await Runner.run(agent, "Bye?", session=session, run_config=config)

    assert run(runs()).final_output == "Bye."


def test_a_call_whose_output_has_not_come_is_stored() -> None:
    # in flight: the output comes in a later batch (or repair answers it if it never does)
    session = ThreadlineSession(MemoryStore(), "s1")
    run(session.add_items([{"role": "user", "content": "add"}, copy.deepcopy(CALL)]))
    assert run(session.get_items())[1:] == [CALL]  # pending: kept, not answered
    run(session.add_items([copy.deepcopy(OUTPUT)]))
    assert run(session.get_items())[1:] == [CALL, OUTPUT]


def test_a_batch_sent_twice_is_not_taken_for_a_replay() -> None:
    # The messages' ids are new at each add_items (an input item has no identity to derive one
    # from), so the store cannot skip a batch sent again: with calls it is refused whole, the
    # session stays readable; without, it is stored twice (docs: "Appending the same items
    # twice"). The Runner never sends a batch again (it compares the tail instead).
    store = MemoryStore()
    session = ThreadlineSession(store, "s1")
    run(session.add_items(fresh()))
    with pytest.raises(IntegrityError, match="duplicate-tool-call"):
        run(session.add_items(fresh()))
    assert run(session.get_items()) == ITEMS
    run(session.add_items([{"role": "user", "content": "yes"}]))
    run(session.add_items([{"role": "user", "content": "yes"}]))
    assert run(session.get_items())[-2:] == [{"role": "user", "content": "yes"}] * 2


def test_a_defect_already_stored_is_not_the_batchs_fault() -> None:
    store = MemoryStore()
    store.append("s1", openai_responses.decode([OUTPUT]))  # written by other code
    session = ThreadlineSession(store, "s1", integrity="off")
    run(session.add_items([{"role": "user", "content": "hi"}, copy.deepcopy(CALL)]))
    assert len(store.load("s1")) == 3


def test_add_items_checks_again_after_a_concurrent_write() -> None:
    class Racing(MemoryStore):
        """Another worker stores the output between this session's check and its append."""

        raced = False

        def append(self, conversation_id: str, messages: Any, **kwargs: Any) -> None:
            if not self.raced and messages[0].role == "tool":
                self.raced = True
                super().append(conversation_id, openai_responses.decode([OUTPUT]))
            super().append(conversation_id, messages, **kwargs)

    store = Racing()
    session = ThreadlineSession(store, "s1")
    run(session.add_items([copy.deepcopy(CALL)]))
    with pytest.raises(IntegrityError, match="duplicate-tool-result"):
        run(session.add_items([copy.deepcopy(OUTPUT)]))  # checked again: now a second output
    assert store.raced
    assert run(session.get_items()) == [CALL, OUTPUT]


def test_add_items_sees_what_other_writers_stored_since_its_last_batch() -> None:
    # add_items keeps the calls and outputs it checked while the version is its own
    store = MemoryStore()
    session = ThreadlineSession(store, "s1")
    run(session.add_items([copy.deepcopy(CALL)]))
    other = ThreadlineSession(store, "s1")
    run(other.add_items([copy.deepcopy(OUTPUT)]))
    with pytest.raises(IntegrityError, match="duplicate-tool-result"):
        run(session.add_items([copy.deepcopy(OUTPUT)]))
    second_call: Any = {**CALL, "call_id": "c2"}
    second_output: Any = {**OUTPUT, "call_id": "c2"}
    run(session.add_items([second_call]))
    run(session.pop_item())  # a write of this session's own that is no add_items
    with pytest.raises(IntegrityError, match="orphan-tool-result"):
        run(session.add_items([second_output]))
    assert run(session.get_items()) == [CALL, OUTPUT]


def test_add_items_gives_up_on_a_conversation_others_keep_changing() -> None:
    class AlwaysRacing(MemoryStore):
        def append(self, conversation_id: str, messages: Any, **kwargs: Any) -> None:
            if "expected_version" in kwargs:
                super().append(conversation_id, [user_message("late")])
            super().append(conversation_id, messages, **kwargs)

    session = ThreadlineSession(AlwaysRacing(), "s1")
    with pytest.raises(ConflictError, match="add_items"):
        run(session.add_items([copy.deepcopy(CALL)]))


@pytest.mark.requires_server
@pytest.mark.parametrize("kind", ["redis", "postgres"])
def test_a_session_on_a_server_store(kind: str, request: pytest.FixtureRequest) -> None:
    from threadline.stores import AsyncPostgresStore
    from threadline.stores import AsyncRedisStore
    from threadline.stores import PostgresStore
    from threadline.stores import RedisStore

    store: Any
    astore: Any
    if kind == "redis":
        url, prefix = request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
        store, astore = RedisStore(url, prefix=prefix), AsyncRedisStore(url, prefix=prefix)
    else:
        dsn = request.getfixturevalue("postgres_dsn")
        prefix = request.getfixturevalue("postgres_prefix")
        store = PostgresStore(dsn, table_prefix=prefix)
        astore = AsyncPostgresStore(dsn, table_prefix=prefix)

    async def check() -> None:
        async with astore:
            blocking, native = ThreadlineSession(store, "s1"), ThreadlineSession(astore, "s1")
            await blocking.add_items(fresh()[:3])
            await native.add_items(fresh()[3:])
            assert await blocking.get_items() == ITEMS
            assert await native.pop_item() == ITEMS[-1]
            assert await blocking.pop_item() == ITEMS[-2]
            assert (await native.get_items())[:3] == ITEMS[:-2]  # then the repaired output
            await native.clear_session()
            assert await blocking.get_items() == []

    with store:
        run(check())


def test_limits_bound_each_item() -> None:
    session = ThreadlineSession(MemoryStore(), "s1", limits=Limits(max_string=10))
    with pytest.raises(LimitExceededError):
        run(session.add_items([{"role": "user", "content": "x" * 11}]))
    run(session.add_items([{"role": "user", "content": "x" * 10}]))
    assert run(session.get_items()) == [{"role": "user", "content": "x" * 10}]
