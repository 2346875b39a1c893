"""PartitionChangeBuilderTest (Kafka 3.7.0): the controller's partition changes: ISR, leader election, epochs, ELR.

Kafka's unit test builds a PartitionChangeBuilder over a hand-made PartitionRegistration (FOO: replicas [2, 1, 3],
ISR all, leader 1, broker 3 not acceptable; BAR, BAZ, OFFLINE...) and asserts on the record it builds.  The model's
controller runs the same builder when a broker is fenced (target ISR without it, the fenced broker unacceptable), when
one is unfenced (leaderless partitions, the unfenced broker acceptable) and when a leader's AlterPartition arrives; so
each trace reaches the registration by those events and checks the record's effect on the controller's registration
(``quorum.partitions``) and the record itself (``quorum.log``).  Broker ids map onto the model's 0..N-1 (each trace
says how); ISRs are compared as sets (the model keeps them sorted).

The ELR cases run the model's ELR preset, ``kafka-4.1`` (= kafka-3.7's rules with eligible_leader_replicas on): in
3.7.0 the ELR exists only behind the unreleased metadata version 3.8-IV0 (PartitionChangeRecord version 2), which is
what the tests' ``isElrEnabled(version)`` selects.

lastKnownElr is kept as the controller keeps it: ReplicationControlManager never calls
setUseLastKnownLeaderInBalancedRecovery, so its builders run with the default, true, where lastKnownElr holds the
leader the partition had when its ISR became empty (one member) and that leader is elected, uncleanly, once the ISR and
the ELR are both empty and it is an acceptable leader (4.1.0, KAFKA-19522; before, fenced or not).  The tests that set it to false (lastKnownElr then holds the replicas that left the ELR) check
what no controller writes; where their assertion holds in the controller's mode too it is checked, else it is listed
as not checked.
"""

from __future__ import annotations

from isrlab.model import actions as A
from kraftcase import Case, case, missing, out_of_scope

B = "PartitionChangeBuilderTest."
LAG = 30_000
FOO_MAP = ("FOO's brokers 1, 2, 3 are the model's 0, 1, 2 (Kafka's leader 1 is the model's leader 0; FOO's replica "
           "order [2, 1, 3] is [1, 0, 2] in the model's ids, whose replica order is [0, 1, 2])")


def _last_change(c: Case, why: str, **fields) -> Case:
    """The last metadata record is the PartitionChangeRecord for partition 0 with these fields after it."""
    c.check("quorum.log.-1.@type", "PartitionChangeRecord", why)
    c.check("quorum.log.-1.partition", 0, why)
    for name, value in fields.items():
        c.check(f"quorum.log.-1.registration.{name}", value, why)
    return c


def _change_before_fence(c: Case, why: str, **fields) -> Case:
    """handleBrokerFenced writes the PartitionChangeRecords, then the FenceBrokerRecord: the change is second to last."""
    c.check("quorum.log.-1.@type", "FenceBrokerRecord", why)
    c.check("quorum.log.-2.@type", "PartitionChangeRecord", why)
    for name, value in fields.items():
        c.check(f"quorum.log.-2.registration.{name}", value, why)
    return c


out_of_scope(B + "testChangeRecordIsNoOp", "the record schema's versions and tagged fields (changeRecordIsNoOp)")
missing(B + "testElectLeader", "several states",
        "electLeader() asserted on its own, with no record built, for eleven builders over two starting registrations "
        "(FOO: leader 1 of [2, 1, 3], broker 3 not acceptable; BAZ: leader 3, ISR [1, 3]), three election types and "
        "four target ISRs.  The model's builder is reached only through a controller event that commits what it "
        "builds, from the one state a trace is in: each assertion would need a trace of its own, and the elections "
        "that keep the leader (ONLINE or UNCLEAN while leader 1 is valid, BAZ's three) write nothing to observe.  "
        "Parts are expressed elsewhere: the PREFERRED election by testElectPreferredLeaders and "
        "testBalancePartitionLeaders, the UNCLEAN one by testElectUncleanLeaders_WithoutElr and testUncleanLeaderElection.")


@case(B + "testTriggerLeaderEpochBumpIfNeeded")
def trigger_leader_epoch_bump():
    c = Case(B + "testTriggerLeaderEpochBumpIfNeeded",
             "Metadata version 3.6+ (KAFKA-15021): shrinking the ISR does not bump the leader epoch, expanding it does "
             "not either; a leader change does.",
             n_brokers=3, replication_factor=3)
    c.adapt("The ISR shrink and expansion are the leader's AlterPartition requests (follower 2 lags for the lag time, "
            "then catches up); the leader change is the controller's fence of the leader.  " + FOO_MAP)
    c.unchecked("expanding the ISR during ZooKeeper migration (no migration in the model)")
    c.unchecked("reassignment: new target replicas keep the leader epoch, a leader change in the same record bumps it")
    c.unchecked("metadata version 3.5 (IBP_3_5_IV2), where an ISR shrink bumps the leader epoch: another "
                "configuration (kafka_15021 off, preset kafka-3.5), not this history")
    c.formed().produce(0).fetch(1, rounds=2)
    c.sleep(45_000)
    c.check_update(0, [0, 1], "the leader proposes ISR {0, 1} (follower 2 lags)")
    c.alter(0)
    _last_change(c, "shrinking the ISR doesn't increase the leader epoch", isr=[0, 1], leader=0, leader_epoch=0,
                 partition_epoch=1)
    c.replay().catch_up([2])
    c.check_update(0, [0, 1, 2], "the leader proposes ISR {0, 1, 2}")
    c.alter(0)
    _last_change(c, "expanding the ISR doesn't increase the leader epoch", isr=[0, 1, 2], leader=0, leader_epoch=0,
                 partition_epoch=2)
    c.fence(0)
    _change_before_fence(c, "a leader change bumps the leader epoch", leader=1, leader_epoch=1, partition_epoch=3)
    return c


missing(B + "testLeaderEpochBumpZkMigration", "ZK migration",
        "KAFKA-15109: an ISR shrink bumps the leader epoch while the controller is in ZooKeeper migration mode.")
@case(B + "testNoChange")
def no_change():
    c = Case(B + "testNoChange",
             "build() with no target change writes nothing: FOO and BAR (a reassignment in progress) under the ONLINE "
             "and the UNCLEAN election, BAZ (its preferred replica out of the ISR) under the PREFERRED one.",
             n_brokers=4, n_partitions=2, replication_factor=3, max_reassignments=1, max_forged_alter_partitions=2,
             max_preferred_elections=3)
    c.adapt("The builder runs inside a controller event.  Under the ONLINE election with no target change it is an "
            "AlterPartition from the leader proposing the ISR it has, at its epochs (AlterPartitionReceived: a request "
            "no leader of the model sends, as Kafka's leader never proposes its own ISR; the controller answers NONE "
            "with the partition as it is).  Under the PREFERRED election it is an ElectLeaders request, whose builder "
            "keeps the leader when the preferred replica is out of the ISR (PREFERRED_LEADER_NOT_AVAILABLE).")
    c.adapt("FOO is the model's partition 0 as formed (replicas [0, 1, 2], led by 0), BAR the same partition "
            "reassigned to [1, 2, 3] (replicas [1, 2, 3, 0], adding [3], removing [0]: BAR's shape), and BAZ the "
            "model's partition 1 (replicas [1, 2, 3], preferred replica 1) once broker 1 has been fenced out of its "
            "ISR and unfenced again: led by another, ISR without its preferred replica.")
    c.adapt("Under the UNCLEAN election Kafka's builder keeps a valid leader, but 3.7.0's controller never runs it on a "
            "partition with a leader: an ElectLeaders UNCLEAN is answered ELECTION_NOT_NEEDED before any builder "
            "(electLeader), and 3.7.0's controller reads unclean.leader.election.enable as false in its other events.  "
            "The trace checks that answer and that nothing is written.")
    c.unchecked("the builder's own empty result under the UNCLEAN election for FOO and BAR: 3.7.0's controller never "
                "runs its builder there (the trace checks the controller's ELECTION_NOT_NEEDED and no record instead)")

    def no_record(why: str) -> None:
        c.check("quorum.batch_ends.-1", last, why + ": no record (the metadata log ends where it did)")

    def same_isr_proposal(p: int, why: str) -> None:
        part = c.s.quorum.partitions[p]
        b = part.leader
        c.do(A.AlterPartitionReceived(b, p, c.s.quorum.registrations[b].epoch, part.leader_epoch,
                                      part.partition_epoch, ",".join(map(str, part.isr))))
        c.check("ghost.forged_answers.-1", "NONE", why + ": accepted")
        no_record(why)

    c.formed().replay()
    last = len(c.s.quorum.log)
    same_isr_proposal(0, "FOO, ONLINE, target ISR unchanged")
    c.do(A.ElectLeaders(0, 0, "UNCLEAN"))
    c.check("ghost.responses.elect_leaders.0.0", "ELECTION_NOT_NEEDED", "FOO, UNCLEAN: its leader is valid")
    no_record("FOO, UNCLEAN")
    c.reassign([1, 2, 3])
    c.check_registration("BAR: replicas [1, 2, 3, 0], adding [3], removing [0], ISR [0, 1, 2]",
                         replicas=[1, 2, 3, 0], isr=[0, 1, 2], adding_replicas=[3], removing_replicas=[0])
    c.replay()
    last = len(c.s.quorum.log)
    same_isr_proposal(0, "BAR, ONLINE, target ISR unchanged (the adding 3 not in it: the reassignment goes on)")
    c.do(A.ElectLeaders(0, 0, "UNCLEAN"))
    c.check("ghost.responses.elect_leaders.0.0", "ELECTION_NOT_NEEDED", "BAR, UNCLEAN: its leader is valid")
    no_record("BAR, UNCLEAN")
    c.fence(1).replay().unfence(1).replay()
    c.check_registration("BAZ: preferred replica 1 out of the ISR, led by another", p=1, isr=[2, 3], leader=2)
    last = len(c.s.quorum.log)
    c.do(A.ElectLeaders(0, 1, "PREFERRED"))
    c.check("ghost.responses.elect_leaders.0.1", "PREFERRED_LEADER_NOT_AVAILABLE",
            "BAZ, PREFERRED: the builder keeps leader 2")
    no_record("BAZ, PREFERRED")
    return c


@case(B + "testIsrChangeDoesntBumpLeaderEpoch")
def isr_change_no_bump():
    c = Case(B + "testIsrChangeDoesntBumpLeaderEpoch",
             "FOO with target ISR [2, 1] (broker 3 out): the record changes the ISR only; the leader and the leader "
             "epoch stay, the partition epoch moves.",
             n_brokers=3, replication_factor=3)
    c.adapt("The target ISR without broker 3 is the controller's fence of it (handleBrokerFenced: setTargetIsr without "
            "the broker, which is not acceptable).  " + FOO_MAP)
    c.formed().fence(2)
    _change_before_fence(c, "record: ISR [2, 1] (model [0, 1]), no leader change: same leader epoch", isr=[0, 1],
                         leader=0, leader_epoch=0, partition_epoch=1)
    return c


@case(B + "testIsrChangeAndLeaderChange")
def isr_change_and_leader_change():
    c = Case(B + "testIsrChangeAndLeaderChange",
             "FOO with target ISR [2, 3] (the leader, 1, out): the record sets ISR [2, 3] and elects 2, the first "
             "replica that is in the target ISR and acceptable; a leader change bumps the leader epoch.",
             n_brokers=3, replication_factor=3)
    c.adapt("The target ISR without the leader is the controller's fence of the leader (broker 0 here).  " + FOO_MAP +
            "; FOO's 3 is not acceptable but comes after 2 in its replica order, as the model's 2 comes after 1, so "
            "the election is the same.")
    c.formed().fence(0)
    _change_before_fence(c, "record: ISR [2, 3] (model [1, 2]), leader 2 (model 1), leader epoch + 1", isr=[1, 2],
                         leader=1, leader_epoch=1, partition_epoch=1)
    c.check_registration("the registration after the record", isr=[1, 2], leader=1, leader_epoch=1)
    return c


REASSIGN = ("The builder's target replicas are the quorum controller's for an admin's AlterPartitionReassignments "
            "(changePartitionReassignment: replicas = target + removing, setTargetAdding / setTargetRemoving when not "
            "empty; cancelPartitionReassignment: PartitionReassignmentRevert).  ")
#: FOO seen from the model: Kafka's brokers 2, 1, 3 are the model's 0, 1, 2, so FOO's replica order [2, 1, 3] is the
#: model's [0, 1, 2]; Kafka's leader 1 is the model's 1, which does not lead (the model's 0 does)
FOO_ORDER = ("FOO's brokers 2, 1, 3 are the model's 0, 1, 2 (FOO's replica order [2, 1, 3] is the model's [0, 1, 2]); "
             "FOO's leader is 1, the model's leader is its first replica, 0: neither test changes the leader.")
#: BAR from the model's formed partition [0, 1, 2] on 4 brokers: Kafka's broker k is the model's k - 1
BAR_MAP = ("Kafka's broker k is the model's k - 1.  BAR (replicas [1, 2, 3, 4], ISR [1, 2, 3], removing [1], adding "
           "[4], leader 1) is reached from the model's formed partition [0, 1, 2] (Kafka [1, 2, 3], leader 1) by "
           "reassigning it to [1, 2, 3] (Kafka [2, 3, 4]): the controller writes replicas target + removing, "
           "[1, 2, 3, 0] (Kafka [2, 3, 4, 1]; BAR's hand-made order [1, 2, 3, 4] is not one changePartitionReassignment "
           "writes), ISR [0, 1, 2], removing [0], adding [3], leader 0 in leader epoch 0, partition epoch 1.")


def _bar(name: str, description: str) -> Case:
    """The formed 4-broker cluster with partition [0, 1, 2] reassigned to [1, 2, 3]: BAR in the model's ids."""
    c = Case(B + name, description, n_brokers=4, replication_factor=3, max_reassignments=1)
    c.adapt(REASSIGN + BAR_MAP)
    c.formed().produce(0).catch_up()
    c.reassign([1, 2, 3])
    c.check_whole_registration("quorum.partitions.0", "BAR: Kafka [2, 3, 4, 1], ISR [1, 2, 3], removing [1], adding "
                               "[4], leader 1", replicas=[1, 2, 3, 0], isr=[0, 1, 2], leader=0, leader_epoch=0,
                               partition_epoch=1, adding=[3], removing=[0])
    return c.replay()


@case(B + "testReassignmentRearrangesReplicas")
def reassignment_rearranges_replicas():
    c = Case(B + "testReassignmentRearrangesReplicas",
             "FOO with target replicas [3, 2, 1] (the same brokers in another order): the record sets the replicas "
             "only; no replica is added or removed, the ISR, the leader and the leader epoch stay.",
             n_brokers=3, replication_factor=3, max_reassignments=1)
    c.adapt(REASSIGN + FOO_ORDER + "  Kafka's target [3, 2, 1] is the model's [2, 0, 1].")
    c.unchecked("the record's directories (PartitionChangeRecord version 1+; this trace runs without log "
                "directories, log_dirs 0: testKeepsDirectoriesAfterReassignment's checks them)")
    c.formed()
    c.reassign([2, 0, 1])
    c.check_whole_registration("quorum.log.-1.registration", "record: replicas [3, 2, 1] (model [2, 0, 1]), no other "
                               "change: no leader in the record (same leader epoch), no ISR, nothing adding or "
                               "removing", replicas=[2, 0, 1], isr=[0, 1, 2], leader=0, leader_epoch=0,
                               partition_epoch=1)
    return c


@case(B + "testAddingReplicaReassignment")
def adding_replica_reassignment():
    c = Case(B + "testAddingReplicaReassignment",
             "FOO reassigned to [1, 2, 3, 4]: PartitionReassignmentReplicas has nothing removing, adding [4], replicas "
             "[1, 2, 3, 4]; the record sets the replicas and adding [4] only (no ISR, no leader change).",
             n_brokers=4, replication_factor=3, max_reassignments=1)
    c.adapt(REASSIGN + "FOO's brokers 1, 2, 3 are the model's 0, 1, 2 and Kafka's 4 the model's 3 (the formed "
            "partition's replicas are [0, 1, 2], FOO's [2, 1, 3]): Kafka's target [1, 2, 3, 4] is the model's "
            "[0, 1, 2, 3].  FOO's leader is 1 (the model's 0, which leads).")
    c.unchecked("the record's directories (the new replica's UNASSIGNED directory; this trace runs without log "
                "directories, log_dirs 0: testKeepsDirectoriesAfterReassignment's checks them)")
    c.formed()
    c.reassign([0, 1, 2, 3])
    c.check_whole_registration("quorum.log.-1.registration", "record: replicas [1, 2, 3, 4] (model [0, 1, 2, 3]), "
                               "adding [4] (model [3]); no leader (same leader epoch), no ISR, nothing removing",
                               replicas=[0, 1, 2, 3], isr=[0, 1, 2], leader=0, leader_epoch=0, partition_epoch=1,
                               adding=[3])
    return c


@case(B + "testRemovingReplicaReassignment")
def removing_replica_reassignment():
    c = Case(B + "testRemovingReplicaReassignment",
             "FOO reassigned to [1, 2]: removing [3], nothing adding, replicas [1, 2, 3]; the ISR keeps members that "
             "stay, so the builder completes the reassignment at once: replicas [1, 2], ISR [2, 1], leader 1 in the "
             "record (a replica left the replicas: the leader epoch is bumped).",
             n_brokers=3, replication_factor=3, max_reassignments=1)
    c.adapt(REASSIGN + "FOO's brokers 1, 2, 3 are the model's 0, 1, 2, so FOO's leader 1 is the model's leader 0 (FOO's "
            "replica order [2, 1, 3] is the model's [0, 1, 2]; the test's target and record name the brokers by set "
            "and leader only).  Kafka's target [1, 2] is the model's [0, 1].")
    c.unchecked("the record's directories (this trace runs without log directories, log_dirs 0: "
                "testKeepsDirectoriesAfterReassignment's checks them)")
    c.formed()
    c.reassign([0, 1])
    c.check_whole_registration("quorum.log.-1.registration", "record: replicas [1, 2] (model [0, 1]), ISR [2, 1] (model "
                               "{0, 1}), leader 1 (model 0) set in the record: leader epoch + 1; nothing adding or "
                               "removing", replicas=[0, 1], isr=[0, 1], leader=0, leader_epoch=1, partition_epoch=1)
    return c


@case(B + "testIsrEnlargementCompletesReassignment")
def isr_enlargement_completes_reassignment():
    c = _bar("testIsrEnlargementCompletesReassignment",
             "BAR with target ISR [1, 2, 3, 4]: every adding replica is in the ISR, so the reassignment completes: "
             "replicas [2, 3, 4], ISR [2, 3, 4] (the removing 1 leaves both), leader 2 (1 is removed), nothing adding "
             "or removing.")
    c.adapt("The target ISR [1, 2, 3, 4] is the leader's AlterPartition once the adding replica (the model's 3) has "
            "caught up.")
    c.unchecked("the record's directories (this trace runs without log directories, log_dirs 0: "
                "testKeepsDirectoriesAfterReassignment's checks them)")
    c.catch_up([3])
    c.check_update(0, [0, 1, 2, 3], "the leader proposes ISR [1, 2, 3, 4] (model [0, 1, 2, 3])")
    c.send_alter(0)
    c.check_whole_registration("quorum.log.-1.registration", "record: replicas [2, 3, 4] (model [1, 2, 3]), ISR "
                               "[2, 3, 4], leader 2 (model 1): leader epoch + 1; nothing adding or removing",
                               replicas=[1, 2, 3], isr=[1, 2, 3], leader=1, leader_epoch=1, partition_epoch=2)
    return c


@case(B + "testRevertReassignment")
def revert_reassignment():
    c = _bar("testRevertReassignment",
             "PartitionReassignmentRevert of BAR: the replicas less the adding 4, the ISR less it ([1, 2, 3], as it "
             "was); the record sets those replicas, clears adding and removing, and names the leader, 1: a replica "
             "(4) left the replicas, so the leader epoch is bumped.")
    c.adapt("The revert is the quorum controller's cancelPartitionReassignment (the admin's AlterPartitionReassignments "
            "with null replicas).  PartitionReassignmentRevert.originalReplicas keeps the replicas' order less the "
            "adding ones: BAR's [1, 2, 3, 4] gives [1, 2, 3]; the reached BAR, Kafka [2, 3, 4, 1], gives Kafka [2, 3, 1], "
            "the model's [1, 2, 0].")
    c.unchecked("the record's directories (this trace runs without log directories, log_dirs 0: "
                "testKeepsDirectoriesAfterReassignment's checks them)")
    c.reassign(None)
    c.check_whole_registration("quorum.log.-1.registration", "record: the replicas less the adding one (Kafka "
                               "[2, 3, 1], model [1, 2, 0]), the ISR [1, 2, 3] unchanged (model {0, 1, 2}), leader 1 "
                               "(model 0) with leader epoch + 1, nothing adding or removing", replicas=[1, 2, 0],
                               isr=[0, 1, 2], leader=0, leader_epoch=1, partition_epoch=2)
    return c


@case(B + "testUncleanLeaderElection")
def unclean_leader_election():
    c = Case(B + "testUncleanLeaderElection",
             "OFFLINE_WITHOUT_ELR (replicas [2, 1, 3], ISR [3], no leader, only broker 1 acceptable) with an unclean "
             "election: broker 1 is elected and the ISR is set to [1].",
             n_brokers=3, replication_factor=3, unclean_leader_election=True)
    c.adapt("unclean.leader.election.enable is on (the controller builds with Election.UNCLEAN).  The offline "
            "partition is reached by fencing brokers 1, 2 and then 0: the ISR keeps its last member, 0, with no "
            "leader (no acceptable replica).  Broker 1's heartbeat then unfences it: handleBrokerUnfenced builds over "
            "the leaderless partition with broker 1 the only acceptable replica.  OFFLINE's brokers 3, 1 (and 2) are "
            "the model's 0, 1 (and 2).")
    c.unchecked("FOO with target ISR [3] and an unclean election (leader 2, ISR [2]): another starting registration")
    c.unchecked("record version 2 (with the ELR), where the unclean election also clears the ELR: the ELR is off in "
                "this configuration")
    c.formed().fence(1, 2, 0)
    c.check_registration("the offline partition: ISR [3] (model [0]), no leader", isr=[0], leader=-1)
    c.unfence(1)
    _last_change(c, "unclean election: leader 1, ISR [1], leader recovery state RECOVERING (KIP-704)", leader=1,
                 isr=[1], leader_recovery_state="RECOVERING")
    return c


def _unclean_to(c: Case, why: str) -> Case:
    """Brokers 1, 2 and then 0 fenced (the ISR keeps its last member, 0, with no leader) and brokers 0 and 2 stopped,
    so that broker 1 is the only acceptable replica; broker 1 unfenced: handleBrokerUnfenced's unclean election makes
    it leader, ISR [1]."""
    c.formed().fence(1, 2, 0).crash(0).crash(2)
    c.check_registration("the leaderless partition: ISR [0], no leader, RECOVERED", isr=[0], leader=-1,
                         leader_recovery_state="RECOVERED")
    c.unfence(1)
    return _last_change(c, why, leader=1, isr=[1], leader_recovery_state="RECOVERING")


@case(B + "testUncleanSetsLeaderRecoveringState")
def unclean_sets_leader_recovering_state():
    c = Case(B + "testUncleanSetsLeaderRecoveringState",
             "A leaderless partition (RECOVERED) given an unclean election with only broker 1 acceptable: the record "
             "elects 1, sets the ISR to [1] and the leader recovery state to RECOVERING (KIP-704).",
             n_brokers=3, replication_factor=3, unclean_leader_election=True)
    c.adapt("Kafka's registration (replicas [1, 2, 3], ISR [2, 3], no leader) is one the protocol cannot reach "
            "without the ELR: when every ISR member is fenced the controller keeps only the last one.  The trace "
            "fences the model's brokers 1, 2, 0 (ISR [0], no leader), stops 0 and 2 (only 1 is acceptable, as in the "
            "test) and unfences 1, which is not in the ISR, so the election is unclean as in the test "
            "(Election.UNCLEAN with unclean.leader.election.enable on); Kafka's leader 1 is the model's 1.")
    c.unchecked("the runs with a metadata version before leader recovery (isLeaderRecoverySupported false: no "
                "recovery-state change) and with ZooKeeper migration on: the model has one metadata version and no "
                "migration")
    _unclean_to(c, "unclean election: leader 1, ISR [1], leader recovery state RECOVERING")
    c.check_registration("the merged registration: leader 1, ISR [1], RECOVERING", leader=1, isr=[1],
                         leader_recovery_state="RECOVERING")
    return c


@case(B + "testChangeInLeadershipDoesNotChangeRecoveryState")
def change_in_leadership_does_not_change_recovery_state():
    c = Case(B + "testChangeInLeadershipDoesNotChangeRecoveryState",
             "A leader in RECOVERING and alone in the ISR goes offline (no leader, the ISR keeps it, still RECOVERING) "
             "and comes back (elected again, still RECOVERING): a leadership change leaves the recovery state alone.",
             n_brokers=3, replication_factor=3, unclean_leader_election=True)
    c.adapt("Kafka's RECOVERING leader 1 with ISR [1] is reached by an unclean election of the model's broker 1 "
            "(brokers 1, 2, 0 fenced, 0 and 2 stopped, then 1 unfenced); broker 1 is fenced again before it replays the election, so "
            "its AlterPartition that would mark the partition RECOVERED is never sent (Partition.makeLeader sends it "
            "only once the leader applies the change).  The offline builder's target ISR [] is the controller's fence "
            "of the last ISR member; the online builder is its unfencing.")
    c.unchecked("the runs with a metadata version before leader recovery and with ZooKeeper migration on: the model "
                "has one metadata version and no migration")
    _unclean_to(c, "setup: leader 1, ISR [1], RECOVERING")
    c.fence(1)
    _change_before_fence(c, "offline: no leader, the recovery state unchanged", leader=-1, isr=[1],
                         leader_recovery_state="RECOVERING")
    c.check_registration("offline: leader -1, ISR [1], RECOVERING", leader=-1, isr=[1],
                         leader_recovery_state="RECOVERING")
    c.unfence(1)
    _last_change(c, "online again: the only ISR member elected, the recovery state unchanged", leader=1, isr=[1],
                 leader_recovery_state="RECOVERING")
    c.check_registration("online: leader 1, ISR [1], RECOVERING", leader=1, isr=[1], leader_recovery_state="RECOVERING")
    return c
@case(B + "testStoppedLeaderIsDemotedAfterReassignmentCompletesEvenIfNoNewEligibleLeaders")
def stopped_leader_is_demoted():
    c = Case(B + "testStoppedLeaderIsDemotedAfterReassignmentCompletesEvenIfNoNewEligibleLeaders",
             "A reassignment from [0, 1] to new replicas, leader 0 among the removed: the target ISR that holds every "
             "adding replica completes it, and with no acceptable leader among the new replicas the record's leader "
             "is NO_LEADER, not the stopped 0: replicas and ISR the new ones, nothing adding or removing.",
             n_brokers=3, replication_factor=2, max_reassignments=1, log_dirs=2, max_log_dir_failures=1)
    c.adapt(REASSIGN + "Kafka's reassignment of [0, 1] to [2, 3] is here one of [0, 1] to [2] (replicas [2, 0, 1], "
            "adding [2], removing [0, 1]): the leader adds one follower to the ISR per AlterPartition, and a second "
            "adding replica would be in the ISR, hence acceptable, when the last one joins.")
    c.adapt("Kafka's acceptor refuses every broker (isValidLeader = false).  Here the adding replica is not an acceptable "
            "leader because the directory that holds its log went offline (LeaderAcceptor: an active broker whose "
            "directory of the partition is online), after its fetch made the leader propose it and before the "
            "controller handles that proposal.  An offline directory does not make a replica ineligible for the ISR "
            "(ineligibleReplicasForIsr checks registration, controlled shutdown, fencing and broker epoch), and the "
            "controller takes broker 2 out of no ISR when the directory goes offline (it is in none yet), so the "
            "partition epoch stays and the proposal is accepted.")
    c.adapt("Kafka's target ISR [0, 1, 2, 3] is the leader's AlterPartition proposing [0, 1, 2] (the model's ISR [0, 1] "
            "and the adding 2).")
    c.unchecked("the record's directories (the test's four random directory ids)")
    c.unchecked("the record's empty adding and removing replicas: the state's encoding leaves empty ones out, so no "
                "check can name them (tests/test_partition_3x.py checks the model's empty ones)")
    c.formed()
    c.reassign([2])
    c.check_registration("reassigning [0, 1] to [2]: replicas [2, 0, 1], ISR [0, 1], adding [2], removing [0, 1], "
                         "leader 0", replicas=[2, 0, 1], isr=[0, 1], leader=0, leader_epoch=0, partition_epoch=1,
                         adding_replicas=[2], removing_replicas=[0, 1])
    c.replay().report_dirs(2).replay()
    d = c.s.brokers[2].log_dir_of[0]
    c.check_registration("broker 2 reports its log's directory: a record with the directory, partition epoch 2",
                         partition_epoch=2, directories=["b2d%d" % d, "UNASSIGNED", "UNASSIGNED"])
    c.fetch(2)
    c.check_update(0, [0, 1, 2], "the leader proposes ISR [0, 1, 2]: every adding replica in the target ISR")
    c.do(A.LogDirFailure(2, d)).heartbeat(2)
    c.check("quorum.log.-1.@type", "BrokerLogDirsChangeRecord", "broker 2's directory offline: no partition change, "
            "as broker 2 is in no ISR")
    c.check_registration("the partition epoch is unchanged", partition_epoch=2, leader=0)
    c.send_alter(0)
    c.check("quorum.log.-1.@type", "PartitionChangeRecord", "the proposal's record")
    for name, value in (("replicas", [2]), ("isr", [2]), ("leader", -1), ("leader_epoch", 1), ("partition_epoch", 3)):
        c.check(f"quorum.log.-1.registration.{name}", value, "record: replicas and ISR the new ones ([2]), leader "
                "NO_LEADER (the stopped 0 demoted), leader epoch + 1")
    return c


def _elr_case(name: str, description: str, n: int, min_isr: int, all_versions: bool = True) -> Case:
    """An ELR case on the model's ELR preset; ``all_versions``: Kafka's test runs every PartitionChangeRecord version,
    of which the trace expresses version 2 (the ELR on)."""
    c = Case(name, description, preset_name="kafka-4.1", n_brokers=n, replication_factor=n,
             min_insync_replicas=min_isr)
    if all_versions:
        c.unchecked("record versions 0 and 1 (metadata versions without the ELR), where the ELR stays empty")
    return c


@case(B + "testEligibleLeaderReplicas_IsrShrinkBelowMinISR")
def elr_isr_shrink_below_min_isr():
    c = _elr_case(B + "testEligibleLeaderReplicas_IsrShrinkBelowMinISR",
                  "Min ISR 3, replicas [1, 2, 3, 4] all in the ISR: target ISR [1, 2] puts the two leaving replicas "
                  "in the ELR [3, 4]; the leader stays.", n=4, min_isr=3)
    c.adapt("The target ISR is the leader's AlterPartition removing two lagging followers at once (2 and 3: Kafka's 3 "
            "and 4; Kafka's 1, 2 are the model's 0, 1).  The builder's election is PREFERRED in Kafka's test, ONLINE "
            "for AlterPartition; the leader is valid either way and stays.")
    c.adapt("Kafka's builder runs with useLastKnownLeaderInBalancedRecovery false, which no controller sets; the "
            "asserted lastKnownElr, empty, is the controller's too (the ISR does not become empty), so it is checked.")
    c.formed().produce(0).fetch(1, rounds=2)
    c.sleep(45_000)
    c.check_update(0, [0, 1], "the leader proposes ISR {0, 1}")
    c.alter(0)
    _last_change(c, "record: ISR [1, 2] (model [0, 1]), no leader change, ELR [3, 4] (model [2, 3])", isr=[0, 1],
                 leader=0, leader_epoch=0, elr=[2, 3])
    c.check_registration("the merged registration's ELR, and lastKnownElr empty", elr=[2, 3], last_known_elr=[])
    return c


@case(B + "testEligibleLeaderReplicas_IsrExpandAboveMinISR")
def elr_isr_expand_above_min_isr():
    c = _elr_case(B + "testEligibleLeaderReplicas_IsrExpandAboveMinISR",
                  "Min ISR 3, ISR [1, 2] and ELR [3]: target ISR [1, 2, 3] reaches min ISR, so the ELR is cleared.",
                  n=4, min_isr=3)
    c.adapt("Brokers 3 then 2 are fenced: 3 leaves while the ISR is still at min ISR (so it is not in the ELR: "
            "Kafka's 4, which is in lastKnownElr), 2 joins the ELR.  Broker 2 is then unfenced and fetches, and the "
            "leader's AlterPartition proposes ISR {0, 1, 2}.  Kafka's 1, 2, 3, 4 are the model's 0, 1, 2, 3.")
    c.unchecked("lastKnownElr [4] before the change: with the controller's useLastKnownLeaderInBalancedRecovery "
                "(true; the test sets false) lastKnownElr is set only when the ISR becomes empty and cleared as soon "
                "as the partition has a leader, so a partition with ISR [1, 2] never holds one; the asserted empty "
                "lastKnownElr after the change is checked")
    c.formed().fence(3, 2).replay()
    c.check_registration("ISR [1, 2], ELR [3] (model [0, 1] and [2])", isr=[0, 1], elr=[2])
    c.unfence(2).replay(0).fetch(2)
    c.check_update(0, [0, 1, 2], "the leader proposes ISR {0, 1, 2}")
    c.alter(0)
    _last_change(c, "record: ISR [1, 2, 3] (model [0, 1, 2]), ELR cleared, no leader change", isr=[0, 1, 2],
                 elr=[], leader=0, leader_epoch=0)
    c.check_registration("the merged registration: ELR and lastKnownElr empty", elr=[], last_known_elr=[])
    return c


@case(B + "testEligibleLeaderReplicas_IsrAddNewMemberNotInELR")
def elr_isr_add_member_not_in_elr():
    c = _elr_case(B + "testEligibleLeaderReplicas_IsrAddNewMemberNotInELR",
                  "Min ISR 3, ISR [1] and ELR [3]: adding 4, which is not in the ELR, gives ISR [1, 4] (still below min "
                  "ISR) and leaves the ELR as it is.", n=4, min_isr=3)
    c.adapt("Brokers 3, 2, 1 are fenced in that order: 3 leaves at min ISR (not in the ELR), 2 and 1 join the ELR, so "
            "the ELR is {1, 2} (Kafka's has one member, [3]; no protocol path leaves an ELR of one with the ISR at "
            "one member below a min ISR of 3).  Broker 3 is then unfenced and fetches, and the leader proposes "
            "ISR {0, 3}: the new member is not in the ELR, as Kafka's 4.")
    c.unchecked("lastKnownElr [2] is kept: " + "the builder with useLastKnownLeaderInBalancedRecovery false, which no controller sets (lastKnownElr then holds replicas that left the ELR; the controller's holds the last leader)")
    c.formed().fence(3, 2, 1).replay()
    c.check_registration("ISR {0}, ELR {1, 2}", isr=[0], elr=[1, 2])
    c.unfence(3).replay(0).fetch(3)
    c.check_update(0, [0, 3], "the leader proposes ISR {0, 3}")
    c.alter(0)
    _last_change(c, "record: ISR [1, 4] (model [0, 3]), no change to the ELR", isr=[0, 3], elr=[1, 2], leader=0)
    return c


@case(B + "testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr")
def elr_remove_unclean_shutdown():
    c = _elr_case(B + "testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr",
                  "Min ISR 3, ISR [1], ELR [2, 3]: a replica with an unclean shutdown, 3, leaves the ELR: ELR [2].",
                  n=4, min_isr=3)
    c.adapt("Kafka 3.7.0's controller never calls setUncleanShutdownReplicas (a TODO in "
            "ClusterControlManager.registerBroker); 3.9.0's handleBrokerUncleanShutdown does, when a broker registers "
            "without the clean-shutdown epoch, and that is the model's path: broker 2 (Kafka's 3) stops uncleanly "
            "and registers again.")
    c.adapt("Brokers 3, 2, 1 are fenced in that order (3 leaves at min ISR and is not in the ELR): ISR {0}, ELR "
            "{1, 2}.  Kafka's 1, 2, 3 are the model's 0, 1, 2.")
    c.unchecked("lastKnownElr [3] after the unclean shutdown: " + "the builder with useLastKnownLeaderInBalancedRecovery false, which no controller sets (lastKnownElr then holds replicas that left the ELR; the controller's holds the last leader)")
    c.formed().fence(3, 2, 1).replay()
    c.check_registration("ISR [1], ELR [2, 3] (model [0] and [1, 2])", isr=[0], elr=[1, 2])
    c.crash(2, clean=False).restart(2)
    why = "record: ELR [2] (model [1]), no leader change (then the new RegisterBrokerRecord)"
    c.check("quorum.log.-1.@type", "RegisterBrokerRecord", why)
    c.check("quorum.log.-2.@type", "PartitionChangeRecord", why)
    for name, value in (("elr", [1]), ("isr", [0]), ("leader", 0), ("leader_epoch", 0)):
        c.check(f"quorum.log.-2.registration.{name}", value, why)
    c.check_registration("the merged registration's ELR", elr=[1])
    return c


@case(B + "testKeepsDirectoriesAfterReassignment")
def keeps_directories_after_reassignment():
    c = Case(B + "testKeepsDirectoriesAfterReassignment",
             "[2, 1, 3] led by 1, each replica in a directory, reassigned to [3, 1, 5, 4] with 5's directory set: the "
             "record keeps 3's and 1's directories, gives 5 its own and 4 UNASSIGNED, and bumps the leader epoch "
             "(replica 2 leaves) with 1 still leading.",
             n_brokers=5, replication_factor=3, log_dirs=2, max_reassignments=1)
    c.adapt("Kafka's brokers 1, 2, 3, 4, 5 are the model's 0, 1, 2, 3, 4, so [2, 1, 3] led by 1 is the model's [0, 1, "
            "2] led by 0 (the same replicas in another order) and the target [3, 1, 5, 4] the model's [2, 0, 4, 3].  The "
            "builder is reached through the controller: the brokers first report their logs' directories "
            "(AssignReplicasToDirs); the admin's reassignment lists the removed replica too while it is in progress; "
            "5's directory is set by its own AssignReplicasToDirs once it has its log (Kafka's setDirectory), 4's is "
            "never reported; the leader's AlterPartition with every replica in the ISR completes the reassignment.")
    c.formed().report_dirs(0, 1, 2)
    c.check("quorum.partitions.0.directories", ["b0d0", "b1d0", "b2d0"], "each replica in a directory")
    c.reassign([2, 0, 4, 3])
    c.check("quorum.partitions.0.directories", ["b2d0", "b0d0", "UNASSIGNED", "UNASSIGNED", "b1d0"],
            "in progress: the staying replicas keep theirs, the new ones have their brokers' default (UNASSIGNED: "
            "several directories)")
    c.replay().report_dirs(4)
    c.check("quorum.partitions.0.directories.2", "b4d0", "5 (the model's 4) in its directory (setDirectory)")
    for _ in range(3):                                       # the leader adds one follower at a time
        c.catch_up()
        if c.s.brokers[0].alter_isr_unsent:
            c.alter(0).replay()
    c.check_registration("the record: replicas [3, 1, 5, 4] (model [2, 0, 4, 3]), leader 1 (model 0) in a new leader "
                         "epoch", replicas=[2, 0, 4, 3], leader=0, leader_epoch=1)
    c.check("quorum.partitions.0.directories", ["b2d0", "b0d0", "b4d0", "UNASSIGNED"],
            "directories [3's, 1's, 5's, UNASSIGNED]")
    return c


@case(B + "testUpdateDirectories")
def update_directories():
    c = Case(B + "testUpdateDirectories",
             "[2, 1, 3] led by 2, each replica in a directory: setDirectory(3, a new directory) and setDirectory(1, "
             "LOST) give directories [2's, LOST, 3's new one] and change nothing else.",
             log_dirs=2)
    c.adapt("Kafka's brokers 2, 1, 3 are the model's 0, 1, 2 ([0, 1, 2] led by 0).  The builder is reached through the "
            "controller's AssignReplicasToDirs, one per broker (each reports its own replica): two records, not one; "
            "and the controller, finding LOST offline, also takes 1 out of the ISR (generateLeaderAndIsrUpdates), "
            "which the builder alone does not.")
    c.unchecked("the builder's one record with no ISR or leader change: the controller adds the ISR change for the "
                "offline directory")
    c.formed().report_dirs(0, 1, 2)
    c.check("quorum.partitions.0.directories", ["b0d0", "b1d0", "b2d0"], "each replica in a directory")
    c.do(A.AssignReplicasToDirs(2, 0, "b2d1")).do(A.AssignReplicasToDirs(1, 0, "LOST"))
    c.check("quorum.partitions.0.directories", ["b0d0", "LOST", "b2d1"], "directories [2's, LOST, 3's new one]")
    c.check_registration("the leader stays (2, the model's 0)", leader=0, leader_epoch=0)
    return c


@case(B + "testEligibleLeaderReplicas_ElrCanBeElected")
def elr_can_be_elected():
    c = _elr_case(B + "testEligibleLeaderReplicas_ElrCanBeElected",
                  "ISR [1], ELR [3]; replica 1 goes offline and the target ISR is empty: 3, from the ELR, is elected; "
                  "the ISR becomes [3] and the ELR [1].", n=3, min_isr=2,
                  all_versions=False)
    c.adapt("Replicas [0, 1, 2] with min ISR 2 (Kafka: [1, 2, 3, 4], min ISR 3): broker 2 is fenced while the ISR is "
            "at min ISR (not in the ELR, as Kafka's 2 and 4), then broker 1 (ELR {1}); both are unfenced again, and "
            "the leader, 0, is fenced: the target ISR is empty.  Kafka's 1 and 3 are the model's 0 and 1.")
    c.unchecked("the parameter lastKnownLeaderEnabled = false (lastKnownElr [2] kept): " + "the builder with useLastKnownLeaderInBalancedRecovery false, which no controller sets (lastKnownElr then holds replicas that left the ELR; the controller's holds the last leader)")
    c.formed().fence(2, 1).replay()
    c.check_registration("ISR [1], ELR [3] (model [0] and [1])", isr=[0], elr=[1], leader=0)
    c.unfence(1).unfence(2)
    c.fence(0)
    _change_before_fence(c, "record: ISR [3], ELR [1], leader 3 (model [1], [0], 1)", isr=[1], elr=[0], leader=1)
    c.check_registration("the merged registration (lastKnownLeaderEnabled: lastKnownElr stays empty)", isr=[1],
                         elr=[0], leader=1, last_known_elr=[])
    return c


@case(B + "testEligibleLeaderReplicas_IsrCanShrinkToZero")
def elr_isr_can_shrink_to_zero():
    c = _elr_case(B + "testEligibleLeaderReplicas_IsrCanShrinkToZero",
                  "With the ELR, the ISR may shrink to nothing: every replica offline gives ISR [], no leader, and all "
                  "four in the ELR.", n=4, min_isr=4, all_versions=False)
    c.adapt("Kafka's builder takes the whole ISR away at once; here the controller fences the brokers one at a time "
            "(3, 2, 1, then the leader 0).  With min ISR 4 (Kafka: 3) the ISR is below min ISR from the first "
            "removal, so every replica that leaves joins the ELR, as in Kafka's single step.")
    c.unchecked("the parameter lastKnownLeaderEnabled = false (lastKnownElr stays empty): " + "the builder with useLastKnownLeaderInBalancedRecovery false, which no controller sets (lastKnownElr then holds replicas that left the ELR; the controller's holds the last leader)")
    c.unchecked("that the follow-up record has no lastKnownElr field (null): the model's record carries the whole "
                "registration, whose lastKnownElr is checked unchanged instead")
    c.formed().fence(3, 2, 1, 0)
    _change_before_fence(c, "record: ISR [], leader -1, ELR [1, 2, 3, 4] (model [0, 1, 2, 3])", isr=[], leader=-1,
                         elr=[0, 1, 2, 3])
    c.check_registration("the merged registration: lastKnownElr [1], the leader (model [0])", isr=[], elr=[0, 1, 2, 3],
                         leader=-1, last_known_elr=[0])
    c.crash(1, clean=False).restart(1)
    why = ("lastKnownLeaderEnabled: a further change with replica 2 (model 1) shut down uncleanly leaves lastKnownElr "
           "as it is, [1] (model [0])")
    c.check("quorum.log.-2.@type", "PartitionChangeRecord", why)
    c.check("quorum.log.-2.registration.last_known_elr", [0], why)
    c.check_registration(why, last_known_elr=[0], elr=[0, 2, 3])
    return c


def _leaderless(c: Case) -> Case:
    """Every broker fenced, the leader 0 last: ISR [], ELR all of them, no leader, lastKnownElr [0]."""
    c.formed().fence(2, 1, 0)
    c.check_registration("ISR [], ELR [0, 1, 2], no leader, lastKnownElr [0] (the last leader)", isr=[], elr=[0, 1, 2],
                         leader=-1, last_known_elr=[0])
    return c


@case(B + "testEligibleLeaderReplicas_ElectLastKnownLeader")
def elr_elect_last_known_leader():
    c = _elr_case(B + "testEligibleLeaderReplicas_ElectLastKnownLeader",
                  "ISR [], ELR [], lastKnownElr [1], no leader: the last known leader, 1, is elected (an unclean "
                  "election): ISR [1], RECOVERING, lastKnownElr cleared.", n=3, min_isr=3, all_versions=False)
    c.adapt("Replicas [0, 1, 2] with min ISR 3 (Kafka: [1, 2, 3, 4], min ISR 3); Kafka's 1 is the model's 0.  Every "
            "broker is fenced, the leader 0 last, so the ISR is empty, the ELR holds all three and lastKnownElr [0].  "
            "The ELR empties by unclean shutdowns (handleBrokerUncleanShutdown, 3.9.0): broker 0 stops uncleanly, "
            "registers again and is unfenced (no election: the ELR is not empty), then 1 and 2 stop uncleanly and "
            "register again; the builder run for 2's registration finds ISR and ELR empty and elects 0, which is "
            "acceptable, as every replica is in Kafka's test.")
    _leaderless(c)
    c.crash(0, clean=False).restart(0).unfence(0)
    c.check_registration("0 left the ELR (unclean shutdown); still no leader while the ELR is not empty",
                         isr=[], elr=[1, 2], leader=-1, last_known_elr=[0])
    c.crash(1, clean=False).restart(1)
    c.check_registration("ELR [2]", elr=[2], leader=-1, last_known_elr=[0])
    c.crash(2, clean=False).restart(2)
    why = "record: ISR [1], leader 1, RECOVERING, lastKnownElr [] (model: ISR [0], leader 0)"
    c.check("quorum.log.-2.@type", "PartitionChangeRecord", why)
    for name, value in (("isr", [0]), ("leader", 0), ("leader_recovery_state", "RECOVERING"), ("last_known_elr", []),
                        ("elr", [])):
        c.check(f"quorum.log.-2.registration.{name}", value, why)
    c.check_registration("the merged registration: ELR [], lastKnownElr [], ISR [1] (model [0])", elr=[],
                         last_known_elr=[], isr=[0], leader=0)
    return c


@case(B + "testEligibleLeaderReplicas_ElectLastKnownLeaderShouldFail")
def elr_elect_last_known_leader_should_fail():
    c = _elr_case(B + "testEligibleLeaderReplicas_ElectLastKnownLeaderShouldFail",
                  "ISR [], ELR [3] (not acceptable), lastKnownElr [1], no leader: the last known leader is not elected "
                  "while the ELR is not empty, and the builder makes no change.", n=3, min_isr=3, all_versions=False)
    c.adapt("Replicas [0, 1, 2] with min ISR 3; Kafka's 1 and 3 are the model's 0 and 2.  Every broker is fenced, the "
            "leader 0 last (ISR [], ELR [0, 1, 2], lastKnownElr [0]); 0 and 1 stop uncleanly and register again, "
            "which leaves ELR [2], 2 still fenced (not acceptable).  The builder run is the one for 0's unfencing "
            "(handleBrokerUnfenced runs it on every leaderless partition): no PartitionChangeRecord.")
    _leaderless(c)
    c.crash(0, clean=False).restart(0).crash(1, clean=False).restart(1).replay(0)
    c.check_registration("ISR [], ELR [3] (model [2]), lastKnownElr [1] (model [0]), no leader", isr=[], elr=[2],
                         leader=-1, last_known_elr=[0])
    epoch = c.s.quorum.partitions[0].partition_epoch       # the "no change" below: the same partition epoch
    c.wait_heartbeat(0)
    c.check("quorum.registrations.0.fenced", False, "0, the last known leader, is unfenced: acceptable")
    c.check("quorum.log.-1.@type", "UnfenceBrokerRecord", "no change to the partition: no PartitionChangeRecord")
    c.check_registration("the registration is as it was", isr=[], elr=[2], leader=-1, last_known_elr=[0],
                         partition_epoch=epoch)
    return c
