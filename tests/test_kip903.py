"""KIP-903 (Kafka 3.5.0): broker epochs in Fetch and in AlterPartition's ISR entries.

A leader records the broker epoch each follower's Fetch carries (Replica.updateFetchState), forgets it when it becomes
leader anew (Replica.resetReplicaState), admits a follower to the ISR only while that epoch is the one its metadata
cache holds (Partition.isReplicaIsrEligible), and sends each ISR member's epoch with the proposal
(Partition.addBrokerEpochToIsr); the controller answers a mismatch INELIGIBLE_REPLICA
(ReplicationControlManager.ineligibleReplicasForIsr).  Without it (Kafka 3.4, KAFKA-14139) a broker that comes back
on an empty disk joins the ISR on its previous incarnation's fetches.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from isrlab.model import actions as A, errors as E
from isrlab.model.config import preset
from isrlab.model.partition import is_replica_isr_eligible
from isrlab.model.step import apply, initial_state
from isrlab.model.trace import load_trace
from isrlab.properties.invariants import BY_NAME
from test_kraft import _fetch_round

P = 0
ROOT = Path(__file__).resolve().parent.parent
#: the archived no-kip-903 counterexamples: the hand-written scenario (HAND, whose last action is leader 0's
#: AlterPartition adding broker 2, read step by step below) and the fuzzer's
ARCHIVED = sorted((ROOT / "counterexamples").glob("*-no-kip-903-controller_isr_entry_condition-*.json"))
HAND = ROOT / "counterexamples" / "2026-11-25-no-kip-903-controller_isr_entry_condition-780b27948f78.json"
FIXED = preset("kafka-4.1-disk-wipe").config
BROKEN = preset("no-kip-903").config


def replay(cfg, actions):
    s = initial_state(cfg)
    for a in actions:
        pre, s = s, apply(cfg, s, a)
    return pre, s


@cache
def hand_actions() -> tuple:
    """HAND's actions, read once for the tests that replay them."""
    return tuple(load_trace(str(HAND)).actions)


def formed(cfg):
    s = initial_state(cfg)
    while any(br.metadata_offset < len(s.quorum.log) for br in s.brokers):
        for br in s.brokers:
            if br.metadata_offset < len(s.quorum.log):
                s = apply(cfg, s, A.MetadataApply(br.broker_id))
    return s


def test_the_counterexamples_are_archived():
    """Each ends with the leader's AlterPartition: the controller admits the empty replica as it handles it."""
    assert HAND in ARCHIVED and len(ARCHIVED) >= 2, ARCHIVED
    for path in ARCHIVED:
        trace = load_trace(str(path))
        assert trace.preset == "no-kip-903" and trace.violated == "controller_isr_entry_condition"
        assert type(trace.actions[-1]) is A.AlterIsrReceived
        if path == HAND:
            assert trace.actions[-1].broker == 0


@pytest.mark.parametrize("name, stored", [("kafka-3.6", True), ("kafka-3.3", False)])
def test_a_fetch_records_the_followers_broker_epoch(name, stored):
    cfg = preset(name).config
    s = formed(cfg)
    s = apply(cfg, s, A.Produce(0, P, 1))
    s = _fetch_round(cfg, s, 1)
    r = s.brokers[0].partitions[P].remote(1)
    assert r.log_end_offset == 0 or r.log_end_offset == 1
    assert r.broker_epoch == (s.brokers[1].broker_epoch if stored else None)
    assert s.brokers[2].broker_epoch != s.brokers[1].broker_epoch           # epochs are registration offsets
    assert s.brokers[0].partitions[P].remote(2).broker_epoch is None        # no fetch from 2 yet: Option.empty


def test_the_controller_refuses_a_stale_incarnation():
    """The leader's proposal names broker 2 with the epoch of its fetches before the wipe; the controller holds the new
    registration and answers INELIGIBLE_REPLICA; the ISR stays as it was."""
    actions = hand_actions()
    pre, s = replay(FIXED, actions)
    item = pre.brokers[0].alter_isr_unsent[0].request
    assert item.new_isr == (0, 1, 2)
    old, new = item.isr_epochs[2], s.quorum.registrations[2].epoch
    assert item.isr_epochs[:2] == (s.brokers[0].broker_epoch, s.brokers[1].broker_epoch)
    assert 0 <= old < new
    result = s.brokers[0].alter_isr_inflight.response.partitions[0]
    assert result.error == E.INELIGIBLE_REPLICA
    assert s.quorum.partitions[P].isr == pre.quorum.partitions[P].isr == (0, 1)
    assert BY_NAME["controller_isr_entry_condition"].check(FIXED, pre, actions[-1], s) is None


def test_without_kip_903_the_empty_replica_joins():
    actions = hand_actions()
    pre, s = replay(BROKEN, actions)
    assert pre.brokers[0].alter_isr_unsent[0].request.isr_epochs == ()
    assert s.quorum.partitions[P].isr == (0, 1, 2)
    assert s.brokers[2].logs[P] is None or s.brokers[2].logs[P].log_end_offset == 0
    facts = BY_NAME["controller_isr_entry_condition"].check(BROKEN, pre, actions[-1], s)
    assert facts == {"partition": 0, "leader": 0, "follower": 2, "follower_log_end_offset": 0,
                     "high_watermark": 1, "isr": [0, 1, 2]}


def test_the_leader_checks_the_stored_epoch_against_its_cache():
    """Partition.isReplicaIsrEligible (3.5.0): once the leader has replayed broker 2's new registration, the epoch of
    its last fetch (the old incarnation's) no longer matches and broker 2 is not eligible; a fetch from the new
    incarnation makes it eligible again; without KIP-903 only fencing and shutdown count."""
    actions = hand_actions()
    pre, _ = replay(FIXED, actions[:-1])
    br = pre.brokers[0]
    r = br.partitions[P].remote(2)
    assert br.metadata.broker_epochs[2] == r.broker_epoch                # the leader has not heard of the new one
    assert is_replica_isr_eligible(FIXED, br, r)
    _, s = replay(FIXED, actions)                                         # the unfence record is the last one
    while s.brokers[0].metadata_offset < len(s.quorum.log):
        s = apply(FIXED, s, A.MetadataApply(0))
    br = s.brokers[0]
    r = br.partitions[P].remote(2)
    assert br.metadata.broker_epochs[2] == s.quorum.registrations[2].epoch != r.broker_epoch
    assert 2 in br.metadata.alive_brokers                                  # unfenced: only the epoch stands in the way
    assert not is_replica_isr_eligible(FIXED, br, r)
    fresh = copy_with(r, broker_epoch=br.metadata.broker_epochs[2])
    assert is_replica_isr_eligible(FIXED, br, fresh) == is_replica_isr_eligible(FIXED, br, copy_with(r, broker_epoch=-1))
    assert is_replica_isr_eligible(BROKEN, br, r) == is_replica_isr_eligible(BROKEN, br, fresh)   # the epoch plays no part
    unknown = copy_with(r, broker_epoch=None)
    assert not is_replica_isr_eligible(FIXED, br, unknown)
    sentinel = copy_with(r, broker_epoch=-1)
    assert is_replica_isr_eligible(FIXED, br, sentinel)                   # a fetch that sent -1 bypasses the check


def copy_with(r, **fields):
    import copy
    c = copy.copy(r)
    for k, v in fields.items():
        object.__setattr__(c, k, v)
    return c
