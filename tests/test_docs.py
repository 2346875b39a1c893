"""The documentation site (mkdocs.yml, docs/) builds with `mkdocs build --strict`, into a temporary folder so the
checkout stays clean; its generated pages hold what the code holds (docs/hooks.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.unit, pytest.mark.xdist_group("docs")]   # one site build per worker: keep them together

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("mkdocs", reason="the test extra installs MkDocs (pip install -e '.[test]')")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
                        "--site-dir", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def _text(path: Path) -> str:
    return re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8"))


def test_the_site_builds_strict_and_leaves_the_checkout_as_it_was(site):
    assert (site / "index.html").is_file()
    # the generated pages exist only in the built site, never as files of the checkout
    for page in ("reference/presets.md", "reference/bugs.md", "findings/index.md", "fidelity/model.md"):
        assert not (ROOT / "docs" / page).exists(), page


def test_the_reference_is_the_code(site):
    from isrlab.model.bugs import BUGS
    from isrlab.model.config import PRESETS
    from isrlab.properties.invariants import CATALOGUE, LIVENESS

    presets = _text(site / "reference" / "presets" / "index.html")
    assert all(name in presets for name in PRESETS)
    invariants = _text(site / "reference" / "invariants" / "index.html")
    assert all(i.name in invariants for i in (*CATALOGUE, *LIVENESS))
    flags = _text(site / "reference" / "flags" / "index.html")
    assert all(b.flag in flags for b in BUGS.values())
    cli = _text(site / "reference" / "cli" / "index.html")
    from isrlab.cli import main

    assert all(f"isrlab {name}" in cli for name in main.commands)
    trace = _text(site / "reference" / "trace-format" / "index.html")
    assert "provenance" in trace and "attribution" in trace


def test_every_known_bug_has_a_findings_page_with_its_archived_trace(site):
    import sys as _sys

    _sys.path.insert(0, str(ROOT / "docs"))
    try:
        import hooks
    finally:
        _sys.path.remove(str(ROOT / "docs"))
    from isrlab.model.bugs import BUGS

    traces = hooks.archived()
    for b in BUGS.values():
        page = site / "findings" / hooks.bug_page(b.id).removesuffix(".md") / "index.html"
        assert page.is_file(), b.id
        mine = [t for t in traces if b.id in (t.get("attribution") or {}).get("bugs", [])]
        if mine and b.id not in hooks.WRITTEN:
            text = page.read_text(encoding="utf-8")
            assert "diagrams/" in text and ".svg" in text, b.id
            assert min(mine, key=lambda t: (len(t["actions"]), t["file"]))["file"] in text
    timed = _text(site / "findings" / "kafka-7128" / "index.html")
    assert "Time to find it" in timed and "attributed_finds.py" in timed


def test_readme_links_resolve_and_it_stays_short():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    for target in re.findall(r"\]\(([^)#\s]+)", text):
        if "://" in target:
            continue
        assert (ROOT / target).exists(), f"README links to {target}, which does not exist"


def _isrlab_commands(text: str):
    """The isrlab command lines of a page's bash blocks: (line, subcommand, options)."""
    import shlex

    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            m = re.match(r"^(?:\.venv/bin/)?isrlab\s+(.*)$", line)
            if not m:
                continue
            words = shlex.split(m.group(1))
            yield line, words[0], [w.split("=")[0] for w in words[1:] if w.startswith("--")]


def test_the_isrlab_commands_the_pages_print_exist():
    """Every `isrlab SUBCOMMAND --option` in the README's and the hand-written pages' bash blocks names a command and
    options the CLI has (a renamed option would leave a page that fails when pasted)."""
    from isrlab.cli import main

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    seen = 0
    for page in pages:
        for line, sub, options in _isrlab_commands(page.read_text(encoding="utf-8")):
            if sub in ("--help", "-h", "--version"):
                continue
            assert sub in main.commands, f"{page.name}: {line}: no command {sub}"
            known = {o for p in main.commands[sub].params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
            assert set(options) <= known, f"{page.name}: {line}: unknown {sorted(set(options) - known)}"
            seen += 1
    assert seen >= 10
