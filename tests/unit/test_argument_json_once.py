"""Issue 39: a tool call's arguments are written as JSON text once per process, not once per
``encode`` (OpenAI Chat, OpenAI Responses and Mistral send them as text; the token estimate
and ``History.size`` count that text), and the text is always what writing them anew gives."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings

import threadline._json as json_module
from tests.strategies import json_objects
from tests.support import examples
from threadline import History
from threadline import Message
from threadline import TextPart
from threadline import ToolCallPart
from threadline import ToolResultPart
from threadline import encode
from threadline._json import FrozenJsonMap
from threadline._json import compact_text
from threadline.tokens import content_chars

TEXT_FORMATS = ["openai_chat", "openai_responses", "mistral"]


def fresh(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every mapping written as compact JSON text."""
    seen: list[Any] = []
    original: Callable[[Any], str] = json_module._compact_json

    def counting(value: Any) -> str:
        seen.append(value)
        return original(value)

    monkeypatch.setattr(json_module, "_compact_json", counting)
    return seen


def conversation() -> History:
    arguments = {"city": "Zürich", "days": [1, 2], "units": {"temp": "C"}}
    call = ToolCallPart(id="call_1", name="weather", arguments=arguments)
    result = ToolResultPart(call_id="call_1", name="weather", content=(TextPart(text="sunny"),))
    return History(
        [
            Message(role="user", parts=(TextPart(text="Weather?"),)),
            Message(role="assistant", parts=(call,)),
            Message(role="tool", parts=(result,)),
        ]
    )


@pytest.mark.parametrize("provider", TEXT_FORMATS)
def test_each_call_is_written_once_over_many_encodes(provider: str, written: list[Any]) -> None:
    history = conversation()
    first = encode(history.messages_for_model(), provider=provider)
    assert len(written) == 1
    for _ in range(3):
        assert encode(history.messages_for_model(), provider=provider) == first
    assert len(written) == 1


def test_the_size_reads_the_kept_text_and_keeps_none(written: list[Any]) -> None:
    history = conversation()
    _ = History(list(history)).size  # a measurement: writes the text, keeps nothing
    assert len(written) == 1
    encode(history.messages_for_model(), provider="openai_chat")  # writes and keeps it
    assert len(written) == 2
    _ = history.size  # reads the kept text
    _ = history.total_tokens
    assert len(written) == 2


@settings(max_examples=examples(200))
@given(json_objects)
def test_the_kept_text_is_the_text_written_anew(value: dict[str, Any]) -> None:
    call = ToolCallPart(id="c", name="f", arguments=value)
    expected = fresh(value)
    assert compact_text(call.arguments) == expected
    assert compact_text(call.arguments) == expected  # the kept text
    message = Message(role="assistant", parts=(call,))
    body = encode([message], provider="openai_chat", integrity="off")
    assert body["messages"][0]["tool_calls"][0]["function"]["arguments"] == expected
    assert content_chars(message) == len(expected)


def test_copies_and_other_mappings_are_written_anew(written: list[Any]) -> None:
    arguments = FrozenJsonMap({"a": [1]})
    assert compact_text(arguments) == '{"a":[1]}'
    copied = copy.deepcopy(arguments)
    copied["a"].append(2)  # a deep copy's containers are its own
    assert compact_text(copied) == '{"a":[1,2]}'
    assert compact_text(pickle.loads(pickle.dumps(arguments))) == '{"a":[1]}'
    plain = {"a": [1]}
    assert compact_text(plain) == '{"a":[1]}'
    plain["a"].append(3)
    assert compact_text(plain) == '{"a":[1,3]}'  # a plain dict keeps nothing
    assert len(written) == 5  # once per map, twice for the plain dict


def test_raw_arguments_go_verbatim(written: list[Any]) -> None:
    call = ToolCallPart(id="c", name="f", arguments={}, raw_arguments="{not json")
    body = encode(
        [Message(role="assistant", parts=(call,))], provider="openai_chat", integrity="off"
    )
    assert body["messages"][0]["tool_calls"][0]["function"]["arguments"] == "{not json"
    assert written == []
