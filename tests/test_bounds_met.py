"""The bounds a complete search met: one it never met can be raised without changing the search, so the ladder of
small scopes does not search again a scope one step above a complete one along such a bound."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from isrlab.explore_cmd import explore as explore_cmd
from isrlab.model.config import explore_bounds, preset
from isrlab.properties.explore import explore, search_args
from isrlab.properties.scopes import search_scopes


def _search(name: str, **bounds):
    cfg, kw = search_args(preset(name).config, {**explore_bounds(name), **bounds})
    return explore(cfg, **kw)


@pytest.mark.unit
def test_a_bound_never_met_can_be_raised_and_the_search_is_the_same():
    no_crash = ("ConsumerFetch", "BrokerCrash", "ControlledShutdown")
    small = _search("kafka-2.4", max_crashes=1, max_expirations=0, without=no_crash)
    assert small.complete
    assert "max_crashes" not in small.bounds_met and "max_epoch" not in small.bounds_met
    assert {"max_records", "max_expirations", "max_time"} <= small.bounds_met   # a budget of 0 is used up at once
    raised = _search("kafka-2.4", max_crashes=2, max_epoch=3, max_expirations=0, without=no_crash)
    assert raised.complete
    assert (raised.distinct_states, raised.transitions, raised.pruned) == \
        (small.distinct_states, small.transitions, small.pruned)
    # with crashes taken the budget is used up, and raising it grows the search
    met = _search("kafka-2.4", max_crashes=1, max_expirations=0)
    assert met.complete and "max_crashes" in met.bounds_met
    more = _search("kafka-2.4", max_crashes=2, max_expirations=0)
    assert more.distinct_states > met.distinct_states


@pytest.mark.unit
def test_the_ladder_skips_only_scopes_whose_search_would_be_the_same():
    name = "kafka-2.4"
    base = {**explore_bounds(name), "max_isr_changes": None}
    pin = {"brokers": 2, "max_time": 0, "max_controller_epoch": 1, "max_records": 1, "max_crashes": 0}
    cfg = preset(name).config
    out = search_scopes(cfg, base, pinned=pin, scope_states=3000, max_rounds=1)
    assert out.same and len(out.searched) + len(out.same) == out.scopes
    searched = {tuple(sc.bounds.items()): sc.result for sc in out.searched}
    for bounds, like in out.same:
        twin = searched[tuple(like.items())]
        assert twin.complete and not twin.found
        differs = [k for k in bounds if bounds[k] != like[k]]
        assert differs and all(k not in twin.bounds_met for k in differs)
        scfg, kw = search_args(cfg, {**base, **bounds, "composite": True, "max_states": 3000})
        alone = explore(scfg, **kw)
        assert alone.complete and not alone.found
        assert (alone.distinct_states, alone.transitions) == (twin.distinct_states, twin.transitions)


@pytest.mark.unit
def test_explore_says_which_bounds_a_complete_search_never_met():
    args = ["--preset", "kafka-2.4", "--max-crashes", "1", "--max-expirations", "0", "--without", "ConsumerFetch",
            "--without", "BrokerCrash", "--without", "ControlledShutdown", "--no-archive"]
    r = CliRunner().invoke(explore_cmd, [*args, "--json"])
    assert r.exit_code == 0, r.output
    met = json.loads(r.stdout)["bounds_met"]
    assert "max_crashes" not in met and "max_expirations" in met
    text = CliRunner().invoke(explore_cmd, args)
    line = next(x for x in text.stdout.splitlines() if x.startswith("bounds never met:"))
    assert "--max-crashes" in line and "--max-expirations" not in line
