"""The shared codec toolkit: id mapping, the policies, paths in errors, response metadata."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest

import threadline as tl
from threadline import CodecError
from threadline.codecs._media import UNKNOWN_IMAGE
from threadline.codecs._media import image_type_from_url
from threadline.codecs._media import media_type_from_url
from threadline.codecs._media import parse_data_url
from threadline.codecs._policies import downgrade_reasoning
from threadline.codecs._policies import is_blank
from threadline.codecs._policies import is_one_of
from threadline.codecs._policies import placeholder_text
from threadline.codecs._policies import reasoning_action
from threadline.codecs._reading import Reader
from threadline.codecs._reading import response_message
from threadline.codecs._reading import response_metadata
from threadline.codecs._tools import add_error_prefix
from threadline.codecs._tools import arguments_json
from threadline.codecs._tools import call_from_json
from threadline.codecs._tools import call_names
from threadline.codecs._tools import compact_json
from threadline.codecs._tools import fold_attachments
from threadline.codecs._tools import map_call_ids
from threadline.codecs._tools import read_back_result
from threadline.codecs._tools import read_text_result
from threadline.codecs._tools import strip_error_prefix
from threadline.codecs._tools import text_tool_content
from threadline.codecs._turns import LEADING_USER_TEXT
from threadline.codecs._turns import add_leading_turn
from threadline.codecs._turns import is_leading_turn
from threadline.codecs._turns import merge_into_turns
from threadline.codecs._turns import without_leading_turn
from threadline.codecs.base import EncodeOptions
from threadline.usage import Usage


def turn(*ids: str) -> list[tl.Message]:
    calls = [tl.tool_call_part(call_id, "f", {}) for call_id in ids]
    results = [tl.tool_result_part(call_id, "ok") for call_id in ids]
    return [tl.assistant_message(*calls), tl.tool_message(*results)]


def short(value: str) -> bool:
    return 0 < len(value) <= 5


def test_valid_ids_are_kept_and_invalid_ones_mapped_deterministically() -> None:
    mapping = map_call_ids(
        turn("ok", "much_too_long", "also_too_long"),
        is_valid=short,
        mint=lambda o, n: f"m{len(o)}{n}",
    )
    assert mapping == {"much_too_long": "m130", "also_too_long": "m131"}  # same length: retried


def test_a_minted_id_never_takes_a_kept_id() -> None:
    mapping = map_call_ids(
        turn("m60", "long_id"), is_valid=short, mint=lambda o, n: f"m{len(o) - 1}{n}"
    )
    assert mapping == {"long_id": "m61"}


def test_a_mint_that_breaks_the_rule_is_a_codec_bug() -> None:
    with pytest.raises(ValueError, match="rejects itself"):
        map_call_ids(turn("too_long"), is_valid=short, mint=lambda o, n: o)


def test_no_invalid_ids_means_no_mapping() -> None:
    assert map_call_ids(turn("a", "b"), is_valid=short) == {}


def options(**kw: object) -> EncodeOptions:
    base: dict[str, object] = {
        "provider": "anthropic",
        "model": None,
        "reasoning": "auto",
        "unsupported": "placeholder",
    }
    return EncodeOptions(**{**base, **kw})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("part", "kw", "replayable", "action"),
    [
        ({"provider": "anthropic", "model": "m1"}, {}, True, "replay"),
        ({"provider": "anthropic", "model": "m1"}, {"model": "m1"}, True, "replay"),
        ({"provider": "anthropic", "model": "m1"}, {"model": "m2"}, True, "drop"),
        ({"provider": "anthropic", "model": None}, {"model": "m2"}, True, "drop"),
        (
            {"provider": "anthropic", "model": "m1"},
            {"model": "m2", "reasoning": "text"},
            True,
            "text",
        ),
        ({"provider": "anthropic"}, {}, False, "drop"),
        ({"provider": "openai"}, {}, True, "drop"),
        ({"provider": "openai"}, {"reasoning": "text"}, True, "text"),
        ({"provider": "anthropic"}, {"reasoning": "drop"}, True, "drop"),
    ],
)
def test_the_reasoning_rule(
    part: dict[str, str], kw: dict[str, str], replayable: bool, action: str
) -> None:
    reasoning = tl.reasoning_part("why", **part)
    assert reasoning_action(reasoning, options(**kw), replayable=replayable) == action


def test_downgraded_reasoning_is_its_text_or_its_summary_parts() -> None:
    assert downgrade_reasoning(tl.reasoning_part("why")) == [tl.text_part("why")]
    assert downgrade_reasoning(tl.reasoning_part(summary=("a", "", "b"))) == [
        tl.text_part("a"),
        tl.text_part("b"),
    ]
    assert downgrade_reasoning(tl.reasoning_part(encrypted="x", redacted=True)) == []


def test_placeholders_name_the_media_type_or_the_part_type() -> None:
    assert (
        placeholder_text(tl.file_part(b"", "audio/ogg"), "openai")
        == "[audio/ogg omitted: not supported by openai]"
    )
    call = tl.ProviderToolCallPart(id="s", name="web_search", input={}, provider="gemini")
    assert (
        placeholder_text(call, "anthropic")
        == "[provider_tool_call omitted: not supported by anthropic]"
    )


def test_the_error_prefix() -> None:
    assert add_error_prefix("boom") == "[tool error] boom"
    assert strip_error_prefix("[tool error] boom") == ("boom", True)
    assert strip_error_prefix("[tool error]boom") == ("[tool error]boom", False)


@pytest.mark.parametrize(
    ("url", "media_type"),
    [
        ("https://e.com/a.PNG?x=1", "image/png"),
        ("https://e.com/a.jpeg#frag", "image/jpeg"),
        ("https://e.com/photo", "image/*"),
        ("https://e.com/v1.2/file", "image/*"),
        ("gs://bucket/doc.pdf", "application/pdf"),
    ],
)
def test_media_types_from_urls_use_a_fixed_table(url: str, media_type: str) -> None:
    assert media_type_from_url(url, "image/*") == media_type


def test_data_urls() -> None:
    reader = Reader("Test")
    assert parse_data_url("data:image/png;base64,+/8=", reader, "x") == ("image/png", b"\xfb\xff")
    assert parse_data_url("data:,hi%20there", reader, "x") == ("text/plain", b"hi there")
    assert parse_data_url("https://e.com/a.png", reader, "x") is None
    with pytest.raises(
        CodecError, match=r"not a valid Test payload: messages\[2\]\.url: not valid base64"
    ):
        parse_data_url("data:image/png;base64,***", reader, "messages[2].url")


def test_response_metadata_keeps_normalised_usage_beside_the_providers_own() -> None:
    metadata = response_metadata(
        provider="openai",
        response_id="r1",
        model="m",
        stop_reason="stop",
        usage=Usage(input_tokens=3, output_tokens=4),
        raw_usage={"prompt_tokens": 3, "completion_tokens": 4, "details": None},
    )
    assert metadata == {
        "provider": "openai",
        "model": "m",
        "response_id": "r1",
        "stop_reason": "stop",
        "usage": {
            "input_tokens": 3,
            "output_tokens": 4,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "reasoning_tokens": 0,
        },
        "openai.usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }


def test_encode_refuses_what_is_not_a_list_of_messages() -> None:
    from threadline.codecs import openai_chat

    with pytest.raises(tl.ValidationError, match="not a message"):
        openai_chat.encode([tl.user_message("hi"), "hello"])  # type: ignore[list-item]
    with pytest.raises(tl.ValidationError, match=r"messages\[0\]"):
        openai_chat.encode([{"role": "user", "parts": []}])  # type: ignore[list-item]
    assert openai_chat.encode([{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]) == {  # type: ignore[list-item]
        "messages": [{"role": "user", "content": "hi"}]
    }


# ---------------------------------------------------------------------------------------------
# Shared conventions: turns, the leading user turn, text-only tool messages, calls as JSON


def is_result(block: Mapping[str, Any]) -> bool:
    return bool(block["type"] == "result")


def test_merging_into_turns_keeps_one_block_per_part_and_results_first() -> None:
    turns: list[dict[str, Any]] = []
    merge_into_turns(turns, "user", [{"type": "text", "text": "a"}], is_result=is_result)
    merge_into_turns(turns, "user", [{"type": "result", "id": 1}], is_result=is_result)
    merge_into_turns(turns, "assistant", [{"type": "text", "text": "b"}], is_result=is_result)
    merge_into_turns(turns, "assistant", [{"type": "text", "text": "c"}], is_result=is_result)
    assert turns == [
        {"role": "user", "content": [{"type": "result", "id": 1}, {"type": "text", "text": "a"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "b"}, {"type": "text", "text": "c"}],
        },
    ]
    parts: list[dict[str, Any]] = []
    merge_into_turns(parts, "model", [{"text": "x"}], key="parts")
    merge_into_turns(parts, "model", [{"text": "y"}], key="parts")
    assert parts == [{"role": "model", "parts": [{"text": "x"}, {"text": "y"}]}]


def test_the_leading_user_turn_is_added_detected_and_read_back_out() -> None:
    placeholder = [{"text": LEADING_USER_TEXT}]
    turns: list[dict[str, Any]] = [{"role": "model", "parts": [{"text": "hi"}]}]
    add_leading_turn(turns, "parts", placeholder, assistant_role="model")
    assert turns[0] == {"role": "user", "parts": [{"text": "[conversation start]"}]}
    assert turns[0]["parts"] is not placeholder  # every payload gets its own
    add_leading_turn(turns, "parts", placeholder, assistant_role="model")
    assert len(turns) == 2  # only before an assistant turn
    assert is_leading_turn(
        "user", turns[0]["parts"], turns, placeholder=placeholder, assistant_role="model"
    )
    assert not is_leading_turn("user", turns[0]["parts"], turns[:1], placeholder=placeholder)
    assert not is_leading_turn("user", [{"text": "hello"}], turns, placeholder=placeholder)

    opening = [
        tl.system_message("s"),
        tl.user_message(LEADING_USER_TEXT),
        tl.assistant_message("hi"),
    ]
    assert [m.role for m in without_leading_turn(opening)] == ["system", "assistant"]
    asked = [tl.user_message(LEADING_USER_TEXT, "really"), tl.assistant_message("hi")]
    assert without_leading_turn(asked) == asked


def file_block(part: tl.FilePart) -> dict[str, Any] | None:
    return {"type": "image"} if part.media_type == "image/png" else None


def test_a_results_files_go_to_the_next_user_message_and_come_back() -> None:
    png = tl.file_part(b"\x89PNG", "image/png")
    zip_file = tl.file_part(b"PK", "application/zip")
    result = tl.tool_result_part("c1", ("see:", png, zip_file), is_error=True)
    attachments: list[dict[str, Any]] = []
    content = text_tool_content(
        result, "w1", attachments, file_block, lambda part: {"type": "text", "text": "[zip]"}
    )
    assert content == [
        {"type": "text", "text": "[tool error] see:"},
        {"type": "text", "text": "[file 1 (image/png) is in the next user message]"},
        {"type": "text", "text": "[zip]"},
    ]
    assert attachments == [
        {"type": "text", "text": "[files from tool result w1]"},
        {"type": "image"},
    ]

    reader = Reader("test")
    read = read_text_result("w1", content, "f", "messages[2]", reader)
    assert read.is_error
    run = [read]

    def decode_file(block: Mapping[str, Any], kind: str, path: str, reader: Reader) -> tl.FilePart:
        return png

    assert fold_attachments(
        run, attachments, "messages[3]", reader, file_kinds={"image"}, decode_file=decode_file
    )
    assert run[0].content == (tl.text_part("see:"), png, tl.text_part("[zip]"))
    other = [{"type": "text", "text": "just a user message"}]
    assert not fold_attachments(
        run, other, "messages[3]", reader, file_kinds={"image"}, decode_file=decode_file
    )


def test_a_text_only_tool_message_refuses_other_blocks() -> None:
    with pytest.raises(CodecError, match=r"messages\[2\]\.content\[0\]\.type"):
        read_text_result("c1", [{"type": "image"}], None, "messages[2]", Reader("test"))


def test_calls_as_json_text_keep_what_is_not_an_object() -> None:
    call = call_from_json("c1", "f", '{"a": 1}')
    assert (call.arguments, call.raw_arguments) == ({"a": 1}, None)
    assert arguments_json(call) == '{"a":1}'
    broken = call_from_json("c2", "f", '{"a": tru')
    assert (broken.arguments, broken.raw_arguments) == ({}, '{"a": tru')
    assert arguments_json(broken) == '{"a": tru'
    assert compact_json({"é": [1, 2]}) == '{"é":[1,2]}'


def test_small_readers_and_helpers() -> None:
    reader = Reader("test")
    assert list(reader.tagged_objects([{"type": "text"}], "content")) == [
        ("content[0]", {"type": "text"}, "text")
    ]
    with pytest.raises(CodecError, match=r"content\[0\]\.type"):
        list(reader.tagged_objects([{"text": "x"}], "content"))
    assert reader.optional_object({"usage": None}, "usage", "") is None
    with pytest.raises(CodecError, match="usage"):
        reader.optional_object({"usage": 3}, "usage", "")
    assert response_message([], "content", {"provider": "p"}).parts == (tl.text_part(""),)
    assert image_type_from_url("https://x/a.JPG") == "image/jpeg"
    assert image_type_from_url("https://x/a.pdf") == UNKNOWN_IMAGE
    assert is_blank(" \n\t")
    assert is_blank("")
    assert not is_blank(" x ")
    history = [
        tl.assistant_message(tl.tool_call_part("c1", "f", {})),
        tl.tool_message(tl.tool_result_part("c1", "ok")),
    ]
    assert call_names(history) == {"c1": "f"}
    read = read_back_result(tl.tool_result_part("c1", ()), {"c1": "w1"}, lambda part: [part])
    assert (read.call_id, read.content) == ("w1", "")


# ---------------------------------------------------------------------------------------------
# Hostile values: a payload given as Python values need not be JSON.


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"a": [1, {"b": math.nan}]}, r"x\.a\[1\]\.b: NaN is not a JSON value"),
        ([math.inf], r"x\[0\]: Infinity is not a JSON value"),
        ({"a b": -math.inf}, r'x\["a b"\]: -Infinity is not a JSON value'),
        ({"$ref": {1: "one"}}, r"x\.\$ref: an object key is a int: JSON object keys are strings"),
        ({"data": b"\x00"}, r"x\.data: a bytes value is not JSON"),
        ([{"a": 1}, {2, 3}], r"x\[1\]: a set value is not JSON"),
    ],
)
def test_check_json_names_the_first_value_json_cannot_hold(value: Any, problem: str) -> None:
    with pytest.raises(CodecError, match=f"not a valid test payload: {problem}"):
        Reader("test").check_json(value, "x")


def test_check_json_takes_what_json_holds() -> None:
    value: dict[str, Any] = {
        "a": [None, True, 1, 1.5, "s", (2, 3), {"b": {}}],
        "c": MappingProxyType({"d": 4}),
    }
    Reader("test").check_json(value, "x")
    Reader("test").check_json("top", "")


def test_json_text_writes_json_or_names_what_is_not() -> None:
    reader = Reader("test")
    assert reader.json_text({"é": [1, 2]}, "x") == '{"é":[1,2]}'
    assert reader.json_text([1, 2], "x", compact=False) == "[1, 2]"
    with pytest.raises(CodecError, match=r"x\.n: NaN is not a JSON value"):
        reader.json_text({"n": math.nan}, "x")  # json.dumps would write the text NaN
    with pytest.raises(CodecError, match=r"x\[0\]: a bytes value is not JSON"):
        reader.json_text([b"x"], "x")
    with pytest.raises(CodecError, match=r"x: cannot be written as JSON"):
        reader.json_text(MappingProxyType({"a": 1}), "x")  # JSON, but json.dumps takes dicts


def test_part_raises_the_readers_error_for_a_value_the_part_refuses() -> None:
    reader = Reader("test")
    block = {"input": {"q": [math.nan]}}
    assert reader.part(tl.ToolCallPart, block, "m[0]", id="c", name="f", arguments={"q": 1})
    with pytest.raises(CodecError, match=r"m\[0\]\.input\.q\[0\]: NaN is not a JSON value"):
        reader.part(tl.ToolCallPart, block, "m[0]", id="c", name="f", arguments=block["input"])
    # Nothing in the wire value is the culprit: the part's own complaint, at the block's path.
    with pytest.raises(CodecError, match=r"m\[0\]: cannot be stored: .*not a media type"):
        reader.part(tl.FilePart, {"type": "image"}, "m[0]", media_type="png", url="https://e/a")


def test_media_types_and_counts_are_checked() -> None:
    reader = Reader("test")
    assert reader.media_type("image/png", "t") == "image/png"
    with pytest.raises(CodecError, match=r"t: 'png' is not a media type"):
        reader.media_type("png", "t")
    with pytest.raises(CodecError, match="t: expected a string"):
        reader.media_type(None, "t")
    usage = {"a": 3, "b": None, "c": -1, "d": True, "e": 2.0, "f": "7", "g": [1]}
    assert reader.optional_count(usage, "a", "usage") == 3
    assert reader.optional_count(usage, "b", "usage") is None  # SDKs dump missing counts as null
    assert reader.optional_count(usage, "z", "usage") is None
    assert reader.optional_count(None, "a", "usage") is None
    shown_as = {
        "c": "a negative number",
        "d": "a boolean",
        "e": "2.0",
        "f": "a string",
        "g": "an array",
        "h": "a negative number",
    }
    usage["h"] = -(10**5000)  # too many digits for repr()
    for key, shown in shown_as.items():
        with pytest.raises(CodecError, match=rf"usage\.{key}: expected a count .*got {shown}$"):
            reader.optional_count(usage, key, "usage")
    assert reader.optional_json({"usage": {"n": 1}}, "usage", "") == {"n": 1}
    with pytest.raises(CodecError, match=r"usage\.n: NaN"):
        reader.optional_json({"usage": {"n": math.nan}}, "usage", "")


def test_text_with_a_lone_surrogate_is_not_utf8() -> None:
    reader = Reader("test")
    assert reader.utf8("é", "t") == b"\xc3\xa9"
    with pytest.raises(CodecError, match=r"t: not valid Unicode: a lone surrogate at index 1"):
        reader.utf8("a\ud800", "t")  # json.loads accepts "\ud800"


def test_a_data_url_must_name_a_media_type() -> None:
    with pytest.raises(CodecError, match=r"u: the data: URL's 'png' is not a media type"):
        parse_data_url("data:png;base64,AA==", Reader("test"), "u")


def test_is_one_of_takes_any_json_value() -> None:
    choices = frozenset({"a", "b"})
    assert is_one_of("a", choices)
    assert not is_one_of("c", choices)
    assert not is_one_of(["a"], choices)  # `["a"] in choices` raises TypeError
    assert not is_one_of({"a": 1}, {"a": 1})


def test_attachments_with_text_that_is_not_a_string_are_not_folded() -> None:
    run = [tl.tool_result_part("c1", "ok")]
    content = [{"type": "text", "text": 10**5000}]  # str() of it raises ValueError

    def decode_file(block: Mapping[str, Any], kind: str, path: str, reader: Reader) -> tl.FilePart:
        raise AssertionError("no file to decode")

    folded = fold_attachments(
        run, content, "m", Reader("test"), file_kinds={"image"}, decode_file=decode_file
    )
    assert not folded
