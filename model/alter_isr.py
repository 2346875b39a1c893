"""AlterIsrManager (KIP-497, Kafka 2.7.0): a leader's ISR changes on their way to the controller and back.

A leader that wants to change a partition's ISR queues one item per partition
(``partition.send_alter_isr_request``) and the partition is pending until the
answer.  The manager sends every unsent item in one request, one request in
flight per broker (``send_alter_isr``, the AlterIsrRequest action), to the
controller its metadata cache names (KRaft: the active controller).  The
controller handles it as an event of its own (``handle_alter_isr``, the
AlterIsrReceived action: ``controller.process_alter_isr`` or
``quorum_controller.alter_partition``), and the response waits on the broker
until ``receive_alter_isr_response`` (the AlterIsrResponse action) runs each
item's callback.  So faults, fetches and metadata interleave both while the
request is on its way and between the controller's write and the leader's
commit.
"""

from __future__ import annotations

import dataclasses

from . import errors as E
from .config import ModelConfig
from .controller import process_alter_isr
from .delayed import note_error
from .partition import handle_alter_isr_response, retriable_alter_isr_error
from .quorum_controller import alter_partition
from .requests import AlterIsrPartitionResult, AlterIsrRequestData, AlterIsrResponseData
from .state import AlterIsrInflight, ClusterState


def send_alter_isr(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """AlterIsrManagerImpl.propagateIsrChanges / sendRequest (Kafka 2.7.0): every unsent item in one request."""
    br = s.broker_mut(b)
    items = br.alter_isr_unsent                  # copied, not removed: they leave when their response comes
    req = AlterIsrRequestData(b, br.broker_epoch, tuple(item.request for item in items))
    # KRaft: the active controller of the quorum; else BrokerToControllerChannelManager's MetadataCache.getControllerId
    target = -1 if cfg.kip_500 else br.metadata.controller_id
    br.alter_isr_inflight = AlterIsrInflight(target, items, req)


def handle_alter_isr(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """KafkaController.processAlterIsr (Kafka 2.7.0) / QuorumController.alterPartition (KRaft): b's request handled."""
    br = s.broker_mut(b)
    inflight = br.alter_isr_inflight
    if cfg.kip_500:
        response = alter_partition(cfg, s, inflight.request)
    else:   # a controller gone since the send answers NOT_CONTROLLER: the channel's retry, as the items go again
        response = process_alter_isr(cfg, s, inflight.controller, inflight.request)
    # an earlier incarnation's request: handled all the same (the broker epoch it carries is checked), its answer
    # dropped with the connection its sender closed
    br.alter_isr_inflight = None if inflight.orphan else dataclasses.replace(inflight, response=response)


def fail_alter_isr(cfg: ModelConfig, s: ClusterState, b: int, error: str) -> None:
    """A fault (``AlterIsrFailed``): b's request answered ``error`` unhandled, as PartitionTest's failIsrUpdate does
    (AlterPartitionManager.sendRequest's onComplete, Kafka 3.7.0: NETWORK_EXCEPTION for the whole request)."""
    br = s.broker_mut(b)
    inflight = br.alter_isr_inflight
    if error == E.NETWORK_EXCEPTION:
        response = AlterIsrResponseData(error)
    else:
        response = AlterIsrResponseData(E.NONE, tuple(AlterIsrPartitionResult(item.request.partition, error)
                                                      for item in inflight.items))
    br.alter_isr_inflight = dataclasses.replace(inflight, response=response)
    g = s.ghost_mut()
    g.alter_isr_failures += 1
    if error != E.NETWORK_EXCEPTION and not retriable_alter_isr_error(error):
        g.fault_given_up = tuple(sorted(set(g.fault_given_up) | {
            (b, item.request.partition, item.request.leader_epoch, item.request.zk_version) for item in inflight.items}))


def receive_alter_isr_response(cfg: ModelConfig, s: ClusterState, b: int) -> str:
    """AlterIsrManagerImpl.handleAlterIsrResponse (Kafka 2.7.0): each item's callback, then its partition's item goes."""
    br = s.broker_mut(b)
    inflight = br.alter_isr_inflight
    br.alter_isr_inflight = None                 # inflightRequest.compareAndSet(true, false)
    resp = inflight.response
    note_error(s, resp.error)
    if resp.error != E.NONE:
        # STALE_BROKER_EPOCH, NOT_CONTROLLER (re-sent by the channel), ...: the items stay unsent and go again
        return resp.error
    results = {r.partition: r for r in resp.partitions}
    for item in inflight.items:
        p = item.request.partition
        r = results.get(p)
        if r is None:
            continue                             # left out of the response: stays unsent, re-sent
        note_error(s, r.error)
        handle_alter_isr_response(cfg, s, br, p, item, r)
        if cfg.kafka_14010 and retriable_alter_isr_error(r.error):
            continue                             # handleAlterPartitionError: submitted again (KAFKA-14010, 3.3.0)
        # finally: unsentIsrUpdates.remove(topicPartition), whatever item the partition holds by now
        unsent = br.alter_isr_unsent
        if any(x.request.partition == p for x in unsent):
            br.alter_isr_unsent = tuple(x for x in unsent if x.request.partition != p)
    return resp.error


# --------------------------------------------------------------------------- what the rules compare
# Facts about the rules above that an engine abstracting the state may rely on, asked here so that no engine
# reads a protocol flag itself.
def zk_versions_ordered(cfg: ModelConfig) -> bool:
    """Whether a broker compares two partition zkVersions by order, not only for equality: with AlterIsr a leader
    ignores a response older than its own version (Partition.handleAlterIsrResponse, Kafka 2.7.0); before, a
    cached zkVersion is only ever compared for equality with ZooKeeper's (ReplicationUtils.updateLeaderAndIsr)."""
    return cfg.kip_497


def isr_change_set_used(cfg: ModelConfig) -> bool:
    """Whether a leader records its ISR changes in isr_change_set for the isr-change-propagation task
    (ReplicaManager.recordIsrChange, Kafka 2.4.0); with AlterIsr the controller is told directly and the set stays
    empty (Kafka 2.7.0)."""
    return not cfg.kip_497
