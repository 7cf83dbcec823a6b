"""``encode(..., tools=, tool_choice=)``: each provider's own fields (``codecs/_requests.py``),
the wire names shared with the history, and ``decode_response(..., tools=)`` reading back."""

from __future__ import annotations

from typing import Any

import pytest

import threadline as tl
from threadline import Message
from threadline.codecs import codec_names
from threadline.codecs import decode_response
from threadline.codecs import encode
from threadline.codecs import wire_tool_names
from threadline.codecs._tool_names import STANDARD

FORMATS = codec_names()
HISTORY_KEYS = {"messages", "contents", "input", "system", "systemInstruction", "instructions"}


def weather(city: str, days: int = 1) -> str:
    """Get the weather.

    Args:
        city: The city.
    """
    return "sunny"


WEATHER = tl.tool_from_function(weather)
STRICT_WEATHER = tl.tool_from_function(weather, strict=True)
READ = tl.ToolDefinition(
    "files.read",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
NO_ARGS = tl.ToolDefinition("now")
WIRE_READ = STANDARD.mint("files.read")


def ask() -> list[Message]:
    return [tl.user_message("Weather in Oslo?")]


def loop(name: str = "files.read") -> list[Message]:
    return [
        tl.user_message("Read it."),
        tl.assistant_message(tl.tool_call_part("call_1", name, {"path": "a.txt"})),
        tl.tool_message(tl.tool_result_part("call_1", "hello", name=name)),
    ]


def extra(body: dict[str, Any]) -> dict[str, Any]:
    """The fields beside the history."""
    return {key: value for key, value in body.items() if key not in HISTORY_KEYS}


@pytest.mark.parametrize("provider", FORMATS)
def test_nothing_is_added_for_arguments_left_at_their_defaults(provider: str) -> None:
    assert encode(ask(), provider=provider, tools=()) == encode(ask(), provider=provider)
    assert extra(encode(ask(), provider=provider)) == {}


def test_openai_chat_fields() -> None:
    body = encode(ask(), provider="openai_chat", tools=[WEATHER, READ], tool_choice="files.read")
    assert extra(body) == {
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "weather",
                    "description": "Get the weather.",
                    "parameters": dict(WEATHER.parameters),
                },
            },
            {
                "type": "function",
                "function": {
                    "name": WIRE_READ,
                    "description": "Read a file.",
                    "parameters": dict(READ.parameters),
                },
            },
        ],
        "tool_choice": {"type": "function", "function": {"name": WIRE_READ}},
    }


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        ("openai_chat", "required"),
        ("mistral", "any"),
        ("openai_responses", "required"),
        ("anthropic", {"type": "any"}),
        ("gemini", {"functionCallingConfig": {"mode": "ANY"}}),
        ("bedrock", {"any": {}}),
    ],
)
def test_required_in_each_providers_words(provider: str, expected: Any) -> None:
    fields = extra(encode(ask(), provider=provider, tools=[WEATHER], tool_choice="required"))
    if provider == "gemini":
        assert fields["toolConfig"] == expected
    elif provider == "bedrock":
        assert fields["toolConfig"]["toolChoice"] == expected
    else:
        assert fields["tool_choice"] == expected


def test_strict_tools_get_the_strict_schema_where_openai_reads_it() -> None:
    chat = encode(ask(), provider="openai_chat", tools=[STRICT_WEATHER])["tools"][0]["function"]
    assert chat["strict"] is True
    assert chat["parameters"]["additionalProperties"] is False
    assert chat["parameters"]["required"] == ["city", "days"]
    loose = tl.tool_from_function(weather, name="loose")
    responses = encode(ask(), provider="openai_responses", tools=[STRICT_WEATHER, loose])
    assert [tool["strict"] for tool in responses["tools"]] == [True, False]
    anthropic = encode(ask(), provider="anthropic", tools=[STRICT_WEATHER])["tools"][0]
    assert anthropic == {
        "name": "weather",
        "description": "Get the weather.",
        "input_schema": dict(WEATHER.parameters),
    }


def test_anthropic_gemini_and_bedrock_shapes() -> None:
    body = encode(ask(), provider="anthropic", tools=[NO_ARGS], tool_choice="now")
    assert extra(body) == {
        "tools": [{"name": "now", "input_schema": {"type": "object", "properties": {}}}],
        "tool_choice": {"type": "tool", "name": "now"},
    }
    body = encode(ask(), provider="gemini", tools=[NO_ARGS, READ], tool_choice="files.read")
    assert extra(body) == {
        "tools": [
            {
                "functionDeclarations": [
                    {"name": "now"},  # Gemini refuses an object schema without properties
                    {
                        "name": "files.read",  # Gemini takes dots
                        "description": "Read a file.",
                        "parameters": dict(READ.parameters),
                    },
                ]
            }
        ],
        "toolConfig": {
            "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["files.read"]}
        },
    }
    body = encode(ask(), provider="bedrock", tools=[READ], tool_choice="auto")
    assert extra(body) == {
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": WIRE_READ,
                        "description": "Read a file.",
                        "inputSchema": {"json": dict(READ.parameters)},
                    }
                }
            ],
            "toolChoice": {"auto": {}},
        }
    }


def test_none_and_auto() -> None:
    assert encode(ask(), provider="anthropic", tools=[WEATHER], tool_choice="none")[
        "tool_choice"
    ] == {"type": "none"}
    assert (
        encode(ask(), provider="mistral", tools=[WEATHER], tool_choice="none")["tool_choice"]
        == "none"
    )
    assert encode(ask(), provider="gemini", tools=[WEATHER], tool_choice="auto")["toolConfig"] == {
        "functionCallingConfig": {"mode": "AUTO"}
    }


def test_bedrock_cannot_say_none() -> None:
    with pytest.raises(tl.UnsupportedContentError, match=r"tool_choice='none'.*bedrock") as info:
        encode(ask(), provider="bedrock", tools=[WEATHER], tool_choice="none")
    assert info.value.provider == "bedrock"


def test_bedrock_declares_the_tools_the_history_calls_when_none_are_given() -> None:
    body = encode(loop(), provider="bedrock")
    assert body["toolConfig"] == {
        "tools": [{"toolSpec": {"name": WIRE_READ, "inputSchema": {"json": {"type": "object"}}}}]
    }
    assert "toolConfig" not in encode(ask(), provider="bedrock")
    given = encode(loop(), provider="bedrock", tools=[WEATHER])["toolConfig"]
    assert [tool["toolSpec"]["name"] for tool in given["tools"]] == ["weather"]


@pytest.mark.parametrize("provider", FORMATS)
def test_a_choice_naming_no_given_tool_is_refused(provider: str) -> None:
    with pytest.raises(tl.ValidationError, match="'search' is neither") as info:
        encode(ask(), provider=provider, tools=[WEATHER], tool_choice="search")
    assert info.value.errors[0].path == "tool_choice"
    with pytest.raises(tl.ValidationError, match="needs tools"):
        encode(ask(), provider=provider, tool_choice="auto")


def test_bad_tools_are_refused_clearly() -> None:
    with pytest.raises(TypeError, match=r"tools=\[tool\]"):
        encode(ask(), provider="anthropic", tools=WEATHER)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"tools\[1\] must be a threadline.ToolDefinition"):
        encode(ask(), provider="anthropic", tools=[WEATHER, {"name": "x"}])  # type: ignore[list-item]
    with pytest.raises(tl.ValidationError, match="names two tools") as info:
        encode(ask(), provider="anthropic", tools=[WEATHER, WEATHER])
    assert info.value.errors[0].path == "tools[1].name"
    with pytest.raises(TypeError, match="tool_choice must be"):
        encode(ask(), provider="anthropic", tools=[WEATHER], tool_choice=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", ["anthropic", "openai_chat", "mistral", "bedrock"])
def test_definitions_calls_and_results_share_one_wire_name(provider: str) -> None:
    body = encode(loop(), provider=provider, tools=[READ], tool_choice="files.read")
    text = repr(body)
    assert "files.read" not in text
    assert text.count(WIRE_READ) >= 3


def test_a_defined_name_equal_to_a_minted_one_moves_the_history_name() -> None:
    """A tool literally named like the wire name of a history tool keeps its name; the
    history's tool gets the next wire name, in its calls and results alike."""
    clash = tl.ToolDefinition(WIRE_READ, "Shadows the minted name.")
    body = encode(loop(), provider="anthropic", tools=[clash, READ])
    names = [tool["name"] for tool in body["tools"]]
    assert names[0] == WIRE_READ
    assert names[1] != WIRE_READ
    call = body["messages"][1]["content"][0]
    assert call["name"] == names[1]
    mapping = wire_tool_names([*loop(), clash, READ], provider="anthropic")
    assert mapping == {names[1]: "files.read"}


def test_stored_history_is_never_renamed() -> None:
    history = loop()
    before = [message.model_copy(deep=True) for message in history]
    encode(history, provider="anthropic", tools=[tl.ToolDefinition(WIRE_READ), READ])
    assert history == before
    assert history[1].tool_calls[0].name == "files.read"


def chat_reply(name: str, arguments: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_9",
                            "type": "function",
                            "function": {"name": name, "arguments": arguments},
                        }
                    ],
                },
            }
        ],
    }


def test_decode_response_maps_the_definitions_names_back() -> None:
    reply = chat_reply(WIRE_READ, '{"path": "b.txt"}')
    plain = decode_response(reply, provider="openai_chat")
    assert plain.tool_calls[0].name == WIRE_READ
    message = decode_response(reply, provider="openai_chat", tools=[READ])
    assert message.tool_calls[0].name == "files.read"
    explicit = decode_response(
        reply, provider="openai_chat", tools=[READ], tool_names={WIRE_READ: "mine"}
    )
    assert explicit.tool_calls[0].name == "mine"


@pytest.mark.parametrize("provider", ["openai_chat", "mistral"])
def test_decode_response_drops_the_nulls_strict_mode_added(provider: str) -> None:
    reply = chat_reply("weather", '{"city": "Oslo", "days": null}')
    if provider == "mistral":
        reply["choices"][0]["message"]["tool_calls"][0]["id"] = "abcdefghi"
    message = decode_response(reply, provider=provider, tools=[STRICT_WEATHER])
    assert dict(message.tool_calls[0].arguments) == {"city": "Oslo"}
    kept = decode_response(reply, provider=provider, tools=[WEATHER])  # not strict: as sent
    assert dict(kept.tool_calls[0].arguments) == {"city": "Oslo", "days": None}


def test_encode_accepts_any_iterable_of_definitions() -> None:
    first = encode(ask(), provider="openai_chat", tools=(tool for tool in [WEATHER]))
    assert first == encode(ask(), provider="openai_chat", tools=[WEATHER])
