"""The mutation benchmark: the fuzz engines (and the fast tests) against the registry of rule mutants.

A task is one (mutant, engine, seed): the mutant is installed by name (``properties.mutants``) in the
process that runs it, in process or on a Spark executor, and the engine hunts as ``isrlab fuzz --master
none`` does (``campaign.run_one``'s engine calls) on the seeds ``run_seed(seed, 0, n)`` one after
another, until a kill, the budget in seconds, or the budget in model steps (checked between runs).

The kill rule: a violation of invariant I on trace T, found on the mutated model, kills the mutant only
when T replayed on the unmutated model (same config, same start; ``mutants.suspended`` takes the mutant
out for that replay) does not fail I (``is_kill`` says why a trace the real model cannot run counts).
A violation the real model shows too is the preset's own, known bug or not: it is counted, not a kill,
and the engine searches on.  Every invariant is checked on every preset; nothing reads which bugs a
preset has.  A kill is shrunk with the mutant installed, keeping the rule.  Records are plain data; the
driver writes them as JSON and Parquet under ``<out>/mutate-<id>/`` and prints one row per mutant.

``run_tests`` asks the other question: do the fast tests (markers unit and scenario) kill the mutant?
Each mutant runs ``pytest -x -q`` in a subprocess with ``ISRLAB_MUTANT`` set, which ``tests/conftest.py``
installs at session start; tests that already fail on the real model are deselected first.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

from .campaign import CAMPAIGN_ENGINES, CampaignSpec, run_one, run_seed, scope_config
from .properties import mutants as registry
from .properties.budget import Deadline

#: the columns of a result row, in order (the Parquet schema and the JSON rows)
ROW_FIELDS = ("mutant", "area", "kind", "half", "engine", "seed", "killed", "invariant", "seconds", "steps", "runs",
              "original_length", "shrunk_length", "stopped", "error", "equivalent_reason",
              "unmutated", "unmutated_step", "evidence", "own_violations", "own_invariants")
TEST_MARKERS = "unit or scenario"
#: the rule-level test files, run before the rest of the folder (pytest collects a path once), so that with
#: ``-x`` a mutant they kill stops early; the kill verdict is the same in any order
RULE_TESTS_FIRST = ("test_mutants.py", "test_partition_rules.py", "test_replica_manager_rules.py", "test_log.py",
                    "test_model_core.py", "test_invariants.py", "test_scenarios.py", "test_alter_isr.py",
                    "test_kafka_cases.py", "test_counterexamples.py")


@dataclass(frozen=True)
class MutateSpec:
    """What a mutation run does (and so its id): preset, mutants, engines, seeds and budgets."""

    preset: str = "kafka-2.4"
    mutants: tuple = ()
    engines: tuple = ("guided",)
    seeds: tuple = (0,)
    #: seconds per (mutant, engine, seed); None: only ``max_steps`` bounds the hunt
    budget_s: float | None = 60.0
    #: model steps per (mutant, engine, seed), checked between runs; None: only the time budget
    max_steps: int | None = None
    shrink_budget_s: float = 5.0

    def __post_init__(self):
        for name in self.mutants:
            registry.lookup(name)
        unknown = [e for e in self.engines if e not in CAMPAIGN_ENGINES]
        if unknown:
            raise ValueError(f"unknown engine(s) {', '.join(unknown)} (known: {', '.join(CAMPAIGN_ENGINES)})")
        if self.budget_s is None and self.max_steps is None:
            raise ValueError("a mutation run needs a budget in seconds or in steps")

    def to_json(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, d: dict) -> "MutateSpec":
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})

    def run_id(self) -> str:
        """``mutate-<digest>``: the same run writes the same folder (a rerun overwrites it)."""
        text = json.dumps(self.to_json(), sort_keys=True)
        return f"mutate-{hashlib.blake2b(text.encode(), digest_size=6).hexdigest()}"

    def tasks(self) -> list[tuple]:
        """One (mutant, engine, seed, spec JSON) per task, mutant-major: plain data, cheap to ship."""
        spec = json.dumps(self.to_json(), sort_keys=True)
        return [(m, e, s, spec) for m in self.mutants for e in self.engines for s in self.seeds]


#: how the unmutated model fares on a kill's trace: it fails the invariant too, holds it, or cannot run the trace
FAILS, HOLDS, CUT = "fails", "holds", "cut"


def kill_candidates() -> tuple:
    """Every safety invariant and liveness property: a hunt checks all on any preset (its own are told by replay)."""
    from .properties.invariants import LIVENESS_BY_NAME, SAFETY

    return tuple(i.name for i in SAFETY) + tuple(LIVENESS_BY_NAME)


def unmutated_outcome(saved: list, cfg, actions, invariant: str, start: dict | None = None) -> tuple[str, int | None]:
    """(FAILS, step), (HOLDS, None) or (CUT, step): ``invariant`` on ``actions`` with the mutant ``saved`` out."""
    from .properties.invariants import LIVENESS_BY_NAME
    from .properties.shrink import replay_outcome

    with registry.suspended(saved):
        if invariant in LIVENESS_BY_NAME:
            return _settled_outcome(cfg, actions, invariant, start)
        return replay_outcome(cfg, actions, invariant, start)


def _settled_outcome(cfg, actions, invariant: str, start: dict | None) -> tuple[str, int | None]:
    """A liveness property on the real model: the trace as far as it runs, then the real model's own settling."""
    from .model.step import initial_state, step
    from .properties.settle import liveness_check

    s = initial_state(cfg, start)
    cut = None
    for i, a in enumerate(actions, 1):
        s2 = step(cfg, s, a)
        if s2 is None:
            cut = i
            break
        s = s2
    if liveness_check(invariant)(cfg, s) is not None:
        return FAILS, len(actions) if cut is None else cut - 1
    return (HOLDS, None) if cut is None else (CUT, cut)


# The kill rule, by the unmutated model's outcome on the violating trace T:
# - HOLDS kills: the real model runs the same actions from the same start and the invariant holds, so the violation
#   is the mutant's.
# - FAILS does not: the real model fails the invariant on T too, so the violation is the preset's own (a known bug or
#   not) and says nothing about the mutant.
# - CUT kills: some action of T is not enabled on the real model where T takes it, before the invariant failed there.
#   Both models started alike and took the same actions, so the mutation changed what the model allows (it enabled an
#   action the real model forbids, or reached a different state): a real behaviour change, and the violation lies on
#   a path the real model cannot take.
# - A liveness trace ends with the settling steps the fair schedule chose from the mutated model's state, not an
#   engine's choice, so there the real model follows T as far as it can and then settles with its own schedule
#   (``_settled_outcome``): a cut in the settling steps only says the schedules differ, and a real model that does
#   not settle there either makes the violation the preset's own.
def is_kill(outcome: tuple) -> bool:
    """Whether a mutated model's violation kills the mutant, from ``unmutated_outcome`` of its trace (rule above)."""
    return outcome[0] != FAILS


def evidence(invariant: str, outcome: tuple, length: int, shrunk: int | None = None) -> str:
    """One line: the kill's invariant, its trace's length, and what the unmutated model does on that trace."""
    what = (f"the unmutated model holds {invariant} on it" if outcome[0] == HOLDS
            else f"the unmutated model cannot take action {outcome[1]} of it" if outcome[0] == CUT
            else f"the unmutated model fails {invariant} on it too (no kill)")
    kept = f" (shrunk to {shrunk}, which keeps this)" if shrunk is not None and shrunk != length else ""
    return f"{invariant} on a {length}-action trace{kept}: {what}"


class _UnmutatedError(Exception):
    """The real model raised while a kill's trace was replayed on it: not the mutant's doing."""


def _run(cspec: CampaignSpec, preset_name: str, seed: int, should_stop, go_past):
    """One run as ``campaign.run_one`` makes it; a hunt judges what the guided search goes past by the unmutated
    model (``go_past``), not by the preset's known bugs, and the invariant stays checked for the rest of the run."""
    return run_one(cspec, preset_name, seed, should_stop=should_stop, keep_going=False, go_past=go_past)


def hunt(spec: MutateSpec, mutant: str, engine: str, seed: int, clock=time.monotonic, observe=None) -> dict:
    """One task: install ``mutant``, hunt with ``engine`` from ``seed`` until a kill (``is_kill``) or a budget."""
    # A violation the real model shows too is the preset's own: counted in ``own_violations``, and the engine goes on.
    # The guided search goes past it (``_run``); a walk or Hypothesis run that stopped at it is made again without
    # checking that invariant (the engines are deterministic per seed, so it is the same run up to there), and the
    # next run checks every invariant again.  ``observe(actions, invariant, outcome)``, if given, sees every violation
    # judged, with the mutant installed; it must not raise (an exception under the mutant counts as a model error).
    from .model.config import preset as get_preset
    from .properties.budget import either
    from .properties.shrink import shrink

    m = registry.lookup(mutant)
    cfg = get_preset(spec.preset).config
    every = kill_candidates()
    row = dict.fromkeys(ROW_FIELDS)
    row.update(mutant=m.name, area=m.area, kind=m.kind, half=m.half, engine=engine, seed=seed, killed=False,
               runs=0, stopped=False, equivalent_reason=m.equivalent_reason, own_violations=0)
    steps = runs = index = 0
    own: dict[str, int] = {}
    judged: dict[tuple, tuple] = {}   # (invariant, trace) -> outcome: each violation judged and counted once
    t0 = clock()
    deadline = Deadline(spec.budget_s, clock)
    over_steps = (lambda: steps >= spec.max_steps) if spec.max_steps is not None else None
    stop = either(deadline, over_steps)
    found = None
    saved = registry.install(mutant)

    def judge(v, actions, at=cfg) -> tuple:
        """The unmutated model's outcome on a violation's trace (in configuration ``at``: a scope's, for the scopes
        engine), replayed once (reruns meet it again); counts own."""
        key = (v.invariant, tuple(actions), at)
        hit = judged.get(key)
        if hit is not None:
            return hit
        try:
            outcome = unmutated_outcome(saved, at, actions, v.invariant)
        except Exception as e:  # noqa: BLE001 - the real model failing is reported, never a kill
            raise _UnmutatedError(f"unmutated replay of {v.invariant}: {type(e).__name__}: {str(e)[:140]}") from None
        judged[key] = outcome
        if not is_kill(outcome):
            own[v.invariant] = own.get(v.invariant, 0) + 1
        if observe is not None:
            observe(list(actions), v.invariant, outcome)
        return outcome

    try:
        try:
            exhausted = False   # a scopes run searched its whole ladder: another seed would search the same scopes
            while found is None and not exhausted and not stop():
                rseed = run_seed(seed, 0, index)
                index += 1
                skip: tuple = ()
                while found is None:
                    cspec = CampaignSpec(presets=(spec.preset,), seed=seed, engine=engine, shards=1, runs=None,
                                         shard_budget_s=spec.budget_s or 1.0,
                                         invariants=tuple(n for n in every if n not in skip))
                    r = _run(cspec, spec.preset, rseed, deadline,
                             lambda v, actions, at=cfg: not is_kill(judge(v, actions, at)))
                    runs += 1
                    steps += r.steps
                    exhausted = r.exhausted
                    if not r.violations:
                        break
                    for n, (v, actions) in enumerate(r.violations):   # found at one step (or one settling): the
                        at = scope_config(spec.preset, r.scopes[n]) if r.scopes else cfg   # first kill counts
                        outcome = judge(v, actions, at)
                        if is_kill(outcome):
                            found = (v, actions, outcome, at)
                            break
                        skip += (v.invariant,)
                    if found is None and (len(skip) >= len(every) or stop()):
                        break
        except _UnmutatedError as e:
            row["error"] = str(e)
        except Exception as e:  # noqa: BLE001 - a mutant that makes the model itself fail is caught, not fatal
            row.update(killed=True, invariant=f"model error: {type(e).__name__}", error=str(e)[:200],
                       evidence=f"the mutated model raised {type(e).__name__}")
        row.update(seconds=round(clock() - t0, 3), steps=steps, runs=runs, own_violations=sum(own.values()),
                   own_invariants=",".join(sorted(own)) or None)
        if found is not None:
            v, actions, outcome, at = found
            row.update(killed=True, invariant=v.invariant, original_length=len(actions), unmutated=outcome[0],
                       unmutated_step=outcome[1])
            try:
                sr = shrink(at, actions, v.invariant, time_budget_s=spec.shrink_budget_s,
                            keep=lambda c: is_kill(unmutated_outcome(saved, at, c, v.invariant)))
                row["shrunk_length"] = sr.shrunk_length
            except Exception as e:  # noqa: BLE001 - the kill stands; only its shrunk length is missing
                row["error"] = f"shrink: {type(e).__name__}: {str(e)[:160]}"
            row["evidence"] = evidence(v.invariant, outcome, len(actions), row["shrunk_length"])
    finally:
        registry.restore(saved)
    row["stopped"] = not row["killed"] and deadline.expired
    return row


def run_task(task: tuple) -> dict:
    """Executor side (or in process): one (mutant, engine, seed, spec JSON) task; a plain row."""
    mutant, engine, seed, spec_text = task
    return hunt(MutateSpec.from_json(json.loads(spec_text)), mutant, engine, seed)


def run_in_process(spec: MutateSpec, log=None) -> list[dict]:
    """Every task one after the other in this process."""
    rows = []
    tasks = spec.tasks()
    for i, task in enumerate(tasks, 1):
        row = run_task(task)
        rows.append(row)
        if log is not None:
            own = (f" ({row['own_violations']} the unmutated model shows too, not counted)"
                   if row["own_violations"] else "")
            log(f"mutate {i}/{len(tasks)}: {row['mutant']} {row['engine']} seed {row['seed']}: "
                f"{'killed' if row['killed'] else 'survived'} in {row['seconds']:.1f} s, {row['steps']:,} steps{own}"
                + (f"; {row['evidence']}" if row["killed"] else ""))
    return rows


def run_on_spark(spark, spec: MutateSpec) -> list[dict]:
    """Every task on the cluster, one Spark task each (mutants x engines x seeds); rows back on the driver."""
    tasks = spec.tasks()
    sc = spark.sparkContext
    sc.setJobDescription(f"isrlab mutate {spec.run_id()}: {len(tasks)} tasks")
    return sc.parallelize(tasks, len(tasks)).map(spark_task).collect()


def spark_task(task: tuple) -> dict:
    """Executor side: the driver's user presets registered, then ``run_task``."""
    from .userpresets import register_env

    register_env()
    return run_task(task)


# --------------------------------------------------------------------------- the fast tests
def _failed_ids(output: str) -> list[str]:
    """The test ids of pytest's short summary lines (FAILED / ERROR)."""
    out = []
    for line in output.splitlines():
        for tag in ("FAILED ", "ERROR "):
            if line.startswith(tag):
                out.append(line[len(tag):].split(" - ")[0].strip())
    return out


def _pytest(tests_dir: str, paths, mutant: str | None, extra: list, stop_first: bool) -> tuple[int, str]:
    env = dict(os.environ)
    env.pop("ISRLAB_MUTANT", None)
    if mutant is not None:
        env["ISRLAB_MUTANT"] = mutant
    targets = list(paths) or [*(os.path.join(tests_dir, f) for f in RULE_TESTS_FIRST
                                 if os.path.isfile(os.path.join(tests_dir, f))), tests_dir]
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", TEST_MARKERS, *targets,
           f"--ignore={os.path.join(tests_dir, 'test_mutate.py')}", *extra]
    if stop_first:
        cmd.insert(3, "-x")
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    return p.returncode, p.stdout + p.stderr


def run_tests(mutants, tests_dir: str = "tests", log=None, paths=(), jobs: int = 1) -> dict:
    """Whether the fast tests kill each mutant: {"baseline_failures": [...], "paths": [...], "rows": [...]}.

    ``paths`` (files or folders) narrows the run to part of the fast tests (default: the whole folder);
    ``jobs`` pytest subprocesses run at once.  The unmutated model runs first; its failing tests (if any)
    are deselected from every mutant's run, so that only a failure the mutant causes counts.
    RuntimeError if pytest itself cannot run.
    """
    from concurrent.futures import ThreadPoolExecutor

    code, output = _pytest(tests_dir, paths, None, [], stop_first=False)
    if code not in (0, 1):
        raise RuntimeError(f"pytest on the unmutated model exited {code}: {output.strip().splitlines()[-1:]}")
    baseline = _failed_ids(output)
    deselect = [f"--deselect={t}" for t in baseline]

    def one(name: str) -> dict:
        m = registry.lookup(name)
        t0 = time.monotonic()
        code, output = _pytest(tests_dir, paths, name, deselect, stop_first=True)
        if code not in (0, 1):
            raise RuntimeError(f"pytest under mutant {name} exited {code}: {output.strip().splitlines()[-1:]}")
        failed = _failed_ids(output)
        if log is not None:
            log(f"tests: {name}: {'killed by ' + str(failed[0]) if code == 1 else 'survived'}")
        return {"mutant": name, "area": m.area, "kind": m.kind, "half": m.half, "killed": code == 1,
                "first_failure": failed[0] if failed else None, "exit_code": code,
                "seconds": round(time.monotonic() - t0, 3), "equivalent_reason": m.equivalent_reason}

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        rows = list(pool.map(one, mutants))
    return {"baseline_failures": baseline, "paths": list(paths) or [tests_dir], "rows": rows}


# --------------------------------------------------------------------------- summaries and files
def _median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def per_mutant(rows: list[dict]) -> list[dict]:
    """One entry per (mutant, engine): seeds that killed it, the invariant, median time and steps, shortest trace."""
    groups: dict[tuple, list] = {}
    for r in rows:
        groups.setdefault((r["mutant"], r["engine"]), []).append(r)
    out = []
    for (name, engine), rs in groups.items():
        kills = [r for r in rs if r["killed"]]
        invs: dict[str, int] = {}
        for r in kills:
            invs[r["invariant"]] = invs.get(r["invariant"], 0) + 1
        shrunk = [r["shrunk_length"] for r in kills if r["shrunk_length"] is not None]
        invariant = max(invs, key=lambda k: (invs[k], k)) if invs else None
        shortest = min((r for r in kills if r["invariant"] == invariant),
                       key=lambda r: (r["shrunk_length"] is None, r["shrunk_length"] or 0, r["seed"]), default=None)
        out.append({"mutant": name, "engine": engine, "area": rs[0]["area"], "kind": rs[0]["kind"],
                    "half": rs[0]["half"], "seeds": len(rs), "kills": len(kills), "killed": bool(kills),
                    "invariant": invariant,
                    "median_seconds": _median([r["seconds"] for r in kills]),
                    "median_steps": _median([r["steps"] for r in kills]),
                    "shrunk_length": min(shrunk) if shrunk else None,
                    "unmutated": shortest.get("unmutated") if shortest else None,
                    "evidence": shortest.get("evidence") if shortest else None,
                    "own_violations": sum(r.get("own_violations") or 0 for r in rs),
                    "equivalent_reason": rs[0]["equivalent_reason"]})
    return out


def kill_rates(entries: list[dict]) -> dict:
    """Per half (and all): mutants, equivalent ones, non-equivalent ones killed, and the rate over those."""
    out = {}
    for half_name in ("tuning", "held-out", "all"):
        es = [e for e in entries if half_name == "all" or e["half"] == half_name]
        live = [e for e in es if not e["equivalent_reason"]]
        killed = [e for e in live if e["killed"]]
        out[half_name] = {"mutants": len(es), "equivalent": len(es) - len(live), "non_equivalent": len(live),
                          "killed": len(killed), "killed_equivalent": sum(1 for e in es if e["killed"]
                                                                          and e["equivalent_reason"]),
                          "kill_rate": round(len(killed) / len(live), 4) if live else None}
    return out


def summarize(spec: MutateSpec, rows: list[dict], tests: dict | None, seconds: float, master: str) -> dict:
    entries = per_mutant(rows)
    by_engine = {e: kill_rates([x for x in entries if x["engine"] == e]) for e in spec.engines}
    for e in spec.engines:
        times = [x["median_seconds"] for x in entries if x["engine"] == e and x["killed"]]
        by_engine[e]["median_seconds_to_kill"] = _median(times)
        killed = [r for r in rows if r["engine"] == e and r["killed"]]
        by_engine[e]["kill_evidence"] = {
            "unmutated_holds": sum(1 for r in killed if r.get("unmutated") == HOLDS),
            "unmutated_cut": sum(1 for r in killed if r.get("unmutated") == CUT),
            "model_error": sum(1 for r in killed if r.get("unmutated") is None),
            "own_violations_not_counted": sum(r.get("own_violations") or 0 for r in rows if r["engine"] == e)}
    summary = {"id": spec.run_id(), "spec": spec.to_json(), "master": master, "seconds": round(seconds, 3),
               "split_rule": "held-out when the first byte of blake2b(mutant name) is odd, else tuning",
               "kill_rule": "a violation of I on trace T kills only if T, replayed on the unmutated model from the "
                            "same start, does not fail I (it holds I, or cannot take some action of T)",
               "engines": by_engine, "mutants": entries, "rows": rows}
    if tests is not None:
        summary["tests"] = {"baseline_failures": tests["baseline_failures"], "paths": tests["paths"],
                            "rows": tests["rows"],
                            "rates": kill_rates(tests["rows"])}
    return summary


def write_outputs(folder: str, summary: dict) -> dict:
    """summary.json and results.parquet (one row per task) in ``folder``; their paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .model.trace import write_atomic

    os.makedirs(folder, exist_ok=True)
    paths = {"summary": os.path.join(folder, "summary.json"), "parquet": os.path.join(folder, "results.parquet")}
    write_atomic(paths["summary"], json.dumps(summary, indent=1) + "\n")
    schema = pa.schema([("mutant", pa.string()), ("area", pa.string()), ("kind", pa.string()),
                        ("half", pa.string()), ("engine", pa.string()), ("seed", pa.int64()),
                        ("killed", pa.bool_()), ("invariant", pa.string()), ("seconds", pa.float64()),
                        ("steps", pa.int64()), ("runs", pa.int64()), ("original_length", pa.int64()),
                        ("shrunk_length", pa.int64()), ("stopped", pa.bool_()), ("error", pa.string()),
                        ("equivalent_reason", pa.string()), ("unmutated", pa.string()), ("unmutated_step", pa.int64()),
                        ("evidence", pa.string()), ("own_violations", pa.int64()), ("own_invariants", pa.string())])
    table = pa.Table.from_pylist([{k: r[k] for k in ROW_FIELDS} for r in summary["rows"]], schema=schema)
    tmp = paths["parquet"] + f".tmp-{os.getpid()}"
    pq.write_table(table, tmp)
    os.replace(tmp, paths["parquet"])
    return paths
