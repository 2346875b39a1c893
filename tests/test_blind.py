"""The engines are blind to presets: no engine reads a protocol flag, a fix or a Kafka setting of the config.

The engines (the walker and guided search, the Hypothesis machines, the shrinker, the profiles, the
budget and a campaign's unit of work) may read a config's cluster shape and the bounds that limit what
the model offers; everything else they learn from the model (``model.step.action_kinds``,
``enabled_groups``, ``step``) and the invariants.  Two checks: one over the engines' sources, one over
what the walker and the machine do when the config they are handed differs from the one the model runs.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

from isrlab.model.config import METADATA_VERSIONS, ModelConfig, TRUNCATION_MODES, preset

pytestmark = pytest.mark.props

ROOT = Path(__file__).resolve().parent.parent

#: The engine modules (properties/explore.py, the explorer, is checked by its own tests).
ENGINE_MODULES = ("properties/walker.py", "properties/machines.py", "properties/shrink.py", "properties/profiles.py",
                  "properties/budget.py", "properties/scopes.py", "isrlab/campaign.py")

#: What an engine may read from a config: the cluster's shape and the bounds on what the model offers.
SHAPE_AND_BOUNDS = frozenset({
    "n_brokers", "n_partitions", "replication_factor", "racks", "assignment_start_index", "assignment_replica_shift",
    "max_records", "max_crashes", "max_session_expirations", "max_controller_epoch", "max_controller_moves",
    "max_flushes", "tick_ms", "produce_acks",
})
#: Every other field: protocol variants (fixes, KIPs), Kafka settings, fault semantics.  A field added later is
#: hidden from the engines unless it is named above.
HIDDEN = tuple(f.name for f in dataclasses.fields(ModelConfig) if f.name not in SHAPE_AND_BOUNDS)


def test_the_hidden_fields_include_every_fix_and_protocol_flag():
    assert {"truncation", "kip_320", "kafka_7128", "kafka_7415", "kafka_7164", "kafka_6082", "kafka_8400", "kip_380",
            "kip_497", "kafka_12686", "kafka_12751", "kafka_13091", "partition_epoch_check",
            "unclean_leader_election", "crash_loses_unflushed_data", "min_insync_replicas",
            "replica_lag_time_max_ms"} <= set(HIDDEN)


def _reads(path: Path) -> list:
    """(line, name) of every attribute read or getattr of a hidden field in a module's source."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr in HIDDEN:
            out.append((node.lineno, node.attr))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("getattr", "hasattr") \
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value in HIDDEN:
            out.append((node.lineno, node.args[1].value))
    return out


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_no_engine_module_reads_a_hidden_config_field(module):
    assert _reads(ROOT / module) == []


#: Kafka's timer settings, which the settling phase reads to know how long a fair schedule must run before every
#: timer a pending thing waits for has fired: a length, the same for every protocol variant, never a choice.
SETTLE_TIMERS = frozenset({"produce_timeout_ms", "isr_change_max_delay_ms", "replica_lag_time_max_ms",
                           "hw_checkpoint_interval_ms", "isr_propagation_interval_ms", "broker_session_timeout_ms"})


def test_the_settling_phase_reads_only_the_timers():
    """properties/settle.py is an engine too; of the hidden fields it reads only the timer settings above."""
    assert {name for _line, name in _reads(ROOT / "properties" / "settle.py")} <= SETTLE_TIMERS


def test_the_catalogue_reads_flags_only_to_scope_invariants():
    """The invariant catalogue is not an engine: it states Kafka's rules with Kafka's settings (timers, min ISR),
    and of the protocol switches it may ask only whether the model has AlterIsr (an AlterIsr invariant means
    nothing without it), whether fetches carry a leader epoch (KIP-320: an invariant on a fetch's epoch means
    nothing before it) and whether the controller keeps an ELR (KIP-966: without it the ISR keeps its last member and
    may sit below min ISR, so there is no recovery quorum to check)."""
    switches = {f.name for f in dataclasses.fields(ModelConfig) if isinstance(f.default, bool) or f.name == "truncation"}
    reads = {name for _line, name in _reads(ROOT / "properties" / "invariants.py")}
    assert reads & switches == {"kip_497", "kip_320", "eligible_leader_replicas"}


def test_the_source_check_sees_a_flag_read():
    """The check itself can fail: the model reads flags, and a planted read is found."""
    assert any(name == "kip_497" for _line, name in _reads(ROOT / "model" / "step.py"))


def _changed(cfg: ModelConfig, name: str) -> ModelConfig:
    """``cfg`` with field ``name`` set to another valid value."""
    value = getattr(cfg, name)
    if isinstance(value, bool):
        new = not value
    elif name == "truncation":
        new = TRUNCATION_MODES[(TRUNCATION_MODES.index(value) + 1) % len(TRUNCATION_MODES)]
    elif name == "replica_selector":
        new = "" if value else "rack-aware"
    elif name == "old_message_format_partitions":
        new = () if value else (0,)
    elif name == "metadata_version":
        new = METADATA_VERSIONS[0] if value != METADATA_VERSIONS[0] else METADATA_VERSIONS[-1]
    elif isinstance(value, tuple):
        new = tuple(range(cfg.n_brokers))
    else:
        new = value + 1
    if name == "kip_500" and new and not cfg.kip_497:
        return cfg.replace(kip_500=True, kip_497=True)   # KRaft needs AlterPartition: the twin claims both
    if name in ("log_dirs", "max_log_dir_failures"):     # KRaft's directories, two for a failure: the twin claims all
        return cfg.replace(kip_500=True, kip_497=True, log_dirs=max(cfg.log_dirs + 1, 2),
                           max_log_dir_failures=cfg.max_log_dir_failures + (name == "max_log_dir_failures"))
    if name == "isr_expand_window" and new and not cfg.kip_500:
        return cfg.replace(isr_expand_window=True, kip_500=True, kip_497=True)   # a KRaft window: the twin claims all
    return cfg.replace(**{name: new})


def _pin_model(monkeypatch, module, pinned: ModelConfig) -> None:
    """Make every model and invariant function ``module`` calls run under ``pinned``, whatever config it is given:
    the model behaves as under ``pinned`` while the engine is handed another config."""
    for attr, obj in list(vars(module).items()):
        if not inspect.isfunction(obj) or not obj.__module__.startswith(("isrlab.model", "isrlab.properties.invariants")):
            continue

        def pinned_call(*args, _f=obj, **kwargs):
            return _f(*(pinned if isinstance(x, ModelConfig) else x for x in args), **kwargs)

        monkeypatch.setattr(module, attr, pinned_call)


def _search_digest(walker, cfg) -> tuple:
    r = walker.search(cfg, 7, 25, 40)
    w = walker.walk(cfg, 7, 200)
    return (r.steps, r.corpus_size, r.cells, tuple(r.actions), r.violation and r.violation.invariant,
            tuple(sorted(r.kind_counts.items())), tuple(w.actions), w.kinds)


@pytest.mark.parametrize("base", ["no-kafka-7415", "kafka-2.7"])
def test_the_walker_draws_the_same_whatever_the_config_says_beyond_the_model(monkeypatch, base):
    """With the model pinned to a preset's config, handing the walker and the guided search that config with any
    hidden field changed gives the very same runs: the engine's choices depend on the config only through the
    model and the invariants.  (Before the engines were made blind, changing kafka_7415 or kip_497 changed the novelty cells and the
    eager kinds, so this failed.)"""
    from isrlab.properties import walker

    cfg = preset(base).config
    _pin_model(monkeypatch, walker, cfg)
    expected = _search_digest(walker, cfg)
    differing = [name for name in HIDDEN if _search_digest(walker, _changed(cfg, name)) != expected]
    assert differing == []


def test_the_machine_has_the_rules_the_model_offers(monkeypatch):
    """The Hypothesis machine's rules come from the model's action kinds, not from the flags: with the model pinned,
    a config claiming KIP-497 gets no AlterIsr rule, and one denying it over an AlterIsr model keeps them."""
    from isrlab.properties import machines

    def rules(cfg):
        cls = machines.machine_for(cfg, settle=True)
        return sorted(n for n in dir(cls) if not n.startswith("_")), cls.settle_kinds

    for base in ("kafka-2.4", "kafka-2.7"):
        cfg = preset(base).config
        with monkeypatch.context() as m:
            _pin_model(m, machines, cfg)
            expected = rules(cfg)
            assert [name for name in HIDDEN if rules(_changed(cfg, name)) != expected] == []
    assert rules(preset("kafka-2.4").config) != rules(preset("kafka-2.7").config)  # the model does tell them apart


def test_action_kinds_lists_every_kind_enabled_groups_offers():
    """``action_kinds`` over-approximates what the engines will see: along walks of every preset, each kind taken
    is one ``action_kinds`` lists, and the kinds it leaves out are exactly those its gates name."""
    from isrlab.model import actions as A
    from isrlab.model.config import PRESETS
    from isrlab.model.step import KRAFT_ONLY, ZK_ONLY, action_kinds
    from isrlab.properties.walker import walk

    for name, p in PRESETS.items():
        kinds = set(action_kinds(p.config))
        seen = set()
        for seed in range(3):
            seen |= {type(a) for a in walk(p.config, seed, 400, (), swarm=False).actions}
        assert seen <= kinds, name
        assert set(A.ACTION_TYPES) - kinds <= {A.OffsetsForLeaderEpoch, A.AlterIsrRequest, A.AlterIsrReceived, A.AlterIsrResponse,
                                              A.FlushLog, A.ListOffsets, A.ConsumerFetchWithClientMetadata,
                                              A.OffsetsForLeaderEpochRequest, A.OffsetsForLeaderEpochResponse,
                                              A.ControlledShutdown, A.DeleteRecords, A.DeleteOldSegments,
                                              A.ConsumerFetchWait, A.DelayedFetchExpire, A.ReassignPartitions,
                                              A.ControllerProcessPartitionReassignment,
                                              A.ControllerProcessReassignmentIsrChange, A.ElectLeaders,
                                              A.AutoLeaderRebalance,
                                              A.DeleteTopic, A.CreateTopic, A.CreatePartitions, A.AlterIsrFailed, *ZK_ONLY,
                                              *KRAFT_ONLY}, name
        assert not kinds & (KRAFT_ONLY if not p.config.kip_500 else ZK_ONLY), name   # one era's kinds only
    assert A.AlterIsrRequest in action_kinds(preset("kafka-2.7").config)
    assert A.AlterIsrRequest not in action_kinds(preset("kafka-2.4").config)
    assert A.OffsetsForLeaderEpoch not in action_kinds(preset("kafka-0.10.2").config)
