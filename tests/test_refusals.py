"""Options that used to be ignored or run anyway, refused with exit 2 and one ``isrlab: error:`` line; and a trace's
field echoed to stderr only capped to one short line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab import userpresets
from isrlab.cli import main
from isrlab.inputs import RUN_SEEDS

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parent.parent


def run(*args):
    return CliRunner().invoke(main, list(args))


def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.output, result.output
    assert result.stderr.startswith("isrlab: error: ") and result.stderr.count("\n") == 1, result.stderr
    return result.stderr.strip()


# --------------------------------------------------------------------------- explore
def test_explore_refuses_no_time_bound_with_max_time(tmp_path):
    """--no-time-bound used to win silently over --max-time N; the two contradict each other, so neither is chosen."""
    for value in ("100", "0"):
        line = _one_line_error(run("explore", "--no-time-bound", "--max-time", value, "--out", str(tmp_path / "o")))
        assert f"--no-time-bound and --max-time {value} contradict each other" in line, line
    assert not (tmp_path / "o").exists()
    for alone in (["--no-time-bound"], ["--max-time", "100"]):    # each one alone still runs
        r = run("explore", *alone, "--max-states", "5", "--no-archive", "--quiet")
        assert r.exit_code == 0, r.output


# --------------------------------------------------------------------------- fuzz --run-seed
@pytest.mark.parametrize("extra", [[], ["--budget", "1"]])
def test_fuzz_refuses_a_negative_run_seed(tmp_path, extra):
    """Campaigns give run seeds from 0 to 2^63-1, and random.Random(-1) is random.Random(1): -1 would silently replay
    run seed 1, so it is refused, as is a seed above the range; nothing is written."""
    for seed in ("-1", str(2 ** 63)):
        line = _one_line_error(run("fuzz", "--master", "none", "--run-seed", seed, *extra,
                                   "--archive", str(tmp_path / "a")))
        assert line.startswith(f"isrlab: error: --run-seed: {seed} is ") and "a run seed is 0 to 2^63-1" in line, line
    assert not (tmp_path / "a").exists()
    assert RUN_SEEDS.convert(str(2 ** 63 - 1), None, None) == 2 ** 63 - 1 and RUN_SEEDS.convert("0", None, None) == 0


def test_fuzz_refuses_a_budget_or_runs_with_run_seed(tmp_path):
    """--run-seed replays one whole run: --budget (which it used to ignore, running 100 s past a budget of 1) is
    refused rather than cutting the run at a machine-dependent point, and so is --runs N above 1."""
    line = _one_line_error(run("fuzz", "--run-seed", "5", "--budget", "1", "--archive", str(tmp_path / "a")))
    assert "--run-seed replays one whole run, which --budget would cut" in line and "drop --budget" in line, line
    line = _one_line_error(run("fuzz", "--run-seed", "5", "--runs", "3", "--archive", str(tmp_path / "a")))
    assert "--run-seed runs exactly one run, not --runs 3: drop --runs" in line, line
    assert not (tmp_path / "a").exists()


# --------------------------------------------------------------------------- preset names
@pytest.mark.parametrize("args", [["fuzz", "--master", "none", "--runs", "1", "--preset", "KAFKA-2.4"],
                                  ["fuzz", "--runs", "1", "--preset", "kafka-0.11,Kafka-2.4"],
                                  ["explore", "--preset", "KAFKA-2.4"]])
def test_a_preset_name_in_another_case_is_unknown_with_a_hint(args, tmp_path):
    """Preset names are compared case-sensitively: KAFKA-2.4 is no preset, and the line names kafka-2.4."""
    line = _one_line_error(run(*args, "--out", str(tmp_path / "o")))
    assert line.startswith("isrlab: error: --preset: unknown preset ") and "did you mean kafka-2.4?" in line, line
    assert not (tmp_path / "o").exists()


def test_a_user_preset_named_like_a_built_in_one_in_another_case_is_refused(tmp_path, monkeypatch):
    """A user preset KAFKA-2.4 beside the built-in kafka-2.4 would be a second preset told apart only by case."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ISRLAB_CONFIG", raising=False)
    (tmp_path / "isrlab.toml").write_text('[presets."KAFKA-2.4"]\nbase = "kafka-2.4"\n')
    try:
        line = _one_line_error(run("presets"))
    finally:
        userpresets.unload()
    assert "kafka-2.4" in line, line


# --------------------------------------------------------------------------- replay's model-version note
@pytest.mark.parametrize("version, shown", [("9" * 100_000, "9" * 60 + "..."),
                                            ("1.0\nisrlab: error: forged", "1.0\\nisrlab: error: forged")])
def test_replay_caps_the_recorded_model_version_it_echoes(tmp_path, version, shown):
    """A trace's model_version is echoed in its first 60 characters, unprintable ones escaped: one short line on
    stderr, never the 100 KB a file may hold nor a line break it smuggles in."""
    (src,) = ROOT.glob("counterexamples/*-kafka-0.11-isr_entry_condition-*.json")
    data = json.loads(src.read_text())
    assert data.get("provenance")    # the note is for traces that record the seeds that gave them
    data["model_version"] = version
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    r = run("replay", "--quiet", "--expected", str(path))
    assert r.exit_code == 0, r.output
    notes = [ln for ln in r.stderr.splitlines() if "recorded under model version" in ln]
    assert len(notes) == 1 and f"recorded under model version {shown}, this is " in notes[0], r.stderr
    assert len(r.stderr) < 400 and "forged" not in r.stderr.replace(notes[0], ""), r.stderr


@pytest.mark.parametrize("value", ["", ",", " , "])
def test_mutate_with_an_empty_mutant_list_is_refused(value):
    """--mutant "" or "," names no mutant: refused, not read as the whole registry."""
    from click.testing import CliRunner

    from isrlab.cli import main

    r = CliRunner().invoke(main, ["mutate", "--mutant", value, "--budget", "1"])
    assert r.exit_code == 2 and "--mutant names no mutant" in r.output and "Traceback" not in r.output


def test_a_trace_is_refused_at_its_first_unknown_action():
    """Decoding stops at the first bad action and names it (the whole list is not run through the schema first)."""
    from isrlab.model.config import preset
    from isrlab.model.trace import Trace, TraceError, trace_from_json

    data = Trace(config=preset("kafka-2.4").config, actions=[]).to_json()
    data["actions"] = [{"type": "ElectController", "broker": 0}] * 3 + [{"type": "NoSuchAction"}] * 50_000
    with pytest.raises(TraceError) as e:
        trace_from_json(data)
    assert str(e.value) == "action 4: unknown action type 'NoSuchAction'"
