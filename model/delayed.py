"""DelayedProduce: acks=-1 produce requests waiting for the HW, and how they complete.

Kafka parks an acks=-1 produce in the produce purgatory and completes it when
the HW passes the last appended offset, when the broker stops being leader
(become follower, StopReplica), or when its timeout expires (section 1.9).
The client's response is recorded in the ghost: an acks=-1 NONE adds the
record to ``Ghost.acked``.
"""

from __future__ import annotations

from . import errors as E
from .config import ModelConfig
from .losses import judge
from .state import Broker, ClusterState, DelayedProduce, Partition, ProduceResponseData


def note_error(s: ClusterState, error: str) -> None:
    """Record an error code in the ghost's coverage bit set."""
    bit = E.ERROR_BIT[error]
    if not s.ghost.errors_seen & bit:
        s.ghost_mut().errors_seen |= bit


def note_response(s: ClusterState, kind: str, b: int, p: int, value) -> None:
    """Keep ``value`` as the last response of ``kind`` for broker b and partition p (``Ghost.responses``)."""
    g = s.ghost
    r = g.responses
    rows = getattr(r, kind)
    if rows:
        old = rows[b][p]
        if old is value or old == value:   # the same answer again (a repeated error): nothing to record
            return
    g = s.ghost_mut()
    if r._tok is not g._tok:
        r = g.responses = r._clone(g._tok)
    if not rows:
        rows = ((None,) * len(s.zk.assignment),) * len(s.brokers)
    row = rows[b]
    setattr(r, kind, rows[:b] + (row[:p] + (value,) + row[p + 1:],) + rows[b + 1:])


def get_partition_or_error(br: Broker, p: int):
    """ReplicaManager.getPartitionOrError(expectLeader = true) (Kafka 2.4.0): (Partition, NONE) or (None, error)."""
    part = br.partitions[p]
    if type(part) is Partition:
        return part, E.NONE
    if part is not None:
        return None, E.KAFKA_STORAGE_ERROR
    known = p < len(br.metadata.partitions) and br.metadata.partitions[p] is not None
    return None, (E.NOT_LEADER_FOR_PARTITION if known else E.UNKNOWN_TOPIC_OR_PARTITION)


def leader_partition_or_error(br: Broker, p: int):
    """getPartitionOrError(expectLeader = true) + Partition.leaderLogIfLocal (Kafka 2.4.0): the led Partition or an error."""
    part, error = get_partition_or_error(br, p)
    if part is None:
        return None, error
    if part.leader != br.broker_id:
        return None, E.NOT_LEADER_FOR_PARTITION
    return part, E.NONE


def check_enough_replicas_reach_offset(cfg: ModelConfig, br: Broker, p: int, required_offset: int):
    """Partition.checkEnoughReplicasReachOffset (Kafka 2.4.0 / 2.7.0, P7): (done, error); 2.7 counts the maximal ISR."""
    part, error = leader_partition_or_error(br, p)
    if part is None:
        return True, error
    if br.logs[p].high_watermark >= required_offset:
        pend = part.pending_isr
        if cfg.min_insync_replicas <= len(part.isr) + (1 if pend is not None and pend.expand else 0):
            return True, E.NONE
        return True, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND
    return False, E.NONE


def respond_produce(s: ClusterState, br: Broker, dp: DelayedProduce, error: str) -> None:
    """The acks=-1 response reaches the producer; NONE makes its records acknowledged (ghost)."""
    note_error(s, error)
    note_response(s, "produce", br.broker_id, dp.partition,
                  ProduceResponseData(error, dp.first_offset if error == E.NONE else -1))
    if error == E.NONE:
        g = s.ghost_mut()
        epoch = br.partitions[dp.partition].leader_epoch
        g.acked = g.acked + tuple((rid, dp.first_offset + i, epoch, br.broker_id, dp.partition)
                                  for i, rid in enumerate(dp.record_ids))
        if g.unclean:   # a deposed leader acknowledging after an unclean takeover: a documented loss?
            judge(s, dp.partition, [(dp.first_offset + i, rid, epoch) for i, rid in enumerate(dp.record_ids)])


def try_complete_delayed_produce(cfg: ModelConfig, s: ClusterState, br: Broker, p: int) -> None:
    """DelayedProduce.tryComplete for every produce watching partition p (Kafka 2.4.0, P7-P8)."""
    if not br.delayed_produces:
        return
    kept = []
    for dp in br.delayed_produces:
        if dp.partition == p:
            done, error = check_enough_replicas_reach_offset(cfg, br, p, dp.required_offset)
            if done:
                respond_produce(s, br, dp, error)
                continue
        kept.append(dp)
    if len(kept) != len(br.delayed_produces):
        br.delayed_produces = tuple(kept)


def expire_delayed_produce(s: ClusterState, br: Broker, request_id: int) -> bool:
    """DelayedProduce.onExpiration (Kafka 2.4.0, P8): REQUEST_TIMED_OUT; the record stays in the log."""
    for i, dp in enumerate(br.delayed_produces):
        if dp.request_id == request_id:
            br.delayed_produces = br.delayed_produces[:i] + br.delayed_produces[i + 1:]
            respond_produce(s, br, dp, E.REQUEST_TIMED_OUT)
            return True
    return False
