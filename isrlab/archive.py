"""The counterexample archive: turn a failing run into a shrunk, explained, dated trace file, written once.

Shared by ``isrlab fuzz`` in-process and by the Spark campaign driver.  A file's
name ends with a digest of the trace's config and actions, so the same shrunk
counterexample is archived once however many runs or campaigns find it, and names
the invariant its actions break first on replay (not the one that was shrunk: two
invariants' shrinks may end on the same actions), so the same actions always get
the same name.
"""

from __future__ import annotations

import dataclasses

import datetime
import glob
import hashlib
import json
import os
from dataclasses import dataclass

from .model.actions import action_to_json
from .model.config import ModelConfig
from .model.trace import Trace, write_trace
from .properties.explain import sentence
from .model.step import initial_state, step
from .properties.invariants import LIVENESS_BY_NAME
from .properties.replay import replay
from .properties.settle import PERPETUAL, settle


def trace_digest(config: ModelConfig, actions, start: dict | None = None) -> str:
    """12 hex digits over the config, the start (if any) and the actions: the identity of a counterexample."""
    key = {"config": config.identity_json(), "actions": [action_to_json(a) for a in actions]}
    if start is not None:
        key["start"] = start
    return hashlib.blake2b(json.dumps(key, sort_keys=True).encode(), digest_size=6).hexdigest()


def first_broken(violations) -> str | None:
    """The invariant a replay breaks first: the earliest step, ties in the replay's own order (``replay.verdict``'s)."""
    return min(violations, key=lambda v: v.step).invariant if violations else None


def _first_broken_of(trace: Trace) -> str:
    """``counterexample``'s record of the invariant the trace breaks first, or a replay's answer when it has none."""
    known = trace.provenance.get("first_broken")
    if isinstance(known, str) and known:
        return known
    return first_broken(replay(trace, with_changes=False).violations) or trace.violated


def archive_name(trace: Trace) -> tuple[str, str]:
    """(file name, digest) of a trace: ``YYYY-MM-DD-<preset>-<invariant broken first on replay>-<digest>.json``."""
    digest = trace_digest(trace.config, trace.actions, trace.start)
    day = datetime.date.today().isoformat()
    return f"{day}-{trace.preset}-{_first_broken_of(trace)}-{digest}.json", digest


def archive_counterexample(out: str, preset_name: str, trace: Trace, keep_name: str | None = None) -> tuple[str, bool]:
    """Write the trace under out/ unless a file with the same digest is already there; (path, written).

    ``keep_name`` keeps a file's name when it moves between folders (``isrlab promote``).
    """
    digest = trace_digest(trace.config, trace.actions, trace.start)
    existing = sorted(glob.glob(os.path.join(glob.escape(out), f"*-{digest}.json")))
    if existing:
        return existing[0], False
    if keep_name and keep_name.endswith(f"-{digest}.json"):
        name = keep_name
    else:
        name, _ = archive_name(trace)
    path = os.path.join(out, name)
    trace.description = trace.description or f"found by isrlab fuzz --preset {preset_name}"
    # the replay command names the file as seen from where the command ran (campaigns/<id>/counterexamples/...), or
    # by its folder's name when that is outside it: never a machine's absolute path
    shown = os.path.relpath(path)
    if shown.startswith(os.pardir):
        shown = os.path.join(os.path.basename(os.path.normpath(out)), name)
    trace.provenance = dict(trace.provenance, replay=f"isrlab replay {shown}")
    write_trace(path, trace)
    return path, True


@dataclass
class Counterexample:
    """A shrunk failing trace, replayed and explained, ready to archive."""

    trace: Trace
    digest: str
    original_length: int
    shrunk_length: int
    shrink_seconds: float
    shrink_complete: bool


def counterexample(preset_name: str, config: ModelConfig, actions, invariant: str, provenance: dict,
                   original_length: int, shrink_seconds: float = 0.0, shrink_complete: bool = True,
                   start: dict | None = None) -> Counterexample:
    """Replay already-shrunk actions (from ``start``, model/start.py), attach the violation and its explanation.

    A liveness violation's actions are the run's (shrunk) prefix: the settling steps that follow it
    (``properties.settle``) are appended, up to the last one that is not the clock, a scheduled task or a fetch
    (``settle.PERPETUAL``: a stuck cluster only does those after it), and ``settle_from`` in the provenance
    says where they start.
    """
    actions = list(actions)
    provenance = dict(provenance, original_length=original_length, shrunk_length=len(actions))
    settled = None
    if invariant in LIVENESS_BY_NAME:
        s = initial_state(config, start)
        for a in actions:
            s = step(config, s, a)
        settled = settle(config, s, len(actions), (invariant,))
        provenance["settle_from"] = len(actions)
        tail = settled.actions
        cut = max((i + 1 for i, a in enumerate(tail) if type(a) not in PERPETUAL), default=0)
        for candidate in (actions + tail[:cut], actions + tail):
            trace = Trace(config=config, actions=candidate, expect="violation", violated=invariant,
                          preset=preset_name, provenance=provenance, start=start)
            result = replay(trace, with_changes=False)
            if any(x.invariant == invariant for x in result.violations):
                break
        found = next((x for x in settled.violations if x.invariant == invariant), None)
        if found is None:
            raise ValueError(f"the shrunk trace settles: {invariant} does not fail after it")
        # its facts are the settling phase's from the prefix; its step is where the archived actions replay to it
        replayed = next((x for x in result.violations if x.invariant == invariant), None)
        if replayed is not None:
            found = dataclasses.replace(found, step=replayed.step)
    else:
        trace = Trace(config=config, actions=actions, expect="violation", violated=invariant, preset=preset_name,
                      provenance=provenance, start=start)
        result = replay(trace, with_changes=False)
        found = next((x for x in result.violations if x.invariant == invariant), None)
        if found is None:
            raise ValueError(f"the shrunk trace does not replay to a violation of {invariant}")
    trace.violation = found.to_json()
    # the archive's file name: read from the replay above rather than replaying again (see archive_name)
    trace.provenance = dict(trace.provenance, first_broken=first_broken(result.violations) or invariant)
    trace.explanation = sentence(config, trace.actions, found, start)
    return Counterexample(trace, trace_digest(config, trace.actions, start), original_length, len(trace.actions),
                          shrink_seconds, shrink_complete)

