"""KRaft (KIP-500/631) and its 3.x rules on the model: the metadata log and its replay, registration, heartbeats and
fencing, AlterPartition at the quorum controller (KIP-841), KAFKA-15021, KAFKA-15583, Eligible Leader Replicas
(KIP-966), controlled shutdown, and the pending-reset race the fuzzers found.

Each test drives ``model.step`` from a preset's initial state with named actions (every one must be enabled) and
asserts on the state Kafka's code would leave: ReplicationControlManager / PartitionChangeBuilder /
BrokerHeartbeatManager (Kafka 3.5.0-3.9.0) on the controller side, ReplicaManager.applyDelta and Partition on the
brokers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from isrlab.model import actions as A, errors as E
from isrlab.model.config import ConfigError, preset
from isrlab.model.state import (BrokerRegistrationChangeRecord, FenceBrokerRecord, PartitionChangeRecord,
                                RegisterBrokerRecord, UnfenceBrokerRecord)
from isrlab.model.step import apply, enabled_actions, initial_state, step
from isrlab.model.trace import load_trace
from isrlab.properties.invariants import BY_NAME, check_transition

P = 0
KRAFT = preset("kafka-3.6").config
ARCHIVE = Path(__file__).resolve().parent.parent / "counterexamples"


def drive(cfg, s, *actions):
    for a in actions:
        s = apply(cfg, s, a)
    return s


def replay_all(cfg, s):
    """Every live broker replays the metadata log to its end."""
    while True:
        pending = [A.MetadataApply(br.broker_id) for br in s.brokers
                   if br.alive and br.metadata_offset < len(s.quorum.log)]
        if not pending:
            return s
        s = drive(cfg, s, *pending)


def formed(cfg=KRAFT):
    return replay_all(cfg, initial_state(cfg))


#: what the cluster does on its own while a test waits: scheduled tasks, replaying the log, ISR changes
BACKGROUND = (A.BrokerHeartbeat, A.HighWatermarkCheckpoint, A.MetadataApply, A.DelayedProduceExpire, A.IsrExpiration,
              A.AlterIsrRequest, A.AlterIsrReceived, A.AlterIsrResponse)


def run_until(cfg, s, done, silent=(), limit=400):
    """Let time pass (the longest tick allowed), taking the cluster's own background actions as they come due, except
    heartbeats of the ``silent`` brokers, until ``done(s)``."""
    for _ in range(limit):
        if done(s):
            return s
        acts = enabled_actions(cfg, s)
        due = [a for a in acts if type(a) in BACKGROUND and not (type(a) is A.BrokerHeartbeat and a.broker in silent)]
        if due:
            s = apply(cfg, s, due[0])
            continue
        fence = [a for a in acts if type(a) is A.FenceStaleBroker]
        ticks = [a for a in acts if type(a) is A.Tick]
        s = apply(cfg, s, fence[0] if fence else ticks[0])
    raise AssertionError("the awaited state never came")


def part(s):
    return s.quorum.partitions[P]


# --------------------------------------------------------------------------- the log and its replay
def test_the_cluster_starts_formed_and_brokers_learn_it_only_by_replaying_the_log():
    s = initial_state(KRAFT)
    assert [type(r) for r in s.quorum.log] == [RegisterBrokerRecord] * 3 + [PartitionChangeRecord]
    assert all(br.partitions[P] is None for br in s.brokers)          # nothing replayed yet
    s = formed()
    leader = s.brokers[0].partitions[P]
    assert (leader.leader, leader.isr, leader.leader_epoch, leader.zk_version) == (0, (0, 1, 2), 0, 0)
    assert [s.brokers[b].fetchers[P].leader for b in (1, 2)] == [0, 0]
    assert s.brokers[1].metadata.alive_brokers == (0, 1, 2)


def test_a_restarted_broker_publishes_its_image_at_once_up_to_its_registration():
    """MetadataLoader publishes only once caught up: the new incarnation never replays its predecessor's
    leadership changes one by one (one MetadataApply reaches its own RegisterBrokerRecord)."""
    s = drive(KRAFT, formed(), A.BrokerCrash(2, False))
    s = run_until(KRAFT, s, lambda t: t.quorum.registrations[2].fenced)
    s = drive(KRAFT, s, A.BrokerRestart(2))
    reg = s.quorum.registrations[2]
    assert reg.fenced and s.brokers[2].broker_epoch == reg.epoch == len(s.quorum.log) - 1
    s = drive(KRAFT, s, A.MetadataApply(2))
    assert s.brokers[2].metadata_offset == len(s.quorum.log)


def test_kinds_of_one_era_are_refused_in_the_other():
    zk = preset("kafka-2.4").config
    assert step(KRAFT, initial_state(KRAFT), A.ElectController(0)) is None
    assert step(zk, initial_state(zk), A.MetadataApply(0)) is None
    kinds = {type(a) for a in enabled_actions(KRAFT, formed())}
    assert A.MetadataApply not in kinds and A.BrokerHeartbeat in kinds and A.ElectController not in kinds


def test_kraft_needs_alter_partition():
    with pytest.raises(ConfigError, match="kip_500"):
        preset("kafka-2.4").config.replace(kip_500=True)


# --------------------------------------------------------------------------- heartbeats and fencing
def test_a_silent_broker_is_fenced_out_of_the_isr_and_its_leadership_moves():
    """handleBrokerFenced: PartitionChangeRecords first (ISR without it, a new leader from the ISR), then the
    FenceBrokerRecord; the leader epoch rises with the leader change."""
    s = drive(KRAFT, formed(), A.HeartbeatsLost(0))
    assert step(KRAFT, s, A.Tick(1)) is None                          # the stale-broker check runs first
    s = drive(KRAFT, s, A.FenceStaleBroker(0))
    assert [type(r) for r in s.quorum.log[-2:]] == [PartitionChangeRecord, FenceBrokerRecord]
    g = part(s)
    assert (g.leader, g.isr, g.leader_epoch, g.partition_epoch) == (1, (1, 2), 1, 1)
    s = replay_all(KRAFT, s)
    assert s.brokers[1].partitions[P].leader == 1 and s.brokers[2].fetchers[P].leader == 1
    assert 0 not in s.brokers[2].metadata.alive_brokers


def test_a_heartbeat_after_replaying_its_registration_unfences():
    s = drive(KRAFT, formed(), A.HeartbeatsLost(2), A.FenceStaleBroker(2))
    assert s.quorum.registrations[2].fenced
    t = drive(KRAFT, replay_all(KRAFT, s), A.BrokerHeartbeat(2))
    assert not t.quorum.registrations[2].fenced and type(t.quorum.log[-1]) is UnfenceBrokerRecord


def test_the_last_isr_member_stays_when_fenced_and_leads_again_when_unfenced():
    """Without the ELR the controller never empties an ISR: the fenced last member keeps it, the partition has no
    leader, and unfencing that broker elects it (handleBrokerUnfenced over leaderless partitions)."""
    cfg = KRAFT.replace(max_session_expirations=3)
    s = formed(cfg)
    for b in (1, 2, 0):
        s = drive(cfg, s, A.HeartbeatsLost(b), A.FenceStaleBroker(b))
    assert (part(s).leader, part(s).isr) == (-1, (0,))
    s = run_until(cfg, replay_all(cfg, s), lambda t: part(t).leader >= 0, silent=(1, 2))
    assert (part(s).leader, part(s).isr) == (0, (0,))


# --------------------------------------------------------------------------- AlterPartition
def _shrink_proposed(cfg, s, follower=2):
    """The leader (0) proposes removing ``follower``, which stops fetching, once the lag has passed."""
    s = drive(cfg, s, A.Produce(0, P, 1))

    def others_fetch(t):
        for b in (1, 2):
            if b != follower:
                if step(cfg, t, A.OffsetsForLeaderEpoch(b, P)) is not None:
                    t = drive(cfg, t, A.OffsetsForLeaderEpoch(b, P))
                while step(cfg, t, A.FetchRequest(b, P)) is not None and \
                        t.brokers[0].partitions[P].remote(b).log_end_offset < t.brokers[0].logs[P].log_end_offset:
                    t = drive(cfg, t, A.FetchRequest(b, P), A.FetchResponse(b, P))
        return t

    for _ in range(200):
        s = others_fetch(s)
        if s.brokers[0].alter_isr_unsent:
            return s
        acts = enabled_actions(cfg, s)
        due = [a for a in acts if type(a) in (A.BrokerHeartbeat, A.HighWatermarkCheckpoint, A.IsrExpiration)]
        s = apply(cfg, s, due[0] if due else next(a for a in acts if type(a) is A.Tick))
    raise AssertionError("no shrink proposed")


def test_alter_partition_commits_a_shrink_and_15021_decides_the_leader_epoch():
    for cfg, epoch in ((KRAFT, 0), (preset("kafka-3.5").config, 1)):
        s = _shrink_proposed(cfg, formed(cfg))
        s = drive(cfg, s, A.AlterIsrRequest(0), A.AlterIsrReceived(0))
        assert (part(s).isr, part(s).partition_epoch, part(s).leader_epoch) == ((0, 1), 1, epoch)
        s = drive(cfg, s, A.AlterIsrResponse(0))
        assert s.ghost.responses is not None
        leader = s.brokers[0].partitions[P]
        if epoch == 0:       # same leader epoch: the answer commits at once
            assert (leader.isr, leader.pending_isr, leader.zk_version) == ((0, 1), None, 1)
        else:                # before KAFKA-15021 the answer's leader epoch is newer: pending until the record
            assert leader.pending_isr is not None
            s = replay_all(cfg, s)
            assert (s.brokers[0].partitions[P].isr, s.brokers[0].partitions[P].leader_epoch) == ((0, 1), 1)


def test_a_stale_partition_epoch_is_invalid_update_version_and_a_fenced_member_ineligible():
    from isrlab.model.quorum_controller import alter_partition
    from isrlab.model.requests import AlterIsrPartition, AlterIsrRequestData

    s = formed()
    t = s._clone(object())
    t.quorum = s.quorum._clone(t._tok)
    ok = AlterIsrRequestData(0, 0, (AlterIsrPartition(P, 0, (0, 1), 0),))
    assert alter_partition(KRAFT, t, ok).partitions[0].error == E.NONE
    stale = AlterIsrRequestData(0, 0, (AlterIsrPartition(P, 0, (0, 1, 2), 0),))
    assert alter_partition(KRAFT, t, stale).partitions[0].error == E.INVALID_UPDATE_VERSION
    assert alter_partition(KRAFT, t, AlterIsrRequestData(0, 7, ())).error == E.STALE_BROKER_EPOCH
    old_epoch = AlterIsrRequestData(0, 0, (AlterIsrPartition(P, -1, (0, 1), 1),))
    assert alter_partition(KRAFT, t, old_epoch).partitions[0].error == E.FENCED_LEADER_EPOCH
    s = drive(KRAFT, s, A.HeartbeatsLost(2), A.FenceStaleBroker(2))
    t = s._clone(object())
    t.quorum = s.quorum._clone(t._tok)
    pe = part(s).partition_epoch
    readd = AlterIsrRequestData(0, 0, (AlterIsrPartition(P, part(s).leader_epoch, (0, 1, 2), pe),))
    assert alter_partition(KRAFT, t, readd).partitions[0].error == E.INELIGIBLE_REPLICA
    off = KRAFT.replace(kafka_13916=False)
    assert alter_partition(off, t, readd).partitions[0].error == E.NONE     # 3.2: the fenced broker is taken back


def test_ineligible_replica_reverts_the_leader_to_its_committed_isr():
    from isrlab.model.partition import handle_alter_isr_response
    from isrlab.model.requests import AlterIsrPartitionResult
    from isrlab.model.state import PendingIsr

    s = formed()
    t = s._clone(object())
    br = t.broker_mut(0)
    pt = br.partition_mut(P)
    pt.isr = (0, 1)
    pt.pending_isr = PendingIsr(True, (2,))
    item = type("Item", (), {"isr": (0, 1), "pending": PendingIsr(True, (2,))})()
    handle_alter_isr_response(KRAFT, t, br, P, item, AlterIsrPartitionResult(P, E.INELIGIBLE_REPLICA))
    assert t.brokers[0].partitions[P].pending_isr is None and t.brokers[0].partitions[P].isr == (0, 1)


# --------------------------------------------------------------------------- KIP-966
def test_kafka_15583_keeps_the_hw_while_the_isr_is_below_min_isr():
    for cfg, moves in ((preset("kafka-3.7").config.replace(min_insync_replicas=2), False),
                       (preset("kafka-3.6").config.replace(min_insync_replicas=2), True)):
        s = formed(cfg)
        for b in (1, 2):
            s = drive(cfg, s, A.HeartbeatsLost(b), A.FenceStaleBroker(b))
        s = replay_all(cfg, s)
        s = drive(cfg, s, A.Produce(0, P, 1))
        assert (s.brokers[0].logs[P].high_watermark == 1) is moves, cfg.kafka_15583


def test_elr_keeps_replicas_that_left_below_min_isr_and_elects_from_it():
    cfg = preset("kafka-4.1").config.replace(min_insync_replicas=2)
    cfg = cfg.replace(max_session_expirations=3)
    s = formed(cfg)
    s = drive(cfg, s, A.HeartbeatsLost(2), A.FenceStaleBroker(2))
    assert (part(s).isr, part(s).elr) == ((0, 1), ())                   # still at min ISR: 2 is simply out
    s = drive(cfg, s, A.HeartbeatsLost(1), A.FenceStaleBroker(1))
    assert (part(s).isr, part(s).elr) == ((0,), (1,))                   # below min ISR: 1 joins the ELR
    s = drive(cfg, s, A.HeartbeatsLost(0), A.FenceStaleBroker(0))
    assert (part(s).leader, part(s).isr, part(s).elr) == (-1, (), (0, 1))   # the ISR may empty
    s = run_until(cfg, replay_all(cfg, s), lambda t: part(t).leader >= 0, silent=(0, 2))
    assert (part(s).leader, part(s).isr, part(s).elr) == (1, (1,), (0,))   # 1 unfences: elected from the ELR
    assert not set(part(s).isr) & set(part(s).elr)


def test_an_unclean_shutdown_leaves_isr_and_elr_at_registration():
    cfg = preset("kafka-4.1").config.replace(min_insync_replicas=2)
    cfg = cfg.replace(max_session_expirations=3)
    s = formed(cfg)
    for b in (2, 1, 0):
        s = drive(cfg, s, A.HeartbeatsLost(b), A.FenceStaleBroker(b))
    assert part(s).elr == (0, 1)
    s = drive(cfg, s, A.BrokerCrash(1, False), A.BrokerRestart(1))     # no clean-shutdown epoch on disk
    assert part(s).elr == (0,)
    s = drive(cfg, s, A.BrokerCrash(0, True), A.BrokerRestart(0))      # a clean stop keeps its place
    assert part(s).elr == (0,)


def test_a_wiped_disk_comes_back_empty_and_the_elr_keeps_it_from_leading():
    """DiskWipe: no log, no checkpoint, no clean-shutdown epoch; with the ELR (3.9.0+) its registration counts as an
    unclean shutdown and removes it from the ISR and the ELR."""
    cfg = preset("kafka-4.1-disk-wipe").config
    s = drive(cfg, formed(cfg), A.Produce(0, P, 1))
    s = drive(cfg, s, A.BrokerCrash(0, True))
    s = run_until(cfg, s, lambda t: t.quorum.registrations[0].fenced)
    assert step(cfg, s, A.DiskWipe(1)) is None                          # only a stopped broker's disk
    s = drive(cfg, s, A.DiskWipe(0))
    assert s.brokers[0].logs[P] is None and s.ghost.lossy_crashes == 1
    assert step(cfg, s, A.DiskWipe(0)) is None                          # within the budget, once
    before = part(s)
    s = drive(cfg, s, A.BrokerRestart(0))
    assert 0 not in part(s).isr and 0 not in part(s).elr and part(s).partition_epoch >= before.partition_epoch


# --------------------------------------------------------------------------- controlled shutdown
def test_controlled_shutdown_moves_leadership_then_stops_cleanly():
    """UNFENCED -> CONTROLLED_SHUTDOWN while it leads (its leadership moves, it leaves the ISR), SHUTDOWN_NOW once
    every active broker has reported replaying past those records; the broker stops cleanly, fenced, and its broker
    epoch is on disk for the next registration (previousBrokerEpoch)."""
    s = drive(KRAFT, formed(), A.ControlledShutdown(0))
    s = run_until(KRAFT, s, lambda t: t.quorum.registrations[0].in_controlled_shutdown)
    assert any(type(r) is BrokerRegistrationChangeRecord for r in s.quorum.log)
    assert (part(s).leader, 0 in part(s).isr) == (1, False)
    s = run_until(KRAFT, s, lambda t: not t.brokers[0].alive)
    assert s.quorum.registrations[0].fenced and s.brokers[0].clean_shutdown_epoch == 0
    assert min(s.quorum.reported_offsets[b] for b in (1, 2)) >= s.quorum.shutdown_offsets[0]


# --------------------------------------------------------------------------- the pending-reset race
#: the race's trace: the finding's (docs/findings/kraft-pending-reset-race.md, 34 actions, hand-cut from the fuzzer's)
FINDING = Path(__file__).resolve().parent.parent / "docs" / "findings" / "kraft-pending-reset-race.trace.json"
#: the presets that pin a KRaft release as shipped (kafka-X.Y), not the variants built on one
KRAFT_RELEASES = ("kafka-3.3", "kafka-3.5", "kafka-3.6", "kafka-3.7", "kafka-4.0", "kafka-4.1")
#: where the fuzzer's archived trace of the race (67 actions, found on kafka-3.5) is not enabled: the step it stops at
FUZZER_TRACE_CUT = {
    "kafka-3.3": 55,    # broker 0's fetch of step 53 is still in flight there, so its next FetchRequest is not enabled
    # the ELR leaves the partition leaderless after the two unclean crashes until broker 2's unfencing (step 49) elects
    # it as the last known leader (KAFKA-19522, 4.1.0), with nothing: broker 0 has nothing to fetch at step 53
    "kafka-4.1": 53,
}


def test_the_kraft_releases_are_every_kraft_version_preset():
    import re

    from isrlab.model.config import PRESETS

    assert tuple(sorted(n for n, p in PRESETS.items()
                        if p.config.kip_500 and re.fullmatch(r"kafka-\d+\.\d+", n))) == KRAFT_RELEASES


@pytest.mark.parametrize("name", KRAFT_RELEASES)
def test_the_pending_reset_race_breaks_committed_prefix_in_every_kraft_release(name):
    """Kafka's makeLeader (make_leader_keeps_pending_isr off, every release): the finding's trace breaks
    committed_prefix at its last step, with the controller's ISR holding a follower below the HW that the leader's
    ISR does not count; with the model's fix the same 34 actions run with no invariant failing; the attribution names
    the race alone, a known bug no release preset expects."""
    from isrlab.model.trace import Trace
    from isrlab.properties.attribution import attribute, classify
    from isrlab.properties.replay import replay

    p = preset(name)
    cfg = p.config
    assert not cfg.make_leader_keeps_pending_isr
    trace = load_trace(str(FINDING))
    s = initial_state(cfg)
    for i, a in enumerate(trace.actions[:-1], 1):
        post = apply(cfg, s, a)
        assert not check_transition(cfg, s, a, post, i), f"step {i} already fails on {name}"
        s = post
    last = trace.actions[-1]
    post = apply(cfg, s, last)
    found = {v.invariant for v in check_transition(cfg, s, last, post, len(trace.actions))}
    assert "committed_prefix" in found
    leader = post.brokers[2].partitions[P]
    follower = BY_NAME["committed_prefix"].check(cfg, post)["follower"]
    assert follower in part(post).isr and follower not in leader.isr   # the controller's ISR, not the leader's
    fixed = replay(Trace(config=cfg.replace(make_leader_keeps_pending_isr=True), actions=trace.actions),
                   with_changes=False)
    assert fixed.violations == [] and len(fixed.steps) == len(trace.actions)
    a = attribute(cfg, trace.actions, "committed_prefix", expected=p.bugs)
    assert (a.bugs, a.joint) == (("pending-reset-race",), False), a.summary()
    assert classify(p, a) == ("known", ("pending-reset-race",))


@pytest.mark.parametrize("name", KRAFT_RELEASES)
def test_the_fuzzers_trace_of_the_race_on_every_kraft_release(name):
    """The archived kafka-3.5 trace the fuzzer found: where its actions are enabled it breaks committed_prefix at its
    last step, holds with the fix, and is the race's by attribution; elsewhere it stops where FUZZER_TRACE_CUT says,
    with or without the fix."""
    from isrlab.properties.attribution import attribute
    from isrlab.properties.shrink import replay_outcome

    (path,) = ARCHIVE.glob("*-kafka-3.5-committed_prefix-*.json")
    trace = load_trace(str(path))
    p = preset(name)
    off = replay_outcome(p.config, trace.actions, "committed_prefix")
    on = replay_outcome(p.config.replace(make_leader_keeps_pending_isr=True), trace.actions, "committed_prefix")
    if name in FUZZER_TRACE_CUT:
        assert off == on == ("cut", FUZZER_TRACE_CUT[name])
        return
    assert (off, on) == (("fails", len(trace.actions)), ("holds", None))
    assert "pending-reset-race" in attribute(p.config, trace.actions, "committed_prefix", expected=p.bugs).bugs


def _catch_up(cfg, s, b):
    """Follower b truncates if it must, then fetches until the leader has seen it at its LEO."""
    leader = part(s).leader
    if step(cfg, s, A.OffsetsForLeaderEpoch(b, P)) is not None:
        s = drive(cfg, s, A.OffsetsForLeaderEpoch(b, P))
    for _ in range(6):
        if step(cfg, s, A.FetchRequest(b, P)) is None:
            break
        s = drive(cfg, s, A.FetchRequest(b, P), A.FetchResponse(b, P))
        lp = s.brokers[leader].partitions[P]
        if lp.remote(b).log_end_offset == s.brokers[leader].logs[P].log_end_offset:
            break
    return s


def test_a_shutting_down_follower_is_not_proposed_back_into_the_isr():
    """KIP-841's shutting-down half: broker 2, leading, begins a controlled shutdown; the controller moves the
    leadership to 0 and takes 2 out of the ISR; 2 goes on fetching from 0. With KAFKA-13916 the new leader (its metadata
    cache holding 2 in controlled shutdown) does not propose 2 back; without it, it does and the controller takes it:
    a broker in controlled shutdown in a two-member-plus ISR (isr_members_eligible)."""
    found = {}
    for fixed in (True, False):
        cfg = preset("kafka-3.7").config.replace(kafka_13916=fixed)
        s = formed(cfg)
        for b in (0, 1):                                 # 2 leads: 0 and 1 fenced, then unfenced and caught up
            s = drive(cfg, s, A.HeartbeatsLost(b), A.FenceStaleBroker(b))
        assert part(s).leader == 2
        s = run_until(cfg, replay_all(cfg, s), lambda t: not t.quorum.registrations[0].fenced
                      and not t.quorum.registrations[1].fenced)
        for _ in range(10):                              # one ISR change at a time: catch up, let it commit, again
            for b in (0, 1):
                s = _catch_up(cfg, replay_all(cfg, s), b)
            s = run_until(cfg, s, lambda t: not t.brokers[2].alter_isr_unsent and t.brokers[2].alter_isr_inflight
                          is None)
            if part(s).isr == (0, 1, 2):
                break
        assert part(s).isr == (0, 1, 2)
        s = drive(cfg, replay_all(cfg, s), A.ControlledShutdown(2))
        s = run_until(cfg, s, lambda t: t.quorum.registrations[2].in_controlled_shutdown)
        assert (part(s).leader, part(s).isr) == (0, (0, 1))
        s = _catch_up(cfg, replay_all(cfg, s), 2)       # 2 fetches from its new leader
        found[fixed] = (s.brokers[0].alter_isr_unsent, BY_NAME["isr_members_eligible"].check(cfg, s))
        if not fixed:
            s = drive(cfg, s, A.AlterIsrRequest(0), A.AlterIsrReceived(0))
            found[fixed] = (found[fixed][0], BY_NAME["isr_members_eligible"].check(cfg, s))
    assert found[True] == ((), None)
    unsent, facts = found[False]
    assert [x.request.new_isr for x in unsent] == [(0, 1, 2)]
    assert facts["broker"] == 2 and facts["registration"]["in_controlled_shutdown"]


# --------------------------------------------------------------------------- KIP-704: leader recovery state
def _fetch_round(cfg, s, b):
    for kind in (A.OffsetsForLeaderEpoch, A.FetchRequest, A.FetchResponse):
        acts = [a for a in enabled_actions(cfg, s) if type(a) is kind and a.broker == b]
        if acts:
            s = apply(cfg, s, acts[0])
    return s


def test_an_unclean_election_leaves_the_partition_recovering_until_its_leaders_alter_partition():
    """PartitionChangeBuilder.tryElection (Kafka 3.5.0): an unclean leader is the ISR alone and RECOVERING; the leader
    marks itself RECOVERED as it becomes leader (Partition.makeLeader), so its first AlterPartition, here the
    expansion that takes the other follower back, writes RECOVERED with the new ISR."""
    cfg = preset("kraft-unclean-election").config
    s = drive(cfg, formed(cfg), A.Produce(0, P, 1))
    s = drive(cfg, s, A.HeartbeatsLost(1), A.FenceStaleBroker(1), A.HeartbeatsLost(2), A.FenceStaleBroker(2))
    assert part(s).isr == (0,) and part(s).leader_recovery_state == "RECOVERED"
    s = run_until(cfg, s, lambda t: not t.quorum.registrations[1].fenced and not t.quorum.registrations[2].fenced)
    s = drive(cfg, s, A.BrokerCrash(0, False))
    s = run_until(cfg, s, lambda t: t.quorum.registrations[0].fenced)
    g = part(s)
    assert (g.leader, g.isr, g.leader_recovery_state) == (1, (1,), "RECOVERING")
    assert s.ghost.unclean                                             # a documented loss, not a violation
    assert BY_NAME["isr_well_formed"].check(cfg, s) is None
    s = replay_all(cfg, s)
    for _ in range(3):
        s = _fetch_round(cfg, s, 2)
    s = run_until(cfg, s, lambda t: part(t).isr == (1, 2))
    g = part(s)
    assert (g.leader, g.isr, g.leader_recovery_state) == (1, (1, 2), "RECOVERED")


@pytest.mark.parametrize("current, sent, isr, error", [
    ("RECOVERING", "RECOVERING", (0, 1), E.INVALID_REQUEST),     # a recovering leader keeps the ISR to itself
    ("RECOVERED", "RECOVERING", (0,), E.INVALID_REQUEST),        # no way back from RECOVERED
    ("RECOVERING", "RECOVERING", (0,), E.NONE),
    ("RECOVERING", "RECOVERED", (0, 1), E.NONE),
])
def test_alter_partition_checks_the_leader_recovery_state(current, sent, isr, error):
    """ReplicationControlManager.validateAlterPartitionData (Kafka 3.5.0): the two KIP-704 checks, after the ISR's."""
    import dataclasses
    from isrlab.model.quorum_controller import alter_partition
    from isrlab.model.requests import AlterIsrPartition, AlterIsrRequestData
    s = formed()
    q = s.quorum_mut()
    g = dataclasses.replace(q.partitions[P], leader_recovery_state=current)
    q.partitions = (g,) + q.partitions[1:]
    item = AlterIsrPartition(P, g.leader_epoch, isr, g.partition_epoch,
                             tuple(s.quorum.registrations[b].epoch for b in isr), sent)
    response = alter_partition(KRAFT, s, AlterIsrRequestData(0, s.brokers[0].broker_epoch, (item,)))
    assert response.partitions[0].error == error
    if error == E.NONE:
        assert (part(s).isr, part(s).leader_recovery_state) == (isr, sent)


# --------------------------------------------------------------------------- controller failover
def test_a_failover_restarts_every_session_and_forgets_lost_heartbeats():
    """ClusterControlManager.activate (Kafka 3.5.0): the new controller's heartbeat manager touches every registered
    broker at once, so a broker whose heartbeats were lost gets a whole new session before it can be fenced."""
    s = drive(KRAFT, formed(), A.HeartbeatsLost(2))
    assert A.FenceStaleBroker(2) in enabled_actions(KRAFT, s)
    s = drive(KRAFT, s, A.ControllerFailover())
    q = s.quorum
    assert q.last_contact_ms == (s.now,) * 3 and q.reported_offsets == (-1,) * 3
    assert A.FenceStaleBroker(2) not in enabled_actions(KRAFT, s)
    assert step(KRAFT, s, A.ControllerFailover()) is None            # one move in the budget (max_controller_moves)
    s = drive(KRAFT, s, A.HeartbeatsLost(2), A.FenceStaleBroker(2))     # the new session can be lost as well
    assert s.quorum.registrations[2].fenced


def test_an_alter_partition_answer_lost_in_a_failover_is_sent_again_and_refused():
    """The old controller committed the expansion but its answer fails with NOT_CONTROLLER; the leader sends the item
    again, the new controller finds the partition epoch moved on (INVALID_UPDATE_VERSION, which the leader does not
    retry), and the leader stays pending until it replays the record that committed the expansion."""
    s = drive(KRAFT, formed(), A.HeartbeatsLost(2), A.FenceStaleBroker(2))
    s = run_until(KRAFT, s, lambda t: not t.quorum.registrations[2].fenced)
    s = replay_all(KRAFT, s)
    s = _fetch_round(KRAFT, s, 2)
    assert s.brokers[0].alter_isr_unsent
    s = drive(KRAFT, s, A.AlterIsrRequest(0), A.AlterIsrReceived(0))
    assert part(s).isr == (0, 1, 2)                                   # committed by the old controller
    s = drive(KRAFT, s, A.ControllerFailover())
    assert s.brokers[0].alter_isr_inflight.response.error == E.NOT_CONTROLLER
    s = drive(KRAFT, s, A.AlterIsrResponse(0))
    assert s.brokers[0].alter_isr_unsent and s.brokers[0].partitions[P].pending_isr is not None
    s = drive(KRAFT, s, A.AlterIsrRequest(0), A.AlterIsrReceived(0))
    result = s.brokers[0].alter_isr_inflight.response.partitions[0]
    assert result.error == E.INVALID_UPDATE_VERSION
    s = drive(KRAFT, s, A.AlterIsrResponse(0))
    assert s.brokers[0].partitions[P].pending_isr is not None         # not retried: pending until the record
    s = replay_all(KRAFT, s)
    leader = s.brokers[0].partitions[P]
    assert leader.pending_isr is None and leader.isr == (0, 1, 2)


def test_a_broker_in_controlled_shutdown_when_the_controller_fails_over_asks_again():
    """BrokerHeartbeatManager.currentBrokerState reads the heartbeat manager's soft state (Kafka 3.5.0): after a
    failover the broker is UNFENCED again there though its registration is in controlled shutdown; with no
    leaderships left its next heartbeat is granted SHUTDOWN_NOW at once, without the wait for the lowest active
    offset."""
    s = drive(KRAFT, formed(), A.ControlledShutdown(0), A.BrokerHeartbeat(0))
    assert s.quorum.registrations[0].in_controlled_shutdown and s.quorum.shutdown_offsets[0] >= 0
    assert part(s).leader == 1                                         # its leadership moved
    s = drive(KRAFT, s, A.ControllerFailover())
    assert s.quorum.registrations[0].in_controlled_shutdown and s.quorum.shutdown_offsets[0] == -1
    assert s.quorum.reported_offsets == (-1,) * 3                       # no broker has reported an offset yet
    # the same heartbeat with and without the failover: held until the others replay the moves, or granted at once
    from isrlab.model.quorum_controller import broker_heartbeat
    for failover, granted in ((False, False), (True, True)):
        s = drive(KRAFT, formed(), A.ControlledShutdown(0), A.BrokerHeartbeat(0))
        if failover:
            s = drive(KRAFT, s, A.ControllerFailover())
        br = s.brokers[0]
        assert broker_heartbeat(KRAFT, s, 0, br.broker_epoch, br.metadata_offset, True) == (E.NONE, granted)
        assert s.quorum.registrations[0].fenced == granted


# --------------------------------------------------------------------------- lastKnownElr (KIP-966)
def _registration(isr, elr, last_known_elr, leader=-1):
    from isrlab.model.state import PartitionRegistration

    return PartitionRegistration((0, 1, 2), tuple(isr), leader, 4, 9, tuple(elr), "RECOVERED", tuple(last_known_elr))


ELR_CFG = preset("kafka-4.1").config.replace(min_insync_replicas=3)


def test_the_last_known_leader_is_elected_uncleanly_once_isr_and_elr_are_empty_if_acceptable():
    """PartitionChangeBuilder.canElectLastKnownLeader (4.1.0, KAFKA-19522; the controller's default mode): with the ISR
    and the ELR empty and one last known leader, the builder elects it if it is an acceptable leader, as an unclean
    election: ISR [it], RECOVERING, ELR and lastKnownElr emptied, a new leader epoch; a fenced one waits (no change:
    4.0.0 elected it anyway)."""
    from isrlab.model.quorum_controller import build_partition_change

    new, unclean = build_partition_change(ELR_CFG, _registration((), (), (1,)), (), lambda r: r == 1)
    assert unclean and (new.leader, new.isr, new.elr, new.last_known_elr) == (1, (1,), (), ())
    assert (new.leader_recovery_state, new.leader_epoch, new.partition_epoch) == ("RECOVERING", 5, 10)
    assert build_partition_change(ELR_CFG, _registration((), (), (1,)), (), lambda r: r != 1) == (None, False)


def test_no_last_known_leader_election_while_the_elr_has_a_member_or_without_the_elr():
    """The ELR not empty (its member not acceptable): no election, and nothing else changes, so no record
    (changeRecordIsNoOp); with the ELR off the field is not read and an empty ISR is not written."""
    from isrlab.model.quorum_controller import build_partition_change

    assert build_partition_change(ELR_CFG, _registration((), (2,), (1,)), (), lambda r: r != 2) == (None, False)
    off = ELR_CFG.replace(eligible_leader_replicas=False)
    assert build_partition_change(off, _registration((), (), (1,)), (), lambda r: True) == (None, False)


def test_last_known_elr_records_the_leader_as_the_isr_empties_and_is_cleared_by_a_leader():
    """PartitionChangeBuilder.maybeUpdateLastKnownLeader (3.8.0-4.0): the change that empties the ISR records the
    leader the partition had; a change that leaves the partition with a leader clears the field."""
    from isrlab.model.quorum_controller import build_partition_change

    new, _ = build_partition_change(ELR_CFG, _registration((0,), (1, 2), (), leader=0), (), lambda r: False)
    assert (new.isr, new.leader, new.elr, new.last_known_elr) == ((), -1, (0, 1, 2), (0,))
    back, unclean = build_partition_change(ELR_CFG, new, (), lambda r: r == 2)
    assert not unclean and (back.leader, back.isr, back.elr, back.last_known_elr) == (2, (2,), (0, 1), ())
