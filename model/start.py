"""Starting states: a scenario that begins from a given cluster rather than an empty one.

A trace's optional ``start`` object describes, in Kafka's terms, what the disks and ZooKeeper hold
when the scenario begins: each broker's logs (records with their leader epochs, the
leader-epoch-checkpoint, the log start offset, the recovery point, the replication-offset-checkpoint
entry), whether its process is up and the czxid of its registration, and the partition state znodes
(leader, leader epoch, ISR, replicas, the controller epoch that wrote them, zkVersion) with
``/controller_epoch``.  The processes have just started (as after ``KafkaServer.startup``): they host no
partition until a controller's LeaderAndIsr reaches them, and no controller is elected yet, so the
first actions are usually ``ElectController`` and deliveries.  Omitted parts take defaults: a broker
not listed is up with empty disks, an epoch cache not given is the one the records' epochs imply, a
log is flushed, a znode's controller epoch is ``/controller_epoch``'s.

``{"brokers": [{"broker": 0, "logs": [{"partition": 0, "records": [[0, 1], [1, 1], [2, 2]],
"hw_checkpoint": 2}]}], "zookeeper": {"controller_epoch": 3, "partitions": [{"partition": 0,
"leader": 0, "leader_epoch": 2, "isr": [0, 1]}]}}`` is a log of three records (epochs 1, 1, 2, so the
cache is ``[[1, 0], [2, 2]]``) on broker 0, leader of partition 0 in epoch 2 with ISR {0, 1}.

``build_start`` checks that the start is consistent (a HW checkpoint above the log end, an epoch
cache that does not match the records' epochs, a leader outside the ISR, an ISR outside the
replicas, an epoch above the one ZooKeeper holds... are refused with a one-line ``StartError``) and
returns the ``ClusterState``.  The ghost is derived: a record is identified by its partition, offset
and leader epoch (the same on every broker that holds it), the records below the ZooKeeper leader's
HW are committed and, unless ``acked`` lists others (``[[partition, offset], ...]``), acknowledged to
acks=all producers in the leader's epoch, and the ZooKeeper leader is recorded as leading its epoch,
so the invariants keep their meaning.  A start that breaks an invariant (two logs that diverge
below a matching epoch...) is well formed: replay reports the violation at step 0 or later.

A KRaft preset (``cfg.kip_500``) has no ZooKeeper: its start gives the quorum controller's metadata image
(``kraft``: broker registrations and partition registrations with their ISR, ELR, epochs and leader recovery
state) and each broker's applied metadata offset, and ``model/kraft_start.py`` builds it.  The disks are read by
the same code (``read_disks``), and the ghost derived by it (``derive_ghost``).  The image is not poked into the
state: it becomes the metadata log a snapshot of it holds, in the model's own records, and a broker that has
applied part of that log gets there by the model's own replay, so nothing can disagree with the model.  A
``zookeeper`` part for a KRaft preset, or a ``kraft`` part, ``metadata_offset`` or ``clean_shutdown`` for a
ZooKeeper preset, is refused.
"""

from __future__ import annotations

from .config import ModelConfig
from .log import Log
from .state import NO_LEADER, Broker, ClusterState, Ghost, LeaderIsrAndControllerEpoch, ZooKeeper

#: Kafka's types: leader epochs are Int, offsets Long
MAX_EPOCH = 2**31 - 1
MAX_OFFSET = 2**63 - 1
#: records in one start, summed over every log (the trace reader's other limits bound the rest)
MAX_START_RECORDS = 1_000_000


class StartError(ValueError):
    """A start that is not a consistent cluster, with a one-line reason."""


def _fail(msg: str):
    raise StartError(msg)


def derived_epoch_cache(records) -> tuple:
    """The leader-epoch cache a log's records imply: (epoch, offset of its first record) per run of an epoch."""
    cache = []
    for offset, epoch in records:
        if not cache or cache[-1][0] != epoch:
            cache.append((epoch, offset))
    return tuple(cache)


def _check_records(where: str, lso: int, records) -> None:
    prev = None
    for i, rec in enumerate(records):
        offset, epoch = rec[0], rec[1]
        if len(rec) > 2:
            _fail(f"{where}: record at offset {offset} has a timestamp; record timestamps are not modelled yet")
        if offset != lso + i:
            _fail(f"{where}: record {i} has offset {offset}, expected {lso + i} (offsets are contiguous from "
                  f"the log start offset {lso})")
        if not 0 <= epoch <= MAX_EPOCH:
            _fail(f"{where}: record at offset {offset} has leader epoch {epoch} (0 to {MAX_EPOCH})")
        if prev is not None and epoch < prev:
            _fail(f"{where}: leader epochs go down at offset {offset} ({epoch} after {prev})")
        prev = epoch


def _check_cache(where: str, lso: int, leo: int, records, cache) -> None:
    """LeaderEpochFileCache's own rules, and agreement with the records' epochs (Log.loadSegments keeps both)."""
    for (e1, o1), (e2, o2) in zip(cache, cache[1:]):
        if not (e1 < e2 and o1 < o2):
            _fail(f"{where}: epoch cache entries [{e1}, {o1}] then [{e2}, {o2}]: epochs and start offsets must "
                  f"both increase")
    for e, o in cache:
        if not 0 <= e <= MAX_EPOCH:
            _fail(f"{where}: epoch cache entry [{e}, {o}] has leader epoch {e} (0 to {MAX_EPOCH})")
        if o < lso:
            _fail(f"{where}: epoch cache entry [{e}, {o}] starts below the log start offset {lso} "
                  f"(LeaderEpochFileCache.truncateFromStart moves it up to the log start)")
        if o > leo:
            _fail(f"{where}: epoch cache entry [{e}, {o}] starts above the log end offset {leo}")
    # every record's epoch is the epoch of the last entry starting at or below its offset
    derived = derived_epoch_cache((r[0], r[1]) for r in records)
    in_log = tuple(x for x in cache if x[1] < leo)
    if in_log != derived:
        _fail(f"{where}: epoch cache {[list(x) for x in cache]} does not match the records' epochs "
              f"(they imply {[list(x) for x in derived]})")
    if len(in_log) < len(cache) and records and cache[-1][0] <= records[-1][1]:
        _fail(f"{where}: epoch cache entry {list(cache[-1])} at the log end offset has an epoch not above the "
              f"last record's ({records[-1][1]})")


def _log(cfg: ModelConfig, b: int, item: dict, parts: dict, assignment: tuple,
         holder: str) -> tuple[int, Log, int | None]:
    """One log of broker b; ``parts`` maps a partition to its state (replicas, leader epoch) as ``holder`` keeps it."""
    p = item["partition"]
    where = f"broker {b}, partition {p}"
    if not 0 <= p < cfg.n_partitions:
        _fail(f"broker {b}: a log of partition {p}, but the topic has partitions 0 to {cfg.n_partitions - 1}")
    lso = item.get("log_start_offset", 0)
    records = item.get("records", [])
    if not 0 <= lso <= MAX_OFFSET - len(records):
        _fail(f"{where}: log start offset {lso} is out of range")
    _check_records(where, lso, records)
    leo = lso + len(records)
    if not cfg.records_have_epochs(p):
        # log.message.format.version below 0.11: no leader-epoch cache (Log.leaderEpochCache is None, Kafka 2.4.0)
        if item.get("epoch_cache"):
            _fail(f"{where}: an epoch cache, but partition {p}'s message format is below 0.11 (no leader epochs)")
        cache = ()
    else:
        cache = tuple((x[0], x[1]) for x in item["epoch_cache"]) if "epoch_cache" in item else \
            derived_epoch_cache((r[0], r[1]) for r in records)
        _check_cache(where, lso, leo, records, cache)
    rp = item.get("recovery_point", leo)
    if not lso <= rp <= leo:
        _fail(f"{where}: recovery point {rp} is outside the log [{lso}, {leo}]")
    hw = item.get("hw_checkpoint")
    if hw is not None and hw > leo:
        _fail(f"{where}: HW checkpoint {hw} is above the log end offset {leo}")
    if hw is not None and hw < lso:
        _fail(f"{where}: HW checkpoint {hw} is below the log start offset {lso}")
    st = parts.get(p)
    top = max([r[1] for r in records[-1:]] + [e for e, _o in cache[-1:]], default=None)
    if top is not None:
        if st is None:
            _fail(f"{where}: the log holds leader epoch {top}, but the partition has no state in {holder} "
                  f"(no leader was ever elected)")
        if top > st["leader_epoch"]:
            _fail(f"{where}: the log holds leader epoch {top}, above the partition's leader epoch "
                  f"{st['leader_epoch']} in {holder}")
    replicas = list(st["replicas"] if st is not None else assignment[p])
    if b not in replicas:
        _fail(f"{where}: a log on broker {b}, which is not among the partition's replicas {replicas}")
    # Log(...) at LogManager.loadLogs: the HW is the checkpoint's, clamped (ReplicaManager, Kafka 2.4.0)
    entries = tuple((None, r[1]) for r in records)   # record ids are filled in once every log is read
    return p, Log(log_start_offset=lso, entries=entries, high_watermark=hw if hw is not None else lso,
                  recovery_point=rp, epoch_cache=cache), hw


def _zk_partitions(cfg: ModelConfig, zk: dict, assignment: tuple) -> dict:
    controller_epoch = zk.get("controller_epoch", 1 if zk.get("partitions") else 0)
    out = {}
    n = cfg.n_brokers
    for item in zk.get("partitions", []):
        p = item["partition"]
        where = f"ZooKeeper, partition {p}"
        if not 0 <= p < cfg.n_partitions:
            _fail(f"ZooKeeper: partition {p}, but the topic has partitions 0 to {cfg.n_partitions - 1}")
        if p in out:
            _fail(f"ZooKeeper: partition {p} is given twice")
        replicas = list(item.get("replicas", assignment[p]))
        if not replicas or len(set(replicas)) != len(replicas) or not all(0 <= r < n for r in replicas):
            _fail(f"{where}: replicas {replicas} must be distinct broker ids from 0 to {n - 1}")
        isr = item["isr"]
        if not isr or len(set(isr)) != len(isr):
            _fail(f"{where}: ISR {isr} must be a non-empty set")
        if not set(isr) <= set(replicas):
            _fail(f"{where}: ISR {isr} is not within the replicas {replicas}")
        leader = item["leader"]
        if leader != NO_LEADER and leader not in isr:
            _fail(f"{where}: leader {leader} is not in the ISR {isr}")
        epoch = item["leader_epoch"]
        if not 0 <= epoch <= MAX_EPOCH:
            _fail(f"{where}: leader epoch {epoch} (0 to {MAX_EPOCH})")
        ce = item.get("controller_epoch", controller_epoch)
        if not 1 <= ce <= controller_epoch:
            _fail(f"{where}: written by controller epoch {ce}, but /controller_epoch is {controller_epoch} "
                  f"(a partition state is written by a controller of epoch 1 to /controller_epoch)")
        version = item.get("zk_version", 0)
        if version < 0:
            _fail(f"{where}: zkVersion {version} is negative")
        out[p] = {"replicas": replicas, "isr": tuple(sorted(isr)), "leader": leader, "leader_epoch": epoch,
                  "controller_epoch": ce, "zk_version": version}
    return out


class Disks:
    """What the brokers' disks and processes hold, read from a start's ``brokers`` part (either era)."""

    __slots__ = ("items", "alive", "logs", "checkpoints", "n_records")

    def __init__(self, items, alive, logs, checkpoints, n_records):
        self.items = items               # the broker's item in ``brokers`` (or {}), per broker
        self.alive = alive
        self.logs = logs                 # Log | None per broker and partition, records identified
        self.checkpoints = checkpoints   # HW checkpoint | None per broker and partition
        self.n_records = n_records       # ghost record ids used (1 to n_records)


def read_disks(cfg: ModelConfig, start: dict, parts: dict, assignment: tuple, holder: str) -> Disks:
    """Each broker's logs, epoch caches, log start offsets and HW checkpoints, and whether its process is up; the
    partition states ``parts`` (replicas and leader epoch, as ``holder`` keeps them) bound the logs.  A record is
    identified by its partition, offset and leader epoch: the same ghost id on every broker holding it."""
    n, np_ = cfg.n_brokers, cfg.n_partitions
    items: list = [{} for _ in range(n)]
    seen = set()
    alive = [True] * n
    logs = [[None] * np_ for _ in range(n)]
    checkpoints = [[None] * np_ for _ in range(n)]
    total = 0
    for item in start.get("brokers", []):
        b = item["broker"]
        if not 0 <= b < n:
            _fail(f"broker {b}: the cluster has brokers 0 to {n - 1}")
        if b in seen:
            _fail(f"broker {b} is given twice")
        seen.add(b)
        items[b] = item
        alive[b] = item.get("alive", True)
        for log_item in item.get("logs", []):
            p, log, hw = _log(cfg, b, log_item, parts, assignment, holder)
            if logs[b][p] is not None:
                _fail(f"broker {b}: partition {p} has two logs")
            total += len(log.entries)
            if total > MAX_START_RECORDS:
                _fail(f"more than {MAX_START_RECORDS:,} records in the start")
            logs[b][p], checkpoints[b][p] = log, hw

    ids: dict = {}
    for p in range(np_):
        keys = sorted({(log.log_start_offset + i, e) for row in logs if (log := row[p]) is not None
                       for i, (_r, e) in enumerate(log.entries)})
        for k in keys:
            ids[(p, *k)] = len(ids) + 1
    for row in logs:
        for p, log in enumerate(row):
            if log is not None and log.entries:
                lso = log.log_start_offset
                log.entries = tuple((ids[(p, lso + i, e)], e) for i, (_r, e) in enumerate(log.entries))
    return Disks(items, alive, logs, checkpoints, len(ids))


def build_start(cfg: ModelConfig, start: dict, base: ClusterState) -> ClusterState:
    """The ZooKeeper-era state ``start`` describes, over ``base`` (``step.initial_state(cfg)``); StartError if
    inconsistent.  ``start`` is decoded JSON whose types the trace schema has checked (isrlab/trace.schema.json)."""
    n, np_ = cfg.n_brokers, cfg.n_partitions
    if "kraft" in start:
        _fail("kraft: a metadata image is for a KRaft preset (kip_500), but this cluster runs on ZooKeeper")
    zk_in = start.get("zookeeper", {})
    controller_epoch = zk_in.get("controller_epoch", 1 if zk_in.get("partitions") else 0)
    ce_version = zk_in.get("controller_epoch_zk_version", controller_epoch)
    if controller_epoch < 0 or ce_version < 0:
        _fail("ZooKeeper: /controller_epoch and its zkVersion cannot be negative")
    zk_parts = _zk_partitions(cfg, zk_in, base.zk.assignment)
    disks = read_disks(cfg, start, zk_parts, base.zk.assignment, "ZooKeeper")
    alive, logs = disks.alive, disks.logs

    epochs = [None] * n
    for b, item in enumerate(disks.items):
        for key in ("metadata_offset", "clean_shutdown"):
            if key in item:
                _fail(f"broker {b}: {key} is KRaft's (a broker's metadata log), but this cluster runs on ZooKeeper")
        if "broker_epoch" in item:
            if not alive[b]:
                _fail(f"broker {b} is down, so it has no registration and no broker epoch")
            if item["broker_epoch"] < 1:
                _fail(f"broker {b}: broker epoch {item['broker_epoch']} (the czxid of its registration, >= 1)")
            epochs[b] = item["broker_epoch"]
    given = [e for e in epochs if e is not None]
    if len(set(given)) != len(given):
        _fail(f"broker epochs {sorted(given)} are not distinct (each is its registration's czxid)")

    # ZooKeeper: registrations (czxids) of live brokers, in id order after the given ones
    next_czxid = max(given, default=0) + 1
    registrations = []
    for b in range(n):
        if not alive[b]:
            registrations.append(-1)
        elif epochs[b] is not None:
            registrations.append(epochs[b])
        else:
            registrations.append(next_czxid)
            next_czxid += 1
    assignment = list(base.zk.assignment)
    states = [None] * np_
    for p, st in zk_parts.items():
        assignment[p] = tuple(st["replicas"])
        states[p] = LeaderIsrAndControllerEpoch(st["leader"], st["leader_epoch"], st["isr"], st["controller_epoch"],
                                                st["zk_version"])
    zk = ZooKeeper(controller=-1, controller_epoch=controller_epoch, controller_epoch_zk_version=ce_version,
                   assignment=tuple(assignment), partition_states=tuple(states),
                   registrations=tuple(registrations), sessions=tuple(alive), next_czxid=next_czxid)

    brokers = []
    for b, br in enumerate(base.brokers):
        br = restarted_broker(br, disks, b)
        br.broker_epoch = registrations[b]
        brokers.append(br)

    leaders = tuple((p, st.leader_epoch, st.leader) for p, st in enumerate(states)
                    if st is not None and st.leader != NO_LEADER)
    ghost = derive_ghost(start, states, logs, base.ghost, disks.n_records, leaders, "ZooKeeper")
    return ClusterState(now=base.now, brokers=tuple(brokers), zk=zk, controllers=(), ghost=ghost)


def restarted_broker(br: Broker, disks: Disks, b: int) -> Broker:
    """Broker b of the base state with the disks the start gives it, its process up or down."""
    br = br._clone(None)
    br.logs = tuple(disks.logs[b])
    br.hw_checkpoint = tuple(disks.checkpoints[b])
    br.alive = disks.alive[b]
    if not br.alive:     # as after KafkaServer.shutdown: no scheduled task runs
        br.next_isr_expiration_ms = br.next_isr_propagation_ms = br.next_hw_checkpoint_ms = -1
    return br


def derive_ghost(start: dict, states: list, logs: list, base: Ghost, n_records: int, leaders: tuple,
                 holder: str) -> Ghost:
    """The ghost of a start: ``leaders`` as leading their epochs, and the acknowledged records: those ``acked``
    lists, or those below the HW of the leader ``states`` (by partition, as ``holder`` keeps them) names."""
    acked = []
    declared = start.get("acked", "committed")
    if declared == "committed":
        for p, st in enumerate(states):
            log = logs[st.leader][p] if st is not None and st.leader != NO_LEADER else None
            if log is not None:
                for o in range(log.log_start_offset, log.high_watermark):
                    acked.append((log.entry_at(o)[0], o, st.leader_epoch, st.leader, p))
    else:
        for p, o in declared:
            st = states[p] if 0 <= p < len(states) else None
            log = logs[st.leader][p] if st is not None and st.leader != NO_LEADER else None
            entry = log.entry_at(o) if log is not None else None
            if entry is None:
                _fail(f"acked: offset {o} of partition {p} is not in the log of the partition's leader in {holder}")
            acked.append((entry[0], o, st.leader_epoch, st.leader, p))
    g = base._clone(None)
    g.next_record_id = n_records + 1
    g.acked = tuple(sorted(set(acked)))
    g.leaders = leaders
    return g
