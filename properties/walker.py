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
from ..model.step import enabled_actions, initial_state, step
from .invariants import CATALOGUE, Violation, check_state, check_transition

#: Kinds every run keeps: without them the cluster cannot make progress.
CORE_KINDS = frozenset({
    A.ElectController, A.ControllerProcessBrokerChange, A.ControllerProcessIsrChangeNotification,
    A.ControllerResign, A.DeliverControlRequest, A.FetchRequest, A.FetchResponse, A.OffsetsForLeaderEpoch,
    A.IsrExpiration, A.IsrChangePropagation, A.HighWatermarkCheckpoint, A.DelayedProduceExpire, A.Tick,
    A.Produce, A.BrokerRestart, A.ZkReconnect,
})
#: Kinds a swarm run may leave out.
OPTIONAL_KINDS = tuple(k for k in A.ACTION_TYPES if k not in CORE_KINDS)


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


def swarm_kinds(rng: random.Random, swarm: bool) -> frozenset:
    if not swarm:
        return frozenset(A.ACTION_TYPES)
    chosen = {k for k in OPTIONAL_KINDS if rng.random() < 0.5}
    return frozenset(CORE_KINDS | chosen)


def walk(cfg: ModelConfig, seed: int, max_steps: int, invariants=CATALOGUE, swarm: bool = True) -> WalkResult:
    """One seeded run: at most max_steps actions, stopping at the first violation or when nothing is enabled."""
    rng = random.Random(seed)
    kinds = swarm_kinds(rng, swarm)
    s = initial_state(cfg)
    trace = []
    counts: dict[str, int] = {}
    violation = None
    vs = check_state(cfg, s, 0, invariants)
    if vs:
        return WalkResult(seed, 0, trace, vs[0], kinds, counts)
    for i in range(1, max_steps + 1):
        acts = enabled_actions(cfg, s, kinds)
        if not acts:
            break
        by_kind: dict = {}
        for a in acts:
            by_kind.setdefault(type(a), []).append(a)
        group = list(by_kind.values())[rng.randrange(len(by_kind))]
        a = group[rng.randrange(len(group))]
        s2 = step(cfg, s, a)
        trace.append(a)
        name = type(a).__name__
        counts[name] = counts.get(name, 0) + 1
        vs = check_transition(cfg, s, a, s2, i, invariants)
        s = s2
        if vs:
            violation = vs[0]
            break
    return WalkResult(seed, len(trace), trace, violation, kinds, counts)
