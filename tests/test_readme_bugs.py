"""The README's table of known bugs is the catalogue's own rendering (`isrlab bugs --markdown`): it cannot drift."""

from __future__ import annotations

import os

import pytest

from isrlab.cli import bugs_markdown

pytestmark = pytest.mark.unit


def test_readme_bugs_table_is_the_catalogue():
    text = open(os.path.join(os.path.dirname(__file__), os.pardir, "README.md"), encoding="utf-8").read()
    start = text.index("<!-- bugs table:")
    start = text.index("\n", start) + 1
    end = text.index("<!-- end of bugs table -->")
    assert text[start:end] == bugs_markdown(), "README's bugs table is stale: paste `isrlab bugs --markdown`"
