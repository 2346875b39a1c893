"""User presets: "my broker's rules" as a set of flags, from a TOML file, without editing the package.

Read from ``$ISRLAB_CONFIG``, else ``isrlab.toml`` in the working folder, else the
``[tool.isrlab]`` table of ``pyproject.toml`` there::

    [tool.isrlab.presets.my-broker]          # in isrlab.toml: [presets.my-broker]
    base = "kafka-2.4"                       # a built-in preset the flags change
    description = "our fork: followers truncate to the HW"
    expected = "pass"                        # or the invariant its headline bug breaks first
    bugs = []                                # the known bugs it is expected to show (isrlab bugs), headline first
    flags = { truncation = "hw", kip_320 = false }
    explore = { max_crashes = 1, max_expirations = 1 }

Every key is checked (unknown keys, flags, invariants, types, impossible configs) with a one-line
error naming the file and key; a user preset may not shadow a built-in one.
"""

from __future__ import annotations

import json
import os
import tomllib

from .exits import InputError

#: explore bounds a user preset may set, with their types (the ``isrlab explore`` options)
EXPLORE_KEYS = {"brokers": int, "max_records": int, "max_epoch": int, "max_crashes": int, "max_expirations": int,
                "max_controller_epoch": int, "max_isr_changes": int, "max_time": int, "max_states": int, "max_queue": int,
                "settle_every": int, "max_in_flight": int, "max_lagging": int}
_PRESET_KEYS = {"base", "description", "expected", "bugs", "flags", "explore"}
MAX_CONFIG_BYTES = 1 << 20

#: name -> the file a user preset came from (filled by ``load``)
SOURCES: dict[str, str] = {}
#: name -> explore bounds of a user preset
EXPLORE: dict[str, dict] = {}


def config_file(cwd: str = ".") -> tuple[str, bool] | None:
    """(path, is_pyproject) of the user's configuration, or None."""
    env = os.environ.get("ISRLAB_CONFIG")
    if env:
        return env, os.path.basename(env) == "pyproject.toml"
    for name, is_pyproject in (("isrlab.toml", False), ("pyproject.toml", True)):
        path = os.path.join(cwd, name)
        if os.path.lexists(path):   # a FIFO, folder or broken link of that name is refused when read, not skipped
            return path, is_pyproject
    return None


#: how deep tables and arrays may nest in a user's configuration (a preset is three levels: presets.NAME.flags)
MAX_CONFIG_NESTING = 16
_BOM = b"\xef\xbb\xbf"


def _too_deep(data, limit: int) -> bool:
    """True if tables and arrays nest deeper than ``limit`` (iterative: no recursion on a hostile file)."""
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth >= limit:
                return True
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return False


def _read_toml(path: str) -> dict:
    from .model.trace import TraceError, read_regular_file

    try:
        raw = read_regular_file(path, MAX_CONFIG_BYTES)
    except TraceError as e:
        raise InputError(str(e)) from None
    if raw.startswith(_BOM):   # written by an editor that marks UTF-8: the mark is no part of the TOML
        raw = raw[len(_BOM):]
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise InputError(f"{path} is not UTF-8 text (byte {e.start:,})") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path} is not valid TOML: {e}") from None
    except RecursionError:
        raise InputError(f"{path} nests tables or arrays too deep (at most {MAX_CONFIG_NESTING} levels)") from None
    except ValueError as e:   # an integer of more digits than Python converts (4,300)
        raise InputError(f"{path}: {str(e).split(';')[0]}") from None
    if _too_deep(data, MAX_CONFIG_NESTING):
        raise InputError(f"{path} nests tables or arrays more than {MAX_CONFIG_NESTING} levels deep")
    return data


def parse(table: dict, where: str) -> list:
    """Preset objects from a ``presets`` table; InputError on the first problem."""
    from .model.bugs import BUGS
    from .model.config import PRESETS, ConfigError, ModelConfig, Preset, check_preset
    from .properties.invariants import NAMES

    if not isinstance(table, dict):
        raise InputError(f"{where}: presets must be a table")
    out = []
    for name, body in table.items():
        at = f"{where}: presets.{name}"
        if name in PRESETS and name not in SOURCES:
            raise InputError(f"{at}: {name} is a built-in preset; give yours another name")
        if name.casefold() in ("all", "main"):
            raise InputError(f"{at}: {name!r} names a group of presets on the command line; give yours another name")
        builtin = next((n for n in PRESETS if n not in SOURCES and n.casefold() == name.casefold()), None)
        if builtin is not None and builtin != name:
            raise InputError(f"{at}: {name} differs from the built-in preset {builtin} only in case; give yours "
                             f"another name")
        if not name or len(name) > 64 or not all(c.isalnum() or c in "-_." for c in name):
            raise InputError(f"{at}: a preset name is 1-64 letters, digits, '-', '_' or '.'")
        if not isinstance(body, dict):
            raise InputError(f"{at} must be a table")
        unknown = sorted(set(body) - _PRESET_KEYS)
        if unknown:
            raise InputError(f"{at}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(_PRESET_KEYS))})")
        base_name = body.get("base", "kafka-2.4")
        if not isinstance(base_name, str) or base_name not in PRESETS or base_name in SOURCES:
            raise InputError(f"{at}.base: {base_name!r} is not a built-in preset")
        flags = body.get("flags", {})
        if not isinstance(flags, dict):
            raise InputError(f"{at}.flags must be a table")
        try:
            cfg = ModelConfig.from_json({**PRESETS[base_name].config.to_json(), **flags})
        except ConfigError as e:
            raise InputError(f"{at}.flags: {e}") from None
        except (TypeError, ValueError) as e:
            raise InputError(f"{at}.flags: {e}") from None
        expected = body.get("expected", "pass")
        if not isinstance(expected, str) or (expected != "pass" and expected not in NAMES):
            raise InputError(f"{at}.expected: {expected!r} is no invariant of the catalogue (isrlab invariants)")
        bugs = body.get("bugs", [])
        if not isinstance(bugs, list) or not all(isinstance(x, str) for x in bugs):
            raise InputError(f"{at}.bugs must be a list of known bug ids (isrlab bugs)")
        unknown_bugs = [b for b in bugs if b not in BUGS]
        if unknown_bugs:
            raise InputError(f"{at}.bugs: {', '.join(map(repr, unknown_bugs))} is no known bug (isrlab bugs)")
        description = body.get("description", f"user preset from {os.path.basename(where)}")
        if not isinstance(description, str):
            raise InputError(f"{at}.description must be a string")
        bounds = body.get("explore", {})
        if not isinstance(bounds, dict):
            raise InputError(f"{at}.explore must be a table")
        for key, value in bounds.items():
            if key not in EXPLORE_KEYS:
                raise InputError(f"{at}.explore: unknown bound {key} (known: {', '.join(EXPLORE_KEYS)})")
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10 ** 9:
                raise InputError(f"{at}.explore.{key} must be an integer from 0 to 10^9")
        p = Preset(name, cfg, expected, description, reference=f"user ({base_name} + flags)", bugs=tuple(bugs))
        try:
            check_preset(p)
        except ConfigError as e:
            raise InputError(f"{at}: {e}") from None
        out.append((p, dict(bounds)))
    return out


def unload() -> None:
    """Forget the user presets registered by ``load``."""
    from .model.config import PRESETS

    for name in SOURCES:
        PRESETS.pop(name, None)
    SOURCES.clear()
    EXPLORE.clear()


def load(cwd: str = ".") -> list[str]:
    """Register the user's presets, replacing those an earlier call registered; the names registered."""
    from .model.config import PRESETS

    unload()
    found = config_file(cwd)
    if found is None:
        return []
    path, is_pyproject = found
    data = _read_toml(path)
    if is_pyproject:
        data = data.get("tool", {}).get("isrlab", {}) if isinstance(data.get("tool"), dict) else {}
    if not isinstance(data, dict):
        raise InputError(f"{path}: [tool.isrlab] must be a table")
    unknown = sorted(set(data) - {"presets"})
    if unknown:
        raise InputError(f"{path}: unknown key(s) {', '.join(unknown)} (known: presets)")
    names = []
    for p, bounds in parse(data.get("presets", {}), path):
        PRESETS[p.name] = p
        SOURCES[p.name] = path
        EXPLORE[p.name] = bounds
        names.append(p.name)
    return names


def register_json(presets: list) -> None:
    """Register presets sent as JSON (a Spark task carries the driver's user presets to its executor)."""
    from .model.config import PRESETS, ModelConfig, Preset

    for d in presets:
        if d["name"] not in PRESETS:
            PRESETS[d["name"]] = Preset(d["name"], ModelConfig.from_json(d["config"]), d["expected"],
                                        d["description"], d.get("reference", ""), tuple(d.get("bugs", ())))
            EXPLORE[d["name"]] = dict(d.get("explore", {}))


def to_json(names) -> list:
    """The named user presets as JSON, for ``register_json`` on another process."""
    from .model.config import PRESETS

    return [{"name": n, "config": PRESETS[n].config.to_json(), "expected": PRESETS[n].expected,
             "description": PRESETS[n].description, "reference": PRESETS[n].reference,
             "bugs": list(PRESETS[n].bugs), "explore": EXPLORE.get(n, {})} for n in names if n in SOURCES]

#: the environment variable that carries the driver's user presets to Spark's executors
ENV = "ISRLAB_USER_PRESETS"


def export_env(names) -> dict:
    """Put the named user presets in this process's environment (local executors inherit it) and return the
    Spark settings that give a cluster's executors the same."""
    presets = to_json(names)
    if not presets:
        return {}
    text = json.dumps(presets, sort_keys=True)
    os.environ[ENV] = text
    return {f"spark.executorEnv.{ENV}": text}


def register_env() -> None:
    """Executor side: register the user presets the driver exported, if any."""
    text = os.environ.get(ENV)
    if text:
        register_json(json.loads(text))

