"""Unit tests for threadline.serialization: the envelope, versions, errors, the schema."""

from __future__ import annotations

import json
from datetime import datetime
from datetime import timezone

import jsonschema
import pydantic
import pytest

import threadline as tl
from threadline.serialization import FORMAT_VERSION
from threadline.serialization import SCHEMA_ID
from threadline.serialization import messages_from_json
from threadline.serialization import messages_to_json


@pytest.fixture
def conversation() -> list[tl.Message]:
    return [
        tl.system_message("Be brief.", id="m0"),
        tl.user_message("Describe this", tl.file_part(b"\xfb\xff", "image/png"), id="m1"),
        tl.assistant_message(
            tl.reasoning_part("hmm", signature="sig", provider="anthropic", model="m"),
            tl.tool_call_part("call_1", "zoom", {"factor": 2}),
            id="m2",
            created_at=datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc),
        ),
        tl.tool_message(tl.tool_result_part("call_1", "zoomed", name="zoom"), id="m3"),
        tl.internal_message(tl.hook_part("approval", {"ok": True}), id="m4"),
        tl.assistant_message("Done — ünïcode", id="m5", metadata={"usage": {"out": 5}}),
    ]


def test_dump_writes_the_version_1_envelope(conversation: list[tl.Message]) -> None:
    document = json.loads(tl.dump_json(conversation))
    assert list(document) == ["format", "version", "messages"]
    assert (document["format"], document["version"]) == ("threadline", 1)
    assert [m["id"] for m in document["messages"]] == ["m0", "m1", "m2", "m3", "m4", "m5"]


def test_round_trip_is_exact(conversation: list[tl.Message]) -> None:
    assert tl.load_json(tl.dump_json(conversation)) == conversation
    assert tl.load_json(tl.dump_json(conversation).decode()) == conversation
    assert tl.load_json(tl.dump_json(conversation, indent=2)) == conversation


def test_every_field_is_written_including_defaults(conversation: list[tl.Message]) -> None:
    document = json.loads(tl.dump_json(conversation))
    text_part = document["messages"][0]["parts"][0]
    assert text_part == {"type": "text", "text": "Be brief.", "metadata": {}}
    assert document["messages"][0]["created_at"] is None
    call = document["messages"][2]["parts"][1]
    assert call == {
        "type": "tool_call",
        "id": "call_1",
        "name": "zoom",
        "arguments": {"factor": 2},
        "raw_arguments": None,
        "metadata": {},
    }


def test_bytes_are_standard_base64(conversation: list[tl.Message]) -> None:
    document = json.loads(tl.dump_json(conversation))
    assert document["messages"][1]["parts"][1]["data"] == "+/8="


def test_replay_is_never_written() -> None:
    message = tl.Message(role="user", parts=(tl.TextPart(text="x"),), replay=True)
    data = tl.dump_json([message])
    assert b"replay" not in data
    assert tl.load_json(data)[0].replay is False


def test_bare_list_loads_as_version_0(conversation: list[tl.Message]) -> None:
    bare = json.dumps(json.loads(tl.dump_json(conversation))["messages"])
    assert tl.load_json(bare) == conversation
    assert tl.load_json("  \n[]") == []


def test_empty_envelope() -> None:
    assert tl.load_json(tl.dump_json([])) == []


def test_dump_accepts_any_iterable(conversation: list[tl.Message]) -> None:
    assert tl.dump_json(iter(conversation)) == tl.dump_json(conversation)
    assert tl.dump_json(tuple(conversation)) == tl.dump_json(conversation)


def test_dump_rejects_non_messages() -> None:
    with pytest.raises(tl.ValidationError, match=r"messages\[1\]: not a message \(got a dict\)"):
        tl.dump_json([tl.user_message("x"), {"role": "user"}])  # type: ignore[list-item]


# ---------------------------------------------------------------------------------------------
# The bare array a store keeps: messages_to_json / messages_from_json


def test_messages_to_json_is_the_bare_array_of_each_message_json(
    conversation: list[tl.Message],
) -> None:
    data = messages_to_json(conversation)
    rows = [message.model_dump_json().encode() for message in conversation]
    assert data == b"[" + b",".join(rows) + b"]"  # so joined rows read back in one call
    assert messages_to_json(conversation[:1]) == b"[" + rows[0] + b"]"
    assert messages_to_json(iter(conversation)) == data
    assert messages_to_json([]) == b"[]"


def test_messages_round_trip_through_bytes_and_str(conversation: list[tl.Message]) -> None:
    data = messages_to_json(conversation)
    assert messages_from_json(data) == conversation
    assert messages_from_json(data.decode()) == conversation
    assert messages_from_json(bytearray(data)) == conversation
    assert tl.load_json(data) == conversation  # version 0 of the format


def test_messages_to_json_rejects_non_messages() -> None:
    with pytest.raises(tl.ValidationError, match=r"messages\[1\]: not a message \(got a dict\)"):
        messages_to_json([tl.user_message("x"), {"role": "user"}])  # type: ignore[list-item]


@pytest.mark.parametrize("data", [b"[", b'{"format": "threadline"}', b'[{"role": "user"}]'])
def test_messages_from_json_raises_pydantic_validation_error(data: bytes) -> None:
    # A store reports it as StoreError, with this error as the cause.
    with pytest.raises(pydantic.ValidationError):
        messages_from_json(data)


@pytest.mark.parametrize("data", [b"", b"{", b"[1,", "nope", b"\xff\xfe"])
def test_not_json_raises_validation_error(data: bytes | str) -> None:
    with pytest.raises(tl.ValidationError, match="not valid JSON") as info:
        tl.load_json(data)
    assert not isinstance(info.value, tl.UnsupportedVersionError)


def test_truncated_envelope(conversation: list[tl.Message]) -> None:
    data = tl.dump_json(conversation)
    for cut in (1, len(data) // 2, len(data) - 1):
        with pytest.raises(tl.ValidationError):
            tl.load_json(data[:cut])


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b'"text"', "got a string"),
        (b"3", "got int"),
        (b'{"messages": []}', "not a threadline envelope"),
        (b'{"format": "other", "version": 1, "messages": []}', "got 'other'"),
    ],
)
def test_not_an_envelope(data: bytes, fragment: str) -> None:
    with pytest.raises(tl.ValidationError, match=fragment):
        tl.load_json(data)


def test_newer_version_is_refused() -> None:
    data = b'{"format": "threadline", "version": 2, "messages": [{"whatever": 1}]}'
    with pytest.raises(tl.UnsupportedVersionError, match="upgrade threadline") as info:
        tl.load_json(data)
    assert info.value.version == 2
    assert isinstance(info.value, tl.ValidationError)


@pytest.mark.parametrize("version", ['"1"', "null", "true", "-1", "1.5", "0"])
def test_unknown_version_is_refused(version: str) -> None:
    data = f'{{"format": "threadline", "version": {version}, "messages": []}}'
    with pytest.raises(tl.UnsupportedVersionError, match="not a threadline envelope version"):
        tl.load_json(data)


def test_extra_envelope_keys_are_rejected() -> None:
    data = b'{"format": "threadline", "version": 1, "messages": [], "extra": 1}'
    with pytest.raises(tl.ValidationError, match="extra"):
        tl.load_json(data)


def message_json(**part: object) -> bytes:
    envelope = {
        "format": "threadline",
        "version": 1,
        "messages": [
            {"role": "user", "parts": [{"type": "text", "text": "ok"}]},
            {"role": "assistant", "parts": [{"type": "text", "text": "ok"}, part]},
        ],
    }
    return json.dumps(envelope).encode()


@pytest.mark.parametrize(
    ("part", "path"),
    [
        (
            {"type": "tool_call", "id": "c", "name": "f", "arguments": []},
            "messages[1].parts[1].arguments",
        ),
        ({"type": "tool_call", "id": "c", "arguments": {}}, "messages[1].parts[1].name"),
        ({"type": "file", "media_type": "image/png", "data": "%%"}, "messages[1].parts[1].data"),
        ({"type": "sticker"}, "messages[1].parts[1]"),
        ({"type": "text", "text": 3}, "messages[1].parts[1].text"),
        ({"type": "text", "text": "x", "colour": "red"}, "messages[1].parts[1].colour"),
        ({"type": "tool_result", "call_id": "c", "content": "x"}, "messages[1].parts[1]"),
    ],
)
def test_errors_name_the_json_path(part: dict[str, object], path: str) -> None:
    with pytest.raises(tl.ValidationError) as info:
        tl.load_json(message_json(**part))
    assert path in [detail.path for detail in info.value.errors]
    assert path in str(info.value)


def test_bare_list_errors_name_the_path() -> None:
    with pytest.raises(tl.ValidationError) as info:
        tl.load_json(b'[{"role": "user", "parts": []}]')
    assert [detail.path for detail in info.value.errors] == ["messages[0].parts"]


def test_load_json_rejects_other_types() -> None:
    with pytest.raises(tl.ValidationError, match="bytes or str"):
        tl.load_json([1, 2])  # type: ignore[arg-type]


def test_json_schema_validates_what_dump_writes(conversation: list[tl.Message]) -> None:
    schema = tl.json_schema()
    assert schema["$id"] == SCHEMA_ID
    assert str(FORMAT_VERSION) in SCHEMA_ID
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(json.loads(tl.dump_json(conversation)), schema)


def test_json_schema_rejects_what_load_json_rejects() -> None:
    schema = tl.json_schema()
    bad = json.loads(message_json(type="sticker"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    assert "replay" not in schema["$defs"]["Message"]["properties"]


def test_json_schema_requires_the_type_tags() -> None:
    schema = tl.json_schema()
    for name, definition in schema["$defs"].items():
        if name.endswith("Part"):
            assert "type" in definition["required"], name
