"""Figures: how often seeded walks of the ELR presets elect a partition's last known leader (KIP-966's lastKnownElr),
and how many of those leaders are fenced at that step.

Kafka 4.0.0 elects the last known leader fenced or not; 4.1.0 (KAFKA-19522) only once it is an acceptable leader
(docs/fidelity/kafka-4.md; the flag kafka_19522).  Each preset is walked twice, with the flag as the preset has it
(4.1.0's rule) and with it off (4.0.0's): a fenced one counted there is an election 4.1.0 would not make at that
step.  Prints figures; asserts nothing.  Each walk is the walker's (properties/walker.py: its Policy, swarm on) with no invariant
checked, seeds 1 to --walks, so the figures are the same on every run.
"""

from __future__ import annotations

import argparse
import random

from isrlab.model.config import preset
from isrlab.model.step import enabled_groups, initial_state, step
from isrlab.properties.walker import Policy

ELR_PRESETS = ("kafka-4.1", "kafka-4.1-disk-wipe", "kafka-4.1-lossy-crash", "kafka-4.1-min-isr-2")


def survey(cfg, walks: int, depth: int) -> dict:
    """Walk seeds 1..walks for at most ``depth`` actions each; count unclean elections (with the ELR and
    unclean.leader.election.enable off, every one is a last-known-leader election), those of a broker whose
    registration is fenced after the step, the actions that made them, and the walks that ended with documented
    losses (``ghost.unclean_losses``)."""
    out = {"walks": walks, "elections": 0, "fenced": 0, "lossy_walks": 0, "by_action": {}, "first_fenced": None}
    for seed in range(1, walks + 1):
        policy = Policy(cfg, random.Random(seed), True)
        s = initial_state(cfg)
        a = None
        for i in range(1, depth + 1):
            groups = enabled_groups(cfg, s, policy.kinds)
            if not groups:
                break
            a = policy.choose(groups, s, a)
            s2 = step(cfg, s, a)
            if s2.ghost.unclean_elections > s.ghost.unclean_elections:
                out["elections"] += 1
                leader = s2.ghost.unclean[-1].leader
                reg = s2.quorum.registrations[leader]
                if reg is None or reg.fenced:
                    out["fenced"] += 1
                    name = type(a).__name__
                    out["by_action"][name] = out["by_action"].get(name, 0) + 1
                    if out["first_fenced"] is None:
                        out["first_fenced"] = (seed, i, name, leader)
            s = s2
        if s.ghost.unclean_losses:
            out["lossy_walks"] += 1
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--walks", type=int, default=2000, help="walks per preset (seeds 1..N)")
    ap.add_argument("--depth", type=int, default=400, help="actions per walk at most")
    ap.add_argument("--preset", action="append", help="preset (repeatable); default: the ELR presets")
    args = ap.parse_args(argv)
    print(f"walks {args.walks} of at most {args.depth} actions each, seeds 1..{args.walks}")
    print(f"{'preset':24} {'rule':6} {'elections':>9} {'fenced':>7} {'lossy walks':>11}  fenced by action; first "
          f"(seed, step)")
    for name in args.preset or ELR_PRESETS:
        cfg = preset(name).config
        for rule, c in (("4.1.0", cfg.replace(kafka_19522=True)), ("4.0.0", cfg.replace(kafka_19522=False))):
            r = survey(c, args.walks, args.depth)
            first = r["first_fenced"]
            where = f"; first ({first[0]}, {first[1]})" if first else ""
            print(f"{name:24} {rule:6} {r['elections']:>9} {r['fenced']:>7} {r['lossy_walks']:>11}  "
                  f"{r['by_action']}{where}")


if __name__ == "__main__":
    main()
