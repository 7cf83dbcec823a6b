"""Reading FILE: the neutral JSON envelope or a bare list of messages, JSON Lines as
`JsonlStore` writes them, or a provider payload (``--from``); and
refusing what the command could not print or write (a lone surrogate, an integer too long)."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Final
from typing import cast

from threadline._cli.output import STDIN
from threadline._cli.output import CliError
from threadline._cli.output import json_problem
from threadline._cli.output import one_line
from threadline._cli.output import warn
from threadline._sequences import read_messages
from threadline.codecs import codec_names
from threadline.codecs import decode
from threadline.codecs._sniff import guess_request_format
from threadline.codecs._sniff import looks_like
from threadline.errors import CodecError
from threadline.errors import ValidationError
from threadline.limits import Limits
from threadline.messages import Message
from threadline.messages import ReasoningPart
from threadline.serialization import load_json
from threadline.stores.jsonl import read_batch_lines

__all__ = ["Loaded", "load_history"]

_MODEL_KEY: Final = {"bedrock": "modelId"}
"""Where a provider payload names its model, when not under ``model``."""

# Keys that give away a provider request body given without --from.
_PROVIDER_KEYS: Final = frozenset({"messages", "contents", "input", "system", "systemInstruction"})


@dataclass(frozen=True)
class Loaded:
    """A history read from a file or a store, and what to call it in messages."""

    name: str
    messages: list[Message]
    store: str | None = None
    """The store URL it was read from (credentials redacted); ``None`` for a file."""
    conversation: str | None = None
    """The conversation id it was read from; ``None`` for a file."""
    version: int | None = None
    """The stored conversation's version when it was read; ``None`` for a file."""


def load_history(path: str, provider: str | None = None) -> Loaded:
    """Read a history from ``path`` (``-``: standard input).

    Args:
        path: the file.
        provider: read a provider payload with this codec instead of neutral JSON / JSONL.

    Raises:
        CliError: the file cannot be read, or holds no valid history.
    """
    name, data = _read(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise CliError(
            f"{name}: not UTF-8 text (byte {error.start} cannot be decoded); expected "
            "threadline JSON, JSON Lines or a provider's JSON payload"
        ) from error
    if not text.strip():
        raise CliError(f"{name}: empty input; expected a history in JSON or JSON Lines")
    try:
        if provider is not None:
            return Loaded(name, _decode_payload(name, text, provider))
        return Loaded(name, _load_neutral(name, text))
    except RecursionError as error:
        raise CliError(f"{name}: the JSON nests too deeply to read") from error


def _read(path: str) -> tuple[str, bytes]:
    if path == "-":
        return STDIN, sys.stdin.buffer.read()
    try:
        return path, Path(path).read_bytes()
    except OSError as error:
        raise CliError(f"cannot read {path}: {error.strerror or error}") from error


def _decode_payload(name: str, text: str, provider: str) -> list[Message]:
    try:
        payload = _parse(text, name)
    except json.JSONDecodeError as error:
        raise CliError(f"{name}: not JSON ({json_problem(error)})") from error
    try:
        messages = decode(payload, provider=provider)
    except (CodecError, ValidationError) as error:
        raise CliError(f"{name}: {one_line(error)}") from error
    return _with_model(messages, payload, provider)


def _with_model(messages: list[Message], payload: Any, provider: str) -> list[Message]:
    """``messages`` with the model ``payload`` names (a Converse request's ``modelId``, another
    format's ``model``) on the provider's reasoning that names none: the request went to that
    model with that reasoning in it, so it is that model's (``decode`` reads the messages
    alone). Without it such reasoning replays only to ``convert`` given no ``--model``."""
    model = payload.get(_MODEL_KEY.get(provider, "model")) if isinstance(payload, dict) else None
    if not isinstance(model, str) or not model:
        return messages
    producer = "openai" if provider.startswith("openai_") else provider
    out = []
    for message in messages:
        parts = tuple(
            dataclasses.replace(part, model=model)
            if isinstance(part, ReasoningPart) and part.provider == producer and part.model is None
            else part
            for part in message.parts
        )
        changed = any(new is not old for new, old in zip(parts, message.parts, strict=True))
        out.append(message.model_copy(update={"parts": parts}) if changed else message)
    return out


def _load_neutral(name: str, text: str) -> list[Message]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        if _first_line_is_json(text):
            return _load_jsonl(name, text)
        raise CliError(f"{name}: not JSON ({json_problem(error)})") from error
    except ValueError:
        # An integer longer than json.loads reads. JSON Lines name the line it is on; a
        # document goes to load_json, which says where it stops (or reads it: its own bound).
        if _first_line_is_json(text):
            return _load_jsonl(name, text)
        document = None
    if document is not None:
        _check_text(document, text, name)
    if isinstance(document, dict) and "format" not in document:
        if "role" in document and "parts" in document:  # JSON Lines with one message
            return _validated([document], f"{name}:1")
        if _PROVIDER_KEYS & document.keys():
            raise CliError(f"{name}: not a threadline history; {_from_hint(document)}")
    try:
        # A file the operator chose is trusted: no size limits (nesting still has a ceiling),
        # so a long history with inline images reads whole.
        return load_json(text, limits=Limits.none())
    except ValidationError as error:
        guess = guess_request_format(document)
        hint = f"; {_from_hint(document)}" if guess is not None else ""
        raise CliError(f"{name}: {one_line(error)}{hint}") from error


def _from_hint(document: Any) -> str:
    """What to pass for a provider payload given without ``--from``, naming its format where
    it can be told."""
    guess = guess_request_format(document)
    if guess is None:
        return (
            f"it looks like a provider request: pass --from PROVIDER ({', '.join(codec_names())})"
        )
    return f"this looks like {looks_like(guess, 'payload')}: pass --from {guess}"


def _first_line_is_json(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        return isinstance(json.loads(first), (dict, list))
    except json.JSONDecodeError:
        return False
    except ValueError:  # JSON with an integer too long to read: _load_jsonl names the line
        return True


def _load_jsonl(name: str, text: str) -> list[Message]:
    """Messages from JSON Lines as ``JsonlStore`` writes them: one batch per line, and a torn
    last line skipped by the store's own rule (`read_batch_lines`).
    """
    numbered = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    values = read_batch_lines(
        numbered,
        lambda number, line: _parse(line, f"{name}:{number}"),
        torn=lambda number, line: warn(
            f"{name}:{number}: skipped a torn last line ({len(line)} characters), left by "
            "a write that was cut short, as JsonlStore does"
        ),
        damaged=lambda number, error: CliError(
            # _parse lets no other ValueError through: a too long integer is a CliError
            f"{name}:{number}: not JSON ({json_problem(cast(json.JSONDecodeError, error))}), "
            "and not the last line, so not a torn write: the file is damaged"
        ),
    )
    messages: list[Message] = []
    for number, value in values:
        if not isinstance(value, (dict, list)):
            raise CliError(
                f"{name}:{number}: expected a message object or an array of messages, "
                f"got {type(value).__name__}"
            )
        messages.extend(
            _validated(value if isinstance(value, list) else [value], f"{name}:{number}")
        )
    return messages


def _parse(text: str, where: str) -> Any:
    """``json.loads(text)``, for a value used as it is read; ``where`` names it in errors.

    Raises:
        json.JSONDecodeError: ``text`` is not JSON.
        CliError: an integer in it is longer than Python reads (``sys.set_int_max_str_digits``),
            or a string in it holds a lone surrogate.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError as error:  # the only other error json.loads raises: a too long integer
        raise CliError(
            f"{where}: an integer has more than {sys.get_int_max_str_digits():,} digits, "
            "more than Python reads as a number"
        ) from error
    _check_text(value, text, where)
    return value


_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
# The text is strict UTF-8, so a surrogate can only come from an escape (a pair or a lone one).
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")


def _check_text(value: Any, text: str, where: str) -> None:
    """Refuse ``value`` (parsed from ``text``) if a string or key in it holds a lone surrogate,
    naming where.

    ``json.loads`` reads an escape such as ``"\\ud800"`` into a string that UTF-8 cannot
    encode, so nothing could be printed or written from it (pydantic-core's reader, behind
    ``load_json``, refuses it outright).
    """
    if not _SURROGATE_ESCAPE.search(text):
        return  # the common case: no surrogate escape at all
    if not _SURROGATE.search(json.dumps(value, ensure_ascii=False)):
        return  # escaped pairs only, read as the characters they stand for
    what, char = _find_surrogate(value)
    raise CliError(
        f"{where}: {what} holds a lone surrogate ({ascii(char)[1:-1]}), which is not Unicode "
        "text; fix the text encoding of whatever wrote the file"
    )


def _find_surrogate(value: Any) -> tuple[str, str]:
    """The first string or key of ``value`` (in document order) holding a lone surrogate, as
    ``(description, the surrogate)``."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found is not None:
                return f"the string at {path.lstrip('.') or 'the top level'}", found.group()
        elif isinstance(item, dict):
            children = []
            for key, child in item.items():
                step = f".{key}" if key.isidentifier() else f"[{json.dumps(key)}]"
                found = _SURROGATE.search(key)
                if found is not None:
                    return f"the key {(path + step).lstrip('.')}", found.group()
                children.append((child, path + step))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend((item[i], f"{path}[{i}]") for i in range(len(item) - 1, -1, -1))
    raise AssertionError("no lone surrogate found")  # pragma: no cover - checked by the caller


def _validated(items: list[Any], where: str) -> list[Message]:
    try:
        return read_messages(items, where)
    except ValidationError as error:
        raise CliError(one_line(error)) from error
