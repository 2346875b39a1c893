"""User presets from isrlab.toml / [tool.isrlab]: registered, listed with their source, validated in one line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from isrlab import userpresets
from isrlab.cli import main
from isrlab.model.config import PRESETS

pytestmark = pytest.mark.unit

GOOD = """
[presets.my-broker]
base = "kafka-2.4"
description = "our fork: no KIP-320 fencing"
expected = "log_matching"
bugs = ["KIP-320"]
flags = { kip_320 = false }
explore = { max_crashes = 1 }
"""


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ISRLAB_CONFIG", raising=False)
    yield tmp_path
    userpresets.unload()


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_isrlab_toml_preset_is_listed_with_its_source_and_runs(in_tmp):
    (in_tmp / "isrlab.toml").write_text(GOOD)
    rows = {r["name"]: r for r in json.loads(run("presets", "--json").output)}
    mine = rows["my-broker"]
    assert mine["source"].endswith("isrlab.toml") and rows["kafka-2.4"]["source"] == "built-in"
    assert mine["config"]["kip_320"] is False and mine["expected"] == "log_matching"
    # the user's bounds on top of the defaults every preset has (model.config.explore_bounds)
    assert mine["explore"]["max_crashes"] == 1 and rows["kafka-2.4"]["explore"]["max_expirations"] >= 0
    r = run("fuzz", "--master", "none", "--preset", "my-broker", "--engine", "walk", "--runs", "2", "--json")
    assert r.exit_code in (0, 1) and json.loads(r.stdout)["preset"] == "my-broker"


def test_pyproject_tool_table_is_read(in_tmp):
    (in_tmp / "pyproject.toml").write_text("[project]\nname = 'x'\n" + GOOD.replace("[presets.", "[tool.isrlab.presets."))
    assert "my-broker" in run("presets").output


def test_presets_do_not_leak_between_working_folders(in_tmp, tmp_path_factory, monkeypatch):
    (in_tmp / "isrlab.toml").write_text(GOOD)
    assert "my-broker" in run("presets").output
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    assert "my-broker" not in run("presets").output and "my-broker" not in PRESETS


@pytest.mark.parametrize("text,message", [
    ("[presets.x]\nflags = { kip_999 = true }\n", "presets.x.flags: unknown config field(s): kip_999"),
    ("[presets.x]\nflags = { kip_320 = 3 }\n", "kip_320 must be true or false"),
    ("[presets.x]\nflags = { replication_factor = 9 }\n", "replication_factor must be in"),
    ('[presets."kafka-2.4"]\n', "is a built-in preset"),
    ("[presets.x]\nbase = 'kafka-9'\n", "presets.x.base: 'kafka-9' is not a built-in preset"),
    ("[presets.x]\nexpected = 'nope'\n", "'nope' is no invariant of the catalogue"),
    ("[presets.x]\nexpected = 'log_matching'\n", "names no known bug to attribute it to"),
    ("[presets.x]\nexpected = 'log_matching'\nbugs = ['KIP-320']\n", "lists KIP-320, which its configuration does not contain"),
    ("[presets.x]\nbugs = ['KAFKA-0']\n", "'KAFKA-0' is no known bug"),
    ("[presets.x]\nexplore = { max_crashes = -1 }\n", "presets.x.explore.max_crashes must be an integer"),
    ("[presets.x]\nexplore = { speed = 1 }\n", "unknown bound speed"),
    ("[presets.x]\ncolour = 'red'\n", "unknown key(s) colour"),
    ("[other]\n", "unknown key(s) other"),
    ("[presets.x\n", "is not valid TOML"),
    ("\xff", "is not valid TOML"),
])
def test_bad_user_presets_are_one_line_errors(in_tmp, text, message):
    (in_tmp / "isrlab.toml").write_text(text)
    r = run("presets")
    assert r.exit_code == 2 and "Traceback" not in r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("isrlab: error: ") and message in lines[0], r.output


def test_a_user_presets_explore_bounds_travel_with_it(in_tmp):
    """An executor gets the preset's explore table too: the scopes engine's ladder reads its bounds there."""
    from isrlab.campaign import scope_base

    (in_tmp / "isrlab.toml").write_text(GOOD)
    assert userpresets.load() == ["my-broker"]
    sent = json.loads(json.dumps(userpresets.to_json(["my-broker"])))
    assert scope_base("my-broker")["max_crashes"] == 1
    userpresets.unload()                      # an executor's process: nothing of the driver's registered
    assert "my-broker" not in PRESETS
    try:
        userpresets.register_json(sent)
        assert PRESETS["my-broker"].bugs == ("KIP-320",) and userpresets.EXPLORE["my-broker"] == {"max_crashes": 1}
        assert scope_base("my-broker")["max_crashes"] == 1
    finally:
        PRESETS.pop("my-broker", None)
        userpresets.EXPLORE.pop("my-broker", None)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_user_presets_travel_to_spark_executors(in_tmp):
    import os
    import subprocess
    import sys

    (in_tmp / "isrlab.toml").write_text(GOOD)
    isrlab = os.path.join(os.path.dirname(sys.executable), "isrlab")
    r = subprocess.run([isrlab, "fuzz", "--master", "local[2]", "--preset", "my-broker", "--engine", "walk",
                        "--runs", "4", "--out", str(in_tmp / "c"), "--json"], cwd=in_tmp, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    s = json.loads(r.stdout)
    assert s["runs"] == 4 and [p["preset"] for p in s["presets"]] == ["my-broker"]
