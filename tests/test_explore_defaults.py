"""Every preset's default ``isrlab explore`` bounds (model.config.explore_bounds) and what the command says when a
breaking preset's own bug is not found within them."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from isrlab.explore_cmd import explore as explore_cmd
from isrlab.model.actions import ACTION_BY_NAME
from isrlab.model.config import EXPLORE_BOUNDS, EXPLORE_DEFAULTS, EXPLORE_WHY_NO_FAULT, PRESETS, explore_bounds
from isrlab.properties.explore import search_args


@pytest.mark.unit
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_default_bounds_are_valid_and_allow_a_fault(name):
    """Each preset's bounds make a search (every key, values in range, known action kinds), and allow a broker
    crash or a session expiration (so its leaders can change) unless EXPLORE_WHY_NO_FAULT says why not."""
    b = explore_bounds(name)
    assert set(b) == set(EXPLORE_DEFAULTS) and set(EXPLORE_BOUNDS.get(name, {})) <= set(EXPLORE_DEFAULTS)
    assert 1 <= b["brokers"] <= 6 and b["max_controller_epoch"] >= 1 and b["max_states"] >= 1
    for k in ("max_records", "max_epoch", "max_crashes", "max_expirations", "max_isr_changes"):
        assert isinstance(b[k], int) and b[k] >= 0, k
    assert b["max_time"] is None or b["max_time"] >= 0
    assert isinstance(b["settle_every"], int) and b["settle_every"] >= 0
    assert b["acks"] and set(b["acks"]) <= {-1, 0, 1}
    assert all(k in ACTION_BY_NAME for k in b["without"])
    cfg, kw = search_args(PRESETS[name].config, b)
    assert cfg.n_brokers == b["brokers"] and kw["max_states"] == b["max_states"]
    if name in EXPLORE_WHY_NO_FAULT:
        assert b["max_crashes"] == 0 and b["max_expirations"] == 0, "a stale reason: its bounds allow a fault"
        assert EXPLORE_WHY_NO_FAULT[name].strip()
    else:
        assert b["max_crashes"] >= 1 or b["max_expirations"] >= 1


@pytest.mark.unit
def test_every_reason_names_a_preset_with_its_own_bounds():
    assert set(EXPLORE_WHY_NO_FAULT) <= set(EXPLORE_BOUNDS)


def _run(*args):
    return CliRunner().invoke(explore_cmd, ["--no-archive", "--quiet", *args])


@pytest.mark.scenario
def test_a_bug_outside_completed_bounds_is_said_in_one_line():
    """no-kafka-6082 needs a second controller epoch: with one (and one broker) the search completes, clean."""
    r = _run("--preset", "no-kafka-6082", "--brokers", "1", "--max-controller-epoch", "1")
    assert r.exit_code == 0, r.output
    assert "complete: every state within the bounds checked" in r.stdout and "INCOMPLETE" not in r.stdout
    line = [x for x in r.stdout.splitlines() if "is not within these bounds" in x]
    assert len(line) == 1 and "stale_controller_write_refused" in line[0]
    assert "isrlab fuzz --preset no-kafka-6082" in line[0]


@pytest.mark.scenario
def test_a_search_stopped_before_the_bug_names_the_limit():
    r = _run("--preset", "no-kafka-6082", "--max-states", "50")
    assert r.exit_code == 0, r.output
    assert "INCOMPLETE: stopped by --max-states 50" in r.stdout
    assert "not found before --max-states 50 stopped the search" in r.stdout
    j = json.loads(_run("--preset", "no-kafka-6082", "--max-states", "50", "--json").stdout)
    assert j["stop_reason"] == "max_states" and "--max-states 50" in j["missed_bug"]


@pytest.mark.scenario
def test_a_found_bug_and_a_passing_preset_get_no_such_line():
    r = _run("--preset", "no-kafka-6082", "--json")   # its default bounds find it
    j = json.loads(r.stdout)
    assert r.exit_code == 1 and j["stop_reason"] == "violation" and j["missed_bug"] is None
    assert [v["invariant"] for v in j["violations"]] == ["stale_controller_write_refused"]
    j = json.loads(_run("--preset", "kafka-2.4", "--brokers", "1", "--json").stdout)
    assert j["complete"] and j["missed_bug"] is None


@pytest.mark.unit
def test_another_invariant_first_points_at_the_preset_bug():
    """A search stopped at a violation of an invariant other than the preset's says how to look for its own."""
    from types import SimpleNamespace

    from isrlab.explore_cmd import missed_bug_text
    from isrlab.properties.invariants import SAFETY

    res = SimpleNamespace(found={"log_matching": None}, complete=False, stop_reason="violation")
    text = missed_bug_text("kafka-0.11", "isr_entry_condition", ("log_matching",), res, None, 10, None, SAFETY)
    assert "stopped at the first violation, log_matching (one the preset is known to break" in text
    assert "--invariant isr_entry_condition" in text
    res.found["isr_entry_condition"] = None
    assert missed_bug_text("kafka-0.11", "isr_entry_condition", ("log_matching",), res, None, 10, None, SAFETY) is None
    only = tuple(i for i in SAFETY if i.name == "log_matching")   # the preset's invariant not checked: nothing to say
    assert missed_bug_text("kafka-0.11", "isr_entry_condition", (), SimpleNamespace(found={}, complete=True,
                           stop_reason=None), None, 10, None, only) is None


# --------------------------------------------------------------------------- going on past known violations
@pytest.mark.scenario
def test_a_default_search_goes_on_past_the_presets_known_violations():
    """By default the search goes on past what the preset is known to break besides its own bug; `--continue-past`
    replaces that list (`none`: stop at the first violation of anything); `--invariant` searches for its own."""
    from isrlab.explore_cmd import default_continue_past

    p = PRESETS["no-kafka-2143"]
    assert p.also_breaks and p.expected not in default_continue_past(p)
    j = json.loads(_run("--preset", "no-kafka-2143", "--max-states", "50", "--json").stdout)
    assert j["continue_past"] == list(default_continue_past(p))
    assert set(j["continue_past"]) <= set(p.also_breaks)
    j = json.loads(_run("--preset", "no-kafka-2143", "--max-states", "50", "--continue-past", "none", "--json").stdout)
    assert j["continue_past"] == []
    j = json.loads(_run("--preset", "no-kafka-2143", "--max-states", "50", "--invariant", "hw_within_isr",
                        "--json").stdout)
    assert j["continue_past"] == []
    assert default_continue_past(PRESETS["kafka-2.4"]) == ()
    r = _run("--preset", "kafka-2.4", "--continue-past", "no_such_invariant")
    assert r.exit_code == 2 and "no_such_invariant" in r.output and "Traceback" not in r.output


@pytest.mark.unit
def test_a_search_ended_by_known_violations_only_says_so():
    from types import SimpleNamespace

    from isrlab.explore_cmd import missed_bug_text, status_text
    from isrlab.properties.invariants import SAFETY

    res = SimpleNamespace(found={"hw_within_isr": None}, complete=True, stop_reason=None)
    assert "only violations known to the preset" in status_text(res, None, 10, None, False, ("hw_within_isr",))
    assert "violations found" in status_text(res, None, 10, None, False, ())
    text = missed_bug_text("old-message-format", "acked_durability", ("hw_within_isr",), res, None, 10, None, SAFETY,
                           ("hw_within_isr",))
    assert "is not within these bounds" in text
    res = SimpleNamespace(found={"hw_within_isr": None, "log_matching": None}, complete=False, stop_reason="violation")
    text = missed_bug_text("old-message-format", "acked_durability", ("hw_within_isr",), res, None, 10, None, SAFETY,
                           ("hw_within_isr",))
    assert "the first violation, log_matching (another invariant)" in text


@pytest.mark.unit
def test_going_on_past_a_violation_records_it_and_completes_the_search():
    """An invariant in go_on_past keeps its shortest trace but does not stop the search, which then visits what the
    all-violations search visits; without it the search stops at that violation."""
    from isrlab.properties.explore import bounded_config, explore

    cfg = bounded_config(PRESETS["crash-loses-unflushed"].config, 1, 1, 1, 0, 2).replace(produce_acks=(-1,))
    kw = dict(max_leader_epoch=1, max_isr_changes=0, max_time_ms=2500, eager_tasks=True, without=("ConsumerFetch",))
    every = explore(cfg, **kw, stop_at_first=False)
    first = explore(cfg, **kw)
    past = explore(cfg, **kw, go_on_past={"acked_durability"})
    assert first.stop_reason == "violation" and not first.complete
    assert every.complete and past.complete and past.stop_reason is None
    assert past.distinct_states == every.distinct_states > first.distinct_states
    lengths = {n: len(f.actions) for n, f in first.found.items()}
    assert lengths == {n: len(f.actions) for n, f in past.found.items()} == {"acked_durability": 15}


@pytest.mark.slow
def test_the_default_search_finds_no_kafka_2143s_bug_behind_a_known_violation():
    """no-kafka-2143's default search meets hw_within_isr (known to the preset) first, goes on, and stops at its own
    bug, committed_prefix, with a longer trace that replays to that violation at its last step."""
    from isrlab.explore_cmd import default_continue_past
    from isrlab.properties.explore import explore
    from isrlab.properties.shrink import first_violation

    p = PRESETS["no-kafka-2143"]
    cfg, kw = search_args(p.config, explore_bounds(p.name))
    r = explore(cfg, go_on_past=default_continue_past(p), **kw)
    assert r.stop_reason == "violation" and "hw_within_isr" in r.found and p.expected in r.found
    known, own = r.found["hw_within_isr"].actions, r.found[p.expected].actions
    assert len(known) < len(own)
    for name, acts in (("hw_within_isr", known), (p.expected, own)):
        hit = first_violation(cfg, acts, name)
        assert hit is not None and hit[0] == len(acts)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["crash-loses-unflushed", "no-kafka-6082", "no-kafka-15583", "no-kafka-13916",
                                  "no-kafka-13141", "no-kafka-14704", "kafka-2.7"])
def test_a_fast_default_search_finds_its_presets_bug(name):
    """The breaking presets whose default search takes seconds (the README's table): it stops at the preset's own
    bug, whatever known violations it went on past, and the trace replays to it at its last step."""
    from isrlab.explore_cmd import default_continue_past
    from isrlab.properties.explore import explore
    from isrlab.properties.shrink import first_violation

    p = PRESETS[name]
    cfg, kw = search_args(p.config, explore_bounds(name))
    r = explore(cfg, go_on_past=default_continue_past(p), **kw)
    assert r.stop_reason == "violation" and p.expected in r.found, (r.stop_reason, list(r.found))
    acts = r.found[p.expected].actions
    hit = first_violation(cfg, acts, p.expected)
    assert hit is not None and hit[0] == len(acts)


@pytest.mark.slow
def test_log_start_offsets_default_search_completes_without_a_violation():
    """A passing preset whose default search takes seconds (the README's table): it completes, every state within its
    bounds checked (a crash among them, so leaders move), and finds nothing beyond the violations the preset lists."""
    from isrlab.explore_cmd import default_continue_past
    from isrlab.properties.explore import explore

    p = PRESETS["log-start-offset"]
    cfg, kw = search_args(p.config, explore_bounds(p.name))
    assert cfg.max_crashes >= 1
    r = explore(cfg, go_on_past=default_continue_past(p), **kw)
    assert r.complete and r.stop_reason is None, r.stop_reason
    assert set(r.found) <= set(default_continue_past(p))
    assert r.kinds.get("BrokerCrash", 0) > 0


@pytest.mark.slow
def test_the_queue_bound_that_completes_kafka_14140s_fix_still_finds_the_bug_without_it():
    """alter-isr-kafka-14140's default search bounds the controller's queues (its refused AlterIsr retries queue
    UpdateMetadata for ever); no-kafka-14140 searched within the very same bounds still meets KAFKA-14140."""
    from isrlab.explore_cmd import default_continue_past
    from isrlab.properties.explore import explore
    from isrlab.properties.shrink import first_violation

    bounds = explore_bounds("alter-isr-kafka-14140")
    assert bounds["max_queue"] is not None and explore_bounds("no-kafka-14140")["max_queue"] is None
    p = PRESETS["no-kafka-14140"]
    cfg, kw = search_args(p.config, bounds)
    r = explore(cfg, go_on_past=default_continue_past(p), **kw)
    assert r.stop_reason == "violation" and p.expected in r.found, (r.stop_reason, list(r.found))
    acts = r.found[p.expected].actions
    hit = first_violation(cfg, acts, p.expected)
    assert hit is not None and hit[0] == len(acts)


@pytest.mark.unit
def test_the_explorers_no_kip_380_trace_breaks_without_kip_380_only():
    """The explorer's 22-action trace on no-kip-380 (a restarted broker takes a deposed controller's LeaderAndIsr),
    kept with its search's bounded configuration (2 brokers): it replays to hw_within_isr, a break the preset lists;
    with KIP-380 on, the same actions replay clean."""
    import os

    from isrlab.model.step import initial_state, step
    from isrlab.model.trace import load_trace
    from isrlab.properties.shrink import first_violation

    t = load_trace(os.path.join(os.path.dirname(__file__), "fixtures", "no-kip-380-hw_within_isr-explore-minimal.json"))
    assert "hw_within_isr" in PRESETS["no-kip-380"].breaks and not t.config.kip_380
    assert first_violation(t.config, t.actions, "hw_within_isr")[0] == len(t.actions)
    fixed = t.config.replace(kip_380=True)
    s = initial_state(fixed)
    for a in t.actions:
        s = step(fixed, s, a)
        assert s is not None
    assert first_violation(fixed, t.actions, "hw_within_isr") is None


#: breaking presets whose default search takes minutes: the fix each one's bug is checked against (the flag values of
#: the release it is fixed in)
SLOW_DEFAULT_FINDS = {"kraft-no-partition-epoch-check": {"partition_epoch_check": True},
                      "old-message-format": {"old_message_format_partitions": ()},
                      "kafka-3.7-disk-wipe": {"eligible_leader_replicas": True},
                      "kafka-3.7-lossy-crash": {"eligible_leader_replicas": True},
                      "no-kip-903": {"kip_903": True},
                      "no-kafka-15221": {"kafka_15221": True}}


@pytest.mark.unit
@pytest.mark.parametrize("name", sorted(SLOW_DEFAULT_FINDS))
def test_a_slow_default_searchs_trace_is_within_its_bounds(name):
    """The trace a breaking preset's default search found in minutes (benchmarks/RESULTS.md, tenth and eleventh
    sessions), kept as a fixture: every action is one the default search offers in its state (eager tasks, kinds left
    out), no step leaves the bounds, it ends in the preset's bug, and the same actions with the fix break nothing."""
    import os

    from isrlab.model.actions import ACTION_BY_NAME as KINDS
    from isrlab.model.step import initial_state, step
    from isrlab.model.trace import load_trace
    from isrlab.properties.explore import _out_of_bounds, explorer_actions
    from isrlab.properties.shrink import first_violation

    p = PRESETS[name]
    t = load_trace(os.path.join(os.path.dirname(__file__), "fixtures", f"{name}-{p.expected}-explore-minimal.json"))
    cfg, kw = search_args(p.config, explore_bounds(name))
    assert t.config == cfg
    without = frozenset(KINDS[k] for k in kw["without"])
    s = initial_state(cfg)
    deadline = None if kw["max_time_ms"] is None else s.now + kw["max_time_ms"]   # as the explorer prunes ticks
    for a in t.actions:
        assert a in explorer_actions(cfg, s, kw["eager_tasks"], without), a
        s = step(cfg, s, a)
        assert not _out_of_bounds(s, kw["max_leader_epoch"], kw["max_isr_changes"], kw["max_queue"])
        assert deadline is None or s.now <= deadline
    assert first_violation(cfg, t.actions, p.expected)[0] == len(t.actions)
    assert first_violation(cfg.replace(**SLOW_DEFAULT_FINDS[name]), t.actions, p.expected) is None
