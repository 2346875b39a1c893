"""IsrExpirationTest, HighwatermarkPersistenceTest, LogRecoveryTest, UncleanLeaderElectionTest (Kafka 2.4.0)."""

from __future__ import annotations

from kafkacase import Case, case, missing, out_of_scope

# ============================================================================ IsrExpirationTest
# Two brokers, replica.lag.time.max.ms = 100 (the isr-expiration task runs every 50 ms), broker 0
# (configs.head) leads, the leader's log end offset is 20.  Kafka's test calls getOutOfSyncReplicas;
# here the isr-expiration task (maybeShrinkIsr) runs on its schedule and the ISR it leaves is checked.

LAG = dict(n_brokers=2, replication_factor=2, replica_lag_time_max_ms=100, max_records=20)


def _isr_leader_up(c: Case) -> Case:
    c.create_topic(controller=1)
    c.catch_up()
    c.check("zk.partition_states.0.isr", [0, 1], "all replicas in the ISR")
    c.check("brokers.0.partitions.0.isr", [0, 1], "all replicas in the ISR (leader's view)")
    return c


@case("IsrExpirationTest.testIsrExpirationForStuckFollowers")
def isr_stuck():
    c = Case("IsrExpirationTest.testIsrExpirationForStuckFollowers",
             "A follower that caught up to the leader's log end offset minus one and then stops fetching "
             "falls out of the ISR once replica.lag.time.max.ms (100 ms) has passed since it was last caught up.",
             **LAG)
    _isr_leader_up(c)
    c.produce(0, acks=1, n=19).fetch(1)                     # follower at 19 = leader LEO 19: caught up now
    c.produce(0, acks=1)                                     # leader LEO 20
    c.fetch_request(1)                                       # fetch at 19 (leaderEnd 20); then it is stuck
    c.check("brokers.0.partitions.0.remote_replicas.0.log_end_offset", 19, "the follower is at the leader's LEO - 1")
    c.run_due_tasks()
    c.check("brokers.0.partitions.0.isr", [0, 1], "no replica is out of sync yet")
    c.sleep(150)
    c.check("brokers.0.partitions.0.isr", [0], "150 ms > 100 ms without catching up: replica 1 is out of sync")
    c.check("zk.partition_states.0.isr", [0], "and the shrink is written to ZooKeeper")
    return c


@case("IsrExpirationTest.testIsrExpirationIfNoFetchRequestMade")
def isr_no_fetch():
    c = Case("IsrExpirationTest.testIsrExpirationIfNoFetchRequestMade",
             "A follower that never fetches falls out of the ISR once 150 ms (> replica.lag.time.max.ms = 100) "
             "have passed since the leader took it for caught up.", **LAG)
    c.create_topic(controller=1)
    c.produce(0, acks=1, n=20)
    c.check("brokers.0.partitions.0.isr", [0, 1], "all replicas in the ISR")
    c.sleep(150)
    c.check("brokers.0.partitions.0.isr", [0], "replica 1 never fetched: out of sync after 150 ms")
    c.check("zk.partition_states.0.isr", [0], "and the shrink is written to ZooKeeper")
    return c


@case("IsrExpirationTest.testIsrExpirationForSlowFollowers")
def isr_slow():
    c = Case("IsrExpirationTest.testIsrExpirationForSlowFollowers",
             "A follower that keeps fetching but never reaches the leader's log end offset falls out of the ISR "
             "after replica.lag.time.max.ms; a fetch up to the log end brings it back.", **LAG)
    _isr_leader_up(c)
    c.produce(0, acks=1, n=18).fetch(1)                      # caught up at 18, at time t0
    c.produce(0, acks=1)                                     # LEO 19
    c.fetch_request(1)                                       # fetch at 18: not at the log end
    c.produce(0, acks=1)                                     # LEO 20
    c.run_due_tasks()
    c.check("brokers.0.partitions.0.remote_replicas.0.log_end_offset", 18, "the follower fetched at 18")
    c.check("brokers.0.partitions.0.isr", [0, 1], "no replica is out of sync yet")
    c.sleep(75)
    c.fetch_response(1).fetch_request(1)                     # fetch at 19 (leaderEnd 20), 75 ms later
    c.check("brokers.0.partitions.0.remote_replicas.0.log_end_offset", 19, "the follower fetched at 19")
    c.run_due_tasks()
    c.check("brokers.0.partitions.0.isr", [0, 1], "75 ms: no replica is out of sync yet")
    c.sleep(75)
    c.check("brokers.0.partitions.0.isr", [0], "150 ms since last caught up: replica 1 is out of sync")
    c.fetch_response(1).fetch_request(1)                     # fetch at 20 = the log end
    c.check("brokers.0.partitions.0.remote_replicas.0.log_end_offset", 20, "the follower fetched at the log end")
    c.check("brokers.0.partitions.0.isr", [0, 1], "a fetch to the log end brings it back into the ISR")
    return c


@case("IsrExpirationTest.testIsrExpirationForCaughtUpFollowers")
def isr_caught_up():
    c = Case("IsrExpirationTest.testIsrExpirationForCaughtUpFollowers",
             "A follower whose log end offset equals the leader's is never out of sync, however long it has not "
             "fetched (KAFKA-7152).", **LAG)
    _isr_leader_up(c)
    c.produce(0, acks=1, n=20).fetch(1, rounds=2)
    c.check("brokers.0.partitions.0.remote_replicas.0.log_end_offset", 20, "the follower is at the leader's LEO")
    c.run_due_tasks()
    c.check("brokers.0.partitions.0.isr", [0, 1], "no replica is out of sync")
    c.sleep(150)
    c.check("brokers.0.partitions.0.isr", [0, 1], "150 ms later the caught-up follower is still in the ISR")
    return c


# ============================================================================ HighwatermarkPersistenceTest
H = "HighwatermarkPersistenceTest."


@case(H + "testHighWatermarkPersistenceSinglePartition")
def hw_persistence_single():
    c = Case(H + "testHighWatermarkPersistenceSinglePartition",
             "The replication-offset-checkpoint file holds each hosted partition's HW as of the last checkpoint: "
             "nothing (read as 0) before the partition exists, then its HW, then 5 after the HW moved to 5.",
             n_brokers=2, replication_factor=2)
    c.adapt("Assignment [0, 1] with ISR [0]: broker 1 is down when the partition is created.  The checkpoints "
            "are the highwatermark-checkpoint task's runs (it starts with the first LeaderAndIsr); the HW moves "
            "to 5 by producing 5 records (Kafka sets it directly).")
    c.check("brokers.0.hw_checkpoint", [None], "before the partition exists the file has no entry for it (0)")
    c.crash(1).create_topic(controller=0)
    c.check("brokers.0.partitions.0.isr", [0], "assignment [0, 1], ISR [0]")
    c.run_due_tasks()
    c.check("brokers.0.hw_checkpoint", [0], "the checkpoint holds the log's HW, 0")
    c.produce(0, acks=1, n=5)
    c.check("brokers.0.logs.0.high_watermark", 5, "the HW is 5")
    c.sleep(5000)
    c.check("brokers.0.hw_checkpoint", [5], "the next checkpoint holds 5")
    return c


@case(H + "testHighWatermarkPersistenceMultiplePartitions")
def hw_persistence_multiple():
    c = Case(H + "testHighWatermarkPersistenceMultiplePartitions",
             "With two partitions the checkpoint holds each one's HW: 5 and 0, then 10 and 15 after both moved.",
             n_brokers=1, replication_factor=1, n_partitions=2)
    c.adapt("Kafka's two topics are two partitions of the model's one topic, both hosted from the start.")
    c.unchecked("the entry of the second topic before it exists (read as 0): both partitions exist from the start")
    c.create_topic(controller=0)
    c.run_due_tasks()
    c.check("brokers.0.hw_checkpoint", [0, 0], "both HWs are 0")
    c.produce(0, acks=1, n=5, p=0)
    c.sleep(5000)
    c.check("brokers.0.hw_checkpoint", [5, 0], "partition 0 checkpointed at 5, partition 1 at its HW 0")
    c.produce(0, acks=1, n=15, p=1).produce(0, acks=1, n=5, p=0)
    c.check("brokers.0.logs.1.high_watermark", 15, "partition 1's HW is 15")
    c.check("brokers.0.logs.0.high_watermark", 10, "partition 0's HW is 10")
    c.sleep(5000)
    c.check("brokers.0.hw_checkpoint", [10, 15], "the checkpoint holds 10 and 15")
    return c


# ============================================================================ LogRecoveryTest
L = "LogRecoveryTest."
RECOVERY = dict(n_brokers=2, replication_factor=2, replica_lag_time_max_ms=5000)


@case(L + "testHWCheckpointNoFailuresSingleLogSegment")
def hw_checkpoint_no_failures():
    c = Case(L + "testHWCheckpointNoFailuresSingleLogSegment",
             "Two messages replicated, the follower's HW reaches 2: both brokers checkpoint HW 2.", **RECOVERY)
    c.create_topic(controller=0).catch_up()
    c.produce(0, acks=-1, n=2).catch_up()
    c.check("brokers.1.logs.0.high_watermark", 2, "the follower's HW is 2")
    c.sleep(5000)
    c.check("brokers.0.hw_checkpoint", [2], "the leader checkpoints 2")
    c.check("brokers.1.hw_checkpoint", [2], "the follower checkpoints 2")
    return c


@case(L + "testHWCheckpointWithFailuresSingleLogSegment")
def hw_checkpoint_with_failures():
    c = Case(L + "testHWCheckpointWithFailuresSingleLogSegment",
             "HW checkpoints survive leader moves: broker 0 (leader, HW 1) stops and checkpoints 1, broker 1 "
             "leads; broker 0 returns, rejoins the ISR; broker 1 stops and checkpoints 1; one more message: both "
             "brokers checkpoint 2 when they stop.", **RECOVERY)
    c.adapt("Broker 1 hosts the controller; when it stops, broker 0 becomes controller.")
    c.create_topic(controller=1).catch_up()
    c.run_due_tasks()
    c.check("brokers.0.hw_checkpoint", [0], "the leader's checkpoint holds 0")
    c.produce(0, acks=-1).catch_up().sleep(1000)
    c.crash(0)
    c.check("brokers.0.hw_checkpoint", [1], "broker 0 stopped with HW 1 checkpointed")
    c.broker_change(1).deliver_all()
    c.check("zk.partition_states.0.leader", 1, "the leader moves to broker 1")
    c.restart(0).broker_change(1).deliver_all()
    c.check("brokers.0.hw_checkpoint", [1], "broker 0's checkpoint still holds 1")
    c.catch_up()
    c.check("brokers.1.partitions.0.isr", [0, 1], "broker 0 rejoined the ISR")
    c.crash(1)
    c.check("brokers.1.hw_checkpoint", [1], "broker 1 stopped with HW 1 checkpointed")
    c.elect(0).deliver_all().restart(1).broker_change(0).deliver_all().catch_up()
    c.produce(c.s.zk.partition_states[0].leader, acks=-1).catch_up()
    c.check("brokers.1.logs.0.high_watermark", 2, "the follower's HW reaches 2")
    c.crash(0).crash(1)
    c.check("brokers.0.hw_checkpoint", [2], "broker 0 checkpoints 2 when it stops")
    c.check("brokers.1.hw_checkpoint", [2], "broker 1 checkpoints 2 when it stops")
    return c


@case(L + "testHWCheckpointNoFailuresMultipleLogSegments")
def hw_checkpoint_no_failures_segments():
    c = Case(L + "testHWCheckpointNoFailuresMultipleLogSegments",
             "Twenty messages replicated, the follower's HW reaches 20: both brokers checkpoint 20 when they "
             "stop.", **RECOVERY)
    c.adapt("The model has no log segments: the case is the same as with one segment, with 20 messages.")
    c.create_topic(controller=0).catch_up()
    c.produce(0, acks=-1, n=20).catch_up()
    c.check("brokers.1.logs.0.high_watermark", 20, "the follower's HW is 20")
    c.crash(0).crash(1)
    c.check("brokers.0.hw_checkpoint", [20], "the leader checkpoints 20")
    c.check("brokers.1.hw_checkpoint", [20], "the follower checkpoints 20")
    return c


@case(L + "testHWCheckpointWithFailuresMultipleLogSegments")
def hw_checkpoint_with_failures_segments():
    c = Case(L + "testHWCheckpointWithFailuresMultipleLogSegments",
             "Both brokers stop with HW 2 checkpointed; broker 1 starts and leads; broker 0 starts; the "
             "checkpoints still hold 2; two more messages: both checkpoint 4 when they stop.", **RECOVERY)
    c.adapt("The model has no log segments.  The controller is elected on broker 1 when it starts alone.")
    c.create_topic(controller=0).catch_up()
    c.produce(0, acks=-1, n=2).catch_up()
    c.check("brokers.1.logs.0.high_watermark", 2, "the follower's HW is 2")
    c.crash(0).crash(1)
    c.check("brokers.0.hw_checkpoint", [2], "broker 0 checkpointed 2")
    c.check("brokers.1.hw_checkpoint", [2], "broker 1 checkpointed 2")
    c.restart(1).elect(1).deliver_all()
    c.check("zk.partition_states.0.leader", 1, "the leader moves to broker 1")
    c.check("brokers.0.hw_checkpoint", [2], "broker 0's checkpoint holds 2")
    c.restart(0).broker_change(1).deliver_all()
    c.check("brokers.0.hw_checkpoint", [2], "broker 0's checkpoint holds 2")
    c.check("brokers.1.hw_checkpoint", [2], "broker 1's checkpoint holds 2")
    c.produce(1, acks=-1, n=2).catch_up()
    c.check("brokers.0.logs.0.high_watermark", 4, "the follower (broker 0) reaches HW 4")
    c.crash(0).crash(1)
    c.check("brokers.0.hw_checkpoint", [4], "broker 0 checkpoints 4")
    c.check("brokers.1.hw_checkpoint", [4], "broker 1 checkpoints 4")
    return c


# ============================================================================ UncleanLeaderElectionTest
U = "UncleanLeaderElectionTest."


def _unclean(name: str, enabled: bool, override: str | None) -> Case:
    config = "enabled" if enabled else "disabled"
    c = Case(U + name,
             f"Unclean leader election {config}: the follower stops, 'second' is written to the leader alone, the "
             f"leader stops and the follower starts. " +
             ("It is elected uncleanly (count 1) and 'second' is lost: the log is first, third." if enabled else
              "No leader is elected (count 0), writes and reads fail; the old leader returns, 'third' is "
              "written, the follower rejoins the ISR, the leader stops: the follower leads cleanly with first, "
              "second, third."),
             n_brokers=3, replication_factor=2, unclean_leader_election=enabled)
    if override:
        c.adapt(override)
        c.unchecked("that the topic-level override takes precedence over the broker default (one setting here)")
    c.adapt("Kafka shuts brokers down with controlled shutdown; the partition states it leads to are those of a "
            "plain shutdown here (the follower leaves the ISR with an epoch bump; the last ISR member keeps the "
            "leadership until it stops).  A third broker hosts the controller.  Consuming reads every record "
            "below the leader's HW (the ghost keeps each read as partition, offset, record, leader epoch).")
    c.create_topic(controller=2).catch_up()
    c.produce(0, acks=-1).catch_up().consume(0)
    c.check("ghost.consumed", [[0, 0, 1, 0]], "consumed: first")
    c.crash(1).broker_change(2).deliver_all()
    c.produce(0, acks=-1).consume(0)
    c.check("ghost.consumed", [[0, 0, 1, 0], [0, 0, 1, 1], [0, 1, 2, 1]], "consumed: first, second")
    c.crash(0).restart(1).broker_change(2).deliver_all()
    if enabled:
        c.check("zk.partition_states.0.leader", 1, "the follower is elected")
        c.check("ghost.unclean_elections", 1, "uncleanly: the unclean-election count is 1")
        c.produce(1, acks=-1).consume(1)
        c.check("brokers.1.logs.0.entries", [[1, 0], [3, 2]], "'second' was lost: first, third")
        c.check("ghost.consumed", [[0, 0, 1, 0], [0, 0, 1, 1], [0, 0, 1, 2], [0, 1, 2, 1], [0, 1, 3, 2]],
                "consumed: first, third")
        return c
    c.check("zk.partition_states.0.leader", -1, "no leader is elected")
    c.check("ghost.unclean_elections", 0, "the unclean-election count is 0")
    c.produce(1, acks=-1)
    c.check("ghost.produced", 2, "'third' cannot be written while there is no leader")
    c.consume(1)
    c.check("ghost.consumed", [[0, 0, 1, 0], [0, 0, 1, 1], [0, 1, 2, 1]], "nothing more can be consumed")
    c.restart(0).broker_change(2).deliver_all()
    c.check("zk.partition_states.0.leader", 0, "the old leader returns and leads")
    c.produce(0, acks=-1).catch_up()
    c.sleep(7500)
    c.isr_notification(2).deliver_all()
    c.check("brokers.1.metadata.partitions.0.isr", [0, 1], "the follower's metadata shows it back in the ISR")
    c.crash(0).broker_change(2).deliver_all()
    c.check("zk.partition_states.0.leader", 1, "the follower leads")
    c.check("ghost.unclean_elections", 0, "cleanly")
    c.consume(1)
    c.check("brokers.1.logs.0.entries", [[1, 0], [2, 1], [3, 3]], "first, second, third")
    c.check("brokers.1.logs.0.high_watermark", 3, "all three are below the HW: a consumer reads all three")
    return c


@case(U + "testUncleanLeaderElectionEnabled")
def unclean_enabled():
    return _unclean("testUncleanLeaderElectionEnabled", True, None)


@case(U + "testUncleanLeaderElectionDisabled")
def unclean_disabled():
    return _unclean("testUncleanLeaderElectionDisabled", False, None)


@case(U + "testUncleanLeaderElectionEnabledByTopicOverride")
def unclean_enabled_override():
    return _unclean("testUncleanLeaderElectionEnabledByTopicOverride", True,
                    "The topic-level override (true over a broker default of false) is the model's one setting: "
                    "the case checks the behaviour the effective value gives, not the precedence itself.")


@case(U + "testUncleanLeaderElectionDisabledByTopicOverride")
def unclean_disabled_override():
    return _unclean("testUncleanLeaderElectionDisabledByTopicOverride", False,
                    "The topic-level override (false over a broker default of true) is the model's one setting: "
                    "the case checks the behaviour the effective value gives, not the precedence itself.")


out_of_scope(U + "testUncleanLeaderElectionInvalidTopicOverride", "configuration validation (an invalid value)")
missing(U + "testTopicUncleanLeaderElectionEnable", "topic config",
        "Enabling unclean.leader.election.enable on the topic at run time triggers the election.")
