"""Log directories in KRaft (KIP-858, JBOD; Kafka 3.7.0), behind ``log_dirs`` (0 by default: none).

Brokers register their directories, partition registrations carry each replica's directory, a broker reports where
its new logs went (AssignReplicasToDirs), a directory failing on a live broker (the fault LogDirFailure) takes its
partitions offline there and the next heartbeat names it, and the controller moves their leaderships and ISRs as a
fence of those partitions would (ReplicationControlManager.handleDirectoriesOffline).  Directory assignment needs
metadata version 3.7-IV2 (``metadata_version``).
"""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model.actions import ActionError, action_from_json
from isrlab.model.config import PRESETS, ConfigError, ModelConfig, preset
from isrlab.model.encode import encode, fingerprint
from isrlab.model.state import OFFLINE, BrokerLogDirsChangeRecord, PartitionChangeRecord
from isrlab.model.step import action_kinds, enabled_actions, initial_state, step
from isrlab.properties import invariants as I
from isrlab.properties.walker import derive_seed, walk
from conftest import drive

pytestmark = pytest.mark.unit

CFG = preset("kraft-jbod").config


def _formed(cfg=CFG):
    """Every broker replays the formed cluster's metadata log and reports its logs' directories."""
    s = initial_state(cfg)
    for b in range(cfg.n_brokers):
        while s.brokers[b].metadata_offset < len(s.quorum.log):
            s = drive(cfg, s, A.MetadataApply(b))
    for b in range(cfg.n_brokers):
        for p, d in s.brokers[b].dir_assignments:
            s = drive(cfg, s, A.AssignReplicasToDirs(b, p, d))
    return s


def test_without_directories_nothing_changes():
    """log_dirs 0 (the default): no directory in any state record, the same encoding and no new kind offered."""
    cfg = preset("kafka-3.7").config
    assert cfg.log_dirs == 0
    s = initial_state(cfg)
    text = str(encode(s))
    for word in ("directories", "log_dirs", "log_dir_of", "offline_dirs", "dir_assignments", "log_dir_failures"):
        assert word not in text
    assert A.LogDirFailure not in action_kinds(cfg) and A.AssignReplicasToDirs not in action_kinds(cfg)
    assert not [name for name, p in PRESETS.items() if p.config.log_dirs and name != "kraft-jbod"]
    with_fields = ModelConfig.from_json({**cfg.to_json(), "metadata_version": "3.7-IV4"})
    assert fingerprint(initial_state(with_fields)) == fingerprint(s)


def test_registrations_and_partitions_carry_directories():
    """ClusterControlManager.registerBroker with LogDirs; a new partition's replicas on a broker with two directories
    are UNASSIGNED (defaultDir) until the broker reports where it placed the log."""
    s = initial_state(CFG)
    assert s.quorum.registrations[1].directories == ("b1d0", "b1d1")
    assert s.quorum.log[1].log_dirs == ("b1d0", "b1d1")
    assert s.quorum.partitions[0].directories == ("UNASSIGNED",) * 3
    s = _formed()
    # each broker placed p0 then p1 in its directory with the fewest logs: d0 then d1
    assert s.quorum.partitions[0].directories == ("b0d0", "b1d0", "b2d0")
    assert s.quorum.partitions[1].directories == ("b1d1", "b2d1", "b0d1")
    assert all(not br.dir_assignments for br in s.brokers)
    one = CFG.replace(log_dirs=1, max_log_dir_failures=0)
    assert initial_state(one).quorum.partitions[0].directories == ("b0d0", "b1d0", "b2d0")   # the only directory


def test_a_failed_directory_moves_its_leaderships_at_the_next_heartbeat():
    """LogDirFailure on the leader's directory: the partition goes offline on it, the heartbeat sent at once names the
    directory, and the controller moves the leadership and the ISR off it, then records the remaining directories."""
    s = _formed()
    assert s.quorum.partitions[0].leader == 0
    s = drive(CFG, s, A.LogDirFailure(0, 0))
    assert s.brokers[0].partitions[0] == OFFLINE and s.brokers[0].partitions[1] != OFFLINE
    assert s.brokers[0].next_heartbeat_ms == s.now and s.ghost.log_dir_failures == 1
    assert s.quorum.partitions[0].leader == 0              # the controller does not know yet
    n = len(s.quorum.log)
    s = drive(CFG, s, A.BrokerHeartbeat(0))
    part = s.quorum.partitions[0]
    assert part.leader == 1 and part.isr == (1, 2) and part.leader_epoch == 1
    assert s.quorum.partitions[1].isr == (0, 1, 2)         # in the other directory: untouched
    assert [type(r) for r in s.quorum.log[n:]] == [PartitionChangeRecord, BrokerLogDirsChangeRecord]
    assert s.quorum.log[-1].log_dirs == ("b0d1",) and s.quorum.registrations[0].directories == ("b0d1",)
    assert s.ghost.dir_leader_moves == 1 and I.witness_dir_offline_moved_leader(CFG, s)
    s = drive(CFG, s, A.BrokerHeartbeat(0)) if step(CFG, s, A.BrokerHeartbeat(0)) else s
    assert len([r for r in s.quorum.log if type(r) is BrokerLogDirsChangeRecord]) == 1   # reported once


def test_a_replica_in_an_offline_directory_is_no_acceptable_leader():
    """LeaderAcceptor (3.7.0): once broker 0's directory is offline, an election (here: fencing the leader) does not
    pick broker 0 for a partition whose replica there is in that directory, though 0 is active."""
    cfg = CFG.replace(n_brokers=2, replication_factor=2)
    s = _formed(cfg)
    s = drive(cfg, s, A.LogDirFailure(0, 1), A.BrokerHeartbeat(0))
    part = s.quorum.partitions[1]                           # [1, 0], broker 0's replica in b0d1
    assert part.directory(0) == "b0d1" and part.isr == (1,)
    s = drive(cfg, s, A.HeartbeatsLost(1), A.FenceStaleBroker(1))
    assert s.quorum.partitions[1].leader == -1 and s.quorum.partitions[0].leader == 0


def test_a_restarted_broker_registers_every_directory_again():
    """A new process: every directory online again (the failure was an I/O error), nothing queued, and the
    registration lists them all; the logs kept their directories."""
    s = _formed()
    s = drive(CFG, s, A.LogDirFailure(2, 1), A.BrokerHeartbeat(2))
    s = drive(CFG, s, A.HeartbeatsLost(2), A.FenceStaleBroker(2), A.BrokerCrash(2, True), A.BrokerRestart(2))
    assert s.brokers[2].offline_dirs == () and s.quorum.registrations[2].directories == ("b2d0", "b2d1")
    assert s.brokers[2].log_dir_of[:2] == (0, 1)


def test_the_fault_keeps_one_directory_and_its_budget():
    s = _formed()
    assert step(CFG, s, A.LogDirFailure(0, 2)) is None                 # no such directory
    s = drive(CFG, s, A.LogDirFailure(0, 0))
    assert step(CFG, s, A.LogDirFailure(0, 1)) is None                 # the last online one does not fail
    assert step(CFG, s, A.LogDirFailure(0, 0)) is None                 # already offline
    s = drive(CFG, s, A.LogDirFailure(1, 0))
    assert step(CFG, s, A.LogDirFailure(2, 0)) is None                 # max_log_dir_failures = 2
    assert not [a for a in enabled_actions(CFG, s) if type(a) is A.LogDirFailure]


def test_assignments_to_offline_directories_and_answers():
    """handleAssignReplicasToDirs: LOST is offline, so the broker leaves the partition's ISR and leadership; a broker
    that is no replica gets NOT_LEADER_OR_FOLLOWER (code 6); before 3.7-IV2 the request is refused."""
    cfg = CFG.replace(n_brokers=4)
    s = _formed(cfg)
    s = drive(cfg, s, A.AssignReplicasToDirs(0, 0, "LOST"))
    assert s.quorum.partitions[0].directory(0) == "LOST" and s.quorum.partitions[0].leader == 1
    assert s.ghost.responses.assign_replicas_to_dirs[0][0] == "NONE"
    s = drive(cfg, s, A.AssignReplicasToDirs(3, 0, "b3d0"))
    assert s.ghost.responses.assign_replicas_to_dirs[3][0] == "NOT_LEADER_FOR_PARTITION"
    old = cfg.replace(metadata_version="3.7-IV1", max_log_dir_failures=0)
    s = initial_state(old)
    assert s.quorum.partitions[0].directories == () and s.quorum.registrations[0].directories == ()
    s2 = drive(old, s, A.AssignReplicasToDirs(0, 0, "b0d0"))
    assert s2.ghost.responses.assign_replicas_to_dirs[0][0] == "UNSUPPORTED_VERSION"
    assert s2.quorum.log == s.quorum.log
    assert A.AssignReplicasToDirs not in action_kinds(old)


def test_bad_configs_and_actions_are_refused_in_one_line():
    for changes, message in (({"metadata_version": "3.8-IV0"}, "metadata_version must be one of"),
                             ({"log_dirs": 1, "max_log_dir_failures": 1}, "needs log_dirs >= 2"),
                             ({"log_dirs": 9}, "log_dirs must be in 0..8")):
        with pytest.raises(ConfigError, match=message):
            CFG.replace(**changes)
    with pytest.raises(ConfigError, match="needs kip_500"):
        preset("kafka-2.4").config.replace(log_dirs=2)
    with pytest.raises(ActionError, match="directory must be >= 0"):
        action_from_json({"type": "LogDirFailure", "broker": 0, "directory": -1})
    with pytest.raises(ActionError, match="directory must be"):
        action_from_json({"type": "AssignReplicasToDirs", "broker": 0, "partition": 0, "directory": ""})
    from isrlab.model.start import StartError
    with pytest.raises(StartError, match="log directories"):
        initial_state(CFG, {"kraft": {}})


def test_walks_of_the_preset_hold_every_invariant_and_reach_the_witness():
    """The vacuity guard: seeded walks of kraft-jbod (600 steps, every invariant checked) hold, and some reach a
    leadership moved off an offline directory (walk seed derive_seed(3, 6) is the first of the twelve that does; five
    of them have a directory fail, 2026-11-29)."""
    reached = []
    for i in range(12):
        r = walk(CFG, derive_seed(3, i), 600)
        assert not r.violations, (i, r.violations)
        s = initial_state(CFG)
        for a in r.actions:
            s = step(CFG, s, a)
        if I.witness_dir_offline_moved_leader(CFG, s):
            reached.append(i)
    assert reached and reached[0] == 6, reached


def test_an_earlier_incarnations_heartbeat_carries_its_offline_directories():
    """A heartbeat sent just before a crash names the failed directory; reaching the controller while the broker's
    registration is still that incarnation's (OrphanRequestReceived), it moves the directory's leaderships."""
    s = _formed()
    s = drive(CFG, s, A.LogDirFailure(0, 0), A.BrokerCrash(0, False))
    (hb,) = s.brokers[0].orphans
    assert hb.offline_dirs == ("b0d0",)
    s = drive(CFG, s, A.OrphanRequestReceived(0, "BROKER_HEARTBEAT"))
    assert s.quorum.partitions[0].leader == 1 and s.quorum.registrations[0].directories == ("b0d1",)
    assert "offline_dirs" not in encode(initial_state(CFG).brokers[0])
