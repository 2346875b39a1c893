"""Benchmark: what a hostile or huge trace costs to refuse (or to accept); prints figures, asserts nothing.

    .venv/bin/python benchmarks/hostile_traces.py [--replay-timeout 120] [--only unknown-1M,valid-1M]

Each case is a trace file written to a temporary folder (the header of a real counterexample, then the damage), read
in a fresh subprocess per case, so that its peak resident memory (``getrusage`` ``ru_maxrss``, via ``os.wait4``) is
that case's alone:

* ``load``: ``isrlab.model.trace.load_trace`` on the file, the path every command's trace goes through (its outcome
  starts with what the peak grew by during the load, past the imports: ``+25MB``);
* ``replay``: ``isrlab replay --quiet`` on it, the whole command (a valid trace is replayed to its end, or until the
  timeout).

Printed per case: the file's size, the outcome (the first line of the error, or "ok"), wall seconds and peak RSS, and
the peak above the interpreter's own baseline (the same path on a 1-action trace) as a multiple of the file's size.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOOD = sorted((ROOT / "counterexamples").glob("*-kafka-0.11-isr_entry_condition-*.json"))[0]

_LOAD = """
import resource, sys
from isrlab.model.trace import TraceError, load_trace
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    t = load_trace(sys.argv[1])
    said = f"ok: {len(t.actions):,} actions"
except TraceError as e:
    said = str(e)[:300]
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"+{(after - before) / 1024:.0f}MB {said}")
"""


def _header() -> dict:
    data = json.loads(GOOD.read_text())
    data.pop("checks", None)
    data["expect"], data["violated"] = "pass", None
    data.pop("violation", None)
    data.pop("attribution", None)
    return data


def _write(folder: Path, name: str, data: dict, actions_text: bytes | None = None) -> Path:
    """The trace as ``json.dumps`` writes it; ``actions_text`` (the bytes of the actions array) is spliced in where
    building the list as Python objects would dwarf what is measured."""
    path = folder / f"{name}.json"
    if actions_text is None:
        path.write_bytes(json.dumps(data).encode())
    else:
        head = json.dumps({**data, "actions": "@ACTIONS@"}).encode()
        path.write_bytes(head.replace(b'"@ACTIONS@"', actions_text, 1))
    return path


def _many(item: dict, n: int) -> bytes:
    one = json.dumps(item).encode()
    return b"[" + b", ".join([one] * n) + b"]"


def cases(folder: Path) -> dict[str, Path]:
    h = _header()
    unknown = {"type": "FlipCoin"}
    tick = {"type": "Tick", "ms": 1}
    out = {"baseline-1-action": _write(folder, "baseline", {**h, "actions": [tick]})}
    for label, n in (("1k", 1000), ("100k", 100_000), ("1M", 1_000_000)):
        out[f"unknown-{label}"] = _write(folder, f"unknown-{label}", h, _many(unknown, n))
    # every broker down (three crashes allowed): then no task is due, and a Tick is enabled at any time
    h = {**h, "config": {**h["config"], "max_crashes": 3}}
    down = b"[" + b", ".join(json.dumps({"type": "BrokerCrash", "broker": b, "clean": False}).encode()
                             for b in range(3)) + b", "
    out["valid-1M-then-unknown"] = _write(folder, "late-unknown", h, down + _many(tick, 999_996)[1:-1] + b", "
                                          + json.dumps(unknown).encode() + b"]")
    out["valid-1M"] = _write(folder, "valid-1M", h, down + _many(tick, 999_997)[1:])
    out["description-20MB"] = _write(folder, "description", {**h, "description": "x" * (20 << 20), "actions": [tick]})
    out["header-field-20MB"] = _write(folder, "header-field", {**h, "provenance": {"runs": [{}] * (5 << 20)},
                                                               "actions": [tick]})
    deep = 1_000_000
    out["nesting-1M-deep"] = _write(folder, "deep", h, b"[" * deep + b"]" * deep)
    out["nesting-1M-deep-unclosed"] = _write(folder, "deep-unclosed", h, b"[" * deep)
    return out


def measure(argv: list, timeout: float) -> tuple[str, float, int]:
    """(first line of output, wall seconds, peak RSS in bytes) of one subprocess; killed at ``timeout``."""
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = t0 + timeout
    status, usage = 0, None
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            os.killpg(proc.pid, 9)   # the process group this benchmark started
            pid, status, usage = os.wait4(proc.pid, 0)
            return f"still running after {timeout:.0f} s (killed)", time.monotonic() - t0, usage.ru_maxrss * 1024
        time.sleep(0.02)
    secs = time.monotonic() - t0
    text = proc.stdout.read().decode(errors="replace").strip()
    code = os.waitstatus_to_exitcode(status)
    first = text.splitlines()[0] if text else ""
    return f"[exit {code}] {first}", secs, usage.ru_maxrss * 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replay-timeout", type=float, default=120.0, help="seconds before a replay is stopped")
    ap.add_argument("--only", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--write", metavar="DIR", help=argparse.SUPPRESS)   # the child that writes the cases
    a = ap.parse_args()
    if a.write:
        print(" ".join(f"{name} {path.name}" for name, path in cases(Path(a.write)).items()))
        return
    isrlab = os.path.join(os.path.dirname(sys.executable), "isrlab")
    with tempfile.TemporaryDirectory(prefix="isrlab-hostile-") as tmp:
        # written by a child: a process's peak RSS is passed on to the processes it starts (Linux keeps it across
        # fork and exec), so this one must stay small for the children's figures to be theirs
        names = subprocess.run([sys.executable, __file__, "--write", tmp], check=True, capture_output=True,
                               text=True).stdout.split()
        files = {name: Path(tmp) / file for name, file in zip(names[::2], names[1::2])}
        only = {s for s in a.only.split(",") if s}
        base_rss: dict = {}   # per path: the interpreter, its imports and a 1-action trace
        print(f"{'case':<26} {'bytes':>12} {'path':<7} {'seconds':>8} {'peak RSS':>10} {'x size':>7}  outcome")
        for name, path in files.items():
            if only and name not in only and name != "baseline-1-action":
                continue
            size = path.stat().st_size
            for how, argv, timeout in (("load", [sys.executable, "-c", _LOAD, str(path)], 600.0),
                                       ("replay", [isrlab, "replay", "--quiet", str(path)], a.replay_timeout)):
                outcome, secs, rss = measure(argv, timeout)
                if name == "baseline-1-action":
                    base_rss[how] = rss
                ratio = f"{(rss - base_rss[how]) / size:7.1f}" if how in base_rss and size > 1 << 20 else "      -"
                print(f"{name:<26} {size:>12,} {how:<7} {secs:>8.2f} {rss / 2**20:>8.0f}MB {ratio}  {outcome[:150]}",
                      flush=True)


if __name__ == "__main__":
    main()
