"""Benchmark: the settling phase (properties/settle.py).  Prints figures; asserts nothing.

* cost: the walker and the guided search on one preset, without and with the liveness check (settling after
  every walk, or where every ``walker.SETTLE_EVERY``-th extension ends): the engine's own steps/s, and the
  settling steps it added;
* time to find: the liveness mutants of tests/test_settle.py (a follower whose truncation never finishes on
  kafka-2.4; an AlterIsr answer that never commits on alter-isr), each engine over campaign seeds, as
  ``isrlab fuzz --master none`` runs them (``campaign.run_one`` until the first violation, cap per seed).

    .venv/bin/python benchmarks/settle.py [--seeds N] [--cap SECONDS] [--preset P]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from isrlab.campaign import CampaignSpec, run_one, run_seed  # noqa: E402
from isrlab.model import alter_isr, fetcher  # noqa: E402
from isrlab.model.config import preset  # noqa: E402
from isrlab.properties import settle as settle_mod  # noqa: E402
from isrlab.properties.invariants import LIVENESS  # noqa: E402
from isrlab.properties.walker import search, walk  # noqa: E402
from test_settle import _never_commits, _never_finishes  # noqa: E402

NAMES = tuple(lv.name for lv in LIVENESS)


class _Counting:
    """Counts the settling steps the engines take: wraps ``settle.settle`` where the engines look it up."""

    def __init__(self):
        import isrlab.properties.walker as w

        self.steps = 0
        self.real = settle_mod.settle
        self.modules = (settle_mod, w)

    def __enter__(self):
        real = self.real

        def counted(*a, **k):
            r = real(*a, **k)
            self.steps += len(r.actions)
            return r

        for m in self.modules:
            m.settle = counted
        return self

    def __exit__(self, *exc):
        for m in self.modules:
            m.settle = self.real


def cost(cfg, seeds: int) -> None:
    for engine in ("walk", "guided"):
        for live in ((), NAMES):
            with _Counting() as count:
                t0 = time.perf_counter()
                steps = 0
                for seed in range(seeds):
                    if engine == "walk":
                        for j in range(200):
                            steps += walk(cfg, run_seed(seed, 0, j), 120, keep_going=True, liveness=live).steps
                    else:
                        steps += search(cfg, run_seed(seed, 0, 0), 1500, keep_going=True, liveness=live).steps
                dt = time.perf_counter() - t0
            print(f"{engine:<7} liveness {'on ' if live else 'off'}: {steps:>9,} engine steps in {dt:6.2f} s = "
                  f"{steps / dt:9,.0f} steps/s; settling steps {count.steps:,}")


def time_to_find(seeds: int, cap: float) -> None:
    cases = (("truncation never finishes", "kafka-2.4", fetcher, "_finish_truncation", _never_finishes),
             ("AlterIsr never commits", "alter-isr", alter_isr, "handle_alter_isr_response", _never_commits))
    for label, name, module, attr, mutant in cases:
        real = getattr(module, attr)
        setattr(module, attr, mutant)
        try:
            for engine, only in (("guided", ()), ("walk", ()), ("hypothesis", ()), ("guided", NAMES), ("walk", NAMES)):
                # the whole catalogue, or the liveness properties alone (what settling finds by itself)
                spec = CampaignSpec(presets=(name,), engine=engine, shards=1, shard_budget_s=cap, invariants=only)
                engine = engine + (" (liveness only)" if only else "")
                times, found = [], {}
                for seed in range(seeds):
                    t0 = time.perf_counter()
                    j = 0
                    hit = None
                    while time.perf_counter() - t0 < cap and hit is None:
                        r = run_one(spec, name, run_seed(seed, 0, j), keep_going=False)
                        hit = r.violation
                        j += 1
                    times.append(time.perf_counter() - t0 if hit else cap)
                    if hit:
                        found[hit.invariant] = found.get(hit.invariant, 0) + 1
                ok = sum(found.values())
                print(f"{label:<26} {name:<9} {engine:<26} median {statistics.median(times):6.2f} s "
                      f"({min(times):.2f}-{max(times):.2f}), {ok}/{seeds} found: {found}")
        finally:
            setattr(module, attr, real)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--cap", type=float, default=60.0)
    ap.add_argument("--preset", default="kafka-2.4")
    ap.add_argument("--only", choices=("cost", "find"), default=None)
    args = ap.parse_args()
    if args.only != "find":
        cost(preset(args.preset).config, args.seeds)
    if args.only != "cost":
        time_to_find(args.seeds, args.cap)


if __name__ == "__main__":
    main()
