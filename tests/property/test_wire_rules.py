"""The rules judge over generated histories, for all six wire formats.

A history from ``agent_histories()`` (``tests.strategies.conversations()`` with the defects
agents leave: lost and misplaced results, internal messages, hostile ids, blank text...) gets
the shapes section 9's rules are about, each at random: tool names outside a provider's
pattern, files whose names clash or hold characters Bedrock refuses, a system message right
after a tool result, and a window that starts anywhere (so an assistant turn can come first).
It is encoded for each format with each ``encode`` option, and every rule of the rules judge
(:mod:`tests.conformance._rules`) is checked on the payload; Bedrock's request is the payload
with the ``toolConfig`` a caller declares.

A rule of ``KNOWN_VIOLATIONS`` (today's encoders break it; each has a strict-xfail reproducer)
is tolerated and counted in ``TOLERATED``; any other violation fails.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conformance import _rules
from tests.conformance._histories import agent_histories
from tests.conformance._histories import encode_options
from threadline import FilePart
from threadline import Message
from threadline import TextPart
from threadline import ToolCallPart
from threadline import ToolResultPart
from threadline.codecs import get_codec

HOSTILE_TOOL_NAMES = ("files.read", "get weather", "t" * 70, "ns:lookup", "tool/v2", "météo")
FILE_NAMES = (None, "report.pdf", "report", "Q3 (draft)", "notes  v2", "data_2026.csv")


def _renamed(part: Any, mapping: Mapping[str, str]) -> Any:
    if isinstance(part, (ToolCallPart, ToolResultPart)) and part.name is not None:
        return dataclasses.replace(part, name=mapping.get(part.name, part.name))
    return part


def _rename_tools(messages: list[Message], mapping: Mapping[str, str]) -> list[Message]:
    """``messages`` with each tool renamed by ``mapping``, in its calls and its results."""
    return [
        message.model_copy(
            update={"parts": tuple(_renamed(part, mapping) for part in message.parts)}
        )
        for message in messages
    ]


def _rename_files(part: Any, name: str | None) -> Any:
    if isinstance(part, FilePart):
        return dataclasses.replace(part, filename=name)
    if isinstance(part, ToolResultPart) and not isinstance(part.content, str):
        content = tuple(_rename_files(inner, name) for inner in part.content)
        return dataclasses.replace(part, content=content)
    return part


def _whole(messages: list[Message]) -> bool:
    """Whether every result in ``messages`` answers a call in ``messages``."""
    calls = {call.id for message in messages for call in message.tool_calls}
    return all(result.call_id in calls for message in messages for result in message.tool_results)


@st.composite
def rule_histories(draw: st.DrawFn) -> list[Message]:
    """An agent history with, at random, each shape a section 9 rule is about."""
    messages = draw(agent_histories(max_turns=3))
    names = sorted({call.name for message in messages for call in message.tool_calls})
    if draw(st.booleans()):
        mapping = {name: draw(st.sampled_from(HOSTILE_TOOL_NAMES)) for name in names}
        messages = _rename_tools(messages, mapping)
    if draw(st.booleans()):
        filename = draw(st.sampled_from(FILE_NAMES))
        messages = [
            message.model_copy(
                update={"parts": tuple(_rename_files(part, filename) for part in message.parts)}
            )
            for message in messages
        ]
    tools = [index for index, message in enumerate(messages) if message.role == "tool"]
    if draw(st.booleans()) and tools:
        at = draw(st.sampled_from(tools)) + 1
        note = Message(id="msg_rule_system", role="system", parts=(TextPart(text="Be brief."),))
        messages.insert(at, note)
    starts = [index for index in range(len(messages)) if _whole(messages[index:])]
    if draw(st.booleans()) and starts:  # a window that cuts no call from its result
        messages = messages[draw(st.sampled_from(starts)) :]
    return messages


def request(fmt: str, payload: Mapping[str, Any]) -> Mapping[str, Any]:
    """The request a caller sends: for Bedrock, with a ``toolConfig`` declaring the tools the
    history calls (Converse needs one whenever tool blocks are present)."""
    if fmt != "bedrock":
        return payload
    names = {
        block["toolUse"]["name"]
        for message in payload["messages"]
        for block in message["content"]
        if "toolUse" in block
    }
    tools = [{"toolSpec": {"name": name, "inputSchema": {"json": {}}}} for name in sorted(names)]
    return {**payload, "toolConfig": {"tools": tools}}


@pytest.mark.parametrize("fmt", _rules.FORMATS)
@given(history=rule_histories(), kw=encode_options)
def test_every_rule_holds_for_generated_histories(
    fmt: str, history: list[Message], kw: dict[str, Any]
) -> None:
    payload = get_codec(fmt).encode(history, **kw)
    scope: _rules.Scope = "request" if fmt == "bedrock" else "fragment"
    _rules.judge_rules(fmt, request(fmt, payload), scope=scope)
