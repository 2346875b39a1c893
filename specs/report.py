"""Every claim of ``specs/``, run in a fixed order: the rows of ``isrlab prove``."""

from __future__ import annotations

from . import crosscheck, hw_isr as H, induction as I, lag_window, propagation
from .core import COUNTEREXAMPLE, PROVED, UNKNOWN, WITNESS, Claim, Timer, new_solver

GROUPS = ("lag_window", "propagation", "inductive", "mutants")

#: mutant -> (claim whose CTI it must produce, transitions it changes, BMC target, leader changes in the BMC)
MUTANTS = {
    "expand_below_hw": ("hw_within_isr", ("FetchRequest", "IsrExpand"), "hw_within_isr", None),
    "expand_no_epoch_start": ("committed_durable", ("FetchRequest", "IsrExpand"), None, None),
    "hw_ignores_isr": ("hw_within_isr", ("Produce", "FetchRequest", "HwAdvance"), "hw_within_isr", None),
    "hw_max_not_min": ("hw_within_isr", ("Produce", "FetchRequest", "HwAdvance"), "hw_within_isr", None),
    "shrink_no_leo_guard": ("shrink_only_out_of_sync", ("IsrExpiration",), "shrink_only_out_of_sync", None),
    "shrink_ge": ("shrink_after_lag", ("IsrExpiration",), "shrink_after_lag", None),
    "shrink_one_at_a_time": ("lag_next_run", ("IsrExpiration",), "lag_bound", None),
    "caught_up_on_every_fetch": ("lag_sound", ("FetchRequest",), "lag_sound", None),
}
BMC_DEPTH = 10


def timing_claims() -> list[Claim]:
    return (lag_window.lag_claims()
            + [lag_window.sweep(10000, 0), lag_window.sweep(10000, 1000), lag_window.sweep(30000, 0)])


def propagation_claims() -> list[Claim]:
    return propagation.propagation_claims() + [propagation.sweep()]


def inductive_claims() -> list[Claim]:
    out = []
    names = [(n, goal) for n, _fn, goal in H.INVARIANTS] + [(n, True) for n, _ in H.STEP_PROPERTIES]
    for name, goal in names:
        kind = "goal" if goal else "lemma"
        claim = Claim(f"inductive.{name}", "inductive", f"{kind} {name} holds initially and is preserved by every "
                      "transition (assuming all invariants)", PROVED)
        with Timer() as t:
            matrix = {}
            if name not in H.STEP_BY_NAME:
                matrix["init"] = I.check_init(name).result
            for tr in H.TRANSITIONS:
                r = I.check_step(tr, name)
                matrix[tr] = r.result if r.result != I.CTI else f"CTI ({r.label})"
        claim.seconds = t.seconds
        failed = {k: v for k, v in matrix.items() if v != I.PROVED}
        claim.result = PROVED if not failed else (UNKNOWN if UNKNOWN in failed.values() else COUNTEREXAMPLE)
        claim.facts = {"matrix": matrix}
        claim.bound = f"{len(matrix) - len(failed)}/{len(matrix)} proved"
        out.append(claim)
    out.append(transitions_enabled())
    return out


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
        bmc_ok = True
        if target is not None:
            b = I.bmc(target, name, BMC_DEPTH, leader_change)
            bmc_ok = b.k is not None
            parts.append(f"BMC {target} k={b.k}" if bmc_ok else f"BMC {target}: none up to k={BMC_DEPTH}")
            unknown = unknown or b.unknown
            claim.facts["bmc"] = {"target": target, "k": b.k, "trace": [lab for lab, _ in b.trace]}
            if bmc_ok:
                claim.crosscheck = crosscheck.replay_bmc(b.trace, name, target)
        else:
            parts.append("BMC not run (needs a leader change the 3-broker model controller cannot make)")
        claim.result = UNKNOWN if unknown else COUNTEREXAMPLE if found and bmc_ok else PROVED
        claim.bound = "; ".join(parts)
    claim.seconds = t.seconds
    return claim


def mutant_claims() -> list[Claim]:
    return [mutant_claim(name) for name in MUTANTS]


RUNNERS = {"lag_window": timing_claims, "propagation": propagation_claims, "inductive": inductive_claims,
           "mutants": mutant_claims}


def run(groups=GROUPS) -> list[Claim]:
    out = []
    for g in GROUPS:
        if g in groups:
            out.extend(RUNNERS[g]())
    return out
