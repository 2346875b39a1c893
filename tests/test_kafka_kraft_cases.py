"""Kafka 3.7.0's own tests of the KRaft replication rules, re-expressed as traces (tests/kafka_kraft/), replayed in
process.

Each ``tests/kafka_kraft/Class.testName.json`` states, as ``checks``, what Kafka's test asserts (PartitionTest's
AlterPartition, fencing and min-ISR cases; PartitionChangeBuilderTest's and ReplicationControlManagerTest's ISR, ELR
and election cases); it must replay with every check holding and no invariant broken.  ``tests/kafka_kraft/failing/``
holds the cases whose checks the model does not meet (the reason is in ``provenance.model_disagrees``): they are
replayed too and reported as expected failures, so that a model change that makes one pass shows up (XPASS) and the
trace can move back.  ``tests/kafka_kraft/README.md`` lists every test case of the three classes and why the others are
not expressed; ``tests/kafka_kraft/build_traces.py`` writes both.
"""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
from test_kafka_cases import _load, _problems   # the replay of a case; every KRaft case expects "pass"

from isrlab.model.config import preset
from isrlab.model.trace import schema, trace_from_json

pytestmark = pytest.mark.scenario

KRAFT_DIR = Path(__file__).resolve().parent / "kafka_kraft"
PASSING = sorted(KRAFT_DIR.glob("*.json"))
FAILING = sorted((KRAFT_DIR / "failing").glob("*.json"))
MIN_PASSING = 39
CLASSES = ("PartitionTest", "PartitionChangeBuilderTest", "ReplicationControlManagerTest")




def test_there_are_enough_kafka_kraft_cases():
    assert len(PASSING) >= MIN_PASSING, f"{len(PASSING)} passing Kafka 3.7 cases in {KRAFT_DIR}"


@pytest.mark.parametrize("path", PASSING, ids=[p.stem for p in PASSING])
def test_kafka_kraft_case_holds(path: Path):
    problems = _problems(_load(path))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", FAILING, ids=[p.stem for p in FAILING])
def test_kafka_kraft_case_the_model_fails(path: Path):
    data = _load(path)
    problems = _problems(data)
    if problems:
        pytest.xfail(data["provenance"]["model_disagrees"])
    # the model now meets Kafka's assertions: move the trace out of failing/ (build_traces.py)


def test_kafka_kraft_cases_are_well_formed_and_listed():
    validator = jsonschema.Draft202012Validator(schema())
    readme = (KRAFT_DIR / "README.md").read_text(encoding="utf-8")
    problems = []
    for path in PASSING + FAILING:
        data = _load(path)
        errors = [e.message for e in validator.iter_errors(data)]
        if errors:
            problems.append(f"{path.name}: {errors[0]}")
        prov = data.get("provenance", {})
        if prov.get("kafka_test") != path.stem or path.stem.split(".")[0] not in CLASSES:
            problems.append(f"{path.name}: provenance.kafka_test is {prov.get('kafka_test')!r}")
        if prov.get("engine") != "hand-written" or prov.get("kafka_tag") != "3.7.0" or not prov.get("source"):
            problems.append(f"{path.name}: provenance must say hand-written and cite its Kafka 3.7.0 source")
        if path in FAILING and not prov.get("model_disagrees"):
            problems.append(f"{path.name}: a failing case must say why (provenance.model_disagrees)")
        if not data.get("checks") or not all(c.get("why") for c in data["checks"]):
            problems.append(f"{path.name}: no checks, or a check without a 'why'")
        if data.get("start") is not None:
            problems.append(f"{path.name}: KRaft traces start from the formed cluster (no start state)")
        if data.get("expect") != "pass":
            problems.append(f"{path.name}: a KRaft case expects every invariant to hold (expect: pass)")
        if f"| {path.stem.split('.', 1)[1]} |" not in readme:
            problems.append(f"{path.name}: not in tests/kafka_kraft/README.md's table")
    assert not problems, "\n".join(problems)


def test_kafka_kraft_cases_run_a_kraft_preset_with_small_variations():
    """Each trace's configuration is its preset's, with at most the cluster's shape (its brokers' log directories
    too), min ISR, unclean election (and whether the controller reads it: 3.7.0's does not, ``kafka_12670``), the
    admin's form of creation, the metadata version and the engines' budgets changed."""
    allowed = {"n_brokers", "n_partitions", "replication_factor", "min_insync_replicas", "unclean_leader_election",
               "max_records", "max_crashes", "max_session_expirations", "max_preferred_elections",
               "max_reassignments", "initial_partitions", "max_partition_creations", "max_topic_deletions",
               "max_alter_isr_failures", "max_forged_alter_partitions", "max_expired_heartbeats", "kafka_12670",
               "max_config_changes", "placed_creations", "log_dirs", "metadata_version", "max_log_dir_failures"}
    problems = []
    for path in PASSING + FAILING:
        data = _load(path)
        cfg = trace_from_json(data).config
        base = preset(data["preset"]).config
        if not base.kip_500:
            problems.append(f"{path.name}: {data['preset']} is not a KRaft preset")
        changed = {k for k, v in cfg.to_json().items() if base.to_json()[k] != v}
        if changed - allowed:
            problems.append(f"{path.name}: changes {sorted(changed - allowed)} from {data['preset']}")
    assert not problems, "\n".join(problems)
