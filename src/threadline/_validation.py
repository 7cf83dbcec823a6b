"""Turn pydantic's validation errors into `threadline.ValidationError` with JSON paths."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any

import pydantic
from pydantic_core import ErrorDetails
from pydantic_core import InitErrorDetails
from pydantic_core import PydanticCustomError
from typing_extensions import Self

from threadline._json import NOT_UNICODE_HINT
from threadline.errors import ErrorDetail
from threadline.errors import ValidationError

__all__ = [
    "RoleHints",
    "format_path",
    "invalid",
    "register_part_tags",
    "translate_errors",
]

# The tags of the part unions: pydantic puts the chosen tag into an error's location
# (``parts.0.tool_call.arguments``); a JSON path reads better without it. They are the tags of
# ``threadline.messages.Part``, which registers them when it is defined: messages imports this
# module (its constructors translate errors), so this module cannot import them from there,
# and no error can name a part before the part types exist.
_part_tags: frozenset[str] = frozenset()


def register_part_tags(tags: Iterable[str]) -> None:
    """Set the part tags that `format_path` leaves out of paths (called by
    `threadline.messages` once its ``Part`` union is defined)."""
    global _part_tags
    _part_tags = frozenset(tags)


_UNION_NOISE = frozenset(
    {"str", "constrained-str", "tuple[...]", "function-after[_decode_base64(), str]", "bytes"}
)
_NOT_UNICODE = (
    "not valid Unicode text: it holds a lone surrogate (such as \\ud800), " + NOT_UNICODE_HINT
)
# A provider's message shape given where a threadline message belongs: the usual first mistake.
_CONTENT_NOT_PARTS = (
    "threadline messages hold `parts`, not `content`: build it with user_message(...) or "
    "decode provider payloads with threadline.decode(..., provider='openai_chat')"
)
_ROLES = "system, user, assistant, tool and internal"
# Roles of provider formats that threadline spells differently, with the codec that maps them.
_FOREIGN_ROLES = {
    "developer": ("OpenAI's developer", "system", "openai_chat"),
    "model": ("Gemini's model", "assistant", "gemini"),
    "function": ("OpenAI's legacy function", "tool", "openai_chat"),
}


class RoleHints(pydantic.BaseModel):
    """A model whose pydantic errors about a ``role`` it lacks list the roles and the fix.

    For the pydantic API called directly (``Message(role="developer", ...)``,
    ``Message.model_validate``), whose errors threadline does not translate: pydantic's own
    words for a literal are the allowed values and a link. The error is rewritten only when
    validation failed, so validating costs nothing more.
    """

    model_config = pydantic.ConfigDict(defer_build=True)

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except pydantic.ValidationError as error:
            hinted = _role_hinted(error)
            if hinted is None:
                raise
            raise hinted from None

    # pydantic-core builds instances without calling this (as for BaseModel's own): loading a
    # list of messages runs no Python per message.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        try:
            return super().model_validate(obj, *args, **kwargs)
        except pydantic.ValidationError as error:
            hinted = _role_hinted(error)
            if hinted is None:
                raise
            raise hinted from None

    @classmethod
    def model_validate_json(cls, json_data: Any, *args: Any, **kwargs: Any) -> Self:
        try:
            return super().model_validate_json(json_data, *args, **kwargs)
        except pydantic.ValidationError as error:
            hinted = _role_hinted(error)
            if hinted is None:
                raise
            raise hinted from None


def _role_hinted(error: pydantic.ValidationError) -> pydantic.ValidationError | None:
    """``error`` with its unknown-role error saying what `_unknown_role` says (the
    others kept, type, message and context), or ``None`` when it has none."""
    items = error.errors(include_url=False)
    if not any(item["type"] == "literal_error" and item["loc"] == ("role",) for item in items):
        return None
    rebuilt: list[InitErrorDetails] = []
    for item in items:
        if item["type"] == "literal_error" and item["loc"] == ("role",):
            detail = _unknown_role(item["input"])
            kind = PydanticCustomError("unknown_role", "{detail}", {"detail": detail})
        else:
            kind = PydanticCustomError(item["type"], item["msg"], item.get("ctx"))
        rebuilt.append({"type": kind, "loc": item["loc"], "input": item["input"]})
    return pydantic.ValidationError.from_exception_data(error.title, rebuilt)


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
    """Build a `ValidationError` listing every problem in ``error`` with its path."""
    details: list[ErrorDetail] = []
    seen: set[tuple[str, str]] = set()
    items = error.errors(include_url=False, include_input=False)
    paths = [format_path(item["loc"], prefix) for item in items]
    # A string that is not Unicode fails each branch of a union (``str | tuple[...]``): the
    # other branches' errors ("should be a valid tuple") only confuse.
    not_unicode = {
        path for item, path in zip(items, paths, strict=True) if item["type"] == "string_unicode"
    }
    # A message given ``content`` and no ``parts`` (a provider's shape): one error saying so,
    # in place of "parts: Field required" and "content: unknown field".
    extra = {path for item, path in zip(items, paths, strict=True) if _is_extra(item)}
    content_for_parts = {
        path
        for item, path in zip(items, paths, strict=True)
        if item["type"] == "missing" and _is_field(item, "parts") and path[:-5] + "content" in extra
    }
    inputs: list[object] | None = None  # the inputs, read only for an error that names one
    ordered: list[str] | None = None  # sorted paths, to find one inside another in log time
    for index, (item, path) in enumerate(zip(items, paths, strict=True)):
        kind = item["type"]
        content_not_parts = path in content_for_parts
        if not content_not_parts and (
            _is_extra(item)
            and _is_field(item, "content")
            and (path[:-7] + "parts" in content_for_parts)
        ):
            continue
        if kind == "too_short":
            if ordered is None:
                ordered = sorted(paths)
            if _has_path_under(ordered, path):
                continue  # "no parts left" only because a part was invalid: that error says why
        if kind != "string_unicode" and path in not_unicode:
            continue
        if kind in ("role_part", "part_subclass"):
            path = f"{path}[{item.get('ctx', {}).get('index')}]"
        if content_not_parts:
            message = _CONTENT_NOT_PARTS
        elif kind == "literal_error" and _is_field(item, "role"):
            if inputs is None:
                inputs = [each.get("input") for each in error.errors(include_url=False)]
            message = _unknown_role(inputs[index])
        else:
            message = _friendly(kind, item["msg"], path)
        if (path, message) in seen:
            continue
        seen.add((path, message))
        details.append(ErrorDetail(path, message, kind))
    return invalid(summary, details)


def invalid(summary: str, details: Sequence[ErrorDetail]) -> ValidationError:
    """A `ValidationError` for ``details``: ``summary``, how many problems, one line each."""
    lines = "\n".join(f"  {detail}" for detail in details)
    noun = "problem" if len(details) == 1 else "problems"
    return ValidationError(f"{summary}: {len(details)} {noun}\n{lines}", details)


def _is_field(item: ErrorDetails, name: str) -> bool:
    """Whether the error is about the field ``name`` (the last item of its location)."""
    loc = item["loc"]
    return bool(loc) and loc[-1] == name


def _is_extra(item: ErrorDetails) -> bool:
    return item["type"] in ("extra_forbidden", "unexpected_keyword_argument")


def _unknown_role(value: object) -> str:
    """What to say about a role threadline does not have: the roles it has, and where the
    value is a provider's spelling of one, which one and the codec that maps it."""
    if isinstance(value, str):  # escaped and cut short: the value may come from anyone
        shown = ascii(value) if len(value) <= 40 else ascii(value[:40])[:-1] + "...'"
    else:
        shown = f"a value of type {type(value).__name__}"
    message = f"{shown} is not a threadline role; the roles are {_ROLES}"
    if isinstance(value, str) and value in _FOREIGN_ROLES:
        theirs, ours, provider = _FOREIGN_ROLES[value]
        message += (
            f". {theirs} role is `{ours}` in threadline: use role={ours!r}, or decode the "
            f"provider's messages with threadline.decode(..., provider={provider!r})"
        )
    return message


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
