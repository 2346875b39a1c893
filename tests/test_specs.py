"""The z3 specifications: every claim has its expected answer and its model cross-check agrees."""

from __future__ import annotations

import functools
import json

import pytest
import z3
from click.testing import CliRunner

from isrlab.prove_cmd import prove
from isrlab.properties.invariants import BY_NAME, check_state
from isrlab.specs import crosscheck, decode, deep_bmc, induction as I, lag_window, propagation, report
from isrlab.specs.core import COUNTEREXAMPLE, PROVED, WITNESS

pytestmark = pytest.mark.unit


def _assert_ok(claims):
    bad = [(c.name, c.result, c.crosscheck) for c in claims if not c.ok]
    assert not bad, bad


def test_lag_window_claims_hold_and_replay_in_the_model():
    claims = {c.name: c for c in lag_window.lag_claims()}
    _assert_ok(claims.values())
    assert claims["lag.upper_1.5x[L=10000]"].result == PROVED
    reached = claims["lag.upper_reached[L=10000]"]
    assert reached.result == WITNESS and reached.facts["r"] - reached.facts["c"] == 15000
    assert reached.crosscheck.startswith("model agrees: removed at c+15000")
    naive = claims["lag.naive_1.5x_from_catch_up"]
    assert naive.result == COUNTEREXAMPLE and naive.facts["b"] > naive.facts["c"] + 10000
    assert claims["lag.ge.lower_strict_fails"].facts["r"] - claims["lag.ge.lower_strict_fails"].facts["c"] == 10000


def test_lag_crosscheck_detects_a_wrong_z3_answer():
    """A witness that claims a removal one run early must be reported as an encoding bug."""
    w = {"L": 10000, "P": 5000, "J": 0, "c": 0, "b": 0, "d": 10000, "r": 10000, "rp": 5000,
         "ord_r": True, "ord_rp": True}
    assert lag_window.crosscheck_removal(w).startswith("ENCODING BUG")


@pytest.mark.parametrize("lag,jitter", [(10000, 0), (10000, 1000)])
def test_model_sweep_reaches_but_never_exceeds_the_bound(lag, jitter):
    c = lag_window.sweep(lag, jitter, phases=4)
    assert c.ok, c.facts
    assert c.facts["worst_removal_minus_c"] == lag + lag // 2 + jitter


def test_propagation_claims_hold_and_replay_in_the_model():
    claims = {c.name: c for c in propagation.propagation_claims()}
    _assert_ok(claims.values())
    assert "62500 ms" in claims["propagation.max_delay_reached"].crosscheck
    assert propagation.sweep().facts["worst_delay"] == 7500


def test_every_invariant_is_inductive_and_the_transitions_are_enabled():
    claims = report.inductive_claims()
    _assert_ok(claims)
    hw = next(c for c in claims if c.name == "inductive.hw_within_isr")
    assert set(hw.facts["matrix"]) == {"init", *I.H.TRANSITIONS}


def test_a_mutant_gives_a_counterexample_to_induction():
    r = I.check_step("IsrExpiration", "shrink_after_lag", "shrink_ge")
    assert r.result == I.CTI
    assert r.pre["now"] - r.pre[f"lcu{next(f for f in range(3) if r.pre[f'isr{f}'] and not r.post[f'isr{f}'])}"] == \
        r.pre["L"]
    assert I.check_step("IsrExpiration", "shrink_after_lag").result == I.PROVED


@functools.lru_cache(maxsize=None)
def _mutant_claim(mutant):
    """Each mutant's claim is computed once per process (the 4-replica BMC takes about 20 s)."""
    return report.mutant_claim(mutant)


#: the tests that read expand_no_epoch_start's claim run on one xdist worker, so it is computed once
DEEP = pytest.mark.xdist_group("deep_bmc")


@pytest.mark.parametrize("mutant", [pytest.param(m, marks=DEEP) if m in report.DEEP_BMC else m
                                    for m in sorted(report.MUTANTS)])
def test_each_mutant_is_caught(mutant):
    c = _mutant_claim(mutant)
    assert c.ok, (c.result, c.bound, c.crosscheck)
    assert c.facts["cti"] is not None
    assert c.cti_check.startswith("CTI re-checked in model:"), c.cti_check
    assert report.MUTANTS[mutant][2] is not None   # every mutant has a BMC run
    assert c.facts["bmc"]["k"] is not None and c.crosscheck.startswith("model agrees")
    assert len(c.bmc_trace) == c.facts["bmc"]["k"] + 1


@DEEP
def test_expand_no_epoch_start_bmc_reaches_a_lost_committed_record_with_four_replicas():
    """Partition.isFollowerInSync without KAFKA-7128 (Kafka 2.4.0, EX2): a follower rejoins below an exposed HW, at the smallest k."""
    c = _mutant_claim("expand_no_epoch_start")
    b = c.facts["bmc"]
    assert b["target"] == "committed_durable" and b["replicas"] == 4 and b["problems"] == []
    assert b["k"] == 10 and b["unsat_depths"] == list(range(b["k"]))   # every smaller depth refuted
    left_out = set(b["found_without"])                                  # the first query may leave time out
    assert left_out <= {"Tick", "IsrExpiration"} and not left_out & {lab.partition("(")[0] for lab in b["trace"]}
    assert b["trace"].count("LeaderChange") == 2 and b["trace"][-1].startswith("FetchRequest(")
    pre, post = c.bmc_trace[-2][1], c.bmc_trace[-1][1]
    f, l = int(b["trace"][-1][len("FetchRequest("):-1]), post["l"]
    assert not pre[f"isr{f}"] and post[f"isr{f}"]
    assert pre[f"hw{l}"] <= post[f"leo{f}"] < post["estart"]           # LEO >= HW holds, the epoch start check fails
    assert post[f"ag{min(f, l)}{max(f, l)}"] < post["C"]               # it lacks a record below an exposed HW
    assert "isr_entry_condition fails" in c.crosscheck and "below HW" in c.crosscheck, c.crosscheck
    assert "k=10 (4 replicas, 2 leader changes, bit-blasted; depths 0-9 unsat)" in c.bound


@DEEP
def test_four_replica_trace_without_the_mutant_is_an_encoding_bug():
    """Partition.isFollowerInSync (Kafka 2.4.0, EX2 with KAFKA-7128): the real model keeps the follower out; the replay disagrees."""
    trace = _mutant_claim("expand_no_epoch_start").bmc_trace
    verdict = crosscheck.replay_bmc(trace, None, "committed_durable")
    assert verdict.startswith(f"ENCODING BUG: after step {len(trace) - 1} ({trace[-1][0]})"), verdict
    f = int(trace[-1][0][len("FetchRequest("):-1])
    assert f"'isr{f}': (True, False)" in verdict   # z3's mutant admits it, the real model does not


@DEEP
def test_bit_blasted_run_is_rechecked_in_the_integer_relation():
    """Partition.maybeIncrementLeaderHW (Kafka 2.4.0, HW1-HW3): the decoded run is an integer run; with C lowered it is not."""
    trace = _mutant_claim("expand_no_epoch_start").bmc_trace
    k = len(trace) - 1
    u = deep_bmc.Unrolling("committed_durable", "expand_no_epoch_start", 4, "session", k)
    assert deep_bmc.integer_recheck(u, k, trace)
    tampered = [(lab, dict(v)) for lab, v in trace]
    tampered[-1][1]["C"] = 0
    assert not deep_bmc.integer_recheck(u, k, tampered)


@pytest.mark.parametrize("mutant,k_max", [("hw_max_not_min", 3), ("hw_ignores_isr", 7)])
def test_bit_blasted_bmc_agrees_with_the_integer_bmc(mutant, k_max):
    """Partition.maybeIncrementLeaderHW (Kafka 2.4.0, HW1-HW3) mutated: both BMCs find the same smallest k; the run replays."""
    ib = I.bmc("hw_within_isr", mutant, k_max)
    db = deep_bmc.bmc("hw_within_isr", mutant, k_max, None, 3, lemmas=("clock",))
    assert ib.k is not None and db.k == ib.k and db.unsat_depths == list(range(ib.k))
    assert deep_bmc.bmc("hw_within_isr", mutant, k_max, None, 3, ("clock",), first_without=()).k == ib.k
    assert crosscheck.replay_bmc(db.trace, mutant, "hw_within_isr").startswith("model agrees")
    assert deep_bmc.bmc("hw_within_isr", None, 3, None, 3).k is None   # the real rules: no violation


def test_strengthening_lemmas_are_proved_and_a_broken_one_is_refused():
    """Partition.isFollowerInSync without KAFKA-7128 (Kafka 2.4.0, EX2): the lemmas are proved; committed_durable is refused."""
    assert deep_bmc.prove_lemmas("committed_durable", "expand_no_epoch_start", 4, "session") == []
    failures = deep_bmc.prove_lemmas("hw_within_isr", "expand_no_epoch_start", 4, "session",
                                     deep_bmc.STRENGTHENING + ("committed_durable",))
    assert failures and all(f.startswith("FetchRequest(") for f in failures), failures


def test_bit_vector_image_has_the_integer_models_and_refuses_unbounded_terms():
    """BitVecImage: the width holds every term's interval (x + y here), so the image has the integer models; one bit less wraps."""
    x, y = z3.Ints("x y")
    bounds = {"x": (0, 100), "y": (0, 100)}
    f = z3.And(x + y <= 100, x - y >= -50)

    def same_models(image):
        as_int = {v: z3.BV2Int(z3.BitVec(str(v), image.width), is_signed=True) for v in (x, y)}
        s = z3.Solver()
        s.add([z3.And(lo <= as_int[v], as_int[v] <= hi) for v, (lo, hi) in zip((x, y), bounds.values())])
        s.add(image.bv(f) != z3.substitute(f, *as_int.items()))
        return s.check() == z3.unsat

    image = deep_bmc.BitVecImage(bounds)
    image.interval(f)
    assert image.width == 9 and same_models(image)
    narrow = deep_bmc.BitVecImage(bounds)
    narrow.width = image.width - 1
    assert not same_models(narrow)
    with pytest.raises(ValueError, match="has no bounds"):
        deep_bmc.BitVecImage({"x": (0, 1)}).interval(x + y > 0)


def test_bmc_finds_the_smallest_depth():
    b = I.bmc("hw_within_isr", "hw_max_not_min", 3)
    assert b.k == 1 and [lab for lab, _ in b.trace] == ["init", "Produce"]
    assert I.bmc("hw_within_isr", None, 3).k is None


def test_bmc_replay_reports_a_disagreement_as_an_encoding_bug():
    b = I.bmc("hw_within_isr", "hw_max_not_min", 3)
    # the real model does not raise the HW past the followers: replaying without the mutant must disagree
    assert crosscheck.replay_bmc(b.trace, None, "hw_within_isr").startswith("ENCODING BUG")


def test_prove_cli_json_and_exit_code():
    r = CliRunner().invoke(prove, ["--json", "--group", "propagation"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["failed"] == [] and any(c["claim"] == "propagation.quiet_reached" for c in data["claims"])


def test_prove_cli_unknown_group_is_a_usage_error():
    r = CliRunner(mix_stderr=False).invoke(prove, ["--group", "nope"]) if "mix_stderr" in \
        CliRunner.__init__.__code__.co_varnames else CliRunner().invoke(prove, ["--group", "nope"])
    assert r.exit_code == 2
    assert "isrlab: error: unknown group(s) nope" in (r.stderr if hasattr(r, "stderr") else r.output)


# ---------------------------------------------------------------------------- CTIs decoded into the model
def _mutant_cti(mutant):
    claim, transitions, _target, _lc = report.MUTANTS[mutant]
    r = I.check_step(transitions[0], claim, mutant)
    assert r.result == I.CTI, (mutant, r.result)
    return r


@pytest.mark.parametrize("mutant,verdict", [
    ("shrink_ge", "CTI re-checked in model: isr_lag_window fails"),
    ("hw_max_not_min", "CTI re-checked in model: hw_within_isr fails"),
    ("expand_no_epoch_start", "CTI re-checked in model: isr_entry_condition fails"),
])
def test_cti_decodes_into_a_model_state_that_breaks_the_executable_invariant(mutant, verdict):
    """Partition.isFollowerOutOfSync / maybeIncrementLeaderHW / isFollowerInSync (Kafka 2.4.0): the mutant's CTI fails in the model too."""
    assert decode.recheck_cti(_mutant_cti(mutant), mutant) == verdict


def test_decoded_pre_state_reads_back_and_satisfies_the_corresponding_invariants():
    """Partition.maybeIncrementLeaderHW (Kafka 2.4.0): the decoded leader state is the CTI's, and HW <= ISR LEOs holds in it."""
    cti = _mutant_cti("hw_ignores_isr")
    v = dict(cti.pre)
    cfg = decode.model_config(v)
    s = decode.model_state(cfg, v)
    seen = crosscheck.observe(s, v["l"])
    assert {k: seen[k] for k in seen if k in v and k != "epoch"} == {k: v[k] for k in seen if k in v and k != "epoch"}
    assert check_state(cfg, s, 0, tuple(BY_NAME[e] for e in decode.CORRESPONDING.values())) == []
    assert s.zk.partition_states[0].leader == v["l"] == s.brokers[v["l"]].partitions[0].leader


def test_cti_without_its_mutant_is_reported_as_an_encoding_bug():
    """Partition.isFollowerOutOfSync (Kafka 2.4.0, strict >): the real model does not remove at exactly L, so the CTI disagrees."""
    verdict = decode.recheck_cti(_mutant_cti("shrink_ge"), None)
    assert verdict.startswith("ENCODING BUG: after IsrExpiration")


def test_cti_without_executable_counterpart_still_compares_the_post_state():
    """Replica.updateFetchState (Kafka 2.4.0, RS1-RS2): lag_sound is about ghost append times; the post-state must still match."""
    verdict = decode.recheck_cti(_mutant_cti("caught_up_on_every_fetch"), "caught_up_on_every_fetch")
    assert verdict.startswith("CTI re-checked in model: z3 post-state reproduced; lag_sound has no executable")
    assert decode.recheck_cti(_mutant_cti("caught_up_on_every_fetch"), None).startswith("ENCODING BUG")


def test_z3_invariant_evaluates_on_concrete_values():
    """Partition.maybeIncrementLeaderHW (Kafka 2.4.0): hw_within_isr read off concrete values, both ways."""
    v = dict(_mutant_cti("hw_max_not_min").pre)
    assert decode.z3_holds("hw_within_isr", v)
    l = v["l"]
    f = next(i for i in range(3) if i != l)
    v.update({f"isr{f}": True, f"leo{f}": v[f"hw{l}"] - 1})
    assert not decode.z3_holds("hw_within_isr", v)


# ---------------------------------------------------------------------------- BMC with leader changes
def test_bmc_trace_with_leader_changes_replays_in_the_model():
    """KafkaController.onBrokerFailure + Partition.makeLeader (Kafka 2.4.0, K2, M4-M9): two elections, a KIP-279 truncation."""
    c = report.leader_change_claim("two_changes_then_hw")
    assert c.ok, (c.result, c.crosscheck)
    assert c.facts["trace"].count("LeaderChange") == 2
    assert any(lab.startswith("FollowerTruncate") for lab in c.facts["trace"])
    assert c.crosscheck.startswith("model agrees") and "2 leader change(s)" in c.crosscheck


def test_leader_change_replay_detects_a_wrong_election():
    """offlinePartitionLeaderElection (Kafka 2.4.0, K2): a trace naming another new leader than the model's is an encoding bug."""
    b = I.bmc(None, None, 6, "session", goal=report.goal_deposed_leader_rejoins)
    assert b.k == 4 and [lab for lab, _ in b.trace][2] == "LeaderChange"
    bad = [(lab, dict(v)) for lab, v in b.trace]
    wrong = 3 - bad[2][1]["l"]   # the other follower (leaders here are 1 or 2)
    for _lab, v in bad[2:]:
        v["l"] = wrong
    assert crosscheck.replay_bmc(bad, None, None).startswith("ENCODING BUG: after step 2 (LeaderChange)")
    assert crosscheck.replay_bmc(b.trace, None, None).startswith("model agrees")
