"""[`Usage`][threadline.Usage]: the tokens a model call used, with one meaning for every provider.

Providers count differently: Anthropic's and Bedrock's ``input_tokens`` leave out the tokens
read from or written to the prompt cache, OpenAI's, Gemini's and Mistral's include the tokens
read; Gemini reports its thinking beside the answer, OpenAI inside it. A [`Usage`][threadline.Usage]
says the same thing whichever provider reported it:

- ``input_tokens`` counts **every** input token, cache reads and cache writes included;
- ``output_tokens`` counts every generated token, reasoning included;
- ``cache_read_tokens`` and ``cache_write_tokens`` are the parts of ``input_tokens`` read from
  and written to the prompt cache; ``reasoning_tokens`` the part of ``output_tokens`` spent on
  reasoning (a provider that does not report one leaves it 0).

``decode_response`` writes it to the assistant message as JSON in ``metadata["usage"]``
(see [`Usage.to_dict`][threadline.usage.Usage.to_dict]), beside the provider's own usage
object under ``metadata["<provider>.usage"]``;
[`Message.usage`][threadline.messages.Message.usage] reads it back and
[`History.usage`][threadline.history.History.usage] sums a history. The table of which
provider field feeds which count is in the docs ("Usage").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from threadline.errors import ErrorDetail
from threadline.errors import ValidationError

__all__ = ["Usage"]

_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token counts of one model call (or, added up, of many), normalised across providers.

    Frozen; ``a + b`` adds every count, and ``sum(usages, Usage())`` (or ``sum(usages)``) adds
    many. Equal counts compare equal whichever provider reported them.

    Raises:
        threadline.ValidationError: a count is not a non-negative ``int``, naming it.
    """

    input_tokens: int = 0
    """Every input token: uncached, read from the cache and written to it."""
    output_tokens: int = 0
    """Every generated token, reasoning included."""
    cache_read_tokens: int = 0
    """The input tokens read from the prompt cache (part of ``input_tokens``)."""
    cache_write_tokens: int = 0
    """The input tokens written to the prompt cache (part of ``input_tokens``)."""
    reasoning_tokens: int = 0
    """The output tokens spent on reasoning (part of ``output_tokens``)."""

    def __post_init__(self) -> None:
        for name in _FIELDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                shown = "a negative number" if isinstance(value, int) else type(value).__name__
                detail = ErrorDetail(
                    name, f"expected a token count (a non-negative int), got {shown}", "count"
                )
                raise ValidationError(f"invalid Usage: {detail}", [detail])

    @property
    def total_tokens(self) -> int:
        """``input_tokens + output_tokens``: every token of the call, counted once."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )

    def __radd__(self, other: object) -> Usage:
        # sum() starts from the int 0
        if type(other) is int and other == 0:
            return self
        return NotImplemented

    def to_dict(self) -> dict[str, int]:
        """The counts as the JSON object ``metadata["usage"]`` holds: all five keys, always."""
        return {name: getattr(self, name) for name in _FIELDS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Usage:
        """The [`Usage`][threadline.Usage] of a JSON object of its counts (a missing count is 0).

        Raises:
            threadline.ValidationError: a key is not one of the five counts, or a count is
                not a non-negative ``int``.
        """
        unknown = sorted(str(key) for key in data if key not in _FIELDS)
        if unknown:
            detail = ErrorDetail(
                unknown[0], f"not a Usage count; the counts are {', '.join(_FIELDS)}", "extra"
            )
            raise ValidationError(f"invalid Usage: {detail}", [detail])
        return cls(**data)
