"""The tool lists ``encode`` keeps between calls (``codecs/_requests.py``): each body is
fresh, a changed definition is sent as changed, and skipping the history scan never changes a
wire name."""

from __future__ import annotations

import dataclasses

import pytest

import threadline as tl
from threadline import Message
from threadline.codecs import codec_names
from threadline.codecs import encode
from threadline.codecs._tool_names import GEMINI
from threadline.codecs._tool_names import STANDARD
from threadline.codecs._tool_names import ToolNameRule

FORMATS = codec_names()
READ = tl.ToolDefinition(
    "files.read",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
LOOKUP = tl.ToolDefinition(
    "lookup",
    "Look a word up.",
    {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
)


def loop(name: str = "files.read") -> list[Message]:
    return [
        tl.user_message("Read it."),
        tl.assistant_message(tl.tool_call_part("call_1", name, {"path": "a.txt"})),
        tl.tool_message(tl.tool_result_part("call_1", "hello", name=name)),
    ]


@pytest.mark.parametrize("provider", FORMATS)
def test_a_caller_mutating_the_body_never_changes_the_next_one(provider: str) -> None:
    first = encode(loop(), provider=provider, tools=[READ, LOOKUP])
    expected = encode(loop(), provider=provider, tools=[READ, LOOKUP])
    tools = first["toolConfig"]["tools"] if provider == "bedrock" else first["tools"]
    tools.clear()
    first.clear()
    again = encode(loop(), provider=provider, tools=[READ, LOOKUP])
    assert again == expected


@pytest.mark.parametrize("provider", FORMATS)
def test_a_changed_definition_is_sent_as_changed(provider: str) -> None:
    before = repr(encode(loop(), provider=provider, tools=[LOOKUP]))
    changed = dataclasses.replace(LOOKUP, description="Find a word in the dictionary.")
    after = repr(encode(loop(), provider=provider, tools=[changed]))
    assert "Look a word up." in before
    assert "Find a word in the dictionary." in after
    assert "Look a word up." not in after


def test_equal_schemas_written_in_another_key_order_are_each_sent_as_written() -> None:
    reordered = tl.ToolDefinition(
        "lookup",
        "Look a word up.",
        {"required": ["word"], "properties": {"word": {"type": "string"}}, "type": "object"},
    )
    assert reordered == LOOKUP
    first = encode(loop(), provider="anthropic", tools=[LOOKUP])["tools"][0]["input_schema"]
    second = encode(loop(), provider="anthropic", tools=[reordered])["tools"][0]["input_schema"]
    assert list(first) == ["type", "properties", "required"]
    assert list(second) == ["required", "properties", "type"]


@pytest.mark.parametrize(("provider", "rule"), [("anthropic", STANDARD), ("gemini", GEMINI)])
def test_a_defined_name_shaped_like_a_minted_one_still_moves_the_history_name(
    provider: str, rule: ToolNameRule
) -> None:
    """Only the defined name equal to the history tool's wire name is given: the history's
    tool must still get the next wire name (the history is scanned)."""
    clash = tl.ToolDefinition(rule.mint("files/read"), "Shadows the minted name.")
    body = encode(loop("files/read"), provider=provider, tools=[clash])
    text = repr(body)
    assert text.count(clash.name) == 1  # the definition only
    assert "files/read" not in text


@pytest.mark.parametrize("provider", FORMATS)
def test_no_two_places_in_one_body_share_a_dict(provider: str) -> None:
    twin = dataclasses.replace(LOOKUP, name="lookup_again")
    body = encode(loop(), provider=provider, tools=[LOOKUP, twin])
    text = repr(body)
    tools = body["toolConfig"]["tools"] if provider == "bedrock" else body["tools"]
    if provider == "gemini":
        tools = tools[0]["functionDeclarations"]
    tools[0].clear()
    assert repr(body).count("Look a word up.") == text.count("Look a word up.") - 1
