"""Repair, the codecs' encode and the error report do work linear in hostile input (issue 19).

Each shape below once cost N squared steps for N calls, results or errors, all within
``Limits.untrusted()``: an assistant message of N unanswered calls took 7 s at N=9,998. Timing
is no test (it depends on the machine), so these tests count the lines of threadline's own code
that run (``sys.settrace``): deterministic, and a loop over the input inside a loop over the
input shows at once. Ten times the input must run at most ``GROWTH`` times the lines; on the
old code the ratio at these sizes was 30 to 90. ``bench/hostile.py`` times the same shapes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import threadline
from tests.fuzz._guard import hang_guard
from threadline import IntegrityError
from threadline import Message
from threadline import ValidationError
from threadline import load_json
from threadline.codecs import codec_names
from threadline.codecs import get_codec
from threadline.integrity import check_messages
from threadline.integrity import prepare_messages
from threadline.integrity import repair_messages
from threadline.testing.hostile import internal_after_calls
from threadline.testing.hostile import invalid_messages
from threadline.testing.hostile import merged
from threadline.testing.hostile import misplaced
from threadline.testing.hostile import provider_pairs
from threadline.testing.hostile import reasoning_items
from threadline.testing.hostile import reused_id
from threadline.testing.hostile import shared_ids
from threadline.testing.hostile import unanswered

SMALL = 40
"""The smaller size; the larger is ten times it."""
GROWTH = 12
"""How many times the lines ten times the input may run (the bench's bound for time)."""
PROVIDERS = codec_names()
_SOURCE = str(Path(threadline.__file__).resolve().parent)


def lines_run(call: Callable[[], object]) -> int:
    """How many lines of threadline's own code ``call()`` runs (exceptions are fine)."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def start(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(_SOURCE) else None

    previous = sys.gettrace()
    sys.settrace(start)
    try:
        call()
    except (IntegrityError, ValidationError):
        pass
    finally:
        sys.settrace(previous)
    return count


# --- the shapes (threadline.testing.hostile) -------------------------------------------------


def _rename(messages: list[Message]) -> object:
    return repair_messages(messages, rename_duplicate_ids=True)


def _encode(provider: str) -> Callable[[list[Message]], object]:
    return lambda messages: get_codec(provider).encode(messages)


Shape = tuple[Callable[[int], Any], Callable[[Any], object]]
SHAPES: dict[str, Shape] = {
    "prepare: unanswered calls": (unanswered, prepare_messages),
    "prepare: results merged into a tool message": (merged, prepare_messages),
    "prepare: misplaced results": (misplaced, prepare_messages),
    "prepare: provider call/result pairs": (provider_pairs, prepare_messages),
    "prepare: calls then internal messages": (internal_after_calls, prepare_messages),
    "check: misplaced results": (misplaced, check_messages),
    "rename: one id reused N times": (reused_id, _rename),
    "rename: N ids shared by two turns": (shared_ids, _rename),
    "load_json: N invalid messages": (invalid_messages, load_json),
    **{f"encode {p}: misplaced results": (misplaced, _encode(p)) for p in PROVIDERS},
    **{f"encode {p}: unanswered calls": (unanswered, _encode(p)) for p in PROVIDERS},
    "encode openai_responses: reasoning segments": (
        reasoning_items,
        _encode("openai_responses"),
    ),
}


@pytest.mark.parametrize("name", SHAPES)
def test_ten_times_the_input_runs_at_most_twelve_times_the_lines(name: str) -> None:
    build, run = SHAPES[name]
    small, large = build(SMALL), build(SMALL * 10)
    lines_run(lambda: run(small))  # first calls build pydantic schemas and caches
    growth = lines_run(lambda: run(large)) / lines_run(lambda: run(small))
    assert growth <= GROWTH, f"{name}: 10x the input ran {growth:.1f}x the lines"


def test_the_line_count_sees_a_quadratic_loop() -> None:
    # A loop over the input inside a loop over the input, compiled as if it were threadline's.
    source = "def pairs(n):\n    return [(i, j) for i in range(n) for j in range(n)]\n"
    space: dict[str, Any] = {}
    exec(compile(source, f"{_SOURCE}/quadratic.py", "exec"), space)
    pairs = space["pairs"]
    growth = lines_run(lambda: pairs(SMALL * 10)) / lines_run(lambda: pairs(SMALL))
    assert growth > 50


@pytest.mark.slow  # seconds of work: the full tier's
def test_responses_encode_of_many_reasoning_segments_returns_in_time() -> None:
    # The old plan prepended each segment to a list: N squared entries copied, at C speed, so
    # the line count does not see it. 60,000 segments take about 2 s now and took 36 s then.
    messages = reasoning_items(60_000)
    with hang_guard(20.0):
        payload = get_codec("openai_responses").encode(messages)
    kinds = [item["type"] for item in payload["input"][1:5]]
    assert kinds == ["reasoning", "function_call", "reasoning", "function_call"]
