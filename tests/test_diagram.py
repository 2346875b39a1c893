"""Space-time diagrams of every archived counterexample (SVG parsed as XML, PNG by matplotlib checked), and
``isrlab explain``."""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab import diagram
from isrlab.explore_cmd import explain
from isrlab.model.trace import load_trace

FILES = sorted((Path(__file__).parent.parent / "counterexamples").glob("*.json"))
SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.unit
def test_archive_is_not_empty():
    assert FILES


@pytest.mark.unit
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_svg_of_each_counterexample(path):
    trace = load_trace(str(path))
    d = diagram.build(trace)
    text = diagram.to_svg(d)
    assert text == diagram.to_svg(diagram.build(trace))  # deterministic
    root = ET.fromstring(text)
    lanes = [e.get("id") for e in root.iter(f"{SVG}line") if e.get("class") == "lane"]
    assert lanes == ["lane-controller"] + [f"lane-broker-{b}" for b in range(trace.config.n_brokers)]
    (hl,) = [e for e in root.iter(f"{SVG}rect") if e.get("id") == "violation"]
    assert int(hl.get("data-step")) == d.violation_step == trace.violation["step"]
    events = [e for e in root.iter(f"{SVG}circle") if "event" in e.get("class", "")]
    assert len(events) == len(trace.actions)
    classes = " ".join(e.get("class") for e in events)
    # every kind of event the trace's actions make is drawn (control requests, appends, fetches, faults...)
    assert {diagram._KIND[type(a)] for a in trace.actions} <= set(classes.split()) and "control" in classes
    labels = [e.text for e in root.iter(f"{SVG}text") if e.get("class") == "replica-state"]
    # role LEO/HW e<epoch> along the lanes of brokers that host a replica ("-" before the first LeaderAndIsr or
    # metadata replay, "down" for a stopped broker, "log LEO/HW" for a restarted one's log not hosted yet)
    hosted = any(re.match(r"[LF] ", text) for states in d.states for text in states.values())
    assert any(re.match(r"[LF] \d+/\d+ e-?\d+", t) for t in labels) == hosted
    assert hosted or all(t in ("-", "down") or t.startswith("log ") for t in labels)
    red = [e for e in root.iter(f"{SVG}text") if e.get("class") == "step-label" and e.get("fill") == "#b00000"]
    assert red and red[0].text.strip().startswith(str(d.violation_step))
    # a message's line ends in an arrowhead of its own colour
    for line in (e for e in root.iter(f"{SVG}line") if "message" in e.get("class", "")):
        marker = line.get("marker-end")[len("url(#"):-1]
        (m,) = [e for e in root.iter(f"{SVG}marker") if e.get("id") == marker]
        assert m.find(f"{SVG}path").get("fill") == line.get("stroke")
    # the caption names the invariant and gives the sentence, in full; the legend explains the notation
    caption = " ".join(e.text for e in root.iter(f"{SVG}text") if e.get("class") == "caption")
    assert trace.violated in caption and " ".join(trace.explanation.split()) == caption.split(". ", 1)[1]
    legend = " ".join(e.text for e in root.iter(f"{SVG}text") if e.get("class") == "legend")
    assert "leader epoch" in legend and "LEO" in legend and "HW" in legend and "arrow" in legend
    # labels are never cut: each step's words are there whole
    steps = " ".join(e.text for e in root.iter(f"{SVG}text") if e.get("class") == "step-label")
    assert "..." not in steps
    for ev in d.events:
        if type(ev.action).__name__ != "DeliverControlRequest":
            assert ev.label in steps


@pytest.mark.unit
def test_control_request_deliveries_are_folded():
    path = next(p for p in FILES if "kafka-0.10.2" in p.name)
    d = diagram.build(load_trace(str(path)))
    rows = diagram.fold(d)
    assert len(rows) < len(d.events)
    for row in rows:
        if len(row) > 1:
            assert all(type(ev.action).__name__ == "DeliverControlRequest" for ev in row)
            assert len({ev.action.controller for ev in row}) == 1 and d.violation_step not in [ev.step for ev in row]
            assert [ev.step for ev in row] == list(range(row[0].step, row[-1].step + 1))
    assert [ev for row in rows for ev in row] == d.events


@pytest.mark.unit
def test_truncations_and_elections_are_events():
    path = next(p for p in FILES if "kafka-0.10.2" in p.name)
    d = diagram.build(load_trace(str(path)))
    kinds = {k for ev in d.events for k in ev.kinds}
    assert {"truncation", "election", "append", "fetch", "control"} <= kinds


@pytest.mark.scenario
@pytest.mark.parametrize("path", FILES[:2], ids=lambda p: p.stem)
def test_cli_explain_png_and_svg(path, tmp_path):
    from isrlab.properties.explain import attribution_lines
    from isrlab.properties.replay import attribution_of, replay

    trace = load_trace(str(path))
    out = tmp_path / "d.png"
    r = CliRunner().invoke(explain, [str(path), "--png", str(out)])
    assert r.exit_code == 0, r.output   # explained (it exits 1 only with --expected on a changed outcome)
    # the sentence, then the known bugs it is attributed to, then each replay behind that
    v = next(v for v in replay(trace, with_changes=False).violations if v.invariant == trace.violated)
    a = attribution_of(trace, v)
    summary, *evidence = attribution_lines(a)
    assert r.stdout.splitlines() == [trace.explanation, f"attribution: {summary}"] + [f"  {x}" for x in evidence]
    assert a.bugs and len(evidence) == len(a.evidence) >= 1
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    w, h = struct.unpack(">II", data[16:24])
    width, height, _ = diagram.scene(diagram.build(trace, attribution=a.summary()))
    assert (w, h) == (width, height) and h > 26 * len(trace.actions)
    assert data == diagram.to_png(diagram.build(trace, sentence=trace.explanation, attribution=a.summary()))
    svg = tmp_path / "d.svg"
    r = CliRunner().invoke(explain, [str(path), "--svg", str(svg)])
    assert r.exit_code == 0 and ET.parse(svg).getroot().tag == f"{SVG}svg"


@pytest.mark.unit
def test_the_attribution_line_is_drawn_under_the_caption():
    """Given, the attribution is its own wrapped line(s) under the caption, and the caption stays the sentence; not
    given, there is none."""
    trace = load_trace(str(FILES[0]))
    line = "acked_durability: unflushed-crash-loss (with unflushed-crash-loss fixed, acked_durability holds)"
    root = ET.fromstring(diagram.to_svg(diagram.build(trace, attribution=line)))
    texts = [e for e in root.iter(f"{SVG}text") if e.get("class") in ("caption", "attribution")]
    kinds = [e.get("class") for e in texts]
    assert kinds == sorted(kinds, key=("caption", "attribution").index) and "attribution" in kinds
    assert " ".join(e.text for e in texts if e.get("class") == "attribution") == f"Attribution: {line}"
    ys = [float(e.get("y")) for e in texts]
    assert ys == sorted(ys) and len(set(ys)) == len(ys)          # one line each, top down, none overlapping
    plain = ET.fromstring(diagram.to_svg(diagram.build(trace)))
    assert not [e for e in plain.iter(f"{SVG}text") if e.get("class") == "attribution"]


@pytest.mark.scenario
def test_cli_explain_bad_input(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    r = CliRunner().invoke(explain, [str(bad)])
    assert r.exit_code == 2 and r.stderr.startswith("isrlab: error:")
    r = CliRunner().invoke(explain, [str(FILES[0]), "--svg", "a.svg", "--png", "b.png"])
    assert r.exit_code == 2


@pytest.mark.scenario
def test_png_is_the_same_bytes_in_any_process(tmp_path):
    """matplotlib's PNG carries no date or version and no hash-ordered drawing: two processes under different
    PYTHONHASHSEEDs write the same bytes."""
    import os
    import subprocess
    import sys

    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"d{seed}.png"
        code = ("import sys; from isrlab import diagram; from isrlab.model.trace import load_trace; "
                "open(sys.argv[2], 'wb').write(diagram.to_png(diagram.build(load_trace(sys.argv[1]))))")
        subprocess.run([sys.executable, "-c", code, str(FILES[0]), str(out)], check=True, timeout=120,
                       env=dict(os.environ, PYTHONHASHSEED=seed))
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0][:8] == b"\x89PNG\r\n\x1a\n"


def test_a_controller_failover_is_drawn_on_the_controller_lane():
    """ControllerFailover names no broker: the diagram draws it on the controller's lane (a report crashed on it)."""
    from isrlab.model import actions as A
    from isrlab.model.config import preset
    from isrlab.model.step import apply, initial_state
    from isrlab.model.trace import Trace

    cfg = preset("kafka-3.6").config
    actions = [A.MetadataApply(0), A.MetadataApply(1), A.MetadataApply(2), A.ControllerFailover()]
    s = initial_state(cfg)
    for a in actions:
        s = apply(cfg, s, a)
    d = diagram.build(Trace(config=cfg, actions=actions))
    failover = [e for e in d.events if "fails over" in e.label]
    assert len(failover) == 1 and failover[0].lane == diagram.CONTROLLER
    assert "<svg" in diagram.to_svg(d)


def _crosses(line, box) -> bool:
    """Whether a drawn message line passes through a box (its points every pixel, the arrowhead's tip included)."""
    x1, y1, x2, y2 = (float(line.get(k)) for k in ("x1", "y1", "x2", "y2"))
    n = int(max(abs(x2 - x1), abs(y2 - y1))) + 1
    return any(box[0] <= x1 + (x2 - x1) * i / n <= box[2] and box[1] <= y1 + (y2 - y1) * i / n <= box[3]
               for i in range(n + 1))


@pytest.mark.unit
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_no_replica_state_label_covers_a_message(path):
    """A replica's state label sits on a white ground beside its lane: never where a message of its row passes, so no
    arrow is hidden under a label; and no two labels overlap."""
    root = ET.fromstring(diagram.to_svg(diagram.build(load_trace(str(path)))))
    grounds = [tuple(float(r.get(k)) for k in ("x", "y", "width", "height"))
               for r in root.iter(f"{SVG}rect") if r.get("class") == "replica-state-ground"]
    boxes = [(x, y, x + w, y + h) for x, y, w, h in grounds]
    messages = [e for e in root.iter(f"{SVG}line") if "message" in e.get("class", "")]
    for box in boxes:
        assert not [m for m in messages if _crosses(m, box)], box
    for i, a in enumerate(boxes):
        assert not [b for b in boxes[i + 1:] if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]], a


@pytest.mark.unit
def test_long_step_labels_wrap_so_that_a_diagram_is_about_a_page_wide():
    """No step label line is longer than LABEL_CHARS (labels wrap at spaces, whole words), so that a four-lane
    diagram stays within 1,200 px, the report's page width, instead of 1,650."""
    widths, moved = [], 0
    for path in FILES:
        trace = load_trace(str(path))
        root = ET.fromstring(diagram.to_svg(diagram.build(trace)))
        lines = [e.text for e in root.iter(f"{SVG}text") if e.get("class") == "step-label"]
        assert max(len(t) for t in lines) <= diagram.LABEL_CHARS
        if trace.config.n_brokers == 3:
            widths.append(int(root.get("width")))
        # labels a message would have crossed on the right of their lane went left of it
        moved += sum(e.get("text-anchor") == "end" for e in root.iter(f"{SVG}text")
                     if e.get("class") == "replica-state")
    assert widths and max(widths) <= 1200 and moved > 0
