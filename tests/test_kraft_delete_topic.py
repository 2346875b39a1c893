"""Topic deletion in KRaft (ReplicationControlManager.deleteTopics / deleteTopic, Kafka 3.7.0): the admin's
DeleteTopics becomes one RemoveTopicRecord on the metadata log, which drops the partitions' registrations (their ELR
and last known leader with them); each replica stops its fetcher and deletes its log when it replays the record
(TopicsDelta.localChanges' deletes, ReplicaManager.applyDelta), and an AlterPartition still on its way is answered
UNKNOWN_TOPIC_ID, which its leader gives up on (Partition.handleAlterPartitionError).

Each test starts from the kraft-delete-topic preset's formed cluster (brokers 0-2, partition 0 on replicas (0, 1, 2),
0 leading in leader epoch 0) and checks every invariant of the catalogue after every step.
"""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model import errors as E
from isrlab.model.config import PRESETS, preset
from isrlab.model.partition import retriable_alter_isr_error
from isrlab.model.quorum_controller import registration
from isrlab.model.state import REMOVED, PartitionChangeRecord, RemoveTopicRecord
from isrlab.model.step import action_kinds, enabled_actions, initial_state, step
from isrlab.model.topics import topic_assignment
from isrlab.properties.walker import walk
from test_kraft_reassignment import _go, _replay as _replay_all   # the shared step helpers (tests/ is on sys.path)

pytestmark = pytest.mark.unit

CFG = preset("kraft-delete-topic").config
#: min.insync.replicas=2 (replicas that leave an ISR below two join the ELR), each broker's heartbeats lost once
ELR2 = CFG.replace(min_insync_replicas=2, max_session_expirations=3)


def _replay(cfg, s, brokers=None):
    """Each of ``brokers`` (every broker by default) that is live replays the metadata log to its end."""
    if brokers is None:
        return _replay_all(cfg, s)
    for b in brokers:
        while s.brokers[b].alive and s.brokers[b].metadata_offset < len(s.quorum.log):
            s = _go(cfg, s, A.MetadataApply(b))
    return s


def _fetch(cfg, s, *followers):
    return _go(cfg, s, *[a for b in followers for a in (A.FetchRequest(b, 0), A.FetchResponse(b, 0))])


def _formed(cfg=CFG, records: int = 2):
    """The formed cluster replayed, followers 1 and 2 fetching, ``records`` acks=all records written and
    replicated, the HW known to every replica."""
    s = _go(cfg, _replay(cfg, initial_state(cfg)), A.OffsetsForLeaderEpoch(1, 0), A.OffsetsForLeaderEpoch(2, 0))
    for _ in range(records):
        s = _fetch(cfg, _go(cfg, s, A.Produce(0, 0, -1)), 1, 2)
    return _fetch(cfg, s, 1, 2)


def _delete(cfg, s):
    """DeleteTopic: (the state after it, the records it appended)."""
    before = len(s.quorum.log)
    s = _go(cfg, s, A.DeleteTopic())
    return s, s.quorum.log[before:]


# --------------------------------------------------------------------------- the controller
def test_deletion_removes_the_registration_and_appends_one_remove_topic_record():
    s = _formed()
    assert s.ghost.acked
    s, records = _delete(CFG, s)
    assert records == (RemoveTopicRecord((0,)),)
    assert s.quorum.batch_ends[-1] == len(s.quorum.log)      # one batch of its own
    assert s.quorum.partitions == (REMOVED,) and registration(s.quorum, 0) is None
    assert s.controller_partition_states() == (None,)        # no state, as a deleted topic in ZooKeeper
    assert s.zk.assignment == ((),) and s.ghost.deleted_partitions == (0,) and s.ghost.topic_deletions == 1
    assert A.DeleteTopic() not in enabled_actions(CFG, s)   # the topic is gone, and the budget spent


def test_the_elr_and_the_last_known_leader_go_with_the_topic():
    """min.insync.replicas=2: fencing 1 then 2 puts 2 in the ELR, fencing the leader empties the ISR (0 the last
    known leader); the deletion drops all three, and a fenced broker's unfencing then elects nothing."""
    s = _formed(ELR2)
    for b in (1, 2):
        s = _go(ELR2, s, A.HeartbeatsLost(b), A.FenceStaleBroker(b))
    part = s.quorum.partitions[0]
    assert (part.isr, part.elr, part.leader) == ((0,), (2,), 0)
    s = _go(ELR2, s, A.HeartbeatsLost(0), A.FenceStaleBroker(0))
    part = s.quorum.partitions[0]
    assert (part.isr, part.elr, part.last_known_elr, part.leader) == ((), (0, 2), (0,), -1)
    s, _ = _delete(ELR2, s)
    reg = s.quorum.partitions[0]
    assert (reg.replicas, reg.isr, reg.elr, reg.last_known_elr, reg.leader) == ((), (), (), (), -1)
    logged = len(s.quorum.log)
    s = _go(ELR2, _replay(ELR2, s), A.BrokerHeartbeat(2))    # unfenced: no leaderless partition to elect for
    assert not s.quorum.registrations[2].fenced
    assert not any(type(r) is PartitionChangeRecord for r in s.quorum.log[logged:])


def test_a_deleted_partition_is_unknown_to_reassignments_and_elections():
    from isrlab.model.quorum_controller import elect_leader, reassignment_refusal

    s, _ = _delete(CFG, _formed())
    assert reassignment_refusal(CFG, s.quorum, 0, (0, 1)) == E.UNKNOWN_TOPIC_OR_PARTITION
    assert elect_leader(CFG, s, 0, "PREFERRED") == E.UNKNOWN_TOPIC_OR_PARTITION


# --------------------------------------------------------------------------- the brokers
def test_each_replica_deletes_its_log_when_it_replays_the_record():
    s, _ = _delete(CFG, _formed())
    for b in range(3):                                       # nothing happens on a broker before its replay
        assert s.brokers[b].logs[0] is not None and s.brokers[b].logs[0].log_end_offset == 2
    s = _replay(CFG, s, (1,))
    one = s.brokers[1]
    assert one.logs[0] is None and one.partitions[0] is None and one.fetchers[0] is None
    assert one.metadata.partitions[0] is None                 # the topic left its image
    assert s.brokers[0].logs[0] is not None and s.brokers[0].partitions[0].leader == 0   # not replayed yet
    s = _replay(CFG, s)
    for br in s.brokers:
        assert br.logs[0] is None and br.partitions[0] is None and br.fetchers[0] is None
        assert br.hw_checkpoint[0] is None


def test_a_follower_fetching_from_a_leader_that_deleted_the_partition_gets_an_error_and_stops_on_its_replay():
    s, _ = _delete(CFG, _formed())
    s = _replay(CFG, s, (0,))                                # the leader deletes first
    s = _go(CFG, s, A.Produce(0, 0, -1))                     # the leader answers for nothing any more
    assert s.ghost.produced == 2
    s = _fetch(CFG, s, 1)
    assert s.brokers[1].logs[0].log_end_offset == 2          # nothing fetched from a deleted partition
    s = _replay(CFG, s, (1,))
    assert s.brokers[1].fetchers[0] is None and s.brokers[1].logs[0] is None


def test_a_broker_down_at_the_deletion_keeps_its_log_as_a_stray():
    """As a replica removed by a reassignment while down: 3.7.0 deletes on the delta only, and a restarted broker's
    first image is whole (stray logs are deleted from 3.8.0 on)."""
    s = _go(CFG, _formed(), A.ControlledShutdown(2), A.BrokerHeartbeat(2))     # it leads nothing: it stops, fenced
    assert not s.brokers[2].alive
    s, _ = _delete(CFG, s)
    s = _replay(CFG, _go(CFG, s, A.BrokerRestart(2)))
    two = s.brokers[2]
    assert two.alive and two.partitions[0] is None and two.fetchers[0] is None
    assert two.logs[0] is not None and two.logs[0].log_end_offset == 2


# --------------------------------------------------------------------------- an AlterPartition on its way
def _pending_expansion():
    """Follower 2 fenced and unfenced: the leader's expansion of the ISR (0, 1) back to (0, 1, 2) is on its way."""
    s = _go(CFG, _formed(), A.HeartbeatsLost(2), A.FenceStaleBroker(2))
    s = _go(CFG, _replay(CFG, s), A.BrokerHeartbeat(2))
    s = _fetch(CFG, _replay(CFG, s), 2)
    assert s.brokers[0].partitions[0].pending_isr is not None
    return _go(CFG, s, A.AlterIsrRequest(0))


def test_an_alter_partition_in_flight_for_the_deleted_topic_is_answered_unknown_topic_id():
    """validateAlterPartitionData is not reached: alterPartition answers a topic it does not have with
    UNKNOWN_TOPIC_ID (request version > 1, which a 3.7.0 broker sends with topic ids); the leader's callback gives
    up (not retried) and the partition stays pending until its replay deletes it."""
    s, _ = _delete(CFG, _pending_expansion())
    logged = len(s.quorum.log)
    s = _go(CFG, s, A.AlterIsrReceived(0))
    answer = s.brokers[0].alter_isr_inflight.response
    assert answer.error == E.NONE and [(r.partition, r.error) for r in answer.partitions] == [(0, E.UNKNOWN_TOPIC_ID)]
    assert len(s.quorum.log) == logged                       # nothing written
    assert not retriable_alter_isr_error(E.UNKNOWN_TOPIC_ID)
    s = _go(CFG, s, A.AlterIsrResponse(0))
    leader = s.brokers[0]
    assert leader.alter_isr_inflight is None and leader.alter_isr_unsent == ()     # given up, not sent again
    assert leader.partitions[0].pending_isr is not None and leader.partitions[0].isr == (0, 1)   # still pending
    assert s.ghost.errors_seen & E.ERROR_BIT[E.UNKNOWN_TOPIC_ID]
    s = _replay(CFG, s)
    assert s.brokers[0].partitions[0] is None and s.brokers[0].logs[0] is None


def test_an_answer_after_the_leader_deleted_the_partition_changes_nothing():
    s, _ = _delete(CFG, _pending_expansion())
    s = _go(CFG, _replay(CFG, s), A.AlterIsrReceived(0), A.AlterIsrResponse(0))
    assert s.brokers[0].partitions[0] is None and s.brokers[0].alter_isr_unsent == ()


# --------------------------------------------------------------------------- vocabulary, validation and walks
def test_only_the_preset_with_a_budget_offers_deletion_in_kraft():
    kraft = [name for name, p in PRESETS.items() if p.config.kip_500]
    assert [n for n in kraft if A.DeleteTopic in action_kinds(PRESETS[n].config)] == ["kraft-delete-topic"]
    kinds = action_kinds(CFG)
    assert A.ControllerProcessTopicDeletion not in kinds and A.CreateTopic not in kinds   # no znodes in KRaft


# --------------------------------------------------------------------------- creation (CreateTopics, CreatePartitions)
#: kafka-4.1 with the topic's partition 1 not created yet, and one creation allowed
GROW = preset("kafka-4.1").config.replace(n_partitions=2, initial_partitions=1, max_partition_creations=1)


def test_a_partition_not_created_has_no_registration_and_no_record():
    s = initial_state(GROW)
    assert s.quorum.partitions[1] is REMOVED and registration(s.quorum, 1) is None
    assert [r.partition for r in s.quorum.log if type(r) is PartitionChangeRecord] == [0]
    assert s.controller_partition_states()[1] is None and s.zk.assignment[1] == ()
    assert A.CreatePartitions() in enabled_actions(GROW, s) and A.CreateTopic() not in enabled_actions(GROW, s)


def test_create_partitions_writes_a_partition_record_with_the_active_replicas_as_isr():
    """createPartitions with the model's assignment as a manual one (3.7.0): the ISR is the replicas that are active
    (a fenced broker and one in controlled shutdown left out), the first of them leads, epochs 0; the brokers create
    the partition when they replay the record."""
    s = _replay(GROW, initial_state(GROW))
    replicas = topic_assignment(GROW)[1]
    first = replicas[0]
    s = _go(GROW, s, A.HeartbeatsLost(first), A.FenceStaleBroker(first))      # the preferred replica is fenced
    before = len(s.quorum.log)
    s = _go(GROW, s, A.CreatePartitions())
    assert s.quorum.log[before:] == (PartitionChangeRecord(1, s.quorum.partitions[1], True),)
    reg = s.quorum.partitions[1]
    assert reg.replicas == replicas and reg.isr == tuple(sorted(replicas[1:])) and reg.leader == replicas[1]
    assert (reg.leader_epoch, reg.partition_epoch, reg.elr) == (0, 0, ())
    assert s.zk.assignment[1] == replicas and s.ghost.partition_creations == 1
    s = _replay(GROW, s)
    assert s.brokers[replicas[1]].partitions[1].leader == replicas[1]
    assert all(s.brokers[r].logs[1] is not None for r in replicas if s.brokers[r].alive)


def test_a_creation_on_fenced_replicas_only_is_refused_with_no_record():
    """All brokers named by the assignment fenced or in controlled shutdown: the admin's CreatePartitions is sent and
    createPartitions refuses it (InvalidReplicaAssignmentException, 3.7.0): INVALID_REPLICA_ASSIGNMENT, no record, the
    partition still not created; the request counts against the budget."""
    from isrlab.model.quorum_controller import creation_refusal

    cfg = GROW.replace(max_session_expirations=3, max_partition_creations=2)
    s = _replay(cfg, initial_state(cfg))
    for b in range(3):
        s = _go(cfg, s, A.HeartbeatsLost(b), A.FenceStaleBroker(b))
    assert creation_refusal(s.quorum, (0, 1, 2)) == E.INVALID_REPLICA_ASSIGNMENT
    assert creation_refusal(s.quorum, (0, 0)) == creation_refusal(s.quorum, ()) == E.INVALID_REPLICA_ASSIGNMENT
    before = s.quorum.log
    s = _go(cfg, s, A.CreatePartitions())
    assert s.quorum.log is before and s.quorum.partitions[1] is REMOVED and s.zk.assignment[1] == ()
    assert s.ghost.responses.create_partitions[1] == E.INVALID_REPLICA_ASSIGNMENT
    assert s.ghost.errors_seen & E.ERROR_BIT[E.INVALID_REPLICA_ASSIGNMENT] and s.ghost.partition_creations == 1


def test_create_topic_creates_partition_0():
    cfg = preset("kafka-4.1").config.replace(initial_partitions=0, max_partition_creations=1)
    s = initial_state(cfg)
    assert s.quorum.partitions == (REMOVED,) and A.DeleteTopic() not in enabled_actions(cfg, s)
    s = _replay(cfg, _go(cfg, s, A.CreateTopic()))
    reg = s.quorum.partitions[0]
    assert (reg.replicas, reg.isr, reg.leader) == ((0, 1, 2), (0, 1, 2), 0)
    assert s.brokers[0].partitions[0].leader == 0 and s.brokers[1].fetchers[0] is not None


def test_seeded_walks_delete_the_topic_with_every_invariant_holding():
    """The walker on kraft-delete-topic: every invariant holds, and walks delete the topic and brokers delete their
    logs on replay."""
    deletions = log_deletions = 0
    for seed in range(20):
        r = walk(CFG, seed, 400)
        assert not r.violations, (seed, r.violations)
        s = initial_state(CFG)
        for a in r.actions:
            s2 = step(CFG, s, a)
            deletions += type(a) is A.DeleteTopic
            log_deletions += sum(1 for b0, b1 in zip(s.brokers, s2.brokers)
                                 if b0.logs[0] is not None and b1.logs[0] is None and b1.alive)
            s = s2
    assert deletions and log_deletions, (deletions, log_deletions)


def test_the_step_table_and_the_explorer_know_the_record():
    from isrlab.properties.explore import state_key
    from isrlab.properties.steptable import action_words

    s, _ = _delete(CFG, _formed())
    assert action_words(CFG, s, A.DeleteTopic()) == "an admin deletes the topic (DeleteTopics to the controller)"
    assert action_words(CFG, s, A.MetadataApply(1)).endswith("(RemoveTopicRecord p0)")
    s2 = _replay(CFG, s, (1,))
    assert state_key(CFG, s2) != state_key(CFG, s) and state_key(CFG, s) == state_key(CFG, s)


def test_seeded_walks_create_a_partition_and_delete_the_topic_with_every_invariant_holding():
    """kafka-4.1 with partition 1 to create and the topic to delete (in either order: a deleted topic is not created
    again): every invariant holds, and walks create the partition (its leader replays the record) and delete."""
    cfg = GROW.replace(max_topic_deletions=1)
    created = deleted = 0
    for seed in range(20):
        r = walk(cfg, seed, 400)
        assert not r.violations, (seed, r.violations)
        kinds = [type(a) for a in r.actions]
        created += A.CreatePartitions in kinds
        deleted += A.DeleteTopic in kinds
    assert created and deleted, (created, deleted)
