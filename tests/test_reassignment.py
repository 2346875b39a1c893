"""Partition reassignment (KIP-455, Kafka 2.4.0's ZooKeeper-era controller): /admin/reassign_partitions,
KafkaController.onPartitionReassignment's steps, the election that moves leadership into the targets, a target
that is down, a controller that moved, and the wiring in the engines."""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model.config import preset
from isrlab.model.reassignment import (parse_replicas, reassign_partition_leader_election, reassign_to,
                                       reassignment_targets, target_replicas)
from isrlab.model.step import action_kinds, apply, enabled_actions, initial_state, step
from isrlab.properties.walker import walk

pytestmark = pytest.mark.unit


def _cluster(**changes):
    """Two brokers, one replica on broker 0, which is the controller and leads; one reassignment allowed."""
    cfg = preset("reassignment").config.replace(n_brokers=2, replication_factor=1, **changes)
    s = apply(cfg, initial_state(cfg), A.ElectController(0))
    return cfg, _deliver(cfg, s)


def _deliver(cfg, s):
    while True:
        acts = [a for a in enabled_actions(cfg, s) if type(a) is A.DeliverControlRequest]
        if not acts:
            return s
        s = apply(cfg, s, acts[0])


def _fetch_rounds(cfg, s, n=3):
    for _ in range(n):
        for b in range(cfg.n_brokers):
            for kind in (A.OffsetsForLeaderEpoch, A.FetchRequest, A.FetchResponse):
                s2 = step(cfg, s, kind(b, 0))
                s = s2 if s2 is not None else s
    return s


def test_replica_assignment_arithmetic_is_kafkas():
    """ReplicaAssignment.reassignTo: RS = (TRS ++ ORS).distinct, AR = RS -- ORS, RR = RS -- TRS."""
    assert reassign_to(((1, 2, 3), (), ()), (3, 4, 2)) == ((3, 4, 2, 1), (4,), (1,))
    assert reassign_to(((0,), (), ()), (0,)) == ((0,), (), ())
    # a reassignment in progress is rebuilt from its origin replicas
    assert reassign_to(((1, 0), (1,), (0,)), (2,)) == ((2, 0), (2,), (0,))
    assert target_replicas(((3, 4, 2, 1), (4,), (1,))) == (3, 4, 2)


def test_reassign_partition_leader_election_is_the_first_live_target_in_the_isr():
    live = {4}.__contains__
    assert reassign_partition_leader_election((2, 4), (2, 4), live) == 4
    assert reassign_partition_leader_election((2, 4), (2,), set().__contains__) is None
    assert reassign_partition_leader_election((2, 4), (), {2}.__contains__) is None
    assert reassign_partition_leader_election((4, 2), (2, 4), {2, 4}.__contains__) == 4


def test_a_reassignment_walks_through_onPartitionReassignment():
    cfg, s = _cluster()
    s = apply(cfg, s, A.ReassignPartitions(0, "1"))
    assert s.zk.reassign_partitions == ((1,),) and s.controllers[0].reassign_event
    s = apply(cfg, s, A.ControllerProcessPartitionReassignment(0))
    assert not s.controllers[0].reassign_event
    assert s.zk.assignment == ((1, 0),) and s.zk.reassigning == (((1,), (0,)),)           # U1: RS, AR, RR
    st = s.zk.partition_states[0]
    assert (st.leader, st.leader_epoch, st.isr) == (0, 1, (0,))                           # A1: a new epoch
    # A1's LeaderAndIsr to RS, then A2's LeaderAndIsr (isNew) to the adding replica, each with RS
    q1 = s.controllers[0].queues[1]
    lais = [r for r in q1 if type(r).__name__ == "LeaderAndIsrRequest"]
    assert [r.partition_states[0].is_new for r in lais] == [False, True]
    assert all(r.partition_states[0].replicas == (1, 0) for r in lais)
    assert step(cfg, s, A.ControllerProcessReassignmentIsrChange(0, 0)) is None            # TRS not in the ISR yet
    s = _fetch_rounds(cfg, _deliver(cfg, s))
    assert s.zk.partition_states[0].isr == (0, 1)
    s = _deliver(cfg, apply(cfg, s, A.ControllerProcessReassignmentIsrChange(0, 0)))
    st = s.zk.partition_states[0]
    assert (st.leader, st.leader_epoch, st.isr, st.zk_version) == (1, 3, (1,), 4)         # B3 + B4
    assert s.zk.assignment == ((1,),) and s.zk.reassigning == (None,)                     # B6
    assert s.zk.reassign_partitions == ()                                                 # B7
    assert s.brokers[0].partitions[0] is None and s.brokers[0].logs[0] is None            # B5: deleted
    assert s.brokers[1].partitions[0].leader == 1
    assert s.ghost.responses.stop_replica[0][0] == "NONE"


def test_an_offline_target_halts_the_reassignment_until_it_comes_back():
    cfg, s = _cluster()
    s = apply(cfg, apply(cfg, s, A.BrokerCrash(1, True)), A.ControllerProcessBrokerChange(0))
    s = apply(cfg, apply(cfg, s, A.ReassignPartitions(0, "1")), A.ControllerProcessPartitionReassignment(0))
    assert s.zk.partition_states[0].leader_epoch == 1 and s.zk.reassign_partitions == ((1,),)
    assert s.controllers[0].queues[1] == ()                                               # nothing to a dead broker
    s = apply(cfg, s, A.BrokerRestart(1))
    s = apply(cfg, s, A.ControllerProcessBrokerChange(0))                                 # onBrokerStartup resumes
    assert s.zk.partition_states[0].leader_epoch == 2
    s = _fetch_rounds(cfg, _deliver(cfg, s))
    s = apply(cfg, s, A.ControllerProcessReassignmentIsrChange(0, 0))
    assert (s.zk.partition_states[0].leader, s.zk.partition_states[0].leader_epoch) == (1, 4)


def test_a_moved_controller_fails_the_reassignment_and_resigns():
    cfg, s = _cluster()
    s = apply(cfg, s, A.ReassignPartitions(0, "1"))
    s = apply(cfg, apply(cfg, s, A.ZkDeleteController(0)), A.ElectController(1))
    assert s.zk.partition_states[0].leader_epoch == 1            # the new controller started it at failover
    s = apply(cfg, s, A.ControllerProcessPartitionReassignment(0))
    assert [c.broker_id for c in s.controllers] == [1]           # ControllerMovedException: resigned
    assert s.zk.reassign_partitions == ((1,),)                   # its removal of the failed entry was fenced


def test_without_kafka_6082_the_zombie_controller_removes_the_failed_entry():
    cfg, s = _cluster(kafka_6082=False)
    s = apply(cfg, s, A.ReassignPartitions(0, "1"))
    s = apply(cfg, apply(cfg, s, A.ZkDeleteController(0)), A.ElectController(1))
    s = apply(cfg, s, A.ControllerProcessPartitionReassignment(0))
    assert s.zk.reassign_partitions == ()                        # StateChangeFailed, then the unfenced removal
    assert [c.broker_id for c in s.controllers] == [0, 1]


def test_the_admin_znode_is_refused_while_it_exists_and_past_the_budget():
    cfg, s = _cluster()
    s = apply(cfg, s, A.ReassignPartitions(0, "1"))
    assert step(cfg, s, A.ReassignPartitions(0, "0")) is None                              # NodeExists
    s = _fetch_rounds(cfg, _deliver(cfg, apply(cfg, s, A.ControllerProcessPartitionReassignment(0))))
    s = _deliver(cfg, apply(cfg, s, A.ControllerProcessReassignmentIsrChange(0, 0)))
    assert s.zk.reassign_partitions == () and s.ghost.reassignments == 1
    assert step(cfg, s, A.ReassignPartitions(0, "0")) is None                              # max_reassignments 1
    assert step(cfg, s, A.ReassignPartitions(0, "5")) is None                              # no broker 5


def test_targets_the_engines_offer():
    cfg = preset("reassignment").config
    assert reassignment_targets(cfg) == ("0,1", "0,2", "1,2", "0,1,2")
    assert reassignment_targets(cfg.replace(n_brokers=2, replication_factor=1)) == ("0", "1", "0,1")


@pytest.mark.parametrize("text", ["1,1", "-1", "a", "1,,2"])
def test_malformed_targets_are_refused_in_one_line(text):
    with pytest.raises(A.ActionError) as e:
        A.action_from_json({"type": "ReassignPartitions", "partition": 0, "replicas": text})
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError):
        parse_replicas(text)


def test_an_empty_target_is_kraft_s_cancel_only():
    """``""`` reads as a null target (AlterPartitionReassignments' cancel); the ZooKeeper era has no cancel, so its
    step refuses it, and parse_replicas still refuses it as a target."""
    a = A.action_from_json({"type": "ReassignPartitions", "partition": 0, "replicas": ""})
    assert a == A.ReassignPartitions(0, "")
    cfg = preset("reassignment").config
    assert step(cfg, initial_state(cfg), a) is None
    with pytest.raises(ValueError):
        parse_replicas("")


def test_reassignment_is_of_both_eras():
    kraft = preset("kafka-3.5").config.replace(max_reassignments=1)
    assert A.ReassignPartitions in action_kinds(kraft)
    assert A.ControllerProcessPartitionReassignment not in action_kinds(kraft)   # the ZooKeeper controller's events


def test_the_kinds_are_offered_only_with_a_budget():
    assert A.ReassignPartitions not in action_kinds(preset("kafka-2.4").config)
    kinds = action_kinds(preset("reassignment").config)
    assert {A.ReassignPartitions, A.ControllerProcessPartitionReassignment,
            A.ControllerProcessReassignmentIsrChange} <= set(kinds)


def test_the_walker_completes_reassignments_and_finds_nothing():
    cfg = preset("reassignment").config.replace(replication_factor=2, max_reassignments=2)
    seen = set()
    for seed in range(40):
        r = walk(cfg, seed, 600, ())
        assert r.violation is None, (seed, r.violation)
        seen |= {type(a) for a in r.actions}
    assert {A.ReassignPartitions, A.ControllerProcessPartitionReassignment,
            A.ControllerProcessReassignmentIsrChange} <= seen
