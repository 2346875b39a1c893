"""A fuzz campaign's unit of work, without Spark: shard specs, seeds, one run, one shard, plain records.

A campaign fuzzes one or several presets with one engine.  Its work is cut into
tasks, one per (preset, shard); a task runs its shard's runs one after the other
and returns plain records (dicts of str, int, float, bool, lists and maps of
those: never a model object), which the Spark driver (``isrlab.sparkjob``) turns
into DataFrames, and which the in-process mode prints directly.

Seeds.  Run ``j`` of shard ``k`` has seed ``derive_seed(derive_seed(campaign_seed, k), j)``
(a stable blake2b hash, ``properties.walker.derive_seed``): the same on every
machine and in every process, different for every (shard, run), and independent
of the preset, so that two presets of one campaign try the same seeds (a bug is
found before the fix and gone after it on the very same walks).  A run is
replayed from its seed alone with ``isrlab fuzz --master none --preset P
--engine E --run-seed SEED`` (same ``--max-steps``/``--extensions``), and always
from its archived trace.

Determinism.  With ``runs`` (a fixed number of runs per shard) a task's records
depend only on its spec: a task that Spark reruns after losing an executor
returns exactly the records of an undisturbed attempt, so no seed is lost and
none is counted twice.  With a time budget, how many runs a shard completes
depends on the machine; every record still names its seed.

Ids.  A campaign's id reads when it started (UTC), its seed and a short digest of
its spec: ``20261129-071500-seed0-3f2a9c``.  ``new_campaign_folder`` creates its
folder exclusively, with a ``-2``, ``-3``... suffix when two campaigns start in the
same second with the same spec, so every campaign gets a new folder: re-running a
campaign never overwrites or merges into an earlier one.  The id is a name only: no
run's seed or record depends on it.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from dataclasses import asdict, dataclass, field

from .model.actions import action_to_json
from .model.config import preset as get_preset
from .model.errors import ERROR_BIT
from .properties.budget import Deadline
from .properties.invariants import BY_NAME, LIVENESS_BY_NAME, SAFETY
from .properties.walker import derive_seed, search, walk

#: The engines whose run is one walk or test from a seed (``isrlab mutate`` hunts with these).
ENGINES = ("guided", "walk", "hypothesis")
#: Every engine a campaign runs: those, and ``scopes``, whose run searches the ladder of small scopes
#: (``properties.scopes``) in an order drawn from its seed, so each shard of a campaign races its own order.
CAMPAIGN_ENGINES = ENGINES + ("scopes",)
#: Default steps per walk (walk), per extension (guided) or per test case (hypothesis); for scopes, the stored
#: states a scope may reach in the ladder's first pass (``properties.scopes.SCOPE_STATES``).
DEFAULT_MAX_STEPS = {"walk": 120, "guided": 40, "hypothesis": 50, "scopes": 10_000}
#: Passes of a scopes run over the scopes its cap stopped, each cap ``properties.scopes.GROWTH`` times the last: the
#: fifth stores at most 2.56M states a scope (some 3 GB), within what one executor slot can be given.
SCOPE_PASSES = 5
#: Test cases per Hypothesis run.
HYPOTHESIS_EXAMPLES = 100


@dataclass(frozen=True)
class CampaignSpec:
    """Everything that decides what a campaign runs (its id's digest), nothing about where or when it runs."""

    presets: tuple
    seed: int = 0
    engine: str = "guided"
    shards: int = 2
    #: runs per preset, split evenly over the shards (None: until the per-shard budget is spent)
    runs: int | None = None
    #: seconds per shard (None: until the runs are done)
    shard_budget_s: float | None = None
    max_steps: int | None = None
    extensions: int = 6000
    #: names of the safety invariants checked (empty: all of them)
    invariants: tuple = ()
    swarm: bool = True
    #: a shard stops at its first violation
    stop_on_violation: bool = False
    #: a run goes on after a violation, without checking that invariant again (walk and guided)
    keep_going: bool = True
    #: violating traces a shard keeps per invariant (the others keep their seed and facts)
    traces_per_invariant: int = 2
    #: seconds Hypothesis may spend shrinking inside a run (hypothesis engine)
    machine_shrink_budget_s: float = 5.0

    def __post_init__(self):
        if not self.presets:
            raise ValueError("a campaign needs at least one preset")
        for name in self.presets:
            get_preset(name)  # ConfigError for an unknown name
        if self.engine not in CAMPAIGN_ENGINES:
            raise ValueError(f"unknown engine {self.engine!r} (known: {', '.join(CAMPAIGN_ENGINES)})")
        if self.shards < 1:
            raise ValueError("shards must be at least 1")
        if self.runs is None and self.shard_budget_s is None:
            raise ValueError("a campaign needs runs per shard or a budget")
        unknown = [n for n in self.invariants
                   if n not in LIVENESS_BY_NAME and (n not in BY_NAME or BY_NAME[n] not in SAFETY)]
        if unknown:
            raise ValueError(f"unknown invariant(s) {', '.join(unknown)} "
                             f"(known: {', '.join([i.name for i in SAFETY] + list(LIVENESS_BY_NAME))})")
        # not a field: no part of the spec's JSON, its equality or the runs; only the default time of its id
        object.__setattr__(self, "_made_unix", time.time())

    @property
    def steps(self) -> int:
        return self.max_steps or DEFAULT_MAX_STEPS[self.engine]

    @property
    def checked(self) -> tuple:
        """The safety invariants checked after every step."""
        return tuple(BY_NAME[n] for n in self.invariants if n in BY_NAME) if self.invariants else SAFETY

    @property
    def liveness(self) -> tuple:
        """The liveness properties checked by settling the cluster (``properties.settle``) after a run."""
        if not self.invariants:
            return tuple(LIVENESS_BY_NAME)
        return tuple(n for n in self.invariants if n in LIVENESS_BY_NAME)

    def to_json(self) -> dict:
        d = asdict(self)
        d["presets"] = list(self.presets)
        d["invariants"] = list(self.invariants)
        return d

    @classmethod
    def from_json(cls, d: dict) -> "CampaignSpec":
        return cls(**dict(d, presets=tuple(d["presets"]), invariants=tuple(d["invariants"])))

    def campaign_id(self, started: float | None = None) -> str:
        """YYYYMMDD-HHMMSS-seed<N>-<spec digest> at UTC ``started`` (default: when the spec was made): sorts by time."""
        when = time.strftime("%Y%m%d-%H%M%S", time.gmtime(self._made_unix if started is None else started))
        text = json.dumps(self.to_json(), sort_keys=True)
        return f"{when}-seed{self.seed}-{hashlib.blake2b(text.encode(), digest_size=3).hexdigest()}"

    def runs_for(self, shard: int) -> int | None:
        """How many runs shard ``shard`` does (None: as many as its budget allows)."""
        if self.runs is None:
            return None
        return self.runs // self.shards + (shard < self.runs % self.shards)

    def tasks(self) -> list[tuple]:
        """One (preset, shard, spec JSON) per task, in a stable order; plain data, cheap to ship."""
        spec = json.dumps(self.to_json(), sort_keys=True)
        return [(name, k, spec) for name in self.presets for k in range(self.shards)]


#: suffixes tried after a campaign id's own name is taken (-2 ... -MAX_SUFFIX)
MAX_SUFFIX = 10_000


def new_campaign_folder(out: str, spec: CampaignSpec, started: float | None = None) -> tuple[str, str]:
    """(id, path) of a campaign folder made under ``out`` with os.mkdir, a -2, -3... suffix if taken: never reused."""
    os.makedirs(out, exist_ok=True)   # the parent every campaign shares; only the campaign's own folder is exclusive
    base = spec.campaign_id(started)
    for n in range(1, MAX_SUFFIX + 1):
        cid = base if n == 1 else f"{base}-{n}"
        try:
            os.mkdir(os.path.join(out, cid))
        except FileExistsError:
            continue
        return cid, os.path.join(out, cid)
    raise FileExistsError(f"{os.path.join(out, base)} and its suffixes up to -{MAX_SUFFIX} all exist")


def run_seed(campaign_seed: int, shard: int, index: int) -> int:
    """The seed of run ``index`` of shard ``shard``: a stable hash, never shared by two (shard, run) pairs."""
    return derive_seed(derive_seed(campaign_seed, shard), index)


def error_names(bits: int) -> list[str]:
    """The error names of an ``errors_seen`` bit set, sorted."""
    return sorted(name for name, bit in ERROR_BIT.items() if bits & bit)


@dataclass
class RunOutcome:
    """One run of an engine: what the in-process loop and the shard records are built from."""

    seed: int
    steps: int
    #: (Violation, its failing actions) for the first violation of each invariant, in the order found
    violations: list
    kind_counts: dict = field(default_factory=dict)
    witnesses: frozenset = frozenset()
    errors_seen: int = 0
    #: True when ``should_stop`` (the budget) cut the run short: it did less than its spec asks
    stopped: bool = False
    #: (Violation, actions) the run went past: known bugs the preset does not expect (guided, scopes)
    passed: list = field(default_factory=list)
    #: True when the run searched everything it can (a scopes run's ladder ended): another seed would repeat it
    exhausted: bool = False
    #: a scopes run: per entry of ``violations`` and ``passed``, the bounds of the scope it was met in (its trace
    #: replays in ``scope_config(preset, bounds)``, not in the preset's own configuration)
    scopes: list = field(default_factory=list)

    @property
    def violation(self):
        return self.violations[0][0] if self.violations else None

    @property
    def actions(self) -> list:
        return self.violations[0][1] if self.violations else []


def known_elsewhere(p):
    """go_past for the guided search: a violation the fix of a known bug removes, where that bug is not one the
    preset expects (the pending-reset race in a fix-off KRaft preset), is gone past, so it never hides the other."""
    from .properties.attribution import attribute, classify

    def go_past(v, actions) -> bool:
        return classify(p, attribute(p.config, actions, v.invariant, step=v.step, expected=p.bugs))[0] == "known"
    return go_past


def run_one(spec: CampaignSpec, preset_name: str, seed: int, should_stop=None,
            keep_going: bool | None = None, go_past=None) -> RunOutcome:
    """One run of ``spec.engine`` on a preset with a given seed (the same call the in-process mode makes).

    ``keep_going`` (default: ``spec.keep_going``) lets walk and guided runs go on after a violation,
    no longer checking the failed invariant, so that a shallow bug cannot hide a deeper one in the
    same run; a Hypothesis run reports its first (shrunk) failure only.  ``go_past(violation, actions)``: what the
    guided search goes past (default ``known_elsewhere``: known bugs the preset does not expect).  ``should_stop`` (a
    ``budget.Deadline``) reaches every engine's inner loop: a run it cuts short says so (``stopped``)
    and did what the same seed does unbounded up to there.  A scopes run calls ``go_past`` with a third argument,
    the configuration of the scope the violation was met in.
    """
    p = get_preset(preset_name)
    cfg = p.config
    keep = spec.keep_going if keep_going is None else keep_going
    if spec.engine == "walk":
        r = walk(cfg, seed, spec.steps, spec.checked, swarm=spec.swarm, keep_going=keep, should_stop=should_stop,
                 liveness=spec.liveness)
        found = [(v, r.actions[:v.step]) for v in r.violations]
        return RunOutcome(seed, r.steps, found, r.kind_counts, r.witnesses, r.errors_seen, r.stopped)
    if spec.engine == "scopes":
        return _scopes_run(spec, preset_name, seed, should_stop, go_past)
    if spec.engine == "guided":
        r = search(cfg, seed, spec.extensions, spec.steps, spec.checked, should_stop=should_stop, keep_going=keep,
                   liveness=spec.liveness, go_past=known_elsewhere(p) if go_past is None else go_past)
        return RunOutcome(seed, r.steps, list(r.violations), r.kind_counts, r.witnesses, r.errors_seen, r.stopped,
                          list(r.passed))
    from .properties.machines import run_machine

    m = run_machine(cfg, seed, HYPOTHESIS_EXAMPLES, spec.steps, spec.checked,
                    shrink_budget_s=spec.machine_shrink_budget_s, preset=preset_name, should_stop=should_stop,
                    liveness=spec.liveness)
    found = [] if m.violation is None else [(m.violation, list(m.actions))]
    return RunOutcome(seed, m.steps, found, dict(m.kinds), m.witnesses, m.errors_seen, m.stopped_early)


def scope_base(preset_name: str) -> dict:
    """The bounds a scopes run leaves as the preset has them (``model.config.explore_bounds``, and a user preset's
    ``explore`` table), its leaders' ISR writes unbounded: ``isrlab explore --scopes``'s base."""
    from .model.config import explore_bounds
    from .userpresets import EXPLORE

    return {**explore_bounds(preset_name), **EXPLORE.get(preset_name, {}), "max_isr_changes": None}


def scope_config(preset_name: str, scope: dict | None):
    """The configuration a run's violation was met in: the preset's, or for a scope's bounds that scope's."""
    cfg = get_preset(preset_name).config
    if scope is None:
        return cfg
    from .properties.explore import search_args

    return search_args(cfg, {**scope_base(preset_name), **scope})[0]


def _scopes_run(spec: CampaignSpec, preset_name: str, seed: int, should_stop, go_past=None) -> RunOutcome:
    """One scopes run: the ladder within the preset's budgets in ``seed``'s order, judged scope by scope as
    ``isrlab explore --scopes`` judges it (the preset's known bugs gone past), until a violation it keeps, the
    budget, or the ladder's end.  ``go_past(violation, actions, scope_cfg)``, if given, judges instead (what a
    mutation hunt goes past); the violations it passes are not reported."""
    from .properties.attribution import ScopeJudges
    from .properties.invariants import Violation
    from .properties.scopes import combined, search_scopes

    p = get_preset(preset_name)
    if go_past is None:
        judge_for = ScopeJudges(p)
    else:
        def judge_for(scfg):
            return lambda name, facts, actions: go_past(Violation(name, len(actions), facts), actions, scfg)
    out = search_scopes(p.config, scope_base(preset_name), judge_for=judge_for, seed=seed,
                        scope_states=spec.steps, should_stop=should_stop, max_rounds=SCOPE_PASSES,
                        invariants=spec.checked)
    if not out.searched:
        return RunOutcome(seed, 0, [], stopped=True)
    r = combined(out)
    found, passed, scopes = [], [], []
    if out.decisive is not None:
        for f in out.decisive.result.found.values():
            found.append((f.violation, list(f.actions)))
            scopes.append(dict(out.decisive.bounds))
    for sc in out.searched if go_past is None else ():
        for (name, _kind, _bugs), (actions, facts) in sc.judge.passed.items():
            passed.append((Violation(name, len(actions), facts), list(actions)))
            scopes.append(dict(sc.bounds))
    return RunOutcome(seed, r.transitions, found, dict(r.kinds), r.witnesses, r.errors_seen,
                      stopped=out.stopped_by_budget, passed=passed,
                      exhausted=out.decisive is None and not out.stopped_by_budget, scopes=scopes)


def executor_name() -> str:
    """The host and the process that hosts this Python worker (on Spark: the executor's Python daemon)."""
    return f"{socket.gethostname()}/{os.getppid()}"


def hold_for_test(preset_name: str, shard: int, attempt: int) -> None:
    """Test hook (fault injection, off unless ISRLAB_TEST_TASK_MARKERS names a folder): attempt 0 of the task
    named by ISRLAB_TEST_HOLD_TASK ("preset:shard") writes its PID to <folder>/<preset>-<shard>-0.pid and waits
    (at most 120 s) so that a test can kill a task it knows is running; every other attempt runs at once."""
    folder = os.environ.get("ISRLAB_TEST_TASK_MARKERS")
    if not folder or attempt != 0 or os.environ.get("ISRLAB_TEST_HOLD_TASK") != f"{preset_name}:{shard}":
        return
    from .model.trace import write_atomic

    write_atomic(os.path.join(folder, f"{preset_name}-{shard}-{attempt}.pid"), str(os.getpid()))
    end = time.monotonic() + 120.0
    while time.monotonic() < end:
        time.sleep(0.05)


def run_shard(task: tuple, clock=time.monotonic) -> dict:
    """Run one task's shard and return its record, with one record per run under ``runs``.

    Plain data only.  ``task`` is ``(preset, shard, spec JSON)`` as ``CampaignSpec.tasks`` makes it.
    With a budget, one ``budget.Deadline`` bounds the whole shard: it is asked between runs and inside
    each run's engine, so the shard ends within about one check stride of it; a run it cut short has
    ``stopped`` set, and so has the shard (``stopped_by_budget``).  ``shard_runs`` is the same shard
    one run at a time, for a caller that streams the runs instead of holding them.
    """
    runs = []
    gen = shard_runs(task, clock)
    while True:
        try:
            runs.append(next(gen))
        except StopIteration as end:
            return {**end.value, "runs": runs}


def shard_runs(task: tuple, clock=time.monotonic):
    """A generator: each run's record of one task's shard as it ends, then (its return value, ``StopIteration.value``)
    the shard's record without ``runs``.  The records are those ``run_shard`` returns, in the same order."""
    preset_name, shard, spec_text = task
    spec = CampaignSpec.from_json(json.loads(spec_text))
    started = time.time()  # wall clock for the report only (when the shards ran): never read by a run
    t0 = clock()
    over = None if spec.shard_budget_s is None else Deadline(spec.shard_budget_s, clock)

    kept: dict[str, int] = {}
    steps = violating_runs = 0
    kinds: dict[str, int] = {}
    errors = 0
    j = 0
    quota = spec.runs_for(shard)
    while quota is None or j < quota:
        if over is not None and over():
            break
        seed = run_seed(spec.seed, shard, j)
        r = run_one(spec, preset_name, seed, should_stop=over)
        found = []
        entries = [(x, x[0].invariant) for x in r.violations] + [(x, ("passed", x[0].invariant)) for x in r.passed]
        for n, ((v, actions), key) in enumerate(entries):
            trace = None
            if kept.get(key, 0) < spec.traces_per_invariant:   # a run's known bugs gone past keep their own quota
                kept[key] = kept.get(key, 0) + 1
                trace = json.dumps([action_to_json(a) for a in actions], separators=(",", ":"))
            scope = r.scopes[n] if r.scopes else None
            found.append({"invariant": v.invariant, "step": v.step,
                          "facts": json.dumps(v.facts, sort_keys=True, default=str), "trace": trace,
                          "scope": None if scope is None else json.dumps(scope, sort_keys=True)})
        violating_runs += bool(found)
        yield {
            "run_index": j,
            "seed": seed,
            "steps": r.steps,
            "kind_counts": dict(sorted(r.kind_counts.items())),
            "error_codes": error_names(r.errors_seen),
            "witnesses": sorted(r.witnesses),
            "violation": found[0]["invariant"] if found else None,
            "violations": found,
            "stopped": r.stopped,
        }
        steps += r.steps
        for k, c in r.kind_counts.items():
            kinds[k] = kinds.get(k, 0) + c
        errors |= r.errors_seen
        j += 1
        if (found and spec.stop_on_violation) or r.exhausted:
            break
    seconds = clock() - t0
    return {
        "preset": preset_name,
        "shard": shard,
        "engine": spec.engine,
        "executor": executor_name(),
        "runs_done": j,
        "stopped_by_budget": over is not None and over.expired,
        "steps": steps,
        "violating_runs": violating_runs,
        "seconds": round(seconds, 6),
        "started_unix": started,
        "ended_unix": time.time(),
        "steps_per_second": round(steps / seconds, 1) if seconds > 0 else 0.0,
        "action_kinds": len(kinds),
        "error_codes": len(error_names(errors)),
        "invariants": [inv.name for inv in spec.checked] + list(spec.liveness),
    }
