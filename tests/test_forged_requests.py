"""KRaft requests the model's own brokers never make: an AlterPartition no leader of the model sends
(``AlterPartitionReceived``, budget ``max_forged_alter_partitions``) and a heartbeat that times out in the quorum
controller's event queue (``ExpiredBrokerHeartbeat``, budget ``max_expired_heartbeats``), both 0 by default.

Every AlterPartitionReceived the engines draw is the leader's request wrong in one field, which the 3.7.0 controller
refuses with the error its check gives and without a record; the invariant ``forged_alter_partition_refused`` fails
once a guard is dropped.  An expired heartbeat touches the session and records the offset, nothing else, and the
broker retries 100 ms later.
"""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model.config import preset
from isrlab.model.quorum_controller import forged_alter_partitions
from isrlab.model.step import action_kinds, apply, enabled_actions, initial_state, step
from isrlab.properties.invariants import forged_alter_partition_refused
from isrlab.properties.mutants import installed
from isrlab.properties.steptable import action_words

pytestmark = pytest.mark.unit

CFG = preset("kraft-forged-alter-partition").config.replace(max_forged_alter_partitions=1, max_expired_heartbeats=1)


def _formed(cfg=CFG):
    """The formed cluster after every broker replayed the log: leader 0 of [0, 1, 2] in epochs 0."""
    s = initial_state(cfg)
    for b in range(cfg.n_brokers):
        while s.brokers[b].metadata_offset < len(s.quorum.log):
            s = apply(cfg, s, A.MetadataApply(b))
    return s


def _fenced_2(cfg=CFG):
    """Broker 2 fenced (its heartbeats lost): ISR [0, 1], partition epoch 1; 2 is a replica that is not active."""
    s = apply(cfg, apply(cfg, _formed(cfg), A.HeartbeatsLost(2)), A.FenceStaleBroker(2))
    assert s.quorum.partitions[0].isr == (0, 1) and s.quorum.registrations[2].fenced
    return s


def test_no_built_in_budget_but_the_presets_offers_them():
    for name in ("kafka-3.7", "kafka-4.1"):
        kinds = action_kinds(preset(name).config)
        assert A.AlterPartitionReceived not in kinds and A.ExpiredBrokerHeartbeat not in kinds
    assert A.AlterPartitionReceived in action_kinds(preset("kraft-forged-alter-partition").config)
    s = _formed(preset("kafka-3.7").config)
    assert not [a for a in enabled_actions(preset("kafka-3.7").config, s)
                if type(a) in (A.AlterPartitionReceived, A.ExpiredBrokerHeartbeat)]


@pytest.mark.parametrize("state", [_formed, _fenced_2], ids=["formed", "broker-2-fenced"])
def test_every_drawn_request_is_refused_and_writes_nothing(state):
    s = state()
    drawn = forged_alter_partitions(CFG, s)
    assert drawn and set(drawn) <= set(enabled_actions(CFG, s))
    for a in drawn:
        s2 = apply(CFG, s, a)
        assert s2.ghost.forged_answers[-1] not in ("NONE", "NEW_LEADER_ELECTED"), a
        assert s2.quorum == s.quorum and s2.brokers == s.brokers, a
        assert forged_alter_partition_refused(CFG, s2) is None
        assert step(CFG, s2, a) is None                          # the budget (1) is spent
        assert "no leader sends" in action_words(CFG, s, a)


def test_each_check_gives_its_3_7_error():
    """Broker 2 fenced (ISR [0, 1], leader epoch 0, partition epoch 1): every check but the leader epoch's can
    answer."""
    s = _fenced_2()
    answers = {}
    for a in forged_alter_partitions(CFG, s):
        answers[(a.broker, a.broker_epoch, a.leader_epoch, a.partition_epoch, a.isr, a.leader_recovery_state)] = \
            apply(CFG, s, a).ghost.forged_answers[-1]
    epoch = s.quorum.registrations[0].epoch
    assert answers[(0, epoch, 0, 0, "0,1", "RECOVERED")] == "INVALID_UPDATE_VERSION"      # partition epoch 1 - 1
    assert answers[(0, epoch, 0, 2, "0,1", "RECOVERED")] == "NOT_CONTROLLER"
    assert answers[(0, epoch, 1, 1, "0,1", "RECOVERED")] == "NOT_CONTROLLER"
    assert answers[(0, epoch, 0, 1, "0,1,2", "RECOVERED")] == "INELIGIBLE_REPLICA"         # 2 is fenced
    assert answers[(0, epoch, 0, 1, "0,1,3", "RECOVERED")] == "INVALID_REQUEST"            # 3 holds no replica
    assert answers[(1, s.quorum.registrations[1].epoch, 0, 1, "0,1", "RECOVERED")] == "INVALID_REQUEST"
    assert answers[(0, epoch + 1, 0, 1, "0,1", "RECOVERED")] == "STALE_BROKER_EPOCH"


def test_a_request_from_an_older_leader_epoch_is_fenced():
    """Leader 0 fenced and back: 1 leads in epoch 1, and a request in epoch 0 gets FENCED_LEADER_EPOCH."""
    s = _formed()
    s = apply(CFG, apply(CFG, s, A.HeartbeatsLost(0)), A.FenceStaleBroker(0))
    part = s.quorum.partitions[0]
    assert part.leader == 1 and part.leader_epoch == 1
    a = A.AlterPartitionReceived(1, 0, s.quorum.registrations[1].epoch, 0, part.partition_epoch, "1,2")
    assert a in forged_alter_partitions(CFG, s)
    assert apply(CFG, s, a).ghost.forged_answers == ("FENCED_LEADER_EPOCH",)


@pytest.mark.parametrize("mutant, a", [
    ("alter-partition-from-non-leader", A.AlterPartitionReceived(1, 0, 1, 0, 0, "0,1,2")),
    ("alter-partition-isr-without-leader", A.AlterPartitionReceived(0, 0, 0, 0, 0, "1,2")),
    ("alter-partition-any-broker-epoch", A.AlterPartitionReceived(0, 0, 1, 0, 0, "0,1,2")),
])
def test_a_dropped_guard_breaks_the_invariant(mutant, a):
    s = _formed()
    assert a in forged_alter_partitions(CFG, s)
    assert forged_alter_partition_refused(CFG, apply(CFG, s, a)) is None
    with installed(mutant):
        facts = forged_alter_partition_refused(CFG, apply(CFG, s, a))
    assert facts is not None and facts["partition"] == 0 and facts["answers"][-1] in ("NONE", "NEW_LEADER_ELECTED")


def test_a_valid_request_written_by_hand_is_applied_and_no_violation():
    """Outside the drawn domain a trace may send a valid change (the shrink to [0, 1]): applied as the leader's."""
    s = _formed()
    s2 = apply(CFG, s, A.AlterPartitionReceived(0, 0, 0, 0, 0, "0,1"))
    assert s2.ghost.forged_answers == ("NONE",) and s2.quorum.partitions[0].isr == (0, 1)
    assert forged_alter_partition_refused(CFG, s2) is None


def test_an_expired_heartbeat_touches_the_session_and_the_broker_retries():
    s = _formed()                      # every heartbeat due now; the controller has no offset reported yet
    assert A.ExpiredBrokerHeartbeat(0) in enabled_actions(CFG, s) and s.quorum.reported_offsets[0] == 0
    s2 = apply(CFG, s, A.ExpiredBrokerHeartbeat(0))
    assert s2.quorum.last_contact_ms[0] == s.now
    assert s2.quorum.reported_offsets[0] == s.brokers[0].metadata_offset
    assert s2.brokers[0].next_heartbeat_ms == s.now + 100
    assert s2.quorum.log == s.quorum.log and s2.quorum.registrations == s.quorum.registrations
    assert s2.ghost.expired_heartbeats == 1 and s2.ghost.errors_seen != s.ghost.errors_seen   # REQUEST_TIMED_OUT
    assert step(CFG, s2, A.ExpiredBrokerHeartbeat(1)) is None                               # the budget is spent


def test_an_expired_heartbeat_does_not_unfence():
    """A fenced broker that has replayed its registration is unfenced by its heartbeat, not by an expired one."""
    s = _fenced_2()
    while s.brokers[2].metadata_offset < len(s.quorum.log):
        s = apply(CFG, s, A.MetadataApply(2))
    while A.BrokerHeartbeat(2) not in enabled_actions(CFG, s):
        s = apply(CFG, s, A.Tick(100))
    assert not apply(CFG, s, A.BrokerHeartbeat(2)).quorum.registrations[2].fenced
    assert s.quorum.last_contact_ms[2] < s.now - CFG.broker_session_timeout_ms     # lost, then fenced
    s2 = apply(CFG, s, A.ExpiredBrokerHeartbeat(2))
    assert s2.quorum.registrations[2].fenced and s2.quorum.last_contact_ms[2] == s.now
