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
        table = pa.table({"shard": pa.array([0, 0], pa.int32()), "run_index": pa.array([0, 1], pa.int32()),
                          "seed": pa.array([7, 8], pa.int64()),
                          "steps": pa.array([1000, 2000], pa.int32()),
                          "kind_counts": pa.array([[("Produce", 3)], [("Produce", 1), ("Tick", 2)]],
                                                  pa.map_(pa.string(), pa.int32())),
                          "error_codes": [["NONE"], ["NONE", "FENCED_LEADER_EPOCH"]], "witnesses": [[], ["hw_advances"]],
                          "violation": [None, None],
                          "violations": pa.array([[], viol], pa.list_(violation))})   # in the second run
        pq.write_table(table, part / "part-0.parquet")
    # one task per preset, 6 s for its 3,000 steps: the second run's violation at step 31 came (1,000 + 31) x 2 ms in
    (folder / "shards").mkdir()
    pq.write_table(pa.table({"preset": ["kafka-0.11", "kafka-2.4", "kafka-2.4"],
                             "shard": pa.array([0, 0, 0], pa.int32()),
                             "steps": pa.array([3000, 1, 3000], pa.int64()), "seconds": [6.0, 1.0, 6.0],
                             "attempt": pa.array([0, 0, 1], pa.int32())}), folder / "shards" / "part-0.parquet")
    summary = {"campaign": "seed0-abc", "master": "local[2]", "tasks": 2, "runs": 4, "steps": 6000,
               "steps_per_second_in_shards": 1000.0, "seconds": {"total_s": 6.0},
               "spec": {"engine": "guided", "seed": 0, "shard_budget_s": 6.0},
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
    # the two diagrams and the overview; with two runs a preset's histogram and coverage curves say nothing: its runs
    # are listed instead, and the page says the rule
    assert p.classes.count("diagram") == 2 and p.tags.count("svg") == 2 + 1 and "overview" in p.ids
    assert 'title="steps to the first violation"' not in page and "coverage over" not in page
    assert html.escape(report.PLOT_RULE) in page and p.classes.count("runs") == 2
    assert "isr_entry_condition at step 31" in text
    assert "joined leader" in text and "isrlab replay --expected" in text and "isrlab explain" in text
    assert "as expected: every expected bug found and attributed by its fix" in text
    # each counterexample's attribution (found or known for its preset), with one replay per fix tried
    # the sections' and the diagrams' (a line or two each)
    assert page.count('<div class="attribution">') == 2 and p.classes.count("attribution") >= 2 + 2
    assert p.classes.count("evidence") == 2
    assert ('<span class="found">a bug kafka-0.11 expects</span>): isr_entry_condition: KAFKA-7128 and KIP-320 '
            in page)
    assert '<span class="known">a known bug kafka-0.11 does not expect</span>): hw_within_isr: KIP-320 (' in page
    for line in ("with KAFKA-7128 fixed, isr_entry_condition holds throughout",
                 "with KAFKA-7128 fixed, hw_within_isr still fails, at step 39",
                 "with KIP-320 fixed, hw_within_isr holds throughout"):
        assert f"<li>{line}</li>" in page, line
    # the step tables, the presets' table, each preset's detail and the campaign's specification, folded
    assert p.tags.count("details") == 2 + 1 + 2 + 1 and p.classes.count("preset") == 2
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


def _ids_in_order(page: str) -> list:
    return re.findall(r'(?:id|class)="(verdict-top|overview|counterexample|summary|preset|verdict-end)"', page)


def test_the_verdict_comes_first_and_last_with_a_line_per_bug(tmp_path):
    """The verdict with one line per bug and its count at the top, then the overview, the counterexamples, the presets
    (table, then each folded), and the verdict again last, where the eye lands."""
    folder = _campaign(tmp_path)
    page = report.render(str(folder))
    assert report.render(str(folder)) == page                  # deterministic: plots, diagrams and all
    order = _ids_in_order(page)
    assert order[:3] == ["verdict-top", "overview", "counterexample"] and order[-1] == "verdict-end"
    assert order.index("summary") > order.index("counterexample") and order[-3:-1] == ["preset", "preset"]
    for where in ("top", "end"):
        block = page[page.index(f'id="verdict-{where}"'):]
        block = block[:block.index("</div>")]
        assert re.findall(r"<li[^>]*>(.*?)</li>", block) == [
            "found: KAFKA-7128 in 1 preset (kafka-0.11), 2 counterexamples",
            "known, not expected: KIP-320 in 1 preset (kafka-0.11), 1 counterexample"]
        assert "as expected: every expected bug found" in block
    assert page.rstrip().endswith("</ul></div>\n</body></html>")


def test_verdict_lines_put_the_unexpected_first_then_the_missed():
    summary = {"as_expected": False, "presets": [
        {"preset": "a", "verdict": "not found", "violated": [], "found": [], "not_found": ["KAFKA-1"], "known": []},
        {"preset": "b", "verdict": "UNEXPECTED", "violated": ["x"], "found": ["KAFKA-2"], "not_found": [],
         "known": ["KAFKA-3"], "unexpected": [{"invariant": "x"}]}],
        "counterexamples": [{"preset": "b", "invariant": "x", "kind": "unexpected"},
                            {"preset": "b", "invariant": "x", "kind": "unexpected"},
                            {"preset": "b", "invariant": "y", "kind": "found", "bugs": ["KAFKA-2"]}]}
    cls, head, lines = report.verdict_lines(summary)
    assert (cls, head) == ("UNEXPECTED", "UNEXPECTED violations, no known bug's fix removes them: b")
    assert lines == [("UNEXPECTED", "UNEXPECTED: x in 1 preset (b), 2 counterexamples"),
                     ("notfound", "not found: KAFKA-1 in 1 preset (a), within the budget"),
                     ("found", "found: KAFKA-2 in 1 preset (b), 1 counterexample"),
                     ("known", "known, not expected: KAFKA-3 in 1 preset (b), 0 counterexamples")]


def test_the_overview_times_each_preset_first_telling_violation(tmp_path):
    """Seconds into the shard from the shard's own rate, the earlier runs' steps counted; a preset with nothing found
    at its shard's time (its last attempt's); steps instead when the campaign has no shards table."""
    folder = _campaign(tmp_path)
    summary = report.load_summary(str(folder))
    runs = report.load_runs(str(folder))
    points, unit = report.first_violations(summary["presets"], runs, report.load_shards(str(folder)))
    assert unit == "seconds"
    assert [(pt["preset"], pt["status"]) for pt in points] == [("kafka-0.11", "found"), ("kafka-2.4", "pass")]
    assert points[0]["at"] == pytest.approx(1031 * 6.0 / 3000) and points[1]["at"] is None
    assert points[1]["x"] == pytest.approx(6.0)
    page = report.render(str(folder))
    overview = html.unescape(page[page.index('id="overview"'):page.index("</figure>")])
    for words in ("expected bug found (1)", "expected to pass, nothing found (at the budget) (1)",
                  "each shard's budget (6 s)", "seconds into the shard"):
        assert words in overview, words
    shutil.rmtree(folder / "shards")
    points, unit = report.first_violations(summary["presets"], runs, report.load_shards(str(folder)))
    assert unit == "steps" and points[0]["at"] == 1031 and points[1]["x"] == 3000


def test_per_preset_plots_are_drawn_only_from_enough_points():
    """From MIN_VIOLATIONS_FOR_HISTOGRAM first violations and MIN_RUNS_FOR_COVERAGE runs on, with integer ticks on
    their count axes; one point fewer, neither."""
    import xml.etree.ElementTree as ET

    def runs(n):
        return [{"preset": "p", "shard": 0, "run_index": i, "seed": i, "steps": 100 + i,
                 "kind_counts": {"Produce": 1, **({"Tick": 2} if i > 2 else {})}, "error_codes": ["NONE"],
                 "witnesses": [], "violations": [{"invariant": "x", "step": 10 + i % 7}]} for i in range(n)]

    n = max(report.MIN_VIOLATIONS_FOR_HISTOGRAM, report.MIN_RUNS_FOR_COVERAGE)
    plots = report._plots("p", runs(n))
    assert [t for t, _ in plots] == ["steps to the first violation", "coverage"]
    for _title, svg in plots:
        ticks = [t.text for g in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}g") if "ytick" in g.get("id", "")
                 for t in g.iter("{http://www.w3.org/2000/svg}text")]
        assert ticks and all(re.fullmatch(r"\d+", t) for t in ticks), ticks
    assert report._plots("p", runs(report.MIN_RUNS_FOR_COVERAGE - 1)) == []


def test_the_report_says_each_phase_on_stderr(tmp_path):
    """Each phase's line, as ``say_after=0`` says them all at once (by default a phase says it once it has run 2 s)."""
    folder = _campaign(tmp_path)
    err = io.StringIO()
    report.render(str(folder), say_after=0, stream=err)
    assert err.getvalue().splitlines() == ["report: reading 2 Parquet tables…", "report: drawing the overview of 2 "
                                           "presets…", "report: drawing the plots of 2 presets…",
                                           "report: replaying and drawing up to 2 diagrams…"]
    quiet = io.StringIO()
    report.render(str(folder), say_after=None, stream=quiet)
    assert quiet.getvalue() == ""


def test_counterexamples_group_by_bug_and_only_the_shortest_is_drawn(tmp_path, monkeypatch):
    """One group per bug, its shortest drawn and the rest listed with the command that draws each; past the page's
    budget a group is listed only."""
    folder = _campaign(tmp_path)
    summary = json.loads((folder / "summary.json").read_text())
    groups = report.bug_groups(console.fold(summary["counterexamples"]))
    assert [(kind, name, [n for _c, n in items]) for kind, name, items in groups] == [
        ("found", "KAFKA-7128", [2]), ("known", "KIP-320", [1])]
    monkeypatch.setattr(report, "DRAWN_BUDGET", 1)
    page = report.render(str(folder))
    assert page.count('class="counterexample"') == 0 and page.count("not drawn here") == 2
    assert "isrlab explain " in page and "--svg" in page


def test_the_page_keeps_under_its_budget_whatever_the_rest_of_it_weighs(tmp_path, monkeypatch):
    """The diagrams get only what the rest of the page leaves: with a page budget just above what the page weighs
    without them, none is drawn, and the page, in UTF-8 bytes, stays within the budget."""
    folder = _campaign(tmp_path)
    bare = report.render(str(folder))
    monkeypatch.setattr(report, "DRAWN_BUDGET", 1)
    undrawn = len(report.render(str(folder)).encode())
    monkeypatch.setattr(report, "DRAWN_BUDGET", 10**9)
    monkeypatch.setattr(report, "PAGE_BUDGET", undrawn + 2000)
    page = report.render(str(folder))
    assert len(page.encode()) <= undrawn + 2000 and page.count('class="counterexample"') == 0
    assert bare.count('class="counterexample"') == 2       # with the default budgets both groups are drawn
