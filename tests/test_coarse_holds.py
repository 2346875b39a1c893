"""What a coarse search may hold back: requests in flight (``explore``'s ``max_in_flight``: each request taken both
answered at once and held, its answer a later choice) and brokers lagging the controller (``max_lagging``: a step
that delivers decisions to a broker taken again with that broker's deliveries held).  Either search lies between the
coarse one and the fine one, and reaches bugs that need a request answered late or a broker told late."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from isrlab.explore_cmd import explore as explore_cmd
from isrlab.model.actions import ACTION_BY_NAME
from isrlab.model.config import explore_bounds, preset
from isrlab.model.step import initial_state, step
from isrlab.properties.explore import (ANSWERS, OPENS_REQUEST, bounded_config, explore, explorer_actions,
                                       lagging_brokers, state_key)

KW = dict(max_leader_epoch=1, max_isr_changes=1, max_time_ms=0, eager_tasks=True, without=("ConsumerFetch",),
          stop_at_first=False)


def _states(cfg, res):
    """The states a compressed search stored, replayed along their paths."""
    memo = {0: initial_state(cfg)}

    def state(i):
        up = []
        while i not in memo:   # a parent may be numbered after its child (reached again by a shorter path)
            up.append(i)
            i = res.parent[i]
        for j in reversed(up):
            a, s = res.via[j], memo[res.parent[j]]
            for x in (a if type(a) is tuple else (a,)):
                s = step(cfg, s, x)
            memo[j] = s
        return memo[up[0]] if up else memo[i]

    return [state(i) for i in range(res.distinct_states)]


@pytest.mark.unit
@pytest.mark.parametrize("name", ["kafka-2.4", "kafka-3.7"])
@pytest.mark.parametrize("bound", ["max_in_flight", "max_lagging"])
def test_what_a_coarse_search_holds_lies_between_it_and_the_fine_search(name, bound):
    """Coarse states all stored again with one request (or one broker's deliveries) held, and more besides; each one
    the fine search reaches; none holding more than the bound; and a second one held grows the search only where the
    bound was met."""
    cfg = bounded_config(preset(name).config, 2, 0, 1, 0, 1)
    fine = explore(cfg, keep_graph=True, compress=False, **KW)
    coarse = explore(cfg, composite=True, **KW)
    held = explore(cfg, composite=True, **{bound: 1}, **KW)
    assert fine.complete and coarse.complete and held.complete and not held.found
    assert getattr(held, bound) == 1 and getattr(coarse, bound) == 0
    assert coarse.distinct_states < held.distinct_states < fine.distinct_states
    reached = {state_key(cfg, s) for s in fine.states}
    without = frozenset(ACTION_BY_NAME[k] for k in KW["without"])

    def holding(s) -> int:
        acts = explorer_actions(cfg, s, True, without)
        if bound == "max_in_flight":
            return sum(type(a) in ANSWERS for a in acts)
        return len(lagging_brokers(acts))

    held_keys = set()
    pending = 0
    for s in _states(cfg, held):
        k = state_key(cfg, s)
        assert k in reached
        held_keys.add(k)
        n = holding(s)
        assert n <= 1
        pending += n
    assert pending > 0
    assert {state_key(cfg, s) for s in _states(cfg, coarse)} <= held_keys
    assert bound in coarse.bounds_met   # answered or delivered at once: a bound of 1 would have held it
    more = explore(cfg, composite=True, **{bound: 2}, **KW)
    if bound in held.bounds_met:
        assert more.distinct_states > held.distinct_states
    else:   # never a second one held: the same search
        assert (more.distinct_states, more.transitions) == (held.distinct_states, held.transitions)


@pytest.mark.unit
def test_a_bound_of_held_requests_never_met_can_be_raised():
    """One broker fetches from no one: no request is ever taken, so the bound is never met and raising it changes
    nothing."""
    cfg = bounded_config(preset("kafka-2.4").config, 1, 1, 1, 0, 1)
    one = explore(cfg, composite=True, max_in_flight=1, **KW)
    three = explore(cfg, composite=True, max_in_flight=3, **KW)
    assert one.complete and "max_in_flight" not in one.bounds_met
    assert (one.distinct_states, one.transitions) == (three.distinct_states, three.transitions)
    assert OPENS_REQUEST and not any(k in one.kinds for k in (t.__name__ for t in OPENS_REQUEST))


@pytest.mark.scenario
def test_kafka_12686_needs_an_alter_isr_answered_late(tmp_path):
    """no-kafka-12686's bounds complete coarse without its bug; holding one request finds it, attributed to it."""
    name = "no-kafka-12686"
    b = explore_bounds(name)
    assert b["composite"] and b["max_in_flight"] == 1
    whole = CliRunner().invoke(explore_cmd, ["--json", "--preset", name, "--max-in-flight", "0", "--no-archive"])
    j = json.loads(whole.stdout)
    assert j["complete"] and "KAFKA-12686" not in j["result"]["found"]
    r = CliRunner().invoke(explore_cmd, ["--json", "--preset", name, "--out", str(tmp_path)])
    assert r.exit_code == 1, r.output
    j = json.loads(r.stdout)
    assert j["result"]["found"] == ["KAFKA-12686"] and j["missed_bug"] is None
    v = next(v for v in j["violations"] if v["bugs"] == ["KAFKA-12686"])
    assert v["invariant"] == "pending_isr_in_flight"


@pytest.mark.unit
@pytest.mark.parametrize("option", ["--max-in-flight", "--max-lagging"])
def test_holding_needs_the_coarse_search(option):
    r = CliRunner().invoke(explore_cmd, ["--preset", "kafka-2.4", option, "1", "--no-archive", "--fine"])
    assert r.exit_code == 2
    assert option in r.output and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
