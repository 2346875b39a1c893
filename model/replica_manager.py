"""ReplicaManager: control requests, produce and fetch handling, and the broker's scheduled tasks.

Each function takes the writable cluster ``s`` and a writable broker ``br``
(see ``node.py``) and returns the response errors, which the step records in
the ghost's error-code coverage.
"""

from __future__ import annotations

from . import errors as E
from .config import ModelConfig
from .delayed import (check_enough_replicas_reach_offset, complete_delayed_fetch, delayed_fetch_can_complete,
                      effective_min_isr, get_partition_or_error, leader_partition_or_error, note_consumed, note_error, note_response,
                      respond_produce, try_complete_delayed_fetch, try_complete_delayed_produce)
from .fetch_from_follower import consumer_fetch_with_client_metadata
from .log import append_as_leader, delete_old_segments, truncate_to
from .partition import (create_log_if_not_exists, delete_records_on_leader, follower_replica_error, is_leader,
                        make_follower, make_leader, maybe_increment_leader_hw, maybe_shrink_isr, read_diverging,
                        update_follower_fetch_state)
from .requests import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest
from .state import (FETCHING, OFFLINE, TRUNCATING, Broker, ClusterState, DelayedFetch, DelayedProduce,
                    DeleteRecordsResponseData, FetchResponseData, FetchState, MetadataCache, Partition,
                    PartitionMetadata, ProduceResponseData)
from .node import replace_at

CONSUMER_ID = -1  # FetchRequest.CONSUMER_REPLICA_ID


# --------------------------------------------------------------------------- control requests
def _broker_epoch_stale(br: Broker, req) -> bool:
    """KafkaApis.isBrokerEpochStale (Kafka 2.4.0, C0): an older broker epoch is refused; -1 bypasses."""
    return req.broker_epoch != -1 and req.broker_epoch < br.broker_epoch


def _broker_epoch_from_future(br: Broker, req) -> bool:
    """KafkaApis.isBrokerEpochStale (Kafka 2.4.0, C0): a newer broker epoch is an IllegalStateException."""
    return req.broker_epoch != -1 and req.broker_epoch > br.broker_epoch


def handle_control_request(cfg: ModelConfig, s: ClusterState, br: Broker, req) -> dict:
    """KafkaApis.handle for the three controller requests (Kafka 2.4.0): partition -> error."""
    if _broker_epoch_stale(br, req):
        note_error(s, E.STALE_BROKER_EPOCH)
        return {p: E.STALE_BROKER_EPOCH for p in _partitions_of(req)}
    if _broker_epoch_from_future(br, req):
        return {}  # the request fails with an exception: no state change, no error code in a response
    if isinstance(req, LeaderAndIsrRequest):
        result = become_leader_or_follower(cfg, s, br, req)
    elif isinstance(req, UpdateMetadataRequest):
        result = maybe_update_metadata_cache(cfg, s, br, req)
    elif isinstance(req, StopReplicaRequest):
        result = stop_replicas(cfg, s, br, req)
    else:  # pragma: no cover - closed set
        raise TypeError(f"unknown control request {req!r}")
    for error in set(result.values()):
        note_error(s, error)
    kind = _RESPONSE_KIND[type(req)]
    for p, error in result.items():
        note_response(s, kind, br.broker_id, p, error)
    return result


_RESPONSE_KIND = {LeaderAndIsrRequest: "leader_and_isr", UpdateMetadataRequest: "update_metadata",
                  StopReplicaRequest: "stop_replica"}


def _partitions_of(req) -> tuple:
    if isinstance(req, StopReplicaRequest):
        return req.partitions
    return tuple(ps.partition for ps in req.partition_states)


def become_leader_or_follower(cfg: ModelConfig, s: ClusterState, br: Broker, req: LeaderAndIsrRequest) -> dict:
    """ReplicaManager.becomeLeaderOrFollower (Kafka 2.4.0, C1-C9)."""
    if req.controller_epoch < br.controller_epoch:                                  # C1: strict <
        return {ps.partition: E.STALE_CONTROLLER_EPOCH for ps in req.partition_states}
    br.controller_epoch = req.controller_epoch                                        # C2
    b = br.broker_id
    result = {}
    to_leader, to_follower = [], []
    for ps in req.partition_states:
        p = ps.partition
        hosted = br.partitions[p]
        if hosted == OFFLINE:                                                         # C3
            result[p] = E.KAFKA_STORAGE_ERROR
            continue
        if hosted is None:
            part = Partition(p)
            part._tok = br._tok
            br.partitions = replace_at(br.partitions, p, part)
            hosted = part
        if ps.leader_epoch > hosted.leader_epoch:                                     # C4
            if b in ps.replicas:
                (to_leader if ps.leader == b else to_follower).append(ps)
            else:
                result[p] = E.UNKNOWN_TOPIC_OR_PARTITION
        else:                                                                         # C5, C6
            result[p] = E.STALE_CONTROLLER_EPOCH
    if to_leader:
        result.update(make_leaders(cfg, s, br, to_leader))                            # C7
    if to_follower:
        result.update(make_followers(cfg, s, br, to_follower))                        # C8
    for ps in req.partition_states:                                                   # C9
        # a partition left without a local log (refused, or no log could be created) is marked Offline
        if br.logs[ps.partition] is None and br.partitions[ps.partition] != OFFLINE:
            br.partitions = replace_at(br.partitions, ps.partition, OFFLINE)
    if not br.hw_checkpoint_started:
        br.hw_checkpoint_started = True
        br.next_hw_checkpoint_ms = s.now
    return result


def make_leaders(cfg: ModelConfig, s: ClusterState, br: Broker, states: list) -> dict:
    """ReplicaManager.makeLeaders (Kafka 2.4.0, C7): stop fetching, then Partition.makeLeader."""
    for ps in states:
        if br.fetchers[ps.partition] is not None:
            br.fetchers = replace_at(br.fetchers, ps.partition, None)
    for ps in states:
        make_leader(cfg, s, br, ps.partition, ps, s.now)
    return {ps.partition: E.NONE for ps in states}


def make_followers(cfg: ModelConfig, s: ClusterState, br: Broker, states: list) -> dict:
    """ReplicaManager.makeFollowers (Kafka 2.4.0, C8, F6): skip unknown leaders, restart fetchers of changed ones."""
    changed = []
    for ps in states:
        if ps.leader in br.metadata.alive_brokers:
            if make_follower(cfg, s, br, ps.partition, ps):
                changed.append(ps)
        else:
            # KAFKA-1647: create the log so its HW is checkpointed; the epoch is not updated.
            create_log_if_not_exists(br, ps.partition)
    for ps in changed:
        start_fetching(cfg, s, br, ps)
    return {ps.partition: E.NONE for ps in states}


def start_fetching(cfg: ModelConfig, s: ClusterState, br: Broker, ps) -> None:
    """ReplicaManager.makeFollowers' become-follower steps (Kafka 2.4.0, F6; 2.8.0 truncate on fetch): the old fetcher
    goes, delayed produces are tried, and a fetcher starts for the new leader and epoch."""
    p = ps.partition
    old = br.fetchers[p]
    if old is not None:
        br.fetchers = replace_at(br.fetchers, p, None)
    try_complete_delayed_produce(cfg, s, br, p)
    if cfg.truncation == "hw":
        # 0.10.2 ReplicaManager.makeFollowers: logManager.truncateTo(hw), then fetch from the LEO.
        log = br.logs[p]
        if log.high_watermark < log.log_end_offset:
            truncate_to(br.log_mut(p), log.high_watermark)
            s.ghost_mut().truncations += 1
        fetch = FetchState(ps.leader, ps.leader_epoch, br.logs[p].log_end_offset, FETCHING)
    elif cfg.kafka_10554 and br.logs[p].epoch_cache:
        # 2.8.0 initialFetchOffset / partitionFetchState: a log with epochs fetches from its LEO at once, with
        # lastFetchedEpoch; the leader's divergingEpoch drives truncation (no OffsetsForLeaderEpoch round).
        fetch = FetchState(ps.leader, ps.leader_epoch, br.logs[p].log_end_offset, FETCHING)
    else:
        # InitialFetchState(leader, leaderEpoch, fetchOffset = HW); new partitions start Truncating.
        fetch = FetchState(ps.leader, ps.leader_epoch, br.logs[p].high_watermark, TRUNCATING)
    if old is not None and old.epoch_request and old.leader == ps.leader:
        # removeFetcherForPartitions + addFetcherForPartitions (Kafka 2.4.0): the partition goes back to the same
        # leader's fetcher thread, whose OffsetsForLeaderEpoch request is still in flight (KAFKA-7786's window)
        fetch.epoch_request = old.epoch_request
    fetch._tok = br._tok
    br.fetchers = replace_at(br.fetchers, p, fetch)


def maybe_update_metadata_cache(cfg: ModelConfig, s: ClusterState, br: Broker, req: UpdateMetadataRequest) -> dict:
    """ReplicaManager.maybeUpdateMetadataCache (Kafka 2.4.0, C10; 2.7.0 keeps the controller id): never touches Partition state."""
    if req.controller_epoch < br.controller_epoch:
        return {ps.partition: E.STALE_CONTROLLER_EPOCH for ps in req.partition_states}
    parts = list(br.metadata.partitions) or [None] * len(br.partitions)
    for ps in req.partition_states:
        if ps.leader == -2:  # LeaderDuringDelete: MetadataCache.removePartitionInfo
            parts[ps.partition] = None
        else:
            parts[ps.partition] = PartitionMetadata(ps.leader, ps.leader_epoch, ps.isr, ps.replicas, ps.offline_replicas)
    # MetadataCache.getControllerId (where AlterIsr goes) is kept only with KIP-497, so 2.4 states stay as they were
    br.metadata = MetadataCache(tuple(req.live_brokers), tuple(parts), req.controller_id if cfg.kip_497 else -1)
    br.controller_epoch = req.controller_epoch
    return {ps.partition: E.NONE for ps in req.partition_states}


def stop_replicas(cfg: ModelConfig, s: ClusterState, br: Broker, req: StopReplicaRequest) -> dict:
    """ReplicaManager.stopReplicas (Kafka 2.4.0, C11): the controller-epoch check (a top-level STALE_CONTROLLER_EPOCH,
    reported for every partition), the fetchers removed, then stopReplica per partition.  No leader-epoch check: that
    is KIP-570's, Kafka 2.6.0."""
    if req.controller_epoch < br.controller_epoch:                                  # strict <
        return {p: E.STALE_CONTROLLER_EPOCH for p in req.partitions}
    br.controller_epoch = req.controller_epoch
    for p in req.partitions:                              # replicaFetcherManager.removeFetcherForPartitions
        if br.fetchers[p] is not None:
            br.fetchers = replace_at(br.fetchers, p, None)
    return {p: stop_replica(cfg, s, br, p, req.delete_partitions) for p in req.partitions}


def stop_replica(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, delete: bool) -> str:
    """ReplicaManager.stopReplica (Kafka 2.4.0): with delete, an Offline partition fails with KAFKA_STORAGE_ERROR, an
    Online one is removed from allPartitions and its log deleted with its checkpoint entries (a log without a hosted
    partition too); then completeDelayedFetchOrProduceRequests (a waiting produce of a removed partition answers
    getPartitionOrError's error: NOT_LEADER_FOR_PARTITION while the metadata cache knows it)."""
    if delete:
        if br.partitions[p] == OFFLINE:
            return E.KAFKA_STORAGE_ERROR                 # KafkaStorageException: nothing deleted, nothing completed
        if br.partitions[p] is not None:
            br.partitions = replace_at(br.partitions, p, None)
        if br.logs[p] is not None:                       # Partition.delete / logManager.asyncDelete
            br.logs = replace_at(br.logs, p, None)
            if br.hw_checkpoint[p] is not None:
                br.hw_checkpoint = replace_at(br.hw_checkpoint, p, None)
    try_complete_delayed_produce(cfg, s, br, p)
    return E.NONE


# --------------------------------------------------------------------------- produce
def append_records(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, acks: int, n_records: int = 1) -> str:
    """ReplicaManager.appendRecords + Partition.appendRecordsToLeader (Kafka 2.4.0, P1-P6)."""
    if acks not in (-1, 0, 1):                                                        # P1
        return _produce_error(s, br, p, acks, E.INVALID_REQUIRED_ACKS)
    part, error = leader_partition_or_error(br, p)                                   # P2
    if part is None:
        return _produce_error(s, br, p, acks, error)
    if acks == -1 and len(part.isr) < effective_min_isr(cfg, part):                   # P3 (3.7.0: effectiveMinIsr)
        return _produce_error(s, br, p, acks, E.NOT_ENOUGH_REPLICAS)
    g = s.ghost_mut()
    record_ids = tuple(range(g.next_record_id, g.next_record_id + n_records))
    g.next_record_id += n_records
    g.produced += n_records
    # the batch's timestamp: the clock at the leader's append (ClusterState.record_timestamps)
    s.record_timestamps = s.record_timestamps + (s.now,) * n_records
    first, last = append_as_leader(br.log_mut(p), record_ids, part.leader_epoch,      # P4
                                   cfg.records_have_epochs(p))
    if maybe_increment_leader_hw(cfg, br, p, s.now):
        try_complete_delayed_produce(cfg, s, br, p)
    elif br.delayed_fetches:   # Partition.appendRecordsToLeader: no HW move, checkAndCompleteFetch all the same
        try_complete_delayed_fetch(cfg, s, br, p)
    if acks != -1:                                                                    # P5: acks=1 answers now
        note_error(s, E.NONE)
        if acks == 1:
            note_response(s, "produce", br.broker_id, p, ProduceResponseData(E.NONE, first))
        return E.NONE
    dp = DelayedProduce(g.next_request_id, p, last + 1, first, record_ids,          # P6
                        s.now + cfg.produce_timeout_ms)
    g.next_request_id += 1
    done, error = check_enough_replicas_reach_offset(cfg, br, p, dp.required_offset)  # tryCompleteElseWatch
    if done:
        respond_produce(s, br, dp, error)
        return error
    br.delayed_produces = br.delayed_produces + (dp,)
    return E.NONE


#: the response of each error answered at once (made once: the model's inner loop)
_PRODUCE_ERRORS = {e: ProduceResponseData(e, -1) for e in E.CODES}


def _produce_error(s: ClusterState, br: Broker, p: int, acks: int, error: str) -> str:
    """An error answered at once (acks 0 gets no response at all)."""
    note_error(s, error)
    if acks != 0:
        note_response(s, "produce", br.broker_id, p, _PRODUCE_ERRORS[error])
    return error


# --------------------------------------------------------------------------- fetch
#: (error, fetch offset) -> its response, made once: most client requests of a walk are refused alike, and the
#: same object lets ``note_response`` see a repeated answer by identity
_FETCH_ERRORS: dict = {}


def _fetch_error(error: str, fetch_offset: int) -> FetchResponseData:
    r = _FETCH_ERRORS.get((error, fetch_offset))
    if r is None:
        if len(_FETCH_ERRORS) >= 4096:
            _FETCH_ERRORS.clear()
        r = _FETCH_ERRORS[error, fetch_offset] = FetchResponseData(error, fetch_offset, (), -1, -1)
    return r


def fetch_messages(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, replica_id: int, fetch_offset: int,
                   current_leader_epoch: int, follower_log_start: int = -1,
                   isolation: str = "read_uncommitted", last_fetched_epoch: int = -1,
                   replica_epoch: int | None = None) -> FetchResponseData:
    """ReplicaManager.fetchMessages / readFromLocalLog (Kafka 2.4.0, FE1-FE5; 2.8.0's lastFetchedEpoch, FE6).
    ``replica_epoch``: the broker epoch a follower's Fetch carries when it is not its sender's current one (a Fetch
    from an earlier incarnation, KIP-903); None: the sender's current epoch."""
    part, error = get_partition_or_error(br, p)
    is_follower = replica_id >= 0
    if part is None:
        pass
    elif current_leader_epoch >= 0 and part.leader_epoch > current_leader_epoch:      # FE3 (KIP-320)
        error = E.FENCED_LEADER_EPOCH
    elif current_leader_epoch >= 0 and part.leader_epoch < current_leader_epoch:
        error = E.UNKNOWN_LEADER_EPOCH
    elif not is_leader(br, part) or br.logs[p] is None:
        error = E.NOT_LEADER_FOR_PARTITION
    elif is_follower:
        error = follower_replica_error(cfg, part, replica_id, current_leader_epoch)     # KAFKA-13837 (3.3.0)
    else:
        error = E.NONE
    if error != E.NONE:
        note_error(s, error)
        if is_follower and not cfg.kafka_8400 and error in (E.FENCED_LEADER_EPOCH, E.UNKNOWN_LEADER_EPOCH) \
                and is_leader(br, part):
            # Before KAFKA-8400 the follower's fetch state was updated even though the read failed.
            log = br.logs[p]
            update_follower_fetch_state(cfg, s, br, p, replica_id, fetch_offset, follower_log_start,
                                        s.now, log.log_end_offset)
        return _fetch_error(error, fetch_offset)
    if last_fetched_epoch >= 0:                                                       # FE6 (KAFKA-10554)
        diverging = read_diverging(cfg, s, br, p, replica_id, fetch_offset, last_fetched_epoch, follower_log_start)
        if diverging is not None:
            return diverging
    log = br.logs[p]
    hw, leo, log_start = log.high_watermark, log.log_end_offset, log.log_start_offset  # FE4: before the read
    if fetch_offset > leo or fetch_offset < log_start:                                # FE5
        note_error(s, E.OFFSET_OUT_OF_RANGE)
        return _fetch_error(E.OFFSET_OUT_OF_RANGE, fetch_offset)
    max_offset = leo if is_follower else hw                                           # FE1 (LSO == HW: no txns)
    entries = log.read(fetch_offset, max_offset) if fetch_offset < max_offset else ()
    if replica_epoch is not None and stale_replica_epoch(cfg, br, replica_id, replica_epoch):
        note_error(s, E.NOT_LEADER_FOR_PARTITION)            # the read is thrown away with the fetch state untouched
        return _fetch_error(E.NOT_LEADER_FOR_PARTITION, fetch_offset)
    if is_follower and not update_follower_fetch_state(cfg, s, br, p, replica_id, fetch_offset,
                                                       follower_log_start, s.now, leo, broker_epoch=replica_epoch):
        entries = ()  # updateFollowerFetchState: a fetch from a non-replica gets empty records
    return FetchResponseData(E.NONE, fetch_offset, entries, hw, log_start)


def stale_replica_epoch(cfg: ModelConfig, br: Broker, follower: int, broker_epoch: int) -> bool:
    """Replica.updateFetchStateOrThrow's fence (Kafka 3.7.0, KAFKA-15221): a Fetch whose broker epoch is older than
    the one the leader's metadata cache holds for the unfenced follower (getAliveBrokerEpoch) is refused with
    NOT_LEADER_OR_FOLLOWER; -1 (no epoch sent) bypasses it.  KRaft with KIP-903 only."""
    if not (cfg.kip_500 and cfg.kip_903 and cfg.kafka_15221) or broker_epoch == -1:
        return False
    md = br.metadata
    return follower in md.alive_brokers and follower < len(md.broker_epochs) and md.broker_epochs[follower] > broker_epoch


def read_for_consumer(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, fetch_offset: int,
                      current_leader_epoch: int, client_metadata: bool, rack: str, isolation: str):
    """ReplicaManager.readFromLocalLog for a consumer's partition (Kafka 2.4.0): with ClientMetadata
    (fetchOnlyFromLeader = false, KIP-392) any replica reads, else only the leader."""
    if client_metadata:
        return consumer_fetch_with_client_metadata(cfg, s, br, p, current_leader_epoch, rack, fetch_offset)
    return fetch_messages(cfg, s, br, p, CONSUMER_ID, fetch_offset, current_leader_epoch, isolation=isolation)


def next_fetch_request_id(br: Broker) -> int:
    """The id a parked fetch gets: the smallest not held by another of the broker's parked fetches (a name for the
    request, as a connection's correlation id; reused, so that the ids, like the purgatory, stay bounded)."""
    used = {df.request_id for df in br.delayed_fetches}
    rid = 1
    while rid in used:
        rid += 1
    return rid


def fetch_waiting(br: Broker, p: int, fetch_offset: int, min_bytes: int, current_leader_epoch: int,
                  client_metadata: bool, rack: str, isolation: str) -> bool:
    """Whether the same consumer's fetch (the same request) already waits at the broker: a consumer sends a broker
    its next fetch only once the last one is answered (Fetcher: one request in flight per node)."""
    for df in br.delayed_fetches:
        if (df.partition == p and df.min_bytes == min_bytes and df.current_leader_epoch == current_leader_epoch
                and df.client_metadata == client_metadata and df.rack == rack and df.isolation == isolation
                and (fetch_offset < 0 or df.fetch_offset == fetch_offset)):
            return True
    return False


def fetch_messages_with_wait(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, fetch_offset: int,
                             min_bytes: int, max_wait_ms: int, current_leader_epoch: int, client_metadata: bool,
                             rack: str, isolation: str) -> None:
    """ReplicaManager.fetchMessages for a consumer with fetch.max.wait.ms and fetch.min.bytes (Kafka 2.4.0): read
    first; answer at once when the request does not wait, the read failed or found min_bytes records, else park a
    DelayedFetch (tryCompleteElseWatch).  ``fetch_offset`` -1: the serving replica's HW, a caught-up consumer."""
    if fetch_offset < 0:
        log = br.logs[p]
        fetch_offset = log.high_watermark if log is not None else 0
    resp = read_for_consumer(cfg, s, br, p, fetch_offset, current_leader_epoch, client_metadata, rack, isolation)
    if max_wait_ms <= 0 or resp.error != E.NONE or len(resp.entries) >= min_bytes:
        if resp.error != E.NONE:
            note_error(s, resp.error)
        note_consumed(s, br, p, resp)
        return
    # a preferred read replica's answer carries UnknownOffsetMetadata, which tryComplete skips
    known = getattr(resp, "preferred_read_replica", -1) < 0
    df = DelayedFetch(next_fetch_request_id(br), p, fetch_offset, known, min_bytes, current_leader_epoch,
                      client_metadata, rack, isolation, s.now + max_wait_ms)
    if delayed_fetch_can_complete(br, df):                                            # tryCompleteElseWatch
        complete_delayed_fetch(cfg, s, br, df)
        return
    br.delayed_fetches = br.delayed_fetches + (df,)


# --------------------------------------------------------------------------- scheduled tasks
def isr_expiration(cfg: ModelConfig, s: ClusterState, br: Broker) -> None:
    """ReplicaManager.maybeShrinkIsr, the isr-expiration task (Kafka 2.4.0, SH1): every non-offline partition."""
    for p, part in enumerate(br.partitions):
        if type(part) is Partition:
            maybe_shrink_isr(cfg, s, br, p, s.now)
    br.next_isr_expiration_ms += cfg.isr_expiration_period_ms


def maybe_propagate_isr_changes(cfg: ModelConfig, s: ClusterState, br: Broker) -> None:
    """ReplicaManager.maybePropagateIsrChanges (Kafka 2.4.0, 1.13): one notification after 5 s quiet or 60 s."""
    now = s.now
    if br.isr_change_set and s.zk.sessions[br.broker_id] and (
            br.last_isr_change_ms + cfg.isr_change_blackout_ms < now
            or br.last_isr_propagation_ms + cfg.isr_change_max_delay_ms < now):
        zk = s.zk_mut()
        zk.isr_change_notifications = zk.isr_change_notifications + ((zk.next_sequence, br.isr_change_set),)
        zk.next_sequence += 1
        br.isr_change_set = ()
        br.last_isr_propagation_ms = now
    br.next_isr_propagation_ms += cfg.isr_propagation_interval_ms


def checkpoint_high_watermarks(cfg: ModelConfig, s: ClusterState, br: Broker) -> None:
    """ReplicaManager.checkpointHighWatermarks (Kafka 2.4.0, 1.14): the file holds the HW of hosted partitions only."""
    br.hw_checkpoint = tuple(
        br.logs[p].high_watermark if type(part) is Partition and br.logs[p] is not None else None
        for p, part in enumerate(br.partitions))
    br.next_hw_checkpoint_ms += cfg.hw_checkpoint_interval_ms


# --------------------------------------------------------------------------- log start offset
def delete_records(cfg: ModelConfig, s: ClusterState, br: Broker, p: int, offset: int) -> DeleteRecordsResponseData:
    """KafkaApis.handleDeleteRecordsRequest -> ReplicaManager.deleteRecords / deleteRecordsOnLocalLog (Kafka 2.4.0): a
    partition the metadata cache does not know is UNKNOWN_TOPIC_OR_PARTITION; getPartitionOrException(expectLeader)
    then Partition.deleteRecordsOnLeader.  DelayedDeleteRecords is answered at once: the response carries the low
    watermark at the request (Kafka's purgatory answers when it reaches the requested offset, or REQUEST_TIMED_OUT)."""
    g = s.ghost_mut()
    g.delete_records += 1
    known = p < len(br.metadata.partitions) and br.metadata.partitions[p] is not None
    if not known:
        error, requested, low = E.UNKNOWN_TOPIC_OR_PARTITION, -1, -1
    else:
        part, error = get_partition_or_error(br, p)
        requested = low = -1
        if part is not None:
            error, requested, low = delete_records_on_leader(cfg, br, p, offset)
    resp = DeleteRecordsResponseData(error, low, requested)
    note_error(s, error)
    note_response(s, "delete_records", br.broker_id, p, resp)
    return resp


def run_log_retention(cfg: ModelConfig, s: ClusterState, br: Broker, p: int) -> bool:
    """LogManager.cleanupLogs -> Log.deleteOldSegments on one log (Kafka 2.4.0): size retention
    (``retention_records``), within the HW with KAFKA-5634.  Runs on leaders and followers alike, each on its own HW."""
    s.ghost_mut().retention_runs += 1
    log = br.logs[p]
    if log is None:
        return False
    return delete_old_segments(br.log_mut(p), cfg.retention_records, cfg.kafka_5634, cfg.kafka_9491)
