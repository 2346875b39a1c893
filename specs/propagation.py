"""The ISR change propagation bound: how late can the isr_change_notification znode be written?

Kafka: ``ReplicaManager.maybePropagateIsrChanges`` (2.4.0) runs every 2500 ms and writes one
notification when changes are pending and ``lastIsrChangeMs + 5000 < now || lastIsrPropagationMs +
60000 < now`` (both strict); the model (``model/replica_manager.maybe_propagate_isr_changes``)
has the same comparisons, with runs due at ``start_time_ms + k*2500`` (each up to
``scheduler_jitter_ms`` late, next due 2500 after the previous due time).

Encoding: ``t0`` the first change not yet propagated (``lp <= t0``: the last propagation came
before it), ``lcp`` / ``lc`` the last change at the previous run ``rqp`` / at the propagating run
``rq`` (due ``q``, ``q - 2500``).  The propagating run is the first after t0 that finds the
condition true, so the run before it either came before t0 or found it false.
"""

from __future__ import annotations

import z3

from ..model.config import ModelConfig
from .core import PROVED, WITNESS, Claim, Timer, check_valid, find_witness
from .drive import Driver, ReplayError

INTERVAL, BLACKOUT, MAX_DELAY = 2500, 5000, 60000   # ReplicaManager (Kafka 2.4.0) lines 149-150, 328
T0 = ModelConfig().start_time_ms


class PropVars:
    def __init__(self):
        self.J, self.t0, self.lc, self.lcp, self.lp, self.q, self.rq, self.rqp = z3.Ints("J t0 lc lcp lp q rq rqp")

    def named(self) -> dict:
        return {n: getattr(self, n) for n in ("J", "t0", "lc", "lcp", "lp", "q", "rq", "rqp")}


def should_propagate(v: PropVars, now, last_change):
    """ReplicaManager.maybePropagateIsrChanges (Kafka 2.4.0): pending and (5 s quiet or 60 s since the last)."""
    return z3.And(now >= v.t0, z3.Or(last_change + BLACKOUT < now, v.lp + MAX_DELAY < now))


def first_propagation(v: PropVars):
    """The run at rq propagates t0's change and the run before it did not (or came before t0)."""
    return [v.J >= 0, v.q <= v.rq, v.rq <= v.q + v.J,
            v.q - INTERVAL <= v.rqp, v.rqp <= v.q - INTERVAL + v.J, v.rqp <= v.rq,
            v.lp <= v.t0, v.t0 <= v.lcp, v.lcp <= v.lc, v.lcp <= z3.If(v.rqp >= v.t0, v.rqp, v.t0), v.lc <= v.rq,
            z3.Or(v.rqp < v.t0, z3.Not(should_propagate(v, v.rqp, v.lcp))),
            should_propagate(v, v.rq, v.lc)]


def quiet(v: PropVars):
    """No change after t0."""
    return [v.lc == v.t0, v.lcp == v.t0]


def _claim(name, statement, expected, bound, run) -> Claim:
    claim = Claim(name, "propagation", statement, expected, bound=bound)
    with Timer() as t:
        claim.result, claim.facts = run()
        if claim.result == WITNESS:
            claim.crosscheck = crosscheck_witness(claim.facts, name.endswith("max_delay_reached"))
    claim.seconds = t.seconds
    return claim


def propagation_claims() -> list[Claim]:
    out = []
    for jitter in (0, None):
        v = PropVars()
        j = [v.J == 0] if jitter == 0 else []
        lab = "J=0" if jitter == 0 else "J"
        base = first_propagation(v) + j
        out.append(_claim(f"propagation.quiet_bound[{lab}]", "a change followed by no other change is propagated "
                          "within 5000 + 2500 (+ J) ms", PROVED, "rq - t0 <= 7500 + J",
                          lambda: check_valid(base + quiet(v), v.rq - v.t0 <= BLACKOUT + INTERVAL + v.J, v.named())))
        out.append(_claim(f"propagation.max_delay_bound[{lab}]", "under any changes, a change is propagated within "
                          "60000 + 2500 (+ J) ms", PROVED, "rq - t0 <= 62500 + J",
                          lambda: check_valid(base, v.rq - v.t0 <= MAX_DELAY + INTERVAL + v.J, v.named())))
    v = PropVars()
    base = first_propagation(v) + [v.J == 0]
    out.append(_claim("propagation.quiet_reached", "the quiet bound is reached: 7500 ms", WITNESS, "rq - t0 = 7500",
                      lambda: find_witness(base + quiet(v) + [v.rq - v.t0 == BLACKOUT + INTERVAL], v.named())))
    v = PropVars()
    base = first_propagation(v) + [v.J == 0]
    out.append(_claim("propagation.max_delay_reached", "under changes arriving continually (never 5 s quiet) the "
                      "max-delay bound is reached: 62500 ms", WITNESS, "rq - t0 = 62500",
                      lambda: find_witness(base + [v.rq - v.lc <= BLACKOUT, v.rq - v.t0 == MAX_DELAY + INTERVAL],
                                           v.named())))
    return out


# ---------------------------------------------------------------------------- the model
def run_quiet(phase: int) -> tuple[int, int]:
    """Nobody fetches: broker 0's first isr-expiration run after t0 + 10000 shrinks the ISR to (0) (one change);
    (change time, propagation time) in the model."""
    cfg = ModelConfig(isr_expiration_phase_ms=(phase,) * 3)
    d = Driver(cfg)
    d.do(*Driver(cfg).up().actions)
    while not d.propagations:
        d.run_due()
        d.advance_to(d.next_event_time())
    return d.isr_changes[0], d.propagations[0]


def run_continual() -> tuple[int, int, int]:
    """replica.lag.time.max.ms = 2000: broker 2 is removed, the removal is propagated at lp, and at lp broker 2
    rejoins; from then on broker 2 falls behind, is removed and rejoins every <= 3000 ms.
    Returns (lp, t0, time of the next propagation)."""
    from ..model import actions as A

    cfg = ModelConfig(replica_lag_time_max_ms=2000, max_records=64)
    d = Driver(cfg)
    d.up().fetch(1).run_due()
    while not d.propagations:                  # broker 2 (never fetched) is removed, then that is propagated
        d.advance_to(d.next_event_time())
        d.run_due()
    lp = d.propagations[0]
    d.fetch(2)                                  # rejoins at lp, right after the propagation: t0 = lp
    t0 = d.isr_changes[-1]
    produce = (A.Produce(0, 0, 1), A.FetchRequest(1, 0), A.FetchResponse(1, 0), A.FetchRequest(1, 0),
               A.FetchResponse(1, 0))
    d.do(*produce)
    while len(d.propagations) < 2:
        removed = len(d.removals)
        d.run_due()
        if len(d.removals) > removed:           # broker 2 fell out: it catches up and rejoins at once
            d.fetch(2, 2).do(*produce)
            continue
        d.advance_to(d.next_event_time())
    return lp, t0, d.propagations[1]


def crosscheck_witness(w: dict, max_delay: bool) -> str:
    """Replay the structure of the z3 witness in the model and compare the propagation delay."""
    try:
        if max_delay:
            if w["t0"] != w["lp"]:
                return f"ENCODING BUG: the witness has t0 - lp = {w['t0'] - w['lp']}, the replay assumes 0"
            lp, t0, at = run_continual()
        else:
            t0, at = run_quiet(0)
    except ReplayError as e:
        return f"ENCODING BUG: not a model trace ({e})"
    want = w["rq"] - w["t0"]
    if at - t0 != want:
        return f"ENCODING BUG: z3 says propagation {want} ms after the change, the model {at - t0} ms"
    return f"model agrees: propagated {at - t0} ms after the change"


def sweep() -> Claim:
    """Shrinks at every offset to the 2500 ms grid: the model propagates at the first run after t + 5000."""
    claim = Claim("propagation.model_sweep", "propagation", "the model over a sweep of change times (isr-expiration "
                  "phases) propagates at the first run strictly after change + 5000 and within 7500 ms", "agrees")
    bad, worst = [], 0
    with Timer() as t:
        for phase in (0, 1, 499, 1250, 2499, 2500, 2501, 3750, 4999):
            change, at = run_quiet(phase)
            expected = T0 + ((change + BLACKOUT - T0) // INTERVAL + 1) * INTERVAL
            worst = max(worst, at - change)
            if at != expected or at - change > BLACKOUT + INTERVAL:
                bad.append({"phase": phase, "delay": at - change, "expected": expected - change})
    claim.seconds = t.seconds
    claim.result = "agrees" if not bad and worst == BLACKOUT + INTERVAL else "disagrees"
    claim.facts = {"worst_delay": worst, "mismatches": bad}
    claim.bound = f"worst delay {worst} ms (bound 7500)"
    return claim
