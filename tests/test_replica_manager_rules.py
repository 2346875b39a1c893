"""Rule tests of model/replica_manager.py, model/delayed.py, model/fetcher.py and model/controller.py (Kafka 2.4.0).

Rule ids (C0-C11, P1-P9, FE1-FE5, FO1-FO12, K1-K8, 1.13, 1.14) are those of kafka-replication-semantics.md
section 1.  Where a case re-expresses a Kafka unit test, the test's name carries it (``PartitionTest``,
``ControllerChannelManagerTest``, ``PartitionLeaderElectionAlgorithmsTest``, ``AbstractFetcherThreadTest`` of
Kafka 2.x, core/src/test/scala/unit/kafka/...).  Every xfail(strict) test shows a place where the model
disagrees with the Kafka 2.4.0 source named in its reason.

Control requests are built by hand and handed to ``handle_control_request`` on a writable clone
(``s2 = s._clone(object()); br = s2.broker_mut(b)``); client and fetcher traffic goes through ``step``.
"""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model import errors as E
from isrlab.model.config import ModelConfig
from isrlab.model.controller import (ControllerBrokerRequestBatch, IllegalStateException,
                                     offline_partition_leader_election, process_broker_change,
                                     remove_replicas_from_isr)
from isrlab.model.fetcher import process_fetch_response, truncate_to_epoch_end_offset
from isrlab.model.log import Log, cache_assign
from isrlab.model.partition import maybe_shrink_isr
from isrlab.model.replica_manager import (CONSUMER_ID, append_records, checkpoint_high_watermarks, fetch_messages,
                                          handle_control_request, maybe_propagate_isr_changes)
from isrlab.model.requests import (LeaderAndIsrPartitionState, LeaderAndIsrRequest, StopReplicaRequest,
                                   UpdateMetadataPartitionState, UpdateMetadataRequest)
from isrlab.model.state import (FAILED, FETCHING, OFFLINE, TRUNCATING, FetchResponseData, FetchState,
                                LeaderIsrAndControllerEpoch, MetadataCache, PartitionMetadata)
from isrlab.model.step import initial_state, step

from conftest import bring_up, drive, fetch_round, produce, ready  # noqa: E402

pytestmark = pytest.mark.unit

CFG = ModelConfig()          # kafka-2.4 preset: 3 brokers, RF 3, replicas (0, 1, 2)
LAG = CFG.replica_lag_time_max_ms
P = 0
#: the model's clock at the initial state (wall-clock-like: 0 means 'never'); times below are relative to it.
T0 = initial_state(CFG).now


# --------------------------------------------------------------------------- fixtures
def sync(cfg, s, rounds=3):
    """``rounds`` fetch rounds of every follower in turn (three bring every replica's HW to the leader's LEO)."""
    for _ in range(rounds):
        for f in range(1, cfg.replication_factor):
            s = fetch_round(cfg, s, f)
    return s


def replicated(cfg=CFG, n=2):
    """n records on every replica; HW n on the leader and on both followers."""
    s = sync(cfg, produce(cfg, ready(cfg), n))
    assert [br.logs[P].high_watermark for br in s.brokers[:cfg.replication_factor]] == [n] * cfg.replication_factor
    return s


def writable(s, now=None):
    s2 = s._clone(object())
    if now is not None:
        s2.now = now
    return s2


def with_errors_seen(s, since=None):
    """Error codes recorded in the ghost's coverage bits (only those new since state ``since``)."""
    seen = {name for name, bit in E.ERROR_BIT.items() if s.ghost.errors_seen & bit}
    return seen - with_errors_seen(since) if since is not None else seen


def ps(leader, epoch, isr, replicas=(0, 1, 2), controller_epoch=1, zk_version=1, p=P):
    return LeaderAndIsrPartitionState(p, controller_epoch, leader, epoch, tuple(isr), zk_version, tuple(replicas))


def leader_and_isr(*states, controller_epoch=1, broker_epoch=-1):
    return LeaderAndIsrRequest(0, controller_epoch, broker_epoch, tuple(states))


def update_metadata(states, live=(0, 1, 2), controller_epoch=1, broker_epoch=-1):
    return UpdateMetadataRequest(0, controller_epoch, broker_epoch, tuple(states), tuple(live))


def ums(leader, epoch, isr, replicas=(0, 1, 2), controller_epoch=1, zk_version=1, p=P):
    return UpdateMetadataPartitionState(p, controller_epoch, leader, epoch, tuple(isr), zk_version, tuple(replicas))


def stop_replica(partitions=(P,), delete=False, controller_epoch=1, broker_epoch=-1):
    return StopReplicaRequest(0, controller_epoch, broker_epoch, delete, tuple(partitions))


def handle(cfg, s, b, req):
    """Deliver ``req`` to broker ``b`` on a writable clone; return (new state, partition -> error)."""
    s2 = writable(s)
    result = handle_control_request(cfg, s2, s2.broker_mut(b), req)
    return s2, result


# =========================================================================== C0: broker epoch (KIP-380)
@pytest.mark.parametrize("req", [
    leader_and_isr(ps(0, 5, (0, 1, 2)), controller_epoch=5, broker_epoch=1),
    update_metadata([ums(2, 5, (2,))], live=(2,), controller_epoch=5, broker_epoch=1),
    stop_replica(delete=True, controller_epoch=5, broker_epoch=1),
])
def test_C0_older_broker_epoch_is_refused_whole_request_KafkaApis_isBrokerEpochStale(req):
    s = ready()
    assert s.brokers[1].broker_epoch == 2
    s2, result = handle(CFG, s, 1, req)
    assert result == {P: E.STALE_BROKER_EPOCH}
    assert s2.brokers[1] == s.brokers[1]


@pytest.mark.parametrize("broker_epoch", [-1, 2])
def test_C0_unknown_broker_epoch_minus_one_bypasses_and_equal_is_accepted(broker_epoch):
    s = ready()
    s2, result = handle(CFG, s, 1, leader_and_isr(ps(0, 1, (0, 1, 2)), controller_epoch=2,
                                                  broker_epoch=broker_epoch))
    assert result == {P: E.NONE}
    assert s2.brokers[1].controller_epoch == 2
    assert s2.brokers[1].partitions[P].leader_epoch == 1


def test_C0_newer_broker_epoch_is_an_illegal_state():
    s = ready()
    s2 = writable(s)
    try:
        handle_control_request(CFG, s2, s2.broker_mut(1), leader_and_isr(ps(0, 1, (0, 1, 2)), controller_epoch=2,
                                                                         broker_epoch=3))
    except Exception:  # an exception is an acceptable rendering of the IllegalStateException
        return
    assert s2.brokers[1] == s.brokers[1]


# =========================================================================== C1-C9: becomeLeaderOrFollower
def test_C1_lower_controller_epoch_refused_with_stale_controller_epoch():
    s = ready()
    s2, _ = handle(CFG, s, 1, leader_and_isr(ps(0, 1, (0, 1, 2)), controller_epoch=3))
    s3, result = handle(CFG, s2, 1, leader_and_isr(ps(0, 2, (0, 1, 2), controller_epoch=2), controller_epoch=2))
    assert result == {P: E.STALE_CONTROLLER_EPOCH}
    assert s3.brokers[1] == s2.brokers[1]
    assert s3.brokers[1].controller_epoch == 3


def test_C1_equal_controller_epoch_is_accepted():
    s = ready()
    assert s.brokers[1].controller_epoch == 1
    s2, result = handle(CFG, s, 1, leader_and_isr(ps(0, 1, (0, 1, 2)), controller_epoch=1))
    assert result == {P: E.NONE}
    assert s2.brokers[1].partitions[P].leader_epoch == 1


def test_C2_controller_epoch_recorded_even_when_every_partition_is_refused():
    s = ready()
    s2, result = handle(CFG, s, 1, leader_and_isr(ps(0, 0, (0, 1, 2)), controller_epoch=4))
    assert result == {P: E.STALE_CONTROLLER_EPOCH}
    assert s2.brokers[1].controller_epoch == 4
    assert s2.brokers[1].partitions[P] == s.brokers[1].partitions[P]


def test_C5_C6_lower_or_equal_leader_epoch_gives_stale_controller_epoch():
    s = ready()
    s2, result = handle(CFG, s, 1, leader_and_isr(ps(0, 2, (0, 1, 2))))
    assert result == {P: E.NONE}
    for epoch in (1, 2):
        s3, result = handle(CFG, s2, 1, leader_and_isr(ps(2, epoch, (1, 2))))
        assert result == {P: E.STALE_CONTROLLER_EPOCH}
        assert s3.brokers[1].partitions[P] == s2.brokers[1].partitions[P]
        assert s3.brokers[1].fetchers[P] == s2.brokers[1].fetchers[P]


def test_C4_broker_not_in_replicas_gives_unknown_topic_or_partition():
    s = ready()
    s2, result = handle(CFG, s, 1, leader_and_isr(ps(0, 1, (0, 2), replicas=(0, 2))))
    assert result == {P: E.UNKNOWN_TOPIC_OR_PARTITION}
    assert s2.brokers[1].partitions[P] == s.brokers[1].partitions[P]
    assert s2.brokers[1].fetchers[P] == s.brokers[1].fetchers[P]


def test_C9_new_partition_refused_with_unknown_topic_is_marked_offline():
    s = ready()
    s2 = writable(s)
    br = s2.broker_mut(1)
    br.partitions, br.logs, br.fetchers = (None,), (None,), (None,)
    result = handle_control_request(CFG, s2, br, leader_and_isr(ps(0, 1, (0, 2), replicas=(0, 2))))
    assert result == {P: E.UNKNOWN_TOPIC_OR_PARTITION}
    assert s2.brokers[1].partitions[P] == OFFLINE


def test_C3_offline_partition_gives_kafka_storage_error():
    s = ready()
    s2 = writable(s)
    br = s2.broker_mut(1)
    br.partitions = (OFFLINE,)
    result = handle_control_request(CFG, s2, br, leader_and_isr(ps(0, 1, (0, 1, 2))))
    assert result == {P: E.KAFKA_STORAGE_ERROR}
    assert s2.brokers[1].partitions[P] == OFFLINE


def test_C3_unknown_partition_is_created_then_applied():
    s = ready()
    s2 = writable(s)
    br = s2.broker_mut(2)
    br.partitions, br.logs, br.fetchers = (None,), (None,), (None,)
    result = handle_control_request(CFG, s2, br, leader_and_isr(ps(0, 3, (0, 1, 2))))
    assert result == {P: E.NONE}
    part = s2.brokers[2].partitions[P]
    assert (part.leader, part.leader_epoch, part.isr) == (0, 3, ())
    assert s2.brokers[2].logs[P] == Log()
    assert s2.brokers[2].fetchers[P] == FetchState(0, 3, 0, TRUNCATING)


def test_C7_become_leader_removes_fetcher_and_makes_leader():
    s = replicated()
    s2, result = handle(CFG, s, 1, leader_and_isr(ps(1, 1, (1, 2))))
    assert result == {P: E.NONE}
    br = s2.brokers[1]
    assert br.fetchers[P] is None
    assert (br.partitions[P].leader, br.partitions[P].leader_epoch, br.partitions[P].isr) == (1, 1, (1, 2))
    assert br.partitions[P].leader_epoch_start_offset == 2


def test_C8_leader_not_in_metadata_cache_skips_follower_transition_KAFKA_1647():
    s = ready()
    s2 = writable(s)
    br = s2.broker_mut(2)
    br.partitions, br.logs, br.fetchers = (None,), (None,), (None,)
    br.metadata = MetadataCache(alive_brokers=(1, 2), partitions=s.brokers[2].metadata.partitions)
    result = handle_control_request(CFG, s2, br, leader_and_isr(ps(0, 1, (0, 1, 2))))
    assert result == {P: E.NONE}                               # yet nothing was applied
    part = s2.brokers[2].partitions[P]
    assert (part.leader, part.leader_epoch) == (-1, -1)        # the epoch is not updated
    assert s2.brokers[2].logs[P] == Log()                      # only the log is created
    assert s2.brokers[2].fetchers[P] is None


def test_C8_leader_not_in_metadata_cache_existing_follower_keeps_epoch_and_fetcher():
    s = ready()
    s2 = writable(s)
    br = s2.broker_mut(1)
    br.metadata = MetadataCache(alive_brokers=(1,), partitions=s.brokers[1].metadata.partitions)
    result = handle_control_request(CFG, s2, br, leader_and_isr(ps(2, 1, (1, 2))))
    assert result == {P: E.NONE}
    assert s2.brokers[1].partitions[P].leader_epoch == 0
    assert s2.brokers[1].partitions[P].leader == 0
    assert s2.brokers[1].fetchers[P] == s.brokers[1].fetchers[P]


def test_C8_leader_becoming_follower_fails_pending_produce_and_fetches_from_hw():
    s = replicated()
    s = produce(CFG, s, 1, acks=-1)             # offset 2, waiting
    assert len(s.brokers[0].delayed_produces) == 1
    s2, result = handle(CFG, s, 0, leader_and_isr(ps(1, 1, (1, 2))))
    assert result == {P: E.NONE}
    br = s2.brokers[0]
    assert br.delayed_produces == ()
    assert with_errors_seen(s2, since=s) == {E.NOT_LEADER_FOR_PARTITION}
    assert s2.ghost.acked == ()
    assert br.fetchers[P] == FetchState(1, 1, 2, TRUNCATING)   # InitialFetchState(fetchOffset = local HW)
    assert br.logs[P].log_end_offset == 3                      # F6: no truncation at makeFollowers in 2.x
    assert (br.partitions[P].leader, br.partitions[P].isr) == (1, ())


def test_C8_unchanged_follower_keeps_its_fetch_state_without_kip_320():
    """KAFKA-7164 (without KIP-320): same leader, epoch + 1 -> makeFollower false -> fetcher untouched."""
    cfg = CFG.replace(kip_320=False)
    s = replicated(cfg)
    f_before = s.brokers[1].fetchers[P]
    assert f_before.state == FETCHING and f_before.leader_epoch == 0
    s2, result = handle(cfg, s, 1, leader_and_isr(ps(0, 1, (0, 1, 2))))
    assert result == {P: E.NONE}
    assert s2.brokers[1].fetchers[P] == f_before
    assert s2.brokers[1].partitions[P].leader_epoch == 1


def test_F6_pre_kip101_make_followers_truncates_to_hw_and_fetches_from_leo():
    """0.10.2 ReplicaManager.makeFollowers: logManager.truncateTo(HW), then fetch from the (new) LEO."""
    cfg = CFG.replace(truncation="hw", kip_320=False, kafka_7128=False, kafka_7415=False, kafka_7164=False,
                      kafka_6082=False, kip_380=False)
    s = replicated(cfg)
    s = produce(cfg, s, 2)                       # broker 0: LEO 4, HW 2
    s2, result = handle(cfg, s, 0, leader_and_isr(ps(1, 1, (1, 2))))
    assert result == {P: E.NONE}
    log = s2.brokers[0].logs[P]
    assert (log.log_end_offset, log.high_watermark) == (2, 2)
    assert s2.brokers[0].fetchers[P] == FetchState(1, 1, 2, FETCHING)


def test_C9_hw_checkpoint_task_starts_on_first_leader_and_isr():
    s = drive(CFG, initial_state(CFG), A.ElectController(0))
    s = drive(CFG, s, A.DeliverControlRequest(0, 1))          # UpdateMetadata first (KAFKA-4443)
    assert s.brokers[1].hw_checkpoint_started is False
    s = writable(s, now=1234)
    s = drive(CFG, s, A.DeliverControlRequest(0, 1))          # LeaderAndIsr
    assert s.brokers[1].hw_checkpoint_started is True
    assert s.brokers[1].next_hw_checkpoint_ms == 1234


# =========================================================================== C10: UpdateMetadata
def test_C10_lower_controller_epoch_refused():
    s = ready()
    s2, _ = handle(CFG, s, 1, update_metadata([ums(0, 0, (0, 1, 2))], controller_epoch=3))
    s3, result = handle(CFG, s2, 1, update_metadata([ums(2, 9, (2,))], live=(2,), controller_epoch=2))
    assert result == {P: E.STALE_CONTROLLER_EPOCH}
    assert s3.brokers[1] == s2.brokers[1]


def test_C10_update_metadata_never_touches_partition_state():
    s = ready()
    s2, result = handle(CFG, s, 1, update_metadata([ums(2, 7, (2,))], live=(1, 2), controller_epoch=2))
    assert result == {P: E.NONE}
    br = s2.brokers[1]
    assert br.metadata == MetadataCache((1, 2), (PartitionMetadata(2, 7, (2,), (0, 1, 2)),))
    assert br.controller_epoch == 2
    assert br.partitions[P] == s.brokers[1].partitions[P]
    assert br.fetchers[P] == s.brokers[1].fetchers[P]


def test_C10_equal_controller_epoch_accepted_and_leader_during_delete_removes_partition_info():
    s = ready()
    s2, result = handle(CFG, s, 1, update_metadata([ums(-2, 0, (0, 1, 2))], controller_epoch=1))
    assert result == {P: E.NONE}
    assert s2.brokers[1].metadata == MetadataCache((0, 1, 2), (None,))


def test_C10_partial_update_keeps_other_partitions():
    cfg = CFG.replace(n_partitions=2)
    s = ready(cfg)
    before = s.brokers[1].metadata.partitions
    assert None not in before
    s2, _ = handle(cfg, s, 1, update_metadata([ums(2, 4, (2, 0), p=1)], controller_epoch=1))
    assert s2.brokers[1].metadata.partitions == (before[0], PartitionMetadata(2, 4, (2, 0), (0, 1, 2)))


# =========================================================================== C11: StopReplica
def test_C11_lower_controller_epoch_refused():
    s = ready()
    s2, result = handle(CFG, s, 1, stop_replica(delete=True, controller_epoch=0))
    assert result == {P: E.STALE_CONTROLLER_EPOCH}
    assert s2.brokers[1] == s.brokers[1]


def test_C11_delete_removes_partition_log_and_fetcher():
    s = replicated()
    s2, result = handle(CFG, s, 1, stop_replica(delete=True, controller_epoch=2))
    assert result == {P: E.NONE}
    br = s2.brokers[1]
    assert (br.partitions[P], br.logs[P], br.fetchers[P]) == (None, None, None)
    assert br.controller_epoch == 2


def test_C11_without_delete_only_the_fetcher_goes():
    s = replicated()
    s2, result = handle(CFG, s, 1, stop_replica(delete=False))
    assert result == {P: E.NONE}
    br = s2.brokers[1]
    assert br.fetchers[P] is None
    assert br.partitions[P] == s.brokers[1].partitions[P]
    assert br.logs[P] == s.brokers[1].logs[P]


def test_C11_no_leader_epoch_check_in_2_4():
    s = replicated()
    s2, result = handle(CFG, s, 1, stop_replica(delete=True, controller_epoch=1))
    assert result == {P: E.NONE}
    assert s2.brokers[1].partitions[P] is None


def test_C11_stop_without_delete_on_leader_keeps_pending_produce():
    s = produce(CFG, replicated(), 1, acks=-1)
    s2, _ = handle(CFG, s, 0, stop_replica(delete=False))
    assert len(s2.brokers[0].delayed_produces) == 1     # still leader: completeDelayedFetchOrProduceRequests waits


def test_C11_delete_on_leader_completes_pending_produce_with_not_leader():
    s = produce(CFG, replicated(), 1, acks=-1)
    s2, _ = handle(CFG, s, 0, stop_replica(delete=True))
    assert s2.brokers[0].delayed_produces == ()
    assert with_errors_seen(s2, since=s) == {E.NOT_LEADER_FOR_PARTITION}   # the metadata cache knows it
    assert s2.ghost.acked == ()


def test_C11_delete_pending_produce_error_when_metadata_does_not_know_partition():
    s = produce(CFG, replicated(), 1, acks=-1)
    s2 = writable(s)
    br = s2.broker_mut(0)
    br.metadata = MetadataCache(alive_brokers=(0, 1, 2), partitions=(None,))
    handle_control_request(CFG, s2, br, stop_replica(delete=True))
    assert with_errors_seen(s2, since=s) == {E.UNKNOWN_TOPIC_OR_PARTITION}


# =========================================================================== P1-P9: produce
def test_P1_invalid_acks_nothing_appended():
    s = ready()
    s2 = drive(CFG, s, A.Produce(0, P, 2))
    assert s2.brokers[0].logs[P] == s.brokers[0].logs[P]
    assert s2.ghost.produced == 0 and s2.brokers[0].delayed_produces == ()
    assert with_errors_seen(s2, since=s) == {E.INVALID_REQUIRED_ACKS}


def test_P2_produce_to_follower_is_not_leader():
    s = ready()
    s2 = writable(s)
    assert append_records(CFG, s2, s2.broker_mut(1), P, -1) == E.NOT_LEADER_FOR_PARTITION
    assert s2.brokers[1].logs[P] == s.brokers[1].logs[P]
    assert s2.ghost.produced == 0


def test_P2_produce_to_broker_not_hosting_partition():
    s = ready()
    s2 = writable(s)
    br = s2.broker_mut(1)
    br.partitions = (None,)
    assert append_records(CFG, s2, br, P, 1) == E.NOT_LEADER_FOR_PARTITION          # known to the metadata cache
    br.metadata = MetadataCache((0, 1, 2), (None,))
    assert append_records(CFG, s2, br, P, 1) == E.UNKNOWN_TOPIC_OR_PARTITION
    br.partitions = (OFFLINE,)
    assert append_records(CFG, s2, br, P, 1) == E.KAFKA_STORAGE_ERROR


def _isr_of_leader(s, isr):
    s2 = writable(s)
    s2.broker_mut(0).partition_mut(P).isr = tuple(isr)
    return s2


def test_P3_not_enough_replicas_before_append():
    cfg = CFG.replace(min_insync_replicas=2)
    s = _isr_of_leader(replicated(cfg), (0,))
    s2 = writable(s)
    assert append_records(cfg, s2, s2.broker_mut(0), P, -1) == E.NOT_ENOUGH_REPLICAS
    assert s2.brokers[0].logs[P] == s.brokers[0].logs[P]
    assert s2.brokers[0].delayed_produces == ()
    # acks=1 is not checked (P3)
    assert append_records(cfg, s2, s2.broker_mut(0), P, 1) == E.NONE
    assert s2.brokers[0].logs[P].log_end_offset == 3


def test_P3_min_isr_equal_to_isr_size_is_enough():
    cfg = CFG.replace(min_insync_replicas=2)
    s = _isr_of_leader(replicated(cfg), (0, 1))
    s2 = writable(s)
    assert append_records(cfg, s2, s2.broker_mut(0), P, -1) == E.NONE
    assert len(s2.brokers[0].delayed_produces) == 1


def test_P4_append_stamps_leader_epoch_and_raises_hw_with_isr_of_one():
    s = _isr_of_leader(replicated(), (0,))
    s2, _ = handle(CFG, s, 0, leader_and_isr(ps(0, 3, (0,))))
    s3 = drive(CFG, writable(s2, now=T0 + LAG + 1), A.Produce(0, P, 1))
    log = s3.brokers[0].logs[P]
    assert log.entries[-1][1] == 3
    assert log.epoch_cache == ((0, 0), (3, 2))
    assert log.high_watermark == 3


def test_P5_acks_one_answered_at_once():
    s = replicated()
    s2 = writable(s)
    assert append_records(CFG, s2, s2.broker_mut(0), P, 1) == E.NONE
    assert s2.brokers[0].delayed_produces == ()
    assert s2.ghost.acked == ()   # only acks=-1 NONE responses are recorded as acknowledged


def test_P6_delayed_produce_fields():
    s = replicated()
    s2 = writable(s, now=T0 + 500)
    append_records(CFG, s2, s2.broker_mut(0), P, -1, n_records=2)
    (dp,) = s2.brokers[0].delayed_produces
    assert (dp.partition, dp.first_offset, dp.required_offset, dp.record_ids) == (P, 2, 4, (3, 4))
    assert dp.deadline_ms == T0 + 500 + CFG.produce_timeout_ms


def test_P7_acks_all_isr_of_one_completes_at_once():
    s = _isr_of_leader(replicated(), (0,))
    s2 = drive(CFG, writable(s, now=T0 + LAG + 1), A.Produce(0, P, -1))
    assert s2.brokers[0].delayed_produces == ()
    assert [a[:2] for a in s2.ghost.acked] == [(3, 2)]
    assert s2.ghost.acked[0][2:] == (0, 0, P)   # epoch, broker, partition


def test_P7_P8_acks_all_completed_by_hw_advance():
    s = produce(CFG, replicated(), 1, acks=-1)
    assert len(s.brokers[0].delayed_produces) == 1
    s = fetch_round(CFG, s, 1)                                 # follower 1 reads offset 2
    s = fetch_round(CFG, s, 1)                                 # ... and fetches at 3
    assert len(s.brokers[0].delayed_produces) == 1           # follower 2 (ISR) still at 2
    s = fetch_round(CFG, s, 2)                                 # follower 2 reads offset 2
    assert s.brokers[0].logs[P].high_watermark == 2
    s = drive(CFG, s, A.FetchRequest(2, P))                    # follower 2 fetches at 3: HW -> 3
    assert s.brokers[0].logs[P].high_watermark == 3
    assert s.brokers[0].delayed_produces == ()
    assert s.ghost.acked == ((3, 2, 0, 0, P),)


def test_P7_P9_not_enough_replicas_after_append_when_isr_shrank():
    cfg = CFG.replace(min_insync_replicas=2)
    s = produce(cfg, replicated(cfg), 1, acks=-1)              # offset 2, ISR (0, 1, 2)
    s2 = writable(s, now=s.now + LAG + 1)
    br = s2.broker_mut(0)
    assert maybe_shrink_isr(cfg, s2, br, P, s2.now) is True     # both followers at LEO 2 < 3, lag > maxLag
    assert s2.brokers[0].partitions[P].isr == (0,)
    assert s2.brokers[0].logs[P].high_watermark == 3           # committed anyway (P9)
    assert s2.brokers[0].delayed_produces == ()
    assert with_errors_seen(s2, since=s) == {E.NOT_ENOUGH_REPLICAS_AFTER_APPEND}
    assert s2.ghost.acked == ()
    assert s2.brokers[0].logs[P].entries[2][0] == 3


def test_P8_timeout_request_timed_out_record_stays():
    s = produce(CFG, replicated(), 1, acks=-1)
    (dp,) = s.brokers[0].delayed_produces
    s2 = writable(s, now=dp.deadline_ms - 1)
    assert step(CFG, s2, A.DelayedProduceExpire(0, dp.request_id)) is None
    s2.now = dp.deadline_ms
    s3 = drive(CFG, s2, A.DelayedProduceExpire(0, dp.request_id))
    assert s3.brokers[0].delayed_produces == ()
    assert with_errors_seen(s3, since=s) == {E.REQUEST_TIMED_OUT}
    assert s3.ghost.acked == ()
    assert s3.brokers[0].logs[P].entry_at(2) == (3, 0)
    s4 = sync(CFG, s3, rounds=2)                            # it may still be committed later
    assert s4.brokers[0].logs[P].high_watermark == 3


def test_P8_acks_all_completed_by_losing_leadership_with_not_leader_for_partition():
    s = produce(CFG, replicated(), 1, acks=-1)
    c = writable(s).controller_on(0)
    assert not any(c.queues)
    s2, result = handle(CFG, s, 0, leader_and_isr(ps(1, 1, (1, 2)), controller_epoch=1))
    assert result == {P: E.NONE}
    assert s2.brokers[0].delayed_produces == ()
    assert with_errors_seen(s2, since=s) == {E.NOT_LEADER_FOR_PARTITION}
    assert s2.ghost.acked == ()
    assert s2.brokers[0].logs[P].entry_at(2) == (3, 0)   # the record stays in the (now follower) log


# =========================================================================== FE1-FE5: fetch
def _fetch(cfg, s, b, replica_id, offset, epoch, isolation="read_uncommitted"):
    s2 = writable(s)
    resp = fetch_messages(cfg, s2, s2.broker_mut(b), P, replica_id, offset, epoch, 0, isolation)
    return s2, resp


def _leader_leo4_hw2():
    s = produce(CFG, replicated(), 2)
    assert (s.brokers[0].logs[P].log_end_offset, s.brokers[0].logs[P].high_watermark) == (4, 2)
    return s


def test_FE1_follower_reads_to_leo_consumer_to_hw():
    s = _leader_leo4_hw2()
    _, resp = _fetch(CFG, s, 0, 1, 0, 0)
    assert resp.error == E.NONE and [rid for rid, _ in resp.entries] == [1, 2, 3, 4]
    _, resp = _fetch(CFG, s, 0, CONSUMER_ID, 0, -1)
    assert resp.error == E.NONE and [rid for rid, _ in resp.entries] == [1, 2]
    _, resp = _fetch(CFG, s, 0, CONSUMER_ID, 0, -1, "read_committed")
    assert [rid for rid, _ in resp.entries] == [1, 2]


def test_FE3_epoch_validation_for_leader_PartitionTest_testReadRecordEpochValidationForLeader():
    s, _ = handle(CFG, _leader_leo4_hw2(), 0, leader_and_isr(ps(0, 5, (0, 1, 2))))
    assert _fetch(CFG, s, 0, 1, 0, 4)[1].error == E.FENCED_LEADER_EPOCH
    assert _fetch(CFG, s, 0, 1, 0, 6)[1].error == E.UNKNOWN_LEADER_EPOCH
    assert _fetch(CFG, s, 0, 1, 0, 5)[1].error == E.NONE
    assert _fetch(CFG, s, 0, 1, 0, -1)[1].error == E.NONE   # no currentLeaderEpoch: not validated


def test_FE3_epoch_validation_before_leader_check_PartitionTest_testReadRecordEpochValidationForFollower():
    s = _leader_leo4_hw2()                     # broker 1 follows in epoch 0
    assert _fetch(CFG, s, 1, CONSUMER_ID, 0, -1)[1].error == E.NOT_LEADER_FOR_PARTITION
    assert _fetch(CFG, s, 1, CONSUMER_ID, 0, 0)[1].error == E.NOT_LEADER_FOR_PARTITION
    assert _fetch(CFG, s, 1, 2, 0, -1)[1].error == E.NOT_LEADER_FOR_PARTITION
    s2, _ = handle(CFG, s, 1, leader_and_isr(ps(0, 3, (0, 1, 2))))
    assert _fetch(CFG, s2, 1, CONSUMER_ID, 0, 2)[1].error == E.FENCED_LEADER_EPOCH
    assert _fetch(CFG, s2, 1, CONSUMER_ID, 0, 4)[1].error == E.UNKNOWN_LEADER_EPOCH


def test_FE3_error_response_carries_no_data_and_no_state_update_KAFKA_8400():
    s, _ = handle(CFG, _leader_leo4_hw2(), 0, leader_and_isr(ps(0, 1, (0, 1, 2))))
    s2, resp = _fetch(CFG, s, 0, 1, 4, 0)
    assert resp == FetchResponseData(E.FENCED_LEADER_EPOCH, 4, (), -1, -1)
    assert s2.brokers[0].partitions[P] == s.brokers[0].partitions[P]


def test_FE3_before_kafka_8400_fenced_fetch_updated_follower_state():
    cfg = CFG.replace(kafka_8400=False)
    s = produce(cfg, replicated(cfg), 2)
    s, _ = handle(cfg, s, 0, leader_and_isr(ps(0, 1, (0, 1, 2))))
    s2, resp = _fetch(cfg, s, 0, 1, 4, 0)
    assert resp.error == E.FENCED_LEADER_EPOCH
    assert s2.brokers[0].partitions[P].remote(1).log_end_offset == 4


def test_FE4_response_offsets_snapshotted_before_the_read_updated_the_hw():
    s = _leader_leo4_hw2()
    s = fetch_round(CFG, fetch_round(CFG, s, 2), 2)   # follower 2 at 4 in the leader's view
    s2, resp = _fetch(CFG, s, 0, 1, 4, 0)             # follower 1 reaches 4: HW 2 -> 4 on the leader
    assert s2.brokers[0].logs[P].high_watermark == 4
    assert (resp.error, resp.entries, resp.high_watermark, resp.log_start_offset) == (E.NONE, (), 2, 0)


def test_FE5_offset_beyond_leo_out_of_range_at_leo_empty():
    s = _leader_leo4_hw2()
    _, resp = _fetch(CFG, s, 0, 1, 5, 0)
    assert resp.error == E.OFFSET_OUT_OF_RANGE and resp.entries == ()
    _, resp = _fetch(CFG, s, 0, 1, 4, 0)
    assert (resp.error, resp.entries) == (E.NONE, ())
    _, resp = _fetch(CFG, s, 0, CONSUMER_ID, 3, -1)   # above the HW, below the LEO: empty, no error
    assert (resp.error, resp.entries) == (E.NONE, ())


def test_FE5_offset_below_log_start_out_of_range():
    s = _leader_leo4_hw2()
    s2 = writable(s)
    log = s2.broker_mut(0).log_mut(P)
    log.entries, log.log_start_offset = log.entries[1:], 1
    _, resp = _fetch(CFG, s2, 0, 1, 0, 0)
    assert resp.error == E.OFFSET_OUT_OF_RANGE


def test_FE5_out_of_range_does_not_update_follower_state():
    s = _leader_leo4_hw2()
    s2, _ = _fetch(CFG, s, 0, 1, 9, 0)
    assert s2.brokers[0].partitions[P].remote(1) == s.brokers[0].partitions[P].remote(1)


def test_FE5_out_of_range_response_carries_unknown_offsets():
    _, resp = _fetch(CFG, _leader_leo4_hw2(), 0, 1, 9, 0)
    assert (resp.error, resp.high_watermark, resp.log_start_offset) == (E.OFFSET_OUT_OF_RANGE, -1, -1)


def test_FE_fetch_from_unassigned_follower_returns_empty_records():
    cfg = ModelConfig(n_brokers=4, replication_factor=3)
    s = produce(cfg, ready(cfg), 2)
    assert 3 not in s.zk.assignment[P]
    s2, resp = _fetch(cfg, s, 0, 3, 0, 0)
    assert resp.error == E.NONE
    assert s2.brokers[0].partitions[P] == s.brokers[0].partitions[P]
    assert resp.entries == ()


# =========================================================================== FO1-FO6, FO12: follower responses
def _with_inflight(s, b, resp, fetch_offset=None, state=FETCHING):
    s2 = writable(s)
    f = s2.broker_mut(b).fetcher_mut(P)
    f.inflight = resp
    f.state = state
    if fetch_offset is not None:
        f.fetch_offset = fetch_offset
    return s2


def test_FO1_offset_mismatch_is_not_applied():
    s = replicated()                      # broker 1 LEO 2, fetch offset 2
    s2 = _with_inflight(s, 1, FetchResponseData(E.NONE, 1, ((9, 0),), 2, 0), fetch_offset=1)
    assert process_fetch_response(CFG, s2, 1, P) == "offset mismatch"
    assert s2.brokers[1].logs[P] == s.brokers[1].logs[P]


def test_FO2_follower_hw_is_clamped_to_leo():
    s = replicated()
    s2 = _with_inflight(s, 1, FetchResponseData(E.NONE, 2, ((3, 0),), 10, 0))
    assert process_fetch_response(CFG, s2, 1, P) == E.NONE
    log = s2.brokers[1].logs[P]
    assert (log.log_end_offset, log.high_watermark) == (3, 3)
    assert s2.brokers[1].fetchers[P].fetch_offset == 3


def test_FO2_follower_hw_is_set_and_can_go_down():
    s = replicated()
    assert s.brokers[1].logs[P].high_watermark == 2
    s2 = _with_inflight(s, 1, FetchResponseData(E.NONE, 2, (), 1, 0))
    process_fetch_response(CFG, s2, 1, P)
    assert s2.brokers[1].logs[P].high_watermark == 1


def test_FO3_log_start_offset_raised_from_leader():
    s = replicated()
    s2 = _with_inflight(s, 1, FetchResponseData(E.NONE, 2, (), 2, 1))
    process_fetch_response(CFG, s2, 1, P)
    log = s2.brokers[1].logs[P]
    assert (log.log_start_offset, log.entries, log.log_end_offset) == (1, ((2, 0),), 2)


def test_FO6_fenced_leader_epoch_fails_partition_other_errors_back_off():
    s = replicated()
    s2 = _with_inflight(s, 1, FetchResponseData(E.FENCED_LEADER_EPOCH, 2, (), -1, -1))
    assert process_fetch_response(CFG, s2, 1, P) == E.FENCED_LEADER_EPOCH
    assert s2.brokers[1].fetchers[P].state == FAILED
    for error in (E.UNKNOWN_LEADER_EPOCH, E.NOT_LEADER_FOR_PARTITION):
        s3 = _with_inflight(s, 1, FetchResponseData(error, 2, (), -1, -1))
        assert process_fetch_response(CFG, s3, 1, P) == error
        f = s3.brokers[1].fetchers[P]
        assert (f.state, f.fetch_offset, f.inflight) == (FETCHING, 2, None)


def test_FO6_response_for_another_fetch_offset_is_stale():
    s = replicated()
    s2 = _with_inflight(s, 1, FetchResponseData(E.NONE, 0, ((1, 0),), 2, 0))
    assert process_fetch_response(CFG, s2, 1, P) == "stale"
    assert s2.brokers[1].logs[P] == s.brokers[1].logs[P]
    assert s2.brokers[1].fetchers[P].inflight is None


def test_FO12_out_of_range_follower_ahead_truncates_to_leader_leo():
    s = replicated()
    s2 = writable(s)
    log = s2.broker_mut(1).log_mut(P)
    log.entries = log.entries + ((8, 0), (9, 0))           # follower LEO 4 > leader LEO 2
    s2.broker_mut(1).fetcher_mut(P).fetch_offset = 4
    s3 = drive(CFG, s2, A.FetchRequest(1, P))
    assert s3.brokers[1].fetchers[P].inflight.error == E.OFFSET_OUT_OF_RANGE
    s4 = drive(CFG, s3, A.FetchResponse(1, P))
    assert s4.brokers[1].logs[P].log_end_offset == 2
    f = s4.brokers[1].fetchers[P]
    assert (f.fetch_offset, f.state) == (2, FETCHING)


def test_FO12_out_of_range_leader_start_above_follower_leo_truncates_fully():
    s = produce(CFG, ready(), 4)
    s2 = writable(s)
    llog = s2.broker_mut(0).log_mut(P)
    llog.entries, llog.log_start_offset, llog.high_watermark = llog.entries[3:], 3, 3
    s3 = drive(CFG, s2, A.FetchRequest(1, P))               # fetch offset 0 < leader log start 3
    assert s3.brokers[1].fetchers[P].inflight.error == E.OFFSET_OUT_OF_RANGE
    s4 = drive(CFG, s3, A.FetchResponse(1, P))
    log = s4.brokers[1].logs[P]
    assert (log.log_start_offset, log.log_end_offset, log.entries, log.epoch_cache) == (3, 3, (), ())
    assert s4.brokers[1].fetchers[P].fetch_offset == 3


# =========================================================================== FO7-FO10: OffsetsForLeaderEpoch truncation
def _log(epochs, start=0, hw=0):
    cache = ()
    for i, e in enumerate(epochs):
        cache = cache_assign(cache, e, start + i)
    return Log(log_start_offset=start, entries=tuple((100 + i, e) for i, e in enumerate(epochs)),
               high_watermark=hw, recovery_point=0, epoch_cache=cache)


def _truncating(cfg, leader_log, follower_log, leader_epoch=7, leader_cache=None):
    """Broker 0 leads in ``leader_epoch`` with ``leader_log``; broker 1 is Truncating at its HW."""
    s2 = writable(bring_up(cfg))
    b0 = s2.broker_mut(0)
    if leader_cache is not None:
        leader_log = Log(leader_log.log_start_offset, leader_log.entries, leader_log.high_watermark, 0, leader_cache)
    b0.logs = (leader_log,)
    b0.partition_mut(P).leader_epoch = leader_epoch
    b1 = s2.broker_mut(1)
    b1.logs = (follower_log,)
    b1.partition_mut(P).leader_epoch = leader_epoch
    f = FetchState(0, leader_epoch, follower_log.high_watermark, TRUNCATING)
    f._tok = b1._tok
    b1.fetchers = (f,)
    return s2


def _truncate_round(cfg, s2):
    return truncate_to_epoch_end_offset(cfg, s2, 1, P)


def test_FO7_undefined_end_offset_truncates_to_hw():
    # follower's latest epoch 5 is above anything the leader cached: endOffsetFor -> UNDEFINED
    s2 = _truncating(CFG, _log([0, 0, 3, 3]), _log([0, 0, 5, 5], hw=1))
    assert _truncate_round(CFG, s2) == E.NONE
    log, f = s2.brokers[1].logs[P], s2.brokers[1].fetchers[P]
    assert log.log_end_offset == 1
    assert (f.state, f.fetch_offset) == (FETCHING, 1)


def test_FO9_same_epoch_truncates_to_min_of_ends():
    s2 = _truncating(CFG, _log([0, 0, 1, 1, 2, 2]), _log([0, 0, 1, 1, 1]))
    _truncate_round(CFG, s2)
    log, f = s2.brokers[1].logs[P], s2.brokers[1].fetchers[P]
    assert (log.log_end_offset, log.epoch_cache) == (4, ((0, 0), (1, 2)))   # leader (1, 4), follower (1, 5)
    assert (f.state, f.fetch_offset) == (FETCHING, 4)


def test_FO9_same_epoch_follower_shorter_keeps_its_log():
    s2 = _truncating(CFG, _log([0, 0, 1, 1, 1, 1]), _log([0, 0, 1]))
    _truncate_round(CFG, s2)
    assert s2.brokers[1].logs[P].log_end_offset == 3
    assert s2.brokers[1].fetchers[P].state == FETCHING


def test_FO9_unknown_leader_epoch_truncates_and_asks_again_KIP_279():
    leader = _log([0, 0, 3, 3, 6, 6])           # cache ((0,0),(3,2),(6,4))
    follower = _log([0, 0, 2, 2, 4, 4])         # cache ((0,0),(2,2),(4,4)), latest 4
    s2 = _truncating(CFG, leader, follower)
    _truncate_round(CFG, s2)                    # leader answers (3, 4); follower knows only (2, 4): intermediate
    log, f = s2.brokers[1].logs[P], s2.brokers[1].fetchers[P]
    assert (log.log_end_offset, log.epoch_cache) == (4, ((0, 0), (2, 2)))
    assert (f.state, f.fetch_offset) == (TRUNCATING, 4)
    _truncate_round(CFG, s2)                    # latest 2: leader answers (0, 2); follower (0, 2): finish at 2
    log, f = s2.brokers[1].logs[P], s2.brokers[1].fetchers[P]
    assert (log.log_end_offset, log.epoch_cache) == (2, ((0, 0),))
    assert (f.state, f.fetch_offset) == (FETCHING, 2)


def test_FO10_follower_without_epochs_at_or_below_leader_epoch():
    """Follower cache ((3, 5)), leader answers (1, 6). In 2.4.0 LeaderEpochFileCache.endOffsetFor(1) on the
    follower returns (1, 5) (requested epoch, first start), so the equal-epoch branch truncates to
    min(5, 6, 8) = 5; AbstractFetcherThread's ``None`` branch (min(endOffset, LEO)) is only reached without a cache."""
    leader = _log([1] * 6 + [4] * 3)            # ((1, 0), (4, 6)), LEO 9
    follower = _log([3, 3, 3], start=5, hw=5)   # ((3, 5)), LEO 8
    s2 = _truncating(CFG, leader, follower)
    _truncate_round(CFG, s2)
    log, f = s2.brokers[1].logs[P], s2.brokers[1].fetchers[P]
    assert (log.log_end_offset, log.epoch_cache) == (5, ())
    assert (f.state, f.fetch_offset) == (FETCHING, 5)


def test_FO_no_epochs_truncates_to_hw_AbstractFetcherThreadTest_testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable():
    """latestEpoch is None: truncateToHighWatermark, fetch from the HW, ready for fetch."""
    follower = Log(entries=((1, 0), (2, 2), (3, 4)), high_watermark=2)   # batches of epochs 0, 2, 4; no cache
    s2 = _truncating(CFG, _log([1, 3, 5]), follower)
    _truncate_round(CFG, s2)
    assert s2.brokers[1].logs[P].log_end_offset == 2
    f = s2.brokers[1].fetchers[P]
    assert (f.fetch_offset, f.state) == (2, FETCHING)


def test_FO8_kip101_end_offset_only():
    cfg = CFG.replace(truncation="kip101", kip_320=False)
    s2 = _truncating(cfg, _log([0, 0, 2, 2, 4]), _log([0, 0, 3, 3, 3, 3], hw=1))
    _truncate_round(cfg, s2)                    # 0.11: start of the first epoch > 3 -> 4; min(4, 6)
    assert s2.brokers[1].logs[P].log_end_offset == 4
    assert s2.brokers[1].fetchers[P].state == FETCHING
    s3 = _truncating(cfg, _log([2, 2, 2]), _log([0, 0, 1], hw=1))
    _truncate_round(cfg, s3)                    # epoch 1 below the leader's first epoch: UNDEFINED -> HW
    assert s3.brokers[1].logs[P].log_end_offset == 1


def test_FO_offsets_for_leader_epoch_kip_320_validation():
    s2 = _truncating(CFG, _log([0, 0]), _log([0, 0, 0]))
    s2.broker_mut(0).partition_mut(P).leader_epoch = 8     # leader moved on: our epoch 7 is fenced
    assert _truncate_round(CFG, s2) == E.FENCED_LEADER_EPOCH
    assert s2.brokers[1].fetchers[P].state == FAILED
    assert s2.brokers[1].logs[P].log_end_offset == 3
    s3 = _truncating(CFG, _log([0, 0]), _log([0, 0, 0]))
    s3.broker_mut(0).partition_mut(P).leader_epoch = 6     # leader has not seen our epoch yet
    assert _truncate_round(CFG, s3) == E.UNKNOWN_LEADER_EPOCH
    assert s3.brokers[1].fetchers[P].state == TRUNCATING


# =========================================================================== 1.13: maybePropagateIsrChanges
def _propagation(now, changed=(P,), last_change=1000, last_propagation=0, cfg=CFG):
    s2 = writable(ready(cfg), now=now)
    br = s2.broker_mut(0)
    br.isr_change_set = tuple(changed)
    br.last_isr_change_ms = last_change
    br.last_isr_propagation_ms = last_propagation
    br.next_isr_propagation_ms = now
    maybe_propagate_isr_changes(cfg, s2, br)
    return s2


def test_1_13_quiet_period_is_strict():
    s2 = _propagation(now=6000)             # 1000 + 5000 < 6000 is false
    assert s2.zk.isr_change_notifications == ()
    assert s2.brokers[0].isr_change_set == (P,)
    assert s2.brokers[0].next_isr_propagation_ms == 6000 + 2500
    s3 = _propagation(now=6001)
    assert s3.zk.isr_change_notifications == ((0, (P,)),)
    assert s3.brokers[0].isr_change_set == ()
    assert s3.brokers[0].last_isr_propagation_ms == 6001


def test_1_13_max_delay_is_strict_under_continuous_churn():
    s2 = _propagation(now=60000, last_change=59999, last_propagation=0)
    assert s2.zk.isr_change_notifications == ()
    s3 = _propagation(now=60001, last_change=60000, last_propagation=0)
    assert s3.zk.isr_change_notifications == ((0, (P,)),)


def test_1_13_one_notification_lists_all_partitions():
    cfg = CFG.replace(n_partitions=3)
    s2 = _propagation(now=10 ** 5, changed=(0, 2), cfg=cfg)
    assert s2.zk.isr_change_notifications == ((0, (0, 2)),)
    assert s2.zk.next_sequence == 1


def test_1_13_nothing_to_propagate():
    s2 = _propagation(now=10 ** 6, changed=())
    assert s2.zk.isr_change_notifications == ()


# =========================================================================== 1.14: HW checkpoint
def test_1_14_checkpoint_writes_hosted_partitions_hw():
    s = produce(CFG, replicated(), 1)
    s2 = writable(s, now=5000)
    br = s2.broker_mut(0)
    next_due = br.next_hw_checkpoint_ms
    checkpoint_high_watermarks(CFG, s2, br)
    assert s2.brokers[0].hw_checkpoint == (2,)
    assert s2.brokers[0].next_hw_checkpoint_ms == next_due + CFG.hw_checkpoint_interval_ms
    br.partitions = (None,)
    checkpoint_high_watermarks(CFG, s2, br)
    assert s2.brokers[0].hw_checkpoint == (None,)


def test_1_14_restart_clamps_checkpointed_hw_to_log():
    s = replicated()
    s2 = writable(s)
    br = s2.broker_mut(1)
    br.hw_checkpoint = (9,)
    s3 = drive(CFG, s2, A.BrokerCrash(1, False), A.ZkSessionExpire(1), A.BrokerRestart(1))
    assert s3.brokers[1].logs[P].high_watermark == 2       # clamp(9, [0, LEO 2])


# =========================================================================== ControllerBrokerRequestBatch (K7)
def _controller(s):
    s2 = writable(s)
    return s2, s2.controller_mut(0)


def test_batch_new_batch_raises_while_a_batch_is_unsent():
    s2, c = _controller(bring_up())
    st = s2.zk.partition_states[P]
    for add in (lambda b: b.add_leader_and_isr_request_for_brokers((1,), P, st, (0, 1, 2), False),
                lambda b: b.add_stop_replica_request_for_brokers((1,), P, False),
                lambda b: b.add_update_metadata_request_for_brokers((1,), (P,))):
        batch = ControllerBrokerRequestBatch(CFG, s2, c)
        batch.new_batch()
        add(batch)
        with pytest.raises(IllegalStateException):
            batch.new_batch()
        batch.send_requests_to_brokers()
        batch.new_batch()


def test_batch_leader_and_isr_also_queues_update_metadata_ControllerChannelManagerTest_testLeaderAndIsrRequestSent():
    s2, c = _controller(bring_up())
    st = s2.zk.partition_states[P]
    batch = ControllerBrokerRequestBatch(CFG, s2, c)
    batch.add_leader_and_isr_request_for_brokers((1, 2), P, st, (0, 1, 2), False)
    batch.send_requests_to_brokers()
    q = c.queues
    assert [type(r).__name__ for r in q[0]] == ["UpdateMetadataRequest"]
    assert [type(r).__name__ for r in q[1]] == ["LeaderAndIsrRequest", "UpdateMetadataRequest"]
    assert [type(r).__name__ for r in q[2]] == ["LeaderAndIsrRequest", "UpdateMetadataRequest"]
    lai = q[1][0]
    assert (lai.controller_id, lai.controller_epoch, lai.broker_epoch) == (0, 1, 2)
    assert lai.partition_states == (LeaderAndIsrPartitionState(P, st.controller_epoch, st.leader, st.leader_epoch,
                                                               st.isr, st.zk_version, (0, 1, 2), False),)
    um = q[0][0]
    assert um.live_brokers == (0, 1, 2) and um.broker_epoch == 1
    assert um.partition_states == (UpdateMetadataPartitionState(P, st.controller_epoch, st.leader, st.leader_epoch,
                                                                st.isr, st.zk_version, (0, 1, 2)),)


def test_batch_only_live_brokers_testLeaderAndIsrRequestSentToLiveOrShuttingDownBrokers_testStopReplicaSentOnlyToLiveAndShuttingDownBrokers():
    s2, c = _controller(bring_up())
    c.live_brokers = (1, 2, -1)
    st = s2.zk.partition_states[P]
    batch = ControllerBrokerRequestBatch(CFG, s2, c)
    batch.add_leader_and_isr_request_for_brokers((1, 2), P, st, (0, 1, 2), False)
    batch.add_stop_replica_request_for_brokers((2,), P, False)
    batch.send_requests_to_brokers()
    assert c.queues[2] == ()
    assert [type(r).__name__ for r in c.queues[1]] == ["LeaderAndIsrRequest", "UpdateMetadataRequest"]
    assert c.queues[1][1].live_brokers == (0, 1)


def test_batch_broker_epoch_is_minus_one_without_kip_380():
    cfg = CFG.replace(kip_380=False)
    s2 = writable(bring_up(cfg))
    c = s2.controller_mut(0)
    batch = ControllerBrokerRequestBatch(cfg, s2, c)
    batch.add_stop_replica_request_for_brokers((1,), P, False)
    batch.send_requests_to_brokers()
    assert c.queues[1][0].broker_epoch == -1


def test_batch_deleting_partitions_leader_minus_two_testUpdateMetadataRequestDuringTopicDeletion():
    s2, c = _controller(bring_up())
    batch = ControllerBrokerRequestBatch(CFG, s2, c)
    batch.mark_deleting((P,))
    batch.add_update_metadata_request_for_brokers((1,), (P,))
    batch.send_requests_to_brokers()
    (um,) = c.queues[1]
    assert um.partition_states[0].leader == -2
    assert um.partition_states[0].isr == s2.zk.partition_states[P].isr


def test_batch_deleting_partitions_carry_initial_epoch_and_zk_version():
    s2, c = _controller(bring_up())
    zk = s2.zk_mut()
    st = zk.partition_states[P]
    zk.partition_states = (LeaderIsrAndControllerEpoch(st.leader, 3, st.isr, st.controller_epoch, 5),)
    c.partition_states = zk.partition_states
    batch = ControllerBrokerRequestBatch(CFG, s2, c)
    batch.mark_deleting((P,))
    batch.add_update_metadata_request_for_brokers((1,), (P,))
    batch.send_requests_to_brokers()
    (um,) = c.queues[1]
    assert (um.partition_states[0].leader, um.partition_states[0].leader_epoch,
            um.partition_states[0].zk_version) == (-2, 0, 0)


def test_batch_stop_replica_testMixedDeleteAndNotDeleteStopReplicaRequests():
    cfg = CFG.replace(n_partitions=3)
    s2 = writable(bring_up(cfg))
    c = s2.controller_mut(0)
    batch = ControllerBrokerRequestBatch(cfg, s2, c)
    batch.add_stop_replica_request_for_brokers((1,), 0, False)
    batch.add_stop_replica_request_for_brokers((1,), 1, True)
    batch.add_stop_replica_request_for_brokers((1,), 2, False)
    batch.send_requests_to_brokers()
    reqs = {r.delete_partitions: r.partitions for r in c.queues[1]}
    assert reqs == {False: (0, 2), True: (1,)}
    assert all(type(r) is StopReplicaRequest for r in c.queues[1])


def test_batch_stop_replica_with_delete_is_sent_first():
    cfg = CFG.replace(n_partitions=2)
    s2 = writable(bring_up(cfg))
    c = s2.controller_mut(0)
    batch = ControllerBrokerRequestBatch(cfg, s2, c)
    batch.add_stop_replica_request_for_brokers((1,), 0, False)
    batch.add_stop_replica_request_for_brokers((1,), 1, True)
    batch.send_requests_to_brokers()
    assert [r.delete_partitions for r in c.queues[1]] == [True, False]


def test_batch_is_new_is_sticky_ControllerChannelManagerTest_testLeaderAndIsrRequestIsNew():
    s2, c = _controller(bring_up())
    st = s2.zk.partition_states[P]
    batch = ControllerBrokerRequestBatch(CFG, s2, c)
    batch.add_leader_and_isr_request_for_brokers((1,), P, st, (0, 1, 2), True)
    batch.add_leader_and_isr_request_for_brokers((1,), P, st, (0, 1, 2), False)
    batch.send_requests_to_brokers()
    assert c.queues[1][0].partition_states[0].is_new is True


def test_batch_update_metadata_without_partitions_has_no_partition_states_cf_testUpdateMetadataIncludesLiveOrShuttingDownBrokers():
    s2, c = _controller(bring_up())
    batch = ControllerBrokerRequestBatch(CFG, s2, c)
    batch.add_update_metadata_request_for_brokers((1,))
    batch.send_requests_to_brokers()
    (um,) = c.queues[1]
    assert um.partition_states == ()


# =========================================================================== K1-K8: controller
def test_K1_new_partition_leader_first_live_in_ar_order_isr_all_live():
    s = initial_state(CFG)
    s2 = writable(s)
    zk = s2.zk_mut()
    zk.assignment = ((2, 0, 1),)
    s3 = drive(CFG, s2, A.ElectController(0))
    assert s3.zk.partition_states[P] == LeaderIsrAndControllerEpoch(2, 0, (0, 1, 2), 1, 0)
    lai = [r for r in s3.controllers[0].queues[1] if isinstance(r, LeaderAndIsrRequest)][0]
    assert lai.partition_states[0].is_new is True
    assert lai.partition_states[0].replicas == (2, 0, 1)


def test_K2_offline_election_PartitionLeaderElectionAlgorithmsTest_testOfflinePartitionLeaderElection():
    assert offline_partition_leader_election(CFG, (2, 4), (2, 4), lambda b: b == 4) == (4, (4,), False)


def test_K2_first_live_isr_member_in_ar_order_not_isr_order():
    live = lambda b: True  # noqa: E731
    assert offline_partition_leader_election(CFG, (2, 1, 0), (0, 1), live) == (1, (0, 1), False)
    # new ISR: the old ISR filtered to live members
    assert offline_partition_leader_election(CFG, (0, 1, 2), (0, 1, 2), lambda b: b != 0) == (1, (1, 2), False)


def test_K2_testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionDisabled():
    assert offline_partition_leader_election(CFG, (2, 4), (2,), lambda b: b == 4) == (None, None, False)


def test_K2_testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionEnabled():
    unclean = CFG.replace(unclean_leader_election=True)
    assert offline_partition_leader_election(unclean, (2, 4), (2,), lambda b: b == 4) == (4, (4,), True)
    # first live replica in AR order; ISR = [leader]
    assert offline_partition_leader_election(unclean, (2, 4, 6), (2,), lambda b: b in (4, 6)) == (4, (4,), True)
    assert offline_partition_leader_election(unclean, (0, 1, 2), (0, 1), lambda b: False) == (None, None, False)
    # a live ISR member wins over an unclean election even when it is enabled
    assert offline_partition_leader_election(unclean, (2, 0, 1), (0, 1), lambda b: b != 1) == (0, (0,), False)


def test_K2_controller_election_on_leader_failure_bumps_epoch_and_zk_version():
    s = bring_up(controller=2)
    s = drive(CFG, s, A.BrokerCrash(0, False), A.ZkSessionExpire(0), A.ControllerProcessBrokerChange(2))
    assert s.zk.partition_states[P] == LeaderIsrAndControllerEpoch(1, 1, (1, 2), 1, 1)
    c = s.controller_on(2)
    lai_to = sorted(b for b, q in enumerate(c.queues) if any(isinstance(r, LeaderAndIsrRequest) for r in q))
    assert lai_to == [1, 2]                      # K7: the live replicas


def test_K2_unclean_election_isr_is_the_leader_and_counted_in_ghost():
    cfg = CFG.replace(unclean_leader_election=True)
    s2 = writable(bring_up(cfg, controller=2))
    zk = s2.zk_mut()
    st = zk.partition_states[P]
    zk.partition_states = (LeaderIsrAndControllerEpoch(0, 0, (0,), 1, st.zk_version),)
    s2.controller_mut(2).partition_states = zk.partition_states
    s3 = drive(cfg, s2, A.BrokerCrash(0, False), A.ZkSessionExpire(0), A.ControllerProcessBrokerChange(2))
    assert s3.zk.partition_states[P] == LeaderIsrAndControllerEpoch(1, 1, (1,), 1, st.zk_version + 1)
    assert s3.ghost.unclean_elections == 1


def test_K2_clean_only_no_live_isr_member_leaves_partition_offline():
    s2 = writable(bring_up(controller=2))
    zk = s2.zk_mut()
    st = zk.partition_states[P]
    zk.partition_states = (LeaderIsrAndControllerEpoch(0, 0, (0,), 1, st.zk_version),)
    s2.controller_mut(2).partition_states = zk.partition_states
    s3 = drive(CFG, s2, A.BrokerCrash(0, False), A.ZkSessionExpire(0), A.ControllerProcessBrokerChange(2))
    # no election; K5 then keeps the last ISR member and records NoLeader
    assert s3.zk.partition_states[P] == LeaderIsrAndControllerEpoch(-1, 1, (0,), 1, st.zk_version + 1)
    assert s3.ghost.unclean_elections == 0


def test_K5_keeps_the_last_isr_member():
    s2 = writable(ready())
    zk = s2.zk_mut()
    st = zk.partition_states[P]
    zk.partition_states = (LeaderIsrAndControllerEpoch(1, 3, (1,), 1, st.zk_version),)
    c = s2.controller_mut(0)
    c.live_brokers = (1, -1, 3)
    remove_replicas_from_isr(CFG, s2, c, (1,))
    assert s2.zk.partition_states[P] == LeaderIsrAndControllerEpoch(-1, 4, (1,), 1, st.zk_version + 1)


def test_K5_removes_dead_follower_from_isr_and_tells_live_replicas():
    s2 = writable(ready())
    c = s2.controller_mut(0)
    c.live_brokers = (1, 2, -1)
    st = s2.zk.partition_states[P]
    remove_replicas_from_isr(CFG, s2, c, (2,))
    new = s2.zk.partition_states[P]
    assert new == LeaderIsrAndControllerEpoch(0, st.leader_epoch + 1, (0, 1), 1, st.zk_version + 1)
    assert c.partition_states[P] == new
    lai_to = [b for b, q in enumerate(c.queues) if any(isinstance(r, LeaderAndIsrRequest) for r in q)]
    assert lai_to == [0, 1]
    assert c.queues[2] == ()                                # StopReplica to the dead broker is dropped


def test_K6_fenced_controller_write_resigns():
    s = ready()
    s = drive(CFG, s, A.BrokerCrash(2, False), A.ZkSessionExpire(2))
    s2 = writable(s)
    s2.zk_mut().controller_epoch_zk_version += 1          # another controller bumped /controller_epoch
    assert process_broker_change(CFG, s2, 0) is False
    assert s2.controller_on(0) is None
    assert s2.zk.partition_states == s.zk.partition_states


def test_K6_newer_controller_epoch_in_znode_aborts_election():
    s = ready()
    s2 = writable(s)
    zk = s2.zk_mut()
    st = zk.partition_states[P]
    zk.partition_states = (LeaderIsrAndControllerEpoch(st.leader, st.leader_epoch, st.isr, 9, st.zk_version),)
    s3 = drive(CFG, s2, A.BrokerCrash(0, False), A.ZkSessionExpire(0), A.ElectController(1))
    assert s3.zk.partition_states[P].leader == 0          # not re-elected: controllerEpoch 9 > 2


def test_K8_isr_change_notification_sends_update_metadata_only():
    s = ready()
    s2 = writable(s, now=s.now + LAG + 1)        # followers never fetched: LEO -1 != 0, caught up at T0
    assert maybe_shrink_isr(CFG, s2, s2.broker_mut(0), P, s2.now) is True
    s2.now += 5001
    s2.broker_mut(0).next_isr_propagation_ms = s2.now
    s3 = drive(CFG, s2, A.IsrChangePropagation(0), A.ControllerProcessIsrChangeNotification(0))
    c = s3.controllers[0]
    assert c.partition_states[P] == s3.zk.partition_states[P]
    assert s3.zk.partition_states[P].isr == (0,) and s3.zk.partition_states[P].leader_epoch == 0
    assert s3.zk.isr_change_notifications == ()
    assert all([type(r).__name__ for r in q] == ["UpdateMetadataRequest"] for q in c.queues)
    assert c.queues[1][0].partition_states[0].isr == (0,)
