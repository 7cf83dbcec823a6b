"""Issue 39: the documented step ``encode(history.messages_for_model(), provider=...)`` runs
the integrity pass once, and a caller who changes the list in between gets it again."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import threadline.integrity as integrity_module
from threadline import History
from threadline import IntegrityError
from threadline import Message
from threadline import TextPart
from threadline import ToolCallPart
from threadline import ToolResultPart
from threadline import encode
from threadline.codecs import codec_names
from threadline.integrity import prepare_messages

PROVIDERS = codec_names()


def user(text: str, id: str) -> Message:
    return Message(id=id, role="user", parts=(TextPart(text=text),))


def call(call_id: str, id: str) -> Message:
    part = ToolCallPart(id=call_id, name="lookup", arguments={"q": call_id})
    return Message(id=id, role="assistant", parts=(part,))


def result(call_id: str, id: str) -> Message:
    part = ToolResultPart(call_id=call_id, name="lookup", content=(TextPart(text="42"),))
    return Message(id=id, role="tool", parts=(part,))


def history() -> History:
    return History(
        [
            user("hi", "msg_1"),
            call("call_1", "msg_2"),
            result("call_1", "msg_3"),
            Message(id="msg_4", role="assistant", parts=(TextPart(text="done"),)),
            user("again", "msg_5"),
        ]
    )


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the integrity passes run (every one goes through ``_repaired``)."""
    counted: list[int] = []
    original = integrity_module._repaired

    def counting(items: list[Message], *args: Any, **kwargs: Any) -> Any:
        counted.append(len(items))
        return original(items, *args, **kwargs)

    monkeypatch.setattr(integrity_module, "_repaired", counting)
    return counted


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("integrity", ["auto", "strict"])
def test_the_documented_step_runs_one_pass(
    provider: str, integrity: Any, passes: list[int]
) -> None:
    h = history()
    expected = encode(list(h.messages_for_model()), provider=provider, integrity=integrity)
    passes.clear()
    body = encode(h.messages_for_model(), provider=provider, integrity=integrity)
    assert len(passes) == 1
    assert json.dumps(body) == json.dumps(expected)


def test_prepare_messages_output_is_trusted_too(passes: list[int]) -> None:
    prepared = prepare_messages(list(history()))
    encode(prepared, provider="openai_chat")
    assert len(passes) == 1


def dangling(messages: list[Message]) -> None:
    messages.append(call("call_9", "msg_9"))


def replaced(messages: list[Message]) -> None:
    messages[2] = user("instead", "msg_3b")  # call_1 has no result now


def removed(messages: list[Message]) -> None:
    del messages[1]  # the result of call_1 is an orphan now


def reordered(messages: list[Message]) -> None:
    messages.reverse()


def sliced(messages: list[Message]) -> None:
    messages[3:] = [call("call_8", "msg_8")]


def extended(messages: list[Message]) -> None:
    messages += [call("call_7", "msg_7")]


def popped_and_restored(messages: list[Message]) -> None:
    messages.append(messages.pop())  # the same objects, in the same order: still trusted


MUTATIONS: list[Callable[[list[Message]], None]] = [
    dangling,
    replaced,
    removed,
    reordered,
    sliced,
    extended,
]


@pytest.mark.parametrize("mutate", MUTATIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("integrity", ["auto", "strict"])
def test_a_changed_list_gets_the_full_pass(
    mutate: Callable[[list[Message]], None], integrity: Any, passes: list[int]
) -> None:
    h = history()
    prepared = h.messages_for_model()
    mutate(prepared)
    plain = list(prepared)

    def outcome(messages: list[Message]) -> str:
        try:
            return json.dumps(encode(messages, provider="openai_chat", integrity=integrity))
        except IntegrityError as error:
            return f"IntegrityError: {[issue.code for issue in error.issues]}"

    passes.clear()
    got = outcome(prepared)
    assert len(passes) == 1  # encode checked it again
    assert got == outcome(plain)
    if integrity == "strict" and mutate is not reordered:
        assert got.startswith("IntegrityError"), got  # every mutation above breaks a rule


def test_the_same_objects_back_in_place_stay_trusted(passes: list[int]) -> None:
    prepared = history().messages_for_model()
    popped_and_restored(prepared)
    passes.clear()
    encode(prepared, provider="anthropic")
    assert passes == []


def test_pending_keep_output_is_checked_again(passes: list[int]) -> None:
    h = history()
    h.append(call("call_2", "msg_6"))  # in flight: "keep" leaves it unanswered
    kept = h.messages_for_model(pending="keep")
    passes.clear()
    body = encode(kept, provider="openai_chat")
    assert len(passes) == 1
    assert body == encode(list(kept), provider="openai_chat")
    assert body["messages"][-1]["role"] == "tool"  # answered as interrupted by encode's pass


def test_the_returned_list_is_an_ordinary_list_to_its_caller() -> None:
    prepared = history().messages_for_model()
    assert isinstance(prepared, list)
    assert prepared == list(history())
    assert prepared[1:] == list(history())[1:]
