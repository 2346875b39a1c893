"""Benchmark: the exhaustive explorer's states/s on one core, each preset's default search, the cross-engine ratio.

Prints figures; asserts nothing.  Reference: TLC on the Kafka TLA+ specs, one worker, 7.4k distinct
states/s.  The throughput configuration is sized like those models: 3 replicas, 2 records, leader
epochs up to 2 (plus: 2 ISR writes, no faults, one controller, acks=-1, no consumers, eager tasks).
Rates are given per CPU second of this process (``time.process_time``) as well as per wall second: on
a shared, loaded machine the CPU figure is what one quiet core would do; the load average is printed.

Defaults (``--defaults``): every preset explored with the bounds ``isrlab explore --preset P`` uses when no
option is given (``model.config.explore_bounds``): time, states, and whether the search completed or found
the preset's bug.

All defaults (``--all-defaults --cpu-cap S --results FILE``): the same, one line per preset, each search
stopped after S CPU seconds; each preset's result is added to FILE (JSON) as soon as it is measured, and a
preset already in FILE is not run again (resumable).  ``--table-from FILE...`` prints the README's table.

Cross-engine: for each preset expected to break, the explorer's minimal (BFS-shortest) trace length
against the walker-found shrunk trace archived in counterexamples/ (shrink.py's output).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import time

from isrlab.model.config import EXPLORE_BOUNDS, EXPLORE_DEFAULTS, EXPLORE_KRAFT_DEFAULTS, PRESETS, explore_bounds, preset
from isrlab.properties.budget import Deadline
from isrlab.model.trace import load_trace, write_atomic
from isrlab.properties.attribution import KnownBugs
from isrlab.properties.explore import TASK_KINDS, bounded_config, explore, search_args
from isrlab.properties.invariants import BY_NAME, LIVENESS_BY_NAME as LIVENESS

#: correct presets explored to completion: (brokers, records, crashes, expirations, controller epochs, max leader
#: epoch, ISR writes, model-time bound in ms, kinds left out besides ConsumerFetch).  Tiers per preset: the clock
#: at 2 brokers (17.5 s of model time: a follower can leave the ISR at the expiration task after its lag window
#: and the change propagate), 3 brokers over 5 s, and one crash or one session expiration at 2 brokers over 2.5 s
#: (leader epochs up to 2, so a failover and its truncation).  Without a time bound a 3-broker search does not
#: finish here (kafka-2.4 was still growing at 2.45M states); a crash plus an expiration over 5 s at 2 brokers did
#: not finish in 5 minutes on a loaded machine.
TIERS = {
    "clock2": (2, 1, 0, 0, 1, 1, 1, 17_500, ()),
    "clock3": (3, 1, 0, 0, 1, 1, 1, 5_000, ()),
    "crash": (2, 1, 1, 0, 1, 2, 1, 2_500, ()),
    "expiry": (2, 1, 0, 1, 2, 2, 1, 2_500, ()),
}
COMPLETE_BOUNDS = {name: TIERS for name, p in sorted(PRESETS.items()) if p.expected == "pass"}


def _load() -> str:
    try:
        return "load average %.1f %.1f %.1f" % os.getloadavg()
    except OSError:  # pragma: no cover
        return "load average unknown"


def throughput(max_states: int) -> None:
    """States per CPU second with and without chain compression, on a capped search and on a complete one
    (where the uncompressed run's distinct states are the states both runs check)."""
    cfg = bounded_config(preset("kafka-2.4").config, 3, 2, 0, 0, 1).replace(produce_acks=(-1,))
    full = bounded_config(preset("kafka-2.4").config, 2, 1, 0, 0, 1).replace(produce_acks=(-1,))
    for label, c, kw in (("capped: kafka-2.4, 3 brokers, 2 records, epochs <= 2", cfg,
                          dict(max_leader_epoch=2, max_isr_changes=2, max_states=max_states)),
                         ("complete: kafka-2.4, 2 brokers, 1 record, 17.5 s of model time", full,
                          dict(max_leader_epoch=1, max_isr_changes=1, max_time_ms=17_500))):
        distinct = None
        for compress in (False, True):
            print(_load(), flush=True)
            r = explore(c, eager_tasks=True, without=("ConsumerFetch",), compress=compress, **kw)
            if not compress:
                distinct = r.distinct_states
            print(f"{label}, compress={compress}: {r.distinct_states:,} stored + {r.chain_states:,} in chains = "
                  f"{r.visited:,} states, {r.transitions:,} transitions, depth {r.depth}, "
                  f"{r.seconds:.1f} s wall / {r.cpu_seconds:.1f} s CPU = {r.visited / r.cpu_seconds:,.0f} states "
                  f"per CPU s ({r.transitions / r.cpu_seconds:,.0f} transitions per CPU s)"
                  + ("" if r.complete else " (stopped at --max-states)")
                  + (f"; the {distinct:,} distinct states of the full search in {r.cpu_seconds:.1f} CPU s = "
                     f"{distinct / r.cpu_seconds:,.0f}/s" if r.complete and compress else "")
                  + "; TLC 1 worker: 7,400/s", flush=True)


def defaults(only=None, max_states=None) -> None:
    """Each preset with the default bounds of ``isrlab explore --preset P``."""
    for name in sorted(PRESETS):
        if only and name not in only:
            continue
        p = PRESETS[name]
        b = explore_bounds(name)
        if max_states is not None:
            b["max_states"] = max_states
        cfg, kw = search_args(p.config, b)
        print(_load(), flush=True)
        judge = KnownBugs(p, cfg)
        r = explore(cfg, judge=judge, **kw)
        met = "".join(f"; went on past {n} ({'+'.join(bugs)}, {len(acts)} actions)"
                      for (n, _k, bugs), (acts, _f) in judge.passed.items())
        if r.found:
            inv, f = next(iter(r.found.items()))
            a = None if inv in LIVENESS else judge.attribution(inv, f.actions)
            verdict = (f"found {inv} ({len(f.actions)} actions)"
                       + ("" if a is None else f": {a.summary()}"))
        elif r.complete:
            verdict = "complete, no violation" + ("" if p.expected == "pass" else f" -- expected {p.expected}")
        else:
            verdict = f"INCOMPLETE (stopped by {r.stop_reason})"
        verdict += met
        print(f"{name:<26} expects {p.expected:<32} {r.visited:>10,} states ({r.distinct_states:,} stored), depth "
              f"{r.depth}, {r.seconds:.1f} s wall, {r.cpu_seconds:.1f} s CPU: {verdict}", flush=True)


def measure_default(name: str, cpu_cap: float | None) -> dict:
    """One preset's default search (``isrlab explore --preset name`` with no option: it goes on past violations
    attributed to known bugs), stopped after ``cpu_cap`` CPU seconds of this process: what it found or why it
    stopped, states, CPU and wall seconds."""
    from isrlab.properties.attribution import classify

    p = PRESETS[name]
    b = explore_bounds(name)
    cfg, kw = search_args(p.config, b)
    judge = KnownBugs(p, cfg)
    cpu0 = time.process_time()
    r = explore(cfg, should_stop=Deadline(cpu_cap, clock=time.process_time), judge=judge, **kw)
    row = {"preset": name, "expected": p.expected,
           "bounds": {k: v for k, v in b.items() if EXPLORE_DEFAULTS[k] != v}, "states": r.visited,
           "stored": r.distinct_states, "depth": r.depth, "cpu_s": round(time.process_time() - cpu0, 1),
           "wall_s": round(r.seconds, 1), "complete": r.complete, "stop_reason": r.stop_reason, "found": None,
           "known_found": {f"{n} ({'+'.join(bugs)})": len(acts)
                           for (n, _k, bugs), (acts, _f) in judge.passed.items()}}
    if r.found:
        inv, f = next(iter(r.found.items()))
        if inv in LIVENESS:   # found by settling a sampled state: not attributed here (the command attributes it)
            row["found"] = {"invariant": inv, "length": len(f.actions), "expected": inv == p.expected,
                            "known": inv in p.breaks, "bugs": [], "liveness": True}
        else:
            kind, bugs = classify(p, judge.attribution(inv, f.actions))
            row["found"] = {"invariant": inv, "length": len(f.actions), "expected": kind == "found",
                            "known": kind in ("found", "known"), "bugs": list(bugs), "liveness": False}
    if row["stop_reason"] == "budget":
        row["stop_reason"] = f"cpu cap {cpu_cap:g} s"
    return row


def verdict(row: dict) -> str:
    """A measured default search's result in words (the README table's and the benchmark line's)."""
    f = row["found"]
    known = row.get("known_found") or {}
    past = ("; went on past " + ", ".join(f"`{n}` ({k})" for n, k in sorted(known.items()))) if known else ""
    if f is not None:
        tag = ("the preset's bug" if f["expected"] else "a known bug" if f["known"]
               else "UNEXPECTED: no known fix removes it")
        if f.get("liveness"):
            return f"found `{f['invariant']}` (liveness: does not settle after {f['length']} actions; {tag}){past}"
        return f"found `{f['invariant']}` ({f['length']} actions; {tag}){past}"
    if row["complete"]:
        return ("complete, " + ("only known violations" if known else "no violation")
                + ("" if row["expected"] == "pass" else " -- its bug NOT within the bounds") + past)
    if row["stop_reason"] == "max_states":
        cap = row["bounds"].get("max_states", EXPLORE_DEFAULTS["max_states"])
        return f"stopped by max_states ({cap:,} stored), no {'other ' if known else ''}violation{past}"
    return f"stopped by {row['stop_reason']}, no {'other ' if known else ''}violation{past}"


def all_defaults(results: str, cpu_cap: float, only=None) -> None:
    """Every preset's default search, one at a time, each result added to ``results`` as soon as measured."""
    done = {}
    if os.path.exists(results):
        with open(results) as fh:
            done = {r["preset"]: r for r in json.load(fh)}
    for name in sorted(PRESETS, key=lambda n: (PRESETS[n].expected == "pass", n)):   # breaking presets first
        if (only and name not in only) or name in done:
            continue
        print(_load(), flush=True)
        row = measure_default(name, cpu_cap)
        done[name] = row
        write_atomic(results, json.dumps([done[k] for k in sorted(done)], indent=1))
        print(f"{name:<30} expects {row['expected']:<32} {row['states']:>10,} states ({row['stored']:,} stored), "
              f"depth {row['depth']}, {row['wall_s']} s wall, {row['cpu_s']} s CPU: {verdict(row)}", flush=True)


def _norm(v):
    return list(v) if isinstance(v, tuple) else v


def _bounds_words(b: dict) -> str:
    words = []
    for k, v in b.items():
        if k == "max_time":
            words.append("no time bound" if v is None else f"{v:,} ms of model time")
        elif k == "settle_every":
            words.append(f"liveness settled on every {v}th stored state" if v else "no liveness settling")
        elif k == "without":
            words.append("without " + (", ".join(x for x in v if x != "ConsumerFetch") or "nothing more"))
        else:
            words.append(f"{k.removeprefix('max_')} {v}")
    return ", ".join(words) or "none"


def table(results: list) -> None:
    """The README's table from ``--all-defaults`` results files (a preset in a later file replaces an earlier one),
    and the presets none of them measured."""
    by_name = {}
    for path in results:
        with open(path) as fh:
            by_name.update({r["preset"]: r for r in json.load(fh)})
    rows = [by_name[k] for k in sorted(by_name)]
    print("| preset | expects | bounds beyond its era's generic ones | result | states (stored) | CPU s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        # a row keeps the bounds that differ from EXPLORE_DEFAULTS; its words, those that differ from its era's
        full = {**EXPLORE_DEFAULTS, **r["bounds"]}
        era = EXPLORE_KRAFT_DEFAULTS if r["preset"] in PRESETS and PRESETS[r["preset"]].config.kip_500 else {}
        generic = {**EXPLORE_DEFAULTS, **era}
        words = _bounds_words({k: v for k, v in full.items() if _norm(generic[k]) != _norm(v)})
        print(f"| `{r['preset']}` | `{r['expected']}` | {words} | {verdict(r)} | "
              f"{r['states']:,} ({r['stored']:,}) | {r['cpu_s']} |")
    missing = sorted(set(PRESETS) - set(by_name))
    if missing:
        print("\nNot measured: " + ", ".join(f"`{n}`" for n in missing))


def cross_engine(max_states: int, folder: str) -> None:
    for name in sorted(PRESETS):
        p = PRESETS[name]
        if p.expected == "pass":
            continue
        b = {**explore_bounds(name), "max_states": max_states}
        cfg, kw = search_args(p.config, b)
        r = explore(cfg, invariants=(BY_NAME[p.expected],), **kw)
        files = sorted(glob.glob(os.path.join(folder, f"*-{name}-{p.expected}-*.json")))
        walker = min((len(load_trace(f).actions) for f in files), default=None)
        f = r.found.get(p.expected)
        if f is None:
            print(f"{name:<22} not broken within {r.distinct_states:,} states (depth {r.depth}, {r.seconds:.0f} s)")
            continue
        ratio = f"{walker / len(f.actions):.2f}" if walker else "n/a"
        tasks = sum(type(a) in TASK_KINDS for a in f.actions)
        print(f"{name:<22} {p.expected}: minimal {len(f.actions)} actions ({tasks} of them eager scheduled tasks; "
              f"{r.distinct_states:,} states, depth {r.depth}, {r.seconds:.1f} s); walker shrunk {walker}; "
              f"walker/explorer {ratio}")


def complete(max_states: int, only=None) -> None:
    for name in sorted(COMPLETE_BOUNDS):
        if only and name not in only:
            continue
        for tier, bounds in COMPLETE_BOUNDS[name].items():
            nb, rec, cr, se, ce, ep, k, mt, wo = bounds
            cfg = bounded_config(PRESETS[name].config, nb, rec, cr, se, ce).replace(produce_acks=(-1,))
            r = explore(cfg, max_leader_epoch=ep, max_isr_changes=k, max_time_ms=mt, eager_tasks=True,
                        without=("ConsumerFetch",) + wo, max_states=max_states)
            verdict = "complete, no violation" if r.complete and not r.found else (
                f"VIOLATED {list(r.found)}" if r.found else "incomplete (--complete-max-states)")
            print(f"{name:<18} {tier:<6} {bounds[:8]}: {r.distinct_states:,} states, {r.transitions:,} "
                  f"transitions, depth {r.depth}, {r.seconds:.1f} s ({r.states_per_second:,.0f}/s): {verdict}",
                  flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-states", type=int, default=200_000)
    ap.add_argument("--break-max-states", type=int, default=3_000_000)
    ap.add_argument("--counterexamples", default="counterexamples")
    ap.add_argument("--complete-max-states", type=int, default=3_000_000)
    ap.add_argument("--skip-breaks", action="store_true")
    ap.add_argument("--skip-complete", action="store_true")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--preset", action="append", help="only these presets in the completion and defaults tables")
    ap.add_argument("--defaults", action="store_true", help="only the table of every preset's default search")
    ap.add_argument("--all-defaults", action="store_true",
                    help="every preset's default search, one line each, results kept in --results (resumable)")
    ap.add_argument("--cpu-cap", type=float, default=300.0, help="CPU seconds per preset in --all-defaults")
    ap.add_argument("--results", default="explore-defaults.json", help="JSON file of --all-defaults results")
    ap.add_argument("--table-from", metavar="FILE", nargs="+",
                    help="print the README table of --all-defaults results files (later ones win)")
    args = ap.parse_args()
    if args.table_from:
        table(args.table_from)
        return
    if args.all_defaults:
        all_defaults(args.results, args.cpu_cap, args.preset)
        return
    if args.defaults:
        defaults(args.preset)
        return
    if not args.skip_throughput:
        throughput(args.max_states)
    if not args.skip_breaks:
        cross_engine(args.break_max_states, args.counterexamples)
    if not args.skip_complete:
        complete(args.complete_max_states, args.preset)


if __name__ == "__main__":
    main()
