"""Benchmark: the malformed-input corpus (tests/malformed.py) at scale; prints counts, asserts nothing.

    .venv/bin/python benchmarks/malformed.py --cases 2000 --seed 1 --jobs 2

Prints the cases per class (ok, traceback, hang, wrong exit code, multi-line error, leftover file,
internal error), per command, and the first failures of each class with their command lines.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import malformed  # noqa: E402


def _one(case):
    o = malformed.run_case(case)
    return case.name, case.args, malformed.classify(case, o), o.code, (o.stderr.strip().splitlines() or [""])[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--show", type=int, default=5, help="failures shown per class")
    a = ap.parse_args()
    cases = malformed.generate(a.seed, a.cases)
    t0 = time.monotonic()
    with ProcessPoolExecutor(a.jobs) as pool:
        results = list(pool.map(_one, cases, chunksize=4))
    secs = time.monotonic() - t0
    by_class = collections.Counter(r[2] for r in results)
    by_cmd = collections.defaultdict(collections.Counter)
    for name, args, cls, code, last in results:
        by_cmd[name.split(":")[0]][cls] += 1
    print(f"{len(results)} cases (seed {a.seed}) in {secs:.0f} s with {a.jobs} jobs")
    for cls, n in sorted(by_class.items(), key=lambda kv: -kv[1]):
        print(f"  {cls:<18} {n:>6}")
    print("per command:")
    for cmd, counts in sorted(by_cmd.items()):
        print(f"  {cmd:<16} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for cls in sorted(by_class):
        if cls == "ok":
            continue
        print(f"first failures: {cls}")
        for name, args, c, code, last in [r for r in results if r[2] == cls][: a.show]:
            print(f"  [{code}] {name}: isrlab {' '.join(x[:60] for x in args)}\n      {last[:200]}")


if __name__ == "__main__":
    main()
