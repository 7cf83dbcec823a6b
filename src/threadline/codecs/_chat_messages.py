"""The message list of the Chat Completions shape, written once for the formats that share it
(OpenAI Chat and its dialects, Cohere v2): each format gives its writers for an assistant
message, a tool result and a file; the walk, the order and the files after tool results are
here.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from typing_extensions import assert_never

from threadline.codecs._policies import NOT_IN_USER_MESSAGES
from threadline.codecs._policies import Placeholder
from threadline.codecs._policies import Resolved
from threadline.codecs._policies import carried
from threadline.codecs._prepared import PreparedHistory
from threadline.messages import FilePart
from threadline.messages import TextPart
from threadline.messages import ToolResultPart

__all__ = ["chat_messages"]

AssistantWriter = Callable[[Sequence[Resolved]], "dict[str, Any] | None"]
"""Writes an assistant message from its resolved parts (``None``: nothing to send)."""
ToolWriter = Callable[[ToolResultPart, "list[dict[str, Any]]"], "dict[str, Any]"]
"""Writes one tool message; files the message cannot hold go to the attachment list given."""
FileWriter = Callable[[FilePart], "dict[str, Any] | None"]
"""Writes a file as a content item (``None``: the format cannot take it)."""


def chat_messages(
    history: PreparedHistory,
    system: str | None,
    *,
    assistant: AssistantWriter,
    tool: ToolWriter,
    file_block: FileWriter,
) -> list[dict[str, Any]]:
    """The ``messages`` list: ``system`` first (when given), then each message in order: one
    tool message per result, the files those results could not hold in one user message
    after them, user and system messages of text and files, assistant messages as
    ``assistant`` writes them; internal messages never reach a model (even with
    ``integrity="off"``)."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    attachments: list[dict[str, Any]] = []
    for index, message in enumerate(history.messages):
        role = message.role
        if role == "tool":  # the plan holds the parts of a message with nothing to resolve
            for part in history.parts(index):
                if isinstance(part, ToolResultPart):
                    out.append(tool(part, attachments))
            continue
        if attachments:
            out.append({"role": "user", "content": attachments})
            attachments = []
        if role == "assistant":
            item = assistant(history.parts(index))
        elif role == "user" or role == "system":
            item = _user_or_system_message(history, index, file_block)
        else:
            continue
        if item is not None:
            out.append(item)
    if attachments:
        out.append({"role": "user", "content": attachments})
    return out


def _user_or_system_message(
    history: PreparedHistory, index: int, file_block: FileWriter
) -> dict[str, Any] | None:
    message = history.messages[index]
    parts = message.parts
    if len(parts) == 1 and type(parts[0]) is TextPart:
        return {"role": message.role, "content": parts[0].text}
    content: list[dict[str, Any]] = []
    for part in history.parts(index):
        if isinstance(part, (Placeholder, TextPart)):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, FilePart):
            content.append(carried(file_block(part)))
        elif isinstance(part, NOT_IN_USER_MESSAGES):
            raise AssertionError(f"a {message.role} message holds no {part.type} part")
        else:
            assert_never(part)
    if not content:
        return None
    return {"role": message.role, "content": content}
