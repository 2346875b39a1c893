"""Replaying z3's BMC traces of ``hw_isr`` in the executable model, under the same mutant.

Correspondence (kafka-2.4 preset with L = 10000, J = 0 and every broker's isr-expiration phase = the
trace's initial ``nexp - start_time_ms``; brokers 0-2 are the encoding's replicas, the controller is
broker 2, or broker 3 (hosting no replica) when the trace changes the leader; ``l`` = current leader):

=====================  =================================================================
abstract step          model actions
=====================  =================================================================
initial state          ElectController(c), every control request delivered, OffsetsForLeaderEpoch(1), (2)
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
claim (``CHECKED_BY``) must fail on the model too.
"""

from __future__ import annotations

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
    "committed_durable": None,
}


def _lcp(a, b) -> int:
    n = 0
    for x, y in zip(a.entries, b.entries):
        if x != y:
            break
        n += 1
    return n


def observe(s, leader: int | None = None) -> dict:
    """The abstract state's fields read off a model state (leader: ZooKeeper's leader of the partition)."""
    z = s.zk.partition_states[0]
    if leader is None:
        leader = z.leader
    part = s.brokers[leader].partitions[0]
    out = {"now": s.now, "nexp": s.brokers[leader].next_isr_expiration_ms, "l": leader,
           "estart": part.leader_epoch_start_offset, "epoch": z.leader_epoch}
    logs = [br.logs[0] for br in s.brokers]
    for i in range(3):
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
    for i, j in ((0, 1), (0, 2), (1, 2)):
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


def replay_bmc(trace: list, mutant: str | None, target: str | None) -> str:
    """Replay a BMC trace in the model (under ``mutant``); a verdict sentence.

    A trace with a ``LeaderChange`` runs on four brokers with the controller on broker 3, which hosts no
    replica, so the leader's session expiry never moves the controller (the encoding's three replicas are
    brokers 0-2).  After a leader change every follower whose log is a prefix of the new leader's finishes
    its OffsetsForLeaderEpoch round at once (it changes nothing the abstraction sees); a diverged one stays
    Truncating until the trace's ``FollowerTruncate``.
    """
    with_change = any(lab == "LeaderChange" for lab, _ in trace)
    init = trace[0][1]
    base = ModelConfig()
    phase = init["nexp"] - base.start_time_ms
    n = 4 if with_change else 3
    controller = 3 if with_change else 2
    cfg = base.replace(n_brokers=n, replica_lag_time_max_ms=BMC_LAG, scheduler_jitter_ms=BMC_JITTER,
                       isr_expiration_phase_ms=(phase,) * n, max_session_expirations=len(trace))
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
            for i, (label, values) in enumerate(trace[1:], 1):
                pre = d.s
                if label == "Tick":
                    d.advance_to(values["now"])
                elif label == "LeaderChange":
                    d.run_due()
                    leader = change_leader(d, leader, controller)
                    for f in range(3):
                        if f != leader and values[f"leo{f}"] == values[f"ag{min(f, leader)}{max(f, leader)}"]:
                            finish_truncation(d, f)
                elif label.startswith("FollowerTruncate"):
                    d.run_due()
                    finish_truncation(d, int(label.partition("(")[2].rstrip(")")))
                else:
                    d.run_due()
                    d.do(*_action_for(label, leader))
                diff = differences(values, observe(d.s))
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
        return f"model agrees: {len(d.actions)} model actions, then the executable {inv} fails: {vs[0].facts}"
