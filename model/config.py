"""ModelConfig: cluster shape, Kafka settings, fault budgets and protocol variants.

Every protocol variant is a flag named after the KIP or JIRA that introduced the
rule, so ``git grep kip_320`` finds every place a rule depends on it.  Named
presets pin a Kafka version (or one later fix switched off) together with the
outcome the preset is expected to have.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

TRUNCATION_MODES = ("hw", "kip101", "kip279")


#: the largest integer a config field may hold (about 31 years in ms)
MAX_CONFIG_INT = 10 ** 12


#: KRaft metadata versions (MetadataVersion, Kafka 3.7.0), oldest first: the model reads only whether a version is at
#: least 3.7-IV2 (isDirectoryAssignmentSupported, ``directory_assignment``)
METADATA_VERSIONS = ("3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0",
                     "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4")


def directory_assignment(cfg) -> bool:
    """MetadataVersion.isDirectoryAssignmentSupported (Kafka 3.7.0: 3.7-IV2 or later), with log directories modelled
    (``log_dirs``): registrations and partitions carry directories, AssignReplicasToDirs and offline directories are
    handled."""
    return cfg.log_dirs > 0 and METADATA_VERSIONS.index(cfg.metadata_version) >= METADATA_VERSIONS.index("3.7-IV2")


class ConfigError(ValueError):
    """An impossible or malformed configuration (reported in one line, exit 2)."""


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Everything a run depends on besides the seed; JSON-serialisable, hashable."""

    # --- cluster shape ---------------------------------------------------
    n_brokers: int = 3
    n_partitions: int = 1
    replication_factor: int = 3
    #: rack of each broker (rack-aware assignment) or empty for rack-unaware.
    racks: tuple[str, ...] = ()
    #: AdminUtils' startIndex / nextReplicaShift, fixed instead of random.
    assignment_start_index: int = 0
    assignment_replica_shift: int = 0

    # --- Kafka settings (KafkaConfig defaults of 2.4.0) --------------------
    replica_lag_time_max_ms: int = 10000
    min_insync_replicas: int = 1
    unclean_leader_election: bool = False
    #: an unclean crash loses the log suffix above the recovery point (flushed offset).
    crash_loses_unflushed_data: bool = False
    hw_checkpoint_interval_ms: int = 5000
    isr_propagation_interval_ms: int = 2500
    isr_change_blackout_ms: int = 5000
    isr_change_max_delay_ms: int = 60000
    produce_timeout_ms: int = 30000
    #: first run of each broker's isr-expiration task after start-up, per broker.
    isr_expiration_phase_ms: tuple[int, ...] = ()
    #: a scheduled task may run up to this late (0 = exactly on time).
    scheduler_jitter_ms: int = 0
    #: the logical clock's value in the initial state.  Kafka's clock is the wall clock, so a
    #: lastCaughtUpTimeMs of 0 (never) is always far in the past; the start must exceed the lag time.
    start_time_ms: int = 1_000_000

    # --- protocol variants (Appendix B of the reference) ------------------
    #: "hw": truncate to the HW on becoming follower (<= 0.10.2);
    #: "kip101": OffsetsForLeaderEpoch returning an end offset (0.11-1.1);
    #: "kip279": OffsetsForLeaderEpoch returning (epoch, end offset) (2.0+).
    truncation: str = "kip279"
    #: KIP-320 (2.1): currentLeaderEpoch in Fetch/OffsetsForLeaderEpoch, FENCED/UNKNOWN_LEADER_EPOCH.
    kip_320: bool = True
    #: KAFKA-7128 (2.1): ISR expansion also requires LEO >= leader-epoch start offset.
    kafka_7128: bool = True
    #: KAFKA-7415 (2.1): a new leader assigns (epoch, LEO) in its epoch cache at once.
    kafka_7415: bool = True
    #: KAFKA-7164 (2.1): makeFollower reports a change when the leader epoch changed.
    kafka_7164: bool = True
    #: KAFKA-6082 (2.1): controller ZK writes are conditional on the controller epoch zkVersion.
    kafka_6082: bool = True
    #: KAFKA-8400 (2.4): a fetch that read with an error does not update follower state.
    kafka_8400: bool = True
    #: KIP-380 (2.2): broker epochs; the controller detects a fast bounce and brokers refuse
    #: control requests carrying an older broker epoch (STALE_BROKER_EPOCH).
    kip_380: bool = True
    #: KIP-497 (2.7, IBP 2.7-IV2): the leader proposes ISR changes to the controller with AlterIsr, one change
    #: in flight per partition (PendingExpandIsr / PendingShrinkIsr), instead of writing ZooKeeper itself and
    #: announcing the change through isr_change_notification (off: the 2.4 protocol).
    kip_497: bool = False
    #: KAFKA-12686 (3.0.0): makeLeader / makeFollower no longer clear the partition's AlterIsr item
    #: (AlterIsrManager.clearPending), so an in-flight request's response cannot remove a newer item;
    #: a proposal the manager refuses reverts to the committed ISR.  Only with kip_497.
    kafka_12686: bool = True
    #: KAFKA-12751 (2.7.2, 2.8.1, 3.0.0): an AlterIsr success whose zkVersion equals the leader's (the
    #: controller found the proposed state already in place) commits instead of leaving the partition
    #: pending.  Only with kip_497.
    kafka_12751: bool = True
    #: KAFKA-13091 (3.1.0): the leader recomputes its HW when an AlterIsr response commits (a shrink can
    #: free it); before, only maybeShrinkIsr tried, while the shrink was still pending.  Only with kip_497.
    kafka_13091: bool = True
    #: KAFKA-14010 (3.3.0): AlterPartitionManager drops a partition's item before its callback runs, so a partition
    #: answered with an error it retries (UNKNOWN_SERVER_ERROR, ...) is sent again; before, the resubmission found the
    #: item still queued and was lost, leaving the partition pending until new metadata.  Only with kip_497.
    kafka_14010: bool = True
    #: The controller's partition-epoch check: an AlterIsr is written to ZooKeeper only if its zkVersion is
    #: the partition state's current one (KafkaZkClient.updateLeaderAndIsr's conditional write, answered
    #: INVALID_UPDATE_VERSION).  No JIRA: off is a mutant (an unconditional write), as the TLA+ specifications
    #: switch a `\* CHECK` off.  Only with kip_497.
    partition_epoch_check: bool = True
    #: KAFKA-10706 (2.8.0): Log.truncateTo trims the leader-epoch cache even when the truncation offset is at or
    #: above the LEO.  Without it a follower whose cache ends with an epoch that has no records, and whose leader
    #: never had that epoch, asks OffsetsForLeaderEpoch again and again without converging (a liveness bug).
    kafka_10706: bool = False
    #: KAFKA-10554 (2.8.0, IBP 2.7-IV1; KIP-595's Fetch v12): truncate on fetch.  A follower starts fetching at its
    #: LEO with lastFetchedEpoch (its log's latest epoch), the leader answers divergingEpoch when the follower's log
    #: diverges, and the follower truncates from that answer instead of an OffsetsForLeaderEpoch round (off: 2.4).
    kafka_10554: bool = False
    #: KAFKA-13141 (2.7.2, 2.8.1, 3.0.0): the leader does not record a follower's fetch offset (updateFollowerFetchState)
    #: when its fetch diverges.  Only with kafka_10554.
    kafka_13141: bool = True
    #: KAFKA-14704 (3.4.1, 3.5.0): with a diverging epoch the follower truncates first and skips the response's data
    #: and HW; before, it set its HW from the response, then truncated.  Only with kafka_10554.
    kafka_14704: bool = True

    #: KIP-500 / KIP-631 (KRaft, production-ready in 3.3.0): a quorum controller keeps brokers and partitions as
    #: records in a metadata log that brokers replay in order (ReplicaManager.applyDelta), brokers register and
    #: heartbeat and are fenced when their session expires; ZooKeeper and the ZooKeeper-era controller are gone.
    #: Needs kip_497 (ISR changes go to the quorum controller as AlterPartition).  The 3.x Partition.makeLeader /
    #: makeFollower (partition epochs) come with it.
    kip_500: bool = False
    #: broker.session.timeout.ms (KRaft): the controller fences a broker it has not heard from for longer
    broker_session_timeout_ms: int = 9000
    #: broker.heartbeat.interval.ms (KRaft): BrokerLifecycleManager's heartbeat period
    broker_heartbeat_interval_ms: int = 2000
    #: KAFKA-13916 (KIP-841, 3.3.0): a leader adds no fenced or shutting-down replica to the ISR
    #: (Partition.isReplicaIsrEligible), the controller answers such an AlterPartition INELIGIBLE_REPLICA and the
    #: leader reverts to its committed ISR.  Only with kip_500.
    kafka_13916: bool = True
    #: KIP-903 (KAFKA-14617, 3.5.0): a leader records the broker epoch of each follower's Fetch, admits a follower to
    #: the ISR only while that epoch is its metadata cache's, and sends each ISR member's epoch in AlterPartition;
    #: the controller answers a mismatch INELIGIBLE_REPLICA.  Only with kip_500.
    kip_903: bool = True
    #: KAFKA-15021 (3.6.0, metadata version 3.6-IV0): the controller no longer bumps the leader epoch when an ISR
    #: shrinks (PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded); before, every shrink did.  Only with kip_500.
    kafka_15021: bool = True
    #: KAFKA-15583 (KIP-966 part 1, 3.7.0): a leader advances its HW only while its committed ISR has at least
    #: min(min.insync.replicas, replication factor) members (Partition.isUnderMinIsr), and that effectiveMinIsr is
    #: also the acks=all checks' (appendRecordsToLeader, checkEnoughReplicasReachOffset).  Only with kip_500.
    kafka_15583: bool = True
    #: KIP-966 Eligible Leader Replicas (3.7.0 behind the eligible.leader.replicas.version feature, on by default for
    #: new clusters from 4.1.0): replicas that leave an ISR below min ISR join the partition's ELR (but one that shut
    #: down uncleanly, 3.9.0), the ISR may become empty, and a leaderless partition with an empty ISR elects from the
    #: ELR.  Only with kip_500.
    eligible_leader_replicas: bool = False
    #: KAFKA-19522 (4.1.0): with the ELR, the last known leader of a partition whose ISR and ELR are empty is elected
    #: only while it is an acceptable leader (unfenced, not shutting down); 3.8.0 to 4.0.1 elect it fenced or not.
    #: Only with eligible_leader_replicas.
    kafka_19522: bool = True
    #: KAFKA-12670 (3.9.0, apache/kafka#16866): the quorum controller reads unclean.leader.election.enable, the topic's
    #: dynamic value (``AlterTopicConfig``) else the static one; 3.3.0 to 3.8.x's
    #: ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic returns false whatever is set.  On by default so
    #: that the presets keep their elections (``kraft-unclean-election`` is thereby 3.9.0's); off is 3.7.0 exactly.
    #: Only with kip_500.
    kafka_12670: bool = True
    #: The leader's "follower LEO >= HW" condition for ISR entry (Partition.isFollowerInSync).  No JIRA: off is a
    #: mutant, as the TLA+ specification switches its ``\* CHECK`` off (an ISR join without the HW).
    isr_join_requires_hw: bool = True
    #: KAFKA-14140 (3.3.0), KIP-841's ZooKeeper-mode twin: with AlterIsr, the leader proposes only a follower its
    #: metadata cache holds alive (Partition.isReplicaIsrEligible's ZkMetadataCache.hasAliveBroker) and the controller
    #: answers INELIGIBLE_REPLICA to an ISR naming a broker outside its live, not-shutting-down brokers
    #: (KafkaController.processAlterPartition); the leader then reverts to its committed ISR (handleAlterPartitionError,
    #: shared with KAFKA-13916).  Off by default, as in every release before 3.3.0 and so that the ZooKeeper AlterIsr
    #: presets keep their walks: set it (with kip_497, kip_500 off) to get 3.3's ZooKeeper mode (preset alter-isr-kafka-14140).
    kafka_14140: bool = False
    #: KAFKA-15221 (3.7.0, apache/kafka#14053): Partition.updateFollowerFetchState updates the replica's fetch state under
    #: the partition's read lock, so no fetch lands between maybeExpandIsr's check and prepareIsrExpand, and the
    #: AlterPartition carries the broker epoch of the replica state that was checked.  Before (3.5.x, 3.6.x) a fetch of
    #: the follower's new incarnation could land there: the request then named its new broker epoch for a replica that
    #: is not caught up.  Matters with ``isr_expand_window``, and for the fix's fence of a Fetch whose broker epoch is
    #: older than the metadata cache's (Replica.updateFetchStateOrThrow), which only an earlier incarnation's meets.
    kafka_15221: bool = True
    #: The leader's ISR expansion in two steps: a follower's fetch decides it (maybeExpandIsr's checks), and
    #: ``PrepareIsrExpand`` builds the AlterPartition in a later step, as Kafka before KAFKA-15221 let a fetch land
    #: between them.  Off by default (the engines then draw what they drew before); set it with kip_500 to explore
    #: KAFKA-15221 (preset no-kafka-15221).  With kafka_15221 the check and the request stay one step.
    isr_expand_window: bool = False
    #: The pending-reset race's fix (a model finding, no JIRA): Partition.makeLeader, handed a partition state at the
    #: partition epoch it already holds while an ISR change is in flight (partitionState.isInflight), keeps that pending
    #: state instead of resetting it to the record's committed ISR (updateAssignmentAndIsr).  Off (Kafka 3.3 to 4.1, as
    #: read at those tags): the equal-epoch record drops the pending expansion, and the HW can pass the joining follower
    #: that the next record adds to the ISR.  Only with kip_500.
    make_leader_keeps_pending_isr: bool = False
    #: apache/kafka#12138 (3.3.0, a MINOR change without a JIRA): a partition that becomes follower clears its remote
    #: replica states (Partition.updateAssignmentAndIsr with isLeader = false); before, it kept them as 2.4 did.  No
    #: rule reads them on a follower, and a broker that leads again starts from fresh ones.  Only with kip_500.
    follower_clears_remote_replicas: bool = True
    #: KAFKA-13837 (3.3.0): a leader refuses a Fetch from a replica it does not hold in its replica set
    #: (Partition.followerReplicaOrThrow): UNKNOWN_LEADER_EPOCH when the request carries the current leader epoch,
    #: NOT_LEADER_OR_FOLLOWER otherwise; before, it answered with no records and no error, and the follower took the
    #: response's HW.  Only with kip_500.
    kafka_13837: bool = True

    # --- bounds and budgets (engines stop offering actions past them) -----
    max_records: int = 6
    max_crashes: int = 2
    max_session_expirations: int = 2
    max_controller_epoch: int = 4
    #: operator deletions of /controller (``ZkDeleteController``): the controller moves while its ZooKeeper
    #: session lives, the window in which a zombie controller still writes ZooKeeper (KAFKA-6082).
    max_controller_moves: int = 1
    max_flushes: int = 1000
    #: KRaft: disk replacements of a stopped broker (``DiskWipe``: it comes back with no log and no checkpoint)
    max_disk_wipes: int = 0
    #: AlterIsr / AlterPartition requests answered with an error no controller of the model gives (``AlterIsrFailed``:
    #: a network failure, a controller's internal error, a request found malformed); 0, the default, offers none
    max_alter_isr_failures: int = 0
    #: KRaft: AlterPartition requests no leader of the model sends, each invalid in one field, that the quorum
    #: controller must refuse (``AlterPartitionReceived``: a Kafka-compatible broker that does not follow the
    #: protocol); 0, the default, offers none
    max_forged_alter_partitions: int = 0
    #: KRaft: heartbeats that time out in the quorum controller's event queue (``ExpiredBrokerHeartbeat``); 0, the
    #: default, offers none
    max_expired_heartbeats: int = 0
    #: admin requests of a preferred-replica leader election (``PreferredReplicaElection``: kafka-preferred-replica-election
    #: writes /admin/preferred_replica_election, and ``ElectLeaders``; in KRaft ElectLeaders only, PREFERRED or
    #: UNCLEAN); 0, the default, offers none
    max_preferred_elections: int = 0
    #: clock tick sizes offered besides "up to the next scheduled deadline".
    tick_ms: tuple[int, ...] = (1000,)
    #: acks values offered for produce actions (any value is accepted by step).
    produce_acks: tuple[int, ...] = (-1, 1)
    #: the engines also offer ListOffsets requests (LATEST and EARLIEST, as a consumer with either isolation level
    #: and with the debugging replica id).  They only observe (``ghost.responses``), so by default the engines
    #: leave them out and draw what they drew before; ``step`` accepts them either way.
    list_offsets: bool = False
    #: KIP-392 (Kafka 2.4.0): consumers send ClientMetadata (Fetch v11+, ``client.rack``), so a follower may serve
    #: them; the engines then offer ``ConsumerFetchWithClientMetadata`` (``step`` accepts it either way)
    fetch_from_follower: bool = False
    #: ``replica.selector.class``: "" none (2.4.0's default), "rack-aware" (RackAwareReplicaSelector, KIP-392)
    replica_selector: str = ""
    #: the fetch purgatory (DelayedFetch, Kafka 2.4.0): the engines offer consumers' fetches that wait
    #: (``ConsumerFetchWait``: from the HW, fetch.min.bytes one record, fetch.max.wait.ms ``fetch_max_wait_ms``) and
    #: the expiry of parked ones (``DelayedFetchExpire``); set it to explore them (``step`` accepts a waiting fetch
    #: either way).  Off by default, so that the engines draw what they drew before.
    delayed_fetch: bool = False
    #: fetch.max.wait.ms of the waiting consumer fetches the engines offer (the consumer's default, 500)
    fetch_max_wait_ms: int = 500
    #: partition reassignments (KIP-455) an admin may start (``ReassignPartitions``), a budget like ``max_crashes``;
    #: set it above 0 to explore reassignments (the engines then offer targets of replication factor RF - 1, RF and
    #: RF + 1 brokers, and the ZooKeeper-era controller's reassignment events, or in KRaft the quorum controller's
    #: AlterPartitionReassignments and its cancel).  0 by default: the engines draw what they drew before.
    max_reassignments: int = 0
    #: the follower's OffsetsForLeaderEpoch request and its response are two steps (``OffsetsForLeaderEpochRequest``
    #: / ``OffsetsForLeaderEpochResponse``) instead of one round (``OffsetsForLeaderEpoch``), so a leader epoch can
    #: change while a request is in flight
    offsets_for_leader_epoch_in_flight: bool = False
    #: KAFKA-7786 (2.1.1, 2.2.0): a response to a request sent in another leader epoch than the fetch state's is
    #: dropped; without the fix it is applied (a stale FENCED_LEADER_EPOCH fails the partition)
    kafka_7786: bool = True
    #: controlled.shutdown.enable (ZooKeeper era): a broker asked to stop first sends ControlledShutdown to the
    #: controller, which moves its leaderships and takes it out of the ISRs, retrying up to
    #: ``controlled_shutdown_max_retries`` times (``ControlledShutdown`` / ``ControlledShutdownRequest`` /
    #: ``ControlledShutdownResponse``).  Kafka's default is true; the model's is false so that configurations from
    #: before it keep their walks: set it to get controlled shutdown (KRaft's ``ControlledShutdown`` is always on).
    controlled_shutdown_enable: bool = False
    #: controlled.shutdown.max.retries: ControlledShutdown attempts before the broker stops anyway
    controlled_shutdown_max_retries: int = 3
    #: auto.leader.rebalance.enable: the controller's auto-leader-rebalance-task (``AutoLeaderRebalance``, first run
    #: 5 s after failover, then every ``leader_imbalance_check_interval_ms``) elects preferred replicas of brokers
    #: whose leader imbalance exceeds ``leader_imbalance_per_broker_percentage``; in KRaft the quorum controller's
    #: leader balancing (``AutoLeaderRebalance(-1)``, scheduled ``leader_imbalance_check_interval_ms`` after a write
    #: that leaves a partition without its preferred leader) elects the preferred replica of every such partition.
    #: Kafka's default is true; the model's is false (as ``controlled_shutdown_enable``): set it to get the task.
    auto_leader_rebalance_enable: bool = False
    #: leader.imbalance.check.interval.seconds, in ms (Kafka's default 300 s)
    leader_imbalance_check_interval_ms: int = 300000
    #: leader.imbalance.per.broker.percentage (the ZooKeeper era's; KRaft's controller balances every partition)
    leader_imbalance_per_broker_percentage: int = 10
    #: DeleteRecords requests (``DeleteRecords``: the admin client's request to delete a partition's records up to its
    #: HW) the engines may offer; ``step`` refuses more.  0 (the default): none, and the log start offset moves only by
    #: full truncation and by following the leader.  Set it (with ``max_retention_runs``) to move the log start.
    max_delete_records: int = 0
    #: runs of the log-retention task on one log (``DeleteOldSegments``: Log.deleteOldSegments by size) the engines may
    #: offer; ``step`` refuses more.  0 (the default): none.
    max_retention_runs: int = 0
    #: retention.bytes, counted in records (one record per segment): a retention run deletes the oldest segments while
    #: the log holds more than this many records.  Read only by ``DeleteOldSegments``.
    retention_records: int = 0
    #: KAFKA-5634 (0.11.0.1): log retention deletes only segments wholly below the HW (Log.deletableSegments), so the log
    #: start offset never passes the HW; before, it could reach the LEO, and a follower told a log start above its HW
    #: failed (its fetcher thread died on the OffsetOutOfRangeException).
    kafka_5634: bool = True
    #: KAFKA-9491 (2.4.1): moving the log start (Log.updateLogStartOffset: truncateFullyAndStartAt,
    #: maybeIncrementLogStartOffset) raises the HW and the recovery point to it; in 2.4.0 a follower that truncated fully
    #: to its leader's log start kept a HW below it.  On in kafka-2.4 (the model has always had it).
    kafka_9491: bool = True
    #: KAFKA-2143 (0.9.0.1): after OFFSET_OUT_OF_RANGE, a follower whose LEO is not above the leader's fetches from
    #: max(leader start, LEO) and truncates fully only when its LEO is below the leader's start
    #: (AbstractFetcherThread.fetchOffsetAndTruncate); before, it truncated fully and fetched from the leader's start.
    #: The two differ only when a follower's fetch offset was past its leader's LEO and the leader appended up to it
    #: before the answer was handled, which needs a follower that missed its leader's truncation: unreachable with
    #: KIP-320's fencing (preset ``no-kafka-2143``, on kafka-0.10.2's settings, shows it).
    kafka_2143: bool = True
    #: partitions of topics whose log.message.format.version is below 0.11 (message format v1): their records carry no
    #: leader epoch, the leader-epoch cache stays empty (Log.leaderEpochCache is None), OffsetsForLeaderEpoch answers
    #: UNDEFINED_EPOCH_OFFSET and followers truncate to their HW, as before KIP-101.  Empty: every topic on v2.
    old_message_format_partitions: tuple[int, ...] = ()
    #: partitions of the topic that exist at the start (-1: all ``n_partitions``; 0: the topic does not exist yet).  The
    #: others are "not created" (no assignment in ZooKeeper) until an admin adds them (``CreateTopic`` /
    #: ``CreatePartitions``, AdminZkClient, Kafka 2.4.0), within ``max_partition_creations``.
    initial_partitions: int = -1
    #: admin topic creations and partition additions (``CreateTopic`` / ``CreatePartitions``) the engines may make; 0 (the
    #: default) offers none.  Set it (with ``initial_partitions``) to explore run-time creation and expansion (in KRaft
    #: the quorum controller's PartitionRecord, ReplicationControlManager.createPartitions, 3.7.0).
    max_partition_creations: int = 0
    #: log.dirs per broker in KRaft (KIP-858, JBOD): 0, the default, leaves log directories out of the model (no
    #: directory in registrations, partitions or brokers, as before); n >= 1 gives each broker n directories, which it
    #: registers, and with directory assignment (``metadata_version`` 3.7-IV2 or later) partition registrations carry
    #: each replica's directory, brokers report their new logs' directories (``AssignReplicasToDirs``) and a failed
    #: directory's partitions (``LogDirFailure``, within ``max_log_dir_failures``) in their heartbeats.  Only with kip_500.
    log_dirs: int = 0
    #: the cluster's metadata.version (KRaft; MetadataVersion, Kafka 3.7.0), read only by directory assignment
    #: (isDirectoryAssignmentSupported: 3.7-IV2 or later); the default is 3.7.0's LATEST_PRODUCTION, 3.7-IV4.
    metadata_version: str = "3.7-IV4"
    #: KRaft: log directories failing on a live broker (``LogDirFailure``: an I/O error takes a directory offline); 0,
    #: the default, offers none.  Needs ``log_dirs`` >= 2: a broker's last online directory does not fail (the broker
    #: halts then, LogManager.handleLogDirFailure, which ``BrokerCrash`` already is).
    max_log_dir_failures: int = 0
    #: admin topic deletions (``DeleteTopic``: /admin/delete_topics, TopicDeletionManager, Kafka 2.4.0) the engines may
    #: make; 0 (the default) offers none.  Set it to 1 to explore topic deletion and StopReplica to live brokers.  In
    #: KRaft (kip_500) the deletion is the quorum controller's RemoveTopicRecord (ReplicationControlManager, 3.7.0).
    max_topic_deletions: int = 0
    #: KRaft: the admin's IncrementalAlterConfigs of the topic's unclean.leader.election.enable (``AlterTopicConfig``,
    #: ConfigurationControlManager.incrementalAlterConfigs, Kafka 3.7.0) the engines may make; 0 (the default) offers
    #: none
    max_config_changes: int = 0
    #: KRaft: the admin's CreateTopics / CreatePartitions name no replicas and the quorum controller's replica placer
    #: places the new partition (StripedReplicaPlacer, simplified: model/README.md), refusing it with
    #: INVALID_REPLICATION_FACTOR as 3.7.0 does; off (the default) the admin sends the model's assignment as a manual
    #: one
    placed_creations: bool = False

    def __post_init__(self) -> None:
        errors = []
        if not 1 <= self.n_brokers <= 16:
            errors.append(f"n_brokers must be in 1..16, got {self.n_brokers}")
        if not 1 <= self.n_partitions <= 16:
            errors.append(f"n_partitions must be in 1..16, got {self.n_partitions}")
        if not 1 <= self.replication_factor <= self.n_brokers:
            errors.append(
                f"replication_factor must be in 1..n_brokers ({self.n_brokers}), got {self.replication_factor}"
            )
        if self.racks and len(self.racks) != self.n_brokers:
            errors.append(f"racks must name one rack per broker ({self.n_brokers}), got {len(self.racks)}")
        if self.replica_lag_time_max_ms < 2:
            errors.append("replica_lag_time_max_ms must be >= 2")
        if self.min_insync_replicas < 1:
            errors.append("min_insync_replicas must be >= 1")
        if self.isr_expiration_phase_ms and len(self.isr_expiration_phase_ms) != self.n_brokers:
            errors.append("isr_expiration_phase_ms must give one phase per broker")
        if any(p < 0 for p in self.isr_expiration_phase_ms):
            errors.append("isr_expiration_phase_ms must be >= 0")
        if self.isr_expand_window and not self.kip_500:
            errors.append("isr_expand_window (KAFKA-15221's race) needs kip_500: the broker epochs of KIP-903 are KRaft's")
        if self.log_dirs and not self.kip_500:
            errors.append("log_dirs (KIP-858 directory assignment) needs kip_500: log directories are KRaft's here")
        if self.log_dirs > 8:
            errors.append(f"log_dirs must be in 0..8, got {self.log_dirs}")
        if self.metadata_version not in METADATA_VERSIONS:
            errors.append(f"metadata_version must be one of {', '.join(METADATA_VERSIONS)}, got {self.metadata_version!r}")
        if self.max_log_dir_failures and self.log_dirs < 2:
            errors.append("max_log_dir_failures needs log_dirs >= 2: a broker's last online directory does not fail")
        if self.kip_500 and not self.kip_497:
            errors.append("kip_500 (KRaft) needs kip_497: ISR changes go to the quorum controller as AlterPartition")
        if self.broker_heartbeat_interval_ms < 1 or self.broker_session_timeout_ms <= self.broker_heartbeat_interval_ms:
            errors.append("broker_session_timeout_ms must exceed broker_heartbeat_interval_ms (>= 1)")
        if self.replica_selector not in ("", "rack-aware"):
            errors.append(f"replica_selector must be '' or 'rack-aware', got {self.replica_selector!r}")
        if self.truncation not in TRUNCATION_MODES:
            errors.append(f"truncation must be one of {', '.join(TRUNCATION_MODES)}, got {self.truncation!r}")
        for name in ("hw_checkpoint_interval_ms", "isr_propagation_interval_ms", "produce_timeout_ms"):
            if getattr(self, name) <= 0:
                errors.append(f"{name} must be > 0")
        if self.leader_imbalance_check_interval_ms <= 0:
            errors.append("leader_imbalance_check_interval_ms must be > 0")
        if self.leader_imbalance_per_broker_percentage > 100:
            errors.append("leader_imbalance_per_broker_percentage must be in 0..100")
        if self.start_time_ms <= self.replica_lag_time_max_ms:
            errors.append("start_time_ms must exceed replica_lag_time_max_ms (time 0 stands for 'never')")
        if self.scheduler_jitter_ms < 0:
            errors.append("scheduler_jitter_ms must be >= 0")
        if not self.tick_ms or any(t <= 0 for t in self.tick_ms):
            errors.append("tick_ms must be a non-empty list of positive integers")
        for name in ("max_records", "max_crashes", "max_session_expirations",
                     "max_controller_epoch", "max_controller_moves", "max_flushes", "max_disk_wipes", "max_alter_isr_failures",
                     "max_forged_alter_partitions", "max_expired_heartbeats", "max_log_dir_failures",
                     "max_delete_records", "max_retention_runs", "retention_records",
                     "max_partition_creations", "max_topic_deletions", "max_config_changes"):
            if getattr(self, name) < 0:
                errors.append(f"{name} must be >= 0")
        if not -1 <= self.initial_partitions <= self.n_partitions:
            errors.append(f"initial_partitions must be in -1..n_partitions ({self.n_partitions}), "
                          f"got {self.initial_partitions}")
        if any(a not in (-1, 0, 1) for a in self.produce_acks):
            errors.append(f"produce_acks must hold acks values -1, 0 or 1, got {self.produce_acks!r}")
        for f in dataclasses.fields(self):  # every count, offset and time: non-negative and of a sane size
            if f.name in ("produce_acks", "initial_partitions"):
                continue
            value = getattr(self, f.name)
            values = value if isinstance(value, tuple) else (value,)
            if any(isinstance(v, int) and not isinstance(v, bool) and not 0 <= v <= MAX_CONFIG_INT for v in values):
                errors.append(f"{f.name} must be in 0..{MAX_CONFIG_INT:,}, got {value!r}")
        bad = [p for p in self.old_message_format_partitions if not 0 <= p < self.n_partitions]
        if bad or len(set(self.old_message_format_partitions)) != len(self.old_message_format_partitions):
            errors.append(f"old_message_format_partitions must list distinct partitions in 0..{self.n_partitions - 1}, "
                          f"got {list(self.old_message_format_partitions)!r}")
        if errors:
            raise ConfigError("; ".join(errors))

    def records_have_epochs(self, p: int) -> bool:
        """Whether partition p's records carry leader epochs (message format v2, 0.11+; Log.leaderEpochCache defined)."""
        return p not in self.old_message_format_partitions

    @property
    def isr_expiration_period_ms(self) -> int:
        """ReplicaManager.startup: isr-expiration period is replicaLagTimeMaxMs / 2 (Kafka 2.4.0)."""
        return self.replica_lag_time_max_ms // 2

    def phase_of(self, broker: int) -> int:
        return self.isr_expiration_phase_ms[broker] if self.isr_expiration_phase_ms else 0

    def to_json(self) -> dict:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v)
                for f in dataclasses.fields(self)}

    def identity_json(self) -> dict:
        """``to_json`` without the fields added since traces were first archived while they keep their default:
        what a counterexample's digest (its archive name) is computed over, so that it does not change as the
        configuration grows."""
        data = self.to_json()
        for name in LATER_FIELDS:
            default = _DEFAULTS[name]
            if data[name] == (list(default) if isinstance(default, tuple) else default):
                del data[name]
        return data

    @classmethod
    def from_json(cls, data: object) -> "ModelConfig":
        if not isinstance(data, dict):
            raise ConfigError("config must be a JSON object")
        known = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ConfigError(f"unknown config field(s): {', '.join(unknown)}")
        kwargs = {}
        for name, value in data.items():
            default = known[name].default
            kwargs[name] = _coerce(name, value, default)
        return cls(**kwargs)

    def replace(self, **changes) -> "ModelConfig":
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise ConfigError(f"unknown config field(s): {', '.join(unknown)}")
        return dataclasses.replace(self, **changes)


#: Fields added after the first archived traces (KIP-497 and its fixes, the /controller deletion budget, truncate
#: on fetch and its fixes), in the order they were added.
LATER_FIELDS = ("kip_497", "kafka_12686", "kafka_12751", "kafka_13091", "partition_epoch_check",
                "max_controller_moves", "kafka_10706", "kafka_10554", "kafka_13141", "kafka_14704",
                "list_offsets", "fetch_from_follower", "replica_selector",
                "offsets_for_leader_epoch_in_flight", "kafka_7786", "kip_500", "broker_session_timeout_ms",
                "broker_heartbeat_interval_ms", "kafka_13916", "kafka_15021", "isr_join_requires_hw",
                "kafka_15583", "eligible_leader_replicas", "max_disk_wipes", "kip_903",
                "controlled_shutdown_enable", "controlled_shutdown_max_retries", "auto_leader_rebalance_enable",
                "leader_imbalance_check_interval_ms", "leader_imbalance_per_broker_percentage",
                "max_preferred_elections", "max_delete_records", "max_retention_runs", "retention_records", "kafka_5634", "kafka_9491", "kafka_2143",
                "old_message_format_partitions", "initial_partitions", "max_partition_creations", "max_topic_deletions")
LATER_FIELDS += ("delayed_fetch", "fetch_max_wait_ms", "max_reassignments")
LATER_FIELDS += ("kafka_14140", "kafka_15221", "isr_expand_window")
LATER_FIELDS += ("make_leader_keeps_pending_isr",)
LATER_FIELDS += ("kafka_19522",)
LATER_FIELDS += ("kafka_14010", "max_alter_isr_failures")
LATER_FIELDS += ("follower_clears_remote_replicas", "kafka_13837")
LATER_FIELDS += ("max_forged_alter_partitions", "max_expired_heartbeats")
LATER_FIELDS += ("kafka_12670", "max_config_changes", "placed_creations")
LATER_FIELDS += ("log_dirs", "metadata_version", "max_log_dir_failures")
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(ModelConfig)}


def _coerce(name: str, value: object, default: object) -> object:
    """Check a JSON value against the type of the field's default."""
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"config field {name} must be true or false, got {value!r}")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"config field {name} must be an integer, got {value!r}")
        return value
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ConfigError(f"config field {name} must be a string, got {value!r}")
        return value
    if isinstance(default, tuple):
        if not isinstance(value, list):
            raise ConfigError(f"config field {name} must be a list, got {value!r}")
        for item in value:
            if name == "racks":
                if not isinstance(item, str):
                    raise ConfigError(f"config field {name} must list strings")
            elif isinstance(item, bool) or not isinstance(item, int):
                raise ConfigError(f"config field {name} must list integers")
        return tuple(value)
    raise ConfigError(f"config field {name} has an unsupported type")  # pragma: no cover


@dataclass(frozen=True, slots=True)
class Preset:
    """A named configuration with the outcome it is expected to have."""

    name: str
    config: ModelConfig
    #: "pass", or the name of the invariant a fuzzer is expected to see violated (the headline bug).
    expected: str
    description: str
    #: the fix this preset switches off, or the Kafka version it pins.
    reference: str = ""
    #: the known bugs (model/bugs.toml ids) a campaign on this preset is expected to find, the headline's first;
    #: empty for a preset expected to pass.
    bugs: tuple = ()

    @property
    def known_bugs(self) -> tuple:
        """Every known bug the preset's configuration contains (model/bugs.py ``present``), expected or not."""
        from .bugs import present

        return present(self.config)

    @property
    def breaks(self) -> tuple:
        """The invariants a violation may break and still be one of the preset's known bugs: its headline first, then
        what its known bugs may break.  Only a violation a known bug's fix removes counts as that bug
        (properties/attribution.py); this is what the engines may look past, never an exemption."""
        out = [] if self.expected == "pass" else [self.expected]
        for b in self.known_bugs:
            out += [x for x in b.breaks if x not in out]
        return tuple(out)


_BASE = ModelConfig()

#: Kafka 0.10.2: truncate to HW on becoming follower, none of the 2.1 fixes.
#: Kafka 2.7 with ZooKeeper: AlterIsr (IBP 2.7-IV2) and the 2.5+ default replica.lag.time.max.ms (KIP-537).
#: 2.7.0's leader already answers a Fetch's lastFetchedEpoch (KIP-595, for Raft), but its ReplicaFetcherThread sends
#: none: followers truncate on fetch from 2.8.0 (KAFKA-10554), so the 2.7 presets keep OffsetsForLeaderEpoch.
_ALTER_ISR = _BASE.replace(kip_497=True, replica_lag_time_max_ms=30000)
#: 2.7.0 as released: none of the AlterIsr fixes (KAFKA-12751 came in 2.7.2, KAFKA-12686 in 3.0.0,
#: KAFKA-13091 in 3.1.0).  KAFKA-14010 (3.3.0) is left at its default: it changes nothing without the AlterIsrFailed
#: fault, which these presets do not offer (a user preset that adds it to them sets kafka_14010 = false).
_KAFKA_270 = dict(kafka_12686=False, kafka_12751=False, kafka_13091=False)
#: AlterIsr and truncate on fetch (KAFKA-10554, 2.8.0) with every fix the model has (KAFKA-13141 in 2.7.2/2.8.1/3.0.0,
#: KAFKA-14704 in 3.4.1/3.5.0): the base of the truncate-on-fetch fix-off presets.
_TRUNCATE_ON_FETCH = _ALTER_ISR.replace(kafka_10554=True)

#: kafka-2.4 with the OffsetsForLeaderEpoch round in two steps, and KAFKA-10706's fix (2.8.0) so that the only
#: liveness break left is the one a preset switches on.
_EPOCH_ROUNDS = _BASE.replace(offsets_for_leader_epoch_in_flight=True, kafka_10706=True)

#: KRaft (KIP-500, KIP-631) with AlterPartition, truncate on fetch and every fix the model has through 3.6: KAFKA-10706
#: (2.8.0), KAFKA-13141 (3.0.0), KIP-841 (3.3.0), KAFKA-14704 (3.4.1), KAFKA-15021 (3.6.0).
_KRAFT = _TRUNCATE_ON_FETCH.replace(kip_500=True, kafka_10706=True, kafka_15583=False)
#: 3.7's KAFKA-15583 on top (KIP-966 part 1; the ELR stays off): the base of the KRaft fix-off presets.
_KRAFT_37 = _KRAFT.replace(kafka_15583=True)

#: kafka-2.4 where log start offsets move: two DeleteRecords requests (to the HW) and two runs of size retention keeping
#: one record (the budgets a user sets to get ``DeleteRecords`` and ``DeleteOldSegments``).
_LOG_START = _BASE.replace(max_delete_records=2, max_retention_runs=2, retention_records=1)

_PRE_21 = dict(kip_320=False, kafka_7128=False, kafka_7415=False, kafka_7164=False, kafka_6082=False,
               kip_380=False)

PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("kafka-2.4", _BASE, "pass",
               "Kafka 2.4.0 as in the seed articles: KIP-101/279 epoch truncation, KIP-320 fencing, "
               "KAFKA-7128/7415/7164/6082/8400 in, clean elections only. Safe; but KAFKA-10706 (fixed in "
               "November 2020) is not in: after back-to-back elections without appends a follower can ask "
               "OffsetsForLeaderEpoch again and again without converging (the liveness property truncation_completes).",
               "2.4.0"),
        Preset("fetch-from-follower", _BASE.replace(fetch_from_follower=True, replica_selector="rack-aware",
                                                    racks=("rack-a", "rack-b", "rack-c")), "pass",
               "kafka-2.4 with KIP-392 (2.4.0): consumers send ClientMetadata with a client.rack, so followers serve "
               "them up to their own HW, and the leader's RackAwareReplicaSelector points a consumer in another "
               "broker's rack at that replica. Safe: a follower's HW is committed, so nothing a consumer reads "
               "from a follower is later lost.", "2.4.0, KIP-392"),
        Preset("delayed-fetch", _BASE.replace(delayed_fetch=True), "pass",
               "kafka-2.4 with the fetch purgatory (DelayedFetch, 2.4.0): caught-up consumers wait for a record up to "
               "fetch.max.wait.ms; a parked fetch completes when the HW passes its offset, when the broker stops "
               "leading (becoming follower, StopReplica), or at its timeout (with fetch_from_follower too, KIP-392 "
               "consumers wait at followers). Safe: a parked fetch answers only what a fresh one would.",
               "2.4.0, DelayedFetch"),
        Preset("reassignment", _BASE.replace(max_reassignments=1), "pass",
               "kafka-2.4 with one partition reassignment (KIP-455, 2.4.0): an admin writes /admin/reassign_partitions "
               "with a target of RF - 1, RF or RF + 1 brokers; the controller adds the new replicas (RS = TRS + ORS, "
               "a new leader epoch), waits until the targets are in the ISR, moves leadership into them "
               "(reassignPartitionLeaderElection), takes the removed replicas out of the ISR and deletes them. Safe.",
               "2.4.0, KIP-455"),
        Preset("epoch-requests-in-flight", _EPOCH_ROUNDS, "pass",
               "kafka-2.4 with the follower's OffsetsForLeaderEpoch request and its response as two steps, so a "
               "LeaderAndIsr can change the fetch state's leader epoch while a request is in flight; KAFKA-7786's fix "
               "(2.1.1) drops an answer to a request of another epoch. With KAFKA-10706's fix too, so that kafka-2.4's "
               "own liveness break (a follower asking OffsetsForLeaderEpoch forever) does not hide KAFKA-7786's.",
               "2.4.0, KAFKA-7786"),
        Preset("no-kafka-7786", _EPOCH_ROUNDS.replace(kafka_7786=False),
               "follower_keeps_fetching",
               "KAFKA-7786 off (Kafka 2.1.0): an OffsetsForLeaderEpoch answer to a request sent in the previous leader "
               "epoch is applied to the new epoch's fetch state. When the leader had already moved on it answered "
               "FENCED_LEADER_EPOCH, so the follower marks the partition failed and stops fetching it until the next "
               "LeaderAndIsr (a liveness bug: fetching stalls, follower_keeps_fetching).",
               "KAFKA-7786, fixed in 2.1.1 and 2.2.0"),
        Preset("kafka-0.10.2", _BASE.replace(truncation="hw", **_PRE_21), "acked_durability",
               "Truncate to the (lagging) HW on becoming follower: an acknowledged record is lost when "
               "the follower that truncated it is elected (KIP-101 scenario 1). Before that, the ISR member "
               "that truncated below the leader's HW already breaks the committed prefix, and replicas' logs "
               "can diverge (KIP-101 scenario 2: the fuzzer's trace diverges with KIP-320 switched on as well).",
               "0.10.2.0, KIP-101"),
        Preset("kafka-0.11", _BASE.replace(truncation="kip101", **_PRE_21), "isr_entry_condition",
               "KIP-101 epochs without KIP-279 and the 2.1 fixes: a follower rejoins the ISR below the new "
               "leader's epoch start offset (KAFKA-7128). After fast leader failovers the logs also diverge "
               "(KIP-279): a follower asking for an epoch its new leader never had is told the start of the "
               "leader's next epoch and keeps records the leader does not have below it. KIP-320 is not in "
               "0.11 either, so KAFKA-6880's divergence and data loss (see no-kip-320) are reachable.",
               "0.11.0, KAFKA-7128, KIP-279"),
        Preset("kafka-2.0", _BASE.replace(**_PRE_21), "isr_entry_condition",
               "KIP-279 truncation without the 2.1 fixes: a lagging new leader's HW lets a follower rejoin "
               "the ISR without its leader epoch's records (KAFKA-7128). KIP-320 is not in 2.0 either, so "
               "KAFKA-6880's divergence and data loss (see no-kip-320) are reachable.", "2.0.0, KAFKA-7128"),
        Preset("no-kafka-7128", _BASE.replace(kafka_7128=False), "isr_entry_condition",
               "KAFKA-7128 off: a follower rejoins the ISR below the new leader's epoch start offset (only "
               "LEO >= a lagging HW is required). Electing it can lose acknowledged records, but that needs "
               "four replicas (the new leader's HW stays frozen only while another ISR member has not fetched).",
               "KAFKA-7128"),
        Preset("no-kafka-7415", _BASE.replace(kafka_7415=False), "hw_within_isr",
               "KAFKA-7415 off: the new leader's epoch is only cached at its first append. Until then it "
               "answers an OffsetsForLeaderEpoch for a later epoch than its cache knows with UNDEFINED, and "
               "the follower falls back to truncating to its own HW, below committed records it held: a "
               "broker that still leads an older epoch keeps it in its ISR with an LEO below its HW. That "
               "follower is in ZooKeeper's ISR too: elected later, it loses the acknowledged records it "
               "truncated, which a consumer may have read.",
               "KAFKA-7415"),
        Preset("no-kafka-7164", _BASE.replace(kafka_7164=False, kip_320=False), "log_matching",
               "KAFKA-7164 off: a follower that sees a new epoch of the same leader skips truncation and "
               "appends the new epoch's records on top of records the leader truncated. KIP-320, which "
               "subsumes the fix, is off too, so KAFKA-6880's divergence and data loss (see no-kip-320) are "
               "reachable as well.",
               "KAFKA-7164"),
        Preset("no-kip-320", _BASE.replace(kip_320=False), "log_matching",
               "KIP-320 off: fetches carry no current leader epoch, so nothing is fenced by epoch. A follower "
               "cut off from the controller (its ZooKeeper session expired) keeps fetching from a broker that "
               "has since truncated and leads again in a later epoch, and appends that epoch's records on top "
               "of records the leader no longer has: the logs diverge (KAFKA-6880, KIP-320's motivation). "
               "Once the leader takes it back into the ISR the committed prefix breaks as well; the HW then "
               "counts a record that follower does not have, so electing it loses an acknowledged write "
               "(KAFKA-6880's data loss) that a consumer may have read, and when it finally truncates, an "
               "ISR member's LEO is below the leader's HW.",
               "KIP-320, KAFKA-6880"),
        Preset("no-kafka-6082", _BASE.replace(kafka_6082=False), "stale_controller_write_refused",
               "KAFKA-6082 off: a controller's ZooKeeper writes check only the partition znode's version, not "
               "/controller_epoch's. When /controller is deleted while its controller's session lives (an operator "
               "moving the controller), the old controller keeps handling the events queued before it notices: a "
               "broker change makes it elect a leader or shrink an ISR in ZooKeeper after the new controller took "
               "over. Its LeaderAndIsr carries the old controller epoch, which brokers that heard from the new "
               "controller refuse, and the new controller, which reads a live leader in ZooKeeper, sends none: the "
               "leader ZooKeeper names never learns it leads, and the partition stays without a leader (the liveness "
               "property partition_has_leader). No acknowledged write is lost and no epoch goes back: elections read "
               "ZooKeeper and write with its version, and brokers refuse the old controller epoch.",
               "KAFKA-6082"),
        Preset("leader-moves", _BASE.replace(controlled_shutdown_enable=True, auto_leader_rebalance_enable=True,
                                             leader_imbalance_check_interval_ms=10000, max_preferred_elections=1),
               "pass",
               "kafka-2.4 with the leader moves an operator makes: controlled shutdown (controlled.shutdown.enable, "
               "the leaders of a stopping broker move first, KafkaController.doControlledShutdown), an admin's "
               "preferred-replica election (/admin/preferred_replica_election) and the auto-leader-rebalance-task "
               "(auto.leader.rebalance.enable, checked every 10 s here instead of 300 s). Safe: every election picks "
               "an ISR member.", "2.4.0"),
        Preset("no-kip-380", _BASE.replace(kip_380=False), "pass",
               "KIP-380 off: no broker epochs, so the controller misses a fast bounce and a restarted broker "
               "accepts requests queued for its previous incarnation: a leader bounced unnoticed may never learn it "
               "leads again (the liveness property partition_has_leader), and, found by isrlab explore (22 actions at 2 brokers, "
               "tests/fixtures/), a restarted broker whose controller epoch starts again at 0 takes a deposed "
               "controller's stale LeaderAndIsr and leads an older epoch with an ISR member below its HW "
               "(hw_within_isr, then leader_isr_covers_controller_isr and committed_prefix). No fuzzer has met it, so "
               "the preset keeps its 'pass' headline with these as known breaks.", "KIP-380"),
        Preset("unclean-election", _BASE.replace(unclean_leader_election=True), "pass",
               "unclean.leader.election.enable=true: an out-of-sync replica may be elected. The records that "
               "election loses (acknowledged or read in an older epoch, missing from the elected replica's log when "
               "it takes over) are reported as a documented loss (unclean_loss, with the election and its records), "
               "not a violation; every other record, and every later loss, is still checked.",
               "unclean.leader.election.enable"),
        Preset("min-isr-2", _BASE.replace(min_insync_replicas=2), "pass",
               "min.insync.replicas=2 with RF 3: acks=all needs two in-sync replicas.", "min.insync.replicas"),
        Preset("lag-30000", _BASE.replace(replica_lag_time_max_ms=30000), "pass",
               "replica.lag.time.max.ms=30000, the 2.5+ default (KIP-537).", "KIP-537"),
        Preset("crash-loses-unflushed", _BASE.replace(crash_loses_unflushed_data=True), "acked_durability",
               "Unclean crashes lose the unflushed log suffix: with min.insync.replicas=1 two crashes "
               "lose an acknowledged record (KIP-101 scenario 2, KIP-966); a consumer may already have read "
               "it. A leader that lost its unflushed suffix and leads again in the same epoch (a controller "
               "failover re-sends the epoch ZooKeeper holds) writes other records at the same offsets under "
               "the same epoch as its followers' copies, so the logs stop matching too.",
               "KIP-966"),
        Preset("kafka-2.7", _ALTER_ISR.replace(**_KAFKA_270), "hw_advanced_on_isr_shrink",
               "Kafka 2.7.0 with ZooKeeper: ISR changes go to the controller as AlterIsr (KIP-497), one per "
               "partition in flight, the HW counting a pending expansion (the maximal ISR); "
               "replica.lag.time.max.ms=30000. Without the later AlterIsr fixes: a committed shrink leaves the "
               "HW where the removed follower held it (KAFKA-13091), and a LeaderAndIsr that comes while an "
               "AlterIsr is in flight can leave the partition pending for good (KAFKA-12686). Both are liveness "
               "bugs, found as the states they leave behind (see no-kafka-13091 and no-kafka-12686).",
               "2.7.0, KIP-497"),
        Preset("alter-isr", _ALTER_ISR, "pass",
               "AlterIsr with ZooKeeper and every AlterIsr fix of the ZooKeeper era (KAFKA-12686, KAFKA-12751 "
               "and KAFKA-13091, as in 3.1.0's ZooKeeper mode): the base of the AlterIsr fix-off presets.",
               "KIP-497, 3.1.0 (ZooKeeper mode)"),
        Preset("no-kafka-12686", _ALTER_ISR.replace(kafka_12686=False), "pending_isr_in_flight",
               "KAFKA-12686 off: makeLeader clears the partition's AlterIsr item (clearPending) while its request "
               "is in flight; the leader proposes again, and the old request's response, handled against the "
               "new proposal, removes the new item, which is never sent: the partition stays pending, and no "
               "ISR change can be made, until the next leader epoch. A liveness bug, caught as the stuck state.",
               "KAFKA-12686"),
        Preset("no-kafka-14010", _ALTER_ISR.replace(kafka_14010=False, max_alter_isr_failures=1), "pending_isr_in_flight",
               "KAFKA-14010 off, with one AlterIsr answered UNKNOWN_SERVER_ERROR (the AlterIsrFailed fault): the "
               "partition's callback submits its change again while the manager still holds the item, so the "
               "resubmission is refused, and the item then goes: the partition stays pending with nothing to send "
               "until the next leader epoch. A liveness bug of 2.7.0-3.2, caught as the stuck state.",
               "KAFKA-14010"),
        Preset("no-kafka-12751", _ALTER_ISR.replace(kafka_12751=False), "pass",
               "KAFKA-12751 off: an AlterIsr success carrying the leader's own zkVersion (the controller found "
               "the proposed state in place and wrote nothing) is ignored and the partition stays pending. "
               "Unreachable in this ZooKeeper-era model: a leader's ISR and zkVersion are always a pair "
               "ZooKeeper held, and the controller's own ISR changes bump the leader epoch.",
               "KAFKA-12751"),
        Preset("no-kafka-13091", _ALTER_ISR.replace(kafka_13091=False), "hw_advanced_on_isr_shrink",
               "KAFKA-13091 off: the HW is not recomputed when an AlterIsr shrink commits, so a HW held "
               "back by the removed follower stays below what the new ISR allows (until an append or a follower "
               "fetch moves it; with that follower dead and no more appends, for good). A liveness bug, caught "
               "at the commit.",
               "KAFKA-13091"),
        Preset("no-partition-epoch-check", _ALTER_ISR.replace(partition_epoch_check=False), "pass",
               "The controller writes an AlterIsr's ISR whatever the request's zkVersion (no conditional write, "
               "no INVALID_UPDATE_VERSION). Unreachable in this ZooKeeper-era model: every ISR change the "
               "controller makes itself bumps the leader epoch, so a stale AlterIsr is fenced by its epoch first.",
               "KIP-497 partition epoch"),
        Preset("kafka-2.8", _TRUNCATE_ON_FETCH.replace(kafka_13141=False, kafka_14704=False, **_KAFKA_270),
               "hw_advanced_on_isr_shrink",
               "Kafka 2.8.0 with ZooKeeper: kafka-2.7's AlterIsr (none of its fixes: KAFKA-12751 came in 2.8.1) and "
               "truncate on fetch (KAFKA-10554): followers fetch from their LEO with lastFetchedEpoch and truncate "
               "from the leader's divergingEpoch, without KAFKA-13141 (2.8.1) or KAFKA-14704 (3.4.1).",
               "2.8.0, KAFKA-10554"),
        Preset("truncate-on-fetch", _TRUNCATE_ON_FETCH, "pass",
               "alter-isr with truncate on fetch (KAFKA-10554, 2.8.0) and its fixes KAFKA-13141 (2.8.1, 3.0.0) and "
               "KAFKA-14704 (3.4.1, 3.5.0), as in 3.5.0's ZooKeeper mode: the base of the truncate-on-fetch fix-off "
               "presets.", "KAFKA-10554, 3.5.0 (ZooKeeper mode)"),
        Preset("no-kafka-13141", _TRUNCATE_ON_FETCH.replace(kafka_13141=False), "committed_prefix",
               "KAFKA-13141 off: the leader records a follower's fetch offset even when the fetch diverges, so an ISR "
               "member's records above the diverging epoch's end count toward the HW (or take that follower into "
               "the ISR): the HW passes offsets where that follower holds other records, and once it truncates, "
               "its LEO is below the HW. Electing it then loses an acknowledged write that a consumer may have "
               "read, and the other followers' HWs cover records the new leader lacks.",
               "KAFKA-13141"),
        Preset("no-kafka-14704", _TRUNCATE_ON_FETCH.replace(kafka_14704=False), "follower_hw_committed",
               "KAFKA-14704 off: a follower whose log diverges sets its HW from the leader's diverging response "
               "before it truncates, so its HW covers records the leader does not have (uncommitted records exposed "
               "below a HW) until the truncation.",
               "KAFKA-14704"),
        Preset("kafka-3.3", _KRAFT.replace(kafka_14704=False, kafka_15021=False, kip_903=False), "follower_hw_committed",
               "Kafka 3.3.0 in KRaft mode: the quorum controller and its metadata log, broker registration, heartbeats "
               "and fencing, AlterPartition, KIP-841's eligibility checks; every ISR shrink bumps the leader epoch "
               "(before KAFKA-15021), and KAFKA-14704 (3.4.1) is not in: a diverging follower takes the leader's HW "
               "before it truncates.", "3.3.0, KIP-500, KIP-631, KIP-841"),
        Preset("kafka-3.5", _KRAFT.replace(kafka_15021=False), "pass",
               "Kafka 3.5.0 in KRaft mode: kafka-3.3 with KAFKA-14704 and KIP-903 (broker epochs in Fetch and in "
               "AlterPartition's ISR entries).", "3.5.0, KIP-903"),
        Preset("kafka-3.6", _KRAFT, "pass",
               "Kafka 3.6.0 in KRaft mode: kafka-3.5 with KAFKA-15021 (an ISR shrink keeps the leader epoch; only a "
               "leader change bumps it).", "3.6.0, KAFKA-15021"),
        Preset("no-kafka-13916", _KRAFT_37.replace(kafka_13916=False), "isr_members_eligible",
               "KIP-841 off (KAFKA-13916, Kafka 3.2): the leader proposes, and the controller accepts, a fenced replica "
               "into the ISR. A broker fenced for missed heartbeats goes on fetching; once it catches up the leader "
               "adds it back, and the ISR counts a broker the controller holds dead (a leader election cannot pick it, "
               "yet acks=all and min.insync.replicas count it).", "KAFKA-13916, KIP-841"),
        Preset("kraft-no-partition-epoch-check", _KRAFT_37.replace(partition_epoch_check=False),
               "leader_isr_covers_controller_isr",
               "The quorum controller's partition-epoch check off (ReplicationControlManager.validateAlterPartitionData "
               "without INVALID_UPDATE_VERSION): an AlterPartition built on an older ISR is applied. A follower fenced "
               "and unfenced while the leader's expansion waits to be sent comes back into the controller's ISR from "
               "that stale request, though the leader, which replayed the fence, no longer counts it.",
               "KIP-497 partition epoch, KRaft"),
        Preset("kafka-3.7", _KRAFT_37, "pass",
               "Kafka 3.7.0 in KRaft mode: kafka-3.6 with KAFKA-15583 (KIP-966 part 1): a leader's HW advances only "
               "while its ISR has min(min.insync.replicas, RF) members. Eligible Leader Replicas are behind a feature "
               "that 3.7 leaves off.", "3.7.0, KAFKA-15583"),
        Preset("kraft-forged-alter-partition", _KRAFT_37.replace(max_forged_alter_partitions=2), "pass",
               "kafka-3.7 with up to two AlterPartition requests no leader of the model sends (AlterPartitionReceived, "
               "a Kafka-compatible broker that does not follow the protocol), each the leader's request wrong in one "
               "field: another sender, a stale broker epoch, a leader or partition epoch one off, an ISR with a "
               "non-replica, without the leader, with the leader twice or with a replica not active, a recovery state "
               "KIP-704 forbids. The controller refuses each (ReplicationControlManager.validateAlterPartitionData, "
               "3.7.0) and writes nothing. Safe.", "3.7.0, testInvalidAlterPartitionRequests"),
        Preset("kafka-4.0", _KRAFT_37, "pass",
               "Kafka 4.0.0: KRaft only (ZooKeeper removed), replication as kafka-3.7; the ELR feature is available "
               "but off by default.", "4.0.0"),
        Preset("kafka-4.1", _KRAFT_37.replace(eligible_leader_replicas=True), "pass",
               "Kafka 4.1.0: kafka-4.0 with Eligible Leader Replicas on (the default for new clusters): replicas that "
               "leave an ISR below min ISR join the ELR unless they shut down uncleanly, the ISR may become empty, and "
               "a leaderless partition elects from the ELR or, with the ISR and ELR both empty, uncleanly its last known "
               "leader (RECOVERING), once it is unfenced (KAFKA-19522).", "4.1.0, KIP-966"),
        Preset("no-kafka-19522", _KRAFT_37.replace(eligible_leader_replicas=True, kafka_19522=False),
               "min_isr_recovery_quorum",
               "kafka-4.1 with KAFKA-19522 off (Kafka 4.0 with the ELR on): with the ISR and ELR both empty, the "
               "partition's last known leader is elected even while fenced: a broker that restarted without a clean "
               "shutdown leads again at its registration, and its next unclean restart takes it out of the ISR with no "
               "ELR or last known leader left to recover the partition from.", "KAFKA-19522, apache/kafka#20200"),
        Preset("kraft-elect-leaders", _KRAFT_37.replace(eligible_leader_replicas=True, max_preferred_elections=1),
               "pass",
               "kafka-4.1 with an admin's ElectLeaders (KIP-460) forwarded to the quorum controller, PREFERRED or "
               "UNCLEAN (ReplicationControlManager.electLeaders): a preferred election moves leadership only to an "
               "active ISR member, an unclean one elects only a leaderless partition, its ISR the new leader alone "
               "(RECOVERING, KIP-704) and its ELR cleared; the unclean election may lose acknowledged records, which "
               "the loss ledger counts as the unclean election's, not as a protocol bug.", "3.7.0, KIP-460"),
        Preset("kraft-reassignment", _KRAFT_37.replace(eligible_leader_replicas=True, max_reassignments=1,
                                                    n_brokers=3, replication_factor=2),
               "pass",
               "kafka-4.1 with 3 brokers, RF 2 and one partition reassignment (KIP-455) through the quorum controller "
               "(ReplicationControlManager.alterPartitionReassignments, 3.7.0): the record adds the target replicas to "
               "the replicas as adding, and removing ones; an adding broker creates its log and follows; the "
               "AlterPartition that brings every adding replica into the ISR completes it (the removing replicas "
               "leave the replicas and the ISR, the leader moves into the target if it is removed, the leader epoch "
               "is bumped) and each removed broker stops and deletes its replica; a cancel reverts to the original "
               "replicas. Safe.", "3.7.0, KIP-455"),
        Preset("kraft-leader-balance", _KRAFT_37.replace(auto_leader_rebalance_enable=True,
                                                      leader_imbalance_check_interval_ms=10000),
               "pass",
               "kafka-3.7 with the quorum controller's leader balancing (auto.leader.rebalance.enable, checked every "
               "10 s here instead of 300 s; QuorumController.maybeBalancePartitionLeaders): a run is scheduled after "
               "any controller write that leaves a partition led by another replica than its preferred one, and "
               "elects the preferred replica of each such partition when it is an active ISR member, with the "
               "PREFERRED election (never unclean). Safe: every election picks an ISR member.", "3.7.0"),
        Preset("kraft-delete-topic", _KRAFT_37.replace(eligible_leader_replicas=True, max_topic_deletions=1), "pass",
               "kafka-4.1 with one topic deletion through the quorum controller (ReplicationControlManager.deleteTopics, "
               "3.7.0): a RemoveTopicRecord drops the partitions' registrations with their ELR and last known leader; "
               "each replica stops its fetcher and deletes its log when it replays the record (ReplicaManager.applyDelta"
               "'s deletes), and an AlterPartition still on its way is answered UNKNOWN_TOPIC_ID, which its leader "
               "does not retry. The deleted topic's records are given up on purpose. Safe.", "3.7.0, KIP-500"),
        Preset("kafka-4.1-min-isr-2", _KRAFT_37.replace(eligible_leader_replicas=True, min_insync_replicas=2), "pass",
               "kafka-4.1 with min.insync.replicas=2 (with RF 3, the setting the ELR is meant for): a replica that leaves "
               "an ISR of two joins the ELR, and the HW stays while the ISR is below two.", "4.1.0, KIP-966"),
        Preset("no-kafka-15583", _KRAFT_37.replace(eligible_leader_replicas=True, kafka_15583=False,
                                                min_insync_replicas=2), "committed_prefix",
               "kafka-4.1 with min.insync.replicas=2 and KAFKA-15583 off: a leader alone in its ISR advances the HW, "
               "so a replica that left the ISR for the ELR lacks records below it, yet may be elected from the ELR (then a "
               "record a consumer read, or an acknowledged one, is lost).",
               "KAFKA-15583, KIP-966"),
        Preset("kafka-3.7-lossy-crash", _KRAFT_37.replace(crash_loses_unflushed_data=True, min_insync_replicas=2),
               "acked_durability",
               "kafka-3.7 with min.insync.replicas=2 and crashes that lose the unflushed log suffix: the last replica "
               "standing in the ISR crashes uncleanly, comes back without records acknowledged to acks=all and is "
               "elected from the ISR it never left (KIP-966's motivation; the TLA+ specification's 'last replica "
               "standing').", "3.7.0, KIP-966 motivation"),
        Preset("kafka-4.1-lossy-crash", _KRAFT_37.replace(crash_loses_unflushed_data=True, min_insync_replicas=2,
                                                       eligible_leader_replicas=True), "pass",
               "kafka-4.1 with min.insync.replicas=2 and crashes that lose the unflushed log suffix: a broker that "
               "shut down uncleanly leaves every ISR and ELR when it registers again, so the last replica standing is "
               "not elected from them with its lost records; another ELR member is, or the partition waits. Once every "
               "ELR member has shut down uncleanly too, the last known leader is elected uncleanly (RECOVERING), and "
               "what it lost is a documented loss.",
               "4.1.0, KIP-966"),
        Preset("kafka-3.7-disk-wipe", _KRAFT_37.replace(max_disk_wipes=1), "acked_durability",
               "kafka-3.7 where a stopped broker's disk may be replaced: when it was the last replica standing in the "
               "ISR it comes back empty, registers, is unfenced and is elected from the ISR it never left, without the "
               "records acknowledged to acks=all (KIP-966's motivation, a disk failure).", "3.7.0, KIP-966 motivation"),
        Preset("kraft-jbod", _KRAFT_37.replace(n_partitions=2, log_dirs=2, max_log_dir_failures=2,
                                               metadata_version="3.7-IV4"), "pass",
               "kafka-3.7 with two log directories per broker (KIP-858, JBOD; metadata.version 3.7-IV4): brokers "
               "register their directories, partition registrations carry each replica's directory, a broker reports "
               "the directory of each new log (AssignReplicasToDirs), and up to two directories fail on live brokers "
               "(LogDirFailure): the partitions there go offline on that broker, its next heartbeat names the "
               "directory, and the controller moves their leaderships and ISRs as a fence of those partitions would.",
               "3.7.0, KIP-858"),
        Preset("kafka-4.1-disk-wipe", _KRAFT_37.replace(max_disk_wipes=1, eligible_leader_replicas=True), "pass",
               "kafka-4.1 where a stopped broker's disk may be replaced: the empty broker registers without a clean "
               "shutdown epoch, so the controller takes it out of every ISR and ELR first, and it is never elected from "
               "them without its records. When it was the partition's last known leader and the ELR is empty, it is "
               "elected uncleanly (RECOVERING): the records it lacks are a documented loss.", "4.1.0, KIP-966"),
        Preset("kraft-unclean-election", _KRAFT_37.replace(unclean_leader_election=True), "pass",
               "kafka-3.7 with unclean.leader.election.enable=true, as the quorum controller reads it from 3.9.0 "
               "(KAFKA-12670, kafka_12670; 3.3.0 to 3.8.x ignore it): when no ISR member is left, an out-of-sync replica "
               "is elected, the ISR becomes that leader alone and the partition is RECOVERING (KIP-704) until the "
               "leader's first AlterPartition marks it RECOVERED. The records the election loses are a documented loss "
               "(unclean_loss); every other record is still checked.", "unclean.leader.election.enable, KIP-704"),
        Preset("no-kip-903", _KRAFT_37.replace(max_disk_wipes=1, eligible_leader_replicas=True, kip_903=False),
               "controller_isr_entry_condition",
               "kafka-4.1-disk-wipe with KIP-903 off (Kafka 3.4): the leader proposes a caught-up follower for the ISR; "
               "before the AlterPartition goes out the follower's broker stops, its disk is replaced, and it registers "
               "again and is unfenced; the controller checks only that the broker is active and admits the empty "
               "replica on its previous incarnation's fetches (KAFKA-14139).", "KIP-903, KAFKA-14139, KAFKA-14617"),
        Preset("no-kafka-15021", _KRAFT_37.replace(kafka_15021=False), "pass",
               "KAFKA-15021 off (3.5): every ISR shrink bumps the leader epoch, and a caught-up replica outside the ISR "
               "holds the HW back even while it is fenced or shutting down. The HW waits for such a replica only until "
               "replica.lag.time.max.ms passes, so no property of the catalogue breaks: a delay, not a loss.",
               "KAFKA-15021"),
        Preset("kraft-no-isr-join-hw-check", _KRAFT_37.replace(isr_join_requires_hw=False), "isr_entry_condition",
               "The leader's LEO >= HW condition for ISR entry off (Partition.isFollowerInSync keeps only the epoch start "
               "offset): a follower joins the ISR below the HW; the HW then passes records it lacks, and electing it loses "
               "an acknowledged write a consumer may have read.", "Partition.isFollowerInSync, KRaft"),
        Preset("no-kafka-15221", _KRAFT_37.replace(max_disk_wipes=1, eligible_leader_replicas=True,
                                                isr_expand_window=True, kafka_15221=False),
               "isr_entry_condition",
               "KAFKA-15221 off (3.5.x and 3.6.x; on kafka-4.1-disk-wipe, whose last-replica-standing loss the ELR "
               "closes, with the leader's expansion in two steps): a caught-up follower's fetch makes the leader "
               "decide an ISR expansion; before it builds the AlterPartition the follower's broker stops, its disk is "
               "replaced, it registers again, is unfenced and fetches from the leader with its new broker epoch and an "
               "empty log. prepareIsrExpand reads that new state: the request names the new broker epoch, which the "
               "controller's KIP-903 check accepts, for a replica below the HW: the leader's maximal ISR counts it at "
               "once (isr_entry_condition), the controller's ISR once the request is handled "
               "(controller_isr_entry_condition). The pending-reset race (every KRaft preset's) breaks both as well; "
               "the archived trace and scenarios 38a/38b show this race itself.",
               "KAFKA-15221, apache/kafka#14053 (3.7.0)"),
        Preset("kafka-4.1-isr-expand-window", _KRAFT_37.replace(max_disk_wipes=1, eligible_leader_replicas=True,
                                                             isr_expand_window=True), "pass",
               "no-kafka-15221 with the fix (3.7.0 and later): the fetch-state update waits for the partition's lock, so "
               "the expansion's check and its AlterPartition read the same replica state (one step); a rebooted "
               "follower's fetch comes before the check (and fails it) or after the request (whose old broker epoch "
               "the controller refuses).", "4.1.0, KAFKA-15221"),
        Preset("no-kafka-14140", _ALTER_ISR.replace(kafka_10706=True), "zk_isr_joins_live",
               "KAFKA-14140 off (ZooKeeper mode with AlterIsr before 3.3.0; alter-isr with KAFKA-10706, 2.8.0): neither the leader "
               "nor the controller checks that a broker joining an ISR is alive. A follower whose ZooKeeper session "
               "expired while it was out of the ISR (so the controller's broker change bumps no leader epoch) goes on "
               "fetching, catches up, and the leader's AlterIsr adds it to the ISR the controller writes, though the "
               "controller holds it dead (no election will pick it, yet acks=all counts it).",
               "KAFKA-14140, KIP-841 (ZooKeeper mode)"),
        Preset("alter-isr-kafka-14140", _ALTER_ISR.replace(kafka_10706=True, kafka_14140=True), "pass",
               "no-kafka-14140 with the fix (3.3.0's ZooKeeper mode; followers still truncate with "
               "OffsetsForLeaderEpoch): the leader proposes only a follower its metadata "
               "cache holds alive, and the controller answers INELIGIBLE_REPLICA to an ISR naming a broker it holds dead "
               "or shutting down; the leader then reverts to its committed ISR.", "3.3.0 (ZooKeeper mode), KAFKA-14140"),
        Preset("log-start-offset", _LOG_START, "pass",
               "kafka-2.4 where log start offsets move: DeleteRecords to the HW at the leader (Partition.deleteRecordsOnLeader) "
               "and size retention on every replica (Log.deleteOldSegments, one record per segment), followers taking the "
               "leader's log start from fetch responses and truncating fully when they fall below it (KAFKA-2143's rule). "
               "With KAFKA-5634 and KAFKA-9491 a log start never passes its HW.", "2.4.1, KAFKA-5634, KAFKA-9491"),
        Preset("no-kafka-5634", _LOG_START.replace(kafka_5634=False, kafka_9491=False), "log_offsets",
               "KAFKA-5634 off (Kafka 0.11.0.0): log retention deletes segments at or above the HW (the active one "
               "rolled), so a log start offset passes its HW; a follower told such a log start fails its partition "
               "(0.11.0.0's fetcher thread died on the OffsetOutOfRangeException). KAFKA-9491 (2.4.1) is off too, as in "
               "every release before it: with it, the moved log start would drag the HW past records the followers lack. "
               "Records deleted above the HW may be acknowledged afterwards, from followers' fetches, and lost.",
               "KAFKA-5634, fixed in 0.11.0.1"),
        Preset("no-kafka-9491", _LOG_START.replace(kafka_9491=False), "log_offsets",
               "KAFKA-9491 off (Kafka 2.4.0 as released): a follower whose fetch offset fell below the leader's log start "
               "(DeleteRecords or retention while it lagged) truncates fully and starts at the leader's log start, but "
               "keeps its old HW below it until the next fetch response.", "KAFKA-9491, fixed in 2.4.1 and 2.5.0"),
        Preset("no-kafka-2143", _BASE.replace(truncation="hw", kafka_2143=False, **_PRE_21), "committed_prefix",
               "KAFKA-2143 off on kafka-0.10.2's settings (Kafka 0.9.0.0's rule): a follower whose fetch offset is past "
               "its leader's LEO gets OFFSET_OUT_OF_RANGE; when the leader has appended up to that offset before the "
               "follower handles the answer (ListOffsets reads the leader's current LEO), the follower truncates its "
               "whole log and fetches from the leader's log start, though it is in the ISR and held every committed "
               "record: an ISR member below the HW (scenarios 37a/37b). The race needs a follower that missed a "
               "leader's truncation (no KIP-320 fencing), so every loss of kafka-0.10.2 (KIP-101) is reachable too, "
               "and the fuzzer finds those first.", "KAFKA-2143, fixed in 0.9.0.1"),
        Preset("old-message-format", _BASE.replace(old_message_format_partitions=(0,)), "acked_durability",
               "kafka-2.4 with the topic on log.message.format.version 0.10 (below 0.11): records carry no leader epoch, "
               "the epoch cache stays empty and followers truncate to their HW when they become followers (2.4.0's "
               "truncateToHighWatermark for partitions without epochs), so KIP-101's scenarios come back: a follower "
               "truncates an acknowledged record below the leader's HW and is elected.", "2.4.0, KIP-101"),
        Preset("topic-lifecycle", _BASE.replace(n_partitions=2, initial_partitions=1, max_partition_creations=1,
                                                max_topic_deletions=1), "pass",
               "kafka-2.4 with topics at run time: the topic starts with one of its two partitions, an admin may add "
               "the second (PartitionModifications, onNewPartitionCreation) and delete the topic (TopicDeletionManager: "
               "UpdateMetadata with leader -2, StopReplica without then with delete to the live replicas, their "
               "responses as controller events, ReplicaDeletionIneligible and a retry while a replica's broker is "
               "down). The records of a deleted topic go with it; nothing else is lost.",
               "2.4.0, TopicDeletionManager"),
        Preset("kafka-4.1-pending-reset-fixed", _KRAFT_37.replace(eligible_leader_replicas=True,
                                                               make_leader_keeps_pending_isr=True), "pass",
               "kafka-4.1 with the model's fix for the pending-reset race (make_leader_keeps_pending_isr): Partition.makeLeader "
               "keeps an in-flight ISR change when handed the partition epoch it already holds. Every known bug of the "
               "catalogue is fixed, so any violation here is a new finding.", "4.1.0, the pending-reset race's fix"),
    )
}

#: the known bugs (model/bugs.toml) each breaking preset is expected to show, its headline bug first; the other bugs
#: its configuration contains (``Preset.known_bugs``) may show too, and are attributed, but need not be found.
_EXPECTED_BUGS = {
    "no-kafka-7786": ("KAFKA-7786",), "kafka-0.10.2": ("KIP-101",), "kafka-0.11": ("KAFKA-7128",),
    "kafka-2.0": ("KAFKA-7128",), "no-kafka-7128": ("KAFKA-7128",), "no-kafka-7415": ("KAFKA-7415",),
    "no-kafka-7164": ("KAFKA-7164",), "no-kip-320": ("KIP-320",), "no-kafka-6082": ("KAFKA-6082",),
    "crash-loses-unflushed": ("unflushed-crash-loss",), "kafka-2.7": ("KAFKA-13091",),
    "no-kafka-12686": ("KAFKA-12686",), "no-kafka-13091": ("KAFKA-13091",), "kafka-2.8": ("KAFKA-13091",),
    "no-kafka-14010": ("KAFKA-14010",),
    "no-kafka-13141": ("KAFKA-13141",), "no-kafka-14704": ("KAFKA-14704",), "kafka-3.3": ("KAFKA-14704",),
    "no-kafka-13916": ("KAFKA-13916",), "kraft-no-partition-epoch-check": ("partition-epoch-check",),
    "no-kafka-15583": ("KAFKA-15583",), "kafka-3.7-lossy-crash": ("KIP-966",), "kafka-3.7-disk-wipe": ("KIP-966",),
    "no-kip-903": ("KIP-903",), "kraft-no-isr-join-hw-check": ("isr-join-hw-check",),
    "no-kafka-15221": ("KAFKA-15221",), "no-kafka-14140": ("KAFKA-14140",), "no-kafka-5634": ("KAFKA-5634",),
    "no-kafka-9491": ("KAFKA-9491",), "no-kafka-2143": ("KAFKA-2143",), "old-message-format": ("message-format-v1",),
    "no-kafka-19522": ("KAFKA-19522",),
}
PRESETS = {name: dataclasses.replace(p, bugs=_EXPECTED_BUGS.get(name, ())) for name, p in PRESETS.items()}


def check_preset(p: Preset) -> None:
    """ConfigError unless the preset's expectation is consistent with the bug catalogue: a breaking preset names the
    bugs it is expected to show, each present in its configuration, its headline invariant among the first's breaks;
    a preset expected to pass names none."""
    from .bugs import bug

    if p.expected == "pass":
        if p.bugs:
            raise ConfigError(f"preset {p.name}: expected to pass, yet it lists bugs {', '.join(p.bugs)}")
        return
    if not p.bugs:
        raise ConfigError(f"preset {p.name}: expects {p.expected} but names no known bug to attribute it to")
    for b in map(bug, p.bugs):
        if not b.present_in(p.config):
            raise ConfigError(f"preset {p.name}: lists {b.id}, which its configuration does not contain "
                              f"({b.flag} = {getattr(p.config, b.flag)!r})")
    if p.expected not in bug(p.bugs[0]).breaks:
        raise ConfigError(f"preset {p.name}: its headline {p.expected} is not among what {p.bugs[0]} may break")


DEFAULT_PRESET = "kafka-2.4"

#: the breaking presets the main job (``isrlab fuzz --preset main``, what ``./run main`` runs) leaves out, and why:
#: their expected bug is not found by the guided search in every seed within about half a minute of one core
#: (benchmarks/attributed_finds.py, 5 seeds capped at 30 s; the figures in benchmarks/RESULTS.md).  Every other
#: preset is in the main job.
MAIN_JOB_LEAVES_OUT = {
    "kafka-2.7": "KAFKA-13091 found in 4 of 5 seeds within 30 s (median 20 s)",
    "kafka-2.8": "KAFKA-13091 found in 3 of 5 seeds within 30 s",
    "no-kafka-13091": "KAFKA-13091 found in 2 of 5 seeds within 30 s",
    "kraft-no-partition-epoch-check": "found in 4 of 5 seeds within 60 s (median 29 s), past the pending-reset race "
                                      "the guided search meets first; isrlab explore finds the bug itself, and "
                                      "--engine scopes in 5 of 5 seeds (median 15 s, 2026-11-30)",
    "no-kafka-15221": "KAFKA-15221 found in 5 of 5 seeds within 60 s, median 9.6 s: about the main job's share",
    "no-kafka-2143": "the fuzzers meet kafka-0.10.2's own losses (KIP-101, KIP-320) first: 0 of 5 seeds within 30 s",
    "no-kip-903": "KAFKA-14139's race: 4 to 5 of 5 seeds within 60 s, median 24-29 s; --engine scopes: 5 of 5, "
                  "median 8 s (2026-11-30)",
    "no-kafka-7415": "0 of 5 seeds within 30 s (the truncation below the HW needs two session expirations)",
    "no-kafka-7164": "KAFKA-7164 itself found in 2 of 5 seeds within 30 s; the others meet KIP-320's divergence",
    "no-kafka-7786": "KAFKA-7786's stall found in 4 of 5 seeds within 30 s (median 25 s)",
    "no-kafka-19522": "KAFKA-19522 found in 4 of 5 seeds within 30 s, median 11.6 s: about the main job's share",
}


def main_job_presets() -> tuple:
    """The presets of the main job: every preset but those MAIN_JOB_LEAVES_OUT names, in name order."""
    return tuple(n for n in sorted(PRESETS) if n not in MAIN_JOB_LEAVES_OUT)


def preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        same = sorted(n for n in PRESETS if isinstance(name, str) and n.casefold() == name.casefold())
        if same:
            raise ConfigError(f"unknown preset {name!r}: names are case-sensitive; did you mean "
                              f"{' or '.join(same)}?") from None
        raise ConfigError(f"unknown preset {name!r} (known: {', '.join(sorted(PRESETS))})") from None


# --------------------------------------------------------------------------- explore bounds
#: ``isrlab explore``'s bounds when an option is not given (keys are the command's options).  Every preset's
#: bounds allow a broker crash or a session expiration, so leaders change (unless ``EXPLORE_WHY_NO_FAULT`` says why
#: not); a breaking preset's entry gives bounds chosen by measurement to reach its bug (which presets' searches
#: complete or find it: the README's table and benchmarks/explore_defaults.json).  ``without`` leaves action kinds out
#: (a swarm-style restriction: what is found is real, and minimal among traces without them); ``eager_tasks``
#: runs a due scheduled task before anything else; ``composite`` takes the protocol's exchanges whole
#: (``properties.explore.explore``'s coarse search, chosen per preset where a fine search cannot reach the bug in
#: minutes: what it finds is real, what it completes proves less than a fine search).
EXPLORE_DEFAULTS = {"brokers": 2, "max_records": 1, "max_epoch": 1, "max_crashes": 1, "max_expirations": 1,
                    "max_controller_epoch": 1, "max_isr_changes": 1, "max_time": 0, "max_states": 3_000_000,
                    "max_queue": None, "settle_every": 0,
                    "acks": (-1,), "eager_tasks": True, "without": ("ConsumerFetch",), "composite": False,
                    "max_in_flight": 0, "max_lagging": 0}

#: per preset: the bounds that differ from EXPLORE_DEFAULTS (data, read by ``explore_bounds``).
EXPLORE_BOUNDS: dict[str, dict] = {
    "crash-loses-unflushed": {"brokers": 1, "max_expirations": 0, "max_controller_epoch": 2, "max_isr_changes": 0,
                              "max_time": None},
    # KAFKA-7128 at 3 brokers, coarse (kafka-2.0 and kafka-0.11: 1.4 CPU s, 30 actions; no-kafka-7128: 13 CPU s, 39
    # actions; the fine searches took 30-60 s)
    "kafka-2.0": {"brokers": 3, "max_crashes": 0, "max_time": None, "composite": True},
    "kafka-0.11": {"brokers": 3, "max_crashes": 0, "max_time": None, "composite": True},
    "no-kafka-7128": {"brokers": 3, "max_crashes": 0, "max_time": None, "composite": True},
    # KIP-101 through a controller move, coarse: the follower that truncated to its HW breaks the committed prefix
    # (28 actions, 1.1 CPU s; the fine search went past it to the acknowledged record lost, 27 actions, 183 CPU s)
    "kafka-0.10.2": {"max_crashes": 2, "max_expirations": 0, "max_epoch": 2, "max_controller_epoch": 2,
                     "composite": True},
    "no-kafka-6082": {"brokers": 3, "max_records": 0, "max_crashes": 0, "max_controller_epoch": 2,
                      "max_isr_changes": 0},
    # KIP-101 scenario 1 on a topic without leader epochs, as kafka-0.10.2's: a follower restarted and truncated to its HW
    # is elected when the leader crashes (fine: 29 actions, 339 CPU s; coarse: the committed prefix broken, 32
    # actions, 2 CPU s)
    "old-message-format": {"max_crashes": 2, "max_expirations": 0, "max_epoch": 2, "max_controller_epoch": 2,
                           "composite": True},
    # the HW left behind by a committed AlterIsr shrink needs the clock (the follower's lag), no fault
    "no-kafka-13091": {"max_crashes": 0, "max_expirations": 0, "max_epoch": 0, "max_time": None},
    "kafka-2.7": {"max_crashes": 0, "max_expirations": 0, "max_epoch": 0, "max_time": None},
    "kafka-2.8": {"max_crashes": 0, "max_expirations": 0, "max_epoch": 0, "max_time": None},
    # KAFKA-14704: a diverging follower (two records, one per leader) takes the leader's HW before it truncates
    "kafka-3.3": {"max_records": 2, "max_expirations": 0, "max_isr_changes": 0},
    # KAFKA-13141: two records, one per leader, and the leader records the diverging follower's fetch offset
    "no-kafka-13141": {"max_records": 2, "max_crashes": 0},
    # KAFKA-14704 in ZooKeeper mode: the same two records, the follower takes the HW before truncating
    "no-kafka-14704": {"max_records": 2, "max_crashes": 0},
    # KAFKA-5634: retention deletes the segment holding the HW once a second record rolls the first one's segment
    # (11 actions; with one record the search runs into KAFKA-9491's shorter violation and not past its cap)
    "no-kafka-5634": {"max_records": 2},
    # the walker's shortest traces need 3 brokers, 2 records, two session expirations and leader epochs up to 2: a
    # fine search that does not end in minutes.  KAFKA-7415's coarse search finds it (49 actions, 85 CPU s, 246k
    # stored states); the other two stop at max_states and say so (the fuzzer finds them)
    "no-kafka-7415": {"brokers": 3, "max_records": 2, "max_crashes": 0, "max_expirations": 2, "max_epoch": 2,
                      "max_isr_changes": 0, "composite": True},
    "no-kafka-7164": {"brokers": 3, "max_records": 2, "max_crashes": 0, "max_expirations": 2, "max_epoch": 2,
                      "max_controller_epoch": 2, "max_isr_changes": 0, "max_states": 100_000},
    "no-kip-320": {"brokers": 3, "max_records": 2, "max_expirations": 2, "max_epoch": 2, "max_controller_epoch": 2,
                   "max_isr_changes": 0, "max_states": 100_000},
    # KAFKA-12686: the answer to the leader's AlterIsr arrives after the follower has crashed, restarted and fetched
    # again, so the search must hold one request in flight (coarse: 39 actions, 8 CPU s, where the fine search took
    # 71 and the coarse one with every exchange whole completes without it)
    "no-kafka-12686": {"composite": True, "max_in_flight": 1},
    # passing presets with an operator's or admin's actions on top of kafka-2.4: the crash alone moves the leader;
    # a session expiration as well keeps each search growing past 150 CPU s, without it each one completes
    "leader-moves": {"max_expirations": 0},
    # KAFKA-14140's fix: every refused AlterIsr (the follower's session expired, the leader's cache not yet told)
    # queues an UpdateMetadata for the leader and the leader retries on the next fetch, so the controller's queue
    # grows without bound; six queued requests per broker let the search complete (no-kafka-14140's bug is found
    # within the same bounds, 17 actions)
    "alter-isr-kafka-14140": {"max_queue": 6},
    # the AlterPartition built on an ISR the controller has since changed: two followers fenced (lost heartbeats) and
    # unfenced while the leader's expansion waits, so 3 brokers and no record, crash or leader change (38 actions,
    # composite: 2.5 CPU s where the fine search took 627)
    "kraft-no-partition-epoch-check": {"brokers": 3, "max_records": 0, "max_crashes": 0, "max_expirations": 2,
                                       "max_epoch": 0, "without": ("ConsumerFetch", "ControlledShutdown", "DiskWipe"),
                                       "composite": True},
    # KIP-966's case: the leader, alone in the ISR once both brokers lost their heartbeats, comes back from a replaced
    # disk empty and is elected again (20 actions at 2 brokers, 27 composite); the fix's preset (kafka-4.1-disk-wipe)
    # breaks nothing on the same actions; composite: 44 CPU s where the fine search took 298
    "kafka-3.7-disk-wipe": {"max_expirations": 2, "max_epoch": 2, "composite": True},
    # KIP-966's motivation: the follower shuts down, the leader loses its heartbeats and crashes, losing its unflushed
    # record, and is elected again from the ISR it never left (25 actions fine, 26 composite: 12 CPU s where the fine
    # search took 343); with the fix (kafka-4.1-lossy-crash) clean
    "kafka-3.7-lossy-crash": {"max_expirations": 1, "max_epoch": 2, "composite": True},
    # KAFKA-14139's race at 2 brokers: the follower, caught up, is proposed for the ISR; before the AlterPartition goes
    # out it shuts down twice (the second time 2 s later, when its heartbeat is due), comes back empty and registers
    # again; no leader change (28 actions, composite: 8 CPU s; a fine search of these bounds no longer ends in minutes
    # since the AlterPartition's handling became a step of its own)
    "no-kip-903": {"max_crashes": 2, "max_epoch": 0, "max_time": 2000, "composite": True},
    # KAFKA-15221's race at 2 brokers: a lost heartbeat takes the follower out of the ISR; back and caught up, its
    # fetch makes the leader decide an expansion, and before the leader builds the request the follower shuts down
    # (2 s later), comes back empty and fetches with its new broker epoch; no leader change (fine: 31 actions, 365 CPU
    # s; coarse: 29 actions, 15 CPU s)
    "no-kafka-15221": {"max_expirations": 1, "max_epoch": 0, "max_time": 2000, "composite": True},
    # KAFKA-7786's stall is a liveness bug: the search settles every 8th stored state (``settle_every``) as the fuzzers
    # settle a run's end. Two session expirations and a second controller, no record or crash: the follower's
    # OffsetsForLeaderEpoch request of the old epoch is answered after the new LeaderAndIsr (18 actions, then it
    # never settles)
    "no-kafka-7786": {"max_records": 0, "max_crashes": 0, "max_expirations": 2, "max_epoch": 2,
                      "max_controller_epoch": 2, "settle_every": 8},
    # KAFKA-19522 at 2 brokers, coarse: the follower's lost heartbeats leave the leader alone in the ISR; it restarts
    # uncleanly, is elected again as the last known leader while fenced, and its next unclean restart leaves neither
    # ISR nor ELR (20 actions, 7 CPU s; the KRaft defaults complete without it)
    "no-kafka-19522": {"max_records": 0, "max_crashes": 3, "max_expirations": 1, "max_epoch": 3, "max_time": 10000,
                       "composite": True},
    "log-start-offset": {"max_expirations": 0},
    "reassignment": {"max_expirations": 0},
    "topic-lifecycle": {"max_expirations": 0},
}


#: per preset whose bounds allow neither a crash nor a session expiration: why its bug needs none (a test holds every
#: other preset to at least one fault, so that its leaders can change).
EXPLORE_WHY_NO_FAULT: dict[str, str] = {
    "no-kafka-13091": "the HW a committed AlterIsr shrink leaves behind comes from the clock alone (the follower's lag)",
    "kafka-2.7": "as no-kafka-13091: its first bug (KAFKA-13091) comes from the clock alone",
    "kafka-2.8": "as kafka-2.7 (KAFKA-13091, from the clock alone)",
}


#: the KRaft presets' difference from EXPLORE_DEFAULTS, below their own entries: no lost heartbeats (the
#: "expirations" of KRaft).  A fenced broker's heartbeats, re-registration and unfencing multiply the interleavings
#: of every other action: with one lost heartbeat a 2-broker kafka-3.7 search is still growing at depth 22 after
#: 150 CPU s, without it it completes (the figures in benchmarks/RESULTS.md).  The crash budget keeps leaders
#: changing (a crash, or a controlled shutdown, which takes the same budget).
EXPLORE_KRAFT_DEFAULTS = {"max_expirations": 0}


def explore_bounds(name: str) -> dict:
    """The default ``isrlab explore`` bounds of the preset ``name``: EXPLORE_DEFAULTS, then the KRaft era's
    (EXPLORE_KRAFT_DEFAULTS) for a KRaft preset, then its own entry."""
    era = EXPLORE_KRAFT_DEFAULTS if name in PRESETS and PRESETS[name].config.kip_500 else {}
    return {**EXPLORE_DEFAULTS, **era, **EXPLORE_BOUNDS.get(name, {})}
