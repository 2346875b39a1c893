"""ListOffsets (model/list_offsets.py) and the last response per request kind (``ghost.responses``), Kafka 2.4.0.

Exact error codes and boundaries of KafkaApis.handleListOffsetRequestV1AndAbove, ReplicaManager.
fetchOffsetForTimestamp, Partition.fetchOffsetForTimestamp (KIP-207's OFFSET_NOT_AVAILABLE) and
Log.fetchOffsetByTimestamp, each request applied through ``step``.
"""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model import errors as E
from isrlab.model.config import ModelConfig
from isrlab.model.list_offsets import handle_list_offsets, record_timestamp
from isrlab.model.state import OFFLINE, ListOffsetsResponseData, ProduceResponseData
from isrlab.model.step import enabled_actions, enabled_actions_reference, step, tick_limit

from conftest import drive, fetch_round, produce, ready  # noqa: E402

pytestmark = pytest.mark.unit

CFG = ModelConfig()          # 3 brokers, RF 3, replicas (0, 1, 2), leader 0 in epoch 0
P = 0
TASKS = {A.IsrExpiration, A.IsrChangePropagation, A.HighWatermarkCheckpoint}


def advance(s, ms: int):
    """Let ms of model time pass, running each scheduled task when it falls due."""
    target = s.now + ms
    while True:
        for a in enabled_actions(CFG, s, TASKS):
            s = drive(CFG, s, a)
        if s.now >= target:
            return s
        limit = tick_limit(CFG, s)
        s = drive(CFG, s, A.Tick(min(target, limit) - s.now if limit is not None else target - s.now))


def ask(s, b=0, timestamp=-1, isolation="read_uncommitted", replica_id=-1, epoch=-1, p=P):
    """The state after the ListOffsets request, and its response."""
    s = drive(CFG, s, A.ListOffsets(b, p, timestamp, isolation, replica_id, epoch))
    return s, s.ghost.responses.list_offsets[b][p]


def leader_with_lagging_hw():
    """Leader 0 with 3 records at times t, t+1000, t+2000; both followers fetched the first only: HW 1, LEO 3."""
    s = ready(CFG)
    times = []
    s = produce(CFG, s, 1)
    times.append(s.now)
    for f in (1, 2):
        s = fetch_round(CFG, fetch_round(CFG, s, f), f)
    for _ in range(2):
        s = produce(CFG, advance(s, 1000), 1)
        times.append(s.now)
    log = s.brokers[0].logs[P]
    assert (log.log_end_offset, log.high_watermark) == (3, 1)
    return s, times


def none(error=E.NONE):
    return ListOffsetsResponseData(error, -1, -1, -1)


# --------------------------------------------------------------------------- LATEST / EARLIEST
def test_latest_is_the_hw_for_a_client_and_the_leo_for_a_replica_with_the_partition_epoch():
    s, _ = leader_with_lagging_hw()
    for isolation in ("read_uncommitted", "read_committed"):    # LSO = HW: no transactions
        assert ask(s, isolation=isolation)[1] == ListOffsetsResponseData(E.NONE, -1, 1, 0)
    for replica_id in (1, -2):                                  # a follower, the debugging id: no isolation
        assert ask(s, replica_id=replica_id)[1] == ListOffsetsResponseData(E.NONE, -1, 3, 0)


def test_earliest_is_the_log_start_with_the_first_cached_epoch():
    s, _ = leader_with_lagging_hw()
    for replica_id in (-1, 1, -2):
        assert ask(s, timestamp=-2, replica_id=replica_id)[1] == ListOffsetsResponseData(E.NONE, -1, 0, 0)


def test_latest_of_an_empty_log():
    s = ready(CFG)
    assert ask(s)[1] == ListOffsetsResponseData(E.NONE, -1, 0, 0)
    assert ask(s, timestamp=-2)[1] == ListOffsetsResponseData(E.NONE, -1, 0, 0)
    assert ask(s, timestamp=0, replica_id=1)[1] == none()       # no record at all: None


# --------------------------------------------------------------------------- by timestamp
def test_by_timestamp_finds_the_first_record_at_or_after_it():
    s, (t0, t1, t2) = leader_with_lagging_hw()
    assert [record_timestamp(s, r) for r in (1, 2, 3)] == [t0, t1, t2] and t0 < t1 < t2
    for target, offset, ts in ((0, 0, t0), (t0, 0, t0), (t0 + 1, 1, t1), (t1, 1, t1), (t2, 2, t2)):
        assert ask(s, timestamp=target, replica_id=1)[1] == ListOffsetsResponseData(E.NONE, ts, offset, 0)
    assert ask(s, timestamp=t2 + 1, replica_id=1)[1] == none()


def test_by_timestamp_for_a_client_stops_below_the_hw():
    s, (t0, t1, _t2) = leader_with_lagging_hw()                 # HW 1
    assert ask(s, timestamp=t0)[1] == ListOffsetsResponseData(E.NONE, t0, 0, 0)
    assert ask(s, timestamp=t1)[1] == none()                    # offset 1 is not below the HW: filtered out


def test_timestamps_travel_with_the_records_to_followers():
    s, (t0, t1, t2) = leader_with_lagging_hw()
    s = fetch_round(CFG, s, 1)
    assert ask(s, b=1, timestamp=t1, replica_id=-2)[1] == ListOffsetsResponseData(E.NONE, t1, 1, 0)


# --------------------------------------------------------------------------- errors
def epoch_1():
    """Leader 0 in epoch 1 (broker 2 stopped: the controller shrank the ISR), follower 1 in epoch 1."""
    s = ready(CFG)
    s = drive(CFG, s, A.BrokerCrash(2, True), A.ControllerProcessBrokerChange(0))
    for a in enabled_actions(CFG, s, {A.DeliverControlRequest}):
        s = drive(CFG, s, a)
    while enabled_actions(CFG, s, {A.DeliverControlRequest}):
        s = drive(CFG, s, enabled_actions(CFG, s, {A.DeliverControlRequest})[0])
    assert s.brokers[0].partitions[P].leader_epoch == s.brokers[1].partitions[P].leader_epoch == 1
    return s


@pytest.mark.parametrize("replica_id", [-1, 2, -2])
def test_current_leader_epoch_on_the_leader(replica_id):
    s = epoch_1()
    assert ask(s, replica_id=replica_id, epoch=-1)[1].error == E.NONE
    assert ask(s, replica_id=replica_id, epoch=1)[1].error == E.NONE
    assert ask(s, replica_id=replica_id, epoch=0)[1] == none(E.FENCED_LEADER_EPOCH)
    assert ask(s, replica_id=replica_id, epoch=2)[1] == none(E.UNKNOWN_LEADER_EPOCH)


def test_on_a_follower_the_epoch_is_checked_before_leadership():
    s = epoch_1()
    for replica_id in (-1, 2):                                   # fetchOnlyFromLeader
        for epoch in (-1, 1):
            assert ask(s, b=1, replica_id=replica_id, epoch=epoch)[1] == none(E.NOT_LEADER_FOR_PARTITION)
        assert ask(s, b=1, replica_id=replica_id, epoch=0)[1] == none(E.FENCED_LEADER_EPOCH)
        assert ask(s, b=1, replica_id=replica_id, epoch=2)[1] == none(E.UNKNOWN_LEADER_EPOCH)
    # the debugging replica id may be served by any replica: the follower's own log end
    assert ask(s, b=1, replica_id=-2, epoch=1)[1] == ListOffsetsResponseData(E.NONE, -1, 0, 1)


def test_partition_not_hosted_offline_or_unknown():
    s = ready(CFG)
    s2 = s._clone(object())
    br = s2.broker_mut(0)
    br.partitions = (None,)
    assert handle_list_offsets(s2, br, P, -1, "read_uncommitted", -1, -1).error == E.NOT_LEADER_FOR_PARTITION
    assert handle_list_offsets(s2, br, P, -1, "read_uncommitted", -2, -1).error == E.REPLICA_NOT_AVAILABLE
    br.metadata = br.metadata.__class__()                        # not in the metadata cache either
    assert handle_list_offsets(s2, br, P, -1, "read_uncommitted", -1, -1).error == E.UNKNOWN_TOPIC_OR_PARTITION
    br.partitions = (OFFLINE,)
    assert handle_list_offsets(s2, br, P, -1, "read_uncommitted", -1, -1).error == E.KAFKA_STORAGE_ERROR


def test_offset_not_available_while_the_new_leader_hw_is_below_its_epoch_start():
    """KIP-207: follower 1 has fetched 3 records, HW 1; leader 0 stops and 1 leads in epoch 1 from offset 3."""
    s, (t0, t1, t2) = leader_with_lagging_hw()
    s = fetch_round(CFG, s, 1)
    # a clean stop closes broker 0's session and ends its controller: broker 1 becomes controller and elects itself
    s = drive(CFG, s, A.BrokerCrash(0, True), A.ElectController(1))
    while enabled_actions(CFG, s, {A.DeliverControlRequest}):
        s = drive(CFG, s, enabled_actions(CFG, s, {A.DeliverControlRequest})[0])
    part, log = s.brokers[1].partitions[P], s.brokers[1].logs[P]
    assert (part.leader, part.leader_epoch_start_offset, log.high_watermark) == (1, 3, 1)
    epoch = part.leader_epoch
    for isolation in ("read_uncommitted", "read_committed"):
        assert ask(s, b=1, isolation=isolation)[1] == none(E.OFFSET_NOT_AVAILABLE)
        assert ask(s, b=1, timestamp=t2 + 1, isolation=isolation)[1] == none(E.OFFSET_NOT_AVAILABLE)
        assert ask(s, b=1, timestamp=t1, isolation=isolation)[1] == none(E.OFFSET_NOT_AVAILABLE)
        assert ask(s, b=1, timestamp=t0, isolation=isolation)[1] == ListOffsetsResponseData(E.NONE, t0, 0, 0)
        assert ask(s, b=1, timestamp=-2, isolation=isolation)[1] == ListOffsetsResponseData(E.NONE, -1, 0, 0)
    assert ask(s, b=1, replica_id=2)[1] == ListOffsetsResponseData(E.NONE, -1, 3, epoch)   # no isolation: no check
    # follower 2 catches up: HW 3 = the epoch's start, the error is gone (the boundary is strict: start > HW)
    s = drive(CFG, s, A.OffsetsForLeaderEpoch(2, P))
    for _ in range(2):
        s = fetch_round(CFG, s, 2)
    assert s.brokers[1].logs[P].high_watermark == 3
    assert ask(s, b=1)[1] == ListOffsetsResponseData(E.NONE, -1, 3, epoch)
    assert ask(s, b=1, timestamp=t2 + 1)[1] == none()


# --------------------------------------------------------------------------- the action and the engines
def test_action_codec_refuses_out_of_range_fields():
    a = A.ListOffsets(0, 0, 12345, "read_committed", -2, 3)
    assert A.action_from_json(A.action_to_json(a)) == a
    assert A.action_from_json({"type": "ListOffsets", "broker": 0, "partition": 0}) == A.ListOffsets(0, 0)
    for field, bad in (("timestamp", -3), ("replica_id", -3), ("current_leader_epoch", -2), ("isolation", "x")):
        with pytest.raises(A.ActionError):
            A.action_from_json({"type": "ListOffsets", "broker": 0, "partition": 0, field: bad})
    s = ready(CFG)
    assert step(CFG, s, A.ListOffsets(0, 0, -3)) is None
    assert step(CFG, s, A.ListOffsets(3, 0)) is None


def test_the_engines_offer_list_offsets_only_with_the_flag():
    s = ready(CFG)
    assert not any(type(a) is A.ListOffsets for a in enabled_actions(CFG, s))
    cfg = CFG.replace(list_offsets=True)
    acts = enabled_actions(cfg, s)
    assert acts == enabled_actions_reference(cfg, s)
    assert sum(type(a) is A.ListOffsets for a in acts) == 3 * 6        # 3 live brokers, 6 variants each
    assert "list_offsets" not in CFG.to_json() or CFG.to_json()["list_offsets"] is False


def test_list_offsets_only_observes():
    s, _ = leader_with_lagging_hw()
    s2 = drive(CFG, s, A.ListOffsets(0, 0))
    assert s2.brokers is s.brokers and s2.zk is s.zk and s2.controllers is s.controllers
    assert s2.ghost.acked is s.ghost.acked and s2.record_timestamps is s.record_timestamps


# --------------------------------------------------------------------------- the last response per kind
def test_a_repeated_error_is_observable_per_broker_and_partition():
    s = ready(CFG)
    s = drive(CFG, s, A.Produce(1, P, 1))
    assert s.ghost.responses.produce[1][P] == ProduceResponseData(E.NOT_LEADER_FOR_PARTITION, -1)
    s = drive(CFG, s, A.Produce(0, P, 1))
    assert s.ghost.responses.produce[0][P] == ProduceResponseData(E.NONE, 0)
    s2 = drive(CFG, s, A.Produce(1, P, -1))                            # the same error again, seen again
    assert s2.ghost.responses.produce[1][P] == ProduceResponseData(E.NOT_LEADER_FOR_PARTITION, -1)
    s3 = drive(CFG, s, A.Produce(2, P, 0))                             # acks=0: no response at all
    assert s3.ghost.responses.produce[2][P] is None


def test_acks_all_response_comes_at_completion_and_other_kinds_are_kept():
    s = ready(CFG)
    s = drive(CFG, s, A.Produce(0, P, -1))
    assert s.ghost.responses.produce == ()                              # parked: no response yet
    s = fetch_round(CFG, fetch_round(CFG, s, 1), 2)
    s = fetch_round(CFG, fetch_round(CFG, s, 1), 2)
    assert s.ghost.responses.produce[0][P] == ProduceResponseData(E.NONE, 0)
    assert s.ghost.responses.offsets_for_leader_epoch == ()           # an empty log: no request was sent
    assert s.ghost.responses.leader_and_isr[1][P] == E.NONE
    s = drive(CFG, s, A.ConsumerFetch(1, P))
    assert s.ghost.responses.consumer_fetch[1][P].error == E.NOT_LEADER_FOR_PARTITION


def test_the_explorer_never_takes_list_offsets_and_finds_the_same_states():
    from isrlab.model.config import preset
    from isrlab.properties.explore import bounded_config, explore

    cfg = bounded_config(preset("kafka-2.4").config, 2, 1, 0, 0, 1).replace(produce_acks=(-1,))
    kw = dict(max_leader_epoch=0, max_isr_changes=0, eager_tasks=True, max_time_ms=2500, without=("ConsumerFetch",))
    plain, observed = explore(cfg, **kw), explore(cfg.replace(list_offsets=True), **kw)
    assert plain.complete and observed.complete
    assert observed.distinct_states == plain.distinct_states
