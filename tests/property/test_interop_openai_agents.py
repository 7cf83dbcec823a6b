"""``ThreadlineSession`` round trips over generated histories.

Native side: a generated Agents SDK item history (user, system and developer messages, output
messages with the fields the codec does not carry, reasoning, function and custom tool calls
with their outputs, items the codec cannot read), added in random batches, comes back from
``get_items`` exactly, ``limit`` is its tail, and ``pop_item`` returns it latest first.
threadline side: a generated conversation stored by threadline reads as the Responses codec
encodes it, and those items, added to another session, read back the same.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.strategies import conversations
from tests.strategies import json_objects
from tests.strategies import names
from tests.strategies import texts
from tests.support import REQUIRE_ALL
from tests.support import examples
from threadline import Message
from threadline import check_messages
from threadline import decode
from threadline.codecs import openai_responses
from threadline.errors import IntegrityError
from threadline.stores import MemoryStore

try:
    from threadline.interop.openai_agents import ThreadlineSession
    from threadline.interop.openai_agents import items_of
    from threadline.interop.openai_agents import messages_of
except ImportError:  # pragma: no cover - the test extra installs it
    if REQUIRE_ALL:
        raise
    pytest.skip("openai-agents is not installed (pip install -e .[test])", allow_module_level=True)

pytestmark = pytest.mark.requires_sdk

statuses = st.sampled_from(["completed", "in_progress", "incomplete"])


@st.composite
def extras(draw: st.DrawFn) -> dict[str, Any]:
    """Fields an SDK item may hold that the codec does not read back."""
    out: dict[str, Any] = {}
    if draw(st.booleans()):
        out["status"] = draw(statuses)
    return out


@st.composite
def input_messages(draw: st.DrawFn) -> dict[str, Any]:
    role = draw(st.sampled_from(["user", "system", "developer"]))
    content: Any = draw(texts)
    if draw(st.booleans()):
        content = [
            {"type": "input_text", "text": draw(texts)} for _ in range(draw(st.integers(1, 3)))
        ]
    item: dict[str, Any] = {"role": role, "content": content}
    if draw(st.booleans()):
        item["type"] = "message"
    return item


@st.composite
def output_messages(draw: st.DrawFn, number: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 4)) == 0:
            content.append({"type": "refusal", "refusal": draw(texts)})
            continue
        block: dict[str, Any] = {"type": "output_text", "text": draw(texts), "annotations": []}
        if draw(st.booleans()):
            block["logprobs"] = []
        content.append(block)
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "content": content,
        **draw(extras()),
    }


@st.composite
def item_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A well-formed item history: every call answered by the outputs after it."""
    items: list[dict[str, Any]] = []
    for turn in range(draw(st.integers(0, 4))):
        items.append(draw(input_messages()))
        if draw(st.booleans()):
            reasoning: dict[str, Any] = {
                "type": "reasoning",
                "id": f"rs_{turn}",
                "summary": [{"type": "summary_text", "text": draw(texts)}],
            }
            if draw(st.booleans()):
                reasoning["encrypted_content"] = draw(st.text(min_size=1, max_size=20))
            items.append(reasoning)
        calls = []
        for number in range(draw(st.integers(0, 3))):
            call_id = f"call_{turn}_{number}"
            if draw(st.integers(0, 3)) == 0:
                call = {"type": "custom_tool_call", "call_id": call_id, "name": draw(names)}
                call["input"] = draw(texts)
            else:
                arguments = draw(json_objects)
                call = {"type": "function_call", "call_id": call_id, "name": draw(names)}
                call["arguments"] = json.dumps(arguments)
            call["id"] = f"fc_{turn}_{number}"
            call.update(draw(extras()))
            calls.append(call)
        items.extend(calls)
        for call in calls:
            kind = "custom_tool_call_output" if call["type"] == "custom_tool_call" else None
            items.append(
                {
                    "type": kind or "function_call_output",
                    "call_id": call["call_id"],
                    "output": draw(texts),
                }
            )
        if draw(st.integers(0, 4)) == 0:
            items.append({"type": "computer_call_output", "call_id": f"cc_{turn}", "output": {}})
        items.append(draw(output_messages(turn)))
    return items


@st.composite
def batches(draw: st.DrawFn, items: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """``items`` cut into consecutive batches, as a run's turns add them."""
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(items) - 1)), max_size=3)))
    bounds = [0, *[cut for cut in cuts if cut < len(items)], len(items)]
    return [items[start:end] for start, end in itertools.pairwise(bounds) if end > start]


@given(st.data())
def test_items_come_back_exactly(data: st.DataObject) -> None:
    items = data.draw(item_histories())
    session = ThreadlineSession(MemoryStore(), "s")

    async def check() -> None:
        for batch in data.draw(batches(items)):
            await session.add_items(copy.deepcopy(batch))  # type: ignore[arg-type]
        assert await session.get_items() == items
        limit = data.draw(st.integers(0, len(items) + 1))
        assert await session.get_items(limit=limit) == (items[-limit:] if limit else [])
        popped = []
        while (item := await session.pop_item()) is not None:
            popped.append(item)
        assert popped == items[::-1]

    asyncio.run(check())


@settings(max_examples=examples(300))
@given(st.data())
def test_a_run_stopped_anywhere_reads_back_as_stored_unless_asked_to_answer(
    data: st.DataObject,
) -> None:
    """Issue 36: any prefix of a well-formed history (a run stopped anywhere: between calls and
    their outputs, a round half answered) comes back from ``get_items`` exactly as stored, its
    calls in flight unanswered; with ``pending="answer"`` each of them is answered once, after
    the stored items, and a provider would take the result."""
    items = data.draw(item_histories())
    stored = items[: data.draw(st.integers(0, len(items)))]
    answers = {item["call_id"] for item in stored if item.get("type", "").endswith("_output")}
    in_flight = [
        item["call_id"]
        for item in stored
        if item.get("type") in ("function_call", "custom_tool_call")
        and item["call_id"] not in answers
    ]
    store = MemoryStore()

    async def read() -> tuple[list[Any], list[Any]]:
        await ThreadlineSession(store, "s").add_items(copy.deepcopy(stored))  # type: ignore[arg-type]
        kept = await ThreadlineSession(store, "s").get_items()
        return kept, await ThreadlineSession(store, "s", pending="answer").get_items()

    kept, answered = asyncio.run(read())
    assert kept == stored
    assert answered[: len(stored)] == stored
    added = answered[len(stored) :]
    assert [item["call_id"] for item in added] == in_flight
    assert all(item["type"].endswith("_output") for item in added)
    readable = [item for item in answered if item.get("type") != "computer_call_output"]
    assert check_messages(decode(readable, provider="openai_responses"), pending="refuse").ok


@given(conversations(replay=False))
def test_threadline_history_reads_as_the_codec_encodes_it(messages: list[Message]) -> None:
    store = MemoryStore()
    if messages:
        store.append("s", messages)
    first = ThreadlineSession(store, "s")
    second = ThreadlineSession(MemoryStore(), "s")

    async def check() -> None:
        items = await first.get_items()
        assert items == openai_responses.encode(messages)["input"]
        await second.add_items(copy.deepcopy(items))
        assert await second.get_items() == items

    asyncio.run(check())


pairing_items = st.lists(
    st.one_of(
        st.builds(
            lambda call_id: (
                {"type": "function_call", "call_id": call_id, "name": "f"} | {"arguments": "{}"}
            ),
            st.sampled_from(["c1", "c2", "c3"]),
        ),
        st.builds(
            lambda call_id: {"type": "function_call_output", "call_id": call_id, "output": "x"},
            st.sampled_from(["c1", "c2", "c3"]),
        ),
        st.just({"role": "user", "content": "go"}),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=examples(200))
@given(st.lists(pairing_items, max_size=8))
def test_no_batch_poisons_the_session_and_none_is_refused_for_nothing(
    batches: list[list[dict[str, Any]]],
) -> None:
    """Issue 35, item 12: after any sequence of add_items, get_items reads; a batch is
    refused exactly when storing it would have made reads fail, and then nothing is stored."""
    store = MemoryStore()
    session = ThreadlineSession(store, "s")

    async def check() -> None:
        for batch in batches:
            before = store.load("s")
            try:  # the oracle: the read path over the history with the batch stored
                items_of([*before, *messages_of(copy.deepcopy(batch))])
                poisons = False
            except IntegrityError:
                poisons = True
            try:
                await session.add_items(copy.deepcopy(batch))  # type: ignore[arg-type]
                refused = False
            except IntegrityError:
                refused = True
            assert refused == poisons
            if refused:
                assert store.load("s") == before
            await session.get_items()

    asyncio.run(check())
