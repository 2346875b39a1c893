"""The cluster state: brokers (ReplicaManager, LogManager, fetchers), ZooKeeper, controllers, ghost.

Records are grouped by owner, as in Vanlightly's TLA+ variable groups: what a
broker process holds, what ZooKeeper holds, what each controller holds, and
the ghost (``Ghost``): bookkeeping that is not part of the protocol (records
acknowledged, records consumed, fault counters) and exists only so that
invariants can be stated.  Broker-indexed data are tuples indexed by broker id;
sets are sorted tuples.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from .log import Log
from .node import Node, record, replace_at

NO_LEADER = -1            # LeaderAndIsr.NoLeader
LEADER_DURING_DELETE = -2  # LeaderAndIsr.LeaderDuringDelete
OFFLINE = "offline"       # HostedPartition.Offline (ReplicaManager, Kafka 2.4.0)

TRUNCATING = "truncating"
FETCHING = "fetching"
FAILED = "failed"


# --------------------------------------------------------------------------- values
@dataclass(frozen=True, slots=True)
class LeaderIsrAndControllerEpoch:
    """Contents of a partition state znode (kafka.controller.LeaderIsrAndControllerEpoch) with its zkVersion."""

    leader: int
    leader_epoch: int
    isr: tuple
    controller_epoch: int
    zk_version: int

    @property
    def elr(self) -> tuple:
        """No Eligible Leader Replicas in the ZooKeeper era (KIP-966 is KRaft's)."""
        return ()


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """One partition in a broker's MetadataCache (UpdateMetadataPartitionState, Kafka 2.4.0)."""

    leader: int
    leader_epoch: int
    isr: tuple
    replicas: tuple
    #: UpdateMetadataPartitionState.offlineReplicas (Kafka 2.4.0): the replicas the controller holds offline
    offline_replicas: tuple = ()


@dataclass(frozen=True, slots=True)
class MetadataCache:
    """kafka.server.MetadataCache: live brokers and partition states as clients see them."""

    alive_brokers: tuple = ()
    partitions: tuple = ()  # PartitionMetadata | None per partition
    #: the controller id of the last UpdateMetadata (MetadataCache.getControllerId, where a broker sends
    #: AlterIsr); recorded only with KIP-497, -1 otherwise
    controller_id: int = -1
    #: KRaft (KRaftMetadataCache, Kafka 3.5.0): each broker's registered epoch (-1 unregistered), and the registered
    #: brokers that are fenced, and in controlled shutdown, sorted; ``alive_brokers`` are the registered, unfenced ones
    broker_epochs: tuple = ()
    fenced: tuple = ()
    shutting_down: tuple = ()


@dataclass(frozen=True, slots=True)
class PendingIsr:
    """Partition's IsrState while an AlterIsr is in flight (Kafka 2.7.0): PendingExpandIsr(isr, newInSyncReplicaId)
    when ``expand`` (``replicas`` the one new member), PendingShrinkIsr(isr, outOfSyncReplicaIds) otherwise
    (``replicas`` the members leaving, sorted).  The committed ISR is ``Partition.isr``; None is CommittedIsr."""

    expand: bool
    replicas: tuple


@dataclass(frozen=True, slots=True)
class AlterIsrItem:
    """AlterIsrManager's AlterIsrItem (Kafka 2.7.0): the request data for one partition and the proposed IsrState
    its callback compares with the partition's (``isr`` committed, ``pending`` the PendingIsr)."""

    request: object                  # requests.AlterIsrPartition
    isr: tuple
    pending: PendingIsr


@dataclass(frozen=True, slots=True)
class AlterIsrInflight:
    """The AlterIsr request a broker has in flight (AlterIsrManager's inflightRequest): the request on its way to the
    controller, then (``response`` set once the controller has handled it) the response on its way back."""

    controller: int                  # the broker the request went to (-1: KRaft's active controller)
    items: tuple                     # the AlterIsrItems sent, by partition (inflightAlterIsrItems)
    request: object                  # requests.AlterIsrRequestData, as sent
    response: object = None          # requests.AlterIsrResponseData; None while the controller has not handled it
    #: its sender's process has stopped since it was sent: the request is still on its way to the controller, which
    #: handles it (with the broker epoch it carries), and the answer goes nowhere
    orphan: bool = False

    QUIET_FIELDS: ClassVar[tuple] = ("orphan",)


@dataclass(frozen=True, slots=True)
class OrphanFetch:
    """A follower's Fetch for one partition sent by a broker's earlier incarnation, still on its way to the leader it
    went to (FetchRequest v15 with ReplicaState, Kafka 3.5.0): what the request carries."""

    partition: int
    leader: int
    fetch_offset: int
    current_leader_epoch: int        # -1: none (before KIP-320)
    log_start_offset: int
    last_fetched_epoch: int          # -1: none (before KAFKA-10554)
    broker_epoch: int                # ReplicaState.ReplicaEpoch (KIP-903); -1: not sent


@dataclass(frozen=True, slots=True)
class OrphanHeartbeat:
    """A BrokerHeartbeat sent by a broker's earlier incarnation, still on its way to the quorum controller
    (BrokerHeartbeatRequest, Kafka 3.5.0): the broker epoch, the metadata offset and wantShutDown it carries, and its
    offline log directories (KIP-858, 3.7.0; () without)."""

    broker_epoch: int
    metadata_offset: int
    want_shutdown: bool
    offline_dirs: tuple = ()

    QUIET_FIELDS: ClassVar[tuple] = ("offline_dirs",)


@dataclass(frozen=True, slots=True)
class ControlledShutdownState:
    """KafkaServer.controlledShutdown's retry loop (Kafka 2.4.0), ZooKeeper era: the attempts left
    (controlled.shutdown.max.retries), the controller of the last attempt (prevController), the ControlledShutdown
    request in flight (the broker it went to and the broker epoch it carries) or the response waiting to be read."""

    remaining_retries: int
    prev_controller: int = -1            # prevController: where the last request went, -1 none yet
    request_to: int = -1                 # the request in flight went to this broker, -1 none in flight
    request_epoch: int = -1              # the broker epoch it carries (-1 unknown: no KIP-380)
    response: tuple = ()                 # (error, partitions the broker still leads), () none waiting


@dataclass(frozen=True, slots=True)
class DelayedProduce:
    """kafka.server.DelayedProduce for one partition of an acks=-1 produce (Kafka 2.4.0)."""

    request_id: int
    partition: int
    required_offset: int   # last appended offset + 1
    first_offset: int
    record_ids: tuple
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class DelayedFetch:
    """kafka.server.DelayedFetch for one partition of a consumer's fetch (Kafka 2.4.0): its FetchMetadata and
    FetchPartitionStatus, kept in the fetch purgatory until tryComplete, a forced completion or the timeout."""

    request_id: int
    partition: int
    fetch_offset: int          # the request's PartitionData.fetchOffset
    #: FetchPartitionStatus.startOffsetMetadata is known (false: UnknownOffsetMetadata, a preferred read replica's
    #: answer, which tryComplete skips)
    offset_known: bool
    min_bytes: int             # fetch.min.bytes, counted in records
    current_leader_epoch: int  # -1: none (KIP-320)
    client_metadata: bool      # Fetch v11+ with ClientMetadata (KIP-392): fetchOnlyFromLeader = false
    rack: str                  # the ClientMetadata's client.rack
    isolation: str
    deadline_ms: int           # the request's arrival + fetch.max.wait.ms


@dataclass(frozen=True, slots=True)
class FetchResponseData:
    """A partition's part of a FetchResponse as the follower receives it."""

    error: str
    fetch_offset: int
    entries: tuple
    high_watermark: int
    log_start_offset: int
    #: FetchResponseData.EpochEndOffset divergingEpoch, (epoch, end offset), or () (KAFKA-10554)
    diverging: tuple = ()
    #: before KAFKA-14704: processPartitionData has set the follower's HW from this diverging response, and the
    #: truncation (truncateOnFetchResponse) is still to come
    hw_applied: bool = False


@dataclass(frozen=True, slots=True)
class ClientMetadataFetchResponseData:
    """A partition's part of the FetchResponse to a consumer that sent ClientMetadata (KIP-392, Kafka 2.4.0)."""

    error: str
    fetch_offset: int
    entries: tuple
    high_watermark: int
    log_start_offset: int
    #: the replica the leader's replica selector points the consumer at (then no records), -1 for none
    preferred_read_replica: int = -1


@dataclass(frozen=True, slots=True)
class ProduceResponseData:
    """A partition's part of a ProduceResponse (acks 1 or -1): the error and the base offset (-1 on an error)."""

    error: str
    base_offset: int


@dataclass(frozen=True, slots=True)
class DeleteRecordsResponseData:
    """DeleteRecordsResponse.PartitionResponse (Kafka 2.4.0): the error and the low watermark (-1,
    INVALID_LOW_WATERMARK, on an error); ``requested_offset`` the offset the leader deleted to (the HW for -1)."""

    error: str
    low_watermark: int
    requested_offset: int = -1


@dataclass(frozen=True, slots=True)
class ListOffsetsResponseData:
    """ListOffsetResponse.PartitionData (Kafka 2.4.0, v5): -1 for UNKNOWN_TIMESTAMP / UNKNOWN_OFFSET / no epoch."""

    error: str
    timestamp: int
    offset: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class UncleanElection:
    """Ghost record of an unclean leader election (unclean.leader.election.enable): the partition, the leader epoch
    the controller wrote and the out-of-sync replica it chose.  Once that replica first leads the partition in
    that epoch or a later one (a clean election may give it a later epoch from the ISR the unclean one left),
    ``taken_epoch`` is that epoch and ``log`` its log then, ``(log start offset, record ids)``, against which
    older promises are judged lost."""

    partition: int
    leader_epoch: int
    leader: int
    taken_epoch: int = -1
    log: tuple | None = None


@record
class Responses(Node):
    """Ghost: the last response of each request kind, per broker and partition (``None`` before the first).

    Each field is a tuple indexed by broker, then by partition (empty until the kind's first response), so a
    scenario check reads ``ghost.responses.list_offsets.1.0.offset``.  The broker is the one the action names:
    the broker asked (produce, consumer fetch, ListOffsets, control requests) or the follower asking
    (OffsetsForLeaderEpoch).  Unlike ``errors_seen`` a repeated error is observable; nothing in the protocol reads
    it.  A follower's fetch response is not kept here: it is state already (``FetchState.inflight``) until the
    follower processes it, which is when a check can read it.
    """

    produce: tuple = ()                   # ProduceResponseData (acks 1 / -1; acks 0 has no response)
    consumer_fetch: tuple = ()            # FetchResponseData
    offsets_for_leader_epoch: tuple = ()  # the error of the follower's OffsetsForLeaderEpoch
    list_offsets: tuple = ()              # ListOffsetsResponseData
    leader_and_isr: tuple = ()            # the partition's error in the LeaderAndIsr response
    update_metadata: tuple = ()           # the partition's error (UpdateMetadata answers one error in Kafka)
    stop_replica: tuple = ()              # the partition's error in the StopReplica response
    elect_leaders: tuple = ()             # the partition's error in the ElectLeaders response (KIP-460)
    delete_records: tuple = ()            # DeleteRecordsResponseData
    #: KRaft: the quorum controller's answer to the admin's CreateTopics / CreatePartitions for each partition it
    #: would create (the error name), indexed by partition only: the model's admin request names no broker
    create_partitions: tuple = ()
    #: KRaft with log directories: the quorum controller's answer to a broker's AssignReplicasToDirs per partition
    assign_replicas_to_dirs: tuple = ()

    QUIET_FIELDS: ClassVar[tuple] = ("assign_replicas_to_dirs",)


# --------------------------------------------------------------------------- KRaft metadata (KIP-500, KIP-631)
@dataclass(frozen=True, slots=True)
class PartitionRegistration:
    """org.apache.kafka.metadata.PartitionRegistration (Kafka 3.5.0): a partition as the metadata log holds it.

    ``zk_version`` and ``controller_epoch`` are the names the rules and checks shared with the ZooKeeper era read
    (the version an AlterIsr / AlterPartition is compared with, and the epoch of the controller that wrote it):
    here the partition epoch, and 0 (one linearizable quorum)."""

    replicas: tuple
    isr: tuple
    leader: int
    leader_epoch: int
    partition_epoch: int
    #: Eligible Leader Replicas (KIP-966): replicas that left the ISR while it was below min ISR, sorted
    elr: tuple = ()
    #: LeaderRecoveryState (KIP-704, 3.2.0): RECOVERING from an unclean election until the leader's AlterPartition
    #: says RECOVERED
    leader_recovery_state: str = "RECOVERED"
    #: lastKnownElr (KIP-966, 3.7.0): as the controller keeps it (useLastKnownLeaderInBalancedRecovery, on by default),
    #: the leader the partition had when its ISR became empty, cleared once it has a leader again; at most one member
    last_known_elr: tuple = ()
    #: addingReplicas and removingReplicas (KIP-455 in KRaft, ReplicationControlManager.changePartitionReassignment):
    #: the replicas a reassignment in progress adds and removes (``replicas`` holds both); () when none is.  Left out
    #: of the encoding when empty (``QUIET_FIELDS``), so states without a reassignment encode as before.
    adding_replicas: tuple = ()
    removing_replicas: tuple = ()
    #: directories (KIP-858, 3.7.0): each replica's log directory, in ``replicas`` order (a directory id, or
    #: UNASSIGNED / LOST / MIGRATING); () without directory assignment (``config.directory_assignment``)
    directories: tuple = ()

    #: fields ``encode`` leaves out at their default value (added after states were fingerprinted)
    QUIET_FIELDS: ClassVar[tuple] = ("adding_replicas", "removing_replicas", "directories")

    def directory(self, b: int) -> str:
        """PartitionRegistration.directory (Kafka 3.7.0): replica b's directory; MIGRATING without directories."""
        if b in self.replicas and self.directories:
            return self.directories[self.replicas.index(b)]
        return "MIGRATING"

    @property
    def zk_version(self) -> int:
        return self.partition_epoch

    @property
    def controller_epoch(self) -> int:
        return 0

    @property
    def removed(self) -> bool:
        """No registration (``REMOVED``): the partition's topic was deleted (RemoveTopicRecord), or it is not created."""
        return not self.replicas


#: The place of a partition whose topic a RemoveTopicRecord deleted, or not created yet: no replicas, ISR, ELR,
#: lastKnownElr or leader (ReplicationControlManager has no registration; the model keeps the partition's index, as
#: the ZooKeeper era's assignment keeps ``()``).  ``ClusterState.controller_partition_states`` gives None for it.
REMOVED = PartitionRegistration((), (), -1, 0, 0)


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """org.apache.kafka.metadata.BrokerRegistration (Kafka 3.5.0): the broker epoch (the offset of its
    RegisterBrokerRecord), whether it is fenced, and whether it is in controlled shutdown (KIP-841, 3.3.0)."""

    epoch: int
    fenced: bool
    in_controlled_shutdown: bool = False
    #: its online log directories, sorted (BrokerRegistration.directories, KIP-858, 3.7.0); () without directory
    #: assignment
    directories: tuple = ()

    QUIET_FIELDS: ClassVar[tuple] = ("directories",)


@dataclass(frozen=True, slots=True)
class RegisterBrokerRecord:
    """RegisterBrokerRecord (metadata log): a broker incarnation registers, fenced until it catches up."""

    broker_id: int
    broker_epoch: int
    fenced: bool = True
    #: LogDirs (KIP-858, 3.7.0): the directories it registers, sorted; () without directory assignment
    log_dirs: tuple = ()

    QUIET_FIELDS: ClassVar[tuple] = ("log_dirs",)


@dataclass(frozen=True, slots=True)
class FenceBrokerRecord:
    """FenceBrokerRecord (metadata log, 3.3; BrokerRegistrationChangeRecord with FENCE from 3.3-IV3)."""

    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class UnfenceBrokerRecord:
    """UnfenceBrokerRecord (metadata log, 3.3; BrokerRegistrationChangeRecord with UNFENCE from 3.3-IV3)."""

    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class BrokerRegistrationChangeRecord:
    """BrokerRegistrationChangeRecord with InControlledShutdown (metadata log, KIP-841, 3.3.0): a broker began its
    controlled shutdown."""

    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class BrokerLogDirsChangeRecord:
    """BrokerRegistrationChangeRecord with LogDirs (metadata log, KIP-858, 3.7.0): the broker's directories still
    online after some went offline (ReplicationControlManager.handleDirectoriesOffline)."""

    broker_id: int
    broker_epoch: int
    log_dirs: tuple


@dataclass(frozen=True, slots=True)
class RemoveTopicRecord:
    """RemoveTopicRecord (metadata log, ReplicationControlManager.deleteTopic): the topic and its partitions are gone;
    ``partitions`` are the model's one topic's partitions that existed."""

    partitions: tuple


@dataclass(frozen=True, slots=True)
class ConfigRecord:
    """ConfigRecord (metadata log, ConfigurationControlManager.incrementalAlterConfigs, Kafka 3.7.0): the topic's
    ``unclean.leader.election.enable`` set to ``value`` (the only topic config the model has)."""

    name: str
    value: bool


@dataclass(frozen=True, slots=True)
class PartitionChangeRecord:
    """PartitionRecord (``created``) or PartitionChangeRecord (metadata log), carrying the partition as it is after the
    record (Kafka's change record carries only the changed fields; replaying either gives the same registration)."""

    partition: int
    registration: PartitionRegistration
    created: bool = False


@record
class Quorum(Node):
    """The KRaft controller quorum as one linearizable metadata log, and the active controller's state built from it
    (QuorumController with ClusterControlManager, ReplicationControlManager and BrokerHeartbeatManager, Kafka 3.5.0).
    The Raft protocol under the log is out of scope (model/README.md)."""

    log: tuple = ()                      # committed metadata records; a record's offset is its index
    #: where each batch ends (the log's length after it): the records one controller event writes are one batch,
    #: and brokers replay a batch at a time
    batch_ends: tuple = ()
    registrations: tuple = ()            # BrokerRegistration | None per broker id
    partitions: tuple = ()               # PartitionRegistration per partition
    last_contact_ms: tuple = ()          # BrokerHeartbeatManager: time of each broker's last heartbeat
    #: BrokerHeartbeatManager: each broker's metadata offset (records replayed) as its last heartbeat reported it
    reported_offsets: tuple = ()
    #: BrokerHeartbeatManager.controlledShutdownOffset: the log length when the broker's controlled shutdown began, -1
    shutdown_offsets: tuple = ()
    #: QuorumController's maybeBalancePartitionLeaders event (auto.leader.rebalance.enable): its due time, -1 when not
    #: scheduled (ImbalanceSchedule DEFERRED or IMMEDIATELY; SCHEDULED is a due time)
    next_balance_ms: int = -1
    #: ConfigurationControlManager's configData for the topic: its dynamic unclean.leader.election.enable (a
    #: ConfigRecord), None while it has none (the static ``unclean_leader_election`` applies); left out of the
    #: encoding while None (``QUIET_FIELDS``), so states without a config change encode as before
    topic_unclean_leader_election: bool | None = None
    QUIET_FIELDS: ClassVar[tuple] = ("topic_unclean_leader_election",)


# --------------------------------------------------------------------------- broker side
@record
class Replica(Node):
    """kafka.cluster.Replica: the leader's view of one remote follower (Kafka 2.4.0)."""

    broker_id: int
    log_end_offset: int = -1
    log_start_offset: int = -1
    last_fetch_leader_log_end_offset: int = 0
    last_fetch_time_ms: int = 0
    last_caught_up_time_ms: int = 0
    #: the broker epoch of the follower's last Fetch (KIP-903, 3.5.0); None until one arrives (Option.empty)
    broker_epoch: int | None = None


@record
class Partition(Node):
    """kafka.cluster.Partition on one broker (Kafka 2.4.0); its log lives in Broker.logs."""

    partition: int
    assigned_replicas: tuple = ()       # allReplicaIds, AR order
    isr: tuple = ()                      # inSyncReplicaIds, sorted; empty on a follower (F2)
    leader: int = NO_LEADER              # leaderReplicaIdOpt
    leader_epoch: int = -1               # initialLeaderEpoch - 1
    leader_epoch_start_offset: int = -1  # leaderEpochStartOffsetOpt, -1 = None
    zk_version: int = 0
    controller_epoch: int = 0
    remote_replicas: tuple = ()          # Replica per remote id, AR order
    pending_isr: PendingIsr | None = None  # isrState (KIP-497): None is CommittedIsr(isr)
    #: a maybeExpandIsr call has decided to add this follower and not built its AlterPartition yet (only with
    #: ``isr_expand_window`` before KAFKA-15221: ``PrepareIsrExpand`` builds it); -1 none
    expand_checked: int = -1
    #: assignmentState (Kafka 3.7.0): a reassignment's addingReplicas and removingReplicas as the partition's last
    #: state named them (OngoingReassignmentState; () and () is SimpleAssignmentState).  KRaft only; left out of the
    #: encoding when empty (``QUIET_FIELDS``), so states without a reassignment encode as before.
    adding_replicas: tuple = ()
    removing_replicas: tuple = ()

    #: fields ``encode`` leaves out at their default value (added after states were fingerprinted)
    QUIET_FIELDS: ClassVar[tuple] = ("adding_replicas", "removing_replicas")

    def maximal_isr(self) -> tuple:
        """IsrState.maximalIsr (Kafka 2.7.0): the committed ISR plus a pending expansion's new member."""
        pend = self.pending_isr
        if pend is None or not pend.expand:
            return self.isr
        return tuple(sorted(self.isr + pend.replicas))

    def remote(self, broker_id: int):
        for r in self.remote_replicas:
            if r.broker_id == broker_id:
                return r
        return None

    def remote_mut(self, broker_id: int) -> Replica:
        for i, r in enumerate(self.remote_replicas):
            if r.broker_id == broker_id:
                if r._tok is not self._tok:
                    r = r._clone(self._tok)
                    self.remote_replicas = replace_at(self.remote_replicas, i, r)
                return r
        raise KeyError(broker_id)


@record
class FetchState(Node):
    """PartitionFetchState in the follower's ReplicaFetcherThread (AbstractFetcherThread, Kafka 2.4.0)."""

    leader: int
    leader_epoch: int
    fetch_offset: int
    state: str = FETCHING          # TRUNCATING, FETCHING or FAILED
    inflight: FetchResponseData | None = None
    #: an OffsetsForLeaderEpoch round in flight (``offsets_for_leader_epoch_in_flight``): (the leader epoch it was
    #: sent in, the leader's error, epoch and end offset), () when none
    epoch_request: tuple = ()


@record
class Broker(Node):
    """One broker process: ReplicaManager, LogManager, fetcher, scheduler and MetadataCache."""

    broker_id: int
    alive: bool = True
    broker_epoch: int = -1               # czxid of its registration known to the process
    controller_epoch: int = 0            # ReplicaManager.controllerEpoch
    partitions: tuple = ()               # allPartitions: None | OFFLINE | Partition, per partition
    logs: tuple = ()                     # LogManager: Log | None per partition (survives restarts)
    fetchers: tuple = ()                 # FetchState | None per partition
    hw_checkpoint: tuple = ()            # replication-offset-checkpoint: HW | None per partition
    hw_checkpoint_started: bool = False
    metadata: MetadataCache = MetadataCache()
    next_isr_expiration_ms: int = 0
    next_isr_propagation_ms: int = 0
    next_hw_checkpoint_ms: int = -1
    isr_change_set: tuple = ()           # partitions with unpropagated ISR changes
    last_isr_change_ms: int = 0
    last_isr_propagation_ms: int = 0
    delayed_produces: tuple = ()
    alter_isr_unsent: tuple = ()         # AlterIsrManager.unsentIsrUpdates: AlterIsrItem, by partition (KIP-497)
    alter_isr_inflight: AlterIsrInflight | None = None  # AlterIsrManager's request in flight (KIP-497)
    metadata_offset: int = 0             # KRaft: metadata records replayed (the next record's offset)
    next_heartbeat_ms: int = -1          # KRaft: BrokerLifecycleManager's next heartbeat, -1 none
    #: KRaft: the broker epoch the last clean shutdown wrote to disk (previousBrokerEpoch at the next registration,
    #: KIP-966), -1 after an unclean stop
    clean_shutdown_epoch: int = -1
    #: KRaft: BrokerLifecycleManager.beginControlledShutdown was called; heartbeats ask to shut down
    want_shutdown: bool = False
    #: ZooKeeper era: KafkaServer.controlledShutdown's state (PendingControlledShutdown), None when not shutting down
    controlled_shutdown: ControlledShutdownState | None = None
    delayed_fetches: tuple = ()          # the fetch purgatory: DelayedFetch, by arrival (consumers' fetches)
    #: KRaft: requests an earlier incarnation sent just before it stopped, still on their way (OrphanFetch to a leader,
    #: OrphanHeartbeat to the quorum controller), in the order they were sent; the receiver handles each with the
    #: broker epoch it carries and the answer goes nowhere.  Left out of the encoding when empty (``QUIET_FIELDS``)
    orphans: tuple = ()
    #: KRaft with log directories (``log_dirs``): the index of the directory each partition's log is in (read only
    #: where ``logs`` holds one), the indexes of the directories offline since the process started (LogManager's
    #: offline dirs, BrokerLifecycleManager.offlineDirs), and AssignmentsManager's assignments not yet sent:
    #: (partition, directory id), by partition.  Left out of the encoding when empty (``QUIET_FIELDS``)
    log_dir_of: tuple = ()
    offline_dirs: tuple = ()
    dir_assignments: tuple = ()

    QUIET_FIELDS: ClassVar[tuple] = ("orphans", "log_dir_of", "offline_dirs", "dir_assignments")

    def partition_mut(self, p: int) -> Partition:
        part = self.partitions[p]
        if part._tok is not self._tok:
            part = part._clone(self._tok)
            self.partitions = replace_at(self.partitions, p, part)
        return part

    def log_mut(self, p: int) -> Log:
        log = self.logs[p]
        if log._tok is not self._tok:
            log = log._clone(self._tok)
            self.logs = replace_at(self.logs, p, log)
        return log

    def fetcher_mut(self, p: int) -> FetchState:
        f = self.fetchers[p]
        if f._tok is not self._tok:
            f = f._clone(self._tok)
            self.fetchers = replace_at(self.fetchers, p, f)
        return f

    def online(self, p: int):
        """The Partition if it is hosted and online here, else None."""
        part = self.partitions[p]
        return part if type(part) is Partition else None


# --------------------------------------------------------------------------- ZooKeeper
@record
class ZooKeeper(Node):
    """The ZooKeeper znodes the protocol uses, each with its version (KafkaZkClient, Kafka 2.4.0)."""

    controller: int = -1                 # /controller (ephemeral), -1 when absent
    controller_epoch: int = 0            # /controller_epoch
    controller_epoch_zk_version: int = 0
    assignment: tuple = ()               # /brokers/topics/<t>: replicas per partition
    partition_states: tuple = ()         # /brokers/topics/<t>/partitions/<p>/state, or None
    isr_change_notifications: tuple = () # /isr_change_notification/isr_change_<seq>: (seq, partitions)
    next_sequence: int = 0
    registrations: tuple = ()            # /brokers/ids/<id>: broker epoch (czxid) or -1
    sessions: tuple = ()                 # the broker's ZooKeeper session is alive
    next_czxid: int = 1
    preferred_replica_election: tuple = ()  # /admin/preferred_replica_election: its partitions, () absent
    #: /admin/delete_topics/<topic>: an admin asked to delete the topic (TopicDeletionManager, Kafka 2.4.0)
    delete_topics: bool = False
    #: /admin/reassign_partitions: per partition the target replicas, or None; () while the znode is absent
    reassign_partitions: tuple = ()
    #: the topic znode's addingReplicas and removingReplicas (KIP-455): per partition (adding, removing) while it is
    #: being reassigned (``assignment`` then holds RS = TRS + ORS), else None; () when no partition ever was
    reassigning: tuple = ()


# --------------------------------------------------------------------------- controller
@record
class Controller(Node):
    """A KafkaController instance on one broker, with its ControllerContext and ControllerChannelManager."""

    broker_id: int
    epoch: int
    epoch_zk_version: int
    live_brokers: tuple = ()             # broker epoch per broker id, -1 when not live
    partition_states: tuple = ()         # cached LeaderIsrAndControllerEpoch | None per partition
    queues: tuple = ()                   # per destination broker: tuple of control requests
    shutting_down: tuple = ()            # ControllerContext.shuttingDownBrokerIds, sorted
    next_rebalance_ms: int = -1          # auto-leader-rebalance-task's next run, -1 not scheduled
    #: ControllerContext.partitionReplicaAssignment: the replicas of each partition it knows, () for none (a partition
    #: not created, or created in ZooKeeper but not yet seen: a TopicChange / PartitionModifications event pending)
    assignment: tuple = ()
    #: ControllerContext.topicsToBeDeleted / topicsWithDeletionStarted / topicsIneligibleForDeletion (the one topic)
    deleting: bool = False
    deletion_started: bool = False
    deletion_ineligible: bool = False
    #: ReplicaStateMachine states of the deleting topic's replicas, per partition: (replica, state) in assignment order,
    #: a state being "online", "offline", "started", "successful" or "ineligible" (ReplicaDeletionStarted, ...);
    #: () while the topic is not queued for deletion
    replica_deletion: tuple = ()
    #: TopicDeletionStopReplicaResponseReceived events queued by the StopReplica (delete) response callback:
    #: (broker, ((partition, error), ...)), in arrival order
    stop_replica_responses: tuple = ()
    #: a ZkPartitionReassignment event is queued (the /admin/reassign_partitions creation watch fired)
    reassign_event: bool = False

    def is_live(self, b: int) -> bool:
        return self.live_brokers[b] >= 0


# --------------------------------------------------------------------------- ghost
@record
class Ghost(Node):
    """Bookkeeping outside the protocol, kept only to state invariants."""

    next_record_id: int = 1
    next_request_id: int = 1
    produced: int = 0
    #: (record id, offset, leader epoch, broker, partition) of every acks=-1 NONE response.
    acked: tuple = ()
    #: (partition, offset, record id, serving leader's epoch) seen by a consumer, sorted.
    consumed: tuple = ()
    #: (partition, leader epoch, broker) each time a broker became leader, in order.
    leaders: tuple = ()
    unclean_elections: int = 0
    #: UncleanElection per unclean election, in order.
    unclean: tuple = ()
    #: (partition, leader epoch, leader, offset, record id): a record acknowledged to acks=all or read by a
    #: consumer in an older epoch that the unclean leader of that epoch did not hold at its offset when it took
    #: over (a documented loss of unclean.leader.election.enable), sorted.
    unclean_losses: tuple = ()
    controller_moves: int = 0            # operator deletions of /controller (ZkDeleteController)
    crashes: int = 0
    lossy_crashes: int = 0               # unclean crashes that lost unflushed data, and disk wipes
    disk_wipes: int = 0                  # KRaft: DiskWipe faults
    session_expirations: int = 0
    flushes: int = 0
    errors_seen: int = 0                 # bit set over errors.ERROR_BIT
    isr_shrinks: int = 0                 # successful leader ISR writes that removed members
    isr_expands: int = 0                 # successful leader ISR writes that added a member
    truncations: int = 0                 # follower truncations that removed at least one record
    session_since: tuple = ()            # per broker: time its current ZooKeeper session started
    responses: Responses = field(default_factory=Responses)  # the last response per request kind, broker and partition
    preferred_elections: int = 0         # admin requests of a preferred-replica election (PreferredReplicaElection)
    delete_records: int = 0              # DeleteRecords requests handled (budget max_delete_records)
    retention_runs: int = 0              # DeleteOldSegments runs (budget max_retention_runs)
    partition_creations: int = 0         # admin CreateTopic / CreatePartitions actions
    topic_deletions: int = 0             # admin DeleteTopic actions
    #: partitions of a deleted topic (its deletion completed): their records are gone with the topic, so the
    #: durability invariants and the liveness properties skip them (a deleted topic is never created again)
    deleted_partitions: tuple = ()
    reassignments: int = 0               # partition reassignments an admin started (ReassignPartitions)
    alter_isr_failures: int = 0          # AlterIsr requests answered by the AlterIsrFailed fault
    #: (broker, partition, leader epoch, partition epoch) of each ISR change the AlterIsrFailed fault answered with an
    #: error the leader gives up on (INVALID_REQUEST): Kafka leaves such a partition pending until new metadata, a
    #: stall the fault causes, which pending_isr_in_flight, alter_isr_completes and hw_reaches_leo do not count
    fault_given_up: tuple = ()
    leader_balances: int = 0             # KRaft: elections the controller's leader-balancing task made
    #: KRaft: the quorum controller's answer to each AlterPartitionReceived (the request's error, else its
    #: partition's), in order
    forged_answers: tuple = ()
    #: KRaft: (partition, what makes it invalid) of each AlterPartitionReceived the controller accepted though it is
    #: invalid (``quorum_controller.alter_partition_defect``)
    forged_accepted: tuple = ()
    expired_heartbeats: int = 0          # KRaft: heartbeats timed out in the controller's queue (ExpiredBrokerHeartbeat)
    config_changes: int = 0              # KRaft: the admin's IncrementalAlterConfigs (AlterTopicConfig)
    #: KRaft: unclean elections the topic's dynamic unclean.leader.election.enable allowed (the static one off): the
    #: witness ``config_unclean_election``
    config_unclean_elections: int = 0
    log_dir_failures: int = 0            # KRaft: LogDirFailure faults
    #: KRaft: leaderships the controller moved off a replica whose directory is offline (handleDirectoriesOffline, an
    #: assignment to an offline directory)
    dir_leader_moves: int = 0

    QUIET_FIELDS: ClassVar[tuple] = ("alter_isr_failures", "fault_given_up", "leader_balances", "forged_answers",
                                     "forged_accepted", "expired_heartbeats", "config_changes",
                                     "config_unclean_elections", "log_dir_failures", "dir_leader_moves")


@record
class ClusterState(Node):
    """The whole model state at one logical time."""

    now: int
    brokers: tuple
    zk: ZooKeeper
    controllers: tuple                   # Controller instances, by broker id order
    ghost: Ghost
    #: the timestamp of each record, by record id - 1: the clock when its leader appended it (LogAppendTime; the
    #: producer's CreateTime is the same instant).  A batch reaches followers unchanged, so a record's timestamp
    #: is a function of its id and is kept once here rather than in every log; -1 (NO_TIMESTAMP) past the end.
    record_timestamps: tuple = ()
    #: KRaft (kip_500): the controller quorum and its metadata log; None in the ZooKeeper era
    quorum: Quorum | None = None

    def controller_partition_states(self) -> tuple:
        """The partition states the controller holds (ZooKeeper's znodes, or the quorum's registrations), by partition:
        each with ``leader``, ``leader_epoch``, ``isr`` and ``zk_version``, or None before the partition has one."""
        q = self.quorum
        if q is None:
            return self.zk.partition_states
        if () not in self.zk.assignment:
            return q.partitions
        return tuple(None if r.removed else r for r in q.partitions)     # deleted or not created: none, as in ZK

    def eligible(self, b: int) -> bool:
        """Whether the controller counts broker b alive: a live ZooKeeper session, or a registered, unfenced broker."""
        q = self.quorum
        if q is None:
            return self.zk.sessions[b]
        reg = q.registrations[b]
        return reg is not None and not reg.fenced

    def quorum_mut(self) -> Quorum:
        if self.quorum._tok is not self._tok:
            self.quorum = self.quorum._clone(self._tok)
        return self.quorum

    def broker_mut(self, b: int) -> Broker:
        br = self.brokers[b]
        if br._tok is not self._tok:
            br = br._clone(self._tok)
            self.brokers = replace_at(self.brokers, b, br)
        return br

    def zk_mut(self) -> ZooKeeper:
        if self.zk._tok is not self._tok:
            self.zk = self.zk._clone(self._tok)
        return self.zk

    def ghost_mut(self) -> Ghost:
        if self.ghost._tok is not self._tok:
            self.ghost = self.ghost._clone(self._tok)
        return self.ghost

    def controller_on(self, b: int):
        for c in self.controllers:
            if c.broker_id == b:
                return c
        return None

    def controller_mut(self, b: int) -> Controller:
        for i, c in enumerate(self.controllers):
            if c.broker_id == b:
                if c._tok is not self._tok:
                    c = c._clone(self._tok)
                    self.controllers = replace_at(self.controllers, i, c)
                return c
        raise KeyError(b)
