"""LeaderEpochFileCacheTest and EpochDrivenReplicationProtocolAcceptanceTest (Kafka 2.4.0)."""

from __future__ import annotations

from kafkacase import Case, case, missing, out_of_scope

E = "LeaderEpochFileCacheTest."
EP = "EpochDrivenReplicationProtocolAcceptanceTest."

PREFIX = ("Kafka's unit test starts from an empty cache and assigns arbitrary (epoch, offset) pairs; the model's "
          "cache is filled by appends and makeLeader, so it also holds the entries of the log's earlier epochs "
          "(a log cannot start above offset 0), and the checks name the whole cache, that prefix included.")

# ---------------------------------------------------------------------------- assign


@case(E + "shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned")
def no_overwrite_leo_once_assigned():
    c = Case(E + "shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned",
             "An epoch assigned at the log end offset 9 (here: the leader's new epoch, assigned by makeLeader) "
             "keeps start offset 9 when assigned again at 10 (the next append).",
             n_brokers=3, replication_factor=2)
    c.adapt(PREFIX)
    c.adapt("Kafka's epoch 2 is epoch 1 here: the leader holds 9 records of epoch 0 when the controller bumps "
            "its epoch (broker 1 stops).")
    c.create_topic(controller=2).produce(0, acks=1, n=9)
    c.crash(1).broker_change(2).deliver_all()
    c.check("brokers.0.logs.0.epoch_cache", [[0, 0], [1, 9]], "epoch 1 assigned at the log end offset 9")
    c.produce(0, acks=1, n=2)
    c.check("brokers.0.logs.0.epoch_cache", [[0, 0], [1, 9]], "appends at 9 and 10 leave (1, 9) unchanged")
    return c


@case(E + "shouldEnforceMonotonicallyIncreasingStartOffsets")
def monotonic_start_offsets():
    c = Case(E + "shouldEnforceMonotonicallyIncreasingStartOffsets",
             "Assigning a new epoch at the same start offset (9) replaces the previous epoch's entry: only the "
             "new epoch starts at 9.", n_brokers=4, replication_factor=3)
    c.adapt(PREFIX)
    c.adapt("Kafka's epochs 2 and 3 are 1 and 2 here: the leader's epoch is bumped twice (brokers 1 and 2 "
            "stop) with no append in between, so both are assigned at its log end offset 9.")
    c.create_topic(controller=3).produce(0, acks=1, n=9)
    c.crash(1).broker_change(3).deliver_all()
    c.check("brokers.0.logs.0.epoch_cache", [[0, 0], [1, 9]], "epoch 1 at 9")
    c.crash(2).broker_change(3).deliver_all()
    c.check("brokers.0.logs.0.epoch_cache", [[0, 0], [2, 9]], "epoch 2 at 9 replaces epoch 1 at 9")
    return c


@case(E + "shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned")
def no_overwrite_offset_once_assigned():
    c = Case(E + "shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned",
             "An epoch assigned at 6 keeps its start offset 6 when assigned again later at a greater offset (10).",
             n_brokers=3, replication_factor=2)
    c.adapt(PREFIX)
    c.adapt("Kafka's epoch 2 is epoch 1 here (the leader's epoch bumped at log end offset 6); the later "
            "assignments are the appends at 6 to 10.")
    c.create_topic(controller=2).produce(0, acks=1, n=6)
    c.crash(1).broker_change(2).deliver_all()
    c.produce(0, acks=1, n=5)
    c.check("brokers.0.logs.0.epoch_cache.-1", [1, 6], "the epoch's start offset is still 6")
    return c


@case(E + "shouldNotUpdateEpochAndStartOffsetIfItDidNotChange")
def no_update_if_unchanged():
    c = Case(E + "shouldNotUpdateEpochAndStartOffsetIfItDidNotChange",
             "Assigning the same epoch at 6 and then 7 leaves one entry for it, at 6.",
             n_brokers=3, replication_factor=2)
    c.adapt(PREFIX)
    c.adapt("The assignments are a follower's appends of two records of epoch 1 at offsets 6 and 7.")
    c.create_topic(controller=2).catch_up()
    c.produce(0, acks=1, n=6).catch_up()
    c.expire(1).broker_change(2).deliver_all().reconnect(1).broker_change(2).deliver_all()
    c.produce(0, acks=1, n=2).catch_up()
    c.check("brokers.1.logs.0.entries", [[1, 0], [2, 0], [3, 0], [4, 0], [5, 0], [6, 0], [7, 1], [8, 1]],
            "the follower appended records of epoch 1 at 6 and 7")
    c.check("brokers.1.logs.0.epoch_cache", [[0, 0], [1, 6]], "one entry for epoch 1, at 6")
    return c


missing(E + "shouldAddEpochAndMessageOffsetToCache", "epoch-cache queries",
        "endOffsetFor(2) = (2, log end offset) on a cache whose only entry is (2, 10).")
missing(E + "shouldReturnLogEndOffsetIfLatestEpochRequested", "epoch-cache queries",
        "endOffsetFor(latest epoch) = (latest epoch, log end offset).")
missing(E + "shouldReturnUndefinedOffsetIfUndefinedEpochRequested", "epoch-cache queries",
        "endOffsetFor(UNDEFINED_EPOCH) = UNDEFINED.")
missing(E + "shouldReturnUnsupportedIfNoEpochRecorded", "epoch-cache queries", "endOffsetFor on an empty cache.")
missing(E + "shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested", "epoch-cache queries",
        "endOffsetFor(UNDEFINED_EPOCH) on an empty cache.")
missing(E + "shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch", "epoch-cache queries",
        "endOffsetFor(4) = (4, 11) below the first epoch 5 (starting at 11).")
missing(E + "shouldTruncateIfMatchingEpochButEarlierStartingOffset", "epoch-cache queries",
        "An epoch re-assigned at an earlier offset, then endOffsetFor(5) and (6).")
missing(E + "shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch", "epoch-cache queries",
        "endOffsetFor(2) = start of epoch 3.")
missing(E + "shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested", "epoch-cache queries",
        "endOffsetFor of epochs missing from the cache (1, 3).")
missing(E + "shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked", "epoch-cache queries",
        "endOffsetFor(3) above the latest epoch 2 is UNDEFINED.")
missing(E + "shouldSupportEpochsThatDoNotStartFromZero", "epoch-cache queries",
        "endOffsetFor(2) on a cache whose first entry is (2, 6).")


@case(E + "shouldPersistEpochsBetweenInstances")
def persist_between_instances():
    c = Case(E + "shouldPersistEpochsBetweenInstances",
             "The epoch cache is checkpointed (leader-epoch-checkpoint): a new instance reading the file has the "
             "same entries.", n_brokers=3, replication_factor=2)
    c.adapt(PREFIX)
    c.adapt("The new instance is the one the broker builds when it restarts; the cache holds (0, 0) and (1, 6) "
            "(Kafka: (2, 6)).")
    c.create_topic(controller=2).produce(0, acks=1, n=6)
    c.crash(1).broker_change(2).deliver_all()
    c.check("brokers.0.logs.0.epoch_cache", [[0, 0], [1, 6]], "the cache holds (1, 6)")
    c.crash(0, clean=False).expire(0).restart(0)
    c.check("brokers.0.logs.0.epoch_cache", [[0, 0], [1, 6]], "after the restart the cache is read back: (1, 6)")
    return c


missing(E + "shouldEnforceMonotonicallyIncreasingEpochs", "starting states",
        "An older epoch (1) assigned after a newer one (2): no replica appends an epoch older than its latest, "
        "so only an arbitrary cache reaches it.")
missing(E + "shouldEnforceOffsetsIncreaseMonotonically", "starting states",
        "A newer epoch assigned below the latest entry's start offset without a truncation first.")
missing(E + "shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes", "epoch-cache queries",
        "endOffsetFor of each epoch as epochs are assigned and the log end moves.")
missing(E + "shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages", "epoch-cache queries",
        "latestEpoch and endOffsetFor of each epoch as a follower appends.")


def _truncate_from_end(name: str, x_fetches_at: int, kept: list, description: str) -> Case:
    c = Case(E + name, description, n_brokers=6, replication_factor=5)
    c.adapt(PREFIX)
    c.adapt("Kafka's entries (2, 6), (3, 8), (4, 11) are (1, 6), (2, 8), (3, 11) here, after (0, 0): broker 0 "
            "leads and writes 6, 2, 3 and 1 records in epochs 0 to 3 (the controller bumps its epoch as brokers "
            "2, 3 and 4 stop).  Broker 1 replicated the first " + str(x_fetches_at) + " records; it is elected when "
            "broker 0's session expires, and broker 0, following it, truncates to " + str(x_fetches_at) +
            ": the cache is truncated from the end there.")
    c.create_topic(controller=5).ofle(1)
    for crashed, n_records in ((None, 6), (2, 2), (3, 3), (4, 1)):
        if crashed is not None:
            c.crash(crashed).broker_change(5).deliver_all().ofle(1)      # the leader's epoch + 1
        for _ in range(n_records):
            c.produce(0, acks=1)
            if c.s.brokers[0].logs[0].log_end_offset == x_fetches_at:
                c.fetch(1)
    c.check("brokers.0.logs.0.epoch_cache", [[0, 0], [1, 6], [2, 8], [3, 11]], "epochs start at 0, 6, 8, 11")
    c.expire(0).broker_change(5).deliver_all()
    c.check("zk.partition_states.0.leader", 1, "broker 1 leads")
    c.reconnect(0).broker_change(5).deliver_all().ofle(0)
    c.check("brokers.0.logs.0.epoch_cache", kept, "the cache truncated from the end at the truncation offset")
    return c


@case(E + "shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries")
def drop_on_boundary():
    return _truncate_from_end("shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries", 8, [[0, 0], [1, 6]],
                              "Truncating the log from the end at 8, where an epoch starts, removes that epoch's "
                              "entry and every later one (removal is inclusive).")


@case(E + "shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest")
def drop_between_boundaries():
    return _truncate_from_end("shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest", 9,
                              [[0, 0], [1, 6], [2, 8]],
                              "Truncating the log from the end at 9, inside an epoch, keeps that epoch's entry "
                              "(the latest epoch becomes it) and removes the later ones.")


for _name in ("shouldPreserveResetOffsetOnClearEarliestIfOneExists",
              "shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs", "shouldNotClearAnythingIfOffsetToEarly",
              "shouldNotClearAnythingIfOffsetToFirstOffset", "shouldRetainLatestEpochOnClearAllEarliest",
              "shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest",
              "shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2",
              "shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset"):
    missing(E + _name, "log start offset", "truncateFromStart: the log start offset moving up.")
missing(E + "shouldClearAllEntries", "log start offset",
        "clearAndFlush, as truncateFullyAndStartAt does for a follower below the leader's log start.")
out_of_scope(E + "shouldNotResetEpochHistoryHeadIfUndefinedPassed",
             "a guard: truncateFromEnd(UNDEFINED_EPOCH_OFFSET), which no log operation passes")
out_of_scope(E + "shouldNotResetEpochHistoryTailIfUndefinedPassed",
             "a guard: truncateFromEnd(UNDEFINED_EPOCH_OFFSET), which no log operation passes")


@case(E + "shouldFetchLatestEpochOfEmptyCache")
def latest_epoch_of_empty_cache():
    c = Case(E + "shouldFetchLatestEpochOfEmptyCache",
             "An empty epoch cache has no latest epoch.", n_brokers=2, replication_factor=2)
    c.adapt("The empty cache is a new follower's, before it has fetched anything.")
    c.create_topic(controller=0)
    c.check("brokers.1.logs.0.epoch_cache", [], "the cache is empty: latestEpoch is None")
    return c


missing(E + "shouldFetchEndOffsetOfEmptyCache", "epoch-cache queries", "endOffsetFor(7) on an empty cache.")
out_of_scope(E + "shouldClearEarliestOnEmptyCache", "a guard: truncateFromStart on an empty cache does not throw")
out_of_scope(E + "shouldClearLatestOnEmptyCache", "a guard: truncateFromEnd on an empty cache does not throw")


# ======================================================================= EpochDrivenReplicationProtocolAcceptanceTest
# Two brokers (Kafka's 100 and 101 are 0 and 1) host the partition; a third broker hosts the
# controller so that bouncing either replica does not move it.  Kafka bounces brokers with
# controlled shutdown; a follower's controlled shutdown and a plain shutdown leave the same partition
# state (it leaves the ISR, epoch + 1), and so does a leader's (the other ISR member leads, epoch + 1).

TWO = dict(n_brokers=3, replication_factor=2)


def _leader(c: Case) -> int:
    return c.s.zk.partition_states[0].leader


@case(EP + "shouldFollowLeaderEpochBasicWorkflow")
def basic_workflow():
    c = Case(EP + "shouldFollowLeaderEpochBasicWorkflow",
             "Records carry the epoch of the leader that wrote them and both replicas' epoch caches follow: a "
             "new epoch is in the leader's cache as soon as it leads, and in the follower's once it has fetched "
             "a record of that epoch.", **TWO)
    c.adapt("A third broker hosts the controller; bounces are plain shutdowns (see the module's note).")
    c.create_topic(controller=2).catch_up()
    c.produce(0, acks=-1).catch_up()
    c.check("brokers.0.logs.0.entries.-1", [1, 0], "the record has epoch 0 on the leader")
    c.check("brokers.1.logs.0.entries.-1", [1, 0], "and on the follower")
    c.check("brokers.0.logs.0.epoch_cache", [[0, 0]], "both record epoch 0 at offset 0 (leader)")
    c.check("brokers.1.logs.0.epoch_cache", [[0, 0]], "both record epoch 0 at offset 0 (follower)")
    c.crash(1).broker_change(2).deliver_all().restart(1).broker_change(2).deliver_all().catch_up()
    c.check("brokers.0.partitions.0.isr", [0, 1], "the follower is back in the ISR")
    c.check("brokers.0.logs.0.epoch_cache", [[0, 0], [1, 1]], "the leader has epoch 1 at 1")
    c.check("brokers.1.logs.0.epoch_cache", [[0, 0]], "the follower does not yet")
    c.produce(0, acks=-1).catch_up()
    c.check("brokers.0.logs.0.epoch_cache", [[0, 0], [1, 1]], "after a record: the leader's cache")
    c.check("brokers.1.logs.0.epoch_cache", [[0, 0], [1, 1]], "and the follower's have epoch 1 at 1")
    c.check("brokers.0.logs.0.entries.-1", [2, 1], "the new record has epoch 1 on the leader")
    c.check("brokers.1.logs.0.entries.-1", [2, 1], "and on the follower")
    c.crash(0).broker_change(2).deliver_all().restart(0).broker_change(2).deliver_all().catch_up()
    c.check("zk.partition_states.0.leader", 1, "broker 1 leads now")
    c.check("brokers.1.partitions.0.isr", [0, 1], "broker 0 is back in the ISR")
    c.check("brokers.1.logs.0.epoch_cache", [[0, 0], [1, 1], [2, 2]], "the new leader has epoch 2 at 2")
    c.check("brokers.0.logs.0.epoch_cache", [[0, 0], [1, 1]], "the follower does not yet")
    c.produce(1, acks=-1).catch_up()
    c.check("brokers.1.logs.0.entries.-1", [3, 2], "the new record has epoch 2 on the leader")
    c.check("brokers.0.logs.0.entries.-1", [3, 2], "and on the follower")
    c.check("brokers.1.logs.0.epoch_cache", [[0, 0], [1, 1], [2, 2]], "the caches match (leader)")
    c.check("brokers.0.logs.0.epoch_cache", [[0, 0], [1, 1], [2, 2]], "the caches match (follower)")
    return c


@case(EP + "shouldNotAllowDivergentLogs")
def no_divergent_logs():
    c = Case(EP + "shouldNotAllowDivergentLogs",
             "Ten records replicated; both brokers stop and the leader's log loses its last five records; broker "
             "0 restarts alone (writes fail: it is not in the ISR), broker 1 restarts: once replication resyncs "
             "both logs are the same.", preset_name="crash-loses-unflushed", **TWO)
    c.adapt("Kafka cuts five records off the stopped broker's log file; here broker 0 crashes with only its "
            "first five records flushed (crash-loses-unflushed).  Broker 0 stops first, so broker 1 is the last "
            "ISR member and broker 0 cannot lead alone; the ten larger records Kafka writes then are not "
            "accepted, as here (its producer does not check them).")
    c.create_topic(controller=2).catch_up()
    c.produce(0, acks=-1, n=5).catch_up()
    c.flush(0)
    c.produce(0, acks=-1, n=5).catch_up()
    c.crash(0, clean=False).expire(0).broker_change(2).deliver_all()
    c.crash(1).broker_change(2).deliver_all()
    c.check("brokers.0.logs.0.entries", [[i, 0] for i in range(1, 6)], "broker 0 lost its last five records")
    c.restart(0).broker_change(2).deliver_all()
    for _ in range(10):
        c.produce(0, acks=-1)
    c.check("ghost.produced", 10, "nothing more is written while broker 0 is alone")
    c.restart(1).broker_change(2).deliver_all().catch_up()
    c.check("brokers.1.logs.0.entries", [[i, 0] for i in range(1, 11)], "broker 1's log")
    c.check("brokers.0.logs.0.entries", [[i, 0] for i in range(1, 11)], "matches broker 0's")
    return c


missing(EP + "offsetsShouldNotGoBackwards", "batches",
        "Compressed batches whose boundaries do not line up with the follower's log end (the pre-KIP-101 "
        "non-monotonic offsets).")


@case(EP + "shouldSurviveFastLeaderChange")
def fast_leader_change():
    c = Case(EP + "shouldSurviveFastLeaderChange",
             "Five times: write a record, bounce the follower, wait for the ISR, bounce the leader, wait for the "
             "ISR: no record is lost, both logs end at the number of records written.", **TWO)
    c.adapt("A third broker hosts the controller.  The check is on both logs' records (each record's epoch is "
            "the leader's when written: every round bumps the epoch twice).")
    c.create_topic(controller=2).catch_up()
    c.produce(0, acks=-1).catch_up()
    expected = [[1, 0]]
    for i in range(5):
        leader = _leader(c)
        follower = 1 - leader
        c.produce(leader, acks=-1).catch_up()
        expected.append([i + 2, 2 * i])
        c.crash(follower).broker_change(2).deliver_all().restart(follower).broker_change(2).deliver_all()
        c.catch_up()
        c.crash(leader).broker_change(2).deliver_all().restart(leader).broker_change(2).deliver_all()
        c.catch_up()
        c.check("brokers.0.logs.0.entries", expected, f"round {i + 1}: broker 0 has every record")
        c.check("brokers.1.logs.0.entries", expected, f"round {i + 1}: broker 1 has every record")
    return c


@case(EP + "logsShouldNotDivergeOnUncleanLeaderElections")
def no_divergence_unclean():
    c = Case(EP + "logsShouldNotDivergeOnUncleanLeaderElections",
             "With unclean leader election, acks=1 and brokers alternately stopped and started (each elected "
             "while the other is away, writing its own records), the logs end up identical once both run.",
             unclean_leader_election=True, **TWO)
    c.adapt("A third broker hosts the controller.  Record ids: 1 (both), 2 (broker 1 alone), 3-5 (broker 0), 6 "
            "(broker 1), 7-8 (broker 0).")
    c.create_topic(controller=2).catch_up()
    c.produce(0, acks=1).catch_up()
    c.check("brokers.1.logs.0.entries", [[1, 0]], "the logs match for the first epoch")
    c.crash(0).broker_change(2).deliver_all()
    c.produce(1, acks=1)
    c.crash(1).broker_change(2).restart(0).broker_change(2).deliver_all()
    c.produce(0, acks=1, n=3)
    c.crash(0).broker_change(2).restart(1).broker_change(2).deliver_all()
    c.produce(1, acks=1)
    c.crash(1).broker_change(2).restart(0).broker_change(2).deliver_all()
    c.produce(0, acks=1, n=2)
    c.restart(1).broker_change(2).deliver_all().catch_up()
    final = [[1, 0], [3, 3], [4, 3], [5, 3], [7, 7], [8, 7]]
    c.check("brokers.0.logs.0.entries", final, "broker 0's log")
    c.check("brokers.1.logs.0.entries", final, "broker 1's log is the same")
    return c
