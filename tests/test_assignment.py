"""Tests of model.assignment against Kafka 2.4.0's AdminUtils replica assignment.

The exact expectations are re-expressed from Kafka's own tests (AdminTest,
AdminRackAwareTest with RackAwareTest.checkReplicaDistribution, AddPartitionsTest)
and from AdminUtils' scaladoc; the property tests cover the invariants those
tests check, over generated clusters.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Mapping

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isrlab.model.assignment import (
    AssignmentError,
    BrokerMetadata,
    assign_replicas_to_brokers,
    assign_replicas_to_brokers_rack_aware,
    assign_replicas_to_brokers_rack_unaware,
    draw_random_start,
    rack_alternated_broker_list,
    replica_index,
    to_partition_map,
)

pytestmark = pytest.mark.unit

PROPERTY_SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def to_broker_metadata(rack_map: Mapping[int, str]) -> tuple[BrokerMetadata, ...]:
    """RackAwareTest.toBrokerMetadata: every broker of the map, with its rack."""
    return tuple(BrokerMetadata(broker, rack) for broker, rack in rack_map.items())


def check_replica_distribution(
    assignment,
    rack_map: Mapping[int, str],
    n_brokers: int,
    n_partitions: int,
    replication_factor: int,
    *,
    verify_rack_aware: bool = True,
    verify_leader_distribution: bool = True,
    verify_replicas_distribution: bool = True,
) -> None:
    """RackAwareTest.checkReplicaDistribution (Kafka 2.4.0), same switches and assertions."""
    assert len(assignment) == n_partitions
    for replicas in assignment:
        assert len(set(replicas)) == len(replicas), "more than one replica on the same broker"
    if verify_rack_aware:
        assert [len({rack_map[b] for b in replicas}) for replicas in assignment] == [replication_factor] * n_partitions
    if verify_leader_distribution:
        leaders = Counter(replicas[0] for replicas in assignment)
        assert sorted(leaders.values()) == [n_partitions // n_brokers] * n_brokers
    if verify_replicas_distribution:
        counts = Counter(b for replicas in assignment for b in replicas)
        assert sorted(counts.values()) == [n_partitions * replication_factor // n_brokers] * n_brokers


def every_start(n_brokers: int):
    """Every (startIndex, nextReplicaShift) Kafka's rand.nextInt(n) can draw, instead of one random pair."""
    return [(s, k) for s in range(n_brokers) for k in range(n_brokers)]


# ---------------------------------------------------------------------------
# Exact assignments from Kafka's tests and scaladoc
# ---------------------------------------------------------------------------


def test_admin_test_replica_assignment_five_brokers():
    # AdminTest.testReplicaAssignment: 5 brokers without racks, 10 partitions, RF 3, fixedStartIndex 0.
    brokers = tuple(BrokerMetadata(i, None) for i in range(5))
    expected = {
        0: (0, 1, 2),
        1: (1, 2, 3),
        2: (2, 3, 4),
        3: (3, 4, 0),
        4: (4, 0, 1),
        5: (0, 2, 3),
        6: (1, 3, 4),
        7: (2, 4, 0),
        8: (3, 0, 1),
        9: (4, 1, 2),
    }
    assignment = assign_replicas_to_brokers(10, 3, brokers, 0)
    assert to_partition_map(assignment) == expected
    # Plain ids work the same as rack-less metadata.
    assert assign_replicas_to_brokers(10, 3, tuple(range(5)), 0) == assignment


@pytest.mark.parametrize("replication_factor", [0, 6])
def test_admin_test_replica_assignment_bad_replication_factor(replication_factor):
    # AdminTest.testReplicaAssignment: RF 0 and RF 6 > 5 brokers are InvalidReplicationFactorException.
    brokers = tuple(BrokerMetadata(i, None) for i in range(5))
    with pytest.raises(AssignmentError, match="replication factor"):
        assign_replicas_to_brokers(10, replication_factor, brokers, 0)


def test_admin_utils_scaladoc_table():
    # AdminUtils scaladoc: brokers 0..4, p0..p9, first/second/third replica rows.
    assignment = assign_replicas_to_brokers(10, 3, tuple(range(5)), 0)
    first_row = {b: [p for p, r in enumerate(assignment) if r[0] == b] for b in range(5)}
    second_row = {b: [p for p, r in enumerate(assignment) if r[1] == b] for b in range(5)}
    third_row = {b: [p for p, r in enumerate(assignment) if r[2] == b] for b in range(5)}
    assert first_row == {0: [0, 5], 1: [1, 6], 2: [2, 7], 3: [3, 8], 4: [4, 9]}
    assert second_row == {0: [4, 8], 1: [0, 9], 2: [1, 5], 3: [2, 6], 4: [3, 7]}
    assert third_row == {0: [3, 7], 1: [4, 8], 2: [0, 9], 3: [1, 5], 4: [2, 6]}


def test_rack_alternated_list_and_rack_aware_assignment():
    # AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers.
    rack_map = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_broker_list(rack_map) == (0, 3, 1, 5, 4, 2)
    without_5 = {b: r for b, r in rack_map.items() if b != 5}
    assert rack_alternated_broker_list(without_5) == (0, 3, 1, 4, 2)
    assignment = assign_replicas_to_brokers(7, 3, to_broker_metadata(rack_map), 0, 0)
    assert to_partition_map(assignment) == {
        0: (0, 3, 1),
        1: (3, 1, 5),
        2: (1, 5, 4),
        3: (5, 4, 2),
        4: (4, 2, 0),
        5: (2, 0, 3),
        6: (0, 4, 2),
    }


def test_rack_alternated_list_scaladoc_example():
    # AdminUtils.getRackAlternatedBrokerList scaladoc: three racks of three brokers.
    rack_map = {0: "rack1", 1: "rack1", 2: "rack1", 3: "rack2", 4: "rack2", 5: "rack2", 6: "rack3", 7: "rack3", 8: "rack3"}
    assert rack_alternated_broker_list(rack_map) == (0, 3, 6, 1, 4, 7, 2, 5, 8)


def test_rack_alternated_list_uneven_racks_and_empty():
    assert rack_alternated_broker_list({}) == ()
    # rack "a": 1, 4, 9; rack "b": 7; rack "c": 2, 3 -> rows (1, 7, 2), (4, 3), (9,)
    assert rack_alternated_broker_list({9: "a", 4: "a", 1: "a", 7: "b", 3: "c", 2: "c"}) == (1, 7, 2, 4, 3, 9)


def test_rack_names_sorted_like_java_strings():
    # java.lang.String.compareTo orders by UTF-16 code unit: U+FF21 (one unit 0xFF21)
    # sorts after U+1F600 (surrogate pair 0xD83D 0xDE00), unlike Python's code-point order.
    rack_map = {0: "\uff21", 1: "\U0001f600"}
    assert rack_alternated_broker_list(rack_map) == (1, 0)


def test_skip_broker_with_replica_already_assigned():
    # AdminRackAwareTest.testSkipBrokerWithReplicaAlreadyAssigned: 3 racks, RF 4, fixedStartIndex 2.
    rack_info = {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}
    brokers = to_broker_metadata(rack_info)
    assert [b.id for b in brokers] == list(range(5))
    assignment = assign_replicas_to_brokers(6, 4, brokers, 2)
    check_replica_distribution(
        assignment, rack_info, 5, 6, 4,
        verify_rack_aware=False, verify_leader_distribution=False, verify_replicas_distribution=False,
    )
    # Worked by hand from the algorithm: partition 2's leader is broker 4 (rack a);
    # 2 (rack c) is taken, 3 and 0 are skipped (rack a taken, rack b free), then 1,
    # then every rack has a replica and 2 is skipped as already used, so 3.
    assert assignment == ((2, 0, 1, 3), (3, 1, 2, 4), (4, 2, 1, 3), (0, 1, 2, 3), (1, 4, 2, 3), (2, 4, 1, 3))


EVEN_RACKS = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}


def test_assignment_with_rack_aware():
    # AdminRackAwareTest.testAssignmentWithRackAware: fixedStartIndex 2.
    assignment = assign_replicas_to_brokers(6, 3, to_broker_metadata(EVEN_RACKS), 2, 0)
    check_replica_distribution(assignment, EVEN_RACKS, 6, 6, 3)


@pytest.mark.parametrize(("start", "shift"), every_start(6))
def test_assignment_with_rack_aware_with_random_start_index(start, shift):
    # AdminRackAwareTest.testAssignmentWithRackAwareWithRandomStartIndex, over every draw.
    assignment = assign_replicas_to_brokers(6, 3, to_broker_metadata(EVEN_RACKS), start, 0, shift)
    check_replica_distribution(assignment, EVEN_RACKS, 6, 6, 3)


def test_assignment_with_rack_aware_with_uneven_replicas():
    # AdminRackAwareTest.testAssignmentWithRackAwareWithUnevenReplicas: 13 partitions, fixedStartIndex 0.
    assignment = assign_replicas_to_brokers(13, 3, to_broker_metadata(EVEN_RACKS), 0, 0)
    check_replica_distribution(
        assignment, EVEN_RACKS, 6, 13, 3, verify_leader_distribution=False, verify_replicas_distribution=False
    )


@pytest.mark.parametrize(("start", "shift"), every_start(6))
def test_assignment_with_rack_aware_with_uneven_racks(start, shift):
    # AdminRackAwareTest.testAssignmentWithRackAwareWithUnevenRacks: racks of 3, 1 and 2 brokers.
    rack_map = {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
    assignment = assign_replicas_to_brokers(12, 3, to_broker_metadata(rack_map), start, 0, shift)
    check_replica_distribution(assignment, rack_map, 6, 12, 3, verify_replicas_distribution=False)


@pytest.mark.parametrize(("start", "shift"), every_start(6))
def test_assignment_with_2_replicas_rack_aware(start, shift):
    # AdminRackAwareTest.testAssignmentWith2ReplicasRackAware.
    assignment = assign_replicas_to_brokers(12, 2, to_broker_metadata(EVEN_RACKS), start, 0, shift)
    check_replica_distribution(assignment, EVEN_RACKS, 6, 12, 2)


@pytest.mark.parametrize(("start", "shift"), every_start(6))
def test_rack_aware_expansion(start, shift):
    # AdminRackAwareTest.testRackAwareExpansion: brokers 6..11, startPartitionId 12.
    rack_map = {6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack3", 11: "rack1"}
    assignment = assign_replicas_to_brokers(12, 2, to_broker_metadata(rack_map), start, 12, shift)
    check_replica_distribution(assignment, rack_map, 6, 12, 2)
    assert sorted(to_partition_map(assignment, 12)) == list(range(12, 24))


@pytest.mark.parametrize(("start", "shift"), every_start(6))
def test_assignment_with_2_replicas_rack_aware_with_6_partitions(start, shift):
    # AdminRackAwareTest.testAssignmentWith2ReplicasRackAwareWith6Partitions.
    assignment = assign_replicas_to_brokers(6, 2, to_broker_metadata(EVEN_RACKS), start, 0, shift)
    check_replica_distribution(assignment, EVEN_RACKS, 6, 6, 2)


@pytest.mark.parametrize(("start", "shift"), every_start(3))
def test_assignment_with_2_replicas_rack_aware_with_3_brokers(start, shift):
    # AdminRackAwareTest.testAssignmentWith2ReplicasRackAwareWith6PartitionsAnd3Brokers.
    rack_map = {0: "rack1", 1: "rack2", 4: "rack3"}
    assignment = assign_replicas_to_brokers(3, 2, to_broker_metadata(rack_map), start, 0, shift)
    check_replica_distribution(assignment, rack_map, 3, 3, 2)


def test_large_number_partitions_assignment():
    # AdminRackAwareTest.testLargeNumberPartitionsAssignment: 12 brokers, 3 racks of 4, 96 partitions, RF 3.
    rack_map = {
        0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1",
        6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack1", 11: "rack3",
    }
    for start, shift in every_start(12):
        assignment = assign_replicas_to_brokers(96, 3, to_broker_metadata(rack_map), start, 0, shift)
        check_replica_distribution(assignment, rack_map, 12, 96, 3)


@pytest.mark.parametrize(("start", "shift"), every_start(6))
def test_more_replicas_than_racks(start, shift):
    # AdminRackAwareTest.testMoreReplicasThanRacks: RF 5 over 3 racks -> each partition spans 3 racks.
    rack_map = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    assignment = assign_replicas_to_brokers(6, 5, to_broker_metadata(rack_map), start, 0, shift)
    assert [len(r) for r in assignment] == [5] * 6
    assert [len({rack_map[b] for b in r}) for r in assignment] == [3] * 6


@pytest.mark.parametrize(("start", "shift"), every_start(6))
def test_less_replicas_than_racks(start, shift):
    # AdminRackAwareTest.testLessReplicasThanRacks: RF 2 over 3 racks -> each partition spans 2 racks.
    rack_map = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    assignment = assign_replicas_to_brokers(6, 2, to_broker_metadata(rack_map), start, 0, shift)
    assert [len(r) for r in assignment] == [2] * 6
    assert [len({rack_map[b] for b in r}) for r in assignment] == [2] * 6


@pytest.mark.parametrize(("start", "shift"), every_start(6))
def test_single_rack(start, shift):
    # AdminRackAwareTest.testSingleRack: one rack per partition, one leader per broker.
    rack_map = {b: "rack1" for b in range(6)}
    assignment = assign_replicas_to_brokers(6, 3, to_broker_metadata(rack_map), start, 0, shift)
    assert [len(r) for r in assignment] == [3] * 6
    assert all(len({rack_map[b] for b in r}) == 1 for r in assignment)
    assert Counter(r[0] for r in assignment) == {b: 1 for b in range(6)}


def test_add_partitions_replica_placement_all_servers():
    # AddPartitionsTest.testReplicaPlacementAllServers: topic with 0 -> (2, 3, 0, 1) grown to 7
    # partitions on brokers 0..3; addPartitions passes startIndex = position of the first broker
    # id >= 2 (here 2) and startPartitionId = 1.
    assignment = assign_replicas_to_brokers(6, 4, tuple(range(4)), 2, 1)
    placed = to_partition_map(assignment, 1)
    assert {p: r[0] for p, r in placed.items()} == {1: 3, 2: 0, 3: 1, 4: 2, 5: 3, 6: 0}
    assert all(set(r) == {0, 1, 2, 3} for r in placed.values())


def test_add_partitions_replica_placement_partial_servers():
    # AddPartitionsTest.testReplicaPlacementPartialServers: 0 -> (1, 2) grown to 3 partitions:
    # startIndex 1, startPartitionId 1; partition 1 is led by 2 on {0, 2}, partition 2 by 3 on {1, 3}.
    placed = to_partition_map(assign_replicas_to_brokers(2, 2, tuple(range(4)), 1, 1), 1)
    assert {p: (r[0], set(r)) for p, r in placed.items()} == {1: (2, {0, 2}), 2: (3, {1, 3})}


def test_replica_index():
    # AdminUtils.replicaIndex: distance 1 + (shift + j) mod (n - 1) from the first replica.
    assert replica_index(0, 0, 0, 5) == 1
    assert replica_index(4, 0, 0, 5) == 0
    assert replica_index(0, 1, 0, 5) == 2
    assert replica_index(3, 5, 2, 5) == (3 + 1 + 7 % 4) % 5
    assert all(replica_index(f, s, j, 7) != f for f in range(7) for s in range(10) for j in range(10))
    with pytest.raises(AssignmentError):
        replica_index(0, 0, 0, 1)


# ---------------------------------------------------------------------------
# Error cases
# ---------------------------------------------------------------------------


def test_assignment_error_is_value_error():
    assert issubclass(AssignmentError, ValueError)


@pytest.mark.parametrize("n_partitions", [0, -1])
def test_partitions_must_be_positive(n_partitions):
    # AdminUtils.assignReplicasToBrokers: InvalidPartitionsException.
    with pytest.raises(AssignmentError, match="partitions"):
        assign_replicas_to_brokers(n_partitions, 1, (0, 1), 0)


def test_partition_check_comes_first():
    # Kafka checks the partition count before the replication factor.
    with pytest.raises(AssignmentError, match="partitions"):
        assign_replicas_to_brokers(0, 0, (), 0)


@pytest.mark.parametrize("replication_factor", [-1, 0, 4])
def test_replication_factor_bounds(replication_factor):
    with pytest.raises(AssignmentError, match="replication factor"):
        assign_replicas_to_brokers(3, replication_factor, (0, 1, 2), 0)


def test_no_brokers():
    with pytest.raises(AssignmentError):
        assign_replicas_to_brokers(1, 1, (), 0)


def test_some_brokers_without_rack():
    # AdminUtils.assignReplicasToBrokers: AdminOperationException when racks are only partly known.
    brokers = (BrokerMetadata(0, "r1"), BrokerMetadata(1, None), BrokerMetadata(2, "r2"))
    with pytest.raises(AssignmentError, match="Not all brokers have rack information"):
        assign_replicas_to_brokers(3, 2, brokers, 0)
    with pytest.raises(AssignmentError):
        assign_replicas_to_brokers_rack_aware(3, 2, brokers, 0)


def test_duplicate_broker_ids():
    with pytest.raises(AssignmentError, match="repeat"):
        assign_replicas_to_brokers(3, 1, (0, 1, 1), 0)


def test_negative_start_or_shift_rejected():
    # Kafka reads a negative fixedStartIndex as "draw at random"; here randomness is explicit.
    with pytest.raises(AssignmentError, match="start index"):
        assign_replicas_to_brokers(3, 2, (0, 1, 2), -1)
    with pytest.raises(AssignmentError, match="shift"):
        assign_replicas_to_brokers(3, 2, (0, 1, 2), 0, 0, -1)


def test_bad_broker_type():
    with pytest.raises(TypeError):
        assign_replicas_to_brokers(3, 1, ("0",), 0)
    with pytest.raises(TypeError):
        assign_replicas_to_brokers(3, 1, (True,), 0)


def test_low_level_functions_check_sizes():
    with pytest.raises(AssignmentError):
        assign_replicas_to_brokers_rack_unaware(3, 4, (0, 1, 2), 0)
    with pytest.raises(AssignmentError):
        assign_replicas_to_brokers_rack_aware(3, 4, to_broker_metadata({0: "a", 1: "b", 2: "a"}), 0)
    with pytest.raises(AssignmentError):
        assign_replicas_to_brokers_rack_unaware(0, 1, (0,), 0)


# ---------------------------------------------------------------------------
# Small API details
# ---------------------------------------------------------------------------


def test_broker_metadata_is_frozen_and_slotted():
    broker = BrokerMetadata(3, "r1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        broker.id = 4  # type: ignore[misc]
    assert not hasattr(broker, "__dict__")
    assert BrokerMetadata(3) == BrokerMetadata(3, None)
    assert hash(broker) == hash(BrokerMetadata(3, "r1"))


def test_negative_start_partition_id_means_zero():
    # Kafka: currentPartitionId = max(0, startPartitionId); its default -1 means 0.
    assert assign_replicas_to_brokers(7, 2, tuple(range(4)), 1, -1) == assign_replicas_to_brokers(7, 2, tuple(range(4)), 1, 0)
    assert sorted(to_partition_map(assign_replicas_to_brokers(2, 1, (0, 1), 0, -1), -1)) == [0, 1]


def test_shift_defaults_to_fixed_start_index():
    # Kafka with a fixed start index uses it for nextReplicaShift too.
    brokers = tuple(range(5))
    assert assign_replicas_to_brokers(12, 3, brokers, 3) == assign_replicas_to_brokers(12, 3, brokers, 3, 0, 3)
    assert assign_replicas_to_brokers(12, 3, brokers, 3) != assign_replicas_to_brokers(12, 3, brokers, 3, 0, 0)


def test_draw_random_start_is_seeded():
    a = [draw_random_start(random.Random(7), 6) for _ in range(3)]
    assert a[0] == a[1] == a[2]
    rng = random.Random(11)
    draws = [draw_random_start(rng, 6) for _ in range(200)]
    assert all(0 <= s < 6 and 0 <= k < 6 for s, k in draws)
    assert len(set(draws)) > 1
    with pytest.raises(AssignmentError):
        draw_random_start(random.Random(0), 0)


# ---------------------------------------------------------------------------
# Property tests
# ---------------------------------------------------------------------------


@st.composite
def clusters(draw, rack_aware: bool | None = None):
    n = draw(st.integers(1, 12))
    ids = draw(st.lists(st.integers(0, 200), min_size=n, max_size=n, unique=True))
    aware = draw(st.booleans()) if rack_aware is None else rack_aware
    if aware:
        pool = draw(st.lists(st.text(max_size=3), min_size=1, max_size=5, unique=True))
        racks = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    else:
        racks = [None] * n
    return tuple(BrokerMetadata(i, r) for i, r in zip(ids, racks))


@st.composite
def problems(draw, rack_aware: bool | None = None):
    brokers = draw(clusters(rack_aware))
    n = len(brokers)
    return {
        "n_partitions": draw(st.integers(1, 40)),
        "replication_factor": draw(st.integers(1, n)),
        "brokers": brokers,
        "fixed_start_index": draw(st.integers(0, 3 * n)),
        "start_partition_id": draw(st.integers(0, 30)),
        "next_replica_shift": draw(st.one_of(st.none(), st.integers(0, 3 * n))),
    }


@st.composite
def balanced_problems(draw):
    """Kafka's even-distribution setting: equal racks (or none), whole rounds of n partitions."""
    if draw(st.booleans()):
        n_racks = draw(st.integers(1, 4))
        per_rack = draw(st.integers(1, 4))
        n = n_racks * per_rack
        racks = [f"rack{i % n_racks}" for i in range(n)]
    else:
        n = draw(st.integers(1, 12))
        racks = [None] * n
    ids = draw(st.lists(st.integers(0, 200), min_size=n, max_size=n, unique=True))
    racks = draw(st.permutations(racks))
    return {
        "n_partitions": n * draw(st.integers(1, 4)),
        "replication_factor": draw(st.integers(1, n)),
        "brokers": tuple(BrokerMetadata(i, r) for i, r in zip(ids, racks)),
        "fixed_start_index": draw(st.integers(0, 3 * n)),
        "start_partition_id": n * draw(st.integers(0, 3)),
        "next_replica_shift": draw(st.one_of(st.none(), st.integers(0, 3 * n))),
    }


def run(problem):
    return assign_replicas_to_brokers(**problem)


@PROPERTY_SETTINGS
@given(problems())
def test_prop_shape_and_no_duplicate_broker(problem):
    assignment = run(problem)
    ids = {b.id for b in problem["brokers"]}
    assert len(assignment) == problem["n_partitions"]
    for replicas in assignment:
        assert len(replicas) == problem["replication_factor"]
        assert len(set(replicas)) == len(replicas)
        assert set(replicas) <= ids


@PROPERTY_SETTINGS
@given(problems(rack_aware=True))
def test_prop_rack_aware_spans_min_rf_racks(problem):
    rack_of = {b.id: b.rack for b in problem["brokers"]}
    n_racks = len(set(rack_of.values()))
    expected = min(problem["replication_factor"], n_racks)
    assert all(len({rack_of[b] for b in replicas}) == expected for replicas in run(problem))


@PROPERTY_SETTINGS
@given(problems())
def test_prop_leaders_round_robin_balanced(problem):
    # The preferred leaders walk the broker list round-robin from the fixed start.
    assignment = run(problem)
    counts = Counter(replicas[0] for replicas in assignment)
    per_broker = [counts.get(b.id, 0) for b in problem["brokers"]]
    assert max(per_broker) - min(per_broker) <= 1
    n = len(problem["brokers"])
    if problem["n_partitions"] % n == 0:
        assert per_broker == [problem["n_partitions"] // n] * n


@PROPERTY_SETTINGS
@given(balanced_problems())
def test_prop_even_distribution_like_check_replica_distribution(problem):
    # RackAwareTest.checkReplicaDistribution's leader and replica checks, where Kafka's tests
    # enable them: racks of equal size (or no racks), partitions in whole rounds of the broker count.
    brokers = problem["brokers"]
    n = len(brokers)
    rf = problem["replication_factor"]
    assignment = run(problem)
    rack_map = {b.id: (b.rack if b.rack is not None else f"own{b.id}") for b in brokers}
    verify_rack_aware = brokers[0].rack is not None and rf <= len({b.rack for b in brokers})
    check_replica_distribution(
        assignment, rack_map, n, problem["n_partitions"], rf, verify_rack_aware=verify_rack_aware
    )


@PROPERTY_SETTINGS
@given(problems())
def test_prop_deterministic_and_order_independent(problem):
    first = run(problem)
    assert run(problem) == first
    shuffled = dict(problem, brokers=tuple(reversed(problem["brokers"])))
    assert run(shuffled) == first


@PROPERTY_SETTINGS
@given(problems(), st.integers(1, 20))
def test_prop_more_partitions_extend_the_prefix(problem, extra):
    longer = dict(problem, n_partitions=problem["n_partitions"] + extra)
    assert run(longer)[: problem["n_partitions"]] == run(problem)


@PROPERTY_SETTINGS
@given(problems(rack_aware=False))
def test_prop_rack_unaware_closed_form(problem):
    # Replica j of partition p is at distance 1 + (shift(p) + j - 1) mod (n - 1) from the leader
    # at (p + start) mod n, where shift(p) grows once per multiple of n in (0, p] from the first id.
    ids = sorted(b.id for b in problem["brokers"])
    n = len(ids)
    start = problem["fixed_start_index"]
    shift0 = start if problem["next_replica_shift"] is None else problem["next_replica_shift"]
    first_id = problem["start_partition_id"]
    for offset, replicas in enumerate(run(problem)):
        p = first_id + offset
        wraps = p // n - ((first_id - 1) // n if first_id > 0 else 0)
        leader = (p + start) % n
        expected = [ids[leader]] + [
            ids[(leader + 1 + (shift0 + wraps + j) % (n - 1)) % n] for j in range(problem["replication_factor"] - 1)
        ]
        assert list(replicas) == expected


def kafka_loop_rack_alternated(rack_map: Mapping[int, str]) -> list[int]:
    """Oracle: getRackAlternatedBrokerList's own loop, one rack iterator at a time."""
    iterators = {}
    for rack in {r for r in rack_map.values()}:
        iterators[rack] = iter(sorted(b for b, r in rack_map.items() if r == rack))
    racks = sorted(iterators, key=lambda s: s.encode("utf-16-be", "surrogatepass"))
    result: list[int] = []
    rack_index = 0
    while len(result) < len(rack_map):
        nxt = next(iterators[racks[rack_index]], None)
        if nxt is not None:
            result.append(nxt)
        rack_index = (rack_index + 1) % len(racks)
    return result


@PROPERTY_SETTINGS
@given(clusters(rack_aware=True))
def test_prop_rack_alternated_list_matches_kafka_loop(brokers):
    rack_map = {b.id: b.rack for b in brokers}
    arranged = rack_alternated_broker_list(rack_map)
    assert list(arranged) == kafka_loop_rack_alternated(rack_map)
    assert sorted(arranged) == sorted(rack_map)


@PROPERTY_SETTINGS
@given(problems(rack_aware=True))
def test_prop_rack_aware_degenerates_to_round_robin(problem):
    # With one rack, or one broker per rack, no candidate is ever skipped, so the rack-aware
    # walk is the rack-unaware one over the rack-alternated list (shift * racks = shift mod n - 1).
    for same_rack in (True, False):
        brokers = tuple(
            BrokerMetadata(b.id, "only" if same_rack else f"r{b.id:04d}") for b in problem["brokers"]
        )
        rack_map = {b.id: b.rack for b in brokers}
        aware = assign_replicas_to_brokers(**dict(problem, brokers=brokers))
        unaware = assign_replicas_to_brokers_rack_unaware(
            problem["n_partitions"],
            problem["replication_factor"],
            rack_alternated_broker_list(rack_map),
            problem["fixed_start_index"],
            problem["start_partition_id"],
            problem["next_replica_shift"],
        )
        assert aware == unaware
