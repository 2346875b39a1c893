"""Inductive invariants of one partition's replication (3 replicas, any number of records), with z3.

Every state, invariant and transition takes the number of replicas from the state (``St(tag, n)``, ``N``
= 3 unless told); only the bit-blasted BMC of ``deep_bmc`` uses four (``expand_no_epoch_start``).

The state is the leader's side of ``kafka.cluster.Partition`` (Kafka 2.4.0) plus what the
followers' logs look like, abstracted so that the number of records is symbolic:

* ``leo[i]``, ``hw[i]``: each replica's log end offset and high watermark;
* ``ag[i,j]``: the length of the longest common prefix of the logs of i and j (records are unique,
  so an append never extends a common prefix, and the logs make ``ag`` an ultrametric);
* ``l``, ``epoch``, ``estart``: the leader, its leader epoch and leaderEpochStartOffset;
* ``isr[i]``; per remote replica the leader's ``Replica`` fields ``rleo`` (logEndOffset),
  ``lcu`` (lastCaughtUpTimeMs), ``lfleo`` (lastFetchLeaderLogEndOffset), ``lft`` (lastFetchTimeMs);
* ``now`` and ``nexp``, the next due time of the leader's isr-expiration task;
* ghosts: ``C`` the largest HW any leader ever had (what has been exposed as committed),
  ``behind[f]`` since when an ISR follower has been continuously behind, ``at[o]`` when the
  current leader appended offset o (a constant array at the leader's election).

Transitions (``TRANSITIONS``): ``Produce`` (leader append, then maybeIncrementLeaderHW),
``FetchRequest`` (updateFetchState, maybeExpandIsr, maybeIncrementLeaderHW if the LEO changed; the
response in flight keeps the leader LEO and the HW read *before* the fetch) and ``FetchResponse``
(the follower appends and takes that HW), ``IsrExpiration`` (maybeShrinkIsr,
then the HW), ``IsrExpand`` and ``HwAdvance`` on their own (over-approximations: Kafka runs them
only inside a fetch or an append, here at any time), ``LeaderChange`` (a controller election:
new leader from the ISR, epoch + 1, makeLeader's M7/M8/M9), ``FollowerTruncate`` (the
KIP-279 round: truncate to the divergence point) and ``Tick``.  ``bmc=True`` restricts the
relation to what the model's controller does (the old leader stops; the new leader is the first
live ISR member; the ISR loses the old leader) so BMC traces replay in the model.
"""

from __future__ import annotations

import itertools

import z3

N = 3
REPLICAS = range(N)
PAIRS = tuple(itertools.combinations(REPLICAS, 2))
PER = ("isr", "alive", "leo", "hw", "rleo", "lcu", "lfleo", "lft", "behind", "inflight", "rend", "rhw")
SCALARS = ("l", "epoch", "estart", "now", "nexp", "C")


def pick(sel, values):
    """``values[sel]`` as an If-chain on the integer ``sel`` (the last value when no earlier index matches)."""
    acc = values[-1]
    for i in reversed(range(len(values) - 1)):
        acc = z3.If(sel == i, values[i], acc)
    return acc


class St:
    """The z3 variables of one state (``n`` replicas, ``N`` unless told)."""

    def __init__(self, tag: str, n: int = N, ghost_at: bool = True):
        self.tag = tag
        self.n = n
        self.R = range(n)
        self.v: dict = {}
        for name in PER:
            for i in self.R:
                key = f"{name}{i}"
                self.v[key] = (z3.Bool if name in ("isr", "alive", "inflight") else z3.Int)(f"{key}_{tag}")
        for i, j in itertools.combinations(self.R, 2):
            self.v[f"ag{i}{j}"] = z3.Int(f"ag{i}{j}_{tag}")
        for name in SCALARS:
            self.v[name] = z3.Int(f"{name}_{tag}")
        if ghost_at:   # the append-time ghost (only lag_sound and lag_previous_fetch read it)
            self.v["at"] = z3.Array(f"at_{tag}", z3.IntSort(), z3.IntSort())

    def __getattr__(self, name):
        if name in ("tag", "v", "n", "R"):
            raise AttributeError(name)
        return self.v[name]

    def f(self, name: str, i: int):
        return self.v[f"{name}{i}"]

    def ag(self, i: int, j: int):
        if i == j:
            return self.f("leo", i)
        return self.v[f"ag{min(i, j)}{max(i, j)}"]

    def at_leader(self, name: str):
        """``name`` of the leader: If-chain on l."""
        return pick(self.l, [self.f(name, i) for i in self.R])

    def ag_leader(self, i: int):
        return pick(self.l, [self.ag(i, j) for j in self.R])

    def is_leader(self, i: int):
        return self.l == i


class Params:
    """replica.lag.time.max.ms, the isr-expiration period and the scheduler jitter."""

    def __init__(self):
        self.L, self.P, self.J = z3.Ints("L P J")

    def kafka(self, lag: int | None = None, jitter: int | None = None):
        """ReplicaManager.startup (Kafka 2.4.0): period = replicaLagTimeMaxMs / 2."""
        return [self.L >= 2 if lag is None else self.L == lag, self.P == self.L / 2,
                self.J >= 0 if jitter is None else self.J == jitter]


def zmax(a, b):
    return z3.If(a >= b, a, b)


def zmin(a, b):
    return z3.If(a <= b, a, b)


# ============================================================================ invariants
def _followers(s: St, body):
    """body(f) for every replica f that is not the leader."""
    return z3.And([z3.Implies(s.l != f, body(f)) for f in s.R])


def inv_log_offsets(p, s):
    """Log.updateHighWatermark (Kafka 2.4.0, I5): 0 <= HW <= LEO on every replica."""
    return z3.And([z3.And(0 <= s.f("hw", i), s.f("hw", i) <= s.f("leo", i)) for i in s.R])


def inv_prefix_lengths(p, s):
    """Common prefixes of the logs: bounded by both LEOs, and an ultrametric (abstraction well-formedness)."""
    out = []
    for i, j in itertools.combinations(s.R, 2):
        out += [0 <= s.ag(i, j), s.ag(i, j) <= s.f("leo", i), s.ag(i, j) <= s.f("leo", j)]
    for i, j, k in itertools.permutations(s.R, 3):
        out.append(s.ag(i, k) >= zmin(s.ag(i, j), s.ag(j, k)))
    return z3.And(out)


def inv_leader_in_isr(p, s):
    """Partition ISR holds the leader (I6); leaderEpochStartOffset <= leader LEO."""
    return z3.And(0 <= s.l, s.l < s.n, s.at_leader("isr"), 0 <= s.estart, s.estart <= s.at_leader("leo"))


def inv_remote_leo_is_prefix(p, s):
    """Replica.logEndOffset as the leader knows it is a common prefix with the leader (-1 before any fetch)."""
    return _followers(s, lambda f: z3.And(-1 <= s.f("rleo", f), s.f("rleo", f) <= s.ag_leader(f)))


def inv_inflight_response(p, s):
    """A fetch response in flight holds the leader's records [follower LEO, rend) and the HW read before the
    fetch (rhw <= rend, rhw <= C); the follower is still a prefix of the leader."""
    return z3.And([z3.Implies(s.f("inflight", f), z3.And(
        s.l != f, s.ag_leader(f) == s.f("leo", f), s.f("leo", f) <= s.f("rend", f),
        s.f("rend", f) <= s.at_leader("leo"), 0 <= s.f("rhw", f), s.f("rhw", f) <= s.f("rend", f),
        s.f("rhw", f) <= s.C)) for f in s.R])


def inv_hw_below_isr_remote_leo(p, s):
    """HW <= the leader's view of every ISR follower that has fetched in this epoch."""
    return _followers(s, lambda f: z3.Implies(z3.And(s.f("isr", f), s.f("rleo", f) >= 0),
                                              s.at_leader("hw") <= s.f("rleo", f)))


def inv_committed_bounds(p, s):
    """Ghost C (largest HW ever exposed): every replica's HW <= C, and C <= max(leader HW, epoch start)."""
    return z3.And([s.f("hw", i) <= s.C for i in s.R] + [0 <= s.C, s.C <= zmax(s.at_leader("hw"), s.estart)])


def inv_committed_durable(p, s):
    """I4/I1 core: every ISR member holds the leader's log up to every HW ever exposed (C)."""
    return z3.And([z3.Implies(s.f("isr", f), s.ag_leader(f) >= s.C) for f in s.R])


def inv_hw_within_isr(p, s):
    """GOAL hw_within_isr: the leader's HW <= the LEO of every ISR member (Partition.maybeIncrementLeaderHW)."""
    return z3.And([z3.Implies(s.f("isr", f), s.at_leader("hw") <= s.f("leo", f)) for f in s.R])


def inv_committed_prefix(p, s):
    """GOAL committed_prefix (StrongIsr): every ISR member holds the leader's records below its HW."""
    return z3.And([z3.Implies(s.f("isr", f), s.ag_leader(f) >= s.at_leader("hw")) for f in s.R])


def inv_clock(p, s):
    """lastCaughtUpTimeMs, lastFetchTimeMs and the ghost behind-since are in [0, now]; the task is never late by
    more than J and next due at most P ahead (KafkaScheduler fixed rate)."""
    out = [s.nexp <= s.now + p.P, s.now <= s.nexp + p.J]
    for f in s.R:
        out += [0 <= s.f("lcu", f), s.f("lcu", f) <= s.now, 0 <= s.f("lft", f), s.f("lft", f) <= s.now,
                s.f("behind", f) <= s.now]
    return z3.And(out)


def _behind_isr(s, f):
    return z3.And(s.l != f, s.f("isr", f), s.f("rleo", f) < s.at_leader("leo"))


def _lag_reference(p, s, f):
    return zmax(s.f("lcu", f) + p.L, s.f("behind", f))


def inv_lag_next_run(p, s):
    """The next isr-expiration run is due by max(lastCaughtUpTimeMs + L, behind since) + P for a lagging ISR follower."""
    return z3.And([z3.Implies(_behind_isr(s, f), s.nexp <= _lag_reference(p, s, f) + p.P) for f in s.R])


def inv_lag_bound(p, s):
    """GOAL lag_bound: a lagging ISR follower is out by max(lastCaughtUpTimeMs + L, behind since) + P + J."""
    return z3.And([z3.Implies(_behind_isr(s, f), s.now <= _lag_reference(p, s, f) + p.P + p.J) for f in s.R])


def _missing(s, f, lower, o):
    return z3.And(lower <= o, o < s.at_leader("leo"))


def inv_lag_previous_fetch(p, s):
    """Every record at or above the leader LEO seen by a follower's previous fetch was appended after that fetch."""
    o = z3.Int("o")
    return _followers(s, lambda f: z3.ForAll([o], z3.Implies(_missing(s, f, s.f("lfleo", f), o),
                                                             s.f("lft", f) <= z3.Select(s.at, o))))


def inv_lag_sound(p, s):
    """GOAL lag_sound: lastCaughtUpTimeMs is no later than the append of any record the follower lacks (lag is
    measured from real appends, never under-estimated)."""
    o = z3.Int("o")
    return _followers(s, lambda f: z3.ForAll([o], z3.Implies(_missing(s, f, s.f("rleo", f), o),
                                                             s.f("lcu", f) <= z3.Select(s.at, o))))


#: (name, check, is_goal): the lemmas first, then the goals.
INVARIANTS = (
    ("log_offsets", inv_log_offsets, False),
    ("prefix_lengths", inv_prefix_lengths, False),
    ("leader_in_isr", inv_leader_in_isr, False),
    ("remote_leo_is_prefix", inv_remote_leo_is_prefix, False),
    ("inflight_response", inv_inflight_response, False),
    ("hw_below_isr_remote_leo", inv_hw_below_isr_remote_leo, False),
    ("committed_bounds", inv_committed_bounds, False),
    ("clock", inv_clock, False),
    ("lag_next_run", inv_lag_next_run, False),
    ("lag_previous_fetch", inv_lag_previous_fetch, False),
    ("committed_durable", inv_committed_durable, True),
    ("hw_within_isr", inv_hw_within_isr, True),
    ("committed_prefix", inv_committed_prefix, True),
    ("lag_bound", inv_lag_bound, True),
    ("lag_sound", inv_lag_sound, True),
)
INV_BY_NAME = {n: (fn, goal) for n, fn, goal in INVARIANTS}


def all_invariants(p, s):
    return [fn(p, s) for _n, fn, _g in INVARIANTS]


# ============================================================================ step properties
def _removed(s, t, f):
    return z3.And(s.l == t.l, s.epoch == t.epoch, s.l != f, s.f("isr", f), z3.Not(t.f("isr", f)))


def step_shrink_only_out_of_sync(p, s, t):
    """STEP shrink_only_out_of_sync (SH3, KAFKA-7152): a follower at the leader's LEO is never removed."""
    return z3.And([z3.Implies(_removed(s, t, f), s.f("rleo", f) != s.at_leader("leo")) for f in s.R])


def step_shrink_after_lag(p, s, t):
    """STEP shrink_after_lag (SH3): a follower is removed only when now - lastCaughtUpTimeMs > L (strict)."""
    return z3.And([z3.Implies(_removed(s, t, f), s.now - s.f("lcu", f) > p.L) for f in s.R])


STEP_PROPERTIES = (
    ("shrink_only_out_of_sync", step_shrink_only_out_of_sync),
    ("shrink_after_lag", step_shrink_after_lag),
)
STEP_BY_NAME = dict(STEP_PROPERTIES)


# ============================================================================ transitions
class Step:
    """A transition under construction: its guard, the new values of the fields it changes, and its own variables
    (``fresh``: chosen by the transition, part of neither state)."""

    def __init__(self, s: St):
        self.s = s
        self.guard: list = []
        self.new: dict = {}
        self.fresh: list = []

    def get(self, key):
        return self.new.get(key, self.s.v[key])

    def set(self, key, value):
        self.new[key] = value

    def getf(self, name, i):
        return self.get(f"{name}{i}")

    def leader(self, name):
        s = self.s
        return pick(s.l, [self.getf(name, i) for i in s.R])

    def set_leader(self, name, value):
        for i in self.s.R:
            self.set(f"{name}{i}", z3.If(self.s.l == i, value, self.getf(name, i)))

    def relation(self, t: St):
        return z3.And(self.guard + [t.v[k] == self.get(k) for k in self.s.v])


def maybe_increment_leader_hw(p, st: Step, mutant: str | None):
    """Partition.maybeIncrementLeaderHW (Kafka 2.4.0, HW1-HW3): min LEO over the ISR and replicas caught up
    within L, raised monotonically; the ghost C follows."""
    s = st.s
    leo = st.leader("leo")
    new_hw = leo
    if mutant != "hw_max_not_min":
        for f in s.R:
            in_window = s.now - st.getf("lcu", f) <= p.L
            counted = in_window if mutant == "hw_ignores_isr" else z3.Or(in_window, st.getf("isr", f))
            new_hw = z3.If(z3.And(s.l != f, counted, st.getf("rleo", f) < new_hw), st.getf("rleo", f), new_hw)
    hw = st.leader("hw")
    raised = zmax(hw, new_hw)
    st.set_leader("hw", raised)
    st.set("C", zmax(s.C, raised))


def t_produce(p, s, mutant=None, bmc=False, f=None):
    """ReplicaManager.appendRecords + Partition.appendRecordsToLeader (Kafka 2.4.0, P4): one record, then the HW."""
    st = Step(s)
    if bmc:
        st.guard.append(s.at_leader("alive"))
    leo = s.at_leader("leo")
    st.set_leader("leo", leo + 1)
    if "at" in s.v:
        st.set("at", z3.Store(s.at, leo, s.now))
    for g in s.R:
        caught_up = z3.And(s.l != g, s.f("isr", g), s.f("rleo", g) == leo)
        st.set(f"behind{g}", z3.If(caught_up, s.now, s.f("behind", g)))
    maybe_increment_leader_hw(p, st, mutant)
    return st


def is_follower_in_sync(s, fetch_offset, mutant):
    """Partition.isFollowerInSync (Kafka 2.4.0, EX2): LEO >= HW and, with KAFKA-7128, >= the epoch start offset."""
    conds = []
    if mutant != "expand_below_hw":
        conds.append(fetch_offset >= s.at_leader("hw"))
    if mutant != "expand_no_epoch_start":
        conds.append(fetch_offset >= s.estart)
    return z3.And(conds)


def update_fetch_state(p, st: Step, f, mutant):
    """Replica.updateFetchState (Kafka 2.4.0, RS1-RS4) for a fetch at the follower's LEO."""
    s = st.s
    fetch_offset = s.f("leo", f)
    leader_end = s.at_leader("leo")
    lcu = s.f("lcu", f)
    if mutant == "caught_up_on_every_fetch":
        new_lcu = zmax(lcu, s.now)
    else:
        new_lcu = z3.If(fetch_offset >= leader_end, zmax(lcu, s.now),
                        z3.If(fetch_offset >= s.f("lfleo", f), zmax(lcu, s.f("lft", f)), lcu))
    st.set(f"lcu{f}", new_lcu)
    st.set(f"rleo{f}", fetch_offset)
    st.set(f"lfleo{f}", leader_end)
    st.set(f"lft{f}", s.now)


def t_fetch_request(p, s, mutant=None, bmc=False, f=0):
    """Partition.updateFollowerFetchState (Kafka 2.4.0, 1.6): fetch state, maybeExpandIsr, maybeIncrementLeaderHW
    if the LEO changed; the response keeps the leader LEO and the HW read *before* (FE4)."""
    st = Step(s)
    st.guard += [s.l != f, s.ag_leader(f) == s.f("leo", f), z3.Not(s.f("inflight", f))]
    if bmc:
        st.guard += [s.f("alive", f), s.at_leader("alive")]
    leader_leo = s.at_leader("leo")
    fetch_offset = s.f("leo", f)
    st.set(f"inflight{f}", z3.BoolVal(True))
    st.set(f"rend{f}", leader_leo)
    st.set(f"rhw{f}", s.at_leader("hw"))
    update_fetch_state(p, st, f, mutant)
    expand = z3.And(z3.Not(s.f("isr", f)), is_follower_in_sync(s, fetch_offset, mutant))
    st.set(f"isr{f}", z3.Or(s.f("isr", f), expand))
    st.set(f"behind{f}", z3.If(z3.And(expand, fetch_offset < leader_leo), s.now, s.f("behind", f)))
    hw_step = Step(s)
    hw_step.new = dict(st.new)
    maybe_increment_leader_hw(p, hw_step, mutant)
    changed = fetch_offset != s.f("rleo", f)
    for key in [f"hw{i}" for i in s.R] + ["C"]:
        st.set(key, z3.If(changed, hw_step.get(key), s.v[key]))
    return st


def t_fetch_response(p, s, mutant=None, bmc=False, f=0):
    """AbstractFetcherThread.processFetchRequest, response half (Kafka 2.4.0, FO1-FO2): append, HW := the
    response's HW clamped to the new LEO."""
    st = Step(s)
    st.guard.append(s.f("inflight", f))
    if bmc:
        st.guard.append(s.f("alive", f))
    end = s.f("rend", f)
    st.set(f"inflight{f}", z3.BoolVal(False))
    st.set(f"leo{f}", end)
    for g in s.R:
        if g != f:
            st.set(f"ag{min(f, g)}{max(f, g)}", z3.If(s.l == g, end, zmin(s.ag_leader(g), end)))
    st.set(f"hw{f}", zmin(s.f("rhw", f), end))
    return st


def out_of_sync(p, s, f, mutant):
    """Partition.isFollowerOutOfSync (Kafka 2.4.0, SH3): LEO != leader LEO and now - lastCaughtUpTimeMs > L."""
    lag = s.now - s.f("lcu", f)
    late = lag >= p.L if mutant == "shrink_ge" else lag > p.L
    if mutant == "shrink_no_leo_guard":
        return late
    return z3.And(s.f("rleo", f) != s.at_leader("leo"), late)


def t_isr_expiration(p, s, mutant=None, bmc=False, f=None):
    """ReplicaManager.maybeShrinkIsr run on the leader (Kafka 2.4.0, SH1-SH6): remove out-of-sync followers, then
    the HW; the task is due again P later."""
    st = Step(s)
    st.guard.append(s.now >= s.nexp)
    if bmc:
        st.guard.append(s.at_leader("alive"))
    earlier = z3.BoolVal(False)
    any_out = z3.BoolVal(False)
    for g in s.R:
        out = z3.And(s.l != g, s.f("isr", g), out_of_sync(p, s, g, mutant))
        if mutant == "shrink_one_at_a_time":
            out = z3.And(out, z3.Not(earlier))
        earlier = z3.Or(earlier, out)
        any_out = z3.Or(any_out, out)
        st.set(f"isr{g}", z3.And(s.f("isr", g), z3.Not(out)))
    hw_step = Step(s)
    hw_step.new = dict(st.new)
    maybe_increment_leader_hw(p, hw_step, mutant)
    for key in [f"hw{i}" for i in s.R] + ["C"]:
        st.set(key, z3.If(any_out, hw_step.get(key), s.v[key]))
    st.set("nexp", s.nexp + p.P)
    return st


def t_isr_expand(p, s, mutant=None, bmc=False, f=0):
    """Partition.maybeExpandIsr (Kafka 2.4.0, EX1-EX5) on its own, at any time."""
    st = Step(s)
    st.guard += [s.l != f, z3.Not(s.f("isr", f)), is_follower_in_sync(s, s.f("rleo", f), mutant)]
    st.set(f"isr{f}", z3.BoolVal(True))
    st.set(f"behind{f}", z3.If(s.f("rleo", f) < s.at_leader("leo"), s.now, s.f("behind", f)))
    return st


def t_hw_advance(p, s, mutant=None, bmc=False, f=None):
    """Partition.maybeIncrementLeaderHW (Kafka 2.4.0) on its own, at any time."""
    st = Step(s)
    maybe_increment_leader_hw(p, st, mutant)
    return st


def t_truncate(p, s, mutant=None, bmc=False, f=0):
    """AbstractFetcherThread.maybeTruncate (Kafka 2.4.0, KIP-279): truncate to the divergence point (FO4: HW too)."""
    st = Step(s)
    st.guard += [s.l != f, s.ag_leader(f) < s.f("leo", f)]
    if bmc:
        st.guard.append(s.f("alive", f))
    to = s.ag_leader(f)
    st.set(f"leo{f}", to)
    st.set(f"hw{f}", zmin(s.f("hw", f), to))
    for g in s.R:
        if g != f:
            st.set(f"ag{min(f, g)}{max(f, g)}", z3.If(s.l == g, s.ag(f, g), zmin(s.ag(f, g), to)))
    return st


def t_tick(p, s, mutant=None, bmc=False, f=None):
    """Tick: logical time passes, never beyond a due isr-expiration run plus the jitter (KafkaScheduler)."""
    st = Step(s)
    delta = z3.Int(f"delta_{s.tag}")
    st.fresh.append(delta)
    st.guard += [delta >= 1, s.now + delta <= s.nexp + p.J]
    st.set("now", s.now + delta)
    return st


def _first(conds):
    """The index of the first true condition (the last index when none before it is true)."""
    acc = z3.IntVal(len(conds) - 1)
    for i in reversed(range(len(conds) - 1)):
        acc = z3.If(conds[i], i, acc)
    return acc


def t_leader_change(p, s, mutant=None, bmc=False, f=None):
    """KafkaController election (K2, epoch + 1) then Partition.makeLeader (M4, M7, M8, M9; HW kept, M10)."""
    st = Step(s)
    nl = z3.Int(f"newleader_{s.tag}")
    nisr = [z3.Bool(f"newisr{i}_{s.tag}") for i in s.R]
    nnexp = z3.Int(f"newnexp_{s.tag}")
    st.fresh += [nl, nnexp, *nisr]
    if bmc:
        # the leader's ZooKeeper session expires: the controller elects the first other ISR member in AR order
        # and drops the old leader from the ISR; the old leader stays up and becomes a follower
        others = [z3.And(s.f("isr", i), s.l != i) for i in s.R]
        st.guard += [z3.Or(others), nl == _first(others),
                     nnexp == z3.If(s.nexp == s.now, s.now + p.P, s.nexp)]
        st.guard += [nisr[i] == others[i] for i in s.R]
    else:
        st.guard += [0 <= nl, nl < s.n, s.now - p.J <= nnexp, nnexp <= s.now + p.P]
        for i in s.R:
            st.guard += [z3.Implies(nisr[i], s.f("isr", i)), z3.Implies(nl == i, nisr[i])]
    new_leader = nl != s.l
    st.set("l", nl)
    st.set("epoch", s.epoch + 1)
    st.set("estart", pick(nl, [s.f("leo", i) for i in s.R]))
    st.set("nexp", nnexp)
    if "at" in s.v:
        st.set("at", z3.K(z3.IntSort(), s.now))
    leader_leo = s.at_leader("leo")
    for i in s.R:
        st.set(f"isr{i}", nisr[i])
        st.set(f"rleo{i}", z3.If(new_leader, -1, s.f("rleo", i)))
        st.set(f"lfleo{i}", z3.If(new_leader, -1, leader_leo))
        st.set(f"lft{i}", z3.If(new_leader, 0, s.now))
        st.set(f"lcu{i}", z3.If(nisr[i], s.now, 0))
        st.set(f"behind{i}", s.now)
        st.set(f"inflight{i}", z3.BoolVal(False))   # the fetcher entry is replaced: responses are dropped
    # M9 runs with the new leader's state: evaluate the HW rule on a state where l is already nl
    return _make_leader_hw(p, st, nl, mutant)


def _make_leader_hw(p, st: Step, nl, mutant):
    s = st.s
    leo = pick(nl, [s.f("leo", i) for i in s.R])
    new_hw = leo
    if mutant != "hw_max_not_min":
        for f in s.R:
            in_window = s.now - st.getf("lcu", f) <= p.L
            counted = in_window if mutant == "hw_ignores_isr" else z3.Or(in_window, st.getf("isr", f))
            new_hw = z3.If(z3.And(nl != f, counted, st.getf("rleo", f) < new_hw), st.getf("rleo", f), new_hw)
    hw = pick(nl, [s.f("hw", i) for i in s.R])
    raised = zmax(hw, new_hw)
    for i in s.R:
        st.set(f"hw{i}", z3.If(nl == i, raised, s.f("hw", i)))
    st.set("C", zmax(s.C, raised))
    return st


#: name -> (builder, per follower?, used in BMC?, model action)
TRANSITIONS = {
    "Produce": (t_produce, False, True),
    "FetchRequest": (t_fetch_request, True, True),
    "FetchResponse": (t_fetch_response, True, True),
    "IsrExpiration": (t_isr_expiration, False, True),
    "IsrExpand": (t_isr_expand, True, False),
    "HwAdvance": (t_hw_advance, False, False),
    "LeaderChange": (t_leader_change, False, True),
    "FollowerTruncate": (t_truncate, True, True),
    "Tick": (t_tick, False, True),
}


def instances(name, p, s, mutant=None, bmc=False):
    """[(label, Step)] for a transition: one per follower for per-follower transitions."""
    build, per_follower, _ = TRANSITIONS[name]
    if per_follower:
        return [(f"{name}({f})", build(p, s, mutant, bmc, f)) for f in s.R]
    return [(name, build(p, s, mutant, bmc))]


def relation(name, p, s, t, mutant=None, bmc=False):
    return z3.Or([st.relation(t) for _lab, st in instances(name, p, s, mutant, bmc)])


# ============================================================================ initial state
T0 = 1_000_000


def initial(p, s):
    """Broker 0 leads epoch 0 with ISR (0, 1, 2) after makeLeader at start_time_ms (M7, M8); logs empty."""
    c = [s.l == 0, s.epoch == 0, s.estart == 0, s.now == T0, s.C == 0, s.nexp >= s.now, s.nexp <= s.now + p.P,
         ] + ([s.at == z3.K(z3.IntSort(), s.now)] if "at" in s.v else [])
    for i in s.R:
        c += [s.f("isr", i), s.f("alive", i), s.f("leo", i) == 0, s.f("hw", i) == 0, s.f("rleo", i) == -1,
              s.f("lcu", i) == s.now, s.f("lfleo", i) == -1, s.f("lft", i) == 0, s.f("behind", i) == s.now,
              z3.Not(s.f("inflight", i)), s.f("rend", i) == 0, s.f("rhw", i) == 0]
    for i, j in itertools.combinations(s.R, 2):
        c.append(s.ag(i, j) == 0)
    return c
