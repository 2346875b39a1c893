"""Bit-blasted bounded model checking: the smallest k for runs too deep for ``induction.bmc``.

``induction.bmc`` gives z3 integer unrollings.  With four replicas and the model controller's election
(``expand_no_epoch_start`` needs both) each extra step multiplies its cost, and it exceeds the query limit
before the depth of the shortest violation (the figures: benchmarks/RESULTS.md).  ``bmc`` here asks the same question
of the same relation (``hw_isr`` with ``bmc=True``, ``n`` replicas, L = 10000, P = 5000, J = 0, the same
initial state) and answers it exactly; what changes is only how the question is put:

1. **Frame encoding.**  One integer selector per step picks the transition instance; each variable of the
   next state is an If-chain over the instances that write it, unchanged otherwise; each instance's guard
   holds when it is picked.  This is the disjunction of ``Step.relation`` that ``induction.bmc`` builds.
2. **First violation.**  Depth k is asked only once every smaller depth is unsat, so the states before the
   last may be required to satisfy the target: a run violating it earlier would be a shorter one.
3. **Strengthening.**  Every state of the unrolling must satisfy the lemmas ``STRENGTHENING`` and the
   bounds ``box``.  ``prove_lemmas`` checks with z3, on the integer relation, that they hold initially
   and are preserved by every transition instance from any state that satisfies them and the target.
   By 2., they hold in every state of every run the query looks for, so adding them removes no run.
   They are what makes the unsat answers fast (z3 no longer searches runs through unreachable states).
4. **Bit-vectors.**  Every integer becomes a bit-vector (``BitVecImage``).  The bounds of ``box``, of the
   selectors and of the transitions' own variables (``fresh_bounds``: Tick's delta, the election's choices;
   proved in 3. for the instance a step picks, and the other instances' variables occur only under their
   own selector value, so bounding them removes nothing) give an interval for every integer term; the
   width is chosen so that every interval fits, so no bit-vector operation wraps and the bit-vector formula
   has exactly the integer formula's models.  ``TACTIC`` then bit-blasts it to SAT.  A model found is
   decoded and checked once more against the integer unrolling (``integer_recheck``).

At each depth a cheaper query comes first: the same formula without the time transitions (Tick,
IsrExpiration; ``FIRST_WITHOUT``).  A run it finds is a run of the whole relation; when it has none, the
whole relation is asked.  The answer is the smallest k <= k_max with a reachable violation of the target
in the k-th state of the whole relation, and every smaller depth was shown unsat for the whole relation
by the same encoding (``BmcResult.unsat_depths``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from . import hw_isr as H
from .core import RLIMIT, new_solver
from .induction import BMC_JITTER, BMC_LAG, BmcResult as _IntBmcResult

#: lemmas of ``hw_isr`` every state of the unrolling must satisfy (proved for the relation by ``prove_lemmas``)
STRENGTHENING = ("log_offsets", "prefix_lengths", "leader_in_isr", "remote_leo_is_prefix", "inflight_response",
                 "hw_below_isr_remote_leo", "committed_bounds", "clock", "hw_within_isr", "committed_prefix")
#: the integer fields that hold a time (ms); the others hold an offset, an epoch or the leader
TIME_FIELDS = ("now", "nexp", "lcu", "lft", "behind")
#: z3's bit-vector pipeline: eliminate the next-state equations, bit-blast, SAT
TACTIC = ("simplify", "propagate-values", "solve-eqs", "elim-uncnstr", "simplify", "bit-blast", "sat")
#: the transitions a first, cheaper query at each depth leaves out: a run it finds is a run of the whole
#: relation; when it finds none the whole relation is asked, so neither the answer nor its minimality
#: depends on it (it only makes the satisfiable depth cheaper and steadier to answer)
FIRST_WITHOUT = ("Tick", "IsrExpiration")


def _params(p):
    return [p.L == BMC_LAG, p.P == BMC_LAG // 2, p.J == BMC_JITTER]


def time_bound(j) -> int:
    """No time of the j-th state exceeds this: each Tick adds at most P + J (``inv_clock``: nexp <= now + P)."""
    return H.T0 + (j + 1) * (BMC_LAG // 2 + BMC_JITTER)


def ranges(s: H.St, j) -> list:
    """[(variable, lo, hi)] for every integer of the j-th state (``j`` an int or a z3 integer): offsets and
    epochs grow by at most one per step (a Produce appends one record), times by at most P + J."""
    out = []
    for key, v in s.v.items():
        if z3.is_int(v):
            lo, hi = (0, time_bound(j)) if key.startswith(TIME_FIELDS) else (0, s.n - 1) if key == "l" else (-1, j)
            out.append((v, lo, hi))
    return out


def box(s: H.St, j) -> list:
    """The bounds of ``ranges`` as constraints."""
    return [c for v, lo, hi in ranges(s, j) for c in (lo <= v, v <= hi)]


def fresh_bounds(name: str, n: int, j) -> tuple:
    """Bounds of a transition's own variable in the step out of the j-th state (Tick's delta, the election's
    new leader and next isr-expiration time)."""
    if name.startswith("delta_"):
        return 1, BMC_LAG // 2 + BMC_JITTER
    if name.startswith("newleader_"):
        return 0, n - 1
    if name.startswith("newnexp_"):
        return 0, time_bound(j + 1)
    raise ValueError(f"no bounds known for the transition variable {name}")


def _lemmas(p, s, target, lemmas):
    return [H.INV_BY_NAME[name][0](p, s) for name in lemmas if name != target]


def _instances(p, s, mutant, leader_change):
    out = []
    for name, (_build, _pf, in_bmc) in H.TRANSITIONS.items():
        if not in_bmc or (name == "LeaderChange" and not leader_change):
            continue
        out += H.instances(name, p, s, mutant, bmc=True)
    return out


# ============================================================================ the lemmas, proved
def prove_lemmas(target: str, mutant: str | None, n: int, leader_change: str | None,
                 lemmas: tuple = STRENGTHENING) -> list[str]:
    """Check on the integer relation that ``lemmas`` and ``box`` hold initially and are preserved by every
    transition instance from a state satisfying them and ``target`` (the depth j symbolic), and that each
    instance's own variables are within ``fresh_bounds``.  Returns the failures ([] when all hold)."""
    failures = []
    p, s, t = H.Params(), H.St("pre", n, ghost_at=False), H.St("post", n, ghost_at=False)
    j = z3.Int("depth")
    solver = new_solver()
    solver.add(*_params(p), *H.initial(p, s))
    if solver.check(z3.Not(z3.And(_lemmas(p, s, target, lemmas) + box(s, 0)))) != z3.unsat:
        failures.append("init")
    hyp = _params(p) + _lemmas(p, s, target, lemmas) + box(s, j) + [j >= 0, H.INV_BY_NAME[target][0](p, s)]
    after = z3.And(_lemmas(p, t, target, lemmas) + box(t, j + 1))
    owners: dict = {}
    for label, st in _instances(p, s, mutant, leader_change):
        for v in st.fresh:
            if v.decl().name() in owners:
                failures.append(f"{v} is shared by {owners[v.decl().name()]} and {label}")
            owners[v.decl().name()] = label
        fresh_ok = [z3.And(lo <= v, v <= hi) for v in st.fresh if z3.is_int(v)
                    for lo, hi in [fresh_bounds(v.decl().name(), n, j)]]
        solver = new_solver()
        solver.add(*hyp, st.relation(t))
        if solver.check(z3.Not(z3.And([after] + fresh_ok))) != z3.unsat:
            failures.append(label)
    return failures


# ============================================================================ integers as bit-vectors
class BitVecImage:
    """The bit-vector image of quantifier-free integer formulas whose integer variables all have bounds.

    ``interval(e)`` bounds every integer term from the bounds of its variables (interval arithmetic);
    ``width`` is the smallest signed width that holds every interval met so far; ``bv(e)`` translates.
    With every variable within its bounds no operation can wrap, so a formula and its image have the same
    models.  Only what ``hw_isr`` uses is supported: +, -, multiplication by a constant, comparisons, If and
    the Boolean connectives; anything else raises."""

    def __init__(self, bounds: dict):
        self.bounds = bounds          # variable name -> (lo, hi)
        self.width = 2
        self._iv: dict = {}
        self._bv: dict = {}

    @staticmethod
    def _memo(cache: dict, e, compute):
        """compute(e), once per z3 term: keyed by the term's id, checked by structural equality."""
        key = e.get_id()
        hit = cache.get(key)
        if hit is not None and hit[0].eq(e):
            return hit[1]
        out = compute(e)
        cache[key] = (e, out)
        return out

    def interval(self, e) -> tuple:
        return self._memo(self._iv, e, self._interval_widening)

    def _interval_widening(self, e):
        iv = self._interval(e)
        if iv is not None:
            self.width = max(self.width, max(abs(iv[0]), abs(iv[1]) + 1).bit_length() + 1)
        return iv

    def _interval(self, e):
        for c in e.children():
            self.interval(c)
        if not z3.is_int(e):
            return None
        if z3.is_int_value(e):
            return e.as_long(), e.as_long()
        k = e.decl().kind()
        if z3.is_const(e) and k == z3.Z3_OP_UNINTERPRETED:
            if e.decl().name() not in self.bounds:
                raise ValueError(f"integer variable {e} has no bounds")
            return self.bounds[e.decl().name()]
        ivs = [self.interval(c) for c in e.children()]
        if k == z3.Z3_OP_ADD:
            return sum(i[0] for i in ivs), sum(i[1] for i in ivs)
        if k == z3.Z3_OP_SUB:
            lo, hi = ivs[0]
            for a, b in ivs[1:]:
                lo, hi = lo - b, hi - a
            return lo, hi
        if k == z3.Z3_OP_UMINUS:
            return -ivs[0][1], -ivs[0][0]
        if k == z3.Z3_OP_MUL and sum(not z3.is_int_value(c) for c in e.children()) <= 1:
            lo, hi = 1, 1
            for a, b in ivs:
                corners = (lo * a, lo * b, hi * a, hi * b)
                lo, hi = min(corners), max(corners)
            return lo, hi
        if k == z3.Z3_OP_ITE:
            return min(ivs[1][0], ivs[2][0]), max(ivs[1][1], ivs[2][1])
        raise ValueError(f"no bit-vector image for {e.decl()} in {e}")

    def bv(self, e):
        return self._memo(self._bv, e, self._bv_of)

    def _bv_of(self, e):
        w = self.width
        if z3.is_int_value(e):
            return z3.BitVecVal(e.as_long(), w)
        if z3.is_true(e) or z3.is_false(e):
            return e
        k = e.decl().kind()
        if z3.is_const(e) and k == z3.Z3_OP_UNINTERPRETED:
            return z3.BitVec(e.decl().name(), w) if z3.is_int(e) else e
        ch = [self.bv(c) for c in e.children()]
        if k == z3.Z3_OP_ADD or k == z3.Z3_OP_SUB or k == z3.Z3_OP_MUL:
            out = ch[0]
            for c in ch[1:]:
                out = out + c if k == z3.Z3_OP_ADD else out - c if k == z3.Z3_OP_SUB else out * c
            return out
        simple = {z3.Z3_OP_UMINUS: lambda a: -a[0], z3.Z3_OP_LE: lambda a: a[0] <= a[1],   # signed comparisons
                  z3.Z3_OP_LT: lambda a: a[0] < a[1], z3.Z3_OP_GE: lambda a: a[0] >= a[1],
                  z3.Z3_OP_GT: lambda a: a[0] > a[1], z3.Z3_OP_EQ: lambda a: a[0] == a[1],
                  z3.Z3_OP_DISTINCT: lambda a: z3.Distinct(*a), z3.Z3_OP_ITE: lambda a: z3.If(*a),
                  z3.Z3_OP_AND: lambda a: z3.And(*a), z3.Z3_OP_OR: lambda a: z3.Or(*a),
                  z3.Z3_OP_NOT: lambda a: z3.Not(a[0]), z3.Z3_OP_IMPLIES: lambda a: z3.Implies(*a),
                  z3.Z3_OP_IFF: lambda a: a[0] == a[1]}
        if k not in simple:
            raise ValueError(f"no bit-vector image for {e.decl()} in {e}")
        return simple[k](ch)


# ============================================================================ the unrolling
@dataclass
class BmcResult(_IntBmcResult):
    """``induction.BmcResult`` and how the answer was reached."""

    unsat_depths: list = field(default_factory=list)   # every depth shown unsat, in order
    problems: list = field(default_factory=list)       # why the answer is unknown (lemmas not proved, ...)
    width: int = 0
    seconds: dict = field(default_factory=dict)        # depth -> SAT seconds (both queries)
    found_without: tuple = ()                          # the transitions left out by the query that found the run


class Unrolling:
    """The frame-encoded unrolling of the model-realizable relation from the initial state, up to k_max steps."""

    def __init__(self, target: str, mutant: str | None, n: int, leader_change: str | None, k_max: int,
                 lemmas: tuple = STRENGTHENING):
        self.target, self.n, self.lemmas = target, n, lemmas
        self.p = p = H.Params()
        self.states = [H.St("s0", n, ghost_at=False)]
        self.base = _params(p) + H.initial(p, self.states[0])
        self.steps: list = []       # per step: its constraints
        self.labels: list = []      # per step: the instance label of each selector value
        self.bounds = {p.L.decl().name(): (BMC_LAG, BMC_LAG), p.P.decl().name(): (BMC_LAG // 2, BMC_LAG // 2),
                       p.J.decl().name(): (BMC_JITTER, BMC_JITTER)}
        self._state_bounds(self.states[0], 0)
        self._per_state = [self._state_facts(self.states[0], 0)]
        for k in range(1, k_max + 1):
            s, t = self.states[-1], H.St(f"s{k}", n, ghost_at=False)
            insts = _instances(p, s, mutant, leader_change)
            act = z3.Int(f"act_{k}")
            self.bounds[act.decl().name()] = (0, len(insts) - 1)
            c = [0 <= act, act < len(insts)]
            for i, (_label, st) in enumerate(insts):
                if st.guard:
                    c.append(z3.Implies(act == i, z3.And(st.guard)))
                for v in st.fresh:
                    if z3.is_int(v):
                        lo, hi = fresh_bounds(v.decl().name(), n, k - 1)
                        self.bounds[v.decl().name()] = (lo, hi)
                        c += [lo <= v, v <= hi]
            for key, old in s.v.items():
                new = old
                for i, (_label, st) in enumerate(insts):
                    if key in st.new:
                        new = z3.If(act == i, st.new[key], new)
                c.append(t.v[key] == new)
            self.steps.append(c)
            self.labels.append([label for label, _ in insts])
            self.states.append(t)
            self._state_bounds(t, k)
            self._per_state.append(self._state_facts(t, k))

    def _state_facts(self, s, j):
        """(bounds and lemmas of the j-th state, the target in it)."""
        return box(s, j) + _lemmas(self.p, s, self.target, self.lemmas), H.INV_BY_NAME[self.target][0](self.p, s)

    def _state_bounds(self, s, j):
        for v, lo, hi in ranges(s, j):
            self.bounds[v.decl().name()] = (lo, hi)

    def query(self, k: int) -> list:
        """The integer formula of depth k: a first violation of the target in state k, lemmas and bounds in all."""
        out = list(self.base)
        for c in self.steps[:k]:
            out += c
        for j, (facts, target) in enumerate(self._per_state[:k + 1]):
            out += facts
            out.append(target if j < k else z3.Not(target))
        return out


def _decode(model, image: BitVecImage, unrolling: Unrolling, k: int) -> tuple[list, dict]:
    """The run of a bit-vector model: [(label, state values)] and the transitions' own variables."""
    def value(term):
        if z3.is_bool(term):
            return z3.is_true(model.eval(term, model_completion=True))
        return model.eval(z3.BitVec(term.decl().name(), image.width), model_completion=True).as_signed_long()
    trace = []
    for j, s in enumerate(unrolling.states[:k + 1]):
        values = {key: value(term) for key, term in s.v.items()}
        label = "init" if j == 0 else unrolling.labels[j - 1][value(z3.Int(f"act_{j}"))]
        trace.append((label, values))
    fresh = {name: value(z3.Int(name)) for name in unrolling.bounds if name.startswith(("delta_", "newleader_",
                                                                                            "newnexp_"))}
    return trace, fresh


def integer_recheck(unrolling: Unrolling, k: int, trace: list, fresh: dict | None = None) -> bool:
    """The run ``trace`` (every state's values fixed, and the transitions' own variables in ``fresh``) satisfies
    the integer formula of depth k."""
    solver = new_solver()
    solver.add(*unrolling.query(k))
    for (label, values), s in zip(trace, unrolling.states):
        for key, v in values.items():
            solver.add(s.v[key] == v)
    for j, (label, _v) in enumerate(trace[1:], 1):
        solver.add(z3.Int(f"act_{j}") == unrolling.labels[j - 1].index(label))
    for name, v in (fresh or {}).items():
        solver.add(z3.Int(name) == v)
    return solver.check() == z3.sat


def bmc(target: str, mutant: str | None, k_max: int, leader_change: str | None = "session", n: int = 4,
        lemmas: tuple = STRENGTHENING, first_without: tuple = FIRST_WITHOUT) -> BmcResult:
    """Smallest k <= k_max such that k model-realizable transitions (``n`` replicas, the model controller's
    election if ``leader_change`` is "session") lead from the initial state to a violation of the state
    invariant ``target``; every smaller depth is shown unsat first (see the module doc).  ``lemmas``: the
    strengthening, which must be provable for this mutant (``prove_lemmas``; else the answer is unknown).
    At each depth the relation without ``first_without`` is asked first (``FIRST_WITHOUT``)."""
    if leader_change not in (None, "session") or target not in H.INV_BY_NAME:
        raise ValueError("deep_bmc handles state invariants and the model controller's election only")
    out = BmcResult(None)
    out.problems = [f"lemmas not preserved by {x}" for x in prove_lemmas(target, mutant, n, leader_change, lemmas)]
    if out.problems:
        out.unknown = True
        return out
    unrolling = Unrolling(target, mutant, n, leader_change, k_max, lemmas)
    image = BitVecImage(unrolling.bounds)
    queries = [z3.And(unrolling.query(k)) for k in range(k_max + 1)]
    for q in queries:              # every interval first: the width must hold all of them
        image.interval(q)
    firsts = [z3.And([q] + _leave_out(unrolling, k, first_without)) for k, q in enumerate(queries)]
    for q in firsts:
        image.interval(q)
    out.width = image.width
    for k in range(k_max + 1):
        out.seconds[k] = 0.0
        tries = ([(firsts[k], tuple(first_without))] if first_without and k > 0 else []) + [(queries[k], ())]
        for q, left_out in tries:
            solver = z3.Then(*TACTIC).solver()
            solver.set("rlimit", RLIMIT)
            solver.add(image.bv(q))
            t0 = time.perf_counter()
            r = solver.check()
            out.seconds[k] = round(out.seconds[k] + time.perf_counter() - t0, 2)
            if r == z3.unsat:
                continue
            if r != z3.sat:
                out.unknown = True
                out.problems = [f"depth {k}: {solver.reason_unknown()}"]
                return out
            trace, fresh = _decode(solver.model(), image, unrolling, k)
            if not integer_recheck(unrolling, k, trace, fresh):
                out.unknown = True   # a bug of BitVecImage
                out.problems = [f"depth {k}: the bit-vector model is not a model of the integer formula"]
                return out
            out.k, out.trace, out.found_without = k, trace, left_out
            out.params = {"L": BMC_LAG, "P": BMC_LAG // 2, "J": BMC_JITTER}
            return out
        out.unsat_depths.append(k)   # the whole relation has no such run of k steps
    return out


def _leave_out(unrolling: Unrolling, k: int, names: tuple) -> list:
    """Constraints keeping the transitions ``names`` out of the first k steps."""
    return [z3.Int(f"act_{j}") != i for j in range(1, k + 1)
            for i, label in enumerate(unrolling.labels[j - 1]) if label.partition("(")[0] in names]
