"""Incremental checking: an invariant's ``reads`` bits name every part of the state it reads.

``check_transition(..., incremental=True)`` skips a state invariant when the step changed none of the
parts it ``reads`` (``invariants.changes``), and any caller skips a step invariant the same way.  That is
sound only if each declaration is complete: these tests check, on walks over every preset (violating
states included), that an invariant's answer never changes across a step that left its parts alone,
that an incomplete declaration is caught, and that the engines find, with incremental checking, the
same first violations as a full check of every step.
"""

from __future__ import annotations

import functools

import pytest

from isrlab.model.config import PRESETS
from isrlab.model.step import initial_state, step
from isrlab.properties import invariants as I
from isrlab.properties.replay import replay
from isrlab.properties.walker import derive_seed, search, walk
from isrlab.model.trace import Trace

pytestmark = pytest.mark.unit

SEEDS = range(4)
STEPS = 200


@functools.lru_cache(maxsize=None)
def _transitions(name: str) -> tuple:
    """(cfg, pre, action, post) along keep-going walks of the preset, past its violations, along the traces
    of the violations a keep-going guided search finds, and along the preset's archived counterexamples (so
    that violating states are among them whatever the search's tuning)."""
    from pathlib import Path

    from isrlab.model.trace import load_trace

    cfg = PRESETS[name].config
    traces = [(cfg, walk(cfg, derive_seed(1234, seed), STEPS, keep_going=True).actions) for seed in SEEDS]
    traces += [(cfg, t) for _v, t in search(cfg, derive_seed(1234, 0), 600, keep_going=True).violations]
    archive = Path(__file__).resolve().parent.parent / "counterexamples"
    traces += [(t.config, t.actions) for t in map(load_trace, map(str, sorted(archive.glob(f"*-{name}-*.json"))))
               if t.preset == name]
    out = []
    for c, actions in traces:
        s = initial_state(c)
        for a in actions:
            s2 = step(c, s, a)
            out.append((c, s, a, s2))
            s = s2
    return tuple(out)


#: Every part ``changes`` reports, one bit each.
PARTS = (I.LOGS, I.PARTITIONS, I.ALIVE, I.ZK_STATES, I.ACKED, I.CONSUMED, I.LEADERS, I.LOSSES, I.EPOCHS,
         I.ALTER_ISR)
ALL = sum(PARTS)
REST = -1   # everything no bit names: the clock, fetchers, controllers, sessions, the ghost's counters...


def _mix(base, donor, bits: int, only=None):
    """A state that is ``base`` except for the parts in ``bits``, which are ``donor``'s (same cluster shape);
    with ``only``, a broker's parts are taken from ``donor`` for that broker alone."""
    tok = object()
    x = base._clone(tok)
    brokers = []
    for b, (b0, bd) in enumerate(zip(base.brokers, donor.brokers)):
        br = b0._clone(tok)
        if only is not None and b != only:
            brokers.append(br)
            continue
        if bits & I.LOGS:
            br.logs = bd.logs
        if bits & I.PARTITIONS:
            br.partitions = bd.partitions
        if bits & I.ALIVE:
            br.alive = bd.alive
        if bits & I.EPOCHS:
            br.controller_epoch = bd.controller_epoch
        if bits & I.ALTER_ISR:
            br.alter_isr_unsent = bd.alter_isr_unsent
        brokers.append(br)
    x.brokers = tuple(brokers)
    x.zk = base.zk._clone(tok)
    if bits & I.ZK_STATES:
        x.zk.partition_states = donor.zk.partition_states
        x.zk.assignment = donor.zk.assignment     # topics at run time, reassignment: the partitions' replicas
    if bits & I.EPOCHS:
        x.zk.controller_epoch = donor.zk.controller_epoch
    if base.quorum is not None:           # KRaft: the quorum's partitions are ZK_STATES, its registrations EPOCHS
        x.quorum = q = base.quorum._clone(tok)
        if bits & I.ZK_STATES:
            q.partitions = donor.quorum.partitions
        if bits & I.EPOCHS:
            q.registrations = donor.quorum.registrations
    x.ghost = g = base.ghost._clone(tok)
    if bits & I.ACKED:
        g.acked = donor.ghost.acked
    if bits & I.CONSUMED:
        g.consumed = donor.ghost.consumed
    if bits & (I.ACKED | I.CONSUMED):
        g.deleted_partitions = donor.ghost.deleted_partitions   # a deleted topic's records are not checked
    if bits & I.LEADERS:
        g.leaders = donor.ghost.leaders
    if bits & I.LOSSES:
        g.unclean_elections, g.lossy_crashes = donor.ghost.unclean_elections, donor.ghost.lossy_crashes
        g.unclean, g.unclean_losses = donor.ghost.unclean, donor.ghost.unclean_losses
    return x


def _swap(s, other, part: int, only=None):
    """``s`` with one part (or, for REST, everything but the named parts) taken from ``other``."""
    return _mix(other, s, ALL) if part == REST else _mix(s, other, part, only)


def _answer(check, *args):
    try:
        return check(*args)
    except Exception as e:  # noqa: BLE001 -- a check that reads a part it did not declare may trip on the mix
        return repr(e)


def _unsound(inv: I.Invariant, transitions) -> list:
    """Evidence that ``inv`` reads a part outside ``inv.reads``.

    A state invariant must give the same answer on a state whatever the parts it does not read hold:
    each such part (one at a time, for every broker or for one, and all the unnamed rest at once) is
    swapped for another state's, an earlier one of the same walk or one of another walk.  A step
    invariant must find nothing on a transition whose post-state has the pre-state's ``reads`` parts
    and another state's everything else.
    """
    bad = []
    pools: dict = {}   # states are swapped only between walks of one configuration (a scope trace has fewer brokers)
    for c, _pre, _a, post in transitions[::7]:
        pools.setdefault(c, []).append(post)
    for n, (cfg, pre, a, post) in enumerate(transitions):
        others = pools.get(cfg) or [pre]
        other = others[n % len(others)] if n % 2 or transitions[n // 2][0] != cfg else transitions[n // 2][1]
        if inv.scope == I.STATE:
            want = inv.check(cfg, post)
            for part in (*PARTS, REST):
                if part != REST and part & inv.reads:
                    continue
                for only in (None, n % len(post.brokers)):
                    got = _answer(inv.check, cfg, _swap(post, other, part, only))
                    if got != want:
                        bad.append((n, part, want, got))
        else:
            got = _answer(inv.check, cfg, pre, a, _mix(other, pre, inv.reads))
            if got is not None:
                bad.append((n, inv.reads, None, got))
    return bad


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_declared_read_covers_what_the_invariant_reads(name):
    transitions = _transitions(name)
    assert len(transitions) > 500
    declared = [inv for inv in I.SAFETY if inv.reads is not None]
    assert len(declared) >= 12
    for inv in declared:
        assert _unsound(inv, transitions) == [], inv.name


def test_an_incomplete_declaration_is_caught():
    """The same test fails on a declaration that leaves out a part the check reads.

    A part an invariant reads changes its answer only in some states (mostly near a violation), so the test is
    as strong as the states it is given: these two presets' transitions include violations of the durability,
    consumer and log-matching invariants, where a left-out part shows.
    """
    transitions = _transitions("crash-loses-unflushed") + _transitions("no-kafka-7164")
    for name, reads in (("hw_within_isr", I.LOSSES | I.ALIVE | I.PARTITIONS),
                        ("acked_durability", I.ACKED | I.LOGS),
                        ("acked_durability", I.ACKED | I.LOGS | I.LOSSES | I.ALIVE),
                        ("consumer_safety", I.CONSUMED | I.LOGS), ("committed_prefix", I.LOGS | I.PARTITIONS),
                        ("log_matching", I.LOSSES), ("leader_hw_monotonic", I.PARTITIONS | I.ALIVE),
                        ("isr_entry_condition", I.ALIVE), ("epochs_monotonic", I.ZK_STATES)):
        inv = I.BY_NAME[name]
        assert reads != inv.reads
        wrong = I.Invariant(name, inv.kind, inv.scope, inv.check, "test", "test", reads=reads)
        assert _unsound(wrong, transitions), (name, reads)


def test_changes_names_every_part_a_step_replaced():
    transitions = _transitions("kafka-0.11")
    seen = 0
    for n, (_cfg, pre, _a, post) in enumerate(transitions):
        other = transitions[n // 3][1]
        for part in PARTS:
            x = _mix(pre, other, part)
            if I.changes(pre, x) & part == 0:
                # nothing of that part was replaced: the donor's objects are the very same
                assert _mix(pre, other, part) is not None and _same(pre, x, part), (n, part)
            else:
                seen += 1
        assert I.changes(pre, pre) == 0
    assert seen > 1000


def _same(a, b, part: int) -> bool:
    if part in (I.LOGS, I.PARTITIONS):
        attr = "logs" if part == I.LOGS else "partitions"
        return all(getattr(x, attr) is getattr(y, attr) for x, y in zip(a.brokers, b.brokers))
    if part == I.ALIVE:
        return all(x.alive == y.alive for x, y in zip(a.brokers, b.brokers))
    if part == I.EPOCHS:
        return a.zk.controller_epoch == b.zk.controller_epoch and all(
            x.controller_epoch == y.controller_epoch for x, y in zip(a.brokers, b.brokers))
    if part == I.ZK_STATES:
        return a.zk.partition_states is b.zk.partition_states
    if part == I.ALTER_ISR:
        return all(x.alter_isr_unsent is y.alter_isr_unsent for x, y in zip(a.brokers, b.brokers))
    if part == I.LOSSES:
        return (a.ghost.unclean is b.ghost.unclean and a.ghost.unclean_losses is b.ghost.unclean_losses
                and a.ghost.lossy_crashes == b.ghost.lossy_crashes)
    attr = {I.ACKED: "acked", I.CONSUMED: "consumed", I.LEADERS: "leaders"}[part]
    return getattr(a.ghost, attr) is getattr(b.ghost, attr)


@pytest.mark.parametrize("name", sorted(n for n, p in PRESETS.items() if p.expected in {i.name for i in I.SAFETY}))
def test_incremental_search_finds_the_first_violations_a_full_replay_finds(name):
    """The guided search checks incrementally; replay checks every invariant after every step.  On the trace of
    each violation the search finds, both report the same invariants failing first, at the same step, with the
    same facts (a failure an incremental check skipped earlier would show up in the replay first)."""
    cfg = PRESETS[name].config
    found = 0
    for extensions in (1500, 6000):   # longer searches only for a preset none of the short ones breaks
        for seed in range(8):         # the first two seeds (of eight) whose search finds a violation
            if found == 2:
                break
            r = search(cfg, derive_seed(5, seed), extensions)
            if r.violation is None:
                continue
            found += 1
            full = replay(Trace(config=cfg, actions=list(r.actions)), with_changes=False)
            assert [(v.invariant, v.step, v.facts) for v, _t in r.violations] == \
                [(v.invariant, v.step, v.facts) for v in full.violations], seed
        if found:
            break
    assert found


def test_isr_propagation_bound_counts_a_late_change_from_the_change():
    """A kafka-2.4 walk whose ISR change comes over 60 s after the broker's last propagation: the change is owed only
    at the task's next run, not at once (the corrected bound's first version fired at the change's own step)."""
    cfg = PRESETS["kafka-2.4"].config
    inv = I.BY_NAME["isr_propagation_bound"]
    r = walk(cfg, derive_seed(5, 266), 450, invariants=(inv,))   # one walk in some 300 reaches the case
    assert r.violations == [] and r.steps == 450
    s, late = initial_state(cfg), 0
    for a in r.actions:
        s2 = step(cfg, s, a)
        late += sum(1 for b0, b1 in zip(s.brokers, s2.brokers) if not b0.isr_change_set and b1.isr_change_set
                    and s2.now > b1.last_isr_propagation_ms + cfg.isr_change_max_delay_ms)
        s = s2
    assert late >= 1      # the walk still reaches the case


def test_leader_epoch_start_bound_allows_a_re_sent_epoch():
    """A controller failover re-sends ZooKeeper's leader epoch to a restarted leader: makeLeader takes its LEO as the
    epoch's start offset again while the epoch cache keeps the epoch's first offset, so the start may be higher.
    A search for a leader whose start differs from its cache's finds such a state; the invariant holds along it."""
    cfg = PRESETS["kafka-2.4"].config
    inv = I.BY_NAME["leader_epoch_start_bound"]

    def start_differs(cfg, s):
        for p in range(len(s.zk.assignment)):
            for br, part in I._leaders(s, p):
                for epoch, offset in br.logs[p].epoch_cache:
                    if epoch == part.leader_epoch and offset != part.leader_epoch_start_offset:
                        return {"offset": offset, "start": part.leader_epoch_start_offset}
        return None

    differs = I.Invariant("start_differs", I.ALWAYS, I.STATE, start_differs, "", "", reads=inv.reads)
    r = search(cfg, derive_seed(7, 1), 300, invariants=(differs,))
    assert r.violations, "the search no longer reaches a re-sent leader epoch"
    (v, actions), = r.violations
    assert v.facts["start"] > v.facts["offset"]
    s = initial_state(cfg)
    for n, a in enumerate(actions, 1):
        s2 = step(cfg, s, a)
        assert I.check_transition(cfg, s, a, s2, n, (inv,)) == []
        s = s2
