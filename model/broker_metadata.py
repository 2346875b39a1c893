"""A KRaft broker's side of the metadata log (Kafka 3.5.0): replaying records, heartbeats, registration.

A broker replays the committed metadata log one record at a time, in order
(BrokerMetadataListener / MetadataLoader, then BrokerMetadataPublisher): broker
records update its KRaftMetadataCache, partition records go to
``ReplicaManager.applyDelta``, which makes the broker leader or follower of the
partitions it hosts.  Its BrokerLifecycleManager heartbeats on a schedule and is
unfenced once it has replayed its own registration.
"""

from __future__ import annotations

from . import errors as E
from .config import ModelConfig
from .delayed import note_error
from .node import replace_at
from .jbod import maybe_update_topic_assignment, offline_dir_ids, place_new_log
from .partition import make_follower_3x, make_leader_3x
from .quorum_controller import broker_heartbeat, process_expired_heartbeat, register_broker
from .replica_manager import start_fetching, stop_replica
from .requests import LeaderAndIsrPartitionState
from .state import (OFFLINE, REMOVED, Broker, BrokerLogDirsChangeRecord, BrokerRegistrationChangeRecord, ClusterState,
                    ConfigRecord, FenceBrokerRecord, MetadataCache, Partition, PartitionChangeRecord, PartitionMetadata,
                    RegisterBrokerRecord, RemoveTopicRecord, UnfenceBrokerRecord)


def apply_next_record(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """Replay the next committed batch of metadata records on broker b: the KRaftMetadataCache first, then
    ReplicaManager.applyDelta for the partitions the batch changed (BrokerMetadataPublisher.publish, Kafka 3.5.0).

    A broker that has published nothing since it started first catches up to its own RegisterBrokerRecord and
    publishes that image at once (MetadataLoader publishes only once caught up; the first delta is the whole image), so
    a restarted broker never replays its earlier incarnation's transitions one by one."""
    br = s.broker_mut(b)
    q = s.quorum
    log = q.log
    end = next(e for e in q.batch_ends if e > br.metadata_offset)
    if br.metadata_offset == 0 and 0 <= br.broker_epoch < len(log):
        end = max(end, br.broker_epoch + 1)
    changed = {}
    before = br.metadata.partitions              # the previous image's partitions (TopicDelta.image)
    for rec in log[br.metadata_offset:end]:
        _replay(br, rec, len(s.brokers), changed)
    br.metadata_offset = end
    for p, reg in sorted(changed.items()):
        prev = before[p] if before and p < len(before) else None
        if prev is not None and b in prev.replicas and b not in reg.replicas:
            stop_and_delete(cfg, s, br, p)       # TopicDelta.localChanges' deletes
        else:
            apply_delta(cfg, s, br, p, reg)


def _replay(br: Broker, rec, n: int, changed: dict) -> None:
    """One record into the broker's KRaftMetadataCache; a partition record's registration goes into ``changed``."""
    md = br.metadata
    epochs = md.broker_epochs or (-1,) * n
    t = type(rec)
    if t is PartitionChangeRecord:
        parts = md.partitions or (None,) * len(br.partitions)
        reg = rec.registration
        br.metadata = MetadataCache(md.alive_brokers, replace_at(parts, rec.partition, PartitionMetadata(
            reg.leader, reg.leader_epoch, reg.isr, reg.replicas)), md.controller_id, epochs, md.fenced,
            md.shutting_down)
        changed[rec.partition] = reg
        return
    if t is RemoveTopicRecord:                   # TopicsDelta.replay(RemoveTopicRecord): the topic leaves the image
        parts = md.partitions or (None,) * len(br.partitions)
        br.metadata = MetadataCache(md.alive_brokers, tuple(None if p in rec.partitions else x
                                                            for p, x in enumerate(parts)),
                                    md.controller_id, epochs, md.fenced, md.shutting_down)
        for p in rec.partitions:
            changed[p] = REMOVED
        return
    if t is ConfigRecord:                        # DynamicConfigPublisher: a topic config no replication rule reads
        return
    fenced, shutting = set(md.fenced), set(md.shutting_down)
    if t is RegisterBrokerRecord:
        epochs = replace_at(epochs, rec.broker_id, rec.broker_epoch)
        (fenced.add if rec.fenced else fenced.discard)(rec.broker_id)
        shutting.discard(rec.broker_id)          # a new registration is not in controlled shutdown
    elif t is FenceBrokerRecord:
        fenced.add(rec.broker_id)
    elif t is UnfenceBrokerRecord:
        fenced.discard(rec.broker_id)
    elif t is BrokerRegistrationChangeRecord:
        shutting.add(rec.broker_id)
    elif t is BrokerLogDirsChangeRecord:         # a broker's directories: nothing a broker's metadata cache keeps here
        return
    else:  # pragma: no cover - closed set
        raise TypeError(f"unknown metadata record {rec!r}")
    alive = tuple(x for x in range(n) if epochs[x] >= 0 and x not in fenced)   # KRaftMetadataCache.hasAliveBroker
    br.metadata = MetadataCache(alive, md.partitions, md.controller_id, epochs, tuple(sorted(fenced)),
                                tuple(sorted(shutting)))


def stop_and_delete(cfg: ModelConfig, s: ClusterState, br: Broker, p: int) -> None:
    """ReplicaManager.applyDelta's deletes (Kafka 3.7.0): a broker the previous image held as a replica and the new
    one does not (a reassignment removed it, or a RemoveTopicRecord deleted the topic) stops the partition with deleteLocalLog (stopPartitions: its fetcher
    removed, the partition gone from allPartitions, its log deleted); an offline partition is left (KafkaStorageException,
    logged)."""
    if br.fetchers[p] is not None:               # replicaFetcherManager.removeFetcherForPartitions
        br.fetchers = replace_at(br.fetchers, p, None)
    stop_replica(cfg, s, br, p, True)


def apply_delta(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, reg) -> None:
    """ReplicaManager.applyDelta for one changed partition (Kafka 3.5.0; TopicDelta.localChanges): a replica that leads
    becomes leader (applyLocalLeadersDelta), another becomes follower and restarts its fetcher on a new leader epoch
    when the leader is registered (applyLocalFollowersDelta)."""
    b = br.broker_id
    if b not in reg.replicas:
        return                                   # not hosted here
    hosted = br.partitions[p]
    if hosted == OFFLINE:
        return
    if hosted is None:
        part = Partition(p)
        part._tok = br._tok
        br.partitions = replace_at(br.partitions, p, part)
    ps = LeaderAndIsrPartitionState(p, 0, reg.leader, reg.leader_epoch, reg.isr, reg.partition_epoch, reg.replicas)
    had_log = br.logs[p] is not None
    if reg.leader == b:
        if br.fetchers[p] is not None:           # makeLeaders: replicaFetcherManager.removeFetcherForPartitions
            br.fetchers = replace_at(br.fetchers, p, None)
        make_leader_3x(cfg, s, br, p, ps, s.now, reg.adding_replicas, reg.removing_replicas)
    elif make_follower_3x(cfg, s, br, p, ps, reg.adding_replicas, reg.removing_replicas):
        if reg.leader >= 0 and br.metadata.broker_epochs[reg.leader] >= 0:
            start_fetching(cfg, s, br, ps)       # only for a leader the image holds (newImage.cluster.broker)
        elif br.fetchers[p] is not None:
            br.fetchers = replace_at(br.fetchers, p, None)
    if cfg.log_dirs:                             # KIP-858: the new log's directory, and the assignment to report
        if not had_log and br.logs[p] is not None:
            place_new_log(cfg, br, p, reg)
        maybe_update_topic_assignment(cfg, br, p, reg)
    if not br.hw_checkpoint_started:             # startHighWatermarkCheckPointThread
        br.hw_checkpoint_started = True
        br.next_hw_checkpoint_ms = s.now


def heartbeat(cfg: ModelConfig, s: ClusterState, b: int) -> str:
    """BrokerLifecycleManager's heartbeat (Kafka 3.5.0): broker epoch and replayed offset, every heartbeat interval."""
    br = s.broker_mut(b)
    br.next_heartbeat_ms = s.now + cfg.broker_heartbeat_interval_ms
    offline = ()
    if br.offline_dirs:                          # offlineLogDirs (KIP-858, 3.7.0)
        offline = offline_dir_ids(br)
    error, shutdown_now = broker_heartbeat(cfg, s, b, br.broker_epoch, br.metadata_offset, br.want_shutdown, offline)
    note_error(s, error)
    if shutdown_now:
        from .faults import broker_crash         # faults registers a restarted broker through this module
        broker_crash(cfg, s, b, True, heartbeat_in_flight=False)   # BrokerServer.shutdown once granted: a clean stop
    return error


#: BrokerLifecycleManager's resendExponentialBackoff (Kafka 3.7.0): 100 ms after a first failed heartbeat
HEARTBEAT_RETRY_BACKOFF_MS = 100


def expired_heartbeat(cfg: ModelConfig, s: ClusterState, b: int) -> str:
    """A heartbeat that times out in the quorum controller's event queue (QuorumController.processBrokerHeartbeat's
    whenComplete, Kafka 3.7.0): processExpiredBrokerHeartbeat on the controller, and the broker's
    BrokerHeartbeatResponseHandler reads REQUEST_TIMED_OUT (ControllerApis: Errors.forException of the queue's
    TimeoutException) and schedules the next one after a failure (scheduleNextCommunicationAfterFailure)."""
    br = s.broker_mut(b)
    br.next_heartbeat_ms = s.now + HEARTBEAT_RETRY_BACKOFF_MS
    process_expired_heartbeat(cfg, s, b, br.broker_epoch, br.metadata_offset)
    s.ghost_mut().expired_heartbeats += 1
    note_error(s, E.REQUEST_TIMED_OUT)
    return E.REQUEST_TIMED_OUT


def deliver_orphan_heartbeat(cfg: ModelConfig, s: ClusterState, b: int, hb) -> str:
    """QuorumController.processBrokerHeartbeat (Kafka 3.5.0) for a heartbeat b's earlier incarnation sent: handled with
    the broker epoch it carries (checkBrokerEpoch: STALE_BROKER_EPOCH once b has registered again), answer lost."""
    error, _shutdown_now = broker_heartbeat(cfg, s, b, hb.broker_epoch, hb.metadata_offset, hb.want_shutdown,
                                            hb.offline_dirs)
    note_error(s, error)
    return error


def begin_controlled_shutdown(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """BrokerLifecycleManager.beginControlledShutdown (Kafka 3.5.0): the next heartbeats carry wantShutDown."""
    s.broker_mut(b).want_shutdown = True


def register(cfg: ModelConfig, s: ClusterState, br: Broker) -> None:
    """BrokerLifecycleManager at start-up (Kafka 3.5.0): register (fenced) and replay the metadata log from its start."""
    br.broker_epoch = register_broker(cfg, s, br.broker_id, br.clean_shutdown_epoch)
    br.clean_shutdown_epoch = -1                 # the clean-shutdown file is read, then deleted, at start-up
    br.metadata_offset = 0
    br.metadata = MetadataCache()
    br.next_heartbeat_ms = s.now
    if br.offline_dirs or br.dir_assignments:    # a new process: every directory online, nothing queued to report
        br.offline_dirs, br.dir_assignments = (), ()


__all__ = ["apply_next_record", "apply_delta", "deliver_orphan_heartbeat", "expired_heartbeat", "heartbeat",
           "register"]
