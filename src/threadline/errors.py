"""Every exception and warning threadline raises.

Each error also subclasses the builtin it resembles, so ``except ValueError`` keeps working in
code that does not know threadline::

    ThreadlineError
    ├── ValidationError (ValueError)        bad messages or JSON given to threadline
    │   ├── UnsupportedVersionError         JSON written by a newer threadline
    │   └── LimitExceededError              input larger, deeper or longer than its Limits
    ├── IntegrityError (ValueError)         a history that cannot be sent to a model as it is
    ├── CodecError                          a provider payload threadline cannot read or write
    │   ├── UnknownProviderError (LookupError)
    │   └── UnsupportedContentError (ValueError)
    ├── SealError (ValueError)              a history does not match its seal
    ├── StoreError                          a store's driver failed (the driver error is __cause__)
    │   └── ConflictError                   another writer moved first (expected_version)
    │       └── ConversationReplacedError   a watched conversation was replaced or deleted
    └── PluginError                         a context plugin failed

    ThreadlineWarning (UserWarning)
    └── StoreRecoveryWarning                a store skipped a record it could not read

    ConformanceError (AssertionError)       an extension broke a contract (threadline.testing)

The classes are also importable where they are used: [`LimitExceededError`][] from
``threadline.limits``, [`SealError`][] from ``threadline.sealing``,
[`ConformanceError`][] from ``threadline.testing``, and all but the last from ``threadline``.

Calling pydantic directly (``Message(...)``, ``Message.model_validate``) raises pydantic's own
``ValidationError``, which is also a ``ValueError``; threadline's entry points (constructors,
``load_json``, ``History`` methods, codecs) translate it to [`ValidationError`][].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from threadline.integrity import IntegrityIssue
    from threadline.messages import Message

__all__ = [
    "CodecError",
    "ConflictError",
    "ConformanceError",
    "ConversationReplacedError",
    "ErrorDetail",
    "IntegrityError",
    "LimitExceededError",
    "PluginError",
    "SealError",
    "StoreError",
    "StoreRecoveryWarning",
    "ThreadlineError",
    "ThreadlineWarning",
    "UnknownProviderError",
    "UnsupportedContentError",
    "UnsupportedVersionError",
    "ValidationError",
]


class ThreadlineError(Exception):
    """The base of every error threadline raises on purpose."""


@dataclass(frozen=True)
class ErrorDetail:
    """One problem found while validating input."""

    path: str
    """Where the problem is, as a JSON path such as ``messages[3].parts[0].arguments``."""
    message: str
    """What is wrong, and where possible how to fix it."""
    type: str
    """A stable machine-readable kind, such as ``missing`` or ``role_part``."""

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ValidationError(ThreadlineError, ValueError):
    """Messages, parts or JSON given to threadline are not valid.

    Raised by the constructors, ``load_json``, ``History`` methods given mappings and the codecs'
    ``decode``. ``errors`` lists every problem with the path of the field.
    """

    def __init__(self, message: str, errors: Sequence[ErrorDetail] = ()) -> None:
        super().__init__(message)
        self.errors: tuple[ErrorDetail, ...] = tuple(errors)


class UnsupportedVersionError(ValidationError):
    """The JSON envelope has a format version this threadline cannot read.

    Written by a newer threadline (upgrade to read it) or not a threadline envelope at all.
    """

    def __init__(self, message: str, version: object) -> None:
        super().__init__(message)
        self.version = version


class LimitExceededError(ValidationError):
    """Input exceeds one of the [`Limits`][] of the call that read it.

    A [`ValidationError`][], so code that handles bad input handles this too; a
    server can catch it first to answer "413 Payload Too Large" instead of "400 Bad Request".
    """

    def __init__(
        self,
        message: str,
        *,
        limit: str = "",
        maximum: int = 0,
        actual: int | None = None,
        path: str = "",
    ) -> None:
        super().__init__(message, [ErrorDetail(path, message, limit)])
        self.limit = limit
        """The name of the limit: ``max_bytes``, ``max_messages``, ``max_parts``,
        ``max_depth`` or ``max_string``."""
        self.maximum = maximum
        """The limit's value."""
        self.actual = actual
        """What the input holds (at least), when it was measured."""
        self.path = path
        """The JSON path where the limit was crossed (``""`` for the whole input)."""


class IntegrityError(ThreadlineError, ValueError):
    """A history breaks a pairing or ordering rule that repair may not (or was told not to) fix.

    ``issues`` holds every problem found, each with its code, message index and part index.
    """

    def __init__(self, message: str, issues: Sequence[IntegrityIssue] = ()) -> None:
        super().__init__(message)
        self.issues: tuple[IntegrityIssue, ...] = tuple(issues)


class CodecError(ThreadlineError):
    """A provider payload cannot be read, or a history cannot be written in a provider format."""


class UnknownProviderError(CodecError, LookupError):
    """No codec is registered under the given provider name."""


class UnsupportedContentError(CodecError, ValueError):
    """A part cannot be carried by the provider format and ``unsupported="raise"`` was asked.

    ``provider``, ``message_index`` and ``part_index`` say which part of which message.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        message_index: int | None = None,
        part_index: int | None = None,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.message_index = message_index
        self.part_index = part_index


class SealError(ThreadlineError, ValueError):
    """A history does not match its seal, or the seal cannot be read.

    Treat it as tampering: refuse the request. ``reason`` says what failed, as a stable
    string: ``malformed`` (not a seal this library writes), ``unknown-key`` (the key id is not
    among the keys given: a retired key, or a forged seal), ``count`` (more or fewer messages
    than were sealed: truncated or extended), ``mismatch`` (a message was changed, added,
    removed or reordered, or the history was sealed for another conversation or with another
    key), ``unsealed-role`` ([`verify_prefix`][] only: a message after
    the sealed ones has a role the client may not add).
    """

    def __init__(self, message: str, *, reason: str = "mismatch") -> None:
        super().__init__(message)
        self.reason = reason


class StoreError(ThreadlineError):
    """A store could not load or write a conversation. The driver's error is ``__cause__``."""


class ConflictError(StoreError):
    """Another writer changed the conversation first: its version is not the one expected.

    Raised by a store's ``append`` or ``replace`` given ``expected_version=`` (nothing was
    written), and by a [`History`][threadline.History] bound with ``on_conflict="raise"``
    (nothing changed). Reload the conversation (``store.load`` and ``store.version``) and try
    again, or bind with ``on_conflict="reload"`` to take the other writer's messages first.
    """

    def __init__(
        self, message: str, *, conversation_id: str = "", expected: int = 0, actual: int = 0
    ) -> None:
        super().__init__(message)
        self.conversation_id = conversation_id
        """The conversation that moved."""
        self.expected = expected
        """The version the writer expected."""
        self.actual = actual
        """The conversation's version when the write was refused."""


class ConversationReplacedError(ConflictError):
    """A watched conversation was replaced or deleted: its messages are no longer an extension
    of what the watcher yielded.

    Raised by a store's ``watch`` iterator (see [`threadline.stores.Watch`][]) when another
    writer called ``replace`` or ``delete`` after the watcher's version, or when the watch
    cannot tell what changed since it (a ``watch`` started at an older ``after_version`` on a
    store that keeps no log of writes, or a gap in Redis's log). It carries the conversation
    as it is now: take ``messages`` as the whole conversation at version ``actual``. The
    watch has moved on to ``actual``: iterate it again to go on, or start a new one with
    ``after_version=error.actual``.
    """

    def __init__(
        self,
        message: str,
        *,
        conversation_id: str = "",
        expected: int = 0,
        actual: int = 0,
        messages: Sequence[Message] = (),
    ) -> None:
        super().__init__(message, conversation_id=conversation_id, expected=expected, actual=actual)
        self.messages: list[Message] = list(messages)
        """The whole conversation at version ``actual``, oldest first."""


class PluginError(ThreadlineError):
    """A context plugin failed; the history is left as it was before the plugin ran."""


class ThreadlineWarning(UserWarning):
    """The base of threadline's warnings."""


class StoreRecoveryWarning(ThreadlineWarning):
    """A store skipped a record it could not read (for example a line torn by a crash)."""


class ConformanceError(AssertionError):
    """An extension broke a law of the contract its kit in [`threadline.testing`][] checks.

    An ``AssertionError``, so every test runner reports it as a failure; not a
    [`ThreadlineError`][], because the library itself never raises it.
    """
