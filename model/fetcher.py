"""The follower side: ReplicaFetcherThread fetch rounds and log truncation.

A fetch is two steps, as in Kafka: ``send_fetch`` builds the follower's
request and lets the leader handle it (``ReplicaManager.fetchMessages``), and
the response waits in the fetcher until ``process_fetch_response`` applies it,
so other actions can interleave between the leader's read and the follower's
append.  Truncation after a leader change is its own step
(``truncate_to_epoch_end_offset``) in the KIP-101 and KIP-279 protocols; in the
pre-KIP-101 protocol it happened inside ``make_followers``.  With truncate on fetch
(``kafka_10554``, 2.8.0) the fetch carries lastFetchedEpoch and the follower truncates
from the response's divergingEpoch (``truncate_on_fetch_response``).
"""

from __future__ import annotations

import dataclasses

from . import errors as E
from .config import ModelConfig
from .delayed import note_error
from .log import (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, append_as_follower, cache_end_offset_for,
                  cache_end_offset_for_kip101, cache_truncate_from_end, clamp_high_watermark,
                  maybe_increment_log_start_offset, truncate_fully_and_start_at, truncate_to)
from .replica_manager import fetch_messages
from .state import FAILED, FETCHING, TRUNCATING, ClusterState, Partition


def _truncate(s: ClusterState, log, offset: int) -> None:
    """Log.truncateTo on a follower, counted in the ghost when it removes records."""
    if truncate_to(log, offset):
        s.ghost_mut().truncations += 1


def send_fetch(cfg: ModelConfig, s: ClusterState, b: int, p: int) -> None:
    """AbstractFetcherThread.processFetchRequest, request half (Kafka 2.4.0; 2.8.0 lastFetchedEpoch): the leader
    reads and answers."""
    br = s.broker_mut(b)
    f = br.fetcher_mut(p)
    leader = s.broker_mut(f.leader)
    current_epoch = f.leader_epoch if cfg.kip_320 else -1
    log = br.logs[p]
    # PartitionFetchState.lastFetchedEpoch: the log's latest epoch (set from it at every state change and append)
    last_fetched = log.latest_epoch if cfg.kafka_10554 else -1
    f.inflight = fetch_messages(cfg, s, leader, p, b, f.fetch_offset, current_epoch, log.log_start_offset,
                                last_fetched_epoch=last_fetched)


def deliver_orphan_fetch(cfg: ModelConfig, s: ClusterState, b: int, o) -> str:
    """ReplicaManager.fetchMessages (Kafka 3.7.0) for a Fetch b's earlier incarnation sent: the leader handles it with
    the broker epoch it carries (Replica.updateFetchStateOrThrow refuses a stale one) and the answer goes nowhere."""
    return fetch_messages(cfg, s, s.broker_mut(o.leader), o.partition, b, o.fetch_offset, o.current_leader_epoch,
                          o.log_start_offset, last_fetched_epoch=o.last_fetched_epoch,
                          replica_epoch=o.broker_epoch).error


def process_fetch_response(cfg: ModelConfig, s: ClusterState, b: int, p: int) -> str:
    """AbstractFetcherThread.processFetchRequest, response half (Kafka 2.4.0, FO1-FO6, FO12)."""
    br = s.broker_mut(b)
    f = br.fetcher_mut(p)
    resp, f.inflight = f.inflight, None
    # A response is applied only if the fetch state still has the same offset and is fetching (FO6).
    if resp.fetch_offset != f.fetch_offset or f.state != FETCHING or type(br.partitions[p]) is not Partition:
        return "stale"
    if resp.error == E.NONE:
        log = br.log_mut(p)
        if resp.diverging and (cfg.kafka_14704 or resp.hw_applied):
            truncate_on_fetch_response(s, f, log, resp.diverging)                     # FO5: data and HW skipped
            return E.NONE
        if resp.fetch_offset != log.log_end_offset:                                  # FO1
            return "offset mismatch"
        if resp.entries:
            append_as_follower(log, resp.entries, cfg.records_have_epochs(p))
        log.high_watermark = clamp_high_watermark(log, resp.high_watermark)           # FO2: may go down
        if resp.log_start_offset > log.log_start_offset and not follow_log_start(cfg, s, f, log, resp):   # FO3
            return E.OFFSET_OUT_OF_RANGE
        if resp.diverging:
            # Before KAFKA-14704 (2.8.0-3.4.0) processPartitionData set the HW first; the truncation comes after the
            # partition loop, so the response stays to be applied again (the next FetchResponse step truncates).
            f.inflight = dataclasses.replace(resp, hw_applied=True)
            return E.NONE
        f.fetch_offset = log.log_end_offset
        return E.NONE
    if resp.error == E.OFFSET_OUT_OF_RANGE:
        fetch_offset_and_truncate(cfg, s, b, p)
    elif resp.error == E.FENCED_LEADER_EPOCH:
        f.state = FAILED  # onPartitionFenced: removed from the fetcher until the next LeaderAndIsr
    # UNKNOWN_LEADER_EPOCH, NOT_LEADER_FOR_PARTITION, ...: back off and retry
    return resp.error


def follow_log_start(cfg: ModelConfig, s: ClusterState, f, log, resp) -> bool:
    """ReplicaFetcherThread.processPartitionData's log.maybeIncrementLogStartOffset(leaderLogStartOffset) (Kafka 2.4.0,
    FO3): the follower takes the leader's larger log start.  Above the follower's HW (just set from the response) it
    throws OffsetOutOfRangeException: 2.4.0's processFetchRequest marks the partition failed; 0.11.0.0's fetcher thread
    died on it (KAFKA-5634's report), the same here: the partition stops fetching.  True if applied."""
    if resp.log_start_offset > log.high_watermark:
        note_error(s, E.OFFSET_OUT_OF_RANGE)
        f.state = FAILED
        return False
    maybe_increment_log_start_offset(log, resp.log_start_offset, cfg.kafka_9491)
    return True


def leader_offset(cfg: ModelConfig, s: ClusterState, f, p: int, earliest: bool) -> tuple:
    """ReplicaFetcherThread.fetchEarliestOffsetFromLeader / fetchLatestOffsetFromLeader (Kafka 2.4.0): the follower's
    ListOffsets (replica id = its broker id, the fetch state's current leader epoch with KIP-320) to the leader:
    (error, offset).  Partition.fetchOffsetForTimestamp checks the epoch first (FENCED_LEADER_EPOCH /
    UNKNOWN_LEADER_EPOCH), then leadership; a follower's LATEST is the LEO, EARLIEST the log start."""
    leader_br = s.brokers[f.leader]
    lpart = leader_br.partitions[p]
    log = leader_br.logs[p]
    if not leader_br.alive:
        return "NETWORK_EXCEPTION", -1       # no answer: the fetcher backs off and retries
    if type(lpart) is not Partition:
        return (E.KAFKA_STORAGE_ERROR if lpart is not None else E.NOT_LEADER_FOR_PARTITION), -1
    if cfg.kip_320 and lpart.leader_epoch > f.leader_epoch:
        return E.FENCED_LEADER_EPOCH, -1
    if cfg.kip_320 and lpart.leader_epoch < f.leader_epoch:
        return E.UNKNOWN_LEADER_EPOCH, -1
    if lpart.leader != f.leader or log is None:
        return E.NOT_LEADER_FOR_PARTITION, -1
    return E.NONE, (log.log_start_offset if earliest else log.log_end_offset)


def fetch_offset_and_truncate(cfg: ModelConfig, s: ClusterState, b: int, p: int) -> None:
    """AbstractFetcherThread.handleOutOfRangeError / fetchOffsetAndTruncate (Kafka 2.4.0, FO12; KAFKA-2143's fix,
    0.9.0.1): ListOffsets LATEST to the leader; a follower ahead truncates to the leader's end, otherwise ListOffsets
    EARLIEST and fetch from max(leader start, LEO), truncating fully only when the LEO is below the leader's start.
    Before KAFKA-2143 (0.9.0.0 ReplicaFetcherThread.handleOffsetOutOfRange) the follower truncated fully and fetched
    from the leader's start whenever the leader's end was not below its LEO.  A FENCED_LEADER_EPOCH answer fails the
    partition (onPartitionFenced); UNKNOWN_LEADER_EPOCH, NOT_LEADER_FOR_PARTITION, ... leave the fetch offset to retry."""
    br = s.broker_mut(b)
    f = br.fetcher_mut(p)
    error, leader_end = leader_offset(cfg, s, f, p, earliest=False)
    if error == E.NONE:
        log = br.log_mut(p)
        if leader_end < log.log_end_offset:
            _truncate(s, log, leader_end)
            f.fetch_offset = leader_end
            return
        error, leader_start = leader_offset(cfg, s, f, p, earliest=True)
        if error == E.NONE:
            if not cfg.kafka_2143:
                if log.entries or log.log_start_offset != leader_start:
                    s.ghost_mut().truncations += 1
                truncate_fully_and_start_at(log, leader_start, cfg.kafka_9491)
                f.fetch_offset = leader_start
                return
            if leader_start > log.log_end_offset:
                truncate_fully_and_start_at(log, leader_start, cfg.kafka_9491)
            f.fetch_offset = max(leader_start, log.log_end_offset)
            return
    if error in (E.FENCED_LEADER_EPOCH, E.UNKNOWN_LEADER_EPOCH):
        note_error(s, error)
        if error == E.FENCED_LEADER_EPOCH:
            f.state = FAILED


def truncate_to_epoch_end_offset(cfg: ModelConfig, s: ClusterState, b: int, p: int) -> str:
    """AbstractFetcherThread.maybeTruncate (Kafka 2.4.0 / 0.11.0): one OffsetsForLeaderEpoch round (FO7-FO10), its
    request and its response in one step."""
    if not send_epoch_request(cfg, s, b, p):
        return E.NONE
    return receive_epoch_response(cfg, s, b, p)


def epoch_answer(cfg: ModelConfig, s: ClusterState, f, p: int, latest: int) -> tuple:
    """The leader's OffsetsForLeaderEpoch answer for the follower's latest epoch (Partition.lastOffsetForLeaderEpoch
    with KIP-320's check, Kafka 2.4.0): (error, leader epoch, end offset); the KIP-101 protocol has no epoch."""
    leader_br = s.brokers[f.leader]
    lpart = leader_br.partitions[p]
    if type(lpart) is not Partition:
        error = E.NOT_LEADER_FOR_PARTITION
    elif cfg.kip_320 and lpart.leader_epoch > f.leader_epoch:
        error = E.FENCED_LEADER_EPOCH
    elif cfg.kip_320 and lpart.leader_epoch < f.leader_epoch:
        error = E.UNKNOWN_LEADER_EPOCH
    elif lpart.leader != f.leader or leader_br.logs[p] is None:
        error = E.NOT_LEADER_FOR_PARTITION
    else:
        error = E.NONE
    if error != E.NONE:
        return (error, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    leader_log = leader_br.logs[p]
    if cfg.truncation == "kip101":
        return (E.NONE, UNDEFINED_EPOCH,
                cache_end_offset_for_kip101(leader_log.epoch_cache, latest, leader_log.log_end_offset))
    return (E.NONE,) + tuple(cache_end_offset_for(leader_log.epoch_cache, latest, leader_log.log_end_offset))


def _apply_epoch_answer(cfg: ModelConfig, s: ClusterState, f, log, answer: tuple) -> str:
    """AbstractFetcherThread.maybeTruncateToEpochEndOffsets / truncate (Kafka 2.4.0, FO7-FO10): truncate from the
    leader's answer; FENCED_LEADER_EPOCH fails the partition, other errors leave it truncating (retried)."""
    error, leader_epoch, end = answer
    if error != E.NONE:
        note_error(s, error)
        if error == E.FENCED_LEADER_EPOCH:
            f.state = FAILED
        return error
    leo = log.log_end_offset
    if cfg.truncation == "kip101":
        target = f.fetch_offset if end == UNDEFINED_EPOCH_OFFSET else min(end, leo)
        _finish_truncation(s, f, log, target)
        return E.NONE
    if end == UNDEFINED_EPOCH_OFFSET:                                                 # FO7
        _finish_truncation(s, f, log, f.fetch_offset)
    elif leader_epoch == UNDEFINED_EPOCH:                                             # FO8
        _finish_truncation(s, f, log, min(end, leo))
    else:
        target, completed = _offset_truncation_state(log, leader_epoch, end)
        if completed:
            _finish_truncation(s, f, log, target)
        else:                                                                         # FO9, ask again
            _truncate(s, log, target)
            if cfg.kafka_10706 and target >= leo:
                # Log.truncateTo (2.8.0, KAFKA-10706): the epoch cache is trimmed even at or above the LEO
                log.epoch_cache = cache_truncate_from_end(log.epoch_cache, target)
            f.fetch_offset = log.log_end_offset
    return E.NONE


def send_epoch_request(cfg: ModelConfig, s: ClusterState, b: int, p: int) -> bool:
    """AbstractFetcherThread.maybeTruncate's request half (Kafka 2.4.0): a log without epochs truncates to its HW at
    once (no request); otherwise the OffsetsForLeaderEpoch request goes out with the fetch state's leader epoch and
    the leader answers it now (its answer travels back as ``FetchState.epoch_request``).  True if a request went."""
    br = s.broker_mut(b)
    f = br.fetcher_mut(p)
    log = br.log_mut(p)
    if log.latest_epoch == UNDEFINED_EPOCH:
        # partitions without epochs: truncateToHighWatermark
        _finish_truncation(s, f, log, f.fetch_offset)
        return False
    f.epoch_request = (f.leader_epoch,) + epoch_answer(cfg, s, f, p, log.latest_epoch)
    return True


def receive_epoch_response(cfg: ModelConfig, s: ClusterState, b: int, p: int) -> str | None:
    """AbstractFetcherThread.truncateToEpochEndOffsets' response half (Kafka 2.4.0): with KAFKA-7786's fix (2.1.1) an
    answer to a request sent in another leader epoch than the fetch state's is dropped; before it, it is applied.
    The error applied, or None when dropped."""
    br = s.broker_mut(b)
    f = br.fetcher_mut(p)
    sent_epoch, *answer = f.epoch_request
    f.epoch_request = ()
    if cfg.kafka_7786 and sent_epoch != f.leader_epoch:
        return None
    if f.state != TRUNCATING:
        return None     # the state fetches already (a new state that truncates on fetch): nothing to apply
    return _apply_epoch_answer(cfg, s, f, br.log_mut(p), tuple(answer))


def _offset_truncation_state(log, leader_epoch: int, end: int) -> tuple[int, bool]:
    """AbstractFetcherThread.getOffsetTruncationState for a defined (epoch, end offset) (Kafka 2.4.0 / 2.8.0, FO9,
    FO10): the offset to truncate to, and whether truncation is complete."""
    leo = log.log_end_offset
    follower_epoch, follower_end = cache_end_offset_for(log.epoch_cache, leader_epoch, leo)
    if follower_end == UNDEFINED_EPOCH_OFFSET:                                        # FO10
        return min(end, leo), True
    if follower_epoch != leader_epoch:                                                # FO9: an epoch it lacks
        return min(follower_end, leo), False
    return min(follower_end, end, leo), True


def truncate_on_fetch_response(s: ClusterState, f, log, diverging: tuple) -> None:
    """AbstractFetcherThread.truncateOnFetchResponse (Kafka 2.8.0, FO5): truncate from the divergingEpoch, then fetch
    from the LEO (Fetching even if not complete: the next fetch's lastFetchedEpoch asks again)."""
    target, _completed = _offset_truncation_state(log, diverging[0], diverging[1])
    _finish_truncation(s, f, log, target)


def _finish_truncation(s: ClusterState, f, log, offset: int) -> None:
    """AbstractFetcherThread.truncate (Kafka 2.4.0): truncate, then fetch from the truncation offset."""
    _truncate(s, log, offset)
    f.fetch_offset = log.log_end_offset
    f.state = FETCHING
