"""Time to find each breaking preset's own bug, counted only when attributed to it by its fix.

For every preset with expected bugs: N campaign seeds, each an in-process hunt with one engine (guided by default)
(the runs of ``isrlab fuzz --master none``, going past known bugs the preset does not expect) capped at
--cap seconds; a seed counts as found when a violation is attributed to one of the preset's expected bugs
(properties/attribution.py), and that violation is then shrunk keeping its attribution.  Prints one row per
preset: found k/N, median seconds to find (the cap for a miss) and their range, median and min shrunk length, and what else
was met (known bugs gone past, unexpected violations).

    python benchmarks/attributed_finds.py --seeds 5 --cap 60 [--engine walk|scopes] [--presets A B ...] [--composite P]

User presets (``isrlab.toml`` in the working folder, as ``isrlab fuzz`` reads it) are registered first, so a bug no
built-in preset expects can be timed through a preset of one's own that expects it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from isrlab import userpresets
from isrlab.campaign import CAMPAIGN_ENGINES, CampaignSpec, run_one, run_seed, scope_config
from isrlab.exits import InputError
from isrlab.model.config import PRESETS
from isrlab.properties.attribution import attribute, classify, shrink_attributed
from isrlab.properties.budget import Deadline


def hunt(name: str, seed: int, cap: float, shrink_budget: float, engine: str = "guided"):
    """(seconds to find or None, shrunk length or None, kinds met) for one campaign seed."""
    p = PRESETS[name]
    spec = CampaignSpec(presets=(name,), seed=seed, engine=engine, shards=1, shard_budget_s=cap)
    t0 = time.monotonic()
    over = Deadline(cap)
    met = set()
    n = 0
    while not over():
        r = run_one(spec, name, run_seed(seed, 0, n), should_stop=over, keep_going=False)
        n += 1
        # a scopes run's entries were met in their scopes' configurations: found ones first, then those gone past
        cfgs = [scope_config(name, b) for b in r.scopes] or [p.config] * (len(r.violations) + len(r.passed))
        for (v, actions), cfg in zip(r.passed, cfgs[len(r.violations):]):
            met.add("known:" + ",".join(attribute(cfg, actions, v.invariant, expected=p.bugs).bugs))
        if r.violation is None:
            if r.exhausted:
                break
            continue
        cfg = cfgs[0]
        a = attribute(cfg, r.actions, r.violation.invariant, expected=p.bugs)
        kind, bugs = classify(p, a)
        if kind == "found":
            secs = time.monotonic() - t0
            if not shrink_budget:
                return secs, len(r.actions), met
            sr, _ = shrink_attributed(cfg, r.actions, r.violation.invariant, expected=p.bugs,
                                      time_budget_s=shrink_budget)
            return secs, len(sr.actions), met
        met.add(f"{kind}:{r.violation.invariant}:{','.join(a.bugs) or '-'}")
    return None, None, met


def main() -> None:
    try:
        userpresets.load()
    except InputError as e:
        print(f"attributed_finds: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=100)
    ap.add_argument("--cap", type=float, default=60.0)
    ap.add_argument("--shrink-budget", type=float, default=20.0)
    ap.add_argument("--engine", default="guided", choices=CAMPAIGN_ENGINES)
    ap.add_argument("--presets", nargs="*", default=sorted(n for n, p in PRESETS.items() if p.bugs))
    ap.add_argument("--composite", type=float, default=None,
                    help="the share of walks and extensions that take exchanges whole (walker.P_COMPOSITE)")
    ap.add_argument("--no-shrink", action="store_true", help="time to find only")
    args = ap.parse_args()
    if args.composite is not None:
        from isrlab.properties import walker

        walker.P_COMPOSITE = args.composite
    if args.no_shrink:
        args.shrink_budget = 0.0
    length = "length med (min)" if args.no_shrink else "shrunk med (min)"
    print(f"{'preset':<32} {'bug':<22} {'found':>6} {'median s':>9} {'range s':>13} {length:>17}  also met")
    for name in args.presets:
        times, lengths, met = [], [], set()
        for k in range(args.seeds):
            secs, length, m = hunt(name, args.first_seed + k, args.cap, args.shrink_budget, args.engine)
            times.append(secs if secs is not None else args.cap)
            if length is not None:
                lengths.append(length)
            met |= m
        found = len(lengths)
        shrunk = f"{statistics.median(lengths):g} ({min(lengths)})" if lengths else "-"
        print(f"{name:<32} {','.join(PRESETS[name].bugs):<22} {found:>3}/{args.seeds:<2} "
              f"{statistics.median(times):>9.2f} {f'{min(times):.2f}-{max(times):.2f}':>13} {shrunk:>17}  "
              f"{'; '.join(sorted(met)) or '-'}", flush=True)


if __name__ == "__main__":
    main()
