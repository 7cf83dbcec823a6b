"""`History.encode`: the request body of an agent step, encoded incrementally (private).

``history.encode(provider, **options)`` equals ``encode(history.messages_for_model(),
provider=provider, **options)``. A history keeps one `SplicedEncoder` per format and codec
options (``system``, ``model``, ``reasoning``, ``unsupported``, ``text_files``), so a step
encodes the turns after the last boundary, its integrity pass included, and reuses the turns
before it (shared, read-only). The request fields (``tools``, ``tool_choice``,
``output_schema``) go on as ``encode`` puts them.

Keeping the turns costs a read-only copy of them (``threadline._shared_json.share``), work
only a later step uses. So a history's first ``encode`` per format and options is the
documented path and keeps nothing (a request handler that loads the conversation, encodes it
once and drops the history pays what ``encode`` pays); the turns are kept from the second on.
A history a `HistoryCache` holds is there to be encoded again: it keeps them from the first.

Where the incremental path cannot give the same body, the documented path runs instead: a
history with plugins (a transform may change any message), ``cache=`` (its marks copy
messages), a format without ``turns`` or with ``encode_request`` (Bedrock declares the tools
its whole history calls), tools whose names go as wire names, and any error (so the error is
the documented path's).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Hashable
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any
from typing import cast

if TYPE_CHECKING:
    from threadline.codecs._incremental import SplicedEncoder
    from threadline.history import History

__all__ = ["Encoding", "encode_history", "keep_turns"]

_CODEC_OPTIONS = ("system", "model", "reasoning", "unsupported", "text_files")
"""The ``encode`` options the codec's body depends on (``integrity`` does not change the
body of prepared messages: the incremental path runs ``auto``, as ``messages_for_model``)."""

_MAX_ENCODERS = 8
"""Encoders kept per history (one per format and options in use); the oldest goes first."""

_ENCODERS: weakref.WeakKeyDictionary[History, dict[Hashable, SplicedEncoder | None]] = (
    weakref.WeakKeyDictionary()
)
"""Per history, its encoders by format and options; ``None`` for a format and options encoded
once, with nothing kept yet."""
_KEEP_FROM_FIRST: weakref.WeakSet[History] = weakref.WeakSet()
"""The histories whose first ``encode`` keeps the turns (`keep_turns`)."""
_LOCK = threading.Lock()


class Encoding:
    """`History.encode`, for the History class (its mixin, beside ``Branching``)."""

    __slots__ = ()

    def encode(self, provider: str, **options: Any) -> dict[str, Any]:
        """``encode(self.messages_for_model(), provider=provider, **options)``, encoding only
        the turns after the last turn boundary: the turns before it are kept per format and
        options, shared read-only between bodies (``copy.deepcopy`` one to change it), from
        the history's second ``encode`` with them (its first, in a `HistoryCache`). See
        ``docs/performance.md`` ("The agent step") for when it encodes the whole history.

        Raises:
            threadline.ThreadlineError: what [`encode`][threadline.encode] and
                `messages_for_model` raise for this history and these options (an
                ``IntegrityError``, ``UnsupportedContentError``, ``UnknownProviderError``...).
            ValueError: an option has a value outside its documented choices.
        """
        return encode_history(cast("History", self), provider, options)


def encode_history(history: History, provider: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``encode(history.messages_for_model(), provider=provider, **options)``, incrementally.

    Raises:
        threadline.ThreadlineError: what that call raises.
        ValueError: an option has a value outside its documented choices.
    """
    from threadline.codecs._registry import HISTORY_BODY
    from threadline.codecs._registry import encode
    from threadline.codecs._registry import format_descriptor

    encoder = None
    if not history.plugins and options.get("cache") is None and isinstance(provider, str):
        described = format_descriptor(provider)
        if described.turns is not None and described.encode_request is None:
            encoder = _encoder(history, described, options)
    if encoder is not None:
        snapshot = history.snapshot()
        incremental = {**options, "integrity": "auto"}
        token = HISTORY_BODY.set((snapshot, lambda: encoder.encode(snapshot)))
        try:
            return encode(snapshot, provider=provider, **incremental)
        except Exception:  # the documented path says what is wrong, in its own words
            pass
        finally:
            HISTORY_BODY.reset(token)
    return encode(history.messages_for_model(), provider=provider, **options)


def keep_turns(history: History) -> None:
    """Make ``history``'s first ``encode`` per format and options keep the turns, as later
    ones do (a `HistoryCache` holds it to be encoded again)."""
    with _LOCK:
        _KEEP_FROM_FIRST.add(history)


def _encoder(history: History, described: Any, options: Mapping[str, Any]) -> Any:
    """The history's encoder for the format and the codec options, made on its second use
    (its first, for a history marked by `keep_turns`); ``None`` on the first use, and when an
    option is not hashable (the documented path reports it)."""
    from threadline.codecs._incremental import SplicedEncoder

    settings = {name: options[name] for name in _CODEC_OPTIONS if name in options}
    key = (described.name, *sorted(settings.items()))
    try:
        hash(key)
    except TypeError:
        return None
    with _LOCK:
        encoders = _ENCODERS.setdefault(history, {})
        used = key in encoders
        encoder = encoders.pop(key, None)
        if encoder is None and (used or history in _KEEP_FROM_FIRST):
            encoder = SplicedEncoder(described, {**settings, "integrity": "auto"})
        while len(encoders) >= _MAX_ENCODERS:
            del encoders[next(iter(encoders))]
        encoders[key] = encoder  # the newest last
    return encoder
