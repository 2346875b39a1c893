"""The walker and `isrlab fuzz`: the default preset stays clean, broken presets are found, shrunk and archived."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from isrlab.cli import main
from isrlab.model.config import PRESETS, preset
from isrlab.model.step import initial_state, step
from isrlab.properties.invariants import BY_NAME, WITNESSES
from isrlab.properties.walker import derive_seed, walk

pytestmark = pytest.mark.props


def test_derived_seeds_are_stable_and_distinct():
    seeds = [derive_seed(7, i) for i in range(1000)]
    assert len(set(seeds)) == 1000
    assert derive_seed(7, 3) == derive_seed(7, 3) and derive_seed(7, 3) != derive_seed(8, 3)


def test_walk_is_deterministic_and_replays():
    cfg = preset("kafka-2.4").config
    a, b = walk(cfg, 1234, 300), walk(cfg, 1234, 300)
    assert a.actions == b.actions and a.kinds == b.kinds
    s = initial_state(cfg)
    for x in a.actions:
        s = step(cfg, s, x)
        assert s is not None


def test_default_preset_has_no_violation_and_sees_every_witness():
    cfg = preset("kafka-2.4").config
    seen = set()
    for i in range(1000):
        r = walk(cfg, derive_seed(0, i), 150)
        assert r.violation is None, (r.seed, r.violation)
        seen |= r.witnesses
    assert seen == {w.name for w in WITNESSES}, f"vacuous campaign: witnesses seen {sorted(seen)}"


@pytest.mark.parametrize("name", sorted(n for n, p in PRESETS.items() if p.expected == "pass"))
def test_passing_presets_have_no_violation(name):
    """Short walks of a preset expected to pass break nothing, unless the violation is attributed, by replaying it with
    the fix, to a known bug its configuration contains (a KRaft release's pending-reset race): never by invariant name."""
    from isrlab.properties.attribution import attribute, classify

    p = preset(name)
    for i in range(120):
        r = walk(p.config, derive_seed(1, i), 120)
        if r.violation is not None:
            a = attribute(p.config, r.actions[:r.violation.step], r.violation.invariant, expected=p.bugs)
            assert classify(p, a)[0] == "known", (name, r.seed, a.summary())


@pytest.mark.parametrize("name", ["kafka-0.11", "kafka-2.0", "no-kafka-7128"])
def test_shallow_breaking_presets_are_found_quickly(name):
    p = preset(name)
    for i in range(500):
        r = walk(p.config, derive_seed(0, i), 120, (BY_NAME[p.expected],))
        if r.violation is not None:
            assert r.violation.invariant == p.expected
            return
    pytest.fail(f"{name}: {p.expected} not found in 500 runs")


def test_fuzz_finds_shrinks_explains_and_archives_once(tmp_path):
    args = ["fuzz", "--master", "none", "--engine", "walk", "--preset", "no-kafka-7128", "--runs", "500",
            "--archive", str(tmp_path),
            "--json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1, r.output
    out = json.loads(r.stdout)
    assert out["violation"]["invariant"] == "isr_entry_condition"
    assert out["shrunk_length"] <= out["original_length"]
    assert "joined leader" in out["explanation"]
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].name.endswith(".json")
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 1 and not json.loads(again.stdout)["newly_archived"]
    assert len(list(tmp_path.iterdir())) == 1, "re-running a campaign never duplicates a file"
    replayed = CliRunner().invoke(main, ["replay", str(files[0])])
    assert replayed.exit_code == 1 and "as expected" in replayed.output


def test_fuzz_guided_engine_by_default(tmp_path):
    r = CliRunner().invoke(main, ["fuzz", "--master", "none", "--preset", "kafka-2.4", "--runs", "1",
                                  "--extensions", "100",
                                  "--archive", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["engine"] == "guided" and 100 <= out["steps"] <= 100 * 40 and out["violation"] is None


def test_fuzz_rejects_unknown_invariant():
    r = CliRunner().invoke(main, ["fuzz", "--master", "none", "--invariant", "nope", "--runs", "1"])
    assert r.exit_code == 2 and "unknown invariant" in r.output


def test_guided_search_is_deterministic():
    from isrlab.properties.walker import search

    cfg = preset("kafka-2.4").config
    a, b = search(cfg, 42, 200, 30), search(cfg, 42, 200, 30)
    assert a.steps == b.steps and a.corpus_size == b.corpus_size and a.kind_counts == b.kind_counts
    assert a.violation is None and a.corpus_size > 10


#: Breaking presets the guided search does not find within this test's four runs.  (no-kip-903 was one until a Fetch
#: of the follower's earlier incarnation could reach the leader after its restart on an empty disk (OrphanRequestReceived,
#: 2026-11-29): the fourth run finds it so, in 92 actions; before, its AlterPartition had to wait, unsent, through the
#: whole stop, disk replacement and re-registration, and `isrlab fuzz --preset no-kip-903 --seed 13 --invariant
#: controller_isr_entry_condition` found it in its 83rd run.)
#: kraft-no-partition-epoch-check: its four runs meet only the pending-reset race, which breaks the same invariant
#: (gone past); benchmarks/attributed_finds.py finds the bug itself in 1 of 5 seeds within 120 s, the walk engine in 2.
#: no-kafka-2143: every violation its runs meet is kafka-0.10.2's own (KIP-101, KIP-320: their fixes remove it).
#: no-kafka-15221: found by seed 0 until the controller kept lastKnownElr (2026-11-29: its ELR walks take other paths);
#: since, seeds 11, 14, 21, 29 and 37 of 0-40 find KAFKA-15221 itself (attributed to it), none of 0-3.
NOT_FOUND_YET = {"kraft-no-partition-epoch-check", "no-kafka-2143", "no-kafka-15221"}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="found only past this test's four runs"))
    if n in NOT_FOUND_YET else n
    for n in sorted(n for n, p in PRESETS.items() if p.expected != "pass")])
def test_every_breaking_preset_is_found_by_guided_search(name):
    """The guided search (the campaigns' default engine), looking at the headline invariant, finds a violation of it
    that is the preset's own bug: attributed to it by its fix, never counted by the invariant's name.  A known bug
    the preset does not expect (the pending-reset race) is gone past, as campaigns do.

    Deterministic (the search draws only from its seed), so the budget is a number of runs, not seconds.
    """
    from isrlab.campaign import known_elsewhere
    from isrlab.properties.attribution import attribute, classify
    from isrlab.properties.walker import search

    p = preset(name)
    live = p.expected not in BY_NAME     # a liveness headline: found by the settling phase after an extension
    for i in range(4):
        r = search(p.config, derive_seed(0, i), 6000, 40, () if live else (BY_NAME[p.expected],),
                   liveness=(p.expected,) if live else (), go_past=known_elsewhere(p))
        if r.violation is not None:
            assert r.violation.invariant == p.expected
            a = attribute(p.config, r.actions, p.expected, expected=p.bugs)
            assert classify(p, a)[0] == "found", a.summary()
            return
    pytest.fail(f"{name}: {p.expected} not found by 4 guided runs of 6000 extensions")


def test_fuzz_hypothesis_engine_runs_the_machine(tmp_path):
    r = CliRunner().invoke(main, ["fuzz", "--master", "none", "--engine", "hypothesis", "--preset", "kafka-2.4",
                                  "--runs", "1",
                                  "--max-steps", "30", "--archive", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["engine"] == "hypothesis" and out["steps"] > 100 and out["violation"] is None


def test_guided_search_stops_between_extensions_when_asked():
    from isrlab.properties.walker import search

    cfg = preset("kafka-2.4").config
    calls = []
    r = search(cfg, 5, 10**6, 10, should_stop=lambda: calls.append(1) or len(calls) > 3)
    assert r.extensions == 3 and r.violation is None and r.steps <= 30 and r.stopped


def _stop_after(n: int):
    """A should_stop that is True from its n-th call on: a counter, not a clock."""
    calls = []
    return lambda: calls.append(1) or len(calls) >= n


def test_walk_stops_inside_a_long_walk_with_the_steps_of_an_unbounded_one():
    """should_stop is asked every CHECK_EVERY steps: a 1,000,000-step walk stops at its third check, and the
    steps it took are the first steps of the same seed's walk without a budget."""
    from isrlab.properties.budget import CHECK_EVERY

    cfg = preset("kafka-2.4").config
    r = walk(cfg, 12345, 10**6, should_stop=_stop_after(3))
    assert r.stopped and r.steps == 3 * CHECK_EVERY - 1
    full = walk(cfg, 12345, r.steps + 500)
    assert not full.stopped and full.actions[:r.steps] == r.actions
    assert walk(cfg, 12345, r.steps).kind_counts == r.kind_counts


def test_guided_search_stops_inside_a_long_extension():
    """An extension of 1,000,000 steps is cut at the second check inside it; the search so far is the one a
    search whose only extension is that long does (same steps, kinds, corpus)."""
    from isrlab.properties.budget import CHECK_EVERY
    from isrlab.properties.walker import search

    cfg = preset("kafka-2.4").config
    r = search(cfg, 5, 10, 10**6, should_stop=_stop_after(3))   # call 1 between extensions, 2 and 3 inside
    assert r.stopped and r.extensions == 1 and r.steps == 2 * CHECK_EVERY
    same = search(cfg, 5, 1, 2 * CHECK_EVERY)
    assert not same.stopped and (same.steps, same.kind_counts, same.corpus_size, same.cells) == \
        (r.steps, r.kind_counts, r.corpus_size, r.cells)


@pytest.mark.parametrize("engine", ["walk", "guided", "hypothesis"])
def test_a_shard_budget_stops_inside_a_run_and_says_so(engine):
    """run_shard's budget (a Deadline on an injected clock that ticks once per reading) reaches inside the run,
    as it does on an executor: a shard of 1,000,000-step runs (test cases for the machine) ends within its first
    run, which is marked stopped, as is the shard."""
    import itertools

    from isrlab.campaign import CampaignSpec, run_seed, run_shard

    spec = CampaignSpec(presets=("kafka-2.4",), engine=engine, shards=1, shard_budget_s=12.0, max_steps=10**6,
                        extensions=10)
    ticks = itertools.count()
    rec = run_shard(spec.tasks()[0], clock=lambda: float(next(ticks)))
    assert rec["stopped_by_budget"] and rec["runs_done"] == 1
    run = rec["runs"][0]
    assert run["stopped"] and 0 < run["steps"] < 12 * 256   # about one check (256 steps) per clock tick
    if engine == "walk":
        assert walk(preset("kafka-2.4").config, run_seed(0, 0, 0), run["steps"]).kind_counts == run["kind_counts"]
    unbounded = run_shard(CampaignSpec(presets=("kafka-2.4",), engine=engine, shards=1, runs=1, max_steps=50,
                                       extensions=2).tasks()[0])
    assert not unbounded["stopped_by_budget"] and not unbounded["runs"][0]["stopped"]


@pytest.mark.parametrize("engine", ["walk", "guided", "hypothesis"])
def test_fuzz_budget_bounds_a_run_of_a_million_steps(tmp_path, engine):
    """`--budget 1 --max-steps 1000000` once ran 65 s (the budget was asked only between runs): now the command
    ends.  Asserts termination within a generous timeout, not speed."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "isrlab.cli", "fuzz", "--master", "none", "--budget", "1",
                          "--max-steps", "1000000", "--engine", engine, "--archive", str(tmp_path), "--json"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["runs"] >= 1 and summary["violation"] is None


def test_keep_going_walk_finds_the_same_first_violation_and_more():
    """keep_going changes nothing up to the first violation, then finds other invariants' violations."""
    from isrlab.properties.shrink import first_violation

    cfg = preset("kafka-0.10.2").config
    # one walk in about a thousand does it; the scan starts where the current model's first one is, so
    # the test stays fast, and it still finds another if a model change moves that one
    for i in range(1100, 4000):
        seed = derive_seed(7, i)
        deep = walk(cfg, seed, 300, keep_going=True)
        if len({v.invariant for v in deep.violations}) < 2:
            continue
        plain = walk(cfg, seed, 300)
        assert plain.violation == deep.violation and plain.actions == deep.actions[:len(plain.actions)]
        assert len({v.invariant for v in deep.violations}) == len(deep.violations)  # the first of each only
        for v in deep.violations:
            got = first_violation(cfg, deep.actions[:v.step], v.invariant)
            assert got is not None and got[0] == v.step
        return
    pytest.fail("no kafka-0.10.2 walk with two different violations in 2,900 seeds")


def test_campaign_verdicts_tell_found_not_found_and_unexpected():
    """A preset's result from attributions: its expected bug found only when a violation is attributed to it; a known
    bug it does not expect is 'known'; a violation no fix removes, or one whose bug is not known to break that
    invariant, is UNEXPECTED."""
    from isrlab.properties.attribution import Attribution, preset_result

    def a(inv, bugs):
        return Attribution(inv, 10, tuple(bugs), False, ())

    passing, breaking = preset("kafka-2.4"), preset("kafka-0.10.2")
    assert preset_result(passing, [])["verdict"] == "as expected"
    assert preset_result(passing, [a("acked_durability", [])])["verdict"] == "UNEXPECTED"
    r = preset_result(passing, [a("truncation_completes", ["KAFKA-10706"])])
    assert r["verdict"] == "as expected" and r["known"] == ["KAFKA-10706"]
    assert preset_result(breaking, [a("acked_durability", ["KIP-101"])])["found"] == ["KIP-101"]
    r = preset_result(breaking, [a("acked_durability", ["KIP-320"])])
    assert r["verdict"] == "not found" and r["not_found"] == ["KIP-101"] and r["known"] == ["KIP-320"]
    r = preset_result(breaking, [a("one_leader_per_epoch", ["KIP-101"])])   # KIP-101 is not known to break it
    assert r["verdict"] == "UNEXPECTED" and r["unexpected"][0]["invariant"] == "one_leader_per_epoch"


# --------------------------------------------------------------------------- the guided search's machinery
def test_parent_pointer_trace_equals_the_naive_trace():
    import random

    from isrlab.model.step import enabled_groups
    from isrlab.properties.walker import Policy, trace_of

    cfg = preset("kafka-0.10.2").config
    assert trace_of(None) == []
    policy = Policy(cfg, random.Random(3))
    s, node, naive = initial_state(cfg), None, ()
    shared = None
    for i in range(150):
        groups = enabled_groups(cfg, s, policy.kinds)
        if not groups:
            break
        a = policy.choose(groups, s)
        s = step(cfg, s, a)
        node, naive = (node, a), naive + (a,)
        assert trace_of(node) == list(naive)
        if i == 40:
            shared = (node, list(naive))
    assert len(naive) > 40
    # a prefix another trace was extended from is unchanged: nodes are shared, never mutated
    assert trace_of(shared[0]) == shared[1]


def _cell_field_along(name: str, index) -> list:
    """Field ``index`` (an int, or a slice) of the novelty cell after each step of the archived trace
    ``*-{name}-*.json``."""
    from pathlib import Path

    from isrlab.model.trace import load_trace
    from isrlab.properties.walker import novelty_key

    (path,) = Path(__file__).resolve().parent.parent.glob(f"counterexamples/*-{name}-*.json")
    t = load_trace(str(path))
    s, out = initial_state(t.config), []
    for a in t.actions:
        s = step(t.config, s, a)
        out.append(novelty_key(s)[0][index])
    return out


def test_novelty_cells_mark_a_follower_whose_log_diverges_below_its_fetch_offset():
    """The cell's divergence level along the archived KAFKA-6880 trace (no-kip-320, 38 actions).

    Step 20: the zombie follower (broker 1) appends a record from broker 0's stale response that
    ZooKeeper's leader (broker 2) lacks: level 1.  Step 25: broker 0 truncates that record as
    broker 2's follower while broker 1 still fetches from broker 0: level 2, until the violation.
    """
    levels = _cell_field_along("no-kip-320-log_matching", 9)  # the cell's divergence level
    assert levels == [0] * 19 + [1] * 5 + [2] * 14


def test_novelty_cells_mark_an_isr_member_truncating_below_its_leaders_hw():
    """The cell's truncating-below-HW field along the archived KAFKA-7415 trace (no-kafka-7415, 32 actions).

    Broker 0's session expired at step 19, and it still leads epoch 0 with ISR [0, 1, 2] and HW 1.
    Steps 22-26: broker 2, with HW 0, is broker 1's follower and truncating.  Step 31: broker 1,
    with HW 0, becomes broker 2's follower and truncates.  Step 32 is broker 1's
    OffsetsForLeaderEpoch.  It is answered UNDEFINED and truncates broker 1 to its HW, which is the
    violation; after it broker 1 no longer truncates.
    """
    marks = _cell_field_along("no-kafka-7415-hw_within_isr", 10)
    assert marks == [False] * 21 + [True] * 5 + [False] * 4 + [True, False]


def test_novelty_cells_mark_a_hw_held_back_below_what_the_isr_allows():
    """The cell's held-back field along the archived KAFKA-13091 trace (kafka-2.7, 39 actions): it is set from the
    step where the leader's pending shrink would leave an ISR whose LEOs allow a higher HW (step 36) to the end, and
    never along traces of presets without AlterIsr whose HW follows every ISR change (KAFKA-7415, KAFKA-6880)."""
    assert _cell_field_along("kafka-2.7-hw_advanced_on_isr_shrink", 11) == [False] * 35 + [True] * 4
    assert not any(_cell_field_along("no-kafka-7415-hw_within_isr", 11))
    assert not any(_cell_field_along("no-kip-320-log_matching", 11))


def test_precondition_cells_are_the_steps_before_a_divergence_or_a_truncation_below_the_hw():
    """precondition_weight along the archived traces: KAFKA-6880's divergence levels 1 and 2 weigh 1 and 10;
    KAFKA-7415's truncating ISR member below its leader's HW 10, KAFKA-13091's HW held back 1; KAFKA-7128's ISR
    entry (none of these) nothing."""
    from isrlab.properties.walker import PRECONDITION_WEIGHTS, precondition_weight

    low, high, truncating, held = PRECONDITION_WEIGHTS
    assert 0 < low == held < high == truncating
    weights = [precondition_weight(c) for c in _cell_field_along("no-kip-320-log_matching", slice(None))]
    assert weights == [0.0] * 19 + [low] * 5 + [high] * 14
    weights = [precondition_weight(c) for c in _cell_field_along("no-kafka-7415-hw_within_isr", slice(None))]
    assert weights == [0.0] * 21 + [truncating] * 5 + [0.0] * 4 + [truncating, 0.0]
    weights = [precondition_weight(c) for c in _cell_field_along("kafka-2.7-hw_advanced_on_isr_shrink", slice(None))]
    assert weights == [0.0] * 35 + [held] * 4
    assert not any(precondition_weight(c) for c in _cell_field_along("no-kafka-7128-isr_entry_condition", slice(None)))


def test_a_targeted_run_aims_its_faults_at_the_leader_and_the_controller():
    """Along the archived KAFKA-6880 trace, the role holders are the controller and the brokers that believe they
    lead; a targeted policy crashes each of them TARGET_WEIGHT times as often as another broker, an untargeted one
    as often."""
    import random
    from pathlib import Path

    from isrlab.model import actions as A
    from isrlab.model.trace import load_trace
    from isrlab.properties.walker import TARGET_WEIGHT, Policy, role_holders

    (path,) = Path(__file__).resolve().parent.parent.glob("counterexamples/*-no-kip-320-log_matching-*.json")
    t = load_trace(str(path))
    s, holders = initial_state(t.config), []
    for a in t.actions:
        s = step(t.config, s, a)
        holders.append(sorted(role_holders(s)))
    # step 1: broker 1 is controller; step 3: broker 0 leads epoch 0; step 9: broker 0 crashes; step 10: broker
    # 1's session expires (no controller, no leader); step 11: broker 2 is controller, then leader; step 29: its
    # session expires and it still believes it leads (a zombie); step 30: broker 0 is controller
    assert holders[0] == [1] and holders[2] == [0, 1] and holders[8] == [1] and holders[9] == []
    assert holders[10] == [2] and holders[28] == [2] and holders[-1] == [0, 2]
    crashes = tuple(A.BrokerCrash(b, clean) for b in range(3) for clean in (True, False))
    for targeted in (True, False):
        policy = Policy(t.config, random.Random(7))
        policy.kinds, policy.weights, policy.targeted = frozenset({A.BrokerCrash}), [1.0, 1.0, 1.0], targeted
        share = sum(policy.choose([crashes], s).broker in (0, 2) for _ in range(3000)) / 3000
        expected = 2 * TARGET_WEIGHT / (2 * TARGET_WEIGHT + 1) if targeted else 2 / 3
        assert abs(share - expected) < 0.04, (targeted, share)


def test_guided_violation_traces_replay_to_their_own_step():
    from isrlab.properties.shrink import first_violation
    from isrlab.properties.walker import search

    cfg = preset("kafka-0.10.2").config
    r = search(cfg, derive_seed(0, 0), 1500, 40, keep_going=True)
    assert len(r.violations) >= 2 and r.violation == r.violations[0][0] and r.actions == r.violations[0][1]
    for v, trace in r.violations:
        assert v.step == len(trace)
        got = first_violation(cfg, trace, v.invariant)
        assert got is not None and got[0] == v.step


def test_sampler_picks_in_proportion_to_its_weights():
    import random

    from isrlab.properties.walker import _Sampler

    rng = random.Random(7)
    sampler, weights = _Sampler(), []
    for i in range(70):
        weights.append(rng.random() + 0.01)
        assert sampler.add(weights[-1]) == i
        if i % 3 == 0:
            j = rng.randrange(len(weights))
            weights[j] = (2 + i) ** -0.5
            sampler.set(j, weights[j])
        total = sum(weights)
        assert sampler.total() == pytest.approx(total) and len(sampler) == len(weights)
        below = 0.0
        for k, w in enumerate(weights):  # the middle of each item's interval picks that item
            assert sampler.pick((below + w / 2) / total) == k
            below += w
    assert sampler.pick(0.0) == 0 and sampler.pick(0.999999999) == len(weights) - 1


_SEARCH_SUMMARY = (
    "import json\n"
    "from isrlab.model.actions import action_to_json\n"
    "from isrlab.model.config import preset\n"
    "from isrlab.properties.walker import search\n"
    "r = search(preset('kafka-0.10.2').config, 11, 400, 40, keep_going=True)\n"
    "print(json.dumps({'steps': r.steps, 'corpus': r.corpus_size, 'cells': r.cells, 'kinds': r.kind_counts,\n"
    "                  'errors': r.errors_seen, 'witnesses': sorted(r.witnesses),\n"
    "                  'violations': [[v.invariant, v.step, [action_to_json(a) for a in t]] for v, t in r.violations]}))\n"
)


def test_guided_search_is_the_same_under_any_hash_seed(tmp_path):
    """Same seed and config, same search, in another process with another PYTHONHASHSEED."""
    import os
    import subprocess
    import sys

    outs = []
    for hash_seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", _SEARCH_SUMMARY], env=env, cwd=tmp_path, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        outs.append(out.stdout)
    assert outs[0] == outs[1]
    got = json.loads(outs[0])
    assert got["violations"] and got["cells"] > 10 and got["corpus"] > got["cells"]
