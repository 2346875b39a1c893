"""The trace shrinker (properties/shrink.py): validity, 1-minimality, determinism, field simplification."""

from __future__ import annotations

from pathlib import Path

import pytest

from isrlab.model import actions as A
from isrlab.model.config import ModelConfig
from isrlab.model.step import initial_state, step
from isrlab.model.trace import Trace, load_trace
from isrlab.properties import invariants as I
from isrlab.properties.replay import replay
from isrlab.properties.shrink import first_violation, shrink
from isrlab.properties.walker import walk

pytestmark = pytest.mark.unit

SCENARIO_10A = Path(__file__).resolve().parent / "scenarios" / "10a-kip101-hw-truncation-loses-acked-record.json"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: a mutant whose fetch_fencing invariant breaks (KAFKA-8400 switched off).
MUTANT = ModelConfig(kafka_8400=False)
BUDGET_S = 60.0  # generous: these shrinks take well under a second; a budget stop fails the tests


def _walker_failures(n: int, cfg: ModelConfig = MUTANT, invariant: str = "fetch_fencing", seeds=range(300),
                     max_steps: int = 400) -> list:
    """The first n seeded walks (fixed seeds, so deterministic) that violate ``invariant``.

    Only that invariant is checked, so a violation of another one cannot end a walk first.
    """
    out = []
    for seed in seeds:
        r = walk(cfg, seed, max_steps, invariants=(I.BY_NAME[invariant],))
        if r.violation is not None:
            assert r.violation.invariant == invariant
            out.append(r)
            if len(out) == n:
                return out
    pytest.fail(f"fewer than {n} walker violations of {invariant} in seeds {seeds}")


def _walker_failure():
    return _walker_failures(1)[0]


def _assert_valid_and_failing(cfg, actions, invariant):
    """Replayed from scratch: every action enabled, the invariant fails at the last step (and not before)."""
    fv = first_violation(cfg, actions, invariant)
    assert fv is not None
    assert fv[0] == len(actions) and fv[1].invariant == invariant and fv[1].step == len(actions)
    inv = I.BY_NAME[invariant]
    checked = I.CATALOGUE if inv in I.CATALOGUE else I.CATALOGUE + (inv,)   # synthetic ones too
    result = replay(Trace(config=cfg, actions=list(actions), expect="violation", violated=invariant),
                    invariants=checked, with_changes=False)
    assert result.matches_expectation
    assert any(v.invariant == invariant and v.step == len(actions) for v in result.violations)


def _assert_one_minimal(cfg, actions, invariant):
    """Deleting any single action leaves some action not enabled or makes the violation disappear."""
    for i in range(len(actions)):
        assert first_violation(cfg, actions[:i] + actions[i + 1:], invariant) is None, (
            f"deleting action {i + 1} ({A.describe(actions[i])}) still violates {invariant}")


def _assert_two_minimal(cfg, actions, invariant):
    """Deleting any two actions leaves some action not enabled or makes the violation disappear."""
    for j in range(len(actions)):
        for i in range(j):
            cand = actions[:i] + actions[i + 1:j] + actions[j + 1:]
            assert first_violation(cfg, cand, invariant) is None, (
                f"deleting actions {i + 1} and {j + 1} ({A.describe(actions[i])}, {A.describe(actions[j])}) "
                f"still violates {invariant}")


def _assert_closed_under_skipping(cfg, actions, invariant):
    """Deleting any one action, and with it every later action that is then not enabled, makes the violation
    disappear."""
    for i in range(len(actions)):
        s, applied = initial_state(cfg), []
        for j, a in enumerate(actions):
            s2 = step(cfg, s, a) if j != i else None
            if s2 is not None:
                applied.append(a)
                s = s2
        assert first_violation(cfg, applied, invariant) is None, (
            f"deleting action {i + 1} ({A.describe(actions[i])}) and the {len(actions) - 1 - len(applied)} "
            f"later actions it disables still violates {invariant}")


# --------------------------------------------------------------------------- first_violation
def test_first_violation_truncates_after_the_violation_and_ignores_the_rest():
    r = _walker_failure()
    inv = r.violation.invariant
    fv = first_violation(MUTANT, r.actions, inv)
    assert fv is not None
    index, v = fv
    assert index == r.violation.step == len(r.actions)
    assert v.invariant == inv and v.facts == r.violation.facts
    # actions after the violation are never applied, so they need not be enabled
    tail = [A.Tick(10 ** 9), A.BrokerRestart(0)]
    assert first_violation(MUTANT, r.actions + tail, inv)[0] == index


def test_first_violation_none_when_not_enabled_or_not_violated():
    r = _walker_failure()
    inv = r.violation.invariant
    assert first_violation(MUTANT, r.actions[:-1], inv) is None          # stops before the violation
    assert first_violation(MUTANT, [A.BrokerRestart(0)] + r.actions, inv) is None  # not enabled
    with pytest.raises(ValueError):
        first_violation(MUTANT, r.actions, "no_such_invariant")


# --------------------------------------------------------------------------- (a) real walker failures
def test_shrinks_walker_failures_to_one_and_two_minimal_traces():
    for r in _walker_failures(3):
        inv = r.violation.invariant
        res = shrink(MUTANT, r.actions, inv, time_budget_s=BUDGET_S)
        assert not res.stopped_early
        assert res.original_length == len(r.actions)
        assert res.shrunk_length == len(res.actions) <= res.original_length
        assert res.shrunk_length < res.original_length
        assert res.violation is not None and res.violation.invariant == inv
        assert res.tests_run > 0 and res.seconds >= 0
        _assert_valid_and_failing(MUTANT, res.actions, inv)
        _assert_one_minimal(MUTANT, res.actions, inv)
        _assert_two_minimal(MUTANT, res.actions, inv)


def test_shrinks_a_guided_search_failure_to_a_two_minimal_trace():
    """kafka-0.11's KAFKA-7128 as the guided search found it (held-out campaign seed 18, 116 actions, kept in
    tests/fixtures so that changes to the search's schedule leave it alone): deleting single actions stops at 29,
    where two actions far apart can still go together."""
    t = load_trace(str(FIXTURES / "kafka-0.11-isr_entry_condition-guided-unshrunk.json"))
    assert len(t.actions) == 116 and first_violation(t.config, t.actions, "isr_entry_condition") is not None
    res = shrink(t.config, t.actions, "isr_entry_condition", time_budget_s=BUDGET_S)
    assert not res.stopped_early and res.shrunk_length < len(t.actions)
    _assert_valid_and_failing(t.config, res.actions, "isr_entry_condition")
    _assert_two_minimal(t.config, res.actions, "isr_entry_condition")


def test_deleting_an_action_takes_the_actions_it_disables_with_it():
    """no-kafka-7128's KAFKA-7128 as the guided search found it (campaign seed 14, 126 actions): plain, group and
    pair deletion stop at 35 actions, where deleting one action and every later one it leaves not enabled still
    fails; the skipping pass goes on to a trace closed under that move."""
    t = load_trace(str(FIXTURES / "no-kafka-7128-isr_entry_condition-guided-unshrunk.json"))
    assert len(t.actions) == 126
    res = shrink(t.config, t.actions, "isr_entry_condition", time_budget_s=BUDGET_S)
    assert not res.stopped_early and res.accepted.get("skip", 0) > 0
    _assert_valid_and_failing(t.config, res.actions, "isr_entry_condition")
    _assert_closed_under_skipping(t.config, res.actions, "isr_entry_condition")
    _assert_two_minimal(t.config, res.actions, "isr_entry_condition")


# --------------------------------------------------------------------------- (b) the hand-made KIP-101 trace
def test_shrinks_the_kip101_scenario(record_property):
    trace = load_trace(str(SCENARIO_10A))
    assert trace.preset == "kafka-0.10.2" and trace.violated == "acked_durability"
    res = shrink(trace.config, trace.actions, trace.violated, time_budget_s=BUDGET_S)
    record_property("kip101_original_length", res.original_length)
    record_property("kip101_shrunk_length", res.shrunk_length)
    assert not res.stopped_early
    assert res.original_length == len(trace.actions)
    assert res.shrunk_length <= res.original_length
    _assert_valid_and_failing(trace.config, res.actions, trace.violated)
    _assert_one_minimal(trace.config, res.actions, trace.violated)


# --------------------------------------------------------------------------- (c) determinism
@pytest.mark.parametrize("reorder", [False, True])
def test_shrinking_is_deterministic(reorder):
    r = _walker_failure()
    inv = r.violation.invariant
    a = shrink(MUTANT, r.actions, inv, time_budget_s=BUDGET_S, reorder=reorder)
    b = shrink(MUTANT, list(r.actions), inv, time_budget_s=BUDGET_S, reorder=reorder)
    assert a.actions == b.actions and a.tests_run == b.tests_run and a.violation == b.violation
    trace = load_trace(str(SCENARIO_10A))
    c = shrink(trace.config, trace.actions, trace.violated, time_budget_s=BUDGET_S, reorder=reorder)
    d = shrink(trace.config, trace.actions, trace.violated, time_budget_s=BUDGET_S, reorder=reorder)
    assert c.actions == d.actions and c.tests_run == d.tests_run


def test_shrinking_a_shrunk_trace_changes_nothing():
    r = _walker_failure()
    inv = r.violation.invariant
    a = shrink(MUTANT, r.actions, inv, time_budget_s=BUDGET_S)
    b = shrink(MUTANT, a.actions, inv, time_budget_s=BUDGET_S)
    assert b.actions == a.actions


# --------------------------------------------------------------------------- (d) bad input
def test_a_trace_that_does_not_violate_raises():
    cfg = ModelConfig()
    actions = [A.ElectController(0)]
    s = step(cfg, initial_state(cfg), actions[0])
    assert s is not None
    with pytest.raises(ValueError, match="does not violate"):
        shrink(cfg, actions, "acked_durability")
    with pytest.raises(ValueError, match="not enabled"):
        shrink(cfg, [A.BrokerRestart(0)], "acked_durability")
    with pytest.raises(ValueError, match="unknown invariant"):
        shrink(cfg, actions, "no_such_invariant")
    with pytest.raises(ValueError):
        shrink(cfg, actions, "acked")  # a 'sometimes' witness


def test_budget_stops_early_with_a_valid_trace():
    r = _walker_failure()
    inv = r.violation.invariant
    res = shrink(MUTANT, r.actions, inv, max_tests=3)
    assert res.stopped_early and res.tests_run <= 3
    assert res.shrunk_length <= res.original_length
    _assert_valid_and_failing(MUTANT, res.actions, inv)


# --------------------------------------------------------------------------- should_stop inside the passes
def _long_clock_trace(monkeypatch, ticks: int = 1000, ms: int = 2):
    """A trace of ``ticks`` small ticks that breaks a synthetic ``clock_below_2000`` at its last step, and a
    list whose only item counts the invariant's checks (one per replayed step)."""
    cfg = ModelConfig()
    t0 = cfg.start_time_ms
    checks = [0]

    def check(cfg, s):
        checks[0] += 1
        return {"now": s.now} if s.now >= t0 + 2000 else None

    _synthetic(monkeypatch, "clock_below_2000", check)
    tasks = [A.IsrExpiration(b) for b in range(3)] + [A.IsrChangePropagation(b) for b in range(3)]
    actions = tasks + [A.Tick(ms)] * ticks
    assert first_violation(cfg, actions, "clock_below_2000")[0] == len(actions)
    checks[0] = 0
    return cfg, actions, checks


def test_should_stop_is_asked_at_least_every_check_stride_of_replayed_steps(monkeypatch):
    """Every pass (bfs included) asks should_stop before each candidate and every CHECK_EVERY replayed steps."""
    from isrlab.properties.budget import CHECK_EVERY

    cfg, actions, checks = _long_clock_trace(monkeypatch)
    marks = []   # replayed steps so far, at each call of should_stop

    def should_stop():
        marks.append(checks[0])
        return False

    res = shrink(cfg, actions, "clock_below_2000", time_budget_s=None, should_stop=should_stop, bfs_states=1000)
    assert not res.stopped_early and res.shrunk_length < len(actions) // 10
    gaps = [b - a for a, b in zip([0] + marks, marks + [checks[0]])]
    assert max(gaps) <= CHECK_EVERY, max(gaps)


@pytest.mark.parametrize("calls", [2, 40, 400])
def test_should_stop_ends_shrinking_inside_a_replay_with_what_an_unbounded_shrink_did_first(monkeypatch, calls):
    """Stopped at its n-th call (2: inside the first replay of the trace), the shrinker stops there, having done
    exactly what a shrink that never stops does up to that call; its result is the input or a failing trace."""
    cfg, actions, checks = _long_clock_trace(monkeypatch)
    unbounded = []
    shrink(cfg, actions, "clock_below_2000", time_budget_s=None,
           should_stop=lambda: unbounded.append(checks[0]) or False)
    checks[0] = 0
    marks = []

    def should_stop():
        marks.append(checks[0])
        return len(marks) >= calls

    res = shrink(cfg, actions, "clock_below_2000", time_budget_s=None, should_stop=should_stop)
    assert res.stopped_early and len(marks) == calls
    assert marks == unbounded[:calls] and checks[0] == marks[-1]   # nothing replayed after the stop
    if calls == 2:
        assert res.violation is None and res.actions == actions and res.tests_run == 0
    else:
        assert res.violation is not None and res.shrunk_length <= len(actions)
        _assert_valid_and_failing(cfg, res.actions, "clock_below_2000")


# --------------------------------------------------------------------------- field simplification
def _synthetic(monkeypatch, name, check):
    """Register a throw-away state invariant so that field passes can be tested in isolation."""
    monkeypatch.setitem(I.BY_NAME, name, I.Invariant(name, I.ALWAYS, I.STATE, check, "test only", "test"))


def test_ticks_are_merged_and_shrunk(monkeypatch):
    cfg = ModelConfig()
    t0 = cfg.start_time_ms
    _synthetic(monkeypatch, "clock_below_1700", lambda cfg, s: {"now": s.now} if s.now >= t0 + 1700 else None)
    # every live broker's isr-expiration and isr-change-propagation tasks are due at start-up: the clock
    # cannot advance before they run
    tasks = [A.IsrExpiration(b) for b in range(3)] + [A.IsrChangePropagation(b) for b in range(3)]
    actions = tasks + [A.Tick(1000), A.Tick(1000)]
    assert first_violation(cfg, actions, "clock_below_1700")[0] == len(actions)
    res = shrink(cfg, actions, "clock_below_1700", time_budget_s=BUDGET_S)
    ticks = [a.ms for a in res.actions if type(a) is A.Tick]
    assert ticks == [1700]          # two ticks merged, then cut down to the least that still fails
    assert res.shrunk_length <= len(tasks) + 1
    _assert_valid_and_failing(cfg, res.actions, "clock_below_1700")
    _assert_one_minimal(cfg, res.actions, "clock_below_1700")


def test_fields_move_towards_their_canonical_values(monkeypatch):
    cfg = ModelConfig()
    _synthetic(monkeypatch, "no_crash", lambda cfg, s: {"crashes": s.ghost.crashes} if s.ghost.crashes else None)
    res = shrink(cfg, [A.ElectController(0), A.BrokerCrash(1, True)], "no_crash", time_budget_s=BUDGET_S)
    assert res.actions == [A.BrokerCrash(1, False)]
    _synthetic(monkeypatch, "nothing_produced",
               lambda cfg, s: {"produced": s.ghost.produced} if s.ghost.produced else None)
    # a produce only counts when it reaches the leader: bring the cluster up first (scenario 10a's first
    # ten actions: controller 2 elected, every control request delivered, broker 0 leads)
    trace = load_trace(str(SCENARIO_10A))
    cfg = trace.config
    bring_up = list(trace.actions[:10])
    actions = bring_up + [A.Produce(0, 0, 1), A.Tick(1000)]
    fv = first_violation(cfg, actions, "nothing_produced")
    assert fv is not None and fv[0] == len(bring_up) + 1
    res = shrink(cfg, actions, "nothing_produced", time_budget_s=BUDGET_S)
    assert res.actions[-1] == A.Produce(0, 0, -1)       # acks=1 -> -1, the first value enabled_actions offers
    assert all(type(a) is not A.Produce or a.acks == -1 for a in res.actions)
    assert len(res.actions) <= len(bring_up) + 1
    _assert_valid_and_failing(cfg, res.actions, "nothing_produced")
    _assert_one_minimal(cfg, res.actions, "nothing_produced")
