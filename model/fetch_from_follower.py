"""KIP-392 (Kafka 2.4.0): consumers that send ClientMetadata may fetch from a follower, and the leader may point them
at a preferred read replica.

A FetchRequest v11+ from a consumer carries ClientMetadata (``client.rack``).  Then ``fetchOnlyFromLeader`` is false
(``ReplicaManager.fetchMessages``): any replica hosting the partition serves the read, up to its own HW, after the
KIP-320 epoch check.  When the broker is the leader and ``replica.selector.class`` is set, it first asks the selector
(``ReplicaManager.findPreferredReadReplica``); a replica other than itself is returned as ``preferredReadReplica``
with no records.  An older consumer's fetch (no ClientMetadata) is the model's ``ConsumerFetch``: leader only.
"""

from __future__ import annotations

from . import errors as E
from .config import ModelConfig
from .list_offsets import OffsetsError, get_partition_or_exception, local_log_with_epoch_or_exception
from .state import Broker, ClientMetadataFetchResponseData as Response, ClusterState, Partition

#: replica.selector.class: "" none (Kafka 2.4.0's default), "rack-aware" RackAwareReplicaSelector
REPLICA_SELECTORS = ("", "rack-aware")


def rack_aware_select(client_rack: str, views: list, leader_view: tuple):
    """RackAwareReplicaSelector.select (Kafka 2.4.0): the leader unless the client names a rack without the leader
    and with replicas; then the most caught-up of them (ReplicaView.comparator: LEO, then the shortest time since
    caught up, then the broker id).  A view is (broker, rack, LEO, ms since caught up)."""
    if not client_rack:
        return leader_view
    same = [v for v in views if v[1] == client_rack]
    if not same or leader_view in same:
        return leader_view
    return max(same, key=lambda v: (v[2], -v[3], v[0]))


def find_preferred_read_replica(cfg: ModelConfig, s: ClusterState, br: Broker, part: Partition, fetch_offset: int,
                                client_rack: str) -> int:
    """ReplicaManager.findPreferredReadReplica (Kafka 2.4.0) for a consumer: -1 (None) unless this broker leads and a
    selector is configured and picks a live replica other than the leader that holds ``fetch_offset``."""
    if part.leader != br.broker_id or not cfg.replica_selector:
        return -1
    alive = br.metadata.alive_brokers          # getPartitionReplicaEndpoints: endpoints of live brokers only

    def rack(b: int):
        return cfg.racks[b] if cfg.racks and b in alive else None

    views = [(r.broker_id, rack(r.broker_id), r.log_end_offset, s.now - r.last_caught_up_time_ms)
             for r in part.remote_replicas
             if r.log_end_offset >= fetch_offset and r.log_start_offset <= fetch_offset]
    leader_view = (br.broker_id, rack(br.broker_id), br.logs[part.partition].log_end_offset, 0)
    chosen = rack_aware_select(client_rack, views + [leader_view], leader_view)
    if chosen == leader_view or chosen[1] is None:
        return -1
    return chosen[0]


def consumer_fetch_with_client_metadata(cfg: ModelConfig, s: ClusterState, br: Broker, p: int,
                                        current_leader_epoch: int, client_rack: str, fetch_offset: int = -1) -> Response:
    """ReplicaManager.fetchMessages / readFromLocalLog with ClientMetadata (Kafka 2.4.0, KIP-392): served by any
    replica (fetchOnlyFromLeader = false) from ``fetch_offset`` (-1: its log start), up to its HW; or an empty answer
    naming the preferred read replica."""
    log = br.logs[p]
    given = fetch_offset >= 0
    if not given:
        fetch_offset = log.log_start_offset if log is not None else 0
    try:
        part = get_partition_or_exception(br, p, expect_leader=False)
        preferred = find_preferred_read_replica(cfg, s, br, part, fetch_offset, client_rack)
        log = local_log_with_epoch_or_exception(br, part, current_leader_epoch, require_leader=False)
    except OffsetsError as e:
        return Response(e.error, fetch_offset, (), -1, -1)
    hw = log.high_watermark
    if preferred >= 0:   # fetchOffsetSnapshot: the offsets, no records
        return Response(E.NONE, fetch_offset, (), hw, log.log_start_offset, preferred_read_replica=preferred)
    if given and not log.log_start_offset <= fetch_offset <= log.log_end_offset:   # Log.read's range check
        return Response(E.OFFSET_OUT_OF_RANGE, fetch_offset, (), -1, -1)
    entries = log.read(fetch_offset, hw) if fetch_offset < hw else ()
    return Response(E.NONE, fetch_offset, entries, hw, log.log_start_offset)
