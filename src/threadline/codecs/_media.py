"""Files on the wire (private): base64, ``data:`` URLs and media types from URLs."""

from __future__ import annotations

import base64
import binascii

from threadline.codecs._reading import Reader
from threadline.messages import is_media_type

UNKNOWN_IMAGE = "image/*"
"""The media type of an image known by a URL whose extension does not say."""


def encode_base64(data: bytes) -> str:
    """Standard base64 (``+/``, padded), what ``data:`` URLs and provider APIs expect."""
    return base64.b64encode(data).decode("ascii")


def decode_base64(text: str, reader: Reader, path: str) -> bytes:
    """Bytes from standard (or URL-safe) base64.

    Raises:
        threadline.CodecError: ``text`` is not base64, naming ``path``.
    """
    try:
        if "-" in text or "_" in text:
            return base64.b64decode(text, altchars=b"-_", validate=True)
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        reader.fail(path, f"not valid base64 ({error})")


def data_url(media_type: str, data: bytes) -> str:
    """``data:<media_type>;base64,<standard base64>``."""
    return f"data:{media_type};base64,{encode_base64(data)}"


def parse_data_url(url: str, reader: Reader, path: str) -> tuple[str, bytes] | None:
    """``(media_type, bytes)`` of a ``data:`` URL, or ``None`` for any other URL.

    Raises:
        threadline.CodecError: a ``data:`` URL whose data cannot be decoded, or whose media
            type is not one, naming ``path``.
    """
    if not url.startswith("data:"):
        return None
    header, comma, body = url[5:].partition(",")
    if not comma:
        reader.fail(path, "a data: URL needs a comma before its data")
    media_type, _, encoding = header.partition(";")
    media_type = media_type or "text/plain"
    if not is_media_type(media_type):
        shown = repr(media_type)[:80]
        reader.fail(path, f"the data: URL's {shown} is not a media type such as 'image/png'")
    if encoding == "base64" or header.endswith(";base64"):
        return media_type, decode_base64(body, reader, path)
    from urllib.parse import unquote_to_bytes

    return media_type, unquote_to_bytes(body)


def parse_file_data(
    file_data: str, filename: str | None, default: str, reader: Reader, path: str
) -> tuple[str, bytes]:
    """``(media_type, bytes)`` of an OpenAI ``file_data`` value: a ``data:`` URL, or bare
    base64 whose media type ``filename``'s extension implies (else ``default``).

    Raises:
        threadline.CodecError: the data cannot be decoded, naming ``path``.
    """
    inline = parse_data_url(file_data, reader, path)
    if inline is not None:
        return inline
    return media_type_from_url(filename or "", default), decode_base64(file_data, reader, path)


_EXTENSION_TYPES = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "pdf": "application/pdf",
    "txt": "text/plain",
    "wav": "audio/wav",
    "mp3": "audio/mpeg",
}


def media_type_from_url(url: str, default: str) -> str:
    """The media type a URL's file extension implies, else ``default``.

    A fixed table, not `mimetypes`: that reads the system's tables, and a decoded history
    must not depend on the machine that decoded it.
    """
    path = url.split("?", 1)[0].split("#", 1)[0]
    name = path.rsplit("/", 1)[-1]
    if "." not in name:
        return default
    return _EXTENSION_TYPES.get(name.rsplit(".", 1)[-1].lower(), default)


def image_type_from_url(url: str) -> str:
    """The media type of an image known by its URL only: from the URL's extension when that
    names an image type, else `UNKNOWN_IMAGE`."""
    media_type = media_type_from_url(url, UNKNOWN_IMAGE)
    return media_type if media_type.startswith("image/") else UNKNOWN_IMAGE
