"""Properties of the transition system itself: purity, determinism, enumeration, serialisation."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest

from conftest import bring_up, random_states
from isrlab.model import actions as A
from isrlab.model.actions import ActionError, action_from_json, action_to_json
from isrlab.model.config import PRESETS, ConfigError, ModelConfig
from isrlab.model.encode import canonical_json, encode, fingerprint
from isrlab.model.state import Partition
from isrlab.model.step import NotEnabled, apply, enabled_actions, enabled_actions_reference, enabled_groups, initial_state, step

pytestmark = pytest.mark.unit

SMALL = ModelConfig(n_partitions=2)


def test_step_never_changes_its_input(preset_config):
    cfg = preset_config.replace(n_partitions=2)
    for seed in range(2):
        for s, a, s2 in random_states(cfg, seed, 250):
            before = canonical_json(s)
            again = step(cfg, s, a)
            assert canonical_json(s) == before, f"{a} changed its input state"
            assert canonical_json(again) == canonical_json(s2), f"{a} is not deterministic"



def _records(node, seen=None):
    """Every state record reachable from node (through fields, tuples and lists)."""
    from isrlab.model.node import Node

    seen = set() if seen is None else seen
    if isinstance(node, Node):
        if id(node) in seen:
            return
        seen.add(id(node))
        yield node
        for name in node._FIELDS:
            yield from _records(getattr(node, name), seen)
    elif isinstance(node, (tuple, list)):
        for x in node:
            yield from _records(x, seen)


def test_clone_copies_every_field_and_owns_the_token():
    """The generated _clone of each record class is a shallow copy of all its fields, owned by the new token."""
    classes = set()
    for s, _a, s2 in random_states(SMALL, 3, 300):
        for r in _records(s2):
            tok = object()
            c = r._clone(tok)
            assert type(c) is type(r) and c is not r and c._tok is tok
            assert c == r
            for name in r._FIELDS:
                assert getattr(c, name) is getattr(r, name), f"{type(r).__name__}.{name} was not shared"
            classes.add(type(r).__name__)
    assert {"ClusterState", "Broker", "Partition", "Replica", "Log", "FetchState", "ZooKeeper", "Controller",
            "Ghost"} <= classes


def test_enabled_actions_equals_the_guard_based_definition(preset_config):
    cfg = preset_config.replace(n_partitions=2)
    for seed in range(2):
        for s, _a, _s2 in random_states(cfg, seed, 250):
            assert enabled_actions(cfg, s) == enabled_actions_reference(cfg, s)


def test_enabled_groups_split_the_enabled_actions_by_kind(preset_config):
    """One non-empty group per enabled kind, in the documented order, restricted by ``kinds`` like the flat list."""
    cfg = preset_config
    some = {A.Produce, A.FetchRequest, A.BrokerCrash, A.Tick}
    for s, _a, _s2 in random_states(cfg, 3, 150):
        for kinds in (None, some):
            groups = enabled_groups(cfg, s, kinds)
            assert all(g and len({type(a) for a in g}) == 1 for g in groups)
            order = [A.ACTION_TYPES.index(type(g[0])) for g in groups]
            assert order == sorted(set(order))
            assert tuple(a for g in groups for a in g) == enabled_actions(cfg, s, kinds)


def test_every_enabled_action_steps_and_no_other_candidate_does():
    cfg = SMALL
    for s, _a, _s2 in random_states(cfg, 7, 200):
        enabled = set(enabled_actions(cfg, s))
        for a in enabled:
            assert step(cfg, s, a) is not None
        for a in (A.Tick(10**9), A.FetchResponse(0, 0), A.BrokerRestart(1), A.ZkReconnect(2)):
            if a not in enabled:
                assert step(cfg, s, a) is None


def test_not_enabled_action_is_an_error():
    s = initial_state(SMALL)
    assert step(SMALL, s, A.FetchRequest(1, 0)) is None
    with pytest.raises(NotEnabled, match="FetchRequest"):
        apply(SMALL, s, A.FetchRequest(1, 0))


def test_enabled_actions_order_is_documented_type_order():
    s = bring_up(SMALL)
    acts = enabled_actions(SMALL, s)
    order = [A.ACTION_TYPES.index(type(a)) for a in acts]
    assert order == sorted(order)
    produces = [a for a in acts if isinstance(a, A.Produce)]
    assert produces == sorted(produces, key=lambda a: (a.broker, a.partition, a.acks))


def test_kinds_filter_restricts_enumeration():
    s = bring_up(SMALL)
    only = enabled_actions(SMALL, s, {A.Produce, A.Tick})
    assert only and {type(a) for a in only} <= {A.Produce, A.Tick}
    assert only == tuple(a for a in enabled_actions(SMALL, s) if type(a) in (A.Produce, A.Tick))


def test_bring_up_elects_first_replica_as_leader_with_full_isr():
    s = bring_up(SMALL)
    for p, replicas in enumerate(s.zk.assignment):
        st = s.zk.partition_states[p]
        assert st.leader == replicas[0] and st.isr == tuple(sorted(replicas)) and st.leader_epoch == 0
        leader = s.brokers[replicas[0]].partitions[p]
        assert isinstance(leader, Partition) and leader.leader == replicas[0]


def test_pickle_round_trip_of_states_and_actions():
    for s, a, s2 in random_states(SMALL, 3, 200):
        assert pickle.loads(pickle.dumps(s2)) == s2
        assert fingerprint(pickle.loads(pickle.dumps(s2))) == fingerprint(s2)
        assert pickle.loads(pickle.dumps(a)) == a
    for cls in A.ACTION_TYPES:
        a = _example(cls)
        assert pickle.loads(pickle.dumps(a)) == a


def _example(cls):
    kwargs = {}
    for name, ftype in ((f, cls.__dataclass_fields__[f].type) for f in cls.__dataclass_fields__):
        kwargs[name] = True if ftype == "bool" else ("read_committed" if ftype == "str" else 1)
        if name == "replicas":      # ReassignPartitions: broker ids, comma-separated
            kwargs[name] = "1,0"
        if name == "election_type":  # ElectLeaders: the non-default one, so that it is written out
            kwargs[name] = "UNCLEAN"
        if name == "error":          # AlterIsrFailed: one of the answers it gives
            kwargs[name] = "UNKNOWN_SERVER_ERROR"
        if name == "api":            # OrphanRequestReceived: one of ApiKeys' names
            kwargs[name] = "FETCH"
        if name == "isr":            # AlterPartitionReceived: broker ids, comma-separated
            kwargs[name] = "0,1"
        if name == "leader_recovery_state":   # AlterPartitionReceived: the non-default one, KIP-704's
            kwargs[name] = "RECOVERING"
    return cls(**kwargs)


def test_action_json_round_trip_for_every_type():
    for cls in A.ACTION_TYPES:
        a = _example(cls)
        assert action_from_json(action_to_json(a)) == a


@pytest.mark.parametrize("bad, message", [
    ({"type": "Nope"}, "unknown action type"),
    ({"type": "Produce", "broker": 0, "partition": 0}, "missing field 'acks'"),
    ({"type": "Produce", "broker": "0", "partition": 0, "acks": 1}, "must be int"),
    ({"type": "BrokerCrash", "broker": 0, "clean": 1}, "must be bool"),
    ({"type": "Tick", "ms": 5, "extra": 1}, "unknown field"),
    ({"type": "ConsumerFetch", "broker": 0, "partition": 0, "isolation": "dirty"}, "isolation"),
    ({"type": "OrphanRequestReceived", "broker": 0, "api": "PRODUCE"}, "api must be one of"),
    ({"type": "AlterPartitionReceived", "broker": 0, "partition": 0, "broker_epoch": 0, "leader_epoch": 0,
      "partition_epoch": 0, "isr": "0,x"}, "isr must be broker ids"),
    ({"type": "AlterPartitionReceived", "broker": 0, "partition": 0, "broker_epoch": -1, "leader_epoch": 0,
      "partition_epoch": 0, "isr": "0"}, "broker_epoch must be >= 0"),
    ({"type": "AlterPartitionReceived", "broker": 0, "partition": 0, "broker_epoch": 0, "leader_epoch": 0,
      "partition_epoch": 0, "isr": "0", "leader_recovery_state": "LOST"}, "leader_recovery_state must be one of"),
    (["Tick"], "must be a JSON object"),
])
def test_malformed_actions_are_rejected(bad, message):
    with pytest.raises(ActionError, match=message):
        action_from_json(bad)


def test_fingerprint_distinguishes_states_and_is_stable_within_a_process():
    seen = {}
    for s, _a, s2 in random_states(SMALL, 11, 150):
        fp = fingerprint(s2)
        assert fp == fingerprint(s2)
        key = canonical_json(s2)
        assert seen.setdefault(fp, key) == key  # no collision between distinct encodings


_FINGERPRINT_SCRIPT = """
import random
from isrlab.model.config import preset
from isrlab.model.encode import fingerprint
from isrlab.properties.walker import walk
cfg = preset('kafka-2.4').config.replace(n_partitions=2)
r = walk(cfg, 12345, 300)
from isrlab.model.step import initial_state, step
s = initial_state(cfg)
for a in r.actions:
    s = step(cfg, s, a)
print(len(r.actions), fingerprint(s))
"""


def test_same_seed_same_trace_under_any_hash_seed():
    outs = set()
    for hash_seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        out = subprocess.run([sys.executable, "-c", _FINGERPRINT_SCRIPT], env=env, capture_output=True,
                             text=True, check=True)
        outs.add(out.stdout.strip())
    assert len(outs) == 1, outs


def test_config_round_trip_and_validation():
    for p in PRESETS.values():
        assert ModelConfig.from_json(p.config.to_json()) == p.config
    with pytest.raises(ConfigError, match="replication_factor"):
        ModelConfig(n_brokers=2, replication_factor=3)
    with pytest.raises(ConfigError, match="truncation"):
        ModelConfig(truncation="magic")
    with pytest.raises(ConfigError, match="unknown config field"):
        ModelConfig.from_json({"n_brokerz": 3})
    with pytest.raises(ConfigError, match="must be an integer"):
        ModelConfig.from_json({"n_brokers": "3"})


def test_encoding_is_plain_json_data():
    s = bring_up(SMALL)
    data = encode(s)
    assert isinstance(data, dict) and data["now"] == SMALL.start_time_ms
    assert canonical_json(s) == canonical_json(pickle.loads(pickle.dumps(s)))
