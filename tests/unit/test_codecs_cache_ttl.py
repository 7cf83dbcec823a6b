"""``encode(cache=...)`` keeps the breakpoints' TTL order (issue 37 item 3).

Anthropic and Bedrock (for Claude) process the breakpoints in the order tools, system,
messages, and refuse a one-hour breakpoint after a five-minute one: ``a ttl='1h' cache_control
block must not come after a ttl='5m' cache_control block``. A breakpoint ``encode`` adds takes
``ttl: "1h"`` when a one-hour breakpoint the history holds comes after it; a history whose own
breakpoints break the order is refused, naming the two.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.conformance import _rules
from tests.support import examples
from threadline.codecs import encode

SHORT = {"type": "ephemeral"}
LONG = {"type": "ephemeral", "ttl": "1h"}
POINT = {"type": "default"}
LONG_POINT = {"type": "default", "ttl": "1h"}
KEYS = {"anthropic": "anthropic.cache_control", "bedrock": "bedrock.cache_point"}
MARKS = {"anthropic": (SHORT, LONG), "bedrock": (POINT, LONG_POINT)}
TOOL = tl.ToolDefinition(
    "get_weather", "The weather.", {"type": "object", "properties": {"city": {"type": "string"}}}
)


def _judged(provider: str, payload: dict[str, Any]) -> None:
    """Every rule of the format, the cache ones included, none tolerated."""
    _rules.judge_rules(provider, payload, scope="request", known=frozenset())


def _history(provider: str, *, long_at: int = 1) -> list[tl.Message]:
    """A conversation whose message ``long_at`` holds a stored one-hour breakpoint."""
    history = [
        tl.user_message("A long document."),
        tl.assistant_message("Read it."),
        tl.user_message("Summarise it."),
    ]
    marked = tl.text_part(history[long_at].text, metadata={KEYS[provider]: MARKS[provider][1]})
    history[long_at] = history[long_at].model_copy(update={"parts": (marked,)})
    return history


def _anthropic_ttls(payload: dict[str, Any]) -> list[str]:
    return [mark.get("ttl", "5m") for _, mark in _rules._anthropic_breakpoints(payload)]


def _bedrock_ttls(payload: dict[str, Any]) -> list[str]:
    return [mark.get("ttl", "5m") for _, mark in _rules._bedrock_breakpoints(payload)]


TTLS = {"anthropic": _anthropic_ttls, "bedrock": _bedrock_ttls}


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_auto_before_a_stored_one_hour_breakpoint_takes_one_hour(provider: str) -> None:
    payload = encode(_history(provider), provider=provider, system="Be brief.", cache="auto")
    _judged(provider, payload)
    # the system prompt's breakpoint comes before the stored hour; the newest turn's after it
    assert TTLS[provider](payload) == ["1h", "1h", "5m"]


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_auto_tools_before_a_stored_one_hour_breakpoint_take_one_hour(provider: str) -> None:
    payload = encode(
        _history(provider), provider=provider, system="Be brief.", tools=[TOOL], cache="auto"
    )
    _judged(provider, payload)
    assert TTLS[provider](payload) == ["1h", "1h", "1h", "5m"]


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_explicit_breakpoints_before_a_stored_hour_take_one_hour(provider: str) -> None:
    payload = encode(
        _history(provider, long_at=2), provider=provider, system="Be brief.", cache=["system", 0]
    )
    _judged(provider, payload)
    assert TTLS[provider](payload) == ["1h", "1h", "1h"]


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_breakpoints_after_the_stored_hour_stay_at_the_default(provider: str) -> None:
    history = _history(provider, long_at=0)
    payload = encode(history, provider=provider, cache=[1, 2])
    _judged(provider, payload)
    assert TTLS[provider](payload) == ["1h", "5m", "5m"]


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_a_history_whose_own_breakpoints_break_the_order_is_refused(provider: str) -> None:
    history = _history(provider, long_at=2)
    short = tl.text_part("A long document.", metadata={KEYS[provider]: MARKS[provider][0]})
    history[0] = tl.user_message(short)
    with pytest.raises(tl.ValidationError, match=r"1h.*after.*5m") as caught:
        encode(history, provider=provider, cache="auto")
    assert caught.value.errors[0].path == "cache"
    assert KEYS[provider] in str(caught.value)  # where the breakpoints come from: the fix


@given(
    st.sampled_from(["anthropic", "bedrock"]),
    st.lists(st.sampled_from([None, "5m", "1h"]), min_size=3, max_size=3),
    st.one_of(st.just("auto"), st.lists(st.sampled_from(["system", "tools", 0, 1, 2]))),
    st.booleans(),
)
@settings(max_examples=examples(60))
def test_breakpoints_keep_the_order_or_encode_refuses(
    provider: str, stored: list[str | None], cache: Any, with_tools: bool
) -> None:
    """Whatever the history holds and ``cache`` asks, the request keeps the TTL order and the
    four-breakpoint limit, or ``encode`` raises a ``ValidationError`` naming ``cache``."""
    history: list[tl.Message] = []
    for index, ttl in enumerate(stored):
        text = f"turn {index}"
        mark = None if ttl is None else dict(MARKS[provider][ttl == "1h"])
        metadata = {} if mark is None else {KEYS[provider]: mark}
        part = tl.text_part(text, metadata=metadata)
        history.append(tl.user_message(part) if index % 2 == 0 else tl.assistant_message(part))
    kept = [ttl for ttl in stored if ttl is not None]
    broken_history = any(a == "5m" and b == "1h" for a, b in itertools.pairwise(kept))
    refused = payload = None
    try:
        payload = encode(
            history,
            provider=provider,
            system="Be brief.",
            tools=[TOOL] if with_tools else (),
            cache=cache,
        )
    except tl.ValidationError as error:
        refused = error.errors[0].path
    if payload is None:
        assert refused is not None
        assert refused.startswith("cache")
        return
    assert not broken_history
    _judged(provider, payload)
