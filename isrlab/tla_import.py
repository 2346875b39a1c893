"""A counterexample of Vanlightly/kafka-tlaplus's KRaft specification (kafka_data_replication/kraft/v3.5) turned into
an isrlab trace, through ``MAPPING``: each specification action, the broker it acts on, and the model actions that do
the same. docs/guides/tla-interop.md describes the mapping and where it cannot be made.

The input is TLC's error trace (its standard output: TLC 2.15 has no ``-dumpTrace``) or ITF JSON whose states name
their action in ``#meta.action`` (ITF carries no action otherwise; Apalache writes none). The specification's
brokers 1..3 are the model's 0..2; its initial state (ISR {1, 2}, broker 3 fenced with a stale metadata log) is
reached first (``prelude``). Where the specification's leader proposes an ISR from a fetch made long before, which
Kafka's cannot, the steps that allow it are moved next to the proposal when nothing in between reads what they
write (``deferrable_fetches``, ``deferrable_unfencings``), and the trace's provenance says so.
"""

from __future__ import annotations

from .model import actions as A

#: spec action -> (how its broker is found in the state change, the model actions, what is left out).
#: Model action forms: [kind, field...] where "b" is the broker (model id): an action of model/actions.py, or
#: ``catch_up`` (replay the broker's metadata log up to the record the specification's broker has reached, or to the
#: end), ``fetch`` (its OffsetsForLeaderEpoch round if it must truncate, then FetchRequest), ``fence`` (expire its
#: session and fence it, unless fenced already), ``unfence`` (catch up and heartbeat, unless unfenced already),
#: ``crash`` (as fence, around BrokerCrash), ``expand_sent`` (AlterIsrRequest of the ISR change the leader decided).
MAPPING = {
    "WriteRecordToLeader": ("log grew: partition_data", [["Produce", "b", 0, -1]],
                            "acks=all only, as the specification"),
    "SendFetchRequest": ("sent: FetchRequest source", [["fetch", "b"]],
                         "the model's FetchRequest is the request and the leader's handling of it; a follower that "
                         "must truncate first (KIP-279) does its OffsetsForLeaderEpoch round before it"),
    "ReceiveFetchRequest": ("received: FetchRequest dest", [],
                            "done by the model's FetchRequest of the SendFetchRequest before it"),
    "ReceiveFetchResponse": ("received: FetchResponse dest", [["FetchResponse", "b", 0]], ""),
    "FenceBroker": ("status: con_broker_reg FENCED", [["fence", "b"]],
                    "the model fences a broker whose session expired: HeartbeatsLost then FenceStaleBroker"),
    "UnfenceBroker": ("status: con_broker_reg UNFENCED", [["unfence", "b"]],
                      "the model unfences on a heartbeat of a broker that has replayed its registration (nothing if "
                      "the model's controller holds the broker unfenced already)"),
    "ReceiveMetadataUpdate": ("log grew: broker_metadata_log", [["catch_up", "b"]],
                              "the model's log also holds the registration and fencing records the specification "
                              "omits: they are replayed with the partition records around them"),
    "SendAlterPartitionRequest": ("sent: AlterPartitionRequest source", [["expand_sent", "b"]],
                                  "the model's leader decides an ISR expansion while it handles a fetch "
                                  "(Partition.maybeExpandIsr), a shrink in its isr-expiration task; this sends it"),
    "ReceiveAlterPartitionRequest": ("received: AlterPartitionRequest source", [["AlterIsrReceived", "b"]], ""),
    "ReceiveAlterPartitionResponse": ("received: AlterPartitionResponse dest", [["AlterIsrResponse", "b"]], ""),
    "UncleanShutdown": ("status: broker_state OFFLINE_DIRTY", [["crash", "b", False]],
                        "the specification's controller fences the broker at once: the model expires its session"),
    "CleanShutdown": ("status: broker_state OFFLINE_CLEAN", [["crash", "b", True]],
                      "the specification has no controlled shutdown: a clean stop"),
    "BrokerStart": ("status: broker_state STARTING", [["BrokerRestart", "b"]],
                    "the model's restart registers at once; the registration's replay is ReceiveBrokerRegRequest's"),
    "ReceiveBrokerRegRequest": ("received: RegisterBrokerRequest source", [["catch_up", "b"], ["heartbeat", "b"]],
                                "registration, then the unfencing heartbeat (and an election of the broker if it is "
                                "the last ISR member) in the model"),
    "ReceiveBrokerRegResponse": ("received: RegisterBrokerResponse dest", [["catch_up", "b"]],
                                 "the broker starts once it has replayed the log up to its registration"),
    "PerformPartitionReassignment": (None, None,
                                     "no model counterpart: the model's reassignment (KIP-455) is the ZooKeeper "
                                     "controller's; its KRaft side has none"),
}

SPEC_BROKERS = 3


class TlaImportError(ValueError):
    """An input that cannot be imported (malformed, or a step the model cannot do), with a one-line reason."""


# --------------------------------------------------------------------------- reading
def read_counterexample(raw: bytes, where: str) -> dict:
    """{"invariant": ..., "states": [{"action", "values"}]} from TLC's text or from ITF JSON."""
    from .model.trace import TraceError, parse_json
    from .tla_values import parse_tlc_output

    head = raw.lstrip()[:1]
    if head in (b"{", b"["):
        try:
            doc = parse_json(raw, where)
        except TraceError as e:
            raise TlaImportError(str(e)) from None
        return _from_itf(doc, where)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TlaImportError(f"{where} is not UTF-8 text (byte {e.start:,})") from None
    try:
        return parse_tlc_output(text, where)
    except ValueError as e:
        raise TlaImportError(str(e)) from None


def _from_itf(doc, where: str) -> dict:
    import itf_py

    from .tla_values import Frozen

    if not isinstance(doc, dict) or not isinstance(doc.get("states"), list) or not isinstance(doc.get("vars"), list):
        raise TlaImportError(f"{where}: not an ITF trace (an object with 'vars' and 'states' lists)")
    try:
        trace = itf_py.trace_from_json(doc)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise TlaImportError(f"{where}: not an ITF trace: {type(e).__name__} {str(e)[:80]}") from None

    def plain(v):
        if hasattr(v, "_fields"):
            return Frozen({k: plain(getattr(v, k)) for k in v._fields})
        if isinstance(v, dict):
            return Frozen({plain(k): plain(x) for k, x in v.items()})
        if isinstance(v, frozenset):
            return frozenset(plain(x) for x in v)
        if isinstance(v, (list, tuple)):
            return tuple(plain(x) for x in v)
        return v

    states = []
    for i, st in enumerate(trace.states):
        action = st.meta.get("action") if isinstance(st.meta, dict) else None
        if i and not isinstance(action, str):
            raise TlaImportError(f"{where}: state {i}: no action name in #meta.action (ITF states carry no action "
                               f"otherwise)")
        states.append({"action": action if i else None, "values": {k: plain(v) for k, v in st.values.items()}})
    if not states:
        raise TlaImportError(f"{where}: an ITF trace without states")
    return {"invariant": (trace.meta or {}).get("invariant") if isinstance(trace.meta, dict) else None,
            "states": states}


# --------------------------------------------------------------------------- which broker
_NEEDED = ("messages", "con_broker_reg", "broker_state", "partition_data", "broker_metadata_log")


def _broker_of(rule: str, before: dict, after: dict, where: str) -> int:
    """The specification broker (1-based) a step acts on, found by its mapping rule."""
    kind, _, what = rule.partition(": ")
    if kind in ("sent", "received"):
        mtype, side = what.split()
        msgs = after["messages"] - before["messages"] if kind == "sent" else before["messages"] - after["messages"]
        hits = [m for m in msgs if isinstance(m, dict) and m.get("type") == mtype]
        if len(hits) != 1:
            raise TlaImportError(f"{where}: expected one {mtype} {kind}, found {len(hits)}")
        broker = hits[0].get(side)
    elif kind == "status":
        var, status = what.split()
        changed = [i for i, (x, y) in enumerate(zip(before[var], after[var]), 1)
                   if y.get("status") == status and x.get("status") != status]
        if len(changed) != 1:
            raise TlaImportError(f"{where}: expected one broker whose {var} status became {status}, found "
                               f"{len(changed)}")
        broker = changed[0]
    else:   # "log grew"
        changed = [i for i, (x, y) in enumerate(zip(before[what], after[what]), 1)
                   if len(y.get("log", ()) if isinstance(y, dict) else y) >
                   len(x.get("log", ()) if isinstance(x, dict) else x)]
        if len(changed) != 1:
            raise TlaImportError(f"{where}: expected one broker whose {what} grew, found {len(changed)}")
        broker = changed[0]
    if not isinstance(broker, int) or not 1 <= broker <= SPEC_BROKERS:
        raise TlaImportError(f"{where}: broker {broker!r} is not one of the specification's 1..{SPEC_BROKERS}")
    return broker


# --------------------------------------------------------------------------- translation
class _Builder:
    """The model actions of the translation so far, applied as they are chosen so that each is checked enabled."""

    def __init__(self, cfg):
        from .model.step import initial_state

        self.cfg = cfg
        self.s = initial_state(cfg)
        self.actions: list = []
        self.where = "prelude"
        #: follower (model id) -> (TLC state number, in the leader's ISR then, spec HW then) of its last fetch
        self.last_fetch: dict = {}
        #: follower (model id) -> the TLC state of its fetch moved next to the proposal resting on it
        self.moved: dict = {}

    def do(self, a) -> None:
        from .model.step import step

        s2 = step(self.cfg, self.s, a)
        if s2 is None:
            raise TlaImportError(f"{self.where}: the model cannot do {A.describe(a)} here (at {self.s.now} ms)")
        self.s = s2
        self.actions.append(a)

    def catch_up(self, b: int, target: int | None = None) -> None:
        end = len(self.s.quorum.log) if target is None else target
        while self.s.brokers[b].alive and self.s.brokers[b].metadata_offset < end:
            self.do(A.MetadataApply(b))

    def advance_to(self, t: int) -> None:
        """Let the clock reach ``t``, running the scheduled tasks that fall due on the way (in the model's order)."""
        from .model.step import enabled_actions, tick_limit

        background = (A.BrokerHeartbeat, A.HighWatermarkCheckpoint, A.IsrExpiration, A.IsrChangePropagation)
        for _ in range(10_000):
            if self.s.now >= t:
                return
            limit = tick_limit(self.cfg, self.s)
            ms = t - self.s.now if limit is None else min(t, limit) - self.s.now
            if ms > 0:
                self.do(A.Tick(ms))
                continue
            due = [a for a in enabled_actions(self.cfg, self.s) if type(a) in background]
            if not due:
                raise TlaImportError(f"{self.where}: the model's clock cannot reach {t} ms (a timeout is due)")
            self.do(due[0])
        raise TlaImportError(f"{self.where}: the model's clock does not reach {t} ms")   # pragma: no cover

    def fetch(self, b: int) -> None:
        """A follower's fetch, handled by its leader, which first replays the registration records ahead of it; a
        follower that must truncate first (KIP-279) does its OffsetsForLeaderEpoch round before it."""
        from .model.state import TRUNCATING

        f = self.s.brokers[b].fetchers[0]
        if f is not None:
            self.replay_registrations(f.leader)
        if f is not None and f.state == TRUNCATING:
            if self.cfg.offsets_for_leader_epoch_in_flight:
                self.do(A.OffsetsForLeaderEpochRequest(b, 0))
                self.do(A.OffsetsForLeaderEpochResponse(b, 0))
            else:
                self.do(A.OffsetsForLeaderEpoch(b, 0))
        self.do(A.FetchRequest(b, 0))

    def unfence(self, b: int) -> None:
        """Unfence ``b``: it replays the log to its end and heartbeats (nothing if the controller holds it unfenced)."""
        from .model.quorum_controller import is_unfenced

        if not is_unfenced(self.s.quorum, b):
            self.catch_up(b)
            self.heartbeat(b)

    def replay_registrations(self, b: int) -> None:
        """``b`` replays the metadata batches ahead of it that hold no partition record: the fencing and unfencing the
        specification's brokers never see, so that the model broker's view of them is the controller's."""
        from .model.state import PartitionChangeRecord
        from .model.step import step

        while self.s.brokers[b].alive and self.s.brokers[b].metadata_offset < len(self.s.quorum.log):
            s2 = step(self.cfg, self.s, A.MetadataApply(b))
            batch = self.s.quorum.log[self.s.brokers[b].metadata_offset:s2.brokers[b].metadata_offset]
            if any(isinstance(r, PartitionChangeRecord) for r in batch):
                return
            self.do(A.MetadataApply(b))

    def heartbeat(self, b: int) -> None:
        self.advance_to(self.s.brokers[b].next_heartbeat_ms)
        self.do(A.BrokerHeartbeat(b))

    def fence(self, b: int) -> None:
        from .model.quorum_controller import is_unfenced

        if is_unfenced(self.s.quorum, b):
            self.do(A.HeartbeatsLost(b))
            self.do(A.FenceStaleBroker(b))


def prelude(builder: _Builder, broker_3: str = "fenced") -> None:
    """The specification's initial state in the model: broker 0 leads with ISR {0, 1}; broker 2 is out of the ISR and
    has not replayed that. ``broker_3`` "fenced": broker 2 is fenced, as the specification's broker 3, and brokers 0
    and 1 replay the ISR change (and, in the same metadata batch, the fencing); "unfenced": broker 2 is fenced and
    unfenced again (out of the ISR, registered, unfenced), and every broker replays the whole log."""
    from .model.state import PartitionChangeRecord

    for b in range(len(builder.s.brokers)):
        builder.catch_up(b)
    builder.fence(2)
    log = builder.s.quorum.log
    shrink = max(i for i, r in enumerate(log) if isinstance(r, PartitionChangeRecord))
    for b in (0, 1):
        builder.catch_up(b, shrink + 1)
    if broker_3 == "unfenced":
        builder.catch_up(2)
        builder.heartbeat(2)
        for b in range(len(builder.s.brokers)):
            builder.catch_up(b)


#: the starting points tried in turn: the specification's own, then the one a KIP-841 leader would act on
PRELUDES = ("fenced", "unfenced")


def translate(cx: dict, cfg, where: str):
    """(model actions, notes, the prelude used, the fetches moved) for a parsed counterexample on config ``cfg``: from
    each of ``PRELUDES`` in turn, as the specification orders the steps, then with ``deferrable_fetches`` moved;
    TlaImportError naming the first step the model cannot follow, and why, when none gets through."""
    states = cx["states"]
    missing = [v for v in _NEEDED if v not in states[0]["values"]]
    if missing:
        raise TlaImportError(f"{where}: not a state of the KRaft specification: no variable {missing[0]}")
    for n, st in enumerate(states, 1):
        for var in _NEEDED:
            v = st["values"].get(var)
            ok = isinstance(v, frozenset) if var == "messages" else isinstance(v, tuple) and len(v) == SPEC_BROKERS
            if not ok:
                want = "a set" if var == "messages" else f"a sequence of {SPEC_BROKERS} (one per broker)"
                raise TlaImportError(f"{where}: state {n}: {var} is not {want}")
    failed = []
    fetches = deferrable_fetches(states)
    unfencings = deferrable_unfencings(states, fetches)
    orders = [((), ())] + ([(fetches, ())] if fetches else []) + ([(fetches, unfencings)] if unfencings else [])
    for start in PRELUDES:
        for moves in orders:
            try:
                return (*_translate_from(cx, cfg, where, start, moves), start, moves)
            except TlaImportError as e:
                failed.append((len(moves[0]) + len(moves[1]), e))
    raise max(failed, key=lambda x: x[0])[1]   # the reason found with the most moved goes furthest


#: what a step between a follower's fetch and the leader's proposal that is moved next to it may not change
_FETCH_STATE = ("partition_data", "broker_fetchers", "broker_metadata_log", "broker_state")


def deferrable_fetches(states: list) -> tuple:
    """The follower fetches to move next to the ISR proposal that rests on them: (follower, its SendFetchRequest,
    its ReceiveFetchRequest, the proposal), indices of ``states``, 1-based brokers.

    One is moved where the specification's leader proposes follower f from a fetch it handled while f was in its ISR
    (no expansion at that fetch in Kafka), and no step from the fetch's sending to the proposal changes f's log,
    fetcher, metadata or life, the leader's log or leader epoch, or proposes an ISR (none reads what the fetch wrote):
    then the fetch handled just before the proposal is a behaviour of the specification too, whose fetch response
    differs only in the HW it carries, and Kafka decides the expansion while it handles that fetch."""
    out = []
    for j, st in enumerate(states):
        if st["action"] != "SendAlterPartitionRequest":
            continue
        before, after = states[j - 1]["values"], st["values"]
        sent = [m for m in after["messages"] - before["messages"]
                if isinstance(m, dict) and m.get("type") == "AlterPartitionRequest"]
        if len(sent) != 1 or not isinstance(sent[0].get("source"), int):
            continue
        leader = sent[0]["source"]
        for f in sorted(set(sent[0].get("isr", ())) - set(before["partition_metadata"][leader - 1]["isr"])):
            recv = next((k for k in range(j - 1, 0, -1) if states[k]["action"] == "ReceiveFetchRequest"
                         and _fetch_from(states, k) == f), None)
            send = None if recv is None else next(
                (k for k in range(recv - 1, 0, -1) if states[k]["action"] == "SendFetchRequest"
                 and f in [m.get("source") for m in states[k]["values"]["messages"] - states[k - 1]["values"]
                           ["messages"] if isinstance(m, dict) and m.get("type") == "FetchRequest"]), None)
            if send is None or f not in states[recv]["values"]["partition_metadata"][leader - 1]["isr"]:
                continue
            if all(_leaves_fetch_alone(states[k - 1]["values"], states[k]["values"], f, leader)
                   and states[k]["action"] != "SendAlterPartitionRequest"
                   for k in range(send + 1, j) if k != recv):
                out.append((f, send, recv, j))
    return tuple(out)


#: the specification's controller actions: those that read or write the controller's broker registrations
_CONTROLLER = frozenset({"ReceiveAlterPartitionRequest", "FenceBroker", "UnfenceBroker", "ReceiveBrokerRegRequest",
                         "UncleanShutdown", "CleanShutdown", "BrokerStart", "PerformPartitionReassignment"})


def deferrable_unfencings(states: list, fetches: tuple) -> tuple:
    """The unfencings to move before a moved fetch: (follower, the UnfenceBroker's index, the proposal's index).

    Where the follower of a moved fetch is fenced at the proposal and the specification unfences it later, before
    any other controller step (none reads or writes a registration in between: the specification's unfencing
    writes nothing else, and no broker reads it), the unfencing moved before the fetch is a behaviour of the
    specification too; in Kafka the leader then replays it before it handles the fetch (KIP-841)."""
    out = []
    for f, _, _, j in fetches:
        if states[j - 1]["values"]["con_broker_reg"][f - 1].get("status") != "FENCED":
            continue
        for k in range(j + 1, len(states)):
            if states[k]["action"] == "UnfenceBroker" and \
                    states[k]["values"]["con_broker_reg"][f - 1].get("status") == "UNFENCED":
                out.append((f, k, j))
                break
            if states[k]["action"] in _CONTROLLER:
                break
    return tuple(out)


def _fetch_from(states: list, k: int):
    got = [m for m in states[k - 1]["values"]["messages"] - states[k]["values"]["messages"]
           if isinstance(m, dict) and m.get("type") == "FetchRequest"]
    return got[0].get("source") if len(got) == 1 else None


def _leaves_fetch_alone(before: dict, after: dict, f: int, leader: int) -> bool:
    if any(before[var][f - 1] != after[var][f - 1] for var in _FETCH_STATE):
        return False
    return (before["partition_data"][leader - 1]["log"] == after["partition_data"][leader - 1]["log"]
            and before["partition_metadata"][leader - 1]["leader_epoch"] ==
            after["partition_metadata"][leader - 1]["leader_epoch"])


def _translate_from(cx: dict, cfg, where: str, start: str, moves: tuple = ((), ())):
    states = cx["states"]
    builder = _Builder(cfg)
    prelude(builder, start)
    fetch_moves, unfence_moves = moves or ((), ())
    deferred = {k for _, send, recv, _ in fetch_moves for k in (send, recv)} | {k for _, k, _ in unfence_moves}
    fetch_before = {j: (f, recv) for f, _, recv, j in fetch_moves}
    unfence_before = {j: f for f, _, j in unfence_moves}
    #: the specification's controller log length -> the model's log length at the same point
    log_at = {len(states[0]["values"].get("con_metadata_log", ())): len(builder.s.quorum.log)}
    notes = []
    for i in range(1, len(states)):
        name = states[i]["action"]
        builder.where = f"{where}: state {i + 1} ({name})"
        if name not in MAPPING:
            raise TlaImportError(f"{builder.where}: unknown action of the specification (known: "
                               f"{', '.join(sorted(MAPPING))})")
        rule, forms, note = MAPPING[name]
        if forms is None:
            raise TlaImportError(f"{builder.where}: {note}")
        before, after = states[i - 1]["values"], states[i]["values"]
        first_action = len(builder.actions)
        try:
            b = _broker_of(rule, before, after, builder.where) - 1
            if i in unfence_before:
                builder.unfence(unfence_before[i] - 1)
            if i in fetch_before:
                f, recv = fetch_before[i]
                builder.fetch(f - 1)
                builder.moved[f - 1] = recv + 1
            for form in forms if i not in deferred else ():
                _realise(builder, form, b, before, after, log_at)
            if name == "ReceiveFetchRequest":
                got = [m for m in before["messages"] - after["messages"]
                       if isinstance(m, dict) and m.get("type") == "FetchRequest"]
                f = got[0]["source"]
                builder.last_fetch[f - 1] = (i + 1, f in after["partition_metadata"][b]["isr"],
                                             after["partition_data"][b]["hwm"])
            if len(after.get("inv_consumed", ())) > len(before.get("inv_consumed", ())):
                leader = after["con_partition_metadata"]["leader"]
                builder.do(A.ConsumerFetch(leader - 1, 0))   # the specification reads what a new HW exposes
            new_len = len(after.get("con_metadata_log", ()))
            for k in range(len(before.get("con_metadata_log", ())) + 1, new_len + 1):
                log_at[k] = len(builder.s.quorum.log)
        except (KeyError, TypeError, IndexError, AttributeError) as e:
            raise TlaImportError(f"{builder.where}: not a state of the KRaft specification's shape "
                               f"({type(e).__name__}: {str(e)[:60]})") from None
        notes.append((i, name, b, builder.actions[first_action:]))
    return builder.actions, notes


def _realise(builder: _Builder, form: list, b: int, before: dict, after: dict, log_at: dict) -> None:
    kind = form[0]
    if kind == "catch_up":
        spec_len = len(after["broker_metadata_log"][b])
        grew = spec_len > len(before["broker_metadata_log"][b])
        builder.catch_up(b, log_at.get(spec_len) if grew else None)
    elif kind == "fetch":
        builder.fetch(b)
    elif kind == "heartbeat":
        builder.heartbeat(b)
    elif kind == "fence":
        builder.fence(b)
    elif kind == "unfence":
        builder.unfence(b)
    elif kind == "crash":
        from .model.quorum_controller import is_unfenced

        lost = is_unfenced(builder.s.quorum, b)
        if lost:
            builder.do(A.HeartbeatsLost(b))
        builder.do(A.BrokerCrash(b, form[2]))
        if lost:
            builder.do(A.FenceStaleBroker(b))
        _lose_the_log_as_the_specification(builder, b, after)
    elif kind == "expand_sent":
        if not builder.s.brokers[b].alter_isr_unsent:
            raise TlaImportError(f"{builder.where}: {_why_no_proposal(builder, b, before, after)}")
        builder.do(A.AlterIsrRequest(b))
    else:
        cls = getattr(A, kind)
        builder.do(cls(*[b if x == "b" else x for x in form[1:]]))


def _lose_the_log_as_the_specification(builder: _Builder, b: int, after: dict) -> None:
    """The specification's unclean shutdown loses every record (nothing is flushed): where the model's crash kept
    some (a preset without crash_loses_unflushed_data), its disk is wiped (``DiskWipe``, on a preset that allows
    it); otherwise the step cannot be followed."""
    log = builder.s.brokers[b].logs[0]
    kept = 0 if log is None else log.log_end_offset
    if kept <= len(after["partition_data"][b]["log"]):
        return
    wipe = A.DiskWipe(b)
    from .model.step import step

    if step(builder.cfg, builder.s, wipe) is None:
        raise TlaImportError(f"{builder.where}: the specification's broker {b + 1} loses its log, the model's keeps "
                             f"{kept} records: the preset neither loses unflushed records in a crash "
                             f"(crash_loses_unflushed_data) nor allows a disk wipe (max_disk_wipes)")
    builder.do(wipe)


def _why_no_proposal(builder: _Builder, b: int, before: dict, after: dict) -> str:
    """Why the model's leader has no ISR change to send where the specification's sends one, in one sentence."""
    sent = [m for m in after["messages"] - before["messages"]
            if isinstance(m, dict) and m.get("type") == "AlterPartitionRequest"]
    isr = set(sent[0]["isr"]) if sent else set()
    leader_isr = set(before["partition_metadata"][b]["isr"])
    added = sorted(isr - leader_isr)
    head = (f"the specification's leader {b + 1} proposes ISR {sorted(isr)} (adding {added}; the specification's "
            f"brokers 1-3 are the model's 0-2) from the follower state its last fetch left; the model's leader has no "
            f"ISR change to send, as Kafka decides an expansion only while it handles a fetch "
            f"(Partition.updateFollowerFetchState -> maybeExpandIsr, 3.5.0)")
    fenced = builder.s.brokers[b].metadata.fenced
    for f in added:
        fetched = builder.last_fetch.get(f - 1)
        if f - 1 in builder.moved and f - 1 in fenced:
            return (f"{head}: broker {f}'s fetch (handled at TLC state {builder.moved[f - 1]}, while it was in the "
                    f"ISR) was moved next to the proposal, yet the model's leader proposes "
                    f"nothing, as its metadata holds broker {f} fenced (the specification's controller does too) and "
                    f"since KIP-841 (3.3) a leader proposes no fenced broker (Partition.isReplicaIsrEligible); the "
                    f"specification's brokers know nothing of fencing")
        if f - 1 in builder.moved:
            part, log = builder.s.brokers[b].partitions[0], builder.s.brokers[b].logs[0]
            r = part.remote(f - 1) if part is not None else None
            if r is not None and log is not None and r.log_end_offset < log.high_watermark:
                return (f"{head}: with broker {f}'s fetch (TLC state {builder.moved[f - 1]}) moved next to the "
                        f"proposal, its LEO {r.log_end_offset} is below the leader's HW {log.high_watermark}, and a "
                        f"follower joins the ISR only from the HW on (Partition.isFollowerInSync)")
        if fetched is None:
            return f"{head}, and broker {f} has not fetched"
        step, in_isr, hw = fetched
        if in_isr:
            return (f"{head}, and broker {f}'s last fetch (TLC state {step}) came while it was in the leader's ISR "
                    f"(the leader's HW then {hw - 1}, counted as the model counts): no expansion then; to fetch again "
                    f"it must first take that fetch's response (one fetch in flight, AbstractFetcherThread)"
                    + ("" if builder.s.brokers[f - 1].alive else ", which it cannot, as it is down"))
    return f"{head}; a KIP-841 leader does not propose a broker its metadata holds fenced"


def import_trace(raw: bytes, where: str, preset_name: str, changes: dict | None = None):
    """An isrlab Trace of the counterexample in ``raw`` on preset ``preset_name`` (with the config ``changes``, if
    any), and the per-step notes."""
    import dataclasses

    from .model.config import preset
    from .model.trace import Trace

    cx = read_counterexample(raw, where)
    p = preset(preset_name)
    if changes:
        p = dataclasses.replace(p, config=p.config.replace(**changes))
    if not p.config.kip_500:
        raise TlaImportError(f"--preset {preset_name}: the specification is of KRaft; choose a KRaft preset")
    if p.config.n_brokers != SPEC_BROKERS or p.config.n_partitions != 1:
        raise TlaImportError(f"--preset {preset_name}: the specification has {SPEC_BROKERS} brokers and one partition")
    roomy = p.config.replace(max_crashes=100, max_session_expirations=100)
    actions, notes, start, moves = translate(cx, roomy, where)
    crashes = sum(isinstance(a, A.BrokerCrash) for a in actions)
    expirations = sum(isinstance(a, A.HeartbeatsLost) for a in actions)
    cfg = p.config.replace(max_crashes=max(p.config.max_crashes, crashes),
                           max_session_expirations=max(p.config.max_session_expirations, expirations))
    steps = len(cx["states"]) - 1
    trace = Trace(config=cfg, actions=actions, expect="pass", preset=preset_name,
                  description=f"imported from a counterexample of the TLA+ specification of Kafka 3.5's KRaft "
                              f"replication ({steps} steps"
                              f"{', breaking ' + cx['invariant'] if cx['invariant'] else ''})",
                  provenance={"engine": "tla-import", "source": where, "spec_invariant": cx["invariant"],
                              "broker_3_starts": start,
                              "fetches_moved": [{"follower": f, "sent_at": send + 1, "handled_at": recv + 1,
                                                 "moved_to": j + 1} for f, send, recv, j in moves[0]],
                              "unfencings_moved": [{"follower": f, "at": k + 1, "moved_to": j + 1}
                                                   for f, k, j in moves[1]],
                              "spec_steps": [n[1] for n in notes],
                              "spec_step_actions": [len(n[3]) for n in notes]})
    return trace, notes, start, moves
