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


@case(P + "testMakeLeaderDoesNotUpdateEpochCacheForOldFormats")
def make_leader_does_not_update_epoch_cache_for_old_formats():
    start = {"brokers": [{"broker": 0, "logs": [{"partition": 0, "records": [[0, 0], [1, 0], [2, 5], [3, 5]]}]}],
             "zookeeper": {"controller_epoch": 1,
                           "partitions": [{"partition": 0, "replicas": [0, 1], "leader": 0, "leader_epoch": 8,
                                           "isr": [0]}]}}
    c = Case(P + "testMakeLeaderDoesNotUpdateEpochCacheForOldFormats",
             "A log on message format 0.10.2 holding four records appended as leader in epochs 0 and 5 (LEO 4) becomes "
             "leader in epoch 8: makeLeader assigns no epoch (the log has no leader-epoch cache), so latestEpoch is "
             "None and lastOffsetForLeaderEpoch(8) answers UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET.",
             start=start, n_brokers=3, replication_factor=2, old_message_format_partitions=(0,))
    c.adapt("The log is the start (the topic's log.message.format.version below 0.11: old_message_format_partitions); "
            "the records' epochs are the ghost's names for the batches, which carry none. Broker 0 is leader in "
            "epoch 8 in ZooKeeper; broker 2 becomes the controller and sends its LeaderAndIsr.")
    c.adapt("lastOffsetForLeaderEpoch is asked of the leader's epoch cache (an epoch_cache check: "
            "Log.endOffsetForEpoch), as the partition's own answer; a follower on this format never sends the request.")
    c.elect(2).deliver_all(to=[0])
    c.check("brokers.0.partitions.0.leader_epoch", 8, "broker 0 leads epoch 8")
    c.check("brokers.0.logs.0.entries", [[1, 0], [2, 0], [3, 5], [4, 5]], "its log end offset is 4")
    c.check("brokers.0.logs.0.epoch_cache", [], "makeLeader did not assign epoch 8 (no cache)")
    c.check_cache("latest_epoch", None, "latestEpoch is None")
    c.check_cache(["end_offset_for", 8], [-1, -1], "lastOffsetForLeaderEpoch(8): UNDEFINED_EPOCH, "
                  "UNDEFINED_EPOCH_OFFSET")
    return c
out_of_scope(P + "testMaybeReplaceCurrentWithFutureReplica",
             "future replicas of intra-broker log-directory moves (KIP-113), not inter-broker replication")
out_of_scope(P + "testMaybeReplaceCurrentWithFutureReplicaDifferentBaseOffsets",
             "future replicas of intra-broker log-directory moves (KIP-113), not inter-broker replication")


_SNAPSHOT_ADAPT = ("Kafka calls Partition.fetchOffsetSnapshot directly; the model reads it where Kafka's broker does, in "
                   "a consumer fetch's DelayedFetch.tryComplete (at arrival, tryCompleteElseWatch, and whenever the "
                   "partition's purgatory is checked).  A fetch whose snapshot passes the check waits (fetch.min.bytes "
                   "1 at the HW); one whose epoch is refused at arrival is refused by the read before it (the same "
                   "Partition.localLogWithEpochOrException), and answers at once.  Each answer is read in "
                   "ghost.responses.consumer_fetch; a waiting fetch in brokers.B.delayed_fetches.")


@case(P + "testFetchOffsetSnapshotEpochValidationForLeader")
def fetch_offset_snapshot_leader():
    c = _led_in_epoch_1(P + "testFetchOffsetSnapshotEpochValidationForLeader",
                        "The leader's offsets snapshot (Partition.fetchOffsetSnapshot, fetchOnlyFromLeader = true) "
                        "validates the current leader epoch: the epoch itself or none passes, one below is "
                        "FENCED_LEADER_EPOCH, one above UNKNOWN_LEADER_EPOCH.")
    c.adapt(_SNAPSHOT_ADAPT)
    c.adapt("FENCED_LEADER_EPOCH is the snapshot's own answer: a fetch parked in epoch 1 is checked again after the "
            "leader moved to epoch 2 (follower 1 stopped once more) and a produce checks the purgatory.")
    c.consume_wait(0, current_leader_epoch=1, max_wait_ms=30000)
    c.check("brokers.0.delayed_fetches.0.current_leader_epoch", 1,
            "current epoch = leader epoch: the snapshot passes (NONE) and the fetch waits")
    c.check("ghost.responses.consumer_fetch", [], "no answer yet")
    c.consume_wait(0, current_leader_epoch=2)
    c.check_response("consumer_fetch", 0, "current epoch = leader epoch + 1: UNKNOWN_LEADER_EPOCH",
                     error="UNKNOWN_LEADER_EPOCH")
    c.consume_wait(0, max_wait_ms=10)
    c.check("brokers.0.delayed_fetches.1.current_leader_epoch", -1, "no current epoch: NONE, the fetch waits too")
    c.expire_fetch(0, 1)
    c.check_response("consumer_fetch", 0, "the epoch-less fetch times out with no error and no records",
                     error="NONE", entries=[])
    c.crash(1).broker_change(2).deliver_all()
    c.check("brokers.0.partitions.0.leader_epoch", 2, "broker 0 leads in epoch 2")
    c.check("brokers.0.delayed_fetches.0.current_leader_epoch", 1, "the fetch parked in epoch 1 still waits")
    c.produce(0, acks=1)
    c.check("brokers.0.delayed_fetches", [], "the purgatory is checked: the snapshot refuses epoch 1")
    c.check_response("consumer_fetch", 0, "current epoch = leader epoch - 1: FENCED_LEADER_EPOCH",
                     error="FENCED_LEADER_EPOCH")
    return c


@case(P + "testFetchOffsetSnapshotEpochValidationForFollower")
def fetch_offset_snapshot_follower():
    c = _led_in_epoch_1(P + "testFetchOffsetSnapshotEpochValidationForFollower",
                        "A follower's offsets snapshot: with fetchOnlyFromLeader = false (a consumer with "
                        "ClientMetadata, KIP-392) the epoch itself or none passes, one below is FENCED_LEADER_EPOCH, "
                        "one above UNKNOWN_LEADER_EPOCH; with fetchOnlyFromLeader = true the epoch is checked first, "
                        "then NOT_LEADER_FOR_PARTITION.")
    c.adapt(_SNAPSHOT_ADAPT)
    c.check("brokers.1.partitions.0.leader_epoch", 1, "follower 1 knows leader epoch 1 (5 in Kafka's test)")
    c.check("brokers.1.logs.0.high_watermark", 1, "follower 1's HW is 1: a fetch there waits for a record")
    for epoch, why in ((1, "current epoch = leader epoch"), (-1, "no current epoch")):
        c.consume_wait(1, current_leader_epoch=epoch, client_metadata=True, max_wait_ms=30000)
        c.check("brokers.1.delayed_fetches.-1.current_leader_epoch", epoch,
                f"fetchOnlyFromLeader = false, {why}: NONE, the fetch waits")
    c.check("ghost.responses.consumer_fetch", [], "no answer yet")
    for epoch, error, why in ((0, "FENCED_LEADER_EPOCH", "current epoch = leader epoch - 1"),
                              (2, "UNKNOWN_LEADER_EPOCH", "current epoch = leader epoch + 1")):
        c.consume_wait(1, current_leader_epoch=epoch, client_metadata=True)
        c.check_response("consumer_fetch", 1, f"fetchOnlyFromLeader = false, {why}: {error}", error=error)
    for epoch, error, why in ((1, "NOT_LEADER_FOR_PARTITION", "current epoch = leader epoch"),
                              (-1, "NOT_LEADER_FOR_PARTITION", "no current epoch"),
                              (0, "FENCED_LEADER_EPOCH", "current epoch = leader epoch - 1"),
                              (2, "UNKNOWN_LEADER_EPOCH", "current epoch = leader epoch + 1")):
        c.consume_wait(1, current_leader_epoch=epoch)
        c.check_response("consumer_fetch", 1, f"fetchOnlyFromLeader = true, {why}: {error}", error=error)
    c.check("brokers.1.delayed_fetches.0.current_leader_epoch", 1, "the two waiting fetches still wait")
    return c


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


@case(P + "testReadRecordEpochValidationForFollower")
def read_record_epoch_validation_follower():
    c = _led_in_epoch_1(P + "testReadRecordEpochValidationForFollower",
                        "A read served by a follower (fetchOnlyFromLeader = false: a consumer's fetch with "
                        "ClientMetadata, KIP-392) validates the current leader epoch first (FENCED_LEADER_EPOCH one "
                        "below, UNKNOWN_LEADER_EPOCH one above) and is answered otherwise; a read that must be served "
                        "by the leader gets NOT_LEADER_FOR_PARTITION.")
    c.adapt("Kafka calls Partition.readRecords directly; here consumers' fetches reach follower 1: with ClientMetadata "
            "where fetchOnlyFromLeader is false, without it (an older client) where it is true.  Each answer is read "
            "in ghost.responses.consumer_fetch.")
    for epoch, error, why in ((-1, "NONE", "no current leader epoch"), (1, "NONE", "current epoch = leader epoch"),
                              (0, "FENCED_LEADER_EPOCH", "current epoch = leader epoch - 1"),
                              (2, "UNKNOWN_LEADER_EPOCH", "current epoch = leader epoch + 1")):
        c.consume_with_client_metadata(1, current_leader_epoch=epoch)
        c.check_response("consumer_fetch", 1, f"fetchOnlyFromLeader = false, {why}: {error}", error=error)
    c.consume(1)
    c.check_response("consumer_fetch", 1, "fetchOnlyFromLeader = true, no current leader epoch: "
                     "NOT_LEADER_FOR_PARTITION", error="NOT_LEADER_FOR_PARTITION")
    c.unchecked("fetchOnlyFromLeader = true with a current leader epoch: the model's consumer fetch without "
                  "ClientMetadata carries no current leader epoch")
    return c
def _led_in_epoch_1(name: str, description: str) -> Case:
    """setupPartitionWithMocks: replicas [0, 1], broker 0 leads in epoch 1 (its follower bounced once), one record."""
    c = Case(name, description, n_brokers=3, replication_factor=2)
    c.adapt("Kafka's partition is set up in leader epoch 5 by a direct makeLeader / makeFollower; here the "
            "controller (broker 2) creates it with replicas [0, 1] and leader 0, and reaches epoch 1 by removing "
            "follower 1 from the ISR when it stops (it comes back as a follower), so epoch 5 reads 1 below.")
    c.adapt("Kafka calls Partition.fetchOffsetForTimestamp with no isolation level; a ListOffsets request has "
            "none when it comes from a replica, so the requests carry a replica id: a follower's (>= 0) where "
            "fetchOnlyFromLeader is true, the debugging id (-2) where it is false.  Each answer is read in "
            "ghost.responses.list_offsets, the last ListOffsets response of the broker and partition.")
    c.create_topic(controller=2).catch_up()
    c.crash(1).broker_change(2).deliver_all()
    c.restart(1).broker_change(2).deliver_all().catch_up()
    c.produce(0, acks=1).catch_up()
    c.check("brokers.0.partitions.0.leader_epoch", 1, "the leader epoch (5 in Kafka's test)")
    return c


@case(P + "testFetchOffsetForTimestampEpochValidationForLeader")
def fetch_offset_for_timestamp_leader():
    c = _led_in_epoch_1(P + "testFetchOffsetForTimestampEpochValidationForLeader",
                        "ListOffsets by timestamp on the leader validates the requester's current leader epoch "
                        "(Partition.localLogWithEpochOrException): none or equal answers, one below is "
                        "FENCED_LEADER_EPOCH, one above UNKNOWN_LEADER_EPOCH.")
    for epoch, error, why in ((-1, "NONE", "no current leader epoch: NONE"),
                              (1, "NONE", "current epoch = leader epoch: NONE"),
                              (0, "FENCED_LEADER_EPOCH", "current epoch = leader epoch - 1: FENCED_LEADER_EPOCH"),
                              (2, "UNKNOWN_LEADER_EPOCH", "current epoch = leader epoch + 1: UNKNOWN_LEADER_EPOCH")):
        c.list_offsets(0, timestamp=0, replica_id=1, current_leader_epoch=epoch)
        c.check_response("list_offsets", 0, why, error=error)
    return c


@case(P + "testFetchOffsetForTimestampEpochValidationForFollower")
def fetch_offset_for_timestamp_follower():
    c = _led_in_epoch_1(P + "testFetchOffsetForTimestampEpochValidationForFollower",
                        "ListOffsets by timestamp on a follower: the current leader epoch is validated first "
                        "(FENCED_LEADER_EPOCH one below, UNKNOWN_LEADER_EPOCH one above); then a request that "
                        "may be served by any replica answers, one that must be served by the leader gets "
                        "NOT_LEADER_FOR_PARTITION.")
    c.check("brokers.1.partitions.0.leader_epoch", 1, "follower 1 knows leader epoch 1 (5 in Kafka's test)")
    cases = ((-1, "NONE", "NOT_LEADER_FOR_PARTITION", "no current leader epoch"),
             (1, "NONE", "NOT_LEADER_FOR_PARTITION", "current epoch = leader epoch"),
             (0, "FENCED_LEADER_EPOCH", "FENCED_LEADER_EPOCH", "current epoch = leader epoch - 1"),
             (2, "UNKNOWN_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH", "current epoch = leader epoch + 1"))
    for epoch, error, _, why in cases:
        c.list_offsets(1, timestamp=0, replica_id=-2, current_leader_epoch=epoch)
        c.check_response("list_offsets", 1, f"fetchOnlyFromLeader = false, {why}: {error}", error=error)
    for epoch, _, error, why in cases:
        c.list_offsets(1, timestamp=0, replica_id=0, current_leader_epoch=epoch)
        c.check_response("list_offsets", 1, f"fetchOnlyFromLeader = true, {why}: {error}", error=error)
    return c


@case(P + "testFetchLatestOffsetIncludesLeaderEpoch")
def fetch_latest_offset_includes_leader_epoch():
    c = _led_in_epoch_1(P + "testFetchLatestOffsetIncludesLeaderEpoch",
                        "ListOffsets LATEST on the leader answers with the partition's current leader epoch.")
    c.list_offsets(0, timestamp=-1, replica_id=1)
    c.check_response("list_offsets", 0, "an answer (Some), for the current leader epoch (5 in Kafka's test)",
                     error="NONE", leader_epoch=1)
    return c


@case(P + "testMonotonicOffsetsAfterLeaderChange")
def monotonic_offsets_after_leader_change():
    c = Case(P + "testMonotonicOffsetsAfterLeaderChange",
             "KIP-207: a new leader whose HW is below the start offset of its epoch answers a client's ListOffsets "
             "LATEST, and a by-timestamp lookup past its HW, with OFFSET_NOT_AVAILABLE until the HW catches up; "
             "a replica's request (no isolation level), EARLIEST and a lookup below the HW still answer.",
             n_brokers=4, replication_factor=3)
    c.adapt("Kafka's leader is made follower and leader again (epochs 8, 9, 10) with its log at 5 and its HW at "
            "2; here the controller (broker 3) creates the partition with replicas [0, 1, 2], broker 0 leads "
            "and writes 2 records, both followers replicate them (HW 2), then 3 more that only follower 1 "
            "fetches, and broker 0 stops: follower 1 becomes leader in epoch 1 with its log at 5 and its HW "
            "at 2, the same fault condition (epoch start offset 5 above the HW).")
    c.adapt("Record timestamps are the clock at the leader's append (Kafka's producer sets 10, 11, none, 20, 21): "
            "the lookups use the time of the record at offset 1 (Kafka's 11) and a time after every record "
            "(Kafka's 30 and 100).  follower 1 and follower 2 of Kafka's test are brokers 2 and 1 here, and "
            "Kafka's replica requests without an isolation level carry a follower's replica id.")
    c.create_topic(controller=3).catch_up()
    c.produce(0, acks=1)
    t1 = c.s.now
    c.sleep(1).produce(0, acks=1)
    t2 = c.s.now
    c.fetch(1, rounds=2).fetch(2, rounds=2)
    c.sleep(1).produce(0, acks=1).sleep(1).produce(0, acks=1).sleep(1).produce(0, acks=1)
    after_all = c.s.now + 1
    c.check("brokers.0.logs.0.high_watermark", 2, "the leader has 5 records, the followers have fetched two")
    c.list_offsets(0, timestamp=-1, replica_id=1)
    c.check_response("list_offsets", 0, "LATEST without an isolation level: the LEO, 5", offset=5)
    c.list_offsets(0, timestamp=-1, isolation="read_uncommitted")
    c.check_response("list_offsets", 0, "LATEST, read_uncommitted: the HW, 2", offset=2)
    c.list_offsets(0, timestamp=after_all, isolation="read_uncommitted")
    c.check_response("list_offsets", 0, "a timestamp beyond the HW: None (no error, no offset)",
                     error="NONE", offset=-1)
    c.fetch(1)                                          # follower 1 reads offsets 2-4; the leader's HW stays 2
    c.crash(0).broker_change(3).deliver_all()
    c.check("brokers.1.partitions.0.leader_epoch", 1, "broker 1 leads in a new epoch")
    c.check("brokers.1.partitions.0.leader_epoch_start_offset", 5, "its epoch starts at its log end offset, 5")
    c.check("brokers.1.logs.0.high_watermark", 2, "its HW is 2, below the epoch's start")
    epoch = 1
    c.list_offsets(1, timestamp=-1, isolation="read_uncommitted", current_leader_epoch=epoch)
    c.check_response("list_offsets", 1, "a client's LATEST while the HW lags: OFFSET_NOT_AVAILABLE",
                     error="OFFSET_NOT_AVAILABLE")
    c.list_offsets(1, timestamp=-1, replica_id=2, current_leader_epoch=epoch)
    c.check_response("list_offsets", 1, "not a client request (no isolation level): no check, the LEO 5",
                     error="NONE", offset=5)
    c.list_offsets(1, timestamp=-2, isolation="read_uncommitted", current_leader_epoch=epoch)
    c.check_response("list_offsets", 1, "EARLIEST skips the check: 0", error="NONE", offset=0)
    c.list_offsets(1, timestamp=t2, isolation="read_uncommitted", current_leader_epoch=epoch)
    c.check_response("list_offsets", 1, "by a timestamp below the HW: the record at offset 1, with its timestamp",
                     error="NONE", offset=1, timestamp=t2)
    c.list_offsets(1, timestamp=after_all, isolation="read_uncommitted", current_leader_epoch=epoch)
    c.check_response("list_offsets", 1, "by a timestamp beyond the HW while it lags: OFFSET_NOT_AVAILABLE",
                     error="OFFSET_NOT_AVAILABLE")
    c.catch_up()                                        # follower 2 truncates and fetches up to 5: HW 5
    c.check("brokers.1.logs.0.high_watermark", 5, "the followers' next fetches move the HW to 5")
    c.list_offsets(1, timestamp=-1, isolation="read_uncommitted", current_leader_epoch=epoch)
    c.check_response("list_offsets", 1, "the error goes away: LATEST is the HW, 5", error="NONE", offset=5)
    c.list_offsets(1, timestamp=after_all, isolation="read_uncommitted", current_leader_epoch=epoch)
    c.check_response("list_offsets", 1, "a timestamp beyond every record: None instead of an error",
                     error="NONE", offset=-1)
    assert t1 < t2 < after_all
    return c
missing(P + "testAppendRecordsAsFollowerBelowLogStartOffset", "batches",
        "truncateFullyAndStartAt(5), then a follower's append of a batch whose base offset (4) is below the log start "
        "and which contains it, and appends refused below it (UnexpectedAppendOffsetException): the model's fetch "
        "responses carry one record per batch from the fetch offset, which is always the follower's LEO, so no batch "
        "straddles or precedes the follower's log start.")


@case(P + "testListOffsetIsolationLevels")
def list_offset_isolation_levels():
    c = Case(P + "testListOffsetIsolationLevels",
             "ListOffsets LATEST answers the LEO without an isolation level, the HW for read_uncommitted and the "
             "LSO for read_committed; EARLIEST answers the log start offset whatever the level.",
             n_brokers=3, replication_factor=2, n_partitions=2)
    c.adapt("Kafka appends 3 records (HW 0), then moves the HW to 1 by hand; here the HW moves only as "
            "followers fetch, and a fetch reads everything the leader has, so the two situations are two "
            "partitions: partition 0 (leader 0) with 3 records nobody fetched, partition 1 (leader 1) with 1 "
            "record replicated (HW 1) and 2 more.  The requests without an isolation level carry a follower's "
            "replica id.")
    c.unchecked("read_committed: Kafka's records are an open transaction, so the LSO stays at 0 while the HW "
                "moves to 1; the model has no transactions (the LSO is the HW)")
    c.create_topic(controller=2)
    c.catch_up(p=0).catch_up(p=1)
    c.produce(0, acks=1, n=3, p=0)
    c.check("brokers.0.logs.0.high_watermark", 0, "partition 0: 3 records, HW 0")
    c.list_offsets(0, timestamp=-1, replica_id=1, p=0)
    c.check_response("list_offsets", 0, "LATEST, no isolation level: the LEO, 3", p=0, offset=3)
    c.list_offsets(0, timestamp=-1, isolation="read_uncommitted", p=0)
    c.check_response("list_offsets", 0, "LATEST, read_uncommitted: the HW, 0", p=0, offset=0)
    c.produce(1, acks=1, p=1).catch_up(p=1).produce(1, acks=1, n=2, p=1)
    c.check("brokers.1.logs.1.high_watermark", 1, "partition 1: 3 records, HW 1")
    c.list_offsets(1, timestamp=-1, replica_id=2, p=1)
    c.check_response("list_offsets", 1, "LATEST, no isolation level: the LEO, 3", p=1, offset=3)
    c.list_offsets(1, timestamp=-1, isolation="read_uncommitted", p=1)
    c.check_response("list_offsets", 1, "LATEST, read_uncommitted: the HW, 1", p=1, offset=1)
    c.list_offsets(1, timestamp=-2, replica_id=2, p=1)
    c.check_response("list_offsets", 1, "EARLIEST, no isolation level: 0", p=1, offset=0)
    c.list_offsets(1, timestamp=-2, isolation="read_uncommitted", p=1)
    c.check_response("list_offsets", 1, "EARLIEST, read_uncommitted: 0", p=1, offset=0)
    c.list_offsets(1, timestamp=-2, isolation="read_committed", p=1)
    c.check_response("list_offsets", 1, "EARLIEST, read_committed: 0", p=1, offset=0)
    return c


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


@case(P + "testAtMinIsr")
def at_min_isr():
    c = Case(P + "testAtMinIsr",
             "2.4.0's isAtMinIsr (leaderLogIfLocal with inSyncReplicaIds.size == min.insync.replicas): no local "
             "leader log before makeLeader, so false; the leader alone in the ISR at the default min ISR 1: true.",
             n_brokers=3, replication_factor=3)
    c.adapt("Kafka's makeLeader with ISR [leader] (leader epoch 8, replicas [leader, follower1, follower2]) is the "
            "controller's answer here: broker 0 leads the created partition, both followers stop, and the "
            "controller's broker change removes them from the ISR (LeaderAndIsr with ISR {0}).")
    c.adapt("isAtMinIsr is read as the metric path metrics.0.0.at_min_isr (model/metrics.py: the leader's ISR size "
            "equals min.insync.replicas; false on a broker that does not lead).")
    c.check("metrics.0.0.at_min_isr", False, "before makeLeader: not at min ISR")
    c.create_topic(controller=0).catch_up()
    c.crash(1).crash(2).broker_change(0).deliver_all()
    c.check("brokers.0.partitions.0.isr", [0], "the leader's ISR is {0}")
    c.check("metrics.0.0.at_min_isr", True, "ISR {leader}, min ISR 1: at min ISR")
    return c


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
