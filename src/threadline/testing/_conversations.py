"""Conversations for the conformance kits in `threadline.testing`.

Deterministic for a seed and free of test dependencies (no hypothesis), so a third party can
run ``check_codec`` from any test runner. The conversations are agent histories that exercise
every role, every part type, files a format may or may not take, reasoning from each provider,
ids a format may reject, and the defects `prepare_messages` repairs (a
missing result, a misplaced result, malformed arguments, internal messages, hook parts).
"""

from __future__ import annotations

import random
from typing import Any

from threadline._json import EMPTY
from threadline._json import freeze_json_map
from threadline.codecs._formats import DESCRIPTORS
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

__all__ = ["hostile_id_conversation", "sample_conversations"]

_TEXTS = (
    "hello",
    "",
    "héllo wörld",
    "日本語のテキスト",
    "emoji 🧵🪡",
    'quote " and \\ backslash',
    "line\nbreak",
    "  padded  ",
    "a longer sentence that a model might say about the weather in Paris",
)
_PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xfb\xff"
_FILES = (
    ("image/png", _PNG),
    ("image/jpeg", b"\xff\xd8\xff\xe0\xfb\xef\xbe"),
    ("image/webp", b"RIFF\x00\x00WEBP"),
    ("image/gif", b"GIF89a\x01"),
    ("application/pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n%%EOF\n"),
    ("audio/wav", b"RIFF\x24\x00\x00\x00WAVEfmt "),
    ("audio/mpeg", b"ID3\x03\x00"),
    ("text/plain", "plain text, é".encode()),
    ("text/plain", b"\xff\xfe not utf-8"),
    ("video/mp4", b"\x00\x00\x00\x18ftypmp42"),
    ("application/vnd.ms-excel", b"\xd0\xcf\x11\xe0"),
)
_URLS = (
    ("image/png", "https://example.com/cat.png"),
    ("image/jpeg", "https://example.com/photo"),
    ("application/pdf", "https://example.com/paper.pdf"),
    ("audio/wav", "https://example.com/sound.wav"),
)
_FIRST_TAGS = ("openai", "anthropic", "gemini", "mistral", "bedrock")
"""The provider tags in the order the conversations of a seed were first drawn with: the tags
of formats registered since follow them, sorted (a seed's conversations change only when a
tag is added)."""


def _provider_tags() -> tuple[str, ...]:
    tags = {d.provider for d in DESCRIPTORS.values()}
    first = [tag for tag in _FIRST_TAGS if tag in tags]
    return (*first, *sorted(tags.difference(first)))


_PROVIDERS = _provider_tags()
"""The ``provider`` tags of the registered formats: the reasoning of each is in the mix."""
_MODELS = (None, "model-a", "model-b")


class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.count = 0
        self.prefix = f"s{seed}"

    def next_id(self, kind: str) -> str:
        self.count += 1
        return f"{kind}_{self.prefix}_{self.count}"

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def text(self) -> TextPart:
        return TextPart(text=self.rng.choice(_TEXTS))

    def file(self) -> FilePart:
        filename = self.rng.choice((None, "report.pdf", "notes.bin"))
        if self.chance(0.25):
            media_type, url = self.rng.choice(_URLS)
            return FilePart(media_type=media_type, url=url, filename=filename)
        media_type, data = self.rng.choice(_FILES)
        return FilePart(media_type=media_type, data=data, filename=filename)

    def reasoning(self) -> ReasoningPart:
        provider = self.rng.choice((*_PROVIDERS, None))
        model = self.rng.choice(_MODELS)
        if self.chance(0.3):
            return ReasoningPart(
                encrypted="opaque-" + self.next_id("enc"),
                redacted=True,
                provider=provider,
                model=model,
            )
        return ReasoningPart(
            text=self.rng.choice(("Let me think.", "", "Plan: call the tool.")),
            signature=self.rng.choice((None, "sig-" + self.next_id("sig"))),
            provider=provider,
            model=model,
            item_id=self.rng.choice((None, "rs_" + str(self.count))),
            summary=self.rng.choice(((), ("a summary",))),
        )

    def call_id(self) -> str:
        plain = self.next_id("call")
        roll = self.rng.random()
        if roll < 0.1:
            return plain + "_" + "x" * 60  # longer than OpenAI Chat's 40
        if roll < 0.2:
            return plain.replace("_", ":") + "|tool.v2"  # characters Anthropic rejects
        return plain

    def call(self) -> ToolCallPart:
        arguments: dict[str, Any] = self.rng.choice(
            ({}, {"city": "Paris"}, {"n": 3, "nested": {"list": [1, 2.5, None, True]}})
        )
        return ToolCallPart(
            id=self.call_id(),
            name=self.rng.choice(("lookup", "get_weather")),
            arguments=freeze_json_map(arguments),
        )

    def result(self, call: ToolCallPart) -> ToolResultPart:
        content: Any
        if self.chance(0.6):
            content = self.rng.choice(("sunny, 21°C", "", "line one\nline two"))
        else:
            content = tuple(
                self.file() if self.chance(0.5) else self.text()
                for _ in range(self.rng.randint(1, 3))
            )
        return ToolResultPart(
            call_id=call.id,
            content=content,
            name=self.rng.choice((None, call.name)),
            is_error=self.chance(0.3),
        )

    def provider_tools(self) -> list[Any]:
        call_id = self.next_id("srvtoolu")
        if self.chance(0.5):  # as Anthropic's web search returns it
            return [
                ProviderToolCallPart(
                    id=call_id, name="web_search", input={"query": "weather"}, provider="anthropic"
                ),
                ProviderToolResultPart(
                    call_id=call_id,
                    content=[
                        {
                            "type": "web_search_result",
                            "url": "https://example.com/weather",
                            "title": "Weather",
                            "encrypted_content": "EqgfCioIARgBIiQ3",
                            "page_age": "April 1, 2026",
                        }
                    ],
                    provider="anthropic",
                    metadata=freeze_json_map({"anthropic.type": "web_search_tool_result"}),
                ),
            ]
        provider = self.rng.choice(("openai", "gemini"))
        return [
            ProviderToolCallPart(
                id=call_id, name="code_execution", input={"code": "1+1"}, provider=provider
            ),
            ProviderToolResultPart(call_id=call_id, content={"output": "2"}, provider=provider),
        ]

    def message(self, role: str, parts: list[Any]) -> Message:
        return Message(id=self.next_id("msg"), role=role, parts=tuple(parts))  # type: ignore[arg-type]


def _conversation(seed: int) -> list[Message]:
    build = _Builder(seed)
    rng = build.rng
    out: list[Message] = []
    if build.chance(0.6):
        out.append(build.message("system", [build.text()]))
    for _ in range(rng.randint(1, 4)):
        user_parts: list[Any] = [build.text()]
        if build.chance(0.4):
            user_parts.append(build.file())
        out.append(build.message("user", user_parts))
        parts: list[Any] = []
        if build.chance(0.5):
            parts.append(build.reasoning())
        if build.chance(0.2):
            parts.extend(build.provider_tools())
        if build.chance(0.7):
            parts.append(build.text())
        calls = [build.call() for _ in range(rng.choice((0, 0, 1, 1, 2, 3)))]
        parts.extend(calls)
        if build.chance(0.1):
            parts.append(HookPart(name="approval", state=freeze_json_map({"pending": True})))
        if build.chance(0.1):
            parts.append(build.file())
        if not parts:
            parts.append(build.text())
        out.append(build.message("assistant", parts))
        if calls:
            out.append(build.message("tool", [build.result(call) for call in calls]))
            if build.chance(0.5):
                out.append(build.message("assistant", [build.text()]))
        if build.chance(0.15):
            out.append(
                build.message("internal", [HookPart(name="ui", state=freeze_json_map({"step": 1}))])
            )
        if build.chance(0.1):
            out.append(build.message("system", [TextPart(text="Now answer in French.")]))
    return _with_defects(out, build)


def _with_defects(messages: list[Message], build: _Builder) -> list[Message]:
    """Break the pairing rules the way crashed or trimmed agent runs do; repair undoes it."""
    rng = build.rng
    tools = [index for index, message in enumerate(messages) if message.role == "tool"]
    if tools and build.chance(0.3):  # a crash lost a result (missing-tool-result)
        index = rng.choice(tools)
        kept = messages[index].parts[1:]
        if kept:
            messages[index] = messages[index].model_copy(update={"parts": kept})
        else:
            del messages[index]
    tools = [index for index, message in enumerate(messages) if message.role == "tool"]
    if tools and build.chance(0.2):  # a result written after the next user message
        index = rng.choice(tools)
        moved = messages.pop(index)
        later = [i for i in range(index, len(messages)) if messages[i].role == "user"]
        messages.insert(later[0] + 1 if later else len(messages), moved)
    if build.chance(0.2):  # the model emitted malformed arguments (invalid-tool-args)
        for index, message in enumerate(messages):
            calls = message.tool_calls
            if calls:
                bad = ToolCallPart(
                    id=calls[0].id,
                    name=calls[0].name,
                    arguments=EMPTY,
                    raw_arguments='{"city": "Par',
                )
                parts = tuple(bad if part is calls[0] else part for part in message.parts)
                messages[index] = message.model_copy(update={"parts": parts})
                break
    return messages


def sample_conversations(seed: int, count: int) -> list[list[Message]]:
    """``count`` conversations, the same ones for the same ``seed``."""
    return [_conversation(seed * 100_003 + number) for number in range(count)]


def hostile_id_conversation() -> list[Message]:
    """Tool-call ids chosen to break naive id mapping.

    Ids longer than any limit, two that share their first 40 and 64 characters, characters
    Anthropic and Mistral reject, an empty id, and a plain one; every call answered.
    """
    shared = "call_" + "0123456789" * 7
    ids = (
        "call_1",
        shared + "A",
        shared + "B",
        "x" * 200,
        "tooluse.bedrock:id|7",
        "",
        "ünïcödé",
        "call 2 with spaces",
    )
    out: list[Message] = [Message(id="msg_u", role="user", parts=(TextPart(text="go"),))]
    for number, call_id in enumerate(ids):
        call = ToolCallPart(id=call_id, name="lookup", arguments=freeze_json_map({"n": number}))
        out.append(Message(id=f"msg_a{number}", role="assistant", parts=(call,)))
        result = ToolResultPart(call_id=call_id, content=f"result {number}", name="lookup")
        out.append(Message(id=f"msg_t{number}", role="tool", parts=(result,)))
    out.append(Message(id="msg_end", role="user", parts=(TextPart(text="thanks"),)))
    return out
