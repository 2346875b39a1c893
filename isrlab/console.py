"""What a person reads: a campaign's result, drawn with rich, fitted to a terminal's width and, off a terminal, as
wide as its rows need (no name split, no cell cut).

One block per distinct counterexample first (near-duplicates, with the same preset, invariant and explanation up
to its numbers, folded with a count; step tables only with ``--verbose``), then one row per preset, the next
commands (spelled so that they run when pasted: ``isrlab_command``) and the verdict last, where the eye lands
when the run ends.  Colour only on a terminal.

Progress (``ProgressLine``): one live line on a terminal (rich's Live), plain lines every few seconds
otherwise (a pipe, a log file, ``--json``), always on stderr so that stdout stays the result.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import shutil
import sys
import time

from rich.console import Console
from rich.table import Table
from rich.text import Text

_NUMBER = re.compile(r"\d+")


#: the width off a terminal (a pipe, a file, a CI log) when COLUMNS does not give one: wide enough that no table is
#: squeezed and no name is split, so a table takes the width its cells need and a log line is one record
UNBOUNDED = 100_000


def _columns() -> int | None:
    """COLUMNS when it holds a usable width, else None."""
    try:
        n = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return n if n >= 20 else None


def console(err: bool = False) -> Console:
    """A rich Console: the terminal's width on a TTY; off a terminal (no colour) COLUMNS if set, else no limit, so
    that a step table piped to a file or a CI log keeps each row on one line instead of folding names mid-word."""
    stream = sys.stderr if err else sys.stdout
    tty = stream.isatty()
    width = None if tty else _columns() or UNBOUNDED
    return Console(file=stream, width=width, no_color=not tty or "NO_COLOR" in os.environ, highlight=False,
                   soft_wrap=False, emoji=False)


def isrlab_command() -> str:
    """How the user's shell can run this isrlab again, for the commands printed as next steps: ``isrlab`` when that
    name on PATH is the script beside this interpreter, else that script's path (relative to the working folder
    when it lies below it, as ``.venv/bin/isrlab`` after ``./run main``), else ``python -m isrlab.cli``."""
    script = os.path.join(os.path.dirname(sys.executable), "isrlab")
    found = shutil.which("isrlab")
    if not os.path.isfile(script):
        return "isrlab" if found else f"{shlex.quote(sys.executable)} -m isrlab.cli"
    try:
        if found and os.path.samefile(found, script):
            return "isrlab"
    except OSError:
        pass
    rel = os.path.relpath(os.path.abspath(script))
    return shlex.quote(rel if not rel.startswith(os.pardir) else os.path.abspath(script))


def activate_hint(command: str) -> str | None:
    """The line that puts plain ``isrlab`` on PATH, when ``command`` is a virtual environment's script."""
    folder = os.path.dirname(command)
    if folder and os.path.isfile(os.path.join(folder, "activate")):
        return f"source {shlex.quote(os.path.join(folder, 'activate'))}"
    return None


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


def _verdict(text: str) -> Text:
    style = {"as": "green", "UNEXPECTED": "bold red", "not": "yellow"}.get(text.split(" ")[0], "")
    return Text(text, style=style)


def _unexpected_cell(p: dict) -> str:
    return ", ".join(u["invariant"] for u in p["unexpected"]) or "-"


#: up to this many presets the result lists each in the table; beyond, only those not as expected
TABLE_ROWS = 12


def campaign(summary: dict, out: Console, where: dict, verbose: bool = False) -> None:
    """Print a campaign's result: the counterexamples with their attribution, the presets' three lists, the next
    steps, and the verdict last, so that it is what the screen shows when the run ends."""
    presets = summary["presets"]
    secs = summary.get("seconds", {}).get("total_s") or summary.get("seconds", {}).get("fuzz_s")
    folded = fold(summary.get("counterexamples", []))
    if folded:
        out.print(Text(f"{len(folded)} distinct counterexamples", style="bold")
                  + Text(f" ({len(summary.get('counterexamples', []))} archived under "
                         f"{where.get('archive', '')})" if where.get("archive") else ""))
        for c, count in folded:
            more = f", and {count - 1} like it" if count > 1 else ""
            out.print(Text.assemble((f"{c['preset']}", "bold"), ": ", (c["invariant"], "red"),
                                    f" in {c['shrunk_length']} steps (shrunk from {c['original_length']}){more}"))
            out.print(f"  {c.get('explanation', '')}", overflow="fold")
            if c.get("attributed"):
                style = {"found": "green", "known": "", "unexpected": "bold red"}.get(c.get("kind"), "")
                out.print(Text(f"  {c.get('kind', '')}: {c['attributed']}", style=style), overflow="fold")
            out.print(f"  {c['file']}", soft_wrap=True)
        out.print()
    if verbose:   # each distinct counterexample's step table, replayed and fitted to this console's width
        from .model.trace import TraceError, load_trace
        from .properties.replay import replay
        from .properties.steptable import render

        for c, _count in folded:
            out.print(Text(f"{c['preset']}: {c['invariant']}  {c['file']}", style="bold"), soft_wrap=True)
            try:
                render(replay(load_trace(c["file"])), out)
            except (OSError, TraceError) as e:
                out.print(f"  the trace cannot be read: {e}")
            out.print()

    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for col, kw in (("preset", {}), ("expected bugs", {}), ("runs", {"justify": "right"}), ("found", {}),
                    ("not found", {}), ("unexpected", {}), ("known bugs met", {}), ("verdict", {})):
        table.add_column(col, overflow="fold", **kw)
    # a long campaign lists its presets as expected on one folded line, so the verdict, the presets that need a
    # look and the next steps fit the first screen
    shown = presets if len(presets) <= TABLE_ROWS else [p for p in presets if p["verdict"] != "as expected"]
    for p in shown:
        table.add_row(p["preset"], ", ".join(p.get("expected_bugs", [])) or "-", f"{p['runs']:,}",
                      ", ".join(p["found"]) or "-", ", ".join(p["not_found"]) or "-", _unexpected_cell(p),
                      ", ".join(p.get("known", [])) or "-", _verdict(p["verdict"]))
    if shown:
        out.print(table)
    ok = [p["preset"] for p in presets if p not in shown]
    if ok:
        out.print(Text.assemble((f"as expected ({len(ok)}): ", "green"), ", ".join(ok)), overflow="fold")

    out.print()
    out.print(Text("next", style="bold"))
    if folded:
        pick = next((c for c, _ in folded if c.get("kind") == "unexpected"),
                    next((c for c, _ in folded if c.get("kind") == "found"), folded[0][0]))
        first = shlex.quote(pick["file"])
        # the diagram goes beside the counterexample (under the campaign's folder), not into the working folder
        svg = shlex.quote((pick["file"][:-5] if pick["file"].endswith(".json") else pick["file"]) + ".svg")
        isrlab = isrlab_command()
        for what, cmd in (("its steps:", f"{isrlab} replay --expected {first}"),
                          ("its diagram:", f"{isrlab} explain {first} --svg {svg} --expected"),
                          ("keep it as a regression test:", f"{isrlab} promote {first}")):
            out.print(f"  {what:<31}{cmd}", soft_wrap=True)
        hint = activate_hint(isrlab)
        if hint:
            out.print(f"  {'(plain isrlab on PATH:':<31}{hint})", soft_wrap=True)
    for what, key in (("the summary:", "summary"), ("the tables (Parquet):", "tables"), ("the report:", "report")):
        if where.get(key):
            out.print(f"  {what:<31}{where[key]}", soft_wrap=True)

    out.print()
    unexpected = [p["preset"] for p in presets if p["verdict"] == "UNEXPECTED"]
    missed = [f"{p['preset']} ({', '.join(p['not_found'])})" for p in presets if p["not_found"]]
    if unexpected:
        head = Text(f"UNEXPECTED violations, no known bug's fix removes them: {', '.join(unexpected)}",
                    style="bold red")
    elif missed:
        head = Text(f"not as expected: expected bugs not found within the budget: {', '.join(missed)}",
                    style="yellow")
    else:
        head = Text("as expected: every expected bug found and attributed by its fix; nothing unexpected",
                    style="bold green")
    out.print(Text.assemble(f"campaign {summary['campaign']}: ", head), overflow="fold")
    out.print(f"{summary['runs']:,} runs, {summary['steps']:,} steps"
              + (f" in {secs:.0f} s" if secs else "")
              + f" on {summary['master']} ({summary['tasks']} tasks, "
                f"{summary.get('steps_per_second_in_shards') or 0:,.0f} steps/s while the shards ran)")


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def eta_text(eta_s: float | None, remaining: bool) -> str:
    """", ETA 1:05" for the seconds left, rounded up while work ``remaining`` (never 0:00 then); ", ETA unknown"
    when work remains and there is no estimate; "" when nothing remains and there is none."""
    if eta_s is None or not math.isfinite(eta_s):
        return ", ETA unknown" if remaining else ""
    return f", ETA {_duration(max(1.0, math.ceil(eta_s)) if remaining else max(0.0, eta_s))}"


class ProgressLine:
    """A phase's progress on stderr: a live single line on a terminal, plain lines every ``every`` seconds
    otherwise (or with ``plain``).  ``update`` takes the figures so far; ``note`` prints a line that stays
    (a phase starting, a claim proved) in both modes.

    ``done``/``total`` count the phase's units (``unit``); ``eta_s``, when given, is the phase's own estimate
    of the seconds left (a budget's bound), else the rate of units so far gives one; with ``estimated`` the
    phase gives its own estimates only, and "ETA unknown" is shown while it has none and work remains."""

    def __init__(self, label: str, total: int | None = None, unit: str = "", plain: bool = False,
                 every: float = 5.0, stream=None, clock=time.monotonic, estimated: bool = False):
        self.label, self.total, self.unit, self.every, self.clock = label, total, unit, every, clock
        self.estimated = estimated
        self.stream = stream if stream is not None else sys.stderr
        self.live = None
        self.t0 = self.last = clock()
        self.text = ""
        if not plain and self.stream.isatty() and "ISRLAB_PLAIN_PROGRESS" not in os.environ:
            from rich.live import Live

            self.console = Console(file=self.stream, highlight=False, emoji=False)
            self.live = Live(Text(""), console=self.console, transient=True, auto_refresh=True,
                             refresh_per_second=4, redirect_stdout=False, redirect_stderr=False)
            self.live.start()

    def line(self, done: int | None = None, eta_s: float | None = None, **figures) -> str:
        """The progress line for these figures (``figures``: name -> value, printed in order, None left out)."""
        elapsed = self.clock() - self.t0
        parts = []
        if done is not None:
            parts.append(f"{done:,}/{self.total:,} {self.unit}".rstrip() if self.total is not None
                         else f"{done:,} {self.unit}".rstrip())
        for name, value in figures.items():
            if value is None:
                continue
            if isinstance(value, tuple):   # (so far, of how many)
                parts.append(f"{value[0]:,}/{value[1]:,} {name}")
            else:
                parts.append(f"{value:,.0f} {name}" if isinstance(value, (int, float)) else f"{name} {value}")
        if eta_s is None and not self.estimated and done and self.total and done < self.total:
            eta_s = elapsed / done * (self.total - done)
        parts.append(_duration(elapsed) + eta_text(eta_s, done is not None and self.total is not None
                                                   and done < self.total))
        return f"{self.label}: " + ", ".join(parts)

    def update(self, done: int | None = None, eta_s: float | None = None, force: bool = False, **figures) -> None:
        """Show these figures (live, or as a plain line when ``every`` seconds have passed or with ``force``)."""
        self.text = self.line(done, eta_s, **figures)
        if self.live is not None:
            self.live.update(Text(self.text))
        elif force or self.clock() - self.last >= self.every:
            self.last = self.clock()
            print(self.text, file=self.stream, flush=True)

    def note(self, message: str) -> None:
        if self.live is not None:
            self.live.console.print(Text(message))
        else:
            print(message, file=self.stream, flush=True)

    def close(self, message: str | None = None) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
        if message:
            print(message, file=self.stream, flush=True)
