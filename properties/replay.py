"""Replay a trace through the model, step by step, checking the catalogue and the trace's own checks."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.actions import describe
from ..model.encode import encode, flatten, lookup
from ..model.log import epoch_cache_answer
from ..model.metrics import PREFIX as METRICS_PREFIX, metric_at
from ..model.step import initial_state, step
from ..model.trace import Trace, TraceError
from .invariants import CATALOGUE, LIVENESS_BY_NAME, Violation, check_state, check_transition

_ABSENT = object()


@dataclass
class StepRecord:
    index: int
    action: object
    changes: list            # (path, old, new)
    violations: list
    losses: list = field(default_factory=list)   # Loss records established at this step


@dataclass(frozen=True)
class Loss:
    """A documented loss (never a violation): records an unclean leader election lost, established at ``step``
    (the takeover of the elected replica, or a deposed leader acknowledging or serving an older record after it),
    with the step of the election itself."""

    name: str                # "unclean_loss"
    step: int
    facts: dict              # partition, leader_epoch, leader, election_step, records: [[offset, record id], ...]

    def to_json(self) -> dict:
        return {"name": self.name, "step": self.step, "facts": self.facts}


@dataclass
class ReplayResult:
    trace: Trace
    steps: list = field(default_factory=list)
    violations: list = field(default_factory=list)      # first violation of each invariant
    check_failures: list = field(default_factory=list)  # one-line messages
    final_state: object = None
    losses: list = field(default_factory=list)          # documented losses (Loss), in step order
    #: the trace's recorded attribution (``stored_attribution``), and the one computed on this replay for the
    #: violation it expects (when it records one and that violation occurs): the pair the verdict compares
    stored_attribution: object = None
    attribution: object = None

    @property
    def outcome(self) -> str:
        return "violation" if self.violations else "pass"

    @property
    def matches_expectation(self) -> bool:
        if self.check_failures:
            return False
        if self.trace.expect == "pass":
            return not self.violations
        return (any(v.invariant == self.trace.violated for v in self.violations)
                and self.attribution_problem is None)

    @property
    def attribution_problem(self) -> str | None:
        """Why the trace's recorded attribution no longer holds (one line), or None when it does or none is due."""
        stored, now, violated = self.stored_attribution, self.attribution, self.trace.violated
        if stored is None or self.trace.expect == "pass":
            return None
        if stored.invariant != violated:
            return (f"the trace's attribution is of a violation of {stored.invariant}, not of {violated}, the "
                    f"violation it expects")
        if now is None or (set(now.bugs), now.joint) == (set(stored.bugs), stored.joint):
            return None
        if not now.bugs:
            return (f"no known fix removes the violation of {violated} any more; the trace attributes it to "
                    f"{bug_names(stored)}")
        if not stored.bugs:
            return (f"the violation of {violated} is now attributed to {bug_names(now)}; the trace says no known "
                    f"fix removes it (UNEXPECTED)")
        return f"the violation of {violated} is now attributed to {bug_names(now)}, the trace says {bug_names(stored)}"


def verdict(result: ReplayResult) -> tuple[bool, str]:
    """Whether the outcome is the one the trace's header expects, and if not, why not (one line per problem).

    The one definition ``isrlab replay --expected`` and the pytest plugin share, over
    ``ReplayResult.matches_expectation``: a trace expecting a violation of X matches when X fails (others may
    fail too) and, when the trace records an attribution, the one computed on this replay names the same known
    bugs (``ReplayResult.attribution_problem``); a trace expecting ``pass`` matches when no invariant fails;
    every check must hold either way.  The message says what broke, at which step, in the explainer's sentence,
    then the known bugs that violation is attributed to by their fixes; it is empty when ok.
    """
    if result.matches_expectation:
        return True, ""
    from .explain import evidence_line, sentence

    trace = result.trace
    problems = [f"check failed: {msg}" for msg in result.check_failures]
    first = min(result.violations, key=lambda v: v.step, default=None)
    if first is not None:
        what = sentence(trace.config, trace.actions, first, trace.start)
        others = ", ".join(f"{v.invariant} (step {v.step})" for v in result.violations if v is not first)
        if others:
            what += f"\nalso failing: {others}"
    expected = next((v for v in result.violations if v.invariant == trace.violated), None)
    if trace.expect == "pass":
        if first is not None:
            problems.insert(0, f"expected no violation, but {first.invariant} fails at step {first.step}: {what}")
    elif expected is None:
        if first is not None:
            problems.insert(0, f"expected a violation of {trace.violated}, which holds; {first.invariant} fails "
                               f"instead at step {first.step}: {what}")
        else:
            problems.insert(0, f"expected a violation of {trace.violated}, but the trace passed: no invariant "
                               f"fails in its {len(trace.actions)} steps")
    elif result.attribution_problem is not None:
        problems.insert(0, result.attribution_problem)
    shown = expected if trace.expect == "violation" and expected is not None else first
    if shown is not None:
        a = result.attribution if shown is expected and result.attribution else attribution_of(trace, shown)
        problems.append(f"attribution: {a.summary()}")
        if shown is expected and result.attribution_problem is not None and a.evidence:
            problems.append("replayed " + "; ".join(evidence_line(a.invariant, e) for e in a.evidence))
    elif result.stored_attribution is not None and trace.expect == "violation":
        problems.append(f"the trace's attribution: {result.stored_attribution.summary()}")
    return False, "\n".join(problems)


def bug_names(a) -> str:
    """The bugs an Attribution names, as the verdict says them: "A and B", "A + B together", or "no known bug"."""
    if not a.bugs:
        return "no known bug"
    return " + ".join(a.bugs) + " together" if a.joint else " and ".join(a.bugs)


def _expected_bugs(trace: Trace) -> tuple:
    """The bugs the trace's preset expects: attribution admits a setting as a candidate only for those."""
    from ..model.config import PRESETS

    p = PRESETS.get(trace.preset) if trace.preset else None
    return p.bugs if p is not None else ()


def attribution_of(trace: Trace, v: Violation):
    """The known bugs violation ``v`` is attributed to today, over the actions up to it, as the fuzzer attributes."""
    from .attribution import attribute

    return attribute(trace.config, trace.actions[:v.step], v.invariant, step=v.step, start=trace.start,
                     expected=_expected_bugs(trace))


_OUTCOMES = ("persists", "removed", "cut", "invalid")


def stored_attribution(trace: Trace):
    """The trace's recorded Attribution (None if none), checked so that a malformed one is a one-line TraceError."""
    from ..model.bugs import BUGS
    from .attribution import Attribution
    from .invariants import NAMES

    d = trace.attribution
    if d is None:
        return None

    def bad(why: str):
        raise TraceError(f"attribution: {why}")

    def ids(value, where: str) -> tuple:
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            bad(f"{where} must be a list of bug ids")
        unknown = [x for x in value if x not in BUGS]
        if unknown:
            bad(f"{where} names {unknown[0][:60]!r}, no known bug (isrlab bugs lists them)")
        if len(set(value)) != len(value):
            bad(f"{where} names a bug twice")
        return tuple(value)

    if not isinstance(d, dict):
        bad("must be an object")
    missing = [k for k in ("invariant", "step", "bugs", "joint", "evidence") if k not in d]
    if missing:
        bad(f"missing {', '.join(missing)}")
    if not isinstance(d["invariant"], str) or d["invariant"] not in NAMES:
        bad(f"invariant {str(d['invariant'])[:60]!r} is no invariant of the catalogue")
    step_ = d["step"]
    if type(step_) is not int or not 0 <= step_ <= len(trace.actions):
        bad(f"step must be a step of the trace (0 to {len(trace.actions)})")
    bugs = ids(d["bugs"], "bugs")
    if type(d["joint"]) is not bool or (d["joint"] and len(bugs) < 2):
        bad("joint must be true or false, and true only for two bugs or more")
    if not isinstance(d["evidence"], list):
        bad("evidence must be a list")
    for i, e in enumerate(d["evidence"]):
        if not isinstance(e, dict) or "fixes" not in e or "outcome" not in e:
            bad(f"evidence {i + 1} must be an object with fixes and outcome")
        ids(e["fixes"], f"evidence {i + 1}'s fixes")
        if e["outcome"] not in _OUTCOMES:
            bad(f"evidence {i + 1}'s outcome must be one of {', '.join(_OUTCOMES)}")
        s = e.get("step")
        if s is not None and (type(s) is not int or s < 0):
            bad(f"evidence {i + 1}'s step must be a step number or null")
    return Attribution.from_json(d)


def diff_states(before: dict, after: dict) -> list:
    """(path, old, new) for every leaf that changed between two encoded states."""
    a, b = flatten(before), flatten(after)
    out = []
    for path in sorted(set(a) | set(b)):
        old, new = a.get(path, _ABSENT), b.get(path, _ABSENT)
        if (old is _ABSENT and new == []) or (new is _ABSENT and old == []):
            continue  # an empty container that gained (or lost) items: its items are listed instead
        if old != new:
            out.append((path, None if old is _ABSENT else old, None if new is _ABSENT else new))
    return out


def _epoch_cache_answer(s, q: dict):
    """The answer an ``epoch_cache`` check observes (model.log.epoch_cache_answer over the broker's log), or KeyError."""
    b, p = q["broker"], q["partition"]
    log = s.brokers[b].logs[p] if b < len(s.brokers) and p < len(s.brokers[b].logs) else None
    if log is None:
        raise KeyError(f"broker {b} has no log of partition {p}")
    return epoch_cache_answer(log.epoch_cache, log.log_end_offset, q.get("ops", ()), q["query"])


def _describe_query(q: dict) -> str:
    ops = "".join(f".{o[0]}({', '.join(map(str, o[1:]))})" for o in q.get("ops", ()))
    query = q["query"] if isinstance(q["query"], str) else f"{q['query'][0]}({q['query'][1]})"
    return f"broker {q['broker']}'s epoch cache of partition {q['partition']}{ops}.{query}"


def _run_checks(trace: Trace, after: int, data: dict, failures: list, s=None) -> None:
    for c in trace.checks:
        if c["after"] != after:
            continue
        q = c.get("epoch_cache")
        what = c.get("path") if q is None else _describe_query(q)
        try:
            if q is not None:
                got = _epoch_cache_answer(s, q)
            elif c["path"].startswith(METRICS_PREFIX):     # a metric (model/metrics.py), computed, not stored
                got = metric_at(trace.config, s, c["path"])
            else:
                got = lookup(data, c["path"])
        except KeyError as e:
            failures.append(f"after {after} actions: no such state path {c['path']!r}" if q is None
                            else f"after {after} actions: {what}: {e.args[0]}")
            continue
        if got != c["equals"]:
            why = f" ({c['why']})" if c.get("why") else ""
            failures.append(f"after {after} actions: {what} is {got!r}, expected {c['equals']!r}{why}")


def _new_losses(pre, post, i: int, elections: dict) -> list:
    """The documented losses (``Ghost.unclean_losses``) step i established, one Loss per unclean election; notes the
    step of every unclean election it made in ``elections``."""
    g0, g1 = pre.ghost, post.ghost
    if g0.unclean is not g1.unclean:
        for u in g1.unclean[len(g0.unclean):]:
            elections.setdefault((u.partition, u.leader_epoch), i)
    if g0.unclean_losses is g1.unclean_losses or g0.unclean_losses == g1.unclean_losses:
        return []
    new = sorted(set(g1.unclean_losses) - set(g0.unclean_losses))
    out = []
    for p, epoch, leader in sorted({(p, e, l) for p, e, l, _o, _r in new}):
        taken = next((u.taken_epoch for u in g1.unclean if (u.partition, u.leader_epoch) == (p, epoch)), -1)
        out.append(Loss("unclean_loss", i, {
            "partition": p, "leader_epoch": epoch, "leader": leader, "taken_epoch": taken,
            "election_step": elections.get((p, epoch)),
            "records": [[o, r] for q, e, _l, o, r in new if (q, e) == (p, epoch)]}))
    return out


def replay(trace: Trace, invariants=CATALOGUE, with_changes: bool = True, liveness=None,
           every_step: bool = True) -> ReplayResult:
    """Apply every action of the trace; TraceError if one is not enabled where the trace applies it.

    ``every_step=False`` keeps a step record only for the steps that broke an invariant or established a loss, so
    that replaying a long trace for its outcome alone holds no record per action.

    ``liveness`` names liveness properties to check after the last action by settling the cluster
    (``properties.settle``); by default the one the trace's header expects violated, if it is one.
    """
    cfg = trace.config
    result = ReplayResult(trace, stored_attribution=stored_attribution(trace))
    s = initial_state(cfg, trace.start)
    seen: set[str] = set()
    elections: dict = {}     # (partition, leader epoch) of each unclean election -> its step

    def note(vs: list[Violation]) -> None:
        for v in vs:
            if v.invariant not in seen:
                seen.add(v.invariant)
                result.violations.append(v)

    need_data = with_changes or bool(trace.checks)
    data = encode(s) if need_data else None
    note(check_state(cfg, s, 0, invariants))
    if trace.checks:
        _run_checks(trace, 0, data, result.check_failures, s)
    for i, a in enumerate(trace.actions, 1):
        s2 = step(cfg, s, a)
        if s2 is None:
            raise TraceError(f"action {i}: {describe(a)} is not enabled at time {s.now} ms")
        vs = check_transition(cfg, s, a, s2, i, invariants)
        note(vs)
        losses = _new_losses(s, s2, i, elections)
        result.losses.extend(losses)
        data2 = encode(s2) if need_data else None
        changes = diff_states(data, data2) if with_changes else []
        if every_step or vs or losses:
            result.steps.append(StepRecord(i, a, changes, vs, losses))
        if trace.checks:
            _run_checks(trace, i, data2, result.check_failures, s2)
        s, data = s2, data2
    result.final_state = s
    if liveness is None:
        liveness = (trace.violated,) if trace.violated in LIVENESS_BY_NAME else ()
    if liveness:
        from .settle import settle

        # reported at the trace's last step; the facts say how many settling steps followed it
        vs = [Violation(v.invariant, len(trace.actions), v.facts)
              for v in settle(cfg, s, len(trace.actions), tuple(liveness)).violations]
        note(vs)
        if vs and (not result.steps or result.steps[-1].index != len(trace.actions)) and trace.actions:
            result.steps.append(StepRecord(len(trace.actions), trace.actions[-1], [], [], []))
        if vs and result.steps:
            result.steps[-1].violations = list(result.steps[-1].violations) + vs
    stored = result.stored_attribution
    if stored is not None and trace.expect == "violation" and stored.invariant == trace.violated:
        v = next((v for v in result.violations if v.invariant == trace.violated), None)
        if v is not None:      # the attribution the recorded one is compared with (ReplayResult.attribution_problem)
            result.attribution = attribution_of(trace, v)
    return result
