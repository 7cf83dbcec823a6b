"""``text_files="inline"``: a text file a format cannot carry as a file goes as its text.

By default (``text_files="unsupported"``) such a file follows the ``unsupported`` policy, as
before: a placeholder. With ``inline``, a file of ``text/*``, JSON or CSV bytes that are UTF-8
is sent as ``<file name="..." media_type="...">\\n…\\n</file>`` text, in user messages and
in tool results alike; ``decode`` reads that back as text.
"""

from __future__ import annotations

from typing import Any

import pytest

import threadline as tl
from threadline import FilePart
from threadline import Message
from threadline import UnsupportedContentError
from threadline.codecs import codec_names
from threadline.codecs import decode
from threadline.codecs import encode
from threadline.codecs import get_codec
from threadline.codecs._policies import is_text_media_type
from threadline.integrity import prepare_messages

PROVIDERS = codec_names()
JSON_BYTES = b'{"city": "Paris", "temp": 18}'
INLINED = (
    '<file name="weather.json" media_type="application/json">\n'
    + JSON_BYTES.decode()
    + ("\n</file>")
)
RESULT_INLINED = '<file media_type="application/json">\n{"ok": true}\n</file>'


def history(data: bytes = JSON_BYTES, media_type: str = "application/json") -> list[Message]:
    return [
        tl.user_message("Read this.", tl.file_part(data, media_type, filename="weather.json")),
        tl.assistant_message(tl.tool_call_part("call_1", "check", {})),
        tl.tool_message(
            tl.tool_result_part("call_1", ["checked", tl.file_part(b'{"ok": true}', media_type)])
        ),
    ]


def wire_texts(payload: Any) -> list[str]:
    """Every string in ``payload``."""
    if isinstance(payload, str):
        return [payload]
    if isinstance(payload, dict):
        return [text for value in payload.values() for text in wire_texts(value)]
    if isinstance(payload, list):
        return [text for value in payload for text in wire_texts(value)]
    return []


def texts(messages: list[Message]) -> list[str]:
    out: list[str] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, tl.TextPart):
                out.append(part.text)
            elif isinstance(part, tl.ToolResultPart):
                content = part.content
                items = (content,) if isinstance(content, str) else content
                out.extend(i if isinstance(i, str) else getattr(i, "text", "") for i in items)
    return out


@pytest.mark.parametrize("provider", PROVIDERS)
def test_by_default_a_json_file_is_a_placeholder(provider: str) -> None:
    found = wire_texts(encode(history(), provider=provider))
    assert not any("<file" in text for text in found)
    assert any("[application/json omitted" in text for text in found)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_inline_sends_a_json_file_as_its_text(provider: str) -> None:
    payload = encode(history(), provider=provider, text_files="inline")
    found = wire_texts(payload)
    assert not any("omitted" in text for text in found)
    assert any(INLINED in text for text in found)
    assert any(RESULT_INLINED in text for text in found)
    decoded = texts(decode(payload, provider=provider))
    assert INLINED in decoded
    assert any(RESULT_INLINED in text for text in decoded)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_round_trip_is_declared(provider: str) -> None:
    codec: Any = get_codec(provider)
    messages = history()
    decoded = decode(codec.encode(messages, text_files="inline"), provider=provider)
    expected = codec.normalize_for_round_trip(prepare_messages(messages), text_files="inline")
    assert texts(decoded) == texts(expected)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_bytes_that_are_not_utf8_and_files_by_url_follow_the_unsupported_policy(
    provider: str,
) -> None:
    found = wire_texts(encode(history(b"\xff\xfe{}"), provider=provider, text_files="inline"))
    assert not any('<file name="weather.json"' in text for text in found)
    assert any("[application/json omitted" in text for text in found)
    by_url = [
        tl.user_message("See", tl.file_part("https://example.com/a.json", "application/json"))
    ]
    found = wire_texts(encode(by_url, provider=provider, text_files="inline"))
    assert not any("<file" in text for text in found)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_inline_with_unsupported_raise_raises_only_for_other_files(provider: str) -> None:
    encode(history(), provider=provider, text_files="inline", unsupported="raise")
    zipped = [tl.user_message("See", tl.file_part(b"PK\x03\x04", "application/zip"))]
    with pytest.raises(UnsupportedContentError):
        encode(zipped, provider=provider, text_files="inline", unsupported="raise")


def test_a_text_file_the_format_carries_stays_a_file() -> None:
    csv = [tl.user_message("See", tl.file_part(b"a,b\n1,2\n", "text/csv", filename="t.csv"))]
    payload = encode(csv, provider="bedrock", text_files="inline")
    assert payload["messages"][0]["content"][1]["document"]["format"] == "csv"


def test_an_unknown_choice_is_refused_naming_the_option() -> None:
    with pytest.raises(ValueError, match="text_files"):
        encode(history(), provider="mistral", text_files="attach")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("media_type", "is_text"),
    [
        ("text/plain", True),
        ("text/csv", True),
        ("text/markdown", True),
        ("text/csv; charset=utf-8", True),
        ("application/json", True),
        ("application/ld+json", True),
        ("application/csv", True),
        ("application/pdf", False),
        ("image/png", False),
    ],
)
def test_text_media_types(media_type: str, is_text: bool) -> None:
    assert is_text_media_type(media_type) is is_text


def test_a_file_named_with_quotes_gets_a_quoted_name() -> None:
    messages = [
        tl.user_message(FilePart(media_type="text/plain", data=b"hi", filename='a "b".txt'))
    ]
    found = wire_texts(encode(messages, provider="openai_chat", text_files="inline"))
    assert '<file name="a \\"b\\".txt" media_type="text/plain">\nhi\n</file>' in found
