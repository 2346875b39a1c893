"""ReplicaManagerTest (Kafka 2.4.0)."""

from __future__ import annotations

from isrlab.model import actions as A
from kafkacase import Case, case, missing, out_of_scope

R = "ReplicaManagerTest."

out_of_scope(R + "testHighWaterMarkDirectoryMapping", "the HW checkpoint file's location per log directory")
out_of_scope(R + "testHighwaterMarkRelativeDirectoryMapping", "the HW checkpoint file's location per log directory")


@case(R + "testIllegalRequiredAcks")
def illegal_required_acks():
    c = Case(R + "testIllegalRequiredAcks",
             "A produce with acks = 3 is answered INVALID_REQUIRED_ACKS and nothing is appended.",
             n_brokers=1, replication_factor=1)
    c.adapt("Kafka's replica manager hosts no partition at all; here the produce reaches broker 0 before any "
            "controller: the acks check comes first all the same.")
    c.produce(0, acks=3)
    c.check_new_error("INVALID_REQUIRED_ACKS", "the response is INVALID_REQUIRED_ACKS")
    c.check("ghost.produced", 0, "nothing was appended")
    return c


@case(R + "testClearPurgatoryOnBecomingFollower")
def clear_purgatory_on_becoming_follower():
    c = Case(R + "testClearPurgatoryOnBecomingFollower",
             "An acks=-1 produce waits on leader 0; when broker 0 becomes a follower (leader 1, epoch 1) the "
             "waiting produce is completed at once with NOT_LEADER_FOR_PARTITION.",
             n_brokers=2, replication_factor=2)
    c.adapt("Leadership moves to broker 1 the way the controller moves it: broker 0's ZooKeeper session "
            "expires (it keeps running), the controller elects broker 1, and when broker 0 registers again it "
            "gets LeaderAndIsr making it a follower of broker 1 in epoch 1.")
    c.create_topic(controller=1)
    c.produce(0, acks=-1)
    c.check("brokers.0.delayed_produces.0.required_offset", 1, "the produce waits in the purgatory")
    c.expire(0).broker_change(1).deliver_all()
    c.check("zk.partition_states.0.leader", 1, "broker 1 leads")
    c.reconnect(0).broker_change(1).mark_errors().deliver_all(to=[0])
    c.check("brokers.0.partitions.0.leader", 1, "broker 0 follows broker 1 in epoch 1")
    c.check("brokers.0.partitions.0.leader_epoch", 1, "in epoch 1")
    c.check("brokers.0.delayed_produces", [], "the produce was completed (fired)")
    c.check_new_error("NOT_LEADER_FOR_PARTITION", "with NOT_LEADER_FOR_PARTITION")
    c.check("ghost.acked", [], "and not acknowledged")
    return c


missing(R + "testReceiveOutOfOrderSequenceExceptionWithLogStartOffset", "transactions",
        "Idempotent producer sequence numbers (OUT_OF_ORDER_SEQUENCE_NUMBER with the log start offset).")
missing(R + "testReadCommittedFetchLimitedAtLSO", "transactions", "The LSO of open transactions.")
missing(R + "testDelayedFetchIncludesAbortedTransactions", "transactions", "Aborted transactions in a DelayedFetch.")


@case(R + "testFetchBeyondHighWatermarkReturnEmptyResponse")
def fetch_beyond_hw():
    c = Case(R + "testFetchBeyondHighWatermarkReturnEmptyResponse",
             "Above the HW a follower's fetch returns records (it reads up to the log end), a consumer's fetch "
             "returns nothing, both without error.", n_brokers=3, replication_factor=3)
    c.adapt("The follower fetches at 1 (its log end) with the leader at 2 records and HW 0.  Consumers in the "
            "model fetch from the log start: the consumer reads at 0 with the HW at 0, which is also above the HW.")
    c.create_topic(controller=0).catch_up()
    c.produce(0, acks=-1).fetch(1).produce(0, acks=-1)
    c.fetch_request(1)
    c.check("brokers.0.logs.0.high_watermark", 0, "the HW is 0 (follower 2 has not fetched)")
    c.check("brokers.1.fetchers.0.inflight.error", "NONE", "the follower's fetch at 1: no error")
    c.check("brokers.1.fetchers.0.inflight.entries", [[2, 0]], "and it returns data")
    c.consume(0)
    c.check("ghost.consumed", [], "the consumer's fetch above the HW returns nothing")
    return c


@case(R + "testFollowerStateNotUpdatedIfLogReadFails")
def follower_state_not_updated_if_read_fails():
    c = Case(R + "testFollowerStateNotUpdatedIfLogReadFails",
             "KAFKA-8400: a follower's valid fetch at 0 sets its state (LEO 0, log start 0); a later fetch at a "
             "higher offset (3) with an old leader epoch fails with FENCED_LEADER_EPOCH and does not update it.",
             n_brokers=4, replication_factor=3)
    c.adapt("The leader's epoch moves past the follower's when the controller removes broker 2 from the ISR "
            "and the LeaderAndIsr reaches the leader first.  The leader appends 3 records before the valid fetch "
            "and 2 after (Kafka: 5 before), so that the follower's next fetch is at 3.")
    c.create_topic(controller=3)
    c.check("brokers.0.partitions.0.remote_replicas.0.log_start_offset", -1, "follower 1's log start is unknown")
    c.check("brokers.0.partitions.0.remote_replicas.0.log_end_offset", -1, "follower 1's LEO is unknown")
    c.produce(0, acks=1, n=3).ofle(1).fetch_request(1)
    c.check("brokers.1.fetchers.0.inflight.error", "NONE", "the valid fetch at 0 succeeds")
    c.check("brokers.0.partitions.0.remote_replicas.0.log_start_offset", 0, "the follower's log start is 0")
    c.check("brokers.0.partitions.0.remote_replicas.0.log_end_offset", 0, "the follower's LEO is 0")
    c.fetch_response(1).produce(0, acks=1, n=2)
    c.crash(2).broker_change(3).deliver_all(to=[0])
    c.check("brokers.0.partitions.0.leader_epoch", 1, "the leader is in epoch 1, follower 1 in epoch 0")
    c.fetch_request(1)
    c.check("brokers.1.fetchers.0.inflight.fetch_offset", 3, "a fetch at 3 with the old epoch")
    c.check("brokers.1.fetchers.0.inflight.error", "FENCED_LEADER_EPOCH", "fails with FENCED_LEADER_EPOCH")
    c.check("brokers.0.partitions.0.remote_replicas.0.log_start_offset", 0, "the follower's state is not updated")
    c.check("brokers.0.partitions.0.remote_replicas.0.log_end_offset", 0, "its LEO is still 0")
    return c


@case(R + "testFetchMessagesWhenNotFollowerForOnePartition")
def fetch_when_not_follower_for_one_partition():
    both = [{"partition": p, "replicas": [0, 1], "leader": 0, "leader_epoch": 0, "isr": [0, 1]} for p in (0, 1)]
    c = Case(R + "testFetchMessagesWhenNotFollowerForOnePartition",
             "Replica 1 fetches partition 0, which it replicates, and partition 1, which it does not: partition 0's "
             "answer has the records and the HW from before the fetch, which then moves the HW; partition 1's has no "
             "records and no error, and its HW does not move.", n_brokers=3, replication_factor=2, n_partitions=2,
             max_reassignments=1, kip_320=False, start={"zookeeper": {"partitions": both}})
    c.adapt("Kafka's replica manager is given partition 1 with replicas [0, 2] and gets one fetch for both partitions; "
            "here both partitions start on [0, 1] (leader 0, controller 2) and an admin reassigns partition 1 to "
            "[0, 2]: once the reassignment completed at leader 0, broker 1, which has not yet received its "
            "StopReplica, still fetches partition 1.  Each partition's fetch is a request of its own.")
    c.adapt("Kafka's fetch carries no current leader epoch (Optional.empty), so the trace runs with kip_320 off "
            "(a follower sends none); otherwise the reassignment's new leader epoch would fence broker 1 first.")
    c.adapt("Kafka's follower claims offset 1 of 2 records and its one fetch moves the HW to 1; the model's follower "
            "fetches from its log end, so its first fetch (at 0) returns the records with the old HW, its next one "
            "(at 2) moves the HW.")
    c.elect(2).deliver_all().catch_up(p=0).catch_up(p=1)
    c.reassign("0,2", p=1).do(A.ControllerProcessPartitionReassignment(2)).deliver_all(to=[0, 2]).catch_up(
        followers=[2], p=1)
    c.check("zk.partition_states.1.isr", [0, 1, 2], "the target replica 2 caught up")
    c.do(A.ControllerProcessReassignmentIsrChange(2, 1)).deliver_all(to=[0, 2])
    c.check("brokers.0.partitions.1.assigned_replicas", [0, 2], "leader 0: partition 1's replicas are [0, 2]")
    c.check("brokers.1.fetchers.1.leader", 0, "broker 1 still fetches partition 1 (no StopReplica yet)")
    for p in (0, 1):
        c.produce(0, acks=1, n=2, p=p)
    c.check("brokers.0.logs.0.high_watermark", 0, "partition 0's HW is 0")
    c.check("brokers.0.logs.1.high_watermark", 0, "partition 1's HW is 0")
    c.fetch_request(1, p=0)
    c.check("brokers.1.fetchers.0.inflight.error", "NONE", "partition 0: NONE")
    c.check("brokers.1.fetchers.0.inflight.high_watermark", 0, "the HW before this fetch updates it")
    c.check("brokers.1.fetchers.0.inflight.entries", [[1, 0], [2, 0]], "the two records appended")
    c.fetch_response(1, p=0).fetch(1, p=0)
    c.check("brokers.0.logs.0.high_watermark", 2, "partition 0's HW is incremented")
    c.fetch_request(1, p=1)
    c.check("brokers.1.fetchers.1.inflight.error", "NONE", "partition 1: NONE")
    c.check("brokers.1.fetchers.1.inflight.high_watermark", 0, "HW 0")
    c.check("brokers.1.fetchers.1.inflight.entries", [], "no records")
    c.check("brokers.0.logs.1.high_watermark", 0, "partition 1's HW is not incremented")
    return c


@case(R + "testBecomeFollowerWhenLeaderIsUnchangedButMissedLeaderUpdate")
def become_follower_missed_update():
    c = Case(R + "testBecomeFollowerWhenLeaderIsUnchangedButMissedLeaderUpdate",
             "A follower of leader 1 in epoch 1 gets LeaderAndIsr with the same leader in epoch 3 (it missed an "
             "update): it truncates (once) to the end offset the leader returns for its latest epoch.",
             n_brokers=4, replication_factor=3)
    c.adapt("Broker 2 follows leader 0 in epoch 0 and holds a record (offset 1) that leader 0 later loses: "
            "while broker 2 is disconnected from ZooKeeper, leader 0 is itself disconnected, broker 1 leads "
            "(epoch 2) and leader 0, following it, truncates that record; broker 1 is then disconnected and "
            "broker 0 leads again (epoch 3).  Broker 2 reconnects and gets leader 0 in epoch 3: same leader, "
            "epoch 0 -> 3.")
    c.create_topic(controller=3).catch_up()
    c.produce(0, acks=1).catch_up()
    c.produce(0, acks=1).fetch(2)
    c.check("brokers.2.logs.0.entries", [[1, 0], [2, 0]], "broker 2 holds offsets 0 and 1")
    c.expire(2).broker_change(3).deliver_all()                  # epoch 1, ISR [0, 1]
    c.expire(0).broker_change(3).deliver_all()                  # broker 1 leads, epoch 2
    c.reconnect(0).broker_change(3).deliver_all().catch_up([0])
    c.check("brokers.0.logs.0.entries", [[1, 0]], "broker 0, following broker 1, lost offset 1")
    c.expire(1).broker_change(3).deliver_all()                  # broker 0 leads again, epoch 3
    c.check("zk.partition_states.0.leader", 0, "broker 0 leads again")
    c.check("zk.partition_states.0.leader_epoch", 3, "in epoch 3")
    c.check("brokers.2.fetchers.0.leader", 0, "broker 2 still follows broker 0")
    c.check("brokers.2.fetchers.0.leader_epoch", 0, "in epoch 0")
    c.reconnect(2).broker_change(3).deliver_all(to=[2])
    c.check("brokers.2.fetchers.0.state", "truncating", "same leader, epoch 0 -> 3: the follower truncates first")
    c.ofle(2)
    c.check("brokers.2.logs.0.entries", [[1, 0]], "truncated to the leader's end offset 1")
    c.check("brokers.2.fetchers.0.fetch_offset", 1, "and fetches from there")
    c.check("brokers.2.fetchers.0.state", "fetching", "truncation is done")
    return c


def _two_replicas(name: str, description: str, leader: int, **config) -> Case:
    """Replicas [0, 1] with the given leader in epoch 0 and both in the ISR; broker 2 is the controller."""
    c = Case(name, description, n_brokers=3, replication_factor=2, **config)
    c.adapt("Kafka's test makes broker 0 leader or follower with a LeaderAndIsr it builds itself (replicas [0, 1], "
            "ISR [0, 1]); here the controller (broker 2) creates the partition with replicas [0, 1]"
            + (", and leadership moves to broker 1 the way the controller moves it (broker 0's session expires "
               "and it comes back as a follower)" if leader == 1 else "") + ".")
    c.create_topic(controller=2).catch_up()
    if leader == 1:
        c.expire(0).broker_change(2).deliver_all().reconnect(0).broker_change(2).deliver_all().catch_up()
    c.check("zk.partition_states.0.leader", leader, f"broker {leader} leads")
    return c


@case(R + "testReplicaSelector")
def replica_selector():
    c = _two_replicas(R + "testReplicaSelector",
                      "With Kafka's default configuration (no replica.selector.class) the leader names no preferred "
                      "read replica to a consumer in rack-a: it serves the read itself.",
                      leader=1, racks=("rack-b", "rack-a", "rack-c"))
    c.adapt("Kafka's test calls findPreferredReadReplica directly; here a consumer's Fetch v11 with ClientMetadata "
            "(rack-a) reaches the leader, and its response names the preferred read replica (None is -1).  "
            "Leader 1 is in rack-a and follower 0 in rack-b, as in Kafka's metadata cache.")
    c.produce(1, acks=-1).catch_up()
    c.consume_with_client_metadata(1, rack="rack-a")
    c.check_response("consumer_fetch", 1, "no preferred read replica (None)", error="NONE",
                     preferred_read_replica=-1)
    return c


@case(R + "testPreferredReplicaAsFollower")
def preferred_replica_as_follower():
    c = _two_replicas(R + "testPreferredReplicaAsFollower",
                      "A consumer with ClientMetadata fetches from follower 0: the fetch is answered (from a "
                      "follower) and only a leader computes a preferred read replica, so none is named.",
                      leader=1, racks=("rack-b", "rack-a", "rack-c"))
    c.consume_with_client_metadata(0, rack="rack-a")
    c.check_response("consumer_fetch", 0, "the fetch from the follower is answered", error="NONE")
    c.check_response("consumer_fetch", 0, "but only the leader computes a preferred replica",
                     preferred_read_replica=-1)
    return c


@case(R + "testPreferredReplicaAsLeader")
def preferred_replica_as_leader():
    c = _two_replicas(R + "testPreferredReplicaAsLeader",
                      "A consumer with ClientMetadata fetches from leader 0: the fetch is answered, and the preferred "
                      "read replica is the leader itself, which is never sent (None).", leader=0)
    c.consume_with_client_metadata(0, rack="rack-a")
    c.check_response("consumer_fetch", 0, "the fetch is answered", error="NONE")
    c.check_response("consumer_fetch", 0, "no preferred read replica (the leader is not sent)",
                     preferred_read_replica=-1)
    return c


@case(R + "testFetchFollowerNotAllowedForOlderClients")
def fetch_follower_not_allowed_for_older_clients():
    c = _two_replicas(R + "testFetchFollowerNotAllowedForOlderClients",
                      "A follower serves a consumer's fetch that carries ClientMetadata (v11+), and answers one "
                      "without it (an older client) with NOT_LEADER_FOR_PARTITION.", leader=1)
    c.adapt("Kafka's follower is in leader epoch 0 and the first fetch carries current leader epoch 0; here the "
            "move to broker 1 makes it epoch 1, and the fetch carries 1.")
    c.consume_with_client_metadata(0, current_leader_epoch=1)
    c.check_response("consumer_fetch", 0, "with ClientMetadata: NONE", error="NONE")
    c.consume(0)
    c.check_response("consumer_fetch", 0, "without ClientMetadata (older version): NOT_LEADER_FOR_PARTITION",
                     error="NOT_LEADER_FOR_PARTITION")
    return c


@case(R + "testFetchFromLeaderAlwaysAllowed")
def fetch_from_leader_always_allowed():
    c = _two_replicas(R + "testFetchFromLeaderAlwaysAllowed",
                      "The leader serves a consumer's fetch with ClientMetadata, with and without a current leader "
                      "epoch.", leader=0)
    c.adapt("Kafka's leader is in epoch 1 and the first fetch carries current leader epoch 1; here it is epoch 0, "
            "and the fetch carries 0.")
    c.consume_with_client_metadata(0, current_leader_epoch=0)
    c.check_response("consumer_fetch", 0, "with the current leader epoch: NONE", error="NONE")
    c.consume_with_client_metadata(0)
    c.check_response("consumer_fetch", 0, "without a current leader epoch: NONE", error="NONE")
    return c
out_of_scope(R + "testUnknownReplicaSelector", "configuration validation (an unknown replica.selector.class)")
out_of_scope(R + "testDefaultReplicaSelector", "configuration default (no replica selector)")


def _stop_replica_clears_purgatory(name: str, description: str, park, waiting: str, value: int, kind: str,
                                   **config) -> Case:
    """Leader 0 of replicas [0, 1] (controller 2) parks a request (``park``; ``waiting`` is its purgatory entry's field
    that holds ``value``); an admin reassigns the partition to [1]: the controller moves leadership to broker 1 (B3, its
    LeaderAndIsr goes to the targets only), then sends broker 0, which never hears it lost leadership, UpdateMetadata,
    StopReplica(delete = false) (B4) and StopReplica(delete = true) (B5), which completes the parked request with
    NOT_LEADER_FOR_PARTITION (its last ``kind`` response)."""
    c = Case(name, description, n_brokers=3, replication_factor=2, max_reassignments=1, **config)
    c.adapt("Kafka's test makes broker 0 leader (epoch 1) with a LeaderAndIsr it builds, mocks metadataCache.contains "
            "to true and calls stopReplica(deletePartition = true) directly.  Here the controller (broker 2) creates the "
            "partition on [0, 1] with leader 0 in epoch 0, and the StopReplica(delete) is the one a reassignment to [1] "
            "sends the removed leader (the comment of Kafka's test: \"as part of a reassignment, we may send StopReplica "
            "to the old leader\").  The UpdateMetadata that reaches broker 0 before it names leader 1, so its metadata "
            "cache holds the partition, as Kafka's mock says; the StopReplica(delete = false) of B4 comes first and "
            "leaves the request waiting (broker 0 still leads in its own view).")
    c.create_topic(controller=2)
    park(c)
    c.check(waiting, value, "the request waits in the purgatory (assertNull)")
    c.reassign("1").do(A.ControllerProcessPartitionReassignment(2))
    c.check("zk.partition_states.0.leader", 1, "the reassignment moved leadership to broker 1")
    c.deliver(2, 0, 3)
    c.check("brokers.0.partitions.0.leader", 0, "broker 0, not told of the move, still leads in its own view")
    c.check("brokers.0.metadata.partitions.0.leader", 1, "its metadata cache holds the partition (leader 1)")
    c.check(waiting, value, "still waiting before the StopReplica(delete)")
    c.check(f"ghost.responses.{kind}", [], "no response yet")
    c.deliver(2, 0)
    c.check("brokers.0.partitions.0", None, "StopReplica(delete = true) removed the partition")
    c.check(waiting.rsplit(".", 2)[0], [], "the waiting request was completed at once (assertNotNull)")
    return c.check_response(kind, 0, "with NOT_LEADER_FOR_PARTITION", error="NOT_LEADER_FOR_PARTITION")


@case(R + "testClearProducePurgatoryOnStopReplica")
def clear_produce_purgatory_on_stop_replica():
    c = _stop_replica_clears_purgatory(
        R + "testClearProducePurgatoryOnStopReplica",
        "An acks=-1 produce waits on leader 0; StopReplica(delete = true) for the partition, while the metadata cache "
        "still knows it, completes the waiting produce at once with NOT_LEADER_FOR_PARTITION.",
        lambda c: c.produce(0, acks=-1), "brokers.0.delayed_produces.0.required_offset", 1, "produce")
    return c.check("ghost.acked", [], "and not acknowledged")


def _fetch_in_purgatory_then_follow(name: str, description: str, new_client: bool) -> Case:
    """A consumer's fetch waits on leader 0 (epoch 0, empty log); broker 0 then becomes a follower of broker 1."""
    c = Case(name, description, n_brokers=2, replication_factor=2)
    c.adapt("Kafka's leader is in epoch 1 and becomes a follower in epoch 2 by two direct LeaderAndIsr requests; here "
            "the controller (broker 1) creates the partition with leader 0 in epoch 0, and moves leadership the way "
            "it does: broker 0's ZooKeeper session expires (it keeps running), the controller elects broker 1 "
            "(epoch 1), and when broker 0 registers again it gets LeaderAndIsr making it a follower of broker 1.")
    c.adapt("The fetch is the consumer's of Kafka's sendConsumerFetch: offset 0, fetch.min.bytes 1 (one record here), "
            "a 10 ms timeout" + (", ClientMetadata and the current leader epoch (0 here)." if new_client else
                                 ", no ClientMetadata and no current leader epoch."))
    c.create_topic(controller=1)
    c.check("brokers.0.partitions.0.leader", 0, "broker 0 leads")
    c.consume_wait(0, fetch_offset=0, max_wait_ms=10, current_leader_epoch=0 if new_client else -1,
                   client_metadata=new_client)
    c.check("brokers.0.delayed_fetches.0.fetch_offset", 0, "the fetch waits in the purgatory (assertNull)")
    c.check("ghost.responses.consumer_fetch", [], "no response yet")
    c.expire(0).broker_change(1).deliver_all(to=[1])
    c.check("zk.partition_states.0.leader", 1, "broker 1 leads")
    c.reconnect(0).broker_change(1).deliver_all(to=[0])
    c.check("brokers.0.partitions.0.leader", 1, "broker 0 follows broker 1")
    c.check("brokers.0.partitions.0.leader_epoch", 1, "in epoch 1")
    c.check("brokers.0.delayed_fetches", [], "makeFollowers completed the waiting fetch at once (assertNotNull)")
    return c


@case(R + "testBecomeFollowerWhileOldClientFetchInPurgatory")
def become_follower_old_client_fetch():
    c = _fetch_in_purgatory_then_follow(
        R + "testBecomeFollowerWhileOldClientFetchInPurgatory",
        "A consumer's fetch without ClientMetadata or leader epoch waits on leader 0; when broker 0 becomes a "
        "follower, makeFollowers completes it at once with NOT_LEADER_FOR_PARTITION.", new_client=False)
    c.check_response("consumer_fetch", 0, "the fetch answers NOT_LEADER_FOR_PARTITION",
                     error="NOT_LEADER_FOR_PARTITION")
    return c


@case(R + "testBecomeFollowerWhileNewClientFetchInPurgatory")
def become_follower_new_client_fetch():
    c = _fetch_in_purgatory_then_follow(
        R + "testBecomeFollowerWhileNewClientFetchInPurgatory",
        "A consumer's fetch with ClientMetadata (any replica may serve it) and the current leader epoch waits on "
        "leader 0; when broker 0 becomes a follower in a newer epoch, makeFollowers completes it at once with "
        "FENCED_LEADER_EPOCH.", new_client=True)
    c.check_response("consumer_fetch", 0, "the fetch answers FENCED_LEADER_EPOCH", error="FENCED_LEADER_EPOCH")
    return c


@case(R + "testClearFetchPurgatoryOnStopReplica")
def clear_fetch_purgatory_on_stop_replica():
    return _stop_replica_clears_purgatory(
        R + "testClearFetchPurgatoryOnStopReplica",
        "A consumer's fetch (offset 0, current leader epoch, 10 ms timeout, fetch.min.bytes 1) waits on leader 0 with "
        "an empty log; StopReplica(delete = true) for the partition, while the metadata cache still knows it, "
        "completes the parked fetch at once with NOT_LEADER_FOR_PARTITION.",
        lambda c: c.consume_wait(0, fetch_offset=0, max_wait_ms=10, current_leader_epoch=0),
        "brokers.0.delayed_fetches.0.fetch_offset", 0, "consumer_fetch", delayed_fetch=True)


out_of_scope(R + "testOldLeaderLosesMetricsWhenReassignPartitions", "metrics only")
out_of_scope(R + "testOldFollowerLosesMetricsWhenReassignPartitions", "metrics only")
