"""Ctrl-C during a Spark campaign: one line saying what was kept, exit 130, no py4j traceback, no _temporary left; and
the clean-up after a failed job never hides its error.

Load-independent: the task to interrupt writes its PID to a marker file and holds (isrlab.campaign.hold_for_test),
so the interrupt comes while a task is known to be running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from isrlab import sparkjob
from test_spark_recovery import _wait_for

ISRLAB = os.path.join(os.path.dirname(sys.executable), "isrlab")


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_ctrl_c_during_the_fuzz_phase_is_one_line_and_leaves_nothing(tmp_path):
    markers, out = tmp_path / "markers", tmp_path / "out"
    markers.mkdir()
    env = dict(os.environ, ISRLAB_TEST_TASK_MARKERS=str(markers), ISRLAB_TEST_HOLD_TASK="kafka-2.4:1")
    proc = subprocess.Popen([ISRLAB, "fuzz", "--master", "local[2]", "--preset", "kafka-2.4", "--engine", "walk",
                             "--shards", "2", "--runs", "20", "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        _wait_for(str(markers / "kafka-2.4-1-0.pid"), proc)
        os.killpg(proc.pid, signal.SIGINT)       # as a terminal's Ctrl-C: the driver, its JVM and the workers
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr and "py4j" not in stderr and "ERROR" not in stderr, stderr[-3000:]
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("isrlab: interrupted: campaign ") and " discarded: " in last
    assert "rerun the same command" in last
    assert not [str(p) for p in out.rglob("*")]   # no campaign folder, no _shards_raw/_temporary


def test_after_ctrl_c_the_whole_tables_are_kept_and_a_half_written_campaign_goes(tmp_path):
    whole = tmp_path / "c-whole"
    for table in ("runs", "shards"):
        (whole / table).mkdir(parents=True)
        (whole / table / "_SUCCESS").write_text("")
    (whole / "_shards_raw" / "_temporary" / "0").mkdir(parents=True)
    line = sparkjob.discard_interrupted(str(tmp_path), "c-whole")
    assert line == (f"campaign c-whole stopped after its fuzz phase: the runs and shards tables are kept in {whole}, "
                    f"without a summary or counterexamples (rerun the same command for them)")
    assert sorted(p.name for p in whole.iterdir()) == ["runs", "shards"]
    half = tmp_path / "c-half"
    (half / "_shards_raw" / "_temporary" / "0").mkdir(parents=True)
    (half / "runs").mkdir()
    (half / "spark.log").write_text("")
    assert " discarded: " in sparkjob.discard_interrupted(str(tmp_path), "c-half")
    assert not half.exists() and whole.exists()
    assert sparkjob.discard_interrupted(str(tmp_path), None) == "before the campaign started; nothing was written"


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
    assert proc.stderr.strip().splitlines()[-1] == ("isrlab: error: the Spark job failed: a task raised "
                                                    "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 "
                                                    "(char 0)")
    (folder,) = out.iterdir()
    assert sorted(p.name for p in folder.iterdir()) == ["spark.log"]   # no _shards_raw, no _temporary


def test_the_reason_of_a_failed_job_is_the_exception_its_task_raised():
    python_side = RuntimeError("An exception was thrown from the Python worker:\nTraceback (most recent call last):\n"
                               '  File "x.py", line 1, in f\n    g()\nValueError: the real reason\n')
    assert sparkjob.failure_reason(python_side) == "a task raised ValueError: the real reason"
    assert sparkjob.failure_reason(RuntimeError("\nJob aborted due to stage failure\n  at x")) == (
        "Job aborted due to stage failure")
    assert sparkjob.failure_reason(RuntimeError()) == "RuntimeError"
