"""Wrong rules (mutants) for the executable model, installed only while a cross-check replays a trace.

They are the mutants of ``tests/test_mutants.py`` that touch the rules the z3 encodings cover,
written as the model's own functions with one Kafka check changed.  ``installed(name)`` swaps the
function in every model module that looks it up (model modules import functions by name) and
restores the originals on exit, so the model is only ever mutated inside that ``with`` block.
"""

from __future__ import annotations

import contextlib

from ..model import partition, replica_manager
from ..model.config import ModelConfig


def _out_of_sync_ge(r, leader_end_offset, now, max_lag_ms):
    """Partition.isFollowerOutOfSync with ``>=`` for Kafka 2.4.0's ``>`` (SH3)."""
    return r.log_end_offset != leader_end_offset and (now - r.last_caught_up_time_ms) >= max_lag_ms


def _out_of_sync_no_leo_guard(r, leader_end_offset, now, max_lag_ms):
    """Partition.isFollowerOutOfSync without the LEO guard of Kafka 2.4.0 (KAFKA-7152 undone)."""
    return (now - r.last_caught_up_time_ms) > max_lag_ms


def _in_sync_ignores_hw(cfg, r, part, log):
    """Partition.isFollowerInSync without ``LEO >= HW`` (EX2): only the epoch start offset is checked."""
    return part.leader_epoch_start_offset >= 0 and r.log_end_offset >= part.leader_epoch_start_offset


def _hw_rule(counts, combine):
    def maybe_increment_leader_hw(cfg, br, p, now):
        """Partition.maybeIncrementLeaderHW (Kafka 2.4.0, HW1-HW3) with a changed set or combination."""
        part, log = br.partitions[p], br.logs[p]
        leos = [r.log_end_offset for r in part.remote_replicas if counts(cfg, part, r, now)]
        new_hw = combine([log.log_end_offset] + leos)
        if new_hw > log.high_watermark:
            br.log_mut(p).high_watermark = min(new_hw, log.log_end_offset)
            return True
        return False
    return maybe_increment_leader_hw


def _in_window(cfg, part, r, now):
    return now - r.last_caught_up_time_ms <= cfg.replica_lag_time_max_ms


def _in_window_or_isr(cfg, part, r, now):
    return _in_window(cfg, part, r, now) or r.broker_id in part.isr


def _caught_up_on_every_fetch(r, fetch_offset, follower_start_offset, fetch_time_ms, leader_end_offset):
    """Replica.updateFetchState crediting every fetch as caught up (RS1-RS2 dropped)."""
    r.last_caught_up_time_ms = max(r.last_caught_up_time_ms, fetch_time_ms)
    r.log_end_offset = fetch_offset
    r.log_start_offset = follower_start_offset
    r.last_fetch_leader_log_end_offset = leader_end_offset
    r.last_fetch_time_ms = fetch_time_ms


_ORIGINAL_OUT_OF_SYNC_REPLICAS = partition.out_of_sync_replicas


def _shrink_one_at_a_time(cfg, br, part, now):
    """Partition.getOutOfSyncReplicas returning only the first out-of-sync follower (find for filter)."""
    return _ORIGINAL_OUT_OF_SYNC_REPLICAS(cfg, br, part, now)[:1]


#: mutant name -> (model patches [(module, attribute, replacement)], config flags, description)
MODEL_MUTANTS: dict[str, tuple[tuple, dict, str]] = {
    "shrink_ge": (((partition, "is_follower_out_of_sync", _out_of_sync_ge),), {},
                  "`>=` instead of `>` in the shrink test (isFollowerOutOfSync)"),
    "shrink_no_leo_guard": (((partition, "is_follower_out_of_sync", _out_of_sync_no_leo_guard),), {},
                            "shrink without the LEO guard (a caught-up idle follower is removed)"),
    "shrink_one_at_a_time": (((partition, "out_of_sync_replicas", _shrink_one_at_a_time),), {},
                             "getOutOfSyncReplicas returns only the first out-of-sync follower"),
    "expand_below_hw": (((partition, "is_follower_in_sync", _in_sync_ignores_hw),), {},
                        "ISR expand without LEO >= HW"),
    "expand_no_epoch_start": ((), {"kafka_7128": False},
                              "ISR expand without the epoch-start check (KAFKA-7128 off)"),
    "hw_ignores_isr": (((partition, "maybe_increment_leader_hw", _hw_rule(_in_window, min)),
                        (replica_manager, "maybe_increment_leader_hw", _hw_rule(_in_window, min))), {},
                       "HW ignores ISR membership (only replicas caught up within the lag window count)"),
    "hw_max_not_min": (((partition, "maybe_increment_leader_hw", _hw_rule(_in_window_or_isr, max)),
                        (replica_manager, "maybe_increment_leader_hw", _hw_rule(_in_window_or_isr, max))), {},
                       "HW is the max, not the min, of the counted LEOs"),
    "caught_up_on_every_fetch": (((partition, "update_fetch_state", _caught_up_on_every_fetch),), {},
                                 "lastCaughtUpTimeMs set on every fetch"),
}


@contextlib.contextmanager
def installed(name: str | None, cfg: ModelConfig):
    """Install model mutant ``name`` (None: the real model) and yield the config to run it with."""
    if name is None:
        yield cfg
        return
    patches, flags, _ = MODEL_MUTANTS[name]
    saved = [(m, attr, getattr(m, attr)) for m, attr, _ in patches]
    try:
        for m, attr, fn in patches:
            setattr(m, attr, fn)
        yield cfg.replace(**flags) if flags else cfg
    finally:
        for m, attr, fn in saved:
            setattr(m, attr, fn)
