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
from ..model.config import ModelConfig
from ..model.state import TRUNCATING, Partition
from ..model.step import enabled_groups, initial_state, step
from .budget import CHECK_MASK
from .invariants import CATALOGUE, Violation, check_state, check_transition, witnesses
from .settle import settle, settle_after_run

#: Kinds every run keeps: without them nothing replicates and no leader is ever elected.
CORE_KINDS = frozenset({
    A.ElectController, A.ControllerProcessBrokerChange, A.DeliverControlRequest, A.FetchRequest,
    A.FetchResponse, A.OffsetsForLeaderEpoch, A.Produce, A.AlterIsrRequest, A.AlterIsrResponse,
})
#: Time and the scheduled tasks go together: a task that is left out would stop the clock at its
#: first due time, so a run either has all of them or has time frozen.
TIME_KINDS = frozenset({A.Tick, A.IsrExpiration, A.IsrChangePropagation, A.HighWatermarkCheckpoint,
                        A.DelayedProduceExpire})
#: The other kinds a swarm run may leave out (each kept with probability P_OPTIONAL): faults,
#: consumers, log flushes.  Leaving out BrokerRestart keeps crashed brokers down.
#: ListOffsets (offered only with ``cfg.list_offsets``) is an observation: every run keeps it, with no random
#: draw, so that the draws of a run are those it made before ListOffsets existed.
OBSERVATION_KINDS = frozenset({A.ListOffsets})
OPTIONAL_KINDS = tuple(k for k in A.ACTION_TYPES
                       if k not in CORE_KINDS and k not in TIME_KINDS and k not in OBSERVATION_KINDS)
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
EAGER_ALTER_ISR = (A.AlterIsrRequest, A.AlterIsrResponse)
P_EAGER = 0.7
EAGERNESS = 0.9
#: Per-run weight of each broker's actions: a slow broker (weight 0.1) fetches, restarts and answers
#: rarely, which opens the race windows (a follower that has not refetched yet) many bugs need.
BROKER_WEIGHTS = (0.1, 1.0, 1.0)
#: Fault kinds a run may aim at role holders (with probability P_TARGETED): a broker that believes it
#: leads a partition, or the controller, weighs TARGET_WEIGHT times as much as another when one of
#: these kinds is chosen.  Median steps of the guided search to the first violation, P_TARGETED 0 / 0.5
#: (campaign seeds 0-19 / 20-39 / 40-79): no-kafka-7415 195k / 172k and 537k / 101k (p < 0.001);
#: no-kafka-7164 86k / 48k, 69k / 45k and 97k / 62k (p = 0.02); no-kip-320 122k / 69k, 132k / 63k and
#: 79k / 73k (each p > 0.15); over seeds 0-19 kafka-0.10.2 11.5k / 12.3k, kafka-0.11 7.6k / 7.2k,
#: crash-loses-unflushed 6.9k / 4.6k, no-kafka-7128 22.6k / 14.1k.  Aiming every run (P_TARGETED 1,
#: weight 4) slowed the bugs that need a follower to fail (kafka-0.11 28.5k, no-kafka-7128 33.7k), and
#: so did a draw among leader, controller or no target (kafka-0.11 17.1k); adding "the followers" as a
#: fourth target gained nothing (no-kafka-7164 84k).  TARGET_WEIGHT 30 (seeds 40-79, against 10): no-kip-320
#: 73k -> 62k and no-kafka-7164 62k -> 49k, but kafka-0.11 7.8k -> 16.9k (7.9k untargeted), so 10 stays.
TARGETED_KINDS = frozenset({A.BrokerCrash, A.ZkSessionExpire})
P_TARGETED = 0.5
TARGET_WEIGHT = 10.0


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


def swarm_kinds(rng: random.Random, swarm: bool) -> frozenset:
    """The action kinds one run may use: every kind, or the core plus a random subset of the others."""
    if not swarm:
        return frozenset(A.ACTION_TYPES)
    kinds = set(CORE_KINDS | OBSERVATION_KINDS)
    if rng.random() < P_TIME:
        kinds |= TIME_KINDS
    kinds |= {k for k in OPTIONAL_KINDS if rng.random() < P_OPTIONAL}
    return frozenset(kinds)


class Policy:
    """One swarm draw: the kinds a run may use, its eager kinds, its broker weights, whether it aims its faults at
    role holders, and the choice rule."""

    __slots__ = ("rng", "kinds", "eager", "weights", "targeted")

    def __init__(self, cfg: ModelConfig, rng: random.Random, swarm: bool = True):
        self.rng = rng
        self.kinds = swarm_kinds(rng, swarm)
        self.weights = [rng.choice(BROKER_WEIGHTS) for _ in range(cfg.n_brokers)] if swarm else None
        candidates = EAGER_CANDIDATES + EAGER_ALTER_ISR if cfg.kip_497 else EAGER_CANDIDATES
        self.eager = frozenset(k for k in candidates if rng.random() < P_EAGER) if swarm else frozenset()
        self.targeted = swarm and rng.random() < P_TARGETED

    def choose(self, groups: list, s):
        """An eager action if one is enabled (with probability EAGERNESS), else a kind, then an action of it.

        ``groups`` are the actions enabled in ``s`` grouped by kind (``model.step.enabled_groups``): a
        targeted run weighs a fault on a role holder of ``s`` (``role_holders``) TARGET_WEIGHT times as
        much as one on another broker.
        """
        rng = self.rng
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
        a = policy.choose(groups, s)
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
def novelty_key(cfg: ModelConfig, s) -> tuple:
    """A coarse abstraction of a state for novelty search: ``(cell, detail)``.

    ``cell`` is durability progress and fault history: how many replicas lack the first acknowledged
    record and how many of those are in the ZooKeeper ISR the controller elects from, whether anything
    was acknowledged, the crash and session-expiry counters, and whether a follower ever truncated a
    record, a leader ever shrank or expanded its ISR, how many live followers fetch under a stale
    leader epoch (0, 1, 2+), how far a follower's log diverges below its fetch offset
    (``_divergence``: 0, 1, 2), and, from one pass over leaders' ISR members with a lower HW
    (``_isr_members_below_hw``), whether a zombie leader's ISR holds such a member with a later
    epoch than ZooKeeper's leader has cached, whether such a member is truncating, and whether such
    a member is ZooKeeper's leader, leading its epoch (0; 1 before its first append there, with
    records left to produce; 2 after it); last, whether ZooKeeper's leader has a HW its live
    followers have not heard of yet (``_hw_window``: 0; 1; 2 with its session expired).
    ``detail`` is the configuration the cluster is in: the highest leader epoch, which live brokers
    believe they lead which partition, how many controller instances exist.  Coarse on purpose (a
    few hundred cells, a few thousand keys), so that the corpus keeps the states that opened a new
    situation (first acknowledged write, a broker lacking it, such a broker in the ISR, a first
    crash, a leader change...) and not every offset.  Counting the
    ISR members that lack the first acknowledged record cut the median steps to a lost write on
    kafka-0.10.2 from 127k to 110k (8 seeds, under the old one-level schedule).  Counting the live
    followers whose fetcher runs under an older leader epoch than ZooKeeper's found no-kip-320's log
    divergence (KAFKA-6880) in 3 of 4 seeds within 1.5M steps (68k, 129k, 313k) where none of the
    first two seeds had found it without; the five other breaking presets' medians over 10 seeds moved
    within their noise (kafka-0.10.2 16.5k -> 15.9k steps, kafka-0.11 16.4k -> 9.0k,
    crash-loses-unflushed 9.7k -> 7.8k, no-kafka-7128 9.9k -> 13.1k).  The divergence level cut the
    median steps to KAFKA-6880's divergence 3-9x (campaign seeds 0-5: no-kip-320 539k -> 172k,
    no-kafka-7164 1.12M -> 123k; over seeds 0-11 161k and 123k) and kafka-0.10.2's lost write from
    28.5k to 19.8k (seeds 0-39); over seeds 0-19 kafka-0.11 and kafka-2.0 went 7.8k -> 9.7k and
    no-kafka-7128 11.8k -> 13.1k (within noise), crash-loses-unflushed 7.6k -> 12.1k (mean 8.5k ->
    11.4k: the extra cells thin out the energy a lossy crash needs).  Counting only followers in the
    fetching state (not truncating) gave the same figures within noise.  Cost: none measurable
    (guided steps/s on kafka-2.4 18.2k before, 18.4k after).  The truncating-below-HW field cut
    KAFKA-7415's truncation below the HW from 753k to 195k median steps (campaign seeds 0-19; mean
    825k -> 409k; Mann-Whitney p = 0.02).  Along a search the parts are common (zombie leaders with
    a HW in about a fifth of the states, a follower about to get an UNDEFINED answer in 1-2%, a
    truncating ISR member with a lower HW in about 0.4%) but all three at once only a few times, one
    step from the violation.  Over the same seeds no-kip-320 went 72k -> 122k (mean 94k -> 125k,
    p = 0.23, within noise), no-kafka-7164 85k -> 86k, and the five shallow presets moved within
    noise (kafka-0.10.2 unchanged, kafka-0.11 and kafka-2.0 5.7k -> 7.6k, crash-loses-unflushed
    5.7k -> 6.9k, no-kafka-7128 27.9k -> 22.6k).  The member-ahead field, with the search's
    precondition share, cut no-kafka-7415 from 149k to 56k median steps (seeds 0-19, p = 0.01; mean
    271k -> 87k) and from 217k to 59k over seeds 20-39 (p = 0.04); the other presets moved within
    noise (seeds 0-19: no-kip-320 32k -> 38k, no-kafka-7164 22.3k -> 22.7k, no-kafka-7128 19.9k ->
    23.0k, kafka-0.11 11.1k -> 14.0k, kafka-0.10.2 and crash-loses-unflushed unchanged; p > 0.5 for
    each).  Phase marks along 8 searches had shown the truncating member (the field after it)
    reached within 135-26k steps and hundreds of times, and the violation waiting for a member whose
    epoch the new leader lacks, a few times just before it.  A level before it (such a member holding records of
    a later epoch than the zombie's, before ZooKeeper's leader changes again), weighing 1 with the
    member-ahead field 1 or 10: 75k and 61k against 56k (seeds 0-19), so the field stays one bit.
    Phase marks along the held-out seeds 10-19 put the remaining steps before the member, as
    ZooKeeper's leader, appends in its own epoch (reached at 9k-249k steps, 1-184 times), while the
    member being ZooKeeper's leader comes within 0.5k-11k steps and thousands of times; that as a
    level before the field (weight 1, the field 1 or 10) gave 80k and 54k, no gain either; nor did
    aiming a targeted run's produce requests at the brokers that believe they lead (104k), or a cell
    field for the records the preset has left to produce (spent or not: 119k; 0, 1, 2+: 86k).
    Finer phase marks (seeds 10-15) placed the wait earlier still: ZooKeeper's leader sits in a
    zombie's ISR with a lower HW within 0.5k-11k steps, but in nearly all such states it is the only
    live member of ZooKeeper's ISR, and a leader alone in its ISR raises its HW to its LEO as it takes
    over (``Partition.makeLeader``), up to the zombie's.  The states that lead on have another live
    ISR member, whose unknown LEO keeps the new leader's HW down; they first come at 39k-111k steps,
    and the leader's own append follows within a few steps.  Cell fields for them, weighed 1 or 10
    in the precondition share: "ZooKeeper's leader in a zombie's ISR below its HW, with another live
    ISR member" (and leading), 55k and 72k; "ZooKeeper's leader leading its epoch in a zombie's ISR
    below its HW, no append yet, records left" (and appended), 48k (weights 1 and 10, p = 0.49), 44k
    (10 and 10, p = 0.22) and 54k (1 and 1), against 56k (seeds 0-19).  The second is kept as a
    field, weight 10 before and after the append, and only where KAFKA-7415's fix is off: over
    seeds 0-39 no-kafka-7415 went 56k -> 38k median steps (mean 139k -> 65k, p = 0.011; seeds 20-39
    alone 59k -> 32k, p = 0.018), while kafka-0.10.2, kafka-0.11 and kafka-2.0 (also without the
    fix) stayed within noise (12.6k -> 12.6k, 14.0k -> 13.9k, 14.0k -> 13.9k; p > 0.9, seeds 0-19).
    The last field, the HW window (``_hw_window``), came from marking one more phase along a
    no-kafka-7415 search (campaign seed 11, 57k steps, no violation): every state in which a zombie
    led with a HW above ZooKeeper's leader, that leader in its ISR, had ZooKeeper's ISR down to the
    leader alone.  The path needs the leader's session to expire inside the window, with both
    followers live in the ISR and before either has a fetch response carrying the new HW: the
    window was open in about 390 states of that search, its leader's session expired in it in none.
    Weighing the window 1 and its expiry 10 in the precondition share, where KAFKA-7415's fix is
    off (as the field before it), median steps to the first violation (mean; Mann-Whitney p):
    no-kafka-7415 37.7k -> 22.4k (64.8k -> 36.5k; p = 0.065) over seeds 0-39, then 45.9k -> 25.4k
    (73.4k -> 40.3k; p = 0.005) over seeds 40-79, measured after the choice; kafka-0.10.2
    12.6k -> 6.7k, kafka-0.11 and kafka-2.0 13.9k -> 6.2k (seeds 0-19, p 0.18-0.39; these presets
    lack KAFKA-7128's fix, and KIP-101's lost write starts at the window too).  Looked for
    everywhere, the window gave no-kafka-7128 23.0k -> 7.5k over seeds 0-19 (p = 0.09) but 26.1k ->
    23.4k over seeds 20-59 (p = 0.77), no clear gain; no-kafka-7164 went 22.7k -> 52.8k and
    no-kip-320's mean 41.5k -> 92.5k (seeds 0-19; crash-loses-unflushed unchanged): KAFKA-6880's
    divergence does not pass through the window, whose cells drew the precondition share away from
    the divergence cells.
    """
    g = s.ghost
    brokers = s.brokers
    lacking = lacking_in_isr = 0
    if g.acked:
        rid, off, _e, _b, p = g.acked[0]
        zk_state = s.zk.partition_states[p]
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
    states = s.zk.partition_states
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
            *_isr_members_below_hw(s, not cfg.kafka_7415, g.produced < cfg.max_records),
            _hw_window(s) if not cfg.kafka_7415 else 0)
    if cfg.kip_497:
        cell += (_alter_isr_race(s), _shrink_holds_hw(cfg, s))
    return cell, (max_epoch, roles, len(s.controllers))


def _shrink_holds_hw(cfg, s) -> int:
    """1 if a leader has an ISR shrink pending (KIP-497) whose leaving members hold its HW back: committed, the
    shrink would let the HW rise (KAFKA-13091's path, where the commit does not recompute it)."""
    lag, now = cfg.replica_lag_time_max_ms, s.now
    for br in s.brokers:
        if not br.alive:
            continue
        for p, part in enumerate(br.partitions):
            if type(part) is not Partition or part.leader != br.broker_id or part.pending_isr is None \
                    or part.pending_isr.expand:
                continue
            log = br.logs[p]
            new_hw = log.log_end_offset
            for r in part.remote_replicas:
                if r.log_end_offset < new_hw and (now - r.last_caught_up_time_ms <= lag or (
                        r.broker_id in part.isr and r.broker_id not in part.pending_isr.replicas)):
                    new_hw = r.log_end_offset
            if new_hw > log.high_watermark:
                return 1
    return 0


def _alter_isr_race(s) -> int:
    """KAFKA-12686's window, a cell field of KIP-497 presets only: 1 if a broker has an AlterIsr response in flight
    for a partition it has led since in a later leader epoch (a LeaderAndIsr came between the controller's
    answer and the leader's reading of it); 2 if in that window the partition is pending again, a new proposal
    the old response's handling will meet (``AlterIsrManager`` removes the partition's item whatever it is)."""
    best = 0
    for br in s.brokers:
        inflight = br.alter_isr_inflight
        if inflight is None or not br.alive:
            continue
        for item in inflight.items:
            part = br.partitions[item.request.partition]
            if type(part) is Partition and part.leader == br.broker_id \
                    and part.leader_epoch > item.request.leader_epoch:
                if part.pending_isr is not None:
                    return 2
                best = 1
    return best


def _hw_window(s) -> int:
    """2 if ZooKeeper's leader of a partition, with its ZooKeeper session expired, has a HW above every other
    live member of its ISR, at least two of them; 1 if the same holds with its session alive; else 0.

    The HW window: the leader has advanced its HW (``Partition.maybeIncrementLeaderHW``) and no
    follower has had a fetch response carrying it yet.  If the leader's session expires inside the
    window (2), the controller elects the next live ISR member, whose HW is below the deposed
    leader's while that leader, still alive, goes on leading as a zombie; and the new leader keeps
    its HW down as it takes over, since the other live member's LEO is unknown to it.  That is where
    KAFKA-7415's path starts (the next field, ``_isr_members_below_hw``'s new leader below the HW,
    is its following step), where KAFKA-7128's starts (the new leader's lagging HW lets a follower
    rejoin its ISR without the records of its epoch), and where KIP-101's lost write starts (a
    follower elected with a HW below the record it will truncate).  Looked for only where KAFKA-7415's
    fix is off (see ``novelty_key``).
    """
    brokers, sessions = s.brokers, s.zk.sessions
    best = 0
    for p, zk_state in enumerate(s.zk.partition_states):
        if zk_state is None or zk_state.leader < 0:
            continue
        b = zk_state.leader
        br = brokers[b]
        if not br.alive:
            continue
        pt = br.partitions[p]
        if type(pt) is not Partition or pt.leader != b or pt.leader_epoch != zk_state.leader_epoch:
            continue
        hw = br.logs[p].high_watermark
        if hw <= 0:
            continue
        live = 0
        for m in pt.isr:
            member = brokers[m]
            if m == b or not member.alive:
                continue
            log = member.logs[p]
            if log is None or log.high_watermark >= hw:
                break
            live += 1
        else:
            if live >= 2:
                if not sessions[b]:
                    return 2
                best = 1
    return best


def _isr_members_below_hw(s, new_leaders: bool, records_left: bool) -> tuple:
    """``(member ahead of leader, truncating below HW, new leader below HW)``: facts about a leader's ISR members
    below its HW.

    One pass over every live broker that believes it leads a partition with a HW above 0 (zombies
    included, as in ``hw_within_isr``) and the other live members of its ISR whose HW is lower:

    * member ahead of leader: the broker is a zombie (it leads an older epoch than ZooKeeper's: its
      session expired, or the request has not come) and the member, not ZooKeeper's leader itself,
      holds a later epoch than ZooKeeper's leader has cached.  The step before the next fact on
      KAFKA-7415's path: when that member follows ZooKeeper's leader, its OffsetsForLeaderEpoch asks
      for an epoch the leader does not know, and without KAFKA-7415 the answer is UNDEFINED and the
      member truncates to its own HW, below the zombie's.
    * truncating below HW: the member is truncating.  The state one step before an ISR member's LEO
      can fall below its leader's HW (``hw_within_isr``): a truncation is the only way a log shrinks,
      and one that falls back to the member's own HW (an UNDEFINED OffsetsForLeaderEpoch answer,
      KAFKA-7415) lands below the leader's.
    * new leader below HW: the broker is a zombie and the member is ZooKeeper's leader, leading its epoch
      (its LeaderAndIsr has come): 1 before its first append in that epoch while the preset has records
      left to produce, 2 once it has appended (its cache holds its epoch).  Two steps before the member
      ahead of leader on KAFKA-7415's path: the new leader, still below the zombie's HW, appends in its
      epoch, and loses the leadership to a broker that has not fetched that record.  Only looked for
      with ``new_leaders`` (KAFKA-7415's fix off): with the fix a new leader caches its epoch as it
      takes over, the path does not exist, and the field (weight 10 in the precondition share) drew
      extensions away from the other presets' preconditions (no-kafka-7164: 22.7k -> 45.6k median steps,
      seeds 0-19, p = 0.12).
    """
    brokers, states = s.brokers, s.zk.partition_states
    ahead = truncating = False
    new_leader = 0
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
            zk_state = states[p]
            zk_leader, zk_leader_log = -1, None
            if zk_state is not None and zk_state.leader >= 0 and zk_state.leader_epoch > pt.leader_epoch:
                zk_leader = zk_state.leader
                zk_leader_log = brokers[zk_leader].logs[p]
            for m in pt.isr:
                if m == b:
                    continue
                member = brokers[m]
                if not member.alive:
                    continue
                log = member.logs[p]
                if log is None or log.high_watermark >= hw:
                    continue
                if not truncating:
                    f = member.fetchers[p]
                    truncating = f is not None and f.state == TRUNCATING
                if m == zk_leader:
                    if new_leaders and new_leader < 2:
                        mp = member.partitions[p]
                        if type(mp) is Partition and mp.leader == m and mp.leader_epoch == zk_state.leader_epoch:
                            if log.latest_epoch == zk_state.leader_epoch:
                                new_leader = 2
                            elif records_left:
                                new_leader = 1
                elif not ahead and zk_leader_log is not None:
                    ahead = log.latest_epoch > zk_leader_log.latest_epoch
                if ahead and truncating and (new_leader == 2 or not new_leaders):
                    return True, True, 2
    return ahead, truncating, new_leader


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
#: A precondition cell's weight among precondition cells, before the decays: divergence level 1 and 2, a zombie's ISR
#: member ahead of ZooKeeper's leader, truncating below the HW, ZooKeeper's leader below a zombie's HW before and
#: after its first append, and the HW window open and its leader's session expired inside it.
PRECONDITION_WEIGHTS = (1.0, 10.0, 1.0, 10.0, 10.0, 10.0, 1.0, 10.0)

#: Positions in the novelty cell (``novelty_key``) of the precondition fields (_ALTER_ISR_RACE: KIP-497 presets).
_DIVERGENCE, _AHEAD, _TRUNCATING, _NEW_LEADER, _HW_WINDOW, _ALTER_ISR_RACE, _SHRINK_HOLDS_HW = 9, 10, 11, 12, 13, 14, 15
#: The AlterIsr race's weight among precondition cells, open (1) and with a new proposal pending in it (2);
#: a pending shrink holding the HW back.
ALTER_ISR_RACE_WEIGHTS = (1.0, 10.0)
SHRINK_HOLDS_HW_WEIGHT = 10.0


def precondition_weight(cell: tuple) -> float:
    """How much a novelty cell (``novelty_key(s)[0]``) shows a violation's precondition; 0.0 for none.

    The cell fields that mark the steps before a log divergence or a truncation below the HW: the
    divergence level (``_divergence``; 1 the step before 2), a zombie's ISR member ahead of
    ZooKeeper's leader and a truncating ISR member below its leader's HW, the step after, and
    before them ZooKeeper's leader below a zombie's HW before and after its first append
    (``_isr_members_below_hw``), and before that the HW window, open (1) and with its leader's
    session expired inside it (10; ``_hw_window``).  Weighing a member ahead 10 instead of 1 gave the
    same no-kafka-7415 median (54k against 56k steps, seeds 0-19).  Go-Explore's selection likewise
    weighs cells by domain knowledge (the level and keys held) on top of the visit counts.
    """
    level = cell[_DIVERGENCE]
    w = PRECONDITION_WEIGHTS[level - 1] if level else 0.0
    if cell[_AHEAD]:
        w = max(w, PRECONDITION_WEIGHTS[2])
    if cell[_TRUNCATING]:
        w = max(w, PRECONDITION_WEIGHTS[3])
    if cell[_NEW_LEADER]:
        w = max(w, PRECONDITION_WEIGHTS[3 + cell[_NEW_LEADER]])
    if cell[_HW_WINDOW]:
        w = max(w, PRECONDITION_WEIGHTS[5 + cell[_HW_WINDOW]])
    if len(cell) > _ALTER_ISR_RACE:
        if cell[_ALTER_ISR_RACE]:
            w = max(w, ALTER_ISR_RACE_WEIGHTS[cell[_ALTER_ISR_RACE] - 1])
        if cell[_SHRINK_HOLDS_HW]:
            w = max(w, SHRINK_HOLDS_HW_WEIGHT)
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


#: The guided search settles the state where every SETTLE_EVERY-th extension ends (``search``'s ``liveness``).
SETTLE_EVERY = 4


def search(cfg: ModelConfig, seed: int, extensions: int, extension_steps: int = 40, invariants=CATALOGUE,
           p_restart: float = 0.1, should_stop=None, keep_going: bool = False, liveness=()) -> SearchResult:
    """Novelty-guided walks over a corpus of saved states, scheduled by cell; deterministic per seed.

    Like a coverage-guided fuzzer's corpus: a state whose ``novelty_key`` was never seen is kept
    (with its trace); each extension starts from the initial state (with probability p_restart) or
    from a kept state, and walks up to extension_steps actions under a fresh swarm policy.  Because
    the model is pure, kept states are reused directly, without replaying their traces.

    ``p_restart`` was tuned on the five breaking presets of the time (median steps to the first
    violation over campaign seeds 0-9, 6000 extensions per run; 0.3 / 0.15 / 0.1 / 0.05):
    kafka-0.10.2 28.7k / 20.8k / 16.5k / 13.6k, crash-loses-unflushed 9.7k / 3.9k / 9.7k / 4.4k,
    kafka-0.11 6.0k / 9.8k / 16.4k / 14.9k, no-kafka-7128 13.8k / 13.7k / 9.9k / 16.1k.  Rarer
    restarts let the corpus go deeper; 0.1 bounds the worst preset's median without leaning on the
    noisiest numbers (benchmarks/engines.py reports it on held-out seeds).

    Scheduling is two-level, as in Go-Explore's cell selection: first a cell (the durability and
    fault part of the key) with weight (1 + times chosen) ** -CELL_DECAY, then uniformly one of the
    cell's kept states (which differ in leaders, epochs and controllers).  The one-level schedule it
    replaces chose a kept state with weight 1 / (times its key was seen): most keys are transient
    configurations seen once or twice, so that long tail took nearly all the energy, and the few states
    from which a deep bug is a short walk away starved (in one kafka-0.10.2 run, 4 such states out of
    1,962 had 0.03% of the weight and were extended 4 times in 1,578 extensions).  With cells, a
    configuration tail only splits its own cell's share.

    A cell's weight also falls with the number of steps that reached one of its states,
    ``** -SEEN_DECAY`` (Go-Explore's "times seen" count; recomputed when the cell is chosen): a
    situation the walks seldom reach gets more extensions than one they fall into all the time.
    Measured in steps to the first violation (median over campaign seeds, SEEN_DECAY 0 / 0.75):
    no-kip-320 161k / 71k and no-kafka-7164 123k / 90k (seeds 0-11), kafka-0.10.2 18.8k / 11.5k
    (seeds 0-19); over seeds 0-39 no-kafka-7128 14.8k / 14.8k, kafka-0.11 7.8k / 7.0k,
    crash-loses-unflushed 9.5k / 6.3k.  1.0 did better on KAFKA-6880 over seeds 0-5 (no-kip-320 48k,
    no-kafka-7164 46k) but not over 6-11, and worse on the others over seeds 0-19 (kafka-0.10.2
    24.0k, kafka-0.11 13.7k, no-kafka-7128 21.0k); 0.5 did no better than 0 on KAFKA-6880 (seeds 0-5).

    Tried and not kept, median steps to the first violation over campaign seeds 0-7 (the settings
    before the truncating-below-HW cell field:
    no-kip-320 67k, no-kafka-7164 127k, no-kafka-7415 377k): a cell field for a zombie leader (a live
    broker leading an epoch older than ZooKeeper's) 133k / - / 597k; a zombie whose ISR holds a member
    with a lower HW 130k / - / 304k; cell weight times (1 + nonzero fault and progress fields) 100k /
    45k / 372k, squared 119k for no-kip-320; 20 or 80 steps per extension 122k or 121k on no-kip-320
    (20: 83k on no-kafka-7164); 1,000 / 2,000 / 60,000 extensions per run on no-kafka-7415 782k / 256k
    / 600k.  Each is within the seed-to-seed spread (a factor of 10 within one setting) or worse.  With
    the truncating-below-HW field: two more divergence levels (the follower's fetch leader believes it
    leads; and has records beyond the fetch offset) 122k -> 106k on no-kip-320 (seeds 0-19), with 9 of
    the 20 seeds step for step the same, because those states come only a step or two before the
    violation.  Marking KAFKA-6880's phases along the searches (seeds 0-9 of no-kip-320 and
    no-kafka-7164) showed where the steps go: a follower diverged from a fetch leader that is in
    ZooKeeper's ISR comes within 0.5-33k steps, and that fetch leader being elected takes most of the
    rest (up to 165k).  The election needs a fault on the broker that leads or controls, which is what
    the swarm policy's fault targeting (``P_TARGETED``) makes likelier.

    Half the extensions (``P_PRECONDITION``), once such a cell exists, draw their cell among the cells
    that show a violation's precondition (``precondition_weight``: a follower diverged from its fetch
    leader, weight 10, or from ZooKeeper's leader, 1; a zombie's ISR member ahead of ZooKeeper's
    leader, 1; a truncating ISR member below its leader's HW, 10; ZooKeeper's leader below a
    zombie's HW, 10; the HW window, 1, and its leader's session expired inside it, 10), with the same
    decays.  These are domain knowledge drawn from the known bug classes (KIP-101, KIP-279,
    KAFKA-6880, KAFKA-7128, KAFKA-7164, KAFKA-7415), as Go-Explore's cells are drawn from the
    game: a bug with another precondition gets the other half of the extensions and no help from
    this half.  The phase marks above showed the
    divergence coming early and the rest of the search spent elsewhere: without the share, the cells
    with a follower diverged from its fetch leader (5-8% of 100-700 cells) got 6-11% of the
    extensions after the first of them appeared (no-kip-320, seeds 0-5); with it they get over half.
    Median steps to the first violation, without / with (Mann-Whitney p): no-kip-320 112k / 32k
    (seeds 0-19, p = 0.01) and 51k / 19.5k (seeds 20-39, p = 0.009); no-kafka-7164 74k / 22k (0-19,
    p < 0.001) and 61k / 22k (20-39, p = 0.02); no-kafka-7415 295k / 149k (0-19, p = 0.29);
    no-kafka-7128 10.6k / 19.9k (0-19, p = 0.08) and 25.1k / 30.6k (20-59, p = 0.99); kafka-0.10.2
    11.1k / 12.6k, kafka-0.11 14.9k / 11.1k, crash-loses-unflushed 7.1k / 6.0k (0-19, p > 0.4).  A
    share of 0.3 gave no-kip-320 52k and no-kafka-7164 43k, 0.7 gave 42k and 35k (seeds 0-19).
    Weighing those cells up inside the one sampler instead (x10 per divergence level) gave no-kip-320
    27k and no-kafka-7164 16k but no-kafka-7128 38k and no-kafka-7415 302k: it starves every cell
    that does not diverge, where a fixed share costs the other presets at most half their extensions.
    Making every extension from a precondition cell a targeted one (``Policy.targeted``) gave
    no-kip-320 29k against 38k but no-kafka-7415 138k against 56k (seeds 0-19): not kept.

    ``should_stop()`` (a wall-clock ``budget.Deadline``) is asked between extensions and every
    ``budget.CHECK_EVERY`` steps inside one (an extension may be long); stopping early never changes
    what the search did before (``stopped`` is then set), so a violation found at extension k is found
    again by any run of the same seed with >= k extensions.  With ``keep_going`` the search goes on after a
    violation without checking that invariant again (``violations`` lists each invariant's first
    failure with its trace; ``actions`` is the first's).

    ``liveness`` names liveness properties checked by settling the cluster (``properties.settle``) where every
    ``SETTLE_EVERY``-th extension ends; a violation's trace is the extension's followed by the settling steps.

    Traces are parent pointers (``trace_of``), materialised only for a violation.  Every random
    choice comes from random.Random(seed) in a fixed order, and every dict is keyed by tuples of ints
    and bools and only iterated in insertion order, so a seed gives the same search in any process.
    """
    rng = random.Random(seed)
    s0 = initial_state(cfg)
    vs = check_state(cfg, s0, 0, invariants)
    if vs:
        return SearchResult(seed, 0, 0, 1, [], vs[0], cells=1)
    key0 = novelty_key(cfg, s0)
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
                            counts, errors, list(found), len(cell_members), stopped)

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
        for _ in range(extension_steps):
            if should_stop is not None and not steps & CHECK_MASK and steps and should_stop():
                return result(ext, True)  # inside extension ext: its steps so far are counted
            groups = enabled_groups(cfg, s, kinds)
            if not groups:
                break
            a = choose(groups, s)
            s2 = step(cfg, s, a)
            node = (node, a)
            length += 1
            steps += 1
            t = type(a)
            by_type[t] = by_type.get(t, 0) + 1
            vs = check_transition(cfg, s, a, s2, length, invariants, incremental=True)
            s = s2
            errors |= s.ghost.errors_seen
            if vs:
                found.extend((v, trace_of(node)) for v in vs)
                invariants = _without(invariants, vs)
                if not keep_going or not invariants:
                    return result(ext)
            key = novelty_key(cfg, s)
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
