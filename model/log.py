"""The local log of one partition replica, and its leader-epoch cache.

A log is what ``LogManager`` keeps on disk: records (each a record id and the
leader epoch it was written in), the log start offset, the log end offset
(LEO), the high watermark (HW), the recovery point (flushed offset) and the
``leader-epoch-checkpoint`` cache of ``(epoch, start offset)`` entries.

Epoch-cache functions are pure functions over tuples of ``(epoch, start)``; the
log functions mutate a ``Log`` the caller has already cloned for this step.
"""

from __future__ import annotations

from .node import Node, record

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1

EpochCache = tuple  # tuple[tuple[int, int], ...] of (epoch, start offset), strictly increasing


def cache_assign(cache: EpochCache, epoch: int, start_offset: int) -> EpochCache:
    """LeaderEpochFileCache.assign / truncateAndAppend (Kafka 2.4.0): drop entries with epoch >= e or start >= o, append."""
    if cache:
        last_epoch, last_start = cache[-1]
        if last_epoch == epoch and start_offset >= last_start:
            return cache
    kept = tuple(e for e in cache if e[0] < epoch and e[1] < start_offset)
    return kept + ((epoch, start_offset),)


def cache_end_offset_for(cache: EpochCache, requested: int, log_end_offset: int) -> tuple[int, int]:
    """LeaderEpochFileCache.endOffsetFor (Kafka 2.4.0): (largest epoch <= requested, end offset of that epoch)."""
    if requested == UNDEFINED_EPOCH:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    latest = cache[-1][0] if cache else UNDEFINED_EPOCH
    if requested == latest:
        return requested, log_end_offset
    subsequent = [e for e in cache if e[0] > requested]
    if not subsequent:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    previous = [e for e in cache if e[0] <= requested]
    if not previous:
        return requested, subsequent[0][1]
    return previous[-1][0], subsequent[0][1]


def cache_end_offset_for_kip101(cache: EpochCache, requested: int, log_end_offset: int) -> int:
    """LeaderEpochFileCache.endOffsetFor (Kafka 0.11.0 / 1.1.0): an end offset only, UNDEFINED below the first epoch."""
    latest = cache[-1][0] if cache else UNDEFINED_EPOCH
    if requested == latest and requested != UNDEFINED_EPOCH:
        return log_end_offset
    subsequent = [e for e in cache if e[0] > requested]
    if not subsequent or requested < cache[0][0]:
        return UNDEFINED_EPOCH_OFFSET
    return subsequent[0][1]


def cache_truncate_from_end(cache: EpochCache, end_offset: int) -> EpochCache:
    """LeaderEpochFileCache.truncateFromEnd (Kafka 2.4.0): remove entries with start offset >= end_offset."""
    if end_offset >= 0 and cache and cache[-1][1] >= end_offset:
        return tuple(e for e in cache if e[1] < end_offset)
    return cache


@record
class Log(Node):
    """kafka.log.Log of one replica: records, offsets and the leader-epoch cache."""

    log_start_offset: int = 0
    #: one (record id, leader epoch) pair per offset from log_start_offset.
    entries: tuple = ()
    high_watermark: int = 0
    recovery_point: int = 0
    epoch_cache: EpochCache = ()

    @property
    def log_end_offset(self) -> int:
        return self.log_start_offset + len(self.entries)

    @property
    def latest_epoch(self) -> int:
        """Log.latestEpoch (Kafka 2.4.0): the last epoch in the cache, UNDEFINED if empty."""
        return self.epoch_cache[-1][0] if self.epoch_cache else UNDEFINED_EPOCH

    def entry_at(self, offset: int):
        """(record id, epoch) at ``offset``, or None outside [log start, LEO)."""
        i = offset - self.log_start_offset
        if 0 <= i < len(self.entries):
            return self.entries[i]
        return None

    def read(self, start: int, end: int) -> tuple:
        """Entries in [start, end)."""
        i, j = start - self.log_start_offset, end - self.log_start_offset
        return self.entries[i if i > 0 else 0:j if j > 0 else 0]


def append_as_leader(log: Log, record_ids: tuple, leader_epoch: int, epochs: bool = True) -> tuple[int, int]:
    """Log.appendAsLeader (Kafka 2.4.0): stamp the leader epoch, assign it in the cache; return (first, last) offset.
    Without ``epochs`` (message format below 0.11: no leaderEpochCache, a v1 batch has no partitionLeaderEpoch) the cache
    is left alone; the entry keeps the leader's epoch as the ghost's name for the record."""
    first = log.log_end_offset
    log.entries = log.entries + tuple((rid, leader_epoch) for rid in record_ids)
    if epochs:
        log.epoch_cache = cache_assign(log.epoch_cache, leader_epoch, first)
    return first, log.log_end_offset - 1


def append_as_follower(log: Log, entries: tuple, epochs: bool = True) -> None:
    """Log.appendAsFollower (Kafka 2.4.0): keep each batch's epoch and assign (epoch, base offset) in the cache (not for
    a message format below 0.11, ``epochs`` False: Log.leaderEpochCache is None)."""
    if not epochs:
        log.entries = log.entries + tuple(entries)
        return
    offset = log.log_end_offset
    cache = log.epoch_cache
    for _rid, epoch in entries:
        cache = cache_assign(cache, epoch, offset)
        offset += 1
    log.entries = log.entries + tuple(entries)
    log.epoch_cache = cache


def truncate_to(log: Log, target: int) -> bool:
    """Log.truncateTo (Kafka 2.4.0): drop offsets >= target, trim the epoch cache, lower HW and recovery point."""
    if target < 0:
        raise ValueError(f"cannot truncate a log to a negative offset {target}")
    if target >= log.log_end_offset:
        return False
    if target < log.log_start_offset:
        truncate_fully_and_start_at(log, target)
        return True
    log.entries = log.entries[:target - log.log_start_offset]
    log.epoch_cache = cache_truncate_from_end(log.epoch_cache, target)
    # Log.updateLogEndOffset (2.4.0): a HW above the new LEO is lowered to it (FO4).
    if log.high_watermark > target:
        log.high_watermark = target
    if log.recovery_point > target:
        log.recovery_point = target
    return True


def truncate_fully_and_start_at(log: Log, new_offset: int, kafka_9491: bool = True) -> None:
    """Log.truncateFullyAndStartAt (Kafka 2.4.1, KAFKA-9491; 2.4.0 without it): empty log starting at new_offset, epoch
    cache cleared.  2.4.0's updateLogEndOffset lowers a HW above new_offset to it and keeps a lower one, and the recovery
    point is min(new_offset, recovery point): both may stay below the new log start.  With KAFKA-9491's
    updateLogStartOffset both are raised to it, so the HW is new_offset either way."""
    log.entries = ()
    log.log_start_offset = new_offset
    log.epoch_cache = ()
    if kafka_9491:
        log.high_watermark = new_offset
        log.recovery_point = new_offset
    else:
        log.high_watermark = min(log.high_watermark, new_offset)
        log.recovery_point = min(log.recovery_point, new_offset)


def maybe_increment_log_start_offset(log: Log, new_start: int, kafka_9491: bool = True) -> bool:
    """Log.maybeIncrementLogStartOffset (Kafka 2.4.0; 2.4.1's updateLogStartOffset, KAFKA-9491): a larger log start drops
    the records below it and truncateFromStart trims the epoch cache; the caller has checked new_start <= HW (2.4.0
    throws OffsetOutOfRangeException above it).  True if the log start moved."""
    if new_start <= log.log_start_offset:
        return False
    drop = new_start - log.log_start_offset
    log.entries = log.entries[drop:]
    log.log_start_offset = new_start
    log.epoch_cache = cache_truncate_from_start(log.epoch_cache, new_start)
    if kafka_9491:
        # updateLogStartOffset (2.4.1): the HW and the recovery point are raised to the new log start
        if log.high_watermark < new_start:
            log.high_watermark = min(new_start, log.log_end_offset)
        if log.recovery_point < new_start:
            log.recovery_point = min(new_start, log.log_end_offset)
    return True


def deletable_segments(log: Log, retention_records: int, kafka_5634: bool = True) -> int:
    """Log.deleteRetentionSizeBreachedSegments / deletableSegments (Kafka 2.4.0; 0.11.0.0 before KAFKA-5634): the log
    start offset after the size-retention breach, one record per segment (retention.bytes counted in records).  The
    oldest segments go while the log is over the limit; with KAFKA-5634 (0.11.0.1) only segments wholly below the HW
    (``highWatermark >= upperBoundOffset``), before it any, the active one too (a new segment is rolled at the LEO)."""
    size = log.log_end_offset - log.log_start_offset
    if size < retention_records or size == 0:
        return log.log_start_offset
    target = log.log_start_offset + (size - retention_records)
    if kafka_5634 and target > log.high_watermark:
        target = log.high_watermark
    return max(target, log.log_start_offset)


def delete_old_segments(log: Log, retention_records: int, kafka_5634: bool = True, kafka_9491: bool = True) -> bool:
    """Log.deleteOldSegments -> deleteSegments (Kafka 2.4.0; 0.11.0.0 before KAFKA-5634): delete the breached segments,
    then the log start offset is the first remaining segment's base offset.  Before KAFKA-5634 it may pass the HW
    (0.11.0.0 set it without the HW check).  True if the log start moved."""
    target = deletable_segments(log, retention_records, kafka_5634)
    return maybe_increment_log_start_offset(log, target, kafka_9491)


def clamp_high_watermark(log: Log, hw: int) -> int:
    """Log.updateHighWatermark (Kafka 2.4.0): clamp to [log start offset, LEO]."""
    return min(max(hw, log.log_start_offset), log.log_end_offset)


def cache_truncate_from_start(cache: EpochCache, start_offset: int) -> EpochCache:
    """LeaderEpochFileCache.truncateFromStart (Kafka 2.4.0): entries starting at or below the offset go, the last kept at it."""
    before = [e for e in cache if e[1] <= start_offset]
    if not before:
        return cache
    return ((before[-1][0], start_offset),) + tuple(e for e in cache if e[1] > start_offset)


#: the operations an epoch-cache observation applies, by name (LeaderEpochFileCache, Kafka 2.4.0)
CACHE_OPS = ("assign", "truncate_from_end", "truncate_from_start", "clear", "log_end_offset")
CACHE_QUERIES = ("entries", "latest_epoch", "end_offset_for")


def epoch_cache_answer(cache: EpochCache, log_end_offset: int, ops, query):
    """What a LeaderEpochFileCache holding ``cache`` answers to ``query`` after ``ops``, as Kafka's unit tests ask it.

    The observation behind a trace's ``epoch_cache`` checks: the model's own cache functions applied to a copy
    (the state is not changed).  ``ops``: ``["assign", epoch, offset]``, ``["truncate_from_end", offset]``,
    ``["truncate_from_start", offset]``, ``["clear"]`` (clearAndFlush), ``["log_end_offset", n]`` (what the cache's
    logEndOffset function returns from then on, as LeaderEpochFileCacheTest sets its own; the log's LEO before).
    ``query``: ``"entries"`` (epochEntries, as pairs), ``"latest_epoch"`` (None when empty) or
    ``["end_offset_for", epoch]`` (2.4's endOffsetFor, as a pair).
    """
    for op in ops:
        name = op[0]
        if name == "assign":
            cache = cache_assign(cache, op[1], op[2])
        elif name == "truncate_from_end":
            cache = cache_truncate_from_end(cache, op[1])
        elif name == "truncate_from_start":
            cache = cache_truncate_from_start(cache, op[1])
        elif name == "clear":
            cache = ()
        elif name == "log_end_offset":
            log_end_offset = op[1]
        else:
            raise ValueError(f"unknown epoch cache operation {name!r} (one of {', '.join(CACHE_OPS)})")
    if query == "entries":
        return [list(e) for e in cache]
    if query == "latest_epoch":
        return cache[-1][0] if cache else None
    if isinstance(query, (list, tuple)) and len(query) == 2 and query[0] == "end_offset_for":
        return list(cache_end_offset_for(cache, query[1], log_end_offset))
    raise ValueError(f"unknown epoch cache query {query!r} (one of {', '.join(CACHE_QUERIES)})")
