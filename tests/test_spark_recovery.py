"""A lost task changes no record: a Python worker killed by its PID on the default embedded master, a
standalone worker killed under its running task, and a standalone worker killed mid-campaign.

Load-independent: the task to kill writes its PID to a marker file and holds (isrlab.campaign.hold_for_test),
so the test kills a task it knows is running; it never waits to see two tasks running at once.  The worker killed
mid-campaign dies once a task is seen running, whatever it holds then: the outcome checked holds at any moment.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pyarrow.dataset as ds
import pytest

from isrlab.campaign import CampaignSpec, run_shard

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

ISRLAB = os.path.join(os.path.dirname(sys.executable), "isrlab")
RUN_KEYS = ("run_index", "seed", "steps", "kind_counts", "error_codes", "witnesses", "violation", "violations")


def _records(root: str) -> tuple[dict, dict]:
    """({(preset, shard): [run records in run order]}, {(preset, shard): attempt}) read with pyarrow."""
    runs: dict = {}
    for r in ds.dataset(os.path.join(root, "runs"), format="parquet", partitioning="hive").to_table().to_pylist():
        r["kind_counts"] = dict(r["kind_counts"])
        runs.setdefault((r["preset"], r["shard"]), []).append({k: r[k] for k in RUN_KEYS})
    shards = {(r["preset"], r["shard"]): r["attempt"]
              for r in ds.dataset(os.path.join(root, "shards"), format="parquet", partitioning="hive")
              .to_table(columns=["preset", "shard", "attempt"]).to_pylist()}
    return {k: sorted(v, key=lambda r: r["run_index"]) for k, v in runs.items()}, shards


def _undisturbed(task: tuple) -> list:
    recs = run_shard(task)["runs"]
    for r in recs:  # as the Parquet table stores them
        r["violations"] = [{f: v[f] for f in ("invariant", "step", "facts", "trace", "scope")} for v in r["violations"]]
    return [{k: r[k] for k in RUN_KEYS} for r in recs]


def _wait_for(path: str, proc: subprocess.Popen, timeout: float = 300.0) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path):
            return int(open(path).read())
        if proc.poll() is not None:
            raise AssertionError(f"the campaign ended before its task started: {proc.stderr.read()[-2000:]}")
        time.sleep(0.1)
    raise AssertionError("the held task never started")


def _campaign(args: list, markers: str, hold: str) -> subprocess.Popen:
    env = dict(os.environ, ISRLAB_TEST_TASK_MARKERS=markers, ISRLAB_TEST_HOLD_TASK=hold)
    return subprocess.Popen([ISRLAB, "fuzz", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def test_default_master_retries_a_task_whose_python_worker_is_killed(tmp_path):
    spec = CampaignSpec(presets=("kafka-2.4",), engine="walk", shards=2, runs=200)
    markers = tmp_path / "markers"
    markers.mkdir()
    proc = _campaign(["--master", "local[2]", "--preset", "kafka-2.4", "--engine", "walk", "--shards", "2",
                      "--runs", "200", "--out", str(tmp_path / "out"), "--json"], str(markers), "kafka-2.4:1")
    pid = _wait_for(str(markers / "kafka-2.4-1-0.pid"), proc)
    os.kill(pid, signal.SIGKILL)  # the Python worker running attempt 0 of shard 1, by the PID it wrote
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr[-3000:]
    assert "runs as local[2,4]" in stderr
    s = json.loads(stdout)
    assert s["runs"] == 200 and s["master"] == "local[2,4]"
    runs, attempts = _records(s["output"])
    assert attempts[("kafka-2.4", 1)] >= 1 and attempts[("kafka-2.4", 0)] == 0
    for task in spec.tasks():
        assert runs[(task[0], task[1])] == _undisturbed(task)  # every column, no run lost or counted twice
    assert not os.path.exists(os.path.join(s["output"], "_shards_raw"))


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        try:
            with open(f"/proc/{pid}/stat") as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the worker of a task through /proc")
def test_standalone_campaign_survives_the_worker_under_a_running_task(tmp_path):
    """1 master + 2 workers on 127.0.0.1; the worker whose executor runs the held task is SIGKILLed, with the
    held Python process (a descendant of that worker, which the test started). Spark reruns the task on
    the other worker, and every shard's records equal the undisturbed computation."""
    from isrlab.standalone import StandaloneCluster

    spec = CampaignSpec(presets=("kafka-2.4", "no-kafka-7128"), engine="walk", shards=2, runs=400)
    markers = tmp_path / "markers"
    markers.mkdir()
    with StandaloneCluster(str(tmp_path / "cluster"), workers=2) as cluster:
        assert cluster.status()["aliveworkers"] == 2
        proc = _campaign(["--master", cluster.master_url, "--preset", ",".join(spec.presets), "--engine", "walk",
                          "--shards", "2", "--runs", "400", "--out", str(tmp_path / "out"),
                          "--archive", str(tmp_path / "cx"), "--json", "--conf", "spark.executor.memory=512m",
                          # executors of a cluster do not inherit the driver's environment
                          "--conf", f"spark.executorEnv.ISRLAB_TEST_TASK_MARKERS={markers}",
                          "--conf", "spark.executorEnv.ISRLAB_TEST_HOLD_TASK=kafka-2.4:1"],
                         str(markers), "kafka-2.4:1")
        pid = _wait_for(str(markers / "kafka-2.4-1-0.pid"), proc)
        (owner,) = [i for i, w in enumerate(cluster.workers) if _descends_from(pid, w.pid)]
        cluster.kill_worker(owner)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode in (0, 1), stderr[-3000:]  # 1 if a violation was found, not 3
    s = json.loads(stdout)
    assert s["runs"] == 800 and s["master"] == cluster.master_url
    runs, attempts = _records(s["output"])
    assert attempts[("kafka-2.4", 1)] >= 1, "the killed worker's task was not rerun"
    for task in spec.tasks():
        assert runs[(task[0], task[1])] == _undisturbed(task)


def _tree(pid: int) -> list[int]:
    """``pid`` and its live descendants, read from /proc."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo += [int(k) for k in fh.read().split()]
        except OSError:
            continue
    return out


def _runs_table(root: str) -> list:
    """Every row of a campaign's runs table but its campaign id, in (preset, shard, run) order."""
    rows = ds.dataset(os.path.join(root, "runs"), format="parquet", partitioning="hive").to_table().to_pylist()
    for r in rows:
        r.pop("campaign")
        r["kind_counts"] = sorted(r["kind_counts"])
    return sorted(rows, key=lambda r: (r["preset"], r["shard"], r["run_index"]))


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the killed worker's executors through /proc")
def test_a_worker_killed_mid_campaign_loses_nothing(tmp_path):
    """1 master + 2 workers on 127.0.0.1: a campaign runs undisturbed, then again with worker 0 SIGKILLed (with its
    executor and Python workers, as a lost machine) once the campaign's first task is seen running (its progress
    note).  Whichever tasks worker 0 held at that moment, and whether or not any were left, the second campaign's
    runs table equals the first's, row for row."""
    from isrlab.sparkjob import DONE, NOTE_SUFFIX
    from isrlab.standalone import StandaloneCluster

    args = ["--preset", "kafka-2.4", "--engine", "walk", "--shards", "4", "--runs", "6000", "--max-steps", "20",
            "--json", "--conf", "spark.executor.memory=512m"]
    with StandaloneCluster(str(tmp_path / "cluster"), workers=2) as cluster:
        calm = subprocess.run([ISRLAB, "fuzz", "--master", cluster.master_url, *args, "--out", str(tmp_path / "a")],
                              capture_output=True, text=True, timeout=600)
        assert calm.returncode == 0, calm.stderr[-3000:]
        out = tmp_path / "b"
        proc = subprocess.Popen([ISRLAB, "fuzz", "--master", cluster.master_url, *args, "--out", str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        end = time.monotonic() + 300
        while not list(out.glob(f"*/{DONE}/*{NOTE_SUFFIX}")):
            assert proc.poll() is None, f"the campaign ended before a task was seen running: {proc.stderr.read()}"
            assert time.monotonic() < end, "no task of the campaign was seen running"
            time.sleep(0.1)
        doomed = _tree(cluster.workers[0].pid)
        for pid in doomed:   # the worker first: it must not start another executor
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        cluster.workers[0].wait(timeout=30)
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stderr[-3000:]
        assert cluster.status()["aliveworkers"] == 1
    first, second = json.loads(calm.stdout), json.loads(stdout)
    assert first["runs"] == second["runs"] == 6000
    rows = _runs_table(first["output"])
    assert len(rows) == 6000 and _runs_table(second["output"]) == rows
