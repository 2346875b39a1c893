"""IsrExpirationTest, HighwatermarkPersistenceTest, LogRecoveryTest, UncleanLeaderElectionTest (Kafka 2.4.0)."""

from __future__ import annotations

from kafkacase import Case, case, errors, missing, out_of_scope

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
