"""Turn pydantic's validation errors into :class:`threadline.ValidationError` with JSON paths."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

import pydantic

from threadline._json import NOT_UNICODE_HINT
from threadline.errors import ErrorDetail, ValidationError

__all__ = ["format_path", "register_part_tags", "translate_errors"]

# The tags of the part unions: pydantic puts the chosen tag into an error's location
# (``parts.0.tool_call.arguments``); a JSON path reads better without it. They are the tags of
# ``threadline.messages.Part``, which registers them when it is defined: messages imports this
# module (its constructors translate errors), so this module cannot import them from there,
# and no error can name a part before the part types exist.
_part_tags: frozenset[str] = frozenset()


def register_part_tags(tags: Iterable[str]) -> None:
    """Set the part tags that :func:`format_path` leaves out of paths (called by
    :mod:`threadline.messages` once its ``Part`` union is defined)."""
    global _part_tags
    _part_tags = frozenset(tags)


_UNION_NOISE = frozenset(
    {"str", "constrained-str", "tuple[...]", "function-after[_decode_base64(), str]", "bytes"}
)
_NOT_UNICODE = (
    "not valid Unicode text: it holds a lone surrogate (such as \\ud800), " + NOT_UNICODE_HINT
)


def format_path(loc: Sequence[int | str], prefix: str = "") -> str:
    """Render a pydantic error location as a JSON path.

    ``("messages", 3, "parts", 0, "tool_call", "arguments")`` → ``messages[3].parts[0].arguments``.
    """
    if "[key]" in loc:  # a bad object key: the path is the object's, the message names the key
        loc = loc[: loc.index("[key]") - 1]
    path = prefix
    previous: int | str | None = None
    for item in loc:
        if isinstance(item, int):
            path += f"[{item}]"
        elif (
            (isinstance(previous, int) and item in _part_tags)
            or item in _UNION_NOISE
            or item.startswith(("function-", "tagged-union[", "tuple["))
        ):
            pass
        elif item.isprintable():
            path = f"{path}.{item}" if path else item
        else:  # a key of a JSON value holding control characters or a lone surrogate: escaped
            shown = ascii(item) if len(item) <= 40 else ascii(item[:40])[:-1] + "...'"
            path = f"{path}[{shown}]"
        previous = item
    return path


def translate_errors(
    error: pydantic.ValidationError, summary: str, prefix: str = ""
) -> ValidationError:
    """Build a :class:`ValidationError` listing every problem in ``error`` with its path."""
    details: list[ErrorDetail] = []
    seen: set[tuple[str, str]] = set()
    items = error.errors(include_url=False, include_input=False)
    paths = [format_path(item["loc"], prefix) for item in items]
    # A string that is not Unicode fails each branch of a union (``str | tuple[...]``): the
    # other branches' errors ("should be a valid tuple") only confuse.
    not_unicode = {
        path for item, path in zip(items, paths, strict=True) if item["type"] == "string_unicode"
    }
    ordered: list[str] | None = None  # sorted paths, to find one inside another in log time
    for item, path in zip(items, paths, strict=True):
        kind = item["type"]
        if kind == "too_short":
            if ordered is None:
                ordered = sorted(paths)
            if _has_path_under(ordered, path):
                continue  # "no parts left" only because a part was invalid: that error says why
        if kind != "string_unicode" and path in not_unicode:
            continue
        if kind == "role_part":
            path = f"{path}[{item.get('ctx', {}).get('index')}]"
        message = _friendly(kind, item["msg"], path)
        if (path, message) in seen:
            continue
        seen.add((path, message))
        details.append(ErrorDetail(path, message, kind))
    lines = "\n".join(f"  {detail}" for detail in details)
    noun = "problem" if len(details) == 1 else "problems"
    return ValidationError(f"{summary}: {len(details)} {noun}\n{lines}", details)


def _has_path_under(ordered: list[str], path: str) -> bool:
    """Whether a path in ``ordered`` (sorted) starts with ``path[``: the paths that do sort
    together, from the first one not less than ``path[``; a scan of every path for each error
    would cost N squared over N errors."""
    inside = path + "["
    at = bisect.bisect_left(ordered, inside)
    return at < len(ordered) and ordered[at].startswith(inside)


def _friendly(kind: str, message: str, path: str) -> str:
    if kind == "too_short" and path.endswith("parts"):
        return "a message needs at least one part"
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        return "unknown field; check the spelling (messages and parts forbid extra fields)"
    if kind.startswith("value_error") and message.startswith("Value error, "):
        return message[len("Value error, ") :]
    if kind == "string_unicode" and message.startswith("Input should be"):
        return _NOT_UNICODE  # pydantic-core's words, for a field or an object key
    return message
