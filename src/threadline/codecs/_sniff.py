"""Telling which provider format a payload or response looks like (private), for the hint
in an error: a request body given without ``--from``, or a response read with the wrong
``provider=``.

A guess is made from a few telltale keys only, never by reading the whole value; ``None``
means no format can be told. The telltales are each format's own (its descriptor's
``telltales``, ``threadline.codecs._formats``): this module asks the questions, in the
descriptors' ``rank`` order, and knows no format. A format whose payloads look like another's
(Mistral's like OpenAI Chat's) is named by that one (its ``sniffs_as``).
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Literal
from typing import TypeAlias

from threadline.codecs._formats import DESCRIPTORS
from threadline.codecs._formats import Is
from threadline.codecs._formats import Shape
from threadline.codecs._formats import Telltales
from threadline.codecs._formats import descriptor

__all__ = [
    "format_label",
    "guess_request_format",
    "guess_response_format",
    "guess_usage_format",
    "looks_like",
]

_Question: TypeAlias = Literal[
    "responses", "loose_responses", "bodies", "items", "messages", "blocks"
]


@functools.cache
def _asked() -> tuple[tuple[str, Telltales], ...]:
    """The formats sniffed as themselves, with their telltales, in the order they are asked."""
    found = [
        (name, d.telltales)
        for name, d in DESCRIPTORS.items()
        if d.sniffs_as == name and d.telltales is not None
    ]
    return tuple(sorted(found, key=lambda item: item[1].rank))


def _default() -> str | None:
    """The format of a message list that tells nothing else."""
    return next((name for name, told in _asked() if told.default), None)


def _answer(value: Any, question: _Question) -> str | None:
    """The first format (by rank) one of whose shapes for ``question`` ``value`` matches."""
    if not isinstance(value, Mapping):
        return None
    for name, told in _asked():
        if any(_matches(value, each) for each in getattr(told, question)):
            return name
    return None


def _matches(value: Any, tested: Shape) -> bool:
    return isinstance(value, Mapping) and all(_passes(value, key, test) for key, test in tested)


def _passes(value: Mapping[Any, Any], key: str, test: Is) -> bool:
    kind = test.kind
    if kind == "absent" or kind == "present":
        return (key in value) == (kind == "present")
    item = value.get(key)
    if kind == "list":
        return isinstance(item, list)
    if kind == "items":
        return isinstance(item, list) and bool(item)
    if kind == "str":
        return isinstance(item, str)
    if kind == "equals":
        return key in value and bool(item == test.argument)
    if kind == "one of":
        return _hashable(item) and item in test.argument
    if kind == "holds":
        return isinstance(item, Mapping) and test.argument in item
    if not isinstance(item, list) or not item:
        return False
    items = item[:1] if kind == "first" else item
    return any(_matches(each, tested) for each in items for tested in test.argument)


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def guess_response_format(response: Any) -> str | None:
    """The codec name whose responses ``response`` (JSON values) looks like, or ``None``."""
    return _answer(response, "responses") or _answer(response, "loose_responses")


def guess_request_format(payload: Any) -> str | None:
    """The codec name whose request bodies (or message lists) ``payload`` looks like, or
    ``None``; a threadline history looks like none."""
    if isinstance(payload, Mapping):
        if payload.get("format") == "threadline":
            return None  # the threadline envelope (a request's "format" is its output schema)
        found = _answer(payload, "bodies")
        if found is not None:
            return found
        messages = payload.get("messages")
        if isinstance(messages, list):
            return _guess_messages(messages) or _default()
        return None
    if isinstance(payload, list):
        return _guess_messages(payload)
    return None


def _guess_messages(items: Sequence[Any]) -> str | None:
    guess: str | None = None
    for item in items:
        if not isinstance(item, Mapping):
            return None
        found = _answer(item, "items")
        if found is not None:
            return found
        if isinstance(item.get("parts"), list):
            return None  # threadline messages
        if "content" not in item:
            continue
        found = _answer(item, "messages")
        if found is not None:
            return found
        content = item["content"]
        for block in content if isinstance(content, list) else ():
            found = _answer(block, "blocks")
            if found is not None:
                return found
        guess = _default()
    return guess


def guess_usage_format(tag: str, usage: Mapping[str, Any], among: Collection[str]) -> str | None:
    """The codec name, of the formats ``among``, whose messages carry the provider tag ``tag``
    and whose usage objects ``usage`` looks like: the one format with that tag, else the one
    whose telltales' ``usage`` match, else the one with no ``usage`` telltales; ``None`` when
    no format, or more than one, fits."""
    tagged = [d for name, d in DESCRIPTORS.items() if name in among and d.provider == tag]
    if len(tagged) <= 1:
        return tagged[0].name if tagged else None
    told = [(d.name, d.telltales.usage if d.telltales else ()) for d in tagged]
    for name, shapes in told:
        if any(_matches(usage, each) for each in shapes):
            return name
    plain = [name for name, shapes in told if not shapes]
    return plain[0] if len(plain) == 1 else None


def format_label(name: str) -> str:
    """What the format of the codec ``name`` is called in messages ("OpenAI Chat Completions")."""
    described = descriptor(name)
    return name if described is None else described.label


def looks_like(name: str, what: str) -> str:
    """``"an OpenAI Chat Completions response"``: the format of codec ``name`` and ``what``."""
    label = format_label(name)
    article = "an" if label[:1].lower() in "aeiou" else "a"
    return f"{article} {label} {what}"
