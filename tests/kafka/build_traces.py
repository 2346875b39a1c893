"""Write tests/kafka/*.json, tests/kafka/failing/*.json and the tables of tests/kafka/README.md.

Run from the repository root:   .venv/bin/python tests/kafka/build_traces.py [--check]

Every case registered in the cases_*.py modules is built (its actions applied to the model as they
are written, so an action the model does not enable fails the build), written as
``Class.testName.json`` (in ``failing/`` when the case is marked ``fails``), and replayed: the
script reports any passing case whose checks fail and any failing case that now passes.  The
README's tables and counts are rewritten from the registry (tests/casebook.py).  ``--check`` builds
and replays without writing anything.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from kafkacase import BOOK  # noqa: E402

import cases_controller  # noqa: E402,F401
import cases_epoch  # noqa: E402,F401
import cases_fetcher  # noqa: E402,F401
import cases_integration  # noqa: E402,F401
import cases_partition  # noqa: E402,F401
import cases_replica_manager  # noqa: E402,F401
from casebook import build_main  # noqa: E402


def count_lines(n: dict, in_scope: int, partial: list) -> list:
    return [
        f"- test cases in the {len(BOOK.sources)} classes: {len(BOOK.registry)}",
        f"- in scope (they touch replication): **{in_scope}**",
        f"- expressed and passing: **{n['expressed']}** ({100 * n['expressed'] / in_scope:.0f}% of in scope); "
        f"{len(partial)} of them leave one of the test's assertions unchecked (named in the table): "
        + ", ".join(partial),
        f"- expressed, failing (the model disagrees with Kafka's assertion, `failing/`): **{n['failing']}**",
        f"- not expressible, vocabulary the model lacks: **{n['missing']}**",
        f"- out of scope (not replication: metrics, request versions, threads, config validation): {n['out']}",
    ]


if __name__ == "__main__":
    sys.exit(build_main(sys.argv[1:], HERE, BOOK, count_lines))
