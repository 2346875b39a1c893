"""The exhaustive explorer: breadth-first search of every reachable state of a small configuration.

Every state reachable within explicit bounds (the model's budgets, leader epochs, ISR writes, queued control
requests, model time) is visited once, every safety invariant is checked on every state and transition, and a
violation comes with the shortest trace to it.  States are deduplicated by a key under abstractions that keep the
behaviour (relative, truncated time; ticks only to the next due instant; ZooKeeper versions as current or stale),
single-successor chains are stepped through without being stored, and liveness is checked on the kept graph (fair
lassos in its strongly connected components) or by settling a sample.  The design, each abstraction's argument and
the fairness assumption: properties/README.md, "The exhaustive explorer".
"""

from __future__ import annotations

import gc
import itertools
import time
from heapq import heappop, heappush
from dataclasses import dataclass, field

from ..model import actions as A
from ..model import errors as E
from ..model.alter_isr import isr_change_set_used, zk_versions_ordered
from ..model.config import ModelConfig
from ..model.encode import fingerprint
from ..model.directories import dir_owner
from ..model.requests import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest
from ..model.state import (BrokerLogDirsChangeRecord, BrokerRegistrationChangeRecord, ConfigRecord, FenceBrokerRecord,
                           Partition, PartitionChangeRecord, OrphanHeartbeat, RegisterBrokerRecord, RemoveTopicRecord,
                           UnfenceBrokerRecord)
from ..model.step import action_kinds, enabled_actions, initial_state, step
from ..model.actions import CONTINUATIONS, DELIVERIES, Tick, continues
from .budget import CHECK_EVERY
from .invariants import LIVENESS as LIVENESS_CATALOGUE, SAFETY, STATE, STEP, WITNESSES, Violation, changes

__all__ = [
    "ExploreResult", "ExplorerError", "Lasso", "LIVENESS", "explore", "state_key", "horizon_ms",
    "next_event_ms", "explorer_actions", "check_liveness", "coverage", "coverage_fraction", "bounded_config",
    "FAIR_KINDS", "fast_keyer", "search_args",
]


class ExplorerError(ValueError):
    """A configuration the explorer cannot handle (reported in one line, exit 2)."""


# =========================================================================== time
def horizon_ms(cfg: ModelConfig) -> int:
    """Past timestamps older than this many ms are indistinguishable (properties/README.md, "Relative, truncated time")."""
    slack = cfg.isr_propagation_interval_ms + cfg.scheduler_jitter_ms
    return max(cfg.replica_lag_time_max_ms, cfg.isr_change_blackout_ms + slack,
               cfg.isr_change_max_delay_ms + slack) + 1


def next_event_ms(cfg: ModelConfig, s) -> int | None:
    """The earliest future instant at which a scheduled task becomes due (or may run late) or a produce
    times out; None when nothing is scheduled (no live broker)."""
    now, jitter = s.now, cfg.scheduler_jitter_ms
    best = None
    for br in s.brokers:
        if not br.alive:
            continue
        dues = [br.next_isr_expiration_ms, br.next_isr_propagation_ms]
        if br.hw_checkpoint_started:
            dues.append(br.next_hw_checkpoint_ms)
        for d in dues:
            for t in ((d, d + jitter) if jitter else (d,)):
                if t > now and (best is None or t < best):
                    best = t
        for dp in br.delayed_produces:
            if dp.deadline_ms > now and (best is None or dp.deadline_ms < best):
                best = dp.deadline_ms
        for df in br.delayed_fetches:                  # DelayedFetch: fetch.max.wait.ms
            if df.deadline_ms > now and (best is None or df.deadline_ms < best):
                best = df.deadline_ms
        d = br.next_heartbeat_ms                       # KRaft: the scheduled heartbeat
        if d >= 0:
            for t in ((d, d + jitter) if jitter else (d,)):
                if t > now and (best is None or t < best):
                    best = t
    if cfg.auto_leader_rebalance_enable:               # the controller's auto-leader-rebalance-task
        for c in s.controllers:
            d = c.next_rebalance_ms
            if d >= 0 and s.zk.sessions[c.broker_id]:
                for t in ((d, d + jitter) if jitter else (d,)):
                    if t > now and (best is None or t < best):
                        best = t
    q = s.quorum
    if q is not None and q.next_balance_ms >= 0:       # KRaft: the quorum controller's leader balancing
        d = q.next_balance_ms
        for t in ((d, d + jitter) if jitter else (d,)):
            if t > now and (best is None or t < best):
                best = t
    if q is not None:                                  # KRaft: a session expiring, when the controller may fence
        for b, reg in enumerate(q.registrations):
            if reg is not None and not reg.fenced:
                t = q.last_contact_ms[b] + cfg.broker_session_timeout_ms + 1
                if t > now and (best is None or t < best):
                    best = t
    return best


#: the longest chain of single-successor states stepped through without storing one.  A state whose one action is
#: a clock tick is stored (a cycle of the relative clock's keys goes through a tick, and so meets the seen set);
#: the cap only bounds a cycle without one.
CHAIN_CAP = 64
#: stored states between two calls of explore's ``progress``
PROGRESS_EVERY = 2_000

#: the scheduler's actions: with ``eager_tasks`` one of them, when due, is taken before anything else.
TASK_KINDS = (A.IsrExpiration, A.IsrChangePropagation, A.HighWatermarkCheckpoint, A.DelayedProduceExpire,
              A.AutoLeaderRebalance, A.DelayedFetchExpire)


#: the set of task kinds an eager search asks for, per ``without`` set
_EAGER_KINDS: dict = {}


def _task_may_be_due(s) -> bool:
    """False only when no scheduled task (TASK_KINDS) is enabled in ``s``: the due-time half of each task's
    enabling condition in ``enabled_groups``, so that most states skip the search for a due task."""
    now = s.now
    for br in s.brokers:
        if br.alive and (now >= br.next_isr_expiration_ms or 0 <= br.next_isr_propagation_ms <= now
                         or (br.hw_checkpoint_started and now >= br.next_hw_checkpoint_ms)
                         or any(now >= d.deadline_ms for d in br.delayed_produces)
                         or any(now >= d.deadline_ms for d in br.delayed_fetches)):
            return True
    q = s.quorum
    return any(0 <= c.next_rebalance_ms <= now for c in s.controllers) or (q is not None and
                                                                           0 <= q.next_balance_ms <= now)


def explorer_actions(cfg: ModelConfig, s, eager_tasks: bool = False, without=frozenset()) -> tuple:
    """``enabled_actions`` with the clock abstraction: one tick, to the next moment something can fire.

    ``eager_tasks``: a due scheduled task (the first in the documented order) is the only action offered,
    so every task runs at the start of its instant (a reduction; properties/README.md).
    ``without``: action classes left out (as a swarm run does).
    """
    if eager_tasks and _task_may_be_due(s):   # the due tasks alone first (the same first task as in the full list)
        for a in enabled_actions(cfg, s, _EAGER_KINDS[without] if without in _EAGER_KINDS else
                                 _EAGER_KINDS.setdefault(without, frozenset(TASK_KINDS) - without)):
            return (a,)
    acts = enabled_actions(cfg, s)
    if A.ListOffsets in action_kinds(cfg):   # an observation: a self-loop under the key ("Observations left out")
        acts = tuple(a for a in acts if type(a) is not A.ListOffsets)
    if without:
        acts = tuple(a for a in acts if type(a) not in without)
    nticks = 0
    for a in acts:
        if type(a) is A.Tick:
            nticks += 1
    if not nticks:
        return acts
    nxt = next_event_ms(cfg, s)
    want = horizon_ms(cfg) if nxt is None else nxt - s.now
    out = [a for a in acts if type(a) is not A.Tick]
    if nxt is None or any(type(a) is A.Tick and a.ms == want for a in acts):
        out.append(A.Tick(want))
    return tuple(out)


# =========================================================================== state key
_FETCH_STATES = {"truncating": 0, "fetching": 1, "failed": 2}


def horizons(cfg: ModelConfig) -> tuple:
    """(lag, change, propagation): how far back each kind of past timestamp can still make a difference."""
    slack = cfg.isr_propagation_interval_ms + cfg.scheduler_jitter_ms
    return (cfg.replica_lag_time_max_ms + 1, cfg.isr_change_blackout_ms + slack + 1,
            cfg.isr_change_max_delay_ms + slack + 1)


#: key markers: a past timestamp too young to reach any threshold it is compared with before the time bound's
#: deadline (all such are alike), the same for a session start, and a due time or deadline after it (never reached)
YOUNG, YOUNG_SINCE, LATE = 1, 2, -2


def young_limits(cfg: ModelConfig, now: int, deadline: int | None) -> tuple:
    """(y_lag, y_change, y_prop, y_since, left): with a time bound, a timestamp t with t - now >= y_kind is "young".

    Every past timestamp is only compared as ``now' - t > C`` (or ``<=``) at instants ``now' <= deadline``, for C
    among its kind's constants, or combined with another of its kind by ``max`` (a later time: a young one wins and
    stays young).  If ``now - t + left <= C_min`` no comparison can come out true before the deadline, so all such
    t are alike (a bisimulation, like the "long ago" truncation; ``left = deadline - now``).  The smallest constant
    per kind: replica.lag.time.max.ms for the fetch and caught-up times (Partition.maybeShrinkIsr, the HW's
    lag allowance, the timing invariant); the 5000 ms blackout for the last ISR change; the 60000 ms max delay for
    the last propagation; blackout plus the invariant's slack for a session start (read only through ``max`` with
    those two by isr_propagation_bound).  Without a deadline nothing is young (the limits are above any r <= 0).
    """
    if deadline is None:
        return 1, 1, 1, 1, None
    left = deadline - now
    slack = cfg.isr_propagation_interval_ms + cfg.scheduler_jitter_ms
    return (left - cfg.replica_lag_time_max_ms, left - cfg.isr_change_blackout_ms, left - cfg.isr_change_max_delay_ms,
            left - cfg.isr_change_blackout_ms - slack, left)


def _same(t):
    return t


def _key(cfg: ModelConfig, s, pm: tuple, inv: tuple, horizon: tuple, max_isr_changes=None, identity=False,
         deadline: int | None = None) -> tuple:
    """The abstract key of s with broker ids renamed by pm (old -> new); inv is pm's inverse.

    The definition of the explorer's state abstraction (``fast_keyer`` computes an equivalent key faster).
    ``identity``: pm is the identity (skips the renaming).  ``deadline``: the time bound's last instant
    (``explore(max_time_ms=...)``): the time left is then part of the key, and timestamps too young to
    reach any threshold before it, or due after it, are merged (see ``young_limits``).
    """
    now = s.now
    h_lag, h_change, h_prop = horizon
    y_lag, y_change, y_prop, y_since, left = young_limits(cfg, now, deadline)
    g = s.ghost
    # with the ISR-change budget used up, no broker's isr_change_set can fill again: a broker with an empty
    # one never reads its last change / propagation times (nor the invariant its session start) again; with
    # KIP-497 no isr_change_set ever fills (ISR changes go through AlterIsr)
    isr_frozen = not isr_change_set_used(cfg) or (max_isr_changes is not None
                                                 and g.isr_shrinks + g.isr_expands >= max_isr_changes)
    zk = s.zk
    cur = tuple(None if st is None else st.zk_version for st in s.controller_partition_states())
    n = len(inv)
    rel = zk_versions_ordered(cfg)

    def ver(v, p):
        # a zkVersion: "is it ZooKeeper's current one" suffices while versions are only compared for equality with
        # ZooKeeper's (2.4); AlterIsr compares a response's version with the leader's (<, ==), so with KIP-497 it
        # is kept relative to ZooKeeper's (a translation: every comparison and every new version is preserved)
        c = cur[p]
        if rel:
            return None if c is None else v - c
        return c is not None and v == c

    def past(t, h, y):
        r = t - now
        if r >= y:
            return YOUNG
        return r if r >= -h else -h - 1

    def fut(t):
        if t < 0:
            return -1
        return LATE if left is not None and t - now > left else t - now

    if identity:
        ids = ordered = lid = _same
    else:
        def ids(t):
            return tuple(sorted([pm[x] for x in t]))

        def ordered(t):
            return tuple([pm[x] for x in t])

        def lid(x):
            return pm[x] if x >= 0 else x

    def liace(p, st):
        if st is None:
            return (0,)
        return (1, lid(st.leader), st.leader_epoch, ids(st.isr), st.controller_epoch, ver(st.zk_version, p))

    def request(r):
        t = type(r)
        if t is LeaderAndIsrRequest:
            return (0, lid(r.controller_id), r.controller_epoch, r.broker_epoch,
                    tuple((q.partition, q.controller_epoch, lid(q.leader), q.leader_epoch, ids(q.isr),
                           ver(q.zk_version, q.partition), ordered(q.replicas), q.is_new)
                          for q in r.partition_states))
        if t is UpdateMetadataRequest:
            return (1, lid(r.controller_id), r.controller_epoch, r.broker_epoch,
                    tuple((q.partition, q.controller_epoch, lid(q.leader), q.leader_epoch, ids(q.isr),
                           ver(q.zk_version, q.partition), ordered(q.replicas))
                          for q in r.partition_states), ids(r.live_brokers))
        if t is StopReplicaRequest:
            return (2, lid(r.controller_id), r.controller_epoch, r.broker_epoch, r.delete_partitions, r.partitions)
        raise TypeError(f"unknown request {r!r}")  # pragma: no cover

    def item(it):
        q = it.request
        pend = it.pending
        return (q.partition, q.leader_epoch, ids(q.new_isr), ver(q.zk_version, q.partition), ids(it.isr),
                pend.expand, ids(pend.replicas))

    def alter_isr_key(unsent, inflight):
        if inflight is None:
            flight = None
        else:
            r = inflight.response
            sent = (lid(inflight.controller), tuple([item(it) for it in inflight.items]))
            if r is None:    # on its way to the controller: the broker epoch it carries is checked on arrival
                flight = sent + (inflight.request.broker_epoch,) + ((True,) if inflight.orphan else ())
            else:
                flight = sent + (r.error, tuple([(x.partition, x.error, lid(x.leader), x.leader_epoch, ids(x.isr),
                                                  None if x.error != "NONE" else ver(x.zk_version, x.partition))
                                                 for x in r.partitions]))
        return tuple([item(it) for it in unsent]), flight

    def orphans_key(orphans):
        # an earlier incarnation's requests on their way: what each carries (broker ids and epochs renamed)
        return tuple([(0, o.broker_epoch, o.metadata_offset, o.want_shutdown)
                      + ((tuple([dir_owner(d)[1] for d in o.offline_dirs]),) if o.offline_dirs else ())
                      if type(o) is OrphanHeartbeat else
                      (1, o.partition, lid(o.leader), o.fetch_offset, o.current_leader_epoch, o.log_start_offset,
                       o.last_fetched_epoch, o.broker_epoch) for o in orphans])

    def broker_key(br):
        parts = []
        for p, part in enumerate(br.partitions):
            if part is None:
                parts.append((0,))
            elif type(part) is Partition:
                pend = part.pending_isr
                parts.append((2, ordered(part.assigned_replicas), ids(part.isr), lid(part.leader), part.leader_epoch,
                              part.leader_epoch_start_offset, ver(part.zk_version, p),
                              part.controller_epoch, None if pend is None else (pend.expand, ids(pend.replicas)),
                              lid(part.expand_checked) if part.expand_checked >= 0 else -1,
                              tuple([(lid(r.broker_id), r.log_end_offset, r.log_start_offset,
                                      r.last_fetch_leader_log_end_offset, past(r.last_fetch_time_ms, h_lag, y_lag),
                                      past(r.last_caught_up_time_ms, h_lag, y_lag), r.broker_epoch)
                                     for r in part.remote_replicas])))
            else:
                parts.append((1,))
        logs = tuple([(0,) if log is None else
                      (1, log.log_start_offset, log.entries, log.high_watermark, log.recovery_point, log.epoch_cache)
                      for log in br.logs])
        fetchers = []
        for f in br.fetchers:
            if f is None:
                fetchers.append((0,))
            else:
                r = f.inflight
                fetchers.append((1, lid(f.leader), f.leader_epoch, f.fetch_offset, _FETCH_STATES[f.state],
                                 (0,) if r is None else
                                 (1, r.error, r.fetch_offset, r.entries, r.high_watermark, r.log_start_offset,
                                  r.diverging, r.hw_applied), f.epoch_request))
        md = br.metadata
        quiet = isr_frozen and not br.isr_change_set
        return (
            br.alive, br.broker_epoch, br.controller_epoch, tuple(parts), logs, tuple(fetchers),
            tuple([-1 if h is None else h for h in br.hw_checkpoint]), br.hw_checkpoint_started,
            ids(md.alive_brokers), lid(md.controller_id), alter_isr_key(br.alter_isr_unsent, br.alter_isr_inflight),
            tuple([(0,) if m is None else (1, lid(m.leader), m.leader_epoch, ids(m.isr), ordered(m.replicas))
                   for m in md.partitions]),
            fut(br.next_isr_expiration_ms), fut(br.next_isr_propagation_ms), fut(br.next_hw_checkpoint_ms),
            br.isr_change_set,
            1 if quiet else past(br.last_isr_change_ms, h_change, y_change),
            1 if quiet else past(br.last_isr_propagation_ms, h_prop, y_prop),
            tuple([(dp.request_id, dp.partition, dp.required_offset, dp.first_offset, dp.record_ids,
                    fut(dp.deadline_ms)) for dp in br.delayed_produces]),
            br.metadata_offset, fut(br.next_heartbeat_ms), br.clean_shutdown_epoch, br.want_shutdown,
            tuple([md.broker_epochs[inv[j]] for j in range(n)]) if md.broker_epochs else (), ids(md.fenced),
            ids(md.shutting_down), shutdown_key(br.controlled_shutdown),
            tuple([(df.request_id, df.partition, df.fetch_offset, df.offset_known, df.min_bytes,
                    df.current_leader_epoch, df.client_metadata, df.rack, df.isolation, fut(df.deadline_ms))
                   for df in br.delayed_fetches]),
        ) + ((orphans_key(br.orphans),) if br.orphans else ()) + (
            ((br.log_dir_of, br.offline_dirs, tuple([(p, dir_owner(d)[1] if dir_owner(d) else d)
                                                     for p, d in br.dir_assignments])),)
            if br.log_dir_of or br.offline_dirs or br.dir_assignments else ())

    def shutdown_key(cs):
        if cs is None:
            return None
        resp = cs.response
        return (cs.remaining_retries, lid(cs.prev_controller), lid(cs.request_to), cs.request_epoch,
                (resp[0], resp[1]) if resp else ())

    def controller_key(c):
        return (lid(c.broker_id), c.epoch, c.epoch_zk_version, tuple([c.live_brokers[inv[j]] for j in range(n)]),
                tuple([liace(p, st) for p, st in enumerate(c.partition_states)]),
                tuple([tuple([request(r) for r in c.queues[inv[j]]]) for j in range(n)]),
                ids(c.shutting_down), fut(c.next_rebalance_ms),
                # topics at run time (model/topics.py): constant unless a topic is created or deleted
                tuple([ordered(a) for a in c.assignment]), c.deleting, c.deletion_started, c.deletion_ineligible,
                tuple([tuple([(lid(r), st) for r, st in row]) for row in c.replica_deletion]),
                tuple([(lid(b), errors) for b, errors in c.stop_replica_responses]), c.reassign_event)

    if identity:
        brokers = [broker_key(br) for br in s.brokers]
        ctrls = [controller_key(c) for c in s.controllers]
    else:
        brokers = [broker_key(s.brokers[inv[j]]) for j in range(n)]
        ctrls = sorted(controller_key(c) for c in s.controllers)
    notified = tuple(sorted({p for _seq, ps in zk.isr_change_notifications for p in ps}))
    zkk = (lid(zk.controller), zk.controller_epoch, zk.controller_epoch_zk_version,
           tuple([ordered(a) for a in zk.assignment]),
           tuple([liace(p, st) for p, st in enumerate(zk.partition_states)]), notified,
           tuple([zk.registrations[inv[j]] for j in range(n)]),
           tuple([zk.sessions[inv[j]] for j in range(n)]), zk.next_czxid, zk.preferred_replica_election, zk.delete_topics,
           tuple([None if t is None else ordered(t) for t in zk.reassign_partitions]),
           tuple([None if r is None else (ordered(r[0]), ordered(r[1])) for r in zk.reassigning]))
    since = []
    for j in range(n):
        br = s.brokers[inv[j]]
        t = g.session_since[inv[j]]
        # read only as max(t, last change) and max(t, last propagation), by the invariant: dominated, it is moot
        if (t <= br.last_isr_change_ms and t <= br.last_isr_propagation_ms) or (isr_frozen and not br.isr_change_set):
            since.append(1)
        else:
            since.append(YOUNG_SINCE if t - now >= y_since else past(t, h_prop, 1))
    gk = (g.next_record_id, g.next_request_id, g.produced,
          tuple(sorted([(rid, off, e, lid(b), p) for rid, off, e, b, p in g.acked])), g.consumed,
          tuple(sorted({(p, e, lid(b)) for p, e, b in g.leaders})), g.unclean_elections,
          tuple([(u.partition, u.leader_epoch, lid(u.leader), u.taken_epoch, u.log) for u in g.unclean]),
          tuple(sorted([(p, e, lid(b), o, r) for p, e, b, o, r in g.unclean_losses])), g.controller_moves, g.crashes,
          g.lossy_crashes, g.disk_wipes, g.session_expirations, min(g.flushes, cfg.max_flushes),
          g.isr_shrinks, g.isr_expands, min(g.truncations, 1), tuple(since), g.preferred_elections,
          g.delete_records, g.retention_runs, g.partition_creations, g.topic_deletions, g.deleted_partitions,
          g.reassignments, g.alter_isr_failures, tuple(sorted((lid(b), p, e, v) for b, p, e, v in g.fault_given_up)),
          g.forged_answers, g.forged_accepted, g.expired_heartbeats, g.config_changes, g.config_unclean_elections) \
        + ((g.log_dir_failures, g.dir_leader_moves) if g.log_dir_failures or g.dir_leader_moves else ())
    q = s.quorum
    if q is None:
        qk = None
    else:
        h_sess = cfg.broker_session_timeout_ms + 1
        qk = (tuple([metadata_record_key(r, lid, ids, ordered) for r in q.log]), q.batch_ends,
              tuple([None if q.registrations[inv[j]] is None else
                     (q.registrations[inv[j]].epoch, q.registrations[inv[j]].fenced,
                      q.registrations[inv[j]].in_controlled_shutdown)
                     + (_dirs_key(q.registrations[inv[j]].directories, lid),) for j in range(n)]),
              tuple([(q.reported_offsets[inv[j]], q.shutdown_offsets[inv[j]]) for j in range(n)]),
              tuple([(ordered(r.replicas), ids(r.isr), lid(r.leader), r.leader_epoch, r.partition_epoch, ids(r.elr),
                      r.leader_recovery_state, tuple([lid(x) for x in r.last_known_elr]))
                     + (_dirs_key(r.directories, lid),) for r in q.partitions]),
              tuple([past(q.last_contact_ms[inv[j]], h_sess, 1) for j in range(n)]), fut(q.next_balance_ms),
              q.topic_unclean_leader_election)
    return (tuple(brokers), zkk, tuple(ctrls), gk, None if deadline is None else deadline - now, qk)


def _dirs_key(dirs: tuple, lid) -> tuple:
    """Directory ids as a key (KIP-858): each broker's directory as (its broker renamed by ``lid``, its index), a
    reserved id as itself, in the order given (a partition's replicas' order)."""
    out = []
    for d in dirs:
        owner = dir_owner(d)
        out.append(d if owner is None else (lid(owner[0]), owner[1]))
    return tuple(out)


def metadata_record_key(r, lid, ids, ordered) -> tuple:
    """A KRaft metadata record as a key, broker ids renamed by ``lid`` / ``ids`` / ``ordered``."""
    t = type(r)
    if t is PartitionChangeRecord:
        g = r.registration
        return (0, r.partition, ordered(g.replicas), ids(g.isr), lid(g.leader), g.leader_epoch, g.partition_epoch,
                ids(g.elr), r.created, g.leader_recovery_state, tuple([lid(x) for x in g.last_known_elr])) \
            + ((_dirs_key(g.directories, lid),) if g.directories else ())
    if t is BrokerLogDirsChangeRecord:
        return (6, lid(r.broker_id), r.broker_epoch, _dirs_key(r.log_dirs, lid))
    if t is RegisterBrokerRecord:
        return (1, lid(r.broker_id), r.broker_epoch, r.fenced)
    if t is FenceBrokerRecord:
        return (2, lid(r.broker_id), r.broker_epoch)
    if t is UnfenceBrokerRecord:
        return (3, lid(r.broker_id), r.broker_epoch)
    if t is BrokerRegistrationChangeRecord:
        return (4, lid(r.broker_id), r.broker_epoch)
    if t is RemoveTopicRecord:
        return (5, r.partitions)
    if t is ConfigRecord:
        return (6, r.name, r.value)
    raise TypeError(f"unknown metadata record {r!r}")  # pragma: no cover


def _identity(n: int) -> tuple:
    return tuple(range(n))


def state_key(cfg: ModelConfig, s, symmetry: bool = False, max_isr_changes: int | None = None,
              deadline: int | None = None) -> tuple:
    """The hashable dedup key of s under the explorer's abstractions (least over broker permutations if
    ``symmetry``).  Deterministic: a tuple of ints, bools, strings and tuples, no hash involved."""
    n = len(s.brokers)
    h = horizons(cfg)
    if not symmetry:
        ident = _identity(n)
        return _key(cfg, s, ident, ident, h, max_isr_changes, True, deadline)
    best = None
    for perm in itertools.permutations(range(n)):
        inv = [0] * n
        for o, nw in enumerate(perm):
            inv[nw] = o
        k = _key(cfg, s, perm, tuple(inv), h, max_isr_changes, deadline=deadline)
        if best is None or k < best:
            best = k
    return best


# =========================================================================== the fast key (explore's dedup)
class _Interner:
    """Hash-consing: each distinct sub-key gets a small int, in order of first appearance (so the numbering
    depends only on the deterministic BFS order, never on the hash seed)."""

    __slots__ = ("table",)

    def __init__(self):
        self.table: dict = {}

    def __call__(self, k) -> int:
        t = self.table
        v = t.get(k)
        if v is None:
            v = t[k] = len(t)
        return v


def fast_keyer(cfg: ModelConfig, max_isr_changes: int | None = None, memo_limit: int = 200_000,
               deadline: int | None = None):
    """A function s -> key that partitions states exactly as ``state_key(cfg, s, False, max_isr_changes, deadline)``
    does (tested), faster (``benchmarks/state_keys.py``), for the explorer's dedup set.

    How: ``state_key`` rebuilds a nested tuple from every record of every state.  Here each record's
    *clock-free* part (everything but its timestamps and the "is my cached zkVersion ZooKeeper's current
    one" flags) is interned to a small int (``_Interner``) and memoised by the record's identity: the
    model is copy-on-write, so a child state shares every record its step did not touch with its parent,
    and those sub-keys are found in the memo instead of being rebuilt.  A memo entry holds its record, so
    the record's ``id`` cannot be reused while the entry lives; records are never changed after the step
    that created them returns (node.py), so an entry never goes stale.  The memo is dropped when it grows
    past ``memo_limit`` entries (the interned ints survive, so keys do not change).  The parts that depend
    on the clock or on ZooKeeper's versions are computed per state from a few ints, exactly as in
    ``_key``.  The key is a flat tuple of small ints (cheap to hash and to keep in the seen set).
    """
    h_lag, h_change, h_prop = horizons(cfg)
    intern_part, intern_log, intern_fetch, intern_md, intern_broker = (_Interner() for _ in range(5))
    intern_zk, intern_ctrl, intern_ghost, intern_context = _Interner(), _Interner(), _Interner(), _Interner()
    intern_alter = _Interner()
    memo: dict = {}
    limit = memo_limit
    rel = zk_versions_ordered(cfg)   # zkVersions relative to ZooKeeper's, or "current or not" (_key's ver)
    no_change_set = not isr_change_set_used(cfg)

    def ver(v, c):
        if rel:
            return None if c is None else v - c
        return c is not None and v == c

    def item(it, cur):
        q = it.request
        return (q.partition, q.leader_epoch, q.new_isr, ver(q.zk_version, cur[q.partition]), it.isr,
                it.pending.expand, it.pending.replicas)

    def alter_key(unsent, inflight, cur) -> int:
        if inflight is None:
            flight = None
        else:
            r = inflight.response
            sent = (inflight.controller, tuple([item(it, cur) for it in inflight.items]))
            if r is None:    # on its way: the broker epoch it carries is checked on arrival
                flight = sent + (inflight.request.broker_epoch,)
            else:
                flight = sent + (r.error, tuple([(x.partition, x.error, x.leader, x.leader_epoch, x.isr,
                                                  None if x.error != "NONE" else ver(x.zk_version, cur[x.partition]))
                                                 for x in r.partitions]))
        return intern_alter((tuple([item(it, cur) for it in unsent]), flight))

    def part_static(part):
        if part is None:
            return -1, ()
        if type(part) is not Partition:
            return -2, ()
        return (intern_part((part.assigned_replicas, part.isr, part.leader, part.leader_epoch,
                             part.leader_epoch_start_offset, part.controller_epoch, part.pending_isr,
                             part.expand_checked,
                             tuple([(r.broker_id, r.log_end_offset, r.log_start_offset,
                                     r.last_fetch_leader_log_end_offset, r.broker_epoch)
                                    for r in part.remote_replicas]))),
                tuple([(r.last_fetch_time_ms, r.last_caught_up_time_ms) for r in part.remote_replicas]))

    def log_static(log):
        if log is None:
            return -1
        e = memo.get(id(log))
        if e is None:
            e = memo[id(log)] = (log, intern_log((log.log_start_offset, log.entries, log.high_watermark,
                                                  log.recovery_point, log.epoch_cache)))
        return e[1]

    def fetch_static(f):
        if f is None:
            return -1
        e = memo.get(id(f))
        if e is None:
            r = f.inflight
            e = memo[id(f)] = (f, intern_fetch((f.leader, f.leader_epoch, f.fetch_offset, _FETCH_STATES[f.state],
                                                (0,) if r is None else
                                                (1, r.error, r.fetch_offset, r.entries, r.high_watermark,
                                                 r.log_start_offset, r.diverging, r.hw_applied), f.epoch_request)))
        return e[1]

    def broker_key(br, now, cur, isr_frozen, since_b) -> int:
        """The int of br's key in context: its clock-free part (memoised by identity) plus the flags and
        relative times the context decides (memoised for the last context seen with this record)."""
        e = memo.get(id(br))
        if e is None:
            e = memo[id(br)] = [br, broker_static(br), None, 0]
        ctx = (now, cur, isr_frozen, since_b)
        if e[2] == ctx:
            return e[3]
        static, versions, ptimes, dues, last_change, last_prop, deadlines, empty, unsent, inflight = e[1]
        y_lag, y_change, y_prop, y_since, left = young_limits(cfg, now, deadline)
        out = [static]
        add = out.append
        if unsent or inflight is not None:
            add(alter_key(unsent, inflight, cur))
        for p, v in enumerate(versions):
            if v is not None:
                c = cur[p]
                add(None if c is None else v - c) if rel else add(c is not None and v == c)
                for t_fetch, t_caught in ptimes[p]:
                    r = t_fetch - now
                    add(YOUNG if r >= y_lag else r if r >= -h_lag else -h_lag - 1)
                    r = t_caught - now
                    add(YOUNG if r >= y_lag else r if r >= -h_lag else -h_lag - 1)
        for t in dues:
            add(-1 if t < 0 else LATE if left is not None and t - now > left else t - now)
        for t in deadlines:
            add(-1 if t < 0 else LATE if left is not None and t - now > left else t - now)
        if isr_frozen and empty:
            add(1)
            add(1)
            add(1)
        else:
            r = last_change - now
            add(YOUNG if r >= y_change else r if r >= -h_change else -h_change - 1)
            r = last_prop - now
            add(YOUNG if r >= y_prop else r if r >= -h_prop else -h_prop - 1)
            if since_b <= last_change and since_b <= last_prop:
                add(1)
            else:
                r = since_b - now
                add(YOUNG_SINCE if r >= y_since else r if r >= -h_prop else -h_prop - 1)
        k = intern_context(tuple(out))
        e[2] = ctx
        e[3] = k
        return k

    def broker_static(br):
        """(int of the clock-free part, zk_version per partition (None: not hosted online), replica times per
        partition, raw timestamps)."""
        parts, ptimes, versions = [], [], []
        for part in br.partitions:
            k, times = part_static(part)
            parts.append(k)
            ptimes.append(times)
            versions.append(part.zk_version if k >= 0 else None)
        md = br.metadata
        mk = memo.get(id(md))
        if mk is None:
            # a partition's offline replicas (UpdateMetadata's offlineReplicas) are left out, as state_key leaves them:
            # nothing in the protocol reads them
            mk = memo[id(md)] = (md, intern_md((md.alive_brokers, tuple([
                None if m is None else (m.leader, m.leader_epoch, m.isr, m.replicas) for m in md.partitions]),
                md.controller_id, md.broker_epochs, md.fenced, md.shutting_down)))
        dps = br.delayed_produces
        static = intern_broker((br.alive, br.broker_epoch, br.controller_epoch, tuple(parts),
                                tuple([log_static(log) for log in br.logs]),
                                tuple([fetch_static(f) for f in br.fetchers]),
                                tuple([-1 if x is None else x for x in br.hw_checkpoint]), br.hw_checkpoint_started,
                                mk[1], br.isr_change_set,
                                tuple([(dp.request_id, dp.partition, dp.required_offset, dp.first_offset,
                                        dp.record_ids) for dp in dps]), br.metadata_offset, br.clean_shutdown_epoch,
                                br.want_shutdown, br.controlled_shutdown,
                                tuple([(df.request_id, df.partition, df.fetch_offset, df.offset_known, df.min_bytes,
                                        df.current_leader_epoch, df.client_metadata, df.rack, df.isolation)
                                       for df in br.delayed_fetches])) + ((br.orphans,) if br.orphans else ())
                               + (((br.log_dir_of, br.offline_dirs, br.dir_assignments),)
                                  if br.log_dir_of or br.offline_dirs or br.dir_assignments else ()))
        val = (static, tuple(versions), tuple(ptimes),
               (br.next_isr_expiration_ms, br.next_isr_propagation_ms, br.next_hw_checkpoint_ms, br.next_heartbeat_ms),
               br.last_isr_change_ms, br.last_isr_propagation_ms,
               tuple([dp.deadline_ms for dp in dps] + [df.deadline_ms for df in br.delayed_fetches]),
               not br.isr_change_set, br.alter_isr_unsent, br.alter_isr_inflight)
        return val

    def zk_static(zk, cur):
        e = memo.get(id(zk))
        if e is None:
            notified = tuple(sorted({p for _seq, ps in zk.isr_change_notifications for p in ps}))
            e = memo[id(zk)] = (zk, intern_zk((
                zk.controller, zk.controller_epoch, zk.controller_epoch_zk_version, zk.assignment,
                tuple([None if st is None else (st.leader, st.leader_epoch, st.isr, st.controller_epoch)
                       for st in zk.partition_states]), notified, zk.registrations, zk.sessions, zk.next_czxid,
                zk.preferred_replica_election, zk.delete_topics, zk.reassign_partitions, zk.reassigning)))
        return e[1]

    def liace(p, st, cur):
        if st is None:
            return (0,)
        return (1, st.leader, st.leader_epoch, st.isr, st.controller_epoch, ver(st.zk_version, cur[p]))

    def request(r, cur):
        t = type(r)
        if t is LeaderAndIsrRequest:
            return (0, r.controller_id, r.controller_epoch, r.broker_epoch,
                    tuple([(q.partition, q.controller_epoch, q.leader, q.leader_epoch, q.isr,
                            ver(q.zk_version, cur[q.partition]), q.replicas, q.is_new) for q in r.partition_states]))
        if t is UpdateMetadataRequest:
            return (1, r.controller_id, r.controller_epoch, r.broker_epoch,
                    tuple([(q.partition, q.controller_epoch, q.leader, q.leader_epoch, q.isr,
                            ver(q.zk_version, cur[q.partition]), q.replicas) for q in r.partition_states]),
                    r.live_brokers)
        if t is StopReplicaRequest:
            return (2, r.controller_id, r.controller_epoch, r.broker_epoch, r.delete_partitions, r.partitions)
        raise TypeError(f"unknown request {r!r}")  # pragma: no cover

    def controller_key(c, cur):
        return (c.broker_id, c.epoch, c.epoch_zk_version, c.live_brokers,
                tuple([liace(p, st, cur) for p, st in enumerate(c.partition_states)]),
                tuple([tuple([request(r, cur) for r in q]) for q in c.queues]), c.shutting_down,
                c.assignment, c.deleting, c.deletion_started, c.deletion_ineligible, c.replica_deletion,
                c.stop_replica_responses, c.reassign_event)

    def ctrl_key(c, cur):
        mk = (id(c), cur)
        e = memo.get(mk)
        if e is None:
            e = memo[mk] = (c, intern_ctrl(controller_key(c, cur)))
        return e[1]

    h_sess = cfg.broker_session_timeout_ms + 1

    def same(x):
        return x

    def quorum_static(q):
        e = memo.get(id(q))
        if e is None:
            e = memo[id(q)] = (q, intern_zk((
                tuple([metadata_record_key(r, same, same, same) for r in q.log]), q.batch_ends,
                tuple([None if r is None else (r.epoch, r.fenced, r.in_controlled_shutdown, r.directories)
                       for r in q.registrations]),
                q.reported_offsets, q.shutdown_offsets,
                tuple([(r.replicas, r.isr, r.leader, r.leader_epoch, r.partition_epoch, r.elr, r.leader_recovery_state,
                        r.last_known_elr, r.directories) for r in q.partitions]), q.topic_unclean_leader_election)))
        return e[1]

    def ghost_static(g):
        e = memo.get(id(g))
        if e is None:
            e = memo[id(g)] = (g, intern_ghost((
                g.next_record_id, g.next_request_id, g.produced, tuple(sorted(g.acked)), g.consumed,
                tuple(sorted(set(g.leaders))), g.unclean_elections, g.unclean, g.unclean_losses,
                g.controller_moves, g.crashes, g.lossy_crashes, g.disk_wipes,
                g.session_expirations, min(g.flushes, cfg.max_flushes), g.isr_shrinks, g.isr_expands,
                min(g.truncations, 1), g.preferred_elections, g.delete_records, g.retention_runs,
                g.partition_creations, g.topic_deletions, g.deleted_partitions, g.reassignments,
                g.alter_isr_failures, g.fault_given_up, g.forged_answers, g.forged_accepted,
                g.expired_heartbeats, g.config_changes, g.config_unclean_elections, g.log_dir_failures,
                g.dir_leader_moves)))
        return e[1]

    def key(s) -> tuple:
        if len(memo) > limit:
            memo.clear()
        now = s.now
        zk = s.zk
        cur = tuple([None if st is None else st.zk_version for st in s.controller_partition_states()])
        g = s.ghost
        isr_frozen = no_change_set or (max_isr_changes is not None and g.isr_shrinks + g.isr_expands >= max_isr_changes)
        since = g.session_since
        out = [zk_static(zk, cur), ghost_static(g)]
        add = out.append
        for b, br in enumerate(s.brokers):
            add(broker_key(br, now, cur, isr_frozen, since[b]))
        for c in s.controllers:
            t = c.next_rebalance_ms         # the auto-leader-rebalance-task's due time, relative to now
            add(ctrl_key(c, cur) if t < 0 else
                (ctrl_key(c, cur), LATE if deadline is not None and t - now > deadline - now else t - now))
        if deadline is not None:
            add(deadline - now)
        q = s.quorum
        if q is not None:
            add(quorum_static(q))
            for t in q.last_contact_ms:
                r = t - now
                add(r if r >= -h_sess else -h_sess - 1)
            t = q.next_balance_ms           # the leader-balancing run's due time, relative to now
            if t >= 0:
                add(("balance", LATE if deadline is not None and t - now > deadline - now else t - now))
        return tuple(out)

    return key


def _check_symmetric(cfg: ModelConfig) -> None:
    if cfg.racks:
        raise ExplorerError("symmetry reduction needs interchangeable brokers, but the config names racks")
    if cfg.isr_expiration_phase_ms and len(set(cfg.isr_expiration_phase_ms)) > 1:
        raise ExplorerError("symmetry reduction needs interchangeable brokers, but isr_expiration_phase_ms differ")


# =========================================================================== bounds
def bounded_config(cfg: ModelConfig, brokers: int | None = None, max_records: int | None = None,
                   max_crashes: int | None = None, max_session_expirations: int | None = None,
                   max_controller_epoch: int | None = None) -> ModelConfig:
    """cfg with the explorer's bounds applied (brokers also caps the replication factor; with KRaft the controller
    epochs bound the controller failovers, and the session expirations the brokers' lost heartbeats)."""
    changes = {}
    if brokers is not None:
        changes.update(n_brokers=brokers, replication_factor=min(cfg.replication_factor, brokers))
        if cfg.racks:
            changes["racks"] = ()
        if cfg.isr_expiration_phase_ms:
            changes["isr_expiration_phase_ms"] = ()
    for name, value in (("max_records", max_records), ("max_crashes", max_crashes),
                        ("max_session_expirations", max_session_expirations),
                        ("max_controller_epoch", max_controller_epoch)):
        if value is not None:
            changes[name] = value
    if max_controller_epoch is not None and A.ControllerFailover in action_kinds(cfg):
        # a quorum controller (KRaft) has no controller epoch in ZooKeeper: it moves by ControllerFailover, one
        # per epoch after the first (as a ZooKeeper controller's moves each take an election)
        changes["max_controller_moves"] = max(0, max_controller_epoch - 1)
    return cfg.replace(**changes) if changes else cfg


def search_args(cfg: ModelConfig, b: dict) -> tuple:
    """(config, ``explore`` keyword arguments) for a bounds table keyed like ``isrlab explore``'s options (a preset's
    ``model.config.explore_bounds``, a user preset's ``explore`` table): one mapping for the command and the
    benchmark."""
    cfg = bounded_config(cfg, b["brokers"], b["max_records"], b["max_crashes"], b["max_expirations"],
                         b["max_controller_epoch"]).replace(produce_acks=tuple(sorted(set(b["acks"]))))
    return cfg, dict(max_leader_epoch=b["max_epoch"], max_isr_changes=b["max_isr_changes"], max_time_ms=b["max_time"],
                     max_queue=b["max_queue"], settle_every=b["settle_every"],
                     max_states=b["max_states"], eager_tasks=b["eager_tasks"], without=tuple(b["without"]),
                     composite=bool(b.get("composite")), max_in_flight=b.get("max_in_flight") or 0,
                     max_lagging=b.get("max_lagging") or 0)


#: a request whose answer is a step of its own (``actions.CONTINUATIONS`` not carried on by a delivery), and those
#: answers: a coarse search may leave up to ``max_in_flight`` requests unanswered in a stored state
OPENS_REQUEST = frozenset(a for a, follow in CONTINUATIONS.items()
                          if a not in DELIVERIES and not any(b in DELIVERIES for b, _ in follow))
ANSWERS = frozenset(b for a in OPENS_REQUEST for b, _ in CONTINUATIONS[a])


def exchange_next(acts, last, lagging=frozenset()):
    """What a coarse search takes after ``last`` among the enabled ``acts`` without a choice: the continuation of
    ``last``'s exchange (``actions.CONTINUATIONS``), else the first delivery (``actions.DELIVERIES``) to a broker not
    in ``lagging`` (nor a continuation that is a delivery to one); else None."""
    if type(last) in CONTINUATIONS:
        for x in acts:
            if continues(last, x) and not (lagging and type(x) in DELIVERIES and x.broker in lagging):
                return x
    for x in acts:
        if type(x) in DELIVERIES and x.broker not in lagging:
            return x
    return None


def lagging_brokers(acts) -> frozenset:
    """The brokers a delivery is enabled to among ``acts``: in a state a coarse search stored, those lagging the
    controller's decisions (every other broker had them delivered within the step that made them)."""
    return frozenset(x.broker for x in acts if type(x) in DELIVERIES)


def chain_lagging(lagging: frozenset, a, told_late=None) -> frozenset:
    """The brokers whose deliveries a coarse step choosing ``a`` leaves out of its chain: those ``lagging`` already
    and the one ``told_late`` (a lagging branch's), not the one a chosen delivery ``a`` is to (it catches up)."""
    lags = lagging if told_late is None else lagging | {told_late}
    if lags and type(a) in DELIVERIES:
        lags = lags - {a.broker}
    return lags


def _out_of_bounds(s, max_leader_epoch, max_isr_changes, max_queue=None) -> str | None:
    """The bound (``isrlab explore``'s option name) state s is beyond, or None."""
    if max_isr_changes is not None and s.ghost.isr_shrinks + s.ghost.isr_expands > max_isr_changes:
        return "max_isr_changes"
    if max_queue is not None:
        for c in s.controllers:
            for q in c.queues:
                if len(q) > max_queue:
                    return "max_queue"
    if max_leader_epoch is None:
        return None
    for st in s.controller_partition_states():
        if st is not None and st.leader_epoch > max_leader_epoch:
            return "max_epoch"
    return None


#: the configuration budgets a state can use up, by ``isrlab explore``'s option name
BUDGETS = ("max_records", "max_crashes", "max_expirations", "max_controller_epoch")
#: every bound a search can meet (``ExploreResult.bounds_met``): the budgets, and those that prune transitions
BOUND_NAMES = BUDGETS + ("max_epoch", "max_isr_changes", "max_time", "max_queue", "max_in_flight", "max_lagging")


def budgets_used_up(cfg: ModelConfig, s) -> set:
    """The budgets of ``BUDGETS`` that state s has used up (its counters at the configuration's limits): while one
    is not, raising it enables nothing in s."""
    g = s.ghost
    out = set()
    if g.produced >= cfg.max_records:
        out.add("max_records")
    if g.crashes >= cfg.max_crashes:
        out.add("max_crashes")
    if g.session_expirations >= cfg.max_session_expirations:
        out.add("max_expirations")
    if s.zk.controller_epoch >= cfg.max_controller_epoch or g.controller_moves >= cfg.max_controller_moves:
        out.add("max_controller_epoch")
    return out


# =========================================================================== result
@dataclass
class Found:
    """The first (shortest) violation of one invariant."""

    violation: Violation
    state: int           # id of the violating state
    actions: list        # the shortest trace, ending with the violating step


@dataclass
class ExploreResult:
    config: ModelConfig
    symmetry: bool
    max_leader_epoch: int | None
    max_depth: int | None
    max_isr_changes: int | None = None
    max_time_ms: int | None = None
    eager_tasks: bool = False
    without: tuple = ()
    max_queue: int | None = None  # control requests queued for one broker
    distinct_states: int = 0
    transitions: int = 0
    pruned: int = 0               # transitions that left the bounds
    depth: int = 0                # the largest BFS depth of a state
    complete: bool = False        # every reachable state within the bounds expanded
    stopped_by_budget: bool = False   # should_stop (a wall-clock budget) ended the search
    seconds: float = 0.0
    found: dict = field(default_factory=dict)      # invariant name -> Found, in order of discovery
    #: the graph: per state id, its parent id and the action from it (BFS tree) and its depth
    parent: list = field(default_factory=list)
    via: list = field(default_factory=list)
    depths: list = field(default_factory=list)
    states: list | None = None    # representatives (kept when keep_graph)
    edges: list | None = None     # (u, v, action) with v = -1 for a pruned transition
    kinds: dict = field(default_factory=dict)      # action kind -> transitions taken
    errors_seen: int = 0
    witnesses: frozenset = frozenset()
    compressed: bool = False      # chains of single-successor states stepped through, not stored
    composite: bool = False       # the protocol's exchanges taken whole (a coarse search: see ``explore``)
    max_in_flight: int = 0        # requests a coarse search may leave unanswered in a stored state
    max_lagging: int = 0          # brokers a coarse search may leave lagging the controller in a stored state
    chain_states: int = 0         # states stepped through inside chains (not stored, not counted above)
    settled: int = 0              # stored states the liveness sample settled (``settle_every``)
    passed: int = 0               # violations the judge let the search go on past (``judge``)
    queue: int = 0                # states found and not yet expanded
    cpu_seconds: float = 0.0      # this process's CPU time (the figure a loaded machine does not inflate)
    #: why a search that is not complete stopped: "violation", "budget", "max_states", "max_depth"; None if complete
    stop_reason: str | None = None
    #: the bounds the search met (option names: a transition pruned by ``max_epoch``, ``max_time``, ...; a state
    #: that used up ``max_records``, ...).  A complete search that never met a bound has the same states, and the
    #: same verdict, with that bound raised.
    bounds_met: frozenset = frozenset()

    @property
    def visited(self) -> int:
        """States checked: those stored plus those stepped through in chains (all distinct when, as measured, a
        chain's states have one predecessor each)."""
        return self.distinct_states + self.chain_states

    @property
    def violation(self) -> Found | None:
        return next(iter(self.found.values()), None)

    @property
    def states_per_second(self) -> float:
        """States checked (stored and stepped through) per second of wall clock."""
        return self.visited / self.seconds if self.seconds > 0 else float("inf")

    def trace_to(self, i: int) -> list:
        """The actions from the initial state to state i (a compressed chain's actions one by one)."""
        out = []
        while self.parent[i] >= 0:
            a = self.via[i]
            if type(a) is tuple:
                out.extend(reversed(a))
            else:
                out.append(a)
            i = self.parent[i]
        out.reverse()
        return out

    def graph(self):
        """The state graph as a networkx DiGraph: nodes are state ids (attribute ``depth``), each edge carries
        ``actions``, the list of actions between its two states (pruned transitions are left out)."""
        import networkx as nx

        if self.edges is None:
            raise ExplorerError("the state graph was not kept (keep_graph=False)")
        g = nx.DiGraph()
        g.add_nodes_from((i, {"depth": d}) for i, d in enumerate(self.depths))
        for u, v, a in self.edges:
            if v < 0:
                continue
            data = g.get_edge_data(u, v)
            if data is None:
                g.add_edge(u, v, actions=[a])
            else:
                data["actions"].append(a)
        return g


# =========================================================================== the search
def explore(cfg: ModelConfig, *, max_leader_epoch: int | None = None, max_isr_changes: int | None = None,
            max_depth: int | None = None, max_time_ms: int | None = None, eager_tasks: bool = False, without=(),
            invariants=SAFETY, symmetry: bool = False, stop_at_first: bool = True, keep_graph: bool = False,
            max_states: int | None = None, progress=None, should_stop=None, compress: bool = True,
            go_on_past=frozenset(), max_queue: int | None = None, settle_every: int = 0,
            liveness=(), judge=None, composite: bool = False, max_in_flight: int = 0,
            max_lagging: int = 0) -> ExploreResult:
    """Breadth-first search of every state reachable from ``initial_state(cfg)`` within the bounds.

    Parameters
    ----------
    cfg : the model configuration, budgets included (see ``bounded_config``).
    max_leader_epoch : prune transitions writing a partition leader epoch above this (None: no bound).
    max_isr_changes : prune transitions making a leader's ISR writes (shrinks + expansions) exceed this.
    max_queue : prune transitions leaving more than this many control requests queued by a ZooKeeper-era controller
        for one broker (None: no bound).
    max_depth : expand no state at this depth (None: no bound).
    max_time_ms : prune every clock tick past this many ms after the start (None: no bound).  A bound like the
        others (the result is complete within it); the time left is then part of the state key.  ``check_liveness``
        refuses such a result: its fairness needs time to diverge.
    eager_tasks : run a due scheduled task before any other action (a reduction, properties/README.md).
    without : action classes (or their names) never taken, e.g. ``("ConsumerFetch",)``.
    invariants : the ALWAYS invariants to check (state ones on every new state, step ones on every transition).
    symmetry : deduplicate up to renaming brokers.
    stop_at_first : stop at the first violation (else record the first violation of each invariant and go on).
    go_on_past : names of invariants whose violations do not stop the search (TLC's ``-continue``, per invariant):
        the shortest trace of each is recorded, that invariant is no longer checked, and the search goes on through
        the violating state, so a violation already known does not hide a longer one behind it.
    judge : ``judge(name, facts, actions) -> bool``, asked of each safety violation of an invariant not in
        ``go_on_past`` where it first fails on its path (``actions``, the trace to it): True passes it (it is not
        recorded in ``found``; the search goes on through it, and ``name`` is checked no more on the paths through
        that state, where it already failed, but still everywhere else, so another path's violation of it is judged
        in its turn); False records it like any violation.  None: every violation is recorded.  The engine knows
        nothing of what the judge decides by (the command attributes each violation to known bugs).
    keep_graph : keep the representative states and every edge (for ``graph``, liveness and coverage).
    max_states : stop (incomplete) after this many distinct states.
    progress : called as ``progress(result)`` every ``PROGRESS_EVERY`` stored states (the caller decides what to
        show, and when: the engine reads no clock for it).
    compress : step through chains of states that have exactly one successor and break no invariant without storing
        them (not with ``keep_graph``): the chain's actions label one edge, so traces still replay step by step, and
        the search visits the same states (tested: the same violations with and without).  Shortest traces stay
        shortest: the frontier is expanded in order of depth in actions (Dijkstra's order on chain lengths), a state
        reached again by a shorter path takes that path, and the search stops only when nothing left can be
        shorter than the violation found.
    composite : a coarse search at the protocol's grain: a state reached by an action whose exchange can go on
        (``actions.CONTINUATIONS``: a request's handling and response, a broker's catch-up on the metadata log, a
        controller's queue to one broker) is stepped through along that continuation, then through every delivery
        then enabled (``actions.DELIVERIES``: a broker's replay of committed metadata, a controller's request reaching
        its broker; first enabled first), checked but not stored, as a chain is.  Every state and transition it
        meets is checked, so a violation it finds is a real trace of the fine model; but the states inside an
        exchange are not expanded, so interleavings inside an exchange are not searched, and a complete coarse
        search proves the invariants only for schedules that run exchanges whole and deliver a controller's
        decisions to every live broker before anything else happens.
        Only with ``compress`` (not with ``keep_graph``); else the search is fine (``ExploreResult.composite`` says).
    max_in_flight : with ``composite``, requests (``OPENS_REQUEST``: a fetch, an OffsetsForLeaderEpoch, an
        AlterPartition, a controlled shutdown) a stored state may hold unanswered: each such request is taken both
        answered at once and held, its answer then a choice like any other, and a held request leaving more than
        this many answers pending is pruned.  0 runs every exchange whole; the fine search holds any number.
    max_lagging : with ``composite``, brokers a stored state may leave lagging the controller: a step whose chain
        delivers decisions to a broker is taken again with that broker's deliveries held (``lagging_brokers``), and
        a lagging broker's deliveries are then choices, not part of other steps, until one is chosen.  A state with
        more than this many lagging brokers is pruned.  0 delivers every decision to every live broker at once.
    settle_every : check liveness on a sample: every ``settle_every``-th stored state (by discovery order, so the
        sample is deterministic) is settled as the fuzzers settle a run's end (``properties.settle``: no more faults,
        a fair schedule of the system's own actions), and a property still pending after it is a violation whose
        trace is the path to that state (the shortest to it, not the shortest violation: a sample).  0: no settling.
        It works within any bounds, time bound included, where ``check_liveness``'s lassos need the whole graph
        without one; the price is a settling phase (up to ``settle.settle_bound`` steps) per sampled state.
    liveness : names of the liveness properties the settling checks (empty: all of ``invariants.LIVENESS``).
    should_stop : asked between two state expansions once ``budget.CHECK_EVERY`` transitions have been taken
        since it was last asked (a wall-clock ``budget.Deadline``): True stops the search there, incomplete,
        with ``stopped_by_budget`` set; what was searched before is what an unbounded search does first.

    Returns
    -------
    ExploreResult; ``found`` maps each violated invariant to its shortest counterexample.
    """
    if symmetry:
        _check_symmetric(cfg)
    # The search allocates millions of small acyclic objects (records, keys) and keeps most of them: the
    # cyclic collector's passes over that growing heap cost about 40% of the time and find nothing (the
    # model's records form no reference cycles; tested by a gc.collect() after a search).  Paused for the
    # search, restored after.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _explore(cfg, max_leader_epoch, max_isr_changes, max_depth, max_time_ms, eager_tasks, without, invariants,
                        symmetry, stop_at_first, keep_graph, max_states, progress, should_stop, compress,
                        frozenset(go_on_past), max_queue, settle_every, tuple(liveness), judge, composite,
                        max_in_flight, max_lagging)
    finally:
        if gc_was_enabled:
            gc.enable()


def _explore(cfg, max_leader_epoch, max_isr_changes, max_depth, max_time_ms, eager_tasks, without, invariants, symmetry,
             stop_at_first, keep_graph, max_states, progress, should_stop=None, compress=True,
             go_on_past=frozenset(), max_queue=None, settle_every=0, liveness=(), judge=None,
             composite=False, max_in_flight=0, max_lagging=0) -> ExploreResult:
    if settle_every:
        from .settle import settle
    unknown = [n for n in liveness if n not in LIVENESS]
    if settle_every < 0 or unknown:
        raise ExplorerError(f"settle_every must be >= 0 (got {settle_every})" if settle_every < 0 else
                            f"unknown liveness property {unknown[0]} (known: {', '.join(LIVENESS)})")
    without = frozenset(A.ACTION_BY_NAME[w] if isinstance(w, str) else w for w in without)
    t0 = time.perf_counter()
    c0 = time.process_time()
    state_checks = tuple(inv for inv in invariants if inv.scope == STATE)
    step_checks = tuple(inv for inv in invariants if inv.scope == STEP)
    s0 = initial_state(cfg)
    deadline = None if max_time_ms is None else s0.now + max_time_ms
    if symmetry:
        def key(s):
            return state_key(cfg, s, True, max_isr_changes, deadline)
    else:
        key = fast_keyer(cfg, max_isr_changes, deadline=deadline)
    compress = compress and not keep_graph   # the graph's edges and fairness are per concrete state
    composite = composite and compress   # exchanges are stepped through as chains are: not with the graph
    for name, v in (("max_in_flight", max_in_flight), ("max_lagging", max_lagging)):
        if v < 0:
            raise ExplorerError(f"{name} must be >= 0 (got {v})")
    max_in_flight = max_in_flight if composite else 0
    max_lagging = max_lagging if composite else 0

    res = ExploreResult(cfg, symmetry, max_leader_epoch, max_depth, max_isr_changes, max_time_ms, eager_tasks,
                        tuple(sorted(k.__name__ for k in without)), compressed=compress, max_queue=max_queue,
                        composite=composite, max_in_flight=max_in_flight, max_lagging=max_lagging)
    seen = {key(s0): 0}
    met: set = set()                        # the bounds a transition was pruned by
    used = budgets_used_up(cfg, s0)         # the budgets a state kept used up (counters only grow along a path)
    res.parent.append(-1)
    res.via.append(None)
    res.depths.append(0)
    if keep_graph:
        res.states = [s0]
        res.edges = []
    found = res.found
    kinds: dict = {}
    errors = s0.ghost.errors_seen
    wit = set(inv.name for inv in WITNESSES if inv.check(cfg, s0))
    n_inv = len(invariants)
    #: with a judge, each frontier state carries the bits of the invariants passed on its path (not checked below it)
    bits = {inv.name: 1 << k for k, inv in enumerate(invariants)}

    def note(inv_name, facts, sid, actions):
        # the shortest trace of each invariant; with stop_at_first only the shortest violations at all of the
        # invariants that stop the search (those in go_on_past are kept whatever their length)
        old = found.get(inv_name)
        if old is not None and len(old.actions) <= len(actions):
            return
        if stop_at_first and inv_name not in go_on_past:
            stops = [len(f.actions) for n, f in found.items() if n not in go_on_past]
            if stops:
                best = min(stops)
                if best < len(actions):
                    return
                if best > len(actions):
                    for n in [n for n in found if n not in go_on_past]:
                        del found[n]
        found[inv_name] = Found(Violation(inv_name, len(actions), facts), sid, actions)
        state_plan.clear()
        step_plan.clear()

    def enough(d) -> bool:
        """Whether no violation still to be found (all of them at depth > d) can be shorter than those found."""
        if not found:
            return False   # the common case: asked after every transition
        if stop_at_first:
            stops = [len(f.actions) for n, f in found.items() if n not in go_on_past]
            return bool(stops) and max(stops) <= d + 1
        return len(found) == n_inv and max(len(f.actions) for f in found.values()) <= d + 1

    def take(items, sid, tr) -> int:
        """Record the violations ``items`` ((invariant, facts) on the way to state sid, by trace tr), or pass those
        the judge lets the search go on past: the bits of the passed ones."""
        passed = 0
        for name, facts in items:
            if judge is not None and name not in go_on_past and judge(name, facts, tr):
                passed |= bits[name]
                res.passed += 1
            else:
                note(name, facts, sid, tr)
        items.clear()
        return passed

    # Which invariants a transition must check depends only on the parts it changed (a small bit mask), on which
    # invariants are already found and on those passed on its path (``mask``, 0 without a judge): the lists are built
    # once per (changed, mask) and dropped whenever ``found`` changes.
    state_plan: dict = {}
    step_plan: dict = {}

    def plan(checks, memo, changed, mask) -> tuple:
        out = memo[changed if not mask else (changed, mask)] = tuple(
            inv for inv in checks if inv.name not in found and not bits[inv.name] & mask
            and (inv.reads is None or inv.reads & changed))
        return out

    def check_state(t, changed, mask=0):
        """The state invariants on t, whose predecessor held every invariant not yet found: True if one fails."""
        invs = state_plan.get(changed if not mask else (changed, mask))
        if invs is None:
            invs = plan(state_checks, state_plan, changed, mask)
        bad = False
        for inv in invs:
            facts = inv.check(cfg, t)
            if facts is not None:
                pending.append((inv.name, facts))
                bad = True
        return bad

    def check_step(s, a, t, changed, mask=0) -> bool:
        invs = step_plan.get(changed if not mask else (changed, mask))
        if invs is None:
            invs = plan(step_checks, step_plan, changed, mask)
        bad = False
        for inv in invs:
            facts = inv.check(cfg, s, a, t)
            if facts is not None:
                pending_step.append((inv.name, facts))
                bad = True
        return bad

    pending: list = []       # (invariant, facts) found on the state being stored
    pending_step: list = []  # the same for the transitions into it
    for inv in state_checks:
        facts = inv.check(cfg, s0)
        if facts is not None:
            pending.append((inv.name, facts))
    mask0 = take(pending, 0, [])
    # Frontier: (depth, id) in a heap.  Without compression every edge adds 1 and this is BFS's FIFO order exactly
    # (ids are numbered in discovery order, depths never decrease along it); with chains, Dijkstra's order.
    heap = [(0, 0)]
    # frontier states (their actions, if known, and the bits of the invariants passed on their path), dropped once
    # expanded
    states_by_id = {0: (s0, None, mask0)}
    stopped = stop_at_first and any(n not in go_on_past for n in found)
    if stopped:
        res.stop_reason = "violation"
    complete = not stopped
    edges = res.edges
    parent, via, depths = res.parent, res.via, res.depths
    last_progress = 0
    next_check = 0   # res.transitions at which should_stop is next asked
    chain_cap = CHAIN_CAP
    while heap and not stopped:
        if should_stop is not None and res.transitions >= next_check:
            next_check = res.transitions + CHECK_EVERY
            if should_stop():
                res.stopped_by_budget = stopped = True
                res.stop_reason = "budget"
                break
        d, i = heappop(heap)
        if d != depths[i] or i not in states_by_id:
            continue   # a stale entry: i was reached again by a shorter path, or already expanded
        if enough(d):
            stopped = True
            res.stop_reason = "violation"
            break
        s, acts, mask = states_by_id.pop(i)
        if max_depth is not None and d >= max_depth:
            complete = False
            res.stop_reason = res.stop_reason or "max_depth"
            continue
        if acts is None:
            acts = explorer_actions(cfg, s, eager_tasks, without)
        # Each action once, its exchange and deliveries whole (mode 0).  A coarse search with requests in flight takes
        # each request again, held unanswered (mode 1); one with lagging brokers takes again each step that delivered
        # decisions to a broker, with that broker's deliveries held (mode 2, appended once its mode 0 is done).
        holding = composite and max_in_flight
        lag_s = lagging_brokers(acts) if composite and max_lagging else frozenset()
        items = [(a, 0, None) for a in acts]
        if holding:
            items += [(a, 1, None) for a in acts if type(a) in OPENS_REQUEST]
        opened: dict = {}
        for a, mode, lagger in items:
            held = mode == 1
            lags = chain_lagging(lag_s, a, lagger)
            caught_up = a.broker if type(a) in DELIVERIES else None   # a delivery chosen: its broker catches up
            delivered = set() if composite else None   # the brokers this step's chain delivered to
            t = opened.get(a) if mode else None
            if t is None:
                t = step(cfg, s, a)
                res.transitions += 1
                kname = type(a).__name__
                kinds[kname] = kinds.get(kname, 0) + 1
                if holding or max_lagging:
                    opened[a] = t
            why = _out_of_bounds(t, max_leader_epoch, max_isr_changes, max_queue) or (
                "max_time" if deadline is not None and t.now > deadline else None)
            t_acts = None
            if mode:
                if why:
                    continue   # pruned once already, in mode 0
            if held:
                t_acts = explorer_actions(cfg, t, eager_tasks, without)
                if not any(continues(a, x) for x in t_acts):
                    continue   # nothing to hold: the request was answered in the step (or cannot be)
                if sum(type(x) in ANSWERS for x in t_acts) > max_in_flight:
                    why = "max_in_flight"
            if why:
                res.pruned += 1
                met.add(why)
                if edges is not None:
                    edges.append((i, -1, a))
                continue
            if composite and not holding and type(a) in OPENS_REQUEST:
                met.add("max_in_flight")   # a request answered at once that a larger bound would also hold
            errors |= t.ghost.errors_seen   # not in the key (coverage only): gathered on every transition
            changed = changes(s, t)
            path = [a]
            dd = d + 1
            bad = check_step(s, a, t, changed, mask)
            k = key(t)
            j = seen.get(k)
            # Chain compression: a successor with exactly one action of its own (and no violation) is stepped
            # through without being stored; the chain's actions label the edge to the state it ends in.  A successor
            # already stored is not a chain's start (its successors are or will be expanded from it).
            while compress and not held and j is None and not bad and (max_depth is None or dd < max_depth) and len(path) < chain_cap:
                t_acts = explorer_actions(cfg, t, eager_tasks, without)
                b = exchange_next(t_acts, path[-1], lags) if composite else None
                if b is not None and type(b) in DELIVERIES:
                    delivered.add(b.broker)
                if b is None and (len(t_acts) != 1 or type(t_acts[0]) is Tick):
                    break   # a clock tick ends a chain, so a cycle of single-successor states meets the seen set
                if check_state(t, changed, mask):
                    bad = True
                    break
                if len(wit) < len(WITNESSES):
                    for inv in WITNESSES:
                        if inv.name not in wit and inv.check(cfg, t):
                            wit.add(inv.name)
                if b is None:
                    b = t_acts[0]
                    if lags and type(b) in DELIVERIES and b.broker in lags:
                        lags = lags - {b.broker}   # the one action there, a choice: its broker catches up
                u = step(cfg, t, b)
                res.transitions += 1
                kname = type(b).__name__
                kinds[kname] = kinds.get(kname, 0) + 1
                res.chain_states += 1
                why = _out_of_bounds(u, max_leader_epoch, max_isr_changes, max_queue) or (
                    "max_time" if deadline is not None and u.now > deadline else None)
                if why:
                    res.pruned += 1
                    met.add(why)
                    if len(used) < len(BUDGETS):
                        used.update(budgets_used_up(cfg, t))   # t is checked but not stored
                    t = None   # a dead end: t is checked, its one transition leaves the bounds
                    break
                errors |= u.ghost.errors_seen
                changed = changes(t, u)
                path.append(b)
                dd += 1
                bad = check_step(t, b, u, changed, mask)
                t, t_acts, k = u, None, None
            if t is None:
                continue
            if mode == 0 and composite and not max_lagging and (delivered or type(a) in DELIVERIES):
                met.add("max_lagging")   # a decision delivered at once that a larger bound would hold
            elif mode == 0 and composite and delivered:
                # each broker this step told at once, told late instead (not one the step chose to catch up)
                items += [(a, 2, x) for x in sorted(delivered - lag_s) if x != caught_up]
            elif mode == 2 and not pending and not pending_step:
                if t_acts is None:
                    t_acts = explorer_actions(cfg, t, eager_tasks, without)
                lag_t = lagging_brokers(t_acts)
                if lagger not in lag_t:
                    continue   # the same as mode 0: nothing was held
                if len(lag_t) > max_lagging:
                    res.pruned += 1
                    met.add("max_lagging")
                    continue
            if k is None:
                k = key(t)
                j = seen.get(k)
            passed = 0
            if pending_step:
                jj = len(parent) if j is None else j   # the post state is recorded so the trace can be replayed
                passed = take(pending_step, jj, res.trace_to(i) + path)
            if j is None:
                j = len(parent)
                seen[k] = j
                parent.append(i)
                via.append(a if len(path) == 1 else tuple(path))
                depths.append(dd)
                if dd > res.depth:
                    res.depth = dd
                states_by_id[j] = (t, t_acts, mask | passed)
                heappush(heap, (dd, j))
                if len(used) < len(BUDGETS):
                    used.update(budgets_used_up(cfg, t))
                if keep_graph:
                    res.states.append(t)
                if len(wit) < len(WITNESSES):
                    for inv in WITNESSES:
                        if inv.name not in wit and inv.check(cfg, t):
                            wit.add(inv.name)
                if pending or check_state(t, changed, mask | passed):
                    passed |= take(pending, j, res.trace_to(j))
                    if passed:
                        states_by_id[j] = (t, t_acts, mask | passed)
                elif settle_every and j % settle_every == 0:
                    r = settle(cfg, t, dd, liveness or None)
                    res.settled += 1
                    if r.violations:
                        tr = res.trace_to(j)
                        for v in r.violations:
                            note(v.invariant, v.facts, j, tr)
            elif dd < depths[j] and j in states_by_id:
                # reached again by a shorter path (only through a chain): the shorter one is kept, with its state
                parent[j] = i
                via[j] = a if len(path) == 1 else tuple(path)
                depths[j] = dd
                # the bits of both paths: an invariant j itself fails was passed when j was stored
                states_by_id[j] = (t, t_acts, states_by_id[j][2] | mask | passed)
                heappush(heap, (dd, j))
                for name, f in list(found.items()):
                    if f.state == j and len(f.actions) > dd:   # a violation in j itself: shorter now too
                        found[name] = Found(Violation(name, dd, f.violation.facts), j, res.trace_to(j))
            if pending:   # a violating chain state already stored: its trace is the stored one
                passed = take(pending, j, res.trace_to(j))
                if passed and j in states_by_id:
                    f = states_by_id[j]
                    states_by_id[j] = (f[0], f[1], f[2] | passed)
            if edges is not None:
                edges.append((i, j, a))
            if enough(d):
                stopped = True
                res.stop_reason = "violation"
                break
        if max_states is not None and len(parent) >= max_states:
            stopped = True
            res.stop_reason = res.stop_reason or "max_states"
        if progress is not None and len(parent) - last_progress >= PROGRESS_EVERY:
            last_progress = len(parent)
            res.distinct_states = len(parent)
            res.queue = len(states_by_id)
            res.seconds = time.perf_counter() - t0
            res.cpu_seconds = time.process_time() - c0
            progress(res)
    res.complete = complete and not stopped and not states_by_id
    if res.complete:
        res.stop_reason = None
    elif stopped and not res.stop_reason:
        res.stop_reason = "max_states"
    if stopped and not found:
        res.complete = False
    res.distinct_states = len(parent)
    res.queue = len(states_by_id)
    res.kinds = dict(sorted(kinds.items()))
    res.bounds_met = frozenset(met | used)
    res.errors_seen = errors
    res.witnesses = frozenset(wit)
    res.seconds = time.perf_counter() - t0
    res.cpu_seconds = time.process_time() - c0
    return res


# =========================================================================== coverage
def _bits_to_errors(bits: int) -> list:
    return [name for name in E.ALL_ERRORS if bits & E.ERROR_BIT[name]]


def coverage(res: ExploreResult) -> dict:
    """What the exhaustive search found reachable: action kinds, error codes, witnesses and protocol branches.

    Branches are the ghost's protocol events (an ISR shrink, an ISR expansion, a truncation, an unclean
    election, a crash that lost data, an acknowledged write, a consumed record) that some state reaches.
    """
    branches = set()
    for s in (res.states or ()):
        g = s.ghost
        for name, on in (("isr_shrink", g.isr_shrinks), ("isr_expand", g.isr_expands),
                         ("truncation", g.truncations), ("unclean_election", g.unclean_elections),
                         ("lossy_crash", g.lossy_crashes), ("acked", len(g.acked)), ("consumed", len(g.consumed)),
                         ("session_expiry", g.session_expirations), ("crash", g.crashes)):
            if on:
                branches.add(name)
    return {"action_kinds": sorted(res.kinds), "errors": _bits_to_errors(res.errors_seen),
            "witnesses": sorted(res.witnesses), "branches": sorted(branches)}


def coverage_fraction(reachable: dict, kinds=(), errors_bits: int = 0, witnesses=()) -> dict:
    """A random engine's coverage as a fraction of the reachable set: {"action_kinds": (hit, reachable), ...}."""
    out = {}
    for name, got in (("action_kinds", set(kinds)), ("errors", set(_bits_to_errors(errors_bits))),
                      ("witnesses", set(witnesses))):
        reach = set(reachable[name])
        out[name] = (len(got & reach), len(reach))
    return out


# =========================================================================== liveness
FAIR_KINDS = frozenset({
    A.ElectController, A.ControllerProcessBrokerChange, A.ControllerProcessIsrChangeNotification,
    A.ControllerResign, A.DeliverControlRequest, A.FetchRequest, A.FetchResponse, A.OffsetsForLeaderEpoch,
    A.OffsetsForLeaderEpochRequest, A.OffsetsForLeaderEpochResponse, A.AlterIsrRequest, A.AlterIsrReceived,
    A.AlterIsrResponse, A.IsrExpiration, A.IsrChangePropagation, A.HighWatermarkCheckpoint, A.DelayedProduceExpire, A.ZkReconnect,
    A.MetadataApply, A.BrokerHeartbeat, A.FenceStaleBroker,
    A.ControlledShutdownRequest, A.ControlledShutdownResponse, A.ControllerProcessPreferredReplicaElection,
    A.AutoLeaderRebalance,
    A.Tick, A.ControllerProcessTopicDeletion, A.ControllerProcessTopicChange, A.ControllerProcessStopReplicaResponse,
    A.DelayedFetchExpire, A.ControllerProcessPartitionReassignment, A.ControllerProcessReassignmentIsrChange,
    A.PrepareIsrExpand, A.AssignReplicasToDirs,
})


def _is_fair(s, a) -> bool:
    """Whether a, taken from s, is a fair action: a system action, or ZooKeeper expiring a dead broker's session."""
    t = type(a)
    return t in FAIR_KINDS or (t is A.ZkSessionExpire and not s.brokers[a.broker].alive)


def _fair_class(a):
    return "Tick" if type(a) is A.Tick else a


def _fair_enabled(cfg: ModelConfig, s, eager_tasks: bool, without) -> set:
    """The fair classes enabled in s, counting an ElectController blocked only by the controller-epoch budget."""
    # enabledness in the model itself: the eager-task reduction hides actions in states where a task is due,
    # which must not make them look intermittently disabled
    out = {_fair_class(a) for a in explorer_actions(cfg, s, False, without) if _is_fair(s, a)}
    zk = s.zk
    if zk.controller == -1 and zk.controller_epoch >= cfg.max_controller_epoch:
        hosts = {c.broker_id for c in s.controllers}
        for br in s.brokers:
            if br.alive and zk.sessions[br.broker_id] and br.broker_id not in hosts:
                out.add(A.ElectController(br.broker_id))
    return out


#: name -> (reference id, statement, predicate(cfg, s, p) for "C and not G"): the catalogue's EVENTUALLY
#: properties (properties.invariants.LIVENESS), in the form the SCC check takes.
LIVENESS = {lv.name: (lv.reference, lv.statement, lv.pending) for lv in LIVENESS_CATALOGUE}


@dataclass
class Lasso:
    """A fair cycle staying in "C and not G": the prefix reaches the cycle's first state, the cycle returns to a
    state with the same key (same state up to the relative clock's shift)."""

    prop: str
    partition: int
    prefix: list
    cycle: list
    component_size: int

    def to_json(self) -> dict:
        return {"property": self.prop, "partition": self.partition, "component_size": self.component_size,
                "prefix": [A.action_to_json(a) for a in self.prefix],
                "cycle": [A.action_to_json(a) for a in self.cycle]}


def check_liveness(res: ExploreResult, names=tuple(LIVENESS)) -> dict:
    """For each liveness property: None if no fair cycle violates it within the bounds, else a Lasso."""
    import networkx as nx

    if res.states is None:
        raise ExplorerError("liveness needs the state graph (explore with keep_graph=True)")
    if res.max_time_ms is not None:
        raise ExplorerError("liveness needs time to diverge: explore without a time bound (--max-time)")
    cfg = res.config
    g = res.graph()
    # per state: fair classes enabled, and those taken only by transitions that left the bounds
    pruned_from: dict = {}
    for u, v, a in res.edges:
        if v < 0 and _is_fair(res.states[u], a):
            pruned_from.setdefault(u, set()).add(_fair_class(a))
    out = {}
    for name in names:
        _ref, _stmt, bad = LIVENESS[name]
        result = None
        for p in range(cfg.n_partitions):
            nodes = [i for i, s in enumerate(res.states) if bad(cfg, s, p)]
            sub = g.subgraph(nodes)
            comps = [sorted(c) for c in nx.strongly_connected_components(sub)]
            comps.sort(key=lambda c: (min(res.depths[x] for x in c), c[0]))
            for comp in comps:
                if len(comp) == 1 and not sub.has_edge(comp[0], comp[0]):
                    continue
                lasso = _fair_lasso(res, g, sub, comp, pruned_from, name, p)
                if lasso is not None:
                    result = lasso
                    break
            if result is not None:
                break
        out[name] = result
    return out


def _fair_lasso(res, g, sub, comp, pruned_from, name, p):
    import networkx as nx

    cfg = res.config
    members = set(comp)
    wo = frozenset(A.ACTION_BY_NAME[w] for w in res.without)
    enabled = {i: _fair_enabled(cfg, res.states[i], res.eager_tasks, wo) | pruned_from.get(i, set()) for i in comp}
    taken: dict = {}   # fair class -> first edge (u, v, action) inside the component taking it
    for u in comp:
        for v in sorted(sub.successors(u)):
            if v not in members:
                continue
            for a in g.edges[u, v]["actions"]:
                if _is_fair(res.states[u], a):
                    taken.setdefault(_fair_class(a), (u, v, a))
    classes = set().union(*enabled.values())
    always = [c for c in classes if all(c in enabled[i] for i in comp)]
    for c in always:   # weak fairness: continuously enabled, so it must be taken inside the component
        if c not in taken:
            return None
    entry = min(comp, key=lambda i: (res.depths[i], i))
    waypoints = []   # ("edge", (u, v, a)) or ("state", i): what the cycle must pass through
    for c in sorted(classes, key=_class_order):
        if c in taken:
            waypoints.append(("edge", taken[c]))
        else:
            off = min(i for i in comp if c not in enabled[i])
            waypoints.append(("state", off))
    cyc_actions = []
    cur = entry
    inner = sub.subgraph(comp)

    def walk_to(x):
        nonlocal cur
        path = nx.shortest_path(inner, cur, x)
        for u, v in zip(path, path[1:]):
            cyc_actions.append(g.edges[u, v]["actions"][0])
        cur = x

    for kind, w in waypoints:
        if kind == "edge":
            u, v, a = w
            walk_to(u)
            cyc_actions.append(a)
            cur = v
        else:
            walk_to(w)
    walk_to(entry)
    if not cyc_actions:  # a self-loop component with nothing fair enabled
        cyc_actions.append(g.edges[entry, entry]["actions"][0])
    return Lasso(name, p, res.trace_to(entry), cyc_actions, len(comp))


def _class_order(c):
    if c == "Tick":
        return (len(A.ACTION_TYPES), ())
    return (A.ACTION_TYPES.index(type(c)), tuple(A.action_to_json(c).values())[1:])


def state_fingerprint(res: ExploreResult, i: int) -> str:
    """The stable fingerprint (encode.fingerprint) of state i, replayed from its BFS trace."""
    s = initial_state(res.config)
    for a in res.trace_to(i):
        s = step(res.config, s, a)
    return fingerprint(s)
