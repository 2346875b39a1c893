"""Files a user's tools broke or an attacker wrote: each one is refused in one line naming the file, the field and
what was expected (exit 2), at a cost bounded by its size: JSON inputs, campaign folders, isrlab.toml."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab import inputs
from isrlab.cli import main
from isrlab.model.trace import TraceError, _nesting

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parent.parent
GOOD = sorted((ROOT / "counterexamples").glob("*-kafka-0.11-isr_entry_condition-*.json"))[0]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("isrlab: error: "), result.output
    assert "internal error" not in lines[0]
    return lines[0]


# --------------------------------------------------------------------------- JSON within limits
def test_a_20_mb_description_is_refused_before_decoding_in_bounded_memory(tmp_path):
    data = json.loads(GOOD.read_text())
    data["description"] = "x" * (20 << 20)
    raw = json.dumps(data).encode()
    tracemalloc.start()
    try:
        with pytest.raises(TraceError, match=r"t.json: a string of 20,971,520 bytes at byte \d+ \(at most 1,048,576"):
            inputs.parse_json(raw, "t.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(raw)       # the decoder's working set was gigabytes (about 120 bytes per character)
    path = tmp_path / "t.json"
    path.write_bytes(raw)
    assert "a string of 20,971,520 bytes" in one_line_error(run("replay", path))


def test_escaped_quotes_and_backslashes_neither_hide_nor_fake_a_long_string():
    long_run = '\\"' * 600_000             # 1.2 MB inside one string, made of escaped quotes
    with pytest.raises(TraceError, match="a string of 1,200,000 bytes"):
        inputs.parse_json(json.dumps({"a": "x", "description": long_run.replace('\\"', '"')}).encode(), "f")
    spaced = b'{"a": "\\\\"' + b" " * (2 << 20) + b', "b": 1}'   # 2 MB of blanks outside strings: valid JSON
    assert inputs.parse_json(spaced, "f") == {"a": "\\", "b": 1}


@pytest.mark.parametrize("text", ['[]', '[[{"a": [1, {}]}]]', '["[[[", "\\"[[", "\\\\", [[]]]',
                                  '{"a": "]]]]", "b": [{"c": "{{{\\\\\\""}]}', "[" * 70 + "]" * 70,
                                  '[{"x": ' * 40 + "1" + "}]" * 40, ""])
def test_nesting_is_the_depth_the_old_scan_gives(text):
    raw = text.encode()
    assert inputs.json_nesting(raw) == _nesting(raw)


def test_deep_nesting_is_named_with_its_depth():
    with pytest.raises(TraceError, match="f nests arrays and objects 100000 deep"):
        inputs.parse_json(b"[" * 100_000 + b"]" * 100_000, "f")


@pytest.mark.parametrize("text,why", [("[}", "is not valid JSON"), ("[[[[", "is not valid JSON"),
                                      ("[" * 200_000, "nests too deep")])
def test_unbalanced_brackets_are_the_decoders_to_name(text, why):
    with pytest.raises(TraceError, match=f"^f {why}"):
        inputs.parse_json(text.encode(), "f")
