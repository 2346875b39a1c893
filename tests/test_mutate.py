"""The mutation benchmark: the registry installs and restores every mutant, the split is fixed, engines kill
some mutants within a few hundred steps, and ``isrlab mutate`` keeps the CLI's contract (JSON, Parquet, exit 2)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from isrlab.cli import main
from isrlab.model import fetcher, replica_manager, step as stepmod
from isrlab.model import actions as A
from isrlab.model.config import preset
from isrlab.model.trace import load_trace
from isrlab.mutate import (CUT, FAILS, HOLDS, ROW_FIELDS, MutateSpec, _failed_ids, evidence, hunt, is_kill,
                           kill_candidates, kill_rates, per_mutant, unmutated_outcome)
from isrlab.properties import mutants as R
from isrlab.properties.attribution import attribute, classify
from isrlab.properties.shrink import replay_outcome

pytestmark = pytest.mark.unit

ARCHIVE = Path(__file__).resolve().parent.parent / "counterexamples"


def _model_functions() -> dict:
    """(module, attribute) -> object for every attribute of every loaded isrlab.model module and class."""
    out = {}
    for name, mod in sorted(sys.modules.items()):
        if mod is None or not name.startswith("isrlab.model"):
            continue
        for attr, value in vars(mod).items():
            out[(name, attr)] = value
            if isinstance(value, type) and value.__module__ == name:
                for k, v in vars(value).items():
                    out[(name, f"{attr}.{k}")] = v
    return out


def test_registry_shape():
    assert len(R.MUTANTS) >= 40
    assert {m.area for m in R.MUTANTS} == set(R.AREAS)
    assert {m.kind for m in R.MUTANTS} == set(R.KINDS)
    assert len({m.name for m in R.MUTANTS}) == len(R.MUTANTS)
    for m in R.MUTANTS:
        assert m.meaning and "\n" not in m.meaning, m.name
        assert m.old != m.new, m.name


@pytest.mark.parametrize("name", R.names())
def test_mutant_installs_and_restores(name):
    m = R.lookup(name)
    before = _model_functions()
    mod = sys.modules[f"isrlab.model.{m.module}"]
    holder = mod
    for part in m.function.split(".")[:-1]:
        holder = getattr(holder, part)
    attr = m.function.split(".")[-1]
    original = vars(holder)[attr]
    with R.installed(name):
        mutated = vars(holder)[attr]
        assert mutated is not original
        # every model module that imported the function by name sees the mutant, none keeps the original
        assert not [k for k, v in _model_functions().items() if v is original]
    assert _model_functions() == before


def test_importers_are_patched():
    with R.installed("consumer-reads-to-leo"):
        assert stepmod.fetch_messages is replica_manager.fetch_messages is fetcher.fetch_messages
        assert stepmod.fetch_messages.__name__ == "fetch_messages"
    assert "mutant" not in stepmod.fetch_messages.__code__.co_filename


def test_a_missing_snippet_fails_loudly():
    bad = R.Mutant("nowhere", "log", "off-by-one", "log", "truncate_to", "no such text", "x", "nothing")
    with pytest.raises(R.MutantError, match="occurs 0 times"):
        R.compile_mutant(bad)
    with pytest.raises(R.MutantError, match="has no function"):
        R.compile_mutant(R.Mutant("nowhere", "log", "off-by-one", "log", "no_such_function", "a", "b", "c"))
    with pytest.raises(R.MutantError, match="unknown mutant"):
        R.install("no-such-mutant")


def test_split_is_fixed_and_covers_both_halves():
    # pinned: the split is a function of the name alone (blake2b), never of the registry's order or size
    assert [R.half(n) for n in ("shrink-ge", "hw-not-monotonic", "truncate-keeps-hw", "election-same-epoch")] \
        == [R.half(n) for n in ("shrink-ge", "hw-not-monotonic", "truncate-keeps-hw", "election-same-epoch")]
    assert R.half("a") == "held-out" and R.half("b") == "tuning"
    tuning, held_out = R.names("tuning"), R.names("held-out")
    assert tuning and held_out and sorted(tuning + held_out) == sorted(R.names())
    assert all(R.lookup(n).half == "tuning" for n in tuning)


#: mutants a seeded walk kills within a few thousand model steps, with the invariant it breaks
QUICK_KILLS = (
    ("consumer-reads-to-leo", "consumer_safety"),
    ("isr-removes-last-member", "isr_well_formed"),
    ("hw-not-monotonic", "log_offsets"),                  # a new leader's HW drops to a reset remote LEO, -1
    ("update-metadata-no-epoch-check", "epochs_monotonic"),
)


@pytest.mark.parametrize("name,invariant", QUICK_KILLS, ids=[n for n, _ in QUICK_KILLS])
def test_walker_kills_within_a_step_budget(name, invariant):
    spec = MutateSpec(mutants=(name,), engines=("walk",), seeds=(0,), budget_s=None, max_steps=20_000,
                      shrink_budget_s=2.0)
    row = hunt(spec, name, "walk", 0)
    assert row["killed"] and row["invariant"] == invariant, row
    assert 0 < row["steps"] <= 20_000 + 200 and row["shrunk_length"] <= row["original_length"]
    again = hunt(spec, name, "walk", 0)
    assert (again["steps"], again["invariant"], again["original_length"]) == \
        (row["steps"], row["invariant"], row["original_length"])


@pytest.mark.parametrize("preset_name,name,invariant", [("kafka-2.4", "hw-not-monotonic", "log_offsets"),
                                                         ("kafka-4.1", "fence-keeps-isr", "isr_members_eligible")])
def test_the_scopes_engine_kills_in_a_scopes_configuration(preset_name, name, invariant):
    """The ladder's judge is the hunt's (the unmutated model's outcome, replayed in the scope's configuration): a
    violation the real model shows too is gone past, a kill ends the hunt, and the kill is shrunk in that scope."""
    spec = MutateSpec(preset=preset_name, mutants=(name,), engines=("scopes",), seeds=(0,), budget_s=60,
                      shrink_budget_s=2.0)
    row = hunt(spec, name, "scopes", 0)
    assert row["killed"] and row["invariant"] == invariant and row["runs"] == 1, row
    assert row["shrunk_length"] <= row["original_length"] and "the unmutated model holds" in row["evidence"]
    again = hunt(spec, name, "scopes", 0)
    assert (again["steps"], again["original_length"], again["shrunk_length"]) == \
        (row["steps"], row["original_length"], row["shrunk_length"])


#: KRaft-only mutants a seeded walk on kafka-4.1 kills within a step budget
QUICK_KRAFT_KILLS = (
    ("fence-keeps-isr", "isr_members_eligible"),
    ("make-leader-older-partition-epoch", "leader_isr_covers_controller_isr"),
)


@pytest.mark.parametrize("name,invariant", QUICK_KRAFT_KILLS, ids=[n for n, _ in QUICK_KRAFT_KILLS])
def test_walker_kills_a_kraft_guard_mutant(name, invariant):
    spec = MutateSpec(preset="kafka-4.1", mutants=(name,), engines=("walk",), seeds=(0,), budget_s=None,
                      max_steps=30_000, shrink_budget_s=2.0)
    row = hunt(spec, name, "walk", 0)
    assert row["killed"] and row["invariant"] == invariant, row
    assert row["shrunk_length"] <= row["original_length"]


#: the quorum controller's AlterPartition guards, which only a request no leader of the model sends can pass: a seeded
#: walk on kraft-forged-alter-partition (AlterPartitionReceived within its budget) kills each within a step budget
FORGED_REQUEST_KILLS = ("alter-partition-any-broker-epoch", "alter-partition-older-leader-epoch",
                        "alter-partition-from-non-leader", "alter-partition-isr-without-leader")


@pytest.mark.parametrize("name", FORGED_REQUEST_KILLS)
def test_walker_kills_an_alter_partition_guard_mutant_with_forged_requests(name):
    spec = MutateSpec(preset="kraft-forged-alter-partition", mutants=(name,), engines=("walk",), seeds=(0,),
                      budget_s=None, max_steps=30_000, shrink_budget_s=2.0)
    row = hunt(spec, name, "walk", 0)
    assert row["killed"] and row["invariant"] == "forged_alter_partition_refused" and row["unmutated"] == HOLDS, row
    assert row["equivalent_reason"] is None and row["shrunk_length"] <= row["original_length"]


def test_an_equivalent_mutant_survives_a_step_budget():
    spec = MutateSpec(mutants=("clamp-order-swapped",), engines=("walk",), budget_s=None, max_steps=2_000)
    row = hunt(spec, "clamp-order-swapped", "walk", 0)
    assert not row["killed"] and row["steps"] >= 2_000 and row["equivalent_reason"]


def test_kill_rates_leave_equivalent_mutants_out():
    rows = [dict(mutant=n, area="log", kind="off-by-one", half=h, engine="walk", seed=0, killed=k, invariant=None,
                 seconds=1.0, steps=10, runs=1, original_length=None, shrunk_length=None, stopped=False, error=None,
                 equivalent_reason=e)
            for n, h, k, e in (("a", "tuning", True, None), ("b", "tuning", False, None),
                               ("c", "held-out", False, "same cache"), ("d", "held-out", True, None))]
    rates = kill_rates(per_mutant(rows))
    assert rates["tuning"] == {"mutants": 2, "equivalent": 0, "non_equivalent": 2, "killed": 1,
                               "killed_equivalent": 0, "kill_rate": 0.5}
    assert rates["held-out"]["kill_rate"] == 1.0 and rates["all"]["non_equivalent"] == 3


def test_failed_ids_from_pytest_summary():
    text = "....F\nFAILED tests/test_x.py::test_a[p-1] - AssertionError: no\nERROR tests/test_y.py::test_b\n1 failed"
    assert _failed_ids(text) == ["tests/test_x.py::test_a[p-1]", "tests/test_y.py::test_b"]


def test_cli_json_and_parquet(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["mutate", "--mutant", "hw-not-monotonic", "--mutant", "clamp-order-swapped",
                                  "--engine", "walk", "--steps", "600", "--budget", "120", "--shrink-budget", "1",
                                  "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["spec"]["mutants"] == ["hw-not-monotonic", "clamp-order-swapped"]
    assert [sorted(row) for row in summary["rows"]] == [sorted(ROW_FIELDS)] * 2
    entry = {e["mutant"]: e for e in summary["mutants"]}
    assert entry["hw-not-monotonic"]["killed"] and not entry["clamp-order-swapped"]["killed"]
    assert set(summary["engines"]["walk"]) >= {"tuning", "held-out", "all", "median_seconds_to_kill"}
    folder = out / summary["id"]
    assert json.loads((folder / "summary.json").read_text())["id"] == summary["id"]
    table = pq.read_table(folder / "results.parquet")
    assert table.column_names == list(ROW_FIELDS) and table.num_rows == 2


@pytest.mark.parametrize("args,message", [
    (["--mutant", "no-such-mutant"], "unknown mutant"),
    (["--mutant", "shrink-ge", "--half", "tuning"], "give one"),
    (["--budget", "nan"], "not a finite number"),
    (["--preset", "no-such-preset"], "no-such-preset"),
    (["--engine", "nope"], "nope"),
    (["--seeds", "0"], "below 1"),
    (["--tests", "--tests-dir", "no/such/folder"], "not a folder"),
    (["--tests-only", "--tests-path", "no/such/file.py"], "does not exist"),
    (["--mutant", "heartbeat-any-broker-epoch"], "only the KRaft era runs"),
])
def test_cli_bad_input_exits_2(args, message, tmp_path):
    r = CliRunner().invoke(main, ["mutate", "--out", str(tmp_path), *args])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert not list(tmp_path.iterdir())


def test_cli_out_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    r = CliRunner().invoke(main, ["mutate", "--mutant", "shrink-ge", "--out", str(f)])
    assert r.exit_code == 2 and "is a file" in r.output


def test_kraft_only_mutants_are_left_out_on_a_zookeeper_preset():
    """kafka-2.4 never runs the quorum controller or the 3.x partition rules: its default selection (and so its kill
    rates) leaves those mutants out; a KRaft preset takes the whole registry."""
    from isrlab.mutate_cmd import _selected

    zk, kraft = _selected((), None, "kafka-2.4"), _selected((), None, "kafka-3.7")
    assert kraft == tuple(R.names()) and set(kraft) - set(zk) == {m.name for m in R.MUTANTS if m.kraft_only}
    assert len(set(kraft) - set(zk)) >= 10
    assert set(_selected((), "tuning", "kafka-2.4")) == {n for n in zk if R.lookup(n).half == "tuning"}


def test_cli_list():
    r = CliRunner().invoke(main, ["mutate", "--list", "--json"])
    assert r.exit_code == 0
    assert [m["name"] for m in json.loads(r.stdout)] == R.names()


def test_a_hunt_checks_every_invariant_whatever_the_preset():
    """The kill rule reads no preset: every safety invariant and liveness property is checked on every preset."""
    from isrlab.properties.invariants import LIVENESS_BY_NAME, SAFETY

    assert set(kill_candidates()) == {i.name for i in SAFETY} | set(LIVENESS_BY_NAME)
    assert "truncation_completes" in kill_candidates() and "acked_durability" in kill_candidates()


def test_suspended_runs_the_real_model_and_puts_the_mutant_back():
    """The unmutated replay inside a hunt: the originals everywhere for the block, the mutant after it (also after an
    exception), and nothing left behind once the mutant is restored."""
    before = _model_functions()
    saved = R.install("consumer-reads-to-leo")
    try:
        mutated = _model_functions()
        assert mutated != before
        with R.suspended(saved):
            assert _model_functions() == before
        assert _model_functions() == mutated
        with pytest.raises(ZeroDivisionError):
            with R.suspended(saved):
                assert _model_functions() == before
                1 / 0
        assert _model_functions() == mutated
    finally:
        R.restore(saved)
    assert _model_functions() == before


def test_is_kill_reads_the_unmutated_outcome():
    assert is_kill((HOLDS, None)) and is_kill((CUT, 3)) and not is_kill((FAILS, 7))
    assert "unmutated model holds log_offsets" in evidence("log_offsets", (HOLDS, None), 40, 4)
    assert "cannot take action 3" in evidence("log_offsets", (CUT, 3), 40)


def test_a_trace_the_unmutated_model_cannot_run_is_cut():
    """An action the real model does not enable where the trace takes it (a FetchResponse before any request):
    CUT at that step, which counts as a kill (``is_kill`` argues why)."""
    cfg = preset("kafka-2.4").config
    saved = R.install("consumer-reads-to-leo")
    try:
        outcome = unmutated_outcome(saved, cfg, [A.FetchResponse(1, 0)], "log_offsets")
    finally:
        R.restore(saved)
    assert outcome == (CUT, 1) and is_kill(outcome)


# --------------------------------------------------------------------------- the preset's own violations
RACE_INVARIANT = "leader_isr_covers_controller_isr"
#: the pending-reset race put back into the code: makeLeader never keeps a pending ISR change (a test-only mutant)
RACE_IN_CODE = R.Mutant("pending-reset-race-in-code", "partition", "missing check", "partition", "make_leader_3x",
                        "cfg.make_leader_keeps_pending_isr and keeps_pending_isr(part, ps)", "False",
                        "makeLeader replays its own earlier PartitionChangeRecord and drops a pending ISR expansion")


def _race_trace() -> list:
    """The fuzzer's shrunk kafka-3.5 trace of the pending-reset race, ending in a leader_isr_covers_controller_isr
    violation (32 actions)."""
    (path,) = ARCHIVE.glob(f"*-kafka-3.5-{RACE_INVARIANT}-*.json")
    return list(load_trace(str(path)).actions)


def test_the_presets_own_violation_is_no_kill_and_the_same_one_in_code_is():
    """The difference the kill rule makes, on one trace and one invariant.  On kafka-4.1 the pending-reset race is
    the preset's own (its config has the bug): under a code mutant the trace still fails, but so does the unmutated
    model, so it is no kill, and attribution names the race.  On kafka-4.1-pending-reset-fixed, the same race put
    back as a code mutant fails the same invariant on the same trace while the unmutated model holds it: a kill."""
    actions = _race_trace()
    own = preset("kafka-4.1")
    saved = R.install("consumer-reads-to-leo")
    try:
        assert replay_outcome(own.config, actions, RACE_INVARIANT)[0] == FAILS
        outcome = unmutated_outcome(saved, own.config, actions, RACE_INVARIANT)
    finally:
        R.restore(saved)
    assert outcome == (FAILS, len(actions)) and not is_kill(outcome)
    assert RACE_INVARIANT in own.breaks
    assert attribute(own.config, actions, RACE_INVARIANT, expected=own.bugs).bugs == ("pending-reset-race",)

    fixed = preset("kafka-4.1-pending-reset-fixed")
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(R.BY_NAME, RACE_IN_CODE.name, RACE_IN_CODE)
        saved = R.install(RACE_IN_CODE.name)
        try:
            assert replay_outcome(fixed.config, actions, RACE_INVARIANT) == (FAILS, len(actions))
            outcome = unmutated_outcome(saved, fixed.config, actions, RACE_INVARIANT)
        finally:
            R.restore(saved)
    assert outcome == (HOLDS, None) and is_kill(outcome)


def test_a_violation_the_unmutated_model_shows_too_does_not_kill():
    """kafka-3.5, where the pending-reset race breaks leader_isr_covers_controller_isr: under a mutant of the consumer's
    fetch the guided search meets the race first.  The unmutated model fails the same invariant on that trace, so it
    is no kill (counted as the preset's own, attributed to the race); the search goes past it and the mutant is killed
    later by its own consumer_safety violation, which the unmutated model holds."""
    seen = []
    spec = MutateSpec(preset="kafka-3.5", mutants=("consumer-reads-to-leo",), engines=("guided",), budget_s=None,
                      max_steps=20_000, shrink_budget_s=2.0)
    row = hunt(spec, "consumer-reads-to-leo", "guided", 9, observe=lambda a, inv, out: seen.append((a, inv, out)))
    assert [(inv, out[0]) for _, inv, out in seen] == [(RACE_INVARIANT, FAILS), ("consumer_safety", HOLDS)], seen
    assert row["own_violations"] == 1 and row["own_invariants"] == RACE_INVARIANT, row
    assert row["killed"] and row["invariant"] == "consumer_safety" and row["unmutated"] == HOLDS, row
    assert row["original_length"] == len(seen[1][0]) and "unmutated model holds consumer_safety" in row["evidence"]
    p = preset("kafka-3.5")
    race, _, _ = seen[0]
    assert replay_outcome(p.config, race, RACE_INVARIANT) == (FAILS, len(race))      # the real model, mutant gone
    assert attribute(p.config, race, RACE_INVARIANT, expected=p.bugs).bugs == ("pending-reset-race",)


def test_a_kill_may_name_an_invariant_the_preset_breaks_itself():
    """kafka-3.3 breaks follower_hw_committed (KAFKA-14704) and committed_prefix (the pending-reset race) itself; the
    walk meets KAFKA-14704 first (not counted, the search goes on) and then the mutant's own committed_prefix violation,
    which the unmutated model holds on its trace: a kill that a rule by invariant name would have thrown away."""
    p = preset("kafka-3.3")
    assert {"committed_prefix", "follower_hw_committed"} <= set(p.breaks)
    spec = MutateSpec(preset="kafka-3.3", mutants=("truncation-offset-after-fetch-offset",), engines=("walk",),
                      budget_s=None, max_steps=30_000, shrink_budget_s=2.0)
    row = hunt(spec, "truncation-offset-after-fetch-offset", "walk", 4)
    assert row["own_violations"] >= 1 and "follower_hw_committed" in row["own_invariants"].split(","), row
    assert row["killed"] and row["invariant"] == "committed_prefix" and row["unmutated"] == HOLDS, row
    assert "the unmutated model holds committed_prefix" in row["evidence"]


def test_a_violation_no_fix_explains_gives_unexpected():
    """On kafka-4.1-pending-reset-fixed (every known bug fixed) a code mutant is killed, and its violation, attributed
    while the mutant is applied (the mutated model produced it), is explained by no known fix: UNEXPECTED."""
    p = preset("kafka-4.1-pending-reset-fixed")
    got = []

    def observe(actions, invariant, outcome):
        got.append((attribute(p.config, actions, invariant, expected=p.bugs), outcome))

    spec = MutateSpec(preset=p.name, mutants=("hw-ignores-isr",), engines=("walk",), budget_s=None, max_steps=20_000,
                      shrink_budget_s=2.0)
    row = hunt(spec, "hw-ignores-isr", "walk", 0, observe=observe)
    assert row["killed"] and row["invariant"] == "committed_prefix" and row["unmutated"] == HOLDS, row
    assert row["own_violations"] == 0 and len(got) == 1
    a, outcome = got[0]
    assert a.invariant == "committed_prefix" and outcome == (HOLDS, None)
    assert a.bugs == () and classify(p, a) == ("unexpected", ()) and "UNEXPECTED" in a.summary()
