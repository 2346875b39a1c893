"""Starting states (model/start.py) and epoch-cache observations (model/log.py ``epoch_cache_answer``).

A trace may start from a given cluster: logs with records and epochs, epoch caches, HW checkpoints, ZooKeeper's
partition states, broker and controller epochs (KRaft's metadata image: tests/test_kraft_start.py).  These tests
replay valid starts through the engines, feed every kind of inconsistent start to ``isrlab replay`` (one line,
exit 2), and check the round trip and determinism.
"""

from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner

from isrlab.cli import main
from isrlab.model import actions as A
from isrlab.model.config import preset
from isrlab.model.encode import fingerprint
from isrlab.model.log import epoch_cache_answer
from isrlab.model.start import StartError
from isrlab.model.step import initial_state, step
from isrlab.model.trace import Trace, TraceError, dumps_trace, trace_from_json
from isrlab.properties.explain import sentence
from isrlab.properties.replay import replay
from isrlab.properties.shrink import shrink
from start_checks import assert_refused_in_one_line, fingerprints_under_hash_seeds

pytestmark = pytest.mark.unit

CFG = preset("kafka-2.4").config

#: broker 0 leads partition 0 in epoch 2 with ISR {0, 1}; broker 1 holds the first two records; broker 2 nothing
START = {
    "brokers": [
        {"broker": 0, "broker_epoch": 7,
         "logs": [{"partition": 0, "records": [[0, 1], [1, 1], [2, 2]], "hw_checkpoint": 2}]},
        {"broker": 1, "logs": [{"partition": 0, "records": [[0, 1], [1, 1]], "hw_checkpoint": 2}]},
    ],
    "zookeeper": {"controller_epoch": 3,
                  "partitions": [{"partition": 0, "leader": 0, "leader_epoch": 2, "isr": [0, 1], "zk_version": 5}]},
}
UP = [A.ElectController(2)] + [A.DeliverControlRequest(2, b) for b in (0, 1, 2)] * 2


def _trace(start=START, actions=(), **kw) -> Trace:
    return Trace(config=CFG, actions=list(actions), preset="kafka-2.4", start=start, **kw)


def _run_until_stable(s, actions):
    for a in actions:
        s2 = step(CFG, s, a)
        if s2 is not None:
            s = s2
    return s


# --------------------------------------------------------------------------- the state a start describes
def test_start_builds_the_cluster_it_describes():
    s = initial_state(CFG, START)
    b0, b1, b2 = s.brokers
    assert [e for _r, e in b0.logs[0].entries] == [1, 1, 2]
    assert b0.logs[0].epoch_cache == ((1, 0), (2, 2))          # derived from the records
    assert b0.logs[0].high_watermark == 2 and b0.hw_checkpoint[0] == 2
    assert b2.logs[0] is None
    # records are identified by (partition, offset, epoch): the same ids on both brokers
    assert b1.logs[0].entries == b0.logs[0].entries[:2]
    assert s.zk.controller == -1 and s.controllers == ()
    assert s.zk.controller_epoch == 3 and s.zk.controller_epoch_zk_version == 3
    st = s.zk.partition_states[0]
    assert (st.leader, st.leader_epoch, st.isr, st.controller_epoch, st.zk_version) == (0, 2, (0, 1), 3, 5)
    assert s.zk.registrations == (7, 8, 9) and s.zk.next_czxid == 10 and b0.broker_epoch == 7
    # the ghost: offsets 0 and 1 are below the leader's HW, hence committed and acknowledged in epoch 2
    assert s.ghost.acked == ((1, 0, 2, 0, 0), (2, 1, 2, 0, 0))
    assert s.ghost.leaders == ((0, 2, 0),) and s.ghost.next_record_id == 4


def test_declared_acknowledgements_replace_the_derived_ones():
    start = dict(START, acked=[[0, 2]])
    assert initial_state(CFG, start).ghost.acked == ((3, 2, 2, 0, 0),)
    assert initial_state(CFG, dict(START, acked=[])).ghost.acked == ()


def test_a_dead_broker_has_no_session_and_no_tasks():
    start = copy.deepcopy(START)
    start["brokers"].append({"broker": 2, "alive": False})
    s = initial_state(CFG, start)
    assert not s.brokers[2].alive and s.zk.sessions[2] is False and s.zk.registrations[2] == -1
    assert s.brokers[2].next_isr_expiration_ms == -1
    assert A.BrokerRestart(2) in [a for a in [A.BrokerRestart(2)] if step(CFG, s, a) is not None]


def test_the_controller_takes_over_the_start_and_the_leader_keeps_its_epoch():
    """ElectController loads the partition state (controller failover) and the leader keeps epoch 2 and its HW."""
    result = replay(_trace(actions=UP + [A.Produce(0, 0, -1), A.OffsetsForLeaderEpoch(1, 0), A.FetchRequest(1, 0),
                                          A.FetchResponse(1, 0)]))
    assert result.outcome == "pass", result.violations
    s = result.final_state
    part = s.brokers[0].partitions[0]
    assert (part.leader, part.leader_epoch, part.isr) == (0, 2, (0, 1))
    assert s.brokers[0].logs[0].log_end_offset == 4
    assert s.brokers[1].logs[0].log_end_offset == 4      # the follower fetched offsets 2 and 3
    assert s.zk.controller_epoch == 4


def test_a_start_that_loses_a_committed_record_is_found_and_shrunk():
    """ISR member 1 lacks a record below leader 0's HW: electing it loses an acknowledged write."""
    start = copy.deepcopy(START)
    start["brokers"][1]["logs"][0]["records"] = [[0, 1]]
    start["brokers"][1]["logs"][0]["hw_checkpoint"] = 1
    actions = UP + [A.BrokerCrash(0, True), A.ControllerProcessBrokerChange(2)] + \
        [A.DeliverControlRequest(2, b) for b in (1, 2)] * 2
    trace = _trace(start, actions, expect="violation", violated="acked_durability")
    result = replay(trace, with_changes=False)
    assert result.matches_expectation, result.violations
    v = next(x for x in result.violations if x.invariant == "acked_durability")
    assert v.facts["offset"] == 1 and v.facts["leader"] == 1
    assert "in the start state" in sentence(CFG, actions, v, start)
    sr = shrink(CFG, actions, "acked_durability", time_budget_s=20, start=start)
    assert sr.shrunk_length < len(actions) and sr.violation is not None
    again = replay(_trace(start, sr.actions, expect="violation", violated="acked_durability"), with_changes=False)
    assert again.matches_expectation
    # without the start the shrunk actions do not break anything
    assert replay(_trace(None, sr.actions), with_changes=False).outcome == "pass"


def test_diagram_and_cli_replay_start_from_the_start(tmp_path):
    from isrlab import diagram

    d = diagram.build(_trace(actions=UP))
    assert d is not None
    path = tmp_path / "t.json"
    path.write_text(dumps_trace(_trace(actions=UP)))
    r = CliRunner().invoke(main, ["replay", str(path)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["explain", str(path)])
    assert r.exit_code == 0, r.output


# --------------------------------------------------------------------------- inconsistent starts
def _with(mutate):
    start = copy.deepcopy(START)
    mutate(start)
    return start


def _log0(start, b=0):
    return start["brokers"][b]["logs"][0]


def _zk0(start):
    return start["zookeeper"]["partitions"][0]


BAD = [
    ("hw above the log end", lambda s: _log0(s).update(hw_checkpoint=4), "HW checkpoint 4 is above the log end offset 3"),
    ("hw below the log start", lambda s: _log0(s).update(log_start_offset=1, records=[[1, 1], [2, 2]], hw_checkpoint=0),
     "below the log start offset 1"),
    ("cache not matching", lambda s: _log0(s).update(epoch_cache=[[1, 0], [2, 1]]), "does not match the records' epochs"),
    ("cache not monotonic", lambda s: _log0(s).update(epoch_cache=[[2, 0], [1, 2]]), "must both increase"),
    ("cache beyond the log", lambda s: _log0(s).update(epoch_cache=[[1, 0], [2, 2], [3, 9]]), "above the log end offset"),
    ("cache below the log start", lambda s: _log0(s).update(log_start_offset=1, records=[[1, 1], [2, 2]],
                                                             hw_checkpoint=1, epoch_cache=[[1, 0], [2, 2]]),
     "below the log start offset"),
    ("offsets not contiguous", lambda s: _log0(s).update(records=[[0, 1], [2, 1]]), "expected 1"),
    ("epochs going down", lambda s: _log0(s).update(records=[[0, 2], [1, 1]]), "leader epochs go down"),
    ("epoch above zookeeper's", lambda s: _zk0(s).update(leader_epoch=1), "above the partition's leader epoch 1"),
    ("timestamped record", lambda s: _log0(s).update(records=[[0, 1, 5]]), "timestamps are not modelled yet"),
    ("recovery point outside", lambda s: _log0(s).update(recovery_point=9), "recovery point 9"),
    ("leader not in the isr", lambda s: _zk0(s).update(leader=2), "leader 2 is not in the ISR [0, 1]"),
    ("replicas not brokers", lambda s: _zk0(s).update(replicas=[0, 3], isr=[0]), "must be distinct broker ids"),
    ("isr outside replicas", lambda s: _zk0(s).update(replicas=[0, 1], isr=[0, 2]), "not within the replicas [0, 1]"),
    ("empty isr", lambda s: _zk0(s).update(isr=[], leader=-1), "non-empty set"),
    ("future controller epoch", lambda s: _zk0(s).update(controller_epoch=4), "/controller_epoch is 3"),
    ("log off the replicas", lambda s: _zk0(s).update(replicas=[1, 2], isr=[1], leader=1), "not among the partition's"),
    ("records without a partition state", lambda s: s.pop("zookeeper"), "no state in ZooKeeper"),
    ("unknown broker", lambda s: s["brokers"].append({"broker": 3}), "brokers 0 to 2"),
    ("broker twice", lambda s: s["brokers"].append({"broker": 0}), "given twice"),
    ("unknown partition", lambda s: _log0(s).update(partition=1), "partitions 0 to 0"),
    ("dead broker with an epoch", lambda s: s["brokers"][1].update(alive=False, broker_epoch=3), "is down"),
    ("duplicate broker epochs", lambda s: s["brokers"][1].update(broker_epoch=7), "not distinct"),
    ("acked offset not on the leader", lambda s: s.update(acked=[[0, 5]]), "offset 5 of partition 0"),
    ("unknown field", lambda s: s.update(controller=1), "schema: start"),
    ("a kraft metadata image", lambda s: s.update(kraft={"partitions": []}), "a metadata image is for a KRaft preset"),
    ("an applied metadata offset", lambda s: s["brokers"][1].update(metadata_offset=0), "metadata_offset is KRaft's"),
    ("a clean shutdown file", lambda s: s["brokers"][1].update(clean_shutdown=True), "clean_shutdown is KRaft's"),
]


@pytest.mark.parametrize("name,mutate,message", BAD, ids=[b[0] for b in BAD])
def test_an_inconsistent_start_is_one_line_and_exit_2(tmp_path, name, mutate, message):
    data = _trace(actions=UP).to_json()
    data["start"] = _with(mutate)
    assert_refused_in_one_line(tmp_path, data, message)


def test_initial_state_raises_start_error_directly():
    with pytest.raises(StartError, match="leader 2 is not in the ISR"):
        initial_state(CFG, _with(lambda s: _zk0(s).update(leader=2)))


# --------------------------------------------------------------------------- round trip, determinism
def test_round_trip_keeps_the_start_exactly():
    trace = _trace(actions=UP, checks=[{"after": 0, "path": "zk.controller_epoch", "equals": 3}])
    text = dumps_trace(trace)
    again = trace_from_json(json.loads(text))
    assert again.start == START and dumps_trace(again) == text
    assert "start" not in _trace(None, UP).to_json()      # a trace without a start stays as it was


def test_the_start_state_is_the_same_under_any_hash_seed():
    prints = fingerprints_under_hash_seeds("kafka-2.4", START)
    assert prints == {fingerprint(initial_state(CFG, START))}
    assert initial_state(CFG, START) == initial_state(CFG, copy.deepcopy(START))


# --------------------------------------------------------------------------- epoch-cache observations
def test_epoch_cache_answers_follow_leader_epoch_file_cache():
    cache = ((2, 6), (3, 8), (4, 11))
    assert epoch_cache_answer(cache, 12, [], ["end_offset_for", 3]) == [3, 11]
    assert epoch_cache_answer(cache, 12, [], ["end_offset_for", 4]) == [4, 12]
    assert epoch_cache_answer(cache, 12, [["log_end_offset", 20]], ["end_offset_for", 4]) == [4, 20]
    assert epoch_cache_answer(cache, 12, [["truncate_from_start", 9]], "entries") == [[3, 9], [4, 11]]
    assert epoch_cache_answer(cache, 12, [["truncate_from_end", 8]], "entries") == [[2, 6]]
    assert epoch_cache_answer(cache, 12, [["assign", 3, 7]], "entries") == [[2, 6], [3, 7]]
    assert epoch_cache_answer(cache, 12, [["clear"]], "latest_epoch") is None
    assert cache == ((2, 6), (3, 8), (4, 11))     # a copy was asked, never the state's cache


def test_epoch_cache_checks_in_a_trace():
    checks = [
        {"after": 0, "epoch_cache": {"broker": 0, "partition": 0, "query": ["end_offset_for", 1]}, "equals": [1, 2]},
        {"after": 0, "epoch_cache": {"broker": 0, "partition": 0, "ops": [["assign", 3, 3]], "query": "entries"},
         "equals": [[1, 0], [2, 2], [3, 3]]},
        {"after": 0, "epoch_cache": {"broker": 0, "partition": 0, "query": "latest_epoch"}, "equals": 1,
         "why": "deliberately wrong"},
        {"after": 0, "epoch_cache": {"broker": 2, "partition": 0, "query": "entries"}, "equals": []},
    ]
    trace = trace_from_json(_trace(checks=checks).to_json())
    failures = replay(trace, with_changes=False).check_failures
    assert failures == [
        "after 0 actions: broker 0's epoch cache of partition 0.latest_epoch is 2, expected 1 (deliberately wrong)",
        "after 0 actions: broker 2's epoch cache of partition 0.entries: broker 2 has no log of partition 0"]
    bad = _trace(checks=[{"after": 0, "epoch_cache": {"broker": 0, "partition": 0, "query": "earliest"},
                          "equals": 1}]).to_json()
    with pytest.raises(TraceError, match="schema: checks/0"):
        trace_from_json(bad)


def test_the_start_in_model_readme_is_a_valid_start():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "model" / "README.md").read_text(encoding="utf-8")
    block = text[text.index('```json\n"start": ') + len("```json\n"):]
    start = json.loads("{" + block[:block.index("```")] + "}")["start"]
    s = initial_state(CFG, start)
    assert not s.brokers[2].alive and s.ghost.acked == ((1, 0, 2, 0, 0), (2, 1, 2, 0, 0))


def test_isrlab_shrink_archives_the_shorter_trace_with_its_start(tmp_path):
    start = copy.deepcopy(START)
    start["brokers"][1]["logs"][0].update(records=[[0, 1]], hw_checkpoint=1)
    actions = UP + [A.Produce(0, 0, 1), A.BrokerCrash(0, True), A.ControllerProcessBrokerChange(2)] + \
        [A.DeliverControlRequest(2, b) for b in (1, 2)] * 2
    path = tmp_path / "lossy.json"
    path.write_text(dumps_trace(_trace(start, actions, expect="violation", violated="acked_durability")))
    r = CliRunner().invoke(main, ["shrink", str(path), "--bfs-states", "2000", "--budget", "30",
                                  "--archive", str(tmp_path / "out"), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["shrunk_length"] < len(actions) and out["trace_file"], out
    with open(out["trace_file"], encoding="utf-8") as fh:
        archived = json.load(fh)
    assert archived["start"] == start
    assert "in the start state" in archived["explanation"]
    again = trace_from_json(archived)
    assert replay(again, with_changes=False).matches_expectation
