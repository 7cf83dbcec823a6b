"""A file part's ``media_type`` is a media type (RFC 6838 names, RFC 9110 parameters), wherever
it comes from: constructors, ``load_json``, mappings, and every codec's ``decode``."""

from __future__ import annotations

import json
from typing import Any

import pytest

import threadline as tl
from threadline.codecs._media import parse_data_url
from threadline.codecs._reading import Reader

VALID = [
    "image/png",
    "image/*",  # an image known only by a URL that does not say which
    "audio/x-wav",
    "image/svg+xml",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/octet-stream",
    "text/plain; charset=utf-8",
    'text/plain;charset="utf-8"',
    "a/b",
    "x" * 127 + "/" + "y" * 127,
]
INVALID = [
    "text/html\r\nX-Injected: 1",
    "image/png\n",
    "image/png\r",
    "../../etc/passwd",
    "png",
    "",
    "/",
    "image/",
    "/png",
    "image/png/x",
    " image/png",
    "image/png ",
    "image/png;",
    "image/png; charset",
    "text/plain; charset=utf-8\r\nX: 1",
    'text/plain; charset="a\nb"',
    "image/p ng",
    "image\\png",
    "imáge/png",
    "image/png\x00",
    "*/*",
    "x" * 128 + "/y",
    "x/" + "y" * 128,
]


@pytest.mark.parametrize("media_type", VALID)
def test_media_types_are_accepted(media_type: str) -> None:
    part = tl.file_part(b"x", media_type)
    assert part.media_type == media_type
    message = tl.user_message(part)
    assert tl.load_json(tl.dump_json([message])) == [message]


@pytest.mark.parametrize("media_type", INVALID, ids=repr)
def test_anything_else_is_refused_naming_the_field_and_an_example(media_type: str) -> None:
    with pytest.raises(tl.ValidationError) as info:
        tl.file_part(b"x", media_type)
    message = str(info.value)
    assert "media_type" in message
    assert "'image/png'" in message


@pytest.mark.parametrize("media_type", ["text/html\r\nX-Injected: 1", "../../etc/passwd"])
def test_load_json_and_mappings_refuse_a_bad_media_type(media_type: str) -> None:
    part = {"type": "file", "media_type": media_type, "url": "https://example.com/a"}
    message = {"id": "m", "role": "user", "parts": [part]}
    with pytest.raises(tl.ValidationError) as info:
        tl.load_json(json.dumps([message]))
    assert "messages[0].parts[0]" in str(info.value)
    with pytest.raises(tl.ValidationError):
        tl.History().append(message)


@pytest.mark.parametrize("media_type", ["text/html\r\nX-Injected: 1", "../../etc/passwd"])
def test_reader_and_data_urls_refuse_a_bad_media_type(media_type: str) -> None:
    reader = Reader("test")
    with pytest.raises(tl.CodecError, match=r"t: .* is not a media type such as 'image/png'"):
        reader.media_type(media_type, "t")
    with pytest.raises(tl.CodecError, match=r"u: the data: URL's .* is not a media type"):
        parse_data_url(f"data:{media_type};base64,AA==", reader, "u")
    assert parse_data_url("data:image/png;base64,AA==", reader, "u") == ("image/png", b"\x00")


BAD = "text/html\r\nX-Injected: 1"
PAYLOADS: list[tuple[str, dict[str, Any]]] = [
    (
        "gemini",
        {
            "contents": [
                {"role": "user", "parts": [{"inlineData": {"mimeType": BAD, "data": "AA=="}}]}
            ]
        },
    ),
    (
        "gemini",
        {
            "contents": [
                {"role": "user", "parts": [{"fileData": {"mimeType": BAD, "fileUri": "gs://b/a"}}]}
            ]
        },
    ),
    (
        "anthropic",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": BAD, "data": "AA=="},
                        }
                    ],
                }
            ]
        },
    ),
    (
        "openai_chat",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "image_url", "image_url": {"url": f"data:{BAD};base64,AA=="}}
                    ],
                }
            ]
        },
    ),
    (
        "bedrock",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [{"image": {"format": "png\r\nX: 1", "source": {"bytes": b"x"}}}],
                }
            ]
        },
    ),
]


@pytest.mark.parametrize(("name", "payload"), PAYLOADS, ids=[name for name, _ in PAYLOADS])
def test_codecs_refuse_a_bad_media_type(name: str, payload: dict[str, Any]) -> None:
    with pytest.raises((tl.CodecError, tl.ValidationError)):
        tl.decode(payload, provider=name)
