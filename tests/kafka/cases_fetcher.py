"""AbstractFetcherThreadTest and ReplicaFetcherThreadTest (Kafka 2.4.0): the follower's fetcher.

Kafka's tests drive a fetcher against a mocked leader whose log and epoch they set at will; here the
leader is another broker of the model, and the leader's and follower's states are reached through the
protocol (produce, leader changes by the controller, LeaderAndIsr reaching one broker before another).
One ``doWork`` of Kafka's fetcher is a truncation round (OffsetsForLeaderEpoch) and/or a fetch round.
"""

from __future__ import annotations

from kafkacase import Case, case, missing, out_of_scope

from isrlab.model import actions as A

F = "AbstractFetcherThreadTest."
RF = "ReplicaFetcherThreadTest."
FOUR = dict(n_brokers=4, replication_factor=3)  # replicas [0, 1, 2], the controller on broker 3

out_of_scope(F + "testMetricsRemovedOnShutdown", "metrics only")
out_of_scope(F + "testConsumerLagRemovedWithPartition", "metrics only")


@case(F + "testSimpleFetch")
def simple_fetch():
    c = Case(F + "testSimpleFetch",
             "A follower in epoch 0 with an empty log, the leader holding 2 records with HW 2: one round of "
             "work leaves the follower with LEO 2 and HW 2.", n_brokers=2, replication_factor=2)
    c.adapt("The follower is down while the leader takes the records (ISR = {leader}, so the HW is 2), then "
            "starts and follows it.")
    c.crash(1).create_topic(controller=0)
    c.produce(0, acks=1, n=2)
    c.check("brokers.0.logs.0.high_watermark", 2, "the leader's HW is 2")
    c.restart(1).broker_change(0).deliver_all()
    c.ofle(1).fetch(1)
    c.check("brokers.1.logs.0.entries", [[1, 0], [2, 0]], "the follower's LEO is 2")
    c.check("brokers.1.logs.0.high_watermark", 2, "and its HW is 2")
    return c


@case(F + "testFencedTruncation")
def fenced_truncation():
    c = Case(F + "testFencedTruncation",
             "A follower still in epoch 0 (here 1) asks a leader already in epoch 1 (here 2) for its truncation "
             "offset: "
             "FENCED_LEADER_EPOCH, no progress, the partition is removed from the fetcher and marked failed.",
             **FOUR)
    c.adapt("The follower holds one record, so that it sends OffsetsForLeaderEpoch (Kafka's mock sends it "
            "for an empty log too); Kafka's epochs 0 and 1 are 1 and 2 here: the follower restarted and got "
            "epoch 1, and the leader moves to epoch 2 (broker 2 stops) before the follower asks.")
    c.create_topic(controller=3).catch_up()
    c.produce(0, acks=1).catch_up()
    c.crash(1).broker_change(3).deliver_all()
    c.restart(1).broker_change(3).deliver_all()
    c.check("brokers.1.fetchers.0.state", "truncating", "the restarted follower starts with truncation")
    c.check("brokers.1.logs.0.high_watermark", 1, "its HW is 1 (the record was committed before)")
    c.check("brokers.1.fetchers.0.leader_epoch", 1, "in epoch 1 (broker 1 left the ISR: epoch 0 -> 1)")
    c.crash(2).broker_change(3).deliver_all(to=[0])
    c.check("brokers.0.partitions.0.leader_epoch", 2, "the leader is in epoch 2, one ahead of the follower")
    c.produce(0, acks=1, n=2)
    c.ofle(1)
    c.check("brokers.1.logs.0.entries", [[1, 0]], "no progress: the log end is unchanged")
    c.check("brokers.1.logs.0.high_watermark", 1, "and so is the HW")
    c.check("brokers.1.fetchers.0.state", "failed", "the partition is marked failed")
    return c


@case(F + "testFencedFetch")
def fenced_fetch():
    c = Case(F + "testFencedFetch",
             "A follower caught up to LEO 2; the leader's epoch moves on; the next fetch is fenced: the "
             "partition is removed from the fetcher and marked failed.", **FOUR)
    c.adapt("The leader's epoch moves on when the controller removes broker 2 from the ISR and the "
            "LeaderAndIsr reaches the leader before the follower.")
    c.create_topic(controller=3).catch_up()
    c.produce(0, acks=1, n=2).catch_up()
    c.check("brokers.1.logs.0.entries", [[1, 0], [2, 0]], "the follower caught up (LEO 2)")
    c.crash(2).broker_change(3).deliver_all(to=[0])
    c.fetch(1)
    c.check("brokers.1.fetchers.0.state", "failed", "fenced: the partition is marked failed")
    return c


@case(F + "testUnknownLeaderEpochInTruncation")
def unknown_epoch_in_truncation():
    c = Case(F + "testUnknownLeaderEpochInTruncation",
             "The follower's epoch is ahead of the leader's: its truncation round gets UNKNOWN_LEADER_EPOCH, "
             "nothing is fetched and it stays in truncation; once the leader reaches the epoch it truncates "
             "and fetches.", **FOUR)
    c.adapt("The follower holds the leader's first record already (so it asks the leader), the leader a "
            "second; the follower is ahead because the LeaderAndIsr of epoch 1 reached it first.")
    c.create_topic(controller=3).catch_up()
    c.produce(0, acks=1).catch_up().produce(0, acks=1)
    c.crash(2).broker_change(3).deliver_all(to=[1])
    c.ofle(1)
    c.check_new_error("UNKNOWN_LEADER_EPOCH", "the leader answers UNKNOWN_LEADER_EPOCH")
    c.check("brokers.1.logs.0.entries", [[1, 0]], "no data has been fetched")
    c.check("brokers.1.fetchers.0.state", "truncating", "the follower is still truncating")
    c.deliver_all(to=[0])
    c.ofle(1).fetch(1)
    c.check("brokers.1.logs.0.entries", [[1, 0], [2, 0]], "now it makes progress")
    c.check("brokers.1.fetchers.0.state", "fetching", "and is fetching")
    return c


@case(F + "testUnknownLeaderEpochWhileFetching")
def unknown_epoch_while_fetching():
    c = Case(F + "testUnknownLeaderEpochWhileFetching",
             "A follower fetching in an epoch the leader does not have yet gets UNKNOWN_LEADER_EPOCH: it stays "
             "at its offset, still fetching; once the leader has the epoch it continues.", **FOUR)
    c.adapt("Kafka rewinds the mocked leader's epoch after a first fetch; a leader's epoch never goes back, "
            "so here the follower is ahead from the start: its log is empty (it finishes truncation without "
            "asking) and the LeaderAndIsr of epoch 1 reached it before the leader.")
    c.create_topic(controller=3)
    c.produce(0, acks=1, n=2)
    c.crash(2).broker_change(3).deliver_all(to=[1]).ofle(1)
    c.check("brokers.1.fetchers.0.state", "fetching", "the follower fetches in epoch 1")
    c.fetch(1)
    c.check("brokers.1.logs.0.entries", [], "stuck at its offset")
    c.check("brokers.1.fetchers.0.state", "fetching", "still fetching")
    c.deliver_all(to=[0]).fetch(1)
    c.check("brokers.1.logs.0.entries", [[1, 0], [2, 0]], "with the leader in epoch 1 it continues")
    c.check("brokers.1.fetchers.0.state", "fetching", "fetching")
    return c


@case(F + "testTruncation")
def truncation():
    c = Case(F + "testTruncation",
             "Replica log epochs 0, 2, 4 and leader log epochs 1, 3, 5 (one record each, nothing in common): "
             "the follower truncates round after round until the logs match; then log start, log end and HW "
             "are the leader's.", n_brokers=3, replication_factor=2,
             assignment_start_index=1, assignment_replica_shift=1, unclean_leader_election=True)
    c.adapt("Both logs are written for real: brokers 1 and 0 lead in turn, each elected uncleanly while the "
            "other is down, and each writes one record per epoch (broker 1 in epochs 0, 2, 4; broker 0 in 1, 3, "
            "5).  Then broker 1 follows broker 0 in epoch 5.")
    c.crash(0).create_topic(controller=2)
    c.produce(1, acks=1)
    for leader, other in ((0, 1), (1, 0), (0, 1), (1, 0), (0, 1)):
        c.restart(leader).broker_change(2).deliver_all()
        c.crash(other).broker_change(2).deliver_all()
        c.produce(leader, acks=1)
    c.check("brokers.1.logs.0.entries", [[1, 0], [3, 2], [5, 4]], "replica log: epochs 0, 2, 4")
    c.check("brokers.0.logs.0.entries", [[2, 1], [4, 3], [6, 5]], "leader log: epochs 1, 3, 5")
    c.restart(1).broker_change(2).deliver_all()
    c.check("brokers.1.fetchers.0.leader_epoch", 5, "the follower's fetch state is in epoch 5")
    c.catch_up()
    c.check("brokers.1.logs.0.entries", [[2, 1], [4, 3], [6, 5]], "the logs match")
    c.check("brokers.1.logs.0.log_start_offset", 0, "the log start offsets match (0)")
    c.check("brokers.0.logs.0.high_watermark", 3, "the leader's HW")
    c.check("brokers.1.logs.0.high_watermark", 3, "equals the follower's")
    return c


@case(F + "testTruncateToHighWatermarkIfLeaderEpochRequestNotSupported")
def truncate_to_hw_no_epoch_request():
    c = Case(F + "testTruncateToHighWatermarkIfLeaderEpochRequestNotSupported",
             "Without OffsetsForLeaderEpoch (an inter-broker protocol before 0.11) a new follower with 3 records "
             "and HW 2 truncates to its HW: LEO 2, fetch offset 2, ready to fetch.",
             preset_name="kafka-0.10.2", n_brokers=3, replication_factor=3, assignment_replica_shift=1)
    c.adapt("The pre-KIP-101 protocol is the kafka-0.10.2 preset, where the truncation to the HW happens as "
            "the broker becomes follower (2.4 does it when the fetcher adds the partition).  Replicas "
            "[0, 2, 1]: broker 1 (3 records, HW 2) follows broker 2, elected when leader 0 stops.")
    c.create_topic(controller=2)
    c.produce(0, acks=1, n=2).fetch(2).produce(0, acks=1)
    c.fetch(1).fetch_request(2).fetch(1).fetch(1).fetch_response(2)
    c.check("brokers.1.logs.0.entries", [[1, 0], [2, 0], [3, 0]], "the follower has 3 records")
    c.check("brokers.1.logs.0.high_watermark", 2, "and HW 2")
    c.crash(0).broker_change(2).deliver_all()
    c.check("brokers.1.partitions.0.leader", 2, "it follows a new leader")
    c.check("brokers.1.logs.0.entries", [[1, 0], [2, 0]], "truncated to the HW: LEO 2")
    c.check("brokers.1.fetchers.0.fetch_offset", 2, "fetch offset 2")
    c.check("brokers.1.fetchers.0.state", "fetching", "ready to fetch")
    return c


#: brokers 0 and 1 hold records at offsets 0, 1, 2 of epochs 0, 2, 4 and HW 2; broker 0 leads [0, 1] in epoch 5
NO_EPOCHS_START = {"brokers": [{"broker": b, "logs": [{"partition": 0, "records": [[0, 0], [1, 2], [2, 4]],
                                                       "hw_checkpoint": 2}]} for b in (0, 1)],
                   "zookeeper": {"controller_epoch": 1,
                                 "partitions": [{"partition": 0, "replicas": [0, 1], "leader": 0, "leader_epoch": 5,
                                                 "isr": [0, 1]}]}}


@case(F + "testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable")
def truncate_to_high_watermark_if_leader_epoch_info_not_available():
    c = Case(F + "testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable",
             "A follower whose log has no leader epochs (latestEpoch None: the topic's message format is below 0.11) "
             "and HW 2, with records at 0, 1 and 2, becomes follower in epoch 5: it sends no OffsetsForLeaderEpoch, "
             "truncates to its HW 2 (truncation complete) and is ready to fetch from 2.", start=NO_EPOCHS_START,
             n_brokers=3, replication_factor=2, old_message_format_partitions=(0,))
    c.adapt("Kafka's mock overrides latestEpoch to None; here the topic's log.message.format.version is below 0.11 "
            "(old_message_format_partitions), so the follower's log keeps no epoch cache (its records' epochs 0, 2, "
            "4 are the ghost's names for them). Broker 0 leads epoch 5 with the same records; broker 2 becomes the "
            "controller and sends both their LeaderAndIsr.")
    c.elect(2).deliver_all()
    c.check("brokers.1.logs.0.epoch_cache", [], "the follower's log has no leader epochs: latestEpoch is None")
    c.check("brokers.1.fetchers.0.state", "truncating", "the partition starts truncating")
    c.ofle(1)
    c.check("ghost.responses.offsets_for_leader_epoch", [], "no OffsetsForLeaderEpoch is sent (fetchEpochEndOffsets "
            "would throw in Kafka's test)")
    c.check("brokers.1.logs.0.entries", [[1, 0], [2, 2]], "the follower truncated to its HW: LEO 2")
    c.check("brokers.1.fetchers.0.fetch_offset", 2, "the fetch offset is the HW, 2")
    c.check("brokers.1.fetchers.0.state", "fetching", "truncation is complete: the partition is ready for fetch")
    return c
@case(F + "testTruncateToHighWatermarkDuringRemovePartitions")
def truncate_to_high_watermark_during_remove_partitions():
    c = Case(F + "testTruncateToHighWatermarkDuringRemovePartitions",
             "A follower whose log has no leader epochs (latestEpoch None), 3 records and HW 2, is to truncate to its "
             "HW; the partition is removed from the fetcher first: the log keeps its 3 records (LEO 3) and the "
             "fetcher holds no state for the partition.", start=NO_EPOCHS_START, n_brokers=3, replication_factor=2,
             old_message_format_partitions=(0,), controlled_shutdown_enable=True)
    c.adapt("Kafka's mock overrides latestEpoch to None; here the topic's message format is below 0.11 "
            "(old_message_format_partitions), as in testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable: broker 0 "
            "leads epoch 5, broker 1 follows it with the same 3 records and HW 2, broker 2 is the controller.")
    c.adapt("Kafka's fetcher calls removePartitions inside truncateToHighWatermark, before the locked body that "
            "truncates (and skips a partition no longer in partitionStates); here the removal is the StopReplica "
            "(delete = false) the controller sends broker 1 when it shuts down in a controlled way (its replica goes "
            "OfflineReplica), delivered before the follower's truncation round.")
    c.elect(2).deliver_all()
    c.check("brokers.1.fetchers.0.state", "truncating", "the partition is to truncate (to its HW: no leader epochs)")
    c.check("brokers.1.logs.0.epoch_cache", [], "the follower's log has no leader epochs: latestEpoch is None")
    c.do(A.ControlledShutdown(1)).do(A.ControlledShutdownRequest(1)).deliver_all(to=[1])
    c.check("brokers.1.fetchers.0", None, "the partition was removed: no fetch state (fetchState(partition).isEmpty)")
    c.check("brokers.1.logs.0.entries", [[1, 0], [2, 2], [3, 4]],
            "the log was not truncated: LEO 3, the last batch's next offset")
    return c


missing(F + "testTruncationSkippedIfNoEpochChange", "fetcher internals",
        "addPartitions with the same epoch keeps the fetch state; a LeaderAndIsr with the same epoch never "
        "reaches the fetcher in 2.4 (ReplicaManager refuses it), so the case is the fetcher's own.")


@case(F + "testFollowerFetchOutOfRangeHigh")
def fetch_out_of_range_high():
    c = Case(F + "testFollowerFetchOutOfRangeHigh",
             "The follower fetches at 3 but the leader's log has become empty (LEO 0) without a new epoch: "
             "OFFSET_OUT_OF_RANGE, and the follower truncates to the leader's log end: LEO 0, log start 0, HW 0.",
             preset_name="crash-loses-unflushed", n_brokers=2, replication_factor=2)
    c.adapt("Kafka clears the mocked leader's log; here the leader loses its three unflushed records in a crash "
            "and leads again in the same epoch (a new controller resends the epoch ZooKeeper holds), while the "
            "follower keeps fetching in that epoch.")
    c.create_topic(controller=0).catch_up()
    c.produce(0, acks=1, n=3).fetch(1)
    c.check("brokers.1.logs.0.entries", [[1, 0], [2, 0], [3, 0]], "the follower has 3 records, fetches at 3")
    c.crash(0, clean=False).expire(0).restart(0).elect(1).deliver_all()
    c.check("brokers.0.logs.0.entries", [], "the leader's log is empty")
    c.check("brokers.0.partitions.0.leader_epoch", 0, "in the same epoch")
    c.fetch_request(1)
    c.check("brokers.1.fetchers.0.inflight.error", "OFFSET_OUT_OF_RANGE", "the fetch at 3 is out of range")
    c.fetch_response(1)
    c.check("brokers.1.logs.0.entries", [], "the follower truncates to the leader's log end: LEO 0")
    c.check("brokers.1.logs.0.log_start_offset", 0, "log start 0")
    c.check("brokers.1.logs.0.high_watermark", 0, "HW 0")
    return c


@case(F + "testFencedOffsetResetAfterOutOfRange")
def fenced_offset_reset_after_out_of_range():
    c = Case(F + "testFencedOffsetResetAfterOutOfRange",
             "The follower (empty log) fetches from 0, below the leader's log start offset 1: OFFSET_OUT_OF_RANGE; its "
             "ListOffsets to the leader (fetchOffsetAndTruncate) is fenced (FENCED_LEADER_EPOCH), so the partition "
             "leaves the fetcher and is marked failed, with the follower's log unchanged (LEO 0).",
             max_delete_records=5, **FOUR)
    c.adapt("Kafka's mocked leader holds records 1 and 2 above a log start of 1; here broker 0 leads with broker 2 in "
            "its ISR while broker 1 (the follower) is down, takes one record (HW 1) and deletes it (DeleteRecords to "
            "the HW: log start 1). Broker 1 then starts and follows it in epoch 0.")
    c.adapt("Kafka's test mocks only the EARLIEST offset request as fenced; here the leader moves to epoch 1 (the "
            "controller, on broker 3, removes the crashed broker 2 from the ISR) while the follower's fetch response "
            "is in flight, so its first ListOffsets in fetchOffsetAndTruncate (LATEST, with the fetch state's epoch 0) "
            "is the one fenced; the outcome the test asserts is the same.")
    c.unchecked("fetchedEarliestOffset (the fencing here comes at the LATEST request, which precedes it)")
    c.crash(1).create_topic(controller=3)
    c.produce(0, acks=1).catch_up(followers=[2])
    c.check("brokers.0.logs.0.high_watermark", 1, "the leader's HW is 1")
    c.do(A.DeleteRecords(0, 0))
    c.check_response("delete_records", 0, "DeleteRecords to the HW", error="NONE", requested_offset=1)
    c.check("brokers.0.logs.0.log_start_offset", 1, "the leader's log starts at 1")
    c.restart(1).broker_change(3).deliver_all(to=[0, 1])
    c.ofle(1)
    c.check("brokers.1.fetchers.0.fetch_offset", 0, "the follower fetches from 0 in epoch 0")
    c.fetch_request(1)
    c.check("brokers.1.fetchers.0.inflight.error", "OFFSET_OUT_OF_RANGE", "0 is below the leader's log start 1")
    c.crash(2).broker_change(3).deliver_all(to=[0])
    c.check("brokers.0.partitions.0.leader_epoch", 1, "the leader is in epoch 1; the follower's fetch state in 0")
    c.mark_errors()
    c.fetch_response(1)
    c.check_new_error("FENCED_LEADER_EPOCH", "the follower's ListOffsets in epoch 0 is fenced")
    c.check("brokers.1.logs.0.entries", [], "the follower's LEO stays 0")
    c.check("brokers.1.logs.0.log_start_offset", 0, "its log is unchanged")
    c.check("brokers.1.fetchers.0.state", "failed", "the partition is removed from fetching and marked failed")
    return c


@case(F + "testFollowerFetchOutOfRangeLow")
def fetch_out_of_range_low():
    start = {"brokers": [{"broker": 0, "logs": [{"partition": 0, "log_start_offset": 2, "records": [[2, 0]],
                                                 "hw_checkpoint": 2}]},
                         {"broker": 1, "logs": [{"partition": 0, "records": [[0, 0]], "hw_checkpoint": 0}]}],
             "zookeeper": {"controller_epoch": 1,
                           "partitions": [{"partition": 0, "replicas": [0, 1], "leader": 0, "leader_epoch": 0,
                                           "isr": [0]}]}}
    c = Case(F + "testFollowerFetchOutOfRangeLow",
             "The follower (log [0], epoch 0) fetches from 1, below the leader's log start offset 2 (leader log "
             "[2], epoch 0, HW 2): OFFSET_OUT_OF_RANGE, the follower truncates fully and starts at 2, then "
             "fetches until its log is the leader's.", start=start, n_brokers=3, replication_factor=2)
    c.adapt("The mocked leader and follower states are the start: broker 0 leads epoch 0 with ISR {0} (the "
            "follower is behind its log start, so out of sync); broker 2 becomes the controller and sends both "
            "their LeaderAndIsr.")
    c.adapt("Kafka's leader state keeps HW 2; here the leader's HW reaches its log end 3 when it becomes "
            "leader (its ISR is itself), and the test's last assertion, the follower's HW equal to the "
            "leader's, is checked at that value.")
    c.elect(2).deliver_all()
    c.ofle(1).fetch(1)
    c.check("brokers.1.fetchers.0.state", "fetching", "the partition is fetching")
    c.check("brokers.1.logs.0.log_start_offset", 2, "the follower's log start offset is updated to 2")
    c.check("brokers.1.logs.0.entries", [], "its log is empty")
    c.fetch(1)
    c.check("brokers.1.logs.0.entries", [[2, 0]], "the follower's log is the leader's: the record at 2")
    c.check("brokers.0.logs.0.entries", [[2, 0]], "(the leader's log)")
    c.check("brokers.1.logs.0.log_start_offset", 2, "the same log start offset as the leader's, 2")
    c.check("brokers.1.logs.0.high_watermark", 3, "the same HW as the leader's")
    c.check("brokers.0.logs.0.high_watermark", 3, "(the leader's HW)")
    return c


@case(F + "testRetryAfterUnknownLeaderEpochInLatestOffsetFetch")
def retry_after_unknown_leader_epoch_in_latest_offset_fetch():
    start = {"brokers": [{"broker": 0, "logs": [{"partition": 0, "log_start_offset": 2, "records": [[2, 4]],
                                                 "hw_checkpoint": 2}]},
                         {"broker": 1, "logs": [{"partition": 0, "records": [[0, 0]], "hw_checkpoint": 0}]}],
             "zookeeper": {"controller_epoch": 1,
                           "partitions": [{"partition": 0, "replicas": [0, 1], "leader": 0, "leader_epoch": 4,
                                           "isr": [0]}]}}
    c = Case(F + "testRetryAfterUnknownLeaderEpochInLatestOffsetFetch",
             "The follower (log [0] in epoch 0) is behind the leader's log start offset 2 (leader log [2] in epoch 4): "
             "its truncation leaves it at 1, the fetch at 1 is OFFSET_OUT_OF_RANGE, fetchOffsetAndTruncate finds the "
             "leader's end above its own and its start above its LEO, truncates fully at 2 and fetches until its log "
             "is the leader's: same log start, LEO and HW.", start=start, n_brokers=3, replication_factor=2)
    c.adapt("The mocked leader and follower are the start: broker 0 leads epoch 4 (the epoch of its record) with ISR "
            "{0}; broker 2 becomes the controller and sends both their LeaderAndIsr.")
    c.adapt("Kafka's mock makes the first ListOffsets LATEST fail with UNKNOWN_LEADER_EPOCH and the fetcher retries "
            "it. Here the follower's ListOffsets carries its fetch state's epoch, which the leader answered a moment "
            "before, and a leader's epoch never goes back: the leader cannot answer UNKNOWN_LEADER_EPOCH, so the "
            "first attempt succeeds (fetchOffsetAndTruncate leaves the fetch offset as it was on that error, which "
            "tests/test_log_start.py checks).")
    c.adapt("Kafka's leader state keeps HW 2; here the leader's HW reaches its log end 3 once the follower has "
            "fetched it, and the follower's HW is checked equal to it.")
    c.unchecked("the UNKNOWN_LEADER_EPOCH answer to the first LATEST request and its retry")
    c.elect(2).deliver_all()
    c.ofle(1)
    c.check("brokers.1.fetchers.0.fetch_offset", 1, "the initial truncation leaves the follower at its LEO 1")
    c.fetch(1)
    c.check("brokers.1.fetchers.0.state", "fetching", "after the out-of-range error the partition is fetching")
    c.check("brokers.1.logs.0.log_start_offset", 2, "the follower truncated fully and starts at the leader's start 2")
    c.fetch(1, rounds=2)
    c.check("brokers.1.logs.0.entries", [[2, 4]], "the follower's log is the leader's")
    c.check("brokers.0.logs.0.entries", [[2, 4]], "(the leader's log)")
    c.check("brokers.1.logs.0.log_start_offset", 2, "the same log start offset as the leader's")
    c.check("brokers.0.logs.0.log_start_offset", 2, "(the leader's log start offset)")
    c.check("brokers.1.logs.0.high_watermark", 3, "the same HW as the leader's")
    c.check("brokers.0.logs.0.high_watermark", 3, "(the leader's HW)")
    return c
missing(F + "testCorruptMessage", "fetcher internals", "A corrupt record batch in a fetch response.")
def _epoch_change_in_flight(name: str, description: str, leader_first: bool) -> Case:
    """KAFKA-7786's window: follower 1 sends OffsetsForLeaderEpoch in leader epoch 1, and a LeaderAndIsr for epoch 2
    (same leader) reaches it before the answer; the leader has epoch 2 before the request if ``leader_first``."""
    c = Case(name, description, n_brokers=5, replication_factor=4, offsets_for_leader_epoch_in_flight=True)
    c.adapt("Kafka's mock fetcher changes the partition's epoch (removePartitions, addPartitions) inside "
            "fetchEpochEndOffsets; here the OffsetsForLeaderEpoch request and its answer are two steps "
            "(offsets_for_leader_epoch_in_flight) and the controller (broker 4) bumps the epoch in between, the "
            "way ZooKeeper-era Kafka bumps it with the same leader: it removes a dead replica (broker 3) from the ISR. "
            "Epochs 0 -> 1 of Kafka's test are 1 -> 2 here (epoch 1 is broker 2's removal).")
    c.create_topic(controller=4).catch_up()
    c.produce(0, acks=1).catch_up()
    c.crash(2).broker_change(4).deliver_all(to=[0, 1, 3]).catch_up(followers=[3])
    c.check("brokers.1.fetchers.0.state", "truncating", "follower 1 truncates in leader epoch 1")
    c.check("brokers.1.fetchers.0.leader_epoch", 1, "follower 1 truncates in leader epoch 1")
    c.crash(3).broker_change(4)
    if leader_first:
        c.deliver_all(to=[0])
    c.ofle_request(1)
    c.deliver_all(to=[1])
    c.check("brokers.1.fetchers.0.leader_epoch", 2, "the LeaderAndIsr of epoch 2 reached follower 1 while the request "
            "was in flight")
    c.ofle_response(1)
    c.check("brokers.1.fetchers.0.state", "truncating", "the answer to epoch 1's request is ignored: still truncating")
    c.check("brokers.1.fetchers.0.leader_epoch", 2, "in the new leader epoch")
    c.deliver_all(to=[0]).catch_up(followers=[1])
    c.check("brokers.1.fetchers.0.state", "fetching", "the next round truncates and the follower fetches again")
    c.check("brokers.1.logs.0.entries", [[1, 0]], "with the leader's record")
    return c


@case(F + "testLeaderEpochChangeDuringFencedFetchEpochsFromLeader")
def leader_epoch_change_during_fenced_fetch_epochs():
    return _epoch_change_in_flight(F + "testLeaderEpochChangeDuringFencedFetchEpochsFromLeader",
                                   "The leader is in the new epoch when the follower's OffsetsForLeaderEpoch of the old "
                                   "epoch arrives, so it answers FENCED_LEADER_EPOCH; the follower's epoch changes while "
                                   "the request is in flight, so the answer is ignored (KAFKA-7786) and the next round "
                                   "truncates and fetches.", leader_first=True)


@case(F + "testLeaderEpochChangeDuringSuccessfulFetchEpochsFromLeader")
def leader_epoch_change_during_successful_fetch_epochs():
    return _epoch_change_in_flight(F + "testLeaderEpochChangeDuringSuccessfulFetchEpochsFromLeader",
                                   "The leader is still in the old epoch and answers the follower's OffsetsForLeaderEpoch; "
                                   "the follower's epoch changes while the request is in flight, so the answer is "
                                   "ignored (KAFKA-7786) and the follower truncates once the leader is in the new "
                                   "epoch too.", leader_first=False)


@case(F + "testTruncateToEpochEndOffsetsDuringRemovePartitions")
def truncate_to_epoch_end_offsets_during_remove_partitions():
    c = Case(F + "testTruncateToEpochEndOffsetsDuringRemovePartitions",
             "While the follower's OffsetsForLeaderEpoch is in flight the leader epoch changes and the partition is "
             "removed from the fetcher: the answer is dropped (the partition has no fetch state, not Truncating), and "
             "the fetcher goes on working without touching the partition's log.", **FOUR,
             offsets_for_leader_epoch_in_flight=True, controlled_shutdown_enable=True)
    c.adapt("Kafka's mock fetcher removes the partition and sets a new leader epoch inside fetchEpochEndOffsets; here "
            "the OffsetsForLeaderEpoch request and its answer are two steps (offsets_for_leader_epoch_in_flight) and "
            "in between follower 1 shuts down in a controlled way: the controller (broker 3) takes it out of the ISR "
            "(a new leader epoch at leader 0) and sends it StopReplica(delete = false), which removes the partition "
            "from its fetcher.")
    c.adapt("Kafka's follower has an empty log, which its mock still asks about (latestEpoch UNDEFINED_EPOCH); a "
            "2.4 follower with an empty epoch cache truncates to its HW without asking, so here the follower holds "
            "the leader's record (epoch 0) and truncates in epoch 1 (broker 2's removal from the ISR), Kafka's 0.")
    c.create_topic(controller=3).catch_up()
    c.produce(0, acks=1).catch_up()
    c.crash(2).broker_change(3).deliver_all(to=[0, 1])
    c.check("brokers.1.fetchers.0.state", "truncating", "follower 1 truncates in leader epoch 1")
    c.ofle_request(1)
    c.check("brokers.1.fetchers.0.epoch_request.0", 1, "its OffsetsForLeaderEpoch of epoch 1 is in flight")
    c.do(A.ControlledShutdown(1)).do(A.ControlledShutdownRequest(1)).deliver_all(to=[0, 1])
    c.check("brokers.0.partitions.0.leader_epoch", 2, "the leader epoch changed (2)")
    c.check("brokers.1.fetchers.0", None, "the partition was removed: no fetch state and no current leader epoch; "
            "the in-flight answer has nowhere to land")
    c.produce(0, acks=1).catch_up()
    c.check("brokers.1.fetchers.0", None, "the fetcher goes on working without the partition")
    c.check("brokers.1.logs.0.entries", [[1, 0]], "the partition's log is untouched (not truncated, nothing fetched)")
    return c


out_of_scope(F + "testTruncationThrowsExceptionIfLeaderReturnsPartitionsNotRequestedInFetchEpochs",
             "a malformed response (partitions that were not requested)")
missing(F + "testFetcherThreadHandlingPartitionFailureDuringAppending", "fetcher internals",
        "A storage exception while appending marks the partition failed; the others continue.")
missing(F + "testFetcherThreadHandlingPartitionFailureDuringTruncation", "fetcher internals",
        "A storage exception while truncating marks the partition failed; the others continue.")

# ============================================================================ ReplicaFetcherThreadTest

out_of_scope(RF + "shouldSendLatestRequestVersionsByDefault", "request versions")
@case(RF + "shouldFetchLeaderEpochRequestIfLastEpochDefinedForSomePartitions")
def fetch_leader_epoch_request_if_last_epoch_defined_for_some_partitions():
    logs = [{"partition": 0, "epoch_cache": [[5, 0]]}, {"partition": 1, "epoch_cache": [[5, 0]]}, {"partition": 2}]
    start = {"brokers": [{"broker": 0, "logs": logs}, {"broker": 1, "logs": logs}],
             "zookeeper": {"controller_epoch": 1,
                           "partitions": [{"partition": p, "replicas": [0, 1], "leader": 0, "leader_epoch": 5,
                                           "isr": [0, 1]} for p in range(3)]}}
    c = Case(RF + "shouldFetchLeaderEpochRequestIfLastEpochDefinedForSomePartitions",
             "A follower of three partitions in leader epoch 5, each with LEO 0 and HW 0: two (t1p0, t1p1) have a "
             "latest epoch, 5; the third (t2p1) is on a message format without epochs. The first round sends "
             "OffsetsForLeaderEpoch for the two, truncates all three and fetches; later rounds fetch without asking "
             "for epochs again.", start=start, n_brokers=3, replication_factor=2, n_partitions=3,
             old_message_format_partitions=(2,))
    c.adapt("The model has one topic: t1p0 and t1p1 are partitions 0 and 1, t2p1 (a topic on message format 0.10) "
            "is partition 2, whose log.message.format.version is below 0.11 (old_message_format_partitions). The "
            "mocked logs are the start: empty logs whose epoch caches hold epoch 5 (none for partition 2); broker 0 "
            "leads the three in epoch 5, broker 2 becomes the controller and sends both their LeaderAndIsr.")
    c.adapt("Kafka's fetcher sends one OffsetsForLeaderEpoch request for both partitions with epochs "
            "(epochFetchCount 1); the model's fetcher keeps one state per partition and sends one per partition, so "
            "the count is checked as an answer for each of the two and none for the third.")
    c.unchecked("the fetch request counts (one fetch per round for the three partitions in Kafka; one per partition "
                "here)")
    c.elect(2).deliver_all()
    for p in range(3):
        c.check(f"brokers.1.fetchers.{p}.state", "truncating", "every partition starts truncating")
    for p in range(3):
        c.ofle(1, p)
    c.check_response("offsets_for_leader_epoch", 1, "an OffsetsForLeaderEpoch answer for t1p0", p=0, value="NONE")
    c.check_response("offsets_for_leader_epoch", 1, "and one for t1p1", p=1, value="NONE")
    c.check_response("offsets_for_leader_epoch", 1, "none for t2p1: it has no latest epoch and truncates to its HW",
                     p=2, value=None)
    for p in range(3):
        c.check(f"brokers.1.fetchers.{p}.state", "fetching", "all three are ready for fetch, none truncating")
        c.check(f"brokers.1.fetchers.{p}.fetch_offset", 0, "truncated to 0")
    for _loop in (2, 3):
        for p in range(3):
            c.fetch(1, p)
        for p in range(3):
            c.check(f"brokers.1.fetchers.{p}.state", "fetching", "still ready for fetch, no truncation again")
        c.check_response("offsets_for_leader_epoch", 1, "no new OffsetsForLeaderEpoch for t2p1", p=2, value=None)
    return c
out_of_scope(RF + "shouldHandleExceptionFromBlockingSend", "a network client that throws (UNKNOWN_SERVER_ERROR)")


@case(RF + "shouldFetchLeaderEpochOnFirstFetchOnlyIfLeaderEpochKnownToBoth")
def epoch_request_first_fetch_only():
    c = Case(RF + "shouldFetchLeaderEpochOnFirstFetchOnlyIfLeaderEpochKnownToBoth",
             "A new follower whose log has a leader epoch asks OffsetsForLeaderEpoch once, truncates once, then "
             "only fetches: the next rounds send no epoch request.", n_brokers=2, replication_factor=2)
    c.adapt("One partition (Kafka: two); the follower holds a record from epoch 0 when it restarts and becomes "
            "follower in epoch 1.")
    c.create_topic(controller=0).catch_up()
    c.produce(0, acks=1).catch_up()
    c.crash(1).broker_change(0).deliver_all().restart(1).broker_change(0).deliver_all()
    c.check("brokers.1.fetchers.0.state", "truncating", "the follower starts with an epoch request")
    c.ofle(1).fetch(1)
    c.check("brokers.1.fetchers.0.state", "fetching", "loop 1: one epoch request, then a fetch")
    c.fetch(1)
    c.check("brokers.1.fetchers.0.state", "fetching", "loop 2: a fetch, no epoch request")
    c.fetch(1)
    c.check("brokers.1.fetchers.0.state", "fetching", "loop 3: a fetch, no epoch request")
    c.check("brokers.1.logs.0.entries", [[1, 0]], "the one truncation removed nothing")
    return c


@case(RF + "shouldTruncateToOffsetSpecifiedInEpochOffsetResponse")
def truncate_to_epoch_end_offset():
    c = Case(RF + "shouldTruncateToOffsetSpecifiedInEpochOffsetResponse",
             "The leader answers the follower's OffsetsForLeaderEpoch with an end offset below the follower's "
             "log end (Kafka: 156 < 200): the follower truncates to it.", **FOUR)
    c.adapt("Follower 2 holds 3 records of epoch 0, broker 1 only 2; broker 1 is elected when leader 0 stops "
            "and answers (0, 2): the follower truncates to 2.")
    c.create_topic(controller=3).catch_up()
    c.produce(0, acks=1, n=2).catch_up().produce(0, acks=1).fetch(2)
    c.crash(0).broker_change(3).deliver_all()
    c.check("brokers.2.partitions.0.leader", 1, "broker 2 follows broker 1")
    c.check("brokers.2.logs.0.entries", [[1, 0], [2, 0], [3, 0]], "with 3 records")
    c.ofle(2)
    c.check("brokers.2.logs.0.entries", [[1, 0], [2, 0]], "truncated to the leader's end offset 2")
    c.check("brokers.2.fetchers.0.fetch_offset", 2, "and fetches from 2")
    return c


missing(RF + "shouldTruncateToOffsetSpecifiedInEpochOffsetResponseIfFollowerHasNoMoreEpochs", "starting states",
        "The mocked follower log has latest epoch 5 yet no end offset for epoch 4; a 2.4 epoch cache answers "
        "every epoch below its latest (KAFKA-7415), so no log is in that state, not even one given as a start "
        "(whose epoch cache must be a LeaderEpochFileCache's).")


@case(RF + "shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower")
def epoch_request_second_time():
    c = Case(RF + "shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower",
             "The leader answers with an epoch the follower does not know: the follower truncates to the end of "
             "its own largest epoch below it and asks again (no fetch yet); the second answer ends the "
             "truncation and fetching starts; no third epoch request.",
             n_brokers=3, replication_factor=2, unclean_leader_election=True)
    c.adapt("Broker 1 (epochs 0 and 3 in its log) follows broker 0 (epochs 0, 1, 5): it asks for epoch 3, "
            "broker 0 answers epoch 1, which broker 1 never had; the histories come from unclean elections while "
            "the other broker was away.")
    c.create_topic(controller=2).catch_up()
    c.produce(0, acks=1, n=2).catch_up()
    c.expire(1).broker_change(2).deliver_all()
    c.produce(0, acks=1)
    c.crash(0).broker_change(2).deliver_all()
    c.reconnect(1).broker_change(2).deliver_all()
    c.produce(1, acks=1)
    c.crash(1).broker_change(2).restart(0).broker_change(2).deliver_all()
    c.produce(0, acks=1)
    c.restart(1).broker_change(2).deliver_all()
    c.check("brokers.1.logs.0.epoch_cache", [[0, 0], [3, 2]], "the follower knows epochs 0 and 3")
    c.check("brokers.0.logs.0.epoch_cache", [[0, 0], [1, 2], [5, 3]], "the leader has epochs 0, 1 and 5")
    c.ofle(1)
    c.check("brokers.1.fetchers.0.state", "truncating", "epoch 1 is unknown to the follower: it asks again")
    c.check("brokers.1.logs.0.entries", [[1, 0], [2, 0]], "after truncating to the end of its epoch 0 (2)")
    c.ofle(1)
    c.check("brokers.1.fetchers.0.state", "fetching", "the second answer ends the truncation")
    c.check("brokers.1.fetchers.0.fetch_offset", 2, "truncated to the second answer's offset, 2")
    c.fetch(1)
    c.check("brokers.1.fetchers.0.state", "fetching", "loop 3: a fetch, no epoch request")
    return c


@case(RF + "shouldUseLeaderEndOffsetIfInterBrokerVersionBelow20")
def leader_end_offset_below_20():
    c = Case(RF + "shouldUseLeaderEndOffsetIfInterBrokerVersionBelow20",
             "Before 2.0 (OffsetsForLeaderEpoch v0) the leader answers an end offset without an epoch: the "
             "follower truncates to it (Kafka: 155 and 143), then only fetches.",
             preset_name="kafka-0.11", **FOUR)
    c.adapt("The protocol before 2.0 is the kafka-0.11 preset (KIP-101 truncation, end offset only).  "
            "Follower 2 holds 3 records, the new leader 1 only 2.")
    c.create_topic(controller=3).catch_up()
    c.produce(0, acks=1, n=2).catch_up().produce(0, acks=1).fetch(2)
    c.crash(0).broker_change(3).deliver_all()
    c.ofle(2)
    c.check("brokers.2.logs.0.entries", [[1, 0], [2, 0]], "truncated to the leader's end offset 2")
    c.check("brokers.2.fetchers.0.state", "fetching", "then fetching")
    c.fetch(2)
    c.check("brokers.2.fetchers.0.state", "fetching", "loop 2: no epoch request")
    return c


@case(RF + "shouldTruncateToInitialFetchOffsetIfLeaderReturnsUndefinedOffset")
def truncate_to_initial_offset_on_undefined():
    c = Case(RF + "shouldTruncateToInitialFetchOffsetIfLeaderReturnsUndefinedOffset",
             "The leader answers UNDEFINED (no epoch, no offset): the follower truncates to its initial fetch "
             "offset (its HW).", preset_name="no-kafka-7415", **FOUR)
    c.adapt("A 2.4 leader always has its own epoch in its cache (KAFKA-7415) and never answers UNDEFINED to a "
            "follower's epoch; the no-kafka-7415 preset lets the new leader 1, which holds no record, answer "
            "UNDEFINED for follower 2's epoch 0.  Follower 2's HW (its initial fetch offset) is 0.")
    c.create_topic(controller=3).catch_up()
    c.produce(0, acks=1, n=2).fetch(2, rounds=2)
    c.check("brokers.2.logs.0.entries", [[1, 0], [2, 0]], "follower 2 holds 2 records")
    c.check("brokers.2.logs.0.high_watermark", 0, "its HW is 0")
    c.crash(0).broker_change(3).deliver_all()
    c.check("brokers.1.logs.0.epoch_cache", [], "the new leader's epoch cache is empty")
    c.check("brokers.2.fetchers.0.fetch_offset", 0, "the initial fetch offset is the HW, 0")
    c.ofle(2)
    c.check("brokers.2.logs.0.entries", [], "truncated to the initial fetch offset 0")
    c.check("brokers.2.fetchers.0.state", "fetching", "and fetching")
    return c


@case(RF + "shouldPollIndefinitelyIfLeaderReturnsAnyException")
def poll_on_error():
    c = Case(RF + "shouldPollIndefinitelyIfLeaderReturnsAnyException",
             "While the broker it follows is not the leader (NOT_LEADER_FOR_PARTITION) the follower keeps asking "
             "and truncates nothing; once the new leader answers it truncates to the answer (Kafka: 156).",
             n_brokers=5, replication_factor=4)
    c.adapt("Follower 2 is in truncation (epoch 1) when its leader 0 restarts: broker 0 hosts no partition until "
            "the controller's LeaderAndIsr reaches it, but already knows the partition from the controller's "
            "UpdateMetadata (in 2.4 a broker that knows neither answers UNKNOWN_TOPIC_OR_PARTITION).  The "
            "controller elects broker 1, which has fewer records than broker 2.")
    c.unchecked("the second partition answered UNKNOWN_SERVER_ERROR (the model has no such failure)")
    c.create_topic(controller=4).catch_up()
    c.produce(0, acks=1, n=2).catch_up().produce(0, acks=1).fetch(2)
    c.crash(3).broker_change(4).deliver_all()
    c.crash(0).restart(0).broker_change(4).deliver(4, 0)
    c.check("brokers.0.metadata.partitions.0.leader", -1, "broker 0 knows the partition (no leader yet)")
    c.check("brokers.0.partitions", [None], "and hosts none")
    for i in range(4):
        c.ofle(2)
        if i == 0:
            c.check_new_error("NOT_LEADER_FOR_PARTITION", "broker 0 answers NOT_LEADER_FOR_PARTITION")
        c.check("brokers.2.logs.0.entries", [[1, 0], [2, 0], [3, 0]], f"round {i + 1}: no truncation")
        c.check("brokers.2.fetchers.0.state", "truncating", f"round {i + 1}: still asking")
    c.deliver_all()
    c.check("brokers.2.partitions.0.leader", 1, "a new leader, broker 1")
    c.ofle(2)
    c.check("brokers.2.logs.0.entries", [[1, 0], [2, 0]], "truncated to the new leader's answer, 2")
    c.check("brokers.2.fetchers.0.state", "fetching", "and fetching")
    return c


@case(RF + "shouldMovePartitionsOutOfTruncatingLogState")
def out_of_truncating():
    c = Case(RF + "shouldMovePartitionsOutOfTruncatingLogState",
             "A partition added to the fetcher starts in the truncating state; after one round it is fetching.",
             n_brokers=2, replication_factor=2)
    c.adapt("One partition (Kafka: two); the follower holds a record, so its round asks the leader.")
    c.create_topic(controller=0).catch_up()
    c.produce(0, acks=1).catch_up()
    c.crash(1).broker_change(0).deliver_all().restart(1).broker_change(0).deliver_all()
    c.check("brokers.1.fetchers.0.state", "truncating", "the partition starts truncating")
    c.ofle(1)
    c.check("brokers.1.fetchers.0.state", "fetching", "after one round it is fetching")
    return c


@case(RF + "shouldFilterPartitionsMadeLeaderDuringLeaderEpochRequest")
def filter_partitions_made_leader_during_leader_epoch_request():
    parts = [{"partition": 0, "replicas": [1, 0, 2], "leader": 0, "leader_epoch": 0, "isr": [0, 1, 2]},
             {"partition": 1, "replicas": [2, 0, 1], "leader": 2, "leader_epoch": 0, "isr": [2, 0, 1]}]
    c = Case(RF + "shouldFilterPartitionsMadeLeaderDuringLeaderEpochRequest",
             "Follower 1 asks leader 0 for the end offsets of two partitions; while the request is outstanding "
             "partition 0 is made leader on broker 1 (removed from the fetcher): the answer for partition 0 is dropped "
             "(not truncated), and exactly one partition, 1, is truncated to the offset the leader returned.",
             n_brokers=4, replication_factor=3, n_partitions=2, offsets_for_leader_epoch_in_flight=True,
             max_preferred_elections=1, start={"zookeeper": {"partitions": parts}})
    c.adapt("Kafka's fetcher sends one OffsetsForLeaderEpoch for both partitions; the model's fetcher state is per "
            "partition, so each has its own request in flight (offsets_for_leader_epoch_in_flight) and the leader "
            "change happens while both are outstanding.")
    c.adapt("Kafka's mocks give the follower LEO 100 and the leader's answer 49; here partition 1 (replicas [2, 0, 1], "
            "leader 2) takes 3 records of which broker 0 has 2 and follower 1 all 3, and when broker 2 stops, broker 0 "
            "leads it (epoch 1): the answer for epoch 0 is 2, below the follower's LEO 3.  Partition 0 (replicas "
            "[1, 0, 2], leader 0) gets a new epoch too (broker 2 leaves its ISR), so follower 1 truncates both; the "
            "leader change is a preferred-replica election (the controller is broker 3) that makes broker 1 lead "
            "partition 0.")
    c.elect(3).deliver_all().catch_up(p=0).catch_up(p=1)
    c.produce(0, acks=1, n=2, p=0).produce(2, acks=1, n=2, p=1)
    c.catch_up(p=0).catch_up(p=1)
    c.produce(2, acks=1, p=1).fetch(1, p=1)
    c.check("brokers.1.logs.1.entries", [[3, 0], [4, 0], [5, 0]], "follower 1 holds 3 records of partition 1")
    c.check("brokers.0.logs.1.entries", [[3, 0], [4, 0]], "broker 0 holds 2")
    c.crash(2).broker_change(3).deliver_all()
    c.check("zk.partition_states.1.leader", 0, "broker 0 leads partition 1")
    for p in (0, 1):
        c.check(f"brokers.1.fetchers.{p}.state", "truncating", f"follower 1 truncates partition {p} (leader 0, epoch 1)")
        c.ofle_request(1, p)
        c.check(f"brokers.1.fetchers.{p}.epoch_request.0", 1, f"its OffsetsForLeaderEpoch for partition {p} is out")
    c.do(A.PreferredReplicaElection(0)).do(A.ControllerProcessPreferredReplicaElection(3)).deliver_all(to=[1])
    c.check("brokers.1.partitions.0.leader", 1, "partition 0 became leader on broker 1")
    c.check("brokers.1.fetchers.0", None, "and left the fetcher: its answer is filtered out")
    c.check("brokers.1.logs.0.entries", [[1, 0], [2, 0]], "partition 0 is not truncated")
    c.ofle_response(1, 1)
    c.check("brokers.1.logs.1.entries", [[3, 0], [4, 0]], "partition 1 is truncated to the leader's answer, 2")
    c.check("brokers.1.fetchers.1.fetch_offset", 2, "and fetches from there")
    c.check("brokers.1.fetchers.1.state", "fetching", "its truncation is done")
    return c


out_of_scope(RF + "shouldCatchExceptionFromBlockingSendWhenShuttingDownReplicaFetcherThread",
             "exceptions while the fetcher thread shuts down")
