"""LeaderEpochFileCacheTest and EpochDrivenReplicationProtocolAcceptanceTest (Kafka 2.4.0)."""

from __future__ import annotations

from kafkacase import Case, case, missing

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




@case(E + "shouldFetchLatestEpochOfEmptyCache")
def latest_epoch_of_empty_cache():
    c = Case(E + "shouldFetchLatestEpochOfEmptyCache",
             "An empty epoch cache has no latest epoch.", n_brokers=2, replication_factor=2)
    c.adapt("The empty cache is a new follower's, before it has fetched anything.")
    c.create_topic(controller=0)
    c.check("brokers.1.logs.0.epoch_cache", [], "the cache is empty: latestEpoch is None")
    return c




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


# ---------------------------------------------------------------------------- the cache's own answers
#: a broker whose log of partition 0 is empty: its epoch cache is the test's fresh LeaderEpochFileCache
FRESH_LOG = {"brokers": [{"broker": 0, "logs": [{"partition": 0}]}]}
UNIT = ("Kafka's test drives a LeaderEpochFileCache of its own (an empty checkpoint, a mocked logEndOffset starting "
        "at 0).  The trace starts from a broker whose log of partition 0 is empty (an empty cache, log end offset 0) "
        "and asks that cache the test's questions through epoch_cache checks: each check applies the test's calls "
        "up to its assertion to a copy of the cache (log_end_offset sets what the mocked logEndOffset returns).")
UNDEFINED = [-1, -1]          # (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
A_6_8_11 = [["assign", 2, 6], ["assign", 3, 8], ["assign", 4, 11]]


def _unit(name: str, description: str) -> Case:
    c = Case(E + name, description, start=FRESH_LOG, n_brokers=1, replication_factor=1)
    c.adapt(UNIT)
    return c


def _ask(c: Case, ops: list, *rows) -> None:
    """One epoch_cache check per (query, expected answer, why) after the same calls."""
    for query, equals, why in rows:
        c.check_cache(query, equals, why, ops)


def _assign(*pairs) -> list:
    return [["assign", e, o] for e, o in pairs]


@case(E + "shouldAddEpochAndMessageOffsetToCache")
def add_epoch_and_offset():
    ops = _assign((2, 10)) + [["log_end_offset", 11]]
    c = _unit("shouldAddEpochAndMessageOffsetToCache",
              "assign(2, 10) with the log end at 11: latest epoch 2, entry (2, 10), endOffsetFor(2) = (2, 11).")
    c.adapt("The test reads the first entry; the check reads the whole list, which holds that one entry.")
    _ask(c, ops,
         ("latest_epoch", 2, "latestEpoch is Some(2)"),
         ("entries", [[2, 10]], "epochEntries(0) is EpochEntry(2, 10)"),
         (["end_offset_for", 2], [2, 11], "endOffsetFor(2) is the log end offset"))
    return c


@case(E + "shouldReturnLogEndOffsetIfLatestEpochRequested")
def leo_for_latest_epoch():
    c = _unit("shouldReturnLogEndOffsetIfLatestEpochRequested",
              "The latest epoch's end offset is the log end offset (14).")
    c.check_cache(["end_offset_for", 2], [2, 14], "endOffsetFor(2) = (2, logEndOffset)",
                  _assign((2, 11), (2, 12)) + [["log_end_offset", 14]])
    return c


@case(E + "shouldReturnUndefinedOffsetIfUndefinedEpochRequested")
def undefined_epoch_requested():
    c = _unit("shouldReturnUndefinedOffsetIfUndefinedEpochRequested",
              "endOffsetFor(UNDEFINED_EPOCH) on a cache holding epochs 2 and 3 is (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET).")
    c.check_cache(["end_offset_for", -1], UNDEFINED, "a bootstrapping follower's UNDEFINED_EPOCH",
                  _assign((2, 11), (3, 12)))
    return c


@case(E + "shouldReturnUnsupportedIfNoEpochRecorded")
def no_epoch_recorded():
    c = _unit("shouldReturnUnsupportedIfNoEpochRecorded", "endOffsetFor(0) on an empty cache is undefined.")
    c.check_cache(["end_offset_for", 0], UNDEFINED, "no epoch recorded")
    return c


@case(E + "shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested")
def no_epoch_recorded_undefined_requested():
    c = _unit("shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested",
              "endOffsetFor(UNDEFINED_EPOCH) on an empty cache (log end 73) is undefined.")
    c.check_cache(["end_offset_for", -1], UNDEFINED, "an old-format follower's UNDEFINED_EPOCH",
                  [["log_end_offset", 73]])
    return c


@case(E + "shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch")
def below_first_epoch():
    c = _unit("shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch",
              "An epoch below the first one (5, at 11) answers (the requested epoch, 11).")
    c.check_cache(["end_offset_for", 4], [4, 11], "the first entry's start offset",
                  _assign((5, 11), (6, 12), (7, 13)))
    return c


@case(E + "shouldTruncateIfMatchingEpochButEarlierStartingOffset")
def matching_epoch_earlier_offset():
    ops = _assign((5, 11), (6, 12), (7, 13), (7, 12))
    c = _unit("shouldTruncateIfMatchingEpochButEarlierStartingOffset",
              "Epoch 7 re-assigned at 12, before its start 13, removes epoch 6 (also at 12).")
    _ask(c, ops,
         (["end_offset_for", 5], [5, 12], "epoch 5 ends where epoch 7 now starts"),
         (["end_offset_for", 6], [5, 12], "epoch 6 is gone: epoch 5 answers"))
    return c


@case(E + "shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch")
def subsequent_epoch_start():
    c = _unit("shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch",
              "An earlier epoch ends where the next one starts.")
    c.check_cache(["end_offset_for", 2], [2, 15], "epoch 2 ends at epoch 3's start, 15",
                  _assign((1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16)) + [["log_end_offset", 17]])
    return c


@case(E + "shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested")
def no_exact_epoch():
    ops = _assign((0, 10), (2, 13), (4, 17))
    c = _unit("shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested",
              "An epoch missing from the cache answers the largest epoch below it and the next epoch's start.")
    _ask(c, ops,
         (["end_offset_for", 1], [0, 13], "epoch 1: (0, 13)"),
         (["end_offset_for", 2], [2, 17], "epoch 2: (2, 17)"),
         (["end_offset_for", 3], [2, 17], "epoch 3: (2, 17)"))
    return c


@case(E + "shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked")
def epoch_not_tracked():
    c = _unit("shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked",
              "An epoch above the latest (2) is undefined.")
    c.check_cache(["end_offset_for", 3], UNDEFINED, "epoch 3 is not tracked",
                  [["log_end_offset", 100]] + _assign((2, 100)))
    return c


@case(E + "shouldSupportEpochsThatDoNotStartFromZero")
def epochs_not_from_zero():
    ops = _assign((2, 6)) + [["log_end_offset", 7]]
    c = _unit("shouldSupportEpochsThatDoNotStartFromZero", "A cache whose first entry is (2, 6).")
    _ask(c, ops,
         (["end_offset_for", 2], [2, 7], "endOffsetFor(2) = (2, logEndOffset)"),
         ("entries", [[2, 6]], "one entry, (2, 6)"))
    return c


@case(E + "shouldEnforceMonotonicallyIncreasingEpochs")
def monotonic_epochs():
    ops = (_assign((1, 5)) + [["log_end_offset", 6]] + _assign((2, 6)) + [["log_end_offset", 7]]
           + _assign((1, 7)) + [["log_end_offset", 8]])
    c = _unit("shouldEnforceMonotonicallyIncreasingEpochs",
              "An older epoch (1) assigned after a newer one (2) removes the later epochs.")
    c.adapt("The test reads the first entry; the check reads the whole list, which holds that one entry.")
    _ask(c, ops,
         ("latest_epoch", 1, "later epochs are removed"),
         (["end_offset_for", 1], [1, 8], "epoch 1 now ends at the log end"),
         (["end_offset_for", 2], UNDEFINED, "epoch 2 is undefined"),
         ("entries", [[1, 7]], "epochEntries(0) is EpochEntry(1, 7)"))
    return c


@case(E + "shouldEnforceOffsetsIncreaseMonotonically")
def monotonic_offsets():
    c = _unit("shouldEnforceOffsetsIncreaseMonotonically",
              "A newer epoch assigned below the latest entry's start offset replaces it.")
    c.adapt("The test reads the first entry; the check reads the whole list, which holds that one entry.")
    c.check_cache("entries", [[3, 5]], "the last assignment wins", _assign((2, 6), (3, 5)))
    return c


@case(E + "shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes")
def leaders_change_many_times():
    c = _unit("shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes",
              "Epochs 0, 1 and 2 assigned as leaders change, with the log end moving.")
    ops = _assign((0, 0), (1, 0))
    _ask(c, ops,
         ("latest_epoch", 1, "the epoch goes up"),
         (["end_offset_for", 1], [1, 0], "epoch 1 ends at 0"),
         (["end_offset_for", 0], [0, 0], "epoch 0 ends at 0"))
    ops = ops + [["log_end_offset", 5]]
    _ask(c, ops,
         (["end_offset_for", 1], [1, 5], "5 records written in epoch 1"),
         (["end_offset_for", 0], [0, 0], "epoch 0 still ends at 0"))
    ops = ops + _assign((2, 5)) + [["log_end_offset", 10]]
    _ask(c, ops,
         (["end_offset_for", 2], [2, 10], "epoch 2 ends at the log end"),
         (["end_offset_for", 1], [1, 5], "epoch 1 ends where epoch 2 starts"),
         (["end_offset_for", 0], [0, 0], "epoch 0 still ends at 0"))
    return c


@case(E + "shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages")
def follower_receives_many():
    c = _unit("shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages",
              "A follower's appends assign epochs 0, 1 and 2, three records each.")
    ops = []
    for epoch in (0, 1, 2):
        for offset in range(3 * epoch, 3 * epoch + 3):
            ops += _assign((epoch, offset)) + [["log_end_offset", offset + 1]]
        c.check_cache("latest_epoch", epoch, f"the latest epoch is {epoch}", ops)
        c.check_cache(["end_offset_for", epoch], [epoch, 3 * epoch + 3], "the latest epoch ends at the log end", ops)
    _ask(c, ops,
         (["end_offset_for", 0], [0, 3], "epoch 0 ends where epoch 1 starts"),
         (["end_offset_for", 1], [1, 6], "epoch 1 ends where epoch 2 starts"))
    return c


@case(E + "shouldFetchEndOffsetOfEmptyCache")
def end_offset_of_empty_cache():
    c = _unit("shouldFetchEndOffsetOfEmptyCache", "endOffsetFor(7) on an empty cache is undefined.")
    c.check_cache(["end_offset_for", 7], UNDEFINED, "empty cache")
    return c


def _from_start(name: str, offset: int, kept: list, description: str, given=A_6_8_11) -> Case:
    c = _unit(name, description)
    c.check_cache("entries", kept, f"after truncateFromStart({offset})", list(given) + [["truncate_from_start", offset]])
    return c


@case(E + "shouldPreserveResetOffsetOnClearEarliestIfOneExists")
def from_start_on_boundary():
    return _from_start("shouldPreserveResetOffsetOnClearEarliestIfOneExists", 8, [[3, 8], [4, 11]],
                       "truncateFromStart(8), on an epoch boundary, keeps (3, 8).")


@case(E + "shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs")
def from_start_between():
    return _from_start("shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs", 9, [[3, 9], [4, 11]],
                       "truncateFromStart(9), between boundaries, moves epoch 3's start to 9.")


@case(E + "shouldNotClearAnythingIfOffsetToEarly")
def from_start_too_early():
    return _from_start("shouldNotClearAnythingIfOffsetToEarly", 1, [[2, 6], [3, 8], [4, 11]],
                       "truncateFromStart(1), before the first entry, changes nothing.")


@case(E + "shouldNotClearAnythingIfOffsetToFirstOffset")
def from_start_at_first():
    return _from_start("shouldNotClearAnythingIfOffsetToFirstOffset", 6, [[2, 6], [3, 8], [4, 11]],
                       "truncateFromStart(6), at the first entry, changes nothing.")


@case(E + "shouldRetainLatestEpochOnClearAllEarliest")
def from_start_at_latest():
    return _from_start("shouldRetainLatestEpochOnClearAllEarliest", 11, [[4, 11]],
                       "truncateFromStart(11), at the last entry, keeps only it.")


@case(E + "shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest")
def from_start_between_2():
    return _from_start("shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest", 9, [[3, 9], [4, 11]],
                       "truncateFromStart(9) updates the middle entry's start offset.")


@case(E + "shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2")
def from_start_between_3():
    return _from_start("shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2", 5, [[0, 5], [1, 7], [2, 10]],
                       "truncateFromStart(5) moves epoch 0's start to 5.", _assign((0, 0), (1, 7), (2, 10)))


@case(E + "shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset")
def from_start_beyond_latest():
    return _from_start("shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset", 15, [[4, 15]],
                       "truncateFromStart(15), beyond the last entry, keeps it at 15.")


@case(E + "shouldClearAllEntries")
def clear_all():
    c = _unit("shouldClearAllEntries", "clearAndFlush empties the cache.")
    c.check_cache("entries", [], "no entries", A_6_8_11 + [["clear"]])
    return c


def _from_end_undefined(name: str) -> Case:
    c = _unit(name, "truncateFromEnd(UNDEFINED_EPOCH_OFFSET) does nothing.")
    c.adapt("The test counts the entries; the check names them.")
    c.check_cache("entries", [[2, 6], [3, 8], [4, 11]], "three entries", A_6_8_11 + [["truncate_from_end", -1]])
    return c


for _name in ("shouldNotResetEpochHistoryHeadIfUndefinedPassed", "shouldNotResetEpochHistoryTailIfUndefinedPassed"):
    case(E + _name)(lambda _name=_name: _from_end_undefined(_name))


def _on_empty(name: str, op: str, kafka_op: str) -> Case:
    c = _unit(name, f"{kafka_op}(7) on an empty cache is harmless.")
    c.adapt("The test asserts only that the call returns; the check adds that the cache stays empty.")
    c.check_cache("entries", [], "still empty", [[op, 7]])
    return c


case(E + "shouldClearEarliestOnEmptyCache")(
    lambda: _on_empty("shouldClearEarliestOnEmptyCache", "truncate_from_start", "truncateFromStart"))
case(E + "shouldClearLatestOnEmptyCache")(
    lambda: _on_empty("shouldClearLatestOnEmptyCache", "truncate_from_end", "truncateFromEnd"))
