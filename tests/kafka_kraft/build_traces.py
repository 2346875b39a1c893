"""Write tests/kafka_kraft/*.json, tests/kafka_kraft/failing/*.json and the tables of tests/kafka_kraft/README.md.

Run from the repository root:   .venv/bin/python tests/kafka_kraft/build_traces.py [--check]

Every case registered in the cases_*.py modules is built (its actions applied to the model as they are written, so an
action the model does not enable fails the build), written as ``Class.testName.json`` (in ``failing/`` when the case
is marked ``fails``), and replayed: the script reports any passing case whose checks fail and any failing case that
now passes.  The README's tables and counts are rewritten from the registry (tests/casebook.py).  ``--check`` builds
and replays without writing anything.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from kraftcase import BOOK  # noqa: E402

import cases_partition  # noqa: E402,F401
import cases_builder  # noqa: E402,F401
import cases_replication_control  # noqa: E402,F401
from casebook import build_main  # noqa: E402


def count_lines(n: dict, in_scope: int, partial: list) -> list:
    outside = sum(1 for e in BOOK.registry.values() if e[0] == "out" and e[1].startswith("outside this item"))
    return [
        f"- test cases in the {len(BOOK.sources)} classes: {len(BOOK.registry)}",
        f"- in scope (about this item's rules; expressed or not): **{in_scope}**",
        f"- expressed and passing: **{n['expressed']}**; {len(partial)} of them leave some of the test's "
        f"assertions unchecked (named in the table)",
        f"- expressed, failing (the model disagrees with Kafka's assertion, `failing/`): **{n['failing']}**",
        f"- not expressible, vocabulary the model lacks: **{n['missing']}**",
        f"- out of scope: {n['out']} ({outside} replication rules outside this item, {n['out'] - outside} "
        f"not replication: admin APIs, metrics, listeners, log directories, configuration)",
    ]


if __name__ == "__main__":
    sys.exit(build_main(sys.argv[1:], HERE, BOOK, count_lines))
