"""Test-wide settings: the two tiers, hypothesis profiles and the THREADLINE_REQUIRE_ALL switch.

Tiers: a plain ``python -m pytest`` runs the quick tier, which a newcomer can run in about a
minute on two cores with no server: everything but the fault and soak tests
(``tests/faults``), the SDK conformance suites (``tests/conformance``), the tests that need a
Redis or PostgreSQL server (marked ``requires_server``) and the tests marked ``slow``.
``THREADLINE_FULL=1`` runs the full tier in one run: all of it, with the ``ci``
hypothesis profile. ``THREADLINE_FULL=rest`` runs what the full tier adds to the quick one: the
full-tier-only tests and every hypothesis test (again, with the ``ci`` profile). ``.ci/run``
runs the quick tier as a newcomer would (its time printed beside the README's promise, never
a failure), then ``rest``, so together they are the full tier.

Profiles: ``dev`` (the default, quick: 5 examples, 20 steps per state machine run) and ``ci``
(200, chosen when ``CI`` or ``THREADLINE_FULL=1`` is set); ``THREADLINE_HYPOTHESIS_PROFILE``
overrides either. A test that pins its count asks ``tests.support.examples`` for it: the full
count under ``ci``, at most the quick profile's under ``dev``.

Both tiers run on every core (``-n auto`` in ``pyproject.toml``, pytest-xdist): each test keeps
its own temporary directories, Redis key prefix and PostgreSQL table prefix, and hypothesis'
example database is safe to share between processes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import Phase
from hypothesis import settings

from tests.support import delete_redis_prefix
from tests.support import drop_postgres_tables
from tests.support import new_postgres_prefix
from tests.support import new_redis_prefix
from tests.support import postgres_server_dsn
from tests.support import redis_cluster_server_url
from tests.support import redis_server_url

# The quick tier's profile: every property runs, with a few examples (each property's first
# examples hold most of its lines; its hundreds are the full tier's, ``ci``, which CI runs too).
# The explain phase is off in both: on a failure it can trace for minutes before reporting.
_PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]
# Random for a developer (each run explores new examples); derandomized under ``CI``, where the
# quick tier runs as a newcomer's but a verdict must not depend on the draw.
settings.register_profile(
    "dev",
    max_examples=5,
    stateful_step_count=20,
    deadline=None,
    derandomize=bool(os.environ.get("CI")),
    phases=_PHASES,
    suppress_health_check=[HealthCheck.too_slow],
)
# CI is derandomized: a run that passes here passes there, and a failure reproduces exactly.
settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    print_blob=True,
    derandomize=True,
    phases=_PHASES,
    # Health checks judge the strategies, not the code; on a loaded CI machine they only flake.
    suppress_health_check=list(HealthCheck),
)
_TIER = os.environ.get("THREADLINE_FULL", "")
if _TIER not in ("", "0", "1", "rest"):
    raise pytest.UsageError(f"THREADLINE_FULL must be 1, rest or unset, not {_TIER!r}")
FULL = _TIER == "1"
"""The full tier: fault, soak, server and slow tests too (``.ci/run`` sets it)."""
REST = _TIER == "rest"
"""What the full tier adds to the quick one: full-tier-only tests and the hypothesis tests."""

settings.load_profile(
    os.environ.get("THREADLINE_HYPOTHESIS_PROFILE")
    or ("ci" if os.environ.get("CI") or FULL or REST else "dev")
)

_FAULTS = Path(__file__).parent / "faults"
_CONFORMANCE = Path(__file__).parent / "conformance"
"""The official SDKs judging ~4,000 payloads: about a minute, so the full tier's."""


def _full_tier_only(item: pytest.Item) -> bool:
    return (
        item.path.is_relative_to(_FAULTS)
        or item.path.is_relative_to(_CONFORMANCE)
        or item.get_closest_marker("requires_server") is not None
        or item.get_closest_marker("slow") is not None
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The quick tier does not even import what it would deselect whole: the fault and
    conformance suites import servers' drivers and every SDK, seconds per test process."""
    if FULL or REST:
        return None
    if collection_path in (_FAULTS, _CONFORMANCE):
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In the quick tier, deselect (not skip) what only the full tier runs, so
    ``THREADLINE_REQUIRE_ALL=1`` never turns the quick tier's choice into a failure."""
    if FULL:
        return
    keep = _in_rest if REST else _in_quick
    deselected = [item for item in items if not keep(item)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if keep(item)]


def _in_quick(item: pytest.Item) -> bool:
    return not _full_tier_only(item)


def _in_rest(item: pytest.Item) -> bool:
    function = getattr(item, "function", None)
    return _full_tier_only(item) or bool(getattr(function, "is_hypothesis_test", False))


def pytest_report_header(config: pytest.Config) -> str:
    if REST:
        return (
            "threadline: the rest of the full tier (THREADLINE_FULL=rest): what the quick "
            "tier leaves out, and every hypothesis test"
        )
    if FULL:
        return "threadline: full tier (THREADLINE_FULL=1): faults, soak, servers and slow tests"
    return (
        "threadline: quick tier; THREADLINE_FULL=1 also runs the fault, soak, server "
        "and slow tests (as .ci/run does)"
    )


# -- the shared servers (tests/stores, tests/faults) --------------------------------------------


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The shared Redis server (``THREADLINE_REDIS_URL``); skips, or fails under
    ``THREADLINE_REQUIRE_ALL=1``, when it is unset or down."""
    return redis_server_url()


@pytest.fixture(scope="session")
def redis_cluster_url() -> str:
    """A node of the shared Redis Cluster (``THREADLINE_REDIS_CLUSTER_URL``); skips, or fails
    under ``THREADLINE_REQUIRE_ALL=1``, when it is unset, down or not serving every slot."""
    return redis_cluster_server_url()


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """The shared PostgreSQL server (``THREADLINE_POSTGRES_DSN``); skips, or fails under
    ``THREADLINE_REQUIRE_ALL=1``, when it is unset or down."""
    return postgres_server_dsn()


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own; every key under it is deleted afterwards."""
    prefix = new_redis_prefix()
    yield prefix
    delete_redis_prefix(redis_url, prefix)


@pytest.fixture
def postgres_prefix(postgres_dsn: str) -> Iterator[str]:
    """A table prefix of this test's own; its tables are dropped afterwards."""
    prefix = new_postgres_prefix()
    yield prefix
    drop_postgres_tables(postgres_dsn, [prefix])
