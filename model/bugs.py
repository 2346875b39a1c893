"""The known bugs (model/bugs.toml): each a flag of ModelConfig with the value that fixes it.

The catalogue is data: this module reads and validates it once, and answers two questions about a
configuration: which known bugs it contains (``present``), and what it becomes with one bug fixed
(``with_fix``).  Attribution itself (replaying a trace with a fix) is properties/attribution.py.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from importlib import resources

from .config import ConfigError, ModelConfig, _coerce

KINDS = ("fix", "check", "setting", "finding")
_KEYS = {"id", "kind", "flag", "buggy", "fixed", "fixed_in", "requires", "title", "breaks"}
_FIELDS = {f.name: f.default for f in dataclasses.fields(ModelConfig)}


@dataclass(frozen=True)
class Bug:
    """One known bug: the flag that switches it, its fixed value, and what it may break."""

    id: str
    kind: str
    flag: str
    fixed: object
    title: str
    fixed_in: str
    breaks: tuple
    #: flag values the bug needs to be reachable at all (e.g. KAFKA-13141 needs truncate on fetch)
    requires: tuple = ()
    #: the values of ``flag`` that have the bug (empty: every value but ``fixed``)
    buggy: tuple = ()

    def present_in(self, cfg: ModelConfig) -> bool:
        """Whether cfg has this bug: its flag at a buggy value and every requirement met."""
        value = _plain(getattr(cfg, self.flag))
        if value == self.fixed or (self.buggy and value not in self.buggy):
            return False
        return all(_plain(getattr(cfg, k)) == v for k, v in self.requires)

    def to_json(self) -> dict:
        return {"id": self.id, "kind": self.kind, "flag": self.flag, "fixed": self.fixed, "title": self.title,
                "fixed_in": self.fixed_in, "breaks": list(self.breaks), "requires": dict(self.requires),
                "buggy": list(self.buggy)}


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def _check_value(where: str, flag: str, value) -> None:
    """ConfigError unless ``value`` is a value ModelConfig accepts for ``flag``."""
    try:
        _coerce(flag, value, _FIELDS[flag])
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None


def parse(data: dict, where: str, invariant_names=None) -> dict[str, Bug]:
    """Bugs from a decoded bugs.toml; ConfigError naming the entry and key on the first problem."""
    entries = data.get("bug") if isinstance(data, dict) else None
    if not isinstance(entries, list) or set(data) != {"bug"}:
        raise ConfigError(f"{where}: expected only [[bug]] entries")
    out: dict[str, Bug] = {}
    for i, e in enumerate(entries):
        at = f"{where}: bug {i + 1}" + (f" ({e.get('id')})" if isinstance(e, dict) and "id" in e else "")
        if not isinstance(e, dict):
            raise ConfigError(f"{at}: an entry is a table")
        missing = sorted({"id", "kind", "flag", "fixed", "title", "fixed_in", "breaks"} - set(e))
        unknown = sorted(set(e) - _KEYS)
        if missing or unknown:
            raise ConfigError(f"{at}: " + "; ".join(
                ([f"missing {', '.join(missing)}"] if missing else []) + ([f"unknown {', '.join(unknown)}"] if unknown else [])))
        bid, flag = e["id"], e["flag"]
        if not isinstance(bid, str) or not bid or bid in out:
            raise ConfigError(f"{at}: id must be a new non-empty string")
        if e["kind"] not in KINDS:
            raise ConfigError(f"{at}: kind must be one of {', '.join(KINDS)}")
        if flag not in _FIELDS:
            raise ConfigError(f"{at}: {flag!r} is no ModelConfig field")
        _check_value(at, flag, e["fixed"])
        buggy = e.get("buggy", [])
        if not isinstance(buggy, list) or e["fixed"] in buggy:
            raise ConfigError(f"{at}: buggy must be a list of values other than the fixed one")
        for v in buggy:
            _check_value(at, flag, v)
        requires = e.get("requires", {})
        if not isinstance(requires, dict):
            raise ConfigError(f"{at}: requires must be a table of flags")
        for k, v in requires.items():
            if k not in _FIELDS:
                raise ConfigError(f"{at}: requires names {k!r}, no ModelConfig field")
            _check_value(at, k, v)
        breaks = e["breaks"]
        if not isinstance(breaks, list) or not all(isinstance(x, str) for x in breaks):
            raise ConfigError(f"{at}: breaks must be a list of invariant names")
        if invariant_names is not None:
            bad = [x for x in breaks if x not in invariant_names]
            if bad:
                raise ConfigError(f"{at}: {', '.join(bad)} is no invariant of the catalogue")
        if not all(isinstance(e[k], str) and e[k] for k in ("title", "fixed_in")):
            raise ConfigError(f"{at}: title and fixed_in must be non-empty strings")
        out[bid] = Bug(bid, e["kind"], flag, e["fixed"], e["title"], e["fixed_in"], tuple(breaks),
                       tuple(sorted(requires.items())), tuple(buggy))
    return out


def _load() -> dict[str, Bug]:
    text = resources.files(__package__).joinpath("bugs.toml").read_text(encoding="utf-8")   # also from a zip (Spark)
    return parse(tomllib.loads(text), "model/bugs.toml")


#: id -> Bug, in the file's order
BUGS: dict[str, Bug] = _load()


def bug(bug_id: str) -> Bug:
    try:
        return BUGS[bug_id]
    except KeyError:
        raise ConfigError(f"unknown bug {bug_id!r} (known: {', '.join(BUGS)})") from None


def present(cfg: ModelConfig) -> tuple[Bug, ...]:
    """The known bugs cfg contains, in catalogue order."""
    return tuple(b for b in BUGS.values() if b.present_in(cfg))


def with_fix(cfg: ModelConfig, bugs) -> ModelConfig:
    """cfg with every bug of ``bugs`` fixed (ConfigError if that is no valid configuration)."""
    return cfg.replace(**{b.flag: tuple(b.fixed) if isinstance(b.fixed, list) else b.fixed for b in bugs})


def _check_builtin_presets() -> None:
    """Every built-in preset's expectation against the catalogue, once both are loaded (ConfigError if not)."""
    from .config import PRESETS, check_preset

    for p in PRESETS.values():
        check_preset(p)


_check_builtin_presets()
