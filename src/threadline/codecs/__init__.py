"""Provider wire formats: one module per format, each with ``encode``, ``decode`` and
``decode_response`` (the [`Codec`][] protocol).

``encode(messages, provider=NAME)``, ``decode(payload, provider=NAME)`` and
``decode_response(response, provider=NAME)`` dispatch by codec name; a codec module is imported
the first time its name is used. ``docs/providers.md`` says what each format carries.
"""

from __future__ import annotations

from threadline.codecs._registry import codec_names
from threadline.codecs._registry import decode
from threadline.codecs._registry import decode_response
from threadline.codecs._registry import encode
from threadline.codecs._registry import get_codec
from threadline.codecs._registry import wire_tool_names
from threadline.codecs.base import Codec

__all__ = [
    "Codec",
    "codec_names",
    "decode",
    "decode_response",
    "encode",
    "get_codec",
    "wire_tool_names",
]
