"""Every claim of ``specs/``, run in a fixed order: the rows of ``isrlab prove``."""

from __future__ import annotations

import z3

from . import crosscheck, decode, deep_bmc, hw_isr as H, induction as I, lag_window, min_isr_hw, propagation
from .core import COUNTEREXAMPLE, NO_WITNESS, PROVED, UNKNOWN, WITNESS, Claim, Timer, new_solver

GROUPS = ("lag_window", "propagation", "inductive", "mutants", "leader_change", "min_isr")

#: mutant -> (claim whose CTI it must produce, transitions it changes, BMC target, leader changes in the BMC)
MUTANTS = {
    "expand_below_hw": ("hw_within_isr", ("FetchRequest", "IsrExpand"), "hw_within_isr", None),
    # a reachable violation needs 4 replicas and two elections (DEEP_BMC)
    "expand_no_epoch_start": ("committed_durable", ("FetchRequest", "IsrExpand"), "committed_durable", "session"),
    "hw_ignores_isr": ("hw_within_isr", ("Produce", "FetchRequest", "HwAdvance"), "hw_within_isr", None),
    "hw_max_not_min": ("hw_within_isr", ("Produce", "FetchRequest", "HwAdvance"), "hw_within_isr", None),
    "shrink_no_leo_guard": ("shrink_only_out_of_sync", ("IsrExpiration",), "shrink_only_out_of_sync", None),
    "shrink_ge": ("shrink_after_lag", ("IsrExpiration",), "shrink_after_lag", None),
    "shrink_one_at_a_time": ("lag_next_run", ("IsrExpiration",), "lag_bound", None),
    "caught_up_on_every_fetch": ("lag_sound", ("FetchRequest",), "lag_sound", None),
}
BMC_DEPTH = 10
#: mutant -> replicas, for the mutants whose BMC runs bit-blasted (``deep_bmc``): with 3 replicas the model
#: controller's election leaves the new leader alone in the ISR and M9 raises its HW to its LEO, so no
#: follower can rejoin below an exposed HW; a 4th replica that has not fetched yet keeps the HW frozen, and
#: the shortest such run (10 steps) is beyond the integer BMC
DEEP_BMC = {"expand_no_epoch_start": 4}


def timing_claims() -> list[Claim]:
    return (lag_window.lag_claims()
            + [lag_window.sweep(10000, 0), lag_window.sweep(10000, 1000), lag_window.sweep(30000, 0)])


def propagation_claims() -> list[Claim]:
    return propagation.propagation_claims() + [propagation.sweep()]


def inductive_claims() -> list[Claim]:
    return list(iter_inductive_claims())


def iter_inductive_claims():
    """The inductive claims one at a time, as each is decided (``run`` reports progress between them)."""
    names = [(n, goal) for n, _fn, goal in H.INVARIANTS] + [(n, True) for n, _ in H.STEP_PROPERTIES]
    for name, goal in names:
        kind = "goal" if goal else "lemma"
        claim = Claim(f"inductive.{name}", "inductive", f"{kind} {name} holds initially and is preserved by every "
                      "transition (assuming all invariants)", PROVED)
        with Timer() as t:
            matrix = {}
            if name not in H.STEP_BY_NAME:
                matrix["init"] = I.check_init(name).result
            ctis = {}
            for tr in H.TRANSITIONS:
                r = I.check_step(tr, name)
                matrix[tr] = r.result if r.result != I.CTI else f"CTI ({r.label})"
                if r.result == I.CTI:   # decoded into the model too: a real CTI must fail there as well
                    ctis[r.label] = decode.recheck_cti(r, None)
            bugs = [f"{lab}: {v}" for lab, v in ctis.items() if v.startswith("ENCODING BUG")]
            claim.cti_check = bugs[0] if bugs else "; ".join(f"{lab}: {v}" for lab, v in ctis.items())
        claim.seconds = t.seconds
        failed = {k: v for k, v in matrix.items() if v != I.PROVED}
        claim.result = PROVED if not failed else (UNKNOWN if UNKNOWN in failed.values() else COUNTEREXAMPLE)
        claim.facts = {"matrix": matrix}
        claim.bound = f"{len(matrix) - len(failed)}/{len(matrix)} proved"
        yield claim
    yield transitions_enabled()


def transitions_enabled() -> Claim:
    """Vacuity guard: every transition is enabled in some state satisfying all invariants."""
    import z3
    claim = Claim("inductive.transitions_enabled", "inductive", "every transition is enabled in some state that "
                  "satisfies all invariants (the proofs are not vacuous)", WITNESS)
    with Timer() as t:
        disabled = []
        for tr in H.TRANSITIONS:
            p, s, nxt = H.Params(), H.St("pre"), H.St("post")
            solver = new_solver()
            solver.add(*p.kafka(), *I._hyps(p, s, True), H.relation(tr, p, s, nxt))
            if solver.check() != z3.sat:
                disabled.append(tr)
    claim.seconds = t.seconds
    claim.result = WITNESS if not disabled else UNKNOWN
    claim.bound = f"{len(H.TRANSITIONS) - len(disabled)}/{len(H.TRANSITIONS)} enabled"
    claim.facts = {"disabled": disabled}
    return claim


def mutant_claim(name: str) -> Claim:
    cti_claim, transitions, target, leader_change = MUTANTS[name]
    from .mutants import MODEL_MUTANTS
    claim = Claim(f"mutant.{name}", "mutants", f"mutant caught: {MODEL_MUTANTS[name][2]}", COUNTEREXAMPLE)
    unknown = False
    with Timer() as t:
        ctis = []
        for tr in transitions:
            r = I.check_step(tr, cti_claim, name, leader0=False)
            if r.result == I.CTI:
                ctis.append(r)
            elif r.result == UNKNOWN:
                unknown = True
        found = ctis[0] if ctis else None
        parts = [f"CTI {found.label}/{cti_claim}" if found else f"no CTI for {cti_claim}"]
        claim.facts = {"cti": None if found is None else {"transition": found.label, "claim": cti_claim,
                                                          "pre": found.pre, "post": found.post}}
        if found is not None:
            claim.cti_check = decode.recheck_cti(found, name)
            parts.append(claim.cti_check.split(" (")[0] if claim.cti_check.startswith("CTI")
                         else "CTI re-check: ENCODING BUG")
        bmc_ok = True
        if target is not None:
            deep = name in DEEP_BMC
            if deep:
                b = deep_bmc.bmc(target, name, BMC_DEPTH, leader_change, DEEP_BMC[name])
            else:
                b = I.bmc(target, name, BMC_DEPTH, leader_change)
            bmc_ok = b.k is not None
            parts.append(f"BMC {target} k={b.k}" if bmc_ok else f"BMC {target}: none up to k={BMC_DEPTH}")
            unknown = unknown or b.unknown
            claim.facts["bmc"] = {"target": target, "k": b.k, "trace": [lab for lab, _ in b.trace]}
            claim.bmc_trace = b.trace
            if deep:
                claim.facts["bmc"].update(replicas=DEEP_BMC[name], unsat_depths=b.unsat_depths, width=b.width,
                                          problems=b.problems, solver_seconds=b.seconds,
                                          found_without=list(b.found_without))
                changes = sum(lab == "LeaderChange" for lab, _ in b.trace)
                parts[-1] += (f" ({DEEP_BMC[name]} replicas, {changes} leader changes, bit-blasted; depths "
                              f"{_depths(b.unsat_depths)} unsat)" if not b.problems else f" ({'; '.join(b.problems)})")
            if bmc_ok:
                claim.crosscheck = crosscheck.replay_bmc(b.trace, name, target)
        claim.result = UNKNOWN if unknown else COUNTEREXAMPLE if found and bmc_ok else PROVED
        claim.bound = "; ".join(parts)
    claim.seconds = t.seconds
    return claim


def _depths(ds: list) -> str:
    """[0, 1, ..., 9] as "0-9" (the depths are consecutive from 0 by construction)."""
    if not ds:
        return "none"
    return f"{ds[0]}-{ds[-1]}" if ds == list(range(ds[0], ds[-1] + 1)) else ", ".join(map(str, ds))


def mutant_claims() -> list[Claim]:
    return [mutant_claim(name) for name in MUTANTS]


# ============================================================================ BMC with leader changes
def _truncated(states):
    """Some replica's LEO went down at some step (only a FollowerTruncate does that)."""
    steps = [z3.Or([t.f("leo", f) < s.f("leo", f) for f in H.REPLICAS]) for s, t in zip(states, states[1:])]
    return z3.Or(steps) if steps else z3.BoolVal(False)


def goal_deposed_leader_rejoins(p, states):
    """The first leader (broker 0) lost the leadership, truncated its divergent suffix and rejoined the ISR."""
    s = states[-1]
    return z3.And(_truncated(states), s.l != 0, s.f("isr", 0))


def goal_two_changes_then_hw(p, states):
    """Two leader changes, a truncation, and the HW of the third leader epoch above 0."""
    s = states[-1]
    return z3.And(_truncated(states), s.epoch >= 2, s.at_leader("hw") >= 1)


#: name -> (goal, statement, k_max)
LEADER_CHANGE_WITNESSES = {
    "deposed_leader_rejoins": (goal_deposed_leader_rejoins, "the deposed leader truncates and rejoins the ISR", 6),
    "two_changes_then_hw": (goal_two_changes_then_hw, "two leader changes, a truncation, then the HW advances", 7),
}


def leader_change_claim(name: str) -> Claim:
    """BMC over the model-realizable relation with the controller's election; the trace must replay in the model."""
    goal, statement, k_max = LEADER_CHANGE_WITNESSES[name]
    claim = Claim(f"leader_change.{name}", "leader_change", f"BMC with leader changes reaches: {statement} "
                  "(real rules); the trace replays in the model", WITNESS)
    with Timer() as t:
        b = I.bmc(None, None, k_max, "session", goal=goal)
        if b.unknown:
            claim.result = UNKNOWN
        elif b.k is None:
            claim.result = NO_WITNESS
            claim.bound = f"none up to k={k_max}"
        else:
            claim.result = WITNESS
            claim.facts = {"k": b.k, "trace": [lab for lab, _ in b.trace]}
            claim.crosscheck = crosscheck.replay_bmc(b.trace, None, None)
            changes = sum(lab == "LeaderChange" for lab, _ in b.trace)
            claim.bound = f"k={b.k}, {changes} leader change(s); " + (
                "replayed in model" if claim.crosscheck.startswith("model agrees") else "REPLAY FAILED")
    claim.seconds = t.seconds
    return claim


def leader_change_claims() -> list[Claim]:
    return [leader_change_claim(name) for name in LEADER_CHANGE_WITNESSES]


RUNNERS = {"lag_window": timing_claims, "propagation": propagation_claims, "inductive": inductive_claims,
           "mutants": mutant_claims, "leader_change": leader_change_claims, "min_isr": min_isr_hw.claims}


#: the groups whose claims are one call per name: run reports each claim as it is proved
_ONE_BY_ONE = {"mutants": (mutant_claim, lambda: MUTANTS),
               "leader_change": (leader_change_claim, lambda: LEADER_CHANGE_WITNESSES),
               "min_isr": (min_isr_hw.claim, lambda: min_isr_hw.CLAIMS)}


def run(groups=GROUPS, on_claim=None, on_group=None) -> list[Claim]:
    """Every claim of ``groups``; ``on_group(group, claims or None)`` before a group, ``on_claim(group, claim)``
    after each claim (progress)."""
    out = []
    for g in GROUPS:
        if g not in groups:
            continue
        one = _ONE_BY_ONE.get(g)
        names = list(one[1]()) if one else None
        if on_group is not None:
            on_group(g, None if names is None else len(names))
        claims = ((one[0](n) for n in names) if one else iter_inductive_claims() if g == "inductive"
                  else RUNNERS[g]())
        for c in claims:
            out.append(c)
            if on_claim is not None:
                on_claim(g, c)
    return out
