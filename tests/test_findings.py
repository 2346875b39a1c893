"""The findings pages' traces (docs/findings/): each still fails as recorded, is attributed to its finding by the
finding's fix, and holds with that fix on, in every preset that contains the finding."""

from __future__ import annotations

import glob
import os

import pytest

from isrlab.model.bugs import BUGS, with_fix
from isrlab.model.config import PRESETS
from isrlab.model.trace import load_trace
from isrlab.properties.attribution import attribute
from isrlab.properties.shrink import replay_outcome

pytestmark = pytest.mark.unit

FINDINGS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), os.pardir, "docs", "findings", "*.trace.json")))


def test_there_is_a_finding_trace():
    assert FINDINGS, "docs/findings holds no trace"


@pytest.mark.parametrize("path", FINDINGS, ids=os.path.basename)
def test_finding_trace_fails_and_its_fix_removes_it(path):
    t = load_trace(path)
    outcome, step = replay_outcome(t.config, t.actions, t.violated, t.start)
    assert (outcome, step) == ("fails", len(t.actions))
    a = attribute(t.config, t.actions, t.violated, start=t.start, expected=PRESETS[t.preset].bugs)
    assert a.bugs == ("pending-reset-race",), a.summary()
    assert replay_outcome(with_fix(t.config, [BUGS["pending-reset-race"]]), t.actions, t.violated, t.start)[0] == "holds"


def _cluster(cfg) -> tuple:
    """What a trace's actions name: brokers, partitions and where their replicas are."""
    return cfg.n_brokers, cfg.n_partitions, cfg.replication_factor, cfg.assignment_start_index


def _race_presets() -> list:
    """Every preset whose configuration has the race, on the cluster the race's trace runs on (a preset with other
    brokers or replicas, such as kraft-reassignment's RF 2, cannot run its actions)."""
    shape = _cluster(load_trace(FINDINGS[0]).config) if FINDINGS else None
    return sorted(n for n, p in PRESETS.items()
                  if BUGS["pending-reset-race"].present_in(p.config) and _cluster(p.config) == shape)


def test_the_race_presets_are_most_of_those_with_the_race():
    every = [n for n, p in PRESETS.items() if BUGS["pending-reset-race"].present_in(p.config)]
    assert len(_race_presets()) >= len(every) - 2 and "kafka-4.1" in _race_presets(), sorted(set(every) - set(_race_presets()))


@pytest.mark.parametrize("name", _race_presets())
def test_the_race_trace_fails_in_every_preset_that_contains_the_race(name):
    """The same actions break committed_prefix in every KRaft preset whose configuration has the race, release
    presets included, and hold in each with the race's fix."""
    t = load_trace(FINDINGS[0])
    cfg = PRESETS[name].config
    outcome, _ = replay_outcome(cfg, t.actions, "committed_prefix", t.start)
    if outcome == "cut":   # only where the leader's expansion is two steps (PrepareIsrExpand, KAFKA-15221 off): the
        assert cfg.isr_expand_window and not cfg.kafka_15221, name   # trace's fetch proposes nothing there
        return
    assert outcome == "fails"
    assert replay_outcome(with_fix(cfg, [BUGS["pending-reset-race"]]), t.actions, "committed_prefix", t.start)[0] == "holds"
