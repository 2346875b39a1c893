"""PartitionTest (Kafka 3.7.0): the leader's Partition in KRaft: AlterPartition, fencing, min ISR, epochs.

Kafka's unit test builds a Partition with a mocked metadata cache and a mocked AlterPartitionManager, calls
makeLeader with any ISR and epochs, and completes or fails each ISR update by hand.  Here the partition is the
model's leader in the formed KRaft cluster: a follower leaves the ISR because the controller fences it (its
heartbeats are lost) or because the leader's ISR-expiration task shrinks it, the metadata cache learns of fencing and
controlled shutdown by replaying the metadata log, and every ISR update is answered by the quorum controller, whose
errors come from real situations (INVALID_UPDATE_VERSION: the controller changed the partition meanwhile;
INELIGIBLE_REPLICA: the controller fenced the new member, or it is shutting down, before the leader heard of it).

Kafka's numbers map onto the model's: the leader is broker 0 (Kafka's ``brokerId``), followers are 1, 2, ...; the
leader epoch 5 and partition epoch 1 of Kafka's makeLeader are the formed cluster's 0 and whatever the controller has
reached; ``seedLogData`` is records produced to the leader with acks=1.
"""

from __future__ import annotations

from isrlab.model import actions as A
from kraftcase import Case, case, missing, out_of_scope, pending

P = "PartitionTest."
T0 = 1_000_000  # the model's clock at the start (ModelConfig.start_time_ms)
LAG = 30_000    # replica.lag.time.max.ms in the KRaft presets (Kafka's default)


def _follower_outside_isr(c: Case, follower: int, records: int, more: int = 0) -> Case:
    """The formed cluster; ``records`` produced and fetched by every follower; then ``follower`` fenced (the
    controller removes it from the ISR, keeping the leader epoch), the leader appends ``more`` records while it knows
    the follower fenced, and the follower is unfenced again (its next heartbeat): a follower outside the ISR, behind by
    ``more``, that the leader's metadata cache holds eligible."""
    c.formed().produce(0, n=records).catch_up()
    c.fence(follower).replay()
    c.produce(0, n=more)
    return c.unfence(follower).replay(0)


# --------------------------------------------------------------------------- ISR expansion
@case(P + "testIsrExpansion")
def isr_expansion():
    c = Case(P + "testIsrExpansion",
             "The leader (ISR = itself, log end 10) sees its follower fetch at 3: no expansion; at 10 it proposes the "
             "follower to the controller (AlterPartition): the committed ISR stays, the maximal ISR has the follower; "
             "once the controller answers, the ISR has both.",
             n_brokers=2, replication_factor=2)
    c.adapt("Kafka's makeLeader gives ISR {0} with replicas [0, 1]; here the formed cluster's follower 1 fetches 3 "
            "records, is fenced (the controller removes it from the ISR, same leader epoch) while the leader appends 7 "
            "more, and is unfenced again, so it is outside the ISR at 3 of 10.")
    c.adapt("completeIsrUpdate(2) is the quorum controller's answer to the leader's AlterPartition (partition epoch 2: "
            "the fence made 1, this expansion 2).")
    c.unchecked("the follower's state right after makeLeader (last caught-up time 0, offsets unknown): here it fetched "
                "before leaving the ISR")
    c.unchecked("the request's broker epochs (-1: Kafka's test runs with a ZooKeeper metadata cache); KRaft's are "
                "checked in testIsrCanExpandedIfBrokerEpochsMatchWithKraftMetadataCache")
    _follower_outside_isr(c, 1, records=3, more=7)
    c.check("brokers.0.logs.0.entries", [[i, 0] for i in range(1, 11)], "the leader's log holds 10 records")
    c.fetch(1)
    c.check_leader_state(0, "a fetch at 3 of 10 does not expand the ISR", isr=[0], pending_isr=None)
    c.check_remote(0, 1, "the follower's state after its fetch at 3: offsets updated; a fetch short of the log end does "
                   "not make it caught up now, its last caught-up time stays that of its fetches before the fence, "
                   "T0 (Kafka's 0: never)",
                   log_end_offset=3, log_start_offset=0, last_caught_up_time_ms=T0)
    c.fetch(1)
    c.check_update(0, [0, 1], "one ISR update, proposing ISR [0, 1]")
    c.check_leader_state(0, "committed ISR {0}; maximal ISR {0, 1} (a pending expansion of 1)", isr=[0],
                         pending_isr=pending(True, [1]))
    c.check_remote(0, 1, "the follower caught up at 10 now", log_end_offset=10, log_start_offset=0,
                   last_caught_up_time_ms=T0)
    c.alter(0)
    c.check_leader_state(0, "the expansion completes: ISR {0, 1}", isr=[0, 1], pending_isr=None, partition_epoch=2)
    c.check("ghost.isr_expands", 1, "alterPartitionListener.expands = 1")
    c.check("ghost.isr_shrinks", 0, "alterPartitionListener.shrinks = 0 (the fence was the controller's change)")
    return c


def _expansion_answered_invalid_update_version(name: str, description: str) -> Case:
    """Follower 1 outside the ISR at the leader's log end (10); 2 in the ISR.  1's fetch makes the leader propose it;
    before the request reaches the controller, the controller fences 2 (partition epoch 1 -> 2), so the leader's
    request, still at partition epoch 1, is answered INVALID_UPDATE_VERSION."""
    c = Case(name, description, n_brokers=3, replication_factor=3)
    c.adapt("Kafka's replicas are [0, 1] with ISR {0}; here a third replica, broker 2, stays in the ISR, so the ISR "
            "is {0, 2} and the maximal ISR {0, 1, 2}: the controller's fence of broker 2, between the leader's "
            "proposal and its AlterPartition, is what makes the proposal stale.")
    c.adapt("failIsrUpdate(INVALID_UPDATE_VERSION) is the controller's own answer: the request's partition epoch (1) "
            "is older than the controller's (2).")
    c.adapt("The follower fetched the 10 records before it was fenced out of the ISR, so its first fetch after is at "
            "the leader's log end offset, as in Kafka's test.")
    _follower_outside_isr(c, 1, records=10)
    c.check_registration("ISR {0, 2}, partition epoch 1 (follower 1 fenced out)", isr=[0, 2], partition_epoch=1)
    c.check("brokers.0.logs.0.high_watermark", 10, "the leader's HW is 10")
    c.fetch(1)
    c.check_leader_state(0, "follower state updated, the ISR not expanded: committed ISR without 1, maximal with it",
                         isr=[0, 2], pending_isr=pending(True, [1]))
    c.check_update(0, [0, 1, 2], "one ISR update")
    c.check_remote(0, 1, "the follower caught up at 10", log_end_offset=10, log_start_offset=0,
                   last_caught_up_time_ms=T0)
    c.fence(2)
    c.send_alter(0)
    c.check_alter_response(0, "the controller's partition epoch moved: INVALID_UPDATE_VERSION",
                           error="INVALID_UPDATE_VERSION")
    c.receive_alter(0)
    return c


@case(P + "testIsrNotExpandedIfUpdateFails")
def isr_not_expanded_if_update_fails():
    c = _expansion_answered_invalid_update_version(
        P + "testIsrNotExpandedIfUpdateFails",
        "A caught-up follower is proposed for the ISR; the controller answers INVALID_UPDATE_VERSION: the ISR does not "
        "change, the partition stays pending (maximal ISR with the follower) and the leader does not retry.")
    c.check_leader_state(0, "still no ISR change; the maximal ISR keeps the follower", isr=[0, 2],
                         pending_isr=pending(True, [1]))
    c.check_no_update(0, "it does not retry: no ISR update left")
    c.check("ghost.isr_expands", 0, "alterPartitionListener.expands = 0")
    c.check("ghost.isr_shrinks", 0, "alterPartitionListener.shrinks = 0")
    c.unchecked("alterPartitionListener.failures = 1 (the model counts no failed updates)")
    return c


@case(P + "testAlterIsrInvalidVersion")
def alter_isr_invalid_version():
    c = _expansion_answered_invalid_update_version(
        P + "testAlterIsrInvalidVersion",
        "handleAlterIsrFailure(INVALID_UPDATE_VERSION): the leader's proposal to add a caught-up follower fails with "
        "INVALID_UPDATE_VERSION; the ISR stays, the maximal ISR keeps the follower, and no update is left to retry.")
    c.check_leader_state(0, "ISR unchanged", isr=[0, 2])
    c.check_leader_state(0, "maximal ISR {0, 1} (here {0, 1, 2}): still pending", pending_isr=pending(True, [1]))
    c.check_no_update(0, "alterPartitionManager.isrUpdates.size = 0: not retried")
    return c


@case(P + "testAlterIsrUnknownTopic")
def alter_isr_unknown_topic():
    c = Case(P + "testAlterIsrUnknownTopic",
             "handleAlterIsrFailure(UNKNOWN_TOPIC_OR_PARTITION): the leader's proposal to add a caught-up follower "
             "reaches a controller that no longer knows the topic; the ISR stays, the maximal ISR keeps the follower, "
             "and no update is left to retry.",
             n_brokers=2, replication_factor=2, max_topic_deletions=1)
    c.adapt("Kafka fails the update by hand; here the controller's own answer: an admin deletes the topic "
            "(DeleteTopics, a RemoveTopicRecord) between the leader's proposal and its AlterPartition, which the "
            "controller then answers for a topic it does not have.")
    c.adapt("Kafka's ISR {0} with replicas [0, 1]: here follower 1 fetches the 10 records, is fenced out of the ISR "
            "and unfenced again, so its next fetch is at the leader's log end.")
    c.unchecked("the error code itself: 3.7.0's controller answers an unknown topic UNKNOWN_TOPIC_ID to the "
                "AlterPartition versions that carry topic ids (v2+, which 3.7.0 brokers send), "
                "UNKNOWN_TOPIC_OR_PARTITION only to v0-v1; handleAlterPartitionError gives up on both alike (its "
                "UNKNOWN_TOPIC_ID and UNKNOWN_TOPIC_OR_PARTITION arms: no retry, the partition stays pending)")
    c.unchecked("the follower's state right after makeLeader (last caught-up time 0, offsets unknown): here it fetched "
                "before leaving the ISR")
    _follower_outside_isr(c, 1, records=10)
    c.check("brokers.0.logs.0.high_watermark", 10, "the leader's HW is 10")
    c.fetch(1)
    c.check_leader_state(0, "follower state updated, the ISR not expanded: ISR {0}, maximal ISR {0, 1}", isr=[0],
                         pending_isr=pending(True, [1]))
    c.check_update(0, [0, 1], "alterPartitionManager.isrUpdates.size = 1")
    c.check_remote(0, 1, "the follower caught up at 10 at this fetch's time", log_end_offset=10, log_start_offset=0,
                   last_caught_up_time_ms=c.s.now)
    c.do(A.DeleteTopic())
    c.send_alter(0)
    c.check_alter_response(0, "the controller does not know the topic", error="UNKNOWN_TOPIC_ID")
    c.receive_alter(0)
    c.check_leader_state(0, "partitionState.isr = {0}", isr=[0])
    c.check_leader_state(0, "partitionState.maximalIsr = {0, 1}: still pending", pending_isr=pending(True, [1]))
    c.check_no_update(0, "alterPartitionManager.isrUpdates.size = 0: not retried")
    return c


@case(P + "testIsrNotExpandedIfReplicaIsFencedOrShutdown")
def isr_not_expanded_if_fenced():
    c = Case(P + "testIsrNotExpandedIfReplicaIsFencedOrShutdown",
             "KIP-841 (kraft): the leader proposes a caught-up follower the controller has just fenced; the controller "
             "answers INELIGIBLE_REPLICA and the leader reverts to its committed ISR.  Once the leader's metadata "
             "cache holds the follower fenced, its fetches propose nothing; once it is unfenced, the next fetch "
             "proposes it and the expansion commits.",
             n_brokers=2, replication_factor=2)
    c.adapt("Kafka marks the follower fenced and unfenced in a mocked metadata cache; here the controller fences it "
            "(heartbeats lost) and unfences it (its next heartbeat), and the leader learns of each by replaying the "
            "metadata log.  The INELIGIBLE_REPLICA answer is the controller's own: the follower is fenced there but "
            "not yet in the leader's cache.")
    c.adapt("The follower reaches the situation (outside the ISR, at the leader's log end) by being fenced and unfenced "
            "once before the test's story starts.")
    c.unchecked("the zk parameter (ZooKeeper mode marks the broker offline in the ZkMetadataCache): the KRaft model only")
    _follower_outside_isr(c, 1, records=10)
    c.check_leader_state(0, "ISR and maximal ISR {0}", isr=[0], pending_isr=None)
    c.fetch(1)
    c.check_remote(0, 1, "the follower caught up to the log end", log_end_offset=10, log_start_offset=0,
                   last_caught_up_time_ms=T0)
    c.check_leader_state(0, "expansion triggered: ISR {0}, maximal {0, 1}", isr=[0], pending_isr=pending(True, [1]))
    c.check_update(0, [0, 1], "one ISR update")
    c.fence(1)
    c.send_alter(0)
    c.check_alter_response(0, "the controller rejects the fenced replica", error="INELIGIBLE_REPLICA")
    c.receive_alter(0)
    c.check_leader_state(0, "the leader reverts to the previous ISR; nothing in flight", isr=[0], pending_isr=None)
    c.check_no_update(0, "no ISR update left")
    c.replay(0)
    c.check("brokers.0.metadata.fenced", [1], "the leader eventually learns that the follower is fenced")
    c.fetch(1)
    c.check_leader_state(0, "no expansion: the follower is fenced", isr=[0], pending_isr=None)
    c.check_no_update(0, "no ISR update")
    c.unfence(1).replay(0)
    c.check("brokers.0.metadata.fenced", [], "the follower is unfenced, and the leader knows it")
    c.fetch(1)
    c.check_leader_state(0, "expansion triggered again", isr=[0], pending_isr=pending(True, [1]))
    c.check_update(0, [0, 1], "one ISR update")
    c.alter(0)
    c.check_leader_state(0, "ISR committed: {0, 1}, nothing in flight", isr=[0, 1], pending_isr=None)
    c.check_no_update(0, "no ISR update left")
    return c


@case(P + "testIsrNotExpandedIfReplicaIsInControlledShutdown")
def isr_not_expanded_if_in_controlled_shutdown():
    c = Case(P + "testIsrNotExpandedIfReplicaIsInControlledShutdown",
             "KIP-841: the leader proposes a caught-up follower that has just begun a controlled shutdown; the "
             "controller answers INELIGIBLE_REPLICA and the leader reverts.  Once its metadata cache holds the "
             "follower shutting down, fetches propose nothing; when the broker comes back, the expansion commits.",
             n_brokers=3, replication_factor=3, n_partitions=2)
    c.adapt("A broker that leads nothing shuts down at once (its first heartbeat asking to shut down is answered "
            "SHUTDOWN_NOW); to stay in controlled shutdown the follower, broker 1, leads partition 1 (replicas "
            "[1, 2, 0]).  The test's partition is partition 0 (replicas [0, 1, 2], leader 0); broker 2 is a third "
            "replica that stays in its ISR.")
    c.adapt("Follower 1 leaves partition 0's ISR by lagging: it stops fetching partition 0 while the leader appends a "
            "record, and the leader's ISR-expiration task shrinks the ISR once the lag has passed.")
    c.adapt("'The broker eventually comes back' is the end of the controlled shutdown: the broker stops cleanly once "
            "the controller grants it, restarts, registers (a new broker epoch) and is unfenced.")
    c.formed()
    c.produce(0, n=1, p=0)
    c.catch_up([2], p=0)
    c.sleep(45_000, fetching=[(2, 0), (0, 1), (2, 1)])       # the ISR-expiration task runs every 15 s
    c.check_update(0, [0, 2], "the lagging follower 1 is proposed out of partition 0's ISR")
    c.alter(0).replay()
    c.check_registration("partition 0's ISR is {0, 2}", p=0, isr=[0, 2], leader=0)
    c.check_registration("broker 1 still leads partition 1", p=1, leader=1)
    c.catch_up([1], p=0)
    c.check_remote(0, 1, "the follower caught up to the log end", log_end_offset=1, log_start_offset=0)
    c.check_leader_state(0, "expansion triggered: maximal ISR {0, 1, 2}", isr=[0, 2],
                         pending_isr=pending(True, [1]))
    c.check_update(0, [0, 1, 2], "one ISR update")
    c.controlled_shutdown(1).wait_heartbeat(1)
    c.check("quorum.registrations.1.in_controlled_shutdown", True, "broker 1 is in controlled shutdown")
    c.send_alter(0)
    c.check_alter_response(0, "the controller rejects the expansion: the broker is in controlled shutdown",
                           error="INELIGIBLE_REPLICA")
    c.receive_alter(0)
    c.check_leader_state(0, "the leader reverts to the previous ISR", isr=[0, 2], pending_isr=None)
    c.check_no_update(0, "no ISR update left")
    c.replay(0)
    c.check("brokers.0.metadata.shutting_down", [1], "the leader learns that the broker is in controlled shutdown")
    c.fetch(1, p=0)
    c.check_leader_state(0, "no expansion: the follower is shutting down", isr=[0, 2], pending_isr=None)
    c.check_no_update(0, "no ISR update")
    # the controlled shutdown ends: every active broker reports the records that moved broker 1's leadership
    c.replay(0, 2).wait_heartbeat(0).heartbeat(2)
    c.wait_heartbeat(1)
    c.check("brokers.1.alive", False, "broker 1 shut down once the controller allowed it")
    c.restart(1).unfence(1).replay(0)
    c.check("brokers.0.metadata.shutting_down", [], "the broker came back: no longer shutting down")
    c.catch_up([1], p=0)
    c.check_leader_state(0, "expansion triggered", isr=[0, 2], pending_isr=pending(True, [1]))
    c.check_update(0, [0, 1, 2], "one ISR update")
    c.alter(0)
    c.check_leader_state(0, "the ISR is committed with the follower", isr=[0, 1, 2], pending_isr=None)
    c.check_no_update(0, "no ISR update left")
    return c


@case(P + "testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch")
def follower_joins_isr_only_within_current_epoch():
    c = Case(P + "testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch",
             "KAFKA-7128: after the leader leads again in a new leader epoch (its epoch start offset is its log end, "
             "5), a follower outside the ISR that has reached the HW but not the epoch start offset is not proposed "
             "for the ISR; once it fetches past the epoch start offset, the leader proposes it (AlterPartition).",
             n_brokers=3, replication_factor=3, min_insync_replicas=2)
    c.adapt("Kafka's leader becomes follower of broker 2 and leader again (epochs 8, 9, 10) with ISR {0, 2} "
            "throughout; here the controller fences broker 2 and then the leader, the last ISR member (leader none, "
            "epoch 1), and unfences it (leader again, epoch 2, ISR {0}).  Going through 'no leader' keeps the "
            "leader's log as it was (as Kafka's makeFollower, which truncates nothing); a follower of broker 2 would "
            "have truncated to broker 2's log.")
    c.adapt("min.insync.replicas = 2 keeps the HW where follower 2 left it (2) while the ISR is {0} (KAFKA-15583), so "
            "the HW stays below the epoch start offset, as in Kafka's test (HW 1, epoch start 5).")
    c.adapt("Follower 1 fetched the first 2 records before it was fenced out of the ISR, so after it is unfenced it "
            "fetches at 2 (at the HW, below the epoch start offset: Kafka's fetches at 0 and at 1) and then at 7, the "
            "log end (past the epoch start offset: Kafka's fetch at 5).")
    c.formed().produce(0, n=2).fetch(1, rounds=2).fetch(2, rounds=2)
    c.fence(1).replay()
    c.produce(0, n=3)
    c.check("brokers.0.logs.0.high_watermark", 2, "the follower in the ISR moved the HW to the end of the first "
                                                  "batch, below the log end (5)")
    c.fence(2, 0).replay()
    c.check_registration("no leader, ISR {0}", isr=[0], leader=-1, leader_epoch=1)
    c.unfence(0).replay()
    c.check_leader_state(0, "leader again, in a new leader epoch", isr=[0], leader_epoch=2)
    c.check("brokers.0.partitions.0.leader_epoch_start_offset", 5, "the current epoch starts at the log end, 5")
    c.produce(0, n=2)
    c.unfence(1).replay(0, 1)
    c.fetch(1)
    c.check_remote(0, 1, "the follower fetched at 2: at the HW, below the epoch start offset", log_end_offset=2)
    c.check_leader_state(0, "the follower is not added to the ISR", isr=[0], pending_isr=None)
    c.check_no_update(0, "no ISR update")
    c.fetch(1)
    c.check_remote(0, 1, "the follower fetched at the log end, past the epoch start offset", log_end_offset=7)
    c.check_leader_state(0, "expansion does not change the ISR; the maximal ISR has the follower", isr=[0],
                         pending_isr=pending(True, [1]))
    c.check_update(0, [0, 1], "the AlterPartition item proposes the ISR with the follower")
    return c


@case(P + "testSingleInFlightAlterIsr")
def single_in_flight_alter_isr():
    c = Case(P + "testSingleInFlightAlterIsr",
             "With an expansion in flight, the ISR-expiration task proposes nothing even once the other followers "
             "have lagged: one AlterPartition item per partition at a time.",
             n_brokers=4, replication_factor=4)
    c.adapt("Kafka's ISR {0, 1, 2} with follower 3 outside: here follower 3 fetches the 10 records, is fenced out of "
            "the ISR and unfenced again; followers 1 and 2 never fetch.")
    c.formed().produce(0, n=10).fetch(3, rounds=2)
    c.fence(3).replay().unfence(3).replay(0)
    c.check("brokers.0.logs.0.high_watermark", 0, "HW 0: followers 1 and 2 have not fetched")
    c.fetch(3)
    c.check_leader_state(0, "committed ISR {0, 1, 2}, maximal ISR {0, 1, 2, 3}", isr=[0, 1, 2],
                         pending_isr=pending(True, [3]))
    c.check_update(0, [0, 1, 2, 3], "one AlterPartition item in flight")
    c.sleep(LAG + 15_000)
    c.check_update(0, [0, 1, 2, 3], "after the lag has passed, ISR expiration adds nothing: still the one item")
    c.check_leader_state(0, "still the pending expansion", pending_isr=pending(True, [3]))
    return c


# --------------------------------------------------------------------------- ISR shrink
@case(P + "testMaybeShrinkIsr")
def maybe_shrink_isr():
    c = Case(P + "testMaybeShrinkIsr",
             "Follower 1 fetches to the log end, follower 2 never fetches.  Right after makeLeader nobody is out of "
             "sync; once the lag has passed the leader proposes ISR {0, 1} without changing its own ISR or HW, and "
             "when the controller commits it the ISR shrinks and the HW reaches the log end.",
             n_brokers=3, replication_factor=3)
    c.adapt("maybeShrinkIsr is the ISR-expiration task: at the start (due at once) and at its first run after the lag "
            "has passed (every lag / 2 = 15 s: at 45 s).  Follower 1 reaches the log end in two fetches (at 0, then "
            "at 10).")
    c.adapt("completeIsrUpdate(newPartitionEpoch = 2) is the controller's commit: partition epoch 1 here.")
    c.formed().produce(0, n=10)
    c.check("brokers.0.logs.0.high_watermark", 0, "HW 0")
    c.fetch(1, rounds=2)
    c.check_remote(0, 2, "follower 2 has not fetched: last caught up at makeLeader, offsets unknown",
                   last_caught_up_time_ms=T0, log_end_offset=-1, log_start_offset=-1)
    c.isr_expiration(0)
    c.check_no_update(0, "on initialization the replica is considered caught up: no shrink")
    c.check_leader_state(0, "ISR {0, 1, 2}", isr=[0, 1, 2])
    c.sleep(45_000)
    c.check("ghost.isr_shrinks", 0, "alterPartitionListener.shrinks = 0")
    c.check_update(0, [0, 1], "one ISR update: ISR [0, 1]")
    c.check("brokers.0.alter_isr_unsent.0.request.isr_epochs", [c.s.quorum.registrations[b].epoch for b in (0, 1)],
            "each member's broker epoch in the request is the one it registered (KIP-903)")
    c.check_leader_state(0, "ISR and maximal ISR unchanged until the controller answers", isr=[0, 1, 2],
                         pending_isr=pending(False, [2]))
    c.check("brokers.0.logs.0.high_watermark", 0, "HW still 0")
    c.alter(0)
    c.check("ghost.isr_shrinks", 1, "alterPartitionListener.shrinks = 1")
    c.check_leader_state(0, "ISR {0, 1}, partition epoch moved, nothing in flight", isr=[0, 1], pending_isr=None,
                         partition_epoch=1)
    c.check_no_update(0, "no ISR update left")
    c.check("brokers.0.logs.0.high_watermark", 10, "the HW advances to the log end")
    return c


@case(P + "testIsrNotShrunkIfUpdateFails")
def isr_not_shrunk_if_update_fails():
    c = Case(P + "testIsrNotShrunkIfUpdateFails",
             "The leader proposes removing a lagging follower; the controller answers INVALID_UPDATE_VERSION: the "
             "partition stays PendingShrinkIsr with the ISR unchanged, the update is not retried, the HW stays.",
             n_brokers=3, replication_factor=3)
    c.adapt("Kafka's replicas [0, 1] shrink to {0}; here both followers never fetch and the leader proposes {0}; the "
            "controller's fence of broker 2 before the request arrives moves the partition epoch, so the request is "
            "answered INVALID_UPDATE_VERSION.  The shrink is proposed at the ISR-expiration task's first run after "
            "the lag (45 s).")
    c.formed().produce(0, n=10)
    c.sleep(45_000)
    c.check_leader_state(0, "ISR unchanged while the shrink is proposed", isr=[0, 1, 2])
    c.check_update(0, [0], "one ISR update")
    c.check("brokers.0.logs.0.high_watermark", 0, "HW 0")
    c.fence(2)
    c.send_alter(0)
    c.check_alter_response(0, "the controller's partition epoch moved", error="INVALID_UPDATE_VERSION")
    c.receive_alter(0)
    c.check_leader_state(0, "still PendingShrinkIsr, ISR unchanged", isr=[0, 1, 2],
                         pending_isr=pending(False, [1, 2]))
    c.check_no_update(0, "no ISR update left")
    c.check("brokers.0.logs.0.high_watermark", 0, "HW 0")
    return c


@case(P + "testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp")
def not_shrink_if_previous_fetch_caught_up():
    c = Case(P + "testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp",
             "A follower that fetched up to the leader's log end as of its previous fetch counts as caught up at that "
             "fetch's time (Replica.updateFetchState's lastFetchLeaderLogEndOffset), so the ISR is not shrunk.",
             n_brokers=2, replication_factor=2)
    c.adapt("Kafka's follower fetches at 5 (5 s after makeLeader) while the leader has 10 records; here it first "
            "fetches 5 records at makeLeader's time (fetch offset 0), then the leader appends 5 more.")
    c.adapt("maybeShrinkIsr is the ISR-expiration task at its next run (15 s after the start, 4 s after the last "
            "fetch); the lag (30 s) has not passed since the caught-up time either way.")
    c.formed().produce(0, n=5).fetch(1).produce(0, n=5)
    c.sleep(5_000, run_at_end=False)
    c.fetch(1)
    c.check_remote(0, 1, "fetch at 5 with the leader at 10: caught up as of makeLeader", last_caught_up_time_ms=T0,
                   log_start_offset=0, log_end_offset=5)
    c.check("brokers.0.logs.0.high_watermark", 5, "HW 5")
    c.sleep(5_001, run_at_end=False).produce(0, n=5)
    c.fetch(1)
    c.check_remote(0, 1, "fetch at 10 (the leader's end at the previous fetch): caught up as of the first fetch",
                   last_caught_up_time_ms=T0 + 5_000, log_start_offset=0, log_end_offset=10)
    c.check("brokers.0.logs.0.high_watermark", 10, "HW 10")
    c.sleep(15_000 - 10_001)
    c.check_leader_state(0, "not shrunk", isr=[0, 1], pending_isr=None)
    c.check_no_update(0, "no ISR update")
    return c


@case(P + "testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd")
def not_shrink_if_caught_up_to_log_end():
    c = Case(P + "testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd",
             "A follower at the leader's log end is never out of sync, however long it has not fetched.",
             n_brokers=2, replication_factor=2)
    c.adapt("The follower reaches the log end in two fetches (at 0, then at 10); maybeShrinkIsr after 30001 ms is "
            "the ISR-expiration task's first run after that (45 s).")
    c.formed().produce(0, n=10).fetch(1, rounds=2)
    c.check_remote(0, 1, "caught up to the log end now", last_caught_up_time_ms=T0, log_start_offset=0,
                   log_end_offset=10)
    c.check("brokers.0.logs.0.high_watermark", 10, "HW 10")
    c.sleep(45_000)
    c.check_leader_state(0, "not shrunk", isr=[0, 1], pending_isr=None)
    c.check_no_update(0, "no ISR update")
    return c


@case(P + "testAlterIsrLeaderAndIsrRace")
def alter_isr_leader_and_isr_race():
    c = Case(P + "testAlterIsrLeaderAndIsrRace",
             "A shrink is in flight when new metadata for the partition arrives (same leader epoch, newer partition "
             "epoch): the partition commits the new state and is no longer pending, but its next shrink is not "
             "submitted while the old AlterPartition item is still unanswered; once it is answered, it is.",
             n_brokers=3, replication_factor=3)
    c.adapt("Kafka calls makeLeader again with the same ISR and partition epoch 2; here the new metadata is the "
            "controller's fence of broker 2 (same leader epoch, ISR {0, 1}, partition epoch 1), which the leader "
            "replays while its proposal {0} is unsent.")
    c.adapt("completeIsrUpdate(10) is the controller's answer to the old request, which is stale by then "
            "(INVALID_UPDATE_VERSION); either answer ends the item.  Each maybeShrinkIsr is the ISR-expiration task's "
            "next run after the lag has passed.")
    c.formed().produce(0, n=10)
    c.check("brokers.0.logs.0.high_watermark", 0, "HW 0")
    c.sleep(45_000)
    c.check_leader_state(0, "the shrink is in flight", pending_isr=pending(False, [1, 2]))
    c.fence(2).replay(0)
    c.check_leader_state(0, "new metadata, same leader epoch: the ISR is committed, not in flight", isr=[0, 1],
                         pending_isr=None, leader_epoch=0, partition_epoch=1)
    c.check("brokers.0.logs.0.high_watermark", 0, "HW 0")
    c.sleep(LAG)
    c.check_leader_state(0, "the shrink is not submitted while the old item is unanswered", pending_isr=None)
    c.alter(0)
    c.check_no_update(0, "the old item is answered and gone")
    c.sleep(15_000)
    c.check_leader_state(0, "now the next ISR-expiration run submits the shrink", pending_isr=pending(False, [1]))
    return c


# --------------------------------------------------------------------------- min ISR and the HW
@case(P + "testIsUnderMinIsr")
def is_under_min_isr():
    c = Case(P + "testIsUnderMinIsr",
             "min.insync.replicas = 2, replicas [0, 1]: with ISR {0, 1} the partition is not under min ISR; once the "
             "ISR is {0} it is.",
             n_brokers=2, replication_factor=2, min_insync_replicas=2)
    c.adapt("isUnderMinIsr is observed through the rule that reads it: appendRecordsToLeader with acks = -1 refuses "
            "with NOT_ENOUGH_REPLICAS when the ISR is smaller than the effective min ISR (3.7.0), and accepts "
            "otherwise (answered once the follower has fetched).")
    c.adapt("Kafka's second makeLeader (leader epoch 1, ISR {0}) is the controller's fence of follower 1 here (ISR "
            "{0}, leader epoch 0: KAFKA-15021).")
    c.adapt("isUnderMinIsr itself is read as the metric path metrics.0.0.under_min_isr (model/metrics.py).")
    c.formed().produce(0, acks=-1)
    c.fetch(1, rounds=2)
    c.check("metrics.0.0.under_min_isr", False, "ISR {0, 1}, min ISR 2: not under min ISR")
    c.check("ghost.responses.produce.0.0.error", "NONE", "ISR {0, 1}: not under min ISR, the produce is accepted")
    c.fence(1).replay(0)
    c.check_leader_state(0, "the leader's ISR is {0}", isr=[0])
    c.check("metrics.0.0.under_min_isr", True, "ISR {0}, min ISR 2: under min ISR")
    c.produce(0, acks=-1)
    c.check("ghost.responses.produce.0.0.error", "NOT_ENOUGH_REPLICAS", "ISR {0}: under min ISR")
    return c


@case(P + "testAtMinIsr")
def at_min_isr():
    c = Case(P + "testAtMinIsr",
             "Partition.isAtMinIsr, the AtMinIsr gauge: false before the broker leads the partition; true once it "
             "leads with the ISR {leader} only, at the default min.insync.replicas of 1.", n_brokers=3,
             replication_factor=3)
    c.adapt("isAtMinIsr is read as the metric path metrics.0.0.at_min_isr (model/metrics.py: the leader's committed "
            "ISR size equals the effective min ISR; false on a broker that does not lead).  Before the formed "
            "cluster's log is replayed broker 0 leads nothing, as Kafka's Partition before makeLeader.")
    c.adapt("Kafka's makeLeader with ISR [leader] (leader epoch 8) is the controller's fence of both followers here "
            "(ISR {0}, leader epoch 0: KAFKA-15021), replayed by the leader.")
    c.check("metrics.0.0.at_min_isr", False, "before makeLeader: not at min ISR")
    c.formed().fence(1, 2).replay(0)
    c.check_leader_state(0, "the leader's ISR is {0}", isr=[0])
    c.check("metrics.0.0.at_min_isr", True, "ISR {leader}, min ISR 1: at min ISR")
    return c


@case(P + "testUnderReplicatedPartitionsCorrectSemantics")
def under_replicated_partitions_correct_semantics():
    c = Case(P + "testUnderReplicatedPartitionsCorrectSemantics",
             "Partition.isUnderReplicated, the UnderReplicatedPartitions gauge: a leader whose ISR {0, 1} misses "
             "replica 2 of [0, 1, 2] is under-replicated; with the ISR the whole assignment it is not.",
             n_brokers=3, replication_factor=3)
    c.adapt("isUnderReplicated is read as the metric path metrics.0.0.under_replicated (model/metrics.py: the "
            "leader's committed ISR is smaller than the replication factor).")
    c.adapt("Kafka's makeLeader with ISR [0, 1] is the controller's fence of follower 2 here, replayed by the "
            "leader; its second makeLeader with the whole assignment as ISR is follower 2's return: its heartbeat "
            "unfences it, it fetches, and the leader's AlterPartition adds it.")
    c.formed().fence(2).replay(0)
    c.check_leader_state(0, "the leader's ISR is {0, 1}", isr=[0, 1])
    c.check("metrics.0.0.under_replicated", True, "ISR {0, 1} of replicas [0, 1, 2]: under-replicated")
    c.unfence(2).replay(0).fetch(2)
    c.check_update(0, [0, 1, 2], "the leader proposes ISR {0, 1, 2}")
    c.alter(0)
    c.check_leader_state(0, "the leader's ISR is {0, 1, 2}", isr=[0, 1, 2])
    c.check("metrics.0.0.under_replicated", False, "the ISR is every replica: not under-replicated")
    return c


@case(P + "testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR")
def hw_not_advanced_under_min_isr():
    c = Case(P + "testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR",
             "KAFKA-15583 (KIP-966 part 1): min.insync.replicas = 3 and ISR {0, 1}: the HW does not advance while the "
             "ISR is under min ISR, not even when the maximal ISR (with a pending expansion) reaches 3; once the "
             "expansion commits, the HW moves to the log end.",
             n_brokers=3, replication_factor=3, min_insync_replicas=3)
    c.adapt("Kafka's ISR {0, 1} is reached by fencing broker 2; it fetches the records while fenced (the leader does "
            "not propose a fenced replica) and is unfenced before its fetch at the log end.")
    c.adapt("isUnderMinIsr is observed by its effects: the HW, and a produce with acks = -1 (NOT_ENOUGH_REPLICAS while "
            "under min ISR, accepted after).")
    c.formed().fence(2).replay()
    c.produce(0, n=10)
    c.check("brokers.0.logs.0.high_watermark", 0, "under min ISR: HW 0")
    c.produce(0, acks=-1)
    c.check("ghost.responses.produce.0.0.error", "NOT_ENOUGH_REPLICAS", "isUnderMinIsr: ISR {0, 1} < 3")
    c.catch_up([1])
    c.check("brokers.0.logs.0.high_watermark", 0, "follower 1 at the log end: HW still 0")
    c.catch_up([2])
    c.unfence(2).replay(0)
    c.fetch(2)
    c.check("brokers.0.logs.0.high_watermark", 0, "maximal ISR of 3, HW still 0")
    c.check_leader_state(0, "maximal ISR {0, 1, 2}", isr=[0, 1], pending_isr=pending(True, [2]))
    c.check_update(0, [0, 1, 2], "one ISR update")
    c.alter(0)
    c.check_leader_state(0, "ISR of 3", isr=[0, 1, 2], pending_isr=None)
    c.check("brokers.0.logs.0.high_watermark", 10, "no longer under min ISR: the HW is the log end offset")
    c.produce(0, acks=-1).catch_up()
    c.check("ghost.responses.produce.0.0.error", "NONE", "not under min ISR: a produce with acks = -1 is accepted")
    return c


@case(P + "testHighWatermarkIncreasesWithFencedOrShutdownFollower")
def hw_increases_with_fenced_follower():
    c = Case(P + "testHighWatermarkIncreasesWithFencedOrShutdownFollower",
             "(fenced) A caught-up follower that the controller fences and removes from the ISR no longer holds the "
             "HW back: when the leader learns it, the HW moves to the log end (20) although the follower is still "
             "within the lag.",
             n_brokers=2, replication_factor=2)
    c.adapt("Kafka's mocked metadata cache marks the follower fenced before the leader appends 10 more records and "
            "then makeLeader shrinks the ISR; here the controller fences the follower, the leader appends, and then "
            "replays the batch (the fence and the ISR shrink together).")
    c.unchecked("the 'shutdown' parameter (a follower in controlled shutdown): a broker stays in controlled shutdown "
                "only while it leads a partition, a separate history")
    c.unchecked("the 'unfenced' parameter (HW stays 10): the controller never removes an unfenced, caught-up follower "
                "from the ISR on its own")
    c.formed().produce(0, n=10).fetch(1, rounds=2)
    c.check_remote(0, 1, "the follower caught up to the log end", last_caught_up_time_ms=T0, log_start_offset=0,
                   log_end_offset=10)
    c.check("brokers.0.logs.0.high_watermark", 10, "the HW is the follower's LEO, the log end")
    c.fence(1)
    c.produce(0, n=10)
    c.replay(0)
    c.check_leader_state(0, "still leader; ISR and maximal ISR {0}", isr=[0], pending_isr=None)
    c.check("brokers.0.partitions.0.leader", 0, "still the leader")
    c.isr_expiration(0)
    c.check_no_update(0, "no out-of-sync replicas")
    c.check("brokers.0.logs.0.high_watermark", 20, "the fenced replica is not counted: HW 20")
    return c


# --------------------------------------------------------------------------- makeLeader / makeFollower in KRaft
@case(P + "testDoNotResetReplicaStateIfLeaderEpochIsNotBumped")
def no_reset_without_leader_epoch_bump():
    c = Case(P + "testDoNotResetReplicaStateIfLeaderEpochIsNotBumped",
             "makeLeader with the same leader epoch and a newer partition epoch (KRaft) keeps the followers' fetch "
             "state: a follower outside the ISR that fetched keeps its caught-up time and offsets.",
             n_brokers=3, replication_factor=3)
    c.adapt("Kafka's ISR {0} with follower 1 outside; here 1 is fenced (ISR {0, 2}) and the new metadata is the "
            "controller's fence of broker 2 (ISR {0}, same leader epoch 0, partition epoch 2).")
    c.unchecked("the follower's caught-up time right after makeLeader (0: outside the ISR then); here it was in the "
                "ISR at makeLeader")
    c.formed().fence(1).replay(0)
    c.check_leader_state(0, "partition epoch 1, leader epoch 0, ISR {0, 2}", isr=[0, 2], partition_epoch=1,
                         leader_epoch=0)
    c.check_remote(0, 1, "the follower's offsets are unknown", log_start_offset=-1, log_end_offset=-1)
    c.fetch(1)
    c.check_remote(0, 1, "the follower fetched at 0", last_caught_up_time_ms=T0, log_start_offset=0,
                   log_end_offset=0)
    c.fence(2).replay(0)
    c.check_leader_state(0, "partition epoch 2, same leader epoch, ISR {0}", isr=[0], partition_epoch=2,
                         leader_epoch=0)
    c.check_remote(0, 1, "the follower's state has not been reset", last_caught_up_time_ms=T0, log_start_offset=0,
                   log_end_offset=0)
    return c


@case(P + "testDoNotUpdateEpochStartOffsetIfLeaderEpochIsNotBumped")
def no_epoch_start_offset_update_without_bump():
    c = Case(P + "testDoNotUpdateEpochStartOffsetIfLeaderEpochIsNotBumped",
             "makeLeader with the same leader epoch and a newer partition epoch keeps the leader epoch start offset "
             "and adds no epoch-cache entry, although records were appended in between.",
             n_brokers=2, replication_factor=2)
    c.adapt("Kafka's ISR stays {0} with partition epochs 1 -> 2; here the new metadata is the controller's fence of "
            "follower 1 (ISR {0, 1} -> {0}, partition epoch 0 -> 1, same leader epoch).")
    c.formed()
    c.check_leader_state(0, "leader epoch 0, partition epoch 0", leader_epoch=0, partition_epoch=0)
    c.check("brokers.0.partitions.0.leader_epoch_start_offset", 0, "leaderEpochStartOffsetOpt = 0")
    c.check("brokers.0.logs.0.epoch_cache.-1", [0, 0], "the epoch cache's latest entry is (leader epoch, 0)")
    c.produce(0, n=2)
    c.fence(1).replay(0)
    c.check_leader_state(0, "newer partition epoch, same leader epoch, ISR {0}", isr=[0], partition_epoch=1,
                         leader_epoch=0)
    c.check("brokers.0.partitions.0.leader_epoch_start_offset", 0, "the epoch start offset is still 0")
    c.check("brokers.0.logs.0.epoch_cache.-1", [0, 0], "the epoch cache's latest entry is still (leader epoch, 0)")
    return c


@case(P + "testFollowerShouldNotHaveAnyRemoteReplicaStates")
def follower_has_no_remote_replica_states():
    c = Case(P + "testFollowerShouldNotHaveAnyRemoteReplicaStates",
             "A leader that becomes follower (new leader epoch) drops its followers' states and its ISR, and keeps the "
             "assignment.",
             n_brokers=3, replication_factor=3)
    c.adapt("Kafka's makeFollower with leader 1, leader epoch 2, partition epoch 2 is here the controller's fence of "
            "the leader, broker 0 (leader 1, leader epoch 1, partition epoch 1), which broker 0 replays.")
    c.formed()
    c.check_leader_state(0, "leader epoch 0, partition epoch 0, ISR all replicas", isr=[0, 1, 2], leader_epoch=0,
                         partition_epoch=0)
    c.check("brokers.0.partitions.0.leader", 0, "broker 0 leads")
    c.check("brokers.0.partitions.0.remote_replicas.0.broker_id", 1, "remote replicas [1, 2]")
    c.check("brokers.0.partitions.0.remote_replicas.1.broker_id", 2, "remote replicas [1, 2]")
    c.check("brokers.0.partitions.0.assigned_replicas", [0, 1, 2], "assignment [0, 1, 2]")
    c.fence(0).replay(0)
    c.check_leader_state(0, "the new epochs", leader_epoch=1, partition_epoch=1)
    c.check("brokers.0.partitions.0.leader", 1, "the leader is broker 1")
    c.check("brokers.0.partitions.0.isr", [], "a follower holds no ISR")
    c.check("brokers.0.partitions.0.remote_replicas", [], "and no remote replica states")
    c.check("brokers.0.partitions.0.assigned_replicas", [0, 1, 2], "the assignment is kept")
    return c


# --------------------------------------------------------------------------- the other test cases of the class
_OUTSIDE = ("outside this item (the KRaft work takes the AlterPartition, fencing, controlled-shutdown, min-ISR, ELR and "
            "epoch-bump rules of KRaft): ")
_IN_24 = "; its 2.4.0 form is a trace in tests/kafka/"
for _name, _detail in (
        ("testLastFetchedOffsetValidation", "the leader's read validation of a follower's lastFetchedEpoch "
                                            "(diverging epochs, KIP-595)"),
        ("testMakeLeaderUpdatesEpochCache", "makeLeader's epoch-cache entry" + _IN_24),
        ("testReplicaFetchToFollower", "a replica fetch that reaches a follower (NOT_LEADER_OR_FOLLOWER, epoch "
                                       "validation)"),
        ("testFetchOffsetSnapshotEpochValidationForLeader", "fetchOffsetSnapshot's epoch validation"),
        ("testFetchOffsetSnapshotEpochValidationForFollower", "fetchOffsetSnapshot's epoch validation"),
        ("testOffsetForLeaderEpochValidationForLeader", "OffsetsForLeaderEpoch's epoch validation" + _IN_24),
        ("testOffsetForLeaderEpochValidationForFollower", "OffsetsForLeaderEpoch's epoch validation"),
        ("testLeaderEpochValidationOnLeader", "a replica fetch's leader-epoch validation on the leader"),
        ("testLeaderEpochValidationOnFollower", "a replica fetch's leader-epoch validation on a follower"),
        ("testFetchOffsetForTimestampEpochValidationForLeader", "ListOffsets' epoch validation" + _IN_24),
        ("testFetchOffsetForTimestampEpochValidationForFollower", "ListOffsets' epoch validation" + _IN_24),
        ("testFetchLatestOffsetIncludesLeaderEpoch", "ListOffsets' leader epoch" + _IN_24),
        ("testMonotonicOffsetsAfterLeaderChange", "ListOffsets across a leader change" + _IN_24),
        ("testAppendRecordsAsFollowerBelowLogStartOffset", "follower appends below the log start offset"),
        ("testListOffsetIsolationLevels", "ListOffsets' isolation levels" + _IN_24),
        ("testMakeFollowerWithNoLeaderIdChange", "makeFollower's answer to a repeated or newer leader epoch" + _IN_24),
        ("testUpdateFollowerFetchState", "the leader's record of a follower's fetch" + _IN_24),
        ("testUseCheckpointToInitializeHighWatermark", "the HW read from the checkpoint file")):
    out_of_scope(P + _name, _OUTSIDE + _detail)
for _name, _detail in (
        ("testMaybeReplaceCurrentWithFutureReplica", "future replicas of intra-broker log-directory moves (KIP-113)"),
        ("testMaybeReplaceCurrentWithFutureReplicaDifferentBaseOffsets",
         "future replicas of intra-broker log-directory moves (KIP-113)"),
        ("testMakeFollowerWithWithFollowerAppendRecords", "makeFollower and a follower append running concurrently "
                                                          "(thread interleaving inside a broker)"),
        ("testGetReplica", "an accessor of a Partition without a log"),
        ("testAppendRecordsToFollowerWithNoReplicaThrowsException", "an internal guard (a follower append without a "
                                                                    "local log)"),
        ("testZkIsrManagerAsyncCallback", "the ZooKeeper-era AlterIsr manager (ZkAlterPartitionManager), not KRaft"),
        ("testTopicIdAndPartitionMetadataFileForLeader", "topic ids and the partition.metadata file"),
        ("testTopicIdAndPartitionMetadataFileForFollower", "topic ids and the partition.metadata file"),
        ("testAddAndRemoveMetrics", "metrics"),
        ("testLogConfigNotDirty", "log configuration"),
        ("testLogConfigDirtyAsTopicUpdated", "log configuration"),
        ("testLogConfigDirtyAsBrokerUpdated", "log configuration"),
        ("testAddAndRemoveListeners", "PartitionListener callbacks (a broker-internal API)"),
        ("testAddListenerFailsWhenPartitionIsDeleted", "PartitionListener callbacks (a broker-internal API)"),
        ("testPartitionListenerWhenLogOffsetsChanged", "PartitionListener callbacks (a broker-internal API)"),
        ("testPartitionListenerWhenPartitionFailed", "PartitionListener callbacks (a broker-internal API)"),
        ("testPartitionListenerWhenPartitionIsDeleted", "PartitionListener callbacks (a broker-internal API)"),
        ("testPartitionListenerWhenCurrentIsReplacedWithFutureLog",
         "PartitionListener callbacks (a broker-internal API)"),
        ("testMaybeStartTransactionVerification", "transaction verification (KIP-890)"),
        ("makeLeaderInvokesgetOrCreateLog_OnOnlineLogDir", "the log directory a new log is created in (JBOD)"),
        ("makeFollowerInvokesgetOrCreateLog_OnOnlineLogDir", "the log directory a new log is created in (JBOD)"),
        ("makeLeaderInvokesgetOrCreateLog_WhenNoLogDirOffline", "the log directory a new log is created in (JBOD)"),
        ("makeFollowerInvokesgetOrCreateLog_WhenNoLogDirOffline", "the log directory a new log is created in (JBOD)"),
        ("makeLeaderInvokesgetOrCreateLog_WhenTargetDirIsUnassigned",
         "the log directory a new log is created in (JBOD)"),
        ("makeFollowerInvokesgetOrCreateLog_WhenTargetDirIsUnassigned",
         "the log directory a new log is created in (JBOD)")):
    out_of_scope(P + _name, _detail + " (not replication)")

missing(P + "testIsReplicaIsrEligibleWithEmptyReplicaMap", "broker interleaving",
        "The partition is deleted (Partition.delete clears remoteReplicasMap) between fetchRecords' read and its "
        "updateFollowerFetchState, which must then not throw.  Topic deletion is modelled (DeleteTopic, "
        "kraft-delete-topic), but a leader that has replayed the RemoveTopicRecord no longer hosts the partition "
        "and refuses the fetch before reading, and one that has not yet replayed it serves the whole fetch: the "
        "deletion cannot land inside it.")


@case(P + "testFenceFollowerFetchWithStaleBrokerEpoch")
def fence_follower_fetch_with_stale_broker_epoch():
    c = Case(P + "testFenceFollowerFetchWithStaleBrokerEpoch",
             "The leader (log end 10, ISR {0, 1}) records its follower's fetch at 10 with the follower's broker epoch; "
             "a fetch at 10 with an older broker epoch is refused (NOT_LEADER_OR_FOLLOWER, Replica."
             "updateFetchStateOrThrow) and leaves the follower's state as the first fetch left it.",
             n_brokers=2, replication_factor=2)
    c.adapt("Kafka's test hands the leader a fetch carrying the broker epoch minus one; here the stale epoch is the "
            "follower's previous incarnation's: follower 1 catches up, stops with its next fetch (at 10) on its way, "
            "is fenced when its session expires (the controller takes it out of the ISR), starts again with a new "
            "broker epoch, is unfenced by its next heartbeat, fetches at 10 (the leader proposes it, the controller "
            "puts it back in the ISR), and then the earlier incarnation's fetch reaches the leader "
            "(OrphanRequestReceived).")
    c.adapt("Kafka's leader epoch 5 is the formed cluster's 0 (a fence keeps the leader epoch since KAFKA-15021); the "
            "lastCaughtUpTimeMs Kafka checks is the time of the follower's fetch at 10 with the new epoch.")
    c.unchecked("the exception's type (NOT_LEADER_OR_FOLLOWER): the refused fetch's answer goes nowhere, its sender "
                "is gone")
    c.formed().produce(0, n=10).catch_up()
    c.check("brokers.0.partitions.0.isr", [0, 1], "ISR {0, 1}")
    # broker epochs are the offsets of the RegisterBrokerRecords: 1 for the formed cluster's broker 1; 5 for its next
    # incarnation, after the partition's creation (2), the fence's ISR change (3) and FenceBrokerRecord (4)
    stale, epoch = 1, 5
    fetched_at = T0 + 10_000                                  # the new incarnation's fetch, after the 10 s below
    c.crash(1, clean=True)
    c.check("brokers.1.orphans.0.fetch_offset", 10, "the stopped follower's fetch at the log end is on its way")
    c.sleep(10_000)                                            # past the 9 s session: the controller fences 1
    c.check("quorum.partitions.0.isr", [0], "the fenced follower left the ISR")
    c.restart(1).unfence(1).replay(0)
    c.check("brokers.0.metadata.broker_epochs", [0, epoch], "the leader's metadata cache holds the new broker epoch")
    c.fetch(1).alter(0)
    c.check_leader_state(0, "the follower is back in the ISR", isr=[0, 1], pending_isr=None)
    c.check_remote(0, 1, "the fetch at 10 with the follower's current broker epoch is recorded",
                   last_caught_up_time_ms=fetched_at, log_start_offset=0, log_end_offset=10, broker_epoch=epoch)
    c.check("brokers.1.orphans.0.broker_epoch", stale, "the fetch on its way carries the earlier broker epoch")
    c.do(A.OrphanRequestReceived(1, "FETCH", 0))
    c.check_remote(0, 1, "the stale fetch does not update the fetch state",
                   last_caught_up_time_ms=fetched_at, log_start_offset=0, log_end_offset=10, broker_epoch=epoch)
    c.check("brokers.0.partitions.0.isr", [0, 1], "the ISR is unchanged")
    return c



@case(P + "testAlterIsrNewLeaderElected")
def alter_isr_new_leader_elected():
    c = Case(P + "testAlterIsrNewLeaderElected",
             "handleAlterIsrFailure(NEW_LEADER_ELECTED): the leader's proposal to add a caught-up follower is answered "
             "NEW_LEADER_ELECTED; the ISR stays, the maximal ISR keeps the follower, and no update is left to retry.",
             n_brokers=3, replication_factor=2, max_reassignments=1)
    c.adapt("Kafka fails the update by hand; here the answer is the quorum controller's own, which gives "
            "NEW_LEADER_ELECTED to a leader's AlterPartition only when it completes a reassignment that moves the "
            "leadership: the partition [0, 1] is reassigned to [1, 2] (adding 2, removing the leader 0), so the "
            "leader's proposal to add the caught-up 2 completes it and 1 leads.  Kafka's ISR {b} and maximal ISR "
            "{b, r} are {0, 1} and {0, 1, 2} here (the follower 1 stays in the ISR).")
    c.formed().produce(0).catch_up()
    c.reassign([1, 2])
    c.replay().catch_up([2])
    c.check_leader_state(0, "expansion triggered: maximal ISR with the follower, one ISR update", isr=[0, 1],
                         pending_isr=pending(True, [2]))
    c.check_update(0, [0, 1, 2], "alterPartitionManager.isrUpdates.size = 1")
    c.send_alter(0)
    c.check_alter_response(0, "the controller's answer: NEW_LEADER_ELECTED", error="NEW_LEADER_ELECTED")
    c.receive_alter(0)
    c.check_leader_state(0, "partitionState.isr unchanged", isr=[0, 1])
    c.check_leader_state(0, "maximalIsr {b, r}: the expansion stays pending", pending_isr=pending(True, [2]))
    c.check_no_update(0, "alterPartitionManager.isrUpdates.size = 0: not retried")
    return c


@case(P + "testIgnoreLeaderPartitionStateChangeWithOlderPartitionEpoch")
def ignore_leader_state_with_older_partition_epoch():
    c = Case(P + "testIgnoreLeaderPartitionStateChangeWithOlderPartitionEpoch",
             "makeLeader with the same leader epoch and an older partition epoch is ignored: the leader keeps its "
             "partition epoch and leader epoch.",
             n_brokers=3, replication_factor=3)
    c.adapt("Kafka calls makeLeader with partition epoch 1, then 0.  Here the leader learns newer partition epochs "
            "from the controller's answers to its own AlterPartitions first (3, then 4: two expansions), then replays "
            "the metadata log, whose record of partition epoch 3 is older than the 4 it holds.")
    c.adapt("Kafka's single replica [0] with leader epoch 8: here the formed cluster's leader 0 in leader epoch 0, with "
            "followers 1 and 2 fenced out of the ISR (partition epochs 1 and 2) and unfenced again.")
    c.unchecked("makeLeader's return value (false): no trace observes it; its effect, nothing changed, is checked")
    c.formed().fence(1, 2).replay().unfence(1).unfence(2).replay()
    c.check_leader_state(0, "ISR {0} after both fences, partition epoch 2", isr=[0], partition_epoch=2,
                         leader_epoch=0)
    c.fetch(1).alter(0)
    c.fetch(2).alter(0)
    c.check_leader_state(0, "both expansions answered: ISR {0, 1, 2}, partition epoch 4, before any replay",
                         isr=[0, 1, 2], pending_isr=None, partition_epoch=4, leader_epoch=0)
    c.apply_metadata(0)
    c.check("quorum.log.-2.registration.partition_epoch", 3, "the batch replayed holds partition epoch 3")
    c.check_leader_state(0, "the older partition state is ignored: partition epoch 4 and leader epoch 0 kept",
                         isr=[0, 1, 2], partition_epoch=4, leader_epoch=0)
    return c

@case(P + "testIsrCanExpandedIfBrokerEpochsMatchWithKraftMetadataCache")
def isr_expands_only_with_matching_broker_epochs():
    c = Case(P + "testIsrCanExpandedIfBrokerEpochsMatchWithKraftMetadataCache",
             "A follower caught up to the log end whose Fetch carries another broker epoch than the leader's metadata "
             "cache holds is not proposed for the ISR (KIP-903); once the cache holds the epoch its Fetch carries, "
             "the next caught-up fetch proposes it, with each member's broker epoch in the request.",
             n_brokers=3, replication_factor=3)
    c.adapt("Kafka's makeLeader gives ISR {0, 2}: here follower 1 never fetches, so the leader's ISR-expiration task "
            "shrinks it out once the lag has passed (partition epoch 1), while follower 2 stays caught up.")
    c.adapt("Kafka's mocked cache returns a wrong epoch for the first fetch: here broker 1 really is a new "
            "incarnation. Its heartbeats are lost, the controller fences it, it stops and starts again (a new "
            "registration, a new broker epoch) and fetches while the leader has replayed none of that: the leader's "
            "cache still holds it unfenced in its old epoch.  Then the leader replays the log, broker 1 is unfenced "
            "by its next heartbeat, and it fetches again.")
    c.unchecked("broker 2's entry in the request (-1 in Kafka, where 2 never fetched): here 2 has fetched and its "
                "entry is its broker epoch")
    c.formed().produce(0, n=10).fetch(2, rounds=2)
    c.sleep(LAG + 15_000, fetching=((2, 0),))
    c.alter(0).replay()
    c.check_leader_state(0, "ISR {0, 2}", isr=[0, 2], pending_isr=None)
    old_epoch = c.s.quorum.registrations[1].epoch
    c.fence(1).do(A.BrokerCrash(1, True)).do(A.BrokerRestart(1)).replay(1)
    new_epoch = c.s.quorum.registrations[1].epoch
    c.check("brokers.0.metadata.broker_epochs.1", old_epoch, "the leader's cache holds broker 1's earlier epoch")
    c.fetch(1, rounds=2)
    c.check_remote(0, 1, "caught up to the log end, with the broker epoch its Fetch carried", log_end_offset=10,
                   log_start_offset=0, last_caught_up_time_ms=c.s.now, broker_epoch=new_epoch)
    c.check_leader_state(0, "expansion is not triggered", isr=[0, 2], pending_isr=None)
    c.check_no_update(0, "alterPartitionManager.isrUpdates.size = 0")
    c.replay(0).unfence(1).replay(0)
    c.check("brokers.0.metadata.broker_epochs.1", new_epoch, "the leader's cache now holds broker 1's new epoch")
    c.fetch(1)
    c.check_remote(0, 1, "the follower still caught up to the log end", log_end_offset=10, log_start_offset=0,
                   last_caught_up_time_ms=c.s.now)
    c.check_leader_state(0, "expansion is triggered: ISR {0, 2}, maximal ISR {0, 1, 2}", isr=[0, 2],
                         pending_isr=pending(True, [1]))
    c.check_update(0, [0, 1, 2], "alterPartitionManager.isrUpdates.size = 1")
    c.check("brokers.0.alter_isr_unsent.0.request.isr_epochs",
            [c.s.quorum.registrations[b].epoch for b in (0, 1, 2)],
            "each member's broker epoch in the request: the leader's own, broker 1's new one, broker 2's")
    return c

missing(P + "testIgnoreFollowerPartitionStateChangeWithOlderPartitionEpoch", "out-of-order metadata",
        "makeFollower with the same partition epoch again is ignored: a follower replays each partition record once, "
        "in order, and no AlterPartition answer reaches a follower, so it never meets its own partition epoch again.  "
        "Kafka 3.7.0's KRaft broker does not either: TopicDelta.localChanges hands applyDelta a follower's partition "
        "only when its partition epoch differs from the image's (a metadata snapshot is loaded as a delta on the "
        "current image too); the repeated state comes from a ZooKeeper-era controller's LeaderAndIsr.")


@case(P + "testUpdateAssignmentAndIsr")
def update_assignment_and_isr():
    c = Case(P + "testUpdateAssignmentAndIsr",
             "updateAssignmentAndIsr keeps a reassignment's state: with adding and removing replicas the assignment is "
             "an OngoingReassignmentState (replicas, ISR, adding, removing, a remote replica per other replica); "
             "without, a SimpleAssignmentState; as follower, no ISR and no remote replicas.",
             n_brokers=6, replication_factor=4, max_reassignments=1)
    c.adapt("Kafka calls updateAssignmentAndIsr directly with replicas [0, 1, 2, 3], ISR {0, 1, 2, 3}, adding [4, 5] "
            "and removing [1, 2], a state no controller writes (adding replicas outside the replicas).  Here the "
            "leader, broker 0, replays the controller's record of the reassignment of [0, 1, 2, 3] to [0, 3, 4, 5] "
            "(changePartitionReassignment: replicas = target + removing = [0, 3, 4, 5, 1, 2], so the remote replicas "
            "are [3, 4, 5, 1, 2]).")
    c.adapt("The simple assignment [0, 3, 4, 5] with ISR {0, 3, 4, 5} is the reassignment completed: 4 and 5 catch up "
            "and the leader's AlterPartitions add them to the ISR, which completes it (1 and 2 leave, leader epoch 1).")
    c.adapt("Kafka's last call (isLeader = false, replicas [1, 2, 3, 4]) is broker 0 becoming follower of the "
            "reassigned partition [0, 3, 4, 5]: the controller fences it (its heartbeats are lost) and it replays the "
            "record.")
    c.unchecked("that the assignment state is a SimpleAssignmentState once the reassignment is over (no adding or "
                "removing replicas): the state's encoding leaves a partition's empty adding and removing replicas "
                "out, so no check can name them (tests/test_partition_3x.py checks the model's empty ones)")
    c.formed().produce(0).catch_up()
    c.reassign([0, 3, 4, 5])
    c.replay(0)
    c.check("brokers.0.partitions.0.assigned_replicas", [0, 3, 4, 5, 1, 2], "assignmentState.replicas")
    c.check("brokers.0.partitions.0.adding_replicas", [4, 5],
            "OngoingReassignmentState: addingReplicas")
    c.check("brokers.0.partitions.0.removing_replicas", [1, 2], "OngoingReassignmentState: removingReplicas")
    c.check_leader_state(0, "partitionState.isr", isr=[0, 1, 2, 3])
    _check_followers(c, [3, 4, 5, 1, 2], "remoteReplicas: one per replica but the leader")
    c.replay().catch_up([4, 5]).alter(0).catch_up([4, 5]).alter(0)
    c.check_registration("the reassignment completed", replicas=[0, 3, 4, 5], isr=[0, 3, 4, 5], leader=0,
                         leader_epoch=1)
    c.replay(0)
    c.check("brokers.0.partitions.0.assigned_replicas", [0, 3, 4, 5], "assignmentState.replicas")
    c.check_leader_state(0, "partitionState.isr", isr=[0, 3, 4, 5], leader_epoch=1)
    _check_followers(c, [3, 4, 5], "remoteReplicas")
    c.fence(0).replay(0)
    c.check("brokers.0.partitions.0.leader", 3, "broker 0 follows")
    c.check("brokers.0.partitions.0.assigned_replicas", [0, 3, 4, 5], "assignmentState.replicas")
    c.check("brokers.0.partitions.0.isr", [], "partitionState.isr is empty")
    c.check("brokers.0.partitions.0.remote_replicas", [], "no remote replicas")
    return c


def _check_followers(c: Case, followers, why: str, b: int = 0, p: int = 0) -> None:
    """partition.remoteReplicas.map(_.brokerId): the leader's remote replicas, in order (one per replica but itself,
    the replicas being checked beside)."""
    for i, f in enumerate(followers):
        c.check(f"brokers.{b}.partitions.{p}.remote_replicas.{i}.broker_id", f, why)


@case(P + "testFetchFromUnrecognizedFollower")
def fetch_from_unrecognized_follower():
    c = Case(P + "testFetchFromUnrecognizedFollower",
             "KAFKA-13837: replicas a reassignment adds fetch before the leader knows them; the leader refuses with "
             "UNKNOWN_LEADER_EPOCH (the fetch carries the leader epoch) and records nothing for them.  Once makeLeader "
             "takes the new assignment (same leader epoch, new partition epoch) their fetches are served and "
             "recorded, and the partition is not under-replicated (the adding replicas are not counted).",
             n_brokers=4, replication_factor=2, max_reassignments=1)
    c.adapt("Kafka's leader epoch 8 and partition epochs 1 and 2 are the formed cluster's leader epoch 0 and the "
            "partition epochs 0 and 1; the new assignment is the controller's record of the reassignment of [0, 1] to "
            "[0, 1, 2, 3] (adding 2 and 3, no leader epoch bump), which the adding replicas replay before the leader: "
            "they start fetching from it while it still holds replicas [0, 1].")
    c.adapt("The fetches' answers are observed in the follower's fetch in flight (brokers.N.fetchers.0.inflight) "
            "before it processes them; the follower backs off and retries.  Each new replica, its log empty, first "
            "asks the leader for its epoch's end (OffsetsForLeaderEpoch: a fetcher with no epoch to send starts "
            "truncating), which the leader answers whoever asks.")
    c.unchecked("the fetch without a leader epoch (NOT_LEADER_OR_FOLLOWER): 3.7.0's followers always send the "
                "current leader epoch; the model's replica 3 sends it too and is refused with UNKNOWN_LEADER_EPOCH")
    c.unchecked("makeLeader's return value (false): its effect, the same leader epoch kept, is checked")
    c.formed()
    c.reassign([0, 1, 2, 3])
    c.check_whole_registration("quorum.partitions.0", "the reassignment adds 2 and 3, leader epoch kept",
                               replicas=[0, 1, 2, 3], isr=[0, 1], leader=0, leader_epoch=0, partition_epoch=1,
                               adding=[2, 3])
    c.replay(2, 3)
    c.check("brokers.0.partitions.0.assigned_replicas", [0, 1], "the leader still holds replicas [0, 1]")
    c.check("brokers.0.partitions.0.remote_replicas.0.broker_id", 1, "its one remote replica is 1")
    c.ofle(2)
    c.do(A.FetchRequest(2, 0))
    c.check("brokers.2.fetchers.0.leader_epoch", 0, "the adding replica fetches with the current leader epoch")
    c.check("brokers.2.fetchers.0.inflight.error", "UNKNOWN_LEADER_EPOCH",
            "a fetch from the adding replica 2 with the leader epoch: UnknownLeaderEpochException")
    c.check("brokers.0.partitions.0.remote_replicas.0.broker_id", 1, "getReplica(2) is None: nothing recorded")
    c.check("brokers.0.partitions.0.assigned_replicas", [0, 1], "getReplica(2) is None: not a replica yet")
    c.do(A.FetchResponse(2, 0))
    c.ofle(3)
    c.do(A.FetchRequest(3, 0))
    c.check("brokers.3.fetchers.0.inflight.error", "UNKNOWN_LEADER_EPOCH", "the adding replica 3 is refused too")
    c.check("brokers.0.partitions.0.assigned_replicas", [0, 1], "getReplica(3) is None")
    c.do(A.FetchResponse(3, 0))
    c.replay(0)
    c.check_leader_state(0, "makeLeader with the new assignment: same leader epoch, new partition epoch",
                         leader_epoch=0, partition_epoch=1, isr=[0, 1])
    c.check("brokers.0.partitions.0.assigned_replicas", [0, 1, 2, 3], "the replicas are added")
    c.check("brokers.0.partitions.0.adding_replicas", [2, 3], "as part of a reassignment")
    c.do(A.FetchRequest(2, 0))
    c.check("brokers.2.fetchers.0.inflight.error", "NONE", "now the fetch is allowed")
    c.check("brokers.0.logs.0.entries", [], "the read's logEndOffset is 0: the leader's log is empty")
    c.check_remote(0, 2, "getReplica(2)'s logEndOffset is 0", log_end_offset=0)
    c.check("metrics.0.0.under_replicated", False, "isUnderReplicated is false: the adding replicas are not counted")
    return c

# --------------------------------------------------------------------------- answers no controller of the model gives
FAULT_ADAPT = ("failIsrUpdate(error) completes the update by hand with an error the model's quorum controller never "
               "gives a leader's own request; here the fault AlterIsrFailed answers the request in flight with it "
               "before the controller handles it (budget max_alter_isr_failures = 1), and AlterIsrResponse reads it.")


def _fail_update(c: Case, b: int, error: str) -> Case:
    """The leader's AlterPartitionManager sends its update; the fault answers it ``error``; the answer is read."""
    return c.do(A.AlterIsrRequest(b)).do(A.AlterIsrFailed(b, error)).receive_alter(b)


@case(P + "testRetryShrinkIsr")
def retry_shrink_isr():
    c = Case(P + "testRetryShrinkIsr",
             "The leader proposes removing a follower that has not fetched for the lag; the update fails with "
             "NETWORK_EXCEPTION and is sent again; the ISR, the partition epoch and the HW stay until the retry "
             "commits the shrink, which frees the HW.",
             n_brokers=2, replication_factor=2, max_alter_isr_failures=1)
    c.adapt(FAULT_ADAPT + "  NETWORK_EXCEPTION answers the whole request (AlterPartitionManager maps a failed "
            "connection's authentication error to it), so the manager keeps the item and sends it again.")
    c.adapt("Kafka's partition epoch 1 and 2 are 0 and 1 here (the formed cluster's first registration); the shrink is "
            "proposed at the ISR-expiration task's first run after the lag (45 s).")
    c.unchecked("alterPartitionListener.failures = 1 (the model counts no failed updates)")
    c.formed().produce(0, n=10)
    c.sleep(45_000)
    c.check_update(0, [0], "alterPartitionManager.isrUpdates: one update, ISR {0}")
    c.check_leader_state(0, "ISR and maximal ISR {0, 1} while the shrink is pending", isr=[0, 1],
                         pending_isr=pending(False, [1]))
    _fail_update(c, 0, "NETWORK_EXCEPTION")
    c.check("ghost.isr_shrinks", 0, "alterPartitionListener.shrinks = 0")
    c.check_leader_state(0, "the partition epoch is unchanged; ISR and maximal ISR {0, 1}", isr=[0, 1],
                         pending_isr=pending(False, [1]), partition_epoch=0)
    c.check_update(0, [0], "the update is kept to be sent again (isrUpdates.size = 1)")
    c.check("brokers.0.logs.0.high_watermark", 0, "HW 0")
    c.alter(0)
    c.check("ghost.isr_shrinks", 1, "alterPartitionListener.shrinks = 1")
    c.check_leader_state(0, "the retry commits: partition epoch 1, ISR and maximal ISR {0}", isr=[0],
                         pending_isr=None, partition_epoch=1)
    c.check_no_update(0, "isrUpdates.size = 0")
    c.check("brokers.0.logs.0.high_watermark", 10, "the HW moves to the log end offset")
    return c


def _expansion_failed(name: str, description: str, error: str) -> Case:
    """handleAlterIsrFailure: follower 1 outside the ISR at the leader's log end (10) fetches, the leader proposes it,
    and the update fails with ``error``."""
    c = Case(name, description, n_brokers=2, replication_factor=2, max_alter_isr_failures=1)
    c.adapt(FAULT_ADAPT)
    c.adapt("Kafka's makeLeader gives ISR {0} with replicas [0, 1]; here the formed cluster's follower 1 fetches the "
            "10 records, is fenced (the controller removes it from the ISR) and unfenced again, so it is outside the "
            "ISR at the leader's log end.")
    c.unchecked("the follower's state right after makeLeader (last caught-up time 0, offsets unknown): here it fetched "
                "before leaving the ISR")
    _follower_outside_isr(c, 1, records=10)
    c.check("brokers.0.logs.0.high_watermark", 10, "HW 10")
    c.fetch(1)
    c.check_leader_state(0, "follower state updated, the ISR not expanded", isr=[0], pending_isr=pending(True, [1]))
    c.check_update(0, [0, 1], "alterPartitionManager.isrUpdates.size = 1")
    c.check_remote(0, 1, "the follower caught up at 10", log_end_offset=10, log_start_offset=0,
                   last_caught_up_time_ms=T0)
    return _fail_update(c, 0, error)


@case(P + "testAlterIsrUnexpectedError")
def alter_isr_unexpected_error():
    c = _expansion_failed(
        P + "testAlterIsrUnexpectedError",
        "handleAlterIsrFailure(UNKNOWN_SERVER_ERROR): the leader's proposal to add a caught-up follower fails with "
        "an unexpected error, which the partition retries: the ISR stays, the maximal ISR keeps the follower, and the "
        "update is queued again.", "UNKNOWN_SERVER_ERROR")
    c.check_leader_state(0, "ISR {0}, maximal ISR {0, 1}", isr=[0], pending_isr=pending(True, [1]))
    c.check_update(0, [0, 1], "retried: isrUpdates.size = 1")
    return c


@case(P + "testInvalidAlterPartitionRequestsAreNotRetried")
def invalid_alter_partition_requests_not_retried():
    c = _expansion_failed(
        P + "testInvalidAlterPartitionRequestsAreNotRetried",
        "The leader's proposal to add a caught-up follower fails with INVALID_REQUEST, which the partition does not "
        "retry: the ISR stays, the maximal ISR keeps the follower, and no update is left.", "INVALID_REQUEST")
    c.unchecked("alterPartitionListener.failures = 1 (the model counts no failed updates)")
    c.check_leader_state(0, "still no ISR change; the maximal ISR keeps the follower", isr=[0],
                         pending_isr=pending(True, [1]))
    c.check_no_update(0, "no retry: isrUpdates.size = 0")
    c.check("ghost.isr_expands", 0, "alterPartitionListener.expands = 0")
    c.check("ghost.isr_shrinks", 0, "alterPartitionListener.shrinks = 0")
    return c


@case(P + "testPartitionShouldRetryAlterPartitionRequest")
def partition_should_retry_alter_partition_request():
    c = Case(P + "testPartitionShouldRetryAlterPartitionRequest",
             "A real AlterPartitionManager whose first request is answered UNKNOWN_SERVER_ERROR for the partition: the "
             "partition's callback submits the update again, the second request succeeds, and the expansion commits "
             "with the next partition epoch.",
             n_brokers=4, replication_factor=4, max_alter_isr_failures=1)
    c.adapt(FAULT_ADAPT + "  The second answer is the quorum controller's own.")
    c.adapt("Kafka's replicas [0, 1, 2, 3] with ISR {0, 1, 2} at partition epoch 1: here the formed cluster's "
            "follower 3 fetches the 10 records, is fenced out of the ISR (partition epoch 1) and unfenced again.")
    c.unchecked("the HW 0 right after makeLeader: here the followers fetched before follower 3 left the ISR")
    _follower_outside_isr(c, 3, records=10)
    c.check_leader_state(0, "ISR {0, 1, 2}, partition epoch 1", isr=[0, 1, 2], partition_epoch=1)
    c.fetch(3)
    c.check_update(0, [0, 1, 2, 3], "the fetch at 10 queues the expansion")
    _fail_update(c, 0, "UNKNOWN_SERVER_ERROR")
    c.check_update(0, [0, 1, 2, 3], "the callback submitted it again")
    c.alter(0)
    c.check_leader_state(0, "ISR {0, 1, 2, 3} at partition epoch 2, nothing in flight", isr=[0, 1, 2, 3],
                         pending_isr=None, partition_epoch=2)
    c.check_no_update(0, "nothing left to send")
    c.check("brokers.0.alter_isr_inflight", None, "no request in flight")
    c.unchecked("sendRequest called twice: the trace holds two AlterIsrRequest(0)")
    return c
