"""Driving the executable model on a schedule: the bridge every cross-check uses.

``Driver`` applies actions with the model's own ``step`` (an action that is not enabled is an
error), lets logical time pass with ``Tick`` while running every scheduled task when it falls due,
and can hold chosen runs of a broker's isr-expiration task until a later instant inside the
``scheduler_jitter_ms`` window (that is how a z3 schedule with late runs is replayed).
"""

from __future__ import annotations

from ..model import actions as A
from ..model.config import ModelConfig
from ..model.step import enabled_actions, initial_state, step, tick_limit

P = 0  # the one partition every spec is about
TASKS = frozenset({A.IsrExpiration, A.IsrChangePropagation, A.HighWatermarkCheckpoint, A.DelayedProduceExpire})


class ReplayError(AssertionError):
    """An action the z3 schedule needs is not enabled in the model (the schedule is not a model trace)."""


class Driver:
    """A model run under construction: the state, the actions so far, and held isr-expiration runs."""

    def __init__(self, cfg: ModelConfig):
        self.cfg = cfg
        self.s = initial_state(cfg)
        self.actions: list = []
        #: broker -> {due time: actual time} for isr-expiration runs to be delayed within the jitter.
        self.hold: dict[int, dict[int, int]] = {}
        #: brokers whose isr-expiration runs only when an explicit IsrExpiration action is applied.
        self.manual: set[int] = set()
        #: (time, broker removed) each time a follower left the leader's ISR.
        self.removals: list[tuple[int, int]] = []
        #: times at which an isr_change_notification znode was written.
        self.propagations: list[int] = []
        #: times of successful leader ISR writes (changes recorded for propagation).
        self.isr_changes: list[int] = []

    @property
    def now(self) -> int:
        return self.s.now

    def leader_isr(self, p: int = P) -> tuple:
        st = self.s.zk.partition_states[p]
        return () if st is None else st.isr

    def do(self, *actions) -> "Driver":
        for a in actions:
            s2 = step(self.cfg, self.s, a)
            if s2 is None:
                raise ReplayError(f"{A.describe(a)} is not enabled at time {self.s.now}")
            self._observe(self.s, s2)
            self.s = s2
            self.actions.append(a)
        return self

    def _observe(self, pre, post) -> None:
        z0, z1 = pre.zk.partition_states[P], post.zk.partition_states[P]
        if z0 is not None and z1 is not None and z0.isr != z1.isr and z0.leader_epoch == z1.leader_epoch:
            self.isr_changes.append(post.now)
            for b in sorted(set(z0.isr) - set(z1.isr)):
                self.removals.append((post.now, b))
        if len(post.zk.isr_change_notifications) > len(pre.zk.isr_change_notifications):
            self.propagations.append(post.now)

    # ------------------------------------------------------------------ set-up
    def deliver_all(self) -> "Driver":
        while True:
            ds = enabled_actions(self.cfg, self.s, {A.DeliverControlRequest})
            if not ds:
                return self
            self.do(ds[0])

    def up(self, controller: int = 2) -> "Driver":
        """Elect a controller, deliver every request (broker 0 leads epoch 0), and run each follower's
        first truncation round so its fetcher is Fetching."""
        self.do(A.ElectController(controller)).deliver_all()
        leader = self.s.zk.partition_states[P].leader
        return self.do(*(A.OffsetsForLeaderEpoch(f, P) for f in self.s.zk.assignment[P] if f != leader))

    def fetch(self, follower: int, times: int = 1) -> "Driver":
        for _ in range(times):
            self.do(A.FetchRequest(follower, P), A.FetchResponse(follower, P))
        return self

    # ------------------------------------------------------------------ time
    def _held_until(self, b: int) -> int | None:
        """The actual time broker b's next isr-expiration run is held until, if it is held."""
        return self.hold.get(b, {}).get(self.s.brokers[b].next_isr_expiration_ms)

    def due_tasks(self, include_held: bool) -> list:
        out = []
        for a in enabled_actions(self.cfg, self.s, TASKS):
            if type(a) is A.IsrExpiration:
                if a.broker in self.manual:
                    continue
                held = self._held_until(a.broker)
                if held is not None and (held > self.now or not include_held):
                    continue
            out.append(a)
        return out

    def run_due(self, include_held: bool = True) -> "Driver":
        """Run every task due now (held runs only once their instant has come, if include_held)."""
        while True:
            due = self.due_tasks(include_held)
            if not due:
                return self
            self.do(due[0])

    def run_held(self, broker: int) -> bool:
        """Run broker's isr-expiration now if it is held until exactly now; whether it ran."""
        held = self._held_until(broker)
        if held is not None and held == self.now and self.s.now >= self.s.brokers[broker].next_isr_expiration_ms:
            self.do(A.IsrExpiration(broker))
            return True
        return False

    def advance_to(self, t: int) -> "Driver":
        """Let time pass until t, running the tasks that fall due on the way (not those due at t itself)."""
        while self.now < t:
            self.run_due()
            target = t
            limit = tick_limit(self.cfg, self.s)
            if limit is not None:
                target = min(target, limit)
            for b in range(len(self.s.brokers)):
                if b in self.manual and self.s.brokers[b].alive:
                    target = min(target, self.s.brokers[b].next_isr_expiration_ms + self.cfg.scheduler_jitter_ms)
                held = self._held_until(b)
                if held is not None and held > self.now:
                    target = min(target, held)
            if target <= self.now:
                raise ReplayError(f"time cannot advance past {self.now} (tick limit {limit})")
            self.do(A.Tick(target - self.now))
        return self

    def next_event_time(self) -> int:
        """The next instant at which some task falls due (or a held run is released)."""
        times = []
        for br in self.s.brokers:
            if not br.alive:
                continue
            held = self._held_until(br.broker_id)
            times.append(held if held is not None else br.next_isr_expiration_ms)
            times.append(br.next_isr_propagation_ms)
            if br.hw_checkpoint_started:
                times.append(br.next_hw_checkpoint_ms)
        future = [t for t in times if t > self.now]
        return min(future) if future else self.now + 1
