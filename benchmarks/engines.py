"""Benchmark: the engines on one core.  Prints figures; asserts nothing.

* steps/s of the walker (every invariant checked after every step) and of the Hypothesis machine
  on the default preset;
* for each preset expected to break: time to the first violation of its headline invariant over
  N campaign seeds (median, min, max; a seed that finds nothing within --cap counts as the cap),
  and the shrunk trace length.
"""

from __future__ import annotations

import argparse
import statistics
import time

from isrlab.model.config import PRESETS, preset
from isrlab.properties.invariants import BY_NAME, SAFETY
from isrlab.properties.shrink import shrink
from isrlab.properties.walker import derive_seed, search, walk


def walker_rate(cfg, seconds: float) -> float:
    t0, steps, i = time.perf_counter(), 0, 0
    while time.perf_counter() - t0 < seconds:
        steps += walk(cfg, derive_seed(99, i), 120, SAFETY).steps
        i += 1
    return steps / (time.perf_counter() - t0)


def machine_rate(cfg, examples: int) -> float:
    from isrlab.properties.machines import run_machine

    r = run_machine(cfg, seed=0, max_examples=examples, stateful_step_count=50)
    return r.steps / r.seconds


def time_to_violation(engine: str, name: str, seed: int, cap: float, max_steps: int):
    p = preset(name)
    inv = (BY_NAME[p.expected],)
    t0 = time.perf_counter()
    i = 0
    if engine == "hypothesis":
        from isrlab.properties.machines import run_machine

        m = run_machine(p.config, seed, 100000, 60, inv, time_budget_s=cap, shrink_budget_s=10.0, preset=name)
        if m.violation is None:
            return None, None
        return m.seconds_to_find, m
    while time.perf_counter() - t0 < cap:
        if engine == "walk":
            r = walk(p.config, derive_seed(seed, i), max_steps, inv)
        else:
            r = search(p.config, derive_seed(seed, i), 500, 40, inv)
        i += 1
        if r.violation is not None:
            return time.perf_counter() - t0, r
    return None, None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--cap", type=float, default=120.0, help="seconds per seed before giving up")
    ap.add_argument("--max-steps", type=int, default=120)
    ap.add_argument("--engines", nargs="*", default=["guided", "walk"],
                    help="guided, walk, hypothesis (the machine with its settle macro, Hypothesis-shrunk)")
    ap.add_argument("--presets", nargs="*", default=sorted(n for n, p in PRESETS.items() if p.expected != "pass"))
    args = ap.parse_args()
    cfg = preset("kafka-2.4").config
    w = walker_rate(cfg, 5.0)
    print(f"walker (all invariants, kafka-2.4): {w:,.0f} steps/s")
    m = machine_rate(cfg, 200)
    print(f"hypothesis machine (all invariants, kafka-2.4): {m:,.0f} steps/s; walker/machine = {w / m:.1f}x")
    print(f"time to first violation over {args.seeds} campaign seeds (cap {args.cap:.0f} s), shrunk length:")
    for engine, name in [(e, n) for n in args.presets for e in args.engines]:
        times, lengths, misses = [], [], 0
        for seed in range(args.seeds):
            t, r = time_to_violation(engine, name, seed, args.cap, args.max_steps)
            if t is None:
                misses += 1
                times.append(args.cap)
                continue
            times.append(t)
            lengths.append(shrink(preset(name).config, r.actions, r.violation.invariant, 20.0).shrunk_length)
        found = f"{args.seeds - misses}/{args.seeds}"
        shrunk = f"median {statistics.median(lengths):.0f} (min {min(lengths)})" if lengths else "-"
        print(f"  {engine:<7} {name:<22} {preset(name).expected:<20} found {found}; median {statistics.median(times):6.2f} s "
              f"(min {min(times):.2f}, max {max(times):.2f}); shrunk length {shrunk}")


if __name__ == "__main__":
    main()
