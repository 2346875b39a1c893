"""Benchmark: does a rule mutant's changed code ever compute what the real rule would not (infection)?

A mutant that no engine kills is either not reached (its function never runs), reached but never infected (the
changed snippet always gives the original's value on the states the search visits: evidence, not proof, that it is
equivalent there), or infected but invisible (it changes state that no invariant tells apart).  "Not reached"
and "reached, never infected" look the same here: no step's outcome differs.  For each mutant the
guided search runs with it installed, and every model step it takes is also taken with the real rules; a step is
infected when the two resulting states differ.  Prints one row per mutant: steps, infected steps, and the seconds
and step number of the first infection.  Asserts nothing.  (The search goes on from the mutant's states, so the
steps after a first infection may differ because of it.)

    .venv/bin/python benchmarks/mutant_infection.py --budget 20 [--preset kafka-2.4] [--mutant NAME ...]
"""

from __future__ import annotations

import argparse
import time

from isrlab.model.config import preset
from isrlab.properties.budget import Deadline
from isrlab.properties.mutants import MUTANTS, install, restore, suspended
from isrlab.properties import walker


class Probe:
    """Wraps the walker's ``step``: each step runs with the mutant (the one the search goes on with) and, the
    originals put back for that call (``mutants.suspended``), without it; counts the steps whose outcomes differ (the model is pure, a
    step clones what it changes, so both start from the same state)."""

    def __init__(self, step_fn, saved):
        self.step, self.saved = step_fn, saved
        self.steps = self.infected = 0
        self.first: tuple | None = None      # (seconds since start, step number)
        self.t0 = time.monotonic()

    def __call__(self, cfg, s, a):
        self.steps += 1
        got = self.step(cfg, s, a)
        with suspended(self.saved):
            want = self.step(cfg, s, a)
        if got != want:
            self.infected += 1
            if self.first is None:
                self.first = (time.monotonic() - self.t0, self.steps)
        return got


def measure(cfg, name: str, budget: float, seed: int) -> Probe:
    saved = install(name)
    probe = Probe(walker.step, saved)
    walker.step = probe
    try:
        walker.search(cfg, walker.derive_seed(seed, 0), 10 ** 9, should_stop=Deadline(budget))
    finally:
        walker.step = probe.step
        restore(saved)
    return probe


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="kafka-2.4")
    ap.add_argument("--budget", type=float, default=20.0, help="seconds of guided search per mutant")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mutant", action="append", default=[], help="mutant name (repeatable; default: all)")
    args = ap.parse_args(argv)
    cfg = preset(args.preset).config
    names = args.mutant or [m.name for m in MUTANTS]
    print(f"{'mutant':40} {'steps':>9} {'infected':>9}  first infection")
    for name in names:
        p = measure(cfg, name, args.budget, args.seed)
        first = "never" if p.first is None else f"{p.first[0]:.2f} s, step {p.first[1]:,}"
        print(f"{name:40} {p.steps:>9,} {p.infected:>9,}  {first}", flush=True)


if __name__ == "__main__":
    main()
