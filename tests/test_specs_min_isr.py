"""The strict min-ISR HW rule (KAFKA-15583) and the ELR (KIP-966) in z3: the invariants are inductive, the rule-off
mutant's counterexample to induction replays on the model, and the rule-on model does not break on that trace."""

from __future__ import annotations

import functools
import json

import pytest
from click.testing import CliRunner

from isrlab.model.config import explore_bounds, preset
from isrlab.prove_cmd import prove
from isrlab.properties.explore import explore, search_args
from isrlab.properties.invariants import BY_NAME
from isrlab.specs import min_isr_hw as M
from isrlab.specs.core import COUNTEREXAMPLE, PROVED, WITNESS

pytestmark = pytest.mark.unit


@functools.lru_cache(maxsize=None)
def _claim(name):
    return M.claim(name)


def _members(values, kind):
    return [i for i in M.REPLICAS if values[f"{kind}{i}"]]


def _held(values, f):
    l = values["l"]
    return values[M.agk(f, l)]


@pytest.mark.parametrize("name", [n for n, _fn, _g in M.INVARIANTS])
def test_every_invariant_is_inductive_for_any_min_isr(name):
    """Partition.maybeIncrementLeaderHW with isUnderMinIsr (Kafka 3.7.0): every lemma and goal holds initially and is kept by every transition."""
    c = _claim(f"min_isr.{name}")
    assert c.ok and c.result == PROVED, c.facts
    assert set(c.facts["matrix"]) == {"init", *M.TRANSITIONS}


def test_every_transition_is_enabled_in_some_invariant_state():
    c = _claim("min_isr.transitions_enabled")
    assert c.ok and c.result == WITNESS and c.facts["disabled"] == []


def test_the_elr_bound_is_what_makes_the_elr_clause_inductive():
    """PartitionChangeBuilder.maybePopulateTargetElr (Kafka 3.7.0): without 'a non-empty ELR means |ISR| + |ELR| <= min ISR' the HW may advance past an ELR member."""
    res, lab, vals = M.check_step("HwAdvance", "committed_held", without=("elr_bounded",))
    assert res == M.CTI, (res, lab)
    pre = vals["pre"]
    assert _members(pre, "elr") and len(_members(pre, "isr")) >= min(vals["m"], 3)
    assert M.check_step("HwAdvance", "committed_held")[0] == PROVED


def test_rule_off_gives_a_cti_of_the_elr_clause_only():
    """Partition.maybeIncrementLeaderHW without isUnderMinIsr (KAFKA-15583 off): the ELR clause breaks, the ISR clause stays inductive."""
    c = _claim("min_isr.rule_off")
    assert c.ok and c.result == COUNTEREXAMPLE, (c.bound, c.cti_check)
    assert c.facts["cti"] is not None
    assert c.facts["also_not_inductive"] == ["committed_held"]      # isr_holds_hw survives the mutant
    cti = c.facts["cti"]
    post, l = cti["post"], cti["post"]["l"]
    assert any(_held(post, f) < post[f"hw{l}"] for f in _members(post, "elr"))


def test_reachable_cti_is_a_cti_of_the_general_relation():
    c = _claim("min_isr.rule_off")
    r = c.facts["reachable_cti"]
    assert r["confirmed"] == PROVED
    assert r["trace"][0] == "init" and len(r["trace"]) == r["steps_before"] + 2
    pre, post = r["pre"], r["post"]
    l = post["l"]
    # pre: every ELR member holds the leader's records below its HW; post: one does not, the ISR below min ISR
    assert all(_held(pre, f) >= pre[f"hw{l}"] for f in _members(pre, "elr"))
    lacking = [f for f in _members(post, "elr") if _held(post, f) < post[f"hw{l}"]]
    assert lacking and len(_members(post, "isr")) < M.REPLAY_MIN_ISR


def _reachable_trace():
    found = M.reachable_cti()
    assert found["k"] is not None
    return found["trace"]


def test_cti_replays_on_the_model_and_breaks_committed_prefix_on_an_elr_member():
    """Partition.maybeIncrementLeaderHW (no-kafka-15583): the model reaches the CTI's post-state and committed_prefix fails there."""
    trace = _reachable_trace()
    off = M.replay(trace, kafka_15583=False)
    assert off["enabled"] and off["diffs"] == [], off.get("diffs")
    assert off["final"] == {k: v for k, v in M.compared(trace[-1][1]).items()}
    v = off["violation"]
    assert v is not None and v["eligible_leader_replica"] is True
    post = trace[-1][1]
    assert v["follower"] in _members(post, "elr") and v["leader"] == post["l"]
    assert v["high_watermark"] == post[f"hw{post['l']}"] and v["offset"] >= _held(post, v["follower"])
    c = _claim("min_isr.rule_off")
    assert c.cti_check.startswith("model agrees:") and "committed_prefix fails: ELR member" in c.cti_check


def test_the_same_model_trace_breaks_nothing_with_the_rule_on():
    """Partition.isUnderMinIsr (Kafka 3.7.0, KAFKA-15583): the same actions keep the HW below what the ELR member holds."""
    trace = _reachable_trace()
    off = M.replay(trace, kafka_15583=False)
    shrinks = sum(lab.startswith("IsrShrink") for lab, _ in trace)
    on = M.replay_actions(off["replay"].actions, kafka_15583=True, shrinks=shrinks)
    assert on["violation"] is None
    if on["enabled"]:
        final, l = on["final"], on["final"]["l"]
        assert all(final[M.agk(f, l)] >= final[f"hw{l}"] for f in _members(final, "elr"))
        assert final[f"hw{l}"] == trace[-2][1][f"hw{l}"]            # the HW did not move
    c = _claim("min_isr.rule_off")
    assert "with kafka_15583 on" in c.cti_check and c.facts["rule_on"]["violation"] is None


def test_a_wrong_abstract_state_is_an_encoding_bug():
    """The replay compares every step: a trace claiming the HW stayed where the model raised it is refused."""
    trace = _reachable_trace()
    label, post = trace[-1]
    l = post["l"]
    wrong = trace[:-1] + [(label, {**post, f"hw{l}": trace[-2][1][f"hw{l}"]})]
    verdict, _facts = M.cross_check(wrong)
    assert verdict.startswith(f"ENCODING BUG: after step {len(trace) - 1} ({label})"), verdict


def test_hw_still_advances_at_exactly_min_isr_in_z3_and_in_the_model():
    """Partition.isUnderMinIsr is strict (Kafka 3.7.0): |ISR| = min ISR lets the HW advance."""
    c = _claim("min_isr.hw_advances_at_min_isr")
    assert c.ok and c.result == WITNESS and c.crosscheck.startswith("model agrees"), c.crosscheck
    last = c.facts["last"]
    assert len(_members(last, "isr")) == M.REPLAY_MIN_ISR and last[f"hw{last['l']}"] >= 1


def test_prove_cli_runs_the_min_isr_group():
    r = CliRunner().invoke(prove, ["--json", "--group", "min_isr"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output[r.output.index("{"):])
    assert out["failed"] == [] and {c["group"] for c in out["claims"]} == {"min_isr"}
    assert [c["claim"] for c in out["claims"]] == list(M.CLAIMS)


@pytest.mark.slow
def test_the_explorer_breaks_no_kafka_15583_the_way_the_cti_does():
    """The model's own shortest counterexample on no-kafka-15583 (its explore bounds) is the CTI's pattern: an ELR member lacks an offset below the HW."""
    name = M.PRESET
    cfg, kw = search_args(preset(name).config, explore_bounds(name))
    r = explore(cfg, invariants=(BY_NAME["committed_prefix"],), **kw)
    found = r.found.get("committed_prefix")
    assert found is not None, r.stop_reason
    assert found.violation.facts.get("eligible_leader_replica") is True, found.violation.facts
