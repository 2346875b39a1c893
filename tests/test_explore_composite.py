"""The explorer's coarse search (``composite``): exchanges taken whole and a controller's decisions delivered to every
live broker at once.  What it stores is a subset of what the fine search reaches, and its violations are real."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from isrlab.explore_cmd import explore as explore_cmd
from isrlab.model.actions import ACTION_BY_NAME, DELIVERIES
from isrlab.model.config import PRESETS, explore_bounds, preset
from isrlab.model.step import initial_state, step
from isrlab.model.trace import load_trace
from isrlab.properties.explore import CHAIN_CAP, bounded_config, explore, explorer_actions, search_args, state_key
from isrlab.properties.shrink import first_violation

#: small searches of each era that complete both fine and coarse: (preset, brokers, records, crashes, expirations)
SMALL = [("kafka-3.7", 2, 0, 1, 0), ("kafka-2.4", 2, 1, 1, 0)]


def _searches(name, brokers, records, crashes, expirations):
    cfg = bounded_config(preset(name).config, brokers, records, crashes, expirations, 1)
    kw = dict(max_leader_epoch=1, max_isr_changes=1, max_time_ms=0, eager_tasks=True, without=("ConsumerFetch",),
              stop_at_first=False)
    fine = explore(cfg, keep_graph=True, compress=False, **kw)
    coarse = explore(cfg, composite=True, **kw)
    return cfg, kw, fine, coarse


@pytest.mark.unit
@pytest.mark.parametrize("small", SMALL, ids=[s[0] for s in SMALL])
def test_a_coarse_search_stores_reachable_states_with_no_delivery_left(small):
    """Both searches complete; the coarse one stores fewer states, each of them one the fine search reached (the same
    key), and none with a delivery enabled unless its chain stopped at the cap: the controller's decisions reached
    every live broker within the step that made them."""
    cfg, kw, fine, coarse = _searches(*small)
    assert fine.complete and coarse.complete and coarse.composite and not fine.composite
    assert not fine.found and not coarse.found
    assert coarse.distinct_states < fine.distinct_states
    reached = {state_key(cfg, s) for s in fine.states}
    assert len(reached) == fine.distinct_states
    without = frozenset(ACTION_BY_NAME[k] for k in kw["without"])
    memo = {0: initial_state(cfg)}

    def state(i):
        if i not in memo:
            s = state(coarse.parent[i])
            a = coarse.via[i]
            for x in (a if type(a) is tuple else (a,)):
                s = step(cfg, s, x)
            memo[i] = s
        return memo[i]

    delivered_in_chains = 0
    for i in range(coarse.distinct_states):
        s = state(i)
        assert state_key(cfg, s) in reached, i
        via = coarse.via[i]
        chain = via if type(via) is tuple else (via,)
        delivered_in_chains += sum(type(x) in DELIVERIES for x in chain[1:])
        if len(chain) < CHAIN_CAP:
            due = [a for a in explorer_actions(cfg, s, kw["eager_tasks"], without) if type(a) in DELIVERIES]
            assert not due, (i, due)
    assert delivered_in_chains > 0


#: presets whose default coarse search finds their bug in seconds: the fix each one's bug is checked against
FAST_COARSE_FINDS = {"kraft-no-partition-epoch-check": {"partition_epoch_check": True},
                     "no-kafka-19522": {"kafka_19522": True}}


@pytest.mark.scenario
@pytest.mark.parametrize("name", sorted(FAST_COARSE_FINDS))
def test_a_default_coarse_search_finds_its_presets_bug(name, tmp_path):
    """The preset's default bounds search coarse and find its own bug (attributed by its fix); the archived trace
    replays to the violation in the bounded configuration and, with the fix, breaks nothing."""
    assert explore_bounds(name)["composite"]
    r = CliRunner().invoke(explore_cmd, ["--json", "--preset", name, "--out", str(tmp_path)])
    assert r.exit_code == 1, r.output
    j = json.loads(r.stdout)
    assert j["stop_reason"] == "violation" and j["missed_bug"] is None
    v = j["violations"][0]
    assert v["invariant"] == PRESETS[name].expected and v["kind"] == "found"
    assert v["bugs"] == list(PRESETS[name].bugs)
    (path,) = tmp_path.glob("*.json")
    t = load_trace(str(path))
    cfg, _ = search_args(PRESETS[name].config, explore_bounds(name))
    assert t.config == cfg and len(t.actions) == v["length"]
    assert first_violation(cfg, t.actions, v["invariant"])[0] == len(t.actions)
    assert first_violation(cfg.replace(**FAST_COARSE_FINDS[name]), t.actions, v["invariant"]) is None
