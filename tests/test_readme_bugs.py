"""The table of known bugs lives in the documentation's reference, generated from the catalogue when the site is
built (docs/hooks.py renders `isrlab bugs --markdown`), so it cannot drift; the README links to it and keeps no copy."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from isrlab.cli import bugs_markdown

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent


def test_the_reference_bugs_page_is_the_catalogue():
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import hooks
    finally:
        sys.path.remove(str(ROOT / "docs"))
    page = hooks.page_bugs()
    assert bugs_markdown() in page
    from isrlab.model.bugs import BUGS

    assert all(f"| {b.id} |" in page for b in BUGS.values())


def test_the_readme_links_to_the_bugs_reference_and_keeps_no_copy():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "reference/bugs" in text
    assert "| bug | kind | fixed by |" not in text, "a copy of the bugs table would drift: link the reference"
