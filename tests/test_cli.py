"""The isrlab command: exit codes, one-line errors, JSON output."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from isrlab.cli import main
from isrlab.model import actions as A
from isrlab.model.actions import action_to_json
from isrlab.model.config import PRESETS, preset
from isrlab.model.trace import Trace, dumps_trace

pytestmark = pytest.mark.unit


def run(*args):
    return CliRunner().invoke(main, list(args))


def _trace_file(tmp_path, actions, name="t.json", **kw):
    path = tmp_path / name
    path.write_text(dumps_trace(Trace(config=preset("kafka-2.4").config, actions=actions, preset="kafka-2.4",
                                      **kw)))
    return str(path)


UP = [A.ElectController(0)] + [A.DeliverControlRequest(0, b) for b in (0, 1, 2)] * 3


def test_presets_lists_every_preset_with_expected_outcome():
    r = run("presets", "--json")
    assert r.exit_code == 0
    rows = json.loads(r.stdout)
    assert {row["name"] for row in rows} == set(PRESETS)
    assert all(row["expected"] for row in rows)
    text = run("presets").output
    for name in PRESETS:
        assert name in text


def test_replay_clean_trace_exits_0(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    r = run("replay", _trace_file(tmp_path, UP + [A.Produce(0, 0, 1)]))
    assert r.exit_code == 0, r.output
    assert "outcome: pass (as expected" in r.output
    assert "producer sends acks=1 to broker 0" in r.output


def _kept(name_part: str) -> str:
    from pathlib import Path

    return str(sorted((Path(__file__).parent.parent / "counterexamples").glob(f"*{name_part}*.json"))[0])


@pytest.mark.parametrize("columns", [100, 180])
def test_replay_table_in_kafka_terms(monkeypatch, columns):
    """The step table: per-broker columns and changes in words, no encoded paths, no ``null -> null``, the
    violating step marked at the start of its row, lines within the terminal width, the sentence printed."""
    import re

    monkeypatch.setenv("COLUMNS", str(columns))
    file = _kept("kafka-0.10.2-acked_durability")
    r = run("replay", "--expected", file)
    assert r.exit_code == 0, r.output
    out = r.output
    header = next(line for line in out.splitlines() if line.lstrip().startswith("step")).split()
    assert header[:2] == ["step", "action"] and "broker" in header and "0" in header
    assert not re.search(r"\b[a-z_]+\.\d+\.[a-z_]+", out), "an internal dotted path"
    assert "null" not in out and "None" not in out
    assert max(len(line) for line in out.splitlines() if not line.startswith(("VIOLATION", "isrlab:"))) <= columns
    trace = json.load(open(file))
    first = trace["violation"]["step"]
    marked = [line for line in out.splitlines() if line.startswith("!!")]
    assert any(re.match(rf"!! +{first} ", m) for m in marked), "the first failing step marked at its start"
    assert "L " in out and "F " in out, "roles in the broker columns"
    assert "appended" in out and "truncated to" in out, "appends and truncations said in words"
    assert "VIOLATION acked_durability at step" in out and "an acknowledged write was lost" in out


def test_step_rows_mark_first_failure_once():
    from isrlab.model.trace import load_trace
    from isrlab.properties.replay import replay
    from isrlab.properties.steptable import rows

    trace = load_trace(_kept("kafka-0.10.2-acked_durability"))
    rs = rows(replay(trace))
    assert rs[0].step == 0 and len(rs) == len(trace.actions) + 1
    firsts = [r.step for r in rs if "acked_durability" in r.marks]
    assert firsts == [trace.violation["step"]]
    assert all(len(r.cells) == trace.config.n_brokers for r in rs)
    # a cell is flagged changed exactly when its text differs from the row before
    assert all(r.changed == tuple(a != b for a, b in zip(p.cells, r.cells)) for p, r in zip(rs, rs[1:]))


def test_replay_json_reports_steps_and_changes(tmp_path):
    r = run("replay", _trace_file(tmp_path, UP + [A.Produce(0, 0, 1)]), "--json")
    out = json.loads(r.stdout)
    assert out["outcome"] == "pass" and out["matches_expectation"]
    last = out["steps"][-1]
    assert last["action"] == action_to_json(A.Produce(0, 0, 1))
    assert ["brokers.0.logs.0.entries.0", None, [1, 0]] in last["changes"]


def test_replay_failed_check_exits_1(tmp_path):
    path = _trace_file(tmp_path, UP, checks=[{"after": len(UP), "path": "zk.partition_states.0.leader",
                                              "equals": 2}])
    r = run("replay", path)
    assert r.exit_code == 1
    assert "CHECK FAILED" in r.output and "zk.partition_states.0.leader is 0, expected 2" in r.output


def _one_line_error(result):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("isrlab: error: "), result.output
    return lines[0]


def test_usage_errors_are_one_line():
    assert "No such option" in _one_line_error(run("fuzz", "--bogus"))
    assert "Missing argument" in _one_line_error(run("replay"))
    assert _one_line_error(run("no-such-command"))


@pytest.mark.parametrize("flag,value", [("--budget", "nan"), ("--budget", "inf"), ("--budget", "-1"),
                                        ("--budget", "1e30"), ("--shards", "1" + "0" * 30), ("--shards", "0"),
                                        ("--max-steps", "1e30"), ("--shrink-budget", "nan"),
                                        ("--seed", "9" * 5000), ("--runs", "-5")])
def test_fuzz_numbers_must_be_finite_and_within_limits(flag, value, tmp_path):
    line = _one_line_error(run("fuzz", "--master", "none", flag, value, "--archive", str(tmp_path / "a")))
    assert line.startswith(f"isrlab: error: {flag}: ") and len(line) < 200
    assert not (tmp_path / "a").exists()


def test_shrink_budget_nan_is_refused(tmp_path):
    assert "not a finite number" in _one_line_error(run("shrink", "x.json", "--budget", "nan"))


def test_trace_limits_are_bad_input(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 1000 + "]" * 1000)
    assert "nests arrays and objects 1000 deep" in _one_line_error(run("replay", str(deep)))
    wide = tmp_path / "wide.json"
    wide.write_text('{"format": ' + "9" * 5000 + "}")
    assert "an integer of 5000 digits" in _one_line_error(run("replay", str(wide)))
    nan = tmp_path / "nan.json"
    nan.write_text('{"format": NaN}')
    assert "NaN is not a JSON value" in _one_line_error(run("replay", str(nan)))
    junk = Trace(config=preset("kafka-2.4").config, actions=UP).to_json()
    junk["actions"] = [1] * 300_000
    p = tmp_path / "junk.json"
    p.write_text(json.dumps(junk))
    assert "actions/0: an action is a JSON object, not a number" in _one_line_error(run("shrink", str(p)))


def test_special_files_are_refused_without_blocking(tmp_path):
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for cmd in ("replay", "explain", "shrink"):
        assert "is a FIFO, not a regular file" in _one_line_error(run(cmd, str(fifo)))
    assert "is a device" in _one_line_error(run("replay", "/dev/zero"))
    assert "is a directory" in _one_line_error(run("explain", str(tmp_path)))


def test_output_paths_are_checked_before_the_work(tmp_path):
    path = _archived("kafka-0.11-isr_entry_condition")
    assert "/dev/null is not a folder" in _one_line_error(run("explain", path, "--svg", "/dev/null/x.svg"))
    assert "is a directory" in _one_line_error(run("explain", path, "--png", str(tmp_path)))
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert "not a folder" in _one_line_error(run("fuzz", "--master", "none", "--archive", str(blocker / "x")))
    assert "not a folder" in _one_line_error(run("fuzz", "--runs", "1", "--out", str(blocker)))
    assert "is a file" in _one_line_error(run("shrink", path, "--archive", str(blocker)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_written_files_respect_the_umask(tmp_path):
    import os
    import stat

    path = _archived("kafka-0.11-isr_entry_condition")
    old = os.umask(0o022)
    try:
        assert run("explain", path, "--svg", str(tmp_path / "a.svg")).exit_code == 0   # explained
        os.umask(0o077)
        assert run("explain", path, "--png", str(tmp_path / "b.png")).exit_code == 0
        assert run("explain", path, "--expected").exit_code == 0     # it fails as it records
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.svg").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "b.png").stat().st_mode) == 0o600


def test_explain_names_the_invariant_that_fails_when_the_expected_one_holds(tmp_path):
    data = json.loads(open(_archived("kafka-0.11-isr_entry_condition")).read())
    data["violated"] = "one_leader_per_epoch"
    p = tmp_path / "other.json"
    p.write_text(json.dumps(data))
    r = run("explain", str(p))
    assert r.exit_code == 0                                        # explained
    assert run("explain", str(p), "--expected").exit_code == 1     # but not as the trace expects
    assert "expects a violation of one_leader_per_epoch, which holds" in r.output
    assert "isr_entry_condition fails instead" in r.output


def test_replay_missing_file(tmp_path):
    assert "cannot read" in _one_line_error(run("replay", str(tmp_path / "nope.json")))


def test_replay_not_json(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{ not json")
    assert "not valid JSON" in _one_line_error(run("replay", str(p)))


def test_replay_truncated_file(tmp_path):
    good = dumps_trace(Trace(config=preset("kafka-2.4").config, actions=UP))
    p = tmp_path / "cut.json"
    p.write_text(good[: len(good) // 2])
    assert "not valid JSON" in _one_line_error(run("replay", str(p)))


def test_replay_binary_file(tmp_path):
    p = tmp_path / "bin.json"
    p.write_bytes(b"\xff\xfe\x00garbage")
    assert "not UTF-8" in _one_line_error(run("replay", str(p)))


def test_replay_wrong_schema(tmp_path):
    p = tmp_path / "schema.json"
    p.write_text(json.dumps({"format": "isrlab-trace", "version": 1, "config": {}, "expect": "maybe",
                             "actions": []}))
    assert "schema" in _one_line_error(run("replay", str(p)))


def test_replay_unknown_action(tmp_path):
    data = Trace(config=preset("kafka-2.4").config, actions=UP).to_json()
    data["actions"].append({"type": "FlipCoin"})
    p = tmp_path / "unknown.json"
    p.write_text(json.dumps(data))
    assert "action 11: unknown action type 'FlipCoin'" in _one_line_error(run("replay", str(p)))


def test_replay_impossible_config(tmp_path):
    data = Trace(config=preset("kafka-2.4").config, actions=UP).to_json()
    data["config"]["replication_factor"] = 7
    p = tmp_path / "cfg.json"
    p.write_text(json.dumps(data))
    assert "config: replication_factor" in _one_line_error(run("replay", str(p)))


def test_replay_action_not_enabled(tmp_path):
    path = _trace_file(tmp_path, [A.FetchRequest(1, 0)])
    assert "action 1: FetchRequest(broker=1, partition=0) is not enabled" in _one_line_error(run("replay", path))


def test_replay_violation_expected_but_missing_exits_1(tmp_path):
    """A kept counterexample that no longer reproduces must fail a regression test built on replay."""
    path = _trace_file(tmp_path, UP, expect="violation", violated="acked_durability")
    for flags in ((), ("--expected",)):
        r = run("replay", path, *flags)
        assert r.exit_code == 1 and "NOT as expected" in r.output


def test_replay_expected_exits_0_when_the_counterexample_reproduces():
    path = _archived("kafka-0.11-isr_entry_condition")
    assert run("replay", "--quiet", path).exit_code == 1          # a violation was found
    r = run("replay", "--quiet", "--expected", path)               # ... the one the file expects
    assert r.exit_code == 0 and "(as expected" in r.output


def test_replay_unknown_invariant_in_violated_is_bad_input(tmp_path):
    path = _trace_file(tmp_path, UP, expect="violation", violated="no_such_invariant")
    assert "no invariant of the catalogue" in _one_line_error(run("replay", path))


def test_replay_notes_a_trace_recorded_under_another_model_version(tmp_path):
    from isrlab.model.trace import model_version

    data = json.loads(open(_archived("kafka-0.11-isr_entry_condition")).read())
    data["model_version"] = "0.0.1"
    p = tmp_path / "old.json"
    p.write_text(json.dumps(data))
    r = run("replay", "--quiet", "--expected", str(p))
    assert r.exit_code == 0 and f"recorded under model version 0.0.1, this is {model_version()}" in r.stderr
    assert "model version" not in run("replay", "--quiet", _trace_file(tmp_path, UP)).stderr


def test_model_version_is_a_digest_of_the_sources():
    import re
    import subprocess
    import sys

    from isrlab.model.trace import model_version

    assert re.fullmatch(r"\d+\.\d+\.\d+\+[0-9a-f]{12}", model_version())
    other = subprocess.run([sys.executable, "-c", "from isrlab.model.trace import model_version; "
                            "print(model_version())"], env={"PYTHONHASHSEED": "7", "PATH": ""},
                           capture_output=True, text=True, check=True).stdout.strip()
    assert other == model_version()


def test_fuzz_unknown_preset_is_a_usage_error():
    # checked before any Spark session starts, on the default master as in process
    assert "unknown preset" in _one_line_error(run("fuzz", "--preset", "kafka-9.9", "--runs", "1"))
    assert "unknown preset" in _one_line_error(run("fuzz", "--master", "none", "--preset", "kafka-9.9"))


def test_fuzz_bad_flag_is_a_usage_error():
    r = run("fuzz", "--master", "none", "--runs", "0")
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_fuzz_default_preset_finds_nothing_in_a_short_run(tmp_path):
    r = run("fuzz", "--master", "none", "--engine", "walk", "--preset", "kafka-2.4", "--runs", "30",
            "--max-steps", "200", "--json",
            "--archive", str(tmp_path))
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["runs"] == 30 and summary["violation"] is None and summary["steps"] > 30 * 50
    assert not list(tmp_path.iterdir())


def test_fuzz_in_process_writes_its_counterexample_under_out(tmp_path):
    """In process, --out names the counterexample's folder (`isrlab fuzz ... --out DIR`)."""
    r = run("fuzz", "--master", "none", "--preset", "kafka-0.11", "--runs", "5", "--json",
            "--out", str(tmp_path / "cx"))
    assert r.exit_code == 1, r.output
    (path,) = (tmp_path / "cx").iterdir()
    assert path.name.endswith(".json") and "kafka-0.11" in path.name
    assert json.loads(r.stdout)["violation"]["invariant"] == json.loads(path.read_text())["violation"]["invariant"]
    msg = _one_line_error(run("fuzz", "--master", "none", "--runs", "1", "--out", str(tmp_path / "a"),
                              "--archive", str(tmp_path / "b")))
    assert "give one" in msg
    assert "local folder" in _one_line_error(run("fuzz", "--master", "none", "--runs", "1", "--out", "s3a://b/x"))


def test_fuzz_out_with_a_glob_character_is_refused_before_spark_starts(tmp_path):
    msg = _one_line_error(run("fuzz", "--runs", "1", "--out", str(tmp_path / "out[local-2]")))
    assert "glob character" in msg


# --------------------------------------------------------------------------- shrink
def _archived(name: str) -> str:
    from pathlib import Path

    (path,) = Path(__file__).resolve().parent.parent.glob(f"counterexamples/*-{name}-*.json")
    return str(path)


def test_shrink_finds_another_order_of_the_same_events_and_archives_it(tmp_path):
    """A fuzzer-found KAFKA-7128 trace of kafka-0.11 (archived until the breadth-first pass replaced it) is
    minimal for deletion; the pass finds a shorter order of its own actions, which is archived, replays to the
    same invariant and says where it came from."""
    from pathlib import Path

    from isrlab.model.trace import load_trace

    src = str(Path(__file__).resolve().parent / "fixtures" / "kafka-0.11-isr_entry_condition-deletion-minimal.json")
    before = load_trace(src)
    plain = run("shrink", src, "--bfs-states", "0", "--archive", str(tmp_path / "none"), "--json")
    assert plain.exit_code == 0, plain.output
    assert json.loads(plain.output)["shrunk_length"] == len(before.actions)  # deletion alone finds nothing
    assert not (tmp_path / "none").exists()
    r = run("shrink", src, "--archive", str(tmp_path / "cx"), "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["shrunk_length"] < len(before.actions) and out["passes"].get("bfs") == 1 and out["newly_archived"]
    after = load_trace(out["trace_file"])
    assert len(after.actions) == out["shrunk_length"] and after.violated == before.violated == "isr_entry_condition"
    assert set(after.actions) <= set(before.actions)  # the same events, fewer of them, in another order
    assert after.provenance["reshrunk_from"] == src.rsplit("/", 1)[-1] and after.preset == before.preset
    replayed = run("replay", out["trace_file"], "--quiet")
    assert replayed.exit_code == 1 and "as expected" in replayed.output and "NOT" not in replayed.output
    again = run("shrink", src, "--archive", str(tmp_path / "cx"), "--json")
    assert not json.loads(again.output)["newly_archived"] and len(list((tmp_path / "cx").iterdir())) == 1


def test_shrink_refuses_traces_with_nothing_to_shrink(tmp_path):
    assert "expects no violation" in _one_line_error(run("shrink", _trace_file(tmp_path, UP)))
    assert "cannot read" in _one_line_error(run("shrink", str(tmp_path / "nope.json")))
    wrong = _trace_file(tmp_path, UP, name="w.json", expect="violation", violated="acked_durability")
    assert "does not violate" in _one_line_error(run("shrink", wrong))
    assert run("shrink", _archived("kafka-0.11-isr_entry_condition"), "--bfs-states", "-1").exit_code == 2


# --------------------------------------------------------------------------- promote, campaigns, invariants
def test_in_process_counterexample_goes_to_the_campaign_folder_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run("fuzz", "--master", "none", "--preset", "kafka-0.11", "--runs", "5", "--json")
    assert r.exit_code == 1, r.output
    path = json.loads(r.stdout)["trace_file"]
    parts = path.split("/")
    assert parts[0] == "campaigns" and parts[2] == "counterexamples" and len(parts) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["campaigns"]


def test_promote_moves_a_reproducing_counterexample_once(tmp_path):
    import shutil

    src = tmp_path / "campaign"
    src.mkdir()
    original = _archived("kafka-0.11-isr_entry_condition")
    shutil.copy(original, src)
    (copied,) = src.iterdir()
    r = run("promote", str(copied), "--to", str(tmp_path / "reg"))
    assert r.exit_code == 0 and "promoted" in r.output
    assert not copied.exists() and [p.name for p in (tmp_path / "reg").iterdir()] == [copied.name]
    shutil.copy(original, src)
    r = run("promote", str(copied), "--to", str(tmp_path / "reg"), "--keep")
    assert r.exit_code == 0 and "already there" in r.output and copied.exists()


def test_promote_refuses_a_trace_that_does_not_reproduce(tmp_path):
    path = _trace_file(tmp_path, UP, expect="violation", violated="acked_durability")
    assert "does not replay to a violation" in _one_line_error(run("promote", path, "--to", str(tmp_path / "r")))
    assert "expects no violation" in _one_line_error(run("promote", _trace_file(tmp_path, UP, name="p.json"),
                                                         "--to", str(tmp_path / "r")))
    assert not (tmp_path / "r").exists()


def test_campaigns_lists_summaries_newest_first(tmp_path):
    for name, when, ok in (("a-1", 1_000_000, True), ("b-2", 2_000_000, False)):
        folder = tmp_path / name
        (folder / "counterexamples").mkdir(parents=True)
        (folder / "summary.json").write_text(json.dumps({"spec": {"presets": ["kafka-2.4"], "engine": "guided"},
                                                         "as_expected": ok, "violations": [], "runs": 3}))
        import os

        os.utime(folder / "summary.json", (when, when))
    (tmp_path / "junk").mkdir()
    r = run("campaigns", "--out", str(tmp_path), "--json")
    assert r.exit_code == 0
    rows = json.loads(r.stdout)["campaigns"]
    assert [row["id"] for row in rows] == ["b-2", "a-1"] and rows[0]["as_expected"] is False
    assert "UNEXPECTED" in run("campaigns", "--out", str(tmp_path)).output
    assert "no campaigns" in run("campaigns", "--out", str(tmp_path / "none")).output


def test_invariants_lists_the_catalogue():
    from isrlab.properties.invariants import CATALOGUE, LIVENESS

    r = run("invariants", "--json")
    assert r.exit_code == 0
    assert [row["name"] for row in json.loads(r.stdout)] == [inv.name for inv in CATALOGUE] + [lv.name for lv in LIVENESS]


# --------------------------------------------------------------------------- progress
class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_progress_line_plain_lines_every_period():
    """Off a terminal: one plain line per period with the figures given and an ETA, nothing in between."""
    import io

    from isrlab.console import ProgressLine

    out, clock = io.StringIO(), _Clock()
    line = ProgressLine("campaign c: fuzz", total=8, unit="tasks", stream=out, every=5.0, clock=clock)
    clock.now = 1.0
    line.update(1, runs=10, **{"violating runs": 0})
    assert out.getvalue() == ""
    clock.now = 6.0
    line.update(2, runs=1234, **{"steps/s": 5000.4, "violating runs": 3})
    clock.now = 7.0
    line.update(3)
    clock.now = 12.0
    line.update(4, eta_s=30)
    line.note("campaign c: shrinking 2 counterexamples")
    line.close("campaign c: done")
    assert out.getvalue().splitlines() == [
        "campaign c: fuzz: 2/8 tasks, 1,234 runs, 5,000 steps/s, 3 violating runs, 0:06, ETA 0:18",
        "campaign c: fuzz: 4/8 tasks, 0:12, ETA 0:30",
        "campaign c: shrinking 2 counterexamples",
        "campaign c: done"]


def test_prove_progress_claim_by_claim_and_clean_json():
    from isrlab.specs.report import run as run_claims

    names = [c.name for c in run_claims(("lag_window",))]
    r = run("prove", "--group", "lag_window")
    assert r.exit_code == 0, r.output
    lines = r.stderr.splitlines()
    assert lines[0] == "prove: lag_window"
    assert [ln.split(": ")[2] for ln in lines[1:] if ln.startswith("prove: lag_window: ")] == names
    assert r.stdout.splitlines()[-1].startswith(f"{len(names)}/{len(names)} claims hold")
    r = run("prove", "--group", "lag_window", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["failed"] == []


def test_shrink_json_stays_clean(tmp_path):
    import shutil

    file = tmp_path / "cx.json"
    shutil.copyfile(_kept("kafka-0.10.2-acked_durability"), file)
    r = run("shrink", str(file), "--budget", "1", "--bfs-states", "0", "--archive", str(tmp_path / "out"), "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["invariant"] == "acked_durability" and out["shrunk_length"] <= out["original_length"]
    assert all(line.startswith("shrink: ") for line in r.stderr.splitlines())


def test_a_long_campaigns_result_fits_the_first_screen():
    """With many presets, those as expected fold into one line: the verdict, the presets that need a look and the
    next steps stay within the first 30 lines of an 80-column terminal."""
    import io

    from rich.console import Console

    from isrlab import console

    presets = [dict(preset=f"preset-{i:02d}", expected="pass", expected_bugs=[], runs=2, steps=80_000, violated=[],
                    verdict="as expected", found=[], not_found=[], unexpected=[], known=[]) for i in range(30)]
    presets[7].update(expected="log_matching", expected_bugs=["KIP-320"], violated=["committed_prefix"],
                      verdict="not found", not_found=["KIP-320"])
    summary = dict(campaign="seed0-x", runs=60, steps=2_400_000, master="local[2]", tasks=60,
                   seconds={"total_s": 170.0}, steps_per_second_in_shards=17_000.0, presets=presets,
                   counterexamples=[])
    buf = io.StringIO()
    console.campaign(summary, Console(file=buf, width=80, color_system=None), {"summary": "c/summary.json"})
    lines = buf.getvalue().splitlines()
    first = "\n".join(lines[:30])
    assert "preset-07" in first and "not found" in first and "next" in first and "c/summary.json" in first
    assert "as expected (29)" in first and "preset-29" in first
    assert "not found within the budget" in "\n".join(lines[-5:])   # the verdict last
    assert sum("preset-03" in line for line in lines) == 1       # listed once, in the folded line


def test_explore_on_a_full_disk_is_one_line(tmp_path, monkeypatch):
    """The counterexample cannot be written (ENOSPC): one line naming the folder, exit 3, no traceback."""
    import errno

    from isrlab import archive

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(archive, "archive_counterexample", full)
    r = run("explore", "--preset", "no-kafka-15583", "--quiet", "--out", str(tmp_path / "cx"))
    lines = [ln for ln in r.output.splitlines() if ln.startswith("isrlab:")]
    assert r.exit_code == 3 and "Traceback" not in r.output, r.output
    assert lines == [f"isrlab: error: cannot archive the counterexample in {tmp_path / 'cx'}: No space left on device"]

