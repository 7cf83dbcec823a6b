"""Token counting: the [`TokenCounter`][] protocol and the default estimator.

A window (``History(max_tokens=...)``, [`trim_messages`][]) and
[`History.total_tokens`][] need the size of each message in
tokens. Exact counts depend on the provider's tokenizer, which threadline does not ship (it
would pull in a heavy dependency and still be wrong for every other provider), so the default
is a cheap, deterministic estimate, [`estimate_tokens`][]:

- 4 per message (role markers and separators);
- plus ``ceil(characters / 4)`` over the message's text, reasoning text, tool-call arguments
  (compact JSON, or the raw text of arguments that were not a JSON object) and tool-result
  text. The characters of all those parts are summed first and rounded up once per message, so
  splitting a text into several parts does not change the estimate;
- plus 256 per file (image, document, audio...), also inside tool results.

Hook state, provider-run tool parts, ids, names and metadata count zero: hooks never reach a
model, and the rest is either small or priced differently by every provider.

Any callable from [`Message`][] to a non-negative ``int`` is a
[`TokenCounter`][]; pass one as ``History(token_counter=...)`` or
``trim_messages(..., counter=...)`` to count with a real tokenizer (``docs/context.md`` shows
one built on ``tiktoken``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final
from typing import Protocol

from typing_extensions import assert_never

from threadline._json import compact_text
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

__all__ = [
    "CHARS_PER_TOKEN",
    "FILE_TOKENS",
    "MESSAGE_TOKENS",
    "TokenCounter",
    "check_count",
    "checked_counter",
    "content_chars",
    "estimate_tokens",
    "measure",
    "result_tokens",
]

MESSAGE_TOKENS: Final = 4
"""What [`estimate_tokens`][] adds for every message, whatever it holds."""

CHARS_PER_TOKEN: Final = 4
"""How many characters of text [`estimate_tokens`][] counts as one token."""

FILE_TOKENS: Final = 256
"""What [`estimate_tokens`][] adds for every file part (image, document, audio...)."""


class TokenCounter(Protocol):
    """Counts the tokens one message costs in a model's context.

    Any callable taking a [`Message`][] and returning a non-negative ``int``
    qualifies: a function, a lambda, or an object with ``__call__``. It must be deterministic
    (a history counts each message once, when it arrives, and subtracts the same number when
    the message leaves) and should be quick: with a window it runs on every append.
    """

    def __call__(self, message: Message, /) -> int:
        """The number of tokens ``message`` costs."""
        ...


def tokens_from_measure(chars: int, files: int) -> int:
    """The default estimate for a message with ``chars`` characters and ``files`` file parts."""
    return MESSAGE_TOKENS + -(-chars // CHARS_PER_TOKEN) + FILE_TOKENS * files


def estimate_tokens(message: Message) -> int:
    """Estimate the tokens ``message`` costs: threadline's default [`TokenCounter`][].

    ``4 + ceil(characters / 4) + 256 * files``, where *characters* are those counted by
    [`content_chars`][] and *files* are the file parts, also those inside tool results.
    Deterministic and provider-neutral; a close enough guide for budgets, not a bill.

    Args:
        message: the message to measure.
    """
    return tokens_from_measure(*measure(message))


def content_chars(message: Message) -> int:
    """Characters of content in ``message``: what ``History.size`` adds up.

    Counted: text parts' text; reasoning parts' readable text (not signatures, encrypted
    state or summaries); tool calls' arguments as compact JSON (``{"city":"Paris"}``, non-ASCII
    kept as is), or the raw text for a call whose arguments were not a JSON object; tool
    results' text (a string result, or the text parts of a multi-part one). Files, hook state,
    provider-run tool parts, ids, names and metadata count zero.

    Args:
        message: the message to measure.
    """
    return measure(message)[0]


def result_tokens(part: ToolResultPart) -> int:
    """The default estimate for one tool result, without the per-message overhead.

    ``ceil(characters / 4) + 256 * files`` of the result's content (what
    [`ToolResultMasking`][] compares with ``min_tokens``).

    Args:
        part: the tool result to measure.
    """
    content = part.content
    if isinstance(content, str):
        return -(-len(content) // CHARS_PER_TOKEN)
    chars = 0
    files = 0
    for item in content:
        if isinstance(item, TextPart):
            chars += len(item.text)
        else:
            files += 1
    return -(-chars // CHARS_PER_TOKEN) + FILE_TOKENS * files


def checked_counter(counter: TokenCounter | None) -> Callable[[Message], int]:
    """``counter`` (or [`estimate_tokens`][] when ``None``), checked on every call.

    A custom counter's result must be a non-negative ``int``; anything else raises at once,
    naming the counter, instead of corrupting a running total.

    Raises:
        TypeError: ``counter`` is not callable.
    """
    if counter is None or counter is estimate_tokens:
        return estimate_tokens
    if not callable(counter):
        raise TypeError(f"a token counter must be callable, not {type(counter).__name__}")

    def count(message: Message) -> int:
        return check_count(counter(message), counter)

    return count


def check_count(tokens: object, counter: object) -> int:
    """``tokens`` when it is a non-negative ``int``; otherwise an error naming ``counter``.

    Raises:
        TypeError: ``tokens`` is not an ``int``.
        ValueError: ``tokens`` is negative.
    """
    if type(tokens) is int and tokens >= 0:
        return tokens
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        raise TypeError(
            f"token counter {counter!r} returned {type(tokens).__name__}; it must return an int"
        )
    if tokens < 0:
        raise ValueError(f"token counter {counter!r} returned {tokens}; counts cannot be negative")
    return int(tokens)


def measure(message: Message) -> tuple[int, int]:
    """``(characters, files)`` of ``message``: [`content_chars`][] and its file parts, one pass.

    Args:
        message: the message to measure.
    """
    chars = 0
    files = 0
    for part in message.parts:
        if isinstance(part, (TextPart, ReasoningPart)):
            chars += len(part.text)
        elif isinstance(part, ToolResultPart):
            content = part.content
            if isinstance(content, str):
                chars += len(content)
            else:
                for item in content:
                    if isinstance(item, TextPart):
                        chars += len(item.text)
                    else:
                        files += 1
        elif isinstance(part, ToolCallPart):
            chars += len(_arguments_text(part))
        elif isinstance(part, FilePart):
            files += 1
        elif isinstance(part, (HookPart, ProviderToolCallPart, ProviderToolResultPart)):
            pass  # count zero, as content_chars says: no model reads them as text
        else:
            assert_never(part)
    return chars, files


def _arguments_text(part: ToolCallPart) -> str:
    if part.raw_arguments is not None:
        return part.raw_arguments
    if not part.arguments:
        return "{}"
    return compact_text(part.arguments, keep=False)
