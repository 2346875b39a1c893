"""Render a violation for people: one sentence (the step table is properties/steptable.py).

Violations are data (``invariants.Violation``); this module only turns them into
text, in the manner of elle's explanations: the facts that were established, then
the step that contradicts them.
"""

from __future__ import annotations

import json

from ..model.step import initial_state, step
from .invariants import LIVENESS_BY_NAME, Violation


def _first_step(cfg, actions, predicate, start=None) -> int | None:
    """The first step (1-based) after which predicate(state) holds (0: already in the start state)."""
    s = initial_state(cfg, start)
    if start is not None and predicate(s):
        return 0
    for i, a in enumerate(actions, 1):
        s = step(cfg, s, a)
        if predicate(s):
            return i
    return None


def _state_after(cfg, actions, n: int, start=None):
    """The state after the first n actions."""
    s = initial_state(cfg, start)
    for a in actions[:n]:
        s = step(cfg, s, a)
    return s


def sentence(cfg, actions, v: Violation, start=None) -> str:
    """One sentence saying what broke, with the steps that establish it (``start``: the trace's start, model/start.py)."""
    f = v.facts
    if v.invariant == "acked_durability":
        acked_at = _first_step(cfg, actions, lambda s: any(x[0] == f["record"] for x in s.ghost.acked), start)
        led_at = _first_step(cfg, actions, lambda s: (f["partition"], f["leader_epoch"], f["leader"]) in s.ghost.leaders,
                             start)
        when = "in the start state" if acked_at == 0 else f"at step {acked_at}"
        head = (f"Offset {f['offset']} of partition {f['partition']} (record {f['record']}) was acknowledged to an "
                f"acks=all producer {when}; however broker {f['leader']}")
        if led_at is not None and acked_at is not None and led_at < acked_at:
            # the leader of that epoch already led when the write was acknowledged: it lost the record since
            # (an unclean crash, then leading the same epoch again after a restart)
            found = "no longer has it" if f["found"] is None else f"has record {f['found']} there instead"
            return (f"{head}, leader in epoch {f['leader_epoch']} since step {led_at}, {found} at step {v.step}: "
                    f"an acknowledged write was lost.")
        found = "without it" if f["found"] is None else f"with record {f['found']} there instead"
        return (f"{head} became leader in epoch {f['leader_epoch']} at step {led_at} {found}: an acknowledged "
                f"write was lost.")
    if v.invariant == "consumer_safety":
        if "records" in f:
            return (f"A consumer read two different records {f['records']} at offset {f['offset']} of partition "
                    f"{f['partition']}: a record read below the HW was replaced.")
        return (f"A consumer read record {f['record']} at offset {f['offset']} of partition {f['partition']}; "
                f"however broker {f['leader']}, leader in epoch {f['leader_epoch']}, no longer has it at step {v.step}.")
    if v.invariant == "isr_entry_condition":
        return (f"At step {v.step} broker {f['follower']} joined leader {f['leader']}'s ISR with LEO "
                f"{f['follower_log_end_offset']}, below the leader's epoch start offset "
                f"{f['leader_epoch_start_offset']} (HW {f['high_watermark']}): an ISR member lacks records the "
                f"leader had when its epoch began.")
    if v.invariant == "committed_prefix":
        held = "nothing" if f["follower_entry"] is None else f["follower_entry"]
        member = "ELR member" if f.get("eligible_leader_replica") else "ISR member"
        return (f"At step {v.step} leader {f['leader']} has HW {f['high_watermark']} but {member} {f['follower']} "
                f"holds {held} instead of {f['leader_entry']} at offset {f['offset']}.")
    if v.invariant == "log_matching":
        return (f"At step {v.step} brokers {f['brokers'][0]} and {f['brokers'][1]} agree on offset "
                f"{f['matched_offset']}'s epoch but differ at offset {f['offset']}: {f['entries']}.")
    if v.invariant == "hw_within_isr":
        state = _state_after(cfg, actions, v.step, start)
        own = state.brokers[f["leader"]].partitions[f["partition"]].leader_epoch
        zk = state.controller_partition_states()[f["partition"]]
        where = "ZooKeeper is" if state.quorum is None else "the controller is"
        stale = (f" (it still leads epoch {own}; {where} at epoch {zk.leader_epoch})"
                 if zk is not None and zk.leader_epoch > own else "")
        return (f"At step {v.step} broker {f['follower']}, a member of leader {f['leader']}'s ISR {f['isr']}, has LEO "
                f"{f['follower_log_end_offset']}, below that leader's HW {f['high_watermark']}{stale}: an ISR member "
                f"lacks records the leader counts as committed.")
    if v.invariant == "follower_hw_committed":
        held = "nothing" if f["leader_entry"] is None else f"record {f['leader_entry'][0]}"
        return (f"At step {v.step} follower {f['follower']} has HW {f['high_watermark']} over record "
                f"{f['follower_entry'][0]} (epoch {f['follower_entry'][1]}) at offset {f['offset']}, where leader "
                f"{f['leader']} (epoch {f['leader_epoch']}) holds {held}: an uncommitted record is exposed below a "
                f"follower's HW.")
    if v.invariant == "fetch_fencing":
        return (f"At step {v.step} leader {f['leader']} answered follower {f['follower']}'s fetch with {f['error']} "
                f"yet changed its state for that follower (LEO {f['log_end_offset_before']} -> "
                f"{f['log_end_offset_after']}).")
    lv = LIVENESS_BY_NAME.get(v.invariant)
    if lv is not None:
        return _liveness_sentence(lv, v)
    other = _SENTENCES.get(v.invariant)
    if other is not None:
        return f"At step {v.step} {other(f, cfg)}."
    facts = json.dumps(f, separators=(", ", ": "))
    return f"Invariant {v.invariant} failed at step {v.step}: {facts}."


def _liveness_sentence(lv, v: Violation) -> str:
    """A settling phase that did not settle (``properties.settle``): what stayed pending, and where each broker is."""
    f = v.facts
    n = f.get("settle_steps", 0)
    rows = []
    for b in f.get("brokers", ()):
        row = f"broker {b['broker']} LEO {b['log_end_offset']} HW {b['high_watermark']}"
        if "isr" in b:
            row += f" leading with ISR {b['isr']}" + (f" and a pending change {b['pending_isr']}" if "pending_isr" in b
                                                       else "")
        if "fetch_state" in b:
            row += f" {b['fetch_state']} from {b['fetching_from']}"
        rows.append(row)
    if "zk_leader" in f:
        zk = f"ZooKeeper's leader {f['zk_leader']} in epoch {f['zk_leader_epoch']} with ISR {f['zk_isr']}"
    elif "controller_leader" in f:
        zk = (f"the controller's leader {f['controller_leader']} in epoch {f['controller_leader_epoch']} with ISR "
              f"{f['controller_isr']}")
    else:
        zk = "no partition state in ZooKeeper"
    how = "still pending at the end" if f.get("pending_at_end") else "pending again and again"
    start = f.get("settle_from", v.step - n)
    return (f"After step {start}, {n} steps of fair scheduling without faults (deliveries, fetches, tasks and "
            f"the clock in turn) did not settle partition {f.get('partition')}: {lv.name} ({lv.reference}: "
            f"{lv.statement}) was {how}; {zk}; {'; '.join(rows) or 'no live replica'}.")


def _epochs(f, cfg) -> str:
    kind = next((k for k in ("controller_epoch", "broker_epoch", "version") if k + "_before" in f), "leader_epoch")
    where = {"zookeeper": "ZooKeeper's", "controller": "the controller's"}.get(f.get("where"), f"broker {f.get('broker')}'s")
    if kind == "broker_epoch":
        where = f"the controller's registration of broker {f['broker']}: its"
    if kind == "version":
        kind = "partition_epoch"
        return f"{where} partition epoch went back from {f['version_before']} to {f['version_after']}"
    return f"{where} {kind.replace('_', ' ')} went back from {f[kind + '_before']} to {f[kind + '_after']}"


def _zk_state(x) -> str:
    """A partition state znode as the facts give it, [leader, leader epoch, ISR, controller epoch], in words."""
    if x is None:
        return "none"
    leader, epoch, isr, controller_epoch = x
    return (f"(leader {leader if leader >= 0 else 'none'}, leader epoch {epoch}, ISR [{','.join(map(str, isr))}], "
            f"controller epoch {controller_epoch})")


def _lag_window(f, cfg) -> str:
    lag, since = cfg.replica_lag_time_max_ms, f["now"] - f["last_caught_up_time_ms"]
    if f["bound"] == "lower":
        return (f"leader {f['leader']}'s ISR expiration removed follower {f['follower']}, which was not out of sync "
                f"(last caught up {since} ms before, LEO {f['follower_log_end_offset']} against the leader's "
                f"{f['leader_log_end_offset']}; replica.lag.time.max.ms is {lag})")
    return (f"leader {f['leader']}'s ISR expiration kept follower {f['follower']}, last caught up {since} ms before, "
            f"beyond replica.lag.time.max.ms ({lag})")


_WHERE = {"zookeeper": "ZooKeeper", "controller": "the controller"}

#: one clause per invariant whose facts need no replay (the sentence is "At step N <clause>.")
_SENTENCES = {
    "log_offsets": lambda f, cfg: (f"broker {f['broker']}'s log breaks 0 <= log start <= HW <= LEO: log start "
                                   f"{f['log_start_offset']}, HW {f['high_watermark']}, LEO {f['log_end_offset']}"),
    "isr_well_formed": lambda f, cfg: (f"{_WHERE.get(f['where'], 'leader ' + str(f['leader']))}"
                                       f" holds ISR {f['isr']} with "
                                       f"{'no leader' if f['leader'] < 0 else 'leader ' + str(f['leader'])} for "
                                       f"assignment {f['assignment']}"
                                       + (" while its leader recovers from an unclean election: a recovering "
                                          "partition's ISR holds at most its leader (KIP-704)"
                                          if f.get("leader_recovery_state") == "RECOVERING" else
                                          ": an ISR must be non-empty, within the assignment and hold its leader")),
    "one_leader_per_epoch": lambda f, cfg: (f"brokers {f['leaders'][0]} and {f['leaders'][1]} have both become "
                                            f"leader of partition {f['partition']} in leader epoch "
                                            f"{f['leader_epoch']}"),
    "epoch_cache_monotonic": lambda f, cfg: (f"broker {f['broker']}'s leader-epoch cache {f['epoch_cache']} does not "
                                             f"have strictly increasing epochs and start offsets"),
    "isr_propagation_bound": lambda f, cfg: (f"broker {f['broker']} still has not written its ISR changes "
                                             f"{f['pending']} to ZooKeeper (last change at "
                                             f"{f['last_isr_change_ms']} ms, last propagation at "
                                             f"{f['last_isr_propagation_ms']} ms, now {f['now']} ms)"),
    "leader_hw_monotonic": lambda f, cfg: (f"leader {f['broker']}'s HW went back from {f['high_watermark_before']} "
                                           f"to {f['high_watermark_after']} within its tenure in epoch "
                                           f"{f['leader_epoch']}"),
    "epochs_monotonic": _epochs,
    "stale_controller_epoch_refused": lambda f, cfg: (f"broker {f['broker']} accepted a {f['request']} from "
                                                      f"controller epoch {f['request_controller_epoch']} although it "
                                                      f"had seen epoch {f['broker_controller_epoch']} (it changed "
                                                      f"{f['changed']})"),
    "stale_controller_write_refused": lambda f, cfg: (
        f"controller {f['controller']}, of controller epoch {f['controller_epoch']} while /controller_epoch holds "
        f"{f['zk_controller_epoch']}, wrote {f['written']}"
        + (f" {f['partition']}: {_zk_state(f['before'])} -> {_zk_state(f['after'])}" if f['written'] == 'partition state'
           else f" (deleted {f['before']})")
        + ": a deposed controller changed ZooKeeper (KAFKA-6082's fencing is off)"),
    "min_isr_promise": lambda f, cfg: (f"leader {f['leader']} acknowledged record {f['record']} at offset "
                                       f"{f['offset']} to an acks=all producer with ISR {f['isr']}, smaller than "
                                       f"min.insync.replicas={f['min_insync_replicas']}"),
    "isr_lag_window": _lag_window,
    "pending_isr_in_flight": lambda f, cfg: (
        f"broker {f['broker']}, ZooKeeper's leader of partition {f['partition']} in epoch {f['leader_epoch']}, "
        f"waits for an ISR {'expansion by' if f['pending']['expand'] else 'shrink by'} {f['pending']['replicas']} "
        f"(committed ISR {f['isr']}) that no AlterIsr of its own will answer "
        f"({'nothing queued' if not f['queued'] else 'only ' + str(f['queued']) + ' queued'}): until a new leader "
        f"epoch no ISR change can be made"),
    "hw_advanced_on_isr_shrink": lambda f, cfg: (
        f"leader {f['leader']}'s ISR shrank from {f['isr_before']} to {f['isr_after']} but its HW stayed at "
        f"{f['high_watermark']}, below the {f['hw_candidate']} the new ISR allows (LEO {f['log_end_offset']}): "
        f"the HW was not recomputed when the shrink took effect"),
    "acked_below_hw": lambda f, cfg: (
        f"broker {f['broker']} acknowledged record {f['record']} at offset {f['offset']} to an acks=all producer "
        + ("while it no longer leads the partition" if f['leader'] != f['broker'] else
           f"with its HW at {f['high_watermark']}" if f['held'] is not None and f['held'][0] == f['record'] else
           f"though its log holds {'nothing' if f['held'] is None else 'record ' + str(f['held'][0])} there")
        + ": a success must name records the leader holds below its HW"),
    "controller_bumps_leader_epoch": lambda f, cfg: (
        f"controller {f['controller']} rewrote partition {f['partition']} from {_zk_state(f['before'])} to "
        f"{_zk_state(f['after'])} without a new leader epoch: brokers cannot tell the new state from the old"),
    "zk_write_needs_session": lambda f, cfg: (
        f"broker {f['writer']} wrote partition {f['partition']}'s ISR {f['isr_before']} -> {f['isr_after']} to "
        f"ZooKeeper though its ZooKeeper session had expired"),
    "stale_broker_epoch_refused": lambda f, cfg: (
        f"broker {f['broker']} (broker epoch {f['broker_epoch']}) accepted a {f['request']} addressed to its earlier "
        f"incarnation (broker epoch {f['request_broker_epoch']}); it changed {f['changed']} (KIP-380's check)"),
    "control_requests_in_order": lambda f, cfg: (
        f"controller {f['controller']} delivered a {f['request']} with leader epoch {f['delivered_leader_epoch']} of "
        f"partition {f['partition']} to broker {f['broker']} while an older request (leader epoch "
        f"{f['still_queued_leader_epoch']}) was still queued: its requests reach the broker out of order"),
    "caught_up_time_sound": lambda f, cfg: (
        f"leader {f['leader']} moved follower {f['follower']}'s lastCaughtUpTimeMs from {f['caught_up_before']} to "
        f"{f['caught_up_after']} ms on a fetch at offset {f['fetch_offset']}, which reached neither its LEO "
        f"{f['leader_log_end_offset']} (fetch at {f['fetch_time_ms']} ms) nor the previous fetch's LEO "
        f"{f['previous_leader_log_end_offset']} (at {f['previous_fetch_time_ms']} ms)"),
    "leader_isr_covers_controller_isr": lambda f, cfg: (
        f"broker {f['leader']}, leader of partition {f['partition']} in the controller's leader epoch "
        f"{f['leader_epoch']}, counts only {f['leader_maximal_isr']} in its maximal ISR while the controller's ISR is "
        f"{f['controller_isr']}: its HW can pass {f['missing']}, which the controller may elect"),
    "controller_isr_entry_condition": lambda f, cfg: (
        f"the controller added broker {f['follower']} to partition {f['partition']}'s ISR {f['isr']} while its log ends "
        f"at {f['follower_log_end_offset']}, below leader {f['leader']}'s HW {f['high_watermark']}: the leader "
        f"proposed it on fetch state its log no longer matches (an earlier incarnation's, or a fetch offset it "
        f"truncated below), and it now counts as holding records it lacks"),
    "isr_members_eligible": lambda f, cfg: (
        f"broker {f['broker']} is in partition {f['partition']}'s ISR {f['isr']} (partition epoch "
        f"{f['partition_epoch']}) although the controller holds it "
        f"{'unregistered' if f['registration'] is None else 'fenced' if f['registration']['fenced'] else 'in controlled shutdown'}"
        f": a broker the controller does not count eligible counts toward the ISR (KIP-841's check is off)"),
    "forged_alter_partition_refused": lambda f, cfg: (
        f"the quorum controller accepted an AlterPartition for partition {f['partition']} that it must refuse "
        f"({f['defect']}): its answers to the requests no leader of the model sends were {f['answers']}"),
    "pending_isr_well_formed": lambda f, cfg: (
        f"broker {f['broker']}'s pending ISR change of partition {f['partition']} "
        f"({'expand by' if f['pending']['expand'] else 'shrink by'} {f['pending']['replicas']}, committed ISR "
        f"{f['isr']}, leader {f['leader']}) is malformed: {f['problem']}"),
}


# KAFKA-14140 and the metadata log
_SENTENCES.update({
    "zk_isr_joins_live": lambda f, cfg: (
        f"controller {f['controller']} wrote partition {f['partition']}'s ISR {f['isr_before']} -> {f['isr_after']} "
        f"for leader {f['leader']} (epoch {f['leader_epoch']}) although it holds broker {f['broker']} "
        f"{'shutting down' if f['shutting_down'] else 'dead'}: a broker it does not count live joined an ISR "
        f"(KAFKA-14140's checks are off)"),
    "metadata_log_matching": lambda f, cfg: (
        (f"broker {f['broker']}'s " if "broker" in f else "the quorum's ")
        + f"metadata went wrong: {f['problem']} (applied offset {f.get('metadata_offset', '-')}, log length "
        f"{f.get('log_length', f.get('length_after'))}): brokers no longer replay a prefix of the controller's log"),
})

def loss_sentence(loss) -> str:
    """One sentence for a documented loss (``replay.Loss``): the unclean election and exactly the records it lost."""
    f = loss.facts
    records = ", ".join(f"record {r} at offset {o}" for o, r in f["records"])
    when = "" if f.get("election_step") is None else f" at step {f['election_step']}"
    taken = ("" if f.get("taken_epoch") in (None, -1, f["leader_epoch"])
             else f" (it took over in epoch {f['taken_epoch']}, from the ISR the election left)")
    return (f"Documented loss: the unclean election{when} of broker {f['leader']} as leader of partition "
            f"{f['partition']} in epoch {f['leader_epoch']}{taken} lost {records}, acknowledged or read in an older "
            f"epoch (step {loss.step}); unclean.leader.election.enable trades them for availability, every other "
            f"record is still checked.")

# invariants the rule mutants showed missing
_SENTENCES.update({
    "epoch_cache_trimmed": lambda f, cfg: (
        f"broker {f['broker']}'s log of partition {f['partition']} ends at {f['log_end_offset']}"
        + ("" if f['log_end_offset_before'] is None or f['log_end_offset_before'] <= f['log_end_offset']
           else f" after a truncation from {f['log_end_offset_before']}")
        + f" but its epoch cache {f['epoch_cache']} still names an epoch starting there or later: the follower would "
          f"answer OffsetsForLeaderEpoch for records it no longer has (truncateFromEnd was skipped)"),
    "out_of_range_only_outside_log": lambda f, cfg: (
        f"leader {f['leader']} answered follower {f['follower']}'s fetch at offset {f['fetch_offset']} "
        f"OFFSET_OUT_OF_RANGE though its log spans [{f['log_start_offset']}, {f['log_end_offset']}]: a follower "
        f"within the leader's log is sent to reset its offset"),
    "leader_epoch_start_bound": lambda f, cfg: (
        f"broker {f['leader']} leads partition {f['partition']} in epoch {f['leader_epoch']} "
        f"with its leader epoch start offset at {f['leader_epoch_start_offset']}, below where its epoch cache starts "
        f"that epoch ({f['epoch_cache_start']}): a follower missing the records in between can join the ISR "
        f"(KAFKA-7128's check is judged against the wrong offset)"),
    "fetch_epoch_fenced": lambda f, cfg: (
        f"leader {f['leader']} (epoch {f['leader_epoch']}) answered follower {f['follower']}'s fetch in epoch "
        f"{f['fetch_leader_epoch']} with {f['error']} instead of {f['expected']}: a follower of another leader epoch "
        f"was served (KIP-320's fencing is skipped)"),
    "follower_fetches_current_epoch": lambda f, cfg: (
        f"broker {f['broker']} follows leader {f['leader']} of partition {f['partition']} in epoch {f['leader_epoch']} "
        f"but its fetcher still fetches from {f['fetching_from']} in epoch {f['fetch_leader_epoch']}: makeFollower "
        f"skipped the fetcher's restart (and its truncation round), so the leader fences every fetch"),
    "controller_in_own_session": lambda f, cfg: (
        f"broker {f['broker']} registered again with a new ZooKeeper session (broker epoch {f['broker_epoch_before']} "
        f"-> {f['broker_epoch_after']}) while its controller of epoch {f['controller_epoch']} stayed: a controller of "
        f"the expired session goes on acting with the new one"),
    "crashed_broker_forgets": lambda f, cfg: (
        f"broker {f['broker']} stopped but kept its process's {', '.join(f['kept'])} ({f['delayed_produces']} parked "
        f"produce and {f['delayed_fetches']} parked fetch requests): a later incarnation could answer or act on them"),
})


# --------------------------------------------------------------------------- attribution (properties/attribution.py)
def evidence_line(invariant: str, e) -> str:
    """One replay behind an attribution, in words: the fixes it had on and what became of the violation."""
    what = {"removed": f"{invariant} holds throughout",
            "cut": f"step {e.step}'s action is no longer enabled, {invariant} holding until then",
            "persists": f"{invariant} still fails" + (f", at step {e.step}" if e.step is not None else ""),
            "invalid": "no valid configuration"}.get(e.outcome, e.outcome)
    return f"with {' + '.join(e.fixes)} fixed, {what}"


def attribution_lines(a) -> list:
    """An attribution for people: its summary line (which known bugs, by their fixes), then each replay behind it."""
    return [a.summary()] + [evidence_line(a.invariant, e) for e in a.evidence]


def _replicas(replicas) -> str:
    return ", ".join(f"broker {b} ({'up' if up else 'down'}, " + ("no log)" if leo is None else f"LEO {leo})")
                     for b, up, leo in replicas) or "none"


# the properties of Vanlightly/kafka-tlaplus's KIP-966 specification
_SENTENCES.update({
    "acked_survives_leaderless": lambda f, cfg: (
        f"no live broker leads partition {f['partition']} in epoch {f['acked_epoch']} or later, and no replica holds "
        f"record {f['record']}, acknowledged at offset {f['offset']} in epoch {f['acked_epoch']}, any longer "
        f"(replicas: {_replicas(f['replicas'])}; {f['lossy_crashes']} lossy crashes, fewer than min ISR): an "
        f"acknowledged write was lost from every replica"),
    "min_isr_recovery_quorum": lambda f, cfg: (
        f"partition {f['partition']}'s recovery quorum, ISR {f['isr']} + ELR {f['elr']} + last known ELR "
        f"{f['last_known_elr']}, "
        + (f"holds fewer than min ISR = {f['min_isr']} replicas" if f["problem"] == "recovery quorum below min ISR"
           else f"holds no replica with record {f['record']}, acknowledged at offset {f['offset']} in epoch "
                f"{f['acked_epoch']} ({f['lossy_crashes']} lossy crashes, fewer than min ISR = {f['min_isr']})")
        + ": the controller can no longer recover the partition without losing acknowledged writes"),
})
