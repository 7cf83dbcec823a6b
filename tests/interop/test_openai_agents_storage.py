"""What ``ThreadlineSession`` stores for an item: only what the codec does not write back
(``DIFF``), the whole item (``ITEM``) only when no difference gives it back, and the items
still come back exactly, from either form."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest

from tests.support import REQUIRE_ALL
from threadline.errors import ValidationError
from threadline.stores import MemoryStore

try:
    from threadline.interop.openai_agents import CONTINUED
    from threadline.interop.openai_agents import DIFF
    from threadline.interop.openai_agents import ITEM
    from threadline.interop.openai_agents import ThreadlineSession
    from threadline.interop.openai_agents import items_of
    from threadline.interop.openai_agents import messages_of
except ImportError:  # pragma: no cover - the test extra installs it
    if REQUIRE_ALL:
        raise
    pytest.skip("openai-agents is not installed (pip install -e .[test])", allow_module_level=True)

pytestmark = pytest.mark.requires_sdk

SECRET = "gAAAA" + "x" * 100
ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "Weather in Paris?"},
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": SECRET},
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "21 C"},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": "It is 21 C.", "annotations": [], "logprobs": []}
        ],
    },
]


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def add(session: ThreadlineSession, items: list[Any]) -> None:
    run(session.add_items(copy.deepcopy(items)))


def test_a_part_keeps_only_what_the_codec_does_not_write_back() -> None:
    store = MemoryStore()
    session = ThreadlineSession(store, "s")
    add(session, ITEMS)
    parts = [part for message in store.load("s") for part in message.parts]
    assert all(ITEM not in part.metadata for part in parts)
    kept = json.dumps([part.metadata[DIFF] for part in parts])
    assert SECRET not in kept
    assert "It is 21 C." not in kept
    assert "Weather" not in kept
    assert '"/status"' in kept  # the codec does not write a function call's status
    assert '"/content/0/logprobs"' in kept
    assert run(session.get_items()) == ITEMS
    assert [list(item) for item in run(session.get_items())] == [list(i) for i in ITEMS]


def test_changing_the_added_items_afterwards_changes_nothing_stored() -> None:
    session = ThreadlineSession(MemoryStore(), "s")
    added: list[Any] = copy.deepcopy(ITEMS)
    run(session.add_items(added))
    added[2]["status"] = "changed"
    added[4]["content"][0]["logprobs"].append({"token": "x"})
    assert run(session.get_items()) == ITEMS


def test_an_item_no_difference_gives_back_is_kept_whole() -> None:
    # an output message without an id: the codec writes each of its texts as its own item
    item = {
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "output_text", "text": "a", "annotations": []},
            {"type": "output_text", "text": "b", "annotations": []},
        ],
    }
    store = MemoryStore()
    session = ThreadlineSession(store, "s")
    add(session, [ITEMS[0], item])
    head, rest = store.load("s")[1].parts
    assert head.metadata[ITEM] == item
    assert rest.metadata[CONTINUED] is True
    assert run(session.get_items()) == [ITEMS[0], item]
    assert run(session.pop_item()) == item


def test_a_batch_with_an_item_the_codec_cannot_read_is_read_item_by_item() -> None:
    carried = {"type": "computer_call_output", "call_id": "cc_1", "output": {"type": "x"}}
    items = [*copy.deepcopy(ITEMS[:4]), carried, copy.deepcopy(ITEMS[4])]
    session = ThreadlineSession(MemoryStore(), "s")
    add(session, items)
    assert run(session.get_items()) == items


def test_items_stored_whole_read_back_as_before() -> None:
    # histories stored before DIFF keep every item whole in ITEM
    messages = messages_of(copy.deepcopy(ITEMS))
    whole = []
    items = iter(ITEMS)
    for message in messages:
        parts = []
        for part in message.parts:
            if DIFF in part.metadata:
                metadata = {k: v for k, v in part.metadata.items() if k != DIFF}
                part = type(part)(**{**_fields(part), "metadata": {**metadata, ITEM: next(items)}})
            parts.append(part)
        whole.append(message.model_copy(update={"parts": tuple(parts)}))
    assert all(DIFF not in p.metadata for m in whole for p in m.parts)
    assert items_of(whole) == ITEMS


def _fields(part: Any) -> dict[str, Any]:
    return {name: getattr(part, name) for name in part.__dataclass_fields__}


def test_an_item_with_a_key_that_is_not_a_string_is_refused() -> None:
    session = ThreadlineSession(MemoryStore(), "s")
    bad: Any = {"role": "user", "content": "x", 1: "y"}
    with pytest.raises(ValidationError, match=r"items\[1\]"):
        add(session, [ITEMS[0], bad])
    assert run(session.get_items()) == []


def test_keys_with_pointer_characters_come_back() -> None:
    item: dict[str, Any] = {
        "type": "function_call",
        "call_id": "c1",
        "name": "f",
        "arguments": "{}",
        "a/b~c": {"~1": [1, {"x/y": None}]},
        "0": "zero",
    }
    session = ThreadlineSession(MemoryStore(), "s", integrity="off")
    add(session, [ITEMS[0], item])
    assert run(session.get_items()) == [ITEMS[0], item]
