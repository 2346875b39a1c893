"""A KRaft broker's log directories (KIP-858, JBOD; Kafka 3.7.0): where its logs go, what it reports, a failure.

With ``log_dirs`` n >= 1 a broker has n directories.  A new log goes to the directory its partition's registration
names for the broker, if that is one of its online directories, else to the online directory holding the fewest logs
(LogManager.getOrCreateLog / nextLogDirs).  After replaying a partition record, a broker whose log is in another
directory than the record says queues an assignment for AssignmentsManager (ReplicaManager.maybeUpdateTopicAssignment),
sent as AssignReplicasToDirs.  A directory failure (``LogDirFailure``) takes the partitions whose logs are in it
offline on that broker (ReplicaManager.handleLogDirFailure) and the broker's next heartbeat, sent at once, names it
(BrokerLifecycleManager.propagateDirectoryFailure); the controller's side is in ``quorum_controller``.
"""

from __future__ import annotations

from .config import ModelConfig, directory_assignment
from .directories import dir_id, dir_index
from .node import replace_at
from .quorum_controller import assign_replicas_to_dirs
from .state import OFFLINE, Broker, ClusterState, Partition


def _dir_row(cfg: ModelConfig, br: Broker) -> tuple:
    return br.log_dir_of or (-1,) * len(br.logs)


def place_new_log(cfg: ModelConfig, br: Broker, p: int, reg) -> None:
    """LogManager.getOrCreateLog with targetLogDirectoryId (Kafka 3.7.0): a log just created for p goes to the
    directory the registration ``reg`` names for this broker when it is one of its online directories, else to the
    online directory with the fewest logs (nextLogDirs; ties to the lowest index)."""
    b = br.broker_id
    row = _dir_row(cfg, br)
    online = [i for i in range(cfg.log_dirs) if i not in br.offline_dirs]
    target = dir_index(b, reg.directory(b))
    if target not in online:
        counts = {i: 0 for i in online}
        for q, log in enumerate(br.logs):
            if log is not None and q != p and row[q] in counts:
                counts[row[q]] += 1
        target = min(online, key=lambda i: (counts[i], i))
    br.log_dir_of = replace_at(row, p, target)


def maybe_update_topic_assignment(cfg: ModelConfig, br: Broker, p: int, reg) -> None:
    """ReplicaManager.maybeUpdateTopicAssignment (Kafka 3.7.0), with directory assignment: when the broker's log of p is
    in another directory than the registration names, AssignmentsManager.onAssignment queues (p, the log's directory),
    replacing an assignment of p not yet sent."""
    b = br.broker_id
    if not directory_assignment(cfg) or br.logs[p] is None or not br.log_dir_of:
        return
    actual = dir_id(b, br.log_dir_of[p])
    if reg.directory(b) == actual:
        return
    br.dir_assignments = tuple(sorted([x for x in br.dir_assignments if x[0] != p] + [(p, actual)]))


def send_assignment(cfg: ModelConfig, s: ClusterState, b: int, p: int, d: str) -> str:
    """AssignmentsManager's AssignReplicasToDirs for partition p to directory ``d`` (Kafka 3.7.0), handled by the
    quorum controller at once (ReplicationControlManager.handleAssignReplicasToDirs); the queued assignment it carries,
    if any, is sent.  The answer is kept per broker and partition (``Ghost.responses.assign_replicas_to_dirs``); an
    error leaves nothing queued (the model's AssignmentsManager does not retry)."""
    br = s.broker_mut(b)
    br.dir_assignments = tuple(x for x in br.dir_assignments if x != (p, d))
    error = assign_replicas_to_dirs(cfg, s, b, br.broker_epoch, p, d)
    g = s.ghost_mut()
    r = g.responses
    if r._tok is not g._tok:
        r = g.responses = r._clone(g._tok)
    rows = r.assign_replicas_to_dirs or ((),) * len(s.brokers)
    row = rows[b] or (None,) * len(s.quorum.partitions)
    r.assign_replicas_to_dirs = replace_at(rows, b, replace_at(row, p, error))
    return error


def can_fail(cfg: ModelConfig, s: ClusterState, b: int, i: int) -> bool:
    """A LogDirFailure of broker b's directory i may happen: b is up, i is one of its directories and online, another
    stays online (the last one failing halts the broker), within ``max_log_dir_failures``."""
    if not 0 <= b < len(s.brokers) or s.ghost.log_dir_failures >= cfg.max_log_dir_failures:
        return False
    br = s.brokers[b]
    return (br.alive and 0 <= i < cfg.log_dirs and i not in br.offline_dirs
            and cfg.log_dirs - len(br.offline_dirs) >= 2)


def log_dir_failure(cfg: ModelConfig, s: ClusterState, b: int, i: int) -> None:
    """ReplicaManager.handleLogDirFailure (Kafka 3.7.0) on broker b's directory i: every online partition whose log is
    in it loses its fetcher and goes offline (markPartitionOffline), LogManager drops the directory, and the failure
    goes to BrokerLifecycleManager (DirectoryEventHandler.handleFailure: OfflineDirEvent), whose next heartbeat, sent
    at once while registered, carries the offline directories."""
    br = s.broker_mut(b)
    row = _dir_row(cfg, br)
    for p, part in enumerate(br.partitions):
        if type(part) is Partition and br.logs[p] is not None and row[p] == i:
            if br.fetchers[p] is not None:                   # replicaFetcherManager.removeFetcherForPartitions
                br.fetchers = replace_at(br.fetchers, p, None)
            br.partitions = replace_at(br.partitions, p, OFFLINE)
    br.offline_dirs = tuple(sorted(br.offline_dirs + (i,)))
    if br.broker_epoch >= 0:                                 # registered: scheduleNextCommunicationImmediately
        br.next_heartbeat_ms = s.now
    s.ghost_mut().log_dir_failures += 1


def offline_dir_ids(br: Broker) -> tuple:
    """BrokerLifecycleManager.offlineDirs as a heartbeat carries them (offlineLogDirs)."""
    return tuple(dir_id(br.broker_id, i) for i in br.offline_dirs)
