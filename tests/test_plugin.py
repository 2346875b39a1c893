"""The pytest plugin in a user's own project: a folder of traces collected as test items, outside this repo."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parent.parent


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "--rootdir", str(cwd), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "their-broker"
    traces = project / "regressions"
    traces.mkdir(parents=True)
    for name in ("kafka-0.11-isr_entry_condition", "no-kip-320-log_matching"):
        (src,) = ROOT.glob(f"counterexamples/*-{name}-*.json")
        shutil.copy(src, traces)
    shutil.copy(ROOT / "tests" / "scenarios" / "01-isr-shrink-after-lag-time.json", traces)
    (src,) = ROOT.glob("counterexamples/*-kafka-0.11-isr_entry_condition-*.json")
    wrong = json.loads(src.read_text())
    wrong["violated"] = "one_leader_per_epoch"    # a header whose expectation no longer holds
    (traces / "wrong-expectation.json").write_text(json.dumps(wrong))
    return project


def test_a_folder_of_traces_runs_as_test_items(tmp_path):
    project = _project(tmp_path)
    r = _pytest(project, "--isrlab-traces", "regressions", "-rf")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 3 passed" in r.stdout
    assert "FAILED regressions/wrong-expectation.json::wrong-expectation.json" in r.stdout
    assert "expected a violation of one_leader_per_epoch, which holds; isr_entry_condition fails instead" in r.stdout
    assert "joined leader" in r.stdout and "Traceback" not in r.stdout


def test_the_ini_option_and_a_broken_file(tmp_path):
    project = _project(tmp_path)
    (project / "regressions" / "wrong-expectation.json").unlink()
    (project / "regressions" / "broken.json").write_text("[" * 500 + "]" * 500)
    (project / "pytest.ini").write_text("[pytest]\nisrlab_traces = regressions\n")
    r = _pytest(project)
    # pytest's own rule: a collection error interrupts the session (--continue-on-collection-errors runs the rest)
    assert r.returncode == 2 and "1 error" in r.stdout, r.stdout + r.stderr
    assert "3 passed, 1 error" in _pytest(project, "--continue-on-collection-errors").stdout
    assert "not an isrlab trace" in r.stdout and "nests arrays and objects 500 deep" in r.stdout
    assert "Traceback" not in r.stdout
    missing = _pytest(project, "--isrlab-traces", "nowhere")
    assert missing.returncode == 4 and "isrlab traces: no such folder" in missing.stderr


def test_projects_without_traces_see_nothing(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_x():\n    assert True\n")
    (tmp_path / "data.json").write_text("{}")
    r = _pytest(tmp_path)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
