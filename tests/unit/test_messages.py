"""Unit tests for threadline.messages: parts, roles, constructors, accessors, metadata."""

from __future__ import annotations

import copy
import itertools
import pickle
from datetime import datetime
from datetime import timezone

import pydantic
import pytest

import threadline as tl
from threadline import FilePart
from threadline import HookPart
from threadline import Message
from threadline import ProviderToolCallPart
from threadline import ProviderToolResultPart
from threadline import ReasoningPart
from threadline import TextPart
from threadline import ToolCallPart
from threadline import ToolResultPart
from threadline._json import EMPTY


def paths(error: tl.ValidationError) -> list[str]:
    return [detail.path for detail in error.errors]


# -- parts -------------------------------------------------------------------------------------


def test_every_part_type_has_its_tag() -> None:
    parts: list[tl.Part] = [
        TextPart(text="t"),
        ReasoningPart(text="r"),
        ToolCallPart(id="c", name="f", arguments={}),
        ToolResultPart(call_id="c", content="ok"),
        FilePart(media_type="image/png", url="https://x/y.png"),
        HookPart(name="h", state={}),
        ProviderToolCallPart(id="s", name="web_search", input={"q": 1}, provider="anthropic"),
        ProviderToolResultPart(call_id="s", content=[1], provider="anthropic"),
    ]
    assert [part.type for part in parts] == [
        "text",
        "reasoning",
        "tool_call",
        "tool_result",
        "file",
        "hook",
        "provider_tool_call",
        "provider_tool_result",
    ]


def test_parts_are_frozen_and_slotted() -> None:
    part = TextPart(text="hi")
    with pytest.raises(dataclasses_frozen_error()):
        part.text = "other"  # type: ignore[misc]
    assert not hasattr(part, "__dict__")


def dataclasses_frozen_error() -> type[Exception]:
    import dataclasses

    return dataclasses.FrozenInstanceError


def test_parts_share_one_empty_metadata_mapping() -> None:
    a, b = TextPart(text="a"), ToolCallPart(id="c", name="f", arguments={})
    assert a.metadata is EMPTY
    assert b.metadata is EMPTY
    assert b.arguments is EMPTY
    assert tl.user_message("x").metadata is EMPTY


def test_metadata_is_read_only() -> None:
    part = TextPart(text="a", metadata={"k": 1})
    with pytest.raises(TypeError, match="read-only"):
        part.metadata["k"] = 2  # type: ignore[index]
    with pytest.raises(TypeError, match="with_metadata"):
        part.metadata.update(k=3)  # type: ignore[attr-defined]
    assert part.metadata == {"k": 1}


def test_metadata_is_copied_from_the_caller() -> None:
    source = {"k": [1, 2]}
    part = TextPart(text="a", metadata=source)
    source["k2"] = [3]
    assert part.metadata == {"k": [1, 2]}


def test_metadata_normalizes_tuples_to_lists() -> None:
    part = TextPart(text="a", metadata={"k": (1, (2, 3))})
    assert part.metadata == {"k": [1, [2, 3]]}


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({1, 2}, "set"),
        (float("nan"), "NaN"),
        (float("inf"), "NaN or infinity"),
        (object(), "object"),
        (b"bytes", "bytes"),
    ],
)
def test_non_json_metadata_is_rejected_naming_the_key(value: object, fragment: str) -> None:
    with pytest.raises(tl.ValidationError) as info:
        tl.user_message("x", metadata={"outer": {"inner": value}})
    assert paths(info.value) == ["metadata"]
    assert "['outer']['inner']" in str(info.value)
    assert fragment in str(info.value)


def test_non_string_metadata_keys_are_rejected() -> None:
    with pytest.raises(tl.ValidationError, match="not a string"):
        tl.user_message("x", metadata={"a": {1: "x"}})


def test_metadata_pickles_and_copies() -> None:
    part = TextPart(text="a", metadata={"k": {"n": [1]}})
    assert pickle.loads(pickle.dumps(part)) == part
    assert copy.copy(part.metadata) is part.metadata
    deep = copy.deepcopy(part.metadata)
    assert deep == part.metadata
    assert deep["k"] is not part.metadata["k"]


def test_with_metadata_merges_and_keeps_the_original() -> None:
    part = TextPart(text="a", metadata={"a": 1})
    changed = part.with_metadata({"b": 2}, c=3)
    assert changed.metadata == {"a": 1, "b": 2, "c": 3}
    assert part.metadata == {"a": 1}
    message = tl.user_message("x", metadata={"a": 1})
    assert message.with_metadata(a=2).metadata == {"a": 2}
    assert message.metadata == {"a": 1}


def test_with_metadata_validates() -> None:
    with pytest.raises(tl.ValidationError, match="set"):
        TextPart(text="a").with_metadata(bad={1})
    with pytest.raises(tl.ValidationError, match="set"):
        tl.user_message("x").with_metadata(bad={1})


def test_file_part_needs_exactly_one_source() -> None:
    with pytest.raises(pydantic.ValidationError, match="exactly one of data"):
        FilePart(media_type="image/png")
    with pytest.raises(pydantic.ValidationError, match="got both"):
        FilePart(media_type="image/png", data=b"x", url="https://x")


def test_file_part_helper_picks_data_or_url() -> None:
    assert tl.file_part(b"\x89PNG", "image/png").data == b"\x89PNG"
    assert tl.file_part(bytearray(b"ab"), "image/png").data == b"ab"  # type: ignore[arg-type]
    by_url = tl.file_part("https://example.com/a.pdf", "application/pdf", filename="a.pdf")
    assert (by_url.url, by_url.data, by_url.filename) == (
        "https://example.com/a.pdf",
        None,
        "a.pdf",
    )


def test_file_part_rejects_a_bad_media_type() -> None:
    with pytest.raises(tl.ValidationError, match="'png' is not a media type"):
        tl.file_part(b"x", "png")


def test_file_part_reads_base64_text_as_bytes() -> None:
    assert FilePart(media_type="image/png", data="+/8=").data == b"\xfb\xff"  # type: ignore[arg-type]
    assert FilePart(media_type="image/png", data="-_8=").data == b"\xfb\xff"  # type: ignore[arg-type]
    with pytest.raises(pydantic.ValidationError, match="not valid base64"):
        FilePart(media_type="image/png", data="!!")  # type: ignore[arg-type]


def test_file_part_repr_does_not_dump_bytes() -> None:
    assert "<3 bytes>" in repr(tl.file_part(b"abc", "image/png"))


def test_raw_arguments_only_with_empty_arguments() -> None:
    with pytest.raises(pydantic.ValidationError, match="raw_arguments may be set only"):
        ToolCallPart(id="c", name="f", arguments={"a": 1}, raw_arguments="{")
    part = ToolCallPart(id="c", name="f", arguments={}, raw_arguments="{")
    assert part.raw_arguments == "{"


@pytest.mark.parametrize(
    ("text", "arguments", "raw"),
    [
        ('{"a": 1}', {"a": 1}, None),
        ("[]", {}, "[]"),
        ("3", {}, "3"),
        ('{"a": ', {}, '{"a": '),
        ("", {}, ""),
    ],
)
def test_tool_call_part_parses_model_text(
    text: str, arguments: dict[str, object], raw: str | None
) -> None:
    part = tl.tool_call_part("c", "f", text)
    assert part.arguments == arguments
    assert part.raw_arguments == raw


def test_tool_call_arguments_must_be_an_object() -> None:
    with pytest.raises(tl.ValidationError) as info:
        tl.tool_call_part("c", "f", [1, 2])  # type: ignore[arg-type]
    assert paths(info.value) == ["arguments"]


def test_tool_result_content_is_text_or_text_and_file_parts() -> None:
    image = tl.file_part(b"png", "image/png")
    result = tl.tool_result_part("c", ["see image", image], name="shot", is_error=True)
    assert result.content == (TextPart(text="see image"), image)
    assert (result.name, result.is_error, result.text) == ("shot", True, "see image")
    with pytest.raises(tl.ValidationError) as info:
        tl.tool_result_part("c", [ToolCallPart(id="x", name="f", arguments={})])  # type: ignore[arg-type]
    assert paths(info.value)[0].startswith("content")


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(pydantic.ValidationError, match="Unexpected keyword"):
        TextPart(text="a", colour="red")  # type: ignore[call-arg]
    with pytest.raises(tl.ValidationError, match="unknown field"):
        tl.reasoning_part("x", colour="red")


def test_text_must_be_a_string() -> None:
    with pytest.raises(tl.ValidationError) as info:
        tl.text_part(3)  # type: ignore[arg-type]
    assert paths(info.value) == ["text"]


def test_hook_state_is_a_json_object() -> None:
    hook = tl.hook_part("approval", {"pending": ["call_1"]})
    assert hook.state == {"pending": ["call_1"]}
    with pytest.raises(tl.ValidationError):
        tl.hook_part("approval", {"x": {1, 2}})


def test_provider_tool_parts_hold_any_json() -> None:
    call = ProviderToolCallPart(id="s", name="web_search", input="q", provider="openai")
    result = ProviderToolResultPart(call_id="s", content={"hits": [1, 2]}, provider="openai")
    assert (call.input, result.content) == ("q", {"hits": [1, 2]})
    with pytest.raises(pydantic.ValidationError, match="set"):
        ProviderToolResultPart(call_id="s", content={1}, provider="openai")


# -- messages ----------------------------------------------------------------------------------


def test_message_ids_are_generated() -> None:
    a, b = tl.user_message("x"), tl.user_message("x")
    assert a.id != b.id
    for message in (a, b):
        assert message.id.startswith("msg_")
        assert len(message.id) == 4 + 32
        int(message.id[4:], 16)


def test_use_id_factory_makes_ids_deterministic_and_is_scoped() -> None:
    counter = itertools.count()
    with tl.use_id_factory(lambda: f"msg_{next(counter)}"):
        ids = [tl.user_message("x").id, tl.assistant_message("y").id]
        with tl.use_id_factory(lambda: "inner"):
            assert tl.user_message("z").id == "inner"
        assert tl.user_message("w").id == "msg_2"
    assert ids == ["msg_0", "msg_1"]
    fresh = tl.user_message("x").id
    assert fresh.startswith("msg_")
    assert len(fresh) == 36


def test_explicit_id_and_created_at() -> None:
    when = datetime(2026, 1, 1, tzinfo=timezone.utc)
    message = tl.user_message("x", id="m1", created_at=when)
    assert (message.id, message.created_at) == ("m1", when)
    assert tl.user_message("x").created_at is None


def test_messages_are_frozen() -> None:
    message = tl.user_message("x")
    with pytest.raises(pydantic.ValidationError):
        message.role = "assistant"  # type: ignore[misc]


ROLE_CASES = [
    ("system", TextPart(text="t"), True),
    ("system", FilePart(media_type="image/png", data=b"x"), False),
    ("user", TextPart(text="t"), True),
    ("user", FilePart(media_type="image/png", data=b"x"), True),
    ("user", ToolCallPart(id="c", name="f", arguments={}), False),
    ("user", ToolResultPart(call_id="c", content="x"), False),
    ("user", ReasoningPart(text="r"), False),
    ("user", HookPart(name="h", state={}), False),
    ("assistant", TextPart(text="t"), True),
    ("assistant", ReasoningPart(text="r"), True),
    ("assistant", ToolCallPart(id="c", name="f", arguments={}), True),
    ("assistant", FilePart(media_type="image/png", data=b"x"), True),
    ("assistant", HookPart(name="h", state={}), True),
    ("assistant", ProviderToolCallPart(id="s", name="n", provider="openai"), True),
    ("assistant", ProviderToolResultPart(call_id="s", provider="openai"), True),
    ("assistant", ToolResultPart(call_id="c", content="x"), False),
    ("tool", ToolResultPart(call_id="c", content="x"), True),
    ("tool", TextPart(text="t"), False),
    ("internal", HookPart(name="h", state={}), True),
    ("internal", TextPart(text="t"), True),
    ("internal", ToolCallPart(id="c", name="f", arguments={}), False),
]


@pytest.mark.parametrize(("role", "part", "allowed"), ROLE_CASES)
def test_which_parts_each_role_may_hold(role: str, part: object, allowed: bool) -> None:
    if allowed:
        assert Message(role=role, parts=(part,)).parts == (part,)  # type: ignore[arg-type]
        return
    article = "an" if role in ("assistant", "internal") else "a"
    with pytest.raises(
        pydantic.ValidationError, match=f"which {article} {role} message cannot hold"
    ):
        Message(role=role, parts=(TextPart(text="ok") if role != "tool" else part, part))  # type: ignore[arg-type]


def test_role_error_names_the_part_index_and_the_fix() -> None:
    with pytest.raises(tl.ValidationError) as info:
        tl.user_message("hello", tl.tool_call_part("c", "f", {}))  # type: ignore[arg-type]
    assert paths(info.value) == ["parts[1]"]
    message = str(info.value)
    assert "tool_call part, which a user message cannot hold" in message
    assert "put tool calls on an assistant message" in message


def test_a_message_needs_a_part() -> None:
    with pytest.raises(tl.ValidationError) as info:
        tl.user_message()
    assert paths(info.value) == ["parts"]
    assert "at least one part" in str(info.value)


def test_bad_role() -> None:
    with pytest.raises(pydantic.ValidationError, match="role"):
        Message(role="robot", parts=(TextPart(text="x"),))  # type: ignore[arg-type]


def test_unknown_part_type_is_named() -> None:
    with pytest.raises(pydantic.ValidationError, match="'sticker'"):
        Message.model_validate({"role": "user", "parts": [{"type": "sticker"}]})


def test_pydantic_and_threadline_errors_are_value_errors() -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - the point is the builtin
        Message(role="user", parts=())
    with pytest.raises(ValueError):  # noqa: PT011
        tl.user_message()


def test_constructors() -> None:
    assert tl.system_message("be brief").parts == (TextPart(text="be brief"),)
    assert tl.user_message("a", "b").text == "ab"
    hook = tl.hook_part("approval", {"id": 1})
    internal = tl.internal_message(hook, "note")
    assert internal.parts == (hook, TextPart(text="note"))
    results = (tl.tool_result_part("c1", "1"), tl.tool_result_part("c2", "2"))
    assert tl.tool_message(*results).tool_results == results
    with pytest.raises(tl.ValidationError):
        tl.tool_message()
    with pytest.raises(tl.ValidationError, match="tool_result parts"):
        tl.tool_message("text")  # type: ignore[arg-type]


def test_constructors_take_id_and_metadata() -> None:
    for message in (
        tl.user_message("x", id="i", metadata={"k": 1}),
        tl.assistant_message("x", id="i", metadata={"k": 1}),
        tl.system_message("x", id="i", metadata={"k": 1}),
        tl.internal_message("x", id="i", metadata={"k": 1}),
        tl.tool_message(tl.tool_result_part("c", "x"), id="i", metadata={"k": 1}),
    ):
        assert (message.id, message.metadata) == ("i", {"k": 1})


def test_accessors() -> None:
    call_a = tl.tool_call_part("a", "f", {"x": 1})
    call_b = tl.tool_call_part("b", "g", {})
    message = tl.assistant_message(
        tl.reasoning_part("thinking"), "Hello, ", call_a, "world", call_b
    )
    assert message.text == "Hello, world"
    assert message.tool_calls == (call_a, call_b)
    assert message.tool_results == ()
    assert tl.tool_message(tl.tool_result_part("a", "1")).tool_calls == ()


def test_equality_is_field_equality_and_same_content_ignores_ids() -> None:
    a = tl.user_message("x", id="1")
    b = tl.user_message("x", id="2", metadata={"k": 1})
    assert a != b
    assert tl.same_content(a, b)
    assert a == tl.user_message("x", id="1")
    assert not tl.same_content(a, tl.assistant_message("x"))
    assert not tl.same_content(a, tl.user_message("y"))


def test_replay_is_runtime_only() -> None:
    message = Message(role="user", parts=(TextPart(text="x"),), replay=True)
    assert message.replay is True
    for mode in ("python", "json"):
        assert "replay" not in message.model_dump(mode=mode)
    assert "replay" not in message.model_dump_json()
    assert "replay" not in tl.dump_json([message]).decode()


def test_model_validate_round_trips_model_dump() -> None:
    message = tl.assistant_message(
        tl.reasoning_part("r", signature="sig", provider="anthropic", summary=("a", "b")),
        tl.tool_call_part("c", "f", {"q": "é"}),
        tl.file_part(b"\xfb\xff", "image/png"),
        metadata={"usage": {"input": 3}},
        created_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
    )
    assert Message.model_validate(message.model_dump(mode="json")) == message
    assert Message.model_validate(message.model_dump()) == message
    assert message.model_dump(mode="json")["parts"][2]["data"] == "+/8="


def test_messages_pickle() -> None:
    message = tl.assistant_message(tl.tool_call_part("c", "f", {"a": [1]}), metadata={"k": "v"})
    clone = pickle.loads(pickle.dumps(message))
    assert clone == message
    assert isinstance(clone.metadata, type(message.metadata))


def test_repr_is_short() -> None:
    text = repr(tl.user_message("hi", id="m"))
    assert "replay" not in text
    assert "created_at" not in text
    assert "id='m'" in text


def test_part_tables_are_derived_from_the_part_union() -> None:
    from typing import get_args

    from threadline.messages import PART_BY_TAG
    from threadline.messages import PART_TYPES
    from threadline.messages import Part

    assert get_args(get_args(Part)[0]) == PART_TYPES
    assert list(PART_BY_TAG) == [
        "text",
        "reasoning",
        "tool_call",
        "tool_result",
        "file",
        "hook",
        "provider_tool_call",
        "provider_tool_result",
    ]
    assert tuple(PART_BY_TAG.values()) == PART_TYPES


def every_part() -> list[object]:
    return [
        tl.text_part("a"),
        tl.reasoning_part("r", signature="s"),
        tl.tool_call_part("c1", "f", {"x": 1}),
        tl.tool_result_part("c1", "ok"),
        tl.file_part(b"\x89PNG", "image/png"),
        tl.hook_part("ui", {"step": 1}),
        tl.ProviderToolCallPart(id="p1", name="web_search", provider="anthropic"),
        tl.ProviderToolResultPart(call_id="p1", provider="anthropic"),
    ]


@pytest.mark.parametrize("part", every_part(), ids=lambda part: type(part).__name__)
def test_every_part_type_has_with_metadata_stays_slotted_and_pickles(part: object) -> None:
    from threadline.messages import PART_TYPES

    assert type(part) in PART_TYPES
    changed = part.with_metadata({"a": 1}, b=[2])  # type: ignore[attr-defined]
    assert type(changed) is type(part)
    assert changed.metadata == {"a": 1, "b": [2]}  # type: ignore[attr-defined]
    assert part.metadata == {}  # type: ignore[attr-defined]
    assert not hasattr(changed, "__dict__")
    assert pickle.loads(pickle.dumps(changed)) == changed
    with pytest.raises(tl.ValidationError, match="metadata"):
        part.with_metadata(bad={1})  # type: ignore[attr-defined]


def test_a_part_subclass_is_refused_naming_the_class_it_stands_for() -> None:
    # Codecs and repair match the part classes exactly; a subclass would be sent as nothing.
    @pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Shouting(TextPart):
        pass

    parts = (tl.text_part("ok"), Shouting(text="HI"))
    with pytest.raises(pydantic.ValidationError) as raw:
        Message(role="user", parts=parts)
    (error,) = raw.value.errors()
    assert error["type"] == "part_subclass"
    assert "a Shouting, a subclass of TextPart" in error["msg"]
    assert "build the TextPart it stands for" in error["msg"]
    with pytest.raises(tl.ValidationError) as caught:
        tl.History().append({"role": "user", "parts": parts})
    (detail,) = caught.value.errors
    assert detail.type == "part_subclass"
    assert detail.path.endswith("parts[1]")
