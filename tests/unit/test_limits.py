"""Unit tests for threadline.limits: the Limits type, the checks, and the entry points that
take ``limits=`` (load_json, History.restore, every codec's decode and decode_response)."""

from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import conversations
from tests.strategies import json_values
from threadline import codecs
from threadline import serialization
from threadline._json import EMPTY
from threadline.codecs import get_codec
from threadline.limits import DEPTH_CEILING
from threadline.limits import DEPTH_FLOOR
from threadline.limits import THREADLINE_LAYOUT
from threadline.limits import Layout
from threadline.limits import LimitExceededError
from threadline.limits import Limits
from threadline.limits import enforce_counts
from threadline.limits import enforce_limits
from threadline.limits import enforce_message_limits
from threadline.limits import resolve_limits

MIB = 1024 * 1024
CORPUS = Path(__file__).resolve().parents[2] / "fuzz" / "corpus" / "codecs"


def nested(depth: int, leaf: Any = None) -> Any:
    """``depth`` arrays inside each other around ``leaf``, built without recursion."""
    value = [] if leaf is None else [leaf]
    for _ in range(depth - 1):
        value = [value]
    return value


def envelope(messages: list[dict[str, Any]]) -> str:
    document = {"format": "threadline", "version": 1, "messages": messages}
    return json.dumps(document, ensure_ascii=False)


def user(text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "text": text}], **extra}


# ---------------------------------------------------------------------------------------------
# The Limits type


def test_defaults_are_generous_and_bounded() -> None:
    limits = Limits()
    assert limits == Limits(
        max_bytes=64 * MIB,
        max_messages=1_000_000,
        max_parts=4_000_000,
        max_depth=64,
        max_string=32 * MIB,
    )
    assert resolve_limits(None) == limits


def test_untrusted_is_tighter_than_the_defaults_in_every_limit() -> None:
    strict, default = Limits.untrusted(), Limits()
    for field in dataclasses.fields(Limits):
        assert getattr(strict, field.name) < getattr(default, field.name), field.name


def test_none_turns_off_everything_but_depth() -> None:
    limits = Limits.none()
    assert (limits.max_bytes, limits.max_messages, limits.max_parts, limits.max_string) == (
        None,
        None,
        None,
        None,
    )
    assert limits.max_depth == DEPTH_CEILING


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_bytes": 0},
        {"max_messages": -1},
        {"max_parts": True},
        {"max_string": 1.5},
        {"max_depth": None},
        {"max_depth": DEPTH_CEILING + 1},
        {"max_depth": DEPTH_FLOOR - 1},
    ],
)
def test_invalid_limits_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="max_"):
        Limits(**kwargs)


def test_limits_are_frozen_and_keyword_only() -> None:
    limits = Limits()
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.max_bytes = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        Limits(1)  # type: ignore[call-arg]
    assert dataclasses.replace(limits, max_bytes=5).max_bytes == 5


def test_something_else_given_as_limits_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="Limits"):
        tl.load_json(b"[]", limits={"max_bytes": 5})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# load_json


def test_load_json_takes_limits_and_still_loads_what_fits() -> None:
    data = tl.dump_json([tl.user_message("hi", id="a"), tl.assistant_message("yo", id="b")])
    for limits in (None, Limits(), Limits.untrusted(), Limits.none()):
        assert [m.id for m in tl.load_json(data, limits=limits)] == ["a", "b"]


@pytest.mark.parametrize("as_text", [False, True])
def test_max_bytes_is_checked_before_parsing(as_text: bool) -> None:
    text = envelope([user("é" * 100)])
    data: str | bytes = text if as_text else text.encode()
    size = len(data.encode() if isinstance(data, str) else data)
    assert tl.load_json(data, limits=Limits(max_bytes=size))
    with pytest.raises(LimitExceededError) as info:
        tl.load_json(data, limits=Limits(max_bytes=size - 1))
    assert info.value.limit == "max_bytes"
    assert info.value.maximum == size - 1
    assert info.value.actual == size
    assert f"limit max_bytes={size - 1:,} exceeded" in str(info.value)


def test_max_bytes_counts_utf8_bytes_of_a_str() -> None:
    text = envelope([user("€" * 40)])  # 3 bytes each in UTF-8
    with pytest.raises(LimitExceededError, match="max_bytes"):
        tl.load_json(text, limits=Limits(max_bytes=len(text) + 10))


def test_a_limit_error_is_a_validation_error_naming_the_limit_and_path() -> None:
    data = envelope([user(), user(), user()])
    with pytest.raises(tl.ValidationError) as info:
        tl.load_json(data, limits=Limits(max_messages=2))
    error = info.value
    assert isinstance(error, LimitExceededError)
    assert isinstance(error, ValueError)
    assert (error.limit, error.maximum, error.actual, error.path) == (
        "max_messages",
        2,
        3,
        "messages[2]",
    )
    assert str(error).startswith("load_json: limit max_messages=2 exceeded at messages[2]")
    assert error.errors[0].path == "messages[2]"
    assert error.errors[0].type == "max_messages"


def test_max_parts_counts_parts_of_all_messages() -> None:
    two_parts = {"role": "user", "parts": [{"type": "text", "text": "a"}] * 2}
    data = envelope([two_parts, two_parts, two_parts])
    assert len(tl.load_json(data, limits=Limits(max_parts=6))) == 3
    with pytest.raises(LimitExceededError) as info:
        tl.load_json(data, limits=Limits(max_parts=5))
    assert (info.value.limit, info.value.actual, info.value.path) == (
        "max_parts",
        6,
        "messages[2].parts[1]",
    )


@pytest.mark.parametrize("bare", [False, True])
def test_max_depth_counts_as_in_the_envelope_even_for_a_bare_list(bare: bool) -> None:
    # metadata is at depth 4 in an envelope, so a value nesting 60 arrays reaches 64.
    def data(depth: int) -> str:
        messages = [user(metadata={"deep": nested(depth)})]
        return json.dumps(messages) if bare else envelope(messages)

    assert tl.load_json(data(60))
    with pytest.raises(LimitExceededError) as info:
        tl.load_json(data(61))
    assert info.value.limit == "max_depth"
    assert info.value.actual == 65
    assert info.value.path == "messages[0].metadata.deep" + "[0]" * 60


def test_long_text_is_checked_for_long_strings_with_the_same_depth_rule() -> None:
    # Text longer than max_string also has its strings checked (after validation).
    limits = Limits(max_string=50)
    long_enough = "x" * 30
    within = envelope([user(long_enough, metadata={"deep": nested(60)})])
    assert len(within) > 50
    assert tl.load_json(within, limits=limits)
    beyond = envelope([user(long_enough, metadata={"deep": nested(61)})])
    with pytest.raises(LimitExceededError, match="max_depth") as info:
        tl.load_json(beyond, limits=limits)
    assert info.value.path == "messages[0].metadata.deep" + "[0]" * 60


@pytest.fixture(params=["bounded validator", "after validation"])
def string_checks(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways load_json checks the string fields of messages and parts: pydantic-core's
    bound inside a validator built for ``max_string``, or the pass after validation (taken
    when that validator cannot be built)."""
    if request.param == "after validation":
        monkeypatch.setattr(serialization, "_bounded_validator", lambda *args: None)
    return str(request.param)


def test_a_bounded_validator_is_built_and_reused() -> None:
    assert serialization._bounds_enforced()
    first = serialization._bounded_validator(100, False)
    assert first is not None
    assert serialization._bounded_validator(100, False) is first
    assert serialization._bounded_validator(100, True) is not first


def test_bounded_and_unbounded_loads_agree() -> None:
    messages = [
        tl.system_message("s"),
        tl.user_message("hi", tl.file_part(b"\x89PNG" * 10, "image/png")),
        tl.assistant_message(
            tl.reasoning_part("r", signature="sig"), tl.tool_call_part("c", "f", {"a": [1]})
        ),
        tl.tool_message(tl.tool_result_part("c", "ok")),
    ]
    data = tl.dump_json(messages)
    bounded = tl.load_json(data, limits=Limits(max_string=len(data) - 1))
    unbounded = tl.load_json(data, limits=Limits.none())
    assert bounded == unbounded == messages
    assert repr(bounded) == repr(unbounded)
    # Text that leaves out fields: the defaults the validator fills in come through as they
    # are (the shared empty metadata, a read-only FrozenJsonMap), not as copies.
    sparse = envelope(
        [user("x" * 50), {"role": "assistant", "parts": [{"type": "text", "text": "y"}]}]
    )
    for loaded in (
        tl.load_json(sparse, limits=Limits(max_string=len(sparse) - 1)),
        tl.load_json(sparse, limits=Limits.none()),
    ):
        for message in loaded:
            assert message.metadata is EMPTY
            assert all(part.metadata is EMPTY for part in message.parts)


@pytest.mark.usefixtures("string_checks")
def test_max_string_names_the_path_of_the_long_string() -> None:
    data = envelope([user(), user("y" * 101)])
    assert tl.load_json(data, limits=Limits(max_string=101))
    with pytest.raises(LimitExceededError) as info:
        tl.load_json(data, limits=Limits(max_string=100))
    assert (info.value.limit, info.value.actual, info.value.path) == (
        "max_string",
        101,
        "messages[1].parts[0].text",
    )


@pytest.mark.usefixtures("string_checks")
@pytest.mark.parametrize(
    ("part", "path"),
    [
        ({"type": "reasoning", "text": "r", "signature": "s" * 101}, "parts[0].signature"),
        (
            {"type": "tool_call", "id": "c", "name": "f", "arguments": {"a": "y" * 101}},
            "parts[0].arguments.a",
        ),
        (
            {"type": "file", "media_type": "image/png", "data": "AAAA" * 26},
            "parts[0].data",
        ),
    ],
)
def test_max_string_reaches_every_string_field(part: dict[str, Any], path: str) -> None:
    message = {"role": "assistant", "parts": [part]}
    data = envelope([message])
    assert tl.load_json(data, limits=Limits(max_string=104))
    with pytest.raises(LimitExceededError) as info:
        tl.load_json(data, limits=Limits(max_string=100))
    assert info.value.path == f"messages[0].{path}"


@pytest.mark.usefixtures("string_checks")
def test_max_string_reaches_text_inside_tool_results() -> None:
    call = {"type": "tool_call", "id": "c", "name": "f", "arguments": {}}
    result = {
        "type": "tool_result",
        "call_id": "c",
        "content": [{"type": "text", "text": "z" * 101}],
    }
    data = envelope([{"role": "assistant", "parts": [call]}, {"role": "tool", "parts": [result]}])
    with pytest.raises(LimitExceededError) as info:
        tl.load_json(data, limits=Limits(max_string=100))
    assert info.value.path == "messages[1].parts[0].content[0].text"
    with pytest.raises(LimitExceededError, match="max_string"):
        tl.History().restore(tl.load_json(data), limits=Limits(max_string=100))


@pytest.mark.usefixtures("string_checks")
def test_max_string_covers_ids_of_messages() -> None:
    data = envelope([user(id="i" * 101)])
    with pytest.raises(LimitExceededError) as info:
        tl.load_json(data, limits=Limits(max_string=100))
    assert info.value.path == "messages[0].id"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_in_json_text_are_refused(constant: str) -> None:
    # pydantic-core's parser reads them, but JSON has neither and dump_json could not write
    # them back.
    call = '{"type":"tool_call","id":"c","name":"f","arguments":{"a":[1,CONSTANT]}}'
    data = '[{"role":"assistant","parts":[CALL]}]'.replace("CALL", call)
    data = data.replace("CONSTANT", constant)
    with pytest.raises(tl.ValidationError, match="not a JSON value") as info:
        tl.load_json(data)
    assert info.value.errors[0].path == "messages[0].parts[0].arguments.a[1]"
    provider = '{"type":"provider_tool_call","id":"c","name":"f","provider":"p","input":C}'
    data = '[{"role":"assistant","parts":[P]}]'.replace("P", provider).replace("C", constant)
    with pytest.raises(tl.ValidationError, match="not a JSON value"):
        tl.load_json(data)


def test_a_limit_exceeded_is_reported_before_invalid_fields() -> None:
    # A hostile body is both: the limit says more (a server answers 413, not 400).
    data = envelope([user(), {"role": "nobody", "parts": []}, user()])
    with pytest.raises(tl.ValidationError, match="role"):
        tl.load_json(data)
    with pytest.raises(LimitExceededError, match="max_messages"):
        tl.load_json(data, limits=Limits(max_messages=2))


@pytest.mark.usefixtures("string_checks")
def test_max_string_covers_object_keys() -> None:
    data = envelope([user(metadata={"k" * 200: 1})])
    with pytest.raises(LimitExceededError, match="max_string") as info:
        tl.load_json(data, limits=Limits(max_string=100))
    assert info.value.path == "messages[0].metadata"


@pytest.mark.parametrize("depth", [100, 1_000, 100_000])
def test_a_depth_bomb_is_a_limit_error_not_a_recursion_error(depth: int) -> None:
    bomb = '{"format":"threadline","version":1,"messages":[{"role":"user","parts":[{"type":'
    bomb += '"text","text":"x"}],"metadata":{"a":' + "[" * depth + "]" * depth + "}}]}"
    for data in (bomb, bomb.encode()):
        with pytest.raises(LimitExceededError, match="max_depth"):
            tl.load_json(data)
        if depth > DEPTH_CEILING:
            with pytest.raises(LimitExceededError, match="max_depth"):
                tl.load_json(data, limits=Limits.none())
    # Not messages at all: what is wrong first may be the shape, but never the stack.
    with pytest.raises(tl.ValidationError):
        tl.load_json("[" * depth + "]" * depth)


def test_nesting_beyond_the_parser_says_no_limits_can_read_it() -> None:
    with pytest.raises(LimitExceededError, match="no Limits can read JSON nested this deeply"):
        tl.load_json("[" * 5000)


def test_invalid_json_is_still_reported_as_invalid_json() -> None:
    for limits in (Limits(), Limits(max_string=5)):
        with pytest.raises(tl.ValidationError, match="not valid JSON") as info:
            tl.load_json('{"format": "threadline", "version": 1, "messages": [', limits=limits)
        assert not isinstance(info.value, LimitExceededError)


def test_none_reads_what_the_defaults_refuse() -> None:
    data = envelope([user("z" * 40)] * 3)
    tight = Limits(max_bytes=100, max_messages=2, max_parts=2, max_string=10)
    with pytest.raises(LimitExceededError):
        tl.load_json(data, limits=tight)
    assert len(tl.load_json(data, limits=Limits.none())) == 3


# ---------------------------------------------------------------------------------------------
# enforce_limits on parsed documents


def test_enforce_limits_parses_text_and_returns_the_document() -> None:
    assert enforce_limits(b'{"a": [1, "x"]}', None, what="t") == {"a": [1, "x"]}
    document = {"a": [1]}
    assert enforce_limits(document, None, what="t") is document


def test_enforce_limits_refuses_text_that_is_not_json() -> None:
    with pytest.raises(tl.ValidationError, match="t: not valid JSON"):
        enforce_limits("{", None, what="t")


def test_a_document_too_deep_names_the_path() -> None:
    document = {"messages": [{"content": [{"x": nested(70)}]}]}
    with pytest.raises(LimitExceededError) as info:
        enforce_limits(document, None, what="codec.decode")
    assert info.value.path == "messages[0].content[0].x" + "[0]" * 59
    assert str(info.value).startswith("codec.decode: limit max_depth=64 exceeded at messages")


def test_an_empty_container_counts_as_a_level() -> None:
    limits = Limits(max_depth=8)
    enforce_limits(nested(8), limits, what="t")
    with pytest.raises(LimitExceededError):
        enforce_limits(nested(9), limits, what="t")


def test_a_self_referencing_document_is_a_depth_error() -> None:
    loop: dict[str, Any] = {}
    loop["a"] = loop
    loop["b"] = [loop, loop]
    with pytest.raises(LimitExceededError, match="refers to itself"):
        enforce_limits(loop, None, what="t")


def test_a_document_is_measured_by_estimate() -> None:
    document = {"messages": [{"content": "x" * 1000}] * 10}
    enforce_limits(document, Limits(max_bytes=11_000), what="t")
    with pytest.raises(LimitExceededError, match="max_bytes"):
        enforce_limits(document, Limits(max_bytes=9_000), what="t")


def test_bytes_in_a_document_count_as_strings() -> None:
    document = {"source": {"bytes": b"\x00" * 100}}
    with pytest.raises(LimitExceededError, match="max_string") as info:
        enforce_limits(document, Limits(max_string=99), what="t")
    assert info.value.path == "source.bytes"


def test_a_layout_says_where_messages_and_parts_are() -> None:
    layout = Layout("contents", ("parts",))
    document: dict[str, Any] = {"contents": [{"parts": [{}, {}]}, {"parts": [{}]}]}
    enforce_limits(document, Limits(max_parts=3), what="t", layout=layout)
    with pytest.raises(LimitExceededError) as info:
        enforce_limits(document, Limits(max_parts=2), what="t", layout=layout)
    assert info.value.path == "contents[1].parts[0]"
    with pytest.raises(LimitExceededError, match="max_messages"):
        enforce_limits(document, Limits(max_messages=1), what="t", layout=layout)


def test_a_part_key_holding_one_value_counts_one_part() -> None:
    layout = Layout("messages", ("content", "tool_calls"))
    document = {"messages": [{"content": "text", "tool_calls": [{}, {}]}]}
    enforce_limits(document, Limits(max_parts=3), what="t", layout=layout)
    with pytest.raises(LimitExceededError, match="max_parts"):
        enforce_limits(document, Limits(max_parts=2), what="t", layout=layout)


def test_paths_quote_keys_that_are_not_identifiers() -> None:
    document = {"odd key": {"x": "y" * 10}}
    with pytest.raises(LimitExceededError) as info:
        enforce_limits(document, Limits(max_string=8), what="t")
    assert info.value.path == "['odd key'].x"


# ---------------------------------------------------------------------------------------------
# Messages already built


def test_enforce_message_limits_checks_counts_and_nesting_of_messages() -> None:
    messages = [
        tl.user_message("a", metadata={"deep": nested(60)}),
        tl.assistant_message(tl.tool_call_part("c", "f", {"x": nested(58)})),
    ]
    enforce_message_limits(messages, None, what="t")
    with pytest.raises(LimitExceededError) as info:
        enforce_message_limits(messages, Limits(max_depth=63), what="t")
    assert info.value.path == "messages[0].metadata.deep" + "[0]" * 59
    with pytest.raises(LimitExceededError, match="max_messages"):
        enforce_message_limits(messages, Limits(max_messages=1), what="t")
    with pytest.raises(LimitExceededError, match="max_parts"):
        enforce_counts(messages, Limits(max_parts=1), what="t")


def test_enforce_message_limits_reaches_into_tool_result_content() -> None:
    file = tl.file_part(b"x", "image/png").with_metadata(deep=nested(60))
    messages = [
        tl.assistant_message(tl.tool_call_part("c", "f", {})),
        tl.tool_message(tl.tool_result_part("c", (file,))),
    ]
    with pytest.raises(LimitExceededError) as info:
        enforce_message_limits(messages, None, what="t")
    assert info.value.path == "messages[1].parts[0].content[0].metadata.deep" + "[0]" * 56


@given(conversations(), st.integers(DEPTH_FLOOR, 20), json_values)
def test_checking_json_and_checking_messages_agree_on_depth(
    messages: list[tl.Message], max_depth: int, value: Any
) -> None:
    if messages:
        messages[0] = messages[0].with_metadata(extra=value)
    limits = Limits(max_depth=max_depth)
    document = json.loads(tl.dump_json(messages))

    def outcome(check: Any) -> str | None:
        try:
            check()
        except LimitExceededError as error:
            return error.path
        return None

    from_json = outcome(
        lambda: enforce_limits(document, limits, what="t", layout=THREADLINE_LAYOUT)
    )
    from_messages = outcome(lambda: enforce_message_limits(messages, limits, what="t"))
    assert (from_json is None) == (from_messages is None)


@given(json_values)
def test_the_size_estimate_never_exceeds_the_json_size(value: Any) -> None:
    document = {"value": value}
    size = len(json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode())
    enforce_limits(document, Limits(max_bytes=size), what="t")


# ---------------------------------------------------------------------------------------------
# The entry points: History.restore and the codecs


def test_restore_takes_limits_and_changes_nothing_when_exceeded() -> None:
    history = tl.History([tl.user_message("kept", id="kept")])
    items = [user(), user(), user()]
    with pytest.raises(LimitExceededError) as info:
        history.restore(items, limits=Limits(max_messages=2))
    assert (info.value.limit, info.value.path) == ("max_messages", "messages[2]")
    assert [m.id for m in history] == ["kept"]
    history.restore(items, limits=Limits(max_messages=3))
    assert len(history) == 3


def test_restore_checks_mappings_and_messages_alike() -> None:
    deep = user(metadata={"deep": nested(61)})
    built = tl.Message.model_validate(deep)
    for item in (deep, built):
        with pytest.raises(LimitExceededError, match="max_depth") as info:
            tl.History().restore([item])
        assert info.value.path == "messages[0].metadata.deep" + "[0]" * 60
    with pytest.raises(LimitExceededError, match="max_parts"):
        tl.History().restore([built, user()], limits=Limits(max_parts=1))


def test_restore_refuses_a_depth_bomb_with_a_limit_error() -> None:
    history = tl.History()
    with pytest.raises(LimitExceededError, match="max_depth"):
        history.restore([user(metadata={"a": nested(100_000)})])
    assert len(history) == 0


def test_append_and_extend_check_limits_only_when_given() -> None:
    history = tl.History()
    long = user(text="x" * 100)
    with pytest.raises(LimitExceededError, match="max_string") as info:
        history.append(long, limits=Limits(max_string=10))
    assert info.value.path == "message.parts[0].text"
    with pytest.raises(LimitExceededError, match="max_messages"):
        history.extend([user(), user()], limits=Limits(max_messages=1))
    with pytest.raises(LimitExceededError, match="max_parts"):
        history.append({**user(), "parts": user()["parts"] * 2}, limits=Limits(max_parts=1))
    assert len(history) == 0
    assert history.version == 0
    history.append(long)
    history.extend([long, long])
    history.extend([user()], limits=Limits.untrusted())
    assert len(history) == 4


def test_sanitize_untrusted_checks_untrusted_limits_by_default() -> None:
    deep = user(metadata={"deep": nested(40)})
    with pytest.raises(LimitExceededError, match="max_depth=32"):
        tl.sanitize_untrusted([deep])  # type: ignore[list-item]
    assert len(tl.sanitize_untrusted([deep], limits=Limits())) == 1  # type: ignore[list-item]
    with pytest.raises(LimitExceededError, match="max_messages"):
        tl.sanitize_untrusted([user(), user()], limits=Limits(max_messages=1))  # type: ignore[list-item]
    with pytest.raises(tl.ValidationError, match="sequence"):
        tl.sanitize_untrusted("not a list")  # type: ignore[arg-type]


def test_restore_of_a_snapshot_still_works_under_the_defaults() -> None:
    history = tl.History([tl.user_message(str(i)) for i in range(50)])
    earlier = history.snapshot()
    history.append(tl.user_message("later"))
    history.restore(earlier)
    assert list(history) == list(earlier)


CODEC_PAYLOADS = {
    "openai_chat": {"messages": [{"role": "user", "content": "hi"}] * 3},
    "mistral": {"messages": [{"role": "user", "content": "hi"}] * 3},
    "anthropic": {"messages": [{"role": "user", "content": "hi"}] * 3},
    "bedrock": {"messages": [{"role": "user", "content": [{"text": "hi"}]}] * 3},
    "gemini": {"contents": [{"role": "user", "parts": [{"text": "hi"}]}] * 3},
    "openai_responses": {"input": [{"role": "user", "content": "hi"}] * 3},
}


@pytest.mark.parametrize("name", sorted(CODEC_PAYLOADS))
def test_every_codec_decode_takes_limits(name: str) -> None:
    codec = get_codec(name)
    payload = CODEC_PAYLOADS[name]
    assert len(codec.decode(payload, limits=Limits(max_messages=3))) == 3
    with pytest.raises(LimitExceededError) as info:
        codec.decode(payload, limits=Limits(max_messages=2))
    assert info.value.limit == "max_messages"
    assert str(info.value).startswith(f"{name}.decode: limit max_messages=2 exceeded")
    with pytest.raises(LimitExceededError, match="max_string"):
        codec.decode(payload, limits=Limits(max_string=1))
    deep = json.loads(json.dumps(payload))
    next(iter(deep.values()))[0]["extra"] = nested(100_000)
    with pytest.raises(LimitExceededError, match="max_depth"):
        codec.decode(deep)


@pytest.mark.parametrize("name", sorted(CODEC_PAYLOADS))
def test_every_codec_decode_response_takes_limits(name: str) -> None:
    codec = get_codec(name)
    seed = json.loads(CORPUS.joinpath(f"{name}.decode_response.0.json").read_text())
    text = json.dumps(seed)
    for response in (seed, text, text.encode()):
        message = codec.decode_response(response, limits=Limits.untrusted())
        with pytest.raises(LimitExceededError, match="max_parts"):
            codec.decode_response(response, limits=Limits(max_parts=len(message.parts) - 1))
    with pytest.raises(LimitExceededError, match="max_bytes"):
        codec.decode_response(text, limits=Limits(max_bytes=len(text) - 1))
    with pytest.raises(LimitExceededError, match="max_bytes"):
        codec.decode_response(seed, limits=Limits(max_bytes=10))
    for bomb in ("[" * 100_000, {**seed, "extra": nested(100_000)}):
        with pytest.raises(LimitExceededError, match="max_depth"):
            codec.decode_response(bomb)


@pytest.mark.parametrize("name", sorted(CODEC_PAYLOADS))
def test_decode_response_of_text_that_is_not_json_is_still_a_codec_error(name: str) -> None:
    with pytest.raises(tl.CodecError, match="not valid JSON"):
        get_codec(name).decode_response('{"choices": [')


def test_the_dispatching_functions_pass_limits_on() -> None:
    payload = CODEC_PAYLOADS["openai_chat"]
    with pytest.raises(LimitExceededError, match="max_messages"):
        codecs.decode(payload, provider="openai_chat", limits=Limits(max_messages=1))
    seed = json.loads(CORPUS.joinpath("anthropic.decode_response.0.json").read_text())
    with pytest.raises(LimitExceededError, match="max_parts"):
        codecs.decode_response(seed, provider="anthropic", limits=Limits(max_parts=1))


def test_a_limit_error_survives_pickling() -> None:
    with pytest.raises(LimitExceededError) as info:
        tl.load_json(envelope([user(), user()]), limits=Limits(max_messages=1))
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.limit, copy.maximum, copy.actual, copy.path) == (
        "max_messages",
        1,
        2,
        "messages[1]",
    )
    assert str(copy) == str(info.value)
    assert copy.errors == info.value.errors
