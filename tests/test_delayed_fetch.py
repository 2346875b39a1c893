"""The fetch purgatory (DelayedFetch, Kafka 2.4.0): consumers' fetches that wait for fetch.min.bytes, how they
complete (appends and HW moves, becoming follower, StopReplica, the timeout), and their wiring in the engines."""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model.config import preset
from isrlab.model.delayed import fetch_offset_snapshot
from isrlab.model.replica_manager import stop_replicas
from isrlab.model.requests import StopReplicaRequest
from isrlab.model.step import action_kinds, apply, enabled_actions, initial_state, step, tick_limit
from isrlab.properties.walker import walk

pytestmark = pytest.mark.unit


def _settle(cfg, s):
    """Deliver every queued control request, then three rounds of truncation and fetching by every follower."""
    for _ in range(300):
        acts = [a for a in enabled_actions(cfg, s) if type(a) is A.DeliverControlRequest]
        if not acts:
            break
        s = apply(cfg, s, acts[0])
    for _ in range(3):
        for b in range(cfg.n_brokers):
            for kind in (A.OffsetsForLeaderEpoch, A.FetchRequest, A.FetchResponse):
                s2 = step(cfg, s, kind(b, 0))
                s = s2 if s2 is not None else s
    return s


KIP_392 = dict(fetch_from_follower=True, replica_selector="rack-aware", racks=("rack-a", "rack-b", "rack-c"))


def _cluster(**changes):
    """delayed-fetch with KIP-392 consumers: broker 0 leads partition 0 (controller 0), every follower caught up on
    an empty log."""
    cfg = preset("delayed-fetch").config.replace(**{**KIP_392, **changes})
    s = apply(cfg, initial_state(cfg), A.ElectController(0))
    s = _settle(cfg, s)
    assert s.zk.partition_states[0].leader == 0
    return cfg, s


def _single():
    """One broker, one replica: every append moves the HW at once."""
    return _cluster(n_brokers=1, replication_factor=1, n_partitions=1, racks=())


def _last(s, b=0, p=0):
    return s.ghost.responses.consumer_fetch[b][p]


def test_a_caught_up_fetch_waits_and_an_append_that_moves_the_hw_completes_it_with_the_record():
    cfg, s = _single()
    s = apply(cfg, s, A.ConsumerFetchWait(0, 0))
    (df,) = s.brokers[0].delayed_fetches
    assert (df.fetch_offset, df.min_bytes, df.offset_known, df.deadline_ms) == (0, 1, True, s.now + 500)
    assert s.ghost.responses.consumer_fetch == ()                        # no answer yet
    s = apply(cfg, s, A.Produce(0, 0, 1))
    assert s.brokers[0].delayed_fetches == ()
    r = _last(s)
    assert (r.error, r.fetch_offset, r.entries, r.high_watermark) == ("NONE", 0, ((1, 0),), 1)
    assert s.ghost.consumed == ((0, 0, 1, 0),)


def test_fetch_min_bytes_is_a_boundary_one_record_short_waits_exactly_enough_completes():
    cfg, s = _single()
    s = apply(cfg, s, A.ConsumerFetchWait(0, 0, 0, 2, 500))
    s = apply(cfg, s, A.Produce(0, 0, 1))
    assert len(s.brokers[0].delayed_fetches) == 1                        # 1 record < fetch.min.bytes 2
    s = apply(cfg, s, A.Produce(0, 0, 1))
    assert s.brokers[0].delayed_fetches == ()
    assert _last(s).entries == ((1, 0), (2, 0))


def test_no_wait_no_min_bytes_or_enough_records_answer_at_once():
    cfg, s = _single()
    for a in (A.ConsumerFetchWait(0, 0, 0, 1, 0), A.ConsumerFetchWait(0, 0, 0, 0, 500)):
        s2 = apply(cfg, s, a)
        assert s2.brokers[0].delayed_fetches == ()
        assert (_last(s2).error, _last(s2).entries) == ("NONE", ())
    s = apply(cfg, s, A.Produce(0, 0, 1))
    s = apply(cfg, s, A.ConsumerFetchWait(0, 0, 0, 1, 500))
    assert s.brokers[0].delayed_fetches == () and _last(s).entries == ((1, 0),)


def test_an_error_at_the_read_is_answered_at_once_and_nothing_waits():
    cfg, s = _cluster()
    s = apply(cfg, s, A.ConsumerFetchWait(1, 0))                          # a follower, no ClientMetadata
    assert s.brokers[1].delayed_fetches == () and _last(s, 1).error == "NOT_LEADER_FOR_PARTITION"
    s = apply(cfg, s, A.ConsumerFetchWait(0, 0, 1))                       # beyond the log end (0)
    assert s.brokers[0].delayed_fetches == () and _last(s).error == "OFFSET_OUT_OF_RANGE"
    s = apply(cfg, s, A.ConsumerFetchWait(0, 0, -1, 1, 500, 1))           # an epoch the leader does not know
    assert _last(s).error == "UNKNOWN_LEADER_EPOCH"
    s = apply(cfg, s, A.ConsumerFetchWait(1, 0, -1, 1, 500, 0, True))     # KIP-392: a follower may serve it
    assert len(s.brokers[1].delayed_fetches) == 1


def test_the_timeout_bounds_the_clock_and_answers_what_there_is():
    cfg, s = _single()
    s = apply(cfg, s, A.ConsumerFetchWait(0, 0, 0, 1, 300))
    deadline = s.brokers[0].delayed_fetches[0].deadline_ms
    assert tick_limit(cfg, s) <= deadline
    assert step(cfg, s, A.DelayedFetchExpire(0, s.brokers[0].delayed_fetches[0].request_id)) is None  # not yet
    s = _advance_to(cfg, s, deadline)
    assert s.now == deadline
    expire = [a for a in enabled_actions(cfg, s) if type(a) is A.DelayedFetchExpire]
    assert expire == [A.DelayedFetchExpire(0, s.brokers[0].delayed_fetches[0].request_id)]
    s = apply(cfg, s, expire[0])
    assert s.brokers[0].delayed_fetches == ()
    assert (_last(s).error, _last(s).entries, _last(s).high_watermark) == ("NONE", (), 0)


def _advance_to(cfg, s, t: int):
    """Let the clock reach t, running the scheduled tasks as they fall due."""
    while s.now < t:
        s = _run_tasks(cfg, s)
        limit = tick_limit(cfg, s)
        target = t if limit is None else min(limit, t)
        if target > s.now:
            s = apply(cfg, s, A.Tick(target - s.now))
    return s


def _run_tasks(cfg, s):
    for a in enabled_actions(cfg, s):
        if type(a) in (A.IsrExpiration, A.IsrChangePropagation, A.HighWatermarkCheckpoint):
            return _run_tasks(cfg, apply(cfg, s, a))
    return s


def test_a_crash_drops_parked_fetches_without_an_answer():
    cfg, s = _single()
    s = apply(cfg, s, A.ConsumerFetchWait(0, 0))
    s = apply(cfg, s, A.BrokerCrash(0, True))
    assert s.brokers[0].delayed_fetches == () and s.ghost.responses.consumer_fetch == ()


@pytest.mark.parametrize("known, error", [(True, "NOT_LEADER_FOR_PARTITION"), (False, "UNKNOWN_TOPIC_OR_PARTITION")])
def test_stop_replica_with_delete_completes_a_parked_fetch(known, error):
    """ReplicaManager.stopReplica -> completeDelayedFetchOrProduceRequests: getPartitionOrException answers
    NOT_LEADER_FOR_PARTITION while the metadata cache knows the partition, UNKNOWN_TOPIC_OR_PARTITION otherwise."""
    cfg, s = _single()
    s = apply(cfg, s, A.ConsumerFetchWait(0, 0))
    w = s._clone(object())
    br = w.broker_mut(0)
    if not known:
        br.metadata = br.metadata.__class__(br.metadata.alive_brokers, (None,), br.metadata.controller_id)
    stop_replicas(cfg, w, br, StopReplicaRequest(0, br.controller_epoch, br.broker_epoch, True, (0,)))
    assert br.delayed_fetches == ()
    assert _last(w).error == error


def test_becoming_follower_completes_the_fetch_fenced_for_a_client_that_sent_its_epoch():
    cfg, s = _cluster()
    s = apply(cfg, s, A.ConsumerFetchWait(0, 0, -1, 1, 500, 0, True))
    s = apply(cfg, s, A.ConsumerFetchWait(0, 0, -1, 1, 500))
    assert len(s.brokers[0].delayed_fetches) == 2
    s = apply(cfg, s, A.ZkSessionExpire(0))
    s = apply(cfg, s, A.ElectController(1))
    s = _settle(cfg, s)
    s = apply(cfg, s, A.ZkReconnect(0))
    s = apply(cfg, s, A.ControllerProcessBrokerChange(1))
    assert len(s.brokers[0].delayed_fetches) == 2
    s = _settle(cfg, s)
    assert s.brokers[0].partitions[0].leader != 0
    assert s.brokers[0].delayed_fetches == ()
    # both completed in the makeFollowers step, in arrival order: the epoch-less one answered last
    assert _last(s).error == "NOT_LEADER_FOR_PARTITION"
    assert s.ghost.errors_seen & __import__("isrlab.model.errors", fromlist=["ERROR_BIT"]).ERROR_BIT[
        "FENCED_LEADER_EPOCH"]


def test_a_follower_serving_kip_392_is_not_woken_by_its_hw_and_answers_at_its_timeout():
    """Kafka 2.4.0's follower updates its HW (ReplicaFetcherThread.processPartitionData) without checking the fetch
    purgatory: a consumer parked at a follower gets its records only when the fetch times out."""
    cfg, s = _cluster()
    s = apply(cfg, s, A.ConsumerFetchWait(1, 0, -1, 1, 500, -1, True))
    s = apply(cfg, s, A.Produce(0, 0, 1))
    s = _settle(cfg, s)
    assert s.brokers[1].logs[0].high_watermark == 1
    assert len(s.brokers[1].delayed_fetches) == 1                         # still waiting
    s = apply(cfg, s, A.ConsumerFetchWait(0, 0, 0, 1, 500))                # at the leader: answered at once
    assert _last(s).entries == ((1, 0),)
    df = s.brokers[1].delayed_fetches[0]
    s = _advance_to(cfg, s, df.deadline_ms)
    s = apply(cfg, s, A.DelayedFetchExpire(1, df.request_id))
    r = _last(s, 1)
    assert (r.error, r.entries, r.high_watermark) == ("NONE", ((1, 0),), 1)


def test_a_preferred_read_replica_answer_waits_for_the_timeout():
    """readFromLocalLog with a preferred read replica returns no records and UnknownOffsetMetadata, which
    fetchMessages parks and DelayedFetch.tryComplete skips: only the timeout answers, naming the replica."""
    cfg, s = _cluster()
    other = s.zk.partition_states[0].isr[-1] if s.zk.partition_states[0].isr[-1] != 0 else 1
    rack = cfg.racks[other]
    s = apply(cfg, s, A.ConsumerFetchWait(0, 0, -1, 1, 500, -1, True, rack))
    (df,) = s.brokers[0].delayed_fetches
    assert not df.offset_known
    s = apply(cfg, s, A.Produce(0, 0, 1))
    s = _settle(cfg, s)
    assert len(s.brokers[0].delayed_fetches) == 1                         # the HW moved, the fetch still waits
    s = _advance_to(cfg, s, df.deadline_ms)
    s = apply(cfg, s, A.DelayedFetchExpire(0, df.request_id))
    r = _last(s)
    assert (r.error, r.entries, r.preferred_read_replica) == ("NONE", (), other)


def test_fetch_offset_snapshot_checks_the_epoch_then_the_leader():
    cfg, s = _cluster()
    leader, follower = s.brokers[0], s.brokers[1]
    assert fetch_offset_snapshot(leader, 0, 0, True)[1] == "NONE"
    assert fetch_offset_snapshot(leader, 0, -1, True)[1] == "NONE"
    assert fetch_offset_snapshot(leader, 0, 1, True) == (None, "UNKNOWN_LEADER_EPOCH")
    assert fetch_offset_snapshot(follower, 0, 0, False)[1] == "NONE"
    assert fetch_offset_snapshot(follower, 0, 0, True) == (None, "NOT_LEADER_FOR_PARTITION")
    assert fetch_offset_snapshot(follower, 0, 1, True) == (None, "UNKNOWN_LEADER_EPOCH")


def test_the_kinds_are_offered_only_with_delayed_fetch():
    for name in ("kafka-2.4", "fetch-from-follower", "kafka-2.7"):
        kinds = action_kinds(preset(name).config)
        assert A.ConsumerFetchWait not in kinds and A.DelayedFetchExpire not in kinds
    kinds = action_kinds(preset("delayed-fetch").config)
    assert A.ConsumerFetchWait in kinds and A.DelayedFetchExpire in kinds


def test_the_walker_exercises_the_purgatory_and_finds_nothing():
    seen = set()
    for cfg in (preset("delayed-fetch").config, preset("delayed-fetch").config.replace(**KIP_392)):
        for seed in range(12):
            r = walk(cfg, seed, 300, ())
            assert r.violation is None, (seed, r.violation)
            seen |= {type(a) for a in r.actions}
    assert {A.ConsumerFetchWait, A.DelayedFetchExpire} <= seen


@pytest.mark.parametrize("field, value", [("min_bytes", -1), ("max_wait_ms", -1), ("fetch_offset", -2),
                                          ("current_leader_epoch", -2), ("isolation", "dirty")])
def test_a_malformed_waiting_fetch_is_refused_in_one_line(field, value):
    data = {"type": "ConsumerFetchWait", "broker": 0, "partition": 0, field: value}
    with pytest.raises(A.ActionError) as e:
        A.action_from_json(data)
    assert field in str(e.value) and "\n" not in str(e.value)
