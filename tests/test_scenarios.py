"""Hand-written scenario traces (tests/scenarios/*.json) replayed through the real ``isrlab replay`` CLI.

Each scenario re-expresses a behaviour from Kafka's own tests or KIPs as a trace
with ``checks`` (state facts after N actions).  The replay must end with the
exit code its expectation implies (0 for ``pass``, 1 for ``violation``), match
its expectation, and fail none of its checks.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from isrlab.cli import main
from isrlab.model.trace import schema

pytestmark = pytest.mark.scenario

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
SCENARIOS = sorted(SCENARIO_DIR.glob("*.json"))
MIN_SCENARIOS = 10


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_there_are_enough_scenarios():
    assert len(SCENARIOS) >= MIN_SCENARIOS, (
        f"expected at least {MIN_SCENARIOS} scenario traces in {SCENARIO_DIR}, found {len(SCENARIOS)}")


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_scenario_replays_as_expected(path: Path):
    data = _load(path)
    result = CliRunner().invoke(main, ["replay", str(path), "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    out = json.loads(result.stdout)
    expected_code = 0 if data["expect"] == "pass" else 1
    assert result.exit_code == expected_code, (
        f"exit code {result.exit_code}, expected {expected_code}; violations "
        f"{[v['invariant'] for v in out['violations']]}; check failures {out['check_failures']}")
    assert out["check_failures"] == [], "\n".join(out["check_failures"])
    assert out["matches_expectation"] is True, (
        f"outcome {out['outcome']}, trace expects {data['expect']} {data.get('violated') or ''}; "
        f"violations {[v['invariant'] for v in out['violations']]}")
    if data["expect"] == "violation":
        assert data["violated"] in {v["invariant"] for v in out["violations"]}
    else:
        assert out["violations"] == []
    assert len(out["steps"]) == len(data["actions"])


def test_every_scenario_is_schema_valid_and_has_checks():
    assert SCENARIOS, f"no scenario traces in {SCENARIO_DIR}"
    validator = jsonschema.Draft202012Validator(schema())
    problems = []
    for path in SCENARIOS:
        data = _load(path)
        errors = [f"{'/'.join(map(str, e.absolute_path)) or 'top level'}: {e.message}"
                  for e in validator.iter_errors(data)]
        if errors:
            problems.append(f"{path.name}: {errors[0]}")
        if not data.get("checks"):
            problems.append(f"{path.name}: no checks")
        elif not all(c.get("why") for c in data["checks"]):
            problems.append(f"{path.name}: a check without a 'why'")
        if data.get("provenance", {}).get("engine") != "hand-written":
            problems.append(f"{path.name}: provenance.engine is not 'hand-written'")
        if not data.get("provenance", {}).get("source"):
            problems.append(f"{path.name}: provenance.source is missing")
    assert not problems, "\n".join(problems)
