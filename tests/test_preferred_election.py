"""Rule tests of preferred-replica leader elections against Kafka 2.4.0.

``PartitionLeaderElectionAlgorithms.preferredReplicaPartitionLeaderElection``, ``KafkaController``'s
``processReplicaLeaderElection`` (the /admin/preferred_replica_election znode), ``onReplicaElection``,
``removePartitionsFromPreferredReplicaElection``, the pending elections of ``onControllerFailover``, and the
auto-leader-rebalance-task (``checkAndTriggerAutoLeaderRebalance``, ``processAutoPreferredReplicaLeaderElection``).
"""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model import errors as E
from isrlab.model.config import ConfigError, preset
from isrlab.model.elections import FIRST_REBALANCE_DELAY_MS, preferred_replica_partition_leader_election as pref
from isrlab.model.step import action_kinds, enabled_actions, enabled_actions_reference, step, tick_limit

from conftest import bring_up, deliver_all, drive

pytestmark = pytest.mark.unit

BASE = preset("kafka-2.4").config
CFG = BASE.replace(n_brokers=2, replication_factor=2, max_preferred_elections=3, max_crashes=4)


def fetch_until_settled(cfg, s, b, p=0):
    for _ in range(10):
        f = s.brokers[b].fetchers[p]
        if f is None:
            return s
        if f.state == "truncating":
            s = drive(cfg, s, A.OffsetsForLeaderEpoch(b, p))
        else:
            s = drive(cfg, s, A.FetchRequest(b, p), A.FetchResponse(b, p))
    return s


def leader_moved(cfg=CFG, rejoin=True, controller=1):
    """Replicas [0, 1], controller on ``controller``: broker 0 stops, 1 leads (epoch 1); 0 restarts and (with
    ``rejoin``) fetches back into the ISR."""
    s = bring_up(cfg, controller=controller)
    s = drive(cfg, s, A.OffsetsForLeaderEpoch(1, 0))
    s = deliver_all(cfg, drive(cfg, s, A.BrokerCrash(0, True), A.ControllerProcessBrokerChange(controller)))
    s = deliver_all(cfg, drive(cfg, s, A.BrokerRestart(0), A.ControllerProcessBrokerChange(controller)))
    if rejoin:
        s = fetch_until_settled(cfg, s, 0)
    return s


# ----------------------------------------------------------------------------- the election algorithm
@pytest.mark.parametrize("isr, live, expected", [
    ((2, 4), {2, 4}, 2),     # testPreferredReplicaPartitionLeaderElection
    ((2,), set(), None),     # ...PreferredReplicaInIsrNotLive
    ((4,), {2, 4}, None),    # ...PreferredReplicaNotInIsrLive
    ((), set(), None),       # ...PreferredReplicaNotInIsrNotLive
    ((4, 2), {2, 4}, 2),     # the ISR's order does not matter
])
def test_preferred_election(isr, live, expected):
    assert pref((2, 4), isr, live) == expected


def test_empty_assignment_elects_nothing():
    assert pref((), (1,), {1}) is None


# ----------------------------------------------------------------------------- the admin's znode
def test_elects_the_preferred_replica_and_deletes_the_znode():
    s = leader_moved()
    st = s.zk.partition_states[0]
    assert (st.leader, st.leader_epoch, st.isr) == (1, 1, (0, 1))
    s = drive(CFG, s, A.PreferredReplicaElection(0))
    assert s.zk.preferred_replica_election == (0,) and s.ghost.preferred_elections == 1
    assert step(CFG, s, A.PreferredReplicaElection(0)) is None      # the znode exists: NodeExists
    s = drive(CFG, s, A.ControllerProcessPreferredReplicaElection(1))
    st2 = s.zk.partition_states[0]
    assert (st2.leader, st2.leader_epoch, st2.isr, st2.zk_version) == (0, 2, (0, 1), st.zk_version + 1)
    assert s.zk.preferred_replica_election == ()
    q = s.controllers[0].queues
    assert [type(r).__name__ for r in q[0]] == ["LeaderAndIsrRequest", "UpdateMetadataRequest"]
    assert [type(r).__name__ for r in q[1]] == ["LeaderAndIsrRequest", "UpdateMetadataRequest"]
    s = deliver_all(CFG, s)
    assert s.brokers[0].partitions[0].leader == 0 and s.brokers[1].fetchers[0] is not None


def test_preferred_replica_out_of_the_isr_is_not_elected():
    s = leader_moved(rejoin=False)
    before = s.zk.partition_states[0]
    assert before.isr == (1,)
    s = drive(CFG, s, A.PreferredReplicaElection(0), A.ControllerProcessPreferredReplicaElection(1))
    assert s.zk.partition_states[0] == before                        # StateChangeFailed: nothing written
    assert s.zk.preferred_replica_election == ()                     # the znode is deleted anyway


def test_preferred_leader_already_leading_is_not_elected_again():
    s = bring_up(CFG, controller=1)
    before = s.zk.partition_states[0]
    assert before.leader == 0
    s = drive(CFG, s, A.PreferredReplicaElection(0), A.ControllerProcessPreferredReplicaElection(1))
    assert s.zk.partition_states[0] == before and s.zk.preferred_replica_election == ()
    assert not any(s.controllers[0].queues)                          # ELECTION_NOT_NEEDED: no request


def test_budget_bounds_the_admin():
    cfg = CFG.replace(max_preferred_elections=1)
    s = drive(cfg, bring_up(cfg, controller=1), A.PreferredReplicaElection(0),
              A.ControllerProcessPreferredReplicaElection(1))
    assert step(cfg, s, A.PreferredReplicaElection(0)) is None
    assert step(BASE, bring_up(BASE), A.PreferredReplicaElection(0)) is None   # off by default
    assert A.PreferredReplicaElection not in action_kinds(BASE)


@pytest.mark.parametrize("fenced", [True, False])
def test_moved_controller_resigns_when_kafka_6082_fences_the_deletion(fenced):
    """testControllerMoveOnPreferredReplicaElection: with KAFKA-6082 the old controller's znode deletion checks the
    controller epoch's zkVersion and fails (it resigns, the znode stays for the new controller); without it the
    zombie deletes the znode."""
    cfg = CFG.replace(kafka_6082=fenced, replication_factor=1)
    s = drive(cfg, bring_up(cfg), A.ZkDeleteController(0), A.ElectController(1), A.PreferredReplicaElection(0))
    s = drive(cfg, s, A.ControllerProcessPreferredReplicaElection(0))
    if fenced:
        assert s.controller_on(0) is None and s.zk.preferred_replica_election == (0,)
        s = drive(cfg, s, A.ControllerProcessPreferredReplicaElection(1))
        assert s.zk.preferred_replica_election == ()
    else:
        assert s.controller_on(0) is not None and s.zk.preferred_replica_election == ()


def test_pending_election_runs_at_failover():
    """onControllerFailover: the znode's partitions not led by their preferred replica elect, then it is deleted."""
    s = leader_moved()
    s = drive(CFG, s, A.PreferredReplicaElection(0), A.ZkDeleteController(1), A.ControllerResign(1),
              A.ElectController(0))
    st = s.zk.partition_states[0]
    assert (st.leader, st.controller_epoch) == (0, 2)
    assert s.zk.preferred_replica_election == ()


def test_not_handled_without_a_session():
    s = drive(CFG, leader_moved(), A.PreferredReplicaElection(0), A.ZkSessionExpire(1))
    assert step(CFG, s, A.ControllerProcessPreferredReplicaElection(1)) is None


# ----------------------------------------------------------------------------- auto.leader.rebalance.enable
AUTO = CFG.replace(auto_leader_rebalance_enable=True, leader_imbalance_check_interval_ms=1000)


def test_task_scheduled_5_s_after_failover_and_every_interval():
    s = bring_up(AUTO, controller=1)
    t0 = s.now
    assert s.controllers[0].next_rebalance_ms == t0 + FIRST_REBALANCE_DELAY_MS
    assert bring_up(CFG, controller=1).controllers[0].next_rebalance_ms == -1     # off by default
    s = leader_moved(AUTO)
    limit = tick_limit(AUTO, s)
    assert limit is not None and limit <= t0 + FIRST_REBALANCE_DELAY_MS             # the clock stops at the task
    assert step(AUTO, s, A.AutoLeaderRebalance(1)) is None                          # not due yet
    s = s._clone(object())
    s.now = t0 + FIRST_REBALANCE_DELAY_MS
    assert enabled_actions(AUTO, s) == enabled_actions_reference(AUTO, s)
    s = drive(AUTO, s, A.AutoLeaderRebalance(1))
    assert s.zk.partition_states[0].leader == 0 and s.zk.partition_states[0].leader_epoch == 2
    assert s.controllers[0].next_rebalance_ms == s.now + 1000


def test_imbalance_ratio_boundary():
    """Broker 0 prefers partitions 0 and 2; one of them led elsewhere is an imbalance of 50%: no election at
    leader.imbalance.per.broker.percentage 50 (the ratio must exceed it), an election at 49."""
    cfg = AUTO.replace(n_partitions=4, max_preferred_elections=3)
    s = bring_up(cfg, controller=1)
    assert [a[0] for a in s.zk.assignment] == [0, 1, 0, 1]
    for p in range(4):
        if s.zk.assignment[p][0] == 0:
            s = drive(cfg, s, A.OffsetsForLeaderEpoch(1, p))
    s = deliver_all(cfg, drive(cfg, s, A.BrokerCrash(0, True), A.ControllerProcessBrokerChange(1)))
    s = deliver_all(cfg, drive(cfg, s, A.BrokerRestart(0), A.ControllerProcessBrokerChange(1)))
    for p in range(4):
        s = fetch_until_settled(cfg, s, 0, p)
    assert [st.leader for st in s.zk.partition_states] == [1, 1, 1, 1]
    s = drive(cfg, s, A.PreferredReplicaElection(0), A.ControllerProcessPreferredReplicaElection(1))
    s = drive(cfg, s, A.ControllerProcessIsrChangeNotification(1)) if s.zk.isr_change_notifications else s
    assert [st.leader for st in s.zk.partition_states] == [0, 1, 1, 1]
    s = s._clone(object())
    s.now = s.controllers[0].next_rebalance_ms
    for pct, leader in ((50, 1), (49, 0)):
        c = cfg.replace(leader_imbalance_per_broker_percentage=pct)
        s2 = drive(c, s, A.AutoLeaderRebalance(1))
        assert s2.zk.partition_states[2].leader == leader, pct
        assert s2.zk.partition_states[1].leader == 1                 # broker 1's own partitions are balanced


def test_preferred_replica_offline_is_not_a_candidate():
    s = bring_up(AUTO, controller=1)
    s = deliver_all(AUTO, drive(AUTO, s, A.BrokerCrash(0, True), A.ControllerProcessBrokerChange(1)))
    s = s._clone(object())
    s.now = s.controllers[0].next_rebalance_ms
    before = s.zk.partition_states
    s = drive(AUTO, s, A.AutoLeaderRebalance(1))
    assert s.zk.partition_states == before


def test_the_imbalance_percentage_is_a_percentage():
    with pytest.raises(ConfigError, match="leader_imbalance_per_broker_percentage"):
        BASE.replace(leader_imbalance_per_broker_percentage=101)


# ----------------------------------------------------------------------------- ElectLeaders (KIP-460, AdminClient)
def elect(cfg, s, b, p=0):
    s = drive(cfg, s, A.ElectLeaders(b, p))
    return s, s.ghost.responses.elect_leaders[b][p]


def test_elect_leaders_answers():
    s = leader_moved()
    s2, error = elect(CFG, s, 0)                                     # broker 0 hosts no controller
    assert error == E.NOT_CONTROLLER and s2.zk.partition_states == s.zk.partition_states
    s2, error = elect(CFG, s, 1)
    assert error == E.NONE and s2.zk.partition_states[0].leader == 0
    s3, error = elect(CFG, s2, 1)
    assert error == E.ELECTION_NOT_NEEDED and s3.zk.partition_states == s2.zk.partition_states
    assert s3.ghost.preferred_elections == 2
    s4, _ = elect(CFG, s3, 0)
    assert step(CFG, s4, A.ElectLeaders(1, 0)) is None               # the admin's budget (3) is spent


def test_elect_leaders_preferred_not_available():
    s = leader_moved(rejoin=False)                                   # 0 live but out of the ISR
    s2, error = elect(CFG, s, 1)
    assert error == E.PREFERRED_LEADER_NOT_AVAILABLE and s2.zk.partition_states == s.zk.partition_states


def test_elect_leaders_at_a_moved_controller_times_out_and_it_resigns():
    s = drive(CFG, leader_moved(), A.ZkDeleteController(1), A.ElectController(0))
    s2, error = elect(CFG, s, 1)                                     # the old controller's write is fenced
    assert error == E.REQUEST_TIMED_OUT and s2.controller_on(1) is None
    assert s2.zk.partition_states == s.zk.partition_states
