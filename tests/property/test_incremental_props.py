"""The incremental agent step (issue 39, item 1): ``History.encode`` equals the full encode.

For every registered format (read from the registry, so a format added later joins), random
``encode`` options and a random sequence of History operations (append, extend, restore,
reset, ``replace_prefix``, fork, a window's trim, a bound store's reload after another
writer), each step's ``history.encode(provider, **options)`` must equal
``encode(history.messages_for_model(), provider=provider, **options)``: ``json.dumps`` of
both equal, key order included. Histories hold well-formed turns and defects (orphaned
results, dangling calls, internal messages, ids and names some formats refuse), so both the
incremental path and every way back to the whole encode are exercised.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import any_messages
from tests.strategies import conversations
from tests.support import examples
from threadline import History
from threadline import Message
from threadline import ToolDefinition
from threadline._history_encoding import keep_turns
from threadline.codecs import codec_names
from threadline.codecs._formats import DESCRIPTORS
from threadline.codecs._incremental import is_boundary
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.stores import MemoryStore

FORMATS = codec_names()

WEATHER = ToolDefinition(
    name="weather",
    description="The weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)

options = st.fixed_dictionaries(
    {},
    optional={
        "system": st.sampled_from([None, "Be brief."]),
        "model": st.sampled_from([None, "claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro"]),
        "reasoning": st.sampled_from(["auto", "text", "drop"]),
        "unsupported": st.sampled_from(["placeholder", "drop"]),
        "integrity": st.sampled_from(["auto", "off", "strict"]),
        "tools": st.just([WEATHER]),
        "cache": st.sampled_from([None, "auto"]),
    },
)


@st.composite
def turn(draw: st.DrawFn) -> list[Message]:
    """A turn or two of an agent loop, or a defect now and then."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return [draw(any_messages())]
    if kind == 1:  # a call still in flight, then (maybe) its result
        ids = st.sampled_from(["call_9", "c.1", "x" * 70])
        call = ToolCallPart(id=draw(ids), name="weather", arguments={})
        out = [Message(role="assistant", parts=(call,))]
        if draw(st.booleans()):
            out.append(Message(role="tool", parts=(ToolResultPart(call_id=call.id, content="ok"),)))
        return out
    messages = draw(conversations(min_turns=1, max_turns=2, replay=False))
    return [m for m in messages if m.role != "system"] if draw(st.booleans()) else messages


def _dump(body: Any) -> str:
    """``json.dumps``, key order included (Bedrock's bodies hold raw bytes, as boto3 takes)."""
    return json.dumps(body, default=lambda value: {"bytes": bytes(value).hex()})


ANSWER = Message(role="assistant", parts=(TextPart(text="Done."),))


def question(text: str) -> Message:
    return Message(role="user", parts=(TextPart(text=text),))


@st.composite
def steps(draw: st.DrawFn) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(2, 7))):
        op = draw(
            st.sampled_from(
                ["append", "extend", "turn", "turn", "turn", "restore", "reset", "summary", "fork"]
            )
        )
        drawn = draw(turn()) if op in ("append", "extend", "turn") else draw(st.integers(0, 9))
        out.append((op, drawn))
    return out


def _same(history: History, provider: str, opts: dict[str, Any]) -> None:
    step = history.encode(provider, **opts)
    full = tl.encode(history.messages_for_model(), provider=provider, **opts)
    assert _dump(step) == _dump(full)


def _encode_or_error(history: History, provider: str, opts: dict[str, Any]) -> None:
    try:
        full = tl.encode(history.messages_for_model(), provider=provider, **opts)
    except (tl.ThreadlineError, ValueError) as error:
        with pytest.raises(type(error)):
            history.encode(provider, **opts)
        return
    assert _dump(history.encode(provider, **opts)) == _dump(full)


def _run(
    history: History, plan: list[tuple[str, Any]], provider: str, opts: dict[str, Any]
) -> None:
    taken = [history.snapshot()]
    _encode_or_error(history, provider, opts)
    for op, arg in plan:
        if op == "append":
            for message in arg:
                history.append(message)
        elif op == "extend":
            history.extend([*arg, question("And then?")])
        elif op == "turn":  # a whole step of an agent loop: a boundary after it
            history.extend([*arg, ANSWER, question("And then?")])
        elif op == "restore":
            history.restore(taken[arg % len(taken)])
        elif op == "reset":
            history.reset()
        elif op == "summary":
            cut = arg % (len(history) + 1)
            history.replace_prefix(history.snapshot()[:cut], [question("[summary]")])
        elif op == "fork":
            history = history.copy()
        taken.append(history.snapshot())
        _encode_or_error(history, provider, opts)


@settings(max_examples=examples(120), deadline=None)
@given(st.sampled_from(FORMATS), options, steps(), st.sampled_from([None, 5, 12]), st.booleans())
def test_each_step_equals_the_full_encode(
    provider: str,
    opts: dict[str, Any],
    plan: list[tuple[str, Any]],
    window: int | None,
    cached: bool,
) -> None:
    history = History(max_messages=window)
    if cached:  # as a HistoryCache holds it: the turns kept from the first encode
        keep_turns(history)
    _run(history, plan, provider, opts)


@settings(max_examples=examples(30), deadline=None)
@given(st.sampled_from(FORMATS), options, st.lists(turn(), min_size=2, max_size=5))
def test_a_bound_history_reloaded_after_another_writer_equals_the_full_encode(
    provider: str, opts: dict[str, Any], turns: list[list[Message]]
) -> None:
    store = MemoryStore()
    mine = History().bind(store, "c1", on_conflict="reload")
    other = History().bind(store, "c1", on_conflict="reload")
    for index, messages in enumerate(turns):
        writer = other if index % 2 else mine
        fresh = [Message(role=m.role, parts=m.parts, metadata=m.metadata) for m in messages]
        writer.extend([*fresh, question(f"turn {index}")])
        _encode_or_error(mine, provider, opts)


def _long_history(rounds: int) -> History:
    history = History([Message(role="system", parts=(TextPart(text="Be brief."),))])
    for index in range(rounds):
        call = ToolCallPart(id=f"call{index:05d}", name="weather", arguments={"city": "Paris"})
        history.extend(
            [
                question(f"Weather {index}?"),
                Message(role="assistant", parts=(call,)),
                Message(role="tool", parts=(ToolResultPart(call_id=call.id, content="sun"),)),
                Message(role="assistant", parts=(TextPart(text="Sunny."),)),
            ]
        )
    history.append(question("And tomorrow?"))
    return history


@pytest.mark.parametrize("cached", [False, True])
@pytest.mark.parametrize("provider", FORMATS)
def test_a_caller_changing_a_body_never_changes_the_next(provider: str, cached: bool) -> None:
    """Every body of a history, the first (nothing kept yet, unless a cache holds it) and
    those holding the kept turns, may be changed by its caller without reaching the next."""
    history = _long_history(3)
    if cached:
        keep_turns(history)
    expected = _dump(history.encode(provider, system="Be brief."))
    for _ in range(3):
        body = history.encode(provider, system="Be brief.")
        assert _dump(body) == expected
        for key, value in list(body.items()):  # what a caller may do to its body
            if isinstance(value, list):
                _try(value.append, {"extra": True})
                for item in value:
                    if isinstance(item, dict):
                        _try(item.__setitem__, "extra", True)
            body[key] = "changed"
    copied = copy.deepcopy(history.encode(provider, system="Be brief."))
    assert _dump(copied) == expected
    copied["extra"] = 1  # a deep copy is plain data
    for value in copied.values():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            value[0]["extra"] = True


def _try(change: Any, *args: Any) -> None:
    """A change a caller may make: done, or refused because the value is shared, saying how
    to get one to change."""
    refused: TypeError | None = None
    try:
        change(*args)
    except TypeError as error:
        refused = error
    assert refused is None or "copy.deepcopy" in str(refused)


def test_the_boundary_is_a_user_text_after_an_answer() -> None:
    history = list(_long_history(1))
    # system, user, assistant call, tool, assistant answer, user
    assert [is_boundary(history, i) for i in range(len(history))] == [
        False,
        False,
        False,
        False,
        False,
        True,
    ]
    blank = [*history[:-1], question("   ")]
    assert not is_boundary(blank, len(blank) - 1)


INCREMENTAL = [
    name
    for name, described in sorted(DESCRIPTORS.items())
    if described.turns is not None and described.encode_request is None
]


def _counting(codec: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each history ``codec.encode`` is given from now on."""
    seen: list[int] = []
    real = codec.encode

    def counting(messages: Any, **kwargs: Any) -> Any:
        seen.append(len(messages))
        return real(messages, **kwargs)

    monkeypatch.setattr(codec, "encode", counting)
    return seen


@pytest.mark.parametrize("held", ["plain", "marked", "cache"])
@pytest.mark.parametrize("provider", INCREMENTAL)
def test_a_first_encode_keeps_nothing_unless_a_cache_holds_the_history(
    provider: str, held: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A history's first ``encode`` is the full encode and keeps no turns (a handler that
    encodes a loaded history once pays nothing more), its second keeps them, and from then on
    a step encodes only what is new. A history a ``HistoryCache`` holds keeps them from the
    first: the whole history is encoded once."""
    history = _long_history(40)
    if held == "marked":
        keep_turns(history)
    elif held == "cache":
        store = MemoryStore()
        store.append("c1", list(history))
        history = tl.HistoryCache(store).get("c1")
    seen = _counting(DESCRIPTORS[provider].codec(), monkeypatch)
    history.encode(provider)
    history.encode(provider)
    history.append(question("And the day after?"))
    later = len(seen)
    body = history.encode(provider)
    monkeypatch.undo()
    whole = [n for n in seen if n > len(history) // 2]
    assert len(whole) == (2 if held == "plain" else 1), seen
    assert max(seen[later:]) <= 6, seen
    assert _dump(body) == _dump(tl.encode(history.messages_for_model(), provider=provider))


@pytest.mark.parametrize("provider", INCREMENTAL)
def test_a_step_encodes_only_the_new_turns(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the codec is given per step follows what changed, not the history's length."""
    history = _long_history(40)
    codec = DESCRIPTORS[provider].codec()
    history.encode(provider, tools=[WEATHER])  # the first step encodes it all, keeps nothing
    history.encode(provider, tools=[WEATHER])  # the second keeps the turns
    seen: list[int] = []
    real = codec.encode

    def counting(messages: Any, **kwargs: Any) -> Any:
        seen.append(len(messages))
        return real(messages, **kwargs)

    monkeypatch.setattr(codec, "encode", counting)
    for index in range(3):
        call = ToolCallPart(id=f"oslo{index:05d}", name="weather", arguments={"city": "Oslo"})
        history.extend(
            [
                Message(role="assistant", parts=(call,)),
                Message(role="tool", parts=(ToolResultPart(call_id=call.id, content="rain"),)),
                Message(role="assistant", parts=(TextPart(text="Rainy."),)),
                question(f"And in {index} days?"),
            ]
        )
        seen.clear()
        body = history.encode(provider, tools=[WEATHER])
        assert seen, "the codec was not called"
        assert max(seen) <= 6, seen  # the new turns and the boundary, never all 160
        monkeypatch.setattr(codec, "encode", real)
        full = tl.encode(history.messages_for_model(), provider=provider, tools=[WEATHER])
        monkeypatch.setattr(codec, "encode", counting)
        assert _dump(body) == _dump(full)
