"""Ctrl-C during a Spark campaign: one line saying what was kept, exit 130, no py4j traceback, no _temporary left; and
the clean-up after a failed job never hides its error.

Load-independent: the task to interrupt writes its PID to a marker file and holds (isrlab.campaign.hold_for_test),
so the interrupt comes while a task is known to be running.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from isrlab import sparkjob
from isrlab.campaign import CampaignSpec
from test_spark_recovery import _records, _undisturbed, _wait_for

ISRLAB = os.path.join(os.path.dirname(sys.executable), "isrlab")


def _held_campaign(tmp_path, runs: int = 20):
    """A campaign of two shards whose shard 1 holds (its PID in a marker file) once shard 0 has finished and been
    kept: the moment to interrupt it at, known to be inside the fuzz phase."""
    markers, out = tmp_path / "markers", tmp_path / "out"
    markers.mkdir()
    env = dict(os.environ, ISRLAB_TEST_TASK_MARKERS=str(markers), ISRLAB_TEST_HOLD_TASK="kafka-2.4:1")
    proc = subprocess.Popen([ISRLAB, "fuzz", "--master", "local[2]", "--preset", "kafka-2.4", "--engine", "walk",
                             "--shards", "2", "--runs", str(runs), "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    _wait_for(str(markers / "kafka-2.4-1-0.pid"), proc)
    end = time.monotonic() + 300
    while not list(out.glob(f"*/{sparkjob.DONE}/000000-kafka-2.4.json")) and time.monotonic() < end:
        time.sleep(0.1)
    (folder,) = [p for p in out.iterdir() if p.name != "latest"]
    return proc, folder


def _resume(folder) -> dict:
    r = subprocess.run([ISRLAB, "fuzz", "--resume", str(folder), "--json"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "resuming: 1 of 2 shards were done and are kept; running the other 1" in r.stderr
    return json.loads(r.stdout)


def _same_as_undisturbed(folder, kept_started: float) -> None:
    spec = CampaignSpec(presets=("kafka-2.4",), engine="walk", shards=2, runs=20)
    runs, _ = _records(str(folder))
    for task in spec.tasks():
        assert runs[(task[0], task[1])] == _undisturbed(task)   # every column, no run lost or counted twice
    started = {r["shard"]: r["started_unix"] for r in pq.read_table(folder / "shards").to_pylist()}
    assert started[0] == kept_started                           # shard 0 was kept, not run again
    assert not list(folder.rglob("_temporary")) and not (folder / sparkjob.DONE).exists()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_ctrl_c_during_the_fuzz_phase_is_one_line_and_the_campaign_resumes(tmp_path):
    proc, folder = _held_campaign(tmp_path)
    try:
        os.killpg(proc.pid, signal.SIGINT)       # as a terminal's Ctrl-C: the driver, its JVM and the workers
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr and "py4j" not in stderr and "ERROR" not in stderr, stderr[-3000:]
    assert stderr.strip().splitlines()[-1] == (f"isrlab: interrupted: campaign {folder.name}: 1 of 2 shards had "
                                               f"finished and are kept in {folder}; resume with: isrlab fuzz "
                                               f"--resume {folder}")
    assert not list(folder.rglob("_temporary")) and not (folder / "_shards_raw").exists()
    kept = json.loads((folder / sparkjob.DONE / "000000-kafka-2.4.json").read_text())
    s = _resume(folder)
    assert s["runs"] == 20
    _same_as_undisturbed(folder, kept["started_unix"])


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_a_sigkilled_campaign_resumes_with_only_its_unfinished_shards(tmp_path):
    proc, folder = _held_campaign(tmp_path)
    os.killpg(proc.pid, signal.SIGKILL)          # the driver, its JVM and its workers, with no chance to clean up
    proc.communicate()
    assert not (folder / "summary.json").exists()
    kept = json.loads((folder / sparkjob.DONE / "000000-kafka-2.4.json").read_text())
    listed = subprocess.run([ISRLAB, "fuzz", "--resume", str(folder), "--runs", "5"], capture_output=True, text=True)
    assert listed.returncode == 2 and "--resume runs the campaign on its own options" in listed.stderr
    s = _resume(folder)
    assert s["runs"] == 20 and (folder / "summary.json").exists()
    _same_as_undisturbed(folder, kept["started_unix"])
    again = subprocess.run([ISRLAB, "fuzz", "--resume", str(folder)], capture_output=True, text=True)
    assert again.returncode == 2 and "the campaign is complete" in again.stderr


def test_after_ctrl_c_the_finished_shards_are_kept_and_half_written_tables_go(tmp_path):
    root = tmp_path / "c-1"
    (root / "runs" / "_temporary" / "0").mkdir(parents=True)          # a table being written: no _SUCCESS
    (root / "shards").mkdir()
    (root / "shards" / "_SUCCESS").write_text("")                      # a whole one stays
    (root / "_shards_raw" / "_temporary").mkdir(parents=True)
    (root / sparkjob.DONE).mkdir()
    for name in ("000000-kafka-2.4.json", "000001-kafka-2.4.json", ".tmp-x"):
        (root / sparkjob.DONE / name).write_text("{}")
    (root / sparkjob.CAMPAIGN_JSON).write_text("{}")
    line = sparkjob.discard_interrupted(str(tmp_path), "c-1", 3)
    assert line == (f"campaign c-1: 2 of 3 shards had finished and are kept in {root}; resume with: isrlab fuzz "
                    f"--resume {root}")
    assert sorted(p.name for p in root.iterdir()) == [sparkjob.DONE, sparkjob.CAMPAIGN_JSON, "shards"]
    early = tmp_path / "c-2"                                           # stopped before it wrote campaign.json
    (early / "_shards_raw").mkdir(parents=True)
    assert sparkjob.discard_interrupted(str(tmp_path), "c-2", 3) == (
        f"campaign c-2 discarded before its first shard ran; nothing is left of it under {tmp_path}")
    assert not early.exists()
    assert sparkjob.discard_interrupted(str(tmp_path), None) == "before the campaign started; nothing was written"


@pytest.mark.parametrize("edit,problem", [
    (lambda d: d.update(spec=[]), "campaign.json: spec: expected an object, not a list"),
    (lambda d: d["spec"].update(presets=["kafka-9.9"]), "campaign.json: spec: "),
    (lambda d: d["spec"].update(shards=0), "campaign.json: spec/shards: 0 is not within 1 to 10,000"),
    (lambda d: d["spec"].update(runs="20"), "campaign.json: spec/runs: expected an integer or null, not a string"),
    (lambda d: d["spec"].update(colour=1), "campaign.json: spec: unknown field(s) colour"),
    (lambda d: d["spec"].update(engine="quantum"), "campaign.json: spec: unknown engine 'quantum'"),
    (lambda d: d.update(campaign="other"), "campaign.json: campaign 'other' is not this folder's name"),
    (lambda d: d.pop("master"), "campaign.json: top level: no 'master' field"),
])
def test_resume_refuses_a_bad_campaign_json_in_one_line(tmp_path, edit, problem):
    from click.testing import CliRunner

    from isrlab.cli import main

    folder = tmp_path / "c-1"
    folder.mkdir()
    spec = CampaignSpec(presets=("kafka-2.4",), engine="walk", shards=2, runs=20)
    data = {"campaign": "c-1", "spec": spec.to_json(), "master": "local[2,4]", "shrink_budget": 20.0,
            "shrink_candidates": 1, "archive": None}
    edit(data)
    (folder / sparkjob.CAMPAIGN_JSON).write_text(json.dumps(data))
    r = CliRunner().invoke(main, ["fuzz", "--resume", str(folder)])
    assert r.exit_code == 2 and problem in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert "no campaign.json" in CliRunner().invoke(main, ["fuzz", "--resume", str(tmp_path)]).output


def test_stopping_spark_and_keeping_its_log_never_raises(tmp_path):
    class GoneJvm:
        def stop(self):
            raise ConnectionRefusedError("the JVM is gone")

    log = tmp_path / "spark.log"
    log.write_text("the JVM's own lines\n")
    sparkjob.stop_keeping_log(GoneJvm(), str(log), str(tmp_path / "removed-campaign"))   # a folder gone meanwhile
    folder = tmp_path / "campaign"
    folder.mkdir()
    sparkjob.stop_keeping_log(GoneJvm(), str(log), str(folder))
    assert (folder / "spark.log").read_text() == "the JVM's own lines\n"
    (folder / "spark.log").unlink()
    (folder / "spark.log").mkdir()                  # a copy that fails: no exception either
    sparkjob.stop_keeping_log(GoneJvm(), str(log), str(folder))


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_a_failed_job_names_what_its_task_raised_and_keeps_the_jvm_log(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run([ISRLAB, "fuzz", "--master", "local[1]", "--preset", "kafka-2.4", "--engine", "walk",
                           "--shards", "1", "--runs", "2", "--out", str(out),
                           "--conf", "spark.executorEnv.ISRLAB_USER_PRESETS=not json"],   # every attempt fails
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "py4j" not in proc.stderr
    (folder,) = out.iterdir()
    assert proc.stderr.strip().splitlines()[-1] == (f"isrlab: error: the Spark job failed: a task raised "
                                                    f"json.decoder.JSONDecodeError: Expecting value: line 1 column 1 "
                                                    f"(char 0); 0 of 1 shards had finished and are kept: resume with "
                                                    f"isrlab fuzz --resume {folder}")
    # no _shards_raw, no _temporary: the JVM's log, and what --resume needs
    assert sorted(p.name for p in folder.iterdir()) == [sparkjob.DONE, sparkjob.CAMPAIGN_JSON, "spark.log"]


def test_the_reason_of_a_failed_job_is_the_exception_its_task_raised():
    python_side = RuntimeError("An exception was thrown from the Python worker:\nTraceback (most recent call last):\n"
                               '  File "x.py", line 1, in f\n    g()\nValueError: the real reason\n')
    assert sparkjob.failure_reason(python_side) == "a task raised ValueError: the real reason"
    assert sparkjob.failure_reason(RuntimeError("\nJob aborted due to stage failure\n  at x")) == (
        "Job aborted due to stage failure")
    assert sparkjob.failure_reason(RuntimeError()) == "RuntimeError"
