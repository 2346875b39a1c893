"""The explorer on Spark (isrlab/spark_explore.py) against the single-process explorer on the same bounds.

Per level and in total, the states, transitions and action kinds equal ``explore(..., compress=False)``'s, and the
shortest counterexample is the same trace (a coarse search's levels equal a breadth-first search of the same
successors in process): on embedded local[2] in process, and through ``isrlab explore --master``
on a standalone cluster on 127.0.0.1 under another PYTHONHASHSEED.  A search stopped at a depth, or whose driver
was killed, resumes from its checkpoint to the same result; a damaged checkpoint is refused naming its file.  In
the Spark tests' xdist group.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys

import pytest

from isrlab.model.config import explore_bounds, preset
from isrlab.properties.explore import explore, search_args

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

ISRLAB = os.path.join(os.path.dirname(sys.executable), "isrlab")


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    """local[2]: the session of tests/test_spark.py when it is running in this process, else one of our own."""
    from pyspark.sql import SparkSession

    from isrlab import sparkjob

    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    s = sparkjob.session("local[2]", "isrlab-explore-tests", {
        "spark.local.dir": str(tmp_path_factory.mktemp("spark-local")), "spark.default.parallelism": "2"},
        str(tmp_path_factory.mktemp("ship")))
    yield s
    s.stop()


def _bounds(name: str) -> tuple:
    cfg, kw = search_args(preset(name).config, explore_bounds(name))
    kw.pop("settle_every")
    kw.pop("max_states")
    kw.pop("composite", None)   # both engines search every interleaving
    return cfg, kw


def _levels(res) -> list:
    """States per depth of a single-process search."""
    out = [0] * (max(res.depths) + 1)
    for d in res.depths:
        out[d] += 1
    return out


def test_levels_and_totals_equal_the_single_process_search_on_local2(spark):
    from isrlab import spark_explore

    cfg, kw = _bounds("kafka-2.4")   # 2 brokers, a crash, an expiration, the time bound; the first 12 levels
    single = explore(cfg, **kw, max_depth=12, compress=False)
    res, info = spark_explore.run(spark, cfg, **kw, max_depth=12, partitions=3)
    assert [lv["states"] for lv in info["levels"]] == _levels(single) and len(info["levels"]) == 13
    assert (res.distinct_states, res.transitions, res.pruned, res.depth) == (
        single.distinct_states, single.transitions, single.pruned, single.depth)
    assert res.kinds == single.kinds and res.errors_seen == single.errors_seen and res.witnesses == single.witnesses
    assert res.stop_reason == single.stop_reason == "max_depth" and not res.complete and not res.found


def test_a_complete_search_run_again_is_complete_from_its_checkpoint(spark, tmp_path):
    from isrlab import spark_explore
    from isrlab.properties.explore import bounded_config

    cfg = bounded_config(preset("kafka-2.4").config, 1, 1, 0, 0, 1).replace(produce_acks=(-1,))
    kw = dict(max_leader_epoch=1, max_isr_changes=0, eager_tasks=True, without=("ConsumerFetch",))
    single = explore(cfg, **kw, compress=False)
    folder = str(tmp_path / "cp")
    for resumed in (None, single.depth + 1):   # the second run finds every level done
        res, info = spark_explore.run(spark, cfg, **kw, checkpoint=folder, partitions=2)
        assert info["resumed_from"] == resumed and res.complete and res.stop_reason is None
        assert [lv["states"] for lv in info["levels"]] == _levels(single) + [0]
        assert (res.distinct_states, res.transitions, res.depth, res.kinds) == (
            single.distinct_states, single.transitions, single.depth, single.kinds)
        # the bounds met, gathered level by level (and read back from the checkpoint): those of the single process
        assert res.bounds_met == single.bounds_met and "max_crashes" in res.bounds_met
        assert "max_epoch" not in res.bounds_met   # one broker: no leader change


def test_shortest_trace_and_a_resumed_search_equal_the_single_process_search(spark, tmp_path):
    """crash-loses-unflushed with the command's judge: stopped at depth 8 (a stopped driver), then resumed from
    its checkpoint to the preset's bug, the same trace the single-process search finds first."""
    from isrlab import spark_explore
    from isrlab.properties.attribution import KnownBugs

    p = preset("crash-loses-unflushed")
    cfg, kw = _bounds(p.name)
    single = explore(cfg, **kw, compress=False, judge=KnownBugs(p, cfg))
    folder = str(tmp_path / "cp")
    first, info = spark_explore.run(spark, cfg, **kw, max_depth=8, judge=KnownBugs(p, cfg), checkpoint=folder,
                                    partitions=2)
    assert first.stop_reason == "max_depth" and info["resumed_from"] is None and len(info["levels"]) == 9
    manifest = json.load(open(os.path.join(folder, "manifest.json")))
    assert [lv["depth"] for lv in manifest["levels"]] == list(range(9))
    with gzip.open(os.path.join(folder, "level-0008.jsonl.gz"), "rt") as fh:   # data: digest, bits, action path
        digest, mask, path = json.loads(fh.readline())
    assert len(digest) == 32 and mask == 0 and len(path) == 8 and all(isinstance(i, int) for i in path)
    damaged = str(tmp_path / "damaged")
    shutil.copytree(folder, damaged)

    res, info = spark_explore.run(spark, cfg, **kw, judge=KnownBugs(p, cfg), checkpoint=folder, partitions=2)
    assert info["resumed_from"] == 8
    assert [lv["states"] for lv in info["levels"]][:15] == _levels(single)[:15]
    (name, f), = res.found.items()
    (sname, sf), = single.found.items()
    assert name == sname == "acked_durability" and f.actions == sf.actions and len(f.actions) > 8
    # where the single-process search stops, inside the last level: the same figures at that transition
    assert (res.distinct_states, res.transitions, res.pruned, res.depth) == (
        single.distinct_states, single.transitions, single.pruned, single.depth)
    assert res.kinds == single.kinds and res.stop_reason == "violation"

    # damaged: a changed byte in a level file, a manifest that is not JSON, a manifest of another search
    lv = os.path.join(damaged, "level-0003.jsonl.gz")
    data = bytearray(open(lv, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(lv, "wb").write(bytes(data))
    with pytest.raises(spark_explore.CheckpointError, match=r"corrupt checkpoint .*level-0003\.jsonl\.gz: its sha256"):
        spark_explore.run(spark, cfg, **kw, judge=KnownBugs(p, cfg), checkpoint=damaged)
    with pytest.raises(spark_explore.CheckpointError, match="of another search"):
        spark_explore.run(spark, cfg, **{**kw, "max_leader_epoch": 2}, judge=KnownBugs(p, cfg), checkpoint=folder)
    open(os.path.join(damaged, "manifest.json"), "w").write('{"format": 1, "levels": [')
    with pytest.raises(spark_explore.CheckpointError, match=r"corrupt checkpoint .*manifest\.json"):
        spark_explore.run(spark, cfg, **kw, judge=KnownBugs(p, cfg), checkpoint=damaged)


def test_command_refuses_what_spark_cannot_do_and_a_corrupt_checkpoint_in_one_line(tmp_path):
    r = subprocess.run([ISRLAB, "explore", "--preset", "crash-loses-unflushed", "--spark", "--liveness"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("isrlab: error: --liveness is not available with --spark")
    cp = tmp_path / "cp"
    cp.mkdir()
    (cp / "manifest.json").write_text("not json\n")
    r = subprocess.run([ISRLAB, "explore", "--preset", "crash-loses-unflushed", "--master", "local[1]",
                        "--checkpoint", str(cp), "--no-archive", "--quiet"],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(f"isrlab: error: corrupt checkpoint {cp / 'manifest.json'}: ")


def test_a_killed_driver_resumes_from_its_checkpoint(tmp_path):
    """The command's driver, SIGKILLed by its PID once level 4 is checkpointed (a test hook holds it there), is
    run again: it resumes after level 4 and ends as the single-process search does."""
    import signal
    import time

    args = [ISRLAB, "explore", "--preset", "crash-loses-unflushed", "--json", "--quiet", "--no-archive"]
    single = subprocess.run([*args, "--no-compress"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert single.returncode == 1, single.stderr[-2000:]
    markers, cp = tmp_path / "markers", tmp_path / "cp"
    markers.mkdir()
    spark_args = [*args, "--master", "local[1]", "--checkpoint", str(cp)]
    env = dict(os.environ, ISRLAB_TEST_TASK_MARKERS=str(markers), ISRLAB_TEST_HOLD_LEVEL="4")
    proc = subprocess.Popen(spark_args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=tmp_path)
    pid_file = markers / "explore-driver.pid"
    end = time.monotonic() + 300
    while not pid_file.exists() and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.1)
    assert pid_file.exists(), proc.communicate()[1][-2000:]
    assert int(pid_file.read_text()) == proc.pid
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    manifest = json.loads((cp / "manifest.json").read_text())
    assert [lv["depth"] for lv in manifest["levels"]] == [0, 1, 2, 3, 4] and not manifest["done"]
    assert not [f for f in os.listdir(cp) if f.startswith(".tmp-")]   # nothing half-written

    r = subprocess.run(spark_args, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 1, r.stderr[-2000:]
    a, b = json.loads(r.stdout), json.loads(single.stdout)
    assert a["spark"]["resumed_from"] == 4
    for k in ("distinct_states", "transitions", "pruned", "depth", "kinds", "result"):
        assert a[k] == b[k], k
    assert [v["actions"] for v in a["violations"]] == [v["actions"] for v in b["violations"]]


def test_command_on_a_standalone_cluster_equals_the_single_process_command(tmp_path):
    """no-kafka-15583 (KRaft) with its preset's bounds and the default judge, on 1 master + 2 workers, under
    PYTHONHASHSEED=7: the same figures, verdict and archived trace as ``isrlab explore --no-compress``."""
    from isrlab.standalone import StandaloneCluster

    common = ["explore", "--preset", "no-kafka-15583", "--json", "--quiet"]
    single = subprocess.run([ISRLAB, *common, "--no-compress", "--no-archive"], capture_output=True, text=True,
                            timeout=300, cwd=tmp_path)
    assert single.returncode == 1, single.stderr[-2000:]
    env = dict(os.environ, PYTHONHASHSEED="7")
    with StandaloneCluster(str(tmp_path / "cluster"), workers=2) as cluster:
        r = subprocess.run([ISRLAB, *common, "--master", cluster.master_url, "--conf", "spark.executor.memory=512m",
                            "--out", str(tmp_path / "cx")], capture_output=True, text=True, timeout=600,
                           cwd=tmp_path, env=env)
    assert r.returncode == 1, r.stderr[-3000:]
    a, b = json.loads(r.stdout), json.loads(single.stdout)
    assert a["engine"] == "spark" and a["spark"]["master"] == cluster.master_url
    for k in ("distinct_states", "transitions", "pruned", "depth", "kinds", "stop_reason", "passed_violations",
              "result"):
        assert a[k] == b[k], k
    assert [v["actions"] for v in a["violations"]] == [v["actions"] for v in b["violations"]]
    assert a["result"]["found"] == ["KAFKA-15583"]
    (v,) = a["violations"]
    assert os.path.isfile(v["trace_file"]) and v["length"] == b["violations"][0]["length"]
    assert os.path.isfile(os.path.join(tmp_path, a["spark"]["checkpoint"], "manifest.json"))


def _reference(cfg, kw, max_in_flight=0, max_lagging=0, max_depth=None) -> tuple:
    """A breadth-first search in this process over the Spark engine's own coarse successors (no Spark): its levels,
    transitions and states, each state kept with its least path as the engine keeps it."""
    from isrlab import spark_explore
    from isrlab.model.step import initial_state
    from isrlab.properties.invariants import SAFETY

    s0 = initial_state(cfg)
    spec = spark_explore.Spec(cfg, kw["eager_tasks"], tuple(sorted(kw["without"])), kw["max_leader_epoch"],
                              kw["max_isr_changes"], None, None if kw["max_time_ms"] is None else
                              s0.now + kw["max_time_ms"], False, tuple(i.name for i in SAFETY), True,
                              max_in_flight, max_lagging)
    without = spec.without_kinds()
    checks = spark_explore.checks_for(spec, frozenset())
    tally = spark_explore._Tally()
    seen = {spark_explore.digest(spec, s0)}
    frontier, levels, states = [((), s0)], [1], [s0]
    while frontier and (max_depth is None or len(levels) <= max_depth):
        nxt: dict = {}
        for path, s in frontier:
            for _i, tpath, t, _c, _bad in spark_explore.successors(spec, s, path, 0, checks, without, tally):
                if t is not None:
                    d = spark_explore.digest(spec, t)
                    if d not in seen and (d not in nxt or tpath < nxt[d][0]):
                        nxt[d] = (tpath, t)
        seen |= nxt.keys()
        frontier = sorted(nxt.values(), key=lambda x: x[0])
        levels.append(len(frontier))
        states += [t for _p, t in frontier]
    return levels, tally.transitions, states


@pytest.mark.parametrize("name", ["kafka-2.4", "kafka-3.7"])
def test_a_coarse_search_on_spark_equals_a_search_of_its_successors_in_process(spark, name):
    """Composite on Spark: every level a choice with its exchange and deliveries; the levels and transitions equal a
    plain breadth-first search of the same successors, and each state stored is one the fine search reaches."""
    from isrlab import spark_explore
    from isrlab.properties.explore import bounded_config, state_key

    cfg = bounded_config(preset(name).config, 2, 1 if name == "kafka-2.4" else 0, 1, 0, 1).replace(produce_acks=(-1,))
    kw = dict(max_leader_epoch=1, max_isr_changes=1, max_time_ms=0, eager_tasks=True, without=("ConsumerFetch",))
    levels, transitions, states = _reference(cfg, kw)
    res, info = spark_explore.run(spark, cfg, **kw, composite=True, partitions=3)
    assert res.complete and res.composite and not res.found
    assert [lv["states"] for lv in info["levels"]] == levels
    assert (res.distinct_states, res.transitions) == (sum(levels), transitions)
    assert res.bounds_met == explore(cfg, **kw, composite=True).bounds_met
    fine = explore(cfg, **kw, keep_graph=True, compress=False)
    assert fine.complete and res.distinct_states < fine.distinct_states
    reached = {state_key(cfg, s) for s in fine.states}
    assert all(state_key(cfg, s) in reached for s in states)


@pytest.mark.parametrize("holds", [(1, 0), (0, 1)])
def test_a_holding_search_on_spark_stores_every_state_the_single_process_one_does(spark, holds):
    """Requests held and brokers lagging on Spark: the levels equal a breadth-first search of the same successors in
    one process, every state the single-process holding search stores is stored,
    and the bounds met are the same."""
    from isrlab import spark_explore
    from isrlab.model.step import initial_state, step
    from isrlab.properties.explore import bounded_config, state_key

    hif, lag = holds
    cfg = bounded_config(preset("kafka-2.4").config, 2, 1, 1, 0, 1).replace(produce_acks=(-1,))
    kw = dict(max_leader_epoch=1, max_isr_changes=1, max_time_ms=0, eager_tasks=True, without=("ConsumerFetch",))
    levels, _transitions, states = _reference(cfg, kw, hif, lag)
    res, info = spark_explore.run(spark, cfg, **kw, composite=True, partitions=3, max_in_flight=hif,
                                  max_lagging=lag)
    assert res.complete and not res.found and (res.max_in_flight, res.max_lagging) == holds
    assert [lv["states"] for lv in info["levels"]] == levels
    whole = explore(cfg, **kw, composite=True)
    single = explore(cfg, **kw, composite=True, max_in_flight=hif, max_lagging=lag)
    assert whole.distinct_states < single.distinct_states <= res.distinct_states
    assert res.bounds_met == single.bounds_met
    stored = {state_key(cfg, s) for s in states}
    for j in range(single.distinct_states):
        s = initial_state(cfg)
        for a in single.trace_to(j):
            s = step(cfg, s, a)
        assert state_key(cfg, s) in stored


def test_command_holds_a_request_on_spark(tmp_path):
    """``isrlab explore --composite --max-in-flight 1 --master local[1]``: the levels of a breadth-first search of
    the same holding successors in this process, and the bound in the summary."""
    from isrlab.model.config import preset as get_preset

    r = subprocess.run([ISRLAB, "explore", "--preset", "kafka-2.4", "--composite", "--max-in-flight", "1",
                        "--master", "local[1]", "--max-depth", "4", "--json", "--quiet", "--no-archive"],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    j = json.loads(r.stdout)
    assert j["engine"] == "spark" and j["bounds"]["max_in_flight"] == 1 and j["stop_reason"] == "max_depth"
    cfg, kw = search_args(get_preset("kafka-2.4").config,
                          {**explore_bounds("kafka-2.4"), "composite": True, "max_in_flight": 1})
    kw = {k: kw[k] for k in ("max_leader_epoch", "max_isr_changes", "max_time_ms", "eager_tasks", "without")}
    levels, _t, _s = _reference(cfg, kw, 1, 0, max_depth=4)
    assert [lv["states"] for lv in j["spark"]["levels"]] == levels
    assert levels[-1] > _reference(cfg, kw, 0, 0, max_depth=4)[0][-1]   # a request held at depth 4


def test_a_coarse_search_on_spark_finds_the_presets_bug_and_resumes(spark, tmp_path):
    """crash-loses-unflushed, composite, with the command's judge: stopped at depth 3 and resumed from its
    checkpoint (paths of two numbers a choice) to the preset's bug, the invariant the single-process coarse search
    finds; its trace replays to the violation."""
    from isrlab import spark_explore
    from isrlab.properties.attribution import KnownBugs
    from isrlab.properties.shrink import first_violation

    p = preset("crash-loses-unflushed")
    cfg, kw = _bounds(p.name)
    single = explore(cfg, **kw, composite=True, judge=KnownBugs(p, cfg))
    folder = str(tmp_path / "cp")
    first, info = spark_explore.run(spark, cfg, **kw, composite=True, max_depth=3, judge=KnownBugs(p, cfg),
                                    checkpoint=folder, partitions=2)
    assert first.stop_reason == "max_depth" and len(info["levels"]) == 4
    with gzip.open(os.path.join(folder, "level-0003.jsonl.gz"), "rt") as fh:
        _digest, _mask, path = json.loads(fh.readline())
    assert len(path) == 6 and all(isinstance(i, int) and i >= 0 for i in path)
    res, info = spark_explore.run(spark, cfg, **kw, composite=True, judge=KnownBugs(p, cfg), checkpoint=folder,
                                  partitions=2)
    assert info["resumed_from"] == 3 and res.stop_reason == "violation" and res.composite
    (name, f), = res.found.items()
    assert name == next(iter(single.found)) == p.expected
    assert first_violation(cfg, f.actions, name)[0] == len(f.actions)
