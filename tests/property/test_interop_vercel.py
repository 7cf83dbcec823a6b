"""The interop law for the AI SDK's UIMessage JSON, over generated histories both ways."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import conversations
from tests.strategies import json_objects
from tests.strategies import json_values
from tests.strategies import names
from tests.strategies import texts
from threadline.interop.vercel import from_ui_messages
from threadline.interop.vercel import to_ui_messages


@given(conversations(max_turns=3, replay=False))
def test_threadline_to_ui_and_back_keeps_the_content(messages: list[tl.Message]) -> None:
    ui = to_ui_messages(messages)
    json.dumps(ui)  # JSON values only
    back = from_ui_messages(json.dumps(ui), trusted=True)
    expected = [m for m in messages if m.role != "internal"]  # documented loss
    assert len(back) == len(expected)
    for original, decoded in zip(expected, back, strict=True):
        assert tl.same_content(original, decoded), (original, decoded)


# A strategy for UIMessage lists in the shape to_ui_messages writes: a step-start before each
# step, and in each step the tool parts that have an output after its other parts.

provider_metadata = st.dictionaries(
    st.sampled_from(["openai", "anthropic", "google"]), json_objects, min_size=1, max_size=2
)


def optional(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional=fields)


def with_type(kind: str, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    required = st.fixed_dictionaries({"type": st.just(kind)})
    return st.tuples(required, optional(**fields)).map(lambda pair: {**pair[0], **pair[1]})


text_state = st.sampled_from(["streaming", "done"])
texts_ui = st.builds(
    lambda base, text: {**base, "text": text},
    with_type("text", state=text_state, providerMetadata=provider_metadata),
    texts,
)
reasoning_ui = st.builds(
    lambda base, text: {**base, "text": text},
    with_type("reasoning", state=text_state, providerMetadata=provider_metadata),
    texts,
)


@st.composite
def files_ui(draw: st.DrawFn) -> dict[str, Any]:
    media_type = draw(st.sampled_from(["image/png", "application/pdf", "text/plain"]))
    if draw(st.booleans()):
        data = base64.b64encode(draw(st.binary(max_size=16))).decode()
        url = f"data:{media_type};base64,{data}"
    else:
        url = "https://files.example.com/" + draw(names)
    part = {"type": "file", "mediaType": media_type, "url": url}
    part.update(draw(optional(filename=names, providerMetadata=provider_metadata)))
    return part


data_ui = st.builds(
    lambda name, extra: {"type": "data-" + name, **extra},
    names,
    st.fixed_dictionaries({"data": json_values}, optional={"id": names}),
)
sources_ui = st.one_of(
    st.builds(
        lambda extra: {"type": "source-url", "sourceId": "s1", "url": "https://a.example", **extra},
        optional(title=texts, providerMetadata=provider_metadata),
    ),
    st.builds(
        lambda extra: {
            "type": "source-document",
            "sourceId": "d1",
            "mediaType": "application/pdf",
            "title": "T",
            **extra,
        },
        optional(filename=names),
    ),
)


@st.composite
def tools_ui(draw: st.DrawFn, call_id: str, *, answered: bool) -> dict[str, Any]:
    states = (
        ["output-available", "output-error"]
        if answered
        else ["input-streaming", "input-available", "approval-requested", "output-denied"]
    )
    state = draw(st.sampled_from(states))
    part: dict[str, Any]
    if draw(st.booleans()):
        part = {"type": "dynamic-tool", "toolName": draw(names)}
    else:
        part = {"type": "tool-" + draw(names)}
    part.update({"toolCallId": call_id, "state": state, "input": draw(json_objects)})
    if state == "output-available":
        part["output"] = draw(json_values)
        part.update(draw(optional(preliminary=st.booleans())))
    elif state == "output-error":
        part["errorText"] = draw(texts)
    elif state in ("approval-requested", "output-denied"):
        approval = {"id": "ap_" + call_id}
        if state == "output-denied":
            approval["approved"] = False  # type: ignore[assignment]
        part["approval"] = approval
    part.update(draw(optional(title=texts, callProviderMetadata=provider_metadata)))
    if answered:
        part.update(draw(optional(resultProviderMetadata=provider_metadata)))
    return part


@st.composite
def ui_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    counter = iter(range(10_000))
    out: list[dict[str, Any]] = []
    for turn in range(draw(st.integers(1, 2))):
        user_parts = draw(st.lists(st.one_of(texts_ui, files_ui()), min_size=1, max_size=3))
        user = {"id": f"u{turn}", "role": "user", "parts": user_parts}
        user.update(draw(optional(metadata=json_values)))
        out.append(user)
        parts: list[dict[str, Any]] = []
        for _ in range(draw(st.integers(1, 2))):
            content = st.one_of(texts_ui, reasoning_ui, files_ui(), data_ui, sources_ui)
            step = draw(st.lists(content, max_size=3))
            step += [
                draw(tools_ui(f"c{next(counter)}", answered=False))
                for _ in range(draw(st.integers(0, 1)))
            ]
            step += [
                draw(tools_ui(f"c{next(counter)}", answered=True))
                for _ in range(draw(st.integers(0, 2)))
            ]
            if step:
                parts += [{"type": "step-start"}, *step]
        if parts:
            out.append({"id": f"a{turn}", "role": "assistant", "parts": parts})
    return out


@given(ui_histories())
def test_ui_to_threadline_and_back_is_exact(history: list[dict[str, Any]]) -> None:
    messages = from_ui_messages(json.dumps(history), trusted=True)
    assert to_ui_messages(messages) == history


@pytest.mark.slow
@given(ui_histories())
def test_untrusted_reading_keeps_nothing_a_client_may_not_say(
    history: list[dict[str, Any]],
) -> None:
    messages = from_ui_messages(history)
    for message in messages:
        assert message.role in ("user", "assistant", "tool")
        assert not message.metadata
        for part in message.parts:
            assert not part.metadata
            assert not isinstance(part, (tl.HookPart, tl.ProviderToolCallPart))
            if isinstance(part, tl.ReasoningPart):
                assert part.signature is None
                assert part.provider is None
