"""isrlab export --itf and isrlab import: ITF written and read back with itf-py, and TLC's counterexamples of the
KRaft TLA+ specification (tests/fixtures/tla/, see its README) replayed on the model's presets: the cross-check of
two independent models of Kafka's replication."""

from __future__ import annotations

import json
import os
from collections import namedtuple
from pathlib import Path

import itf_py
from itf_py.itf import ImmutableList
import pytest
from click.testing import CliRunner

from isrlab.cli import main
from isrlab.itf import MAX_PLAIN_INT, _plain_ints, to_itf_value
from isrlab.model import actions as A
from isrlab.model.actions import action_to_json
from isrlab.model.step import initial_state, step
from isrlab.model.trace import load_trace
from isrlab.properties.replay import replay
from isrlab.tla_import import MAPPING, TlaImportError, deferrable_fetches, deferrable_unfencings, import_trace
from isrlab.tla_values import parse_tlc_output, parse_value

ROOT = Path(__file__).resolve().parent.parent
TLA = ROOT / "tests" / "fixtures" / "tla"
RACE = ROOT / "docs" / "findings" / "kraft-pending-reset-race.trace.json"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error_line(result, *words):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("isrlab: error: "), result.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def fixture(name: str) -> bytes:
    return (TLA / f"{name}.tlc.txt").read_bytes()


# --------------------------------------------------------------------------- export --itf
def test_export_itf_reads_back_with_itf_py_and_matches_the_replay(tmp_path):
    out = tmp_path / "race.itf.json"
    r = run("export", "--itf", RACE, "-o", out)
    assert r.exit_code == 0, r.output
    trace = load_trace(str(RACE))
    result = replay(trace)
    doc = json.loads(out.read_text())
    assert "loop" not in doc and doc["#meta"]["preset"] == trace.preset
    itf = itf_py.trace_from_json(doc)
    assert len(itf.states) == len(trace.actions) + 1
    assert itf.states[0].meta["action"] is None
    assert [s.meta["action"] for s in itf.states[1:]] == [action_to_json(a) for a in trace.actions]
    assert set(itf.vars) == set(itf.states[-1].values)
    final, last = result.final_state, itf.states[-1].values
    assert last["now"] == final.now
    reg = final.quorum.partitions[0]
    assert last["quorum"].partitions[0].isr == frozenset(reg.isr)          # a set, as #set
    assert last["quorum"].partitions[0].leader == reg.leader
    for b, br in enumerate(final.brokers):                                  # brokers by id, as #map
        assert last["brokers"][b].logs[0].high_watermark == br.logs[0].high_watermark
        assert last["brokers"][b].metadata_offset == br.metadata_offset
    # each state is the one after its action: the clock, the metadata log and each broker's place in it
    s = initial_state(trace.config, trace.start)
    for i, st in enumerate(itf.states):
        if i:
            s = step(trace.config, s, trace.actions[i - 1])
        v = st.values
        assert (v["now"], len(v["quorum"].log)) == (s.now, len(s.quorum.log)), i
        assert [v["brokers"][b].metadata_offset for b in range(3)] == [br.metadata_offset for br in s.brokers], i


def test_itf_encoding_sets_maps_records_nil_and_big_integers():
    data = {"@type": "X", "isr": [2, 0], "brokers": [{"a": None}], "big": MAX_PLAIN_INT + 1, "small": 7, "seq": [3, 1]}
    doc = _plain_ints(itf_py.value_to_json(to_itf_value(data)))
    assert doc["dataclass"] == "X"
    assert doc["isr"] == {"#set": [0, 2]} or sorted(doc["isr"]["#set"]) == [0, 2]
    assert doc["brokers"] == {"#map": [[0, {"a": "Nil"}]]}
    assert doc["big"] == {"#bigint": str(MAX_PLAIN_INT + 1)} and doc["small"] == 7 and doc["seq"] == [3, 1]


def test_export_needs_a_format_and_a_good_trace(tmp_path):
    one_error_line(run("export", RACE), "--itf")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    one_error_line(run("export", "--itf", bad), "bad.json")
    from isrlab.model.config import preset
    from isrlab.model.trace import Trace, dumps_trace

    stuck = tmp_path / "stuck.json"    # a fetch response with no fetch in flight
    stuck.write_text(dumps_trace(Trace(config=preset("kafka-3.7").config, actions=[A.FetchResponse(1, 0)],
                                       preset="kafka-3.7")))
    one_error_line(run("export", "--itf", stuck), "action 1", "not enabled")
    one_error_line(run("export", "--itf", RACE, "-o", tmp_path), "is a folder")


# --------------------------------------------------------------------------- reading TLC's output
def test_tlc_values_records_functions_sets_sequences():
    v = parse_value('[a |-> {1, 2}, b |-> <<"x", Nil, TRUE>>, c |-> (1 :> 2 @@ 2 :> 3), d |-> {[k |-> 1]}]')
    assert v == {"a": frozenset({1, 2}), "b": ("x", "Nil", True), "c": {1: 2, 2: 3}, "d": frozenset([parse_value(
        "[k |-> 1]")])}
    with pytest.raises(ValueError, match="expected"):
        parse_value("[a |-> 1")


def test_every_fixture_is_a_tlc_trace_of_actions_the_mapping_knows():
    for path in sorted(TLA.glob("*.tlc.txt")):
        cx = parse_tlc_output(path.read_text(), path.name)
        assert cx["invariant"].endswith("Property")
        assert {s["action"] for s in cx["states"][1:]} <= set(MAPPING), path.name


# --------------------------------------------------------------------------- import: the cross-check
def test_partition_epoch_check_off_breaks_the_leader_isr_cover_on_the_matching_preset(tmp_path):
    """ReplicationQuorumSupersetProperty (the leader's ISR covers the controller's) is the model's
    leader_isr_covers_controller_isr; with the controller's partition-epoch check on (kafka-3.7) the same steps
    break nothing."""
    out = tmp_path / "pe.json"
    r = run("import", TLA / "no-partition-epoch-check.tlc.txt", "--preset", "kraft-no-partition-epoch-check",
            "-o", out)
    assert r.exit_code == 1, r.output
    assert "leader_isr_covers_controller_isr" in r.stderr
    trace = load_trace(str(out))
    assert (trace.expect, trace.violated) == ("violation", "leader_isr_covers_controller_isr")
    assert trace.provenance["spec_invariant"] == "ReplicationQuorumSupersetProperty"
    assert trace.provenance["spec_steps"][-1] == "ReceiveAlterPartitionRequest"
    assert replay(trace).violations[0].invariant == "leader_isr_covers_controller_isr"
    assert run("replay", "--expected", "--quiet", out).exit_code == 0
    fixed, _, _, _ = import_trace(fixture("no-partition-epoch-check"), "pe", "kafka-3.7")
    assert fixed.actions == trace.actions and replay(fixed).violations == []


def test_last_replica_standing_is_a_read_record_lost_before_kafka_15583_and_nothing_after():
    """The specification (Kafka 3.5) lets the HW pass with the ISR below min ISR: its leader crashes, loses the record
    a consumer read and is elected again (LeaderCompletenessProperty). On kafka-3.7-lossy-crash KAFKA-15583 holds the
    HW, so nothing is read or lost; with that fix off the model loses the read record (consumer_safety)."""
    raw = fixture("last-replica-standing")
    trace, notes, start, moves = import_trace(raw, "lrs", "kafka-3.7-lossy-crash")
    assert start == "fenced" and moves == ((), ())
    assert [n[1] for n in notes][-3:] == ["BrokerStart", "ReceiveBrokerRegRequest", "ReceiveBrokerRegResponse"]
    assert A.BrokerCrash(0, False) in trace.actions and not any(isinstance(a, A.DiskWipe) for a in trace.actions)
    assert replay(trace).violations == []
    before, _, _, _ = import_trace(raw, "lrs", "kafka-3.7-lossy-crash", {"kafka_15583": False})
    assert before.actions == trace.actions
    assert [v.invariant for v in replay(before).violations] == ["consumer_safety"]


@pytest.mark.parametrize("preset, broken", [("kafka-3.7-disk-wipe", ["acked_durability", "consumer_safety"]),
                                            ("kafka-4.1-disk-wipe", [])])
def test_last_replica_standing_with_a_wiped_disk_loses_an_acked_write_until_the_elr(tmp_path, preset, broken):
    """Where a crash keeps the log, the specification's unclean shutdown (every record lost) is the crash and a disk
    wipe. With min ISR 1 the write is acknowledged once the ISR is the leader alone: kafka-3.7-disk-wipe loses it
    (its headline, acked_durability); kafka-4.1-disk-wipe's ELR (KIP-966) keeps the empty broker from leading."""
    out = tmp_path / "lrs.json"
    r = run("import", TLA / "last-replica-standing.tlc.txt", "--preset", preset, "-o", out)
    assert r.exit_code == (1 if broken else 0), r.output
    trace = load_trace(str(out))
    assert A.DiskWipe(0) in trace.actions
    assert [v.invariant for v in replay(trace).violations] == broken
    assert trace.violated == (broken[0] if broken else None)


def test_an_unclean_shutdown_the_preset_cannot_lose_a_log_in_is_refused():
    one_error_line(run("import", TLA / "last-replica-standing.tlc.txt", "--preset", "kafka-3.7"),
                   "state 5 (UncleanShutdown)", "crash_loses_unflushed_data", "max_disk_wipes")


def test_isr_join_below_the_hw_breaks_isr_entry_condition_once_the_fetch_and_the_unfencing_are_moved(tmp_path):
    """The specification's leader proposes follower 2 at TLC state 7 from its fetch at state 4, made while it was in
    the ISR, and the controller unfences it only at state 8. Kafka's leader decides an expansion while it handles a
    fetch, and (KIP-841) proposes no fenced broker: with the fetch and the unfencing moved before the proposal (no
    step in between reads what they write), the model's leader proposes follower 1 below its HW, and the controller
    takes it: the preset's isr_entry_condition, and controller_isr_entry_condition. With the check on (kafka-3.7)
    the leader proposes nothing, and the line says why."""
    out = tmp_path / "ij.json"
    r = run("import", TLA / "no-isr-join-hw-check.tlc.txt", "--preset", "kraft-no-isr-join-hw-check", "-o", out)
    assert r.exit_code == 1, r.output
    trace = load_trace(str(out))
    assert trace.violated == "isr_entry_condition"
    assert trace.provenance["fetches_moved"] == [{"follower": 2, "sent_at": 3, "handled_at": 4, "moved_to": 7}]
    assert trace.provenance["unfencings_moved"] == [{"follower": 2, "at": 8, "moved_to": 7}]
    broken = {v.invariant for v in replay(trace).violations}
    assert {"isr_entry_condition", "controller_isr_entry_condition"} <= broken
    one_error_line(run("import", TLA / "no-isr-join-hw-check.tlc.txt", "--preset", "kafka-3.7"),
                   "TLC state 4", "moved next to the proposal", "below the leader's HW", "isFollowerInSync")


def test_kip_903_off_cannot_be_followed_and_the_line_says_why():
    """The specification's leader proposes follower 2 at TLC state 10 from its fetch at state 7, made while it was in
    the ISR; Kafka's leader decides an expansion only while it handles a fetch, and follower 2 is down from state 8,
    so the fetch cannot be moved next to the proposal either."""
    one_error_line(run("import", TLA / "no-kip-903.tlc.txt", "--preset", "no-kip-903"), "state 10",
                   "SendAlterPartitionRequest", "maybeExpandIsr", "TLC state 7", "in the leader's ISR", "as it is down")


@pytest.mark.parametrize("preset, broken", [("no-kip-903", "controller_isr_entry_condition"),
                                            ("kafka-4.1-disk-wipe", None)])
def test_kip_903_off_restricted_as_kafka_proposes_breaks_the_controllers_isr_entry_condition(tmp_path, preset, broken):
    """TLC's counterexample of the same variant with proposals restricted as Kafka's (README of the fixtures): the
    leader proposes follower 2 (fetch moved next to the proposal, over a fencing and an unfencing that leave it
    alone), the follower stops uncleanly (crash and disk wipe: every record lost), registers again and is unfenced,
    and the controller, without KIP-903's broker-epoch check, admits the empty replica: no-kip-903's headline. With
    KIP-903 (kafka-4.1-disk-wipe, the same preset with the check) the controller refuses it."""
    out = tmp_path / "k903.json"
    r = run("import", TLA / "no-kip-903-kafka-like.tlc.txt", "--preset", preset, "-o", out)
    assert r.exit_code == (1 if broken else 0), r.output
    trace = load_trace(str(out))
    assert trace.provenance["fetches_moved"] == [{"follower": 2, "sent_at": 6, "handled_at": 7, "moved_to": 11}]
    assert A.DiskWipe(1) in trace.actions
    assert trace.violated == broken
    assert [v.invariant for v in replay(trace).violations] == ([broken] if broken else [])


def test_a_fetch_is_moved_only_over_steps_that_leave_it_alone():
    def moves(name):
        return deferrable_fetches(parse_tlc_output((TLA / f"{name}.tlc.txt").read_text(), name)["states"])

    # follower 2's fetch, sent at index 2 and handled at 3, next to the proposal at 6 (fencing and the leader's
    # replay in between touch neither its log nor the leader's)
    assert moves("no-isr-join-hw-check") == ((2, 2, 3, 6),)
    states = parse_tlc_output((TLA / "no-isr-join-hw-check.tlc.txt").read_text(), "ij")["states"]
    assert deferrable_unfencings(states, ((2, 2, 3, 6),)) == ((2, 7, 6),)   # nothing of the controller in between
    assert moves("no-kip-903") == ()              # follower 2 crashes between its fetch and the proposal
    assert moves("last-replica-standing") == ()   # no proposal at all


def test_itf_input_with_actions_in_meta_imports_as_the_tlc_text_does(tmp_path):
    """The same counterexample as ITF (built with itf-py from TLC's states, each state's action in #meta.action)."""
    cx = parse_tlc_output((TLA / "no-partition-epoch-check.tlc.txt").read_text(), "pe")

    def itf_value(v):
        if isinstance(v, dict):
            if all(isinstance(k, str) and k.isidentifier() for k in v):
                return namedtuple("Rec", list(v))(**{k: itf_value(x) for k, x in v.items()})
            return {itf_value(k): itf_value(x) for k, x in v.items()}
        if isinstance(v, frozenset):
            return frozenset(itf_value(x) for x in v)
        if isinstance(v, tuple):      # a TLA+ sequence: an ITF array (hashable, as sets hold some)
            return ImmutableList(itf_value(x) for x in v)
        return v

    states = [itf_py.State(meta={"index": i, **({"action": s["action"]} if s["action"] else {})},
                           values={k: itf_value(x) for k, x in s["values"].items()})
              for i, s in enumerate(cx["states"])]
    doc = itf_py.trace_to_json(itf_py.Trace(meta={"invariant": cx["invariant"]}, params=[],
                                            vars=sorted(cx["states"][0]["values"]), states=states, loop=None))
    path = tmp_path / "pe.itf.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "pe.json"
    r = run("import", path, "--preset", "kraft-no-partition-epoch-check", "-o", out)
    assert r.exit_code == 1, r.output
    from_text, _, _, _ = import_trace(fixture("no-partition-epoch-check"), "pe", "kraft-no-partition-epoch-check")
    assert load_trace(str(out)).actions == from_text.actions
    # without the action names, ITF says nothing of the steps
    for s in doc["states"]:
        s["#meta"].pop("action", None)
    path.write_text(json.dumps(doc))
    one_error_line(run("import", path, "--preset", "kraft-no-partition-epoch-check"), "#meta.action")


# --------------------------------------------------------------------------- bad input
def _edited(tmp_path, name, old, new):
    text = (TLA / f"{name}.tlc.txt").read_text()
    assert old in text
    path = tmp_path / f"{name}.edited.txt"
    path.write_text(text.replace(old, new, 1))
    return path


def test_an_unknown_action_and_one_without_a_model_counterpart_are_named(tmp_path):
    path = _edited(tmp_path, "last-replica-standing", "State 2: <WriteRecordToLeader", "State 2: <DoSomethingElse")
    one_error_line(run("import", path, "--preset", "kafka-3.7-lossy-crash"), "state 2 (DoSomethingElse)",
                   "unknown action")
    path = _edited(tmp_path, "last-replica-standing", "State 2: <WriteRecordToLeader",
                   "State 2: <PerformPartitionReassignment")
    one_error_line(run("import", path, "--preset", "kafka-3.7-lossy-crash"), "PerformPartitionReassignment",
                   "no model counterpart")


@pytest.mark.parametrize("text, words", [
    ("", ["no TLC error trace"]),
    ("State 1: <Initial predicate>\n/\\ x = [a |-> \n", ["variable x"]),
    ("State 1: <Initial predicate>\n/\\ x = 1\nState 3: <Foo line 1>\n/\\ x = 2\n", ["state 3 after 1"]),
    ("State 1: <Initial predicate>\n/\\ x = 1\n", ["no variable messages"]),
    ('{"vars": ["x"], "states": 3}', ["not an ITF trace"]),
    ('{"vars": ["x"], "states": [{"x": {"#set": 5}}]}', ["not an ITF trace"]),
    ("\xff\xfe", ["not UTF-8"]),
])
def test_malformed_counterexamples_are_one_line(tmp_path, text, words):
    path = tmp_path / "bad.txt"
    path.write_bytes(text.encode("latin-1"))
    one_error_line(run("import", path, "--preset", "kafka-3.7"), *words)


def test_a_fifo_an_oversized_file_and_a_zookeeper_preset_are_refused(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    one_error_line(run("import", fifo, "--preset", "kafka-3.7"), "FIFO")
    big = tmp_path / "big.txt"
    with open(big, "wb") as fh:
        fh.truncate(8 * 1024 * 1024 + 1)
    one_error_line(run("import", big, "--preset", "kafka-3.7"), "above the limit")
    one_error_line(run("import", TLA / "last-replica-standing.tlc.txt", "--preset", "kafka-2.4"), "KRaft")
    one_error_line(run("import", TLA / "last-replica-standing.tlc.txt", "--preset", "no-such-preset"), "preset")


def test_a_variable_of_another_shape_is_named_not_a_traceback(tmp_path):
    text = (TLA / "last-replica-standing.tlc.txt").read_text().replace("/\\ messages = {}", "/\\ messages = <<>>")
    path = tmp_path / "shape.txt"
    path.write_text(text)
    one_error_line(run("import", path, "--preset", "kafka-3.7-lossy-crash"), "state 1: messages is not a set")


def test_import_error_is_a_value_error_naming_the_state():
    with pytest.raises(TlaImportError, match=r"x: state 2 \(Bogus\)"):
        import_trace(fixture("last-replica-standing").replace(b"<WriteRecordToLeader", b"<Bogus"), "x", "kafka-3.7")


def test_the_guide_lists_every_action_of_the_mapping():
    page = (ROOT / "docs" / "guides" / "tla-interop.md").read_text(encoding="utf-8")
    rows = {line.split("`")[1] for line in page.splitlines() if line.startswith("| `")}
    assert set(MAPPING) <= rows, sorted(set(MAPPING) - rows)
