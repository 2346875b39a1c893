"""KAFKA-2143 (0.9.0.1) as a preset: fetchOffsetAndTruncate's boundaries both ways, and the race that separates the
fix from the bug (a follower past its leader's LEO answered OFFSET_OUT_OF_RANGE, the leader appending before the
follower handles the answer), replayed from scenario 37a on no-kafka-2143 and on kafka-0.10.2.

The rule itself (AbstractFetcherThread.fetchOffsetAndTruncate, Kafka 2.4.0; ReplicaFetcherThread.handleOffsetOutOfRange,
0.9.0.0 before the fix) is in model/fetcher.py; tests/test_log_start.py covers it with moving log starts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from isrlab.model import actions as A
from isrlab.model.config import preset
from isrlab.model.fetcher import fetch_offset_and_truncate
from isrlab.model.state import FETCHING
from isrlab.model.step import _begin, initial_state, step
from isrlab.model.trace import load_trace
from isrlab.properties.invariants import CATALOGUE, check_transition

from conftest import fetch_round, produce, ready  # noqa: E402

pytestmark = pytest.mark.unit

OLD = preset("kafka-0.10.2").config
BUG = preset("no-kafka-2143").config
SCENARIO = Path(__file__).resolve().parent / "scenarios" / "37a-kafka-2143-off-follower-wipes-committed-records.json"


def test_no_kafka_2143_is_kafka_0_10_2_but_for_the_flag():
    differing = {f for f in OLD.__dataclass_fields__ if getattr(OLD, f) != getattr(BUG, f)}
    assert differing == {"kafka_2143"} and OLD.kafka_2143 and not BUG.kafka_2143
    assert preset("no-kafka-2143").expected == "committed_prefix"
    assert "hw_within_isr" in preset("no-kafka-2143").breaks


def _follower_with(cfg, leader_start: int, leader_records: int):
    """Leader 0 and follower 1 both hold records 1 and 2 (HW 2 on both: three fetch rounds); then the leader's log is set to start at
    ``leader_start`` and end at ``leader_start + leader_records``.  A writable clone to call fetchOffsetAndTruncate on."""
    s = produce(cfg, ready(cfg), 2)
    for _ in range(3):
        for f in (1, 2):
            s = fetch_round(cfg, s, f)
    s = _begin(s)
    log = s.broker_mut(0).log_mut(0)
    log.log_start_offset = leader_start
    log.entries = tuple((10 + i, 0) for i in range(leader_records))
    log.high_watermark = leader_start
    return s


@pytest.mark.parametrize("fix", [True, False])
def test_leader_end_equal_to_the_follower_leo(fix):
    """LATEST 2 is not below the follower's LEO 2, EARLIEST 0: with the fix the log is kept and the follower fetches from
    max(0, 2) = 2; before it (0.9.0.0) the log is truncated fully and fetched again from the leader's start 0."""
    cfg = OLD.replace(kafka_2143=fix)
    s = _follower_with(cfg, 0, 2)
    fetch_offset_and_truncate(cfg, s, 1, 0)
    log, f = s.brokers[1].logs[0], s.brokers[1].fetchers[0]
    if fix:
        assert (f.fetch_offset, log.log_start_offset, log.entries, log.high_watermark) == (2, 0, ((1, 0), (2, 0)), 2)
        assert s.ghost.truncations == 0
    else:
        assert (f.fetch_offset, log.log_start_offset, log.entries, log.high_watermark) == (0, 0, (), 0)
        assert s.ghost.truncations == 1
    assert f.state == FETCHING


@pytest.mark.parametrize("fix", [True, False])
def test_leader_end_one_below_the_follower_leo_truncates_to_it_either_way(fix):
    """LATEST 1 < LEO 2: Log.truncateTo(1) and fetch from 1, with or without the fix (the ListOffsets EARLIEST is not
    asked)."""
    cfg = OLD.replace(kafka_2143=fix)
    s = _follower_with(cfg, 0, 1)
    fetch_offset_and_truncate(cfg, s, 1, 0)
    log, f = s.brokers[1].logs[0], s.brokers[1].fetchers[0]
    assert (f.fetch_offset, log.log_start_offset, log.entries, log.high_watermark) == (1, 0, ((1, 0),), 1)   # HW lowered to 1


@pytest.mark.parametrize("fix", [True, False])
def test_leader_start_equal_to_the_follower_leo(fix):
    """EARLIEST 2 = LEO 2: not below the leader's start, so the fix keeps the log and fetches from 2; 0.9.0.0 truncates
    fully and starts the log at 2 (the same fetch offset, the records gone)."""
    cfg = OLD.replace(kafka_2143=fix)
    s = _follower_with(cfg, 2, 1)
    fetch_offset_and_truncate(cfg, s, 1, 0)
    log, f = s.brokers[1].logs[0], s.brokers[1].fetchers[0]
    assert f.fetch_offset == 2
    if fix:
        assert (log.log_start_offset, log.entries) == (0, ((1, 0), (2, 0)))
    else:
        assert (log.log_start_offset, log.entries, log.high_watermark) == (2, (), 2)


@pytest.mark.parametrize("fix", [True, False])
def test_leader_start_one_above_the_follower_leo_truncates_fully_either_way(fix):
    cfg = OLD.replace(kafka_2143=fix)
    s = _follower_with(cfg, 3, 1)
    fetch_offset_and_truncate(cfg, s, 1, 0)
    log, f = s.brokers[1].logs[0], s.brokers[1].fetchers[0]
    assert (f.fetch_offset, log.log_start_offset, log.entries, log.high_watermark) == (3, 3, (), 3)


def _replay(cfg, actions):
    """The states after each action and the first violation (invariant names, step), checked as the engines do."""
    s = initial_state(cfg)
    states = [s]
    for i, a in enumerate(actions, 1):
        s2 = step(cfg, s, a)
        assert s2 is not None, f"action {i} {a} is not enabled"
        vs = check_transition(cfg, s, a, s2, i, CATALOGUE)
        if vs:
            return states + [s2], (sorted(v.invariant for v in vs), i)
        s = s2
        states.append(s)
    return states, None


def test_the_race_separates_the_fix_from_the_bug():
    """Scenario 37a's actions: before the fix, ISR member broker 2 wipes its log when it handles the
    OFFSET_OUT_OF_RANGE answer (committed_prefix and hw_within_isr fail at that very step); with the fix nothing
    fails.  The last three actions are the race: the fetch, the leader's append, the answer handled."""
    actions = load_trace(str(SCENARIO)).actions
    n = len(actions)
    assert [type(a) for a in actions[-3:]] == [A.FetchRequest, A.Produce, A.FetchResponse]
    bug_states, bug = _replay(BUG, actions)
    fix_states, fix = _replay(OLD, actions)
    assert bug == (["committed_prefix", "hw_within_isr"], n) and fix is None
    assert bug_states[:-1] == fix_states[:-1]          # the flag matters at the last step only
    assert bug_states[-1].brokers[2].logs[0].entries == ()
    assert fix_states[-1].brokers[2].logs[0].entries == ((1, 0), (2, 0))
    assert bug_states[-1].zk.partition_states[0].isr == (0, 2) and bug_states[-1].brokers[0].logs[0].high_watermark == 1


def test_without_the_append_both_truncate_to_the_leader_end():
    """The same actions without the leader's append between the fetch and the answer: ListOffsets LATEST is 1, below
    broker 2's LEO 2, so both rules truncate it to 1 and nothing fails: KAFKA-2143 needs the race.  (Before KAFKA-7414,
    2.1.0, such a follower stopped its broker with unclean election off; the model truncates as 2.1+ does, see
    model/README.md's Simplifications.)"""
    actions = load_trace(str(SCENARIO)).actions
    no_race = actions[:-2] + actions[-1:]
    for cfg in (BUG, OLD):
        states, first = _replay(cfg, no_race)
        assert first is None
        log, f = states[-1].brokers[2].logs[0], states[-1].brokers[2].fetchers[0]
        assert (log.entries, f.fetch_offset) == (((1, 0),), 1)
