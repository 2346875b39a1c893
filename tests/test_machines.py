"""The Hypothesis rule machine (properties/machines.py) and the settings profiles (properties/profiles.py).

Budgets follow the profile named by ISRLAB_HYPOTHESIS_PROFILE (dev by default; ci is derandomized and
keeps this file well under a minute on two cores).  The mutant test runs with its own fixed seed and
budget, so it is the same run under every profile.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from isrlab.cli import main as cli_main
from isrlab.model import actions as A
from isrlab.model.config import PRESETS, ModelConfig, preset
from isrlab.model.step import enabled_actions, enabled_groups, initial_state, step
from isrlab.model.trace import TraceError, dumps_trace, trace_from_json
from isrlab.properties import profiles
from isrlab.properties.invariants import ALWAYS, BY_NAME, CATALOGUE, STATE, Invariant
from isrlab.properties.machines import (InvariantViolated, ModelMachine, machine_for, rule_name, run_machine,
                                        trace_from_exception, violation_type)
from isrlab.properties.replay import replay

pytestmark = pytest.mark.props

PROFILE = profiles.load_profile()


def _replays_to(trace, invariant: str) -> None:
    """The trace replays (every action enabled) and its last step violates ``invariant``."""
    result = replay(trace, with_changes=False)
    assert result.matches_expectation
    assert invariant in [v.invariant for v in result.steps[-1].violations]


# --------------------------------------------------------------------------- (a) the default preset passes
def test_kafka_24_machine_finds_no_violation_and_is_not_vacuous():
    Machine = machine_for(preset("kafka-2.4").config, preset="kafka-2.4", name="Kafka24Machine")
    run_state_machine_as_test(Machine, settings=settings())  # the loaded profile's budget
    stats = Machine.stats
    assert stats["failures"] == 0
    assert stats["steps"] >= settings.default.max_examples
    # A passing run in which no HW moves and nothing is acknowledged proves nothing (STYLE 6).
    assert {"hw_advanced", "acked"} <= stats["witnesses"]
    # The replication kinds are not starved by the always-enabled ones.
    for kind in ("ElectController", "DeliverControlRequest", "Produce", "FetchRequest", "FetchResponse"):
        assert stats["kinds"].get(kind, 0) > 0, kind


# --------------------------------------------------------------------------- (b) a broken variant is caught
def test_no_kafka_8400_mutant_breaks_fetch_fencing_and_the_trace_replays(tmp_path):
    """KAFKA-8400 off: a fetch answered FENCED/UNKNOWN_LEADER_EPOCH still updates the follower's state.

    The deep historical presets (kafka-0.10.2, kafka-0.11, kafka-2.0, no-kafka-7128,
    crash-loses-unflushed) were out of the machine's reach with the one-kind rules and the settle macro
    alone (~50,000 machine steps, 25 s, found none; kafka-0.10.2 none in 60 s).  With the swarm_walk
    macro (run_machine's default) each is found in seconds in most seeds, kafka-0.10.2 in 3 of 4 seeds
    within 60 s (properties/machines.py); test_machine_finds_the_kafka_0_10_2_lost_write checks one.
    """
    cfg = preset("kafka-2.4").config.replace(kafka_8400=False)
    run = run_machine(cfg, seed=0, max_examples=2000, stateful_step_count=30,
                      invariants=[BY_NAME["fetch_fencing"]], time_budget_s=40, shrink_budget_s=15)
    assert run.violation is not None, f"not found in {run.examples} test cases ({run.seconds:.1f} s)"
    assert run.violation.invariant == "fetch_fencing"
    assert run.violation.step == len(run.actions)
    assert run.violation.facts["error"] in ("FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH")

    if run.error is not None:  # not cut short by the budget: the exception Hypothesis raised
        assert isinstance(run.error, AssertionError)
        assert type(run.error) is violation_type("fetch_fencing")
        assert str(run.error).startswith("invariant fetch_fencing violated after step")
        attached = trace_from_exception(run.error)
        assert attached.actions == run.actions
    trace = run.trace
    assert (trace.expect, trace.violated, trace.provenance["engine"]) == ("violation", "fetch_fencing", "hypothesis")

    # The attached JSON is the archive format: it round-trips through the schema and replays.
    trace = trace_from_json(json.loads(dumps_trace(trace)))
    _replays_to(trace, "fetch_fencing")
    path = tmp_path / "fetch-fencing.json"
    path.write_text(dumps_trace(trace))
    out = CliRunner().invoke(cli_main, ["replay", "--quiet", str(path)])
    assert out.exit_code == 1, out.output
    assert "VIOLATION fetch_fencing" in out.output and "as expected" in out.output

    # KAFKA-8400 is what breaks it: with the fix in, the same actions do not violate fetch_fencing.
    fixed = trace_from_json({**trace.to_json(), "config": preset("kafka-2.4").config.to_json()})
    try:
        result = replay(fixed, with_changes=False)
    except TraceError:
        pass  # the fixed model does not even allow this interleaving
    else:
        assert "fetch_fencing" not in [v.invariant for v in result.violations]


@pytest.mark.slow
def test_unflushed_single_replica_mutant_loses_an_acked_record():
    """acks=all with RF=1 (so min.insync.replicas=1 is met by the leader alone) and an unclean crash that
    loses the unflushed suffix: the re-elected leader lacks the acknowledged record (KIP-101 scenario 2)."""
    cfg = ModelConfig(n_brokers=1, replication_factor=1, crash_loses_unflushed_data=True)
    run = run_machine(cfg, seed=2, max_examples=4000, stateful_step_count=50,
                      invariants=[BY_NAME["acked_durability"]], time_budget_s=45, shrink_budget_s=15)
    assert run.violation is not None and run.violation.invariant == "acked_durability"
    _replays_to(run.trace, "acked_durability")


# --------------------------------------------------------------------------- (c) only enabled actions
def test_one_rule_per_action_kind_and_a_single_invariant():
    from isrlab.properties.machines import (ALTER_ISR_FAULT_KINDS, CONFIG_KINDS, DELAYED_FETCH_KINDS, EPOCH_ROUND_KINDS,
                                            EXPAND_WINDOW_KINDS, GATED_KINDS, JBOD_KINDS, ORPHAN_KINDS,
                                            KRAFT_KINDS, LEADERSHIP_KINDS, LOG_START_KINDS, REASSIGNMENT_KINDS,
                                            REQUEST_FAULT_KINDS, TOPIC_KINDS, rule_kinds)

    Machine = machine_for(preset("kafka-2.4").config)
    setup = Machine.setup_state()
    # without KIP-497 the AlterIsr kinds have no rule, nor ListOffsets without list_offsets: the machine draws
    # what it drew before they existed
    assert sorted(r.function.__name__ for r in setup.rules) == sorted(
        rule_name(k) for k in A.ACTION_TYPES if k not in GATED_KINDS)
    assert all(len(r.preconditions) == 1 for r in setup.rules)
    assert [i.function.__name__ for i in setup.invariants] == ["catalogue_holds"]
    cfg = preset("kafka-2.7").config.replace(list_offsets=True, fetch_from_follower=True)
    assert sorted(r.function.__name__ for r in machine_for(cfg).setup_state().rules) == sorted(
        rule_name(k) for k in A.ACTION_TYPES if k not in EPOCH_ROUND_KINDS and k not in KRAFT_KINDS
        and k not in LEADERSHIP_KINDS and k not in LOG_START_KINDS and k not in TOPIC_KINDS
        and k not in DELAYED_FETCH_KINDS and k not in REASSIGNMENT_KINDS and k not in EXPAND_WINDOW_KINDS
        and k not in ALTER_ISR_FAULT_KINDS and k not in ORPHAN_KINDS and k not in REQUEST_FAULT_KINDS
        and k not in CONFIG_KINDS and k not in JBOD_KINDS) == sorted(
        rule_name(k) for k in rule_kinds(cfg))
    kraft = preset("kafka-3.7").config                                 # KRaft's request faults: within their budgets
    assert not set(REQUEST_FAULT_KINDS) & set(rule_kinds(kraft))
    assert set(rule_kinds(kraft.replace(max_forged_alter_partitions=1, max_expired_heartbeats=1))) == \
        set(rule_kinds(kraft)) | set(REQUEST_FAULT_KINDS)
    topics = preset("topic-lifecycle").config                          # topics at run time: their six kinds too
    assert set(rule_kinds(topics)) == set(rule_kinds(preset("kafka-2.4").config)) | set(TOPIC_KINDS)
    waiting = cfg.replace(delayed_fetch=True)                          # the fetch purgatory: its two kinds too
    assert set(rule_kinds(waiting)) == set(rule_kinds(cfg)) | set(DELAYED_FETCH_KINDS)
    assert {rule_name(k) for k in DELAYED_FETCH_KINDS} <= {
        r.function.__name__ for r in machine_for(waiting).setup_state().rules}
    moving = cfg.replace(kip_497=False, max_reassignments=1)           # reassignment: its three kinds too
    assert set(REASSIGNMENT_KINDS) <= set(rule_kinds(moving))
    split = cfg.replace(offsets_for_leader_epoch_in_flight=True)      # the round in two steps: its halves too
    assert set(rule_kinds(split)) == set(rule_kinds(cfg)) | set(EPOCH_ROUND_KINDS)
    budgets = cfg.replace(max_delete_records=1, max_retention_runs=1)   # DeleteRecords and retention: budgets given
    assert set(rule_kinds(budgets)) == set(rule_kinds(cfg)) | set(LOG_START_KINDS)
    kraft = preset("kafka-3.7").config                                 # an admin's config changes: given a budget
    assert set(rule_kinds(kraft.replace(max_config_changes=1))) == set(rule_kinds(kraft)) | set(CONFIG_KINDS)
    with pytest.raises(TypeError):
        ModelMachine()


@pytest.mark.parametrize("focus", [True, False])
def test_rule_groups_are_the_enabled_actions(focus):
    cfg = preset("kafka-2.4").config
    m = machine_for(cfg, focus=focus)()
    for i in range(60):
        enabled = enabled_actions(cfg, m.state)
        offered = [a for group in m.enabled_by_kind().values() for a in group]
        if focus:
            assert set(offered) <= set(enabled)
            assert {type(a) for a in enabled} - {type(a) for a in offered} <= {A.Produce, A.ConsumerFetch}
        else:
            assert offered == list(enabled)
        kinds = list(m.enabled_by_kind())
        group = m.enabled_by_kind()[kinds[i % len(kinds)]]
        m.apply(group[i % len(group)])
    assert len(m.trace) == 60


@pytest.mark.parametrize("name", ["kafka-2.4", "kafka-0.10.2", "crash-loses-unflushed"])
def test_machine_only_ever_applies_enabled_actions(name):
    cfg = preset(name).config
    traces = []

    class Recording(machine_for(cfg, invariants=(), track_witnesses=False)):
        def teardown(self):
            traces.append(list(self.trace))

    run_state_machine_as_test(Recording, settings=settings(max_examples=30, stateful_step_count=40))
    stats = Recording.stats
    assert stats["not_enabled"] == 0
    assert stats["rule_calls"] == stats["steps"] == sum(map(len, traces)) > 0
    for actions in traces:
        s = initial_state(cfg)
        for a in actions:
            s = step(cfg, s, a)
            assert s is not None


def test_invariant_failure_names_the_invariant_and_carries_the_trace():
    # A state invariant that fails on the initial state: the smallest failure there is.
    broken = Invariant("always_fails", ALWAYS, STATE, lambda cfg, s: {"why": "test"}, "fails", "test")
    Machine = machine_for(preset("kafka-2.4").config, invariants=[broken])
    m = Machine()
    with pytest.raises(InvariantViolated) as info:
        m.catalogue_holds()
    e = info.value
    assert isinstance(e, AssertionError) and e.violation.invariant == "always_fails"
    assert str(e).startswith('invariant always_fails violated in the initial state: {"why": "test"}')
    data = json.loads(e.__notes__[-1])
    assert (data["format"], data["violated"], data["actions"]) == ("isrlab-trace", "always_fails", [])
    assert Machine.last_failure == (e.violation, [])


def test_run_machine_passes_on_kafka_24_and_unpacks():
    violation, actions = run = run_machine(preset("kafka-2.4").config, seed=1, max_examples=10,
                                           stateful_step_count=20)
    assert violation is None and actions == [] and run.trace is None
    assert run.steps > 0 and run.rule_calls == run.steps and not run.stopped_early


def test_catalogue_machine_checks_the_catalogue_itself():
    assert machine_for(preset("kafka-2.4").config).checked_invariants is CATALOGUE


# --------------------------------------------------------------------------- (d) profile selection
_SHOW = ("import json; from hypothesis import settings; from isrlab.properties import profiles; "
         "name = profiles.load_profile(); s = settings.default; "
         "print(json.dumps({'name': name, 'max_examples': s.max_examples, 'steps': s.stateful_step_count, "
         "'derandomize': s.derandomize, 'database': repr(s.database), 'deadline': repr(s.deadline)}))")


def _show(profile: str | None, ci_env: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in (profiles.ENV_VAR, "CI")}
    if ci_env:
        env["CI"] = "true"  # Hypothesis then loads its own CI settings as every profile's parent
    if profile is not None:
        env[profiles.ENV_VAR] = profile
    return subprocess.run([sys.executable, "-c", _SHOW], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("ci_env", [False, True], ids=["local", "CI=true"])
def test_profile_is_selected_by_environment_variable(ci_env):
    ci = _show("ci", ci_env)
    assert ci.returncode == 0, ci.stderr
    got = json.loads(ci.stdout)
    assert got == {"name": "ci", "max_examples": 200, "steps": 50, "derandomize": True, "database": "None",
                   "deadline": "None"}
    dev = json.loads(_show(None, ci_env).stdout)
    assert (dev["name"], dev["derandomize"], dev["max_examples"]) == ("dev", False, 100)
    nightly = json.loads(_show("nightly", ci_env).stdout)
    assert (nightly["name"], nightly["max_examples"], nightly["steps"]) == ("nightly", 2000, 100)
    bad = _show("turbo", ci_env)
    assert bad.returncode != 0 and "turbo" in bad.stderr and "dev, ci, nightly" in bad.stderr


def test_this_session_runs_under_the_selected_profile():
    assert PROFILE == (os.environ.get(profiles.ENV_VAR) or "dev")
    assert settings.default.deadline is None


# --------------------------------------------------------------------------- (e) the settle macro
def test_settle_control_plane_runs_the_control_plane_to_quiescence_checking_each_step():
    from isrlab.properties.machines import SETTLE_KINDS, rule_kinds

    cfg = preset("kafka-2.4").config
    Machine = machine_for(cfg, settle=True)
    names = {r.function.__name__ for r in Machine.setup_state().rules}
    assert names == {rule_name(k) for k in rule_kinds(cfg)} | {"settle_control_plane"}
    m = Machine()
    m.apply(A.ElectController(0))
    m.catalogue_holds()
    assert m.settle_enabled()
    m.settle_control_plane()
    assert not m.settle_enabled() and not any(k in m.enabled_by_kind() for k in SETTLE_KINDS)
    assert all(type(a) in SETTLE_KINDS for a in m.trace[1:]) and len(m.trace) > 3
    assert m._checked == len(m.trace)  # every step of the macro was checked, not only the last
    # the same state as applying the deliveries one by one through the model
    s = initial_state(cfg)
    for a in m.trace:
        s = step(cfg, s, a)
    assert s == m.state


def test_a_violation_inside_the_settle_macro_is_reported_at_its_own_step():
    """The archived kafka-0.10.2 loss happens on a LeaderAndIsr delivery: settle stops right there."""
    import glob

    from isrlab.model.trace import load_trace
    from isrlab.properties.invariants import BY_NAME
    from isrlab.properties.machines import InvariantViolated, SETTLE_KINDS
    from isrlab.properties.shrink import first_violation

    archive = os.path.join(os.path.dirname(__file__), "..", "counterexamples")
    path = sorted(glob.glob(os.path.join(archive, "*-kafka-0.10.2-acked_durability-*.json")))[0]
    trace = load_trace(path)
    cfg = trace.config
    last_other = max(i for i, a in enumerate(trace.actions) if type(a) not in SETTLE_KINDS)
    m = machine_for(cfg, (BY_NAME["acked_durability"],), settle=True)()
    for a in trace.actions[:last_other + 1]:
        m.apply(a)
        m.catalogue_holds()
    with pytest.raises(InvariantViolated) as info:
        m.settle_control_plane()
    v = info.value.violation
    assert v.invariant == "acked_durability" and v.step == len(m.trace) > last_other + 1
    assert type(m.trace[-1]) in SETTLE_KINDS
    assert first_violation(cfg, m.trace, "acked_durability")[0] == v.step


# --------------------------------------------------------------------------- (f) the swarm macro
def test_swarm_walk_applies_policy_chosen_enabled_actions_checking_each_step():
    import random

    from isrlab.properties.machines import rule_kinds, swarm_walk
    from isrlab.properties.walker import Policy

    cfg = preset("kafka-0.10.2").config
    Machine = machine_for(cfg, settle=True, swarm=True)
    names = {r.function.__name__ for r in Machine.setup_state().rules}
    assert names == {rule_name(k) for k in rule_kinds(cfg)} | {"settle_control_plane", "swarm_walk"}
    assert "swarm_walk" not in {r.function.__name__ for r in machine_for(cfg).setup_state().rules}
    m = Machine()
    m.catalogue_holds()
    m.swarm_walk(seed=12345, steps=30)
    assert 0 < len(m.trace) <= 30 and m._checked == len(m.trace)  # every step checked, not only the last
    # exactly the walk the policy makes from that seed
    policy, s, expected = Policy(cfg, random.Random(12345)), initial_state(cfg), []
    for _ in range(30):
        groups = enabled_groups(cfg, s, policy.kinds)
        if not groups:
            break
        expected.append(policy.choose(groups, s, expected[-1] if expected else None))   # a composite run's last
        s = step(cfg, s, expected[-1])
    assert m.trace == expected and m.state == s
    assert swarm_walk.__doc__ and "swarm" in swarm_walk.__doc__


#: For each breaking preset the machine reaches: (max_examples, seeds), as measured with Hypothesis 6.170.
#: Seeded and bounded by a count of test cases, not by time, and ``run_machine`` keeps Hypothesis from
#: drawing literals out of whichever modules are loaded, so the outcome is the same on any machine and
#: under any test selection for a given Hypothesis version and model (max_examples is part of the
#: setting: Hypothesis's generation depends on it).  Test cases to the first violation, invalid ones
#: included, since the swarm policy's fault targeting (walker.P_TARGETED) moved every swarm_walk: kafka-0.11
#: and kafka-2.0 seed 0 at 290, seed 1 at 159; crash-loses-unflushed seed 0 at 91, seed 1 at 24;
#: no-kafka-7128 seed 0 at 178, seed 1 at 12; kafka-0.10.2 (max 1500) seed 1 at 1991, seed 2 at 865, seed 0
#: not within 1500.  The second seed is there in case a model change moves the first one's find.
#: Not listed (out of the machine's reach, tests/test_fuzz.py's guided search finds them): no-kip-320 and
#: no-kafka-7164 (KAFKA-6880's divergence), none of seeds 0-8 within 1500 test cases before the targeting
#: (about 330k steps each) nor of seeds 0-3 after; no-kafka-7415, found by seed 1 of seeds 0-13 before the
#: targeting and by none of seeds 0-23 and 30-37 after (about 330k steps each).  KIP-497: no-kafka-13091's
#: shrink commit that leaves the HW behind, seed 1 at 187 test cases, seed 2 at 1951 (seed 0 not within 1500); since
#: the AlterIsr handling is a step of its own and half the swarm walks take exchanges whole, seed 0 at 393, seed 3
#: at 262 (seeds 1 and 2 not within 1500);
#: kafka-2.7's, seed 1 at 187, seed 2 at 663 (seed 0 not within 1500).  no-kafka-12686 (a LeaderAndIsr
#: between an AlterIsr and its answer, then a new proposal) by none of seeds 0-2 within 1500 test cases
#: (about 350k steps each); the guided search finds it in about 1 s (its AlterIsr race cell field).
#: no-kafka-5634 seed 0 at 4 test cases, seed 1 at 8, seed 2 at 4; no-kafka-9491 seed 0 at 4, seed 1 at 12, seed 2 at 4;
#: no-kafka-2143 seed 0 at 172, seed 1 at 460, seed 2 at 589 (kafka-0.10.2's committed_prefix, not KAFKA-2143's race);
#: old-message-format seed 2 at 692 (about 40 s), seeds 0, 1, 3 and 4 not within 600 (2026-11-25, benchmarks/RESULTS.md's
#: 2026-11-25).  no-kafka-14010 (2026-11-29): seed 0 at 32 test cases, seed 1 at 388, seed 2 at 156, seed 3 at 60.
MACHINE_FINDS = {
    "kafka-0.11": (600, (0, 1)),
    "kafka-2.0": (600, (0, 1)),
    "crash-loses-unflushed": (600, (0, 1)),
    "no-kafka-7128": (600, (0, 1)),
    "no-kafka-6082": (600, (0, 1)),
    "kafka-0.10.2": (1500, (1, 2)),
    "no-kafka-13091": (1500, (0, 3)),
    "kafka-2.7": (1500, (1, 2)),
    "no-kafka-14010": (600, (0, 3)),
    "no-kafka-14704": (600, (0, 1)),
    "no-kafka-13141": (600, (0, 1)),
    "kafka-3.3": (600, (0, 1)),
    "no-kafka-13916": (600, (0, 1)),
    "kraft-no-isr-join-hw-check": (600, (0, 1)),
    "no-kafka-15583": (600, (0, 1)),
    "kafka-3.7-lossy-crash": (1500, (2, 3)),
    "kraft-no-partition-epoch-check": (600, (0, 1)),
    "kafka-3.7-disk-wipe": (600, (0, 1)),
    "no-kafka-5634": (600, (0, 1)),
    "no-kafka-9491": (600, (0, 1)),
    "no-kafka-2143": (600, (0, 1)),
    "old-message-format": (600, (2,)),
}


@pytest.mark.parametrize("name", sorted(MACHINE_FINDS))
def test_machine_finds_the_breaking_presets_headline_violation(name):
    """run_machine's defaults (settle + swarm macros) find the preset's headline invariant, and the trace replays."""
    p = preset(name)
    max_examples, seeds = MACHINE_FINDS[name]
    for seed in seeds:
        run = run_machine(p.config, seed=seed, max_examples=max_examples, stateful_step_count=60,
                          invariants=[BY_NAME[p.expected]], shrink=False)
        if run.violation is not None:
            assert run.violation.invariant == p.expected and run.violation.step == len(run.actions)
            _replays_to(run.trace, p.expected)
            return
    pytest.fail(f"{name}: {p.expected} not found by the machine in seeds {seeds} of {max_examples} test cases")


def test_every_breaking_preset_the_machine_misses_is_named():
    """A new breaking preset must be measured for the machine (added to MACHINE_FINDS) or named as out of reach."""
    # kafka-2.8: its headline (kafka-2.7's KAFKA-13091) was found at seed 0 of 1500 test cases, but after 398 s on
    # a loaded machine: too slow for the suite; kafka-2.7 measures the same bug.
    # no-kafka-7786: a liveness headline, found by the machine's teardown settle only; not measured yet.
    # no-kip-903: not found by the guided search either (tests/test_fuzz.py's NOT_FOUND_YET).
    # no-kafka-14140, no-kafka-15221: not measured for the machine yet (the walker finds the first in about
    # a second; the second needs a whole reboot inside the leader's expansion, see benchmarks/RESULTS.md).
    # no-kafka-19522: none of seeds 0-2 within 600 test cases (2026-11-29; the guided search finds it in 119 steps:
    # a fenced last known leader elected at its registration, then its next unclean restart).
    out_of_reach = {"no-kip-320", "no-kafka-7164", "no-kafka-7415", "no-kafka-12686", "kafka-2.8", "no-kafka-7786",
                    "no-kip-903", "no-kafka-14140", "no-kafka-15221", "no-kafka-19522"}
    breaking = {n for n, p in PRESETS.items() if p.expected != "pass"}
    assert breaking == set(MACHINE_FINDS) | out_of_reach


_MACHINE_SUMMARY = (
    "import json, sys\n"
    "if sys.argv[1] == 'more': import isrlab.properties.profiles, isrlab.cli  # local modules full of literals\n"
    "from isrlab.model.config import preset\n"
    "from isrlab.properties.machines import run_machine\n"
    "r = run_machine(preset('kafka-0.10.2').config, seed=5, max_examples=25, stateful_step_count=30, invariants=())\n"
    "print(json.dumps([r.examples, r.steps, r.kinds]))\n"
)


def test_run_machine_does_not_depend_on_which_modules_are_loaded():
    """A seed gives the same run whether or not more of our modules are imported (Hypothesis's local constants)."""
    outs = []
    for mode in ("less", "more"):
        out = subprocess.run([sys.executable, "-c", _MACHINE_SUMMARY, mode], capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stderr
        outs.append(json.loads(out.stdout))
    assert outs[0] == outs[1] and outs[0][1] > 100


def test_machine_reports_the_error_codes_its_actions_produced():
    """Error-code coverage of a machine run (campaigns' coverage table includes the hypothesis engine)."""
    from isrlab.campaign import CampaignSpec, error_names, run_one

    run = run_machine(preset("kafka-2.4").config, seed=1, max_examples=40, stateful_step_count=30)
    names = error_names(run.errors_seen)
    assert "NOT_LEADER_FOR_PARTITION" in names and "STALE_CONTROLLER_EPOCH" in names
    spec = CampaignSpec(presets=("kafka-2.4",), engine="hypothesis", runs=1, max_steps=20)
    out = run_one(spec, "kafka-2.4", 1)
    assert out.errors_seen != 0 and error_names(out.errors_seen)


def _raised(make, context=None, cause=None):
    """An exception from make(), raised with the given context and cause, caught and returned."""
    try:
        try:
            if context is not None:
                raise context
        except BaseException:
            if cause is not None:
                raise make() from cause
            raise make()
        raise make()
    except BaseException as e:
        return e


def test_budget_is_recognised_through_any_cause_context_or_group():
    """A Flaky error Hypothesis raises while a BudgetExhausted unwinds counts as the budget, however it is linked."""
    from hypothesis.errors import FlakyStrategyDefinition

    from isrlab.properties.machines import BudgetExhausted, _caused_by_budget

    flaky = lambda: FlakyStrategyDefinition("stopped drawing earlier")  # noqa: E731
    assert _caused_by_budget(BudgetExhausted())
    assert _caused_by_budget(_raised(flaky, context=BudgetExhausted()))
    # an explicit cause hides the context from `__cause__ or __context__`; both links are searched
    assert _caused_by_budget(_raised(flaky, context=BudgetExhausted(), cause=ValueError("inner")))
    assert _caused_by_budget(BaseExceptionGroup("two", [ValueError("x"), BudgetExhausted()]))
    assert not _caused_by_budget(_raised(flaky, context=ValueError("x")))
    assert not _caused_by_budget(ValueError("x"))


def test_a_flaky_error_after_the_deadline_is_the_budget_and_before_it_is_not():
    """Past the deadline every rule raises BudgetExhausted, so a replay ending early is the budget's doing."""
    import time

    from hypothesis.errors import FlakyStrategyDefinition

    from isrlab.properties.machines import _caused_by_budget

    e = FlakyStrategyDefinition("The second run stopped drawing earlier than the first run")
    assert _caused_by_budget(e, deadline=time.perf_counter() - 1.0)
    assert not _caused_by_budget(e, deadline=time.perf_counter() + 60.0)
    assert not _caused_by_budget(e, deadline=None)
    assert not _caused_by_budget(ValueError("not Hypothesis's"), deadline=time.perf_counter() - 1.0)


# --------------------------------------------------------------------------- should_stop (a campaign's budget)
def _stop_after(n: int, calls: list):
    """A should_stop that is True from its n-th call on (a counter, not a clock); ``calls`` counts them."""
    def should_stop() -> bool:
        calls.append(1)
        return len(calls) >= n
    return should_stop


def test_should_stop_ends_a_machine_run_inside_a_long_test_case():
    """Asked before every action: a run of 1,000,000-step test cases stops at once, passing and marked stopped."""
    calls: list = []
    run = run_machine(preset("kafka-2.4").config, seed=3, max_examples=100, stateful_step_count=10**6,
                      should_stop=_stop_after(300, calls))
    assert run.stopped_early and run.violation is None and run.actions == []
    assert run.steps == 299 and len(calls) == 300     # the 300th check stopped it, before its action
    assert run.examples >= 1


def test_should_stop_cuts_hypothesis_shrinking_short_with_the_shortest_failure_so_far(monkeypatch):
    """Once a test case failed, should_stop still ends the run (during Hypothesis's shrinking): the shortest
    failing test case seen so far comes back, replays to the violation, and the run says it was stopped."""
    cfg = preset("kafka-2.4").config.replace(kafka_8400=False)
    kwargs = dict(seed=0, max_examples=2000, stateful_step_count=30, invariants=[BY_NAME["fetch_fencing"]])
    calls: list = []
    first_failure_at: list = []
    original_fail = ModelMachine._fail

    def fail(self, found):
        if not first_failure_at:
            first_failure_at.append(len(calls))
        original_fail(self, found)

    monkeypatch.setattr(ModelMachine, "_fail", fail)
    full = run_machine(cfg, should_stop=_stop_after(10**12, calls), **kwargs)
    assert full.violation is not None and not full.stopped_early and first_failure_at
    assert len(calls) > first_failure_at[0] + 100, "shrinking took too few steps to cut it short"

    cut_calls: list = []
    cut = run_machine(cfg, should_stop=_stop_after(first_failure_at[0] + 100, cut_calls), **kwargs)
    assert cut.stopped_early and len(cut_calls) == first_failure_at[0] + 100
    assert cut.violation is not None and cut.violation.invariant == "fetch_fencing"
    assert len(cut.actions) >= len(full.actions)
    _replays_to(cut.trace, "fetch_fencing")


def test_the_hypothesis_engine_of_a_campaign_run_honours_should_stop():
    """campaign.run_one hands its should_stop to the machine (it once did not: a 30 s budget became 83 s)."""
    from isrlab.campaign import CampaignSpec, run_one

    spec = CampaignSpec(presets=("kafka-2.4",), engine="hypothesis", runs=1, max_steps=10**6)
    calls: list = []
    r = run_one(spec, "kafka-2.4", 7, should_stop=_stop_after(50, calls))
    assert r.stopped and r.steps == 49 and r.violation is None
