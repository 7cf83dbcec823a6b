"""``threadline.limits`` and ``threadline.messages`` form layers, with no cycle, lazy or not.

``_bounded_json`` (the limits, JSON-text parsing and the walk) knows no message type, so the
constructors in ``messages`` can parse tool-argument text with it; ``limits`` sits above
``messages`` and registers the message and part classes with the walk.
"""

from __future__ import annotations

from tests.unit.test_testing_package import import_graph
from tests.unit.test_testing_package import reachable


def test_messages_never_reach_limits_and_the_walk_never_reaches_messages() -> None:
    graph = import_graph()
    for low, high in (
        ("threadline.messages", "threadline.limits"),
        ("threadline._bounded_json", "threadline.messages"),
        ("threadline._message_fields", "threadline.messages"),
        ("threadline._validation", "threadline.messages"),
    ):
        path = reachable(graph, low).get(high)
        assert path is None, f"{low} imports {high}: {' -> '.join(path or [])}"
    assert "threadline.messages" in graph["threadline.limits"]
