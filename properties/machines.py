"""Hypothesis rule machines: a thin mutable shell over the pure model (STYLE guideline 8).

``machine_for(cfg)`` builds a ``RuleBasedStateMachine`` class whose only state is
the model's: ``self.state`` (a frozen ``ClusterState``), the previous state, and
the action list ``self.trace``.  Every rule does the same three things::

    a = <an enabled action of this rule's kind, drawn from the current state>
    self.state = step(cfg, self.state, a)
    self.trace.append(a)

There is one ``@rule`` per action kind (``model.actions.ACTION_TYPES``), named
after the kind in snake case (``FollowerFetch`` -> ``fetch_request`` ...), each
guarded by a named ``@precondition`` that the kind has an enabled action, so a
rule only ever applies an enabled action (``step`` returning ``None`` is a bug
in the shell and raises ``ActionNotEnabled``).

Rule frequency.  Hypothesis picks a rule uniformly among the rules whose
precondition holds, then the rule draws one of its kind's enabled actions.
That is exactly the seeded walker's "kind first, then action" chooser, so kinds
with many instances (produce and consumer fetches to every broker) do not crowd
out rare ones, and a rarely-enabled kind (``DelayedProduceExpire``,
``ControllerProcessIsrChangeNotification``) gets its full share whenever it is
enabled instead of being starved.  Faults are bounded by the config's budgets
(``max_crashes``, ``max_session_expirations``), not by weights.  On top of this
Hypothesis's own swarm testing (feature flags, drawn per test case) switches
random subsets of rules off for a whole test case, the same idea as the
walker's ``swarm_kinds``.

Checking.  A single ``@invariant()`` runs the catalogue: ``check_state`` on the
initial state, then ``check_transition(cfg, pre, a, post, step)`` once per step
(the shell keeps ``pre``).  A violation raises ``InvariantViolated`` (an
``AssertionError``; one subclass per invariant name, so that Hypothesis, which
tells failures apart by exception type and location, shrinks each invariant's
failure separately and never slides from one invariant to another).  Its
message names the invariant and its facts; its notes carry the archive-format
JSON trace (``model.trace.dumps_trace``), which ``trace_from_exception``
recovers and ``isrlab replay`` replays.

``run_machine(cfg, seed, ...)`` runs a machine programmatically with a fixed
seed and no example database, and returns the shrunk violation and its actions.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, seed as hypothesis_seed, settings as Settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from ..model import actions as A
from ..model.actions import describe
from ..model.config import ModelConfig
from ..model.state import Partition
from ..model.step import enabled_actions, initial_state, step
from ..model.trace import FORMAT, Trace, dumps_trace, trace_from_json
from .invariants import BY_NAME, CATALOGUE, Violation, check_state, check_transition, witnesses


class ActionNotEnabled(RuntimeError):
    """The shell applied an action that ``step`` refused: a bug in the machine, never a finding."""


class InvariantViolated(AssertionError):
    """An invariant failed in a machine run; ``violation`` and ``actions`` hold the data, a note the JSON trace."""

    invariant_name = ""

    def __init__(self, message: str, violation: Violation, actions: list):
        super().__init__(message)
        self.violation = violation
        self.actions = actions


_VIOLATION_TYPES: dict[str, type] = {}


def violation_type(name: str) -> type:
    """The ``InvariantViolated`` subclass for invariant ``name`` (``acked_durability`` -> ``AckedDurabilityViolated``)."""
    cls = _VIOLATION_TYPES.get(name)
    if cls is None:
        title = "".join(part.capitalize() for part in name.split("_")) or "Unnamed"
        cls = _VIOLATION_TYPES[name] = type(f"{title}Violated", (InvariantViolated,),
                                            {"invariant_name": name, "__module__": __name__})
    return cls


def rule_name(kind: type) -> str:
    """``ControllerProcessBrokerChange`` -> ``controller_process_broker_change``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", kind.__name__).lower()


# --------------------------------------------------------------------------- focus
_CLIENT_KINDS = frozenset({A.Produce, A.ConsumerFetch})


def _client_request_matters(s, a) -> bool:
    """False for a client request whose only effect is an error bit in ``ghost.errors_seen``.

    ``Produce`` and ``ConsumerFetch`` are enabled on every live broker from the first state on, but a
    request to a broker that does not believe it leads the partition is answered NOT_LEADER_FOR_PARTITION
    (``_leader_partition_or_error`` / ``fetch_messages``) and a consumer fetch from a leader whose HW is at
    its log start reads nothing.  Left in, these two always-enabled kinds take a large share of every
    test case before a controller exists (Hypothesis's mutator also copies runs of them), and the
    replication kinds, which need a controller, delivered LeaderAndIsr requests and a fetcher, starve.
    A stale leader (one that still believes it leads) is kept: that is where the interesting answers are.
    """
    br = s.brokers[a.broker]
    part = br.partitions[a.partition]
    if type(part) is not Partition or part.leader != a.broker or br.logs[a.partition] is None:
        return False
    if type(a) is A.ConsumerFetch:
        log = br.logs[a.partition]
        return log.high_watermark > log.log_start_offset
    return True


# --------------------------------------------------------------------------- the shell
class ModelMachine(RuleBasedStateMachine):
    """The shell; ``machine_for`` subclasses it with a config and an invariant set (this class has neither)."""

    #: set by ``machine_for``
    cfg: ModelConfig = None
    #: (not ``invariants``: Hypothesis keeps its own ``@invariant`` list under that name)
    checked_invariants: tuple = CATALOGUE
    #: drop client requests that can only set an error bit (see ``_client_request_matters``)
    focus: bool = True
    #: per-class counters over every test case run so far (see ``new_stats``).
    stats: dict = None

    def __init__(self) -> None:
        super().__init__()
        cls = type(self)
        if cls.cfg is None:
            raise TypeError("ModelMachine has no config: build a machine class with machine_for(cfg)")
        self.state = initial_state(cls.cfg)
        self.pre = None          # the state before the last action (None before the first step)
        self.trace: list = []
        self._groups = None      # enabled actions of self.state by kind (computed on first use)
        self._checked = -1       # number of steps whose transition the invariant has checked
        cls.stats["examples"] += 1

    def __repr__(self) -> str:
        return f"{type(self).__name__}(now={self.state.now}, steps={len(self.trace)})"

    # ----------------------------------------------------------------- the pure model, behind the shell
    def enabled_by_kind(self) -> dict:
        """{kind: (enabled actions of that kind, in enabled_actions order)} for the current state."""
        groups = self._groups
        if groups is None:
            grouped: dict = {}
            s = self.state
            focus = self.focus
            for a in enabled_actions(self.cfg, s):
                if focus and type(a) in _CLIENT_KINDS and not _client_request_matters(s, a):
                    continue
                grouped.setdefault(type(a), []).append(a)
            groups = self._groups = {k: tuple(v) for k, v in grouped.items()}
        return groups

    def apply(self, a) -> None:
        stats = type(self).stats
        stats["rule_calls"] += 1
        post = step(self.cfg, self.state, a)
        if post is None:
            stats["not_enabled"] += 1
            raise ActionNotEnabled(f"{describe(a)} is not enabled at time {self.state.now} ms")
        self.pre, self.state = self.state, post
        self.trace.append(a)
        self._groups = None
        stats["steps"] += 1
        kc = stats["kinds"]
        name = type(a).__name__
        kc[name] = kc.get(name, 0) + 1

    # ----------------------------------------------------------------- the single invariant
    @invariant()
    def catalogue_holds(self) -> None:
        n = len(self.trace)
        if n == self._checked:
            return
        self._checked = n
        if n == 0:
            found = check_state(self.cfg, self.state, 0, self.checked_invariants)
        else:
            found = check_transition(self.cfg, self.pre, self.trace[-1], self.state, n, self.checked_invariants)
        stats = type(self).stats
        if stats["track_witnesses"]:
            stats["witnesses"] |= witnesses(self.cfg, self.state)
        if found:
            self.fail(found)

    def fail(self, found: list) -> None:
        v = found[0]
        actions = list(self.trace)
        where = f"after step {v.step} ({describe(actions[-1])})" if actions else "in the initial state"
        others = [x.invariant for x in found[1:]]
        inv = BY_NAME.get(v.invariant)
        message = (f"invariant {v.invariant} violated {where}: "
                   f"{json.dumps(v.facts, sort_keys=True, default=str)}"
                   + (f" -- {inv.statement}" if inv is not None else "")
                   + (f" (also violated: {', '.join(others)})" if others else ""))
        trace = Trace(config=self.cfg, actions=actions, expect="violation", violated=v.invariant,
                      provenance={"engine": "hypothesis"}, violation=v.to_json(),
                      description=f"found by the Hypothesis machine: {v.invariant} after {len(actions)} actions")
        e = violation_type(v.invariant)(message, v, actions)
        e.add_note(f"isrlab trace ({len(actions)} actions; save the next note as FILE.json and run "
                   f"`isrlab replay FILE.json`):")
        e.add_note(dumps_trace(trace).rstrip("\n"))
        type(self).last_failure = (v, actions)
        raise e


def _kind_rule(kind: type):
    """One ``@rule`` for ``kind``: precondition 'some action of this kind is enabled', then draw one and step."""
    name = rule_name(kind)

    def enabled(self) -> bool:
        return kind in self.enabled_by_kind()

    enabled.__name__ = enabled.__qualname__ = f"{name}_enabled"

    def apply_kind(self, data) -> None:
        group = self.enabled_by_kind()[kind]
        a = group[0] if len(group) == 1 else data.draw(st.sampled_from(group), label=name)
        self.apply(a)

    apply_kind.__name__ = name
    apply_kind.__qualname__ = f"ModelMachine.{name}"
    apply_kind.__doc__ = f"Apply one enabled {kind.__name__}: {kind.__doc__}"
    return rule(data=st.data())(precondition(enabled)(apply_kind))


for _kind in A.ACTION_TYPES:
    setattr(ModelMachine, rule_name(_kind), _kind_rule(_kind))
del _kind


def new_stats(track_witnesses: bool = True) -> dict:
    """Counters a machine class accumulates over its test cases (mutable: the shell's bookkeeping)."""
    return {"examples": 0, "rule_calls": 0, "steps": 0, "not_enabled": 0, "kinds": {},
            "witnesses": frozenset(), "track_witnesses": track_witnesses}


def machine_for(cfg: ModelConfig, invariants=CATALOGUE, *, name: str | None = None,
                track_witnesses: bool = True, focus: bool = True) -> type:
    """A fresh ``RuleBasedStateMachine`` class over ``cfg`` checking ``invariants`` after every step.

    Parameters
    ----------
    cfg : ModelConfig
        The configuration the model runs under (e.g. ``preset("kafka-2.4").config``).
    invariants : sequence of Invariant
        What the single ``@invariant()`` checks (default: the whole catalogue).
    name : str, optional
        The class name (Hypothesis prints it in falsifying examples).
    track_witnesses : bool
        Record the ``sometimes`` witnesses reached, in ``Machine.stats["witnesses"]``.
    focus : bool
        Leave out client requests whose only effect is an error bit (requests to non-leaders, consumer
        fetches with nothing to read); ``False`` offers every enabled action.

    Returns
    -------
    type
        A subclass of ``ModelMachine``; ``Machine.TestCase`` is a unittest case for pytest, and
        ``Machine.stats`` counts test cases, rule calls, steps and action kinds over its runs.

    Examples
    --------
    >>> from isrlab.model.config import preset
    >>> TestKafka24 = machine_for(preset("kafka-2.4").config).TestCase  # doctest: +SKIP
    """
    invariants = tuple(invariants)
    if invariants == CATALOGUE:
        invariants = CATALOGUE  # identity lets check_state / check_transition take their fast path
    attrs = {"cfg": cfg, "checked_invariants": invariants, "focus": focus, "stats": new_stats(track_witnesses), "last_failure": None,
             "__module__": __name__}
    return type(name or "IsrMachine", (ModelMachine,), attrs)


# --------------------------------------------------------------------------- programmatic runs
def trace_from_exception(e: BaseException) -> Trace | None:
    """The archive-format trace attached as a note to an ``InvariantViolated`` (None if there is none)."""
    for note in getattr(e, "__notes__", ()):
        if note.startswith("{"):
            try:
                data = json.loads(note)
            except ValueError:
                continue
            if isinstance(data, dict) and data.get("format") == FORMAT:
                return trace_from_json(data)
    return None


def _find_violation(e: BaseException) -> InvariantViolated | None:
    if isinstance(e, InvariantViolated):
        return e
    if isinstance(e, BaseExceptionGroup):
        for sub in e.exceptions:
            found = _find_violation(sub)
            if found is not None:
                return found
    return None


@dataclass
class MachineRun:
    """What ``run_machine`` found; unpacks as ``violation, actions = run_machine(...)``."""

    violation: Violation | None
    actions: list
    error: InvariantViolated | None = None
    examples: int = 0
    rule_calls: int = 0
    steps: int = 0
    seconds: float = 0.0
    kinds: dict = field(default_factory=dict)
    witnesses: frozenset = frozenset()

    def __iter__(self):
        return iter((self.violation, self.actions))

    @property
    def trace(self) -> Trace | None:
        """The JSON trace attached to the failure (None when the run passed)."""
        return None if self.error is None else trace_from_exception(self.error)


def run_settings(max_examples: int, stateful_step_count: int, *, shrink: bool = True) -> Settings:
    """Settings for one programmatic run: no database, no explain phase, quiet, one bug reported."""
    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    return Settings(max_examples=max_examples, stateful_step_count=stateful_step_count, deadline=None,
                    database=None, derandomize=False, report_multiple_bugs=False, print_blob=False,
                    phases=phases, verbosity=Verbosity.quiet,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def run_machine(cfg: ModelConfig, seed: int, max_examples: int = 100, stateful_step_count: int = 50,
                invariants=CATALOGUE, *, shrink: bool = True, focus: bool = True) -> MachineRun:
    """Run the machine for ``cfg`` with Hypothesis seeded by ``seed``; return the (shrunk) first violation.

    Parameters
    ----------
    cfg : ModelConfig
    seed : int
        Fixes Hypothesis's choices (``hypothesis.seed``); with no example database the run is
        reproducible for a given Hypothesis version -- the archived JSON trace is what survives upgrades.
    max_examples, stateful_step_count : int
        Test cases to try, and the number of steps in each.
    invariants : sequence of Invariant
    shrink : bool
        Let Hypothesis shrink the failure (the default); ``False`` returns the first failing run as found.
    focus : bool
        See ``machine_for``.

    Returns
    -------
    MachineRun
        ``violation`` (None when every test case passed) and ``actions`` (the shrunk failing trace,
        ``[]`` on a pass), plus the attached ``trace``, the exception and counters.  Unpacks as
        ``violation, actions``.
    """
    Machine = hypothesis_seed(seed)(machine_for(cfg, invariants, name="IsrMachine", focus=focus))
    t0 = time.perf_counter()
    error = None
    try:
        run_state_machine_as_test(Machine, settings=run_settings(max_examples, stateful_step_count, shrink=shrink))
    except BaseException as e:  # noqa: BLE001 - anything but an invariant failure is re-raised below
        error = _find_violation(e)
        if error is None:
            raise
    seconds = time.perf_counter() - t0
    s = Machine.stats
    return MachineRun(violation=None if error is None else error.violation,
                      actions=[] if error is None else list(error.actions), error=error,
                      examples=s["examples"], rule_calls=s["rule_calls"], steps=s["steps"], seconds=seconds,
                      kinds=dict(s["kinds"]), witnesses=s["witnesses"])
