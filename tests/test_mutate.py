"""The mutation benchmark: the registry installs and restores every mutant, the split is fixed, engines kill
some mutants within a few hundred steps, and ``isrlab mutate`` keeps the CLI's contract (JSON, Parquet, exit 2)."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from isrlab.cli import main
from isrlab.model import fetcher, replica_manager, step as stepmod
from isrlab.mutate import ROW_FIELDS, MutateSpec, _failed_ids, hunt, kill_rates, per_mutant
from isrlab.properties import mutants as R

pytestmark = pytest.mark.unit


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


def test_cli_list():
    r = CliRunner().invoke(main, ["mutate", "--list", "--json"])
    assert r.exit_code == 0
    assert [m["name"] for m in json.loads(r.stdout)] == R.names()


def test_a_kill_never_names_what_the_unmutated_preset_breaks():
    """kafka-2.4 breaks truncation_completes itself (KAFKA-10706): a mutant hunt must not count it as a kill."""
    from isrlab.model.config import preset
    from isrlab.mutate import kill_names
    from isrlab.properties.invariants import LIVENESS_BY_NAME, SAFETY

    names = set(kill_names("kafka-2.4"))
    assert "truncation_completes" not in names and "truncation_completes" in preset("kafka-2.4").breaks
    assert names == ({i.name for i in SAFETY} | set(LIVENESS_BY_NAME)) - set(preset("kafka-2.4").breaks)
    assert "acked_durability" in names and "acked_durability" not in kill_names("kafka-0.10.2")
