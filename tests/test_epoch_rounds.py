"""The follower's OffsetsForLeaderEpoch round as a request and a response (KAFKA-7786's window, Kafka 2.4.0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from isrlab.model import actions as A
from isrlab.model.config import preset
from isrlab.model.state import FAILED, TRUNCATING
from isrlab.model.step import action_kinds, initial_state, step
from isrlab.model.trace import load_trace

pytestmark = pytest.mark.unit

KAFKA = Path(__file__).resolve().parent / "kafka"
FENCED = KAFKA / "AbstractFetcherThreadTest.testLeaderEpochChangeDuringFencedFetchEpochsFromLeader.json"


def _run_to_response(cfg, actions):
    """The state just after the first OffsetsForLeaderEpochResponse whose request was sent in another epoch."""
    s = initial_state(cfg)
    for a in actions:
        f = s.brokers[a.broker].fetchers[a.partition] if type(a) is A.OffsetsForLeaderEpochResponse else None
        stale = f is not None and f.epoch_request and f.epoch_request[0] != f.leader_epoch
        s2 = step(cfg, s, a)
        assert s2 is not None, A.describe(a)
        s = s2
        if stale:
            return s, a
    raise AssertionError("no stale response in the trace")


def test_with_the_fix_a_stale_fenced_answer_is_dropped():
    t = load_trace(FENCED)
    s, a = _run_to_response(t.config, t.actions)
    f = s.brokers[a.broker].fetchers[a.partition]
    assert (f.state, f.epoch_request) == (TRUNCATING, ())


def test_without_the_fix_the_stale_fenced_answer_fails_the_partition():
    t = load_trace(FENCED)
    cfg = t.config.replace(kafka_7786=False)
    s, a = _run_to_response(cfg, t.actions)
    f = s.brokers[a.broker].fetchers[a.partition]
    assert f.state == FAILED and f.leader_epoch == s.zk.partition_states[a.partition].leader_epoch
    assert step(cfg, s, A.OffsetsForLeaderEpochRequest(a.broker, a.partition)) is None     # the fetcher is stuck


def test_the_round_is_one_step_or_two_never_both():
    one, two = preset("kafka-2.4").config, preset("epoch-requests-in-flight").config
    assert A.OffsetsForLeaderEpoch in action_kinds(one)
    assert not {A.OffsetsForLeaderEpochRequest, A.OffsetsForLeaderEpochResponse} & set(action_kinds(one))
    assert {A.OffsetsForLeaderEpochRequest, A.OffsetsForLeaderEpochResponse} <= set(action_kinds(two))
    assert A.OffsetsForLeaderEpoch not in action_kinds(two)


def test_an_answer_in_flight_follows_the_partition_only_back_to_the_same_leader():
    """removeFetcherForPartitions + addFetcherForPartitions: the same leader's fetcher thread still waits for its
    answer; a new leader's thread never sent the request."""
    t = load_trace(FENCED)
    cfg = t.config
    s = initial_state(cfg)
    carried = 0
    for a in t.actions:
        s2 = step(cfg, s, a)
        if type(a) is A.DeliverControlRequest:
            f0, f1 = s.brokers[a.broker].fetchers[0], s2.brokers[a.broker].fetchers[0]
            if f0 is not None and f0.epoch_request and f1 is not None and f1 is not f0:
                assert f1.epoch_request == (f0.epoch_request if f1.leader == f0.leader else ())
                carried += 1
        s = s2
    assert carried == 1
