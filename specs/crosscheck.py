"""Replaying z3's BMC traces of ``hw_isr`` in the executable model, under the same mutant.

Correspondence (leader-stable traces, leader = broker 0, kafka-2.4 preset with L = 10000, J = 0 and
every broker's isr-expiration phase = the trace's initial ``nexp - start_time_ms``):

=================  =====================================================================
abstract step      model actions
=================  =====================================================================
initial state      ElectController(2), every control request delivered, OffsetsForLeaderEpoch(1), (2)
Produce            Produce(0, 0, acks=1)
FetchRequest(f)    FetchRequest(f, 0)
FetchResponse(f)   FetchResponse(f, 0)
IsrExpiration      IsrExpiration(0)
Tick(d)            Tick actions adding up to d; every other scheduled task (followers' isr-expiration,
                   isr-change-propagation, HW checkpoint) runs when due on the way: none of them
                   changes the abstract state
=================  =====================================================================

After every step the abstract state is compared with the model's: the leader's ISR, each replica's
LEO and HW, the leader's Replica fields (logEndOffset, lastCaughtUpTimeMs,
lastFetchLeaderLogEndOffset, lastFetchTimeMs), the clock, the next isr-expiration due time and the
common-prefix lengths of the logs.  A difference is an encoding bug.  At the end the executable
invariant that corresponds to the violated claim (``CHECKED_BY``) must fail on the model too.
"""

from __future__ import annotations

import os

from ..model import actions as A
from ..model.config import ModelConfig
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


def observe(s, leader: int = 0) -> dict:
    """The abstract state's fields read off a model state (leader = broker 0)."""
    out = {"now": s.now, "nexp": s.brokers[leader].next_isr_expiration_ms}
    part = s.brokers[leader].partitions[0]
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
    for i, j in ((0, 1), (0, 2), (1, 2)):
        out[f"ag{i}{j}"] = _lcp(logs[i], logs[j])
    return out


def _differences(abstract: dict, model: dict) -> dict:
    return {k: (abstract[k], v) for k, v in model.items() if k in abstract and abstract[k] != v}


def _action_for(label: str):
    if label == "Produce":
        return [A.Produce(0, 0, 1)]
    if label == "IsrExpiration":
        return [A.IsrExpiration(0)]
    name, _, arg = label.partition("(")
    f = int(arg.rstrip(")")) if arg else None
    if name == "FetchRequest":
        return [A.FetchRequest(f, 0)]
    if name == "FetchResponse":
        return [A.FetchResponse(f, 0)]
    raise ReplayError(f"{label} has no model counterpart in a leader-stable trace")


def replay_bmc(trace: list, mutant: str | None, target: str) -> str:
    """Replay a leader-stable BMC trace in the model (under ``mutant``); a verdict sentence."""
    if any(lab == "LeaderChange" or lab.startswith("FollowerTruncate") for lab, _ in trace):
        return "not replayed: the trace changes the leader (controller actions are not mapped)"
    init = trace[0][1]
    base = ModelConfig()
    phase = init["nexp"] - base.start_time_ms
    cfg = base.replace(replica_lag_time_max_ms=BMC_LAG, scheduler_jitter_ms=BMC_JITTER,
                       isr_expiration_phase_ms=(phase,) * 3)
    with installed(mutant, cfg) as cfg:
        d = Driver(cfg)
        d.manual.add(0)
        try:
            d.up()
            diff = _differences(init, observe(d.s))
            if diff:
                return f"ENCODING BUG: initial states differ {diff}"
            pre = d.s
            for i, (label, values) in enumerate(trace[1:], 1):
                pre = d.s
                if label == "Tick":
                    d.advance_to(values["now"])
                else:
                    d.run_due()
                    d.do(*_action_for(label))
                diff = _differences(values, observe(d.s))
                if diff:
                    return f"ENCODING BUG: after step {i} ({label}) abstract vs model differ: {diff}"
        except ReplayError as e:
            return f"ENCODING BUG: {e}"
        inv = CHECKED_BY.get(target)
        if inv is None:
            return f"model agrees: {len(d.actions)} model actions reproduce every state of the trace"
        vs = check_transition(cfg, pre, d.actions[-1], d.s, len(d.actions), (BY_NAME[inv],))
        if not vs:
            return f"ENCODING BUG: the model reproduces the trace but {inv} holds at its end"
        return f"model agrees: {len(d.actions)} model actions, then the executable {inv} fails: {vs[0].facts}"
