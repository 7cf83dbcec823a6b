"""Hypothesis strategies for pydantic-ai histories (``ModelMessage`` lists)."""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta
from datetime import timezone
from typing import Any
from typing import Literal

from hypothesis import strategies as st
from pydantic_ai import messages as pai
from pydantic_ai.usage import RequestUsage

from tests.strategies import file_bytes
from tests.strategies import json_objects
from tests.strategies import json_values
from tests.strategies import names
from tests.strategies import texts

_START = datetime(2026, 1, 1, tzinfo=timezone.utc)
stamps = st.integers(0, 10_000).map(lambda s: _START + timedelta(seconds=s))
providers = st.sampled_from(["openai", "anthropic", "google-gla", "google-vertex", "bedrock"])

user_items: st.SearchStrategy[Any] = st.one_of(
    texts,
    st.builds(pai.TextContent, texts, metadata=st.none() | json_objects),
    st.builds(lambda n: pai.ImageUrl(f"https://example.com/{n}.png"), names),
    st.builds(
        lambda n: pai.DocumentUrl(f"https://example.com/{n}", media_type="application/pdf"), names
    ),
    st.builds(lambda n: pai.AudioUrl(f"https://example.com/{n}.wav", force_download=True), names),
    st.builds(lambda n: pai.VideoUrl(f"https://example.com/{n}.mp4"), names),
    st.builds(
        lambda data, media_type: pai.BinaryContent.narrow_type(
            pai.BinaryContent(data, media_type=media_type)
        ),
        file_bytes,
        st.sampled_from(["image/png", "application/pdf", "audio/wav"]),
    ),
    st.just(pai.CachePoint()),
)
tool_content: st.SearchStrategy[Any] = st.one_of(
    texts, json_objects, st.lists(json_values, max_size=3), st.lists(user_items.filter(
        lambda item: not isinstance(item, (pai.CachePoint, pai.TextContent))
    ), min_size=1, max_size=2)
)  # fmt: skip


@st.composite
def tool_returns(draw: st.DrawFn, call_id: str, name: str) -> pai.ToolReturnPart:
    outcomes: list[Literal["success", "failed", "denied", "retried"]]
    outcomes = ["success", "failed", "denied", "retried"]
    outcome = draw(st.sampled_from(outcomes))
    return pai.ToolReturnPart(
        name,
        draw(tool_content),
        call_id,
        timestamp=draw(stamps),
        outcome=outcome,
        metadata=draw(st.none() | json_objects),
        retry=pai.RetryInfo(cause="model_retry", attempt=1) if outcome == "retried" else None,
    )


@st.composite
def requests(draw: st.DrawFn, calls: list[tuple[str, str]]) -> pai.ModelRequest:
    parts: list[Any] = [draw(tool_returns(call_id, name)) for call_id, name in calls]
    for _ in range(draw(st.integers(0 if parts else 1, 2))):
        kind = draw(st.sampled_from(["system", "user", "user", "feedback", "delta"]))
        if kind == "system":
            parts.append(pai.SystemPromptPart(draw(texts), timestamp=draw(stamps)))
        elif kind == "user":
            content = draw(st.one_of(texts, st.lists(user_items, min_size=1, max_size=3)))
            parts.append(pai.UserPromptPart(content, timestamp=draw(stamps)))
        elif kind == "feedback":
            retry: pai.RetryInfo[Literal["model_retry"]] = pai.RetryInfo(cause="model_retry")
            parts.append(pai.RetryFeedbackPart(draw(texts), retry=retry, timestamp=draw(stamps)))
        else:
            parts.append(pai.CapabilityLoadDeltaPart(loaded=draw(st.lists(names, max_size=2))))
    return pai.ModelRequest(
        parts=parts,
        timestamp=draw(st.none() | stamps),
        instructions=draw(st.none() | texts),
        run_id=draw(st.none() | names),
        metadata=draw(st.none() | json_objects),
    )


@st.composite
def responses(draw: st.DrawFn, prefix: str) -> tuple[pai.ModelResponse, list[tuple[str, str]]]:
    parts: list[Any] = []
    calls: list[tuple[str, str]] = []
    provider = draw(providers)
    for index in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["text", "thinking", "call", "native", "file", "compaction"]))
        if kind == "text":
            part_id = draw(st.none() | names)
            parts.append(
                pai.TextPart(draw(texts), id=part_id, provider_name=provider if part_id else None)
            )
        elif kind == "thinking":
            signature = draw(st.none() | st.text(min_size=1, max_size=20))
            part_id = draw(st.none() | st.sampled_from(["rs_1", "redacted_thinking"]))
            has_provider = signature is not None or part_id is not None
            parts.append(
                pai.ThinkingPart(draw(texts), id=part_id, signature=signature,
                                 provider_name=provider if has_provider else None)
            )  # fmt: skip
        elif kind == "call":
            call_id, name = f"{prefix}_call_{index}", draw(names)
            args = draw(st.one_of(st.none(), json_objects, json_objects.map(_compact), texts))
            parts.append(pai.ToolCallPart(name, args, call_id))
            calls.append((call_id, name))
        elif kind == "native":
            call_id, name = f"{prefix}_srv_{index}", draw(names)
            parts.append(
                pai.NativeToolCallPart(name, draw(json_objects), call_id, provider_name=provider)
            )
            parts.append(pai.NativeToolReturnPart(
                name, draw(json_values), call_id, provider_name=provider, timestamp=draw(stamps)
            ))  # fmt: skip
        elif kind == "file":
            binary = pai.BinaryContent(draw(file_bytes), media_type="image/png")
            parts.append(pai.FilePart(pai.BinaryContent.narrow_type(binary)))
        else:
            parts.append(pai.CompactionPart(draw(texts), provider_name=provider))
    usage = draw(st.one_of(
        st.just(RequestUsage()),
        st.builds(RequestUsage, input_tokens=st.integers(0, 999), output_tokens=st.integers(0, 999),
                  cache_read_tokens=st.integers(0, 9), output_reasoning_tokens=st.integers(0, 9)),
        st.builds(RequestUsage, input_tokens=st.integers(0, 999), details=st.just({"x": 1})),
    ))  # fmt: skip
    response = pai.ModelResponse(
        parts=parts,
        usage=usage,
        model_name=draw(st.none() | st.just("model-a")),
        timestamp=draw(stamps),
        provider_name=draw(st.none() | providers),
        provider_response_id=draw(st.none() | names),
        finish_reason=draw(st.none() | st.just("stop")),
        metadata=draw(st.none() | json_objects),
    )
    return response, calls


def _compact(value: object) -> str:
    import json

    return json.dumps(value)


@st.composite
def histories(draw: st.DrawFn) -> list[pai.ModelMessage]:
    """A pydantic-ai history: requests and responses, every call answered in the next request."""
    out: list[pai.ModelMessage] = []
    calls: list[tuple[str, str]] = []
    for turn in range(draw(st.integers(1, 4))):
        out.append(draw(requests(calls)))
        response, calls = draw(responses(f"t{turn}"))
        out.append(response)
    if calls:
        out.append(draw(requests(calls)))
    return out
