"""Context management: keep long conversations within a model's context, without breaking them.

- Windows: :func:`trim_messages` (and ``History(max_messages=..., max_tokens=...)``) drop the
  oldest whole units until a budget fits (:mod:`threadline.context.window`).
- :class:`Plugin`: the hooks through which the rest plug into a :class:`~threadline.History`
  (:mod:`threadline.context.base`).
- :class:`ToolResultMasking`: older tool results become a retrievable marker at read time
  (:mod:`threadline.context.masking`).
- :class:`RollingSummary`: the oldest turns are replaced with a summary written by your model
  (:mod:`threadline.context.summary`).
"""

from threadline.context.base import Plugin, ToolDefinition
from threadline.context.masking import ToolResultMasking
from threadline.context.summary import RollingSummary, Summarizer, is_summary
from threadline.context.window import Trimmed, trim_messages

__all__ = [
    "Plugin",
    "RollingSummary",
    "Summarizer",
    "ToolDefinition",
    "ToolResultMasking",
    "Trimmed",
    "is_summary",
    "trim_messages",
]
