"""Rule tests of truncate on fetch (KAFKA-10554, Kafka 2.8.0) and its fixes KAFKA-13141 and KAFKA-14704.

Leader side: ``Partition.readRecords``' lastFetchedEpoch check (2.8.0) and ``ReplicaManager.updateFollowerFetchState``
(2.7.2 for KAFKA-13141).  Follower side: ``AbstractFetcherThread.processFetchRequest`` / ``truncateOnFetchResponse``
/ ``getOffsetTruncationState`` and ``ReplicaManager.initialFetchOffset`` (2.8.0; 3.5.0 for KAFKA-14704).  Logs are
written by hand into a writable clone of a running cluster (leader 0, followers 1 and 2, every fetcher at offset 0),
then the fetch is driven through ``step``.  Without ``kafka_10554`` nothing of this exists (the last tests).
"""

from __future__ import annotations

import dataclasses

import pytest

from isrlab.model import actions as A
from isrlab.model import errors as E
from isrlab.model.config import preset
from isrlab.model.log import Log
from isrlab.model.node import replace_at
from isrlab.model.replica_manager import make_followers
from isrlab.model.requests import LeaderAndIsrPartitionState
from isrlab.model.state import FETCHING, TRUNCATING
from isrlab.model.step import step
from isrlab.properties.invariants import BY_NAME

from conftest import drive, ready  # noqa: E402

pytestmark = pytest.mark.unit

CFG = preset("truncate-on-fetch").config      # AlterIsr + truncate on fetch, every fix in
P = 0
EPOCH = 3                                     # the partition's leader epoch in the hand-written states

#: the leader's log: a b in epoch 0, c in epoch 1 at offset 2, d in epoch 3 at offset 3; HW 3
LEADER = Log(0, ((1, 0), (2, 0), (3, 1), (4, 3)), 3, 0, ((0, 0), (1, 2), (3, 3)))


def follower_log(entries, hw, cache):
    return Log(0, tuple(entries), hw, 0, tuple(cache))


def setup(follower, cfg=CFG, leader=LEADER):
    """``ready(cfg)`` with the leader's and follower 1's logs replaced, leader epoch EPOCH everywhere, and follower
    1 fetching at its LEO."""
    s = ready(cfg)._clone(object())
    for b in (0, 1, 2):
        br = s.broker_mut(b)
        br.partition_mut(P).leader_epoch = EPOCH
        if b != 0:
            br.fetcher_mut(P).leader_epoch = EPOCH
    b0 = s.broker_mut(0)
    b0.logs = replace_at(b0.logs, P, leader._clone(b0._tok))
    b1 = s.broker_mut(1)
    b1.logs = replace_at(b1.logs, P, follower._clone(b1._tok))
    b1.fetcher_mut(P).fetch_offset = follower.log_end_offset
    zk = s.zk_mut()
    zk.partition_states = replace_at(zk.partition_states, P,
                                     dataclasses.replace(zk.partition_states[P], leader_epoch=EPOCH))
    return s


def fetch(s, cfg=CFG, b=1):
    return drive(cfg, s, A.FetchRequest(b, P))


def inflight(s, b=1):
    return s.brokers[b].fetchers[P].inflight


# =========================================================================== the leader (Partition.readRecords)
#: the follower holds a b c in epochs 0, 0, 1 and a record z of its own in epoch 1 at offset 3
Z_IN_EPOCH_1 = follower_log([(1, 0), (2, 0), (3, 1), (9, 1)], 2, [(0, 0), (1, 2)])


def test_end_offset_equal_to_the_fetch_offset_does_not_diverge():
    """lastFetchedEpoch 1 ends at 3 on the leader (epoch 3 starts there): a fetch at 3 reads on (FE6: endOffset <
    fetchOffset diverges, equal does not)."""
    s = setup(follower_log([(1, 0), (2, 0), (3, 1)], 2, [(0, 0), (1, 2)]))
    r = inflight(fetch(s))
    assert (r.error, r.diverging, r.entries) == (E.NONE, (), ((4, 3),))


def test_end_offset_one_below_the_fetch_offset_diverges_with_that_epoch_and_offset():
    s = setup(Z_IN_EPOCH_1)
    s2 = fetch(s)
    r = inflight(s2)
    assert (r.error, r.fetch_offset, r.entries, r.diverging) == (E.NONE, 4, (), (1, 3))
    assert (r.high_watermark, r.log_start_offset) == (3, 0)          # FE4: the leader's, before the read


def test_a_smaller_epoch_diverges_even_at_its_end_offset():
    """The follower's last epoch 2 is unknown to the leader: endOffsetFor(2) = (1, 3), epoch 1 < 2, and the fetch
    offset 3 is not beyond 3: it diverges on the epoch alone."""
    s = setup(follower_log([(1, 0), (2, 0), (7, 2)], 0, [(0, 0), (2, 2)]))
    assert inflight(fetch(s)).diverging == (1, 3)


def test_a_last_fetched_epoch_above_the_leaders_latest_is_out_of_range():
    s = setup(follower_log([(1, 0), (2, 0), (3, 1), (4, 3), (5, 4)], 0, [(0, 0), (1, 2), (3, 3), (4, 4)]))
    r = inflight(fetch(s))
    assert (r.error, r.diverging) == (E.OFFSET_OUT_OF_RANGE, ())


def test_the_diverging_check_comes_before_the_offset_range_check():
    """Fetch offset 6 is past the leader's LEO 4, yet the answer is the diverging epoch, not OFFSET_OUT_OF_RANGE."""
    s = setup(follower_log([(1, 0), (2, 0), (3, 1), (9, 1), (9, 1), (9, 1)], 0, [(0, 0), (1, 2)]))
    r = inflight(fetch(s))
    assert (r.error, r.diverging) == (E.NONE, (1, 3))


def test_kafka_13141_a_diverging_fetch_leaves_the_followers_state_at_the_leader():
    s = setup(Z_IN_EPOCH_1)
    before = s.brokers[0].partitions[P].remote(1)
    assert s.brokers[0].partitions[P].remote(1) == fetch(s).brokers[0].partitions[P].remote(1) == before
    off = CFG.replace(kafka_13141=False)
    s = setup(Z_IN_EPOCH_1, off)
    r = fetch(s, off).brokers[0].partitions[P].remote(1)
    assert (r.log_end_offset, r.last_fetch_time_ms) == (4, s.now)     # recorded though the fetch diverged


# =========================================================================== the follower (truncateOnFetchResponse)
def test_truncates_to_the_diverging_end_offset_then_reads_on():
    """Diverging (1, 3); the follower's own end of epoch 1 is 4 (its LEO): truncate to min(4, 3) = 3, keep its HW,
    and the next fetch (lastFetchedEpoch 1 at offset 3) gets d."""
    s = drive(CFG, fetch(setup(Z_IN_EPOCH_1)), A.FetchResponse(1, P))
    log, f = s.brokers[1].logs[P], s.brokers[1].fetchers[P]
    assert (log.entries, log.high_watermark, log.epoch_cache) == (((1, 0), (2, 0), (3, 1)), 2, ((0, 0), (1, 2)))
    assert (f.fetch_offset, f.state, f.inflight) == (3, FETCHING, None)
    s = drive(CFG, s, A.FetchRequest(1, P), A.FetchResponse(1, P))
    log = s.brokers[1].logs[P]
    assert (log.entries, log.high_watermark) == (LEADER.entries, 3)


def test_an_epoch_the_follower_lacks_truncates_to_its_own_earlier_epoch_and_fetches_again_FO9():
    """Diverging (1, 3) to a follower with epochs 0 and 2: its largest epoch <= 1 is 0, ending at 2; it truncates to
    2 and, still Fetching (not Truncating, as 2.8.0 does for every truncation on fetch), asks again with epoch 0."""
    s = setup(follower_log([(1, 0), (2, 0), (7, 2)], 0, [(0, 0), (2, 2)]))
    s = drive(CFG, s, A.FetchRequest(1, P), A.FetchResponse(1, P))
    log, f = s.brokers[1].logs[P], s.brokers[1].fetchers[P]
    assert (log.entries, log.epoch_cache, f.fetch_offset, f.state) == (((1, 0), (2, 0)), ((0, 0),), 2, FETCHING)
    s = drive(CFG, s, A.FetchRequest(1, P))
    assert inflight(s).diverging == () and inflight(s).entries == ((3, 1), (4, 3))


def test_kafka_14704_the_follower_truncates_before_its_hw_moves():
    """With the fix one response step truncates and leaves the HW (2) alone; the leader's HW 3 is not applied."""
    s = drive(CFG, fetch(setup(Z_IN_EPOCH_1)), A.FetchResponse(1, P))
    assert s.brokers[1].logs[P].high_watermark == 2
    assert BY_NAME["follower_hw_committed"].check(CFG, s) is None


def test_without_kafka_14704_the_hw_moves_first_and_the_next_step_truncates():
    """The follower's HW becomes min(leader HW 3, LEO 4) = 3 with its log untouched, and stays there until the
    response's second step truncates; at 3 it covers only a b c, the leader's own records (the boundary)."""
    off = CFG.replace(kafka_14704=False)
    s = drive(off, fetch(setup(Z_IN_EPOCH_1, off), off), A.FetchResponse(1, P))
    log, r = s.brokers[1].logs[P], inflight(s)
    assert (len(log.entries), log.high_watermark) == (4, 3)
    assert r.hw_applied and r.diverging == (1, 3)
    assert step(off, s, A.FetchRequest(1, P)) is None                 # the truncation is still to come
    assert BY_NAME["follower_hw_committed"].check(off, s) is None
    s = drive(off, s, A.FetchResponse(1, P))
    log, f = s.brokers[1].logs[P], s.brokers[1].fetchers[P]
    assert (len(log.entries), log.high_watermark, f.fetch_offset, f.inflight) == (3, 3, 3, None)


def test_without_kafka_14704_a_hw_over_a_divergent_record_breaks_follower_hw_committed():
    """Leader HW 4: the follower's HW becomes 4, over its record 9 at offset 3 where the leader holds d; the
    truncation step lowers it to 3.  With the fix the HW stays at 2."""
    leader = LEADER._clone(None)
    leader.high_watermark = 4
    off = CFG.replace(kafka_14704=False)
    s = drive(off, fetch(setup(Z_IN_EPOCH_1, off, leader), off), A.FetchResponse(1, P))
    assert BY_NAME["follower_hw_committed"].check(off, s) == {
        "partition": P, "offset": 3, "follower": 1, "high_watermark": 4, "leader": 0, "leader_epoch": EPOCH,
        "follower_entry": [9, 1], "leader_entry": [4, 3]}
    s = drive(off, s, A.FetchResponse(1, P))
    assert s.brokers[1].logs[P].high_watermark == 3
    assert BY_NAME["follower_hw_committed"].check(off, s) is None
    s = drive(CFG, fetch(setup(Z_IN_EPOCH_1, CFG, leader)), A.FetchResponse(1, P))
    assert s.brokers[1].logs[P].high_watermark == 2


# =========================================================================== the fetcher's initial state
def _become_follower(cfg, follower):
    s = setup(follower, cfg)
    br = s.broker_mut(1)
    br.fetchers = replace_at(br.fetchers, P, None)
    make_followers(cfg, s, br, [LeaderAndIsrPartitionState(P, 1, 0, EPOCH + 1, (0, 1, 2), 1, (0, 1, 2))])
    return s.brokers[1].fetchers[P]


def test_a_new_follower_with_epochs_fetches_from_its_leo_at_once():
    """ReplicaManager.initialFetchOffset (2.8.0): the LEO when the log has epochs, Fetching (no OffsetsForLeaderEpoch
    round); a log without epochs truncates to its HW first (Truncating at the HW); without kafka_10554, the HW and
    Truncating as in 2.4."""
    f = _become_follower(CFG, Z_IN_EPOCH_1)
    assert (f.fetch_offset, f.state, f.leader_epoch) == (4, FETCHING, EPOCH + 1)
    f = _become_follower(CFG, follower_log([(1, 0), (2, 0)], 1, []))
    assert (f.fetch_offset, f.state) == (1, TRUNCATING)
    old = preset("alter-isr").config
    f = _become_follower(old, Z_IN_EPOCH_1)
    assert (f.fetch_offset, f.state) == (2, TRUNCATING)


def test_without_kafka_10554_the_fetch_carries_no_last_fetched_epoch():
    """alter-isr (2.7's followers): the same divergent follower at the leader's LEO gets an empty answer and no
    divergingEpoch; its truncation is OffsetsForLeaderEpoch's, when it becomes a follower."""
    old = preset("alter-isr").config
    r = inflight(fetch(setup(Z_IN_EPOCH_1, old), old))
    assert (r.error, r.entries, r.diverging) == (E.NONE, (), ())
