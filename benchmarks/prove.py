"""Time every group of ``isrlab prove`` (z3 claims and their model cross-checks): per group and in total.

Run: ``python benchmarks/prove.py``.  Prints figures only; it asserts nothing (the claims themselves
are checked by ``isrlab prove`` and ``tests/test_specs.py``).  For the bit-blasted BMC runs
(``specs/deep_bmc.py``) it also prints the SAT seconds of each depth.
"""

from __future__ import annotations

import time

from isrlab.specs.report import GROUPS, RUNNERS


def main() -> None:
    total = 0.0
    n_total = 0
    deep = []
    print(f"{'group':<14} {'claims':>6} {'held':>5} {'seconds':>8}  slowest claim")
    for g in GROUPS:
        t0 = time.perf_counter()
        claims = RUNNERS[g]()
        seconds = time.perf_counter() - t0
        total += seconds
        n_total += len(claims)
        slow = max(claims, key=lambda c: c.seconds)
        held = sum(c.ok for c in claims)
        print(f"{g:<14} {len(claims):>6} {held:>5} {seconds:>8.2f}  {slow.name} ({slow.seconds:.2f} s)")
        deep += [c for c in claims if "solver_seconds" in c.facts.get("bmc", {})]
    print(f"{'total':<14} {n_total:>6} {'':>5} {total:>8.2f}")
    for c in deep:
        per_depth = c.facts["bmc"]["solver_seconds"]
        print(f"{c.name}: {c.seconds:.2f} s, of which SAT {sum(per_depth.values()):.2f} s by depth "
              + " ".join(f"{k}:{v:.2f}" for k, v in per_depth.items()))


if __name__ == "__main__":
    main()
