"""Hypothesis strategies shared by every property test.

``conversations()`` draws realistic, well-formed agent conversations: an optional system prompt,
then turns of a user message, an assistant message (reasoning with opaque state, text, zero to
three tool calls, sometimes a provider-run tool, sometimes a hook), one tool message answering
every call, and now and then an internal message. Ids are unique and deterministic for a draw.
Integrity tests inject defects into these; serialization tests round-trip them.
"""

from __future__ import annotations

import re
import string
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from typing import Any

from hypothesis import strategies as st

from tests.dialect_cases import DIALECTS
from threadline import FilePart
from threadline import HookPart
from threadline import Message
from threadline import ProviderToolCallPart
from threadline import ProviderToolResultPart
from threadline import ReasoningPart
from threadline import TextPart
from threadline import ToolCallPart
from threadline import ToolResultPart
from threadline.stores import CONVERSATION_ID_PATTERN

PROVIDERS = ("openai", "anthropic", "gemini", "mistral", "bedrock", "cohere", "ollama", *DIALECTS)

# Metadata keys by what ``sanitize_untrusted`` does with them (the unit and property tests of it).
SANITIZE_KEPT_KEYS = ("openai.refusal", "openai.custom_tool", "openai.namespace")
"""The metadata keys ``sanitize_untrusted`` keeps by default."""
CODEC_METADATA_KEYS = (
    "anthropic.cache_control",
    "anthropic.caller",
    "anthropic.citations",
    "anthropic.type",
    "openai.annotations",
    "openai.detail",
    "openai.item_id",
    "openai.phase",
    "openai.type",
    "gemini.thought_signature",
    "gemini.tool_type",
    "mistral.thinking",
    "cohere.citations",
    "cohere.document",
    "cohere.tool_plan",
    "openrouter.reasoning_detail",
    "threadline.blob",
    "threadline.masked",
    "threadline.raw_arguments",
    "threadline.repair",
    "threadline.summary",
)
"""Every other part or message metadata key a codec or threadline itself reads or writes: a
client may not set any of them, so ``sanitize_untrusted`` drops them by default."""
RESPONSE_METADATA_KEYS = (
    "provider",
    "model",
    "response_id",
    "stop_reason",
    "usage",
    *(f"{provider}.usage" for provider in ("anthropic", "openai", "gemini", "mistral", "bedrock")),
)
"""The message metadata every ``decode_response`` writes: the normalised usage and the
provider's own under ``<provider>.usage`` (dropped by default too)."""

# Text that exercises JSON escaping and non-ASCII, and is sometimes empty.
texts = st.one_of(
    st.just(""),
    st.text(max_size=20),
    st.sampled_from(
        ["héllo wörld", "日本語のテキスト", "emoji 🧵🪡", 'quote " and \\ backslash', "line\nbreak"]
    ),
)
names = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)

# Bytes whose standard and URL-safe base64 differ, plus arbitrary bytes.
file_bytes = st.one_of(
    st.sampled_from([b"\xfb\xff", b"\xfb\xef\xbe", b"\x00", b""]), st.binary(max_size=64)
)
media_types = st.sampled_from(
    ["image/png", "image/jpeg", "image/webp", "application/pdf", "audio/wav", "text/plain"]
)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(texts, children, max_size=3)
    ),
    max_leaves=4,
)
json_objects = st.dictionaries(texts, json_values, max_size=3)
# Mostly empty, as in real histories; sometimes nested.
metadata = st.integers(0, 4).flatmap(lambda n: json_objects if n == 0 else st.just({}))


@st.composite
def text_parts(draw: st.DrawFn) -> TextPart:
    return TextPart(text=draw(texts), metadata=draw(metadata))


@st.composite
def file_parts(draw: st.DrawFn) -> FilePart:
    source: dict[str, Any]
    if draw(st.booleans()):
        source = {"data": draw(file_bytes)}
    else:
        source = {"url": "https://example.com/" + draw(names)}
    return FilePart(
        media_type=draw(media_types),
        filename=draw(st.none() | names.map(lambda n: n + ".bin")),
        metadata=draw(metadata),
        **source,
    )


@st.composite
def reasoning_parts(draw: st.DrawFn) -> ReasoningPart:
    provider = draw(st.none() | st.sampled_from(PROVIDERS))
    redacted = draw(st.booleans())
    return ReasoningPart(
        text="" if redacted else draw(texts),
        signature=draw(st.none() | st.text(min_size=1, max_size=30)),
        encrypted=draw(st.text(min_size=1, max_size=30)) if redacted else None,
        redacted=redacted,
        provider=provider,
        model=draw(st.none() | st.sampled_from(["model-a", "model-b"])),
        item_id=draw(st.none() | names.map(lambda n: "rs_" + n)),
        summary=tuple(draw(st.lists(texts, max_size=2))),
        metadata=draw(metadata),
    )


def tool_call_parts(call_id: str) -> st.SearchStrategy[ToolCallPart]:
    valid = st.builds(
        ToolCallPart, id=st.just(call_id), name=names, arguments=json_objects, metadata=metadata
    )
    return valid


def tool_result_parts(call: ToolCallPart) -> st.SearchStrategy[ToolResultPart]:
    content = st.one_of(
        texts, st.lists(st.one_of(text_parts(), file_parts()), min_size=1, max_size=3).map(tuple)
    )
    return st.builds(
        ToolResultPart,
        call_id=st.just(call.id),
        content=content,
        name=st.none() | st.just(call.name),
        is_error=st.booleans(),
        metadata=metadata,
    )


hook_parts = st.builds(HookPart, name=names, state=json_objects, metadata=metadata)


@st.composite
def provider_tool_pair(draw: st.DrawFn, call_id: str) -> list[Any]:
    provider = draw(st.sampled_from(PROVIDERS))
    call = ProviderToolCallPart(
        id=call_id, name=draw(names), input=draw(json_values), provider=provider
    )
    result = ProviderToolResultPart(
        call_id=call_id, content=draw(json_values), provider=provider, is_error=draw(st.booleans())
    )
    return [call, result]


timestamps = st.none() | st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(timezone.utc)
)


@st.composite
def conversations(
    draw: st.DrawFn, *, min_turns: int = 0, max_turns: int = 4, replay: bool = True
) -> list[Message]:
    """A well-formed agent conversation (every call answered once, in the next message)."""
    prefix = draw(st.sampled_from(["c", "conv", "x9"]))
    counter = iter(range(10_000))

    def next_id(kind: str) -> str:
        return f"{kind}_{prefix}_{next(counter)}"

    start = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def message(role: str, parts: list[Any]) -> Message:
        index = next(counter)
        return Message(
            id=f"msg_{prefix}_{index}",
            role=role,  # type: ignore[arg-type]
            parts=tuple(parts),
            created_at=draw(st.none() | st.just(start + timedelta(seconds=index))),
            metadata=draw(metadata),
            replay=draw(st.booleans()) if replay else False,
        )

    out: list[Message] = []
    if draw(st.booleans()):
        out.append(message("system", [draw(text_parts())]))
    for _ in range(draw(st.integers(min_turns, max_turns))):
        user_parts = draw(st.lists(st.one_of(text_parts(), file_parts()), min_size=1, max_size=3))
        out.append(message("user", user_parts))
        assistant_parts: list[Any] = []
        if draw(st.booleans()):
            assistant_parts.append(draw(reasoning_parts()))
        if draw(st.booleans()):
            assistant_parts.extend(draw(provider_tool_pair(next_id("srvtool"))))
        if draw(st.booleans()):
            assistant_parts.append(draw(text_parts()))
        calls = [draw(tool_call_parts(next_id("call"))) for _ in range(draw(st.integers(0, 3)))]
        assistant_parts.extend(calls)
        if draw(st.integers(0, 9)) == 0:
            assistant_parts.append(draw(hook_parts))
        if not assistant_parts:
            assistant_parts.append(draw(text_parts()))
        out.append(message("assistant", assistant_parts))
        if calls:
            out.append(message("tool", [draw(tool_result_parts(call)) for call in calls]))
            if draw(st.booleans()):
                out.append(message("assistant", [draw(text_parts())]))
        if draw(st.integers(0, 5)) == 0:
            out.append(message("internal", [draw(st.one_of(hook_parts, text_parts()))]))
    return out


@st.composite
def any_messages(draw: st.DrawFn) -> Message:
    """One valid message of any role, with any part that role may hold."""
    role = draw(st.sampled_from(["system", "user", "assistant", "tool", "internal"]))
    part_strategy: st.SearchStrategy[Any] = {
        "system": text_parts(),
        "user": st.one_of(text_parts(), file_parts()),
        "assistant": st.one_of(
            text_parts(),
            reasoning_parts(),
            tool_call_parts("call_1"),
            file_parts(),
            hook_parts,
            st.builds(
                ProviderToolCallPart,
                id=names,
                name=names,
                input=json_values,
                provider=st.sampled_from(PROVIDERS),
            ),
        ),
        "tool": tool_call_parts("call_1").flatmap(tool_result_parts),
        "internal": st.one_of(hook_parts, text_parts()),
    }[role]
    return Message(
        id=draw(names.map(lambda n: "msg_" + n)),
        role=role,  # type: ignore[arg-type]
        parts=tuple(draw(st.lists(part_strategy, min_size=1, max_size=4))),
        created_at=draw(timestamps),
        metadata=draw(metadata),
        replay=draw(st.booleans()),
    )


_LONGEST_ID = 200
_ID_FIRST = string.ascii_letters + string.digits
_ID_PUNCTUATION = "._:-"


@st.composite
def extreme_conversation_ids(draw: st.DrawFn) -> str:
    """Valid ids near the pattern's edges: mostly the longest, mostly capitals, with every
    punctuation mark the pattern allows."""
    length = draw(
        st.sampled_from([1, 2, _LONGEST_ID - 1, _LONGEST_ID]) | st.integers(1, _LONGEST_ID)
    )
    capitals = draw(st.sampled_from([string.ascii_uppercase, _ID_FIRST]))
    first = draw(st.sampled_from(capitals))
    rest = draw(
        st.text(
            st.sampled_from(capitals + _ID_PUNCTUATION), min_size=length - 1, max_size=length - 1
        )
    )
    cid = first + rest
    while ".." in cid:  # the one rule the pattern leaves to a check of its own
        cid = cid.replace("..", ".A")
    assert re.fullmatch(CONVERSATION_ID_PATTERN, cid), cid
    return cid
