"""Peak memory of a Spark campaign's driver at growing run counts: is it flat?

Runs ``isrlab fuzz`` on an embedded master for each run count and samples, every
``--every`` seconds while it runs, the high-water mark of resident memory (VmHWM in
/proc/PID/status, the kernel's own peak) of the driver's Python process, of Spark's
JVM (in local mode the executors live in it too) and of the largest Python worker.
The driver's peak is given twice: when the campaign is over ("campaign", read as
isrlab logs that it writes the HTML report) and over the whole command, the report
included (isrlab.report reads up to 200,000 runs of the table to plot them).
Prints one line per run count, with the wall time and the runs per second, then the
command behind each line.

    .venv/bin/python benchmarks/campaign_rss.py                  # 10k, 100k and 1M runs
    .venv/bin/python benchmarks/campaign_rss.py --runs 10000 --runs 100000

The default campaign is the cheapest a run gets: five-step walks on kafka-2.4, one
invariant checked (no liveness settling after each walk: about 0.25 ms a run on one
core here, so a million runs take minutes, not the half hour the ten liveness
properties' settling would add).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import shlex
import tempfile
import threading
import time

ISRLAB = os.path.join(os.path.dirname(sys.executable), "isrlab")
#: the line isrlab fuzz logs when the campaign is over and the HTML report is written
REPORT_LINE = "writing the campaign's report"
CAMPAIGN = ["--preset", "kafka-2.4", "--engine", "walk", "--max-steps", "5", "--invariant", "isr_entry_condition"]


def peak_kib(pid: int) -> int | None:
    """VmHWM of ``pid`` in KiB (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (through /proc/PID/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    kids = [int(k) for k in fh.read().split()]
                out += kids
                todo += kids
        except OSError:
            continue
    return out


def comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def measure(runs: int, master: str, out: str, every: float, prefix: list) -> dict:
    """Run one campaign of ``runs`` runs; its peaks (MiB), wall time and summary figures."""
    args = [ISRLAB, "fuzz", "--master", master, *CAMPAIGN, "--runs", str(runs), "--out", out, "--json"]
    t0 = time.monotonic()
    proc = subprocess.Popen(prefix + args[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peaks = {"driver": 0, "jvm": 0, "worker": 0, "campaign": 0}
    err: list[str] = []

    def read_stderr():
        for line in proc.stderr:
            if REPORT_LINE in line:   # the campaign is done; the report (isrlab.report) reads the runs table next
                peaks["campaign"] = peak_kib(proc.pid) or 0
            err.append(line)

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    while proc.poll() is None:
        driver = peak_kib(proc.pid)
        if driver:
            peaks["driver"] = max(peaks["driver"], driver)
        for child in descendants(proc.pid):
            kind = "jvm" if comm(child) == "java" else "worker" if comm(child).startswith("python") else None
            k = peak_kib(child) if kind else None
            if k:
                peaks[kind] = max(peaks[kind], k)
        time.sleep(every)
    stdout = proc.stdout.read()
    proc.wait()
    reader.join()
    stderr = "".join(err)
    wall = time.monotonic() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"isrlab fuzz --runs {runs} failed (exit {proc.returncode}): {stderr[-2000:]}")
    s = json.loads(stdout)
    return {"runs": s["runs"], "wall_s": wall, "fuzz_s": s["seconds"]["fuzz_s"], "tables_s": s["seconds"]["tables_s"],
            "campaign_mib": peaks["campaign"] / 1024, "driver_mib": peaks["driver"] / 1024, "jvm_mib": peaks["jvm"] / 1024, "worker_mib": peaks["worker"] / 1024,
            "tasks": s["tasks"], "command": " ".join(args[1:-3] + ["--out", "DIR"])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, action="append", help="run counts (repeatable; default 10k, 100k, 1M)")
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--every", type=float, default=0.5, help="seconds between samples")
    ap.add_argument("--isrlab", default=ISRLAB,
                    help="the command that runs isrlab (to measure another tree: 'env PYTHONPATH=DIR python -m "
                         "isrlab.cli', run from outside the checkout)")
    a = ap.parse_args()
    out = tempfile.mkdtemp(prefix="isrlab-rss-")
    rows = []
    try:
        print(f"{'runs':>9} {'tasks':>5} {'wall s':>7} {'fuzz s':>7} {'tables s':>8} {'runs/s':>7} "
              f"{'campaign MiB':>12} {'driver MiB':>10} {'JVM MiB':>8} {'worker MiB':>10}", flush=True)
        for n in a.runs or [10_000, 100_000, 1_000_000]:
            r = measure(n, a.master, out, a.every, shlex.split(a.isrlab))
            rows.append(r)
            print(f"{r['runs']:>9,} {r['tasks']:>5} {r['wall_s']:>7.1f} {r['fuzz_s']:>7.1f} {r['tables_s']:>8.1f} "
                  f"{r['runs'] / r['fuzz_s']:>7,.0f} {r['campaign_mib']:>12.0f} {r['driver_mib']:>10.0f} {r['jvm_mib']:>8.0f} "
                  f"{r['worker_mib']:>10.0f}", flush=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    for r in rows:
        print(f"  {r['runs']:,} runs: isrlab {r['command']}")


if __name__ == "__main__":
    main()
