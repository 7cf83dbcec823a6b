"""Moving a conversation between providers: every ordered pair of the six formats, and chains.

A conversation is *produced by* a format A: its assistant messages are ``decode_response`` of
realistic A responses (:mod:`tests.conformance._responses`), with A's reasoning state and tool
calls, between user messages and tool results (some failed). Encoded for a format B it must:

- pass B's judges (the SDK's types and the API's ordering and id rules; ``mistral_common`` for
  Mistral, botocore's service model for Bedrock);
- carry none of A's opaque state (signatures, encrypted reasoning, item ids) when B is not A,
  nor when B is A and ``model=`` names another model; all of it when B is A and the model is
  the one that produced it (or unknown);
- with ``reasoning="text"``, keep the readable reasoning as text;
- read back (``decode`` of B's payload) with every call answered once, by a result with the
  call's name, the same content and the same ``is_error``, and with every text in order.

A chain A -> B -> C continues the conversation on B from what B's payload reads back as,
then moves it to C: pairing and texts survive both hops.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import itertools
import json
from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.conformance._responses import CODECS
from tests.conformance._responses import MODELS
from tests.conformance._responses import Turn
from tests.conformance._responses import response
from tests.conformance._responses import sdk_problems
from tests.conformance.judges import judge_anthropic
from tests.conformance.judges import judge_dialect
from tests.conformance.judges import judge_openai_chat
from tests.conformance.judges_cohere import judge_cohere
from tests.conformance.judges_mistral_bedrock import judge_bedrock
from tests.conformance.judges_mistral_bedrock import judge_mistral
from tests.conformance.judges_ollama import judge_ollama
from tests.conformance.judges_responses_gemini import judge_gemini
from tests.conformance.judges_responses_gemini import judge_openai_responses
from tests.dialect_cases import DIALECTS
from tests.support import require_module
from threadline import Message
from threadline import ReasoningPart
from threadline import TextPart
from threadline.codecs import decode
from threadline.codecs import decode_response
from threadline.codecs import encode
from threadline.codecs._policies import downgrade_reasoning
from threadline.codecs._policies import is_blank

pytestmark = pytest.mark.requires_sdk

JUDGES: Mapping[str, Callable[[Mapping[str, Any]], None]] = {
    "cohere": judge_cohere,
    "anthropic": judge_anthropic,
    "bedrock": judge_bedrock,
    "gemini": judge_gemini,
    "mistral": judge_mistral,
    "openai_chat": judge_openai_chat,
    "openai_responses": judge_openai_responses,
    "ollama": judge_ollama,
    **{name: functools.partial(judge_dialect, name) for name in DIALECTS},
}
SDKS: Mapping[str, tuple[str, ...]] = {
    "cohere": ("cohere",),
    "anthropic": ("anthropic",),
    "bedrock": ("botocore",),
    "gemini": ("google.genai",),
    "mistral": ("mistralai", "mistral_common"),
    "openai_chat": ("openai",),
    "openai_responses": ("openai",),
    "ollama": ("ollama",),
    **dict.fromkeys(DIALECTS, ("openai",)),
}
OTHER_MODEL = "another-model-2026"

TOOLS: Mapping[str, Mapping[str, Any]] = {
    "get_weather": {"city": "Paris", "units": "metric"},
    "get_time": {"timezone": "Europe/Paris"},
    "search_flights": {"from": "CDG", "to": "FCO", "date": "2026-03-14", "passengers": 2},
}
OUTPUTS = {
    "get_weather": "18°C, sunny, wind 12 km/h",
    "get_time": "2026-03-13T16:05:00+01:00",
    "search_flights": '[{"flight": "AZ 319", "departs": "07:10", "price_eur": 142}]',
}
QUESTIONS = (
    "What's the weather in Paris, and can I fly to Rome tomorrow?",
    "Book the cheapest one, please.",
    "Thanks! And what should I pack?",
)


@dataclasses.dataclass(frozen=True)
class Step:
    """The assistant's side of one user question: maybe a tool-call response (always with
    reasoning) and the tool results, then an answer."""

    calls: tuple[tuple[str, bool], ...]
    """The tools called, and whether each call fails."""
    text_before_calls: bool
    reasoning_in_answer: bool
    redacted: bool
    """Whether the tool-call response also holds redacted reasoning (Anthropic, Bedrock)."""
    call_ids: bool
    """Whether the provider gives its calls ids (Gemini may not)."""


def steps(min_calls: int = 0) -> st.SearchStrategy[Step]:
    call = st.tuples(st.sampled_from(sorted(TOOLS)), st.booleans())
    return st.builds(
        Step,
        calls=st.lists(call, min_size=min_calls, max_size=3).map(tuple),
        text_before_calls=st.booleans(),
        reasoning_in_answer=st.booleans(),
        redacted=st.booleans(),
        call_ids=st.booleans(),
    )


scripts = st.tuples(steps(min_calls=1), st.lists(steps(), max_size=1)).map(
    lambda drawn: (drawn[0], *drawn[1])
)
"""One or two steps; the first calls tools, so every conversation has reasoning and calls."""


def examples(ci: int, dev: int) -> settings:
    """``settings`` with ``ci`` examples under the ci profile and ``dev`` otherwise: each
    example encodes and judges several payloads, and this module runs 37 such tests."""
    default = settings.default
    assert default is not None  # a profile is always loaded (tests/conftest.py)
    return settings(max_examples=ci if default.max_examples >= 200 else dev)


@pytest.fixture(autouse=True)
def _sdks() -> None:
    for modules in SDKS.values():
        for module in modules:
            require_module(module)


# ---------------------------------------------------------------------------------------------
# Conversations produced by a format


def play(codec: str, script: Sequence[Step], stage: str, first_question: int = 0) -> list[Message]:
    """What happens after the user's pending question on ``codec``: per step, the assistant's
    responses (decoded) and the tool results, then the user's next question."""
    out: list[Message] = []
    for number, step in enumerate(script):
        seed = f"{stage}{number}"
        if step.calls:
            turn = Turn(
                seed=f"{seed}-calls",
                reasoning=f"The user asks about {len(step.calls)} things; use the tools. ({seed})",
                text="Let me look that up." if step.text_before_calls else None,
                calls=tuple((name, TOOLS[name]) for name, _ in step.calls),
                redacted=step.redacted,
                call_ids=step.call_ids,
            )
            reply = decode_response(response(codec, turn), provider=codec)
            results = [
                tl.tool_result_part(
                    call.id,
                    f"{name} failed: upstream timeout" if fails else OUTPUTS[name],
                    is_error=fails,
                )
                for call, (name, fails) in zip(reply.tool_calls, step.calls, strict=True)
            ]
            out += [reply, tl.tool_message(*results)]
        answer = Turn(
            seed=f"{seed}-answer",
            reasoning=f"Summarize what the tools said. ({seed})"
            if step.reasoning_in_answer
            else None,
            text=f"Here is what I found ({seed}): sunny, 18°C; AZ 319 at 07:10 for 142 EUR.",
        )
        out.append(decode_response(response(codec, answer), provider=codec))
        out.append(tl.user_message(QUESTIONS[(first_question + number + 1) % len(QUESTIONS)]))
    return out


def conversation(codec: str, script: Sequence[Step], *, system: bool = True) -> list[Message]:
    """A conversation produced by ``codec``, ending with a user question."""
    start = [tl.system_message("You are a travel assistant.")] if system else []
    return [*start, tl.user_message(QUESTIONS[0]), *play(codec, script, "a")]


# ---------------------------------------------------------------------------------------------
# What must survive a hop


def opaque_state(messages: Sequence[Message]) -> set[str]:
    """The provider-opaque values in a history: signatures, encrypted reasoning, item ids."""
    found: set[str] = set()
    for message in messages:
        for part in message.parts:
            if isinstance(part, ReasoningPart):
                found.update(v for v in (part.signature, part.encrypted, part.item_id) if v)
            for key in ("openai.item_id", "gemini.thought_signature"):
                value = part.metadata.get(key)
                if isinstance(value, str):
                    found.add(value)
    return found


def wire_text(payload: Mapping[str, Any]) -> str:
    """A payload as JSON text, bytes as the base64 boto3 puts on the wire."""

    def default(value: Any) -> Any:
        if isinstance(value, bytes):
            return base64.b64encode(value).decode()
        raise TypeError(type(value).__name__)

    return json.dumps(payload, default=default, ensure_ascii=False)


def texts(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """Each non-blank text part with its message's role (reasoning is not text)."""
    return [
        (message.role, part.text)
        for message in messages
        for part in message.parts
        if type(part) is TextPart and not is_blank(part.text)
    ]


def readable_reasoning(messages: Sequence[Message]) -> list[str]:
    """The texts ``reasoning="text"`` sends for the reasoning in ``messages``."""
    return [
        text.text
        for message in messages
        for part in message.parts
        if isinstance(part, ReasoningPart)
        for text in downgrade_reasoning(part)
    ]


def is_subsequence(items: Sequence[Any], of: Sequence[Any]) -> bool:
    remaining = iter(of)
    return all(item in remaining for item in items)


def assert_pairing_survives(original: Sequence[Message], decoded: Sequence[Message]) -> None:
    """The calls of ``decoded`` are those of ``original`` (names and arguments, in order),
    each answered once, after it, by a result with the call's name, content and
    ``is_error``; no result answers nothing."""
    calls = [part for message in original for part in message.tool_calls]
    results = {part.call_id: part for message in original for part in message.tool_results}
    placed_calls = [
        (index, part) for index, message in enumerate(decoded) for part in message.tool_calls
    ]
    placed_results = [
        (index, part) for index, message in enumerate(decoded) for part in message.tool_results
    ]
    assert [(call.name, dict(call.arguments)) for _, call in placed_calls] == [
        (call.name, dict(call.arguments)) for call in calls
    ]
    answers = Counter(result.call_id for _, result in placed_results)
    assert set(answers) == {call.id for _, call in placed_calls}, "a result answers no call"
    found = {result.call_id: (index, result) for index, result in placed_results}
    for (index, call), sent in zip(placed_calls, calls, strict=True):
        assert answers[call.id] == 1, f"{call.id} is answered {answers[call.id]} times"
        where, result = found[call.id]
        expected = results[sent.id]
        assert where > index
        assert (result.name, result.content, result.is_error) == (
            call.name,
            expected.content,
            expected.is_error,
        )


def move(history: Sequence[Message], target: str, **kw: Any) -> tuple[str, list[Message]]:
    """Encode ``history`` for ``target``, judge it, and read it back: (the wire text, the
    decoded history)."""
    payload = encode(history, provider=target, **kw)
    JUDGES[target](payload)
    decoded = decode(payload, provider=target)
    assert_pairing_survives(history, decoded)
    return wire_text(payload), decoded


def assert_reasoning_kept_as_text(history: Sequence[Message], decoded: Sequence[Message]) -> None:
    written = {text for role, text in texts(decoded) if role == "assistant"}
    missing = [text for text in readable_reasoning(history) if text not in written]
    assert not missing, f"reasoning lost: {missing}"


# ---------------------------------------------------------------------------------------------
# The tests


@pytest.mark.parametrize("codec", CODECS)
def test_the_responses_are_what_the_sdks_read(codec: str) -> None:
    turn = Turn(
        seed="sdk",
        reasoning="Plan.",
        text="Checking.",
        calls=(("get_weather", TOOLS["get_weather"]), ("get_time", TOOLS["get_time"])),
        redacted=True,
    )
    for built in (response(codec, turn), response(codec, Turn(seed="plain", text="Done."))):
        assert sdk_problems(codec, built) == []
    history = conversation(codec, [Step((("get_weather", False),), True, True, True, True)])
    state = opaque_state(history)
    # Chat returns no reasoning; Cohere's, Ollama's and the dialects' (but OpenRouter's
    # reasoning_details) is plain text: nothing opaque
    stateless = {"openai_chat", "cohere", "ollama", *DIALECTS} - {"openrouter"}
    assert bool(state) == (codec not in stateless), "every other provider leaves state"


PAIRS = list(itertools.permutations(CODECS, 2))


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{a}-to-{b}" for a, b in PAIRS])
@examples(ci=40, dev=5)
@given(script=scripts)
def test_a_conversation_moves_to_another_provider(
    source: str, target: str, script: tuple[Step, ...]
) -> None:
    history = conversation(source, script)
    state = opaque_state(history)

    wire, decoded = move(history, target)
    assert not {token for token in state if token in wire}, "opaque state went to another API"
    assert texts(decoded) == texts(history)
    # readable reasoning (Ollama's has no opaque state) goes to no other API as reasoning
    assert not [part for m in decoded for part in m.parts if isinstance(part, ReasoningPart)]

    wire, decoded = move(history, target, reasoning="text")
    assert not {token for token in state if token in wire}, "opaque state went to another API"
    assert is_subsequence(texts(history), texts(decoded))
    assert_reasoning_kept_as_text(history, decoded)


@pytest.mark.parametrize("codec", CODECS)
@examples(ci=60, dev=10)
@given(script=scripts)
def test_a_conversation_goes_back_to_its_own_provider(codec: str, script: tuple[Step, ...]) -> None:
    history = conversation(codec, script)
    state = opaque_state(history)
    same_models = [None] if MODELS[codec] is None else [None, MODELS[codec]]
    for model in same_models:  # unknown, or the model that produced the reasoning
        wire, decoded = move(history, codec, model=model)
        assert {token for token in state if token not in wire} == set(), "state not replayed"
        assert texts(decoded) == texts(history)

    wire, decoded = move(history, codec, model=OTHER_MODEL)
    assert not {token for token in state if token in wire}, "state replayed to another model"
    assert texts(decoded) == texts(history)

    wire, decoded = move(history, codec, model=OTHER_MODEL, reasoning="text")
    assert not {token for token in state if token in wire}, "state replayed to another model"
    assert_reasoning_kept_as_text(history, decoded)


@examples(ci=200, dev=25)
@given(
    route=st.tuples(st.sampled_from(CODECS), st.sampled_from(CODECS), st.sampled_from(CODECS)),
    first=scripts,
    then=scripts,
)
def test_a_chain_of_providers_keeps_pairing_and_texts(
    route: tuple[str, str, str], first: tuple[Step, ...], then: tuple[Step, ...]
) -> None:
    a, b, c = route
    history = conversation(a, first)
    _, on_b = move(history, b)
    continued = play(b, then, "b", first_question=len(first))
    _, on_c = move([*on_b, *continued], c)
    assert_pairing_survives([*history, *continued], on_c)
    assert texts(on_c) == texts([*history, *continued])
