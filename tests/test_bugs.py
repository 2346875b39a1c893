"""The known-bug catalogue (model/bugs.toml): it loads from either import order, every preset's expectation agrees
with it, and a malformed entry is one ConfigError naming the entry and what is wrong."""

from __future__ import annotations

import subprocess
import sys

import pytest

from isrlab.model.bugs import BUGS, parse, present, with_fix
from isrlab.model.config import PRESETS, ConfigError, check_preset
from isrlab.properties.invariants import NAMES

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("first", ["isrlab.model.bugs", "isrlab.model.config", "isrlab.properties.attribution"])
def test_the_catalogue_loads_whichever_module_is_imported_first(first):
    code = f"import {first}; from isrlab.model.bugs import BUGS; print(len(BUGS))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and int(out.stdout) == len(BUGS), out.stderr[-2000:]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_agrees_with_the_catalogue(name):
    p = PRESETS[name]
    check_preset(p)
    assert set(p.bugs) <= {b.id for b in p.known_bugs}
    for b in p.known_bugs:   # its fix takes the bug out of the configuration, and the result is a valid one
        assert b not in present(with_fix(p.config, [b]))


def test_every_invariant_a_bug_may_break_is_in_the_catalogue():
    assert all(x in NAMES for b in BUGS.values() for x in b.breaks)


@pytest.mark.parametrize("entry,message", [
    ({"id": "X"}, "missing"),
    ({"id": "X", "kind": "fix", "flag": "kafka_9999", "fixed": True, "title": "t", "fixed_in": "1", "breaks": []},
     "no ModelConfig field"),
    ({"id": "X", "kind": "fix", "flag": "kafka_7128", "fixed": 3, "title": "t", "fixed_in": "1", "breaks": []},
     "must be true or false"),
    ({"id": "X", "kind": "bogus", "flag": "kafka_7128", "fixed": True, "title": "t", "fixed_in": "1", "breaks": []},
     "kind must be one of"),
    ({"id": "X", "kind": "fix", "flag": "kafka_7128", "fixed": True, "title": "t", "fixed_in": "1",
      "breaks": ["no_such_invariant"]}, "no invariant of the catalogue"),
    ({"id": "X", "kind": "fix", "flag": "kafka_7128", "fixed": True, "title": "t", "fixed_in": "1", "breaks": [],
      "requires": {"nope": 1}}, "requires names 'nope'"),
])
def test_a_malformed_entry_is_one_error_naming_it(entry, message):
    with pytest.raises(ConfigError) as e:
        parse({"bug": [entry]}, "bugs.toml", NAMES)
    assert message in str(e.value) and "bug 1" in str(e.value) and "\n" not in str(e.value)
