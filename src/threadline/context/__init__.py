"""Context management: keep long conversations within a model's context, without breaking them.

- Windows: [`trim_messages`][threadline.trim_messages] (and ``History(max_messages=...,
  max_tokens=...)``) drop the oldest whole units until a budget fits
  ([`threadline.context.window`][]).
- [`Plugin`][threadline.Plugin]: the hooks through which the rest plug into a [`History`][]
  ([`threadline.context.base`][]).
- [`ToolResultMasking`][threadline.ToolResultMasking]: older tool results become a retrievable
  marker at read time ([`threadline.context.masking`][]).
- [`RollingSummary`][threadline.RollingSummary]: the oldest turns are replaced with a summary
  written by your model ([`threadline.context.summary`][]).
"""

from threadline.context.base import Plugin
from threadline.context.base import ToolDefinition
from threadline.context.masking import ToolResultMasking
from threadline.context.summary import RollingSummary
from threadline.context.summary import Summarizer
from threadline.context.summary import is_summary
from threadline.context.window import Trimmed
from threadline.context.window import trim_messages

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
