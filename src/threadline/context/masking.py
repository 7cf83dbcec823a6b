"""Tool-result masking: hide stale tool output from the model, keep it retrievable.

In a long agent run most of the context is old tool output (files read, pages fetched, query
results) that the model needed once. [`ToolResultMasking`][] is a read-time
[`Plugin`][threadline.Plugin]: when a history is prepared for a model it keeps the ``keep_recent``
newest tool results verbatim and replaces each older one with a short marker naming its call id.
Only the copy sent to the model changes: the stored history, its events and what a store persists
keep every result whole, [`History.get_tool_result`][] returns the original, and
[`retrieve_tool`][threadline.context.masking.ToolResultMasking.retrieve_tool] is a ready tool the
model can call to read a hidden result back.

A masked result stays a tool result for the same call (same ``call_id``, ``name`` and
``is_error``), so pairing is untouched and the history stays valid for every provider; its
``metadata["threadline.masked"]`` is ``True`` and its content is the marker text.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Final

from threadline.context.base import Plugin
from threadline.context.base import ToolDefinition
from threadline.errors import PluginError
from threadline.messages import FilePart
from threadline.messages import Message
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.tokens import result_tokens

if TYPE_CHECKING:
    from threadline.history import History

__all__ = ["MASKED_KEY", "RETRIEVE_TOOL_NAME", "ToolResultMasking"]

MASKED_KEY: Final = "threadline.masked"
"""The part metadata key set to ``True`` on a masked tool result."""

RETRIEVE_TOOL_NAME: Final = "retrieve_tool_result"
"""The name of the tool [`ToolResultMasking.retrieve_tool`][] defines."""

_RETRIEVE_DESCRIPTION: Final = (
    "Read the full result of an earlier tool call whose result was hidden to save context. "
    "Pass the call_id named in the placeholder."
)
_RETRIEVE_PARAMETERS: Final = {
    "type": "object",
    "properties": {
        "call_id": {
            "type": "string",
            "description": "The call_id of the tool call whose result to read.",
        }
    },
    "required": ["call_id"],
    "additionalProperties": False,
}


class ToolResultMasking(Plugin):
    """Show the model only the newest tool results; older ones become a retrievable marker.

    Results are ranked newest first; those that are *eligible* (allowed by ``include`` /
    ``exclude`` and at least ``min_tokens`` big) take the ``keep_recent`` slots and are shown
    verbatim; every older eligible result is masked. Results that are not eligible are always
    shown and do not use a slot.

    Args:
        keep_recent: how many of the newest eligible results to show verbatim (0 masks all).
        include: mask only results of these tools (by name).
        exclude: never mask results of these tools (by name). Give ``include`` or ``exclude``,
            not both.
        min_tokens: never mask results smaller than this many tokens (estimated as
            [`threadline.tokens.result_tokens`][] does); a marker would save nothing.

    Raises:
        ValueError: both ``include`` and ``exclude`` were given, or a number is negative.
        TypeError: a number is not an ``int``, or a tool name is not a ``str``.
    """

    def __init__(
        self,
        keep_recent: int = 2,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        min_tokens: int = 0,
    ) -> None:
        if include is not None and exclude is not None:
            raise ValueError(
                "ToolResultMasking takes include (mask only these tools) or exclude (never mask "
                "these tools), not both"
            )
        self._keep_recent = _non_negative("keep_recent", keep_recent)
        self._min_tokens = _non_negative("min_tokens", min_tokens)
        self._include = None if include is None else _names("include", include)
        self._exclude = None if exclude is None else _names("exclude", exclude)
        self._histories: weakref.WeakSet[History] = weakref.WeakSet()

    @property
    def keep_recent(self) -> int:
        """How many of the newest eligible results are shown verbatim."""
        return self._keep_recent

    @property
    def include(self) -> frozenset[str] | None:
        """Only results of these tools are masked (``None``: any tool)."""
        return self._include

    @property
    def exclude(self) -> frozenset[str] | None:
        """Results of these tools are never masked (``None``: no exception)."""
        return self._exclude

    @property
    def min_tokens(self) -> int:
        """Results smaller than this are never masked."""
        return self._min_tokens

    def __repr__(self) -> str:
        options = [f"keep_recent={self._keep_recent}"]
        if self._include is not None:
            options.append(f"include={sorted(self._include)}")
        if self._exclude is not None:
            options.append(f"exclude={sorted(self._exclude)}")
        if self._min_tokens:
            options.append(f"min_tokens={self._min_tokens}")
        return f"ToolResultMasking({', '.join(options)})"

    # -- masking ----------------------------------------------------------------------------

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """``messages`` with the older eligible tool results masked (a new list).

        What [`transform`][] does, usable without a history. Messages without a masked
        result are the same objects; the input is never changed.

        Args:
            messages: the history, oldest first.
        """
        names = _call_names(messages)
        slots = self._keep_recent
        masked: dict[int, dict[int, ToolResultPart]] = {}
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.role != "tool":
                continue
            parts = message.parts
            for position in range(len(parts) - 1, -1, -1):
                part = parts[position]
                if not isinstance(part, ToolResultPart):
                    continue
                name = names.get(part.call_id, part.name)
                tokens = result_tokens(part)
                if not self._eligible(name, tokens):
                    continue
                if slots:
                    slots -= 1
                    continue
                masked.setdefault(index, {})[position] = self._masked(part, name, tokens)
        if not masked:
            return list(messages)
        out = list(messages)
        for index, replacements in masked.items():
            message = out[index]
            parts = tuple(replacements.get(i, part) for i, part in enumerate(message.parts))
            out[index] = message.model_copy(update={"parts": parts})
        return out

    def transform(self, history: History, messages: list[Message]) -> list[Message]:
        """The read-time hook: [`apply`][] to what the model is about to see."""
        return self.apply(messages)

    def marker(self, call_id: str, name: str | None, tokens: int) -> str:
        """The text that replaces a masked result; override to word it differently.

        Args:
            call_id: the id of the call the result answers.
            name: the tool's name, when known.
            tokens: the estimated size of the hidden result.
        """
        source = f"{name} " if name else ""
        return (
            f"[{source}result hidden to save context (about {tokens} tokens); call "
            f"{RETRIEVE_TOOL_NAME} with call_id {call_id!r} to read it]"
        )

    def _eligible(self, name: str | None, tokens: int) -> bool:
        if tokens < self._min_tokens:
            return False
        if self._include is not None:
            return name in self._include
        return self._exclude is None or name not in self._exclude

    def _masked(self, part: ToolResultPart, name: str | None, tokens: int) -> ToolResultPart:
        return ToolResultPart(
            call_id=part.call_id,
            content=self.marker(part.call_id, name, tokens),
            name=part.name,
            is_error=part.is_error,
            metadata={**part.metadata, MASKED_KEY: True},
        )

    # -- retrieval --------------------------------------------------------------------------

    def on_registered(self, history: History) -> None:
        """Remember ``history`` (weakly), for [`retrieve_tool`][]."""
        self._histories.add(history)

    @property
    def retrieve_tool(self) -> ToolDefinition:
        """A tool the model can call to read a masked result, bound to this plugin's history.

        Its ``function(call_id=...)`` returns the original result's text (with a note for any
        file it holds), or a sentence saying no such result exists.

        Raises:
            threadline.PluginError: this masking is registered with no history, or with
                several (use [`retrieve_tool_for`][]).
        """
        histories = list(self._histories)
        if len(histories) != 1:
            raise PluginError(
                f"{self!r} is registered with {len(histories)} histories, so retrieve_tool "
                "does not know which to read; use retrieve_tool_for(history)"
            )
        return self.retrieve_tool_for(histories[0])

    def retrieve_tool_for(self, history: History) -> ToolDefinition:
        """The [`retrieve_tool`][] definition, reading from ``history``.

        Args:
            history: the history whose results the tool returns.
        """

        def retrieve_tool_result(call_id: str) -> str:
            if not isinstance(call_id, str):
                raise TypeError(f"call_id must be a str, not {type(call_id).__name__}")
            part = history.get_tool_result(call_id)
            if part is None:
                return f"No tool result with call_id {call_id!r} is in this conversation."
            return _readable(part)

        return ToolDefinition(
            name=RETRIEVE_TOOL_NAME,
            description=_RETRIEVE_DESCRIPTION,
            parameters=_RETRIEVE_PARAMETERS,
            function=retrieve_tool_result,
        )

    def __getstate__(self) -> dict[str, Any]:
        # The histories are the registering process's; a history unpickled with this plugin
        # registers it again.
        state = dict(self.__dict__)
        del state["_histories"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._histories = weakref.WeakSet()


def _call_names(messages: Sequence[Message]) -> dict[str, str]:
    """Tool call id -> tool name, from the calls in ``messages``."""
    names: dict[str, str] = {}
    for message in messages:
        if message.role == "assistant":
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    names[part.id] = part.name
    return names


def _readable(part: ToolResultPart) -> str:
    text = part.text
    if isinstance(part.content, str):
        return text
    files = [item for item in part.content if isinstance(item, FilePart)]
    if files:
        kinds = ", ".join(item.media_type for item in files)
        text += f"\n[{len(files)} file(s) not shown: {kinds}]"
    return text


def _non_negative(name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be 0 or more, got {value}")
    return value


def _names(name: str, value: Iterable[str]) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset((value,))
    names = frozenset(value)
    for item in names:
        if not isinstance(item, str):
            raise TypeError(f"{name} must hold tool names (str), not {type(item).__name__}")
    return names
