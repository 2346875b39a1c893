"""The broker's 3.x Partition in KRaft: a follower holds no remote replica states (apache/kafka#12138, 3.3.0), the
assignment keeps a reassignment's adding and removing replicas (assignmentState, Partition.updateAssignmentAndIsr,
3.7.0), and a leader refuses a Fetch from a replica outside its replica set (KAFKA-13837, 3.3.0).

The situations are reached by actions from a KRaft preset's formed cluster, with the trace builder of
tests/kafka_kraft/ (kraftcase.Case), and each rule is checked with its flag on and off.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "kafka_kraft"))

from kraftcase import Case  # noqa: E402

from isrlab.model import actions as A  # noqa: E402
from isrlab.model import errors as E  # noqa: E402
from isrlab.model.config import ModelConfig, preset  # noqa: E402
from isrlab.model.encode import encode  # noqa: E402
from isrlab.model.metrics import is_under_replicated  # noqa: E402
from isrlab.model.partition import follower_replica_error  # noqa: E402
from isrlab.model.step import initial_state, step  # noqa: E402
from isrlab.properties.invariants import check_transition  # noqa: E402

pytestmark = pytest.mark.unit


def _case(**config) -> Case:
    return Case("PartitionTest.partition3x", "a situation of the 3.x Partition", **config)


def _remote_ids(c: Case, b: int) -> list:
    return [r.broker_id for r in c.s.brokers[b].partitions[0].remote_replicas]


# --------------------------------------------------------------------------- a follower's remote replicas
@pytest.mark.parametrize("clears", [True, False])
def test_a_leader_that_becomes_follower_clears_its_remote_replica_states_only_with_the_rule(clears):
    c = _case(n_brokers=3, replication_factor=3, follower_clears_remote_replicas=clears)
    c.formed().produce(0, n=2).catch_up()
    assert _remote_ids(c, 0) == [1, 2]
    c.fence(0).replay(0)
    part = c.s.brokers[0].partitions[0]
    assert part.leader == 1 and part.isr == () and part.assigned_replicas == (0, 1, 2)
    assert _remote_ids(c, 0) == ([] if clears else [1, 2])


def _leads_again(clears: bool) -> Case:
    """Broker 0 leads, is fenced (1 leads), comes back into the ISR, and leads again once 1 is fenced."""
    c = _case(n_brokers=3, replication_factor=3, follower_clears_remote_replicas=clears)
    c.formed().produce(0, n=2).catch_up()
    c.fence(0).replay().produce(1).unfence(0).replay().catch_up().alter(1).replay()
    assert c.s.quorum.partitions[0].isr == (0, 1, 2)
    c.fence(1).replay(0, 2)
    assert c.s.brokers[0].partitions[0].leader == 0
    return c


def test_a_broker_that_leads_again_holds_the_same_replica_states_whether_it_cleared_them_or_not():
    """The README's claim: no rule reads a follower's remote replica states, and a new leader resets every one
    (resetReplicaState with isNewLeader), so the rule changes nothing a leader does."""
    on, off = _leads_again(True), _leads_again(False)
    assert on.actions == off.actions
    assert encode(on.s.brokers[0].partitions[0]) == encode(off.s.brokers[0].partitions[0])
    assert [r.broker_id for r in on.s.brokers[0].partitions[0].remote_replicas] == [1, 2]


# --------------------------------------------------------------------------- KAFKA-13837
def _adding_replica_fetches_first(refuse: bool) -> Case:
    """[0, 1] reassigned to [0, 1, 2, 3]: broker 2 replays the record and fetches before the leader has replayed it."""
    c = _case(n_brokers=4, replication_factor=2, max_reassignments=1, kafka_13837=refuse)
    c.formed().produce(0, n=2).catch_up()
    c.reassign([0, 1, 2, 3]).replay(2).ofle(2)
    c.do(A.FetchRequest(2, 0))
    assert c.s.brokers[0].partitions[0].assigned_replicas == (0, 1)
    return c


def test_a_fetch_from_a_replica_the_leader_does_not_hold_is_refused_with_unknown_leader_epoch():
    c = _adding_replica_fetches_first(True)
    answer = c.s.brokers[2].fetchers[0].inflight
    assert answer.error == E.UNKNOWN_LEADER_EPOCH and answer.entries == () and answer.high_watermark == -1
    assert c.s.ghost.errors_seen & E.ERROR_BIT[E.UNKNOWN_LEADER_EPOCH]
    assert _remote_ids(c, 0) == [1]                     # nothing recorded for broker 2


def test_before_kafka_13837_the_fetch_is_answered_with_no_records_and_the_leaders_hw():
    c = _adding_replica_fetches_first(False)
    answer = c.s.brokers[2].fetchers[0].inflight
    assert answer.error == E.NONE and answer.entries == () and answer.high_watermark == 2
    assert _remote_ids(c, 0) == [1]


def test_follower_replica_error_without_a_leader_epoch_and_outside_kraft():
    c = _case(n_brokers=3, replication_factor=2)
    c.formed()
    part = c.s.brokers[0].partitions[0]
    assert follower_replica_error(c.cfg, part, 1, 0) == E.NONE
    assert follower_replica_error(c.cfg, part, 2, 0) == E.UNKNOWN_LEADER_EPOCH
    assert follower_replica_error(c.cfg, part, 2, -1) == E.NOT_LEADER_FOR_PARTITION     # NOT_LEADER_OR_FOLLOWER
    assert follower_replica_error(c.cfg.replace(kafka_13837=False), part, 2, 0) == E.NONE
    assert follower_replica_error(ModelConfig(), part, 2, 0) == E.NONE                  # the ZooKeeper era


# --------------------------------------------------------------------------- the assignment state
def test_every_replica_keeps_the_reassignments_adding_and_removing_replicas_until_it_completes():
    c = _case(n_brokers=3, replication_factor=2, max_reassignments=1)
    c.formed().produce(0, n=2).catch_up()
    c.reassign([0, 2]).replay()
    for b in (0, 1, 2):
        part = c.s.brokers[b].partitions[0]
        assert (part.assigned_replicas, part.adding_replicas, part.removing_replicas) == ((0, 2, 1), (2,), (1,)), b
    leader = c.s.brokers[0].partitions[0]
    assert encode(leader)["adding_replicas"] == [2] and encode(leader)["removing_replicas"] == [1]
    assert not is_under_replicated(c.cfg, leader)       # replicationFactor 2 (the adding 2 left out), ISR {0, 1}
    c.catch_up([2]).alter(0).replay()
    leader = c.s.brokers[0].partitions[0]
    assert leader.assigned_replicas == (0, 2) and leader.adding_replicas == () and leader.removing_replicas == ()
    assert "adding_replicas" not in encode(leader) and "removing_replicas" not in encode(leader)
    assert c.s.brokers[1].partitions[0] is None         # the removed replica stopped and deleted its partition


def test_the_reassignments_steps_break_no_invariant():
    """The reassignment of the test above on the kraft-reassignment preset, the whole catalogue checked after each
    step."""
    c = Case("PartitionTest.partition3x", "invariants", preset_name="kraft-reassignment")
    c.formed().produce(0, n=2).catch_up().reassign([0, 2]).replay().catch_up([2]).alter(0).replay()
    s = initial_state(c.cfg)
    for a in c.actions:
        s2 = step(c.cfg, s, a)
        assert check_transition(c.cfg, s, a, s2, 0) == [], A.describe(a)
        s = s2
    assert s.brokers[0].partitions[0].assigned_replicas == (0, 2)


def test_the_new_flags_stay_out_of_a_configs_identity_at_their_default():
    cfg = preset("kafka-3.7").config
    assert cfg.follower_clears_remote_replicas and cfg.kafka_13837
    ident = cfg.identity_json()
    assert "follower_clears_remote_replicas" not in ident and "kafka_13837" not in ident
    off = cfg.replace(follower_clears_remote_replicas=False, kafka_13837=False)
    assert ModelConfig.from_json(off.to_json()) == off
    assert off.identity_json()["kafka_13837"] is False
