"""Kafka 2.4.0's own replication test cases, re-expressed as traces (tests/kafka/), replayed in process.

Each ``tests/kafka/Class.testName.json`` states, as ``checks``, what Kafka's test asserts; it must
replay to its expected outcome with every check holding.  ``tests/kafka/failing/`` holds the cases
whose checks the model does not meet (the reason is in ``provenance.model_disagrees``): they are
replayed too and reported as expected failures, so that a model change that makes one pass shows up
(XPASS) and the trace can move back.  ``tests/kafka/README.md`` lists every test case of the classes
and why the others are not expressed; ``tests/kafka/build_traces.py`` writes both.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from isrlab.model.trace import schema, trace_from_json
from isrlab.properties.replay import replay

pytestmark = pytest.mark.scenario

KAFKA_DIR = Path(__file__).resolve().parent / "kafka"
PASSING = sorted(KAFKA_DIR.glob("*.json"))
FAILING = sorted((KAFKA_DIR / "failing").glob("*.json"))
MIN_PASSING = 163


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _problems(data: dict) -> list:
    """Why a trace does not replay as it says (an empty list when it does)."""
    result = replay(trace_from_json(data), with_changes=False)
    problems = list(result.check_failures)
    seen = {v.invariant for v in result.violations}
    if data["expect"] == "pass" and seen:
        problems += [f"violation of {v.invariant} at step {v.step}: {v.facts}" for v in result.violations]
    if data["expect"] == "violation" and data["violated"] not in seen:
        problems.append(f"expected a violation of {data['violated']}, got {sorted(seen) or 'none'}")
    return problems


def test_there_are_enough_kafka_cases():
    assert len(PASSING) >= MIN_PASSING, f"{len(PASSING)} passing Kafka cases in {KAFKA_DIR}"


@pytest.mark.parametrize("path", PASSING, ids=[p.stem for p in PASSING])
def test_kafka_case_holds(path: Path):
    problems = _problems(_load(path))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", FAILING, ids=[p.stem for p in FAILING])
def test_kafka_case_the_model_fails(path: Path):
    data = _load(path)
    problems = _problems(data)
    if problems:
        pytest.xfail(data["provenance"]["model_disagrees"])
    # the model now meets Kafka's assertions: move the trace out of failing/ (build_traces.py)


def test_kafka_cases_are_well_formed_and_listed():
    validator = jsonschema.Draft202012Validator(schema())
    readme = (KAFKA_DIR / "README.md").read_text(encoding="utf-8")
    problems = []
    for path in PASSING + FAILING:
        data = _load(path)
        errors = [e.message for e in validator.iter_errors(data)]
        if errors:
            problems.append(f"{path.name}: {errors[0]}")
        prov = data.get("provenance", {})
        if prov.get("kafka_test") != path.stem:
            problems.append(f"{path.name}: provenance.kafka_test is {prov.get('kafka_test')!r}")
        if prov.get("engine") != "hand-written" or not prov.get("source"):
            problems.append(f"{path.name}: provenance must say hand-written and cite its Kafka source")
        if path in FAILING and not prov.get("model_disagrees"):
            problems.append(f"{path.name}: a failing case must say why (provenance.model_disagrees)")
        if not data.get("checks") or not all(c.get("why") for c in data["checks"]):
            problems.append(f"{path.name}: no checks, or a check without a 'why'")
        if f"| {path.stem.split('.', 1)[1]} |" not in readme:
            problems.append(f"{path.name}: not in tests/kafka/README.md's table")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("suite", ["kafka", "kafka_kraft"])
def test_committed_traces_are_what_the_cases_build(suite: str):
    """The traces and README tables in tests/<suite>/ are what its case builders write (build_traces.py --check):
    a case changed without rebuilding, or a trace edited by hand, fails here."""
    script = Path(__file__).resolve().parent / suite / "build_traces.py"
    run = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
