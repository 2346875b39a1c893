"""Log directories in KRaft (KIP-858, JBOD; Kafka 3.7.0): directory ids and the controller's view of them.

With ``log_dirs`` n >= 1 each broker b has n log directories, ``dir_id(b, i)`` for i in 0..n-1 (Kafka's directory
ids are random Uuids kept in each directory's meta.properties; the model names them by broker and index).  Three
reserved ids of DirectoryId stand for no directory: UNASSIGNED (not known yet), LOST (a directory that went
away) and MIGRATING (a partition created before directory assignment).  The pure helpers here are shared by the
quorum controller and the broker; the rules that use them are in ``quorum_controller`` and ``jbod``.
"""

from __future__ import annotations

from .config import ModelConfig, directory_assignment

UNASSIGNED = "UNASSIGNED"       # DirectoryId.UNASSIGNED
LOST = "LOST"                   # DirectoryId.LOST
MIGRATING = "MIGRATING"         # DirectoryId.MIGRATING


def dir_id(b: int, i: int) -> str:
    """The id of broker b's directory i."""
    return f"b{b}d{i}"


def dir_owner(d: str):
    """(broker, index) of a directory id ``dir_id`` made, or None for a reserved or foreign id."""
    if d.startswith("b") and "d" in d[1:]:
        b, _, i = d[1:].partition("d")
        if b.isdigit() and i.isdigit() and dir_id(int(b), int(i)) == d:
            return int(b), int(i)
    return None


def dir_index(b: int, d: str) -> int:
    """The index of broker b's directory ``d``, or -1 when ``d`` is none of b's."""
    owner = dir_owner(d)
    return owner[1] if owner is not None and owner[0] == b else -1


def broker_dirs(cfg: ModelConfig, b: int, offline: tuple = ()) -> tuple:
    """The ids of broker b's directories not in ``offline`` (indexes), sorted: what it registers with directory
    assignment (BrokerRegistrationRequest.logDirs: LogManager's online directories), else ()."""
    if not directory_assignment(cfg):
        return ()
    return tuple(sorted(dir_id(b, i) for i in range(cfg.log_dirs) if i not in offline))


def is_online(d: str, online: tuple) -> bool:
    """DirectoryId.isOnline (Kafka 3.7.0): UNASSIGNED and MIGRATING count online, LOST does not; with no directory
    registered (a registration from before directory assignment) every directory counts online."""
    if d in (UNASSIGNED, MIGRATING):
        return True
    if d == LOST:
        return False
    return not online or d in online


def has_online_dir(q, b: int, d: str) -> bool:
    """ClusterControlManager.hasOnlineDir (Kafka 3.7.0): b is registered and ``d`` is online among its directories."""
    reg = q.registrations[b] if 0 <= b < len(q.registrations) else None
    return reg is not None and is_online(d, reg.directories)


def default_dir(cfg: ModelConfig, q, b: int) -> str:
    """KRaftClusterDescriber.defaultDir / ClusterControlManager.defaultDir (Kafka 3.7.0): the directory a new replica
    on b is placed in: MIGRATING without directory assignment or without registered directories, UNASSIGNED for an
    unregistered broker or one with several directories (the broker picks and reports it), else its only one."""
    if not directory_assignment(cfg):
        return MIGRATING
    reg = q.registrations[b] if 0 <= b < len(q.registrations) else None
    if reg is None:
        return UNASSIGNED
    if not reg.directories:
        return MIGRATING
    return reg.directories[0] if len(reg.directories) == 1 else UNASSIGNED


def leader_acceptor(q, part, acceptable):
    """ReplicationControlManager.LeaderAcceptor (Kafka 3.7.0): ``acceptable`` (by default ClusterControlManager.isActive)
    and the replica's directory of the partition online on its broker."""
    if not part.directories:
        return acceptable
    return lambda r: acceptable(r) and has_online_dir(q, r, part.directory(r))


def directories_after(cfg: ModelConfig, q, old, new) -> tuple:
    """PartitionChangeBuilder.setAssignmentChanges' directories (Kafka 3.7.0): each replica of ``new`` keeps its
    directory in ``old`` (DirectoryId.createAssignmentMap), a new one gets its broker's ``default_dir``; () without
    directory assignment.  A registration that already carries directories for its replicas keeps them
    (setDirectory's)."""
    if not directory_assignment(cfg) or new.removed:
        return ()
    if len(new.directories) == len(new.replicas):
        return new.directories
    target = dict(zip(old.replicas, old.directories))
    return tuple(target[r] if r in target else default_dir(cfg, q, r) for r in new.replicas)
