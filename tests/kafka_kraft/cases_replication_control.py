"""ReplicationControlManagerTest (Kafka 3.7.0): the quorum controller's handling of fencing, AlterPartition,
controlled shutdown and the ELR.

Kafka's test drives a ReplicationControlManager directly: it registers and unfences brokers, creates topics with a
manual assignment, fences brokers by letting their sessions lapse (``fenceBrokers``), and sends AlterPartition
requests it writes by hand.  In the model the topic exists from the start (the formed cluster, the model's replica
assignment), brokers are fenced when their heartbeats are lost, and AlterPartition requests are the leader's own, sent
when its followers fall behind or catch up.  Each trace says how Kafka's brokers and partitions map onto the model's.
"""

from __future__ import annotations

from isrlab.model import actions as A
from kraftcase import Case, case, missing, out_of_scope

R = "ReplicationControlManagerTest."


for _name in ("testCreateTopics", "testCreateTopicsWithMutationQuotaExceeded"):
    out_of_scope(R + _name, "topic creation requests and quotas (admin API, not replication)")
for _name in ("testCreateTopicsWithConfigs", "testCreateTopicsWithValidateOnlyFlag",
              "testInvalidCreateTopicsWithValidateOnlyFlag", "testCreateTopicsWithPolicy",
              "testCreateTopicWithCollisionChars", "testValidateNewTopicNames", "testTopicNameCollision"):
    out_of_scope(R + _name, "topic creation: configs, validation, policies and names (admin API, not replication)")


SHUT_DOWN_AT_ONCE = ("Kafka's broker 1 stays in controlled shutdown; the model's broker, leading nothing, is told at its "
                     "heartbeat to shut down at once and is fenced and stopped: either way it is no active broker.")


def _created_on_broker_0(c: Case, create, p: int, replicas: list, kafka_replicas: list) -> Case:
    """Broker 1's controlled shutdown (broker 2 fenced before), then ``create``: partition p's PartitionRecord has
    ISR [0], led by 0 in leader and partition epoch 0."""
    c.controlled_shutdown(1).heartbeat(1).do(create)
    c.check("quorum.log.-1.created", True, "a PartitionRecord")
    return c.check_whole_registration(f"quorum.partitions.{p}", f"replicas {replicas} (Kafka {kafka_replicas}), "
                                      "ISR [0], leader 0, RECOVERED, leader and partition epoch 0", replicas=replicas,
                                      isr=[0], leader=0, leader_epoch=0, partition_epoch=0)


@case(R + "testCreateTopicsISRInvariants")
def create_topics_isr_invariants():
    c = Case(R + "testCreateTopicsISRInvariants",
             "foo created on brokers 0, 1, 2 with broker 2 fenced and broker 1 in controlled shutdown: its partition's "
             "ISR is [0], which leads, in leader and partition epoch 0.",
             initial_partitions=0, max_partition_creations=1)
    c.adapt("The model's topic, not created at the start (initial_partitions 0), on the model's assignment [0, 1, 2] "
            "(Kafka's placer chose [1, 0, 2]: the model places replicas as a manual assignment).  Broker 2 is fenced "
            "when its heartbeats are lost. " + SHUT_DOWN_AT_ONCE)
    c.unchecked("the CreateTopics response (partitions, replication factor, topic id) and the replicas' directories")
    return _created_on_broker_0(c.fence(2), A.CreateTopic(), 0, [0, 1, 2], [1, 0, 2])


@case(R + "testCreatePartitionsISRInvariants")
def create_partitions_isr_invariants():
    c = Case(R + "testCreatePartitionsISRInvariants",
             "foo's second partition created with broker 2 fenced and broker 1 in controlled shutdown: replicas on "
             "brokers 0, 1, 2, ISR [0], leader 0, leader and partition epoch 0.",
             n_partitions=2, initial_partitions=1, max_partition_creations=1)
    c.adapt("foo is the model's topic with its partition 0 created at the start and partition 1 not yet "
            "(initial_partitions 1); partition 1's replicas are the model's assignment, [1, 2, 0] (Kafka's placer "
            "chose [0, 1, 2]).  Broker 2 is fenced when its heartbeats are lost. " + SHUT_DOWN_AT_ONCE)
    c.unchecked("the replicas' directories")
    return _created_on_broker_0(c.formed().fence(2), A.CreatePartitions(), 1, [1, 2, 0], [0, 1, 2])


@case(R + "testRemoveLeaderships")
def remove_leaderships():
    c = Case(R + "testRemoveLeaderships",
             "handleBrokerFenced(0) takes broker 0 out of every ISR it is in and moves every leadership it held: "
             "afterwards it leads nothing.",
             n_brokers=4, n_partitions=4, replication_factor=3)
    c.adapt("The topic is the model's: partitions [0, 1, 2], [1, 2, 3], [2, 3, 0], [3, 0, 1] (Kafka's last is "
            "[0, 2, 1], so broker 0 leads partition 0 only, not partitions 0 and 3).  handleBrokerFenced is the "
            "controller's fence after broker 0's heartbeats are lost.")
    c.formed()
    for p, leader in enumerate((0, 1, 2, 3)):
        c.check_registration("before: broker 0 leads partition 0 (brokersToIsrs' leaders of 0)", p=p, leader=leader)
    c.fence(0)
    for p, (leader, isr) in enumerate(((1, [1, 2]), (1, [1, 2, 3]), (2, [2, 3]), (3, [1, 3]))):
        c.check_registration("after: broker 0 leads no partition and is in no ISR", p=p, leader=leader, isr=isr)
    return c


def _lagging(c: Case, lagging) -> Case:
    """The formed cluster; the leader appends a record that the ``lagging`` followers never fetch (the others fetch
    it), and the clock runs to the ISR-expiration task's first run after the lag (45 s): the leader proposes the
    shrink."""
    c.formed().produce(0)
    for b in range(1, len(c.s.brokers)):
        if b not in lagging:
            c.fetch(b, rounds=2)
    c.sleep(45_000)
    return c


@case(R + "testShrinkAndExpandIsr")
def shrink_and_expand_isr():
    c = Case(R + "testShrinkAndExpandIsr",
             "AlterPartition from the leader shrinking the ISR to [0, 1] and then expanding it to [0, 1, 2]: both "
             "answered NONE, each response consistent with the partition registration after it (leader, leader "
             "epoch, partition epoch, ISR).",
             n_brokers=3, replication_factor=3)
    c.adapt("The requests are the leader's own: follower 2 lags for the lag time (shrink), then catches up "
            "(expansion).")
    _lagging(c, [2])
    c.check_update(0, [0, 1], "the shrink request: ISR [0, 1]")
    c.send_alter(0)
    c.check_alter_response(0, "NONE, consistent with the registration", error="NONE", leader=0, leader_epoch=0,
                           zk_version=1, isr=[0, 1])
    c.check_registration("the registration the response must match", leader=0, leader_epoch=0, partition_epoch=1,
                         isr=[0, 1])
    c.receive_alter(0).replay().catch_up([2])
    c.check_update(0, [0, 1, 2], "the expansion request: ISR [0, 1, 2]")
    c.send_alter(0)
    c.check_alter_response(0, "NONE, consistent with the registration", error="NONE", leader=0, leader_epoch=0,
                           zk_version=2, isr=[0, 1, 2])
    c.check_registration("the registration the response must match", leader=0, leader_epoch=0, partition_epoch=2,
                         isr=[0, 1, 2])
    return c


@case(R + "testEligibleLeaderReplicas_ShrinkAndExpandIsr")
def elr_shrink_and_expand_isr():
    c = Case(R + "testEligibleLeaderReplicas_ShrinkAndExpandIsr",
             "ELR on, min ISR 2: the leader's AlterPartition shrinking the ISR to [0] puts 1 and 2 in the ELR; "
             "expanding it to [0, 1] reaches min ISR and clears the ELR.",
             preset_name="kafka-4.1", n_brokers=3, replication_factor=3, min_insync_replicas=2)
    c.adapt("The model's ELR preset, kafka-4.1 (3.7.0 has the ELR behind the unreleased metadata version 3.8-IV0).  "
            "The requests are the leader's own: both followers lag for the lag time (shrink to [0]), then follower 1 "
            "catches up (expansion to [0, 1]).")
    _lagging(c, [1, 2])
    c.check_update(0, [0], "the shrink request: ISR [0]")
    c.send_alter(0)
    c.check_alter_response(0, "NONE, consistent with the registration", error="NONE", leader=0, leader_epoch=0,
                           zk_version=1, isr=[0])
    c.check_registration("ISR [0], ELR [1, 2], lastKnownElr []", isr=[0], elr=[1, 2], partition_epoch=1,
                         last_known_elr=[])
    c.receive_alter(0).replay().catch_up([1])
    c.check_update(0, [0, 1], "the expansion request: ISR [0, 1]")
    c.send_alter(0)
    c.check_alter_response(0, "NONE, consistent with the registration", error="NONE", leader=0, leader_epoch=0,
                           zk_version=2, isr=[0, 1])
    c.check_registration("ISR [0, 1], ELR [], lastKnownElr []", isr=[0, 1], elr=[], partition_epoch=2,
                         last_known_elr=[])
    return c


@case(R + "testEligibleLeaderReplicas_BrokerFence")
def elr_broker_fence():
    c = Case(R + "testEligibleLeaderReplicas_BrokerFence",
             "ELR on, min ISR 3, replicas [0, 1, 2, 3]: fencing 2 and 3 leaves ISR [0, 1] and ELR [3] (2 left while "
             "the ISR was at min ISR); fencing 1 too gives ELR [1, 3]; unfencing every broker leaves the ELR as it is "
             "(the partition has a leader).",
             preset_name="kafka-4.1", n_brokers=4, replication_factor=4, min_insync_replicas=3)
    c.adapt("The model's ELR preset, kafka-4.1.  fenceBrokers is the controller's stale-broker check after each "
            "broker's heartbeats are lost, in Kafka's order (2 before 3); unfenceBrokers is each broker's next "
            "heartbeat after it replays the log.")
    c.formed().fence(2, 3)
    c.check_registration("ELR [3], lastKnownElr []", elr=[3], isr=[0, 1], last_known_elr=[])
    c.fence(1)
    c.check_registration("ELR [1, 3], lastKnownElr []", elr=[1, 3], isr=[0], last_known_elr=[])
    c.replay()
    for b in (1, 2, 3):
        c.heartbeat(b)
    for b in (1, 2, 3):
        c.check(f"quorum.registrations.{b}.fenced", False, "every broker is unfenced")
    c.check_registration("unfencing changes no ELR: [1, 3]; lastKnownElr []", elr=[1, 3], isr=[0], leader=0,
                         last_known_elr=[])
    return c


out_of_scope(R + "testEligibleLeaderReplicas_EffectiveMinIsr",
             "an accessor (getTopicEffectiveMinIsr = min(min ISR 5, replication factor 3) = 3): no behaviour tells 5 "
             "from 3 at replication factor 3, where a full ISR clears the ELR either way; the effective min ISR is "
             "used by every other ELR trace")


@case(R + "testEligibleLeaderReplicas_CleanElection")
def elr_clean_election():
    c = Case(R + "testEligibleLeaderReplicas_CleanElection",
             "ELR on, min ISR 3: fencing 1, 2, 3 leaves ISR [0] and ELR [2, 3]; with 2 unfenced, fencing 0 empties the "
             "ISR and elects 2 from the ELR: ISR [2], ELR [0, 3], leader 2.",
             preset_name="kafka-4.1", n_brokers=4, replication_factor=4, min_insync_replicas=3)
    c.adapt("The model's ELR preset, kafka-4.1.  Fencing is the controller's stale-broker check after lost heartbeats "
            "(1, 2, 3 in that order, as Kafka's expected ELR implies); unfencing is each broker's next heartbeat "
            "(Kafka's fenceBrokers({0, 1}) unfences 3 as well before it fences 0).")
    c.formed().fence(1, 2, 3)
    c.check_registration("ISR [0], ELR [2, 3], lastKnownElr []", isr=[0], elr=[2, 3], leader=0, last_known_elr=[])
    c.unfence(2).unfence(3)
    c.fence(0)
    c.check_registration("a clean election from the ELR: leader 2, ISR [2], ELR [0, 3], lastKnownElr []", isr=[2],
                         elr=[0, 3], leader=2, last_known_elr=[])
    return c


@case(R + "testAlterPartitionHandleUnknownTopicIdOrName")
def alter_partition_handle_unknown_topic():
    c = Case(R + "testAlterPartitionHandleUnknownTopicIdOrName",
             "An AlterPartition for partition 0 of a topic the controller does not have is answered, for that "
             "partition, UNKNOWN_TOPIC_ID (request version > 1, by topic id), and nothing is written.",
             preset_name="kraft-delete-topic")
    c.adapt("Kafka's request names a topic id the controller never had; the model's leader sends only its own "
            "requests, so the topic exists and is deleted (a RemoveTopicRecord) while the leader's expansion of the "
            "ISR back to [0, 1, 2] (follower 2 fenced, then unfenced) is on its way.")
    c.unchecked("request versions 0 and 1 (by topic name: UNKNOWN_TOPIC_OR_PARTITION); the model's requests are of "
                "the latest version, with topic ids")
    c.unchecked("the response's topic name and id (the model has one topic, named by neither)")
    c.formed().produce(0).catch_up()
    c.fence(2).unfence(2).replay().catch_up([2])
    c.check_update(0, [0, 1, 2], "the leader's expansion, the request the controller will find no topic for")
    c.do(A.AlterIsrRequest(0)).do(A.DeleteTopic())
    c.check("quorum.log.-1", {"@type": "RemoveTopicRecord", "partitions": [0]}, "the topic is gone first")
    records = len(c.s.quorum.log)
    c.do(A.AlterIsrReceived(0))
    c.check_alter_response(0, "UNKNOWN_TOPIC_ID for partition 0", error="UNKNOWN_TOPIC_ID", partition=0)
    c.check("brokers.0.alter_isr_inflight.response.error", "NONE", "a per-partition error, not the request's")
    c.check("quorum.batch_ends.-1", records, "no record written: the log ends where the deletion left it")
    return c


#: testInvalidAlterPartitionRequests' requests, in its order: (what is wrong, sender, broker epoch (None: the sender's),
#: leader epoch, partition epoch, ISR, leader recovery state, the error Kafka asserts)
INVALID_ALTER_PARTITIONS = (
    ("Invalid leader: broker 1 (not the leader) sends the leader's shrink to [0, 1]", 1, None, 0, 0, "0,1",
     "RECOVERED", "INVALID_REQUEST"),
    ("Stale broker epoch: broker 0 at a broker epoch the controller does not register for it", 0, 1, 0, 0, "0,1",
     "RECOVERED", "STALE_BROKER_EPOCH"),
    ("Invalid leader epoch: 500, above the controller's", 0, None, 500, 0, "0,1", "RECOVERED", "NOT_CONTROLLER"),
    ("Invalid partition epoch: 500, above the controller's", 0, None, 0, 500, "0,1", "RECOVERED", "NOT_CONTROLLER"),
    ("Invalid ISR: 3 is not a replica", 0, None, 0, 0, "0,1,3", "RECOVERED", "INVALID_REQUEST"),
    ("Invalid ISR: [1, 2] does not include leader 0", 0, None, 0, 0, "1,2", "RECOVERED", "INVALID_REQUEST"),
    ("Invalid ISR length and recovery state: RECOVERING with [0, 1]", 0, None, 0, 0, "0,1", "RECOVERING",
     "INVALID_REQUEST"),
    ("Invalid recovery state transition from RECOVERED to RECOVERING", 0, None, 0, 0, "0", "RECOVERING",
     "INVALID_REQUEST"),
)


@case(R + "testInvalidAlterPartitionRequests")
def invalid_alter_partition_requests():
    c = Case(R + "testInvalidAlterPartitionRequests",
             "foo on [0, 1, 2], led by 0: AlterPartition requests the leader would not send are refused, each with "
             "its error: from broker 1, which does not lead (INVALID_REQUEST); at a stale broker epoch "
             "(StaleBrokerEpochException: STALE_BROKER_EPOCH); with leader or partition epoch 500 (NOT_CONTROLLER); "
             "with ISR [0, 1, 3] or [1, 2] (INVALID_REQUEST); RECOVERING with ISR [0, 1], and RECOVERING out of "
             "RECOVERED (INVALID_REQUEST).", max_forged_alter_partitions=len(INVALID_ALTER_PARTITIONS))
    c.adapt("foo is the model's topic on [0, 1, 2], led by 0 in leader and partition epoch 0, as in Kafka.  Each "
            "request is an AlterPartitionReceived (a request no leader of the model sends, written by hand as "
            "Kafka's test writes it), answered to no one; its answer is the ghost's forged_answers.  Kafka's broker "
            "epochs are 100 + id, the model's the offsets of the RegisterBrokerRecords (0, 1, 2): the stale one "
            "is 1 for broker 0 (Kafka's brokerEpoch - 1, 99).")
    c.unchecked("the response's topic id and partition index (the model's request names one partition of its one "
                "topic)")
    c.formed()
    for why, b, epoch, leader_epoch, partition_epoch, isr, recovery, error in INVALID_ALTER_PARTITIONS:
        c.do(A.AlterPartitionReceived(b, 0, b if epoch is None else epoch, leader_epoch, partition_epoch, isr,
                                      recovery))
        c.check("ghost.forged_answers.-1", error, why)
    return c


@case(R + "testDeleteTopics")
def delete_topics():
    c = Case(R + "testDeleteTopics",
             "foo with 3 partitions on brokers 0 and 1 (RF 2): deleting it writes one record, after which none of "
             "its partitions has a registration.",
             preset_name="kraft-delete-topic", n_brokers=2, n_partitions=3, replication_factor=2)
    c.adapt("foo is the model's topic, created at the start with the model's assignment rather than by the test's "
            "CreateTopics; deleteTopics is the admin's DeleteTopic, whose RemoveTopicRecord the controller replays "
            "at once (one linearizable log).")
    c.unchecked("the topic's configs, findTopicNames / findTopicIds, and deleting an unknown topic id "
                "(UNKNOWN_TOPIC_ID, no record): the model has one topic, no configs, and its admin deletes only a "
                "topic that exists")
    c.unchecked("getPartition(topicId, 3) (the model's topic has no partition 3 to ask for)")
    c.formed()
    for p in range(3):
        c.check("quorum.partitions.%d.replicas" % p, [[0, 1], [1, 0], [0, 1]][p], "getPartition(topicId, %d) is "
                "not null after the creation" % p)
    records = len(c.s.quorum.log)
    c.do(A.DeleteTopic())
    c.check("quorum.log.%d" % records, {"@type": "RemoveTopicRecord", "partitions": [0, 1, 2]},
            "deleteResult's record: the topic's removal")
    c.check("quorum.batch_ends.-1", records + 1, "deleteResult.records().size() == 1 (one batch, one record)")
    for p in range(3):
        c.check_whole_registration("quorum.partitions.%d" % p, "getPartition(topicId, %d) is null: no registration "
                                   "left (the model keeps an empty one in its place)" % p, replicas=[], isr=[],
                                   leader=-1, leader_epoch=0, partition_epoch=0)
    return c


out_of_scope(R + "testDeleteTopicsWithMutationQuotaExceeded", "topic deletion quotas (admin API, not replication)")
for _name in ("testCreatePartitions", "testCreatePartitionsWithMutationQuotaExceeded"):
    out_of_scope(R + _name, "CreatePartitions requests and quotas (admin API, not replication)")


def _refused(c: Case, create, p: int, error: str, why: str, not_created: str) -> Case:
    """``create`` is refused with ``error`` for partition p: the controller's answer, no record, no partition."""
    before = len(c.s.quorum.log)
    c.do(create)
    c.check(f"ghost.responses.create_partitions.{p}", error, why)
    c.check("quorum.batch_ends.-1", before, "no record: the metadata log is as it was")
    return c.check(f"zk.assignment.{p}", [], not_created)


@case(R + "testCreatePartitionsFailsWhenAllBrokersAreFencedOrInControlledShutdown")
def create_partitions_fails_when_all_brokers_fenced_or_shutting_down():
    c = Case(R + "testCreatePartitionsFailsWhenAllBrokersAreFencedOrInControlledShutdown",
             "foo (replication factor 2) gets a second partition without a manual assignment while broker 1 is fenced "
             "and broker 0 in controlled shutdown: the replica placer places it, none of its replicas is active, and "
             "CreatePartitions is refused with INVALID_REPLICATION_FACTOR, no record written.",
             n_brokers=2, replication_factor=2, n_partitions=2, initial_partitions=1, max_partition_creations=1,
             placed_creations=True, max_controller_moves=1)
    c.adapt("foo is the model's topic, partition 0 ([0, 1]) created at the start and partition 1 not yet "
            "(initial_partitions 1); the admin's CreatePartitions names no replicas (placed_creations), so the "
            "controller's placer chooses them.  Kafka's brokers register again (fenced) and 0 is unfenced and put in "
            "controlled shutdown by a replayed registration change; here broker 1 is fenced when its heartbeats are "
            "lost (and stops, so that no heartbeat unfences it), and broker 0, which then leads partition 0, asks to "
            "shut down at its heartbeat.  Kafka's test marks 0 in controlled shutdown in the registration only (the "
            "heartbeat manager does not count it shutting down, so the placer may use it); the model's controlled "
            "shutdown sets both, so a controller failover (its BrokerHeartbeatManager starts afresh, as at "
            "activation) leaves the same state: 0 usable and unfenced for the placer, in controlled shutdown for "
            "isActive.  The refusal is observed in the controller's answer for partition 1 "
            "(ghost.responses.create_partitions) and in the metadata log, unchanged.")
    c.unchecked("the error message (\"Unable to replicate the partition 2 time(s): All brokers are currently fenced "
                "or in controlled shutdown.\"): the model keeps error codes; this refusal is the controller's own "
                "check after the placement (no active replica), as in Kafka's test")
    c.formed().fence(1).crash(1)
    c.controlled_shutdown(0).heartbeat(0)
    c.check("quorum.registrations.0.in_controlled_shutdown", True, "broker 0 is in controlled shutdown")
    c.check("quorum.registrations.1.fenced", True, "broker 1 is fenced")
    c.do(A.ControllerFailover())
    c.check("quorum.shutdown_offsets.0", -1, "the new controller's heartbeat manager does not count 0 shutting down: "
            "the placer may use it, unfenced, as Kafka's does")
    return _refused(c, A.CreatePartitions(), 1, "INVALID_REPLICATION_FACTOR", "createPartitions' expected error: "
                    "INVALID_REPLICATION_FACTOR", "partition 1 was not created")


for _name in ("testValidateGoodManualPartitionAssignments", "testValidateBadManualPartitionAssignments"):
    out_of_scope(R + _name, "validation of manual replica assignments (admin API, not replication)")
REQUESTS_REFUSED = ("the answers to requests the controller refuses (UNKNOWN_TOPIC_OR_PARTITION for a partition that "
                    "does not exist, INVALID_REPLICA_ASSIGNMENT, NO_REASSIGNMENT_IN_PROGRESS): the model's admin sends "
                    "only the reassignments and cancels the controller accepts")


@case(R + "testReassignPartitions")
def reassign_partitions():
    c = Case(R + "testReassignPartitions",
             "foo-1 ([3, 2, 1], leader 3) reassigned to [0, 2, 1]: the reassignment in progress lists replicas "
             "[0, 2, 1, 3], removing [3], adding [0]; the leader's AlterPartition with ISR [3, 0, 2, 1] completes it "
             "and moves the leadership (3 is removed): NEW_LEADER_ELECTED, and no reassignment is left.",
             n_brokers=4, replication_factor=3, max_reassignments=1)
    c.adapt("foo-1 is the model's partition 0, [0, 1, 2] led by 0: Kafka's brokers 3, 2, 1, 0 are the model's 0, 1, 2, "
            "3, so Kafka's target [0, 2, 1] is the model's [3, 1, 2].  The AlterPartition is the leader's own once the "
            "adding replica has caught up; the test's cancel is not replayed in Kafka either, so the AlterPartition acts "
            "on the reassignment in progress.")
    c.unchecked("foo-0's reassignment to [3, 2, 1], which only rearranges it "
                "(PartitionChangeBuilderTest.testReassignmentRearrangesReplicas's trace checks one)")
    c.unchecked(REQUESTS_REFUSED + ", and the cancels' answers and record (not replayed by the test; "
                "testCancelReassignPartitions's trace checks a cancel)")
    c.unchecked("AlterPartition versions 0 and 1 (FENCED_LEADER_EPOCH instead of NEW_LEADER_ELECTED): the model's "
                "requests are of the latest version")
    c.formed().produce(0).catch_up()
    c.reassign([3, 1, 2])
    c.check_registration("listPartitionReassignments: replicas [0, 2, 1, 3] (model [3, 1, 2, 0]), removing [3] "
                         "(model [0]), adding [0] (model [3])", replicas=[3, 1, 2, 0], removing_replicas=[0],
                         adding_replicas=[3])
    c.replay().catch_up([3])
    c.check_update(0, [0, 1, 2, 3], "broker 3's AlterPartition: ISR [3, 0, 2, 1] (model [0, 1, 2, 3])")
    c.send_alter(0)
    c.check_alter_response(0, "completing the reassignment moved the leadership: NEW_LEADER_ELECTED",
                           error="NEW_LEADER_ELECTED")
    c.check_whole_registration("quorum.partitions.0", "no reassignment in progress (NONE_REASSIGNING): replicas "
                               "[0, 2, 1] (model [3, 1, 2]), ISR without the removed 3, the first target replica in it "
                               "leads (Kafka 0, the model's 3) in a new leader epoch", replicas=[3, 1, 2],
                               isr=[1, 2, 3], leader=3, leader_epoch=1, partition_epoch=2)
    return c


@case(R + "testAlterPartitionShouldRejectFencedBrokers")
def alter_partition_rejects_fenced_brokers():
    c = Case(R + "testAlterPartitionShouldRejectFencedBrokers",
             "KIP-841: after broker 3 is fenced (ISR [1, 2, 4], partition epoch 1), the leader's AlterPartition "
             "adding it back is answered INELIGIBLE_REPLICA; once 3 is unfenced, the same request is accepted: ISR "
             "[1, 2, 3, 4], leader epoch 0, partition epoch 2.",
             n_brokers=4, replication_factor=4)
    c.adapt("Kafka's replicas [1, 2, 3, 4] are the model's [0, 1, 2, 3] (Kafka's fenced 3 is the model's 2).  "
            "Kafka writes the request by hand; here it is the leader's own: broker 2 is fenced and unfenced once, the "
            "leader learns both, then the controller fences 2 again before the leader hears of it, and 2's fetch "
            "makes the leader propose ISR [0, 1, 2, 3] at partition epoch 1 (the fence of a broker outside the ISR "
            "changes no partition).")
    c.adapt("Kafka sends the same request again after handleBrokerUnfenced; here the controller unfences broker 2 (its "
            "next heartbeat) and 2's next fetch makes the leader propose the same ISR at the same epochs.")
    c.unchecked("AlterPartition versions 0 and 1 (OPERATION_NOT_ATTEMPTED instead of INELIGIBLE_REPLICA): the model's "
                "leader sends the latest version")
    c.formed().fence(2)
    c.check_registration("after the fence: ISR [1, 2, 4] (model [0, 1, 3]), leader 1 (model 0), epochs 0 and 1",
                         replicas=[0, 1, 2, 3], isr=[0, 1, 3], leader=0, leader_epoch=0, partition_epoch=1)
    c.replay().unfence(2).replay(0)
    c.fence(2)
    c.fetch(2)
    c.check_update(0, [0, 1, 2, 3], "the request: ISR [1, 2, 3, 4], leader epoch 0, partition epoch 1")
    c.check("brokers.0.alter_isr_unsent.0.request.leader_epoch", 0, "leader epoch 0")
    c.check("brokers.0.alter_isr_unsent.0.request.zk_version", 1, "partition epoch 1")
    c.send_alter(0)
    c.check_alter_response(0, "the fenced broker is ineligible", error="INELIGIBLE_REPLICA")
    c.receive_alter(0)
    c.wait_heartbeat(2)
    c.check("quorum.registrations.2.fenced", False, "handleBrokerUnfenced(3)")
    c.fetch(2)
    c.check_update(0, [0, 1, 2, 3], "the same request again")
    c.check("brokers.0.alter_isr_unsent.0.request.zk_version", 1, "partition epoch 1")
    c.send_alter(0)
    c.check_alter_response(0, "accepted: leader 1 (model 0), leader epoch 0, ISR [1, 2, 3, 4], partition epoch 2",
                           error="NONE", leader=0, leader_epoch=0, isr=[0, 1, 2, 3], zk_version=2)
    return c


@case(R + "testAlterPartitionShouldRejectBrokersWithStaleEpoch")
def alter_partition_rejects_brokers_with_stale_epoch():
    c = Case(R + "testAlterPartitionShouldRejectBrokersWithStaleEpoch",
             "KIP-903: the leader builds an AlterPartition adding broker 4 with the broker epoch of 4's fetches; 4 "
             "then fails, registers again with a new broker epoch and is unfenced; the late request is answered "
             "INELIGIBLE_REPLICA and the ISR stays [1, 2, 3].",
             n_brokers=4, replication_factor=4)
    c.adapt("Kafka's replicas [1, 2, 3, 4] are the model's [0, 1, 2, 3] (Kafka's 4 is the model's 3).  Kafka writes "
            "ISR [1, 2, 3] and the request by hand; here broker 3 leaves the ISR by lagging (the leader's shrink, "
            "partition epoch 1), fetches again, and the leader proposes ISR [0, 1, 2, 3] with the broker epoch of "
            "that fetch.  Broker 3's silent failure is a crash and a restart: it registers with a new broker epoch "
            "and its heartbeat unfences it, as in the test, before the request reaches the controller (the controller "
            "first fences the old incarnation when its session times out: ClusterControlManager.registerBroker "
            "refuses a new incarnation while the old session lives).")
    c.unchecked("AlterPartition versions 0 to 2 (no broker epochs in the ISR entries: the request is accepted): the "
                "model's leader sends the latest version")
    c.formed()
    c.produce(0)
    c.catch_up([1, 2])
    c.sleep(45_000, fetching=[(1, 0), (2, 0)])
    c.alter(0).replay()
    c.check_registration("ISR [1, 2, 3] (model [0, 1, 2]), leader 1 (model 0), leader epoch 0, partition epoch 1",
                         isr=[0, 1, 2], leader=0, leader_epoch=0, partition_epoch=1)
    c.catch_up([3])
    c.check_update(0, [0, 1, 2, 3], "the leader builds ISR [1, 2, 3, 4] (model [0, 1, 2, 3])")
    c.check("brokers.0.alter_isr_unsent.0.request.zk_version", 1, "partition epoch 1")
    old_epoch = c.s.quorum.registrations[3].epoch
    c.check("brokers.0.alter_isr_unsent.0.request.isr_epochs.3", old_epoch,
            "broker 4's entry carries the broker epoch of its fetch, its registration's")
    c.crash(3, clean=False)
    c.sleep(c.cfg.broker_session_timeout_ms + 1000, fetching=[(1, 0), (2, 0)])
    c.check("quorum.registrations.3.fenced", True, "the controller fences broker 4 when its session times out")
    c.restart(3)
    c.check("quorum.log.-1.@type", "RegisterBrokerRecord", "broker 4 registers again")
    c.check("quorum.log.-1.broker_id", 3, "broker 4 registers again")
    c.unfence(3)
    c.check("quorum.registrations.3.fenced", False, "the heartbeat unfences broker 4")
    c.send_alter(0)
    c.check_alter_response(0, "the late request names broker 4's previous epoch: INELIGIBLE_REPLICA",
                           error="INELIGIBLE_REPLICA")
    c.check_registration("the ISR and partition epoch are unchanged", isr=[0, 1, 2], partition_epoch=1)
    return c


@case(R + "testAlterPartitionShouldRejectShuttingDownBrokers")
def alter_partition_rejects_shutting_down_brokers():
    c = Case(R + "testAlterPartitionShouldRejectShuttingDownBrokers",
             "KIP-841: an AlterPartition whose new ISR holds a broker in controlled shutdown is answered "
             "INELIGIBLE_REPLICA.",
             n_brokers=3, replication_factor=3, n_partitions=2)
    c.adapt("A broker that leads nothing shuts down at once, so the shutting-down broker, 1, leads partition 1 "
            "(replicas [1, 2, 0]); the request is for partition 0 (replicas [0, 1, 2], leader 0).  Kafka marks broker "
            "3 shutting down with its ISR untouched and sends ISR [1, 2, 3, 4] at partition epoch 0; the controller "
            "itself takes a shutting-down broker out of every ISR, so here broker 1 first leaves partition 0's ISR "
            "by lagging (the leader's shrink, partition epoch 1), then begins its controlled shutdown, and then "
            "fetches again: the leader, not yet aware of the shutdown, proposes ISR [0, 1, 2] at partition epoch 1.")
    c.unchecked("AlterPartition versions 0 and 1 (OPERATION_NOT_ATTEMPTED): the model's leader sends the latest "
                "version")
    c.formed()
    c.produce(0, n=1, p=0)
    c.catch_up([2], p=0)
    c.sleep(45_000, fetching=[(2, 0), (0, 1), (2, 1)])
    c.alter(0).replay()
    c.check_registration("partition 0: ISR [0, 2], partition epoch 1", p=0, isr=[0, 2], partition_epoch=1)
    c.controlled_shutdown(1).wait_heartbeat(1)
    c.check("quorum.registrations.1.in_controlled_shutdown", True, "broker 1 is in controlled shutdown")
    c.catch_up([1], p=0)
    c.check_update(0, [0, 1, 2], "the leader proposes ISR [0, 1, 2] at partition epoch 1")
    c.check("brokers.0.alter_isr_unsent.0.request.zk_version", 1, "partition epoch 1")
    c.send_alter(0)
    c.check_alter_response(0, "the shutting-down broker is ineligible", error="INELIGIBLE_REPLICA")
    return c


@case(R + "testCancelReassignPartitions")
def cancel_reassign_partitions():
    c = Case(R + "testCancelReassignPartitions",
             "bar-0 ([4, 3, 2], leader 4, broker 3 fenced: ISR [4, 2]) reassigned to [1, 2, 3, 4, 0]: replicas "
             "[1, 2, 3, 4, 0], adding [0, 1], the ISR, leader and leader epoch unchanged, partition epoch 2; cancelled, "
             "it reverts to [2, 3, 4] with leader 4 named in the record (a leader epoch bump), nothing adding or "
             "removing.",
             n_brokers=5, replication_factor=3, max_reassignments=1)
    c.adapt("bar-0 is the model's partition 0, [0, 1, 2] led by 0: Kafka's brokers 4, 3, 2, 1, 0 are the model's 0, 1, "
            "2, 3, 4, so the target [1, 2, 3, 4, 0] is the model's [3, 2, 1, 0, 4].  handleBrokerFenced(3) is the "
            "controller's fence of the model's 1 once its heartbeats are lost.  Kafka's test does not replay its "
            "AlterPartition's records before the cancel, so the trace cancels the reassignment in progress directly.")
    c.unchecked("the foo partitions ([1, 2, 3, 4], [0, 1, 2, 3] and their reassignments to [1, 2, 3] and "
                "[1, 2, 3, 0]): a topic of four hand-assigned partitions")
    c.unchecked(REQUESTS_REFUSED)
    c.unchecked("bar's AlterPartition with ISR [4, 1, 2, 0] answered with partition epoch 3 (its records are not "
                "replayed; the model's leader adds one caught-up follower per AlterPartition)")
    c.unchecked("the registrations' directories (this trace runs without log directories, log_dirs 0: the "
                "directory cases check them)")
    c.formed().fence(1)
    c.check_whole_registration("quorum.partitions.0", "bar after the fence: ISR [4, 2] (model [0, 2]), partition "
                               "epoch 1", replicas=[0, 1, 2], isr=[0, 2], leader=0, leader_epoch=0, partition_epoch=1)
    c.reassign([3, 2, 1, 0, 4])
    c.check_whole_registration("quorum.partitions.0", "bar: replicas [1, 2, 3, 4, 0] (model [3, 2, 1, 0, 4]), ISR "
                               "[4, 2], adding [0, 1] (model {3, 4}), leader 4 (model 0), leader epoch 0, partition "
                               "epoch 2", replicas=[3, 2, 1, 0, 4], isr=[0, 2], leader=0, leader_epoch=0,
                               partition_epoch=2, adding=[3, 4])
    c.reassign(None)
    c.check_whole_registration("quorum.log.-1.registration", "the cancel's record: replicas [2, 3, 4] (model [2, 1, 0]), "
                               "leader 4 (model 0) set: leader epoch + 1, adding cleared (removing was empty), ISR "
                               "unchanged", replicas=[2, 1, 0], isr=[0, 2], leader=0, leader_epoch=1, partition_epoch=3)
    return c


@case(R + "testManualPartitionAssignmentOnAllFencedBrokers")
def manual_partition_assignment_on_all_fenced_brokers():
    c = Case(R + "testManualPartitionAssignmentOnAllFencedBrokers",
             "Creating foo with the manual assignment [0, 1, 2] while brokers 0 to 3 are registered and fenced is "
             "refused with INVALID_REPLICA_ASSIGNMENT, and no record is written.",
             n_brokers=4, initial_partitions=0, max_partition_creations=1, max_session_expirations=4)
    c.adapt("The model's topic, not created at the start (initial_partitions 0), on the model's assignment [0, 1, 2], "
            "which the model's admin sends as a manual one.  Kafka registers brokers 0 to 3 and never unfences them; "
            "here the formed cluster's brokers are fenced when their heartbeats are lost, and the clock stays still so "
            "that no heartbeat unfences them.  The refusal is observed in the controller's answer for partition 0 "
            "(ghost.responses.create_partitions) and in the metadata log, unchanged.")
    c.unchecked("the error message")
    c.fence(0, 1, 2, 3)
    return _refused(c, A.CreateTopic(), 0, "INVALID_REPLICA_ASSIGNMENT", "createTestTopic's expected error: "
                    "INVALID_REPLICA_ASSIGNMENT", "foo has no partition: nothing was created")


@case(R + "testCreatePartitionsFailsWithManualAssignmentWithAllFenced")
def create_partitions_fails_with_manual_assignment_with_all_fenced():
    c = Case(R + "testCreatePartitionsFailsWithManualAssignmentWithAllFenced",
             "Adding foo's second partition on brokers that are all fenced is refused with INVALID_REPLICA_ASSIGNMENT; "
             "on replicas of which one is unfenced it is created: ISR that replica alone, which leads, RECOVERED, "
             "leader and partition epoch 0.",
             n_brokers=6, n_partitions=2, initial_partitions=1, max_partition_creations=2,
             max_session_expirations=3)
    c.adapt("foo is the model's topic with partition 0 ([0, 1, 2]) created at the start and partition 1 not yet "
            "(initial_partitions 1); partition 1's replicas are the model's assignment, [1, 2, 3], which the model's "
            "admin sends as a manual one.  Kafka's brokers 3, 4 and 5 (registered, never unfenced) are the model's 1, "
            "2 and 3, fenced when their heartbeats are lost; 2 and 3 then stop, so that the clock can run to broker "
            "1's heartbeat without theirs unfencing them.  Kafka's second request names other replicas, [2, 4, 5] "
            "with 2 unfenced; the model's admin always names partition 1's, so here it is the same request again "
            "after broker 1 is unfenced: replicas [1, 2, 3] with 1 active, as Kafka's has 2.  The refusal is "
            "observed in the controller's answer for partition 1 (ghost.responses.create_partitions) and in the "
            "metadata log, unchanged.")
    c.unchecked("the replicas' directories; the error message")
    c.formed().fence(1, 2, 3).crash(2).crash(3)
    _refused(c, A.CreatePartitions(), 1, "INVALID_REPLICA_ASSIGNMENT", "createPartitions([3, 4, 5]): "
             "INVALID_REPLICA_ASSIGNMENT", "partition 1 was not created")
    c.unfence(1)
    c.do(A.CreatePartitions())
    c.check("ghost.responses.create_partitions.1", "NONE", "createPartitions([2, 4, 5]): NONE")
    c.check("quorum.log.-1.created", True, "a PartitionRecord")
    return c.check_whole_registration("quorum.partitions.1", "getPartition(fooId, 1): replicas [2, 4, 5] (model "
                                      "[1, 2, 3]), ISR [2] (model [1]), leader 2 (model 1), RECOVERED, leader and "
                                      "partition epoch 0", replicas=[1, 2, 3], isr=[1], leader=1, leader_epoch=0,
                                      partition_epoch=0)


@case(R + "testElectUncleanLeaders_WithoutElr")
def elect_unclean_leaders_without_elr():
    c = Case(R + "testElectUncleanLeaders_WithoutElr",
             "ElectLeaders with the UNCLEAN type after brokers 1, 2 and 3 are fenced: ELIGIBLE_LEADERS_NOT_AVAILABLE for "
             "[1, 2, 3] (leaderless, ISR [1]), ELECTION_NOT_NEEDED for the partitions with a leader; once broker 2 is "
             "unfenced (and back in the ISR of [2, 3, 4]), one record electing 2 uncleanly, ISR [2].",
             n_brokers=5, n_partitions=3, replication_factor=3, max_preferred_elections=6)
    c.adapt("The model's assignment is [0, 1, 2], [1, 2, 3], [2, 3, 4]: Kafka's partitions 0 and 1 ([1, 2, 3], "
            "[2, 3, 4]) are the model's 1 and 2, Kafka's partition 2 ([0, 2, 1]) the model's 0.  One ElectLeaders per "
            "partition (the model's request names one), each through broker 0, and each partition's answer read from "
            "its response; no record is observed as the partition epoch unchanged.  Brokers 1 and 3 stop after they "
            "are fenced, so that the clock can run to broker 2's heartbeat without their heartbeats unfencing them.  "
            "Kafka's ctx.alterPartition (2 back in the ISR of [2, 3, 4]) is leader 4's own proposal once 2 fetches "
            "(every live broker first replays the log, so that 4 leads in the controller's epoch).")
    c.unchecked("electAllPartitions = true (the request naming no partition); the response's top-level error")
    c.formed().fence(2, 3).fence(1).crash(1).crash(3)
    c.check_registration("Kafka's partition 0: no leader, ISR [1]", p=1, leader=-1, isr=[1])
    c.check_registration("Kafka's partition 1: leader 4, ISR [4]", p=2, leader=4, isr=[4])
    c.check_registration("Kafka's partition 2: leader 0, ISR [0]", p=0, leader=0, isr=[0])
    epoch = c.s.quorum.partitions[1].partition_epoch
    for p, error in ((1, "ELIGIBLE_LEADERS_NOT_AVAILABLE"), (2, "ELECTION_NOT_NEEDED"), (0, "ELECTION_NOT_NEEDED")):
        c.do(A.ElectLeaders(0, p, "UNCLEAN"))
        c.check(f"ghost.responses.elect_leaders.0.{p}", error, f"Kafka's expectedResponse1: {error}")
    c.check_registration("no record (result1.records() is empty)", p=1, partition_epoch=epoch, leader=-1)
    c.unfence(2).replay()
    c.fetch(2, p=2, rounds=2).alter(4)
    c.check_registration("Kafka's partition 1: leader 4, ISR [2, 4]", p=2, leader=4, isr=[2, 4])
    c.do(A.ElectLeaders(0, 1, "UNCLEAN"))
    c.check("ghost.responses.elect_leaders.0.1", "NONE", "Kafka's expectedResponse: NONE for partition 0")
    c.check("quorum.log.-1.partition", 1, "one PartitionChangeRecord, for Kafka's partition 0")
    c.check("quorum.log.-1.registration.leader", 2, "partitionChangeRecord.leader() == 2")
    c.check("quorum.log.-1.registration.isr", [2], "partitionChangeRecord.isr() == [2]")
    c.check_registration("Kafka's partition 0: leader 2, ISR [2]", p=1, leader=2, isr=[2])
    c.check_registration("Kafka's partition 1: leader 4, ISR [2, 4]", p=2, leader=4, isr=[2, 4])
    c.check_registration("Kafka's partition 2: leader 0, ISR [0]", p=0, leader=0, isr=[0])
    for p in (2, 0):
        c.do(A.ElectLeaders(0, p, "UNCLEAN"))
        c.check(f"ghost.responses.elect_leaders.0.{p}", "ELECTION_NOT_NEEDED", "Kafka's expectedResponse")
    return c

@case(R + "testPreferredElectionDoesNotTriggerUncleanElection")
def preferred_election_does_not_trigger_unclean_election():
    c = Case(R + "testPreferredElectionDoesNotTriggerUncleanElection",
             "foo [1, 2, 3] leaderless with ISR [1] after 1, 2 and 3 are fenced, 2 unfenced again; once the topic's "
             "unclean.leader.election.enable is turned on, ElectLeaders with the PREFERRED type writes no record and "
             "answers PREFERRED_LEADER_NOT_AVAILABLE.",
             n_brokers=4, replication_factor=3, max_preferred_elections=1, max_config_changes=1, kafka_12670=False)
    c.adapt("Kafka's brokers 1, 2, 3, 4 are the model's 0, 1, 2, 3, so foo [1, 2, 3] is the model's partition 0, "
            "[0, 1, 2].  fenceBrokers is the controller's stale-broker check after each broker's heartbeats are lost "
            "(Kafka's 2 and 3, then 1); brokers 0 and 2 then stop, so that the clock can run to broker 1's heartbeat "
            "(unfenceBrokers(2)) without theirs unfencing them.  alterTopicConfig is the admin's "
            "IncrementalAlterConfigs (AlterTopicConfig), whose ConfigRecord the controller replays at once.  The "
            "model runs 3.7.0's controller (kafka_12670 off), which reads the topic's unclean.leader.election.enable "
            "as false whatever is set; PartitionChangeBuilder's PREFERRED election never elects uncleanly in any "
            "version.  The ElectLeaders goes through broker 3 (Kafka's 4).")
    c.unchecked("the response's top-level error (NONE) and the topic name: the model keeps each partition's error")
    c.formed().fence(1, 2).fence(0).crash(0).crash(2)
    c.unfence(1)
    c.check("quorum.registrations.1.fenced", False, "unfenceBrokers(2): Kafka's 2 is unfenced")
    c.check_registration("assertLeaderAndIsr: no leader, ISR [1] (model [0])", leader=-1, isr=[0])
    epoch = c.s.quorum.partitions[0].partition_epoch
    c.do(A.AlterTopicConfig(True))
    c.check("quorum.log.-1", {"@type": "ConfigRecord", "name": "unclean.leader.election.enable", "value": True},
            "alterTopicConfig: a ConfigRecord setting unclean.leader.election.enable to true")
    records = len(c.s.quorum.log)
    c.do(A.ElectLeaders(3, 0, "PREFERRED"))
    c.check("ghost.responses.elect_leaders.3.0", "PREFERRED_LEADER_NOT_AVAILABLE", "Kafka's expectedResponse: "
            "PREFERRED_LEADER_NOT_AVAILABLE for foo-0")
    c.check("quorum.batch_ends.-1", records, "result.records() is empty: the log ends at the ConfigRecord")
    c.check_registration("still no leader, ISR [1] (model [0]), the partition epoch unchanged", leader=-1, isr=[0],
                         partition_epoch=epoch)
    return c


@case(R + "testFenceMultipleBrokers")
def fence_multiple_brokers():
    c = Case(R + "testFenceMultipleBrokers",
             "Fencing brokers 2 and 3: partition [1, 2, 3] keeps ISR [1] with leader 1, partition [2, 3, 4] moves to "
             "ISR [4] with leader 4, partition [0, 2, 1] keeps ISR [0, 1] with a leader other than 2.",
             n_brokers=5, n_partitions=3, replication_factor=3)
    c.adapt("The model's assignment is [0, 1, 2], [1, 2, 3], [2, 3, 4]: Kafka's partitions 0 and 1 ([1, 2, 3], "
            "[2, 3, 4]) are the model's 1 and 2, and Kafka's partition 2 ([0, 2, 1]) is the model's 0 ([0, 1, 2]: the "
            "same replicas in another order).  fenceBrokers is the controller's stale-broker check after each "
            "broker's heartbeats are lost.")
    c.formed().fence(2, 3)
    c.check_registration("Kafka's partition 0", p=1, replicas=[1, 2, 3], isr=[1], leader=1)
    c.check_registration("Kafka's partition 1", p=2, replicas=[2, 3, 4], isr=[4], leader=4)
    c.check_registration("Kafka's partition 2: ISR [0, 1], leader not 2 (here the first replica, 0)", p=0,
                         isr=[0, 1], leader=0)
    return c


@case(R + "testElectPreferredLeaders")
def elect_preferred_leaders():
    c = Case(R + "testElectPreferredLeaders",
             "ElectLeaders with the PREFERRED type while broker 0 is fenced and broker 1 in controlled shutdown: "
             "PREFERRED_LEADER_NOT_AVAILABLE for [1, 2, 3] and [0, 2, 1], whose preferred replicas cannot lead, "
             "ELECTION_NOT_NEEDED for [2, 3, 4], led by its preferred replica 2; no record.",
             n_brokers=5, n_partitions=3, replication_factor=3, max_preferred_elections=3)
    c.adapt("The model's assignment is [0, 1, 2], [1, 2, 3], [2, 3, 4]: Kafka's partitions 0 and 1 ([1, 2, 3], "
            "[2, 3, 4]) are the model's 1 and 2, Kafka's partition 2 ([0, 2, 1]) the model's 0 ([0, 1, 2]: the same "
            "preferred replica, 0).  Kafka creates the topic while 0 is fenced and 1 shutting down; here the formed "
            "cluster's broker 1 begins a controlled shutdown (its leaderships move to 2) and then 0 is fenced.  One "
            "ElectLeaders per partition, each through broker 2; no record is observed as the partition epochs "
            "unchanged.")
    c.unchecked("the unknown topic bar (UNKNOWN_TOPIC_OR_PARTITION: the model has one topic); the second election, "
                "after broker 1 registers again and 0 and 1 are unfenced and back in the ISRs (expectedResponse2)")
    c.formed().controlled_shutdown(1).wait_heartbeat(1).fence(0)
    c.check("quorum.registrations.1.in_controlled_shutdown", True, "broker 1 is in controlled shutdown")
    c.check("quorum.registrations.0.fenced", True, "broker 0 is fenced")
    epochs = [part.partition_epoch for part in c.s.quorum.partitions]
    for p, error in ((1, "PREFERRED_LEADER_NOT_AVAILABLE"), (2, "ELECTION_NOT_NEEDED"),
                     (0, "PREFERRED_LEADER_NOT_AVAILABLE")):
        c.do(A.ElectLeaders(2, p))
        c.check(f"ghost.responses.elect_leaders.2.{p}", error, f"Kafka's expectedResponse1: {error}")
    for p in range(3):
        c.check_registration("no record (election1Result.records() is empty)", p=p, partition_epoch=epochs[p])
    return c


@case(R + "testBalancePartitionLeaders")
def balance_partition_leaders():
    c = Case(R + "testBalancePartitionLeaders",
             "With brokers 0 and 1 fenced, [1, 2, 3] and [0, 2, 1] are led by 2: the partitions are imbalanced.  Once 1 "
             "is unfenced and back in the ISR of [1, 2, 3], the controller's leader balancing writes one record, leader "
             "1 for that partition, and the partitions stay imbalanced; once 0 is unfenced and back in the ISR of "
             "[0, 2, 1], the next run writes leader 0 for it, and no partition is imbalanced.",
             preset_name="kraft-leader-balance", n_brokers=5, n_partitions=3, replication_factor=3)
    c.adapt("The model's assignment is [0, 1, 2], [1, 2, 3], [2, 3, 4]: Kafka's partitions 0 and 1 ([1, 2, 3], "
            "[2, 3, 4]) are the model's 1 and 2, Kafka's partition 2 ([0, 2, 1]) the model's 0 ([0, 1, 2]: the same "
            "preferred replica, 0).  Kafka creates the topic while 0 and 1 are fenced; here the formed cluster's "
            "brokers 0 and 1 are fenced when their heartbeats are lost, which moves the leaderships of the model's 0 "
            "and 1 to 2.  arePartitionLeadersImbalanced is observed as the balancing run being scheduled "
            "(quorum.next_balance_ms, leader.imbalance.check.interval 10 s in the preset: a run is scheduled after a "
            "write that leaves a partition imbalanced, and only then), and maybeBalancePartitionLeaders is that run "
            "when it falls due (AutoLeaderRebalance).  Broker 0 stops after it is fenced, so that the clock can run "
            "without its heartbeats unfencing it; ctx.unfenceBrokers(0) is its restart (a new registration) and the "
            "heartbeat that unfences it.  Kafka's ctx.alterPartition requests are leader 2's own expansions once the "
            "unfenced broker fetches (broker 1 joins the ISR of the model's 0 too: its preferred replica 0 is fenced "
            "then, so the first run leaves it led by 2, as Kafka's does).")
    c.unchecked("the response's 'reschedule immediately' flag (false: the model reschedules IMMEDIATELY only past "
                "1,000 elections in a run, which one topic of three partitions never reaches)")
    c.formed().fence(0, 1).crash(0)
    t0 = c.s.now
    c.check_registration("Kafka's partition 0 ([1, 2, 3]): leader 2", p=1, leader=2, isr=[2, 3])
    c.check_registration("Kafka's partition 2 ([0, 2, 1]): leader 2", p=0, leader=2, isr=[2])
    c.check("quorum.next_balance_ms", t0 + 10000, "arePartitionLeadersImbalanced(): a balancing run is scheduled, "
            "10 s after the fences' writes")
    c.unfence(1).replay(1, 2)
    c.fetch(1, p=1, rounds=2).fetch(1, p=0, rounds=2).alter(2)
    c.check_registration("Kafka's alterPartition: ISR [1, 2, 3], leader 2, leader epoch unchanged (the model's 1: "
                         "the fence of 1 moved the leadership; Kafka's 0)", p=1, leader=2, isr=[1, 2, 3], leader_epoch=1)
    c.check_registration("broker 1 is back in the ISR of Kafka's partition 2 too; its preferred replica 0 is fenced",
                         p=0, leader=2, isr=[1, 2])
    c.sleep(t0 + 10000 - c.s.now, run_at_end=False)
    before = len(c.s.quorum.log)
    c.do(A.AutoLeaderRebalance(-1))
    c.check("quorum.batch_ends.-1", before + 1, "balanceResult.records(): one record")
    c.check("quorum.log.-1.partition", 1, "a PartitionChangeRecord for Kafka's partition 0")
    c.check("quorum.log.-1.registration.leader", 1, "expectedChangeRecord: leader 1")
    c.check("quorum.log.-1.registration.isr", [1, 2, 3], "expectedChangeRecord sets no ISR: it stays [1, 2, 3]")
    c.check("quorum.log.-1.registration.leader_epoch", 2, "a new leader: leader epoch + 1 (Kafka's 1)")
    c.check("quorum.next_balance_ms", t0 + 20000, "arePartitionLeadersImbalanced() is still true: the next run is "
            "scheduled (DEFERRED, 10 s later)")
    c.restart(0).unfence(0).replay()
    c.fetch(0, p=0, rounds=2).alter(2)
    c.check_registration("Kafka's alterPartition: ISR [0, 2, 1], leader 2", p=0, leader=2, isr=[0, 1, 2])
    c.sleep(t0 + 20000 - c.s.now, run_at_end=False)
    before = len(c.s.quorum.log)
    c.do(A.AutoLeaderRebalance(-1))
    c.check("quorum.batch_ends.-1", before + 1, "balanceResult.records(): one record")
    c.check("quorum.log.-1.partition", 0, "a PartitionChangeRecord for Kafka's partition 2")
    c.check("quorum.log.-1.registration.leader", 0, "expectedChangeRecord: leader 0")
    c.check("quorum.next_balance_ms", -1, "arePartitionLeadersImbalanced() is false: no run scheduled")
    return c


out_of_scope(R + "testKRaftClusterDescriber", "the cluster describer's accessors (racks, default directories)")


@case(R + "testProcessBrokerHeartbeatInControlledShutdown")
def heartbeat_in_controlled_shutdown():
    c = Case(R + "testProcessBrokerHeartbeatInControlledShutdown",
             "A heartbeat asking to shut down from broker 0, which leads [0, 1, 2]: the controller writes a "
             "BrokerRegistrationChangeRecord (in controlled shutdown) and a PartitionChangeRecord moving the "
             "leadership to 1 with ISR [1, 2].",
             n_brokers=3, replication_factor=3)
    c.adapt("The heartbeat is broker 0's own after ControlledShutdown (BrokerLifecycleManager's wantShutDown).")
    c.unchecked("metadata version 3.3-IV2, without the in-controlled-shutdown record: the model writes it in every "
                "version (model/README.md)")
    c.formed().controlled_shutdown(0).heartbeat(0)
    why = "the records: BrokerRegistrationChangeRecord (broker 0, epoch 0), then PartitionChangeRecord ISR [1, 2], leader 1"
    c.check("quorum.log.-2.@type", "BrokerRegistrationChangeRecord", why)
    c.check("quorum.log.-2.broker_id", 0, why)
    c.check("quorum.log.-2.broker_epoch", 0, why)
    c.check("quorum.log.-1.@type", "PartitionChangeRecord", why)
    c.check("quorum.log.-1.partition", 0, why)
    c.check("quorum.log.-1.registration.isr", [1, 2], why)
    c.check("quorum.log.-1.registration.leader", 1, why)
    return c


@case(R + "testProcessExpiredBrokerHeartbeat")
def process_expired_broker_heartbeat():
    c = Case(R + "testProcessExpiredBrokerHeartbeat",
             "Brokers 0, 1, 2 registered and unfenced; 100 ms later a heartbeat of broker 0 that timed out in the "
             "controller's queue (processExpiredBrokerHeartbeat) still touches its session: its last contact is "
             "now, and its metadata offset the heartbeat's.", max_expired_heartbeats=1)
    c.adapt("The heartbeat is broker 0's own, due one heartbeat interval (2 s) after its first, which it sent before "
            "replaying anything (Kafka's test calls processExpiredBrokerHeartbeat by hand 100 ms after the start): "
            "ExpiredBrokerHeartbeat, the heartbeat timing out in the controller's queue.  Its metadata offset is the "
            "broker's replayed offset, the end of the formed cluster's log (Kafka's request says 123).")
    c.unchecked("the broker's side, which Kafka's test does not reach: it reads REQUEST_TIMED_OUT and its lifecycle "
                "manager retries 100 ms later (tests/test_forged_requests.py)")
    c.heartbeat(0)                  # broker 0's first heartbeat, before it replays: offset 0, at the start
    c.check("quorum.reported_offsets.0", 0, "before: the controller holds offset 0 for broker 0")
    c.formed().run_due_tasks()
    due = c.cfg.start_time_ms + c.cfg.broker_heartbeat_interval_ms
    c.check("quorum.last_contact_ms.0", c.cfg.start_time_ms, "before: broker 0's last contact is the start")
    c.sleep(due - c.s.now, run_at_end=False)
    c.do(A.ExpiredBrokerHeartbeat(0))
    c.check("quorum.last_contact_ms.0", due, "lastContactNs: the time the expired heartbeat was processed")
    c.check("quorum.reported_offsets.0", 4, "metadataOffset: the heartbeat's, the end of the log (three "
            "RegisterBrokerRecords and foo's PartitionRecord)")
    return c


@case(R + "testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas")
def new_reassignment_removes_adding_replicas():
    name = R + "testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas"
    c = Case(name,
             "[0, 1] reassigned to [2, 3] (removing [0, 1], adding [2, 3], replicas [2, 3, 0, 1]); 2 joins the ISR "
             "and a preferred election makes it the leader; a second reassignment to [4, 5] removes [0, 1, 2, 3] "
             "(2 and 3 were adding) and adds [4, 5], replicas [4, 5, 0, 1, 2, 3], with 2 still leading; the ISR "
             "growing to all six completes it: NEW_LEADER_ELECTED, 4 leads, no reassignment left.",
             n_brokers=6, replication_factor=2, max_reassignments=2, max_preferred_elections=1)
    c.adapt("The brokers' ids are the model's.  Each AlterPartition is the leader's own: the leader adds one caught-up "
            "follower per request, so Kafka's single request with ISR [0, 1, 2, 3, 4, 5] is three (3, then 4, then "
            "5), the last one the same request as Kafka's.  The preferred election is an admin's ElectLeaders "
            "(PREFERRED) through broker 0.")
    c.formed().produce(0).catch_up()
    c.reassign([2, 3])
    c.check_registration("listPartitionReassignments: removing [0, 1], adding [2, 3], replicas [2, 3, 0, 1]",
                         replicas=[2, 3, 0, 1], removing_replicas=[0, 1], adding_replicas=[2, 3])
    c.replay().catch_up([2])
    c.check_update(0, [0, 1, 2], "add replica 2 to the ISR")
    c.send_alter(0)
    c.check_alter_response(0, "Kafka's AlterPartition answer: NONE, ISR [0, 1, 2], partition epoch + 1", error="NONE",
                           isr=[0, 1, 2], zk_version=2, leader=0, leader_epoch=0)
    c.receive_alter(0).replay()
    c.do(A.ElectLeaders(0, 0, "PREFERRED"))
    c.check("ghost.responses.elect_leaders.0.0", "NONE", "the preferred election answers NONE")
    c.check_registration("2, first in the replicas, leads", leader=2)
    c.replay()
    c.reassign([4, 5])
    c.check_registration("listPartitionReassignments: removing [0, 1, 2, 3], adding [4, 5], replicas "
                         "[4, 5, 0, 1, 2, 3], and 2 still leads, a replica", replicas=[4, 5, 0, 1, 2, 3],
                         removing_replicas=[0, 1, 2, 3], adding_replicas=[4, 5], leader=2)
    c.replay()
    for b, isr in ((3, [0, 1, 2, 3]), (4, [0, 1, 2, 3, 4])):
        c.catch_up([b])
        c.check_update(2, isr, f"the leader adds {b} (the reassignment stays open while 4 or 5 is missing)")
        c.alter(2).replay()
    c.catch_up([5])
    c.check_update(2, [0, 1, 2, 3, 4, 5], "Kafka's AlterPartition: ISR [0, 1, 2, 3, 4, 5]")
    c.send_alter(2)
    c.check_alter_response(2, "the ISR change completed the reassignment and moved the leadership",
                           error="NEW_LEADER_ELECTED")
    c.check_whole_registration("quorum.partitions.0", "4 leads and no reassignment is left (NONE_REASSIGNING): "
                               "replicas [4, 5], the removed replicas out of the ISR, leader epoch + 1 (the preferred "
                               "election's 1, then 2); partition epoch: one per record (2 reassignments, 5 "
                               "AlterPartitions, 1 election)", replicas=[4, 5], isr=[4, 5], leader=4, leader_epoch=2,
                               partition_epoch=7)
    return c


out_of_scope(R + "testDuplicateTopicIdReplay", "replaying a TopicRecord twice (metadata log bookkeeping)")
@case(R + "testHandleAssignReplicasToDirsFailsOnOlderMv")
def handle_assign_replicas_to_dirs_fails_on_older_mv():
    c = Case(R + "testHandleAssignReplicasToDirsFailsOnOlderMv",
             "Metadata version 3.7-IV1 (before directory assignment, 3.7-IV2): AssignReplicasToDirs is refused "
             "(UnsupportedVersionException).", log_dirs=2, metadata_version="3.7-IV1")
    c.adapt("Kafka's request is empty; here broker 0 assigns its replica of partition 0 to its first directory (the "
            "whole request is refused, whatever it holds).  Before 3.7-IV2 no broker sends one (ReplicaManager reports "
            "directories only with directory assignment): the request is the trace's, as the test's is.")
    c.formed()
    n = len(c.s.quorum.log)
    c.do(A.AssignReplicasToDirs(0, 0, "b0d0"))
    c.check("ghost.responses.assign_replicas_to_dirs.0.0", "UNSUPPORTED_VERSION", "UnsupportedVersionException")
    c.check_whole_registration("quorum.partitions.0", "the registration unchanged, with no directories (none before "
                               "3.7-IV2)", replicas=[0, 1, 2], isr=[0, 1, 2], leader=0, leader_epoch=0,
                               partition_epoch=0)
    c.check("quorum.batch_ends.-1", n, "no record after the refusal (the log ends where it ended)")
    return c


@case(R + "testHandleAssignReplicasToDirs")
def handle_assign_replicas_to_dirs():
    c = Case(R + "testHandleAssignReplicasToDirs",
             "Broker 1 (directories dir1b1, dir2b1) assigns a-0 and b-0 to dir1b1, a-1 to dir2b1 (NONE, each "
             "partition's directories updated), b-1 to LOST (NONE; a second record moves b-1's leadership to 2 with "
             "ISR [2], its directory being offline), a-137 (UNKNOWN_TOPIC_OR_PARTITION), c-0 on [2] only "
             "(NOT_LEADER_OR_FOLLOWER); after replay broker 1 leads a-0, a-1, b-0 and broker 2 leads b-1.",
             n_brokers=3, n_partitions=5, replication_factor=2, initial_partitions=4, log_dirs=2)
    c.adapt("Kafka's broker 1 is the model's 0; the model has one topic: Kafka's b-1 is the model's partition 0 ([0, "
            "1], led by 0: Kafka's broker 2 is the model's 1 there), a-0 the model's 3 ([0, 2]), a-1 the model's 2 "
            "([2, 0], led by 2), c-0 (no replica on Kafka's 1) the model's 1 ([1, 2]), a-137 the model's 4, not "
            "created (initial_partitions 4).  The model gives every broker two directories: Kafka's broker 2 has one, "
            "its replicas' default directory, so here the other brokers first report where their logs went (their "
            "own AssignReplicasToDirs), as dir1b2 is there from the start.  Kafka's one request is one "
            "AssignReplicasToDirs per partition here, each its own batch, in the test's order.  NOT_LEADER_OR_FOLLOWER "
            "is the model's NOT_LEADER_FOR_PARTITION (error code 6, renamed in 2.6).")
    c.unchecked("b-0 (dir1b1, NONE): the model's broker 0 has three partitions, used for a-0, a-1 and b-1; the "
                "unknown topic id (UNKNOWN_TOPIC_ID: the model has one topic)")
    c.formed().report_dirs(1, 2)
    c.check("quorum.partitions.3.directories", ["UNASSIGNED", "b2d0"], "a-0 before: broker 0 (several directories) "
            "UNASSIGNED, its partner in its directory")
    c_epoch = c.s.quorum.partitions[1].partition_epoch
    for p, d, why in ((3, "b0d0", "a-0 to dir1b1"), (2, "b0d1", "a-1 to dir2b1"), (0, "LOST", "b-1 to LOST"),
                      (4, "b0d0", "a-137"), (1, "b0d0", "c-0, not on broker 1")):
        c.do(A.AssignReplicasToDirs(0, p, d))
    for p, error in ((3, "NONE"), (2, "NONE"), (0, "NONE"), (4, "UNKNOWN_TOPIC_OR_PARTITION"),
                     (1, "NOT_LEADER_FOR_PARTITION")):
        c.check(f"ghost.responses.assign_replicas_to_dirs.0.{p}", error, f"Kafka's response: {error}")
    c.check("quorum.partitions.3.directories", ["b0d0", "b2d0"], "a-0's record: directories [dir1b1, dir1b2]")
    c.check("quorum.partitions.2.directories", ["b2d1", "b0d1"], "a-1's record: directories [dir2b1, dir1b2] (the "
            "model's replicas [2, 0])")
    c.check("quorum.partitions.0.directories", ["LOST", "b1d0"], "b-1's record: directories [LOST, dir1b2]")
    c.check("quorum.log.-1.registration.isr", [1], "then b-1's second record: ISR [2] (the model's 1)")
    c.check("quorum.log.-1.registration.leader", 1, "... and leader 2 (the model's 1)")
    c.check_registration("b-1 after replay: led by Kafka's broker 2 (brokersToIsrs)", p=0, leader=1, isr=[1])
    c.check_registration("a-0 after replay: still led by broker 1 (the model's 0)", p=3, leader=0, isr=[0, 2])
    c.check_registration("c-0 unchanged: no record", p=1, partition_epoch=c_epoch)
    return c


@case(R + "testHandleDirectoriesOffline")
def handle_directories_offline():
    c = Case(R + "testHandleDirectoriesOffline",
             "Brokers b1 and b2, two directories each; a-0 and b-0 in each broker's first directory, a-1 and b-1 in "
             "its second.  b1 reports dir1b1 offline: a-0 and b-0 move to leader b2 with ISR [b2], then a "
             "BrokerRegistrationChangeRecord leaves b1 with directories [dir2b1]: three records.",
             n_brokers=2, n_partitions=4, replication_factor=2, log_dirs=2, max_log_dir_failures=1)
    c.adapt("b1 and b2 are the model's 0 and 1; the model's four partitions are [0, 1], [1, 0], [0, 1], [1, 0]: Kafka's "
            "a-0 and b-0 (led by b1) the model's 0 and 2, a-1 and b-1 the model's 1 and 3.  Each broker places its "
            "logs in its directory with the fewest, alternately, which is the test's assignment, and reports it "
            "(AssignReplicasToDirs).  Kafka's handleDirectoriesOffline call is here the fault LogDirFailure on b1's "
            "first directory and b1's heartbeat that names it.  Kafka's BrokerRegistrationChangeRecord with LogDirs is "
            "the model's BrokerLogDirsChangeRecord.")
    c.unchecked("dir1b2 in the same call (another broker's directory changes nothing): a broker's own heartbeat names "
                "only its own directories")
    c.formed().report_dirs(0, 1)
    c.check("quorum.partitions.0.directories", ["b0d0", "b1d0"], "a-0 in dir1b1 and dir1b2")
    c.check("quorum.partitions.1.directories", ["b1d1", "b0d1"], "a-1 in dir2b2 and dir2b1 (replicas [1, 0])")
    n = len(c.s.quorum.log)
    c.do(A.LogDirFailure(0, 0)).heartbeat(0)
    c.check(f"quorum.log.{n}.partition", 0, "first record: a-0 ...")
    c.check(f"quorum.log.{n}.registration.leader", 1, "... led by b2")
    c.check(f"quorum.log.{n}.registration.isr", [1], "... with ISR [b2]")
    c.check(f"quorum.log.{n + 1}.partition", 2, "second record: b-0 ...")
    c.check(f"quorum.log.{n + 1}.registration.leader", 1, "... led by b2")
    c.check(f"quorum.log.{n + 1}.registration.isr", [1], "... with ISR [b2]")
    c.check(f"quorum.log.{n + 2}.@type", "BrokerLogDirsChangeRecord", "third record: b1's directories ...")
    c.check(f"quorum.log.{n + 2}.log_dirs", ["b0d1"], "... [dir2b1]")
    c.check("quorum.log.-1.@type", "BrokerLogDirsChangeRecord", "three records (records.size() == 3)")
    c.check("quorum.registrations.0.directories", ["b0d1"], "after replay b1's registration has directories [dir2b1]")
    c.check_registration("a-1 keeps its leader (b2, the model's 1)", p=1, leader=1, isr=[0, 1])
    return c
