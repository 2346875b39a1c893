"""Partition reassignment in KRaft (KIP-455 through the quorum controller; ReplicationControlManager
.alterPartitionReassignments and PartitionChangeBuilder, Kafka 3.7.0): the admin's request becomes a
PartitionChangeRecord with addingReplicas and removingReplicas, brokers replay it (a new replica creates its log and
follows, a removed one stops and deletes its replica), and the AlterPartition that brings every adding replica into
the ISR completes the reassignment.

Each test starts from the kraft-reassignment preset's formed cluster (brokers 0-2, partition 0 on replicas (0, 1),
0 leading in leader epoch 0) and checks every invariant of the catalogue after every step.
"""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model import errors as E
from isrlab.model.config import PRESETS, preset
from isrlab.model.state import NO_LEADER, PartitionChangeRecord
from isrlab.model.step import action_kinds, enabled_actions, initial_state, step
from isrlab.properties.invariants import check_transition
from isrlab.properties.walker import walk

pytestmark = pytest.mark.unit

CFG = preset("kraft-reassignment").config
#: kafka-4.1 with min.insync.replicas=2: a replica that leaves the ISR of two joins the ELR
ELR2 = CFG.replace(min_insync_replicas=2)


def _go(cfg, s, *actions):
    """Apply each action (it must be enabled), checking the whole catalogue on each transition."""
    for a in actions:
        s2 = step(cfg, s, a)
        assert s2 is not None, f"{A.describe(a)} is not enabled"
        assert check_transition(cfg, s, a, s2, 0) == [], A.describe(a)
        s = s2
    return s


def _replay(cfg, s):
    """Every live broker replays the metadata log to its end."""
    for b in range(len(s.brokers)):
        while s.brokers[b].alive and s.brokers[b].metadata_offset < len(s.quorum.log):
            s = _go(cfg, s, A.MetadataApply(b))
    return s


def _formed(cfg=CFG, records: int = 2):
    """The formed cluster replayed, follower 1 fetching, ``records`` acks=all records written and replicated."""
    s = _replay(cfg, initial_state(cfg))
    s = _go(cfg, s, A.OffsetsForLeaderEpoch(1, 0))
    for _ in range(records):
        s = _go(cfg, s, A.Produce(0, 0, -1), A.FetchRequest(1, 0), A.FetchResponse(1, 0))
    return _go(cfg, s, A.FetchRequest(1, 0), A.FetchResponse(1, 0))     # the HW reaches the follower


def _reassign(cfg, s, text: str):
    """ReassignPartitions(0, text): (the state after it, the records it appended)."""
    before = len(s.quorum.log)
    s = _go(cfg, s, A.ReassignPartitions(0, text))
    return s, s.quorum.log[before:]


def _catch_up(cfg, s, b: int):
    """New replica b truncates (nothing to truncate) and fetches the leader's log twice."""
    return _go(cfg, s, A.OffsetsForLeaderEpoch(b, 0), A.FetchRequest(b, 0), A.FetchResponse(b, 0),
               A.FetchRequest(b, 0), A.FetchResponse(b, 0))


def _alter(cfg, s, leader: int):
    """The leader's AlterPartition to the quorum controller: (the state after the request is handled, its answer)."""
    s = _go(cfg, s, A.AlterIsrRequest(leader), A.AlterIsrReceived(leader))
    return s, s.brokers[leader].alter_isr_inflight.response.partitions[0]


def _reg(s):
    return s.quorum.partitions[0]


# --------------------------------------------------------------------------- adding a replica
def test_adding_a_replica_joins_the_replicas_as_adding_catches_up_and_completes():
    s = _formed()
    s, records = _reassign(CFG, s, "0,1,2")
    assert len(records) == 1 and type(records[0]) is PartitionChangeRecord
    reg = records[0].registration
    assert (reg.replicas, reg.adding_replicas, reg.removing_replicas) == ((0, 1, 2), (2,), ())
    assert (reg.isr, reg.leader, reg.leader_epoch, reg.partition_epoch) == ((0, 1), 0, 0, 1)   # no epoch bump
    s = _replay(CFG, s)
    new = s.brokers[2]
    assert new.logs[0] is not None and new.logs[0].log_end_offset == 0          # an empty log, created
    assert new.fetchers[0] is not None and new.fetchers[0].leader == 0          # following the leader
    assert new.partitions[0].assigned_replicas == (0, 1, 2)
    assert s.brokers[0].partitions[0].assigned_replicas == (0, 1, 2)           # the leader tracks the new replica
    s = _catch_up(CFG, s, 2)
    assert s.brokers[2].logs[0].log_end_offset == 2
    s, answer = _alter(CFG, s, 0)
    assert answer.error == E.NONE
    reg = _reg(s)                                            # completeReassignmentIfNeeded
    assert (reg.replicas, reg.isr, reg.adding_replicas, reg.removing_replicas) == ((0, 1, 2), (0, 1, 2), (), ())
    assert (reg.leader, reg.leader_epoch, reg.partition_epoch) == (0, 0, 2)
    assert (answer.leader, answer.leader_epoch, answer.isr, answer.zk_version) == (0, 0, (0, 1, 2), 2)
    s = _replay(CFG, _go(CFG, s, A.AlterIsrResponse(0)))
    assert s.brokers[0].partitions[0].isr == (0, 1, 2)
    assert s.zk.assignment[0] == (0, 1, 2)                   # the assignment the invariants read moved too


# --------------------------------------------------------------------------- removing a replica
def test_removing_a_replica_completes_at_once_and_its_broker_deletes_the_partition():
    """A reassignment that only removes completes in the same record when the ISR keeps a replica (3.7.0's
    changePartitionReassignment with the builder's completeReassignmentIfNeeded): replicas and ISR lose it, the
    leader epoch is bumped (a replica left the replicas)."""
    s = _formed()
    s, records = _reassign(CFG, s, "0")
    assert len(records) == 1
    reg = records[0].registration
    assert (reg.replicas, reg.isr, reg.adding_replicas, reg.removing_replicas) == ((0,), (0,), (), ())
    assert (reg.leader, reg.leader_epoch, reg.partition_epoch) == (0, 1, 1)
    assert s.brokers[1].logs[0] is not None                 # deleted only when the broker replays the record
    s = _replay(CFG, s)
    gone = s.brokers[1]
    assert gone.partitions[0] is None and gone.logs[0] is None and gone.fetchers[0] is None
    assert gone.hw_checkpoint[0] is None
    leader = s.brokers[0].partitions[0]
    assert (leader.leader_epoch, leader.isr, leader.assigned_replicas) == (1, (0,), (0,))
    assert s.brokers[0].logs[0].log_end_offset == 2          # the acknowledged records stay on the leader
    s = _go(CFG, s, A.Produce(0, 0, -1))                    # the ISR of one takes acks=all writes
    assert s.brokers[0].logs[0].high_watermark == 3


# --------------------------------------------------------------------------- moving the leader away
def test_moving_the_leader_away_elects_a_target_replica_in_a_new_epoch():
    s = _formed()
    s, _ = _reassign(CFG, s, "1,2")
    reg = _reg(s)
    assert (reg.replicas, reg.adding_replicas, reg.removing_replicas, reg.leader) == ((1, 2, 0), (2,), (0,), 0)
    s = _catch_up(CFG, _replay(CFG, s), 2)
    s, answer = _alter(CFG, s, 0)
    assert answer.error == E.NEW_LEADER_ELECTED             # the AlterPartition completed it and moved the leader
    reg = _reg(s)
    assert (reg.replicas, reg.isr, reg.adding_replicas, reg.removing_replicas) == ((1, 2), (1, 2), (), ())
    assert (reg.leader, reg.leader_epoch, reg.partition_epoch) == (1, 1, 2)
    s = _replay(CFG, _go(CFG, s, A.AlterIsrResponse(0)))
    assert s.brokers[0].partitions[0] is None and s.brokers[0].logs[0] is None
    assert (s.brokers[1].partitions[0].leader, s.brokers[1].partitions[0].leader_epoch) == (1, 1)
    assert s.brokers[2].fetchers[0].leader == 1 and s.brokers[2].fetchers[0].leader_epoch == 1
    assert [s.brokers[b].logs[0].log_end_offset for b in (1, 2)] == [2, 2]


def test_an_adding_replica_out_of_the_isr_keeps_the_reassignment_open():
    """maybeCompleteReassignment: an ISR change that leaves an adding replica out changes nothing of the
    reassignment (a fence of the removing follower shrinks the ISR only)."""
    s = _replay(CFG, _reassign(CFG, _formed(), "0,2")[0])
    s = _go(CFG, s, A.HeartbeatsLost(1), A.FenceStaleBroker(1))
    reg = _reg(s)
    assert (reg.replicas, reg.isr, reg.adding_replicas, reg.removing_replicas) == ((0, 2, 1), (0,), (2,), (1,))


# --------------------------------------------------------------------------- cancel
def test_cancel_reverts_to_the_original_replicas_and_the_adding_broker_deletes_its_replica():
    """cancelPartitionReassignment (PartitionReassignmentRevert): the replicas without the adding ones, in the order
    the reassignment left them (target first: (1, 0)), the ISR without the adding ones; a replica leaving the
    replicas bumps the leader epoch."""
    s = _replay(CFG, _reassign(CFG, _formed(), "1,2")[0])
    assert s.brokers[2].logs[0] is not None
    s, records = _reassign(CFG, s, "")
    reg = records[0].registration
    assert (reg.replicas, reg.isr, reg.adding_replicas, reg.removing_replicas) == ((1, 0), (0, 1), (), ())
    assert (reg.leader, reg.leader_epoch, reg.partition_epoch) == (0, 1, 2)
    s = _replay(CFG, s)
    assert s.brokers[2].partitions[0] is None and s.brokers[2].logs[0] is None
    assert s.brokers[1].fetchers[0].leader_epoch == 1
    assert step(CFG, s, A.ReassignPartitions(0, "")) is None  # nothing left to cancel (NO_REASSIGNMENT_IN_PROGRESS)


def test_a_cancel_that_would_need_an_unclean_election_is_refused_without_it():
    """PartitionReassignmentRevert.unclean: no ISR member is left once the adding replicas are taken out (here an
    empty ISR, the ELR on); without unclean leader election the controller refuses the cancel
    (InvalidReplicaAssignmentException), with it the first original replica is the ISR, elected only if active."""
    s = _replay(CFG, _reassign(CFG, _formed(), "0,1,2")[0])
    s = _catch_up(CFG, s, 2)
    s = _go(CFG, s, A.HeartbeatsLost(0), A.FenceStaleBroker(0), A.HeartbeatsLost(1), A.FenceStaleBroker(1))
    reg = _reg(s)
    assert (reg.replicas, reg.isr, reg.elr, reg.adding_replicas, reg.leader) == ((0, 1, 2), (), (1,), (2,), NO_LEADER)
    assert step(CFG, s, A.ReassignPartitions(0, "")) is None   # the revert's ISR would be empty: unclean
    unclean = CFG.replace(unclean_leader_election=True)
    reg = _reg(_go(unclean, s, A.ReassignPartitions(0, "")))
    assert (reg.replicas, reg.isr, reg.elr, reg.adding_replicas) == ((0, 1), (0,), (), ())
    assert reg.leader == NO_LEADER                           # the UNCLEAN election finds no active replica


# --------------------------------------------------------------------------- the ELR (kafka-4.1)
def test_a_removed_elr_member_stays_in_the_elr_while_the_isr_is_below_min_isr():
    """3.7.0's maybePopulateTargetElr takes the ELR and the old ISR less the target ISR, whatever the target replicas:
    removing replica 1, in the ELR since its fence, leaves it in the ELR (the ISR of one is below min ISR 2) though
    it is no replica; electAnyLeader walks the target replicas only, so it is never elected."""
    s = _formed(ELR2)
    s = _go(ELR2, s, A.HeartbeatsLost(1), A.FenceStaleBroker(1))
    assert (_reg(s).isr, _reg(s).elr) == ((0,), (1,))
    s, records = _reassign(ELR2, _replay(ELR2, s), "0")
    reg = records[0].registration
    assert (reg.replicas, reg.isr, reg.elr, reg.leader, reg.leader_epoch) == ((0,), (0,), (1,), 0, 1)
    s = _replay(ELR2, s)
    assert s.brokers[1].logs[0] is None                      # broker 1 is still running: it deletes its replica
    s = _go(ELR2, s, A.HeartbeatsLost(0), A.FenceStaleBroker(0))
    reg = _reg(s)
    assert reg.leader == NO_LEADER and reg.isr == () and set(reg.elr) == {0, 1}
    assert reg.last_known_elr == (0,)


def test_a_removed_elr_member_leaves_the_elr_once_the_isr_reaches_min_isr():
    """The AlterPartition that brings the adding replica in completes the reassignment with an ISR of two (min ISR):
    maybePopulateTargetElr clears the ELR, the removed member with it."""
    s = _formed(ELR2)
    s = _go(ELR2, s, A.HeartbeatsLost(1), A.FenceStaleBroker(1))
    s, _ = _reassign(ELR2, _replay(ELR2, s), "0,2")
    assert (_reg(s).replicas, _reg(s).elr) == ((0, 2, 1), (1,))
    s = _catch_up(ELR2, _replay(ELR2, s), 2)
    s, answer = _alter(ELR2, s, 0)
    assert answer.error == E.NONE
    reg = _reg(s)
    assert (reg.replicas, reg.isr, reg.elr, reg.adding_replicas, reg.removing_replicas) == ((0, 2), (0, 2), (), (), ())
    assert (reg.leader, reg.leader_epoch) == (0, 1)


# --------------------------------------------------------------------------- vocabulary and gates
def test_only_the_preset_with_a_budget_offers_reassignments_in_kraft():
    kraft = [name for name, p in PRESETS.items() if p.config.kip_500]
    assert [n for n in kraft if A.ReassignPartitions in action_kinds(PRESETS[n].config)] == ["kraft-reassignment"]
    assert A.ControllerProcessPartitionReassignment not in action_kinds(CFG)   # no /admin znode in KRaft


def test_the_engines_offer_targets_within_the_budget_and_the_cancel_while_one_is_in_progress():
    s = _formed()
    offered = [a.replicas for a in enabled_actions(CFG, s) if type(a) is A.ReassignPartitions]
    assert offered == ["0", "1", "2", "0,2", "1,2", "0,1,2"]  # not "0,1": it changes nothing
    s = _replay(CFG, _reassign(CFG, s, "0,1,2")[0])
    offered = [a.replicas for a in enabled_actions(CFG, s) if type(a) is A.ReassignPartitions]
    assert offered == [""]                                   # the budget is spent; the cancel is offered
    assert A.action_from_json(A.action_to_json(A.ReassignPartitions(0, ""))) == A.ReassignPartitions(0, "")


def test_a_state_without_a_reassignment_encodes_as_before():
    from isrlab.model.encode import encode
    reg = encode(initial_state(CFG).quorum.partitions[0])
    assert "adding_replicas" not in reg and "removing_replicas" not in reg
    s, _ = _reassign(CFG, _formed(), "0,1,2")
    assert encode(_reg(s))["adding_replicas"] == [2]


def test_a_broker_removed_while_down_keeps_its_log_as_a_stray():
    """3.7.0 deletes a replica only on the delta that removes it (TopicDelta.localChanges' deletes); a broker that was
    down then publishes the whole image first, in which it is no replica: nothing is deleted, the log stays on disk
    (stray logs are deleted from 3.8.0 on, LogManager.isStrayKraftReplica), and the broker hosts no partition."""
    s = _go(CFG, _formed(), A.ControlledShutdown(1), A.BrokerHeartbeat(1))     # it leads nothing: it stops, fenced
    assert not s.brokers[1].alive and s.quorum.registrations[1].fenced
    s, _ = _reassign(CFG, s, "0")
    assert _reg(s).replicas == (0,)
    s = _replay(CFG, _go(CFG, s, A.BrokerRestart(1)))
    br = s.brokers[1]
    assert br.alive and br.metadata_offset == len(s.quorum.log)
    assert br.partitions[0] is None and br.fetchers[0] is None
    assert br.logs[0] is not None and br.logs[0].log_end_offset == 2


def test_seeded_walks_complete_cancel_and_delete_with_every_invariant_holding():
    """The walker on kraft-reassignment (two reassignments, the pending-reset race fixed so that kafka-4.1's known
    bug does not end the walks): every invariant holds, and the walks complete reassignments, cancel them and delete
    removed replicas."""
    cfg = CFG.replace(make_leader_keeps_pending_isr=True, max_reassignments=2)
    completed = cancelled = deleted = 0
    for seed in range(40):
        r = walk(cfg, seed, 600)
        assert not r.violations, (seed, r.violations)
        s = initial_state(cfg)
        for a in r.actions:
            s2 = step(cfg, s, a)
            before, after = s.quorum.partitions[0], s2.quorum.partitions[0]
            if type(a) is A.ReassignPartitions and a.replicas == "":
                cancelled += 1
            elif after.replicas != before.replicas and not after.adding_replicas and not after.removing_replicas:
                completed += 1
            deleted += sum(1 for b0, b1 in zip(s.brokers, s2.brokers) if b0.logs[0] is not None and b1.logs[0] is None
                           and b1.alive)
            s = s2
    assert completed and cancelled and deleted, (completed, cancelled, deleted)


def test_a_cancel_is_told_as_a_cancel():
    from isrlab.properties.steptable import action_words

    cfg = preset("kraft-reassignment").config
    s = initial_state(cfg)
    assert action_words(cfg, s, A.ReassignPartitions(0, "")) == "an admin cancels the reassignment"
    assert action_words(cfg, s, A.ReassignPartitions(0, "1,2")) == "an admin reassigns to replicas [1,2]"
