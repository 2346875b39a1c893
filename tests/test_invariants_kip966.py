"""The properties of Vanlightly/kafka-tlaplus's KIP-966 specification (kip_966_properties.tla) the catalogue took in:
acked_survives_leaderless (NoCommittedRecordLostGlobally where acked_durability is silent), min_isr_recovery_quorum
(MinIsrRecoveryQuorum), broker_registers (EventuallyRuns) and their witnesses, on replayed traces of both eras and on
states edited by hand where no model rule breaks them."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import bring_up, drive
from isrlab.model import actions as A
from isrlab.model import step as step_module
from isrlab.model.config import preset
from isrlab.model.log import Log
from isrlab.model.node import replace_at
from isrlab.model.state import PartitionChangeRecord, PartitionRegistration
from isrlab.model.step import enabled_actions, initial_state, step
from isrlab.properties import invariants as I
from isrlab.properties.settle import settle

pytestmark = pytest.mark.unit

ZK = preset("kafka-2.4").config
KRAFT = preset("kafka-3.7").config
ELR2 = preset("kafka-4.1-min-isr-2").config          # the ELR with min.insync.replicas=2, RF 3

#: kafka-2.4: broker 1 leads alone (0 stopped, 2's session gone), acknowledges record 1, then crashes uncleanly
ZK_LEADERLESS = [A.ElectController(0), A.BrokerCrash(0, True), A.ElectController(1), A.ZkSessionExpire(2),
                 A.DeliverControlRequest(1, 1), A.ControllerProcessBrokerChange(1)] \
    + [A.DeliverControlRequest(1, 1)] * 7 + [A.Produce(1, 0, -1), A.BrokerCrash(1, False)]
#: kafka-3.7: brokers 1 and 2 fenced, broker 0 leads alone, acknowledges record 1, then crashes uncleanly
KRAFT_LEADERLESS = [A.MetadataApply(0)] * 4 + [A.HeartbeatsLost(1), A.FenceStaleBroker(1), A.MetadataApply(0),
                                               A.HeartbeatsLost(2), A.FenceStaleBroker(2), A.MetadataApply(0),
                                               A.Produce(0, 0, -1), A.BrokerCrash(0, False)]
#: the clock and the scheduled tasks, which ``_advance_to`` takes until the action it waits for is enabled
_CLOCK = (A.Tick, A.IsrExpiration, A.BrokerHeartbeat, A.MetadataApply, A.HighWatermarkCheckpoint)


def _advance_to(cfg, s, a):
    """``a`` applied to s, after as many clock ticks and scheduled tasks as it takes to enable it."""
    for _ in range(300):
        s2 = step(cfg, s, a)
        if s2 is not None:
            return s2
        s = step(cfg, s, next(x for x in enabled_actions(cfg, s) if type(x) in _CLOCK))
    raise AssertionError(f"{a} never became enabled")


def _edited(s):
    return s._clone(object())


def _without_record(s, brokers, p: int = 0):
    """s with the given brokers' logs of p emptied (each copy gone, without any fault the model counts)."""
    x = _edited(s)
    for b in brokers:
        br = x.broker_mut(b)
        br.logs = replace_at(br.logs, p, Log())
    return x


def _only(name):
    return (I.BY_NAME[name],)


# --------------------------------------------------------------------------- acked_survives_leaderless
@pytest.mark.parametrize("cfg, actions", [(ZK, ZK_LEADERLESS), (KRAFT, KRAFT_LEADERLESS)], ids=["zookeeper", "kraft"])
def test_a_leaderless_partition_keeps_its_acknowledged_record_on_a_stopped_replica(cfg, actions):
    s = drive(cfg, initial_state(cfg), *actions)
    (rid, offset, _epoch, _b, p), = s.ghost.acked
    assert not any(br.alive and br.partitions[p] is not None and br.partitions[p].leader == br.broker_id
                   for br in s.brokers)
    assert I.witness_acked_while_leaderless(cfg, s)            # the premise is reached
    assert I.acked_durability(cfg, s) is None                  # no leader: acked_durability has nothing to look at
    assert I.acked_survives_leaderless(cfg, s) is None         # the stopped leader's disk still holds it
    holders = [br.broker_id for br in s.brokers if I._holds(br.logs[p], offset, rid)]
    assert holders and not any(s.brokers[b].alive for b in holders)


@pytest.mark.parametrize("cfg, actions", [(ZK, ZK_LEADERLESS), (KRAFT, KRAFT_LEADERLESS)], ids=["zookeeper", "kraft"])
def test_the_last_copy_gone_while_leaderless_is_a_violation_unless_min_isr_replicas_lost_data(cfg, actions):
    s = drive(cfg, initial_state(cfg), *actions)
    gone = _without_record(s, range(cfg.n_brokers))
    facts = I.acked_survives_leaderless(cfg, gone)
    assert facts is not None and facts["record"] == s.ghost.acked[0][0] and facts["lossy_crashes"] == 0
    assert I.check_state(cfg, gone, 9)[0].invariant == "acked_survives_leaderless"
    tolerated = _edited(gone)
    tolerated.ghost_mut().lossy_crashes = cfg.min_insync_replicas   # Kafka promises survival of f = min ISR - 1
    assert I.acked_survives_leaderless(cfg, tolerated) is None


def test_a_leader_in_the_acknowledged_epoch_is_acked_durabilitys_not_reported_twice():
    """A live leader of the record's epoch lacking it breaks acked_durability; acked_survives_leaderless looks only
    where there is no such leader, so the same loss is not reported under two names."""
    s = drive(KRAFT, initial_state(KRAFT), *KRAFT_LEADERLESS[:-1])     # broker 0 still leads
    gone = _without_record(s, range(KRAFT.n_brokers))
    assert I.acked_durability(KRAFT, gone) is not None
    assert I.acked_survives_leaderless(KRAFT, gone) is None
    assert not I.witness_acked_while_leaderless(KRAFT, gone)


def test_a_replaced_disk_at_min_isr_1_loses_the_only_copy_within_kafkas_tolerance():
    """kafka-3.7-disk-wipe: the leader alone in the ISR stops and its disk is replaced: the record is gone from every
    replica, with one data loss at min.insync.replicas=1 (beyond f = 0: the TLA+ specification disables
    NoCommittedRecordLostGlobally there), so no violation."""
    cfg = preset("kafka-3.7-disk-wipe").config
    s = drive(cfg, initial_state(cfg), *KRAFT_LEADERLESS, A.DiskWipe(0))
    rid, offset = s.ghost.acked[0][:2]
    assert not any(I._holds(br.logs[0], offset, rid) for br in s.brokers) and s.ghost.lossy_crashes == 1
    assert I.acked_survives_leaderless(cfg, s) is None


#: kafka-3.7-lossy-crash (min.insync.replicas=2): record 1 acknowledged on all three; broker 0 shuts down, broker 1
#: crashes losing its unflushed suffix and, the last replica standing in the ISR, is elected (KIP-966's motivation);
#: 0 and 2 truncate to it, then 1 is fenced: no replica holds the record (shrunk from a guided search's 103 actions)
LAST_REPLICA_STANDING = [
    A.MetadataApply(1), A.MetadataApply(2), A.MetadataApply(2), A.OffsetsForLeaderEpoch(2, 0)] \
    + [A.MetadataApply(0)] * 4 + [
    A.Produce(0, 0, -1), A.MetadataApply(1), A.MetadataApply(1), A.OffsetsForLeaderEpoch(1, 0), A.FetchRequest(1, 0),
    A.FetchRequest(2, 0), A.FetchResponse(1, 0), A.FetchRequest(1, 0), A.FetchResponse(2, 0), A.FetchRequest(2, 0),
    A.ControlledShutdown(0), A.BrokerHeartbeat(0), A.BrokerCrash(0, True), A.ControlledShutdown(2),
    A.BrokerCrash(1, False), A.BrokerHeartbeat(2), A.Tick(9001), A.FenceStaleBroker(1), A.BrokerRestart(2),
    A.BrokerRestart(1), A.MetadataApply(1), A.FenceStaleBroker(0), A.BrokerRestart(0), A.MetadataApply(0),
    A.MetadataApply(1), A.MetadataApply(1), A.BrokerHeartbeat(1), A.MetadataApply(0), A.MetadataApply(1),
    A.FetchRequest(0, 0)] + [A.MetadataApply(2)] * 5 + [
    A.FetchRequest(2, 0), A.FetchResponse(0, 0), A.FetchResponse(2, 0), A.HeartbeatsLost(1), A.FenceStaleBroker(1),
    A.MetadataApply(1)]


def test_kip_966_loses_an_acknowledged_record_from_every_replica_and_the_elr_cuts_it():
    """The violation is KIP-966's (model/bugs.toml): replayed with the ELR (its fix) the unclean replica is never
    elected and the trace is cut; one lossy crash at min ISR 2 is within Kafka's tolerance, so it is no setting's."""
    from isrlab.properties.attribution import attribute, classify
    from isrlab.properties.shrink import replay_outcome

    p = preset("kafka-3.7-lossy-crash")
    s = drive(p.config, initial_state(p.config), *LAST_REPLICA_STANDING)
    assert s.ghost.lossy_crashes == 1 and I.witness_acked_while_leaderless(p.config, s)
    facts = I.acked_survives_leaderless(p.config, s)
    assert facts is not None and (facts["record"], facts["offset"]) == (1, 0)
    assert replay_outcome(p.config, LAST_REPLICA_STANDING, "acked_survives_leaderless", None)[0] == "fails"
    assert replay_outcome(p.config.replace(eligible_leader_replicas=True), LAST_REPLICA_STANDING,
                          "acked_survives_leaderless", None)[0] in ("holds", "cut")
    a = attribute(p.config, LAST_REPLICA_STANDING, "acked_survives_leaderless", expected=p.bugs)
    assert a.bugs == ("KIP-966",) and classify(p, a) == ("found", ("KIP-966",))


# --------------------------------------------------------------------------- min_isr_recovery_quorum
def _record(p, replicas, isr, leader, epoch, elr=(), recovery="RECOVERED", created=False):
    return PartitionChangeRecord(p, PartitionRegistration(replicas, isr, leader, epoch, epoch, elr, recovery), created)


def test_last_known_elr_is_rebuilt_by_the_specifications_rule():
    """ApplyPartitionChange: emptied while the ISR has min ISR members, else it gains every replica leaving the ELR;
    an unclean election (RECOVERING) gives the quorum up until the ISR has min ISR members again."""
    r = (0, 1, 2)
    log = (_record(0, r, r, 0, 0, created=True), _record(0, r, (0, 1), 0, 1),
           _record(0, r, (0,), 0, 2, elr=(1,)),        # below min ISR 2: 1 joins the ELR
           _record(0, r, (), -1, 3, elr=(0, 1)),       # the last member is fenced
           _record(0, r, (), -1, 4, elr=(0,)))         # 1 registers after an unclean shutdown: it leaves the ELR
    assert I._last_known_elr(ELR2, log) == (((1,), False),)
    assert I._last_known_elr(ELR2, log + (_record(0, r, (), -1, 5),)) == (((0, 1), False),)
    unclean = log + (_record(0, r, (2,), 2, 5, recovery="RECOVERING"),)
    assert I._last_known_elr(ELR2, unclean) == (((0, 1), True),)     # the election empties the ELR too
    healed = unclean + (_record(0, r, (1, 2), 2, 6),)
    assert I._last_known_elr(ELR2, healed) == (((), False),)


def _elr_state():
    """kafka-4.1-min-isr-2: record 1 acknowledged on all three; broker 2 fenced, 1 and then 0 crash uncleanly and are
    fenced (ISR empty, ELR [0, 1]), and 1 registers again without a clean shutdown and leaves the ELR."""
    s = drive(ELR2, settle(ELR2, initial_state(ELR2)).state, A.Produce(0, 0, -1))
    s = settle(ELR2, s).state
    assert s.ghost.acked
    for a in (A.HeartbeatsLost(2), A.FenceStaleBroker(2), A.HeartbeatsLost(1), A.BrokerCrash(1, False),
              A.FenceStaleBroker(1), A.BrokerCrash(0, False), A.FenceStaleBroker(0), A.BrokerRestart(1)):
        s = _advance_to(ELR2, s, a)
    return s


def test_the_recovery_quorum_keeps_min_isr_members_after_an_unclean_shutdown():
    s = _elr_state()
    part = s.quorum.partitions[0]
    assert (part.isr, part.elr, part.leader) == ((), (0,), -1)
    assert I._last_known_elr(ELR2, s.quorum.log)[0] == ((1,), False)   # 1 left the ELR for its unclean shutdown
    assert I.min_isr_recovery_quorum(ELR2, s) is None
    assert I.acked_survives_leaderless(ELR2, s) is None


def test_a_quorum_below_min_isr_is_a_violation():
    """The ELR member dropped with no unclean shutdown in the log (a builder that forgets a replica): the quorum,
    ISR + ELR + LastKnownELR, is one replica, below min.insync.replicas=2."""
    s = _edited(_elr_state())
    q = s.quorum_mut()
    q.partitions = (dataclasses.replace(q.partitions[0], elr=()),)
    facts = I.min_isr_recovery_quorum(ELR2, s)
    assert facts == {"partition": 0, "isr": [], "elr": [], "last_known_elr": [1], "min_isr": 2,
                     "problem": "recovery quorum below min ISR"}


def test_a_quorum_without_an_acknowledged_record_is_a_violation_below_the_tolerance():
    s = _elr_state()
    rid, offset = s.ghost.acked[0][:2]
    lost = _without_record(s, (0, 1))                 # both quorum members lost it, no lossy crash counted
    facts = I.min_isr_recovery_quorum(ELR2, lost)
    assert facts["problem"] == "no quorum member holds an acknowledged record"
    assert (facts["record"], facts["offset"]) == (rid, offset)
    assert I._holds(lost.brokers[2].logs[0], offset, rid)   # broker 2 holds it, but it is no quorum member
    tolerated = _edited(lost)
    tolerated.ghost_mut().lossy_crashes = 2
    assert I.min_isr_recovery_quorum(ELR2, tolerated) is None


def test_the_recovery_quorum_is_kraft_with_the_elr_only():
    """Without the ELR the ISR keeps its last member and shrinks below min ISR freely (KRaft before 4.1, ZooKeeper):
    there is no recovery quorum to hold to min ISR."""
    cfg = preset("kafka-3.7-lossy-crash").config               # min.insync.replicas=2, no ELR
    s = drive(cfg, initial_state(cfg), A.HeartbeatsLost(2), A.FenceStaleBroker(2), A.HeartbeatsLost(1),
              A.FenceStaleBroker(1))
    assert len(s.quorum.partitions[0].isr) == 1
    assert I.min_isr_recovery_quorum(cfg, s) is None
    assert I.min_isr_recovery_quorum(ZK, drive(ZK, initial_state(ZK), *ZK_LEADERLESS)) is None
    assert not I.witness_recovery_quorum_alone(ZK, initial_state(ZK))


def test_recovery_quorum_alone_is_the_specifications_premise():
    """MinIsrRecoveryQuorum's case: ISR and ELR empty, the LastKnownELR alone of min ISR members (0's unclean
    shutdown also taken out of the ELR, which the controller may then elect from as a last known leader)."""
    s = _edited(_elr_state())
    q = s.quorum_mut()
    r = q.partitions[0].replicas
    q.log = q.log + (_record(0, r, (), -1, q.partitions[0].leader_epoch + 1),)
    q.partitions = (q.log[-1].registration,)
    assert I.witness_recovery_quorum_alone(ELR2, s)
    assert I._last_known_elr(ELR2, q.log)[0] == ((0, 1), False)
    assert I.min_isr_recovery_quorum(ELR2, s) is None
    s.ghost_mut().deleted_partitions = (0,)          # a deleted topic's empty registration is no such partition
    assert not I.witness_recovery_quorum_alone(ELR2, s)


def test_a_fenced_last_known_leader_elected_leaves_no_recovery_quorum():
    """The metadata log a controller writes when it elects a last known leader that is fenced (KAFKA-19522, fixed in
    4.1.0): broker 2, the ISR's last member, is fenced into the ELR, registers again after an unclean shutdown and is
    elected at once (RECOVERING, alone in the ISR, which resets the LastKnownELR at min ISR 1); its next unclean
    restart takes it out of the ISR, with no ELR to move to: the recovery quorum is empty."""
    cfg = preset("kafka-4.1").config
    s = _edited(initial_state(cfg))
    q = s.quorum_mut()
    r = (0, 1, 2)
    records = (_record(0, r, r, 0, 0, created=True), _record(0, r, (1, 2), 1, 1), _record(0, r, (2,), 2, 2),
               _record(0, r, (), -1, 3, elr=(2,)), _record(0, r, (2,), 2, 4, recovery="RECOVERING"),
               _record(0, r, (), -1, 5, recovery="RECOVERING"))
    q.log = tuple(x for x in q.log if type(x) is not PartitionChangeRecord) + records
    q.partitions = (records[-1].registration,)
    assert I.min_isr_recovery_quorum(cfg, s) == {"partition": 0, "isr": [], "elr": [], "last_known_elr": [],
                                                 "min_isr": 1, "problem": "recovery quorum below min ISR"}


# --------------------------------------------------------------------------- broker_registers (EventuallyRuns)
def _pending(cfg, s):
    return I.LIVENESS_BY_NAME["broker_registers"].pending(cfg, s, 0)


def test_a_broker_whose_session_expired_is_pending_and_registers_again():
    s = drive(ZK, bring_up(), A.ZkSessionExpire(1))
    assert s.brokers[1].alive and _pending(ZK, s) and I.witness_broker_starting_up(ZK, s)
    r = settle(ZK, s, names=("broker_registers",))
    assert r.settled and r.state.zk.registrations[1] == r.state.brokers[1].broker_epoch
    assert not I.witness_broker_starting_up(ZK, r.state)


def test_broker_registers_fails_when_a_broker_never_reconnects(monkeypatch):
    s = drive(ZK, bring_up(), A.ZkSessionExpire(1))
    monkeypatch.setattr(step_module, "zk_reconnect", lambda cfg, st, b: None)   # a mutant: the session never returns
    r = settle(ZK, s, names=("broker_registers",))
    assert not r.settled and [v.invariant for v in r.violations] == ["broker_registers"]


def test_a_restarted_kraft_broker_starts_fenced_and_finishes_starting_up():
    s = drive(KRAFT, initial_state(KRAFT), A.HeartbeatsLost(2), A.FenceStaleBroker(2))
    assert not I.witness_broker_starting_up(KRAFT, s)          # fenced while running: not a start-up
    s = drive(KRAFT, s, A.BrokerCrash(2, False), A.BrokerRestart(2))
    assert I.witness_broker_starting_up(KRAFT, s) and not _pending(KRAFT, s)   # registered at once, fenced
    r = settle(KRAFT, s, names=("broker_registers", "eventually_unfenced", "metadata_converges"))
    assert r.settled and not r.state.quorum.registrations[2].fenced
    assert not I.witness_broker_starting_up(KRAFT, r.state)


def test_a_live_kraft_broker_without_its_own_registration_is_pending():
    """The model registers a new incarnation as it starts, so only an edited state shows the part of EventuallyRuns
    that eventually_unfenced leaves out: a live broker with another incarnation's registration is never unfenced."""
    s = _edited(settle(KRAFT, initial_state(KRAFT)).state)
    assert not _pending(KRAFT, s)
    q = s.quorum_mut()
    q.registrations = replace_at(q.registrations, 1, None)
    assert _pending(KRAFT, s) and not I.LIVENESS_BY_NAME["eventually_unfenced"].pending(KRAFT, s, 0)
    r = settle(KRAFT, s, names=("broker_registers",))
    assert not r.settled and [v.invariant for v in r.violations] == ["broker_registers"]


# --------------------------------------------------------------------------- the catalogue entries
@pytest.mark.parametrize("name, operator", [("acked_survives_leaderless", "NoCommittedRecordLostGlobally"),
                                            ("min_isr_recovery_quorum", "MinIsrRecoveryQuorum")])
def test_each_entry_names_the_tla_operator_and_kafkas_class(name, operator):
    inv = I.BY_NAME[name]
    assert operator in inv.source and operator in inv.check.__doc__ and "Kafka" in inv.source
    assert inv.kind == I.ALWAYS and inv.scope == I.STATE


def test_broker_registers_names_eventually_runs():
    lv = I.LIVENESS_BY_NAME["broker_registers"]
    assert "EventuallyRuns" in lv.source and "registerBroker" in lv.source
