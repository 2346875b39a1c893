"""Rule tests of AlterIsr (KIP-497) against Kafka 2.7.0 and the fixes KAFKA-12686, KAFKA-12751, KAFKA-13091.

Partition (``Partition.scala`` at 2.7.0: maybeExpandIsr, maybeShrinkIsr, sendAlterIsrRequest,
handleAlterIsrResponse, the IsrState classes), ``AlterIsrManagerImpl`` (2.7.0) and
``KafkaController.processAlterIsr`` (2.7.0).  States are driven through ``step`` where that is natural; rule
functions are otherwise called on a writable clone, as in test_partition_rules.py.  Without ``kip_497`` none
of this exists: the last tests check that the 2.4 protocol is untouched.
"""

from __future__ import annotations

import dataclasses

import pytest

from isrlab.model import actions as A
from isrlab.model import errors as E
from isrlab.model.alter_isr import receive_alter_isr_response
from isrlab.model.config import preset
from isrlab.model.controller import process_alter_isr
from isrlab.model.partition import handle_alter_isr_response, make_leader, maybe_expand_isr, maybe_shrink_isr
from isrlab.model.requests import (AlterIsrPartition, AlterIsrPartitionResult, AlterIsrRequestData,
                                   LeaderAndIsrPartitionState, UpdateMetadataRequest)
from isrlab.model.state import AlterIsrItem, PendingIsr
from isrlab.model.step import enabled_actions, initial_state, step
from isrlab.properties.invariants import BY_NAME

from conftest import drive, fetch_round, produce, ready  # noqa: E402

pytestmark = pytest.mark.unit

CFG = preset("alter-isr").config     # KIP-497 with every fix; 3 brokers, replicas (0, 1, 2), lag 30000 ms
LAG = CFG.replica_lag_time_max_ms
P = 0


def writable(s, now=None):
    s2 = s._clone(object())
    if now is not None:
        s2.now = now
    return s2


def up(cfg=CFG):
    """Controller and leader on broker 0, ISR {0, 1, 2} at leader epoch 0, zkVersion 0, followers fetching."""
    s = ready(cfg)
    st = s.zk.partition_states[P]
    assert (st.leader, st.leader_epoch, st.isr, st.zk_version) == (0, 0, (0, 1, 2), 0)
    return s


def shrunk(cfg=CFG):
    """``up`` with one record that follower 1 fetched and follower 2 did not, LAG + 1 ms later: broker 0's
    isr-expiration has proposed removing 2 (nothing sent yet)."""
    s = fetch_round(cfg, produce(cfg, up(cfg), 1), 1)
    s = fetch_round(cfg, s, 1)                                  # 1 learns HW 0 and is caught up at LEO 1
    s2 = writable(s, s.now + LAG + 1)
    br = s2.broker_mut(0)
    br.next_isr_expiration_ms = s2.now
    return drive(cfg, s2, A.IsrExpiration(0))


def leader_part(s, b=0):
    return s.brokers[b].partitions[P]


# =========================================================================== the leader proposes (2.7.0)
def test_shrink_proposes_and_commits_nothing_SH7():
    s = shrunk()
    part = leader_part(s)
    assert part.isr == (0, 1, 2) and part.pending_isr == PendingIsr(False, (2,))
    (item,) = s.brokers[0].alter_isr_unsent
    assert item.request == AlterIsrPartition(P, 0, (0, 1), 0) and (item.isr, item.pending) == ((0, 1, 2), part.pending_isr)
    assert part.maximal_isr() == (0, 1, 2)                      # PendingShrinkIsr.maximalIsr = isr
    assert s.zk.partition_states[P].isr == (0, 1, 2)            # nothing written until the controller does it
    assert s.brokers[0].logs[P].high_watermark == 0             # 2 still holds the HW back


def test_no_second_proposal_while_one_is_in_flight():
    s = shrunk()
    s2 = writable(s, s.now + LAG)
    br = s2.broker_mut(0)
    assert maybe_shrink_isr(CFG, s2, br, P, s2.now) is False    # getOutOfSyncReplicas is empty while in flight
    set_lagging = br.partition_mut(P).remote_mut(1)
    set_lagging.last_caught_up_time_ms = 0
    assert maybe_shrink_isr(CFG, s2, br, P, s2.now) is False
    assert br.alter_isr_unsent == s.brokers[0].alter_isr_unsent and leader_part(s2).pending_isr == PendingIsr(False, (2,))
    # canAddReplicaToIsr: no expansion either
    part = br.partition_mut(P)
    part.isr = (0, 1)
    assert maybe_expand_isr(CFG, s2, br, P, 2) is False and leader_part(s2).pending_isr == PendingIsr(False, (2,))


def _expansion_pending():
    """Shrink of 2 committed (HW 1), then 2 fetches the record and fetches again: PendingExpandIsr({0, 1}, 2)."""
    s = drive(CFG, shrunk(), A.AlterIsrRequest(0), A.AlterIsrReceived(0), A.AlterIsrResponse(0))
    assert leader_part(s).isr == (0, 1) and leader_part(s).pending_isr is None
    s = drive(CFG, s, A.FetchRequest(2, P))
    assert leader_part(s).pending_isr is None                   # LEO 0 < HW 1: not in sync yet (EX2)
    return drive(CFG, s, A.FetchResponse(2, P), A.FetchRequest(2, P))


def test_expansion_is_pending_and_counts_in_the_hw_EX6_HW2():
    s = _expansion_pending()
    part = leader_part(s)
    assert part.isr == (0, 1) and part.pending_isr == PendingIsr(True, (2,)) and part.maximal_isr() == (0, 1, 2)
    (item,) = s.brokers[0].alter_isr_unsent
    assert item.request.new_isr == (0, 1, 2) and item.request.zk_version == 1
    # a record that 1 fetches but 2 does not: the HW waits for 2, a member of the maximal ISR only
    s = fetch_round(CFG, produce(CFG, s, 1), 1)
    s = fetch_round(CFG, s, 1)
    assert s.brokers[0].logs[P].log_end_offset == 2 and s.brokers[1].logs[P].log_end_offset == 2
    assert s.brokers[0].logs[P].high_watermark == 1


def test_min_isr_counts_committed_isr_at_append_and_maximal_isr_at_completion_P3_P7():
    cfg = CFG.replace(min_insync_replicas=3)
    s = drive(cfg, shrunk(cfg), A.AlterIsrRequest(0), A.AlterIsrReceived(0), A.AlterIsrResponse(0),
              A.FetchRequest(2, P), A.FetchResponse(2, P),
              A.FetchRequest(2, P))
    assert leader_part(s).isr == (0, 1) and leader_part(s).pending_isr == PendingIsr(True, (2,))
    errors = s.ghost.errors_seen
    s2 = drive(cfg, s, A.Produce(0, P, -1))
    assert s2.ghost.errors_seen & E.ERROR_BIT[E.NOT_ENOUGH_REPLICAS]              # |committed ISR| = 2 < 3
    assert not errors & E.ERROR_BIT[E.NOT_ENOUGH_REPLICAS]
    assert s2.brokers[0].logs[P].log_end_offset == s.brokers[0].logs[P].log_end_offset  # nothing appended
    # the same ISR committed: appended, and acknowledged once every member of it has the record
    s3 = drive(cfg, s, A.FetchResponse(2, P), A.AlterIsrRequest(0), A.AlterIsrReceived(0), A.AlterIsrResponse(0))
    assert leader_part(s3).isr == (0, 1, 2)
    s3 = drive(cfg, s3, A.Produce(0, P, -1))
    for b in (1, 2):
        s3 = fetch_round(cfg, fetch_round(cfg, s3, b), b)
    assert s3.ghost.acked and s3.brokers[0].logs[P].high_watermark == 2


# =========================================================================== the controller (processAlterIsr 2.7.0)
def _request(s, leader_epoch=0, new_isr=(0, 1), zk_version=0, broker=0, broker_epoch=None):
    if broker_epoch is None:
        broker_epoch = s.brokers[broker].broker_epoch
    return AlterIsrRequestData(broker, broker_epoch, (AlterIsrPartition(P, leader_epoch, new_isr, zk_version),))


def _process(cfg, s, req, controller=0):
    s2 = writable(s)
    return s2, process_alter_isr(cfg, s2, controller, req)


def test_controller_writes_zookeeper_and_sends_update_metadata():
    s = up()
    queued = [len(q) for q in s.controller_on(0).queues]
    s2, resp = _process(CFG, s, _request(s))
    st = s2.zk.partition_states[P]
    assert resp.error == E.NONE and resp.partitions == (AlterIsrPartitionResult(P, E.NONE, 0, 0, (0, 1), 1),)
    assert (st.leader, st.leader_epoch, st.isr, st.controller_epoch, st.zk_version) == (0, 0, (0, 1), 1, 1)
    assert s2.controller_on(0).partition_states[P] == st                 # updateLeaderAndIsrCache
    for b, q in enumerate(s2.controller_on(0).queues):
        assert len(q) == queued[b] + 1 and type(q[-1]) is UpdateMetadataRequest and q[-1].partition_states[0].isr == (0, 1)


def test_controller_fences_an_older_leader_epoch_strictly():
    s = up()
    s2, resp = _process(CFG, s, _request(s, leader_epoch=-1))
    assert resp.partitions[0].error == E.FENCED_LEADER_EPOCH and s2.zk.partition_states[P].zk_version == 0
    s3, resp = _process(CFG, s, _request(s, leader_epoch=0))              # equal: accepted
    assert resp.partitions[0].error == E.NONE and s3.zk.partition_states[P].zk_version == 1


def test_controller_answers_the_current_state_when_it_is_already_in_place():
    s = up()
    s2, resp = _process(CFG, s, _request(s, new_isr=(0, 1, 2), zk_version=7))   # LeaderAndIsr.equalsIgnoreZk
    assert resp.partitions == (AlterIsrPartitionResult(P, E.NONE, 0, 0, (0, 1, 2), 0),)
    assert s2.zk is s.zk                                                  # nothing written


def test_controller_refuses_a_stale_zk_version_unless_the_check_is_off():
    s = up()
    s2, resp = _process(CFG, s, _request(s, zk_version=5))
    assert resp.partitions[0].error == E.INVALID_UPDATE_VERSION and s2.zk is s.zk
    off = CFG.replace(partition_epoch_check=False)
    s3, resp = _process(off, s, _request(s, zk_version=5))
    assert resp.partitions[0].error == E.NONE and s3.zk.partition_states[P].isr == (0, 1)
    assert s3.zk.partition_states[P].zk_version == 1                      # current + 1, whatever was sent


def test_controller_top_level_errors():
    s = up()
    _s2, resp = _process(CFG, s, _request(s, broker_epoch=s.brokers[0].broker_epoch + 1))
    assert (resp.error, resp.partitions) == (E.STALE_BROKER_EPOCH, ())
    _s2, resp = _process(CFG, s, _request(s), controller=1)                # no controller on broker 1
    assert resp.error == E.NOT_CONTROLLER
    s3 = writable(s)
    zk = s3.zk_mut()
    zk.sessions = (False,) + zk.sessions[1:]                               # a zombie: its session is gone
    _s4, resp = _process(CFG, s3, _request(s))
    assert resp.error == E.NOT_CONTROLLER
    s5 = writable(s)
    c = s5.controller_mut(0)
    c.live_brokers = c.live_brokers[:2] + (-1,)                            # broker 2 unknown to the controller
    _s6, resp = _process(CFG, s5, _request(s, broker=2, new_isr=(2,)))
    assert resp.error == E.STALE_BROKER_EPOCH


def test_controller_answers_unknown_topic_or_partition_without_a_state():
    s = up()
    s2 = writable(s)
    c = s2.controller_mut(0)
    c.partition_states = (None,)
    _s3, resp = _process(CFG, s2, _request(s))
    assert resp.partitions[0].error == E.UNKNOWN_TOPIC_OR_PARTITION


# =========================================================================== the leader reads the answer
def test_commit_takes_the_controllers_isr_and_version():
    s = drive(CFG, shrunk(), A.AlterIsrRequest(0), A.AlterIsrReceived(0))
    assert s.brokers[0].alter_isr_unsent and s.brokers[0].alter_isr_inflight is not None  # kept until answered
    assert A.AlterIsrRequest(0) not in enabled_actions(CFG, s)                           # one in flight
    s = drive(CFG, s, A.AlterIsrResponse(0))
    part = leader_part(s)
    assert (part.isr, part.zk_version, part.pending_isr) == ((0, 1), 1, None)
    assert s.brokers[0].alter_isr_unsent == () and s.brokers[0].alter_isr_inflight is None
    assert s.ghost.isr_shrinks == 1


def _answered(result, cfg=CFG, s=None):
    """Partition.handleAlterIsrResponse on the shrunk state with ``result``: (changed, the Partition after)."""
    s = shrunk(cfg) if s is None else s
    s2 = writable(s)
    br = s2.broker_mut(0)
    (item,) = br.alter_isr_unsent
    changed = handle_alter_isr_response(cfg, s2, br, P, item, result)
    return changed, s2.brokers[0].partitions[P], s2


@pytest.mark.parametrize("error", [E.FENCED_LEADER_EPOCH, E.INVALID_UPDATE_VERSION, E.UNKNOWN_TOPIC_OR_PARTITION])
def test_errors_leave_the_partition_pending(error):
    changed, part, _ = _answered(AlterIsrPartitionResult(P, error))
    assert not changed and part.pending_isr == PendingIsr(False, (2,)) and part.isr == (0, 1, 2)


def test_a_success_for_another_leader_epoch_is_ignored():
    changed, part, _ = _answered(AlterIsrPartitionResult(P, E.NONE, 0, 1, (0, 1), 1))
    assert not changed and part.pending_isr is not None


def test_versions_older_ignored_equal_committed_with_kafka_12751_only():
    changed, part, _ = _answered(AlterIsrPartitionResult(P, E.NONE, 0, 0, (0, 1), -1))
    assert not changed and part.pending_isr is not None                   # older than the leader's: ignored
    changed, part, _ = _answered(AlterIsrPartitionResult(P, E.NONE, 0, 0, (0, 1), 0))
    assert changed and part.pending_isr is None and part.isr == (0, 1)    # equal: committed (KAFKA-12751)
    off = CFG.replace(kafka_12751=False)
    changed, part, _ = _answered(AlterIsrPartitionResult(P, E.NONE, 0, 0, (0, 1), 0), off, shrunk(off))
    assert not changed and part.pending_isr == PendingIsr(False, (2,))    # 2.7.0: `<=`, stays pending


def test_a_response_for_an_older_proposal_is_ignored():
    s = shrunk()
    s2 = writable(s)
    br = s2.broker_mut(0)
    (item,) = br.alter_isr_unsent
    other = dataclasses.replace(item, pending=PendingIsr(False, (1,)))
    assert not handle_alter_isr_response(CFG, s2, br, P, other, AlterIsrPartitionResult(P, E.NONE, 0, 0, (0, 2), 1))
    assert leader_part(s2).pending_isr == PendingIsr(False, (2,))


def test_top_level_error_keeps_the_items_for_the_next_request():
    s = shrunk()
    s2 = writable(s)
    br = s2.broker_mut(0)
    from isrlab.model.requests import AlterIsrResponseData
    from isrlab.model.state import AlterIsrInflight
    req = AlterIsrRequestData(0, br.broker_epoch, tuple(x.request for x in br.alter_isr_unsent))
    br.alter_isr_inflight = AlterIsrInflight(0, br.alter_isr_unsent, req, AlterIsrResponseData(E.STALE_BROKER_EPOCH))
    assert receive_alter_isr_response(CFG, s2, 0) == E.STALE_BROKER_EPOCH
    assert s2.brokers[0].alter_isr_unsent == s.brokers[0].alter_isr_unsent and s2.brokers[0].alter_isr_inflight is None
    assert A.AlterIsrRequest(0) in enabled_actions(CFG, s2)


# =========================================================================== KAFKA-13091 (3.1.0)
def test_commit_of_a_shrink_recomputes_the_hw_with_kafka_13091_only():
    s = drive(CFG, shrunk(), A.AlterIsrRequest(0), A.AlterIsrReceived(0), A.AlterIsrResponse(0))
    assert s.brokers[0].logs[P].high_watermark == 1                       # 2 no longer holds it back
    off = CFG.replace(kafka_13091=False)
    t = drive(off, shrunk(off), A.AlterIsrRequest(0), A.AlterIsrReceived(0))
    t2 = step(off, t, A.AlterIsrResponse(0))
    assert leader_part(t2).isr == (0, 1) and t2.brokers[0].logs[P].high_watermark == 0
    assert BY_NAME["hw_advanced_on_isr_shrink"].check(off, t, A.AlterIsrResponse(0), t2) == {
        "leader": 0, "partition": P, "isr_before": [0, 1, 2], "isr_after": [0, 1], "high_watermark": 0,
        "hw_candidate": 1, "log_end_offset": 1}
    assert BY_NAME["hw_advanced_on_isr_shrink"].check(CFG, t, A.AlterIsrResponse(0), s) is None


# =========================================================================== KAFKA-12686 (3.0.0)
def _leader_again(cfg, s):
    """A LeaderAndIsr for broker 0 at leader epoch 1 with ISR {0, 1}, applied (makeLeader)."""
    s2 = writable(s)
    br = s2.broker_mut(0)
    ps = LeaderAndIsrPartitionState(P, 1, 0, 1, (0, 1), 5, (0, 1, 2))
    make_leader(cfg, s2, br, P, ps, s2.now)
    return s2


def test_make_leader_clears_the_in_flight_item_without_kafka_12686():
    off = CFG.replace(kafka_12686=False)
    s = _leader_again(off, drive(off, shrunk(off), A.AlterIsrRequest(0), A.AlterIsrReceived(0)))
    assert leader_part(s).pending_isr is None and leader_part(s).isr == (0, 1)   # CommittedIsr(req.isr)
    assert s.brokers[0].alter_isr_unsent == () and s.brokers[0].alter_isr_inflight is not None
    s = _leader_again(CFG, drive(CFG, shrunk(), A.AlterIsrRequest(0), A.AlterIsrReceived(0)))
    assert leader_part(s).pending_isr is None and len(s.brokers[0].alter_isr_unsent) == 1   # kept (3.0.0)


def test_a_proposal_the_manager_refuses_reverts_to_the_committed_isr_kafka_12686():
    s = _leader_again(CFG, drive(CFG, shrunk(), A.AlterIsrRequest(0), A.AlterIsrReceived(0)))
    s2 = writable(s)
    br = s2.broker_mut(0)
    br.partition_mut(P).remote_mut(2).log_end_offset = 1                  # 2 in sync: LEO 1 >= HW, epoch start
    assert maybe_expand_isr(CFG, s2, br, P, 2) is False
    assert leader_part(s2).pending_isr is None and len(br.alter_isr_unsent) == 1   # refused: still committed
    # the old request's answer goes, and with it its item: the next proposal is queued
    s3 = drive(CFG, s2, A.AlterIsrResponse(0))
    assert s3.brokers[0].alter_isr_unsent == () and leader_part(s3).pending_isr is None
    s4 = writable(s3)
    assert maybe_expand_isr(CFG, s4, s4.broker_mut(0), P, 2) is False and leader_part(s4).pending_isr == PendingIsr(True, (2,))


def test_without_kafka_12686_the_old_answer_removes_the_new_item():
    off = CFG.replace(kafka_12686=False)
    s = _leader_again(off, drive(off, shrunk(off), A.AlterIsrRequest(0), A.AlterIsrReceived(0)))
    s2 = writable(s)
    s2.broker_mut(0).partition_mut(P).remote_mut(2).log_end_offset = 1
    maybe_expand_isr(off, s2, s2.broker_mut(0), P, 2)                     # queued: the map was cleared
    assert leader_part(s2).pending_isr == PendingIsr(True, (2,)) and len(s2.brokers[0].alter_isr_unsent) == 1
    s3 = drive(off, s2, A.AlterIsrResponse(0))
    assert leader_part(s3).pending_isr == PendingIsr(True, (2,)) and s3.brokers[0].alter_isr_unsent == ()
    assert A.AlterIsrRequest(0) not in enabled_actions(off, s3)
    # ZooKeeper's epoch is not the broker's here (the LeaderAndIsr was made up): the invariant exempts it
    assert BY_NAME["pending_isr_in_flight"].check(off, s3) is None


# =========================================================================== the request path
def test_request_goes_to_the_controller_the_metadata_names():
    s = shrunk()
    assert s.brokers[0].metadata.controller_id == 0 and A.AlterIsrRequest(0) in enabled_actions(CFG, s)
    s2 = writable(s)
    br = s2.broker_mut(0)
    br.metadata = dataclasses.replace(br.metadata, controller_id=1)       # no controller runs on broker 1
    assert A.AlterIsrRequest(0) not in enabled_actions(CFG, s2)
    br.metadata = dataclasses.replace(br.metadata, controller_id=-1)
    assert A.AlterIsrRequest(0) not in enabled_actions(CFG, s2)


def test_crash_drops_the_alter_isr_manager():
    s = drive(CFG, shrunk(), A.AlterIsrRequest(0), A.AlterIsrReceived(0), A.BrokerCrash(0, False))
    assert s.brokers[0].alter_isr_unsent == () and s.brokers[0].alter_isr_inflight is None


def test_no_isr_change_propagation_task_with_alter_isr():
    s = initial_state(CFG)
    assert all(br.next_isr_propagation_ms == -1 for br in s.brokers)
    s = shrunk()
    s = drive(CFG, s, A.AlterIsrRequest(0), A.AlterIsrReceived(0), A.AlterIsrResponse(0))
    assert not any(type(a) is A.IsrChangePropagation for a in enabled_actions(CFG, s))
    assert all(br.isr_change_set == () for br in s.brokers) and s.zk.isr_change_notifications == ()
    s = drive(CFG, s, A.BrokerCrash(2, True), A.BrokerRestart(2))
    assert s.brokers[2].next_isr_propagation_ms == -1


# =========================================================================== without KIP-497: 2.4 as it was
def test_without_kip_497_the_leader_writes_zookeeper_and_no_alter_isr_action_exists():
    cfg = preset("kafka-2.4").config.replace(replica_lag_time_max_ms=LAG)
    s = shrunk(cfg)
    assert leader_part(s).isr == (0, 1) and leader_part(s).pending_isr is None
    assert s.zk.partition_states[P].isr == (0, 1) and s.brokers[0].isr_change_set == (P,)
    assert s.brokers[0].alter_isr_unsent == () and s.brokers[0].metadata.controller_id == -1
    assert not any(type(a) in (A.AlterIsrRequest, A.AlterIsrResponse) for a in enabled_actions(cfg, s))


def test_alter_isr_kinds_draw_nothing_in_a_2_4_swarm_policy():
    """The walker's swarm draw is the same as before AlterIsr existed for configs without it: its kinds are
    core kinds (no keep-or-drop draw) and its eager candidates are drawn only with KIP-497."""
    import random

    from isrlab.properties.walker import CORE_KINDS, EAGER_CANDIDATES, OPTIONAL_KINDS, Policy

    assert {A.AlterIsrRequest, A.AlterIsrReceived, A.AlterIsrResponse} <= CORE_KINDS
    assert not {A.AlterIsrRequest, A.AlterIsrReceived, A.AlterIsrResponse} & (set(OPTIONAL_KINDS) | set(EAGER_CANDIDATES))
    a, b = random.Random(5), random.Random(5)
    Policy(preset("kafka-2.4").config, a)
    Policy(preset("kafka-2.7").config, b)
    assert a.random() != b.random()                                       # KIP-497 draws two more
