"""What a person reads off a terminal and pastes from it (isrlab/console.py): tables piped to a file keep each row on
one line, and the next commands a campaign prints run as printed, with or without the virtual environment on PATH."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from isrlab import console

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).parent / "isrlab"


def _summary(file: str) -> dict:
    preset = dict(preset="kafka-0.11", expected="isr_entry_condition", expected_bugs=["KAFKA-7128"], runs=2,
                  steps=1000, violated=["isr_entry_condition"], verdict="as expected", found=["KAFKA-7128"],
                  not_found=[], unexpected=[], known=[])
    cx = dict(preset="kafka-0.11", invariant="isr_entry_condition", shrunk_length=12, original_length=30, file=file,
              explanation="At step 12 broker 1 joined the ISR.", kind="found", attributed="KAFKA-7128")
    return dict(campaign="seed0-abc", runs=2, steps=1000, master="local[2]", tasks=1, seconds={"total_s": 9.0},
                steps_per_second_in_shards=100.0, presets=[preset], counterexamples=[cx])


def _next_commands(text: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index("next") + 1
    out = []
    for line in lines[start:]:
        if not line.strip():
            break
        m = re.match(r"  (its steps:|its diagram:|keep it as a regression test:) +(.*)$", line)
        if m:
            out.append(m.group(2))
    return out


@pytest.mark.skipif(not SCRIPT.is_file(), reason="no isrlab script beside this interpreter")
def test_isrlab_command_is_a_path_when_isrlab_is_not_on_path(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", os.defpath)
    monkeypatch.chdir(tmp_path)
    cmd = console.isrlab_command()
    assert cmd != "isrlab" and Path(cmd).resolve() == SCRIPT.resolve()
    monkeypatch.setenv("PATH", f"{SCRIPT.parent}{os.pathsep}{os.defpath}")
    assert console.isrlab_command() == "isrlab"


@pytest.mark.skipif(not SCRIPT.is_file(), reason="no isrlab script beside this interpreter")
def test_next_commands_run_when_pasted_without_the_environment_on_path(tmp_path, monkeypatch):
    """The campaign's "next" block, pasted into a shell whose PATH lacks the virtual environment (a fresh shell after
    ./run main): each command runs, and the diagram lands beside the counterexample, not in the working folder."""
    folder = tmp_path / "campaigns" / "c1" / "counterexamples"
    folder.mkdir(parents=True)
    src = sorted((ROOT / "counterexamples").glob("*kafka-0.11-isr_entry_condition*.json"))[0]
    (folder / src.name).write_bytes(src.read_bytes())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", os.defpath)
    buf = io.StringIO()
    console.campaign(_summary(f"campaigns/c1/counterexamples/{src.name}"), Console(file=buf, width=100,
                                                                                    no_color=True), {})
    text = buf.getvalue()
    replay, explain, promote = _next_commands(text)
    assert "source " in text and "activate" in text, "says how to get plain isrlab on PATH"
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = os.defpath
    for cmd in (replay, explain):   # both exit 0: the counterexample fails as it records
        r = subprocess.run(cmd, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and "not found" not in r.stderr, (cmd, r.stderr)
    assert (folder / (src.stem + ".svg")).is_file(), explain
    assert sorted(p.name for p in tmp_path.iterdir()) == ["campaigns"], "nothing written in the working folder"
    assert promote.split()[-1] == f"campaigns/c1/counterexamples/{src.name}"


def test_off_a_terminal_a_step_table_keeps_each_row_on_one_line(monkeypatch):
    """Piped to a file or a CI log (no COLUMNS), no table is fitted to 80 columns: one line per step, no name split."""
    from isrlab.model.trace import load_trace
    from isrlab.properties.replay import replay
    from isrlab.properties.steptable import render

    monkeypatch.delenv("COLUMNS", raising=False)
    buf = io.StringIO()
    monkeypatch.setattr(sys, "stdout", buf)
    out = console.console()
    assert out.width == console.UNBOUNDED
    trace = load_trace(sorted((ROOT / "counterexamples").glob("*kafka-3.3-follower_hw_committed*.json"))[0])
    render(replay(trace), out)
    lines = buf.getvalue().splitlines()
    rows = [line for line in lines if re.match(r"^(!!|!|~)? *\d+  ", line)]
    assert len(rows) == len(trace.actions) + 1, "one line per step, the start included"
    assert sum("RegisterBrokerRecord" in line for line in lines) >= 1
    assert not any(line.rstrip().endswith("RegisterBrok") for line in lines)


def test_columns_still_sets_the_width_off_a_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.setenv("COLUMNS", "132")
    assert console.console().width == 132
    monkeypatch.setenv("COLUMNS", "nonsense")
    assert console.console().width == console.UNBOUNDED


def test_campaigns_tells_a_bug_not_found_from_an_unexpected_violation(tmp_path):
    """`isrlab campaigns`: UNEXPECTED only for a violation no known fix removes; a campaign whose expected bugs were
    not all found within the budget is "not as expected"."""
    import json

    from click.testing import CliRunner

    from isrlab.cli import main

    for name, when, unexpected in (("a-1", 1_000_000, []), ("b-2", 2_000_000, [{"preset": "p", "invariant": "x"}])):
        folder = tmp_path / name
        (folder / "counterexamples").mkdir(parents=True)
        (folder / "counterexamples" / "t.json").write_text("{}")
        (folder / "counterexamples" / "t.svg").write_text("<svg/>")
        (folder / "summary.json").write_text(json.dumps({"spec": {"presets": ["kafka-2.4"], "engine": "guided"},
                                                         "as_expected": False, "unexpected": unexpected,
                                                         "violations": [], "runs": 3}))
        os.utime(folder / "summary.json", (when, when))
    out = CliRunner().invoke(main, ["campaigns", "--out", str(tmp_path)], standalone_mode=False).output
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert "UNEXPECTED" in rows["b-2"] and "not as expected" in rows["a-1"]
    assert all(re.search(r"\s1\s+kafka-2\.4$", line) for line in rows.values()), "the .svg is not counted"


def test_an_eta_is_never_0_00_while_work_remains_and_says_unknown_without_an_estimate():
    import io

    from isrlab.console import ProgressLine, eta_text

    assert eta_text(0.2, True) == ", ETA 0:01" and eta_text(61.2, True) == ", ETA 1:02"
    assert eta_text(None, True) == ", ETA unknown" and eta_text(float("inf"), True) == ", ETA unknown"
    assert eta_text(None, False) == "" and eta_text(0.0, False) == ", ETA 0:00"
    out = io.StringIO()
    line = ProgressLine("c: fuzz", total=4, unit="tasks", stream=out, estimated=True, clock=lambda: 0.0)
    assert line.line(0, None, runs=(1234, 1_000_000)) == "c: fuzz: 0/4 tasks, 1,234/1,000,000 runs, 0:00, ETA unknown"
    assert line.line(4, None) == "c: fuzz: 4/4 tasks, 0:00"


def test_a_budgeted_phase_counts_what_is_left_of_each_task_budget_wave_by_wave():
    from isrlab.sparkjob import Moment, budget_eta, rate_eta

    # 25 tasks of 2 s on 2 slots, two running for 1 s and 0.5 s: their slots free in 1 and 1.5 s; of the 23 others,
    # 12 run on the first slot, the last ending 1 + 12 * 2 s from now
    m = Moment(done=0, running=2, total=25, slots=2, elapsed=1.0, running_for=[1.0, 0.5])
    assert budget_eta(m, 2.0) == 1.0 + 12 * 2.0
    # every task left is past its budget: when it ends cannot be known, which is not "0:00"
    assert budget_eta(Moment(23, 2, 25, 2, 30.0, [3.0, 2.5]), 2.0) is None
    # past their budget but with a task waiting: at least that task's budget
    assert budget_eta(Moment(22, 2, 25, 2, 30.0, [3.0, 2.5]), 2.0) == 2.0
    # runs counted while tasks run: the rate of runs; before any run, unknown
    assert rate_eta(Moment(0, 2, 2, 2, 10.0, [10.0, 10.0], runs=2500, runs_total=10_000)) == 30.0
    assert rate_eta(Moment(0, 2, 2, 2, 10.0, [10.0, 10.0], runs=0, runs_total=10_000)) is None
