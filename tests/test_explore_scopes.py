"""Small scopes first (``isrlab explore --scopes``): the ladder of scopes, its searches and the command."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from isrlab.explore_cmd import explore as explore_cmd
from isrlab.model.bugs import BUGS, with_fix
from isrlab.model.config import PRESETS, explore_bounds, preset
from isrlab.model.trace import load_trace
from isrlab.properties.explore import explore, search_args
from isrlab.properties.scopes import DIMENSIONS, GROWTH, ladder, search_scopes
from isrlab.properties.shrink import first_violation

RANK = {name: {v: r for r, v in enumerate(values)} for name, values in DIMENSIONS}


def _size(scope: dict) -> int:
    return sum(RANK[k][v] for k, v in scope.items())


@pytest.mark.unit
@pytest.mark.parametrize("name", ["kafka-2.4", "kafka-3.7", "no-kip-903"])
def test_the_ladder_holds_every_scope_within_the_budgets_smallest_first(name):
    cfg = preset(name).config
    scopes = ladder(cfg)
    limits = {"brokers": cfg.n_brokers, "max_records": cfg.max_records, "max_crashes": cfg.max_crashes,
              "max_expirations": cfg.max_session_expirations, "max_controller_epoch": cfg.max_controller_epoch}
    allowed = {k: [v for v in values if k not in limits or v <= limits[k]] for k, values in DIMENSIONS}
    assert len(scopes) == math.prod(len(v) for v in allowed.values())
    assert len({tuple(s.items()) for s in scopes}) == len(scopes)
    for s in scopes:
        assert list(s) == [k for k, _v in DIMENSIONS]
        assert all(s[k] in allowed[k] for k in s)
    sizes = [_size(s) for s in scopes]
    assert sizes == sorted(sizes) and sizes[0] == 0


@pytest.mark.unit
def test_the_seed_orders_scopes_of_one_size_and_a_pinned_bound_is_kept():
    cfg = preset("kafka-2.4").config
    a, b = ladder(cfg, seed=0), ladder(cfg, seed=1)
    assert a == ladder(cfg, seed=0)
    assert a != b and sorted(map(repr, a)) == sorted(map(repr, b))
    assert [_size(s) for s in a] == [_size(s) for s in b]
    pinned = ladder(cfg, {"brokers": 3, "max_time": None})
    assert pinned and all(s["brokers"] == 3 and s["max_time"] is None for s in pinned)
    assert len(pinned) * 2 * 2 == len(a)
    assert all(s["max_crashes"] == 0 for s in ladder(cfg.replace(max_crashes=0)))
    assert {s["brokers"] for s in ladder(cfg.replace(n_brokers=1, replication_factor=1))} == {1}


#: every dimension pinned but the leader epoch: a ladder of three scopes
EPOCH_FREE = {"brokers": 2, "max_records": 1, "max_crashes": 1, "max_expirations": 0, "max_controller_epoch": 1,
              "max_time": 0}


def _base(name):
    return {**explore_bounds(name), "max_isr_changes": None}


@pytest.mark.unit
def test_one_pinned_scope_is_one_composite_search_of_those_bounds():
    """Every dimension pinned: the ladder is one scope, searched as ``explore`` searches those bounds coarse."""
    name = "kafka-2.4"
    pin = {"brokers": 2, "max_records": 1, "max_crashes": 1, "max_expirations": 0, "max_epoch": 1,
           "max_controller_epoch": 1, "max_time": 0}
    out = search_scopes(preset(name).config, _base(name), pinned=pin)
    assert out.scopes == 1 and len(out.searched) == 1 and out.complete and out.decisive is None
    cfg, kw = search_args(preset(name).config, {**_base(name), **pin, "composite": True, "max_states": 10_000})
    alone = explore(cfg, **kw)
    assert alone.complete and alone.composite
    assert out.searched[0].result.distinct_states == alone.distinct_states
    assert out.searched[0].result.transitions == alone.transitions


@pytest.mark.unit
def test_scopes_the_cap_stopped_are_searched_again_with_more_states():
    name, pin = "kafka-2.4", EPOCH_FREE
    out = search_scopes(preset(name).config, _base(name), pinned=pin, scope_states=40, max_rounds=8)
    assert out.scopes == 3 and out.complete and out.decisive is None
    by_round: dict = {}
    for sc in out.searched:
        by_round.setdefault(sc.rnd, []).append(sc)
    assert len(by_round) > 1
    done: set = set()
    for rnd in sorted(by_round):
        stopped = []
        for sc in by_round[rnd]:
            key = tuple(sc.bounds.items())
            # the cap, overshot by at most the successors of the state being expanded when it was reached
            assert key not in done and sc.result.distinct_states < 40 * GROWTH ** rnd + 20
            # never searched in a pass where the scope one leader epoch smaller was stopped by the cap before it
            assert sc.bounds["max_epoch"] - 1 not in stopped
            if sc.result.complete:
                done.add(key)
            else:
                stopped.append(sc.bounds["max_epoch"])
    assert len(done) == 3
    assert all(sc.result.complete for sc in by_round[max(by_round)])


@pytest.mark.scenario
@pytest.mark.parametrize("name", ["kraft-no-isr-join-hw-check", "no-kip-903"])
def test_the_scopes_find_a_presets_bug_without_its_bounds(name, tmp_path):
    """With no bounds of its own the ladder finds the preset's bug, attributed by its fix; the archived trace is of
    the deciding scope's configuration, fails there, and is clean with the fix."""
    r = CliRunner().invoke(explore_cmd, ["--json", "--scopes", "--quiet", "--preset", name, "--out", str(tmp_path)])
    assert r.exit_code == 1, r.output
    j = json.loads(r.stdout)
    assert j["stop_reason"] == "violation" and j["missed_bug"] is None
    assert j["scopes"]["deciding"] is not None and j["scopes"]["searched"] <= j["scopes"]["scopes"]
    v = next(x for x in j["violations"] if not x["passed"])
    assert v["kind"] == "found" and v["bugs"] == list(PRESETS[name].bugs)
    (path,) = [p for p in tmp_path.glob("*.json") if load_trace(str(p)).violated == v["invariant"]]
    t = load_trace(str(path))
    assert t.config.n_brokers == j["scopes"]["deciding"]["brokers"]
    assert first_violation(t.config, t.actions, v["invariant"])[0] == len(t.actions)
    assert first_violation(with_fix(t.config, [BUGS[b] for b in PRESETS[name].bugs]), t.actions, v["invariant"]) is None


@pytest.mark.unit
def test_a_passing_presets_pinned_scopes_complete_clean():
    r = CliRunner().invoke(explore_cmd, ["--scopes", "--quiet", "--no-archive", "--preset", "kafka-2.4",
                                         "--brokers", "2", "--max-records", "1", "--max-crashes", "1",
                                         "--max-expirations", "0", "--max-controller-epoch", "1", "--max-time", "0"])
    assert r.exit_code == 0, r.output
    assert "every scope complete" in r.stdout and "3 searches of 3 scopes" in r.stdout
    assert "as expected: no violation" in r.stdout


@pytest.mark.unit
@pytest.mark.parametrize("extra", [["--fine"], ["--spark"], ["--no-compress"], ["--liveness"],
                                   ["--continue-past", "committed_prefix"]])
def test_scopes_refuse_what_contradicts_them(extra):
    r = CliRunner().invoke(explore_cmd, ["--scopes", "--preset", "kafka-2.4", "--no-archive", *extra])
    assert r.exit_code == 2, r.output
    assert r.output.count("\n") == 1 and "--scopes" in r.output


@pytest.mark.unit
def test_progress_names_the_last_scope_searched():
    import io

    from isrlab.explore_cmd import ScopeProgress
    from isrlab.properties.scopes import describe

    cfg = preset("kafka-2.4").config
    first = ladder(cfg)[0]
    assert describe(first) == ("2 brokers; records 0, crashes 0, expirations 0, leader epochs <= 0, controller epochs "
                               "<= 1; clock frozen")
    out = io.StringIO()
    progress = ScopeProgress("kafka-2.4", every=0.0, stream=out)
    res = search_scopes(cfg, {**explore_bounds("kafka-2.4"), "max_isr_changes": None}, pinned=first,
                        progress=progress)
    assert res.complete and out.getvalue() == (
        f"kafka-2.4: 1 scope searched, {res.searched[0].result.distinct_states:,} states; last: {describe(first)}\n")


@pytest.mark.unit
def test_the_first_pass_halves_the_cap_for_each_size_below_the_full_one():
    """Scopes of size 3 and more get the whole cap, smaller ones a half per size below; later passes grow each."""
    from isrlab.properties.scopes import FULL_CAP_SIZE

    name, pin = "kafka-2.4", EPOCH_FREE
    out = search_scopes(preset(name).config, _base(name), pinned=pin, scope_states=400, max_rounds=3)
    assert out.complete
    for sc in out.searched:
        size = _size(sc.bounds)   # pinned bounds count at their own rank
        want = (400 >> max(0, FULL_CAP_SIZE - size)) * GROWTH ** sc.rnd
        assert sc.search["max_states"] == want, (sc.bounds, sc.rnd)
    # the smallest scope outgrew its share of the first pass; those above it waited for the second
    assert {_size(sc.bounds) for sc in out.searched} == {2, 3, 4}
    assert [sc.rnd for sc in out.searched] == [0, 1, 1, 1] and not out.searched[0].result.complete
