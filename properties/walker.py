"""The seeded random walker: picks enabled actions with random.Random(seed), checks the catalogue after every step.

Swarm testing (Groce et al.): each run draws, from its own seed, a subset of
the optional action kinds (clients, faults, controller moves) and walks with
only those enabled, so that rare interleavings come up in some runs instead of
being drowned out in all of them.  The walker chooses a kind first, then an
action of that kind, so that kinds with many instances (produce and consumer
fetches to every broker) do not crowd out the rare ones.

Fault targeting: half the runs aim their crashes and session expirations at the brokers that hold a
role, a partition's leader or the controller, as Kafka's own replication system test chooses the
broker it kills or bounces (tests/kafkatest/tests/core/replication_test.py, ``broker_type`` leader
or controller); the other half pick their victims among all brokers.
"""

from __future__ import annotations

import hashlib
import random
from bisect import bisect
from dataclasses import dataclass, field
from itertools import accumulate

from ..model import actions as A
from ..model.actions import CONTINUATIONS, continues
from ..model.config import ModelConfig
from ..model.state import TRUNCATING, Partition
from ..model.step import action_kinds, enabled_groups, initial_state, step
from .budget import CHECK_MASK
from .invariants import CATALOGUE, Violation, check_state, check_transition, witnesses
from .settle import settle, settle_after_run

#: Kinds every run keeps: without them nothing replicates and no leader is ever elected.
CORE_KINDS = frozenset({
    A.ElectController, A.ControllerProcessBrokerChange, A.DeliverControlRequest, A.FetchRequest,
    A.FetchResponse, A.OffsetsForLeaderEpoch, A.Produce, A.AlterIsrRequest, A.AlterIsrReceived, A.AlterIsrResponse,
    A.OffsetsForLeaderEpochRequest, A.OffsetsForLeaderEpochResponse,
})
#: Time and the scheduled tasks go together: a task that is left out would stop the clock at its
#: first due time, so a run either has all of them or has time frozen.
TIME_KINDS = frozenset({A.Tick, A.IsrExpiration, A.IsrChangePropagation, A.HighWatermarkCheckpoint,
                        A.DelayedProduceExpire})
#: The other kinds a swarm run may leave out (each kept with probability P_OPTIONAL): faults,
#: consumers, log flushes.  Leaving out BrokerRestart keeps crashed brokers down.
#: ListOffsets and the KIP-392 consumer fetch (each offered only when the configuration asks for it) are
#: observations: every run keeps them, with no random draw, so that the draws of a run are those it made before
#: they existed.
OBSERVATION_KINDS = frozenset({A.ListOffsets, A.ConsumerFetchWithClientMetadata})
#: KRaft (kip_500): replaying the metadata log and the controller fencing a stale broker are system kinds every run
#: keeps, the scheduled heartbeat goes with time, and lost heartbeats are a fault drawn after the others (only when
#: the model offers them, so that a ZooKeeper-era run draws exactly as before they existed).
KRAFT_CORE_KINDS = frozenset({A.MetadataApply, A.FenceStaleBroker})
KRAFT_TIME_KINDS = frozenset({A.BrokerHeartbeat})
KRAFT_OPTIONAL_KINDS = (A.HeartbeatsLost, A.ControlledShutdown, A.DiskWipe, A.ControllerFailover)
#: The ZooKeeper era's leader moves (``controlled_shutdown_enable``, ``max_preferred_elections``,
#: ``auto_leader_rebalance_enable``; ``ControlledShutdown`` is drawn with the KRaft optional kinds, when offered): the
#: ControlledShutdown request and response and the controller's handling of /admin/preferred_replica_election are
#: reactions every run keeps, the auto-leader-rebalance-task (KRaft's leader balancing too) goes with time, the
#: admin's election requests (PreferredReplicaElection; ElectLeaders, in KRaft too) are drawn last and only when
#: offered, so that a run of another configuration draws exactly as before they existed.
LEADERSHIP_CORE_KINDS = frozenset({A.ControlledShutdownRequest, A.ControlledShutdownResponse,
                                   A.ControllerProcessPreferredReplicaElection})
LEADERSHIP_TIME_KINDS = frozenset({A.AutoLeaderRebalance})
LEADERSHIP_OPTIONAL_KINDS = (A.PreferredReplicaElection, A.ElectLeaders)
#: DeleteRecords and the retention task (offered only with a budget for them) are optional kinds drawn last, only when
#: the model offers them, so that a run without them draws exactly as before they existed.
LOG_START_KINDS = (A.DeleteRecords, A.DeleteOldSegments)
#: Topics at run time (model/topics.py, offered only within their budgets): the controller's TopicDeletion,
#: TopicChange and StopReplica-response events are system kinds every run keeps, the admin's deletions and creations
#: are optional kinds drawn after the others (only when the model offers them, so that other runs draw as before).
TOPIC_CORE_KINDS = frozenset({A.ControllerProcessTopicDeletion, A.ControllerProcessTopicChange,
                              A.ControllerProcessStopReplicaResponse})
TOPIC_OPTIONAL_KINDS = (A.DeleteTopic, A.CreateTopic, A.CreatePartitions)
#: The fetch purgatory (``delayed_fetch``): a waiting consumer fetch is a consumer kind drawn after the others, its
#: expiry goes with time and is a reaction (eager) drawn after the others, only when the model offers them, so
#: that a run of any other configuration draws exactly as before they existed.
DELAYED_FETCH_OPTIONAL_KINDS = (A.ConsumerFetchWait,)
DELAYED_FETCH_TIME_KINDS = frozenset({A.DelayedFetchExpire})
#: Partition reassignment (``max_reassignments``): the controller's two events are system kinds every run keeps (no
#: draw), the admin's reassignment an optional kind drawn after the others, only when the model offers it.
REASSIGNMENT_CORE_KINDS = frozenset({A.ControllerProcessPartitionReassignment, A.ControllerProcessReassignmentIsrChange})
REASSIGNMENT_OPTIONAL_KINDS = (A.ReassignPartitions,)
#: The second half of a leader's ISR expansion when the model splits it (``PrepareIsrExpand``, offered only then): a
#: system kind every run keeps (no draw), and lazy, so that whatever can happen while the expansion waits is explored.
EXPAND_WINDOW_CORE_KINDS = frozenset({A.PrepareIsrExpand})
#: An AlterIsr answered with an error no controller of the model gives (``max_alter_isr_failures``): a fault drawn
#: after the others, only when the model offers it, so that other runs draw as before it existed.
ALTER_ISR_FAULT_KINDS = (A.AlterIsrFailed,)
#: KRaft: an AlterPartition no leader of the model sends, a heartbeat expired in the controller's queue (their budgets
#: ``max_forged_alter_partitions``, ``max_expired_heartbeats``): faults drawn likewise, only when the model offers them.
REQUEST_FAULT_KINDS = (A.AlterPartitionReceived, A.ExpiredBrokerHeartbeat)
#: KRaft: a request of a broker's earlier incarnation reaching its receiver (``OrphanRequestReceived``, offered only
#: after a stop): a system kind every run keeps (no draw), and lazy, so that it arrives early or late.
ORPHAN_CORE_KINDS = frozenset({A.OrphanRequestReceived})
#: KRaft: an admin's change of the topic's unclean.leader.election.enable (``max_config_changes``): an optional kind
#: drawn after the others, only when the model offers it, so that other runs draw as before it existed.
CONFIG_OPTIONAL_KINDS = (A.AlterTopicConfig,)
#: KRaft with log directories (``log_dirs``): a broker reporting its logs' directories (``AssignReplicasToDirs``) is a
#: system kind every run keeps (no draw), a directory failing (``LogDirFailure``, within ``max_log_dir_failures``) a
#: fault drawn after the others, only when the model offers it, so that other runs draw as before they existed.
JBOD_CORE_KINDS = frozenset({A.AssignReplicasToDirs})
JBOD_FAULT_KINDS = (A.LogDirFailure,)
OPTIONAL_KINDS = tuple(k for k in A.ACTION_TYPES
                       if k not in CORE_KINDS and k not in TIME_KINDS and k not in OBSERVATION_KINDS
                       and k not in KRAFT_CORE_KINDS and k not in KRAFT_TIME_KINDS and k not in KRAFT_OPTIONAL_KINDS
                       and k not in LEADERSHIP_CORE_KINDS and k not in LEADERSHIP_TIME_KINDS
                       and k not in LEADERSHIP_OPTIONAL_KINDS and k not in LOG_START_KINDS
                       and k not in TOPIC_CORE_KINDS and k not in TOPIC_OPTIONAL_KINDS
                       and k not in DELAYED_FETCH_OPTIONAL_KINDS and k not in DELAYED_FETCH_TIME_KINDS
                       and k not in REASSIGNMENT_CORE_KINDS and k not in REASSIGNMENT_OPTIONAL_KINDS
                       and k not in EXPAND_WINDOW_CORE_KINDS and k not in ALTER_ISR_FAULT_KINDS
                       and k not in ORPHAN_CORE_KINDS and k not in REQUEST_FAULT_KINDS
                       and k not in CONFIG_OPTIONAL_KINDS and k not in JBOD_CORE_KINDS and k not in JBOD_FAULT_KINDS)
P_OPTIONAL = 0.4
P_TIME = 0.5
#: Kinds a run may make eager: when one is enabled it is taken at once (with probability
#: EAGERNESS), as the controller, the request send threads and the fetchers usually react at once.
#: Collapsing this bookkeeping makes the random choices fall on the moves that matter (produce,
#: fetch, crash, expiry, time), so deep interleavings come up in far fewer steps; other runs keep
#: every kind lazy, so that delays of these reactions are explored too.
EAGER_CANDIDATES = (
    A.DeliverControlRequest, A.FetchResponse, A.OffsetsForLeaderEpoch, A.ElectController,
    A.ControllerProcessBrokerChange, A.ControllerProcessIsrChangeNotification, A.ControllerResign,
    A.IsrExpiration, A.IsrChangePropagation, A.HighWatermarkCheckpoint, A.DelayedProduceExpire,
)
#: With KIP-497 the AlterIsr send and its response are reactions too; drawn after the others, so that a
#: preset without AlterIsr draws exactly as before they existed.
EAGER_ALTER_ISR = (A.AlterIsrRequest, A.AlterIsrReceived, A.AlterIsrResponse)
#: Likewise the OffsetsForLeaderEpoch request and response when the model splits the round in two, and KRaft's replay
#: of the metadata log and the controller's fencing.
EAGER_EPOCH_ROUND = (A.OffsetsForLeaderEpochRequest, A.OffsetsForLeaderEpochResponse)
EAGER_KRAFT = (A.MetadataApply, A.FenceStaleBroker)
EAGER_LEADERSHIP = (A.ControlledShutdownRequest, A.ControlledShutdownResponse,
                    A.ControllerProcessPreferredReplicaElection, A.AutoLeaderRebalance)
EAGER_TOPICS = tuple(sorted(TOPIC_CORE_KINDS, key=A.ACTION_TYPES.index))
EAGER_DELAYED_FETCH = (A.DelayedFetchExpire,)
EAGER_REASSIGNMENT = (A.ControllerProcessPartitionReassignment, A.ControllerProcessReassignmentIsrChange)
P_EAGER = 0.7
EAGERNESS = 0.9
#: Per-run weight of each broker's actions: a slow broker (weight 0.1) fetches, restarts and answers
#: rarely, which opens the race windows (a follower that has not refetched yet) many bugs need.
BROKER_WEIGHTS = (0.1, 1.0, 1.0)
#: Fault kinds a run may aim at role holders (with probability P_TARGETED): a broker that believes it
#: leads a partition, or the controller, weighs TARGET_WEIGHT times as much as another when one of
#: these kinds is chosen (the measurements behind both values: benchmarks/RESULTS.md).
TARGETED_KINDS = frozenset({A.BrokerCrash, A.ZkSessionExpire, A.HeartbeatsLost, A.ControlledShutdown,
                            A.LogDirFailure})
P_TARGETED = 0.5
TARGET_WEIGHT = 10.0
#: Composite steps: a run takes (with probability P_COMPOSITE) the protocol's exchanges whole.  Once it has chosen
#: an action that opens or carries on an exchange (``actions.CONTINUATIONS``: a request and its handling and response,
#: a broker's catch-up on the metadata log, a controller's queue to one broker), its next choices carry that exchange
#: on while a continuation is enabled, so that a decision of the protocol costs one random choice, not one per model
#: action.  Other runs keep every action a choice of its own, so the interleavings inside an exchange are explored
#: too.  The trace holds every action either way.
P_COMPOSITE = 0.5


def derive_seed(campaign_seed: int, index: int) -> int:
    """A 63-bit run seed from (campaign seed, index) by a stable hash: same on every machine and process."""
    digest = hashlib.blake2b(f"isrlab:{campaign_seed}:{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


@dataclass
class WalkResult:
    seed: int
    steps: int
    actions: list
    violation: Violation | None
    kinds: frozenset
    kind_counts: dict = field(default_factory=dict)
    #: the SOMETIMES witnesses that held in the run's final state
    witnesses: frozenset = frozenset()
    #: bit set over model.errors.ERROR_BIT: the error codes the run's responses carried
    errors_seen: int = 0
    #: every violation found, the first of each invariant (more than one only with keep_going)
    violations: list = field(default_factory=list)
    #: True when ``should_stop`` cut the walk short (it did fewer steps than it would have)
    stopped: bool = False


def swarm_kinds(rng: random.Random, swarm: bool, model_kinds=()) -> frozenset:
    """The action kinds one run may use: every kind, or the core plus a random subset of the others (``model_kinds``:
    the kinds the model offers, which decide whether the KRaft kinds are drawn)."""
    if not swarm:
        return frozenset(A.ACTION_TYPES)
    kinds = set(CORE_KINDS | OBSERVATION_KINDS | KRAFT_CORE_KINDS | LEADERSHIP_CORE_KINDS | TOPIC_CORE_KINDS
                | REASSIGNMENT_CORE_KINDS | EXPAND_WINDOW_CORE_KINDS | ORPHAN_CORE_KINDS | JBOD_CORE_KINDS)
    if rng.random() < P_TIME:
        kinds |= TIME_KINDS | KRAFT_TIME_KINDS | LEADERSHIP_TIME_KINDS | DELAYED_FETCH_TIME_KINDS
    kinds |= {k for k in OPTIONAL_KINDS if rng.random() < P_OPTIONAL}
    kinds |= {k for k in KRAFT_OPTIONAL_KINDS if k in model_kinds and rng.random() < P_OPTIONAL}
    kinds |= {k for k in LEADERSHIP_OPTIONAL_KINDS if k in model_kinds and rng.random() < P_OPTIONAL}
    kinds |= {k for k in LOG_START_KINDS if k in model_kinds and rng.random() < P_OPTIONAL}
    kinds |= {k for k in TOPIC_OPTIONAL_KINDS if k in model_kinds and rng.random() < P_OPTIONAL}
    kinds |= {k for k in DELAYED_FETCH_OPTIONAL_KINDS if k in model_kinds and rng.random() < P_OPTIONAL}
    kinds |= {k for k in REASSIGNMENT_OPTIONAL_KINDS if k in model_kinds and rng.random() < P_OPTIONAL}
    kinds |= {k for k in ALTER_ISR_FAULT_KINDS if k in model_kinds and rng.random() < P_OPTIONAL}
    kinds |= {k for k in REQUEST_FAULT_KINDS if k in model_kinds and rng.random() < P_OPTIONAL}
    kinds |= {k for k in CONFIG_OPTIONAL_KINDS if k in model_kinds and rng.random() < P_OPTIONAL}
    kinds |= {k for k in JBOD_FAULT_KINDS if k in model_kinds and rng.random() < P_OPTIONAL}
    return frozenset(kinds)


class Policy:
    """One swarm draw: the kinds a run may use, its eager kinds, its broker weights, whether it aims its faults at
    role holders, and the choice rule."""

    __slots__ = ("rng", "kinds", "eager", "weights", "targeted", "composite")

    def __init__(self, cfg: ModelConfig, rng: random.Random, swarm: bool = True):
        self.rng = rng
        model_kinds = action_kinds(cfg)
        self.kinds = swarm_kinds(rng, swarm, model_kinds)
        self.weights = [rng.choice(BROKER_WEIGHTS) for _ in range(cfg.n_brokers)] if swarm else None
        candidates = EAGER_CANDIDATES + tuple(k for k in EAGER_ALTER_ISR + EAGER_EPOCH_ROUND + EAGER_KRAFT
                                              + EAGER_LEADERSHIP + EAGER_TOPICS + EAGER_DELAYED_FETCH
                                              + EAGER_REASSIGNMENT if k in model_kinds)
        self.eager = frozenset(k for k in candidates if rng.random() < P_EAGER) if swarm else frozenset()
        self.targeted = swarm and rng.random() < P_TARGETED
        self.composite = swarm and rng.random() < P_COMPOSITE

    def choose(self, groups: list, s, last=None):
        """The continuation of ``last``'s exchange in a composite run (the first enabled one), else an eager action if
        one is enabled (with probability EAGERNESS), else a kind, then an action of it.

        ``groups`` are the actions enabled in ``s`` grouped by kind (``model.step.enabled_groups``): a
        targeted run weighs a fault on a role holder of ``s`` (``role_holders``) TARGET_WEIGHT times as
        much as one on another broker.
        """
        rng = self.rng
        if self.composite and last is not None and type(last) in CONTINUATIONS:
            for g in groups:
                for a in g:
                    if continues(last, a):
                        return a
        eager = self.eager
        urgent = [a for g in groups if type(g[0]) in eager for a in g] if eager else None
        if urgent and rng.random() < EAGERNESS:
            group = urgent
        else:
            group = groups[rng.randrange(len(groups))]
        w = self.weights
        if w is not None and len(group) > 1:
            if self.targeted and type(group[0]) in TARGETED_KINDS:
                roles = role_holders(s)
                weights = [w[x.broker] * TARGET_WEIGHT if x.broker in roles else w[x.broker] for x in group]
            else:
                weights = [w[x.broker] if hasattr(x, "broker") else 1.0 for x in group]
            # random.choices(group, weights) written out (same draws, same result) without its checks
            cum = list(accumulate(weights))
            return group[bisect(cum, rng.random() * (cum[-1] + 0.0), 0, len(group) - 1)]
        return group[rng.randrange(len(group))]


def role_holders(s) -> frozenset:
    """The brokers a targeted fault aims at: the controller (ZooKeeper's /controller) and every broker that
    believes it leads a partition (zombie leaders included)."""
    out = {s.zk.controller} if s.zk.controller >= 0 else set()
    for br in s.brokers:
        b = br.broker_id
        for pt in br.partitions:
            if type(pt) is Partition and pt.leader == b:
                out.add(b)
                break
    return frozenset(out)


def walk(cfg: ModelConfig, seed: int, max_steps: int, invariants=CATALOGUE, swarm: bool = True,
         keep_going: bool = False, should_stop=None, liveness=()) -> WalkResult:
    """One seeded run: at most max_steps actions, stopping at the first violation or when nothing is enabled.

    With ``keep_going`` the run goes on after a violation, no longer checking the invariant that
    failed, so that a shallow bug does not hide a deeper one; ``violations`` lists the first
    violation of each invariant (the failing prefix of violation v is ``actions[:v.step]``).
    ``should_stop()`` (a wall-clock ``budget.Deadline``) is asked every ``budget.CHECK_EVERY`` steps;
    when it answers True the walk ends there with ``stopped`` set, its steps so far those of any
    longer walk of the same seed.  ``liveness`` names liveness properties checked once the walk ends (not cut by
    ``should_stop``, no violation left unchecked): ``settle.settle_after_run`` settles the cluster, and a violation's
    actions are the walk's followed by the settling steps (``steps`` counts the walk's own).
    """
    policy = Policy(cfg, random.Random(seed), swarm)
    s = initial_state(cfg)
    trace = []
    a = None
    counts: dict[str, int] = {}
    violation = None
    found: list = []
    stopped = False
    vs = check_state(cfg, s, 0, invariants)
    if vs:
        return WalkResult(seed, 0, trace, vs[0], policy.kinds, counts, violations=list(vs))
    for i in range(1, max_steps + 1):
        if should_stop is not None and not i & CHECK_MASK and should_stop():
            stopped = True
            break
        groups = enabled_groups(cfg, s, policy.kinds)
        if not groups:
            break
        a = policy.choose(groups, s, a)
        s2 = step(cfg, s, a)
        trace.append(a)
        name = type(a).__name__
        counts[name] = counts.get(name, 0) + 1
        vs = check_transition(cfg, s, a, s2, i, invariants, incremental=True)
        s = s2
        if vs:
            if violation is None:
                violation = vs[0]
            found.extend(vs)
            if not keep_going:
                break
            invariants = _without(invariants, vs)
            if not invariants:
                break
    n = len(trace)
    if liveness and not stopped and (keep_going or violation is None):
        found.extend(settle_after_run(cfg, s, trace, liveness))
        violation = violation or (found[0] if found else None)
    return WalkResult(seed, n, trace, violation, policy.kinds, counts, witnesses(cfg, s),
                      s.ghost.errors_seen, found, stopped)


def _without(invariants, violations) -> tuple:
    """The invariants minus those that just failed (keep_going runs stop checking a failed invariant)."""
    failed = {v.invariant for v in violations}
    return tuple(inv for inv in invariants if inv.name not in failed)


# --------------------------------------------------------------------------- guided search
def novelty_key(s) -> tuple:
    """A coarse abstraction of a state for novelty search: ``(cell, detail)``, read from the state alone.

    ``cell`` is durability progress, fault history and how close the invariants are to failing, in
    generic protocol terms: how many replicas lack the first acknowledged record and how many of
    those are in ZooKeeper's ISR, whether anything was acknowledged, the crash and session-expiry
    counters, whether a follower ever truncated a record and a leader ever shrank or expanded its ISR,
    how many live followers fetch under a leader epoch older than ZooKeeper's (0, 1, 2+), how far a
    follower's log diverges below its fetch offset (``_divergence``: 0, 1, 2; log_matching's
    precondition), and whether a leader's ISR member below its HW is truncating (``_truncating_below_hw``;
    hw_within_isr's).  ``detail`` is the configuration the cluster is in: the highest leader epoch,
    which live brokers believe they lead which partition, how many controller instances exist.
    Coarse on purpose (a few hundred cells, a few thousand keys), so that the corpus keeps the states
    that opened a new situation, not every offset.  No field depends on the configuration's flags:
    the search is told nothing about which rules the model runs (benchmarks/RESULTS.md).
    """
    g = s.ghost
    brokers = s.brokers
    lacking = lacking_in_isr = 0
    if g.acked:
        rid, off, _e, _b, p = g.acked[0]
        zk_state = s.controller_partition_states()[p]
        isr = zk_state.isr if zk_state is not None else ()
        for br in brokers:
            log = br.logs[p]
            if log is not None:
                entry = log.entry_at(off)
                if entry is None or entry[0] != rid:
                    lacking += 1
                    if br.broker_id in isr:
                        lacking_in_isr += 1
    # roles as bits, broker by broker: alive, then "believes it leads partition p" for each p; how many
    # live followers fetch under a leader epoch older than ZooKeeper's (a view the controller has not
    # refreshed: a lost session, a request not yet delivered); and the highest divergence level
    # of a live follower's log below its fetch offset
    roles = stale = diverged = 0
    states = s.controller_partition_states()
    for br in brokers:
        b = br.broker_id
        roles = roles << 1 | br.alive
        for pt in br.partitions:
            roles = roles << 1 | (type(pt) is Partition and pt.leader == b)
        if br.alive:
            for p, f in enumerate(br.fetchers):
                if f is None:
                    continue
                zk_state = states[p]
                if zk_state is not None and f.leader_epoch < zk_state.leader_epoch:
                    stale += 1
                if diverged < 2:
                    d = _divergence(brokers, br.logs[p], p, f, zk_state)
                    if d > diverged:
                        diverged = d
    leaders = g.leaders
    max_epoch = max([e for _p, e, _b in leaders]) if leaders else -1
    cell = (lacking, lacking_in_isr, min(len(g.acked), 2), g.crashes, g.session_expirations,
            g.truncations > 0, g.isr_shrinks > 0, g.isr_expands > 0, min(stale, 2), diverged,
            _truncating_below_hw(brokers), _hw_held_back(brokers))
    return cell, (max_epoch, roles, len(s.controllers))


def _hw_held_back(brokers) -> bool:
    """True if a live leader's HW is below the lowest LEO, as it records them, over the smallest ISR it may have
    next (its ISR less the members a pending shrink removes; its ISR when no change is pending).

    A relation between HW, LEO and ISR that holds only for a moment when HW computations follow
    every ISR and LEO change: the HW could rise and has not, the state before a HW is left behind
    (hw_advanced_on_isr_shrink) or a consumer waits for records the ISR holds.
    """
    for br in brokers:
        if not br.alive:
            continue
        b = br.broker_id
        for p, pt in enumerate(br.partitions):
            if type(pt) is not Partition or pt.leader != b:
                continue
            log = br.logs[p]
            if log is None:
                continue
            hw = log.high_watermark
            low = log.log_end_offset
            if low <= hw:
                continue
            pend = pt.pending_isr
            leaving = pend.replicas if pend is not None and not pend.expand else ()
            for r in pt.remote_replicas:
                if r.broker_id in pt.isr and r.broker_id not in leaving and r.log_end_offset < low:
                    low = r.log_end_offset
            if low > hw:
                return True
    return False


def _truncating_below_hw(brokers) -> bool:
    """True if a live member of a leader's ISR has a HW below that leader's and is truncating.

    Every live broker that believes it leads a partition with a HW above 0 counts, zombies included,
    as in ``hw_within_isr``.  A truncation is the only way a log shrinks, so this is the state one step
    before an ISR member's LEO can fall below its leader's HW: how close that invariant is to failing.
    """
    for br in brokers:
        if not br.alive:
            continue
        b = br.broker_id
        for p, pt in enumerate(br.partitions):
            if type(pt) is not Partition or pt.leader != b:
                continue
            hw = br.logs[p].high_watermark
            if hw <= 0:
                continue
            for m in pt.isr:
                if m == b:
                    continue
                member = brokers[m]
                if not member.alive:
                    continue
                log = member.logs[p]
                if log is None or log.high_watermark >= hw:
                    continue
                f = member.fetchers[p]
                if f is not None and f.state == TRUNCATING:
                    return True
    return False


def _divergence(brokers, log, p: int, f, zk_state) -> int:
    """How far a follower's log disagrees below its fetch offset: 2 with its fetch leader's, 1 with ZK's leader's.

    The precondition of every log divergence (KIP-101, KIP-279, KAFKA-6880, KAFKA-7164): a follower
    holds, below the offset it fetches from, records that the leader it fetches from does not have,
    so its next fetch appends the leader's records on top of them.  Level 1 is the step before: the
    partition's current leader lacks them while the follower's own fetch leader may still have them.
    """
    k = f.fetch_offset
    if k <= 0:
        return 0
    mine = log.read(0, k)
    other = brokers[f.leader].logs[p]
    if other is not None and other.read(0, k) != mine:
        return 2
    if zk_state is not None and zk_state.leader >= 0:
        other = brokers[zk_state.leader].logs[p]
        if other is not None and other.read(0, k) != mine:
            return 1
    return 0


def trace_of(node) -> list:
    """The actions of a parent-pointer trace, first to last.

    The guided search shares trace prefixes between corpus entries: a trace is ``None`` (empty) or
    ``(parent, action)``, so extending it by one step costs O(1) instead of copying a tuple, and a
    list is only materialised for a violation.
    """
    out = []
    while node is not None:
        node, a = node
        out.append(a)
    out.reverse()
    return out


class _Sampler:
    """Weighted choice among a growing list of items in O(log n), weights changeable (a Fenwick tree).

    ``pick(u)`` with ``u`` uniform in [0, 1) returns index i with probability weight[i] / total;
    deterministic (the same sequence of add/set/pick calls gives the same answers in any process).
    """

    __slots__ = ("tree", "weights")

    def __init__(self) -> None:
        self.tree = [0.0]      # 1-based Fenwick tree over self.weights
        self.weights = []

    def __len__(self) -> int:
        return len(self.weights)

    def add(self, w: float) -> int:
        """Append an item of weight w; returns its index."""
        i = len(self.weights) + 1
        self.weights.append(0.0)
        # node i covers (i - lowbit(i), i]: sum the children already present
        total, j, low = 0.0, i - 1, i - (i & -i)
        while j > low:
            total += self.tree[j]
            j -= j & -j
        self.tree.append(total)
        self.set(i - 1, w)
        return i - 1

    def set(self, index: int, w: float) -> None:
        delta = w - self.weights[index]
        self.weights[index] = w
        i, n, tree = index + 1, len(self.tree), self.tree
        while i < n:
            tree[i] += delta
            i += i & -i

    def total(self) -> float:
        i, t, tree = len(self.weights), 0.0, self.tree
        while i > 0:
            t += tree[i]
            i -= i & -i
        return t

    def pick(self, u: float) -> int:
        target = u * self.total()
        pos, tree, n = 0, self.tree, len(self.weights)
        step = 1 << n.bit_length()
        while step:
            nxt = pos + step
            if nxt <= n and tree[nxt] <= target:
                pos = nxt
                target -= tree[nxt]
            step >>= 1
        return min(pos, n - 1)


#: A cell's weight is (1 + times it was chosen) ** -CELL_DECAY * (times one of its states was reached) **
#: -SEEN_DECAY: every cell keeps a share, new cells more, and cells the walks seldom reach more again.
CELL_DECAY = 0.5
SEEN_DECAY = 0.75

#: With this probability (once such a cell exists) an extension starts from a precondition cell
#: (``precondition_weight``).
P_PRECONDITION = 0.5
#: A precondition cell's weight among precondition cells, before the decays: divergence level 1 and 2, an ISR
#: member truncating below its leader's HW, and a HW held back below what the ISR allows (1, not 10: about 4% of
#: states on kafka-2.4, weighed 10 it drew the share away from the divergence cells; benchmarks/RESULTS.md).
PRECONDITION_WEIGHTS = (1.0, 10.0, 10.0, 1.0)

#: Positions in the novelty cell (``novelty_key``) of the precondition fields.
_DIVERGENCE, _TRUNCATING, _HELD_BACK = 9, 10, 11


def precondition_weight(cell: tuple) -> float:
    """How close a novelty cell (``novelty_key(s)[0]``) is to a violation of the catalogue; 0.0 for not close.

    Two generic measures: the divergence level (``_divergence``: 1, ZooKeeper's leader lacks records
    a follower holds below its fetch offset, the step before 2, its own fetch leader lacks them:
    log_matching's precondition) and an ISR member truncating below its leader's HW (hw_within_isr's,
    and through it the durability invariants').  Go-Explore's selection likewise weighs cells by
    domain knowledge on top of the visit counts.
    """
    level = cell[_DIVERGENCE]
    w = PRECONDITION_WEIGHTS[level - 1] if level else 0.0
    if cell[_TRUNCATING]:
        w = max(w, PRECONDITION_WEIGHTS[2])
    if cell[_HELD_BACK]:
        w = max(w, PRECONDITION_WEIGHTS[3])
    return w


@dataclass
class SearchResult:
    seed: int
    steps: int
    extensions: int
    corpus_size: int
    actions: list
    violation: Violation | None
    witnesses: frozenset = frozenset()
    kind_counts: dict = field(default_factory=dict)
    #: bit set over model.errors.ERROR_BIT, over every state the search reached
    errors_seen: int = 0
    #: (violation, its failing trace) for the first violation of each invariant (several only with keep_going)
    violations: list = field(default_factory=list)
    #: distinct novelty cells (the first half of ``novelty_key``) the corpus covers
    cells: int = 0
    #: True when ``should_stop`` ended the search before its extensions were done
    stopped: bool = False
    #: (violation, trace) for the first violation of each invariant that ``go_past`` let the search go past
    passed: list = field(default_factory=list)


#: The guided search settles the state where every SETTLE_EVERY-th extension ends (``search``'s ``liveness``).
SETTLE_EVERY = 4


def search(cfg: ModelConfig, seed: int, extensions: int, extension_steps: int = 40, invariants=CATALOGUE,
           p_restart: float = 0.1, should_stop=None, keep_going: bool = False, liveness=(),
           go_past=None) -> SearchResult:
    """Novelty-guided walks over a corpus of saved states, scheduled by cell; deterministic per seed.

    Like a coverage-guided fuzzer's corpus: a state whose ``novelty_key`` was never seen is kept
    (with its trace); each extension starts from the initial state (with probability p_restart) or
    from a kept state, and walks up to extension_steps actions under a fresh swarm policy.  Because
    the model is pure, kept states are reused directly, without replaying their traces.

    Scheduling is two-level, as in Go-Explore's cell selection: first a cell (the first half of the
    key) with weight (1 + times chosen) ** -CELL_DECAY * (steps that reached it) ** -SEEN_DECAY, then
    uniformly one of the cell's kept states, so that the long tail of transient configurations only
    splits its own cell's share and situations the walks seldom reach get more extensions.  Half the
    extensions (``P_PRECONDITION``), once such a cell exists, draw their cell among the cells close to
    a violation (``precondition_weight``), with the same decays.  The measurements behind these
    choices, and what was tried and dropped, are in benchmarks/RESULTS.md.

    ``should_stop()`` (a wall-clock ``budget.Deadline``) is asked between extensions and every
    ``budget.CHECK_EVERY`` steps inside one (an extension may be long); stopping early never changes
    what the search did before (``stopped`` is then set), so a violation found at extension k is found
    again by any run of the same seed with >= k extensions.  With ``keep_going`` the search goes on after a
    violation without checking that invariant again (``violations`` lists each invariant's first
    failure with its trace; ``actions`` is the first's).

    ``liveness`` names liveness properties checked by settling the cluster (``properties.settle``) where every
    ``SETTLE_EVERY``-th extension ends; a violation's trace is the extension's followed by the settling steps.

    ``go_past(violation, trace) -> bool``, when given, may let the search go past a safety violation: the caller's
    judgement (e.g. a known bug, by attribution), blind to this engine.  The extension then ends there, its
    violating state is not kept, the invariant stays checked, and the first such violation of each invariant is
    listed in ``passed``, so that a bug met again and again cannot hide another that breaks the same invariant.

    Traces are parent pointers (``trace_of``), materialised only for a violation.  Every random
    choice comes from random.Random(seed) in a fixed order, and every dict is keyed by tuples of ints
    and bools and only iterated in insertion order, so a seed gives the same search in any process.
    """
    rng = random.Random(seed)
    s0 = initial_state(cfg)
    vs = check_state(cfg, s0, 0, invariants)
    if vs:
        return SearchResult(seed, 0, 0, 1, [], vs[0], cells=1)
    key0 = novelty_key(s0)
    # the corpus, one entry per key: state, parent-pointer trace, trace length
    states, traces, lengths = [s0], [None], [0]
    seen = {key0}
    cell_index = {key0[0]: 0}     # cell -> its index in cell_members and in the sampler
    cell_members = [[0]]          # kept states per cell, in the order found
    cell_chosen = [0]
    cell_seen = [1]
    sampler = _Sampler()
    sampler.add(1.0)
    # the precondition cells, in a second sampler: cell index -> (its index there, its precondition weight)
    focus = _Sampler()
    focus_of: dict = {}
    focus_cells: list = []
    steps = 0
    seen_witnesses: set = set()
    by_type: dict = {}
    errors = 0
    found: list = []

    def result(ext_done: int, stopped: bool = False) -> SearchResult:
        first, first_trace = found[0] if found else (None, [])
        counts = {k.__name__: n for k, n in by_type.items()}
        return SearchResult(seed, steps, ext_done, len(states), list(first_trace), first, frozenset(seen_witnesses),
                            counts, errors, list(found), len(cell_members), stopped, list(passed.values()))

    passed: dict = {}

    for ext in range(1, extensions + 1):
        if should_stop is not None and should_stop():
            return result(ext - 1, True)
        if rng.random() < p_restart:
            i = 0
        else:
            if focus_cells and rng.random() < P_PRECONDITION:
                c = focus_cells[focus.pick(rng.random())]
            else:
                c = sampler.pick(rng.random())
            n = cell_chosen[c] = cell_chosen[c] + 1
            w = (1.0 + n) ** -CELL_DECAY * cell_seen[c] ** -SEEN_DECAY
            sampler.set(c, w)
            f = focus_of.get(c)
            if f is not None:
                focus.set(f[0], w * f[1])
            members = cell_members[c]
            i = members[rng.randrange(len(members))] if len(members) > 1 else members[0]
        s, node, length = states[i], traces[i], lengths[i]
        policy = Policy(cfg, random.Random(rng.getrandbits(63)))
        kinds, choose = policy.kinds, policy.choose
        a = None
        for _ in range(extension_steps):
            if should_stop is not None and not steps & CHECK_MASK and steps and should_stop():
                return result(ext, True)  # inside extension ext: its steps so far are counted
            groups = enabled_groups(cfg, s, kinds)
            if not groups:
                break
            a = choose(groups, s, a)
            s2 = step(cfg, s, a)
            node = (node, a)
            length += 1
            steps += 1
            t = type(a)
            by_type[t] = by_type.get(t, 0) + 1
            vs = check_transition(cfg, s, a, s2, length, invariants, incremental=True)
            s = s2
            errors |= s.ghost.errors_seen
            if vs and go_past is not None:
                tr = trace_of(node)
                if all(go_past(v, tr) for v in vs):
                    for v in vs:
                        passed.setdefault(v.invariant, (v, tr))
                    break                            # this extension ends; the invariant stays checked
            if vs:
                found.extend((v, trace_of(node)) for v in vs)
                invariants = _without(invariants, vs)
                if not keep_going or not invariants:
                    return result(ext)
            key = novelty_key(s)
            c = cell_index.get(key[0])
            if c is not None:
                cell_seen[c] += 1
            if key not in seen:
                seen.add(key)
                j = len(states)
                states.append(s)
                traces.append(node)
                lengths.append(length)
                if c is None:
                    c = cell_index[key[0]] = sampler.add(1.0)
                    cell_members.append([j])
                    cell_chosen.append(0)
                    cell_seen.append(1)
                    pw = precondition_weight(key[0])
                    if pw:
                        focus_of[c] = (focus.add(pw), pw)
                        focus_cells.append(c)
                else:
                    cell_members[c].append(j)
                seen_witnesses |= witnesses(cfg, s)
        if liveness and not ext % SETTLE_EVERY:
            settled = settle(cfg, s, length, liveness)
            vs = settled.violations
            if vs:
                found.extend((v, trace_of(node) + settled.actions) for v in vs)
                liveness = tuple(n for n in liveness if n not in {v.invariant for v in vs})
                if not keep_going or not (invariants or liveness):
                    return result(ext)
    return result(extensions)
