"""Options that used to be ignored or run anyway, refused with exit 2 and one ``isrlab: error:`` line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab.cli import main

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
