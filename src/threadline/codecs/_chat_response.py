"""Reading a chat completion: the response shape OpenAI Chat Completions and Mistral share.

The assistant message is ``choices[choice].message``; the response's ``id`` and ``model``, the
choice's ``finish_reason`` and the ``usage`` become the message's metadata. Each format reads
the message's own fields (content chunks, tool calls) with the reader it uses for requests.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from threadline._usage_readers import read_usage
from threadline.codecs._reading import Reader
from threadline.codecs._reading import as_json_document
from threadline.codecs._reading import pick_choice
from threadline.codecs._reading import response_message
from threadline.codecs._reading import response_metadata
from threadline.messages import Message

ReadMessage = Callable[[Mapping[str, Any], str, Reader, "str | None"], list[Any]]
"""A format's reader of the chosen ``message`` object: ``(message, path, reader, model)`` to
its parts, where ``model`` is the response's ``model`` (for the reasoning parts it tags)."""


def read_chat_completion(
    response: Any,
    *,
    choice: int,
    format_name: str,
    provider: str,
    usage_format: str,
    read_message: ReadMessage,
) -> Message:
    """The assistant message of a chat completion (a document within its limits).

    ``format_name`` names the format in errors, ``provider`` goes to the metadata and
    ``usage_format`` picks the usage reader (`read_usage`).

    Raises:
        threadline.CodecError: the document is not a chat completion or holds no choice
            ``choice``.
    """
    reader = Reader(f"{format_name} response")
    document = reader.expect_object(as_json_document(response, format_name), "")
    choices = reader.expect_list(reader.field(document, "choices", ""), "choices")
    picked, at = pick_choice(reader, choices, "choices", choice, noun="choice")
    path = f"{at}.message"
    message = reader.expect_object(reader.field(picked, "message", at), path)
    model = reader.optional_str(document, "model", "")
    parts = read_message(message, path, reader, model)
    usage = reader.optional_json(document, "usage", "")
    metadata = response_metadata(
        provider=provider,
        response_id=reader.optional_str(document, "id", ""),
        model=model,
        stop_reason=reader.optional_str(picked, "finish_reason", at),
        usage=read_usage(usage_format, usage, reader),
        raw_usage=usage,
    )
    return response_message(parts, path, metadata)
