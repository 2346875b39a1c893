"""KAFKA-14140 (Kafka 3.3.0): KIP-841's eligibility rules in ZooKeeper mode with AlterIsr, and zk_isr_joins_live."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import drive
from isrlab.model import actions as A, errors as E
from isrlab.model.config import ModelConfig, preset
from isrlab.model.step import initial_state, step
from isrlab.properties.invariants import BY_NAME, check_transition

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "39a-kafka-14140-off-dead-follower-rejoins-isr.json"
OFF, ON = preset("no-kafka-14140").config, preset("alter-isr-kafka-14140").config




def _actions():
    return [A.action_from_json(a) for a in json.loads(SCENARIO.read_text())["actions"]]


def test_flag_is_off_by_default_and_the_pair_differs_only_by_it():
    assert ModelConfig().kafka_14140 is False
    assert OFF.replace(kafka_14140=True) == ON
    assert preset("no-kafka-14140").expected == "zk_isr_joins_live"
    assert preset("alter-isr-kafka-14140").expected == "pass"
    # every ZooKeeper AlterIsr preset without the fix is expected to break it too; KRaft and 2.4 presets are not
    assert "zk_isr_joins_live" in preset("alter-isr").breaks
    assert "zk_isr_joins_live" not in preset("kafka-2.4").breaks
    assert "zk_isr_joins_live" not in preset("kafka-3.7").breaks


def test_without_the_fix_the_leader_proposes_a_dead_follower_and_the_controller_writes_it():
    acts = _actions()
    pre = drive(OFF, initial_state(OFF), *acts[:-1])
    assert pre.brokers[2].partitions[0].pending_isr.replicas == (1,)
    post = step(OFF, pre, acts[-1])
    assert post.zk.partition_states[0].isr == (1, 2)
    v = check_transition(OFF, pre, acts[-1], post, len(acts), invariants=(BY_NAME["zk_isr_joins_live"],))
    assert [x.invariant for x in v] == ["zk_isr_joins_live"]
    assert v[0].facts["broker"] == 1 and v[0].facts["isr_after"] == [1, 2] and v[0].facts["shutting_down"] is False


def test_with_the_fix_the_leader_does_not_propose_a_follower_its_cache_holds_dead():
    acts = _actions()
    assert type(acts[-2]) is A.AlterIsrRequest and type(acts[-1]) is A.AlterIsrReceived
    s = drive(ON, initial_state(ON), *acts[:-2])
    assert 1 not in s.brokers[2].metadata.alive_brokers
    assert s.brokers[2].partitions[0].pending_isr is None and s.brokers[2].alter_isr_unsent == ()
    assert step(ON, s, acts[-2]) is None                     # no AlterIsr to send


def test_the_controller_answers_ineligible_replica_and_the_leader_reverts():
    # the leader's proposal of 39a (made without the leader-side check), then the 3.3.0 controller's check alone
    acts = _actions()
    s = drive(OFF, initial_state(OFF), *acts[:-1])
    s = step(ON, s, acts[-1])
    resp = s.brokers[2].alter_isr_inflight.response
    assert resp.error == E.NONE and resp.partitions[0].error == E.INELIGIBLE_REPLICA
    assert s.zk.partition_states[0].isr == (2,) and s.zk.partition_states[0].zk_version == 0   # nothing written
    s = step(ON, s, A.AlterIsrResponse(2))
    part = s.brokers[2].partitions[0]
    assert part.pending_isr is None and part.isr == (2,)   # handleAlterPartitionError: back to the committed ISR
    assert s.brokers[2].alter_isr_unsent == ()


def test_a_stale_partition_epoch_is_answered_invalid_update_version_before_ineligible_replica():
    from isrlab.model.controller import process_alter_isr
    from isrlab.model.requests import AlterIsrPartition, AlterIsrRequestData
    acts = _actions()
    s = drive(OFF, initial_state(OFF), *acts[:-1])
    req = AlterIsrRequestData(2, s.brokers[2].broker_epoch, (AlterIsrPartition(0, 0, (1, 2), 7, ()),))
    s2 = s._clone(object()) if hasattr(s, "_clone") else s
    out = process_alter_isr(ON, s2, 2, req)
    assert out.partitions[0].error == E.INVALID_UPDATE_VERSION
