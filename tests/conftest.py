"""Shared fixtures.  The package under test is the installed ``isrlab`` (./run builds .venv with it)."""

from __future__ import annotations

import os
import random

import pytest

from isrlab.model import actions as A
from isrlab.model.config import PRESETS, ModelConfig
from isrlab.model.step import enabled_actions, initial_state, step

if os.environ.get("ISRLAB_MUTANT"):
    # isrlab mutate --tests: the whole session runs under this mutant of the model's rules (isrlab.mutate)
    from isrlab.properties.mutants import install

    install(os.environ["ISRLAB_MUTANT"])


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


DEFAULT = ModelConfig()  # the kafka-2.4 preset: 3 brokers, one partition, RF 3


def drive(cfg: ModelConfig, s, *actions):
    """Apply each action with step, asserting it is enabled."""
    for a in actions:
        s2 = step(cfg, s, a)
        assert s2 is not None, f"{A.describe(a)} is not enabled"
        s = s2
    return s


def bring_up(cfg: ModelConfig = DEFAULT, controller: int = 0):
    """A controller elected on `controller` (epoch 1) and every queued control request delivered."""
    return deliver_all(cfg, drive(cfg, initial_state(cfg), A.ElectController(controller)))


def deliver_all(cfg: ModelConfig, s):
    """Every queued control request delivered, in enabled_actions order."""
    while True:
        deliveries = enabled_actions(cfg, s, {A.DeliverControlRequest})
        if not deliveries:
            return s
        s = drive(cfg, s, deliveries[0])


def ready(cfg: ModelConfig = DEFAULT, p: int = 0):
    """bring_up, then each follower's truncation round (KIP-101/279): followers are Fetching at offset 0."""
    s = bring_up(cfg)
    if cfg.truncation != "hw":
        leader = s.zk.partition_states[p].leader
        s = drive(cfg, s, *(A.OffsetsForLeaderEpoch(b, p) for b in s.zk.assignment[p] if b != leader))
    return s


def fetch_round(cfg: ModelConfig, s, follower: int, p: int = 0):
    """One fetch of `follower`: the request (the leader answers) and the response."""
    return drive(cfg, s, A.FetchRequest(follower, p), A.FetchResponse(follower, p))


def produce(cfg: ModelConfig, s, n: int, acks: int = 1, broker: int = 0, p: int = 0):
    """`n` single-record produce requests to `broker`."""
    for _ in range(n):
        s = drive(cfg, s, A.Produce(broker, p, acks))
    return s


@pytest.fixture(params=sorted(PRESETS))
def preset_config(request) -> ModelConfig:
    return PRESETS[request.param].config
