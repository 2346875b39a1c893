"""Claims, results and the z3 calls every spec module shares.

A claim is one z3 question with the answer it is expected to have: ``proved`` (the negation is
unsat), ``counterexample`` (the negation is sat: a refuted naive form, or a mutant caught) or
``witness`` (a schedule that reaches a bound exists).  ``unknown`` is never expected, so it always
counts as a failure.  Each claim also carries the verdict of its cross-check against the
executable model (``crosscheck``): a disagreement there is an encoding bug, and fails the claim.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

PROVED = "proved"
COUNTEREXAMPLE = "counterexample"
WITNESS = "witness"
UNKNOWN = "unknown"
NO_WITNESS = "no witness"
AGREES = "agrees"
DISAGREES = "disagrees"

#: per-query limit in z3's own work units (its ``rlimit count``), not seconds, so that a query gets the same
#: answer on a busy machine as on a quiet one; one that needs more reports ``unknown`` (a failure).
#: About ten times the largest query of ``isrlab prove`` (benchmarks/RESULTS.md).
RLIMIT = 200_000_000


def configure() -> None:
    """Fix z3's random seeds so every run asks and answers the same way."""
    z3.set_param("smt.random_seed", 0)
    z3.set_param("sat.random_seed", 0)


configure()


@dataclass
class Claim:
    """One row of the ``isrlab prove`` table."""

    name: str
    group: str
    statement: str
    expected: str
    result: str = UNKNOWN
    bound: str = ""
    seconds: float = 0.0
    #: decoded z3 model (witness or counterexample), as plain ints/bools.
    facts: dict = field(default_factory=dict)
    #: "" (no cross-check), "model agrees: ...", or "ENCODING BUG: ..." (a failure).
    crosscheck: str = ""
    #: the CTI decoded into model states and re-checked (``decode.recheck_cti``): "" when there is no CTI,
    #: "CTI re-checked in model: ...", "CTI not replayable: ..." or "ENCODING BUG: ..." (a failure).
    cti_check: str = ""
    #: the BMC trace with every state ([(transition label, state values)]); not in the JSON (facts has its labels)
    bmc_trace: list = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        return (self.result == self.expected and not self.crosscheck.startswith("ENCODING BUG")
                and not self.cti_check.startswith("ENCODING BUG"))

    def to_json(self) -> dict:
        return {"claim": self.name, "group": self.group, "statement": self.statement,
                "expected": self.expected, "result": self.result, "ok": self.ok, "bound": self.bound,
                "seconds": round(self.seconds, 3), "facts": self.facts, "crosscheck": self.crosscheck,
                "cti_check": self.cti_check}


def new_solver() -> z3.Solver:
    s = z3.Solver()
    s.set("rlimit", RLIMIT)
    s.set("random_seed", 0)
    return s


def decode(model: z3.ModelRef, named: dict) -> dict:
    """The values of the named z3 terms in ``model`` as Python ints / bools."""
    out = {}
    for name, term in named.items():
        v = model.eval(term, model_completion=True)
        if z3.is_bool(v):
            out[name] = z3.is_true(v)
        else:
            out[name] = v.as_long()
    return out


def check_valid(hyps, goal, named: dict) -> tuple[str, dict]:
    """``hyps => goal`` for every assignment: (PROVED, {}) or (COUNTEREXAMPLE, decoded model) or (UNKNOWN, {})."""
    s = new_solver()
    s.add(*hyps)
    s.add(z3.Not(goal))
    r = s.check()
    if r == z3.unsat:
        return PROVED, {}
    if r == z3.sat:
        return COUNTEREXAMPLE, decode(s.model(), named)
    return UNKNOWN, {"reason": s.reason_unknown()}


def find_witness(constraints, named: dict) -> tuple[str, dict]:
    """Some assignment satisfying ``constraints``: (WITNESS, decoded model), (NO_WITNESS, {}) or (UNKNOWN, {})."""
    s = new_solver()
    s.add(*constraints)
    r = s.check()
    if r == z3.sat:
        return WITNESS, decode(s.model(), named)
    if r == z3.unsat:
        return NO_WITNESS, {}
    return UNKNOWN, {"reason": s.reason_unknown()}


class Timer:
    """Wall-clock seconds of a claim (reported, never used to decide anything)."""

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        return False
