"""Space-time diagrams of every archived counterexample (SVG parsed as XML, PNG checked), and ``isrlab explain``."""

from __future__ import annotations

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
    # LEO/HW/epoch along the lanes of brokers that host a replica ("-" before the first LeaderAndIsr)
    hosted = any(text != "-" for states in d.states for text in states.values())
    assert any("/e" in t for t in labels) == hosted
    assert hosted or all(t == "-" for t in labels)
    red = [e for e in root.iter(f"{SVG}text") if e.get("class") == "step-label" and e.get("fill") == "#b00000"]
    assert red and red[0].text.strip().startswith(str(d.violation_step))


@pytest.mark.unit
def test_truncations_and_elections_are_events():
    path = next(p for p in FILES if "kafka-0.10.2" in p.name)
    d = diagram.build(load_trace(str(path)))
    kinds = {k for ev in d.events for k in ev.kinds}
    assert {"truncation", "election", "append", "fetch", "control"} <= kinds


@pytest.mark.scenario
@pytest.mark.parametrize("path", FILES[:2], ids=lambda p: p.stem)
def test_cli_explain_png_and_svg(path, tmp_path):
    trace = load_trace(str(path))
    out = tmp_path / "d.png"
    r = CliRunner().invoke(explain, [str(path), "--png", str(out)])
    assert r.exit_code == 1, r.output
    assert r.stdout.strip() == trace.explanation
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    w, h = struct.unpack(">II", data[16:24])
    width, height, _ = diagram.scene(diagram.build(trace))
    assert (w, h) == (width, height) and h > 26 * len(trace.actions)
    assert data == diagram.to_png(diagram.build(trace))
    svg = tmp_path / "d.svg"
    r = CliRunner().invoke(explain, [str(path), "--svg", str(svg)])
    assert r.exit_code == 1 and ET.parse(svg).getroot().tag == f"{SVG}svg"


@pytest.mark.scenario
def test_cli_explain_bad_input(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    r = CliRunner().invoke(explain, [str(bad)])
    assert r.exit_code == 2 and r.stderr.startswith("isrlab: error:")
    r = CliRunner().invoke(explain, [str(FILES[0]), "--svg", "a.svg", "--png", "b.png"])
    assert r.exit_code == 2
