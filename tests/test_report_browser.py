"""The campaign's report in a real browser: headless Chromium loads the page from a file, logs no console message (the
page has no script, so any message is the browser's complaint: a malformed SVG attribute, a blocked load), and the
overview plot is in its DOM; an instrumented copy measures the layout: nothing wider than the window.

Skipped where no Chromium is installed (CI has none); here it comes from the system's packages
(``apt-get install chromium``).  The test starts the browser in a session of its own and, should it hang, stops that
session by the browser's PID.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from isrlab import report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.scenario,
              pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)")]
CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\] (.*)")
WIDTH = 1000           # narrower than a four-lane diagram (about 1,200 px): it must scale down


def _chromium(url: str, tmp_path: Path, *args: str) -> tuple[str, list[str]]:
    """(the DOM after load, the console messages) of ``url`` in headless Chromium at WIDTH px."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
           f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
           f"--window-size={WIDTH},900", *args, "--dump-dom", url]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)      # the browser's session: its zygote and renderers with it
        proc.communicate()
        raise
    assert proc.returncode == 0, err[-2000:]
    return out, [m.group(1) for m in map(CONSOLE.search, err.splitlines()) if m]


class _Tree(HTMLParser):
    """Which elements lie inside the element with id ``overview``."""

    def __init__(self):
        super().__init__()
        self.stack, self.inside = [], []

    def handle_starttag(self, tag, attrs):
        self.stack.append(dict(attrs).get("id"))
        if "overview" in self.stack:
            self.inside.append(tag)

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()


@pytest.fixture
def page(tmp_path) -> Path:
    from test_report import _campaign

    return Path(report.write(str(_campaign(tmp_path)), say_after=None))


def test_the_console_check_sees_a_page_complain(tmp_path):
    """The check below can fail: a script's console message and a malformed SVG path both reach it."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><body><script>console.error("boom")</script>'
                   '<svg><path d="M 0 0 L x"/></svg></body></html>')
    _dom, messages = _chromium(bad.as_uri(), tmp_path)
    assert any('"boom"' in m for m in messages) and any("attribute d" in m for m in messages), messages


def test_the_report_loads_without_a_console_message_and_shows_the_overview(page, tmp_path):
    dom, messages = _chromium(page.as_uri(), tmp_path)
    assert messages == []
    tree = _Tree()
    tree.feed(dom)
    # the overview is a figure holding the plot, its words as text (the legend, the presets)
    assert tree.inside[:2] == ["figure", "svg"] and "text" in tree.inside
    assert 'id="verdict-top"' in dom and 'id="verdict-end"' in dom


def test_nothing_in_the_report_is_wider_than_the_window(page, tmp_path):
    """The diagrams (about 1,200 px drawn) and the plots scale to the page's width: no horizontal scroll bar."""
    probe = page.with_name("probe.html")
    script = ("<script>const w = document.documentElement.clientWidth; const svgs = [...document.querySelectorAll("
              "'svg')].map(s => s.getBoundingClientRect().width); console.log('LAYOUT ' + JSON.stringify({w, "
              "scroll: document.documentElement.scrollWidth, widest: Math.max(...svgs), n: svgs.length}))</script>")
    probe.write_text(page.read_text().replace("</body>", script + "</body>"))
    _dom, messages = _chromium(probe.as_uri(), tmp_path)
    (line,) = [m for m in messages if "LAYOUT" in m]
    facts = json.loads(line[line.index("{"):line.rindex("}") + 1])
    w, scroll, widest, n = (facts[k] for k in ("w", "scroll", "widest", "n"))
    assert n == 3 and 0 < widest <= w and scroll <= w, line
