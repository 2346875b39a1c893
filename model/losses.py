"""Documented losses of unclean leader elections: ghost bookkeeping, no protocol.

With ``unclean.leader.election.enable`` the controller may elect a replica outside the ISR
(PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection, Kafka 2.4.0); whatever the ISR had
committed beyond that replica's log is gone, as Kafka documents for the setting.  The model names each
such loss instead of exempting the run: ``Ghost.unclean`` records every unclean election (partition,
leader epoch, leader) and, when the elected replica first leads in that epoch or a later one, its log then;
``Ghost.unclean_losses`` lists every record acknowledged to an acks=all producer or read by a consumer
in an *older* epoch that this log lacks at the record's offset: at the takeover, or later, when a
deposed leader that has not heard of the election acknowledges or serves it.  The durability
invariants exempt exactly those records; every other record, and any later loss, is still checked.
"""

from __future__ import annotations

from .node import replace_at
from .state import Broker, ClusterState, UncleanElection


def note_unclean_election(s: ClusterState, p: int, leader_epoch: int, leader: int) -> None:
    """The controller wrote an unclean election of ``leader`` in ``leader_epoch`` (ghost)."""
    g = s.ghost_mut()
    g.unclean_elections += 1
    g.unclean = g.unclean + (UncleanElection(p, leader_epoch, leader),)


def note_takeover(s: ClusterState, br: Broker, p: int, leader_epoch: int) -> None:
    """``br`` became leader of ``p`` in ``leader_epoch``: an unclean election of ``p`` that chose ``br`` in that epoch
    or an earlier one, and that ``br`` has not taken over yet, is taken over now (in its own epoch, or in a later
    one a clean election gave ``br`` from the ISR the unclean one left): keep ``br``'s log as it is and judge
    every promise made so far on ``p`` against it."""
    g = s.ghost
    if not g.unclean:
        return
    taken = False
    b = br.broker_id
    for i, u in enumerate(g.unclean):
        if u.partition == p and u.leader == b and u.log is None and u.leader_epoch <= leader_epoch:
            log = br.logs[p]
            g = s.ghost_mut()
            g.unclean = replace_at(g.unclean, i, UncleanElection(
                p, u.leader_epoch, u.leader, leader_epoch,
                (log.log_start_offset, tuple(e[0] for e in log.entries))))
            taken = True
    if taken:
        judge(s, p, [(off, rid, epoch) for rid, off, epoch, _b, q in g.acked if q == p]
              + [(off, rid, epoch) for q, off, rid, epoch in g.consumed if q == p])


def judge(s: ClusterState, p: int, promises) -> None:
    """Add to ``Ghost.unclean_losses`` each promise ``(offset, record id, epoch)`` on ``p`` that an unclean leader,
    elected in a later epoch and since taken over, did not hold at that offset (the first such election)."""
    g = s.ghost
    taken = [u for u in g.unclean if u.partition == p and u.log is not None]
    if not taken:
        return
    known = {(q, off, rid) for q, _e, _l, off, rid in g.unclean_losses}
    new = []
    for off, rid, epoch in promises:
        if (p, off, rid) in known:
            continue
        for u in taken:
            start, ids = u.log
            if epoch < u.leader_epoch and not (start <= off < start + len(ids) and ids[off - start] == rid):
                new.append((p, u.leader_epoch, u.leader, off, rid))
                known.add((p, off, rid))
                break
    if new:
        g = s.ghost_mut()
        g.unclean_losses = tuple(sorted(g.unclean_losses + tuple(new)))


def lost_records(g) -> frozenset:
    """(partition, offset, record id) of every documented loss."""
    return frozenset((p, off, rid) for p, _e, _l, off, rid in g.unclean_losses)
