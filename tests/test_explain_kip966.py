"""The explainer's sentences for the KIP-966 specification's properties: built from the facts the catalogue
returns on states that break them, never the JSON fallback."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import drive
from isrlab.model.step import initial_state
from isrlab.properties import invariants as I
from isrlab.properties.explain import sentence
from test_invariants_kip966 import ELR2, KRAFT, KRAFT_LEADERLESS, _edited, _elr_state, _without_record

pytestmark = pytest.mark.unit


def test_a_record_lost_while_leaderless_is_told_with_its_replicas():
    s = _without_record(drive(KRAFT, initial_state(KRAFT), *KRAFT_LEADERLESS), range(KRAFT.n_brokers))
    v = next(v for v in I.check_state(KRAFT, s, 14) if v.invariant == "acked_survives_leaderless")
    text = sentence(KRAFT, KRAFT_LEADERLESS, v)
    assert text.startswith("At step 14 no live broker leads partition 0")
    assert f"record {v.facts['record']}" in text and "broker 0 (down, LEO 0)" in text
    assert "lost from every replica" in text and "{" not in text


def test_a_recovery_quorum_without_the_record_names_its_members():
    s = _elr_state()
    lost = _without_record(s, (0, 1))
    v = I.Violation("min_isr_recovery_quorum", 7, I.min_isr_recovery_quorum(ELR2, lost))
    text = sentence(ELR2, [], v)
    assert "recovery quorum, ISR [] + ELR" in text and f"record {v.facts['record']}" in text
    assert "min ISR = 2" in text and "{" not in text


def test_a_recovery_quorum_below_min_isr_says_so():
    s = _edited(_elr_state())
    q = s.quorum_mut()
    part = q.partitions[0]
    q.partitions = (dataclasses.replace(part, elr=()),)
    v = I.Violation("min_isr_recovery_quorum", 3, I.min_isr_recovery_quorum(ELR2, s))
    assert "holds fewer than min ISR = 2 replicas" in sentence(ELR2, [], v)
