"""The campaign's terminal summary (isrlab/console.py) and its HTML report (isrlab/report.py)."""

from __future__ import annotations

import io
import json
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rich.console import Console

from isrlab import console, report

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
    for name in ("kafka-0.11-isr_entry_condition", "kafka-0.11-hw_within_isr"):
        src = _archived(name)
        shutil.copy(src, cx_dir)
        data = json.loads(src.read_text())
        cxs.append({"preset": data["preset"], "invariant": data["violated"], "shrunk_length": len(data["actions"]),
                    "original_length": 40, "file": str(cx_dir / src.name), "explanation": data["explanation"],
                    "newly_archived": True})
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
               "as_expected": True, "every_bug_found": True,
               "presets": [{"preset": "kafka-0.11", "expected": "isr_entry_condition", "runs": 2, "steps": 3000,
                            "violated": ["hw_within_isr", "isr_entry_condition"], "verdict": "ok"},
                           {"preset": "kafka-2.4", "expected": "pass", "runs": 2, "steps": 3000, "violated": [],
                            "verdict": "ok"}],
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
    folder = _campaign(tmp_path)
    buf = io.StringIO()
    console.campaign(json.loads((folder / "summary.json").read_text()), Console(file=buf, width=100, no_color=True),
                     {"summary": str(folder / "summary.json"), "report": str(folder / "report.html")})
    lines = buf.getvalue().splitlines()
    head = "\n".join(lines[:30])
    assert "every preset behaved as expected" in lines[0]
    assert "kafka-0.11" in head and "kafka-2.4" in head
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
    assert "joined leader" in text and "isrlab replay --expected" in text
    assert p.tags.count("details") == 2                     # the step tables, folded
    # the tables are the replay's, in Kafka's terms: broker columns, the failing step marked at its row's start
    assert "broker 0" in text and "changes" in text and "\n!! " in text and "VIOLATED: isr_entry_condition" in text
    assert "brokers.0." not in text and "null -> null" not in text
    # each diagram carries its legend and its caption
    assert p.classes.count("legend") >= 2 and p.classes.count("caption") >= 2
    assert report.resolve("seed0-abc", str(tmp_path)) == str(folder)
