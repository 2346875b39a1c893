"""KAFKA-15583's strict min-ISR HW rule and KIP-966's Eligible Leader Replicas as inductive invariants, with z3.

One partition, three replicas (brokers 0..2), KRaft with the ELR on, ``min.insync.replicas`` = ``m`` symbolic
(any m >= 1; the effective min ISR is ``me = min(m, 3)``, Partition.effectiveMinIsr).  The state, abstracted
so that the number of records is symbolic as in ``hw_isr``:

* ``leo[i]``, ``hw[i]``: each replica's log end offset and high watermark;
* ``ag[i,j]``: the length of the longest common prefix of the logs of i and j (an ultrametric; ``ag[i,i]`` is
  ``leo[i]``);
* ``isr[i]``, ``elr[i]``: the controller's ISR and ELR (PartitionRegistration.isr / elr), disjoint;
* ``l``: the leader (-1 when the partition has none); ``estart``: its leaderEpochStartOffset;
* ghost ``C``: the largest HW any leader ever had (what has been exposed as committed).

The leader's ISR is the controller's (the leader learns every partition change at once: in the replay every
metadata record is applied on every broker before the next step).  Transitions (``TRANSITIONS``); each that
leaves a leader ends with the HW rule (``_hw_rule``): the leader's HW may rise to any offset every ISR member
holds, and with the rule (``mutant`` None) only while |ISR| >= me:

``Produce`` (the leader appends one record), ``FollowerFetch(f)`` (f, a prefix of the leader, copies some of
its records and takes an HW no larger than the leader's), ``IsrShrink(f)`` (a follower leaves the ISR; it and
the ELR are the ELR when the ISR left is below me, else the ELR is emptied), ``IsrExpand(f)`` (a follower
holding the leader's records up to its HW and epoch start joins; the ELR is emptied when |ISR| >= me),
``LeaderFailure`` (the leader leaves the ISR, possibly to the ELR; the new leader is an ISR member, else, when
the ISR is empty, an ELR member other than the old leader, which then alone is the ISR; or none),
``LeaderChange`` (a preferred-leader election: another ISR member leads, the ISR is kept), ``Elect`` (a leaderless partition elects from its ISR, else from its ELR), ``FollowerTruncate(f)`` (truncation
to the divergence point), ``ReplicaRemoved(f)`` (a broker back from an unclean shutdown leaves the ISR and the
ELR, its log cut anywhere) and ``HwAdvance`` (the HW rule on its own, at any time).  The HW bound is the
replicas' real common prefix with the leader, where Kafka uses the leader's view of each follower's LEO (never
larger): the abstraction over-approximates, so what it proves holds in Kafka.

Goals: ``isr_holds_hw`` and the new ``elr_holds_hw``: every ISR and ELR member holds every offset below the
leader's HW (``properties/invariants.py`` committed_prefix).  Lemmas: ``log_offsets``, ``prefix_lengths``,
``isr_elr_disjoint``, ``leader_in_isr``, ``elr_bounded`` (a non-empty ELR means |ISR| + |ELR| <= me, so the ELR
is empty whenever the HW may advance), ``committed_bounds`` and ``committed_held`` (every two ISR or ELR members
share the first C records).  Each is checked initially and for every transition, assuming all of them
(mypyvy style).

The mutant ``rule_off`` drops the |ISR| >= me test (``no-kafka-15583``).  Its counterexample to induction is
asked for twice: per transition, from any state satisfying every invariant (``check_step``), and as one whose
pre-state is reachable (``reachable_cti``): a bounded run of the *model-realizable* relation (``exact=True``:
the leader stays broker 0, followers fetch everything, the ISR shrinks by fencing, so the HW the model computes
is a formula of the abstract state) from the initial state, m = 2, whose last step goes from a state satisfying
every invariant to one violating ``elr_holds_hw``.  z3 also confirms that last step is an instance of the
general transition.  ``replay`` runs it on the executable model (preset ``no-kafka-15583``, which the explorer
breaks the same way: an ELR member lacking an offset below the HW) with model actions (``MACROS``), compares the
abstraction after every step (leader, ISR, ELR, LEOs, common prefixes, every HW, the epoch start; not the ghost C)
and requires ``committed_prefix`` to fail at the end on an ELR member; the same actions with ``kafka_15583`` on
must be refused or break nothing.  A disagreement is an ``ENCODING BUG``.
"""

from __future__ import annotations

import itertools

import z3

from ..model import actions as A
from ..model.config import preset
from ..model.state import NO_LEADER
from ..model.step import enabled_actions, initial_state, step
from ..properties.invariants import BY_NAME, check_state
from .core import COUNTEREXAMPLE, PROVED, UNKNOWN, WITNESS, NO_WITNESS, Claim, Timer, new_solver
from .hw_isr import Step, pick, zmax, zmin

N = 3
REPLICAS = range(N)
PAIRS = tuple(itertools.combinations(REPLICAS, 2))
GROUP = "min_isr"
MUTANT = "rule_off"
#: the preset the CTI replays on (KAFKA-15583 off, ELR on, min.insync.replicas = 2, 3 brokers)
PRESET = "no-kafka-15583"
REPLAY_MIN_ISR = 2
CTI = "CTI"


def agk(i: int, j: int) -> str:
    return f"leo{i}" if i == j else f"ag{min(i, j)}{max(i, j)}"


class Params:
    """min.insync.replicas ``m`` and Partition.effectiveMinIsr (Kafka 3.7.0): min(m, replication factor)."""

    def __init__(self, m: int | None = None):
        self.m = z3.Int("m")
        self.me = z3.If(self.m < N, self.m, N)
        self.fixed = m

    def constraints(self):
        return [self.m >= 1] if self.fixed is None else [self.m == self.fixed]


class St:
    """The z3 variables of one state."""

    def __init__(self, tag: str):
        self.tag = tag
        self.R = REPLICAS
        self.n = N
        self.v: dict = {}
        for i in REPLICAS:
            for name in ("leo", "hw"):
                self.v[f"{name}{i}"] = z3.Int(f"{name}{i}_{tag}")
            for name in ("isr", "elr"):
                self.v[f"{name}{i}"] = z3.Bool(f"{name}{i}_{tag}")
        for i, j in PAIRS:
            self.v[f"ag{i}{j}"] = z3.Int(f"ag{i}{j}_{tag}")
        for name in ("l", "estart", "C"):
            self.v[name] = z3.Int(f"{name}_{tag}")

    def __getattr__(self, name):
        if name in ("tag", "v", "R", "n"):
            raise AttributeError(name)
        return self.v[name]

    def f(self, name: str, i: int):
        return self.v[f"{name}{i}"]

    def ag(self, i: int, j: int):
        return self.v[agk(i, j)]


def card(bools) -> z3.ArithRef:
    return z3.Sum([z3.If(b, 1, 0) for b in bools])


def _ag_with(get, l, f: int):
    """ag(f, l) for a symbolic leader l, read through ``get`` (a state's or a step's values)."""
    return pick(l, [get(agk(f, j)) for j in REPLICAS])


def _leader_field(get, l, name: str):
    return pick(l, [get(f"{name}{i}") for i in REPLICAS])


# ============================================================================ invariants
def inv_log_offsets(p, s):
    """UnifiedLog.updateHighWatermark (Kafka 3.7.0): 0 <= HW <= LEO on every replica."""
    return z3.And([z3.And(0 <= s.f("hw", i), s.f("hw", i) <= s.f("leo", i)) for i in REPLICAS])


def inv_prefix_lengths(p, s):
    """Common prefixes of the logs: bounded by both LEOs, and an ultrametric (abstraction well-formedness)."""
    out = []
    for i, j in PAIRS:
        out += [0 <= s.ag(i, j), s.ag(i, j) <= s.f("leo", i), s.ag(i, j) <= s.f("leo", j)]
    for i, j, k in itertools.permutations(REPLICAS, 3):
        out.append(s.ag(i, k) >= zmin(s.ag(i, j), s.ag(j, k)))
    return z3.And(out)


def inv_isr_elr_disjoint(p, s):
    """PartitionChangeBuilder.maybePopulateTargetElr (Kafka 3.7.0): no replica is in both the ISR and the ELR."""
    return z3.And([z3.Not(z3.And(s.f("isr", i), s.f("elr", i))) for i in REPLICAS])


def inv_leader_in_isr(p, s):
    """PartitionChangeBuilder.isValidNewLeader (Kafka 3.7.0): a leader is in the ISR; its epoch start <= its LEO."""
    return z3.And(-1 <= s.l, s.l < N, z3.Implies(s.l >= 0, z3.And(
        _leader_field(s.v.get, s.l, "isr"), 0 <= s.estart, s.estart <= _leader_field(s.v.get, s.l, "leo"))))


def inv_elr_bounded(p, s):
    """A non-empty ELR means |ISR| + |ELR| <= min ISR: in particular the ELR is empty whenever |ISR| >= min ISR."""
    isr, elr = [s.f("isr", i) for i in REPLICAS], [s.f("elr", i) for i in REPLICAS]
    return z3.Or(z3.Not(z3.Or(elr)), card(isr) + card(elr) <= p.me)


def inv_committed_bounds(p, s):
    """Ghost C (largest HW ever exposed): every HW <= C, and C <= max(leader HW, leader epoch start)."""
    out = [0 <= s.C] + [s.f("hw", i) <= s.C for i in REPLICAS]
    out.append(z3.Implies(s.l >= 0, s.C <= zmax(_leader_field(s.v.get, s.l, "hw"), s.estart)))
    return z3.And(out)


def _member(s, i):
    return z3.Or(s.f("isr", i), s.f("elr", i))


def inv_committed_held(p, s):
    """Every two ISR or ELR members (each with itself) share the first C records: ELR members are electable."""
    return z3.And([z3.Implies(z3.And(_member(s, i), _member(s, j)), s.ag(i, j) >= s.C)
                   for i in REPLICAS for j in REPLICAS if i <= j])


def _holds_hw(s, kind):
    hw = _leader_field(s.v.get, s.l, "hw")
    return z3.Implies(s.l >= 0, z3.And([z3.Implies(s.f(kind, f), _ag_with(s.v.get, s.l, f) >= hw) for f in REPLICAS]))


def inv_isr_holds_hw(p, s):
    """GOAL committed_prefix, ISR part (StrongIsr): every ISR member holds the leader's records below its HW."""
    return _holds_hw(s, "isr")


def inv_elr_holds_hw(p, s):
    """GOAL committed_prefix, ELR part (KIP-966, Kafka 3.7.0): every ELR member holds the leader's records below its HW."""
    return _holds_hw(s, "elr")


#: (name, check, is_goal): the lemmas first, then the goals.
INVARIANTS = (
    ("log_offsets", inv_log_offsets, False),
    ("prefix_lengths", inv_prefix_lengths, False),
    ("isr_elr_disjoint", inv_isr_elr_disjoint, False),
    ("leader_in_isr", inv_leader_in_isr, False),
    ("elr_bounded", inv_elr_bounded, False),
    ("committed_bounds", inv_committed_bounds, False),
    ("committed_held", inv_committed_held, False),
    ("isr_holds_hw", inv_isr_holds_hw, True),
    ("elr_holds_hw", inv_elr_holds_hw, True),
)
INV_BY_NAME = {n: (fn, goal) for n, fn, goal in INVARIANTS}


def all_invariants(p, s):
    return [fn(p, s) for _n, fn, _g in INVARIANTS]


# ============================================================================ transitions
def _fresh(st: Step, kind, name: str):
    v = kind(f"{name}_{st.tag}")
    st.fresh.append(v)
    return v


def _new_step(s: St, tag: str) -> Step:
    st = Step(s)
    st.tag = f"{s.tag}_{tag}"
    return st


def _target_elr(p, s: St, target_isr: list, gone: tuple = ()):
    """PartitionChangeBuilder.maybePopulateTargetElr (Kafka 3.7.0; unclean shutdowns 3.9.0): empty when the target
    ISR has min ISR members, else the ELR and the ISR less the target ISR (less replicas that shut down uncleanly)."""
    at_min = card(target_isr) >= p.me
    return [z3.And(z3.Not(at_min), z3.Or(s.f("elr", i), s.f("isr", i)), z3.Not(target_isr[i]), i not in gone)
            for i in REPLICAS]


def _hw_rule(p, st: Step, mutant, counted=None):
    """Partition.maybeIncrementLeaderHW (Kafka 3.7.0): with KAFKA-15583 (isUnderMinIsr) nothing while |ISR| < min ISR;
    else the HW may rise to any offset every ISR member holds (Kafka: the least LEO it knows of, never more).
    ``counted``: the model-realizable HW, max(HW, least LEO of these replicas), the leader's view being exact."""
    l = st.get("l")
    hw = _leader_field(st.get, l, "hw")
    isr = [st.getf("isr", i) for i in REPLICAS]
    gate = z3.BoolVal(True) if mutant == MUTANT else card(isr) >= p.me
    h = _fresh(st, z3.Int, "h")
    held = [z3.Implies(isr[f], h <= _ag_with(st.get, l, f)) for f in REPLICAS]
    st.guard.append(z3.Implies(l >= 0, z3.If(gate, z3.And([hw <= h] + held), h == hw)))
    if counted is not None:
        least = _leader_field(st.get, l, "leo")
        for f in REPLICAS:
            least = z3.If(counted[f], zmin(least, st.getf("leo", f)), least)
        st.guard.append(z3.Implies(l >= 0, h == z3.If(gate, zmax(hw, least), hw)))
    for i in REPLICAS:
        st.set(f"hw{i}", z3.If(l == i, h, st.getf("hw", i)))
    st.set("C", z3.If(l >= 0, zmax(st.get("C"), h), st.get("C")))
    return st


def _set_log(st: Step, f: int, length, via=None):
    """f's log becomes its first ``length`` records (``via`` None) or the first ``length`` of replica ``via``'s."""
    s = st.s
    st.set(f"leo{f}", length)
    for g in REPLICAS:
        if g == f:
            continue
        if via is None:
            st.set(agk(f, g), zmin(s.ag(f, g), length))
        else:    # the prefix f now shares with g is the one via shares with g, cut at length
            st.set(agk(f, g), z3.If(via == g, length, zmin(_ag_with(s.v.get, via, g), length)))


def t_produce(p, s, mutant=None, exact=False, f=None):
    """Partition.appendRecordsToLeader (Kafka 3.7.0): one record, then maybeIncrementLeaderHW."""
    st = _new_step(s, "Produce")
    st.guard.append(s.l >= 0)
    st.set_leader("leo", _leader_field(s.v.get, s.l, "leo") + 1)
    return _hw_rule(p, st, mutant, [s.f("isr", i) for i in REPLICAS] if exact else None)


def t_follower_fetch(p, s, mutant=None, exact=False, f=0):
    """ReplicaFetcherThread.processPartitionData + Partition.updateFollowerFetchState (Kafka 3.7.0): f copies some of
    the leader's records and takes an HW no larger than the leader's; the leader's maybeIncrementLeaderHW."""
    st = _new_step(s, f"FollowerFetch{f}")
    leo_l = _leader_field(s.v.get, s.l, "leo")
    k = _fresh(st, z3.Int, "k")
    hf = _fresh(st, z3.Int, "hf")
    st.guard += [s.l >= 0, s.l != f, _ag_with(s.v.get, s.l, f) == s.f("leo", f), s.f("leo", f) <= k, k <= leo_l,
                 0 <= hf, hf <= zmin(_leader_field(s.v.get, s.l, "hw"), k)]
    if exact:   # all the leader has; the second response carries the HW read before that fetch raised it
        st.guard += [k == leo_l, hf == zmin(_leader_field(s.v.get, s.l, "hw"), k)]
    _set_log(st, f, k, s.l)
    st.set(f"hw{f}", hf)
    return _hw_rule(p, st, mutant, [s.f("isr", i) for i in REPLICAS] if exact else None)


def t_isr_shrink(p, s, mutant=None, exact=False, f=0):
    """ReplicationControlManager (fenced broker or AlterPartition) through PartitionChangeBuilder (Kafka 3.7.0): f
    leaves the ISR, to the ELR when the ISR left is below min ISR; the leader's makeLeader runs the HW rule."""
    st = _new_step(s, f"IsrShrink{f}")
    st.guard += [s.l >= 0, s.l != f, s.f("isr", f)]
    target = [z3.BoolVal(False) if i == f else s.f("isr", i) for i in REPLICAS]
    elr = _target_elr(p, s, target)
    for i in REPLICAS:
        st.set(f"isr{i}", target[i])
        st.set(f"elr{i}", elr[i])
    # the model's leader applies the PartitionChangeRecord before the FenceBrokerRecord: f still counts (in window)
    return _hw_rule(p, st, mutant, [s.f("isr", i) for i in REPLICAS] if exact else None)


def t_isr_expand(p, s, mutant=None, exact=False, f=0):
    """Partition.isFollowerInSync (Kafka 3.7.0): LEO >= HW and >= the epoch start; the controller's
    PartitionChangeBuilder empties the ELR once the ISR has min ISR members (else f leaves it)."""
    st = _new_step(s, f"IsrExpand{f}")
    held = _ag_with(s.v.get, s.l, f)
    st.guard += [s.l >= 0, s.l != f, z3.Not(s.f("isr", f)), held >= _leader_field(s.v.get, s.l, "hw"),
                 held >= s.estart]
    target = [z3.BoolVal(True) if i == f else s.f("isr", i) for i in REPLICAS]
    elr = _target_elr(p, s, target)
    for i in REPLICAS:
        st.set(f"isr{i}", target[i])
        st.set(f"elr{i}", elr[i])
    return _hw_rule(p, st, mutant)


def _elect(p, st: Step, s, e, target: list, elr: list, from_elr):
    """PartitionChangeBuilder.tryElection (Kafka 3.7.0): a leader elected from the ELR alone is the ISR and leaves
    the ELR; Partition.makeLeader: epoch start = its LEO, then maybeIncrementLeaderHW."""
    for i in REPLICAS:
        st.set(f"isr{i}", z3.If(from_elr, e == i, target[i]))
        st.set(f"elr{i}", z3.And(elr[i], z3.Not(z3.And(from_elr, e == i))))
    st.set("l", e)
    st.set("estart", z3.If(e >= 0, pick(e, [s.f("leo", i) for i in REPLICAS]), s.estart))


def t_leader_failure(p, s, mutant=None, exact=False, f=None):
    """ReplicationControlManager.handleBrokerFenced (Kafka 3.7.0): the leader leaves the ISR (to the ELR below min
    ISR); isValidNewLeader: an ISR member, else when the ISR is empty an ELR member (not the fenced leader); or none."""
    st = _new_step(s, "LeaderFailure")
    e = _fresh(st, z3.Int, "e")
    target = [z3.And(s.f("isr", i), s.l != i) for i in REPLICAS]
    elr = _target_elr(p, s, target)
    empty = z3.Not(z3.Or(target))
    in_target = pick(e, target)
    in_elr = pick(e, elr)
    st.guard += [s.l >= 0, -1 <= e, e < N,
                 z3.Or(e == -1, z3.And(e >= 0, in_target), z3.And(e >= 0, empty, in_elr, e != s.l))]
    _elect(p, st, s, e, target, elr, z3.And(e >= 0, empty))
    return _hw_rule(p, st, mutant)


def t_leader_change(p, s, mutant=None, exact=False, f=None):
    """ReplicationControlManager.electLeaders (PREFERRED, Kafka 3.7.0): another ISR member leads; the ISR is kept."""
    st = _new_step(s, "LeaderChange")
    e = _fresh(st, z3.Int, "e")
    isr = [s.f("isr", i) for i in REPLICAS]
    st.guard += [s.l >= 0, 0 <= e, e < N, e != s.l, pick(e, isr)]
    _elect(p, st, s, e, isr, _target_elr(p, s, isr), z3.BoolVal(False))
    return _hw_rule(p, st, mutant)


def t_elect(p, s, mutant=None, exact=False, f=None):
    """ReplicationControlManager.handleBrokerUnfenced (Kafka 3.7.0): a leaderless partition elects from its ISR, or
    from its ELR when the ISR is empty."""
    st = _new_step(s, "Elect")
    e = _fresh(st, z3.Int, "e")
    isr = [s.f("isr", i) for i in REPLICAS]
    elr = [s.f("elr", i) for i in REPLICAS]
    empty = z3.Not(z3.Or(isr))
    st.guard += [s.l == -1, 0 <= e, e < N, z3.Or(pick(e, isr), z3.And(empty, pick(e, elr)))]
    _elect(p, st, s, e, isr, elr, empty)
    return _hw_rule(p, st, mutant)


def t_truncate(p, s, mutant=None, exact=False, f=0):
    """AbstractFetcherThread.truncateOnFetch (Kafka 3.7.0, KIP-320): truncate to the divergence point (HW too)."""
    st = _new_step(s, f"FollowerTruncate{f}")
    to = _ag_with(s.v.get, s.l, f)
    st.guard += [s.l >= 0, s.l != f, to < s.f("leo", f)]
    _set_log(st, f, to)
    st.set(f"hw{f}", zmin(s.f("hw", f), to))
    return st


def t_replica_removed(p, s, mutant=None, exact=False, f=0):
    """ClusterControlManager.registerBroker after an unclean shutdown (Kafka 3.9.0, KIP-966): f leaves the ISR and
    the ELR (handleBrokerUncleanShutdown); its log may have lost any suffix."""
    st = _new_step(s, f"ReplicaRemoved{f}")
    t = _fresh(st, z3.Int, "t")
    st.guard += [s.l != f, 0 <= t, t <= s.f("leo", f)]
    target = [z3.BoolVal(False) if i == f else s.f("isr", i) for i in REPLICAS]
    elr = _target_elr(p, s, target, gone=(f,))
    for i in REPLICAS:
        st.set(f"isr{i}", target[i])
        st.set(f"elr{i}", elr[i])
    _set_log(st, f, t)
    st.set(f"hw{f}", zmin(s.f("hw", f), t))
    return _hw_rule(p, st, mutant)


def t_hw_advance(p, s, mutant=None, exact=False, f=None):
    """Partition.maybeIncrementLeaderHW (Kafka 3.7.0) on its own, at any time (an over-approximation)."""
    st = _new_step(s, "HwAdvance")
    st.guard.append(s.l >= 0)
    return _hw_rule(p, st, mutant)


#: name -> (builder, per replica?, in the model-realizable relation?)
TRANSITIONS = {
    "Produce": (t_produce, False, True),
    "FollowerFetch": (t_follower_fetch, True, True),
    "IsrShrink": (t_isr_shrink, True, True),
    "IsrExpand": (t_isr_expand, True, False),
    "LeaderFailure": (t_leader_failure, False, False),
    "LeaderChange": (t_leader_change, False, False),
    "Elect": (t_elect, False, False),
    "FollowerTruncate": (t_truncate, True, False),
    "ReplicaRemoved": (t_replica_removed, True, False),
    "HwAdvance": (t_hw_advance, False, False),
}


def instances(name, p, s, mutant=None, exact=False):
    """[(label, Step)]: one per replica for per-replica transitions."""
    build, per_replica, _ = TRANSITIONS[name]
    if per_replica:
        return [(f"{name}({f})", build(p, s, mutant, exact, f)) for f in REPLICAS]
    return [(name, build(p, s, mutant, exact))]


def relation(name, p, s, t, mutant=None, exact=False):
    return z3.Or([st.relation(t) for _lab, st in instances(name, p, s, mutant, exact)])


def initial(p, s):
    """QuorumController's PartitionRecord (Kafka 3.7.0): leader 0, ISR (0, 1, 2), empty ELR; logs empty."""
    c = [s.l == 0, s.estart == 0, s.C == 0]
    for i in REPLICAS:
        c += [s.f("isr", i), z3.Not(s.f("elr", i)), s.f("leo", i) == 0, s.f("hw", i) == 0]
    c += [s.ag(i, j) == 0 for i, j in PAIRS]
    return c


# ============================================================================ induction
def state_values(model, s: St) -> dict:
    out = {}
    for key, term in s.v.items():
        v = model.eval(term, model_completion=True)
        out[key] = z3.is_true(v) if z3.is_bool(v) else v.as_long()
    return out


def check_init(name: str) -> tuple[str, dict]:
    p, s = Params(), St("i")
    solver = new_solver()
    solver.add(*p.constraints(), *initial(p, s), z3.Not(INV_BY_NAME[name][0](p, s)))
    r = solver.check()
    if r == z3.unsat:
        return PROVED, {}
    return (CTI, state_values(solver.model(), s)) if r == z3.sat else (UNKNOWN, {})


def check_step(transition: str, name: str, mutant=None, m: int | None = None, without=()) -> tuple[str, str, dict]:
    """(result, instance label, {"pre", "post", "m"}): is ``name`` preserved by ``transition`` from every state
    satisfying all invariants (but those named in ``without``)?"""
    p, s, t = Params(m), St("pre"), St("post")
    goal = INV_BY_NAME[name][0](p, t)
    hyps = [fn(p, s) for n, fn, _g in INVARIANTS if n not in without]
    for lab, st in instances(transition, p, s, mutant):
        solver = new_solver()
        solver.add(*p.constraints(), *hyps, st.relation(t), z3.Not(goal))
        r = solver.check()
        if r == z3.sat:
            mdl = solver.model()
            return CTI, lab, {"pre": state_values(mdl, s), "post": state_values(mdl, t),
                              "m": mdl.eval(p.m, model_completion=True).as_long()}
        if r != z3.unsat:
            return UNKNOWN, lab, {"reason": solver.reason_unknown()}
    return PROVED, "", {}


def transition_enabled(transition: str) -> bool | None:
    """Some state satisfying every invariant has a successor by ``transition`` (None: unknown)."""
    p, s, t = Params(), St("pre"), St("post")
    solver = new_solver()
    solver.add(*p.constraints(), *all_invariants(p, s), relation(transition, p, s, t))
    r = solver.check()
    return True if r == z3.sat else False if r == z3.unsat else None


# ============================================================================ runs of the realizable relation
def _realizable(p, s, t, mutant, k: int):
    """[(label, selector)] and the step from s to t by one model-realizable instance: some selector holds, and each
    selector that holds implies its instance's relation (so a selector never holds by accident)."""
    choices, implied = [], []
    for name, (_b, _pr, realizable) in TRANSITIONS.items():
        if not realizable:
            continue
        for lab, st in instances(name, p, s, mutant, exact=True):
            sel = z3.Bool(f"sel_{k}_{lab}")
            choices.append((lab, sel))
            implied.append(z3.Implies(sel, st.relation(t)))
    return choices, z3.And([z3.Or([sel for _lab, sel in choices])] + implied)


def _canonical(solver, choices) -> None:
    """Fix each step's transition to the first (in ``TRANSITIONS`` order, then replica order) that still leaves the
    query satisfiable, so the run reported does not depend on the solver's search."""
    for step_choices in choices:
        for _lab, sel in step_choices:
            if solver.check(sel) == z3.sat:
                solver.add(sel)
                break


def _decode_run(mdl, states, choices) -> list:
    trace = [("init", state_values(mdl, states[0]))]
    for i, step_choices in enumerate(choices, 1):
        lab = next(lab for lab, sel in step_choices if z3.is_true(mdl.eval(sel, model_completion=True)))
        trace.append((lab, state_values(mdl, states[i])))
    return trace


def reachable_cti(mutant=MUTANT, target: str = "elr_holds_hw", m: int = REPLAY_MIN_ISR, k_max: int = 6) -> dict:
    """The shortest run of the realizable relation from the initial state whose last step goes from a state satisfying
    every invariant to one violating ``target``: {"k", "trace"} (k = steps before the CTI's), or {"k": None}."""
    p = Params(m)
    states = [St("r0")]
    solver = new_solver()
    solver.add(*p.constraints(), *initial(p, states[0]))
    choices: list = []
    for k in range(k_max + 1):
        post = St(f"cti{k}")
        last, disj = _realizable(p, states[k], post, mutant, 10_000 + k)
        solver.push()
        solver.add(*all_invariants(p, states[k]), disj, z3.Not(INV_BY_NAME[target][0](p, post)))
        r = solver.check()
        if r == z3.sat:
            _canonical(solver, choices + [last])
            solver.check()
            trace = _decode_run(solver.model(), states + [post], choices + [last])
            solver.pop()
            return {"k": k, "trace": trace}
        solver.pop()
        if r != z3.unsat:
            return {"k": None, "unknown": solver.reason_unknown()}
        t = St(f"r{k + 1}")
        step_choices, disj = _realizable(p, states[k], t, mutant, k)
        solver.add(disj)
        states.append(t)
        choices.append(step_choices)
    return {"k": None}


def realizable_witness(goal, mutant=None, m: int = REPLAY_MIN_ISR, k_max: int = 6) -> dict:
    """The shortest run of the realizable relation reaching ``goal(p, state)``: {"k", "trace"} or {"k": None}."""
    p = Params(m)
    states = [St("w0")]
    solver = new_solver()
    solver.add(*p.constraints(), *initial(p, states[0]))
    choices: list = []
    for k in range(k_max + 1):
        r = solver.check(goal(p, states[k]))
        if r == z3.sat:
            solver.add(goal(p, states[k]))
            _canonical(solver, choices)
            solver.check()
            return {"k": k, "trace": _decode_run(solver.model(), states, choices)}
        if r != z3.unsat:
            return {"k": None, "unknown": solver.reason_unknown()}
        t = St(f"w{k + 1}")
        step_choices, disj = _realizable(p, states[k], t, mutant, k)
        solver.add(disj)
        states.append(t)
        choices.append(step_choices)
    return {"k": None}


def _pin(s: St, values: dict):
    return [s.v[k] == (z3.BoolVal(v) if isinstance(v, bool) else v) for k, v in values.items()]


def confirm_cti(label: str, pre: dict, post: dict, target: str, mutant=MUTANT, m: int = REPLAY_MIN_ISR) -> str:
    """z3 re-checks a CTI against the *general* relation: pre satisfies every invariant, the general transition
    ``label`` leads to post, post violates ``target`` (PROVED when all hold, else why not)."""
    p, s, t = Params(m), St("cpre"), St("cpost")
    name = label.partition("(")[0]
    steps = dict(instances(name, p, s, mutant))
    st = steps[label]
    solver = new_solver()
    solver.add(*p.constraints(), *_pin(s, pre), *_pin(t, post), st.relation(t))
    if solver.check() != z3.sat:
        return f"{label} (general relation) does not lead from the pre-state to the post-state"
    checks = [(n, fn(p, s)) for n, fn, _g in INVARIANTS] + [(f"not {target}", z3.Not(INV_BY_NAME[target][0](p, t)))]
    for n, cond in checks:
        solver = new_solver()
        solver.add(*p.constraints(), *_pin(s, pre), *_pin(t, post), z3.Not(cond))
        if solver.check() != z3.unsat:
            return f"{n} does not hold"
    return PROVED


# ============================================================================ the executable model
def _lcp(a, b) -> int:
    n = 0
    for o in range(min(a.log_end_offset, b.log_end_offset)):
        if a.entry_at(o) != b.entry_at(o):
            break
        n += 1
    return n


def observe(s) -> dict:
    """The abstract state's fields read off a model state: the controller's partition registration (leader, ISR,
    ELR), every log (LEO, HW, common prefixes) and the leader's epoch start offset.  C, a ghost, is not read."""
    reg = s.quorum.partitions[0]
    logs = [br.logs[0] for br in s.brokers]
    out = {"l": -1 if reg.leader == NO_LEADER else reg.leader}
    for i in REPLICAS:
        out[f"isr{i}"] = i in reg.isr
        out[f"elr{i}"] = i in reg.elr
        out[f"leo{i}"] = logs[i].log_end_offset if logs[i] is not None else 0
        out[f"hw{i}"] = logs[i].high_watermark if logs[i] is not None else 0
    for i, j in PAIRS:
        out[agk(i, j)] = _lcp(logs[i], logs[j]) if logs[i] is not None and logs[j] is not None else 0
    if out["l"] >= 0:
        part = s.brokers[out["l"]].partitions[0]
        out["estart"] = part.leader_epoch_start_offset
    return out


def compared(values: dict) -> dict:
    """The fields a replay compares: every one but the ghost C (and the epoch start of a leaderless partition)."""
    return {k: v for k, v in values.items() if k != "C" and not (k == "estart" and values["l"] < 0)}


class ReplayError(AssertionError):
    """A model action the trace needs is not enabled."""


class Replay:
    """A model run under construction: ``do`` applies actions with ``step``; ``sync`` replays every committed metadata
    record on every live broker (the abstraction's leader knows the controller's ISR at once)."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.s = initial_state(cfg)
        self.actions: list = []

    def do(self, *acts) -> None:
        for a in acts:
            s2 = step(self.cfg, self.s, a)
            if s2 is None:
                raise ReplayError(f"{A.describe(a)} is not enabled")
            self.s = s2
            self.actions.append(a)

    def sync(self) -> None:
        while True:
            ms = enabled_actions(self.cfg, self.s, {A.MetadataApply})
            if not ms:
                return
            self.do(ms[0])


def _fetch_macro(r: Replay, f: int) -> None:
    """FollowerFetch(f), realizable: a truncation round if the fetcher is new, then two fetches, so the follower has
    every record and the leader knows its LEO (its HW rule runs on exact LEOs)."""
    fetcher = r.s.brokers[f].fetchers[0]
    if fetcher is not None and fetcher.state == "truncating":
        r.do(A.OffsetsForLeaderEpoch(f, 0))
    r.do(A.FetchRequest(f, 0), A.FetchResponse(f, 0), A.FetchRequest(f, 0), A.FetchResponse(f, 0))


def _shrink_macro(r: Replay, f: int) -> None:
    """IsrShrink(f), realizable: f's heartbeats are lost and the controller fences it (handleBrokerFenced)."""
    r.do(A.HeartbeatsLost(f), A.FenceStaleBroker(f))


#: abstract transition -> its model actions (every committed metadata record is then applied everywhere)
MACROS = {
    "Produce": lambda r, f: r.do(A.Produce(0, 0, 1)),
    "FollowerFetch": _fetch_macro,
    "IsrShrink": _shrink_macro,
}


def replay_config(kafka_15583: bool, shrinks: int):
    cfg = preset(PRESET).config
    return cfg.replace(kafka_15583=kafka_15583,
                       max_session_expirations=max(cfg.max_session_expirations, shrinks),
                       max_records=max(cfg.max_records, 16))


def replay(trace: list, kafka_15583: bool) -> dict:
    """Run an abstract trace of the realizable relation on the model; {"verdict", "actions", "violation", ...}.

    With ``kafka_15583`` off every step must reproduce the abstract state (else ``ENCODING BUG``)."""
    shrinks = sum(lab.startswith("IsrShrink") for lab, _ in trace)
    cfg = replay_config(kafka_15583, shrinks)
    if (cfg.n_brokers, cfg.replication_factor, cfg.min_insync_replicas) != (N, N, REPLAY_MIN_ISR):
        return {"verdict": f"ENCODING BUG: preset {PRESET} is not 3 brokers, RF 3, min ISR {REPLAY_MIN_ISR}"}
    r = Replay(cfg)
    r.sync()
    diffs = []
    try:
        for i, (label, values) in enumerate(trace):
            if i > 0:
                name, _, arg = label.partition("(")
                MACROS[name](r, int(arg.rstrip(")")) if arg else None)
                r.sync()
            seen = observe(r.s)
            want = compared(values)
            diff = {k: (v, seen.get(k)) for k, v in want.items() if seen.get(k) != v}
            if diff:
                diffs.append((i, label, diff))
    except ReplayError as e:
        return {"verdict": f"not enabled: {e}", "actions": [A.describe(a) for a in r.actions], "enabled": False}
    vs = check_state(cfg, r.s, len(r.actions), (BY_NAME["committed_prefix"],))
    return {"verdict": "ok", "actions": [A.describe(a) for a in r.actions], "enabled": True, "diffs": diffs,
            "violation": vs[0].facts if vs else None, "final": observe(r.s), "replay": r}


def replay_actions(actions: list, kafka_15583: bool, shrinks: int) -> dict:
    """The same model actions under another config: whether each is enabled, and committed_prefix on every state."""
    cfg = replay_config(kafka_15583, shrinks)
    r = Replay(cfg)
    inv = (BY_NAME["committed_prefix"],)
    for i, a in enumerate(actions):
        try:
            r.do(a)
        except ReplayError as e:
            return {"enabled": False, "at": i, "reason": str(e), "violation": None}
        vs = check_state(cfg, r.s, i + 1, inv)
        if vs:
            return {"enabled": True, "violation": vs[0].facts, "at": i}
    return {"enabled": True, "violation": None, "final": observe(r.s)}


# ============================================================================ claims
def invariant_claim(name: str, goal: bool) -> Claim:
    kind = "goal" if goal else "lemma"
    claim = Claim(f"{GROUP}.{name}", GROUP, f"{kind} {name} holds initially and is preserved by every transition "
                  "(assuming all invariants; symbolic min ISR)", PROVED)
    with Timer() as t:
        matrix = {"init": check_init(name)[0]}
        for tr in TRANSITIONS:
            res, lab, _ = check_step(tr, name)
            matrix[tr] = res if res != CTI else f"CTI ({lab})"
    claim.seconds = t.seconds
    failed = {k: v for k, v in matrix.items() if v != PROVED}
    claim.result = PROVED if not failed else (UNKNOWN if UNKNOWN in failed.values() else COUNTEREXAMPLE)
    claim.facts = {"matrix": matrix}
    claim.bound = f"{len(matrix) - len(failed)}/{len(matrix)} proved"
    return claim


def transitions_enabled_claim() -> Claim:
    """Vacuity guard: every transition is enabled in some state that satisfies all invariants."""
    claim = Claim(f"{GROUP}.transitions_enabled", GROUP, "every transition is enabled in some state that satisfies "
                  "all invariants (the proofs are not vacuous)", WITNESS)
    with Timer() as t:
        answers = {tr: transition_enabled(tr) for tr in TRANSITIONS}
    claim.seconds = t.seconds
    disabled = [tr for tr, ok in answers.items() if ok is not True]
    claim.result = WITNESS if not disabled else UNKNOWN
    claim.bound = f"{len(TRANSITIONS) - len(disabled)}/{len(TRANSITIONS)} enabled"
    claim.facts = {"disabled": disabled}
    return claim


def _describe(values: dict) -> str:
    isr = [i for i in REPLICAS if values[f"isr{i}"]]
    elr = [i for i in REPLICAS if values[f"elr{i}"]]
    l = values["l"]
    leos = ", ".join(str(values[f"leo{i}"]) for i in REPLICAS)
    return f"leader {l}, ISR {isr}, ELR {elr}, LEOs ({leos}), HW {values[f'hw{l}'] if l >= 0 else '-'}"


def cross_check(trace: list, target_elr: bool = True) -> tuple[str, dict]:
    """Replay a realizable trace with the rule off (must reproduce it and, if ``target_elr``, break committed_prefix on
    an ELR member) and the same model actions with the rule on; (verdict, facts)."""
    off = replay(trace, kafka_15583=False)
    facts = {"model_actions": off.get("actions", [])}
    if not off.get("enabled"):
        return f"ENCODING BUG: rule off: {off['verdict']}", facts
    if off["diffs"]:
        i, label, diff = off["diffs"][0]
        return f"ENCODING BUG: after step {i} ({label}) abstract vs model differ: {diff}", facts
    v = off["violation"]
    facts["rule_off_violation"] = v
    if target_elr and (v is None or not v.get("eligible_leader_replica")):
        return f"ENCODING BUG: the model reproduces the trace but committed_prefix {'holds' if v is None else v}", facts
    shrinks = sum(lab.startswith("IsrShrink") for lab, _ in trace)
    on = replay_actions(off["replay"].actions, True, shrinks)
    facts["rule_on"] = {k: v for k, v in on.items() if k != "final"}
    if on["violation"] is not None:
        return f"ENCODING BUG: with kafka_15583 on the same actions break committed_prefix: {on['violation']}", facts
    n = len(off["actions"])
    if on["enabled"]:
        final = on["final"]
        facts["rule_on_final"] = final
        tail = f"with kafka_15583 on the same {n} actions break nothing ({_describe(final)})"
    else:
        tail = f"with kafka_15583 on action {on['at']} is refused ({on['reason']})"
    if v is None:
        return f"model agrees: {n} model actions reproduce every state; {tail}", facts
    return (f"model agrees: {n} model actions reproduce every state, then committed_prefix fails: ELR member "
            f"{v['follower']} lacks offset {v['offset']} below leader {v['leader']}'s HW {v['high_watermark']}; "
            f"{tail}"), facts


def rule_off_claim() -> Claim:
    """The mutant: KAFKA-15583's isUnderMinIsr test dropped; z3 must give a CTI for elr_holds_hw that the model replays."""
    claim = Claim(f"{GROUP}.{MUTANT}", GROUP, "mutant caught: the HW advances whatever |ISR| (KAFKA-15583 off); "
                  "a CTI of elr_holds_hw replays on the model (no-kafka-15583)", COUNTEREXAMPLE)
    unknown = False
    with Timer() as t:
        matrix, first = {}, None
        for tr in TRANSITIONS:
            res, lab, vals = check_step(tr, "elr_holds_hw", MUTANT)
            matrix[tr] = res if res != CTI else f"CTI ({lab})"
            unknown = unknown or res == UNKNOWN
            if res == CTI and first is None:
                first = {"transition": lab, **vals}
        broken = []
        for name, _fn, _g in INVARIANTS:
            if name != "elr_holds_hw" and any(check_step(tr, name, MUTANT)[0] != PROVED for tr in TRANSITIONS):
                broken.append(name)
        found = reachable_cti()
        claim.facts = {"matrix": matrix, "cti": first, "also_not_inductive": broken,
                       "reachable_cti": None if found["k"] is None else {
                           "steps_before": found["k"], "trace": [lab for lab, _ in found["trace"]],
                           "pre": found["trace"][-2][1], "post": found["trace"][-1][1]}}
        parts = [f"CTI {first['transition']}/elr_holds_hw" if first else "no CTI for elr_holds_hw"]
        if found["k"] is None:
            unknown = unknown or "unknown" in found
            parts.append("no reachable CTI")
        else:
            label, pre, post = found["trace"][-1][0], found["trace"][-2][1], found["trace"][-1][1]
            confirmed = confirm_cti(label, pre, post, "elr_holds_hw")
            claim.facts["reachable_cti"]["confirmed"] = confirmed
            if confirmed != PROVED:
                claim.cti_check = f"ENCODING BUG: the realizable step is no CTI of the general relation: {confirmed}"
            else:
                claim.cti_check, more = cross_check(found["trace"])
                claim.facts.update(more)
            parts.append(f"reachable CTI {label} after {found['k']} steps (m=2): {_describe(pre)} -> {_describe(post)}")
            parts.append("replayed in model" if claim.cti_check.startswith("model agrees") else "REPLAY FAILED")
        claim.result = UNKNOWN if unknown else COUNTEREXAMPLE if first and found["k"] is not None else PROVED
        claim.bound = "; ".join(parts)
    claim.seconds = t.seconds
    return claim


def goal_hw_at_min_isr(p, s):
    """The HW has advanced while the ISR has exactly min ISR members (the rule is strict: |ISR| >= m is enough)."""
    return z3.And(s.l >= 0, _leader_field(s.v.get, s.l, "hw") >= 1, card([s.f("isr", i) for i in REPLICAS]) == p.me)


def hw_at_min_isr_claim() -> Claim:
    """Not vacuous in the other direction: with the rule, the HW still advances at exactly min ISR, in the model too."""
    claim = Claim(f"{GROUP}.hw_advances_at_min_isr", GROUP, "with the rule the HW advances while |ISR| = min ISR "
                  "(realizable run, m=2); the trace replays in the model with kafka_15583 on", WITNESS)
    with Timer() as t:
        found = realizable_witness(goal_hw_at_min_isr)
        if found["k"] is None:
            claim.result = UNKNOWN if "unknown" in found else NO_WITNESS
        else:
            trace = found["trace"]
            claim.result = WITNESS
            claim.facts = {"k": found["k"], "trace": [lab for lab, _ in trace], "last": trace[-1][1]}
            shrinks = sum(lab.startswith("IsrShrink") for lab, _ in trace)
            on = replay(trace, kafka_15583=True)
            if not on.get("enabled"):
                claim.crosscheck = f"ENCODING BUG: rule on: {on['verdict']}"
            elif on["diffs"]:
                i, label, diff = on["diffs"][0]
                claim.crosscheck = f"ENCODING BUG: after step {i} ({label}) abstract vs model differ: {diff}"
            elif on["violation"] is not None:
                claim.crosscheck = f"ENCODING BUG: committed_prefix fails with the rule on: {on['violation']}"
            else:
                claim.crosscheck = (f"model agrees: {len(on['actions'])} model actions (kafka_15583 on, {shrinks} "
                                    f"fenced) reproduce every state; {_describe(on['final'])}")
            claim.facts["model_actions"] = on.get("actions", [])
            claim.bound = f"k={found['k']}: {' '.join(lab for lab, _ in trace[1:])}; " + (
                "replayed in model" if claim.crosscheck.startswith("model agrees") else "REPLAY FAILED")
    claim.seconds = t.seconds
    return claim


#: claim name -> its builder, in ``isrlab prove`` order
CLAIMS = {**{f"{GROUP}.{n}": (lambda n=n, g=g: invariant_claim(n, g)) for n, _fn, g in INVARIANTS},
          f"{GROUP}.transitions_enabled": transitions_enabled_claim,
          f"{GROUP}.{MUTANT}": rule_off_claim,
          f"{GROUP}.hw_advances_at_min_isr": hw_at_min_isr_claim}


def claim(name: str) -> Claim:
    return CLAIMS[name]()


def claims() -> list[Claim]:
    return [claim(n) for n in CLAIMS]
