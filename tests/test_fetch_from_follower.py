"""KIP-392 (Kafka 2.4.0): consumers with ClientMetadata read from followers; the leader's replica selector."""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model.config import ConfigError, preset
from isrlab.model.fetch_from_follower import rack_aware_select
from isrlab.model.step import action_kinds, apply, enabled_actions, initial_state, step
from isrlab.properties.walker import walk

pytestmark = pytest.mark.unit

LEADER = (0, "rack-a", 5, 0)


def test_the_rack_aware_selector_keeps_the_leader_without_a_client_rack_or_a_replica_in_it():
    followers = [(1, "rack-b", 5, 0), (2, "rack-c", 5, 0)]
    assert rack_aware_select("", followers + [LEADER], LEADER) == LEADER
    assert rack_aware_select("rack-z", followers + [LEADER], LEADER) == LEADER
    assert rack_aware_select("rack-a", followers + [LEADER], LEADER) == LEADER     # the leader is in the rack


def test_the_rack_aware_selector_takes_the_most_caught_up_replica_of_the_clients_rack():
    """ReplicaView.comparator: the largest LEO, then the shortest time since caught up, then the largest id."""
    views = [(1, "rack-b", 4, 0), (2, "rack-b", 5, 900), (3, "rack-b", 5, 100), LEADER]
    assert rack_aware_select("rack-b", views, LEADER) == (3, "rack-b", 5, 100)
    views = [(1, "rack-b", 5, 100), (2, "rack-b", 5, 100), LEADER]
    assert rack_aware_select("rack-b", views, LEADER) == (2, "rack-b", 5, 100)


def _cluster(**changes):
    """fetch-from-follower with broker 2 as the controller and every broker caught up on 2 records."""
    cfg = preset("fetch-from-follower").config.replace(**changes)
    s = initial_state(cfg)
    s = apply(cfg, s, A.ElectController(0))
    for _ in range(200):
        pending = [a for a in enabled_actions(cfg, s) if type(a) in (A.DeliverControlRequest,)]
        if not pending:
            break
        s = apply(cfg, s, pending[0])
    leader = s.zk.partition_states[0].leader
    for _ in range(2):
        s = apply(cfg, s, A.Produce(leader, 0, 1))
    for _ in range(3):
        for b in range(cfg.n_brokers):
            for kind in (A.OffsetsForLeaderEpoch, A.FetchRequest, A.FetchResponse):
                s2 = step(cfg, s, kind(b, 0))
                s = s2 if s2 is not None else s
    return cfg, s, leader


def test_a_follower_serves_a_consumer_with_client_metadata_up_to_its_own_hw():
    cfg, s, leader = _cluster()
    follower = next(b for b in range(cfg.n_brokers) if b != leader)
    hw = s.brokers[follower].logs[0].high_watermark
    assert hw == 2
    s = apply(cfg, s, A.ConsumerFetchWithClientMetadata(follower, 0))
    r = s.ghost.responses.consumer_fetch[follower][0]
    assert (r.error, len(r.entries), r.high_watermark, r.preferred_read_replica) == ("NONE", hw, hw, -1)
    s = apply(cfg, s, A.ConsumerFetch(follower, 0))        # an older client: the leader only
    assert s.ghost.responses.consumer_fetch[follower][0].error == "NOT_LEADER_FOR_PARTITION"


def test_the_leader_points_a_consumer_at_a_replica_in_its_rack_with_no_records():
    cfg, s, leader = _cluster()
    other = next(b for b in range(cfg.n_brokers) if b != leader)
    s = apply(cfg, s, A.ConsumerFetchWithClientMetadata(leader, 0, -1, cfg.racks[other]))
    r = s.ghost.responses.consumer_fetch[leader][0]
    assert (r.error, r.entries, r.preferred_read_replica) == ("NONE", (), other)
    s = apply(cfg, s, A.ConsumerFetchWithClientMetadata(leader, 0, -1, cfg.racks[leader]))
    r = s.ghost.responses.consumer_fetch[leader][0]
    assert (r.preferred_read_replica, len(r.entries)) == (-1, 2)
    cfg2 = cfg.replace(replica_selector="")                 # Kafka's default: no selector, the leader serves
    s = apply(cfg2, s, A.ConsumerFetchWithClientMetadata(leader, 0, -1, cfg.racks[other]))
    assert s.ghost.responses.consumer_fetch[leader][0].preferred_read_replica == -1


def test_a_replica_the_leader_knows_dead_is_never_preferred():
    """getPartitionReplicaEndpoints names live brokers only: once the controller's UpdateMetadata says a replica
    is gone, the selector cannot pick it even for a client in its rack."""
    cfg, s, leader = _cluster()
    other = next(b for b in range(cfg.n_brokers) if b not in (leader, 0))     # broker 0 is the controller
    for a in (A.BrokerCrash(other, False), A.ZkSessionExpire(other), A.ControllerProcessBrokerChange(0)):
        s = apply(cfg, s, a)
    while (d := next((a for a in enabled_actions(cfg, s) if type(a) is A.DeliverControlRequest), None)) is not None:
        s = apply(cfg, s, d)
    assert other not in s.brokers[leader].metadata.alive_brokers
    s = apply(cfg, s, A.ConsumerFetchWithClientMetadata(leader, 0, -1, cfg.racks[other]))
    assert s.ghost.responses.consumer_fetch[leader][0].preferred_read_replica == -1


def test_the_engines_offer_the_kind_only_with_the_flag():
    assert A.ConsumerFetchWithClientMetadata in action_kinds(preset("fetch-from-follower").config)
    assert A.ConsumerFetchWithClientMetadata not in action_kinds(preset("kafka-2.4").config)


def test_a_bad_selector_is_a_config_error():
    with pytest.raises(ConfigError, match="replica_selector"):
        preset("kafka-2.4").config.replace(replica_selector="closest")


def test_reads_from_followers_are_never_lost_in_random_walks():
    """The catalogue (consumer_safety above all) holds along walks that read from followers."""
    cfg = preset("fetch-from-follower").config
    served = 0
    for seed in range(6):
        w = walk(cfg, seed, 400, swarm=False)
        assert w.violation is None, (seed, w.violation)
        served += sum(type(a) is A.ConsumerFetchWithClientMetadata for a in w.actions)
    assert served > 0
