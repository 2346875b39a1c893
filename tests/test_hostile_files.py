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
from isrlab.model.actions import ACTION_BY_NAME
from isrlab.model.trace import TraceError
from malformed import _MANIFEST     # the corpus's checkpoint manifest, of some other search

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
def test_nesting_is_the_depth_a_plain_count_gives(text):
    raw = text.encode()
    assert inputs.json_nesting(raw) == _nesting(raw)


def _nesting(raw: bytes) -> int:
    """The deepest nesting by a plain scan, one byte at a time (strings and their escapes skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for b in raw:
        if in_string:
            if escaped:
                escaped = False
            elif b == ord("\\"):
                escaped = True
            elif b == ord('"'):
                in_string = False
        elif b == ord('"'):
            in_string = True
        elif b in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif b in b"]}":
            depth -= 1
    return deepest


def test_deep_nesting_is_named_with_its_depth():
    with pytest.raises(TraceError, match="f nests arrays and objects 100000 deep"):
        inputs.parse_json(b"[" * 100_000 + b"]" * 100_000, "f")


@pytest.mark.parametrize("text,why", [("[}", "is not valid JSON"), ("[[[[", "is not valid JSON"),
                                      ("[" * 200_000, "nests too deep")])
def test_unbalanced_brackets_are_the_decoders_to_name(text, why):
    with pytest.raises(TraceError, match=f"^f {why}"):
        inputs.parse_json(text.encode(), "f")


def test_the_bracket_scan_is_the_same_at_any_chunk_boundary():
    """The scan splits the text at quotes a chunk at a time: a string (or an escape) across a boundary changes
    nothing."""
    from isrlab.model.trace import _brackets

    raw = json.dumps({"a": ['x"[{', "\\", {"b": ["]]", 1]}], "c": "}" * 7}).encode()
    whole = _brackets(raw)
    assert whole == b"{[{[]}]}"
    for chunk in (1, 2, 3, 5, 8):
        assert _brackets(raw, chunk) == whole, chunk


def test_a_document_of_millions_of_tiny_objects_is_refused_before_it_is_built():
    """json.loads builds about 25 bytes per byte of "[{},{},...]": the cost is counted first, at C speed."""
    raw = b"[" + b",".join([b"{}"] * 2_000_000) + b"]"
    tracemalloc.start()
    try:
        with pytest.raises(TraceError, match=r"^s.json: 6,000,001 bytes of JSON that would take about \d+ MB decoded "
                                             r"\(at most 12 times its size"):
            inputs.parse_json(raw, "s.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(raw)      # the text and the brackets' scan, not 25 times it
    # isrlab's own files cost a few times their size: the archive's traces and a campaign summary pass
    for path in sorted((ROOT / "counterexamples").glob("*.json"))[::9]:
        assert inputs.parse_json(path.read_bytes(), path.name)["format"] == "isrlab-trace"


# --------------------------------------------------------------------------- traces decoded an action at a time
def _trace_text(actions_text: str) -> bytes:
    head = json.loads(GOOD.read_text())
    head.pop("checks", None)
    return json.dumps({**head, "actions": "@"}).replace('"@"', actions_text).encode()


def test_a_trace_is_refused_at_its_first_unknown_action_without_reading_past_it(tmp_path):
    """The decoder stops at the first bad action: what follows it, here no JSON at all, is never read, where
    decoding the whole document first named the syntax error instead."""
    path = tmp_path / "t.json"
    path.write_bytes(_trace_text('[{"type": "Tick", "ms": 5}, {"type": "tick", "ms": 5}, this is not JSON'))
    with pytest.raises(TraceError) as e:
        inputs.load_trace(str(path))
    assert str(e.value) == (f"{path}: action 2: unknown action type 'tick' (at actions/1: expected one of the "
                            f"{len(ACTION_BY_NAME)} action types of model/actions.py; did you mean 'Tick'?)")
    assert "action 2: unknown action type 'tick'" in one_line_error(run("replay", path))


@pytest.mark.parametrize("item,problem", [
    ('{"type": "Tick", "ms": "5"}', "action 3: Tick: field 'ms' must be int, got '5' (at actions/2)"),
    ('{"type": "Tick"}', "action 3: Tick: missing field 'ms' (at actions/2)"),
    ('[1]', "schema: actions/2: an action is a JSON object, not an array"),
    ('{"type": 7}', "action 3: unknown action type 7 (at actions/2: expected one of the"),
])
def test_a_wrong_action_is_named_by_its_number_path_and_what_was_expected(tmp_path, item, problem):
    path = tmp_path / "t.json"
    path.write_bytes(_trace_text('[{"type": "Tick", "ms": 5}, {"type": "Tick", "ms": 5}, ' + item + ', ]'))
    with pytest.raises(TraceError) as e:
        inputs.load_trace(str(path))
    assert str(e.value).startswith(f"{path}: {problem}")


def test_refusing_a_long_list_of_unknown_actions_costs_no_decoded_list(tmp_path):
    """200,000 unknown actions: the decoded list alone would be about 20 times the file (a dict per action); the
    streaming decoder holds the text and the scan's copies, a few times the file."""
    raw = _trace_text("[" + ", ".join(['{"type": "FlipCoin", "n": 1}'] * 200_000) + "]")
    path = tmp_path / "t.json"
    path.write_bytes(raw)
    tracemalloc.start()
    try:
        with pytest.raises(TraceError, match="action 1: unknown action type 'FlipCoin'"):
            inputs.load_trace(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(raw)


def test_the_streaming_decoder_gives_what_decoding_the_whole_document_gives(tmp_path):
    """Every archived counterexample (and a copy with blanks everywhere, a BOM and its actions' keys reordered) loads
    to the trace json.loads and trace_from_json give."""
    from isrlab.model.trace import trace_from_json

    for path in sorted((ROOT / "counterexamples").glob("*.json"))[::7]:
        data = json.loads(path.read_text())
        want = trace_from_json(data)
        assert inputs.load_trace(str(path)).to_json() == want.to_json(), path.name
        odd = dict(reversed(list(data.items())))
        odd["actions"] = [dict(reversed(list(a.items()))) for a in data["actions"]]
        copy = tmp_path / path.name
        copy.write_bytes(b"\xef\xbb\xbf \n" + json.dumps(odd, indent=3).encode() + b"\n\t")
        got = inputs.load_trace(str(copy))
        assert got.actions == want.actions and got.to_json() == want.to_json(), path.name


@pytest.mark.parametrize("text", ['{"format": "isrlab-trace" "version": 1}', '{"format": "isrlab-trace",}',
                                  '{"actions": []} []', '{"actions": [] ', '{"actions": [{"type": "Tick", "ms": 1} 2]}',
                                  '{"format": NaN}', '{"version": ' + "9" * 50 + "}", "", "[", '"x"',
                                  '{"actions": [{"type": "Tick", "ms": 1e999}]}', '{"actions": {}}'])
def test_a_broken_trace_document_is_one_line_naming_the_file(tmp_path, text):
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(TraceError) as e:
        inputs.load_trace(str(path))
    assert str(e.value).startswith(str(path)) and "\n" not in str(e.value)


@pytest.mark.parametrize("size", [(4 << 20) - 200, 4 << 20, 6 << 20])
def test_a_header_field_of_megabytes_is_refused_before_it_is_decoded(tmp_path, size):
    """Only the actions are streamed: any other field is decoded whole, from a window of 4 MB at most."""
    from isrlab.model.trace import MAX_FIELD_BYTES

    head = json.loads(GOOD.read_text())
    head.pop("checks", None)
    n = (size - 2) // 2
    head["provenance"] = {"runs": [0] * n}
    raw = json.dumps(head, separators=(",", ":")).encode()
    path = tmp_path / "t.json"
    path.write_bytes(raw)
    if len(json.dumps(head["provenance"], separators=(",", ":"))) < MAX_FIELD_BYTES - 1:
        assert len(inputs.load_trace(str(path)).provenance["runs"]) == n
    else:
        with pytest.raises(TraceError, match=f"^{path}: schema: provenance: more than 4,194,304 bytes of JSON"):
            inputs.load_trace(str(path))


def test_a_syntax_error_inside_a_long_header_field_is_named_where_it_is(tmp_path):
    head = json.loads(GOOD.read_text())
    head["provenance"] = {"runs": [0] * (3 << 20)}
    text = json.dumps(head, separators=(",", ":")).replace("[0,0,0", "[0,,0,0", 1)
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(TraceError) as e:
        inputs.load_trace(str(path))
    column = text.index(",,") + 2
    assert str(e.value) == f"{path} is not valid JSON: Expecting value at line 1 column {column}"


def test_an_action_is_decoded_within_a_few_kilobytes_and_a_header_within_a_few_fields(tmp_path):
    """A nested element is no action, and is not built past 4 KB to learn it; an escaped string is still read."""
    path = tmp_path / "t.json"
    path.write_bytes(_trace_text('[{"type": "Ti\\u0063k", "ms": 2}, {"type": "Tick", "ms": [' + "{}," * 3_000_000
                                 + "{}]}]"))
    with pytest.raises(TraceError, match=f"^{path}: schema: actions/1: more than 4,096 bytes of JSON "
                                         r"\(an action is a few fields\)$"):
        inputs.load_trace(str(path))
    path.write_bytes(_trace_text('[{"type": "Ti\\u0063k", "ms": 2}]'))
    assert [a.ms for a in inputs.load_trace(str(path)).actions] == [2]
    path.write_bytes(b'{' + b", ".join(b'"f%d": 0' % i for i in range(100)) + b"}")
    with pytest.raises(TraceError, match=f"^{path}: schema: top level: more than 64 fields"):
        inputs.load_trace(str(path))


def test_a_duplicate_actions_field_counts_as_json_loads_counts_it(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(_trace_text('[{"type": "Tick", "ms": 1}]')[:-1] + b', "actions": [{"type": "Tick", "ms": 3}]}')
    assert [a.ms for a in inputs.load_trace(str(path)).actions] == [3]


# --------------------------------------------------------------------------- campaign folders: report, campaigns
def _campaign(tmp_path) -> Path:
    from test_report import _campaign as make

    return make(tmp_path)


def _part(folder: Path) -> Path:
    return sorted((folder / "runs").glob("preset=*/*.parquet"))[0]


@pytest.mark.parametrize("damage", ["truncate", "flip", "text"])
def test_report_on_a_damaged_parquet_file_names_it_as_bad_input(tmp_path, damage):
    folder = _campaign(tmp_path)
    part = _part(folder)
    raw = bytearray(part.read_bytes())
    if damage == "truncate":
        raw = raw[: len(raw) // 2]
    elif damage == "flip":                 # the footer's metadata: it said "cannot write the report" (exit 3)
        for i in range(len(raw) - 200, len(raw) - 8, 7):
            raw[i] ^= 0xFF
    else:
        raw = bytearray(b"preset,seed\nkafka-2.4,1\n")
    part.write_bytes(bytes(raw))
    line = one_line_error(run("report", folder))
    assert f"{part}: not a readable Parquet file: " in line and "cannot write" not in line
    assert not (folder / "report.html").exists()


def test_report_on_a_runs_table_of_other_types_names_the_row_and_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = _campaign(tmp_path)
    part = _part(folder)
    table = pq.read_table(part)
    table = table.set_column(table.schema.get_field_index("steps"), "steps", pa.array(["many", "more"]))
    pq.write_table(table, part)
    assert one_line_error(run("report", folder)).endswith(f"{part}: row 1: steps: expected an integer, not a string")
    pq.write_table(table.drop_columns(["seed", "steps"]), part)
    assert f"{part}: no column seed, steps" in one_line_error(run("report", folder))


@pytest.mark.parametrize("where,value,problem", [
    (("presets", 0, "runs"), "many", "presets/0/runs: expected an integer, not a string"),
    (("presets", 0, "found"), [["KAFKA-7128"]], "presets/0/found/0: expected a string, not a list"),
    (("presets", 0, "unexpected"), 3, "presets/0/unexpected: expected a list, not an integer (3)"),
    (("seconds",), [], "seconds: expected an object, not a list"),
    (("counterexamples", 1, "file"), True, "counterexamples/1/file: expected a string, not a boolean (True)"),
    (("counterexamples", 0, "preset"), {"a": 1}, "counterexamples/0/preset: expected a string, not an object"),
    (("spec",), "guided", "spec: expected an object or null, not a string"),
])
def test_report_on_a_wrong_typed_summary_names_the_field(tmp_path, where, value, problem):
    folder = _campaign(tmp_path)
    path = folder / "summary.json"
    data = json.loads(path.read_text())
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    path.write_text(json.dumps(data))
    assert one_line_error(run("report", folder)).startswith(f"isrlab: error: {path}: {problem}")


def test_report_on_a_counterexample_that_no_longer_reads_says_so_in_its_section(tmp_path):
    folder = _campaign(tmp_path)
    data = json.loads((folder / "summary.json").read_text())
    Path(data["counterexamples"][0]["file"]).write_text(json.dumps({"format": "isrlab-trace", "version": 1,
                                                                     "preset": "my-gone-user-preset"}))
    r = run("report", folder)
    assert r.exit_code == 0, r.output
    page = (folder / "report.html").read_text()
    assert page.count("the trace cannot be read or replayed") == 1


def test_campaigns_lists_the_readable_ones_and_names_the_bad_one_last(tmp_path):
    for name in ("a-good", "b-bad", "c-junk"):
        (tmp_path / name).mkdir()
    (tmp_path / "a-good" / "summary.json").write_text(json.dumps({"spec": {"presets": ["kafka-2.4"]}, "runs": 3}))
    (tmp_path / "b-bad" / "summary.json").write_text(json.dumps({"spec": {"presets": "kafka-2.4"}, "runs": 3}))
    (tmp_path / "c-junk" / "summary.json").write_bytes(b"\x00\xff")
    r = run("campaigns", "--out", tmp_path)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "a-good" in r.stdout and "b-bad" not in r.stdout
    assert r.stderr.splitlines() == [
        f"isrlab: error: {tmp_path / 'b-bad' / 'summary.json'}: spec/presets: expected a list, not a string (not a "
        f"campaign summary isrlab wrote, or edited since)",
        f"isrlab: error: {tmp_path / 'c-junk' / 'summary.json'} is not UTF-8 text (byte 1)"]
    listed = json.loads(run("campaigns", "--out", tmp_path, "--json").stdout)
    assert [c["id"] for c in listed["campaigns"]] == ["a-good"] and len(listed["unreadable"]) == 2


def test_campaigns_lists_an_interrupted_campaign_as_one_to_resume(tmp_path):
    from isrlab.campaign import CampaignSpec

    spec = CampaignSpec(presets=("kafka-0.11",), engine="walk", shards=2, runs=4)
    (tmp_path / "c-int").mkdir()
    (tmp_path / "c-int" / "campaign.json").write_text(json.dumps({"campaign": "c-int", "spec": spec.to_json()}))
    (tmp_path / "c-junk").mkdir()
    (tmp_path / "c-junk" / "campaign.json").write_bytes(b"\xff")
    r = run("campaigns", "--out", tmp_path)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    row = {ln.split()[0]: ln for ln in lines[1:3]}                     # newest first: either order
    assert "interrupted" in row["c-int"] and row["c-int"].endswith("kafka-0.11")
    assert "interrupted" in row["c-junk"]
    assert lines[-1].startswith("an interrupted campaign is finished by: isrlab fuzz --resume PATH")
    rows = json.loads(run("campaigns", "--out", tmp_path, "--json").stdout)["campaigns"]
    assert {r["id"]: r["interrupted"] for r in rows} == {"c-int": True, "c-junk": True}


# --------------------------------------------------------------------------- isrlab.toml
from test_userpresets import in_tmp as in_folder  # noqa: E402,F401 - the fixture: a fresh working folder


@pytest.mark.parametrize("text,problem", [
    ("[presets.x]\nflags = { a = " + "[" * 5000 + "]" * 5000 + " }\n", "nests tables or arrays too deep"),
    ("[presets.x]\nflags = { a = " + "{b=" * 5000 + "1" + "}" * 5000 + " }\n", "nests tables or arrays too deep"),
    ("[presets]\n" + "a." * 5000 + "b = 1\n", "nests tables or arrays more than 16 levels deep"),
    ("[presets.x]\nexplore = { max_crashes = " + "7" * 5000 + " }\n", "Exceeds the limit (4300 digits)"),
    ("[presets.x]\ndescription = 12\n", "presets.x.description must be a string"),
    ("presets = []\n", "presets must be a table"),
])
@pytest.mark.parametrize("command", [["presets"], ["replay", "--quiet", str(GOOD)], ["campaigns"],
                                     ["fuzz", "--master", "none", "--runs", "1"]])
def test_a_bad_isrlab_toml_is_one_line_for_every_command_in_its_folder(in_folder, text, problem, command):
    (in_folder / "isrlab.toml").write_text(text)
    line = one_line_error(run(*command))
    assert line.startswith("isrlab: error: ./isrlab.toml") and problem in line
    assert sorted(p.name for p in in_folder.iterdir()) == ["isrlab.toml"]


def test_a_byte_order_mark_before_isrlab_toml_is_no_part_of_it(in_folder):
    (in_folder / "isrlab.toml").write_bytes(b'\xef\xbb\xbf[presets.my-broker]\nbase = "kafka-2.4"\n')
    r = run("presets", "--json")
    assert r.exit_code == 0, r.output
    assert {"my-broker": "./isrlab.toml"}.items() <= {p["name"]: p["source"] for p in json.loads(r.stdout)}.items()


# --------------------------------------------------------------------------- the last resort
def test_an_uncaught_exception_is_one_line_with_the_file_its_traceback_was_saved_in(tmp_path, monkeypatch):
    import tempfile

    from isrlab import report

    def broken(out):
        raise RuntimeError("a validator missed this\nsecond line")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(report, "list_campaigns", broken)
    r = run("campaigns", "--out", tmp_path)
    assert r.exit_code == 3
    (line,) = r.stderr.splitlines()
    (saved,) = tmp_path.glob("isrlab-internal-error-*.txt")
    assert line == (f"isrlab: internal error: RuntimeError: a validator missed this (a bug in isrlab, not in your "
                    f"input; traceback in {saved}; please report it)")
    text = saved.read_text()
    assert text.startswith("Traceback") and "in broken" in text and "second line" in text


# --------------------------------------------------------------------------- explore --spark checkpoints
@pytest.mark.parametrize("field,value,problem", [
    ("levels", [{"depth": 0}], "levels/0: no '(states|sha256)' field"),
    ("levels", [], "levels: no level"),
    ("events", [[[0], 1, 0, 7, {}, 0]], r"events/0: expected \[path, phase, order, invariant, facts, mask\]"),
    ("kinds", {"Produce": "3"}, "kinds or at_stop: expected counts"),
    ("at_stop", {"__class__": 1}, "at_stop: a figure no search records"),
    ("stopped_at", "x", "stopped_at: expected a list or null, not a string"),
    ("done", 1, r"done: expected true or false, not an integer \(1\)"),
])
def test_a_checkpoint_manifest_of_this_search_with_a_wrong_field_is_refused_naming_it(tmp_path, field, value,
                                                                                      problem):
    """The identity matches, so the search would resume from these fields: each is checked before it is used."""
    from isrlab import spark_explore

    (tmp_path / "manifest.json").write_text(json.dumps({**_MANIFEST, field: value}))
    with pytest.raises(spark_explore.CheckpointError, match=f"corrupt checkpoint {tmp_path}/manifest.json: {problem}"):
        spark_explore.read_manifest(str(tmp_path), "0123456789abcdef")
    (tmp_path / "manifest.json").write_text(json.dumps(_MANIFEST))
    assert spark_explore.read_manifest(str(tmp_path), "0123456789abcdef") == _MANIFEST


def test_a_checkpoint_manifest_that_is_no_regular_file_or_no_json_within_limits_is_refused(tmp_path):
    import os

    from isrlab import spark_explore

    path = tmp_path / "manifest.json"
    os.mkfifo(path)     # opened without blocking, as every JSON input is
    with pytest.raises(spark_explore.CheckpointError, match="manifest.json: is a FIFO, not a regular file"):
        spark_explore.read_manifest(str(tmp_path), None)
    path.unlink()
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(spark_explore.CheckpointError, match="nests arrays and objects 100000 deep"):
        spark_explore.read_manifest(str(tmp_path), None)
    path.unlink()
    path.symlink_to("manifest.json")
    with pytest.raises(spark_explore.CheckpointError, match="cannot read .*manifest.json: Too many levels"):
        spark_explore.read_manifest(str(tmp_path), None)
