"""KAFKA-15221 (Kafka 3.7.0, apache/kafka#14053): the leader's ISR expansion reads the replica state twice; the window
between the check and prepareIsrExpand (``isr_expand_window``, ``PrepareIsrExpand``)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from conftest import drive
from isrlab.model import actions as A
from isrlab.model.config import ConfigError, ModelConfig, preset
from isrlab.model.step import action_kinds, enabled_actions, enabled_actions_reference, initial_state, step

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "38a-kafka-15221-off-rebooted-follower-joins-isr-empty.json"
OFF, ON = preset("no-kafka-15221").config, preset("kafka-4.1-isr-expand-window").config


def _actions():
    return [A.action_from_json(a) for a in json.loads(SCENARIO.read_text())["actions"]]




def test_defaults_keep_every_existing_preset_as_it_was():
    assert ModelConfig().kafka_15221 is True and ModelConfig().isr_expand_window is False
    assert OFF.replace(kafka_15221=True) == ON
    assert A.PrepareIsrExpand in action_kinds(OFF) and A.PrepareIsrExpand in action_kinds(ON)
    for name in ("kafka-2.4", "alter-isr", "kafka-3.6", "kafka-4.1", "kafka-4.1-disk-wipe", "no-kip-903"):
        assert A.PrepareIsrExpand not in action_kinds(preset(name).config), name
    with pytest.raises(ConfigError, match="^isr_expand_window .* needs kip_500"):
        ModelConfig(isr_expand_window=True)


def test_the_fetch_decides_the_expansion_and_prepare_reads_the_broker_epoch_of_its_own_step():
    acts = _actions()
    s = drive(OFF, initial_state(OFF), *acts[:37])
    part = s.brokers[1].partitions[0]
    assert part.expand_checked == 2 and part.pending_isr is None and s.brokers[1].alter_isr_unsent == ()
    assert part.remote(2).broker_epoch == 2
    s = drive(OFF, initial_state(OFF), *acts[:45])
    assert s.brokers[1].partitions[0].remote(2).broker_epoch == 10
    assert s.brokers[1].partitions[0].remote(2).log_end_offset == 0
    s = step(OFF, s, A.PrepareIsrExpand(1, 0))
    part = s.brokers[1].partitions[0]
    assert part.expand_checked == -1 and part.pending_isr.replicas == (2,)
    assert s.brokers[1].alter_isr_unsent[0].request.isr_epochs == (1, 10)   # the new incarnation's epoch
    assert step(OFF, s, A.PrepareIsrExpand(1, 0)) is None                     # once


def test_while_the_expansion_waits_the_hw_the_shrink_and_other_expansions_wait_too():
    from isrlab.model.partition import maybe_expand_isr, maybe_increment_leader_hw, maybe_shrink_isr
    s = drive(OFF, initial_state(OFF), *_actions()[:37])
    s2 = s._clone(object())
    br = s2.broker_mut(1)
    log = br.log_mut(0)
    log.entries = log.entries + ((99, 1),)                                    # an append the HW could follow
    assert maybe_increment_leader_hw(OFF, br, 0, s2.now + 10 ** 6) is False  # leaderIsrUpdateLock is held
    assert maybe_shrink_isr(OFF, s2, br, 0, s2.now + 10 ** 6) is False
    assert maybe_expand_isr(OFF, s2, br, 0, 0) is False and br.alter_isr_unsent == ()


def test_with_the_fix_no_expansion_ever_waits():
    for name, cfg in (("on", ON), ("off", OFF)):
        rng = random.Random(7)
        opened = 0
        for _run_ in range(20):
            s = initial_state(cfg)
            for _ in range(300):
                acts = enabled_actions(cfg, s)
                assert acts == enabled_actions_reference(cfg, s)
                if not acts:
                    break
                opened += any(type(a) is A.PrepareIsrExpand for a in acts)
                s = step(cfg, s, acts[rng.randrange(len(acts))])
        assert (opened == 0) == (name == "on"), (name, opened)


def test_a_new_leader_epoch_drops_an_undecided_expansion():
    from isrlab.model.partition import make_leader_3x
    from isrlab.model.requests import LeaderAndIsrPartitionState
    s = drive(OFF, initial_state(OFF), *_actions()[:37])
    s2 = s._clone(object())
    br = s2.broker_mut(1)
    part = br.partitions[0]
    ps = LeaderAndIsrPartitionState(0, 0, 1, part.leader_epoch + 1, (1,), part.zk_version + 1, part.assigned_replicas)
    make_leader_3x(OFF, s2, br, 0, ps, s2.now)
    assert br.partitions[0].expand_checked == -1
    assert step(OFF, s2, A.PrepareIsrExpand(1, 0)) is None


def test_a_malformed_prepare_is_a_one_line_error():
    with pytest.raises(A.ActionError, match="PrepareIsrExpand: missing field 'partition'"):
        A.action_from_json({"type": "PrepareIsrExpand", "broker": 1})
