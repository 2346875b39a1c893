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

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from casebook import Book, CaseBase  # noqa: E402

from isrlab.model import actions as A  # noqa: E402
from isrlab.model.step import step  # noqa: E402

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


class Case(CaseBase):
    """One Kafka 3.7.0 case's trace, in a KRaft preset, from the formed cluster."""

    DEFAULT_ACKS = 1

    def __init__(self, kafka_case: str, description: str, preset_name: str = "kafka-3.7", **config):
        super().__init__(kafka_case, description, preset_name, **config)
        assert self.cfg.kip_500, "KRaft presets only"

    # ------------------------------------------------------------------ checks in Kafka's terms
    def check_registration(self, why: str, p: int = 0, **fields) -> "Case":
        """The controller's PartitionRegistration: isr, leader, leader_epoch, partition_epoch, elr, replicas."""
        for name, value in fields.items():
            self.check(f"quorum.partitions.{p}.{name}", value, why)
        return self

    def check_whole_registration(self, path: str, why: str, replicas, isr, leader: int, leader_epoch: int,
                                 partition_epoch: int, adding=(), removing=(), elr=(), last_known_elr=(),
                                 leader_recovery_state: str = "RECOVERED") -> "Case":
        """The whole PartitionRegistration at ``path`` (``quorum.partitions.P`` or ``quorum.log.I.registration``): every
        field, so that an empty addingReplicas / removingReplicas (left out of the encoding) is checked too."""
        reg = {"@type": "PartitionRegistration", "replicas": list(replicas), "isr": sorted(isr), "leader": leader,
               "leader_epoch": leader_epoch, "partition_epoch": partition_epoch, "elr": sorted(elr),
               "leader_recovery_state": leader_recovery_state, "last_known_elr": list(last_known_elr)}
        if adding:
            reg["adding_replicas"] = sorted(adding)
        if removing:
            reg["removing_replicas"] = sorted(removing)
        return self.check(path, reg, why)

    def reassign(self, target, p: int = 0) -> "Case":
        """An admin's AlterPartitionReassignments for partition p: target replicas in order, or None to cancel."""
        return self.do(A.ReassignPartitions(p, "" if target is None else ",".join(map(str, target))))

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

    def controlled_shutdown(self, b: int) -> "Case":
        return self.do(A.ControlledShutdown(b))

    def fetch(self, b: int, p: int = 0, rounds: int = 1) -> "Case":
        """Follower b's fetch round(s); a follower still truncating first sends its OffsetsForLeaderEpoch."""
        for _ in range(rounds):
            if self.s.brokers[b].fetchers[p].state == "truncating":
                self.ofle(b, p)
            super().fetch(b, p)
        return self

    def send_alter(self, b: int) -> "Case":
        """The broker's AlterPartitionManager sends its unsent items and the quorum controller handles them."""
        return self.do(A.AlterIsrRequest(b)).do(A.AlterIsrReceived(b))

    def receive_alter(self, b: int) -> "Case":
        """The AlterPartition response reaches the broker: each item's callback runs."""
        return self.do(A.AlterIsrResponse(b))

    def alter(self, b: int) -> "Case":
        return self.send_alter(b).receive_alter(b)

    def report_dirs(self, *brokers) -> "Case":
        """Each listed broker's AssignmentsManager sends the directory assignments it has queued (AssignReplicasToDirs:
        where its new logs went), one partition after the other."""
        for b in brokers:
            for p, d in self.s.brokers[b].dir_assignments:
                self.do(A.AssignReplicasToDirs(b, p, d))
        return self

    def isr_expiration(self, b: int) -> "Case":
        return self.do(A.IsrExpiration(b))

    def run_due_tasks(self, skip=()) -> "Case":
        """Everything the cluster does on its own that is due now: the controller's stale-broker check and leader
        balancing, each live broker's heartbeat, ISR expiration, HW checkpoint and delayed produce timeouts."""
        for b in range(len(self.s.brokers)):
            if step(self.cfg, self.s, A.FenceStaleBroker(b)) is not None:
                self.do(A.FenceStaleBroker(b))
        if "balance" not in skip and 0 <= self.s.quorum.next_balance_ms <= self.s.now:
            self.do(A.AutoLeaderRebalance(-1))               # the quorum controller's leader balancing, when due
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
        return self


# ====================================================================== the registry
#: the vocabulary a case needs and the model lacks (model/README.md names the KRaft parts not modelled)
MISSING = {
    "KIP-903": "KIP-903 broker epochs (in Fetch requests and in AlterPartition's ISR entries)",
    "reassignment": "the builder's acceptor refusing the adding replicas of the ISR that completes a reassignment "
                    "(they join the ISR only through AlterPartitions whose every member is active, hence acceptable)",
    "topic deletion": "topic deletion and unknown topic ids",
    "broker interleaving": "another thread of the broker acting inside one request's handling (the model's leader "
                           "handles a follower's fetch, its read and its fetch-state update, in one step)",
    "KIP-704": "leader recovery state (KIP-704: RECOVERING after an unclean election)",
    "unclean recovery": "KIP-966 part 2: last-known-leader election and lastKnownElr (unclean.recovery.strategy)",
    "controller answers": "AlterPartition answers the model's quorum controller never gives a leader's own request "
                          "(network failures, UNKNOWN_SERVER_ERROR, INVALID_REQUEST, NEW_LEADER_ELECTED without "
                          "reassignment)",
    "out-of-order metadata": "partition state older than or equal to the one a broker holds (the metadata log is "
                             "replayed once, in order)",
    "ZK migration": "ZooKeeper migration mode (KIP-866) and the ZooKeeper-era controller",
    "several states": "the builder's election rules on several unrelated partition states at once",
}


BOOK = Book(KAFKA_TAG, SOURCES, MISSING, KAFKA_CASES)
Case.BOOK = BOOK
#: kafka case "Class.testName" -> ("expressed", builder) | ("missing", category, detail) | ("out", detail)
REGISTRY = BOOK.registry
case, missing, out_of_scope = BOOK.case, BOOK.missing, BOOK.out_of_scope
