"""Rule tests of model/partition.py against Kafka 2.4.0 (kafka.cluster.Replica / kafka.cluster.Partition).

Rule ids (RS1-RS5, SH1-SH6, EX1-EX5, HW1-HW5, 1.6, M1-M10, F1-F6) are those of
kafka-replication-semantics.md section 1.  Where a case re-expresses a Kafka unit test, the test is named in
its name (``PartitionTest`` of Kafka 2.4.0, core/src/test/scala/unit/kafka/cluster/PartitionTest.scala).

Scenarios are driven through ``step`` where that is natural; rule functions are otherwise called directly on a
writable clone (``s2 = s._clone(object()); br = s2.broker_mut(b)``), as model/step.py's effects do.
"""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model.config import ModelConfig
from isrlab.model.log import Log
from isrlab.model.partition import (create_log_if_not_exists, is_follower_in_sync, is_follower_out_of_sync,
                                    make_follower, make_leader, maybe_expand_isr, maybe_increment_leader_hw,
                                    maybe_shrink_isr, out_of_sync_replicas, reset_last_caught_up_time,
                                    update_follower_fetch_state, update_fetch_state, update_isr)
from isrlab.model.requests import LeaderAndIsrPartitionState
from isrlab.model.state import LeaderIsrAndControllerEpoch, Partition, Replica
from isrlab.model.step import initial_state, step

from conftest import bring_up, drive, fetch_round, produce, ready  # noqa: E402

pytestmark = pytest.mark.unit

CFG = ModelConfig()          # kafka-2.4 preset: 3 brokers, RF 3, replicas (0, 1, 2), lag 10000 ms
LAG = CFG.replica_lag_time_max_ms
P = 0
#: the model's clock at the initial state (Kafka's clock is the wall clock: a lastCaughtUpTimeMs of 0 is
#: 'never', far in the past); every time below is relative to it.
T0 = initial_state(CFG).now


# --------------------------------------------------------------------------- fixtures
def writable(s, now=None):
    """A clone of the cluster owning a fresh write token (model/node.py), optionally at another time."""
    s2 = s._clone(object())
    if now is not None:
        s2.now = now
    return s2


def set_remote(s2, follower, broker=0, **fields):
    """Overwrite fields of the leader's Replica record for ``follower`` in writable clone ``s2``."""
    r = s2.broker_mut(broker).partition_mut(P).remote_mut(follower)
    for k, v in fields.items():
        setattr(r, k, v)
    return r


def set_partition(s2, broker=0, **fields):
    part = s2.broker_mut(broker).partition_mut(P)
    for k, v in fields.items():
        setattr(part, k, v)
    return part


def set_log(s2, broker=0, **fields):
    log = s2.broker_mut(broker).log_mut(P)
    for k, v in fields.items():
        setattr(log, k, v)
    return log


def lis(leader, leader_epoch, isr, replicas=(0, 1, 2), controller_epoch=1, zk_version=1):
    return LeaderAndIsrPartitionState(P, controller_epoch, leader, leader_epoch, tuple(isr), zk_version,
                                      tuple(replicas))


def leader_with(cfg=CFG, n_records=4, hw=None, **remotes):
    """A writable clone where broker 0 leads with ``n_records`` records; remote fields set from ``remotes``.

    ``remotes`` maps "r1"/"r2" to dicts of Replica fields.
    """
    s = produce(cfg, ready(cfg), n_records)
    s2 = writable(s)
    for name, fields in remotes.items():
        set_remote(s2, int(name[1:]), **fields)
    if hw is not None:
        set_log(s2, high_watermark=hw)
    return s2


# =========================================================================== RS1-RS5: Replica.updateFetchState
def test_RS1_fetch_at_leader_leo_credits_this_fetch_time():
    r = Replica(1, log_end_offset=3, last_fetch_leader_log_end_offset=3, last_fetch_time_ms=100,
                last_caught_up_time_ms=50)
    update_fetch_state(r, fetch_offset=5, follower_start_offset=0, fetch_time_ms=200, leader_end_offset=5)
    assert (r.last_caught_up_time_ms, r.log_end_offset, r.log_start_offset) == (200, 5, 0)
    assert (r.last_fetch_leader_log_end_offset, r.last_fetch_time_ms) == (5, 200)


def test_RS1_is_a_max_never_lowers_last_caught_up():
    r = Replica(1, log_end_offset=5, last_fetch_leader_log_end_offset=5, last_fetch_time_ms=100,
                last_caught_up_time_ms=300)
    update_fetch_state(r, 5, 0, 200, 5)
    assert r.last_caught_up_time_ms == 300


def test_RS2_reaching_previous_leader_leo_credits_previous_fetch_time():
    """The follower reaches what the leader's LEO was at its previous fetch: caught up as of that fetch (t=100)."""
    r = Replica(1, log_end_offset=2, last_fetch_leader_log_end_offset=4, last_fetch_time_ms=100,
                last_caught_up_time_ms=50)
    update_fetch_state(r, fetch_offset=4, follower_start_offset=0, fetch_time_ms=200, leader_end_offset=6)
    assert r.last_caught_up_time_ms == 100
    assert (r.log_end_offset, r.last_fetch_leader_log_end_offset, r.last_fetch_time_ms) == (4, 6, 200)
    # The next fetch reaches 6 (the LEO at t=200) while the leader is at 8: credited with 200.
    update_fetch_state(r, 6, 0, 300, 8)
    assert r.last_caught_up_time_ms == 200


def test_RS2_after_new_leader_reset_credits_time_zero():
    """M8: a new leader's remotes have lastFetchTimeMs 0, so RS2 on the first fetch credits nothing."""
    r = Replica(1, log_end_offset=-1, last_fetch_leader_log_end_offset=-1, last_fetch_time_ms=0,
                last_caught_up_time_ms=0)
    update_fetch_state(r, fetch_offset=2, follower_start_offset=0, fetch_time_ms=5000, leader_end_offset=4)
    assert r.last_caught_up_time_ms == 0


def test_RS3_behind_previous_leader_leo_keeps_last_caught_up():
    r = Replica(1, log_end_offset=2, last_fetch_leader_log_end_offset=4, last_fetch_time_ms=100,
                last_caught_up_time_ms=50)
    update_fetch_state(r, fetch_offset=3, follower_start_offset=0, fetch_time_ms=200, leader_end_offset=6)
    assert r.last_caught_up_time_ms == 50
    assert (r.log_end_offset, r.last_fetch_leader_log_end_offset, r.last_fetch_time_ms) == (3, 6, 200)


def test_RS4_leo_and_last_fetch_leader_leo_are_overwritten_and_may_go_down():
    r = Replica(1, log_end_offset=5, log_start_offset=1, last_fetch_leader_log_end_offset=8,
                last_fetch_time_ms=100, last_caught_up_time_ms=50)
    update_fetch_state(r, fetch_offset=2, follower_start_offset=0, fetch_time_ms=90, leader_end_offset=6)
    # 2 < 6 and 2 < 8: RS3; the rest is overwritten (2.4 has no max on lastFetchLeaderLogEndOffset or time).
    assert (r.log_end_offset, r.log_start_offset, r.last_fetch_leader_log_end_offset) == (2, 0, 6)
    assert (r.last_fetch_time_ms, r.last_caught_up_time_ms) == (90, 50)


def test_RS5_reset_last_caught_up_time_sets_all_three():
    r = Replica(1, log_end_offset=3, last_fetch_leader_log_end_offset=1, last_fetch_time_ms=10,
                last_caught_up_time_ms=999)
    reset_last_caught_up_time(r, cur_leader_leo=7, now=500, last_caught_up_ms=0)
    assert (r.last_fetch_leader_log_end_offset, r.last_fetch_time_ms, r.last_caught_up_time_ms) == (7, 500, 0)
    assert r.log_end_offset == 3


# =========================================================================== SH1-SH6: maybeShrinkIsr
def _shrink_setup(now):
    """Leader 0 LEO 4 HW 1; follower 1 at LEO 1 caught up at T0+1000; follower 2 at the leader's LEO, never."""
    s2 = leader_with(hw=1, r1=dict(log_end_offset=1, last_caught_up_time_ms=T0 + 1000),
                     r2=dict(log_end_offset=4, last_caught_up_time_ms=0))
    s2.now = now
    return s2


def test_SH3_exactly_max_lag_behind_stays():
    s2 = _shrink_setup(T0 + 1000 + LAG)
    br = s2.broker_mut(0)
    assert out_of_sync_replicas(CFG, br, br.partitions[P], s2.now) == ()
    assert maybe_shrink_isr(CFG, s2, br, P, s2.now) is False
    assert br.partitions[P].isr == (0, 1, 2)


def test_SH3_one_ms_more_leaves_strict_greater():
    s2 = _shrink_setup(T0 + 1000 + LAG + 1)
    br = s2.broker_mut(0)
    assert out_of_sync_replicas(CFG, br, br.partitions[P], s2.now) == (1,)
    assert maybe_shrink_isr(CFG, s2, br, P, s2.now) is True
    assert s2.brokers[0].partitions[P].isr == (0, 2)


def test_SH3_follower_at_leader_leo_never_leaves_KAFKA_7152():
    s2 = _shrink_setup(T0 + 10 ** 7)  # follower 2 never caught up (0), but its LEO equals the leader's LEO
    br = s2.broker_mut(0)
    assert out_of_sync_replicas(CFG, br, br.partitions[P], s2.now) == (1,)
    assert is_follower_out_of_sync(br.partitions[P].remote(2), 4, T0 + 10 ** 7, LAG) is False
    maybe_shrink_isr(CFG, s2, br, P, s2.now)
    assert s2.brokers[0].partitions[P].isr == (0, 2)


def test_SH3_is_follower_out_of_sync_table():
    r = Replica(1, log_end_offset=3, last_caught_up_time_ms=100)
    assert is_follower_out_of_sync(r, 4, 100 + LAG, LAG) is False
    assert is_follower_out_of_sync(r, 4, 101 + LAG, LAG) is True
    assert is_follower_out_of_sync(r, 3, 10 ** 9, LAG) is False
    assert is_follower_out_of_sync(Replica(1, log_end_offset=5, last_caught_up_time_ms=0), 3, 10 ** 9, LAG) is True


def test_SH1_only_the_leader_shrinks():
    s = produce(CFG, ready(), 2)
    s2 = writable(s, now=T0 + 10 ** 6)
    br = s2.broker_mut(1)  # a follower: its Partition keeps an empty ISR (F2)
    set_remote(s2, 0, broker=1, log_end_offset=0, last_caught_up_time_ms=0)
    assert maybe_shrink_isr(CFG, s2, br, P, s2.now) is False
    assert s2.brokers[1].partitions[P].isr == ()
    assert s2.zk == s.zk


def test_SH2_only_isr_members_are_candidates():
    s2 = _shrink_setup(T0 + 1000 + LAG + 1)
    set_partition(s2, isr=(0, 2))  # follower 1 is out of sync but not in the ISR
    br = s2.broker_mut(0)
    assert out_of_sync_replicas(CFG, br, br.partitions[P], s2.now) == ()
    assert maybe_shrink_isr(CFG, s2, br, P, s2.now) is False


def test_SH4_SH5_shrink_writes_zk_with_partition_controller_epoch_and_records_change():
    s2 = _shrink_setup(T0 + 1000 + LAG + 1)
    set_partition(s2, controller_epoch=7)  # the epoch of the controller that made the leadership decision
    before = s2.zk.partition_states[P]
    br = s2.broker_mut(0)
    assert maybe_shrink_isr(CFG, s2, br, P, s2.now) is True
    assert s2.zk.partition_states[P] == LeaderIsrAndControllerEpoch(0, before.leader_epoch, (0, 2), 7,
                                                                    before.zk_version + 1)
    part = s2.brokers[0].partitions[P]
    assert (part.isr, part.zk_version, part.leader_epoch) == ((0, 2), before.zk_version + 1, before.leader_epoch)
    assert s2.brokers[0].isr_change_set == (P,)
    assert s2.brokers[0].last_isr_change_ms == s2.now


def test_SH5_zk_cas_failure_with_stale_zk_version_leaves_isr_unchanged():
    s2 = _shrink_setup(T0 + 1000 + LAG + 1)
    zk = s2.zk_mut()
    st = zk.partition_states[P]
    bumped = LeaderIsrAndControllerEpoch(st.leader, st.leader_epoch, st.isr, st.controller_epoch, st.zk_version + 1)
    zk.partition_states = (bumped,)  # someone (the controller) wrote the znode: our cached zkVersion is stale
    br = s2.broker_mut(0)
    assert maybe_shrink_isr(CFG, s2, br, P, s2.now) is False
    part = s2.brokers[0].partitions[P]
    assert part.isr == (0, 1, 2)
    assert part.zk_version == st.zk_version
    assert s2.zk.partition_states[P] == bumped
    assert s2.brokers[0].isr_change_set == ()


def test_SH5_update_isr_direct_cas_failure_returns_false():
    s2 = _shrink_setup(0)
    set_partition(s2, zk_version=5)  # cached zkVersion ahead of the znode's (0)
    assert update_isr(CFG, s2, s2.broker_mut(0), P, (0,)) is False
    assert s2.brokers[0].partitions[P].isr == (0, 1, 2)


def test_SH6_hw_raised_after_shrink_and_delayed_produce_completed():
    s = produce(CFG, ready(), 2)
    s = drive(CFG, s, A.Produce(0, P, -1))  # acks=-1 at offset 2, waiting for HW 3
    assert len(s.brokers[0].delayed_produces) == 1
    s2 = writable(s, now=T0 + LAG + 1)
    set_remote(s2, 1, log_end_offset=0, last_caught_up_time_ms=T0)
    set_remote(s2, 2, log_end_offset=0, last_caught_up_time_ms=T0)
    br = s2.broker_mut(0)
    assert maybe_shrink_isr(CFG, s2, br, P, s2.now) is True
    assert s2.brokers[0].partitions[P].isr == (0,)
    assert s2.brokers[0].logs[P].high_watermark == 3
    assert s2.brokers[0].delayed_produces == ()
    assert [a[:2] for a in s2.ghost.acked] == [(3, 2)]  # record id 3 acknowledged at offset 2


def test_SH6_hw_recomputed_even_when_the_zk_write_fails_Partition_maybeShrinkIsr():
    """2.4.0 maybeShrinkIsr calls maybeIncrementLeaderHW after shrinkIsr whatever its outcome: with the ISR
    unchanged, a non-ISR follower that aged out of the lag window no longer holds the HW."""
    s2 = leader_with(hw=1, r1=dict(log_end_offset=3, last_caught_up_time_ms=T0),
                     r2=dict(log_end_offset=1, last_caught_up_time_ms=T0))
    set_partition(s2, isr=(0, 1))
    zk = s2.zk_mut()
    st = zk.partition_states[P]
    zk.partition_states = (LeaderIsrAndControllerEpoch(st.leader, st.leader_epoch, (0, 1), st.controller_epoch,
                                                       st.zk_version + 1),)
    s2.now = T0 + LAG + 1
    assert maybe_shrink_isr(CFG, s2, s2.broker_mut(0), P, s2.now) is False
    assert s2.brokers[0].partitions[P].isr == (0, 1)
    assert s2.brokers[0].logs[P].high_watermark == 3


# =========================================================================== HW1-HW5: maybeIncrementLeaderHW
def _hw_setup(now):
    """Leader LEO 4 HW 0, ISR (0,); follower 1 (not in the ISR) at LEO 2, caught up at T0+1000; follower 2 at 4."""
    s2 = leader_with(hw=0, r1=dict(log_end_offset=2, last_caught_up_time_ms=T0 + 1000),
                     r2=dict(log_end_offset=4, last_caught_up_time_ms=0))
    set_partition(s2, isr=(0,))
    s2.now = now
    return s2


def test_HW1_non_isr_replica_caught_up_within_window_holds_hw_le():
    s2 = _hw_setup(T0 + 1000 + LAG)  # now - lastCaughtUp == maxLag: counts (<=)
    assert maybe_increment_leader_hw(CFG, s2.broker_mut(0), P, s2.now) is True
    assert s2.brokers[0].logs[P].high_watermark == 2


def test_HW1_non_isr_replica_one_ms_past_window_is_ignored():
    s2 = _hw_setup(T0 + 1000 + LAG + 1)
    assert maybe_increment_leader_hw(CFG, s2.broker_mut(0), P, s2.now) is True
    assert s2.brokers[0].logs[P].high_watermark == 4


def test_HW1_isr_member_counts_however_old():
    s2 = _hw_setup(T0 + 10 ** 8)
    set_partition(s2, isr=(0, 1))
    maybe_increment_leader_hw(CFG, s2.broker_mut(0), P, s2.now)
    assert s2.brokers[0].logs[P].high_watermark == 2


def test_HW1_remote_ahead_of_leader_does_not_raise_hw_above_leader_leo():
    s2 = _hw_setup(T0)
    set_remote(s2, 1, log_end_offset=9, last_caught_up_time_ms=T0)
    maybe_increment_leader_hw(CFG, s2.broker_mut(0), P, s2.now)
    assert s2.brokers[0].logs[P].high_watermark == 4


def test_HW3_leader_hw_never_decreases():
    s2 = _hw_setup(T0)
    set_log(s2, high_watermark=3)
    set_partition(s2, isr=(0, 1, 2))  # follower 1 at LEO 2 < HW 3
    assert maybe_increment_leader_hw(CFG, s2.broker_mut(0), P, s2.now) is False
    assert s2.brokers[0].logs[P].high_watermark == 3


def test_HW3_follower_leo_going_down_does_not_lower_leader_hw():
    s = produce(CFG, ready(), 2)
    for f in (1, 2):
        s = fetch_round(CFG, s, f)
        s = fetch_round(CFG, s, f)
    assert s.brokers[0].logs[P].high_watermark == 2
    s2 = writable(s)
    br = s2.broker_mut(0)
    # follower 1 fetches from offset 1 (e.g. after its own truncation): its LEO goes down (RS4)
    assert update_follower_fetch_state(CFG, s2, br, P, 1, 1, 0, s2.now, 2) is True
    assert s2.brokers[0].partitions[P].remote(1).log_end_offset == 1
    assert s2.brokers[0].logs[P].high_watermark == 2


def test_HW4_fetch_that_does_not_move_follower_leo_does_not_recompute_hw():
    """2.4: maybeIncrementLeaderHW only if prevFollowerEndOffset != LEO."""
    s2 = leader_with(hw=1, r1=dict(log_end_offset=4, last_caught_up_time_ms=0),
                     r2=dict(log_end_offset=1, last_caught_up_time_ms=T0 + 1000))
    set_partition(s2, isr=(0, 1))
    s2.now = T0 + 1000 + LAG + 5  # follower 2 (not in the ISR) has aged out of the window
    br = s2.broker_mut(0)
    update_follower_fetch_state(CFG, s2, br, P, 1, 4, 0, s2.now, 4)  # LEO 4 -> 4
    assert s2.brokers[0].logs[P].high_watermark == 1
    # an append does recompute it (HW4): min(5, follower 1 at 4) = 4
    s3 = drive(CFG, s2, A.Produce(0, P, 1))
    assert s3.brokers[0].logs[P].high_watermark == 4


def test_HW5_new_leader_hw_frozen_until_every_isr_follower_fetched():
    s = produce(CFG, ready(), 3)
    s = fetch_round(CFG, fetch_round(CFG, s, 1), 1)  # follower 1 has 0..2, HW 0 (follower 2 LEO -1)
    assert s.brokers[0].logs[P].high_watermark == 0
    s2 = writable(s)
    br1 = s2.broker_mut(1)
    assert make_leader(CFG, s2, br1, P, lis(1, 1, (0, 1, 2)), s2.now) is True
    part = s2.brokers[1].partitions[P]
    assert [r.log_end_offset for r in part.remote_replicas] == [-1, -1]
    assert s2.brokers[1].logs[P].high_watermark == 0
    # follower 0 fetching at 3 is not enough: follower 2 (ISR, LEO -1) still holds the HW
    update_follower_fetch_state(CFG, s2, br1, P, 0, 3, 0, s2.now, 3)
    assert s2.brokers[1].logs[P].high_watermark == 0
    update_follower_fetch_state(CFG, s2, br1, P, 2, 3, 0, s2.now, 3)
    assert s2.brokers[1].logs[P].high_watermark == 3


# =========================================================================== EX1-EX5: maybeExpandIsr
def _expand_setup(follower_leo, hw, epoch_start, cfg=CFG):
    s2 = leader_with(cfg, hw=hw, r1=dict(log_end_offset=follower_leo, last_caught_up_time_ms=0))
    set_partition(s2, isr=(0, 2), leader_epoch_start_offset=epoch_start)
    return s2


def test_EX2_follower_at_hw_and_epoch_start_is_added_and_recorded():
    s2 = _expand_setup(follower_leo=2, hw=2, epoch_start=2)
    s2.now = T0 + 777
    before = s2.zk.partition_states[P]
    assert maybe_expand_isr(CFG, s2, s2.broker_mut(0), P, 1) is True
    assert s2.brokers[0].partitions[P].isr == (0, 1, 2)
    assert s2.zk.partition_states[P] == LeaderIsrAndControllerEpoch(0, before.leader_epoch, (0, 1, 2),
                                                                    before.controller_epoch, before.zk_version + 1)
    assert (s2.brokers[0].isr_change_set, s2.brokers[0].last_isr_change_ms) == ((P,), T0 + 777)


def test_EX2_follower_below_hw_is_not_added():
    s2 = _expand_setup(follower_leo=1, hw=2, epoch_start=0)
    assert maybe_expand_isr(CFG, s2, s2.broker_mut(0), P, 1) is False
    assert s2.brokers[0].partitions[P].isr == (0, 2)


def test_EX2_kafka_7128_requires_leo_ge_leader_epoch_start_offset():
    s2 = _expand_setup(follower_leo=2, hw=2, epoch_start=3)
    part = s2.brokers[0].partitions[P]
    assert is_follower_in_sync(CFG, part.remote(1), part, s2.brokers[0].logs[P]) is False
    assert maybe_expand_isr(CFG, s2, s2.broker_mut(0), P, 1) is False
    assert s2.brokers[0].partitions[P].isr == (0, 2)


def test_EX2_without_kafka_7128_only_hw_condition():
    cfg = CFG.replace(kafka_7128=False)
    s2 = _expand_setup(follower_leo=2, hw=2, epoch_start=3, cfg=cfg)
    assert maybe_expand_isr(cfg, s2, s2.broker_mut(0), P, 1) is True
    assert s2.brokers[0].partitions[P].isr == (0, 1, 2)
    s3 = _expand_setup(follower_leo=1, hw=2, epoch_start=0, cfg=cfg)
    assert maybe_expand_isr(cfg, s3, s3.broker_mut(0), P, 1) is False


def test_EX2_follower_never_expands_no_epoch_start():
    s = produce(CFG, ready(), 1)
    s2 = writable(s)
    set_remote(s2, 2, broker=1, log_end_offset=5)
    part = s2.brokers[1].partitions[P]
    assert part.leader_epoch_start_offset == -1
    assert maybe_expand_isr(CFG, s2, s2.broker_mut(1), P, 2) is False
    assert s2.brokers[1].partitions[P].isr == ()


def test_EX3_unassigned_replica_is_not_considered_and_one_at_a_time():
    s2 = _expand_setup(follower_leo=4, hw=0, epoch_start=0)
    set_partition(s2, isr=(0,))
    set_remote(s2, 2, log_end_offset=4)
    assert maybe_expand_isr(CFG, s2, s2.broker_mut(0), P, 7) is False
    assert maybe_expand_isr(CFG, s2, s2.broker_mut(0), P, 1) is True
    assert s2.brokers[0].partitions[P].isr == (0, 1)  # only the fetching follower was added
    assert maybe_expand_isr(CFG, s2, s2.broker_mut(0), P, 1) is False  # already in the ISR


def test_EX4_no_time_condition():
    s2 = _expand_setup(follower_leo=2, hw=2, epoch_start=0)
    s2.now = T0 + 10 ** 9  # last caught up at 0, far outside the lag window
    assert maybe_expand_isr(CFG, s2, s2.broker_mut(0), P, 1) is True


def test_EX5_expand_cas_failure_leaves_isr_unchanged():
    s2 = _expand_setup(follower_leo=2, hw=2, epoch_start=0)
    set_partition(s2, zk_version=9)
    assert maybe_expand_isr(CFG, s2, s2.broker_mut(0), P, 1) is False
    assert s2.brokers[0].partitions[P].isr == (0, 2)
    assert s2.brokers[0].isr_change_set == ()


def test_EX1_expand_evaluated_on_fetch_of_non_isr_follower():
    s2 = _expand_setup(follower_leo=0, hw=1, epoch_start=0)
    br = s2.broker_mut(0)
    assert update_follower_fetch_state(CFG, s2, br, P, 1, 1, 0, s2.now, 4) is True
    assert s2.brokers[0].partitions[P].isr == (0, 1, 2)


# =========================================================================== 1.6: updateFollowerFetchState
def test_1_6_unknown_follower_is_not_updated():
    s2 = leader_with()
    assert update_follower_fetch_state(CFG, s2, s2.broker_mut(0), P, 7, 1, 0, 0, 4) is False


def test_1_6_response_hw_is_the_one_before_this_fetch_advanced_it():
    """Partition.readRecords snapshots the HW before updateFollowerFetchState (FE4; root of KIP-101 scenario 1)."""
    s = produce(CFG, ready(), 2)
    s = fetch_round(CFG, s, 2)                    # follower 2 has 0..1, leader HW 0 (follower 1 at LEO 0)
    s = fetch_round(CFG, s, 1)                    # follower 1 has 0..1
    s = drive(CFG, s, A.FetchRequest(2, P))        # follower 2 fetches at 2: its LEO 2 advances the HW
    s = drive(CFG, s, A.FetchRequest(1, P))        # follower 1 fetches at 2: HW -> 2 on the leader
    assert s.brokers[0].logs[P].high_watermark == 2
    assert s.brokers[1].fetchers[P].inflight.high_watermark == 0  # snapshotted before this fetch moved it
    s = drive(CFG, s, A.FetchResponse(1, P))
    assert s.brokers[1].logs[P].high_watermark == 0
    s = fetch_round(CFG, s, 1)                    # one round-trip later the follower learns it
    assert s.brokers[1].logs[P].high_watermark == 2


def test_1_6_fetch_updates_state_then_expands_then_raises_hw():
    s2 = leader_with(hw=0, r1=dict(log_end_offset=0, last_caught_up_time_ms=0),
                     r2=dict(log_end_offset=4, last_caught_up_time_ms=0))
    set_partition(s2, isr=(0, 2), leader_epoch_start_offset=0)
    s2.now = T0 + 50
    br = s2.broker_mut(0)
    update_follower_fetch_state(CFG, s2, br, P, 1, 4, 0, T0 + 40, 4)
    r = s2.brokers[0].partitions[P].remote(1)
    assert (r.log_end_offset, r.last_caught_up_time_ms, r.last_fetch_time_ms) == (4, T0 + 40, T0 + 40)
    assert s2.brokers[0].partitions[P].isr == (0, 1, 2)
    assert s2.brokers[0].logs[P].high_watermark == 4


# =========================================================================== M1-M10: makeLeader
def _replicated(n=3):
    s = produce(CFG, ready(), n)
    for f in (1, 2):
        s = fetch_round(CFG, fetch_round(CFG, s, f), f)
    return s


def test_M1_to_M10_follower_becomes_new_leader_PartitionTest_testMakeLeaderUpdatesEpochCache():
    s = _replicated(3)
    s = produce(CFG, s, 1)                      # offset 3 only on broker 0
    s = fetch_round(CFG, s, 1)                  # broker 1: LEO 4, HW 3
    s2 = writable(s, now=T0 + 4242)
    br1 = s2.broker_mut(1)
    assert br1.logs[P].log_end_offset == 4 and br1.logs[P].high_watermark == 3
    old_remote0 = br1.partitions[P].remote(0)
    ps = lis(1, 3, (1, 2), replicas=(1, 0, 2), controller_epoch=5, zk_version=8)
    assert make_leader(CFG, s2, br1, P, ps, s2.now) is True               # M6: was not leader
    part = s2.brokers[1].partitions[P]
    log = s2.brokers[1].logs[P]
    assert part.controller_epoch == 5                                     # M1
    assert part.assigned_replicas == (1, 0, 2) and part.isr == (1, 2)     # M2 (AR order kept)
    assert [r.broker_id for r in part.remote_replicas] == [0, 2]
    assert (part.leader_epoch_start_offset, part.leader_epoch, part.zk_version) == (4, 3, 8)   # M4
    assert log.epoch_cache == ((0, 0), (3, 4))                             # M5 (KAFKA-7415)
    assert part.leader == 1
    r0, r2 = part.remote(0), part.remote(2)
    # M7 then M8: lastCaughtUp = now for ISR members, 0 otherwise; LEO reset to -1 for a new leader
    assert (r0.log_end_offset, r0.log_start_offset, r0.last_fetch_leader_log_end_offset,
            r0.last_fetch_time_ms, r0.last_caught_up_time_ms) == (-1, -1, -1, 0, 0)
    assert (r2.log_end_offset, r2.log_start_offset, r2.last_fetch_leader_log_end_offset,
            r2.last_fetch_time_ms, r2.last_caught_up_time_ms) == (-1, -1, -1, 0, T0 + 4242)
    assert old_remote0 is s.brokers[1].partitions[P].remote(0)            # input state untouched
    assert log.high_watermark == 3                                         # M9/M10: HW kept (ISR member at -1)
    assert s2.ghost.leaders[-1] == (P, 3, 1)


def test_M5_without_kafka_7415_cache_not_assigned_until_first_append():
    cfg = CFG.replace(kafka_7415=False)
    s = produce(cfg, ready(cfg), 2)
    s = fetch_round(cfg, fetch_round(cfg, s, 1), 1)
    s2 = writable(s)
    br1 = s2.broker_mut(1)
    make_leader(cfg, s2, br1, P, lis(1, 2, (0, 1, 2)), s2.now)
    assert s2.brokers[1].logs[P].epoch_cache == ((0, 0),)
    assert s2.brokers[1].partitions[P].leader_epoch_start_offset == 2
    s3 = drive(cfg, s2, A.Produce(1, P, 1))
    assert s3.brokers[1].logs[P].epoch_cache == ((0, 0), (2, 2))


def test_M7_M8_re_elected_leader_keeps_remote_leos_but_resets_catch_up_times():
    s = _replicated(3)
    s2 = writable(s, now=T0 + 9000)
    br0 = s2.broker_mut(0)
    before = {r.broker_id: r.log_end_offset for r in br0.partitions[P].remote_replicas}
    assert before == {1: 3, 2: 3}
    assert make_leader(CFG, s2, br0, P, lis(0, 1, (0, 1)), s2.now) is False   # M6: already leader
    part = s2.brokers[0].partitions[P]
    r1, r2 = part.remote(1), part.remote(2)
    assert (r1.log_end_offset, r1.last_fetch_leader_log_end_offset, r1.last_fetch_time_ms,
            r1.last_caught_up_time_ms) == (3, 3, T0 + 9000, T0 + 9000)
    assert (r2.log_end_offset, r2.last_fetch_leader_log_end_offset, r2.last_fetch_time_ms,
            r2.last_caught_up_time_ms) == (3, 3, T0 + 9000, 0)
    assert part.leader_epoch == 1 and part.leader_epoch_start_offset == 3
    assert s2.brokers[0].logs[P].epoch_cache == ((0, 0), (1, 3))


def test_M9_isr_of_one_commits_at_once():
    s = _replicated(2)
    s = produce(CFG, s, 2)  # leader LEO 4, HW 2; followers at LEO 2
    s2 = writable(s)
    # M7 resets the non-ISR followers' lastCaughtUp to 0 ("never"): outside the window, only the ISR counts.
    make_leader(CFG, s2, s2.broker_mut(0), P, lis(0, 1, (0,)), s2.now)
    assert s2.brokers[0].logs[P].high_watermark == 4


def test_M9_HW1_lastcaughtup_zero_within_window_holds_hw():
    """If the clock is within maxLag of 0, the reset value 0 still counts as caught up (HW1 ``<=``)."""
    s = produce(CFG, _replicated(2), 2)
    s2 = writable(s, now=LAG)
    make_leader(CFG, s2, s2.broker_mut(0), P, lis(0, 1, (0,)), s2.now)
    assert s2.brokers[0].logs[P].high_watermark == 2


def test_M2_existing_remote_replicas_keep_state_new_ones_are_fresh_removed_ones_go():
    s = _replicated(3)
    s2 = writable(s, now=T0 + 100)
    br0 = s2.broker_mut(0)
    make_leader(CFG, s2, br0, P, lis(0, 1, (0, 1), replicas=(0, 1, 3)), s2.now)
    part = s2.brokers[0].partitions[P]
    assert [r.broker_id for r in part.remote_replicas] == [1, 3]
    assert part.remote(1).log_end_offset == 3
    assert part.remote(3) == Replica(3, -1, -1, 3, T0 + 100, 0)  # fresh, then M7 reset (not in the ISR)


def test_M3_create_log_hw_from_checkpoint_clamped():
    s = ready()
    s2 = writable(s)
    br = s2.broker_mut(1)
    br.logs = (None,)
    br.hw_checkpoint = (5,)
    log = create_log_if_not_exists(br, P)
    assert (log.log_end_offset, log.high_watermark) == (0, 0)   # clamp(5, [0, 0])
    assert s2.brokers[1].logs[P] is log
    br.logs = (None,)
    br.hw_checkpoint = (None,)
    assert create_log_if_not_exists(br, P).high_watermark == 0
    existing = Log(entries=((1, 0),), high_watermark=1)
    br.logs = (existing,)
    assert create_log_if_not_exists(br, P) is existing


# =========================================================================== F1-F6: makeFollower
def _follower_state(cfg):
    """Broker 1 follows leader 0 in epoch 0 with 2 replicated records."""
    s = produce(cfg, ready(cfg), 2)
    return fetch_round(cfg, fetch_round(cfg, s, 1), 1)


F5_CASES = [
    # (flags, leader, epoch, expected return)
    (dict(), 0, 0, False),
    (dict(), 0, 1, True),
    (dict(), 0, 2, True),
    (dict(), 2, 0, True),
    (dict(kip_320=False), 0, 0, False),
    (dict(kip_320=False), 0, 1, False),
    (dict(kip_320=False), 0, 2, True),
    (dict(kip_320=False), 2, 1, True),
    (dict(kip_320=False, kafka_7164=False), 0, 0, False),
    (dict(kip_320=False, kafka_7164=False), 0, 1, False),
    (dict(kip_320=False, kafka_7164=False), 0, 2, False),
    (dict(kip_320=False, kafka_7164=False), 2, 1, True),
]


@pytest.mark.parametrize("flags,leader,epoch,expected", F5_CASES)
def test_F5_make_follower_return_value(flags, leader, epoch, expected):
    cfg = CFG.replace(**flags)
    s = _follower_state(cfg)
    s2 = writable(s)
    br1 = s2.broker_mut(1)
    assert make_follower(cfg, s2, br1, P, lis(leader, epoch, (0, 1, 2), zk_version=4)) is expected
    part = s2.brokers[1].partitions[P]
    assert part.leader == (leader if expected else 0)
    assert part.leader_epoch == epoch  # F4: the epoch is recorded either way


def test_F1_to_F4_and_F6_make_follower_fields_and_no_truncation():
    s = produce(CFG, _replicated(2), 2)   # broker 0 LEO 4, HW 2
    s2 = writable(s)
    br0 = s2.broker_mut(0)
    log_before = br0.logs[P]
    assert make_follower(CFG, s2, br0, P, lis(1, 1, (1, 2), replicas=(1, 2, 0), controller_epoch=3,
                                             zk_version=6)) is True
    part = s2.brokers[0].partitions[P]
    assert part.controller_epoch == 3                                          # F1
    assert part.isr == () and part.assigned_replicas == (1, 2, 0)              # F2
    assert [r.broker_id for r in part.remote_replicas] == [1, 2]
    assert (part.leader, part.leader_epoch, part.leader_epoch_start_offset, part.zk_version) == (1, 1, -1, 6)
    assert s2.brokers[0].logs[P] == log_before                                 # F6: no truncation here
    assert s2.brokers[0].logs[P].log_end_offset == 4


def test_F3_make_follower_creates_missing_log():
    s = ready()
    s2 = writable(s)
    br2 = s2.broker_mut(2)
    br2.partitions = (Partition(P),)
    br2.logs = (None,)
    br2.hw_checkpoint = (0,)
    assert make_follower(CFG, s2, br2, P, lis(0, 1, (0, 1, 2))) is True
    assert s2.brokers[2].logs[P] == Log()
