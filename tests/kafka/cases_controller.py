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


out_of_scope(P + "testReassignPartitionLeaderElectionWithEmptyIsr",
             "an empty ISR, which 2.4's ZooKeeper-era controller never writes (it keeps the last member)")
for _name in ("testPreferredReplicaPartitionLeaderElection",
              "testPreferredReplicaPartitionLeaderElectionPreferredReplicaInIsrNotLive",
              "testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrLive",
              "testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrNotLive"):
    missing(P + _name, "preferred election", "preferredReplicaPartitionLeaderElection.")
for _name in ("testControlledShutdownPartitionLeaderElection",
              "testControlledShutdownPartitionLeaderElectionLastIsrShuttingDown",
              "testControlledShutdownPartitionLeaderElectionAllIsrSimultaneouslyShutdown"):
    missing(P + _name, "controlled shutdown", "controlledShutdownPartitionLeaderElection (shutting-down brokers).")


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
missing(CC + "testLeaderAndIsrRequestSentToLiveOrShuttingDownBrokers", "controlled shutdown",
        "Requests go to live and shutting-down brokers, not to dead ones.")
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
missing(CC + "testUpdateMetadataRequestDuringTopicDeletion", "StopReplica",
        "Partitions of a topic queued for deletion go out with leader -2 (LeaderDuringDelete).")
missing(CC + "testUpdateMetadataIncludesLiveOrShuttingDownBrokers", "controlled shutdown",
        "Live brokers in UpdateMetadata include shutting-down ones.")
out_of_scope(CC + "testUpdateMetadataInterBrokerProtocolVersion", "request versions per inter-broker protocol")
for _name, _detail in (
        ("testStopReplicaRequestSent", "StopReplica (no delete) for three partitions to a live broker."),
        ("testStopReplicaRequestsWhileTopicQueuedForDeletion", "StopReplica with delete, topic queued for deletion."),
        ("testStopReplicaRequestsWhileTopicDeletionStarted", "StopReplica with delete while deletion runs, and "
                                                              "the response event for the deleted topic."),
        ("testMixedDeleteAndNotDeleteStopReplicaRequests", "Delete and no-delete StopReplica in one batch."),
        ("testStopReplicaGroupsByBroker", "StopReplica to two live brokers.")):
    missing(CC + _name, "StopReplica", _detail)
missing(CC + "testStopReplicaSentOnlyToLiveAndShuttingDownBrokers", "controlled shutdown",
        "StopReplica to a shutting-down broker (and not to a dead one).")
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
missing(CI + "testMetadataPropagationOnBrokerChange", "offline replicas",
        "UpdateMetadata after a broker change names the offline replica of each partition.")
missing(CI + "testMetadataPropagationForOfflineReplicas", "offline replicas",
        "The metadata of a partition whose only replica is down shows it offline (leader -1).")


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


missing(CI + "testTopicPartitionExpansion", "partition expansion", "A partition added to the topic.")
missing(CI + "testTopicPartitionExpansionWithOfflineReplica", "partition expansion",
        "A partition added to the topic while one of its replicas is down.")
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


for _name in ("testPreferredReplicaLeaderElection", "testBackToBackPreferredReplicaLeaderElections",
              "testPreferredReplicaLeaderElectionWithOfflinePreferredReplica",
              "testAutoPreferredReplicaLeaderElection"):
    missing(CI + _name, "preferred election", "Preferred-replica leader election (manual or automatic).")


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


missing(CI + "testControlledShutdown", "controlled shutdown", "Three controlled shutdowns in turn.")
missing(CI + "testControllerRejectControlledShutdownRequestWithStaleBrokerEpoch", "controlled shutdown",
        "A ControlledShutdown request with a stale broker epoch.")
missing(CI + "testControllerMoveOnTopicCreation", "partition expansion",
        "The controller handles a topic creation after it moved and resigns (ControllerMovedException).")
missing(CI + "testControllerMoveOnTopicDeletion", "StopReplica",
        "The controller handles a topic deletion after it moved and resigns.")
missing(CI + "testControllerMoveOnPreferredReplicaElection", "preferred election",
        "The controller handles a preferred election after it moved and resigns.")


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
