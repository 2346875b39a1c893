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
    # the bounds worth raising are those the search met: the controller epoch is one, the leader epoch is not
    hint = line[0].split("raise a bound it met (")[1].split(";")[0]
    assert "--max-controller-epoch" in hint and "--max-epoch" not in hint


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
def test_another_violation_first_points_at_the_preset_bug():
    """A search stopped at a violation other than the preset's bug says which, how it is attributed, and how to look
    for the preset's own; nothing once the preset's bugs are found or its invariant is not checked."""
    from types import SimpleNamespace

    from isrlab.explore_cmd import missed_bug_text
    from isrlab.properties.invariants import SAFETY

    res = SimpleNamespace(complete=False, stop_reason="violation")
    stop = ("log_matching", "log_matching: UNEXPECTED, no known fix removes it")
    text = missed_bug_text("kafka-0.11", "isr_entry_condition", ("KAFKA-7128",), [], res, None, 10, None, SAFETY, stop)
    assert "KAFKA-7128" in text and "stopped at a violation of log_matching (log_matching: UNEXPECTED" in text
    assert "--invariant isr_entry_condition" in text
    assert missed_bug_text("kafka-0.11", "isr_entry_condition", ("KAFKA-7128",), ["KAFKA-7128"], res, None, 10, None,
                           SAFETY, stop) is None
    only = tuple(i for i in SAFETY if i.name == "log_matching")   # the preset's invariant not checked: nothing to say
    assert missed_bug_text("kafka-0.11", "isr_entry_condition", ("KAFKA-7128",), [],
                           SimpleNamespace(complete=True, stop_reason=None), None, 10, None, only) is None
    assert missed_bug_text("kafka-2.4", "pass", (), [], res, None, 10, None, SAFETY, stop) is None


# --------------------------------------------------------------------------- going on past known bugs
#: a user preset: kafka-2.4 without KAFKA-6082's fencing, expected to pass (KAFKA-6082 is a known bug it contains, not
#: one it expects); and kafka-2.4 with crashes that lose unflushed data, expected to pass without declaring that
#: setting's bug, so no known fix explains the acknowledged record it loses
USER_PRESETS = """
[presets.zk-6082]
base = "kafka-2.4"
flags = { kafka_6082 = false }

[presets.lossy-undeclared]
base = "kafka-2.4"
flags = { crash_loses_unflushed_data = true }

[presets.lossy-declared]
base = "kafka-2.4"
expected = "acked_durability"
bugs = ["unflushed-crash-loss"]
flags = { crash_loses_unflushed_data = true }
"""
#: small bounds: two brokers, one ZooKeeper session expiration, a second controller epoch (a deposed controller)
ZK_6082 = ("--brokers", "2", "--max-records", "0", "--max-epoch", "1", "--max-crashes", "0", "--max-expirations", "1",
           "--max-controller-epoch", "2", "--max-isr-changes", "0", "--max-time", "0", "--max-states", "2000")
#: test_explore.py's crash-loses-unflushed bounds: one broker, one crash, an acknowledged record lost in 15 actions
LOSSY = ("--brokers", "1", "--max-records", "1", "--max-epoch", "1", "--max-crashes", "1", "--max-expirations", "0",
         "--max-controller-epoch", "2", "--max-isr-changes", "0", "--acks", "-1", "--without", "ConsumerFetch",
         "--eager-tasks")


@pytest.fixture
def user_presets(tmp_path, monkeypatch):
    from isrlab import userpresets

    (tmp_path / "isrlab.toml").write_text(USER_PRESETS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ISRLAB_CONFIG", raising=False)
    userpresets.load()
    yield
    userpresets.unload()


@pytest.mark.scenario
def test_a_default_search_goes_on_past_a_known_bugs_violation(user_presets):
    """The default search attributes the deposed controller's write (9 actions) to KAFKA-6082, goes on past it and
    stops only at --max-states; `--continue-past none` stops at it. Either way the preset, expected to pass, is said
    to have met a known bug, not to be as expected, and the command exits 1."""
    r = _run("--preset", "zk-6082", *ZK_6082, "--json")
    j = json.loads(r.stdout)
    assert r.exit_code == 1 and j["past_known_bugs"] and j["continue_past"] == []
    assert j["stop_reason"] == "max_states" and j["passed_violations"] >= 1
    (v,) = j["violations"]
    assert v["invariant"] == "stale_controller_write_refused" and v["passed"] and v["kind"] == "known"
    assert v["attribution"]["bugs"] == ["KAFKA-6082"] and v["length"] == 9 and v["minimal"]
    assert j["result"]["verdict"] == "known bugs only" and j["result"]["known"] == ["KAFKA-6082"]
    assert j["result"]["unexpected"] == [] and "as expected" not in j["result"]["text"]
    stop = json.loads(_run("--preset", "zk-6082", *ZK_6082, "--continue-past", "none", "--json").stdout)
    assert stop["stop_reason"] == "violation" and not stop["past_known_bugs"] and stop["passed_violations"] == 0
    assert stop["distinct_states"] < j["distinct_states"]
    assert [(x["invariant"], x["passed"], x["kind"]) for x in stop["violations"]] == \
        [("stale_controller_write_refused", False, "known")]
    text = _run("--preset", "zk-6082", *ZK_6082).stdout
    assert "VIOLATION stale_controller_write_refused: minimal trace of 9 actions; the search went on past it" in text
    assert "attributed (a known bug, not the preset's): stale_controller_write_refused: KAFKA-6082" in text
    assert "zk-6082: known bugs only: met KAFKA-6082" in text


@pytest.mark.scenario
def test_a_violation_no_known_fix_removes_is_unexpected(user_presets):
    """An acknowledged record lost to a lossy crash the preset does not declare (a setting is a candidate only where
    the preset expects it): the only fix to try, KAFKA-10706's, leaves it, so it is UNEXPECTED, stops the search and
    exits 1; the same configuration declaring the setting's bug finds it as expected."""
    r = _run("--preset", "lossy-undeclared", *LOSSY, "--json")
    j = json.loads(r.stdout)
    assert r.exit_code == 1 and j["stop_reason"] == "violation"
    (v,) = j["violations"]
    assert v["invariant"] == "acked_durability" and v["kind"] == "unexpected" and not v["passed"]
    assert v["attribution"]["bugs"] == [] and [e["fixes"] for e in v["attribution"]["evidence"]] == [["KAFKA-10706"]]
    assert j["result"]["verdict"] == "UNEXPECTED" and len(j["result"]["unexpected"]) == 1
    text = _run("--preset", "lossy-undeclared", *LOSSY).stdout
    assert "attributed (UNEXPECTED): acked_durability: UNEXPECTED, no known fix removes it" in text
    assert "lossy-undeclared: UNEXPECTED: 1 violation(s) of acked_durability" in text
    ok = _run("--preset", "lossy-declared", *LOSSY, "--json")
    j = json.loads(ok.stdout)
    assert ok.exit_code == 1 and j["result"]["verdict"] == "as expected"
    assert j["result"]["found"] == ["unflushed-crash-loss"] and j["violations"][0]["kind"] == "found"
    # --continue-past names an invariant: the search goes on past it, but its violation is still attributed
    past = json.loads(_run("--preset", "lossy-undeclared", *LOSSY, "--continue-past", "acked_durability",
                           "--json").stdout)
    assert past["complete"] and past["result"]["verdict"] == "UNEXPECTED"


@pytest.mark.unit
def test_the_known_bugs_judge_passes_a_known_bug_and_stops_at_the_presets_own():
    """The explorer's no-kip-380 trace (a restarted broker takes a deposed controller's LeaderAndIsr): no-kip-380,
    expected to pass, contains KIP-380, so the judge goes on past it and keeps it; a preset expecting KIP-380 stops
    there (its one bug found: the search's goal)."""
    import dataclasses
    import os

    from isrlab.properties.attribution import KnownBugs
    from isrlab.model.trace import load_trace

    t = load_trace(os.path.join(os.path.dirname(__file__), "fixtures", "no-kip-380-hw_within_isr-explore-minimal.json"))
    p = PRESETS["no-kip-380"]
    judge = KnownBugs(p, t.config)
    assert judge("hw_within_isr", {}, t.actions) is True
    assert list(judge.passed) == [("hw_within_isr", "known", ("KIP-380",))] and judge.made == 1
    assert judge("hw_within_isr", {}, t.actions) is True and judge.made == 1   # each trace attributed once
    expecting = dataclasses.replace(p, expected="hw_within_isr", bugs=("KIP-380",))
    goal = KnownBugs(expecting, t.config)
    assert goal("hw_within_isr", {}, t.actions) is False and goal.found == {"KIP-380"} and not goal.passed


@pytest.mark.unit
def test_a_search_ended_by_known_violations_only_says_so():
    from types import SimpleNamespace

    from isrlab.explore_cmd import missed_bug_text, status_text, verdict_text
    from isrlab.properties.invariants import SAFETY

    res = SimpleNamespace(complete=True, stop_reason=None)
    assert "only violations of known bugs found" in status_text(res, None, 10, None, False, True, True)
    assert status_text(res, None, 10, None, False, True, False).endswith(", violations found")
    assert status_text(res, None, 10, None, False) == "complete: every state within the bounds checked"
    text = missed_bug_text("old-message-format", "acked_durability", ("message-format-v1",), [], res, None, 10, None,
                           SAFETY)
    assert "is not within these bounds" in text and "message-format-v1" in text
    r = {"found": [], "not_found": ["message-format-v1"], "unexpected": [], "known": ["KIP-101"]}
    assert verdict_text(PRESETS["old-message-format"], r, True) == \
        "not found: message-format-v1; other known bugs met: KIP-101"
    r = {"found": [], "not_found": [], "unexpected": [], "known": []}
    assert verdict_text(PRESETS["kafka-2.4"], r, True) == "as expected: no violation"
    assert verdict_text(PRESETS["kafka-2.4"], r, False) == \
        "as expected: no violation in the states searched before the search stopped"


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


@pytest.mark.unit
def test_a_judge_is_asked_where_an_invariant_first_fails_on_each_path():
    """With a judge that passes everything, the search visits every state the all-violations search visits; the judge
    is asked on several paths, never below a state where it passed the same invariant (no trace it saw extends another
    of the same invariant), and nothing is recorded.  A judge that passes nothing is the search without one."""
    from isrlab.properties.explore import bounded_config, explore

    cfg = bounded_config(PRESETS["crash-loses-unflushed"].config, 1, 1, 1, 0, 2).replace(produce_acks=(-1,))
    kw = dict(max_leader_epoch=1, max_isr_changes=0, max_time_ms=2500, eager_tasks=True, without=("ConsumerFetch",))
    asked = []
    every = explore(cfg, **kw, stop_at_first=False)
    passing = explore(cfg, **kw, judge=lambda name, facts, actions: asked.append((name, list(actions))) or True)
    assert passing.complete and not passing.found and passing.passed == len(asked) > 1
    # the same states checked (more of them stored: a chain ends at a violation, checked on every path here)
    assert passing.visited == every.visited
    for name, acts in asked:
        assert not any(n == name and len(b) < len(acts) and acts[:len(b)] == b for n, b in asked), (name, acts)
    plain = explore(cfg, **kw)
    stopping = explore(cfg, **kw, judge=lambda name, facts, actions: False)
    assert stopping.stop_reason == plain.stop_reason == "violation" and stopping.passed == 0
    assert {n: f.actions for n, f in stopping.found.items()} == {n: f.actions for n, f in plain.found.items()}
    assert stopping.distinct_states == plain.distinct_states


@pytest.mark.slow
def test_kafka_0_10_2s_default_search_finds_its_bug_behind_a_known_one():
    """kafka-0.10.2's default search meets a deposed controller's write first (9 actions, KAFKA-6082, a known bug it
    contains), goes on past it, and stops at KIP-101's lost committed record, a longer trace that replays to its
    violation at its last step and that KIP-101's fix removes."""
    from isrlab.properties.attribution import KnownBugs
    from isrlab.properties.explore import explore
    from isrlab.properties.shrink import first_violation

    p = PRESETS["kafka-0.10.2"]
    cfg, kw = search_args(p.config, explore_bounds(p.name))
    judge = KnownBugs(p, cfg)
    r = explore(cfg, judge=judge, **kw)
    assert r.stop_reason == "violation" and judge.found == {"KIP-101"} and r.found, (r.stop_reason, judge.found)
    (known, _facts), = [v for (n, kind, bugs), v in judge.passed.items()
                        if (n, kind, bugs) == ("stale_controller_write_refused", "known", ("KAFKA-6082",))]
    for name, f in r.found.items():
        assert len(known) < len(f.actions)
        hit = first_violation(cfg, f.actions, name)
        assert hit is not None and hit[0] == len(f.actions)
        assert judge.attribution(name, f.actions).bugs == ("KIP-101",)


def _default_search(name, bounds=None):
    """A preset's default search as the command runs it, with its judge."""
    from isrlab.properties.attribution import KnownBugs
    from isrlab.properties.explore import explore

    p = PRESETS[name]
    cfg, kw = search_args(p.config, bounds or explore_bounds(name))
    judge = KnownBugs(p, cfg)
    return p, cfg, judge, explore(cfg, judge=judge, **kw)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["crash-loses-unflushed", "no-kafka-6082", "no-kafka-15583", "no-kafka-13916",
                                  "no-kafka-13141", "no-kafka-14704", "kafka-2.7"])
def test_a_fast_default_search_finds_its_presets_bug(name):
    """The breaking presets whose default search takes seconds (the README's table): it stops at a violation
    attributed to the preset's own bug, whatever known bugs it went on past, and the trace replays to it at its last
    step."""
    from isrlab.properties.shrink import first_violation

    p, cfg, judge, r = _default_search(name)
    assert r.stop_reason == "violation" and judge.found == set(p.bugs), (r.stop_reason, judge.found)
    (inv, f), = r.found.items()
    assert judge.attribution(inv, f.actions).credited() == p.bugs[:1]
    hit = first_violation(cfg, f.actions, inv)
    assert hit is not None and hit[0] == len(f.actions)


@pytest.mark.slow
def test_log_start_offsets_default_search_completes_without_a_violation():
    """A passing preset whose default search takes seconds (the README's table): it completes, every state within its
    bounds checked (a crash among them, so leaders move), and meets no violation, not even a known bug's."""
    p, cfg, judge, r = _default_search("log-start-offset")
    assert cfg.max_crashes >= 1
    assert r.complete and r.stop_reason is None, r.stop_reason
    assert not r.found and not judge.passed and r.passed == 0
    assert r.kinds.get("BrokerCrash", 0) > 0


@pytest.mark.slow
def test_the_pending_reset_fixed_preset_explores_clean_at_its_default_bounds():
    """kafka-4.1-pending-reset-fixed (every known bug of the catalogue fixed): `isrlab explore` at its default bounds
    completes with no violation at all, as expected, and exits 0; its search crashes a broker."""
    r = _run("--preset", "kafka-4.1-pending-reset-fixed", "--json")
    j = json.loads(r.stdout)
    assert r.exit_code == 0, r.output
    assert j["complete"] and j["stop_reason"] is None and j["violations"] == [] and j["passed_violations"] == 0
    assert j["known_bugs"] == [] and j["result"]["verdict"] == "as expected"
    assert j["kinds"].get("BrokerCrash", 0) > 0


@pytest.mark.slow
def test_the_queue_bound_that_completes_kafka_14140s_fix_still_finds_the_bug_without_it():
    """alter-isr-kafka-14140's default search bounds the controller's queues (its refused AlterIsr retries queue
    UpdateMetadata for ever); no-kafka-14140 searched within the very same bounds still meets KAFKA-14140."""
    from isrlab.properties.shrink import first_violation

    bounds = explore_bounds("alter-isr-kafka-14140")
    assert bounds["max_queue"] is not None and explore_bounds("no-kafka-14140")["max_queue"] is None
    p, cfg, judge, r = _default_search("no-kafka-14140", bounds)
    assert r.stop_reason == "violation" and judge.found == {"KAFKA-14140"}, (r.stop_reason, judge.found)
    (inv, f), = r.found.items()
    hit = first_violation(cfg, f.actions, inv)
    assert hit is not None and hit[0] == len(f.actions)


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


#: breaking presets whose default search took minutes when its trace was kept (fine searches, before the coarse search
#: delivered a controller's decisions at once): the fix each one's bug is checked against (the flag values of the
#: release it is fixed in)
SLOW_DEFAULT_FINDS = {"kraft-no-partition-epoch-check": {"partition_epoch_check": True},
                      "old-message-format": {"old_message_format_partitions": ()},
                      "kafka-3.7-disk-wipe": {"eligible_leader_replicas": True},
                      "kafka-3.7-lossy-crash": {"eligible_leader_replicas": True},
                      "no-kip-903": {"kip_903": True},
                      "no-kafka-15221": {"kafka_15221": True},
                      "no-kafka-7415": {"kafka_7415": True}}


@pytest.mark.unit
@pytest.mark.parametrize("name", sorted(SLOW_DEFAULT_FINDS))
def test_a_slow_default_searchs_trace_is_within_its_bounds(name):
    """The trace a breaking preset's default search found in minutes (benchmarks/RESULTS.md), kept as a fixture: every action is one the default search offers in its state (eager tasks, kinds left
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
