"""Tamper evidence for history a server hands to a client and gets back.

A stateless chat server often lets the browser hold the transcript and send it back with each
request. Whatever comes back may have been edited: a forged system prompt, a tool result the
tool never returned, a message of another conversation, the last turns cut off. [`seal`][]
gives the server a short string to hand out with the history; [`verify`][] checks, when the
history returns, that it is exactly what was sealed, for the same conversation, in full.

What is signed
--------------
HMAC-SHA256, keyed with a server secret, over this byte string::

    b"threadline-seal-v1\\x00"
    frame(key id) frame(conversation id) count (8 bytes, big-endian)
    frame(message 1) ... frame(message n)

where ``frame(b)`` is the length of ``b`` (8 bytes, big-endian) followed by ``b``, strings are
UTF-8, and a message is its canonical JSON: the form ``dump_json`` writes for it (every field,
``replay`` excluded) with object keys sorted, no whitespace, non-ASCII characters as UTF-8.

``replay`` is runtime-only: never written, so never in the history a client holds, and not
sealed. A dispatcher reads it (a replayed tool call is not run again), so [`verify`][] and
[`verify_prefix`][] refuse a history in which any message has ``replay=True``: no history a
client sends back can hold one (``load_json`` and every reader of mappings refuse the key), so
the flag was set after the history came back. Verify first, then mark replays.
Sorted keys make the encoding independent of the order the client's JSON listed them in;
lengths in front of every item make the byte string unambiguous, so no edit can move bytes
from one message (or from the conversation id) into another.

The canonical JSON is written by `json` from the message's own values (file bytes as
standard base64, times as ``dump_json`` writes them) and encoded as strict UTF-8, so distinct
messages never give the same bytes. A string that is not Unicode text (a lone surrogate such as
``"\\ud800"``, which ``json.loads`` reads from a client's ``"\\ud800"``) has no UTF-8 form:
it is refused with [`ValidationError`][], by message validation first and by the
encoding again, never replaced (pydantic's JSON mode writes such an object key as U+FFFD, which
let two different keys seal alike).

The seal is ``v1.<key id>.<message count>.<MAC, base64url without padding>``, for example
``v1.2025-06.14.tQ3...``. The key id names the key in the server's key ring, so keys can be
rotated: seal with the new key, verify with both until the old seals have expired. A seal made
without a key id uses the id ``default``. The count is in the clear (the client knows it
anyway) so that [`verify_prefix`][] can split a history the client extended; the MAC binds
it, so changing it breaks the seal.

What a seal does not do
-----------------------
It proves the server sealed these messages for this conversation. It does not prove they are
the *latest* state: a client can send back an older history with its older, valid seal. A
server that must refuse rollback keeps the latest message count (or the seal) per
conversation and compares. Seals hide nothing: the history is readable by the client.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pydantic_core

from threadline._json import find_in_value
from threadline._json import lone_surrogate
from threadline._json import not_unicode
from threadline._sequences import read_messages
from threadline.errors import ErrorDetail
from threadline.errors import SealError
from threadline.errors import ValidationError
from threadline.limits import Limits
from threadline.messages import Message

__all__ = [
    "DEFAULT_KEY_ID",
    "MIN_KEY_BYTES",
    "SealError",
    "canonical_message",
    "seal",
    "verify",
    "verify_prefix",
]

DEFAULT_KEY_ID = "default"
"""The key id of a seal made without one; [`verify`][] looks it up in ``keys`` like any
other."""
MIN_KEY_BYTES = 32
"""The shortest key accepted: 256 bits, the size of the HMAC-SHA256 output. Make one with
``secrets.token_bytes(32)``."""

_VERSION = "v1"
_DOMAIN = b"threadline-seal-v1\x00"
_KEY_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_COUNT = re.compile(r"0|[1-9][0-9]{0,17}")
_MAC_LENGTH = 43  # 32 bytes in base64url without padding
_MAX_SEAL_LENGTH = 3 + 64 + 1 + 18 + 1 + _MAC_LENGTH
_DEFAULT_LIMITS = Limits()
_UNTRUSTED_LIMITS = Limits.untrusted()


def seal(
    messages: Sequence[Message | Mapping[str, Any]],
    key: bytes,
    *,
    conversation_id: str,
    key_id: str | None = None,
) -> str:
    """Seal a history for one conversation: a string to hand out with it.

    Args:
        messages: the history, in order (``Message`` objects or mappings of their fields).
        key: the secret key, at least [`MIN_KEY_BYTES`][] random bytes; never sent to
            clients.
        conversation_id: the conversation the history belongs to; [`verify`][] refuses the
            history for any other.
        key_id: the name of ``key`` in the key ring given to [`verify`][] (letters, digits,
            ``-`` and ``_``, at most 64). ``None`` means [`DEFAULT_KEY_ID`][].

    Returns:
        ``v1.<key id>.<message count>.<MAC>``: ASCII, at most 132 characters.

    Raises:
        TypeError: ``key`` is not bytes or ``conversation_id`` not a str.
        ValueError: ``key`` is too short, ``key_id`` has characters outside the allowed ones,
            or ``conversation_id`` is empty.
        threadline.ValidationError: an item of ``messages`` is not a valid message.
    """
    name = DEFAULT_KEY_ID if key_id is None else key_id
    _check_key_id(name)
    _check_key(key, name)
    _check_conversation_id(conversation_id)
    items = read_messages(messages, "seal", sequence=True, mapping_limits=_DEFAULT_LIMITS)
    mac = _mac(key, name, conversation_id, items)
    return f"{_VERSION}.{name}.{len(items)}.{_encode_mac(mac)}"


def verify(
    messages: Sequence[Message | Mapping[str, Any]],
    seal: str,
    keys: Mapping[str, bytes] | bytes,
    *,
    conversation_id: str,
    limits: Limits | None = None,
) -> None:
    """Check that ``messages`` are exactly the history that was sealed for the conversation.

    Raising rather than returning ``False`` is deliberate: a forgotten ``if`` must not let a
    forged history through. The comparison takes constant time.

    Args:
        messages: the history as it came back (``Message`` objects or mappings).
        seal: the seal that came back with it (a client may send anything: a value that is not
            a seal raises [`SealError`][threadline.sealing.SealError]).
        keys: the key ring, key id → key; a single ``bytes`` key stands for
            ``{"default": key}``.
        conversation_id: the conversation the request is for (from the server's routing or
            session, not from the client's body).
        limits: how much to read, checked before anything is validated. ``None`` means
            [`Limits.untrusted()`][threadline.limits.Limits.untrusted] when ``messages`` holds
            mappings (a client's request body) and no limits for ``Message`` objects (the
            server's own); given, it is checked in both cases.

    Raises:
        threadline.SealError: the seal cannot be read, its key is unknown, or the history is
            not exactly what was sealed for this conversation; ``reason`` says which.
        threadline.LimitExceededError: ``messages`` exceed ``limits``.
        threadline.ValidationError: an item of ``messages`` is not a valid message (a string
            that is not Unicode text included).
        TypeError: ``keys`` or ``conversation_id`` has the wrong type.
        ValueError: ``conversation_id`` is empty or not Unicode text.
    """
    items = read_messages(
        messages, "verify", sequence=True, limits=limits, mapping_limits=_UNTRUSTED_LIMITS
    )
    _check(items, seal, keys, conversation_id, extended=False)


def verify_prefix(
    messages: Sequence[Message | Mapping[str, Any]],
    seal: str,
    keys: Mapping[str, bytes] | bytes,
    *,
    conversation_id: str,
    tail_roles: Sequence[str] = ("user",),
    limits: Limits | None = None,
) -> tuple[list[Message], list[Message]]:
    """Check a history that the client extended after the sealed part; split it.

    The first *n* messages (n is the count in the seal) must be exactly what was sealed; the
    messages after them are the client's own additions, and may only have a role in
    ``tail_roles``: by default a client may add user messages, never a system prompt, an
    assistant turn or a tool result. Run the tail through
    [`sanitize_untrusted`][] like any client input.

    Args:
        messages: the history as it came back.
        seal: the seal the server handed out with the first part.
        keys: the key ring, key id → key (or one ``bytes`` key for ``default``).
        conversation_id: the conversation the request is for.
        tail_roles: the roles a message after the sealed ones may have.
        limits: as [`verify`][]: ``None`` means
            [`Limits.untrusted()`][threadline.limits.Limits.untrusted] for mappings.

    Returns:
        ``(sealed, tail)``: the verified messages and the client's additions.

    Raises:
        threadline.SealError: as [`verify`][], with ``count`` when there are fewer messages
            than were sealed, and ``unsealed-role`` when the tail holds another role.
        threadline.LimitExceededError: ``messages`` exceed ``limits``.
        threadline.ValidationError: an item of ``messages`` is not a valid message.
    """
    roles = (tail_roles,) if isinstance(tail_roles, str) else tuple(tail_roles)
    items = read_messages(
        messages, "verify_prefix", sequence=True, limits=limits, mapping_limits=_UNTRUSTED_LIMITS
    )
    count = _check(items, seal, keys, conversation_id, extended=True)
    sealed, tail = items[:count], items[count:]
    for offset, message in enumerate(tail):
        if message.role not in roles:
            allowed = ", ".join(repr(role) for role in roles) or "none"
            raise SealError(
                f"messages[{count + offset}] comes after the sealed messages and has role "
                f"{message.role!r}; a client may only add messages with role {allowed}",
                reason="unsealed-role",
            )
    return sealed, tail


def canonical_message(message: Message) -> bytes:
    """The canonical JSON of one message, as sealed: every field ``dump_json`` writes, keys
    sorted, no whitespace, UTF-8.

    Written from the message's own values, not from pydantic's JSON mode (which writes an
    object key that is not Unicode as U+FFFD, so that two keys would give the same bytes).

    Raises:
        threadline.ValidationError: a string or key of the message is not Unicode text (it
            holds a lone surrogate); validation refuses those, so only a message built around
            it (``model_construct``) can.
    """
    document = message.model_dump(mode="python")
    text = _CANONICAL(document)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise _not_unicode_message(document) from None


def _canonical_scalar(value: object) -> str:
    """The JSON form of the values `json` has none for, as ``dump_json`` writes them."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")  # FilePart.data: standard base64
    if isinstance(value, datetime):
        text: str = pydantic_core.to_jsonable_python(value)
        return text
    raise TypeError(f"{type(value).__name__} is not a JSON value")


_CANONICAL = json.JSONEncoder(
    sort_keys=True,
    separators=(",", ":"),
    ensure_ascii=False,
    allow_nan=False,
    default=_canonical_scalar,
).encode


def _not_unicode_message(document: object) -> ValidationError:
    found = find_in_value(document)
    path, is_key = found if found is not None else ("", False)
    subject = f"the {'key' if is_key else 'string'} at {path or 'the top level'}"
    message = (
        f"cannot seal the message: {subject} is not valid Unicode text: it holds a lone "
        "surrogate, which UTF-8 cannot encode; fix the text encoding of the client that sent it"
    )
    return ValidationError(message, [ErrorDetail(path, message, "string_unicode")])


def _check(
    items: list[Message],
    seal: object,
    keys: Mapping[str, bytes] | bytes,
    conversation_id: str,
    *,
    extended: bool,
) -> int:
    """Verify the first ``count`` messages against the seal; return ``count``."""
    _check_conversation_id(conversation_id)
    ring = _key_ring(keys)
    key_id, count, expected = _parse(seal)
    key = ring.get(key_id)
    if key is None:
        known = ", ".join(repr(name) for name in sorted(ring)) or "none"
        raise SealError(
            f"the seal was made with key id {key_id!r}, which is not in the key ring "
            f"(known: {known}): a retired key, or a forged seal",
            reason="unknown-key",
        )
    _check_key(key, key_id)
    if len(items) < count or (len(items) > count and not extended):
        change = "removed" if len(items) < count else "added"
        hint = "; to accept messages a client added, use verify_prefix" if change == "added" else ""
        raise SealError(
            f"the seal covers {count} messages but the history has {len(items)}: messages "
            f"were {change} after sealing{hint}",
            reason="count",
        )
    _refuse_replay_flags(items)
    actual = _mac(key, key_id, conversation_id, items[:count])
    if not hmac.compare_digest(actual, expected):
        raise SealError(
            "the history does not match its seal: a message was changed, replaced or "
            "reordered, or the history was sealed for another conversation",
            reason="mismatch",
        )
    return count


def _refuse_replay_flags(items: list[Message]) -> None:
    flagged = next((index for index, message in enumerate(items) if message.replay), None)
    if flagged is not None:
        raise SealError(
            f"messages[{flagged}] has replay=True, which no history a client sends back can "
            "hold (replay is runtime-only: never written, and refused when read), so it was set "
            "after the history came back; verify the history as it was read, then mark replays",
            reason="mismatch",
        )


def _mac(key: bytes, key_id: str, conversation_id: str, messages: Sequence[Message]) -> bytes:
    mac = hmac.new(key, _DOMAIN, hashlib.sha256)
    mac.update(_frame(key_id.encode("ascii")))
    mac.update(_frame(conversation_id.encode("utf-8")))
    mac.update(len(messages).to_bytes(8, "big"))
    for message in messages:
        mac.update(_frame(canonical_message(message)))
    return mac.digest()


def _frame(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data


def _encode_mac(mac: bytes) -> str:
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def _parse(seal: object) -> tuple[str, int, bytes]:
    """``(key id, count, MAC)`` of a seal string; anything else is a malformed seal."""
    if not isinstance(seal, str) or len(seal) > _MAX_SEAL_LENGTH:
        shown = type(seal).__name__ if not isinstance(seal, str) else f"{len(seal)} characters"
        raise SealError(f"not a threadline seal ({shown})", reason="malformed")
    fields = seal.split(".")
    if (
        len(fields) != 4
        or fields[0] != _VERSION
        or not _KEY_ID.fullmatch(fields[1])
        or not _COUNT.fullmatch(fields[2])
        or len(fields[3]) != _MAC_LENGTH
    ):
        raise SealError(
            "not a threadline seal: expected v1.<key id>.<count>.<43 base64url characters>",
            reason="malformed",
        )
    try:
        mac = base64.urlsafe_b64decode(fields[3] + "=")
    except (binascii.Error, ValueError):
        mac = b""
    if len(mac) != 32 or _encode_mac(mac) != fields[3]:  # also refuses non-canonical base64
        raise SealError("not a threadline seal: the MAC is not base64url", reason="malformed")
    return fields[1], int(fields[2]), mac


def _key_ring(keys: Mapping[str, bytes] | bytes) -> Mapping[str, bytes]:
    if isinstance(keys, (bytes, bytearray)):
        return {DEFAULT_KEY_ID: bytes(keys)}
    if not isinstance(keys, Mapping):
        raise TypeError(
            f"keys must be a mapping of key id to key bytes, or one key as bytes, not "
            f"{type(keys).__name__}"
        )
    return keys


def _check_key(key: object, key_id: str) -> None:
    if not isinstance(key, (bytes, bytearray)):
        raise TypeError(
            f"the key {key_id!r} must be bytes, not {type(key).__name__}; make one with "
            "secrets.token_bytes(32) and keep it out of source code"
        )
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(
            f"the key {key_id!r} is {len(key)} bytes; a seal key needs at least "
            f"{MIN_KEY_BYTES} random bytes (secrets.token_bytes(32))"
        )


def _check_key_id(key_id: object) -> None:
    if not isinstance(key_id, str) or not _KEY_ID.fullmatch(key_id):
        raise ValueError(f"key_id must be 1 to 64 letters, digits, '-' or '_', not {key_id!r}")


def _check_conversation_id(conversation_id: object) -> None:
    if not isinstance(conversation_id, str):
        raise TypeError(f"conversation_id must be a str, not {type(conversation_id).__name__}")
    if not conversation_id:
        raise ValueError("conversation_id must not be empty: a seal binds a conversation")
    index = lone_surrogate(conversation_id)
    if index is not None:
        raise ValueError(not_unicode("conversation_id", conversation_id, index))
