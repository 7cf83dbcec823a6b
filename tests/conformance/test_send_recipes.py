"""Issue 39: the recipes of ``docs/cookbook/sending-bodies.md`` send an encoded body through
the real SDK clients without the SDK's per-value rewrite, and put exactly that body on the
wire: the JSON the mock transport receives is the body, key order included, with the headers
``create`` sends, and the reply parses into the SDK's own type (and back into a message).

The recipes rest on what the SDK's rewrite does: for these parameter types it renames and
reformats nothing, so skipping it changes nothing an encoded body holds. The tests walk the
SDK's parameter types to keep that true for the installed version."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import typing_extensions

import threadline as tl
from tests.conformance.capture import ANTHROPIC_REPLY
from tests.conformance.capture import NOWHERE
from tests.conformance.capture import OPENAI_CHAT_REPLY
from tests.conformance.capture_more import OPENAI_RESPONSES_REPLY
from tests.support import require_module

pytestmark = pytest.mark.requires_sdk

WEATHER = tl.ToolDefinition(
    name="get_weather",
    description="The weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def history() -> tl.History:
    call = tl.ToolCallPart(id="call_1", name="get_weather", arguments={"city": "Zürich"})
    result = tl.ToolResultPart(
        call_id="call_1", name="get_weather", content=(tl.TextPart(text="sunny, 21 °C"),)
    )
    return tl.History(
        [
            tl.system_message("Be brief.", id="msg_s"),
            tl.user_message("Weather in Zürich?", id="msg_u"),
            tl.Message(id="msg_a", role="assistant", parts=(call,)),
            tl.Message(id="msg_t", role="tool", parts=(result,)),
            tl.Message(id="msg_b", role="assistant", parts=(tl.TextPart(text="Sunny."),)),
            tl.user_message("And tomorrow?", id="msg_v"),
        ]
    )


def body_for(provider: str, **fields: Any) -> dict[str, Any]:
    encoded = tl.encode(
        history().messages_for_model(), provider=provider, tools=[WEATHER], tool_choice="auto"
    )
    return {**fields, **encoded}


class Wire:
    """An ``httpx2`` client whose requests a mock transport records and answers."""

    def __init__(self, reply: dict[str, Any]) -> None:
        httpx2 = require_module("httpx2")
        self.requests: list[Any] = []

        def answer(request: Any) -> Any:
            self.requests.append(request)
            return httpx2.Response(200, json=reply)

        self.client = httpx2.Client(transport=httpx2.MockTransport(answer))

    def sent(self) -> Any:
        assert len(self.requests) == 1, f"expected one request, got {len(self.requests)}"
        return self.requests.pop()


def same_json(content: bytes, body: dict[str, Any]) -> None:
    # Equal as JSON text (key order included) once parsed: the SDK's spacing is its own.
    assert json.dumps(json.loads(content)) == json.dumps(body)


HEADERS = ("authorization", "x-api-key", "content-type", "anthropic-version")


def same_headers(recipe: Any, create: Any) -> None:
    for name in HEADERS:
        assert recipe.headers.get(name) == create.headers.get(name), name


@pytest.fixture
def openai() -> Any:
    return require_module("openai")


def openai_client(openai: Any, wire: Wire) -> Any:
    return openai.OpenAI(
        api_key="sk-recipe", base_url=NOWHERE + "/v1", max_retries=0, http_client=wire.client
    )


def test_openai_chat_post_sends_the_body(openai: Any) -> None:
    from openai.types.chat import ChatCompletion

    body = body_for("openai_chat", model="gpt-4o")
    wire = Wire(OPENAI_CHAT_REPLY)
    client = openai_client(openai, wire)
    completion = client.post("/chat/completions", body=body, cast_to=ChatCompletion)
    recipe = wire.sent()
    client.chat.completions.create(**body)
    create = wire.sent()
    assert recipe.url == create.url
    same_json(recipe.content, body)
    assert json.loads(create.content) == body  # the rewrite changed no value (only key order)
    same_headers(recipe, create)
    assert isinstance(completion, ChatCompletion)
    assert tl.decode_response(completion, provider="openai_chat").text == "ok"


def test_openai_responses_post_sends_the_body(openai: Any) -> None:
    from openai.types.responses import Response

    body = body_for("openai_responses", model="gpt-4o")
    wire = Wire(OPENAI_RESPONSES_REPLY)
    client = openai_client(openai, wire)
    response = client.post("/responses", body=body, cast_to=Response)
    recipe = wire.sent()
    client.responses.create(**body)
    create = wire.sent()
    assert recipe.url == create.url
    same_json(recipe.content, body)
    assert json.loads(create.content) == body
    same_headers(recipe, create)
    assert isinstance(response, Response)
    assert tl.decode_response(response, provider="openai_responses").text == "ok"


def test_openai_post_of_bytes_sends_them_as_they_are(openai: Any) -> None:
    from openai.types.chat import ChatCompletion

    body = body_for("openai_chat", model="gpt-4o")
    raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    wire = Wire(OPENAI_CHAT_REPLY)
    client = openai_client(openai, wire)
    completion = client.post(
        "/chat/completions",
        content=raw,
        cast_to=ChatCompletion,
        options={"headers": {"Content-Type": "application/json"}},
    )
    recipe = wire.sent()
    client.chat.completions.create(**body)
    create = wire.sent()
    assert recipe.content == raw
    same_headers(recipe, create)
    assert isinstance(completion, ChatCompletion)


def test_openai_chat_post_streams(openai: Any) -> None:
    from openai import Stream
    from openai.types.chat import ChatCompletion
    from openai.types.chat import ChatCompletionChunk

    httpx2 = require_module("httpx2")
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}}],
    }
    done = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    events = "".join(f"data: {json.dumps(c)}\n\n" for c in (chunk, done)) + "data: [DONE]\n\n"
    seen: list[Any] = []

    def answer(request: Any) -> Any:
        seen.append(request)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=events)

    client = openai.OpenAI(
        api_key="sk-recipe",
        base_url=NOWHERE + "/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(answer)),
    )
    body = {**body_for("openai_chat", model="gpt-4o"), "stream": True}
    stream = client.post(
        "/chat/completions",
        body=body,
        cast_to=ChatCompletion,
        stream=True,
        stream_cls=Stream[ChatCompletionChunk],
    )
    assembler = tl.StreamAssembler("openai_chat")
    for event in stream:
        assert isinstance(event, ChatCompletionChunk)
        assembler.feed(event)
    assert assembler.message().text == "hi"
    same_json(seen[0].content, body)


def test_anthropic_post_of_bytes_sends_them_as_they_are() -> None:
    anthropic = require_module("anthropic")
    from anthropic.types import Message as AnthropicMessage

    body = body_for("anthropic", model="claude-test", max_tokens=1024)
    raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    wire = Wire(ANTHROPIC_REPLY)
    client = anthropic.Anthropic(
        api_key="sk-ant-recipe", base_url=NOWHERE, max_retries=0, http_client=wire.client
    )
    message = client.post(
        "/v1/messages",
        content=raw,
        cast_to=AnthropicMessage,
        options={"headers": {"Content-Type": "application/json"}},
    )
    recipe = wire.sent()
    client.messages.create(**body)
    create = wire.sent()
    assert recipe.url == create.url
    assert recipe.content == raw
    assert json.loads(create.content) == body
    same_headers(recipe, create)
    assert isinstance(message, AnthropicMessage)
    assert tl.decode_response(message, provider="anthropic").text == "ok"


# -- what the OpenAI SDK's rewrite does to these parameters ------------------------------------


def annotated_property_infos(root: Any, property_info: type) -> Iterator[tuple[str, Any]]:
    """Every ``PropertyInfo`` with an ``alias`` or a ``format`` reachable from the TypedDict
    ``root``: the only things the SDK's ``transform`` changes in a plain JSON body (it also
    drops omitted arguments, lists iterables and dumps pydantic models: an encoded body holds
    none of those)."""
    seen: set[Any] = set()
    stack: list[tuple[str, Any]] = [(root.__name__, root)]
    while stack:
        path, kind = stack.pop()
        if typing_extensions.get_origin(kind) is typing_extensions.Annotated:
            base, *metadata = typing_extensions.get_args(kind)
            for item in metadata:
                changes = getattr(item, "alias", None) or getattr(item, "format", None)
                if isinstance(item, property_info) and changes:
                    yield path, item
            stack.append((path, base))
        elif typing_extensions.is_typeddict(kind):
            if kind in seen:
                continue
            seen.add(kind)
            hints = typing_extensions.get_type_hints(kind, include_extras=True)
            stack.extend((f"{path}.{key}", hint) for key, hint in hints.items())
        else:
            stack.extend((f"{path}[]", arg) for arg in typing_extensions.get_args(kind))
    assert len(seen) > 10, f"walked only {len(seen)} TypedDicts from {root.__name__}"


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("openai.types.chat.completion_create_params", "CompletionCreateParamsNonStreaming"),
        ("openai.types.chat.completion_create_params", "CompletionCreateParamsStreaming"),
        ("openai.types.responses.response_create_params", "ResponseCreateParamsNonStreaming"),
        ("openai.types.responses.response_create_params", "ResponseCreateParamsStreaming"),
    ],
)
def test_the_openai_rewrite_renames_and_reformats_nothing(module: str, name: str) -> None:
    params = getattr(require_module(module), name)
    property_info = require_module("openai._utils._transform").PropertyInfo
    assert list(annotated_property_infos(params, property_info)) == []


def test_the_walk_finds_an_alias_where_there_is_one() -> None:
    transform = require_module("openai._utils._transform")
    namespace: dict[str, Any] = {}
    source = (
        "from typing_extensions import Annotated, TypedDict\n"
        "from openai._utils._transform import PropertyInfo\n"
        "class Inner(TypedDict):\n"
        "    card_id: Annotated[str, PropertyInfo(alias='cardID')]\n"
        "class Outer(TypedDict):\n"
        "    cards: list[Inner]\n"
    )
    # Compiled without this module's postponed annotations, so the hints are objects.
    exec(compile(source, "<params>", "exec", dont_inherit=True), namespace)
    walk = annotated_property_infos(namespace["Outer"], transform.PropertyInfo)
    path, info = next(walk)
    assert (path, info.alias) == ("Outer.cards[].card_id", "cardID")


def test_gemini_rest_post_sends_the_body_the_sdk_would_spell_otherwise() -> None:
    httpx2 = require_module("httpx2")
    from tests.conformance.capture_more import GEMINI_REPLY
    from tests.conformance.capture_more import canonical_gemini
    from tests.conformance.capture_more import capture_gemini

    body = body_for("gemini")
    wire = Wire(GEMINI_REPLY)
    response = wire.client.post(
        NOWHERE + "/v1/models/gemini-capture:generateContent",
        headers={"x-goog-api-key": "capture"},
        json=body,
    )
    recipe = wire.sent()
    same_json(recipe.content, body)
    sdk = capture_gemini(body)
    assert httpx2.URL(sdk["url"]).path == recipe.url.path
    # The SDK sends the same history in its own spelling (snake_case, URL-safe base64).
    assert canonical_gemini(sdk["json"]) == canonical_gemini(body)
    assert tl.decode_response(response.json(), provider="gemini").text == "ok"
