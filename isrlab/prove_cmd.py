"""``isrlab prove``: run every z3 claim of ``specs/`` and its cross-check against the model.

Results on stdout; exit 0 when every claim has its expected answer, 1 when one does not
(``unknown`` and an encoding bug count as failures), 2 on a usage error.
"""

from __future__ import annotations

import json
import sys
import time

import click

from .exits import EXIT_OK, EXIT_VIOLATION, InputError



@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--group", "groups", multiple=True,
              help="Run only these groups (repeatable): lag_window, propagation, inductive, mutants, "
                   "leader_change, min_isr.")
def prove(as_json: bool, groups: tuple) -> None:
    """Prove the timing bounds and inductive invariants with z3, cross-checked against the model.

    Example: isrlab prove --group lag_window --json
    """
    from .specs.report import GROUPS, run

    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise InputError(f"unknown group(s) {', '.join(unknown)} (known: {', '.join(GROUPS)})")
    from .console import ProgressLine

    line = ProgressLine("prove", unit="claims", plain=as_json)
    counts = {"failed": 0}

    def on_group(group: str, n: int | None) -> None:
        line.note(f"prove: {group}" + (f" ({n} claims)" if n is not None else ""))

    def on_claim(group: str, c) -> None:
        counts["failed"] += not c.ok
        line.note(f"prove: {group}: {c.name}: {c.result}{'' if c.ok else ' (NOT as expected)'} in {c.seconds:.1f} s")
        line.update(len(claims_so_far) + 1, failed=counts["failed"] or None, force=False)
        claims_so_far.append(c)

    claims_so_far: list = []
    t0 = time.perf_counter()
    try:
        claims = run(groups or GROUPS, on_claim=on_claim, on_group=on_group)
    finally:
        line.close()
    total = time.perf_counter() - t0
    failed = [c for c in claims if not c.ok]
    if as_json:
        click.echo(json.dumps({"claims": [c.to_json() for c in claims], "failed": [c.name for c in failed],
                               "seconds": round(total, 3)}, indent=1))
    else:
        width = max(len(c.name) for c in claims)
        click.echo(f"{'claim':<{width}}  {'result':<15} {'ok':<4} {'time':>7}  bound")
        for c in claims:
            click.echo(f"{c.name:<{width}}  {c.result:<15} {'yes' if c.ok else 'NO':<4} {c.seconds:>6.2f}s  {c.bound}")
            for check in (c.crosscheck, c.cti_check):
                if check and (not c.ok or check.startswith("ENCODING BUG")):
                    click.echo(f"{'':<{width}}  {check}")
        click.echo(f"{len(claims) - len(failed)}/{len(claims)} claims hold as expected in {total:.1f} s")
        for c in failed:
            click.echo(f"FAILED {c.name}: expected {c.expected}, got {c.result}. {c.crosscheck} {c.cti_check}".rstrip())
    sys.exit(EXIT_VIOLATION if failed else EXIT_OK)
