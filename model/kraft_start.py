"""KRaft starting states: a trace that begins from the quorum controller's metadata image.

For a KRaft preset (``cfg.kip_500``) a start gives, besides the disks (``brokers``, read exactly as in the
ZooKeeper era by ``start.read_disks``), a ``kraft`` part: the controller's image, and each live broker's
``metadata_offset``, how much of the metadata log it has replayed.

``{"kraft": {"registrations": [{"broker": 0, "broker_epoch": 100}, {"broker": 1, "broker_epoch": 101, "fenced":
true}], "partitions": [{"partition": 0, "leader": 0, "leader_epoch": 3, "partition_epoch": 7, "isr": [0],
"elr": [1, 2]}]}}`` is broker 0 registered in epoch 100, broker 1 fenced in epoch 101, broker 2 registered with the
first free epoch (0), and partition 0 led by 0 in leader epoch 3 at partition epoch 7 with ISR {0} and ELR {1, 2}.

The image becomes the model's state the way a broker learns it in Kafka: by replaying a metadata log.
``build_kraft_start`` writes the records a snapshot of that image holds, in the model's record vocabulary:

- a ``RegisterBrokerRecord`` per broker at the offset equal to its broker epoch (the model's broker epoch is the
  offset of its registration, as ClusterControlManager.registerBroker assigns it), fenced or not as the image says,
  in epoch order.  The offsets below a registration that no other one takes are earlier fenced incarnations of
  that broker (a ``RegisterBrokerRecord`` per offset), written with it as one batch;
- a ``PartitionChangeRecord`` (a PartitionRecord, ``created``) per partition, carrying its whole registration;
- a ``BrokerRegistrationChangeRecord`` per broker in controlled shutdown, after which the controller's
  controlled-shutdown offset for it is set (BrokerHeartbeatManager's soft state).

Each record but the earlier incarnations is its own batch, as the formed cluster's are, so a start that describes the
formed cluster gives exactly the state with no start.  The controller's own state (registrations, partitions, the
heartbeat manager's sessions starting now with offset 0 reported) is the image itself.  A live broker with
``metadata_offset`` 0 has replayed nothing (it catches up from offset 0, as a just-started broker with no
snapshot does); a larger offset, at a batch end past its own registration, is reached inside ``build_kraft_start``
by the model's own ``MetadataApply`` steps, so the broker's metadata cache, hosted partitions and fetchers are
the ones the model gives it.  A down broker has replayed nothing; ``clean_shutdown`` says it stopped cleanly (its
clean-shutdown file holds its broker epoch, KIP-966).

The ghost is derived as in the ZooKeeper era (``start.derive_ghost``): records below the image leader's HW are
committed and acknowledged in its epoch, unless ``acked`` says otherwise; the image's leader is recorded as
leading its epoch when it holds a log of the partition (a broker that led has one; the formed cluster's leaders,
which have not replayed their partition records yet, hold none).  Inconsistent images (a leader outside the ISR, an
ISR outside the replicas, an ELR overlapping the ISR, a fenced leader, an applied offset beyond the log...) are
refused with a one-line ``StartError``.
"""

from __future__ import annotations

from .config import ModelConfig
from .quorum_controller import imbalanced_partitions
from .state import (NO_LEADER, BrokerRegistration, BrokerRegistrationChangeRecord, ClusterState, PartitionChangeRecord,
                    PartitionRegistration, Quorum, RegisterBrokerRecord)
from .start import MAX_EPOCH, _fail, derive_ghost, read_disks, restarted_broker

#: the model writes every metadata record below a broker's registration: a bound on the synthesized log
MAX_BROKER_EPOCH = 100_000
HOLDER = "the controller's image"
RECOVERY_STATES = ("RECOVERED", "RECOVERING")


def _distinct_brokers(where: str, what: str, ids, n: int) -> tuple:
    if len(set(ids)) != len(ids) or not all(0 <= r < n for r in ids):
        _fail(f"{where}: {what} {list(ids)} must be distinct broker ids from 0 to {n - 1}")
    return tuple(ids)


def _registrations(cfg: ModelConfig, image: dict) -> list:
    """BrokerRegistration per broker: those given, the others unfenced with the first free epochs in id order."""
    n = cfg.n_brokers
    given: list = [None] * n
    for item in image.get("registrations", []):
        b = item["broker"]
        if not 0 <= b < n:
            _fail(f"kraft: registration of broker {b}, but the cluster has brokers 0 to {n - 1}")
        if given[b] is not None:
            _fail(f"kraft: broker {b}'s registration is given twice")
        epoch = item.get("broker_epoch")
        if epoch is not None and not 0 <= epoch <= MAX_BROKER_EPOCH:
            _fail(f"kraft: broker {b}'s broker epoch {epoch} (the offset of its RegisterBrokerRecord, 0 to "
                  f"{MAX_BROKER_EPOCH:,})")
        given[b] = (epoch, item.get("fenced", False), item.get("in_controlled_shutdown", False))
    taken = [g[0] for g in given if g is not None and g[0] is not None]
    if len(set(taken)) != len(taken):
        _fail(f"kraft: broker epochs {sorted(taken)} are not distinct (each is the offset of a RegisterBrokerRecord)")
    free = (e for e in range(n + len(taken)) if e not in set(taken))
    regs = []
    for b in range(n):
        epoch, fenced, shutting = given[b] if given[b] is not None else (None, False, False)
        regs.append(BrokerRegistration(next(free) if epoch is None else epoch, fenced, shutting))
    return regs


def _partition(cfg: ModelConfig, item: dict, replicas_default: tuple, regs: list) -> PartitionRegistration:
    """One PartitionRegistration of the image, checked as the controller would have written it."""
    n = cfg.n_brokers
    p = item["partition"]
    where = f"kraft, partition {p}"
    replicas = _distinct_brokers(where, "replicas", list(item.get("replicas", replicas_default)), n)
    if not replicas:
        _fail(f"{where}: replicas [] must be distinct broker ids from 0 to {n - 1}")
    isr = _distinct_brokers(where, "ISR", item["isr"], n)
    elr = _distinct_brokers(where, "ELR", item.get("elr", []), n)
    leader = item["leader"]
    if not set(isr) <= set(replicas):
        _fail(f"{where}: ISR {list(isr)} is not within the replicas {list(replicas)}")
    if not set(elr) <= set(replicas):
        _fail(f"{where}: ELR {list(elr)} is not within the replicas {list(replicas)}")
    if set(elr) & set(isr):
        _fail(f"{where}: ELR {list(elr)} overlaps the ISR {list(isr)} (an ELR member is a replica that left the ISR)")
    if elr and not cfg.eligible_leader_replicas:
        _fail(f"{where}: an ELR {list(elr)}, but this preset has no Eligible Leader Replicas (KIP-966)")
    if not isr and not cfg.eligible_leader_replicas:
        _fail(f"{where}: ISR [] (an empty ISR is written only with Eligible Leader Replicas, KIP-966)")
    if leader != NO_LEADER and leader not in isr:
        _fail(f"{where}: leader {leader} is not in the ISR {list(isr)}")
    if leader != NO_LEADER and regs[leader].fenced:
        _fail(f"{where}: leader {leader} is fenced (fencing a broker moves its leaderships, "
              f"ReplicationControlManager.handleBrokerFenced)")
    if leader == NO_LEADER:
        # PartitionChangeBuilder elects whenever the partition changes (a broker unfenced elects its leaderless ones)
        unclean = cfg.unclean_leader_election and cfg.kafka_12670    # 3.7.0's controller reads it as false
        candidates = replicas if unclean else (isr or elr)
        active = [r for r in candidates if not regs[r].fenced and not regs[r].in_controlled_shutdown]
        if active:
            _fail(f"{where}: no leader, but replica {active[0]} is an active broker the controller would have "
                  f"elected (from the {'replicas' if unclean else 'ISR' if isr else 'ELR'})")
    epoch, partition_epoch = item["leader_epoch"], item["partition_epoch"]
    if not 0 <= epoch <= MAX_EPOCH:
        _fail(f"{where}: leader epoch {epoch} (0 to {MAX_EPOCH})")
    if not epoch <= partition_epoch <= MAX_EPOCH:
        _fail(f"{where}: partition epoch {partition_epoch} ({epoch} to {MAX_EPOCH}: every leader epoch bump is a "
              f"partition change, so the partition epoch is at least the leader epoch)")
    recovery = item.get("leader_recovery_state", "RECOVERED")
    if recovery not in RECOVERY_STATES:
        _fail(f"{where}: leader recovery state {recovery!r} (one of {', '.join(RECOVERY_STATES)})")
    if recovery == "RECOVERING" and len(isr) > 1:
        _fail(f"{where}: leader recovery state RECOVERING with ISR {list(isr)} (a recovering leader keeps the ISR to "
              f"itself, KIP-704)")
    last = _distinct_brokers(where, "last known ELR", item.get("last_known_elr", []), n)
    if last:
        if not cfg.eligible_leader_replicas:
            _fail(f"{where}: a last known ELR {list(last)}, but this preset has no Eligible Leader Replicas (KIP-966)")
        if len(last) > 1 or not set(last) <= set(replicas):
            _fail(f"{where}: last known ELR {list(last)} must be at most one of the replicas {list(replicas)}")
        if leader != NO_LEADER:
            _fail(f"{where}: last known ELR {list(last)} with leader {leader} (it is cleared once the partition has a "
                  f"leader)")
    return PartitionRegistration(replicas, tuple(sorted(isr)), leader, epoch, partition_epoch, tuple(sorted(elr)),
                                 recovery, last)


def _partitions(cfg: ModelConfig, image: dict, assignment: tuple, regs: list) -> list:
    """The image's partitions; one not given is as the formed cluster created it (first replica leading, epoch 0)."""
    parts: list = [None] * cfg.n_partitions
    for item in image.get("partitions", []):
        p = item["partition"]
        if not 0 <= p < cfg.n_partitions:
            _fail(f"kraft: partition {p}, but the topic has partitions 0 to {cfg.n_partitions - 1}")
        if parts[p] is not None:
            _fail(f"kraft: partition {p} is given twice")
        parts[p] = _partition(cfg, item, assignment[p], regs)
    return [reg if reg is not None else PartitionRegistration(tuple(r), tuple(sorted(r)), r[0], 0, 0)
            for reg, r in zip(parts, assignment)]


def metadata_log(regs: list, parts: list) -> tuple:
    """MetadataImage.write (ClusterImage: BrokerRegistration.toRecord per broker; TopicImage:
    PartitionRegistration.toRecord per partition; Kafka 3.5.0), the records a snapshot of the image holds, in the
    model's vocabulary: (log, batch ends, controlled-shutdown offsets).  The model's RegisterBrokerRecord has no
    inControlledShutdown field, so a BrokerRegistrationChangeRecord says it; see the module docstring."""
    log: list = []
    ends: list = []
    for b in sorted(range(len(regs)), key=lambda x: regs[x].epoch):
        reg = regs[b]
        log.extend(RegisterBrokerRecord(b, k, True) for k in range(len(log), reg.epoch))   # earlier incarnations
        log.append(RegisterBrokerRecord(b, reg.epoch, reg.fenced))
        ends.append(len(log))
    for p, part in enumerate(parts):
        log.append(PartitionChangeRecord(p, part, True))
        ends.append(len(log))
    shutdown = [-1] * len(regs)
    for b, reg in enumerate(regs):
        if reg.in_controlled_shutdown:
            log.append(BrokerRegistrationChangeRecord(b, reg.epoch))
            ends.append(len(log))
            shutdown[b] = len(log)
    return tuple(log), tuple(ends), tuple(shutdown)


def _applied_offsets(disks, regs: list, log: tuple, ends: tuple) -> list:
    """Each broker's metadata offset, checked: 0, or a batch end past its own registration, within the log."""
    offsets = []
    for b, item in enumerate(disks.items):
        if "broker_epoch" in item:
            _fail(f"broker {b}: a KRaft broker's epoch is its registration's: give it in kraft.registrations")
        off = item.get("metadata_offset", 0)
        if off and not disks.alive[b]:
            _fail(f"broker {b} is down, so it has replayed no metadata (metadata offset {off})")
        if item.get("clean_shutdown") and disks.alive[b]:
            _fail(f"broker {b} is up: clean_shutdown is said of a broker that is down")
        if off > len(log):
            _fail(f"broker {b}: metadata offset {off} is beyond the metadata log's end {len(log)}")
        if off and off <= regs[b].epoch:
            _fail(f"broker {b}: metadata offset {off} is not past its own registration at offset {regs[b].epoch} "
                  f"(a broker publishes nothing before it has replayed it)")
        if off and off not in ends:
            _fail(f"broker {b}: metadata offset {off} is inside a batch (batches end at {list(ends)})")
        offsets.append(off)
    return offsets


def build_kraft_start(cfg: ModelConfig, start: dict, base: ClusterState) -> ClusterState:
    """The KRaft state ``start`` describes, over ``base`` (``step.initial_state(cfg)``, the formed cluster), as
    after QuorumController loads a snapshot and each broker's MetadataLoader replays it to its applied offset
    (Kafka 3.5.0); StartError if inconsistent.  ``start`` is decoded JSON whose types the trace schema has checked."""
    from .step import apply                       # step imports this module lazily, for a start only
    from . import actions as A

    if "zookeeper" in start:
        _fail("zookeeper: a KRaft preset (kip_500) keeps no partition state in ZooKeeper; give the controller's "
              "image as kraft")
    if cfg.log_dirs:
        _fail("kraft: a start cannot give log directories (log_dirs): begin from the formed cluster")
    image = start.get("kraft", {})
    regs = _registrations(cfg, image)
    parts = _partitions(cfg, image, base.zk.assignment, regs)
    bounds = {p: {"replicas": list(part.replicas), "leader_epoch": part.leader_epoch} for p, part in enumerate(parts)}
    disks = read_disks(cfg, start, bounds, base.zk.assignment, HOLDER)
    log, ends, shutdown = metadata_log(regs, parts)
    offsets = _applied_offsets(disks, regs, log, ends)

    n, t0 = cfg.n_brokers, base.now
    quorum = Quorum(log=log, batch_ends=ends, registrations=tuple(regs), partitions=tuple(parts),
                    last_contact_ms=(t0,) * n, reported_offsets=(0,) * n, shutdown_offsets=shutdown)
    if cfg.auto_leader_rebalance_enable and imbalanced_partitions(quorum):
        quorum.next_balance_ms = t0 + cfg.leader_imbalance_check_interval_ms   # scheduled at the controller's claim
    brokers = []
    for b, br in enumerate(base.brokers):
        br = restarted_broker(br, disks, b)
        if br.alive:
            br.broker_epoch = regs[b].epoch
            br.want_shutdown = regs[b].in_controlled_shutdown   # beginControlledShutdown was called
        else:
            br.broker_epoch = -1
            br.next_heartbeat_ms = -1
            if disks.items[b].get("clean_shutdown"):
                br.clean_shutdown_epoch = regs[b].epoch
        brokers.append(br)
    zk = base.zk._clone(None)
    zk.assignment = tuple(part.replicas for part in parts)
    leaders = tuple((p, part.leader_epoch, part.leader) for p, part in enumerate(parts)
                    if part.leader != NO_LEADER and disks.logs[part.leader][p] is not None)
    ghost = derive_ghost(start, parts, disks.logs, base.ghost, disks.n_records, leaders, HOLDER)
    s = ClusterState(now=t0, brokers=tuple(brokers), zk=zk, controllers=(), ghost=ghost, quorum=quorum)
    for b, off in enumerate(offsets):             # the broker-side image, by the model's own replay
        while s.brokers[b].metadata_offset < off:
            s = apply(cfg, s, A.MetadataApply(b))
    return s
