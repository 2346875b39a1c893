"""Benchmark: SIGKILL a Spark campaign's driver at a random moment, resume it, compare its runs table.

    .venv/bin/python benchmarks/resume_kill.py --trials 8 --seed 1

Each trial starts ``isrlab fuzz --master local[2] --preset kafka-2.4,kafka-0.11 --engine walk --shards 3
--runs 300`` in its own process group, kills the driver (its PID alone, SIGKILL) after a uniformly random
delay within the campaign's usual length, waits for its JVM and workers to go, then runs ``isrlab fuzz
--resume`` on the campaign folder. A trial is "resumed" when the resumed campaign's runs table equals, run by
run and column by column, the records each shard gives in this process (``campaign.run_shard``); "complete"
when the kill came after the summary (resume refuses it, as it should); "not started" when it came before
campaign.json was written (nothing to resume). Prints one line per trial and the counts; asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.dataset as ds

from isrlab.campaign import CampaignSpec, run_shard

ISRLAB = os.path.join(os.path.dirname(sys.executable), "isrlab")
PRESETS, SHARDS, RUNS = ("kafka-2.4", "kafka-0.11"), 3, 300
KEYS = ("run_index", "seed", "steps", "kind_counts", "error_codes", "witnesses", "violation", "violations")


def expected() -> dict:
    spec = CampaignSpec(presets=PRESETS, engine="walk", shards=SHARDS, runs=RUNS)
    out = {}
    for task in spec.tasks():
        recs = run_shard(task)["runs"]
        for r in recs:
            r["violations"] = [{f: v[f] for f in ("invariant", "step", "facts", "trace")} for v in r["violations"]]
        out[(task[0], task[1])] = [{k: r[k] for k in KEYS} for r in recs]
    return out


def table(folder: Path) -> dict:
    runs: dict = {}
    for r in ds.dataset(folder / "runs", format="parquet", partitioning="hive").to_table().to_pylist():
        r["kind_counts"] = dict(r["kind_counts"])
        runs.setdefault((r["preset"], r["shard"]), []).append({k: r[k] for k in KEYS})
    return {k: sorted(v, key=lambda r: r["run_index"]) for k, v in runs.items()}


def gone(pgid: int, timeout: float = 60.0) -> None:
    """Wait for the killed driver's process group (its JVM, its workers) to end; SIGKILL what is left after that."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.killpg(pgid, signal.SIGKILL)


def trial(rng: random.Random, span: float, want: dict, work: Path) -> tuple[str, float, str]:
    out = work / "out"
    args = [ISRLAB, "fuzz", "--master", "local[2]", "--preset", ",".join(PRESETS), "--engine", "walk",
            "--shards", str(SHARDS), "--runs", str(RUNS), "--out", str(out), "--json"]
    delay = rng.uniform(0.0, span)
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(delay)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)      # the driver alone
    proc.wait()
    gone(proc.pid)
    folders = [p for p in out.iterdir() if p.name != "latest"] if out.exists() else []
    if not folders or not (folders[0] / "campaign.json").exists():
        return "not started", delay, ""
    folder = folders[0]
    if (folder / "summary.json").exists():
        return "complete", delay, ""
    kept = len(list((folder / "_shards_done").glob("*.json")))
    r = subprocess.run([ISRLAB, "fuzz", "--resume", str(folder), "--json"], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        return "resume failed", delay, r.stderr.strip().splitlines()[-1][:200]
    s = json.loads(r.stdout)
    same = table(folder) == want and s["runs"] == RUNS * len(PRESETS)
    return ("resumed" if same else "DIFFERENT"), delay, f"{kept} of {SHARDS * len(PRESETS)} shards kept"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    want = expected()
    with tempfile.TemporaryDirectory(prefix="isrlab-resume-") as tmp:
        t0 = time.monotonic()       # the campaign's usual length, undisturbed: the range the kills are drawn from
        subprocess.run([ISRLAB, "fuzz", "--master", "local[2]", "--preset", ",".join(PRESETS), "--engine", "walk",
                        "--shards", str(SHARDS), "--runs", str(RUNS), "--out", os.path.join(tmp, "whole"), "--json"],
                       capture_output=True, check=False)
        span = time.monotonic() - t0
        print(f"an undisturbed campaign: {span:.1f} s; kills drawn from 0 to {span:.1f} s")
        counts = collections.Counter()
        for i in range(a.trials):
            work = Path(tmp) / f"t{i}"
            work.mkdir()
            outcome, delay, note = trial(rng, span, want, work)
            counts[outcome] += 1
            print(f"trial {i}: killed at {delay:5.1f} s: {outcome} {note}", flush=True)
        print(", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
