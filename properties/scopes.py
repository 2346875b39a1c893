"""Small scopes first: composite searches of growing bounds, the smallest scopes first, each capped in states.

The small-scope hypothesis (Jackson, *Software Abstractions*): most bugs have a small counterexample, so searching
every small configuration exhaustively finds them sooner than searching one large configuration.  A *scope* is one
choice of the explorer's bounds along ``DIMENSIONS`` (brokers, records, crashes, session expirations or lost
heartbeats, leader epoch, controller epoch, whether the clock moves), each no larger than the configuration's own
budget.  The scopes are searched in order of size (the sum of each dimension's rank), ties in an order drawn from
``seed``; each is a coarse search (``explore(..., composite=True)``) stopped at ``scope_states`` stored states (half
as many for each size below ``FULL_CAP_SIZE``).  A scope one step above a complete one, along a bound that search
never met (``ExploreResult.bounds_met``), is the same search and is not searched again.  A scope one step larger
than a scope the cap stopped (one dimension one rank up) holds all its states and more, so it waits for the next
pass rather than spend this one's cap.  When every scope has been searched or has waited, those
the cap stopped and those that waited are searched with four times the cap, and so on, until a violation the judge
does not pass, the budget, or every scope complete.

The engine knows nothing of presets, flags or bugs: it reads the configuration's budgets and asks ``judge_for(cfg)``
for each scope's judge.  Every violation is a real trace of the fine model in that scope's configuration (the
bounds only prune); a search whose every scope completes is as complete as the largest scope's own coarse search.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .explore import ExploreResult, explore, search_args

#: The scope dimensions: an ``isrlab explore`` bound and its values, smallest first.  ``max_time`` 0 freezes the
#: clock; None lets it run.
DIMENSIONS = (
    ("brokers", (2, 3)),
    ("max_records", (0, 1, 2)),
    ("max_crashes", (0, 1, 2)),
    ("max_expirations", (0, 1, 2)),
    ("max_epoch", (0, 1, 2)),
    ("max_controller_epoch", (1, 2)),
    ("max_time", (0, None)),
)
#: The configuration's budget each dimension may not exceed (None: no such budget).
_LIMIT = {"brokers": "n_brokers", "max_records": "max_records", "max_crashes": "max_crashes",
          "max_expirations": "max_session_expirations", "max_controller_epoch": "max_controller_epoch"}
#: Stored states a scope may reach in the first pass; each later pass multiplies it by GROWTH.
SCOPE_STATES = 10_000
GROWTH = 4
#: The size from which a scope gets the whole cap; each size below it halves the cap.  A small scope whose search
#: outgrows its share is mostly the interleavings of few actions (a running clock's timers, say), so it waits for
#: the next pass rather than hold up the scopes after it.
FULL_CAP_SIZE = 3


def ladder(cfg, pinned: dict | None = None, seed: int = 0) -> list:
    """The scopes to search, in order: dicts of ``DIMENSIONS``' bounds within ``cfg``'s budgets, smallest first.

    ``pinned`` fixes dimensions to one value (a bound the user gave); ties in size are ordered by ``seed``.
    """
    pinned = pinned or {}
    axes = []
    for name, values in DIMENSIONS:
        if name in pinned:
            axes.append((name, ((0, pinned[name]),)))
            continue
        limit = getattr(cfg, _LIMIT[name]) if name in _LIMIT else None
        allowed = tuple((rank, v) for rank, v in enumerate(values) if limit is None or v is None or v <= limit)
        axes.append((name, allowed or ((0, limit),)))   # a budget below every value (one broker): the budget
    scopes = [((), {})]
    for name, allowed in axes:
        scopes = [(ranks + (rank,), {**bounds, name: v}) for ranks, bounds in scopes for rank, v in allowed]
    rng = random.Random(seed)
    keyed = [(sum(ranks), rng.random(), bounds) for ranks, bounds in scopes]
    keyed.sort(key=lambda k: (k[0], k[1]))
    return [bounds for _size, _tie, bounds in keyed]


@dataclass
class Scope:
    """One scope's search: its bounds, its configuration and result, and its pass (``rnd``, 0 first); ``search``
    the whole bounds table it was searched with and ``kw`` the ``explore`` arguments made of them."""

    bounds: dict
    cfg: object
    result: ExploreResult
    judge: object = None
    rnd: int = 0
    search: dict = field(default_factory=dict)
    kw: dict = field(default_factory=dict)


@dataclass
class ScopesResult:
    """Every scope's search in the order made; ``decisive`` the one that found a violation its judge kept (or None)."""

    searched: list = field(default_factory=list)
    decisive: Scope | None = None
    scopes: int = 0              # how many scopes the ladder holds
    #: the scopes not searched, each with the complete scope one step below it that never met the bound it raises
    #: (the same states and verdict): (bounds, that scope's bounds)
    same: list = field(default_factory=list)
    complete: bool = False       # every scope searched to the end
    stopped_by_budget: bool = False


def _steps_below(ranks: tuple):
    """(dimension, rank tuple) of each scope one step below the scope of ``ranks`` (one dimension one rank down)."""
    for i, r in enumerate(ranks):
        if r:
            yield i, ranks[:i] + (r - 1,) + ranks[i + 1:]


def _ranks(bounds: dict) -> tuple:
    """A scope's rank along each dimension."""
    return tuple(values.index(bounds[name]) if bounds[name] in values else 0 for name, values in DIMENSIONS)


def search_scopes(cfg, base: dict, *, judge_for=None, seed: int = 0, scope_states: int = SCOPE_STATES,
                  pinned: dict | None = None, should_stop=None, progress=None, max_rounds: int = 6,
                  **explore_kw) -> ScopesResult:
    """Search ``ladder(cfg, pinned, seed)`` scope by scope (``base``: the other bounds, as ``search_args`` reads them).

    ``judge_for(scope_cfg)`` gives each scope's judge (``explore``'s ``judge``; None: every violation ends the
    search).  ``progress(scope)`` is called after each scope.  ``explore_kw`` go to every ``explore`` call
    (invariants, symmetry, ...).  At most ``max_rounds`` passes, the cap growing by ``GROWTH`` each.
    """
    out = ScopesResult()
    todo = ladder(cfg, pinned, seed)
    out.scopes = len(todo)
    cap = scope_states
    names = [name for name, _values in DIMENSIONS]
    done: dict = {}   # the complete scopes, by rank tuple: (the bounds each met, its own bounds)
    for rnd in range(max_rounds):
        capped = []
        stopped = set()   # the scopes the cap stopped in this pass, as rank tuples
        for bounds in todo:
            if should_stop is not None and should_stop():
                out.stopped_by_budget = True
                return out
            ranks = _ranks(bounds)
            same = next((below for i, below in _steps_below(ranks)
                         if names[i] != "brokers" and below in done and names[i] not in done[below][0]), None)
            if same is not None:
                # one step above a complete scope along a bound that search never met: the same states and verdict
                done[ranks] = done[same]
                out.same.append((bounds, done[same][1]))
                continue
            if any(below in stopped for _i, below in _steps_below(ranks)):
                # a scope one step smaller stopped at this cap: this one holds its states and more, so it waits for
                # the next pass's larger cap rather than spend this one's
                capped.append(bounds)
                stopped.add(ranks)
                continue
            b = {**base, **bounds, "composite": True, "max_states": cap >> max(0, FULL_CAP_SIZE - sum(ranks))}
            scfg, kw = search_args(cfg, b)
            judge = judge_for(scfg) if judge_for is not None else None
            r = explore(scfg, **kw, judge=judge, should_stop=should_stop, **explore_kw)
            sc = Scope(bounds, scfg, r, judge, rnd, b, kw)
            out.searched.append(sc)
            if progress is not None:
                progress(sc)
            if r.found:
                out.decisive = sc
                return out
            if r.stopped_by_budget:
                out.stopped_by_budget = True
                return out
            if r.complete:
                done[ranks] = (r.bounds_met, bounds)
            else:
                capped.append(bounds)
                stopped.add(ranks)
        if not capped:
            out.complete = True
            return out
        todo, cap = capped, cap * GROWTH
    return out


def combined(out: ScopesResult) -> ExploreResult:
    """One ``ExploreResult`` for the whole ladder: the deciding scope's (else the last searched) bounds and
    violations, with the counts summed over every scope searched and its end (complete, or what stopped it)."""
    from dataclasses import replace

    if not out.searched:
        raise ValueError("no scope was searched")
    last = out.decisive or out.searched[-1]
    r = replace(last.result, found=dict(last.result.found))
    for name in ("distinct_states", "transitions", "pruned", "chain_states", "settled", "passed", "seconds",
                 "cpu_seconds"):
        setattr(r, name, sum(getattr(s.result, name) for s in out.searched))
    r.depth = max(s.result.depth for s in out.searched)
    kinds: dict = {}
    for s in out.searched:
        for k, v in s.result.kinds.items():
            kinds[k] = kinds.get(k, 0) + v
        r.errors_seen |= s.result.errors_seen
        r.witnesses |= s.result.witnesses
    r.kinds = dict(sorted(kinds.items()))
    r.complete = out.complete
    r.stopped_by_budget = out.stopped_by_budget
    r.stop_reason = (None if out.complete else "violation" if out.decisive is not None else
                     "budget" if out.stopped_by_budget else "max_states")
    return r


def describe(bounds: dict) -> str:
    """A scope in one line: ``3 brokers; records 0, crashes 0, expirations 2, leader epochs <= 0, controller epochs
    <= 1; clock frozen``."""
    t = bounds.get("max_time")
    clock = "clock running" if t is None else "clock frozen" if t == 0 else f"clock to {t:,} ms"
    return (f"{bounds['brokers']} brokers; records {bounds['max_records']}, crashes {bounds['max_crashes']}, "
            f"expirations {bounds['max_expirations']}, leader epochs <= {bounds['max_epoch']}, controller epochs <= "
            f"{bounds['max_controller_epoch']}; {clock}")
