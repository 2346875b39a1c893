"""The TLC benchmark scripts' preparation of a specification, on tiny stand-ins (no TLC or Java needed).

benchmarks/tlc_zk.py must make only the checked module's ``LOCAL Next``/``LOCAL Spec`` plain (Kip320 extends Kip279
and defines its own Next) and write a configuration TLC accepts; benchmarks/tlc_kraft.py's last-replica-standing
variant rewrites one line of the configuration; benchmarks/tlc_common.py reads TLC's output.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture()
def scripts(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    for name in ("tlc_common", "tlc_zk", "tlc_kraft"):
        sys.modules.pop(name, None)
    import tlc_common
    import tlc_kraft
    import tlc_zk

    return tlc_common, tlc_zk, tlc_kraft


KIP279 = """---- MODULE Kip279 ----
EXTENDS KafkaReplication
LOCAL Helper(x) == x
LOCAL Next ==
    \\/ LeaderWrite
LOCAL Spec == Init /\\ [][Next]_vars
  LOCAL Next == indented, not a definition at the module's level
====
"""


KIP320 = """---- MODULE Kip320 ----
EXTENDS Kip279
LOCAL HasHighWatermarkReachedCurrentEpoch(leader) == TRUE
FencedLeaderExpandIsr == \\E leader \\in Replicas :
    /\\ HasFollowerReachedHighWatermark(leader, follower)
    /\\ HasHighWatermarkReachedCurrentEpoch(leader)
Next == FencedLeaderExpandIsr
====
"""


def fake_specs(root: Path) -> Path:
    specs = root / "specs"
    specs.mkdir()
    (specs / "KafkaReplication.tla").write_text("---- MODULE KafkaReplication ----\n====\n")
    (specs / "Kip279.tla").write_text(KIP279)
    (specs / "Kip320.tla").write_text(KIP320)
    (specs / ".git").mkdir()
    (specs / ".git" / "HEAD").write_text("ref: refs/heads/master\n")
    return specs


def test_expose_makes_only_the_module_level_next_and_spec_plain(scripts):
    _, tlc_zk, _ = scripts
    out = tlc_zk.expose(KIP279)
    assert "\nNext ==\n" in out and "\nSpec == Init" in out
    assert "LOCAL Helper(x) == x" in out                       # other LOCAL definitions stay local
    assert "  LOCAL Next == indented" in out
    assert tlc_zk.expose(out) == out


def test_config_names_model_values_bounds_and_the_invariant(scripts):
    _, tlc_zk, _ = scripts
    text = tlc_zk.config(3)
    assert "Replicas = {r1, r2, r3}" in text
    for line in ("LogSize = 2", "MaxRecords = 2", "MaxLeaderEpoch = 2", "INIT Init", "NEXT Next",
                 "INVARIANT StrongIsr"):
        assert line in text
    assert "Replicas = {r1}\n" in tlc_zk.config(1, log_size=3)
    assert "LogSize = 3" in tlc_zk.config(1, log_size=3)


def test_prepare_rewrites_the_checked_module_only(scripts, tmp_path):
    _, tlc_zk, _ = scripts
    specs = fake_specs(tmp_path)
    work = tmp_path / "w279"
    assert tlc_zk.prepare(specs, work, "kip279") == "Kip279"
    assert "\nNext ==" in (work / "Kip279.tla").read_text()
    assert "Replicas = {r1, r2, r3}" in (work / "Kip279.cfg").read_text()
    assert not (work / ".git").exists()
    work = tmp_path / "w320"
    tlc_zk.prepare(specs, work, "kip320", replicas=2)
    assert (work / "Kip279.tla").read_text() == KIP279           # Kip320 extends it: its Next must stay LOCAL
    assert "Replicas = {r1, r2}" in (work / "Kip320.cfg").read_text()
    assert (specs / "Kip279.tla").read_text() == KIP279          # the checkout is never changed


def test_a_variant_drops_one_conjunct(scripts, tmp_path):
    _, tlc_zk, _ = scripts
    specs = fake_specs(tmp_path)
    work = tmp_path / "w7128"
    assert tlc_zk.prepare(specs, work, "kip320-no-epoch-start-check") == "Kip320"
    text = (work / "Kip320.tla").read_text()
    assert "    /\\ TRUE\n" in text
    assert "LOCAL HasHighWatermarkReachedCurrentEpoch(leader) == TRUE" in text   # its definition is left alone
    assert "/\\ HasFollowerReachedHighWatermark(leader, follower)" in text
    with pytest.raises(SystemExit) as e:                          # no such conjunct: a one-line error, exit 2
        tlc_zk.drop_conjunct(text, "HasHighWatermarkReachedCurrentEpoch(leader)")
    assert e.value.code == 2


def test_last_replica_standing_rewrites_the_configuration(scripts, tmp_path):
    _, _, tlc_kraft = scripts
    cfg = tmp_path / f"{tlc_kraft.SPEC}.cfg"
    cfg.write_text("CONSTANTS\n    AvoidLastReplicaStanding = TRUE\n    Nil = Nil\n")
    tlc_kraft.remove_check(tmp_path, "last-replica-standing")
    assert cfg.read_text() == "CONSTANTS\n    AvoidLastReplicaStanding = FALSE\n    Nil = Nil\n"
    with pytest.raises(SystemExit) as e:                          # the switch is gone: a one-line error, exit 2
        tlc_kraft.remove_check(tmp_path, "last-replica-standing")
    assert e.value.code == 2


VIOLATION = """Starting... (2026-11-29 23:40:17)
Computed 1 initial states...
Error: Invariant StrongIsr is violated.
Error: The behavior up to this point is:
State 1: <Initial predicate>
/\\ x = 0

State 2: <LeaderWrite line 202, col 5 to line 231, col 66 of module KafkaReplication>
/\\ x = 1

8904 states generated, 4083 distinct states found, 1200 states left on queue.
The depth of the complete state graph search is 12.
"""

CLEAN = """Model checking completed. No error has been found.
  Estimates of the probability that TLC did not check all reachable fingerprints
2,918,304 states generated, 737,794 distinct states found, 0 states left on queue.
"""


def test_parse_reads_tlc_output(scripts, tmp_path):
    tlc_common, _, _ = scripts
    r = tlc_common.parse(VIOLATION)
    assert r == {"violated": "StrongIsr", "trace_states": 2, "generated": 8904, "distinct": 4083, "complete": False}
    r = tlc_common.parse(CLEAN)
    assert r == {"violated": "", "trace_states": 0, "generated": 2918304, "distinct": 737794, "complete": True}
    tlc_common.save_trace(tmp_path, "v", {**r, "output": VIOLATION})
    assert (tmp_path / "v.tlc.txt").read_text().startswith("Error: Invariant StrongIsr is violated.")
    tlc_common.save_trace(tmp_path, "clean", {**r, "output": CLEAN})
    assert not (tmp_path / "clean.tlc.txt").exists()


def test_row_names_the_outcome_only_when_there_is_one(scripts):
    tlc_common, _, _ = scripts
    found = {**tlc_common.parse(VIOLATION), "seconds": 3.6, "stopped": ""}
    assert tlc_common.row("kip101", found, "m") == "kip101 | StrongIsr | 2 | 3.6 | 8,904 | 4,083 | m"
    clean = {**tlc_common.parse(CLEAN), "seconds": 71.1, "stopped": ""}
    assert tlc_common.row("kip320", clean, "m").endswith("| 2,918,304 | 737,794 | m; complete")
    cut = {**tlc_common.parse(""), "seconds": 600.2, "stopped": "stopped at 600 s"}
    assert tlc_common.row("v", cut, "m") == "v | - | - | 600.2 | 0 | 0 | m; stopped at 600 s"
