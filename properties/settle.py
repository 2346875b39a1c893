"""The settling phase: after a run's faults, run the cluster fairly with no new faults, then check liveness.

A random run ends anywhere: in the middle of an election, with a follower truncating, an AlterIsr in
flight.  The catalogue's EVENTUALLY properties (``invariants.LIVENESS``: "whenever C holds, G eventually
holds") say where such a cluster must get to on its own.  ``settle(cfg, s)`` lets it: from ``s`` it takes
only the system's own actions (``explore.FAIR_KINDS``: the controller's events and deliveries, fetches,
truncation rounds, AlterIsr requests and answers, the scheduled tasks, ZooKeeper expiring a dead broker's
session and a live one reconnecting, and ``Tick`` to the next deadline), never a crash, a restart, a
session expiry of a live broker, an operator's move, a flush or a client request, so the run's faults
are all there is.  The schedule is deterministic and fair: each step takes, among the enabled system
actions, the one whose class (the action itself; every ``Tick`` is one class) was taken least recently,
ties broken by ``enabled_actions`` order.  So every action that stays enabled is taken within one round
of the others, and time advances once per round, far enough for the next scheduled task to fire.

The cluster has settled when no liveness property is pending ("C and not G" holds for no property and
partition) and no system action but the perpetual ones (``PERPETUAL``: the clock, the scheduled tasks and
fetches) is enabled, and stays so for ``STABLE_ROUNDS`` full rounds (every class enabled at a round's start taken,
or disabled, since): a follower that truncates again and again passes through states where nothing is
pending, and only a round that sees it go back to truncating tells it apart from one that converged.
A cluster that has not settled within ``settle_bound(cfg)`` steps violates each property still pending
at the end (or, for a cluster going round and round, pending in its last two rounds): a liveness violation, whose trace is the run's actions followed by
the settling steps.  If no controller can be elected because the model's controller-epoch budget is
spent (a bound of the model, not of Kafka), the check is inconclusive and reports nothing.

The engine reads the config only to step the model and to size its bound; it knows nothing of presets
or flags: it sees only which actions the model enables and what the state holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import actions as A
from ..model.config import ModelConfig
from ..model.state import FetchState, Partition
from ..model.step import action_kinds, enabled_groups, step
from .explore import FAIR_KINDS
from .invariants import LIVENESS, LIVENESS_BY_NAME, Violation, topic_gone

__all__ = ["Settled", "settle", "settle_bound", "settled_facts", "settle_after_run", "STABLE_ROUNDS", "PERPETUAL"]

#: Full rounds of the fair schedule with nothing pending after which the cluster counts as settled.
STABLE_ROUNDS = 1
#: Kinds a settled cluster keeps taking for ever (the clock, the scheduled tasks, caught-up followers' fetches):
#: while any other system action is enabled (a queued control request, a truncation round, an AlterIsr, a
#: controller event, an expired produce...) the cluster has not settled.
PERPETUAL = frozenset({A.Tick, A.IsrExpiration, A.IsrChangePropagation, A.HighWatermarkCheckpoint, A.FetchRequest,
                       A.FetchResponse, A.BrokerHeartbeat, A.AutoLeaderRebalance})
#: the kinds the schedule may take (ZkSessionExpire only for a dead broker: ZooKeeper's own timeout)
_KINDS = frozenset(FAIR_KINDS | {A.ZkSessionExpire})


def settle_bound(cfg: ModelConfig) -> int:
    """The most steps a settling phase takes: rounds x the largest round.

    A round takes every enabled class once: at most, per broker, a fetch request, response and truncation round
    per partition, four scheduled tasks, an AlterIsr request and answer, a reconnect or session expiry, the
    controller's three events, and its deliveries to every broker; plus one Tick.  Rounds: enough Ticks to
    reach the longest timer a pending thing may wait for (the produce timeout, the ISR propagation's maximum
    delay, twice the replica lag time, the HW checkpoint) at the shortest period a task fires at, plus four per
    broker for the control plane's chains (controller election, broker change, election, LeaderAndIsr,
    truncation, catch-up) and STABLE_ROUNDS.  3 brokers, 1 partition, Kafka 2.4's defaults: 49 x 37 = 1,813 steps; a
    cluster that settles takes far fewer (the loop ends as soon as it has settled).
    """
    nb, np_ = cfg.n_brokers, cfg.n_partitions
    # a metadata log's per-broker system actions (replay, heartbeat, fencing), when the model offers them
    lifecycle = [k for k in (A.MetadataApply, A.BrokerHeartbeat, A.FenceStaleBroker) if k in action_kinds(cfg)]
    round_len = nb * (3 * np_ + 4 + 2 + 1 + 3 + len(lifecycle)) + nb * nb + 1
    horizon = max(cfg.produce_timeout_ms, cfg.isr_change_max_delay_ms, 2 * cfg.replica_lag_time_max_ms,
                  cfg.hw_checkpoint_interval_ms, cfg.broker_session_timeout_ms if lifecycle else 0)
    period = max(1, min(cfg.isr_expiration_period_ms, cfg.isr_propagation_interval_ms,
                        cfg.hw_checkpoint_interval_ms))
    rounds = -(-horizon // period) + 4 * nb + STABLE_ROUNDS
    return round_len * rounds


@dataclass
class Settled:
    """What a settling phase did: its actions, the state it ended in, and the liveness violations (if any)."""

    actions: list
    state: object
    violations: list = field(default_factory=list)
    #: True if the cluster settled (nothing pending for STABLE_ROUNDS rounds) within the bound
    settled: bool = False
    #: True if the check was inconclusive: no controller, and the controller-epoch budget spent
    bounded: bool = False


def _fair_actions(s, groups) -> list:
    """The enabled system actions of ``groups`` (``enabled_groups`` over _KINDS), one Tick (the longest) at most."""
    out = []
    for g in groups:
        t = type(g[0])
        if t is A.Tick:
            out.append(g[0])
        elif t is A.ZkSessionExpire:
            out.extend(a for a in g if not s.brokers[a.broker].alive)
        else:
            out.extend(g)
    return out


def _pending(cfg, s, props) -> list:
    """(property, partition) for every liveness property pending ("C and not G") in s, in the order of ``props``
    then partitions; a partition whose topic is gone is pending nothing (``topic_gone``, asked once per partition)."""
    live = [p for p in range(cfg.n_partitions) if not topic_gone(s, p)]
    return [(lv, p) for lv in props for p in live if lv.pending.unscoped(cfg, s, p)]


def _no_controller_possible(cfg, s) -> bool:
    zk = s.zk
    return zk.controller == -1 and zk.controller_epoch >= cfg.max_controller_epoch


def settled_facts(s, p: int) -> dict:
    """What a person needs to see of partition p after settling: ZooKeeper's leader and ISR, and each live
    broker's LEO, HW, fetch leader and fetch state."""
    st = s.controller_partition_states()[p]
    out = {"partition": p, "now": s.now}
    if st is not None and s.quorum is None:
        out.update(zk_leader=st.leader, zk_leader_epoch=st.leader_epoch, zk_isr=list(st.isr))
    elif st is not None:
        out.update(controller_leader=st.leader, controller_leader_epoch=st.leader_epoch, controller_isr=list(st.isr))
    brokers = []
    for br in s.brokers:
        log = br.logs[p] if br.alive else None
        if log is None:
            continue
        part, fs = br.partitions[p], br.fetchers[p]
        row = {"broker": br.broker_id, "log_end_offset": log.log_end_offset, "high_watermark": log.high_watermark}
        if type(part) is Partition:
            row["leader_epoch"] = part.leader_epoch
            if part.leader == br.broker_id:
                row["isr"] = list(part.isr)
                if part.pending_isr is not None:
                    row["pending_isr"] = {"expand": part.pending_isr.expand,
                                          "replicas": list(part.pending_isr.replicas)}
        if type(fs) is FetchState:
            row["fetching_from"] = fs.leader
            row["fetch_state"] = fs.state
        if br.delayed_produces:
            row["delayed_produces"] = sum(dp.partition == p for dp in br.delayed_produces)
        brokers.append(row)
    out["brokers"] = brokers
    return out


def settle(cfg: ModelConfig, s, start_step: int = 0, names=None, max_steps: int | None = None) -> Settled:
    """Run the fair schedule from s until the cluster settles or ``settle_bound(cfg)`` steps are taken.

    ``names`` restricts the liveness properties checked (default: all of ``invariants.LIVENESS``);
    ``start_step`` is the number of actions before s, so that a violation's ``step`` is its last settling
    step in the whole trace.  Deterministic: the same (cfg, s) always gives the same steps.
    """
    props = LIVENESS if names is None else tuple(LIVENESS_BY_NAME[n] for n in names)
    bound = settle_bound(cfg) if max_steps is None else max_steps
    last: dict = {}          # class -> settling step that last took it
    actions: list = []
    pending = _pending(cfg, s, props)
    seen = {x: 0 for x in pending}   # (property, partition) -> the last settling step it was pending at
    round_left = None        # classes still to take in the current stable round (None: something is pending)
    stable = 0
    cands = None
    for i in range(bound):
        cands = _fair_actions(s, enabled_groups(cfg, s, _KINDS))
        if not cands:
            break
        if pending or any(type(a) not in PERPETUAL for a in cands):
            round_left, stable = None, 0
        else:
            keys = {("Tick" if type(a) is A.Tick else a) for a in cands}
            round_left = keys if round_left is None else round_left & keys
            if not round_left:
                stable += 1
                if stable >= STABLE_ROUNDS:
                    return Settled(actions, s, settled=True)
                round_left = keys
        a = min(cands, key=lambda x: last.get("Tick" if type(x) is A.Tick else x, -1))
        k = "Tick" if type(a) is A.Tick else a
        s = step(cfg, s, a)
        actions.append(a)
        last[k] = i
        if round_left is not None:
            round_left.discard(k)
        pending = _pending(cfg, s, props)
        for x in pending:
            seen[x] = i + 1
    if not pending and not cands:
        return Settled(actions, s, settled=True)   # nothing left to do and nothing pending
    if _no_controller_possible(cfg, s):
        return Settled(actions, s, bounded=True)
    n = start_step + len(actions)
    # what is pending at the end; else, for a cluster that goes round and round, what was pending in its last two
    # rounds (a round: one turn of each class enabled at the end)
    window = 2 * len({("Tick" if type(a) is A.Tick else a) for a in cands or ()})
    recent = [x for x, at in seen.items() if at >= len(actions) - window]
    found, named = [], set()
    for lv, p in (pending or recent):
        if lv.name in named:
            continue
        named.add(lv.name)
        facts = dict(settled_facts(s, p), property=lv.reference, settle_from=start_step, settle_steps=len(actions),
                     pending_at_end=(lv, p) in pending)
        found.append(Violation(lv.name, n, facts))
    return Settled(actions, s, found)


def settle_after_run(cfg: ModelConfig, s, trace: list, names=None) -> list:
    """The liveness violations of a run that ended in s after the actions ``trace``: settles s, and if the cluster
    does not settle, appends the settling steps to ``trace`` (so each violation's ``step`` is its length) and
    returns the violations; else returns [] and leaves ``trace`` as it is."""
    r = settle(cfg, s, len(trace), names)
    if r.violations:
        trace.extend(r.actions)
    return r.violations


def liveness_check(name: str):
    """A final-state check for the shrinker: ``check(cfg, s)`` is the facts of ``name``'s violation when the cluster
    does not settle from s, else None."""
    LIVENESS_BY_NAME[name]  # KeyError for an unknown name

    def check(cfg, s):
        r = settle(cfg, s, 0, (name,))
        return r.violations[0].facts if r.violations else None

    check.__name__ = f"settles_{name}"
    return check
