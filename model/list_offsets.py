"""ListOffsets (v5, Kafka 2.4.0): LATEST, EARLIEST and by timestamp, for clients and replicas.

A ListOffsets request names a partition, a target timestamp (``LATEST_TIMESTAMP`` -1, ``EARLIEST_TIMESTAMP``
-2, or a time), the requester's replica id and, for a client, an isolation level, and optionally the
requester's current leader epoch (KIP-320).  The replica id decides the rest, as in
``KafkaApis.handleListOffsetRequestV1AndAbove``:

====================  ====================  ===================  ==============================
replica id            isolation level       fetchOnlyFromLeader  LATEST answers
====================  ====================  ===================  ==============================
-1 (a consumer)       the request's         yes                  HW (read_uncommitted), LSO
                                                                 (read_committed; = HW here)
-2 (debugging)        none                  no (any replica)     LEO
>= 0 (a follower)     none                  yes                  LEO
====================  ====================  ===================  ==============================

The answer only goes to the requester: it changes nothing but ``ghost.responses.list_offsets``.  Record
timestamps are the clock at the leader's append (``ClusterState.record_timestamps``).
"""

from __future__ import annotations

from . import errors as E
from .log import Log
from .state import OFFLINE, Broker, ClusterState, ListOffsetsResponseData, Partition

LATEST_TIMESTAMP = -1        # ListOffsetRequest.LATEST_TIMESTAMP
EARLIEST_TIMESTAMP = -2      # ListOffsetRequest.EARLIEST_TIMESTAMP
CONSUMER_REPLICA_ID = -1     # ListOffsetRequest.CONSUMER_REPLICA_ID
DEBUGGING_REPLICA_ID = -2    # ListOffsetRequest.DEBUGGING_REPLICA_ID
NO_TIMESTAMP = -1            # RecordBatch.NO_TIMESTAMP, ListOffsetResponse.UNKNOWN_TIMESTAMP
UNKNOWN_OFFSET = -1          # ListOffsetResponse.UNKNOWN_OFFSET
NO_EPOCH = -1                # Optional.empty() leader epoch (RecordBatch.NO_PARTITION_LEADER_EPOCH on the wire)

#: isolation levels of a client request (IsolationLevel); a replica's request has none
ISOLATIONS = ("read_uncommitted", "read_committed")


class OffsetsError(Exception):
    """An ApiException thrown while answering, carried as its error name (Errors.forException)."""

    def __init__(self, error: str):
        super().__init__(error)
        self.error = error


def record_timestamp(s: ClusterState, record_id: int) -> int:
    """The timestamp the record's batch carries: the clock at its leader's append, NO_TIMESTAMP if unknown."""
    ts = s.record_timestamps
    return ts[record_id - 1] if 0 < record_id <= len(ts) else NO_TIMESTAMP


def get_partition_or_exception(br: Broker, p: int, expect_leader: bool) -> Partition:
    """ReplicaManager.getPartitionOrException / getPartitionOrError (Kafka 2.4.0): the hosted Partition or an error."""
    part = br.partitions[p]
    if type(part) is Partition:
        return part
    if part == OFFLINE:
        raise OffsetsError(E.KAFKA_STORAGE_ERROR)
    if p < len(br.metadata.partitions) and br.metadata.partitions[p] is not None:
        raise OffsetsError(E.NOT_LEADER_FOR_PARTITION if expect_leader else E.REPLICA_NOT_AVAILABLE)
    raise OffsetsError(E.UNKNOWN_TOPIC_OR_PARTITION)


def local_log_with_epoch_or_exception(br: Broker, part: Partition, current_leader_epoch: int,
                                      require_leader: bool) -> Log:
    """Partition.localLogWithEpochOrException / getLocalLog / checkCurrentLeaderEpoch (Kafka 2.4.0, KIP-320)."""
    if current_leader_epoch >= 0:
        if part.leader_epoch > current_leader_epoch:
            raise OffsetsError(E.FENCED_LEADER_EPOCH)
        if part.leader_epoch < current_leader_epoch:
            raise OffsetsError(E.UNKNOWN_LEADER_EPOCH)
    if require_leader and part.leader != br.broker_id:
        raise OffsetsError(E.NOT_LEADER_FOR_PARTITION)
    log = br.logs[part.partition]
    if log is None:
        raise OffsetsError(E.NOT_LEADER_FOR_PARTITION if require_leader else E.REPLICA_NOT_AVAILABLE)
    return log


def fetch_offset_by_timestamp(s: ClusterState, log: Log, target: int):
    """Log.fetchOffsetByTimestamp + FileRecords.searchForTimestamp (Kafka 2.4.0): (timestamp, offset, epoch) or None.

    EARLIEST: the log start offset, with the first cached epoch if it starts at or below it; LATEST: the LEO with
    the cache's latest epoch; a time: the first record at or above the log start whose timestamp is >= it, with
    its batch's epoch (one record per batch and one segment here).
    """
    if target == EARLIEST_TIMESTAMP:
        cache = log.epoch_cache
        epoch = cache[0][0] if cache and cache[0][1] <= log.log_start_offset else NO_EPOCH
        return NO_TIMESTAMP, log.log_start_offset, epoch
    if target == LATEST_TIMESTAMP:
        return NO_TIMESTAMP, log.log_end_offset, log.latest_epoch
    for i, (rid, epoch) in enumerate(log.entries):
        ts = record_timestamp(s, rid)
        if ts >= target:
            return ts, log.log_start_offset + i, epoch
    return None


def partition_fetch_offset_for_timestamp(s: ClusterState, br: Broker, part: Partition, timestamp: int,
                                         isolation, current_leader_epoch: int, fetch_only_from_leader: bool):
    """Partition.fetchOffsetForTimestamp (Kafka 2.4.0): (timestamp, offset, epoch) or None; OFFSET_NOT_AVAILABLE
    while a new leader's HW is below its epoch start offset (KIP-207), for client requests only."""
    log = local_log_with_epoch_or_exception(br, part, current_leader_epoch, fetch_only_from_leader)
    hw = log.high_watermark
    if isolation is None:
        last_fetchable = log.log_end_offset
    else:
        last_fetchable = hw          # READ_UNCOMMITTED: the HW; READ_COMMITTED: the LSO, = HW (no transactions)
    start = part.leader_epoch_start_offset   # leaderEpochStartOffsetOpt: -1 = None (a follower)
    lagging = isolation is not None and start >= 0 and start > hw
    if timestamp == LATEST_TIMESTAMP:
        if lagging:
            raise OffsetsError(E.OFFSET_NOT_AVAILABLE)
        return NO_TIMESTAMP, last_fetchable, part.leader_epoch
    found = fetch_offset_by_timestamp(s, log, timestamp)
    if timestamp == EARLIEST_TIMESTAMP:
        return found
    if found is not None and found[1] < last_fetchable:
        return found
    if lagging:
        raise OffsetsError(E.OFFSET_NOT_AVAILABLE)
    return None


def handle_list_offsets(s: ClusterState, br: Broker, p: int, timestamp: int, isolation: str, replica_id: int,
                        current_leader_epoch: int) -> ListOffsetsResponseData:
    """KafkaApis.handleListOffsetRequestV1AndAbove + ReplicaManager.fetchOffsetForTimestamp (Kafka 2.4.0, v5).

    The replica id decides fetchOnlyFromLeader (all but the debugging id) and the isolation level (clients only).
    """
    fetch_only_from_leader = replica_id != DEBUGGING_REPLICA_ID
    level = isolation if replica_id == CONSUMER_REPLICA_ID else None
    try:
        part = get_partition_or_exception(br, p, fetch_only_from_leader)
        found = partition_fetch_offset_for_timestamp(s, br, part, timestamp, level, current_leader_epoch,
                                                     fetch_only_from_leader)
    except OffsetsError as e:
        return ListOffsetsResponseData(e.error, NO_TIMESTAMP, UNKNOWN_OFFSET, NO_EPOCH)
    if found is None:
        return ListOffsetsResponseData(E.NONE, NO_TIMESTAMP, UNKNOWN_OFFSET, NO_EPOCH)
    ts, offset, epoch = found
    return ListOffsetsResponseData(E.NONE, ts, offset, epoch)
