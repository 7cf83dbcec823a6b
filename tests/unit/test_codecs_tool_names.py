"""Tool names a provider refuses are sent under wire names (``codecs/_tool_names.py``), and
``wire_tool_names`` / ``decode(..., tool_names=)`` give the stored names back."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.dialect_cases import DIALECTS
from tests.strategies import conversations
from tests.support import examples
from threadline import Message
from threadline import prepare_messages
from threadline.codecs import codec_names
from threadline.codecs import decode
from threadline.codecs import decode_response
from threadline.codecs import encode
from threadline.codecs import wire_tool_names
from threadline.codecs._tool_names import GEMINI
from threadline.codecs._tool_names import STANDARD
from threadline.codecs._tool_names import ToolNameRule
from threadline.codecs._tool_names import map_tool_names
from threadline.codecs._tool_names import rename_tools

PATTERNS = {
    "anthropic": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "bedrock": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "cohere": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "gemini": re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}"),  # 64: what the live API takes
    "mistral": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "openai_chat": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "openai_responses": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "ollama": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    **{name: re.compile(r"[a-zA-Z0-9_-]{1,64}") for name in DIALECTS},
}
HOSTILE = ("files.read", "get weather", "t" * 70, "ns:lookup", "tool/v2", "météo", "1st", "数据")
RULES = {"standard": STANDARD, "gemini": GEMINI}


def conversation(*names: str) -> list[Message]:
    """A user question, then per name a call and its result (the result named too)."""
    history = [tl.user_message("Go.")]
    for number, name in enumerate(names):
        call_id = f"call_{number}"
        history.append(tl.assistant_message(tl.tool_call_part(call_id, name, {"n": number})))
        history.append(tl.tool_message(tl.tool_result_part(call_id, "done", name=name)))
    return history


def names_of(messages: list[Message]) -> list[tuple[str, str | None]]:
    calls = [("call", call.name) for message in messages for call in message.tool_calls]
    results = [("result", res.name) for message in messages for res in message.tool_results]
    return calls + results


# --- the mapping --------------------------------------------------------------------------


def test_a_dotted_name_becomes_its_cleaned_stem_and_a_hash() -> None:
    wire = map_tool_names(["files.read"], STANDARD)["files.read"]
    assert re.fullmatch(r"files_read__[0-9a-f]{10}", wire)
    assert map_tool_names(["files.read"], GEMINI) == {}  # Gemini takes dots


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("get weather", "get_weather"),
        ("météo", "meteo"),
        ("tool/v2", "tool_v2"),
        ("a  .  b", "a_b"),
        ("t" * 70, "t" * 52),
    ],
)
def test_refused_characters_become_one_underscore_and_long_names_are_cut(
    name: str, stem: str
) -> None:
    wire = map_tool_names([name], STANDARD)[name]
    assert wire[: -len("__0123456789")] == stem
    assert len(wire) <= 64


def test_gemini_names_start_with_a_letter_or_underscore() -> None:
    wire = map_tool_names(["1st", "t" * 200], GEMINI)
    assert re.fullmatch(r"_1st__[0-9a-f]{10}", wire["1st"])
    assert len(wire["t" * 200]) == 64  # the live API's maximum (the SDK docstring says 128)


def test_names_the_api_takes_are_kept() -> None:
    assert map_tool_names(["get_weather", "a-b", "x" * 64], STANDARD) == {}
    assert map_tool_names(["files.read", "ns:lookup", "_x"], GEMINI) == {}


def test_names_that_clean_alike_get_different_wire_names() -> None:
    mapping = map_tool_names(["a.b", "a b", "a/b"], STANDARD)
    assert len(set(mapping.values())) == 3


def test_a_minted_name_never_equals_a_name_sent_as_it_is() -> None:
    """A history that holds, as a name of its own, the wire name of another of its names
    (a wire name stored without mapping it back) sends the other under the next hash."""
    wire = map_tool_names(["files.read"], STANDARD)["files.read"]
    both = map_tool_names(["files.read", wire], STANDARD)
    assert wire not in both  # taken by the API as it is: kept
    assert both["files.read"] != wire
    assert re.fullmatch(r"files_read__[0-9a-f]{10}", both["files.read"])


def test_the_mapping_does_not_depend_on_order() -> None:
    names = ["files.read", "get weather", "a.b", "a b", "ok"]
    assert map_tool_names(names, STANDARD) == map_tool_names(reversed(names), STANDARD)


names_strategy = st.sets(
    st.text(min_size=1, max_size=150) | st.sampled_from(HOSTILE) | st.from_regex(r"[a-z_]{1,70}"),
    max_size=12,
)


@pytest.mark.parametrize("rule", RULES.values(), ids=list(RULES))
@given(names=names_strategy, more=names_strategy)
def test_any_names_map_injectively_into_the_pattern_and_stay_put_as_names_are_added(
    rule: ToolNameRule, names: set[str], more: set[str]
) -> None:
    mapping = map_tool_names(names, rule)
    wire = {name: mapping.get(name, name) for name in names}
    assert all(rule.pattern.fullmatch(value) for value in wire.values())
    assert len(set(wire.values())) == len(names)  # injective
    assert map_tool_names(sorted(names, reverse=True), rule) == mapping  # deterministic
    assert map_tool_names(mapping.values(), rule) == {}  # a wire name is sent as it is
    assume(not more & set(mapping.values()))  # not a stored wire name (see above)
    grown = map_tool_names(names | more, rule)
    assert {name: grown[name] for name in mapping} == mapping


# --- encode, wire_tool_names and decode --------------------------------------------------------


def wire_names_in(payload: Any) -> set[str]:
    """Every ``"name"`` value in a payload (tool calls, results, and whatever else) but a
    document's (Bedrock's ``document`` / ``image`` blocks name files, not tools)."""
    found: set[str] = set()
    if isinstance(payload, dict):
        for key, value in payload.items():
            if key == "name" and isinstance(value, str):
                found.add(value)
            if key not in ("document", "image", "video"):
                found |= wire_names_in(value)
    elif isinstance(payload, list):
        for value in payload:
            found |= wire_names_in(value)
    return found


@pytest.mark.parametrize("provider", codec_names())
def test_encode_sends_wire_names_and_decode_gives_the_stored_names_back(provider: str) -> None:
    history = conversation(*HOSTILE, "get_weather")
    before = [message.model_copy(deep=True) for message in history]
    payload = encode(history, provider=provider)
    assert history == before  # stored names never change
    sent = wire_names_in(payload)
    assert all(PATTERNS[provider].fullmatch(name) for name in sent), sent
    mapping = wire_tool_names(history, provider=provider)
    refused = {name for name in HOSTILE if not PATTERNS[provider].fullmatch(name)}
    assert set(mapping.values()) == refused
    assert set(mapping) <= sent
    assert "get_weather" in sent
    assert names_of(decode(payload, provider=provider, tool_names=mapping)) == names_of(history)


@pytest.mark.parametrize("provider", codec_names())
def test_a_tool_keeps_its_wire_name_as_the_conversation_grows(provider: str) -> None:
    first = encode(conversation("files.read"), provider=provider)
    later = encode(conversation("files.read", "web.search", "get weather"), provider=provider)
    assert wire_names_in(first) <= wire_names_in(later)


def test_wire_tool_names_takes_names_and_messages() -> None:
    source: list[Message | str] = ["files.read", "ok", *conversation("get weather")]
    mapping = wire_tool_names(source, provider="mistral")
    assert sorted(mapping.values()) == ["files.read", "get weather"]
    assert wire_tool_names(["files.read"], provider="gemini") == {}
    with pytest.raises(
        TypeError, match=r"source\[1\] must be a Message, a ToolDefinition or a tool name"
    ):
        wire_tool_names(["a.b", 3], provider="anthropic")  # type: ignore[list-item]
    with pytest.raises(tl.UnknownProviderError):
        wire_tool_names(["a.b"], provider="nope")


def test_decode_response_maps_wire_names_back() -> None:
    mapping = wire_tool_names(["files.read"], provider="openai_chat")
    (wire,) = mapping
    response = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-5",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": wire, "arguments": '{"path": "a.txt"}'},
                        }
                    ],
                },
            }
        ],
    }
    message = decode_response(response, provider="openai_chat", tool_names=mapping)
    assert message.tool_calls[0].name == "files.read"
    assert decode_response(response, provider="openai_chat").tool_calls[0].name == wire


def test_tool_names_must_map_str_to_str() -> None:
    payload = encode(conversation("files.read"), provider="anthropic")
    with pytest.raises(TypeError, match="tool_names must be a mapping"):
        decode(payload, provider="anthropic", tool_names=["x"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="both str"):
        decode(payload, provider="anthropic", tool_names={"x": 1})  # type: ignore[dict-item]


@st.composite
def renamed_conversations(draw: st.DrawFn) -> list[Message]:
    """A generated conversation whose tools carry names the providers refuse."""
    messages = draw(conversations(max_turns=3))
    names = sorted({call.name for message in messages for call in message.tool_calls})
    hostile = st.text(min_size=1, max_size=80) | st.sampled_from(HOSTILE)
    mapping = {name: draw(hostile) for name in names}
    return rename_tools(messages, mapping)


@pytest.mark.parametrize("provider", codec_names())
@settings(max_examples=examples(40))
@given(history=renamed_conversations())
def test_decode_of_encode_with_the_mapping_gives_back_the_stored_names(
    provider: str, history: list[Message]
) -> None:
    payload = encode(history, provider=provider)
    assert all(PATTERNS[provider].fullmatch(name) for name in wire_names_in(payload))
    back = decode(
        payload, provider=provider, tool_names=wire_tool_names(history, provider=provider)
    )
    sent = prepare_messages(history)
    calls = [call.name for message in sent for call in message.tool_calls]
    assert [call.name for message in back for call in message.tool_calls] == calls
