"""Small scopes first (``isrlab explore --scopes``) on the breaking presets: found or not, scopes, seconds.

Each row is one whole ``isrlab explore --preset P --scopes --seed S --budget B --json --quiet --no-archive`` process
(run in a scratch folder, so it leaves nothing here): whether the preset's own bugs were found (attributed by their
fixes), the scopes searched of the ladder, the search's CPU seconds and the process's wall seconds, the length of
the shortest trace credited to the preset's bug, and the deciding scope.  Prints figures; asserts nothing.

    python benchmarks/explore_scopes.py --budget 60 [--presets P ...] [--seeds 0 1 ...] [--first-cap N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from isrlab.model.config import PRESETS


def run(name: str, seed: int, budget: float, folder: str, first_cap: int | None = None) -> dict:
    """One whole ``isrlab explore --scopes`` process: its JSON summary, with ``wall``."""
    exe = os.path.join(os.path.dirname(sys.executable), "isrlab")
    t0 = time.monotonic()
    cap = [] if first_cap is None else ["--max-states", str(first_cap)]
    r = subprocess.run([exe, "explore", "--preset", name, "--scopes", "--seed", str(seed), "--budget", str(budget),
                        "--json", "--quiet", "--no-archive", *cap], capture_output=True, text=True, cwd=folder,
                       timeout=budget * 3 + 120)
    if r.returncode not in (0, 1):
        raise SystemExit(f"{name} seed {seed}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    d = json.loads(r.stdout)
    d["wall"] = time.monotonic() - t0
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=60.0, help="--budget of each search (seconds)")
    ap.add_argument("--presets", nargs="*", default=None, help="default: every preset that expects a bug")
    ap.add_argument("--seeds", nargs="*", type=int, default=[0])
    ap.add_argument("--first-cap", type=int, default=None, help="--max-states: the first pass's states a scope")
    args = ap.parse_args()
    names = args.presets or [n for n, p in PRESETS.items() if p.bugs]
    unknown = [n for n in names if n not in PRESETS]
    if unknown:
        raise SystemExit(f"unknown preset(s): {', '.join(unknown)}")
    print(f"{'preset':32} {'seed':>4} {'found':5} {'scopes':>9} {'CPU s':>6} {'wall s':>6} {'length':>6}  deciding scope")
    found = 0
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            cpu = []
            for seed in args.seeds:
                d = run(name, seed, args.budget, folder, args.first_cap)
                hit = d["missed_bug"] is None and bool(d["result"]["found"])
                found += hit
                cpu.append(d["cpu_seconds"] if hit else float("inf"))
                lengths = [v["length"] for v in d["violations"] if v["kind"] == "found"]
                s = d["scopes"]
                deciding = ", ".join(f"{k.removeprefix('max_')} {v}" for k, v in (s["deciding"] or {}).items())
                print(f"{name:32} {seed:>4} {'yes' if hit else 'no':5} {s['searched']:>4}/{s['scopes']:<4} "
                      f"{d['cpu_seconds']:>6.1f} {d['wall']:>6.1f} {min(lengths, default='-')!s:>6}  {deciding}",
                      flush=True)
            if len(args.seeds) > 1:
                med = statistics.median(cpu)
                print(f"{name:32} median CPU s to find: {'a miss' if med == float('inf') else f'{med:.1f}'}")
    print(f"found: {found} of {len(names) * len(args.seeds)} searches")


if __name__ == "__main__":
    main()
