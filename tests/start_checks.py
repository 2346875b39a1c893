"""Checks shared by the starting-state tests (tests/test_start_state.py, tests/test_kraft_start.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from click.testing import CliRunner

from isrlab.cli import main


def fingerprints_under_hash_seeds(preset_name: str, start: dict, seeds=("0", "1", "4242")) -> set:
    """The fingerprints of the state ``start`` gives on ``preset_name``, each computed in a fresh interpreter under
    one of ``seeds`` as PYTHONHASHSEED: one element when the start is built deterministically."""
    code = ("import json,sys; from isrlab.model.config import preset; from isrlab.model.step import initial_state; "
            "from isrlab.model.encode import fingerprint; "
            "print(fingerprint(initial_state(preset(sys.argv[1]).config, json.loads(sys.argv[2]))))")
    prints = set()
    for seed in seeds:
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code, preset_name, json.dumps(start)], env=env,
                             capture_output=True, text=True, check=True)
        prints.add(out.stdout.strip())
    return prints


def assert_refused_in_one_line(tmp_path, data: dict, message: str) -> None:
    """``isrlab replay`` of the trace document ``data`` exits 2 with one line, an error holding ``message``."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    r = CliRunner().invoke(main, ["replay", str(path)])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("isrlab: error: ") and "Traceback" not in r.output, r.output
    assert message in lines[0], lines[0]
