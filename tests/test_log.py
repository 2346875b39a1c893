"""Rule tests of model/log.py: the leader-epoch cache and the Log operations (Kafka 2.4.0).

Cases marked "LeaderEpochFileCacheTest.<name>" re-express the test of that name in Kafka 2.4.0
``core/src/test/scala/unit/kafka/server/epoch/LeaderEpochFileCacheTest.scala`` (for the 0.11 / 1.1
``endOffsetFor`` the 1.1.0 version of that file).  The cache under test is a tuple of
``(epoch, start offset)``; Kafka's ``logEndOffset`` callback is the explicit ``leo`` argument.
Reference: kafka-replication-semantics.md, end of section 1.11 (cache), FO4, FO12, 1.14.
"""

from __future__ import annotations

import pytest

from isrlab.model.log import (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, Log, append_as_follower, append_as_leader,
                              cache_assign, cache_end_offset_for, cache_end_offset_for_kip101,
                              cache_truncate_from_end, clamp_high_watermark, truncate_fully_and_start_at,
                              truncate_to)

pytestmark = pytest.mark.unit

U = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


# --------------------------------------------------------------------------- helpers
def assign_all(*pairs, cache=()):
    """Apply cache_assign for each (epoch, start offset) in order."""
    for epoch, start in pairs:
        cache = cache_assign(cache, epoch, start)
    return cache


def mklog(epochs, start=0, hw=0, recovery_point=0, cache=None):
    """A Log whose offset ``start + i`` holds record id ``i + 1`` written in epoch ``epochs[i]``.

    The epoch cache is the one appends would have built ((epoch, first offset) per epoch run) unless
    ``cache`` is given.
    """
    entries = tuple((i + 1, e) for i, e in enumerate(epochs))
    if cache is None:
        cache = ()
        for i, e in enumerate(epochs):
            cache = cache_assign(cache, e, start + i)
    return Log(log_start_offset=start, entries=entries, high_watermark=hw, recovery_point=recovery_point,
               epoch_cache=tuple(cache))


# =========================================================================== cache_assign
def test_assign_first_entry_LeaderEpochFileCacheTest_shouldAddEpochAndMessageOffsetToCache():
    cache = cache_assign((), 2, 10)
    assert cache == ((2, 10),)
    assert cache_end_offset_for(cache, 2, 11) == (2, 11)


def test_assign_same_epoch_later_offset_ignored_shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned():
    cache = cache_assign((), 2, 9)
    assert cache_assign(cache, 2, 10) == ((2, 9),)


def test_assign_same_epoch_same_offset_ignored_shouldNotUpdateEpochAndStartOffsetIfItDidNotChange():
    cache = assign_all((2, 6))
    assert cache_assign(cache, 2, 6) is cache  # ignored: e == last epoch and o >= last start
    assert assign_all((2, 6), (2, 7)) == ((2, 6),)  # shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned


def test_assign_same_epoch_earlier_offset_truncates_shouldTruncateIfMatchingEpochButEarlierStartingOffset():
    cache = assign_all((5, 11), (6, 12), (7, 13))
    # (7, 12): same epoch as the last entry but an earlier offset, so it is applied: (6, 12) and (7, 13) go.
    assert cache_assign(cache, 7, 12) == ((5, 11), (7, 12))


def test_assign_new_epoch_same_offset_replaces_shouldEnforceMonotonicallyIncreasingStartOffsets():
    cache = assign_all((2, 9))
    epoch2_end = cache_end_offset_for(cache, 2, 10)[1]
    cache = cache_assign(cache, 3, 9)
    assert cache == ((3, 9),)
    assert cache_end_offset_for(cache, 3, 10)[1] == epoch2_end == 10


def test_assign_older_epoch_drops_newer_entries_shouldEnforceMonotonicallyIncreasingEpochs():
    cache = assign_all((1, 5), (2, 6))
    cache = cache_assign(cache, 1, 7)
    # Every entry with epoch >= 1 or start >= 7 is dropped, then (1, 7) is appended.
    assert cache == ((1, 7),)
    assert cache[-1][0] == 1  # latestEpoch


def test_assign_drops_entries_with_epoch_ge_or_start_ge():
    cache = ((1, 0), (3, 4), (5, 8))
    assert cache_assign(cache, 4, 10) == ((1, 0), (3, 4), (4, 10))  # (5, 8): epoch 5 >= 4
    assert cache_assign(cache, 6, 6) == ((1, 0), (3, 4), (6, 6))    # (5, 8): start 8 >= 6
    assert cache_assign(cache, 6, 9) == ((1, 0), (3, 4), (5, 8), (6, 9))
    assert cache_assign(cache, 3, 2) == ((1, 0), (3, 2))              # epoch 3 not last: applied
    assert cache_assign(cache, 0, 0) == ((0, 0),)


def test_assign_leader_epochs_changing_many_times_shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes():
    cache = assign_all((0, 0))
    cache = cache_assign(cache, 1, 0)  # logEndOffset = 0
    assert cache == ((1, 0),)
    assert cache_end_offset_for(cache, 1, 0) == (1, 0)
    assert cache_end_offset_for(cache, 0, 0) == (0, 0)
    assert cache_end_offset_for(cache, 1, 5) == (1, 5)  # 5 messages written in epoch 1
    assert cache_end_offset_for(cache, 0, 5) == (0, 0)
    cache = cache_assign(cache, 2, 5)
    assert cache_end_offset_for(cache, 2, 10) == (2, 10)
    assert cache_end_offset_for(cache, 1, 10) == (1, 5)
    assert cache_end_offset_for(cache, 0, 10) == (0, 0)


# =========================================================================== cache_end_offset_for (2.4.0)
def test_end_offset_latest_epoch_is_leo_shouldReturnLogEndOffsetIfLatestEpochRequested():
    cache = assign_all((2, 5), (3, 6), (4, 7))
    assert cache_end_offset_for(cache, 4, 11) == (4, 11)


def test_end_offset_undefined_epoch_shouldReturnUndefinedOffsetIfUndefinedEpochRequested():
    assert cache_end_offset_for(assign_all((2, 5)), UNDEFINED_EPOCH, 6) == U
    # shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested
    assert cache_end_offset_for((), UNDEFINED_EPOCH, 73) == U


def test_end_offset_empty_cache_shouldReturnUnsupportedIfNoEpochRecorded_shouldFetchEndOffsetOfEmptyCache():
    assert cache_end_offset_for((), 0, 0) == U
    assert cache_end_offset_for((), 7, 0) == U


def test_end_offset_above_latest_is_undefined_shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked():
    cache = assign_all((2, 100))
    assert cache_end_offset_for(cache, 3, 100) == U


def test_end_offset_below_first_is_requested_and_first_start_shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch():
    cache = assign_all((5, 11), (6, 12), (7, 13))
    assert cache_end_offset_for(cache, 4, 14) == (4, 11)
    assert cache_end_offset_for(cache, 0, 14) == (0, 11)


def test_end_offset_in_between_shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested():
    cache = assign_all((0, 10), (2, 13), (4, 17))
    assert cache_end_offset_for(cache, 0, 20) == (0, 13)
    assert cache_end_offset_for(cache, 1, 20) == (0, 13)
    assert cache_end_offset_for(cache, 2, 20) == (2, 17)
    assert cache_end_offset_for(cache, 3, 20) == (2, 17)
    assert cache_end_offset_for(cache, 4, 20) == (4, 20)
    assert cache_end_offset_for(cache, 5, 20) == U


def test_end_offset_previous_epoch_shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch():
    cache = assign_all((1, 11), (1, 12), (2, 13))
    assert cache == ((1, 11), (2, 13))
    assert cache_end_offset_for(cache, 1, 17) == (1, 13)


def test_end_offset_epochs_not_from_zero_shouldSupportEpochsThatDoNotStartFromZero():
    cache = assign_all((2, 6))
    assert cache_end_offset_for(cache, 2, 7) == (2, 7)
    assert cache == ((2, 6),)


def test_follower_appends_track_epochs_shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages():
    log = Log()
    append_as_follower(log, ((1, 0), (2, 0), (3, 0)))
    assert log.latest_epoch == 0
    assert cache_end_offset_for(log.epoch_cache, 0, log.log_end_offset) == (0, 3)
    append_as_follower(log, ((4, 1), (5, 1), (6, 1)))
    assert log.latest_epoch == 1
    assert cache_end_offset_for(log.epoch_cache, 1, log.log_end_offset) == (1, 6)
    append_as_follower(log, ((7, 2), (8, 2), (9, 2)))
    assert log.latest_epoch == 2
    assert cache_end_offset_for(log.epoch_cache, 2, log.log_end_offset) == (2, 9)
    assert cache_end_offset_for(log.epoch_cache, 0, log.log_end_offset) == (0, 3)
    assert cache_end_offset_for(log.epoch_cache, 1, log.log_end_offset) == (1, 6)
    assert log.epoch_cache == ((0, 0), (1, 3), (2, 6))


# =========================================================================== cache_end_offset_for_kip101 (0.11 / 1.1)
def test_kip101_end_offset_latest_epoch_is_leo_shouldReturnLogEndOffsetIfLatestEpochRequested():
    cache = assign_all((2, 5), (3, 6), (4, 7))
    assert cache_end_offset_for_kip101(cache, 4, 11) == 11


def test_kip101_end_offset_below_first_is_undefined_shouldReturnUnsupportedIfRequestedEpochLessThanFirstEpoch():
    cache = assign_all((5, 11), (6, 12), (7, 13))
    assert cache_end_offset_for_kip101(cache, 4, 14) == UNDEFINED_EPOCH_OFFSET


def test_kip101_end_offset_in_between_is_next_start_shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested():
    cache = assign_all((0, 10), (2, 13), (4, 17))
    assert cache_end_offset_for_kip101(cache, 1, 20) == 13
    assert cache_end_offset_for_kip101(cache, 0, 20) == 13
    assert cache_end_offset_for_kip101(cache, 3, 20) == 17
    # shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch
    assert cache_end_offset_for_kip101(assign_all((1, 11), (2, 13)), 1, 17) == 13


def test_kip101_end_offset_undefined_cases_shouldReturnUnsupportedIfNoEpochRecorded():
    assert cache_end_offset_for_kip101((), 0, 5) == UNDEFINED_EPOCH_OFFSET
    assert cache_end_offset_for_kip101((), UNDEFINED_EPOCH, 5) == UNDEFINED_EPOCH_OFFSET
    assert cache_end_offset_for_kip101(assign_all((2, 5)), UNDEFINED_EPOCH, 6) == UNDEFINED_EPOCH_OFFSET
    assert cache_end_offset_for_kip101(assign_all((2, 100)), 3, 100) == UNDEFINED_EPOCH_OFFSET


def test_kip101_end_offset_differs_from_kip279_only_in_the_epoch_and_below_first():
    """KIP-279: 2.x answers (epoch, offset); below the first epoch 0.11 answers UNDEFINED, 2.x (req, first start)."""
    cache = assign_all((1, 0), (3, 4))
    assert cache_end_offset_for(cache, 2, 9) == (1, 4)
    assert cache_end_offset_for_kip101(cache, 2, 9) == 4
    assert cache_end_offset_for(cache, 0, 9) == (0, 0)
    assert cache_end_offset_for_kip101(cache, 0, 9) == UNDEFINED_EPOCH_OFFSET


# =========================================================================== cache_truncate_from_end
def test_truncate_from_end_on_boundary_shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries():
    cache = assign_all((2, 6), (3, 8), (4, 11))
    assert cache_truncate_from_end(cache, 11) == ((2, 6), (3, 8))


def test_truncate_from_end_between_boundaries_shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest():
    cache = assign_all((2, 6), (3, 8), (4, 11))
    assert cache_truncate_from_end(cache, 9) == ((2, 6), (3, 8))
    assert cache_truncate_from_end(cache, 8) == ((2, 6),)
    assert cache_truncate_from_end(cache, 6) == ()


def test_truncate_from_end_undefined_offset_shouldNotResetEpochHistoryHeadIfUndefinedPassed():
    cache = assign_all((2, 6), (3, 8), (4, 11))
    assert cache_truncate_from_end(cache, UNDEFINED_EPOCH_OFFSET) == cache


def test_truncate_from_end_above_last_start_is_noop_and_empty_cache_shouldClearLatestOnEmptyCache():
    cache = assign_all((2, 6), (3, 8), (4, 11))
    assert cache_truncate_from_end(cache, 12) == cache
    assert cache_truncate_from_end((), 7) == ()


# =========================================================================== truncate_to
def test_truncate_to_drops_suffix_lowers_hw_and_recovery_point_and_trims_cache():
    # offsets 0..5, epochs 0,0,1,1,2,2: cache ((0,0),(1,2),(2,4)); HW 5, recovery point 6
    log = mklog([0, 0, 1, 1, 2, 2], hw=5, recovery_point=6)
    assert truncate_to(log, 3) is True
    assert log.log_end_offset == 3
    assert log.entries == ((1, 0), (2, 0), (3, 1))
    assert log.epoch_cache == ((0, 0), (1, 2))
    assert log.high_watermark == 3        # FO4: Log.updateLogEndOffset lowers a HW above the new LEO
    assert log.recovery_point == 3
    assert log.log_start_offset == 0


def test_truncate_to_keeps_hw_and_recovery_point_below_target():
    log = mklog([0, 0, 1, 1, 2, 2], hw=2, recovery_point=1)
    assert truncate_to(log, 4) is True
    assert (log.log_end_offset, log.high_watermark, log.recovery_point) == (4, 2, 1)
    assert log.epoch_cache == ((0, 0), (1, 2))  # (2, 4) has start >= 4


def test_truncate_to_hw_equal_target_unchanged():
    log = mklog([0, 0, 1, 1], hw=2, recovery_point=4)
    assert truncate_to(log, 2) is True
    assert (log.log_end_offset, log.high_watermark, log.recovery_point) == (2, 2, 2)
    assert log.epoch_cache == ((0, 0),)


def test_truncate_to_at_or_above_leo_is_noop():
    """Log.truncateTo (2.4.0): ``targetOffset >= logEndOffset`` has no effect (returns false)."""
    # A new leader's cache holds (epoch, LEO) before any append (KAFKA-7415); truncating at the LEO keeps it.
    log = mklog([0, 0, 1], hw=1, recovery_point=2, cache=((0, 0), (1, 2), (3, 3)))
    before = (log.entries, log.epoch_cache, log.high_watermark, log.recovery_point, log.log_start_offset)
    assert truncate_to(log, 3) is False
    assert truncate_to(log, 10) is False
    assert (log.entries, log.epoch_cache, log.high_watermark, log.recovery_point, log.log_start_offset) == before


def test_truncate_to_zero_empties_log():
    log = mklog([0, 1], hw=2, recovery_point=2)
    assert truncate_to(log, 0) is True
    assert (log.entries, log.epoch_cache, log.high_watermark, log.recovery_point, log.log_end_offset) == \
        ((), (), 0, 0, 0)


def test_truncate_to_below_log_start_truncates_fully():
    """Log.truncateTo (2.4.0): a target below the first segment's base offset calls truncateFullyAndStartAt."""
    log = mklog([3, 3, 4], start=5, hw=7, recovery_point=8)
    assert truncate_to(log, 2) is True
    assert (log.log_start_offset, log.entries, log.epoch_cache, log.log_end_offset) == (2, (), (), 2)
    assert (log.high_watermark, log.recovery_point) == (2, 2)


def test_truncate_to_negative_target_is_an_error():
    log = mklog([0, 0], hw=1)
    with pytest.raises(ValueError):
        truncate_to(log, -1)


# =========================================================================== truncate_fully_and_start_at
def test_truncate_fully_and_start_at_with_hw_above_new_offset():
    """Log.truncateFullyAndStartAt (2.4.0): empty log at newOffset, epoch cache cleared, HW lowered to newOffset."""
    log = mklog([0, 0, 1, 1, 1, 1], hw=5, recovery_point=6)
    truncate_fully_and_start_at(log, 3)
    assert (log.log_start_offset, log.entries, log.log_end_offset, log.epoch_cache) == (3, (), 3, ())
    assert log.high_watermark == 3
    assert log.recovery_point == 3  # min(newOffset, recoveryPoint)


def test_truncate_fully_and_start_at_above_hw_keeps_hw_and_recovery_point_in_2_4_0():
    # FO12 case: the leader's log start (10) is above the follower's LEO (4).  Log.truncateFullyAndStartAt in 2.4.0
    # (before KAFKA-9491) only lowers the HW (updateLogEndOffset: if HW >= newOffset) and keeps
    # recoveryPoint = min(newOffset, recoveryPoint): the flag kafka_9491 off.
    log = mklog([0, 0, 0, 0], hw=2, recovery_point=1)
    truncate_fully_and_start_at(log, 10, kafka_9491=False)
    assert (log.log_start_offset, log.log_end_offset, log.epoch_cache) == (10, 10, ())
    assert log.high_watermark == 2
    assert log.recovery_point == 1


# =========================================================================== appends
def test_append_as_leader_stamps_epoch_assigns_cache_and_returns_offsets():
    log = Log()
    assert append_as_leader(log, (11, 12), 3) == (0, 1)
    assert log.entries == ((11, 3), (12, 3))
    assert log.epoch_cache == ((3, 0),)
    assert append_as_leader(log, (13,), 3) == (2, 2)
    assert log.epoch_cache == ((3, 0),)            # same epoch, later offset: ignored
    assert append_as_leader(log, (14,), 5) == (3, 3)
    assert log.epoch_cache == ((3, 0), (5, 3))
    assert log.log_end_offset == 4
    assert log.high_watermark == 0                 # the HW is the partition's business (HW1), not the append's


def test_append_as_leader_after_kafka_7415_assignment_keeps_epoch_start():
    """A new leader assigned (epoch, LEO) at makeLeader (M5); its first append does not move that start."""
    log = mklog([0, 0], cache=((0, 0), (2, 2)))
    assert append_as_leader(log, (9,), 2) == (2, 2)
    assert log.epoch_cache == ((0, 0), (2, 2))


def test_append_as_follower_keeps_batch_epochs_and_assigns_base_offsets():
    log = mklog([0, 0])
    append_as_follower(log, ((3, 0), (4, 2), (5, 2), (6, 4)))
    assert log.entries == ((1, 0), (2, 0), (3, 0), (4, 2), (5, 2), (6, 4))
    assert log.epoch_cache == ((0, 0), (2, 3), (4, 5))
    assert log.log_end_offset == 6


def test_append_as_follower_older_epoch_truncates_cache():
    """An appended batch with an older epoch than the cache's latest drops the newer entries (cache_assign)."""
    log = mklog([0, 0], cache=((0, 0), (3, 2)))  # e.g. a stale (3, 2) left by an earlier leadership
    append_as_follower(log, ((3, 1),))
    assert log.epoch_cache == ((0, 0), (1, 2))


def test_append_as_follower_empty_is_noop():
    log = mklog([0, 1])
    before = (log.entries, log.epoch_cache)
    append_as_follower(log, ())
    assert (log.entries, log.epoch_cache) == before


# =========================================================================== clamp_high_watermark / offsets
def test_clamp_high_watermark_to_log_start_and_leo():
    """Log.updateHighWatermark (2.4.0): hw < logStartOffset -> logStartOffset; hw > LEO -> LEO (FO2, 1.14)."""
    log = mklog([0, 0, 0, 0], start=2)  # offsets 2..5, LEO 6
    assert clamp_high_watermark(log, 0) == 2
    assert clamp_high_watermark(log, 2) == 2
    assert clamp_high_watermark(log, 4) == 4
    assert clamp_high_watermark(log, 6) == 6
    assert clamp_high_watermark(log, 99) == 6
    assert clamp_high_watermark(Log(), 5) == 0
    assert log.high_watermark == 0  # pure: the log is not changed


def test_log_offsets_latest_epoch_entry_at_and_read():
    log = mklog([1, 1, 2], start=4)
    assert (log.log_start_offset, log.log_end_offset, log.latest_epoch) == (4, 7, 2)
    assert log.entry_at(3) is None and log.entry_at(7) is None
    assert log.entry_at(4) == (1, 1) and log.entry_at(6) == (3, 2)
    assert log.read(4, 6) == ((1, 1), (2, 1))
    assert log.read(0, 5) == ((1, 1),)
    assert log.read(6, 6) == ()
    assert Log().latest_epoch == UNDEFINED_EPOCH  # shouldFetchLatestEpochOfEmptyCache
