"""Rule tests of the ZooKeeper era's controlled shutdown against Kafka 2.4.0.

``KafkaServer.controlledShutdown`` (the broker's retry loop), ``KafkaApis.handleControlledShutdownRequest`` and
``KafkaController.doControlledShutdown`` (the controller's answer and its leader moves), ``PartitionLeaderElection
Algorithms.controlledShutdownPartitionLeaderElection`` and ``ControllerContext``'s live-or-shutting-down brokers.
"""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model import errors as E
from isrlab.model.config import preset
from isrlab.model.elections import controlled_shutdown_partition_leader_election as cs_election
from isrlab.model.elections import offline_partition_leader_election
from isrlab.model.step import action_kinds, enabled_actions, enabled_actions_reference, step, tick_limit

from conftest import bring_up, deliver_all, drive, fetch_round

pytestmark = pytest.mark.unit

BASE = preset("kafka-2.4").config
CFG = BASE.replace(controlled_shutdown_enable=True, max_crashes=6, max_session_expirations=4)


def caught_up(cfg=CFG):
    """Controller on broker 0, leader 0, ISR [0, 1, 2], followers fetching."""
    s = bring_up(cfg)
    return drive(cfg, s, A.OffsetsForLeaderEpoch(1, 0), A.OffsetsForLeaderEpoch(2, 0))


def request(cfg, s, b):
    return drive(cfg, s, A.ControlledShutdown(b), A.ControlledShutdownRequest(b))


def response(s, b):
    return s.brokers[b].controlled_shutdown.response


# ----------------------------------------------------------------------------- the election algorithm
@pytest.mark.parametrize("isr, live, down, expected", [
    ((2, 4), {2, 4}, {2}, 4),           # testControlledShutdownPartitionLeaderElection
    ((2,), {2, 4}, {2}, None),          # ...LastIsrShuttingDown
    ((2, 4), {2, 4}, {2, 4}, None),     # ...AllIsrSimultaneouslyShutdown
    ((2, 4), {2}, {2}, None),           # the only other ISR member is not live
    ((4, 2), {2, 4}, set(), 2),         # assignment order, not ISR order
])
def test_controlled_shutdown_election(isr, live, down, expected):
    assert cs_election((2, 4), isr, live, down) == expected


def test_offline_election_function():
    assert offline_partition_leader_election((2, 4), (2, 4), {4}, False) == 4
    assert offline_partition_leader_election((2, 4), (2,), {4}, False) is None
    assert offline_partition_leader_election((2, 4), (2,), {4}, True) == 4


# ----------------------------------------------------------------------------- gating
def test_off_by_default_and_one_kind_for_both_eras():
    s = caught_up(BASE)
    assert step(BASE, s, A.ControlledShutdown(1)) is None           # controlled.shutdown.enable off
    assert A.ControlledShutdown not in action_kinds(BASE)
    assert {A.ControlledShutdown, A.ControlledShutdownRequest, A.ControlledShutdownResponse} <= set(action_kinds(CFG))
    kraft = preset("kafka-3.7").config
    assert A.ControlledShutdown in action_kinds(kraft)
    assert A.ControlledShutdownRequest not in action_kinds(kraft)   # the request and response are ZooKeeper-era


# ----------------------------------------------------------------------------- the controller's answer
def test_leader_moves_and_isr_shrinks():
    s = request(CFG, caught_up(), 0)                                 # the leader (and controller) shuts down
    st = s.zk.partition_states[0]
    assert (st.leader, st.leader_epoch, st.isr, st.zk_version) == (1, 1, (1, 2), 1)
    assert response(s, 0) == (E.NONE, ())
    c = s.controllers[0]
    assert c.shutting_down == (0,)
    for b in (0, 1, 2):                                              # LeaderAndIsr to live or shutting-down replicas
        assert type(c.queues[b][0]).__name__ == "LeaderAndIsrRequest"
        assert c.queues[b][0].partition_states[0].leader == 1
    um = c.queues[0][1]
    assert type(um).__name__ == "UpdateMetadataRequest" and um.live_brokers == (0, 1, 2)


def test_follower_gets_stop_replica_and_leaves_the_isr():
    s = request(CFG, caught_up(), 2)
    st = s.zk.partition_states[0]
    assert (st.leader, st.leader_epoch, st.isr) == (0, 1, (0, 1))
    q = s.controllers[0].queues[2]
    # doControlledShutdown's batch, then OfflineReplica's (UpdateMetadata before StopReplica: sendRequestsToBrokers)
    assert [type(r).__name__ for r in q] == ["StopReplicaRequest", "UpdateMetadataRequest", "StopReplicaRequest"]
    assert q[0].partitions == (0,) and not q[0].delete_partitions
    assert all(type(r).__name__ != "LeaderAndIsrRequest" for r in q)     # OfflineReplica's recipients exclude it
    s = deliver_all(CFG, s)
    assert s.brokers[2].fetchers[0] is None                          # its fetcher stopped
    assert response(s, 2) == (E.NONE, ())


def alone_in_isr():
    """``caught_up`` with ZooKeeper's ISR written as [0] (the leader alone), same version."""
    s = caught_up()._clone(object())
    zk = s.zk_mut()
    st = zk.partition_states[0]
    zk.partition_states = (st.__class__(0, st.leader_epoch, (0,), st.controller_epoch, st.zk_version),)
    return s


def test_last_isr_member_keeps_leading():
    s = alone_in_isr()
    st = s.zk.partition_states[0]
    s2 = request(CFG, s, 0)
    assert response(s2, 0) == (E.NONE, (0,))
    assert s2.zk.partition_states[0].leader == 0 and s2.zk.partition_states[0].zk_version == st.zk_version


def test_stale_broker_epoch():
    s = drive(CFG, caught_up(), A.ControlledShutdown(1))
    epoch = s.brokers[1].controlled_shutdown.request_epoch
    s = drive(CFG, s, A.ZkSessionExpire(1), A.ZkReconnect(1), A.ControllerProcessBrokerChange(0))
    assert s.controllers[0].live_brokers[1] > epoch                  # the bounce took 1 out of the ISR
    before = s.zk.partition_states
    s = drive(CFG, s, A.ControlledShutdownRequest(1))
    assert response(s, 1) == (E.STALE_BROKER_EPOCH, ())
    assert s.controllers[0].shutting_down == ()
    assert s.zk.partition_states == before                           # nothing moved


def test_same_or_newer_epoch_is_accepted():
    """Only an older broker epoch is refused (brokerEpoch < cachedBrokerEpoch)."""
    s = drive(CFG, caught_up(), A.ZkSessionExpire(1), A.ZkReconnect(1))   # the controller still has the old epoch
    assert s.brokers[1].broker_epoch > s.controllers[0].live_brokers[1] >= 0
    s = request(CFG, s, 1)
    assert response(s, 1) == (E.NONE, ())


@pytest.mark.parametrize("kip_380, error", [(True, E.UNKNOWN_SERVER_ERROR), (False, E.BROKER_NOT_AVAILABLE)])
def test_broker_the_controller_does_not_count_live(kip_380, error):
    """With KIP-380 the epoch lookup of a broker with no cached epoch throws (UNKNOWN_SERVER_ERROR); without it
    (UNKNOWN_BROKER_EPOCH) the liveness check answers BROKER_NOT_AVAILABLE."""
    cfg = CFG.replace(kip_380=kip_380)
    s = drive(cfg, caught_up(cfg), A.ControlledShutdown(1), A.ZkSessionExpire(1),
              A.ControllerProcessBrokerChange(0))
    assert s.controllers[0].live_brokers[1] < 0
    s = drive(cfg, s, A.ControlledShutdownRequest(1))
    assert response(s, 1) == (error, ())


def test_not_controller_after_the_controller_moved():
    s = drive(CFG, caught_up(), A.ControlledShutdown(1), A.ZkDeleteController(0), A.ControllerResign(0))
    assert s.controller_on(0) is None
    s = drive(CFG, s, A.ControlledShutdownRequest(1))
    assert response(s, 1) == (E.NOT_CONTROLLER, ())


def test_controller_down_is_a_network_error_then_retries_then_stops():
    s = drive(CFG, caught_up(), A.ControlledShutdown(1), A.BrokerCrash(0, True))
    cs = s.brokers[1].controlled_shutdown
    assert (cs.request_to, cs.remaining_retries) == (0, 2)          # controlled.shutdown.max.retries = 3
    s = drive(CFG, s, A.ControlledShutdownRequest(1))
    assert response(s, 1) == (E.NETWORK_EXCEPTION, ())
    # no controller in ZooKeeper: each retry goes to the previous controller (prevController)
    s = drive(CFG, s, A.ControlledShutdownResponse(1))
    assert s.brokers[1].controlled_shutdown.request_to == 0 and s.brokers[1].controlled_shutdown.remaining_retries == 1
    s = drive(CFG, s, A.ControlledShutdownRequest(1), A.ControlledShutdownResponse(1),
              A.ControlledShutdownRequest(1))
    assert s.brokers[1].controlled_shutdown.remaining_retries == 0 and s.brokers[1].alive
    s = drive(CFG, s, A.ControlledShutdownResponse(1))              # the last attempt failed: it stops anyway
    assert not s.brokers[1].alive and s.brokers[1].controlled_shutdown is None
    assert not s.zk.sessions[1]                                      # a clean stop closes the session


def test_success_stops_the_broker_cleanly_and_the_controller_forgets_it():
    s = deliver_all(CFG, request(CFG, caught_up(), 2))
    crashes = s.ghost.crashes
    s = drive(CFG, s, A.ControlledShutdownResponse(2))
    assert not s.brokers[2].alive and not s.zk.sessions[2] and s.ghost.crashes == crashes + 1
    s = drive(CFG, s, A.ControllerProcessBrokerChange(0))
    assert s.controllers[0].shutting_down == ()                     # onBrokerFailure removes it
    assert s.zk.partition_states[0].isr == (0, 1)                   # already out of the ISR: no further write


def test_no_retries_stops_at_once():
    cfg = CFG.replace(controlled_shutdown_max_retries=0)
    s = drive(cfg, caught_up(cfg), A.ControlledShutdown(1))
    assert not s.brokers[1].alive


def test_no_controller_and_no_previous_one_uses_every_retry_at_once():
    s = drive(CFG, bring_up(CFG), A.ZkDeleteController(0), A.ControllerResign(0))
    assert s.zk.controller == -1
    s = drive(CFG, s, A.ControlledShutdown(1))
    assert not s.brokers[1].alive                                    # "Proceeding to do an unclean shutdown"


def test_retry_after_partitions_remaining_goes_to_the_new_controller():
    s = request(CFG, alone_in_isr(), 0)
    assert response(s, 0) == (E.NONE, (0,))
    s = drive(CFG, s, A.ControlledShutdownResponse(0))              # a failed attempt: the next one is sent
    cs = s.brokers[0].controlled_shutdown
    assert s.brokers[0].alive and (cs.request_to, cs.remaining_retries, cs.response) == (0, 1, ())


def test_shutting_down_broker_is_not_elected_after_a_failure():
    """ControllerContext.isReplicaOnline excludes shutting-down brokers: a shutting-down ISR member is not elected
    when the leader dies (here the partition is left without a leader)."""
    cfg = CFG.replace(n_brokers=3, replication_factor=2)
    s = drive(cfg, bring_up(cfg, controller=2), A.OffsetsForLeaderEpoch(1, 0))
    s = s._clone(object())
    s.now += cfg.replica_lag_time_max_ms + 1                         # 1 never fetched: out of the ISR
    s.broker_mut(0).next_isr_expiration_ms = s.now
    s = drive(cfg, s, A.IsrExpiration(0))
    assert s.zk.partition_states[0].isr == (0,)
    s = request(cfg, s, 1)                                           # 1 shuts down while out of the ISR
    s = fetch_round(cfg, s, 1)                                       # and fetches before its StopReplica
    assert s.zk.partition_states[0].isr == (0, 1)
    s = drive(cfg, s, A.BrokerCrash(0, True), A.ControllerProcessBrokerChange(2))
    assert s.zk.partition_states[0].leader == -1                    # 1 is in the ISR but shutting down


def test_tick_and_enumeration_agree():
    s = request(CFG, caught_up(), 1)
    assert enabled_actions(CFG, s) == enabled_actions_reference(CFG, s)
    assert A.ControlledShutdownResponse(1) in enabled_actions(CFG, s)
    assert A.ControlledShutdown(1) not in enabled_actions(CFG, s)   # already shutting down
    assert tick_limit(CFG, s) is not None


def test_malformed_action_is_one_line():
    from isrlab.model.actions import ActionError, action_from_json
    with pytest.raises(ActionError, match="missing field 'broker'"):
        action_from_json({"type": "ControlledShutdownRequest"})


# ----------------------------------------------------------------------------- the engines
def _walk_states(cfg, runs, steps):
    from isrlab.properties.walker import derive_seed, walk
    from isrlab.model.step import initial_state
    out = []
    for i in range(runs):
        s = initial_state(cfg)
        for a in walk(cfg, derive_seed(7, i), steps, invariants=()).actions:
            s = step(cfg, s, a)
            out.append(s)
    return out


def test_explorer_keys_see_the_new_state():
    """The explorer's fast key partitions leader-moves states (a broker's controlled-shutdown state, the controller's
    shutting-down brokers and rebalance due time, the election znode) exactly as state_key does, and both tell a
    shutting-down broker's state apart."""
    from isrlab.properties.explore import fast_keyer, state_key
    cfg = preset("leader-moves").config
    states = _walk_states(cfg, 20, 150)
    assert any(b.controlled_shutdown is not None for s in states for b in s.brokers)
    assert any(c.shutting_down for s in states for c in s.controllers)
    fast = fast_keyer(cfg, memo_limit=50)
    by_fast, by_slow = {}, {}
    for t in states:
        a, b = fast(t), state_key(cfg, t)
        assert by_fast.setdefault(a, b) == b and by_slow.setdefault(b, a) == a
    s = caught_up()
    s2 = drive(CFG, s, A.ControlledShutdown(1))
    key = fast_keyer(CFG)
    assert state_key(CFG, s2) != state_key(CFG, s) and key(s2) != key(s)


def test_walker_draws_as_before_when_off():
    """The new kinds are drawn only when the configuration offers them: a kafka-2.4 walk is unchanged."""
    from isrlab.properties.walker import Policy, swarm_kinds
    import random
    kinds = swarm_kinds(random.Random(3), True, action_kinds(BASE))
    assert not kinds & {A.PreferredReplicaElection} and A.ControlledShutdown not in action_kinds(BASE)
    p = Policy(CFG, random.Random(5))
    assert A.ControlledShutdownRequest in p.kinds and A.ControlledShutdownResponse in p.kinds


def test_machine_has_the_rules_only_when_offered():
    from isrlab.properties.machines import machine_for, rule_name
    on, off = machine_for(CFG), machine_for(BASE)
    for kind in (A.ControlledShutdown, A.ControlledShutdownRequest, A.ControlledShutdownResponse):
        assert hasattr(on, rule_name(kind)) and not hasattr(off, rule_name(kind))
    assert A.ControlledShutdownRequest in machine_for(CFG, settle=True).settle_kinds
