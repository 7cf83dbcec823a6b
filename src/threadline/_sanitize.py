"""The machinery of `sanitize_untrusted`: what a client may write.

A server that lets a browser hold the transcript gets back whatever the browser sends. This
module decides what of it survives: the metadata keys a client may set (a short allow-list, plus
the keys the caller names), which file URLs may stay (`threadline._urls`), what is left of
a reasoning part once its provider-only state goes, and which calls of the trailing assistant
message have no result after them. `threadline.integrity` reads the input and checks the
limits; everything here works on validated messages and never mutates them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import Final

from typing_extensions import assert_never

from threadline._json import EMPTY
from threadline._json import FrozenJsonMap
from threadline._urls import is_public_web_url
from threadline._urls import is_web_url
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import Part
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

_SAFE_METADATA_KEYS: Final = frozenset({"openai.custom_tool", "openai.namespace", "openai.refusal"})
"""The metadata keys a client may set: markers of a part's shape that name no provider-side
state, cost nothing, and that the provider checks against the server's own request (its tool
list). Every other key is dropped unless the caller keeps it; docs/integrity.md gives the
reason for each key a codec reads or writes."""


@dataclass(frozen=True)
class Untrusted:
    """What `sanitized` keeps: metadata ``keys`` and the file URLs allowed."""

    keys: frozenset[str]
    url_allowed: Callable[[str], bool]

    @classmethod
    def policy(cls, *, keep_metadata: Collection[str], allow_private_urls: bool) -> Untrusted:
        """The policy for `sanitize_untrusted`'s arguments of the same names.

        Raises:
            TypeError: ``keep_metadata`` is not a collection of strings.
            ValueError: ``keep_metadata`` names a ``threadline.*`` key.
        """
        return cls(
            keys=_SAFE_METADATA_KEYS | _kept_keys(keep_metadata),
            url_allowed=is_web_url if allow_private_urls else is_public_web_url,
        )


def sanitized(messages: list[Message], policy: Untrusted) -> list[Message]:
    """``messages`` with what a client must not write taken out, as a new list."""
    kept: list[Message] = []
    for message in messages:
        if message.role in ("system", "internal"):
            continue
        cleaned = _sanitized(message, policy)
        if cleaned is not None:
            kept.append(cleaned)
    return _without_unanswered_tail(kept)


def _kept_keys(keep_metadata: Collection[str]) -> frozenset[str]:
    if isinstance(keep_metadata, (str, bytes)) or not isinstance(keep_metadata, Iterable):
        raise TypeError(
            f"keep_metadata takes a collection of metadata keys, got {keep_metadata!r}; "
            "for one key write keep_metadata={'key'}"
        )
    given = tuple(keep_metadata)
    if not all(isinstance(key, str) for key in given):
        raise TypeError(f"keep_metadata takes metadata keys (strings), got {given!r}")
    keys = frozenset(given)
    reserved = sorted(key for key in keys if key.startswith("threadline."))
    if reserved:
        raise ValueError(
            f"keep_metadata names {', '.join(map(repr, reserved))}: threadline.* keys are never "
            "kept from a client (they mark repairs, summaries, masked results and stored "
            "blobs, which only threadline may write)"
        )
    return keys


def _sanitized(message: Message, policy: Untrusted) -> Message | None:
    """``message`` without the parts and metadata a client must not set; ``None`` if empty."""
    parts: list[Part] = []
    changed = False
    for part in message.parts:
        cleaned = _sanitized_part(part, policy)
        changed = changed or cleaned is not part
        if cleaned is not None:
            parts.append(cleaned)
    if not parts:
        return None
    metadata = _kept_metadata(message.metadata, policy.keys)
    if not changed and metadata is message.metadata and not message.replay:
        return message
    return message.model_copy(update={"parts": tuple(parts), "metadata": metadata, "replay": False})


def _sanitized_part(part: Part, policy: Untrusted) -> Part | None:
    """``part`` as a client may write it, or ``None`` to drop it.

    Every part type is decided here, and the chain ends in ``assert_never``: a new part type
    is listed by the type checker, and until it has a branch it is refused (``AssertionError``),
    never passed on to a provider as the client wrote it.
    """
    if isinstance(part, (TextPart, ToolCallPart)):
        pass  # only their metadata is the client's to check
    elif isinstance(part, (HookPart, ProviderToolCallPart, ProviderToolResultPart)):
        return None  # UI state and provider-run tools: only the server or the provider writes them
    elif isinstance(part, ReasoningPart):
        readable = _readable_reasoning(part)
        if readable is None:
            return None
        part = readable
    elif isinstance(part, FilePart):
        if part.url is not None and not policy.url_allowed(part.url):
            return None
    elif isinstance(part, ToolResultPart):
        if not isinstance(part.content, str):
            content = tuple(
                item
                for item in (_sanitized_part(item, policy) for item in part.content)
                if isinstance(item, (TextPart, FilePart))
            )
            if len(content) != len(part.content) or any(
                new is not old for new, old in zip(content, part.content, strict=True)
            ):
                part = dataclasses.replace(part, content=content or "")
    else:
        assert_never(part)
    metadata = _kept_metadata(part.metadata, policy.keys)
    if metadata is not part.metadata:
        part = dataclasses.replace(part, metadata=metadata)
    return part


def _readable_reasoning(part: ReasoningPart) -> ReasoningPart | None:
    """``part`` without the opaque state only its provider may write; ``None`` when nothing
    readable is left (redacted or encrypted-only reasoning).

    A client-held signature, encrypted blob or item id would be replayed to the provider as
    the model's own state: forged, or another conversation's. Without ``provider`` the codecs
    treat what is left as foreign reasoning: dropped, or sent as plain text with
    ``reasoning="text"``.
    """
    if part.redacted or not (part.text or any(part.summary)):
        return None
    opaque = (part.signature, part.encrypted, part.item_id, part.provider, part.model)
    if all(value is None for value in opaque):
        return part
    return dataclasses.replace(
        part, signature=None, encrypted=None, item_id=None, provider=None, model=None
    )


def _kept_metadata(metadata: Mapping[str, Any], keys: frozenset[str]) -> Mapping[str, Any]:
    """``metadata`` with only ``keys`` (the same object when it has no other key)."""
    if all(key in keys for key in metadata):
        return metadata
    kept = {key: value for key, value in metadata.items() if key in keys}
    return FrozenJsonMap(kept) if kept else EMPTY


def _without_unanswered_tail(messages: list[Message]) -> list[Message]:
    """Drop the calls of the trailing assistant message that no later result answers.

    A trailing assistant message left empty goes, and the assistant message before it (past any
    tool messages) becomes the tail in turn, so sanitizing twice changes nothing more: one walk
    back, linear in the messages.
    """
    answered: set[str] = set()
    dropped: set[int] = set()
    index = len(messages) - 1
    while index >= 0:
        message = messages[index]
        if message.role == "tool":
            answered.update(part.call_id for part in message.parts if type(part) is ToolResultPart)
            index -= 1
            continue
        if message.role != "assistant":
            break
        parts = tuple(
            part for part in message.parts if type(part) is not ToolCallPart or part.id in answered
        )
        if len(parts) == len(message.parts):
            break
        if parts:
            kept = message.model_copy(update={"parts": parts})
            out = [m for i, m in enumerate(messages) if i not in dropped]
            position = index - sum(1 for i in dropped if i < index)
            out[position] = kept
            return out
        dropped.add(index)
        index -= 1
    if not dropped:
        return messages
    return [m for i, m in enumerate(messages) if i not in dropped]
