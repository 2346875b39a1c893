"""Topics at run time (model/topics.py): deletion (TopicDeletionManager), creation and partition expansion
(TopicChange / PartitionModifications, onNewPartitionCreation), Kafka 2.4.0."""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model import errors as E
from isrlab.model.config import ConfigError, ModelConfig, preset
from isrlab.model.node import replace_at
from isrlab.model.start import StartError
from isrlab.model.state import Partition
from isrlab.model.step import action_kinds, initial_state, step
from isrlab.properties.invariants import LIVENESS, acked_durability, consumer_safety, partition_has_leader_bad
from test_stop_replica import _deliver_all, _run  # the shared step helpers (tests/ is on sys.path under pytest)

pytestmark = pytest.mark.unit

CFG = preset("kafka-2.4").config.replace(n_partitions=2, max_topic_deletions=1, max_partition_creations=1)
TOPIC_KINDS = {A.DeleteTopic, A.CreateTopic, A.CreatePartitions, A.ControllerProcessTopicDeletion,
               A.ControllerProcessTopicChange, A.ControllerProcessStopReplicaResponse}


def _responses(cfg, s, c=0):
    while step(cfg, s, A.ControllerProcessStopReplicaResponse(c)) is not None:
        s = _run(cfg, s, A.ControllerProcessStopReplicaResponse(c))
    return s


def _cluster(cfg=CFG):
    return _deliver_all(cfg, _run(cfg, initial_state(cfg), A.ElectController(0)))


def _names(queue):
    return [(type(r).__name__, getattr(r, "delete_partitions", None)) for r in queue]


# --------------------------------------------------------------------------- deletion
def test_deletion_sends_leader_during_delete_then_stop_replica_without_then_with_delete():
    s = _run(CFG, _cluster(), A.Produce(0, 0, -1), A.DeleteTopic(), A.ControllerProcessTopicDeletion(0))
    c = s.controller_on(0)
    for b in range(3):
        assert _names(c.queues[b]) == [("UpdateMetadataRequest", None), ("StopReplicaRequest", False),
                                       ("StopReplicaRequest", True)], b
        um, stop, delete = c.queues[b]
        assert [(ps.partition, ps.leader, ps.leader_epoch, ps.zk_version) for ps in um.partition_states] == \
            [(0, -2, 0, 0), (1, -2, 0, 0)]                               # LeaderAndIsr.duringDelete
        assert stop.partitions == (0, 1) and delete.partitions == (0, 1)
    # OfflineReplica: every replica leaves the ISR (the last member stays), the leader goes; no LeaderAndIsr
    assert [(st.leader, st.isr) for st in s.zk.partition_states] == [(-1, (2,)), (-1, (0,))]
    assert {st for row in c.replica_deletion for _r, st in row} == {"started"}
    s = _deliver_all(CFG, s)
    assert s.ghost.responses.produce[0][0].error == E.UNKNOWN_TOPIC_OR_PARTITION   # the cache forgot the topic
    assert [ev[0] for ev in s.controller_on(0).stop_replica_responses] == [0, 1, 2]
    s = _responses(CFG, s)
    assert s.zk.assignment == ((), ()) and s.zk.partition_states == (None, None) and not s.zk.delete_topics
    c = s.controller_on(0)
    assert (c.deleting, c.deletion_started, c.replica_deletion, c.assignment) == (False, False, (), ((), ()))
    assert s.ghost.deleted_partitions == (0, 1)
    for br in s.brokers:
        assert br.partitions == (None, None) and br.logs == (None, None) and br.metadata.partitions == (None, None)


def test_a_dead_replica_makes_the_topic_ineligible_until_its_broker_returns():
    s = _run(CFG, _cluster(), A.BrokerCrash(2, True), A.ControllerProcessBrokerChange(0))
    s = _deliver_all(CFG, _run(CFG, s, A.DeleteTopic(), A.ControllerProcessTopicDeletion(0)))
    c = s.controller_on(0)
    assert c.deletion_ineligible
    assert {r: st for r, st in c.replica_deletion[0]} == {0: "started", 1: "started", 2: "ineligible"}
    s = _responses(CFG, s)
    c = s.controller_on(0)
    assert c.deleting and {r: st for r, st in c.replica_deletion[0]} == {0: "successful", 1: "successful",
                                                                       2: "offline"}   # retried: OfflineReplica
    assert s.zk.delete_topics and s.zk.assignment[0]
    # the broker comes back with its logs: LeaderAndIsr (OnlineReplica), resumeDeletionForTopics, then StopReplica
    s = _run(CFG, s, A.BrokerRestart(2), A.ControllerProcessBrokerChange(0))
    assert [n for n, _d in _names(s.controller_on(0).queues[2])].count("StopReplicaRequest") == 2
    assert s.brokers[2].logs[0] is not None
    s = _responses(CFG, _deliver_all(CFG, s))
    assert s.zk.assignment == ((), ()) and s.ghost.deleted_partitions == (0, 1)
    assert s.brokers[2].logs == (None, None)


def test_a_storage_error_makes_the_replica_ineligible_and_the_deletion_is_retried():
    s = _run(CFG, _cluster(), A.DeleteTopic(), A.ControllerProcessTopicDeletion(0))
    s1 = s._clone(object())
    br = s1.broker_mut(1)
    br.partitions = replace_at(br.partitions, 0, "offline")              # a log directory failure on broker 1
    s = _deliver_all(CFG, s1)
    assert s.ghost.responses.stop_replica[1][0] == E.KAFKA_STORAGE_ERROR
    s = _run(CFG, s, A.ControllerProcessStopReplicaResponse(0), A.ControllerProcessStopReplicaResponse(0))
    c = s.controller_on(0)
    assert {r: st for r, st in c.replica_deletion[0]}[1] == "ineligible" and c.deletion_ineligible
    s = _run(CFG, s, A.ControllerProcessStopReplicaResponse(0))
    c = s.controller_on(0)
    # all other replicas deleted; the failed one went back to OfflineReplica (retryDeletionForIneligibleReplicas),
    # and the topic stays ineligible until its broker starts again
    assert {r: st for r, st in c.replica_deletion[0]}[1] == "offline" and c.deleting


def test_a_new_controller_resumes_a_deletion():
    s = _run(CFG, _cluster(), A.DeleteTopic(), A.ZkDeleteController(0), A.ControllerResign(0), A.ElectController(1))
    c = s.controller_on(1)
    assert c.deleting and c.deletion_started
    s = _responses(CFG, _deliver_all(CFG, s), c=1)
    assert s.zk.assignment == ((), ()) and s.ghost.deleted_partitions == (0, 1)


def test_a_moved_controller_resigns_on_topic_deletion():
    """ControllerIntegrationTest.testControllerMoveOnTopicDeletion: its first ZooKeeper write is fenced."""
    s = _run(CFG, _cluster(), A.ZkDeleteController(0), A.ElectController(1), A.DeleteTopic())
    before = s.zk.partition_states
    s = _run(CFG, s, A.ControllerProcessTopicDeletion(0))
    assert s.controller_on(0) is None and s.zk.partition_states == before


def test_admin_deletion_guards():
    s = _run(CFG, _cluster(), A.DeleteTopic())
    assert step(CFG, s, A.DeleteTopic()) is None                         # already marked
    assert step(CFG, s, A.CreatePartitions()) is None                    # no partition added to a deleting topic
    s = _responses(CFG, _deliver_all(CFG, _run(CFG, s, A.ControllerProcessTopicDeletion(0))))
    assert s.ghost.deleted_partitions == (0, 1)
    assert step(CFG, s, A.CreateTopic()) is None                         # a deleted topic is not created again
    assert step(CFG.replace(max_topic_deletions=0), _cluster(), A.DeleteTopic()) is None   # the budget


# --------------------------------------------------------------------------- creation and expansion
EXPAND = CFG.replace(initial_partitions=1, max_topic_deletions=0)


def test_partition_expansion_creates_the_new_partition_online():
    s = _cluster(EXPAND)
    assert s.zk.assignment == ((0, 1, 2), ()) and s.zk.partition_states[1] is None
    s = _run(EXPAND, s, A.CreatePartitions())
    assert s.zk.assignment[1] == (1, 2, 0) and s.controller_on(0).assignment[1] == ()
    assert step(EXPAND, s, A.CreatePartitions()) is None                 # budget (and no room) left
    s = _run(EXPAND, s, A.ControllerProcessTopicChange(0))
    st = s.zk.partition_states[1]
    assert (st.leader, st.leader_epoch, st.isr, st.zk_version, st.controller_epoch) == (1, 0, (0, 1, 2), 0, 1)
    lai = s.controller_on(0).queues[1][-2]
    assert type(lai).__name__ == "LeaderAndIsrRequest" and lai.partition_states[0].is_new
    s = _deliver_all(EXPAND, s)
    assert s.brokers[1].partitions[1].leader == 1


def test_partition_expansion_with_an_offline_replica_elects_a_live_one():
    s = _run(EXPAND, _cluster(EXPAND), A.BrokerCrash(1, True), A.ControllerProcessBrokerChange(0),
             A.CreatePartitions(), A.ControllerProcessTopicChange(0))
    st = s.zk.partition_states[1]
    assert (st.leader, st.leader_epoch, st.isr) == (2, 0, (0, 2))


def test_topic_creation_at_run_time_and_the_moved_controller():
    cfg = CFG.replace(initial_partitions=0, max_topic_deletions=0)
    s = _cluster(cfg)
    assert s.zk.partition_states == (None, None) and step(cfg, s, A.CreatePartitions()) is None
    s2 = _run(cfg, s, A.CreateTopic(), A.ControllerProcessTopicChange(0))
    assert s2.zk.partition_states[0].leader == 0 and s2.zk.partition_states[1] is None
    # testControllerMoveOnTopicCreation: created while the controller moved; the old one resigns on its write
    s3 = _run(cfg, s, A.CreateTopic(), A.ZkDeleteController(0), A.ElectController(1))
    assert s3.zk.partition_states[0].controller_epoch == 2                # the new controller created it
    s3 = _run(cfg, s3, A.ControllerProcessTopicChange(0))
    assert s3.controller_on(0) is None and s3.zk.partition_states[0].controller_epoch == 2


def test_partitions_added_to_a_topic_queued_for_deletion_are_reverted():
    cfg = CFG.replace(initial_partitions=1)
    s = _run(cfg, _cluster(cfg), A.CreatePartitions(), A.DeleteTopic(), A.ControllerProcessTopicDeletion(0))
    assert s.zk.assignment[1] == (1, 2, 0)
    s = _run(cfg, s, A.ControllerProcessTopicChange(0))                  # restorePartitionReplicaAssignment
    assert s.zk.assignment[1] == () and s.zk.partition_states[1] is None


# --------------------------------------------------------------------------- invariants, engines, config
def test_durability_invariants_skip_a_deleted_topic_explicitly():
    s = _run(CFG, _cluster(), A.Produce(0, 0, -1), A.OffsetsForLeaderEpoch(1, 0), A.OffsetsForLeaderEpoch(2, 0),
             A.FetchRequest(1, 0), A.FetchResponse(1, 0), A.FetchRequest(2, 0), A.FetchResponse(2, 0),
             A.FetchRequest(1, 0), A.FetchResponse(1, 0), A.FetchRequest(2, 0), A.FetchResponse(2, 0),
             A.ConsumerFetch(0, 0))
    assert len(s.ghost.acked) == 1 and len(s.ghost.consumed) == 1
    s = _responses(CFG, _deliver_all(CFG, _run(CFG, s, A.DeleteTopic(), A.ControllerProcessTopicDeletion(0))))
    assert s.ghost.deleted_partitions == (0, 1)
    # a broker leading partition 0 again with an empty log: the acknowledged and consumed record is not there
    forged = s._clone(object())
    br = forged.broker_mut(0)
    br.partitions = replace_at(br.partitions, 0, Partition(0, (0, 1, 2), (0,), 0, 9))
    br.logs = replace_at(br.logs, 0, s.brokers[1].logs[1] or _empty_log())
    assert acked_durability(CFG, forged) is None and consumer_safety(CFG, forged) is None
    g = forged.ghost_mut()
    g.deleted_partitions = ()
    assert acked_durability(CFG, forged)["record"] == 1 and consumer_safety(CFG, forged)["record"] == 1


def _empty_log():
    from isrlab.model.log import Log
    return Log()


def test_liveness_skips_a_topic_being_deleted():
    s = _run(CFG, _cluster(), A.BrokerCrash(2, True), A.ControllerProcessBrokerChange(0), A.DeleteTopic(),
             A.ControllerProcessTopicDeletion(0))
    assert s.zk.partition_states[0].leader == -1                          # no election during a deletion
    assert partition_has_leader_bad(CFG, s, 0)                            # "C and not G" itself holds ...
    pending = next(lv.pending for lv in LIVENESS if lv.name == "partition_has_leader")
    assert not pending(CFG, s, 0)                                         # ... but the topic is being deleted


def test_the_new_kinds_are_offered_only_within_their_budgets():
    assert not TOPIC_KINDS & set(action_kinds(preset("kafka-2.4").config))
    assert TOPIC_KINDS <= set(action_kinds(preset("topic-lifecycle").config))
    kinds = set(action_kinds(preset("kafka-2.4").config.replace(max_topic_deletions=1)))
    assert {A.DeleteTopic, A.ControllerProcessTopicDeletion, A.ControllerProcessStopReplicaResponse,
            A.ControllerProcessTopicChange} <= kinds and not {A.CreateTopic, A.CreatePartitions} & kinds


def test_bad_configs_get_one_line_errors():
    with pytest.raises(ConfigError, match="initial_partitions must be in -1..n_partitions"):
        ModelConfig(n_partitions=2, initial_partitions=3)
    with pytest.raises(ConfigError, match="max_topic_deletions must be >= 0"):
        ModelConfig(max_topic_deletions=-1)
    with pytest.raises(StartError, match="initial_partitions must be -1"):
        initial_state(CFG.replace(initial_partitions=1), {"brokers": []})


def test_a_replica_re_created_empty_during_a_deletion_is_no_hw_within_isr_violation():
    """At 2 brokers (found by the guided search, shrunk): the deletion's StopReplica empties broker 1's replica, the
    leader is told nothing (no LeaderAndIsr for a topic queued for deletion), and a new controller's failover
    LeaderAndIsr re-creates the replica empty.  The leader's ISR then names a replica below its HW, as in Kafka 2.4;
    hw_within_isr leaves partitions of a topic queued for deletion out (topic_gone)."""
    from isrlab.properties.explore import bounded_config
    from isrlab.properties.invariants import hw_within_isr

    cfg = bounded_config(preset("topic-lifecycle").config, 2)
    d = A.DeliverControlRequest
    s = _run(cfg, initial_state(cfg), A.ElectController(1), d(1, 0), d(1, 0), A.ZkDeleteController(1), A.DeleteTopic(),
             A.ElectController(0), A.ControllerResign(1), d(0, 1), d(0, 1), d(0, 1), d(0, 1), A.Produce(0, 0, -1),
             A.OffsetsForLeaderEpoch(1, 0), A.FetchRequest(1, 0), A.FetchResponse(1, 0), A.FetchRequest(1, 0), d(0, 1),
             A.ZkSessionExpire(0), A.ElectController(1), d(0, 1), d(1, 1), d(1, 1))
    leader = s.brokers[0]
    assert s.zk.delete_topics and leader.partitions[0].leader == 0 and 1 in leader.partitions[0].isr
    assert s.brokers[1].logs[0].log_end_offset == 0 < leader.logs[0].high_watermark == 1
    assert hw_within_isr(cfg, s) is None
