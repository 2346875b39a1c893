"""The campaign's terminal summary (isrlab/console.py) and its HTML report (isrlab/report.py)."""

from __future__ import annotations

import html
import io
import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rich.console import Console

from isrlab import console, report
from isrlab.model.trace import load_trace
from isrlab.properties.replay import attribution_of, replay

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parent.parent


def _archived(name: str) -> Path:
    (path,) = ROOT.glob(f"counterexamples/*-{name}-*.json")
    return path


def _campaign(tmp_path) -> Path:
    """A campaign folder as isrlab fuzz leaves it: summary.json, a Parquet runs table, two counterexamples."""
    folder = tmp_path / "seed0-abc"
    cx_dir = folder / "counterexamples"
    cx_dir.mkdir(parents=True)
    cxs = []
    for name, kind, bugs in (("kafka-0.11-isr_entry_condition", "found", ["KAFKA-7128"]),
                             ("kafka-0.11-hw_within_isr", "known", ["KIP-320"])):
        src = _archived(name)
        shutil.copy(src, cx_dir)
        data = json.loads(src.read_text())
        trace = load_trace(str(src))
        v = next(v for v in replay(trace, with_changes=False).violations if v.invariant == trace.violated)
        a = attribution_of(trace, v)
        cxs.append({"preset": data["preset"], "invariant": data["violated"], "shrunk_length": len(data["actions"]),
                    "original_length": 40, "file": str(cx_dir / src.name), "explanation": data["explanation"],
                    "newly_archived": True, "attribution": a.to_json(), "attributed": a.summary(), "kind": kind,
                    "bugs": bugs})
    violation = pa.struct([("invariant", pa.string()), ("step", pa.int32()), ("facts", pa.string()),
                           ("trace", pa.string())])
    for preset, viol in (("kafka-0.11", [{"invariant": "isr_entry_condition", "step": 31, "facts": "{}",
                                          "trace": None}]), ("kafka-2.4", [])):
        part = folder / "runs" / f"preset={preset}"
        part.mkdir(parents=True)
        table = pa.table({"run_index": pa.array([0, 1], pa.int32()), "seed": pa.array([7, 8], pa.int64()),
                          "steps": pa.array([1000, 2000], pa.int32()),
                          "kind_counts": pa.array([[("Produce", 3)], [("Produce", 1), ("Tick", 2)]],
                                                  pa.map_(pa.string(), pa.int32())),
                          "error_codes": [["NONE"], ["NONE", "FENCED_LEADER_EPOCH"]], "witnesses": [[], ["hw_advances"]],
                          "violation": [None, None],
                          "violations": pa.array([viol, []], pa.list_(violation))})
        pq.write_table(table, part / "part-0.parquet")
    summary = {"campaign": "seed0-abc", "master": "local[2]", "tasks": 2, "runs": 4, "steps": 6000,
               "steps_per_second_in_shards": 1000.0, "seconds": {"total_s": 6.0}, "spec": {"engine": "guided", "seed": 0},
               "as_expected": True, "unexpected": False, "every_bug_found": True,
               "presets": [{"preset": "kafka-0.11", "expected": "isr_entry_condition", "expected_bugs": ["KAFKA-7128"],
                            "runs": 2, "steps": 3000, "violated": ["hw_within_isr", "isr_entry_condition"],
                            "verdict": "as expected", "found": ["KAFKA-7128"], "not_found": [], "unexpected": [],
                            "known": ["KIP-320"]},
                           {"preset": "kafka-2.4", "expected": "pass", "expected_bugs": [], "runs": 2, "steps": 3000,
                            "violated": [], "verdict": "as expected", "found": [], "not_found": [], "unexpected": [],
                            "known": []}],
               "counterexamples": cxs + [dict(cxs[0], file=cxs[0]["file"].replace(".json", "-copy.json"),
                                              shrunk_length=cxs[0]["shrunk_length"] + 3)]}
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def test_near_duplicates_fold_by_preset_invariant_and_explanation_class():
    a = {"preset": "p", "invariant": "x", "shrunk_length": 9, "file": "b", "explanation": "at step 9 broker 1 lost 3"}
    b = dict(a, shrunk_length=7, file="a", explanation="at step 7 broker 2 lost 1")
    c = dict(a, invariant="y")
    assert console.fold([a, b, c]) == [(b, 2), (c, 1)]


def test_first_screen_holds_the_verdict_presets_and_next_steps(tmp_path):
    """The counterexamples with their attribution, the presets' found / not found / unexpected lists and the next
    steps, within the first 30 lines, and the verdict last (what the screen shows when the run ends)."""
    folder = _campaign(tmp_path)
    buf = io.StringIO()
    console.campaign(json.loads((folder / "summary.json").read_text()), Console(file=buf, width=100, no_color=True),
                     {"summary": str(folder / "summary.json"), "report": str(folder / "report.html")})
    lines = buf.getvalue().splitlines()
    head = "\n".join(lines[:30])
    assert "campaign seed0-abc: as expected: every expected bug found" in "\n".join(lines[-3:])
    assert "found: isr_entry_condition: KAFKA-7128" in head and "known: hw_within_isr: KIP-320" in head
    assert re.search(r"kafka-0\.11 +KAFKA-7128 +2 +KAFKA-7128 +- +- +KIP-320 +as expected", head), head
    assert "kafka-2.4" in head
    assert "isrlab replay --expected" in head and "isr_entry_condition" in head.split("replay --expected")[1]
    assert "isrlab promote" in head and "report.html" in head
    assert "2 distinct counterexamples" in buf.getvalue() and "and 1 like it" in buf.getvalue()
    assert "VIOLATED" not in buf.getvalue()                  # step tables only with --verbose


def test_verbose_campaign_prints_each_distinct_table_at_the_console_width(tmp_path):
    folder = _campaign(tmp_path)
    buf = io.StringIO()
    console.campaign(json.loads((folder / "summary.json").read_text()), Console(file=buf, width=90, no_color=True),
                     {}, verbose=True)
    out = buf.getvalue()
    lines = out.splitlines()
    # one table per distinct counterexample (the folded near-duplicate's is not repeated), each marking its step
    assert sum(line.split()[:2] == ["step", "action"] for line in lines) == 2
    assert sum(line.startswith("!! ") for line in lines) >= 2
    assert max(len(line) for line in lines if os.sep not in line) <= 90     # file paths are never cut


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.classes, self.ids, self.text = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        d = dict(attrs)
        self.classes += (d.get("class") or "").split()
        if "id" in d:
            self.ids.append(d["id"])
        if tag in ("script", "link", "img") and any(v and "://" in v for v in d.values()):
            raise AssertionError(f"the report loads {tag} from the network: {d}")

    def handle_data(self, data):
        self.text.append(data)


def test_report_is_one_self_contained_page(tmp_path):
    folder = _campaign(tmp_path)
    path = report.write(str(folder))
    page = Path(path).read_text()
    p = _Collect()
    p.feed(page)
    text = " ".join(p.text)
    assert p.tags[0] == "html" and "summary" in p.ids
    assert p.classes.count("counterexample") == 2          # the near-duplicate is folded
    assert p.classes.count("diagram") == 2 and p.tags.count("svg") >= 2 + 3  # diagrams and plots
    assert "steps to the first violation" in page and "coverage over 2 runs" in page
    assert "joined leader" in text and "isrlab replay --expected" in text and "isrlab explain" in text
    assert "as expected: every expected bug found and attributed by its fix" in text
    # each counterexample's attribution (found or known for its preset), with one replay per fix tried
    assert p.classes.count("attribution") == 2 + 2 and p.classes.count("evidence") == 2   # the sections, the diagrams
    assert ('<span class="found">a bug kafka-0.11 expects</span>): isr_entry_condition: KAFKA-7128 and KIP-320 '
            in page)
    assert '<span class="known">a known bug kafka-0.11 does not expect</span>): hw_within_isr: KIP-320 (' in page
    for line in ("with KAFKA-7128 fixed, isr_entry_condition holds throughout",
                 "with KAFKA-7128 fixed, hw_within_isr still fails, at step 39",
                 "with KIP-320 fixed, hw_within_isr holds throughout"):
        assert f"<li>{line}</li>" in page, line
    assert p.tags.count("details") == 2                     # the step tables, folded
    # the tables are the replay's, in Kafka's terms: broker columns, the failing step marked at its row's start
    assert "broker 0" in text and "changes" in text and "\n!! " in text and "VIOLATED: isr_entry_condition" in text
    assert "brokers.0." not in text and "null -> null" not in text
    # each diagram carries its legend, its caption and its attribution line
    assert p.classes.count("legend") >= 2 and p.classes.count("caption") >= 2
    assert "Attribution: hw_within_isr: KIP-320" in text
    assert report.resolve("seed0-abc", str(tmp_path)) == str(folder)


def test_report_says_when_a_recorded_attribution_no_longer_holds(tmp_path):
    """A counterexample whose file records another bug than today's replay names: the report shows today's, and
    says it is not the file's."""
    folder = _campaign(tmp_path)
    summary = json.loads((folder / "summary.json").read_text())
    path = Path(summary["counterexamples"][1]["file"])            # kafka-0.11's hw_within_isr: KIP-320's
    data = json.loads(path.read_text())
    data["attribution"] = dict(summary["counterexamples"][1]["attribution"], bugs=["KAFKA-7128"])
    path.write_text(json.dumps(data))
    page = html.unescape(report.render(str(folder)))
    assert ("not the trace's attribution: the violation of hw_within_isr is now attributed to KIP-320, the trace "
            "says KAFKA-7128") in page
    data["attribution"]["bugs"] = ["KAFKA-0000"]                  # malformed: one line in its section, no traceback
    path.write_text(json.dumps(data))
    page = html.unescape(report.render(str(folder)))
    assert "the trace cannot be read or replayed: attribution: bugs names 'KAFKA-0000', no known bug" in page
    assert page.count('class="counterexample"') == 2
