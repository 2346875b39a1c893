"""Time every group of ``isrlab prove`` (z3 claims and their model cross-checks): per group and in total.

Run: ``python benchmarks/prove.py``.  Prints figures only; it asserts nothing (the claims themselves
are checked by ``isrlab prove`` and ``tests/test_specs.py``).
"""

from __future__ import annotations

import time

from isrlab.specs.report import GROUPS, RUNNERS


def main() -> None:
    total = 0.0
    n_total = 0
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
    print(f"{'total':<14} {n_total:>6} {'':>5} {total:>8.2f}")


if __name__ == "__main__":
    main()
