"""What a person reads: a campaign's result, summary first, drawn with rich and fitted to the terminal.

The first screen holds the verdict, one row per preset and what to do next; then one block per
distinct counterexample (near-duplicates, with the same preset, invariant and explanation up to
its numbers, folded with a count); step tables only on request. Colour only on a terminal.
"""

from __future__ import annotations

import os
import re
import shlex
import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

_NUMBER = re.compile(r"\d+")


def console(err: bool = False) -> Console:
    """A rich Console: the terminal's width on a TTY, 120 columns (no colour) when piped."""
    stream = sys.stderr if err else sys.stdout
    tty = stream.isatty()
    width = None if tty else int(os.environ.get("COLUMNS", "120") or 120)
    return Console(file=stream, width=width, no_color=not tty or "NO_COLOR" in os.environ, highlight=False,
                   soft_wrap=False, emoji=False)


def explanation_class(sentence: str) -> str:
    """The explanation with its numbers blanked: two counterexamples of one class tell the same story."""
    return _NUMBER.sub("#", sentence)


def fold(counterexamples: list) -> list:
    """(representative, count) per (preset, invariant, explanation class), the shortest first."""
    groups: dict[tuple, list] = {}
    for c in counterexamples:
        groups.setdefault((c["preset"], c["invariant"], explanation_class(c.get("explanation", ""))), []).append(c)
    out = []
    for items in groups.values():
        items.sort(key=lambda c: (c["shrunk_length"], c["file"]))
        out.append((items[0], len(items)))
    out.sort(key=lambda pair: (pair[0]["preset"], pair[0]["invariant"]))
    return out


def _violated(p: dict) -> str:
    """The invariants a preset broke in one short cell: the headline first, then how many others."""
    broken = list(p["violated"])
    if not broken:
        return "-"
    first = p["expected"] if p["expected"] in broken else broken[0]
    return first + (f" +{len(broken) - 1}" if len(broken) > 1 else "")


def _verdict(text: str) -> Text:
    style = {"ok": "green", "UNEXPECTED": "bold red", "not found": "yellow"}.get(text.split(" ")[0], "")
    return Text(text, style=style)


def campaign(summary: dict, out: Console, where: dict, verbose_tables: list | None = None) -> None:
    """Print a campaign's result: verdict and presets, next steps, then the counterexamples and where things are."""
    presets = summary["presets"]
    secs = summary.get("seconds", {}).get("total_s") or summary.get("seconds", {}).get("fuzz_s")
    contradictions = [p["preset"] for p in presets if p["verdict"] == "UNEXPECTED"]
    missed = [p["preset"] for p in presets if p["verdict"] == "not found"]
    if contradictions:
        head = Text(f"NOT AS EXPECTED: {', '.join(contradictions)}", style="bold red")
    elif missed:
        head = Text(f"as expected, but not found within the budget: {', '.join(missed)}", style="yellow")
    else:
        head = Text("every preset behaved as expected", style="bold green")
    out.print(Text.assemble(f"campaign {summary['campaign']}: ", head))
    out.print(f"{summary['runs']:,} runs, {summary['steps']:,} steps"
              + (f" in {secs:.0f} s" if secs else "")
              + f" on {summary['master']} ({summary['tasks']} tasks, "
                f"{summary.get('steps_per_second_in_shards') or 0:,.0f} steps/s while the shards ran)")

    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for col, kw in (("preset", {}), ("expected", {}), ("runs", {"justify": "right"}),
                    ("steps", {"justify": "right"}), ("violated", {}), ("verdict", {})):
        table.add_column(col, **kw)
    for p in presets:
        table.add_row(p["preset"], p["expected"], f"{p['runs']:,}", f"{p['steps']:,}", _violated(p),
                      _verdict(p["verdict"]))
    out.print(table)

    folded = fold(summary.get("counterexamples", []))
    out.print()
    out.print(Text("next", style="bold"))
    if folded:
        headlines = {(p["preset"], p["expected"]) for p in presets}
        pick = next((c for c, _ in folded if (c["preset"], c["invariant"]) in headlines), folded[0][0])
        first = shlex.quote(pick["file"])
        for what, cmd in (("its steps:", f"isrlab replay --expected {first}"),
                          ("its diagram:", f"isrlab explain {first} --svg cx.svg"),
                          ("keep it as a regression test:", f"isrlab promote {first}")):
            out.print(f"  {what:<31}{cmd}", soft_wrap=True)
    for what, key in (("the summary:", "summary"), ("the tables (Parquet):", "tables"), ("the report:", "report")):
        if where.get(key):
            out.print(f"  {what:<31}{where[key]}", soft_wrap=True)

    if folded:
        out.print()
        out.print(Text(f"{len(folded)} distinct counterexamples", style="bold")
                  + Text(f" ({len(summary.get('counterexamples', []))} archived under "
                         f"{where.get('archive', '')})" if where.get("archive") else ""))
        for c, count in folded:
            more = f", and {count - 1} like it" if count > 1 else ""
            out.print(Text.assemble((f"{c['preset']}", "bold"), ": ", (c["invariant"], "red"),
                                    f" in {c['shrunk_length']} steps (shrunk from {c['original_length']}){more}"))
            out.print(f"  {c.get('explanation', '')}", overflow="fold")
            out.print(f"  {c['file']}", soft_wrap=True)
    if verbose_tables:
        for t in verbose_tables:
            out.print()
            out.print("\n".join(t), overflow="ignore", crop=False)
