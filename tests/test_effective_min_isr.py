"""Partition.effectiveMinIsr (Kafka 3.7.0, KAFKA-15583): min.insync.replicas capped at the number of replicas, in the
produce path as in the HW rule.

Kafka 3.7.0's Partition.scala defines ``effectiveMinIsr = min(minInSyncReplicas, remoteReplicasMap.size + 1)`` and uses
it in appendRecordsToLeader (the NOT_ENOUGH_REPLICAS check before the append), checkEnoughReplicasReachOffset (the
acks=all completion) and isUnderMinIsr.  With RF 3 and min.insync.replicas 5 a 3.7 broker appends an acks=all record
and acknowledges it once the three replicas have it; 3.6 (and 3.7 with the flag off) refuses it before the append.
"""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model import errors as E
from isrlab.model.config import preset
from isrlab.model.delayed import effective_min_isr
from isrlab.model.step import apply, enabled_actions, initial_state

pytestmark = pytest.mark.unit


def _formed(cfg):
    s = initial_state(cfg)
    while True:
        pending = [A.MetadataApply(br.broker_id) for br in s.brokers if br.metadata_offset < len(s.quorum.log)]
        if not pending:
            return s
        for a in pending:
            s = apply(cfg, s, a)


def _leader(s) -> int:
    return next(br.broker_id for br in s.brokers if br.partitions[0] is not None and br.partitions[0].leader == br.broker_id)


def _fetch_rounds(cfg, s, rounds=3):
    for _ in range(rounds):
        for b in range(cfg.n_brokers):
            for kind in (A.OffsetsForLeaderEpoch, A.FetchRequest, A.FetchResponse):
                acts = [a for a in enabled_actions(cfg, s) if type(a) is kind and a.broker == b]
                if acts:
                    s = apply(cfg, s, acts[0])
    return s


@pytest.mark.parametrize("name, flag, appended", [("kafka-3.7", True, True), ("kafka-3.7", False, False),
                                                  ("kafka-3.6", None, False)])
def test_an_acks_all_produce_with_min_isr_above_the_replica_count(name, flag, appended):
    cfg = preset(name).config.replace(min_insync_replicas=5)
    if flag is not None:
        cfg = cfg.replace(kafka_15583=flag)
    s = _formed(cfg)
    b = _leader(s)
    assert effective_min_isr(cfg, s.brokers[b].partitions[0]) == (3 if appended else 5)
    t = apply(cfg, s, A.Produce(b, 0, -1))
    if not appended:   # refused before the append: NOT_ENOUGH_REPLICAS, nothing written
        assert t.brokers[b].logs[0].log_end_offset == 0 and t.ghost.errors_seen & E.ERROR_BIT[E.NOT_ENOUGH_REPLICAS]
        return
    assert t.brokers[b].logs[0].log_end_offset == 1 and len(t.brokers[b].delayed_produces) == 1
    t = _fetch_rounds(cfg, t)
    assert t.brokers[b].logs[0].high_watermark == 1
    assert not t.brokers[b].delayed_produces and [rid for rid, *_ in t.ghost.acked] == [1]


def test_zookeeper_presets_keep_the_configured_min_isr():
    cfg = preset("kafka-2.4").config.replace(min_insync_replicas=5)
    part = type("P", (), {"remote_replicas": (1, 2)})()
    assert effective_min_isr(cfg, part) == 5
