"""ElectLeaders in KRaft (KIP-460; ReplicationControlManager.electLeaders, Kafka 3.7.0): an admin's request, forwarded
by a broker to the quorum controller, elects the preferred replica (PREFERRED) or any acceptable replica of a
leaderless partition (UNCLEAN); the controller's record goes to the metadata log and the brokers replay it.

Each test starts from a metadata image (model/kraft_start.py) that puts the partition where the election matters.
"""

from __future__ import annotations

import pytest

from isrlab.model import actions as A
from isrlab.model import errors as E
from isrlab.model.config import PRESETS, preset
from isrlab.model.state import NO_LEADER, PartitionChangeRecord
from isrlab.model.step import action_kinds, initial_state, step
from conftest import drive

pytestmark = pytest.mark.unit

#: kafka-4.1 (the ELR on) with room for several elections
ELR = preset("kraft-elect-leaders").config.replace(max_preferred_elections=5)
#: kafka-3.7 (the ELR off) with ElectLeaders
NO_ELR = preset("kafka-3.7").config.replace(max_preferred_elections=5)


def _start(part: dict, fenced=()) -> dict:
    regs = [{"broker": b, "fenced": True} for b in fenced]
    return {"kraft": {"registrations": regs, "partitions": [{"partition": 0, **part}]}}


def _replay_all(cfg, s):
    """Every live broker replays the whole metadata log."""
    for br in s.brokers:
        while s.brokers[br.broker_id].alive and s.brokers[br.broker_id].metadata_offset < len(s.quorum.log):
            s = drive(cfg, s, A.MetadataApply(br.broker_id))
    return s


def _elect(cfg, s, election_type, broker=2):
    """ElectLeaders for partition 0 through ``broker``: (the state after it, its response, the records it appended)."""
    before = len(s.quorum.log)
    s = drive(cfg, s, A.ElectLeaders(broker, 0, election_type))
    return s, s.ghost.responses.elect_leaders[broker][0], s.quorum.log[before:]


# --------------------------------------------------------------------------- PREFERRED
@pytest.mark.parametrize("cfg", [ELR, NO_ELR], ids=["elr", "no-elr"])
def test_a_preferred_election_moves_leadership_back_to_the_preferred_replica(cfg):
    s = _replay_all(cfg, initial_state(cfg, _start({"leader": 1, "leader_epoch": 3, "partition_epoch": 5,
                                                    "isr": [0, 1, 2]})))
    s, error, records = _elect(cfg, s, "PREFERRED")
    assert error == E.NONE
    assert len(records) == 1 and type(records[0]) is PartitionChangeRecord
    reg = records[0].registration
    assert (reg.leader, reg.leader_epoch, reg.partition_epoch, reg.isr) == (0, 4, 6, (0, 1, 2))
    assert reg.leader_recovery_state == "RECOVERED" and s.ghost.unclean_elections == 0
    s = _replay_all(cfg, s)
    assert (s.brokers[0].partitions[0].leader, s.brokers[0].partitions[0].leader_epoch) == (0, 4)
    assert s.brokers[1].partitions[0].leader == 0 and s.brokers[1].partitions[0].leader_epoch == 4


def test_a_preferred_election_is_not_needed_while_the_preferred_replica_leads():
    s = initial_state(ELR)                                   # the formed cluster: replica 0 leads
    s, error, records = _elect(ELR, s, "PREFERRED", broker=1)
    assert error == E.ELECTION_NOT_NEEDED and records == ()
    assert s.ghost.preferred_elections == 1                  # the admin's budget is spent all the same


@pytest.mark.parametrize("fenced", [(0,), ()], ids=["preferred-fenced", "preferred-out-of-isr"])
def test_no_preferred_leader_when_the_preferred_replica_is_fenced_or_out_of_the_isr(fenced):
    s = initial_state(ELR, _start({"leader": 1, "leader_epoch": 3, "partition_epoch": 5, "isr": [1, 2]}, fenced))
    s, error, records = _elect(ELR, s, "PREFERRED")
    assert error == E.PREFERRED_LEADER_NOT_AVAILABLE and records == ()
    assert s.quorum.partitions[0].leader == 1 and s.quorum.partitions[0].leader_epoch == 3


def test_a_preferred_election_of_a_leaderless_partition_is_never_unclean():
    """ReplicationControlManagerTest.testPreferredElectionDoesNotTriggerUncleanElection's point: PREFERRED on a
    partition whose ISR and ELR hold no active broker elects nobody, though active replicas are out of sync."""
    s = initial_state(ELR, _start({"leader": NO_LEADER, "leader_epoch": 3, "partition_epoch": 5, "isr": [],
                                   "elr": [1]}, fenced=(1,)))
    s, error, records = _elect(ELR, s, "PREFERRED")
    assert error == E.PREFERRED_LEADER_NOT_AVAILABLE and records == ()
    assert s.ghost.unclean_elections == 0


# --------------------------------------------------------------------------- UNCLEAN
def test_an_unclean_election_is_not_needed_while_the_partition_has_a_leader():
    s = initial_state(NO_ELR, _start({"leader": 1, "leader_epoch": 3, "partition_epoch": 5, "isr": [1]}))
    s, error, records = _elect(NO_ELR, s, "UNCLEAN")
    assert error == E.ELECTION_NOT_NEEDED and records == ()


def test_an_unclean_election_elects_an_out_of_sync_replica_of_a_leaderless_partition():
    s = initial_state(NO_ELR, _start({"leader": NO_LEADER, "leader_epoch": 3, "partition_epoch": 5, "isr": [0]},
                                     fenced=(0,)))
    s, error, records = _elect(NO_ELR, s, "UNCLEAN")
    assert error == E.NONE and len(records) == 1
    reg = records[0].registration
    assert (reg.leader, reg.isr, reg.leader_epoch, reg.leader_recovery_state) == (1, (1,), 4, "RECOVERING")
    assert s.ghost.unclean_elections == 1 and s.ghost.unclean[0].leader == 1
    s = _replay_all(NO_ELR, s)
    assert s.brokers[1].partitions[0].leader == 1 and s.brokers[1].partitions[0].leader_epoch == 4


def test_no_eligible_leader_when_no_replica_is_acceptable():
    s = initial_state(NO_ELR, _start({"leader": NO_LEADER, "leader_epoch": 3, "partition_epoch": 5, "isr": [0]},
                                     fenced=(0, 1, 2)))
    s, error, records = _elect(NO_ELR, s, "UNCLEAN")
    assert error == E.ELIGIBLE_LEADERS_NOT_AVAILABLE and records == ()
    assert s.ghost.unclean_elections == 0


def test_an_unclean_election_with_the_elr_clears_it():
    s = initial_state(ELR, _start({"leader": NO_LEADER, "leader_epoch": 3, "partition_epoch": 5, "isr": [],
                                   "elr": [1]}, fenced=(1,)))
    s, error, records = _elect(ELR, s, "UNCLEAN")
    assert error == E.NONE and len(records) == 1
    reg = records[0].registration
    assert (reg.leader, reg.isr, reg.elr, reg.leader_recovery_state) == (0, (0,), (), "RECOVERING")
    assert reg.leader_epoch == 4 and s.ghost.unclean_elections == 1


def test_an_unclean_election_prefers_the_acceptable_last_known_leader():
    """electAnyLeader's canElectLastKnownLeader (KAFKA-19522): with the ISR and ELR empty, the last known leader
    before the first acceptable replica in replica order."""
    s = initial_state(ELR, _start({"leader": NO_LEADER, "leader_epoch": 3, "partition_epoch": 5, "isr": [],
                                   "last_known_elr": [2]}, fenced=(0,)))
    s, error, records = _elect(ELR, s, "UNCLEAN", broker=1)
    assert error == E.NONE and records[0].registration.leader == 2


# --------------------------------------------------------------------------- vocabulary and gates
def test_the_election_type_is_left_out_of_the_json_at_its_default():
    assert A.action_to_json(A.ElectLeaders(1, 0)) == {"type": "ElectLeaders", "broker": 1, "partition": 0}
    unclean = A.ElectLeaders(1, 0, "UNCLEAN")
    assert A.action_from_json(A.action_to_json(unclean)) == unclean
    assert A.describe(A.ElectLeaders(1, 0)) == "ElectLeaders(broker=1, partition=0)"
    with pytest.raises(A.ActionError, match="election_type must be one of PREFERRED, UNCLEAN"):
        A.action_from_json({"type": "ElectLeaders", "broker": 1, "partition": 0, "election_type": "ONLINE"})


def test_the_zookeeper_era_takes_only_preferred_elections():
    cfg = preset("leader-moves").config
    s = initial_state(cfg)
    assert step(cfg, s, A.ElectLeaders(0, 0, "UNCLEAN")) is None
    assert step(cfg, s, A.ElectLeaders(0, 0)) is not None


def test_kraft_offers_elect_leaders_only_with_its_budget():
    kraft = [name for name, p in PRESETS.items() if p.config.kip_500]
    offering = [name for name in kraft if A.ElectLeaders in action_kinds(PRESETS[name].config)]
    assert offering == ["kraft-elect-leaders"]
