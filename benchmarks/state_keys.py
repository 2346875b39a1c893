"""Benchmark: what one state's dedup key costs in the explorer, three ways, on the same states.

Prints figures; asserts nothing.  The states are the first N successors a breadth-first search of a preset's
default explore bounds generates (each successor once, in the order the search makes them, so consecutive states
share records as the explorer's do).  For each: ``explore.fast_keyer`` (the search's key, a fresh keyer per
repeat), ``explore.state_key`` (the reference it is tested against) and ``encode.fingerprint`` (the canonical
JSON digest that names reported states).  CPU seconds of this process, the cyclic collector paused as in
the search.

    .venv/bin/python benchmarks/state_keys.py --preset kafka-2.4 --states 20000 --repeats 3
"""

from __future__ import annotations

import argparse
import collections
import gc
import time

from isrlab.model.config import explore_bounds, preset
from isrlab.model.encode import fingerprint
from isrlab.model.step import initial_state, step
from isrlab.properties import explore as E


def successors(cfg, kw: dict, n: int) -> tuple:
    """(the first n in-bound successors a breadth-first search generates, duplicates of stored states included,
    the time bound's deadline or None)."""
    s0 = initial_state(cfg)
    deadline = None if kw["max_time_ms"] is None else s0.now + kw["max_time_ms"]
    key = E.fast_keyer(cfg, kw["max_isr_changes"], deadline=deadline)
    without = frozenset(E.A.ACTION_BY_NAME[w] for w in kw["without"])
    seen, queue, out = {key(s0)}, collections.deque([s0]), []
    while queue and len(out) < n:
        s = queue.popleft()
        for a in E.explorer_actions(cfg, s, kw["eager_tasks"], without):
            t = step(cfg, s, a)
            if deadline is not None and t.now > deadline:
                continue
            if E._out_of_bounds(t, kw["max_leader_epoch"], kw["max_isr_changes"], kw["max_queue"]):
                continue
            out.append(t)
            k = key(t)
            if k not in seen:
                seen.add(k)
                queue.append(t)
    return out[:n], deadline


def cpu(f, states) -> float:
    """CPU seconds of f over the states, with the cyclic collector paused as ``explore`` pauses it."""
    gc.collect()
    gc.disable()
    try:
        c0 = time.process_time()
        for s in states:
            f(s)
        return time.process_time() - c0
    finally:
        gc.enable()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="kafka-2.4")
    ap.add_argument("--brokers", type=int, default=None, help="override the preset's default explore bounds")
    ap.add_argument("--states", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    b = dict(explore_bounds(args.preset))
    if args.brokers is not None:
        b["brokers"] = args.brokers
    cfg, kw = E.search_args(preset(args.preset).config, b)
    states, deadline = successors(cfg, kw, args.states)
    print(f"{args.preset}, {cfg.n_brokers} brokers: {len(states):,} successor states")
    for r in range(1, args.repeats + 1):
        fast = cpu(E.fast_keyer(cfg, kw["max_isr_changes"], deadline=deadline), states)
        ref = cpu(lambda s: E.state_key(cfg, s, False, kw["max_isr_changes"], deadline), states)
        fp = cpu(fingerprint, states)
        print(f"repeat {r}: fast_keyer {fast:.2f} s, state_key {ref:.2f} s, fingerprint {fp:.2f} s; "
              f"state_key / fast_keyer {ref / fast:.1f}x, fingerprint / state_key {fp / ref:.1f}x")


if __name__ == "__main__":
    main()
