"""The partition metrics Kafka's tests read (model/metrics.py), as a trace's checks see them, in both eras."""

from __future__ import annotations

from pathlib import Path

import pytest

from isrlab.model import actions as A
from isrlab.model.config import preset
from isrlab.model.metrics import leader_metrics, metric_at
from isrlab.model.state import Partition
from isrlab.model.step import initial_state, step
from isrlab.model.trace import Trace, load_trace
from isrlab.properties.replay import replay

pytestmark = pytest.mark.unit
KAFKA_24 = Path(__file__).parent / "kafka"


def _do(cfg, s, acts: list, a):
    """Apply a (it must be enabled) and note it in acts."""
    s2 = step(cfg, s, a)
    assert s2 is not None, a
    acts.append(a)
    return s2


def _replay(cfg, s, acts: list, brokers=(0, 1, 2)):
    """Each broker replays the metadata log to its end."""
    for b in brokers:
        while s.brokers[b].metadata_offset < len(s.quorum.log):
            s = _do(cfg, s, acts, A.MetadataApply(b))
    return s


def _kraft_leader_alone(cfg):
    """The formed KRaft cluster, both followers fenced, replayed by the leader 0: its ISR is {0}."""
    acts: list = []
    s = _replay(cfg, initial_state(cfg), acts)
    for b in (1, 2):
        s = _do(cfg, s, acts, A.HeartbeatsLost(b))
        s = _do(cfg, s, acts, A.FenceStaleBroker(b))
    s = _replay(cfg, s, acts, (0,))
    assert s.brokers[0].partitions[0].isr == (0,)
    return s, acts


def test_min_isr_above_the_replication_factor_differs_between_the_eras():
    """3.7.0 compares with effectiveMinIsr = min(min.insync.replicas, replicas) (KAFKA-15583), 2.4.0 with the config:
    with min ISR 5 and RF 3, a 3.7 leader whose ISR is every replica is at min ISR and not under it; a 2.4 leader
    with the same ISR is under min ISR and not at it."""
    k37 = preset("kafka-3.7").config.replace(min_insync_replicas=5)
    s = _replay(k37, initial_state(k37), [])
    assert s.brokers[0].partitions[0].isr == (0, 1, 2)
    assert metric_at(k37, s, "metrics.0.0.at_min_isr") is True
    assert metric_at(k37, s, "metrics.0.0.under_min_isr") is False
    assert metric_at(k37, s, "metrics.0.0.under_replicated") is False

    # 2.4.0: the actions of the 2.4 testAtMinIsr trace up to the state where leader 0's ISR is every replica
    trace = load_trace(str(KAFKA_24 / "PartitionTest.testAtMinIsr.json"))
    k24 = trace.config.replace(min_insync_replicas=5)
    s = initial_state(k24)
    for a in trace.actions:
        s = step(k24, s, a)
        part = s.brokers[0].partitions[0]
        if type(part) is Partition and part.leader == 0 and part.isr == (0, 1, 2):
            break
    else:
        raise AssertionError("leader 0 never has the whole ISR")
    assert metric_at(k24, s, "metrics.0.0.at_min_isr") is False
    assert metric_at(k24, s, "metrics.0.0.under_min_isr") is True
    assert metric_at(k24, s, "metrics.0.0.under_replicated") is False


def test_a_follower_and_a_broker_that_is_down_report_false():
    """The gauges exist only on the leader (leaderLogIfLocal): a follower reports false for each, as does a broker
    that is down, while the leader of an ISR missing two replicas is under-replicated and at min ISR 1."""
    cfg = preset("kafka-3.7").config
    s, _ = _kraft_leader_alone(cfg)
    assert leader_metrics(cfg, s, 0, 0) == ("under_replicated", "at_min_isr")
    for b in (1, 2):
        assert leader_metrics(cfg, s, b, 0) == ()
        assert metric_at(cfg, s, f"metrics.{b}.0.under_replicated") is False
    down = step(cfg, s, A.BrokerCrash(0, True))
    assert metric_at(cfg, down, "metrics.0.0.under_replicated") is False


@pytest.mark.parametrize("path", ["metrics.0.0", "metrics.0.0.isr", "metrics.x.0.at_min_isr", "metrics.9.0.at_min_isr",
                                  "metrics.0.7.at_min_isr", "metrics.0.0.at_min_isr.1", "metric.0.0.at_min_isr"])
def test_a_path_that_names_no_metric_is_a_key_error(path):
    cfg = preset("kafka-3.7").config
    with pytest.raises(KeyError):
        metric_at(cfg, initial_state(cfg), path)


def test_a_trace_check_reads_a_metric_and_fails_when_kafka_would():
    """Through replay: a check on a metric holds when the value is the one stated, fails with a line naming the path
    and both values when not, and a path that names no metric is a failed check, not an exception."""
    cfg = preset("kafka-3.7").config
    _s, acts = _kraft_leader_alone(cfg)
    n = len(acts)
    good = Trace(config=cfg, actions=acts, checks=[
        {"after": 0, "path": "metrics.0.0.under_replicated", "equals": False},
        {"after": n, "path": "metrics.0.0.under_replicated", "equals": True},
        {"after": n, "path": "metrics.0.0.under_min_isr", "equals": False}])
    assert replay(good, with_changes=False).check_failures == []
    bad = Trace(config=cfg, actions=acts, checks=[
        {"after": n, "path": "metrics.0.0.at_min_isr", "equals": False, "why": "wrong on purpose"},
        {"after": n, "path": "metrics.0.0.nonsense", "equals": True}])
    failures = replay(bad, with_changes=False).check_failures
    assert failures == [f"after {n} actions: metrics.0.0.at_min_isr is True, expected False (wrong on purpose)",
                        f"after {n} actions: no such state path 'metrics.0.0.nonsense'"]
