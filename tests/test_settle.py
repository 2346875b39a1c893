"""The settling phase (properties/settle.py): liveness in fuzzing.

A fault-free, fair schedule after a run must settle a live protocol (no false liveness violation) and must not
settle a protocol with a liveness bug.  The bugs are mutants installed by monkeypatch, as tests/test_mutants.py
does: a follower whose truncation never finishes (it truncates again and again), and an AlterIsr answer that
never commits (an ISR change that never completes).
"""

from __future__ import annotations

import pytest
from conftest import drive

from isrlab.model import actions as A
from isrlab.model import alter_isr, fetcher
from isrlab.model.config import preset
from isrlab.model.state import FETCHING
from isrlab.model.step import initial_state
from isrlab.properties.invariants import CATALOGUE, LIVENESS
from isrlab.properties.replay import replay
from isrlab.properties.settle import settle, settle_bound
from isrlab.properties.shrink import shrink
from isrlab.properties.walker import search, walk

pytestmark = pytest.mark.unit

KAFKA_24 = preset("kafka-2.4").config
ALTER_ISR = preset("alter-isr").config


def _run(cfg, actions):
    return drive(cfg, initial_state(cfg), *actions)


#: controller 0 elected, every request delivered: broker 0 leads epoch 0, followers 1 and 2 truncating (KIP-279)
UP = [A.ElectController(0), A.DeliverControlRequest(0, 0), A.DeliverControlRequest(0, 1),
      A.DeliverControlRequest(0, 2), A.DeliverControlRequest(0, 0), A.DeliverControlRequest(0, 1),
      A.DeliverControlRequest(0, 2)]
#: then broker 2 crashes cleanly and restarts: it must catch up and rejoin the ISR (with AlterIsr: an expansion)
BOUNCE = UP + [A.Produce(0, 0, 1), A.BrokerCrash(2, True), A.BrokerRestart(2)]


def _never_finishes(s, f, log, offset):
    """Mutant of fetcher._finish_truncation: truncates but never goes back to fetching (asks again, for ever)."""
    fetcher._truncate(s, log, offset)
    f.fetch_offset = log.log_end_offset


def _never_commits(cfg, s, br, p, item, result):
    """Mutant of Partition.handleAlterIsrResponse: the zkVersion comparison flipped, so every success with a newer
    zkVersion is taken for an old one and the partition stays pending."""
    return False


def test_the_bound_is_derived_from_the_config():
    assert settle_bound(KAFKA_24) == 49 * 37   # rounds of 49 classes: 24 ticks, 12 control-plane rounds, 1 stable
    assert settle_bound(KAFKA_24.replace(n_brokers=5, replication_factor=3)) > settle_bound(KAFKA_24)


@pytest.mark.parametrize("prefix", [[], UP, BOUNCE], ids=["initial", "up", "bounce"])
def test_a_live_protocol_settles(prefix):
    r = settle(KAFKA_24, _run(KAFKA_24, prefix), len(prefix))
    assert r.settled and not r.violations and not r.bounded
    s = r.state
    assert all(br.fetchers[0].state == FETCHING for br in s.brokers[1:])
    assert len({br.logs[0].log_end_offset for br in s.brokers}) == 1
    assert not any(lv.pending(KAFKA_24, s, 0) for lv in LIVENESS)
    assert not any(type(a) in (A.BrokerCrash, A.BrokerRestart, A.Produce, A.ZkDeleteController) for a in r.actions)


def test_settling_is_deterministic():
    s = _run(KAFKA_24, BOUNCE)
    assert settle(KAFKA_24, s).actions == settle(KAFKA_24, s).actions


def test_a_truncation_that_never_converges_is_found(monkeypatch):
    s = _run(KAFKA_24, UP)
    monkeypatch.setattr(fetcher, "_finish_truncation", _never_finishes)
    r = settle(KAFKA_24, s, len(UP))
    assert not r.settled
    names = {v.invariant for v in r.violations}
    assert "truncation_completes" in names
    v = next(v for v in r.violations if v.invariant == "truncation_completes")
    assert v.step == len(UP) + len(r.actions) == len(UP) + settle_bound(KAFKA_24)
    assert {b["fetch_state"] for b in v.facts["brokers"] if "fetch_state" in b} == {"truncating"}
    assert sum(type(a) is A.OffsetsForLeaderEpoch for a in r.actions) > 100   # it asks again and again


def test_an_isr_change_that_never_completes_is_found(monkeypatch):
    s = _run(ALTER_ISR, BOUNCE)
    assert settle(ALTER_ISR, s).settled
    monkeypatch.setattr(alter_isr, "handle_alter_isr_response", _never_commits)
    r = settle(ALTER_ISR, s, len(BOUNCE))
    v = next(v for v in r.violations if v.invariant == "alter_isr_completes")
    leader = next(b for b in v.facts["brokers"] if "isr" in b)
    assert leader["pending_isr"] == {"expand": True, "replicas": [2]} and v.facts["pending_at_end"]


def test_the_walker_finds_the_truncation_mutant_and_the_shrinker_keeps_it(monkeypatch):
    monkeypatch.setattr(fetcher, "_finish_truncation", _never_finishes)
    names = tuple(lv.name for lv in LIVENESS)
    r = next(r for r in (walk(KAFKA_24, seed, 60, (), liveness=names) for seed in range(20)) if r.violation)
    v = r.violation
    assert v.invariant in ("truncation_completes", "isr_follower_catches_up") and v.step == len(r.actions)
    sr = shrink(KAFKA_24, r.actions, v.invariant, time_budget_s=20)
    assert sr.violation is not None and sr.shrunk_length <= len(r.actions) - settle_bound(KAFKA_24) + 1
    assert not settle(KAFKA_24, _run(KAFKA_24, sr.actions), names=(v.invariant,)).settled
    monkeypatch.undo()
    assert settle(KAFKA_24, _run(KAFKA_24, sr.actions)).settled   # the unmutated model settles from there


def test_walks_and_searches_of_a_passing_preset_settle():
    names = tuple(lv.name for lv in LIVENESS)
    for seed in range(30):
        assert walk(KAFKA_24, seed, 120, liveness=names).violation is None
    # alter-isr (3.1.0's ZooKeeper mode) lacks KAFKA-14140 (3.3.0): zk_isr_joins_live, its one known break, is left out
    safety = tuple(inv for inv in CATALOGUE if inv.name not in preset("alter-isr").breaks)
    r = search(ALTER_ISR, 0, 60, invariants=safety, liveness=names)
    assert r.violation is None and r.steps > 0


def test_the_guided_search_finds_the_alter_isr_mutant(monkeypatch):
    monkeypatch.setattr(alter_isr, "handle_alter_isr_response", _never_commits)
    r = search(ALTER_ISR, 0, 400, invariants=(), liveness=("alter_isr_completes",))
    assert r.violation is not None and r.violation.invariant == "alter_isr_completes"


def test_the_machine_settles_and_checks_in_its_teardown(monkeypatch):
    from isrlab.properties.machines import run_machine

    monkeypatch.setattr(fetcher, "_finish_truncation", _never_finishes)
    m = run_machine(KAFKA_24, 0, max_examples=30, stateful_step_count=30, invariants=(), shrink=False,
                    liveness=("truncation_completes",))
    assert m.violation is not None and m.violation.invariant == "truncation_completes"


def test_an_archived_liveness_counterexample_replays():
    """KAFKA-12686 (no-kafka-12686): an old AlterIsr answer removes the leader's next proposal, which is never sent."""
    from isrlab.archive import counterexample

    cfg = preset("no-kafka-12686").config
    names = ("alter_isr_completes",)
    r = search(cfg, 0, 3000, invariants=(), liveness=names)
    assert r.violation is not None and r.violation.invariant == names[0]
    sr = shrink(cfg, r.actions, "alter_isr_completes", time_budget_s=3)
    cx = counterexample("no-kafka-12686", cfg, sr.actions, "alter_isr_completes", {"engine": "walk"}, len(r.actions))
    assert cx.trace.provenance["settle_from"] == sr.shrunk_length < len(cx.trace.actions) < len(r.actions)
    res = replay(cx.trace)
    assert res.matches_expectation and res.violations[-1].step == len(cx.trace.actions)
    text = cx.trace.explanation
    assert text.startswith(f"After step {sr.shrunk_length}, ") and "did not settle partition 0" in text
    assert replay(cx.trace, liveness=()).violations == [v for v in res.violations if v.invariant != names[0]]
