"""Stream edges (issue 37, items 5 and 7): a Bedrock stream cut between ``messageStop`` and its
``metadata``; an ``error`` chunk in an OpenAI Chat or Mistral stream (OpenAI-compatible servers
and OpenRouter send one mid-stream); the events of the OpenAI SDK's
``client.chat.completions.stream()`` helper; and the model a Bedrock stream needs to replay its
reasoning to that model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.stream_recordings import BEDROCK
from tests.stream_recordings import MISTRAL
from tests.stream_recordings import OPENAI_CHAT
from tests.stream_recordings import chat_chunk
from tests.stream_recordings import mistral_chunk
from threadline import CodecError
from threadline import Finish
from threadline import Message
from threadline import ReasoningPart
from threadline import StreamAssembler
from threadline import TextPart
from threadline import assemble
from threadline import decode_response
from threadline import encode
from threadline import prepare_messages
from threadline import user_message


def same(a: Message, b: Message) -> bool:
    return (a.role, a.parts, a.metadata) == (b.role, b.parts, b.metadata)


# -- Bedrock: metadata comes last ------------------------------------------------------------


def test_a_bedrock_stream_cut_before_its_metadata_is_not_finished() -> None:
    stop = next(at for at, event in enumerate(BEDROCK) if "messageStop" in event)
    assert "metadata" in BEDROCK[stop + 1]
    assembler = StreamAssembler("bedrock")
    for event in BEDROCK[: stop + 1]:
        assembler.feed(event)
    assert not assembler.finished
    with pytest.raises(CodecError, match="not finished"):
        assembler.message()
    with pytest.raises(CodecError, match="not finished"):
        assemble(BEDROCK[: stop + 1], provider="bedrock")
    partial = assembler.message(partial=True)
    assert partial.metadata["threadline.incomplete"] is True
    assert partial.metadata["stop_reason"] == "tool_use"
    assert partial.usage is None
    prepared = prepare_messages([user_message("hi"), partial])
    assert prepare_messages(prepared, "strict") == prepared


def test_a_bedrock_error_between_message_stop_and_metadata_ends_the_stream() -> None:
    stop = next(at for at, event in enumerate(BEDROCK) if "messageStop" in event)
    error = {"modelStreamErrorException": {"message": "Model stream failed."}}
    assembler = StreamAssembler("bedrock")
    for event in [*BEDROCK[: stop + 1], error]:
        assembler.feed(event)
    with pytest.raises(CodecError, match="modelStreamErrorException: Model stream failed"):
        assembler.message()
    partial = assembler.message(partial=True)
    assert partial.metadata["threadline.stream_error"].startswith("modelStreamErrorException")
    with pytest.raises(CodecError, match="after messageStop"):
        assembler.feed({"messageStop": {"stopReason": "end_turn"}})


def test_a_whole_bedrock_stream_finishes_once_at_its_metadata() -> None:
    assembler = StreamAssembler("bedrock")
    finishes = [
        (at, neutral)
        for at, event in enumerate(BEDROCK)
        for neutral in assembler.feed(event)
        if isinstance(neutral, Finish)
    ]
    assert [at for at, _ in finishes] == [len(BEDROCK) - 1]
    assert finishes[0][1].usage is not None
    assert assembler.finished
    assert assembler.message().usage is not None


# -- an error chunk in a Chat Completions stream --------------------------------------------

_OPENROUTER_ERROR: dict[str, Any] = {
    # https://openrouter.ai/docs/api-reference/streaming ("Handling Errors During Streaming")
    "id": "cmpl-abc123",
    "object": "chat.completion.chunk",
    "created": 1702256327,
    "model": "openai/gpt-4o",
    "provider": "openai",
    "error": {"code": "server_error", "message": "Provider disconnected unexpectedly"},
    "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
}
_BARE_ERROR: dict[str, Any] = {
    # what OpenAI's API and vLLM send: one data line holding only the error
    "error": {
        "message": "The server had an error while processing your request.",
        "type": "server_error",
        "param": None,
        "code": None,
    }
}


def _chat_text(provider: str) -> list[dict[str, Any]]:
    chunk = chat_chunk if provider == "openai_chat" else mistral_chunk
    return [chunk({"role": "assistant", "content": ""}), chunk({"content": "Checking the"})]


@pytest.mark.parametrize("provider", ["openai_chat", "mistral"])
@pytest.mark.parametrize(
    ("error", "text"),
    [
        (_OPENROUTER_ERROR, "server_error: Provider disconnected unexpectedly"),
        (_BARE_ERROR, "server_error: The server had an error while processing your request."),
    ],
)
def test_an_error_chunk_reaches_the_caller(provider: str, error: dict[str, Any], text: str) -> None:
    assembler = StreamAssembler(provider)
    neutral = [event for chunk in [*_chat_text(provider), error] for event in assembler.feed(chunk)]
    assert not any(isinstance(event, Finish) for event in [*neutral, *assembler.close()])
    assert not assembler.finished
    with pytest.raises(CodecError, match="ended in an error: " + text.replace(".", r"\.")):
        assembler.message()
    partial = assembler.message(partial=True)
    assert partial.metadata["threadline.incomplete"] is True
    assert partial.metadata["threadline.stream_error"] == text
    assert partial.parts == (TextPart(text="Checking the"),)


@pytest.mark.parametrize(
    ("error", "text"),
    [
        ({"error": "upstream timed out"}, "upstream timed out"),
        ({"error": {"message": "Bad gateway", "code": 502}}, "502: Bad gateway"),
        ({"error": {"message": "x", "type": "BadRequestError", "code": 400}}, "BadRequestError"),
        ({"error": {}}, "error"),
        ({"error": ["odd"]}, '["odd"]'),
    ],
)
def test_every_error_shape_keeps_its_text(error: dict[str, Any], text: str) -> None:
    assembler = StreamAssembler("openai_chat")
    for chunk in [*_chat_text("openai_chat"), error]:
        assembler.feed(chunk)
    with pytest.raises(CodecError, match="ended in an error"):
        assembler.message()
    assert text in assembler.message(partial=True).metadata["threadline.stream_error"]


def test_an_error_chunk_after_the_finish_reason_fails_the_message() -> None:
    """The finish reason came, then an error instead of the usage chunk: the stream did not
    end as a response does, and the caller hears why."""
    events = OPENAI_CHAT[:-1]  # without the usage chunk
    assembler = StreamAssembler("openai_chat")
    for event in [*events, _BARE_ERROR]:
        assembler.feed(event)
    assert not any(isinstance(event, Finish) for event in assembler.close())
    with pytest.raises(CodecError, match="server_error"):
        assembler.message()
    assert "server_error" in assembler.message(partial=True).metadata["threadline.stream_error"]


@pytest.mark.parametrize("provider", ["openai_chat", "mistral"])
def test_an_error_chunk_after_the_finish_is_refused_with_its_text(provider: str) -> None:
    """Once ``Finish`` was given (with the usage), the message no longer changes."""
    events = OPENAI_CHAT if provider == "openai_chat" else MISTRAL
    assembler = StreamAssembler(provider)
    for event in events:
        assembler.feed(event)
    finished = assembler.message()
    with pytest.raises(CodecError, match="after the stream ended: server_error"):
        assembler.feed(_BARE_ERROR)
    assert same(assembler.message(), finished)
    assert assembler.finished


def test_a_null_error_field_is_no_error() -> None:
    events = [{**chunk, "error": None} for chunk in OPENAI_CHAT]
    expected = assemble(OPENAI_CHAT, provider="openai_chat")
    assert same(assemble(events, provider="openai_chat"), expected)


def test_a_whole_mistral_stream_still_assembles() -> None:
    assert assemble(MISTRAL, provider="mistral").parts


# -- the OpenAI SDK's client.chat.completions.stream() helper -------------------------------


def _sse(chunks: list[dict[str, Any]]) -> bytes:
    lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    return "".join([*lines, "data: [DONE]\n\n"]).encode()


def _helper_events(chunks: list[dict[str, Any]]) -> list[Any]:
    """The events ``client.chat.completions.stream()`` yields for ``chunks`` (the SDK's own
    helper, over a fake transport)."""
    openai = pytest.importorskip("openai")
    try:
        import httpx2 as httpx  # what this SDK build uses
    except ImportError:
        httpx = pytest.importorskip("httpx")

    def answer(request: Any) -> Any:
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(200, headers=headers, content=_sse(chunks))

    with httpx.Client(transport=httpx.MockTransport(answer)) as http:
        client = openai.OpenAI(api_key="test", base_url="http://test.invalid/v1", http_client=http)
        with client.chat.completions.stream(
            model="gpt-4o", messages=[{"role": "user", "content": "Weather in Paris?"}]
        ) as stream:
            return list(stream)


def test_the_sdk_stream_helpers_events_assemble_like_its_chunks() -> None:
    events = _helper_events(OPENAI_CHAT)
    from openai.lib.streaming.chat import ChunkEvent

    kinds = {type(event).__name__ for event in events}
    assert {"ChunkEvent", "FunctionToolCallArgumentsDeltaEvent"} <= kinds
    assert len(events) > len(OPENAI_CHAT)  # derived events beside each chunk
    expected = assemble(OPENAI_CHAT, provider="openai_chat")
    assert same(assemble(events, provider="openai_chat"), expected)
    assert expected.usage is not None
    # the neutral events are those of the chunks alone: each once
    by_chunks = StreamAssembler("openai_chat")
    from_chunks = [n for event in OPENAI_CHAT for n in by_chunks.feed(event)]
    by_helper = StreamAssembler("openai_chat")
    from_helper = [n for event in events for n in by_helper.feed(event)]
    assert from_helper == from_chunks
    # and a ChunkEvent dumped to a dict reads the same
    dumped = [e.model_dump(mode="json") for e in events if isinstance(e, ChunkEvent)]
    assert same(assemble(dumped, provider="openai_chat"), expected)


def test_the_sdk_stream_helpers_text_events_assemble() -> None:
    chunks = [
        chat_chunk({"role": "assistant", "content": ""}),
        chat_chunk({"content": "Sunny, "}),
        chat_chunk({"content": "22 °C."}),
        chat_chunk({}, "stop"),
    ]
    events = _helper_events(chunks)
    assert {type(event).__name__ for event in events} >= {"ContentDeltaEvent", "ContentDoneEvent"}
    message = assemble(events, provider="openai_chat")
    assert message.text == "Sunny, 22 °C."
    assert same(message, assemble(chunks, provider="openai_chat"))


def test_only_the_derived_events_are_refused_with_what_to_feed() -> None:
    events = [e for e in _helper_events(OPENAI_CHAT) if type(e).__name__ != "ChunkEvent"]
    hint = r"client\.chat\.completions\.stream\(\) came and no ChunkEvent"
    with pytest.raises(CodecError, match=hint):
        assemble(events, provider="openai_chat")


def test_a_chunk_event_without_its_chunk_is_refused() -> None:
    with pytest.raises(CodecError, match="chunk"):
        StreamAssembler("openai_chat").feed({"type": "chunk"})


# -- Bedrock reasoning and the model it replays to (item 7) ---------------------------------


def test_a_bedrock_stream_given_its_model_replays_reasoning_to_it() -> None:
    model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    tagged = assemble(BEDROCK, provider="bedrock", model=model)
    untagged = assemble(BEDROCK, provider="bedrock")
    history = [user_message("Top song?")]

    def reasoning(message: Message) -> list[Any]:
        body = encode([*history, message], provider="bedrock", model=model)
        turns = [turn for turn in body["messages"] if turn["role"] == "assistant"]
        return [block for block in turns[0]["content"] if "reasoningContent" in block]

    assert isinstance(tagged.parts[0], ReasoningPart)
    assert tagged.parts[0].model == model
    assert len(reasoning(tagged)) == 1
    # the replay rule: reasoning that names no model goes only to an encode given none
    assert untagged.parts[0].model is None  # type: ignore[union-attr]
    assert reasoning(untagged) == []
    response = decode_response(
        {"output": {"message": {"role": "assistant", "content": []}}}, provider="bedrock"
    )
    assert "model" not in response.metadata
