"""Wall-clock budgets for the engines: a ``Deadline`` the engine layer makes and passes down as ``should_stop``.

The model never reads a clock.  An engine's inner loop asks ``should_stop()`` once every
``CHECK_EVERY`` steps (states, candidates), so a run stops within one such stride of its deadline,
and everything it did before stopping is what an unbounded run of the same seed does: a check
draws nothing and changes nothing.  A result cut short says so (``stopped``/``stopped_early``).
"""

from __future__ import annotations

import time

#: Steps (states, transitions, replayed actions) between two checks of ``should_stop`` in an inner loop;
#: a power of two, so that the test is ``not n & CHECK_MASK``.
CHECK_EVERY = 256
CHECK_MASK = CHECK_EVERY - 1


class Deadline:
    """``Deadline(seconds)()`` is False until ``seconds`` have passed on ``clock``, then True for good.

    ``seconds=None`` never expires.  ``expired`` records whether it ever answered True, so that whoever
    made it can tell a run the budget stopped from one that finished.  ``clock`` is injectable for tests.
    """

    __slots__ = ("clock", "end", "expired")

    def __init__(self, seconds: float | None, clock=time.monotonic):
        self.clock = clock
        self.end = None if seconds is None else clock() + seconds
        self.expired = False

    def __call__(self) -> bool:
        if self.expired:
            return True
        if self.end is not None and self.clock() >= self.end:
            self.expired = True
        return self.expired

    def remaining(self) -> float | None:
        """Seconds left (0.0 once expired; None without an end)."""
        if self.end is None:
            return None
        return max(0.0, self.end - self.clock())


def either(*conditions):
    """One ``should_stop`` that is True when any of ``conditions`` is (``None`` entries ignored; None if none)."""
    conds = tuple(c for c in conditions if c is not None)
    if not conds:
        return None
    if len(conds) == 1:
        return conds[0]

    def should_stop() -> bool:
        return any(c() for c in conds)

    return should_stop
