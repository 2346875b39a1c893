"""The counterexample archive: every file replays to the violation it records."""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab.campaign import scope_base, scope_config
from isrlab.cli import main
from isrlab.model import actions as A
from isrlab.model.config import PRESETS
from isrlab.model.trace import load_trace, validate_json
from isrlab.properties.explore import search_args

pytestmark = pytest.mark.unit

ARCHIVE = Path(__file__).resolve().parent.parent / "counterexamples"
FILES = sorted(ARCHIVE.glob("*.json"))
NAME = re.compile(r"^\d{4}-\d{2}-\d{2}-(?P<preset>[a-z0-9.\-]+?)-(?P<invariant>[a-z_]+)-[0-9a-f]{12}\.json$")


def test_archive_is_not_empty():
    assert FILES, "counterexamples/ holds no trace: the regression corpus must not be empty"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_counterexample_replays_to_its_violation(path):
    data = json.loads(path.read_text())
    validate_json(data, actions_by_schema=True)
    trace = load_trace(str(path))
    m = NAME.match(path.name)
    # the invariant in the name: test_file_is_named_by_the_invariant_broken_first_on_replay
    assert m and m["preset"] == trace.preset, path.name
    assert trace.expect == "violation"
    assert trace.explanation and trace.provenance.get("engine"), "archived files carry their story"
    # the preset's configuration, or for a trace met in a small scope (``isrlab fuzz --engine scopes``) that scope's
    assert scope_config(trace.preset, trace.provenance.get("scope")) == trace.config
    r = CliRunner().invoke(main, ["replay", str(path), "--json"])
    assert r.exit_code == 1, r.output
    out = json.loads(r.stdout)
    assert out["matches_expectation"], out["violations"]
    first = next(v for v in out["violations"] if v["invariant"] == trace.violated)
    assert first["step"] == len(trace.actions), "the archived trace ends at its violation (shrunk)"


def _fixed_name(trace) -> str:
    """kafka-2.4 (every fix in), alter-isr for the AlterIsr presets, truncate-on-fetch for the truncate-on-fetch ones,
    epoch-requests-in-flight for those with the OffsetsForLeaderEpoch round in two steps, the KRaft release with every
    fix for the KRaft ones."""
    c = trace.config
    if c.kip_500:            # KRaft: the release with every fix in (4.1's ELR for the lossy-crash and min-ISR-2 ones)
        if c.crash_loses_unflushed_data:
            return "kafka-4.1-lossy-crash"
        if c.max_disk_wipes:
            return "kafka-4.1-isr-expand-window" if c.isr_expand_window else "kafka-4.1-disk-wipe"
        if c.min_insync_replicas == 2:
            return "kafka-4.1-min-isr-2"
        return "kafka-4.1" if c.eligible_leader_replicas else "kafka-4.0"
    if c.max_delete_records or c.max_retention_runs:
        return "log-start-offset"    # the log start offset's actions need their budgets
    if trace.config.kafka_10554:
        return "truncate-on-fetch"
    if trace.config.offsets_for_leader_epoch_in_flight:
        return "epoch-requests-in-flight"
    if trace.config.kip_497 and trace.config.kafka_10706:
        return "alter-isr-kafka-14140"   # no-kafka-14140's base: alter-isr with KAFKA-10706
    return "alter-isr" if trace.config.kip_497 else "kafka-2.4"


#: the actions a KRaft fix may leave out of a counterexample's replay (see test_counterexample_is_gone_on_kafka_2_4)
_KRAFT_FIX_ENDS = (A.MetadataApply, A.AlterIsrRequest, A.AlterIsrResponse, A.PrepareIsrExpand)


def _fixed_config(trace):
    """``_fixed_name``'s configuration, for KRaft with the pending-reset race's fix too (a model fix, in no release),
    with the trace's AlterIsrFailed budget."""
    from isrlab.model.bugs import BUGS, with_fix
    from isrlab.model.config import preset

    cfg = preset(_fixed_name(trace)).config
    scope = trace.provenance.get("scope")
    if scope is not None:   # met in a small scope: the fixed release within the same bounds
        cfg = search_args(cfg, {**scope_base(trace.preset), **scope})[0]
    if trace.config.max_alter_isr_failures:   # a fault's budget, no fix: the fixed release meets the same answers
        cfg = cfg.replace(max_alter_isr_failures=trace.config.max_alter_isr_failures)
    return with_fix(cfg, [BUGS["pending-reset-race"]]) if cfg.kip_500 else cfg


def _fixed(trace):
    """The trace's actions on the preset with every fix in (``_fixed_config``), expecting a pass."""
    import dataclasses

    return dataclasses.replace(trace, config=_fixed_config(trace), preset=_fixed_name(trace), expect="pass",
                               violated=None, violation=None, explanation="", checks=[], attribution=None)


def test_the_archive_and_its_fixes_as_plugin_items(tmp_path):
    """The regression folder through the pytest plugin, as a user's project would run it (its own rootdir),
    beside each counterexample moved to the preset with the fix and expecting a pass: every file one
    item named after it; the archive reproduces every violation; the fixes pass the whole catalogue, except
    kafka-0.10.2's (and no-kafka-2143's, on its settings), whose new follower fetches before it asks OffsetsForLeaderEpoch (not enabled on kafka-2.4,
    see test_counterexample_is_gone_on_kafka_2_4): those fail with the action the model refuses."""
    import subprocess
    import sys
    import xml.etree.ElementTree as ET

    from isrlab.model.trace import dumps_trace

    fixes = tmp_path / "fixes"
    fixes.mkdir()
    for path in FILES:
        (fixes / path.name).write_text(dumps_trace(_fixed(load_trace(str(path)))))
    report = tmp_path / "report.xml"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                        "--junitxml", str(report), "--isrlab-traces", str(ARCHIVE),
                        "--isrlab-traces", "fixes"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1) and "Traceback" not in r.stdout, r.stdout + r.stderr
    outcome = {}
    for case in ET.parse(report).iter("testcase"):
        folder = "fixes" if case.get("classname").startswith("fixes.") else "archive"
        failure = case.find("failure")
        outcome[folder, case.get("name")] = None if failure is None else failure.get("message")
    names = [p.name for p in FILES]
    assert sorted(outcome) == sorted([("archive", n) for n in names] + [("fixes", n) for n in names])
    assert not [n for n in names if outcome["archive", n] is not None], r.stdout
    for n in names:
        message = outcome["fixes", n]
        trace = load_trace(str(ARCHIVE / n))
        if trace.config.truncation == "hw":     # kafka-0.10.2, no-kafka-2143: a follower fetches before truncating
            assert message and re.match(r"the trace does not replay: action \d+: FetchRequest\(broker=\d, "
                                        r"partition=0\) is not enabled", message), (n, message)
        elif not trace.config.kafka_5634:
            # with KAFKA-5634 the retention run that passed the HW has nothing to delete
            assert message is None or re.match(r"the trace does not replay: action \d+: DeleteOldSegments\(", message), \
                (n, message)
        elif trace.config.kip_500:
            # a KRaft fix changes what the leader proposes or what the controller writes (_KRAFT_FIX_ENDS)
            assert message is None or re.match(r"the trace does not replay: action \d+: (MetadataApply|AlterIsrRequest|"
                                               r"AlterIsrResponse|PrepareIsrExpand)\(", message), (n, message)
        elif trace.config.kip_497 and not trace.config.kafka_14140 and _fixed_name(trace) == "alter-isr-kafka-14140":
            # with KAFKA-14140 the leader proposes no dead follower: its AlterIsr is never sent
            assert message is None or re.match(r"the trace does not replay: action \d+: AlterIsrRequest\(", message), \
                (n, message)
        else:
            assert message is None, (n, message)


def test_every_breaking_preset_has_an_archived_counterexample():
    archived = {(load_trace(str(p)).preset, load_trace(str(p)).violated) for p in FILES}
    missing = [(name, p.expected) for name, p in PRESETS.items()
               if p.expected != "pass" and (name, p.expected) not in archived]
    assert not missing, f"no archived counterexample for {missing}"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_stored_explanation_is_what_explain_says_today(path):
    """The one sentence in each file is the explainer's sentence for its trace and violation (kept in step)."""
    from isrlab.properties.explain import sentence
    from isrlab.properties.invariants import Violation

    trace = load_trace(str(path))
    assert trace.explanation == sentence(trace.config, trace.actions, Violation(**trace.violation))


def test_a_leader_that_lost_an_acknowledged_record_in_its_own_epoch_is_explained_as_such():
    """Acknowledged at step 16 by broker 0, which has led epoch 0 since step 3: the sentence must not say it
    'became leader at step 3 without it' (the record did not exist then), but that it no longer has it."""
    from isrlab.properties.explain import sentence
    from isrlab.properties.invariants import Violation

    trace = load_trace(str(ARCHIVE / "2026-11-22-crash-loses-unflushed-acked_durability-42d14fe9fb83.json"))
    text = sentence(trace.config, trace.actions, Violation(**trace.violation))
    assert "acknowledged to an acks=all producer at step 16" in text
    assert "broker 0, leader in epoch 0 since step 3, no longer has it at step 22" in text
    assert "became leader" not in text


def test_kafka_7415_counterexample_is_gone_with_the_fix():
    """The archived no-kafka-7415 trace, replayed with KAFKA-7415 on: every action is still enabled, and at
    the violating step the follower truncated only its uncommitted record (LEO 1, the zombie leader's HW)."""
    from isrlab.model.step import initial_state, step
    from isrlab.properties.shrink import first_violation

    (path,) = ARCHIVE.glob("*-no-kafka-7415-hw_within_isr-*.json")
    trace = load_trace(str(path))
    assert first_violation(trace.config, trace.actions, "hw_within_isr") is not None
    fixed = trace.config.replace(kafka_7415=True)
    s = initial_state(fixed)
    for a in trace.actions:
        s = step(fixed, s, a)
        assert s is not None, f"{a} is not enabled with KAFKA-7415"
    v = trace.violation["facts"]
    assert s.brokers[v["follower"]].logs[v["partition"]].log_end_offset == v["high_watermark"]
    assert first_violation(fixed, trace.actions, "hw_within_isr") is None


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_counterexample_is_gone_on_kafka_2_4(path):
    """Found before the fix, gone after it: each archived trace replayed on kafka-2.4 (every fix in), or, for
    the AlterIsr presets (KIP-497), on alter-isr (every AlterIsr fix in), or, with truncate on fetch
    (KAFKA-10554), on truncate-on-fetch, or, for KRaft, on the release with every fix in, the pending-reset
    race's included (``_fixed_config``).

    The presets differ from those only in protocol flags, so the same actions apply.  Every action stays
    enabled and the recorded invariant holds throughout, except for kafka-0.10.2's traces: under epoch
    truncation a new follower must send OffsetsForLeaderEpoch before it fetches, so their first fetch after
    becoming a follower is not enabled there (which is the fix: truncation no longer goes by the HW).
    """
    from isrlab.model.state import TRUNCATING
    from isrlab.model.step import initial_state, step
    from isrlab.properties.shrink import first_violation

    trace = load_trace(str(path))
    fixed = _fixed_config(trace)
    differing = {f for f in fixed.__dataclass_fields__ if getattr(fixed, f) != getattr(trace.config, f)}
    assert differing <= {"truncation", "kip_320", "kafka_7128", "kafka_7415", "kafka_7164", "kafka_6082", "kip_380",
                         "crash_loses_unflushed_data", "kafka_12686", "kafka_12751", "kafka_13091",
                         "partition_epoch_check", "kafka_13141", "kafka_14704", "kafka_7786", "kafka_13916",
                         "kafka_15021", "kafka_15583", "isr_join_requires_hw", "eligible_leader_replicas", "kip_903",
                         "kafka_5634", "kafka_9491", "kafka_2143", "old_message_format_partitions", "kafka_14140",
                         "kafka_15221", "make_leader_keeps_pending_isr", "kafka_19522", "kafka_14010"}, differing
    s = initial_state(fixed)
    for i, a in enumerate(trace.actions):
        after = step(fixed, s, a)
        if after is None and trace.config.kip_500:
            # KIP-841 leaves the fenced replica unproposed, the ELR makes the controller write other records: the
            # replay ends at the first proposal or record the fixed model does not have, the invariant held so far
            assert type(a) in _KRAFT_FIX_ENDS, f"{a} is not enabled on {_fixed_name(trace)}"
            assert first_violation(fixed, trace.actions[:i], trace.violated) is None
            return
        if after is None and trace.config.kip_497 and not trace.config.kafka_14140 and fixed.kafka_14140:
            # KAFKA-14140: the leader proposes no follower its metadata cache holds dead, so no AlterIsr goes out
            assert type(a).__name__ == "AlterIsrRequest", f"{a} is not enabled on {_fixed_name(trace)}"
            assert first_violation(fixed, trace.actions[:i], trace.violated) is None
            return
        if after is None and not trace.config.kafka_5634:
            # KAFKA-5634's fix: the retention run that deleted at or above the HW has nothing to delete there
            assert type(a).__name__ == "DeleteOldSegments", f"{a} is not enabled on {_fixed_name(trace)}"
            assert first_violation(fixed, trace.actions[:i], trace.violated) is None
            return
        if after is None:
            assert trace.config.truncation == "hw", f"{a} is not enabled on kafka-2.4"
            assert type(a).__name__ == "FetchRequest" and s.brokers[a.broker].fetchers[a.partition].state == TRUNCATING
            return
        s = after
    assert first_violation(fixed, trace.actions, trace.violated) is None



# --------------------------------------------------------------------------- attribution: which known bug each file is
#: counterexamples archived from this day on record their attribution (isrlab fuzz writes it); older files are
#: attributed here on today's model, as the archive would record them, until the archive is updated
ATTRIBUTED_SINCE = "2026-11-29"


@functools.lru_cache(maxsize=None)
def _attribution(name: str):
    """The archived file's attribution computed on today's replay (``replay.attribution_of``), recorded or not."""
    from isrlab.properties.replay import attribution_of, replay

    trace = load_trace(str(ARCHIVE / name))
    result = replay(trace, with_changes=False)
    if result.attribution is not None:
        return result.attribution        # computed on the replay, the recorded one checked against it below
    return attribution_of(trace, next(v for v in result.violations if v.invariant == trace.violated))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_counterexample_carries_its_attribution(path):
    """A file records which known bugs its violation is (or predates the archive's attributions), and what it records
    is what the replay attributes it to today."""
    from isrlab.properties.replay import replay, stored_attribution

    trace = load_trace(str(path))
    stored = stored_attribution(trace)
    assert stored is not None or path.name < ATTRIBUTED_SINCE, f"{path.name} records no attribution"
    if stored is not None:
        assert stored.invariant == trace.violated
        assert replay(trace, with_changes=False).attribution_problem is None
        assert set(stored.bugs) == set(_attribution(path.name).bugs)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_counterexample_is_gone_with_its_attributed_fixes(path):
    """Each archived violation is some known bug's (none is UNEXPECTED: a new finding is not a regression test
    until the catalogue names it), and replayed with that bug's fix on, alone (or, for a joint attribution, with
    all of them together), the violation goes: the invariant holds, or the path to it is no longer enabled."""
    from isrlab.model.bugs import BUGS, with_fix
    from isrlab.properties.attribution import classify
    from isrlab.properties.shrink import replay_outcome

    trace = load_trace(str(path))
    a = _attribution(path.name)
    assert a.bugs, a.summary()
    assert classify(PRESETS[trace.preset], a)[0] != "unexpected", a.summary()
    groups = [a.bugs] if a.joint else [(b,) for b in a.bugs]
    for group in groups:
        fixed = with_fix(trace.config, [BUGS[b] for b in group])
        outcome, step = replay_outcome(fixed, trace.actions, trace.violated, trace.start)
        assert outcome in ("holds", "cut"), f"with {' + '.join(group)} fixed, {trace.violated} fails at step {step}"
    # and with the fix off the violation is there: the fix is what removes it
    assert replay_outcome(trace.config, trace.actions, trace.violated, trace.start) == ("fails", len(trace.actions))


#: archived counterexamples attributed to no bug their preset expects, only to another known bug its configuration
#: contains ("known" in the attribution's terms, properties/attribution.py classify): file -> the bugs named
KNOWN_NOT_EXPECTED = {
    # kafka-0.11 expects KAFKA-7128; this hw_within_isr trace goes when KIP-320 is fixed, not when KAFKA-7128 is
    "2026-11-22-kafka-0.11-hw_within_isr-ea17a070bb6d.json": ("KIP-320",),
    # no-kafka-7164 expects KAFKA-7164, but with KAFKA-7164's fix on this trace still breaks log_matching at its
    # last step; only KIP-320's fix (which no-kafka-7164 also lacks) removes it: it is not a KAFKA-7164 trace
    "2026-11-22-no-kafka-7164-log_matching-98a8d906684c.json": ("KIP-320",),
    # kafka-3.5 expects no bug: both traces are the pending-reset race (docs/findings/kraft-pending-reset-race.md)
    "2026-11-25-kafka-3.5-committed_prefix-c22707efc729.json": ("pending-reset-race",),
    "2026-11-25-kafka-3.5-leader_isr_covers_controller_isr-7de4efa9e3af.json": ("pending-reset-race",),
}


def test_counterexamples_of_a_known_bug_their_preset_does_not_expect():
    from isrlab.properties.attribution import classify

    known = {}
    for path in FILES:
        kind, bugs = classify(PRESETS[load_trace(str(path)).preset], _attribution(path.name))
        if kind == "known":
            known[path.name] = bugs
    assert known == KNOWN_NOT_EXPECTED


#: (preset, expected bug) pairs no archived counterexample of that preset is attributed to, each with the reason:
#: the test fails when one gains a counterexample (drop it here) or another loses its last one
EXPECTED_BUG_WITHOUT_COUNTEREXAMPLE = {
    # its only archived trace is KIP-320's (KNOWN_NOT_EXPECTED): KAFKA-7164's own violation is not archived yet
    ("no-kafka-7164", "KAFKA-7164"),
}


def test_every_expected_bug_has_an_archived_counterexample_attributed_to_it():
    """For every preset, each bug it expects (``Preset.bugs``) has an archived counterexample of that preset whose
    attribution credits it, except the pairs listed, which are reported as missing rather than papered over."""
    attributed = set()
    for path in FILES:
        a = _attribution(path.name)
        attributed |= {(load_trace(str(path)).preset, b) for b in a.credited()}
    missing = {(name, b) for name, p in PRESETS.items() for b in p.bugs if (name, b) not in attributed}
    assert missing == EXPECTED_BUG_WITHOUT_COUNTEREXAMPLE, (
        f"expected bugs without an archived counterexample attributed to them: {sorted(missing)}; listed as known to "
        f"lack one: {sorted(EXPECTED_BUG_WITHOUT_COUNTEREXAMPLE)}")

#: archived before file names carried the invariant broken first on replay: named by the invariant that was shrunk,
#: which the replay breaks later (or at the same step, reported after another); kept, as regression tests named already
NAMED_BY_SHRUNK = {
    "2026-11-22-crash-loses-unflushed-consumer_safety-258bc0d4d8fe.json",    # acked_durability, the same step
    "2026-11-22-kafka-0.10.2-acked_durability-571185e4546c.json",            # hw_within_isr, step 18 of 26
    "2026-11-22-kafka-0.11-hw_within_isr-ea17a070bb6d.json",                 # committed_prefix, step 33 of 39
    "2026-11-22-no-kafka-7164-log_matching-98a8d906684c.json",               # committed_prefix, step 31 of 32
    "2026-11-22-no-kafka-7415-acked_durability-3ff30b868a76.json",           # committed_prefix, step 55 of 64
    "2026-11-22-no-kip-320-acked_durability-93349ea7c374.json",              # committed_prefix, step 31 of 39
    "2026-11-25-kraft-no-isr-join-hw-check-isr_entry_condition-5c155d949484.json",  # hw_within_isr, the same step
    "2026-11-25-old-message-format-acked_durability-c69149ddc190.json",      # hw_within_isr, step 26 of 29
}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_file_is_named_by_the_invariant_broken_first_on_replay(path):
    from isrlab.archive import first_broken
    from isrlab.properties.replay import replay

    trace = load_trace(str(path))
    first = first_broken(replay(trace, with_changes=False).violations)
    named = NAME.match(path.name)["invariant"]
    if path.name in NAMED_BY_SHRUNK:
        assert named == trace.violated != first, f"{path.name}: no longer named by another invariant than {first}"
    else:
        assert named == first, f"{path.name}: its replay breaks {first} first"


def test_names_archived_by_the_invariant_shrunk_are_files_of_the_archive():
    assert NAMED_BY_SHRUNK <= {p.name for p in FILES}


def test_the_same_actions_get_one_name_whichever_invariant_was_shrunk(tmp_path, monkeypatch):
    """kafka-0.11's hw_within_isr trace breaks committed_prefix first (step 33 of 39): archived from either
    invariant's shrink it is named by committed_prefix, and archived once."""
    from isrlab import archive
    from isrlab.archive import archive_counterexample, archive_name, counterexample

    legacy = load_trace(str(ARCHIVE / "2026-11-22-kafka-0.11-hw_within_isr-ea17a070bb6d.json"))
    cfg, actions = legacy.config, legacy.actions
    by_hw = counterexample("kafka-0.11", cfg, actions, "hw_within_isr", {"engine": "walk"}, len(actions))
    by_cp = counterexample("kafka-0.11", cfg, actions, "committed_prefix", {"engine": "walk"}, len(actions))
    assert by_hw.trace.violated == "hw_within_isr" and by_hw.trace.provenance["first_broken"] == "committed_prefix"

    def no_second_replay(*args, **kwargs):
        raise AssertionError("archiving replayed the trace again")

    monkeypatch.setattr(archive, "replay", no_second_replay)   # counterexample's replay named it already
    path, written = archive_counterexample(str(tmp_path / "a"), "kafka-0.11", by_hw.trace)
    assert written and re.fullmatch(r"\d{4}-\d{2}-\d{2}-kafka-0\.11-committed_prefix-" + by_hw.digest + r"\.json",
                                    os.path.basename(path)), path
    again, written = archive_counterexample(str(tmp_path / "a"), "kafka-0.11", by_cp.trace)
    assert again == path and not written
    other, _ = archive_counterexample(str(tmp_path / "b"), "kafka-0.11", by_cp.trace)
    day = len("YYYY-MM-DD")   # the day a file is archived on is no part of what names it
    assert os.path.basename(other)[day:] == os.path.basename(path)[day:]
    monkeypatch.undo()
    name, digest = archive_name(legacy)                        # no record of it: a replay names it
    assert name[day:] == os.path.basename(path)[day:] and digest == by_hw.digest
