"""A provider's error in the middle of any stream (issue 37 item 5): for every format and any
valid event sequence cut before the event that completes it, the format's error event ends
the stream in that error: ``message()`` raises a ``CodecError`` holding its text,
``message(partial=True)`` keeps it in ``threadline.stream_error`` with what arrived, no
``Finish`` is given after it, and the partial message repairs like any cut stream."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.dialect_cases import DIALECTS
from tests.stream_cases import FINAL
from tests.stream_cases import STREAMS
from tests.support import examples
from threadline import CodecError
from threadline import Finish
from threadline import StreamAssembler
from threadline import prepare_messages
from threadline import user_message

ERRORS: dict[str, tuple[dict[str, Any], str]] = {
    "cohere": (
        {"type": "message-end", "delta": {"error": "internal server error"}},
        "internal server error",
    ),
    "anthropic": (
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        "overloaded_error: Overloaded",
    ),
    "openai_responses": (
        {"type": "error", "code": "server_error", "message": "The model failed."},
        "server_error: The model failed.",
    ),
    "gemini": ({"error": {"status": "INTERNAL", "message": "Boom."}}, "INTERNAL: Boom."),
    "bedrock": (
        {"modelStreamErrorException": {"message": "Model stream failed."}},
        "modelStreamErrorException: Model stream failed.",
    ),
    "openai_chat": (
        {"error": {"type": "server_error", "message": "Upstream disconnected."}},
        "server_error: Upstream disconnected.",
    ),
    "mistral": (
        {"error": {"code": "server_error", "message": "Upstream disconnected."}},
        "server_error: Upstream disconnected.",
    ),
    # Ollama ends an NDJSON stream with a line holding only the error's text.
    "ollama": (
        {"error": "an error was encountered while running the model: unexpected EOF"},
        "an error was encountered while running the model: unexpected EOF",
    ),
    **{  # the OpenAI-compatible dialects: the error chunk OpenRouter and vLLM send
        name: (
            {"error": {"code": 502, "message": "Provider returned error"}},
            "502: Provider returned error",
        )
        for name in DIALECTS
    },
}


@pytest.mark.parametrize("provider", sorted(STREAMS))
@settings(max_examples=examples(25), deadline=None)
@given(data=st.data())
def test_an_error_anywhere_before_the_end_reaches_the_caller(
    provider: str, data: st.DataObject
) -> None:
    _, events = data.draw(STREAMS[provider])
    final = next(at for at, event in enumerate(events) if FINAL[provider](event))
    cut = data.draw(st.integers(0, final))
    error, text = ERRORS[provider]
    assembler = StreamAssembler(provider)
    for event in events[:cut]:
        assembler.feed(event)
    after = [*assembler.feed(error), *assembler.close()]
    assert not any(isinstance(event, Finish) for event in after)
    assert not assembler.finished
    with pytest.raises(CodecError, match="ended in an error") as raised:
        assembler.message()
    assert text in str(raised.value)
    partial = assembler.message(partial=True)
    assert partial.metadata["threadline.incomplete"] is True
    assert partial.metadata["threadline.stream_error"] == text
    prepared = prepare_messages([user_message("hi"), partial])
    assert prepare_messages(prepared, "strict") == prepared
