"""Replica assignment for new partitions, as Kafka 2.4.0's ``kafka.admin.AdminUtils`` does it.

Kafka picks the replicas of a new partition (topic creation, or partitions added
to a topic) without looking at load, only at broker ids and racks:

* Brokers are taken in ascending id order (Kafka's callers sort them by id
  before handing them to ``AdminUtils``).
* Rack-unaware (no broker has a rack): partition ``p``'s first replica, its
  preferred leader, is broker ``(p + startIndex) mod n`` of that list, so leaders
  go round-robin.  Replica ``j`` (``j >= 1``) sits a fixed distance after the
  first one, ``1 + (shift + j - 1) mod (n - 1)``, which never lands on the first
  replica.  ``shift`` starts at ``nextReplicaShift`` and grows by one each time
  the partition id passes a multiple of ``n``, so successive rounds do not
  repeat the same follower pattern.
* Rack-aware (every broker has a rack): the brokers are first interleaved by
  rack (sorted racks, each rack's brokers in ascending id order), and the same
  round-robin runs on that list, with the shift scaled by the number of racks.
  Walking forward from the leader, a candidate is skipped while its rack already
  holds a replica of the partition and some rack holds none, or while it
  already holds a replica and some broker holds none.
* Some brokers with a rack and some without is an error, as are a replication
  factor below 1 or above the broker count, and fewer than one partition.

Kafka draws ``startIndex`` and ``nextReplicaShift`` at random unless a start
index is fixed.  Here both are explicit arguments, so every function is pure
and deterministic; :func:`draw_random_start` reproduces Kafka's two draws from a
caller-supplied ``random.Random``.

An assignment is a tuple of replica tuples: element ``i`` is the replica list
(assigned-replicas order, first = preferred leader) of partition
``start_partition_id + i``, so with the default start it is indexed by
partition id.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "Assignment",
    "AssignmentError",
    "BrokerMetadata",
    "assign_replicas_to_brokers",
    "assign_replicas_to_brokers_rack_aware",
    "assign_replicas_to_brokers_rack_unaware",
    "draw_random_start",
    "rack_alternated_broker_list",
    "replica_index",
    "to_partition_map",
]

#: Replica lists of consecutive partitions; see the module docstring.
Assignment = tuple[tuple[int, ...], ...]


class AssignmentError(ValueError):
    """Kafka 2.4.0 AdminUtils' AdminOperationException / InvalidPartitions- / InvalidReplicationFactorException."""


@dataclass(frozen=True, slots=True)
class BrokerMetadata:
    """kafka.admin.BrokerMetadata (Kafka 2.4.0): a broker id and its optional rack."""

    id: int
    rack: str | None = None


def replica_index(first_replica_index: int, second_replica_shift: int, follower: int, n_brokers: int) -> int:
    """AdminUtils.replicaIndex (Kafka 2.4.0): list position of a follower, from the leader's position."""
    if n_brokers < 2:
        raise AssignmentError("a follower position needs at least 2 brokers")
    if second_replica_shift < 0 or follower < 0 or first_replica_index < 0:
        raise AssignmentError("positions and shifts must be non-negative")
    # Distance from the first replica is in 1..n-1, so never the leader itself.
    distance = 1 + (second_replica_shift + follower) % (n_brokers - 1)
    return (first_replica_index + distance) % n_brokers


def _java_string_order(text: str) -> bytes:
    # Scala sorts rack names with java.lang.String.compareTo, i.e. by UTF-16
    # code units; big-endian UTF-16 bytes compare the same way.
    return text.encode("utf-16-be", "surrogatepass")


def rack_alternated_broker_list(broker_racks: Mapping[int, str]) -> tuple[int, ...]:
    """AdminUtils.getRackAlternatedBrokerList (Kafka 2.4.0): brokers interleaved by sorted rack."""
    by_rack: dict[str, list[int]] = {}
    for broker_id, rack in broker_racks.items():
        by_rack.setdefault(rack, []).append(broker_id)
    # One column per rack (racks in sorted order, ids ascending inside a rack);
    # read the columns row by row, skipping racks that have run out.
    columns = [sorted(by_rack[rack]) for rack in sorted(by_rack, key=_java_string_order)]
    depth = max((len(c) for c in columns), default=0)
    return tuple(column[row] for row in range(depth) for column in columns if row < len(column))


def _check_sizes(n_partitions: int, replication_factor: int, n_brokers: int) -> None:
    if n_partitions <= 0:
        raise AssignmentError("number of partitions must be larger than 0")
    if replication_factor <= 0:
        raise AssignmentError("replication factor must be larger than 0")
    if replication_factor > n_brokers:
        raise AssignmentError(
            f"replication factor: {replication_factor} larger than available brokers: {n_brokers}"
        )


def _check_start(start_index: int, next_replica_shift: int | None) -> int:
    if start_index < 0:
        raise AssignmentError(
            "start index must be >= 0 (Kafka's random start: pass values from draw_random_start)"
        )
    shift = start_index if next_replica_shift is None else next_replica_shift
    if shift < 0:
        raise AssignmentError("next replica shift must be >= 0")
    return shift


def assign_replicas_to_brokers_rack_unaware(
    n_partitions: int,
    replication_factor: int,
    broker_list: Sequence[int],
    start_index: int,
    start_partition_id: int = 0,
    next_replica_shift: int | None = None,
) -> Assignment:
    """AdminUtils.assignReplicasToBrokersRackUnaware (Kafka 2.4.0); broker_list is used in the order given."""
    brokers = tuple(broker_list)
    n = len(brokers)
    _check_sizes(n_partitions, replication_factor, n)
    shift = _check_start(start_index, next_replica_shift)
    partition_id = max(0, start_partition_id)
    result: list[tuple[int, ...]] = []
    for _ in range(n_partitions):
        if partition_id > 0 and partition_id % n == 0:
            shift += 1
        first = (partition_id + start_index) % n
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[replica_index(first, shift, j, n)])
        result.append(tuple(replicas))
        partition_id += 1
    return tuple(result)


def assign_replicas_to_brokers_rack_aware(
    n_partitions: int,
    replication_factor: int,
    brokers: Sequence[BrokerMetadata],
    start_index: int,
    start_partition_id: int = 0,
    next_replica_shift: int | None = None,
) -> Assignment:
    """AdminUtils.assignReplicasToBrokersRackAware (Kafka 2.4.0); every broker must have a rack."""
    rack_of: dict[int, str] = {}
    for broker in brokers:
        if broker.rack is None:
            raise AssignmentError(f"broker {broker.id} has no rack for rack-aware assignment")
        rack_of[broker.id] = broker.rack
    arranged = rack_alternated_broker_list(rack_of)
    n = len(arranged)
    _check_sizes(n_partitions, replication_factor, n)
    shift = _check_start(start_index, next_replica_shift)
    n_racks = len(set(rack_of.values()))
    partition_id = max(0, start_partition_id)
    result: list[tuple[int, ...]] = []
    for _ in range(n_partitions):
        if partition_id > 0 and partition_id % n == 0:
            shift += 1
        first = (partition_id + start_index) % n
        leader = arranged[first]
        replicas = [leader]
        racks_used = {rack_of[leader]}
        brokers_used = {leader}
        # k runs on across the followers of this partition.  The candidates it
        # yields cycle through every broker but the leader, so each follower
        # is found: an unused broker on an unused rack exists while some rack
        # is unused, and any unused broker does once every rack is used.
        k = 0
        for _follower in range(replication_factor - 1):
            while True:
                candidate = arranged[replica_index(first, shift * n_racks, k, n)]
                rack = rack_of[candidate]
                k += 1
                rack_ok = rack not in racks_used or len(racks_used) == n_racks
                broker_ok = candidate not in brokers_used or len(brokers_used) == n
                if rack_ok and broker_ok:
                    replicas.append(candidate)
                    racks_used.add(rack)
                    brokers_used.add(candidate)
                    break
        result.append(tuple(replicas))
        partition_id += 1
    return tuple(result)


def _as_metadata(broker: BrokerMetadata | int) -> BrokerMetadata:
    if isinstance(broker, BrokerMetadata):
        return broker
    if isinstance(broker, int) and not isinstance(broker, bool):
        return BrokerMetadata(broker, None)
    raise TypeError(f"broker must be a BrokerMetadata or an int id, not {broker!r}")


def assign_replicas_to_brokers(
    n_partitions: int,
    replication_factor: int,
    brokers: Sequence[BrokerMetadata] | Sequence[int],
    fixed_start_index: int,
    start_partition_id: int = 0,
    next_replica_shift: int | None = None,
) -> Assignment:
    """AdminUtils.assignReplicasToBrokers (Kafka 2.4.0), on brokers sorted by id as AdminZkClient.getBrokerMetadatas does."""
    metadata = sorted((_as_metadata(b) for b in brokers), key=lambda b: b.id)
    # Kafka checks in this order: partitions, replication factor, racks.
    _check_sizes(n_partitions, replication_factor, len(metadata))
    ids = [b.id for b in metadata]
    if len(set(ids)) != len(ids):
        # Kafka's broker list comes from a map keyed by id, so it cannot repeat one.
        raise AssignmentError(f"broker ids repeat: {ids}")
    with_rack = sum(1 for b in metadata if b.rack is not None)
    if with_rack == 0:
        return assign_replicas_to_brokers_rack_unaware(
            n_partitions, replication_factor, ids, fixed_start_index, start_partition_id, next_replica_shift
        )
    if with_rack < len(metadata):
        raise AssignmentError("Not all brokers have rack information for replica rack aware assignment")
    return assign_replicas_to_brokers_rack_aware(
        n_partitions, replication_factor, metadata, fixed_start_index, start_partition_id, next_replica_shift
    )


def draw_random_start(rng: random.Random, n_brokers: int) -> tuple[int, int]:
    """AdminUtils.assignReplicasToBrokers* (Kafka 2.4.0) random startIndex then nextReplicaShift, from rng."""
    if n_brokers <= 0:
        raise AssignmentError("no brokers to draw a start index for")
    start_index = rng.randrange(n_brokers)
    next_replica_shift = rng.randrange(n_brokers)
    return start_index, next_replica_shift


def to_partition_map(assignment: Assignment, start_partition_id: int = 0) -> dict[int, tuple[int, ...]]:
    """AdminUtils.assignReplicasToBrokers (Kafka 2.4.0) result shape: partition id -> replica list."""
    first = max(0, start_partition_id)
    return {first + i: replicas for i, replicas in enumerate(assignment)}
