"""One prepared history: what every ``encode`` reads before it maps a message (private).

An ``encode`` starts the same way in every format: its options checked, the sequence read,
the integrity pass run (`prepare_for_encoding`), then one walk over the prepared messages
(`scan`) for the tool names the format refuses, the tool-call ids it refuses, and per message
what the reasoning and unsupported policies leave of it when nothing in it is to be resolved.
`prepare_history` does all of it once and returns a `PreparedHistory`; the format's loop then
takes each message's parts from `PreparedHistory.parts` instead of resolving them again.

The object is frozen, and each field is either per message, in order (``messages``,
``ready``), or a map over the messages' ids and names (``ids``, ``tool_names``): an
incremental encoder can extend it at the tail by scanning only the new messages (a wire name
or id depends on the names and ids seen, in order of appearance).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import Resolved
from threadline.codecs._policies import resolve
from threadline.codecs._policies import resolve_parts
from threadline.codecs._policies import scan
from threadline.codecs._tool_names import ToolNameRule
from threadline.codecs._tool_names import map_tool_names
from threadline.codecs._tool_names import rename_tools
from threadline.codecs._tools import hashed_id
from threadline.codecs._tools import wire_ids
from threadline.codecs.base import EncodeOptions
from threadline.codecs.base import prepare_for_encoding
from threadline.messages import Message

if TYPE_CHECKING:
    from threadline.codecs._caching import CacheOption
    from threadline.codecs._caching import CachePlan


@dataclasses.dataclass(frozen=True, slots=True)
class PreparedHistory:
    """A history read once for one format: what `prepare_history` returns.

    ``messages[i]`` and ``ready[i]`` describe the same message: a codec's loop takes the
    parts of message ``i`` from `parts` (or `parts_of`, for a copy it changed).
    """

    messages: Sequence[Message]
    """The messages to map: integrity done (unless ``integrity="off"``), and the tool names
    the format refuses replaced by their wire names (each part where it was)."""
    options: EncodeOptions
    """The checked options of the ``encode`` call (with the caller's messages, for errors)."""
    capabilities: Capabilities
    """What the format can carry: the plan below was decided with it."""
    ready: Sequence[Sequence[Resolved] | None]
    """Per message, what the policies leave of it when it has nothing to resolve (its parts,
    or the ones after its leading dropped reasoning), else ``None`` (`scan`)."""
    ids: Mapping[str, str]
    """``{stored id: wire id}`` for the tool-call ids the format refuses (`map_call_ids`'s
    rule); the others go as they are: look ids up with ``ids.get(id, id)``."""
    tool_names: Mapping[str, str]
    """``{stored name: wire name}`` for the tool names the format refuses, as already applied
    to ``messages``."""
    cache: CachePlan | None = None
    """The prompt-cache plan of ``encode(cache=...)``, checked against the caller's history
    (its explicit message breakpoints already in ``messages``' part metadata); ``None``: no
    ``cache``. A format with breakpoints notes the turns it marks as its loop maps them
    (`threadline.codecs._caching.TurnNotes`)."""

    def parts(self, index: int) -> Sequence[Resolved]:
        """What the format sends of ``messages[index]``: the plan's parts when it has nothing
        to resolve, else the reasoning and unsupported policies applied part by part.

        Raises:
            threadline.UnsupportedContentError: ``unsupported="raise"`` and the message holds
                a part the format refuses.
        """
        ready = self.ready[index]
        if ready is not None:
            return ready
        return [
            part
            for _, part in resolve_parts(
                self.messages[index], index, self.options, self.capabilities
            )
        ]

    def parts_of(self, index: int, message: Message) -> Sequence[Resolved]:
        """`parts` for ``message``, which is ``messages[index]`` or a copy of it the codec
        changed (a system note, a user message with its notes escaped: the helpers that make
        one return the message itself when nothing changed); a changed copy is resolved on its
        own.

        Raises:
            threadline.UnsupportedContentError: as `parts`.
        """
        if message is self.messages[index]:
            return self.parts(index)
        return resolve(message, index, self.options, self.capabilities)

    def indexed(self, index: int) -> Sequence[tuple[int, Resolved]]:
        """`parts`, each with the index in ``messages[index].parts`` of the part it stands for
        (`threadline.codecs._policies.resolve_indexed`).

        Raises:
            threadline.UnsupportedContentError: as `parts`.
        """
        message, ready = self.messages[index], self.ready[index]
        if ready is not None:
            return list(enumerate(message.parts))[len(message.parts) - len(ready) :]
        return resolve_parts(message, index, self.options, self.capabilities)


def prepare_history(
    messages: Iterable[Message],
    *,
    provider: str,
    capabilities: Capabilities,
    rule: ToolNameRule,
    is_valid: Callable[[str], object],
    mint: Callable[[str, int], str] = hashed_id,
    cache: CacheOption = None,
    **settings: Any,
) -> PreparedHistory:
    """Read ``messages`` once for an ``encode`` of ``provider``'s format.

    Args:
        messages: the caller's history.
        provider: the format's ``provider`` string.
        capabilities: what the format can carry.
        rule: the format's tool-name rule.
        is_valid: whether the format takes a tool-call id as it is.
        mint: makes a wire id for an id ``is_valid`` refuses (`hashed_id`).
        cache: ``encode``'s ``cache``: planned once, against ``messages`` as given (message
            indexes are the caller's), before the integrity pass; ``provider`` names the
            format's breakpoints (its codec name: a format with breakpoints has its own tag).
        settings: ``encode``'s ``model``, ``integrity``, ``reasoning``, ``unsupported`` and
            ``text_files``, as `prepare_for_encoding` takes them.

    Raises:
        ValueError: an option has a value outside its documented choices, or ``rule`` or
            ``mint`` made a name or an id it refuses itself (a bug).
        threadline.ValidationError: an item of ``messages`` is not a message, or ``cache``
            cannot be sent (`threadline.codecs._caching.plan_cache`).
        threadline.IntegrityError: the history breaks a rule ``integrity`` does not repair.
    """
    plan = None
    if cache is not None:
        from threadline.codecs._caching import plan_and_mark

        plan, messages = plan_and_mark(cache, messages, provider)
    prepared, options = prepare_for_encoding(messages, provider=provider, **settings)
    found = scan(prepared, options, capabilities)
    names = map_tool_names(found.tool_names, rule)
    ready = found.ready
    if names:
        renamed = rename_tools(prepared, names)  # each part stays where it was
        for index, (old, new) in enumerate(zip(prepared, renamed, strict=True)):
            parts = ready[index]
            if new is not old and parts is not None:  # the same parts, renamed
                ready[index] = new.parts[len(old.parts) - len(parts) :]
        prepared = renamed
    return PreparedHistory(
        messages=prepared,
        options=options,
        capabilities=capabilities,
        ready=ready,
        ids=wire_ids(found.call_ids, is_valid, mint),
        tool_names=names,
        cache=plan,
    )
