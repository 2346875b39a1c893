"""Leader elections beyond the offline one, and controlled shutdown, in the ZooKeeper era (Kafka 2.4.0).

The election algorithms of ``PartitionLeaderElectionAlgorithms`` are plain functions of an assignment, an ISR and
the live replicas, as Kafka's ``PartitionLeaderElectionAlgorithmsTest`` calls them.  The controller's uses of them
follow: ``KafkaController.doControlledShutdown`` (the ControlledShutdown request), ``onReplicaElection`` with the
preferred-replica strategy (the /admin/preferred_replica_election znode and the auto-leader-rebalance-task), and the
broker's side of controlled shutdown (``KafkaServer.controlledShutdown``'s retry loop).

A controlled shutdown adds the broker to the controller's ``shuttingDownBrokerIds`` (``Controller.shutting_down``):
it stays among the live-or-shutting-down brokers, which control requests and UpdateMetadata's live brokers count,
but no election picks it (``ControllerContext.isReplicaOnline`` without ``includeShuttingDownBrokers``).
"""

from __future__ import annotations

from . import errors as E
from .config import ModelConfig
from .controller import (ControllerBrokerRequestBatch, ControllerMovedException, _guard, _read_partition_states,
                         remove_replicas_from_isr, resign, write_partition_state)
from .delayed import note_error
from .faults import broker_crash
from .state import ClusterState, ControlledShutdownState, Controller, LeaderIsrAndControllerEpoch

#: KafkaController.onControllerFailover: scheduleAutoLeaderRebalanceTask(delay = 5, unit = SECONDS)
FIRST_REBALANCE_DELAY_MS = 5000


# --------------------------------------------------------------------------- PartitionLeaderElectionAlgorithms
def offline_partition_leader_election(assignment, isr, live_replicas, unclean_enabled: bool) -> int | None:
    """PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection (Kafka 2.4.0): the first live replica in
    assignment order that is in the ISR, else (unclean.leader.election.enable) the first live one."""
    for r in assignment:
        if r in live_replicas and r in isr:
            return r
    if unclean_enabled:
        for r in assignment:
            if r in live_replicas:
                return r
    return None


def preferred_replica_partition_leader_election(assignment, isr, live_replicas) -> int | None:
    """PartitionLeaderElectionAlgorithms.preferredReplicaPartitionLeaderElection (Kafka 2.4.0): the first assigned
    replica if it is live and in the ISR, else none."""
    if assignment and assignment[0] in live_replicas and assignment[0] in isr:
        return assignment[0]
    return None


def controlled_shutdown_partition_leader_election(assignment, isr, live_replicas, shutting_down) -> int | None:
    """PartitionLeaderElectionAlgorithms.controlledShutdownPartitionLeaderElection (Kafka 2.4.0): the first replica in
    assignment order that is live, in the ISR and not shutting down."""
    for r in assignment:
        if r in live_replicas and r in isr and r not in shutting_down:
            return r
    return None


# --------------------------------------------------------------------------- the controller's view
def replica_online(c: Controller):
    """ControllerContext.isReplicaOnline (Kafka 2.4.0): live and not shutting down (liveBrokerIds)."""
    if not c.shutting_down:
        return c.is_live
    down = c.shutting_down
    return lambda b: c.is_live(b) and b not in down


def _elect(cfg: ModelConfig, s: ClusterState, c: Controller, partitions, choose) -> dict:
    """PartitionStateMachine.handleStateChanges(OnlinePartition, strategy) / doElectLeaderForPartitions (Kafka 2.4.0):
    read the partition states from ZooKeeper, skip those another controller wrote (a newer controller epoch), elect
    with ``choose(p, assignment, state) -> (leader, isr, recipients) | None``, write each new state conditionally and
    send LeaderAndIsr to its recipients.  Partition -> the new leader, or None where the election failed
    (StateChangeFailedException).  A fenced write raises ControllerMovedException (nothing is sent)."""
    _read_partition_states(s, c)
    batch = ControllerBrokerRequestBatch(cfg, s, c)
    batch.new_batch()
    results = {}
    for p in sorted(partitions):
        st = s.zk.partition_states[p]
        assignment = c.assignment[p]                 # controllerContext.partitionReplicaAssignment
        chosen = None if st is None or not assignment or st.controller_epoch > c.epoch else choose(p, assignment, st)
        if chosen is None:
            results[p] = None
            continue
        leader, isr, recipients = chosen
        new = LeaderIsrAndControllerEpoch(leader, st.leader_epoch + 1, isr, c.epoch, st.zk_version + 1)
        write_partition_state(cfg, s, c, p, new, st.zk_version)
        batch.add_leader_and_isr_request_for_brokers(recipients, p, new, assignment, False)
        results[p] = leader
    batch.send_requests_to_brokers()
    return results


def elect_preferred_leaders(cfg: ModelConfig, s: ClusterState, c: Controller, partitions) -> dict:
    """KafkaController.onReplicaElection(PREFERRED) / Election.leaderForPreferredReplica (Kafka 2.4.0): the preferred
    replica leads if live and in the ISR, the ISR unchanged, LeaderAndIsr to every assigned replica."""
    online = replica_online(c)

    def choose(p, assignment, st):
        live = tuple(r for r in assignment if online(r))
        leader = preferred_replica_partition_leader_election(assignment, st.isr, live)
        return None if leader is None else (leader, st.isr, assignment)

    return _elect(cfg, s, c, partitions, choose)


def elect_for_controlled_shutdown(cfg: ModelConfig, s: ClusterState, c: Controller, partitions) -> dict:
    """Election.leaderForControlledShutdown (Kafka 2.4.0): the first live, not-shutting-down ISR replica leads, the
    ISR without the shutting-down brokers; LeaderAndIsr to the live-or-shutting-down replicas."""
    down = c.shutting_down

    def choose(p, assignment, st):
        live = tuple(r for r in assignment if c.is_live(r))          # includeShuttingDownBrokers = true
        leader = controlled_shutdown_partition_leader_election(assignment, st.isr, live, down)
        return None if leader is None else (leader, tuple(r for r in st.isr if r not in down), live)

    return _elect(cfg, s, c, partitions, choose)


# --------------------------------------------------------------------------- controlled shutdown: the controller
def do_controlled_shutdown(cfg: ModelConfig, s: ClusterState, c: Controller, b: int, broker_epoch: int) -> tuple:
    """KafkaController.doControlledShutdown (Kafka 2.4.0): (error, partitions b still leads).

    The broker epoch is checked (KIP-380: an older one is STALE_BROKER_EPOCH; a broker the controller does not count
    live has no cached epoch, ``liveBrokerIdAndEpochs(id)`` throws, UNKNOWN_SERVER_ERROR), b joins the shutting-down
    brokers, the partitions it leads (replicated, with a leader) elect with the controlled-shutdown strategy, the
    ones it follows get StopReplica (no delete) and OfflineReplica (StopReplica again, b out of the ISR); the answer
    names the replicated partitions b still leads."""
    known = c.live_brokers[b] if 0 <= b < len(c.live_brokers) else -1
    if broker_epoch != -1:                              # AbstractControlRequest.UNKNOWN_BROKER_EPOCH: not checked
        if known < 0:
            return E.UNKNOWN_SERVER_ERROR, ()
        if broker_epoch < known:
            return E.STALE_BROKER_EPOCH, ()
    if known < 0:
        return E.BROKER_NOT_AVAILABLE, ()
    if b not in c.shutting_down:
        c.shutting_down = tuple(sorted(c.shutting_down + (b,)))
    assignment = c.assignment
    act_on = [p for p, a in enumerate(assignment)
              if b in a and len(a) > 1 and c.partition_states[p] is not None]
    led = [p for p in act_on if c.partition_states[p].leader == b]
    followed = tuple(p for p in act_on if c.partition_states[p].leader != b)
    elect_for_controlled_shutdown(cfg, s, c, led)
    batch = ControllerBrokerRequestBatch(cfg, s, c)
    batch.new_batch()
    for p in followed:
        batch.add_stop_replica_request_for_brokers((b,), p, False)
    batch.send_requests_to_brokers()
    if followed:
        remove_replicas_from_isr(cfg, s, c, (b,), followed)              # ReplicaStateMachine -> OfflineReplica
    still = tuple(p for p, st in enumerate(c.partition_states)
                  if st is not None and st.leader == b and len(assignment[p]) > 1)
    return E.NONE, still


def process_controlled_shutdown(cfg: ModelConfig, s: ClusterState, at: int, b: int, broker_epoch: int) -> tuple:
    """KafkaController.processControlledShutdown on broker ``at`` (Kafka 2.4.0): NOT_CONTROLLER unless an active
    controller lives there (``isActive``); a ZooKeeper write fenced on the way (KAFKA-6082) fails the request with
    NOT_CONTROLLER (ControllerMovedException, caught by the callback's Try: the controller does not resign here)."""
    c = s.controller_on(at)
    if c is None or not s.zk.sessions[at]:
        return E.NOT_CONTROLLER, ()
    try:
        return do_controlled_shutdown(cfg, s, s.controller_mut(at), b, broker_epoch)
    except ControllerMovedException:
        return E.NOT_CONTROLLER, ()


# --------------------------------------------------------------------------- controlled shutdown: the broker
def begin_zk_controlled_shutdown(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """KafkaServer.controlledShutdown (Kafka 2.4.0): PendingControlledShutdown, then the first attempt."""
    br = s.broker_mut(b)
    br.want_shutdown = True
    br.controlled_shutdown = ControlledShutdownState(cfg.controlled_shutdown_max_retries)
    _next_attempt(cfg, s, b)


def _next_attempt(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """doControlledShutdown's loop (KafkaServer, Kafka 2.4.0): each attempt asks ZooKeeper for the controller and its
    registration (else it keeps the previous controller); with none it fails at once.  No attempt left: the broker
    stops anyway ("Proceeding to do an unclean shutdown": a clean process stop whose leaderships were not moved).
    The retry backoff's time is not modelled."""
    br = s.broker_mut(b)
    cs = br.controlled_shutdown
    zk = s.zk
    prev = cs.prev_controller
    retries = cs.remaining_retries
    while retries > 0:
        retries -= 1
        ctl = zk.controller
        if ctl >= 0 and zk.registrations[ctl] >= 0:
            prev = ctl
        if prev >= 0:
            br.controlled_shutdown = ControlledShutdownState(retries, prev, prev,
                                                             br.broker_epoch if cfg.kip_380 else -1)
            return
    broker_crash(cfg, s, b, True)


def deliver_controlled_shutdown(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """NetworkClientUtils.sendAndReceive of the ControlledShutdown request (KafkaServer, Kafka 2.4.0): a broker that is
    down answers nothing (an IOException, NETWORK_EXCEPTION here); else its controller handles it and answers."""
    cs = s.brokers[b].controlled_shutdown
    at = cs.request_to
    if s.brokers[at].alive:
        error, remaining = process_controlled_shutdown(cfg, s, at, b, cs.request_epoch)
    else:
        error, remaining = E.NETWORK_EXCEPTION, ()
    note_error(s, error)
    br = s.broker_mut(b)
    br.controlled_shutdown = ControlledShutdownState(cs.remaining_retries, cs.prev_controller, -1, -1,
                                                     (error, remaining))


def receive_controlled_shutdown_response(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """KafkaServer.controlledShutdown (Kafka 2.4.0): NONE with nothing left to move is success and the broker stops
    cleanly; anything else is a failed attempt, and the next one follows."""
    cs = s.brokers[b].controlled_shutdown
    error, remaining = cs.response
    if error == E.NONE and not remaining:
        broker_crash(cfg, s, b, True)
        return
    s.broker_mut(b).controlled_shutdown = ControlledShutdownState(cs.remaining_retries, cs.prev_controller)
    _next_attempt(cfg, s, b)


# --------------------------------------------------------------------------- preferred-replica elections
def request_preferred_replica_election(cfg: ModelConfig, s: ClusterState, p: int) -> None:
    """KafkaZkClient.createPreferredReplicaElection (Kafka 2.4.0): the admin creates /admin/preferred_replica_election."""
    s.zk_mut().preferred_replica_election = (p,)
    s.ghost_mut().preferred_elections += 1


def _delete_preferred_replica_election(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """KafkaZkClient.deletePreferredReplicaElection(epochZkVersion) (Kafka 2.4.0): fenced with KAFKA-6082."""
    if cfg.kafka_6082 and s.zk.controller_epoch_zk_version != c.epoch_zk_version:
        raise ControllerMovedException("deletePreferredReplicaElection fenced")
    s.zk_mut().preferred_replica_election = ()


def electable_preferred(s: ClusterState, c: Controller, partitions) -> tuple:
    """processReplicaLeaderElection (Kafka 2.4.0): the known partitions whose leader is not their preferred replica
    (the others are ELECTION_NOT_NEEDED, unknown ones UNKNOWN_TOPIC_OR_PARTITION)."""
    assignment = c.assignment
    return tuple(p for p in partitions if 0 <= p < len(assignment) and assignment[p]
                 and c.partition_states[p] is not None and c.partition_states[p].leader != assignment[p][0])


def run_pending_preferred_elections(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """onControllerFailover's fetchPendingPreferredReplicaElections + onReplicaElection(ZkTriggered) (Kafka 2.4.0):
    the partitions of /admin/preferred_replica_election not yet led by their preferred replica elect; then the
    znode is deleted."""
    pending = electable_preferred(s, c, s.zk.preferred_replica_election)
    try:
        elect_preferred_leaders(cfg, s, c, pending)
    finally:
        _delete_preferred_replica_election(cfg, s, c)


@_guard
def process_preferred_replica_election(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """KafkaController.processReplicaLeaderElection(None, PREFERRED, ZkTriggered) (Kafka 2.4.0): read the znode, elect
    the preferred replicas of partitions they do not lead, then delete the znode (removePartitionsFromPreferred
    ReplicaElection, in a finally); a fenced write (KAFKA-6082) makes the controller resign."""
    run_pending_preferred_elections(cfg, s, c)


def elect_leaders(cfg: ModelConfig, s: ClusterState, at: int, p: int) -> str:
    """KafkaController.processReplicaLeaderElection(Some(partitions), PREFERRED, AdminClientTriggered) on broker ``at``
    (Kafka 2.4.0), as ReplicaManager.electLeaders answers it: NOT_CONTROLLER without an active controller there,
    ELECTION_NOT_NEEDED when the preferred replica leads, PREFERRED_LEADER_NOT_AVAILABLE when it cannot be elected
    (StateChangeFailedException), NONE when it is (the DelayedElectLeader's wait for the metadata is not modelled).
    A fenced write (KAFKA-6082) propagates out of the event (no callback: the client's request times out,
    REQUEST_TIMED_OUT here) and the controller resigns."""
    s.ghost_mut().preferred_elections += 1
    c = s.controller_on(at)
    if c is None or not s.zk.sessions[at]:
        return E.NOT_CONTROLLER
    c = s.controller_mut(at)
    if c.partition_states[p] is None:
        return E.UNKNOWN_TOPIC_OR_PARTITION       # no leadership information (the model's one topic always exists)
    if not electable_preferred(s, c, (p,)):
        return E.ELECTION_NOT_NEEDED
    try:
        results = elect_preferred_leaders(cfg, s, c, (p,))
    except ControllerMovedException:
        resign(cfg, s, at)
        return E.REQUEST_TIMED_OUT
    return E.NONE if results[p] is not None else E.PREFERRED_LEADER_NOT_AVAILABLE


def schedule_auto_leader_rebalance(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """KafkaController.onControllerFailover (Kafka 2.4.0): scheduleAutoLeaderRebalanceTask(delay = 5 s) when
    auto.leader.rebalance.enable."""
    if cfg.auto_leader_rebalance_enable:
        c.next_rebalance_ms = s.now + FIRST_REBALANCE_DELAY_MS


def check_and_trigger_auto_leader_rebalance(cfg: ModelConfig, s: ClusterState, c: Controller) -> None:
    """KafkaController.checkAndTriggerAutoLeaderRebalance (Kafka 2.4.0): per preferred broker (ascending here; a Scala
    Map's order in Kafka), if more than leader.imbalance.per.broker.percentage of its partitions are led by another
    broker, the ones whose preferred replica is online elect it (onReplicaElection(PREFERRED, AutoTriggered))."""
    assignment = c.assignment
    by_preferred: dict = {}
    for p, a in enumerate(assignment):
        if a:
            by_preferred.setdefault(a[0], []).append(p)
    online = replica_online(c)
    for b in sorted(by_preferred):
        ps = by_preferred[b]
        imbalanced = [p for p in ps if c.partition_states[p] is not None and c.partition_states[p].leader != b]
        if len(imbalanced) * 100 > cfg.leader_imbalance_per_broker_percentage * len(ps):   # ratio > percentage / 100
            elect_preferred_leaders(cfg, s, c, [p for p in imbalanced if online(b)])


def process_auto_leader_rebalance(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """KafkaController.processAutoPreferredReplicaLeaderElection (Kafka 2.4.0): check and trigger, then schedule the
    next run leader.imbalance.check.interval.seconds later; a fenced write makes the controller resign."""
    c = s.controller_mut(b)
    c.next_rebalance_ms = s.now + cfg.leader_imbalance_check_interval_ms
    try:
        check_and_trigger_auto_leader_rebalance(cfg, s, c)
    except ControllerMovedException:
        resign(cfg, s, b)


__all__ = [
    "offline_partition_leader_election", "preferred_replica_partition_leader_election",
    "controlled_shutdown_partition_leader_election", "replica_online", "elect_preferred_leaders",
    "elect_for_controlled_shutdown", "do_controlled_shutdown", "process_controlled_shutdown",
    "begin_zk_controlled_shutdown", "deliver_controlled_shutdown", "receive_controlled_shutdown_response",
    "request_preferred_replica_election", "process_preferred_replica_election", "schedule_auto_leader_rebalance",
    "check_and_trigger_auto_leader_rebalance", "process_auto_leader_rebalance", "run_pending_preferred_elections",
]
