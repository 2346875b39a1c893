"""KRaft admin requests the quorum controller answers from its own state: a topic's unclean.leader.election.enable
changed at run time (``AlterTopicConfig``: IncrementalAlterConfigs and its ConfigRecord,
ConfigurationControlManager.incrementalAlterConfigs, Kafka 3.7.0; read by the elections only from 3.9.0, KAFKA-12670,
the flag ``kafka_12670``), and creations without a manual assignment placed by the controller's replica placer
(``placed_creations``: StripedReplicaPlacer simplified, refused INVALID_REPLICATION_FACTOR as 3.7.0 refuses).
"""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model.config import PRESETS, preset
from isrlab.model.encode import fingerprint
from isrlab.model.quorum_controller import place_replicas, usable_brokers
from isrlab.model.state import ConfigRecord
from isrlab.model.step import action_kinds, enabled_actions, enabled_actions_reference, initial_state, step
from isrlab.properties import invariants as I
from isrlab.properties.walker import derive_seed, walk
from conftest import drive

pytestmark = pytest.mark.unit

BASE = preset("kafka-3.7").config
CFG = BASE.replace(max_config_changes=2)
#: partition 0 ([0, 1, 2]) leaderless with ISR [0]; brokers 0 and 2 fenced, 1 unfenced
LEADERLESS = {"kraft": {"registrations": [{"broker": 0, "fenced": True}, {"broker": 2, "fenced": True}],
                        "partitions": [{"partition": 0, "leader": -1, "isr": [0], "leader_epoch": 3,
                                        "partition_epoch": 5}]}}


#: the same with broker 1 fenced too (a start the static unclean.leader.election.enable allows: no active replica)
ALL_FENCED = {"kraft": {**LEADERLESS["kraft"], "registrations": [{"broker": b, "fenced": True} for b in range(3)]}}


def _replayed(cfg, s, b):
    while s.brokers[b].metadata_offset < len(s.quorum.log):
        s = drive(cfg, s, A.MetadataApply(b))
    return s


def _unfence_2_after(cfg, *actions, start=LEADERLESS):
    """The leaderless start, the given actions, then broker 2 replays the log and its heartbeat unfences it
    (handleBrokerUnfenced: the leaderless partition elects, 2 acceptable, 0 fenced)."""
    s = initial_state(cfg, start)
    for a in actions:
        s = drive(cfg, s, a)
    return drive(cfg, _replayed(cfg, s, 2), A.BrokerHeartbeat(2))


def test_not_offered_without_its_budget_and_the_presets_unchanged():
    assert A.AlterTopicConfig not in action_kinds(BASE)
    assert [n for n, p in PRESETS.items() if A.AlterTopicConfig in action_kinds(p.config)] == []
    assert A.AlterTopicConfig in action_kinds(CFG)
    assert A.AlterTopicConfig not in action_kinds(preset("kafka-2.4").config)
    s = initial_state(CFG)
    assert fingerprint(s) == fingerprint(initial_state(BASE))      # the quiet field leaves the encoding as it was
    kinds = {type(a) for a in enabled_actions(CFG, s)}
    assert {type(a) for a in enabled_actions(BASE, s)} == kinds - {A.AlterTopicConfig} and A.AlterTopicConfig in kinds


def test_a_change_writes_one_config_record_and_an_unchanged_value_none():
    """incrementalAlterConfigResource: a topic's ConfigRecord only when the value changes; SET false on a topic with
    no value (null -> "false") is a change."""
    s = _replayed(CFG, initial_state(CFG), 0)
    n = len(s.quorum.log)
    before = s.brokers[0].metadata
    s = drive(CFG, s, A.AlterTopicConfig(False))
    assert s.quorum.log[n:] == (ConfigRecord("unclean.leader.election.enable", False),)
    assert s.quorum.batch_ends[-1] == n + 1 and s.quorum.topic_unclean_leader_election is False
    assert step(CFG, s, A.AlterTopicConfig(False)) is None         # the model's admin sends only changes
    s = drive(CFG, s, A.AlterTopicConfig(True))
    assert s.quorum.topic_unclean_leader_election is True and s.ghost.config_changes == 2
    assert step(CFG, s, A.AlterTopicConfig(False)) is None         # the budget is spent
    assert sorted(map(repr, enabled_actions(CFG, s))) == sorted(map(repr, enabled_actions_reference(CFG, s)))
    s = _replayed(CFG, s, 0)
    assert s.brokers[0].metadata_offset == len(s.quorum.log)
    assert s.brokers[0].metadata == before                          # no replication rule of the broker reads it


def test_kafka_3_7_0_elects_nothing_uncleanly_after_the_config_turns_on():
    """3.7.0 (kafka_12670 off): uncleanLeaderElectionEnabledForTopic returns false, so unfencing broker 2 leaves the
    partition leaderless; the same steps on 3.9.0's controller elect 2's peer 1 uncleanly (the first acceptable
    replica), an election only the dynamic config allowed: the witness."""
    old = CFG.replace(kafka_12670=False)
    s = _unfence_2_after(old, A.AlterTopicConfig(True))
    assert s.quorum.registrations[2].fenced is False
    assert s.quorum.partitions[0].leader == -1 and s.ghost.unclean_elections == 0
    assert not I.witness_config_unclean_election(old, s)
    new = _unfence_2_after(CFG, A.AlterTopicConfig(True))
    part = new.quorum.partitions[0]
    assert (part.leader, part.isr, part.leader_recovery_state) == (1, (1,), "RECOVERING")
    assert new.ghost.config_unclean_elections == 1 and I.witness_config_unclean_election(CFG, new)
    off = _unfence_2_after(CFG, A.AlterTopicConfig(False))          # turned off: a clean system leaves it leaderless
    assert off.quorum.partitions[0].leader == -1 and not I.witness_config_unclean_election(CFG, off)


def test_the_topic_value_overrides_the_static_one_and_3_7_0_ignores_both():
    static = CFG.replace(unclean_leader_election=True)
    s = _unfence_2_after(static, A.AlterTopicConfig(False), start=ALL_FENCED)
    assert s.quorum.partitions[0].leader == -1                      # the topic's false wins over the static true
    s = _unfence_2_after(static, start=ALL_FENCED)
    assert s.quorum.partitions[0].leader == 2 and s.ghost.unclean_elections == 1
    assert s.ghost.config_unclean_elections == 0                    # the static one's election: no witness
    s = _unfence_2_after(static.replace(kafka_12670=False), start=ALL_FENCED)
    assert s.quorum.partitions[0].leader == -1
    s = _unfence_2_after(static.replace(kafka_12670=False))   # a start 3.7.0 reaches: 1 active, outside the ISR
    assert s.quorum.partitions[0].leader == -1 and s.ghost.unclean_elections == 0


def test_a_deleted_topic_loses_its_config():
    cfg = CFG.replace(max_topic_deletions=1)
    s = drive(cfg, initial_state(cfg), A.AlterTopicConfig(True))
    s = drive(cfg, s, A.DeleteTopic())
    assert s.quorum.topic_unclean_leader_election is None
    assert step(cfg, s, A.AlterTopicConfig(True)) is None           # no topic to configure


def test_the_walker_reaches_the_witness_only_where_the_controller_reads_the_config():
    """Walks of a leaderless-prone KRaft config with the change offered: 3.9.0's controller reaches an election only
    the dynamic config allowed, 3.7.0's never (seeds derive_seed(4, 0..29), 300 steps: seeds 7 and 18 reach it,
    2026-11-29)."""
    cfg = CFG.replace(max_config_changes=1, max_session_expirations=3, max_crashes=3)
    hits = {True: 0, False: 0}
    for flag in (True, False):
        c = cfg.replace(kafka_12670=flag)
        for i in range(30):
            r = walk(c, derive_seed(4, i), 300)
            s = initial_state(c)
            for a in r.actions:
                s = step(c, s, a)
            hits[flag] += I.witness_config_unclean_election(c, s)
    assert hits == {True: 2, False: 0}, hits


# --------------------------------------------------------------------------- placement
def _cfg(**kw):
    return BASE.replace(placed_creations=True, **kw)


def test_the_placer_stripes_unfenced_brokers_first_and_refuses_as_3_7_0():
    s = initial_state(_cfg(n_brokers=4))
    q = s.quorum
    assert usable_brokers(q) == [(0, False), (1, False), (2, False), (3, False)]
    assert [place_replicas(q, p, 3)[1] for p in range(3)] == [(0, 1, 2), (1, 2, 3), (2, 3, 0)]
    assert place_replicas(q, 0, 5)[0] == "INVALID_REPLICATION_FACTOR"   # more than the usable brokers
    assert place_replicas(q, 0, 0)[0] == "INVALID_REPLICATION_FACTOR"


def test_fenced_brokers_come_last_and_shutting_down_ones_are_not_usable():
    cfg = _cfg(n_brokers=3)
    s = drive(cfg, initial_state(cfg), A.HeartbeatsLost(1))
    s = drive(cfg, s, A.FenceStaleBroker(1))
    assert place_replicas(s.quorum, 0, 3) == (None, (0, 2, 1))
    s = drive(cfg, s, A.ControlledShutdown(0))
    s = drive(cfg, s, A.BrokerHeartbeat(0))                       # 0 leads partition 0: it enters controlled shutdown
    assert s.quorum.registrations[0].in_controlled_shutdown and s.quorum.shutdown_offsets[0] >= 0
    assert usable_brokers(s.quorum) == [(1, True), (2, False)]
    assert place_replicas(s.quorum, 0, 3)[0] == "INVALID_REPLICATION_FACTOR"   # 2 usable brokers for 3 replicas
    assert place_replicas(s.quorum, 1, 2) == (None, (2, 1))


def test_a_placed_creation_is_recorded_and_an_all_fenced_one_refused():
    cfg = _cfg(n_brokers=3, n_partitions=2, initial_partitions=1, max_partition_creations=2, replication_factor=2)
    s = drive(cfg, initial_state(cfg), A.HeartbeatsLost(1))
    s = drive(cfg, s, A.FenceStaleBroker(1))
    s = drive(cfg, s, A.CreatePartitions())
    assert s.ghost.responses.create_partitions[1] == "NONE"
    part = s.quorum.partitions[1]
    # unfenced [0, 2] rotated by the partition id 1, then the fenced [1]: replicas [2, 0], both active in the ISR
    assert (part.replicas, part.isr, part.leader) == ((2, 0), (0, 2), 2) and s.zk.assignment[1] == (2, 0)
    cfg = _cfg(n_brokers=2, replication_factor=2, initial_partitions=0, max_partition_creations=1)
    s = initial_state(cfg)
    for b in (0, 1):
        s = drive(cfg, drive(cfg, s, A.HeartbeatsLost(b)), A.FenceStaleBroker(b))
    n = len(s.quorum.log)
    s = drive(cfg, s, A.CreateTopic())
    assert s.ghost.responses.create_partitions[0] == "INVALID_REPLICATION_FACTOR" and len(s.quorum.log) == n
    assert s.zk.assignment[0] == ()
