"""``initial_state``, ``enabled_actions`` and ``step``: the model's transition system.

``step(cfg, s, a)`` is pure: it returns the successor state, or ``None`` when
``a`` is not enabled in ``s``; ``s`` itself is never changed.  Each action type
has a guard (its enabling condition, evaluated on ``s``) and an effect
(applied to a copy-on-write clone, see ``node.py``).  ``enabled_actions`` lists
every enabled action in a fixed, documented order: by action type in the order
of ``actions.ACTION_TYPES``, then by broker, partition and the remaining fields
ascending (``Tick`` last-listed sizes: the longest tick allowed first, then the
configured sizes ascending).
"""

from __future__ import annotations

from itertools import chain

from . import actions as A
from .alter_isr import fail_alter_isr, handle_alter_isr, receive_alter_isr_response, send_alter_isr
from .broker_metadata import apply_next_record, begin_controlled_shutdown, deliver_orphan_heartbeat, heartbeat
from .broker_metadata import expired_heartbeat
from .assignment import BrokerMetadata, assign_replicas_to_brokers
from .config import ModelConfig, directory_assignment
from .controller import (deliver_control_request, live_set_changed, elect_controller, process_broker_change,
                         process_isr_change_notification, resign)
from .delayed import expire_delayed_produce, note_error, note_response
from .elections import (begin_zk_controlled_shutdown, deliver_controlled_shutdown, elect_leaders,
                        process_auto_leader_rebalance,
                        process_preferred_replica_election, receive_controlled_shutdown_response,
                        request_preferred_replica_election)
from .delayed import expire_delayed_fetch, note_consumed as _consumed
from .fetch_from_follower import consumer_fetch_with_client_metadata
from .faults import (broker_crash, broker_restart, disk_wipe, flush_log, zk_delete_controller, zk_reconnect,
                     zk_session_expire)
from .fetcher import (deliver_orphan_fetch, process_fetch_response, receive_epoch_response, send_epoch_request,
                      send_fetch, truncate_to_epoch_end_offset)
from .list_offsets import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, handle_list_offsets
from .losses import judge
from .node import memo_by_identity
from .quorum_controller import (alter_partition_reassignment, controller_failover, elect_leader, fence_broker,
                                initial_quorum, is_unfenced, lose_heartbeats, reassignment_refusal, session_expired)
from .quorum_controller import alter_topic_config, create_partition, registration
from .quorum_controller import balance_partition_leaders, maybe_schedule_balance
from .quorum_controller import delete_topic as kraft_delete_topic
from .quorum_controller import forged_alter_partition, forged_alter_partitions
from .replica_manager import (CONSUMER_ID, append_records, checkpoint_high_watermarks, delete_records, fetch_messages,
                              isr_expiration, maybe_propagate_isr_changes, run_log_retention)
from .log import UNDEFINED_EPOCH, deletable_segments
from .replica_manager import fetch_messages_with_wait, fetch_waiting
from .reassignment import (admin_reassign_partitions, assignment_of, handle_partition_reassignment_isr_change,
                           handle_zk_partition_reassignment, is_being_reassigned, is_reassignment_complete,
                           parse_replicas, reassignment_targets)
from .partition import prepare_isr_expand
from .jbod import can_fail, log_dir_failure, send_assignment
from .state import (FETCHING, TRUNCATING, Broker, ClusterState, Ghost, OrphanHeartbeat, Partition, ZooKeeper)
from .topics import (can_create_partitions, can_create_topic, can_delete_topic, create_partitions, create_topic,
                     delete_topic, initial_assignment, process_stop_replica_response, process_topic_change,
                     process_topic_deletion, topic_assignment, topic_change_pending)


class NotEnabled(ValueError):
    """An action applied in a state where it is not enabled."""


def initial_state(cfg: ModelConfig, start: dict | None = None) -> ClusterState:
    """All brokers up and registered, the topic's assignment in ZooKeeper, no controller elected yet.

    With ``start`` (a trace's start object, ``model/start.py``), the disks and ZooKeeper (KRaft: the quorum
    controller's metadata image, ``model/kraft_start.py``) hold what it describes; ``start.StartError`` if it is
    not a consistent cluster."""
    n, np_ = cfg.n_brokers, cfg.n_partitions
    brokers_meta = tuple(BrokerMetadata(b, cfg.racks[b] if cfg.racks else None) for b in range(n))
    assignment = assign_replicas_to_brokers(np_, cfg.replication_factor, brokers_meta,
                                            cfg.assignment_start_index, 0, cfg.assignment_replica_shift)
    none = (None,) * np_
    t0 = cfg.start_time_ms
    kraft = cfg.kip_500
    brokers = tuple(
        Broker(b, alive=True, broker_epoch=b if kraft else b + 1, partitions=none, logs=none, fetchers=none,
               hw_checkpoint=none, next_isr_expiration_ms=t0 + cfg.phase_of(b),
               # ReplicaManager.startup (2.7.0): no isr-change-propagation task when AlterIsr is on
               next_isr_propagation_ms=-1 if cfg.kip_497 else t0,
               last_isr_change_ms=t0, last_isr_propagation_ms=t0, next_heartbeat_ms=t0 if kraft else -1)
        for b in range(n))
    assignment = tuple(tuple(r) for r in assignment)
    if cfg.initial_partitions >= 0:
        assignment = initial_assignment(cfg)   # the partitions not created yet have no assignment (model/topics.py)
    if kraft:
        # KRaft: the topic's assignment is kept here as the static input it is; ZooKeeper holds nothing else
        zk = ZooKeeper(assignment=assignment, partition_states=none, registrations=(-1,) * n, sessions=(False,) * n)
    else:
        zk = ZooKeeper(assignment=assignment, partition_states=none,
                       registrations=tuple(range(1, n + 1)), sessions=(True,) * n, next_czxid=n + 1)
    s = ClusterState(now=t0, brokers=brokers, zk=zk, controllers=(), ghost=Ghost(session_since=(t0,) * n),
                     quorum=initial_quorum(assignment, n, t0, cfg) if kraft else None)
    if start is None:
        return s
    from .start import StartError, build_start
    if cfg.initial_partitions >= 0:
        raise StartError("a start describes the whole topic: initial_partitions must be -1 (all) with a start")
    if kraft:
        from .kraft_start import build_kraft_start
        return build_kraft_start(cfg, start, s)
    return build_start(cfg, start, s)


# =========================================================================== guards
def _controller_can_act(s: ClusterState, c) -> bool:
    return c is not None and s.zk.sessions[c.broker_id]


def g_elect_controller(cfg, s, a) -> bool:
    b = a.broker
    return (0 <= b < len(s.brokers) and s.zk.controller == -1 and s.brokers[b].alive and s.zk.sessions[b]
            and s.controller_on(b) is None and s.zk.controller_epoch < cfg.max_controller_epoch)


def g_broker_change(cfg, s, a) -> bool:
    c = s.controller_on(a.controller)
    return _controller_can_act(s, c) and live_set_changed(cfg, c, s.zk.registrations)


def g_isr_notification(cfg, s, a) -> bool:
    return _controller_can_act(s, s.controller_on(a.controller)) and bool(s.zk.isr_change_notifications)


def g_resign(cfg, s, a) -> bool:
    c = s.controller_on(a.controller)
    return c is not None and (s.zk.controller != c.broker_id or s.zk.controller_epoch != c.epoch)


def g_deliver(cfg, s, a) -> bool:
    c = s.controller_on(a.controller)
    return (c is not None and 0 <= a.broker < len(s.brokers) and bool(c.queues[a.broker])
            and s.brokers[a.broker].alive)


def _bp(s, a) -> bool:
    return 0 <= a.broker < len(s.brokers) and 0 <= a.partition < len(s.zk.assignment)


def g_prepare_isr_expand(cfg, s, a) -> bool:
    """A live leader whose maybeExpandIsr decided an expansion it has not built yet (``isr_expand_window``)."""
    if not _bp(s, a):
        return False
    br = s.brokers[a.broker]
    part = br.partitions[a.partition]
    return br.alive and type(part) is Partition and part.expand_checked >= 0 and part.leader == a.broker


def g_produce(cfg, s, a) -> bool:
    return _bp(s, a) and s.brokers[a.broker].alive and s.ghost.produced < cfg.max_records


def g_consumer_fetch(cfg, s, a) -> bool:
    return _bp(s, a) and s.brokers[a.broker].alive and a.isolation in A.ISOLATIONS


def g_client_metadata_fetch(cfg, s, a) -> bool:
    return _bp(s, a) and s.brokers[a.broker].alive and a.current_leader_epoch >= -1


def g_fetch_request(cfg, s, a) -> bool:
    if not _bp(s, a):
        return False
    br = s.brokers[a.broker]
    f = br.fetchers[a.partition]
    return (br.alive and f is not None and f.state == FETCHING and f.inflight is None
            and s.brokers[f.leader].alive)


def g_fetch_response(cfg, s, a) -> bool:
    if not _bp(s, a):
        return False
    br = s.brokers[a.broker]
    f = br.fetchers[a.partition]
    return br.alive and f is not None and f.inflight is not None


def _truncating(s, a):
    """The fetch state of a live follower that truncates towards a live leader, or None."""
    br = s.brokers[a.broker]
    f = br.fetchers[a.partition]
    return f if br.alive and f is not None and f.state == TRUNCATING and s.brokers[f.leader].alive else None


def g_offsets_for_leader_epoch(cfg, s, a) -> bool:
    if not _bp(s, a) or cfg.truncation == "hw" or cfg.offsets_for_leader_epoch_in_flight:
        return False
    return _truncating(s, a) is not None


def g_epoch_request(cfg, s, a) -> bool:
    if not _bp(s, a) or cfg.truncation == "hw" or not cfg.offsets_for_leader_epoch_in_flight:
        return False
    f = _truncating(s, a)
    return f is not None and not f.epoch_request


def g_epoch_response(cfg, s, a) -> bool:
    if not _bp(s, a):
        return False
    br = s.brokers[a.broker]
    f = br.fetchers[a.partition]
    return br.alive and f is not None and bool(f.epoch_request)


def _b(s, a) -> bool:
    return 0 <= a.broker < len(s.brokers)


def g_list_offsets(cfg, s, a) -> bool:
    """Any live broker answers; the request's fields are in range (as ``actions.action_from_json`` checks)."""
    return (_bp(s, a) and s.brokers[a.broker].alive and a.isolation in A.ISOLATIONS and a.timestamp >= -2
            and a.replica_id >= -2 and a.current_leader_epoch >= -1)


def g_alter_isr_request(cfg, s, a) -> bool:
    """Unsent items, no request in flight, and the broker's metadata names a live broker hosting a controller (KRaft:
    the quorum controller, always reachable)."""
    if not _b(s, a):
        return False
    br = s.brokers[a.broker]
    if not br.alive or not br.alter_isr_unsent or br.alter_isr_inflight is not None:
        return False
    if cfg.kip_500:
        return True
    t = br.metadata.controller_id
    return 0 <= t < len(s.brokers) and s.brokers[t].alive and s.controller_on(t) is not None


def g_alter_isr_received(cfg, s, a) -> bool:
    """A request in flight that the controller has not handled yet."""
    if not _b(s, a):
        return False
    inflight = s.brokers[a.broker].alter_isr_inflight
    return inflight is not None and inflight.response is None


def g_alter_isr_response(cfg, s, a) -> bool:
    if not _b(s, a):
        return False
    inflight = s.brokers[a.broker].alter_isr_inflight
    return inflight is not None and inflight.response is not None


def _alter_isr_unhandled(br) -> bool:
    """A live broker's own request in flight that no controller has handled (what AlterIsrFailed may answer)."""
    inflight = br.alter_isr_inflight
    return br.alive and inflight is not None and inflight.response is None and not inflight.orphan


def g_alter_isr_failed(cfg, s, a) -> bool:
    """``_alter_isr_unhandled``, within ``max_alter_isr_failures``."""
    return (_b(s, a) and a.error in A.ALTER_ISR_FAULT_ERRORS and s.ghost.alter_isr_failures < cfg.max_alter_isr_failures
            and _alter_isr_unhandled(s.brokers[a.broker]))


def g_isr_expiration(cfg, s, a) -> bool:
    return _b(s, a) and s.brokers[a.broker].alive and s.now >= s.brokers[a.broker].next_isr_expiration_ms


def g_isr_propagation(cfg, s, a) -> bool:
    if not _b(s, a):
        return False
    br = s.brokers[a.broker]
    return br.alive and 0 <= br.next_isr_propagation_ms <= s.now   # -1: not scheduled (KIP-497)


def g_hw_checkpoint(cfg, s, a) -> bool:
    if not _b(s, a):
        return False
    br = s.brokers[a.broker]
    return br.alive and br.hw_checkpoint_started and s.now >= br.next_hw_checkpoint_ms


def g_delayed_expire(cfg, s, a) -> bool:
    if not _b(s, a):
        return False
    br = s.brokers[a.broker]
    return br.alive and any(dp.request_id == a.request and s.now >= dp.deadline_ms for dp in br.delayed_produces)


def g_consumer_fetch_wait(cfg, s, a) -> bool:
    """Any live broker answers; the request's fields are in range (as ``actions.action_from_json`` checks), and the
    same consumer's fetch is not already waiting there (one fetch in flight per consumer and broker)."""
    return (_bp(s, a) and s.brokers[a.broker].alive and a.isolation in A.ISOLATIONS and a.fetch_offset >= -1
            and a.min_bytes >= 0 and a.max_wait_ms >= 0 and a.current_leader_epoch >= -1
            and not (s.brokers[a.broker].delayed_fetches and fetch_waiting(
                s.brokers[a.broker], a.partition, a.fetch_offset, a.min_bytes, a.current_leader_epoch,
                a.client_metadata, a.rack, a.isolation)))


def g_delayed_fetch_expire(cfg, s, a) -> bool:
    if not _b(s, a):
        return False
    br = s.brokers[a.broker]
    return br.alive and any(df.request_id == a.request and s.now >= df.deadline_ms for df in br.delayed_fetches)


def g_reassign_partitions(cfg, s, a) -> bool:
    """No /admin/reassign_partitions znode (createPartitionReassignment fails with NodeExists), within the budget, a
    target of known brokers.  In KRaft: a target within the budget, or a cancel (``""``), that the quorum controller
    accepts (``reassignment_refusal``)."""
    if cfg.kip_500:
        return _kraft_reassignment_offered(cfg, s, a.partition, a.replicas)
    if not 0 <= a.partition < len(s.zk.assignment) or s.zk.reassign_partitions \
            or s.ghost.reassignments >= cfg.max_reassignments:
        return False
    try:
        target = parse_replicas(a.replicas)
    except ValueError:
        return False
    return all(r < len(s.brokers) for r in target)


def _kraft_reassignment_offered(cfg, s, p: int, text: str) -> bool:
    """ReassignPartitions in KRaft: a cancel of a reassignment in progress, or a target within ``max_reassignments``,
    that ReplicationControlManager.alterPartitionReassignment would not refuse (the model's admin sends no refused
    request)."""
    if text == "":
        return reassignment_refusal(cfg, s.quorum, p, None) is None
    if s.ghost.reassignments >= cfg.max_reassignments:
        return False
    try:
        target = parse_replicas(text)
    except ValueError:
        return False
    return reassignment_refusal(cfg, s.quorum, p, target) is None and not _changes_nothing(s.quorum, p, target)


def _changes_nothing(q, p: int, target: tuple) -> bool:
    """The target is the partition's replicas and none is being reassigned: the controller writes no record (a
    no-op the engines do not spend the budget on)."""
    part = q.partitions[p]
    return target == part.replicas and not part.adding_replicas and not part.removing_replicas


def g_reassignment_event(cfg, s, a) -> bool:
    c = s.controller_on(a.controller)
    return _controller_can_act(s, c) and c.reassign_event


def g_reassignment_isr_change(cfg, s, a) -> bool:
    """The watch fires on the state znode of a partition being reassigned; the event changes something only once
    TRS is in the ISR, so it is offered then."""
    if not 0 <= a.partition < len(s.zk.assignment) or not s.zk.reassigning or s.zk.reassigning[a.partition] is None:
        return False
    return (_controller_can_act(s, s.controller_on(a.controller))
            and is_reassignment_complete(s, a.partition, assignment_of(s, a.partition)))


def g_flush(cfg, s, a) -> bool:
    if not _bp(s, a):
        return False
    br = s.brokers[a.broker]
    log = br.logs[a.partition]
    return (br.alive and log is not None and log.recovery_point < log.log_end_offset
            and s.ghost.flushes < cfg.max_flushes)


def tick_limit(cfg: ModelConfig, s: ClusterState):
    """The latest time the clock may reach before some scheduled task or timeout must run (None: unbounded)."""
    limit = None
    jitter = cfg.scheduler_jitter_ms
    for br in s.brokers:
        if not br.alive:
            continue
        for due in (br.next_isr_expiration_ms, br.next_isr_propagation_ms,
                    br.next_hw_checkpoint_ms if br.hw_checkpoint_started else -1):
            if due >= 0 and (limit is None or due + jitter < limit):
                limit = due + jitter
        for dp in br.delayed_produces:
            if limit is None or dp.deadline_ms < limit:
                limit = dp.deadline_ms
        for df in br.delayed_fetches:                   # DelayedFetch: fetch.max.wait.ms
            if limit is None or df.deadline_ms < limit:
                limit = df.deadline_ms
        due = br.next_heartbeat_ms                      # KRaft: BrokerLifecycleManager's heartbeat
        if due >= 0 and (limit is None or due + jitter < limit):
            limit = due + jitter
    if cfg.auto_leader_rebalance_enable:                # the controller's auto-leader-rebalance-task
        for c in s.controllers:
            due = c.next_rebalance_ms
            if due >= 0 and s.zk.sessions[c.broker_id] and (limit is None or due + jitter < limit):
                limit = due + jitter
    q = s.quorum
    if q is not None and q.next_balance_ms >= 0:        # KRaft: the quorum controller's leader balancing
        due = q.next_balance_ms + jitter
        if limit is None or due < limit:
            limit = due
    if q is not None:                                   # KRaft: the controller's stale-broker check
        timeout = cfg.broker_session_timeout_ms
        for b, reg in enumerate(q.registrations):
            if reg is not None and not reg.fenced:
                due = q.last_contact_ms[b] + timeout + 1
                if limit is None or due < limit:
                    limit = due
    return limit


def g_tick(cfg, s, a) -> bool:
    if a.ms <= 0:
        return False
    limit = tick_limit(cfg, s)
    return limit is None or s.now + a.ms <= limit


def g_crash(cfg, s, a) -> bool:
    return _b(s, a) and s.brokers[a.broker].alive and s.ghost.crashes < cfg.max_crashes


def g_restart(cfg, s, a) -> bool:
    """A dead broker whose session is gone: ZooKeeper's, or (KRaft) its registration fenced by the controller, so that
    the new incarnation may register (ClusterControlManager.registerBroker refuses it while the old session lives)."""
    if not _b(s, a) or s.brokers[a.broker].alive:
        return False
    if cfg.kip_500:
        reg = s.quorum.registrations[a.broker]
        return reg is None or reg.fenced
    return not s.zk.sessions[a.broker]


def g_metadata_apply(cfg, s, a) -> bool:
    return _b(s, a) and s.brokers[a.broker].alive and s.brokers[a.broker].metadata_offset < len(s.quorum.log)


def g_heartbeat(cfg, s, a) -> bool:
    if not _b(s, a):
        return False
    br = s.brokers[a.broker]
    return br.alive and 0 <= br.next_heartbeat_ms <= s.now


def g_fence(cfg, s, a) -> bool:
    return _b(s, a) and is_unfenced(s.quorum, a.broker) and session_expired(cfg, s.quorum, a.broker, s.now)


def g_controlled_shutdown(cfg, s, a) -> bool:
    """A live, registered broker not already shutting down, within the crash budget (a shutdown ends in a stop); in the
    ZooKeeper era only with controlled.shutdown.enable."""
    if not _b(s, a) or not (cfg.kip_500 or cfg.controlled_shutdown_enable):
        return False
    br = s.brokers[a.broker]
    return br.alive and not br.want_shutdown and br.broker_epoch >= 0 and s.ghost.crashes < cfg.max_crashes


def g_controller_failover(cfg, s, a) -> bool:
    """Within the budget of controller moves (KRaft; the ZooKeeper era moves its controller by ZkDeleteController)."""
    return s.ghost.controller_moves < cfg.max_controller_moves


def g_controlled_shutdown_request(cfg, s, a) -> bool:
    """A live broker whose ControlledShutdown request is in flight."""
    if not _b(s, a):
        return False
    br = s.brokers[a.broker]
    return br.alive and br.controlled_shutdown is not None and br.controlled_shutdown.request_to >= 0


def g_controlled_shutdown_response(cfg, s, a) -> bool:
    """A live broker whose ControlledShutdown response waits to be read."""
    if not _b(s, a):
        return False
    br = s.brokers[a.broker]
    return br.alive and br.controlled_shutdown is not None and bool(br.controlled_shutdown.response)


def g_preferred_replica_election(cfg, s, a) -> bool:
    """The partition exists, /admin/preferred_replica_election does not (its creation would fail: NodeExists),
    within the budget."""
    return (0 <= a.partition < len(s.zk.assignment) and not s.zk.preferred_replica_election
            and s.ghost.preferred_elections < cfg.max_preferred_elections)


def _pending_election_ready(s, c) -> bool:
    """The znode's partitions all have leadership information at the controller (else Kafka's event fails on the
    missing key and changes nothing: the model waits instead)."""
    return all(c.partition_states[p] is not None for p in s.zk.preferred_replica_election
               if 0 <= p < len(c.partition_states))


def g_preferred_election_process(cfg, s, a) -> bool:
    c = s.controller_on(a.controller)
    return (_controller_can_act(s, c) and bool(s.zk.preferred_replica_election)
            and _pending_election_ready(s, c))


def g_elect_leaders(cfg, s, a) -> bool:
    """A live broker, an existing partition, within the admin's budget (``max_preferred_elections``); the UNCLEAN
    type only in KRaft (the ZooKeeper-era model's controller elects the preferred replica only)."""
    return (_bp(s, a) and s.brokers[a.broker].alive and s.ghost.preferred_elections < cfg.max_preferred_elections
            and a.election_type in (A.ELECTION_TYPES if cfg.kip_500 else ("PREFERRED",)))


def g_auto_leader_rebalance(cfg, s, a) -> bool:
    """The task is due: the ZooKeeper-era controller's on ``a.controller``, or in KRaft (``a.controller`` -1, the
    quorum controller, which is no broker) the quorum controller's maybeBalancePartitionLeaders event."""
    if s.quorum is not None:
        return a.controller == -1 and 0 <= s.quorum.next_balance_ms <= s.now
    c = s.controller_on(a.controller)
    return _controller_can_act(s, c) and 0 <= c.next_rebalance_ms <= s.now


def g_disk_wipe(cfg, s, a) -> bool:
    """A stopped broker that still has a log, within the budget."""
    return (_b(s, a) and not s.brokers[a.broker].alive and s.ghost.disk_wipes < cfg.max_disk_wipes
            and any(log is not None for log in s.brokers[a.broker].logs))


def g_heartbeats_lost(cfg, s, a) -> bool:
    return (_b(s, a) and s.brokers[a.broker].alive and is_unfenced(s.quorum, a.broker)
            and not session_expired(cfg, s.quorum, a.broker, s.now)
            and s.ghost.session_expirations < cfg.max_session_expirations)


def g_session_expire(cfg, s, a) -> bool:
    return _b(s, a) and s.zk.sessions[a.broker] and (
        not s.brokers[a.broker].alive or s.ghost.session_expirations < cfg.max_session_expirations)


def g_reconnect(cfg, s, a) -> bool:
    return _b(s, a) and s.brokers[a.broker].alive and not s.zk.sessions[a.broker]


def g_delete_controller(cfg, s, a) -> bool:
    """/controller is held by ``a.controller`` (so its session is alive), within the budget, and a new controller
    epoch is still within bounds (a deletion no controller could follow is left out)."""
    return (0 <= a.controller < len(s.brokers) and s.zk.controller == a.controller
            and s.controller_on(a.controller) is not None and s.ghost.controller_moves < cfg.max_controller_moves
            and s.zk.controller_epoch < cfg.max_controller_epoch)


def g_delete_records(cfg, s, a) -> bool:
    """A live broker answers, within the budget of DeleteRecords requests."""
    return _bp(s, a) and s.brokers[a.broker].alive and s.ghost.delete_records < cfg.max_delete_records


def g_delete_old_segments(cfg, s, a) -> bool:
    """The retention task on a live broker's log, within its budget, when a segment is over the limit."""
    if not _bp(s, a) or s.ghost.retention_runs >= cfg.max_retention_runs:
        return False
    br = s.brokers[a.broker]
    log = br.logs[a.partition]
    return (br.alive and log is not None
            and deletable_segments(log, cfg.retention_records, cfg.kafka_5634) > log.log_start_offset)


def g_delete_topic(cfg, s, a) -> bool:
    """The topic exists and is not being deleted, within ``max_topic_deletions`` (both eras: KRaft's DeleteTopics goes
    to the quorum controller)."""
    return can_delete_topic(cfg, s)


def g_create_topic(cfg, s, a) -> bool:
    """The topic does not exist, within ``max_partition_creations`` (in KRaft the quorum controller may refuse it)."""
    return can_create_topic(cfg, s)


def g_create_partitions(cfg, s, a) -> bool:
    """The topic has room for another partition, within ``max_partition_creations`` (in KRaft the quorum controller
    may refuse it)."""
    return can_create_partitions(cfg, s)


def g_alter_topic_config(cfg, s, a) -> bool:
    """KRaft: the topic exists and its dynamic unclean.leader.election.enable is not already ``a.value``, within
    ``max_config_changes`` (the model's admin sends only SETs that change it)."""
    q = s.quorum
    return (q is not None and s.ghost.config_changes < cfg.max_config_changes and isinstance(a.value, bool)
            and q.topic_unclean_leader_election is not a.value
            and any(registration(q, p) is not None for p in range(len(q.partitions))))


def g_topic_deletion(cfg, s, a) -> bool:
    """/admin/delete_topics holds the topic and the controller has not queued it (its TopicDeletion event pending)."""
    c = s.controller_on(a.controller)
    return _controller_can_act(s, c) and s.zk.delete_topics and not c.deleting


def g_topic_change(cfg, s, a) -> bool:
    c = s.controller_on(a.controller)
    return _controller_can_act(s, c) and topic_change_pending(s, c)


def g_stop_replica_response(cfg, s, a) -> bool:
    c = s.controller_on(a.controller)
    return _controller_can_act(s, c) and bool(c.stop_replica_responses)


def orphan_of(s: ClusterState, a):
    """The first request on its way from an earlier incarnation of ``a.broker`` that ``a`` names (an OrphanFetch for
    its partition, or an OrphanHeartbeat), or None; a Fetch only while the leader it went to runs."""
    if not _b(s, a):
        return None
    heartbeat = a.api == "BROKER_HEARTBEAT"
    for o in s.brokers[a.broker].orphans:
        if type(o) is OrphanHeartbeat:
            if heartbeat and a.partition == -1:
                return o
        elif not heartbeat and a.api == "FETCH" and o.partition == a.partition and s.brokers[o.leader].alive:
            return o
    return None


def g_orphan_received(cfg, s, a) -> bool:
    return orphan_of(s, a) is not None


def g_alter_partition_received(cfg, s, a) -> bool:
    """Within ``max_forged_alter_partitions``, from one of the model's broker ids, for one of its partitions."""
    return (len(s.ghost.forged_answers) < cfg.max_forged_alter_partitions and _b(s, a)
            and 0 <= a.partition < len(s.quorum.partitions))


def g_expired_heartbeat(cfg, s, a) -> bool:
    """A heartbeat due (``g_heartbeat``), within ``max_expired_heartbeats``."""
    return s.ghost.expired_heartbeats < cfg.max_expired_heartbeats and g_heartbeat(cfg, s, a)


def g_log_dir_failure(cfg, s, a) -> bool:
    """``jbod.can_fail``: a live broker's online directory, not its last, within ``max_log_dir_failures``."""
    return can_fail(cfg, s, a.broker, a.directory)


def g_assign_replicas_to_dirs(cfg, s, a) -> bool:
    """A live, registered broker, an existing partition, with log directories (``log_dirs``): any directory its
    AssignmentsManager could name (the engines offer the assignments it has queued, ``Broker.dir_assignments``)."""
    return (cfg.log_dirs > 0 and _bp(s, a) and s.brokers[a.broker].alive and s.brokers[a.broker].broker_epoch >= 0
            and bool(a.directory))


# =========================================================================== effects
def _begin(s: ClusterState) -> ClusterState:
    """A clone of the cluster owning a fresh write token (see node.py)."""
    return s._clone(object())


def e_elect_controller(cfg, s, a):
    elect_controller(cfg, s, a.broker)


def e_broker_change(cfg, s, a):
    process_broker_change(cfg, s, a.controller)


def e_isr_notification(cfg, s, a):
    process_isr_change_notification(cfg, s, a.controller)


def e_resign(cfg, s, a):
    resign(cfg, s, a.controller)


def e_deliver(cfg, s, a):
    deliver_control_request(cfg, s, a.controller, a.broker)


def e_produce(cfg, s, a):
    append_records(cfg, s, s.broker_mut(a.broker), a.partition, a.acks)


def e_consumer_fetch(cfg, s, a):
    br = s.broker_mut(a.broker)
    log = br.logs[a.partition]
    start = log.log_start_offset if log is not None else 0
    resp = fetch_messages(cfg, s, br, a.partition, CONSUMER_ID, start, -1, isolation=a.isolation)
    _consumed(s, br, a.partition, resp)


def e_consumer_fetch_with_client_metadata(cfg, s, a):
    br = s.broker_mut(a.broker)
    resp = consumer_fetch_with_client_metadata(cfg, s, br, a.partition, a.current_leader_epoch, a.rack)
    if resp.error != "NONE":
        note_error(s, resp.error)
    _consumed(s, br, a.partition, resp)


def e_fetch_request(cfg, s, a):
    send_fetch(cfg, s, a.broker, a.partition)


def e_fetch_response(cfg, s, a):
    error = process_fetch_response(cfg, s, a.broker, a.partition)
    if error == "NONE":
        note_error(s, error)


def e_offsets_for_leader_epoch(cfg, s, a):
    asks = s.brokers[a.broker].logs[a.partition].latest_epoch != UNDEFINED_EPOCH  # else no request is sent
    error = truncate_to_epoch_end_offset(cfg, s, a.broker, a.partition)
    if asks:
        note_response(s, "offsets_for_leader_epoch", a.broker, a.partition, error)


def e_epoch_request(cfg, s, a):
    send_epoch_request(cfg, s, a.broker, a.partition)


def e_epoch_response(cfg, s, a):
    error = receive_epoch_response(cfg, s, a.broker, a.partition)
    if error is not None:
        note_response(s, "offsets_for_leader_epoch", a.broker, a.partition, error)


def e_list_offsets(cfg, s, a):
    resp = handle_list_offsets(s, s.brokers[a.broker], a.partition, a.timestamp, a.isolation, a.replica_id,
                               a.current_leader_epoch)
    note_error(s, resp.error)
    note_response(s, "list_offsets", a.broker, a.partition, resp)


def e_alter_isr_request(cfg, s, a):
    send_alter_isr(cfg, s, a.broker)


def e_prepare_isr_expand(cfg, s, a):
    prepare_isr_expand(cfg, s, s.broker_mut(a.broker), a.partition)


def e_alter_isr_received(cfg, s, a):
    handle_alter_isr(cfg, s, a.broker)


def e_alter_isr_response(cfg, s, a):
    receive_alter_isr_response(cfg, s, a.broker)


def e_alter_isr_failed(cfg, s, a):
    fail_alter_isr(cfg, s, a.broker, a.error)


def e_isr_expiration(cfg, s, a):
    isr_expiration(cfg, s, s.broker_mut(a.broker))


def e_isr_propagation(cfg, s, a):
    maybe_propagate_isr_changes(cfg, s, s.broker_mut(a.broker))


def e_hw_checkpoint(cfg, s, a):
    checkpoint_high_watermarks(cfg, s, s.broker_mut(a.broker))


def e_delayed_expire(cfg, s, a):
    expire_delayed_produce(s, s.broker_mut(a.broker), a.request)


def e_flush(cfg, s, a):
    flush_log(cfg, s, a.broker, a.partition)


def e_tick(cfg, s, a):
    s.now += a.ms


def e_crash(cfg, s, a):
    broker_crash(cfg, s, a.broker, a.clean)


def e_restart(cfg, s, a):
    broker_restart(cfg, s, a.broker)


def e_session_expire(cfg, s, a):
    zk_session_expire(cfg, s, a.broker)


def e_reconnect(cfg, s, a):
    zk_reconnect(cfg, s, a.broker)


def e_delete_controller(cfg, s, a):
    zk_delete_controller(cfg, s, a.controller)


def e_metadata_apply(cfg, s, a):
    apply_next_record(cfg, s, a.broker)


def e_heartbeat(cfg, s, a):
    heartbeat(cfg, s, a.broker)


def e_fence(cfg, s, a):
    fence_broker(cfg, s, a.broker)


def e_heartbeats_lost(cfg, s, a):
    lose_heartbeats(cfg, s, a.broker)


def e_controller_failover(cfg, s, a):
    controller_failover(cfg, s)


def e_disk_wipe(cfg, s, a):
    disk_wipe(cfg, s, a.broker)


def e_controlled_shutdown(cfg, s, a):
    if cfg.kip_500:
        begin_controlled_shutdown(cfg, s, a.broker)
    else:
        begin_zk_controlled_shutdown(cfg, s, a.broker)


def e_controlled_shutdown_request(cfg, s, a):
    deliver_controlled_shutdown(cfg, s, a.broker)


def e_controlled_shutdown_response(cfg, s, a):
    receive_controlled_shutdown_response(cfg, s, a.broker)


def e_preferred_replica_election(cfg, s, a):
    request_preferred_replica_election(cfg, s, a.partition)


def e_preferred_election_process(cfg, s, a):
    process_preferred_replica_election(cfg, s, a.controller)


def e_auto_leader_rebalance(cfg, s, a):
    if cfg.kip_500:
        balance_partition_leaders(cfg, s)
    else:
        process_auto_leader_rebalance(cfg, s, a.controller)


def e_elect_leaders(cfg, s, a):
    if cfg.kip_500:
        error = kraft_elect_leaders(cfg, s, a)
    else:
        error = elect_leaders(cfg, s, a.broker, a.partition)
    note_error(s, error)
    note_response(s, "elect_leaders", a.broker, a.partition, error)


def kraft_elect_leaders(cfg, s, a) -> str:
    """KafkaApis.handleElectLeaders forwarding to ControllerApis.handleElectLeaders (Kafka 3.7.0): any live broker
    forwards the request to the quorum controller, whose answer it returns (ReplicationControlManager.electLeaders)."""
    s.ghost_mut().preferred_elections += 1
    return elect_leader(cfg, s, a.partition, a.election_type)


def e_delete_topic(cfg, s, a):
    if cfg.kip_500:
        kraft_delete_topic(cfg, s)       # ControllerApis.handleDeleteTopics: forwarded, one RemoveTopicRecord
    else:
        delete_topic(cfg, s)


def e_create_topic(cfg, s, a):
    if cfg.kip_500:                      # CreateTopics forwarded: partition 0's record, or the controller's refusal
        replicas = None if cfg.placed_creations else topic_assignment(cfg)[0]
        note_error(s, create_partition(cfg, s, 0, replicas, cfg.replication_factor))
    else:
        create_topic(cfg, s)


def e_create_partitions(cfg, s, a):
    if cfg.kip_500:                      # CreatePartitions forwarded: the next partition's record, or a refusal
        p = s.zk.assignment.index(())
        # createPartitions' replication factor: the topic's first partition's replica count
        rf = next((len(part.replicas) for part in s.quorum.partitions if not part.removed), 0)
        replicas = None if cfg.placed_creations else topic_assignment(cfg)[p]
        note_error(s, create_partition(cfg, s, p, replicas, rf))
    else:
        create_partitions(cfg, s)


def e_alter_topic_config(cfg, s, a):
    alter_topic_config(cfg, s, a.value)  # IncrementalAlterConfigs forwarded to the quorum controller


def e_topic_deletion(cfg, s, a):
    process_topic_deletion(cfg, s, a.controller)


def e_topic_change(cfg, s, a):
    process_topic_change(cfg, s, a.controller)


def e_stop_replica_response(cfg, s, a):
    process_stop_replica_response(cfg, s, a.controller)


def e_reassign_partitions(cfg, s, a):
    if cfg.kip_500:
        alter_partition_reassignment(cfg, s, a.partition, parse_replicas(a.replicas) if a.replicas else None)
    else:
        admin_reassign_partitions(cfg, s, a.partition, parse_replicas(a.replicas))


def e_reassignment_event(cfg, s, a):
    handle_zk_partition_reassignment(cfg, s, a.controller)


def e_reassignment_isr_change(cfg, s, a):
    handle_partition_reassignment_isr_change(cfg, s, a.controller, a.partition)


def e_consumer_fetch_wait(cfg, s, a):
    fetch_messages_with_wait(cfg, s, s.broker_mut(a.broker), a.partition, a.fetch_offset, a.min_bytes, a.max_wait_ms,
                             a.current_leader_epoch, a.client_metadata, a.rack, a.isolation)


def e_alter_partition_received(cfg, s, a):
    forged_alter_partition(cfg, s, a)


def e_expired_heartbeat(cfg, s, a):
    expired_heartbeat(cfg, s, a.broker)


def e_orphan_received(cfg, s, a):
    o = orphan_of(s, a)
    br = s.broker_mut(a.broker)
    i = br.orphans.index(o)
    br.orphans = br.orphans[:i] + br.orphans[i + 1:]
    if type(o) is OrphanHeartbeat:
        deliver_orphan_heartbeat(cfg, s, a.broker, o)
    else:
        deliver_orphan_fetch(cfg, s, a.broker, o)


def e_delayed_fetch_expire(cfg, s, a):
    expire_delayed_fetch(cfg, s, s.broker_mut(a.broker), a.request)


def e_log_dir_failure(cfg, s, a):
    log_dir_failure(cfg, s, a.broker, a.directory)


def e_assign_replicas_to_dirs(cfg, s, a):
    error = send_assignment(cfg, s, a.broker, a.partition, a.directory)
    note_error(s, error)


def c_log_dir_failure(cfg, s):
    return (A.LogDirFailure(b, i) for b in _brokers(s) for i in range(cfg.log_dirs))


def c_assign_replicas_to_dirs(cfg, s):
    """The assignments each live broker's AssignmentsManager has queued, by broker then partition."""
    return (A.AssignReplicasToDirs(br.broker_id, p, d) for br in s.brokers if br.alive for p, d in br.dir_assignments)


# =========================================================================== enumeration
def orphan_actions(s: ClusterState) -> list:
    """One OrphanRequestReceived per (broker, api, partition) with a request on its way, by broker then send order."""
    g = []
    for br in s.brokers:
        for o in br.orphans:
            if type(o) is OrphanHeartbeat:
                a = A.OrphanRequestReceived(br.broker_id, "BROKER_HEARTBEAT", -1)
            elif s.brokers[o.leader].alive:
                a = A.OrphanRequestReceived(br.broker_id, "FETCH", o.partition)
            else:
                continue
            if a not in g:
                g.append(a)
    return g


def e_delete_records(cfg, s, a):
    delete_records(cfg, s, s.broker_mut(a.broker), a.partition, a.offset)


def e_delete_old_segments(cfg, s, a):
    run_log_retention(cfg, s, s.broker_mut(a.broker), a.partition)


def c_delete_records(cfg, s):
    return (A.DeleteRecords(b, p) for b, p in _bps(s))


def _brokers(s):
    return range(len(s.brokers))


def _bps(s):
    np_ = len(s.zk.assignment)
    return ((b, p) for b in range(len(s.brokers)) for p in range(np_))


def c_elect_leaders(cfg, s):
    """Every broker and partition; in KRaft each with both election types."""
    types = A.ELECTION_TYPES if cfg.kip_500 else ("PREFERRED",)
    return (A.ElectLeaders(b, p, t) for b, p in _bps(s) for t in types)


def c_elect_controller(cfg, s):
    return (A.ElectController(b) for b in _brokers(s))


def _controllers(cls):
    def candidates(cfg, s):
        return (cls(c.broker_id) for c in s.controllers)
    return candidates


def c_auto_leader_rebalance(cfg, s):
    """The ZooKeeper-era controllers' task, or KRaft's quorum controller's (-1: no broker)."""
    return (A.AutoLeaderRebalance(-1),) if s.quorum is not None else (A.AutoLeaderRebalance(c.broker_id)
                                                                      for c in s.controllers)


def c_deliver(cfg, s):
    return (A.DeliverControlRequest(c.broker_id, b) for c in s.controllers for b in _brokers(s))


def c_produce(cfg, s):
    return (A.Produce(b, p, acks) for b, p in _bps(s) for acks in sorted(cfg.produce_acks))


def c_consumer_fetch(cfg, s):
    return (A.ConsumerFetch(b, p, iso) for b, p in _bps(s) for iso in A.ISOLATIONS)


def client_metadata_fetches(cfg, b: int, p: int) -> tuple:
    """The KIP-392 consumer fetches the engines offer at broker b: without and with a rack (each distinct rack of
    the cluster), without a current leader epoch (a consumer's epoch is the metadata's, which the model's
    consumers do not track)."""
    return tuple(A.ConsumerFetchWithClientMetadata(b, p, -1, r) for r in ("",) + tuple(sorted(set(cfg.racks))))


def c_consumer_fetch_with_client_metadata(cfg, s):
    return (a for b, p in _bps(s) for a in client_metadata_fetches(cfg, b, p))


def _per_bp(cls):
    def candidates(cfg, s):
        return (cls(b, p) for b, p in _bps(s))
    return candidates


def _per_b(cls):
    def candidates(cfg, s):
        return (cls(b) for b in _brokers(s))
    return candidates


def c_alter_isr_failed(cfg, s):
    return (A.AlterIsrFailed(b, e) for b in _brokers(s) for e in A.ALTER_ISR_FAULT_ERRORS)


def c_delayed_expire(cfg, s):
    return (A.DelayedProduceExpire(br.broker_id, dp.request_id)
            for br in s.brokers for dp in sorted(br.delayed_produces, key=lambda d: d.request_id))


def c_tick(cfg, s) -> list:
    """The Tick actions allowed: the longest (up to the next deadline), then the configured sizes ascending."""
    T = _tables(cfg)
    limit, now = tick_limit(cfg, s), s.now
    out = []
    first = None
    if limit is not None and limit > now:
        first = limit - now
        out.append(T.tick(first))
    for t in T.tick_sizes:
        if t != first and (limit is None or now + t <= limit):
            out.append(T.tick(t))
    return out


def c_crash(cfg, s):
    return (A.BrokerCrash(b, clean) for b in _brokers(s) for clean in (False, True))


#: the ListOffsets requests the engines offer (with ``cfg.list_offsets``), per broker and partition:
#: LATEST then EARLIEST, each as a consumer (read_uncommitted, read_committed) and with the debugging id
LIST_OFFSETS_VARIANTS = tuple((ts, iso, rid) for ts in (LATEST_TIMESTAMP, EARLIEST_TIMESTAMP)
                              for iso, rid in (("read_uncommitted", -1), ("read_committed", -1),
                                               ("read_uncommitted", -2)))


def c_list_offsets(cfg, s):
    return (A.ListOffsets(b, p, ts, iso, rid) for b, p in _bps(s) for ts, iso, rid in LIST_OFFSETS_VARIANTS)


def consumer_fetch_waits(cfg, b: int, p: int) -> tuple:
    """The waiting consumer fetches the engines offer at broker b (with ``cfg.delayed_fetch``): a caught-up consumer
    (from the HW) asking for one record within ``cfg.fetch_max_wait_ms``, without ClientMetadata, and with it (no
    rack, then each rack of the cluster) when consumers send it (``fetch_from_follower``)."""
    out = [A.ConsumerFetchWait(b, p, -1, 1, cfg.fetch_max_wait_ms)]
    if cfg.fetch_from_follower:
        out += [A.ConsumerFetchWait(b, p, -1, 1, cfg.fetch_max_wait_ms, -1, True, r)
                for r in ("",) + tuple(sorted(set(cfg.racks)))]
    return tuple(out)


def c_consumer_fetch_wait(cfg, s):
    return (a for b, p in _bps(s) for a in consumer_fetch_waits(cfg, b, p))


def c_reassign_partitions(cfg, s):
    cancel = ("",) if cfg.kip_500 else ()                   # KRaft's cancel: a null target
    return (A.ReassignPartitions(p, r) for p in range(len(s.zk.assignment)) for r in reassignment_targets(cfg) + cancel)


def c_reassignment_isr_change(cfg, s):
    return (A.ControllerProcessReassignmentIsrChange(c.broker_id, p) for c in s.controllers
            for p in range(len(s.zk.assignment)))


def c_delayed_fetch_expire(cfg, s):
    return (A.DelayedFetchExpire(br.broker_id, df.request_id)
            for br in s.brokers for df in sorted(br.delayed_fetches, key=lambda d: d.request_id))


#: action type -> (guard, effect, candidates), in the order of actions.ACTION_TYPES.
RULES = {
    A.ElectController: (g_elect_controller, e_elect_controller, c_elect_controller),
    A.ControllerProcessBrokerChange: (g_broker_change, e_broker_change,
                                      _controllers(A.ControllerProcessBrokerChange)),
    A.ControllerProcessIsrChangeNotification: (g_isr_notification, e_isr_notification,
                                               _controllers(A.ControllerProcessIsrChangeNotification)),
    A.ControllerResign: (g_resign, e_resign, _controllers(A.ControllerResign)),
    A.DeliverControlRequest: (g_deliver, e_deliver, c_deliver),
    A.Produce: (g_produce, e_produce, c_produce),
    A.ConsumerFetch: (g_consumer_fetch, e_consumer_fetch, c_consumer_fetch),
    A.FetchRequest: (g_fetch_request, e_fetch_request, _per_bp(A.FetchRequest)),
    A.FetchResponse: (g_fetch_response, e_fetch_response, _per_bp(A.FetchResponse)),
    A.OffsetsForLeaderEpoch: (g_offsets_for_leader_epoch, e_offsets_for_leader_epoch,
                              _per_bp(A.OffsetsForLeaderEpoch)),
    A.AlterIsrRequest: (g_alter_isr_request, e_alter_isr_request, _per_b(A.AlterIsrRequest)),
    A.AlterIsrReceived: (g_alter_isr_received, e_alter_isr_received, _per_b(A.AlterIsrReceived)),
    A.AlterIsrResponse: (g_alter_isr_response, e_alter_isr_response, _per_b(A.AlterIsrResponse)),
    A.IsrExpiration: (g_isr_expiration, e_isr_expiration, _per_b(A.IsrExpiration)),
    A.IsrChangePropagation: (g_isr_propagation, e_isr_propagation, _per_b(A.IsrChangePropagation)),
    A.HighWatermarkCheckpoint: (g_hw_checkpoint, e_hw_checkpoint, _per_b(A.HighWatermarkCheckpoint)),
    A.DelayedProduceExpire: (g_delayed_expire, e_delayed_expire, c_delayed_expire),
    A.FlushLog: (g_flush, e_flush, _per_bp(A.FlushLog)),
    A.Tick: (g_tick, e_tick, c_tick),
    A.BrokerCrash: (g_crash, e_crash, c_crash),
    A.BrokerRestart: (g_restart, e_restart, _per_b(A.BrokerRestart)),
    A.ZkSessionExpire: (g_session_expire, e_session_expire, _per_b(A.ZkSessionExpire)),
    A.ZkReconnect: (g_reconnect, e_reconnect, _per_b(A.ZkReconnect)),
    A.ZkDeleteController: (g_delete_controller, e_delete_controller, _controllers(A.ZkDeleteController)),
    A.ListOffsets: (g_list_offsets, e_list_offsets, c_list_offsets),
    A.ConsumerFetchWithClientMetadata: (g_client_metadata_fetch, e_consumer_fetch_with_client_metadata,
                                        c_consumer_fetch_with_client_metadata),
    A.OffsetsForLeaderEpochRequest: (g_epoch_request, e_epoch_request, _per_bp(A.OffsetsForLeaderEpochRequest)),
    A.OffsetsForLeaderEpochResponse: (g_epoch_response, e_epoch_response, _per_bp(A.OffsetsForLeaderEpochResponse)),
    A.MetadataApply: (g_metadata_apply, e_metadata_apply, _per_b(A.MetadataApply)),
    A.BrokerHeartbeat: (g_heartbeat, e_heartbeat, _per_b(A.BrokerHeartbeat)),
    A.FenceStaleBroker: (g_fence, e_fence, _per_b(A.FenceStaleBroker)),
    A.HeartbeatsLost: (g_heartbeats_lost, e_heartbeats_lost, _per_b(A.HeartbeatsLost)),
    A.ControlledShutdown: (g_controlled_shutdown, e_controlled_shutdown, _per_b(A.ControlledShutdown)),
    A.DiskWipe: (g_disk_wipe, e_disk_wipe, _per_b(A.DiskWipe)),
    A.ControllerFailover: (g_controller_failover, e_controller_failover, lambda cfg, s: (A.ControllerFailover(),)),
    A.ControlledShutdownRequest: (g_controlled_shutdown_request, e_controlled_shutdown_request,
                                  _per_b(A.ControlledShutdownRequest)),
    A.ControlledShutdownResponse: (g_controlled_shutdown_response, e_controlled_shutdown_response,
                                   _per_b(A.ControlledShutdownResponse)),
    A.PreferredReplicaElection: (g_preferred_replica_election, e_preferred_replica_election,
                                 lambda cfg, s: (A.PreferredReplicaElection(p) for p in range(len(s.zk.assignment)))),
    A.ControllerProcessPreferredReplicaElection: (g_preferred_election_process, e_preferred_election_process,
                                                  _controllers(A.ControllerProcessPreferredReplicaElection)),
    A.AutoLeaderRebalance: (g_auto_leader_rebalance, e_auto_leader_rebalance, c_auto_leader_rebalance),
    A.ElectLeaders: (g_elect_leaders, e_elect_leaders, c_elect_leaders),
    A.DeleteRecords: (g_delete_records, e_delete_records, c_delete_records),
    A.DeleteOldSegments: (g_delete_old_segments, e_delete_old_segments, _per_bp(A.DeleteOldSegments)),
    A.DeleteTopic: (g_delete_topic, e_delete_topic, lambda cfg, s: (A.DeleteTopic(),)),
    A.CreateTopic: (g_create_topic, e_create_topic, lambda cfg, s: (A.CreateTopic(),)),
    A.CreatePartitions: (g_create_partitions, e_create_partitions, lambda cfg, s: (A.CreatePartitions(),)),
    A.ControllerProcessTopicDeletion: (g_topic_deletion, e_topic_deletion,
                                       _controllers(A.ControllerProcessTopicDeletion)),
    A.ControllerProcessTopicChange: (g_topic_change, e_topic_change, _controllers(A.ControllerProcessTopicChange)),
    A.ControllerProcessStopReplicaResponse: (g_stop_replica_response, e_stop_replica_response,
                                             _controllers(A.ControllerProcessStopReplicaResponse)),
    A.ConsumerFetchWait: (g_consumer_fetch_wait, e_consumer_fetch_wait, c_consumer_fetch_wait),
    A.DelayedFetchExpire: (g_delayed_fetch_expire, e_delayed_fetch_expire, c_delayed_fetch_expire),
    A.ReassignPartitions: (g_reassign_partitions, e_reassign_partitions, c_reassign_partitions),
    A.ControllerProcessPartitionReassignment: (g_reassignment_event, e_reassignment_event,
                                               _controllers(A.ControllerProcessPartitionReassignment)),
    A.ControllerProcessReassignmentIsrChange: (g_reassignment_isr_change, e_reassignment_isr_change,
                                               c_reassignment_isr_change),
    A.PrepareIsrExpand: (g_prepare_isr_expand, e_prepare_isr_expand, _per_bp(A.PrepareIsrExpand)),
    A.AlterIsrFailed: (g_alter_isr_failed, e_alter_isr_failed, c_alter_isr_failed),
    A.OrphanRequestReceived: (g_orphan_received, e_orphan_received, lambda cfg, s: orphan_actions(s)),
    A.AlterPartitionReceived: (g_alter_partition_received, e_alter_partition_received, forged_alter_partitions),
    A.ExpiredBrokerHeartbeat: (g_expired_heartbeat, e_expired_heartbeat, _per_b(A.ExpiredBrokerHeartbeat)),
    A.AlterTopicConfig: (g_alter_topic_config, e_alter_topic_config, lambda cfg, s: _ALTER_TOPIC_CONFIG),
    A.LogDirFailure: (g_log_dir_failure, e_log_dir_failure, c_log_dir_failure),
    A.AssignReplicasToDirs: (g_assign_replicas_to_dirs, e_assign_replicas_to_dirs, c_assign_replicas_to_dirs),
}
assert tuple(RULES) == A.ACTION_TYPES


def is_enabled(cfg: ModelConfig, s: ClusterState, a) -> bool:
    rule = RULES.get(type(a))
    return rule is not None and _in_era(cfg, type(a)) and rule[0](cfg, s, a)


def enabled_actions_reference(cfg: ModelConfig, s: ClusterState, kinds=None) -> tuple:
    """The definition of ``enabled_actions``: every candidate whose guard holds (slow; used by tests)."""
    out = []
    for cls, (guard, _effect, candidates) in RULES.items():
        if kinds is not None and cls not in kinds:
            continue
        if (cls in _KIND_GATES and not _KIND_GATES[cls](cfg)) or not _in_era(cfg, cls):
            continue  # a kind this configuration never offers (flushes without effect, observations not asked for)
        for a in candidates(cfg, s):
            if guard(cfg, s, a):
                out.append(a)
    return tuple(out)


class _Tables:
    """Pre-built action values for one cluster shape (actions are immutable, so they can be shared)."""

    def __init__(self, cfg: ModelConfig):
        nb, np_ = cfg.n_brokers, cfg.n_partitions
        acks = sorted(cfg.produce_acks)
        self.elect = tuple(A.ElectController(b) for b in range(nb))
        self.broker_change = tuple(A.ControllerProcessBrokerChange(b) for b in range(nb))
        self.isr_notification = tuple(A.ControllerProcessIsrChangeNotification(b) for b in range(nb))
        self.resign = tuple(A.ControllerResign(b) for b in range(nb))
        self.deliver = tuple(tuple(A.DeliverControlRequest(c, b) for b in range(nb)) for c in range(nb))
        self.produce = tuple(tuple(A.Produce(b, p, k) for p in range(np_) for k in acks) for b in range(nb))
        self.consumer = tuple(tuple(A.ConsumerFetch(b, p, i) for p in range(np_) for i in A.ISOLATIONS)
                              for b in range(nb))
        self.fetch_request = tuple(tuple(A.FetchRequest(b, p) for p in range(np_)) for b in range(nb))
        self.fetch_response = tuple(tuple(A.FetchResponse(b, p) for p in range(np_)) for b in range(nb))
        self.offsets = tuple(tuple(A.OffsetsForLeaderEpoch(b, p) for p in range(np_)) for b in range(nb))
        self.alter_isr_request = tuple(A.AlterIsrRequest(b) for b in range(nb))
        self.alter_isr_received = tuple(A.AlterIsrReceived(b) for b in range(nb))
        self.alter_isr_response = tuple(A.AlterIsrResponse(b) for b in range(nb))
        self.alter_isr_failed = tuple(tuple(A.AlterIsrFailed(b, e) for e in A.ALTER_ISR_FAULT_ERRORS)
                                      for b in range(nb))
        self.isr_expiration = tuple(A.IsrExpiration(b) for b in range(nb))
        self.isr_propagation = tuple(A.IsrChangePropagation(b) for b in range(nb))
        self.checkpoint = tuple(A.HighWatermarkCheckpoint(b) for b in range(nb))
        self.flush = tuple(tuple(A.FlushLog(b, p) for p in range(np_)) for b in range(nb))
        self.crash = tuple((A.BrokerCrash(b, False), A.BrokerCrash(b, True)) for b in range(nb))
        self.restart = tuple(A.BrokerRestart(b) for b in range(nb))
        self.expire = tuple(A.ZkSessionExpire(b) for b in range(nb))
        self.reconnect = tuple(A.ZkReconnect(b) for b in range(nb))
        self.delete_controller = tuple(A.ZkDeleteController(b) for b in range(nb))
        self.epoch_request = tuple(tuple(A.OffsetsForLeaderEpochRequest(b, p) for p in range(np_)) for b in range(nb))
        self.epoch_response = tuple(tuple(A.OffsetsForLeaderEpochResponse(b, p) for p in range(np_))
                                    for b in range(nb))
        self.client_metadata_fetch = tuple(tuple(a for p in range(np_) for a in client_metadata_fetches(cfg, b, p))
                                           for b in range(nb))
        self.list_offsets = tuple(tuple(A.ListOffsets(b, p, ts, iso, rid) for p in range(np_)
                                        for ts, iso, rid in LIST_OFFSETS_VARIANTS) for b in range(nb))
        self.metadata_apply = tuple(A.MetadataApply(b) for b in range(nb))
        self.heartbeat = tuple(A.BrokerHeartbeat(b) for b in range(nb))
        self.expired_heartbeat = tuple(A.ExpiredBrokerHeartbeat(b) for b in range(nb))
        self.fence = tuple(A.FenceStaleBroker(b) for b in range(nb))
        self.heartbeats_lost = tuple(A.HeartbeatsLost(b) for b in range(nb))
        self.controlled_shutdown = tuple(A.ControlledShutdown(b) for b in range(nb))
        self.disk_wipe = tuple(A.DiskWipe(b) for b in range(nb))
        self.failover = (A.ControllerFailover(),)
        self.delete_records = tuple(tuple(A.DeleteRecords(b, p) for p in range(np_)) for b in range(nb))
        self.delete_old_segments = tuple(tuple(A.DeleteOldSegments(b, p) for p in range(np_)) for b in range(nb))
        self.topic_deletion = tuple(A.ControllerProcessTopicDeletion(b) for b in range(nb))
        self.topic_change = tuple(A.ControllerProcessTopicChange(b) for b in range(nb))
        self.stop_replica_response = tuple(A.ControllerProcessStopReplicaResponse(b) for b in range(nb))
        self.reassign = tuple(A.ReassignPartitions(p, r) for p in range(np_) for r in reassignment_targets(cfg))
        self.reassign_cancel = tuple(A.ReassignPartitions(p, "") for p in range(np_))
        self.reassignment_event = tuple(A.ControllerProcessPartitionReassignment(b) for b in range(nb))
        self.reassignment_isr_change = tuple(tuple(A.ControllerProcessReassignmentIsrChange(b, p) for p in range(np_))
                                             for b in range(nb))
        self.consumer_fetch_wait = tuple(tuple(a for p in range(np_) for a in consumer_fetch_waits(cfg, b, p))
                                         for b in range(nb))
        self.prepare_isr_expand = tuple(tuple(A.PrepareIsrExpand(b, p) for p in range(np_)) for b in range(nb))
        self.tick_sizes = tuple(sorted(set(cfg.tick_ms)))
        self.ticks: dict = {}

    def tick(self, ms: int):
        """The Tick(ms) value, made once (a tick to the next deadline takes many sizes: the cache is bounded)."""
        a = self.ticks.get(ms)
        if a is None:
            if len(self.ticks) >= 4096:
                self.ticks.clear()
            a = self.ticks[ms] = A.Tick(ms)
        return a


#: id(cfg) -> (cfg, its tables), found by the config's identity (``node.memo_by_identity``).
_TABLES: dict = {}


def _tables(cfg: ModelConfig) -> _Tables:
    return memo_by_identity(_TABLES, cfg, _Tables)


def enabled_actions(cfg: ModelConfig, s: ClusterState, kinds=None) -> tuple:
    """Every enabled action, in the documented order; ``kinds`` restricts to some action types (swarm testing).

    Equal to ``enabled_actions_reference`` (tested): the concatenation of ``enabled_groups``.
    """
    return tuple(chain.from_iterable(enabled_groups(cfg, s, kinds)))


def enabled_groups(cfg: ModelConfig, s: ClusterState, kinds=None) -> list:
    """The enabled actions grouped by kind: one non-empty list per action type, in ``enabled_actions`` order.

    Written out per action type for speed: this is the inner loop of every engine, and the engines
    choose a kind first, then one of its actions, so they take the groups as they are built.
    """
    T = _tables(cfg)
    groups = []
    group = groups.append
    zk, brokers, ghost, now = s.zk, s.brokers, s.ghost, s.now
    sessions = zk.sessions
    controllers = s.controllers
    every = kinds is None
    kraft = cfg.kip_500
    if not kraft and (every or A.ElectController in kinds) and zk.controller == -1 \
            and zk.controller_epoch < cfg.max_controller_epoch:
        hosts = {c.broker_id for c in controllers}
        g = []
        for br in brokers:
            if br.alive and sessions[br.broker_id] and br.broker_id not in hosts:
                g.append(T.elect[br.broker_id])
        if g:
            group(g)
    if controllers:
        if every or A.ControllerProcessBrokerChange in kinds:
            g = []
            for c in controllers:
                if sessions[c.broker_id] and live_set_changed(cfg, c, zk.registrations):
                    g.append(T.broker_change[c.broker_id])
            if g:
                group(g)
        if (every or A.ControllerProcessIsrChangeNotification in kinds) and zk.isr_change_notifications:
            g = []
            for c in controllers:
                if sessions[c.broker_id]:
                    g.append(T.isr_notification[c.broker_id])
            if g:
                group(g)
        if every or A.ControllerResign in kinds:
            g = []
            for c in controllers:
                if zk.controller != c.broker_id or zk.controller_epoch != c.epoch:
                    g.append(T.resign[c.broker_id])
            if g:
                group(g)
        if every or A.DeliverControlRequest in kinds:
            g = []
            for c in controllers:
                row = T.deliver[c.broker_id]
                for b, q in enumerate(c.queues):
                    if q and brokers[b].alive:
                        g.append(row[b])
            if g:
                group(g)
    if (every or A.Produce in kinds) and ghost.produced < cfg.max_records:
        g = []
        for br in brokers:
            if br.alive:
                g.extend(T.produce[br.broker_id])
        if g:
            group(g)
    if every or A.ConsumerFetch in kinds:
        g = []
        for br in brokers:
            if br.alive:
                g.extend(T.consumer[br.broker_id])
        if g:
            group(g)
    if every or A.FetchRequest in kinds:
        g = []
        for br in brokers:
            if br.alive:
                row = T.fetch_request[br.broker_id]
                for p, f in enumerate(br.fetchers):
                    if f is not None and f.state == FETCHING and f.inflight is None and brokers[f.leader].alive:
                        g.append(row[p])
        if g:
            group(g)
    if every or A.FetchResponse in kinds:
        g = []
        for br in brokers:
            if br.alive:
                row = T.fetch_response[br.broker_id]
                for p, f in enumerate(br.fetchers):
                    if f is not None and f.inflight is not None:
                        g.append(row[p])
        if g:
            group(g)
    if (every or A.OffsetsForLeaderEpoch in kinds) and cfg.truncation != "hw" \
            and not cfg.offsets_for_leader_epoch_in_flight:
        g = []
        for br in brokers:
            if br.alive:
                row = T.offsets[br.broker_id]
                for p, f in enumerate(br.fetchers):
                    if f is not None and f.state == TRUNCATING and brokers[f.leader].alive:
                        g.append(row[p])
        if g:
            group(g)
    if cfg.kip_497:
        if every or A.AlterIsrRequest in kinds:
            g = []
            for br in brokers:
                if br.alive and br.alter_isr_unsent and br.alter_isr_inflight is None:
                    t = br.metadata.controller_id
                    if kraft or (t >= 0 and brokers[t].alive and s.controller_on(t) is not None):
                        g.append(T.alter_isr_request[br.broker_id])
            if g:
                group(g)
        if every or A.AlterIsrReceived in kinds:
            g = []
            for br in brokers:
                if br.alter_isr_inflight is not None and br.alter_isr_inflight.response is None:
                    g.append(T.alter_isr_received[br.broker_id])
            if g:
                group(g)
        if every or A.AlterIsrResponse in kinds:
            g = []
            for br in brokers:
                if br.alter_isr_inflight is not None and br.alter_isr_inflight.response is not None:
                    g.append(T.alter_isr_response[br.broker_id])
            if g:
                group(g)
    if every or A.IsrExpiration in kinds:
        g = []
        for br in brokers:
            if br.alive and now >= br.next_isr_expiration_ms:
                g.append(T.isr_expiration[br.broker_id])
        if g:
            group(g)
    if every or A.IsrChangePropagation in kinds:
        g = []
        for br in brokers:
            if br.alive and 0 <= br.next_isr_propagation_ms <= now:
                g.append(T.isr_propagation[br.broker_id])
        if g:
            group(g)
    if every or A.HighWatermarkCheckpoint in kinds:
        g = []
        for br in brokers:
            if br.alive and br.hw_checkpoint_started and now >= br.next_hw_checkpoint_ms:
                g.append(T.checkpoint[br.broker_id])
        if g:
            group(g)
    if every or A.DelayedProduceExpire in kinds:
        _due_parked(brokers, now, "delayed_produces", A.DelayedProduceExpire, group)
    if (every or A.FlushLog in kinds) and cfg.crash_loses_unflushed_data and ghost.flushes < cfg.max_flushes:
        g = []
        for br in brokers:
            if br.alive:
                row = T.flush[br.broker_id]
                for p, log in enumerate(br.logs):
                    if log is not None and log.recovery_point < log.log_end_offset:
                        g.append(row[p])
        if g:
            group(g)
    if every or A.Tick in kinds:
        g = c_tick(cfg, s)
        if g:
            group(g)
    if (every or A.BrokerCrash in kinds) and ghost.crashes < cfg.max_crashes:
        g = []
        for br in brokers:
            if br.alive:
                g.extend(T.crash[br.broker_id])
        if g:
            group(g)
    if every or A.BrokerRestart in kinds:
        g = []
        for br in brokers:
            if not br.alive:
                if kraft:
                    reg = s.quorum.registrations[br.broker_id]
                    if reg is None or reg.fenced:
                        g.append(T.restart[br.broker_id])
                elif not sessions[br.broker_id]:
                    g.append(T.restart[br.broker_id])
        if g:
            group(g)
    if not kraft and (every or A.ZkSessionExpire in kinds):
        budget = ghost.session_expirations < cfg.max_session_expirations
        g = []
        for br in brokers:
            if sessions[br.broker_id] and (budget or not br.alive):
                g.append(T.expire[br.broker_id])
        if g:
            group(g)
    if not kraft and (every or A.ZkReconnect in kinds):
        g = []
        for br in brokers:
            if br.alive and not sessions[br.broker_id]:
                g.append(T.reconnect[br.broker_id])
        if g:
            group(g)
    if (every or A.ZkDeleteController in kinds) and zk.controller >= 0 and ghost.controller_moves < cfg.max_controller_moves \
            and zk.controller_epoch < cfg.max_controller_epoch:
        for c in controllers:
            if c.broker_id == zk.controller:
                group([T.delete_controller[c.broker_id]])
                break
    if cfg.list_offsets and (every or A.ListOffsets in kinds):
        _live_rows(brokers, T.list_offsets, group)
    if cfg.fetch_from_follower and (every or A.ConsumerFetchWithClientMetadata in kinds):
        _live_rows(brokers, T.client_metadata_fetch, group)
    if cfg.offsets_for_leader_epoch_in_flight and cfg.truncation != "hw":
        if every or A.OffsetsForLeaderEpochRequest in kinds:
            g = []
            for br in brokers:
                if br.alive:
                    row = T.epoch_request[br.broker_id]
                    for p, f in enumerate(br.fetchers):
                        if f is not None and f.state == TRUNCATING and not f.epoch_request and brokers[f.leader].alive:
                            g.append(row[p])
            if g:
                group(g)
        if every or A.OffsetsForLeaderEpochResponse in kinds:
            g = []
            for br in brokers:
                if br.alive:
                    row = T.epoch_response[br.broker_id]
                    g.extend(row[p] for p, f in enumerate(br.fetchers) if f is not None and f.epoch_request)
            if g:
                group(g)
    if kraft:
        _kraft_groups(cfg, s, kinds, T, group)
    elif cfg.controlled_shutdown_enable or cfg.max_preferred_elections or cfg.auto_leader_rebalance_enable:
        _leadership_groups(cfg, s, kinds, T, group)
    if cfg.max_delete_records or cfg.max_retention_runs:
        _log_start_groups(cfg, s, kinds, T, group)
    if not kraft and (cfg.max_topic_deletions or cfg.max_partition_creations):
        _topic_groups(cfg, s, kinds, T, group)
    elif kraft and (cfg.max_topic_deletions or cfg.max_partition_creations):
        _kraft_topic_groups(cfg, s, kinds, group)
    if cfg.delayed_fetch:
        _delayed_fetch_groups(s, kinds, T, group)
    if cfg.max_reassignments:
        (_kraft_reassignment_groups if kraft else _reassignment_groups)(cfg, s, kinds, T, group)
    if cfg.isr_expand_window and (every or A.PrepareIsrExpand in kinds):
        g = []
        for br in brokers:
            if br.alive:
                row = T.prepare_isr_expand[br.broker_id]
                for p, part in enumerate(br.partitions):
                    if type(part) is Partition and part.expand_checked >= 0 and part.leader == br.broker_id:
                        g.append(row[p])
        if g:
            group(g)
    if cfg.kip_497 and (every or A.AlterIsrFailed in kinds) and s.ghost.alter_isr_failures < cfg.max_alter_isr_failures:
        g = [a for br in brokers if _alter_isr_unhandled(br) for a in T.alter_isr_failed[br.broker_id]]
        if g:
            group(g)
    if kraft and (every or A.OrphanRequestReceived in kinds):
        g = orphan_actions(s)
        if g:
            group(g)
    if kraft and (every or A.AlterPartitionReceived in kinds) \
            and len(s.ghost.forged_answers) < cfg.max_forged_alter_partitions:
        g = forged_alter_partitions(cfg, s)
        if g:
            group(list(g))
    if kraft and (every or A.ExpiredBrokerHeartbeat in kinds) and s.ghost.expired_heartbeats < cfg.max_expired_heartbeats:
        g = [T.expired_heartbeat[br.broker_id] for br in brokers if br.alive and 0 <= br.next_heartbeat_ms <= s.now]
        if g:
            group(g)
    if kraft and cfg.max_config_changes and (every or A.AlterTopicConfig in kinds):
        g = [a for a in _ALTER_TOPIC_CONFIG if g_alter_topic_config(cfg, s, a)]
        if g:
            group(g)
    if kraft and cfg.log_dirs:
        _jbod_groups(cfg, s, kinds, group)
    return groups


def _jbod_groups(cfg, s, kinds, group) -> None:
    """KRaft with log directories: a directory failing (within its budget), and the brokers' queued assignments."""
    every = kinds is None
    if (every or A.LogDirFailure in kinds) and s.ghost.log_dir_failures < cfg.max_log_dir_failures:
        g = [a for a in c_log_dir_failure(cfg, s) if can_fail(cfg, s, a.broker, a.directory)]
        if g:
            group(g)
    if (every or A.AssignReplicasToDirs in kinds) and directory_assignment(cfg):
        g = list(c_assign_replicas_to_dirs(cfg, s))
        if g:
            group(g)


def _leadership_groups(cfg, s, kinds, T, group) -> None:
    """The ZooKeeper-era kinds that move leaders on purpose, in ``ACTION_TYPES`` order: controlled shutdown (its start
    among the KRaft kinds' ``ControlledShutdown``, then its request and response), preferred-replica elections (the
    admin's request and the controller's handling) and the auto-leader-rebalance-task."""
    every = kinds is None
    brokers, ghost = s.brokers, s.ghost
    if cfg.controlled_shutdown_enable:
        if (every or A.ControlledShutdown in kinds) and ghost.crashes < cfg.max_crashes:
            g = [T.controlled_shutdown[br.broker_id] for br in brokers
                 if br.alive and not br.want_shutdown and br.broker_epoch >= 0]
            if g:
                group(g)
        if every or A.ControlledShutdownRequest in kinds:
            g = [A.ControlledShutdownRequest(br.broker_id) for br in brokers
                 if br.alive and br.controlled_shutdown is not None and br.controlled_shutdown.request_to >= 0]
            if g:
                group(g)
        if every or A.ControlledShutdownResponse in kinds:
            g = [A.ControlledShutdownResponse(br.broker_id) for br in brokers
                 if br.alive and br.controlled_shutdown is not None and br.controlled_shutdown.response]
            if g:
                group(g)
    zk = s.zk
    if (every or A.PreferredReplicaElection in kinds) and not zk.preferred_replica_election \
            and ghost.preferred_elections < cfg.max_preferred_elections:
        group([A.PreferredReplicaElection(p) for p in range(len(zk.assignment))])
    if (every or A.ControllerProcessPreferredReplicaElection in kinds) and zk.preferred_replica_election:
        g = [A.ControllerProcessPreferredReplicaElection(c.broker_id) for c in s.controllers
             if zk.sessions[c.broker_id] and _pending_election_ready(s, c)]
        if g:
            group(g)
    if cfg.auto_leader_rebalance_enable and (every or A.AutoLeaderRebalance in kinds):
        now = s.now
        g = [A.AutoLeaderRebalance(c.broker_id) for c in s.controllers
             if zk.sessions[c.broker_id] and 0 <= c.next_rebalance_ms <= now]
        if g:
            group(g)
    if (every or A.ElectLeaders in kinds) and ghost.preferred_elections < cfg.max_preferred_elections:
        n = len(zk.assignment)
        g = [A.ElectLeaders(br.broker_id, p) for br in brokers if br.alive for p in range(n)]
        if g:
            group(g)


def _reassignment_groups(cfg, s, kinds, T, group) -> None:
    """The reassignment kinds of ``enabled_groups`` (``max_reassignments``): the admin's znode, then the controllers'
    ZkPartitionReassignment and PartitionReassignmentIsrChange events."""
    every = kinds is None
    zk, sessions = s.zk, s.zk.sessions
    if (every or A.ReassignPartitions in kinds) and not zk.reassign_partitions \
            and s.ghost.reassignments < cfg.max_reassignments:
        group(list(T.reassign))
    if not s.controllers:
        return
    if every or A.ControllerProcessPartitionReassignment in kinds:
        g = [T.reassignment_event[c.broker_id] for c in s.controllers if c.reassign_event and sessions[c.broker_id]]
        if g:
            group(g)
    if (every or A.ControllerProcessReassignmentIsrChange in kinds) and zk.reassigning:
        ready = [p for p, r in enumerate(zk.reassigning)
                 if r is not None and is_reassignment_complete(s, p, assignment_of(s, p))]
        g = [T.reassignment_isr_change[c.broker_id][p] for c in s.controllers if sessions[c.broker_id] for p in ready]
        if g:
            group(g)


def _kraft_reassignment_groups(cfg, s, kinds, T, group) -> None:
    """KRaft's ReassignPartitions in ``enabled_groups`` (``max_reassignments``): per partition, the targets within the
    budget, then the cancel of a reassignment in progress, each as the quorum controller accepts it."""
    if kinds is not None and A.ReassignPartitions not in kinds:
        return
    budget = s.ghost.reassignments < cfg.max_reassignments
    targets = T.reassign
    per = len(targets) // max(1, len(T.reassign_cancel))
    g = []
    for p, cancel in enumerate(T.reassign_cancel):
        if budget:
            g.extend(a for a in targets[p * per:(p + 1) * per]
                     if reassignment_refusal(cfg, s.quorum, p, parse_replicas(a.replicas)) is None
                     and not _changes_nothing(s.quorum, p, parse_replicas(a.replicas)))
        if reassignment_refusal(cfg, s.quorum, p, None) is None:
            g.append(cancel)
    if g:
        group(g)


def _log_start_groups(cfg, s, kinds, T, group) -> None:
    """The kinds of ``enabled_groups`` that move a log start offset: DeleteRecords to a live broker, and a retention
    run on a log with a segment over the limit, each within its budget."""
    every = kinds is None
    brokers, ghost = s.brokers, s.ghost
    if (every or A.DeleteRecords in kinds) and ghost.delete_records < cfg.max_delete_records:
        _live_rows(brokers, T.delete_records, group)
    if (every or A.DeleteOldSegments in kinds) and ghost.retention_runs < cfg.max_retention_runs:
        g = []
        for br in brokers:
            if br.alive:
                row = T.delete_old_segments[br.broker_id]
                for p, log in enumerate(br.logs):
                    if log is not None and deletable_segments(log, cfg.retention_records, cfg.kafka_5634) \
                            > log.log_start_offset:
                        g.append(row[p])
        if g:
            group(g)


_DELETE_TOPIC, _CREATE_TOPIC, _CREATE_PARTITIONS = A.DeleteTopic(), A.CreateTopic(), A.CreatePartitions()
_ALTER_TOPIC_CONFIG = (A.AlterTopicConfig(True), A.AlterTopicConfig(False))
#: the quorum controller's leader-balancing run (no broker: controller -1)
_KRAFT_BALANCE = A.AutoLeaderRebalance(-1)


def _topic_groups(cfg, s, kinds, T, group) -> None:
    """The kinds of topics at run time (model/topics.py): admin deletions and creations, and the controller's events."""
    every = kinds is None
    if (every or A.DeleteTopic in kinds) and can_delete_topic(cfg, s):
        group([_DELETE_TOPIC])
    if (every or A.CreateTopic in kinds) and can_create_topic(cfg, s):
        group([_CREATE_TOPIC])
    if (every or A.CreatePartitions in kinds) and can_create_partitions(cfg, s):
        group([_CREATE_PARTITIONS])
    sessions, zk = s.zk.sessions, s.zk
    for kind, row, pending in (
            (A.ControllerProcessTopicDeletion, T.topic_deletion, lambda c: zk.delete_topics and not c.deleting),
            (A.ControllerProcessTopicChange, T.topic_change, lambda c: topic_change_pending(s, c)),
            (A.ControllerProcessStopReplicaResponse, T.stop_replica_response, lambda c: c.stop_replica_responses)):
        if every or kind in kinds:
            g = [row[c.broker_id] for c in s.controllers if sessions[c.broker_id] and pending(c)]
            if g:
                group(g)


def _kraft_topic_groups(cfg, s, kinds, group) -> None:
    """The KRaft kinds of topics at run time: the admin's DeleteTopics, CreateTopics and CreatePartitions, each the
    quorum controller's at once (no controller events)."""
    every = kinds is None
    if (every or A.DeleteTopic in kinds) and can_delete_topic(cfg, s):
        group([_DELETE_TOPIC])
    if (every or A.CreateTopic in kinds) and g_create_topic(cfg, s, _CREATE_TOPIC):
        group([_CREATE_TOPIC])
    if (every or A.CreatePartitions in kinds) and g_create_partitions(cfg, s, _CREATE_PARTITIONS):
        group([_CREATE_PARTITIONS])


def _delayed_fetch_groups(s, kinds, T, group) -> None:
    """The fetch purgatory's kinds of ``enabled_groups`` (``delayed_fetch``): waiting consumer fetches, then the
    expiry of parked ones (by request id)."""
    every = kinds is None
    brokers, now = s.brokers, s.now
    if every or A.ConsumerFetchWait in kinds:
        g = []
        for br in brokers:
            if br.alive:
                if br.delayed_fetches:
                    g.extend(a for a in T.consumer_fetch_wait[br.broker_id] if not fetch_waiting(
                        br, a.partition, a.fetch_offset, a.min_bytes, a.current_leader_epoch,
                        a.client_metadata, a.rack, a.isolation))
                else:
                    g.extend(T.consumer_fetch_wait[br.broker_id])
        if g:
            group(g)
    if every or A.DelayedFetchExpire in kinds:
        _due_parked(brokers, now, "delayed_fetches", A.DelayedFetchExpire, group)


def _due_parked(brokers, now: int, purgatory: str, cls, group) -> None:
    """One group of ``cls(broker, request)`` for every request of a live broker's ``purgatory`` whose deadline has
    come, by broker, then request id."""
    g = []
    for br in brokers:
        parked = getattr(br, purgatory)
        if br.alive and parked:
            for d in sorted(parked, key=lambda d: d.request_id):
                if now >= d.deadline_ms:
                    g.append(cls(br.broker_id, d.request_id))
    if g:
        group(g)


def _kraft_groups(cfg, s, kinds, T, group) -> None:
    """The KRaft kinds of ``enabled_groups``: metadata replay, heartbeats, fencing and lost heartbeats."""
    every = kinds is None
    brokers, q, now = s.brokers, s.quorum, s.now
    if every or A.MetadataApply in kinds:
        end = len(q.log)
        g = [T.metadata_apply[br.broker_id] for br in brokers if br.alive and br.metadata_offset < end]
        if g:
            group(g)
    if every or A.BrokerHeartbeat in kinds:
        g = [T.heartbeat[br.broker_id] for br in brokers if br.alive and 0 <= br.next_heartbeat_ms <= now]
        if g:
            group(g)
    if every or A.FenceStaleBroker in kinds:
        g = [T.fence[b] for b in range(len(brokers)) if is_unfenced(q, b) and session_expired(cfg, q, b, now)]
        if g:
            group(g)
    if (every or A.HeartbeatsLost in kinds) and s.ghost.session_expirations < cfg.max_session_expirations:
        g = [T.heartbeats_lost[br.broker_id] for br in brokers
             if br.alive and is_unfenced(q, br.broker_id) and not session_expired(cfg, q, br.broker_id, now)]
        if g:
            group(g)
    if (every or A.ControlledShutdown in kinds) and s.ghost.crashes < cfg.max_crashes:
        g = [T.controlled_shutdown[br.broker_id] for br in brokers
             if br.alive and not br.want_shutdown and br.broker_epoch >= 0]
        if g:
            group(g)
    if (every or A.DiskWipe in kinds) and s.ghost.disk_wipes < cfg.max_disk_wipes:
        g = [T.disk_wipe[br.broker_id] for br in brokers
             if not br.alive and any(log is not None for log in br.logs)]
        if g:
            group(g)
    if (every or A.ControllerFailover in kinds) and s.ghost.controller_moves < cfg.max_controller_moves:
        group(list(T.failover))
    if cfg.auto_leader_rebalance_enable and (every or A.AutoLeaderRebalance in kinds) \
            and 0 <= q.next_balance_ms <= now:
        group([_KRAFT_BALANCE])
    if (every or A.ElectLeaders in kinds) and s.ghost.preferred_elections < cfg.max_preferred_elections:
        n = len(s.zk.assignment)
        g = [A.ElectLeaders(br.broker_id, p, t) for br in brokers if br.alive for p in range(n)
             for t in A.ELECTION_TYPES]
        if g:
            group(g)


def _live_rows(brokers, rows, group) -> None:
    """One group of the pre-built actions ``rows[b]`` of every live broker b (an observation's requests)."""
    g = []
    for br in brokers:
        if br.alive:
            g.extend(rows[br.broker_id])
    if g:
        group(g)


def step(cfg: ModelConfig, s: ClusterState, a):
    """The successor of ``s`` under ``a``, or None if ``a`` is not enabled; ``s`` is not changed."""
    rule = RULES.get(type(a))
    if rule is None or not _in_era(cfg, type(a)) or not rule[0](cfg, s, a):
        return None
    s2 = _begin(s)
    rule[1](cfg, s2, a)
    if cfg.auto_leader_rebalance_enable and s2.quorum is not None:
        maybe_schedule_balance(cfg, s2)                 # after every write event of the quorum controller
    return s2


def apply(cfg: ModelConfig, s: ClusterState, a) -> ClusterState:
    """``step`` that raises NotEnabled instead of returning None."""
    s2 = step(cfg, s, a)
    if s2 is None:
        raise NotEnabled(f"{A.describe(a)} is not enabled at time {s.now}")
    return s2


#: Kinds some configurations never offer, with the config-level condition under which ``enabled_groups`` offers them.
_KIND_GATES = {
    A.OffsetsForLeaderEpoch: lambda cfg: cfg.truncation != "hw" and not cfg.offsets_for_leader_epoch_in_flight,
    A.OffsetsForLeaderEpochRequest: lambda cfg: cfg.truncation != "hw" and cfg.offsets_for_leader_epoch_in_flight,
    A.OffsetsForLeaderEpochResponse: lambda cfg: cfg.truncation != "hw" and cfg.offsets_for_leader_epoch_in_flight,
    A.AlterIsrRequest: lambda cfg: cfg.kip_497,                         # KIP-497 (2.7)
    A.AlterIsrReceived: lambda cfg: cfg.kip_497,
    A.AlterIsrResponse: lambda cfg: cfg.kip_497,
    A.AlterIsrFailed: lambda cfg: cfg.kip_497 and cfg.max_alter_isr_failures > 0,   # a fault, within its budget
    A.FlushLog: lambda cfg: cfg.crash_loses_unflushed_data,             # no observable effect otherwise
    A.ListOffsets: lambda cfg: cfg.list_offsets,                        # an observation, offered on request
    A.ConsumerFetchWithClientMetadata: lambda cfg: cfg.fetch_from_follower,  # KIP-392 consumers, on request
    A.ControlledShutdown: lambda cfg: cfg.kip_500 or cfg.controlled_shutdown_enable,  # controlled.shutdown.enable
    A.ControlledShutdownRequest: lambda cfg: cfg.controlled_shutdown_enable,
    A.ControlledShutdownResponse: lambda cfg: cfg.controlled_shutdown_enable,
    A.PreferredReplicaElection: lambda cfg: cfg.max_preferred_elections > 0,  # an admin action, within its budget
    A.ControllerProcessPreferredReplicaElection: lambda cfg: cfg.max_preferred_elections > 0,
    A.AutoLeaderRebalance: lambda cfg: cfg.auto_leader_rebalance_enable,     # auto.leader.rebalance.enable
    A.ElectLeaders: lambda cfg: cfg.max_preferred_elections > 0,
    A.DeleteRecords: lambda cfg: cfg.max_delete_records > 0,             # the log start offset moves, on request
    A.DeleteOldSegments: lambda cfg: cfg.max_retention_runs > 0,
    A.DeleteTopic: lambda cfg: cfg.max_topic_deletions > 0,             # topics at run time: within their budgets
    A.ControllerProcessTopicDeletion: lambda cfg: cfg.max_topic_deletions > 0,
    A.ControllerProcessStopReplicaResponse: lambda cfg: cfg.max_topic_deletions > 0,
    A.CreateTopic: lambda cfg: cfg.max_partition_creations > 0,
    A.CreatePartitions: lambda cfg: cfg.max_partition_creations > 0,
    A.ControllerProcessTopicChange: lambda cfg: cfg.max_partition_creations > 0 or cfg.max_topic_deletions > 0,
    A.ConsumerFetchWait: lambda cfg: cfg.delayed_fetch,                 # the fetch purgatory, on request
    A.DelayedFetchExpire: lambda cfg: cfg.delayed_fetch,
    A.ReassignPartitions: lambda cfg: cfg.max_reassignments > 0,       # an admin's reassignments, within a budget
    A.ControllerProcessPartitionReassignment: lambda cfg: cfg.max_reassignments > 0,
    A.ControllerProcessReassignmentIsrChange: lambda cfg: cfg.max_reassignments > 0,
    A.PrepareIsrExpand: lambda cfg: cfg.isr_expand_window,              # KAFKA-15221's window, on request
    A.AlterPartitionReceived: lambda cfg: cfg.max_forged_alter_partitions > 0,   # faults, within their budgets
    A.ExpiredBrokerHeartbeat: lambda cfg: cfg.max_expired_heartbeats > 0,
    A.AlterTopicConfig: lambda cfg: cfg.max_config_changes > 0,         # an admin's config changes, within a budget
    A.LogDirFailure: lambda cfg: cfg.max_log_dir_failures > 0,          # a fault, within its budget (KIP-858)
    A.AssignReplicasToDirs: lambda cfg: directory_assignment(cfg),      # what brokers report with directories
}


#: Kinds of one era only: the ZooKeeper era's controller, sessions and ISR propagation, and KRaft's metadata log and
#: broker lifecycle.  ``step`` refuses a kind of the other era (a trace of one era does not replay in the other).
ZK_ONLY = frozenset({A.ElectController, A.ControllerProcessBrokerChange, A.ControllerProcessIsrChangeNotification,
                     A.ControllerResign, A.DeliverControlRequest, A.IsrChangePropagation, A.ZkSessionExpire,
                     A.ZkReconnect, A.ZkDeleteController,
                     A.ControlledShutdownRequest, A.ControlledShutdownResponse, A.PreferredReplicaElection,
                     A.ControllerProcessPreferredReplicaElection,
                     A.ControllerProcessTopicDeletion, A.ControllerProcessTopicChange,
                     A.ControllerProcessStopReplicaResponse})
#: ``ControlledShutdown`` is of both eras (KRaft's heartbeats, the ZooKeeper era's request to the controller), and so
#: are ``ElectLeaders`` (the ZooKeeper-era controller, or forwarded to the quorum controller), ``AutoLeaderRebalance``
#: (the controller's auto-leader-rebalance-task, or the quorum controller's leader balancing) and ``DeleteTopic``,
#: ``CreateTopic``, ``CreatePartitions`` (ZooKeeper writes, or the quorum controller's records).
KRAFT_ONLY = frozenset({A.MetadataApply, A.BrokerHeartbeat, A.FenceStaleBroker, A.HeartbeatsLost, A.DiskWipe,
                        A.ControllerFailover, A.PrepareIsrExpand, A.OrphanRequestReceived,
                        A.AlterPartitionReceived, A.ExpiredBrokerHeartbeat, A.AlterTopicConfig, A.LogDirFailure,
                        A.AssignReplicasToDirs})
ZK_ONLY = ZK_ONLY | {A.ControllerProcessPartitionReassignment, A.ControllerProcessReassignmentIsrChange}
#: ``ReassignPartitions`` is of both eras too (/admin/reassign_partitions, or AlterPartitionReassignments to the quorum
#: controller).


def _in_era(cfg: ModelConfig, kind) -> bool:
    return kind not in (ZK_ONLY if cfg.kip_500 else KRAFT_ONLY)


def action_kinds(cfg: ModelConfig) -> tuple:
    """The action kinds ``enabled_groups`` can ever offer under ``cfg``, in ``ACTION_TYPES`` order.

    What an engine asks instead of reading protocol flags: the model knows which rules its configuration
    has, the engines only which kinds of action can come.
    """
    return memo_by_identity(_KINDS, cfg, _action_kinds)


_KINDS: dict = {}


def _action_kinds(cfg: ModelConfig) -> tuple:
    return tuple(k for k in A.ACTION_TYPES if (k not in _KIND_GATES or _KIND_GATES[k](cfg)) and _in_era(cfg, k))
