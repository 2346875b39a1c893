"""What the presentation layer costs: SVG and PNG diagrams and step tables of every archived counterexample.

Prints CPU seconds (process time, not wall time: the machine is shared) per output kind, each measured twice,
alternating.  Run: .venv/bin/python benchmarks/presentation.py
"""

from __future__ import annotations

import glob
import os
import time

from isrlab import diagram
from isrlab.model.trace import load_trace
from isrlab.properties import steptable
from isrlab.properties.replay import replay


def cpu(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def main() -> None:
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "counterexamples")
    traces = [load_trace(f) for f in sorted(glob.glob(os.path.join(root, "*.json")))]
    diagram.to_png(diagram.build(traces[0]))      # matplotlib's import and font cache, once
    print(f"{len(traces)} counterexamples, {sum(len(t.actions) for t in traces)} actions")
    kinds = {"replay alone": lambda: [replay(t) for t in traces],
             "step tables (160 columns)": lambda: [steptable.step_table(replay(t)) for t in traces],
             "SVG diagrams": lambda: [diagram.to_svg(diagram.build(t)) for t in traces],
             "PNG diagrams (matplotlib)": lambda: [diagram.to_png(diagram.build(t)) for t in traces]}
    for round_ in (1, 2):
        for name, fn in kinds.items():
            print(f"round {round_}: {name}: {cpu(fn):.2f} CPU s")


if __name__ == "__main__":
    main()
