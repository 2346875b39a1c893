"""Faults and the environment: crashes, restarts, ZooKeeper sessions, log flushes.

A crash is either clean (KafkaServer.shutdown without controlled shutdown:
logs flushed, HW checkpointed, ZooKeeper session closed) or unclean (the
process dies; its session lives on until ZooKeeper expires it, and with
``crash_loses_unflushed_data`` the log suffix above the recovery point is
lost).  Session expiry is decoupled from the process: a live broker can lose
its session, keep serving, and register again with a new broker epoch.
"""

from __future__ import annotations

import dataclasses

from .config import ModelConfig
from .log import clamp_high_watermark, truncate_to
from .node import replace_at
from .broker_metadata import register
from .jbod import offline_dir_ids
from .replica_manager import checkpoint_high_watermarks
from .state import FETCHING, Broker, ClusterState, MetadataCache, OrphanFetch, OrphanHeartbeat


def broker_crash(cfg: ModelConfig, s: ClusterState, b: int, clean: bool, heartbeat_in_flight: bool = True) -> None:
    """KafkaServer.shutdown (clean) or a process crash: the in-memory ReplicaManager state is gone.  KRaft: the
    requests it had sent stay on their way (``orphan_requests``); ``heartbeat_in_flight`` False when the stop is the
    answer to its last heartbeat."""
    br = s.broker_mut(b)
    if cfg.kip_500:
        br.orphans += orphan_requests(cfg, s, b, heartbeat_in_flight)
        _drop_orphans_to(s, b)
    n = len(br.partitions)
    g = s.ghost_mut()
    g.crashes += 1
    if clean:
        for p, log in enumerate(br.logs):
            if log is not None and log.recovery_point < log.log_end_offset:
                br.log_mut(p).recovery_point = log.log_end_offset
        next_due = br.next_hw_checkpoint_ms
        checkpoint_high_watermarks(cfg, s, br)   # ReplicaManager.shutdown(checkpointHW = true)
        br.next_hw_checkpoint_ms = next_due
        if not cfg.kip_500:
            _close_session(s, b)
        else:
            br.clean_shutdown_epoch = br.broker_epoch   # KIP-966: the broker epoch goes into the clean-shutdown file
    elif cfg.crash_loses_unflushed_data:
        lost = False
        for p, log in enumerate(br.logs):
            if log is not None and log.recovery_point < log.log_end_offset:
                truncate_to(br.log_mut(p), log.recovery_point)   # Log.recoverLog keeps the flushed prefix
                lost = True
        if lost:
            g.lossy_crashes += 1
    br.alive = False
    br.broker_epoch = -1
    br.controller_epoch = 0
    br.partitions = (None,) * n
    br.fetchers = (None,) * n
    br.delayed_produces = ()          # parked produce requests die with the process: no response
    br.delayed_fetches = ()           # parked fetches too (DelayedFetch)
    br.metadata = MetadataCache()
    br.hw_checkpoint_started = False
    br.next_isr_expiration_ms = br.next_isr_propagation_ms = br.next_hw_checkpoint_ms = -1
    br.isr_change_set = ()
    br.alter_isr_unsent = ()          # AlterIsrManager's items die with the process; a request already sent does not:
    inflight = br.alter_isr_inflight  # it is on its way to the controller, which may still handle it
    br.alter_isr_inflight = (dataclasses.replace(inflight, orphan=True)
                             if inflight is not None and inflight.response is None else None)
    br.metadata_offset = 0            # KRaft: the metadata image and the lifecycle manager die too
    br.next_heartbeat_ms = -1
    br.want_shutdown = False
    br.controlled_shutdown = None     # ZooKeeper era: KafkaServer.controlledShutdown's loop ends with the process
    s.controllers = tuple(c for c in s.controllers if c.broker_id != b)


def orphan_requests(cfg: ModelConfig, s: ClusterState, b: int, heartbeat: bool) -> tuple:
    """The requests b's process may have on their way as it stops (KRaft): a Fetch per partition whose fetcher could
    send one now (fetching, no answer waiting, its leader up: AbstractFetcherThread, Kafka 3.5.0), and its scheduled
    BrokerHeartbeat (BrokerLifecycleManager, one in flight at a time), each as it carries them."""
    br = s.brokers[b]
    out = []
    for p, f in enumerate(br.fetchers):
        if f is not None and f.state == FETCHING and f.inflight is None and s.brokers[f.leader].alive:
            log = br.logs[p]
            out.append(OrphanFetch(p, f.leader, f.fetch_offset, f.leader_epoch if cfg.kip_320 else -1,
                                   log.log_start_offset, log.latest_epoch if cfg.kafka_10554 else -1,
                                   br.broker_epoch if cfg.kip_903 else -1))
    if heartbeat and br.broker_epoch >= 0:
        out.append(OrphanHeartbeat(br.broker_epoch, br.metadata_offset, br.want_shutdown, offline_dir_ids(br)))
    return tuple(out)


def _drop_orphans_to(s: ClusterState, b: int) -> None:
    """A leader's process stops: the Fetches on their way to it die with its connections."""
    for other in s.brokers:
        if other.orphans and any(type(o) is OrphanFetch and o.leader == b for o in other.orphans):
            ob = s.broker_mut(other.broker_id)
            ob.orphans = tuple(o for o in ob.orphans if type(o) is not OrphanFetch or o.leader != b)


def broker_restart(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """KafkaServer.startup: LogManager loads logs (HW from the checkpoint, clamped), a new session registers."""
    br = s.broker_mut(b)
    br.alive = True
    for p, log in enumerate(br.logs):
        if log is not None:
            checkpoint = br.hw_checkpoint[p]
            hw = clamp_high_watermark(log, checkpoint if checkpoint is not None else 0)
            if hw != log.high_watermark:
                br.log_mut(p).high_watermark = hw
    if cfg.kip_500:
        register(cfg, s, br)                      # BrokerLifecycleManager: a new incarnation registers, fenced
    else:
        _open_session(s, br)
    now = s.now
    br.next_isr_expiration_ms = now + cfg.phase_of(b)
    br.next_isr_propagation_ms = -1 if cfg.kip_497 else now   # no isr-change-propagation task with AlterIsr
    br.next_hw_checkpoint_ms = -1
    br.last_isr_change_ms = br.last_isr_propagation_ms = now


def disk_wipe(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """A stopped broker's disk is replaced (KRaft): its logs, HW checkpoint and clean-shutdown file are gone, so it
    restarts empty and registers as after an unclean shutdown; every record it held is lost."""
    br = s.broker_mut(b)
    n = len(br.logs)
    if any(log is not None and log.entries for log in br.logs):
        s.ghost_mut().lossy_crashes += 1
    br.logs = (None,) * n
    br.hw_checkpoint = (None,) * n
    br.clean_shutdown_epoch = -1
    s.ghost_mut().disk_wipes += 1


def zk_session_expire(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """ZooKeeper expires the session: ephemeral /brokers/ids/<b> and /controller (if held) are deleted."""
    if s.brokers[b].alive:
        s.ghost_mut().session_expirations += 1
    _close_session(s, b)


def zk_reconnect(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """KafkaZkClient re-creates the session and KafkaServer re-registers (a new broker epoch).

    KafkaController's beforeInitializingSession handler (Kafka 2.4.0) processes the Expire event, and so
    resigns, before the new session exists: a zombie controller never acts with a fresh session.
    """
    s.controllers = tuple(c for c in s.controllers if c.broker_id != b)
    _open_session(s, s.broker_mut(b))


def zk_delete_controller(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """An operator deletes /controller (KafkaZkClient.deleteController, Kafka 2.4.0): every broker's ControllerChangeHandler
    queues a Reelect, which the old controller, still active until then, handles after the events before it."""
    zk = s.zk_mut()
    zk.controller = -1
    s.ghost_mut().controller_moves += 1


def flush_log(cfg: ModelConfig, s: ClusterState, b: int, p: int) -> None:
    """Log.flush: the recovery point moves to the LEO."""
    br = s.broker_mut(b)
    log = br.log_mut(p)
    log.recovery_point = log.log_end_offset
    s.ghost_mut().flushes += 1


def _close_session(s: ClusterState, b: int) -> None:
    zk = s.zk_mut()
    zk.sessions = replace_at(zk.sessions, b, False)
    zk.registrations = replace_at(zk.registrations, b, -1)
    if zk.controller == b:
        zk.controller = -1


def _open_session(s: ClusterState, br: Broker) -> None:
    zk = s.zk_mut()
    b = br.broker_id
    zk.sessions = replace_at(zk.sessions, b, True)
    zk.registrations = replace_at(zk.registrations, b, zk.next_czxid)
    br.broker_epoch = zk.next_czxid
    zk.next_czxid += 1
    g = s.ghost_mut()
    g.session_since = replace_at(g.session_since, b, s.now)
