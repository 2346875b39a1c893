"""Fuzz campaigns on Spark: embedded local[2], the isrlab command, and a real standalone cluster.

All Spark tests share one xdist group (``./run tests`` uses ``--dist loadgroup``), so they run in one
pytest worker, one after the other: one local[2] session for the in-process tests, and each command
line or cluster test in its own JVM.  A 2-core machine cannot run two Spark JVMs side by side well.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile

import pytest

from isrlab.campaign import CampaignSpec, run_seed, run_shard
from isrlab.model.config import preset
from isrlab.model.trace import load_trace
from isrlab.properties.invariants import LIVENESS, SAFETY
from isrlab.properties.replay import replay

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

ISRLAB = os.path.join(os.path.dirname(sys.executable), "isrlab")
RUN_KEYS = ("run_index", "seed", "steps", "kind_counts", "error_codes", "witnesses", "violation", "violations")


@pytest.fixture(scope="session")  # one JVM for the whole run, even when other modules' tests interleave
def spark(tmp_path_factory):
    from isrlab import sparkjob

    ship = tmp_path_factory.mktemp("ship")
    s = sparkjob.session("local[2]", "isrlab-tests", {
        "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("warehouse")),
        "spark.local.dir": str(tmp_path_factory.mktemp("spark-local")),
        "spark.default.parallelism": "2"}, str(ship))
    yield s
    s.stop()


def _runs_by_shard(spark, root: str) -> dict:
    """{(preset, shard): [run dicts in run order]} read back from a campaign's runs table."""
    out: dict = {}
    for row in spark.read.parquet(os.path.join(root, "runs")).collect():
        d = row.asDict()
        d["kind_counts"] = dict(d["kind_counts"])
        d["violations"] = [v.asDict() for v in d["violations"]]
        out.setdefault((d["preset"], d["shard"]), []).append({k: d[k] for k in RUN_KEYS})
    return {k: sorted(v, key=lambda r: r["run_index"]) for k, v in out.items()}


def _expected_runs(spec: CampaignSpec, task: tuple) -> list:
    """An undisturbed, Spark-free computation of one task's run records."""
    return [{k: r[k] for k in RUN_KEYS} for r in run_shard(task)["runs"]]


# --------------------------------------------------------------------------- embedded local[2], in process
def test_campaign_on_local2_writes_tables_equal_to_the_shards_run_without_spark(spark, tmp_path):
    from isrlab import sparkjob

    # about 0.7% of no-kafka-7128's plain walks break isr_entry_condition: 1001 runs find it 7 times (301 runs
    # found it once, and none after a change to the swarm policy moved every seed's walk)
    spec = CampaignSpec(presets=("kafka-2.4", "no-kafka-7128"), engine="walk", shards=2, runs=1001)
    out, archive = str(tmp_path / "out"), str(tmp_path / "cx")
    res = sparkjob.run_campaign(spark, spec, out, archive, log=lambda m: None)
    s = res.summary
    root = os.path.join(out, spec.campaign_id())
    assert s["runs"] == 2002 and s["tasks"] == 4
    assert sorted(os.listdir(root)) == ["runs", "shards", "summary.json"]  # the raw table is gone
    assert sorted(d for d in os.listdir(os.path.join(root, "runs")) if d.startswith("preset=")) == [
        "preset=kafka-2.4", "preset=no-kafka-7128"]
    got = _runs_by_shard(spark, root)
    for task in spec.tasks():
        preset_name, shard, _ = task
        runs = got[(preset_name, shard)]
        # shard 0 does 501 runs and shard 1 500: every seed once, in order, derived from (campaign, shard, run)
        assert [r["run_index"] for r in runs] == list(range(spec.runs_for(shard)))
        assert [r["seed"] for r in runs] == [run_seed(0, shard, j) for j in range(spec.runs_for(shard))]
        assert runs == _expected_runs(spec, task)
    verdicts = {p["preset"]: p for p in s["presets"]}
    assert verdicts["kafka-2.4"]["verdict"] == "as expected" and verdicts["kafka-2.4"]["violating_runs"] == 0
    assert verdicts["no-kafka-7128"]["violated"] == ["isr_entry_condition"] and s["as_expected"]
    assert verdicts["no-kafka-7128"]["found"] == ["KAFKA-7128"] and not verdicts["no-kafka-7128"]["unexpected"]
    assert sum(e["runs"] for e in s["executors"]) == 2002 and all(e["steps_per_second"] > 0 for e in s["executors"])
    shard_rows = spark.read.parquet(os.path.join(root, "shards")).collect()
    assert len(shard_rows) == 4 and all(r["attempt"] == 0 for r in shard_rows)
    assert all(set(r["invariants"]) == {i.name for i in SAFETY} | {lv.name for lv in LIVENESS} for r in shard_rows)
    assert {"Produce", "FetchRequest", "Tick"} <= set(s["action_kinds_covered"])
    assert "NOT_LEADER_FOR_PARTITION" in s["error_codes_covered"]

    # one distinct counterexample per (preset, invariant), shrunk, archived, replaying to the violation
    (cx,) = s["counterexamples"]
    assert cx["preset"] == "no-kafka-7128" and cx["newly_archived"] and cx["shrunk_length"] <= cx["original_length"]
    trace = load_trace(cx["file"])
    assert trace.violated == "isr_entry_condition" and trace.provenance["campaign"] == spec.campaign_id()
    assert any(v.invariant == "isr_entry_condition" for v in replay(trace).violations)
    assert trace.attribution["bugs"] == ["KAFKA-7128"]

    # the same campaign again: a folder of its own, the first one untouched, the counterexample not archived twice
    again = sparkjob.run_campaign(spark, spec, out, archive, log=lambda m: None)
    assert again.summary["campaign"] == spec.campaign_id() + "-2"
    assert again.summary["runs"] == 2002 and spark.read.parquet(os.path.join(root, "runs")).count() == 2002
    assert sorted(os.listdir(root)) == ["runs", "shards", "summary.json"]
    assert not again.summary["counterexamples"][0]["newly_archived"] and len(os.listdir(archive)) == 1


def test_a_kept_shard_streams_its_runs_and_notes_its_progress(spark, tmp_path):
    """kept_shard, called here as an executor calls it: its runs as JSON lines equal run_shard's, its record without
    runs, and a last progress note saying the shard ended with every run done."""
    from isrlab import sparkjob

    spec = CampaignSpec(presets=("no-kafka-7128",), engine="walk", shards=2, runs=301)
    task = spec.tasks()[1]
    counters = tuple(spark.sparkContext.accumulator(0) for _ in range(3))
    assert sparkjob.kept_shard(counters, str(tmp_path), task) == 1
    stem = tmp_path / "000001-no-kafka-7128"
    lines = [json.loads(ln) for ln in stem.with_suffix(".runs").read_text().splitlines()]
    assert {(r.pop("preset"), r.pop("shard"), r.pop("engine")) for r in lines} == {("no-kafka-7128", 1, "walk")}
    expected = _expected_runs(spec, task)
    assert lines == expected and len(expected) == 150
    record = json.loads(stem.with_suffix(".json").read_text())
    assert "runs" not in record and record["runs_done"] == 150 and record["attempt"] == 0
    (note,) = sparkjob.read_notes(str(tmp_path)).values()
    assert note["ended"] and note["runs"] == 150 and note["violating"] == sum(bool(r["violations"]) for r in lines)
    assert [a.value for a in counters] == [150, sum(r["steps"] for r in lines), note["violating"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"000001-no-kafka-7128{s}" for s in (".json", ".progress",
                                                                                                ".runs")]


def test_the_progress_line_counts_the_runs_of_shards_still_running(spark, tmp_path):
    """The driver's side of the notes: two shards noted mid-run (no task ended) give the runs so far of all, their
    steps/s and an ETA at the rate of runs; with no run yet the ETA is unknown, not 0:00."""
    import io

    from isrlab import sparkjob
    from isrlab.console import ProgressLine

    for name, runs in (("000000-kafka-2.4", 1000), ("000001-kafka-2.4", 1500)):
        (tmp_path / f"{name}{sparkjob.NOTE_SUFFIX}").write_text(json.dumps(
            {"runs": runs, "steps": 5 * runs, "violating": 1, "seconds": 9.0, "attempt": 0, "ended": False}))
    out = io.StringIO()
    line = ProgressLine("c: fuzz", 2, "tasks", plain=True, every=0.0, stream=out)
    progress = sparkjob.Progress(spark.sparkContext, line, eta=sparkjob.rate_eta, notes=str(tmp_path),
                                 runs_total=10_000)
    progress.show(0, 2, 0)
    text = out.getvalue()
    assert re.fullmatch(r"c: fuzz: 0/2 tasks, 2 running, 2,500/10,000 runs, [\d,]+ steps/s, 2 violating runs, "
                        r"0:\d\d, ETA \d+:\d\d\n", text), text
    for note in tmp_path.iterdir():
        note.unlink()
    progress.show(0, 2, 0)
    assert out.getvalue()[len(text):].endswith(", ETA unknown\n")


def test_hypothesis_engine_runs_inside_executors(spark, tmp_path):
    from isrlab import sparkjob

    spec = CampaignSpec(presets=("kafka-2.4",), engine="hypothesis", shards=2, runs=2, max_steps=20)
    s = sparkjob.run_campaign(spark, spec, str(tmp_path / "out"), str(tmp_path / "cx"), log=lambda m: None).summary
    assert s["runs"] == 2 and s["violations"] == [] and s["presets"][0]["steps"] > 2 * 100
    assert "Produce" in s["action_kinds_covered"]


def test_scopes_engine_runs_inside_executors_and_archives_in_the_scopes_configuration(spark, tmp_path):
    """Each shard searches the ladder in its own seed's order; its tables equal the shards run without Spark, and the
    counterexample is shrunk, attributed and archived in the configuration of the scope it was met in."""
    from isrlab import sparkjob

    spec = CampaignSpec(presets=("no-kafka-13916",), engine="scopes", shards=2, runs=2)
    s = sparkjob.run_campaign(spark, spec, str(tmp_path / "out"), str(tmp_path / "cx"), log=lambda m: None).summary
    got = _runs_by_shard(spark, s["output"])
    for task in spec.tasks():
        assert got[(task[0], task[1])] == _expected_runs(spec, task)
    assert s["presets"][0]["verdict"] == "as expected" and s["presets"][0]["found"] == ["KAFKA-13916"]
    (cx,) = s["counterexamples"]
    trace = load_trace(cx["file"])
    assert trace.provenance["scope"] == cx["scope"] and cx["scope"]["brokers"] == trace.config.n_brokers == 2
    assert trace.provenance["swarm"] is None
    assert any(v.invariant == cx["invariant"] for v in replay(trace).violations)
    assert trace.attribution["bugs"] == ["KAFKA-13916"]


def test_budget_campaign_stops_on_time_and_names_every_seed(spark, tmp_path):
    from isrlab import sparkjob

    spec = CampaignSpec(presets=("kafka-2.4",), engine="guided", shards=2, shard_budget_s=1.5, extensions=50)
    s = sparkjob.run_campaign(spark, spec, str(tmp_path / "out"), str(tmp_path / "cx"), log=lambda m: None).summary
    assert s["runs"] >= 2
    got = _runs_by_shard(spark, s["output"])
    for (_, shard), runs in got.items():
        assert [r["seed"] for r in runs] == [run_seed(0, shard, j) for j in range(len(runs))]


def test_code_zip_is_self_sufficient_on_a_bare_interpreter(tmp_path):
    """Executors need only Python and the zip: run a shard from it with site-packages switched off (-S)."""
    from isrlab.sparkjob import package_zip

    path = package_zip(str(tmp_path))
    names = zipfile.ZipFile(path).namelist()
    assert {"isrlab/campaign.py", "isrlab/model/step.py", "isrlab/properties/walker.py",
            "isrlab/trace.schema.json"} <= set(names)
    task = CampaignSpec(presets=("kafka-2.4",), engine="walk", shards=1, runs=3).tasks()[0]
    code = (f"import sys, json; sys.path.insert(0, {path!r}); import isrlab.campaign as c; "
            f"r = c.run_shard({task!r}); print(json.dumps([c.__file__, r['runs_done']]))")
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    where, runs = json.loads(out.stdout)
    assert where.startswith(path) and runs == 3


# --------------------------------------------------------------------------- the command line, own JVM
def test_fuzz_command_on_local2_checks_expectations(tmp_path):
    # guided runs: KAFKA-7128 takes one run in a few (a random walk meets it in about one run in 200)
    args = [ISRLAB, "fuzz", "--master", "local[2]", "--preset", "kafka-2.4,kafka-0.11", "--engine", "guided",
            "--runs", "8", "--extensions", "600", "--out", str(tmp_path / "out"), "--archive", str(tmp_path / "cx"),
            "--json"]
    r = subprocess.run(args + ["--expected"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    s = json.loads(r.stdout)
    assert [p["verdict"] for p in s["presets"]] == ["as expected", "as expected"] and s["runs"] == 16
    assert s["presets"][1]["found"] == ["KAFKA-7128"] and not s["presets"][1]["unexpected"]
    assert re.search(r"campaign [\w-]*seed0-\w+: fuzz: 4/4 tasks, 16/16 runs, [\d,]+ steps/s, \d+ violating runs, ",
                     r.stderr), "no closing progress line of the fuzz phase"
    assert os.path.exists(os.path.join(s["output"], "summary.json"))
    # one archived counterexample per invariant kafka-0.11 broke (it breaks several), none for kafka-2.4
    broke = [re.fullmatch(r"[\d-]+-kafka-0\.11-(\w+)-[0-9a-f]{12}\.json", f) for f in os.listdir(tmp_path / "cx")]
    assert all(broke), os.listdir(tmp_path / "cx")
    names = [m.group(1) for m in broke]
    k011 = preset("kafka-0.11")
    assert set(names) <= set(k011.breaks)
    for c in s["counterexamples"]:   # each attributed by replaying it with its bugs' fixes
        assert c["attribution"]["bugs"] and c["kind"] in ("found", "known"), c["attributed"]


def test_fuzz_command_bad_master_is_a_one_line_usage_error(tmp_path):
    r = subprocess.run([ISRLAB, "fuzz", "--master", "nonsense://x", "--runs", "1", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert re.search(r"^isrlab: error: cannot start Spark on 'nonsense://x'", r.stderr, re.M)


# --------------------------------------------------------------------------- a standalone cluster
def test_standalone_master_started_again_when_its_ui_port_is_taken(tmp_path, monkeypatch):
    """The UI port picked for the master is held by another HTTP server (answering HTML, not JSON).

    The master does not drift to another port (spark.port.maxRetries=0): it exits, and the cluster starts
    it again on new ports, which the non-JSON answer in the meantime does not disturb.
    """
    import http.server
    import threading

    from isrlab import standalone

    foreign = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=foreign.serve_forever, daemon=True).start()
    taken, real, calls = foreign.server_address[1], standalone.free_port, []

    def free_port():
        calls.append(1)
        return taken if len(calls) == 2 else real()  # the first master's UI port

    monkeypatch.setattr(standalone, "free_port", free_port)
    try:
        with standalone.StandaloneCluster(str(tmp_path / "cluster"), workers=1) as cluster:
            assert cluster.ui_port != taken
            assert cluster.status()["status"] == "ALIVE" and cluster.status()["aliveworkers"] == 1
            master = cluster.master
        assert master.poll() is not None  # stopped with the cluster
        assert (tmp_path / "cluster" / "master-1.log").exists()
    finally:
        foreign.shutdown()
        foreign.server_close()

