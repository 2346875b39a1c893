"""The seeded random walker: picks enabled actions with random.Random(seed), checks the catalogue after every step.

Swarm testing (Groce et al.): each run draws, from its own seed, a subset of
the optional action kinds (clients, faults, controller moves) and walks with
only those enabled, so that rare interleavings come up in some runs instead of
being drowned out in all of them.  The walker chooses a kind first, then an
action of that kind, so that kinds with many instances (produce and consumer
fetches to every broker) do not crowd out the rare ones.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from ..model import actions as A
from ..model.config import ModelConfig
from ..model.state import Partition
from ..model.step import enabled_actions, initial_state, step
from .invariants import CATALOGUE, Violation, check_state, check_transition, witnesses

#: Kinds every run keeps: without them nothing replicates and no leader is ever elected.
CORE_KINDS = frozenset({
    A.ElectController, A.ControllerProcessBrokerChange, A.DeliverControlRequest, A.FetchRequest,
    A.FetchResponse, A.OffsetsForLeaderEpoch, A.Produce,
})
#: Time and the scheduled tasks go together: a task that is left out would stop the clock at its
#: first due time, so a run either has all of them or has time frozen.
TIME_KINDS = frozenset({A.Tick, A.IsrExpiration, A.IsrChangePropagation, A.HighWatermarkCheckpoint,
                        A.DelayedProduceExpire})
#: The other kinds a swarm run may leave out (each kept with probability P_OPTIONAL): faults,
#: consumers, log flushes.  Leaving out BrokerRestart keeps crashed brokers down.
OPTIONAL_KINDS = tuple(k for k in A.ACTION_TYPES if k not in CORE_KINDS and k not in TIME_KINDS)
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
P_EAGER = 0.7
EAGERNESS = 0.9
#: Per-run weight of each broker's actions: a slow broker (weight 0.1) fetches, restarts and answers
#: rarely, which opens the race windows (a follower that has not refetched yet) many bugs need.
BROKER_WEIGHTS = (0.1, 1.0, 1.0)


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


def swarm_kinds(rng: random.Random, swarm: bool) -> frozenset:
    """The action kinds one run may use: every kind, or the core plus a random subset of the others."""
    if not swarm:
        return frozenset(A.ACTION_TYPES)
    kinds = set(CORE_KINDS)
    if rng.random() < P_TIME:
        kinds |= TIME_KINDS
    kinds |= {k for k in OPTIONAL_KINDS if rng.random() < P_OPTIONAL}
    return frozenset(kinds)


class Policy:
    """One swarm draw: the kinds a run may use, its eager kinds and its broker weights, and the choice rule."""

    __slots__ = ("rng", "kinds", "eager", "weights")

    def __init__(self, cfg: ModelConfig, rng: random.Random, swarm: bool = True):
        self.rng = rng
        self.kinds = swarm_kinds(rng, swarm)
        self.weights = [rng.choice(BROKER_WEIGHTS) for _ in range(cfg.n_brokers)] if swarm else None
        self.eager = frozenset(k for k in EAGER_CANDIDATES if rng.random() < P_EAGER) if swarm else frozenset()

    def choose(self, acts: tuple):
        """An eager action if one is enabled (with probability EAGERNESS), else a kind, then an action of it."""
        rng = self.rng
        by_kind: dict = {}
        urgent = []
        for a in acts:
            by_kind.setdefault(type(a), []).append(a)
            if type(a) in self.eager:
                urgent.append(a)
        if urgent and rng.random() < EAGERNESS:
            group = urgent
        else:
            group = list(by_kind.values())[rng.randrange(len(by_kind))]
        if self.weights is not None and len(group) > 1:
            w = self.weights
            return rng.choices(group, [w[x.broker] if hasattr(x, "broker") else 1.0 for x in group])[0]
        return group[rng.randrange(len(group))]


def walk(cfg: ModelConfig, seed: int, max_steps: int, invariants=CATALOGUE, swarm: bool = True,
         keep_going: bool = False) -> WalkResult:
    """One seeded run: at most max_steps actions, stopping at the first violation or when nothing is enabled.

    With ``keep_going`` the run goes on after a violation, no longer checking the invariant that
    failed, so that a shallow bug does not hide a deeper one; ``violations`` lists the first
    violation of each invariant (the failing prefix of violation v is ``actions[:v.step]``).
    """
    policy = Policy(cfg, random.Random(seed), swarm)
    s = initial_state(cfg)
    trace = []
    counts: dict[str, int] = {}
    violation = None
    found: list = []
    vs = check_state(cfg, s, 0, invariants)
    if vs:
        return WalkResult(seed, 0, trace, vs[0], policy.kinds, counts, violations=list(vs))
    for i in range(1, max_steps + 1):
        acts = enabled_actions(cfg, s, policy.kinds)
        if not acts:
            break
        a = policy.choose(acts)
        s2 = step(cfg, s, a)
        trace.append(a)
        name = type(a).__name__
        counts[name] = counts.get(name, 0) + 1
        vs = check_transition(cfg, s, a, s2, i, invariants)
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
    return WalkResult(seed, len(trace), trace, violation, policy.kinds, counts, witnesses(cfg, s),
                      s.ghost.errors_seen, found)


def _without(invariants, violations) -> tuple:
    """The invariants minus those that just failed (keep_going runs stop checking a failed invariant)."""
    failed = {v.invariant for v in violations}
    return tuple(inv for inv in invariants if inv.name not in failed)


# --------------------------------------------------------------------------- guided search
def novelty_key(s) -> tuple:
    """A coarse abstraction of a state for novelty search: fault counters, epochs, roles, durability progress.

    Coarse on purpose: a few hundred keys, so that the corpus keeps the states that opened a new situation
    (first acknowledged write, a broker lacking it, such a broker in the ZooKeeper ISR the controller elects
    from, a first crash, a leader change...) and not every offset.  Counting the ISR members that lack the
    first acknowledged record cut the median steps to a lost write on kafka-0.10.2 from 127k to 110k
    (8 seeds; found by 6 instead of 5 within 240k steps).
    """
    g = s.ghost
    lacking = lacking_in_isr = 0
    if g.acked:
        rid, off, _e, _b, p = g.acked[0]
        zk_state = s.zk.partition_states[p]
        isr = zk_state.isr if zk_state is not None else ()
        for br in s.brokers:
            log = br.logs[p]
            if log is not None:
                entry = log.entry_at(off)
                if entry is None or entry[0] != rid:
                    lacking += 1
                    lacking_in_isr += br.broker_id in isr
    roles = tuple((br.alive, tuple(type(pt) is Partition and pt.leader == br.broker_id for pt in br.partitions))
                  for br in s.brokers)
    max_epoch = max((e for _p, e, _b in g.leaders), default=-1)
    return (lacking, lacking_in_isr, min(len(g.acked), 2), g.crashes, g.session_expirations, max_epoch,
            g.truncations > 0, g.isr_shrinks > 0, g.isr_expands > 0, roles, len(s.controllers))


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


def search(cfg: ModelConfig, seed: int, extensions: int, extension_steps: int = 40, invariants=CATALOGUE,
           p_restart: float = 0.3, should_stop=None, keep_going: bool = False) -> SearchResult:
    """Novelty-guided walks: extend saved states whose abstract key is rare; deterministic per seed.

    Like a coverage-guided fuzzer's corpus: a state whose ``novelty_key`` was never seen is kept
    (with its trace); each extension starts from the initial state (with probability p_restart) or
    from a kept state chosen with weight 1 / (times its key was seen), and walks up to
    extension_steps actions under a fresh swarm policy.  Because the model is pure, kept states are
    reused directly, without replaying their traces.  ``should_stop()`` (e.g. a wall-clock budget) is
    asked between extensions; stopping early never changes what the completed extensions did, so a
    violation found at extension k is found again by any run of the same seed with >= k extensions.
    With ``keep_going`` the search goes on after a violation without checking that invariant again
    (``violations`` lists each invariant's first failure with its trace; ``actions`` is the first's).
    """
    rng = random.Random(seed)
    s0 = initial_state(cfg)
    vs = check_state(cfg, s0, 0, invariants)
    if vs:
        return SearchResult(seed, 0, 0, 1, [], vs[0])
    key0 = novelty_key(s0)
    corpus = [(s0, (), key0)]
    seen = {key0: 1}
    steps = 0
    seen_witnesses: set = set()
    counts: dict[str, int] = {}
    errors = 0
    found: list = []

    def result(ext_done: int) -> SearchResult:
        first, first_trace = found[0] if found else (None, [])
        return SearchResult(seed, steps, ext_done, len(corpus), list(first_trace), first, frozenset(seen_witnesses),
                            counts, errors, list(found))

    for ext in range(1, extensions + 1):
        if should_stop is not None and should_stop():
            return result(ext - 1)
        if rng.random() < p_restart:
            s, trace, _ = corpus[0]
        else:
            s, trace, _ = rng.choices(corpus, [1.0 / seen[k] for _s, _t, k in corpus])[0]
        policy = Policy(cfg, random.Random(rng.getrandbits(63)))
        for _ in range(extension_steps):
            acts = enabled_actions(cfg, s, policy.kinds)
            if not acts:
                break
            a = policy.choose(acts)
            s2 = step(cfg, s, a)
            trace = trace + (a,)
            steps += 1
            name = type(a).__name__
            counts[name] = counts.get(name, 0) + 1
            vs = check_transition(cfg, s, a, s2, len(trace), invariants)
            s = s2
            errors |= s.ghost.errors_seen
            if vs:
                found.extend((v, list(trace)) for v in vs)
                invariants = _without(invariants, vs)
                if not keep_going or not invariants:
                    return result(ext)
            key = novelty_key(s)
            n = seen.get(key, 0)
            if n == 0:
                corpus.append((s, trace, key))
                seen_witnesses |= witnesses(cfg, s)
            seen[key] = n + 1
    return result(extensions)
