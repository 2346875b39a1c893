"""StopReplica as Kafka 2.4.0 handles it (ReplicaManager.stopReplicas / stopReplica, KafkaApis.handleStopReplicaRequest),
and the offline replicas of UpdateMetadata (UpdateMetadataPartitionState.offlineReplicas, MetadataCache)."""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model import errors as E
from isrlab.model.config import preset
from isrlab.model.node import replace_at
from isrlab.model.replica_manager import handle_control_request
from isrlab.model.requests import StopReplicaRequest, UpdateMetadataPartitionState, UpdateMetadataRequest
from isrlab.model.state import OFFLINE, Partition
from isrlab.model.step import enabled_actions, initial_state, step

pytestmark = pytest.mark.unit

CFG = preset("kafka-2.4").config.replace(n_partitions=2)


def _run(cfg, s, *actions):
    for a in actions:
        s2 = step(cfg, s, a)
        assert s2 is not None, A.describe(a)
        s = s2
    return s


def _deliver_all(cfg, s):
    while True:
        acts = [a for a in enabled_actions(cfg, s) if type(a) is A.DeliverControlRequest]
        if not acts:
            return s
        s = _run(cfg, s, acts[0])


def _cluster(cfg=CFG):
    """Controller 0 elected (epoch 1), every request delivered: broker 0 leads both partitions, 1 and 2 follow."""
    return _deliver_all(cfg, _run(cfg, initial_state(cfg), A.ElectController(0)))


def _handle(cfg, s, b, req):
    """A copy of s in which broker b has handled req, and the per-partition result."""
    s2 = s._clone(object())
    result = handle_control_request(cfg, s2, s2.broker_mut(b), req)
    return s2, result


def _stop(b_epoch, delete, partitions=(0,), controller_epoch=1):
    return StopReplicaRequest(0, controller_epoch, b_epoch, delete, partitions)


def test_stale_controller_epoch_is_refused_and_changes_nothing():
    s = _cluster()
    br = s.brokers[1]
    assert br.controller_epoch == 1 and br.fetchers[0] is not None
    s2, result = _handle(CFG, s, 1, _stop(br.broker_epoch, True, (0, 1), controller_epoch=0))
    assert result == {0: E.STALE_CONTROLLER_EPOCH, 1: E.STALE_CONTROLLER_EPOCH}
    assert s2.brokers[1].partitions == br.partitions and s2.brokers[1].logs == br.logs
    assert s2.brokers[1].fetchers == br.fetchers                        # not even the fetchers are removed
    assert s2.ghost.responses.stop_replica[1][0] == E.STALE_CONTROLLER_EPOCH


def test_the_current_controller_epoch_is_accepted_and_a_newer_one_taken():
    s = _cluster()
    br = s.brokers[1]
    s2, result = _handle(CFG, s, 1, _stop(br.broker_epoch, False, (0,), controller_epoch=1))   # equal: strict <
    assert result == {0: E.NONE}
    s3, result = _handle(CFG, s, 1, _stop(br.broker_epoch, False, (0,), controller_epoch=3))
    assert result == {0: E.NONE} and s3.brokers[1].controller_epoch == 3


def test_stale_broker_epoch_is_refused():
    s = _cluster()
    br = s.brokers[1]
    s2, result = _handle(CFG, s, 1, _stop(br.broker_epoch - 1, True))
    assert result == {0: E.STALE_BROKER_EPOCH}
    assert type(s2.brokers[1].partitions[0]) is Partition and s2.brokers[1].logs[0] is not None


def test_without_delete_the_fetcher_stops_and_the_partition_and_log_stay():
    s = _cluster()
    br = s.brokers[2]                                                      # follows both partitions
    assert br.fetchers[0] is not None and br.fetchers[1] is not None
    s2, result = _handle(CFG, s, 2, _stop(br.broker_epoch, False, (0,)))
    assert result == {0: E.NONE}
    b2 = s2.brokers[2]
    assert b2.fetchers[0] is None and b2.fetchers[1] is not None          # only the named partition's fetcher
    assert b2.partitions[0] is br.partitions[0] and b2.logs[0] is br.logs[0]


def test_delete_removes_the_partition_its_log_and_its_checkpoint_entry():
    s = _cluster()
    s = _run(CFG, s, A.Produce(0, 0, -1), A.OffsetsForLeaderEpoch(1, 0), A.FetchRequest(1, 0), A.FetchResponse(1, 0),
             A.FetchRequest(1, 0), A.FetchResponse(1, 0), A.HighWatermarkCheckpoint(1))
    br = s.brokers[1]
    assert br.hw_checkpoint[0] is not None and br.logs[0].log_end_offset == 1
    s2, result = _handle(CFG, s, 1, _stop(br.broker_epoch, True, (0,)))
    assert result == {0: E.NONE}
    b2 = s2.brokers[1]
    assert (b2.partitions[0], b2.logs[0], b2.fetchers[0], b2.hw_checkpoint[0]) == (None, None, None, None)
    assert type(b2.partitions[1]) is Partition and b2.logs[1] is not None   # the other partition untouched


def test_delete_of_an_offline_partition_is_a_storage_error():
    s = _cluster()
    s1 = s._clone(object())
    br = s1.broker_mut(1)
    br.partitions = replace_at(br.partitions, 0, OFFLINE)
    s2, result = _handle(CFG, s1, 1, _stop(br.broker_epoch, True, (0, 1)))
    assert result == {0: E.KAFKA_STORAGE_ERROR, 1: E.NONE}                 # per partition; the other is deleted
    b2 = s2.brokers[1]
    assert b2.partitions[0] == OFFLINE and b2.logs[0] is not None          # nothing deleted
    assert b2.partitions[1] is None and b2.logs[1] is None
    # without delete an offline partition is no error (only its fetcher is removed)
    s3, result = _handle(CFG, s1, 1, _stop(br.broker_epoch, False, (0,)))
    assert result == {0: E.NONE} and s3.brokers[1].partitions[0] == OFFLINE


def test_delete_removes_a_log_with_no_hosted_partition():
    """A broker restarted while its topic was deleted: the log is on disk, no Partition yet (LogManager.asyncDelete)."""
    s = _cluster()
    s = _run(CFG, s, A.BrokerCrash(2, True), A.BrokerRestart(2))
    br = s.brokers[2]
    assert br.partitions[0] is None and br.logs[0] is not None
    s2, result = _handle(CFG, s, 2, _stop(br.broker_epoch, True, (0,)))
    assert result == {0: E.NONE} and s2.brokers[2].logs[0] is None


def _leader_with_waiting_produce():
    s = _cluster()
    s = _run(CFG, s, A.Produce(0, 0, -1))
    assert len(s.brokers[0].delayed_produces) == 1
    return s


def test_delete_completes_a_waiting_produce_with_not_leader_while_the_metadata_knows_the_partition():
    """ReplicaManagerTest.testClearProducePurgatoryOnStopReplica's rule: stopReplica -> completeDelayedFetchOrProduce
    Requests, and DelayedProduce.tryComplete answers getPartitionOrError's NOT_LEADER_FOR_PARTITION."""
    s = _leader_with_waiting_produce()
    br = s.brokers[0]
    assert br.metadata.partitions[0] is not None
    s2, result = _handle(CFG, s, 0, _stop(br.broker_epoch, True, (0,)))
    assert result == {0: E.NONE}
    assert s2.brokers[0].delayed_produces == ()
    assert s2.ghost.responses.produce[0][0].error == E.NOT_LEADER_FOR_PARTITION
    assert s2.ghost.acked == ()


def test_delete_completes_a_waiting_produce_with_unknown_topic_once_the_metadata_forgot_it():
    """After UpdateMetadata's LeaderDuringDelete (leader -2) the cache no longer holds the partition: the produce
    completes with UNKNOWN_TOPIC_OR_PARTITION, as getPartitionOrError answers then."""
    s = _leader_with_waiting_produce()
    br = s.brokers[0]
    um = UpdateMetadataRequest(0, 1, br.broker_epoch,
                               (UpdateMetadataPartitionState(0, 1, -2, 0, (0, 1, 2), 0, (0, 1, 2)),), (0, 1, 2))
    s1, _ = _handle(CFG, s, 0, um)
    assert s1.brokers[0].metadata.partitions[0] is None
    s2, _ = _handle(CFG, s1, 0, _stop(br.broker_epoch, True, (0,)))
    assert s2.ghost.responses.produce[0][0].error == E.UNKNOWN_TOPIC_OR_PARTITION


def test_without_delete_a_leader_keeps_its_waiting_produce():
    s = _leader_with_waiting_produce()
    br = s.brokers[0]
    s2, result = _handle(CFG, s, 0, _stop(br.broker_epoch, False, (0,)))
    assert result == {0: E.NONE}
    assert len(s2.brokers[0].delayed_produces) == 1                       # still the leader, HW not reached
    assert type(s2.brokers[0].partitions[0]) is Partition


def test_update_metadata_names_the_offline_replicas_and_the_cache_keeps_them():
    s = _cluster()
    s = _deliver_all(CFG, _run(CFG, s, A.BrokerCrash(2, True), A.ControllerProcessBrokerChange(0)))
    for b in (0, 1):
        md = s.brokers[b].metadata.partitions[0]
        assert md.offline_replicas == (2,), b
        assert md.replicas == (0, 1, 2) and md.isr == (0, 1) and md.leader == 0
    s = _deliver_all(CFG, _run(CFG, s, A.BrokerRestart(2), A.ControllerProcessBrokerChange(0)))
    for b in (0, 1, 2):
        assert s.brokers[b].metadata.partitions[0].offline_replicas == (), b


def test_a_partition_whose_only_replica_is_down_shows_no_leader_and_the_offline_replica():
    cfg = preset("kafka-2.4").config.replace(n_brokers=2, replication_factor=1, assignment_start_index=1)
    s = _cluster(cfg)
    s = _deliver_all(cfg, _run(cfg, s, A.BrokerCrash(1, True), A.ControllerProcessBrokerChange(0)))
    md = s.brokers[0].metadata.partitions[0]
    assert (md.leader, md.isr, md.replicas, md.offline_replicas) == (-1, (1,), (1,), (1,))
