"""``encode(..., tools=, tool_choice=)`` in every format, judged like the history: the SDKs'
own request types (and botocore's service model), the rules judge on the whole request, and
the real SDK clients over a fake transport sending exactly our body."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from typing import Literal

import pydantic
import pytest

import threadline as tl
from tests.conformance import _rules
from tests.conformance.capture import NOWHERE
from tests.conformance.capture import capture_anthropic
from tests.conformance.capture import capture_openai_chat
from tests.conformance.capture import capture_request
from tests.conformance.capture_mistral_bedrock import capture_bedrock
from tests.conformance.capture_mistral_bedrock import capture_mistral
from tests.conformance.capture_more import GEMINI_REPLY
from tests.conformance.capture_more import capture_openai_responses
from tests.conformance.judges import judge_anthropic
from tests.conformance.judges import judge_dialect
from tests.conformance.judges import judge_openai_chat
from tests.conformance.judges_cohere import capture_cohere
from tests.conformance.judges_cohere import judge_cohere
from tests.conformance.judges_mistral_bedrock import judge_bedrock
from tests.conformance.judges_mistral_bedrock import judge_mistral
from tests.conformance.judges_ollama import capture_ollama
from tests.conformance.judges_ollama import judge_ollama
from tests.conformance.judges_responses_gemini import judge_gemini
from tests.conformance.judges_responses_gemini import judge_openai_responses
from tests.dialect_cases import DIALECTS
from tests.support import require_module
from threadline import Message
from threadline.codecs import bedrock
from threadline.codecs import codec_names
from threadline.codecs import encode
from threadline.codecs import wire_tool_names

pytestmark = pytest.mark.requires_sdk

JUDGES: dict[str, Callable[[Mapping[str, Any]], None]] = {
    "anthropic": judge_anthropic,
    "bedrock": judge_bedrock,
    "gemini": judge_gemini,
    "mistral": judge_mistral,
    "openai_chat": judge_openai_chat,
    "openai_responses": judge_openai_responses,
    "ollama": judge_ollama,
    "cohere": judge_cohere,
    **{name: functools.partial(judge_dialect, name) for name in DIALECTS},
}
CHOICES = (None, "auto", "none", "required", "files.read", "get_weather")


class Place(pydantic.BaseModel):
    city: str
    country: str | None = None


def get_weather(place: Place, unit: Literal["c", "f"] = "c", days: int = 1) -> str:
    """Get the weather.

    Args:
        place: Where.
        unit: The unit.
    """
    return "sunny"


def now() -> str:
    """The time."""
    return "noon"


READ = tl.ToolDefinition(
    "files.read",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
TOOL_SETS = {
    "plain": [tl.tool_from_function(get_weather), READ, tl.tool_from_function(now)],
    "strict": [tl.tool_from_function(get_weather, strict=True), READ],
}


def history(kind: str) -> list[Message]:
    ask = tl.user_message("Read a.txt, then the weather in Oslo.")
    if kind == "ask":
        return [ask]
    return [
        ask,
        tl.assistant_message(tl.tool_call_part("call_1", "files.read", {"path": "a.txt"})),
        tl.tool_message(tl.tool_result_part("call_1", "hello", name="files.read")),
    ]


def request(provider: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """The SDK call's arguments for ``body``."""
    if provider == "anthropic":
        return {"model": "capture-model", "max_tokens": 256, **body}
    if provider == "bedrock":
        return {"modelId": "capture-model", **body}
    return {"model": "capture-model", **body}


def sent_by_sdk(provider: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body the real client put on the wire for ``body``."""
    captures: dict[str, Callable[..., dict[str, Any]]] = {
        "anthropic": capture_anthropic,
        "bedrock": capture_bedrock,
        "mistral": capture_mistral,
        "openai_chat": capture_openai_chat,
        "openai_responses": capture_openai_responses,
        "ollama": capture_ollama,
        "cohere": capture_cohere,
        **dict.fromkeys(DIALECTS, capture_openai_chat),  # the OpenAI SDK, another base URL
    }
    sent: dict[str, Any] = captures[provider](request(provider, body))["json"]
    if provider == "cohere":
        assert sent.pop("stream") is False  # ClientV2.chat says it does not stream
    if provider in ("mistral", "ollama"):
        # mistralai adds its defaults (stream, prefix, index), the ollama client leaves out
        # empty values: test_mistral and test_ollama compare the history the SDK way; here
        # the request fields are compared.
        assert sent.pop("stream") is False
        sent.pop("messages")
    if provider == "ollama":
        # its Tool model keeps the schema keys Ollama reads (not additionalProperties, say)
        tool_model = require_module("ollama._types").Tool
        sent["tools"] = [
            tool_model.model_validate(t).model_dump(exclude_none=True) for t in sent["tools"]
        ]
    return sent


def wire(value: Any) -> Any:
    return json.loads(json.dumps(value))


@pytest.mark.parametrize("tool_set", sorted(TOOL_SETS))
@pytest.mark.parametrize("kind", ["ask", "loop"])
@pytest.mark.parametrize("choice", CHOICES)
@pytest.mark.parametrize("provider", codec_names())
def test_every_format_tool_set_and_choice_is_judged_and_sent_as_is(
    provider: str, choice: str | None, kind: str, tool_set: str
) -> None:
    tools = TOOL_SETS[tool_set]
    if (
        (provider == "bedrock" and choice == "none")
        or (provider == "ollama" and choice not in (None, "auto"))  # it has no tool_choice
        or (provider == "cohere" and choice in ("files.read", "get_weather"))  # none named
    ):
        with pytest.raises(tl.UnsupportedContentError, match=provider):
            encode(history(kind), provider=provider, tools=tools, tool_choice=choice)
        return
    body = encode(history(kind), provider=provider, tools=tools, tool_choice=choice)
    JUDGES[provider](body)
    _rules.judge_rules(provider, body, scope="request")
    if provider == "gemini":
        # google-genai rebuilds schemas in its own spelling (``OBJECT``, ``any_of``): compare
        # what it sent and what we gave as its own models.
        types = require_module("google.genai.types")
        sent = capture_gemini_tools(body)
        assert [types.Tool.model_validate(tool) for tool in sent["tools"]] == [
            types.Tool.model_validate(tool) for tool in body["tools"]
        ]
        config = body.get("toolConfig")
        assert sent.get("toolConfig") == config
        return
    sent = sent_by_sdk(provider, body)
    expected = wire(request(provider, body))
    expected.pop("modelId", None)  # botocore puts it in the URL
    if provider in ("mistral", "ollama"):
        expected.pop("messages")
    if provider == "ollama":
        tool_model = require_module("ollama._types").Tool
        expected["tools"] = [
            tool_model.model_validate(t).model_dump(exclude_none=True) for t in expected["tools"]
        ]
    assert sent == expected


def capture_gemini_tools(body: Mapping[str, Any]) -> dict[str, Any]:
    """What ``google-genai`` sends for ``tools`` / ``toolConfig`` given in its config."""
    genai = require_module("google.genai")
    types = require_module("google.genai.types")
    config: dict[str, Any] = {"tools": body["tools"]}
    if "toolConfig" in body:
        config["tool_config"] = body["toolConfig"]

    def send(http_client: Any) -> Any:
        options = types.HttpOptions(base_url=NOWHERE, httpx_client=http_client)
        client = genai.Client(api_key="capture", http_options=options)
        return client.models.generate_content(
            model="gemini-capture", contents=body["contents"], config=config
        )

    sent: dict[str, Any] = capture_request(send, GEMINI_REPLY)["json"]
    return sent


@pytest.mark.parametrize("provider", codec_names())
def test_a_tool_loop_without_tools_is_a_valid_request(provider: str) -> None:
    """Bedrock: the history's tools are declared (Converse refuses tool blocks without a
    toolConfig); the others send the history alone."""
    body = encode(history("loop"), provider=provider)
    JUDGES[provider](body)
    _rules.judge_rules(provider, body, scope="request")
    assert ("toolConfig" in body) == (provider == "bedrock")
    if provider == "bedrock":
        sent = sent_by_sdk(provider, body)
        assert sent["toolConfig"] == body["toolConfig"]


def test_the_rules_judge_now_sees_bedrocks_tool_config() -> None:
    fragment = bedrock.encode(history("loop"))
    assert _rules.violations("bedrock", fragment, scope="request")
    assert not _rules.violations("bedrock", encode(history("loop"), provider="bedrock"))


NO_NAME_RULE = {
    "cohere": "Cohere's docs state no tool-name pattern and no public error quotes one",
}
"""Formats with rules but without a tool-name rule, and why."""


@pytest.mark.parametrize(
    "provider",
    [name for name in codec_names() if name in _rules.RULES and name not in NO_NAME_RULE],
)
def test_the_rules_judge_reads_definition_names(provider: str) -> None:
    choice = "files.read"
    body = encode(history("ask"), provider=provider, tools=[READ], tool_choice=choice)
    broken = json.loads(json.dumps(body).replace(_wire(body), "files read"))
    assert _rules.violations(provider, broken, scope="request")


def _wire(body: Mapping[str, Any]) -> str:
    text = json.dumps(body)
    if '"files.read"' in text:
        return "files.read"
    return wire_tool_names(["files.read"], provider="anthropic").popitem()[0]
