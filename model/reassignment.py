"""Partition reassignment as in Kafka 2.4 (KIP-455, ZooKeeper era): /admin/reassign_partitions and the controller's
``onPartitionReassignment``.

An admin writes the target replicas (TRS) of a partition to /admin/reassign_partitions (``ReassignPartitions``);
the znode's creation queues a ZkPartitionReassignment event at every controller watching it, handled by
``ControllerProcessPartitionReassignment``.  The controller builds the reassignment (``reassign_to``: RS = TRS + ORS,
AR = RS - ORS adding, RR = RS - TRS removing), writes it to the topic znode, and until every target replica is in
the ISR (in ZooKeeper) it only bumps the leader epoch, sends LeaderAndIsr to RS and starts the adding replicas
(A1-A2).  The leader's ISR write fires the partition state znode's watch (PartitionReassignmentIsrChange,
``ControllerProcessReassignmentIsrChange``), and once TRS is in the ISR the controller completes (B1-B8): moves
leadership into TRS (``reassign_partition_leader_election``) or bumps the epoch, takes the removed replicas offline
(out of the ISR, StopReplica) and deletes them (StopReplica delete), writes RS = TRS, and removes the partition from
/admin/reassign_partitions.  A broker coming back resumes reassignments whose targets it holds; a new controller
resumes them at failover.  Every controller ZooKeeper write is fenced by the controller epoch's zkVersion
(KAFKA-6082), so a controller that moved fails with ControllerMovedException and resigns.
"""

from __future__ import annotations

from .config import ModelConfig
from .controller import (ControllerBrokerRequestBatch, ControllerMovedException, _guard, _read_partition_states,
                         isr_without_replica, live_brokers, send_update_metadata_request, write_partition_state)
from .node import replace_at
from .state import NO_LEADER, ClusterState, Controller, LeaderIsrAndControllerEpoch


class StateChangeFailedException(Exception):
    """kafka.controller.StateChangeFailedException: the partition state was written by a newer controller."""


# --------------------------------------------------------------------------- ReplicaAssignment
def parse_replicas(text: str) -> tuple:
    """``"2,0"`` -> (2, 0): target replicas as an action carries them (ValueError if malformed)."""
    try:
        replicas = tuple(int(x) for x in text.split(",")) if text else ()
    except ValueError:
        replicas = ()
    if not replicas or len(set(replicas)) != len(replicas) or any(r < 0 for r in replicas):
        raise ValueError(f"replicas must be distinct broker ids >= 0 separated by commas, got {text!r}")
    return replicas


def assignment_of(s: ClusterState, p: int) -> tuple:
    """ControllerContext.partitionFullReplicaAssignment (Kafka 2.4.0): (replicas, adding, removing)."""
    rg = s.zk.reassigning
    cur = rg[p] if rg else None
    return (s.zk.assignment[p],) + (cur if cur is not None else ((), ()))


def target_replicas(full: tuple) -> tuple:
    """ReplicaAssignment.targetReplicas: replicas -- removingReplicas."""
    return tuple(r for r in full[0] if r not in full[2])


def reassign_to(full: tuple, target: tuple) -> tuple:
    """ReplicaAssignment.reassignTo / fromOldAndNewReplicas (Kafka 2.4.0): RS = (TRS ++ ORS).distinct, AR = RS -- ORS,
    RR = RS -- TRS, ORS = replicas -- addingReplicas."""
    origin = tuple(r for r in full[0] if r not in full[1])
    rs = tuple(dict.fromkeys(target + origin))
    return rs, tuple(r for r in rs if r not in origin), tuple(r for r in rs if r not in target)


def reassignment_targets(cfg: ModelConfig) -> tuple:
    """The target replicas the engines offer (``max_reassignments``): every set of RF - 1, RF and RF + 1 brokers (at
    least one, at most all), each in ascending order, as the action's string."""
    from itertools import combinations
    sizes = [k for k in (cfg.replication_factor - 1, cfg.replication_factor, cfg.replication_factor + 1)
             if 1 <= k <= cfg.n_brokers]
    return tuple(",".join(map(str, t)) for k in sizes for t in combinations(range(cfg.n_brokers), k))


def is_being_reassigned(full: tuple) -> bool:
    return bool(full[1] or full[2])


def reassign_partition_leader_election(reassignment: tuple, isr: tuple, live) -> int | None:
    """PartitionLeaderElectionAlgorithms.reassignPartitionLeaderElection (Kafka 2.4.0): the first target replica that
    is live and in the ISR, or None."""
    for r in reassignment:
        if live(r) and r in isr:
            return r
    return None


# --------------------------------------------------------------------------- ZooKeeper writes of the controller
def _fenced(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """A conditional write on /controller_epoch's zkVersion (KAFKA-6082): ControllerMovedException once it moved."""
    if cfg.kafka_6082 and s.zk.controller_epoch_zk_version != c.epoch_zk_version:
        raise ControllerMovedException(f"controller epoch zkVersion moved past {c.epoch_zk_version}")


def update_replica_assignment_for_partition(cfg: ModelConfig, s: ClusterState, c: Controller, p: int,
                                            full: tuple) -> None:
    """KafkaController.updateReplicaAssignmentForPartition (Kafka 2.4.0): setTopicAssignmentRaw, the topic znode with
    RS, AR and RR, then controllerContext.updatePartitionFullReplicaAssignment."""
    _fenced(cfg, s, c)
    zk = s.zk_mut()
    zk.assignment = replace_at(zk.assignment, p, full[0])
    if c.assignment:
        c.assignment = replace_at(c.assignment, p, full[0])
    rg = zk.reassigning or (None,) * len(zk.assignment)
    zk.reassigning = replace_at(rg, p, (full[1], full[2]) if is_being_reassigned(full) else None)


def remove_from_zk_reassignment(cfg: ModelConfig, s: ClusterState, c: Controller, p: int, replicas) -> None:
    """KafkaController.maybeRemoveFromZkReassignment (Kafka 2.4.0): drop p's entry if it names ``replicas`` (None:
    whatever it names); the znode is deleted once empty."""
    znode = s.zk.reassign_partitions
    if not znode or znode[p] is None or (replicas is not None and znode[p] != replicas):
        return
    _fenced(cfg, s, c)
    rest = replace_at(znode, p, None)
    s.zk_mut().reassign_partitions = () if all(t is None for t in rest) else rest


def update_leader_epoch(cfg: ModelConfig, s: ClusterState, c: Controller, p: int):
    """KafkaController.updateLeaderEpoch (Kafka 2.4.0): the partition state with the leader epoch bumped, written
    conditionally; None without a state; StateChangeFailedException when a newer controller wrote it."""
    _read_partition_states(s, c)
    st = s.zk.partition_states[p]
    if st is None:
        return None
    if st.controller_epoch > c.epoch:
        raise StateChangeFailedException("Leader and isr path written by another controller")
    new = LeaderIsrAndControllerEpoch(st.leader, st.leader_epoch + 1, st.isr, c.epoch, st.zk_version + 1)
    write_partition_state(cfg, s, c, p, new, st.zk_version)
    return new


# --------------------------------------------------------------------------- the steps of onPartitionReassignment
def update_leader_epoch_and_send_request(cfg: ModelConfig, s: ClusterState, c: Controller, p: int,
                                         full: tuple) -> None:
    """KafkaController.updateLeaderEpochAndSendRequest (Kafka 2.4.0, A1 / B3): LeaderAndIsr in a new epoch to RS."""
    new = update_leader_epoch(cfg, s, c, p)
    if new is None:
        return
    batch = ControllerBrokerRequestBatch(cfg, s, c)
    batch.new_batch()
    batch.add_leader_and_isr_request_for_brokers(full[0], p, new, full[0], False)
    batch.send_requests_to_brokers()


def start_new_replicas(cfg: ModelConfig, s: ClusterState, c: Controller, p: int, full: tuple) -> None:
    """KafkaController.startNewReplicasForReassignedPartition (Kafka 2.4.0, A2): each adding replica -> NewReplica,
    a LeaderAndIsr with isNew of its own (none to the leader)."""
    st = c.partition_states[p]
    for r in full[1]:
        if st is None or st.leader == r:
            continue
        batch = ControllerBrokerRequestBatch(cfg, s, c)
        batch.new_batch()
        batch.add_leader_and_isr_request_for_brokers((r,), p, st, full[0], True)
        batch.send_requests_to_brokers()


def move_reassigned_partition_leader_if_required(cfg: ModelConfig, s: ClusterState, c: Controller, p: int,
                                                 trs: tuple) -> None:
    """KafkaController.moveReassignedPartitionLeaderIfRequired (Kafka 2.4.0, B3): a leader outside TRS, or dead, is
    replaced by ReassignPartitionLeaderElectionStrategy; a live leader in TRS gets a new epoch."""
    _read_partition_states(s, c)
    st = c.partition_states[p]
    if st is None:
        return
    if st.leader in trs and c.is_live(st.leader):
        update_leader_epoch_and_send_request(cfg, s, c, p, (trs, (), ()))
        return
    # PartitionStateMachine.handleStateChanges(OnlinePartition, ReassignPartitionLeaderElectionStrategy)
    if st.controller_epoch > c.epoch:
        return
    leader = reassign_partition_leader_election(trs, st.isr, c.is_live)
    if leader is None:
        return                                   # StateChangeFailedException: logged, the reassignment goes on
    new = LeaderIsrAndControllerEpoch(leader, st.leader_epoch + 1, st.isr, c.epoch, st.zk_version + 1)
    write_partition_state(cfg, s, c, p, new, st.zk_version)
    batch = ControllerBrokerRequestBatch(cfg, s, c)
    batch.new_batch()
    batch.add_leader_and_isr_request_for_brokers(tuple(r for r in trs if c.is_live(r)), p, new, trs, False)
    batch.send_requests_to_brokers()


def stop_removed_replicas(cfg: ModelConfig, s: ClusterState, c: Controller, p: int, removed: tuple,
                          remaining: tuple) -> None:
    """KafkaController.stopRemovedReplicasOfReassignedPartition (Kafka 2.4.0, B4-B5): OfflineReplica (StopReplica
    without delete, out of the ISR but never its last member, the leader gone if it was one, LeaderAndIsr to the
    others), then ReplicaDeletionStarted (StopReplica with delete)."""
    if not removed:
        return
    _read_partition_states(s, c)
    batch = ControllerBrokerRequestBatch(cfg, s, c)
    batch.new_batch()
    for r in removed:
        batch.add_stop_replica_request_for_brokers((r,), p, False)
    for r in removed:                                # ReplicaStateMachine.removeReplicasFromIsr
        st = c.partition_states[p]
        if st is None or r not in st.isr or st.controller_epoch > c.epoch:
            continue
        new = LeaderIsrAndControllerEpoch(NO_LEADER if st.leader == r else st.leader, st.leader_epoch + 1,
                                          isr_without_replica(st.isr, r), c.epoch, st.zk_version + 1)
        write_partition_state(cfg, s, c, p, new, st.zk_version)
        batch.add_leader_and_isr_request_for_brokers(
            tuple(x for x in remaining if x != r and c.is_live(x)), p, new, remaining, False)
    batch.send_requests_to_brokers()
    batch.new_batch()
    for r in removed:
        batch.add_stop_replica_request_for_brokers((r,), p, True)
    batch.send_requests_to_brokers()


def is_reassignment_complete(s: ClusterState, p: int, full: tuple) -> bool:
    """KafkaController.isReassignmentComplete (Kafka 2.4.0): not being reassigned, or TRS within ZooKeeper's ISR."""
    if not is_being_reassigned(full):
        return True
    st = s.zk.partition_states[p]
    return st is not None and set(target_replicas(full)) <= set(st.isr)


def on_partition_reassignment(cfg: ModelConfig, s: ClusterState, c: Controller, p: int, full: tuple) -> None:
    """KafkaController.onPartitionReassignment (Kafka 2.4.0): updateCurrentReassignment, then A1-A2 until TRS is in
    the ISR, B1-B8 once it is."""
    current = assignment_of(s, p)
    if current != full:                                                            # U1-U2
        update_replica_assignment_for_partition(cfg, s, c, p, full)
        unneeded = tuple(r for r in current[0] if r not in full[0])
        stop_removed_replicas(cfg, s, c, p, unneeded, full[0])
    if not is_reassignment_complete(s, p, full):
        update_leader_epoch_and_send_request(cfg, s, c, p, full)                   # A1
        start_new_replicas(cfg, s, c, p, full)                                     # A2
        return
    trs = target_replicas(full)
    # B1 (adding replicas NewReplica -> OnlineReplica: no request) and B2 (RS = TRS in memory)
    move_reassigned_partition_leader_if_required(cfg, s, c, p, trs)                # B3
    stop_removed_replicas(cfg, s, c, p, full[2], trs)                              # B4-B5
    update_replica_assignment_for_partition(cfg, s, c, p, (trs, (), ()))           # B6
    remove_from_zk_reassignment(cfg, s, c, p, trs)                                 # B7
    send_update_metadata_request(cfg, s, c, live_brokers(c), (p,))                 # B8


# --------------------------------------------------------------------------- events and triggers
def admin_reassign_partitions(cfg: ModelConfig, s: ClusterState, p: int, target: tuple) -> None:
    """KafkaZkClient.createPartitionReassignment (Kafka 2.4.0, the admin's reassignment): /admin/reassign_partitions
    is created with p's target replicas; every controller watching it gets a ZkPartitionReassignment event."""
    zk = s.zk_mut()
    zk.reassign_partitions = replace_at((None,) * len(zk.assignment), p, target)
    s.ghost_mut().reassignments += 1
    for c in s.controllers:
        if not c.reassign_event:
            s.controller_mut(c.broker_id).reassign_event = True


def process_zk_partition_reassignment(cfg: ModelConfig, s: ClusterState, c: Controller) -> tuple:
    """KafkaController.processZkPartitionReassignment (Kafka 2.4.0): every entry of /admin/reassign_partitions is
    built (maybeBuildReassignment) and started (maybeTriggerPartitionReassignment); the failed ones (a state change
    refused: UNKNOWN_SERVER_ERROR) are removed from the znode.  The partitions started."""
    started, failed = [], []
    for p, target in enumerate(s.zk.reassign_partitions):
        if target is None:
            continue
        if s.zk.partition_states[p] is None:                 # no assignment yet: UNKNOWN_TOPIC_OR_PARTITION
            failed.append(p)
            continue
        try:
            on_partition_reassignment(cfg, s, c, p, reassign_to(assignment_of(s, p), target))
            started.append(p)
        except StateChangeFailedException:
            failed.append(p)
    for p in failed:
        remove_from_zk_reassignment(cfg, s, c, p, None)
    return tuple(started)


@_guard
def handle_zk_partition_reassignment(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """The ZkPartitionReassignment event (Kafka 2.4.0): processZkPartitionReassignment."""
    c.reassign_event = False
    process_zk_partition_reassignment(cfg, s, c)


def handle_partition_reassignment_isr_change(cfg: ModelConfig, s: ClusterState, b: int, p: int) -> None:
    """KafkaController.processPartitionReassignmentIsrChange (Kafka 2.4.0): the partition state znode changed; a
    reassignment whose TRS is now in the ISR resumes (completes).  A fenced write makes the controller resign."""
    full = assignment_of(s, p)
    if is_being_reassigned(full) and is_reassignment_complete(s, p, full):
        _guard(lambda cfg_, s_, c: _event(on_partition_reassignment, cfg_, s_, c, p, full))(cfg, s, b)


def _event(fn, *args) -> None:
    """A controller event that throws StateChangeFailedException ends there (ControllerEventThread logs it); what it
    changed before stays."""
    try:
        fn(*args)
    except StateChangeFailedException:
        pass


def maybe_resume_reassignments(cfg: ModelConfig, s: ClusterState, c: Controller, should_resume) -> None:
    """KafkaController.maybeResumeReassignments (Kafka 2.4.0): onPartitionReassignment again for the partitions being
    reassigned that ``should_resume(p, full)`` picks."""
    rg = s.zk.reassigning
    for p in range(len(rg)):
        full = assignment_of(s, p)
        if is_being_reassigned(full) and should_resume(p, full):
            _event(on_partition_reassignment, cfg, s, c, p, full)


def resume_reassignments_on_broker_startup(cfg: ModelConfig, s: ClusterState, c: Controller, brokers: tuple) -> None:
    """KafkaController.onBrokerStartup's last step (Kafka 2.4.0): resume the reassignments targeting a new broker."""
    if s.zk.reassigning:
        maybe_resume_reassignments(cfg, s, c, lambda p, full: any(r in brokers for r in target_replicas(full)))


def initialize_partition_reassignments(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """KafkaController.initializePartitionReassignments (Kafka 2.4.0, at failover): /admin/reassign_partitions first,
    then the other reassignments in progress (read from the topic znode)."""
    c.reassign_event = False
    started = process_zk_partition_reassignment(cfg, s, c) if s.zk.reassign_partitions else ()
    if s.zk.reassigning:
        maybe_resume_reassignments(cfg, s, c, lambda p, full: p not in started)
