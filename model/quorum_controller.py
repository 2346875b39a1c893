"""The KRaft quorum controller (KIP-500, KIP-631; Kafka 3.5.0): registrations, heartbeats, fencing, AlterPartition.

The quorum is one linearizable metadata log (``state.Quorum``) with the active
controller's state built from it; every decision the controller makes is a
batch of records appended to the log in the step that makes it, and brokers
learn of it only by replaying the log (``broker_metadata.apply_next_record``).
Elections and ISR changes are ``PartitionChangeBuilder`` (``build_partition_change``),
as ReplicationControlManager uses it for AlterPartition, fencing and unfencing.
"""

from __future__ import annotations

import dataclasses

from . import actions as A
from . import errors as E
from .config import ModelConfig, directory_assignment
from .delayed import note_error
from .directories import broker_dirs, directories_after, has_online_dir, leader_acceptor
from .losses import note_unclean_election
from .node import replace_at
from .requests import AlterIsrPartition, AlterIsrPartitionResult, AlterIsrRequestData, AlterIsrResponseData
from .state import (NO_LEADER, REMOVED, BrokerLogDirsChangeRecord, BrokerRegistration, BrokerRegistrationChangeRecord,
                    ClusterState, ConfigRecord, FenceBrokerRecord, PartitionChangeRecord, PartitionRegistration, Quorum,
                    RegisterBrokerRecord, RemoveTopicRecord, UnfenceBrokerRecord)


def initial_quorum(assignment: tuple, n_brokers: int, now: int, cfg: ModelConfig | None = None) -> Quorum:
    """A formed cluster: every broker registered and unfenced (broker epoch = its record's offset), then each partition
    created (PartitionRecord) with its first replica leading the whole assignment in epoch 0 (one not created yet,
    ``initial_partitions``, has no registration: ``REMOVED``).  With directory assignment each broker registers its
    directories and each replica is placed in its broker's default directory."""
    dirs = [broker_dirs(cfg, b) if cfg is not None else () for b in range(n_brokers)]
    log = tuple(RegisterBrokerRecord(b, b, False, dirs[b]) for b in range(n_brokers))
    regs = tuple(BrokerRegistration(b, False, False, dirs[b]) for b in range(n_brokers))
    parts = tuple(PartitionRegistration(tuple(r), tuple(sorted(r)), r[0], 0, 0) if r else REMOVED for r in assignment)
    if cfg is not None and directory_assignment(cfg):
        q = Quorum(registrations=regs)
        parts = tuple(dataclasses.replace(reg, directories=directories_after(cfg, q, REMOVED, reg)) for reg in parts)
    log += tuple(PartitionChangeRecord(p, reg, True) for p, reg in enumerate(parts) if not reg.removed)
    return Quorum(log=log, batch_ends=tuple(range(1, len(log) + 1)),
                  registrations=regs,
                  partitions=parts, last_contact_ms=(now,) * n_brokers, reported_offsets=(0,) * n_brokers,
                  shutdown_offsets=(-1,) * n_brokers)


def is_active(q: Quorum, b: int) -> bool:
    """ClusterControlManager.isActive (Kafka 3.5.0): registered, not fenced, not in controlled shutdown."""
    reg = q.registrations[b] if 0 <= b < len(q.registrations) else None
    return reg is not None and not reg.fenced and not reg.in_controlled_shutdown


def is_unfenced(q: Quorum, b: int) -> bool:
    """Registered and not fenced (BrokerHeartbeatManager's unfenced brokers, whose sessions can expire)."""
    reg = q.registrations[b] if 0 <= b < len(q.registrations) else None
    return reg is not None and not reg.fenced


def session_expired(cfg: ModelConfig, q: Quorum, b: int, now: int) -> bool:
    """BrokerHeartbeatManager.hasValidSession negated (Kafka 3.5.0): no heartbeat for longer than the session timeout."""
    return now - q.last_contact_ms[b] > cfg.broker_session_timeout_ms


def _append(s: ClusterState, records: list) -> None:
    """QuorumController: the event's records are committed to the metadata log in order, as one batch."""
    if records:
        q = s.quorum_mut()
        q.log = q.log + tuple(records)
        q.batch_ends = q.batch_ends + (len(q.log),)


# --------------------------------------------------------------------------- PartitionChangeBuilder
def build_partition_change(cfg: ModelConfig, part: PartitionRegistration, target_isr: tuple, acceptable,
                           unclean_shutdown: tuple = (), target_recovery: str | None = None,
                           election: str | None = None, target_replicas: tuple | None = None,
                           target_adding: tuple | None = None, target_removing: tuple | None = None) -> tuple:
    """PartitionChangeBuilder.build (Kafka 3.5.0; KAFKA-15021 3.6.0; KIP-966's ELR 3.7.0, unclean shutdowns and
    lastKnownElr as 4.1.0 keeps them; reassignment 3.7.0): (the partition after the change, or None for a no-op, and
    whether the election was unclean).  ``election`` is the builder's Election: "ONLINE", "PREFERRED" or "UNCLEAN"
    (``topic_election`` gives the topic configuration's: ONLINE, or UNCLEAN where the controller reads it as on; None
    is the static configuration's, for callers outside the controller).
    ``target_replicas`` / ``target_adding`` / ``target_removing`` (None: the partition's) are a reassignment's."""
    elr_on = cfg.eligible_leader_replicas
    target_isr = tuple(target_isr)
    replicas = part.replicas if target_replicas is None else tuple(target_replicas)
    adding = part.adding_replicas if target_adding is None else tuple(target_adding)
    removing = part.removing_replicas if target_removing is None else tuple(target_removing)
    done = _complete_reassignment(replicas, adding, removing, target_isr)
    if done is not None:                                     # completeReassignmentIfNeeded
        replicas, target_isr, adding, removing = done + ((), ())
    target_elr = part.elr
    if elr_on:                                               # maybePopulateTargetElr
        if len(target_isr) >= min(cfg.min_insync_replicas, len(part.replicas)):
            target_elr = ()
        else:
            target_elr = tuple(sorted(r for r in set(part.elr) | set(part.isr)
                                      if r not in target_isr and r not in unclean_shutdown))

    def valid(r):                                            # isValidNewLeader: the ISR, or the ELR when it is empty
        return (r in target_isr or (not target_isr and r in target_elr)) and acceptable(r)

    unclean = False
    allow_unclean = (cfg.unclean_leader_election and cfg.kafka_12670) if election is None else election == "UNCLEAN"
    preferred = replicas[0] if replicas else NO_LEADER
    if election == "PREFERRED" and valid(preferred):         # electPreferredLeader: the preferred replica first
        leader = preferred
    elif valid(part.leader):                                 # electAnyLeader: keep a leader that qualifies
        leader = part.leader
    else:
        leader = next((r for r in replicas if valid(r)), NO_LEADER)
        if leader == NO_LEADER and _can_elect_last_known_leader(cfg, part, target_isr, target_elr, acceptable):
            leader, unclean = part.last_known_elr[0], True
        elif leader == NO_LEADER and allow_unclean:
            leader = next((r for r in replicas if acceptable(r)), NO_LEADER)
            unclean = leader != NO_LEADER
    leader_changed = leader != part.leader                   # tryElection sets record.leader
    if leader_changed and leader in target_elr:              # elected from the ELR: it alone is the ISR
        target_isr = (leader,)
        target_elr = tuple(r for r in target_elr if r != leader)
    isr = None
    if leader_changed and unclean:
        isr = (leader,)                                      # an unclean election sets the ISR to the new leader
    # triggerLeaderEpochBumpIfNeeded: a replica leaves the replicas (reassignment), or before 3.6 (KAFKA-15021) every
    # ISR shrink bumps the leader epoch too
    bump = (leader_changed or not set(part.replicas) <= set(replicas)
            or (not cfg.kafka_15021 and not set(part.isr) <= set(target_isr)))
    if isr is not None or not elr_on:
        target_elr = ()                                      # maybeUpdateRecordElr: unclean election, or ELR off
    if isr is None and (target_isr or elr_on) and tuple(sorted(target_isr)) != part.isr:
        isr = tuple(sorted(target_isr))                      # an empty ISR is written only with the ELR
    last_known_elr = part.last_known_elr
    if elr_on and (last_known_elr or isr == ()):             # else maybeUpdateLastKnownLeader changes nothing
        last_known_elr = _last_known_leader(part, isr, leader)
    recovery = part.leader_recovery_state if target_recovery is None else target_recovery
    if leader_changed and unclean:
        recovery = "RECOVERING"                              # tryElection: KIP-704 (3.2.0) marks the unclean leader
    if (not bump and isr is None and target_elr == part.elr and recovery == part.leader_recovery_state
            and last_known_elr == part.last_known_elr and replicas == part.replicas and adding == part.adding_replicas
            and removing == part.removing_replicas):
        return None, False                                   # changeRecordIsNoOp (setAssignmentChanges included)
    new = PartitionRegistration(replicas, part.isr if isr is None else isr, leader,
                                part.leader_epoch + 1 if bump else part.leader_epoch, part.partition_epoch + 1,
                                target_elr, recovery, last_known_elr, adding, removing)
    return new, unclean


def unclean_leader_election_enabled(cfg: ModelConfig, q: Quorum) -> bool:
    """ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic: Kafka 3.7.0 returns false whatever is set
    (``kafka_12670`` off); 3.9.0 (KAFKA-12670) reads the topic's dynamic value (a ConfigRecord), else the static one."""
    if not cfg.kafka_12670:
        return False
    dynamic = q.topic_unclean_leader_election
    return cfg.unclean_leader_election if dynamic is None else dynamic


def topic_election(cfg: ModelConfig, q: Quorum) -> str:
    """The Election ReplicationControlManager gives the builder for the topic (Kafka 3.7.0): UNCLEAN where
    uncleanLeaderElectionEnabledForTopic, else the builder's default, ONLINE."""
    return "UNCLEAN" if unclean_leader_election_enabled(cfg, q) else "ONLINE"


def _by_config(cfg: ModelConfig, q: Quorum, unclean: bool) -> bool:
    """An unclean election only the topic's dynamic unclean.leader.election.enable allowed (the static one off)."""
    return unclean and q.topic_unclean_leader_election is True and not cfg.unclean_leader_election and cfg.kafka_12670


def _complete_reassignment(replicas: tuple, adding: tuple, removing: tuple, target_isr: tuple):
    """PartitionReassignmentReplicas.maybeCompleteReassignment (Kafka 3.7.0): with a reassignment in progress and every
    adding replica in the target ISR, which keeps a member that is not being removed, (the replicas, the ISR) without
    the removing replicas; else None."""
    if not adding and not removing:
        return None
    isr = tuple(r for r in target_isr if r not in removing)
    kept = tuple(r for r in replicas if r not in removing)
    if not isr or not kept or any(r not in isr for r in adding):
        return None
    return kept, isr


def _can_elect_last_known_leader(cfg: ModelConfig, part: PartitionRegistration, target_isr: tuple,
                                 target_elr: tuple, acceptable) -> bool:
    """PartitionChangeBuilder.canElectLastKnownLeader (Kafka 4.1.0, KAFKA-19522; useLastKnownLeaderInBalancedRecovery
    left on by ReplicationControlManager): with the ISR and ELR both empty, the one last known leader, if acceptable
    (3.8.0-4.0.1, kafka_19522 off: acceptable or not, the test only logs)."""
    return (cfg.eligible_leader_replicas and not target_isr and not target_elr and len(part.last_known_elr) == 1
            and (not cfg.kafka_19522 or acceptable(part.last_known_elr[0])))


def _last_known_leader(part: PartitionRegistration, isr, leader: int) -> tuple:
    """PartitionChangeBuilder.maybeUpdateLastKnownLeader (Kafka 3.8.0-4.1.0): a change that empties the ISR records the
    leader the partition had; one that leaves it with a leader clears the field (the record's leader, set or not)."""
    if isr == () and part.last_known_elr != (part.leader,):
        return (part.leader,)
    if leader != NO_LEADER and part.last_known_elr:
        return ()
    return part.last_known_elr


def _change_partitions(cfg: ModelConfig, s: ClusterState, partitions, remove: int, add: int, records: list,
                       unclean_shutdown: int = NO_LEADER) -> None:
    """ReplicationControlManager.generateLeaderAndIsrUpdates (Kafka 3.5.0; 3.9.0 with an unclean shutdown): ``remove``
    (and a broker that shut down uncleanly) leaves each ISR and is no acceptable leader, ``add`` is acceptable even
    while still fenced; one PartitionChangeRecord per changed partition."""
    q = s.quorum
    gone = (remove, unclean_shutdown)

    def acceptable(r):
        return r not in gone and (r == add or is_active(q, r))

    election = topic_election(cfg, q)
    for p in partitions:
        part = q.partitions[p]
        target = tuple(r for r in part.isr if r not in gone)
        new, unclean = build_partition_change(cfg, part, target, leader_acceptor(q, part, acceptable),
                                              (unclean_shutdown,) if unclean_shutdown >= 0 else (), election=election)
        if new is not None:
            _commit_partition(cfg, s, p, new, unclean, records, _by_config(cfg, q, unclean))


def elect_leader(cfg: ModelConfig, s: ClusterState, p: int, election_type: str) -> str:
    """ReplicationControlManager.electLeaders / electLeader (Kafka 3.7.0), one partition of an admin's ElectLeaders
    (KIP-460) forwarded by a broker to the controller: ELECTION_NOT_NEEDED when the preferred replica leads (PREFERRED)
    or the partition has a leader (UNCLEAN); else PartitionChangeBuilder with that Election and active brokers as
    acceptable leaders, whose record is appended to the metadata log, or PREFERRED_LEADER_NOT_AVAILABLE /
    ELIGIBLE_LEADERS_NOT_AVAILABLE when it makes none."""
    part = registration(s.quorum, p)
    if part is None:
        return E.UNKNOWN_TOPIC_OR_PARTITION
    preferred = part.replicas[0] if part.replicas else NO_LEADER
    if (part.leader == preferred if election_type == "PREFERRED" else part.leader != NO_LEADER):
        return E.ELECTION_NOT_NEEDED
    new, unclean = build_partition_change(cfg, part, part.isr, _acceptor(s.quorum, part), election=election_type)
    if new is None:
        return E.PREFERRED_LEADER_NOT_AVAILABLE if election_type == "PREFERRED" else E.ELIGIBLE_LEADERS_NOT_AVAILABLE
    records: list = []
    _commit_partition(cfg, s, p, new, unclean, records)
    _append(s, records)
    return E.NONE


#: ReplicationControlManager.MAX_ELECTIONS_PER_IMBALANCE (Kafka 3.7.0): the most elections one balancing run makes
MAX_ELECTIONS_PER_IMBALANCE = 1000
#: QuorumController.maybeScheduleNextBalancePartitionLeaders (Kafka 3.7.0): a run rescheduled IMMEDIATELY is 10 ms away
BALANCE_IMMEDIATE_DELAY_MS = 10


def imbalanced_partitions(q: Quorum) -> list:
    """ReplicationControlManager.imbalancedPartitions (Kafka 3.7.0): the partitions whose leader is not their preferred
    replica (PartitionRegistration.hasPreferredLeader false, a leaderless one too), in partition order; a deleted or
    not yet created partition has no registration."""
    return [p for p, part in enumerate(q.partitions) if not part.removed and part.leader != part.replicas[0]]


def maybe_schedule_balance(cfg: ModelConfig, s: ClusterState) -> None:
    """QuorumController.maybeScheduleNextBalancePartitionLeaders (Kafka 3.7.0), run after every controller write event
    and at activation: with auto.leader.rebalance.enable, no run scheduled and some partition imbalanced, the
    maybeBalancePartitionLeaders event is scheduled leader.imbalance.check.interval.ms later (DEFERRED)."""
    q = s.quorum
    if cfg.auto_leader_rebalance_enable and q is not None and q.next_balance_ms < 0 and imbalanced_partitions(q):
        s.quorum_mut().next_balance_ms = s.now + cfg.leader_imbalance_check_interval_ms


def balance_partition_leaders(cfg: ModelConfig, s: ClusterState) -> None:
    """ReplicationControlManager.maybeBalancePartitionLeaders (Kafka 3.7.0), the quorum controller's scheduled
    maybeBalancePartitionLeaders event: PartitionChangeBuilder with the PREFERRED election and active brokers as
    acceptable leaders on each imbalanced partition (the preferred replica if in the ISR and active, else the leader
    kept, a leaderless partition's first valid replica; never unclean), at most MAX_ELECTIONS_PER_IMBALANCE records,
    appended as one batch; the next run is 10 ms away when the bound cut this one short (IMMEDIATELY), else
    rescheduled as after any write event (DEFERRED)."""
    s.quorum_mut().next_balance_ms = -1
    records: list = []
    cut = False
    for p in imbalanced_partitions(s.quorum):
        if len(records) >= MAX_ELECTIONS_PER_IMBALANCE:
            cut = True
            break
        part = s.quorum.partitions[p]
        new, unclean = build_partition_change(cfg, part, part.isr, _acceptor(s.quorum, part), election="PREFERRED")
        if new is not None:
            _commit_partition(cfg, s, p, new, unclean, records)
    _append(s, records)
    if records:
        s.ghost_mut().leader_balances += len(records)
    if cut:
        s.quorum_mut().next_balance_ms = s.now + BALANCE_IMMEDIATE_DELAY_MS
    maybe_schedule_balance(cfg, s)


def registration(q: Quorum, p: int) -> PartitionRegistration | None:
    """ReplicationControlManager's registration of partition p (topics.get(id).parts.get(p)), or None: no such
    partition, or its topic deleted."""
    part = q.partitions[p] if 0 <= p < len(q.partitions) else None
    return None if part is None or part.removed else part


def delete_topic(cfg: ModelConfig, s: ClusterState) -> None:
    """ReplicationControlManager.deleteTopics / deleteTopic (Kafka 3.7.0), an admin's DeleteTopics forwarded to the
    quorum controller: one RemoveTopicRecord appended to the metadata log; replaying it drops the topic's partition
    registrations, their ELR and lastKnownElr with them (replay(RemoveTopicRecord)); the brokers delete the logs when
    they replay it (``broker_metadata``).  The records of the deleted partitions are given up
    (``Ghost.deleted_partitions``)."""
    q = s.quorum_mut()
    gone = tuple(p for p, part in enumerate(q.partitions) if not part.removed)
    q.partitions = tuple(REMOVED for _ in q.partitions)
    q.topic_unclean_leader_election = None                   # replay(RemoveTopicRecord): deleteTopicConfigs
    zk = s.zk_mut()                                          # the assignment the rest of the model reads
    zk.assignment = ((),) * len(zk.assignment)
    g = s.ghost_mut()
    g.topic_deletions += 1
    g.deleted_partitions = tuple(sorted(set(g.deleted_partitions) | set(gone)))
    _append(s, [RemoveTopicRecord(gone)])


def creation_refusal(q: Quorum, replicas: tuple) -> str | None:
    """Why ReplicationControlManager.createTopic / createPartitions (Kafka 3.7.0) refuses a new partition on
    ``replicas`` (the model's assignment, as a manual one), or None: validateManualPartitionAssignment (an empty list,
    a broker twice or not registered), or every replica fenced or in controlled shutdown; each is
    INVALID_REPLICA_ASSIGNMENT (InvalidReplicaAssignmentException)."""
    if not replicas or len(set(replicas)) != len(replicas) or \
            any(not 0 <= r < len(q.registrations) or q.registrations[r] is None for r in replicas):
        return E.INVALID_REPLICA_ASSIGNMENT
    if not any(is_active(q, r) for r in replicas):
        return E.INVALID_REPLICA_ASSIGNMENT
    return None


def usable_brokers(q: Quorum) -> list:
    """BrokerHeartbeatManager.usableBrokers (Kafka 3.7.0): (broker, fenced) for every registered broker that is not
    shutting down in the heartbeat manager's soft state (controlledShutdownOffset, which a fence clears), by id."""
    return [(b, reg.fenced) for b, reg in enumerate(q.registrations)
            if reg is not None and (reg.fenced or q.shutdown_offsets[b] < 0)]


def place_replicas(q: Quorum, p: int, replication_factor: int) -> tuple:
    """StripedReplicaPlacer.place (Kafka 3.7.0) for one partition, p, over the usable brokers of one rack (the model's
    brokers have none), simplified to be deterministic: the unfenced brokers in id order, then the fenced ones, each
    list rotated by p where Kafka starts at a random offset.  Returns (INVALID_REPLICATION_FACTOR or None, replicas):
    refused when no usable broker is unfenced or the replication factor exceeds the usable brokers."""
    usable = usable_brokers(q)
    unfenced = [b for b, fenced in usable if not fenced]
    fenced = [b for b, f in usable if f]
    if replication_factor <= 0 or not unfenced or replication_factor > len(usable):
        return E.INVALID_REPLICATION_FACTOR, ()
    rotated = [xs[p % len(xs):] + xs[:p % len(xs)] for xs in (unfenced, fenced) if xs]
    return None, tuple([b for xs in rotated for b in xs][:replication_factor])


def create_partition(cfg: ModelConfig, s: ClusterState, p: int, replicas: tuple | None,
                     replication_factor: int = 0) -> str:
    """ReplicationControlManager.createTopic / createPartitions (Kafka 3.7.0): a PartitionRecord whose ISR is the
    active replicas and whose leader is the first of them (buildPartitionRegistration: isr.get(0)), leader and
    partition epoch 0, appended to the metadata log; or no record (the request's records are atomic) when
    ``creation_refusal`` refuses a manual assignment (``replicas``) or, with ``replicas`` None (no assignment), when
    the replica placer refuses ``replication_factor`` or places no active broker (INVALID_REPLICATION_FACTOR, "All
    brokers are currently fenced or in controlled shutdown").  The answer is kept per partition
    (``Ghost.responses.create_partitions``) and returned."""
    q = s.quorum
    s.ghost_mut().partition_creations += 1
    if replicas is None:
        error, replicas = place_replicas(q, p, replication_factor)
        if error is None and not any(is_active(q, r) for r in replicas):
            error = E.INVALID_REPLICATION_FACTOR
    else:
        error = creation_refusal(q, replicas)
    _note_creation(s, p, error or E.NONE)
    if error is not None:
        return error
    isr = tuple(r for r in replicas if is_active(q, r))
    reg = PartitionRegistration(tuple(replicas), tuple(sorted(isr)), isr[0], 0, 0)
    records: list = []
    _commit_partition(cfg, s, p, reg, False, records)
    records[-1] = PartitionChangeRecord(p, records[-1].registration, True)   # a PartitionRecord
    _append(s, records)
    return E.NONE


def _note_creation(s: ClusterState, p: int, error: str) -> None:
    """The controller's answer for partition p becomes the last one kept (``Ghost.responses.create_partitions``)."""
    g = s.ghost_mut()
    r = g.responses
    if r._tok is not g._tok:
        r = g.responses = r._clone(g._tok)
    rows = r.create_partitions or (None,) * len(s.quorum.partitions)
    r.create_partitions = replace_at(rows, p, error)


def alter_topic_config(cfg: ModelConfig, s: ClusterState, value: bool) -> None:
    """ConfigurationControlManager.incrementalAlterConfigs (Kafka 3.7.0), an admin's SET of the topic's
    unclean.leader.election.enable forwarded to the quorum controller: a ConfigRecord in a batch of its own when the
    value changes (a topic's unchanged value writes none), which the controller replays into its configData.  What the
    elections make of it is ``unclean_leader_election_enabled``'s (nothing in 3.7.0)."""
    s.ghost_mut().config_changes += 1
    if s.quorum.topic_unclean_leader_election is not value:
        s.quorum_mut().topic_unclean_leader_election = value
        _append(s, [ConfigRecord("unclean.leader.election.enable", value)])


def reassignment_refusal(cfg: ModelConfig, q: Quorum, p: int, target: tuple | None) -> str | None:
    """Why ReplicationControlManager.alterPartitionReassignment (Kafka 3.7.0) refuses a reassignment of p to
    ``target`` (None: cancel), or None: no such partition, a target that validateManualPartitionAssignment refuses
    (empty, a broker twice or not registered), a cancel with no reassignment in progress, or one whose revert would
    need an unclean election that the topic does not allow."""
    part = registration(q, p)
    if part is None:
        return "UNKNOWN_TOPIC_OR_PARTITION"
    if target is not None:
        if not target or len(set(target)) != len(target) or \
                any(not 0 <= r < len(q.registrations) or q.registrations[r] is None for r in target):
            return "INVALID_REPLICA_ASSIGNMENT"
        return None
    if not part.adding_replicas and not part.removing_replicas:
        return "NO_REASSIGNMENT_IN_PROGRESS"
    if _revert(part)[2] and not unclean_leader_election_enabled(cfg, q):
        return "INVALID_REPLICA_ASSIGNMENT"
    return None


def _revert(part: PartitionRegistration) -> tuple:
    """PartitionReassignmentRevert (Kafka 3.7.0): (the original replicas, the ISR without the adding replicas, whether
    that ISR had to be the first original replica alone: an unclean election)."""
    original = tuple(r for r in part.replicas if r not in part.adding_replicas)
    isr = tuple(r for r in part.isr if r not in part.adding_replicas)
    if isr:
        return original, isr, False
    return original, original[:1], True


def alter_partition_reassignment(cfg: ModelConfig, s: ClusterState, p: int, target: tuple | None) -> None:
    """ReplicationControlManager.alterPartitionReassignment (Kafka 3.7.0), one partition of an admin's
    AlterPartitionReassignments (KIP-455) forwarded to the quorum controller, which ``reassignment_refusal`` accepts:
    changePartitionReassignment (replicas = target + the removed ones, addingReplicas and removingReplicas set, each
    only when not empty, so an earlier reassignment's stay otherwise) or, for ``target`` None,
    cancelPartitionReassignment (PartitionReassignmentRevert); PartitionChangeBuilder with active brokers as
    acceptable leaders, its record appended to the metadata log.  The builder completes the reassignment at once when
    the ISR already allows it."""
    part = s.quorum.partitions[p]
    acceptable = _acceptor(s.quorum, part)                   # LeaderAcceptor
    if target is None:
        replicas, isr, _ = _revert(part)
        new, unclean = build_partition_change(cfg, part, isr, acceptable, election=topic_election(cfg, s.quorum),
                                              target_replicas=replicas, target_adding=(), target_removing=())
    else:
        removing = tuple(sorted(set(part.replicas) - set(target)))    # calculateDifference: a TreeSet, sorted
        adding = tuple(sorted(set(target) - set(part.replicas)))
        replicas = tuple(target) + removing
        new, unclean = build_partition_change(cfg, part, part.isr, acceptable, target_replicas=replicas,
                                              target_adding=adding or None, target_removing=removing or None,
                                              election="ONLINE")   # changePartitionReassignment sets no UNCLEAN
        s.ghost_mut().reassignments += 1                     # the budget counts reassignments, not cancels
    if new is not None:
        records: list = []
        _commit_partition(cfg, s, p, new, unclean, records, _by_config(cfg, s.quorum, unclean))
        _append(s, records)


def _acceptor(q: Quorum, part: PartitionRegistration):
    """LeaderAcceptor(clusterControl, partition) (Kafka 3.7.0): an active broker whose directory of the partition is
    online."""
    return leader_acceptor(q, part, lambda r: is_active(q, r))


def _commit_partition(cfg: ModelConfig, s: ClusterState, p: int, new: PartitionRegistration, unclean: bool,
                      records: list, by_config: bool = False) -> None:
    """The controller's registration of p becomes ``new`` and its PartitionChangeRecord joins ``records``; a change of
    replicas (a reassignment) moves the assignment the rest of the model reads (``ZkState.assignment``) with it.  With
    directory assignment the replicas keep their directories and new ones get their brokers' defaults
    (``directories_after``).  ``by_config``: an unclean election only the topic's dynamic configuration allowed
    (``Ghost.config_unclean_elections``)."""
    q = s.quorum
    if directory_assignment(cfg):
        new = dataclasses.replace(new, directories=directories_after(cfg, q, q.partitions[p], new))
    q = s.quorum_mut()
    if new.replicas != q.partitions[p].replicas:
        zk = s.zk_mut()
        zk.assignment = replace_at(zk.assignment, p, new.replicas)
    q.partitions = replace_at(q.partitions, p, new)
    records.append(PartitionChangeRecord(p, new))
    if unclean:
        note_unclean_election(s, p, new.leader_epoch, new.leader)
        if by_config:
            s.ghost_mut().config_unclean_elections += 1


# --------------------------------------------------------------------------- brokers
def register_broker(cfg: ModelConfig, s: ClusterState, b: int, previous_epoch: int = -1) -> int:
    """ClusterControlManager.registerBroker (Kafka 3.5.0; 3.9.0 with the ELR): a new incarnation registers fenced; its
    broker epoch is the offset of its RegisterBrokerRecord.  With the ELR, a broker whose previous broker epoch is not
    its registration's (it did not shut down cleanly) first leaves every ISR and ELR (handleBrokerUncleanShutdown).
    Returns the epoch."""
    old = s.quorum.registrations[b]
    if cfg.eligible_leader_replicas and (old is None or previous_epoch != old.epoch):
        records: list = []
        q = s.quorum
        hit = [p for p, part in enumerate(q.partitions) if b in part.isr or b in part.elr]
        _change_partitions(cfg, s, hit, NO_LEADER, NO_LEADER, records, unclean_shutdown=b)
        _append(s, records)
    q = s.quorum_mut()
    epoch = len(q.log)
    dirs = broker_dirs(cfg, b)                               # LogDirs, with directory assignment (3.7.0)
    q.registrations = replace_at(q.registrations, b, BrokerRegistration(epoch, True, False, dirs))
    q.last_contact_ms = replace_at(q.last_contact_ms, b, s.now)      # heartbeatManager.register
    q.reported_offsets = replace_at(q.reported_offsets, b, 0)
    q.shutdown_offsets = replace_at(q.shutdown_offsets, b, -1)
    _append(s, [RegisterBrokerRecord(b, epoch, True, dirs)])
    return epoch


def broker_heartbeat(cfg: ModelConfig, s: ClusterState, b: int, broker_epoch: int, metadata_offset: int,
                     want_shutdown: bool = False, offline_dirs: tuple = ()) -> tuple:
    """QuorumController.processBrokerHeartbeat / BrokerHeartbeatManager.calculateNextBrokerState (Kafka 3.5.0): touch
    the session; a fenced broker that has replayed its own RegisterBrokerRecord is unfenced; a broker that wants to
    shut down enters controlled shutdown while it leads partitions, and is told to shut down (and fenced) once it
    leads none and every active broker has replayed the records that moved its leaderships; with directory assignment
    (3.7.0) the heartbeat's offline directories are handled (``handle_directories_offline``).  Returns (error, whether
    the broker may shut down now)."""
    q = s.quorum
    reg = q.registrations[b]
    if reg is None or reg.epoch != broker_epoch:
        return E.STALE_BROKER_EPOCH, False                   # ClusterControlManager.checkBrokerEpoch
    q = s.quorum_mut()
    q.last_contact_ms = replace_at(q.last_contact_ms, b, s.now)
    q.reported_offsets = replace_at(q.reported_offsets, b, metadata_offset)
    records: list = []
    shutdown_now = False
    if reg.fenced:
        if want_shutdown:
            shutdown_now = True                              # FENCED -> SHUTDOWN_NOW
        elif metadata_offset > reg.epoch:                    # currentMetadataOffset >= registerBrokerRecordOffset
            records.append(UnfenceBrokerRecord(b, reg.epoch))   # handleBrokerUnfenced
            q.registrations = replace_at(q.registrations, b, dataclasses.replace(reg, fenced=False))
            leaderless = [p for p, part in enumerate(q.partitions) if part.leader == NO_LEADER and not part.removed]
            _change_partitions(cfg, s, leaderless, NO_LEADER, b, records)
    elif q.shutdown_offsets[b] >= 0:                        # BrokerHeartbeatState.shuttingDown: soft state
        if not _has_leaderships(q, b) and q.shutdown_offsets[b] <= _lowest_active_offset(s.quorum):
            shutdown_now = True                              # CONTROLLED_SHUTDOWN -> SHUTDOWN_NOW
    elif want_shutdown:
        if _has_leaderships(q, b):                           # UNFENCED -> CONTROLLED_SHUTDOWN
            records.append(BrokerRegistrationChangeRecord(b, reg.epoch))   # handleBrokerInControlledShutdown
            q.registrations = replace_at(q.registrations, b, dataclasses.replace(reg, in_controlled_shutdown=True))
            in_isr = [p for p, part in enumerate(q.partitions) if b in part.isr]
            _change_partitions(cfg, s, in_isr, b, NO_LEADER, records)
            q = s.quorum_mut()
            q.shutdown_offsets = replace_at(q.shutdown_offsets, b, len(q.log) + len(records))
        else:
            shutdown_now = True                              # UNFENCED -> SHUTDOWN_NOW
    if directory_assignment(cfg):
        handle_directories_offline(cfg, s, b, broker_epoch, offline_dirs, records)
    _append(s, records)
    if shutdown_now and not s.quorum.registrations[b].fenced:
        fence_broker(cfg, s, b)                              # SHUTDOWN_NOW: handleBrokerFenced
    return E.NONE, shutdown_now


def handle_directories_offline(cfg: ModelConfig, s: ClusterState, b: int, broker_epoch: int, offline_dirs: tuple,
                               records: list) -> None:
    """ReplicationControlManager.handleDirectoriesOffline (Kafka 3.7.0): for each reported directory b still has
    online (registration.directoryIntersection), b leaves the ISR and the leadership of every partition whose replica
    there is in that directory (generateLeaderAndIsrUpdates, as a fence of those partitions); then a
    BrokerRegistrationChangeRecord with b's remaining directories.  Directories not registered to b change nothing."""
    reg = s.quorum.registrations[b]
    gone = [d for d in reg.directories if d in offline_dirs]
    if not gone:
        return
    for d in gone:                                           # directoriesToPartitions.get(dir), in partition order
        hit = [p for p, part in enumerate(s.quorum.partitions) if d in part.directories]
        _offline_dir_updates(cfg, s, hit, b, records)
    left = tuple(d for d in reg.directories if d not in offline_dirs)
    q = s.quorum_mut()
    q.registrations = replace_at(q.registrations, b, dataclasses.replace(q.registrations[b], directories=left))
    records.append(BrokerLogDirsChangeRecord(b, broker_epoch, left))


def assign_replicas_to_dirs(cfg: ModelConfig, s: ClusterState, b: int, broker_epoch: int, p: int, d: str) -> str:
    """ReplicationControlManager.handleAssignReplicasToDirs (Kafka 3.7.0) for one partition of broker b's request:
    UNSUPPORTED_VERSION before metadata version 3.7-IV2 (UnsupportedVersionException), STALE_BROKER_EPOCH
    (checkBrokerEpoch), UNKNOWN_TOPIC_ID for a deleted topic, UNKNOWN_TOPIC_OR_PARTITION for a partition not created,
    NOT_LEADER_OR_FOLLOWER when b is no replica; else PartitionChangeBuilder with setDirectory(b, d) (its record when
    the directories change, or an election it makes), and when ``d`` is not online on b (hasOnlineDir) b leaves the
    partition's ISR and leadership (generateLeaderAndIsrUpdates "offline-dir-assignment").  The records are one
    batch; the answer is returned."""
    if not directory_assignment(cfg):
        return E.UNSUPPORTED_VERSION
    q = s.quorum
    reg = q.registrations[b] if 0 <= b < len(q.registrations) else None
    if reg is None or reg.epoch != broker_epoch:
        return E.STALE_BROKER_EPOCH
    part = q.partitions[p] if 0 <= p < len(q.partitions) else None
    if part is None or part.removed:                         # the topic deleted (no such id) or the partition not made
        return E.UNKNOWN_TOPIC_ID if all(x.removed for x in q.partitions) and s.ghost.topic_deletions else \
            E.UNKNOWN_TOPIC_OR_PARTITION
    if b not in part.replicas:
        return E.NOT_LEADER_FOR_PARTITION                    # code 6, NOT_LEADER_OR_FOLLOWER since 2.6
    offline = not has_online_dir(q, b, d)
    dirs = tuple(d if r == b else x for r, x in zip(part.replicas, part.directories))
    new, unclean = build_partition_change(cfg, part, part.isr, _acceptor(q, part))
    records: list = []
    if new is not None or dirs != part.directories:
        base = new if new is not None else dataclasses.replace(part, partition_epoch=part.partition_epoch + 1)
        _commit_partition(cfg, s, p, dataclasses.replace(base, directories=dirs), unclean, records)
    if offline:
        _offline_dir_updates(cfg, s, [p], b, records)
    _append(s, records)
    return E.NONE


def _offline_dir_updates(cfg: ModelConfig, s: ClusterState, partitions: list, b: int, records: list) -> None:
    """generateLeaderAndIsrUpdates with b to remove (Kafka 3.7.0) for partitions whose replica on b is in an offline
    directory; the leaderships it moves off b are counted (``Ghost.dir_leader_moves``)."""
    led = [p for p in partitions if s.quorum.partitions[p].leader == b]
    _change_partitions(cfg, s, partitions, b, NO_LEADER, records)
    moved = sum(1 for p in led if s.quorum.partitions[p].leader != b)
    if moved:
        s.ghost_mut().dir_leader_moves += moved


def _has_leaderships(q: Quorum, b: int) -> bool:
    """BrokersToIsrs.hasLeaderships: b leads some partition."""
    return any(part.leader == b for part in q.partitions)


def _lowest_active_offset(q: Quorum) -> int:
    """BrokerHeartbeatManager.lowestActiveOffset: the least metadata offset an active broker last reported."""
    offsets = [q.reported_offsets[b] for b in range(len(q.registrations)) if is_active(q, b)]
    return min(offsets) if offsets else 1 << 62


def fence_broker(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """QuorumController.maybeFenceOneStaleBroker / ReplicationControlManager.handleBrokerFenced (Kafka 3.5.0): b leaves
    every ISR it is in but the last, leaders move, then the FenceBrokerRecord."""
    q = s.quorum
    records: list = []
    in_isr = [p for p, part in enumerate(q.partitions) if b in part.isr]
    _change_partitions(cfg, s, in_isr, b, NO_LEADER, records)
    reg = s.quorum.registrations[b]
    q = s.quorum_mut()
    q.registrations = replace_at(q.registrations, b, dataclasses.replace(reg, fenced=True))
    records.append(FenceBrokerRecord(b, reg.epoch))
    _append(s, records)


def controller_failover(cfg: ModelConfig, s: ClusterState) -> None:
    """QuorumController.renounce / claim and ClusterControlManager.activate (Kafka 3.5.0): another member of the quorum
    becomes the active controller with the same log; its BrokerHeartbeatManager starts afresh, so every registered
    broker's session starts now with no metadata offset reported and no controlled shutdown in progress (the
    registrations keep theirs); AlterPartition requests the old controller committed but had not answered fail with
    NOT_CONTROLLER, and their items go again to the new one (one not yet handled is handled by the new one, as the
    channel's retry would); the old one's leader-balancing run is cancelled, and the new one schedules its own."""
    q = s.quorum_mut()
    n = len(q.registrations)
    q.last_contact_ms = (s.now,) * n                         # heartbeatManager.touch(id, fenced, -1)
    q.reported_offsets = (-1,) * n
    q.shutdown_offsets = (-1,) * n
    q.next_balance_ms = -1                                   # renounce: cancelMaybeBalancePartitionLeaders
    for br in s.brokers:
        inflight = br.alter_isr_inflight
        if inflight is not None and inflight.response is not None and inflight.response.error == E.NONE:
            s.broker_mut(br.broker_id).alter_isr_inflight = dataclasses.replace(
                inflight, response=AlterIsrResponseData(E.NOT_CONTROLLER))
    s.ghost_mut().controller_moves += 1
    maybe_schedule_balance(cfg, s)                           # claim: the activation event's processBatchEndOffset


def lose_heartbeats(cfg: ModelConfig, s: ClusterState, b: int) -> None:
    """A fault: b's heartbeats stop reaching the controller for a session timeout (a network partition or a long
    pause); the controller's last contact with b is that long ago, so the stale-broker check may fence it."""
    q = s.quorum_mut()
    q.last_contact_ms = replace_at(q.last_contact_ms, b, s.now - cfg.broker_session_timeout_ms - 1)
    s.ghost_mut().session_expirations += 1


# --------------------------------------------------------------------------- AlterPartition
def alter_partition(cfg: ModelConfig, s: ClusterState, req) -> AlterIsrResponseData:
    """ReplicationControlManager.alterPartition / validateAlterPartitionData (Kafka 3.5.0; KIP-841 3.3.0)."""
    q = s.quorum
    b = req.broker_id
    reg = q.registrations[b] if 0 <= b < len(q.registrations) else None
    if reg is None or reg.epoch != req.broker_epoch:
        return AlterIsrResponseData(E.STALE_BROKER_EPOCH)    # checkBrokerEpoch throws: the whole request fails
    results, records = [], []
    for item in req.partitions:
        p = item.partition
        part = s.quorum.partitions[p] if 0 <= p < len(s.quorum.partitions) else None
        # a deleted topic: no topic of the request's id (a 3.7.0 broker sends version 3, with topic ids)
        error = E.UNKNOWN_TOPIC_ID if part is not None and part.removed else _validate(cfg, s.quorum, b, part, item)
        if error != E.NONE:
            results.append(AlterIsrPartitionResult(p, error))
            continue
        new, unclean = build_partition_change(cfg, part, tuple(item.new_isr), _acceptor(s.quorum, part),
                                              target_recovery=item.leader_recovery_state,
                                              election=topic_election(cfg, s.quorum))
        if new is not None:
            _commit_partition(cfg, s, p, new, unclean, records, _by_config(cfg, s.quorum, unclean))
            if new.leader != b:
                results.append(AlterIsrPartitionResult(p, E.NEW_LEADER_ELECTED))
                continue
            part = new
        results.append(AlterIsrPartitionResult(p, E.NONE, part.leader, part.leader_epoch, part.isr,
                                               part.partition_epoch))
    _append(s, records)
    return AlterIsrResponseData(E.NONE, tuple(results))


def _validate(cfg: ModelConfig, q: Quorum, b: int, part, item) -> str:
    """ReplicationControlManager.validateAlterPartitionData (Kafka 3.5.0), in its order."""
    if part is None:
        return E.UNKNOWN_TOPIC_OR_PARTITION
    check_version = cfg.partition_epoch_check
    if item.leader_epoch > part.leader_epoch or (check_version and item.zk_version > part.partition_epoch):
        return E.NOT_CONTROLLER                              # the leader knows more: this controller is behind
    if item.leader_epoch < part.leader_epoch:
        return E.FENCED_LEADER_EPOCH
    if b != part.leader:
        return E.INVALID_REQUEST
    if check_version and item.zk_version < part.partition_epoch:
        return E.INVALID_UPDATE_VERSION
    new_isr = tuple(item.new_isr)
    if len(set(new_isr)) != len(new_isr) or not set(new_isr) <= set(part.replicas) or part.leader not in new_isr:
        return E.INVALID_REQUEST                             # Replicas.validateIsr, the leader in its own ISR
    if item.leader_recovery_state == "RECOVERING" and len(new_isr) > 1:
        return E.INVALID_REQUEST                             # KIP-704: a recovering leader keeps the ISR to itself
    if part.leader_recovery_state == "RECOVERED" and item.leader_recovery_state == "RECOVERING":
        return E.INVALID_REQUEST                             # KIP-704: no way back from RECOVERED
    if cfg.kafka_13916 and any(not is_active(q, r) for r in new_isr):
        return E.INELIGIBLE_REPLICA                          # ineligibleReplicasForIsr: unregistered, fenced, shutting down
    if cfg.kafka_13916 and cfg.kip_903 and any(e != -1 and q.registrations[r].epoch != e for r, e in zip(new_isr, item.isr_epochs)):
        return E.INELIGIBLE_REPLICA                          # ... or a broker epoch mismatch (KIP-903, 3.5.0)
    return E.NONE


# --------------------------------------------------------------------------- requests no leader of the model sends
def forged_alter_partition(cfg: ModelConfig, s: ClusterState, a) -> str:
    """ReplicationControlManager.alterPartition (Kafka 3.7.0) on an AlterPartition no leader of the model sends
    (``AlterPartitionReceived``, as ReplicationControlManagerTest writes them by hand): every check and error of a
    leader's request; the answer goes to no one (the sender's own request, if any, keeps its slot).  Returns the
    answer: the request's error, else its partition's."""
    item = _item_of(a)
    defect = alter_partition_defect(cfg, s.quorum, a.broker, a.broker_epoch, item)
    response = alter_partition(cfg, s, AlterIsrRequestData(a.broker, a.broker_epoch, (item,)))
    answer = response.error if response.error != E.NONE else response.partitions[0].error
    note_error(s, answer)
    g = s.ghost_mut()
    g.forged_answers = g.forged_answers + (answer,)
    if defect is not None and answer in (E.NONE, E.NEW_LEADER_ELECTED):     # a record written, or a no-op answered
        g.forged_accepted = g.forged_accepted + ((a.partition, defect),)
    return answer


def alter_partition_defect(cfg: ModelConfig, q: Quorum, b: int, broker_epoch: int, item) -> str | None:
    """What makes an AlterPartition one the quorum controller must refuse (the contract of
    ReplicationControlManager.alterPartition, Kafka 3.7.0, stated as what a valid request is, not in its check order),
    or None: only the partition's leader, in the incarnation the controller registers, at the registration's leader and
    partition epochs, may propose distinct replicas of the partition that include itself, each registered, unfenced
    and not shutting down (KIP-841), with a recovery state KIP-704 allows."""
    reg = q.registrations[b] if 0 <= b < len(q.registrations) else None
    part = q.partitions[item.partition] if 0 <= item.partition < len(q.partitions) else None
    isr = tuple(item.new_isr)
    facts = (
        (reg is None or reg.epoch != broker_epoch, "a broker epoch the controller does not register"),
        (part is None or part.removed, "no such partition"),
        (part is not None and item.leader_epoch != part.leader_epoch, "another leader epoch"),
        (part is not None and cfg.partition_epoch_check and item.zk_version != part.partition_epoch,
         "another partition epoch"),
        (part is not None and b != part.leader, "a sender that does not lead"),
        (part is not None and (len(set(isr)) != len(isr) or not set(isr) <= set(part.replicas)
                               or b not in isr), "an ISR that is not distinct replicas with the sender"),
        (item.leader_recovery_state == "RECOVERING" and (len(isr) > 1 or part is None
                                                          or part.leader_recovery_state == "RECOVERED"),
         "a recovery state KIP-704 does not allow"),
        (cfg.kafka_13916 and any(not is_active(q, r) for r in isr), "an ISR member that is not active"),
    )
    return next((why for bad, why in facts if bad), None)


def forged_alter_partitions(cfg: ModelConfig, s: ClusterState) -> tuple:
    """The AlterPartitionReceived values the engines draw: for each partition with a leader, the request its leader
    could send to keep the registration as it is, wrong in one field (Kafka's testInvalidAlterPartitionRequests'
    cases): another registered broker as sender, the leader's broker epoch, leader epoch or partition epoch one off,
    the ISR with a broker that holds no replica, without the leader, with the leader twice or with a replica that is not
    active, RECOVERING with more than the leader or out of RECOVERED.  Each is one the controller must refuse, none a
    valid change of the ISR (the controller cannot tell a lagging replica from a caught-up one)."""
    q = s.quorum
    out = []
    for p, part in enumerate(q.partitions):
        lead = part.leader
        if part.removed or lead == NO_LEADER or q.registrations[lead] is None:
            continue
        epoch = q.registrations[lead].epoch
        base = A.AlterPartitionReceived(lead, p, epoch, part.leader_epoch, part.partition_epoch,
                                        ",".join(map(str, part.isr)), part.leader_recovery_state)
        variants = [dataclasses.replace(base, broker=b, broker_epoch=reg.epoch)
                    for b, reg in enumerate(q.registrations) if reg is not None and b != lead]
        variants.append(dataclasses.replace(base, broker_epoch=epoch - 1 if epoch else epoch + 1))
        for field in ("leader_epoch", "partition_epoch"):
            value = getattr(base, field)
            variants += [dataclasses.replace(base, **{field: v}) for v in (value - 1, value + 1) if v >= 0]
        outsider = next(r for r in range(len(q.registrations) + 1) if r not in part.replicas)
        inactive = [r for r in part.replicas if r not in part.isr and not is_active(q, r)]
        for isr in ((*part.isr, outsider), tuple(r for r in part.isr if r != lead), (*part.isr, lead),
                    *((*part.isr, r) for r in inactive[:1])):
            variants.append(dataclasses.replace(base, isr=",".join(map(str, isr))))
        if part.leader_recovery_state == "RECOVERED":
            variants.append(dataclasses.replace(base, isr=str(lead), leader_recovery_state="RECOVERING"))
        others = [r for r in part.replicas if r != lead][:1]
        variants.append(dataclasses.replace(base, isr=",".join(map(str, (lead, *others))),
                                            leader_recovery_state="RECOVERING"))
        out += [v for v in variants if alter_partition_defect(cfg, q, v.broker, v.broker_epoch, _item_of(v))]
    return tuple(out)


def _item_of(a) -> AlterIsrPartition:
    """The partition data an AlterPartitionReceived carries."""
    isr = A.parse_isr(a.isr)
    return AlterIsrPartition(a.partition, a.leader_epoch, isr, a.partition_epoch, (-1,) * len(isr),
                             a.leader_recovery_state)


# --------------------------------------------------------------------------- heartbeats the controller's queue expires
def process_expired_heartbeat(cfg: ModelConfig, s: ClusterState, b: int, broker_epoch: int,
                              metadata_offset: int) -> None:
    """ReplicationControlManager.processExpiredBrokerHeartbeat / BrokerHeartbeatManager.touch (Kafka 3.7.0): a
    heartbeat that timed out in the controller's event queue touches the session and records the metadata offset
    (a fenced broker leaves controlled shutdown), with none of the state changes the heartbeat would make; a stale
    broker epoch (checkBrokerEpoch) touches nothing."""
    reg = s.quorum.registrations[b]
    if reg is None or reg.epoch != broker_epoch:
        return
    q = s.quorum_mut()
    q.last_contact_ms = replace_at(q.last_contact_ms, b, s.now)
    q.reported_offsets = replace_at(q.reported_offsets, b, metadata_offset)
    if reg.fenced:
        q.shutdown_offsets = replace_at(q.shutdown_offsets, b, -1)
