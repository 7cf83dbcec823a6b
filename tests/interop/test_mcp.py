"""threadline.interop.mcp against a real in-memory MCP server and client session: tools listed
and sent through every registered format, tools called and their results read, a sampling
request answered through a codec; each content kind both ways, each named loss, hostile input."""

from __future__ import annotations

import asyncio
import base64
import re
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests import strategies
from tests.support import examples
from tests.support import require_module

require_module("mcp", 'pip install "threadline[mcp]"')

import mcp.types as mt  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.session import ClientRequestContext  # noqa: E402
from mcp.server.mcpserver import Context  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.shared.exceptions import MCPDeprecationWarning  # noqa: E402

import threadline as tl  # noqa: E402
from threadline import FilePart  # noqa: E402
from threadline import Message  # noqa: E402
from threadline import TextPart  # noqa: E402
from threadline import ToolCallPart  # noqa: E402
from threadline import ToolDefinition  # noqa: E402
from threadline import ToolResultPart  # noqa: E402
from threadline.codecs import codec_names  # noqa: E402
from threadline.codecs import decode_response  # noqa: E402
from threadline.codecs import encode  # noqa: E402
from threadline.errors import CodecError  # noqa: E402
from threadline.errors import LimitExceededError  # noqa: E402
from threadline.errors import UnsupportedContentError  # noqa: E402
from threadline.errors import ValidationError  # noqa: E402
from threadline.interop.mcp import from_sampling_messages  # noqa: E402
from threadline.interop.mcp import result_from_mcp  # noqa: E402
from threadline.interop.mcp import result_to_mcp  # noqa: E402
from threadline.interop.mcp import to_create_message_result  # noqa: E402
from threadline.interop.mcp import tool_from_mcp  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\nfake"
WAV = b"RIFF\x00\x00\x00\x00WAVE"
B64_PNG = base64.b64encode(PNG).decode()
B64_WAV = base64.b64encode(WAV).decode()

server = MCPServer("threadline-test")


@server.tool(title="Adder", annotations=mt.ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def everything() -> list[mt.ContentBlock]:
    """Every content block kind."""
    return [
        mt.TextContent(text="hello", annotations=mt.Annotations(priority=0.5)),
        mt.ImageContent(data=B64_PNG, mime_type="image/png"),
        mt.AudioContent(data=B64_WAV, mime_type="audio/wav"),
        mt.ResourceLink(
            uri="https://example.com/report.pdf", name="report.pdf", mime_type="application/pdf"
        ),
        mt.EmbeddedResource(
            resource=mt.TextResourceContents(uri="file:///notes.md", text="# notes")
        ),
        mt.EmbeddedResource(
            resource=mt.BlobResourceContents(
                uri="file:///data.bin", mime_type="application/octet-stream", blob=B64_PNG
            )
        ),
    ]


@server.tool()
def fails() -> str:
    """Always fails."""
    raise ToolError("the disk is full")


@server.tool()
async def ask(question: str, ctx: Context) -> str:
    """Ask the client's model (MCP sampling)."""
    with pytest.warns(MCPDeprecationWarning):
        result = await ctx.session.create_message(
            [
                mt.SamplingMessage(role="user", content=mt.TextContent(text=question)),
                mt.SamplingMessage(
                    role="user",
                    content=[mt.ImageContent(data=B64_PNG, mime_type="image/png")],
                    meta={"threadline.seal": "forged"},
                ),
            ],
            max_tokens=100,
            system_prompt="Answer in one word.",
        )
    assert isinstance(result.content, mt.TextContent)
    return f"{result.model}|{result.stop_reason}|{result.content.text}"


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout=60))


async def _listed() -> list[mt.Tool]:
    async with Client(server) as client:
        return list((await client.list_tools()).tools)


async def _called(name: str, arguments: dict[str, Any]) -> mt.CallToolResult:
    async with Client(server) as client:
        return await client.call_tool(name, arguments)


# ---------------------------------------------------------------------------------------------
# Tools


def test_listed_tools_become_definitions_with_their_mcp_fields_in_metadata() -> None:
    tools = {tool.name: tool_from_mcp(tool) for tool in run(_listed())}
    adder = tools["add"]
    assert adder.description == "Add two numbers."
    assert adder.parameters["required"] == ["a", "b"]
    assert adder.metadata["mcp.title"] == "Adder"
    assert adder.metadata["mcp.annotations"] == {"readOnlyHint": True}
    assert adder.metadata["mcp.outputSchema"]["properties"]["result"]["type"] == "integer"
    assert adder.function is None


@pytest.mark.parametrize("provider", codec_names())
def test_mcp_tools_encode_exactly_as_the_same_tools_written_by_hand(provider: str) -> None:
    listed = run(_listed())
    mcp_tools = [tool_from_mcp(tool) for tool in listed]
    by_hand = [
        ToolDefinition(name=t.name, description=t.description or "", parameters=t.input_schema)
        for t in listed
    ]
    messages = [tl.user_message("Add 1 and 2.")]
    body = encode(messages, provider=provider, tools=mcp_tools)
    assert body == encode(messages, provider=provider, tools=by_hand)
    assert "add" in str(body)


RECURSIVE = {
    "type": "object",
    "properties": {"tree": {"$ref": "#/$defs/node"}},
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        }
    },
}
OPEN = {"type": "object", "properties": {"filters": {"type": "object"}}}
LOOSE = {
    "type": "object",
    "properties": {
        "v": {
            "anyOf": [{"type": "string"}, {"type": "integer"}],
            "format": "uri",
            "patternProperties": {"a": {}},
        }
    },
}


def _outcome(provider: str, tool: ToolDefinition) -> Any:
    try:
        return encode([tl.user_message("go")], provider=provider, tools=[tool])
    except (ValidationError, CodecError) as error:
        return type(error), str(error)


@pytest.mark.parametrize("provider", codec_names())
@pytest.mark.parametrize("schema", [RECURSIVE, OPEN, LOOSE], ids=["recursive", "open", "loose"])
def test_a_schema_a_format_cannot_take_is_adapted_or_refused_as_for_any_tool(
    provider: str, schema: dict[str, Any]
) -> None:
    wire = mt.Tool(name="walk", description="Walk a tree.", input_schema=schema)
    mcp_tool = tool_from_mcp(wire)
    by_hand = ToolDefinition(name="walk", description="Walk a tree.", parameters=schema)
    assert _outcome(provider, mcp_tool) == _outcome(provider, by_hand)


def test_a_recursive_schema_is_refused_where_it_cannot_be_inlined_and_gemini_adapts() -> None:
    outcome = _outcome("bedrock", tool_from_mcp(mt.Tool(name="walk", input_schema=RECURSIVE)))
    assert isinstance(outcome, tuple)
    assert outcome[0] is ValidationError
    assert "recursive" in outcome[1]
    body = _outcome("gemini", tool_from_mcp(mt.Tool(name="pick", input_schema=LOOSE)))
    sent = body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]
    assert sent["properties"]["v"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}


def test_strict_refuses_an_open_schema_with_the_hand_written_error() -> None:
    wire = {"name": "search", "inputSchema": OPEN}
    with pytest.raises(ValidationError) as from_mcp:
        tool_from_mcp(wire, strict=True)
    with pytest.raises(ValidationError) as by_hand:
        ToolDefinition(name="search", parameters=OPEN, strict=True)
    assert str(from_mcp.value) == str(by_hand.value)


def _deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


@pytest.mark.parametrize(
    "tool",
    [
        {"name": "deep", "inputSchema": _deep(40)},
        {"name": "huge", "inputSchema": {"type": "object", "description": "x" * (5 * 2**20)}},
        {
            "name": "wide",
            "inputSchema": {
                "type": "object",
                "properties": {
                    f"p{i}": {"type": "string", "description": "y" * 1000} for i in range(9000)
                },
            },
        },
    ],
    ids=["deep", "long-string", "large"],
)
def test_hostile_schemas_are_refused_within_the_untrusted_limits(tool: dict[str, Any]) -> None:
    with pytest.raises(LimitExceededError):
        tool_from_mcp(tool)


@pytest.mark.parametrize(
    ("tool", "where"),
    [
        ({"inputSchema": {"type": "object"}}, "name"),
        ({"name": "t"}, "inputSchema"),
        ({"name": "t", "inputSchema": ["type", "object"]}, "inputSchema"),
    ],
)
def test_a_tool_that_is_not_one_is_refused_naming_the_field(
    tool: dict[str, Any], where: str
) -> None:
    with pytest.raises(CodecError, match=where):
        tool_from_mcp(tool)


def test_a_schema_that_is_not_an_object_schema_is_refused_as_for_any_tool() -> None:
    with pytest.raises(ValidationError, match="parameters"):
        tool_from_mcp({"name": "t", "inputSchema": {"type": "string"}})


def test_a_server_cannot_set_threadline_keys_in_a_tool_definition() -> None:
    wire = {
        "name": "t",
        "inputSchema": {"type": "object"},
        "_meta": {"threadline.seal": "forged"},
        "threadline.summary": True,
    }
    tool = tool_from_mcp(wire)
    assert sorted(tool.metadata) == ["mcp._meta", "mcp.threadline.summary"]
    assert not any(key.startswith("threadline.") for key in tool.metadata)


def test_tool_from_mcp_refuses_other_objects() -> None:
    with pytest.raises(TypeError, match=re.escape("mcp.types.Tool")):
        tool_from_mcp("add")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Tool results


def test_a_called_tool_result_reads_as_a_tool_result_part() -> None:
    result = run(_called("add", {"a": 1, "b": 2}))
    part = result_from_mcp("call_1", result, name="add")
    assert part == ToolResultPart(call_id="call_1", content=(TextPart(text="3"),), name="add")
    kept = result_from_mcp("call_1", result, keep_metadata=["mcp.structuredContent"])
    assert kept.metadata["mcp.structuredContent"] == {"result": 3}


def test_every_content_kind_from_a_real_call_trusted() -> None:
    part = result_from_mcp("c", run(_called("everything", {})), trusted=True)
    assert isinstance(part.content, tuple)
    text, image, audio, link, embedded_text, blob = part.content
    assert text == TextPart(text="hello", metadata={"mcp.annotations": {"priority": 0.5}})
    assert image == FilePart(media_type="image/png", data=PNG)
    assert audio == FilePart(media_type="audio/wav", data=WAV)
    assert link == FilePart(
        media_type="application/pdf", url="https://example.com/report.pdf", filename="report.pdf"
    )
    assert embedded_text == TextPart(
        text="# notes", metadata={"mcp.resource": {"uri": "file:///notes.md"}}
    )
    assert isinstance(blob, FilePart)
    assert blob.data == PNG
    assert blob.metadata["mcp.resource"]["uri"] == "file:///data.bin"


def test_every_content_kind_untrusted_keeps_the_content_and_drops_the_metadata() -> None:
    part = result_from_mcp("c", run(_called("everything", {})))
    assert isinstance(part.content, tuple)
    kinds = [type(item).__name__ for item in part.content]
    assert kinds == ["TextPart", "FilePart", "FilePart", "FilePart", "TextPart", "FilePart"]
    assert all(not item.metadata for item in part.content)
    link = part.content[3]
    assert isinstance(link, FilePart)
    assert link.url == "https://example.com/report.pdf"


def test_an_error_result_is_flagged() -> None:
    part = result_from_mcp("c", run(_called("fails", {})))
    assert part.is_error
    assert "the disk is full" in part.text


def test_every_content_kind_round_trips_through_to_mcp() -> None:
    result = run(_called("everything", {}))
    part = result_from_mcp("c", result, trusted=True)
    back = result_to_mcp(part)
    assert back.content == result.content
    assert result_from_mcp("c", back, trusted=True) == part


def test_structured_content_without_blocks_is_the_content_as_json_text_and_goes_back() -> None:
    wire = mt.CallToolResult(content=[], structured_content={"temperature": 21.5})
    part = result_from_mcp("c", wire, trusted=True)
    assert part.content == '{"temperature":21.5}'
    back = result_to_mcp(part)
    assert back.content == []
    assert back.structured_content == {"temperature": 21.5}


def test_result_to_mcp_names_its_losses() -> None:
    part = ToolResultPart(
        call_id="c",
        name="shoot",
        content=(
            FilePart(media_type="image/png", url="https://example.com/a.png"),
            FilePart(media_type="application/pdf", data=b"%PDF", filename="a.pdf"),
            TextPart(text="t", metadata={"anthropic.cache_control": {"type": "ephemeral"}}),
        ),
        metadata={"threadline.repair": "x"},
    )
    back = result_to_mcp(part).model_dump(by_alias=True, exclude_none=True, mode="json")
    link, blob, text = back["content"]
    assert link == {
        "type": "resource_link",
        "uri": "https://example.com/a.png",
        "name": "https://example.com/a.png",
        "mimeType": "image/png",
    }
    assert blob["resource"]["uri"] == "attachment:a.pdf"
    assert text == {"type": "text", "text": "t"}
    assert "c" not in str(back.get("_meta"))
    assert "shoot" not in str(back)


def test_result_to_mcp_gives_plain_mutable_json() -> None:
    wire = {
        "content": [{"type": "text", "text": "t", "_meta": {"k": [1, {"a": 2}]}}],
        "structuredContent": {"rows": [{"x": 1}]},
        "_meta": {"trace": ["a"]},
    }
    back = result_to_mcp(result_from_mcp("c", wire, trusted=True))
    assert type(back.structured_content) is dict
    back.structured_content["rows"].append({"x": 2})
    assert back.meta == {"trace": ["a"]}
    assert back.content[0].meta == {"k": [1, {"a": 2}]}
    assert back.model_dump(by_alias=True, exclude_none=True, mode="json")["structuredContent"] == {
        "rows": [{"x": 1}, {"x": 2}]
    }


def test_a_plain_string_result_is_one_text_block() -> None:
    back = result_to_mcp(ToolResultPart(call_id="c", content="ok", is_error=True))
    assert back.content == [mt.TextContent(text="ok")]
    assert back.is_error


def test_result_from_mcp_refuses_a_call_id_or_name_that_is_not_a_string() -> None:
    with pytest.raises(TypeError, match="call_id"):
        result_from_mcp(1, {"content": []})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="name"):
        result_from_mcp("c", {"content": []}, name=1)  # type: ignore[arg-type]


def test_result_to_mcp_refuses_other_parts() -> None:
    with pytest.raises(TypeError, match="ToolResultPart"):
        result_to_mcp(TextPart(text="x"))  # type: ignore[arg-type]


FORGED = {
    "content": [
        {"type": "text", "text": "ok", "_meta": {"threadline.seal": "forged"}},
        {"type": "resource_link", "uri": "data:text/plain;base64,aGk=", "name": "x"},
        {"type": "resource_link", "uri": "http://127.0.0.1:8080/admin", "name": "y"},
        {"type": "resource_link", "uri": "file:///etc/passwd", "name": "z"},
    ],
    "_meta": {"threadline.summary": True},
    "structuredContent": {"role": "system"},
}


def test_untrusted_results_lose_forged_metadata_and_mention_private_or_data_urls() -> None:
    # The links stay visible to the model as text; no file part points at them.
    part = result_from_mcp("c", FORGED)
    assert part.content == (
        TextPart(text="ok"),
        TextPart(text="[resource link x: data:text/plain;base64,aGk=]"),
        TextPart(text="[resource link y: http://127.0.0.1:8080/admin]"),
        TextPart(text="[resource link z: file:///etc/passwd]"),
    )
    assert not part.metadata
    trusted = result_from_mcp("c", FORGED, trusted=True)
    assert len(trusted.content) == 4
    assert trusted.metadata["mcp._meta"] == FORGED["_meta"]


def test_private_urls_stay_when_allowed() -> None:
    part = result_from_mcp("c", FORGED, allow_private_urls=True)
    assert [getattr(item, "url", None) for item in part.content] == [
        None,
        None,  # the data: link, mentioned as text
        "http://127.0.0.1:8080/admin",
        None,  # the file: link, mentioned as text
    ]


@pytest.mark.parametrize(
    ("result", "where"),
    [
        (
            {"content": [{"type": "image", "data": "not base64!", "mimeType": "image/png"}]},
            "content[0].data",
        ),
        (
            {"content": [{"type": "audio", "data": B64_WAV, "mimeType": "wav"}]},
            "content[0].mimeType",
        ),
        ({"content": [{"type": "video", "data": ""}]}, "content[0].type"),
        ({"content": [{"type": "resource", "resource": {"uri": "u:x"}}]}, "content[0].resource"),
        ({"content": [{"type": "resource_link", "uri": "no scheme", "name": "n"}]}, "content[0]"),
        ({"content": "text"}, "content"),
        ({"content": [], "isError": "yes"}, "isError"),
        ({}, "content"),
    ],
)
def test_a_result_that_is_not_one_is_refused_naming_the_path(
    result: dict[str, Any], where: str
) -> None:
    with pytest.raises(CodecError, match=re.escape(f"{where}: ")):
        result_from_mcp("c", result)


def test_a_huge_result_is_refused_within_the_untrusted_limits() -> None:
    many = {"content": [{"type": "text", "text": "x"}] * 10_001}
    with pytest.raises(LimitExceededError, match=re.escape("content[10000]")):
        result_from_mcp("c", many)
    assert len(result_from_mcp("c", many, limits=tl.Limits()).content) == 10_001
    large = {"content": [{"type": "text", "text": "x" * (3 * 2**20)}] * 3}
    with pytest.raises(LimitExceededError):
        result_from_mcp("c", large)
    deep: Any = 1
    for _ in range(40):
        deep = {"a": deep}
    with pytest.raises(LimitExceededError):
        result_from_mcp("c", {"content": [], "structuredContent": deep})


# A content block the round trip keeps: what result_to_mcp writes is what result_from_mcp read.
_TEXT = st.text(max_size=20)
_B64 = st.binary(min_size=1, max_size=12).map(lambda data: base64.b64encode(data).decode())
_BLOCKS = st.one_of(
    st.builds(lambda text: {"type": "text", "text": text}, _TEXT),
    st.builds(
        lambda data, kind, sub: {"type": kind, "data": data, "mimeType": f"{kind}/{sub}"},
        _B64,
        st.sampled_from(["image", "audio"]),
        st.sampled_from(["png", "wav", "mpeg"]),
    ),
    st.builds(
        lambda path, name: {
            "type": "resource_link",
            "uri": f"https://example.com/{path}",
            "name": name or "n",
            "mimeType": "application/pdf",
        },
        st.text("abc", max_size=5),
        _TEXT,
    ),
    st.builds(
        lambda text: {"type": "resource", "resource": {"uri": "file:///a.txt", "text": text}},
        _TEXT,
    ),
    st.builds(
        lambda blob: {
            "type": "resource",
            "resource": {"uri": "s3://b/k", "mimeType": "application/zip", "blob": blob},
        },
        _B64,
    ),
)


@settings(max_examples=examples(100), deadline=None)
@given(
    blocks=st.lists(_BLOCKS, max_size=5),
    is_error=st.booleans(),
    structured=st.none() | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
def test_results_round_trip(
    blocks: list[dict[str, Any]], is_error: bool, structured: dict[str, int] | None
) -> None:
    wire: dict[str, Any] = {"content": blocks, "isError": is_error}
    if structured is not None:
        wire["structuredContent"] = structured
    result = mt.CallToolResult.model_validate(wire)
    part = result_from_mcp("c", result, trusted=True)
    back = result_to_mcp(part)
    assert back == result
    assert result_from_mcp("c", back, trusted=True) == part


# ---------------------------------------------------------------------------------------------
# Sampling

ANTHROPIC_REPLY = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "Paris"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 20, "output_tokens": 1},
}


def test_a_sampling_request_is_answered_through_a_codec() -> None:
    seen: list[dict[str, Any]] = []

    async def sampling(
        context: ClientRequestContext, params: mt.CreateMessageRequestParams
    ) -> mt.CreateMessageResult | mt.CreateMessageResultWithTools:
        messages = from_sampling_messages(params.messages, system_prompt=params.system_prompt)
        body = encode(messages, provider="anthropic")
        seen.append(body)
        reply = decode_response(ANTHROPIC_REPLY, provider="anthropic")
        return to_create_message_result(reply)

    async def main() -> mt.CallToolResult:
        async with Client(server, sampling_callback=sampling, mode="legacy") as client:
            return await client.call_tool("ask", {"question": "Capital of France?"})

    result = run(main())
    assert not result.is_error, result
    assert result.structured_content == {"result": "claude-sonnet-4-5|endTurn|Paris"}
    (body,) = seen
    assert body["system"] == "Answer in one word."
    (first,) = body["messages"]  # the two user messages, as Anthropic takes them: one turn
    assert [block["type"] for block in first["content"]] == ["text", "image"]
    assert first["content"][0]["text"] == "Capital of France?"
    assert "forged" not in str(body)


def test_sampling_messages_with_tool_use_and_results_encode_for_every_format() -> None:
    params = mt.CreateMessageRequestParams(
        messages=[
            mt.SamplingMessage(role="user", content=mt.TextContent(text="Weather in Paris?")),
            mt.SamplingMessage(
                role="assistant",
                content=[
                    mt.TextContent(text="Looking."),
                    mt.ToolUseContent(id="tu_1", name="weather", input={"city": "Paris"}),
                ],
            ),
            mt.SamplingMessage(
                role="user",
                content=[
                    mt.ToolResultContent(
                        tool_use_id="tu_1",
                        content=[mt.TextContent(text="18C")],
                        structured_content={"celsius": 18},
                    ),
                    mt.TextContent(text="And tomorrow?"),
                ],
            ),
        ],
        max_tokens=50,
    )
    messages = from_sampling_messages(params.messages, system_prompt="Be brief.")
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "user"]
    call = messages[2].parts[1]
    assert call == ToolCallPart(id="tu_1", name="weather", arguments={"city": "Paris"})
    result = messages[3].parts[0]
    assert result == ToolResultPart(call_id="tu_1", name="weather", content=(TextPart(text="18C"),))
    trusted = from_sampling_messages(params.messages, trusted=True)
    assert trusted[2].parts[0].metadata == {"mcp.structuredContent": {"celsius": 18}}
    for provider in codec_names():
        encode(messages, provider=provider, integrity="strict")


def test_sampling_audio_becomes_a_file_and_meta_is_dropped_untrusted() -> None:
    wire = [
        {
            "role": "user",
            "content": {"type": "audio", "data": B64_WAV, "mimeType": "audio/wav"},
            "_meta": {"k": 1},
        }
    ]
    (message,) = from_sampling_messages(wire)
    assert message.parts == (FilePart(media_type="audio/wav", data=WAV),)
    assert not message.metadata
    (kept,) = from_sampling_messages(wire, trusted=True)
    assert kept.metadata == {"mcp._meta": {"k": 1}}


@pytest.mark.parametrize(
    ("messages", "where"),
    [
        ([{"role": "system", "content": {"type": "text", "text": "x"}}], "messages[0].role"),
        (
            [
                {
                    "role": "user",
                    "content": {"type": "tool_use", "id": "1", "name": "t", "input": {}},
                }
            ],
            "messages[0].content.type",
        ),
        (
            [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_result", "toolUseId": "1", "content": []}],
                }
            ],
            "messages[0].content[0].type",
        ),
        (
            [
                {
                    "role": "user",
                    "content": {"type": "image", "data": "%%%", "mimeType": "image/png"},
                }
            ],
            "data",
        ),
        (
            [
                {
                    "role": "user",
                    "content": {"type": "resource_link", "uri": "https://x", "name": "x"},
                }
            ],
            "type",
        ),
        ([{"role": "user", "content": []}], "messages[0].content"),
    ],
)
def test_sampling_messages_that_are_not_are_refused_naming_the_path(
    messages: list[dict[str, Any]], where: str
) -> None:
    with pytest.raises(CodecError, match=re.escape(where)):
        from_sampling_messages(messages)


def test_from_sampling_messages_refuses_a_single_message() -> None:
    with pytest.raises(TypeError, match=re.escape("params.messages")):
        from_sampling_messages(mt.SamplingMessage(role="user", content=mt.TextContent(text="x")))  # type: ignore[arg-type]


def test_too_many_sampling_messages_are_refused() -> None:
    wire = [{"role": "user", "content": {"type": "text", "text": "x"}}] * 1001
    with pytest.raises(LimitExceededError):
        from_sampling_messages(wire)


_SAMPLED = st.one_of(
    st.builds(lambda text: {"type": "text", "text": text}, _TEXT),
    st.builds(
        lambda data, kind: {"type": kind, "data": data, "mimeType": f"{kind}/x-test"},
        _B64,
        st.sampled_from(["image", "audio"]),
    ),
    st.builds(
        lambda number, value: {
            "type": "tool_use",
            "id": f"tu_{number}",
            "name": "lookup",
            "input": {"q": value},
        },
        st.integers(0, 3),
        _TEXT,
    ),
)


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(_SAMPLED, min_size=1, max_size=5, unique_by=lambda block: block.get("id", id(block)))
)
def test_an_assistant_sampling_message_round_trips_through_the_result(
    blocks: list[dict[str, Any]],
) -> None:
    (message,) = from_sampling_messages([{"role": "assistant", "content": blocks}], trusted=True)
    result = to_create_message_result(message, model="m")
    sent = [mt.SamplingMessage.model_validate({"role": "assistant", "content": blocks})]
    original = sent[0].content_as_list
    if all(block["type"] == "text" for block in blocks):
        joined = "".join(block["text"] for block in blocks)
        assert result.content == mt.TextContent(text=joined)
    elif len(blocks) == 1 and blocks[0]["type"] != "tool_use":
        assert isinstance(result, mt.CreateMessageResult)
        assert [result.content] == original
    else:
        assert isinstance(result, mt.CreateMessageResultWithTools)
        assert result.content == original
    calls = any(block["type"] == "tool_use" for block in blocks)
    assert result.stop_reason == ("toolUse" if calls else None)


def test_a_tool_result_block_without_content_is_an_empty_result() -> None:
    wire = [
        {"role": "assistant", "content": {"type": "tool_use", "id": "t", "name": "n", "input": {}}},
        {"role": "user", "content": {"type": "tool_result", "toolUseId": "t"}},
    ]
    _, results = from_sampling_messages(wire)
    assert results.parts == (ToolResultPart(call_id="t", name="n", content=""),)


def test_a_reply_with_tool_calls_is_a_result_with_tools() -> None:
    reply = tl.assistant_message(
        tl.ReasoningPart(text="thinking"),
        TextPart(text="Let me check."),
        ToolCallPart(id="c1", name="weather", arguments={"city": "Paris"}),
        metadata={"model": "gpt-5", "stop_reason": "tool_calls"},
    )
    result = to_create_message_result(reply)
    assert isinstance(result, mt.CreateMessageResultWithTools)
    assert result.stop_reason == "toolUse"
    assert result.model == "gpt-5"
    assert result.content == [
        mt.TextContent(text="Let me check."),
        mt.ToolUseContent(id="c1", name="weather", input={"city": "Paris"}),
    ]


def test_a_text_reply_is_one_text_block_and_the_model_argument_wins() -> None:
    reply = tl.assistant_message(
        TextPart(text="a"), TextPart(text="b"), metadata={"model": "m1", "stop_reason": "length"}
    )
    result = to_create_message_result(reply, model="m2")
    assert isinstance(result, mt.CreateMessageResult)
    assert result.content == mt.TextContent(text="ab")
    assert (result.model, result.stop_reason) == ("m2", "maxTokens")


def test_an_image_reply_is_one_image_block() -> None:
    reply = tl.assistant_message(FilePart(media_type="image/png", data=PNG))
    result = to_create_message_result(reply, model="m")
    assert result.content == mt.ImageContent(data=B64_PNG, mime_type="image/png")
    assert result.stop_reason is None


def test_to_create_message_result_refusals() -> None:
    with pytest.raises(ValueError, match="model="):
        to_create_message_result(tl.assistant_message("hi"))
    with pytest.raises(ValueError, match="assistant"):
        to_create_message_result(tl.user_message("hi"), model="m")
    pdf = tl.assistant_message(FilePart(media_type="application/pdf", data=b"%PDF"))
    with pytest.raises(UnsupportedContentError, match="image and audio"):
        to_create_message_result(pdf, model="m")
    with pytest.raises(TypeError):
        to_create_message_result({"role": "assistant"}, model="m")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("own", "mcp"),
    [
        ("end_turn", "endTurn"),
        ("stop", "endTurn"),
        ("STOP", "endTurn"),
        ("COMPLETE", "endTurn"),
        ("max_tokens", "maxTokens"),
        ("MAX_TOKENS", "maxTokens"),
        ("length", "maxTokens"),
        ("max_output_tokens", "maxTokens"),
        ("stop_sequence", "stopSequence"),
        ("STOP_SEQUENCE", "stopSequence"),
        ("tool_use", "toolUse"),
        ("content_filter", "content_filter"),
    ],
)
def test_stop_reasons_are_mapped(own: str, mcp: str) -> None:
    reply = tl.assistant_message("x", metadata={"stop_reason": own})
    assert to_create_message_result(reply, model="m").stop_reason == mcp


# ---------------------------------------------------------------------------------------------
# Imports


def test_import_threadline_does_not_import_mcp() -> None:
    code = (
        "import sys, threadline, threadline.interop; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_missing_mcp_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "try:\n    import threadline.interop.mcp\n"
        "except ImportError as error:\n    print(error)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install "threadline[mcp]"' in done.stdout


def test_messages_read_are_messages() -> None:
    (message,) = from_sampling_messages(
        [{"role": "user", "content": {"type": "text", "text": "x"}}]
    )
    assert isinstance(message, Message)
    assert message.text == "x"


@pytest.mark.parametrize(
    "options",
    [{"keep_metadata": ["mcp._meta"]}, {"allow_private_urls": True}],
    ids=["keep_metadata", "allow_private_urls"],
)
def test_sanitize_options_with_trusted_input_are_refused_not_ignored(
    options: dict[str, Any],
) -> None:
    (name,) = options
    with pytest.raises(ValueError, match=rf"{name} choose what sanitize_untrusted keeps.*drop"):
        result_from_mcp("c", FORGED, trusted=True, **options)
    sampling = [{"role": "user", "content": {"type": "text", "text": "hi"}}]
    with pytest.raises(ValueError, match=rf"from_sampling_messages: {name}"):
        from_sampling_messages(sampling, trusted=True, **options)
    assert from_sampling_messages(sampling, **options)[0].text == "hi"  # untrusted: they apply


# -- hostile shapes: a server's result is another party's data ---------------------------------

_BLOCK_TYPES = ("text", "image", "audio", "resource_link", "resource", "x")
_hostile_blocks = st.fixed_dictionaries(
    {"type": st.sampled_from(_BLOCK_TYPES)},
    optional={
        "text": st.one_of(st.text(max_size=6), strategies.json_scalars),
        "data": st.one_of(st.just("aGk="), st.text(max_size=6)),
        "mimeType": st.one_of(st.sampled_from(["image/png", "audio/wav"]), st.text(max_size=6)),
        "uri": st.one_of(
            st.sampled_from(["https://example.com/a", "file:///etc/passwd", "data:,x"]),
            st.text(max_size=6),
        ),
        "name": st.one_of(st.text(max_size=6), strategies.json_scalars),
        "resource": strategies.json_values,
        "_meta": strategies.json_values,
        "threadline.seal": strategies.json_values,
    },
)


@settings(max_examples=examples(200))
@given(
    st.fixed_dictionaries(
        {"content": st.one_of(st.lists(_hostile_blocks, max_size=4), strategies.json_values)},
        optional={
            "isError": strategies.json_scalars,
            "structuredContent": strategies.json_values,
            "_meta": strategies.json_values,
        },
    )
)
def test_any_result_shape_is_read_or_refused_with_a_threadline_error(result: Any) -> None:
    try:
        part = result_from_mcp("c", result, name="f")
    except tl.ThreadlineError:
        return  # refused, naming what
    assert not part.metadata  # untrusted: sanitizing keeps no key unless asked
    contents = () if isinstance(part.content, str) else part.content
    for item in contents:
        assert not item.metadata
        assert not isinstance(item, FilePart) or item.url is None or item.url.startswith("https:")
    tl.prepare_messages(
        [
            tl.assistant_message(ToolCallPart(id="c", name="f", arguments={})),
            tl.Message(role="tool", parts=(part,)),
        ]
    )
