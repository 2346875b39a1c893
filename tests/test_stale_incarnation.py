"""A Fetch and a BrokerHeartbeat from a broker's earlier incarnation (KRaft): sent just before the broker stops, they
stay on their way (``Broker.orphans``) and reach the leader and the quorum controller later (OrphanRequestReceived),
which handle each with the broker epoch it carries and answer nowhere.

Kafka's guards: the controller's ClusterControlManager.checkBrokerEpoch (STALE_BROKER_EPOCH, Kafka 3.5.0) and the
leader's Replica.updateFetchStateOrThrow, which refuses a Fetch whose broker epoch is older than the one its metadata
cache holds for the unfenced follower (KAFKA-15221, 3.7.0), behind which stands Partition.isBrokerEpochIsrEligible
(KIP-903, 3.5.0).  The scenario: follower 1 fetches, stops, comes back on a wiped disk with a new broker epoch and is
unfenced; then its previous incarnation's requests arrive.
"""

from __future__ import annotations

import dataclasses

import pytest

from isrlab.model import actions as A, errors as E
from isrlab.model.actions import action_from_json, action_to_json
from isrlab.model.config import preset
from isrlab.model.encode import encode
from isrlab.model.partition import is_replica_isr_eligible
from isrlab.model.state import OrphanFetch, OrphanHeartbeat
from isrlab.model.step import apply, enabled_actions as enabled, initial_state, step
from isrlab.properties.mutants import installed
from isrlab.properties.steptable import action_words
from test_kip903 import formed
from test_kraft import _fetch_round
from test_stale_alter_partition import _WAITING, _until_fenced

pytestmark = pytest.mark.unit

P = 0
CFG = preset("kafka-4.1-disk-wipe").config
FETCH, HEARTBEAT = A.OrphanRequestReceived(1, "FETCH", P), A.OrphanRequestReceived(1, "BROKER_HEARTBEAT", -1)


def _fetched_then_stopped(cfg, clean: bool):
    """Leader 0 holds two records, follower 1 has fetched both and is about to fetch again; then 1 stops."""
    s = formed(cfg)
    assert s.quorum.partitions[P].leader == 0
    s = apply(cfg, s, A.Produce(0, P, 1))
    s = apply(cfg, s, A.Produce(0, P, 1))
    s = _fetch_round(cfg, s, 1)
    assert s.brokers[1].fetchers[P].fetch_offset == 2
    return apply(cfg, s, A.BrokerCrash(1, clean))


def _caught_up(cfg, s, b: int):
    """b replays the metadata log to its end."""
    while s.brokers[b].metadata_offset < len(s.quorum.log):
        s = apply(cfg, s, A.MetadataApply(b))
    return s


def _back_on_an_empty_disk(cfg):
    """Broker 1 stops, is fenced, loses its disk and comes back with a new broker epoch; it is unfenced, and leader 0
    has replayed all of it: its metadata cache holds 1 unfenced at the new epoch."""
    s = _fetched_then_stopped(cfg, clean=False)
    old = s.brokers[1].orphans
    s = _until_fenced(cfg, s, 1)
    s = apply(cfg, s, A.DiskWipe(1))
    s = apply(cfg, s, A.BrokerRestart(1))
    s = _caught_up(cfg, s, 1)
    s = apply(cfg, s, A.BrokerHeartbeat(1))                     # its registration replayed: unfenced
    s = _caught_up(cfg, s, 0)
    assert 1 in s.brokers[0].metadata.alive_brokers and s.brokers[1].orphans == old
    return s


@pytest.mark.parametrize("clean", [True, False], ids=["clean", "crash"])
def test_a_stopping_broker_leaves_its_fetch_and_heartbeat_on_their_way(clean):
    s = _fetched_then_stopped(CFG, clean)
    fetch, heartbeat = s.brokers[1].orphans
    assert fetch == OrphanFetch(P, 0, 2, 0, 0, 0, s.quorum.registrations[1].epoch)
    assert heartbeat.broker_epoch == fetch.broker_epoch and heartbeat.want_shutdown is False
    assert [a for a in enabled(CFG, s) if type(a) is A.OrphanRequestReceived] == [FETCH, HEARTBEAT]
    assert "before it stopped" in action_words(CFG, s, FETCH)
    assert encode(s.brokers[1])["orphans"] and "orphans" not in encode(s.brokers[0])   # encoded only when some
    assert action_from_json(action_to_json(FETCH)) == FETCH


def test_states_without_orphans_encode_as_before():
    """The new field is left out of the encoding while empty, so the fingerprints of earlier states do not move (as
    are the log-directory fields added after it, tests/test_jbod.py)."""
    br = formed(CFG).brokers[0]
    assert set(encode(br)) == {f.name for f in dataclasses.fields(br)} - {"orphans", "log_dir_of", "offline_dirs",
                                                                          "dir_assignments"}


def test_zookeeper_era_brokers_leave_nothing_on_the_wire():
    cfg = preset("kafka-2.4").config
    s = initial_state(cfg)
    for _ in range(60):
        acts = [a for a in enabled(cfg, s) if type(a) is not A.BrokerCrash]
        s = apply(cfg, s, acts[0])
    s = apply(cfg, s, A.BrokerCrash(1, False))
    assert s.brokers[1].orphans == ()
    assert step(cfg, s, HEARTBEAT) is None


def test_a_granted_shutdown_leaves_no_heartbeat_behind():
    """A broker stops cleanly as the answer to its heartbeat: that heartbeat was its only one in flight."""
    s = formed(CFG)
    s = apply(CFG, s, A.ControlledShutdown(2))                 # 2 leads nothing: its next heartbeat is answered
    for _ in range(20):
        if not s.brokers[2].alive:
            break
        acts = enabled(CFG, s)
        hb = A.BrokerHeartbeat(2)
        s = apply(CFG, s, hb if hb in acts else next(a for a in acts if type(a) in (A.Tick, A.MetadataApply)))
    assert not s.brokers[2].alive
    assert not any(type(o) is OrphanHeartbeat for o in s.brokers[2].orphans)


def test_the_controller_answers_an_earlier_incarnations_heartbeat_stale_broker_epoch():
    s = _back_on_an_empty_disk(CFG)
    hb = s.brokers[1].orphans[-1]
    assert type(hb) is OrphanHeartbeat and hb.broker_epoch < s.quorum.registrations[1].epoch
    s2 = apply(CFG, s, HEARTBEAT)
    assert s2.quorum == s.quorum                                  # checkBrokerEpoch: nothing touched
    assert s2.ghost.errors_seen & E.ERROR_BIT[E.STALE_BROKER_EPOCH]
    assert HEARTBEAT not in enabled(CFG, s2) and s2.brokers[1].orphans == s.brokers[1].orphans[:-1]
    with installed("heartbeat-any-broker-epoch"):
        s3 = apply(CFG, s, HEARTBEAT)
    # without the check the old incarnation's heartbeat passes for the new one's: it reports the old metadata offset
    assert s3.quorum.reported_offsets[1] == hb.metadata_offset != s.quorum.reported_offsets[1]


def test_before_it_registers_again_its_heartbeat_is_its_registrations():
    """While the stopped broker still holds its registration the heartbeat is accepted (it keeps the session), as
    Kafka's controller would."""
    s = _fetched_then_stopped(CFG, clean=False)
    start = s.now
    while s.now == start:                                       # time passes, the scheduled tasks run
        s = apply(CFG, s, next(a for a in enabled(CFG, s) if type(a) in _WAITING))
    s2 = apply(CFG, s, HEARTBEAT)
    assert s2.quorum.last_contact_ms[1] == s.now > s.quorum.last_contact_ms[1]


def test_the_leader_refuses_an_earlier_incarnations_fetch_without_touching_the_followers_state():
    s = _back_on_an_empty_disk(CFG)
    fetch = s.brokers[1].orphans[0]
    assert type(fetch) is OrphanFetch and s.brokers[1].logs[P].log_end_offset < fetch.fetch_offset
    before = s.brokers[0].partitions[P].remote(1)
    s2 = apply(CFG, s, FETCH)
    assert s2.brokers[0].partitions[P].remote(1) == before      # Replica.updateFetchStateOrThrow threw
    assert s2.ghost.errors_seen & E.ERROR_BIT[E.NOT_LEADER_FOR_PARTITION]
    assert FETCH not in enabled(CFG, s2)


def test_without_the_fence_the_stale_epoch_is_recorded_and_keeps_the_follower_out_of_the_isr():
    """Before KAFKA-15221 (3.5.x, 3.6.x) the Fetch updates the follower's state with the old incarnation's epoch and
    offset; KIP-903's isBrokerEpochIsrEligible then keeps it out of the ISR, and the mutant that drops that check
    proposes it, which the controller refuses (INELIGIBLE_REPLICA): the epochs differ."""
    cfg = CFG.replace(kafka_15221=False)
    s = _back_on_an_empty_disk(cfg)
    fetch = s.brokers[1].orphans[0]
    s2 = apply(cfg, s, FETCH)
    r = s2.brokers[0].partitions[P].remote(1)
    assert (r.broker_epoch, r.log_end_offset) == (fetch.broker_epoch, fetch.fetch_offset)
    assert not is_replica_isr_eligible(cfg, s2.brokers[0], r)
    assert s2.brokers[0].alter_isr_unsent == ()
    with installed("isr-eligible-any-broker-epoch"):
        s3 = apply(cfg, s, FETCH)
        (item,) = s3.brokers[0].alter_isr_unsent                # the leader proposes the empty replica ...
        assert 1 in item.request.new_isr
        s3 = apply(cfg, s3, A.AlterIsrRequest(0))
        s3 = apply(cfg, s3, A.AlterIsrReceived(0))
    assert s3.brokers[0].alter_isr_inflight.response.partitions[0].error == E.INELIGIBLE_REPLICA   # ... refused


def test_without_the_check_an_earlier_incarnations_shutdown_request_fences_the_new_one():
    """The earlier incarnation had asked to shut down (ControlledShutdown) and stopped before the controller let it:
    its last heartbeat carries wantShutDown.  Refused with the check; without it, the new, unfenced incarnation, which
    leads nothing, is told to shut down and fenced (SHUTDOWN_NOW), as a lost session would fence it."""
    s = formed(CFG)
    s = apply(CFG, s, A.ControlledShutdown(1))
    s = apply(CFG, s, A.BrokerCrash(1, False))
    assert s.brokers[1].orphans[-1].want_shutdown
    s = _until_fenced(CFG, s, 1)
    s = _caught_up(CFG, apply(CFG, s, A.BrokerRestart(1)), 1)
    s = apply(CFG, s, A.BrokerHeartbeat(1))
    assert not s.quorum.registrations[1].fenced
    assert apply(CFG, s, HEARTBEAT).quorum.registrations == s.quorum.registrations
    with installed("heartbeat-any-broker-epoch"):
        s2 = apply(CFG, s, HEARTBEAT)
    assert s2.quorum.registrations[1].fenced and s2.brokers[1].alive
