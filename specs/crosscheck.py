"""Replaying z3's BMC traces of ``hw_isr`` in the executable model, under the same mutant.

Correspondence (kafka-2.4 preset with L = 10000, J = 0 and every broker's isr-expiration phase = the
trace's initial ``nexp - start_time_ms``; brokers 0..n-1 are the encoding's n replicas (3, or 4 for the
bit-blasted BMC of ``deep_bmc``), the controller is broker n-1, or broker n (hosting no replica) when the
trace changes the leader; ``l`` = current leader):

=====================  =================================================================
abstract step          model actions
=====================  =================================================================
initial state          ElectController(c), every control request delivered, OffsetsForLeaderEpoch(f) per follower
Produce                Produce(l, 0, acks=1)
FetchRequest(f)        FetchRequest(f, 0)
FetchResponse(f)       FetchResponse(f, 0)
IsrExpiration          IsrExpiration(l) (the leader's task only runs when the trace says so)
Tick(d)                Tick actions adding up to d; every other scheduled task (followers' isr-expiration,
                       isr-change-propagation, HW checkpoint) runs when due on the way: none of them
                       changes the abstract state
LeaderChange           ZkSessionExpire(l), ControllerProcessBrokerChange(c), deliver all,
                       ZkReconnect(l), ControllerProcessBrokerChange(c), deliver all; then
                       OffsetsForLeaderEpoch(f) for each follower whose log is a prefix of the new leader's
FollowerTruncate(f)    OffsetsForLeaderEpoch(f, 0) until the fetcher is Fetching (KIP-279 rounds)
=====================  =================================================================

``IsrExpand`` and ``HwAdvance`` (Kafka runs them only inside a fetch or an append) are not in the BMC
relation.  After every step the abstract state is compared with the model's: the leader, its epoch and
epoch start offset, the ISR, each replica's LEO and HW, the leader's Replica fields (logEndOffset,
lastCaughtUpTimeMs, lastFetchLeaderLogEndOffset, lastFetchTimeMs), in-flight fetch responses (end
offset, HW), the clock, the next isr-expiration due time and the common-prefix lengths of the logs.
A difference is an encoding bug.  At the end the executable invariant that corresponds to the violated
claim (``CHECKED_BY``) must fail on the model too.  ``committed_durable`` speaks of the ghost C (the
largest HW ever exposed), which the model does not keep; its replay reads C off the replayed model states
(the largest HW any replica had at any step) and requires an ISR member of the last state to hold fewer of
the leader's records than that, besides ``isr_entry_condition`` (the KAFKA-7128 entry rule) failing.
"""

from __future__ import annotations

import itertools

from ..model import actions as A
from ..model.config import ModelConfig
from ..model.state import TRUNCATING
from ..properties.invariants import BY_NAME, check_transition
from .drive import Driver, ReplayError
from .induction import BMC_JITTER, BMC_LAG
from .mutants import installed

#: the claim z3 found violated -> the executable invariant of properties/invariants.py that must fail too
CHECKED_BY = {
    "hw_within_isr": "hw_within_isr",
    "committed_prefix": "committed_prefix",
    "shrink_only_out_of_sync": "isr_lag_window",
    "shrink_after_lag": "isr_lag_window",
    "lag_bound": None,            # a time bound: the model state is compared; no executable invariant states it
    "lag_sound": None,            # about ghost append times, which the model does not keep
    "committed_durable": "isr_entry_condition",   # and C read off the replayed states (``_durability_broken``)
}


def _lcp(a, b) -> int:
    n = 0
    for x, y in zip(a.entries, b.entries):
        if x != y:
            break
        n += 1
    return n


def observe(s, leader: int | None = None) -> dict:
    """The abstract state's fields read off a model state (leader: ZooKeeper's leader of the partition); the
    replicas are the partition's assigned replicas, brokers 0..n-1."""
    z = s.zk.partition_states[0]
    n = len(s.zk.assignment[0])
    if leader is None:
        leader = z.leader
    part = s.brokers[leader].partitions[0]
    out = {"now": s.now, "nexp": s.brokers[leader].next_isr_expiration_ms, "l": leader,
           "estart": part.leader_epoch_start_offset, "epoch": z.leader_epoch}
    logs = [br.logs[0] for br in s.brokers]
    for i in range(n):
        out[f"isr{i}"] = i in part.isr
        out[f"leo{i}"] = logs[i].log_end_offset
        out[f"hw{i}"] = logs[i].high_watermark
        r = part.remote(i)
        if r is not None:
            out[f"rleo{i}"] = r.log_end_offset
            out[f"lcu{i}"] = r.last_caught_up_time_ms
            out[f"lfleo{i}"] = r.last_fetch_leader_log_end_offset
            out[f"lft{i}"] = r.last_fetch_time_ms
        if i != leader:
            f = s.brokers[i].fetchers[0]
            resp = None if f is None else f.inflight
            out[f"inflight{i}"] = resp is not None
            if resp is not None:
                out[f"rend{i}"] = resp.fetch_offset + len(resp.entries)
                out[f"rhw{i}"] = resp.high_watermark
    for i, j in itertools.combinations(range(n), 2):
        out[f"ag{i}{j}"] = _lcp(logs[i], logs[j])
    return out


def differences(abstract: dict, model: dict) -> dict:
    """{field: (abstract value, model value)} for every field both sides have and disagree on."""
    return {k: (abstract[k], v) for k, v in model.items() if k in abstract and abstract[k] != v}


def _action_for(label: str, leader: int):
    if label == "Produce":
        return [A.Produce(leader, 0, 1)]
    if label == "IsrExpiration":
        return [A.IsrExpiration(leader)]
    name, _, arg = label.partition("(")
    f = int(arg.rstrip(")")) if arg else None
    if name == "FetchRequest":
        return [A.FetchRequest(f, 0)]
    if name == "FetchResponse":
        return [A.FetchResponse(f, 0)]
    raise ReplayError(f"{label} has no model counterpart")


def change_leader(d: Driver, old: int, controller: int) -> int:
    """LeaderChange (bmc relation): the leader's ZooKeeper session expires, the controller's BrokerChange elects
    the first live ISR member in assignment order and drops the old leader from the ISR (K2, K5); the old leader
    reconnects and the controller's startup handling makes it a follower (onBrokerStartup).  Returns the new leader."""
    d.do(A.ZkSessionExpire(old), A.ControllerProcessBrokerChange(controller)).deliver_all()
    d.do(A.ZkReconnect(old), A.ControllerProcessBrokerChange(controller)).deliver_all()
    new = d.s.zk.partition_states[0].leader
    d.manual = {new}
    return new


def finish_truncation(d: Driver, f: int, rounds: int = 4) -> None:
    """AbstractFetcherThread.maybeTruncate (KIP-279): OffsetsForLeaderEpoch rounds until the fetcher is Fetching."""
    for _ in range(rounds):
        if d.s.brokers[f].fetchers[0].state != TRUNCATING:
            return
        d.do(A.OffsetsForLeaderEpoch(f, 0))
    raise ReplayError(f"broker {f} still truncating after {rounds} OffsetsForLeaderEpoch rounds")


def _durability_broken(seen: list, final: dict, n: int) -> str | None:
    """INV committed_durable (I4/I1) on the replayed model states: C is the largest HW any replica had in any; some
    ISR member of the last state must hold fewer of the leader's records than C (a description, else None)."""
    exposed = max(v[f"hw{i}"] for v in seen for i in range(n))
    l = final["l"]
    for f in range(n):
        held = final[f"leo{f}"] if f == l else final[f"ag{min(f, l)}{max(f, l)}"]
        if final[f"isr{f}"] and held < exposed:
            return (f"broker {f} is in the ISR holding {held} of the leader's records, below HW {exposed} "
                    "exposed earlier")
    return None


def replay_bmc(trace: list, mutant: str | None, target: str | None) -> str:
    """Replay a BMC trace in the model (under ``mutant``); a verdict sentence.

    The encoding's n replicas (3, or 4) are brokers 0..n-1 with the controller on broker n-1.  A trace with a
    ``LeaderChange`` runs on n+1 brokers with the controller on broker n, which hosts no replica, so the
    leader's session expiry never moves the controller.  After a leader change every follower whose log is
    a prefix of the new leader's finishes its OffsetsForLeaderEpoch round at once (it changes nothing the
    abstraction sees); a diverged one stays Truncating until the trace's ``FollowerTruncate``.
    """
    with_change = any(lab == "LeaderChange" for lab, _ in trace)
    init = trace[0][1]
    replicas = sum(1 for key in init if key.startswith("leo"))
    base = ModelConfig()
    phase = init["nexp"] - base.start_time_ms
    n = replicas + 1 if with_change else replicas
    controller = replicas if with_change else replicas - 1
    cfg = base.replace(n_brokers=n, replication_factor=replicas, replica_lag_time_max_ms=BMC_LAG,
                       scheduler_jitter_ms=BMC_JITTER, isr_expiration_phase_ms=(phase,) * n,
                       max_session_expirations=len(trace))
    with installed(mutant, cfg) as cfg:
        d = Driver(cfg)
        d.manual.add(0)
        try:
            d.up(controller)
            diff = differences(init, observe(d.s))
            if diff:
                return f"ENCODING BUG: initial states differ {diff}"
            pre = d.s
            leader = 0
            seen = [observe(d.s)]
            for i, (label, values) in enumerate(trace[1:], 1):
                pre = d.s
                if label == "Tick":
                    d.advance_to(values["now"])
                elif label == "LeaderChange":
                    d.run_due()
                    leader = change_leader(d, leader, controller)
                    for f in range(replicas):
                        if f != leader and values[f"leo{f}"] == values[f"ag{min(f, leader)}{max(f, leader)}"]:
                            finish_truncation(d, f)
                elif label.startswith("FollowerTruncate"):
                    d.run_due()
                    finish_truncation(d, int(label.partition("(")[2].rstrip(")")))
                else:
                    d.run_due()
                    d.do(*_action_for(label, leader))
                seen.append(observe(d.s))
                diff = differences(values, seen[-1])
                if diff:
                    return f"ENCODING BUG: after step {i} ({label}) abstract vs model differ: {diff}"
        except ReplayError as e:
            return f"ENCODING BUG: {e}"
        changes = sum(lab == "LeaderChange" for lab, _ in trace)
        inv = CHECKED_BY.get(target)
        if inv is None:
            extra = f", {changes} leader change(s)" if changes else ""
            return f"model agrees: {len(d.actions)} model actions{extra} reproduce every state of the trace"
        vs = check_transition(cfg, pre, d.actions[-1], d.s, len(d.actions), (BY_NAME[inv],))
        if not vs:
            return f"ENCODING BUG: the model reproduces the trace but {inv} holds at its end"
        extra = ""
        if target == "committed_durable":
            lost = _durability_broken(seen, seen[-1], replicas)
            if lost is None:
                return "ENCODING BUG: the model reproduces the trace but every ISR member holds every exposed record"
            extra = f"; {lost}"
        return (f"model agrees: {len(d.actions)} model actions, then the executable {inv} fails: "
                f"{vs[0].facts}{extra}")
