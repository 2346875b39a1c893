"""Benchmark: the Spark explorer's bytes per state and the growth of a search's levels, for sizing a cluster.

Prints figures; asserts nothing.  A single-process search without chain compression (the Spark engine's counts)
of a preset's bounds (its explore defaults, with --brokers / --max-expirations / --max-crashes on top), stopped at
--max-states, gives the states per level, their ratio and the transitions per state; on the first --sample
states of its last full levels, the pickled sizes of what the Spark engine keeps and shuffles per state (a
successor record: digest, path, bits, state; a visited entry: digest), its checkpoint line, and the CPU cost of
its key (``state_key`` digested) against the single-process ``fast_keyer``.

    .venv/bin/python benchmarks/spark_explore_sizes.py --preset no-kafka-7415 --max-states 200000
"""

from __future__ import annotations

import argparse
import gzip
import json
import pickle
import time

from isrlab import spark_explore as S
from isrlab.model.config import explore_bounds, preset
from isrlab.model.step import initial_state, step
from isrlab.properties.explore import explore, fast_keyer, search_args


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="kafka-2.4")
    ap.add_argument("--brokers", type=int)
    ap.add_argument("--max-expirations", type=int)
    ap.add_argument("--max-crashes", type=int)
    ap.add_argument("--max-states", type=int, default=200_000)
    ap.add_argument("--sample", type=int, default=3000)
    a = ap.parse_args()
    b = dict(explore_bounds(a.preset))
    for k in ("brokers", "max_expirations", "max_crashes"):
        if getattr(a, k) is not None:
            b[k] = getattr(a, k)
    cfg, kw = search_args(preset(a.preset).config, b)
    kw.pop("settle_every")
    kw.pop("composite", None)   # the Spark engine searches every interleaving
    kw["max_states"] = a.max_states
    c0 = time.process_time()
    res = explore(cfg, **kw, compress=False)
    cpu = time.process_time() - c0
    levels = S.level_counts(res)
    full = levels[:-1] if not res.complete else levels
    print(f"{a.preset} {b['brokers']} brokers: {res.distinct_states:,} states, {res.transitions:,} transitions "
          f"({res.transitions / res.distinct_states:.2f} per state, {res.pruned:,} pruned), {cpu:.1f} CPU s "
          f"({res.distinct_states / cpu:,.0f} states/CPU s), complete {res.complete}")
    print("states per level:", full)
    print("ratio per level (last 8):", [round(y / x, 3) for x, y in zip(full[-9:-1], full[-8:]) if x])
    # states of the deepest full levels, replayed from their BFS paths
    ids = [i for i, d in enumerate(res.depths) if d >= len(full) - 3][: a.sample]
    spec = S.Spec(cfg, kw["eager_tasks"], tuple(sorted(kw["without"])), kw["max_leader_epoch"],
                  kw["max_isr_changes"], kw["max_queue"],
                  None if kw["max_time_ms"] is None else initial_state(cfg).now + kw["max_time_ms"], False,
                  ())
    states, paths = [], []
    for i in ids:
        s, path = initial_state(cfg), []
        for act in res.trace_to(i):
            s = step(cfg, s, act)
            path.append(0)   # an index per action: its pickled size is that of the real path's
        states.append(s)
        paths.append(tuple(path))
    c0 = time.process_time()
    digests = [S.digest(spec, s) for s in states]
    t_digest = (time.process_time() - c0) / len(states)
    keyer = fast_keyer(cfg, kw["max_isr_changes"], deadline=spec.deadline)
    c0 = time.process_time()
    for s in states:
        keyer(s)
    t_fast = (time.process_time() - c0) / len(states)
    n = len(states)
    state_b = sum(len(pickle.dumps(s, protocol=pickle.HIGHEST_PROTOCOL)) for s in states) / n
    record_b = sum(len(pickle.dumps((d, (p, 0, s, 0)), protocol=pickle.HIGHEST_PROTOCOL))
                   for d, p, s in zip(digests, paths, states)) / n
    batch = [(d, None) for d in digests]   # Spark pickles records in batches
    visited_b = len(pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)) / n
    lines = "".join(json.dumps([format(d, "032x"), 0, list(p)], separators=(",", ":")) + "\n"
                    for d, p in zip(digests, paths))
    line_b = len(gzip.compress(lines.encode())) / n
    print(f"on {n:,} states at depths {res.depths[ids[0]]}-{res.depths[ids[-1]]} (paths of {len(paths[0])}-"
          f"{len(paths[-1])} actions):")
    print(f"  pickled state {state_b:,.0f} B; successor record (digest, path, bits, state) {record_b:,.0f} B; "
          f"visited entry {visited_b:,.1f} B; checkpoint line (gzip) {line_b:,.1f} B")
    print(f"  key: state_key + blake2b {t_digest * 1e6:,.0f} us per state; fast_keyer {t_fast * 1e6:,.0f} us")


if __name__ == "__main__":
    main()
