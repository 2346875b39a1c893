"""Counterexamples to induction (CTIs) of ``hw_isr`` decoded into model states and re-checked with ``step``.

A CTI is a pair of abstract states (``induction.StepResult.pre``/``post``).  ``model_state`` turns
the pre-state into a ``ClusterState`` of a 3-broker, one-partition cluster; ``recheck_cti`` then
applies the model action that corresponds to the CTI's transition (with the same mutant installed
in the model, as the BMC replay does) and checks three things:

1. the decoded pre-state reads back as the CTI's pre-state (``crosscheck.observe``: ISR, LEOs, HWs,
   common prefixes, the leader's ``Replica`` fields, in-flight responses, clock, leader, epoch start);
2. ``step`` produces the CTI's post-state, field for field;
3. each executable invariant of ``properties/invariants.py`` that corresponds to a z3 invariant
   (``CORRESPONDING``) fails on the model state exactly when the z3 invariant fails on the
   abstract one (pre and post), and the executable invariant that corresponds to the claim the CTI
   breaks (``CTI_CHECKED_BY``) fails on the model transition.

Any disagreement is an ``ENCODING BUG`` (the abstraction or the decoder is wrong), not a finding.

How the state is built: the model is first driven to a real nearby state (``Driver.up()``: a
controller on broker 2 elected, every control request delivered, every fetcher Fetching), so the
controller, ZooKeeper session, metadata and scheduler records are ones the model itself produced;
then the fields the abstraction talks about are overridden through the copy-on-write API
(``_begin``, ``broker_mut``, ``zk_mut``, ``controller_mut``, ``ghost_mut``).  Records that are
replaced wholesale (``Log``, ``Partition``, ``Replica``, ``FetchState``) are built directly: they are
new values, so the next ``step`` clones them before writing (their write token is None).

Logs: the abstraction keeps only LEOs and pairwise common-prefix lengths ``ag`` (an ultrametric).
At offset o, replicas i and j hold the same record iff o < ag(i, j) (an equivalence, by the
ultrametric inequality); each class gets a fresh record id.  Leader epochs are not in the
abstraction; they are chosen so that the model's epoch rules are as undisturbed as possible: a
record shared by all three replicas has epoch 0, one shared by two epoch 1, one held by replica i
alone epoch 2 + i, and every record of the leader at or above ``estart`` the current leader epoch
5 (``LEADER_EPOCH``).  Epoch caches are what ``append_as_follower`` would build from those records
(plus the leader's KAFKA-7415 entry).  ``log_matching`` and ``epoch_cache_monotonic`` therefore
usually hold, but they correspond to no z3 invariant and are not required to.
"""

from __future__ import annotations

import z3

from ..model import actions as A
from ..model.config import ModelConfig
from ..model.log import Log, cache_assign
from ..model.state import (FETCHING, TRUNCATING, FetchResponseData, FetchState, LeaderIsrAndControllerEpoch,
                           MetadataCache, Partition, PartitionMetadata, Replica)
from ..model.node import replace_at
from ..model.step import _begin, step
from ..properties.invariants import BY_NAME, check_state, check_transition
from . import hw_isr as H
from .crosscheck import differences, observe
from .drive import P, Driver, ReplayError
from .mutants import installed

LEADER_EPOCH = 5
CONTROLLER = 2

#: z3 invariant -> the executable state invariant that states the same thing of a model state.
CORRESPONDING = {
    "log_offsets": "log_offsets",          # 0 <= HW <= LEO (the model adds log start offset <= HW)
    "leader_in_isr": "isr_well_formed",    # the leader is in its ISR (ZooKeeper's and its own)
    "hw_within_isr": "hw_within_isr",
    "committed_prefix": "committed_prefix",
}

#: the z3 claim a CTI breaks -> (executable invariant that must fail on the model transition, why).
CTI_CHECKED_BY = {
    "hw_within_isr": ("hw_within_isr", "same statement"),
    "committed_prefix": ("committed_prefix", "same statement"),
    "log_offsets": ("log_offsets", "same statement"),
    "leader_in_isr": ("isr_well_formed", "same statement"),
    "shrink_only_out_of_sync": ("isr_lag_window", "its lower half: removed only when out of sync"),
    "shrink_after_lag": ("isr_lag_window", "its lower half: removed only after more than L"),
    "lag_next_run": ("isr_lag_window", "its upper half: a run leaves no out-of-sync follower in the ISR"),
    "committed_durable": ("isr_entry_condition", "committed_durable is about the ghost C (largest HW ever "
                          "exposed), which the model does not keep; the KAFKA-7128 entry rule it rests on is "
                          "checked instead"),
    "lag_sound": (None, "lag_sound is about the ghost append time of each record, which the model does not "
                  "keep; only the post-state is compared"),
    "lag_bound": (None, "a time bound over the ghost behind-since; only the post-state is compared"),
    "lag_previous_fetch": (None, "about ghost append times; only the post-state is compared"),
}


# ============================================================================ abstract -> model
def _logs(v: dict) -> tuple[list, int]:
    """Entries per replica (lists of (record id, epoch)) realising the LEOs and common prefixes; next record id."""
    leo = [v[f"leo{i}"] for i in H.REPLICAS]
    l, estart = v["l"], v["estart"]

    def ag(i, j):
        return leo[i] if i == j else v[f"ag{min(i, j)}{max(i, j)}"]

    entries: list[list] = [[] for _ in H.REPLICAS]
    rid = 1
    for o in range(max(leo, default=0)):
        holders = [i for i in H.REPLICAS if o < leo[i]]
        done = set()
        for i in holders:
            if i in done:
                continue
            cls = [j for j in holders if o < ag(i, j)]
            done.update(cls)
            if l in cls and o >= estart:
                epoch = LEADER_EPOCH
            else:
                epoch = {3: 0, 2: 1}.get(len(cls), 2 + cls[0])
            for j in cls:
                entries[j].append((rid, epoch))
            rid += 1
    return entries, rid


def _cache(entries, extra=None) -> tuple:
    cache = ()
    for offset, (_rid, epoch) in enumerate(entries):
        cache = cache_assign(cache, epoch, offset)
    if extra is not None:
        cache = cache_assign(cache, *extra)
    return cache


def model_config(v: dict) -> ModelConfig:
    """The kafka-2.4 config with the CTI's L and J (P = L // 2 as in the encoding)."""
    lag, jitter = v["L"], v["J"]
    records = sum(v[f"leo{i}"] for i in H.REPLICAS)   # an upper bound on the distinct records of the logs
    return ModelConfig(replica_lag_time_max_ms=lag, scheduler_jitter_ms=jitter, start_time_ms=lag + 1,
                       max_records=records + 1)


def model_state(cfg: ModelConfig, v: dict):
    """The ``ClusterState`` whose leader-side replication state is the abstract state ``v`` (see module doc)."""
    skel = Driver(cfg).up(CONTROLLER).s
    s = _begin(skel)
    l, now, nexp = v["l"], v["now"], v["nexp"]
    assignment = s.zk.assignment[P]
    isr = tuple(i for i in H.REPLICAS if v[f"isr{i}"])
    entries, next_rid = _logs(v)
    zk_version = skel.zk.partition_states[P].zk_version
    ctrl_epoch = skel.zk.partition_states[P].controller_epoch
    zstate = LeaderIsrAndControllerEpoch(l, LEADER_EPOCH, isr, ctrl_epoch, zk_version)
    s.now = now
    for b in H.REPLICAS:
        br = s.broker_mut(b)
        cache = _cache(entries[b], (LEADER_EPOCH, v["estart"]) if b == l else None)
        br.logs = replace_at(br.logs, P, Log(0, tuple(entries[b]), v[f"hw{b}"], 0, cache))
        if b == l:
            remotes = tuple(Replica(f, v[f"rleo{f}"], 0 if v[f"rleo{f}"] >= 0 else -1, v[f"lfleo{f}"],
                                    v[f"lft{f}"], v[f"lcu{f}"]) for f in assignment if f != l)
            part = Partition(P, assignment, isr, l, LEADER_EPOCH, v["estart"], zk_version, ctrl_epoch, remotes)
            fetch = None
        else:
            part = Partition(P, assignment, (), l, LEADER_EPOCH, -1, zk_version, ctrl_epoch,
                             tuple(Replica(f) for f in assignment if f != b))
            prefix = v[f"leo{b}"] == (v[f"ag{min(b, l)}{max(b, l)}"])
            inflight = None
            if v[f"inflight{b}"]:
                inflight = FetchResponseData("NONE", v[f"leo{b}"], tuple(entries[l][v[f"leo{b}"]:v[f"rend{b}"]]),
                                             v[f"rhw{b}"], 0)
            fetch = FetchState(l, LEADER_EPOCH, v[f"leo{b}"], FETCHING if prefix else TRUNCATING, inflight)
        br.partitions = replace_at(br.partitions, P, part)
        br.fetchers = replace_at(br.fetchers, P, fetch)
        br.metadata = MetadataCache(br.metadata.alive_brokers,
                                    (PartitionMetadata(l, LEADER_EPOCH, isr, assignment),))
        # every scheduled task falls due at the leader's next isr-expiration, so Tick has the encoding's limit
        br.next_isr_expiration_ms = br.next_isr_propagation_ms = br.next_hw_checkpoint_ms = nexp
        br.last_isr_change_ms = br.last_isr_propagation_ms = now
    zk = s.zk_mut()
    zk.partition_states = replace_at(zk.partition_states, P, zstate)
    c = s.controller_mut(CONTROLLER)
    c.partition_states = replace_at(c.partition_states, P, zstate)
    g = s.ghost_mut()
    g.leaders = ((P, LEADER_EPOCH, l),)
    g.next_record_id = next_rid
    g.produced = next_rid - 1
    g.session_since = (now,) * len(s.brokers)
    return s


def model_action(label: str, v: dict, post: dict):
    """The model action of a CTI's transition instance, or None when the transition has no model counterpart."""
    l = v["l"]
    name, _, arg = label.partition("(")
    f = int(arg.rstrip(")")) if arg else None
    if name == "Produce":
        return A.Produce(l, P, 1)
    if name == "IsrExpiration":
        return A.IsrExpiration(l)
    if name == "FetchRequest":
        return A.FetchRequest(f, P)
    if name == "FetchResponse":
        return A.FetchResponse(f, P)
    if name == "FollowerTruncate":
        return A.OffsetsForLeaderEpoch(f, P)
    if name == "Tick":
        return A.Tick(post["now"] - v["now"])
    return None   # IsrExpand, HwAdvance (run only inside a fetch / an append), LeaderChange (any election)


# ============================================================================ z3 invariants on concrete values
def z3_holds(name: str, v: dict) -> bool:
    """The z3 invariant ``name`` (quantifier-free) evaluated on the concrete abstract state ``v``."""
    p, s = H.Params(), H.St("chk")
    subst = [(p.L, z3.IntVal(v["L"])), (p.P, z3.IntVal(v["P"])), (p.J, z3.IntVal(v["J"]))]
    for key, term in s.v.items():
        if key == "at":
            continue
        subst.append((term, z3.BoolVal(v[key]) if isinstance(v[key], bool) else z3.IntVal(v[key])))
    return z3.is_true(z3.simplify(z3.substitute(H.INV_BY_NAME[name][0](p, s), *subst)))


def _agreement(cfg, state, v: dict, when: str) -> str | None:
    """None if every corresponding executable invariant fails on ``state`` exactly when its z3 twin fails on v."""
    failing = {x.invariant for x in check_state(cfg, state, 0, tuple(BY_NAME[e] for e in CORRESPONDING.values()))}
    for z, e in CORRESPONDING.items():
        if z3_holds(z, v) == (e in failing):
            return (f"ENCODING BUG: in the {when}-state z3 {z} {'holds' if z3_holds(z, v) else 'fails'} but the "
                    f"executable {e} {'fails' if e in failing else 'holds'}")
    return None


# ============================================================================ the re-check
def _observe(s, leader: int) -> dict:
    """``crosscheck.observe`` without the leader epoch: the decoder picks its own (``LEADER_EPOCH``)."""
    out = observe(s, leader)
    del out["epoch"]
    return out


def recheck_cti(cti, mutant: str | None) -> str:
    """Decode a CTI (``induction.StepResult``) into model states, step the model (under ``mutant``); a verdict.

    The verdict starts with "CTI re-checked in model:" when the model agrees and "ENCODING BUG:" when not;
    "CTI not replayable:" when the transition has no model counterpart (an over-approximation).
    """
    pre_v, post_v = dict(cti.pre), dict(cti.post)
    for k in ("L", "P", "J"):
        post_v[k] = pre_v[k]
    action = model_action(cti.label, pre_v, post_v)
    if action is None:
        return f"CTI not replayable: {cti.label} over-approximates Kafka and has no model action"
    base = model_config(pre_v)
    with installed(mutant, base) as cfg:
        try:
            pre = model_state(cfg, pre_v)
        except ReplayError as e:
            return f"ENCODING BUG: could not drive the model to a skeleton state: {e}"
        l = pre_v["l"]
        diff = differences(pre_v, _observe(pre, l))
        if diff:
            return f"ENCODING BUG: the decoded pre-state reads back differently: {diff}"
        bad = _agreement(cfg, pre, pre_v, "pre")
        if bad:
            return bad
        post = step(cfg, pre, action)
        if post is None:
            return f"ENCODING BUG: {A.describe(action)} is not enabled in the decoded pre-state"
        diff = differences(post_v, _observe(post, post_v["l"]))
        if diff:
            return f"ENCODING BUG: after {A.describe(action)} abstract vs model post-state differ: {diff}"
        bad = _agreement(cfg, post, post_v, "post")
        if bad:
            return bad
        inv, why = CTI_CHECKED_BY.get(cti.invariant, (None, "no executable counterpart"))
        if inv is None:
            return (f"CTI re-checked in model: z3 post-state reproduced; {cti.invariant} has no executable "
                    f"counterpart ({why})")
        vs = check_transition(cfg, pre, action, post, 1, (BY_NAME[inv],))
        if not vs:
            return f"ENCODING BUG: the model reproduces the CTI but the executable {inv} holds after {cti.label}"
        return f"CTI re-checked in model: {inv} fails"
