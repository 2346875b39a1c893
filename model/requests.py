"""Control requests a controller sends to brokers (Kafka 2.4.0 request schemas, reduced to what the model uses).

They are immutable values: a request queued by a controller is shared by every
later state until it is delivered.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LeaderAndIsrPartitionState:
    """LeaderAndIsrRequestData.LeaderAndIsrPartitionState (Kafka 2.4.0)."""

    partition: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple
    zk_version: int
    replicas: tuple
    is_new: bool = False


@dataclass(frozen=True, slots=True)
class LeaderAndIsrRequest:
    """LeaderAndIsrRequest (Kafka 2.4.0, v4 with broker epoch)."""

    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple          # LeaderAndIsrPartitionState, by partition


@dataclass(frozen=True, slots=True)
class UpdateMetadataPartitionState:
    """UpdateMetadataRequestData.UpdateMetadataPartitionState (Kafka 2.4.0)."""

    partition: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple
    zk_version: int
    replicas: tuple


@dataclass(frozen=True, slots=True)
class UpdateMetadataRequest:
    """UpdateMetadataRequest (Kafka 2.4.0, v6 with broker epoch)."""

    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple          # UpdateMetadataPartitionState, by partition
    live_brokers: tuple              # sorted broker ids


@dataclass(frozen=True, slots=True)
class StopReplicaRequest:
    """StopReplicaRequest (Kafka 2.4.0, v2 with broker epoch)."""

    controller_id: int
    controller_epoch: int
    broker_epoch: int
    delete_partitions: bool
    partitions: tuple


def request_name(req) -> str:
    return type(req).__name__
