"""Shared fixtures.  The package under test is the installed ``isrlab`` (./run builds .venv with it)."""

from __future__ import annotations

import random

import pytest

from isrlab.model import actions as A
from isrlab.model.config import PRESETS, ModelConfig
from isrlab.model.step import enabled_actions, initial_state, step


def random_states(cfg: ModelConfig, seed: int, n_steps: int):
    """Yield (state, action, next state) along one seeded random walk of the model."""
    rng = random.Random(seed)
    s = initial_state(cfg)
    for _ in range(n_steps):
        acts = enabled_actions(cfg, s)
        if not acts:
            return
        kinds: dict = {}
        for a in acts:
            kinds.setdefault(type(a), []).append(a)
        group = list(kinds.values())[rng.randrange(len(kinds))]
        a = group[rng.randrange(len(group))]
        s2 = step(cfg, s, a)
        yield s, a, s2
        s = s2


def bring_up(cfg: ModelConfig):
    """The cluster after the first controller election and delivery of every queued control request."""
    s = step(cfg, initial_state(cfg), A.ElectController(0))
    while True:
        deliveries = [a for a in enabled_actions(cfg, s, {A.DeliverControlRequest})]
        if not deliveries:
            return s
        s = step(cfg, s, deliveries[0])


@pytest.fixture(params=sorted(PRESETS))
def preset_config(request) -> ModelConfig:
    return PRESETS[request.param].config
