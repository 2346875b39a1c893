"""The trace builder behind tests/kafka_kraft/: ``Case`` and the registry of Kafka 3.7.0 test cases.

Each function of the cases_*.py modules re-expresses one test case of Kafka 3.7.0's own tests of the KRaft
replication rules (PartitionTest, PartitionChangeBuilderTest, ReplicationControlManagerTest) as a trace of the
model's actions, in a KRaft preset.  There are no start states for KRaft: every trace begins with the formed cluster
(brokers registered and unfenced, each partition created with its first replica leading) and reaches the test's
situation by protocol steps (heartbeats lost and brokers fenced, followers fetching or lagging, AlterPartition round
trips, controlled shutdowns).  The helpers only save typing (replay the metadata log, fence a broker, let the clock
pass while the scheduler runs what falls due, let followers fetch); the ``check`` calls state what Kafka's test
asserts, in Kafka's terms mapped onto the model's brokers and epochs, never values read back from the model.  A case
whose checks the model does not meet is marked with ``fails(reason)`` and written to ``failing/``.

``build_traces.py`` writes the JSON files and the README table from the registry.
"""

from __future__ import annotations

import json

from isrlab.model import actions as A
from isrlab.model.config import preset
from isrlab.model.encode import encode
from isrlab.model.step import initial_state, step, tick_limit

KAFKA_TAG = "3.7.0"

#: Kafka 3.7.0 test sources, by class.
SOURCES = {
    "PartitionTest": "core/src/test/scala/unit/kafka/cluster/PartitionTest.scala",
    "PartitionChangeBuilderTest": "metadata/src/test/java/org/apache/kafka/controller/PartitionChangeBuilderTest.java",
    "ReplicationControlManagerTest":
        "metadata/src/test/java/org/apache/kafka/controller/ReplicationControlManagerTest.java",
}

#: Every @Test / @ParameterizedTest method of the classes at the tag, in file order (148): the registry must list each
KAFKA_CASES = {
    "PartitionTest": """
        testLastFetchedOffsetValidation testMakeLeaderUpdatesEpochCache testMaybeReplaceCurrentWithFutureReplica
        testReplicaFetchToFollower testFetchFromUnrecognizedFollower
        testMakeFollowerWithWithFollowerAppendRecords
        testMaybeReplaceCurrentWithFutureReplicaDifferentBaseOffsets
        testFetchOffsetSnapshotEpochValidationForLeader testFetchOffsetSnapshotEpochValidationForFollower
        testOffsetForLeaderEpochValidationForLeader testOffsetForLeaderEpochValidationForFollower
        testLeaderEpochValidationOnLeader testLeaderEpochValidationOnFollower
        testFetchOffsetForTimestampEpochValidationForLeader
        testFetchOffsetForTimestampEpochValidationForFollower testFetchLatestOffsetIncludesLeaderEpoch
        testMonotonicOffsetsAfterLeaderChange testAppendRecordsAsFollowerBelowLogStartOffset
        testListOffsetIsolationLevels testGetReplica testAppendRecordsToFollowerWithNoReplicaThrowsException
        testMakeFollowerWithNoLeaderIdChange
        testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch testAtMinIsr testIsUnderMinIsr
        testUpdateFollowerFetchState testIsReplicaIsrEligibleWithEmptyReplicaMap
        testInvalidAlterPartitionRequestsAreNotRetried testIsrExpansion testIsrNotExpandedIfUpdateFails
        testHighWatermarkIncreasesWithFencedOrShutdownFollower testIsrNotExpandedIfReplicaIsFencedOrShutdown
        testIsrCanExpandedIfBrokerEpochsMatchWithKraftMetadataCache testFenceFollowerFetchWithStaleBrokerEpoch
        testIsrNotExpandedIfReplicaIsInControlledShutdown testRetryShrinkIsr testMaybeShrinkIsr
        testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR testAlterIsrLeaderAndIsrRace
        testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd
        testIsrNotShrunkIfUpdateFails testAlterIsrNewLeaderElected testAlterIsrUnknownTopic
        testAlterIsrInvalidVersion testAlterIsrUnexpectedError testPartitionShouldRetryAlterPartitionRequest
        testSingleInFlightAlterIsr testZkIsrManagerAsyncCallback testUseCheckpointToInitializeHighWatermark
        testTopicIdAndPartitionMetadataFileForLeader testTopicIdAndPartitionMetadataFileForFollower
        testAddAndRemoveMetrics testUnderReplicatedPartitionsCorrectSemantics testUpdateAssignmentAndIsr
        testLogConfigNotDirty testLogConfigDirtyAsTopicUpdated testLogConfigDirtyAsBrokerUpdated
        testDoNotResetReplicaStateIfLeaderEpochIsNotBumped
        testDoNotUpdateEpochStartOffsetIfLeaderEpochIsNotBumped
        testIgnoreLeaderPartitionStateChangeWithOlderPartitionEpoch
        testIgnoreFollowerPartitionStateChangeWithOlderPartitionEpoch
        testFollowerShouldNotHaveAnyRemoteReplicaStates testAddAndRemoveListeners
        testAddListenerFailsWhenPartitionIsDeleted testPartitionListenerWhenLogOffsetsChanged
        testPartitionListenerWhenPartitionFailed testPartitionListenerWhenPartitionIsDeleted
        testPartitionListenerWhenCurrentIsReplacedWithFutureLog testMaybeStartTransactionVerification
        makeLeaderInvokesgetOrCreateLog_OnOnlineLogDir makeFollowerInvokesgetOrCreateLog_OnOnlineLogDir
        makeLeaderInvokesgetOrCreateLog_WhenNoLogDirOffline
        makeFollowerInvokesgetOrCreateLog_WhenNoLogDirOffline
        makeLeaderInvokesgetOrCreateLog_WhenTargetDirIsUnassigned
        makeFollowerInvokesgetOrCreateLog_WhenTargetDirIsUnassigned
    """.split(),
    "PartitionChangeBuilderTest": """
        testChangeRecordIsNoOp testElectLeader testTriggerLeaderEpochBumpIfNeeded testLeaderEpochBumpZkMigration
        testNoChange testIsrChangeDoesntBumpLeaderEpoch testIsrChangeAndLeaderChange
        testReassignmentRearrangesReplicas testIsrEnlargementCompletesReassignment testRevertReassignment
        testRemovingReplicaReassignment testAddingReplicaReassignment testUncleanLeaderElection
        testChangeInLeadershipDoesNotChangeRecoveryState testUncleanSetsLeaderRecoveringState
        testStoppedLeaderIsDemotedAfterReassignmentCompletesEvenIfNoNewEligibleLeaders
        testEligibleLeaderReplicas_IsrShrinkBelowMinISR testEligibleLeaderReplicas_IsrExpandAboveMinISR
        testEligibleLeaderReplicas_IsrAddNewMemberNotInELR
        testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr testKeepsDirectoriesAfterReassignment
        testUpdateDirectories testEligibleLeaderReplicas_ElrCanBeElected
        testEligibleLeaderReplicas_IsrCanShrinkToZero testEligibleLeaderReplicas_ElectLastKnownLeader
        testEligibleLeaderReplicas_ElectLastKnownLeaderShouldFail
    """.split(),
    "ReplicationControlManagerTest": """
        testCreateTopics testCreateTopicsWithMutationQuotaExceeded testCreateTopicsISRInvariants
        testCreateTopicsWithConfigs testCreateTopicsWithValidateOnlyFlag
        testInvalidCreateTopicsWithValidateOnlyFlag testCreateTopicsWithPolicy testCreateTopicWithCollisionChars
        testValidateNewTopicNames testTopicNameCollision testRemoveLeaderships testShrinkAndExpandIsr
        testEligibleLeaderReplicas_ShrinkAndExpandIsr testEligibleLeaderReplicas_BrokerFence
        testEligibleLeaderReplicas_EffectiveMinIsr testEligibleLeaderReplicas_CleanElection
        testAlterPartitionHandleUnknownTopicIdOrName testInvalidAlterPartitionRequests testDeleteTopics
        testDeleteTopicsWithMutationQuotaExceeded testCreatePartitions
        testCreatePartitionsWithMutationQuotaExceeded
        testCreatePartitionsFailsWhenAllBrokersAreFencedOrInControlledShutdown testCreatePartitionsISRInvariants
        testValidateGoodManualPartitionAssignments testValidateBadManualPartitionAssignments
        testReassignPartitions testAlterPartitionShouldRejectFencedBrokers
        testAlterPartitionShouldRejectBrokersWithStaleEpoch testAlterPartitionShouldRejectShuttingDownBrokers
        testCancelReassignPartitions testManualPartitionAssignmentOnAllFencedBrokers
        testCreatePartitionsFailsWithManualAssignmentWithAllFenced testElectUncleanLeaders_WithoutElr
        testPreferredElectionDoesNotTriggerUncleanElection testFenceMultipleBrokers testElectPreferredLeaders
        testBalancePartitionLeaders testKRaftClusterDescriber testProcessBrokerHeartbeatInControlledShutdown
        testProcessExpiredBrokerHeartbeat
        testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas
        testDuplicateTopicIdReplay testHandleAssignReplicasToDirsFailsOnOlderMv testHandleAssignReplicasToDirs
        testHandleDirectoriesOffline
    """.split(),
}


def pending(expand: bool, replicas) -> dict:
    """The encoded PendingIsr of a partition whose AlterPartition is in flight: PendingExpandIsr (``expand``, the new
    member) or PendingShrinkIsr (the members leaving); ``maximalIsr`` is the committed ISR plus an expansion's member."""
    return {"@type": "PendingIsr", "expand": expand, "replicas": sorted(replicas)}


class Case:
    """One trace being written: the model state is kept alongside, so every action is known enabled."""

    def __init__(self, kafka_case: str, description: str, preset_name: str = "kafka-3.7", **config):
        self.kafka_case = kafka_case
        self.cls, self.test = kafka_case.split(".")
        self.description = description
        self.preset = preset_name
        # budgets for the engines, not Kafka settings
        config.setdefault("max_records", 50)
        config.setdefault("max_crashes", 10)
        config.setdefault("max_session_expirations", 10)
        self.cfg = preset(preset_name).config.replace(**config)
        assert self.cfg.kip_500, "KRaft presets only"
        self.s = initial_state(self.cfg)
        self.actions: list = []
        self.checks: list = []
        self.failure = None
        self.notes: list = []
        self.not_checked: list = []

    # ------------------------------------------------------------------ raw actions and checks
    def do(self, a) -> "Case":
        s2 = step(self.cfg, self.s, a)
        if s2 is None:
            raise AssertionError(f"{self.kafka_case}: action {len(self.actions) + 1} {A.describe(a)} "
                                 f"is not enabled at {self.s.now}")
        self.s = s2
        self.actions.append(a)
        return self

    def check(self, path: str, equals, why: str) -> "Case":
        equals = json.loads(json.dumps(equals))        # a copy: a list the caller changes later stays as it was
        self.checks.append({"after": len(self.actions), "path": path, "equals": equals, "why": why})
        return self

    def fails(self, reason: str) -> "Case":
        """The model does not meet this case's checks: the trace goes to failing/."""
        self.failure = reason
        return self

    def adapt(self, note: str) -> "Case":
        """How the trace departs from the letter of Kafka's test (the facts it keeps are checked)."""
        self.notes.append(note)
        return self

    def unchecked(self, what: str) -> "Case":
        """An assertion of Kafka's test that the trace cannot check (listed in the README's table)."""
        self.not_checked.append(what)
        return self

    # ------------------------------------------------------------------ checks in Kafka's terms
    def check_registration(self, why: str, p: int = 0, **fields) -> "Case":
        """The controller's PartitionRegistration: isr, leader, leader_epoch, partition_epoch, elr, replicas."""
        for name, value in fields.items():
            self.check(f"quorum.partitions.{p}.{name}", value, why)
        return self

    def check_leader_state(self, b: int, why: str, p: int = 0, isr=None, pending_isr="skip", partition_epoch=None,
                           leader_epoch=None) -> "Case":
        """The leader's Partition: its committed ISR (partitionState.isr), the pending change (None: committed, not
        in flight), its partition epoch and leader epoch."""
        base = f"brokers.{b}.partitions.{p}"
        if isr is not None:
            self.check(f"{base}.isr", sorted(isr), why)
        if pending_isr != "skip":
            self.check(f"{base}.pending_isr", pending_isr, why)
        if partition_epoch is not None:
            self.check(f"{base}.zk_version", partition_epoch, why)
        if leader_epoch is not None:
            self.check(f"{base}.leader_epoch", leader_epoch, why)
        return self

    def check_no_update(self, b: int, why: str) -> "Case":
        """AlterPartitionManager holds no ISR update for the broker (isrUpdates.size == 0)."""
        return self.check(f"brokers.{b}.alter_isr_unsent", [], why)

    def check_update(self, b: int, new_isr, why: str, index: int = 0, partition: int = 0) -> "Case":
        """The broker's AlterPartitionManager holds an update for the partition proposing ``new_isr`` (with one
        partition per broker there is at most one item: its presence is isrUpdates.size == 1)."""
        self.check(f"brokers.{b}.alter_isr_unsent.{index}.request.partition", partition, why)
        return self.check(f"brokers.{b}.alter_isr_unsent.{index}.request.new_isr", sorted(new_isr), why)

    def check_remote(self, leader: int, follower: int, why: str, p: int = 0, **fields) -> "Case":
        """assertReplicaState: the leader's view of a follower (last_caught_up_time_ms, log_end_offset,
        log_start_offset)."""
        part = self.s.brokers[leader].partitions[p]
        idx = [r.broker_id for r in part.remote_replicas].index(follower)
        for name, value in fields.items():
            self.check(f"brokers.{leader}.partitions.{p}.remote_replicas.{idx}.{name}", value, why)
        return self

    def check_alter_response(self, b: int, why: str, index: int = 0, **fields) -> "Case":
        """The AlterPartition response the controller gave the broker's request in flight (error, leader,
        leader_epoch, isr, zk_version = partition epoch)."""
        for name, value in fields.items():
            self.check(f"brokers.{b}.alter_isr_inflight.response.partitions.{index}.{name}", value, why)
        return self

    # ------------------------------------------------------------------ helpers
    def apply_metadata(self, b: int) -> "Case":
        """Broker b replays the next batch of the metadata log."""
        return self.do(A.MetadataApply(b))

    def replay(self, *brokers) -> "Case":
        """Each listed live broker (all by default) replays the metadata log to its end, batch by batch."""
        targets = brokers or tuple(range(len(self.s.brokers)))
        for b in targets:
            while self.s.brokers[b].alive and self.s.brokers[b].metadata_offset < len(self.s.quorum.log):
                self.apply_metadata(b)
        return self

    def formed(self) -> "Case":
        """Every broker replays the formed cluster's log: leaders lead, followers' fetchers start."""
        return self.replay()

    def lose_heartbeats(self, b: int) -> "Case":
        return self.do(A.HeartbeatsLost(b))

    def fence(self, *brokers) -> "Case":
        """Each broker's heartbeats stop reaching the controller for a session timeout, and the controller's
        stale-broker check fences it (handleBrokerFenced), one after the other."""
        for b in brokers:
            self.lose_heartbeats(b).do(A.FenceStaleBroker(b))
        return self

    def heartbeat(self, b: int) -> "Case":
        """Broker b's heartbeat, now (it must be due): it touches the session, and unfences a fenced broker that has
        replayed its own registration."""
        return self.do(A.BrokerHeartbeat(b))

    def wait_heartbeat(self, b: int) -> "Case":
        """Let the clock reach broker b's next heartbeat (running what falls due before it), then send it."""
        due = self.s.brokers[b].next_heartbeat_ms
        if due > self.s.now:
            self.sleep(due - self.s.now, run_at_end=False)
        return self.heartbeat(b)

    def unfence(self, b: int) -> "Case":
        """Broker b replays the log to its end, and its next heartbeat unfences it (handleBrokerUnfenced)."""
        return self.replay(b).wait_heartbeat(b)

    def crash(self, b: int, clean: bool = True) -> "Case":
        return self.do(A.BrokerCrash(b, clean))

    def restart(self, b: int) -> "Case":
        return self.do(A.BrokerRestart(b))

    def controlled_shutdown(self, b: int) -> "Case":
        return self.do(A.ControlledShutdown(b))

    def produce(self, b: int, acks: int = 1, n: int = 1, p: int = 0) -> "Case":
        for _ in range(n):
            self.do(A.Produce(b, p, acks))
        return self

    def fetch(self, b: int, p: int = 0, rounds: int = 1) -> "Case":
        """Follower b's fetch round(s): the leader reads and updates b's fetch state, b processes the response (a
        follower still truncating first sends its OffsetsForLeaderEpoch)."""
        for _ in range(rounds):
            if self.s.brokers[b].fetchers[p].state == "truncating":
                self.do(A.OffsetsForLeaderEpoch(b, p))
            self.do(A.FetchRequest(b, p)).do(A.FetchResponse(b, p))
        return self

    def catch_up(self, followers=None, p: int = 0, max_rounds: int = 20) -> "Case":
        """Followers truncate if they must and fetch until a round changes nothing."""
        for _ in range(max_rounds):
            before = encode(self.s)
            for b, br in enumerate(self.s.brokers):
                if followers is not None and b not in followers:
                    continue
                f = br.fetchers[p] if br.alive else None
                if f is None:
                    continue
                if f.state == "truncating":
                    self.do(A.OffsetsForLeaderEpoch(b, p))
                    f = self.s.brokers[b].fetchers[p]
                if f is not None and f.state == "fetching" and self.s.brokers[f.leader].alive:
                    self.fetch(b, p)
            if encode(self.s) == before:
                return self
        raise AssertionError(f"{self.kafka_case}: followers did not settle")

    def send_alter(self, b: int) -> "Case":
        """The broker's AlterPartitionManager sends its unsent items; the quorum controller answers at once."""
        return self.do(A.AlterIsrRequest(b))

    def receive_alter(self, b: int) -> "Case":
        """The AlterPartition response reaches the broker: each item's callback runs."""
        return self.do(A.AlterIsrResponse(b))

    def alter(self, b: int) -> "Case":
        return self.send_alter(b).receive_alter(b)

    def isr_expiration(self, b: int) -> "Case":
        return self.do(A.IsrExpiration(b))

    def run_due_tasks(self, skip=()) -> "Case":
        """Everything the cluster does on its own that is due now: the controller's stale-broker check, each live
        broker's heartbeat, ISR expiration, HW checkpoint and delayed produce timeouts."""
        q = self.s.quorum
        for b in range(len(self.s.brokers)):
            if step(self.cfg, self.s, A.FenceStaleBroker(b)) is not None:
                self.do(A.FenceStaleBroker(b))
        for b in range(len(self.s.brokers)):
            br = self.s.brokers[b]
            if not br.alive:
                continue
            if "heartbeat" not in skip and 0 <= br.next_heartbeat_ms <= self.s.now:
                self.heartbeat(b)
            br = self.s.brokers[b]
            if not br.alive:
                continue
            if "isr" not in skip and self.s.now >= br.next_isr_expiration_ms:
                self.isr_expiration(b)
            br = self.s.brokers[b]
            if "checkpoint" not in skip and br.hw_checkpoint_started and self.s.now >= br.next_hw_checkpoint_ms:
                self.do(A.HighWatermarkCheckpoint(b))
            for dp in sorted(self.s.brokers[b].delayed_produces, key=lambda d: d.request_id):
                if self.s.now >= dp.deadline_ms:
                    self.do(A.DelayedProduceExpire(b, dp.request_id))
        del q
        return self

    def sleep(self, ms: int, run_at_end: bool = True, skip=(), fetching=()) -> "Case":
        """Let ms of model time pass; what falls due on the way runs when it is due (what falls due exactly at the end
        only with run_at_end, so that other actions can come first).  ``fetching``: (follower, partition) pairs that
        fetch at every instant the clock stops, so that they stay caught up."""
        target = self.s.now + ms
        self.run_due_tasks(skip)
        while self.s.now < target:
            limit = tick_limit(self.cfg, self.s)
            nxt = target if limit is None or limit >= target else limit
            if nxt > self.s.now:
                self.do(A.Tick(nxt - self.s.now))
            for b, p in fetching:
                self.catch_up([b], p)
            if self.s.now < target or run_at_end:
                self.run_due_tasks(skip)
        return self

    # ------------------------------------------------------------------ output
    def to_json(self) -> dict:
        source = SOURCES[self.cls]
        prov = {
            "engine": "hand-written",
            "source": f"Kafka {KAFKA_TAG} {source} {self.test} (apache/kafka at tag {KAFKA_TAG})",
            "kafka_test": self.kafka_case,
            "kafka_file": source,
            "kafka_tag": KAFKA_TAG,
        }
        if self.notes:
            prov["adaptations"] = self.notes
        if self.not_checked:
            prov["not_checked"] = self.not_checked
        if self.failure:
            prov["model_disagrees"] = self.failure
        return {
            "format": "isrlab-trace",
            "version": 1,
            "preset": self.preset,
            "description": self.description,
            "config": self.cfg.identity_json(),
            "provenance": prov,
            "expect": "pass",
            "violated": None,
            "actions": [A.action_to_json(a) for a in self.actions],
            "checks": self.checks,
        }


# ====================================================================== the registry
#: kafka case "Class.testName" -> ("expressed", builder) | ("missing", category, detail) | ("out", detail)
REGISTRY: dict = {}

#: the vocabulary a case needs and the model lacks (model/README.md names the KRaft parts not modelled)
MISSING = {
    "KIP-903": "KIP-903 broker epochs (in Fetch requests and in AlterPartition's ISR entries)",
    "reassignment": "partition reassignment (adding / removing replicas, AlterPartitionReassignments)",
    "topic deletion": "topic deletion and unknown topic ids",
    "topic creation": "topics and partitions created at run time (CreateTopics, CreatePartitions)",
    "KIP-704": "leader recovery state (KIP-704: RECOVERING after an unclean election)",
    "unclean recovery": "KIP-966 part 2: last-known-leader election and lastKnownElr (unclean.recovery.strategy)",
    "directories": "log directories (JBOD directory assignment, KIP-858; offline directories)",
    "elect leaders": "ElectLeaders: preferred and unclean elections on demand, leader balancing",
    "controller answers": "AlterPartition answers the model's quorum controller never gives a leader's own request "
                          "(network failures, UNKNOWN_SERVER_ERROR, INVALID_REQUEST, NEW_LEADER_ELECTED without "
                          "reassignment)",
    "arbitrary requests": "AlterPartition requests a leader never sends (another broker's, stale broker epochs, "
                          "epochs ahead of the controller, ISRs outside the replicas or without the leader)",
    "out-of-order metadata": "partition state older than or equal to the one a broker holds (the metadata log is "
                             "replayed once, in order)",
    "ZK migration": "ZooKeeper migration mode (KIP-866) and the ZooKeeper-era controller",
    "controller queue": "the controller's event queue (requests that time out before they are handled)",
    "several states": "the builder's election rules on several unrelated partition states at once",
}


def case(name: str):
    """Register a builder for one Kafka test case (it returns a Case)."""
    def register(fn):
        assert name not in REGISTRY, name
        REGISTRY[name] = ("expressed", fn)
        return fn
    return register


def missing(name: str, category: str, detail: str) -> None:
    assert name not in REGISTRY, name
    assert category in MISSING, category
    REGISTRY[name] = ("missing", category, detail)


def out_of_scope(name: str, detail: str) -> None:
    assert name not in REGISTRY, name
    REGISTRY[name] = ("out", detail)
