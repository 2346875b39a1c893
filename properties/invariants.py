"""The invariant catalogue: one small pure function per invariant, returning a Violation or None.

Each function reads a ``ClusterState`` (and its ghost) and returns the facts of
the first counterexample it sees as data; rendering them as text is a separate
step.  ``CATALOGUE`` records each invariant's kind, statement and source.

Example: with ``kafka-0.10.2`` (truncate to HW on becoming follower) a follower
truncates an acknowledged record that the old leader had committed, is then
elected, and ``acked_durability`` returns
``Violation("acked_durability", step, {"partition": 0, "offset": 1, "record": 2,
"leader": 1, "leader_epoch": 2, "found": None})``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..model.state import ClusterState, Partition

ALWAYS = "always"
SOMETIMES = "sometimes"
EVENTUALLY = "eventually"


@dataclass(frozen=True, slots=True)
class Violation:
    """An invariant that failed: which one, after which step (1-based; 0 = initial state), and the facts."""

    invariant: str
    step: int
    facts: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"invariant": self.invariant, "step": self.step, "facts": self.facts}


@dataclass(frozen=True, slots=True)
class Invariant:
    name: str
    kind: str
    check: Callable
    statement: str
    source: str


def _leaders(s: ClusterState, p: int):
    """Live brokers whose Partition believes it is the leader of p."""
    for br in s.brokers:
        part = br.partitions[p] if br.alive else None
        if type(part) is Partition and part.leader == br.broker_id and br.logs[p] is not None:
            yield br, part


def log_offsets(cfg, s: ClusterState):
    """INV log_offsets (I5): 0 <= log start offset <= HW <= LEO on every replica's log."""
    for br in s.brokers:
        for p, log in enumerate(br.logs):
            if log is None:
                continue
            if not 0 <= log.log_start_offset <= log.high_watermark <= log.log_end_offset:
                return {"broker": br.broker_id, "partition": p, "log_start_offset": log.log_start_offset,
                        "high_watermark": log.high_watermark, "log_end_offset": log.log_end_offset}
    return None


def isr_well_formed(cfg, s: ClusterState):
    """INV isr_well_formed (I6): the ZooKeeper ISR is non-empty, within the assignment and holds the leader."""
    for p, st in enumerate(s.zk.partition_states):
        if st is None:
            continue
        assignment = s.zk.assignment[p]
        if not st.isr or not set(st.isr) <= set(assignment) or (st.leader >= 0 and st.leader not in st.isr):
            return {"partition": p, "leader": st.leader, "isr": list(st.isr), "assignment": list(assignment)}
    for p in range(len(s.zk.assignment)):
        for br, part in _leaders(s, p):
            if br.broker_id not in part.isr or not set(part.isr) <= set(part.assigned_replicas):
                return {"partition": p, "leader": br.broker_id, "leader_isr": list(part.isr),
                        "assignment": list(part.assigned_replicas)}
    return None


def one_leader_per_epoch(cfg, s: ClusterState):
    """INV one_leader_per_epoch (I7): no two brokers ever become leader of a partition in the same epoch."""
    seen = {}
    for p, epoch, b in s.ghost.leaders:
        other = seen.setdefault((p, epoch), b)
        if other != b:
            return {"partition": p, "leader_epoch": epoch, "leaders": sorted((other, b))}
    return None


def acked_durability(cfg, s: ClusterState):
    """INV acked_durability (I1): a record acknowledged to an acks=all producer stays at its offset in every later leader."""
    g = s.ghost
    if not g.acked or g.unclean_elections:
        return None
    for rid, offset, epoch, _b, p in g.acked:
        for br, part in _leaders(s, p):
            if part.leader_epoch < epoch:
                continue
            entry = br.logs[p].entry_at(offset)
            if entry is None or entry[0] != rid:
                return {"partition": p, "offset": offset, "record": rid, "acked_epoch": epoch,
                        "leader": br.broker_id, "leader_epoch": part.leader_epoch,
                        "found": None if entry is None else entry[0]}
    return None


def consumer_safety(cfg, s: ClusterState):
    """INV consumer_safety (I12): records a consumer saw below the HW are never replaced or truncated."""
    g = s.ghost
    if not g.consumed or g.unclean_elections:
        return None
    by_offset = {}
    for p, offset, rid in g.consumed:
        other = by_offset.setdefault((p, offset), rid)
        if other != rid:
            return {"partition": p, "offset": offset, "records": sorted((other, rid))}
    for (p, offset), rid in by_offset.items():
        for br, part in _leaders(s, p):
            entry = br.logs[p].entry_at(offset)
            if entry is None or entry[0] != rid:
                return {"partition": p, "offset": offset, "record": rid, "leader": br.broker_id,
                        "leader_epoch": part.leader_epoch, "found": None if entry is None else entry[0]}
    return None


def committed_prefix(cfg, s: ClusterState):
    """INV committed_prefix (I2, StrongIsr): below a leader's HW, every member of the ZooKeeper ISR holds the same records."""
    if s.ghost.unclean_elections or s.ghost.lossy_crashes:
        return None
    for p, st in enumerate(s.zk.partition_states):
        if st is None:
            continue
        for br, part in _leaders(s, p):
            if part.leader_epoch != st.leader_epoch:
                continue
            log = br.logs[p]
            for f in st.isr:
                flog = s.brokers[f].logs[p]
                if f == br.broker_id or flog is None:
                    continue
                for o in range(log.log_start_offset, log.high_watermark):
                    if flog.entry_at(o) != log.entry_at(o):
                        return {"partition": p, "offset": o, "leader": br.broker_id, "follower": f,
                                "high_watermark": log.high_watermark, "leader_entry": list(log.entry_at(o)),
                                "follower_entry": None if flog.entry_at(o) is None else list(flog.entry_at(o))}
    return None


CATALOGUE: tuple[Invariant, ...] = (
    Invariant("log_offsets", ALWAYS, log_offsets, "0 <= log start offset <= HW <= LEO on every log",
              "Log.updateHighWatermark / Log.truncateTo (Kafka 2.4.0); reference I5"),
    Invariant("isr_well_formed", ALWAYS, isr_well_formed,
              "ISR non-empty, within the assignment, containing the leader (ZooKeeper and the leader's view)",
              "reference I6; hachikuji/kafka-specification LeaderInIsr"),
    Invariant("one_leader_per_epoch", ALWAYS, one_leader_per_epoch,
              "at most one broker becomes leader of a partition in a given leader epoch",
              "reference I7; KafkaController leader epoch bump"),
    Invariant("acked_durability", ALWAYS, acked_durability,
              "a record acknowledged with NONE to acks=all stays at its offset in every later leader's log "
              "(clean elections)", "reference I1; KIP-101"),
    Invariant("consumer_safety", ALWAYS, consumer_safety,
              "a record a consumer read below the HW is never replaced or truncated (clean elections)",
              "reference I12"),
    Invariant("committed_prefix", ALWAYS, committed_prefix,
              "below the leader's HW every ZooKeeper ISR member holds the leader's records (StrongIsr)",
              "reference I2; hachikuji/kafka-specification Kip320.tla StrongIsr"),
)

BY_NAME = {inv.name: inv for inv in CATALOGUE}


def check_state(cfg, s: ClusterState, step: int, invariants=CATALOGUE) -> list[Violation]:
    """Every ALWAYS invariant that fails in s."""
    out = []
    for inv in invariants:
        if inv.kind == ALWAYS:
            facts = inv.check(cfg, s)
            if facts is not None:
                out.append(Violation(inv.name, step, facts))
    return out
