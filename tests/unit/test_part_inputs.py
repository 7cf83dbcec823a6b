"""What the part constructors make of each kind of input (issue 21, items 2 and 3).

A structured tool result becomes compact JSON text; anything else that is neither text nor
parts is refused naming ``content``. A file's ``url`` must be a URL (a scheme), so base64 text
given as a "URL" is refused with the fix instead of reaching a provider.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pydantic
import pytest

import threadline as tl
from threadline import FilePart
from threadline import TextPart
from threadline import ToolCallPart
from threadline import ToolResultPart
from threadline.stores.blobs import BLOB_URL_PREFIX


def paths(error: tl.ValidationError) -> list[str]:
    return [detail.path for detail in error.errors]


# -- tool results: structured values become JSON text ----------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"temp": 22, "sky": "clear"}, '{"temp":22,"sky":"clear"}'),
        ({"city": "Belém", "ok": True}, '{"city":"Belém","ok":true}'),
        ([1, 2, 3], "[1,2,3]"),
        ((1, "a"), '[1,"a"]'),
        (["a", 1], '["a",1]'),
        ([{"temp": 22}], '[{"temp":22}]'),
        (22, "22"),
        (-1.5, "-1.5"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
        ({}, "{}"),
        ({"nested": {"list": [None, 1.0]}}, '{"nested":{"list":[null,1.0]}}'),
    ],
)
def test_a_structured_result_becomes_compact_json_text(value: Any, text: str) -> None:
    result = tl.tool_result_part("c1", value)
    assert result.content == text
    assert result.text == text
    assert json.loads(result.text) == json.loads(json.dumps(value))


def test_a_structured_result_survives_a_round_trip() -> None:
    message = tl.tool_message(tl.tool_result_part("c1", {"temp": 22}, name="weather"))
    (loaded,) = tl.load_json(tl.dump_json([message]))
    assert loaded == message
    assert json.loads(loaded.tool_results[0].text) == {"temp": 22}


def test_text_and_parts_still_mean_text_and_parts() -> None:
    image = tl.file_part(b"png", "image/png")
    assert tl.tool_result_part("c", "plain").content == "plain"
    assert tl.tool_result_part("c", ["a", "b"]).content == (TextPart(text="a"), TextPart(text="b"))
    assert tl.tool_result_part("c", ("see", image)).content == (TextPart(text="see"), image)
    assert tl.tool_result_part("c", (TextPart(text="x"),)).content == (TextPart(text="x"),)
    mapping = {"type": "text", "text": "as a mapping"}
    assert tl.tool_result_part("c", [mapping]).content == (TextPart(text="as a mapping"),)
    assert tl.tool_result_part("c", []).content == ()


def test_a_part_that_cannot_be_content_is_still_refused_as_a_part() -> None:
    call = ToolCallPart(id="x", name="f", arguments={})
    with pytest.raises(tl.ValidationError) as info:
        tl.tool_result_part("c", [call])  # type: ignore[arg-type]
    assert paths(info.value)[0].startswith("content")


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ({1, 2}, "set"),
        (frozenset({"a"}), "frozenset"),
        (object(), "object"),
        (float("nan"), "NaN"),
        (float("inf"), "NaN or infinity"),
        ({"temp": float("nan")}, "NaN"),
        ({"k": "\ud800"}, "surrogate"),
        ("ok", None),  # control: accepted
        ([10**5000], "4,300 digits"),
        ({1: "x"}, "not a string"),
        (b"bytes", "bytes"),
        ((item for item in ["a"]), "generator"),
    ],
)
def test_anything_else_is_a_clear_error_naming_content(value: Any, said: str | None) -> None:
    if said is None:
        tl.tool_result_part("c", value)
        return
    with pytest.raises(tl.ValidationError) as info:
        tl.tool_result_part("c", value)
    error = info.value
    assert paths(error)[0].startswith("content")
    assert said in str(error)
    assert "JSON value" in str(error)
    assert "text/file parts" in str(error)  # what to pass instead


def test_a_refused_result_is_a_validation_error_not_a_type_error() -> None:
    with pytest.raises(tl.ValidationError):
        tl.tool_result_part("c", {"when": object()})  # type: ignore[dict-item]


def test_the_model_itself_does_not_reinterpret_content() -> None:
    # Stored data: a list of mappings is parts, never JSON; a dict is refused, not iterated.
    with pytest.raises(pydantic.ValidationError):
        ToolResultPart(call_id="c", content={"temp": 22})  # type: ignore[arg-type]


# -- file URLs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/cat.png",
        "http://example.com/cat.png",
        "HTTP://example.com/dog.png",
        "gs://bucket/talk.mp3",
        "s3://my-bucket/docs/spec.pdf",
        "file:///etc/passwd",
        "data:image/png;base64,iVBORw0KGgo=",
        "DATA:image/png;base64,iVBORw0KGgo=",
        "ftp://example.com/a.png",
        "x-custom+v1.2://thing",
        "mailto:someone@example.com",
        "http:",  # a URL, if not a useful one: sanitize_untrusted drops it
        BLOB_URL_PREFIX + "sha256:" + "0" * 64,
    ],
)
def test_real_urls_are_urls(url: str) -> None:
    assert tl.file_part(url, "image/png").url == url


@pytest.mark.parametrize(
    "url",
    [
        "iVBORw0KGgo=",
        base64.b64encode(b"\x89PNG\r\n\x1a\n" * 4).decode(),
        "cat.png",
        "/tmp/cat.png",
        "example.com/cat.png",
        "",
        "C:\\images\\cat.png",
        "1http://x",
        "://nothing",
    ],
)
def test_anything_else_is_refused_with_the_fix(url: str) -> None:
    with pytest.raises(tl.ValidationError) as info:
        tl.file_part(url, "image/png")
    text = str(info.value)
    assert paths(info.value) == ["url"]
    assert "base64.b64decode" in text
    assert "data:image/png;base64," in text


def test_the_rule_holds_on_every_path_in() -> None:
    with pytest.raises(pydantic.ValidationError, match="not a URL"):
        FilePart(media_type="image/png", url="iVBORw0KGgo=")
    stored = {
        "role": "user",
        "parts": [{"type": "file", "media_type": "image/png", "url": "iVBORw0KGgo="}],
    }
    with pytest.raises(tl.ValidationError, match="not a URL"):
        tl.load_json(json.dumps([stored]))
    payload = [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "iVBORw0KGgo="}}],
        }
    ]
    with pytest.raises((tl.ValidationError, tl.CodecError), match="not a URL"):
        tl.decode(payload, provider="openai_chat")


def test_bytes_are_still_data() -> None:
    part = tl.file_part(base64.b64decode("iVBORw0KGgo="), "image/png")
    assert part.data == b"\x89PNG\r\n\x1a\n"
    assert part.url is None
