"""run_tool_calls over generated rounds: one result per call to run, in call order, never a raise.

Each generated call names a tool whose function succeeds, raises, returns what cannot be a
result or returns a result of its own (sync or async), or a tool that does not exist; its
arguments are right, wrong, or not JSON at all; ids repeat. Whatever the mix, the tool message
answers each distinct call id once, in the order the ids first appear, each result naming the
call's tool, and ``is_error`` exactly where the call could not give a result.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.support import examples
from threadline import ToolCallPart


def ok(x: int) -> str:
    return f"ok {x}"


def structured(x: int) -> dict[str, int]:
    return {"x": x}


def raises(x: int) -> str:
    raise ValueError(f"failed on {x}")


def unsendable(x: int) -> set[int]:
    return {x}


def own_result(x: int) -> tl.ToolResultPart:
    return tl.tool_result_part("ignored", f"own {x}", is_error=x % 2 == 1)


async def async_ok(x: int) -> str:
    await asyncio.sleep(0)
    return f"async {x}"


async def async_raises(x: int) -> str:
    await asyncio.sleep(0)
    raise KeyError(x)


FUNCTIONS = [ok, structured, raises, unsendable, own_result, async_ok, async_raises]
FAILS = {"raises", "unsendable", "async_raises"}
TOOLS = [
    tl.tool_from_function(function, retry_safe=index % 2 == 0)
    for index, function in enumerate(FUNCTIONS)
]
BY_NAME = {tool.name: tool for tool in TOOLS}
NAMES = [*BY_NAME, "missing"]

ARGUMENTS: st.SearchStrategy[dict[str, Any] | str] = st.one_of(
    st.integers(-1000, 1000).map(lambda x: {"x": x}),  # right
    st.just({"x": "not a number"}),  # wrong type
    st.just({}),  # missing
    st.integers().map(lambda x: {"x": 1, "extra": x}),  # unknown argument
    st.just("{not json"),  # raw text
)


@st.composite
def rounds(draw: st.DrawFn) -> list[ToolCallPart]:
    size = draw(st.integers(0, 12))
    return [
        tl.tool_call_part(
            f"c{draw(st.integers(0, 8))}", draw(st.sampled_from(NAMES)), draw(ARGUMENTS)
        )
        for _ in range(size)
    ]


def expected_error(call: ToolCallPart) -> bool:
    if call.name not in BY_NAME or call.raw_arguments is not None:
        return True
    if set(call.arguments) != {"x"} or not isinstance(call.arguments["x"], int):
        return True
    if call.name == "own_result":
        return bool(call.arguments["x"] % 2)
    return call.name in FAILS


@settings(max_examples=examples(60), deadline=None)
@given(
    calls=rounds(),
    max_concurrency=st.sampled_from([None, 1, 3]),
    use_async=st.booleans(),
    retry_safe_only=st.booleans(),
    as_mapping=st.booleans(),
)
def test_one_result_per_call_in_order(
    calls: list[ToolCallPart],
    max_concurrency: int | None,
    use_async: bool,
    retry_safe_only: bool,
    as_mapping: bool,
) -> None:
    tools: Any = BY_NAME if as_mapping else TOOLS
    options: dict[str, Any] = {
        "max_concurrency": max_concurrency,
        "retry_safe_only": retry_safe_only,
    }
    if use_async:
        message = asyncio.run(tl.arun_tool_calls(calls, tools, **options))
    else:
        message = tl.run_tool_calls(calls, tools, **options)

    first: dict[str, ToolCallPart] = {}
    for call in calls:
        first.setdefault(call.id, call)
    runnable = [
        call
        for call in first.values()
        if not retry_safe_only or (call.name in BY_NAME and BY_NAME[call.name].retry_safe)
    ]
    if not runnable:
        assert message is None
        return
    assert message is not None
    assert message.role == "tool"
    results = message.tool_results
    assert [result.call_id for result in results] == [call.id for call in runnable]
    assert [result.name for result in results] == [call.name for call in runnable]
    assert [result.is_error for result in results] == [expected_error(c) for c in runnable]
    for call, result in zip(runnable, results, strict=True):
        if not result.is_error and call.name in ("ok", "async_ok", "structured"):
            assert str(call.arguments["x"]) in result.text
