"""Every entry point that takes "a sequence of messages" reads it one way (``_sequences``).

A wrong item (an int, a mapping with no role) or a wrong batch (not a sequence at all) is
reported with the same :class:`~threadline.ValidationError` shape wherever it is given: one
:class:`~threadline.errors.ErrorDetail` per problem, paths ``messages``, ``messages[1]`` and
``messages[1].role``, types ``messages_type``, ``message_type`` and pydantic's kind.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from threadline import cli
from threadline import serialization
from threadline.codecs import codec_names
from threadline.codecs import get_codec
from threadline.errors import ErrorDetail
from threadline.sealing import seal
from threadline.sealing import verify
from threadline.sealing import verify_prefix
from threadline.stores import JsonlStore
from threadline.stores import MemoryStore
from threadline.stores import SQLiteStore
from threadline.stores import Store

KEY = b"k" * 32
GOOD = tl.user_message("hi", id="u1")
NO_ROLE: dict[str, Any] = {"id": "x", "parts": [{"type": "text", "text": "hi"}]}

Call = Callable[[Any], object]


def _sealed(messages: Any) -> None:
    verify(messages, seal([GOOD, GOOD], KEY, conversation_id="c"), KEY, conversation_id="c")


def _sealed_prefix(messages: Any) -> None:
    verify_prefix(messages, seal([GOOD], KEY, conversation_id="c"), KEY, conversation_id="c")


# Entry points that validate mappings into messages, by the name their errors give.
READERS: dict[str, Call] = {
    "History": tl.History,
    "History.extend": lambda m: tl.History().extend(m),
    "History.restore": lambda m: tl.History().restore(m),
    "Snapshot": tl.Snapshot,
    "check_messages": tl.check_messages,
    "repair_messages": tl.repair_messages,
    "prepare_messages": tl.prepare_messages,
    "sanitize_untrusted": tl.sanitize_untrusted,
    "trim_messages": lambda m: tl.trim_messages(m, max_messages=5),
    "seal": lambda m: seal(m, KEY, conversation_id="c"),
    "verify": _sealed,
    "verify_prefix": _sealed_prefix,
    **{f"encode ({name})": get_codec(name).encode for name in codec_names()},
}
# The entry points that take only a sequence (their results name the caller's positions).
SEQUENCE_ONLY = {
    "check_messages",
    "repair_messages",
    "prepare_messages",
    "sanitize_untrusted",
    "trim_messages",
    "seal",
    "verify",
    "verify_prefix",
}
STORE_KINDS = ("memory", "sqlite", "jsonl")


def where(name: str) -> str:
    return "encode" if name.startswith("encode") else name


def raised(call: Call, value: object) -> tl.ValidationError:
    with pytest.raises(tl.ValidationError) as caught:
        call(value)
    assert type(caught.value) is tl.ValidationError
    return caught.value


def assert_not_a_batch(error: tl.ValidationError, name: str, value: object) -> None:
    [detail] = error.errors
    assert (detail.path, detail.type) == ("messages", "messages_type")
    got = type(value).__name__
    article = "an" if got[0] in "aeiouAEIOU" else "a"
    assert detail.message.startswith(f"{name} takes a"), detail.message
    assert " of messages" in detail.message
    assert f", not {article} {got}; " in detail.message
    assert str(error) == detail.message


def assert_an_int_at_1(error: tl.ValidationError, name: str) -> None:
    [detail] = error.errors
    assert (detail.path, detail.type) == ("messages[1]", "message_type")
    assert detail.message.startswith("not a message (got an int); ")
    assert str(error).startswith(f"{name}: invalid messages, nothing was changed: 1 problem\n")
    assert "\n  messages[1]: not a message (got an int)" in str(error)


# ---------------------------------------------------------------------------------------------
# Readers of messages and mappings


@pytest.mark.parametrize("name", READERS)
@pytest.mark.parametrize("value", [42, None, "text", GOOD, {"role": "user"}])
def test_a_value_that_is_not_a_batch(name: str, value: object) -> None:
    assert_not_a_batch(raised(READERS[name], value), where(name), value)


@pytest.mark.parametrize("name", READERS)
def test_an_iterator_is_a_batch_only_where_any_iterable_is(name: str) -> None:
    if name not in SEQUENCE_ONLY:
        return  # an iterator of good messages is read (tests/unit/test_history.py)
    error = raised(READERS[name], iter([GOOD]))
    assert_not_a_batch(error, name, iter([GOOD]))
    assert "a sequence of messages (a list, tuple or snapshot)" in str(error)


@pytest.mark.parametrize("name", READERS)
def test_an_int_item(name: str) -> None:
    assert_an_int_at_1(raised(READERS[name], [GOOD, 42]), where(name))


@pytest.mark.parametrize("name", READERS)
def test_a_mapping_without_a_role(name: str) -> None:
    error = raised(READERS[name], [GOOD, NO_ROLE])
    assert [(d.path, d.type) for d in error.errors] == [("messages[1].role", "missing")]
    assert str(error).startswith(f"{where(name)}: invalid messages, nothing was changed: ")


@pytest.mark.parametrize("name", READERS)
def test_every_problem_is_listed_in_order(name: str) -> None:
    error = raised(READERS[name], [42, GOOD, NO_ROLE, "x"])
    assert [(d.path, d.type) for d in error.errors] == [
        ("messages[0]", "message_type"),
        ("messages[2].role", "missing"),
        ("messages[3]", "message_type"),
    ]
    assert ": 3 problems\n" in str(error)


def test_a_single_message_appended_is_named_message() -> None:
    error = raised(tl.History().append, 42)
    assert error.errors == (
        ErrorDetail(
            "message",
            "not a message (got an int); pass a Message (user_message(...), "
            "assistant_message(...) ...) or a mapping of its fields",
            "message_type",
        ),
    )
    error = raised(tl.History().append, NO_ROLE)
    assert [(d.path, d.type) for d in error.errors] == [("message.role", "missing")]


def test_a_history_given_for_a_sequence_gets_a_hint() -> None:
    error = raised(tl.check_messages, tl.History([GOOD]))
    assert "pass history.snapshot(), or call history.messages_for_model()" in str(error)


def test_reserved_blob_marks_are_refused_only_where_history_reads_mappings() -> None:
    marked = {**GOOD.model_dump(mode="json"), "metadata": {"threadline.blob": "sha256:00"}}
    error = raised(lambda m: tl.History().extend(m), [marked])
    assert [(d.path, d.type) for d in error.errors] == [
        ("messages[0].metadata['threadline.blob']", "reserved_key")
    ]
    # sanitize_untrusted drops every threadline.* key rather than refusing it
    assert tl.sanitize_untrusted([marked])[0].metadata == {}  # type: ignore[list-item]


# ---------------------------------------------------------------------------------------------
# Stores and the JSON writers: Message objects only


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    kind = request.param
    made: Store = (
        MemoryStore()
        if kind == "memory"
        else SQLiteStore(tmp_path / "s.db")
        if kind == "sqlite"
        else JsonlStore(tmp_path / "j")
    )
    yield made
    close = getattr(made, "close", None)
    if close is not None:
        close()


@pytest.mark.parametrize("method", ["append", "replace"])
def test_a_store_reports_the_same_shape(store: Store, method: str) -> None:
    write = getattr(store, method)
    name = f"{type(store).__name__}.{method}"
    assert_not_a_batch(raised(lambda m: write("c", m), 42), name, 42)
    assert_not_a_batch(raised(lambda m: write("c", m), GOOD), name, GOOD)
    assert_an_int_at_1(raised(lambda m: write("c", m), [GOOD, 42]), name)
    # a store takes Message objects only: a mapping is an item of the wrong type
    error = raised(lambda m: write("c", m), [GOOD, NO_ROLE])
    [detail] = error.errors
    assert (detail.path, detail.type) == ("messages[1]", "message_type")
    assert detail.message.startswith(f"not a message (got a dict); {name} takes Message objects")
    assert store.list_conversations() == []


@pytest.mark.parametrize("name", ["dump_json", "messages_to_json"])
def test_the_json_writers_report_the_same_shape(name: str) -> None:
    write: Call = getattr(serialization, name)
    assert_not_a_batch(raised(write, 42), name, 42)
    assert_an_int_at_1(raised(write, [GOOD, 42]), name)
    [detail] = raised(write, [GOOD, NO_ROLE]).errors
    assert (detail.path, detail.type) == ("messages[1]", "message_type")


def test_an_async_store_helper_reports_the_same_shape() -> None:
    from threadline.stores.base import as_message_list

    async def write(messages: Any) -> list[tl.Message]:
        return as_message_list(messages, "MyStore.append")

    with pytest.raises(tl.ValidationError) as caught:
        asyncio.run(write([GOOD, 42]))
    assert_an_int_at_1(caught.value, "MyStore.append")


# ---------------------------------------------------------------------------------------------
# The CLI: the same paths, on one line of its error


def test_the_cli_check_names_the_same_paths(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "conv.jsonl"
    second = tl.user_message("again", id="u2").model_dump_json()
    path.write_text(f"{GOOD.model_dump_json()}\n[{second}, 42]\n")
    assert cli.main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:2: invalid messages, nothing was changed: messages[1]: not a message " in err
    path.write_text(f"{GOOD.model_dump_json()}\n{json.dumps(NO_ROLE)}\n")
    assert cli.main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:2: invalid messages, nothing was changed: messages[0].role: " in err
