"""Shrink a failing trace to a short one that still breaks the same invariant.

``first_violation`` replays a list of actions and checks one named invariant after every step; ``shrink`` searches
for a shorter, simpler list for which it still fails: chunk deletion as in delta debugging, removal of actions that
belong together, simpler fields, a canonical order, deletion with the suffix that depended on it, pair deletion (a
2-minimal fixpoint) and, on request, a breadth-first search over the trace's own actions.  Deterministic, within a
time and test budget.  The passes, the order that makes them terminate and the replay cache: properties/README.md,
"The shrinker".
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass, field

from ..model.reassignment import reassignment_targets
from ..model import actions as A
from ..model.config import ModelConfig
from ..model.step import initial_state, step
from .budget import CHECK_MASK, Deadline, either
from .invariants import ALWAYS, BY_NAME, LIVENESS_BY_NAME, STATE, STEP, Violation, changes
from .walker import trace_of

__all__ = ["ShrinkResult", "first_violation", "shrink", "DEFAULT_MAX_TESTS"]

DEFAULT_MAX_TESTS = 200_000

_TYPE_INDEX = {t: i for i, t in enumerate(A.ACTION_TYPES)}
_FIELDS = {t: tuple(f.name for f in dataclasses.fields(t)) for t in A.ACTION_TYPES}


@dataclass
class ShrinkResult:
    actions: list
    original_length: int
    shrunk_length: int
    tests_run: int
    seconds: float
    #: the violation of the shrunk trace (its step is ``shrunk_length``).
    violation: Violation | None = None
    #: True if the time budget or max_tests stopped the search before a fixpoint.
    stopped_early: bool = False
    #: accepted candidates per pass name (diagnostics).
    accepted: dict = field(default_factory=dict)


#: the scope of a liveness property's check: only on the last state, by settling it (``properties.settle``)
SETTLED = "settled"


@dataclass(frozen=True)
class _Settles:
    """A liveness property as the shrinker checks it: the cluster must fail to settle after the candidate."""

    name: str
    check: object
    scope: str = SETTLED
    kind: str = ALWAYS


def _first_after(b: list, i: int, types: tuple, match) -> int | None:
    """Index of the first action after ``b[i]`` whose type is in ``types`` and that ``match`` accepts."""
    for j in range(i + 1, len(b)):
        if type(b[j]) in types and match(b[j]):
            return j
    return None


def _same_broker(a, c) -> bool:
    return c.broker == a.broker


#: an opening action's type -> (the types that close it, whether a closing action belongs to this opening one)
_PAIRS = {
    A.FetchRequest: ((A.FetchResponse,), lambda a, c: c.broker == a.broker and c.partition == a.partition),
    A.AlterIsrReceived: ((A.AlterIsrResponse,), _same_broker),
    A.OffsetsForLeaderEpochRequest: ((A.OffsetsForLeaderEpochResponse,),
                                     lambda a, c: c.broker == a.broker and c.partition == a.partition),
    A.ZkSessionExpire: ((A.ZkReconnect, A.BrokerRestart), _same_broker),
    A.HeartbeatsLost: ((A.FenceStaleBroker,), _same_broker),
    A.ControlledShutdown: ((A.BrokerRestart,), _same_broker),
    A.DiskWipe: ((A.BrokerRestart,), _same_broker),
    A.ControlledShutdownRequest: ((A.ControlledShutdownResponse,), _same_broker),
    A.PreferredReplicaElection: ((A.ControllerProcessPreferredReplicaElection,), lambda a, c: True),
    A.ZkDeleteController: ((A.ControllerResign,), lambda a, c: c.controller == a.controller),
    A.DeleteTopic: ((A.ControllerProcessTopicDeletion,), lambda a, c: True),
    A.CreateTopic: ((A.ControllerProcessTopicChange,), lambda a, c: True),
    A.CreatePartitions: ((A.ControllerProcessTopicChange,), lambda a, c: True),
}


def _crash_groups(b: list, i: int, broker: int) -> list:
    """A crash with its restart, with the session expiration between them, and with both."""
    expire = _first_after(b, i, (A.ZkSessionExpire, A.FenceStaleBroker), lambda c: c.broker == broker)
    restart = _first_after(b, i, (A.BrokerRestart,), lambda c: c.broker == broker)
    if restart is not None and expire is not None and expire > restart:
        expire = None
    out = []
    if restart is not None:
        out.append((i, restart))
        if expire is not None:
            out.append((i, expire, restart))
    if expire is not None:
        out.append((i, expire))
    return out


def _invariant(name: str):
    inv = BY_NAME.get(name)
    if inv is None and name in LIVENESS_BY_NAME:
        from .settle import liveness_check

        return _Settles(name, liveness_check(name))
    if inv is None:
        known = sorted(BY_NAME) + sorted(LIVENESS_BY_NAME)
        raise ValueError(f"unknown invariant {name!r} (known: {', '.join(known)})")
    if inv.kind != ALWAYS:
        raise ValueError(f"{name} is a 'sometimes' witness, not a safety invariant: nothing to shrink")
    if inv.scope == STEP and inv.reads is not None:
        # checked only where the step changed what it reads, as ``check_transition`` checks it: the shrinker keeps a
        # violation the engines and ``replay`` see, never one only the bare check function sees
        return dataclasses.replace(inv, check=functools.partial(_step_check_where_read, inv.check, inv.reads))
    return inv


def _step_check_where_read(check, reads: int, cfg, pre, a, post):
    return check(cfg, pre, a, post) if reads & changes(pre, post) else None


def _replay(cfg, is_state: bool, check, s, actions, start: int, states=None, applied=None, should_stop=None):
    """Apply actions[start:] from s (the state after actions[:start]); stop at the first violation.

    Returns (index, facts) with index the 1-based step of the violation, ("disabled", i) when the
    action at 1-based step i is not enabled, or None when the whole list runs without violation.
    States after each applied step are appended to ``states`` if given.  With ``applied`` (a list),
    an action that is not enabled is left out instead, and every applied action is appended to it.
    ``should_stop()`` is asked every ``budget.CHECK_EVERY`` actions; True raises ``_Stop``.
    ``is_state`` None is a liveness property (``SETTLED``): ``check(cfg, s)`` runs on the last state only.
    """
    for i in range(start, len(actions)):
        if should_stop is not None and not i & CHECK_MASK and should_stop():
            raise _Stop()
        a = actions[i]
        s2 = step(cfg, s, a)
        if s2 is None:
            if applied is None:
                return ("disabled", i + 1)
            continue
        if applied is not None:
            applied.append(a)
        facts = None if is_state is None else check(cfg, s2) if is_state else check(cfg, s, a, s2)
        if states is not None:
            states.append(s2)
        if facts is not None:
            return (i + 1, facts)
        s = s2
    if is_state is None:
        facts = check(cfg, s)
        if facts is not None:
            return (len(applied) if applied is not None else len(actions), facts)
    return None


def replay_outcome(cfg: ModelConfig, actions, invariant_name: str, start: dict | None = None) -> tuple[str, int | None]:
    """How ``invariant_name`` fares on ``actions`` under cfg: ("fails", step), ("cut", step) when the action at that
    1-based step is not enabled before any failure, or ("holds", None)."""
    inv = _invariant(invariant_name)
    is_state = _scope(inv)
    s = initial_state(cfg, start)
    if is_state and inv.check(cfg, s) is not None:
        return "fails", 0
    r = _replay(cfg, is_state, inv.check, s, list(actions), 0)
    if r is None:
        return "holds", None
    return ("cut", r[1]) if r[0] == "disabled" else ("fails", r[0])


def _scope(inv):
    """``is_state`` for _replay: True for a state invariant, False for a step invariant, None for a liveness one."""
    return None if inv.scope == SETTLED else inv.scope == STATE


def first_violation(cfg: ModelConfig, actions, invariant_name: str, start: dict | None = None):
    """(index, Violation) of the first step at which ``invariant_name`` fails, or None.

    ``index`` is the 1-based step of the violation (``Violation.step``), so ``actions[:index]`` is
    the trace truncated right after it; 0 means the initial state already violates a state
    invariant.  None if the invariant never fails or some action up to the violation is not
    enabled where it is applied.  Only the named invariant is checked (state invariants on the
    post-state, step invariants on (pre, action, post)).  ``start``: the trace's start (model/start.py).
    """
    inv = _invariant(invariant_name)
    is_state = _scope(inv)
    s = initial_state(cfg, start)
    if is_state:
        facts = inv.check(cfg, s)
        if facts is not None:
            return 0, Violation(inv.name, 0, facts)
    r = _replay(cfg, is_state, inv.check, s, list(actions), 0)
    if r is None or r[0] == "disabled":
        return None
    return r[0], Violation(inv.name, r[0], r[1])


# =========================================================================== ordering
def _canonical_values(cfg: ModelConfig) -> dict:
    """(action type, field) -> the field's values in the order enabled_actions lists them."""
    return {
        (A.BrokerCrash, "clean"): (False, True),
        (A.Produce, "acks"): tuple(sorted(cfg.produce_acks)),
        (A.ConsumerFetch, "isolation"): A.ISOLATIONS,
        (A.ListOffsets, "timestamp"): (-1, -2),
        (A.ListOffsets, "isolation"): A.ISOLATIONS,
        (A.ListOffsets, "replica_id"): (-1, -2),
        (A.DeleteRecords, "offset"): (-1,),       # towards DeleteRecordsRequest.HIGH_WATERMARK, what the engines offer
        (A.ConsumerFetchWait, "isolation"): A.ISOLATIONS,
        (A.ConsumerFetchWait, "client_metadata"): (False, True),
        (A.ReassignPartitions, "replicas"): reassignment_targets(cfg),
    }


class _Order:
    """The well-founded order on traces that every accepted candidate must decrease."""

    def __init__(self, cfg: ModelConfig):
        self.values = _canonical_values(cfg)

    def rank(self, cls, name, value) -> int:
        vals = self.values.get((cls, name))
        if vals is None:
            return 0
        try:
            return vals.index(value)
        except ValueError:
            return len(vals)  # a value outside the offered ones: least canonical

    def action_key(self, a) -> tuple:
        cls = type(a)
        out = [_TYPE_INDEX[cls]]
        for name in _FIELDS[cls]:
            v = getattr(a, name)
            if (cls, name) in self.values:
                out.append(self.rank(cls, name, v))
            elif isinstance(v, str):
                out.append(0)
                out.append(v)  # never reached for the current vocabulary; keeps keys comparable
            else:
                out.append(int(v))
        return tuple(out)

    def field_ranks(self, a) -> int:
        cls = type(a)
        return sum(self.rank(cls, n, getattr(a, n)) for n in _FIELDS[cls] if (cls, n) in self.values)

    def key(self, actions) -> tuple:
        return (len(actions),
                sum(self.field_ranks(a) for a in actions),
                sum(a.ms for a in actions if type(a) is A.Tick),
                tuple(self.action_key(a) for a in actions))


# =========================================================================== the search
class _Stop(Exception):
    """The time budget or the test budget ran out."""


class _Shrinker:
    def __init__(self, cfg, inv, actions, time_budget_s, max_tests, bfs_states=0, should_stop=None, start=None,
                 keep=None):
        self.cfg = cfg
        #: keep(actions) -> bool, asked of a smaller candidate before it is adopted (e.g. "still the same bug")
        self.keep = keep
        self.bfs_states = bfs_states
        self.bfs_searched: list = []   # alphabets (frozensets) already searched, each below a length >= the trace's
        self.inv = inv
        self.is_state = _scope(inv)
        self.order = _Order(cfg)
        self.t0 = time.monotonic()
        self.deadline = None if time_budget_s is None else Deadline(time_budget_s)
        #: the time budget and the caller's should_stop, asked per candidate and every CHECK_EVERY replayed actions
        self.should_stop = either(self.deadline, should_stop)
        self.max_tests = max_tests
        self.tests = 0
        self.accepted: dict[str, int] = {}
        self.pass_name = "truncate"
        s0 = initial_state(cfg, start)
        states = [s0]
        if self.is_state and inv.check(cfg, s0) is not None:
            self.best, self.states, self.facts = [], states, inv.check(cfg, s0)
        else:
            r = _replay(cfg, self.is_state, inv.check, s0, actions, 0, states, should_stop=self.should_stop)
            if r is None:
                raise ValueError(f"the trace ({len(actions)} actions) does not violate {inv.name}")
            if r[0] == "disabled":
                raise ValueError(f"action {r[1]} ({A.describe(actions[r[1] - 1])}) is not enabled where "
                                 f"the trace applies it")
            n, self.facts = r
            self.best, self.states = list(actions[:n]), states
        self.best_key = self.order.key(self.best)

    # ------------------------------------------------------------------ the oracle
    def _spend(self) -> None:
        """Stop (``_Stop``) if the test or time budget is used up."""
        if self.tests >= self.max_tests or (self.should_stop is not None and self.should_stop()):
            raise _Stop()

    def test(self, cand: list) -> bool:
        """Replay cand (reusing the best trace's states); adopt it if it still fails and is smaller."""
        self._spend()
        best = self.best
        limit = min(len(cand), len(best))
        k = 0
        while k < limit and cand[k] == best[k]:
            k += 1
        if k >= len(best):
            return False  # cand starts with the whole best trace: it fails where best does
        self.tests += 1
        new_states = []
        r = _replay(self.cfg, self.is_state, self.inv.check, self.states[k], cand, k, new_states,
                    should_stop=self.should_stop)
        if r is None or r[0] == "disabled":
            return False
        n, facts = r
        return self._adopt(cand[:n], k, new_states, facts)

    def _adopt(self, cand: list, k: int, new_states: list, facts) -> bool:
        """Make cand the best trace if it is smaller; it fails with ``facts`` at its last action, agrees with the
        best trace on its first k actions, and ``new_states`` are its states after them."""
        key = self.order.key(cand)
        if key >= self.best_key:  # only moves that make the trace smaller: no pass can cycle
            return False
        if self.keep is not None and not self.keep(cand):
            return False
        self.best, self.best_key, self.facts = cand, key, facts
        self.states = self.states[:k + 1] + new_states
        self.accepted[self.pass_name] = self.accepted.get(self.pass_name, 0) + 1
        return True

    # ------------------------------------------------------------------ passes
    def pass_chunks(self) -> bool:
        """ddmin-style deletion of chunks of n/2, n/4, ..., 1 actions, from the end towards the start."""
        self.pass_name = "chunks"
        changed = False
        k = max(len(self.best) // 2, 1)
        while k >= 1:
            i = len(self.best) - k
            while i >= 0:
                b = self.best
                if self.test(b[:i] + b[i + k:]):
                    changed = True
                i = min(i - k, len(self.best) - k)
            k //= 2
        return changed

    def _groups(self, b: list):
        """Index tuples of actions that belong together (a request and its response, a crash and its restart)."""
        out = []
        for i, a in enumerate(b):
            t = type(a)
            if t is A.BrokerCrash:
                out.extend(_crash_groups(b, i, a.broker))
                continue
            if t is A.AlterIsrRequest:   # the request, its handling and its response: as many as the trace holds
                same = functools.partial(_same_broker, a)
                j = _first_after(b, i, (A.AlterIsrReceived, A.AlterIsrFailed), same)
                k = None if j is None else _first_after(b, j, (A.AlterIsrResponse,), same)
                if j is not None:
                    out.append((i, j) if k is None else (i, j, k))
                continue
            pair = _PAIRS.get(t)
            if pair is not None:
                j = _first_after(b, i, pair[0], lambda c, a=a, same=pair[1]: same(a, c))
                if j is not None:
                    out.append((i, j))
        return out

    def pass_groups(self) -> bool:
        """Remove related actions together, groups starting later first."""
        self.pass_name = "groups"
        changed = False
        groups = sorted(self._groups(self.best), key=lambda g: (-g[0], g))
        tried = set()
        while groups:
            g = groups.pop(0)
            if g in tried or g[-1] >= len(self.best):
                continue
            tried.add(g)
            drop = set(g)
            b = self.best
            if self.test([a for i, a in enumerate(b) if i not in drop]):
                changed = True
                # indices shifted: recompute the groups that start before the removed ones
                tried = set()
                groups = sorted((h for h in self._groups(self.best) if h[0] < g[0]), key=lambda h: (-h[0], h))
        return changed

    def pass_ticks(self) -> bool:
        """Merge adjacent Ticks, then shrink each Tick's ms by binary search."""
        self.pass_name = "ticks"
        changed = False
        i = len(self.best) - 2
        while i >= 0:
            b = self.best
            if i + 1 < len(b) and type(b[i]) is A.Tick and type(b[i + 1]) is A.Tick:
                if self.test(b[:i] + [A.Tick(b[i].ms + b[i + 1].ms)] + b[i + 2:]):
                    changed = True
            i -= 1
        i = len(self.best) - 1
        while i >= 0:
            b = self.best
            if i < len(b) and type(b[i]) is A.Tick and b[i].ms > 1:
                lo, hi = 1, b[i].ms  # hi: the smallest ms known to keep the trace failing
                while lo < hi:
                    mid = (lo + hi) // 2
                    b = self.best
                    if i < len(b) and type(b[i]) is A.Tick and self.test(b[:i] + [A.Tick(mid)] + b[i + 1:]):
                        changed = True
                        hi = mid
                        if i >= len(self.best):  # the cut moved before i
                            break
                    else:
                        lo = mid + 1
            i -= 1
        return changed

    def pass_fields(self) -> bool:
        """Move BrokerCrash.clean, Produce.acks and ConsumerFetch.isolation towards their canonical values."""
        self.pass_name = "fields"
        changed = False
        values = self.order.values
        for i in range(len(self.best) - 1, -1, -1):
            if i >= len(self.best):
                continue
            cls = type(self.best[i])
            for name in _FIELDS[cls]:
                vals = values.get((cls, name))
                if vals is None or i >= len(self.best):
                    continue
                b = self.best
                r = self.order.rank(cls, name, getattr(b[i], name))
                for v in vals[:r]:  # the most canonical value first
                    if self.test(b[:i] + [dataclasses.replace(b[i], **{name: v})] + b[i + 1:]):
                        changed = True
                        break
        return changed

    def pass_reorder(self) -> bool:
        """Bubble independent actions into canonical order (adjacent swaps that keep the trace failing)."""
        self.pass_name = "reorder"
        changed = False
        key = self.order.action_key
        i = len(self.best) - 2
        while i >= 0:
            b = self.best
            if i + 1 < len(b) and key(b[i + 1]) < key(b[i]):
                if self.test(b[:i] + [b[i + 1], b[i]] + b[i + 2:]):
                    changed = True
                    i = min(i + 1, len(self.best) - 2)  # the moved action may go further left
                    continue
            i -= 1
        return changed

    def _test_without(self, i: int) -> bool:
        """Test the best trace without its action i and without every later action that is then not enabled (cut
        after its first violation), replayed once from the state before action i."""
        self._spend()
        self.tests += 1
        b = self.best
        applied, new_states = b[:i], []
        r = _replay(self.cfg, self.is_state, self.inv.check, self.states[i], b[:i] + b[i + 1:], i, new_states,
                    applied, self.should_stop)
        return r is not None and self._adopt(applied, i, new_states, r[1])

    def pass_skip(self) -> bool:
        """Delete each action (from the end towards the start) with the later actions it leaves not enabled."""
        self.pass_name = "skip"
        changed = False
        i = len(self.best) - 1
        while i >= 0:
            if i < len(self.best) and self._test_without(i):
                changed = True
            i -= 1
        return changed

    def pass_pairs(self) -> bool:
        """Remove any two actions (i < j), j from the end towards the start, then i from j - 1 down."""
        self.pass_name = "pairs"
        changed = False
        j = len(self.best) - 1
        while j >= 1:
            i = j - 1
            while i >= 0 and j < len(self.best):
                b = self.best
                if self.test(b[:i] + b[i + 1:j] + b[j + 1:]):
                    changed = True
                    # shorter now (and the cut may have moved before j): go on from here; run() repeats this
                    # pass until no pair goes, so the result is 2-minimal all the same
                    j = min(j, len(self.best) - 1)
                i -= 1
            j -= 1
        return changed

    def pass_bfs(self) -> bool:
        """Breadth-first search over the trace's own actions for a shorter failing trace (pass 8)."""
        self.pass_name = "bfs"
        best = self.best
        alphabet = tuple(dict.fromkeys(best))   # distinct actions in order of first use: a deterministic order
        letters = frozenset(alphabet)
        if self.bfs_states <= 0 or len(best) <= 1 or self.is_state is None \
                or any(letters <= done for done in self.bfs_searched):
            return False
        self.bfs_searched.append(letters)
        from .explore import fast_keyer  # the explorer's dedup key (a bisimulation of the model's rules)

        cfg, check, is_state = self.cfg, self.inv.check, self.is_state
        key = fast_keyer(cfg)
        s0 = self.states[0]
        seen = {key(s0)}
        frontier = [(s0, None)]
        for _depth in range(1, len(best)):
            nxt = []
            for s, node in frontier:
                if self.should_stop is not None and self.should_stop():
                    raise _Stop()
                for a in alphabet:
                    s2 = step(cfg, s, a)
                    if s2 is None:
                        continue
                    if (check(cfg, s2) if is_state else check(cfg, s, a, s2)) is not None:
                        return self.test(trace_of((node, a)))
                    k = key(s2)
                    if k in seen:
                        continue
                    if len(seen) >= self.bfs_states:
                        return False
                    seen.add(k)
                    nxt.append((s2, (node, a)))
            frontier = nxt
        return False

    def run(self, reorder: bool) -> bool:
        """Run the cheap passes to a fixpoint, then the skipping deletion, the pair pass (and the breadth-first
        pass), until none changes the trace; False if stopped early."""
        passes = [self.pass_chunks, self.pass_groups, self.pass_ticks, self.pass_fields]
        if reorder:
            passes.append(self.pass_reorder)
        try:
            while True:
                changed = False
                for p in passes:
                    if p():
                        changed = True
                if not changed and not self.pass_skip() and not self.pass_pairs() and not self.pass_bfs():
                    return True
        except _Stop:
            return False


def shrink(cfg: ModelConfig, actions, invariant_name: str, time_budget_s: float | None = 10.0,
           max_tests: int = DEFAULT_MAX_TESTS, reorder: bool = True, bfs_states: int = 0,
           should_stop=None, start: dict | None = None, keep=None) -> ShrinkResult:
    """A shorter, simpler trace on which ``invariant_name`` still fails (the passes: properties/README.md).

    ValueError if ``actions`` does not violate the invariant (or applies an action that is not
    enabled before the violation), or the invariant is unknown or a 'sometimes' witness.
    ``time_budget_s`` (None: unlimited), ``should_stop()`` (e.g. a whole command's
    ``budget.Deadline``) and ``max_tests`` only stop the search early: they are asked before every
    candidate and every ``budget.CHECK_EVERY`` actions of a replay (so within one such stride),
    and ``stopped_early`` is then set.  Stopped inside the first replay of ``actions``, before it
    reached the violation, the result is ``actions`` unchanged and unchecked, with ``violation`` None.
    ``bfs_states`` > 0 adds pass 8, bounded by that many distinct states.  ``start``: the trace's start
    (model/start.py), kept by every candidate.  ``keep(candidate) -> bool``, when given, must also hold of every
    smaller trace adopted (properties/attribution.py keeps a violation's attribution this way).
    """
    actions = list(actions)
    inv = _invariant(invariant_name)
    t0 = time.monotonic()
    try:
        sh = _Shrinker(cfg, inv, actions, time_budget_s, max_tests, bfs_states, should_stop, start, keep)
    except _Stop:
        return ShrinkResult(actions=actions, original_length=len(actions), shrunk_length=len(actions), tests_run=0,
                            seconds=time.monotonic() - t0, violation=None, stopped_early=True)
    complete = sh.run(reorder)
    return ShrinkResult(actions=list(sh.best), original_length=len(actions), shrunk_length=len(sh.best),
                        tests_run=sh.tests, seconds=time.monotonic() - sh.t0,
                        violation=Violation(inv.name, len(sh.best), sh.facts), stopped_early=not complete,
                        accepted=dict(sh.accepted))
