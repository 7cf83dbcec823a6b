"""Tools that run themselves: a model's tool calls run, and answered in one tool message.

[`run_tool_calls`][threadline.run_tool_calls] and
[`arun_tool_calls`][threadline.arun_tool_calls] take the calls (an assistant message, a list of
calls, or a history's pending calls), run each through its
[`ToolDefinition`][threadline.ToolDefinition]'s function and return the tool message that
answers them. Whatever goes wrong with one call (an unknown tool, arguments the function's
signature refuses, an exception, a timeout, a value that cannot be a result) becomes that call's
``is_error`` result, worded for the model; only a mistake of the caller (a tool list that
cannot be used, a bad option) raises, before anything runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import dataclasses
import inspect
import json
import math
import os
import re
import threading
import typing
import weakref
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

import pydantic

from threadline.errors import ErrorDetail
from threadline.errors import ValidationError
from threadline.integrity import pending_calls
from threadline.messages import Message
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.messages import tool_message
from threadline.messages import tool_result_part
from threadline.tools import ToolDefinition
from threadline.tools import _hints

__all__ = ["arun_tool_calls", "run_tool_calls"]

OnError = Callable[[Exception, ToolCallPart], str]
"""Words a failed call's result: ``on_error(exception, call) -> text``."""

THREAD_LIMIT = min(32, (os.cpu_count() or 1) + 4)
"""Sync functions running at once when ``max_concurrency`` is ``None`` (asyncio's own default
for worker threads): a thousand calls never make a thousand threads."""

_TEXT_LIMIT = 2000
"""Characters of an exception's message (or of unparsable arguments) put in a result."""

_SURROGATE = re.compile("[\ud800-\udfff]")

_LISTED = 20
"""Problems (or tool names) listed in one result before "and N more"."""


# -- What the caller gave ------------------------------------------------------------------------


def _invalid(field: str, problem: str, kind: str) -> ValidationError:
    detail = ErrorDetail(field, problem, kind)
    return ValidationError(f"run_tool_calls: {detail}", [detail])


def _calls(given: object) -> list[ToolCallPart]:
    """The calls to run, each id once (the first call with an id wins)."""
    if isinstance(given, Message):
        if given.role != "assistant":
            raise _invalid(
                "message_or_calls",
                f"is a {given.role} message; pass the assistant message whose calls to run, "
                "a list of its calls, or the history (its pending calls run)",
                "role",
            )
        calls = pending_calls([given])
    elif isinstance(given, (str, bytes, Mapping, ToolCallPart)) or not isinstance(given, Iterable):
        raise TypeError(
            "run_tool_calls takes an assistant Message, a list of ToolCallPart, or a list of "
            f"Message (a history), not {type(given).__name__}"
        )
    else:
        items = list(given)
        if all(isinstance(item, ToolCallPart) for item in items):
            calls = items
        elif all(isinstance(item, Message) for item in items):
            calls = pending_calls(items)
        else:
            kind = Message if isinstance(items[0], Message) else ToolCallPart
            index, bad = next((i, x) for i, x in enumerate(items) if not isinstance(x, kind))
            raise TypeError(
                f"run_tool_calls: message_or_calls[{index}] is a {type(bad).__name__}; pass "
                "a list of ToolCallPart or a list of Message (a history), not a mix"
            )
    unique: dict[str, ToolCallPart] = {}
    for call in calls:
        unique.setdefault(call.id, call)
    return list(unique.values())


def _tool_table(tools: object) -> dict[str, ToolDefinition]:
    if isinstance(tools, Mapping):
        items = [(f"tools[{key!r}]", key, tool) for key, tool in tools.items()]
    elif isinstance(tools, (str, bytes, ToolDefinition)) or not isinstance(tools, Iterable):
        raise TypeError(
            "run_tool_calls: tools must be a list of ToolDefinition (tools=[tool]) or a mapping "
            f"of name to ToolDefinition, not {type(tools).__name__}"
        )
    else:
        items = [(f"tools[{index}]", None, tool) for index, tool in enumerate(tools)]
    table: dict[str, ToolDefinition] = {}
    where: dict[str, str] = {}
    for path, key, tool in items:
        if not isinstance(tool, ToolDefinition):
            raise TypeError(
                f"run_tool_calls: {path} is a {type(tool).__name__}, not a ToolDefinition"
            )
        if key is not None and key != tool.name:
            raise _invalid(
                path,
                f"is the tool named {tool.name!r}; key each tool by its name, or pass a list",
                "tool_name",
            )
        if tool.name in table:
            raise _invalid(
                path,
                f"is a second tool named {tool.name!r} (the first is {where[tool.name]}); a "
                "call names its tool, so each name must be one tool",
                "tool_duplicate",
            )
        _check_function(path, tool)
        table[tool.name] = tool
        where[tool.name] = path
    return table


def _check_function(path: str, tool: ToolDefinition) -> None:
    if tool.function is None:
        raise _invalid(
            path,
            f"tool {tool.name!r} has no function to run; build it with tool_from_function(fn) "
            "or pass function=... to ToolDefinition (or leave it out of tools and answer its "
            "calls yourself)",
            "tool_function",
        )
    if isinstance(tool.function, type) and issubclass(tool.function, pydantic.BaseModel):
        raise _invalid(
            path,
            f"tool {tool.name!r} is made from the model {tool.function.__name__} "
            "(tool_from_model): it reads arguments but runs nothing; leave it out of tools and "
            f"read its calls with {tool.function.__name__}.model_validate(call.arguments)",
            "tool_function",
        )


@dataclasses.dataclass(frozen=True, slots=True)
class _Options:
    max_concurrency: int | None
    timeout: float | None
    on_error: OnError | None


def _options(max_concurrency: object, timeout: object, on_error: object) -> _Options:
    if max_concurrency is not None and (
        isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int)
    ):
        raise _invalid(
            "max_concurrency", f"must be an int or None, not {max_concurrency!r}", "type"
        )
    if max_concurrency is not None and max_concurrency < 1:
        raise _invalid(
            "max_concurrency",
            f"must be at least 1 (or None: all at once), not {max_concurrency}",
            "value",
        )
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise _invalid(
            "timeout", f"must be a number of seconds above 0 (or None), not {timeout!r}", "value"
        )
    if on_error is not None and not callable(on_error):
        raise TypeError(
            f"run_tool_calls: on_error must be a function (exception, call) -> str, not "
            f"{type(on_error).__name__}"
        )
    return _Options(max_concurrency, None if timeout is None else float(timeout), on_error)


# -- Arguments, checked through the function's signature ---------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class _Signature:
    """How a function's arguments are validated: a pydantic model of its keyword parameters."""

    model: type[pydantic.BaseModel] | None
    """``None``: no signature to read (a builtin); the arguments pass as they are."""
    names: Mapping[str, str]
    """Field name -> parameter name (fields are ``p0``, ``p1``...: a parameter named ``json``
    or ``model_config`` would clash with pydantic's own names)."""

    def bind(self, arguments: Mapping[str, Any]) -> dict[str, Any] | str:
        """The keyword arguments to call with, or the text of what is wrong with them."""
        values = {key: copy.deepcopy(value) for key, value in arguments.items()}
        if self.model is None:
            return values
        try:
            bound = self.model.model_validate(values)
        except pydantic.ValidationError as error:
            return _argument_problems(error)
        kwargs = dict(bound.model_extra or {})  # a **kwargs function's other arguments
        given = bound.model_fields_set  # the others take the function's own defaults
        kwargs.update(
            {name: getattr(bound, field) for field, name in self.names.items() if field in given}
        )
        return kwargs


_SIGNATURES: weakref.WeakKeyDictionary[Any, _Signature] = weakref.WeakKeyDictionary()


def _signature(tool: ToolDefinition) -> _Signature:
    function = tool.function
    try:
        return _SIGNATURES[function]
    except (KeyError, TypeError):  # TypeError: a function that cannot be weakly referenced
        pass
    found = _read_signature(tool)
    with contextlib.suppress(TypeError):
        _SIGNATURES[function] = found
    return found


def _read_signature(tool: ToolDefinition) -> _Signature:
    function = tool.function
    try:
        signature = inspect.signature(typing.cast(Callable[..., Any], function))
    except (TypeError, ValueError):
        return _Signature(None, {})
    try:
        hints = _hints(function)
    except Exception as error:  # unresolved forward references, mostly: NameError
        raise _invalid(
            f"tools[{tool.name!r}]",
            f"the annotations of tool {tool.name!r}'s function cannot be read ({error}), so its "
            "arguments cannot be checked; make every annotation importable",
            "tool_function",
        ) from None
    fields: dict[str, Any] = {}
    names: dict[str, str] = {}
    extra = "forbid"
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.VAR_KEYWORD:
            extra = "allow"
        if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            continue  # *args, positional-only: a call by name cannot fill them
        field = f"p{len(fields)}"
        annotation = hints.get(parameter.name, Any)
        default = ... if parameter.default is parameter.empty else parameter.default
        fields[field] = (
            typing.Annotated[annotation, pydantic.Field(alias=parameter.name)],
            default,
        )
        names[field] = parameter.name
    config = pydantic.ConfigDict(extra=extra, arbitrary_types_allowed=True)  # type: ignore[typeddict-item]
    try:
        model = pydantic.create_model(f"{tool.name}_arguments", __config__=config, **fields)
    except (pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError) as error:
        raise _invalid(
            f"tools[{tool.name!r}]",
            f"the arguments of tool {tool.name!r} cannot be checked through its function's "
            f"signature: {error}",
            "tool_function",
        ) from None
    return _Signature(model, names)


def _argument_problems(error: pydantic.ValidationError) -> str:
    lines = []
    problems = error.errors(include_url=False, include_context=False)
    for problem in problems[:_LISTED]:
        where = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in problem["loc"]
        ).lstrip(".")
        if problem["type"] == "extra_forbidden":
            lines.append(f"- {where}: not an argument of this tool")
        elif problem["type"] == "missing":
            lines.append(f"- {where}: missing (required)")
        else:
            lines.append(
                f"- {where or '(arguments)'}: {problem['msg']} (got {_shown(problem['input'])})"
            )
    if len(problems) > _LISTED:
        lines.append(f"- and {len(problems) - _LISTED} more")
    return "\n".join(lines)


def _shown(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (ValueError, TypeError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


# -- One call ------------------------------------------------------------------------------------


@dataclasses.dataclass(slots=True)
class _Plan:
    """One call to answer: either an answer already known, or a function to call."""

    call: ToolCallPart
    answer: ToolResultPart | None = None
    function: Callable[..., Any] | None = None
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    is_async: bool = False


def _error(call: ToolCallPart, text: str) -> ToolResultPart:
    return tool_result_part(call.id, _unicode(text), name=call.name, is_error=True)


def _unicode(text: str) -> str:
    """``text`` with any lone surrogate replaced, so that it can be a result."""
    return _SURROGATE.sub("\ufffd", text)


def _clipped(text: str) -> str:
    return text if len(text) <= _TEXT_LIMIT else text[:_TEXT_LIMIT] + "... (cut)"


def _plans(
    calls: list[ToolCallPart], tools: dict[str, ToolDefinition], retry_safe_only: bool
) -> list[_Plan]:
    plans = []
    for call in calls:
        tool = tools.get(call.name)
        if retry_safe_only and (tool is None or not tool.retry_safe):
            continue  # left pending: the next prepare_messages answers it as interrupted
        plan = _Plan(call)
        plans.append(plan)
        if tool is None:
            plan.answer = _error(call, _unknown_tool(call.name, tools))
        elif call.raw_arguments is not None:
            plan.answer = _error(
                call,
                f"The arguments of {call.name!r} were not a JSON object: "
                f"{_clipped(call.raw_arguments)!r}. Call the tool again with its arguments as "
                "one JSON object.",
            )
        else:
            bound = _signature(tool).bind(call.arguments)
            if isinstance(bound, str):
                plan.answer = _error(
                    call,
                    f"Invalid arguments for tool {call.name!r}:\n{bound}\nCall the tool again "
                    "with the arguments corrected.",
                )
            else:
                assert tool.function is not None  # _tool_table refused tools without one
                plan.function = tool.function
                plan.kwargs = bound
                plan.is_async = _is_async(tool.function)
    return plans


def _unknown_tool(name: str, tools: Mapping[str, ToolDefinition]) -> str:
    if not tools:
        return f"There is no tool named {name!r}, and no tool is available."
    names = ", ".join(repr(known) for known in list(tools)[:_LISTED])
    more = f" and {len(tools) - _LISTED} more" if len(tools) > _LISTED else ""
    return f"There is no tool named {name!r}. The available tools are {names}{more}."


def _is_async(function: Callable[..., Any]) -> bool:
    return any(
        inspect.iscoroutinefunction(candidate)
        for candidate in (function, inspect.unwrap(function), getattr(function, "__call__", None))  # noqa: B004
    )


def _answer(call: ToolCallPart, value: object) -> ToolResultPart:
    """The result for what the function returned."""
    if isinstance(value, ToolResultPart):
        return dataclasses.replace(value, call_id=call.id, name=call.name)
    try:
        return tool_result_part(call.id, value, name=call.name)  # type: ignore[arg-type]
    except ValidationError as error:
        problem = error.errors[0].message if error.errors else str(error)
        return _error(
            call,
            f"The tool returned a {type(value).__name__}, which cannot be a tool result: "
            f"{_clipped(problem)}",
        )


def _failed(call: ToolCallPart, exception: Exception, on_error: OnError | None) -> ToolResultPart:
    if on_error is not None:
        try:
            text = on_error(exception, call)
        except Exception:  # its own failure must not lose the result: the default is used
            text = None
        if isinstance(text, str):
            return _error(call, text)
    return _error(call, _default_text(exception))


def _default_text(exception: Exception) -> str:
    try:
        message = str(exception)
    except Exception:
        message = ""
    kind = type(exception).__name__
    return f"{kind}: {_clipped(message)}" if message else kind


def _timed_out(call: ToolCallPart, timeout: float) -> ToolResultPart:
    return _error(
        call,
        f"The tool {call.name!r} did not finish within {timeout:g} s; its outcome is unknown.",
    )


def _call_sync(function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    value = function(**kwargs)
    if inspect.isawaitable(value):  # a sync wrapper around a coroutine function
        return _blocking(_awaited(value))
    return value


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


_T = typing.TypeVar("_T")


def _blocking(coroutine: typing.Coroutine[Any, Any, _T]) -> _T:
    """Run ``coroutine`` to its end from sync code, even under a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    # A loop runs in this thread (sync code called from async code): asyncio.run cannot
    # nest, so the coroutine gets a loop in a thread of its own while this one waits.
    outcome: list[Any] = []

    def work() -> None:
        try:
            outcome.append((True, asyncio.run(coroutine)))
        except BaseException as error:  # handed to the waiting thread, which raises it
            outcome.append((False, error))

    worker = threading.Thread(target=work, name="threadline-run-tool-calls", daemon=True)
    worker.start()
    worker.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return typing.cast(_T, value)


def _in_thread(function: Callable[..., Any], kwargs: dict[str, Any]) -> asyncio.Future[Any]:
    """Call ``function`` in a daemon thread of its own: a call abandoned after its timeout
    keeps running there and never holds up the loop, the run or the interpreter's exit."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():  # cancelled: the call was abandoned
            future.set_result(value) if ok else future.set_exception(value)

    def work() -> None:
        outcome: tuple[bool, Any]
        try:
            outcome = (True, context.run(_call_sync, function, kwargs))
        except (Exception, asyncio.CancelledError) as error:
            outcome = (False, error)
        except BaseException as stop:  # KeyboardInterrupt, SystemExit...: the run ends
            outcome = (False, _Stop(stop))
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=work, name="threadline-tool", daemon=True).start()
    return future


async def _call_async(function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    try:
        value = function(**kwargs)
        if inspect.isawaitable(value):
            value = await value
    except (Exception, asyncio.CancelledError):
        raise
    except BaseException as stop:  # KeyboardInterrupt, SystemExit...: the run ends
        raise _Stop(stop) from None
    return value


class _Stop(Exception):
    """A ``KeyboardInterrupt``, ``SystemExit`` (any ``BaseException`` but a cancellation) of
    a call, carried out of the event loop.

    Raised inside a task, the first two escape the loop at once and leave its tasks behind
    ("Task exception was never retrieved"); wrapped, they end the run like any exception and
    are raised again, as they were, where the run was called.
    """

    def __init__(self, exception: BaseException) -> None:
        super().__init__(exception)
        self.exception = exception


# -- Many calls ----------------------------------------------------------------------------------


async def _run_one(
    plan: _Plan, options: _Options, limit: asyncio.Semaphore | None
) -> ToolResultPart:
    if plan.answer is not None:
        return plan.answer
    assert plan.function is not None
    async with limit if limit is not None else contextlib.nullcontext():
        if plan.is_async:
            running: asyncio.Future[Any] = asyncio.ensure_future(
                _call_async(plan.function, plan.kwargs)
            )
        else:
            running = _in_thread(plan.function, plan.kwargs)
        try:
            if options.timeout is not None:
                done, _ = await asyncio.wait({running}, timeout=options.timeout)
                if not done:
                    running.cancel()
                    if plan.is_async:  # cancelled, and given the chance to clean up
                        await asyncio.wait({running})
                        if not running.cancelled():
                            running.exception()  # finished as it was cancelled: not a result
                    return _timed_out(plan.call, options.timeout)
            value = await running
        except _Stop:
            raise
        except Exception as exception:
            return _failed(plan.call, exception, options.on_error)
        finally:
            if not running.done():  # the run itself was cancelled
                running.cancel()
    return _answer(plan.call, value)


async def _run_all(plans: list[_Plan], options: _Options) -> list[ToolResultPart]:
    try:
        return await _gathered(plans, options)
    except _Stop as stop:
        raise stop.exception from None


async def _caught(plans: list[_Plan], options: _Options) -> list[ToolResultPart] | _Stop:
    """The results, or the interrupt to raise once the loop has ended."""
    try:
        return await _gathered(plans, options)
    except _Stop as stop:
        return stop


async def _gathered(plans: list[_Plan], options: _Options) -> list[ToolResultPart]:
    shared = None if options.max_concurrency is None else asyncio.Semaphore(options.max_concurrency)
    threads = asyncio.Semaphore(THREAD_LIMIT) if shared is None else shared
    tasks = [
        asyncio.ensure_future(_run_one(plan, options, threads if not plan.is_async else shared))
        for plan in plans
    ]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()


def _prepare(
    message_or_calls: object,
    tools: object,
    max_concurrency: object,
    timeout: object,
    on_error: object,
    retry_safe_only: object,
) -> tuple[list[_Plan], _Options]:
    options = _options(max_concurrency, timeout, on_error)
    if not isinstance(retry_safe_only, bool):
        raise _invalid("retry_safe_only", f"must be True or False, not {retry_safe_only!r}", "type")
    table = _tool_table(tools)
    return _plans(_calls(message_or_calls), table, retry_safe_only), options


def run_tool_calls(
    message_or_calls: Message | Iterable[ToolCallPart] | Iterable[Message],
    tools: Iterable[ToolDefinition] | Mapping[str, ToolDefinition],
    *,
    max_concurrency: int | None = None,
    timeout: float | None = None,
    on_error: OnError | None = None,
    retry_safe_only: bool = False,
) -> Message | None:
    """Run a model's tool calls and return the tool message that answers them, ready to append.

    Each call runs its tool's ``function`` with the call's arguments, first validated through
    the function's signature with pydantic (as ``pydantic.validate_call`` would: ``"3"`` for
    an ``int`` becomes ``3``, a dict for a model parameter becomes the model; an unannotated
    parameter takes any JSON). For a [`tool_from_function`][threadline.tool_from_function]
    tool that signature is the schema the model was given; for a hand-written
    ``ToolDefinition(..., function=fn)`` the schema itself is not checked, only ``fn``'s
    signature. The result holds, per call, in call order, one
    [`ToolResultPart`][threadline.ToolResultPart] named after the tool:

    - the return value as [`tool_result_part`][threadline.tool_result_part] takes it (a ``str``
      as is, text/file parts, any other JSON value as compact JSON); a returned
      ``ToolResultPart`` is the result itself, given the call's id and name;
    - ``is_error=True`` with text for the model, no traceback, when the tool name is unknown
      (the available tools are listed), the arguments were not a JSON object, an argument is
      wrong (each field and problem), the function raised (``"ValueError: the message"``, or
      what ``on_error`` says), it ran past ``timeout``, or it returned what cannot be a result
      (a set, an object: the type is named).

    An exception's message goes to the model as it is, and may hold what the model should not
    see (a path, a URL with a token): word it with ``on_error`` for such tools. If ``on_error``
    raises or returns something other than a ``str``, the default text is used.
    ``KeyboardInterrupt``, ``SystemExit`` (any ``BaseException`` that is not an
    ``Exception``) and the run's cancellation are raised, never made results.

    Calls run in threads when they run at once: with ``max_concurrency`` above 1 (or ``None``:
    all at once, at most ``min(32, CPUs + 4)`` sync functions in threads) and more than one
    call, or with a ``timeout``. Otherwise (one call, or ``max_concurrency=1``, and no
    timeout) each runs in the calling thread, in order. A coroutine function is run in an
    event loop of its own (in a helper thread when one already runs in this thread; in async
    code, use [`arun_tool_calls`][threadline.arun_tool_calls]). A sync function that runs past
    ``timeout`` is abandoned, not killed: Python cannot stop a thread, so it keeps running in
    its daemon thread, and whatever it does then is lost; a coroutine is cancelled.

    Args:
        message_or_calls: an assistant [`Message`][threadline.Message] (its calls; none when it
            is marked ``threadline.incomplete``), a list of
            [`ToolCallPart`][threadline.ToolCallPart] (such as
            ``pending_calls(history)``), or a history (a list of messages, a
            [`History`][threadline.History], a snapshot): its
            [`pending_calls`][threadline.pending_calls], so calls already answered are
            skipped. A call id given twice runs once (the first call with it).
        tools: the tools, a list of [`ToolDefinition`][threadline.ToolDefinition] or a mapping
            of name to definition (each key its tool's name); each needs a ``function``.
        max_concurrency: how many calls run at once; ``None``: all of them.
        timeout: seconds each call may run (from its start); ``None``: no limit.
        on_error: ``on_error(exception, call) -> str``: the text of a failed call's result.
        retry_safe_only: run only the calls whose tool has ``retry_safe=True``; the others are
            left unanswered (pending), and the next
            [`prepare_messages`][threadline.prepare_messages] answers them as interrupted. The
            resume recipe after a crash: ``run_tool_calls(pending_calls(history), tools,
            retry_safe_only=True)``.

    Returns:
        The tool message (role ``tool``), or ``None`` when no call is left to run: a message
        cannot be empty.

    Raises:
        threadline.ValidationError: two tools share a name, a tool has no function (or is a
            pydantic model's, from ``tool_from_model``), a mapping's key is not its tool's name,
            a function's annotations cannot be read, or an option is out of range, naming it.
            Nothing has run then.
        TypeError: ``message_or_calls`` or ``tools`` is not one of the kinds above, or
            ``on_error`` is not callable.
    """
    plans, options = _prepare(
        message_or_calls, tools, max_concurrency, timeout, on_error, retry_safe_only
    )
    if not plans:
        return None
    running = [plan for plan in plans if plan.answer is None]
    inline = options.timeout is None and not any(plan.is_async for plan in running)
    if inline and (options.max_concurrency == 1 or len(running) <= 1):
        results = [_run_inline(plan, options) for plan in plans]
    else:
        outcome = _blocking(_caught(plans, options))
        if isinstance(outcome, _Stop):
            raise outcome.exception from None
        results = outcome
    return tool_message(*results)


def _run_inline(plan: _Plan, options: _Options) -> ToolResultPart:
    if plan.answer is not None:
        return plan.answer
    assert plan.function is not None
    try:
        value = _call_sync(plan.function, plan.kwargs)
    except Exception as exception:
        return _failed(plan.call, exception, options.on_error)
    return _answer(plan.call, value)


async def arun_tool_calls(
    message_or_calls: Message | Iterable[ToolCallPart] | Iterable[Message],
    tools: Iterable[ToolDefinition] | Mapping[str, ToolDefinition],
    *,
    max_concurrency: int | None = None,
    timeout: float | None = None,
    on_error: OnError | None = None,
    retry_safe_only: bool = False,
) -> Message | None:
    """[`run_tool_calls`][threadline.run_tool_calls] for async code.

    The same calls, results and errors. A coroutine function is awaited on the running loop
    (cancelled when it runs past ``timeout``); a sync function runs in a daemon thread of its
    own, so it never blocks the loop (abandoned, not killed, when it runs past ``timeout``),
    at most ``max_concurrency`` (or, when ``None``, ``min(32, CPUs + 4)``) at once. Cancelling the
    run cancels the calls still running (a sync one is abandoned).

    Args:
        message_or_calls: as for [`run_tool_calls`][threadline.run_tool_calls].
        tools: as for [`run_tool_calls`][threadline.run_tool_calls].
        max_concurrency: how many calls run at once; ``None``: all of them.
        timeout: seconds each call may run (from its start); ``None``: no limit.
        on_error: ``on_error(exception, call) -> str``: the text of a failed call's result.
        retry_safe_only: run only the calls of tools with ``retry_safe=True``.

    Returns:
        The tool message, or ``None`` when no call is left to run.

    Raises:
        threadline.ValidationError: as for [`run_tool_calls`][threadline.run_tool_calls].
        TypeError: as for [`run_tool_calls`][threadline.run_tool_calls].
    """
    plans, options = _prepare(
        message_or_calls, tools, max_concurrency, timeout, on_error, retry_safe_only
    )
    if not plans:
        return None
    return tool_message(*await _run_all(plans, options))
