"""PartitionLeaderElectionAlgorithmsTest, ControllerChannelManagerTest, ControllerIntegrationTest (Kafka 2.4.0)."""

from __future__ import annotations

from isrlab.model import actions as A
from kafkacase import Case, case, missing, out_of_scope

# ============================================================================ PartitionLeaderElectionAlgorithmsTest
# Kafka's unit test calls the election function with an assignment [2, 4]; here brokers 0 and 1 stand
# for Kafka's 2 and 4 (assignment [0, 1]), and the controller's offline election runs when broker 0
# (Kafka's 2) stops.  The controller lives on broker 1, the one replica that stays up.

ELECTION = dict(n_brokers=2, replication_factor=2)
P = "PartitionLeaderElectionAlgorithmsTest."


@case(P + "testOfflinePartitionLeaderElection")
def offline_election():
    c = Case(P + "testOfflinePartitionLeaderElection",
             "Assignment [2, 4] (here [0, 1]), ISR [2, 4], only 4 (here 1) live: the offline election picks the "
             "first live replica in assignment order that is in the ISR, 4 (here 1).", **ELECTION)
    c.create_topic(controller=1).catch_up()
    c.check("zk.partition_states.0.isr", [0, 1], "ISR [2, 4] (here [0, 1])")
    c.crash(0).broker_change(1)
    c.check("zk.partition_states.0.leader", 1, "the leader is 4 (here 1)")
    return c


def _last_isr_offline(name: str, unclean: bool) -> Case:
    c = Case(P + name,
             "Assignment [2, 4] (here [0, 1]), ISR [2] (here [0]) and only 4 (here 1) live: with unclean leader "
             "election " + ("enabled the out-of-sync replica 4 (here 1) is elected and the unclean-election count "
                            "is 1" if unclean else "disabled no leader is elected (NoLeader) and no unclean "
                                                   "election is counted") + ".",
             unclean_leader_election=unclean, **ELECTION)
    c.create_topic(controller=1)
    c.sleep(15000)                       # broker 1 never fetches: the leader drops it from the ISR
    c.check("zk.partition_states.0.isr", [0], "ISR [2] (here [0])")
    c.crash(0).broker_change(1)
    if unclean:
        c.check("zk.partition_states.0.leader", 1, "the unclean election picks 4 (here 1)")
        c.check("ghost.unclean_elections", 1, "uncleanLeaderElectionRate counts 1")
    else:
        c.check("zk.partition_states.0.leader", -1, "no leader (None)")
        c.check("ghost.unclean_elections", 0, "uncleanLeaderElectionRate counts 0")
    return c


@case(P + "testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionDisabled")
def last_isr_offline_disabled():
    return _last_isr_offline("testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionDisabled", False)


@case(P + "testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionEnabled")
def last_isr_offline_enabled():
    return _last_isr_offline("testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionEnabled", True)


# The preferred-replica and controlled-shutdown elections run as the controller runs them: the admin's
# /admin/preferred_replica_election (PreferredReplicaElection, then the controller's handling) and a broker's
# ControlledShutdown request.  Where Kafka's test has replicas that are not live, here they are stopped brokers.
PREFERRED = dict(ELECTION, max_preferred_elections=1)
SHUTDOWN = dict(ELECTION, controlled_shutdown_enable=True)


def preferred_election(c: Case, controller: int, p: int = 0) -> Case:
    """The admin creates /admin/preferred_replica_election for p; the controller handles it and deletes the znode."""
    return c.do(A.PreferredReplicaElection(p)).do(A.ControllerProcessPreferredReplicaElection(controller))


def controlled_shutdown_request(c: Case, b: int) -> Case:
    """Broker b sends ControlledShutdown to the controller, which handles it (the response waits at b)."""
    return c.do(A.ControlledShutdown(b)).do(A.ControlledShutdownRequest(b))


def _leader_1_isr(c: Case, catch_up: bool) -> Case:
    """Broker 0 (Kafka's 2) stops and comes back: broker 1 (Kafka's 4) leads in epoch 1; with ``catch_up`` broker 0
    fetches and rejoins the ISR."""
    c.create_topic(controller=1).catch_up()
    c.crash(0).broker_change(1).deliver_all()
    c.check("zk.partition_states.0.leader", 1, "4 (here 1) leads")
    c.restart(0).broker_change(1).deliver_all()
    if catch_up:
        c.catch_up()
    return c


@case(P + "testPreferredReplicaPartitionLeaderElection")
def preferred_replica_election():
    c = Case(P + "testPreferredReplicaPartitionLeaderElection",
             "Assignment [2, 4] (here [0, 1]), ISR [2, 4], both live: the preferred-replica election picks the "
             "first assigned replica, 2 (here 0).", **PREFERRED)
    c.adapt("The election runs when 4 (here 1) leads: 2 (here 0) stopped, came back and caught up.")
    _leader_1_isr(c, catch_up=True)
    c.check("zk.partition_states.0.isr", [0, 1], "ISR [2, 4] (here [0, 1])")
    preferred_election(c, 1)
    c.check("zk.partition_states.0.leader", 0, "the preferred replica 2 (here 0) leads")
    c.check("zk.partition_states.0.leader_epoch", 2, "in a new leader epoch")
    c.check("zk.partition_states.0.isr", [0, 1], "the ISR unchanged")
    return c


@case(P + "testPreferredReplicaPartitionLeaderElectionPreferredReplicaInIsrNotLive")
def preferred_in_isr_not_live():
    c = Case(P + "testPreferredReplicaPartitionLeaderElectionPreferredReplicaInIsrNotLive",
             "Assignment [2, 4] (here [0, 1]), ISR [2] (here [0]), no replica live: no preferred leader is elected "
             "(None): the partition stays without a leader.", n_brokers=3, replication_factor=2,
             max_preferred_elections=1)
    c.adapt("The controller lives on broker 2, outside the assignment; broker 1 never fetches and leaves the "
            "ISR, then both replicas stop.")
    c.create_topic(controller=2)
    c.sleep(15000)                       # broker 1 never fetches: the leader drops it from the ISR
    c.check("zk.partition_states.0.isr", [0], "ISR [2] (here [0])")
    c.crash(0).crash(1).broker_change(2).deliver_all()
    c.check("zk.partition_states.0.leader", -1, "no replica is live: no leader")
    preferred_election(c, 2)
    c.check("zk.partition_states.0.leader", -1, "no preferred leader elected (None)")
    c.check("zk.partition_states.0.leader_epoch", 1, "the partition state is not written")
    c.check("zk.preferred_replica_election", [], "the admin's request is done (the znode deleted)")
    return c


@case(P + "testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrLive")
def preferred_not_in_isr_live():
    c = Case(P + "testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrLive",
             "Assignment [2, 4] (here [0, 1]), ISR [4] (here [1]), both live: the preferred replica is not in the "
             "ISR, so no leader is elected (None) and 4 (here 1) keeps leading.", **PREFERRED)
    c.adapt("2 (here 0) stopped and came back but has not fetched yet, so it is live and out of the ISR.")
    _leader_1_isr(c, catch_up=False)
    c.check("zk.partition_states.0.isr", [1], "ISR [4] (here [1])")
    preferred_election(c, 1)
    c.check("zk.partition_states.0.leader", 1, "no preferred leader elected: 4 (here 1) still leads")
    c.check("zk.partition_states.0.leader_epoch", 1, "the partition state is not written")
    return c


@case(P + "testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrNotLive")
def preferred_not_in_isr_not_live():
    c = Case(P + "testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrNotLive",
             "Assignment [2, 4] (here [0, 1]), the preferred replica 2 (here 0) neither live nor in the ISR: no "
             "leader is elected (None).", **PREFERRED)
    c.adapt("Kafka's test has an empty ISR, which the 2.4 controller never writes (the last ISR member is kept): "
            "here the ISR is [4] (here [1]), the live leader, and 2 (here 0) is stopped.")
    c.create_topic(controller=1).catch_up()
    c.crash(0).broker_change(1).deliver_all()
    c.check("zk.partition_states.0.isr", [1], "2 (here 0) is out of the ISR")
    preferred_election(c, 1)
    c.check("zk.partition_states.0.leader", 1, "no preferred leader elected")
    c.check("zk.partition_states.0.leader_epoch", 1, "the partition state is not written")
    return c


@case(P + "testControlledShutdownPartitionLeaderElection")
def controlled_shutdown_election():
    c = Case(P + "testControlledShutdownPartitionLeaderElection",
             "Assignment [2, 4] (here [0, 1]), ISR [2, 4], both live, 2 (here 0) shutting down: the controlled-"
             "shutdown election picks 4 (here 1) and drops 2 from the ISR.", **SHUTDOWN)
    c.create_topic(controller=1).catch_up()
    c.check("zk.partition_states.0.isr", [0, 1], "ISR [2, 4] (here [0, 1])")
    controlled_shutdown_request(c, 0)
    c.check("zk.partition_states.0.leader", 1, "4 (here 1) leads")
    c.check("zk.partition_states.0.isr", [1], "without the shutting-down broker")
    c.check("brokers.0.controlled_shutdown.response", ["NONE", []], "2 (here 0) leads nothing any more")
    return c


@case(P + "testControlledShutdownPartitionLeaderElectionLastIsrShuttingDown")
def controlled_shutdown_last_isr():
    c = Case(P + "testControlledShutdownPartitionLeaderElectionLastIsrShuttingDown",
             "Assignment [2, 4] (here [0, 1]), ISR [2] (here [0]), both live, 2 shutting down: no leader is elected "
             "(None); 2 keeps leading and the controller says so.", **SHUTDOWN)
    c.create_topic(controller=1)
    c.sleep(15000)                       # broker 1 never fetches: the leader drops it from the ISR
    c.check("zk.partition_states.0.isr", [0], "ISR [2] (here [0])")
    controlled_shutdown_request(c, 0)
    c.check("zk.partition_states.0.leader", 0, "no new leader (None): 2 (here 0) still leads")
    c.check("zk.partition_states.0.leader_epoch", 0, "the partition state is not written")
    c.check("brokers.0.controlled_shutdown.response", ["NONE", [0]], "the partition it still leads")
    return c


@case(P + "testControlledShutdownPartitionLeaderElectionAllIsrSimultaneouslyShutdown")
def controlled_shutdown_all_isr():
    c = Case(P + "testControlledShutdownPartitionLeaderElectionAllIsrSimultaneouslyShutdown",
             "Assignment [2, 4] (here [0, 1]), ISR [2, 4], both live and both shutting down: no leader is elected "
             "(None).", n_brokers=3, replication_factor=2, controlled_shutdown_enable=True)
    c.adapt("Both ISR members shut down with the ISR [2, 4] (here [0, 1]) when 4 (here 1) rejoins the ISR "
            "after its own shutdown began: it was out of the ISR then (so the controller removed nothing), and "
            "fetched again before the controller's StopReplica reached it.  The controller lives on broker 2.")
    c.create_topic(controller=2)
    c.sleep(15000)                       # broker 1 never fetches: the leader drops it from the ISR
    c.check("zk.partition_states.0.isr", [0], "4 (here 1) out of the ISR")
    controlled_shutdown_request(c, 1)
    c.check("brokers.1.controlled_shutdown.response", ["NONE", []], "4 (here 1) is shutting down")
    c.catch_up(followers=[1])            # it fetches before its StopReplica arrives: the leader takes it back
    c.check("zk.partition_states.0.isr", [0, 1], "ISR [2, 4] (here [0, 1]), 4 shutting down")
    controlled_shutdown_request(c, 0)
    c.check("zk.partition_states.0.leader", 0, "no new leader (None): 2 (here 0) still leads")
    c.check("brokers.0.controlled_shutdown.response", ["NONE", [0]], "the partition 2 (here 0) still leads")
    return c
@case(P + "testReassignPartitionLeaderElection")
def reassign_election():
    c = Case(P + "testReassignPartitionLeaderElection",
             "Reassignment [2, 4] (here [0, 1]), ISR [2, 4] (here [0, 1] and the old leader 2), only 4 (here 1) live "
             "for the controller: reassignPartitionLeaderElection picks the first target replica that is live and in "
             "the ISR, 4 (here 1).", n_brokers=3, replication_factor=1, assignment_start_index=2,
             max_reassignments=1)
    c.adapt("Kafka calls the election function; here it runs in the last step of a reassignment of [2] to [0, 1] "
            "(KafkaController.moveReassignedPartitionLeaderIfRequired: the leader 2 is not a target).  Kafka's 2 is "
            "broker 0, whose ZooKeeper session expires after it became a follower: the controller counts it dead, "
            "but its process keeps fetching and the leader puts it in the ISR (2.4's leader does not look at "
            "liveness), so ISR and live set differ as in Kafka's test.")
    c.create_topic(controller=2)
    c.reassign("0,1").do(A.ControllerProcessPartitionReassignment(2)).deliver_all()
    c.expire(0).broker_change(2)
    c.check("controllers.0.live_brokers.0", -1, "the controller counts broker 0 (Kafka's 2) dead")
    c.catch_up(followers=[0, 1])
    c.check("zk.partition_states.0.isr", [0, 1, 2], "the ISR holds both targets, [2, 4] (here [0, 1])")
    c.do(A.ControllerProcessReassignmentIsrChange(2, 0))
    c.check("zk.partition_states.0.leader", 1, "the elected leader is 4 (here 1)")
    return c


@case(P + "testReassignPartitionLeaderElectionWithNoLiveIsr")
def reassign_election_no_live_isr():
    c = Case(P + "testReassignPartitionLeaderElectionWithNoLiveIsr",
             "Reassignment targets whose replica in the ISR, 2 (here 0), is not live: no leader is elected.",
             n_brokers=3, replication_factor=2, max_reassignments=1)
    c.adapt("Kafka calls the election function with reassignment [2, 4], ISR [2] and nothing live; here it runs in "
            "the last step of a reassignment of [0, 1] to [0] (Kafka's [2]; a target must be in the ISR for the "
            "reassignment to reach the election), after both replicas stopped: the ISR keeps its last member 0, "
            "which is dead, and the controller (broker 2) finds no live target in the ISR.")
    c.create_topic(controller=2).catch_up()
    c.crash(1).broker_change(2).crash(0).broker_change(2)
    c.check("zk.partition_states.0.isr", [0], "ISR [2] (here [0]), its last member kept")
    c.check("zk.partition_states.0.leader", -1, "no leader")
    c.reassign("0").do(A.ControllerProcessPartitionReassignment(2))
    c.check("zk.assignment.0", [0], "the reassignment completed (RS = TRS)")
    c.check("zk.partition_states.0.leader", -1, "no leader was elected (None)")
    return c


missing(P + "testReassignPartitionLeaderElectionWithEmptyIsr", "starting states",
        "An empty ISR, which 2.4's ZooKeeper-era controller never writes (it keeps the last member): only a given "
        "starting state could hold one.")


# ============================================================================ ControllerChannelManagerTest
CC = "ControllerChannelManagerTest."
THREE = dict(n_brokers=3, replication_factor=3, n_partitions=3)


def _creation_batch(name: str, description: str) -> Case:
    c = Case(CC + name, description, **THREE)
    c.adapt("Kafka fills a request batch by hand (brokers 1, 2, 3; topics foo and bar); here the batch is the "
            "one the controller (broker 1, epoch 1) sends when it creates the three partitions of the topic "
            "(leaders 0, 1, 2, ISR [0, 1, 2]).  Broker 2's queue holds the failover's own UpdateMetadata first, "
            "then this batch: one LeaderAndIsr and one UpdateMetadata.")
    c.elect(1)
    return c


@case(CC + "testLeaderAndIsrRequestSent")
def leader_and_isr_request_sent():
    c = _creation_batch("testLeaderAndIsrRequestSent",
                        "A batch of LeaderAndIsr for three partitions to broker 2 goes out as one LeaderAndIsr "
                        "request (with the controller's id and epoch, each partition's leader and ISR) and one "
                        "UpdateMetadata request.")
    c.unchecked("the LeaderAndIsr response event (the model's controller ignores control responses)")
    q = "controllers.0.queues.2"
    c.check(f"{q}.1.@type", "LeaderAndIsrRequest", "one LeaderAndIsr request")
    c.check(f"{q}.1.controller_id", 1, "sent by controller 1")
    c.check(f"{q}.1.controller_epoch", 1, "in controller epoch 1")
    for p, leader in enumerate((0, 1, 2)):
        c.check(f"{q}.1.partition_states.{p}.partition", p, f"for partition {p}")
        c.check(f"{q}.1.partition_states.{p}.leader", leader, f"partition {p}'s leader")
        c.check(f"{q}.1.partition_states.{p}.isr", [0, 1, 2], f"partition {p}'s ISR")
    c.check(f"{q}.2.@type", "UpdateMetadataRequest", "and one UpdateMetadata request")
    return c


missing(CC + "testLeaderAndIsrRequestIsNew", "controller batch internals",
        "The same partition added twice to one batch (isNew true, then false) keeps isNew; the model's "
        "controller never adds a partition twice to a batch.")
FOUR = dict(n_brokers=4, replication_factor=3, controlled_shutdown_enable=True)


@case(CC + "testLeaderAndIsrRequestSentToLiveOrShuttingDownBrokers")
def leader_and_isr_to_live_or_shutting_down():
    c = Case(CC + "testLeaderAndIsrRequestSentToLiveOrShuttingDownBrokers",
             "Brokers 1, 2, 3 (here 0, 1, 2), 2 shutting down, 3 dead: a LeaderAndIsr for the partition on all "
             "three goes to 1 and 2 only, each with one LeaderAndIsr and one UpdateMetadata request.", **FOUR)
    c.adapt("The batch is the one the controller (broker 3) sends when 2 (here 1), the leader, asks to shut down "
            "while 3 (here 2) is dead: the controlled-shutdown election's LeaderAndIsr goes to the live or "
            "shutting-down replicas.  Broker 3 also gets the UpdateMetadata (Kafka's test has no controller broker).")
    c.create_topic(controller=3).catch_up()
    c.crash(0).broker_change(3).deliver_all()
    c.restart(0).broker_change(3).deliver_all().catch_up()
    c.crash(2).broker_change(3).deliver_all()
    c.check("zk.partition_states.0.leader", 1, "2 (here 1) leads")
    controlled_shutdown_request(c, 1)
    q = "controllers.0.queues"
    for b in (0, 1):
        c.check(f"{q}.{b}.0.@type", "LeaderAndIsrRequest", f"broker {b} gets one LeaderAndIsr")
        c.check(f"{q}.{b}.0.partition_states.0.partition", 0, "for the partition")
        c.check(f"{q}.{b}.1.@type", "UpdateMetadataRequest", "and one UpdateMetadata")
    c.check(f"{q}.2", [], "the dead broker 3 (here 2) gets nothing")
    return c


out_of_scope(CC + "testLeaderAndIsrInterBrokerProtocolVersion", "request versions per inter-broker protocol")


@case(CC + "testUpdateMetadataRequestSent")
def update_metadata_request_sent():
    c = _creation_batch("testUpdateMetadataRequestSent",
                        "UpdateMetadata to broker 2 carries the three partitions' leaders and ISRs, the controller's "
                        "id and epoch, and the live brokers.")
    q = "controllers.0.queues.2.2"
    c.check(f"{q}.@type", "UpdateMetadataRequest", "one UpdateMetadata request")
    c.check(f"{q}.controller_id", 1, "sent by controller 1")
    c.check(f"{q}.controller_epoch", 1, "in controller epoch 1")
    for p, leader in enumerate((0, 1, 2)):
        c.check(f"{q}.partition_states.{p}.leader", leader, f"partition {p}'s leader")
        c.check(f"{q}.partition_states.{p}.isr", [0, 1, 2], f"partition {p}'s ISR")
    c.check(f"{q}.live_brokers", [0, 1, 2], "the three live brokers")
    return c


missing(CC + "testUpdateMetadataDoesNotIncludePartitionsWithoutLeaderAndIsr", "controller batch internals",
        "UpdateMetadata asked for partitions that have no leadership information yet.")


@case(CC + "testUpdateMetadataIncludesLiveOrShuttingDownBrokers")
def update_metadata_live_or_shutting_down():
    c = Case(CC + "testUpdateMetadataIncludesLiveOrShuttingDownBrokers",
             "Brokers 1, 2, 3 (here 0, 1, 2), 2 shutting down, 3 dead: an UpdateMetadata with no partition goes to 1 "
             "and 2, and names both as live brokers.", **FOUR)
    c.adapt("The UpdateMetadata without partitions is the one the controller (broker 3) sends after 3 (here 2) "
            "dies without leading anything (onReplicasBecomeOffline), while 2 (here 1) is shutting down.  Its live "
            "brokers also name broker 3, the controller's own (Kafka's test has no controller broker).")
    c.create_topic(controller=3).catch_up()
    controlled_shutdown_request(c, 1)
    c.deliver_all()
    c.crash(2).broker_change(3)
    q = "controllers.0.queues"
    for b in (0, 1):
        c.check(f"{q}.{b}.-1.@type", "UpdateMetadataRequest", f"broker {b}'s last request: UpdateMetadata")
        c.check(f"{q}.{b}.-1.partition_states", [], "with no partition")
        c.check(f"{q}.{b}.-1.live_brokers", [0, 1, 3], "live: 1 and 2 (here 0, 1; and the controller's 3)")
    c.check(f"{q}.2", [], "nothing to the dead broker")
    return c


out_of_scope(CC + "testUpdateMetadataInterBrokerProtocolVersion", "request versions per inter-broker protocol")


@case(CC + "testStopReplicaSentOnlyToLiveAndShuttingDownBrokers")
def stop_replica_live_and_shutting_down():
    c = Case(CC + "testStopReplicaSentOnlyToLiveAndShuttingDownBrokers",
             "StopReplica (no delete) for three partitions to 2 (shutting down) and 3 (dead): only 2 gets it, as one "
             "request naming the three partitions, not deleting.",
             n_brokers=5, replication_factor=4, n_partitions=3, controlled_shutdown_enable=True)
    c.adapt("Five brokers, the controller on 0; Kafka's 2 is broker 3 here, a follower of all three partitions, and "
            "Kafka's 3 is broker 4, dead (the StopReplica its failure queues is dropped).  The batch is the one "
            "doControlledShutdown sends for the partitions 2 (here 3) follows; the OfflineReplica transition that "
            "follows sends a second, in a batch of its own.")
    c.create_topic(controller=0).catch_up(p=0).catch_up(p=1).catch_up(p=2)
    c.crash(4).broker_change(0).deliver_all()
    controlled_shutdown_request(c, 3)
    q = "controllers.0.queues"
    c.check(f"{q}.3.0.@type", "StopReplicaRequest", "2 (here 3) gets one StopReplica")
    c.check(f"{q}.3.0.delete_partitions", False, "not deleting")
    c.check(f"{q}.3.0.partitions", [0, 1, 2], "for the three partitions")
    c.check(f"{q}.4", [], "the dead broker gets nothing")
    return c
DELETION = dict(THREE, max_topic_deletions=1)


def _deletion(name: str, description: str) -> Case:
    """The controller (broker 0) creates the topic, then an admin deletes it and the controller handles the
    TopicDeletion event: every broker's queue then holds UpdateMetadata (leader -2), StopReplica without delete,
    StopReplica with delete (onTopicDeletion, OfflineReplica, ReplicaDeletionStarted)."""
    c = Case(CC + name, description, **DELETION)
    c.adapt("Kafka fills a request batch by hand (brokers 1, 2, 3; topics foo, being deleted, and bar); here the "
            "batches are the ones the controller (broker 0, epoch 1) sends when it deletes the one topic of the "
            "model, whose three partitions (replicas on brokers 0, 1, 2) stand for foo's.  Kafka's broker 2 is "
            "broker 2 here, Kafka's broker 3 is broker 1.")
    c.create_topic(controller=0)
    c.do(A.DeleteTopic()).do(A.ControllerProcessTopicDeletion(0))
    return c


@case(CC + "testUpdateMetadataRequestDuringTopicDeletion")
def update_metadata_during_topic_deletion():
    c = _deletion("testUpdateMetadataRequestDuringTopicDeletion",
                  "UpdateMetadata for the partitions of a topic queued for deletion goes out with leader -2 "
                  "(LeaderDuringDelete), each partition's ISR, and the three live brokers.")
    c.unchecked("bar's partition keeps its leader (the model has one topic, being deleted)")
    q = "controllers.0.queues.2.0"
    c.check(f"{q}.@type", "UpdateMetadataRequest", "one UpdateMetadata request to broker 2")
    for p in range(3):
        c.check(f"{q}.partition_states.{p}.partition", p, f"partition {p} is in it")
        c.check(f"{q}.partition_states.{p}.leader", -2, f"partition {p}'s leader is LeaderDuringDelete")
        c.check(f"{q}.partition_states.{p}.isr", [0, 1, 2], f"partition {p}'s ISR as the controller holds it")
    c.check(f"{q}.live_brokers", [0, 1, 2], "three live brokers")
    return c


def _stop_replica_queued(c: Case, b: int, index: int, delete: bool, why: str) -> None:
    """The index-th request queued for broker b is one StopReplica (with or without delete) for the three partitions."""
    q = f"controllers.0.queues.{b}.{index}"
    c.check(f"{q}.@type", "StopReplicaRequest", why)
    c.check(f"{q}.delete_partitions", delete, "with delete" if delete else "without delete")
    c.check(f"{q}.partitions", [0, 1, 2], "for the three partitions")


@case(CC + "testStopReplicaRequestSent")
def stop_replica_request_sent():
    c = _deletion("testStopReplicaRequestSent",
                  "StopReplica without delete for three partitions goes to broker 2 as one request; its response "
                  "sends no event to the controller.")
    _stop_replica_queued(c, 2, 1, False, "one StopReplica request to broker 2 (the OfflineReplica batch)")
    c.check("controllers.0.queues.2.2.delete_partitions", True,
            "the next batch's request (ReplicaDeletionStarted) is another one")
    c.deliver(0, 2, 2)
    c.check_response("stop_replica", 2, "broker 2 answers NONE", value="NONE")
    c.check("controllers.0.stop_replica_responses", [], "no event after the response of a StopReplica without delete")
    return c


missing(CC + "testStopReplicaRequestsWhileTopicQueuedForDeletion", "controller batch internals",
        "A StopReplica with delete whose response comes while the topic is queued but its deletion has not started: "
        "the controller sends one only once deletion started (TopicDeletionManager.startReplicaDeletion), and stops "
        "tracking it only at completion, after every response; the test builds the batch by hand.")


@case(CC + "testStopReplicaRequestsWhileTopicDeletionStarted")
def stop_replica_while_deletion_started():
    c = _deletion("testStopReplicaRequestsWhileTopicDeletionStarted",
                  "StopReplica with delete for three partitions goes to broker 2 as one request while the topic's "
                  "deletion runs; its response becomes one TopicDeletionStopReplicaResponseReceived event naming "
                  "the deleted topic's partitions.")
    _stop_replica_queued(c, 2, 2, True, "one StopReplica request (the ReplicaDeletionStarted batch)")
    c.check("controllers.0.deletion_started", True, "the topic's deletion has begun")
    c.deliver(0, 2, 3)
    c.check("controllers.0.stop_replica_responses", [[2, [[0, "NONE"], [1, "NONE"], [2, "NONE"]]]],
            "one event, with the partitions of the topic being deleted")
    return c


missing(CC + "testMixedDeleteAndNotDeleteStopReplicaRequests", "controller batch internals",
        "Delete and no-delete StopReplica in one batch: the controller's own batches never mix them (OfflineReplica "
        "and ReplicaDeletionStarted are two batches); the test fills the batch by hand.")


@case(CC + "testStopReplicaGroupsByBroker")
def stop_replica_groups_by_broker():
    c = _deletion("testStopReplicaGroupsByBroker",
                  "StopReplica without delete for three partitions to two brokers: one request each, with all three "
                  "partitions; no event after their responses.")
    for b in (2, 1):
        _stop_replica_queued(c, b, 1, False, f"one StopReplica request to broker {b}")
    c.deliver(0, 2, 2).deliver(0, 1, 2)
    c.check("controllers.0.stop_replica_responses", [], "no event after their responses")
    return c


out_of_scope(CC + "testStopReplicaInterBrokerProtocolVersion", "request versions per inter-broker protocol")


# ============================================================================ ControllerIntegrationTest
CI = "ControllerIntegrationTest."


@case(CI + "testEmptyCluster")
def empty_cluster():
    c = Case(CI + "testEmptyCluster", "One broker: a controller is elected and the controller epoch is 1.",
             n_brokers=1, replication_factor=1)
    c.elect(0)
    c.check("zk.controller", 0, "a controller is elected")
    c.check("zk.controller_epoch", 1, "the controller epoch is 1")
    return c


@case(CI + "testControllerEpochPersistsWhenAllBrokersDown")
def controller_epoch_persists():
    c = Case(CI + "testControllerEpochPersistsWhenAllBrokersDown",
             "When the only broker (the controller) stops, /controller goes away and the controller epoch "
             "stays 1.", n_brokers=1, replication_factor=1)
    c.elect(0)
    c.check("zk.controller_epoch", 1, "controller epoch 1")
    c.crash(0)
    c.check("zk.controller", -1, "no controller")
    c.check("zk.controller_epoch", 1, "the epoch persists")
    return c


@case(CI + "testControllerMoveIncrementsControllerEpoch")
def controller_move_increments_epoch():
    c = Case(CI + "testControllerMoveIncrementsControllerEpoch",
             "The only broker stops and starts again: it is elected controller with epoch 2.",
             n_brokers=1, replication_factor=1)
    c.elect(0)
    c.check("zk.controller_epoch", 1, "controller epoch 1")
    c.crash(0).restart(0).elect(0)
    c.check("zk.controller", 0, "a controller is elected")
    c.check("zk.controller_epoch", 2, "the controller epoch is incremented to 2")
    return c


out_of_scope(CI + "testMetadataPropagationOnControlPlane", "listener metrics of the control plane")


@case(CI + "testMetadataPropagationOnBrokerChange")
def metadata_propagation_on_broker_change():
    c = Case(CI + "testMetadataPropagationOnBrokerChange",
             "Partition 0 on [r0, test], partition 1 on the two others; the test broker (not the controller) stops: "
             "the remaining brokers' metadata names it the offline replica of partition 0 (replicas as assigned, ISR "
             "[r0]) and partition 1 without offline replicas; once it starts again, no broker's metadata has an "
             "offline replica and the replicas are as assigned.",
             n_brokers=3, replication_factor=2, n_partitions=2, assignment_replica_shift=1)
    c.adapt("Brokers 0 (r0, the controller), 1 (r1) and 2 (the test broker); the assignment is AdminUtils' with a "
            "fixed replica shift, partition 0 on [0, 2] and partition 1 on [1, 0] (Kafka's [r0, r1] in the other "
            "order).  Kafka's controlled shutdown is a clean stop here, then the controller's BrokerChange.")
    c.create_topic(controller=0).catch_up(p=0).catch_up(p=1)
    c.crash(2).broker_change(0).deliver_all()
    for b in (0, 1):
        m = f"brokers.{b}.metadata.partitions"
        c.check(f"{m}.0.offline_replicas", [2], f"broker {b}: partition 0's offline replica is the test broker")
        c.check(f"{m}.0.replicas", [0, 2], f"broker {b}: partition 0's replicas as assigned")
        c.check(f"{m}.0.isr", [0], f"broker {b}: partition 0's ISR is [r0]")
        c.check(f"{m}.1.replicas", [1, 0], f"broker {b}: partition 1's replicas as assigned")
        c.check(f"{m}.1.offline_replicas", [], f"broker {b}: partition 1 has no offline replica")
    c.restart(2).broker_change(0).deliver_all()
    for b in range(3):
        m = f"brokers.{b}.metadata.partitions"
        for p, replicas in ((0, [0, 2]), (1, [1, 0])):
            c.check(f"{m}.{p}.offline_replicas", [], f"broker {b}: no offline replica of partition {p}")
            c.check(f"{m}.{p}.replicas", replicas, f"broker {b}: partition {p}'s replicas as assigned")
    return c


@case(CI + "testMetadataPropagationForOfflineReplicas")
def metadata_propagation_for_offline_replicas():
    c = Case(CI + "testMetadataPropagationForOfflineReplicas",
             "A one-replica partition on a broker other than the controller; the other broker, the replica's "
             "broker and the controller stop in turn.  The controller's broker starts again (and is elected), "
             "then the other broker: each one's metadata shows the partition with leader -1 and its replica "
             "offline (replicas and ISR not empty).",
             n_brokers=3, replication_factor=1, assignment_start_index=1)
    c.adapt("The controller is broker 0, the replica's broker 1 (assignment [1]), the other broker 2; Kafka's "
            "shutdowns are clean stops, each followed by the controller's BrokerChange while it runs.")
    c.create_topic(controller=0)
    c.crash(2).broker_change(0).deliver_all()
    c.crash(1).broker_change(0).deliver_all()
    c.crash(0)
    c.restart(0).elect(0).deliver_all()
    for b, who in ((0, "the controller's broker"), (2, "the other broker")):
        if b == 2:
            c.restart(2).broker_change(0).deliver_all()
        m = f"brokers.{b}.metadata.partitions.0"
        c.check(f"{m}.leader", -1, f"{who}: no leader")
        c.check(f"{m}.offline_replicas", [1], f"{who}: the replica is offline")
        c.check(f"{m}.replicas", [1], f"{who}: replicas not empty")
        c.check(f"{m}.isr", [1], f"{who}: ISR not empty")
    return c


@case(CI + "testTopicCreation")
def topic_creation():
    c = Case(CI + "testTopicCreation",
             "Creating a topic with one replica on broker 0: partition state leader 0, leader epoch 0, controller "
             "epoch 1.", n_brokers=1, replication_factor=1)
    c.adapt("The model's topic exists from the start; the controller creates its partition state "
            "(NewPartition -> OnlinePartition) when it is elected, as onNewPartitionCreation would.")
    c.elect(0)
    c.check("zk.partition_states.0.leader", 0, "leader 0")
    c.check("zk.partition_states.0.leader_epoch", 0, "initial leader epoch 0")
    c.check("zk.partition_states.0.controller_epoch", 1, "controller epoch 1")
    return c


@case(CI + "testTopicCreationWithOfflineReplica")
def topic_creation_offline_replica():
    c = Case(CI + "testTopicCreationWithOfflineReplica",
             "A topic with replicas [other, controller] created while the other broker is down: the controller's "
             "broker leads, leader epoch 0, controller epoch 1.",
             n_brokers=2, replication_factor=2, assignment_start_index=1)
    c.adapt("Replicas [1, 0], broker 1 down; the partition state is created when broker 0 becomes controller.")
    c.crash(1).elect(0)
    c.check("zk.partition_states.0.leader", 0, "the live replica leads")
    c.check("zk.partition_states.0.leader_epoch", 0, "initial leader epoch 0")
    c.check("zk.partition_states.0.controller_epoch", 1, "controller epoch 1")
    return c


@case(CI + "testTopicPartitionExpansion")
def topic_partition_expansion():
    c = Case(CI + "testTopicPartitionExpansion",
             "A partition added to a one-broker topic: its state is leader 0, leader epoch 0, controller epoch 1, "
             "and the metadata reaches the broker.",
             n_brokers=1, replication_factor=1, n_partitions=2, initial_partitions=1, max_partition_creations=1)
    c.adapt("The topic starts with partition 0; the admin's addPartitions writes partition 1 (replicas [0]) and the "
            "controller handles the PartitionModifications event.")
    c.create_topic(controller=0)
    c.do(A.CreatePartitions()).do(A.ControllerProcessTopicChange(0)).deliver_all()
    return _new_partition_state(c, 0, "leader 0", "the metadata is propagated")


def _new_partition_state(c: Case, leader: int, why_leader: str, why_metadata: str) -> Case:
    """waitForPartitionState(tp1, firstControllerEpoch, leader, initialLeaderEpoch) and waitUntilMetadataIsPropagated
    at the leader's broker."""
    c.check("zk.partition_states.1.controller_epoch", 1, "controller epoch 1")
    c.check("zk.partition_states.1.leader", leader, why_leader)
    c.check("zk.partition_states.1.leader_epoch", 0, "initial leader epoch 0")
    c.check(f"brokers.{leader}.metadata.partitions.1.leader", leader, why_metadata)
    return c


@case(CI + "testTopicPartitionExpansionWithOfflineReplica")
def topic_partition_expansion_offline_replica():
    c = Case(CI + "testTopicPartitionExpansionWithOfflineReplica",
             "A partition [other, controller] added while the other broker is down: its state is leader = the "
             "controller's broker, leader epoch 0, controller epoch 1, and the metadata reaches the controller's "
             "broker.",
             n_brokers=2, replication_factor=2, n_partitions=2, initial_partitions=1, max_partition_creations=1,
             assignment_start_index=1)
    c.adapt("The controller is broker 1, the other broker 0; partition 1's replicas are [0, 1] = [other, "
            "controller] as in Kafka's test, partition 0's are [1, 0] (AdminUtils' assignment).  Kafka's shutdown "
            "is a clean stop and the controller's BrokerChange.")
    c.create_topic(controller=1)
    c.crash(0).broker_change(1).deliver_all()
    c.do(A.CreatePartitions()).do(A.ControllerProcessTopicChange(1)).deliver_all()
    c.check("zk.assignment.1", [0, 1], "partition 1's replicas are [other, controller]")
    return _new_partition_state(c, 1, "the controller's broker leads", "the metadata reaches the controller's broker")
#: makeServers: controlled.shutdown.enable (Kafka's default, TestUtils.createBrokerConfigs), preferred elections by
#: the admin, leader.imbalance.check.interval.seconds = 1
SERVERS = dict(n_brokers=2, replication_factor=2, controlled_shutdown_enable=True, max_preferred_elections=4,
               leader_imbalance_check_interval_ms=1000)


def shutdown(c: Case, b: int, controller: int) -> Case:
    """KafkaServer.shutdown with controlled shutdown: the request, its requests delivered, the response, the stop;
    then the controller sees the broker gone."""
    controlled_shutdown_request(c, b).deliver_all()
    return c.do(A.ControlledShutdownResponse(b)).broker_change(controller).deliver_all()


def _preferred_round(c: Case, controller: int, other: int, epoch: int) -> Case:
    """ControllerIntegrationTest.preferredReplicaLeaderElection: the other broker (the preferred replica) shuts down,
    comes back and rejoins the ISR, then an admin's preferred-replica election makes it lead again."""
    shutdown(c, other, controller)
    c.check("zk.partition_states.0.leader", controller, "the controller's broker leads after the shutdown")
    c.check("zk.partition_states.0.leader_epoch", epoch + 1, f"leader epoch {epoch + 1}")
    c.check("zk.partition_states.0.controller_epoch", 1, "controller epoch 1")
    c.restart(other).broker_change(controller).deliver_all().catch_up()
    c.check("zk.partition_states.0.isr", [0, 1], "the restarted broker rejoins the ISR")
    preferred_election(c, controller)
    c.check("zk.preferred_replica_election", [], "/admin/preferred_replica_election removed after completion")
    c.check("zk.partition_states.0.leader", other, "the preferred replica leads again")
    c.check("zk.partition_states.0.leader_epoch", epoch + 2, f"leader epoch {epoch + 2}")
    c.check("zk.partition_states.0.controller_epoch", 1, "controller epoch 1")
    return c


@case(CI + "testPreferredReplicaLeaderElection")
def preferred_replica_leader_election():
    c = Case(CI + "testPreferredReplicaLeaderElection",
             "Two brokers, replicas [other, controller]: the other broker shuts down (the controller's broker leads, "
             "epoch 1), comes back and rejoins the ISR; a preferred-replica election makes it lead (epoch 2) and "
             "removes /admin/preferred_replica_election.", **SERVERS)
    c.adapt("The controller is broker 1 and the other broker 0, so the replicas are [0, 1].")
    c.create_topic(controller=1).catch_up()
    return _preferred_round(c, 1, 0, 0)


@case(CI + "testBackToBackPreferredReplicaLeaderElections")
def back_to_back_preferred_elections():
    c = Case(CI + "testBackToBackPreferredReplicaLeaderElections",
             "The round of testPreferredReplicaLeaderElection twice: leader epochs 1, 2, then 3, 4.", **SERVERS)
    c.adapt("The controller is broker 1 and the other broker 0, so the replicas are [0, 1].")
    c.create_topic(controller=1).catch_up()
    _preferred_round(c, 1, 0, 0)
    return _preferred_round(c, 1, 0, 2)


@case(CI + "testPreferredReplicaLeaderElectionWithOfflinePreferredReplica")
def preferred_election_offline_preferred():
    c = Case(CI + "testPreferredReplicaLeaderElectionWithOfflinePreferredReplica",
             "Replicas [other, controller]; the other broker shuts down and stays down: the preferred-replica "
             "election gives up, removes /admin/preferred_replica_election, and the controller's broker still leads "
             "in epoch 1.", **SERVERS)
    c.adapt("The controller is broker 1 and the other broker 0, so the replicas are [0, 1].")
    c.create_topic(controller=1).catch_up()
    shutdown(c, 0, 1)
    preferred_election(c, 1)
    c.check("zk.preferred_replica_election", [], "/admin/preferred_replica_election removed after giving up")
    c.check("zk.partition_states.0.leader", 1, "the controller's broker leads")
    c.check("zk.partition_states.0.leader_epoch", 1, "leader epoch 1")
    c.check("zk.partition_states.0.controller_epoch", 1, "controller epoch 1")
    return c


@case(CI + "testAutoPreferredReplicaLeaderElection")
def auto_preferred_election():
    c = Case(CI + "testAutoPreferredReplicaLeaderElection",
             "auto.leader.rebalance.enable, replicas [1, 0] with the controller on 0: broker 1 shuts down (0 leads, "
             "epoch 1), starts again, and the auto-leader-rebalance-task makes it lead again (epoch 2).",
             auto_leader_rebalance_enable=True, assignment_start_index=1, **SERVERS)
    c.create_topic(controller=0).catch_up()
    shutdown(c, 1, 0)
    c.check("zk.partition_states.0.leader", 0, "0 leads after the shutdown")
    c.check("zk.partition_states.0.leader_epoch", 1, "leader epoch 1")
    c.restart(1).broker_change(0).deliver_all().catch_up()
    c.sleep(5000)                        # the task's first run, 5 s after the failover
    c.deliver_all()
    c.check("zk.partition_states.0.leader", 1, "the preferred replica 1 leads again")
    c.check("zk.partition_states.0.leader_epoch", 2, "leader epoch 2")
    c.check("zk.partition_states.0.controller_epoch", 1, "controller epoch 1")
    return c
def _reassign_to_other(name: str, description: str, offline: bool) -> Case:
    """Two brokers, the controller 0 leads the partition alone ([0]); an admin reassigns it to the other broker."""
    c = Case(CI + name, description, n_brokers=2, replication_factor=1, max_reassignments=1)
    c.create_topic(controller=0)
    c.check("zk.partition_states.0.leader_epoch", 0, "the initial leader epoch")
    if offline:
        c.crash(1).broker_change(0)
    c.reassign("1").do(A.ControllerProcessPartitionReassignment(0)).deliver_all()
    c.check("zk.assignment.0", [1, 0], "RS = TRS + ORS in the topic znode")
    c.check("zk.reassigning.0", [[1], [0]], "adding [other], removing [controller]")
    return c


def _reassignment_completes(c: Case, epochs: int) -> Case:
    """The target caught up; the ISR change completes the reassignment, with the other broker leading."""
    c.check("zk.partition_states.0.isr", [0, 1], "the new replica caught up and joined the ISR")
    c.do(A.ControllerProcessReassignmentIsrChange(0, 0)).deliver_all()
    c.check("zk.partition_states.0.leader", 1, "the other broker leads")
    c.check("zk.partition_states.0.leader_epoch", epochs, f"initialLeaderEpoch + {epochs}")
    c.check("zk.partition_states.0.controller_epoch", 1, "firstControllerEpoch")
    c.check("zk.assignment.0", [1], "the topic znode holds the reassignment")
    c.check("zk.reassigning.0", None, "no adding or removing replicas left")
    c.check("zk.reassign_partitions", [], "/admin/reassign_partitions removed")
    return c


@case(CI + "testPartitionReassignment")
def partition_reassignment():
    c = _reassign_to_other("testPartitionReassignment",
                           "A reassignment from the controller's broker to the other one completes: the other broker "
                           "leads in leader epoch 3 (the initial epoch + 3), the topic znode holds only it, and "
                           "/admin/reassign_partitions is gone.", offline=False)
    c.catch_up()
    _reassignment_completes(c, 3)
    c.unchecked("the AlterPartitionReassignment timer metric")
    return c


@case(CI + "testPartitionReassignmentWithOfflineReplicaHaltingProgress")
def reassignment_offline_replica():
    c = _reassign_to_other("testPartitionReassignmentWithOfflineReplicaHaltingProgress",
                           "A reassignment to a broker that is down halts: the controller still leads in leader "
                           "epoch 1 and /admin/reassign_partitions stays.", offline=True)
    c.check("zk.partition_states.0.leader", 0, "the controller's broker leads")
    c.check("zk.partition_states.0.leader_epoch", 1, "initialLeaderEpoch + 1")
    c.check("zk.partition_states.0.controller_epoch", 1, "firstControllerEpoch")
    c.check("zk.reassign_partitions.0", [1], "the reassignment path remains")
    return c


@case(CI + "testPartitionReassignmentResumesAfterReplicaComesOnline")
def reassignment_resumes():
    c = _reassign_to_other("testPartitionReassignmentResumesAfterReplicaComesOnline",
                           "A reassignment halted by a broker that is down resumes when it starts again and "
                           "completes: the other broker leads in leader epoch 4 (the initial epoch + 4).", offline=True)
    c.check("zk.partition_states.0.leader_epoch", 1, "initialLeaderEpoch + 1 while the target is down")
    c.restart(1).broker_change(0).deliver_all().catch_up()
    return _reassignment_completes(c, 4)




def _entire_isr_offline(name: str, unclean: bool) -> Case:
    c = Case(CI + name,
             "The only replica (on the other broker) stops: with unclean leader election "
             + ("enabled" if unclean else "disabled") + " there is no replica to elect; the partition state is "
             "leader -1 (NoLeader), leader epoch 1, ISR [other], controller epoch 1.",
             n_brokers=2, replication_factor=1, assignment_start_index=1, unclean_leader_election=unclean)
    c.create_topic(controller=0)
    c.check("zk.partition_states.0.leader", 1, "the other broker leads, epoch 0")
    c.crash(1).broker_change(0)
    c.check("zk.partition_states.0.leader", -1, "NoLeader")
    c.check("zk.partition_states.0.leader_epoch", 1, "leader epoch 1")
    c.check("zk.partition_states.0.isr", [1], "the ISR keeps its last member")
    c.check("zk.partition_states.0.controller_epoch", 1, "controller epoch 1")
    return c


@case(CI + "testLeaderAndIsrWhenEntireIsrOfflineAndUncleanLeaderElectionDisabled")
def entire_isr_offline_disabled():
    return _entire_isr_offline("testLeaderAndIsrWhenEntireIsrOfflineAndUncleanLeaderElectionDisabled", False)


@case(CI + "testLeaderAndIsrWhenEntireIsrOfflineAndUncleanLeaderElectionEnabled")
def entire_isr_offline_enabled():
    return _entire_isr_offline("testLeaderAndIsrWhenEntireIsrOfflineAndUncleanLeaderElectionEnabled", True)


@case(CI + "testControlledShutdown")
def controlled_shutdown():
    c = Case(CI + "testControlledShutdown",
             "Replicas [0, 1, 2], leader 0: broker 2 asks for a controlled shutdown (nothing left to move; ISR [0, 1] "
             "at the others), then broker 1 (nothing left; 0 still leads), then broker 0, which still leads the "
             "partition (one partition remains) and the leader does not change anywhere.",
             n_brokers=3, replication_factor=3, controlled_shutdown_enable=True)
    c.adapt("Kafka's test calls KafkaController.controlledShutdown for each broker; here each broker sends its "
            "ControlledShutdown request (with its broker epoch) and keeps running, its response unread.")
    c.create_topic(controller=0).catch_up()
    controlled_shutdown_request(c, 2).deliver_all()
    c.check("brokers.2.controlled_shutdown.response", ["NONE", []], "no partition remaining")
    for b in (0, 1):
        c.check(f"brokers.{b}.metadata.partitions.0.leader", 0, "leader after the shutdown: 0")
        c.check(f"brokers.{b}.metadata.partitions.0.isr", [0, 1], "ISR [0, 1]")
    controlled_shutdown_request(c, 1).deliver_all()
    c.check("brokers.1.controlled_shutdown.response", ["NONE", []], "no partition remaining")
    c.check("brokers.0.metadata.partitions.0.leader", 0, "0 still leads")
    for b in (0, 1, 2):
        c.check(f"brokers.{b}.metadata.partitions.0.leader", 0, f"broker {b}'s metadata: leader 0")
    controlled_shutdown_request(c, 0).deliver_all()
    c.check("brokers.0.controlled_shutdown.response", ["NONE", [0]], "one partition remaining")
    for b in (0, 1, 2):
        c.check(f"brokers.{b}.metadata.partitions.0.leader", 0, "the leader does not change")
    return c


@case(CI + "testControllerRejectControlledShutdownRequestWithStaleBrokerEpoch")
def controlled_shutdown_stale_epoch():
    c = Case(CI + "testControllerRejectControlledShutdownRequestWithStaleBrokerEpoch",
             "A ControlledShutdown request carrying an older broker epoch than the controller knows is refused with "
             "STALE_BROKER_EPOCH (StaleBrokerEpochException).",
             n_brokers=2, replication_factor=2, controlled_shutdown_enable=True)
    c.adapt("Kafka's test sends the broker's epoch - 1; here the request is sent, then the broker's ZooKeeper "
            "session expires and it registers again (a new epoch) and the controller learns it (KIP-380) before "
            "the request arrives.")
    c.create_topic(controller=0)
    c.do(A.ControlledShutdown(1))
    c.expire(1).reconnect(1).broker_change(0)
    c.do(A.ControlledShutdownRequest(1))
    c.check("brokers.1.controlled_shutdown.response", ["STALE_BROKER_EPOCH", []], "STALE_BROKER_EPOCH")
    c.check("controllers.0.shutting_down", [], "the broker is not taken as shutting down")
    return c


@case(CI + "testControllerMoveOnPreferredReplicaElection")
def controller_move_on_preferred_election():
    c = Case(CI + "testControllerMoveOnPreferredReplicaElection",
             "The controller handles a preferred-replica election after another controller was elected: its "
             "ZooKeeper write is fenced (ControllerMovedException) and it resigns.",
             n_brokers=2, replication_factor=1, max_preferred_elections=1)
    c.adapt("Kafka's test holds the controller's event thread while it creates the election znode and moves "
            "/controller (a controller epoch registered by no broker).  Here broker 1 is elected after the "
            "/controller deletion, the admin then creates the znode, and the old controller (broker 0) handles it "
            "first.  One replica, on broker 0: nothing to elect, so the first ZooKeeper write is the znode's "
            "deletion.")
    c.create_topic(controller=0)
    c.do(A.ZkDeleteController(0)).elect(1)
    preferred_election(c, 0)
    c.check("controllers.0.broker_id", 1, "the old controller resigned: only broker 1's is left")
    c.check("zk.preferred_replica_election", [0], "its fenced deletion left the znode")
    c.check("zk.partition_states.0.leader", 0, "the leader unchanged")
    return c


def _controller_move(name: str, description: str, **config) -> Case:
    c = Case(CI + name, description, n_brokers=2, replication_factor=1, **config)
    c.adapt("Kafka's test makes the admin's change, then rewrites /controller and bumps /controller_epoch by hand "
            "while the controller's event thread waits; here /controller is deleted (the controller still active) "
            "and broker 1 is elected (epoch 2), then the admin's change is written, and the old controller handles "
            "the event first (the new one, a real controller here, has not acted on it: Kafka's stand-in never does).")
    return c


@case(CI + "testControllerMoveOnTopicCreation")
def controller_move_on_topic_creation():
    c = _controller_move("testControllerMoveOnTopicCreation",
                         "A topic created (replicas [0]) while the controller moved: the old controller handles the "
                         "TopicChange, its ZooKeeper write fails with ControllerMovedException, and it resigns.",
                         initial_partitions=0, max_partition_creations=1)
    c.elect(0)
    c.do(A.ZkDeleteController(0)).elect(1)
    c.do(A.CreateTopic())
    c.do(A.ControllerProcessTopicChange(0))
    c.check("zk.partition_states.0", None, "its partition state was not written")
    c.check("controllers.0.broker_id", 1, "the old controller resigned: the only controller left is broker 1")
    c.check("zk.controller", 1, "the new controller stays")
    return c


@case(CI + "testControllerMoveOnTopicDeletion")
def controller_move_on_topic_deletion():
    c = _controller_move("testControllerMoveOnTopicDeletion",
                         "The topic (replicas [0]) deleted while the controller moved: the old controller handles "
                         "the TopicDeletion, its ZooKeeper write fails with ControllerMovedException, and it resigns.",
                         max_topic_deletions=1)
    c.create_topic(controller=0)
    c.do(A.ZkDeleteController(0)).elect(1)
    c.do(A.DeleteTopic())
    c.do(A.ControllerProcessTopicDeletion(0))
    c.check("zk.partition_states.0.leader", 0, "the partition state is as before (no ISR removal written)")
    c.check("controllers.0.broker_id", 1, "the old controller resigned: the only controller left is broker 1")
    c.check("zk.controller", 1, "the new controller stays")
    return c



@case(CI + "testControllerMoveOnPartitionReassignment")
def controller_move_on_reassignment():
    c = Case(CI + "testControllerMoveOnPartitionReassignment",
             "The controller moves while its ZkPartitionReassignment event waits: when it handles the event, its "
             "first ZooKeeper write fails on the controller epoch's zkVersion (ControllerMovedException) and it "
             "resigns.", n_brokers=2, replication_factor=1, max_reassignments=1)
    c.adapt("Kafka's test has one broker and re-registers /controller by hand, with a reassignment of [0] to [0]; "
            "here a second broker wins /controller after the operator deleted it (its failover starts the "
            "reassignment, of [0] to [1] so that /admin/reassign_partitions stays), and the old controller handles "
            "its queued event afterwards.")
    c.create_topic(controller=0)
    c.reassign("1")
    c.check("controllers.0.reassign_event", True, "the event waits at controller 0")
    c.do(A.ZkDeleteController(0)).elect(1)
    c.check("zk.partition_states.0.leader_epoch", 1, "the new controller started the reassignment (epoch 1)")
    c.do(A.ControllerProcessPartitionReassignment(0))
    c.check("controllers.0.broker_id", 1, "controller 0 resigned: only the new controller (broker 1) is left")
    c.check("zk.partition_states.0.leader_epoch", 1, "the old controller wrote nothing")
    c.check("zk.reassign_partitions.0", [1], "the reassignment is still in progress")
    return c


@case(CI + "testControllerDetectsBouncedBrokers")
def detects_bounced_brokers():
    c = Case(CI + "testControllerDetectsBouncedBrokers",
             "A broker bounces between two BrokerChange events: after the restart it hosts no partition; the "
             "controller notices the bounce by its new broker epoch (KIP-380) and sends it the partition and the "
             "metadata (the topic, two live brokers).", n_brokers=2, replication_factor=2)
    c.create_topic(controller=0)
    c.check("zk.partition_states.0.leader", 0, "leader 0, epoch 0")
    c.crash(1).restart(1)
    c.check("brokers.1.partitions", [None], "after the restart broker 1 hosts no partition")
    c.broker_change(0).deliver_all()
    c.check("brokers.1.partitions.0.leader", 0, "it hosts the partition again (a follower of 0)")
    c.check("brokers.1.metadata.partitions.0.leader", 0, "its metadata knows the topic")
    c.check("brokers.1.metadata.alive_brokers", [0, 1], "and two live brokers")
    return c
