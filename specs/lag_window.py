"""The ISR lag window: when does Kafka 2.4 remove a follower that stopped keeping up?

Kafka: ``ReplicaManager.startup`` schedules ``maybeShrinkIsr`` ("isr-expiration") every
``P = replicaLagTimeMaxMs / 2`` (integer division); ``Partition.getOutOfSyncReplicas`` removes an
ISR follower when ``leaderLEO != follower LEO && now - lastCaughtUpTimeMs > L`` (SH3, strict).
In the model (``model/replica_manager.isr_expiration``) broker b's runs are due at
``start_time_ms + isr_expiration_phase_ms[b] + k*P`` and each may run up to ``scheduler_jitter_ms``
late (``step.tick_limit``); the next run stays due ``P`` after the previous *due* time.

Encoding (one follower, one leader): ``c`` its lastCaughtUpTimeMs (it stops catching up at c),
``b`` the instant from which its LEO differs from the leader's (the leader appends at b; a run at
exactly b sees it iff it is ordered after the append: ``ord``), ``d`` the due time of the run that
removes it and ``r`` its actual time (``d <= r <= d + J``), ``rp`` the previous run
(due ``d - P``).  Because "out of sync at t" only grows with t (c is fixed, b passed), the removing
run is the first run that qualifies exactly when it qualifies and its predecessor does not; any
phase makes any ``d`` a due time, so the phase needs no variable.
"""

from __future__ import annotations

import z3

from ..model.config import ModelConfig
from .core import (COUNTEREXAMPLE, PROVED, WITNESS, Claim, Timer, check_valid, find_witness)
from .drive import Driver, ReplayError
from .mutants import installed

KAFKA_LAGS = (10000, 30000)   # replica.lag.time.max.ms defaults of 2.4 and 2.5+ (KIP-537)


class LagVars:
    """The z3 variables of one removal."""

    def __init__(self):
        self.L, self.P, self.J, self.c, self.b, self.d, self.r, self.rp = z3.Ints("L P J c b d r rp")
        self.ord_r, self.ord_rp = z3.Bools("ord_r ord_rp")

    def named(self) -> dict:
        return {n: getattr(self, n) for n in ("L", "P", "J", "c", "b", "d", "r", "rp", "ord_r", "ord_rp")}


def behind(v: LagVars, t, after):
    """The follower's LEO differs from the leader's at a run at t (at b itself only after the append)."""
    return z3.Or(t > v.b, z3.And(t == v.b, after))


def is_follower_out_of_sync(v: LagVars, t, after, strict: bool = True):
    """Partition.isFollowerOutOfSync (Kafka 2.4.0, SH3): LEO differs and now - lastCaughtUpTimeMs > maxLagMs."""
    lag = t - v.c
    return z3.And(behind(v, t, after), lag > v.L if strict else lag >= v.L)


def schedule(v: LagVars):
    """KafkaScheduler fixed-rate runs (model: next due += P after each run), each up to J late."""
    return [v.P >= 1, v.J >= 0,
            v.d <= v.r, v.r <= v.d + v.J,
            v.d - v.P <= v.rp, v.rp <= v.d - v.P + v.J, v.rp <= v.r,
            z3.Implies(z3.And(v.rp == v.r, v.ord_rp), v.ord_r)]


def removal(v: LagVars, strict: bool = True):
    """The run at r is the first that finds the follower out of sync."""
    return z3.And(is_follower_out_of_sync(v, v.r, v.ord_r, strict),
                  z3.Not(is_follower_out_of_sync(v, v.rp, v.ord_rp, strict)))


def kafka_period(v: LagVars, lag: int | None):
    """ReplicaManager.startup (Kafka 2.4.0): period = replicaLagTimeMaxMs / 2; lag None = symbolic L >= 2."""
    fixed = [v.L >= 2] if lag is None else [v.L == lag]
    return fixed + [v.P == v.L / 2]


def realistic(v: LagVars):
    """Extra constraints on witnesses only, so they replay in the model: caught up before falling behind."""
    return [v.c >= 0, v.b >= v.c, v.L <= 100_000]


def _label(lag):
    return "L" if lag is None else f"L={lag}"


# ---------------------------------------------------------------------------- claims
def _proof(name, statement, hyps, goal, v, bound) -> Claim:
    claim = Claim(name, "lag_window", statement, PROVED, bound=bound)
    with Timer() as t:
        claim.result, claim.facts = check_valid(hyps, goal, v.named())
    claim.seconds = t.seconds
    return claim


def _refutation(name, statement, hyps, goal, v, bound, strict=True) -> Claim:
    """A naive form z3 must refute; the counterexample is replayed in the model."""
    claim = Claim(name, "lag_window", statement, COUNTEREXAMPLE, bound=bound)
    with Timer() as t:
        claim.result, claim.facts = check_valid(hyps + realistic(v), goal, v.named())
        if claim.result == COUNTEREXAMPLE:
            claim.crosscheck = crosscheck_removal(claim.facts, strict)
    claim.seconds = t.seconds
    return claim


def _witness(name, statement, constraints, v, bound, strict=True, fix=()) -> Claim:
    claim = Claim(name, "lag_window", statement, WITNESS, bound=bound)
    with Timer() as t:
        claim.result, claim.facts = find_witness(constraints + realistic(v) + list(fix), v.named())
        if claim.result == WITNESS:
            claim.crosscheck = crosscheck_removal(claim.facts, strict)
    claim.seconds = t.seconds
    return claim


def lag_claims() -> list[Claim]:
    out = []
    for lag in (None,) + KAFKA_LAGS:
        v = LagVars()
        base = schedule(v) + kafka_period(v, lag) + [v.J == 0, removal(v)]
        lab = _label(lag)
        out.append(_proof(f"lag.lower[{lab}]", "a follower is never removed before lastCaughtUpTimeMs + L "
                          "(removal r has r - c > L)", base, v.r - v.c > v.L, v, "r - c > L"))
        out.append(_proof(f"lag.upper[{lab}]", "removed by max(c + L, b) + P (c = lastCaughtUpTimeMs, "
                          "b = when it fell behind)", base, v.r <= z3.If(v.c + v.L >= v.b, v.c + v.L, v.b) + v.P,
                          v, "r <= max(c+L, b) + P"))
        out.append(_proof(f"lag.upper_1.5x[{lab}]", "a follower already behind at c + L is removed by "
                          "c + L + L/2", base + [v.b <= v.c + v.L], v.r - v.c <= v.L + v.P, v,
                          "r - c <= L + L/2"))
        fix = [v.L == 10000] if lag is None else []
        out.append(_witness(f"lag.upper_reached[{lab}]", "the bound is reached: removal at exactly c + L + L/2 "
                            "(the run at c + L does not remove: the test is strict)",
                            base + [v.b <= v.c + v.L, v.r - v.c == v.L + v.P], v, "r - c = L + L/2", fix=fix))
    v = LagVars()
    base = schedule(v) + kafka_period(v, 10000) + [v.J == 0, removal(v)]
    out.append(_refutation("lag.naive_1.5x_from_catch_up", "naive: removed within 1.5 L of lastCaughtUpTimeMs "
                           "(fails when the leader was idle and the follower fell behind later)",
                           base, v.r - v.c <= v.L + v.P, v, "refuted"))
    v = LagVars()
    base = schedule(v) + kafka_period(v, 10000) + [v.J == 0, removal(v)]
    out.append(_refutation("lag.naive_lower_from_falling_behind", "naive: out of sync for at least L before "
                           "removal (r - b >= L) (fails: the lag is measured from lastCaughtUpTimeMs)",
                           base, v.r - v.b >= v.L, v, "refuted"))
    # `>=` instead of `>`
    v = LagVars()
    ge = schedule(v) + kafka_period(v, 10000) + [v.J == 0, removal(v, strict=False)]
    out.append(_refutation("lag.ge.lower_strict_fails", "with `>=`: removal at exactly c + L becomes possible",
                           ge, v.r - v.c > v.L, v, "r - c >= L", strict=False))
    out.append(_proof("lag.ge.upper", "with `>=`: removed by max(c + L - 1, b) + P",
                      ge, v.r <= z3.If(v.c + v.L - 1 >= v.b, v.c + v.L - 1, v.b) + v.P, v, "r <= max(c+L-1, b) + P"))
    out.append(_witness("lag.ge.upper_reached", "with `>=`: removal at c + L + P - 1 is reached",
                        ge + [v.b <= v.c + v.L - 1, v.r - v.c == v.L + v.P - 1], v, "r - c = L + L/2 - 1",
                        strict=False))
    # any period P (not only L/2), with jitter J
    v = LagVars()
    anyp = schedule(v) + [v.L >= 1, removal(v)]
    out.append(_proof("lag.any_period_jitter.upper", "any period P >= 1 and jitter J >= 0: removed by "
                      "max(c + L, b) + P + J", anyp, v.r <= z3.If(v.c + v.L >= v.b, v.c + v.L, v.b) + v.P + v.J,
                      v, "r <= max(c+L, b) + P + J"))
    out.append(_proof("lag.any_period_jitter.lower", "any period and jitter: never removed before c + L",
                      anyp, v.r - v.c > v.L, v, "r - c > L"))
    for lag in KAFKA_LAGS:
        v = LagVars()
        jit = schedule(v) + kafka_period(v, lag) + [removal(v)]
        out.append(_proof(f"lag.jitter.upper[L={lag}]", "with jitter J: a follower behind at c + L is removed "
                          "by c + L + P + J", jit + [v.b <= v.c + v.L], v.r - v.c <= v.L + v.P + v.J, v,
                          "r - c <= L + P + J"))
        out.append(_witness(f"lag.jitter.upper_reached[L={lag}]", "with jitter J = 1000 the bound L + P + J "
                            "is reached", jit + [v.J == 1000, v.b <= v.c + v.L, v.r - v.c == v.L + v.P + v.J], v,
                            "r - c = L + P + J"))
    out.append(one_and_a_half())
    return out


def one_and_a_half() -> Claim:
    """L + L/2 <= 1.5 L for every L >= 2, with equality exactly for even L (Kafka's integer division)."""
    L = z3.Int("L")
    claim = Claim("lag.integer_division", "lag_window", "L + L/2 <= 1.5 L for all L >= 2; equal iff L is even",
                  PROVED, bound="2(L + L/2) <= 3L")
    with Timer() as t:
        goal = z3.And(2 * (L + L / 2) <= 3 * L, (2 * (L + L / 2) == 3 * L) == (L % 2 == 0))
        claim.result, claim.facts = check_valid([L >= 2], goal, {"L": L})
    claim.seconds = t.seconds
    return claim


# ---------------------------------------------------------------------------- the model
T0 = ModelConfig().start_time_ms


def removal_config(lag: int, jitter: int, phase: int, max_records: int = 6) -> ModelConfig:
    return ModelConfig(replica_lag_time_max_ms=lag, scheduler_jitter_ms=jitter,
                       isr_expiration_phase_ms=(phase,) * 3, max_records=max_records)


def run_removal(lag: int, jitter: int, c: int, b: int, holds: dict[int, int] | None = None,
                produce_after_run: bool = True, mutant: str | None = None, phase: int = 0,
                late: bool = False) -> int | None:
    """Replay one removal in the model: followers 1 and 2 caught up (last fetch) at c, the leader appends at b
    (broker 1 keeps up), broker 2 never fetches again; the time broker 2 leaves the ISR, or None.

    ``holds`` maps a due time of broker 0's isr-expiration to the instant it actually runs; ``late`` runs
    broker 0's runs due after c + L at due + jitter (earlier ones on time); ``produce_after_run`` orders a run at exactly b before the append.
    """
    period = lag // 2
    cfg = removal_config(lag, jitter, phase)
    with installed(mutant, cfg) as cfg:
        d = Driver(cfg)
        d.up().fetch(1).fetch(2)
        if late:
            # runs due up to c + L on time, later ones as late as the jitter allows: the worst case
            dues = (T0 + phase + k * period for k in range((max(c, b) + 3 * lag - T0) // period + 4))
            d.hold[0] = {due: due + jitter for due in dues if due > c + lag}
        else:
            d.hold[0] = dict(holds or {})
        d.advance_to(c)
        d.run_due(include_held=False)
        d.fetch(1).fetch(2)
        horizon = max(c + lag, b) + period + jitter + 1
        appended = False
        while not d.removals and d.now <= horizon:
            if d.now == b and not appended:
                d.run_due(include_held=False)
                if not produce_after_run:
                    d.run_held(0)
                d.do(*_produce_and_catch_up())
                appended = True
            d.run_due(include_held=False)
            d.run_held(0)
            d.run_due(include_held=False)
            if d.removals:
                break
            target = d.next_event_time()
            if not appended:
                target = min(target, b)
            d.advance_to(target)
        removed = [t for t, f in d.removals if f == 2]
        return removed[0] if removed else None


def _produce_and_catch_up():
    from ..model import actions as A
    return (A.Produce(0, 0, 1), A.FetchRequest(1, 0), A.FetchResponse(1, 0), A.FetchRequest(1, 0),
            A.FetchResponse(1, 0))


def crosscheck_removal(w: dict, strict: bool = True) -> str:
    """Replay a z3 removal schedule in the model; the model must remove the follower exactly at r."""
    lag, period, jitter = w["L"], w["P"], w["J"]
    if period != lag // 2:
        return "no model counterpart (the model's period is replica.lag.time.max.ms / 2)"
    c = T0 + 3 * lag                       # leave room for the set-up before c
    shift = c - w["c"]
    b, d, r, rp = w["b"] + shift, w["d"] + shift, w["r"] + shift, w["rp"] + shift
    phase = (d - T0) % period
    holds = {d: r, d - period: rp}
    try:
        at_b = w["ord_rp"] if rp == b else w["ord_r"] if r == b else True
        got = run_removal(lag, jitter, c, b, holds, produce_after_run=at_b,
                          mutant=None if strict else "shrink_ge", phase=phase)
    except ReplayError as e:
        return f"ENCODING BUG: the z3 schedule is not a model trace ({e})"
    if got != r:
        return (f"ENCODING BUG: z3 says removal at c+{r - c}, the model removes at "
                f"{'never' if got is None else f'c+{got - c}'}")
    return f"model agrees: removed at c+{r - c}, b = c+{b - c}"


def sweep(lag: int = 10000, jitter: int = 0, phases: int = 8) -> Claim:
    """Run the model over phases and falling-behind times; it must remove exactly at the first due run after
    max(c + L, b) (run late by J when J > 0) and never beyond the proved bound max(c + L, b) + P + J."""
    period = lag // 2
    claim = Claim(f"lag.model_sweep[L={lag},J={jitter}]", "lag_window",
                  "the model over a sweep of phases and catch-up/fall-behind times stays within the proved bounds "
                  "and reaches them", "agrees", bound="max(c+L, b) + P + J")
    worst = 0
    bad = []
    runs = 0
    with Timer() as t:
        for i in range(phases):
            phase = i * period // phases
            c = T0 + 3 * lag + 137 * i
            for db in (0, 1, period, lag - 1, lag, lag + 1, lag + period + 7, 3 * lag):
                b = c + db
                got = run_removal(lag, jitter, c, b, phase=phase, late=jitter > 0)
                runs += 1
                first_due = T0 + phase + ((max(c + lag, b) - T0 - phase) // period + 1) * period
                bound = max(c + lag, b) + period + jitter
                exact = jitter > 0 or got == first_due
                if got is None or not exact or not (got - c > lag and got <= bound):
                    bad.append({"phase": phase, "b_minus_c": db, "removed": None if got is None else got - c,
                                "expected": first_due - c})
                elif db <= lag:
                    worst = max(worst, got - c)
    claim.seconds = t.seconds
    claim.result = "agrees" if not bad else "disagrees"
    claim.facts = {"runs": runs, "worst_removal_minus_c": worst, "mismatches": bad[:5]}
    claim.bound = f"worst r - c = {worst} (L + P + J = {lag + period + jitter})"
    if worst != lag + period + jitter and not bad:
        claim.result = "disagrees"
        claim.facts["note"] = "the sweep never reached the proved bound"
    return claim
