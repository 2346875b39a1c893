"""The partition metrics Kafka's tests read, as pure predicates over one broker's partition state.

Kafka's ``Partition`` exposes ``isUnderReplicated``, ``isUnderMinIsr`` and ``isAtMinIsr`` for the
UnderReplicatedPartitions, UnderMinIsrPartitionCount and AtMinIsrPartitionCount gauges, and PartitionTest asserts on
them.  They read only the leader's partition state, so here they are functions of a ``Partition`` and the config,
never stored in the state (no state field, no key or fingerprint to keep in step).  A trace's checks reach them by
a path ``metrics.<broker>.<partition>.<name>`` (``metric_at``), which ``properties/replay.py`` evaluates beside the
state's own paths.
"""

from __future__ import annotations

from .config import ModelConfig
from .delayed import effective_min_isr
from .state import ClusterState, Partition

#: the path prefix a trace's check uses for a metric
PREFIX = "metrics."


def _leader_partition(s: ClusterState, b: int, p: int):
    """The Partition broker b hosts for p if b is a live broker leading it (Partition.leaderLogIfLocal), else None."""
    if not 0 <= b < len(s.brokers):
        return None
    br = s.brokers[b]
    if not br.alive or not 0 <= p < len(br.partitions):
        return None
    part = br.partitions[p]
    return part if type(part) is Partition and part.leader == b else None


def is_under_replicated(cfg: ModelConfig, part: Partition | None) -> bool:
    """Partition.isUnderReplicated (Kafka 2.4.0: ISR smaller than allReplicaIds; 2.5.0, KIP-352: than
    assignmentState.replicationFactor, which leaves out a reassignment's adding replicas, kept apart in KRaft only):
    the leader's committed ISR is missing an assigned replica."""
    return part is not None and len(part.isr) < len(part.assigned_replicas) - len(part.adding_replicas)


def is_under_min_isr(cfg: ModelConfig, part: Partition | None) -> bool:
    """Partition.isUnderMinIsr (Kafka 2.4.0; 3.7.0 compares with effectiveMinIsr, KAFKA-15583): the leader's committed
    ISR is smaller than min.insync.replicas."""
    return part is not None and len(part.isr) < effective_min_isr(cfg, part)


def is_at_min_isr(cfg: ModelConfig, part: Partition | None) -> bool:
    """Partition.isAtMinIsr (Kafka 2.4.0; 3.7.0 compares with effectiveMinIsr, KAFKA-15583): the leader's committed ISR
    has exactly min.insync.replicas members."""
    return part is not None and len(part.isr) == effective_min_isr(cfg, part)


#: the metrics a check may name, by their name in a path
METRICS = {"under_replicated": is_under_replicated, "under_min_isr": is_under_min_isr, "at_min_isr": is_at_min_isr}


def metric_at(cfg: ModelConfig, s: ClusterState, path: str) -> bool:
    """The value of ``metrics.<broker>.<partition>.<name>`` in state s; KeyError (naming the path) if it names no
    metric.  A broker that is down or does not lead the partition reports False for each, as Kafka's gauges do."""
    parts = path.split(".")
    if (len(parts) != 4 or parts[0] + "." != PREFIX or not parts[1].isdigit() or not parts[2].isdigit()
            or parts[3] not in METRICS):
        raise KeyError(path)
    b, p = int(parts[1]), int(parts[2])
    if b >= cfg.n_brokers or p >= cfg.n_partitions:
        raise KeyError(path)
    return METRICS[parts[3]](cfg, _leader_partition(s, b, p))


def leader_metrics(cfg: ModelConfig, s: ClusterState, b: int, p: int) -> tuple:
    """The names of the metrics that hold for broker b's partition p, in METRICS' order (the step table's words)."""
    part = _leader_partition(s, b, p)
    if part is None:
        return ()
    return tuple(name for name, f in METRICS.items() if f(cfg, part))
