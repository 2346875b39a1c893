"""Step tables in Kafka's terms: the one table ``isrlab replay``, ``--verbose`` campaigns and the report print.

Each row is one step of a replay: the action in words, one column per broker (role, LEO, HW, leader epoch,
ISR as a Kafka engineer reads them off a partition) and what else changed, said in Kafka's terms (records
appended or truncated, fetcher state, ZooKeeper's partition state, control requests queued, acknowledgements),
read from the model's states rather than from encoded paths.  A step where an invariant fails is marked at
the start of its row.  Rendering is rich's: fitted to a width, colour only on a terminal.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from ..model import actions as A
from ..model.metrics import leader_metrics
from ..model.state import OFFLINE, Partition
from ..model.step import initial_state, orphan_of, step

#: what a broker column's cell says, printed under every table
LEGEND = ("broker columns: role LEO/HW e<leader epoch> [ISR]; L leader, F follower, down crashed, - no replica, "
          "log LEO/HW a log but no partition yet (restarted); "
          "+r/-r an ISR change in flight (AlterIsr); * changed at this step. "
          "Marks: !! an invariant fails first, ! still failing, ~ a documented loss")


@dataclass(frozen=True)
class Row:
    """One step: ``marks`` the invariants failing at it, ``losses`` documented losses it established."""

    step: int
    action: str
    cells: tuple          # per broker: the cell text
    changed: tuple        # per broker: whether its cell changed at this step
    changes: tuple        # other changes, in words
    marks: tuple = ()     # invariants failing first here
    losses: tuple = ()
    still: tuple = ()     # invariants that failed earlier and still fail here


def _p(cfg, p: int) -> str:
    return f" p{p}" if cfg.n_partitions > 1 else ""


def _records(entries, first: int) -> str:
    return " ".join(f"r{r}@{first + i}(e{e})" for i, (r, e) in enumerate(entries))


def action_words(cfg, s, a) -> str:
    """The action ``a``, taken in state ``s``, in words (who does what to whom, with the offsets involved)."""
    t = type(a)
    if t is A.Produce:
        return f"producer sends acks={a.acks} to broker {a.broker}{_p(cfg, a.partition)}"
    if t is A.ConsumerFetch:
        return f"consumer fetches from broker {a.broker}{_p(cfg, a.partition)}"
    if t is A.ConsumerFetchWithClientMetadata:
        rack = f" from rack {a.rack}" if a.rack else ""
        epoch = f" in epoch {a.current_leader_epoch}" if a.current_leader_epoch >= 0 else ""
        return f"consumer{rack} fetches with ClientMetadata from broker {a.broker}{epoch}{_p(cfg, a.partition)}"
    if t is A.ConsumerFetchWait:
        at = "its HW" if a.fetch_offset < 0 else f"offset {a.fetch_offset}"
        cm = " with ClientMetadata" + (f" from rack {a.rack}" if a.rack else "") if a.client_metadata else ""
        epoch = f" in epoch {a.current_leader_epoch}" if a.current_leader_epoch >= 0 else ""
        return (f"consumer{cm} fetches from broker {a.broker} at {at}{epoch}, waiting up to {a.max_wait_ms} ms for "
                f"{a.min_bytes} record{'s' * (a.min_bytes != 1)}{_p(cfg, a.partition)}")
    if t is A.ReassignPartitions:
        if not a.replicas:   # KRaft: AlterPartitionReassignments with no target replicas
            return f"an admin cancels the reassignment{_p(cfg, a.partition)}"
        return f"an admin reassigns{_p(cfg, a.partition)} to replicas [{a.replicas}]"
    if t is A.ControllerProcessPartitionReassignment:
        return f"controller {a.controller} handles /admin/reassign_partitions"
    if t is A.ControllerProcessReassignmentIsrChange:
        return f"controller {a.controller} sees the reassigning partition's ISR{_p(cfg, a.partition)} caught up"
    if t is A.DelayedFetchExpire:
        return f"broker {a.broker}'s parked consumer fetch {a.request} times out"
    if t is A.ListOffsets:
        target = {-1: "latest", -2: "earliest"}.get(a.timestamp, f"timestamp {a.timestamp}")
        who = "consumer" if a.replica_id == -1 else f"replica {a.replica_id}"
        return f"{who} asks broker {a.broker} for the {target} offset{_p(cfg, a.partition)}"
    if t is A.FetchRequest:
        f = s.brokers[a.broker].fetchers[a.partition]
        if f is None:
            return f"broker {a.broker} sends a fetch"
        return (f"broker {a.broker} fetches from leader {f.leader} at offset {f.fetch_offset} "
                f"(epoch {f.leader_epoch}){_p(cfg, a.partition)}")
    if t is A.FetchResponse:
        f = s.brokers[a.broker].fetchers[a.partition]
        r = f.inflight if f is not None else None
        if r is None:
            return f"broker {a.broker} receives a fetch response"
        what = f"{r.error}, {len(r.entries)} record{'s' * (len(r.entries) != 1)}, HW {r.high_watermark}"
        if r.diverging:
            what += f", diverging at epoch {r.diverging[0]} end offset {r.diverging[1]}"
        return f"broker {a.broker} receives leader {f.leader}'s fetch response ({what}){_p(cfg, a.partition)}"
    if t is A.OffsetsForLeaderEpochRequest:
        f = s.brokers[a.broker].fetchers[a.partition]
        lead = f"leader {f.leader}" if f is not None else "the leader"
        return f"broker {a.broker} sends OffsetsForLeaderEpoch to {lead} (epoch {f.leader_epoch if f else '?'})" \
               f"{_p(cfg, a.partition)}"
    if t is A.OffsetsForLeaderEpochResponse:
        f = s.brokers[a.broker].fetchers[a.partition]
        req = f.epoch_request if f is not None else ()
        what = (f"sent in epoch {req[0]}: {req[1]}" + (f", epoch {req[2]} ends at {req[3]}" if req[1] == "NONE" else "")
                if req else "")
        return f"broker {a.broker} receives the OffsetsForLeaderEpoch answer ({what}){_p(cfg, a.partition)}"
    if t is A.OffsetsForLeaderEpoch:
        f = s.brokers[a.broker].fetchers[a.partition]
        lead = f"leader {f.leader}" if f is not None else "the leader"
        return f"broker {a.broker} asks {lead} OffsetsForLeaderEpoch and truncates{_p(cfg, a.partition)}"
    if t is A.DeliverControlRequest:
        c = s.controller_on(a.controller)
        req = c.queues[a.broker][0] if c is not None and c.queues[a.broker] else None
        name = type(req).__name__.removesuffix("Request") if req is not None else "a control request"
        return f"controller {a.controller} delivers {name} to broker {a.broker}"
    if t is A.ElectController:
        return f"broker {a.broker} is elected controller"
    if t is A.ControllerProcessBrokerChange:
        return f"controller {a.controller} handles a broker change"
    if t is A.ControllerProcessIsrChangeNotification:
        return f"controller {a.controller} handles an ISR change notification"
    if t is A.ControllerResign:
        return f"controller {a.controller} resigns"
    if t is A.AlterIsrRequest:
        items = s.brokers[a.broker].alter_isr_unsent
        what = ", ".join(f"ISR {_isr(x.request.new_isr)} at zkVersion {x.request.zk_version}" for x in items)
        return f"broker {a.broker} sends AlterIsr ({what or 'nothing'})"
    if t is A.AlterIsrReceived:
        inflight = s.brokers[a.broker].alter_isr_inflight
        who = "the controller" if inflight is None or inflight.controller < 0 else f"controller {inflight.controller}"
        if inflight is not None and inflight.orphan:
            return f"{who} handles the AlterIsr broker {a.broker} sent before it stopped (the answer goes nowhere)"
        return f"{who} handles broker {a.broker}'s AlterIsr"
    if t is A.AlterIsrResponse:
        return f"broker {a.broker} receives the AlterIsr response"
    if t is A.AlterIsrFailed:
        return f"broker {a.broker}'s AlterIsr is answered {a.error} before any controller handles it (a fault)"
    if t is A.OrphanRequestReceived:
        o = orphan_of(s, a)
        if o is None:
            return f"nothing from broker {a.broker}'s earlier incarnation is on its way"
        if a.api == "BROKER_HEARTBEAT":
            return (f"the controller handles the heartbeat broker {a.broker} sent before it stopped (broker epoch "
                    f"{o.broker_epoch}, metadata offset {o.metadata_offset}; the answer goes nowhere)")
        return (f"leader {o.leader} handles the Fetch from offset {o.fetch_offset} broker {a.broker} sent before it "
                f"stopped (broker epoch {o.broker_epoch}{_p(cfg, a.partition)}; the answer goes nowhere)")
    if t is A.AlterPartitionReceived:
        return (f"the controller handles an AlterPartition no leader sends: broker {a.broker} at broker epoch "
                f"{a.broker_epoch}, ISR [{a.isr}] {a.leader_recovery_state} in leader epoch {a.leader_epoch}, "
                f"partition epoch {a.partition_epoch}{_p(cfg, a.partition)} (a fault; the answer goes to no one)")
    if t is A.ExpiredBrokerHeartbeat:
        return (f"broker {a.broker}'s heartbeat times out in the controller's queue: the session is touched, the "
                f"broker reads REQUEST_TIMED_OUT and retries (a fault)")
    if t is A.PrepareIsrExpand:
        part = s.brokers[a.broker].partitions[a.partition]
        f = getattr(part, "expand_checked", -1)
        r = part.remote(f) if f >= 0 else None
        epoch = "" if r is None else f" with its broker epoch {r.broker_epoch} as the fetches left it"
        return f"leader {a.broker} builds the ISR expansion by broker {f} it decided{epoch}{_p(cfg, a.partition)}"
    if t is A.IsrExpiration:
        return f"broker {a.broker} runs isr-expiration"
    if t is A.IsrChangePropagation:
        return f"broker {a.broker} runs isr-change-propagation"
    if t is A.HighWatermarkCheckpoint:
        return f"broker {a.broker} checkpoints its HWs"
    if t is A.DelayedProduceExpire:
        return f"broker {a.broker}'s delayed produce {a.request} times out"
    if t is A.FlushLog:
        return f"broker {a.broker} flushes its log{_p(cfg, a.partition)}"
    if t is A.Tick:
        return f"{a.ms} ms pass"
    if t is A.BrokerCrash:
        return f"broker {a.broker} crashes ({'clean shutdown' if a.clean else 'unflushed data lost'})"
    if t is A.BrokerRestart:
        return f"broker {a.broker} restarts"
    if t is A.ZkSessionExpire:
        return f"broker {a.broker}'s ZooKeeper session expires"
    if t is A.ZkReconnect:
        return f"broker {a.broker} reconnects to ZooKeeper"
    if t is A.ZkDeleteController:
        return f"/controller of broker {a.controller} is deleted"
    if t is A.MetadataApply:
        br = s.brokers[a.broker]
        q = s.quorum
        if q is None or br.metadata_offset >= len(q.log):
            return f"broker {a.broker} replays metadata"
        end = next(e for e in q.batch_ends if e > br.metadata_offset)
        recs = "; ".join(_metadata_record(r) for r in q.log[br.metadata_offset:end])
        first = f"record {br.metadata_offset}" if end == br.metadata_offset + 1 else \
            f"records {br.metadata_offset}-{end - 1}"
        return f"broker {a.broker} replays metadata {first} ({recs})"
    if t is A.BrokerHeartbeat:
        return f"broker {a.broker} heartbeats to the controller"
    if t is A.FenceStaleBroker:
        return f"the controller fences broker {a.broker} (session expired)"
    if t is A.HeartbeatsLost:
        return f"broker {a.broker}'s heartbeats stop reaching the controller"
    if t is A.ControlledShutdown:
        return f"broker {a.broker} begins a controlled shutdown"
    if t is A.ControlledShutdownRequest:
        cs = s.brokers[a.broker].controlled_shutdown
        to = f"broker {cs.request_to}" if cs is not None else "the controller"
        return f"broker {a.broker}'s ControlledShutdown request reaches {to}"
    if t is A.ControlledShutdownResponse:
        cs = s.brokers[a.broker].controlled_shutdown
        what = f"{cs.response[0]}, still leads {list(cs.response[1])}" if cs is not None and cs.response else ""
        return f"broker {a.broker} reads its ControlledShutdown response ({what})"
    if t is A.PreferredReplicaElection:
        return f"an admin asks for a preferred-replica election{_p(cfg, a.partition)}"
    if t is A.ControllerProcessPreferredReplicaElection:
        return f"controller {a.controller} handles /admin/preferred_replica_election"
    if t is A.ElectLeaders:
        what = "the preferred leader" if a.election_type == "PREFERRED" else "any replica, uncleanly,"
        return f"an admin asks broker {a.broker} to elect {what} (ElectLeaders){_p(cfg, a.partition)}"
    if t is A.AutoLeaderRebalance:
        if a.controller < 0:
            return "the quorum controller runs its leader balancing (maybeBalancePartitionLeaders)"
        return f"controller {a.controller} runs the auto-leader-rebalance-task"
    if t is A.DeleteRecords:
        target = "its HW" if a.offset == -1 else f"offset {a.offset}"
        return f"admin client deletes records to {target} at broker {a.broker}{_p(cfg, a.partition)}"
    if t is A.DeleteOldSegments:
        log = s.brokers[a.broker].logs[a.partition]
        return (f"log retention on broker {a.broker}{_p(cfg, a.partition)} deletes old segments "
                f"(log start {log.log_start_offset}, keep {cfg.retention_records} records)")
    if t is A.DiskWipe:
        return f"broker {a.broker}'s disk is replaced (it will come back empty)"
    if t is A.LogDirFailure:
        return f"broker {a.broker}'s log directory {a.directory} fails (a fault: its partitions there go offline)"
    if t is A.AssignReplicasToDirs:
        return f"broker {a.broker} tells the controller its replica{_p(cfg, a.partition)} is in directory {a.directory}"
    if t is A.ControllerFailover:
        return "the active controller fails over to another quorum member"
    if t is A.AlterTopicConfig:
        return f"an admin sets the topic's unclean.leader.election.enable to {str(a.value).lower()}"
    if t is A.DeleteTopic:
        return "an admin deletes the topic (" + ("DeleteTopics to the controller)" if s.quorum is not None
                                                else "/admin/delete_topics)")
    if t is A.CreateTopic or t is A.CreatePartitions:
        placed = (" with no assignment (the controller places it)" if s.quorum is not None and cfg.placed_creations
                  else "")
        if t is A.CreateTopic:
            return f"an admin creates the topic (partition 0){placed}"
        p = s.zk.assignment.index(()) if () in s.zk.assignment else -1
        return f"an admin adds partition {p} to the topic{placed}"
    if t is A.ControllerProcessTopicDeletion:
        return f"controller {a.controller} handles the topic deletion"
    if t is A.ControllerProcessTopicChange:
        return f"controller {a.controller} handles a topic change (partitions created or deleted)"
    if t is A.ControllerProcessStopReplicaResponse:
        c = s.controller_on(a.controller)
        ev = c.stop_replica_responses[0] if c is not None and c.stop_replica_responses else None
        what = f" from broker {ev[0]} ({', '.join(f'p{p} {e}' for p, e in ev[1])})" if ev else ""
        return f"controller {a.controller} handles a StopReplica (delete) response{what}"
    return A.describe(a)


def _metadata_record(rec) -> str:
    """A KRaft metadata record in a few words."""
    if rec is None:
        return "none"
    name = type(rec).__name__
    if hasattr(rec, "registration"):
        g = rec.registration
        return (f"{'PartitionRecord' if rec.created else name} p{rec.partition}: leader {_leader(g.leader)} "
                f"e{g.leader_epoch} ISR {_isr(g.isr)} partition epoch {g.partition_epoch}")
    if hasattr(rec, "partitions"):      # RemoveTopicRecord
        return f"{name} p{', p'.join(map(str, rec.partitions))}"
    if hasattr(rec, "value"):           # ConfigRecord
        return f"{name} {rec.name}={str(rec.value).lower()}"
    return f"{name} broker {rec.broker_id} epoch {rec.broker_epoch}"


def cell(s, b: int, p: int = 0) -> str:
    """Broker b's column for partition p: role LEO/HW e<epoch> [ISR] (the ISR on the leader only)."""
    br = s.brokers[b]
    if not br.alive:
        return "down"
    log = br.logs[p]
    if log is None:
        return "-"
    part = br.partitions[p]
    if type(part) is not Partition:
        # a log on disk but no partition (a restart before its LeaderAndIsr), or a failed log dir
        return f"{'offline' if part == OFFLINE else 'log'} {log.log_end_offset}/{log.high_watermark}"
    lead = part.leader == b
    text = f"{'L' if lead else 'F'} {log.log_end_offset}/{log.high_watermark} e{part.leader_epoch}"
    if lead:
        text += " " + _isr(part.isr)
    if part.pending_isr is not None:
        text += " " + "".join(("+" if part.pending_isr.expand else "-") + str(r) for r in part.pending_isr.replicas)
    return text


def _leader(b: int) -> str:
    return {-1: "none", -2: "none (deleting)"}.get(b, str(b))


def _isr(isr) -> str:
    return "[" + ",".join(map(str, isr)) + "]"


def _request(req) -> str:
    """A control request in a few words: a LeaderAndIsr with its partition states (an UpdateMetadata's are the
    same news and left out)."""
    name = type(req).__name__.removesuffix("Request")
    states = getattr(req, "partition_states", None)
    if states and name == "LeaderAndIsr":
        ps = [x for x in states if x is not None]
        name += "(" + "; ".join(f"leader {_leader(x.leader)} e{x.leader_epoch} ISR {_isr(x.isr)}" for x in ps) + ")"
    return name


def facts(cfg, s) -> dict:
    """What a step can change besides the broker columns, keyed by its subject, each a short phrase."""
    out: dict = {}
    for b, br in enumerate(s.brokers):
        for p in range(cfg.n_partitions):
            q = _p(cfg, p)
            log = br.logs[p]
            if log is not None:
                out[f"broker {b}{q} log"] = (log.log_start_offset, log.entries)
                out[f"broker {b}{q} epoch cache"] = " ".join(f"e{e}@{o}" for e, o in log.epoch_cache) or "empty"
                if log.log_start_offset:
                    out[f"broker {b}{q} log start offset"] = str(log.log_start_offset)
            f = br.fetchers[p]
            if f is not None:
                how = {"truncating": "truncating", "failed": "failed"}.get(f.state, "fetching")
                # a response in flight is the FetchRequest's own doing: the action says so
                out[f"broker {b}{q} fetcher"] = f"{how} from {f.leader} at {f.fetch_offset} (epoch {f.leader_epoch})"
            if br.hw_checkpoint and br.hw_checkpoint[p] is not None:
                out[f"broker {b}{q} checkpointed HW"] = str(br.hw_checkpoint[p])
            metrics = leader_metrics(cfg, s, b, p)
            if metrics:
                out[f"broker {b}{q} metrics"] = ", ".join(m.replace("_", " ") for m in metrics)
        out[f"broker {b} controller epoch"] = str(br.controller_epoch)
        if br.isr_change_set:
            out[f"broker {b} ISR changes to propagate"] = "partitions " + _isr(br.isr_change_set)
        if br.delayed_produces:
            out[f"broker {b} delayed produces"] = ", ".join(
                f"{' '.join(f'r{r}' for r in dp.record_ids)} until offset {dp.required_offset}"
                for dp in br.delayed_produces)
        if br.alter_isr_unsent:
            out[f"broker {b} AlterIsr queued"] = ", ".join(_isr(x.request.new_isr) for x in br.alter_isr_unsent)
        if br.alter_isr_inflight is not None:
            out[f"broker {b} AlterIsr"] = f"in flight to {br.alter_isr_inflight.controller}"
        for p, md in enumerate(br.metadata.partitions):
            if md is not None:
                out[f"broker {b}{_p(cfg, p)} metadata"] = f"leader {_leader(md.leader)} e{md.leader_epoch}"
    q = s.quorum
    if q is not None:                  # KRaft: the quorum's state instead of ZooKeeper's
        out["metadata records"] = str(len(q.log))
        for b, reg in enumerate(q.registrations):
            out[f"broker {b} registration"] = ("none" if reg is None else
                                               f"epoch {reg.epoch}{' fenced' if reg.fenced else ''}"
                                               f"{' shutting down' if reg.in_controlled_shutdown else ''}")
        for p, g in enumerate(q.partitions):
            elr = f" ELR {_isr(g.elr)}" if g.elr else ""
            if g.last_known_elr:
                elr += f" last known leader {_isr(g.last_known_elr)}"
            out[f"controller{_p(cfg, p)} state"] = (f"leader {_leader(g.leader)} e{g.leader_epoch} ISR {_isr(g.isr)}{elr} "
                                                    f"(partition epoch {g.partition_epoch})")
        for br in s.brokers:
            out[f"broker {br.broker_id} metadata offset"] = str(br.metadata_offset)
        for rec, off, epoch, b, p in s.ghost.acked:
            out[f"record {rec}{_p(cfg, p)} acknowledged"] = f"at offset {off} by broker {b} (e{epoch})"
        for p, off, rec, epoch in s.ghost.consumed:
            out[f"consumer read r{rec}{_p(cfg, p)}"] = f"at offset {off} (e{epoch})"
        return out
    zk = s.zk
    out["/controller"] = str(zk.controller) if zk.controller >= 0 else "none"
    out["/controller_epoch"] = str(zk.controller_epoch)
    for p, ps in enumerate(zk.partition_states):
        if ps is not None:
            out[f"ZooKeeper{_p(cfg, p)} state"] = (f"leader {_leader(ps.leader)} e{ps.leader_epoch} ISR {_isr(ps.isr)} "
                                                   f"(zkVersion {ps.zk_version})")
    if zk.isr_change_notifications:
        out["/isr_change_notification"] = str(len(zk.isr_change_notifications))
    for b, alive in enumerate(zk.sessions):
        out[f"broker {b} ZooKeeper session"] = "alive" if alive else "expired"
    for c in s.controllers:
        out[f"controller {c.broker_id}"] = f"epoch {c.epoch}"
        for b, q in enumerate(c.queues):
            if q:
                out[f"controller {c.broker_id} to broker {b}"] = tuple(_request(r) for r in q)
    for rec, off, epoch, b, p in s.ghost.acked:
        out[f"record {rec}{_p(cfg, p)} acknowledged"] = f"at offset {off} by broker {b} (e{epoch})"
    for p, off, rec, epoch in s.ghost.consumed:
        out[f"consumer read r{rec}{_p(cfg, p)}"] = f"at offset {off} (e{epoch})"
    return out


def _log_change(key: str, old, new) -> str:
    (s0, e0), (s1, e1) = old, new
    if s0 == s1 and e1[:len(e0)] == e0:
        return f"{key[:-4]} appended {_records(e1[len(e0):], s1 + len(e0))}"
    if s0 == s1 and e0[:len(e1)] == e1:
        return f"{key[:-4]} truncated to {s1 + len(e1)} (removed {_records(e0[len(e1):], s0 + len(e1))})"
    return f"{key}: {_records(e0, s0) or 'empty'} -> {_records(e1, s1) or 'empty'}"


def _queue_change(key: str, old: tuple, new: tuple, queued: dict) -> str:
    """A controller's queue to one broker: requests queued are gathered in ``queued`` (controller, requests) ->
    brokers, said once for all the brokers they went to; the head delivered is the action itself."""
    if new[:len(old)] == old:
        who, broker = key.split(" to broker ")
        queued.setdefault((who, new[len(old):]), []).append(broker)
        return ""
    if old[1:] == new:
        return ""
    if not new:
        return f"{key}: queue dropped ({', '.join(old)})"
    return f"{key}: {', '.join(old)} -> {', '.join(new)}"


def changes(before: dict, after: dict) -> list:
    """The differences between two ``facts`` dicts, in words; a subject that appears or disappears said once."""
    out: list = []
    queued: dict = {}
    for key in list(after) + [k for k in before if k not in after]:
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old or new, tuple) and key.startswith("controller "):
            said = _queue_change(key, old or (), new or (), queued)
            if said:
                out.append(said)
        elif old is None and new == "empty":
            continue   # an empty epoch cache with a new log: the log's line says it
        elif key.endswith(" log") and old is not None and new is not None:
            out.append(_log_change(key, old, new))
        elif key.endswith(" log"):
            out.append(f"{key}: {'gone' if new is None else _records(new[1], new[0]) or 'created, empty'}")
        elif old is None:
            out.append(f"{key} {new}" if key.startswith(("record ", "consumer ")) else f"{key}: {new}")
        elif new is None:
            out.append(f"{key}: {old} -> none")
        else:
            out.append(f"{key}: {old} -> {new}")
    for (who, requests), brokers in queued.items():
        out.append(f"{who} queues {', '.join(requests)} for broker{'s' * (len(brokers) > 1)} {', '.join(brokers)}")
    return out


def cells(cfg, s) -> tuple:
    """Every broker's column: its cell, one per partition (``p1 ...``) when there are several."""
    if cfg.n_partitions == 1:
        return tuple(cell(s, b) for b in range(cfg.n_brokers))
    return tuple("; ".join(f"p{p} {cell(s, b, p)}" for p in range(cfg.n_partitions)) for b in range(cfg.n_brokers))


def rows(result) -> list:
    """One Row per step of a ``properties.replay.ReplayResult`` (step 0: the start state), replaying its trace."""
    trace = result.trace
    cfg = trace.config
    s = initial_state(cfg, trace.start)
    n = cfg.n_brokers
    now = cells(cfg, s)
    f0 = facts(cfg, s)
    out = [Row(0, "start", now, (False,) * n, ())]
    seen: set = set()
    for r, a in zip(result.steps, trace.actions):
        words = action_words(cfg, s, a)
        s2 = step(cfg, s, a)
        then = cells(cfg, s2)
        f1 = facts(cfg, s2)
        out.append(Row(r.index, words, then, tuple(x != y for x, y in zip(now, then)), tuple(changes(f0, f1)),
                       tuple(v.invariant for v in r.violations if v.invariant not in seen),
                       tuple(x.name for x in getattr(r, "losses", ())),
                       tuple(v.invariant for v in r.violations if v.invariant in seen)))
        seen.update(v.invariant for v in r.violations)
        s, now, f0 = s2, then, f1
    return out


def render(result, console, max_changes: int = 6) -> None:
    """Print the step table of a replay on a rich Console (fitted to its width), then the legend."""
    from rich.table import Table
    from rich.text import Text

    n = result.trace.config.n_brokers
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold", expand=False)
    table.add_column("step", justify="right", no_wrap=True)
    table.add_column("action", ratio=3, overflow="fold")
    for b in range(n):   # several partitions' cells may wrap, one partition's never does
        table.add_column(f"broker {b}", no_wrap=result.trace.config.n_partitions == 1)
    table.add_column("changes", ratio=4, overflow="fold")
    for row in rows(result):
        mark = "!! " if row.marks else "~ " if row.losses else "! " if row.still else ""
        style = "bold red" if row.marks else "yellow" if row.losses else "red" if row.still else ""
        shown = list(row.changes[:max_changes])
        if len(row.changes) > max_changes:
            shown.append(f"(+{len(row.changes) - max_changes} more)")
        if row.marks:
            shown.insert(0, "VIOLATED: " + ", ".join(row.marks))
        if row.losses:
            shown.insert(0, "documented loss: " + ", ".join(row.losses))
        table.add_row(Text(f"{mark}{row.step}", style=style), Text(row.action, style=style),
                      *(Text(c + ("*" if ch else ""), style="bold" if ch else "dim" if c == "down" else "")
                        for c, ch in zip(row.cells, row.changed)),
                      Text("; ".join(shown), style=style))
    console.print(table)
    console.print(Text(LEGEND, style="dim"))
    from .explain import loss_sentence

    for x in getattr(result, "losses", ()):
        console.print(Text(loss_sentence(x), style="yellow"))


def step_table(result, max_changes: int = 6, width: int = 160) -> list:
    """The step table as plain lines ``width`` characters at most (archives, the report, a non-terminal)."""
    from rich.console import Console

    buf = io.StringIO()
    render(result, Console(file=buf, width=width, color_system=None, force_terminal=False, soft_wrap=False),
           max_changes)
    return [line.rstrip() for line in buf.getvalue().splitlines()]
