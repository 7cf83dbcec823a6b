"""The marks of a blob reference, which only a store may write, and the check for them.

A store with a blob store keeps a large file's bytes out of the message and leaves a reference
part in its place (see `threadline.stores.blobs`): a ``threadline-blob:`` URL and the
``threadline.blob`` metadata key. Input from outside must never carry that key, or a client
could name a blob the store would then load: the entry points that turn outside data into
messages (``load_json``, ``History`` methods given mappings) refuse it wherever it appears, in
message metadata, part metadata and a tool result's content, and a store with blobs refuses it
on what it is asked to write. ``sanitize_untrusted`` drops it with every other
``threadline.*`` key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from threadline._validation import invalid
from threadline.errors import ErrorDetail
from threadline.messages import Message
from threadline.messages import ToolResultPart

__all__ = [
    "BLOB_METADATA_KEY",
    "BLOB_URL_PREFIX",
    "blob_mark_errors",
    "may_hold_blob_marks",
    "refuse_blob_marks",
]

BLOB_URL_PREFIX: Final = "threadline-blob:"
"""The URL scheme of a reference part: ``threadline-blob:sha256:<hex>``."""
BLOB_METADATA_KEY: Final = "threadline.blob"
"""The metadata key that marks a reference part; its value is the blob key."""

_MARK = BLOB_METADATA_KEY.encode()
_PATH_KEY = f"[{BLOB_METADATA_KEY!r}]"
_FIX = (
    f"the metadata key {BLOB_METADATA_KEY!r} is reserved for the blob references a store "
    "writes and is never accepted from input; remove it (sanitize_untrusted drops every "
    "'threadline.*' key)"
)


def may_hold_blob_marks(data: str | bytes | bytearray) -> bool:
    """Whether JSON text could hold the reserved key (a cheap scan before looking closer).

    A JSON string can spell a character as a ``\\u`` escape, so text with any escape is looked
    at closely too.
    """
    if isinstance(data, str):
        return BLOB_METADATA_KEY in data or "\\u" in data
    return _MARK in data or b"\\u" in data


def blob_mark_errors(message: Message, path: str) -> list[ErrorDetail]:
    """Where ``message`` (at ``path``) carries the reserved key; ``[]`` when nowhere."""
    found: list[str] = []
    if BLOB_METADATA_KEY in message.metadata:
        found.append(f"{path}.metadata")
    for index, part in enumerate(message.parts):
        if BLOB_METADATA_KEY in part.metadata:
            found.append(f"{path}.parts[{index}].metadata")
        if type(part) is ToolResultPart and not isinstance(part.content, str):
            found.extend(
                f"{path}.parts[{index}].content[{position}].metadata"
                for position, item in enumerate(part.content)
                if BLOB_METADATA_KEY in item.metadata
            )
    return [ErrorDetail(where + _PATH_KEY, _FIX, "reserved_key") for where in found]


def refuse_blob_marks(messages: Sequence[Message], summary: str) -> None:
    """Refuse ``messages`` (paths ``messages[i]``) if any carries the reserved key.

    Raises:
        threadline.ValidationError: ``summary``, then each place that carries the key.
    """
    details = [
        detail
        for index, message in enumerate(messages)
        for detail in blob_mark_errors(message, f"messages[{index}]")
    ]
    if details:
        raise invalid(summary, details)
