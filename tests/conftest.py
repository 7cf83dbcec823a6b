"""Test-wide settings: hypothesis profiles and the THREADLINE_REQUIRE_ALL switch.

Profiles: ``dev`` (the default, quick) and ``ci`` (more examples, chosen when ``CI`` is set);
``THREADLINE_HYPOTHESIS_PROFILE`` overrides either.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

settings.register_profile(
    "dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# CI is derandomized: a run that passes here passes there, and a failure reproduces exactly.
# The explain phase is off: on a failure it can trace for minutes before reporting.
settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    print_blob=True,
    derandomize=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    # Health checks judge the strategies, not the code; on a loaded CI machine they only flake.
    suppress_health_check=list(HealthCheck),
)
settings.load_profile(
    os.environ.get("THREADLINE_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)
