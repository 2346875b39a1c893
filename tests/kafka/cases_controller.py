"""PartitionLeaderElectionAlgorithmsTest, ControllerChannelManagerTest, ControllerIntegrationTest (Kafka 2.4.0)."""

from __future__ import annotations

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


for _name in ("testReassignPartitionLeaderElection", "testReassignPartitionLeaderElectionWithNoLiveIsr",
              "testReassignPartitionLeaderElectionWithEmptyIsr"):
    missing(P + _name, "reassignment", "reassignPartitionLeaderElection runs only during a reassignment.")
for _name in ("testPreferredReplicaPartitionLeaderElection",
              "testPreferredReplicaPartitionLeaderElectionPreferredReplicaInIsrNotLive",
              "testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrLive",
              "testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrNotLive"):
    missing(P + _name, "preferred election", "preferredReplicaPartitionLeaderElection.")
for _name in ("testControlledShutdownPartitionLeaderElection",
              "testControlledShutdownPartitionLeaderElectionLastIsrShuttingDown",
              "testControlledShutdownPartitionLeaderElectionAllIsrSimultaneouslyShutdown"):
    missing(P + _name, "controlled shutdown", "controlledShutdownPartitionLeaderElection (shutting-down brokers).")
