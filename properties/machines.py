"""Hypothesis rule machines: a thin mutable shell over the pure model (STYLE guideline 8).

``machine_for(cfg)`` builds a ``RuleBasedStateMachine`` with one rule per action kind, each drawing an enabled action
of its kind and applying ``step``; one ``@invariant()`` checks the catalogue after every step, and a violation raises
an ``AssertionError`` subclass per invariant whose note carries the archive-format trace.  ``run_machine`` runs one
programmatically.  Rule frequency, ``focus``, the macro rules and how failures are told apart: properties/README.md,
"The Hypothesis rule machines".
"""

from __future__ import annotations

import json
import random
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity, seed as hypothesis_seed, settings as Settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from ..model import actions as A
from ..model.actions import describe
from ..model.config import ModelConfig
from ..model.state import Partition
from ..model.step import action_kinds, enabled_groups, initial_state, step
from ..model.trace import FORMAT, Trace, dumps_trace, model_version, trace_from_json
from .invariants import BY_NAME, CATALOGUE, Violation, check_state, check_transition, witnesses
from .settle import settle as settle_cluster
from .walker import Policy


class ActionNotEnabled(RuntimeError):
    """The shell applied an action that ``step`` refused: a bug in the machine, never a finding."""


class InvariantViolated(AssertionError):
    """An invariant failed in a machine run; ``violation`` and ``actions`` hold the data, a note the JSON trace."""

    invariant_name = ""

    def __init__(self, message: str, violation: Violation, actions: list):
        super().__init__(message)
        self.violation = violation
        self.actions = actions


class BudgetExhausted(BaseException):
    """Raised inside a rule when ``run_machine``'s wall-clock budget is spent (or its ``should_stop`` is True).

    A ``BaseException`` (like ``KeyboardInterrupt``) so that Hypothesis stops at once instead of
    treating it as a failure to shrink.  ``run_machine`` catches it.
    """


_VIOLATION_TYPES: dict[str, type] = {}


def violation_type(name: str) -> type:
    """The ``InvariantViolated`` subclass for ``name`` (``acked_durability`` -> ``AckedDurabilityViolated``)."""
    cls = _VIOLATION_TYPES.get(name)
    if cls is None:
        title = "".join(part.capitalize() for part in name.split("_")) or "Unnamed"
        cls = _VIOLATION_TYPES[name] = type(f"{title}Violated", (InvariantViolated,),
                                            {"invariant_name": name, "__module__": __name__})
    return cls


def rule_name(kind: type) -> str:
    """``ControllerProcessBrokerChange`` -> ``controller_process_broker_change``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", kind.__name__).lower()


_MODEL_VERSION = model_version()


def failure_trace(cfg: ModelConfig, violation: Violation, actions: list, provenance: dict | None = None,
                  preset: str | None = None) -> Trace:
    """The archive-format trace of a machine failure (what the exception note carries)."""
    return Trace(config=cfg, actions=list(actions), expect="violation", violated=violation.invariant,
                 preset=preset, provenance=dict(provenance or {"engine": "hypothesis"}),
                 violation=violation.to_json(), model_version=_MODEL_VERSION,
                 description=f"found by the Hypothesis machine: {violation.invariant} after {len(actions)} actions")


# --------------------------------------------------------------------------- focus
_CLIENT_KINDS = frozenset({A.Produce, A.ConsumerFetch})


def _client_request_matters(s, a) -> bool:
    """False for a client request whose only effect is an error bit in ``ghost.errors_seen``.

    A request to a broker that does not believe it leads the partition is answered
    NOT_LEADER_FOR_PARTITION (``replica_manager._leader_partition_or_error`` / ``fetch_messages``), and a
    consumer fetch from a leader whose HW is at its log start reads nothing.  A stale leader (one that
    still believes it leads) is kept: that is where the interesting answers come from.
    """
    br = s.brokers[a.broker]
    part = br.partitions[a.partition]
    log = br.logs[a.partition]
    if type(part) is not Partition or part.leader != a.broker or log is None:
        return False
    if type(a) is A.ConsumerFetch:
        return log.high_watermark > log.log_start_offset
    return True


# --------------------------------------------------------------------------- the shell
class ModelMachine(RuleBasedStateMachine):
    """The shell; ``machine_for`` subclasses it with a config (this class has none and cannot run)."""

    cfg: ModelConfig = None
    #: what the invariant checks (not ``invariants``: Hypothesis keeps its ``@invariant`` list under that name)
    checked_invariants: tuple = CATALOGUE
    #: leave out client requests that can only set an error bit (see ``_client_request_matters``)
    focus: bool = True
    #: header fields of the attached trace
    provenance: dict = {"engine": "hypothesis"}
    preset_name: str | None = None
    #: counters over every test case of this class (``new_stats``); the shell's bookkeeping, not model state
    stats: dict = None
    #: (violation, actions) of the most recent failing test case (the shrunk one, after a finished run)
    last_failure = None
    #: perf_counter() value after which rules raise BudgetExhausted (set by run_machine)
    deadline: float | None = None
    #: once a test case has failed, the deadline moves to at most this many seconds later (run_machine)
    shrink_budget_s: float | None = None
    #: a callable asked before every action; True raises BudgetExhausted (run_machine's ``should_stop``)
    should_stop = None
    #: set once a rule raised BudgetExhausted: every later rule call raises it too
    budget_hit: bool = False
    #: the liveness properties ``teardown`` checks by settling the cluster (``properties.settle``); () for none
    liveness: tuple = ()

    def __init__(self) -> None:
        super().__init__()
        cls = type(self)
        if cls.cfg is None:
            raise TypeError("ModelMachine has no config: build a machine class with machine_for(cfg)")
        self.state = initial_state(cls.cfg)
        self.pre = None          # the state before the last action (None before the first step)
        self.trace: list = []
        self._groups = None      # enabled actions of self.state by kind, computed on first use
        self._checked = -1       # number of steps whose transition has been checked
        cls.stats["examples"] += 1

    def __repr__(self) -> str:
        return f"{type(self).__name__}(now={self.state.now}, steps={len(self.trace)})"

    # ----------------------------------------------------------------- the pure model, behind the shell
    def enabled_by_kind(self) -> dict:
        """{kind: enabled actions of that kind, in ``enabled_actions`` order} for the current state."""
        groups = self._groups
        if groups is None:
            s, focus = self.state, self.focus
            groups = {}
            for g in enabled_groups(self.cfg, s):
                kind = type(g[0])
                if focus and kind in _CLIENT_KINDS:
                    g = [a for a in g if _client_request_matters(s, a)]
                if g:
                    groups[kind] = tuple(g)
            self._groups = groups
        return groups

    def apply(self, a) -> None:
        """``self.state = step(cfg, self.state, a)``; ``self.trace.append(a)``."""
        cls = type(self)
        if cls.budget_hit or (cls.deadline is not None and time.perf_counter() > cls.deadline) or \
                (cls.should_stop is not None and cls.should_stop()):
            cls.budget_hit = True
            raise BudgetExhausted()
        stats = cls.stats
        stats["rule_calls"] += 1
        post = step(self.cfg, self.state, a)
        if post is None:
            stats["not_enabled"] += 1
            raise ActionNotEnabled(f"{describe(a)} is not enabled at time {self.state.now} ms")
        self.pre, self.state = self.state, post
        self.trace.append(a)
        self._groups = None
        stats["steps"] += 1
        stats["errors_seen"] |= post.ghost.errors_seen
        kinds = stats["kinds"]
        name = type(a).__name__
        kinds[name] = kinds.get(name, 0) + 1

    # ----------------------------------------------------------------- the single invariant
    @invariant()
    def catalogue_holds(self) -> None:
        """Every checked invariant holds on the initial state / on the last transition."""
        n = len(self.trace)
        if n == self._checked:
            return
        self._checked = n
        if n == 0:
            found = check_state(self.cfg, self.state, 0, self.checked_invariants)
        else:
            found = check_transition(self.cfg, self.pre, self.trace[-1], self.state, n, self.checked_invariants,
                                     incremental=True)
        stats = type(self).stats
        if stats["track_witnesses"]:
            stats["witnesses"] |= witnesses(self.cfg, self.state)
        if found:
            self._fail(found)

    def teardown(self) -> None:
        """Settle-and-check: a test case that passed its steps fails if the cluster then does not settle."""
        if self.liveness and not getattr(self, "_failed", False) and not type(self).budget_hit:
            r = settle_cluster(self.cfg, self.state, len(self.trace), self.liveness)
            if r.violations:
                self.trace.extend(r.actions)
                self._fail(r.violations)

    def _fail(self, found: list) -> None:
        cls = type(self)
        self._failed = True
        v = found[0]
        actions = list(self.trace)
        where = f"after step {v.step}, {describe(actions[-1])}" if actions else "in the initial state"
        inv = BY_NAME.get(v.invariant)
        others = [x.invariant for x in found[1:]]
        message = (f"invariant {v.invariant} violated {where}: {json.dumps(v.facts, sort_keys=True, default=str)}"
                   + (f" ({inv.statement})" if inv is not None else "")
                   + (f"; also violated: {', '.join(others)}" if others else ""))
        e = violation_type(v.invariant)(message, v, actions)
        e.add_note(f"isrlab trace of {len(actions)} actions follows; save it as FILE.json and run "
                   f"`isrlab replay FILE.json`")
        e.add_note(dumps_trace(failure_trace(self.cfg, v, actions, cls.provenance, cls.preset_name)).rstrip("\n"))
        stats = cls.stats
        stats["failures"] += 1
        if stats["first_failure_at"] is None:
            now = stats["first_failure_at"] = time.perf_counter()
            if cls.shrink_budget_s is not None:
                end = now + cls.shrink_budget_s
                cls.deadline = end if cls.deadline is None else min(cls.deadline, end)
        best = stats["best_failure"]
        if best is None or len(actions) < len(best[1]):
            stats["best_failure"] = (v, actions)
        cls.last_failure = (v, actions)
        raise e


def _kind_rule(kind: type):
    """The ``@rule`` for ``kind``: precondition 'an action of this kind is enabled', then draw one and step."""
    name = rule_name(kind)

    def enabled(self) -> bool:
        return kind in self.enabled_by_kind()

    enabled.__name__ = f"{name}_enabled"
    enabled.__qualname__ = f"ModelMachine.{name}_enabled"

    def apply_kind(self, data) -> None:
        group = self.enabled_by_kind()[kind]
        self.apply(data.draw(st.sampled_from(group), label=name) if len(group) > 1 else group[0])

    apply_kind.__name__ = name
    apply_kind.__qualname__ = f"ModelMachine.{name}"
    apply_kind.__doc__ = f"Apply an enabled {kind.__name__}. {kind.__doc__}"
    return rule(data=st.data())(precondition(enabled)(apply_kind))


#: Kinds whose rules only a machine over a KIP-497 config has (``machine_for`` adds them): a machine over any
#: other config has exactly the rules, and so draws exactly the test cases, it had before AlterIsr existed.
ALTER_ISR_KINDS = (A.AlterIsrRequest, A.AlterIsrReceived, A.AlterIsrResponse)
#: Likewise the observations ListOffsets and the KIP-392 consumer fetch, only over a config that asks for them
#: (``list_offsets``, ``fetch_from_follower``; as ``enabled_actions``).
OBSERVATION_KINDS = (A.ListOffsets, A.ConsumerFetchWithClientMetadata)

#: Likewise the two halves of an OffsetsForLeaderEpoch round, only over a config that splits it
#: (``offsets_for_leader_epoch_in_flight``).
EPOCH_ROUND_KINDS = (A.OffsetsForLeaderEpochRequest, A.OffsetsForLeaderEpochResponse)
#: Likewise KRaft's metadata replay, heartbeats, fencing and lost heartbeats, only over a KRaft config (``kip_500``).
KRAFT_KINDS = (A.MetadataApply, A.BrokerHeartbeat, A.FenceStaleBroker, A.HeartbeatsLost, A.ControlledShutdown,
               A.DiskWipe, A.ControllerFailover)
#: Likewise the ZooKeeper era's leader moves: the ControlledShutdown request and response, the admin's
#: preferred-replica election and its handling, the auto-leader-rebalance-task (``controlled_shutdown_enable``,
#: ``max_preferred_elections``, ``auto_leader_rebalance_enable``; ``ControlledShutdown`` is among KRAFT_KINDS).
LEADERSHIP_KINDS = (A.ControlledShutdownRequest, A.ControlledShutdownResponse, A.PreferredReplicaElection,
                    A.ControllerProcessPreferredReplicaElection, A.AutoLeaderRebalance, A.ElectLeaders)
#: the leadership kinds the control plane settles (the admin's request is not bookkeeping)
LEADERSHIP_SETTLE_KINDS = (A.ControllerProcessPreferredReplicaElection, A.ControlledShutdownRequest)
#: Likewise DeleteRecords and the retention task, only over a config with a budget for them (``max_delete_records``,
#: ``max_retention_runs``).
LOG_START_KINDS = (A.DeleteRecords, A.DeleteOldSegments)
#: Likewise topics at run time (model/topics.py), only over a config whose budgets offer them; the controller's
#: topic events then also settle with the control plane.
TOPIC_KINDS = (A.DeleteTopic, A.CreateTopic, A.CreatePartitions, A.ControllerProcessTopicDeletion,
               A.ControllerProcessTopicChange, A.ControllerProcessStopReplicaResponse)
TOPIC_SETTLE_KINDS = (A.ControllerProcessTopicDeletion, A.ControllerProcessTopicChange,
                      A.ControllerProcessStopReplicaResponse)
#: Likewise the fetch purgatory's kinds, only over a config that asks for them (``delayed_fetch``).
DELAYED_FETCH_KINDS = (A.ConsumerFetchWait, A.DelayedFetchExpire)
#: Likewise partition reassignment, only over a config with a reassignment budget (``max_reassignments``).
REASSIGNMENT_KINDS = (A.ReassignPartitions, A.ControllerProcessPartitionReassignment,
                      A.ControllerProcessReassignmentIsrChange)
#: Likewise the second half of a split ISR expansion, only over a config that splits it (``isr_expand_window``).
EXPAND_WINDOW_KINDS = (A.PrepareIsrExpand,)
#: Likewise the AlterIsr fault, only over a config with a budget for it (``max_alter_isr_failures``).
ALTER_ISR_FAULT_KINDS = (A.AlterIsrFailed,)
#: Likewise a request of a broker's earlier incarnation reaching its receiver, only over a KRaft config.
ORPHAN_KINDS = (A.OrphanRequestReceived,)
#: Likewise KRaft's request faults, only over a config with a budget for them (``max_forged_alter_partitions``,
#: ``max_expired_heartbeats``).
REQUEST_FAULT_KINDS = (A.AlterPartitionReceived, A.ExpiredBrokerHeartbeat)
#: Likewise an admin's change of the topic's unclean.leader.election.enable, only over a config with a budget for it
#: (``max_config_changes``).
CONFIG_KINDS = (A.AlterTopicConfig,)
#: Likewise log directories (KIP-858), only over a KRaft config with them (``log_dirs``, ``max_log_dir_failures``).
JBOD_KINDS = (A.LogDirFailure, A.AssignReplicasToDirs)
GATED_KINDS = (ALTER_ISR_KINDS + OBSERVATION_KINDS + EPOCH_ROUND_KINDS + KRAFT_KINDS + LEADERSHIP_KINDS + LOG_START_KINDS
               + TOPIC_KINDS + DELAYED_FETCH_KINDS + REASSIGNMENT_KINDS + EXPAND_WINDOW_KINDS + ALTER_ISR_FAULT_KINDS
               + ORPHAN_KINDS + REQUEST_FAULT_KINDS + CONFIG_KINDS + JBOD_KINDS)

for _kind in A.ACTION_TYPES:
    if _kind not in GATED_KINDS:
        setattr(ModelMachine, rule_name(_kind), _kind_rule(_kind))
del _kind


def rule_kinds(cfg: ModelConfig) -> tuple:
    """The action kinds a machine over ``cfg`` has a one-kind rule for: the AlterIsr and observation kinds only
    if the model offers them under ``cfg`` (``model.step.action_kinds``), every other kind always."""
    offered = action_kinds(cfg)
    return tuple(k for k in A.ACTION_TYPES if k not in GATED_KINDS or k in offered)


#: The control plane's bookkeeping, which ``settle_control_plane`` runs to quiescence (with KIP-497 also the
#: AlterIsr requests and their responses: ``SettlingMachine.settle_kinds``).
SETTLE_KINDS = (A.ControllerProcessBrokerChange, A.ControllerProcessIsrChangeNotification, A.DeliverControlRequest)
#: At most this many steps per settle_control_plane call (a bound, in case requests keep coming).
SETTLE_LIMIT = 40


class SettlingMachine(ModelMachine):
    """The shell plus one macro rule, ``settle_control_plane`` (``machine_for(..., settle=True)``)."""

    settle_kinds: tuple = SETTLE_KINDS

    def settle_enabled(self) -> bool:
        groups = self.enabled_by_kind()
        return any(k in groups for k in self.settle_kinds)

    @rule()
    @precondition(settle_enabled)
    def settle_control_plane(self) -> None:
        """The controller handles its pending events and every queued request is delivered, one checked step each.

        A macro of the one-kind rules, in ``enabled_actions`` order, until none of ``SETTLE_KINDS`` is
        enabled: one rule call reaches the state where the control plane has caught up, so that a test
        case spends its steps on produce, fetch, faults and time.  The one-kind rules stay, so every
        delay of a control request is still reachable.
        """
        for _ in range(SETTLE_LIMIT):
            groups = self.enabled_by_kind()
            a = next((groups[k][0] for k in self.settle_kinds if k in groups), None)
            if a is None:
                return
            self.apply(a)
            self.catalogue_holds()


#: At most this many steps per swarm_walk call.
SWARM_STEPS = 40


@rule(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, SWARM_STEPS))
def swarm_walk(self, seed: int, steps: int) -> None:
    """Up to ``steps`` actions chosen by the seeded walker's swarm policy from ``seed``, one checked step each.

    A macro of the one-kind rules (``machine_for(..., swarm=True)``): ``walker.Policy`` draws a subset of
    the action kinds, eager reactions of the controller and fetchers, and slow brokers, and walks with
    them, so that one rule call goes as far as a short seeded walk while Hypothesis still chooses (and
    shrinks) the seed, the length and everything around it.
    """
    policy = Policy(self.cfg, random.Random(seed))
    a = None
    for _ in range(steps):
        groups = enabled_groups(self.cfg, self.state, policy.kinds)
        if not groups:
            return
        a = policy.choose(groups, self.state, a)
        self.apply(a)
        self.catalogue_holds()


def new_stats(track_witnesses: bool = True) -> dict:
    """Counters a machine class accumulates over its test cases."""
    return {"examples": 0, "rule_calls": 0, "steps": 0, "not_enabled": 0, "kinds": {}, "failures": 0,
            "first_failure_at": None, "best_failure": None, "witnesses": frozenset(), "errors_seen": 0,
            "track_witnesses": track_witnesses}


def machine_for(cfg: ModelConfig, invariants=CATALOGUE, *, name: str = "IsrMachine", focus: bool = True,
                track_witnesses: bool = True, provenance: dict | None = None, preset: str | None = None,
                settle: bool = False, swarm: bool = False, liveness=()) -> type:
    """A fresh ``RuleBasedStateMachine`` class over ``cfg`` checking ``invariants`` after every step.

    Parameters
    ----------
    cfg : ModelConfig
        The configuration the model runs under, e.g. ``preset("kafka-2.4").config``.
    invariants : sequence of Invariant
        What the single ``@invariant()`` checks (default: the whole catalogue; ``sometimes``
        witnesses in it are recorded, not checked).
    name : str
        The class name (Hypothesis prints it in falsifying examples).
    focus : bool
        Leave out client requests whose only effect is an error bit (properties/README.md, "The Hypothesis
        rule machines"); ``False`` offers every enabled action.
    track_witnesses : bool
        Record the ``sometimes`` witnesses reached, in ``Machine.stats["witnesses"]``.
    provenance : dict, optional
        The attached trace's provenance (default ``{"engine": "hypothesis"}``).
    preset : str, optional
        The preset name to record in the attached trace (when ``cfg`` is that preset's config).
    settle : bool
        Add the macro rule ``settle_control_plane`` (``SettlingMachine``).
    swarm : bool
        Add the macro rule ``swarm_walk`` (a short walk under the seeded walker's swarm policy).
    liveness : tuple of str
        Liveness properties checked when a test case ends (``teardown``): the cluster is settled
        (``properties.settle``) and a property still pending fails the test case with the settling steps.

    Returns
    -------
    type
        A subclass of ``ModelMachine``.  ``Machine.TestCase`` is a ``unittest.TestCase`` for pytest
        (run under the loaded settings profile); ``Machine.stats`` counts test cases, rule calls,
        steps, action kinds and failures over all its runs.

    Examples
    --------
    >>> from isrlab.model.config import preset
    >>> TestKafka24 = machine_for(preset("kafka-2.4").config).TestCase  # doctest: +SKIP
    """
    invariants = tuple(invariants)
    if invariants == CATALOGUE:
        invariants = CATALOGUE  # the identical tuple, whose check plan (invariants._plans) is built once
    attrs = {"cfg": cfg, "checked_invariants": invariants, "focus": focus, "stats": new_stats(track_witnesses),
             "provenance": dict(provenance or {"engine": "hypothesis"}), "preset_name": preset,
             "last_failure": None, "deadline": None, "shrink_budget_s": None, "should_stop": None,
             "budget_hit": False, "liveness": tuple(liveness), "__module__": __name__}
    if swarm:
        attrs["swarm_walk"] = swarm_walk
    extra = tuple(k for k in rule_kinds(cfg) if k in ALTER_ISR_KINDS)
    if extra:
        for kind in extra:
            attrs[rule_name(kind)] = _kind_rule(kind)
        attrs["settle_kinds"] = SETTLE_KINDS + extra
    for kind in rule_kinds(cfg):
        if kind in OBSERVATION_KINDS or kind in EPOCH_ROUND_KINDS or kind in KRAFT_KINDS or kind in LEADERSHIP_KINDS \
                or kind in LOG_START_KINDS or kind in TOPIC_KINDS or kind in DELAYED_FETCH_KINDS or kind in REASSIGNMENT_KINDS \
                or kind in EXPAND_WINDOW_KINDS or kind in ALTER_ISR_FAULT_KINDS or kind in ORPHAN_KINDS \
                or kind in REQUEST_FAULT_KINDS or kind in CONFIG_KINDS or kind in JBOD_KINDS:
            attrs[rule_name(kind)] = _kind_rule(kind)
    settle_more = tuple(k for k in LEADERSHIP_SETTLE_KINDS + TOPIC_SETTLE_KINDS if k in rule_kinds(cfg))
    if settle_more:
        attrs["settle_kinds"] = attrs.get("settle_kinds", SETTLE_KINDS) + settle_more
    if any(k in KRAFT_KINDS for k in rule_kinds(cfg)):
        # KRaft's control plane settles by replaying the metadata log (the ZooKeeper-era kinds are never enabled)
        attrs["settle_kinds"] = attrs.get("settle_kinds", SETTLE_KINDS) + (A.MetadataApply,)
    return type(name, (SettlingMachine if settle else ModelMachine,), attrs)


# --------------------------------------------------------------------------- programmatic runs
def trace_from_exception(e: BaseException) -> Trace | None:
    """The archive-format trace a machine failure carries as a note (None if there is none)."""
    for note in getattr(e, "__notes__", ()):
        if note.startswith("{"):
            try:
                data = json.loads(note)
            except ValueError:
                continue
            if isinstance(data, dict) and data.get("format") == FORMAT:
                return trace_from_json(data)
    return None


def _caused_by_budget(e: BaseException, deadline: float | None = None, hit: bool = False) -> bool:
    """BudgetExhausted itself, or an error Hypothesis raised while handling it or once it was due.

    Interrupting a test case mid-draw can make Hypothesis's choice tree see an inconsistent test case
    and raise ``FlakyStrategyDefinition``, usually with the ``BudgetExhausted`` as its context: every
    cause, context and exception-group member is searched.  A ``Flaky`` error raised after
    ``deadline`` counts too, even without that link: past the deadline every rule call raises
    ``BudgetExhausted``, so a replayed test case stops earlier than its first run did (seen once in a
    benchmark run, ``The second run stopped drawing earlier than the first run``).  ``hit`` (a rule
    already raised ``BudgetExhausted``, e.g. for ``should_stop``) counts like a deadline passed.
    Before the deadline a Flaky error is a real inconsistency and propagates.
    """
    if isinstance(e, Flaky) and (hit or (deadline is not None and time.perf_counter() >= deadline)):
        return True
    seen = set()
    todo = [e]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        if isinstance(e, BudgetExhausted):
            return True
        seen.add(id(e))
        todo.extend((e.__cause__, e.__context__))
        if isinstance(e, BaseExceptionGroup):
            todo.extend(e.exceptions)
    return False


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
    """What ``run_machine`` found.  Unpacks as ``violation, actions = run_machine(...)``."""

    config: ModelConfig
    violation: Violation | None
    #: the failing actions as Hypothesis shrank them ([] when no test case failed)
    actions: list
    #: the exception of the final (shrunk) failing test case, with the JSON trace as a note
    error: InvariantViolated | None = None
    #: True when the budget stopped the run: generation ended early, or shrinking was cut short
    #: (then ``actions`` is the shortest failing test case seen so far)
    stopped_early: bool = False
    provenance: dict = field(default_factory=dict)
    examples: int = 0
    rule_calls: int = 0
    steps: int = 0
    failing_examples: int = 0
    seconds: float = 0.0
    #: seconds from the start to the first failing test case (None: none failed)
    seconds_to_find: float | None = None
    kinds: dict = field(default_factory=dict)
    witnesses: frozenset = frozenset()
    #: the error codes any applied action produced, as a bit set over ``model.errors.ERROR_BIT``
    errors_seen: int = 0

    def __iter__(self):
        return iter((self.violation, self.actions))

    @property
    def trace(self) -> Trace | None:
        """The failure as an archive-format trace: the attached note, if any (None when the run passed)."""
        if self.error is not None:
            found = trace_from_exception(self.error)
            if found is not None:
                return found
        if self.violation is None:
            return None
        return failure_trace(self.config, self.violation, self.actions, self.provenance)


@contextmanager
def _no_local_constants():
    """Hypothesis's generation without the literals it collects from loaded local modules, for this block.

    Hypothesis (6.131 on) mixes constants found in the source of every loaded non-installed module into
    its draws, so the run a seed gives depends on which modules happen to be imported (another test
    file, the CLI, a Spark worker's zip) and on whether the package is installed editable.  Programmatic
    runs must be reproducible from their seed alone (a campaign records it; ``--run-seed`` replays it),
    so ``run_machine`` draws only from Hypothesis's own global constants.  Uses a private hook
    (``providers._get_local_constants``); on a Hypothesis without it there is nothing to pin.
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
        hook, cache = providers._get_local_constants, providers.CONSTANTS_CACHE.cache
    except (ImportError, AttributeError):  # pragma: no cover - older Hypothesis: no local constants
        yield
        return
    cache.clear()
    providers._get_local_constants = Constants
    try:
        yield
    finally:
        providers._get_local_constants = hook
        cache.clear()


def run_settings(max_examples: int, stateful_step_count: int, *, shrink: bool = True) -> Settings:
    """Settings of one programmatic run: no database, quiet, one failure reported, no explain phase.

    Health checks about slow or large test cases are off: a long ``stateful_step_count`` (fuzz
    ``--max-steps``) is what was asked for, not a mistake to refuse.

    Built on Hypothesis's ``default`` profile, not on whichever profile is loaded, so that a seed gives
    the same run under pytest's profile, in a Spark executor and on the command line.
    """
    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    return Settings(parent=Settings.get_profile("default"), max_examples=max_examples,
                    stateful_step_count=stateful_step_count, deadline=None,
                    database=None, derandomize=False, report_multiple_bugs=False, print_blob=False,
                    phases=phases, verbosity=Verbosity.quiet,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much, HealthCheck.large_base_example])


def run_machine(cfg: ModelConfig, seed: int, max_examples: int = 100, stateful_step_count: int = 50,
                invariants=CATALOGUE, *, shrink: bool = True, time_budget_s: float | None = None,
                shrink_budget_s: float | None = None, focus: bool = True, preset: str | None = None,
                settle: bool = True, swarm: bool = True, should_stop=None, liveness=()) -> MachineRun:
    """Run the machine for ``cfg`` with Hypothesis seeded by ``seed``; return the first violation, shrunk.

    Parameters
    ----------
    cfg : ModelConfig
    seed : int
        Fixes Hypothesis's choices (``hypothesis.seed``).  With no example database the run repeats
        exactly for a given Hypothesis version and model; the JSON trace is what survives upgrades.
    max_examples, stateful_step_count : int
        Valid test cases to generate, and the number of steps in each.
    invariants : sequence of Invariant
    shrink : bool
        Let Hypothesis shrink the failure (default); ``False`` returns the first failing test case.
    time_budget_s : float, optional
        Wall-clock budget for the whole run.  When it is spent before any failure, the run stops
        and passes (``stopped_early``); when it is spent while shrinking, the shortest failing test
        case seen so far is returned (``stopped_early``).
    shrink_budget_s : float, optional
        Seconds Hypothesis may spend after the first failure (shrinking a stateful failure replays
        thousands of test cases); when spent, the shortest failure so far is returned.
    should_stop : callable, optional
        Asked before every action (a campaign's ``budget.Deadline``): once True, the run stops as for
        ``time_budget_s`` (within one action, plus Hypothesis's own bookkeeping), ``stopped_early`` set.
        Checking it draws nothing, so the test cases before the stop are those of an unbounded run.
    focus : bool
        See ``machine_for``.
    preset : str, optional
        Preset name recorded in the trace.
    settle : bool
        Add the macro rule ``settle_control_plane`` (default).
    swarm : bool
        Add the macro rule ``swarm_walk`` (default; both measured in benchmarks/RESULTS.md).
    liveness : tuple of str
        See ``machine_for`` (a campaign checks every liveness property).

    Returns
    -------
    MachineRun
        ``violation`` (None when no test case failed), ``actions`` (the failing trace, ``[]`` on a
        pass), ``trace`` (the attached archive-format trace), timings and counters.
    """
    provenance = {"engine": "hypothesis", "hypothesis_version": hypothesis.__version__, "seed": seed,
                  "max_examples": max_examples, "stateful_step_count": stateful_step_count, "focus": focus,
                  "settle": settle, "swarm": swarm}
    Machine = hypothesis_seed(seed)(machine_for(cfg, invariants, focus=focus, provenance=provenance, preset=preset,
                                                settle=settle, swarm=swarm, liveness=liveness))
    t0 = time.perf_counter()
    if time_budget_s is not None:
        Machine.deadline = t0 + time_budget_s
    Machine.shrink_budget_s = shrink_budget_s
    Machine.should_stop = should_stop
    error = None
    stopped = False
    try:
        with _no_local_constants():
            run_state_machine_as_test(Machine, settings=run_settings(max_examples, stateful_step_count, shrink=shrink))
    except BaseException as e:  # the budget and invariant failures are results; anything else propagates
        if _caused_by_budget(e, Machine.deadline, Machine.budget_hit):
            stopped = True
        else:
            error = _find_violation(e)
            if error is None:
                raise
    stopped = stopped or Machine.budget_hit
    seconds = time.perf_counter() - t0
    s = Machine.stats
    if error is not None:
        violation, actions = error.violation, list(error.actions)
    elif s["best_failure"] is not None:
        violation, actions = s["best_failure"][0], list(s["best_failure"][1])
    else:
        violation, actions = None, []
    found_at = s["first_failure_at"]
    return MachineRun(config=cfg, violation=violation, actions=actions, error=error, stopped_early=stopped,
                      provenance=provenance, examples=s["examples"], rule_calls=s["rule_calls"], steps=s["steps"],
                      failing_examples=s["failures"], seconds=seconds,
                      seconds_to_find=None if found_at is None else found_at - t0,
                      kinds=dict(s["kinds"]), witnesses=s["witnesses"], errors_seen=s["errors_seen"])
