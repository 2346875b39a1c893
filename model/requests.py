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
    #: the replicas not online at the controller (ControllerContext.isReplicaOnline), in assignment order
    offline_replicas: tuple = ()


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


# --------------------------------------------------------------------------- AlterIsr (KIP-497)
@dataclass(frozen=True, slots=True)
class AlterIsrPartition:
    """AlterIsrRequestData.PartitionData (Kafka 2.7.0): the leader's proposal for one partition."""

    partition: int
    leader_epoch: int
    new_isr: tuple                   # sorted
    zk_version: int                  # currentIsrVersion: the partition state version the leader holds
    #: NewIsrWithEpochs (KIP-903, 3.5.0): each new ISR member's broker epoch, -1 where unknown; () before
    isr_epochs: tuple = ()
    #: LeaderRecoveryState (KIP-704, 3.2.0): a 3.x leader marks itself RECOVERED as it becomes leader
    #: (Partition.makeLeader), so it always sends RECOVERED
    leader_recovery_state: str = "RECOVERED"


@dataclass(frozen=True, slots=True)
class AlterIsrRequestData:
    """AlterIsrRequest (Kafka 2.7.0, v0): one leader's pending ISR changes, sent together."""

    broker_id: int
    broker_epoch: int
    partitions: tuple                # AlterIsrPartition, by partition


@dataclass(frozen=True, slots=True)
class AlterIsrPartitionResult:
    """AlterIsrResponseData.PartitionData (Kafka 2.7.0): an error, or the partition state after the request."""

    partition: int
    error: str
    leader: int = -1
    leader_epoch: int = -1
    isr: tuple = ()
    zk_version: int = -1


@dataclass(frozen=True, slots=True)
class AlterIsrResponseData:
    """AlterIsrResponse (Kafka 2.7.0): a top-level error, or one result per partition."""

    error: str
    partitions: tuple = ()           # AlterIsrPartitionResult, by partition


def request_name(req) -> str:
    return type(req).__name__
