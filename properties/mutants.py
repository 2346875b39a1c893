"""A registry of named rule mutants of the model: plausible one-line protocol bugs, for the mutation benchmark.

Each ``Mutant`` names one function of a model module and one exact snippet of its source with the text
that replaces it.  ``installed(name)`` compiles the changed function from the model's own source
(``inspect.getsource`` of the module, the function located with ``ast``, decorators included), swaps it
for the original in its defining module and in every ``isrlab.model`` module that imported it by name,
and restores the originals on exit; ``suspended(saved)`` puts the originals back for one block (the
benchmark replays a kill's trace on the real model so) and the mutant after it.  The rules themselves
carry no mutant switch, and a model change that removes a snippet fails loudly (``MutantError``)
instead of silently running the real model (``tests/test_mutate.py`` compiles every mutant).  A mutant
is installed by name, so a Spark task installs it on its executor from the same registry.

The registry is split by a fixed rule into a tuning half and a held-out half: ``half(name)`` is
"held-out" when the first byte of ``blake2b(name)`` is odd, "tuning" when it is even.  A search change
is tuned on the first half and judged on the second, which it must not make worse.

A mutant that no engine can kill carries ``equivalent_reason`` when it cannot change any behaviour the
catalogue can see on ``kafka-2.4`` (a ``kraft_only`` one: on the KRaft presets) and why; a survivor without one
points at a missing invariant.  Several KRaft guards are equivalent because another guard behind them refuses the
same request, or because what a request from a broker's earlier incarnation (``OrphanRequestReceived``) can do without
them changes nothing the catalogue sees: their reasons say which.  The quorum controller's AlterPartition guards are
killed on ``kraft-forged-alter-partition``, where AlterPartitionReceived sends the requests they refuse.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import inspect
import sys
import textwrap
from dataclasses import dataclass

AREAS = ("partition", "replica manager", "fetcher", "controller", "log", "delayed operations", "faults")
KINDS = ("off-by-one", "wrong comparison", "missing check", "wrong value source", "wrong order")
MODEL_PACKAGE = "isrlab.model"


class MutantError(RuntimeError):
    """A mutant that cannot be installed: unknown name, function not found, snippet missing or ambiguous."""


@dataclass(frozen=True)
class Mutant:
    """One wrong rule: ``old`` (exactly once in ``function``'s source) becomes ``new``."""

    name: str
    area: str
    kind: str
    #: model module, relative to isrlab.model ("partition", "log", ...)
    module: str
    #: a module-level function, or "Class.method"
    function: str
    old: str
    new: str
    #: one line, in Kafka's terms
    meaning: str
    #: why it cannot change what the catalogue sees on kafka-2.4, or for a KRaft-only mutant on the KRaft presets
    #: (None: it should be killed)
    equivalent_reason: str | None = None
    #: a rule only the KRaft era runs (the quorum controller, the metadata log's replay, the 3.x partition rules):
    #: applied only to presets with kip_500, where it can change something
    kraft_only: bool = False

    @property
    def half(self) -> str:
        return half(self.name)

    def to_json(self) -> dict:
        return {"name": self.name, "area": self.area, "kind": self.kind, "module": self.module,
                "function": self.function, "meaning": self.meaning, "equivalent_reason": self.equivalent_reason,
                "half": self.half, "kraft_only": self.kraft_only}


def half(name: str) -> str:
    """The fixed split: "held-out" when the first byte of blake2b(name) is odd, else "tuning"."""
    return "held-out" if hashlib.blake2b(name.encode()).digest()[0] & 1 else "tuning"


M = Mutant


def K(*args, **kw) -> Mutant:
    """A mutant of a rule only the KRaft era runs."""
    return Mutant(*args, kraft_only=True, **kw)


MUTANTS: tuple[Mutant, ...] = (
    # ----------------------------------------------------------------------------------------------- partition
    M("caught-up-one-behind", "partition", "off-by-one", "partition", "update_fetch_state",
      "if fetch_offset >= leader_end_offset:", "if fetch_offset >= leader_end_offset - 1:",
      "Replica.updateFetchState credits a follower one record behind the leader's LEO as caught up (RS1)"),
    M("caught-up-without-previous-leo", "partition", "missing check", "partition", "update_fetch_state",
      "elif fetch_offset >= r.last_fetch_leader_log_end_offset:", "else:",
      "Replica.updateFetchState credits the previous fetch time even when the follower is behind the leader's "
      "LEO of that fetch (RS2's check dropped)"),
    M("hw-ignores-isr", "partition", "missing check", "partition", "maybe_increment_leader_hw",
      " or r.broker_id in isr)", ")",
      "maybeIncrementLeaderHW counts only replicas caught up within replica.lag.time.max.ms, not every ISR "
      "member (HW1)"),
    M("hw-not-monotonic", "partition", "wrong comparison", "partition", "maybe_increment_leader_hw",
      "if new_hw > log.high_watermark:", "if new_hw != log.high_watermark:",
      "the leader's HW is written whenever it differs, so it can go down (Log.maybeIncrementHighWatermark's "
      "monotonic guard, HW3)"),
    M("hw-lag-window-one-longer", "partition", "off-by-one", "partition", "maybe_increment_leader_hw",
      "now - r.last_caught_up_time_ms <= lag", "now - r.last_caught_up_time_ms <= lag + 1",
      "a non-ISR replica caught up exactly replica.lag.time.max.ms + 1 ago still holds the HW back",
      equivalent_reason="every time on kafka-2.4 is the start time plus a multiple of 500 ms (1000 ms ticks cut at "
                        "task deadlines of 2500, 5000 and 30000 ms periods) and a lastCaughtUpTime is such a time or 0, "
                        "so now - lastCaughtUpTime is never replica.lag.time.max.ms + 1 and the comparisons agree "
                        "(no step changed in 25k, benchmarks/mutant_infection.py)"),
    M("shrink-ge", "partition", "off-by-one", "partition", "is_follower_out_of_sync",
      "> max_lag_ms", ">= max_lag_ms",
      "isFollowerOutOfSync removes a follower exactly replica.lag.time.max.ms behind (SH3's strict >)"),
    M("shrink-no-leo-guard", "partition", "missing check", "partition", "is_follower_out_of_sync",
      "r.log_end_offset != leader_end_offset and ", "",
      "isFollowerOutOfSync removes an idle follower that holds every record (KAFKA-7152's LEO guard dropped)"),
    M("shrink-without-hw", "partition", "missing check", "partition", "maybe_shrink_isr",
      "    if maybe_increment_leader_hw(cfg, br, p, now):\n        delayed.try_complete_delayed_produce(cfg, s, br, p)\n",
      "",
      "maybeShrinkIsr removes followers without recomputing the HW over the smaller ISR (KAFKA-13091's kind)"),
    M("isr-write-without-cas", "partition", "missing check", "partition", "update_isr",
      " or current.zk_version != part.zk_version", "",
      "Partition.updateIsr writes the ISR to ZooKeeper without the zkVersion compare-and-set (SH5)"),
    M("isr-write-without-session", "partition", "missing check", "partition", "update_isr",
      "if not zk.sessions[b] or ", "if ",
      "a leader whose ZooKeeper session expired still writes its ISR change to ZooKeeper"),
    M("expand-below-hw-by-one", "partition", "off-by-one", "partition", "is_follower_in_sync",
      "if r.log_end_offset < log.high_watermark:", "if r.log_end_offset < log.high_watermark - 1:",
      "isFollowerInSync admits a follower one record below the HW (EX2)"),
    M("expand-below-epoch-start-by-one", "partition", "off-by-one", "partition", "is_follower_in_sync",
      "r.log_end_offset >= part.leader_epoch_start_offset", "r.log_end_offset >= part.leader_epoch_start_offset - 1",
      "isFollowerInSync admits a follower one record below the leader epoch's start offset (KAFKA-7128's check)"),
    M("expand-before-fetch-state", "partition", "wrong order", "partition", "update_follower_fetch_state",
      "    update_fetch_state(r, fetch_offset, follower_start_offset, fetch_time_ms, leader_end_offset)\n"
      "    if cfg.kip_500 and cfg.kip_903:\n",
      "    if follower not in part.isr:\n        maybe_expand_isr(cfg, s, br, p, follower)\n"
      "    update_fetch_state(r, fetch_offset, follower_start_offset, fetch_time_ms, leader_end_offset)\n"
      "    if cfg.kip_500 and cfg.kip_903:\n",
      "updateFollowerFetchState tries the ISR expansion before recording the fetch, so with the previous LEO",
      equivalent_reason="the expansion is only delayed to the follower's next fetch, judged on an older and so "
                        "lower LEO: every follower it admits Kafka admits as well"),
    M("leader-keeps-remote-leos", "partition", "missing check", "partition", "make_leader",
      "        if is_new_leader:                                                         # M8\n"
      "            update_fetch_state(r, -1, -1, 0, -1)\n", "",
      "makeLeader keeps the follower LEOs of an earlier tenure instead of resetting them (M8)"),
    M("epoch-start-from-hw", "partition", "wrong value source", "partition", "make_leader",
      "part.leader_epoch_start_offset = leo ", "part.leader_epoch_start_offset = log.high_watermark ",
      "makeLeader takes the leader epoch's start offset from the HW instead of the LEO (M4)"),
    M("leader-no-epoch-cache-entry", "partition", "missing check", "partition", "make_leader",
      "if cfg.kafka_7415:", "if False:",
      "a new leader does not assign its epoch in the epoch cache before its first append (KAFKA-7415 undone)"),
    M("leader-all-caught-up", "partition", "wrong value source", "partition", "make_leader",
      "now if r.broker_id in isr else 0", "now",
      "makeLeader resets every remote replica's lastCaughtUpTime to now, not only the ISR members' (M7)",
      equivalent_reason="a non-ISR replica counted as caught up only holds the HW back (a safe direction) for at "
                        "most replica.lag.time.max.ms; no other rule reads a non-member's lastCaughtUpTime"),
    M("follower-same-leader-no-truncation", "partition", "missing check", "partition", "make_follower",
      "unchanged = same_leader and ps.leader_epoch == old_epoch", "unchanged = same_leader",
      "makeFollower skips the truncation round when only the leader epoch changed (KAFKA-7164 / KIP-320 undone)"),
    M("new-log-hw-unclamped", "partition", "missing check", "partition", "create_log_if_not_exists",
      "clamp_high_watermark(log, checkpoint if checkpoint is not None else 0)",
      "checkpoint if checkpoint is not None else 0",
      "a log created on LeaderAndIsr takes the checkpointed HW without clamping it to its LEO (M3)",
      equivalent_reason="the model never deletes a log (no topic deletion), so a log is created only where none "
                        "ever was, whose checkpoint is empty: the unclamped value is 0, the clamped one too"),
    # ----------------------------------------------------------------------------------------- replica manager
    M("leader-and-isr-stale-by-one", "replica manager", "off-by-one", "replica_manager", "become_leader_or_follower",
      "if req.controller_epoch < br.controller_epoch:", "if req.controller_epoch < br.controller_epoch - 1:",
      "becomeLeaderOrFollower accepts a LeaderAndIsr one controller epoch older than the broker's (C1)"),
    M("leader-and-isr-same-epoch", "replica manager", "wrong comparison", "replica_manager",
      "become_leader_or_follower",
      "if ps.leader_epoch > hosted.leader_epoch:", "if ps.leader_epoch >= hosted.leader_epoch:",
      "becomeLeaderOrFollower applies a partition state whose leader epoch is not newer than its own (C4)"),
    M("follower-fetches-from-lead-hw", "replica manager", "wrong value source", "replica_manager", "start_fetching",
      "fetch = FetchState(ps.leader, ps.leader_epoch, br.logs[p].high_watermark, TRUNCATING)",
      "fetch = FetchState(ps.leader, ps.leader_epoch, br.logs[p].log_end_offset, TRUNCATING)",
      "makeFollowers starts the fetcher at the log end instead of the HW (InitialFetchState's offset)",
      equivalent_reason="a Truncating fetch state's offset is replaced by the truncated LEO after its round; only FO7 "
                        "(never run on kafka-2.4, see follower-undefined-keeps-log) and a log without epochs read it, "
                        "and on kafka-2.4 a log without epoch entries is empty, its HW its LEO (the state differs in 169 "
                        "of 34k steps, no later step does: benchmarks/mutant_infection.py)"),
    M("follower-keeps-delayed-produce", "replica manager", "missing check", "replica_manager", "start_fetching",
      "    try_complete_delayed_produce(cfg, s, br, p)\n", "",
      "makeFollowers does not complete the produce requests parked on a partition it no longer leads"),
    M("min-isr-ignored", "replica manager", "missing check", "replica_manager", "append_records",
      "if acks == -1 and len(part.isr) < effective_min_isr(cfg, part):", "if False:",
      "an acks=all produce is appended even when the ISR is below min.insync.replicas (P3)",
      equivalent_reason="kafka-2.4 has min.insync.replicas=1 and the leader is always in its own ISR, so the "
                        "check never refuses (min_isr_promise kills it on min-isr-2)"),
    M("produce-required-offset-one-short", "replica manager", "off-by-one", "replica_manager", "append_records",
      "DelayedProduce(g.next_request_id, p, last + 1,", "DelayedProduce(g.next_request_id, p, last,",
      "an acks=all produce waits for the HW to reach its last offset instead of passing it (P6)"),
    M("fetch-not-fenced", "replica manager", "missing check", "replica_manager", "fetch_messages",
      "elif current_leader_epoch >= 0 and part.leader_epoch > current_leader_epoch:", "elif False:",
      "a leader serves a fetch that carries an older leader epoch (KIP-320's FENCED_LEADER_EPOCH)"),
    M("fetch-at-leo-out-of-range", "replica manager", "off-by-one", "replica_manager", "fetch_messages",
      "if fetch_offset > leo or", "if fetch_offset >= leo or",
      "a fetch at the leader's LEO is answered OFFSET_OUT_OF_RANGE (FE5)"),
    M("consumer-reads-to-leo", "replica manager", "wrong value source", "replica_manager", "fetch_messages",
      "max_offset = leo if is_follower else hw", "max_offset = leo",
      "consumers read up to the leader's LEO instead of the HW (FE1)"),
    M("propagation-needs-both-delays", "replica manager", "wrong comparison", "replica_manager",
      "maybe_propagate_isr_changes",
      "cfg.isr_change_blackout_ms < now\n            or ", "cfg.isr_change_blackout_ms < now\n            and ",
      "maybePropagateIsrChanges waits for both 5 s of quiet and 60 s since the last propagation (or for and)"),
    M("checkpoint-leo", "replica manager", "wrong value source", "replica_manager", "checkpoint_high_watermarks",
      "br.logs[p].high_watermark if", "br.logs[p].log_end_offset if",
      "the high-watermark checkpoint file records each log's LEO instead of its HW"),
    M("update-metadata-no-epoch-check", "replica manager", "missing check", "replica_manager",
      "maybe_update_metadata_cache",
      "if req.controller_epoch < br.controller_epoch:", "if False:",
      "UpdateMetadata from an older controller epoch is applied (C10)"),
    M("broker-epoch-not-checked", "replica manager", "missing check", "replica_manager", "_broker_epoch_stale",
      "return req.broker_epoch != -1 and req.broker_epoch < br.broker_epoch", "return False",
      "control requests for an older broker epoch are handled (KIP-380's check dropped)"),
    # ------------------------------------------------------------------------------------------------ fetcher
    M("follower-hw-unclamped", "fetcher", "missing check", "fetcher", "process_fetch_response",
      "log.high_watermark = clamp_high_watermark(log, resp.high_watermark)",
      "log.high_watermark = resp.high_watermark",
      "the follower takes the leader's HW without clamping it to its own LEO (FO2)",
      equivalent_reason="a fetch response carries every record up to the leader's LEO (no fetch size) and the fixed "
                        "assignment always hosts the follower, so after the append its LEO is at least the HW"),
    M("follower-hw-before-append", "fetcher", "wrong order", "fetcher", "process_fetch_response",
      "        if resp.entries:\n            append_as_follower(log, resp.entries, cfg.records_have_epochs(p))\n"
      "        log.high_watermark = clamp_high_watermark(log, resp.high_watermark)           # FO2: may go down\n",
      "        log.high_watermark = clamp_high_watermark(log, resp.high_watermark)           # FO2: may go down\n"
      "        if resp.entries:\n            append_as_follower(log, resp.entries, cfg.records_have_epochs(p))\n",
      "the follower clamps the leader's HW against its LEO before appending the fetched records",
      equivalent_reason="the follower's HW is then lower (clamped to the LEO before the append), which Kafka "
                        "allows as well: the next fetch brings it up; no invariant may fail on a lower HW"),
    M("follower-truncation-ignores-leader-end", "fetcher", "wrong value source", "fetcher",
      "_offset_truncation_state",
      "return min(follower_end, end, leo), True",
      "return min(follower_end, leo), True",
      "after OffsetsForLeaderEpoch the follower truncates to its own end of the epoch, ignoring the leader's (FO9)"),
    M("follower-keeps-unknown-epoch", "fetcher", "wrong value source", "fetcher", "_offset_truncation_state",
      "        return min(end, leo), True",
      "        return leo, True",
      "a follower that lacks the leader's epoch keeps its whole log instead of truncating to the leader's end (FO10)",
      equivalent_reason="FO10 needs an answer epoch above every epoch of the follower's cache, but the leader answers "
                        "the follower's latest epoch with its largest epoch at or below it, and on kafka-2.4 request and "
                        "answer are one step, so the cache cannot change between them: the branch never runs (no step "
                        "changed in 33k, benchmarks/mutant_infection.py)"),
    M("follower-undefined-keeps-log", "fetcher", "wrong value source", "fetcher", "_apply_epoch_answer",
      "    if end == UNDEFINED_EPOCH_OFFSET:                                                 # FO7\n"
      "        _finish_truncation(s, f, log, f.fetch_offset)",
      "    if end == UNDEFINED_EPOCH_OFFSET:                                                 # FO7\n"
      "        _finish_truncation(s, f, log, leo)",
      "when the leader answers UNDEFINED_EPOCH_OFFSET the follower keeps its log instead of truncating to its HW",
      equivalent_reason="the leader answers UNDEFINED only to an epoch above all of its own; with KIP-320 it answers "
                        "only in the follower's fetch epoch, which no epoch of the follower's cache exceeds, and "
                        "KAFKA-7415 puts that epoch in the leader's cache: FO7 never runs on kafka-2.4 (no step changed "
                        "in 33k, benchmarks/mutant_infection.py)"),
    M("fetch-without-leader-epoch", "fetcher", "missing check", "fetcher", "send_fetch",
      "current_epoch = f.leader_epoch if cfg.kip_320 else -1", "current_epoch = -1",
      "the follower's fetch carries no current leader epoch (KIP-320 undone on the fetch path)"),
    M("truncation-offset-after-fetch-offset", "fetcher", "wrong order", "fetcher", "_finish_truncation",
      "    _truncate(s, log, offset)\n    f.fetch_offset = log.log_end_offset\n",
      "    f.fetch_offset = log.log_end_offset\n    _truncate(s, log, offset)\n",
      "the fetcher takes its fetch offset from the log end before truncating, not after"),
    M("out-of-range-no-truncation", "fetcher", "wrong comparison", "fetcher", "fetch_offset_and_truncate",
      "if leader_end < log.log_end_offset:", "if leader_end > log.log_end_offset:",
      "on OFFSET_OUT_OF_RANGE the follower truncates only when the leader's log is longer (FO12 inverted)",
      equivalent_reason="no follower gets OFFSET_OUT_OF_RANGE on kafka-2.4: log start offsets stay 0 (no DeleteRecords "
                        "or retention) and a truncation round leaves the fetch offset at most the leader's LEO, which "
                        "does not go down within its epoch (no step changed in 18k, benchmarks/mutant_infection.py); "
                        "on log-start-offset it is killed (controller_isr_entry_condition, 0.4 s)"),
    # ----------------------------------------------------------------------------------------------- log
    M("epoch-cache-keeps-later-offsets", "log", "missing check", "log", "cache_assign",
      " and e[1] < start_offset", "",
      "LeaderEpochFileCache.assign keeps entries that start at or after the new epoch's start offset"),
    M("epoch-cache-same-start-reassigned", "log", "wrong comparison", "log", "cache_assign",
      "start_offset >= last_start", "start_offset > last_start",
      "LeaderEpochFileCache.assign replaces the last entry when the same epoch is assigned at the same offset",
      equivalent_reason="replacing (epoch, start) by itself gives the same cache"),
    M("end-offset-for-next-epoch", "log", "off-by-one", "log", "cache_end_offset_for",
      "subsequent = [e for e in cache if e[0] > requested]", "subsequent = [e for e in cache if e[0] > requested + 1]",
      "endOffsetFor answers with the start of the epoch after next instead of the next epoch's start offset"),
    M("end-offset-previous-epoch", "log", "wrong comparison", "log", "cache_end_offset_for",
      "previous = [e for e in cache if e[0] <= requested]", "previous = [e for e in cache if e[0] < requested]",
      "endOffsetFor names the epoch before the requested one as the largest epoch <= requested"),
    M("cache-truncate-keeps-end", "log", "off-by-one", "log", "cache_truncate_from_end",
      "tuple(e for e in cache if e[1] < end_offset)", "tuple(e for e in cache if e[1] <= end_offset)",
      "LeaderEpochFileCache.truncateFromEnd keeps an entry that starts exactly at the truncation offset"),
    M("leader-epoch-start-one-late", "log", "off-by-one", "log", "append_as_leader",
      "cache_assign(log.epoch_cache, leader_epoch, first)", "cache_assign(log.epoch_cache, leader_epoch, first + 1)",
      "Log.appendAsLeader assigns the epoch at the offset after the batch's base offset",
      equivalent_reason="with KAFKA-7415 makeLeader assigns the leader's epoch at its LEO before any append, and a "
                        "leader's cache keeps ending with it (nothing truncates a leader's cache from the end), so "
                        "assigning the same epoch at a later offset changes nothing (no step changed in 28k, "
                        "benchmarks/mutant_infection.py); no-kafka-7415 would show it"),
    M("follower-epoch-start-one-late", "log", "wrong order", "log", "append_as_follower",
      "        cache = cache_assign(cache, epoch, offset)\n        offset += 1\n",
      "        offset += 1\n        cache = cache_assign(cache, epoch, offset)\n",
      "Log.appendAsFollower moves past a batch before assigning its epoch, so each epoch starts one offset late"),
    M("truncate-keeps-hw", "log", "missing check", "log", "truncate_to",
      "    if log.high_watermark > target:\n        log.high_watermark = target\n", "",
      "Log.truncateTo leaves the HW above the new log end (FO4)",
      equivalent_reason="on kafka-2.4 no log is truncated below its HW: a follower truncates where it diverges from "
                        "the leader, and below its HW it holds the leader's records (follower_hw_committed); the "
                        "truncations that go below (lossy crashes, unclean elections) are off; on crash-loses-unflushed "
                        "log_offsets kills it in 2.4 s (no step changed in 20k on kafka-2.4, "
                        "benchmarks/mutant_infection.py)"),
    M("truncate-keeps-epoch-cache", "log", "missing check", "log", "truncate_to",
      "    log.epoch_cache = cache_truncate_from_end(log.epoch_cache, target)\n", "",
      "Log.truncateTo does not truncate the leader-epoch cache with the log"),
    M("clamp-order-swapped", "log", "wrong order", "log", "clamp_high_watermark",
      "min(max(hw, log.log_start_offset), log.log_end_offset)",
      "max(min(hw, log.log_end_offset), log.log_start_offset)",
      "Log.updateHighWatermark clamps to the LEO first, then to the log start offset",
      equivalent_reason="the two clamps commute whenever log start <= LEO, which every log keeps"),
    # ------------------------------------------------------------------------------------- delayed operations
    M("acks-all-one-short", "delayed operations", "off-by-one", "delayed", "check_enough_replicas_reach_offset",
      "if br.logs[p].high_watermark >= required_offset:", "if br.logs[p].high_watermark >= required_offset - 1:",
      "checkEnoughReplicasReachOffset answers an acks=all produce when the HW is one short of it (P7)"),
    M("produce-to-follower", "delayed operations", "missing check", "delayed", "leader_partition_or_error",
      "    if part.leader != br.broker_id:\n        return None, E.NOT_LEADER_FOR_PARTITION\n", "",
      "a broker that hosts the partition but does not lead it accepts produce requests (leaderLogIfLocal)"),
    M("expired-produce-acked", "delayed operations", "wrong value source", "delayed", "expire_delayed_produce",
      "respond_produce(s, br, dp, E.REQUEST_TIMED_OUT)", "respond_produce(s, br, dp, E.NONE)",
      "DelayedProduce.onExpiration answers NONE instead of REQUEST_TIMED_OUT"),
    M("complete-without-min-isr", "delayed operations", "missing check", "delayed",
      "check_enough_replicas_reach_offset",
      "if effective_min_isr(cfg, part) <= len(part.isr) + (1 if pend is not None and pend.expand else 0):", "if True:",
      "a completed acks=all produce is answered NONE even when the ISR shrank below min.insync.replicas (P7)",
      equivalent_reason="with min.insync.replicas=1 on kafka-2.4 the ISR (which holds the leader) always has "
                        "enough members; min_isr_promise kills it on min-isr-2"),
    # ------------------------------------------------------------------------------------------- controller
    M("unclean-election-always", "controller", "missing check", "controller", "offline_partition_leader_election",
      "if live(r) and r in isr:", "if live(r):",
      "offlinePartitionLeaderElection elects the first live assigned replica, in the ISR or not"),
    M("election-keeps-dead-isr", "controller", "wrong value source", "controller",
      "offline_partition_leader_election",
      "return r, tuple(sorted(x for x in isr if live(x))), False", "return r, tuple(sorted(isr)), False",
      "offlinePartitionLeaderElection keeps dead replicas in the new ISR",
      equivalent_reason="every event that runs the offline election moves the dead brokers' replicas to OfflineReplica "
                        "in the same event (onReplicasBecomeOffline; on failover ReplicaStateMachine.startup), which "
                        "takes them out of the ISR: the mutant adds one ZooKeeper write, one leader epoch and a "
                        "LeaderAndIsr whose ISR holds a dead broker until the next, which only holds the HW back (15 "
                        "changed steps in 18k, none seen by an invariant: benchmarks/mutant_infection.py)"),
    M("election-same-epoch", "controller", "off-by-one", "controller", "trigger_online_partition_state_change",
      "LeaderIsrAndControllerEpoch(leader, st.leader_epoch + 1,", "LeaderIsrAndControllerEpoch(leader, st.leader_epoch,",
      "an offline partition's new leader is elected in the old leader epoch (no epoch bump)"),
    M("election-ignores-newer-controller", "controller", "missing check", "controller",
      "trigger_online_partition_state_change",
      "            if st.controller_epoch > c.epoch:                                         # K6\n"
      "                continue\n", "",
      "the controller elects a leader for a partition last written by a newer controller epoch (K6)",
      equivalent_reason="with KAFKA-6082 such a controller is fenced at its write and resigns, which a zombie "
                        "may do at any step anyway: every run of the mutant is a run of the real model"),
    M("isr-removes-last-member", "controller", "missing check", "controller", "isr_without_replica",
      "return isr if len(isr) == 1 else tuple(x for x in isr if x != r)", "return tuple(x for x in isr if x != r)",
      "doRemoveReplicasFromIsr removes the last ISR member too, leaving an empty ISR"),
    M("isr-removal-same-epoch", "controller", "off-by-one", "controller", "offline_replica_transition",
      "new = LeaderIsrAndControllerEpoch(new_leader, st.leader_epoch + 1,",
      "new = LeaderIsrAndControllerEpoch(new_leader, st.leader_epoch,",
      "removing a dead replica from the ISR keeps the leader epoch (K5's bump dropped)"),
    M("controller-write-unfenced", "controller", "missing check", "controller", "write_partition_state",
      "if cfg.kafka_6082 and zk.controller_epoch_zk_version != c.epoch_zk_version:", "if False:",
      "a controller's partition-state write to ZooKeeper is not fenced by the controller epoch's zkVersion "
      "(KAFKA-6082 undone)"),
    M("deliver-newest-first", "controller", "wrong order", "controller", "deliver_control_request",
      "    req = c.queues[to][0]\n    c.queues = replace_at(c.queues, to, c.queues[to][1:])\n",
      "    req = c.queues[to][-1]\n    c.queues = replace_at(c.queues, to, c.queues[to][:-1])\n",
      "the controller's RequestSendThread sends the newest queued request first instead of the oldest"),
    M("bounce-startup-before-failure", "controller", "wrong order", "controller", "process_broker_change",
      "        on_broker_failure(cfg, s, c, bounced)\n        on_broker_startup(cfg, s, c, bounced)\n",
      "        on_broker_startup(cfg, s, c, bounced)\n        on_broker_failure(cfg, s, c, bounced)\n",
      "processBrokerChange handles a bounced broker's startup before its failure"),
    # ---------------------------------------------------------------------------------------------- faults
    M("restart-hw-from-leo", "faults", "wrong value source", "faults", "broker_restart",
      "hw = clamp_high_watermark(log, checkpoint if checkpoint is not None else 0)", "hw = log.log_end_offset",
      "a restarted broker takes its HW from the log end instead of the HW checkpoint file"),
    M("crash-keeps-delayed-produce", "faults", "missing check", "faults", "broker_crash",
      "    br.delayed_produces = ()          # parked produce requests die with the process: no response\n", "",
      "parked acks=all produce requests survive a broker crash and can still be answered after the restart"),
    M("reconnect-keeps-controller", "faults", "missing check", "faults", "zk_reconnect",
      "    s.controllers = tuple(c for c in s.controllers if c.broker_id != b)\n", "",
      "a broker that re-creates its ZooKeeper session keeps its old controller, which acts with the new session"),
    M("broker-epoch-after-bump", "faults", "wrong order", "faults", "_open_session",
      "    br.broker_epoch = zk.next_czxid\n    zk.next_czxid += 1\n",
      "    zk.next_czxid += 1\n    br.broker_epoch = zk.next_czxid\n",
      "a broker takes its epoch from the next czxid, not the one of its own registration znode"),
    M("clean-shutdown-no-checkpoint", "faults", "missing check", "faults", "broker_crash",
      "        checkpoint_high_watermarks(cfg, s, br)   # ReplicaManager.shutdown(checkpointHW = true)\n", "",
      "a clean shutdown does not write the HW checkpoint file",
      equivalent_reason="the restarted broker then starts from an older, lower HW, which the leader's fetch "
                        "responses raise again; a lower follower HW breaks no safety property"),
    # ------------------------------------------- KRaft: the guards against stale incarnations and epochs
    # The four AlterPartition guards below are killed on kraft-forged-alter-partition, whose AlterPartitionReceived
    # sends what each lets through (forged_alter_partition_refused; tests/test_mutate.py).  On a preset without that
    # fault no leader of the model sends such a request: a stale incarnation's request is refused by the leader epoch
    # (its broker starts again only once fenced, which moved its leaderships to a later epoch); one from an older
    # leader epoch comes from a broker that no longer leads (INVALID_REQUEST next) or leads again in a later partition
    # epoch (INVALID_UPDATE_VERSION next); every leadership change bumps the leader epoch, so a request in the current
    # one comes from the leader; and a leader never proposes an ISR without itself.
    K("alter-partition-any-broker-epoch", "controller", "missing check", "quorum_controller", "alter_partition",
      "if reg is None or reg.epoch != req.broker_epoch:", "if reg is None:",
      "the quorum controller handles an AlterPartition from a broker incarnation it no longer registers "
      "(ClusterControlManager.checkBrokerEpoch dropped)"),
    K("alter-partition-older-leader-epoch", "controller", "missing check", "quorum_controller", "_validate",
      "    if item.leader_epoch < part.leader_epoch:\n        return E.FENCED_LEADER_EPOCH\n", "",
      "validateAlterPartitionData accepts an AlterPartition from an older leader epoch (FENCED_LEADER_EPOCH dropped)"),
    K("alter-partition-from-non-leader", "controller", "missing check", "quorum_controller", "_validate",
      "    if b != part.leader:\n        return E.INVALID_REQUEST\n", "",
      "validateAlterPartitionData accepts an AlterPartition from a broker that is not the partition's leader"),
    K("alter-partition-isr-without-leader", "controller", "missing check", "quorum_controller", "_validate",
      " or part.leader not in new_isr:", ":",
      "validateAlterPartitionData accepts an ISR that leaves the leader out"),
    K("heartbeat-any-broker-epoch", "controller", "missing check", "quorum_controller", "broker_heartbeat",
      "if reg is None or reg.epoch != broker_epoch:", "if reg is None:",
      "the quorum controller takes a heartbeat from an earlier incarnation of a broker as the current one's "
      "(checkBrokerEpoch dropped)",
      equivalent_reason="an earlier incarnation's heartbeat that reaches the controller after the broker registered"
                        " again (OrphanRequestReceived) passes for the new registration's, but it only touches the"
                        " session, reports an older metadata offset (below the new registration's: it unfences"
                        " nothing, and only delays other brokers' controlled shutdowns) or, if the earlier incarnation"
                        " had asked to shut down, shuts the new one down: its leaderships move, it is fenced and (once"
                        " it leads nothing) stops cleanly, as after an operator's ControlledShutdown or a lost session"),
    K("unfence-before-own-registration", "controller", "off-by-one", "quorum_controller", "broker_heartbeat",
      "elif metadata_offset > reg.epoch:", "elif metadata_offset >= reg.epoch:",
      "a fenced broker is unfenced before it has replayed its own RegisterBrokerRecord "
      "(calculateNextBrokerState's currentMetadataOffset >= registerBrokerRecordOffset, off by one)",
      equivalent_reason="a broker's first replay takes it past its own RegisterBrokerRecord at once (its first"
                        " published image), so no heartbeat reports the registration's own offset"),
    K("make-leader-older-partition-epoch", "partition", "missing check", "partition", "make_leader_3x",
      "    if ps.zk_version < part.zk_version:\n", "    if False:\n",
      "Partition.makeLeader applies a partition state older than the partition epoch the leader holds "
      "(testIgnoreLeaderPartitionStateChangeWithOlderPartitionEpoch's guard dropped)"),
    K("make-follower-older-partition-epoch", "partition", "missing check", "partition", "make_follower_3x",
      "    if ps.zk_version < part.zk_version:\n", "    if False:\n",
      "Partition.makeFollower applies a partition state older than the partition epoch the follower holds "
      "(testIgnoreFollowerPartitionStateChangeWithOlderPartitionEpoch's guard dropped)",
      equivalent_reason="a follower's partition epoch comes only from the metadata log, replayed once and in order;"
                        " only a leader's AlterPartition answer can put it ahead of the log"),
    K("isr-eligible-fenced", "partition", "missing check", "partition", "is_replica_isr_eligible",
      "if follower not in md.alive_brokers or follower in md.shutting_down:", "if follower in md.shutting_down:",
      "Partition.isReplicaIsrEligible lets a follower the metadata cache holds fenced join the ISR (KIP-841)"),
    K("isr-eligible-shutting-down", "partition", "missing check", "partition", "is_replica_isr_eligible",
      "if follower not in md.alive_brokers or follower in md.shutting_down:", "if follower not in md.alive_brokers:",
      "Partition.isReplicaIsrEligible lets a follower in controlled shutdown join the ISR (KIP-841)"),
    K("isr-eligible-any-broker-epoch", "partition", "missing check", "partition", "is_replica_isr_eligible",
      "return stored is not None and cached >= 0 and (stored == -1 or stored == cached)", "return True",
      "Partition.isBrokerEpochIsrEligible dropped: a follower whose last Fetch carried another broker epoch than the "
      "metadata cache's is proposed for the ISR (KIP-903's broker-side check; the controller still checks)",
      equivalent_reason="an earlier incarnation's Fetch (OrphanRequestReceived) is refused once the leader's cache"
                        " holds the new broker epoch unfenced (Replica.updateFetchStateOrThrow, kafka_15221, on in"
                        " every KRaft preset); one taken before finds the follower fenced, or at the epoch the cache"
                        " still holds, and the follower's next Fetch, which alone checks it for the ISR, overwrites"
                        " it; a live Fetch carries its sender's current epoch, and when the cache still holds an older"
                        " one the controller refuses the proposal (INELIGIBLE_REPLICA), as it does without the fence"),
    K("replay-ignores-fence-record", "replica manager", "missing check", "broker_metadata", "_replay",
      "    elif t is FenceBrokerRecord:\n        fenced.add(rec.broker_id)\n",
      "    elif t is FenceBrokerRecord:\n        pass\n",
      "a broker's KRaftMetadataCache keeps a broker alive after replaying its FenceBrokerRecord"),
    K("fence-keeps-isr", "controller", "missing check", "quorum_controller", "fence_broker",
      "    _change_partitions(cfg, s, in_isr, b, NO_LEADER, records)\n    reg = s.quorum.registrations[b]\n",
      "    reg = s.quorum.registrations[b]\n",
      "ReplicationControlManager.handleBrokerFenced fences a broker without taking it out of the ISRs it is in"),
)
del M, K

BY_NAME: dict[str, Mutant] = {m.name: m for m in MUTANTS}
assert len(BY_NAME) == len(MUTANTS), "mutant names must be unique"


def names(half_name: str | None = None, kraft: bool = True) -> list[str]:
    """The registry's names in order; only one half with ``half_name`` ("tuning" or "held-out"); without the
    KRaft-only mutants when ``kraft`` is False (a ZooKeeper-era preset never runs their rules)."""
    return [m.name for m in MUTANTS
            if (half_name is None or m.half == half_name) and (kraft or not m.kraft_only)]


# --------------------------------------------------------------------------- compiling and installing
def _module(m: Mutant):
    return importlib.import_module(f"{MODEL_PACKAGE}.{m.module}")


def _function_node(tree: ast.Module, function: str):
    """The ast node of a module-level function, or of a method written "Class.method"."""
    body, parts = tree.body, function.split(".")
    node = None
    for i, part in enumerate(parts):
        want = ast.ClassDef if i < len(parts) - 1 else (ast.FunctionDef, ast.AsyncFunctionDef)
        node = next((n for n in body if isinstance(n, want) and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return node


def mutated_source(m: Mutant) -> tuple[str, int]:
    """(changed source of the function, decorators included and dedented; its first line in the file)."""
    mod = _module(m)
    source = inspect.getsource(mod)
    node = _function_node(ast.parse(source), m.function)
    if node is None:
        raise MutantError(f"mutant {m.name}: {mod.__name__} has no function {m.function}")
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    text = textwrap.dedent("".join(source.splitlines(keepends=True)[first - 1:node.end_lineno]))
    count = text.count(m.old)
    if count != 1:
        raise MutantError(f"mutant {m.name}: the snippet {m.old.strip()[:60]!r} occurs {count} times in "
                          f"{mod.__name__}.{m.function} (expected once): update the mutant")
    return text.replace(m.old, m.new), first


def compile_mutant(m: Mutant):
    """The mutated function object, its globals the live module's (so it calls whatever is installed)."""
    mod = _module(m)
    text, first = mutated_source(m)
    tree = ast.parse(text)
    ast.increment_lineno(tree, first - 1)
    code = compile(tree, f"{mod.__file__} [mutant {m.name}]", "exec")
    ns: dict = {}
    exec(code, mod.__dict__, ns)  # noqa: S102 - the model's own source, one snippet changed
    return ns[m.function.split(".")[-1]]


def _targets(m: Mutant):
    """(holder, attribute, original) for the function and every model module that imported it by name."""
    mod = _module(m)
    *classes, fname = m.function.split(".")
    if classes:
        holder = mod
        for c in classes:
            holder = getattr(holder, c)
        return [(holder, fname, holder.__dict__[fname])]
    original = getattr(mod, fname)
    out = []
    for mname, other in sorted(sys.modules.items()):
        if other is None or not (mname == MODEL_PACKAGE or mname.startswith(MODEL_PACKAGE + ".")):
            continue
        for attr, value in list(vars(other).items()):
            if value is original:
                out.append((other, attr, original))
    return out


def lookup(name: str) -> Mutant:
    try:
        return BY_NAME[name]
    except KeyError:
        raise MutantError(f"unknown mutant {name!r} (isrlab mutate --list shows the registry)") from None


def install(name: str) -> list:
    """Install mutant ``name``; returns what ``restore`` needs.  MutantError if it cannot be compiled."""
    m = lookup(name)
    importlib.import_module(f"{MODEL_PACKAGE}.step")  # every model module loaded, so every importer is patched
    fn = compile_mutant(m)
    saved = _targets(m)
    for holder, attr, _ in saved:
        setattr(holder, attr, fn)
    return saved


def restore(saved: list) -> None:
    """Put back the originals ``install`` replaced."""
    for holder, attr, original in reversed(saved):
        setattr(holder, attr, original)


@contextlib.contextmanager
def suspended(saved: list):
    """Run the block on the real model while a mutant stays installed around it (a replay that compares the two):
    ``install``'s originals put back, the mutant's functions put back on exit, also on an exception."""
    mutant = [(holder, attr, vars(holder)[attr]) for holder, attr, _ in saved]
    restore(saved)
    try:
        yield
    finally:
        for holder, attr, fn in mutant:
            setattr(holder, attr, fn)


@contextlib.contextmanager
def installed(name: str | None):
    """Run the block with mutant ``name`` installed (None: the real model); the originals come back on exit."""
    if name is None:
        yield None
        return
    saved = install(name)
    try:
        yield lookup(name)
    finally:
        restore(saved)
