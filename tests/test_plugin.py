"""The pytest plugin in a user's own project: a folder of traces collected as test items, outside this repo.

Each test builds a temporary project (its own rootdir, no conftest of ours) and runs ``python -m pytest`` in
it as a user would; ``verdict``, the definition the plugin and ``isrlab replay --expected`` share, is also
tested directly.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from isrlab.model.trace import load_trace
from isrlab.properties.replay import replay, verdict

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "scenarios"


def _archived(name: str) -> Path:
    (src,) = ROOT.glob(f"counterexamples/*-{name}-*.json")
    return src


def _pytest(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "--rootdir", str(cwd), *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=env)


def _with(src: Path, **changes) -> str:
    data = json.loads(src.read_text())
    data.update(changes)
    return json.dumps(data)


def _project(tmp_path: Path) -> Path:
    """A user's project with a regressions/ folder: two archived counterexamples, a passing scenario with
    checks, a fixed scenario, and one trace whose header expects a violation that does not happen."""
    project = tmp_path / "their-broker"
    traces = project / "regressions"
    traces.mkdir(parents=True)
    for name in ("kafka-0.11-isr_entry_condition", "no-kip-320-log_matching"):
        shutil.copy(_archived(name), traces)
    shutil.copy(SCENARIOS / "01-isr-shrink-after-lag-time.json", traces)
    shutil.copy(SCENARIOS / "10b-kip101-epoch-truncation-keeps-acked-record.json", traces)
    (traces / "wrong-expectation.json").write_text(
        _with(_archived("kafka-0.11-isr_entry_condition"), violated="one_leader_per_epoch"))
    return project


def test_a_folder_of_traces_runs_as_test_items(tmp_path):
    project = _project(tmp_path)
    r = _pytest(project, "--isrlab-traces", "regressions", "-rf")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 4 passed" in r.stdout, r.stdout
    # item names are the file names
    assert "FAILED regressions/wrong-expectation.json::wrong-expectation.json" in r.stdout
    assert ("expected a violation of one_leader_per_epoch, which holds; isr_entry_condition fails instead at "
            "step 12: At step 12 broker 1 joined leader 0's ISR with LEO 0") in r.stdout
    assert "Traceback" not in r.stdout and "runtest" not in r.stdout    # the explanation alone
    listed = _pytest(project, "--isrlab-traces", "regressions", "--collect-only")
    assert "regressions/10b-kip101-epoch-truncation-keeps-acked-record.json::" \
           "10b-kip101-epoch-truncation-keeps-acked-record.json" in listed.stdout
    assert "5 tests collected" in listed.stdout


def test_each_way_an_outcome_can_miss_its_expectation(tmp_path):
    """A fixed trace that now expects the bug, a counterexample that now expects a pass, a check that does not
    hold, an action the model does not enable: each one failing item with its reason."""
    project = tmp_path / "p"
    traces = project / "traces"
    traces.mkdir(parents=True)
    fixed = SCENARIOS / "10b-kip101-epoch-truncation-keeps-acked-record.json"
    (traces / "still-broken.json").write_text(_with(fixed, expect="violation", violated="acked_durability"))
    (traces / "now-fixed.json").write_text(_with(_archived("no-kip-320-acked_durability"), expect="pass",
                                                 violated=None, violation=None))
    data = json.loads((SCENARIOS / "01-isr-shrink-after-lag-time.json").read_text())
    check = data["checks"][0]
    check["equals"] = "something else"
    (traces / "bad-check.json").write_text(json.dumps(data))
    data = json.loads(fixed.read_text())
    data["actions"], data["checks"] = data["actions"][1:], []    # no controller elected: nothing to deliver
    (traces / "not-enabled.json").write_text(json.dumps(data))

    r = _pytest(project, "--isrlab-traces", "traces", "-n", "2")    # under xdist, as ./run tests runs
    assert r.returncode == 1 and "4 failed" in r.stdout, r.stdout + r.stderr
    out = r.stdout
    steps = len(json.loads(fixed.read_text())["actions"])
    assert f"expected a violation of acked_durability, but the trace passed: no invariant fails in its {steps} " \
           f"steps" in out
    # the first invariant to fail, then the others
    assert "expected no violation, but committed_prefix fails at step 31: At step 31" in out
    assert "\nalso failing: acked_durability (step 39), follower_hw_committed (step 39)\n" in out
    assert f"check failed: after {check['after']} actions: {check['path']} is" in out
    assert "expected 'something else'" in out
    assert "the trace does not replay: action 1:" in out and "is not enabled" in out
    assert "Traceback" not in out


def test_the_ini_option_and_a_broken_file(tmp_path):
    project = _project(tmp_path)
    (project / "regressions" / "wrong-expectation.json").unlink()
    (project / "regressions" / "broken.json").write_text("[" * 500 + "]" * 500)
    (project / "regressions" / "unknown.json").write_text(
        _with(_archived("no-kip-320-log_matching"), violated="no_such_invariant"))
    (project / "pytest.ini").write_text("[pytest]\nisrlab_traces = regressions\n")
    r = _pytest(project)
    # a bad file is a failing item, not a collection error that would interrupt the session: the rest runs
    assert r.returncode == 1 and "2 failed, 4 passed" in r.stdout, r.stdout + r.stderr
    assert "Interrupted" not in r.stdout and "error" not in r.stdout and "ERROR" not in r.stdout, r.stdout
    assert "\nnot an isrlab trace: broken.json nests arrays and objects 500 deep" in r.stdout
    assert "\nnot an isrlab trace: unknown.json: violated names 'no_such_invariant'" in r.stdout
    assert "Traceback" not in r.stdout and str(project) not in r.stdout
    missing = _pytest(project, "--isrlab-traces", "nowhere")
    assert missing.returncode == 4 and "isrlab traces: no such folder" in missing.stderr


def _good_and_bad(traces: Path) -> dict:
    """Two good traces in ``traces`` beside one entry of each bad kind that needs no permissions; the bad entries'
    names, each with the words its one line must hold."""
    traces.mkdir(parents=True)
    shutil.copy(_archived("kafka-0.11-isr_entry_condition"), traces / "good-counterexample.json")
    shutil.copy(SCENARIOS / "01-isr-shrink-after-lag-time.json", traces / "good-scenario.json")
    (traces / "malformed.json").write_text('{"format": "isrlab-trace", ')
    (traces / "not-a-trace.json").write_text("[1, 2, 3]")
    os.mkfifo(traces / "fifo.json")                      # read in blocking mode, it would wait for a writer forever
    (traces / "loop.json").symlink_to("loop.json")
    (traces / "dangling.json").symlink_to("nowhere.json")
    (traces / "folder.json").mkdir()                     # its contents are not collected: the name says it is a file
    shutil.copy(SCENARIOS / "01-isr-shrink-after-lag-time.json", traces / "folder.json" / "inside.json")
    return {"malformed.json": "is not valid JSON", "not-a-trace.json": "not-a-trace.json",
            "fifo.json": "fifo.json is a FIFO, not a regular file",
            "loop.json": "cannot read loop.json: Too many levels of symbolic links",
            "dangling.json": "cannot read dangling.json: No such file or directory",
            "folder.json": "folder.json is a folder, not a regular file"}


def _one_failure_each(r: subprocess.CompletedProcess, folder: str, bad: dict, passed: int) -> None:
    out = r.stdout
    assert r.returncode == 1, out + r.stderr
    assert f"{len(bad)} failed, {passed} passed" in out, out
    assert "Interrupted" not in out and "error" not in out and "ERROR" not in out and "Traceback" not in out, out
    for name, words in bad.items():
        # -rf: one summary line per item; the failure's own section is one line naming the file
        assert out.count(f"FAILED {folder}/{name}::{name} - ") == 1, (name, out)
        lines = [ln for ln in out.splitlines() if ln.startswith("not an isrlab trace: ") and name in ln]
        assert len(lines) == 1 and words in lines[0], (name, lines, out)


def test_bad_entries_are_failing_items_and_every_good_trace_runs(tmp_path):
    """A malformed file, a FIFO, a symlink loop, a dangling symlink and a folder named *.json beside good traces:
    each bad entry is one failing item naming it (none skipped in silence, the FIFO never waited on), the good ones
    run, exit 1 and no interrupted session; the same under xdist."""
    project = tmp_path / "p"
    bad = _good_and_bad(project / "regressions")
    r = _pytest(project, "--isrlab-traces", "regressions", "-rf")
    _one_failure_each(r, "regressions", bad, passed=2)
    assert "inside.json" not in r.stdout
    assert str(project) not in r.stdout
    _one_failure_each(_pytest(project, "--isrlab-traces", "regressions", "-rf", "-n", "2"), "regressions", bad, 2)
    listed = _pytest(project, "--isrlab-traces", "regressions", "--collect-only")
    assert listed.returncode == 0 and f"{len(bad) + 2} tests collected" in listed.stdout, listed.stdout


def test_bad_entries_in_a_subfolder_and_python_tests_beside(tmp_path):
    """A bad entry in a subfolder of the trace folder is a failing item too; a test module beside the traces still
    runs as pytest collects it."""
    project = tmp_path / "p"
    traces = project / "regressions"
    bad = _good_and_bad(traces / "older")
    (traces / "test_beside.py").write_text("def test_beside():\n    assert True\n")
    r = _pytest(project, "--isrlab-traces", "regressions", "-rf")
    _one_failure_each(r, "regressions/older", bad, passed=3)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file and lists a chmod 000 folder: this "
                                              "sub-case needs a user that permissions stop")
def test_an_unreadable_file_and_folder_are_failing_items(tmp_path):
    """A chmod 000 trace and a chmod 000 subfolder: one failing item each, naming it; the good traces still run."""
    project = tmp_path / "p"
    traces = project / "regressions"
    traces.mkdir(parents=True)
    shutil.copy(SCENARIOS / "01-isr-shrink-after-lag-time.json", traces / "good.json")
    locked_file = traces / "locked.json"
    shutil.copy(SCENARIOS / "01-isr-shrink-after-lag-time.json", locked_file)
    locked_folder = traces / "locked"
    locked_folder.mkdir()
    locked_file.chmod(0)
    locked_folder.chmod(0)
    try:
        r = _pytest(project, "--isrlab-traces", "regressions", "-rf")
    finally:
        locked_folder.chmod(0o755)
        locked_file.chmod(0o644)
    out = r.stdout
    assert r.returncode == 1 and "2 failed, 1 passed" in out, out + r.stderr
    assert "Interrupted" not in out and "ERROR" not in out, out
    assert "\nnot an isrlab trace: cannot read locked.json: Permission denied\n" in out, out
    assert "\ncannot list the folder locked: Permission denied\n" in out, out


def test_a_path_of_traces_given_without_the_option_gets_a_hint(tmp_path):
    """pytest DIR (or a trace file) without --isrlab-traces runs nothing, as pytest does, and says in one line to
    pass --isrlab-traces; a folder of other JSON, and a run with the option, get no hint."""
    project = _project(tmp_path)
    (project / "other").mkdir()
    (project / "other" / "package.json").write_text('{"name": "their-broker"}')
    hint = ("isrlab: the isrlab traces in regressions are collected only from trace folders: pass --isrlab-traces "
            "regressions (or the ini option isrlab_traces)")
    r = _pytest(project, "regressions")
    assert r.returncode == 5 and r.stdout.count(hint) == 1, r.stdout + r.stderr
    one = "regressions/wrong-expectation.json"
    r = _pytest(project, one)
    assert (f"isrlab: the isrlab traces in {one} are collected only from trace folders: pass --isrlab-traces "
            f"regressions ") in r.stdout, r.stdout
    r = _pytest(project, "other")
    assert r.returncode == 5 and "isrlab:" not in r.stdout, r.stdout
    r = _pytest(project, "regressions", "--isrlab-traces", "regressions")
    assert r.returncode == 1 and "isrlab:" not in r.stdout, r.stdout


def test_ini_folders_are_collected_like_testpaths(tmp_path):
    """Given paths, pytest runs those (the ini folders are the default, as testpaths); --isrlab-traces adds its
    folder to them."""
    project = _project(tmp_path)
    (project / "regressions" / "wrong-expectation.json").unlink()
    (project / "test_unit.py").write_text("def test_unit():\n    assert True\n")
    (project / "pyproject.toml").write_text('[tool.pytest.ini_options]\nisrlab_traces = ["regressions"]\n')
    assert "5 passed" in _pytest(project).stdout
    assert "1 passed" in _pytest(project, "test_unit.py").stdout
    assert "5 passed" in _pytest(project, "test_unit.py", "--isrlab-traces", "regressions").stdout


def test_loaded_by_name_without_autoloading(tmp_path):
    """-p isrlab.pytest_plugin loads it where entry points are not autoloaded, and is harmless where they are."""
    project = _project(tmp_path)
    (project / "regressions" / "wrong-expectation.json").unlink()
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    r = _pytest(project, "-p", "isrlab.pytest_plugin", "--isrlab-traces", "regressions", env=env)
    assert r.returncode == 0 and "4 passed" in r.stdout, r.stdout + r.stderr
    r = _pytest(project, "-p", "isrlab.pytest_plugin", "--isrlab-traces", "regressions")
    assert r.returncode == 0 and "4 passed" in r.stdout, r.stdout + r.stderr


def test_projects_without_traces_see_nothing(tmp_path):
    """Installed but unused: JSON files stay uncollected and the model is never imported."""
    (tmp_path / "test_x.py").write_text(
        "import sys\n\n"
        "def test_x():\n"
        "    assert not [m for m in sys.modules if m.startswith(('isrlab.model', 'isrlab.properties'))]\n")
    shutil.copy(SCENARIOS / "01-isr-shrink-after-lag-time.json", tmp_path / "data.json")
    r = _pytest(tmp_path)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
    assert "isrlab.pytest_plugin" in _pytest(tmp_path, "--trace-config").stdout    # it was loaded


@pytest.mark.parametrize("name", ["kafka-0.11-isr_entry_condition", "no-kip-320-log_matching"])
def test_verdict_on_archived_counterexamples(name):
    trace = load_trace(str(_archived(name)))
    assert verdict(replay(trace, with_changes=False)) == (True, "")
    as_pass = dataclasses.replace(trace, expect="pass", violated=None, violation=None)
    ok, why = verdict(replay(as_pass, with_changes=False))
    first = min(replay(trace, with_changes=False).violations, key=lambda v: v.step)
    assert not ok and why.startswith(f"expected no violation, but {first.invariant} fails at step {first.step}: ")


# --------------------------------------------------------------------------- attribution in the verdict
def _attributed(name: str, **changes) -> dict:
    """An archived counterexample's JSON with the attribution computed on today's model, then ``changes`` applied."""
    from isrlab.properties.replay import attribution_of

    src = _archived(name)
    trace = load_trace(str(src))
    v = next(v for v in replay(trace, with_changes=False).violations if v.invariant == trace.violated)
    data = json.loads(src.read_text())
    data["attribution"] = attribution_of(trace, v).to_json()
    for key, value in changes.items():
        data["attribution"][key] = value
    return data


def test_a_failure_names_its_attribution_and_how_to_see_it(tmp_path):
    """A counterexample whose recorded attribution still holds passes; one recording another bug fails with the
    bug it is attributed to now, the replays behind that, and the commands that show it (paths as given, relative);
    a fixed one that fails anyway says which known bug its violation is."""
    project = tmp_path / "p"
    traces = project / "traces"
    traces.mkdir(parents=True)
    (traces / "attributed.json").write_text(json.dumps(_attributed("no-kip-320-log_matching")))
    (traces / "misattributed.json").write_text(json.dumps(_attributed("no-kafka-7164-log_matching",
                                                                      bugs=["KAFKA-7164"])))
    (traces / "now-fixed.json").write_text(_with(_archived("no-kip-320-acked_durability"), expect="pass",
                                                 violated=None, violation=None))
    r = _pytest(project, "--isrlab-traces", "traces")
    out = r.stdout
    assert r.returncode == 1 and "2 failed, 1 passed" in out, out + r.stderr
    assert ("the violation of log_matching is now attributed to KIP-320, the trace says KAFKA-7164\n"
            "attribution: log_matching: KIP-320 (with KIP-320 fixed, log_matching holds)\n"
            "replayed with KAFKA-7164 fixed, log_matching still fails, at step 32; with KIP-320 fixed, log_matching "
            "holds throughout") in out
    assert "attribution: committed_prefix: KIP-320 (with KIP-320 fixed, committed_prefix holds)" in out
    for name in ("misattributed", "now-fixed"):   # `isrlab` as the user's shell can run it (on PATH or not)
        m = re.search(rf"see it: (.+?) replay traces/{name}\.json \(step by step\), (.+?) explain traces/{name}\.json "
                      rf"\(in one sentence and a diagram\)", out)
        assert m and m[1] == m[2] and (m[1].endswith("isrlab") or m[1].endswith("-m isrlab.cli")), out
    assert "replay traces/attributed.json" not in out
    assert "Traceback" not in out and str(project) not in out


def test_replay_expected_and_explain_compare_the_attribution(tmp_path):
    """isrlab replay --expected exits 1 on a trace whose violation is now another bug's, saying so; explain shows
    the attribution and its evidence, and the mismatch."""
    from click.testing import CliRunner

    from isrlab.cli import main

    good = tmp_path / "good.json"
    good.write_text(json.dumps(_attributed("no-kafka-7164-log_matching")))
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(_attributed("no-kafka-7164-log_matching", bugs=["KAFKA-7164"])))
    assert CliRunner().invoke(main, ["replay", "--expected", "--quiet", str(good)]).exit_code == 0
    r = CliRunner().invoke(main, ["replay", "--expected", "--quiet", str(wrong)])
    assert r.exit_code == 1 and "NOT as expected" in r.stdout, r.output
    assert "the violation of log_matching is now attributed to KIP-320, the trace says KAFKA-7164" in r.stdout
    assert CliRunner().invoke(main, ["explain", "--expected", str(wrong)]).exit_code == 1   # not as it records
    r = CliRunner().invoke(main, ["explain", str(wrong)])
    assert r.exit_code == 0, r.output                                                         # but explained
    lines = r.stdout.splitlines()
    assert lines[0] == load_trace(str(wrong)).explanation
    assert lines[1] == "attribution: log_matching: KIP-320 (with KIP-320 fixed, log_matching holds)"
    assert "  with KAFKA-7164 fixed, log_matching still fails, at step 32" in lines
    assert "  with KIP-320 fixed, log_matching holds throughout" in lines
    assert lines[-1] == ("NOT the trace's attribution: the violation of log_matching is now attributed to KIP-320, "
                         "the trace says KAFKA-7164")
    out = json.loads(CliRunner().invoke(main, ["explain", "--json", str(good)]).stdout)
    assert out["attribution"]["bugs"] == ["KIP-320"] and out["attribution_problem"] is None


@pytest.mark.parametrize("change, message", [
    ({"bugs": ["KAFKA-0000"]}, "attribution: bugs names 'KAFKA-0000', no known bug (isrlab bugs lists them)"),
    ({"bugs": "KIP-320"}, "schema: attribution/bugs: 'KIP-320' is not of type 'array'"),
    ({"invariant": "no_such_invariant"}, "attribution: invariant 'no_such_invariant' is no invariant of the catalogue"),
    ({"step": 10 ** 6}, "attribution: step must be a step of the trace (0 to 32)"),
    ({"joint": True}, "attribution: joint must be true or false, and true only for two bugs or more"),
    ({"evidence": [{"fixes": ["nope"], "outcome": "removed"}]},
     "attribution: evidence 1's fixes names 'nope', no known bug (isrlab bugs lists them)"),
])
def test_a_malformed_attribution_is_bad_input(tmp_path, change, message):
    """One line and exit 2 from replay and explain, one failing item from the plugin; never a traceback."""
    from click.testing import CliRunner

    from isrlab.cli import main

    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_attributed("no-kafka-7164-log_matching", **change)))
    for args in (["replay", "--expected"], ["replay"], ["explain"]):
        r = CliRunner().invoke(main, [*args, str(path)])
        assert r.exit_code == 2 and r.stdout == "", (args, r.output)
        assert r.stderr.startswith("isrlab: error: ") and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
    traces = tmp_path / "traces"
    traces.mkdir()
    path.rename(traces / "bad.json")
    r = _pytest(tmp_path, "--isrlab-traces", "traces")
    assert r.returncode == 1 and "1 failed" in r.stdout, r.stdout + r.stderr
    assert "not an isrlab trace: bad.json" in r.stdout and message in r.stdout, r.stdout
    assert "Traceback" not in r.stdout


def test_verdict_says_how_the_attribution_changed():
    """Each way a recorded attribution can disagree with today's: another bug, none at all, an UNEXPECTED one now
    explained, an attribution of another invariant; and a trace with none recorded keeps today's rule."""
    from isrlab.model.trace import trace_from_json

    def why(name: str, preset=..., **changes) -> tuple:
        data = _attributed(name, **changes)
        if preset is not ...:
            data["preset"] = preset
        return verdict(replay(trace_from_json(data), with_changes=False))

    assert why("no-kafka-7164-log_matching") == (True, "")
    ok, text = why("no-kafka-7164-log_matching", bugs=["KIP-320", "KAFKA-7164"], joint=True)
    assert not ok and text.startswith("the violation of log_matching is now attributed to KIP-320, the trace says "
                                      "KIP-320 + KAFKA-7164 together\n")
    ok, text = why("no-kafka-7164-log_matching", bugs=[])
    assert not ok and text.startswith("the violation of log_matching is now attributed to KIP-320; the trace says no "
                                      "known fix removes it (UNEXPECTED)\n")
    # an unflushed-crash loss outside a preset that expects it: the setting is no candidate, so nothing explains it
    ok, text = why("crash-loses-unflushed-log_matching", preset=None)
    assert not ok and text.startswith("no known fix removes the violation of log_matching any more; the trace "
                                      "attributes it to unflushed-crash-loss\nattribution: log_matching: UNEXPECTED")
    ok, text = why("kafka-0.11-isr_entry_condition", invariant="hw_within_isr")
    assert not ok and text.startswith("the trace's attribution is of a violation of hw_within_isr, not of "
                                      "isr_entry_condition, the violation it expects\n")
    bare = dataclasses.replace(load_trace(str(_archived("no-kafka-7164-log_matching"))), attribution=None)
    assert verdict(replay(bare, with_changes=False)) == (True, "")


def test_a_user_presets_counterexample_replays_outside_its_folder(tmp_path):
    """The trace carries its whole configuration: a preset name no isrlab.toml here defines is a name only, and the
    counterexample runs as a regression test anywhere (no known bug counts as expected without the preset)."""
    src = sorted((ROOT / "counterexamples").glob("*-kafka-2.7-hw_advanced_on_isr_shrink-*.json"))[0]
    data = json.loads(src.read_text())
    data["preset"] = "my-own-2-7"
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "mine.json").write_text(json.dumps(data))
    r = _pytest(tmp_path, "--isrlab-traces", "traces")
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
