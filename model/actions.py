"""The closed vocabulary of actions, and their JSON codec.

Each action is a small frozen value naming who does what, in Kafka's words.
Every nondeterministic choice (which broker, which partition, how long a clock
tick, whether a crash is clean) is a field, so replaying a trace never draws
randomness.  The JSON form is ``{"type": <class name>, <field>: <value>, ...}``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Union


class ActionError(ValueError):
    """A malformed or unknown action in a trace (reported in one line)."""


# ----------------------------------------------------------------- controller
@dataclass(frozen=True, slots=True)
class ElectController:
    """Broker ``broker`` wins the /controller znode and runs onControllerFailover."""
    broker: int


@dataclass(frozen=True, slots=True)
class ControllerProcessBrokerChange:
    """The controller on ``controller`` handles a BrokerChange event (registrations changed)."""
    controller: int


@dataclass(frozen=True, slots=True)
class ControllerProcessIsrChangeNotification:
    """The controller on ``controller`` handles the isr_change_notification znodes."""
    controller: int


@dataclass(frozen=True, slots=True)
class ControllerResign:
    """The controller on ``controller`` notices it lost the /controller znode and resigns."""
    controller: int


@dataclass(frozen=True, slots=True)
class DeliverControlRequest:
    """The controller on ``controller`` delivers the head of its queue for broker ``broker``."""
    controller: int
    broker: int


# ----------------------------------------------------------------- clients
@dataclass(frozen=True, slots=True)
class Produce:
    """A producer sends one record to ``broker`` for ``partition`` with ``acks``."""
    broker: int
    partition: int
    acks: int


@dataclass(frozen=True, slots=True)
class ConsumerFetch:
    """A consumer fetches ``partition`` from ``broker`` from offset 0 (isolation as named)."""
    broker: int
    partition: int
    isolation: str = "read_uncommitted"


@dataclass(frozen=True, slots=True)
class ListOffsets:
    """A ListOffsets request (v5) for ``partition`` reaches ``broker``: ``timestamp`` -1 LATEST, -2 EARLIEST, or a
    time; ``replica_id`` -1 a consumer (with ``isolation``), -2 the debugging id, >= 0 a follower;
    ``current_leader_epoch`` -1 when absent (KIP-320)."""
    broker: int
    partition: int
    timestamp: int = -1
    isolation: str = "read_uncommitted"
    replica_id: int = -1
    current_leader_epoch: int = -1


# ----------------------------------------------------------------- follower fetcher
@dataclass(frozen=True, slots=True)
class FetchRequest:
    """Follower ``broker`` sends a fetch for ``partition`` to its leader, which handles it."""
    broker: int
    partition: int


@dataclass(frozen=True, slots=True)
class FetchResponse:
    """Follower ``broker`` processes the fetch response waiting for ``partition``."""
    broker: int
    partition: int


@dataclass(frozen=True, slots=True)
class OffsetsForLeaderEpoch:
    """Follower ``broker`` runs one truncation round for ``partition`` (KIP-101/279)."""
    broker: int
    partition: int


# ----------------------------------------------------------------- AlterIsr (KIP-497)
@dataclass(frozen=True, slots=True)
class AlterIsrRequest:
    """Broker ``broker``'s AlterIsrManager sends its unsent ISR changes, in one request, to the controller."""
    broker: int


@dataclass(frozen=True, slots=True)
class AlterIsrReceived:
    """The controller handles broker ``broker``'s AlterIsr request in flight (KafkaController's AlterIsrReceived
    event, Kafka 2.7.0; QuorumController.alterPartition, KRaft): the answer waits on the wire for AlterIsrResponse."""
    broker: int


@dataclass(frozen=True, slots=True)
class AlterIsrResponse:
    """Broker ``broker`` handles the response to its AlterIsr request."""
    broker: int


@dataclass(frozen=True, slots=True)
class AlterIsrFailed:
    """A fault: broker ``broker``'s AlterIsr request in flight gets ``error`` back before any controller handles it
    (an error no controller of the model gives: ALTER_ISR_FAULT_ERRORS); AlterIsrResponse then reads it."""
    broker: int
    error: str


# ----------------------------------------------------------------- scheduler
@dataclass(frozen=True, slots=True)
class IsrExpiration:
    """The isr-expiration task runs on ``broker`` (maybeShrinkIsr on every partition)."""
    broker: int


@dataclass(frozen=True, slots=True)
class IsrChangePropagation:
    """The isr-change-propagation task runs on ``broker``."""
    broker: int


@dataclass(frozen=True, slots=True)
class HighWatermarkCheckpoint:
    """The highwatermark-checkpoint task runs on ``broker``."""
    broker: int


@dataclass(frozen=True, slots=True)
class DelayedProduceExpire:
    """The acks=-1 produce ``request`` parked on ``broker`` times out."""
    broker: int
    request: int


@dataclass(frozen=True, slots=True)
class FlushLog:
    """The OS / log flusher persists ``broker``'s log of ``partition`` up to its LEO."""
    broker: int
    partition: int


# ----------------------------------------------------------------- environment and faults
@dataclass(frozen=True, slots=True)
class Tick:
    """The logical clock advances by ``ms`` milliseconds."""
    ms: int


@dataclass(frozen=True, slots=True)
class BrokerCrash:
    """Broker ``broker`` stops: cleanly (flush, checkpoint, close session) or by a crash."""
    broker: int
    clean: bool


@dataclass(frozen=True, slots=True)
class BrokerRestart:
    """Broker ``broker`` starts: log recovery, HW reload, a new ZooKeeper session and registration."""
    broker: int


@dataclass(frozen=True, slots=True)
class ZkSessionExpire:
    """ZooKeeper expires ``broker``'s session: its registration (and /controller) vanish."""
    broker: int


@dataclass(frozen=True, slots=True)
class ZkReconnect:
    """Live broker ``broker`` opens a new ZooKeeper session and registers again (new broker epoch)."""
    broker: int


@dataclass(frozen=True, slots=True)
class ZkDeleteController:
    """An operator deletes the /controller znode held by ``controller``, whose ZooKeeper session lives on.

    The controller moves while the old one is still active: it learns of it only when it processes the
    ControllerChange / Reelect event (``ControllerResign``), and may handle other events first.  Kafka's own
    test of KAFKA-6082 makes this window so (ControllerIntegrationTest.testControllerMove, Kafka 2.4.0).
    """
    controller: int


@dataclass(frozen=True, slots=True)
class ConsumerFetchWithClientMetadata:
    """A consumer's Fetch v11+ carrying ClientMetadata (KIP-392) reaches ``broker``: it may be served by a follower;
    ``current_leader_epoch`` -1 when absent (KIP-320), ``rack`` the client's ``client.rack`` ("" none)."""
    broker: int
    partition: int
    current_leader_epoch: int = -1
    rack: str = ""


@dataclass(frozen=True, slots=True)
class OffsetsForLeaderEpochRequest:
    """A truncating follower ``broker`` sends OffsetsForLeaderEpoch for ``partition`` to its leader, which answers
    (``offsets_for_leader_epoch_in_flight``; the answer is processed by ``OffsetsForLeaderEpochResponse``)."""
    broker: int
    partition: int


@dataclass(frozen=True, slots=True)
class OffsetsForLeaderEpochResponse:
    """The follower ``broker`` processes the OffsetsForLeaderEpoch answer in flight for ``partition``."""
    broker: int
    partition: int


# ----------------------------------------------------------------- KRaft (KIP-500, KIP-631)
@dataclass(frozen=True, slots=True)
class MetadataApply:
    """Broker ``broker`` replays the next committed metadata record (KRaft): its metadata cache, and for a partition
    record, ReplicaManager.applyDelta."""
    broker: int


@dataclass(frozen=True, slots=True)
class BrokerHeartbeat:
    """Broker ``broker``'s BrokerLifecycleManager sends its scheduled heartbeat to the quorum controller, which answers."""
    broker: int


@dataclass(frozen=True, slots=True)
class FenceStaleBroker:
    """The quorum controller fences ``broker``, whose session has expired: it leaves every ISR but the last."""
    broker: int


@dataclass(frozen=True, slots=True)
class HeartbeatsLost:
    """A fault: ``broker``'s heartbeats stop reaching the controller for a session timeout (a network partition or a
    long pause), so its session has expired; the broker itself runs on."""
    broker: int


@dataclass(frozen=True, slots=True)
class ControlledShutdown:
    """Broker ``broker`` begins a controlled shutdown.  KRaft: BrokerLifecycleManager.beginControlledShutdown, its
    heartbeats ask to shut down, and it stops cleanly once the controller has moved its leaderships and grants it.
    ZooKeeper era (``controlled_shutdown_enable``): KafkaServer.controlledShutdown sends its first ControlledShutdown
    request to the controller /controller names (``ControlledShutdownRequest`` delivers it)."""
    broker: int


@dataclass(frozen=True, slots=True)
class DiskWipe:
    """A fault: the stopped broker ``broker``'s disk is replaced; it comes back with no log, no checkpoint and no
    clean-shutdown file (KRaft)."""
    broker: int


@dataclass(frozen=True, slots=True)
class ControllerFailover:
    """A fault: the active KRaft controller resigns and another member of the quorum takes over with the same metadata
    log but none of the old one's soft state (QuorumController.renounce / claim)."""


# ----------------------------------------------------------------- ZooKeeper era: controlled shutdown, preferred leaders
@dataclass(frozen=True, slots=True)
class ControlledShutdownRequest:
    """Broker ``broker``'s ControlledShutdown request in flight reaches the broker it was sent to, whose controller
    handles it (KafkaApis.handleControlledShutdownRequest, KafkaController.doControlledShutdown); the response waits."""
    broker: int


@dataclass(frozen=True, slots=True)
class ControlledShutdownResponse:
    """Broker ``broker`` reads its ControlledShutdown response: done, it stops cleanly; else it tries again, or stops
    anyway when its retries are used up."""
    broker: int


@dataclass(frozen=True, slots=True)
class PreferredReplicaElection:
    """An admin asks for a preferred-replica leader election of ``partition``: /admin/preferred_replica_election is
    created (kafka-preferred-replica-election, ZkUtils / KafkaZkClient.createPreferredReplicaElection)."""
    partition: int


@dataclass(frozen=True, slots=True)
class ControllerProcessPreferredReplicaElection:
    """The controller on ``controller`` handles the ReplicaLeaderElection event of /admin/preferred_replica_election:
    elects the preferred replicas, then deletes the znode."""
    controller: int


@dataclass(frozen=True, slots=True)
class ElectLeaders:
    """An admin client's ElectLeaders request (KIP-460) for ``partition`` reaches ``broker``, whose controller answers
    (KafkaApis.handleElectReplicaLeader, KafkaController.processReplicaLeaderElection); in KRaft the broker forwards
    it to the quorum controller (ControllerApis.handleElectLeaders), which also takes ``election_type`` UNCLEAN."""
    broker: int
    partition: int
    election_type: str = "PREFERRED"


@dataclass(frozen=True, slots=True)
class AutoLeaderRebalance:
    """The controller on ``controller`` runs its scheduled auto-leader-rebalance-task
    (checkAndTriggerAutoLeaderRebalance, auto.leader.rebalance.enable); in KRaft (``controller`` -1: the quorum
    controller, which is no broker) the quorum controller's maybeBalancePartitionLeaders event."""
    controller: int


# ----------------------------------------------------------------- log start offset
@dataclass(frozen=True, slots=True)
class DeleteRecords:
    """An admin client's DeleteRecords request for ``partition`` reaches ``broker``: delete the records below
    ``offset`` (-1: DeleteRecordsRequest.HIGH_WATERMARK, up to the leader's HW)."""
    broker: int
    partition: int
    offset: int = -1


@dataclass(frozen=True, slots=True)
class DeleteOldSegments:
    """The log-retention task runs on ``broker``'s log of ``partition`` (Log.deleteOldSegments): segments over the
    retention limit are deleted and the log start offset moves."""
    broker: int
    partition: int


# ----------------------------------------------------------------- topics at run time (ZooKeeper era)
@dataclass(frozen=True, slots=True)
class DeleteTopic:
    """An admin deletes the topic: /admin/delete_topics/<topic> is created (AdminZkClient.deleteTopic); in KRaft the
    quorum controller appends a RemoveTopicRecord (ReplicationControlManager.deleteTopics, Kafka 3.7.0)."""


@dataclass(frozen=True, slots=True)
class CreateTopic:
    """An admin creates the topic with its partition 0 (AdminZkClient.createTopicWithAssignment)."""


@dataclass(frozen=True, slots=True)
class CreatePartitions:
    """An admin adds the topic's next partition (AdminZkClient.addPartitions)."""


@dataclass(frozen=True, slots=True)
class ControllerProcessTopicDeletion:
    """The controller on ``controller`` handles a TopicDeletion event (/admin/delete_topics changed)."""
    controller: int


@dataclass(frozen=True, slots=True)
class ControllerProcessTopicChange:
    """The controller on ``controller`` handles a TopicChange or PartitionModifications event (the topic's znode
    changed: created, partitions added, or deleted by another controller)."""
    controller: int


@dataclass(frozen=True, slots=True)
class ControllerProcessStopReplicaResponse:
    """The controller on ``controller`` handles its oldest TopicDeletionStopReplicaResponseReceived event."""
    controller: int


# ----------------------------------------------------------------- the fetch purgatory (DelayedFetch)
@dataclass(frozen=True, slots=True)
class ConsumerFetchWait:
    """A consumer's Fetch with fetch.min.bytes ``min_bytes`` (in records) and fetch.max.wait.ms ``max_wait_ms``
    reaches ``broker`` (ReplicaManager.fetchMessages): answered at once, or parked in the fetch purgatory
    (DelayedFetch).  ``fetch_offset`` -1 is the consumer's position at the serving replica's HW (caught up);
    ``current_leader_epoch`` -1 when absent (KIP-320); ``client_metadata`` a Fetch v11+ with ClientMetadata (KIP-392,
    ``rack`` its client.rack), which any replica may serve."""
    broker: int
    partition: int
    fetch_offset: int = -1
    min_bytes: int = 1
    max_wait_ms: int = 500
    current_leader_epoch: int = -1
    client_metadata: bool = False
    rack: str = ""
    isolation: str = "read_uncommitted"


@dataclass(frozen=True, slots=True)
class DelayedFetchExpire:
    """The consumer fetch ``request`` parked on ``broker`` times out (DelayedFetch.onExpiration, then onComplete)."""
    broker: int
    request: int


# ----------------------------------------------------------------- partition reassignment (KIP-455)
@dataclass(frozen=True, slots=True)
class ReassignPartitions:
    """An admin reassigns ``partition`` to the target replicas ``replicas`` (broker ids in order, comma-separated,
    e.g. ``"2,0"``): in the ZooKeeper era it creates /admin/reassign_partitions
    (KafkaZkClient.createPartitionReassignment); in KRaft its AlterPartitionReassignments reaches the quorum
    controller, where ``""`` (a null target) cancels the reassignment in progress."""
    partition: int
    replicas: str


@dataclass(frozen=True, slots=True)
class ControllerProcessPartitionReassignment:
    """The controller on ``controller`` handles its ZkPartitionReassignment event (processZkPartitionReassignment)."""
    controller: int


@dataclass(frozen=True, slots=True)
class ControllerProcessReassignmentIsrChange:
    """The controller on ``controller`` handles PartitionReassignmentIsrChange for ``partition`` (its state znode
    changed while it is being reassigned)."""
    controller: int
    partition: int


@dataclass(frozen=True, slots=True)
class PrepareIsrExpand:
    """Leader ``broker`` goes on with an ISR expansion of ``partition`` that a follower's fetch decided
    (Partition.maybeExpandIsr's prepareIsrExpand), building the AlterPartition from the replica state of this step: the
    second half of the leader's expansion when the model splits it (``isr_expand_window``, before KAFKA-15221)."""
    broker: int
    partition: int


#: The requests an earlier incarnation of a broker may leave on their way (ApiKeys' names)
ORPHAN_APIS = ("FETCH", "BROKER_HEARTBEAT")


@dataclass(frozen=True, slots=True)
class OrphanRequestReceived:
    """KRaft: the first ``api`` request (for ``partition``, -1 for a heartbeat) that an earlier incarnation of broker
    ``broker`` sent before it stopped reaches its receiver (the leader it fetched from, the quorum controller), which
    handles it with the broker epoch it carries; the answer goes nowhere."""
    broker: int
    api: str
    partition: int = -1


#: LeaderRecoveryState (KIP-704, Kafka 3.2.0) as an AlterPartition carries it
LEADER_RECOVERY_STATES = ("RECOVERED", "RECOVERING")


@dataclass(frozen=True, slots=True)
class AlterPartitionReceived:
    """A fault for implementers of Kafka-compatible brokers (KRaft): the quorum controller handles an AlterPartition for
    ``partition`` that no leader of the model sends, every field as given: from ``broker`` at ``broker_epoch``, in
    ``leader_epoch`` and ``partition_epoch``, proposing ISR ``isr`` ("0,1,3", in its order; each member's broker epoch
    -1, unchecked) and ``leader_recovery_state``; the answer goes to no one."""
    broker: int
    partition: int
    broker_epoch: int
    leader_epoch: int
    partition_epoch: int
    isr: str
    leader_recovery_state: str = "RECOVERED"


@dataclass(frozen=True, slots=True)
class ExpiredBrokerHeartbeat:
    """A fault (KRaft): broker ``broker``'s heartbeat, due now, times out in the quorum controller's event queue
    (QuorumController.processBrokerHeartbeat's deadline, Kafka 3.7.0): the controller only touches the session and
    records the metadata offset (processExpiredBrokerHeartbeat); the broker reads REQUEST_TIMED_OUT and retries."""
    broker: int


@dataclass(frozen=True, slots=True)
class AlterTopicConfig:
    """KRaft: an admin's IncrementalAlterConfigs SETs the topic's unclean.leader.election.enable to ``value``,
    forwarded by a broker to the quorum controller, which appends a ConfigRecord when the value changes
    (ConfigurationControlManager.incrementalAlterConfigs, Kafka 3.7.0)."""
    value: bool


# ----------------------------------------------------------------- log directories (KIP-858, KRaft)
@dataclass(frozen=True, slots=True)
class LogDirFailure:
    """A fault: live broker ``broker``'s log directory ``directory`` (its index) fails (an I/O error): the partitions
    there go offline on it and its heartbeats report the directory (ReplicaManager.handleLogDirFailure, Kafka 3.7.0)."""
    broker: int
    directory: int


@dataclass(frozen=True, slots=True)
class AssignReplicasToDirs:
    """Broker ``broker``'s AssignmentsManager tells the quorum controller that its replica of ``partition`` is in
    directory ``directory`` (a directory id, or UNASSIGNED / LOST / MIGRATING), which answers
    (ReplicationControlManager.handleAssignReplicasToDirs, Kafka 3.7.0)."""
    broker: int
    partition: int
    directory: str


Action = Union[
    ElectController, ControllerProcessBrokerChange, ControllerProcessIsrChangeNotification, ControllerResign,
    DeliverControlRequest, Produce, ConsumerFetch, FetchRequest, FetchResponse, OffsetsForLeaderEpoch,
    AlterIsrRequest, AlterIsrReceived, AlterIsrResponse, IsrExpiration, IsrChangePropagation, HighWatermarkCheckpoint, DelayedProduceExpire, FlushLog, Tick,
    BrokerCrash, BrokerRestart, ZkSessionExpire, ZkReconnect, ZkDeleteController, ListOffsets,
    ConsumerFetchWithClientMetadata, OffsetsForLeaderEpochRequest, OffsetsForLeaderEpochResponse,
    MetadataApply, BrokerHeartbeat, FenceStaleBroker, HeartbeatsLost, ControlledShutdown, DiskWipe,
    ControllerFailover,
    ControlledShutdownRequest, ControlledShutdownResponse, PreferredReplicaElection,
    ControllerProcessPreferredReplicaElection, AutoLeaderRebalance, ElectLeaders,
    DeleteRecords, DeleteOldSegments,
    DeleteTopic, CreateTopic, CreatePartitions, ControllerProcessTopicDeletion, ControllerProcessTopicChange,
    ControllerProcessStopReplicaResponse,
    ConsumerFetchWait, DelayedFetchExpire,
    ReassignPartitions, ControllerProcessPartitionReassignment, ControllerProcessReassignmentIsrChange,
    PrepareIsrExpand, AlterIsrFailed, OrphanRequestReceived, AlterPartitionReceived, ExpiredBrokerHeartbeat,
    AlterTopicConfig, LogDirFailure, AssignReplicasToDirs,
]

#: The protocol's exchanges as the model splits them into steps: an action type -> (a type that carries the same
#: exchange on, the fields that must agree as (field of the first, field of the second)).  A request and its handling
#: and response; a broker replaying the metadata log record after record; a controller's queue to one broker drained
#: request after request; a controller event and the requests it queues.  Engines may take a chain of them as one
#: composite step (the protocol's grain); the trace keeps every action.
_B = (("broker", "broker"),)
_BP = (("broker", "broker"), ("partition", "partition"))
_C = (("controller", "controller"),)
CONTINUATIONS: dict = {
    FetchRequest: ((FetchResponse, _BP),),
    OffsetsForLeaderEpochRequest: ((OffsetsForLeaderEpochResponse, _BP),),
    AlterIsrRequest: ((AlterIsrReceived, _B),),
    AlterIsrReceived: ((AlterIsrResponse, _B),),
    ControlledShutdownRequest: ((ControlledShutdownResponse, _B),),
    MetadataApply: ((MetadataApply, _B),),
    DeliverControlRequest: ((DeliverControlRequest, (("controller", "controller"), ("broker", "broker"))),),
    ElectController: ((DeliverControlRequest, (("broker", "controller"),)),),
    ControllerProcessBrokerChange: ((DeliverControlRequest, _C),),
    ControllerProcessIsrChangeNotification: ((DeliverControlRequest, _C),),
    ControllerProcessPreferredReplicaElection: ((DeliverControlRequest, _C),),
    ControllerProcessTopicDeletion: ((DeliverControlRequest, _C),),
    ControllerProcessTopicChange: ((DeliverControlRequest, _C),),
    ControllerProcessPartitionReassignment: ((DeliverControlRequest, _C),),
    ControllerProcessReassignmentIsrChange: ((DeliverControlRequest, _C),),
}
_FOLLOW = {(a, b): fields for a, follow in CONTINUATIONS.items() for b, fields in follow}
#: The deliveries of a controller's decisions to the brokers: a KRaft broker's replay of the committed metadata log,
#: a ZooKeeper-era controller's queued request reaching its broker.  The explorer's coarse search takes every enabled
#: one after each step (first enabled first), so that a controller event and its deliveries to every live broker are
#: one step at the protocol's grain, as a TLA+ spec's broker reading the controller's state is.
DELIVERIES = (MetadataApply, DeliverControlRequest)


def continues(a, b) -> bool:
    """Whether action b carries a's exchange on (``CONTINUATIONS``)."""
    fields = _FOLLOW.get((type(a), type(b)))
    return fields is not None and all(getattr(a, x) == getattr(b, y) for x, y in fields)


#: Every action class, in the documented order of ``enabled_actions``.
ACTION_TYPES: tuple[type, ...] = Action.__args__
ACTION_BY_NAME: dict[str, type] = {t.__name__: t for t in ACTION_TYPES}
#: Kinds used for coverage and swarm testing.
ACTION_KINDS: tuple[str, ...] = tuple(ACTION_BY_NAME)
ISOLATIONS = ("read_uncommitted", "read_committed")

_FIELD_TYPES = {t: tuple((f.name, f.type) for f in dataclasses.fields(t)) for t in ACTION_TYPES}


#: Fields added to an action after traces used it, left out of its JSON and description at their default value so
#: that those traces read and print as before.
_QUIET_DEFAULTS = {ElectLeaders: ("election_type",)}
ELECTION_TYPES = ("PREFERRED", "UNCLEAN")
#: The answers ``AlterIsrFailed`` gives: NETWORK_EXCEPTION to the whole request (what AlterPartitionManager's
#: onComplete makes of an authentication failure, Kafka 3.7.0), UNKNOWN_SERVER_ERROR and INVALID_REQUEST to each of
#: its partitions (a controller's internal error; a request a controller of another version finds malformed).
ALTER_ISR_FAULT_ERRORS = ("NETWORK_EXCEPTION", "UNKNOWN_SERVER_ERROR", "INVALID_REQUEST")


def _shown_fields(a):
    quiet = _QUIET_DEFAULTS.get(type(a), ())
    return [name for name, _ in _FIELD_TYPES[type(a)]
            if name not in quiet or getattr(a, name) != type(a).__dataclass_fields__[name].default]


def action_to_json(a) -> dict:
    """{"type": ClassName, field: value, ...}."""
    out = {"type": type(a).__name__}
    for name in _shown_fields(a):
        out[name] = getattr(a, name)
    return out


def action_from_json(data: object):
    """Decode one action, checking its type name, fields and field types."""
    if not isinstance(data, dict):
        raise ActionError(f"an action must be a JSON object, got {type(data).__name__}")
    name = data.get("type")
    cls = ACTION_BY_NAME.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ActionError(f"unknown action type {name!r}")
    fields = _FIELD_TYPES[cls]
    extra = sorted(set(data) - {"type"} - {n for n, _ in fields})
    if extra:
        raise ActionError(f"{name}: unknown field(s) {', '.join(extra)}")
    kwargs = {}
    for fname, ftype in fields:
        if fname not in data:
            default = cls.__dataclass_fields__[fname].default
            if default is dataclasses.MISSING:
                raise ActionError(f"{name}: missing field {fname!r}")
            continue
        value = data[fname]
        if ftype == "bool":
            ok = isinstance(value, bool)
        elif ftype == "int":
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, str)
        if not ok:
            raise ActionError(f"{name}: field {fname!r} must be {ftype}, got {value!r}")
        kwargs[fname] = value
    if cls in (ConsumerFetch, ListOffsets) and kwargs.get("isolation", "read_uncommitted") not in ISOLATIONS:
        raise ActionError(f"{name}: isolation must be one of {', '.join(ISOLATIONS)}")
    if cls is OrphanRequestReceived and kwargs["api"] not in ORPHAN_APIS:
        raise ActionError(f"{name}: api must be one of {', '.join(ORPHAN_APIS)}")
    if cls is ElectLeaders and kwargs.get("election_type", "PREFERRED") not in ELECTION_TYPES:
        raise ActionError(f"{name}: election_type must be one of {', '.join(ELECTION_TYPES)}")
    if cls is AlterIsrFailed and kwargs["error"] not in ALTER_ISR_FAULT_ERRORS:
        raise ActionError(f"{name}: error must be one of {', '.join(ALTER_ISR_FAULT_ERRORS)}")
    if cls is AlterPartitionReceived:
        _check_alter_partition_received(kwargs)
    if cls is LogDirFailure and kwargs["directory"] < 0:
        raise ActionError(f"{name}: directory must be >= 0, got {kwargs['directory']}")
    if cls is AssignReplicasToDirs and not kwargs["directory"]:
        raise ActionError(f"{name}: directory must be a directory id or UNASSIGNED, LOST, MIGRATING")
    if cls is ConsumerFetchWithClientMetadata and kwargs.get("current_leader_epoch", -1) < -1:
        raise ActionError(f"{name}: current_leader_epoch must be >= -1, got {kwargs['current_leader_epoch']}")
    if cls is ReassignPartitions and kwargs["replicas"] != "":     # "": KRaft's cancel
        from .reassignment import parse_replicas
        try:
            parse_replicas(kwargs["replicas"])
        except ValueError as e:
            raise ActionError(f"{name}: {e}") from None
    if cls is ConsumerFetchWait:
        if kwargs.get("isolation", "read_uncommitted") not in ISOLATIONS:
            raise ActionError(f"{name}: isolation must be one of {', '.join(ISOLATIONS)}")
        for fname, low in (("fetch_offset", -1), ("min_bytes", 0), ("max_wait_ms", 0), ("current_leader_epoch", -1)):
            if kwargs.get(fname, 0) < low:
                raise ActionError(f"{name}: {fname} must be >= {low}, got {kwargs[fname]}")
    if cls is ListOffsets:
        for fname, low in (("timestamp", -2), ("replica_id", -2), ("current_leader_epoch", -1)):
            if kwargs.get(fname, -1) < low:
                raise ActionError(f"ListOffsets: {fname} must be >= {low}, got {kwargs[fname]}")
    return cls(**kwargs)


def parse_isr(text: str) -> tuple:
    """``"0,1,3"`` -> (0, 1, 3): an AlterPartitionReceived's ISR, in its order, duplicates kept ("": empty); ValueError
    if malformed."""
    try:
        isr = tuple(int(x) for x in text.split(",")) if text else ()
    except ValueError:
        isr = (-1,)
    if any(r < 0 for r in isr):
        raise ValueError(f"isr must be broker ids >= 0 separated by commas, got {text!r}")
    return isr


def _check_alter_partition_received(kwargs: dict) -> None:
    """ActionError unless an AlterPartitionReceived's values can be sent at all: ids and epochs >= 0, an ISR of ids,
    a recovery state of KIP-704's."""
    for fname in ("broker", "partition", "broker_epoch", "leader_epoch", "partition_epoch"):
        if kwargs[fname] < 0:
            raise ActionError(f"AlterPartitionReceived: {fname} must be >= 0, got {kwargs[fname]}")
    try:
        parse_isr(kwargs["isr"])
    except ValueError as e:
        raise ActionError(f"AlterPartitionReceived: {e}") from None
    if kwargs.get("leader_recovery_state", "RECOVERED") not in LEADER_RECOVERY_STATES:
        raise ActionError(f"AlterPartitionReceived: leader_recovery_state must be one of "
                          f"{', '.join(LEADER_RECOVERY_STATES)}")


def describe(a) -> str:
    """``Produce(broker=0, partition=0, acks=-1)``: the action as a call."""
    return f"{type(a).__name__}({', '.join(f'{n}={getattr(a, n)!r}' for n in _shown_fields(a))})"
