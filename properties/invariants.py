"""The invariant catalogue: one small pure function per invariant, returning facts (a dict) or None.

Two scopes:

* ``state`` invariants read one ``ClusterState`` (with its ghost): ``f(cfg, s)``;
* ``step`` invariants read a transition: ``f(cfg, pre, action, post)`` (monotonicity,
  fencing, what one scheduled task run must and must not do).

Kinds follow stateright: ``always`` (must hold at every step), ``sometimes`` (a
witness that some state of a run or campaign must reach, so that a run in which
nothing happens cannot pass), ``eventually`` (``LIVENESS``: whenever a condition
holds, a goal is eventually reached; refuted by a fair cycle of the state
graph, which the explorer checks, or by a run that does not settle: the fuzzing
engines run a fair, fault-free schedule after each run, ``settle.py``), and ``documented`` (a loss Kafka documents for
a setting, ``unclean_loss``: never a violation, reported with its facts as an event,
and among a run's ``witnesses`` when it happened).  A failing check returns the facts of its first
counterexample as data; ``explain.py`` renders text.  Engines call
``check_state`` on the initial state and ``check_transition`` after every step.

Incremental checking.  Each invariant may declare the parts of the state it
``reads`` (a broker's logs, its Partition records, its liveness, ZooKeeper's
partition states, the ghost's records...).  States are copy-on-write, so
``changes(pre, post)`` tells by identity which parts a step replaced, and
``check_transition(..., incremental=True)`` skips a state invariant whose parts
did not change (it held on ``pre``; the engines stop or drop an invariant at
its first failure) and a step invariant likewise (it compares parts that are
equal).  Most steps change none of the parts the state invariants read (the
share and the walker's speed with and without: benchmarks/RESULTS.md).
``tests/test_invariants.py`` checks each declaration by swapping the parts an
invariant does not declare for another state's and comparing its answers.

Example: with ``kafka-0.10.2`` (truncate to the HW on becoming follower) a
follower truncates a record the old leader had acknowledged, is then elected,
and ``acked_durability`` returns ``{"partition": 0, "offset": 0, "record": 1,
"acked_epoch": 0, "leader": 2, "leader_epoch": 2, "found": None}``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable

from ..model import actions as A
from ..model import errors as E
from ..model.directories import has_online_dir
from ..model.losses import lost_records
from ..model.node import memo_by_identity
from ..model.state import (FAILED, TRUNCATING, ClusterState, FetchState, Partition, PartitionChangeRecord,
                           RegisterBrokerRecord)

ALWAYS = "always"
SOMETIMES = "sometimes"
EVENTUALLY = "eventually"
DOCUMENTED = "documented"
STATE = "state"
STEP = "step"


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
    kind: str            # ALWAYS, SOMETIMES or DOCUMENTED
    scope: str           # STATE or STEP
    check: Callable
    statement: str
    source: str
    #: the parts of the state the check reads (``changes`` bits), or None for "check after every step"
    reads: int | None = None


# --------------------------------------------------------------------------- what a step changed
#: Parts of a state the invariants read.  ``changes(pre, post)`` sets the bit of every part a step replaced:
#: a broker's logs, its Partition records or its liveness; ZooKeeper's partition states and assignment; the ghost's
#: acknowledged, consumed and leader records; its unclean elections and their losses, and its lossy-crash counter; the controller
#: epoch in ZooKeeper or on a broker; a broker's unsent AlterIsr items (KIP-497); the topics queued for deletion.
LOGS, PARTITIONS, ALIVE, ZK_STATES, ACKED, CONSUMED, LEADERS, LOSSES, EPOCHS, ALTER_ISR, DELETIONS = (
    1 << i for i in range(11))


def changes(pre: ClusterState, post: ClusterState) -> int:
    """The ``reads`` bits of the parts ``post`` does not share with ``pre``.

    States are copy-on-write (``model/node.py``): a step clones every record it changes and the tuple
    holding it, and shares the rest, so an identical object is an unchanged part.  An equal copy counts
    as a change, which only costs a check.
    """
    bits = 0
    if pre.brokers is not post.brokers:
        for b0, b1 in zip(pre.brokers, post.brokers):
            if b0 is not b1:
                if b0.logs is not b1.logs:
                    bits |= LOGS
                if b0.partitions is not b1.partitions:
                    bits |= PARTITIONS
                if b0.alive != b1.alive:
                    bits |= ALIVE
                if b0.controller_epoch != b1.controller_epoch:
                    bits |= EPOCHS
                if b0.alter_isr_unsent is not b1.alter_isr_unsent:
                    bits |= ALTER_ISR
    q0, q1 = pre.quorum, post.quorum
    if q0 is not q1:
        if q0.partitions is not q1.partitions:
            bits |= ZK_STATES                        # KRaft: the controller's partition states are the quorum's
        if q0.registrations is not q1.registrations:
            bits |= EPOCHS                           # KRaft: broker epochs and fencing
    z0, z1 = pre.zk, post.zk
    if z0 is not z1:
        if z0.partition_states is not z1.partition_states or z0.assignment is not z1.assignment:
            bits |= ZK_STATES                        # the partition states, and the assignment (topics, reassignment)
        if z0.controller_epoch != z1.controller_epoch:
            bits |= EPOCHS
        if z0.delete_topics != z1.delete_topics:
            bits |= ZK_STATES | DELETIONS            # a topic queued for deletion, or no longer (topic_gone)
    g0, g1 = pre.ghost, post.ghost
    if g0 is not g1:
        if g0.acked is not g1.acked:
            bits |= ACKED
        if g0.consumed is not g1.consumed:
            bits |= CONSUMED
        if g0.deleted_partitions is not g1.deleted_partitions:
            bits |= ACKED | CONSUMED                 # a topic deleted (with the assignment: ZK_STATES above)
        if g0.leaders is not g1.leaders:
            bits |= LEADERS
        if g0.unclean is not g1.unclean or g0.unclean_losses is not g1.unclean_losses \
                or g0.lossy_crashes != g1.lossy_crashes:
            bits |= LOSSES
    return bits


# --------------------------------------------------------------------------- helpers
def _leaders(s: ClusterState, p: int):
    """Live brokers whose Partition believes it is the leader of p."""
    for br in s.brokers:
        if not br.alive:
            continue
        part = br.partitions[p]
        if type(part) is Partition and part.leader == br.broker_id and br.logs[p] is not None:
            yield br, part


def _leader_part(s: ClusterState, b: int, p: int):
    br = s.brokers[b]
    part = br.partitions[p] if br.alive else None
    if type(part) is Partition and part.leader == b:
        return part
    return None


def _current_leaders(s: ClusterState):
    """(partition, the controller's state, the leader's Partition) for each partition whose controller-named leader is
    live and leads it in the controller's current leader epoch."""
    for p, st in enumerate(s.controller_partition_states()):
        if st is None or st.leader < 0:
            continue
        part = _leader_part(s, st.leader, p)
        if part is not None and part.leader_epoch == st.leader_epoch:
            yield p, st, part


def _deposed_by_unclean_election(g, p: int, leader_epoch: int) -> bool:
    """Whether an unclean election of p wrote a later leader epoch than ``leader_epoch``."""
    return any(u.partition == p and u.leader_epoch > leader_epoch for u in g.unclean)


def _where(s: ClusterState) -> str:
    """Where the controller keeps partition states, as violation facts name it."""
    return "zookeeper" if s.quorum is None else "controller"


def _entry(e):
    return None if e is None else list(e)


# =========================================================================== state invariants
def log_offsets(cfg, s: ClusterState):
    """INV log_offsets (I5): 0 <= log start offset <= HW <= LEO on every replica's log."""
    for br in s.brokers:
        for p, log in enumerate(br.logs):
            if log is not None and not 0 <= log.log_start_offset <= log.high_watermark <= log.log_end_offset:
                return {"broker": br.broker_id, "partition": p, "log_start_offset": log.log_start_offset,
                        "high_watermark": log.high_watermark, "log_end_offset": log.log_end_offset}
    return None


def isr_well_formed(cfg, s: ClusterState):
    """INV isr_well_formed (I6): ISR non-empty, within the assignment, holding the leader (the controller's and
    leaders'); in KRaft a leaderless partition's ISR may be empty (KIP-966), its ELR is disjoint from its ISR, and
    while it recovers from an unclean election its ISR has at most one member (KIP-704)."""
    kraft = s.quorum is not None
    for p, st in enumerate(s.controller_partition_states()):
        if st is None:
            continue
        assignment = s.zk.assignment[p]
        empty_ok = kraft and st.leader < 0
        recovering = kraft and st.leader_recovery_state == "RECOVERING"
        if (not st.isr and not empty_ok) or not set(st.isr) <= set(assignment) or \
                (st.leader >= 0 and st.leader not in st.isr) or set(st.elr) & set(st.isr) or \
                (recovering and len(st.isr) > 1):
            return {"where": _where(s), "partition": p, "leader": st.leader, "isr": list(st.isr),
                    **({"elr": list(st.elr)} if st.elr else {}),
                    **({"leader_recovery_state": "RECOVERING"} if recovering else {}),
                    "assignment": list(assignment)}
    for p in range(len(s.zk.assignment)):
        cur = s.controller_partition_states()[p]
        for br, part in _leaders(s, p):
            # a superseded leader may hold an ISR member the assignment it was sent no longer has: a reassignment's
            # new leader gets TRS with the old ISR, then the removed replicas leave the ISR in the next epoch
            # (KafkaController.onPartitionReassignment B3-B4, Kafka 2.4.0)
            superseded = cur is not None and cur.leader_epoch > part.leader_epoch
            if br.broker_id not in part.isr or (not set(part.isr) <= set(part.assigned_replicas) and not superseded):
                return {"where": "leader", "partition": p, "leader": br.broker_id, "isr": list(part.isr),
                        "assignment": list(part.assigned_replicas)}
    return None


def one_leader_per_epoch(cfg, s: ClusterState):
    """INV one_leader_per_epoch (I7): no two brokers ever become leader of a partition in the same leader epoch."""
    seen = {}
    for p, epoch, b in s.ghost.leaders:
        other = seen.setdefault((p, epoch), b)
        if other != b:
            return {"partition": p, "leader_epoch": epoch, "leaders": sorted((other, b))}
    return None


def epoch_cache_monotonic(cfg, s: ClusterState):
    """INV epoch_cache_monotonic (I7): every leader-epoch cache has strictly increasing epochs and start offsets."""
    for br in s.brokers:
        for p, log in enumerate(br.logs):
            if log is None:
                continue
            cache = log.epoch_cache
            for (e1, o1), (e2, o2) in zip(cache, cache[1:]):
                if not (e1 < e2 and o1 < o2):
                    return {"broker": br.broker_id, "partition": p, "epoch_cache": [list(x) for x in cache]}
    return None


def _deleted_below(s: ClusterState, p: int) -> int:
    """The offset below which partition p's records were deleted on purpose (DeleteRecords, retention): the largest log
    start offset of any replica's log.  A replica that has not heard of it yet may still hold those records; they are
    no longer owed to anyone."""
    start = 0
    for br in s.brokers:
        log = br.logs[p]
        if log is not None and log.log_start_offset > start:
            start = log.log_start_offset
    return start


def acked_durability(cfg, s: ClusterState):
    """INV acked_durability (I1): a record acknowledged to acks=all stays at its offset in every later leader's log
    (except the documented losses of unclean elections, ``Ghost.unclean_losses``: those records only, and the records
    of a topic deleted or queued for deletion, ``Ghost.deleted_partitions`` and /admin/delete_topics: a deletion asked
    for gives up its records, whichever controller deletes them first)."""
    g = s.ghost
    if not g.acked or s.zk.delete_topics:
        return None
    lost = lost_records(g) if g.unclean_losses else ()
    deleted = g.deleted_partitions
    for rid, offset, epoch, _b, p in g.acked:
        if lost and (p, offset, rid) in lost or deleted and p in deleted:   # deleted with its topic: not lost
            continue
        if offset < _deleted_below(s, p):
            continue          # deleted below a log start (DeleteRecords, retention): not a loss
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
    """INV consumer_safety (I12): a record a consumer read below the HW is never replaced or truncated later
    (except the documented losses of unclean elections, ``Ghost.unclean_losses``: those records only, and the records
    of a topic deleted or queued for deletion, as acked_durability's)."""
    g = s.ghost
    if not g.consumed or s.zk.delete_topics:
        return None
    lost = lost_records(g) if g.unclean_losses else ()
    deleted = g.deleted_partitions
    by_offset = {}
    for p, offset, rid, epoch in g.consumed:
        if lost and (p, offset, rid) in lost or deleted and p in deleted:   # deleted with its topic: not lost
            continue
        other, first_epoch = by_offset.setdefault((p, offset), (rid, epoch))
        if other != rid:
            return {"partition": p, "offset": offset, "records": sorted((other, rid))}
    for (p, offset), (rid, epoch) in by_offset.items():
        for br, part in _leaders(s, p):
            if part.leader_epoch < epoch:
                continue  # a deposed leader that has not heard of the newer epoch yet
            if offset < _deleted_below(s, p):
                continue  # deleted below a log start (DeleteRecords, retention): not a loss
            entry = br.logs[p].entry_at(offset)
            if entry is None or entry[0] != rid:
                return {"partition": p, "offset": offset, "record": rid, "leader": br.broker_id,
                        "leader_epoch": part.leader_epoch, "found": None if entry is None else entry[0]}
    return None


def committed_prefix(cfg, s: ClusterState):
    """INV committed_prefix (I2, StrongIsr): below a leader's HW every member of the controller's ISR, and of its
    Eligible Leader Replicas (KIP-966: electable too), holds the same records."""
    if s.ghost.lossy_crashes:
        return None
    for p, st in enumerate(s.controller_partition_states()):
        if st is None:
            continue
        for br, part in _leaders(s, p):
            if part.leader_epoch != st.leader_epoch:
                continue
            log = br.logs[p]
            deleted = _deleted_below(s, p)     # below a log start records are deleted: replicas may differ there
            for f in st.isr + st.elr:
                flog = s.brokers[f].logs[p]
                if f == br.broker_id or flog is None:
                    continue
                for o in range(max(log.log_start_offset, flog.log_start_offset, deleted), log.high_watermark):
                    if flog.entry_at(o) != log.entry_at(o):
                        facts = {"partition": p, "offset": o, "leader": br.broker_id, "follower": f,
                                 "high_watermark": log.high_watermark, "leader_entry": _entry(log.entry_at(o)),
                                 "follower_entry": _entry(flog.entry_at(o))}
                        if f in st.elr:
                            facts["eligible_leader_replica"] = True
                        return facts
    return None


def log_matching(cfg, s: ClusterState):
    """INV log_matching (I3): two replicas holding the same (offset, epoch) agree on every earlier offset."""
    brokers = s.brokers
    for p in range(len(s.zk.assignment)):
        logs = [(br.broker_id, br.logs[p]) for br in brokers if br.logs[p] is not None and br.logs[p].entries]
        for i in range(len(logs)):
            a_id, a = logs[i]
            for j in range(i + 1, len(logs)):
                b_id, b = logs[j]
                if a.log_start_offset == b.log_start_offset:
                    ea, eb = a.entries, b.entries
                    n = min(len(ea), len(eb))
                    if ea[:n] == eb[:n]:
                        continue      # equal overlaps cannot break it (one C-level compare)
                lo = max(a.log_start_offset, b.log_start_offset)
                hi = min(a.log_end_offset, b.log_end_offset)
                matched = None
                for o in range(hi - 1, lo - 1, -1):
                    ea, eb = a.entry_at(o), b.entry_at(o)
                    if matched is None:
                        if ea[1] == eb[1]:
                            matched = o
                            if ea != eb:
                                return {"partition": p, "brokers": [a_id, b_id], "offset": o,
                                        "entries": [list(ea), list(eb)], "matched_offset": o}
                    elif ea != eb:
                        return {"partition": p, "brokers": [a_id, b_id], "offset": o,
                                "entries": [list(ea), list(eb)], "matched_offset": matched}
    return None


def hw_within_isr(cfg, s: ClusterState):
    """INV hw_within_isr: a leader's HW is at most the LEO of every member of its maximal ISR (the committed ISR
    plus a pending expansion, KIP-497; the ISR itself before 2.7); no lossy crash, and a leader an unclean election
    deposed is not held to it (its ISR members follow the unclean leader: what it counted committed is lost).  Nor is
    a partition of a topic queued for deletion (``topic_gone``): StopReplica deletes its replicas while the controller
    sends its leader no LeaderAndIsr (ReplicaStateMachine, OfflineReplica, Kafka 2.4.0), and a new controller's
    failover LeaderAndIsr may re-create a deleted replica empty, so its leader's ISR names replicas the admin's
    request is emptying."""
    g = s.ghost
    if g.lossy_crashes:
        return None
    for p in range(len(s.zk.assignment)):
        if topic_gone(s, p):
            continue
        for br, part in _leaders(s, p):
            if g.unclean and _deposed_by_unclean_election(g, p, part.leader_epoch):
                continue      # its ISR members follow the unclean leader: what it counted committed is a documented loss
            hw = br.logs[p].high_watermark
            if hw <= _deleted_below(s, p):
                continue      # every record below the HW is deleted (DeleteRecords, retention): none is owed
            isr = part.isr if part.pending_isr is None else part.maximal_isr()
            cur = s.controller_partition_states()[p]
            superseded = cur is not None and cur.leader_epoch > part.leader_epoch
            for f in isr:
                if superseded and f not in part.assigned_replicas:
                    # a reassignment's B3-B4 window: maybeIncrementLeaderHW counts only its remote replicas, and
                    # ZooKeeper's ISR (the next epoch) no longer holds f (KafkaController.onPartitionReassignment)
                    continue
                flog = s.brokers[f].logs[p]
                if f != br.broker_id and flog is not None and flog.log_end_offset < hw:
                    return {"partition": p, "leader": br.broker_id, "high_watermark": hw, "follower": f,
                            "follower_log_end_offset": flog.log_end_offset, "isr": list(isr)}
    return None


def follower_hw_committed(cfg, s: ClusterState):
    """INV follower_hw_committed (KAFKA-14704): below a live follower's HW every record is the one the controller's
    current leader holds at that offset, so nothing uncommitted is exposed below it (a follower's HW comes from its leader's,
    which counts only records every ISR member holds); no lossy crash or unclean election."""
    g = s.ghost
    if g.lossy_crashes or g.unclean:
        return None
    brokers = s.brokers
    for p, st, _part in _current_leaders(s):
        llog = brokers[st.leader].logs[p]
        lstart = llog.log_start_offset
        for br in brokers:
            log = br.logs[p]
            if log is None or br.broker_id == st.leader or not br.alive:
                continue
            hw = log.high_watermark
            if log.log_start_offset == lstart:
                n = hw - lstart
                if n <= 0 or log.entries[:n] == llog.entries[:n]:
                    continue      # the common case, one C-level compare
            start = max(log.log_start_offset, lstart)
            for o in range(start, hw):
                if log.entry_at(o) != llog.entry_at(o):
                    return {"partition": p, "offset": o, "follower": br.broker_id, "high_watermark": log.high_watermark,
                            "leader": st.leader, "leader_epoch": st.leader_epoch,
                            "follower_entry": _entry(log.entry_at(o)), "leader_entry": _entry(llog.entry_at(o))}
    return None


def pending_isr_well_formed(cfg, s: ClusterState):
    """INV pending_isr_well_formed (KIP-497): only a leader has a pending ISR change; a pending expansion adds one
    assigned replica outside the committed ISR, a pending shrink removes followers of the committed ISR and
    leaves the leader in it; the AlterIsr item queued for the partition, if any, proposes that change."""
    if not cfg.kip_497:
        return None                              # nothing is ever pending without AlterIsr
    for br in s.brokers:
        if not br.alive:
            continue
        b = br.broker_id
        queued = {item.request.partition: item for item in br.alter_isr_unsent}
        for p, part in enumerate(br.partitions):
            if type(part) is not Partition or part.pending_isr is None:
                continue
            pend = part.pending_isr
            bad = None
            if part.leader != b:
                bad = "pending on a follower"
            elif pend.expand:
                r = pend.replicas
                if len(r) != 1 or r[0] in part.isr or r[0] not in part.assigned_replicas or r[0] == b:
                    bad = "expansion by a member, the leader or an unassigned replica"
            elif not pend.replicas or not set(pend.replicas) <= set(part.isr) or b in pend.replicas:
                bad = "shrink of a non-member or of the leader"
            item = queued.get(p)
            if bad is None and item is not None and (item.isr, item.pending) == (part.isr, pend) \
                    and tuple(item.request.new_isr) != tuple(sorted(
                        part.maximal_isr() if pend.expand else [x for x in part.isr if x not in pend.replicas])):
                bad = "queued item proposes another ISR"
            if bad is not None:
                return {"broker": b, "partition": p, "problem": bad, "leader": part.leader, "isr": list(part.isr),
                        "pending": {"expand": pend.expand, "replicas": list(pend.replicas)}}
    return None


def pending_isr_in_flight(cfg, s: ClusterState):
    """INV pending_isr_in_flight (KIP-497): the broker leading a partition in ZooKeeper's current leader epoch, while
    an ISR change of its is pending, holds the AlterIsr item of that change for that epoch (unsent or in flight).

    A pending change whose item is gone can only be undone by a LeaderAndIsr, and the controller sends one
    only with a new leader epoch: while ZooKeeper's epoch is the leader's, the partition is stuck, no ISR
    change can be made (the liveness property alter_isr_completes fails from here on).  After an answer
    that leaves the partition pending (FENCED_LEADER_EPOCH) ZooKeeper's epoch is already a later one."""
    if not cfg.kip_497:
        return None                              # nothing is ever pending without AlterIsr
    kraft = s.quorum is not None
    for p, st in enumerate(s.controller_partition_states()):
        if st is None or st.leader < 0:
            continue
        br = s.brokers[st.leader]
        part = br.partitions[p] if br.alive else None
        if type(part) is not Partition or part.pending_isr is None or part.leader != br.broker_id \
                or part.leader_epoch != st.leader_epoch:
            continue
        if kraft and (part.zk_version != st.zk_version or br.metadata_offset < len(s.quorum.log)):
            continue      # KRaft: a record the leader has yet to replay resets the partition (makeLeader, any epoch)
        if _fault_given_up(s, br.broker_id, p, part):
            continue
        for item in br.alter_isr_unsent:
            if item.request.partition == p and item.isr == part.isr and item.pending == part.pending_isr \
                    and item.request.leader_epoch == part.leader_epoch:
                break
        else:
            pend = part.pending_isr
            return {"broker": br.broker_id, "partition": p, "leader_epoch": part.leader_epoch, "isr": list(part.isr),
                    "pending": {"expand": pend.expand, "replicas": list(pend.replicas)},
                    "queued": [{"leader_epoch": it.request.leader_epoch, "new_isr": list(it.request.new_isr)}
                               for it in br.alter_isr_unsent if it.request.partition == p]}
    return None


def isr_propagation_bound(cfg, s: ClusterState):
    """INV isr_propagation_bound (1.13): an ISR change is written to isr_change_notification by the first of two
    deadlines, 5000+2500 ms after the last change or 60000+2500 ms after the last propagation (and no sooner than
    2500 ms after the change): the task propagates as soon as either condition holds (while the broker's session is
    alive)."""
    zk, g, now = s.zk, s.ghost, s.now
    slack = cfg.isr_propagation_interval_ms + cfg.scheduler_jitter_ms
    for br in s.brokers:
        b = br.broker_id
        if not br.alive or not br.isr_change_set or not zk.sessions[b]:
            continue
        since = g.session_since[b]
        quiet_deadline = max(br.last_isr_change_ms, since) + cfg.isr_change_blackout_ms + slack
        # 60 s after the last propagation, but not before the change itself: the first task run after it
        max_deadline = max(max(br.last_isr_propagation_ms, since) + cfg.isr_change_max_delay_ms,
                           br.last_isr_change_ms) + slack
        if now > quiet_deadline or now > max_deadline:
            return {"broker": b, "now": now, "pending": list(br.isr_change_set),
                    "last_isr_change_ms": br.last_isr_change_ms,
                    "last_isr_propagation_ms": br.last_isr_propagation_ms}
    return None


def leader_isr_covers_controller_isr(cfg, s: ClusterState):
    """INV leader_isr_covers_controller_isr (the TLA+ specification's ReplicationQuorumSupersetProperty): the broker
    leading a partition in the controller's current leader epoch counts, in its maximal ISR (HW2), every member of the
    controller's ISR; else its HW can pass a replica the controller would elect."""
    for p, st, part in _current_leaders(s):
        missing = set(st.isr) - set(part.maximal_isr())
        if missing:
            return {"partition": p, "leader": st.leader, "leader_epoch": st.leader_epoch,
                    "controller_isr": list(st.isr), "leader_maximal_isr": list(part.maximal_isr()),
                    "missing": sorted(missing)}
    return None


def isr_members_eligible(cfg, s: ClusterState):
    """INV isr_members_eligible (I10, KIP-841): every member of a KRaft partition's ISR is registered, unfenced and not in
    controlled shutdown, but an ISR's last member, which the controller never removes (it keeps the partition's last
    copy known in sync)."""
    q = s.quorum
    if q is None:
        return None                              # the ZooKeeper-era controller removes dead brokers asynchronously
    for p, part in enumerate(q.partitions):
        if len(part.isr) < 2:
            continue
        for b in part.isr:
            reg = q.registrations[b]
            if reg is None or reg.fenced or reg.in_controlled_shutdown:
                return {"partition": p, "broker": b, "isr": list(part.isr), "leader": part.leader,
                        "partition_epoch": part.partition_epoch,
                        "registration": None if reg is None else {"broker_epoch": reg.epoch, "fenced": reg.fenced,
                                                                  "in_controlled_shutdown": reg.in_controlled_shutdown}}
    return None


def forged_alter_partition_refused(cfg, s: ClusterState):
    """INV forged_alter_partition_refused (KRaft): no AlterPartitionReceived that ``alter_partition_defect`` finds
    invalid was accepted (answered NONE or NEW_LEADER_ELECTED), as the ghost records each."""
    if not s.ghost.forged_accepted:
        return None
    p, defect = s.ghost.forged_accepted[0]
    return {"partition": p, "defect": defect, "answers": list(s.ghost.forged_answers)}


# =========================================================================== step invariants
def leader_hw_monotonic(cfg, pre: ClusterState, a, post: ClusterState):
    """INV leader_hw_monotonic (I4, HW3): a leader's HW never decreases within one leadership tenure."""
    for b, (br0, br1) in enumerate(zip(pre.brokers, post.brokers)):
        if br0 is br1 or not (br0.alive and br1.alive):
            continue
        for p in range(len(br0.partitions)):
            p0, p1 = br0.partitions[p], br1.partitions[p]
            if (type(p0) is Partition and type(p1) is Partition and p0.leader == b == p1.leader
                    and p0.leader_epoch == p1.leader_epoch):
                h0, h1 = br0.logs[p].high_watermark, br1.logs[p].high_watermark
                if h1 < h0:
                    return {"broker": b, "partition": p, "leader_epoch": p1.leader_epoch,
                            "high_watermark_before": h0, "high_watermark_after": h1}
    return None


def epochs_monotonic(cfg, pre: ClusterState, a, post: ClusterState):
    """INV epochs_monotonic (I7): controller and leader epochs never go backwards, on brokers and in ZooKeeper."""
    if post.zk.controller_epoch < pre.zk.controller_epoch:
        return {"where": "zookeeper", "controller_epoch_before": pre.zk.controller_epoch,
                "controller_epoch_after": post.zk.controller_epoch}
    for p, (z0, z1) in enumerate(zip(pre.controller_partition_states(), post.controller_partition_states())):
        if z0 is not None and z1 is not None and (z1.leader_epoch < z0.leader_epoch or z1.zk_version < z0.zk_version):
            facts = {"where": _where(post), "partition": p, "leader_epoch_before": z0.leader_epoch,
                     "leader_epoch_after": z1.leader_epoch}
            if z1.zk_version < z0.zk_version:
                facts.update(version_before=z0.zk_version, version_after=z1.zk_version)
            return facts
    if pre.quorum is not None:
        for b, (r0, r1) in enumerate(zip(pre.quorum.registrations, post.quorum.registrations)):
            if r0 is not None and r1 is not None and r1.epoch < r0.epoch:
                return {"where": "controller", "broker": b, "broker_epoch_before": r0.epoch,
                        "broker_epoch_after": r1.epoch}
    for b, (br0, br1) in enumerate(zip(pre.brokers, post.brokers)):
        if br0 is br1 or not (br0.alive and br1.alive):
            continue
        if br1.controller_epoch < br0.controller_epoch:
            return {"broker": b, "controller_epoch_before": br0.controller_epoch,
                    "controller_epoch_after": br1.controller_epoch}
        for p, (p0, p1) in enumerate(zip(br0.partitions, br1.partitions)):
            if type(p0) is Partition and type(p1) is Partition and p1.leader_epoch < p0.leader_epoch:
                return {"broker": b, "partition": p, "leader_epoch_before": p0.leader_epoch,
                        "leader_epoch_after": p1.leader_epoch}
    return None


def stale_controller_epoch_refused(cfg, pre: ClusterState, a, post: ClusterState):
    """INV stale_controller_epoch_refused (C1, C10, C11): a request from an older controller epoch changes nothing."""
    r = _stale_request_changed(pre, a, post, lambda req, br: req.controller_epoch < br.controller_epoch)
    if r is None:
        return None
    req, br0, name = r
    return {"broker": a.broker, "request": type(req).__name__, "request_controller_epoch": req.controller_epoch,
            "broker_controller_epoch": br0.controller_epoch, "changed": name}


def _stale_request_changed(pre: ClusterState, a, post: ClusterState, stale):
    """(request, broker before, first part changed) when ``a`` delivers a control request ``stale(request, broker)``
    says must be refused and the broker changed anyway; else None."""
    if type(a) is not A.DeliverControlRequest:
        return None
    req = pre.controller_on(a.controller).queues[a.broker][0]
    br0, br1 = pre.brokers[a.broker], post.brokers[a.broker]
    if not stale(req, br0):
        return None
    for name in ("controller_epoch", "partitions", "logs", "fetchers", "metadata", "delayed_produces"):
        if getattr(br0, name) != getattr(br1, name):
            return req, br0, name
    return None


def _acting_controller(pre: ClusterState, a):
    """The controller instance that handles action a (a controller event, or an AlterIsr it receives), or None."""
    t = type(a)
    if t is A.ControllerProcessBrokerChange or t is A.ControllerProcessIsrChangeNotification:
        return pre.controller_on(a.controller)
    if t is A.AlterIsrReceived and 0 <= a.broker < len(pre.brokers):
        inflight = pre.brokers[a.broker].alter_isr_inflight
        target = inflight.controller if inflight is not None else -1
        return pre.controller_on(target) if target >= 0 else None
    return None


def stale_controller_write_refused(cfg, pre: ClusterState, a, post: ClusterState):
    """INV stale_controller_write_refused (K6, KAFKA-6082): a controller from an older controller epoch than
    /controller_epoch changes nothing in ZooKeeper (partition states, isr_change_notification znodes)."""
    c = _acting_controller(pre, a)
    if c is None or c.epoch >= pre.zk.controller_epoch:
        return None
    z0, z1 = pre.zk, post.zk
    for p, (st0, st1) in enumerate(zip(z0.partition_states, z1.partition_states)):
        if st0 != st1:
            return {"controller": c.broker_id, "controller_epoch": c.epoch, "zk_controller_epoch":
                    z0.controller_epoch, "partition": p, "written": "partition state",
                    "before": None if st0 is None else [st0.leader, st0.leader_epoch, list(st0.isr), st0.controller_epoch],
                    "after": None if st1 is None else [st1.leader, st1.leader_epoch, list(st1.isr), st1.controller_epoch]}
    if z0.isr_change_notifications != z1.isr_change_notifications:
        return {"controller": c.broker_id, "controller_epoch": c.epoch, "zk_controller_epoch": z0.controller_epoch,
                "written": "isr_change_notification",
                "before": [list(ps) for _seq, ps in z0.isr_change_notifications],
                "after": [list(ps) for _seq, ps in z1.isr_change_notifications]}
    return None


def _fetch_answer(pre: ClusterState, a, post: ClusterState):
    """The fetcher before a FetchRequest step and the leader's answer it holds after, or None for another step."""
    if type(a) is not A.FetchRequest:
        return None
    f0 = pre.brokers[a.broker].fetchers[a.partition]
    f1 = post.brokers[a.broker].fetchers[a.partition]
    if f0 is None or f1 is None or f1.inflight is None:
        return None
    return f0, f1.inflight


def fetch_fencing(cfg, pre: ClusterState, a, post: ClusterState):
    """INV fetch_fencing (I8, KAFKA-8400): a follower fetch answered with an error leaves the leader's view of it unchanged."""
    answer = _fetch_answer(pre, a, post)
    if answer is None or answer[1].error == E.NONE:
        return None
    f, resp = answer
    p0 = pre.brokers[f.leader].partitions[a.partition]
    p1 = post.brokers[f.leader].partitions[a.partition]
    if type(p0) is Partition and type(p1) is Partition:
        r0, r1 = p0.remote(a.broker), p1.remote(a.broker)
        if r0 != r1 or p0.isr != p1.isr or p0.pending_isr != p1.pending_isr:
            return {"leader": f.leader, "follower": a.broker, "partition": a.partition, "error": resp.error,
                    "log_end_offset_before": None if r0 is None else r0.log_end_offset,
                    "log_end_offset_after": None if r1 is None else r1.log_end_offset}
    return None


def acked_below_hw(cfg, pre: ClusterState, a, post: ClusterState):
    """INV acked_below_hw (P7-P8): an acks=all success names records its leader holds, at those offsets, below its HW."""
    new = post.ghost.acked[len(pre.ghost.acked):]
    for rid, offset, _epoch, b, p in new:
        br = post.brokers[b]
        part, log = br.partitions[p], br.logs[p]
        held = log.entry_at(offset) if log is not None else None
        if type(part) is not Partition or part.leader != b or held is None or held[0] != rid \
                or offset >= log.high_watermark:
            return {"record": rid, "offset": offset, "broker": b, "partition": p,
                    "leader": part.leader if type(part) is Partition else None,
                    "high_watermark": None if log is None else log.high_watermark,
                    "held": None if held is None else list(held)}
    return None


#: Controller events that write partition states themselves (elections, ISR removals): each write is a new
#: leader epoch.  A leader's own ISR write and an AlterIsr the controller applies keep the epoch.
_CONTROLLER_EVENTS = (A.ElectController, A.ControllerProcessBrokerChange)


def controller_bumps_leader_epoch(cfg, pre: ClusterState, a, post: ClusterState):
    """INV controller_bumps_leader_epoch (K3-K5): a partition state the controller writes on its own (an election,
    a dead replica's removal from the ISR) has a larger leader epoch than the one it replaces."""
    if type(a) not in _CONTROLLER_EVENTS or pre.zk.partition_states is post.zk.partition_states:
        return None
    for p, (st0, st1) in enumerate(zip(pre.zk.partition_states, post.zk.partition_states)):
        if st0 is not None and st1 is not None and st1 != st0 and st1.leader_epoch <= st0.leader_epoch:
            return {"partition": p, "controller": a.broker if type(a) is A.ElectController else a.controller,
                    "before": [st0.leader, st0.leader_epoch, list(st0.isr), st0.controller_epoch],
                    "after": [st1.leader, st1.leader_epoch, list(st1.isr), st1.controller_epoch]}
    return None


def zk_write_needs_session(cfg, pre: ClusterState, a, post: ClusterState):
    """INV zk_write_needs_session (SH5/EX5): an ISR write in place (same leader and leader epoch) reaches ZooKeeper
    only from a broker whose session is alive: the leader itself, or with KIP-497 the controller it asked."""
    if pre.zk.partition_states is post.zk.partition_states:
        return None
    for p, (st0, st1) in enumerate(zip(pre.zk.partition_states, post.zk.partition_states)):
        if st0 is None or st1 is None or st1 == st0 or (st1.leader, st1.leader_epoch) != (st0.leader, st0.leader_epoch):
            continue
        inflight = pre.brokers[a.broker].alter_isr_inflight if type(a) is A.AlterIsrReceived else None
        writer = inflight.controller if inflight is not None else st1.leader
        if not (0 <= writer < len(pre.zk.sessions)) or not pre.zk.sessions[writer]:
            return {"partition": p, "writer": writer, "isr_before": list(st0.isr), "isr_after": list(st1.isr)}
    return None


def stale_broker_epoch_refused(cfg, pre: ClusterState, a, post: ClusterState):
    """INV stale_broker_epoch_refused (C0, KIP-380): a control request for an older broker epoch changes nothing."""
    r = _stale_request_changed(pre, a, post,
                               lambda req, br: req.broker_epoch != -1 and req.broker_epoch < br.broker_epoch)
    if r is None:
        return None
    req, br0, name = r
    return {"broker": a.broker, "request": type(req).__name__, "request_broker_epoch": req.broker_epoch,
            "broker_epoch": br0.broker_epoch, "changed": name}


def _request_epochs(req) -> dict:
    """partition -> leader epoch of a LeaderAndIsr or UpdateMetadata request (StopReplica carries none, nor does
    UpdateMetadata's LeaderDuringDelete state of a topic being deleted: leader -2 with epoch 0, LeaderAndIsr.duringDelete)."""
    return {ps.partition: ps.leader_epoch for ps in getattr(req, "partition_states", ()) if ps.leader != -2}


def control_requests_in_order(cfg, pre: ClusterState, a, post: ClusterState):
    """INV control_requests_in_order (C10): a controller's requests reach a broker in the order it queued them, so a
    broker is never told a partition's leader epoch after the same controller told it a newer one."""
    if type(a) is not A.DeliverControlRequest:
        return None
    queue = pre.controller_on(a.controller).queues[a.broker]
    if len(queue) < 2:
        return None
    c1 = post.controller_on(a.controller)
    remaining = c1.queues[a.broker] if c1 is not None else ()
    # the request taken is the first one the queue no longer holds in its place
    taken = next((r for k, r in enumerate(queue) if k >= len(remaining) or remaining[k] is not r), queue[-1])
    delivered = _request_epochs(taken)
    if not delivered:
        return None
    for r in remaining:
        for p, epoch in _request_epochs(r).items():
            if p in delivered and epoch < delivered[p]:
                return {"controller": a.controller, "broker": a.broker, "partition": p,
                        "delivered_leader_epoch": delivered[p], "still_queued_leader_epoch": epoch,
                        "request": type(taken).__name__}
    return None


def caught_up_time_sound(cfg, pre: ClusterState, a, post: ClusterState):
    """INV caught_up_time_sound (RS1-RS2): a leader moves a follower's lastCaughtUpTimeMs forward only to the time
    of a fetch that reached its LEO, or to the previous fetch's time when this fetch reached that fetch's LEO."""
    for b, (br0, br1) in enumerate(zip(pre.brokers, post.brokers)):
        if br0 is br1 or br0.partitions is br1.partitions:
            continue
        for p in range(len(br1.partitions)):
            p0, p1 = _leader_part(pre, b, p), _leader_part(post, b, p)
            if p0 is None or p1 is None or p0 is p1 or p0.leader_epoch != p1.leader_epoch:
                continue
            for r1 in p1.remote_replicas:
                r0 = p0.remote(r1.broker_id)
                if r0 is None or r1.last_caught_up_time_ms <= r0.last_caught_up_time_ms:
                    continue
                t, fo = r1.last_caught_up_time_ms, r1.log_end_offset
                if (fo >= r1.last_fetch_leader_log_end_offset and t == r1.last_fetch_time_ms) or \
                        (fo >= r0.last_fetch_leader_log_end_offset and t == r0.last_fetch_time_ms):
                    continue
                return {"leader": b, "partition": p, "follower": r1.broker_id, "fetch_offset": fo,
                        "leader_log_end_offset": r1.last_fetch_leader_log_end_offset,
                        "previous_leader_log_end_offset": r0.last_fetch_leader_log_end_offset,
                        "caught_up_before": r0.last_caught_up_time_ms, "caught_up_after": t,
                        "fetch_time_ms": r1.last_fetch_time_ms, "previous_fetch_time_ms": r0.last_fetch_time_ms}
    return None


def isr_entry_condition(cfg, pre: ClusterState, a, post: ClusterState):
    """INV isr_entry_condition (I9, EX2): a follower joins a leader's ISR only with LEO >= HW and >= the epoch start
    offset.  With KIP-497 it joins the maximal ISR, which the HW counts, when the leader proposes it."""
    for b, (br0, br1) in enumerate(zip(pre.brokers, post.brokers)):
        if br0 is br1:
            continue
        for p in range(len(br1.partitions)):
            p0, p1 = _leader_part(pre, b, p), _leader_part(post, b, p)
            if p0 is None or p1 is None or p0.leader_epoch != p1.leader_epoch or (
                    p0.isr == p1.isr and p0.pending_isr == p1.pending_isr):
                continue
            for f in set(p1.maximal_isr()) - set(p0.maximal_isr()):
                leo = p1.remote(f).log_end_offset
                hw = br0.logs[p].high_watermark
                start = p1.leader_epoch_start_offset
                # The epoch-start clause is what KAFKA-7128 (2.1) added: earlier versions break it.
                if leo < hw or leo < start:
                    return {"leader": b, "partition": p, "follower": f, "follower_log_end_offset": leo,
                            "high_watermark": hw, "leader_epoch_start_offset": start}
    return None


def controller_isr_entry_condition(cfg, pre: ClusterState, a, post: ClusterState):
    """INV controller_isr_entry_condition (I9 at the controller; KIP-903): a follower that enters the controller's ISR
    while its leader and leader epoch stay holds, at that step, a log reaching the leader's HW.  The leader proposed it
    with such a log; only a replica that lost its log since (a reboot onto an empty disk) can break it."""
    before, after = pre.controller_partition_states(), post.controller_partition_states()
    if before is after:
        return None
    for p, (st0, st1) in enumerate(zip(before, after)):
        if st0 is None or st1 is None or st0 is st1 or st0.leader != st1.leader \
                or st0.leader_epoch != st1.leader_epoch or st1.leader < 0:
            continue
        joined = set(st1.isr) - set(st0.isr) - {st1.leader}
        if not joined:
            continue
        leader = pre.brokers[st1.leader]
        llog = leader.logs[p]
        if not leader.alive or llog is None:
            continue
        hw = llog.high_watermark
        for f in sorted(joined):
            br = post.brokers[f]
            flog = br.logs[p]
            leo = 0 if flog is None else flog.log_end_offset
            if br.alive and leo < hw:
                return {"partition": p, "leader": st1.leader, "follower": f, "follower_log_end_offset": leo,
                        "high_watermark": hw, "isr": list(st1.isr)}
    return None


def min_isr_promise(cfg, pre: ClusterState, a, post: ClusterState):
    """INV min_isr_promise (I11, P7): an acks=all success implies |ISR| >= min.insync.replicas at completion (the
    maximal ISR from 2.7, as checkEnoughReplicasReachOffset counts it)."""
    new = post.ghost.acked[len(pre.ghost.acked):]
    for rid, offset, _epoch, b, p in new:
        part = post.brokers[b].partitions[p]
        if type(part) is Partition and len(part.maximal_isr()) < cfg.min_insync_replicas:
            return {"record": rid, "offset": offset, "leader": b, "partition": p, "isr": list(part.maximal_isr()),
                    "min_insync_replicas": cfg.min_insync_replicas}
    return None


def _target_isr(part) -> tuple:
    """The ISR a leader is heading to: its committed ISR, less a pending shrink's members, plus a pending expansion's."""
    pend = part.pending_isr
    if pend is None:
        return part.isr
    if pend.expand:
        return part.maximal_isr()
    return tuple(x for x in part.isr if x not in pend.replicas)


def isr_lag_window(cfg, pre: ClusterState, a, post: ClusterState):
    """INV isr_lag_window (SH3, 1.5x rule): an isr-expiration run removes a follower only when it is out of sync by
    more than replica.lag.time.max.ms, and leaves no such follower in the ISR (unless the ZooKeeper write failed).
    With KIP-497 the run removes by proposing a shrink (the ISR it heads to), unless an update is in flight."""
    if type(a) is not A.IsrExpiration:
        return None
    b, now, lag = a.broker, pre.now, cfg.replica_lag_time_max_ms
    for p in range(len(pre.zk.assignment)):
        p0, p1 = _leader_part(pre, b, p), _leader_part(post, b, p)
        if p0 is None or p1 is None:
            continue
        leo = pre.brokers[b].logs[p].log_end_offset
        isr0, isr1 = _target_isr(p0), _target_isr(p1)
        for f in set(isr0) - set(isr1):
            r = p0.remote(f)
            if not (r.log_end_offset != leo and now - r.last_caught_up_time_ms > lag):
                return {"bound": "lower", "leader": b, "partition": p, "follower": f, "now": now,
                        "last_caught_up_time_ms": r.last_caught_up_time_ms, "follower_log_end_offset":
                        r.log_end_offset, "leader_log_end_offset": leo}
        if cfg.kip_497:
            # in flight already (getOutOfSyncReplicas is empty), or the manager refused the proposal (KAFKA-12686)
            write_failed = p0.pending_isr is not None or any(
                item.request.partition == p for item in pre.brokers[b].alter_isr_unsent)
        else:
            zk_state = post.zk.partition_states[p]
            write_failed = (not post.zk.sessions[b] or zk_state is None or zk_state.zk_version != p1.zk_version
                            or p1.isr == p0.isr)
        for f in isr1:
            r = p1.remote(f)
            if r is None:   # outside the leader's replicas (a reassignment's B3-B4 window): never removed here
                continue
            if f != b and r.log_end_offset != leo and now - r.last_caught_up_time_ms > lag and not write_failed:
                return {"bound": "upper", "leader": b, "partition": p, "follower": f, "now": now,
                        "last_caught_up_time_ms": r.last_caught_up_time_ms}
    return None


def _hw_candidate(cfg, br, part, p: int, now: int) -> int:
    """What Partition.maybeIncrementLeaderHW would set the leader's HW to now (HW1, over the maximal ISR)."""
    new_hw = br.logs[p].log_end_offset
    isr = part.maximal_isr()
    lag = cfg.replica_lag_time_max_ms
    for r in part.remote_replicas:
        if r.log_end_offset < new_hw and (now - r.last_caught_up_time_ms <= lag or r.broker_id in isr):
            new_hw = r.log_end_offset
    return new_hw


def hw_advanced_on_isr_shrink(cfg, pre: ClusterState, a, post: ClusterState):
    """INV hw_advanced_on_isr_shrink (HW4): when a leader's committed ISR loses members, its HW is at least what
    maybeIncrementLeaderHW computes in the new state: the HW a removed follower held back is released at once.
    The shrinks a leader makes itself (its ZooKeeper write, or an AlterIsr it commits), which the ghost counts;
    a LeaderAndIsr's smaller ISR goes through makeLeader, which recomputes the HW anyway (M9)."""
    if post.ghost.isr_shrinks == pre.ghost.isr_shrinks:
        return None
    for b, (br0, br1) in enumerate(zip(pre.brokers, post.brokers)):
        if br0 is br1 or br0.partitions is br1.partitions:
            continue
        for p in range(len(br1.partitions)):
            p0, p1 = _leader_part(pre, b, p), _leader_part(post, b, p)
            if p0 is None or p1 is None or p0.isr is p1.isr or not set(p0.isr) - set(p1.isr) \
                    or br1.logs[p] is None:
                continue
            if post.quorum is not None and len(p1.isr) < min(cfg.min_insync_replicas, len(p1.assigned_replicas)):
                continue      # KRaft below min ISR: 3.7's KAFKA-15583 keeps the HW where it is (not held to HW4 here)
            hw, want = br1.logs[p].high_watermark, _hw_candidate(cfg, br1, p1, p, post.now)
            if hw < want:
                return {"leader": b, "partition": p, "isr_before": list(p0.isr), "isr_after": list(p1.isr),
                        "high_watermark": hw, "hw_candidate": want,
                        "log_end_offset": br1.logs[p].log_end_offset}
    return None


# =========================================================================== documented losses
def unclean_loss(cfg, s: ClusterState):
    """DOCUMENTED unclean_loss: the records unclean leader elections lost (``Ghost.unclean_losses``), by election.

    Not a violation: unclean.leader.election.enable trades these records for availability, as Kafka documents.
    The durability invariants exempt exactly these records and check every other one."""
    g = s.ghost
    if not g.unclean_losses:
        return None
    out = []
    for u in g.unclean:
        lost = [[off, rid] for p, e, _l, off, rid in g.unclean_losses if (p, e) == (u.partition, u.leader_epoch)]
        if lost:
            out.append({"partition": u.partition, "leader_epoch": u.leader_epoch, "leader": u.leader,
                        "taken_epoch": u.taken_epoch, "lost": lost})
    return {"elections": out}


# =========================================================================== sometimes witnesses
def witness_hw_advanced(cfg, s: ClusterState):
    """WITNESS hw_advanced: some leader's HW is above 0."""
    return any(log is not None and log.high_watermark > 0 for br in s.brokers for log in br.logs)


def witness_isr_shrink_and_expand(cfg, s: ClusterState):
    """WITNESS isr_shrink_and_expand: a leader both removed a follower from and added one to an ISR."""
    return s.ghost.isr_shrinks > 0 and s.ghost.isr_expands > 0


def witness_leader_change_with_truncation(cfg, s: ClusterState):
    """WITNESS leader_change_with_truncation: a leader changed and a follower truncated records."""
    return s.ghost.truncations > 0 and any(epoch > 0 for _p, epoch, _b in s.ghost.leaders)


def witness_acked(cfg, s: ClusterState):
    """WITNESS acked: an acks=all produce was acknowledged."""
    return bool(s.ghost.acked)


CATALOGUE: tuple[Invariant, ...] = (
    Invariant("log_offsets", ALWAYS, STATE, log_offsets, "0 <= log start offset <= HW <= LEO on every log",
              "Log.updateHighWatermark / Log.truncateTo (Kafka 2.4.0); reference I5",
              reads=LOGS),
    Invariant("isr_well_formed", ALWAYS, STATE, isr_well_formed,
              "ISR non-empty (KRaft: but a leaderless partition's, KIP-966), within the assignment and containing the "
              "leader (the controller's and each leader's view); Eligible Leader Replicas disjoint from the ISR",
              "reference I6; hachikuji/kafka-specification LeaderInIsr; PartitionChangeBuilder (KIP-966, Kafka 3.7.0)",
              reads=ZK_STATES | ALIVE | PARTITIONS | LOGS),
    Invariant("one_leader_per_epoch", ALWAYS, STATE, one_leader_per_epoch,
              "at most one broker becomes leader of a partition in a given leader epoch",
              "reference I7; PartitionStateMachine leader epoch bump (Kafka 2.4.0)",
              reads=LEADERS),
    Invariant("epoch_cache_monotonic", ALWAYS, STATE, epoch_cache_monotonic,
              "every leader-epoch cache has strictly increasing epochs and start offsets",
              "LeaderEpochFileCache.assign (Kafka 2.4.0); reference I7",
              reads=LOGS),
    Invariant("acked_durability", ALWAYS, STATE, acked_durability,
              "a record acknowledged with NONE to acks=all stays at its offset in every later leader's log "
              "(but the records an unclean election lost: unclean_loss)", "reference I1; KIP-101, KIP-279",
              reads=ACKED | LOSSES | ALIVE | PARTITIONS | LOGS | DELETIONS),
    Invariant("consumer_safety", ALWAYS, STATE, consumer_safety,
              "a record a consumer read below the HW is never replaced or truncated (but the records an unclean "
              "election lost: unclean_loss)",
              "reference I12",
              reads=CONSUMED | LOSSES | ALIVE | PARTITIONS | LOGS | DELETIONS),
    Invariant("committed_prefix", ALWAYS, STATE, committed_prefix,
              "below the leader's HW every member of the controller's ISR and ELR holds the leader's records (StrongIsr)",
              "reference I2; hachikuji/kafka-specification Kip320.tla StrongIsr",
              reads=LOSSES | ZK_STATES | ALIVE | PARTITIONS | LOGS),
    Invariant("log_matching", ALWAYS, STATE, log_matching,
              "two replicas holding the same (offset, epoch) agree on every earlier offset",
              "reference I3; KIP-279",
              reads=LOGS),
    Invariant("hw_within_isr", ALWAYS, STATE, hw_within_isr,
              "a leader's HW is at most the LEO of every member of its ISR (its maximal ISR with KIP-497)",
              "Partition.maybeIncrementLeaderHW (Kafka 2.4.0; 2.7.0 over isrState.maximalIsr, KIP-497); "
              "reference section 3",
              reads=LOSSES | ALIVE | PARTITIONS | LOGS | ZK_STATES),
    Invariant("follower_hw_committed", ALWAYS, STATE, follower_hw_committed,
              "below a live follower's HW every record is the one the current leader holds at that offset",
              "ReplicaFetcherThread.processPartitionData, AbstractFetcherThread.processFetchRequest / "
              "truncateOnFetchResponse (Kafka 2.8.0); KAFKA-14704 (3.4.1, 3.5.0)",
              reads=LOSSES | ALIVE | PARTITIONS | LOGS | ZK_STATES),
    Invariant("pending_isr_well_formed", ALWAYS, STATE, pending_isr_well_formed,
              "a pending ISR change is a leader's: one new assigned member, or followers of the committed ISR "
              "leaving it; its queued AlterIsr item proposes that ISR",
              "Partition.PendingExpandIsr / PendingShrinkIsr, maybeExpandIsr, getOutOfSyncReplicas, "
              "sendAlterIsrRequest (Kafka 2.7.0); KIP-497",
              reads=ALIVE | PARTITIONS | ALTER_ISR),
    Invariant("pending_isr_in_flight", ALWAYS, STATE, pending_isr_in_flight,
              "ZooKeeper's current leader, while an ISR change is pending, holds that change's AlterIsr item for "
              "its epoch (else nothing but a new leader epoch can end the pending state)",
              "Partition.sendAlterIsrRequest / handleAlterIsrResponse, AlterIsrManager.enqueue / clearPending "
              "(Kafka 2.7.0); KAFKA-12686 (3.0.0), KAFKA-12751 (2.7.2); reference L-b",
              reads=ALIVE | PARTITIONS | ZK_STATES | ALTER_ISR),
    Invariant("isr_propagation_bound", ALWAYS, STATE, isr_propagation_bound,
              "an ISR change reaches isr_change_notification by the first of 5000+2500 ms after the last change "
              "and 60000+2500 ms after the last propagation", "ReplicaManager.maybePropagateIsrChanges (Kafka 2.4.0)"),
    Invariant("leader_isr_covers_controller_isr", ALWAYS, STATE, leader_isr_covers_controller_isr,
              "the leader of the controller's current leader epoch counts every member of the controller's ISR in its "
              "maximal ISR", "Vanlightly/kafka-tlaplus ReplicationQuorumSupersetProperty; Partition.maximalIsr (KIP-497)",
              reads=ZK_STATES | ALIVE | PARTITIONS),
    Invariant("isr_members_eligible", ALWAYS, STATE, isr_members_eligible,
              "every member of a KRaft ISR but its last is a registered, unfenced broker not in controlled shutdown",
              "ReplicationControlManager.handleBrokerFenced / validateAlterPartitionData, Partition.isReplicaIsrEligible "
              "(KIP-841, Kafka 3.3.0); reference I10", reads=ZK_STATES | EPOCHS),
    Invariant("leader_hw_monotonic", ALWAYS, STEP, leader_hw_monotonic,
              "a leader's HW never decreases within a leadership tenure", "Log.maybeIncrementHighWatermark; I4",
              reads=ALIVE | PARTITIONS | LOGS),
    Invariant("epochs_monotonic", ALWAYS, STEP, epochs_monotonic,
              "controller, leader, partition and broker epochs never decrease on a live broker or at the controller",
              "reference I7",
              reads=EPOCHS | ZK_STATES | ALIVE | PARTITIONS),
    Invariant("stale_controller_epoch_refused", ALWAYS, STEP, stale_controller_epoch_refused,
              "a control request from an older controller epoch changes no broker state",
              "ReplicaManager.becomeLeaderOrFollower / stopReplicas / maybeUpdateMetadataCache (Kafka 2.4.0)"),
    Invariant("stale_controller_write_refused", ALWAYS, STEP, stale_controller_write_refused,
              "a controller from an older controller epoch than /controller_epoch writes nothing to ZooKeeper",
              "KafkaZkClient.updateLeaderAndIsr / deleteIsrChangeNotifications: a MultiOp checking /controller_epoch's "
              "zkVersion, ControllerMovedException (KAFKA-6082, 2.1.0; Kafka 2.4.0); reference K6"),
    Invariant("fetch_fencing", ALWAYS, STEP, fetch_fencing,
              "a follower fetch answered with an error does not change the leader's state for that follower",
              "ReplicaManager.updateFollowerFetchState, KAFKA-8400; reference I8"),
    Invariant("acked_below_hw", ALWAYS, STEP, acked_below_hw,
              "an acks=all success names records its leader holds at those offsets, below its HW",
              "DelayedProduce.tryComplete / Partition.checkEnoughReplicasReachOffset (Kafka 2.4.0); P7-P8",
              reads=ACKED),
    Invariant("controller_bumps_leader_epoch", ALWAYS, STEP, controller_bumps_leader_epoch,
              "a partition state the controller writes on its own has a larger leader epoch than the one it replaces",
              "PartitionStateMachine.electLeaderForPartitions, KafkaController.removeReplicasFromIsr (Kafka 2.4.0); "
              "K3-K5", reads=ZK_STATES),
    Invariant("zk_write_needs_session", ALWAYS, STEP, zk_write_needs_session,
              "an ISR write in place reaches ZooKeeper only from a broker whose session is alive",
              "Partition.updateIsr / ReplicationUtils.updateLeaderAndIsr; KafkaController.processAlterIsr "
              "(Kafka 2.4.0, 2.7.0)", reads=ZK_STATES),
    Invariant("stale_broker_epoch_refused", ALWAYS, STEP, stale_broker_epoch_refused,
              "a control request for an older broker epoch changes no broker state",
              "KafkaApis.isBrokerEpochStale (Kafka 2.4.0, KIP-380); C0"),
    Invariant("control_requests_in_order", ALWAYS, STEP, control_requests_in_order,
              "a controller's requests reach a broker in the order it queued them: none carries an older leader "
              "epoch than one still queued after it", "ControllerChannelManager's per-broker queue and "
              "RequestSendThread (Kafka 2.4.0); C10"),
    Invariant("caught_up_time_sound", ALWAYS, STEP, caught_up_time_sound,
              "a follower's lastCaughtUpTimeMs moves forward only to the time of a fetch that reached the leader's "
              "LEO, or of the previous fetch when this one reached that fetch's LEO",
              "Replica.updateFetchState (Kafka 2.4.0); RS1-RS2", reads=ALIVE | PARTITIONS),
    Invariant("controller_isr_entry_condition", ALWAYS, STEP, controller_isr_entry_condition,
              "a follower enters the controller's ISR only while its log reaches the leader's HW",
              "ReplicationControlManager.validateAlterPartitionData / Partition.addBrokerEpochToIsr (KIP-903, Kafka "
              "3.5.0); reference I9", reads=ZK_STATES),
    Invariant("isr_entry_condition", ALWAYS, STEP, isr_entry_condition,
              "a follower joins the ISR only with LEO >= HW and LEO >= the leader epoch start offset",
              "Partition.isFollowerInSync, KAFKA-7128; reference I9",
              reads=ALIVE | PARTITIONS),
    Invariant("hw_advanced_on_isr_shrink", ALWAYS, STEP, hw_advanced_on_isr_shrink,
              "when a leader's ISR shrinks, its HW is at least what maybeIncrementLeaderHW computes in the new state",
              "Partition.maybeShrinkIsr (Kafka 2.4.0, HW4); Partition.handleAlterIsrResponse (KAFKA-13091, 3.1.0)",
              reads=ALIVE | PARTITIONS | LOGS),
    Invariant("min_isr_promise", ALWAYS, STEP, min_isr_promise,
              "an acks=all success implies |ISR| >= min.insync.replicas at completion",
              "Partition.checkEnoughReplicasReachOffset (Kafka 2.4.0); reference I11",
              reads=ACKED),
    Invariant("isr_lag_window", ALWAYS, STEP, isr_lag_window,
              "isr-expiration removes a follower only when it is out of sync by more than replica.lag.time.max.ms "
              "and leaves none such in the ISR", "Partition.isFollowerOutOfSync (Kafka 2.4.0); the 1.5x rule"),
    Invariant("hw_advanced", SOMETIMES, STATE, witness_hw_advanced, "some HW advances above 0", "vacuity guard"),
    Invariant("isr_shrink_and_expand", SOMETIMES, STATE, witness_isr_shrink_and_expand,
              "an ISR shrinks and a follower rejoins", "vacuity guard"),
    Invariant("leader_change_with_truncation", SOMETIMES, STATE, witness_leader_change_with_truncation,
              "a leader changes and a follower truncates", "vacuity guard"),
    Invariant("acked", SOMETIMES, STATE, witness_acked, "an acks=all produce is acknowledged", "vacuity guard"),
    Invariant("unclean_loss", DOCUMENTED, STATE, unclean_loss,
              "an unclean leader election lost records acknowledged to acks=all or read by a consumer: a documented "
              "loss, reported with the election and its records, never a violation",
              "unclean.leader.election.enable (KafkaConfig, Kafka 2.4.0); "
              "PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection", reads=LOSSES),
)


# --------------------------------------------------------------------------- KAFKA-14140, the metadata log
def zk_isr_joins_live(cfg, pre: ClusterState, a, post: ClusterState):
    """INV zk_isr_joins_live (KIP-841 in ZooKeeper mode, KAFKA-14140): an ISR the ZooKeeper-era controller writes for an
    AlterIsr (leader and leader epoch unchanged) adds only brokers its context holds live and not shutting down."""
    if type(a) is not A.AlterIsrReceived or post.quorum is not None or pre.controllers is post.controllers:
        return None   # the write for an AlterIsr (not a context refreshed from ZooKeeper on another event)
    before = {c.broker_id: c for c in pre.controllers}
    for c1 in post.controllers:
        c0 = before.get(c1.broker_id)
        if c0 is None or c0.partition_states is c1.partition_states:
            continue
        for p, (st0, st1) in enumerate(zip(c0.partition_states, c1.partition_states)):
            if st0 is None or st1 is None or st0 is st1 or st0.leader != st1.leader \
                    or st0.leader_epoch != st1.leader_epoch:
                continue
            for f in sorted(set(st1.isr) - set(st0.isr)):
                if not c1.is_live(f) or f in c1.shutting_down:
                    return {"controller": c1.broker_id, "partition": p, "broker": f, "leader": st1.leader,
                            "leader_epoch": st1.leader_epoch, "isr_before": list(st0.isr), "isr_after": list(st1.isr),
                            "shutting_down": f in c1.shutting_down}
    return None


def _replayed(md, records, n: int, n_partitions: int):
    """A broker's metadata cache after replaying ``records`` on top of ``md`` (broker_metadata's replay, Kafka 3.5.0)."""
    from ..model.broker_metadata import _replay
    from ..model.state import Broker
    br = Broker(-1)
    br.partitions = (None,) * n_partitions
    br.metadata = md
    for rec in records:
        _replay(br, rec, n, {})
    return br.metadata


def metadata_log_matching(cfg, pre: ClusterState, a, post: ClusterState):
    """INV metadata_log_matching (Vanlightly/kafka-tlaplus MetadataLogMatchingProperty): the quorum's metadata log only
    grows, and the records each live broker has applied are a prefix of it ending at a batch boundary, its metadata cache
    being exactly their replay (so any two brokers agree on the records both applied)."""
    q0, q1 = pre.quorum, post.quorum
    if q1 is None:
        return None
    log = q1.log
    if q0.log is not log and log[:len(q0.log)] != q0.log:
        return {"problem": "the metadata log changed below its end", "length_before": len(q0.log),
                "length_after": len(log)}
    if pre.brokers is post.brokers:
        return None
    n = len(post.brokers)
    for br0, br1 in zip(pre.brokers, post.brokers):
        if br0 is br1 or not br1.alive or (br0.metadata is br1.metadata
                                           and br0.metadata_offset == br1.metadata_offset):
            continue
        off = br1.metadata_offset
        if off > len(log) or (off and off not in q1.batch_ends):
            return {"broker": br1.broker_id, "problem": "applied offset outside the log's batches",
                    "metadata_offset": off, "log_length": len(log)}
        if br0.alive and br0.broker_epoch == br1.broker_epoch and br0.metadata_offset <= off:
            want = _replayed(br0.metadata, log[br0.metadata_offset:off], n, len(q1.partitions))   # applied by this step
        else:
            from ..model.state import MetadataCache
            want = _replayed(MetadataCache(), log[:off], n, len(q1.partitions))  # a new incarnation: from the start
        if want != br1.metadata:
            return {"broker": br1.broker_id, "problem": "metadata cache is not the replay of the applied records",
                    "metadata_offset": off, "log_length": len(log)}
    return None


CATALOGUE += (
    Invariant("zk_isr_joins_live", ALWAYS, STEP, zk_isr_joins_live,
              "an AlterIsr the ZooKeeper-era controller writes adds to an ISR only brokers it holds live and not "
              "shutting down",
              "KafkaController.processAlterPartition, Partition.isReplicaIsrEligible (KAFKA-14140, KIP-841, Kafka "
              "3.3.0)", reads=ZK_STATES),
    Invariant("metadata_log_matching", ALWAYS, STEP, metadata_log_matching,
              "the metadata log only grows, and every live broker's metadata cache is the replay of a prefix of it "
              "ending at a batch boundary",
              "Vanlightly/kafka-tlaplus MetadataLogMatchingProperty; BrokerMetadataListener / MetadataLoader "
              "(Kafka 3.5.0)"),
)


# --------------------------------------------------------------------------- what the rule mutants showed missing
def epoch_cache_trimmed(cfg, pre: ClusterState, a, post: ClusterState):
    """INV epoch_cache_trimmed (LeaderEpochFileCache.truncateFromEnd): no live replica's epoch cache holds an entry
    starting past its LEO, and a step that truncates a log leaves no entry at or past the new LEO."""
    for br0, br1 in zip(pre.brokers, post.brokers):
        if br0 is br1 or br0.logs is br1.logs or not (br0.alive and br1.alive):
            continue
        for p, (l0, l1) in enumerate(zip(br0.logs, br1.logs)):
            if l0 is l1 or l1 is None or not l1.epoch_cache:
                continue
            leo = l1.log_end_offset
            truncated = l0 is not None and leo < l0.log_end_offset
            start = l1.epoch_cache[-1][1]
            if start > leo or (truncated and start >= leo):
                return {"broker": br1.broker_id, "partition": p, "log_end_offset": leo,
                        "log_end_offset_before": None if l0 is None else l0.log_end_offset,
                        "epoch_cache": [list(e) for e in l1.epoch_cache]}
    return None


def out_of_range_only_outside_log(cfg, pre: ClusterState, a, post: ClusterState):
    """INV out_of_range_only_outside_log (FE5): a leader answers a follower's fetch OFFSET_OUT_OF_RANGE only for an
    offset below its log start or above its LEO."""
    answer = _fetch_answer(pre, a, post)
    if answer is None or answer[1].error != E.OFFSET_OUT_OF_RANGE:
        return None
    f0, resp = answer
    log = pre.brokers[f0.leader].logs[a.partition]
    if log is not None and log.log_start_offset <= resp.fetch_offset <= log.log_end_offset:
        return {"leader": f0.leader, "follower": a.broker, "partition": a.partition, "fetch_offset": resp.fetch_offset,
                "log_start_offset": log.log_start_offset, "log_end_offset": log.log_end_offset}
    return None


def leader_epoch_start_bound(cfg, s: ClusterState):
    """INV leader_epoch_start_bound (M4-M5): where a leader's epoch cache holds its leader epoch, the epoch starts at or
    below its leader-epoch start offset: both are its LEO when it became leader (the start is later if a controller
    re-sent the same epoch to the restarted broker: makeLeader takes its LEO again, the cache keeps the first offset)."""
    for p in range(len(s.zk.assignment)):
        for br, part in _leaders(s, p):
            log = br.logs[p]
            start = part.leader_epoch_start_offset
            offset = next((o for e, o in log.epoch_cache if e == part.leader_epoch), None)
            # no entry yet (before KAFKA-7415 the epoch is cached at the first append), or at or below the start
            # (truncateFromStart, for DeleteRecords and retention, moves the entry up to the log start)
            if offset is None or max(start, log.log_start_offset) >= offset:
                continue
            return {"leader": br.broker_id, "partition": p, "leader_epoch": part.leader_epoch,
                    "leader_epoch_start_offset": start, "epoch_cache_start": offset,
                    "log_end_offset": log.log_end_offset}
    return None


def crashed_broker_forgets(cfg, pre: ClusterState, a, post: ClusterState):
    """INV crashed_broker_forgets: a broker that stops keeps none of its process's memory: no parked produce or fetch,
    no Partition, no fetcher, nothing a later incarnation could answer or act on."""
    for br0, br1 in zip(pre.brokers, post.brokers):
        if br0 is br1 or not br0.alive or br1.alive:
            continue
        kept = [name for name, v in (("delayed_produces", br1.delayed_produces), ("delayed_fetches", br1.delayed_fetches),
                                     ("partitions", any(x is not None for x in br1.partitions)),
                                     ("fetchers", any(x is not None for x in br1.fetchers))) if v]
        if kept:
            return {"broker": br1.broker_id, "kept": kept,
                    "delayed_produces": len(br1.delayed_produces), "delayed_fetches": len(br1.delayed_fetches)}
    return None


def follower_fetches_current_epoch(cfg, pre: ClusterState, a, post: ClusterState):
    """INV follower_fetches_current_epoch (F5-F6, KIP-320): once a LeaderAndIsr has made a broker a follower, its fetcher
    for the partition fetches from the Partition's leader in the Partition's leader epoch (makeFollower restarts the
    fetcher unless leader and epoch are both unchanged)."""
    if not cfg.kip_320:
        return None                              # before KIP-320 a fetcher may keep an epoch-older state (KAFKA-7164)
    for br0, br1 in zip(pre.brokers, post.brokers):
        if br0 is br1 or br0.partitions is br1.partitions or not br1.alive:
            continue
        b = br1.broker_id
        for p, part in enumerate(br1.partitions):
            f = br1.fetchers[p]
            if f is None or type(part) is not Partition or part.leader == b or part.leader < 0:
                continue
            if f.leader != part.leader or f.leader_epoch != part.leader_epoch:
                return {"broker": b, "partition": p, "leader": part.leader, "leader_epoch": part.leader_epoch,
                        "fetching_from": f.leader, "fetch_leader_epoch": f.leader_epoch}
    return None


def controller_in_own_session(cfg, pre: ClusterState, a, post: ClusterState):
    """INV controller_in_own_session: a ZooKeeper-era controller acts only with the session it was elected in; when
    its broker creates a new session (a new registration), the controller of the old one has resigned."""
    z0, z1 = pre.zk, post.zk
    if z0 is z1 or z0.registrations is z1.registrations or not pre.controllers:
        return None
    for b, (r0, r1) in enumerate(zip(z0.registrations, z1.registrations)):
        if r1 != r0 and r1 >= 0:
            c0, c1 = pre.controller_on(b), post.controller_on(b)
            if c0 is not None and c1 is not None and c1.epoch == c0.epoch:
                return {"broker": b, "controller_epoch": c1.epoch, "broker_epoch_before": r0, "broker_epoch_after": r1}
    return None


def fetch_epoch_fenced(cfg, pre: ClusterState, a, post: ClusterState):
    """INV fetch_epoch_fenced (FE3, KIP-320): a leader answers a follower's fetch that carries an older leader epoch than
    its Partition's FENCED_LEADER_EPOCH, and one that carries a newer epoch UNKNOWN_LEADER_EPOCH."""
    answer = _fetch_answer(pre, a, post) if cfg.kip_320 else None    # before KIP-320 a fetch carries no epoch
    if answer is None:
        return None
    f0, resp = answer
    part = pre.brokers[f0.leader].partitions[a.partition]
    if type(part) is not Partition or part.leader_epoch == f0.leader_epoch:
        return None
    want = E.FENCED_LEADER_EPOCH if part.leader_epoch > f0.leader_epoch else E.UNKNOWN_LEADER_EPOCH
    if resp.error != want:
        return {"leader": f0.leader, "follower": a.broker, "partition": a.partition, "fetch_leader_epoch":
                f0.leader_epoch, "leader_epoch": part.leader_epoch, "error": resp.error, "expected": want}
    return None


CATALOGUE += (
    Invariant("epoch_cache_trimmed", ALWAYS, STEP, epoch_cache_trimmed,
              "no epoch-cache entry starts past its log's LEO, and a truncation leaves none at or past the new LEO",
              "Log.truncateTo / LeaderEpochFileCache.truncateFromEnd (Kafka 2.4.0)", reads=ALIVE | LOGS),
    Invariant("out_of_range_only_outside_log", ALWAYS, STEP, out_of_range_only_outside_log,
              "a follower's fetch is answered OFFSET_OUT_OF_RANGE only for an offset outside [log start, LEO]",
              "Log.read / ReplicaManager.readFromLocalLog (Kafka 2.4.0); FE5"),
    Invariant("fetch_epoch_fenced", ALWAYS, STEP, fetch_epoch_fenced,
              "a follower's fetch in an older leader epoch than the leader's is answered FENCED_LEADER_EPOCH, in a newer "
              "one UNKNOWN_LEADER_EPOCH", "Partition.checkCurrentLeaderEpoch via localLogWithEpochOrException (Kafka 2.4.0, "
              "KIP-320); FE3"),
    Invariant("leader_epoch_start_bound", ALWAYS, STATE, leader_epoch_start_bound,
              "where a leader's epoch cache holds its leader epoch, it starts at or below its leader-epoch start offset",
              "Partition.makeLeader leaderEpochStartOffsetOpt and maybeAssignEpochStartOffset (Kafka 2.4.0, "
              "KAFKA-7415); M4-M5", reads=ALIVE | PARTITIONS | LOGS),
    Invariant("follower_fetches_current_epoch", ALWAYS, STEP, follower_fetches_current_epoch,
              "a follower's fetcher fetches from its Partition's leader in its Partition's leader epoch",
              "Partition.makeFollower / ReplicaManager.makeFollowers (Kafka 2.4.0, KIP-320); F5-F6",
              reads=ALIVE | PARTITIONS),
    Invariant("controller_in_own_session", ALWAYS, STEP, controller_in_own_session,
              "a controller does not outlive the ZooKeeper session it was elected in: a new registration of its broker "
              "finds it resigned",
              "KafkaController's StateChangeHandler.beforeInitializingSession: the Expire event's onControllerResignation "
              "runs before the new session exists (Kafka 2.4.0)"),
    Invariant("crashed_broker_forgets", ALWAYS, STEP, crashed_broker_forgets,
              "a broker that stops keeps no parked request, Partition or fetcher of its process",
              "KafkaServer.shutdown / process exit: ReplicaManager, purgatories and fetchers are in memory "
              "(Kafka 2.4.0)", reads=ALIVE),
)


# --------------------------------------------------------------------------- KIP-966: Vanlightly/kafka-tlaplus
# kip_966_properties.tla checks three properties the entries above did not state.  NoCommittedRecordLostGlobally is
# acked_durability where that one is silent (no live leader in the record's epoch or later: acked_durability holds
# every such leader to the record, so together they are the TLA+ property, at the record's own offset); its
# tolerance differs (the specification disables it once MinISR replicas may lose data), so it is an entry of its own
# rather than a clause of acked_durability, which mirrors LeaderCompletenessProperty.  MinIsrRecoveryQuorum reads the
# specification's LastKnownELR, which the controller does not keep as the specification does: it is rebuilt here
# from the metadata log by the specification's own rule (ApplyPartitionChange).  EventuallyRuns is the liveness
# property broker_registers below.
def _live_leader_epochs(s: ClusterState) -> dict:
    """partition -> the newest leader epoch a live broker leads it in (``_leaders``: its Partition says it leads)."""
    out: dict = {}
    for p in range(len(s.zk.assignment)):
        for _br, part in _leaders(s, p):
            if part.leader_epoch > out.get(p, -1):
                out[p] = part.leader_epoch
    return out


def _owed_acked(s: ClusterState):
    """(record id, offset, acked epoch, partition) of every record acknowledged to acks=all that is still owed: not a
    documented loss of an unclean election, not of a topic deleted or queued for deletion, not below a log start
    (deleted on purpose), as acked_durability gives them up."""
    g = s.ghost
    lost = lost_records(g) if g.unclean_losses else ()
    for rid, offset, epoch, _b, p in g.acked:
        if lost and (p, offset, rid) in lost or topic_gone(s, p) or offset < _deleted_below(s, p):
            continue
        yield rid, offset, epoch, p


def _holds(log, offset: int, rid: int) -> bool:
    if log is None:
        return False
    entry = log.entry_at(offset)
    return entry is not None and entry[0] == rid


def _leaderless_acked(s: ClusterState):
    """The owed acknowledged records (``_owed_acked``) of a partition no live broker leads in the record's leader epoch
    or a later one: those acked_durability does not look at."""
    if not s.ghost.acked:
        return
    newest = _live_leader_epochs(s)
    for rid, offset, epoch, p in _owed_acked(s):
        if newest.get(p, -1) < epoch:
            yield rid, offset, epoch, p


def _min_isr(cfg, s: ClusterState, p: int) -> int:
    """min(min.insync.replicas, RF): the replicas an acks=all write reaches (KAFKA-15583's effectiveMinIsr; before it,
    a larger min.insync.replicas acknowledges nothing), and so the lossy crashes it is promised to survive, less one."""
    return min(cfg.min_insync_replicas, len(s.zk.assignment[p]))


def acked_survives_leaderless(cfg, s: ClusterState):
    """INV acked_survives_leaderless (Vanlightly/kafka-tlaplus NoCommittedRecordLostGlobally where acked_durability
    is silent): while no live broker leads a partition in a record's acknowledged epoch or later, some replica, live
    or stopped (its log on disk), still holds that acknowledged record at its offset, unless as many lossy crashes
    (or disk wipes) as min ISR have happened (Kafka's tolerance, f = min ISR - 1, where the specification turns the
    property off)."""
    lossy = s.ghost.lossy_crashes
    for rid, offset, epoch, p in _leaderless_acked(s):
        if lossy >= _min_isr(cfg, s, p):
            continue
        if not any(_holds(br.logs[p], offset, rid) for br in s.brokers):
            return {"partition": p, "offset": offset, "record": rid, "acked_epoch": epoch,
                    "replicas": [[br.broker_id, br.alive, None if br.logs[p] is None else br.logs[p].log_end_offset]
                                 for br in s.brokers if br.broker_id in s.zk.assignment[p]],
                    "lossy_crashes": s.ghost.lossy_crashes}
    return None


def witness_acked_while_leaderless(cfg, s: ClusterState):
    """WITNESS acked_while_leaderless: an acknowledged record is owed while its partition has no live leader in its
    epoch or later (acked_survives_leaderless's premise)."""
    return next(_leaderless_acked(s), None) is not None


#: id(metadata log) -> (log, min.insync.replicas, the replay's answer): ``_last_known_elr`` per log object (states share
#: their log until a record is appended, so a walk replays each log once)
_LKE: dict = {}


def _last_known_elr(cfg, log: tuple) -> tuple:
    """Per partition (by the log's PartitionChangeRecords): (LastKnownELR, given up) as the TLA+ specification keeps
    them (kip_966_functions.tla ApplyPartitionChange): emptied while the ISR has min ISR members (here
    min(min.insync.replicas, RF), as PartitionChangeBuilder counts it), else it gains every replica that left the ELR.
    ``given up``: an unclean election (KIP-704 marks it RECOVERING) was written since the ISR last had min ISR members;
    it trades the quorum for availability, which the specification does not model."""
    entry = _LKE.get(id(log))
    if entry is not None and entry[0] is log and entry[1] == cfg.min_insync_replicas:
        return entry[2]
    lke: dict = {}
    given_up: dict = {}
    prev: dict = {}
    for rec in log:
        if type(rec) is not PartitionChangeRecord:
            continue
        p, reg = rec.partition, rec.registration
        old = prev.get(p)
        if rec.created or len(reg.isr) >= min(cfg.min_insync_replicas, len(reg.replicas)):
            lke[p], given_up[p] = frozenset(), False
        else:
            left = frozenset(old.elr if old is not None else ()) - frozenset(reg.elr)
            lke[p] = lke.get(p, frozenset()) | (left & frozenset(reg.replicas))
            if reg.leader_recovery_state == "RECOVERING" and reg.leader >= 0 \
                    and (old is None or old.leader != reg.leader):
                given_up[p] = True
        prev[p] = reg
    out = tuple((tuple(sorted(lke.get(p, ()))), given_up.get(p, False)) for p in range(max(prev, default=-1) + 1))
    if len(_LKE) >= 256:
        _LKE.clear()
    _LKE[id(log)] = (log, cfg.min_insync_replicas, out)
    return out


def min_isr_recovery_quorum(cfg, s: ClusterState):
    """INV min_isr_recovery_quorum (Vanlightly/kafka-tlaplus MinIsrRecoveryQuorum; KRaft with the ELR): a partition's
    recovery quorum, its ISR, ELR and LastKnownELR, has min(min.insync.replicas, RF) members, and while fewer lossy
    crashes than that have happened one of them holds every acknowledged record."""
    q = s.quorum
    if q is None or not cfg.eligible_leader_replicas:
        return None              # the ELR is KRaft's (KIP-966): without it the ISR keeps its last member, and no more
    g = s.ghost
    # every part it reads: most steps change none (copy-on-write states share them, and a tuple compares its
    # items by identity first), and then the last answer stands
    parts = (cfg, q.log, q.partitions, g.acked, g.unclean, g.unclean_losses, g.lossy_crashes, g.deleted_partitions,
             s.zk.delete_topics, s.zk.assignment, *[br.logs for br in s.brokers])
    if _QUORUM_CHECKED and _QUORUM_CHECKED[0] == parts:
        return _QUORUM_CHECKED[1]
    facts = _recovery_quorum_facts(cfg, s, q)
    _QUORUM_CHECKED[:] = (parts, facts)
    return facts


#: [parts read, answer] of min_isr_recovery_quorum's last call
_QUORUM_CHECKED: list = []


def _pending_unclean_from_outside(g, log: tuple) -> set:
    """The partitions of an unclean election whose leader has not taken over yet (its losses are documented then)
    and was outside the recovery quorum (ISR, ELR, last known leader) when elected: an admin's ElectLeaders UNCLEAN.
    The last known leader's own election (KIP-966) is judged as before."""
    waiting = {(u.partition, u.leader_epoch, u.leader) for u in g.unclean if u.log is None}
    if not waiting:
        return set()
    out, prev = set(), {}
    for rec in log:
        if type(rec) is PartitionChangeRecord:
            reg, old = rec.registration, prev.get(rec.partition)
            if (rec.partition, reg.leader_epoch, reg.leader) in waiting and old is not None \
                    and reg.leader not in (*old.isr, *old.elr, *old.last_known_elr):
                out.add(rec.partition)
            prev[rec.partition] = reg
    return out


def _recovery_quorum_facts(cfg, s: ClusterState, q):
    known = _last_known_elr(cfg, q.log)
    owed = None
    pending = _pending_unclean_from_outside(s.ghost, q.log)
    for p, part in enumerate(q.partitions):
        if p >= len(known) or known[p][1] or p in pending:
            continue             # given up, or an unclean election whose losses its leader's takeover will document
        need = _min_isr(cfg, s, p)
        quorum = sorted(set(part.isr) | set(part.elr) | set(known[p][0]))
        facts = {"partition": p, "isr": list(part.isr), "elr": list(part.elr), "last_known_elr": list(known[p][0]),
                 "min_isr": need}
        if len(quorum) < need:
            return {**facts, "problem": "recovery quorum below min ISR"}
        if s.ghost.lossy_crashes >= need or not s.ghost.acked:
            continue             # min ISR replicas may have lost data: Kafka promises no more (f = min ISR - 1)
        if owed is None:
            owed = tuple(_owed_acked(s))
        for rid, offset, epoch, pp in owed:
            if pp == p and not any(_holds(s.brokers[b].logs[p], offset, rid) for b in quorum):
                return {**facts, "problem": "no quorum member holds an acknowledged record", "offset": offset,
                        "record": rid, "acked_epoch": epoch, "lossy_crashes": s.ghost.lossy_crashes}
    return None


def witness_recovery_quorum_alone(cfg, s: ClusterState):
    """WITNESS recovery_quorum_alone (KRaft with the ELR; not in the catalogue, whose witnesses the ZooKeeper-era
    presets' campaigns must reach too): a partition whose ISR and ELR are both empty, so that its recovery quorum is
    its LastKnownELR alone (MinIsrRecoveryQuorum's premise)."""
    q = s.quorum
    if q is None or not cfg.eligible_leader_replicas:
        return False
    known = _last_known_elr(cfg, q.log)
    deleted = s.ghost.deleted_partitions             # a deleted topic's registration is empty, not leaderless
    return any(not part.isr and not part.elr and p < len(known) and known[p][0] and not known[p][1]
               and p not in deleted for p, part in enumerate(q.partitions))


def witness_broker_starting_up(cfg, s: ClusterState):
    """WITNESS broker_starting_up: a live broker has not finished starting up (EventuallyRuns' STARTING): ZooKeeper
    era, it has no session (it registers again on reconnecting); KRaft, a new incarnation is registered fenced and has
    not replayed its own RegisterBrokerRecord yet."""
    q = s.quorum
    for br in s.brokers:
        if not br.alive:
            continue
        if q is None:
            if not s.zk.sessions[br.broker_id]:
                return True
            continue
        reg = q.registrations[br.broker_id]
        if reg is not None and reg.fenced and reg.epoch == br.broker_epoch and br.metadata_offset <= reg.epoch \
                and type(q.log[reg.epoch]) is RegisterBrokerRecord and q.log[reg.epoch].fenced:
            return True          # registered fenced at start-up (the formed cluster's first records register unfenced)
    return False


def witness_leader_balanced(cfg, s: ClusterState):
    """WITNESS leader_balanced (KRaft with auto.leader.rebalance.enable; not in the catalogue, whose witnesses the
    ZooKeeper-era presets' campaigns must reach too): the quorum controller's leader balancing moved a leadership
    back to a partition's preferred replica (QuorumController.maybeBalancePartitionLeaders)."""
    return s.ghost.leader_balances > 0


def witness_config_unclean_election(cfg, s: ClusterState):
    """WITNESS config_unclean_election (KRaft with ``max_config_changes``; not in the catalogue, whose witnesses the
    other presets' campaigns must reach too): an unclean election that only the topic's dynamic
    unclean.leader.election.enable, set by an admin's IncrementalAlterConfigs, allowed (Kafka 3.9.0's
    uncleanLeaderElectionEnabledForTopic, KAFKA-12670; never with 3.7.0's, ``kafka_12670`` off)."""
    return s.ghost.config_unclean_elections > 0


def witness_dir_offline_moved_leader(cfg, s: ClusterState):
    """WITNESS dir_offline_moved_leader (KRaft with log directories; not in the catalogue, whose witnesses every
    preset's campaigns must reach): the quorum controller moved a leadership off a replica whose log directory went
    offline (ReplicationControlManager.handleDirectoriesOffline, Kafka 3.7.0)."""
    return s.ghost.dir_leader_moves > 0


CATALOGUE += (
    Invariant("acked_survives_leaderless", ALWAYS, STATE, acked_survives_leaderless,
              "while no live broker leads a partition in an acknowledged record's epoch or later, some replica (live "
              "or stopped) holds that record at its offset, with fewer lossy crashes than min(min.insync.replicas, "
              "RF) (with acked_durability: no acknowledged record is lost from every replica)",
              "Vanlightly/kafka-tlaplus NoCommittedRecordLostGlobally; Partition.appendRecordsToLeader / "
              "checkEnoughReplicasReachOffset, UnifiedLog (Kafka 2.4.0, 3.7.0)",
              reads=ACKED | LOSSES | ALIVE | PARTITIONS | LOGS | ZK_STATES),
    Invariant("min_isr_recovery_quorum", ALWAYS, STATE, min_isr_recovery_quorum,
              "KRaft with the ELR: a partition's ISR, ELR and LastKnownELR hold min(min.insync.replicas, RF) replicas, "
              "and, with fewer lossy crashes than that, one of them holds every acknowledged record",
              "Vanlightly/kafka-tlaplus MinIsrRecoveryQuorum; PartitionChangeBuilder.maybePopulateTargetElr, "
              "ReplicationControlManager.handleBrokerUncleanShutdown (KIP-966, Kafka 3.7.0, 3.9.0)"),
    Invariant("forged_alter_partition_refused", ALWAYS, STATE, forged_alter_partition_refused,
              "KRaft: the quorum controller refuses every invalid AlterPartition no leader of the model sends "
              "(AlterPartitionReceived: not the leader, a stale broker epoch, other leader or partition epochs, an ISR "
              "of non-replicas, without the leader or with a replica not active, a recovery state KIP-704 forbids)",
              "ReplicationControlManager.alterPartition / validateAlterPartitionData (Kafka 3.7.0); "
              "ReplicationControlManagerTest.testInvalidAlterPartitionRequests"),
    Invariant("acked_while_leaderless", SOMETIMES, STATE, witness_acked_while_leaderless,
              "an acknowledged record is owed while its partition has no live leader in its epoch or later",
              "vacuity guard of acked_survives_leaderless"),
    Invariant("broker_starting_up", SOMETIMES, STATE, witness_broker_starting_up,
              "a live broker has not finished starting up (no ZooKeeper session; KRaft: registered fenced, its "
              "registration not replayed)", "vacuity guard of broker_registers, eventually_unfenced"),
)


BY_NAME = {inv.name: inv for inv in CATALOGUE}


# --------------------------------------------------------------------------- EVENTUALLY (liveness)
@dataclass(frozen=True, slots=True)
class Liveness:
    """An EVENTUALLY property "whenever C holds, G eventually holds, unless C stops holding" of one partition.

    ``pending(cfg, s, p)`` is "C and not G".  It fails on a fair cycle of reachable states on which
    ``pending`` holds throughout (``properties.explore.check_liveness``, SCCs of the state graph, with the
    fairness it states); the fuzzing engines refute it by settling a run's last state
    (``properties.settle``: a fair, fault-free schedule, bounded) and finding it still pending.
    """

    name: str
    reference: str
    statement: str
    source: str
    pending: Callable
    kind: str = EVENTUALLY


def _zk_leader_of(s, p):
    """(broker, Partition, log) of the live broker leading p in the controller's current leader epoch, or None."""
    st = s.controller_partition_states()[p]
    if st is None or st.leader < 0:
        return None
    br = s.brokers[st.leader]
    part = br.partitions[p] if br.alive else None
    if type(part) is Partition and part.leader == br.broker_id and part.leader_epoch == st.leader_epoch \
            and br.logs[p] is not None:
        return br, part, br.logs[p]
    return None


def hw_reaches_leo_bad(cfg, s, p) -> bool:
    """L-a's "C and not G": p has a leader whose every ISR follower is live and fetching from it in its epoch, and
    the leader's HW is below its LEO, and so is the HW ``Partition.maybeIncrementLeaderHW`` would compute now.

    Kafka 2.4 recomputes the HW only at an append, a follower's LEO change or an ISR change, and counts replicas
    caught up within replica.lag.time.max.ms: a HW held back by a replica that died soon after catching up
    stays where it is, once its window has passed, until the next append (the settling phase found such runs
    on kafka-2.4 and no-kafka-6082; a leader alone in its ISR, or caught-up followers whose LEO no longer
    changes, never trigger a recompute).  Such a HW, which only the next trigger would move, counts as reached."""
    led = _zk_leader_of(s, p)
    if led is None:
        return False
    br, part, log = led
    if log.high_watermark >= log.log_end_offset or _hw_candidate(cfg, br, part, p, s.now) >= log.log_end_offset \
            or _fault_given_up(s, br.broker_id, p, part):
        return False      # (a pending expansion a fault's answer gave up on may hold the HW until new metadata)
    for f in part.isr:
        if f == br.broker_id:
            continue
        fb = s.brokers[f]
        fs = fb.fetchers[p] if fb.alive else None
        if type(fs) is not FetchState or fs.leader != br.broker_id or fs.leader_epoch != part.leader_epoch:
            return False
    return True


def partition_has_leader_bad(cfg, s, p) -> bool:
    """L-c's "C and not G": some member of p's ISR at the controller (of its ELR when the ISR is empty, KIP-966) is
    live and eligible (a live ZooKeeper session; KRaft: registered, unfenced), and no live broker leads p in the
    controller's current leader epoch.  With log directories (KIP-858) a member whose directory of p the controller
    holds offline is not eligible (LeaderAcceptor): like a fenced broker, it leads again once its broker restarts."""
    st = s.controller_partition_states()[p]
    if st is None:
        return False
    q = s.quorum
    if not any(s.brokers[b].alive and s.eligible(b)
               and (q is None or not st.directories or has_online_dir(q, b, st.directory(b)))
               for b in (st.isr or st.elr)):
        return False
    return _zk_leader_of(s, p) is None


def alter_isr_completes_bad(cfg, s, p) -> bool:
    """L-b's "C and not G": the live broker leading p in ZooKeeper's current leader epoch has an ISR change
    pending (KIP-497: an AlterIsr not yet answered, or answered without a commit), not one a fault's answer gave up."""
    led = _zk_leader_of(s, p)
    return led is not None and led[1].pending_isr is not None and not _fault_given_up(s, led[0].broker_id, p, led[1])


def _fault_given_up(s, b: int, p: int, part) -> bool:
    """Whether b's pending change of p is one the AlterIsrFailed fault answered with an error the leader gives up on
    (``Ghost.fault_given_up``): the stall is the fault's, not the protocol's."""
    return bool(s.ghost.fault_given_up) and (b, p, part.leader_epoch, part.zk_version) in s.ghost.fault_given_up


def _leader_followers(s, p):
    """(leader log, [(follower broker, its fetcher)]) for the live members of p's leader ISR (ZooKeeper's current
    leader) that fetch from that leader in its epoch, or None without such a leader."""
    led = _zk_leader_of(s, p)
    if led is None:
        return None
    br, part, log = led
    out = []
    for f in part.isr:
        fb = s.brokers[f]
        fs = fb.fetchers[p] if f != br.broker_id and fb.alive else None
        if type(fs) is FetchState and fs.leader == br.broker_id and fs.leader_epoch == part.leader_epoch \
                and fb.logs[p] is not None:
            out.append((fb, fs))
    return log, out


def isr_follower_catches_up_bad(cfg, s, p) -> bool:
    """"C and not G" of isr_follower_catches_up: a live member of ZooKeeper's leader's ISR fetches from it in its
    epoch and its LEO is not the leader's."""
    lf = _leader_followers(s, p)
    return lf is not None and any(fb.logs[p].log_end_offset != lf[0].log_end_offset for fb, _fs in lf[1])


def follower_keeps_fetching_bad(cfg, s, p) -> bool:
    """"C and not G" of follower_keeps_fetching: a live follower's fetch state names ZooKeeper's live leader and its
    current leader epoch, and has failed (AbstractFetcherThread.markPartitionFailed): nothing but a new
    LeaderAndIsr would make it fetch again."""
    led = _zk_leader_of(s, p)
    if led is None:
        return False
    br, part, _log = led
    for fb in s.brokers:
        fs = fb.fetchers[p] if fb.alive and fb.broker_id != br.broker_id else None
        if type(fs) is FetchState and fs.leader == br.broker_id and fs.leader_epoch == part.leader_epoch \
                and fs.state == FAILED:
            return True
    return False


def truncation_completes_bad(cfg, s, p) -> bool:
    """"C and not G" of truncation_completes: a live follower truncates p (OffsetsForLeaderEpoch) towards a live
    broker that leads p in the fetcher's leader epoch."""
    for fb in s.brokers:
        fs = fb.fetchers[p] if fb.alive else None
        if type(fs) is FetchState and fs.state == TRUNCATING:
            lb = s.brokers[fs.leader]
            lpart = lb.partitions[p] if lb.alive else None
            if type(lpart) is Partition and lpart.leader == lb.broker_id and lpart.leader_epoch == fs.leader_epoch:
                return True
    return False


def produce_completes_bad(cfg, s, p) -> bool:
    """"C and not G" of produce_completes: a live broker holds an acks=all produce of p that has not completed
    (DelayedProduce: by the HW, a leadership change or its timeout)."""
    return any(br.alive and any(dp.partition == p for dp in br.delayed_produces) for br in s.brokers)


#: The catalogue's EVENTUALLY properties (section 3 of the reference: L-a, L-b, L-c; the last three are checked
#: by the settling phase, ``properties.settle``, and by the explorer alike).
LIVENESS: tuple[Liveness, ...] = (
    Liveness("hw_reaches_leo", "L-a", "with every ISR follower live and fetching, the leader's HW reaches its LEO",
             "Partition.maybeIncrementLeaderHW after updateFollowerFetchState (Kafka 2.4.0); reference L-a",
             hw_reaches_leo_bad),
    Liveness("alter_isr_completes", "L-b", "a pending AlterIsr of ZooKeeper's current leader eventually resolves "
             "(committed, or replaced by a LeaderAndIsr)",
             "Partition.sendAlterIsrRequest / handleAlterIsrResponse, AlterIsrManager (Kafka 2.7.0); KIP-497; "
             "reference L-b", alter_isr_completes_bad),
    Liveness("partition_has_leader", "L-c", "a partition with a live ISR member eventually has a leader",
             "KafkaController.onReplicasBecomeOffline / OfflinePartitionLeaderElectionStrategy (Kafka 2.4.0); "
             "reference L-c", partition_has_leader_bad),
    Liveness("isr_follower_catches_up", "L-d", "a live ISR follower fetching from ZooKeeper's leader in its epoch "
             "eventually has the leader's LEO",
             "AbstractFetcherThread.processFetchRequest, Partition.updateFollowerFetchState (Kafka 2.4.0)",
             isr_follower_catches_up_bad),
    Liveness("truncation_completes", "L-e", "a follower truncating towards a live leader of its epoch eventually "
             "fetches again",
             "AbstractFetcherThread.maybeTruncate / truncateToEpochEndOffsets (Kafka 2.4.0); KIP-101, KIP-279",
             truncation_completes_bad),
    Liveness("follower_keeps_fetching", "L-g", "a live follower's fetcher for the current leader and leader epoch "
             "does not stay failed",
             "AbstractFetcherThread.markPartitionFailed / onPartitionFenced, truncateToEpochEndOffsets (Kafka 2.4.0); "
             "KAFKA-7786", follower_keeps_fetching_bad),
    Liveness("produce_completes", "L-f", "an acks=all produce held by a live broker eventually completes (by the HW, "
             "a leadership change or its timeout)",
             "DelayedProduce.tryComplete / onExpiration, ReplicaManager.appendRecords (Kafka 2.4.0)",
             produce_completes_bad),
)


# --------------------------------------------------------------------------- KRaft liveness
def eventually_unfenced_bad(cfg, s, p) -> bool:
    """"C and not G" of eventually_unfenced: a live KRaft broker that is not shutting down and whose registration is
    its own incarnation's is fenced at the controller.  A broker property: stated on partition 0 only."""
    q = s.quorum
    if q is None or p != 0:
        return False
    for br in s.brokers:
        reg = q.registrations[br.broker_id]
        if br.alive and not br.want_shutdown and reg is not None and reg.fenced and reg.epoch == br.broker_epoch:
            return True
    return False


def metadata_converges_bad(cfg, s, p) -> bool:
    """"C and not G" of metadata_converges: a live KRaft broker has not applied the whole metadata log.  Stated on
    partition 0 only."""
    q = s.quorum
    if q is None or p != 0:
        return False
    end = len(q.log)
    return any(br.alive and br.metadata_offset < end for br in s.brokers)


def acked_fully_replicated_bad(cfg, s, p) -> bool:
    """"C and not G" of acked_fully_replicated: the live leader of the controller's current leader epoch holds a
    record acknowledged to acks=all at its offset, and a live member of that leader's ISR lacks it there (a record
    below a log start was deleted on purpose)."""
    g = s.ghost
    if not g.acked:
        return False
    led = _zk_leader_of(s, p)
    if led is None:
        return False
    br, part, log = led
    for rid, offset, _epoch, _b, pp in g.acked:
        if pp != p:
            continue
        entry = log.entry_at(offset)
        if entry is None or entry[0] != rid:
            continue                             # not the leader's (lost, or deleted): the safety invariants' concern
        for f in part.isr:
            fb = s.brokers[f]
            if f == br.broker_id or not fb.alive:
                continue
            flog = fb.logs[p]
            if flog is not None and offset < flog.log_start_offset:
                continue
            fe = None if flog is None else flog.entry_at(offset)
            if fe is None or fe[0] != rid:
                return True
    return False


LIVENESS += (
    Liveness("eventually_unfenced", "L-h", "a live broker that heartbeats and is not shutting down is eventually "
             "unfenced",
             "Vanlightly/kafka-tlaplus EventuallyUnfenced; BrokerHeartbeatManager.calculateNextBrokerState, "
             "ReplicationControlManager.handleBrokerUnfenced (Kafka 3.5.0)", eventually_unfenced_bad),
    Liveness("metadata_converges", "L-i", "every live broker eventually applies the whole metadata log",
             "Vanlightly/kafka-tlaplus EventuallyMetadataConverges; BrokerMetadataListener / MetadataLoader "
             "(Kafka 3.5.0)", metadata_converges_bad),
    Liveness("acked_fully_replicated", "L-j", "a record acknowledged to acks=all that the current leader holds is "
             "eventually held by every live member of its ISR",
             "Vanlightly/kafka-tlaplus EventuallyAcknowledgedValueFullyReplicated; "
             "AbstractFetcherThread.processFetchRequest (Kafka 2.4.0)", acked_fully_replicated_bad),
)


def broker_registers_bad(cfg, s, p) -> bool:
    """"C and not G" of broker_registers: a live broker (KRaft: not shutting down) holds no registration of its own
    incarnation: ZooKeeper era, no live session with /brokers/ids/<b> at its broker epoch; KRaft, no registration at
    the controller with its broker epoch.  A broker property: stated on partition 0 only."""
    if p != 0:
        return False
    q = s.quorum
    for br in s.brokers:
        if not br.alive:
            continue
        b = br.broker_id
        if q is None:
            if not s.zk.sessions[b] or s.zk.registrations[b] != br.broker_epoch:
                return True
        elif not br.want_shutdown:
            reg = q.registrations[b]
            if reg is None or reg.epoch != br.broker_epoch:
                return True
    return False


LIVENESS += (
    Liveness("broker_registers", "L-k", "a live broker (KRaft: not shutting down) eventually holds a registration of "
             "its own incarnation (with eventually_unfenced and metadata_converges: it finishes starting up)",
             "Vanlightly/kafka-tlaplus EventuallyRuns; KafkaController.processRegisterBrokerAndReelect / "
             "KafkaZkClient.registerBroker (Kafka 2.4.0), BrokerLifecycleManager.sendBrokerRegistration / "
             "ClusterControlManager.registerBroker (Kafka 3.5.0)", broker_registers_bad),
)


def topic_gone(s: ClusterState, p: int) -> bool:
    """Partition p is not an existing partition of a live topic: not created yet, of a topic queued for deletion
    (/admin/delete_topics), or deleted (model/topics.py).  The liveness properties are about existing partitions (a
    topic being deleted elects no leader, TopicDeletionManager, Kafka 2.4.0), and the durability invariants skip the
    records of a deleted topic (they went with it)."""
    return s.zk.delete_topics or not s.zk.assignment[p] or p in s.ghost.deleted_partitions


def _for_existing(pending: Callable) -> Callable:
    def bad(cfg, s, p) -> bool:
        return not topic_gone(s, p) and pending(cfg, s, p)
    bad.__name__, bad.__doc__ = pending.__name__, pending.__doc__
    bad.unscoped = pending   # for callers that check topic_gone once for every property (settle._pending)
    return bad


LIVENESS = tuple(dataclasses.replace(lv, pending=_for_existing(lv.pending)) for lv in LIVENESS)
LIVENESS_BY_NAME = {lv.name: lv for lv in LIVENESS}
#: every name a trace, a preset or a campaign may name as violated: the catalogue's and the liveness properties'
NAMES = frozenset(BY_NAME) | frozenset(LIVENESS_BY_NAME)
SAFETY = tuple(inv for inv in CATALOGUE if inv.kind == ALWAYS)
WITNESSES = tuple(inv for inv in CATALOGUE if inv.kind == SOMETIMES)
#: the documented losses (``unclean_loss``): events, reported with their facts, never violations
DOCUMENTED_LOSSES = tuple(inv for inv in CATALOGUE if inv.kind == DOCUMENTED)


def check_state(cfg, s: ClusterState, step: int, invariants=CATALOGUE) -> list[Violation]:
    """Every ALWAYS state invariant that fails in s."""
    return _check_states(cfg, s, step, _plans(invariants)[0], -1)


def check_transition(cfg, pre: ClusterState, a, post: ClusterState, step: int,
                     invariants=CATALOGUE, incremental: bool = False) -> list[Violation]:
    """Every ALWAYS invariant that fails on the transition pre --a--> post (state invariants on post).

    A step invariant whose ``reads`` parts the step left unchanged is not run: it compares those
    parts before and after, so it finds nothing.  With ``incremental`` the caller vouches that every
    state invariant in ``invariants`` held on ``pre`` (the engines check from the initial state and
    stop, or stop checking an invariant, at its first failure); a state invariant whose ``reads``
    parts are unchanged then holds on ``post`` too and is not run either.  Most steps change none of the
    parts the state invariants read (a tick, a fetch request, a control request delivered to a follower...).
    """
    state_plan, step_plan = _plans(invariants)
    changed = changes(pre, post)
    out = _check_states(cfg, post, step, state_plan, changed if incremental else -1)
    for name, reads, check in step_plan:
        if reads is None or reads & changed:
            facts = check(cfg, pre, a, post)
            if facts is not None:
                out.append(Violation(name, step, facts))
    return out


def _check_states(cfg, s: ClusterState, step: int, plan: tuple, changed: int) -> list[Violation]:
    """The violations of a state plan's invariants in s, running those whose ``reads`` meet ``changed``
    (-1: every one)."""
    out = []
    for name, reads, check in plan:
        if reads is None or reads & changed:
            facts = check(cfg, s)
            if facts is not None:
                out.append(Violation(name, step, facts))
    return out


#: id(invariants) -> (invariants, its plans), for tuples of invariants (``node.memo_by_identity``).
_PLANS: dict = {}


def _plan_of(invariants: tuple) -> tuple:
    """(state plan, step plan): the ALWAYS invariants of each scope as (name, reads, check)."""
    return tuple(tuple((inv.name, inv.reads, inv.check) for inv in invariants
                       if inv.kind == ALWAYS and inv.scope == scope) for scope in (STATE, STEP))


def _plans(invariants) -> tuple:
    if type(invariants) is not tuple:   # a list may change between calls: not cached
        return _plan_of(tuple(invariants))
    return memo_by_identity(_PLANS, invariants, _plan_of)


def witnesses(cfg, s: ClusterState) -> frozenset:
    """Names of the SOMETIMES witnesses that hold in s, and of the documented losses (``unclean_loss``) it records:
    a run's witnesses say what it reached, so a campaign's runs table shows which runs lost records to an unclean
    election (``documented_losses`` gives their facts)."""
    out = [inv.name for inv in WITNESSES if inv.check(cfg, s)]
    if s.ghost.unclean_losses:
        out.extend(inv.name for inv in DOCUMENTED_LOSSES if inv.check(cfg, s) is not None)
    return frozenset(out)


def documented_losses(cfg, s: ClusterState) -> list:
    """The documented losses recorded in s, as ``Violation``-shaped records (never violations): (name, facts)."""
    out = []
    for inv in DOCUMENTED_LOSSES:
        facts = inv.check(cfg, s)
        if facts is not None:
            out.append((inv.name, facts))
    return out

