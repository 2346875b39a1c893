"""Mutation tests of the invariant catalogue: no safety invariant is vacuous.

For every ALWAYS invariant of ``isrlab.properties.invariants.SAFETY`` there is at least one *mutant* in
``CASES``: a small, realistic wrong rule (a Kafka check dropped, a comparison flipped, a bound computed
over the wrong set), applied with ``monkeypatch`` on the model module where the rule is *looked up*
(model modules import functions by name from each other), or a protocol flag that switches a fix off.
Each case also has a short hand-built action list.  The test asserts that

* on the unmutated model every action of the list is enabled (``step`` never returns None) and the named
  invariant holds after every step; and
* on the mutant the same list (up to the violation) violates the named invariant, with the key facts given.

Traces are built by ``Builder``, which applies each action to the *unmutated* model as it is appended, so a
trace is exactly what the real model allows; the mutant is installed only afterwards.  Some traces reuse a
hand-written scenario from ``tests/scenarios`` as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from isrlab.model import actions as A
from isrlab.model import controller, delayed, errors as E, faults, fetcher, log as logmod, partition
from isrlab.model import quorum_controller, replica_manager, step as stepmod
from isrlab.model.config import ModelConfig, preset
from isrlab.model.encode import encode
from isrlab.model.state import NO_LEADER, FetchResponseData, LeaderIsrAndControllerEpoch
from isrlab.model.step import enabled_actions, initial_state, step, tick_limit
from isrlab.model.trace import load_trace
from isrlab.properties.explain import sentence
from isrlab.properties.invariants import BY_NAME, SAFETY, check_state, check_transition

pytestmark = pytest.mark.unit

CFG = ModelConfig()                       # kafka-2.4: 3 brokers, 1 partition, replicas (0, 1, 2)
P = 0
SCENARIOS = Path(__file__).resolve().parent / "scenarios"
TASKS = frozenset({A.IsrExpiration, A.IsrChangePropagation, A.HighWatermarkCheckpoint, A.DelayedProduceExpire})


# =========================================================================== trace building and replay
class Builder:
    """Appends actions to a trace while applying them to the unmutated model (each must be enabled)."""

    def __init__(self, cfg: ModelConfig = CFG, prefix=()):
        self.cfg = cfg
        self.s = initial_state(cfg)
        self.actions: list = []
        self.do(*prefix)

    @property
    def now(self) -> int:
        return self.s.now

    def do(self, *actions) -> "Builder":
        for a in actions:
            s2 = step(self.cfg, self.s, a)
            assert s2 is not None, f"trace building: {A.describe(a)} is not enabled (action {len(self.actions) + 1})"
            self.s = s2
            self.actions.append(a)
        return self

    def deliver_all(self, controller: int | None = None, brokers=None) -> "Builder":
        """Deliver queued control requests (of that controller, to those brokers) until none is left."""
        while True:
            ds = [a for a in enabled_actions(self.cfg, self.s, {A.DeliverControlRequest})
                  if (controller is None or a.controller == controller) and (brokers is None or a.broker in brokers)]
            if not ds:
                return self
            self.do(ds[0])

    def up(self, controller: int = 0) -> "Builder":
        """Elect a controller and deliver everything: broker 0 leads epoch 0 with ISR (0, 1, 2)."""
        return self.do(A.ElectController(controller)).deliver_all()

    def ready(self, *followers: int) -> "Builder":
        """Each follower's first truncation round (KIP-279): its fetcher is then Fetching."""
        return self.do(*(A.OffsetsForLeaderEpoch(f, P) for f in followers))

    def fetch(self, follower: int, times: int = 1) -> "Builder":
        for _ in range(times):
            self.do(A.FetchRequest(follower, P), A.FetchResponse(follower, P))
        return self

    def produce(self, broker: int = 0, acks: int = 1, times: int = 1) -> "Builder":
        return self.do(*(A.Produce(broker, P, acks) for _ in range(times)))

    def tasks(self) -> "Builder":
        """Run every scheduled task (and produce timeout) due now, in enabled_actions order."""
        while True:
            due = enabled_actions(self.cfg, self.s, TASKS)
            if not due:
                return self
            self.do(due[0])

    def advance(self, ms: int) -> "Builder":
        """Let ``ms`` pass, running the tasks that fall due on the way (not those due at the end)."""
        target = self.now + ms
        while self.now < target:
            self.tasks()
            limit = tick_limit(self.cfg, self.s)
            self.do(A.Tick(min(target, limit if limit is not None else target) - self.now))
        return self


def scenario(name: str, cfg: ModelConfig = CFG) -> list:
    """The actions of a hand-written scenario trace (tests/scenarios/<name>*.json)."""
    (path,) = sorted(SCENARIOS.glob(f"{name}*.json"))
    trace = load_trace(str(path))
    assert trace.config == cfg, f"{path.name} no longer uses the {'kafka-2.4' if cfg is CFG else 'expected'} configuration"
    return list(trace.actions)


@dataclass
class Run:
    steps: int                       # actions applied
    disabled: object = None          # the first action that was not enabled, if any
    violation: object = None         # the first Violation of the invariant, if any


def run(cfg: ModelConfig, actions: list, invariant) -> Run:
    """Replay actions, checking one invariant after every step; stop at the first violation or disabled action."""
    s = initial_state(cfg)
    vs = check_state(cfg, s, 0, (invariant,))
    if vs:
        return Run(0, violation=vs[0])
    for i, a in enumerate(actions, 1):
        s2 = step(cfg, s, a)
        if s2 is None:
            return Run(i - 1, disabled=a)
        vs = check_transition(cfg, s, a, s2, i, (invariant,))
        if vs:
            return Run(i, violation=vs[0])
        s = s2
    return Run(len(actions))


def patch(monkeypatch, name: str, fn: Callable, *modules) -> None:
    """Replace ``name`` in every module that looks it up (the defining module and each importer)."""
    for m in modules:
        assert hasattr(m, name), f"{m.__name__} does not define {name}: update the mutant"
        monkeypatch.setattr(m, name, fn)


# =========================================================================== mutants
# Each mutant is a function ``(monkeypatch) -> ModelConfig | None``: it installs the wrong rule and
# returns a replacement config when the mutant is a protocol flag.

# --- Partition.maybeIncrementLeaderHW (HW1-HW3) -----------------------------------------------------
def _in_window_or_isr(cfg, part, r, now) -> bool:
    """Kafka 2.4: a replica holds the HW back if it is in the ISR or caught up within replica.lag.time.max.ms."""
    return now - r.last_caught_up_time_ms <= cfg.replica_lag_time_max_ms or r.broker_id in part.isr


def _in_window(cfg, part, r, now) -> bool:
    return now - r.last_caught_up_time_ms <= cfg.replica_lag_time_max_ms


def _hw_rule(counts=_in_window_or_isr, combine=min, monotonic=True):
    """maybeIncrementLeaderHW with the counted replicas, the combination of their LEOs with the leader's and the
    monotonic guard as given; the defaults are Kafka's rule (``test_hw_rule_scaffold_is_the_model`` checks it)."""
    def maybe_increment_leader_hw(cfg, br, p, now):
        part, log = br.partitions[p], br.logs[p]
        new_hw = combine([log.log_end_offset] + [r.log_end_offset for r in part.remote_replicas
                                                 if counts(cfg, part, r, now)])
        if new_hw > log.high_watermark or (not monotonic and new_hw != log.high_watermark):
            br.log_mut(p).high_watermark = max(new_hw, log.log_start_offset)   # Log.updateHighWatermark clamps
            return new_hw > log.high_watermark
        return False
    return maybe_increment_leader_hw


def _patch_hw(monkeypatch, rule) -> None:
    patch(monkeypatch, "maybe_increment_leader_hw", rule, partition, replica_manager)


def mut_hw_max_not_min(monkeypatch):
    """HW taken as the max of the LEOs of the ISR (and caught-up replicas) instead of the min."""
    _patch_hw(monkeypatch, _hw_rule(combine=max))


def mut_hw_ignores_isr(monkeypatch):
    """HW = min over the recently caught-up replicas only: an ISR member lagging past the window is ignored
    (the ``|| isr.contains(replica)`` clause dropped)."""
    _patch_hw(monkeypatch, _hw_rule(counts=_in_window))


def mut_hw_not_monotonic(monkeypatch):
    """Log.updateHighWatermark instead of maybeIncrementHighWatermark: the leader writes the computed HW even
    when it is lower (HW3 dropped)."""
    _patch_hw(monkeypatch, _hw_rule(monotonic=False))


# --- Partition.makeLeader (M1-M10) ------------------------------------------------------------------
def mut_make_leader_keeps_remote_leos(monkeypatch):
    """makeLeader without M8: a new leader keeps the remote LEOs it recorded in an earlier tenure (the
    ``updateFetchState(-1, -1, 0, -1)`` reset is dropped; every other update_fetch_state call is unchanged)."""
    original = partition.update_fetch_state

    def update_fetch_state(r, fetch_offset, follower_start_offset, fetch_time_ms, leader_end_offset):
        if (fetch_offset, follower_start_offset, fetch_time_ms, leader_end_offset) == (-1, -1, 0, -1):
            return                                                        # the M8 reset, and only it
        original(r, fetch_offset, follower_start_offset, fetch_time_ms, leader_end_offset)
    patch(monkeypatch, "update_fetch_state", update_fetch_state, partition)


def mut_leader_truncates_to_hw(monkeypatch):
    """A broker becoming leader truncates its own log to its (follower-era, lagging) HW first."""
    original = partition.make_leader

    def make_leader(cfg, s, br, p, ps, now):
        log = br.logs[p]
        if log is not None and log.high_watermark < log.log_end_offset:
            logmod.truncate_to(br.log_mut(p), log.high_watermark)
        return original(cfg, s, br, p, ps, now)
    patch(monkeypatch, "make_leader", make_leader, partition, replica_manager)


# --- ISR shrink and expand (SH1-SH6, EX1-EX5) -------------------------------------------------------
def mut_out_of_sync_ge(monkeypatch):
    """isFollowerOutOfSync with ``>=`` instead of ``>``: a follower exactly replica.lag.time.max.ms behind is
    removed."""
    def is_follower_out_of_sync(r, leader_end_offset, now, max_lag_ms):
        return r.log_end_offset != leader_end_offset and (now - r.last_caught_up_time_ms) >= max_lag_ms
    patch(monkeypatch, "is_follower_out_of_sync", is_follower_out_of_sync, partition)


def mut_out_of_sync_no_leo_guard(monkeypatch):
    """isFollowerOutOfSync without the LEO guard: an idle follower that is fully caught up is removed."""
    def is_follower_out_of_sync(r, leader_end_offset, now, max_lag_ms):
        return (now - r.last_caught_up_time_ms) > max_lag_ms
    patch(monkeypatch, "is_follower_out_of_sync", is_follower_out_of_sync, partition)


def mut_shrink_one_at_a_time(monkeypatch):
    """getOutOfSyncReplicas returning only the first out-of-sync follower (``find`` for ``filter``): one
    isr-expiration run leaves other out-of-sync followers in the ISR."""
    original = partition.out_of_sync_replicas

    def out_of_sync_replicas(cfg, br, part, now):
        return original(cfg, br, part, now)[:1]
    patch(monkeypatch, "out_of_sync_replicas", out_of_sync_replicas, partition)


def mut_in_sync_ignores_hw(monkeypatch):
    """isFollowerInSync without ``LEO >= HW``: a follower joins the ISR below the HW (only the epoch start
    offset is checked)."""
    def is_follower_in_sync(cfg, r, part, log):
        return part.leader_epoch_start_offset >= 0 and r.log_end_offset >= part.leader_epoch_start_offset
    patch(monkeypatch, "is_follower_in_sync", is_follower_in_sync, partition)


def mut_no_kafka_6082(monkeypatch):
    """KAFKA-6082 switched off: a controller's ZooKeeper writes check only the partition znode's version."""
    return CFG.replace(kafka_6082=False)


def mut_no_kafka_7128(monkeypatch):
    """KAFKA-7128 switched off: ISR expansion checks only LEO >= (a possibly lagging) HW."""
    return CFG.replace(kafka_7128=False)


# --- epoch cache ------------------------------------------------------------------------------------
def mut_cache_assign_keeps_later_offsets(monkeypatch):
    """LeaderEpochFileCache.assign drops only entries with a larger epoch, not those starting at or after the
    new start offset."""
    def cache_assign(cache, epoch, start_offset):
        if cache and cache[-1][0] == epoch and start_offset >= cache[-1][1]:
            return cache
        return tuple(e for e in cache if e[0] < epoch) + ((epoch, start_offset),)
    patch(monkeypatch, "cache_assign", cache_assign, logmod, partition)


# --- log --------------------------------------------------------------------------------------------
def mut_truncate_keeps_hw(monkeypatch):
    """Log.truncateTo that does not lower the HW to the new LEO (FO4 missing)."""
    original = logmod.truncate_to

    def truncate_to(log, target):
        hw = log.high_watermark
        truncated = original(log, target)
        if truncated:
            log.high_watermark = max(hw, log.high_watermark)
        return truncated
    patch(monkeypatch, "truncate_to", truncate_to, logmod, fetcher, replica_manager, faults)


# --- follower truncation ----------------------------------------------------------------------------
def mut_follower_skips_truncation(monkeypatch):
    """The follower's truncation round moves to Fetching from its own LEO without truncating."""
    def _finish_truncation(s, f, log, offset):
        f.fetch_offset = log.log_end_offset
        f.state = fetcher.FETCHING
    patch(monkeypatch, "_finish_truncation", _finish_truncation, fetcher)


# --- consumer reads ---------------------------------------------------------------------------------
def mut_consumer_reads_to_leo(monkeypatch):
    """Consumer fetches bounded by the leader's LEO instead of the HW (FE1)."""
    original = replica_manager.fetch_messages

    def fetch_messages(cfg, s, br, p, replica_id, fetch_offset, current_leader_epoch, follower_log_start=-1,
                       isolation="read_uncommitted"):
        resp = original(cfg, s, br, p, replica_id, fetch_offset, current_leader_epoch, follower_log_start,
                        isolation)
        if replica_id < 0 and resp.error == E.NONE:
            log = br.logs[p]
            resp = FetchResponseData(resp.error, fetch_offset, log.read(fetch_offset, log.log_end_offset),
                                     resp.high_watermark, resp.log_start_offset)
        return resp
    patch(monkeypatch, "fetch_messages", fetch_messages, stepmod)


# --- control requests (C1, C10) ---------------------------------------------------------------------
def _without_controller_epoch_check(original):
    """The handler with its ``request epoch < broker epoch -> STALE_CONTROLLER_EPOCH`` check removed: the broker's
    epoch is lowered to the request's first, so the check passes and the handler then stores the request's."""
    def handler(*args):
        br, req = args[-2], args[-1]
        br.controller_epoch = min(br.controller_epoch, req.controller_epoch)
        return original(*args)
    return handler


def mut_leader_and_isr_no_c1(monkeypatch):
    """becomeLeaderOrFollower without C1: a LeaderAndIsr from an older controller epoch is applied."""
    patch(monkeypatch, "become_leader_or_follower",
          _without_controller_epoch_check(replica_manager.become_leader_or_follower), replica_manager)


def mut_update_metadata_no_c10(monkeypatch):
    """maybeUpdateMetadataCache without C10's controller-epoch check: a zombie's UpdateMetadata is applied."""
    patch(monkeypatch, "maybe_update_metadata_cache",
          _without_controller_epoch_check(replica_manager.maybe_update_metadata_cache), replica_manager)


def mut_reconnect_resets_controller_epoch(monkeypatch):
    """ZooKeeper re-registration treated like a restart: the live broker forgets its controller epoch."""
    original = faults.zk_reconnect

    def zk_reconnect(cfg, s, b):
        original(cfg, s, b)
        s.broker_mut(b).controller_epoch = 0
    patch(monkeypatch, "zk_reconnect", zk_reconnect, faults, stepmod)


def mut_controller_epoch_from_cache(monkeypatch):
    """A newly elected controller increments the controller epoch its broker last saw (ReplicaManager's cached
    controllerEpoch) instead of the /controller_epoch znode."""
    original = controller.elect_controller

    def elect_controller(cfg, s, b):
        s.zk_mut().controller_epoch = s.brokers[b].controller_epoch
        original(cfg, s, b)
    patch(monkeypatch, "elect_controller", elect_controller, controller, stepmod)


def mut_isr_write_without_cas(monkeypatch):
    """Partition.updateIsr without the zkVersion CAS: a leader with a stale cached state (older leader epoch)
    overwrites the partition znode."""
    original = partition.update_isr

    def update_isr(cfg, s, br, p, new_isr):
        current = s.zk.partition_states[p]
        if s.zk.sessions[br.broker_id] and current is not None and br.partitions[p].zk_version != current.zk_version:
            br.partition_mut(p).zk_version = current.zk_version          # the CAS can no longer fail
        return original(cfg, s, br, p, new_isr)
    patch(monkeypatch, "update_isr", update_isr, partition)


# --- fetch fencing ----------------------------------------------------------------------------------
def mut_no_kafka_8400(monkeypatch):
    """KAFKA-8400 switched off: a fenced follower fetch still updates the leader's view of the follower."""
    return CFG.replace(kafka_8400=False)


# --- DelayedProduce (P7) ----------------------------------------------------------------------------
def mut_no_min_isr_at_completion(monkeypatch):
    """checkEnoughReplicasReachOffset without the min.insync.replicas check: acks=all succeeds with a shrunk ISR."""
    original = delayed.check_enough_replicas_reach_offset

    def check_enough_replicas_reach_offset(cfg, br, p, required_offset):
        done, error = original(cfg, br, p, required_offset)
        return done, (E.NONE if error == E.NOT_ENOUGH_REPLICAS_AFTER_APPEND else error)
    patch(monkeypatch, "check_enough_replicas_reach_offset", check_enough_replicas_reach_offset,
          delayed, replica_manager)


# --- ISR change propagation (1.13) ------------------------------------------------------------------
def mut_propagation_never_writes(monkeypatch):
    """The isr-change-propagation task reschedules itself but never writes the notification."""
    def maybe_propagate_isr_changes(cfg, s, br):
        br.next_isr_propagation_ms += cfg.isr_propagation_interval_ms
    patch(monkeypatch, "maybe_propagate_isr_changes", maybe_propagate_isr_changes, replica_manager, stepmod)


# --- controller -------------------------------------------------------------------------------------
def mut_election_keeps_epoch(monkeypatch):
    """The offline-partition election writes the new leader with the old leader epoch (no bump): the registry's
    election-same-epoch."""
    return registry("election-same-epoch")(monkeypatch)


def _election_outside_isr(new_isr: Callable):
    """offlinePartitionLeaderElection that, with no live ISR member, takes the first live assigned replica as a
    *clean* election (unclean = False), with ISR ``new_isr(leader, old_isr)``."""
    original = controller.offline_partition_leader_election

    def offline_partition_leader_election(cfg, assignment, isr, live):
        leader, new, unclean = original(cfg, assignment, isr, live)
        if leader is None:
            leader = next((r for r in assignment if live(r)), None)
            if leader is not None:
                return leader, new_isr(leader, isr), False
        return leader, new, unclean
    return offline_partition_leader_election


def mut_election_outside_isr_not_unclean(monkeypatch):
    """With no live ISR member the election picks a live replica outside the ISR (new ISR: that replica) without
    counting the election as unclean."""
    patch(monkeypatch, "offline_partition_leader_election",
          _election_outside_isr(lambda leader, isr: (leader,)), controller)


def mut_election_outside_isr_keeps_isr(monkeypatch):
    """With no live ISR member the election picks a live replica outside the ISR and keeps the old ISR."""
    patch(monkeypatch, "offline_partition_leader_election", _election_outside_isr(lambda leader, isr: isr),
          controller)


def mut_isr_removal_empties_isr(monkeypatch):
    """doRemoveReplicasFromIsr without 'keep the last member': removing the last ISR member empties the ISR."""
    patch(monkeypatch, "isr_without_replica", lambda isr, r: tuple(x for x in isr if x != r), controller)


# =========================================================================== traces
def t_acked_record_unreplicated():
    """Followers ready, one acks=all produce to leader 0, then leader 0 stops and broker 1 is elected."""
    return (Builder().up(controller=2).ready(1, 2).produce(0, acks=-1)
            .do(A.BrokerCrash(0, True), A.ControllerProcessBrokerChange(2)).deliver_all().actions)


def t_acks1_unreplicated():
    """Followers ready, one acks=1 produce to leader 0 (nobody has fetched it yet)."""
    return Builder().up().ready(1, 2).produce(0, acks=1).actions


def t_consumer_then_failover():
    """An acks=1 record on leader 0 only, a consumer fetch from 0, then 0 stops and 1 is elected."""
    return (Builder().up(controller=2).ready(1, 2).produce(0, acks=1).do(A.ConsumerFetch(0, P))
            .do(A.BrokerCrash(0, True), A.ControllerProcessBrokerChange(2)).deliver_all().actions)


def t_lagging_isr_member():
    """Broker 2 never fetches; at t0+15000 (before the isr-expiration run due then) broker 1 fetches, a record
    is produced and broker 1 fetches it: broker 2 is still in the ISR but out of the lag window."""
    return (Builder().up().ready(1, 2).fetch(1).advance(15000).fetch(1).produce(0, acks=1).fetch(1, 2).actions)


def t_hw_drops_within_tenure():
    """At t0+15000 broker 2 (never fetched) is out of the ISR. While broker 1 keeps the HW moving, broker 2 starts
    fetching: its second fetch is 'caught up' (fetch offset >= the leader LEO of its previous fetch) but below
    the HW, so it enters the HW computation with LEO 1 < HW 2."""
    return (Builder().up().ready(1, 2).fetch(1).advance(15000).tasks()
            .produce(0).fetch(1, 2)           # HW 1
            .fetch(2)                          # broker 2 at offset 0 < HW: stays out of the ISR
            .produce(0).fetch(1, 2)            # HW 2
            .do(A.FetchRequest(2, P)).actions)  # broker 2 at offset 1, caught up as of its previous fetch


def t_follower_rejoins_below_hw():
    """Broker 2 is removed at t0+15000, broker 1 then replicates a record (HW 1), and broker 2 fetches from 0."""
    return (Builder().up().ready(1, 2).fetch(1).advance(15000).tasks()
            .produce(0).fetch(1, 2).do(A.FetchRequest(2, P)).actions)


def t_leader_epoch_bump_same_leader():
    """Broker 2 stops; the controller removes it from the ISR, bumping the epoch of leader 0 (LEO 0)."""
    return (Builder().up(controller=1).do(A.BrokerCrash(2, True), A.ControllerProcessBrokerChange(1))
            .deliver_all().actions)


def t_lossy_leader_crash():
    """crash_loses_unflushed_data: a replicated record (HW 1) never flushed; leader 0 crashes uncleanly."""
    return (Builder(CFG_LOSSY).up(controller=2).ready(1, 2).produce(0).fetch(1, 2).fetch(2, 2)
            .do(A.BrokerCrash(0, False)).actions)


def t_leader_only_isr_then_leader_stops():
    """Neither follower fetches: at t0+15000 the ISR shrinks to (0); then broker 0 stops (controller on 1)."""
    return (Builder().up(controller=1).advance(15000).tasks()
            .do(A.BrokerCrash(0, True), A.ControllerProcessBrokerChange(1)).actions)


def t_bounce_then_leader_stops():
    """Broker 1 restarts (fresh Partition) and leader 0 stops before the controller (on 2) sees either change;
    the new leader elected in that BrokerChange is broker 1."""
    return (Builder().up(controller=2)
            .do(A.BrokerCrash(1, True), A.BrokerRestart(1), A.BrokerCrash(0, True),
                A.ControllerProcessBrokerChange(2))
            .deliver_all(brokers=(1,)).actions)


def t_acked_then_isr_members_die():
    """Broker 2 leaves the ISR (never fetched); a record acknowledged by {0, 1}; 0 then 1 stop (controller on 2)."""
    return (Builder().up(controller=2).ready(1, 2).fetch(1).advance(15000).tasks()
            .produce(0, acks=-1).fetch(1, 2)
            .do(A.BrokerCrash(0, True), A.ControllerProcessBrokerChange(2)).deliver_all()
            .do(A.BrokerCrash(1, True), A.ControllerProcessBrokerChange(2)).deliver_all().actions)


def t_both_followers_idle():
    """Neither follower ever fetches: at t0+15000 the leader's isr-expiration run finds both out of sync."""
    return Builder().up().advance(15000).tasks().actions


def t_shrink_then_wait():
    """Nobody fetches: the ISR shrinks at t0+15000, then 65 s pass with every scheduled task run on time."""
    return Builder().up().advance(15000).tasks().advance(65000).actions


def t_min_isr_shrink_completes_produce():
    """min.insync.replicas=2: an acks=all produce is parked at t0 (ISR 3); at t0+15000 the ISR shrinks to (0)."""
    return Builder(CFG_MIN_ISR_2).up().produce(0, acks=-1).advance(15000).tasks().actions


def t_fenced_fetch_to_leader():
    """Broker 2 has fetched a record (the leader last saw it at offset 0) when it loses its session; the
    controller (on 1) bumps leader 0's epoch; broker 2, still in epoch 0, fetches from offset 1 and is fenced."""
    return (Builder().up(controller=1).ready(1, 2).produce(0).fetch(1, 2).fetch(2)
            .do(A.ZkSessionExpire(2), A.ControllerProcessBrokerChange(1)).deliver_all(brokers=(0,))
            .do(A.FetchRequest(2, P)).actions)


def t_divergent_follower_log():
    """Broker 0 holds an unreplicated record (epoch 0) when it stops; broker 1 leads epoch 1 and writes two
    records; broker 0 restarts as a follower and runs its truncation round and a fetch."""
    return (Builder().up(controller=2).ready(1, 2).produce(0)
            .do(A.BrokerCrash(0, True), A.ControllerProcessBrokerChange(2)).deliver_all()
            .produce(1, times=2)
            .do(A.BrokerRestart(0), A.ControllerProcessBrokerChange(2)).deliver_all()
            .ready(0).fetch(0).actions)


def t_zombie_controller():
    """Scenario 03: the zombie controller (broker 0, epoch 1) delivers to broker 2 after controller 1 (epoch 2)."""
    return scenario("03-")


def t_zombie_update_metadata():
    """Scenario 03 up to the zombie's refused LeaderAndIsr, then the zombie's queued UpdateMetadata."""
    return Builder(prefix=scenario("03-")[:12]).do(A.DeliverControlRequest(0, 2)).actions


def t_session_reconnect():
    """Broker 1 (controller epoch 1) loses its ZooKeeper session and registers again."""
    return Builder().up().do(A.ZkSessionExpire(1), A.ZkReconnect(1)).actions


def t_restarted_broker_elected_controller():
    """Controller 0 (epoch 1) loses its session, 2 takes over (epoch 2); broker 1 restarts (its ReplicaManager
    has seen no controller yet), then 2 loses its session and broker 1 is elected."""
    return (Builder().up(controller=0).do(A.ZkSessionExpire(0), A.ElectController(2))
            .do(A.BrokerCrash(1, True), A.BrokerRestart(1), A.ZkSessionExpire(2), A.ElectController(1)).actions)


def t_stale_leader_shrinks_isr():
    """Broker 2 loses its session; the controller (on 1) writes epoch 1 for leader 0 but does not deliver it yet;
    at t0+15000 leader 0, still in epoch 0, finds both followers (which never fetched) out of sync."""
    return (Builder().up(controller=1).do(A.ZkSessionExpire(2), A.ControllerProcessBrokerChange(1))
            .advance(15000).tasks().actions)


# --- AlterIsr (KIP-497, Kafka 2.7.0) ---------------------------------------------------------------------
CFG_ALTER_ISR = preset("alter-isr").config


def mut_no_kafka_13091(monkeypatch):
    """KAFKA-13091 off: the HW is not recomputed when an AlterIsr shrink commits (Kafka 2.7.0-3.0)."""
    return CFG_ALTER_ISR.replace(kafka_13091=False)


def mut_shrink_without_hw_recompute(monkeypatch):
    """2.4's maybeShrinkIsr without its maybeIncrementLeaderHW after the ZooKeeper write."""
    def maybe_shrink_isr(cfg, s, br, p, now):
        part = br.online(p)
        if part is None or not partition.is_leader(br, part):
            return False
        out = partition.out_of_sync_replicas(cfg, br, part, now)
        if not out:
            return False
        return partition.update_isr(cfg, s, br, p, tuple(b for b in part.isr if b not in out))
    patch(monkeypatch, "maybe_shrink_isr", maybe_shrink_isr, partition, replica_manager)


def mut_no_kafka_12686(monkeypatch):
    """KAFKA-12686 off: makeLeader clears the partition's AlterIsr item although its request is in flight."""
    return CFG_ALTER_ISR.replace(kafka_12686=False)


def mut_alter_isr_sends_committed_isr(monkeypatch):
    """sendAlterIsrRequest puts the committed ISR in the AlterIsr item instead of the proposed one."""
    import dataclasses

    original = partition.send_alter_isr_request

    def send_alter_isr_request(cfg, s, br, p, pending):
        queued = original(cfg, s, br, p, pending)
        if queued:
            isr = br.partitions[p].isr
            br.alter_isr_unsent = tuple(
                dataclasses.replace(it, request=dataclasses.replace(it.request, new_isr=isr))
                if it.request.partition == p else it for it in br.alter_isr_unsent)
        return queued
    patch(monkeypatch, "send_alter_isr_request", send_alter_isr_request, partition)


CFG_LOSSY = CFG.replace(crash_loses_unflushed_data=True)
CFG_MIN_ISR_2 = CFG.replace(min_insync_replicas=2)


# --- truncate on fetch (KAFKA-10554, Kafka 2.8.0) ----------------------------------------------------------
CFG_TRUNCATE_ON_FETCH = preset("truncate-on-fetch").config


def mut_no_kafka_14704(monkeypatch):
    """KAFKA-14704 off: a follower sets its HW from a diverging fetch response before it truncates (2.8.0-3.4.0)."""
    return CFG_TRUNCATE_ON_FETCH.replace(kafka_14704=False)


# --- KRaft (KIP-500, KIP-631) ---------------------------------------------------------------------------------
CFG_KRAFT = preset("kafka-3.6").config
CFG_DISK_WIPE = preset("kafka-4.1-disk-wipe").config


def mut_fence_keeps_isr(monkeypatch):
    """handleBrokerFenced without generateLeaderAndIsrUpdates: a fenced broker stays in every ISR (only the
    FenceBrokerRecord is written)."""
    real = quorum_controller._change_partitions

    def change_partitions(cfg, s, partitions, remove, add, records):
        if remove < 0:
            real(cfg, s, partitions, remove, add, records)

    patch(monkeypatch, "_change_partitions", change_partitions, quorum_controller)


def _kraft_replayed(cfg: ModelConfig) -> Builder:
    """Every broker replays the metadata log: four records (three registrations, the partition); broker b's first
    replay catches up to its own registration."""
    return Builder(cfg).do(*(A.MetadataApply(b) for b in (0, 1, 2) for _ in range(4 - b)))


def t_kraft_follower_fenced():
    """Every broker replays the metadata log; follower 1's heartbeats are lost and the controller fences it."""
    return _kraft_replayed(CFG_KRAFT).do(A.HeartbeatsLost(1), A.FenceStaleBroker(1)).actions


CFG_FORGED = CFG_KRAFT.replace(max_forged_alter_partitions=1)


def mut_alter_partition_any_sender(monkeypatch):
    """ReplicationControlManager.validateAlterPartitionData without its leader check: a request from a replica that
    does not lead is validated as the leader's."""
    real = quorum_controller._validate

    def validate(cfg, q, b, part, item):
        return real(cfg, q, part.leader if part is not None else b, part, item)

    patch(monkeypatch, "_validate", validate, quorum_controller)


def t_kraft_forged_from_follower():
    """Every broker replays the metadata log; follower 1 sends an AlterPartition naming the partition's own state,
    at its own broker epoch and the partition's epochs: the controller must refuse it (INVALID_REQUEST)."""
    b = _kraft_replayed(CFG_FORGED)
    part = b.s.quorum.partitions[0]
    return b.do(A.AlterPartitionReceived(1, 0, b.s.quorum.registrations[1].epoch, part.leader_epoch,
                                         part.partition_epoch, ",".join(map(str, part.isr)))).actions


def mut_no_partition_epoch_check(monkeypatch):
    """ReplicationControlManager.validateAlterPartitionData without its partition-epoch comparisons."""
    return CFG_KRAFT.replace(partition_epoch_check=False)


# =========================================================================== the table
# Mutants tried and deliberately left out, because no invariant can catch them (they are equivalent with
# respect to the catalogue in this model; seeded walker runs over several presets found no violation):
# * follower HW only moving up (FO2 as max): every HW a follower learns was committed, and committed offsets
#   are never truncated in clean runs, so a higher follower HW never points past data an ISR member lacks;
# * leader HW counted over the ISR only (lag-window clause of maybeIncrementLeaderHW dropped): with
#   KAFKA-7128 a follower joins only at LEO >= the HW, so the clause does not affect safety;
# * becomeLeaderOrFollower without C4: a live controller never sends an older leader epoch to a broker that
#   has a newer one, so the broker-side leader-epoch clause of epochs_monotonic needs C1 and C4 broken
#   together (and then the controller-epoch clause, checked first, reports the step).
@dataclass(frozen=True)
class Case:
    invariant: str
    mutant: Callable            # (monkeypatch) -> ModelConfig | None
    trace: Callable             # () -> list of actions, built on the unmutated model
    facts: dict = field(default_factory=dict)   # facts the violation must report
    cfg: ModelConfig = CFG

    @property
    def id(self) -> str:
        return f"{self.invariant}-{self.mutant.__name__.removeprefix('mut_')}"


FIXTURES = Path(__file__).resolve().parent / "fixtures" / "mutants"


def registry(name: str) -> Callable:
    """A mutant of the registry (properties/mutants.py), installed through monkeypatch (undone after the test)."""
    from isrlab.properties.mutants import install, restore

    def mut(monkeypatch):
        saved = install(name)
        patched = [(holder, attr, getattr(holder, attr)) for holder, attr, _ in saved]
        restore(saved)
        for holder, attr, fn in patched:
            monkeypatch.setattr(holder, attr, fn)

    mut.__name__ = "mut_" + name.replace("-", "_")
    return mut


def t_produce_expires_at_leader_without_session() -> list:
    """An acks=all produce parks at leader 0, whose ZooKeeper session then expires: with no follower fetching, its ISR
    shrink cannot reach ZooKeeper, the HW stays and after 30 s the produce expires (REQUEST_TIMED_OUT)."""
    b = Builder().up(0).ready(1, 2).produce(0, acks=-1).do(A.ZkSessionExpire(0))
    return b.advance(CFG.produce_timeout_ms + 1000).tasks().actions


def fixture(invariant: str) -> Callable:
    """The actions of tests/fixtures/mutants/<invariant>.json: a guided search's trace under the registry mutant
    its provenance names, shrunk; the unmutated model passes it."""
    return lambda: load_trace(FIXTURES / f"{invariant}.json").actions


def mut_no_kip_903(monkeypatch):
    """KIP-903 off (Kafka 3.4): no broker epochs in Fetch or in AlterPartition's ISR entries."""
    return CFG_DISK_WIPE.replace(kip_903=False)


# --- KAFKA-14140 and the metadata log ------------------------------------------------------------------------------
CFG_KIP_841_ZK = preset("alter-isr-kafka-14140").config


def mut_no_kafka_14140(monkeypatch):
    """KAFKA-14140 off (ZooKeeper mode before 3.3.0): neither the leader nor the controller checks that a broker joining
    an ISR is alive."""
    return CFG_KIP_841_ZK.replace(kafka_14140=False)


#: A guided search's trace under the mutant (seed 5 of 1,500 extensions), cut down by hand to 28 actions that the
#: fixed model replays too: the leader (broker 1), whose metadata cache still holds broker 2 alive, proposes it; the
#: new controller 0 holds it dead (its session expired at step 22).
_DEAD_FOLLOWER_PROPOSED = [
    {"type": "ElectController", "broker": 2},
    {"type": "BrokerCrash", "broker": 2, "clean": True},
    {"type": "ElectController", "broker": 1},
    {"type": "DeliverControlRequest", "controller": 1, "broker": 1},
    {"type": "DeliverControlRequest", "controller": 1, "broker": 1},
    {"type": "DeliverControlRequest", "controller": 1, "broker": 1},
    {"type": "DeliverControlRequest", "controller": 1, "broker": 1},
    {"type": "ZkSessionExpire", "broker": 0},
    {"type": "ControllerProcessBrokerChange", "controller": 1},
    {"type": "BrokerRestart", "broker": 2},
    {"type": "ControllerProcessBrokerChange", "controller": 1},
    {"type": "DeliverControlRequest", "controller": 1, "broker": 2},
    {"type": "DeliverControlRequest", "controller": 1, "broker": 1},
    {"type": "DeliverControlRequest", "controller": 1, "broker": 1},
    {"type": "BrokerCrash", "broker": 0, "clean": False},
    {"type": "DeliverControlRequest", "controller": 1, "broker": 2},
    {"type": "OffsetsForLeaderEpoch", "broker": 2, "partition": 0},
    {"type": "BrokerRestart", "broker": 0},
    {"type": "ZkDeleteController", "controller": 1},
    {"type": "ElectController", "broker": 2},
    {"type": "DeliverControlRequest", "controller": 2, "broker": 1},
    {"type": "ZkSessionExpire", "broker": 2},
    {"type": "FetchRequest", "broker": 2, "partition": 0},
    {"type": "AlterIsrRequest", "broker": 1},
    {"type": "AlterIsrReceived", "broker": 1},
    {"type": "ElectController", "broker": 0},
    {"type": "DeliverControlRequest", "controller": 0, "broker": 1},
    {"type": "AlterIsrResponse", "broker": 1},
    {"type": "AlterIsrRequest", "broker": 1},
    {"type": "AlterIsrReceived", "broker": 1}
]


def t_dead_follower_proposed() -> list:
    return [A.action_from_json(a) for a in _DEAD_FOLLOWER_PROPOSED]


def mut_replay_skips_fence(monkeypatch):
    """A broker's replay of the metadata log leaves a FenceBrokerRecord out of its metadata cache (the fenced broker
    stays alive there)."""
    from isrlab.model import step as step_module
    from isrlab.model.state import FenceBrokerRecord, MetadataCache

    real = step_module.apply_next_record

    def apply_next_record(cfg, s, b):
        start = s.brokers[b].metadata_offset
        real(cfg, s, b)
        br = s.broker_mut(b)
        for rec in s.quorum.log[start:br.metadata_offset]:
            if type(rec) is FenceBrokerRecord:
                md = br.metadata
                br.metadata = MetadataCache(tuple(sorted(set(md.alive_brokers) | {rec.broker_id})), md.partitions,
                                            md.controller_id, md.broker_epochs,
                                            tuple(x for x in md.fenced if x != rec.broker_id), md.shutting_down)

    monkeypatch.setattr(step_module, "apply_next_record", apply_next_record)
    return None


def t_kraft_broker_fenced_and_replayed() -> list:
    """Broker 0 replays the formed cluster's records; broker 1 loses its session and is fenced; broker 0 replays that."""
    return [A.MetadataApply(0)] * 4 + [A.HeartbeatsLost(1), A.FenceStaleBroker(1), A.MetadataApply(0)]

# --- the KIP-966 specification's properties ----------------------------------------------------------------------
CFG_ELR = preset("kafka-4.1").config


def mut_no_kafka_19522(monkeypatch):
    """KAFKA-19522 off (Kafka 3.8.0 to 4.0.1 with the ELR on): the last known leader is elected while fenced."""
    return CFG_ELR.replace(kafka_19522=False)


def mut_crash_recovers_to_hw_checkpoint(monkeypatch):
    """An unclean crash's log recovery truncates each log to its HW checkpoint (Log.recoverLog keeps every record
    below the recovery point, and a crash without lost unflushed data keeps them all)."""
    real = stepmod.broker_crash

    def broker_crash(cfg, s, b, clean):
        if not clean:
            br = s.broker_mut(b)
            for p, log in enumerate(br.logs):
                checkpoint = br.hw_checkpoint[p] or 0
                if log is not None and checkpoint < log.log_end_offset:
                    logmod.truncate_to(br.log_mut(p), checkpoint)
        real(cfg, s, b, clean)

    monkeypatch.setattr(stepmod, "broker_crash", broker_crash)
    return None


def t_acked_then_leader_crashes_alone() -> list:
    """kafka-2.4: broker 1 leads alone (broker 0 stopped, broker 2's session gone), acknowledges record 1 to an acks=all
    producer, then crashes uncleanly before its HW checkpoint: no broker leads the partition any longer."""
    return [A.ElectController(0), A.BrokerCrash(0, True), A.ElectController(1), A.ZkSessionExpire(2),
            A.DeliverControlRequest(1, 1), A.ControllerProcessBrokerChange(1)] \
        + [A.DeliverControlRequest(1, 1)] * 7 + [A.Produce(1, 0, -1), A.BrokerCrash(1, False)]


CASES = (
    Case("controller_isr_entry_condition", mut_no_kip_903, fixture("controller_isr_entry_condition"),
         {"follower": 2, "follower_log_end_offset": 0, "high_watermark": 1}, CFG_DISK_WIPE),
    Case("leader_isr_covers_controller_isr", mut_no_partition_epoch_check,
         fixture("leader_isr_covers_controller_isr"), {"controller_isr": [0, 1, 2], "leader_maximal_isr": [0]},
         CFG_KRAFT),
    Case("forged_alter_partition_refused", mut_alter_partition_any_sender, t_kraft_forged_from_follower,
         {"partition": 0, "defect": "a sender that does not lead"}, CFG_FORGED),
    Case("isr_members_eligible", mut_fence_keeps_isr, t_kraft_follower_fenced,
         {"partition": 0, "broker": 1, "isr": [0, 1, 2]}, CFG_KRAFT),
    Case("log_offsets", mut_truncate_keeps_hw, t_lossy_leader_crash,
         {"broker": 0, "high_watermark": 1, "log_end_offset": 0}, CFG_LOSSY),
    Case("isr_well_formed", mut_isr_removal_empties_isr, t_leader_only_isr_then_leader_stops,
         {"where": "zookeeper", "isr": [], "leader": -1}),
    Case("isr_well_formed", mut_election_outside_isr_keeps_isr, t_acked_then_isr_members_die,
         {"where": "zookeeper", "leader": 2, "isr": [1]}),
    Case("one_leader_per_epoch", mut_election_keeps_epoch, t_bounce_then_leader_stops,
         {"leader_epoch": 0, "leaders": [0, 1]}),
    Case("epoch_cache_monotonic", mut_cache_assign_keeps_later_offsets, t_leader_epoch_bump_same_leader,
         {"broker": 0, "epoch_cache": [[0, 0], [1, 0]]}),
    Case("acked_durability", mut_hw_max_not_min, t_acked_record_unreplicated,
         {"offset": 0, "leader": 1, "found": None}),
    Case("acked_durability", mut_leader_truncates_to_hw, lambda: scenario("05-"),
         {"offset": 0, "leader": 1, "found": None}),
    Case("acked_durability", mut_election_outside_isr_not_unclean, t_acked_then_isr_members_die,
         {"offset": 0, "leader": 2, "found": None}),
    Case("consumer_safety", mut_consumer_reads_to_leo, t_consumer_then_failover,
         {"offset": 0, "leader": 1, "found": None}),
    Case("committed_prefix", mut_hw_max_not_min, t_acks1_unreplicated,
         {"offset": 0, "leader": 0, "high_watermark": 1, "follower_entry": None}),
    Case("committed_prefix", mut_hw_ignores_isr, t_lagging_isr_member,
         {"offset": 0, "leader": 0, "follower": 2, "follower_entry": None}),
    Case("log_matching", mut_follower_skips_truncation, t_divergent_follower_log,
         {"brokers": [0, 1], "offset": 0, "matched_offset": 1}),
    Case("hw_within_isr", mut_hw_ignores_isr, t_lagging_isr_member,
         {"leader": 0, "follower": 2, "high_watermark": 1, "follower_log_end_offset": 0}),
    Case("hw_within_isr", mut_make_leader_keeps_remote_leos, lambda: scenario("16-"),
         {"leader": 0, "follower": 2}),
    Case("isr_propagation_bound", mut_propagation_never_writes, t_shrink_then_wait,
         {"broker": 0, "pending": [0]}),
    Case("leader_hw_monotonic", mut_hw_not_monotonic, t_hw_drops_within_tenure,
         {"broker": 0, "high_watermark_before": 2, "high_watermark_after": 1}),
    Case("epochs_monotonic", mut_leader_and_isr_no_c1, t_zombie_controller,
         {"broker": 2, "controller_epoch_before": 2, "controller_epoch_after": 1}),
    Case("epochs_monotonic", mut_update_metadata_no_c10, t_zombie_update_metadata,
         {"broker": 2, "controller_epoch_before": 2, "controller_epoch_after": 1}),
    Case("epochs_monotonic", mut_reconnect_resets_controller_epoch, t_session_reconnect,
         {"broker": 1, "controller_epoch_before": 1, "controller_epoch_after": 0}),
    Case("epochs_monotonic", mut_controller_epoch_from_cache, t_restarted_broker_elected_controller,
         {"where": "zookeeper", "controller_epoch_before": 2, "controller_epoch_after": 1}),
    Case("epochs_monotonic", mut_isr_write_without_cas, t_stale_leader_shrinks_isr,
         {"where": "zookeeper", "partition": 0, "leader_epoch_before": 1, "leader_epoch_after": 0}),
    Case("stale_controller_epoch_refused", mut_leader_and_isr_no_c1, t_zombie_controller,
         {"broker": 2, "request": "LeaderAndIsrRequest", "request_controller_epoch": 1,
          "broker_controller_epoch": 2}),
    Case("stale_controller_epoch_refused", mut_update_metadata_no_c10, t_zombie_update_metadata,
         {"broker": 2, "request": "UpdateMetadataRequest", "request_controller_epoch": 1}),
    Case("fetch_fencing", mut_no_kafka_8400, t_fenced_fetch_to_leader,
         {"leader": 0, "follower": 2, "error": E.FENCED_LEADER_EPOCH, "log_end_offset_before": 0,
          "log_end_offset_after": 1}),
    Case("stale_controller_write_refused", mut_no_kafka_6082, lambda: scenario("26b-"),
         {"controller": 2, "controller_epoch": 1, "zk_controller_epoch": 2, "written": "partition state"}),
    Case("isr_entry_condition", mut_no_kafka_7128, lambda: scenario("08a-"),
         {"follower": 2, "follower_log_end_offset": 1, "leader_epoch_start_offset": 2}),
    Case("isr_entry_condition", mut_in_sync_ignores_hw, t_follower_rejoins_below_hw,
         {"leader": 0, "follower": 2, "follower_log_end_offset": 0, "high_watermark": 1}),
    Case("min_isr_promise", mut_no_min_isr_at_completion, t_min_isr_shrink_completes_produce,
         {"leader": 0, "isr": [0], "min_insync_replicas": 2}, CFG_MIN_ISR_2),
    Case("isr_lag_window", mut_out_of_sync_ge, lambda: scenario("01-"),
         {"bound": "lower", "follower": 2, "now": CFG.start_time_ms + 15000,
          "last_caught_up_time_ms": CFG.start_time_ms + 5000}),
    Case("isr_lag_window", mut_out_of_sync_no_leo_guard, lambda: scenario("02-"),
         {"bound": "lower", "follower": 1, "follower_log_end_offset": 1, "leader_log_end_offset": 1}),
    Case("isr_lag_window", mut_shrink_one_at_a_time, t_both_followers_idle,
         {"bound": "upper", "leader": 0, "follower": 2}),
    Case("hw_advanced_on_isr_shrink", mut_no_kafka_13091, lambda: scenario("23b-", CFG_ALTER_ISR),
         {"leader": 0, "isr_after": [0, 1], "high_watermark": 0, "hw_candidate": 1}, CFG_ALTER_ISR),
    Case("hw_advanced_on_isr_shrink", mut_shrink_without_hw_recompute, lambda: scenario("22a-", CFG.replace(
        replica_lag_time_max_ms=30000)), {"leader": 0, "isr_after": [0, 1], "high_watermark": 0, "hw_candidate": 1},
         CFG.replace(replica_lag_time_max_ms=30000)),
    Case("pending_isr_in_flight", mut_no_kafka_12686, lambda: scenario("24b-", CFG_ALTER_ISR),
         {"broker": 0, "leader_epoch": 2, "pending": {"expand": True, "replicas": [1]}}, CFG_ALTER_ISR),
    Case("pending_isr_well_formed", mut_alter_isr_sends_committed_isr, lambda: scenario("22b-", CFG_ALTER_ISR),
         {"broker": 0, "problem": "queued item proposes another ISR"}, CFG_ALTER_ISR),
    Case("follower_hw_committed", mut_no_kafka_14704, lambda: scenario("27b-", CFG_TRUNCATE_ON_FETCH),
         {"follower": 1, "offset": 0, "high_watermark": 1, "follower_entry": [1, 0], "leader_entry": [2, 2]},
         CFG_TRUNCATE_ON_FETCH),
    Case("acked_below_hw", registry("produce-required-offset-one-short"), fixture("acked_below_hw"),
         {"record": 1, "offset": 0, "leader": 0, "high_watermark": 0}),
    Case("controller_bumps_leader_epoch", registry("isr-removal-same-epoch"), fixture("controller_bumps_leader_epoch"),
         {"partition": 0, "before": [0, 0, [0, 1, 2], 1], "after": [0, 0, [0, 1], 2]}),
    Case("zk_write_needs_session", registry("isr-write-without-session"), fixture("zk_write_needs_session"),
         {"writer": 1, "isr_before": [1, 2], "isr_after": [0, 1, 2]}),
    Case("stale_broker_epoch_refused", registry("broker-epoch-not-checked"), fixture("stale_broker_epoch_refused"),
         {"broker": 1, "request_broker_epoch": 2, "broker_epoch": 4}),
    Case("control_requests_in_order", registry("deliver-newest-first"), fixture("control_requests_in_order"),
         {"controller": 1, "broker": 1, "delivered_leader_epoch": 2, "still_queued_leader_epoch": 0}),
    Case("caught_up_time_sound", registry("caught-up-one-behind"), fixture("caught_up_time_sound"),
         {"follower": 2, "fetch_offset": 0, "leader_log_end_offset": 1, "caught_up_after": 1000001}),
    Case("zk_isr_joins_live", mut_no_kafka_14140, t_dead_follower_proposed,
         {"controller": 0, "broker": 2, "leader": 1, "shutting_down": False}, CFG_KIP_841_ZK),
    Case("metadata_log_matching", mut_replay_skips_fence, t_kraft_broker_fenced_and_replayed,
         {"broker": 0, "problem": "metadata cache is not the replay of the applied records"}, CFG_KRAFT),
    # invariants the registry's surviving mutants showed missing
    Case("epoch_cache_trimmed", registry("truncate-keeps-epoch-cache"), fixture("epoch_cache_trimmed"),
         {"broker": 2, "log_end_offset": 0, "log_end_offset_before": 1, "epoch_cache": [[0, 0]]}),
    Case("out_of_range_only_outside_log", registry("fetch-at-leo-out-of-range"), fixture("out_of_range_only_outside_log"),
         {"leader": 0, "follower": 2, "fetch_offset": 0, "log_end_offset": 0}),
    Case("leader_epoch_start_bound", registry("epoch-start-from-hw"), fixture("leader_epoch_start_bound"),
         {"leader": 2, "leader_epoch": 3, "leader_epoch_start_offset": 0, "epoch_cache_start": 1}),
    Case("crashed_broker_forgets", registry("crash-keeps-delayed-produce"), fixture("crashed_broker_forgets"),
         {"broker": 0, "kept": ["delayed_produces"], "delayed_produces": 1}),
    Case("follower_fetches_current_epoch", registry("follower-same-leader-no-truncation"),
         fixture("follower_fetches_current_epoch"),
         {"broker": 1, "leader": 0, "leader_epoch": 1, "fetching_from": 0, "fetch_leader_epoch": 0}),
    Case("fetch_epoch_fenced", registry("fetch-not-fenced"), fixture("fetch_epoch_fenced"),
         {"leader": 0, "follower": 1, "fetch_leader_epoch": 0, "leader_epoch": 2, "expected": "FENCED_LEADER_EPOCH"}),
    Case("acked_below_hw", registry("expired-produce-acked"), t_produce_expires_at_leader_without_session,
         {"record": 1, "offset": 0, "leader": 0, "high_watermark": 0, "held": [1, 0]}),
    Case("controller_in_own_session", registry("reconnect-keeps-controller"), fixture("controller_in_own_session"),
         {"broker": 0, "controller_epoch": 1, "broker_epoch_before": -1, "broker_epoch_after": 4}),
    Case("acked_survives_leaderless", mut_crash_recovers_to_hw_checkpoint, t_acked_then_leader_crashes_alone,
         {"partition": 0, "offset": 0, "record": 1, "lossy_crashes": 0}),
    Case("min_isr_recovery_quorum", mut_no_kafka_19522, fixture("min_isr_recovery_quorum"),
         {"partition": 0, "isr": [], "elr": [], "problem": "recovery quorum below min ISR"}, CFG_ELR),
)


# =========================================================================== tests
def test_every_safety_invariant_has_a_mutant():
    covered = {c.invariant for c in CASES}
    missing = sorted(inv.name for inv in SAFETY if inv.name not in covered)
    assert not missing, f"safety invariants without a mutant in tests/test_mutants.py: {missing}"
    unknown = sorted(covered - set(BY_NAME))
    assert not unknown, f"mutant cases name unknown invariants: {unknown}"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_invariant_catches_mutant(case: Case, monkeypatch):
    inv = BY_NAME[case.invariant]
    actions = case.trace()

    clean = run(case.cfg, actions, inv)
    assert clean.disabled is None, f"unmutated model: {A.describe(clean.disabled)} not enabled at {clean.steps + 1}"
    assert clean.violation is None, f"unmutated model violates {case.invariant}: {clean.violation}"

    cfg = case.mutant(monkeypatch) or case.cfg
    broken = run(cfg, actions, inv)
    assert broken.violation is not None, (
        f"mutant {case.mutant.__name__} not caught by {case.invariant} in {broken.steps} steps"
        + (f" (stopped: {A.describe(broken.disabled)} not enabled)" if broken.disabled else ""))
    assert broken.violation.invariant == case.invariant
    got = {k: broken.violation.facts.get(k) for k in case.facts}
    assert got == case.facts, f"violation facts {broken.violation.facts}"
    # and explain has a sentence of its own for it (not the generic one with the raw facts)
    said = sentence(cfg, actions[:broken.steps], broken.violation)
    assert not said.startswith("Invariant ") and "{" not in said and f"step {broken.violation.step}" in said, said


@pytest.mark.parametrize("trace", [t_lagging_isr_member, t_hw_drops_within_tenure, lambda: scenario("16-")],
                         ids=["lagging-isr-member", "hw-drops-within-tenure", "scenario-16"])
def test_hw_rule_scaffold_is_the_model(trace, monkeypatch):
    """The HW mutants are variations of ``_hw_rule``; with its defaults it must be the model's rule."""
    actions = trace()
    expected = Builder(prefix=actions).s
    _patch_hw(monkeypatch, _hw_rule())
    assert encode(Builder(prefix=actions).s) == encode(expected)
