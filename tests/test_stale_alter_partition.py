"""An AlterPartition from a broker's earlier incarnation: a request already sent when its broker stops is still on its
way to the controller, which handles it with the broker epoch it carries (ClusterControlManager.checkBrokerEpoch,
Kafka 3.5.0; KafkaController.processAlterIsr's broker-epoch check, 2.7.0) and whose answer goes nowhere.

The leader's request comes from the archived no-kip-903 scenario: its last action is leader 0's AlterPartition adding
broker 2, handled at once there; here broker 0 stops first.
"""

from __future__ import annotations

import dataclasses

import pytest

from isrlab.model import actions as A
from isrlab.model.encode import encode
from isrlab.model.step import apply, enabled_actions as enabled
from isrlab.properties.mutants import installed
from isrlab.properties.steptable import action_words
from test_kip903 import BROKEN as _BROKEN, FIXED as _FIXED, hand_actions, replay

#: the scenario spends its crash budget; one more stop here
FIXED, BROKEN = _FIXED.replace(max_crashes=3), _BROKEN.replace(max_crashes=3)

pytestmark = pytest.mark.unit


def _sent_then_stopped(cfg, clean: bool, restart: bool):
    """The scenario up to leader 0's AlterPartition sent, then broker 0 stops (and starts again)."""
    actions = hand_actions()
    assert type(actions[-2]) is A.AlterIsrRequest and type(actions[-1]) is A.AlterIsrReceived
    _, s = replay(cfg, actions[:-1])
    request = s.brokers[0].alter_isr_inflight.request
    s = apply(cfg, s, A.BrokerCrash(0, clean))
    if restart:
        s = _until_fenced(cfg, s, 0)
        s = apply(cfg, s, A.BrokerRestart(0))
    return s, request


#: what may happen while the controller notices the stopped broker: time and the scheduled tasks, nothing else
_WAITING = (A.Tick, A.BrokerHeartbeat, A.IsrExpiration, A.HighWatermarkCheckpoint, A.DelayedProduceExpire)


def _until_fenced(cfg, s, b: int):
    """Let time pass until the controller fences b's session (FenceStaleBroker), so that b may start again."""
    for _ in range(500):
        if A.BrokerRestart(b) in enabled(cfg, s):
            return s
        acts = enabled(cfg, s)
        fence = A.FenceStaleBroker(b)
        s = apply(cfg, s, fence if fence in acts else next(a for a in acts if type(a) in _WAITING))
    raise AssertionError(f"broker {b} never fenced")


@pytest.mark.parametrize("clean", [True, False], ids=["clean", "crash"])
def test_a_request_sent_before_its_broker_stops_stays_on_the_wire(clean):
    s, request = _sent_then_stopped(FIXED, clean, restart=False)
    inflight = s.brokers[0].alter_isr_inflight
    assert inflight is not None and inflight.orphan and inflight.request == request and inflight.response is None
    assert s.brokers[0].alter_isr_unsent == ()                       # what was not sent dies with the process
    assert A.AlterIsrReceived(0) in enabled(FIXED, s)
    assert encode(inflight)["orphan"] is True                       # in the state's encoding only when set
    assert "orphan" not in encode(dataclasses.replace(inflight, orphan=False))


@pytest.mark.parametrize("cfg", [FIXED, BROKEN], ids=["kafka-4.1-disk-wipe", "no-kip-903"])
def test_the_controller_refuses_an_earlier_incarnations_request_and_the_answer_goes_nowhere(cfg):
    s, request = _sent_then_stopped(cfg, clean=False, restart=True)
    assert s.quorum.registrations[0].epoch != request.broker_epoch   # registered again: a new broker epoch
    before = s.quorum.partitions
    s2 = apply(cfg, s, A.AlterIsrReceived(0))
    assert s2.quorum.partitions == before and len(s2.quorum.log) == len(s.quorum.log)
    assert s2.brokers[0].alter_isr_inflight is None                   # no response step follows
    assert not any(type(a) is A.AlterIsrResponse for a in enabled(cfg, s2))
    assert "before it stopped" in action_words(cfg, s, A.AlterIsrReceived(0))


def test_the_guards_are_layered():
    """A broker starts again only once the controller has fenced its registration, which moved its leaderships to a
    later leader epoch: without the broker-epoch check the leader-epoch check refuses the dead incarnation's request,
    and without both the leader check does (broker 0 leads no more)."""
    s, request = _sent_then_stopped(BROKEN, clean=False, restart=True)
    (item,) = request.partitions
    assert item.leader_epoch < s.quorum.partitions[0].leader_epoch and s.quorum.partitions[0].leader != 0
    with installed("alter-partition-any-broker-epoch"):
        assert apply(BROKEN, s, A.AlterIsrReceived(0)).quorum.partitions == s.quorum.partitions
        with installed("alter-partition-older-leader-epoch"):
            assert apply(BROKEN, s, A.AlterIsrReceived(0)).quorum.partitions == s.quorum.partitions


def test_before_it_registers_again_the_request_is_still_its_registrations():
    """A stopped broker that has not registered again still holds its registration: the controller handles the
    request as Kafka's does (the epoch matches), and only the answer is lost."""
    s, request = _sent_then_stopped(FIXED, clean=True, restart=False)
    assert s.quorum.registrations[0].epoch == request.broker_epoch
    s2 = apply(FIXED, s, A.AlterIsrReceived(0))
    assert s2.brokers[0].alter_isr_inflight is None and len(s2.quorum.log) >= len(s.quorum.log)
