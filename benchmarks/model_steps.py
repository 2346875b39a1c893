"""Benchmark: model steps per second for random enabled actions (one core, no invariant checks).

Prints figures; asserts nothing.  Two choosers:
  uniform - pick uniformly among all enabled actions (what `enabled_actions` + `step` cost);
  by-kind - pick an action kind first, then an action of that kind (the walker's chooser,
            which exercises fetches, elections and faults more evenly).
"""

from __future__ import annotations

import argparse
import random
import time

from isrlab.model.config import preset
from isrlab.model.step import enabled_actions, initial_state, step


def run(cfg, runs: int, depth: int, chooser: str, seed: int, clock=time.perf_counter) -> tuple[int, float]:
    rng = random.Random(seed)
    steps = 0
    t0 = clock()
    for _ in range(runs):
        s = initial_state(cfg)
        for _ in range(depth):
            acts = enabled_actions(cfg, s)
            if chooser == "uniform":
                a = acts[rng.randrange(len(acts))]
            else:
                by_kind: dict = {}
                for x in acts:
                    by_kind.setdefault(type(x), []).append(x)
                kinds = list(by_kind)
                group = by_kind[kinds[rng.randrange(len(kinds))]]
                a = group[rng.randrange(len(group))]
            s = step(cfg, s, a)
            steps += 1
    return steps, clock() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="kafka-2.4")
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--rf", type=int, default=3)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cpu", action="store_true",
                    help="steps per second of this process's CPU time (time.process_time), for a shared machine")
    args = ap.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    cfg = preset(args.preset).config.replace(n_brokers=args.brokers, n_partitions=args.partitions,
                                            replication_factor=args.rf)
    print(f"preset {args.preset}: {args.brokers} brokers, {args.partitions} partitions, RF {args.rf}; "
          f"{args.runs} runs x {args.depth} steps")
    for chooser in ("uniform", "by-kind"):
        run(cfg, 2, 200, chooser, args.seed)  # warm-up
        steps, secs = run(cfg, args.runs, args.depth, chooser, args.seed, clock)
        unit = "CPU s" if args.cpu else "s"
        print(f"  {chooser:<8} {steps:>8} steps in {secs:6.2f} {unit} = {steps / secs:>9,.0f} steps/{unit}")


if __name__ == "__main__":
    main()
