"""Write tests/kafka_kraft/*.json, tests/kafka_kraft/failing/*.json and the tables of tests/kafka_kraft/README.md.

Run from the repository root:   .venv/bin/python tests/kafka_kraft/build_traces.py [--check]

Every case registered in the cases_*.py modules is built (its actions applied to the model as they are written, so an
action the model does not enable fails the build), written as ``Class.testName.json`` (in ``failing/`` when the case
is marked ``fails``), and replayed: the script reports any passing case whose checks fail and any failing case that
now passes.  The README's tables and counts are rewritten from the registry.  ``--check`` builds and replays without
writing anything.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from kraftcase import KAFKA_CASES, MISSING, REGISTRY, SOURCES  # noqa: E402

import cases_partition  # noqa: E402,F401
import cases_builder  # noqa: E402,F401
import cases_replication_control  # noqa: E402,F401

from isrlab.model.trace import trace_from_json  # noqa: E402
from isrlab.properties.replay import replay  # noqa: E402

FAILING = HERE / "failing"
README = HERE / "README.md"
TABLE_BEGIN = "<!-- cases table: written by build_traces.py -->"
TABLE_END = "<!-- end of cases table -->"

def outcome(data: dict) -> tuple[bool, list]:
    """(every check holds and no invariant breaks, the problems) for one trace's JSON."""
    result = replay(trace_from_json(data), with_changes=False)
    problems = list(result.check_failures)
    problems += [f"violation {v.invariant} at step {v.step}" for v in result.violations]
    return not problems, problems


def dumps(data: dict) -> str:
    """One action and one check per line: diffs stay readable."""
    head = {k: v for k, v in data.items() if k not in ("actions", "checks")}
    lines = [json.dumps(head, indent=2)[:-2] + ","]
    lines.append('  "actions": [')
    lines.append(",\n".join("    " + json.dumps(a) for a in data["actions"]))
    lines.append("  ],")
    lines.append('  "checks": [')
    lines.append(",\n".join("    " + json.dumps(c) for c in data["checks"]))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def ordered() -> list:
    """Every Kafka test case, class by class, in the order of the test files."""
    return [f"{cls}.{test}" for cls, tests in KAFKA_CASES.items() for test in tests]


def check_registry() -> list:
    want = ordered()
    problems = [f"{name}: a test case of Kafka 3.7.0 not in the registry" for name in want if name not in REGISTRY]
    problems += [f"{name}: registered, not a test case of Kafka 3.7.0" for name in REGISTRY if name not in want]
    if len(set(want)) != len(want):
        problems.append("a test case name is listed twice")
    return problems


def build_all() -> dict:
    built = {}
    for name, entry in REGISTRY.items():
        if entry[0] != "expressed":
            continue
        c = entry[1]()
        assert c.kafka_case == name, (name, c.kafka_case)
        assert c.checks, f"{name}: no checks"
        built[name] = c
    return built


def kind(name: str, built: dict) -> str:
    entry = REGISTRY[name]
    if entry[0] == "expressed":
        return "failing" if built[name].failure else "expressed"
    return entry[0]


def counts(built: dict):
    n = {"expressed": 0, "failing": 0, "missing": 0, "out": 0}
    by_missing: dict = {}
    by_class: dict = {}
    for name, entry in REGISTRY.items():
        k = kind(name, built)
        n[k] += 1
        by_class.setdefault(name.split(".")[0], {"expressed": 0, "failing": 0, "missing": 0, "out": 0})[k] += 1
        if entry[0] == "missing":
            by_missing.setdefault(entry[1], []).append(name)
    return n, by_missing, by_class


def status_of(name: str, built: dict, results: dict) -> tuple[str, str]:
    entry = REGISTRY[name]
    if entry[0] == "missing":
        return f"not expressible: needs {MISSING[entry[1]]}. {entry[2]}", ""
    if entry[0] == "out":
        return f"out of scope: {entry[1]}", ""
    c = built[name]
    ok, problems = results[name]
    if c.failure:
        status = f"expressed, FAILS: {c.failure}" if not ok else "expressed, marked failing but PASSES"
        return status, f"failing/{name}.json"
    status = "expressed, passing" if ok else "expressed, BROKEN: " + "; ".join(problems)
    if c.not_checked:
        status += " (not checked: " + "; ".join(c.not_checked) + ")"
    return status, f"{name}.json"


def render_tables(built: dict, results: dict) -> str:
    n, by_missing, by_class = counts(built)
    in_scope = n["expressed"] + n["failing"] + n["missing"]
    partial = sorted(name for name, c in built.items() if c.not_checked and not c.failure)
    out = [TABLE_BEGIN, "", "### Counts", ""]
    out.append(f"- test cases in the {len(SOURCES)} classes: {len(REGISTRY)}")
    out.append(f"- in scope (about this item's rules; expressed or not): **{in_scope}**")
    out.append(f"- expressed and passing: **{n['expressed']}**; {len(partial)} of them leave some of the test's "
               f"assertions unchecked (named in the table)")
    out.append(f"- expressed, failing (the model disagrees with Kafka's assertion, `failing/`): **{n['failing']}**")
    out.append(f"- not expressible, vocabulary the model lacks: **{n['missing']}**")
    outside = sum(1 for e in REGISTRY.values() if e[0] == "out" and e[1].startswith("outside this item"))
    out.append(f"- out of scope: {n['out']} ({outside} replication rules outside this item, {n['out'] - outside} "
               f"not replication: admin APIs, metrics, listeners, log directories, configuration)")
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
    for cls, source in SOURCES.items():
        out.append("")
        out.append(f"#### {cls} (`{source}`)")
        out.append("")
        out.append("| test case | status | trace |")
        out.append("|---|---|---|")
        for name in ordered():
            if name.split(".")[0] != cls or name not in REGISTRY:
                continue
            status, where = status_of(name, built, results)
            link = f"[{Path(where).name}]({where})" if where else ""
            out.append(f"| {name.split('.', 1)[1]} | {status.replace('|', '/')} | {link} |")
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
            bad.append(f"{name}: marked failing ({c.failure}) but replays with every check holding")
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
        for folder in (HERE, FAILING):
            for p in folder.glob("*.json"):
                if p.stem not in built:
                    p.unlink()
        text = README.read_text(encoding="utf-8") if README.exists() else TABLE_BEGIN + "\n" + TABLE_END + "\n"
        head, _, rest = text.partition(TABLE_BEGIN)
        _, _, tail = rest.partition(TABLE_END)
        README.write_text(head + render_tables(built, results) + tail, encoding="utf-8")
    bad += check_registry()
    n, _, _ = counts(built)
    print(f"{len(built)} traces built: {n['expressed']} passing cases, {n['failing']} failing; "
          f"{n['missing']} not expressible, {n['out']} out of scope")
    for line in bad:
        print("PROBLEM", line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
