"""The shared codec toolkit: id mapping, the policies, paths in errors, response metadata."""

from __future__ import annotations

import pytest

import threadline as tl
from threadline import CodecError
from threadline.codecs.base import (
    EncodeOptions,
    Reader,
    add_error_prefix,
    downgrade_reasoning,
    map_call_ids,
    media_type_from_url,
    parse_data_url,
    placeholder_text,
    reasoning_action,
    response_metadata,
    strip_error_prefix,
)


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


def test_response_metadata_always_names_input_and_output_tokens() -> None:
    metadata = response_metadata(
        provider="openai",
        response_id="r1",
        model="m",
        stop_reason="stop",
        usage={"prompt_tokens": 3, "completion_tokens": 4, "details": None},
        input_tokens=3,
        output_tokens=4,
    )
    assert metadata == {
        "provider": "openai",
        "model": "m",
        "response_id": "r1",
        "stop_reason": "stop",
        "usage": {
            "prompt_tokens": 3,
            "completion_tokens": 4,
            "input_tokens": 3,
            "output_tokens": 4,
        },
    }


def test_encode_refuses_what_is_not_a_list_of_messages() -> None:
    from threadline.codecs import openai_chat

    with pytest.raises(tl.ValidationError, match="not a Message"):
        openai_chat.encode([tl.user_message("hi"), "hello"])  # type: ignore[list-item]
    with pytest.raises(tl.ValidationError, match=r"messages\[0\]"):
        openai_chat.encode([{"role": "user", "parts": []}])  # type: ignore[list-item]
    assert openai_chat.encode([{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]) == {  # type: ignore[list-item]
        "messages": [{"role": "user", "content": "hi"}]
    }
