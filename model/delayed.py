"""DelayedProduce and DelayedFetch: requests parked in the produce and fetch purgatories, and how they complete.

Kafka parks an acks=-1 produce in the produce purgatory and completes it when
the HW passes the last appended offset, when the broker stops being leader
(become follower, StopReplica), or when its timeout expires (section 1.9).
The client's response is recorded in the ghost: an acks=-1 NONE adds the
record to ``Ghost.acked``.

A consumer's fetch that finds fewer than fetch.min.bytes (here: records) waits
in the fetch purgatory (``DelayedFetch``) until ``tryComplete`` finds the
partition gone, led elsewhere or fenced, or enough records below the HW; every
purgatory check of a partition (``checkAndCompleteAll``, ``completeDelayedFetchOrProduceRequests``)
tries both kinds, and the timeout (fetch.max.wait.ms) completes it with what
is there.  Its answer goes to ``ghost.responses.consumer_fetch`` and
``ghost.consumed`` as an immediate one does.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import errors as E
from .config import ModelConfig
from .list_offsets import OffsetsError, get_partition_or_exception, local_log_with_epoch_or_exception
from .losses import judge
from .state import Broker, ClusterState, DelayedFetch, DelayedProduce, Partition, ProduceResponseData


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


def effective_min_isr(cfg: ModelConfig, part) -> int:
    """Partition.effectiveMinIsr (Kafka 3.7.0, KAFKA-15583): min.insync.replicas capped at the replica count."""
    if cfg.kip_500 and cfg.kafka_15583:
        return min(cfg.min_insync_replicas, len(part.remote_replicas) + 1)
    return cfg.min_insync_replicas


def check_enough_replicas_reach_offset(cfg: ModelConfig, br: Broker, p: int, required_offset: int):
    """Partition.checkEnoughReplicasReachOffset (Kafka 2.4.0 / 2.7.0 / 3.7.0, P7): (done, error); 2.7 counts the
    maximal ISR, 3.7 compares it with effectiveMinIsr (KAFKA-15583)."""
    part, error = leader_partition_or_error(br, p)
    if part is None:
        return True, error
    if br.logs[p].high_watermark >= required_offset:
        pend = part.pending_isr
        if effective_min_isr(cfg, part) <= len(part.isr) + (1 if pend is not None and pend.expand else 0):
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
    """DelayedProduce.tryComplete for every produce watching partition p (Kafka 2.4.0, P7-P8).

    Every caller is a ``checkAndCompleteAll`` (the HW moved) or ``completeDelayedFetchOrProduceRequests`` (become
    follower, StopReplica), which check the fetch purgatory too: the fetches watching p are tried first."""
    if br.delayed_fetches:
        try_complete_delayed_fetch(cfg, s, br, p)
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


# --------------------------------------------------------------------------- DelayedFetch
@dataclass(frozen=True, slots=True)
class LogOffsetSnapshot:
    """kafka.log.LogOffsetSnapshot (Kafka 2.4.0): the offsets a DelayedFetch compares, read together."""

    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    last_stable_offset: int   # = the HW: no transactions


def fetch_offset_snapshot(br: Broker, p: int, current_leader_epoch: int, fetch_only_from_leader: bool):
    """ReplicaManager.getPartitionOrException + Partition.fetchOffsetSnapshot (Kafka 2.4.0): (LogOffsetSnapshot, NONE),
    or (None, the error): KAFKA_STORAGE_ERROR, NOT_LEADER_FOR_PARTITION / REPLICA_NOT_AVAILABLE (not hosted, known to
    the metadata cache), UNKNOWN_TOPIC_OR_PARTITION, then FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH (KIP-320) before
    NOT_LEADER_FOR_PARTITION for a follower when only the leader may answer."""
    try:
        part = get_partition_or_exception(br, p, expect_leader=fetch_only_from_leader)
        log = local_log_with_epoch_or_exception(br, part, current_leader_epoch, require_leader=fetch_only_from_leader)
    except OffsetsError as e:
        return None, e.error
    hw = log.high_watermark
    return LogOffsetSnapshot(log.log_start_offset, log.log_end_offset, hw, hw), E.NONE


def delayed_fetch_can_complete(br: Broker, df: DelayedFetch) -> bool:
    """DelayedFetch.tryComplete (Kafka 2.4.0) for a consumer's partition: a fetch whose offset is unknown (a preferred
    read replica was answered) waits for its timeout; an error from the offsets read completes it (case A not leader,
    B no replica, C unknown partition, D offline log, E fenced epoch); else the records between the fetch offset and
    the HW (= LSO) accumulate, and fetch.min.bytes of them complete it (case G).  Case F (another segment) does not
    arise: a log is one segment here; case H is a follower's."""
    if not df.offset_known:
        return False
    snap, _error = fetch_offset_snapshot(br, df.partition, df.current_leader_epoch, not df.client_metadata)
    if snap is None:
        # UNKNOWN_LEADER_EPOCH, which Kafka's tryComplete would not catch, cannot come here: the fetch was parked in
        # an epoch at least its own, and a partition's epoch only grows while it is hosted
        return True
    end = snap.high_watermark if df.isolation == "read_uncommitted" else snap.last_stable_offset
    return max(end - df.fetch_offset, 0) >= df.min_bytes


def note_consumed(s: ClusterState, br: Broker, p: int, resp) -> None:
    """Keep a consumer's answer (``ghost.responses.consumer_fetch``) and the records it read (``ghost.consumed``)."""
    note_response(s, "consumer_fetch", br.broker_id, p, resp)
    if resp.error == "NONE":
        note_error(s, "NONE")
        if resp.entries:
            # the leader epoch the read is judged in: the serving broker's, or the record's own when that is newer (a
            # follower that has not heard of the record's epoch, KIP-392); for a leader's read, always its own
            epoch = br.partitions[p].leader_epoch
            seen = {(p, resp.fetch_offset + i, rid, max(epoch, e)) for i, (rid, e) in enumerate(resp.entries)}
            old = s.ghost.consumed
            if not seen.issubset(old):
                s.ghost_mut().consumed = tuple(sorted(seen.union(old)))
                if s.ghost.unclean:   # served by a broker an unclean election deposed: a documented loss?
                    judge(s, p, [(off, rid, e) for _p, off, rid, e in sorted(seen - set(old))])


def complete_delayed_fetch(cfg: ModelConfig, s: ClusterState, br: Broker, df: DelayedFetch) -> None:
    """DelayedFetch.onComplete (Kafka 2.4.0): readFromLocalLog again with the request's fetch data, the answer to the
    consumer."""
    from .replica_manager import read_for_consumer   # replica_manager imports this module
    resp = read_for_consumer(cfg, s, br, df.partition, df.fetch_offset, df.current_leader_epoch, df.client_metadata,
                             df.rack, df.isolation)
    if resp.error != E.NONE:
        note_error(s, resp.error)
    note_consumed(s, br, df.partition, resp)


def try_complete_delayed_fetch(cfg: ModelConfig, s: ClusterState, br: Broker, p: int) -> None:
    """DelayedFetchPurgatory.checkAndComplete(partition p) (Kafka 2.4.0): DelayedFetch.tryComplete for every fetch
    watching p, in arrival order; the completed ones answer and leave the purgatory."""
    kept = []
    done = []
    for df in br.delayed_fetches:
        if df.partition == p and delayed_fetch_can_complete(br, df):
            done.append(df)
        else:
            kept.append(df)
    if done:
        br.delayed_fetches = tuple(kept)
        for df in done:
            complete_delayed_fetch(cfg, s, br, df)


def expire_delayed_fetch(cfg: ModelConfig, s: ClusterState, br: Broker, request_id: int) -> bool:
    """DelayedFetch.onExpiration, then forceComplete / onComplete (Kafka 2.4.0): the fetch answers with what there is."""
    for i, df in enumerate(br.delayed_fetches):
        if df.request_id == request_id:
            br.delayed_fetches = br.delayed_fetches[:i] + br.delayed_fetches[i + 1:]
            complete_delayed_fetch(cfg, s, br, df)
            return True
    return False
