"""The exhaustive explorer on Spark: breadth-first levels as a distributed frontier, one level per round.

For a search that outgrows one process (``isrlab explore --spark [--master URL]``).  Each round expands the
frontier (every state at depth d) on the executors, keys each successor by a 128-bit digest of
``properties.explore.state_key`` (the explorer's abstraction, seed- and process-independent, unlike the
single-process ``fast_keyer``'s interned ints), deduplicates with Spark's shuffle (``reduceByKey`` keeping the
successor of least *path*, then ``subtractByKey`` against the visited set, both hash-partitioned alike so the
visited set is not shuffled again), checks the invariants, and hands the new level back as the next frontier.

A state's path is the list of its actions' indices into ``explorer_actions``' order from the initial state.  The
successor kept is the one of least path, which is the state the single-process explorer numbers first (its BFS
discovers states in the lexicographic order of these paths), so the levels, counts and shortest traces are the
same as ``explore(..., compress=False)``'s (chain compression stores fewer states, but its count of states checked
is the same; properties/README.md).  Violations are judged on the driver in that same order, by the same judge.

Each finished level is checkpointed as data, never pickles: ``level-NNNN.jsonl.gz`` (one line per state: digest,
passed-invariant bits, path) and ``manifest.json`` (the search's identity, per-level figures, the violations
judged so far), each written to a temporary file and renamed.  A search with the same identity resumes from its
last level: the visited set is read back from the digests, the frontier re-derived by replaying its paths.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass

from .model.encode import fingerprint
from .model.step import initial_state, step

#: the checkpoint format's version (manifest.json's "format")
FORMAT = 1
MANIFEST = "manifest.json"


class CheckpointError(ValueError):
    """A checkpoint that cannot be used (corrupt, or of another search): one line naming the file."""


# --------------------------------------------------------------------------- executor side
@dataclass(frozen=True)
class Spec:
    """What an executor needs to expand and check states (small; shipped with every task)."""

    cfg: object
    eager_tasks: bool
    without: tuple            # action class names
    max_leader_epoch: int | None
    max_isr_changes: int | None
    max_queue: int | None
    deadline: int | None
    symmetry: bool
    invariants: tuple         # names, in the order their bits are numbered
    #: a coarse search (``explore``'s ``composite``): each choice is followed by its exchange and the deliveries, and
    #: a path holds two numbers per choice, the action's index and how many chain steps followed it
    composite: bool = False
    #: a coarse search's holds (``explore``'s ``max_in_flight`` and ``max_lagging``): with either above 0 a path holds
    #: three numbers per choice, the action's index, its mode (``WHOLE``, ``HELD``, or ``LAGGING`` + the broker told
    #: late) and how many chain steps followed it
    max_in_flight: int = 0
    max_lagging: int = 0

    @property
    def holding(self) -> bool:
        return self.composite and bool(self.max_in_flight or self.max_lagging)

    @property
    def stride(self) -> int:
        """Numbers per choice in a path."""
        return 3 if self.holding else 2 if self.composite else 1

    def without_kinds(self) -> frozenset:
        from .model.actions import ACTION_BY_NAME

        return frozenset(ACTION_BY_NAME[w] for w in self.without)

    def checks(self):
        """(bits by name, state invariants, step invariants), each list in catalogue order."""
        from .properties.invariants import BY_NAME, STATE, STEP

        invs = [BY_NAME[n] for n in self.invariants]
        bits = {inv.name: 1 << k for k, inv in enumerate(invs)}
        return bits, tuple(i for i in invs if i.scope == STATE), tuple(i for i in invs if i.scope == STEP)


def digest(spec: Spec, s) -> int:
    """The state's dedup key: blake2b-128 of ``state_key``'s repr (plain ints, strings and tuples: no hash seed)."""
    from .properties.explore import state_key

    k = state_key(spec.cfg, s, spec.symmetry, spec.max_isr_changes, spec.deadline)
    return int.from_bytes(hashlib.blake2b(repr(k).encode(), digest_size=16).digest(), "big")


#: a choice's modes in a holding search's path: its exchange and deliveries whole, the request held unanswered, or
#: (``LAGGING`` + broker) that broker's deliveries held
WHOLE, HELD, LAGGING = 0, 1, 2


def told_late(mode: int) -> int | None:
    """The broker a ``LAGGING`` mode tells late, else None."""
    return mode - LAGGING if mode >= LAGGING else None


def composite_next(spec: Spec, s, last, without, lagging=frozenset()):
    """The action a coarse search takes after ``last`` without a choice (the single-process explorer's rule): the
    continuation of ``last``'s exchange, else the first enabled delivery to a broker not ``lagging``, else a due task
    that is all an eager search offers (it runs first whatever is chosen, and the deliveries behind it follow); None
    when there is none of these."""
    from .properties.explore import TASK_KINDS, exchange_next, explorer_actions

    acts = explorer_actions(spec.cfg, s, spec.eager_tasks, without)
    b = exchange_next(acts, last, lagging)
    if b is None and spec.eager_tasks and len(acts) == 1 and type(acts[0]) in TASK_KINDS:
        return acts[0]
    return b


def _path_actions(spec: Spec, path, s=None):
    """(the state ``path`` reaches from ``s``, default the initial state, and its actions), or (None, actions so
    far) when a number of the path is not an action there."""
    from .properties.explore import chain_lagging, explorer_actions, lagging_brokers

    without = spec.without_kinds()
    s = initial_state(spec.cfg) if s is None else s
    out: list = []
    k = spec.stride
    if len(path) % k:
        return None, out
    for j in range(0, len(path), k):
        i = path[j]
        acts = explorer_actions(spec.cfg, s, spec.eager_tasks, without)
        if not isinstance(i, int) or not 0 <= i < len(acts):
            return None, out
        a = acts[i]
        mode = path[j + 1] if spec.holding else WHOLE
        if not isinstance(mode, int) or not WHOLE <= mode < LAGGING + spec.cfg.n_brokers:
            return None, out
        lags = chain_lagging(lagging_brokers(acts) if spec.max_lagging else frozenset(), a, told_late(mode))
        s = step(spec.cfg, s, a)
        out.append(a)
        if spec.composite:
            n = path[j + k - 1]
            if not isinstance(n, int) or n < 0 or (mode == HELD and n):
                return None, out
            for _ in range(n):
                a = composite_next(spec, s, a, without, lags)
                if a is None:
                    return None, out
                s = step(spec.cfg, s, a)
                out.append(a)
    return s, out


def replay_path(spec: Spec, path, s=None):
    """The state reached from ``s`` (default: the initial state) by ``path``; None if a number of it is not an
    action there."""
    return _path_actions(spec, path, s)[0]


def actions_of(spec: Spec, path) -> list:
    """The actions of a path, replayed from the initial state (a coarse path's chains step by step)."""
    return _path_actions(spec, path)[1]


def parent_path(spec: Spec, path) -> tuple:
    """The path of the state a transition's path leaves from."""
    return path[:-spec.stride]


def leaves_bounds(spec: Spec, t) -> str | None:
    """The bound state t is beyond (``explore`` prunes the transition into it), or None."""
    from .properties.explore import _out_of_bounds

    return (_out_of_bounds(t, spec.max_leader_epoch, spec.max_isr_changes, spec.max_queue)
            or ("max_time" if spec.deadline is not None and t.now > spec.deadline else None))


def checks_for(spec: Spec, found: frozenset) -> tuple:
    """(bits by name, state invariants, step invariants) left to check: those not found yet."""
    bits, state_checks, step_checks = spec.checks()
    return (bits, tuple(i for i in state_checks if i.name not in found),
            tuple(i for i in step_checks if i.name not in found))


def successors(spec: Spec, s, path, mask, checks: tuple, without, tally):
    """Each transition ``explore`` takes from s, as (its choice, path, successor or None when it leaves the bounds,
    the last step's changed fields, [(name, facts)] of the step invariants it breaks); the choice is the index of its
    first action, with a holding search's mode (index, mode).

    Fine: one action.  Composite: the action, then (``composite_next``) its exchange and the deliveries, each state
    and step checked on the way; the chain stops at a violation (that state is the successor), at ``CHAIN_CAP``
    actions, or where nothing follows without a choice.  A holding search (``Spec.holding``) takes each choice as
    ``explore`` does: whole; a request again held unanswered (``HELD``, pruned above ``max_in_flight`` answers
    pending); a step that told brokers decisions again with each of them lagging (``LAGGING`` + broker, pruned above
    ``max_lagging`` lagging brokers).  The choices come in the order of their paths.  ``checks``: ``checks_for``'s;
    ``tally(action, successor or None)`` counts each step."""
    from .model.actions import DELIVERIES, continues
    from .properties.explore import (ANSWERS, CHAIN_CAP, OPENS_REQUEST, chain_lagging, explorer_actions,
                                     lagging_brokers)
    from .properties.invariants import changes

    cfg = spec.cfg
    bits, state_checks, step_checks = checks
    holding = spec.holding

    def step_bad(s, a, t, changed):
        return [(inv.name, facts) for inv in step_checks
                if not bits[inv.name] & mask and (inv.reads is None or inv.reads & changed)
                for facts in [inv.check(cfg, s, a, t)] if facts is not None]

    def state_bad(t, changed) -> bool:
        return any(not bits[inv.name] & mask and (inv.reads is None or inv.reads & changed)
                   and inv.check(cfg, t) is not None for inv in state_checks)

    acts = explorer_actions(cfg, s, spec.eager_tasks, without)
    lag_s = lagging_brokers(acts) if spec.max_lagging else frozenset()
    for idx, a in enumerate(acts):
        t0 = step(cfg, s, a)
        why = leaves_bounds(spec, t0)
        tally(a, None if why else t0, why)
        if why:
            yield (idx, WHOLE) if holding else idx, None, None, None, ()
            continue
        changed0 = changes(s, t0)
        bad0 = step_bad(s, a, t0, changed0)
        modes = [WHOLE]
        if spec.max_in_flight and type(a) in OPENS_REQUEST:
            modes.append(HELD)
        k = 0
        while k < len(modes):
            mode = modes[k]
            k += 1
            choice = (idx, mode) if holding else idx
            t, changed, bad, n = t0, changed0, bad0, 0
            if mode == HELD:
                t_acts = explorer_actions(cfg, t, spec.eager_tasks, without)
                if not any(continues(a, x) for x in t_acts):
                    continue   # nothing to hold: the request was answered in the step (or cannot be)
                if sum(type(x) in ANSWERS for x in t_acts) > spec.max_in_flight:
                    tally.pruned += 1
                    tally.met.add("max_in_flight")
                    yield choice, None, None, None, ()
                    continue
                yield choice, path + (idx, mode, 0), t, changed, bad
                continue
            if spec.composite:
                if type(a) in OPENS_REQUEST and not spec.max_in_flight:
                    tally.met.add("max_in_flight")   # answered at once: ``explore``'s max_in_flight of 0
                lags = chain_lagging(lag_s, a, told_late(mode))
                delivered = {a.broker} if type(a) in DELIVERIES else set()
                last, broke = a, False
                while not bad and n + 1 < CHAIN_CAP:
                    b = composite_next(spec, t, last, without, lags)
                    if b is None:
                        break
                    if state_bad(t, changed):
                        broke = True
                        break
                    u = step(cfg, t, b)
                    tally.chain += 1
                    why = leaves_bounds(spec, u)
                    if why:
                        tally(b, None, why, t)   # t is checked but not stored
                        t = None
                        break
                    tally(b, u)
                    if type(b) in DELIVERIES:
                        delivered.add(b.broker)
                    changed = changes(t, u)
                    bad = step_bad(t, b, u, changed)
                    t, last, n = u, b, n + 1
                if t is None:
                    yield choice, None, None, None, ()
                    continue
                caught_up = a.broker if type(a) in DELIVERIES else None
                if not spec.max_lagging:
                    if delivered:
                        tally.met.add("max_lagging")   # delivered at once: ``explore``'s max_lagging of 0
                elif mode == WHOLE:
                    # each broker this step told at once, told late instead (not one the step chose to catch up)
                    modes += [LAGGING + x for x in sorted(delivered - lag_s - {caught_up})]
                elif not bad and not broke:
                    lag_t = lagging_brokers(explorer_actions(cfg, t, spec.eager_tasks, without))
                    if told_late(mode) not in lag_t:
                        continue   # the same as the whole step: nothing was held
                    if len(lag_t) > spec.max_lagging:
                        tally.pruned += 1
                        tally.met.add("max_lagging")
                        yield choice, None, None, None, ()
                        continue
            yield choice, path + ((idx, mode, n) if holding else (idx, n) if spec.composite else (idx,)), t, changed, bad


class _Tally:
    """Transitions, pruned ones, error bits, kinds and the bounds met (``ExploreResult.bounds_met``) of the steps an
    expansion takes."""

    def __init__(self, cfg=None):
        from .properties.explore import BUDGETS, budgets_used_up

        self.transitions = self.pruned = self.errors = 0
        self.chain = 0   # states stepped through in chains (``ExploreResult.chain_states``)
        self.kinds: dict = {}
        self.cfg = cfg
        self.met: set = set()
        self._budgets, self._used_up = BUDGETS, budgets_used_up

    def __call__(self, a, t, why=None, before=None) -> None:
        """One step by action a to t (None: pruned by the bound ``why``, from the state ``before`` if not stored)."""
        self.transitions += 1
        kname = type(a).__name__
        self.kinds[kname] = self.kinds.get(kname, 0) + 1
        if t is None:
            self.pruned += 1
            if why:
                self.met.add(why)
            if before is not None:
                self.use(before)
        else:
            self.errors |= t.ghost.errors_seen

    def use(self, s) -> None:
        """The budgets state s has used up (counters only grow along a path, so the states a level keeps cover the
        ones a chain steps through)."""
        if self.cfg is not None and len(self.met.intersection(self._budgets)) < len(self._budgets):
            self.met |= self._used_up(self.cfg, s)


def expand_partition(spec: Spec, found: frozenset, side, index: int, records):
    """Expand frontier records (digest, (path, mask, state, ...)): yields (digest, (path, mask, state, changed)) per
    successor within the bounds.  Adds {index: (transitions, pruned, error bits, kinds, violations, bounds met)} to the
    accumulator ``side``, violations (path, name, facts) of the step invariants not found yet nor passed on the path;
    keyed by partition, so a task run twice counts once."""
    without = spec.without_kinds()
    checks = checks_for(spec, found)
    tally = _Tally(spec.cfg)
    bad = []
    for _d, (path, mask, s, *_rest) in records:
        for _idx, tpath, t, changed, viols in successors(spec, s, path, mask, checks, without, tally):
            if t is None:
                continue
            tally.use(t)
            bad.extend((tpath, name, facts) for name, facts in viols)
            yield digest(spec, t), (tpath, mask, t, changed)
    side.add({index: (tally.transitions, tally.pruned, tally.errors, tally.kinds, bad, sorted(tally.met),
                      tally.chain)})


def count_until(spec: Spec, found: frozenset, stop_path: tuple, records):
    """The figures (transitions, pruned, error bits, kinds, chain states) of a level's expansion up to and including the
    transition ``stop_path``, where the single-process search stops: one tuple per partition."""
    without = spec.without_kinds()
    parent = parent_path(spec, stop_path)
    last = tuple(stop_path[len(parent):len(parent) + 2]) if spec.holding else stop_path[len(parent)]
    checks = checks_for(spec, found)
    tally = _Tally()
    for _d, (path, mask, s, *_rest) in records:
        if path > parent:
            continue
        for choice, *_rest2 in successors(spec, s, path, mask, checks, without, tally):
            if path == parent and choice >= last:
                break
    yield tally.transitions, tally.pruned, tally.errors, tally.kinds, tally.chain


def _merge(a: dict, b: dict) -> dict:
    a.update(b)
    return a


def side_accumulator(sc):
    """An accumulator of {partition index: figures}: a recomputed partition replaces its entry, never adds twice."""
    from pyspark.accumulators import AccumulatorParam

    class ByPartition(AccumulatorParam):
        def zero(self, value):
            return {}

        def addInPlace(self, a, b):
            return _merge(a, b)

    return sc.accumulator({}, ByPartition())


def least_path(x, y):
    """Of two candidates for one state, the one the single-process BFS meets first (the least path)."""
    return x if x[0] <= y[0] else y


def check_partition(spec: Spec, found: frozenset, have: frozenset, records):
    """State invariants and witnesses (those not in ``have``) on the new states (digest, (path, mask, state,
    changed)): yields (digest, (path, mask, state, violations, witnesses)), violations [(name, facts)] in catalogue
    order."""
    from .properties.invariants import WITNESSES

    cfg = spec.cfg
    bits, state_checks, _step = spec.checks()
    state_checks = tuple(i for i in state_checks if i.name not in found)
    wanted = tuple(w for w in WITNESSES if w.name not in have)
    for d, (path, mask, t, changed) in records:
        bad = []
        for inv in state_checks:
            if not bits[inv.name] & mask and (inv.reads is None or inv.reads & changed):
                facts = inv.check(cfg, t)
                if facts is not None:
                    bad.append((inv.name, facts))
        yield d, (path, mask, t, bad, frozenset(w.name for w in wanted if w.check(cfg, t)))


def summarize_partition(records):
    """One ([(path, witnesses)], [(path, violations)], [(digest, mask, path)]) per partition of checked new states."""
    wit, bad, lines = [], [], []
    for d, (path, mask, _t, viols, w) in records:
        lines.append((d, mask, path))
        if w:
            wit.append((path, w))
        if viols:
            bad.append((path, viols))
    yield wit, bad, lines


def restore_partition(spec: Spec, records):
    """Checkpoint lines (digest, mask, path) replayed to frontier records; ("E", path) for a path that does not
    replay to its digest (a corrupt file, or another model)."""
    for d, mask, path in records:
        s = replay_path(spec, path)
        if s is None or digest(spec, s) != d:
            yield "E", path
        else:
            yield d, (tuple(path), mask, s)


# --------------------------------------------------------------------------- checkpoints
def search_identity(spec: Spec, options: dict) -> str:
    """A digest of everything the search's result depends on (not its limits: max_states, max_depth, budget)."""
    data = {"format": FORMAT, "config": spec.cfg.to_json(), "eager_tasks": spec.eager_tasks,
            "without": sorted(spec.without), "max_leader_epoch": spec.max_leader_epoch,
            "max_isr_changes": spec.max_isr_changes, "max_queue": spec.max_queue, "deadline": spec.deadline,
            "symmetry": spec.symmetry, "invariants": list(spec.invariants), "options": options,
            "initial_state": fingerprint(initial_state(spec.cfg))}
    return hashlib.sha256(canonical_json_data(data).encode()).hexdigest()[:16]


def canonical_json_data(data) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _atomic_stream(path: str, lines) -> str:
    """Write gzip-compressed lines to path atomically (a temporary file in the folder, fsynced, renamed); the
    sha256 of the file written."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
                for line in lines:
                    gz.write(line.encode() + b"\n")
            raw.flush()
            os.fsync(raw.fileno())
        h = hashlib.sha256()
        with open(tmp, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        os.replace(tmp, path)
        return h.hexdigest()
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_manifest(folder: str, manifest: dict) -> None:
    from .model.trace import write_atomic

    write_atomic(os.path.join(folder, MANIFEST), json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def _manifest_problem(m: dict) -> str | None:
    """What is wrong with the fields a resumed search reads of a decoded manifest, or None."""
    from .inputs import Maybe, shape_problem

    shape = {"format": int, "identity": str, "events": [list], "kinds": dict, "errors": int, "witnesses": [str],
             "passed": int, "stopped_at": Maybe([int]), "done": bool, "at_stop?": dict, "bounds_met?": [str],
             "levels": [{"depth": int, "states": int, "transitions": int, "pruned": int, "chain_states?": int,
                         "file": str, "sha256": str}]}
    problem = shape_problem(m, shape)
    if problem is not None:
        return problem
    if not m["levels"]:
        return "levels: no level (a checkpoint holds its first level from the start)"
    for i, e in enumerate(m["levels"]):
        if os.path.basename(e["file"]) != e["file"] or not e["file"].startswith("level-"):
            return f"levels/{i}/file: not a level file of the checkpoint's folder"
    for i, ev in enumerate(m["events"]):
        if not (len(ev) == 6 and isinstance(ev[0], list) and all(type(x) is int for x in ev[0])
                and all(type(x) is int for x in (ev[1], ev[2], ev[5])) and isinstance(ev[3], str)):
            return f"events/{i}: expected [path, phase, order, invariant, facts, mask]"
    if not all(type(v) is int for v in m["kinds"].values()) or not all(type(v) is int for v in
                                                                       m.get("at_stop", {}).values()):
        return "kinds or at_stop: expected counts"
    if not set(m.get("at_stop", {})) <= {"distinct_states", "transitions", "pruned", "depth", "chain_states"}:
        return "at_stop: a figure no search records"
    return None


def read_manifest(folder: str, identity: str | None) -> dict | None:
    """The manifest of a checkpoint of this search in folder; None if there is none.  CheckpointError if the file
    is not a manifest of this format (read within the JSON limits, a FIFO or a special file refused, every field it
    resumes from checked), or is of another search (``identity`` None: the file alone is checked, as the command
    does before it starts Spark)."""
    from .model.trace import TraceError, parse_json, read_regular_file

    path = os.path.join(folder, MANIFEST)
    if not os.path.lexists(path):
        return None
    try:
        m = parse_json(read_regular_file(path, 64 << 20), path)
    except TraceError as e:        # "PATH is not valid JSON: ...", "PATH is a FIFO, ...": said after the path
        why = str(e)[len(path):].lstrip(":").strip() if str(e).startswith(path) else str(e)
        raise CheckpointError(f"corrupt checkpoint {path}: {why}") from None
    if not (isinstance(m, dict) and m.get("format") == FORMAT):
        raise CheckpointError(f"corrupt checkpoint {path}: not an isrlab explore checkpoint of format {FORMAT}")
    problem = _manifest_problem(m)
    if problem is not None:
        raise CheckpointError(f"corrupt checkpoint {path}: {problem}")
    if identity is not None and m["identity"] != identity:
        raise CheckpointError(f"checkpoint {path} is of another search (bounds, preset or model differ): give "
                              f"another --checkpoint folder, or remove this one")
    return m


def read_level(folder: str, entry: dict):
    """The lines (digest, mask, path) of one checkpointed level, checked against the manifest's sha256 and count."""
    path = os.path.join(folder, entry["file"])
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        if h.hexdigest() != entry["sha256"]:
            raise CheckpointError(f"corrupt checkpoint {path}: its sha256 is not the one {MANIFEST} records")
        out = []
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                d, mask, p = json.loads(line)
                if not (isinstance(d, str) and isinstance(mask, int) and isinstance(p, list)
                        and all(isinstance(i, int) and i >= 0 for i in p)):
                    raise ValueError(f"line {n} is not [digest, mask, path]")
                out.append((int(d, 16), mask, p))
    except CheckpointError:
        raise
    except (OSError, EOFError, ValueError, TypeError, gzip.BadGzipFile) as e:
        raise CheckpointError(f"corrupt checkpoint {path}: {e}") from None
    if len(out) != entry["states"]:
        raise CheckpointError(f"corrupt checkpoint {path}: {len(out)} states, {MANIFEST} says {entry['states']}")
    return out


# --------------------------------------------------------------------------- the driver
class Judging:
    """The single-process explorer's bookkeeping of violations (``note``, ``take``, ``enough``), applied to a level's
    violations in the order that explorer meets them."""

    def __init__(self, spec: Spec, stop_at_first: bool, go_on_past: frozenset, judge, res):
        self.spec, self.stop_at_first, self.go_on_past, self.judge, self.res = spec, stop_at_first, go_on_past, judge, res
        self.bits = spec.checks()[0]
        self.n_inv = len(spec.invariants)

    def note(self, name, facts, actions) -> None:
        from .properties.explore import Found
        from .properties.invariants import Violation

        found = self.res.found
        old = found.get(name)
        if old is not None and len(old.actions) <= len(actions):
            return
        if self.stop_at_first and name not in self.go_on_past:
            stops = [len(f.actions) for n, f in found.items() if n not in self.go_on_past]
            if stops:
                best = min(stops)
                if best < len(actions):
                    return
                if best > len(actions):
                    for n in [n for n in found if n not in self.go_on_past]:
                        del found[n]
        found[name] = Found(Violation(name, len(actions), facts), -1, list(actions))

    def take(self, name, facts, actions) -> int:
        """Record a violation, or pass it (the judge's say): the bit of a passed one, else 0."""
        if self.judge is not None and name not in self.go_on_past and self.judge(name, facts, actions):
            self.res.passed += 1
            return self.bits[name]
        self.note(name, facts, actions)
        return 0

    def enough(self, d: int) -> bool:
        found = self.res.found
        if not found:
            return False
        if self.stop_at_first:
            stops = [len(f.actions) for n, f in found.items() if n not in self.go_on_past]
            # a coarse level d + 1 holds traces of d + 1 choices and at least as many actions: it stops the
            # search at the level of its first violation (the fewest choices), not the fewest actions
            return bool(stops) and (self.spec.composite or max(stops) <= d + 1)
        return len(found) == self.n_inv and (self.spec.composite
                                             or max(len(f.actions) for f in found.values()) <= d + 1)

    def level(self, d: int, events) -> tuple:
        """Judge a level's violations: events (path, phase, order, name, facts, parent mask), phase 0 for a
        transition's step invariants and 1 for its new state's.  Returns ({path: bits passed on it}, the path of the
        transition the search stops at, or None)."""
        passed: dict = {}
        events = sorted(events, key=lambda e: (e[0], e[1], e[2]))
        i = 0
        while i < len(events):
            path = events[i][0]
            while i < len(events) and events[i][0] == path:
                _p, _phase, _o, name, facts, mask = events[i]
                i += 1
                if name in self.res.found or (mask | passed.get(path, 0)) & self.bits[name]:
                    continue   # not checked there: found already, or passed on this path
                got = self.take(name, facts, actions_of(self.spec, path))
                if got:
                    passed[path] = passed.get(path, 0) | got
            if self.enough(d):
                return passed, path
        return passed, None


def run(spark, cfg, *, max_leader_epoch=None, max_isr_changes=None, max_depth=None, max_time_ms=None,
        eager_tasks=False, without=(), invariants=None, symmetry=False, stop_at_first=True, max_states=None,
        should_stop=None, go_on_past=frozenset(), max_queue=None, judge=None, checkpoint=None, checkpoint_root=None,
        label="search", options=None, progress=None, partitions=None, composite=False, max_in_flight=0,
        max_lagging=0):
    """Breadth-first search of ``explore``'s state space on Spark, level by level; (ExploreResult, info).

    The same arguments as ``properties.explore.explore`` (without chain compression, liveness or settling);
    ``checkpoint``: a folder each finished level is written to, and resumed from when it holds this search
    (``checkpoint_root``: the folder ``<label>-<identity>`` under it, so that the same search resumes by itself);
    ``options``: what else the result depends on (the judge's identity), for the checkpoint's identity.
    ``info``: {"levels": [{"depth", "states", "transitions", "pruned"}], "resumed_from": depth or None, ...}.
    ``max_states`` and ``should_stop`` are asked between levels, so a search they stop has whole levels.
    ``composite``: a coarse search, each choice followed by its exchange and the deliveries as ``explore`` takes
    them (``successors``), a level per choice, so its shortest trace is the one of fewest choices; but for a due
    task an eager search offers alone, no state is stepped through for having one successor (chain compression), so
    it stores every state ``explore(..., composite=True)`` does and some more.  ``max_in_flight`` and
    ``max_lagging`` hold requests and brokers as ``explore``'s do (``successors``), each held branch a choice.
    """
    from .model import actions as A
    from .properties.explore import BOUND_NAMES, ExploreResult, ExplorerError, _check_symmetric, budgets_used_up
    from .properties.invariants import SAFETY

    for name, v in (("max_in_flight", max_in_flight), ("max_lagging", max_lagging)):
        if v < 0:
            raise ExplorerError(f"{name} must be >= 0 (got {v})")
    if not composite:
        max_in_flight = max_lagging = 0   # a fine search answers and delivers nothing of itself
    invariants = SAFETY if invariants is None else tuple(invariants)
    if symmetry:
        _check_symmetric(cfg)
    names = tuple(sorted(w if isinstance(w, str) else w.__name__ for w in without))
    unknown = [w for w in names if w not in A.ACTION_BY_NAME]
    if unknown:
        raise ExplorerError(f"unknown action kind(s) {', '.join(unknown)}")
    s0 = initial_state(cfg)
    deadline = None if max_time_ms is None else s0.now + max_time_ms
    spec = Spec(cfg, eager_tasks, names, max_leader_epoch, max_isr_changes, max_queue, deadline, symmetry,
                tuple(inv.name for inv in invariants), bool(composite), max_in_flight, max_lagging)
    go_on_past = frozenset(go_on_past)
    holds = {"max_in_flight": max_in_flight, "max_lagging": max_lagging} if spec.holding else {}
    identity = search_identity(spec, {"stop_at_first": stop_at_first, "go_on_past": sorted(go_on_past),
                                      **({"composite": True} if spec.composite else {}), **holds, **(options or {})})
    if checkpoint is None and checkpoint_root is not None:
        checkpoint = os.path.join(checkpoint_root, f"{label}-{identity}")
    sc = spark.sparkContext
    n_parts = partitions or max(2, sc.defaultParallelism * 2)
    t0, c0 = time.perf_counter(), time.process_time()
    res = ExploreResult(cfg, symmetry, max_leader_epoch, max_depth, max_isr_changes, max_time_ms, eager_tasks,
                        names, compressed=False, max_queue=max_queue, composite=spec.composite,
                        max_in_flight=spec.max_in_flight, max_lagging=spec.max_lagging)
    judging = Judging(spec, stop_at_first, go_on_past, judge, res)
    info = {"levels": [], "resumed_from": None, "identity": identity, "checkpoint": checkpoint,
            "partitions": n_parts}
    kinds: dict = {}
    witnesses: set = set()
    bounds: set = set()    # the bounds met (``ExploreResult.bounds_met``)
    manifest = read_manifest(checkpoint, identity) if checkpoint else None
    stop_path = None
    if manifest is None:
        state_checks = spec.checks()[1]
        events = [((), 1, k, inv.name, facts, 0) for k, inv in enumerate(state_checks)
                  for facts in [inv.check(cfg, s0)] if facts is not None]
        passed, stop_path = judging.level(-1, events)
        mask0 = passed.get((), 0)
        from .properties.invariants import WITNESSES

        witnesses |= {w.name for w in WITNESSES if w.check(cfg, s0)}
        bounds |= budgets_used_up(cfg, s0)
        levels = [{"depth": 0, "states": 1, "transitions": 0, "pruned": 0, "chain_states": 0}]
        lines = [(digest(spec, s0), mask0, [])]
        manifest = {"format": FORMAT, "identity": identity, "levels": [], "events": [[[], 1, e[2], e[3], _jsonable(e[4]), 0]
                                                                                      for e in events],
                    "kinds": {}, "errors": s0.ghost.errors_seen, "witnesses": sorted(witnesses), "passed": res.passed,
                    "bounds_met": sorted(bounds),
                    "stopped_at": None if stop_path is None else list(stop_path), "done": stop_path is not None}
        if checkpoint:
            os.makedirs(checkpoint, exist_ok=True)
            _save_level(checkpoint, manifest, levels[0], lines)
        frontier_lines, errors = lines, s0.ghost.errors_seen
    else:
        levels = [{**{k: e[k] for k in ("depth", "states", "transitions", "pruned")},
                   "chain_states": e.get("chain_states", 0)} for e in manifest["levels"]]
        info["resumed_from"] = levels[-1]["depth"]
        # the violations judged so far, judged again in order: the judge and ``found`` as they were
        by_depth: dict = {}
        for ev in manifest["events"]:
            p, phase, order, name, facts, mask = ev
            by_depth.setdefault(len(p) // spec.stride, []).append((tuple(p), phase, order, name, facts, mask))
        for d in sorted(by_depth):
            judging.level(d - 1, by_depth[d])
        res.passed = manifest["passed"]
        kinds.update(manifest["kinds"])
        witnesses |= set(manifest["witnesses"])
        # a checkpoint from before the field: every bound counted as met, so that nothing more is claimed
        bounds |= set(manifest.get("bounds_met", BOUND_NAMES))
        errors = manifest["errors"]
        stop_path = None if manifest["stopped_at"] is None else tuple(manifest["stopped_at"])
        frontier_lines = None
    res.distinct_states = sum(e["states"] for e in levels)
    res.transitions = sum(e["transitions"] for e in levels)
    res.chain_states = sum(e["chain_states"] for e in levels)
    res.pruned = sum(e["pruned"] for e in levels)
    res.depth = levels[-1]["depth"] if levels[-1]["states"] else max(0, levels[-1]["depth"] - 1)
    stopped = stop_path is not None   # a violation ended the search (a search done otherwise has an empty last level)
    if stopped:
        res.stop_reason = "violation"
        for k, v in manifest.get("at_stop", {}).items():
            setattr(res, k, v)
    visited = frontier = None
    if not stopped and levels[-1]["states"]:
        visited, frontier = _load(sc, spec, checkpoint, manifest, frontier_lines, n_parts)
    d = levels[-1]["depth"]
    spent: list = []   # RDDs to drop once the next level's dedup has read what it needs of them
    while not stopped and levels[-1]["states"]:
        if should_stop is not None and should_stop():
            res.stopped_by_budget, res.stop_reason = True, "budget"
            break
        if max_states is not None and res.distinct_states >= max_states:
            res.stop_reason = "max_states"
            break
        if max_depth is not None and d >= max_depth:
            res.stop_reason = "max_depth"
            break
        found_now = frozenset(res.found)
        side = side_accumulator(sc)   # the counts and the step invariants' violations, per frontier partition
        cands = (frontier.mapPartitionsWithIndex(lambda i, it, f=found_now, acc=side: expand_partition(spec, f, acc, i, it))
                 .reduceByKey(least_path, n_parts))
        new = (cands.subtractByKey(visited, n_parts)
               .mapPartitions(lambda it, f=found_now, w=frozenset(witnesses): check_partition(spec, f, w, it),
                              preservesPartitioning=True)
               .persist(_level()))
        summary = new.mapPartitions(summarize_partition).collect()
        # that job read the visited set and the frontier of the level before (cached): they may go now
        for rdd in spent:
            rdd.unpersist()
        spent = []
        counts = [side.value[k][:4] + side.value[k][6:7] for k in sorted(side.value)]
        for k in side.value:
            bounds.update(side.value[k][5])
        step_events = [e for k in sorted(side.value) for e in side.value[k][4]]
        lines = [x for part in summary for x in part[2]]
        met = [x for part in summary for x in part[0]]     # (path, witnesses) of the new states that show some
        n_new = len(lines)
        transitions = sum(c[0] for c in counts)
        pruned = sum(c[1] for c in counts)
        chains = sum(c[4] for c in counts)
        # each event with its parent's mask (a step event's path ends with its transition; a new state's path too)
        masks = {}
        if step_events or any(x[1] for x in summary):
            wanted = ({parent_path(spec, p) for p, _n, _f in step_events}
                      | {parent_path(spec, p) for x in summary for p, _v in x[1]})
            masks = dict(frontier.filter(lambda r, w=wanted: r[1][0] in w).map(lambda r: (r[1][0], r[1][1]))
                         .collect())
        _bits, state_checks, step_checks = spec.checks()
        step_order = {inv.name: k for k, inv in enumerate(step_checks)}
        state_order = {inv.name: k for k, inv in enumerate(state_checks)}
        events = [(p, 0, step_order[n], n, f, masks[parent_path(spec, p)]) for p, n, f in step_events]
        events += [(p, 1, state_order[n], n, f, masks[parent_path(spec, p)])
                   for x in summary for p, viols in x[1] for n, f in viols]
        passed, stop_path = judging.level(d, events)
        manifest["events"] += [[list(e[0]), e[1], e[2], e[3], _jsonable(e[4]), e[5]] for e in events]
        level = {"depth": d + 1, "states": n_new, "transitions": transitions, "pruned": pruned,
                 "chain_states": chains}
        levels.append(level)
        if stop_path is not None:
            # the single-process search stops at that transition: its figures are those of what it met before
            stopped = True
            res.stop_reason = "violation"
            counts = frontier.mapPartitions(lambda it, sp=stop_path, f=found_now: count_until(spec, f, sp, it)).collect()
            transitions = sum(c[0] for c in counts)
            pruned = sum(c[1] for c in counts)
            chains = sum(c[4] for c in counts)
            n_new = sum(1 for _dg, _m, p in lines if p <= stop_path)
            met = [(p, w) for p, w in met if p <= stop_path]
        for c in counts:
            errors |= c[2]
            for k, v in c[3].items():
                kinds[k] = kinds.get(k, 0) + v
        for _p, w in met:
            witnesses |= w
        res.distinct_states += n_new
        res.transitions += transitions
        res.pruned += pruned
        res.chain_states += chains
        if n_new:
            res.depth = d + 1
        if passed:
            lines = [(dg, m | passed.get(p, 0), p) for dg, m, p in lines]
        manifest.update(kinds=dict(sorted(kinds.items())), errors=errors, witnesses=sorted(witnesses),
                        passed=res.passed, bounds_met=sorted(bounds))
        if stopped:
            manifest.update(stopped_at=list(stop_path), done=True,
                            at_stop={"distinct_states": res.distinct_states, "transitions": res.transitions,
                                     "chain_states": res.chain_states,
                                     "pruned": res.pruned, "depth": res.depth})
        if checkpoint:
            lines.sort(key=lambda x: x[2])
            _save_level(checkpoint, manifest, level, ((dg, m, list(p)) for dg, m, p in lines))
            _hold_for_test(level["depth"])
        nxt = new
        if passed:
            bc = sc.broadcast(passed)
            nxt = new.map(lambda r, b=bc: (r[0], (r[1][0], r[1][1] | b.value.get(r[1][0], 0)) + r[1][2:]),
                          preservesPartitioning=True).persist(_level())
            spent.append(new)
        spent += [frontier]
        if not stopped:
            spent.append(visited)
            visited = visited.union(nxt.mapValues(lambda _v: None)).persist(_level())
        frontier = nxt
        d += 1
        if progress is not None:
            res.seconds = time.perf_counter() - t0
            res.cpu_seconds = time.process_time() - c0
            progress(res, level)
    for rdd in spent:
        rdd.unpersist()
    if not stopped and not levels[-1]["states"] and res.stop_reason is None:
        res.complete = True
        if checkpoint and not manifest["done"]:
            manifest["done"] = True
            write_manifest(checkpoint, manifest)
    for rdd in (frontier, visited):
        if rdd is not None:
            rdd.unpersist()
    res.kinds = dict(sorted(kinds.items()))
    res.bounds_met = frozenset(bounds)
    res.errors_seen = errors
    res.witnesses = frozenset(witnesses)
    res.queue = 0 if res.complete else levels[-1]["states"]
    res.seconds = time.perf_counter() - t0
    res.cpu_seconds = time.process_time() - c0
    info["levels"] = levels
    return res, info


def _hold_for_test(depth: int) -> None:
    """Test hook (off unless ISRLAB_TEST_TASK_MARKERS names a folder): once level ISRLAB_TEST_HOLD_LEVEL is
    checkpointed, the driver writes its PID to <folder>/explore-driver.pid and waits (at most 120 s), so that a
    test can kill a driver it knows is between two levels."""
    folder = os.environ.get("ISRLAB_TEST_TASK_MARKERS")
    if not folder or os.environ.get("ISRLAB_TEST_HOLD_LEVEL") != str(depth):
        return
    from .model.trace import write_atomic

    write_atomic(os.path.join(folder, "explore-driver.pid"), str(os.getpid()))
    end = time.monotonic() + 120.0
    while time.monotonic() < end:
        time.sleep(0.05)


def _level():
    from pyspark import StorageLevel

    return StorageLevel.MEMORY_AND_DISK


def _jsonable(facts):
    """Facts as JSON data (they are written to the manifest)."""
    return json.loads(json.dumps(facts, default=str))


def _save_level(folder: str, manifest: dict, level: dict, lines) -> None:
    """Write one level's states, then the manifest naming it (the level counts only once the manifest does)."""
    name = f"level-{level['depth']:04d}.jsonl.gz"
    sha = _atomic_stream(os.path.join(folder, name),
                         (json.dumps([format(d, "032x"), mask, p], separators=(",", ":")) for d, mask, p in lines))
    manifest["levels"] = [e for e in manifest["levels"] if e["depth"] < level["depth"]]
    manifest["levels"].append({**level, "file": name, "sha256": sha})
    write_manifest(folder, manifest)


def _load(sc, spec: Spec, checkpoint, manifest: dict, frontier_lines, n_parts):
    """(visited, frontier) RDDs, both hash-partitioned by digest: from the first level's lines, or read back from
    the checkpoint (every level's digests; the last level's paths replayed)."""
    if frontier_lines is not None:
        visited_keys = [(d, None) for d, _m, _p in frontier_lines]
        last = frontier_lines
    else:
        visited_keys = []
        for entry in manifest["levels"][:-1]:
            visited_keys += [(d, None) for d, _m, _p in read_level(checkpoint, entry)]
        last = read_level(checkpoint, manifest["levels"][-1])
        visited_keys += [(d, None) for d, _m, _p in last]
    restored = (sc.parallelize(last, max(1, min(n_parts, len(last))))
                .mapPartitions(lambda it: restore_partition(spec, it)).persist(_level()))
    bad = restored.filter(lambda r: r[0] == "E").take(1)
    if bad:
        entry = manifest["levels"][-1]
        raise CheckpointError(f"corrupt checkpoint {os.path.join(checkpoint, entry['file'])}: the path "
                              f"{bad[0][1]} does not replay to its digest (a damaged file, or a changed model)")
    frontier = restored.partitionBy(n_parts).persist(_level())
    frontier.count()
    restored.unpersist()
    visited = sc.parallelize(visited_keys, n_parts).partitionBy(n_parts).persist(_level())
    visited.count()
    return visited, frontier


def level_counts(res) -> list:
    """Stored states per depth of a single-process search (``explore(..., compress=False)``), for comparison."""
    out: dict = {}
    for dd in res.depths:
        out[dd] = out.get(dd, 0) + 1
    return [out.get(k, 0) for k in range(max(out) + 1)]
