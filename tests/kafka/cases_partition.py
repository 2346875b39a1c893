"""PartitionTest (Kafka 2.4.0): the leader's Partition rules, through the model's protocol.

Kafka's unit test builds a Partition with mocks and calls makeLeader / updateFollowerFetchState /
maybeShrinkIsr directly, often on a log seeded in an earlier epoch.  The model starts from an empty
cluster, so each trace first reaches the test's situation by ordinary protocol steps (records are
produced, leaders change by the controller's elections); the adaptations are listed in each trace.
"""

from __future__ import annotations

from kafkacase import Case, case, missing, out_of_scope

P = "PartitionTest."
T0 = 1_000_000  # the model's clock at the start (ModelConfig.start_time_ms)


def _remote_fresh(c: Case, leader: int, idx: int, caught_up_at: int, why: str) -> None:
    base = f"brokers.{leader}.partitions.0.remote_replicas.{idx}"
    c.check(f"{base}.last_caught_up_time_ms", caught_up_at, why + ": lastCaughtUpTimeMs is the makeLeader time")
    c.check(f"{base}.log_end_offset", -1, why + ": the follower's LEO is unknown (-1)")
    c.check(f"{base}.log_start_offset", -1, why + ": its log start offset is unknown (-1)")


def _remote(c: Case, leader: int, idx: int, leo: int, start: int, why: str, caught_up_at=None) -> None:
    base = f"brokers.{leader}.partitions.0.remote_replicas.{idx}"
    if caught_up_at is not None:
        c.check(f"{base}.last_caught_up_time_ms", caught_up_at, why)
    c.check(f"{base}.log_end_offset", leo, why)
    c.check(f"{base}.log_start_offset", start, why)


@case(P + "testMakeLeaderUpdatesEpochCache")
def make_leader_updates_epoch_cache():
    c = Case(P + "testMakeLeaderUpdatesEpochCache",
             "A broker whose log holds 4 records written in two earlier epochs becomes leader: makeLeader assigns "
             "the new epoch in the epoch cache at the log end offset, so lastOffsetForLeaderEpoch(current epoch) "
             "answers (current epoch, 4) before anything is appended (KAFKA-7415).",
             n_brokers=3, replication_factor=2)
    c.adapt("Kafka appends 2 records in epoch 0 and 2 in epoch 5, then makes the partition leader in epoch 8; "
            "here broker 0 writes 2 records in epoch 0, broker 1 writes 2 in epoch 1, and broker 0 becomes "
            "leader again in epoch 2 when broker 1 stops.")
    c.adapt("lastOffsetForLeaderEpoch(current epoch) is observed as the epoch cache's last entry "
            "(the current epoch at the log end offset), which is what it answers.")
    c.create_topic(controller=2).catch_up()
    c.produce(0, acks=1, n=2).catch_up()
    c.crash(0).broker_change(2).deliver_all()
    c.produce(1, acks=1, n=2)
    c.restart(0).broker_change(2).deliver_all().catch_up()
    c.crash(1).broker_change(2).deliver_all()
    c.check("brokers.0.partitions.0.leader", 0, "broker 0 leads")
    c.check("brokers.0.logs.0.entries", [[1, 0], [2, 0], [3, 1], [4, 1]], "the leader's log end offset is 4")
    c.check("brokers.0.partitions.0.leader_epoch", 2, "the current leader epoch")
    c.check("brokers.0.logs.0.epoch_cache.-1", [2, 4],
            "the current epoch starts at the log end offset 4: endOffsetFor(current epoch) = (current epoch, 4)")
    return c


missing(P + "testMakeLeaderDoesNotUpdateEpochCacheForOldFormats", "message format < 0.11",
        "A log in message format 0.10.2 has no epochs; lastOffsetForLeaderEpoch answers UNDEFINED.")
out_of_scope(P + "testMaybeReplaceCurrentWithFutureReplica",
             "future replicas of intra-broker log-directory moves (KIP-113), not inter-broker replication")
out_of_scope(P + "testMaybeReplaceCurrentWithFutureReplicaDifferentBaseOffsets",
             "future replicas of intra-broker log-directory moves (KIP-113), not inter-broker replication")
missing(P + "testFetchOffsetSnapshotEpochValidationForLeader", "DelayedFetch",
        "fetchOffsetSnapshot is the offsets read of a DelayedFetch.")
missing(P + "testFetchOffsetSnapshotEpochValidationForFollower", "follower fetching",
        "fetchOnlyFromLeader = false (a read served by a follower) and DelayedFetch's offsets read.")


@case(P + "testOffsetForLeaderEpochValidationForLeader")
def ofle_validation_leader():
    c = Case(P + "testOffsetForLeaderEpochValidationForLeader",
             "OffsetsForLeaderEpoch on the leader validates the requester's current leader epoch (KIP-320): "
             "equal gives NONE, one below gives FENCED_LEADER_EPOCH, one above UNKNOWN_LEADER_EPOCH.",
             n_brokers=5, replication_factor=4)
    c.adapt("The requests are the followers' own truncation rounds (they carry the follower's current epoch and "
            "ask for epoch 0, as the test does); the follower's epoch runs ahead of or behind the leader's "
            "while a LeaderAndIsr has reached one and not the other.  Their error is observed in the "
            "fetcher's state (NONE: fetching; UNKNOWN_LEADER_EPOCH: still truncating, retried; "
            "FENCED_LEADER_EPOCH: the partition is marked failed) and in the error codes seen.")
    c.unchecked("the request without a current leader epoch (Optional.empty, NONE): a 2.4 follower always sends it")
    c.create_topic(controller=4).catch_up()
    c.produce(0, acks=1).catch_up()
    c.crash(3).broker_change(4)                       # epoch 1 for brokers 0, 1, 2; not delivered yet
    c.deliver_all(to=[1])
    c.check("brokers.1.fetchers.0.leader_epoch", 1, "follower 1 is in epoch 1, the leader still in epoch 0")
    c.ofle(1)
    c.check_new_error("UNKNOWN_LEADER_EPOCH", "current epoch = leader epoch + 1: UNKNOWN_LEADER_EPOCH")
    c.check("brokers.1.fetchers.0.state", "truncating", "UNKNOWN_LEADER_EPOCH: the follower retries later")
    c.deliver_all(to=[0])
    c.ofle(1)
    c.check("brokers.1.fetchers.0.state", "fetching", "current epoch = leader epoch: NONE, truncation done")
    c.deliver_all(to=[2])
    c.check("brokers.2.fetchers.0.state", "truncating", "follower 2 is in epoch 1 and has not asked yet")
    c.crash(1).broker_change(4).deliver_all(to=[0])   # epoch 2 at the leader, follower 2 still in epoch 1
    c.check("brokers.0.partitions.0.leader_epoch", 2, "the leader is in epoch 2")
    c.ofle(2)
    c.check_new_error("FENCED_LEADER_EPOCH", "current epoch = leader epoch - 1: FENCED_LEADER_EPOCH")
    c.check("brokers.2.fetchers.0.state", "failed", "FENCED_LEADER_EPOCH: the partition is marked failed")
    return c


missing(P + "testOffsetForLeaderEpochValidationForFollower", "follower fetching",
        "Requests that reach a follower at the requester's own epoch (NOT_LEADER_FOR_PARTITION) and "
        "fetchOnlyFromLeader = false.")


@case(P + "testReadRecordEpochValidationForLeader")
def read_records_validation_leader():
    c = Case(P + "testReadRecordEpochValidationForLeader",
             "A read from the leader validates the fetcher's current leader epoch (KIP-320): none (a consumer) "
             "or equal gives NONE, one below FENCED_LEADER_EPOCH, one above UNKNOWN_LEADER_EPOCH.",
             n_brokers=5, replication_factor=4)
    c.adapt("The reads are followers' fetches (carrying their current epoch, observed in the response each "
            "receives) and a consumer fetch without an epoch (observed by the records it returns).")
    c.create_topic(controller=4).catch_up()
    c.crash(3).broker_change(4)                       # epoch 1 for brokers 0, 1, 2; not delivered yet
    c.deliver_all(to=[1]).ofle(1)                     # empty log: no request needed, follower 1 fetches in epoch 1
    c.fetch_request(1)
    c.check("brokers.1.fetchers.0.inflight.error", "UNKNOWN_LEADER_EPOCH",
            "current epoch 1 = leader epoch 0 + 1: UNKNOWN_LEADER_EPOCH")
    c.deliver_all(to=[0])
    c.fetch_request(2)
    c.check("brokers.2.fetchers.0.inflight.error", "FENCED_LEADER_EPOCH",
            "current epoch 0 = leader epoch 1 - 1: FENCED_LEADER_EPOCH")
    c.fetch_response(1).fetch_request(1)
    c.check("brokers.1.fetchers.0.inflight.error", "NONE", "current epoch 1 = leader epoch 1: NONE")
    c.fetch_response(1).fetch_response(2).deliver_all(to=[2]).catch_up()
    c.produce(0, acks=1).catch_up()
    c.consume(0)
    c.check("ghost.consumed", [[0, 0, 1, 1]], "a read without a current epoch: NONE, the record is returned")
    return c


missing(P + "testReadRecordEpochValidationForFollower", "follower fetching",
        "Reads served by a follower (fetchOnlyFromLeader = false) and reads that reach a follower at the "
        "requester's own epoch.")
missing(P + "testFetchOffsetForTimestampEpochValidationForLeader", "ListOffsets", "fetchOffsetForTimestamp.")
missing(P + "testFetchOffsetForTimestampEpochValidationForFollower", "ListOffsets", "fetchOffsetForTimestamp.")
missing(P + "testFetchLatestOffsetIncludesLeaderEpoch", "ListOffsets", "ListOffsets LATEST returns the leader epoch.")
missing(P + "testMonotonicOffsetsAfterLeaderChange", "ListOffsets",
        "KIP-207: OFFSET_NOT_AVAILABLE while the new leader's HW is below its epoch start offset; by timestamp.")
missing(P + "testAppendRecordsAsFollowerBelowLogStartOffset", "log start offset",
        "truncateFullyAndStartAt(5), then appends below, at and above the log start offset.")
missing(P + "testListOffsetIsolationLevels", "ListOffsets", "LATEST and EARLIEST by isolation level (and LSO).")
out_of_scope(P + "testGetReplica", "an accessor of a Partition without a log (ReplicaNotAvailableException)")
out_of_scope(P + "testAppendRecordsToFollowerWithNoReplicaThrowsException",
             "an internal guard: a follower append without a local log, which no fetch can reach")


@case(P + "testMakeFollowerWithNoLeaderIdChange")
def make_follower_no_leader_change():
    c = Case(P + "testMakeFollowerWithNoLeaderIdChange",
             "A follower of leader 1 in epoch 1 gets LeaderAndIsr with the same leader and epoch 4: the "
             "become-follower steps run (the fetcher restarts with truncation); the same leader and epoch again: "
             "they are skipped.", n_brokers=5, replication_factor=4)
    c.adapt("Broker 2 follows leader 0 in epoch 0 and misses three epochs while its ZooKeeper session is gone "
            "(the controller shrinks the ISR three times), then gets epoch 3 with the same leader: 0 -> 3 as "
            "Kafka's 1 -> 4.  The same leader and epoch come again when a new controller resends the "
            "partition's state after a failover.")
    c.adapt("In ReplicaManager an equal epoch is refused before makeFollower is called (STALE_CONTROLLER_EPOCH); "
            "the observable outcome, become-follower steps skipped, is the one Kafka's test asserts.")
    c.create_topic(controller=4).catch_up()
    c.expire(2).broker_change(4).deliver_all()        # epoch 1, ISR without 2
    c.crash(3).broker_change(4).deliver_all()         # epoch 2
    c.crash(1).broker_change(4).deliver_all()         # epoch 3
    c.check("brokers.2.fetchers.0.leader_epoch", 0, "broker 2 still follows leader 0 in epoch 0")
    c.check("brokers.2.fetchers.0.state", "fetching", "and is fetching")
    c.reconnect(2).broker_change(4).deliver_all(to=[2])
    c.check("brokers.2.partitions.0.leader_epoch", 3, "same leader 0, epoch 3: the follower applies it")
    c.check("brokers.2.fetchers.0.leader_epoch", 3, "makeFollower returned true: the fetcher restarts in epoch 3")
    c.check("brokers.2.fetchers.0.state", "truncating", "the become-follower steps ran (truncation first)")
    c.catch_up([2])
    c.check("brokers.2.fetchers.0.state", "fetching", "broker 2 fetches in epoch 3")
    c.expire(4).elect(0).deliver_all(c=0)
    c.check("controllers.0.epoch", 2, "a new controller resent the partition's state (leader 0, epoch 3)")
    c.check("brokers.2.fetchers.0.leader_epoch", 3, "same leader, same epoch: nothing changes")
    c.check("brokers.2.fetchers.0.state", "fetching", "the become-follower steps were skipped: no new truncation")
    return c


@case(P + "testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch")
def follower_joins_isr_at_epoch_start():
    c = Case(P + "testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch",
             "KAFKA-7128: the leader's epoch starts at offset 5 while its HW is 1.  A follower outside the ISR "
             "that fetches at offset 1 (>= HW) is not added; at the epoch's start offset 5 it is.",
             n_brokers=3, replication_factor=3)
    c.adapt("Kafka's leader becomes follower and leader again (epochs 8, 9, 10) with ISR {leader, follower2}; "
            "here the leader stays and the controller bumps its epoch when it removes follower 1 (whose "
            "ZooKeeper session expired) from the ISR: the new epoch starts at the leader's LEO 5 all the same.")
    c.adapt("Follower 1 already holds record 0, so its fetches are at 1 and then at 5 (Kafka: 0, 1, then 5).")
    c.create_topic(controller=2).catch_up()
    c.produce(0, acks=1)
    c.fetch(1).fetch(2).fetch_request(1).fetch_request(2).fetch_response(1).fetch_response(2)
    c.check("brokers.0.logs.0.high_watermark", 1, "the follower in the ISR moved the leader's HW to 1")
    c.produce(0, acks=1, n=4)
    c.check("brokers.0.logs.0.high_watermark", 1, "the HW does not move with the appends")
    c.expire(1).broker_change(2).deliver_all()
    c.check("brokers.0.partitions.0.isr", [0, 2], "ISR {leader, follower2}")
    c.check("brokers.0.partitions.0.leader_epoch_start_offset", 5, "the current epoch starts at the LEO, 5")
    c.check("brokers.0.logs.0.high_watermark", 1, "the HW is still 1")
    c.reconnect(1).broker_change(2).deliver_all(to=[1]).ofle(1)
    c.check("brokers.1.fetchers.0.fetch_offset", 1, "follower 1 fetches from 1")
    c.fetch_request(1)
    c.check("brokers.0.partitions.0.remote_replicas.0.log_end_offset", 1, "follower 1 is at offset 1")
    c.check("brokers.0.partitions.0.isr", [0, 2], "LEO 1 >= HW 1 but below the epoch start 5: not added")
    c.produce(0, acks=1, n=2)
    c.fetch_response(1).fetch_request(1)
    c.check("brokers.0.partitions.0.remote_replicas.0.log_end_offset", 5, "follower 1 is at the epoch start 5")
    c.check("brokers.0.partitions.0.isr", [0, 1, 2], "at the epoch start offset follower 1 joins the ISR")
    c.check("zk.partition_states.0.isr", [0, 1, 2], "the expansion is written to ZooKeeper")
    return c


out_of_scope(P + "testDelayedFetchAfterAppendRecords", "lock ordering between threads (a deadlock test)")
out_of_scope(P + "testAtMinIsr", "metrics only (the AtMinIsr gauge)")


@case(P + "testUpdateFollowerFetchState")
def update_follower_fetch_state():
    c = Case(P + "testUpdateFollowerFetchState",
             "updateFollowerFetchState: a fetch below the leader's log end does not move lastCaughtUpTimeMs "
             "(it stays at the makeLeader time); a fetch at the log end sets it to the fetch time; the "
             "follower's LEO and log start offset are those of the fetch.", n_brokers=2, replication_factor=2)
    c.adapt("Kafka seeds 6 records before makeLeader and the follower's first fetch is at 3; here the records "
            "are produced after makeLeader and the follower fetches at 0 first (same instant as makeLeader, "
            "before the leader has 6 records), then at 3 and at 6.")
    c.create_topic(controller=1)
    _remote_fresh(c, 0, 0, T0, "after makeLeader")
    c.produce(0, acks=1, n=3).ofle(1).fetch(1)
    c.produce(0, acks=1, n=3)
    c.sleep(500)
    c.fetch_request(1)
    _remote(c, 0, 0, 3, 0, "a fetch at 3 below the log end 6: lastCaughtUpTimeMs unchanged, LEO 3, log start 0",
            caught_up_at=T0)
    c.sleep(500)
    c.fetch_response(1).fetch_request(1)
    _remote(c, 0, 0, 6, 0, "a fetch at the log end 6: lastCaughtUpTimeMs = now, LEO 6, log start 0",
            caught_up_at=T0 + 1000)
    return c


@case(P + "testIsrExpansion")
def isr_expansion():
    c = Case(P + "testIsrExpansion",
             "The leader (ISR = itself, log end 10) sees its follower fetch at 3: no expansion; at 10 the "
             "follower joins the ISR.", n_brokers=3, replication_factor=2,
             assignment_start_index=1, assignment_replica_shift=1)
    c.adapt("Replicas [1, 0]: broker 0 holds 3 records written by broker 1 and becomes leader when broker 1 "
            "stops (ISR [0]); it appends 7 more (Kafka seeds 10 records); broker 1 comes back as follower "
            "holding its 3 records.")
    c.create_topic(controller=2).catch_up()
    c.produce(1, acks=1, n=3).catch_up()
    c.crash(1).broker_change(2).deliver_all()
    c.check("brokers.0.partitions.0.isr", [0], "ISR = {leader}")
    _remote(c, 0, 0, -1, -1, "after makeLeader the follower's LEO and log start offset are unknown")
    c.produce(0, acks=1, n=7)
    c.restart(1).broker_change(2).deliver_all().ofle(1).fetch_request(1)
    c.check("brokers.0.partitions.0.isr", [0], "a fetch at 3 (< HW 10): the ISR is unchanged")
    _remote(c, 0, 0, 3, 0, "the follower's LEO is 3 and its log start offset 0")
    c.fetch_response(1).fetch_request(1)
    c.check("brokers.0.partitions.0.isr", [0, 1], "a fetch at 10: the follower joins the ISR")
    _remote(c, 0, 0, 10, 0, "the follower's LEO is 10 and its log start offset 0")
    return c


@case(P + "testIsrNotExpandedIfUpdateFails")
def isr_not_expanded_if_update_fails():
    c = Case(P + "testIsrNotExpandedIfUpdateFails",
             "The follower fetches at the log end (10) and qualifies for the ISR, but the conditional "
             "ZooKeeper write of the expansion fails: the follower's state is updated, the ISR is not.",
             n_brokers=3, replication_factor=3)
    c.adapt("Kafka's mock makes expandIsr return None; here the write fails for the reason it fails in a "
            "cluster: the controller has just rewritten the partition's znode (broker 2 stopped) and the "
            "leader's cached zkVersion is stale.  The leader's ISR is then {0, 2} rather than Kafka's {0}.")
    c.create_topic(controller=1)
    c.ofle(2).fetch(2)
    c.sleep(15000)
    c.check("brokers.0.partitions.0.isr", [0, 2], "follower 1 never fetched: it is out of the ISR")
    c.produce(0, acks=1, n=10).catch_up([2])
    c.ofle(1).fetch(1)
    c.crash(2).broker_change(1)
    c.check("zk.partition_states.0.isr", [0], "the controller rewrote the partition's znode")
    c.fetch_request(1)
    c.check("brokers.0.partitions.0.isr", [0, 2], "the expansion's write failed: the ISR does not gain follower 1")
    c.check("zk.partition_states.0.isr", [0], "nothing of it in ZooKeeper")
    _remote(c, 0, 0, 10, 0, "the follower's fetch state is updated: LEO 10, log start 0")
    return c


@case(P + "testMaybeShrinkIsr")
def maybe_shrink_isr():
    c = Case(P + "testMaybeShrinkIsr",
             "Right after makeLeader the follower counts as caught up and is not removed; 10001 ms later "
             "without a fetch it is, and the HW moves to the log end 10.",
             n_brokers=2, replication_factor=2, isr_expiration_phase_ms=[1, 1])
    c.adapt("Kafka seeds 10 records before makeLeader; here they are produced right after it (the HW stays 0 "
            "either way).  The isr-expiration task runs 1 ms after makeLeader, then every 5000 ms, so it runs "
            "at 10001 ms as Kafka's test calls maybeShrinkIsr.")
    c.create_topic(controller=1).produce(0, acks=1, n=10)
    c.check("brokers.0.partitions.0.isr", [0, 1], "ISR {leader, follower}")
    c.check("brokers.0.logs.0.high_watermark", 0, "HW 0")
    _remote_fresh(c, 0, 0, T0, "after makeLeader")
    c.sleep(1)
    c.check("brokers.0.partitions.0.isr", [0, 1], "on initialization the follower is caught up: not removed")
    c.sleep(10000)
    c.check("brokers.0.partitions.0.isr", [0], "10001 ms without a fetch: the ISR shrinks")
    c.check("brokers.0.logs.0.high_watermark", 10, "and the HW moves to 10")
    return c


@case(P + "testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp")
def no_shrink_previous_fetch_caught_up():
    c = Case(P + "testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp",
             "A follower that fetched at 5 (log end 10) at 5000 ms and at 10 (log end 15) at 10001 ms was caught "
             "up as of its first fetch: lastCaughtUpTimeMs = 5000 ms, so it is not removed at 10001 ms.",
             n_brokers=2, replication_factor=2, isr_expiration_phase_ms=[1, 1])
    c.adapt("The follower's first fetch is at 0 right after makeLeader (it needs 5 records to fetch at 5).")
    c.create_topic(controller=1)
    c.check("brokers.0.partitions.0.isr", [0, 1], "ISR {leader, follower}")
    c.check("brokers.0.logs.0.high_watermark", 0, "HW 0")
    _remote_fresh(c, 0, 0, T0, "after makeLeader")
    c.produce(0, acks=1, n=5).ofle(1).fetch(1).produce(0, acks=1, n=5)
    c.sleep(5000)
    c.fetch_request(1)
    _remote(c, 0, 0, 5, 0, "fetch at 5 (log end 10): lastCaughtUpTimeMs is still the makeLeader time",
            caught_up_at=T0)
    c.check("brokers.0.logs.0.high_watermark", 5, "HW 5")
    c.sleep(5001, run_at_end=False)
    c.produce(0, acks=1, n=5)
    c.fetch_response(1).fetch_request(1)
    _remote(c, 0, 0, 10, 0, "fetch at 10 (the log end of the previous fetch): caught up as of that fetch",
            caught_up_at=T0 + 5000)
    c.check("brokers.0.logs.0.high_watermark", 10, "HW 10")
    c.run_due_tasks()
    c.check("brokers.0.partitions.0.isr", [0, 1], "not removed at 10001 ms")
    return c


@case(P + "testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd")
def no_shrink_caught_up_to_log_end():
    c = Case(P + "testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd",
             "A follower at the leader's log end is not removed from the ISR 10001 ms later, though it has not "
             "fetched since.", n_brokers=2, replication_factor=2, isr_expiration_phase_ms=[1, 1])
    c.adapt("The follower's fetch at 10 is preceded by one at 0 (it must get the 10 records first).")
    c.create_topic(controller=1)
    c.check("brokers.0.partitions.0.isr", [0, 1], "ISR {leader, follower}")
    c.check("brokers.0.logs.0.high_watermark", 0, "HW 0")
    _remote_fresh(c, 0, 0, T0, "after makeLeader")
    c.produce(0, acks=1, n=10).ofle(1).fetch(1).fetch_request(1)
    _remote(c, 0, 0, 10, 0, "the follower caught up to the log end at once", caught_up_at=T0)
    c.check("brokers.0.logs.0.high_watermark", 10, "HW 10")
    c.sleep(10001)
    c.check("brokers.0.partitions.0.isr", [0, 1], "caught up to the log end: not removed after 10001 ms")
    return c


@case(P + "testIsrNotShrunkIfUpdateFails")
def isr_not_shrunk_if_update_fails():
    c = Case(P + "testIsrNotShrunkIfUpdateFails",
             "The follower has not fetched for 10001 ms, but the conditional ZooKeeper write of the shrink fails: "
             "the ISR and the HW (0) are unchanged.", n_brokers=4, replication_factor=3,
             isr_expiration_phase_ms=[1, 1, 1, 1])
    c.adapt("Kafka's mock makes shrinkIsr return None; here the controller rewrote the partition's znode "
            "(broker 2 stopped) just before, so the leader's cached zkVersion is stale.  Three replicas, so "
            "that the ISR is {0, 1, 2} rather than {0, 1}.")
    c.create_topic(controller=3)
    c.check("brokers.0.partitions.0.isr", [0, 1, 2], "all replicas in the ISR")
    c.check("brokers.0.logs.0.high_watermark", 0, "HW 0")
    _remote_fresh(c, 0, 0, T0, "after makeLeader")
    c.sleep(10001, run_at_end=False)
    c.crash(2).broker_change(3)
    c.run_due_tasks()
    c.check("brokers.0.partitions.0.isr", [0, 1, 2], "the shrink's write failed: the ISR is unchanged")
    c.check("brokers.0.logs.0.high_watermark", 0, "and the HW is still 0")
    return c


@case(P + "testUseCheckpointToInitializeHighWatermark")
def checkpoint_initializes_hw():
    c = Case(P + "testUseCheckpointToInitializeHighWatermark",
             "A log with 6 records whose checkpointed HW is 4: makeLeader takes the HW from the checkpoint.",
             n_brokers=2, replication_factor=2)
    c.adapt("The checkpoint is written by the highwatermark-checkpoint task while the HW is 4; 2 more records "
            "follow, both brokers crash and restart, and a new controller resends the partition's state.")
    c.create_topic(controller=0).catch_up()
    c.produce(0, acks=1, n=4).catch_up()
    c.sleep(5000)
    c.check("brokers.0.hw_checkpoint", [4], "the checkpointed HW is 4")
    c.produce(0, acks=1, n=2)
    c.crash(0, clean=False).crash(1, clean=False).expire(0).expire(1).restart(0).restart(1)
    c.elect(0).deliver_all(to=[0])
    c.check("brokers.0.partitions.0.leader", 0, "broker 0 became leader (makeLeader)")
    c.check("brokers.0.logs.0.entries", [[1, 0], [2, 0], [3, 0], [4, 0], [5, 0], [6, 0]], "6 records")
    c.check("brokers.0.logs.0.high_watermark", 4, "the HW comes from the checkpoint: 4")
    return c


out_of_scope(P + "testAddAndRemoveMetrics", "metrics only")
out_of_scope(P + "testLogConfigNotDirty", "log configuration loading while the log is created")
out_of_scope(P + "testLogConfigDirtyAsTopicUpdated", "log configuration loading while the log is created")
out_of_scope(P + "testLogConfigDirtyAsBrokerUpdated", "log configuration loading while the log is created")
