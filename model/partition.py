"""Partition-level rules: the leader's follower bookkeeping, ISR changes, HW, make_leader / make_follower.

Every function works on records the caller has already cloned for this step
(see ``node.py``): ``br`` is a writable ``Broker`` inside the writable cluster
``s``.  Rule numbers (RS1, SH3, HW1, M1-M10, F1-F5, ...) are those of
``kafka-replication-semantics.md`` section 1.
"""

from __future__ import annotations

from . import delayed, errors as E
from .config import ModelConfig
from .log import (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, Log, cache_assign, cache_end_offset_for, clamp_high_watermark,
                  maybe_increment_log_start_offset)
from .losses import note_takeover
from .requests import AlterIsrPartition
from .state import (AlterIsrItem, Broker, ClusterState, FetchResponseData, LeaderIsrAndControllerEpoch, Partition,
                    PendingIsr, Replica)


# --------------------------------------------------------------------------- Replica
def update_fetch_state(r: Replica, fetch_offset: int, follower_start_offset: int,
                       fetch_time_ms: int, leader_end_offset: int) -> None:
    """Replica.updateFetchState (Kafka 2.4.0, RS1-RS4): credit catch-up time, then overwrite LEO."""
    if fetch_offset >= leader_end_offset:
        r.last_caught_up_time_ms = max(r.last_caught_up_time_ms, fetch_time_ms)
    elif fetch_offset >= r.last_fetch_leader_log_end_offset:
        r.last_caught_up_time_ms = max(r.last_caught_up_time_ms, r.last_fetch_time_ms)
    r.log_end_offset = fetch_offset
    r.log_start_offset = follower_start_offset
    r.last_fetch_leader_log_end_offset = leader_end_offset
    r.last_fetch_time_ms = fetch_time_ms


def reset_last_caught_up_time(r: Replica, cur_leader_leo: int, now: int, last_caught_up_ms: int) -> None:
    """Replica.resetLastCaughtUpTime (Kafka 2.4.0, RS5): only called from makeLeader."""
    r.last_fetch_leader_log_end_offset = cur_leader_leo
    r.last_fetch_time_ms = now
    r.last_caught_up_time_ms = last_caught_up_ms


# --------------------------------------------------------------------------- helpers
def create_log_if_not_exists(br: Broker, p: int) -> Log:
    """Partition.createLogIfNotExists (Kafka 2.4.0, M3/F3): a new log's HW comes from the checkpoint, clamped."""
    log = br.logs[p]
    if log is None:
        log = Log()
        checkpoint = br.hw_checkpoint[p]
        log.high_watermark = clamp_high_watermark(log, checkpoint if checkpoint is not None else 0)
        br.logs = br.logs[:p] + (log,) + br.logs[p + 1:]
        log._tok = br._tok
    return log


def update_assignment_and_isr(part: Partition, local_id: int, assignment: tuple, isr: tuple,
                              clear_remote: bool = False, adding: tuple = (), removing: tuple = ()) -> None:
    """Partition.updateAssignmentAndIsr (Kafka 2.4.0, M2/F2): new remote ids get fresh state, existing ones keep theirs;
    ``clear_remote``: a follower's call since 3.3.0 (isLeader = false, apache/kafka#12138) clears remoteReplicasMap;
    ``adding`` / ``removing``: the assignmentState (3.7.0), OngoingReassignmentState when either is not empty."""
    part.adding_replicas = tuple(adding)
    part.removing_replicas = tuple(removing)
    if clear_remote:
        part.remote_replicas = ()
    else:
        old = {r.broker_id: r for r in part.remote_replicas}
        part.remote_replicas = tuple(old.get(b) or Replica(b) for b in assignment if b != local_id)
    part.assigned_replicas = tuple(assignment)
    part.isr = tuple(sorted(isr))
    if part.pending_isr is not None:
        part.pending_isr = None                  # isrState = CommittedIsr(isr) (Kafka 2.7.0)
    if part.expand_checked >= 0:
        part.expand_checked = -1                 # an undecided expansion goes with the old state (model/README.md)


def is_leader(br: Broker, part: Partition) -> bool:
    """Partition.leaderLogIfLocal is defined (Kafka 2.4.0)."""
    return part.leader == br.broker_id


# --------------------------------------------------------------------------- HW
def maybe_increment_leader_hw(cfg: ModelConfig, br: Broker, p: int, now: int) -> bool:
    """Partition.maybeIncrementLeaderHW (Kafka 2.4.0 / 2.7.0, HW1-HW3): min LEO over the maximal ISR and recently caught-up replicas."""
    part = br.partitions[p]
    if part.expand_checked >= 0:
        return False                             # waits for leaderIsrUpdateLock, held by maybeExpandIsr (PrepareIsrExpand)
    log = br.logs[p]
    new_hw = log.log_end_offset
    isr = part.isr
    kraft = cfg.kip_500
    if kraft and cfg.kafka_15583 and len(isr) < delayed.effective_min_isr(cfg, part):
        return False                             # isUnderMinIsr (KAFKA-15583, 3.7.0): the HW stays
    pend = part.pending_isr
    if pend is not None and pend.expand:
        isr = isr + pend.replicas                # HW2: isrState.maximalIsr (KIP-497)
    lag = cfg.replica_lag_time_max_ms
    # KAFKA-15021 (3.6.0): a caught-up replica outside the ISR holds the HW back only if it may join the ISR
    eligible = kraft and cfg.kafka_15021
    for r in part.remote_replicas:
        if r.log_end_offset < new_hw and (now - r.last_caught_up_time_ms <= lag and (
                not eligible or is_replica_isr_eligible(cfg, br, r)) or r.broker_id in isr):
            new_hw = r.log_end_offset
    if new_hw > log.high_watermark:  # Log.maybeIncrementHighWatermark: monotonic (HW3)
        br.log_mut(p).high_watermark = new_hw
        return True
    return False


# --------------------------------------------------------------------------- ISR changes
def update_isr(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, new_isr: tuple) -> bool:
    """Partition.updateIsr via ReplicationUtils.updateLeaderAndIsr (Kafka 2.4.0, SH5/EX5): ZK CAS on zkVersion."""
    part = br.partitions[p]
    zk = s.zk
    current = zk.partition_states[p]
    b = br.broker_id
    if not zk.sessions[b] or current is None or current.zk_version != part.zk_version:
        return False  # "Cached zkVersion ... not equal to that in zookeeper, skip updating ISR"
    new_isr = tuple(sorted(new_isr))
    zkm = s.zk_mut()
    zkm.partition_states = zkm.partition_states[:p] + (LeaderIsrAndControllerEpoch(
        b, part.leader_epoch, new_isr, part.controller_epoch, current.zk_version + 1),) + zkm.partition_states[p + 1:]
    part = br.partition_mut(p)
    g = s.ghost_mut()
    if len(new_isr) < len(part.isr):
        g.isr_shrinks += 1
    else:
        g.isr_expands += 1
    part.isr = new_isr
    part.zk_version = current.zk_version + 1
    # ReplicaManager.recordIsrChange (Kafka 2.4.0)
    if p not in br.isr_change_set:
        br.isr_change_set = tuple(sorted(br.isr_change_set + (p,)))
    br.last_isr_change_ms = s.now
    return True


def is_follower_out_of_sync(r: Replica, leader_end_offset: int, now: int, max_lag_ms: int) -> bool:
    """Partition.isFollowerOutOfSync (Kafka 2.4.0, SH3): LEO differs and lag strictly greater than maxLagMs."""
    return r.log_end_offset != leader_end_offset and (now - r.last_caught_up_time_ms) > max_lag_ms


def out_of_sync_replicas(cfg: ModelConfig, br: Broker, part: Partition, now: int) -> tuple:
    """Partition.getOutOfSyncReplicas (Kafka 2.4.0, SH2-SH3): ISR members other than the leader that are out of sync."""
    leo = br.logs[part.partition].log_end_offset
    return tuple(r.broker_id for r in part.remote_replicas
                 if r.broker_id in part.isr
                 and is_follower_out_of_sync(r, leo, now, cfg.replica_lag_time_max_ms))


def maybe_shrink_isr(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, now: int) -> bool:
    """Partition.maybeShrinkIsr (Kafka 2.4.0, SH1-SH6; 2.7.0 proposes through AlterIsr, SH7): remove out-of-sync followers."""
    part = br.online(p)
    if part is None or not is_leader(br, part):
        return False
    if cfg.kip_497:
        return _maybe_shrink_isr_with_alter_isr(cfg, s, br, p, now)
    out = out_of_sync_replicas(cfg, br, part, now)
    if not out:
        return False
    new_isr = tuple(b for b in part.isr if b not in out)
    assert new_isr, "the leader always stays in the ISR (SH4)"
    shrunk = update_isr(cfg, s, br, p, new_isr)
    # Kafka recomputes the HW even when the ZooKeeper write failed (the ISR is then unchanged).
    if maybe_increment_leader_hw(cfg, br, p, now):
        delayed.try_complete_delayed_produce(cfg, s, br, p)
    return shrunk


def _maybe_shrink_isr_with_alter_isr(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, now: int) -> bool:
    """Partition.maybeShrinkIsr / shrinkIsrWithAlterIsr (Kafka 2.7.0, SH7; KAFKA-13091 3.1.0): propose, commit nothing."""
    part = br.partitions[p]
    if part.pending_isr is not None or part.expand_checked >= 0:
        return False                             # getOutOfSyncReplicas is empty while an update is in flight
    out = out_of_sync_replicas(cfg, br, part, now)
    if not out:
        return False
    send_alter_isr_request(cfg, s, br, p, PendingIsr(False, tuple(sorted(out))))
    if not cfg.kafka_13091:
        # 2.7.0 still tries the HW here, over the maximal ISR of a pending shrink: the committed ISR.
        if maybe_increment_leader_hw(cfg, br, p, now):
            delayed.try_complete_delayed_produce(cfg, s, br, p)
    return False


def send_alter_isr_request(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, pending: PendingIsr) -> bool:
    """Partition.sendAlterIsrRequest (Kafka 2.7.0; KAFKA-12686 3.0.0): queue the proposal, then the partition is pending."""
    part = br.partitions[p]
    if pending.expand:
        new_isr = tuple(sorted(part.isr + pending.replicas))
    else:
        new_isr = tuple(b for b in part.isr if b not in pending.replicas)
    unsent = br.alter_isr_unsent
    for item in unsent:
        if item.request.partition == p:
            # AlterIsrManager.enqueue / submit keep one item per partition (putIfAbsent) and refuse this one.
            # 3.0.0 (KAFKA-12686) reverts to the committed state; 2.7.0 throws before leaving it, which is the
            # same state (and is unreachable there: makeLeader cleared the item).
            return False
    epochs = isr_broker_epochs(br, part, new_isr) if cfg.kip_500 and cfg.kip_903 else ()
    item = AlterIsrItem(AlterIsrPartition(p, part.leader_epoch, new_isr, part.zk_version, epochs), part.isr, pending)
    br.alter_isr_unsent = tuple(sorted(unsent + (item,), key=_item_partition))
    br.partition_mut(p).pending_isr = pending
    return True


def isr_broker_epochs(br: Broker, part: Partition, isr: tuple) -> tuple:
    """Partition.addBrokerEpochToIsr (Kafka 3.5.0, KIP-903): the leader's own epoch, each follower's last Fetch
    epoch, -1 for a follower not heard from in this leadership."""
    remote = {r.broker_id: r.broker_epoch for r in part.remote_replicas}
    return tuple(br.broker_epoch if b == br.broker_id else (-1 if remote.get(b) is None else remote[b]) for b in isr)


def _item_partition(item: AlterIsrItem) -> int:
    return item.request.partition


def clear_pending(br: Broker, p: int) -> None:
    """AlterIsrManager.clearPending (Kafka 2.7.0; removed by KAFKA-12686 in 3.0.0): drop the partition's unsent item."""
    unsent = br.alter_isr_unsent
    if any(item.request.partition == p for item in unsent):
        br.alter_isr_unsent = tuple(item for item in unsent if item.request.partition != p)


def handle_alter_isr_response(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, item: AlterIsrItem,
                              result) -> bool:
    """Partition.handleAlterIsrResponse (Kafka 2.7.0; KAFKA-12751 2.7.2; KAFKA-13091 3.1.0): commit, or stay pending."""
    part = br.partitions[p]
    if type(part) is not Partition or part.isr != item.isr or part.pending_isr != item.pending:
        return False                             # isrState != proposedIsrState: the response is out of date
    if result.error != E.NONE:
        if kip_841(cfg) and result.error == E.INELIGIBLE_REPLICA:
            # handleAlterPartitionError (Kafka 3.3.0, KIP-841): the controller says it applied nothing and the partition
            # epoch is right, so the partition goes back to its last committed state
            br.partition_mut(p).pending_isr = None
            return False
        # UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, INVALID_REQUEST,
        # NEW_LEADER_ELECTED: give up, stay pending until new metadata (a LeaderAndIsr, or a metadata record).  Others are retried
        # (``retriable_alter_isr_error``).
        return False
    if result.leader_epoch != part.leader_epoch:
        return False                             # stale leader epoch: stay pending
    if result.zk_version < part.zk_version or (not cfg.kafka_12751 and result.zk_version == part.zk_version):
        return False                             # "we have a newer version": stay pending
    part = br.partition_mut(p)
    g = s.ghost_mut()
    if item.pending.expand:                      # isrChangeListener.markExpand / markShrink
        g.isr_expands += 1
    else:
        g.isr_shrinks += 1
    part.isr = tuple(sorted(result.isr))
    part.zk_version = result.zk_version
    part.pending_isr = None
    if cfg.kafka_13091 and maybe_increment_leader_hw(cfg, br, p, s.now):
        delayed.try_complete_delayed_produce(cfg, s, br, p)
    return True


def retriable_alter_isr_error(error: str) -> bool:
    """Partition.handleAlterPartitionError (Kafka 3.3.0): the per-partition errors the leader sends again."""
    return error not in (E.NONE, E.INELIGIBLE_REPLICA, E.UNKNOWN_TOPIC_OR_PARTITION, E.UNKNOWN_TOPIC_ID,
                         E.FENCED_LEADER_EPOCH, E.INVALID_UPDATE_VERSION, E.INVALID_REQUEST, E.NEW_LEADER_ELECTED)


def kip_841(cfg: ModelConfig) -> bool:
    """Whether KIP-841's eligibility rules are in (Kafka 3.3.0): KAFKA-13916 in KRaft, KAFKA-14140 in ZooKeeper mode
    with AlterIsr.  Both share Partition.isReplicaIsrEligible and handleAlterPartitionError's revert on
    INELIGIBLE_REPLICA."""
    return cfg.kafka_13916 if cfg.kip_500 else cfg.kip_497 and cfg.kafka_14140


def is_replica_isr_eligible(cfg: ModelConfig, br: Broker, r: Replica) -> bool:
    """Partition.isReplicaIsrEligible (Kafka 3.3.0, KIP-841; 3.5.0, KIP-903): in KRaft, a follower the metadata cache
    holds fenced, unregistered or in controlled shutdown does not join the ISR, nor (KIP-903) one whose last Fetch
    carried another broker epoch than the cache's; in ZooKeeper mode (KAFKA-14140) one the cache does not hold alive
    (always eligible before KAFKA-13916 / KAFKA-14140, and on the 2.4 path)."""
    if not kip_841(cfg):
        return True
    md = br.metadata
    follower = r.broker_id
    if not cfg.kip_500:
        return follower in md.alive_brokers      # ZkMetadataCache.hasAliveBroker: shutting down still counts alive
    if follower not in md.alive_brokers or follower in md.shutting_down:
        return False
    if not cfg.kip_903:
        return True
    stored = r.broker_epoch                      # isBrokerEpochIsrEligible: both known, equal unless the fetch sent -1
    cached = md.broker_epochs[follower] if follower < len(md.broker_epochs) else -1
    return stored is not None and cached >= 0 and (stored == -1 or stored == cached)


def is_follower_in_sync(cfg: ModelConfig, r: Replica, part: Partition, log: Log) -> bool:
    """Partition.isFollowerInSync (Kafka 2.4.0, EX2): LEO >= HW and, with KAFKA-7128, >= leader epoch start offset."""
    if r.log_end_offset < log.high_watermark:
        if cfg.isr_join_requires_hw:             # off: a mutant (no JIRA), as the TLA+ specification's CHECK
            return False
    if cfg.kafka_7128:
        return part.leader_epoch_start_offset >= 0 and r.log_end_offset >= part.leader_epoch_start_offset
    return True


def maybe_expand_isr(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, follower: int) -> bool:
    """Partition.maybeExpandIsr (Kafka 2.4.0, EX1-EX5; 2.7.0 proposes through AlterIsr, EX6): add one caught-up follower."""
    part = br.partitions[p]
    if not is_leader(br, part) or follower in part.isr:
        return False
    if cfg.kip_497 and (part.pending_isr is not None or part.expand_checked >= 0):
        return False                             # canAddReplicaToIsr: not while an update is in flight (2.7.0)
    r = part.remote(follower)
    if r is None or not is_replica_isr_eligible(cfg, br, r) or not is_follower_in_sync(cfg, r, part, br.logs[p]):
        return False
    if cfg.isr_expand_window and not cfg.kafka_15221:
        # 3.5.0 / 3.6.0: the write-locked needsExpandIsr has passed; prepareIsrExpand reads the replica state again,
        # and a fetch may update it in between (Replica.updateFetchState takes no partition lock before KAFKA-15221)
        br.partition_mut(p).expand_checked = follower
        return False
    if cfg.kip_497:
        # expandIsrWithAlterIsr (2.7.0, EX6): PendingExpandIsr, the new member counted in the HW at once
        send_alter_isr_request(cfg, s, br, p, PendingIsr(True, (follower,)))
        return False
    return update_isr(cfg, s, br, p, part.isr + (follower,))


def prepare_isr_expand(cfg: ModelConfig, s: ClusterState, br: Broker, p: int) -> None:
    """Partition.prepareIsrExpand / addBrokerEpochToIsr (Kafka 3.5.0 and 3.6.0, before KAFKA-15221): the expansion
    maybeExpandIsr decided, with each ISR member's broker epoch read from the replica state now; then the threads
    that waited for the lock (HW increments) go on."""
    part = br.partition_mut(p)
    follower = part.expand_checked
    part.expand_checked = -1
    send_alter_isr_request(cfg, s, br, p, PendingIsr(True, (follower,)))
    if maybe_increment_leader_hw(cfg, br, p, s.now):
        delayed.try_complete_delayed_produce(cfg, s, br, p)


def update_follower_fetch_state(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, follower: int,
                                fetch_offset: int, follower_start_offset: int, fetch_time_ms: int,
                                leader_end_offset: int, broker_epoch: int | None = None) -> bool:
    """Partition.updateFollowerFetchState (Kafka 2.4.0, section 1.6): fetch state, expand, HW, delayed produce.
    ``broker_epoch``: the one the Fetch carries, when not its sender's current one (an earlier incarnation's)."""
    part = br.partitions[p]
    if part.remote(follower) is None:
        return False
    part = br.partition_mut(p)
    r = part.remote_mut(follower)
    prev_leo = r.log_end_offset
    update_fetch_state(r, fetch_offset, follower_start_offset, fetch_time_ms, leader_end_offset)
    if cfg.kip_500 and cfg.kip_903:
        # the Fetch's ReplicaState.ReplicaEpoch (KIP-903, 3.5.0): the follower's epoch as it sends, in this very step
        r.broker_epoch = s.brokers[follower].broker_epoch if broker_epoch is None else broker_epoch
    if follower not in part.isr:
        maybe_expand_isr(cfg, s, br, p, follower)
    hw_raised = False
    if r.log_end_offset != prev_leo:
        hw_raised = maybe_increment_leader_hw(cfg, br, p, fetch_time_ms)
    if hw_raised:
        delayed.try_complete_delayed_produce(cfg, s, br, p)
    return True


def follower_replica_error(cfg: ModelConfig, part: Partition, replica_id: int, current_leader_epoch: int) -> str:
    """Partition.followerReplicaOrThrow (Kafka 3.3.0, KAFKA-13837): a leader refuses a Fetch from a replica outside
    its replica set, UNKNOWN_LEADER_EPOCH with the request's leader epoch, NOT_LEADER_OR_FOLLOWER without (NONE: known,
    or the rule is off)."""
    if not (cfg.kip_500 and cfg.kafka_13837) or part.remote(replica_id) is not None:
        return E.NONE
    return E.UNKNOWN_LEADER_EPOCH if current_leader_epoch >= 0 else E.NOT_LEADER_FOR_PARTITION


def read_diverging(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, follower: int, fetch_offset: int,
                   last_fetched_epoch: int, follower_start_offset: int):
    """Partition.readRecords' lastFetchedEpoch check (Kafka 2.8.0, FE6; KAFKA-13141 in 2.7.2): the divergingEpoch
    response, an OFFSET_OUT_OF_RANGE one, or None when the follower's log does not diverge (read on)."""
    log = br.logs[p]
    hw, leo, log_start = log.high_watermark, log.log_end_offset, log.log_start_offset   # FE4: before the read
    epoch, end = cache_end_offset_for(log.epoch_cache, last_fetched_epoch, leo)    # lastOffsetForLeaderEpoch
    if end == UNDEFINED_EPOCH_OFFSET or epoch == UNDEFINED_EPOCH:
        delayed.note_error(s, E.OFFSET_OUT_OF_RANGE)
        return FetchResponseData(E.OFFSET_OUT_OF_RANGE, fetch_offset, (), -1, -1)
    if epoch >= last_fetched_epoch and end >= fetch_offset:
        return None
    if not cfg.kafka_13141:
        # Before KAFKA-13141 ReplicaManager.updateFollowerFetchState recorded the diverging fetch's offset too.
        update_follower_fetch_state(cfg, s, br, p, follower, fetch_offset, follower_start_offset, s.now, leo)
    return FetchResponseData(E.NONE, fetch_offset, (), hw, log_start, (epoch, end))


# --------------------------------------------------------------------------- log start offset
def low_watermark_if_leader(br: Broker, p: int) -> int:
    """Partition.lowWatermarkIfLeader (Kafka 2.4.0): the smallest log start offset of the leader and its remote replicas
    that the metadata cache holds alive (no future log here)."""
    part = br.partitions[p]
    low = br.logs[p].log_start_offset
    alive = br.metadata.alive_brokers
    for r in part.remote_replicas:
        if r.broker_id in alive and r.log_start_offset < low:
            low = r.log_start_offset
    return low


def delete_records_on_leader(cfg: ModelConfig, br: Broker, p: int, offset: int) -> tuple:
    """Partition.deleteRecordsOnLeader -> Log.maybeIncrementLogStartOffset (Kafka 2.4.0): (error, requested offset, low
    watermark).  -1 (DeleteRecordsRequest.HIGH_WATERMARK) deletes to the HW; an offset below 0 or above the HW is
    OFFSET_OUT_OF_RANGE; a broker that does not lead the partition answers NOT_LEADER_FOR_PARTITION."""
    part = br.partitions[p]
    if part.leader != br.broker_id or br.logs[p] is None:
        return E.NOT_LEADER_FOR_PARTITION, -1, -1
    log = br.logs[p]
    converted = log.high_watermark if offset == -1 else offset
    if converted < 0 or converted > log.high_watermark:
        return E.OFFSET_OUT_OF_RANGE, -1, -1
    if converted > log.log_start_offset:
        maybe_increment_log_start_offset(br.log_mut(p), converted, cfg.kafka_9491)
    return E.NONE, converted, low_watermark_if_leader(br, p)


# --------------------------------------------------------------------------- leadership
def make_leader(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, ps, now: int) -> bool:
    """Partition.makeLeader (Kafka 2.4.0, M1-M10; 2.7.0 CommittedIsr and clearPending); returns isNewLeader."""
    part = br.partition_mut(p)
    b = br.broker_id
    part.controller_epoch = ps.controller_epoch                                   # M1
    update_assignment_and_isr(part, b, ps.replicas, ps.isr)                       # M2
    log = create_log_if_not_exists(br, p)                                         # M3
    leo = log.log_end_offset
    part.leader_epoch_start_offset = leo                                          # M4
    part.leader_epoch = ps.leader_epoch
    part.zk_version = ps.zk_version
    if cfg.kip_497 and not cfg.kafka_12686:
        clear_pending(br, p)                     # alterIsrManager.clearPending (2.7.0; gone with KAFKA-12686)
    if cfg.kafka_7415:                                                            # M5
        new_cache = cache_assign(log.epoch_cache, ps.leader_epoch, leo)
        if new_cache != log.epoch_cache and cfg.records_have_epochs(p):           # no cache below format 0.11
            br.log_mut(p).epoch_cache = new_cache
    is_new_leader = part.leader != b                                              # M6
    isr = part.isr
    replicas = []
    for r in part.remote_replicas:                                                # M7
        r = r._clone(br._tok)
        reset_last_caught_up_time(r, leo, now, now if r.broker_id in isr else 0)
        if is_new_leader:                                                         # M8
            update_fetch_state(r, -1, -1, 0, -1)
        replicas.append(r)
    part.remote_replicas = tuple(replicas)
    if is_new_leader:
        part.leader = b
    if maybe_increment_leader_hw(cfg, br, p, now):                               # M9 (M10: HW kept)
        delayed.try_complete_delayed_produce(cfg, s, br, p)
    g = s.ghost_mut()
    g.leaders = g.leaders + ((p, ps.leader_epoch, b),)
    note_takeover(s, br, p, ps.leader_epoch)                 # an unclean election's documented losses (ghost)
    return is_new_leader


def make_follower(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, ps) -> bool:
    """Partition.makeFollower (Kafka 2.4.0, F1-F5; 2.7.0 clearPending); returns whether the become-follower steps must run."""
    part = br.partition_mut(p)
    b = br.broker_id
    old_leader, old_epoch = part.leader, part.leader_epoch
    part.controller_epoch = ps.controller_epoch                                   # F1
    update_assignment_and_isr(part, b, ps.replicas, ())                           # F2
    create_log_if_not_exists(br, p)                                               # F3
    part.leader_epoch = ps.leader_epoch                                           # F4
    part.leader_epoch_start_offset = -1
    part.zk_version = ps.zk_version
    if cfg.kip_497 and not cfg.kafka_12686:
        clear_pending(br, p)                     # alterIsrManager.clearPending (2.7.0; gone with KAFKA-12686)
    same_leader = old_leader == ps.leader                                         # F5
    if cfg.kip_320:
        unchanged = same_leader and ps.leader_epoch == old_epoch
    elif cfg.kafka_7164:
        unchanged = same_leader and ps.leader_epoch in (old_epoch, old_epoch + 1)
    else:
        unchanged = same_leader
    if unchanged:
        return False
    part.leader = ps.leader
    return True


# --------------------------------------------------------------------------- leadership with partition epochs (3.x)
def make_leader_3x(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, ps, now: int, adding: tuple = (),
                   removing: tuple = ()) -> bool:
    """Partition.makeLeader (Kafka 3.5.0): an older partition epoch is skipped; the epoch start offset and the
    followers' state are reset only on a new leader epoch; the ISR, the assignment (with a reassignment's adding and
    removing replicas, 3.7.0) and the partition epoch are taken either way."""
    part = br.partition_mut(p)
    if ps.zk_version < part.zk_version:
        return False                             # "already at a newer partition epoch"
    b = br.broker_id
    is_new_leader = part.leader != b
    is_new_epoch = ps.leader_epoch > part.leader_epoch
    if not (cfg.make_leader_keeps_pending_isr and keeps_pending_isr(part, ps)):
        update_assignment_and_isr(part, b, ps.replicas, ps.isr, False, adding, removing)  # CommittedPartitionState
    log = create_log_if_not_exists(br, p)
    if is_new_epoch:
        leo = log.log_end_offset
        new_cache = cache_assign(log.epoch_cache, ps.leader_epoch, leo)           # maybeAssignEpochStartOffset
        if new_cache != log.epoch_cache and cfg.records_have_epochs(p):
            br.log_mut(p).epoch_cache = new_cache
        isr = part.isr
        replicas = []
        for r in part.remote_replicas:                                            # Replica.resetReplicaState
            r = r._clone(br._tok)
            in_sync = now if r.broker_id in isr else 0   # 3.3.0+: lastFetchTimeMs and lastCaughtUpTimeMs alike
            reset_last_caught_up_time(r, leo, in_sync, in_sync)
            if is_new_leader:
                update_fetch_state(r, -1, -1, 0, -1)
                r.broker_epoch = None                # brokerEpoch = Option.empty
            replicas.append(r)
        part.remote_replicas = tuple(replicas)
        part.leader_epoch = ps.leader_epoch
        part.leader_epoch_start_offset = leo
    part.zk_version = ps.zk_version
    part.leader = b
    if maybe_increment_leader_hw(cfg, br, p, now):
        delayed.try_complete_delayed_produce(cfg, s, br, p)
    if is_new_epoch or is_new_leader:
        g = s.ghost_mut()
        g.leaders = g.leaders + ((p, ps.leader_epoch, b),)
        note_takeover(s, br, p, ps.leader_epoch)
    return is_new_leader


def keeps_pending_isr(part: Partition, ps) -> bool:
    """The pending-reset race's fix (model/README.md): a state at the partition epoch the leader already holds, while an
    ISR change built on that epoch is in flight, is the committed state the leader has; it keeps the pending change."""
    return (part.pending_isr is not None and ps.zk_version == part.zk_version and ps.leader == part.leader
            and ps.leader_epoch == part.leader_epoch and tuple(ps.replicas) == part.assigned_replicas)


def make_follower_3x(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, ps, adding: tuple = (),
                     removing: tuple = ()) -> bool:
    """Partition.makeFollower (Kafka 3.5.0): an older partition epoch is skipped; returns whether the leader epoch is
    new, the only case in which the fetcher restarts."""
    part = br.partition_mut(p)
    if ps.zk_version < part.zk_version:
        return False
    update_assignment_and_isr(part, br.broker_id, ps.replicas, (), cfg.follower_clears_remote_replicas, adding,
                              removing)
    create_log_if_not_exists(br, p)
    is_new_epoch = ps.leader_epoch > part.leader_epoch
    part.leader = ps.leader
    part.leader_epoch = ps.leader_epoch
    part.leader_epoch_start_offset = -1
    part.zk_version = ps.zk_version
    return is_new_epoch
