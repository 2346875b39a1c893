"""AlterIsr / AlterPartition answers no controller of the model gives (the fault ``AlterIsrFailed``): NETWORK_EXCEPTION
to the whole request, UNKNOWN_SERVER_ERROR and INVALID_REQUEST to each partition; the leader retries the first two
(AlterPartitionManager keeps the items; Partition.handleAlterPartitionError submits again since KAFKA-14010, 3.3.0)
and gives up on the third.

The states come from tests/kafka_kraft/PartitionTest.testAlterIsrUnexpectedError.json, replayed up to the fault:
leader 0 has sent its AlterPartition adding follower 1 and no controller has handled it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from isrlab.model import actions as A
from isrlab.model.actions import ActionError, action_from_json
from isrlab.model.step import apply, enabled_actions, initial_state, step
from isrlab.model.trace import trace_from_json
from isrlab.properties.invariants import alter_isr_completes_bad, pending_isr_in_flight
from isrlab.properties.steptable import action_words

pytestmark = pytest.mark.unit

CASE = Path(__file__).parent / "kafka_kraft" / "PartitionTest.testAlterIsrUnexpectedError.json"


def _before_fault(**changes):
    """(config, state) just before the trace's AlterIsrFailed, with ``changes`` to its configuration."""
    trace = trace_from_json(json.loads(CASE.read_text()))
    cfg = trace.config.replace(**changes)
    s = initial_state(cfg)
    for a in trace.actions:
        if type(a) is A.AlterIsrFailed:
            return cfg, s
        s = apply(cfg, s, a)
    raise AssertionError("the case has no AlterIsrFailed")


def _fail(cfg, s, error):
    return apply(cfg, apply(cfg, s, A.AlterIsrFailed(0, error)), A.AlterIsrResponse(0))


def test_the_fault_is_offered_only_within_its_budget_and_while_the_request_is_unhandled():
    cfg, s = _before_fault()
    offered = {a for a in enabled_actions(cfg, s) if type(a) is A.AlterIsrFailed}
    assert offered == {A.AlterIsrFailed(0, e) for e in A.ALTER_ISR_FAULT_ERRORS}
    assert not [a for a in enabled_actions(cfg.replace(max_alter_isr_failures=0), s) if type(a) is A.AlterIsrFailed]
    handled = apply(cfg, s, A.AlterIsrReceived(0))
    assert step(cfg, handled, A.AlterIsrFailed(0, "UNKNOWN_SERVER_ERROR")) is None     # the answer is there already
    once = apply(cfg, s, A.AlterIsrFailed(0, "UNKNOWN_SERVER_ERROR"))
    assert once.ghost.alter_isr_failures == 1
    again = apply(cfg, apply(cfg, once, A.AlterIsrResponse(0)), A.AlterIsrRequest(0))
    assert step(cfg, again, A.AlterIsrFailed(0, "UNKNOWN_SERVER_ERROR")) is None       # the budget is spent


@pytest.mark.parametrize("error", ["NETWORK_EXCEPTION", "UNKNOWN_SERVER_ERROR"])
def test_a_retried_answer_leaves_the_update_queued_and_the_retry_commits(error):
    cfg, s = _before_fault()
    s = _fail(cfg, s, error)
    part = s.brokers[0].partitions[0]
    assert part.isr == (0,) and part.pending_isr is not None and part.pending_isr.replicas == (1,)
    assert [it.request.new_isr for it in s.brokers[0].alter_isr_unsent] == [(0, 1)]
    assert pending_isr_in_flight(cfg, s) is None
    for a in (A.AlterIsrRequest(0), A.AlterIsrReceived(0), A.AlterIsrResponse(0)):
        s = apply(cfg, s, a)
    part = s.brokers[0].partitions[0]
    assert part.isr == (0, 1) and part.pending_isr is None and not s.brokers[0].alter_isr_unsent


def test_before_kafka_14010_a_retried_partition_error_is_lost_and_the_partition_is_stuck():
    """Before KAFKA-14010 the callback's resubmission found the item still queued, and the item then went: the
    partition stays pending with nothing to send, which pending_isr_in_flight reports; the fix sends it again."""
    cfg, s = _before_fault(kafka_14010=False)
    s = _fail(cfg, s, "UNKNOWN_SERVER_ERROR")
    assert s.brokers[0].partitions[0].pending_isr is not None and not s.brokers[0].alter_isr_unsent
    assert pending_isr_in_flight(cfg, s) == {"broker": 0, "partition": 0, "leader_epoch": 0, "isr": [0],
                                              "pending": {"expand": True, "replicas": [1]}, "queued": []}
    assert alter_isr_completes_bad(cfg, s, 0)
    # the top-level NETWORK_EXCEPTION is the manager's own retry, which the fix did not touch
    cfg, s = _before_fault(kafka_14010=False)
    assert pending_isr_in_flight(cfg, _fail(cfg, s, "NETWORK_EXCEPTION")) is None


def test_invalid_request_is_given_up_and_the_stall_is_the_faults():
    cfg, s = _before_fault()
    s = _fail(cfg, s, "INVALID_REQUEST")
    part = s.brokers[0].partitions[0]
    assert part.pending_isr is not None and not s.brokers[0].alter_isr_unsent
    assert s.ghost.fault_given_up == ((0, 0, part.leader_epoch, part.zk_version),)
    assert pending_isr_in_flight(cfg, s) is None and not alter_isr_completes_bad(cfg, s, 0)
    # the same stall without the fault's mark is what the invariant exists for
    s.ghost.fault_given_up = ()
    assert pending_isr_in_flight(cfg, s) is not None


def test_the_action_reads_back_and_says_what_happened():
    cfg, s = _before_fault()
    a = action_from_json({"type": "AlterIsrFailed", "broker": 0, "error": "INVALID_REQUEST"})
    assert a == A.AlterIsrFailed(0, "INVALID_REQUEST")
    assert "answered INVALID_REQUEST" in action_words(cfg, s, a)
    with pytest.raises(ActionError, match="error must be one of"):
        action_from_json({"type": "AlterIsrFailed", "broker": 0, "error": "NONE"})
    assert step(cfg, s, A.AlterIsrFailed(0, "NONE")) is None
