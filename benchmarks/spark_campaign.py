"""Print what a fuzz campaign costs and gains on Spark: one shard in process, local[1], local[2], standalone.

    python benchmarks/spark_campaign.py [--runs 24000] [--shards 8] [--preset kafka-2.4] [--skip-standalone]

The same campaign (walk engine, fixed runs, so every mode does exactly the same work) runs:
  1. one shard's worth in this process (campaign.run_shard, no Spark), scaled to the campaign;
  2. `isrlab fuzz --master local[1]`, then `local[2]`, each a fresh process and JVM;
  3. `isrlab fuzz` on a standalone cluster of 1 master + 2 workers x 1 core on 127.0.0.1.
For each: session start, the fuzz phase (the Spark job running the shards), the tables and
aggregations, the total wall time, and runs/s and steps/s in the fuzz phase; then the speedups and
Spark's fixed cost (everything but the fuzz phase).  Figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from isrlab.campaign import CampaignSpec, run_shard
from isrlab.standalone import StandaloneCluster

ISRLAB = os.path.join(os.path.dirname(sys.executable), "isrlab")


def in_process(spec: CampaignSpec) -> dict:
    """Shard 0 in this process, best of two (the first pays for imports and warm caches)."""
    best = None
    for _ in range(2):
        t = time.perf_counter()
        rec = run_shard(spec.tasks()[0])
        secs = time.perf_counter() - t
        if best is None or secs < best["seconds"]:
            best = {"runs": rec["runs_done"], "steps": rec["steps"], "seconds": secs}
    return best


def campaign(master: str, args, work: str, extra=()) -> dict:
    cmd = [ISRLAB, "fuzz", "--master", master, "--preset", args.preset, "--engine", "walk", "--runs", str(args.runs),
           "--shards", str(args.shards), "--out", os.path.join(work, "out"), "--archive", os.path.join(work, "cx"),
           "--json", *extra]
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode not in (0, 1):
        sys.exit(f"{master}: isrlab fuzz failed ({r.returncode}):\n{r.stderr[-2000:]}")
    s = json.loads(r.stdout)
    return {"master": master, "wall": wall, "runs": s["runs"], "steps": s["steps"], **s["seconds"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="kafka-2.4")
    ap.add_argument("--runs", type=int, default=24000, help="runs in the campaign (walk engine, 120 steps)")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--skip-standalone", action="store_true")
    args = ap.parse_args()
    spec = CampaignSpec(presets=(args.preset,), engine="walk", shards=args.shards, runs=args.runs)

    one = in_process(spec)
    serial = one["seconds"] * args.shards
    print(f"campaign: {args.preset}, walk engine, {args.runs} runs in {args.shards} shards")
    print(f"one shard in process: {one['runs']} runs, {one['steps']} steps in {one['seconds']:.2f} s = "
          f"{one['runs'] / one['seconds']:,.0f} runs/s, {one['steps'] / one['seconds']:,.0f} steps/s; "
          f"the whole campaign serially: about {serial:.1f} s")
    rows = []
    with tempfile.TemporaryDirectory(prefix="isrlab-bench-") as work:
        for master in ("local[1]", "local[2]"):
            rows.append(campaign(master, args, os.path.join(work, master.strip("]").replace("[", "-"))))
        if not args.skip_standalone:
            t = time.perf_counter()
            with StandaloneCluster(os.path.join(work, "cluster"), workers=2) as cluster:
                up = time.perf_counter() - t
                r = campaign(cluster.master_url, args, os.path.join(work, "standalone"),
                             ("--conf", "spark.executor.memory=512m"))
                r["master"] = f"standalone 2x1 (+{up:.1f} s to start the cluster)"
                rows.append(r)
    print("session: start of Spark; fuzz job: the job that runs the shards and writes them (with the first "
          "Parquet write's warm-up); shards: first shard start to last shard end; fixed: wall - shards")
    print(f"{'master':<44} {'session':>8} {'fuzz job':>8} {'shards':>7} {'tables+agg':>10} {'wall':>7} "
          f"{'runs/s':>8} {'steps/s':>9} {'fixed':>7}")
    for r in rows:
        span = r["shards_span_s"]
        print(f"{r['master']:<44} {r['session_s']:>7.1f}s {r['fuzz_s']:>7.1f}s {span:>6.1f}s "
              f"{r['tables_s'] + r['aggregate_s']:>9.1f}s {r['wall']:>6.1f}s {r['runs'] / span:>8,.0f} "
              f"{r['steps'] / span:>9,.0f} {r['wall'] - span:>6.1f}s")
    base = rows[0]["shards_span_s"]
    for r in rows[1:]:
        print(f"speedup while the shards run, {r['master']} vs local[1]: {base / r['shards_span_s']:.2f}x; "
              f"fuzz job: {rows[0]['fuzz_s'] / r['fuzz_s']:.2f}x; wall: {rows[0]['wall'] / r['wall']:.2f}x")
    print(f"local[2] while the shards run vs the serial estimate: {serial / rows[1]['shards_span_s']:.2f}x")


if __name__ == "__main__":
    main()
