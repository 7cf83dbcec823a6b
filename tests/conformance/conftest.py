"""Every payload the conformance suites produce goes through the rules judge.

The choke point is ``encode``: the tests call ``<codec>.encode``, the dispatching
``threadline.codecs.encode`` (which looks the module's ``encode`` up on each call) and
``check_codec`` (which calls ``codec.encode``), so wrapping each codec module's ``encode``
for the whole package judges every payload, beside the SDK-type judges the tests call
themselves. A payload that breaks a rule raises at once, inside the test that made it (so
hypothesis shrinks it); a rule of ``KNOWN_VIOLATIONS`` is tolerated and counted, and the
count is reported at the end of the run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conformance import _rules
from threadline.codecs import get_codec


def _judged(fmt: str, encode: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    @functools.wraps(encode)
    def wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
        payload = encode(*args, **kwargs)
        _rules.judge_rules(fmt, payload)
        return payload

    return wrapper


@pytest.fixture(scope="package", autouse=True)
def _rules_judge() -> Iterator[None]:
    """Wrap each codec's ``encode`` so that what it returns is judged by the rules judge."""
    with pytest.MonkeyPatch.context() as patch:
        for fmt in _rules.FORMATS:
            codec = get_codec(fmt)  # a module, or a dialect's codec object
            patch.setattr(codec, "encode", _judged(fmt, codec.encode))
        yield


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """How many payloads the rules judge saw, and how many broke a known rule."""
    if not _rules.JUDGED:
        return
    judged = ", ".join(f"{fmt} {count}" for fmt, count in sorted(_rules.JUDGED.items()))
    terminalreporter.write_line(f"rules judge: payloads judged: {judged}")
    for rule_id in sorted(_rules.KNOWN_VIOLATIONS):
        terminalreporter.write_line(
            f"rules judge: known violation {rule_id}: {_rules.TOLERATED[rule_id]} payloads"
        )
