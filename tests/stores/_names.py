"""Hypothesis strategies for the layout tests: names built from the layouts' own words.

Keys, table names and file names are built from a namespace (a key or table prefix) and a
conversation id. Building both from the words the layouts use (``conv``, ``:``,
``conversations``, ``messages``...) makes a collision, if a layout has one, show up within a
few examples.
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

from threadline.stores import CONVERSATION_ID_PATTERN

LAYOUT_WORDS = [
    "a",
    "B",
    "b",
    "conv",
    "Conv",
    "conversations",
    "ids",
    "index",
    "42",
    "%3A",
    "x.y",
    "-",
    "+1",
]


def _valid(cid: str) -> bool:
    return re.fullmatch(CONVERSATION_ID_PATTERN, cid) is not None and ".." not in cid


conversation_ids = (
    st.lists(st.sampled_from(LAYOUT_WORDS), min_size=1, max_size=4).map(":".join).filter(_valid)
)
"""Valid conversation ids built from layout words, joined by ``:``."""


def small_names(words: list[str], most: int, separator: str = ":") -> list[str]:
    """Every sequence of 1 to ``most`` of ``words``, joined by ``separator``: a small space to
    search exhaustively."""
    names = [*words]
    layer = [*words]
    for _ in range(most - 1):
        layer = [f"{head}{separator}{word}" for head in layer for word in words]
        names.extend(layer)
    return names


@st.composite
def nested_readings(draw: st.DrawFn) -> list[tuple[str, str]]:
    """One string of layout words read as ``(prefix, id)`` at every split point: ``a:conv:42``
    is ``("", "a:conv:42")``, ``("a:", "conv:42")`` and ``("a:conv:", "42")``, the shape of
    tenants whose prefixes nest."""
    words = draw(st.lists(st.sampled_from(LAYOUT_WORDS), min_size=1, max_size=6))
    readings = []
    for split in range(len(words)):
        prefix = "".join(word + ":" for word in words[:split])
        cid = ":".join(words[split:])
        if _valid(cid):
            readings.append((prefix, cid))
    return readings


redis_prefixes = st.one_of(
    st.just(""),
    st.lists(st.sampled_from(LAYOUT_WORDS), min_size=1, max_size=4).map(
        lambda words: ":".join(words) + ":"
    ),
)
"""Redis key prefixes ending in ``:`` (or empty), built from the same words as the ids."""

table_prefixes = (
    st.lists(st.sampled_from(["a", "b_", "_", "messages", "conversations", "x9"]), max_size=5)
    .map(lambda words: "t" + "".join(words))
    .filter(lambda prefix: len(prefix) <= 40)
)
"""PostgreSQL table prefixes (``[a-z_][a-z0-9_]{0,39}``) built from the tables' own words."""
