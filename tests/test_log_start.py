"""Log start offsets (Kafka 2.4.0): DeleteRecords, size retention, followers following the leader's log start,
fetchOffsetAndTruncate (KAFKA-2143), KAFKA-5634 and KAFKA-9491, and message formats below 0.11.

Exact error codes and boundaries of KafkaApis.handleDeleteRecordsRequest / ReplicaManager.deleteRecords /
Partition.deleteRecordsOnLeader, Log.maybeIncrementLogStartOffset / deleteOldSegments / truncateFullyAndStartAt,
ReplicaFetcherThread.processPartitionData and AbstractFetcherThread.fetchOffsetAndTruncate, each flag both ways.
"""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model import errors as E
from isrlab.model.config import ConfigError, ModelConfig, preset
from isrlab.model.errors import ERROR_BIT
from isrlab.model.fetcher import fetch_offset_and_truncate
from isrlab.model.log import (Log, cache_assign, deletable_segments, delete_old_segments,
                              maybe_increment_log_start_offset, truncate_fully_and_start_at)
from isrlab.model.state import FAILED, FETCHING, TRUNCATING
from isrlab.model.step import _begin, action_kinds, enabled_actions, enabled_actions_reference, initial_state, step
from isrlab.properties.invariants import acked_durability, log_offsets
from isrlab.properties.walker import walk

from conftest import drive, fetch_round, produce, ready  # noqa: E402

pytestmark = pytest.mark.unit

LS = preset("log-start-offset").config            # DeleteRecords and retention budgets 2, retention keeps 1 record
ONE = LS.replace(max_delete_records=1)


def mklog(epochs, start=0, hw=0, recovery_point=0):
    cache = ()
    for i, e in enumerate(epochs):
        cache = cache_assign(cache, e, start + i)
    return Log(log_start_offset=start, entries=tuple((i + 1, e) for i, e in enumerate(epochs)), high_watermark=hw,
               recovery_point=recovery_point, epoch_cache=cache)


def replicated(cfg, n=2):
    """Leader 0 in epoch 0 with ISR [0, 1, 2]: n records produced (acks=1) and fetched twice by both followers, so
    every log holds them and every HW is n."""
    s = produce(cfg, ready(cfg), n)
    for _ in range(2):
        for f in (1, 2):
            s = fetch_round(cfg, s, f)
    return s


def response(s, b=0, p=0):
    return s.ghost.responses.delete_records[b][p]


# =========================================================================== Log
def test_maybe_increment_log_start_offset_drops_records_and_trims_the_epoch_cache():
    log = mklog([0, 0, 1, 1], hw=3, recovery_point=4)
    assert maybe_increment_log_start_offset(log, 3)
    assert (log.log_start_offset, log.entries, log.log_end_offset) == (3, ((4, 1),), 4)
    assert log.epoch_cache == ((1, 3),)                 # truncateFromStart: epoch 1 now starts at the log start
    assert (log.high_watermark, log.recovery_point) == (3, 4)
    assert not maybe_increment_log_start_offset(log, 3)     # not larger: nothing happens
    assert not maybe_increment_log_start_offset(log, 2)


def test_maybe_increment_log_start_offset_raises_the_hw_only_with_kafka_9491():
    for fix, hw in ((True, 2), (False, 1)):
        log = mklog([0, 0, 0], hw=1, recovery_point=0)
        maybe_increment_log_start_offset(log, 2, kafka_9491=fix)
        assert log.high_watermark == hw
        assert log.recovery_point == (2 if fix else 0)


def test_truncate_fully_and_start_at_moves_the_hw_only_with_kafka_9491():
    log = mklog([0, 0], hw=1, recovery_point=1)
    truncate_fully_and_start_at(log, 5)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark, log.recovery_point) == (5, 5, 5, 5)
    log = mklog([0, 0], hw=1, recovery_point=1)
    truncate_fully_and_start_at(log, 5, kafka_9491=False)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark, log.recovery_point) == (5, 5, 1, 1)
    log = mklog([0, 0, 0, 0, 0, 0, 0], hw=7, recovery_point=7)
    truncate_fully_and_start_at(log, 5, kafka_9491=False)   # a HW above the new offset is lowered to it either way
    assert (log.high_watermark, log.recovery_point) == (5, 5)


def test_size_retention_stops_at_the_hw_with_kafka_5634():
    log = mklog([0, 0, 0, 0], hw=2)
    assert deletable_segments(log, 1) == 2              # 3 over the limit, but only segments below the HW 2
    assert deletable_segments(log, 1, kafka_5634=False) == 3   # 0.11.0.0: to the limit, past the HW
    assert deletable_segments(log, 0, kafka_5634=False) == 4   # every segment, the active one rolled at the LEO
    assert deletable_segments(log, 3) == 1              # one over the limit
    assert deletable_segments(log, 4) == 0              # at the limit: nothing
    assert deletable_segments(log, 5) == 0
    assert deletable_segments(Log(), 0) == 0            # an empty log has no segment to delete
    assert delete_old_segments(log, 1)
    assert (log.log_start_offset, log.high_watermark) == (2, 2)


# =========================================================================== DeleteRecords
def test_delete_records_to_the_hw_moves_the_leader_log_start_and_answers_the_low_watermark():
    s = replicated(LS)
    s = drive(LS, s, A.DeleteRecords(0, 0))
    r = response(s)
    assert (r.error, r.requested_offset) == (E.NONE, 2)
    assert r.low_watermark == 0                         # the followers' log starts as the leader last saw them
    assert s.brokers[0].logs[0].log_start_offset == 2 and s.brokers[0].logs[0].entries == ()
    assert s.brokers[1].logs[0].log_start_offset == 0   # followers learn it from their next fetch response
    s = fetch_round(LS, fetch_round(LS, s, 1), 2)
    assert [s.brokers[b].logs[0].log_start_offset for b in (1, 2)] == [2, 2]
    assert s.brokers[1].logs[0].entries == () and s.brokers[1].logs[0].epoch_cache == ((0, 2),)
    s = fetch_round(LS, fetch_round(LS, s, 1), 2)       # the leader now knows the followers' log starts
    s = drive(LS, s, A.DeleteRecords(0, 0, 2))          # at the log start: nothing to delete, NONE
    assert (response(s).error, response(s).requested_offset, response(s).low_watermark) == (E.NONE, 2, 2)


@pytest.mark.parametrize("offset,error", [(2, E.NONE), (3, E.OFFSET_OUT_OF_RANGE), (-2, E.OFFSET_OUT_OF_RANGE),
                                          (0, E.NONE)])
def test_delete_records_offset_boundaries(offset, error):
    s = drive(LS, replicated(LS), A.DeleteRecords(0, 0, offset))
    assert response(s).error == error
    assert s.brokers[0].logs[0].log_start_offset == (offset if error == E.NONE else 0)
    if error != E.NONE:
        assert (response(s).low_watermark, response(s).requested_offset) == (-1, -1)   # INVALID_LOW_WATERMARK


def test_delete_records_to_a_follower_is_not_leader_for_partition():
    s = drive(LS, replicated(LS), A.DeleteRecords(1, 0))
    assert response(s, 1).error == E.NOT_LEADER_FOR_PARTITION
    assert s.brokers[1].logs[0].log_start_offset == 0


def test_delete_records_to_a_broker_whose_metadata_cache_lacks_the_partition():
    s = drive(LS, initial_state(LS), A.DeleteRecords(2, 0))    # no UpdateMetadata yet
    assert response(s, 2).error == E.UNKNOWN_TOPIC_OR_PARTITION
    assert s.ghost.errors_seen & ERROR_BIT[E.UNKNOWN_TOPIC_OR_PARTITION]


def test_delete_records_and_retention_stay_within_their_budgets():
    s = replicated(ONE)
    assert A.DeleteRecords(0, 0) in enabled_actions(ONE, s)
    s = drive(ONE, s, A.DeleteRecords(1, 0))            # refused (NOT_LEADER) but counted
    assert step(ONE, s, A.DeleteRecords(0, 0)) is None
    assert not [a for a in enabled_actions(ONE, s) if type(a) is A.DeleteRecords]
    s = replicated(LS)
    assert s.brokers[1].logs[0].high_watermark == 0     # the leader's HW reached 2 after broker 1's last read
    assert step(LS, s, A.DeleteOldSegments(1, 0)) is None     # so nothing is below broker 1's own HW
    s = fetch_round(LS, fetch_round(LS, s, 1), 2)       # every HW is 2
    s = drive(LS, s, A.DeleteOldSegments(0, 0), A.DeleteOldSegments(1, 0))
    assert [s.brokers[b].logs[0].log_start_offset for b in range(3)] == [1, 1, 0]
    assert step(LS, s, A.DeleteOldSegments(2, 0)) is None     # max_retention_runs 2


def test_retention_is_offered_only_where_a_segment_is_over_the_limit():
    s = ready(LS)
    assert not [a for a in enabled_actions(LS, s) if type(a) is A.DeleteOldSegments]
    s = produce(LS, s, 2)                               # leader: 2 records, HW 0 (followers have not fetched)
    assert step(LS, s, A.DeleteOldSegments(0, 0)) is None     # with KAFKA-5634 nothing below the HW to delete
    s5634 = preset("no-kafka-5634").config                  # 0.11.0.0: no KAFKA-5634, no KAFKA-9491
    s2 = drive(s5634, produce(s5634, ready(s5634), 2), A.DeleteOldSegments(0, 0))
    assert s2.brokers[0].logs[0].log_start_offset == 1 and s2.brokers[0].logs[0].high_watermark == 0
    assert log_offsets(s5634, s2) == {"broker": 0, "partition": 0, "log_start_offset": 1, "high_watermark": 0,
                                      "log_end_offset": 2}


def test_the_new_kinds_are_gated_and_enabled_actions_matches_its_reference():
    assert A.DeleteRecords not in action_kinds(ModelConfig())
    assert A.DeleteOldSegments not in action_kinds(ModelConfig())
    assert {A.DeleteRecords, A.DeleteOldSegments} <= set(action_kinds(LS))
    for seed in range(3):
        s = initial_state(LS)
        for a in walk(LS, seed, 300, ()).actions:
            assert enabled_actions(LS, s) == enabled_actions_reference(LS, s)
            s = step(LS, s, a)


# =========================================================================== followers
def test_a_follower_told_a_log_start_above_its_hw_fails_the_partition():
    cfg = LS.replace(kafka_5634=False, kafka_9491=False)
    s = produce(cfg, ready(cfg), 2)
    s = fetch_round(cfg, s, 1)                          # broker 1 holds both records; the leader's HW stays 0
    s = drive(cfg, s, A.DeleteOldSegments(0, 0))        # 0.11.0.0 retention: the leader's log start 1, HW 0
    s = fetch_round(cfg, s, 1)
    f = s.brokers[1].fetchers[0]
    assert f.state == FAILED                            # maybeIncrementLogStartOffset threw OffsetOutOfRange
    assert s.brokers[1].logs[0].log_start_offset == 0
    assert s.ghost.errors_seen & ERROR_BIT[E.OFFSET_OUT_OF_RANGE]
    assert not [a for a in enabled_actions(cfg, s) if type(a) is A.FetchRequest and a.broker == 1]


def _out_of_range(cfg, follower_epochs_behind=0):
    """Every log holds records 1 and 2 (HW 2); the leader's log starts at 1 (DeleteRecords to offset 1). Returns a
    writable clone to call fetchOffsetAndTruncate on for follower 1."""
    s = drive(cfg, replicated(cfg), A.DeleteRecords(0, 0, 1))
    return _begin(s)


@pytest.mark.parametrize("fix", [True, False])
def test_fetch_offset_and_truncate_with_the_follower_between_the_leader_start_and_end(fix):
    cfg = LS.replace(kafka_2143=fix)
    s = _out_of_range(cfg)
    fetch_offset_and_truncate(cfg, s, 1, 0)
    log, f = s.brokers[1].logs[0], s.brokers[1].fetchers[0]
    if fix:     # KAFKA-2143: fetch from max(leader start 1, LEO 2), the log kept
        assert (f.fetch_offset, log.log_start_offset, log.entries) == (2, 0, ((1, 0), (2, 0)))
    else:       # 0.9.0.0: truncate fully and fetch from the leader's start
        assert (f.fetch_offset, log.log_start_offset, log.entries, log.high_watermark) == (1, 1, (), 1)
        assert s.ghost.truncations == 1
    assert f.state == FETCHING


@pytest.mark.parametrize("fix", [True, False])
def test_fetch_offset_and_truncate_below_the_leader_start_truncates_fully_either_way(fix):
    cfg = LS.replace(kafka_2143=fix)
    s = replicated(cfg)
    s = drive(cfg, s, A.DeleteRecords(0, 0))            # the leader starts at 2
    s = _begin(s)
    log = s.broker_mut(1).log_mut(0)
    truncate_fully_and_start_at(log, 0)                 # the follower's log is empty at 0 (LEO 0 < leader start 2)
    fetch_offset_and_truncate(cfg, s, 1, 0)
    log, f = s.brokers[1].logs[0], s.brokers[1].fetchers[0]
    assert (f.fetch_offset, log.log_start_offset, log.log_end_offset, log.high_watermark) == (2, 2, 2, 2)


def test_fetch_offset_and_truncate_to_the_leader_end_when_the_follower_is_ahead():
    s = _begin(replicated(LS))
    leader_log = s.broker_mut(0).log_mut(0)
    leader_log.entries = leader_log.entries[:1]         # the leader's end 1 below the follower's LEO 2
    fetch_offset_and_truncate(LS, s, 1, 0)
    assert s.brokers[1].fetchers[0].fetch_offset == 1 and s.brokers[1].logs[0].log_end_offset == 1


@pytest.mark.parametrize("delta,error,state", [(1, E.FENCED_LEADER_EPOCH, FAILED),
                                               (-1, E.UNKNOWN_LEADER_EPOCH, FETCHING)])
def test_the_follower_list_offsets_is_checked_against_the_leader_epoch(delta, error, state):
    """The follower's ListOffsets carries its fetch state's epoch (Partition.fetchOffsetForTimestamp's check): a newer
    leader epoch fences it (onPartitionFenced), an older one is UNKNOWN_LEADER_EPOCH, retried with the offset kept."""
    s = _out_of_range(LS)
    s.broker_mut(0).partition_mut(0).leader_epoch += delta
    fetch_offset_and_truncate(LS, s, 1, 0)
    f = s.brokers[1].fetchers[0]
    assert f.state == state and f.fetch_offset == 2
    assert s.brokers[1].logs[0].entries == ((1, 0), (2, 0))
    assert s.ghost.errors_seen & ERROR_BIT[error]


# =========================================================================== message format below 0.11
OLD = ModelConfig(old_message_format_partitions=(0,))


def test_old_format_logs_have_no_epochs_and_followers_truncate_to_their_hw():
    s = produce(OLD, ready(OLD), 2)
    assert s.brokers[0].logs[0].epoch_cache == ()       # neither makeLeader (KAFKA-7415) nor the appends assign
    s = fetch_round(OLD, s, 1)
    assert s.brokers[1].logs[0].entries == ((1, 0), (2, 0)) and s.brokers[1].logs[0].epoch_cache == ()
    assert s.ghost.responses.offsets_for_leader_epoch == ()   # no OffsetsForLeaderEpoch was ever sent


def test_an_epoch_cache_per_partition():
    cfg = ModelConfig(n_partitions=2, old_message_format_partitions=(1,))
    s = ready(cfg, 0)
    s = drive(cfg, s, *(A.OffsetsForLeaderEpoch(b, 1) for b in s.zk.assignment[1] if b != s.zk.partition_states[1].leader))
    s = produce(cfg, produce(cfg, s, 1, p=0, broker=s.zk.partition_states[0].leader), 1, p=1,
                broker=s.zk.partition_states[1].leader)
    assert s.brokers[s.zk.partition_states[0].leader].logs[0].epoch_cache == ((0, 0),)
    assert s.brokers[s.zk.partition_states[1].leader].logs[1].epoch_cache == ()


@pytest.mark.parametrize("value,n", [((1,), 1), ((0, 0), 2), ((-1,), 1)])
def test_old_message_format_partitions_are_validated_in_one_line(value, n):
    with pytest.raises(ConfigError) as e:
        ModelConfig(n_partitions=n, old_message_format_partitions=value)
    assert "old_message_format_partitions must list distinct partitions" in str(e.value)
    assert "\n" not in str(e.value)


def test_config_json_round_trip_and_bad_values():
    cfg = ModelConfig.from_json({"old_message_format_partitions": [0], "max_delete_records": 1})
    assert cfg.old_message_format_partitions == (0,) and not cfg.records_have_epochs(0)
    assert "old_message_format_partitions" not in ModelConfig().identity_json()
    with pytest.raises(ConfigError, match="must be a list"):
        ModelConfig.from_json({"old_message_format_partitions": 0})
    with pytest.raises(ConfigError, match="max_retention_runs"):
        ModelConfig(max_retention_runs=-1)


# =========================================================================== actions and invariants
def test_action_codec():
    assert A.action_from_json({"type": "DeleteRecords", "broker": 0, "partition": 0}) == A.DeleteRecords(0, 0, -1)
    assert A.action_to_json(A.DeleteOldSegments(1, 0)) == {"type": "DeleteOldSegments", "broker": 1, "partition": 0}
    with pytest.raises(A.ActionError, match="missing field 'partition'"):
        A.action_from_json({"type": "DeleteOldSegments", "broker": 1})
    with pytest.raises(A.ActionError, match="must be int"):
        A.action_from_json({"type": "DeleteRecords", "broker": 0, "partition": 0, "offset": "1"})


def test_records_deleted_below_a_log_start_are_not_losses_but_others_are():
    """acked_durability exempts offsets below the largest log start of the partition (deleted on purpose); a mutant
    that drops an acknowledged record above it is still caught."""
    cfg = LS
    s = produce(cfg, ready(cfg), 2, acks=-1)
    for _ in range(2):
        for f in (1, 2):
            s = fetch_round(cfg, s, f)
    assert len(s.ghost.acked) == 2
    s = drive(cfg, s, A.DeleteRecords(0, 0, 1))
    assert acked_durability(cfg, s) is None
    bad = _begin(s)
    log = bad.broker_mut(0).log_mut(0)
    log.entries = ((99, 0),)                            # the record at offset 1 replaced: a mutant's loss
    assert acked_durability(cfg, bad)["offset"] == 1


def test_kraft_brokers_take_delete_records_too():
    cfg = preset("kafka-3.7").config.replace(max_delete_records=2, max_retention_runs=2, retention_records=1)
    seen = set()
    for seed in range(4):
        r = walk(cfg, seed, 400, ())
        seen |= {type(a) for a in r.actions}
    assert {A.DeleteRecords, A.DeleteOldSegments} & seen
