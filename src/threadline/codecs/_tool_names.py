"""Tool names on the wire (private): names a provider rejects mapped to names it takes.

Every API checks tool names against a pattern (OpenAI, Anthropic, Mistral and Bedrock take
``^[a-zA-Z0-9_-]{1,64}$``; Gemini also ``.`` and ``:``, a letter or ``_`` first). A name
outside it is sent as its *wire name*: the name with each run of refused characters made
``_`` (accents dropped first), cut to fit, then ``__`` and 10 hex digits of the name's
SHA-256 (``files.read`` -> ``files_read__<hash>``).

A wire name depends on the name alone, so a tool keeps its wire name while a conversation
grows, in every call and result; a name the API takes is sent as it is, so a wire name read
back and sent again stays the same. Two names never share a wire name: should a minted name
equal a name the history holds as it is, or another minted name, the next hash is taken
(deterministically, whatever order the names come in). Stored names never change: codecs send
`rename_tools`'s copy of the history.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import unicodedata
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence

from threadline.messages import Message
from threadline.messages import Part
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

_HEX_DIGITS = 10
_SUFFIX_LENGTH = 2 + _HEX_DIGITS


@dataclasses.dataclass(frozen=True)
class ToolNameRule:
    """The tool names one API takes, and how a name it refuses is cleaned."""

    pattern: re.Pattern[str]
    """The names the API takes (matched whole)."""
    refused: re.Pattern[str]
    """A run of characters the API refuses; each run becomes ``_``."""
    max_length: int
    """The longest name the API takes."""

    def takes(self, name: str) -> bool:
        """Whether the API takes ``name`` as it is."""
        return self.pattern.fullmatch(name) is not None

    def mint(self, name: str, attempt: int = 0) -> str:
        """The wire name of ``name`` (``attempt`` > 0: the next one, after a collision)."""
        seed = name if attempt == 0 else f"{name}#{attempt}"
        # surrogatepass: names read from hostile JSON may hold lone surrogates.
        digest = hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:_HEX_DIGITS]
        stem = self.refused.sub("_", _without_accents(name))[: self.max_length - _SUFFIX_LENGTH]
        candidate = f"{stem}__{digest}"
        if not self.takes(candidate):  # a first character the API refuses (Gemini: a digit)
            candidate = f"_{stem[: self.max_length - _SUFFIX_LENGTH - 1]}__{digest}"
        return candidate


STANDARD = ToolNameRule(
    pattern=re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    refused=re.compile(r"[^a-zA-Z0-9_-]+"),
    max_length=64,
)
"""OpenAI Chat and Responses, Anthropic, Mistral, Bedrock: ``^[a-zA-Z0-9_-]{1,64}$``."""

GEMINI = ToolNameRule(
    pattern=re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}"),
    refused=re.compile(r"[^a-zA-Z0-9_.:-]+"),
    max_length=64,
)
"""Gemini (and Vertex AI): a letter or ``_``, then letters, digits, ``_ . : -``; at most 64.
The SDK's docstring says 128, but the live API refuses a 65-character name: *Invalid function
name. Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores
(_), dots (.), colons (:), or dashes (-), with a maximum length of 64.*
(kaitranntt/ccs#219, google-gemini/gemini-cli#7869)."""


def _without_accents(name: str) -> str:
    decomposed = unicodedata.normalize("NFKD", name)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def names_in(messages: Iterable[Message]) -> list[str]:
    """The names of the tool calls and named tool results in ``messages``, each once."""
    seen: dict[str, None] = {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, (ToolCallPart, ToolResultPart)) and part.name is not None:
                seen[part.name] = None
    return list(seen)


def map_tool_names(names: Iterable[str], rule: ToolNameRule) -> dict[str, str]:
    """``{name: wire name}`` for each of ``names`` that ``rule`` refuses (the others are sent
    as they are).

    Collision-free: a wire name is never a name of ``names`` that is sent as it is, nor
    another name's wire name. The same set of names gives the same mapping in any order.

    Raises:
        ValueError: ``rule`` minted a name it refuses itself (a bug in the rule).
    """
    unique = set(names)
    taken = {name for name in unique if rule.takes(name)}
    mapping: dict[str, str] = {}
    for name in sorted(unique - taken):
        attempt = 0
        candidate = rule.mint(name)
        while candidate in taken:
            attempt += 1
            candidate = rule.mint(name, attempt)
        if not rule.takes(candidate):
            raise ValueError(f"the tool name {name!r} was mapped to {candidate!r}, also refused")
        taken.add(candidate)
        mapping[name] = candidate
    return mapping


def rename_tools(messages: Sequence[Message], mapping: Mapping[str, str]) -> list[Message]:
    """``messages`` with each tool call and tool result named by ``mapping`` (a name not in
    it is kept); the messages are copies, ``messages`` is left unchanged."""
    if not mapping:
        return list(messages)
    out: list[Message] = []
    for message in messages:
        parts = tuple(_renamed(part, mapping) for part in message.parts)
        if parts != message.parts:
            message = message.model_copy(update={"parts": parts})
        out.append(message)
    return out


def _renamed(part: Part, mapping: Mapping[str, str]) -> Part:
    if isinstance(part, (ToolCallPart, ToolResultPart)) and part.name is not None:
        name = mapping.get(part.name)
        if name is not None:
            return dataclasses.replace(part, name=name)
    return part


def to_wire_names(messages: Sequence[Message], rule: ToolNameRule) -> list[Message]:
    """``messages`` with each tool name ``rule`` refuses replaced by its wire name (``messages``
    itself when it is a list and no name needs one)."""
    mapping = map_tool_names(names_in(messages), rule)
    if not mapping and isinstance(messages, list):
        return messages
    return rename_tools(messages, mapping)
