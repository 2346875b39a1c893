"""Liveness in the explorer by settling a sample of its states (``explore(settle_every=N)``, ``--settle-every``).

Every N-th stored state is settled as the fuzzers settle a run's end (properties/settle.py); a property still pending
is a liveness violation whose trace is the path to that state.  The bug is a mutant installed by monkeypatch, as in
tests/test_settle.py: an AlterIsr answer that never commits, so an ISR change never completes.
"""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from conftest import drive

from isrlab.explore_cmd import explore as explore_cmd
from isrlab.model import alter_isr
from isrlab.model.config import PRESETS, explore_bounds, preset
from isrlab.model.step import initial_state, step
from isrlab.model.trace import load_trace
from isrlab.properties.explore import ExplorerError, bounded_config, explore, search_args
from isrlab.properties.replay import replay
from isrlab.properties.settle import settle

ALTER_ISR = preset("alter-isr").config
#: 2 brokers, one record, one crash: the follower restarts, catches up and is proposed for the ISR again
SMALL = bounded_config(ALTER_ISR, 2, 1, 1, 0, 1)
KW = dict(max_leader_epoch=1, max_isr_changes=1, max_time_ms=0, eager_tasks=True, invariants=())
NAMES = ("alter_isr_completes",)


def _never_commits(cfg, s, br, p, item, result):
    """Mutant of Partition.handleAlterIsrResponse: every answer is taken for a stale one, the partition stays
    pending."""
    return False


def _end(cfg, actions):
    return drive(cfg, initial_state(cfg), *actions)


@pytest.mark.unit
def test_a_sampled_state_that_does_not_settle_is_a_liveness_violation(monkeypatch):
    monkeypatch.setattr(alter_isr, "handle_alter_isr_response", _never_commits)
    r = explore(SMALL, **KW, settle_every=4, liveness=NAMES)
    assert list(r.found) == ["alter_isr_completes"] and r.settled >= 1 and r.stop_reason == "violation"
    f = r.found["alter_isr_completes"]
    assert f.actions == r.trace_to(f.state) and f.violation.facts["settle_from"] == len(f.actions)
    assert f.state % 4 == 0   # a sampled state: every 4th by discovery order
    assert not settle(SMALL, _end(SMALL, f.actions), names=NAMES).settled
    again = explore(SMALL, **KW, settle_every=4, liveness=NAMES)   # the sample is deterministic
    assert again.found["alter_isr_completes"].actions == f.actions
    monkeypatch.undo()
    assert settle(SMALL, _end(SMALL, f.actions), names=NAMES).settled   # the unmutated model settles from there


@pytest.mark.unit
def test_without_settling_the_explorer_checks_no_liveness(monkeypatch):
    monkeypatch.setattr(alter_isr, "handle_alter_isr_response", _never_commits)
    r = explore(SMALL, **KW, max_states=2_000)
    assert not r.found and r.settled == 0


@pytest.mark.slow
def test_a_live_protocols_sample_settles_and_the_search_completes():
    r = explore(SMALL, **KW, settle_every=64)
    assert r.complete and not r.found and r.settled == (r.distinct_states - 1) // 64


@pytest.mark.unit
def test_bad_settling_arguments_are_refused():
    with pytest.raises(ExplorerError, match="unknown liveness property"):
        explore(SMALL, **KW, settle_every=4, liveness=("no_such_property",))
    with pytest.raises(ExplorerError, match="settle_every must be >= 0"):
        explore(SMALL, **KW, settle_every=-1)


def _cli(*args):
    return CliRunner().invoke(explore_cmd, ["--quiet", *args])


SMALL_ARGS = ("--preset", "alter-isr", "--brokers", "2", "--max-records", "1", "--max-crashes", "1",
              "--max-expirations", "0", "--max-epoch", "1", "--max-isr-changes", "1", "--max-time", "0")


@pytest.mark.scenario
def test_the_command_archives_a_liveness_violation_as_a_fuzzer_does(monkeypatch, tmp_path):
    """The archived file is the prefix and then the settling steps (``settle_from``), and replays to the violation."""
    monkeypatch.setattr(alter_isr, "handle_alter_isr_response", _never_commits)
    out = tmp_path / "cx"
    r = _cli(*SMALL_ARGS, "--settle-every", "4", "--invariant", "isr_well_formed", "--out", str(out), "--json")
    assert r.exit_code == 1, r.output
    j = json.loads(r.stdout)
    (item,) = j["violations"]
    assert item["invariant"] == "alter_isr_completes" and item["liveness"] and j["settled_states"] >= 1
    assert item["settle_from"] < item["length"]
    t = load_trace(item["trace_file"])
    assert t.provenance["settle_from"] == item["settle_from"] and t.provenance["minimal"] is False
    assert len(t.actions) == item["length"] and "did not settle" in t.explanation
    assert t.description == "found by isrlab explore --preset alter-isr"
    assert replay(t).matches_expectation
    text = _cli(*SMALL_ARGS, "--settle-every", "4", "--invariant", "isr_well_formed", "--no-archive").stdout
    assert "VIOLATION alter_isr_completes (liveness): the cluster does not settle after" in text
    assert "liveness settled on every 4th stored state" in text


@pytest.mark.scenario
def test_a_liveness_bug_not_checked_is_said_in_one_line():
    r = _cli("--preset", "no-kafka-7786", "--settle-every", "0", "--max-states", "50", "--no-archive")
    assert r.exit_code == 0, r.output
    line = [x for x in r.stdout.splitlines() if "is a liveness property" in x]
    assert len(line) == 1 and "--settle-every" in line[0] and "follower_keeps_fetching" in line[0]


@pytest.mark.scenario
def test_a_negative_sample_rate_is_bad_input():
    r = _cli(*SMALL_ARGS, "--settle-every", "-1", "--no-archive")
    assert r.exit_code == 2 and "settle-every" in r.output
@pytest.mark.unit
def test_no_kafka_7786s_default_search_trace_is_within_its_bounds():
    """The trace no-kafka-7786's default search found (benchmarks/RESULTS.md), kept as a fixture: its
    prefix is actions the default search offers within its bounds, the cluster does not settle after it, and with
    KAFKA-7786's fix (epoch-requests-in-flight) the same actions settle."""
    from isrlab.model.actions import ACTION_BY_NAME as KINDS
    from isrlab.properties.explore import _out_of_bounds, explorer_actions

    name = "no-kafka-7786"
    p = PRESETS[name]
    t = load_trace(os.path.join(os.path.dirname(__file__), "fixtures", f"{name}-{p.expected}-explore-sampled.json"))
    b = explore_bounds(name)
    cfg, kw = search_args(p.config, b)
    assert t.config == cfg and b["settle_every"] > 0
    prefix = t.actions[:t.provenance["settle_from"]]
    without = frozenset(KINDS[k] for k in kw["without"])
    s = initial_state(cfg)
    deadline = None if kw["max_time_ms"] is None else s.now + kw["max_time_ms"]
    for a in prefix:
        assert a in explorer_actions(cfg, s, kw["eager_tasks"], without), a
        s = step(cfg, s, a)
        assert not _out_of_bounds(s, kw["max_leader_epoch"], kw["max_isr_changes"], kw["max_queue"])
        assert deadline is None or s.now <= deadline
    r = settle(cfg, s, len(prefix), (p.expected,))
    assert not r.settled and r.violations[0].invariant == p.expected
    assert replay(t).matches_expectation
    fixed = cfg.replace(kafka_7786=True)
    assert PRESETS["epoch-requests-in-flight"].config.replace(**{k: getattr(cfg, k) for k in (
        "n_brokers", "replication_factor", "max_records", "max_crashes", "max_session_expirations",
        "max_controller_epoch", "produce_acks")}) == fixed
    assert settle(fixed, _end(fixed, prefix), names=(p.expected,)).settled
