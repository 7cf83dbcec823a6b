"""Tool schemas shared between bodies (``_shared_json.py``, ``codecs/_requests.py``): each
body's tool list and tool dicts are its own, the schemas inside are one read-only object per
schema and dialect, and copies of them are plain data."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import hypothesis
import pydantic_core
import pytest

import threadline as tl
from tests.dialect_cases import DIALECTS as DIALECT_NAMES
from tests.strategies import json_values
from tests.support import examples
from threadline import Message
from threadline._json import FrozenJsonMap
from threadline._shared_json import SharedDict
from threadline._shared_json import SharedList
from threadline._shared_json import share
from threadline.codecs import codec_names
from threadline.codecs import encode
from threadline.tools import adapted_parameters

FORMATS = codec_names()
SEARCH = tl.ToolDefinition(
    "search",
    "Search the docs.",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "scope": {"type": "string", "enum": ["docs", "code"]},
        },
        "required": ["query"],
    },
)
READ = tl.ToolDefinition(
    "read",
    "Read a page.",
    {"type": "object", "properties": {"page": {"type": "integer"}}, "required": ["page"]},
)
DIALECTS = {
    "anthropic": "standard",
    "bedrock": "inline",
    "cohere": "standard",
    "gemini": "gemini",
    "mistral": "standard",
    "openai_chat": "standard",
    "openai_responses": "standard",
    "ollama": "standard",
    **dict.fromkeys(DIALECT_NAMES, "standard"),
}


def ask() -> list[Message]:
    return [tl.user_message("Find the page on limits.")]


def body_of(provider: str) -> dict[str, Any]:
    return encode(ask(), provider=provider, tools=[SEARCH, READ])


def tools_of(body: dict[str, Any], provider: str) -> list[dict[str, Any]]:
    """The body's list of tools, in the provider's place."""
    if provider == "bedrock":
        tools: list[dict[str, Any]] = body["toolConfig"]["tools"]
        return tools
    if provider == "gemini":
        declarations: list[dict[str, Any]] = body["tools"][0]["functionDeclarations"]
        return declarations
    listed: list[dict[str, Any]] = body["tools"]
    return listed


def schema_of(tool: dict[str, Any], provider: str) -> dict[str, Any]:
    """One tool's JSON Schema, in the provider's place."""
    schema: dict[str, Any]
    if provider in ("openai_chat", "mistral", "cohere", "ollama", *DIALECT_NAMES):
        schema = tool["function"]["parameters"]
    elif provider == "openai_responses":
        schema = tool["parameters"]
    elif provider == "anthropic":
        schema = tool["input_schema"]
    elif provider == "gemini":
        schema = tool["parameters"]
    else:
        schema = tool["toolSpec"]["inputSchema"]["json"]
    return schema


def plain(value: Any) -> bool:
    """Whether every dict and list in ``value`` is exactly a ``dict`` / ``list``."""
    if isinstance(value, dict):
        return type(value) is dict and all(plain(item) for item in value.values())
    if isinstance(value, list):
        return type(value) is list and all(plain(item) for item in value)
    return True


def _iadd(target: Any) -> None:
    target += [1]


def _imul(target: Any) -> None:
    target *= 2


def _ior(target: Any) -> None:
    target |= {"x": 1}


DICT_MUTATORS: dict[str, Callable[[Any], object]] = {
    "setitem": lambda d: d.__setitem__("x", 1),
    "delitem": lambda d: d.__delitem__("type"),
    "update": lambda d: d.update(x=1),
    "pop": lambda d: d.pop("type"),
    "popitem": lambda d: d.popitem(),
    "clear": lambda d: d.clear(),
    "setdefault": lambda d: d.setdefault("x", 1),
    "ior": _ior,
    "init": lambda d: d.__init__({"x": 1}),
}
LIST_MUTATORS: dict[str, Callable[[Any], object]] = {
    "setitem": lambda items: items.__setitem__(0, "x"),
    "setitem slice": lambda items: items.__setitem__(slice(0, 1), ["x"]),
    "delitem": lambda items: items.__delitem__(0),
    "delitem slice": lambda items: items.__delitem__(slice(None)),
    "append": lambda items: items.append("x"),
    "extend": lambda items: items.extend(["x"]),
    "insert": lambda items: items.insert(0, "x"),
    "remove": lambda items: items.remove(items[0]),
    "pop": lambda items: items.pop(),
    "clear": lambda items: items.clear(),
    "sort": lambda items: items.sort(),
    "reverse": lambda items: items.reverse(),
    "iadd": _iadd,
    "imul": _imul,
    "init": lambda items: items.__init__(["x"]),
}


@pytest.mark.parametrize("provider", FORMATS)
@pytest.mark.parametrize("mutator", DICT_MUTATORS, ids=str)
def test_every_dict_in_a_sent_schema_refuses_each_change(provider: str, mutator: str) -> None:
    schema = schema_of(tools_of(body_of(provider), provider)[0], provider)
    before = copy.deepcopy(schema)
    for target in (schema, schema["properties"], schema["properties"]["query"]):
        with pytest.raises(TypeError, match=r"shared by every request.*copy\.deepcopy"):
            DICT_MUTATORS[mutator](target)
    assert schema == before
    assert schema_of(tools_of(body_of(provider), provider)[0], provider) == before


@pytest.mark.parametrize("provider", FORMATS)
@pytest.mark.parametrize("mutator", LIST_MUTATORS, ids=str)
def test_every_list_in_a_sent_schema_refuses_each_change(provider: str, mutator: str) -> None:
    schema = schema_of(tools_of(body_of(provider), provider)[0], provider)
    before = copy.deepcopy(schema)
    for target in (schema["required"], schema["properties"]["scope"]["enum"]):
        with pytest.raises(TypeError, match=r"shared by every request.*copy\.deepcopy"):
            LIST_MUTATORS[mutator](target)
    assert schema == before


@pytest.mark.parametrize("provider", FORMATS)
def test_changing_the_tool_list_and_tool_dicts_never_reaches_the_next_body(
    provider: str,
) -> None:
    expected = copy.deepcopy(body_of(provider))
    body = body_of(provider)
    tools = tools_of(body, provider)
    tools[0]["cache_control"] = {"type": "ephemeral"}
    tools[0]["name"] = "renamed"
    for wrapper in ("function", "toolSpec"):
        if wrapper in tools[0]:
            tools[0][wrapper]["name"] = "renamed"
            tools[0][wrapper]["description"] = "changed"
    if provider == "bedrock":
        tools[1]["toolSpec"]["inputSchema"]["json"] = {"type": "object"}
    del tools[1]
    tools.append({"name": "extra"})
    tools.reverse()
    assert body_of(provider) == expected
    assert plain(body_of(provider)["tools" if provider != "bedrock" else "toolConfig"]) is False


@pytest.mark.parametrize("provider", FORMATS)
def test_the_structure_down_to_the_schema_is_fresh_each_call_the_schema_shared(
    provider: str,
) -> None:
    first, second = body_of(provider), body_of(provider)
    one, two = tools_of(first, provider), tools_of(second, provider)
    assert one is not two
    assert type(one) is list
    for mine, theirs in zip(one, two, strict=True):
        assert mine is not theirs
        assert type(mine) is dict
        for wrapper in ("function", "toolSpec"):
            if wrapper in mine:
                assert mine[wrapper] is not theirs[wrapper]
                assert type(mine[wrapper]) is dict
        if provider == "bedrock":
            assert mine["toolSpec"]["inputSchema"] is not theirs["toolSpec"]["inputSchema"]
        assert schema_of(mine, provider) is schema_of(theirs, provider)
        assert isinstance(schema_of(mine, provider), dict)
    if provider == "gemini":
        assert first["tools"] is not second["tools"]
        assert first["tools"][0] is not second["tools"][0]


@pytest.mark.parametrize("provider", FORMATS)
def test_copies_pickles_and_json_of_a_schema_are_equal_plain_data(provider: str) -> None:
    schema = schema_of(tools_of(body_of(provider), provider)[0], provider)
    expected = adapted_parameters(SEARCH, DIALECTS[provider])  # type: ignore[arg-type]
    assert schema == expected
    assert expected == schema
    for copied in (copy.deepcopy(schema), pickle.loads(pickle.dumps(schema))):
        assert plain(copied)
        assert copied == expected
        copied["properties"]["query"]["minLength"] = 1  # a copy is the caller's own
        copied["required"].append("scope")
    shallow = copy.copy(schema)
    assert type(shallow) is dict
    assert shallow == expected
    shallow["x"] = 1
    assert "x" not in schema
    assert json.loads(json.dumps(schema)) == expected
    assert pydantic_core.to_json(schema) == pydantic_core.to_json(expected)
    assert schema_of(tools_of(body_of(provider), provider)[0], provider) == expected


@pytest.mark.parametrize("provider", FORMATS)
def test_a_whole_body_deep_copied_or_pickled_is_plain(provider: str) -> None:
    body = body_of(provider)
    for copied in (copy.deepcopy(body), pickle.loads(pickle.dumps(body))):
        assert plain(copied)
        assert copied == body


def test_the_anthropic_cache_breakpoint_on_the_tools_never_reaches_the_next_body() -> None:
    plain_body = body_of("anthropic")
    cached = encode(ask(), provider="anthropic", tools=[SEARCH, READ], cache=["tools"])
    assert cached["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body_of("anthropic") == plain_body


def test_a_changed_definition_object_with_the_same_identity_slot_is_rebuilt() -> None:
    """The identity lookup never serves a definition it did not build: a new definition (even
    at a reused address) is looked up by its content."""
    for description in ("first", "second", "third"):
        tool = tl.ToolDefinition("probe", description)
        sent = encode(ask(), provider="anthropic", tools=[tool])["tools"][0]
        assert sent["description"] == description
        del tool


@pytest.mark.parametrize("provider", FORMATS)
def test_tools_sent_under_wire_names_are_fresh_too(provider: str) -> None:
    """A name the provider refuses takes the other lookup (by content and wire name)."""
    dotted = tl.ToolDefinition("files.read", "Read a file.", READ.parameters)
    first = encode(ask(), provider=provider, tools=[dotted, SEARCH])
    expected = copy.deepcopy(first)
    tools = tools_of(first, provider)
    tools[0].clear()
    tools.pop()
    again = encode(ask(), provider=provider, tools=[dotted, SEARCH])
    assert again == expected
    assert schema_of(tools_of(again, provider)[1], provider) is schema_of(
        tools_of(encode(ask(), provider=provider, tools=[dotted, SEARCH]), provider)[1],
        provider,
    )


@hypothesis.given(json_values)
def test_shared_json_reads_copies_and_serializes_as_the_plain_value(value: Any) -> None:
    shared = share(value)
    assert shared == value
    assert json.dumps(shared) == json.dumps(value)
    assert pydantic_core.to_json(shared) == pydantic_core.to_json(value)
    for copied in (copy.deepcopy(shared), pickle.loads(pickle.dumps(shared))):
        assert plain(copied)
        assert copied == value
    if isinstance(value, (dict, list)) and value:
        with pytest.raises(TypeError, match=r"copy\.deepcopy"):
            shared.clear()


def containers(value: Any) -> list[Any]:
    """Every dict and list in ``value``, at any depth, the value itself first."""
    found: list[Any] = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            found.append(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            pending.extend(item)
    return found


@hypothesis.settings(max_examples=examples(200))
@hypothesis.given(json_values)
def test_share_makes_every_container_read_only_and_holds_none_of_the_input(value: Any) -> None:
    """``share`` copies only the containers (scalars stay), at every depth: each is a
    `SharedDict` / `SharedList`, none is a container of the input, so a caller changing the
    input afterwards never reaches the shared value."""
    before = json.dumps(value)
    shared = share(value)
    theirs = {id(item) for item in containers(value)}
    for item in containers(shared):
        assert type(item) in (SharedDict, SharedList)
        assert id(item) not in theirs
    for item in containers(value):
        item.clear()
    assert json.dumps(shared) == before


def test_share_reads_a_dict_subclass_through_its_items() -> None:
    """A read-only mapping in a body (tool-call arguments) is shared as the plain data its
    ``items`` give."""
    arguments = FrozenJsonMap({"query": "limits", "scope": {"kind": ["docs"]}})
    shared = share({"input": arguments})
    assert type(shared["input"]) is SharedDict
    assert type(shared["input"]["scope"]["kind"]) is SharedList
    assert shared == {"input": {"query": "limits", "scope": {"kind": ["docs"]}}}


def test_pydantic_rebuilds_a_shared_sequence_and_it_stays_read_only() -> None:
    """pydantic rebuilds a validated ``Sequence`` field as ``type(value)(items)``: a model with
    one (the ``ollama`` client's ``Tool``) takes a sent schema as it is."""
    import pydantic

    class Parameters(pydantic.BaseModel):
        required: Sequence[str]
        properties: Mapping[str, Any]

    schema = schema_of(tools_of(body_of("openai_chat"), "openai_chat")[0], "openai_chat")
    read = Parameters.model_validate(schema)
    assert list(read.required) == ["query"]
    with pytest.raises(TypeError, match=r"copy\.deepcopy"):
        read.required.append("x")  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match=r"copy\.deepcopy"):
        schema["required"].__init__(["x"])
    assert schema["required"] == ["query"]
