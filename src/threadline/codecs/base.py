"""The codec contract: what a wire-format module provides, and what every ``encode`` shares.

A codec is a module with three functions, [`Codec`][]:

- ``encode(messages, *, system=None, model=None, integrity="auto", reasoning="auto",
  unsupported="placeholder", text_files="unsupported") -> dict`` — the history fragment of
  a provider request (a third-party codec may leave ``text_files`` out: the registry passes
  it only when it is not the default);
- ``decode(payload) -> list[Message]`` — that fragment (or a whole request body) read back;
- ``decode_response(response) -> Message`` — the provider's reply as an assistant message.

A module may also define ``normalize_for_round_trip(messages, *, model=None,
reasoning="auto", unsupported="placeholder") -> list[Message]``: what ``decode(encode(m))``
gives back for prepared messages ``m``, up to message ids, ``created_at``, message metadata and
how parts are grouped into messages. It is the format's *declared losses*;
[`threadline.testing.check_codec`][] holds the codec to it. It may use only the losses DESIGN
allows (see ``docs/providers.md``); a module without it declares that it loses nothing else.

This module is all a third-party codec needs: the protocol, the option literals,
[`prepare_for_encoding`][] (the options checked and the integrity pass run, as every
``encode`` starts) and [`TOOL_ERROR_PREFIX`][], the text formats without an error flag on
tool results put before a failed tool's output. threadline's own formats also share private
helpers (reading payloads, media, tool calls and their ids, turns, the policy rules); those may
change in any release and are not for other codecs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any
from typing import Literal
from typing import Protocol
from typing import TypeAlias
from typing import cast

from threadline._checked import unchanged
from threadline._sequences import read_messages
from threadline.limits import Limits
from threadline.messages import Message

__all__ = [
    "TOOL_ERROR_PREFIX",
    "Codec",
    "EncodeOptions",
    "IntegrityMode",
    "ReasoningPolicy",
    "TextFilesPolicy",
    "UnsupportedPolicy",
    "prepare_for_encoding",
]

IntegrityMode: TypeAlias = Literal["auto", "strict", "off"]
"""How ``encode`` runs [`prepare_messages`][] first (``off`` skips it)."""
ReasoningPolicy: TypeAlias = Literal["auto", "text", "drop"]
"""``auto`` replays opaque reasoning only to its producer (and model); ``text`` also sends
other reasoning as plain text; ``drop`` sends no reasoning."""
UnsupportedPolicy: TypeAlias = Literal["placeholder", "drop", "raise"]
"""What happens to a part the format cannot carry."""
TextFilesPolicy: TypeAlias = Literal["unsupported", "inline"]
"""What happens to a text file (``text/*``, JSON, CSV) the format cannot carry as a file:
``unsupported`` applies the unsupported policy, ``inline`` sends its text (UTF-8 bytes only)
as a text ``<file name="..." media_type="...">\\n…\\n</file>``."""

_INTEGRITY_MODES = ("auto", "strict", "off")
_REASONING_POLICIES = ("auto", "text", "drop")
_UNSUPPORTED_POLICIES = ("placeholder", "drop", "raise")
_TEXT_FILES_POLICIES = ("unsupported", "inline")

TOOL_ERROR_PREFIX = "[tool error] "
"""Written before a failed tool's output by formats with no error flag on tool results."""


class Codec(Protocol):
    """What a wire-format module provides. Our codecs are modules, so is a third party's."""

    def encode(
        self,
        messages: Iterable[Message],
        *,
        system: str | None = None,
        model: str | None = None,
        integrity: IntegrityMode = "auto",
        reasoning: ReasoningPolicy = "auto",
        unsupported: UnsupportedPolicy = "placeholder",
        text_files: TextFilesPolicy = "unsupported",
    ) -> dict[str, Any]:
        """Write ``messages`` as the history fragment of a request."""
        ...

    def decode(self, payload: Any, *, limits: Limits | None = None) -> list[Message]:
        """Read a history fragment (or a whole request body) back into messages."""
        ...

    def decode_response(
        self, response: Any, *, limits: Limits | None = None, model: str | None = None
    ) -> Message:
        """Read a provider response into one assistant message; ``model`` tags a response
        that names none (``threadline.decode_response`` passes it only when given)."""
        ...


@dataclasses.dataclass(frozen=True)
class EncodeOptions:
    """The options of one ``encode`` call, checked, plus what errors need to name a part."""

    provider: str
    """The ``provider`` string of the format (``openai``, ``anthropic``...)."""
    model: str | None
    """The target model; opaque reasoning from another model is not replayed."""
    reasoning: ReasoningPolicy
    """The reasoning policy."""
    unsupported: UnsupportedPolicy
    """The unsupported-content policy."""
    text_files: TextFilesPolicy = "unsupported"
    """What happens to a text file the format cannot carry as a file."""
    source: Sequence[Message] = ()
    """The caller's messages, so an error can give indices in *their* list."""

    def locate(self, message: Message, part: object, fallback: tuple[int, int]) -> tuple[int, int]:
        """The (message index, part index) of ``part`` in the caller's list, if it is there.

        Repair may drop or move messages, so the prepared list's indices can differ from the
        caller's; ids and part identity find the original. Only error paths call this.
        """
        for index, original in enumerate(self.source):
            if original.id == message.id:
                for part_index, candidate in enumerate(original.parts):
                    if candidate is part or candidate == part:
                        return index, part_index
                return index, fallback[1]
        return fallback


def prepare_for_encoding(
    messages: Iterable[Message],
    *,
    provider: str,
    model: str | None,
    integrity: str,
    reasoning: str,
    unsupported: str,
    text_files: str = "unsupported",
) -> tuple[list[Message], EncodeOptions]:
    """Check ``encode``'s options, then run the integrity pass the caller asked for.

    Raises:
        ValueError: an option has a value outside its documented choices.
        threadline.ValidationError: an item of ``messages`` is neither a [`Message`][] nor
            a mapping that validates as one.
        threadline.IntegrityError: ``integrity`` is ``auto`` or ``strict`` and the history
            breaks a rule that mode does not repair.
    """
    _check_choice("integrity", integrity, _INTEGRITY_MODES)
    _check_choice("reasoning", reasoning, _REASONING_POLICIES)
    _check_choice("unsupported", unsupported, _UNSUPPORTED_POLICIES)
    _check_choice("text_files", text_files, _TEXT_FILES_POLICIES)
    if model is not None and not isinstance(model, str):
        raise TypeError(f"model must be a str or None, not {type(model).__name__}")
    source = read_messages(messages, "encode")
    if integrity == "off" or unchanged(messages):
        # An unchanged `prepare_messages` result (``History.messages_for_model``) is already
        # what the pass would return, in either mode: see threadline._checked.
        prepared = source
    else:
        from threadline.integrity import prepare_messages

        prepared = prepare_messages(source, mode=cast(Literal["auto", "strict"], integrity))
    options = EncodeOptions(
        provider=provider,
        model=model,
        reasoning=cast(ReasoningPolicy, reasoning),
        unsupported=cast(UnsupportedPolicy, unsupported),
        text_files=cast(TextFilesPolicy, text_files),
        source=source,
    )
    return prepared, options


def _check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        allowed = ", ".join(repr(choice) for choice in choices)
        raise ValueError(f"{name} must be one of {allowed}, not {value!r}")
