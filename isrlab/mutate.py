"""The mutation benchmark: the fuzz engines (and the fast tests) against the registry of rule mutants.

A task is one (mutant, engine, seed): the mutant is installed by name (``properties.mutants``) in the
process that runs it, in process or on a Spark executor, and the engine hunts with the very loop of
``isrlab fuzz --master none``: ``campaign.run_one`` on the seeds ``run_seed(seed, 0, n)`` one after
another, until the first violation, the budget in seconds, or the budget in model steps (checked
between runs).  A violation is shrunk with the mutant still installed.  Records are plain data; the
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

from .campaign import ENGINES, CampaignSpec, run_one, run_seed
from .properties import mutants as registry
from .properties.budget import Deadline

#: the columns of a result row, in order (the Parquet schema and the JSON rows)
ROW_FIELDS = ("mutant", "area", "kind", "half", "engine", "seed", "killed", "invariant", "seconds", "steps", "runs",
              "original_length", "shrunk_length", "stopped", "error", "equivalent_reason")
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
        unknown = [e for e in self.engines if e not in ENGINES]
        if unknown:
            raise ValueError(f"unknown engine(s) {', '.join(unknown)} (known: {', '.join(ENGINES)})")
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


def kill_names(preset_name: str) -> tuple:
    """The invariants and liveness properties a kill may name: all but those the unmutated preset is known to break
    (``Preset.breaks``): kafka-2.4's own KAFKA-10706 liveness break says nothing about a mutant."""
    from .model.config import preset as get_preset
    from .properties.invariants import LIVENESS_BY_NAME, SAFETY

    known = set(get_preset(preset_name).breaks)
    return tuple(i.name for i in SAFETY if i.name not in known) + tuple(n for n in LIVENESS_BY_NAME if n not in known)


def hunt(spec: MutateSpec, mutant: str, engine: str, seed: int, clock=time.monotonic) -> dict:
    """One task: install ``mutant``, hunt with ``engine`` from ``seed`` until a violation or a budget; a row."""
    from .model.config import preset as get_preset
    from .properties.budget import either
    from .properties.shrink import shrink

    m = registry.lookup(mutant)
    row = dict.fromkeys(ROW_FIELDS)
    row.update(mutant=m.name, area=m.area, kind=m.kind, half=m.half, engine=engine, seed=seed, killed=False,
               runs=0, stopped=False, equivalent_reason=m.equivalent_reason)
    cspec = CampaignSpec(presets=(spec.preset,), seed=seed, engine=engine, shards=1, runs=None,
                         shard_budget_s=spec.budget_s or 1.0, invariants=kill_names(spec.preset))
    steps = runs = 0
    t0 = clock()
    deadline = Deadline(spec.budget_s, clock)
    over_steps = (lambda: steps >= spec.max_steps) if spec.max_steps is not None else None
    stop = either(deadline, over_steps)
    found = None
    with registry.installed(mutant):
        try:
            while not stop():
                r = run_one(cspec, spec.preset, run_seed(seed, 0, runs), should_stop=deadline, keep_going=False)
                runs += 1
                steps += r.steps
                if r.violation is not None:
                    found = r
                    break
        except Exception as e:  # noqa: BLE001 - a mutant that makes the model itself fail is caught, not fatal
            row.update(killed=True, invariant=f"model error: {type(e).__name__}", error=str(e)[:200])
        row.update(seconds=round(clock() - t0, 3), steps=steps, runs=runs)
        if found is not None:
            v = found.violation
            row.update(killed=True, invariant=v.invariant, original_length=len(found.actions))
            try:
                sr = shrink(get_preset(spec.preset).config, found.actions, v.invariant,
                            time_budget_s=spec.shrink_budget_s)
                row["shrunk_length"] = sr.shrunk_length
            except Exception as e:  # noqa: BLE001 - the kill stands; only its shrunk length is missing
                row["error"] = f"shrink: {type(e).__name__}: {str(e)[:160]}"
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
            what = f"killed ({row['invariant']})" if row["killed"] else "survived"
            log(f"mutate {i}/{len(tasks)}: {row['mutant']} {row['engine']} seed {row['seed']}: {what} "
                f"in {row['seconds']:.1f} s, {row['steps']:,} steps")
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
        out.append({"mutant": name, "engine": engine, "area": rs[0]["area"], "kind": rs[0]["kind"],
                    "half": rs[0]["half"], "seeds": len(rs), "kills": len(kills), "killed": bool(kills),
                    "invariant": max(invs, key=lambda k: (invs[k], k)) if invs else None,
                    "median_seconds": _median([r["seconds"] for r in kills]),
                    "median_steps": _median([r["steps"] for r in kills]),
                    "shrunk_length": min(shrunk) if shrunk else None,
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
    summary = {"id": spec.run_id(), "spec": spec.to_json(), "master": master, "seconds": round(seconds, 3),
               "split_rule": "held-out when the first byte of blake2b(mutant name) is odd, else tuning",
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
                        ("equivalent_reason", pa.string())])
    table = pa.Table.from_pylist([{k: r[k] for k in ROW_FIELDS} for r in summary["rows"]], schema=schema)
    tmp = paths["parquet"] + f".tmp-{os.getpid()}"
    pq.write_table(table, tmp)
    os.replace(tmp, paths["parquet"])
    return paths
