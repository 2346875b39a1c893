"""Topics at run time: deletion (TopicDeletionManager), creation and partition expansion (TopicChange,
PartitionModifications), and the admin writes that start them (AdminZkClient), Kafka 2.4.0.

The model has one topic whose partitions are ``0..n_partitions-1``.  A partition not created has no assignment
(``()``) in ZooKeeper; ``initial_partitions`` says how many exist at the start.  An admin deletes the topic by
writing /admin/delete_topics/<topic> (``zk.delete_topics``), creates it (partition 0) or adds the next partition by
writing /brokers/topics/<topic>; the controller learns of each by an event of its own (a step).  During a deletion
the controller keeps the ReplicaStateMachine states of the topic's replicas (``Controller.replica_deletion``):
OfflineReplica (StopReplica without delete), ReplicaDeletionStarted (StopReplica with delete), then
ReplicaDeletionSuccessful or ReplicaDeletionIneligible from the StopReplica responses, which come back as events
(``Controller.stop_replica_responses``) handled by a step of their own.  A deleted topic is not created again.
"""

from __future__ import annotations

from . import errors as E
from .assignment import BrokerMetadata, assign_replicas_to_brokers
from .config import ModelConfig
from .controller import (ControllerBrokerRequestBatch, ControllerMovedException, _guard, _read_partition_states,
                         live_brokers, new_partition_online, offline_replica_transition, send_update_metadata_request)
from .node import memo_by_identity, replace_at
from .state import ClusterState, Controller

ONLINE, OFFLINE, STARTED, SUCCESSFUL, INELIGIBLE = "online", "offline", "started", "successful", "ineligible"

#: ReplicaStateMachine's valid previous states (Kafka 2.4.0, ReplicaState.validPreviousStates) of the states a
#: deletion moves a replica to; an invalid transition is logged and skipped
_VALID_FROM = {
    ONLINE: (ONLINE, OFFLINE, INELIGIBLE),
    OFFLINE: (ONLINE, OFFLINE, INELIGIBLE),
    STARTED: (OFFLINE,),
    SUCCESSFUL: (STARTED,),
    INELIGIBLE: (OFFLINE, STARTED),
}


# --------------------------------------------------------------------------- the topic's assignment
_ASSIGNMENTS: dict = {}


def topic_assignment(cfg: ModelConfig) -> tuple:
    """AdminUtils.assignReplicasToBrokers (Kafka 2.4.0) for all ``n_partitions``: what each partition gets when it is
    created (the start index and replica shift are fixed in the config, so adding a partition gives it the replicas
    it would have had at the topic's creation)."""
    return memo_by_identity(_ASSIGNMENTS, cfg, _assign)


def _assign(cfg: ModelConfig) -> tuple:
    brokers = tuple(BrokerMetadata(b, cfg.racks[b] if cfg.racks else None) for b in range(cfg.n_brokers))
    out = assign_replicas_to_brokers(cfg.n_partitions, cfg.replication_factor, brokers,
                                     cfg.assignment_start_index, 0, cfg.assignment_replica_shift)
    return tuple(tuple(r) for r in out)


def initial_assignment(cfg: ModelConfig) -> tuple:
    """The topic's assignment in ZooKeeper at the start: the first ``initial_partitions`` partitions (all with -1)."""
    full = topic_assignment(cfg)
    n = cfg.initial_partitions
    return full if n < 0 else full[:n] + ((),) * (len(full) - n)


def topic_exists(assignment: tuple) -> bool:
    """/brokers/topics/<topic> exists (KafkaZkClient.topicExists, Kafka 2.4.0): some partition has replicas."""
    return any(assignment)


# --------------------------------------------------------------------------- admin (AdminZkClient)
def can_create_topic(cfg: ModelConfig, s: ClusterState) -> bool:
    """AdminZkClient.createTopicWithAssignment's precondition: the topic does not exist (and never did here)."""
    return (s.ghost.partition_creations < cfg.max_partition_creations and not topic_exists(s.zk.assignment)
            and not s.ghost.deleted_partitions and not s.zk.delete_topics)


def can_create_partitions(cfg: ModelConfig, s: ClusterState) -> bool:
    """AdminZkClient.addPartitions' precondition: the topic exists, is not marked for deletion, and has room."""
    a = s.zk.assignment
    return (s.ghost.partition_creations < cfg.max_partition_creations and topic_exists(a) and () in a
            and not s.zk.delete_topics)


def can_delete_topic(cfg: ModelConfig, s: ClusterState) -> bool:
    """AdminZkClient.deleteTopic's precondition: the topic exists and is not already marked for deletion."""
    return s.ghost.topic_deletions < cfg.max_topic_deletions and topic_exists(s.zk.assignment) and not s.zk.delete_topics


def create_topic(cfg: ModelConfig, s: ClusterState) -> None:
    """AdminZkClient.createTopicWithAssignment (Kafka 2.4.0): /brokers/topics/<topic> with partition 0's replicas."""
    zk = s.zk_mut()
    zk.assignment = replace_at(zk.assignment, 0, topic_assignment(cfg)[0])
    s.ghost_mut().partition_creations += 1


def create_partitions(cfg: ModelConfig, s: ClusterState) -> None:
    """AdminZkClient.addPartitions (Kafka 2.4.0): the topic's znode gains the next partition and its replicas."""
    zk = s.zk_mut()
    p = zk.assignment.index(())
    zk.assignment = replace_at(zk.assignment, p, topic_assignment(cfg)[p])
    s.ghost_mut().partition_creations += 1


def delete_topic(cfg: ModelConfig, s: ClusterState) -> None:
    """AdminZkClient.deleteTopic (Kafka 2.4.0): create /admin/delete_topics/<topic>."""
    s.zk_mut().delete_topics = True
    s.ghost_mut().topic_deletions += 1


# --------------------------------------------------------------------------- replica states of the deleting topic
def _replicas(c: Controller) -> list:
    """The deleting topic's replicas, (partition, replica), by partition then assignment order."""
    return [(p, r) for p, a in enumerate(c.assignment) for r in a]


def replica_states(c: Controller) -> dict:
    """ControllerContext.replicaStates (Kafka 2.4.0) of the deleting topic: (partition, replica) -> state."""
    return {(p, r): st for p, row in enumerate(c.replica_deletion) for r, st in row}


def _put_states(c: Controller, pairs, state: str) -> None:
    """ReplicaStateMachine.handleStateChanges' bookkeeping: the valid transitions to ``state`` (the others skipped)."""
    pairs = set(pairs)
    ok = _VALID_FROM[state]
    c.replica_deletion = tuple(tuple((r, state if (p, r) in pairs and st in ok else st) for r, st in row)
                               for p, row in enumerate(c.replica_deletion))


def _in_state(c: Controller, state: str) -> list:
    """ControllerContext.replicasInState (Kafka 2.4.0) for the deleting topic."""
    return [(p, r) for p, row in enumerate(c.replica_deletion) for r, st in row if st == state]


def _fresh_states(c: Controller) -> tuple:
    """ReplicaStateMachine's view when a deletion is queued: live replicas online, the others offline."""
    return tuple(tuple((r, ONLINE if c.is_live(r) else OFFLINE) for r in a) for a in c.assignment)


def _check_epoch(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """A controller ZooKeeper write's check of /controller_epoch's version (KAFKA-6082, 2.1+)."""
    if cfg.kafka_6082 and s.zk.controller_epoch_zk_version != c.epoch_zk_version:
        raise ControllerMovedException(f"controller epoch zkVersion moved past {c.epoch_zk_version}")


# --------------------------------------------------------------------------- TopicDeletionManager
def init_topic_deletion(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """KafkaController.fetchTopicDeletionsInProgress + TopicDeletionManager.init (Kafka 2.4.0): the topic queued for
    deletion, ineligible while a replica is offline; ReplicaStateMachine.startup's states."""
    c.deleting = True
    c.replica_deletion = _fresh_states(c)
    c.deletion_ineligible = any(not c.is_live(r) for _p, r in _replicas(c))


def enqueue_topic_for_deletion(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """TopicDeletionManager.enqueueTopicsForDeletion (Kafka 2.4.0): queue the topic, then resumeDeletions."""
    c.deleting = True
    c.replica_deletion = _fresh_states(c)
    resume_deletions(cfg, s, c)


def resume_deletions(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """TopicDeletionManager.resumeDeletions (Kafka 2.4.0): complete, retry the ineligible replicas, or start."""
    if not c.deleting:
        return
    if all(st == SUCCESSFUL for row in c.replica_deletion for _r, st in row):
        complete_delete_topic(cfg, s, c)
        return
    if not _in_state(c, STARTED):
        failed = _in_state(c, INELIGIBLE)
        if failed:                                                    # retryDeletionForIneligibleReplicas
            _offline(cfg, s, c, failed)
    if not _in_state(c, STARTED) and not c.deletion_ineligible:     # isTopicEligibleForDeletion
        on_topic_deletion(cfg, s, c)


def resume_deletion_for_topic(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """TopicDeletionManager.resumeDeletionForTopics (Kafka 2.4.0): eligible again, then resumeDeletions."""
    c.deletion_ineligible = False
    resume_deletions(cfg, s, c)


def replicas_back_online(c: Controller, brokers) -> None:
    """KafkaController.onBrokerStartup's OnlineReplica transition (Kafka 2.4.0) for the deleting topic's replicas."""
    _put_states(c, [(p, r) for p, r in _replicas(c) if r in brokers], ONLINE)


def fail_replica_deletion(cfg: ModelConfig, s: ClusterState, c: Controller, replicas) -> None:
    """TopicDeletionManager.failReplicaDeletion (Kafka 2.4.0): ReplicaDeletionIneligible, the topic ineligible."""
    if not c.deleting or not replicas:
        return
    _put_states(c, replicas, INELIGIBLE)
    c.deletion_ineligible = True                                      # markTopicIneligibleForDeletion
    resume_deletions(cfg, s, c)


def complete_replica_deletion(cfg: ModelConfig, s: ClusterState, c: Controller, replicas) -> None:
    """TopicDeletionManager.completeReplicaDeletion (Kafka 2.4.0): ReplicaDeletionSuccessful, then resumeDeletions."""
    if not c.deleting:
        return
    _put_states(c, replicas, SUCCESSFUL)
    resume_deletions(cfg, s, c)


def on_topic_deletion(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """TopicDeletionManager.onTopicDeletion (Kafka 2.4.0): OfflinePartition and NonExistentPartition (nothing sent),
    beginTopicDeletion, UpdateMetadata (leader -2) to every live broker, then onPartitionDeletion."""
    c.deletion_started = True
    send_update_metadata_request(cfg, s, c, live_brokers(c),
                                 tuple(p for p, a in enumerate(c.assignment) if a))
    start_replica_deletion(cfg, s, c)


def start_replica_deletion(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """TopicDeletionManager.startReplicaDeletion (Kafka 2.4.0): dead replicas ReplicaDeletionIneligible, the live ones
    not yet deleted OfflineReplica (StopReplica without delete) then ReplicaDeletionStarted (StopReplica with delete)."""
    states = replica_states(c)
    alive = [pr for pr in _replicas(c) if c.is_live(pr[1])]
    dead = [pr for pr in _replicas(c) if not c.is_live(pr[1])]
    retry = [pr for pr in alive if states[pr] != SUCCESSFUL]
    _put_states(c, dead, INELIGIBLE)
    _offline(cfg, s, c, retry)
    _put_states(c, retry, STARTED)
    batch = ControllerBrokerRequestBatch(cfg, s, c)
    batch.new_batch()
    for p, r in retry:
        if replica_states(c)[p, r] == STARTED:
            batch.add_stop_replica_request_for_brokers((r,), p, True)
    batch.send_requests_to_brokers()
    if dead:
        c.deletion_ineligible = True


def _offline(cfg: ModelConfig, s: ClusterState, c: Controller, replicas) -> None:
    """ReplicaStateMachine -> OfflineReplica (Kafka 2.4.0) for the deleting topic's replicas."""
    states = replica_states(c)
    valid = [pr for pr in replicas if states[pr] in _VALID_FROM[OFFLINE]]
    if valid:
        _read_partition_states(s, c)
        offline_replica_transition(cfg, s, c, valid)
        _put_states(c, valid, OFFLINE)


def complete_delete_topic(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """TopicDeletionManager.completeDeleteTopic (Kafka 2.4.0): NonExistentReplica, the topic's znodes deleted
    (/brokers/topics, its partition states, /admin/delete_topics; fenced by KAFKA-6082), removeTopic."""
    _check_epoch(cfg, s, c)
    deleted = tuple(p for p, a in enumerate(c.assignment) if a)
    n = len(c.assignment)
    c.deleting = c.deletion_started = c.deletion_ineligible = False
    c.replica_deletion = ()
    c.assignment = ((),) * n
    c.partition_states = (None,) * n
    zk = s.zk_mut()
    zk.assignment = ((),) * n
    zk.partition_states = (None,) * n
    zk.delete_topics = False
    g = s.ghost_mut()
    g.deleted_partitions = tuple(sorted(set(g.deleted_partitions) | set(deleted)))


def stop_replica_delete_response(s: ClusterState, c: Controller, broker: int, req, result: dict) -> None:
    """ControllerChannelManager's stopReplicaPartitionDeleteResponseCallback (Kafka 2.4.0): a StopReplica (delete)
    response with partition errors, while the topic's deletion is in progress, becomes a
    TopicDeletionStopReplicaResponseReceived event (a top-level error carries no partition errors: no event)."""
    if not result or any(e in (E.STALE_BROKER_EPOCH, E.STALE_CONTROLLER_EPOCH) for e in result.values()):
        return
    c.stop_replica_responses = c.stop_replica_responses + ((broker, tuple(sorted(result.items()))),)


@_guard
def process_stop_replica_response(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """KafkaController.processTopicDeletionStopReplicaResponseReceived (Kafka 2.4.0): failed replicas ineligible,
    the others deleted."""
    (broker, errors), c.stop_replica_responses = c.stop_replica_responses[0], c.stop_replica_responses[1:]
    failed = tuple((p, broker) for p, e in errors if e != E.NONE)
    fail_replica_deletion(cfg, s, c, failed)
    if len(failed) != len(errors):
        complete_replica_deletion(cfg, s, c, tuple((p, broker) for p, e in errors if e == E.NONE))


@_guard
def process_topic_deletion(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """KafkaController.processTopicDeletion (Kafka 2.4.0): a topic the controller does not know has its
    /admin/delete_topics znode removed; otherwise it is queued for deletion (delete.topic.enable is true)."""
    if not topic_exists(c.assignment):
        _check_epoch(cfg, s, c)                                       # zkClient.deleteTopicDeletions
        s.zk_mut().delete_topics = False
        return
    enqueue_topic_for_deletion(cfg, s, c)


# --------------------------------------------------------------------------- creation and expansion
def topic_change_pending(s: ClusterState, c: Controller) -> bool:
    """A TopicChange or PartitionModifications event is pending: ZooKeeper's assignment differs from the
    controller's (a topic or partition created, or the topic deleted by another controller)."""
    return c.assignment != s.zk.assignment


@_guard
def process_topic_change(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """KafkaController.processTopicChange / processPartitionModifications (Kafka 2.4.0): new partitions go through
    onNewPartitionCreation; a deleted topic is removed from the context; partitions added to a topic queued for
    deletion are reverted in ZooKeeper (restorePartitionReplicaAssignment)."""
    zk_a = s.zk.assignment
    if not topic_exists(c.assignment) or not topic_exists(zk_a):      # processTopicChange: a new or deleted topic
        n = len(zk_a)
        if not topic_exists(zk_a):
            c.assignment, c.partition_states = ((),) * n, (None,) * n   # ControllerContext.removeTopic
            return
        c.assignment = zk_a
        on_new_partition_creation(cfg, s, c, tuple(p for p, a in enumerate(zk_a) if a))
        return
    added = tuple(p for p, a in enumerate(zk_a) if a and not c.assignment[p])
    if c.deleting:
        if added:                                                     # restorePartitionReplicaAssignment
            _check_epoch(cfg, s, c)
            s.zk_mut().assignment = c.assignment
        return
    c.assignment = tuple(zk_a[p] if p in added else a for p, a in enumerate(c.assignment))
    if added:
        on_new_partition_creation(cfg, s, c, added)


def on_new_partition_creation(cfg: ModelConfig, s: ClusterState, c: Controller, partitions: tuple) -> None:
    """KafkaController.onNewPartitionCreation (Kafka 2.4.0): NewPartition, NewReplica (nothing sent without a
    leader), OnlinePartition (the first live replica leads, the live replicas are the ISR; a partition with no live
    replica stays NewPartition), OnlineReplica (nothing sent)."""
    batch = ControllerBrokerRequestBatch(cfg, s, c)
    batch.new_batch()
    for p in partitions:
        _check_epoch(cfg, s, c)                                       # createTopicPartitionStatesRaw's check first
        if s.zk.partition_states[p] is not None:
            continue                                                  # NODEEXISTS: another controller created it
        new_partition_online(cfg, s, c, batch, p, c.assignment[p])
    batch.send_requests_to_brokers()


__all__ = [
    "topic_assignment", "initial_assignment", "create_topic", "create_partitions", "delete_topic",
    "process_topic_deletion", "process_stop_replica_response", "process_topic_change",
]
