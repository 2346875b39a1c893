"""The trace builder behind tests/kafka/: ``Case`` and the registry of Kafka test cases.

Each function of the cases_*.py modules re-expresses one test case of Kafka 2.4.0's own test suite as a trace of the
model's actions.  The actions are chosen by hand (the helpers only save typing: deliver every
queued control request, run a fetch round, let the clock pass while the scheduler runs what falls
due); the ``check`` calls state what Kafka's test asserts, in Kafka's numbers where the model can
reach them, never values read back from the model.  A case whose checks the model does not meet is
marked with ``fails(reason)`` and written to ``failing/``.

``build_traces.py`` writes the JSON files and the README table from the registry.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from casebook import Book, CaseBase  # noqa: E402

from isrlab.model import actions as A  # noqa: E402
from isrlab.model.errors import ERROR_BIT  # noqa: E402

KAFKA_TAG = "2.4.0"

#: Kafka 2.4.0 test sources, by class.
SOURCES = {
    "PartitionTest": "core/src/test/scala/unit/kafka/cluster/PartitionTest.scala",
    "ReplicaManagerTest": "core/src/test/scala/unit/kafka/server/ReplicaManagerTest.scala",
    "IsrExpirationTest": "core/src/test/scala/unit/kafka/server/IsrExpirationTest.scala",
    "HighwatermarkPersistenceTest": "core/src/test/scala/unit/kafka/server/HighwatermarkPersistenceTest.scala",
    "LogRecoveryTest": "core/src/test/scala/unit/kafka/server/LogRecoveryTest.scala",
    "AbstractFetcherThreadTest": "core/src/test/scala/unit/kafka/server/AbstractFetcherThreadTest.scala",
    "ReplicaFetcherThreadTest": "core/src/test/scala/unit/kafka/server/ReplicaFetcherThreadTest.scala",
    "LeaderEpochFileCacheTest": "core/src/test/scala/unit/kafka/server/epoch/LeaderEpochFileCacheTest.scala",
    "ControllerChannelManagerTest": "core/src/test/scala/unit/kafka/controller/ControllerChannelManagerTest.scala",
    "ControllerIntegrationTest": "core/src/test/scala/unit/kafka/controller/ControllerIntegrationTest.scala",
    "PartitionLeaderElectionAlgorithmsTest":
        "core/src/test/scala/unit/kafka/controller/PartitionLeaderElectionAlgorithmsTest.scala",
    "UncleanLeaderElectionTest": "core/src/test/scala/unit/kafka/integration/UncleanLeaderElectionTest.scala",
    "EpochDrivenReplicationProtocolAcceptanceTest":
        "core/src/test/scala/unit/kafka/server/epoch/EpochDrivenReplicationProtocolAcceptanceTest.scala",
}


class Case(CaseBase):
    """One Kafka 2.4.0 case's trace (ZooKeeper era; a start state may be given, model/start.py)."""

    def __init__(self, kafka_case: str, description: str, preset_name: str = "kafka-2.4", start: dict | None = None,
                 **config):
        super().__init__(kafka_case, description, preset_name, start, **config)
        self._errors_before = 0
        self._errors_mark = None

    # ------------------------------------------------------------------ raw actions
    def do(self, a) -> "Case":
        self._errors_before = self.s.ghost.errors_seen
        return super().do(a)

    def check_cache(self, query, equals, why: str, ops=(), broker: int = 0, partition: int = 0) -> "Case":
        """An answer of broker's leader-epoch cache (model.log.epoch_cache_answer): ``query`` after ``ops`` applied
        to a copy of it, e.g. ``check_cache(["end_offset_for", 2], [2, 11], ..., ops=[["assign", 2, 10]])``."""
        q = {"broker": broker, "partition": partition, "ops": [list(o) for o in ops], "query": query}
        if not q["ops"]:
            del q["ops"]
        equals = json.loads(json.dumps(equals))
        self.checks.append({"after": len(self.actions), "epoch_cache": q, "equals": equals, "why": why})
        return self

    def mark_errors(self) -> "Case":
        """Remember the error codes seen so far: the next check_new_error covers every action since."""
        self._errors_mark = self.s.ghost.errors_seen
        return self

    def check_new_error(self, name: str, why: str) -> "Case":
        """The last action (or those since mark_errors) made the model record error `name` for the first time.

        The state keeps only the set of error codes seen so far (ghost.errors_seen), so the check is
        that set: the codes seen before (whatever they were) plus this one."""
        before = self._errors_before if self._errors_mark is None else self._errors_mark
        self._errors_mark = None
        bit = ERROR_BIT[name]
        assert not before & bit, f"{self.kafka_case}: {name} was already seen before action {len(self.actions)}"
        return self.check("ghost.errors_seen", before | bit, why)

    # ------------------------------------------------------------------ helpers
    def elect(self, b: int) -> "Case":
        return self.do(A.ElectController(b))

    def deliver(self, c: int, b: int, n: int = 1) -> "Case":
        for _ in range(n):
            self.do(A.DeliverControlRequest(c, b))
        return self

    def queued(self, c: int, b: int) -> int:
        ctl = self.s.controller_on(c)
        return len(ctl.queues[b]) if ctl is not None else 0

    def deliver_all(self, c: int | None = None, to=None) -> "Case":
        """Deliver every queued request (of controller c, to brokers `to`), broker by broker, in queue order."""
        while True:
            progressed = False
            for ctl in list(self.s.controllers):
                if c is not None and ctl.broker_id != c:
                    continue
                for b in range(len(self.s.brokers)):
                    if to is not None and b not in to:
                        continue
                    while self.queued(ctl.broker_id, b) and self.s.brokers[b].alive:
                        self.deliver(ctl.broker_id, b)
                        progressed = True
            if not progressed:
                return self

    def isr_notification(self, c: int) -> "Case":
        return self.do(A.ControllerProcessIsrChangeNotification(c))

    def broker_change(self, c: int) -> "Case":
        return self.do(A.ControllerProcessBrokerChange(c))

    def consume(self, b: int, p: int = 0, isolation: str = "read_uncommitted") -> "Case":
        return self.do(A.ConsumerFetch(b, p, isolation))

    def consume_with_client_metadata(self, b: int, current_leader_epoch: int = -1, rack: str = "",
                                     p: int = 0) -> "Case":
        """A consumer's Fetch v11+ with ClientMetadata (KIP-392) to broker b, from the log start."""
        return self.do(A.ConsumerFetchWithClientMetadata(b, p, current_leader_epoch, rack))

    def consume_wait(self, b: int, fetch_offset: int = -1, min_bytes: int = 1, max_wait_ms: int = 10,
                     current_leader_epoch: int = -1, client_metadata: bool = False, rack: str = "",
                     p: int = 0) -> "Case":
        """A consumer's Fetch to broker b that may wait in the fetch purgatory (fetch.min.bytes in records,
        fetch.max.wait.ms); fetch_offset -1: the broker's HW."""
        return self.do(A.ConsumerFetchWait(b, p, fetch_offset, min_bytes, max_wait_ms, current_leader_epoch,
                                           client_metadata, rack))

    def expire_fetch(self, b: int, i: int = 0) -> "Case":
        """Let the clock reach the deadline of broker b's i-th parked fetch (the tasks due on the way run), which
        then times out."""
        df = self.s.brokers[b].delayed_fetches[i]
        if df.deadline_ms > self.s.now:
            self.sleep(df.deadline_ms - self.s.now, run_at_end=False)
        return self.do(A.DelayedFetchExpire(b, df.request_id))

    def reassign(self, replicas: str, p: int = 0) -> "Case":
        """An admin creates /admin/reassign_partitions with p's target replicas (e.g. "1,0")."""
        return self.do(A.ReassignPartitions(p, replicas))

    def ofle_request(self, b: int, p: int = 0) -> "Case":
        return self.do(A.OffsetsForLeaderEpochRequest(b, p))

    def ofle_response(self, b: int, p: int = 0) -> "Case":
        return self.do(A.OffsetsForLeaderEpochResponse(b, p))

    def list_offsets(self, b: int, timestamp: int = -1, isolation: str = "read_uncommitted", replica_id: int = -1,
                     current_leader_epoch: int = -1, p: int = 0) -> "Case":
        """A ListOffsets request to broker b (timestamp -1 LATEST, -2 EARLIEST; replica_id -1 a consumer, -2 the
        debugging id, >= 0 a follower, which send no isolation level)."""
        return self.do(A.ListOffsets(b, p, timestamp, isolation, replica_id, current_leader_epoch))

    def check_response(self, kind: str, b: int, why: str, p: int = 0, **fields) -> "Case":
        """The last response of ``kind`` for broker b and partition p (``ghost.responses``): each field given, or
        ``value=`` for the kinds whose response is an error name."""
        base = f"ghost.responses.{kind}.{b}.{p}"
        if "value" in fields:
            return self.check(base, fields["value"], why)
        for name, value in fields.items():
            self.check(f"{base}.{name}", value, why)
        return self

    def fetch_request(self, b: int, p: int = 0) -> "Case":
        return self.do(A.FetchRequest(b, p))

    def fetch_response(self, b: int, p: int = 0) -> "Case":
        return self.do(A.FetchResponse(b, p))

    def flush(self, b: int, p: int = 0) -> "Case":
        return self.do(A.FlushLog(b, p))

    def expire(self, b: int) -> "Case":
        return self.do(A.ZkSessionExpire(b))

    def reconnect(self, b: int) -> "Case":
        return self.do(A.ZkReconnect(b))

    def run_due_tasks(self, skip=()) -> "Case":
        """Run every scheduled task (and produce timeout) that is due now, broker by broker."""
        for b, br in enumerate(self.s.brokers):
            if not br.alive:
                continue
            if "isr" not in skip and self.s.now >= self.s.brokers[b].next_isr_expiration_ms:
                self.do(A.IsrExpiration(b))
            if "propagation" not in skip and self.s.now >= self.s.brokers[b].next_isr_propagation_ms:
                self.do(A.IsrChangePropagation(b))
            br = self.s.brokers[b]
            if "checkpoint" not in skip and br.hw_checkpoint_started and self.s.now >= br.next_hw_checkpoint_ms:
                self.do(A.HighWatermarkCheckpoint(b))
            for dp in sorted(self.s.brokers[b].delayed_produces, key=lambda d: d.request_id):
                if self.s.now >= dp.deadline_ms:
                    self.do(A.DelayedProduceExpire(b, dp.request_id))
        if "rebalance" not in skip:        # the controller's auto-leader-rebalance-task
            for ctl in list(self.s.controllers):
                if 0 <= ctl.next_rebalance_ms <= self.s.now and self.s.zk.sessions[ctl.broker_id]:
                    self.do(A.AutoLeaderRebalance(ctl.broker_id))
        return self

    def create_topic(self, controller: int = 0) -> "Case":
        """The controller comes up, creates the partition's state (NewPartition -> Online), sends it out."""
        return self.elect(controller).deliver_all()


# ====================================================================== the registry
#: @Test methods per class in Kafka 2.4.0 (207 in all): every one must be in the registry
TEST_CASES = {
    "PartitionTest": 34, "ReplicaManagerTest": 24, "IsrExpirationTest": 4, "HighwatermarkPersistenceTest": 2,
    "LogRecoveryTest": 4, "AbstractFetcherThreadTest": 23, "ReplicaFetcherThreadTest": 13,
    "LeaderEpochFileCacheTest": 37, "ControllerChannelManagerTest": 16, "ControllerIntegrationTest": 26,
    "PartitionLeaderElectionAlgorithmsTest": 13, "UncleanLeaderElectionTest": 6,
    "EpochDrivenReplicationProtocolAcceptanceTest": 5,
}

#: the vocabulary a case needs and the model lacks, named where it is named
MISSING = {
    "ListOffsets": "ListOffsets (LATEST / EARLIEST / by timestamp, isolation level, OFFSET_NOT_AVAILABLE)",
    "starting states": "starting states (a log, epoch cache, HW or epochs given up front)",
    "epoch-cache queries": "observing the epoch cache's answers (endOffsetFor) in checks",
    "StopReplica": "StopReplica to live brokers / topic deletion",
    "controlled shutdown": "controlled shutdown",
    "preferred election": "preferred-leader election",
    "reassignment": "partition reassignment",
    "partition expansion": "topics and partitions created at run time (TopicChange, partition modifications)",
    "controller batch internals": "a controller request batch given arbitrary contents (the same partition "
                                  "twice, partitions without leadership, StopReplica with and without delete "
                                  "together, a deletion queued but not started)",
    "interleaved OffsetsForLeaderEpoch": "OffsetsForLeaderEpoch request and response as separate steps",
    "message format < 0.11": "message format < 0.11 (no leader epochs in records)",
    "log start offset": "log start offset moves (DeleteRecords, retention, a leader's log starting above 0)",
    "repeated error codes": "observing each response's error (a code already seen cannot be observed again)",
    "transactions": "transactions and idempotent producers (producer ids, markers, LSO, aborted transactions)",
    "DelayedFetch": "DelayedFetch (fetch purgatory, fetch.min.bytes, fetch timeouts)",
    "follower fetching": "KIP-392 fetch from followers (ClientMetadata, replica selector)",
    "offline replicas": "offline replicas in UpdateMetadata and the metadata cache",
    "fetcher internals": "the fetcher's own operations (partitions added or removed mid-round, "
                         "re-added with the same epoch, storage exceptions)",
    "topic config": "topic-level configuration changes at run time",
    "inter-broker protocol": "older inter-broker protocol versions of OffsetsForLeaderEpoch (IBP < 2.0)",
    "batches": "several records per batch (compressed batches, partial batches)",
}


BOOK = Book(KAFKA_TAG, SOURCES, MISSING, TEST_CASES)
Case.BOOK = BOOK
#: kafka case "Class.testName" -> ("expressed", builder) | ("missing", category, detail) | ("out", detail)
REGISTRY = BOOK.registry
case, missing, out_of_scope = BOOK.case, BOOK.missing, BOOK.out_of_scope
