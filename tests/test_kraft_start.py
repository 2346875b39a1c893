"""KRaft starting states (model/kraft_start.py): a trace that begins from the quorum controller's metadata image.

The image (broker registrations, partition registrations with ISR, ELR and epochs) becomes the metadata log a
snapshot of it holds, which brokers replay as in a real cluster.  These tests reach Kafka unit-test situations
(ReplicationControlManagerTest, Kafka 3.9) in one step and replay what follows with ``isrlab replay``, feed every
kind of inconsistent image to ``isrlab replay`` (one line, exit 2), and check that the image of the formed cluster
is the formed cluster, and that a start gives one state under any hash seed.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import pytest
from click.testing import CliRunner

from isrlab.cli import main
from isrlab.model import actions as A
from isrlab.model.config import PRESETS, preset
from isrlab.model.encode import fingerprint
from isrlab.model.start import StartError
from isrlab.model.state import (BrokerRegistration, BrokerRegistrationChangeRecord, FenceBrokerRecord,
                                PartitionChangeRecord, RegisterBrokerRecord, UnfenceBrokerRecord)
from isrlab.model.step import apply, enabled_actions, initial_state, step, tick_limit
from isrlab.model.trace import Trace, TraceError, dumps_trace, trace_from_json
from isrlab.properties.replay import replay
from start_checks import assert_refused_in_one_line, fingerprints_under_hash_seeds

pytestmark = pytest.mark.unit

CFG = preset("kafka-4.1").config

#: PartitionChangeBuilderTest-style: leader 0 alone in the ISR, 1 and 2 eligible (KIP-966), partition epoch 7; the
#: three hold the same three records, two of them below the HW the leader checkpointed (alone in the ISR, with min
#: ISR 1, it raises its HW to its log end once it leads: ELR members must hold what it has)
START = {
    "brokers": [
        {"broker": 0, "metadata_offset": 4,
         "logs": [{"partition": 0, "records": [[0, 4], [1, 4], [2, 5]], "hw_checkpoint": 2}]},
        {"broker": 1, "logs": [{"partition": 0, "records": [[0, 4], [1, 4], [2, 5]], "hw_checkpoint": 2}]},
        {"broker": 2, "logs": [{"partition": 0, "records": [[0, 4], [1, 4], [2, 5]], "hw_checkpoint": 1}]},
    ],
    "kraft": {"partitions": [{"partition": 0, "leader": 0, "leader_epoch": 5, "partition_epoch": 7, "isr": [0],
                              "elr": [1, 2]}]},
}


def _catch_up(cfg, s, brokers):
    """MetadataApply for each broker until it has replayed the whole metadata log; the actions and the state."""
    actions = []
    for b in brokers:
        while s.brokers[b].alive and s.brokers[b].metadata_offset < len(s.quorum.log):
            a = A.MetadataApply(b)
            s = apply(cfg, s, a)
            actions.append(a)
    return actions, s


def _trace(start, actions=(), cfg=CFG, name="kafka-4.1", **kw) -> Trace:
    return Trace(config=cfg, actions=list(actions), preset=name, start=start, **kw)


def _cli_replay(tmp_path, trace: Trace):
    path = tmp_path / "t.json"
    path.write_text(dumps_trace(trace))
    return CliRunner().invoke(main, ["replay", str(path)])


# --------------------------------------------------------------------------- the image and its metadata log
def test_the_image_is_the_controllers_state_and_the_log_a_snapshot_of_it():
    s = initial_state(CFG, START)
    q = s.quorum
    assert q.registrations == tuple(BrokerRegistration(b, False) for b in range(3))
    part = q.partitions[0]
    assert (part.leader, part.leader_epoch, part.partition_epoch, part.isr, part.elr) == (0, 5, 7, (0,), (1, 2))
    assert q.log == (RegisterBrokerRecord(0, 0, False), RegisterBrokerRecord(1, 1, False),
                     RegisterBrokerRecord(2, 2, False), PartitionChangeRecord(0, part, True))
    assert q.batch_ends == (1, 2, 3, 4) and q.shutdown_offsets == (-1, -1, -1)
    assert s.zk.assignment == ((0, 1, 2),) and s.zk.partition_states == (None,) and s.controllers == ()
    # broker 0 replayed the log inside build_start with the model's own MetadataApply: it leads epoch 5
    b0, b1 = s.brokers[0], s.brokers[1]
    assert b0.metadata_offset == 4 and b0.metadata.fenced == () and b0.metadata.broker_epochs == (0, 1, 2)
    led = b0.partitions[0]
    assert (led.leader, led.leader_epoch, led.isr, led.zk_version) == (0, 5, (0,), 7)
    assert b1.metadata_offset == 0 and b1.partitions[0] is None and b1.broker_epoch == 1
    # the ghost: offsets 0 and 1, below the leader's HW, are committed and acknowledged in epoch 5
    assert s.ghost.acked == ((1, 0, 5, 0, 0), (2, 1, 5, 0, 0)) and s.ghost.next_record_id == 4
    assert set(s.ghost.leaders) == {(0, 5, 0)}
    assert b1.logs[0].entries == b0.logs[0].entries
    assert b0.logs[0].high_watermark == 3 and b1.logs[0].high_watermark == 2   # the leader's HW moved as it led


def test_kafka_epochs_are_registration_offsets_with_earlier_incarnations_below():
    """ReplicationControlTestContext registers broker b with epoch 100 + b: the offsets below hold earlier fenced
    incarnations of broker 0, in one batch with its registration; broker 2 is fenced and unfenced by its heartbeat."""
    start = {"kraft": {"registrations": [{"broker": b, "broker_epoch": 100 + b, "fenced": b == 2} for b in range(3)]}}
    s = initial_state(CFG, start)
    q = s.quorum
    assert len(q.log) == 104 and q.batch_ends == (101, 102, 103, 104)
    assert q.log[:100] == tuple(RegisterBrokerRecord(0, k, True) for k in range(100))
    assert q.log[100:103] == (RegisterBrokerRecord(0, 100, False), RegisterBrokerRecord(1, 101, False),
                              RegisterBrokerRecord(2, 102, True))
    assert [br.broker_epoch for br in s.brokers] == [100, 101, 102]
    s = apply(CFG, s, A.MetadataApply(2))          # a broker catches up to its own registration at once
    assert s.brokers[2].metadata_offset == 103 and s.brokers[2].metadata.fenced == (2,)
    s = apply(CFG, s, A.BrokerHeartbeat(2))
    assert s.quorum.registrations[2] == BrokerRegistration(102, False)
    assert s.quorum.log[-1] == UnfenceBrokerRecord(2, 102)


#: the KRaft presets a start can describe (one with log directories refuses a start: tests/test_jbod.py)
KRAFT_PRESETS = [name for name, p in PRESETS.items() if p.config.kip_500 and not p.config.log_dirs]


@pytest.mark.parametrize("name", KRAFT_PRESETS)
def test_a_start_equal_to_the_formed_cluster_is_the_formed_cluster(name):
    """The synthesized log of the formed cluster's image is the formed cluster's log, record for record."""
    cfg = preset(name).config
    plain = initial_state(cfg)
    formed = {"brokers": [{"broker": b} for b in range(cfg.n_brokers)],
              "kraft": {"registrations": [{"broker": b, "broker_epoch": b, "fenced": False,
                                           "in_controlled_shutdown": False} for b in range(cfg.n_brokers)],
                        "partitions": [{"partition": p, "replicas": list(r), "isr": sorted(r), "elr": [],
                                        "leader": r[0], "leader_epoch": 0, "partition_epoch": 0,
                                        "leader_recovery_state": "RECOVERED"}
                                       for p, r in enumerate(plain.zk.assignment)]}}
    assert initial_state(cfg, formed) == plain
    assert fingerprint(initial_state(cfg, formed)) == fingerprint(plain) == fingerprint(initial_state(cfg, {}))
    # brokers that have replayed the whole log: the same as replaying it from the formed cluster, broker by broker
    for item in formed["brokers"]:
        item["metadata_offset"] = len(plain.quorum.log)
    _acts, replayed = _catch_up(cfg, plain, range(cfg.n_brokers))
    assert fingerprint(initial_state(cfg, formed)) == fingerprint(replayed)


def test_the_same_start_gives_the_same_state_under_any_hash_seed():
    prints = fingerprints_under_hash_seeds("kafka-4.1", START)
    assert prints == {fingerprint(initial_state(CFG, START))}
    assert initial_state(CFG, START) == initial_state(CFG, copy.deepcopy(START))
    assert fingerprint(initial_state(CFG, START)) != fingerprint(initial_state(CFG))


# --------------------------------------------------------------------------- Kafka unit-test situations, replayed
def _fence_and_elect(start):
    """Broker 0's heartbeats stop, the controller fences it, and the survivors catch up with the metadata log."""
    s = initial_state(CFG, start)
    actions = [A.HeartbeatsLost(0), A.FenceStaleBroker(0)]
    for a in actions:
        s = apply(CFG, s, a)
    more, s = _catch_up(CFG, s, (1, 2))
    return actions + more, s


def test_fencing_the_only_isr_member_elects_from_the_elr(tmp_path):
    """ReplicationControlManager.handleBrokerFenced / PartitionChangeBuilder (Kafka 3.9): with ISR [0] and ELR [1, 2],
    fencing 0 empties the ISR, so 0 joins the ELR and the first eligible replica, 1, leads alone in a new epoch."""
    actions, s = _fence_and_elect(START)
    part = s.quorum.partitions[0]
    assert (part.leader, part.isr, part.elr, part.leader_epoch, part.partition_epoch) == (1, (1,), (0, 2), 6, 8)
    assert s.quorum.log[4:] == (PartitionChangeRecord(0, part), FenceBrokerRecord(0, 0))
    assert s.quorum.batch_ends[-1] == 6                 # one batch: the partition change, then the fence
    led = s.brokers[1].partitions[0]
    assert (led.leader, led.leader_epoch, led.isr) == (1, 6, (1,))
    checks = [{"after": 1, "path": "quorum.partitions.0.leader", "equals": 0},
              {"after": 2, "path": "quorum.partitions.0.leader", "equals": 1},
              {"after": 2, "path": "quorum.partitions.0.isr", "equals": [1]},
              {"after": 2, "path": "quorum.partitions.0.elr", "equals": [0, 2]},
              {"after": 2, "path": "quorum.partitions.0.leader_epoch", "equals": 6},
              {"after": 2, "path": "quorum.partitions.0.partition_epoch", "equals": 8},
              {"after": 2, "path": "quorum.registrations.0.fenced", "equals": True},
              {"after": len(actions), "path": "brokers.1.partitions.0.leader_epoch", "equals": 6}]
    trace = _trace(START, actions, checks=checks)
    result = replay(trace_from_json(json.loads(dumps_trace(trace))), with_changes=False)
    assert result.outcome == "pass" and not result.check_failures, (result.violations, result.check_failures)
    r = _cli_replay(tmp_path, trace)
    assert r.exit_code == 0, r.output
    # a check that does not hold fails the replay: the checks are read
    wrong = _trace(START, actions, checks=[{"after": 2, "path": "quorum.partitions.0.leader", "equals": 2}])
    assert _cli_replay(tmp_path, wrong).exit_code != 0


def test_clean_election_from_the_elr_as_replication_control_manager_test():
    """ReplicationControlManagerTest.testEligibleLeaderReplicas_CleanElection (Kafka 3.9), from its state after
    ``unfenceBrokers(2)``: four replicas, min ISR 3, ISR [0], ELR [2, 3], brokers 1 and 3 fenced.  Fencing 0 (1 is
    fenced already) gives ELR [0, 3], ISR [2], leader 2 and no last known ELR."""
    cfg = dataclasses.replace(CFG, n_brokers=4, replication_factor=4, min_insync_replicas=3)
    start = {"kraft": {"registrations": [{"broker": 1, "fenced": True}, {"broker": 3, "fenced": True}],
                       "partitions": [{"partition": 0, "leader": 0, "leader_epoch": 0, "partition_epoch": 3,
                                       "isr": [0], "elr": [2, 3]}]}}
    s = initial_state(cfg, start)
    for a in (A.HeartbeatsLost(0), A.FenceStaleBroker(0)):
        s = apply(cfg, s, a)
    part = s.quorum.partitions[0]
    assert (part.elr, part.isr, part.leader) == ((0, 3), (2,), 2)
    assert part.last_known_elr == ()
    assert (part.leader_epoch, part.partition_epoch) == (1, 4)
    trace = _trace(start, [A.HeartbeatsLost(0), A.FenceStaleBroker(0)], cfg=cfg, name=None,
                   checks=[{"after": 2, "path": "quorum.partitions.0.leader", "equals": 2}])
    result = replay(trace_from_json(json.loads(dumps_trace(trace))), with_changes=False)
    assert result.outcome == "pass" and not result.check_failures, (result.violations, result.check_failures)


def _until_heartbeat_due(s, b):
    """Let time pass, running the tasks that come due on the way, until broker b's next heartbeat is due."""
    background = (A.BrokerHeartbeat, A.HighWatermarkCheckpoint, A.IsrExpiration, A.MetadataApply)
    while step(CFG, s, A.BrokerHeartbeat(b)) is None:
        due = [a for a in enabled_actions(CFG, s) if type(a) in background]
        s = apply(CFG, s, due[0] if due else A.Tick(tick_limit(CFG, s) - s.now))
    return s


def test_a_broker_in_controlled_shutdown_stops_once_the_others_have_caught_up():
    """BrokerHeartbeatManager (Kafka 3.5.0): broker 2, in controlled shutdown and leading nothing, is told to shut
    down once every active broker has reported an offset past the record that began its shutdown."""
    start = {"kraft": {"registrations": [{"broker": 2, "in_controlled_shutdown": True}],
                       "partitions": [{"partition": 0, "leader": 0, "leader_epoch": 1, "partition_epoch": 2,
                                       "isr": [0, 1]}]}}
    s = initial_state(CFG, start)
    q = s.quorum
    assert q.log[-1] == BrokerRegistrationChangeRecord(2, 2) and q.shutdown_offsets == (-1, -1, 5)
    assert s.brokers[2].want_shutdown and q.registrations[2].in_controlled_shutdown
    s = apply(CFG, s, A.BrokerHeartbeat(2))
    assert s.brokers[2].alive                          # brokers 0 and 1 have reported nothing yet
    _acts, s = _catch_up(CFG, s, (0, 1))
    for b in (0, 1):
        s = apply(CFG, s, A.BrokerHeartbeat(b))
    s = _until_heartbeat_due(s, 2)
    s = apply(CFG, s, A.BrokerHeartbeat(2))
    assert not s.brokers[2].alive and s.quorum.registrations[2].fenced
    assert s.quorum.log[-1] == FenceBrokerRecord(2, 2)


def test_a_down_broker_restarts_with_its_clean_shutdown_epoch():
    """A down broker that stopped cleanly registers again with its previous broker epoch (KIP-966): it keeps its
    place in the ISR; an unclean one (the default) leaves it (handleBrokerUncleanShutdown)."""
    def restarted(clean):
        start = {"brokers": [{"broker": 2, "alive": False, "clean_shutdown": clean}],
                 "kraft": {"registrations": [{"broker": 2, "fenced": True}],
                           "partitions": [{"partition": 0, "leader": 0, "leader_epoch": 1, "partition_epoch": 3,
                                           "isr": [0, 1, 2]}]}}
        s = initial_state(CFG, start)
        assert not s.brokers[2].alive and s.brokers[2].next_heartbeat_ms == -1
        return apply(CFG, s, A.BrokerRestart(2)).quorum.partitions[0]

    assert restarted(True).isr == (0, 1, 2)
    assert restarted(False).isr == (0, 1)


# --------------------------------------------------------------------------- inconsistent images
def _with(mutate, base=START):
    start = copy.deepcopy(base)
    mutate(start)
    return start


def _p0(start):
    return start["kraft"]["partitions"][0]


def _regs(start, *items):
    start["kraft"]["registrations"] = list(items)


BAD = [
    ("leader outside the isr", lambda s: _p0(s).update(leader=1), "leader 1 is not in the ISR [0]"),
    ("isr outside the replicas", lambda s: _p0(s).update(replicas=[0, 1], elr=[1], isr=[0, 2]),
     "ISR [0, 2] is not within the replicas [0, 1]"),
    ("elr overlapping the isr", lambda s: _p0(s).update(elr=[0, 1]), "ELR [0, 1] overlaps the ISR [0]"),
    ("elr outside the replicas", lambda s: _p0(s).update(replicas=[0, 1], elr=[1, 2]),
     "ELR [1, 2] is not within the replicas [0, 1]"),
    ("replicas not brokers", lambda s: _p0(s).update(replicas=[0, 3]), "must be distinct broker ids"),
    ("fenced leader", lambda s: _regs(s, {"broker": 0, "fenced": True}), "leader 0 is fenced"),
    ("leader epoch out of range", lambda s: _p0(s).update(leader_epoch=2**31, partition_epoch=2**31),
     "leader epoch 2147483648"),
    ("partition epoch below the leader epoch", lambda s: _p0(s).update(partition_epoch=4),
     "partition epoch 4 (5 to"),
    ("applied offset beyond the log", lambda s: s["brokers"][1].update(metadata_offset=9),
     "metadata offset 9 is beyond the metadata log's end 4"),
    ("applied offset before its registration", lambda s: s["brokers"][2].update(metadata_offset=2),
     "not past its own registration at offset 2"),
    ("applied offset of a down broker", lambda s: s["brokers"][1].update(alive=False, metadata_offset=4),
     "broker 1 is down"),
    ("applied offset inside a batch", lambda s: (_regs(s, {"broker": 2, "broker_epoch": 5}),
                                                 s["brokers"][0].update(metadata_offset=0),
                                                 s["brokers"][1].update(metadata_offset=3)),
     "metadata offset 3 is inside a batch"),
    ("broker epoch out of range", lambda s: _regs(s, {"broker": 1, "broker_epoch": 10**6}), "broker epoch 1000000"),
    ("broker epochs not distinct", lambda s: _regs(s, {"broker": 1, "broker_epoch": 4}, {"broker": 2,
                                                                                          "broker_epoch": 4}),
     "not distinct"),
    ("registration twice", lambda s: _regs(s, {"broker": 1}, {"broker": 1}), "given twice"),
    ("registration of an unknown broker", lambda s: _regs(s, {"broker": 5}), "brokers 0 to 2"),
    ("partition twice", lambda s: s["kraft"]["partitions"].append(dict(_p0(s))), "partition 0 is given twice"),
    ("unknown partition", lambda s: _p0(s).update(partition=3), "partitions 0 to 0"),
    ("a zookeeper part", lambda s: s.update(zookeeper={"controller_epoch": 1}), "keeps no partition state in "
                                                                                   "ZooKeeper"),
    ("a zookeeper broker epoch", lambda s: s["brokers"][1].update(broker_epoch=7), "give it in kraft.registrations"),
    ("clean shutdown of a live broker", lambda s: s["brokers"][1].update(clean_shutdown=True), "broker 1 is up"),
    ("recovering with two in the isr", lambda s: _p0(s).update(isr=[0, 1], elr=[], leader_recovery_state="RECOVERING"),
     "RECOVERING with ISR [0, 1]"),
    ("log epoch above the image's", lambda s: _p0(s).update(leader_epoch=4, partition_epoch=7),
     "above the partition's leader epoch 4 in the controller's image"),
    ("log off the replicas", lambda s: _p0(s).update(replicas=[0, 1], elr=[1]), "not among the partition's replicas"),
    ("acked offset not on the leader", lambda s: s.update(acked=[[0, 7]]),
     "offset 7 of partition 0 is not in the log of the partition's leader in the controller's image"),
    ("last known elr with a leader", lambda s: _p0(s).update(last_known_elr=[1]), "cleared once the partition has"),
    ("unknown field", lambda s: s["kraft"].update(controller=1), "schema: start"),
]


@pytest.mark.parametrize("name,mutate,message", BAD, ids=[b[0] for b in BAD])
def test_an_inconsistent_image_is_one_line_and_exit_2(tmp_path, name, mutate, message):
    data = _trace(START).to_json()
    data["start"] = _with(mutate)
    assert_refused_in_one_line(tmp_path, data, message)


@pytest.mark.parametrize("name,cfg_name,start,message", [
    ("elr without kip-966", "kafka-3.6", START, "no Eligible Leader Replicas"),
    ("empty isr without kip-966", "kafka-3.6",
     {"kraft": {"partitions": [{"partition": 0, "leader": -1, "leader_epoch": 1, "partition_epoch": 1, "isr": []}]}},
     "an empty ISR is written only with Eligible Leader Replicas"),
])
def test_an_image_the_preset_cannot_hold_is_refused(name, cfg_name, start, message):
    with pytest.raises(StartError, match=message):
        initial_state(preset(cfg_name).config, start)


def test_an_empty_isr_with_the_elr_is_a_leaderless_partition():
    """KIP-966: with the ISR empty and its one eligible replica fenced the partition has no leader; once that broker
    is unfenced (its heartbeat after replaying its registration) the controller elects it from the ELR."""
    start = {"kraft": {"registrations": [{"broker": 2, "fenced": True}],
                       "partitions": [{"partition": 0, "leader": -1, "leader_epoch": 3, "partition_epoch": 9,
                                       "isr": [], "elr": [2]}]}}
    s = initial_state(CFG, start)
    assert s.quorum.partitions[0].isr == () and s.quorum.partitions[0].leader == -1
    s = apply(CFG, apply(CFG, s, A.MetadataApply(2)), A.BrokerHeartbeat(2))
    part = s.quorum.partitions[0]
    assert (part.leader, part.isr, part.elr, part.leader_epoch, part.partition_epoch) == (2, (2,), (), 4, 10)
    with pytest.raises(StartError, match="no leader, but replica 2 is an active broker the controller would have "
                                         "elected"):
        initial_state(CFG, {"kraft": {"partitions": start["kraft"]["partitions"]}})


def test_an_elr_member_lacking_a_committed_record_is_found_and_its_election_loses_it():
    """The ghost keeps its meaning: an image whose ELR member 1 lacks offset 1, below leader 0's HW, is reported at
    step 0 (committed_prefix, an ELR member); electing 1 after the fence loses the acknowledged record."""
    start = copy.deepcopy(START)
    start["brokers"][1]["logs"][0].update(records=[[0, 4]], hw_checkpoint=1)
    actions, s = _fence_and_elect(start)
    assert s.quorum.partitions[0].leader == 1
    result = replay(_trace(start, actions, expect="violation", violated="acked_durability"), with_changes=False)
    first = {}
    for v in result.violations:
        first.setdefault(v.invariant, v)
    prefix = first["committed_prefix"]
    assert prefix.step == 0 and prefix.facts["follower"] == 1 and prefix.facts.get("eligible_leader_replica")
    lost = first["acked_durability"]
    assert lost.facts["offset"] == 1 and lost.facts["leader"] == 1 and result.matches_expectation


def _random_image(rng: random.Random, n: int) -> dict:
    """A KRaft start drawn near consistency: an image built from valid pieces, then, half the time, one value
    pushed out of range or made to contradict another."""
    order = rng.sample(range(n), n)
    isr = sorted(order[:rng.randint(0, n)])
    elr = sorted(order[len(isr):len(isr) + rng.randint(0, n - len(isr))])
    epoch = rng.choice([0, 3, 5])
    part = {"partition": 0, "leader": rng.choice(isr or [-1]), "leader_epoch": epoch,
            "partition_epoch": epoch + rng.choice([0, 4]), "isr": isr, "elr": elr}
    regs = [{"broker": b, "broker_epoch": rng.choice([b, 10 + b, 120 + b]), "fenced": rng.random() < 0.2,
             "in_controlled_shutdown": rng.random() < 0.2} for b in rng.sample(range(n), rng.randint(0, n))]
    brokers = [{"broker": b, "alive": rng.random() < 0.8, "metadata_offset": rng.choice([0, 0, n + 1, 200]),
                "logs": [{"partition": 0, "records": [[0, rng.choice([0, epoch])]],
                          "hw_checkpoint": rng.choice([0, 1])}]}
               for b in rng.sample(range(n), rng.randint(0, n))]
    start = {"brokers": brokers, "kraft": {"registrations": regs, "partitions": [part]}}
    fault = rng.choice([None] * 8 + list(range(8)))
    if fault == 0:
        part["leader"] = rng.choice([-2, n, *elr])
    elif fault == 1:
        part[rng.choice(["isr", "elr", "replicas"])] = rng.choice([[n], [0, 0], [-1]])
    elif fault == 2:
        part.update(leader_epoch=rng.choice([2 ** 31, epoch + 1]))
    elif fault == 3:
        part.update(leader_recovery_state="RECOVERING", last_known_elr=rng.choice([[], [0], [0, 1]]))
    elif fault == 4:
        regs.append({"broker": rng.choice([0, n]), "broker_epoch": rng.choice([0, 10 ** 6])})
    elif fault == 5 and brokers:
        brokers[0].update(metadata_offset=rng.choice([1, 2, 10 ** 6]), clean_shutdown=rng.random() < 0.5)
    elif fault == 6:
        start["zookeeper"] = {}
    elif fault == 7:
        part["partition"] = rng.choice([1, -1])
    return start


@pytest.mark.parametrize("name", ["kafka-3.3", "kafka-4.1", "kraft-unclean-election"])
def test_random_images_are_a_state_or_one_line_error(name):
    """Any image the schema accepts gives a state whose actions can be listed, or a one-line TraceError: never
    another exception (500 seeded draws per preset; each kind of outcome is seen)."""
    cfg = preset(name).config
    rng = random.Random(20261129)
    outcomes = {"state": 0, "refused": 0}
    for _ in range(500):
        data = _trace(_random_image(rng, cfg.n_brokers), cfg=cfg, name=name).to_json()
        try:
            trace = trace_from_json(json.loads(json.dumps(data)))
        except TraceError as e:
            assert "\n" not in str(e) and str(e).startswith(("start: ", "schema: start")), str(e)
            outcomes["refused"] += 1
            continue
        assert enabled_actions(cfg, initial_state(cfg, trace.start))
        outcomes["state"] += 1
    assert outcomes["state"] >= 50 and outcomes["refused"] >= 100, outcomes


def test_a_last_known_leader_is_elected_when_it_comes_back():
    """KIP-966's lastKnownElr (PartitionChangeBuilder.canElectLastKnownLeader, Kafka 3.8.0-4.0): with the ISR and ELR
    empty and broker 1 the last known leader, unfencing 1 elects it uncleanly, RECOVERING, and clears the field."""
    start = {"kraft": {"registrations": [{"broker": 1, "fenced": True}],
                       "partitions": [{"partition": 0, "leader": -1, "leader_epoch": 4, "partition_epoch": 6,
                                       "isr": [], "elr": [], "last_known_elr": [1]}]}}
    s = initial_state(CFG, start)
    assert s.quorum.partitions[0].last_known_elr == (1,)
    s = apply(CFG, apply(CFG, s, A.MetadataApply(1)), A.BrokerHeartbeat(1))
    part = s.quorum.partitions[0]
    assert (part.leader, part.isr, part.leader_epoch, part.leader_recovery_state, part.last_known_elr) == \
        (1, (1,), 5, "RECOVERING", ())
