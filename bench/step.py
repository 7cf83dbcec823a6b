"""Workload ``step`` (issue 39): one agent step, threadline against its peers.

A step is what an agent server does per model call: resume the conversation, append the
user's turn, encode the whole history as the provider's request, decode the provider's reply
(a canned response dict, the same each step but for its id) and append it durably. Each row
is one provider (OpenAI Chat, Anthropic) at one size; every store is a SQLite file in WAL with
``synchronous=FULL`` (one fsync per commit), so every step is timed in CPU time of this process
(``timing.py``), its wall time printed beside and never judged.

threadline, four ways:

- **warm**: the bound ``History`` stays in memory between steps; the body is
  ``History.encode(provider)`` (incremental).
- **cached**: a ``HistoryCache`` holds the bound History, and another store object (another
  process, as far as the store can tell) appended one turn since the last step, outside the
  timing: ``cache.get(cid)`` refreshes it with ``load_after``, then the step as warm.
- **cold**: the process holds nothing: a new ``SQLiteStore`` on the file and a new ``History``
  bound to the conversation (a full load), then the step as warm.
- **today** (warm and cold): the documented path before issue 39,
  ``encode(history.messages_for_model(), provider=...)``, with the History kept (warm) or
  reloaded from a new store each step (cold).

The peers do the same step on their own types, up to 10,000 messages (``PEER_SIZES``):

- **pydantic-ai**: history as rows of ``ModelMessagesTypeAdapter`` JSON in SQLite (as its chat
  app example stores it: one row per run), loaded with ``validate_json``; the request mapped by
  the model's own mapping (private: ``OpenAIChatModel._map_messages``,
  ``AnthropicModel._map_message``), the reply decoded by ``_process_response`` (private) from
  the SDK's response type; the step's messages written as one row.
- **LangChain**: ``SQLChatMessageHistory`` (langchain-community, SQLAlchemy) for the store;
  the request by ``convert_to_openai_messages`` (public) or langchain-anthropic's
  ``_format_messages`` (private: ``ChatAnthropic`` builds its payload with it); the reply by
  ``convert_to_messages`` (public) or ``ChatAnthropic._format_output`` (private) from the
  SDK's ``Message``.
- **OpenAI Agents SDK** (OpenAI Chat only: it reaches other providers through LiteLLM):
  ``SQLiteSession`` (``get_items`` cold, ``add_items`` for the step's items); the request by
  its Chat Completions converter ``Converter.items_to_messages`` (``agents.models
  .chatcmpl_converter``, the module its ``OpenAIChatCompletionsModel`` uses), the reply by
  ``Converter.message_to_output_items`` and ``model_dump`` as the runner stores it.

Every candidate's warm state is the state after a previous step (set up outside the timing).
Steps grow the conversation by two messages (four with the cached mode's other writer): a
sample takes at most ``size // 100`` steps on a conversation copied anew for the sample up to
1,000 messages, and at most ``size // 1000`` on one kept across samples above, so no
candidate's conversation grows by more than ~2% while it is measured.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import data
from timing import CpuSample
from timing import Stopwatch
from timing import measure

import threadline as tl
from threadline.stores import SQLiteStore

__all__ = ["PEER_SIZES", "STEP_SIZES", "bench_step"]

STEP_SIZES = (10, 100, 1_000, 10_000, 100_000)
PEER_SIZES = 10_000
"""The peers run up to this size."""
PROVIDERS = ("openai_chat", "anthropic")
COPY_UP_TO = 1_000
"""Up to this size each sample gets a fresh copy of the conversation."""
PEER_MODES = {
    "openai_chat": ("pydantic-ai", "langchain", "openai-agents"),
    "anthropic": ("pydantic-ai", "langchain"),
}

_ids = itertools.count()
USER_TEXT = (
    "Thanks. Now compare the two reports above and tell me which of the failing checks "
    "started first, with the commit that introduced it — and whether the fix is safe to ship "
    "on Friday."
)
REPLY_TEXT = (
    "The first failing check is the encoding round trip: it started with the commit that "
    "changed how reasoning signatures are stored. The fix restores the old field order and "
    "adds a test for it; it touches nothing else, so it is safe to ship on Friday. " * 2
)


def canned_response(provider: str) -> dict[str, Any]:
    """The provider's reply to the step, as its API returns it, with a new id."""
    n = next(_ids)
    if provider == "openai_chat":
        return {
            "id": f"chatcmpl-step{n}",
            "object": "chat.completion",
            "created": 1_764_000_000,
            "model": "gpt-4o-2024-08-06",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": REPLY_TEXT, "refusal": None},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 12_000, "completion_tokens": 120, "total_tokens": 12_120},
        }
    return {
        "id": f"msg_step{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {
                "type": "thinking",
                "thinking": "The reports share one failing check; find its first commit.",
                "signature": "EqQBCkYIBxgCKkD" + "a" * 300,
            },
            {"type": "text", "text": REPLY_TEXT},
        ],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 12_000, "output_tokens": 120},
    }


# ---------------------------------------------------------------------------------------------
# Candidates: setup() makes a state after one step; before(state) runs untimed before each
# step; step(state) is the timed step.


class Candidate:
    """One way of doing the step; ``setup`` returns its state, ready for the next step."""

    def setup(self) -> Any:
        raise NotImplementedError

    def before(self, state: Any) -> Any:
        """Untimed work before one step (a canned reply; another writer's turn); its result
        goes to ``step``."""
        return canned_response(self.provider)

    def step(self, state: Any, prepared: Any) -> None:
        raise NotImplementedError

    def close(self, state: Any) -> None:
        """Release the state (outside the timing)."""

    provider: str = "openai_chat"


class Threadline(Candidate):
    """threadline's step in one of its modes (``warm``, ``cached``, ``cold``, ``today warm``,
    ``today cold``) on a SQLite file holding ``base``."""

    def __init__(self, path: Path, base: list[tl.Message], provider: str, mode: str) -> None:
        self.path = path
        self.base = base
        self.provider = provider
        self.mode = mode
        self.store = SQLiteStore(path)
        self.today = mode.startswith("today")

    def setup(self) -> Any:
        cid = f"tl-{next(_ids)}"
        self.store.append(cid, self.base)
        state: dict[str, Any] = {"cid": cid}
        if self.mode == "cached":
            state["cache"] = tl.HistoryCache(self.store)
            state["other"] = SQLiteStore(self.path)
            state["other_version"] = None
            state["cache"].get(cid)
        elif not self.mode.endswith("cold"):
            state["history"] = tl.History().bind(self.store, cid)
        self.step(state, self.before(state))  # the previous step: what warm state keeps
        if self.mode != "cached" and not self.mode.endswith("cold"):
            history = state["history"]
            body = history.encode(self.provider)
            full = tl.encode(history.messages_for_model(), provider=self.provider)
            if json.dumps(body) != json.dumps(full):
                raise AssertionError("History.encode differs from the full encode")
        return state

    def before(self, state: Any) -> Any:
        if self.mode == "cached":  # another process's turn, since our last step
            n = next(_ids)
            state["other"].append(
                state["cid"],
                [tl.user_message(f"From the other worker, turn {n}."), tl.assistant_message("OK.")],
            )
        return canned_response(self.provider)

    def step(self, state: Any, prepared: Any) -> None:
        provider = self.provider
        store = None
        if self.mode == "cached":
            history = state["cache"].get(state["cid"])
        elif self.mode.endswith("cold"):
            store = SQLiteStore(self.path)
            history = tl.History().bind(store, state["cid"])
        else:
            history = state["history"]
        history.append(tl.user_message(USER_TEXT))
        if self.today:
            tl.encode(history.messages_for_model(), provider=provider)
        else:
            history.encode(provider)
        history.append(tl.decode_response(prepared, provider=provider))
        if store is not None:
            store.close()

    def close(self, state: Any) -> None:
        if "other" in state:
            state["other"].close()


def _durable(connection: Any) -> None:
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")


class PydanticAI(Candidate):
    """pydantic-ai: rows of ``ModelMessagesTypeAdapter`` JSON in SQLite, one per run."""

    def __init__(self, path: Path, base: list[Any], provider: str, mode: str) -> None:
        from pydantic_ai.messages import ModelMessagesTypeAdapter
        from pydantic_ai.models import ModelRequestParameters

        self.path = path
        self.provider = provider
        self.mode = mode
        self.adapter = ModelMessagesTypeAdapter
        self.base_json = ModelMessagesTypeAdapter.dump_json(base)
        self.parameters = ModelRequestParameters()
        self.loop = asyncio.new_event_loop()
        if provider == "openai_chat":
            from pydantic_ai.models.openai import OpenAIChatModel
            from pydantic_ai.providers.openai import OpenAIProvider

            self.model: Any = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(api_key="x"))
        else:
            from pydantic_ai.models.anthropic import AnthropicModel
            from pydantic_ai.providers.anthropic import AnthropicProvider

            self.model = AnthropicModel(
                "claude-sonnet-4-5", provider=AnthropicProvider(api_key="x")
            )
        connection = sqlite3.connect(path)
        _durable(connection)
        connection.execute(
            "CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, cid TEXT, json BLOB)"
        )
        connection.execute("CREATE INDEX IF NOT EXISTS by_cid ON messages (cid, id)")
        connection.commit()
        self.connection = connection

    def setup(self) -> Any:
        cid = f"pai-{next(_ids)}"
        with self.connection:
            self.connection.execute(
                "INSERT INTO messages (cid, json) VALUES (?, ?)", (cid, self.base_json)
            )
        state: dict[str, Any] = {"cid": cid}
        if self.mode == "warm":
            state["messages"] = self.adapter.validate_json(self.base_json)
            state["connection"] = self.connection
        self.step(state, self.before(state))
        return state

    def _request(self, messages: list[Any]) -> Any:
        if self.provider == "openai_chat":
            return self.loop.run_until_complete(self.model._map_messages(messages, self.parameters))
        return self.loop.run_until_complete(self.model._map_message(messages, self.parameters, {}))

    def _reply(self, response: dict[str, Any]) -> Any:
        if self.provider == "openai_chat":
            from openai.types.chat import ChatCompletion

            return self.model._process_response(ChatCompletion.model_validate(response))
        from anthropic.types.beta import BetaMessage

        return self.model._process_response(
            BetaMessage.model_validate(response), self.parameters, {}
        )

    def step(self, state: Any, prepared: Any) -> None:
        from pydantic_ai.messages import ModelRequest
        from pydantic_ai.messages import UserPromptPart

        if self.mode == "cold":
            connection = sqlite3.connect(self.path)
            connection.execute("PRAGMA synchronous=FULL")
            messages: list[Any] = []
            rows = connection.execute(
                "SELECT json FROM messages WHERE cid = ? ORDER BY id", (state["cid"],)
            )
            for (row,) in rows:
                messages.extend(self.adapter.validate_json(row))
        else:
            connection = state["connection"]
            messages = state["messages"]
        request = ModelRequest(parts=[UserPromptPart(USER_TEXT)])
        messages.append(request)
        self._request(messages)
        reply = self._reply(prepared)
        messages.append(reply)
        with connection:
            connection.execute(
                "INSERT INTO messages (cid, json) VALUES (?, ?)",
                (state["cid"], self.adapter.dump_json([request, reply])),
            )
        if self.mode == "cold":
            connection.close()


class LangChain(Candidate):
    """LangChain: ``SQLChatMessageHistory`` in SQLite (WAL, synchronous=FULL)."""

    def __init__(self, path: Path, base: list[Any], provider: str, mode: str) -> None:
        self.path = path
        self.base = base
        self.provider = provider
        self.mode = mode
        if provider == "anthropic":
            from langchain_anthropic import ChatAnthropic

            self.model = ChatAnthropic(model="claude-sonnet-4-5", api_key="x")  # type: ignore[call-arg]

    def _history(self, cid: str) -> Any:
        from stores_peers import _langchain_history

        return _langchain_history(self.path, cid)

    def setup(self) -> Any:
        cid = f"lc-{next(_ids)}"
        history = self._history(cid)
        history.add_messages(self.base)
        state: dict[str, Any] = {"cid": cid}
        if self.mode == "warm":
            state["history"] = history
            state["messages"] = history.messages
        self.step(state, self.before(state))
        return state

    def step(self, state: Any, prepared: Any) -> None:
        from langchain_core.messages import HumanMessage
        from langchain_core.messages import convert_to_messages
        from langchain_core.messages import convert_to_openai_messages

        if self.mode == "cold":
            history = self._history(state["cid"])
            messages = history.messages
        else:
            history = state["history"]
            messages = state["messages"]
        human = HumanMessage(USER_TEXT)
        messages.append(human)
        if self.provider == "openai_chat":
            convert_to_openai_messages(messages)
            reply = convert_to_messages([prepared["choices"][0]["message"]])[0]
        else:
            from anthropic.types import Message
            from langchain_anthropic.chat_models import _format_messages

            _format_messages(messages, model="claude-sonnet-4-5")
            reply = self.model._format_output(Message.model_validate(prepared)).generations[0]
            reply = reply.message
        messages.append(reply)
        history.add_messages([human, reply])
        if self.mode == "cold":
            history.engine.dispose()


class OpenAIAgents(Candidate):
    """The OpenAI Agents SDK: ``SQLiteSession`` and its Chat Completions converter."""

    def __init__(self, path: Path, base: list[dict[str, Any]], provider: str, mode: str) -> None:
        self.path = path
        self.base = base
        self.provider = provider
        self.mode = mode
        self.loop = asyncio.new_event_loop()

    def setup(self) -> Any:
        from agents.memory import SQLiteSession

        cid = f"oa-{next(_ids)}"
        session = SQLiteSession(cid, self.path)
        self.loop.run_until_complete(session.add_items(self.base))
        state: dict[str, Any] = {"cid": cid, "session": session}
        if self.mode == "warm":
            state["items"] = self.loop.run_until_complete(session.get_items())
        self.step(state, self.before(state))
        return state

    def step(self, state: Any, prepared: Any) -> None:
        from agents.memory import SQLiteSession
        from agents.models.chatcmpl_converter import Converter
        from openai.types.chat import ChatCompletionMessage

        if self.mode == "cold":
            session = SQLiteSession(state["cid"], self.path)
            items = self.loop.run_until_complete(session.get_items())
        else:
            session = state["session"]
            items = state["items"]
        user = {"role": "user", "content": USER_TEXT}
        items.append(user)
        Converter.items_to_messages(items)
        message = ChatCompletionMessage.model_validate(prepared["choices"][0]["message"])
        output = [
            item.model_dump(exclude_unset=True)
            for item in Converter.message_to_output_items(message)
        ]
        items.extend(output)
        self.loop.run_until_complete(session.add_items([user, *output]))
        if self.mode == "cold":
            session.close()

    def close(self, state: Any) -> None:
        state["session"].close()


# ---------------------------------------------------------------------------------------------
# Sampling


def sampler(candidate: Candidate, size: int, min_time: float) -> Callable[[], CpuSample]:
    """Samples of the candidate's step, in CPU time per step (``timing.py``'s clocks): the
    state is set up outside the timing (anew each sample up to ``COPY_UP_TO`` messages), then
    up to ``cap`` steps, each after its untimed ``before``."""
    copy = size <= COPY_UP_TO
    cap = max(1, size // 100 if copy else size // 1000)
    held: dict[str, Any] = {}

    def sample() -> CpuSample:
        if copy or "state" not in held:
            if "state" in held:
                candidate.close(held["state"])
            held["state"] = candidate.setup()
        state = held["state"]
        steps = held.get("steps", 1)
        cpu = wall = 0.0
        gc.collect()
        gc.disable()
        try:
            for _ in range(steps):
                prepared = candidate.before(state)
                watch = Stopwatch("cpu")
                candidate.step(state, prepared)
                taken = watch.both()
                cpu += taken.cpu
                wall += taken.wall
        finally:
            gc.enable()
        if "steps" not in held:  # the warm-up calibrates
            held["steps"] = max(1, min(cap, int(min_time / max(wall / steps, 1e-7))))
        return CpuSample(cpu / steps, wall / steps)

    sample.calls = lambda: held.get("steps", 1)  # type: ignore[attr-defined]
    sample.release = lambda: held and candidate.close(held["state"])  # type: ignore[attr-defined]
    return sample


MODES = ("warm", "cached", "cold", "today warm", "today cold")


def bench_step(
    report: Any,
    row_type: Any,
    sizes: list[int],
    samples: int,
    min_time: float,
    progress: Callable[[str], None],
) -> None:
    """Rows ``agent step (<provider>)`` at each size, threadline's warm step as the subject
    and every other mode and peer beside it; the targets of issue 39 (see ``check_targets``)."""
    rows: dict[tuple[str, int], Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            spec = data.conversation(size)
            base = data.to_threadline(spec)
            peers_here = size <= PEER_SIZES
            if peers_here:
                from stores_peers import _items

                pai = data.to_pydantic_ai(spec)
                lc = data.to_langchain(spec)
                items = _items(base)
            for provider in PROVIDERS:
                progress(f"step: {provider} at {size:,} messages")
                path = Path(tmp) / f"step-{size}-{provider}"
                candidates: dict[str, Candidate] = {
                    mode: Threadline(path.with_suffix(".threadline.db"), base, provider, mode)
                    for mode in MODES
                }
                if peers_here:
                    for mode in ("warm", "cold"):
                        candidates[f"pydantic-ai {mode}"] = PydanticAI(
                            path.with_suffix(".pydantic_ai.db"), pai, provider, mode
                        )
                        candidates[f"langchain {mode}"] = LangChain(
                            path.with_suffix(".langchain.db"), lc, provider, mode
                        )
                        if provider == "openai_chat":
                            candidates[f"openai-agents {mode}"] = OpenAIAgents(
                                path.with_suffix(".agents.db"), items, provider, mode
                            )
                samplers = {name: sampler(c, size, min_time) for name, c in candidates.items()}
                stats = measure(dict(samplers), samples)
                for s in samplers.values():
                    s.release()  # type: ignore[attr-defined]
                for c in candidates.values():
                    if isinstance(c, Threadline):
                        c.store.close()
                    elif isinstance(c, PydanticAI):
                        c.connection.close()
                        c.loop.close()
                    elif isinstance(c, OpenAIAgents):
                        c.loop.close()
                row = row_type(
                    f"agent step ({provider})",
                    size,
                    "warm",
                    stats,
                    peers=[name for name in stats if name != "warm"],
                    note="threadline warm (History.encode); the others ÷ it; CPU time per step",
                )
                report.rows.append(row)
                rows[(provider, size)] = row
    check_targets(report, rows)


def check_targets(report: Any, rows: dict[tuple[str, int], Any]) -> None:
    """Issue 39's targets, per provider, on the rows measured side by side."""
    for (provider, size), row in sorted(rows.items()):
        s = row.stats
        label = f"step ({provider})"
        if size == 10_000:
            report.compare(f"{label} warm ÷ today warm", size, s["warm"], s["today warm"], "≤ 0.1")
            if "openai-agents warm" in s:
                report.compare(
                    f"{label} warm ÷ openai-agents warm", size, s["warm"], s["openai-agents warm"],
                    "≤ 0.2",
                )  # fmt: skip
        report.compare(f"{label} cached ÷ warm", size, s["cached"], s["warm"], "≤ 2")
        report.compare(f"{label} cold ÷ today cold", size, s["cold"], s["today cold"], "≤ 1")
        for peer in ("pydantic-ai", "langchain"):
            if f"{peer} cold" in s:
                report.compare(
                    f"{label} cold ÷ {peer} cold", size, s["cold"], s[f"{peer} cold"], "< 1"
                )
    for provider in PROVIDERS:
        small, large = rows.get((provider, 1_000)), rows.get((provider, 100_000))
        if small is not None and large is not None:
            report.compare(
                f"step ({provider}) warm at 100,000 ÷ at 1,000",
                100_000,
                large.stats["warm"],
                small.stats["warm"],
                "≤ 3",
            )
