"""Benchmark: the engines on one core.  Prints figures; asserts nothing.

* steps/s of the walker (every invariant checked after every step) and of the Hypothesis machine
  on the default preset;
* for each preset expected to break: time to the first violation of its headline invariant over
  N campaign seeds (median, min, max; a seed that finds nothing within --cap counts as the cap),
  the steps/s the engine ran at, and the shrunk trace length;
* the hand-written scenarios of tests/scenarios that break a preset's invariant (the KIP and JIRA
  stories, written out action by action), their length as written and shrunk, next to the engines'
  median shrunk length for the same preset and invariant: the shortest known scenario to compare with.

Guided engine, before and after the cell scheduler (Go-Explore: a cell first, then one of its
states) and parent-pointer traces, side by side on the 2-core development machine (one process per
core, load about 3 from other jobs), campaign seeds 0-9, cap 60 s, 500 extensions per run: median
seconds to the first violation (min-max), found, median shrunk length.

=====================  ====================================  ====================================
preset                 one-level schedule, tuple traces      cells, parent pointers
=====================  ====================================  ====================================
crash-loses-unflushed  1.33 s (0.18-3.10)   10/10  21        0.33 s (0.01-1.14)  10/10  22
kafka-0.10.2           4.32 s (0.01-21.73)  10/10  28        2.07 s (0.02-4.47)  10/10  26
kafka-0.11             0.26 s (0.05-0.96)   10/10  16        0.28 s (0.07-1.31)  10/10  19
kafka-2.0              0.27 s (0.04-1.10)   10/10  16        0.24 s (0.08-1.14)  10/10  19
no-kafka-7128          0.84 s (0.09-1.66)   10/10  15        0.55 s (0.08-1.36)  10/10  14
=====================  ====================================  ====================================

Then restarts with probability 0.1 (was 0.3), 6000 extensions per run (the CLI's default) and the
stale-follower count in the cells, measured on held-out campaign seeds 10-19 (cap 120 s; guided
one process, hypothesis another, load 2-3), and the Hypothesis machine (settle + swarm macros,
seeds 0-4, cap 60 s, Hypothesis-shrunk length):

=====================  ======================================  ======================================
preset                 guided (10 seeds)                       hypothesis (5 seeds)
=====================  ======================================  ======================================
crash-loses-unflushed  0.35 s (0.06-0.63)    10/10  20         6.70 s (3.26-9.75)    5/5  17
kafka-0.10.2           2.06 s (0.03-2.96)    10/10  31         none within 60 s      0/5
kafka-0.11             0.36 s (0.01-1.15)    10/10  13         4.13 s (0.36-14.91)   5/5  14
kafka-2.0              0.34 s (0.01-1.08)    10/10  13         4.44 s (0.42-15.65)   5/5  14
no-kafka-7128          0.36 s (0.01-2.74)    10/10  28         10.23 s (0.85-16.47)  5/5  18
no-kip-320             22.69 s (1.87-125.0)  10/10  38         -
no-kafka-7164          15.22 s (0.34-114.8)  10/10  38         -
=====================  ======================================  ======================================

Then two changes to the guided search's cells (walker.novelty_key and search): the divergence level
(a follower holding records its fetch leader, or ZooKeeper's leader, lacks below its fetch offset)
and a cell weight that falls with the steps that reached the cell (** -0.75).  Same held-out seeds
10-19, cap 120 s, one process on the 2-core machine, load 1-2:

=====================  ======================================
preset                 guided (10 seeds)
=====================  ======================================
crash-loses-unflushed  0.29 s (0.07-1.32)    10/10  24
kafka-0.10.2           0.27 s (0.10-1.36)    10/10  28
kafka-0.11             0.31 s (0.04-2.16)    10/10  14
kafka-2.0              0.25 s (0.06-2.42)    10/10  14
no-kafka-7128          0.43 s (0.07-2.97)    10/10  14
no-kip-320             3.62 s (0.08-7.03)    10/10  38
no-kafka-7164          2.84 s (0.43-5.93)    10/10  40
no-kafka-7415          33.81 s (1.19-70.89)  10/10  42
=====================  ======================================

no-kafka-7415 became a breaking preset after that table (the stronger search found KAFKA-7415's
truncation below the HW); its row was measured the same way in a run of its own, load about 2.

In steps (load-independent, campaign seeds 0-11 or 0-39) the same change took KAFKA-6880's
divergence from 539k to 71k steps (no-kip-320) and from 1.12M to 90k (no-kafka-7164), and
kafka-0.10.2's lost write from 28.5k to 13.3k (40 seeds); the walker.py docstrings give each step.
Walker steps/s in that run: 18,888; the machine 2,269 with one-kind rules (8.3x), 5,827 with the
macros (3.2x).

Then four speed-ups that leave every search step for step the same (the same seeds give the same
traces): each record's ``_clone`` generated field by field, ``enabled_actions``'s tables found by
the config's identity instead of its hash, log_matching's equal-overlap check, and the weighted
choice written out.  Same held-out seeds 10-19, cap 120 s, one process on the 2-core machine,
load about 1:

=====================  ======================================  ==========
preset                 guided (10 seeds)                       steps/s
=====================  ======================================  ==========
crash-loses-unflushed  0.21 s (0.08-0.97)    10/10  24         32,491
kafka-0.10.2           0.24 s (0.12-1.20)    10/10  28         33,211
kafka-0.11             0.18 s (0.03-1.56)    10/10  14         37,882
kafka-2.0              0.18 s (0.05-1.43)    10/10  14         37,017
no-kafka-7128          0.35 s (0.05-1.90)    10/10  14         33,758
no-kip-320             2.45 s (0.05-4.31)    10/10  38         41,416
no-kafka-7164          2.38 s (0.42-5.11)    10/10  40         32,686
no-kafka-7415          20.70 s (0.78-49.35)  10/10  42         42,134
=====================  ======================================  ==========

Walker steps/s in that run 29,585; the machine 1,856 with one-kind rules (15.9x), 6,500 with the
macros (4.6x).  (That run predates the written-out weighted choice, which added about 5% more.)

Then the cell field for an ISR member truncating below its leader's HW (walker.novelty_key), same
seeds and conditions:

=====================  ======================================  ==========
preset                 guided (10 seeds)                       steps/s
=====================  ======================================  ==========
crash-loses-unflushed  0.16 s (0.06-0.25)    10/10  26         44,374
kafka-0.10.2           0.19 s (0.08-0.74)    10/10  28         47,892
kafka-0.11             0.24 s (0.03-2.00)    10/10  17         45,689
kafka-2.0              0.25 s (0.03-2.00)    10/10  17         45,647
no-kafka-7128          0.68 s (0.04-1.42)    10/10  16         45,497
no-kip-320             3.04 s (0.34-8.81)    10/10  40         42,179
no-kafka-7164          3.42 s (0.34-13.28)   10/10  41         37,861
no-kafka-7415          4.30 s (0.76-31.42)   10/10  43         40,159
=====================  ======================================  ==========

Walker 33,841 steps/s; the machine 2,596 with one-kind rules (13.0x), 8,315 with the macros (4.1x).
The Hypothesis machine (settle + swarm, seeds 0-4, cap 60 s, Hypothesis-shrunk length) in a run
beside it: crash-loses-unflushed 4.58 s (2.25-6.62) 5/5 16, kafka-0.11 3.45 s (0.29-9.75) 5/5 14,
kafka-2.0 2.82 s (0.33-7.36) 5/5 14, no-kafka-7128 3.99 s (0.31-8.48) 5/5 16, kafka-0.10.2 2 of 5
within 60 s (36.7 s first) 26, no-kafka-7415 1 of 5 (9.8 s) 45; no-kip-320 and no-kafka-7164 are
out of its reach (properties/machines.py).

Then the swarm policy's fault targeting (half the runs aim their crashes and session expirations at
the leader and the controller: walker.P_TARGETED), same seeds and conditions, load about 1:

=====================  ======================================  ==========
preset                 guided (10 seeds)                       steps/s
=====================  ======================================  ==========
crash-loses-unflushed  0.17 s (0.04-0.36)    10/10  26         42,113
kafka-0.10.2           0.20 s (0.02-0.55)    10/10  30         48,061
kafka-0.11             0.61 s (0.00-1.90)    10/10  16         46,083
kafka-2.0              0.64 s (0.00-1.98)    10/10  16         43,366
no-kafka-7128          0.19 s (0.00-1.82)    10/10  19         46,459
no-kip-320             3.39 s (0.30-9.56)    10/10  41         43,601
no-kafka-7164          1.52 s (0.61-3.27)    10/10  39         42,678
no-kafka-7415          3.23 s (0.17-27.92)   10/10  44         45,354
=====================  ======================================  ==========

Walker 38,515 steps/s; the machine 2,278 with one-kind rules (16.9x), 8,447 with the macros (4.6x).
The Hypothesis machine (settle + swarm, seeds 0-4, cap 60 s, Hypothesis-shrunk length) after it, alone:
crash-loses-unflushed 1.62 s (0.52-16.86) 5/5 17, kafka-0.11 1.94 s (1.91-7.51) 5/5 12, kafka-2.0 2.01 s
(1.49-7.47) 5/5 12, no-kafka-7128 2.65 s (0.11-11.00) 5/5 17, kafka-0.10.2 38.66 s (21.49-60) 4/5 26,
no-kafka-7415 0/5 (it was 1 of 5); walker 38,714 steps/s in that run, the machine 2,939 with one-kind rules
(13.2x), 8,917 with the macros (4.3x).

Then the precondition share (half the extensions start from a cell with a diverged follower or a
truncating ISR member below its leader's HW: walker.P_PRECONDITION), same seeds, load about 1-2:

=====================  ======================================  ==========
preset                 guided (10 seeds)                       steps/s
=====================  ======================================  ==========
crash-loses-unflushed  0.12 s (0.03-0.76)    10/10  26         46,549
kafka-0.10.2           0.27 s (0.02-1.11)    10/10  40         47,839
kafka-0.11             0.20 s (0.00-1.60)    10/10  20         42,839
kafka-2.0              0.21 s (0.00-1.46)    10/10  17         46,495
no-kafka-7128          0.90 s (0.00-5.27)    10/10  24         41,078
no-kip-320             0.55 s (0.09-0.93)    10/10  37         44,792
no-kafka-7164          0.54 s (0.08-2.45)    10/10  38         42,332
no-kafka-7415          3.77 s (0.63-29.87)   10/10  40         46,021
=====================  ======================================  ==========

Walker 37,867 steps/s; the machine 2,309 with one-kind rules (16.4x), 8,649 with the macros (4.4x).

Then the member-ahead precondition (a zombie leader's ISR member with a lower HW holding an epoch
ZooKeeper's leader has not cached: walker._isr_members_below_hw) and the shrinker's skipping
deletion (pass 6), same seeds, load about 1:

=====================  ======================================  ==========
preset                 guided (10 seeds)                       steps/s
=====================  ======================================  ==========
crash-loses-unflushed  0.12 s (0.03-0.73)    10/10  20         44,688
kafka-0.10.2           0.30 s (0.03-1.85)    10/10  30         36,238
kafka-0.11             0.23 s (0.00-2.00)    10/10  18         39,590
kafka-2.0              0.28 s (0.00-2.90)    10/10  16         36,860
no-kafka-7128          0.60 s (0.00-5.38)    10/10  16         44,828
no-kip-320             0.80 s (0.08-1.48)    10/10  37         41,118
no-kafka-7164          0.52 s (0.11-2.12)    10/10  39         41,748
no-kafka-7415          2.00 s (0.38-6.30)    10/10  42         45,318
=====================  ======================================  ==========

Walker 32,349 steps/s; the machine 1,704 with one-kind rules (19.0x), 7,434 with the macros (4.4x).
The hand-written scenarios in that run (length as written, shrunk; the guided median; the archive's
shortest): KAFKA-7128 (08b) 37, 14; 16; 14.  KIP-101's lost write (10a) 35, 22; 30; 26.
KAFKA-7164 (21a) 43, 38; 39; 32.  KIP-279's divergence (20a, kafka-0.11 log_matching, not the
preset's headline invariant) 40, 30.

Then model.step.enabled_groups (the engines choose from the enabled actions grouped by kind, same
draws) and the new-leader precondition (ZooKeeper's leader below a zombie's HW, before and after
its first append; only where KAFKA-7415's fix is off: walker._isr_members_below_hw), same seeds,
one process with a test run on the other core.  The four presets with the fix search as before
(measured with enabled_groups alone: crash-loses-unflushed 0.12 s, no-kafka-7128 0.70 s, no-kip-320
0.72 s, no-kafka-7164 0.52 s):

=====================  ======================================  ==========
preset                 guided (10 seeds)                       steps/s
=====================  ======================================  ==========
kafka-0.10.2           0.23 s (0.02-2.33)    10/10  28         40,853
kafka-0.11             0.32 s (0.01-1.62)    10/10  16         32,142
kafka-2.0              0.31 s (0.00-1.91)    10/10  15         37,417
no-kafka-7415          1.60 s (0.11-6.07)    10/10  44         42,799
=====================  ======================================  ==========

Walker 33,326 steps/s; the machine 2,627 with one-kind rules (12.7x), 8,992 with the macros (3.7x).

Then incremental invariant checking (each invariant declares the parts of the state it reads, and
is not run after a step that left them unchanged: properties/invariants.py), same seeds, one
process on an otherwise idle machine.  The searches are step for step the same; only their speed
changed (a search checks one invariant, so it gains less than the walker, which checks them all):

=====================  ======================================  ==========
preset                 guided (10 seeds)                       steps/s
=====================  ======================================  ==========
crash-loses-unflushed  0.12 s (0.03-0.94)    10/10  20         40,729
kafka-0.10.2           0.20 s (0.02-2.11)    10/10  28         45,247
kafka-0.11             0.20 s (0.00-1.27)    10/10  16         46,380
kafka-2.0              0.23 s (0.00-1.79)    10/10  15         43,311
no-kafka-7128          0.68 s (0.00-5.50)    10/10  16         42,169
no-kip-320             0.66 s (0.08-1.36)    10/10  37         45,497
no-kafka-7164          0.48 s (0.08-2.23)    10/10  39         43,855
no-kafka-7415          1.63 s (0.11-5.65)    10/10  44         46,836
=====================  ======================================  ==========

Walker 51,621 steps/s (38,000 before, same machine and hour); the machine 2,440 with one-kind
rules (21.2x), 8,731 with the macros (5.9x).  A second run: walker 58,096, machine 2,982 (19.5x)
and 10,234 (5.7x).

Then the HW-window precondition (walker._hw_window: ZooKeeper's leader with a HW its live followers
have not heard of, and its session expiring inside that window; only where KAFKA-7415's fix is
off), same seeds 10-19, idle machine.  The presets with the fix search as before:

=====================  ======================================  ==========
preset                 guided (10 seeds)                       steps/s
=====================  ======================================  ==========
kafka-0.10.2           0.18 s (0.03-0.84)    10/10  30         42,974
kafka-0.11             0.16 s (0.00-0.88)    10/10  15         45,949
kafka-2.0              0.16 s (0.00-0.63)    10/10  14         45,704
no-kafka-7415          0.38 s (0.07-2.97)    10/10  42         44,285
=====================  ======================================  ==========

Seeds 10-19 were among those the field was chosen on (campaign seeds 0-39), so the same code on
campaign seeds 80-89, which no tuning ever used, every breaking preset:

=====================  ======================================  ==========
preset                 guided (10 seeds)                       steps/s
=====================  ======================================  ==========
crash-loses-unflushed  0.04 s (0.01-0.27)    10/10  18         46,708
kafka-0.10.2           0.23 s (0.07-0.70)    10/10  26         47,550
kafka-0.11             0.28 s (0.01-1.51)    10/10  14         48,838
kafka-2.0              0.28 s (0.01-1.65)    10/10  14         46,705
no-kafka-7128          0.42 s (0.03-2.38)    10/10  16         45,657
no-kip-320             0.45 s (0.14-2.51)    10/10  38         43,978
no-kafka-7164          0.33 s (0.01-0.91)    10/10  37         48,947
no-kafka-7415          0.52 s (0.02-2.69)    10/10  40         43,145
=====================  ======================================  ==========

Walker 51,269 steps/s; the machine 2,567-2,901 with one-kind rules (20.0x), 9,909-10,458 with the
macros (5.2-5.6x).  Scenarios in the seeds 80-89 run (as written, shrunk; guided median; archive):
KAFKA-7128 37, 14; 16; 14.  KIP-101 35, 22; 26; 26.  KAFKA-7164 43, 38; 37; 32.

The Hypothesis machine (settle + swarm macros) in the same code, campaign seeds 0-4, cap 60 s,
Hypothesis-shrunk length: crash-loses-unflushed 1.47 s (0.95-13.19) 5/5 16; kafka-0.10.2 26.26 s
(11.49-60.00) 4/5 24; kafka-0.11 2.31 s (1.95-8.11) 5/5 12; kafka-2.0 2.55 s (1.69-8.79) 5/5 12;
no-kafka-7128 2.67 s (0.61-13.12) 5/5 19; 8,300-9,800 steps/s.

The unguided walker (``--engines walk``, the policy the machine's swarm macro walks with) did not
find no-kip-320's divergence in any of campaign seeds 10-13 within 120 s each (8.1M steps each at
67,500 steps/s): the deep presets are out of reach of unguided random testing, not only of the
Hypothesis machine.

Steps/s on kafka-2.4 with every invariant checked, earlier runs: walker 16,557-18,932; Hypothesis
machine with one rule per action kind 1,626-1,746 (walker/machine 10.2-10.8x), with the settle and
swarm macros 4,737-5,157 (3.2-4.0x: the macros step the model without a rule draw per step).  The
machine finds kafka-0.10.2 by test-case count, not in this time-bounded form: seeds 6, 7 and 8
within 1,500 test cases (tests/test_machines.py).  The spread between seed sets is large: the same
kafka-0.10.2 configuration had a 1.22 s median on seeds 10-19 before the stale-follower cells and
a 15.9k-step median (about 0.7 s) on seeds 0-9 after.

Issue 21 made the engines blind to presets: the cell fields read only where a fix was off (the member
ahead, the new leader, the HW window) or only with KIP-497 are gone; the tables above measure the code
before that.  Figures since then, and the records the engines' docstrings held, are in benchmarks/RESULTS.md.
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
