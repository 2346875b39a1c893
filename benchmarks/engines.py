"""Benchmark: the engines on one core.  Prints figures; asserts nothing.

* steps/s of the walker (every invariant checked after every step) and of the Hypothesis machine
  on the default preset;
* for each preset expected to break: time to the first violation of its headline invariant over
  N campaign seeds (median, min, max; a seed that finds nothing within --cap counts as the cap),
  the steps/s the engine ran at, and the shrunk trace length.  Only that invariant is checked and a find is
  counted by its name, so another bug that breaks it counts too: benchmarks/attributed_finds.py counts a find
  only when it is attributed to the preset's own bug;
* the hand-written scenarios of tests/scenarios that break a preset's invariant (the KIP and JIRA
  stories, written out action by action), their length as written and shrunk, next to the engines'
  median shrunk length for the same preset and invariant: the shortest known scenario to compare with.

The figures this docstring once held (tables before and after each change of the guided search, 2026-11-22
to 2026-11-24) are in benchmarks/RESULTS.md ("Experiment records moved out of the engines' docstrings"), with
everything measured since; they measure the code before the engines were made blind to presets.
"""

from __future__ import annotations

import argparse
import statistics
import time

from pathlib import Path

from isrlab.model.config import PRESETS, preset
from isrlab.model.trace import load_trace
from isrlab.properties.invariants import BY_NAME, SAFETY
from isrlab.properties.shrink import shrink
from isrlab.properties.walker import derive_seed, search, walk


def walker_rate(cfg, seconds: float) -> float:
    t0, steps, i = time.perf_counter(), 0, 0
    while time.perf_counter() - t0 < seconds:
        steps += walk(cfg, derive_seed(99, i), 120, SAFETY).steps
        i += 1
    return steps / (time.perf_counter() - t0)


def machine_rate(cfg, examples: int, macros: bool) -> float:
    """Steps/s of the Hypothesis machine: one rule per action kind only, or with the settle and swarm macros."""
    from isrlab.properties.machines import run_machine

    r = run_machine(cfg, seed=0, max_examples=examples, stateful_step_count=50, settle=macros, swarm=macros)
    return r.steps / r.seconds


def time_to_violation(engine: str, name: str, seed: int, cap: float, max_steps: int, extensions: int = 6000):
    """(seconds to the first violation or None, the run that found it or None, steps run, seconds run)."""
    p = preset(name)
    inv = (BY_NAME[p.expected],)
    t0 = time.perf_counter()
    i = steps = 0
    if engine == "hypothesis":
        from isrlab.properties.machines import run_machine

        m = run_machine(p.config, seed, 100000, 60, inv, time_budget_s=cap, shrink_budget_s=10.0, preset=name)
        if m.violation is None:
            return None, None, m.steps, m.seconds
        return m.seconds_to_find, m, m.steps, m.seconds
    while time.perf_counter() - t0 < cap:
        if engine == "walk":
            r = walk(p.config, derive_seed(seed, i), max_steps, inv)
        else:
            r = search(p.config, derive_seed(seed, i), extensions, 40, inv)
        i += 1
        steps += r.steps
        if r.violation is not None:
            t = time.perf_counter() - t0
            return t, r, steps, t
    return None, None, steps, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--cap", type=float, default=120.0, help="seconds per seed before giving up")
    ap.add_argument("--max-steps", type=int, default=120)
    ap.add_argument("--extensions", type=int, default=6000,
                    help="guided: extensions per run (a new seed after each; the CLI's default)")
    ap.add_argument("--first-seed", type=int, default=0, help="campaign seeds first-seed .. first-seed + seeds - 1")
    ap.add_argument("--engines", nargs="*", default=["guided", "walk"],
                    help="guided, walk, hypothesis (the machine with its settle macro, Hypothesis-shrunk)")
    ap.add_argument("--presets", nargs="*", default=sorted(n for n, p in PRESETS.items() if p.expected != "pass"))
    args = ap.parse_args()
    cfg = preset("kafka-2.4").config
    w = walker_rate(cfg, 5.0)
    print(f"walker (all invariants, kafka-2.4): {w:,.0f} steps/s")
    for macros in (False, True):
        m = machine_rate(cfg, 200, macros)
        rules = "with the settle and swarm macros" if macros else "one-kind rules only"
        print(f"hypothesis machine, {rules} (all invariants, kafka-2.4): {m:,.0f} steps/s; walker/machine = {w / m:.1f}x")
    print(f"time to first violation over {args.seeds} campaign seeds (cap {args.cap:.0f} s), shrunk length:")
    shrunk_medians = {}
    for engine, name in [(e, n) for n in args.presets for e in args.engines]:
        times, lengths, misses, steps, seconds, to_find = [], [], 0, 0, 0.0, []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            t, r, n, dt = time_to_violation(engine, name, seed, args.cap, args.max_steps, args.extensions)
            steps += n
            seconds += dt
            to_find.append(n if t is not None else None)
            if t is None:
                misses += 1
                times.append(args.cap)
                continue
            times.append(t)
            lengths.append(shrink(preset(name).config, r.actions, r.violation.invariant, 20.0).shrunk_length)
        if lengths:
            shrunk_medians[engine, name] = statistics.median(lengths)
        found = f"{args.seeds - misses}/{args.seeds}"
        shrunk = f"median {statistics.median(lengths):.0f} (min {min(lengths)})" if lengths else "-"
        print(f"  {engine:<10} {name:<22} {preset(name).expected:<20} found {found}; median {statistics.median(times):6.2f} s "
              f"(min {min(times):.2f}, max {max(times):.2f}); {steps / max(seconds, 1e-9):,.0f} steps/s; "
              f"shrunk length {shrunk}; steps to find {_steps_figure(to_find)}", flush=True)
    scenario_lengths(args.presets, args.engines, shrunk_medians)


def _steps_figure(to_find: list) -> str:
    """Median steps to the first violation (a miss counts as more than any find), then each seed's: load-independent."""
    ranked = sorted(to_find, key=lambda n: float("inf") if n is None else n)
    mid = ranked[len(ranked) // 2]
    each = " ".join("-" if n is None else f"{n / 1000:.1f}k" for n in to_find)
    return f"median {'-' if mid is None else f'{mid / 1000:.1f}k'} [{each}]"


def scenario_lengths(presets, engines, shrunk_medians: dict) -> None:
    """Print each hand-written violating scenario's length, as written and shrunk, beside the engines' medians."""
    root = Path(__file__).resolve().parent.parent
    folder = root / "tests" / "scenarios"
    print("hand-written scenarios (tests/scenarios) against the engines' median shrunk length "
          "and the archive's shortest:")
    for path in sorted(folder.glob("*.json")):
        t = load_trace(str(path))
        if t.expect != "violation" or t.preset not in presets:
            continue
        own = shrink(t.config, t.actions, t.violated, 60.0).shrunk_length
        ours = ", ".join(f"{e} {shrunk_medians[e, t.preset]:.0f}" for e in engines
                         if (e, t.preset) in shrunk_medians and PRESETS[t.preset].expected == t.violated)
        archived = [len(load_trace(str(f)).actions)
                    for f in (root / "counterexamples").glob(f"*-{t.preset}-{t.violated}-*.json")]
        kept = f"; archived {min(archived)}" if archived else ""
        print(f"  {path.stem:<55} {t.preset:<14} {t.violated:<20} {len(t.actions):>3} actions, shrunk {own:>3}; "
              f"{ours or 'another headline invariant'}{kept}", flush=True)


if __name__ == "__main__":
    main()
