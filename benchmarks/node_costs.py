"""Benchmark: the per-call costs behind model/node.py's copy-on-write records.

Prints figures; asserts nothing.  On a kafka-2.4 Broker record: ``dataclasses.replace``, the base class's clone
``Node._clone`` (a loop over the fields), the generated straight-line clone each record class carries; and ``hash``
of a ModelConfig, which ``node.memo_by_identity`` avoids on hot paths.  Microseconds per call (``timeit``).

    .venv/bin/python benchmarks/node_costs.py
"""

from __future__ import annotations

import dataclasses
import timeit

from isrlab.model.config import preset
from isrlab.model.node import Node
from isrlab.model.step import initial_state


def per_call_us(f, n: int) -> float:
    return timeit.timeit(f, number=n) / n * 1e6


def main() -> None:
    cfg = preset("kafka-2.4").config
    br = initial_state(cfg).brokers[0]
    tok = object()
    n = 200_000
    print(f"Broker ({len(type(br)._FIELDS)} fields): dataclasses.replace "
          f"{per_call_us(lambda: dataclasses.replace(br), n // 10):.2f} us, Node._clone (a loop over the fields) "
          f"{per_call_us(lambda: Node._clone(br, tok), n):.2f} us, the generated clone "
          f"{per_call_us(lambda: br._clone(tok), n):.2f} us; hash(ModelConfig) "
          f"{per_call_us(lambda: hash(cfg), n // 10):.2f} us")


if __name__ == "__main__":
    main()
