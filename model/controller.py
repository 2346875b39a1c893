"""The ZooKeeper-era controller: elections, broker changes, ISR notifications, request batches.

A ``Controller`` record lives on one broker.  Several may exist at once: the
active one and zombies that lost their ZooKeeper session but have not yet
resigned; a zombie can still deliver the requests it queued and, without
KAFKA-6082, still write to ZooKeeper.  Requests are queued per destination
broker and delivered by separate steps (``deliver_control_request``), so
delays and reordering between brokers can be explored.
"""

from __future__ import annotations

from .config import ModelConfig
from .losses import note_unclean_election
from .node import replace_at
from .replica_manager import handle_control_request
from . import errors as E
from .requests import (AlterIsrPartitionResult, AlterIsrResponseData, LeaderAndIsrPartitionState,
                       LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataPartitionState, UpdateMetadataRequest)
from .state import LEADER_DURING_DELETE, NO_LEADER, ClusterState, Controller, LeaderIsrAndControllerEpoch



def _td():
    """model.topics (TopicDeletionManager, Kafka 2.4.0), imported when first used: it builds on this module."""
    from . import topics
    return topics


class IllegalStateException(RuntimeError):
    """kafka.common.IllegalStateException: a batch was started while one is still unsent."""


class ControllerMovedException(Exception):
    """A controller ZooKeeper write was fenced by the controller epoch znode version (KAFKA-6082)."""


# --------------------------------------------------------------------------- request batch
class ControllerBrokerRequestBatch:
    """kafka.controller.ControllerBrokerRequestBatch (Kafka 2.4.0): collect, then send per broker."""

    def __init__(self, cfg: ModelConfig, s: ClusterState, c: Controller):
        self.cfg = cfg
        self.s = s
        self.c = c
        self.leader_and_isr: dict[int, dict[int, LeaderAndIsrPartitionState]] = {}
        self.stop_replica: dict[int, dict[int, bool]] = {}
        self.update_metadata_brokers: set[int] = set()
        self.update_metadata_partitions: set[int] = set()
        self.deleting: set[int] = set()

    def new_batch(self) -> None:
        """ControllerBrokerRequestBatch.newBatch (Kafka 2.4.0): refuse while a batch is unsent."""
        if self.leader_and_isr or self.stop_replica or self.update_metadata_brokers:
            raise IllegalStateException("Controller to broker state change requests batch is not empty while "
                                        "creating a new one")

    def add_leader_and_isr_request_for_brokers(self, broker_ids, p: int, state: LeaderIsrAndControllerEpoch,
                                               replicas: tuple, is_new: bool) -> None:
        """addLeaderAndIsrRequestForBrokers (Kafka 2.4.0, K7): also queues UpdateMetadata to every live broker."""
        for b in broker_ids:
            if b >= 0:
                queued = self.leader_and_isr.setdefault(b, {})
                # isNew stays true if the partition was already queued as new in this batch.
                sticky_new = is_new or (p in queued and queued[p].is_new)
                queued[p] = LeaderAndIsrPartitionState(
                    p, state.controller_epoch, state.leader, state.leader_epoch, state.isr, state.zk_version,
                    tuple(replicas), sticky_new)
        self.add_update_metadata_request_for_brokers(live_brokers(self.c), (p,))

    def add_stop_replica_request_for_brokers(self, broker_ids, p: int, delete: bool) -> None:
        """addStopReplicaRequestForBrokers (Kafka 2.4.0)."""
        for b in broker_ids:
            if b >= 0:
                self.stop_replica.setdefault(b, {})[p] = delete

    def add_update_metadata_request_for_brokers(self, broker_ids, partitions=()) -> None:
        """addUpdateMetadataRequestForBrokers (Kafka 2.4.0): those brokers get those partitions' states (maybe none)."""
        self.update_metadata_brokers.update(b for b in broker_ids if b >= 0)
        self.update_metadata_partitions.update(partitions)

    def mark_deleting(self, partitions) -> None:
        """Partitions of topics queued for deletion are sent with leader LeaderDuringDelete (-2)."""
        self.deleting.update(partitions)

    def send_requests_to_brokers(self) -> None:
        """sendRequestsToBrokers (Kafka 2.4.0): LeaderAndIsr, then UpdateMetadata, then StopReplica, per broker."""
        c = self.c
        out: dict[int, list] = {}
        for b in sorted(self.leader_and_isr):
            states = tuple(v for _, v in sorted(self.leader_and_isr[b].items()))
            out.setdefault(b, []).append(
                LeaderAndIsrRequest(c.broker_id, c.epoch, broker_epoch(self.cfg, c, b), states))
        if self.update_metadata_brokers:
            um_states = []
            assignment = c.assignment
            for p in sorted(self.update_metadata_partitions):
                st = c.partition_states[p]
                if st is None:
                    continue
                # UpdateMetadataPartitionState.offlineReplicas: the replicas not online (isReplicaOnline)
                offline = tuple(r for r in assignment[p] if not c.is_live(r))
                if c.deleting or p in self.deleting:
                    # LeaderAndIsr.duringDelete(isr): leader -2 with the initial epoch and zkVersion
                    um_states.append(UpdateMetadataPartitionState(
                        p, st.controller_epoch, LEADER_DURING_DELETE, 0, st.isr, 0, assignment[p], offline))
                else:
                    um_states.append(UpdateMetadataPartitionState(
                        p, st.controller_epoch, st.leader, st.leader_epoch, st.isr, st.zk_version, assignment[p],
                        offline))
            um_states = tuple(um_states)
            live = live_brokers(c)
            for b in sorted(self.update_metadata_brokers):
                out.setdefault(b, []).append(
                    UpdateMetadataRequest(c.broker_id, c.epoch, broker_epoch(self.cfg, c, b), um_states, live))
        for b in sorted(self.stop_replica):
            by_delete: dict[bool, list] = {}
            for p, delete in sorted(self.stop_replica[b].items()):
                by_delete.setdefault(delete, []).append(p)
            for delete in sorted(by_delete, reverse=True):  # sendStopReplicaRequests: deletions first
                out.setdefault(b, []).append(StopReplicaRequest(
                    c.broker_id, c.epoch, broker_epoch(self.cfg, c, b), delete, tuple(by_delete[delete])))
        queues = c.queues
        for b, reqs in sorted(out.items()):
            # ControllerChannelManager.sendRequest: a broker not in the channel manager is dropped.
            if c.live_brokers[b] >= 0:
                queues = replace_at(queues, b, queues[b] + tuple(reqs))
        c.queues = queues
        self.leader_and_isr.clear()
        self.stop_replica.clear()
        self.update_metadata_brokers.clear()
        self.update_metadata_partitions.clear()


def broker_epoch(cfg: ModelConfig, c: Controller, b: int) -> int:
    """The broker epoch a request carries: the controller's view (KIP-380), or -1 (unknown) without it."""
    return c.live_brokers[b] if cfg.kip_380 else -1


def live_set_changed(cfg: ModelConfig, c: Controller, registrations: tuple) -> bool:
    """A BrokerChange event is pending: by broker epoch with KIP-380, by broker id without it."""
    if cfg.kip_380:
        return c.live_brokers != registrations
    return any((a >= 0) != (b >= 0) for a, b in zip(c.live_brokers, registrations))


def partitions_with_leaders(c: Controller) -> tuple:
    """ControllerContext.partitionLeadershipInfo.keySet."""
    return tuple(p for p, st in enumerate(c.partition_states) if st is not None)


def live_brokers(c: Controller) -> tuple:
    """ControllerContext.liveOrShuttingDownBrokerIds, sorted."""
    return tuple(b for b, epoch in enumerate(c.live_brokers) if epoch >= 0)


def send_update_metadata_request(cfg: ModelConfig, s: ClusterState, c: Controller, broker_ids, partitions=()) -> None:
    """KafkaController.sendUpdateMetadataRequest (Kafka 2.4.0): a batch of its own."""
    batch = ControllerBrokerRequestBatch(cfg, s, c)
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers(broker_ids, partitions)
    batch.send_requests_to_brokers()


# --------------------------------------------------------------------------- ZooKeeper writes
def write_partition_state(cfg: ModelConfig, s: ClusterState, c: Controller, p: int,
                          new: LeaderIsrAndControllerEpoch, expected_zk_version: int | None) -> None:
    """KafkaZkClient.updateLeaderAndIsr / createTopicPartitionStatesRaw (Kafka 2.4.0): CAS, fenced with KAFKA-6082."""
    zk = s.zk
    if cfg.kafka_6082 and zk.controller_epoch_zk_version != c.epoch_zk_version:
        raise ControllerMovedException(f"controller epoch zkVersion moved past {c.epoch_zk_version}")
    current = zk.partition_states[p]
    current_version = None if current is None else current.zk_version
    assert current_version == expected_zk_version, "the controller reads ZooKeeper just before it writes"
    zkm = s.zk_mut()
    zkm.partition_states = replace_at(zkm.partition_states, p, new)
    c.partition_states = replace_at(c.partition_states, p, new)


def _read_partition_states(s: ClusterState, c: Controller) -> None:
    """ZkClient.getTopicPartitionStatesRaw (Kafka 2.4.0): elections start from the znode, not the cache."""
    if c.partition_states != s.zk.partition_states:
        c.partition_states = s.zk.partition_states


# --------------------------------------------------------------------------- elections
def offline_partition_leader_election(cfg: ModelConfig, assignment: tuple, isr: tuple, live) -> tuple:
    """PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection (Kafka 2.4.0, K2): (leader, isr, unclean)."""
    for r in assignment:
        if live(r) and r in isr:
            return r, tuple(sorted(x for x in isr if live(x))), False
    if cfg.unclean_leader_election:
        for r in assignment:
            if live(r):
                return r, (r,), True
    return None, None, False


def trigger_online_partition_state_change(cfg: ModelConfig, s: ClusterState, c: Controller, offline=None) -> None:
    """PartitionStateMachine.triggerOnlinePartitionStateChange (Kafka 2.4.0, K1/K2): New and Offline partitions.

    A partition is offline when its leader is not live (``offline(leader)`` instead when given: onReplicasBecomeOffline
    also counts a shutting-down leader); elections pick only online replicas (not shutting down)."""
    _read_partition_states(s, c)
    if c.deleting:  # triggerOnlineStateChangeForPartitions: not the partitions of topics queued for deletion
        return
    live = c.is_live if not c.shutting_down else (lambda r: c.is_live(r) and r not in c.shutting_down)
    batch = ControllerBrokerRequestBatch(cfg, s, c)
    batch.new_batch()
    for p, st in enumerate(s.zk.partition_states):
        assignment = c.assignment[p]
        if st is None:                                                                # NewPartition -> Online (K1)
            new_partition_online(cfg, s, c, batch, p, assignment, live)
        elif st.leader == NO_LEADER or (not c.is_live(st.leader) if offline is None else offline(st.leader)):  # K2
            if st.controller_epoch > c.epoch:                                         # K6
                continue
            leader, isr, unclean = offline_partition_leader_election(cfg, assignment, st.isr, live)
            if leader is None:
                continue
            new = LeaderIsrAndControllerEpoch(leader, st.leader_epoch + 1, isr, c.epoch, st.zk_version + 1)
            write_partition_state(cfg, s, c, p, new, st.zk_version)
            if unclean:
                note_unclean_election(s, p, new.leader_epoch, leader)
            batch.add_leader_and_isr_request_for_brokers(
                tuple(r for r in assignment if live(r)), p, new, assignment, False)
    batch.send_requests_to_brokers()


def new_partition_online(cfg: ModelConfig, s: ClusterState, c: Controller, batch, p: int, assignment: tuple,
                         live=None) -> None:
    """PartitionStateMachine.initializeLeaderAndIsrForPartitions (Kafka 2.4.0, K1): the first live replica leads, the
    live replicas are the ISR, leader epoch 0; LeaderAndIsr (isNew) to them.  No live replica: it stays NewPartition.
    ``live``: the controller's live brokers, less the shutting-down ones (isReplicaOnline)."""
    live_replicas = tuple(r for r in assignment if (c.is_live if live is None else live)(r))
    if not live_replicas:
        return
    new = LeaderIsrAndControllerEpoch(live_replicas[0], 0, tuple(sorted(live_replicas)), c.epoch, 0)
    write_partition_state(cfg, s, c, p, new, None)
    batch.add_leader_and_isr_request_for_brokers(live_replicas, p, new, assignment, True)


def isr_without_replica(isr: tuple, r: int) -> tuple:
    """KafkaController.doRemoveReplicasFromIsr (Kafka 2.4.0): drop r from the ISR, but never the last member."""
    return isr if len(isr) == 1 else tuple(x for x in isr if x != r)


def remove_replicas_from_isr(cfg: ModelConfig, s: ClusterState, c: Controller, dead: tuple, partitions=None) -> None:
    """ReplicaStateMachine OfflineReplica via doRemoveReplicasFromIsr (Kafka 2.4.0, K5): keep the last ISR member
    (the replicas of ``dead`` on every partition, or on ``partitions`` only)."""
    _read_partition_states(s, c)
    offline_replica_transition(cfg, s, c, [(p, r) for r in dead for p, a in enumerate(c.assignment)
                                           if r in a and (partitions is None or p in partitions)])


def offline_replica_transition(cfg: ModelConfig, s: ClusterState, c: Controller, replicas) -> None:
    """ReplicaStateMachine -> OfflineReplica (Kafka 2.4.0) for (partition, replica) pairs, by replica: StopReplica
    without delete, then doRemoveReplicasFromIsr (the last ISR member stays); LeaderAndIsr to the others, except for
    a topic queued for deletion."""
    batch = ControllerBrokerRequestBatch(cfg, s, c)
    batch.new_batch()
    for p, r in replicas:
        assignment = c.assignment[p]
        batch.add_stop_replica_request_for_brokers((r,), p, False)
        st = c.partition_states[p]
        if st is None or r not in st.isr or st.controller_epoch > c.epoch:
            continue
        new_leader = NO_LEADER if st.leader == r else st.leader
        new = LeaderIsrAndControllerEpoch(new_leader, st.leader_epoch + 1, isr_without_replica(st.isr, r), c.epoch,
                                          st.zk_version + 1)
        write_partition_state(cfg, s, c, p, new, st.zk_version)
        if not c.deleting:  # no LeaderAndIsr for the partitions of a topic queued for deletion
            batch.add_leader_and_isr_request_for_brokers(
                tuple(x for x in assignment if x != r and c.is_live(x)), p, new, assignment, False)
    batch.send_requests_to_brokers()


# --------------------------------------------------------------------------- controller events
def _guard(fn):
    """Run a controller event; a fenced ZooKeeper write makes the controller resign (KafkaController.process)."""

    def run(cfg: ModelConfig, s: ClusterState, b: int) -> bool:
        c = s.controller_mut(b)
        try:
            fn(cfg, s, c)
        except ControllerMovedException:
            resign(cfg, s, b)
            return False
        return True

    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


def elect_controller(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """KafkaController.elect + onControllerFailover (Kafka 2.4.0): bump the epoch, load ZK, send state."""
    zk = s.zk_mut()
    zk.controller = b
    zk.controller_epoch += 1
    zk.controller_epoch_zk_version += 1
    n = len(s.brokers)
    c = Controller(b, zk.controller_epoch, zk.controller_epoch_zk_version,
                   live_brokers=zk.registrations, partition_states=zk.partition_states,
                   queues=((),) * n, assignment=zk.assignment)
    c._tok = s._tok
    s.controllers = tuple(sorted(s.controllers + (c,), key=lambda x: x.broker_id))
    try:
        if zk.delete_topics:
            _td().init_topic_deletion(cfg, s, c)           # fetchTopicDeletionsInProgress, TopicDeletionManager.init
        live = live_brokers(c)
        send_update_metadata_request(cfg, s, c, live)                                     # KAFKA-4443: UM first
        # ReplicaStateMachine.startup: online replicas -> OnlineReplica, then offline ones -> OfflineReplica
        _replicas_online(cfg, s, c, live)
        remove_replicas_from_isr(cfg, s, c, tuple(b for b in range(len(c.live_brokers)) if b not in live))
        trigger_online_partition_state_change(cfg, s, c)                                  # PartitionStateMachine
        if zk.preferred_replica_election or cfg.auto_leader_rebalance_enable:
            from .elections import run_pending_preferred_elections, schedule_auto_leader_rebalance
            if zk.preferred_replica_election:
                run_pending_preferred_elections(cfg, s, c)                                # pending elections
            schedule_auto_leader_rebalance(cfg, s, c)
        if c.deleting:
            _td().resume_deletions(cfg, s, c)              # TopicDeletionManager.tryTopicDeletion
        if s.zk.reassign_partitions or s.zk.reassigning:          # initializePartitionReassignments (KIP-455)
            from .reassignment import initialize_partition_reassignments
            initialize_partition_reassignments(cfg, s, c)
    except ControllerMovedException:  # pragma: no cover - a fresh controller holds the newest epoch
        resign(cfg, s, b)


def _replicas_online(cfg: ModelConfig, s: ClusterState, c: Controller, brokers) -> None:
    """ReplicaStateMachine -> OnlineReplica (Kafka 2.4.0): LeaderAndIsr to those brokers for partitions with a leader."""
    batch = ControllerBrokerRequestBatch(cfg, s, c)
    batch.new_batch()
    for p, st in enumerate(c.partition_states):
        if st is None:
            continue
        assignment = c.assignment[p]
        targets = tuple(r for r in assignment if r in brokers)
        if targets:
            batch.add_leader_and_isr_request_for_brokers(targets, p, st, assignment, False)
    batch.send_requests_to_brokers()


@_guard
def process_broker_change(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """KafkaController.processBrokerChange (Kafka 2.4.0): startup of new, bounce, then failure of dead brokers."""
    registered = s.zk.registrations
    old = c.live_brokers
    new_ids = tuple(b for b in range(len(old)) if old[b] < 0 <= registered[b])
    dead_ids = tuple(b for b in range(len(old)) if registered[b] < 0 <= old[b])
    # Without KIP-380 the controller sees only broker ids, so a fast bounce goes unnoticed.
    bounced = tuple(b for b in range(len(old)) if 0 <= old[b] != registered[b] >= 0) if cfg.kip_380 else ()
    c.live_brokers = registered
    queues = c.queues
    for b in dead_ids + bounced:  # ControllerChannelManager.removeBroker drops the queue
        queues = replace_at(queues, b, ())
    c.queues = queues
    if new_ids:
        on_broker_startup(cfg, s, c, new_ids)
    if bounced:
        on_broker_failure(cfg, s, c, bounced)
        on_broker_startup(cfg, s, c, bounced)
    if dead_ids:
        on_broker_failure(cfg, s, c, dead_ids)


def on_broker_startup(cfg: ModelConfig, s: ClusterState, c: Controller, brokers: tuple) -> None:
    """KafkaController.onBrokerStartup (Kafka 2.4.0): brokers only to the others, full state to the new ones."""
    existing = tuple(b for b in live_brokers(c) if b not in brokers)
    send_update_metadata_request(cfg, s, c, existing)
    send_update_metadata_request(cfg, s, c, brokers, partitions_with_leaders(c))
    _replicas_online(cfg, s, c, brokers)
    if c.deleting:
        _td().replicas_back_online(c, brokers)             # OnlineReplica from ReplicaDeletionIneligible
    trigger_online_partition_state_change(cfg, s, c)
    if c.deleting and any(b in a for a in c.assignment for b in brokers):
        _td().resume_deletion_for_topic(cfg, s, c)         # topicDeletionManager.resumeDeletionForTopics
    if s.zk.reassigning:                                          # maybeResumeReassignments (KIP-455)
        from .reassignment import resume_reassignments_on_broker_startup
        resume_reassignments_on_broker_startup(cfg, s, c, brokers)


def on_broker_failure(cfg: ModelConfig, s: ClusterState, c: Controller, brokers: tuple) -> None:
    """KafkaController.onBrokerFailure / onReplicasBecomeOffline (Kafka 2.4.0): elect, then shrink ISRs (K5)."""
    offline = None
    if c.shutting_down:  # dead brokers leave shuttingDownBrokerIds; a shutting-down leader counts as offline
        c.shutting_down = tuple(b for b in c.shutting_down if b not in brokers)
        down = c.shutting_down
        offline = lambda r: not c.is_live(r) or r in down  # noqa: E731
    _read_partition_states(s, c)
    # partitionsWithoutLeader: the current leader is not online (NoLeader included), not of a topic being deleted
    offline_leader = not c.deleting and any(st is not None and (st.leader < 0 or not c.is_live(st.leader)
                                                                or (offline is not None and offline(st.leader)))
                                            for st in c.partition_states)
    if offline is None:
        trigger_online_partition_state_change(cfg, s, c)
    else:
        trigger_online_partition_state_change(cfg, s, c, offline)
    if c.deleting:
        # newOfflineReplicasForDeletion: topicDeletionManager.failReplicaDeletion, no OfflineReplica transition
        _td().fail_replica_deletion(cfg, s, c, tuple((p, r) for p, a in enumerate(c.assignment) for r in a
                                                     if r in brokers))
    else:
        remove_replicas_from_isr(cfg, s, c, brokers)
    if not offline_leader:
        send_update_metadata_request(cfg, s, c, live_brokers(c))


@_guard
def process_isr_change_notification(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """KafkaController.processIsrChangeNotification (Kafka 2.4.0, K8): refresh cache, UpdateMetadata, delete znodes."""
    zk = s.zk
    if cfg.kafka_6082 and zk.controller_epoch_zk_version != c.epoch_zk_version:
        raise ControllerMovedException("deleteIsrChangeNotifications fenced")
    partitions = tuple(sorted({p for _, ps in zk.isr_change_notifications for p in ps}))
    states = c.partition_states
    for p in partitions:
        states = replace_at(states, p, zk.partition_states[p])
    c.partition_states = states
    send_update_metadata_request(cfg, s, c, live_brokers(c), partitions)
    s.zk_mut().isr_change_notifications = ()


def process_alter_isr(cfg: ModelConfig, s: ClusterState, b: int, req) -> AlterIsrResponseData:
    """KafkaController.processAlterIsr (Kafka 2.7.0, K9; 3.3.0's INELIGIBLE_REPLICA, KAFKA-14140): fence by leader epoch
    and zkVersion, write ZK, UpdateMetadata."""
    c = s.controller_on(b)
    if c is None or not s.zk.sessions[b]:
        # !isActive.  A zombie (its session gone) would block on ZooKeeper, then fail; either way the leader
        # sees a top-level error and keeps its items.
        return AlterIsrResponseData(E.NOT_CONTROLLER)
    c = s.controller_mut(b)
    broker = req.broker_id
    known = c.live_brokers[broker] if 0 <= broker < len(c.live_brokers) else -1
    if known < 0 or (cfg.kip_380 and known != req.broker_epoch):
        return AlterIsrResponseData(E.STALE_BROKER_EPOCH)  # "unknown broker" / "stale broker epoch"
    results = []
    for item in req.partitions:
        p = item.partition
        st = c.partition_states[p] if 0 <= p < len(c.partition_states) else None
        if st is None:
            results.append(AlterIsrPartitionResult(p, E.UNKNOWN_TOPIC_OR_PARTITION))
        elif item.leader_epoch < st.leader_epoch:                                    # strict <
            results.append(AlterIsrPartitionResult(p, E.FENCED_LEADER_EPOCH))
        elif (broker, item.leader_epoch, tuple(item.new_isr)) == (st.leader, st.leader_epoch, st.isr):
            # LeaderAndIsr.equalsIgnoreZk: already in place; answered with the current state, nothing written
            results.append(AlterIsrPartitionResult(p, E.NONE, st.leader, st.leader_epoch, st.isr, st.zk_version))
        elif cfg.kafka_14140 and any(not c.is_live(r) or r in c.shutting_down for r in item.new_isr) and not (
                cfg.partition_epoch_check and st.zk_version != item.zk_version):
            # KafkaController.processAlterPartition (Kafka 3.3.0, KAFKA-14140): an ISR naming a broker outside
            # liveBrokerIds (live, not shutting down) is refused, after the partition-epoch check (INVALID_UPDATE_VERSION)
            results.append(AlterIsrPartitionResult(p, E.INELIGIBLE_REPLICA))
        else:
            if cfg.kafka_6082 and s.zk.controller_epoch_zk_version != c.epoch_zk_version:
                # updateLeaderAndIsr's check on /controller_epoch fails: ControllerMovedException, which
                # processAlterIsr (2.7.0) answers with UNKNOWN_SERVER_ERROR (a top-level error here too, as
                # NOT_CONTROLLER: the leader keeps its items).  Nothing was written before this first write.
                return AlterIsrResponseData(E.NOT_CONTROLLER)
            current = s.zk.partition_states[p]
            if current is None or (cfg.partition_epoch_check and current.zk_version != item.zk_version):
                # KafkaZkClient.updateLeaderAndIsr: the conditional write fails on a bad version
                results.append(AlterIsrPartitionResult(p, E.INVALID_UPDATE_VERSION))
                continue
            new = LeaderIsrAndControllerEpoch(broker, item.leader_epoch, tuple(item.new_isr), c.epoch,
                                              current.zk_version + 1)
            zkm = s.zk_mut()
            zkm.partition_states = replace_at(zkm.partition_states, p, new)
            c.partition_states = replace_at(c.partition_states, p, new)              # updateLeaderAndIsrCache
            results.append(AlterIsrPartitionResult(p, E.NONE, new.leader, new.leader_epoch, new.isr, new.zk_version))
    # processUpdateNotifications: UpdateMetadata for every partition of the request, to every live broker
    send_update_metadata_request(cfg, s, c, live_brokers(c), tuple(item.partition for item in req.partitions))
    return AlterIsrResponseData(E.NONE, tuple(results))


def resign(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """KafkaController.onControllerResignation (Kafka 2.4.0): the channel manager and its queues go away."""
    s.controllers = tuple(c for c in s.controllers if c.broker_id != b)


def deliver_control_request(cfg: ModelConfig, s: ClusterState, controller: int, to: int) -> dict:
    """RequestSendThread sends the head of the queue; the broker handles it (KafkaApis, Kafka 2.4.0); a StopReplica
    (delete) response goes to stopReplicaPartitionDeleteResponseCallback."""
    c = s.controller_mut(controller)
    req = c.queues[to][0]
    c.queues = replace_at(c.queues, to, c.queues[to][1:])
    result = handle_control_request(cfg, s, s.broker_mut(to), req)
    if type(req) is StopReplicaRequest and req.delete_partitions and c.deletion_started:
        _td().stop_replica_delete_response(s, c, to, req, result)
    return result


__all__ = [
    "ControllerBrokerRequestBatch", "IllegalStateException", "ControllerMovedException",
    "elect_controller", "process_broker_change", "process_isr_change_notification", "resign",
    "deliver_control_request", "offline_partition_leader_election", "process_alter_isr",
]
