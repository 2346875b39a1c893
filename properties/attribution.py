"""Attribution: which known bug a violation is, decided by replaying its trace with each bug's fix.

The rule (model/README.md, "Attribution") in short: a violation of I is bug b's when replaying the same
actions, from the same start, with b's flag at its fixed value, I no longer fails (or an action on the path
is no longer enabled).  Every candidate whose single fix removes it is named; when none does, the smallest
set of fixes that together remove it is; when no set does, it is unexpected: a new finding.  The engines
never see this: it runs on a violation once it is found, over the catalogue (model/bugs.py), blind to
which preset or bug was searched for.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.bugs import BUGS, present, with_fix
from ..model.config import ConfigError, ModelConfig
from .shrink import replay_outcome

#: outcomes of one replay with a fix: the invariant still fails / holds / an action is no longer enabled
PERSISTS, REMOVED, CUT, INVALID = "persists", "removed", "cut", "invalid"


@dataclass(frozen=True)
class Evidence:
    """One replay with a fix: which fixes, what became of the violation, and at which step."""

    fixes: tuple
    outcome: str
    step: int | None = None

    def to_json(self) -> dict:
        return {"fixes": list(self.fixes), "outcome": self.outcome, "step": self.step}


@dataclass(frozen=True)
class Attribution:
    """The known bugs a violation of ``invariant`` at ``step`` is attributed to, with the replays behind it."""

    invariant: str
    step: int
    #: the bugs named: each one's fix alone removes it, or (``joint``) only all of them together do; empty: none
    bugs: tuple
    joint: bool
    evidence: tuple

    @property
    def explained(self) -> bool:
        return bool(self.bugs)

    def credited(self) -> tuple:
        """The named bugs known to break this invariant (model/bugs.toml ``breaks``)."""
        return tuple(b for b in self.bugs if b in BUGS and self.invariant in BUGS[b].breaks)

    def summary(self) -> str:
        """One line: what the violation is, and how we know."""
        if not self.bugs:
            tried = ", ".join(f for e in self.evidence for f in e.fixes if len(e.fixes) == 1)
            return (f"{self.invariant}: UNEXPECTED, no known fix removes it"
                    + (f" (replayed with the fix of {tried}: it still fails)" if tried else " (no known bug present)"))
        how = {e.fixes: e for e in self.evidence}
        parts = []
        for fixes in ([tuple(self.bugs)] if self.joint else [(b,) for b in self.bugs]):
            e = how.get(fixes)
            verb = f"is cut at step {e.step}" if e and e.outcome == CUT else "holds"
            parts.append(f"with {' + '.join(fixes)} fixed, {self.invariant} {verb}")
        name = " and ".join(self.bugs) if not self.joint else " + ".join(self.bugs) + " together"
        return f"{self.invariant}: {name} ({'; '.join(parts)})"

    @classmethod
    def from_json(cls, d: dict) -> "Attribution":
        """The inverse of ``to_json`` (``credited`` is derived again from the catalogue)."""
        return cls(d["invariant"], d["step"], tuple(d["bugs"]), d["joint"],
                   tuple(Evidence(tuple(e["fixes"]), e["outcome"], e.get("step")) for e in d["evidence"]))

    def to_json(self) -> dict:
        return {"invariant": self.invariant, "step": self.step, "bugs": list(self.bugs), "joint": self.joint,
                "credited": list(self.credited()), "evidence": [e.to_json() for e in self.evidence]}


def candidates(cfg: ModelConfig, expected=()) -> tuple:
    """The bugs a violation under cfg may be attributed to: every known bug cfg contains, but a setting (a fault or
    configuration, which cuts any path through it) only where the preset expects it."""
    return tuple(b for b in present(cfg) if b.kind != "setting" or b.id in expected)


def _try(cfg, bugs, actions, invariant, start) -> Evidence:
    try:
        fixed = with_fix(cfg, bugs)
    except ConfigError:
        return Evidence(tuple(b.id for b in bugs), INVALID)
    outcome, step = replay_outcome(fixed, actions, invariant, start)
    return Evidence(tuple(b.id for b in bugs), {"fails": PERSISTS, "holds": REMOVED, "cut": CUT}[outcome], step)


def attribute(cfg: ModelConfig, actions, invariant: str, step: int | None = None, start: dict | None = None,
              expected=()) -> Attribution:
    """Attribute the violation of ``invariant`` on ``actions`` (cfg, ``start``) to the known bugs whose fixes
    remove it.  ``expected``: the preset's expected bug ids (which admits settings as candidates)."""
    actions = list(actions)
    step = len(actions) if step is None else step
    cands = candidates(cfg, expected)
    evidence = [_try(cfg, (b,), actions, invariant, start) for b in cands]
    single = tuple(e.fixes[0] for e in evidence if e.outcome in (REMOVED, CUT))
    if single or len(cands) < 2:
        return Attribution(invariant, step, single, False, tuple(evidence))
    together = _try(cfg, cands, actions, invariant, start)
    evidence.append(together)
    if together.outcome not in (REMOVED, CUT):
        return Attribution(invariant, step, (), False, tuple(evidence))
    keep = list(cands)                        # the smallest set that still removes it, dropping one at a time
    for b in list(cands):
        rest = [c for c in keep if c is not b]
        e = _try(cfg, rest, actions, invariant, start)
        if e.outcome in (REMOVED, CUT):
            keep, together = rest, e
    if together.fixes != tuple(b.id for b in cands):
        evidence.append(together)
    return Attribution(invariant, step, tuple(b.id for b in keep), True, tuple(evidence))


def same_attribution(cfg: ModelConfig, a: Attribution, start: dict | None = None, expected=()):
    """keep(candidate) for the shrinker: a smaller trace must stay the same finding.  An attributed violation keeps
    every named bug's fix removing it (jointly, for a joint one); an unexpected one stays unexplained by any fix."""
    if a.bugs:
        groups = [(BUGS[b],) for b in a.bugs] if not a.joint else [tuple(BUGS[b] for b in a.bugs)]

        def keep(actions) -> bool:
            return all(_try(cfg, g, actions, a.invariant, start).outcome in (REMOVED, CUT) for g in groups)
        return keep

    def keep_unexplained(actions) -> bool:
        return not attribute(cfg, actions, a.invariant, start=start, expected=expected).bugs
    return keep_unexplained


# --------------------------------------------------------------------------- a preset's result
def classify(preset, a: Attribution) -> tuple[str, tuple]:
    """("found", bugs) for a violation that is one of the preset's expected bugs, ("known", bugs) for another known
    bug its configuration contains, ("unexpected", ()) for anything else: no fix removes it, or the bugs whose fix
    does are not known to break this invariant."""
    credited = a.credited()
    if not credited:
        return "unexpected", ()
    found = tuple(b for b in credited if b in preset.bugs)
    return ("found", found) if found else ("known", credited)


def preset_result(preset, attributions) -> dict:
    """The three lists of a preset's result: bugs found, bugs not found, unexpected violations (and the other known
    bugs seen), with its verdict: "as expected" only when every expected bug was found and nothing unexpected."""
    found, known, unexpected = [], [], []
    for a in attributions:
        kind, bugs = classify(preset, a)
        if kind == "unexpected":
            unexpected.append(a.to_json())
        for b in bugs:
            (found if kind == "found" else known).append(b)
    found = [b for b in preset.bugs if b in found]
    not_found = [b for b in preset.bugs if b not in found]
    verdict = "UNEXPECTED" if unexpected else "not found" if not_found else "as expected"
    return {"found": found, "not_found": not_found, "unexpected": unexpected,
            "known": sorted(set(known)), "verdict": verdict}


def shrink_attributed(cfg: ModelConfig, actions, invariant: str, expected=(), start: dict | None = None,
                      first: Attribution | None = None, **shrink_kw):
    """(ShrinkResult, Attribution): attribute the violating run (or take ``first``, its attribution already made),
    then shrink it keeping that attribution (so a trace of one bug never shrinks into another's), then attribute
    the shrunk trace; ``shrink_kw`` go to ``shrink``."""
    from .shrink import shrink

    outcome, step = replay_outcome(cfg, actions, invariant, start)
    prefix = list(actions)[:step] if outcome == "fails" else list(actions)
    if first is None:
        first = attribute(cfg, prefix, invariant, start=start, expected=expected)
    sr = shrink(cfg, prefix, invariant, start=start, keep=same_attribution(cfg, first, start, expected), **shrink_kw)
    return sr, attribute(cfg, sr.actions, invariant, start=start, expected=expected)


class KnownBugs:
    """The explorer's judge: attributes each violation it meets and passes known bugs', so none hides another."""

    # Per violation, not per invariant as ``go_on_past`` is: the invariants the known bugs break overlap (a dozen
    # break committed_prefix), so passing an invariant for good once a known bug broke it would hide every later
    # violation of it, the preset's own bug's or a new one's.  The engine stops checking an invariant only below the
    # state where it failed and was passed, and asks again wherever it first fails on another path; those states are
    # few next to the search's (the command prints how many, and the seconds their attribution took), each attributed
    # once by a replay of its trace per known bug present.  It stops at a violation no known fix explains, and at the
    # preset's own bugs once all are found (the search's goal).

    def __init__(self, p, cfg):
        self.p, self.cfg = p, cfg
        self.memo: dict = {}
        #: (invariant, kind, bugs) -> (actions, facts): the shortest violation passed with each classification
        #: (``classify``: "found" or "known", and the bugs credited)
        self.passed: dict = {}
        self.found: set = set()
        self.made = 0
        self.seconds = 0.0
        #: in a ladder of small scopes: the bounds of the scope this judge judged
        self.scope = None

    def attribution(self, name: str, actions):
        """The attribution of a violation of ``name`` on ``actions``, each trace attributed once."""
        import time

        key = (name, tuple(actions))
        a = self.memo.get(key)
        if a is None:
            t0 = time.perf_counter()
            a = self.memo[key] = attribute(self.cfg, actions, name, expected=self.p.bugs)
            self.seconds += time.perf_counter() - t0
            self.made += 1
        return a

    def __call__(self, name: str, facts, actions) -> bool:
        """True (go on past it) for a known bug's violation, the preset's own too until all of them are found."""
        a = self.attribution(name, actions)
        kind, bugs = classify(self.p, a)
        if kind == "unexpected":
            return False
        if kind == "found":
            self.found.update(bugs)
            if set(self.p.bugs) <= self.found:
                return False   # every bug the preset expects is found: this one ends the search
        k = (name, kind, bugs)   # one per invariant and credited bugs (those known to break it), as classify says
        old = self.passed.get(k)
        if old is None or len(actions) < len(old[0]):
            self.passed[k] = (list(actions), facts)
        return True


class ScopeJudges:
    """``judge_for`` of a ladder of small scopes (``properties.scopes.search_scopes``): a ``KnownBugs`` per scope, in
    order (``made``), the preset's bugs found in an earlier scope staying found in the later ones."""

    def __init__(self, p):
        self.p = p
        self.made: list = []

    def __call__(self, scfg) -> KnownBugs:
        j = KnownBugs(self.p, scfg)
        if self.made:
            j.found = self.made[-1].found
        self.made.append(j)
        return j
