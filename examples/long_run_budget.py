"""A long agent run kept within a context budget, with no network.

A scripted "research agent" works through 60 tasks. Each task is a user request, a tool call
that reads a (large) document, the tool's result and a short answer. Left alone the history
would grow to hundreds of thousands of tokens. Three things keep it in budget:

1. ``ToolResultMasking`` hides every tool result but the newest two from the model (the stored
   history keeps them, and ``retrieve_tool`` gives the model a way to read one back);
2. ``RollingSummary`` folds the oldest turns into one summary whenever the history passes
   6,000 tokens (the "model" writing it is a plain function here);
3. a safety window (``max_tokens``) that only acts if the summary falls behind.

The loop prints what happened: how big the history got, how many summaries were written, how
many results the model saw masked, and that every request stayed valid for a provider.

Run it with ``python examples/long_run_budget.py``.
"""

from __future__ import annotations

import threadline as tl
from threadline.context import RollingSummary
from threadline.context import ToolResultMasking
from threadline.context import is_summary
from threadline.context.masking import MASKED_KEY
from threadline.integrity import prepare_messages
from threadline.tokens import estimate_tokens

BUDGET = 6_000  # tokens the model may see
WINDOW = 12_000  # the hard cap, above the summary's trigger so the summary acts first


def read_document(n: int) -> str:
    """A tool returning a big result, as tools that read files or web pages do."""
    return f"Document {n}. " + " ".join(f"fact-{n}-{k}" for k in range(300))


def summarize(messages: list[tl.Message], previous: str | None) -> str:
    """Stands in for a model call that summarizes the oldest turns."""
    tasks = [m.text for m in messages if m.role == "user"]
    done = f"Done so far: {len(tasks)} more tasks ({tasks[0]} ... {tasks[-1]})." if tasks else ""
    return f"{previous}\n{done}" if previous else done


def fake_model(messages: list[tl.Message], task: int) -> tl.Message:
    """Stands in for a provider call: first ask for the document, then answer."""
    if messages[-1].role == "user":
        return tl.assistant_message(
            tl.tool_call_part(f"call_{task}", "read_document", {"n": task}), id=f"call_msg_{task}"
        )
    return tl.assistant_message(f"Task {task} done: found 300 facts.")


def main() -> None:
    masking = ToolResultMasking(keep_recent=2)
    summary = RollingSummary(
        summarize, auto_reduce_when=lambda h: h.total_tokens > BUDGET, max_tokens=BUDGET // 2
    )
    history = tl.History(
        [tl.system_message("You are a research agent. Be concise.")],
        max_tokens=WINDOW,
        plugins=[masking, summary],
    )
    trims = 0

    def count_trims(event: tl.HistoryEvent) -> None:
        nonlocal trims
        trims += event.kind == "trim"

    history.subscribe(count_trims)

    largest_request = 0
    masked_seen = 0
    for task in range(60):
        history.append(tl.user_message(f"Task {task}: read document {task} and report."))
        for _ in range(2):  # a tool call, then the answer
            request = history.messages_for_model("strict")  # what a provider would receive
            largest_request = max(largest_request, sum(map(estimate_tokens, request)))
            masked_seen = max(
                masked_seen,
                sum(1 for m in request for p in m.tool_results if p.metadata.get(MASKED_KEY)),
            )
            reply = fake_model(request, task)
            history.append(reply)
            for call in reply.tool_calls:
                result = read_document(call.arguments["n"])
                history.append(tl.tool_message(tl.tool_result_part(call.id, result)))

    summaries = [m for m in history if is_summary(m)]
    print(f"tasks run:                 60 ({len(history)} messages held at the end)")
    print(f"history size now:          {history.total_tokens} tokens (summarizes above {BUDGET})")
    print(f"largest request sent:      {largest_request} tokens")
    print(f"window trims:              {trims} (the summary kept ahead of the {WINDOW} cap)")
    print(f"summary messages held:     {len(summaries)}")
    print(f"most results masked in one request: {masked_seen}")
    oldest_kept = next(p.call_id for m in history for p in m.tool_results)
    text = masking.retrieve_tool(call_id=oldest_kept)
    print(f"retrieve_tool({oldest_kept!r}) gives back {len(text)} characters: {text[:40]}...")
    print("summary text:")
    for line in summaries[0].text.splitlines()[-3:]:
        print(f"  {line}")
    prepare_messages(history.messages_for_model(), "strict")
    assert len(summaries) == 1
    assert largest_request <= WINDOW


if __name__ == "__main__":
    main()
