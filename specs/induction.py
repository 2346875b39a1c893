"""The induction matrix, the mutants and bounded model checking for ``hw_isr``'s transition system.

``check_init(inv)``: the initial state satisfies ``inv``.  ``check_step(transition, inv)``: every
state satisfying *all* invariants (lemmas and goals, as mypyvy does) steps to a state satisfying
``inv``; a step property is checked on the pair.  The answer is ``proved``, a counterexample to
induction (CTI: a pre and a post state), or ``unknown``.  Queries first assume only the
quantifier-free invariants; only when that leaves a CTI are the quantified ones (``lag_sound``,
``lag_previous_fetch``) added, so a CTI is always relative to the full set.

``bmc(mutant, target, k_max)`` unrolls the model-realizable relation (``bmc=True``) from the
initial state and returns the smallest k with a reachable violation and the trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import z3

from . import hw_isr as H
from .core import new_solver

CTI = "CTI"
PROVED = "proved"
UNKNOWN = "unknown"
QUANTIFIED = frozenset({"lag_sound", "lag_previous_fetch"})

#: the parameters the BMC runs with (the kafka-2.4 preset: L = 10000, no jitter)
BMC_LAG, BMC_JITTER = 10000, 0


@dataclass
class StepResult:
    transition: str
    invariant: str
    result: str
    pre: dict = field(default_factory=dict)
    post: dict = field(default_factory=dict)
    label: str = ""


def state_values(model, s: H.St) -> dict:
    """Decode a state of a z3 model into plain values (the ghost array as the value at a few offsets)."""
    out = {}
    for key, term in s.v.items():
        if key == "at":
            continue
        v = model.eval(term, model_completion=True)
        out[key] = z3.is_true(v) if z3.is_bool(v) else v.as_long()
    return out


def _hyps(p, s, include_quantified: bool):
    return [fn(p, s) for n, fn, _g in H.INVARIANTS if include_quantified or n not in QUANTIFIED]


def check_init(name: str) -> StepResult:
    p, s = H.Params(), H.St("i")
    fn, _ = H.INV_BY_NAME[name]
    solver = new_solver()
    solver.add(*p.kafka(), *H.initial(p, s), z3.Not(fn(p, s)))
    r = solver.check()
    if r == z3.unsat:
        return StepResult("init", name, PROVED)
    if r == z3.sat:
        return StepResult("init", name, CTI, post=state_values(solver.model(), s))
    return StepResult("init", name, UNKNOWN)


def check_step(transition: str, name: str, mutant: str | None = None, leader0: bool = False) -> StepResult:
    """Is ``name`` (an invariant or a step property) preserved by ``transition`` (under ``mutant``)?"""
    p, s, t = H.Params(), H.St("pre"), H.St("post")
    if name in H.STEP_BY_NAME:
        goal = H.STEP_BY_NAME[name](p, s, t)
        quantified_goal = False
    else:
        goal = H.INV_BY_NAME[name][0](p, t)
        quantified_goal = name in QUANTIFIED
    result = None
    for include_quantified in ((True,) if quantified_goal else (False, True)):
        for lab, st in H.instances(transition, p, s, mutant):
            solver = new_solver()
            solver.add(*p.kafka(), *_hyps(p, s, include_quantified), st.relation(t), z3.Not(goal))
            if leader0:
                solver.add(s.l == 0, s.epoch == 0)
            r = solver.check()
            if r == z3.sat:
                m = solver.model()
                result = StepResult(transition, name, CTI, state_values(m, s), state_values(m, t), lab)
                result.pre.update(L=m.eval(p.L).as_long(), P=m.eval(p.P).as_long(), J=m.eval(p.J).as_long())
                break
            if r != z3.unsat:
                result = StepResult(transition, name, UNKNOWN, label=lab)
                break
        else:
            return StepResult(transition, name, PROVED)
        if result.result == UNKNOWN:
            return result
    return result


@dataclass
class BmcResult:
    k: int | None                     # smallest depth with a reachable violation, None if none up to k_max
    trace: list = field(default_factory=list)    # [(transition label, state values)], state 0 first
    params: dict = field(default_factory=dict)
    unknown: bool = False


def _violation(p, states, target):
    if target in H.STEP_BY_NAME:
        if len(states) < 2:
            return z3.BoolVal(False)
        return z3.Not(H.STEP_BY_NAME[target](p, states[-2], states[-1]))
    return z3.Not(H.INV_BY_NAME[target][0](p, states[-1]))


def bmc(target: str | None, mutant: str | None, k_max: int = 12, leader_change: str | None = None,
        goal=None) -> BmcResult:
    """Smallest k <= k_max such that a run of k model-realizable transitions from the initial state violates
    ``target`` in its last state (or last step); without ``leader_change`` the leader stays broker 0
    (the relation ``crosscheck.replay_bmc`` maps one-to-one onto model actions); ``leader_change`` "session"
    adds the model controller's election after the leader's session expires (replayed too), "general" any
    clean election.  ``goal(p, states)``, if given, is the condition to reach instead of a violation."""
    p = H.Params()
    states = [H.St("s0")]
    solver = new_solver()
    # constants, not L / 2: cheaper for the solver
    solver.add(p.L == BMC_LAG, p.P == BMC_LAG // 2, p.J == BMC_JITTER, *H.initial(p, states[0]))
    choices = []   # per step: [(label, selector Bool)]
    for k in range(0, k_max + 1):
        if k > 0:
            s, t = states[-1], H.St(f"s{k}")
            step_choices = []
            disj = []
            for name, (_b, _pf, in_bmc) in H.TRANSITIONS.items():
                if not in_bmc or (name == "LeaderChange" and not leader_change):
                    continue
                realizable = not (name == "LeaderChange" and leader_change == "general")
                for lab, st in H.instances(name, p, s, mutant, bmc=realizable):
                    sel = z3.Bool(f"sel_{k}_{lab}")
                    step_choices.append((lab, sel))
                    disj.append(z3.And(sel, st.relation(t)))
            solver.add(z3.Or(disj))
            states.append(t)
            choices.append(step_choices)
        r = solver.check(goal(p, states) if goal is not None else _violation(p, states, target))
        if r == z3.sat:
            m = solver.model()
            trace = [("init", state_values(m, states[0]))]
            for i, step_choices in enumerate(choices, 1):
                lab = next(lab for lab, sel in step_choices if z3.is_true(m.eval(sel, model_completion=True)))
                trace.append((lab, state_values(m, states[i])))
            params = {"L": m.eval(p.L).as_long(), "P": m.eval(p.P).as_long(), "J": m.eval(p.J).as_long()}
            return BmcResult(k, trace, params)
        if r != z3.unsat:
            return BmcResult(None, unknown=True, params={"reason": solver.reason_unknown(), "k": k})
    return BmcResult(None)
