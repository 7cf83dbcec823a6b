"""Each wire format's usage object read as a [`Usage`][threadline.Usage]: which raw field feeds
which normalised count (the table in docs/usage.md says the same, with its sources).

``decode_response`` of every codec calls [`read_usage`][] with its ``Reader``, so a malformed
count is a ``CodecError`` naming its path. [`message_usage`][] reads a message's
``metadata["usage"]`` back: the normalised JSON that ``decode_response`` writes, or the
provider-shaped object older versions wrote there, read by the ``provider`` the message's
metadata names (``None`` when it names none, or the object cannot be read).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any
from typing import NoReturn
from typing import Protocol

from threadline.errors import CodecError
from threadline.usage import Usage

__all__ = ["message_usage", "read_usage", "total_usage"]

_COUNTS = frozenset(field.name for field in dataclasses.fields(Usage))


class CountReader(Protocol):
    """What the readers need of a codec's ``Reader``."""

    def optional_count(self, obj: Mapping[str, Any] | None, key: str, path: str) -> int | None: ...

    def fail(self, path: str, problem: str) -> NoReturn: ...


class _Counts:
    """The counts of one usage object, by key path; a missing or ``null`` count is 0."""

    __slots__ = ("_path", "_raw", "_reader")

    def __init__(self, raw: Mapping[str, Any], path: str, reader: CountReader) -> None:
        self._raw = raw
        self._path = path
        self._reader = reader

    def get(self, *keys: str) -> int | None:
        obj: Any = self._raw
        path = self._path
        for key in keys[:-1]:
            obj = obj.get(key)
            path = f"{path}.{key}" if path else key
            if obj is None:
                return None
            if not isinstance(obj, Mapping):
                self._reader.fail(path, "expected an object of token counts")
        return self._reader.optional_count(obj, keys[-1], path)

    def __call__(self, *keys: str) -> int:
        return self.get(*keys) or 0

    def first(self, *paths: tuple[str, ...]) -> int:
        """The first of several spellings of one count that is present."""
        for keys in paths:
            value = self.get(*keys)
            if value is not None:
                return value
        return 0


def _cache_beside_input(
    count: _Counts,
    input_key: str,
    output_key: str,
    cache_keys: tuple[str, str],
    reasoning_keys: tuple[str, ...] = (),
) -> Usage:
    """Usage of a format whose input count leaves out the cache (Anthropic, Bedrock): the
    input is the three together (``cache_keys``: the read and the written count)."""
    read, written = count(cache_keys[0]), count(cache_keys[1])
    return Usage(
        input_tokens=count(input_key) + read + written,
        output_tokens=count(output_key),
        cache_read_tokens=read,
        cache_write_tokens=written,
        reasoning_tokens=count(*reasoning_keys) if reasoning_keys else 0,
    )


def _anthropic(count: _Counts) -> Usage:
    cache = ("cache_read_input_tokens", "cache_creation_input_tokens")
    thinking = ("output_tokens_details", "thinking_tokens")
    return _cache_beside_input(count, "input_tokens", "output_tokens", cache, thinking)


def _openai(count: _Counts, input_key: str, output_key: str) -> Usage:
    """Usage of both OpenAI APIs, which differ only in names: the input count includes every
    prompt token, and ``<input>_details`` says which were cached."""
    input_details, output_details = f"{input_key}_details", f"{output_key}_details"
    return Usage(
        input_tokens=count(input_key),
        output_tokens=count(output_key),
        cache_read_tokens=count(input_details, "cached_tokens"),
        cache_write_tokens=count(input_details, "cache_write_tokens"),
        reasoning_tokens=count(output_details, "reasoning_tokens"),
    )


def _openai_chat(count: _Counts) -> Usage:
    return _openai(count, "prompt_tokens", "completion_tokens")


def _openai_responses(count: _Counts) -> Usage:
    return _openai(count, "input_tokens", "output_tokens")


def _gemini(count: _Counts) -> Usage:
    # REST JSON names (camelCase) or the SDK's dump (snake_case). promptTokenCount includes
    # the cached content but not the tool-use prompt; candidatesTokenCount leaves out the
    # thoughts (totalTokenCount is the sum of all four).
    def either(camel: str, snake: str) -> int:
        return count.first((camel,), (snake,))

    thoughts = either("thoughtsTokenCount", "thoughts_token_count")
    return Usage(
        input_tokens=either("promptTokenCount", "prompt_token_count")
        + either("toolUsePromptTokenCount", "tool_use_prompt_token_count"),
        output_tokens=either("candidatesTokenCount", "candidates_token_count") + thoughts,
        cache_read_tokens=either("cachedContentTokenCount", "cached_content_token_count"),
        reasoning_tokens=thoughts,
    )


def _mistral(count: _Counts) -> Usage:
    # prompt_tokens counts every prompt token; cached ones are reported under three spellings.
    return Usage(
        input_tokens=count("prompt_tokens"),
        output_tokens=count("completion_tokens"),
        cache_read_tokens=count.first(
            ("prompt_tokens_details", "cached_tokens"),
            ("num_cached_tokens",),
            ("prompt_token_details", "cached_tokens"),
        ),
    )


def _ollama(count: _Counts) -> Usage:
    # /api/chat reports its counts at the top of the response, beside the durations.
    return Usage(input_tokens=count("prompt_eval_count"), output_tokens=count("eval_count"))


def _bedrock(count: _Counts) -> Usage:
    cache = ("cacheReadInputTokens", "cacheWriteInputTokens")
    return _cache_beside_input(count, "inputTokens", "outputTokens", cache)


_LEGACY_FORMATS = frozenset(
    {"anthropic", "bedrock", "gemini", "mistral", "openai_chat", "openai_responses"}
)
"""The formats whose provider-shaped usage objects threadline wrote before `Usage`: stored
history only ever holds these (a format added since writes the normalised JSON)."""


def read_usage(
    format_name: str, raw: Mapping[str, Any] | None, reader: CountReader, path: str = "usage"
) -> Usage | None:
    """The [`Usage`][threadline.Usage] of the usage object ``raw`` of the wire format
    ``format_name`` (a codec name), its counts read with ``reader`` (which raises on a count
    that is not a non-negative integer, naming its path under ``path``); ``None`` when
    ``raw`` is."""
    if raw is None:
        return None
    from threadline.codecs._formats import DESCRIPTORS  # the format's descriptor names its reader

    read: Callable[[_Counts], Usage] = DESCRIPTORS[format_name].usage_reader.load()
    return read(_Counts(raw, path, reader))


class _LenientReader:
    """A ``CountReader`` for stored metadata: any bad value makes the whole object unreadable."""

    def optional_count(self, obj: Mapping[str, Any] | None, key: str, path: str) -> int | None:
        value = None if obj is None else obj.get(key)
        if value is None:
            return None
        if type(value) is not int or value < 0:
            raise CodecError(path)
        return value

    def fail(self, path: str, problem: str) -> NoReturn:
        raise CodecError(path)


def _legacy_format(provider: object, raw: Mapping[str, Any]) -> str | None:
    """The wire format of a provider-shaped usage object written under ``metadata["usage"]``
    by threadline before [`Usage`][threadline.Usage]: by the message's ``provider`` (a codec
    name, or a tag), and for a tag two formats write (``openai``, both of its APIs) by the
    object's own keys (the formats' telltales)."""
    if not isinstance(provider, str):
        return None
    if provider in _LEGACY_FORMATS:
        return provider
    from threadline.codecs._sniff import guess_usage_format

    return guess_usage_format(provider, raw, _LEGACY_FORMATS)


def message_usage(metadata: Mapping[str, Any]) -> Usage | None:
    """The [`Usage`][threadline.Usage] of a message's ``metadata`` (see the module docstring)."""
    stored = metadata.get("usage")
    if not isinstance(stored, Mapping):
        return None
    if all(key in _COUNTS and type(n) is int and n >= 0 for key, n in stored.items()):
        return Usage(**stored)  # the normalised JSON (Usage.to_dict)
    format_name = _legacy_format(metadata.get("provider"), stored)
    if format_name is None:
        return None
    try:
        return read_usage(format_name, stored, _LenientReader())
    except CodecError:
        return None


def total_usage(usages: Iterable[Usage | None]) -> Usage:
    """The sum of ``usages``, ``None`` skipped."""
    total = Usage()
    for usage in usages:
        if usage is not None:
            total = total + usage
    return total
