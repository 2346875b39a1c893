"""Hypothesis settings profiles for the property tests: ``dev``, ``ci`` and ``nightly``.

``load_profile()`` registers the three profiles and loads the one named by the
environment variable ``ISRLAB_HYPOTHESIS_PROFILE`` (default ``dev``)::

    ISRLAB_HYPOTHESIS_PROFILE=ci pytest -m props

==========  ============  =====================  ==================================================
profile     max_examples  stateful_step_count    purpose
==========  ============  =====================  ==================================================
dev         100           50                     every local run; random, with the example database
ci          200           50                     reproducible: derandomized, no database, no blob
nightly     2000          100                    long random campaign, with the example database
==========  ============  =====================  ==================================================

All three set ``deadline=None`` (a model step's cost varies with the state, and
a stateful test case's wall time is not a property of the code under test) and
suppress the health checks a rule machine trips for reasons that are not bugs:
``too_slow`` (hundreds of model steps per test case), ``data_too_large`` (long
test cases during generation) and ``filter_too_much`` (rule preconditions
combined with Hypothesis's swarm feature flags reject some draws).

``ci`` is derandomized so that a CI failure is the same failure on a laptop;
``derandomize`` holds only "until you update Hypothesis, Python, or the test
function", so the durable artefact of a failure is the JSON trace the machine
attaches to it (``properties/machines.py``), not the seed.

Budget: the machine applies actions far more slowly than the walker (Hypothesis's
own bookkeeping dominates the model's), so the ``ci`` profile is sized for a
machine test of a few seconds (the rate: benchmarks/RESULTS.md).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

ENV_VAR = "ISRLAB_HYPOTHESIS_PROFILE"
DEFAULT_PROFILE = "dev"
PROFILES = ("dev", "ci", "nightly")

_SUPPRESSED = (HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much)


def register_profiles() -> None:
    """Register ``dev``, ``ci`` and ``nightly`` with Hypothesis (idempotent)."""
    common = dict(deadline=None, suppress_health_check=list(_SUPPRESSED))
    # dev and nightly say derandomize=False outright: Hypothesis loads its own "ci" settings as the parent
    # profile when it detects a CI environment (CI=true, ...), and they would otherwise inherit its derandomize.
    settings.register_profile("dev", max_examples=100, stateful_step_count=50, derandomize=False, **common)
    settings.register_profile("ci", max_examples=200, stateful_step_count=50, derandomize=True, database=None,
                              print_blob=False, **common)
    settings.register_profile("nightly", max_examples=2000, stateful_step_count=100, derandomize=False, **common)


def profile_name() -> str:
    """The profile named by ``ISRLAB_HYPOTHESIS_PROFILE`` (default ``dev``); ValueError for an unknown name."""
    name = os.environ.get(ENV_VAR, "").strip() or DEFAULT_PROFILE
    if name not in PROFILES:
        raise ValueError(f"{ENV_VAR}={name!r} is not a profile (known: {', '.join(PROFILES)})")
    return name


def load_profile() -> str:
    """Register the profiles and load the selected one; returns its name."""
    register_profiles()
    name = profile_name()
    settings.load_profile(name)
    return name
