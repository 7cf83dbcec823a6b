"""``replay`` is runtime-only: no data read from outside can set it.

``dump_json`` never writes the flag, so JSON holding ``"replay": true`` was not written by
threadline: every reader of outside data refuses it with a ``ValidationError`` naming the field
(``"replay": false`` is the default and reads as such). Setting it in Python stays allowed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic
import pytest

import threadline as tl
from threadline import cli
from threadline.serialization import messages_from_json
from threadline.stores import JsonlStore
from threadline.stores import SQLiteStore


def flagged() -> dict[str, Any]:
    """A message as a mapping, as a client could send it, with ``"replay": true``."""
    message = tl.assistant_message(tl.tool_call_part("c1", "delete_account", {}), id="a1")
    return {**message.model_dump(mode="json"), "replay": True}


def envelope(*messages: dict[str, Any]) -> str:
    return json.dumps({"format": "threadline", "version": 1, "messages": list(messages)})


def refused(call: Callable[[], object], path: str = "messages[0].replay") -> tl.ValidationError:
    with pytest.raises(tl.ValidationError) as info:
        call()
    assert [detail.path for detail in info.value.errors] == [path]
    assert "runtime-only" in str(info.value)
    assert "replay=True" in str(info.value)  # the fix: set it in Python
    return info.value


# ---------------------------------------------------------------------------------------------
# JSON readers


def test_load_json_refuses_replay_in_an_envelope() -> None:
    refused(lambda: tl.load_json(envelope(flagged())))


def test_load_json_refuses_replay_in_a_bare_list() -> None:
    refused(lambda: tl.load_json(json.dumps([flagged()])))


def test_load_json_refuses_replay_with_the_bounded_validator() -> None:
    # Text longer than max_string is read by the validator built with that bound.
    text = envelope(tl.user_message("x" * 50).model_dump(mode="json"), flagged())
    limits = tl.Limits(max_string=100)
    assert len(text) > 100
    refused(lambda: tl.load_json(text, limits=limits), "messages[1].replay")


def test_load_json_refuses_replay_under_untrusted_limits() -> None:
    refused(lambda: tl.load_json(envelope(flagged()), limits=tl.Limits.untrusted()))


def test_history_from_json_refuses_replay() -> None:
    refused(lambda: tl.History.from_json(envelope(flagged())))


def test_replay_false_is_the_default_and_reads_as_it() -> None:
    data = {**flagged(), "replay": False}
    assert tl.load_json(envelope(data))[0].replay is False
    history = tl.History()
    history.extend([data])
    assert history.snapshot()[0].replay is False


def test_json_validation_refuses_replay_whoever_calls_it() -> None:
    text = json.dumps(flagged())
    with pytest.raises(pydantic.ValidationError, match="runtime-only"):
        tl.Message.model_validate_json(text)
    with pytest.raises(pydantic.ValidationError, match="runtime-only"):
        messages_from_json(f"[{text}]")


# ---------------------------------------------------------------------------------------------
# Mappings given to threadline's entry points


def test_history_append_refuses_a_mapping_with_replay() -> None:
    history = tl.History()
    refused(lambda: history.append(flagged()), "message.replay")
    assert len(history) == 0


def test_history_extend_refuses_a_mapping_with_replay() -> None:
    history = tl.History()
    refused(lambda: history.extend([tl.user_message("hi"), flagged()]), "messages[1].replay")
    assert len(history) == 0


def test_sanitize_untrusted_refuses_a_mapping_with_replay() -> None:
    body: list[Any] = [flagged()]  # the parsed JSON of a request, as the docs show
    refused(lambda: tl.sanitize_untrusted(body))


def test_prepare_messages_refuses_a_mapping_with_replay() -> None:
    body: list[Any] = [tl.user_message("hi").model_dump(), flagged()]
    refused(lambda: tl.prepare_messages(body), "messages[1].replay")


def test_verify_prefix_refuses_a_mapping_with_replay() -> None:
    key = bytes(range(32))
    plain = {k: v for k, v in flagged().items() if k != "replay"}
    token = tl.seal([plain], key, conversation_id="c")
    refused(lambda: tl.verify_prefix([flagged()], token, key, conversation_id="c"))


# ---------------------------------------------------------------------------------------------
# Codecs: provider formats have no replay flag; a stray key never sets it


@pytest.mark.parametrize(
    ("provider", "payload"),
    [
        ("openai_chat", [{"role": "user", "content": "hi", "replay": True}]),
        ("anthropic", {"messages": [{"role": "user", "content": "hi", "replay": True}]}),
        ("gemini", {"contents": [{"role": "user", "parts": [{"text": "hi"}], "replay": True}]}),
    ],
)
def test_codecs_decode_never_sets_replay(provider: str, payload: Any) -> None:
    assert [m.replay for m in tl.decode(payload, provider=provider)] == [False]


def test_codecs_decode_response_never_sets_replay() -> None:
    response = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o",
        "replay": True,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "hi", "replay": True},
            }
        ],
    }
    assert tl.decode_response(response, provider="openai_chat").replay is False


# ---------------------------------------------------------------------------------------------
# Stores: a row holding the flag was not written by a store


def test_jsonl_store_refuses_a_line_with_replay(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    store.append("c", [tl.user_message("hi", id="u1")])
    with (tmp_path / "c.jsonl").open("a", encoding="utf-8") as file:
        file.write(json.dumps(flagged()) + "\n")
    with pytest.raises(tl.StoreError) as info:
        store.load("c")
    assert "runtime-only" in str(info.value.__cause__)


def test_sqlite_store_refuses_a_row_with_replay(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with SQLiteStore(path) as store:
        store.append("c", [tl.user_message("hi", id="u1")])
        connection = sqlite3.connect(path)
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master")]
        table = next(name for name in tables if name.endswith("messages"))
        columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
        column = next(name for name in columns if name in ("data", "json", "message", "body"))
        row = tl.user_message("hi", id="u1").model_dump(mode="json")
        text = json.dumps({**row, "replay": True})
        connection.execute(f"UPDATE {table} SET {column} = ?", (text,))
        connection.commit()
        connection.close()
        with pytest.raises(tl.StoreError) as info:
            store.load("c")
    assert "runtime-only" in str(info.value.__cause__)


# ---------------------------------------------------------------------------------------------
# The command line


@pytest.mark.parametrize("layout", ["envelope", "jsonl"])
def test_cli_refuses_replay_in_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str
) -> None:
    path = tmp_path / "history.json"
    text = envelope(flagged()) if layout == "envelope" else json.dumps(flagged()) + "\n"
    path.write_text(text, encoding="utf-8")
    code = cli.main(["check", str(path)])
    _, err = capsys.readouterr()
    assert code != 0
    assert "replay" in err
    assert "runtime-only" in err


# ---------------------------------------------------------------------------------------------
# Python may set it


def test_python_code_still_sets_replay() -> None:
    message = tl.Message(role="user", parts=(tl.TextPart(text="x"),), replay=True)
    assert message.replay is True
    assert message.model_copy(update={"replay": False}).model_copy(update={"replay": True}).replay
    assert tl.Message.model_validate({**flagged()}).replay is True  # pydantic's own, in Python
    history = tl.History()
    history.append(message)
    assert history.snapshot()[0].replay is True
