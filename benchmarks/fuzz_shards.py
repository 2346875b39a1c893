"""Benchmark: the default fuzz campaign's first run of each shard, counted in steps.  Prints figures; asserts nothing.

``isrlab fuzz --preset all --budget 120 --master local[2]`` (the main job) gives each preset two shards of a few
seconds each, and a guided run (6,000 extensions of up to 40 steps) fills about one shard.  For each preset
expected to break, this runs the first guided run of shards 0..N-1 of the campaign seed, exactly as the campaign
seeds them (``campaign.run_seed``), checking the preset's headline invariant, and prints the steps at which each
found it (or "-"): whether the main job finds a preset on a quiet machine is whether one of these is below the
steps a shard runs (RESULTS.md gives that figure), whatever the load now.
"""

from __future__ import annotations

import argparse

from isrlab.campaign import run_seed
from isrlab.model.config import PRESETS, preset
from isrlab.properties.invariants import BY_NAME
from isrlab.properties.walker import search


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0, help="campaign seed")
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--extensions", type=int, default=6000)
    ap.add_argument("--presets", nargs="*", default=sorted(n for n, p in PRESETS.items() if p.expected != "pass"))
    args = ap.parse_args()
    for name in args.presets:
        p = preset(name)
        cells = []
        for k in range(args.shards):
            r = search(p.config, run_seed(args.seed, k, 0), args.extensions, 40, (BY_NAME[p.expected],))
            cells.append(f"{r.steps / 1000:.1f}k" if r.violation is not None else f"- ({r.steps / 1000:.0f}k run)")
        print(f"{name:<24} {p.expected:<32} " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
