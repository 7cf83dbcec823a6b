"""The OpenAI-compatible dialects (issue 41 item 1): reasoning read from responses, requests
and streams where each provider puts it, tagged with the dialect's codec name; sent back
only where and to the models that take it; the documented examples round-trip."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import threadline as tl
from tests.dialect_cases import DIALECTS
from tests.dialect_cases import MODELS
from tests.dialect_cases import THOUGHT
from tests.dialect_cases import completion
from tests.dialect_cases import recording
from tests.stream_recordings import OPENAI_CHAT as CHAT_STREAM
from tests.support import examples
from threadline import ReasoningPart
from threadline.codecs import decode
from threadline.codecs import decode_response
from threadline.codecs import encode
from threadline.codecs import get_codec
from threadline.codecs._dialects import DETAIL
from threadline.errors import CodecError
from threadline.streaming import StreamAssembler
from threadline.testing import check_codec

SENT_BACK = {"deepseek": "reasoning_content", "moonshot": "reasoning_content"}
"""The dialects that take their reasoning back, and the field (OpenRouter: its entries)."""


def tool_loop(name: str) -> list[tl.Message]:
    return [
        tl.user_message("What is the weather in Paris?"),
        decode_response(completion(name), provider=name),
        tl.tool_message(tl.tool_result_part("call_00_0abc", "18°C", name="get_weather")),
    ]


@pytest.mark.parametrize("name", DIALECTS)
def test_a_response_reads_its_reasoning_tagged_with_the_codec_name(name: str) -> None:
    message = decode_response(completion(name, "Checking."), provider=name)
    reasoning = [part for part in message.parts if isinstance(part, ReasoningPart)]
    assert reasoning
    assert all(part.provider == name for part in reasoning)
    assert all(part.model == MODELS[name] for part in reasoning)
    assert THOUGHT in [part.text for part in reasoning]
    assert message.parts[0] is reasoning[0]  # reasoning first
    assert message.text == "Checking."
    assert message.metadata["provider"] == name


@pytest.mark.parametrize("name", DIALECTS)
def test_own_reasoning_goes_back_only_where_the_dialect_takes_it(name: str) -> None:
    history = tool_loop(name)
    sent = encode(history, provider=name, model=MODELS[name])["messages"][1]
    fields = {key for key in sent if key.startswith("reasoning")}
    if name == "openrouter":
        assert fields == {"reasoning_details"}
    elif name in SENT_BACK:
        assert fields == {SENT_BACK[name]}
        assert sent[SENT_BACK[name]] == THOUGHT
    else:
        assert fields == set()
    # never to another model, nor under reasoning="drop"
    variants: list[dict[str, Any]] = [{"model": "another-model-2026"}, {"reasoning": "drop"}]
    for options in variants:
        again = encode(history, provider=name, **options)["messages"][1]
        assert again.get("reasoning_content", "") == ""
        assert "reasoning_details" not in again


@pytest.mark.parametrize("name", DIALECTS)
def test_a_dialect_replays_no_other_dialects_reasoning(name: str) -> None:
    other = "moonshot" if name == "deepseek" else "deepseek"
    history = tool_loop(other)
    sent = encode(history, provider=name)["messages"][1]
    assert THOUGHT not in str(sent)
    as_text = encode(history, provider=name, reasoning="text")["messages"][1]
    assert as_text["content"] == THOUGHT


@pytest.mark.parametrize("name", DIALECTS)
def test_the_documented_example_round_trips(name: str) -> None:
    history = tool_loop(name)
    codec: Any = get_codec(name)  # the Codec protocol names the three wire functions
    payload = encode(history, provider=name, model=MODELS[name])
    expected = codec.normalize_for_round_trip(tl.prepare_messages(history), model=MODELS[name])
    decoded = decode(payload, provider=name)
    assert [(m.role, m.parts) for m in decoded] == [(m.role, m.parts) for m in expected]
    # a request names no model: read back, its reasoning replays to an encode given none
    assert encode(decoded, provider=name) == encode(history, provider=name)


@pytest.mark.parametrize("name", DIALECTS)
def test_the_codec_contract(name: str) -> None:
    check_codec(get_codec(name), examples=examples(40))


@pytest.mark.parametrize("name", DIALECTS)
def test_a_stream_assembles_the_message_decode_response_reads(name: str) -> None:
    events = recording(name, CHAT_STREAM)
    assembler = StreamAssembler(name)
    for event in events:
        assembler.feed(event)
    message = assembler.message()
    reasoning = [part for part in message.parts if isinstance(part, ReasoningPart)]
    assert [part.text for part in reasoning][:1] == ["The user wants the weather."]
    assert all(part.provider == name for part in reasoning)
    assert message.text  # the content streamed after the reasoning


def test_openrouter_entries_come_back_unchanged() -> None:
    response = completion("openrouter")
    details = copy.deepcopy(response["choices"][0]["message"]["reasoning_details"])
    message = decode_response(response, provider="openrouter")
    parts = [part for part in message.parts if isinstance(part, ReasoningPart)]
    assert [dict(part.metadata[DETAIL]) for part in parts] == details
    assert parts[1].redacted
    assert parts[1].encrypted == details[1]["data"]
    stored = tl.Message.model_validate_json(message.model_dump_json())
    sent = encode([tl.user_message("Weather?"), stored], provider="openrouter")
    assert sent["messages"][1]["reasoning_details"] == details


def test_openrouter_text_only_reasoning_goes_back_as_reasoning() -> None:
    response = completion("openrouter", "Done.", calls=False)
    del response["choices"][0]["message"]["reasoning_details"]
    message = decode_response(response, provider="openrouter")
    sent = encode([tl.user_message("Hi"), message], provider="openrouter")["messages"][1]
    assert sent["reasoning"] == THOUGHT
    assert "reasoning_details" not in sent


@pytest.mark.parametrize("name", ["vllm", "groq", "together"])
def test_think_tags_in_content_are_reasoning(name: str) -> None:
    response = completion(name, calls=False)
    message = response["choices"][0]["message"]
    message.pop("reasoning_content", None)
    message.pop("reasoning", None)
    message["content"] = "<think>\nCompare 9.11 and 9.8.\n</think>\n\n9.8 is greater."
    read = decode_response(response, provider=name)
    assert [type(part).__name__ for part in read.parts] == ["ReasoningPart", "TextPart"]
    assert isinstance(read.parts[0], ReasoningPart)
    assert read.parts[0].text == "Compare 9.11 and 9.8."
    assert read.text == "9.8 is greater."


def test_deepseek_r1_gets_no_reasoning_content_back() -> None:
    history = tool_loop("deepseek")
    for model in ("deepseek-r1", "deepseek-ai/DeepSeek-R1-0528"):
        sent = encode(history, provider="deepseek", model=model)["messages"]
        assert not any("reasoning_content" in message for message in sent), model
    assert "reasoning_content" in encode(history, provider="deepseek")["messages"][1]


def test_deepseek_aliases_replay_to_the_model_they_name() -> None:
    response = completion("deepseek")
    response["model"] = "deepseek-reasoner"
    message = decode_response(response, provider="deepseek")
    assert isinstance(message.parts[0], ReasoningPart)
    assert message.parts[0].model == "deepseek-v4-flash"
    history = [*tool_loop("deepseek")[:1], message]
    sent = encode(history, provider="deepseek", model="deepseek-reasoner")
    assert sent["messages"][1]["reasoning_content"] == THOUGHT
    other = encode(history, provider="deepseek", model="deepseek-v4-pro")
    assert other["messages"][1]["reasoning_content"] == ""


@pytest.mark.parametrize(
    ("details", "path"),
    [("a text", "reasoning_details"), (["entry"], "reasoning_details[0]")],
)
def test_bad_reasoning_details_are_refused_naming_the_path(details: Any, path: str) -> None:
    response = completion("openrouter")
    response["choices"][0]["message"]["reasoning_details"] = details
    with pytest.raises(CodecError, match=path.replace("[", r"\[")):
        decode_response(response, provider="openrouter")


def test_a_bad_reasoning_field_is_refused_naming_it() -> None:
    response = completion("deepseek")
    response["choices"][0]["message"]["reasoning_content"] = 3
    with pytest.raises(CodecError, match="reasoning_content"):
        decode_response(response, provider="deepseek")
