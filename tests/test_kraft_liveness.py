"""The KRaft properties: metadata_log_matching (safety), eventually_unfenced, metadata_converges and
acked_fully_replicated (liveness, checked by the settling phase and the explorer's lasso check)."""

from __future__ import annotations

import random

from conftest import drive
from isrlab.model import actions as A
from isrlab.model import step as step_module
from isrlab.model.config import preset
from isrlab.model.state import MetadataCache
from isrlab.model.step import enabled_actions, initial_state, step
from isrlab.properties.invariants import BY_NAME, LIVENESS_BY_NAME, check_transition
from isrlab.properties.settle import settle

KRAFT = preset("kafka-3.7").config
ZK = preset("kafka-2.4").config
MATCHING = (BY_NAME["metadata_log_matching"],)




def _pending(name, cfg, s):
    return any(LIVENESS_BY_NAME[name].pending(cfg, s, p) for p in range(cfg.n_partitions))


def test_metadata_log_matching_holds_on_random_kraft_walks():
    rng = random.Random(5)
    for _ in range(10):
        s = initial_state(KRAFT)
        for i in range(200):
            acts = enabled_actions(KRAFT, s)
            a = acts[rng.randrange(len(acts))]
            s2 = step(KRAFT, s, a)
            assert check_transition(KRAFT, s, a, s2, i + 1, invariants=MATCHING) == []
            s = s2


def test_metadata_log_matching_catches_a_cache_that_is_not_the_replay_of_its_prefix():
    s = drive(KRAFT, initial_state(KRAFT), *[A.MetadataApply(0)] * 4)
    assert s.brokers[0].metadata_offset == 4
    bad = s._clone(object())
    bad.broker_mut(0).metadata = MetadataCache()                    # forgot what it applied
    v = check_transition(KRAFT, s, A.Tick(1), bad, 5, invariants=MATCHING)
    assert [x.facts["problem"] for x in v] == ["metadata cache is not the replay of the applied records"]
    bad = s._clone(object())
    bad.broker_mut(0).metadata_offset = len(s.quorum.log) + 1       # past the log's end
    v = check_transition(KRAFT, s, A.Tick(1), bad, 5, invariants=MATCHING)
    assert [x.facts["problem"] for x in v] == ["applied offset outside the log's batches"]
    bad = s._clone(object())
    q = bad.quorum_mut()
    q.log = q.log[:-1] + (q.log[0],)                                # the log rewritten below its end
    v = check_transition(KRAFT, s, A.Tick(1), bad, 5, invariants=MATCHING)
    assert [x.facts["problem"] for x in v] == ["the metadata log changed below its end"]


def test_metadata_converges_is_pending_while_a_broker_lags_and_settles():
    s = initial_state(KRAFT)
    assert _pending("metadata_converges", KRAFT, s)                 # no broker has replayed anything yet
    assert not _pending("metadata_converges", ZK, initial_state(ZK))  # a KRaft property
    r = settle(KRAFT, s, names=("metadata_converges",))
    assert r.settled and not _pending("metadata_converges", KRAFT, r.state)
    assert all(br.metadata_offset == len(r.state.quorum.log) for br in r.state.brokers)


def test_eventually_unfenced_is_pending_for_a_live_fenced_broker_and_settles():
    s = settle(KRAFT, initial_state(KRAFT)).state
    s = drive(KRAFT, s, *[A.HeartbeatsLost(1), A.FenceStaleBroker(1)])
    assert s.brokers[1].alive and s.quorum.registrations[1].fenced
    assert _pending("eventually_unfenced", KRAFT, s)
    r = settle(KRAFT, s, names=("eventually_unfenced",))
    assert r.settled and not r.state.quorum.registrations[1].fenced


def test_eventually_unfenced_fails_when_heartbeats_never_unfence(monkeypatch):
    s = settle(KRAFT, initial_state(KRAFT)).state
    s = drive(KRAFT, s, *[A.HeartbeatsLost(1), A.FenceStaleBroker(1)])
    monkeypatch.setattr(step_module, "heartbeat", lambda cfg, st, b: None)   # a mutant: heartbeats go nowhere
    r = settle(KRAFT, s, names=("eventually_unfenced",))
    assert not r.settled and [v.invariant for v in r.violations] == ["eventually_unfenced"]


def test_acked_fully_replicated_is_pending_while_an_isr_follower_lacks_an_acked_record():
    s = settle(KRAFT, initial_state(KRAFT)).state
    s = drive(KRAFT, s, *[A.Produce(0, 0, -1)])
    r = settle(KRAFT, s)                                            # produce_completes: until it is acknowledged
    assert r.settled and r.state.ghost.acked
    done = r.state
    assert not _pending("acked_fully_replicated", KRAFT, done)
    follower = next(b for b in done.quorum.partitions[0].isr if b != done.quorum.partitions[0].leader)
    bad = done._clone(object())
    log = bad.broker_mut(follower).log_mut(0)
    log.entries = ()                                                # the follower no longer holds it
    assert _pending("acked_fully_replicated", KRAFT, bad)


