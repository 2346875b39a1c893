"""Write tests/kafka/*.json, tests/kafka/failing/*.json and the tables of tests/kafka/README.md.

Run from the repository root:   .venv/bin/python tests/kafka/build_traces.py [--check]

Every case registered in the cases_*.py modules is built (its actions applied to the model as they
are written, so an action the model does not enable fails the build), written as
``Class.testName.json`` (in ``failing/`` when the case is marked ``fails``), and replayed: the
script reports any passing case whose checks fail and any failing case that now passes.  The
README's tables and counts are rewritten from the registry.  ``--check`` builds and replays without
writing anything.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import kafkacase  # noqa: E402
from kafkacase import MISSING, REGISTRY, SOURCES  # noqa: E402

import cases_controller  # noqa: E402,F401
import cases_epoch  # noqa: E402,F401
import cases_fetcher  # noqa: E402,F401
import cases_integration  # noqa: E402,F401
import cases_partition  # noqa: E402,F401
import cases_replica_manager  # noqa: E402,F401

from isrlab.model.trace import trace_from_json  # noqa: E402
from isrlab.properties.replay import replay  # noqa: E402

FAILING = HERE / "failing"
README = HERE / "README.md"
TABLE_BEGIN = "<!-- cases table: written by build_traces.py -->"
TABLE_END = "<!-- end of cases table -->"


def outcome(data: dict) -> tuple[bool, list]:
    """(matches its expectation with every check holding, the problems) for one trace's JSON."""
    result = replay(trace_from_json(data), with_changes=False)
    problems = list(result.check_failures)
    if data["expect"] == "pass" and result.violations:
        problems += [f"violation {v.invariant} at step {v.step}" for v in result.violations]
    if data["expect"] == "violation" and data["violated"] not in {v.invariant for v in result.violations}:
        problems.append(f"expected a violation of {data['violated']}")
    return not problems, problems


def dumps(data: dict) -> str:
    """One action and one check per line: diffs stay readable."""
    head = {k: v for k, v in data.items() if k not in ("actions", "checks")}
    text = json.dumps(head, indent=2)[:-2]
    lines = [text + ","]
    lines.append('  "actions": [')
    lines.append(",\n".join("    " + json.dumps(a) for a in data["actions"]))
    lines.append("  ],")
    lines.append('  "checks": [')
    lines.append(",\n".join("    " + json.dumps(c) for c in data["checks"]))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


#: @Test methods per class in Kafka 2.4.0 (207 in all): every one must be in the registry
TEST_CASES = {
    "PartitionTest": 34, "ReplicaManagerTest": 24, "IsrExpirationTest": 4, "HighwatermarkPersistenceTest": 2,
    "LogRecoveryTest": 4, "AbstractFetcherThreadTest": 23, "ReplicaFetcherThreadTest": 13,
    "LeaderEpochFileCacheTest": 37, "ControllerChannelManagerTest": 16, "ControllerIntegrationTest": 26,
    "PartitionLeaderElectionAlgorithmsTest": 13, "UncleanLeaderElectionTest": 6,
    "EpochDrivenReplicationProtocolAcceptanceTest": 5,
}


def check_registry() -> list:
    got: dict = {}
    for name in REGISTRY:
        got[name.split(".")[0]] = got.get(name.split(".")[0], 0) + 1
    return [f"{cls}: {got.get(cls, 0)} cases registered, Kafka 2.4.0 has {n}"
            for cls, n in TEST_CASES.items() if got.get(cls, 0) != n]


def build_all():
    built = {}
    for name, entry in REGISTRY.items():
        if entry[0] != "expressed":
            continue
        c = entry[1]()
        assert c.kafka_case == name, (name, c.kafka_case)
        assert c.checks, f"{name}: no checks"
        built[name] = c
    return built


def table_rows(built, results):
    rows = {cls: [] for cls in SOURCES}
    for name, entry in REGISTRY.items():
        cls, test = name.split(".")
        if entry[0] == "expressed":
            c = built[name]
            ok = results[name][0]
            if c.failure:
                status = f"expressed, FAILS: {c.failure}" if not ok else "expressed, marked failing but PASSES"
                where = f"failing/{name}.json"
            else:
                status = "expressed, passing" if ok else "expressed, BROKEN: " + "; ".join(results[name][1])
                if c.not_checked:
                    status += " (not checked: " + "; ".join(c.not_checked) + ")"
                where = f"{name}.json"
            rows[cls].append((test, status, where))
        elif entry[0] == "missing":
            rows[cls].append((test, f"not expressible: needs {MISSING[entry[1]]}. {entry[2]}", ""))
        else:
            rows[cls].append((test, f"out of scope: {entry[1]}", ""))
    return rows


def counts(built, results):
    n = {"expressed": 0, "failing": 0, "missing": 0, "out": 0}
    by_missing: dict = {}
    by_class: dict = {}
    for name, entry in REGISTRY.items():
        cls = name.split(".")[0]
        k = entry[0]
        if k == "expressed" and built[name].failure:
            k = "failing"
        n[k] += 1
        by_class.setdefault(cls, {"expressed": 0, "failing": 0, "missing": 0, "out": 0})[k] += 1
        if entry[0] == "missing":
            by_missing.setdefault(entry[1], []).append(name)
    return n, by_missing, by_class


def render_tables(built, results) -> str:
    n, by_missing, by_class = counts(built, results)
    in_scope = n["expressed"] + n["failing"] + n["missing"]
    out = [TABLE_BEGIN, ""]
    out.append("### Counts")
    out.append("")
    out.append(f"- test cases in the {len(SOURCES)} classes: {len(REGISTRY)}")
    out.append(f"- in scope (they touch replication): **{in_scope}**")
    partial = sorted(name for name, c in built.items() if c.not_checked and not c.failure)
    out.append(f"- expressed and passing: **{n['expressed']}** ({100 * n['expressed'] / in_scope:.0f}% of in scope); "
               f"{len(partial)} of them leave one of the test's assertions unchecked (named in the table): "
               + ", ".join(partial))
    out.append(f"- expressed, failing (the model disagrees with Kafka's assertion, `failing/`): **{n['failing']}**")
    out.append(f"- not expressible, vocabulary the model lacks: **{n['missing']}**")
    out.append(f"- out of scope (not replication: metrics, request versions, threads, config validation): "
               f"{n['out']}")
    out.append("")
    out.append("| class | in scope | passing | failing | not expressible | out of scope |")
    out.append("|---|---|---|---|---|---|")
    for cls in SOURCES:
        b = by_class.get(cls, {"expressed": 0, "failing": 0, "missing": 0, "out": 0})
        out.append(f"| {cls} | {b['expressed'] + b['failing'] + b['missing']} | {b['expressed']} | "
                   f"{b['failing']} | {b['missing']} | {b['out']} |")
    out.append("")
    out.append("### Not expressible, by the vocabulary they need")
    out.append("")
    out.append("| missing vocabulary | cases | which |")
    out.append("|---|---|---|")
    for cat, names in sorted(by_missing.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append(f"| {MISSING[cat]} | {len(names)} | {', '.join(names)} |")
    out.append("")
    out.append("### Every test case")
    rows = table_rows(built, results)
    for cls, source in SOURCES.items():
        out.append("")
        out.append(f"#### {cls} (`{source}`)")
        out.append("")
        out.append("| test case | status | trace |")
        out.append("|---|---|---|")
        for test, status, where in rows[cls]:
            link = f"[{Path(where).name}]({where})" if where else ""
            out.append(f"| {test} | {status.replace('|', '/')} | {link} |")
    out.append("")
    out.append(TABLE_END)
    return "\n".join(out)


def main(argv) -> int:
    write = "--check" not in argv
    built = build_all()
    results = {}
    bad = []
    for name, c in built.items():
        data = c.to_json()
        ok, problems = outcome(data)
        results[name] = (ok, problems)
        if c.failure and ok:
            bad.append(f"{name}: marked failing ({c.failure}) but replays as expected")
        if not c.failure and not ok:
            bad.append(f"{name}: " + "; ".join(problems))
        if write:
            folder = FAILING if c.failure else HERE
            folder.mkdir(exist_ok=True)
            (folder / f"{name}.json").write_text(dumps(data), encoding="utf-8")
            stale = (HERE if c.failure else FAILING) / f"{name}.json"
            if stale.exists():
                stale.unlink()
    if write:
        known = set(built)
        for folder in (HERE, FAILING):
            for p in folder.glob("*.json"):
                if p.stem not in known:
                    p.unlink()
        text = README.read_text(encoding="utf-8") if README.exists() else TABLE_BEGIN + "\n" + TABLE_END + "\n"
        head, _, rest = text.partition(TABLE_BEGIN)
        _, _, tail = rest.partition(TABLE_END)
        README.write_text(head + render_tables(built, results) + tail, encoding="utf-8")
    bad += check_registry()
    n, by_missing, _ = counts(built, results)
    print(f"{len(built)} traces built: {n['expressed']} passing cases, {n['failing']} failing; "
          f"{n['missing']} not expressible, {n['out']} out of scope")
    for line in bad:
        print("PROBLEM", line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
