"""Malformed input, as users' broken files and flags are: every case a clean outcome (tests/malformed.py).

A clean outcome: no traceback, no hang (20 s), the exit code its oracle allows (2 for input that is
certainly bad), one ``isrlab: error:`` line on stderr for exit 2, and no file left behind.
benchmarks/malformed.py runs thousands of the same cases and prints the counts.
"""

from __future__ import annotations

import random

import pytest

from malformed import classify, generate, run_case

pytestmark = pytest.mark.unit

CASES = generate(seed=0, n=450)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_malformed_input_has_a_clean_outcome(case):
    o = run_case(case)
    verdict = classify(case, o)
    assert verdict == "ok", (f"{verdict}: isrlab {' '.join(a[:80] for a in case.args)} -> exit {o.code} "
                             f"(allowed {case.expect})\nstderr: {o.stderr[-1500:]}\nstdout: {o.stdout[-500:]}\n"
                             f"left: {o.leftovers}")


def test_the_corpus_covers_what_users_reported():
    names = " ".join(c.name for c in CASES)
    for what in ("fifo", "dev-zero", "deep", "bigint", "junk_actions", "violated", "--budget", "/dev/null/x",
                 "oversized", "nan"):
        assert what in names, what
    # every command and file the project reads: Parquet results, summary.json, isrlab.toml (and pyproject.toml),
    # traces, counterexample folders, the pytest plugin's trace folders
    for what in ("report:parquet:", "report:summary:", "campaigns:summary:", "report:campaign-counterexample:",
                 "promote:campaign-counterexample:", ":isrlab.toml:", ":pyproject.toml:", "pytest-plugin:",
                 "mutate:--mutant", "fuzz:resume:", "replay:isrlab.toml:", "explore:isrlab.toml:", "fuzz:isrlab.toml:",
                 "explore:checkpoint:", "report:summary:field:", "campaigns:summary:field:"):
        assert what in names, what
    # special files wherever a file is read: a FIFO named *.json, a symlink loop, an unreadable file
    for what in ("replay:fifo-named-json", "promote:symlink-loop", "shrink:dangling-symlink", "explain:unreadable",
                 "report:summary:fifo", "campaigns:summary:symlink-loop", "fuzz:resume:campaign.json-fifo",
                 "presets:isrlab.toml:folder"):
        assert what in names, what


def test_the_big_corpus_damages_every_field_of_a_summary():
    from malformed import _campaign_files, _json_paths, _summary_field_cases

    fields = {"/".join(map(str, p))[:40] for p in _json_paths(_campaign_files()["summary"]) if p}
    named = {c.name.split(":", 3)[3] for c in _summary_field_cases(random.Random(0), every=True)}
    assert named == fields and len(fields) > 40


def test_an_internal_error_counts_as_a_failure():
    from malformed import Case, Outcome

    case = Case("replay:x", ["replay", "t.json"])
    line = "isrlab: internal error: TypeError: x (a bug in isrlab, not in your input; traceback in /tmp/t.txt)\n"
    assert classify(case, Outcome(3, "", line, [])) == "internal error"
    assert classify(case, Outcome(2, "", "isrlab: error: t.json is not valid JSON\n", [])) == "ok"
