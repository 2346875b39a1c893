"""Trace files: a JSON header (format, config, provenance, expected outcome) and the list of actions.

The action list is the source of truth: replaying it through ``step`` never
draws randomness.  ``load_trace`` turns any malformed input (not JSON, wrong
schema, unknown action, impossible config) into a one-line ``TraceError``;
``write_trace`` writes atomically (a temporary file renamed into place).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from importlib import resources

from .actions import ActionError, action_from_json, action_to_json
from .config import ConfigError, ModelConfig, preset as get_preset

FORMAT = "isrlab-trace"
VERSION = 1


class TraceError(ValueError):
    """A trace file that cannot be used, with a one-line reason."""


@dataclass
class Trace:
    config: ModelConfig
    actions: list
    expect: str = "pass"
    violated: str | None = None
    preset: str | None = None
    description: str = ""
    provenance: dict = field(default_factory=dict)
    checks: list = field(default_factory=list)
    violation: dict | None = None
    explanation: str = ""
    model_version: str = ""

    def to_json(self) -> dict:
        out = {
            "format": FORMAT,
            "version": VERSION,
            "model_version": self.model_version or model_version(),
            "preset": self.preset,
            "description": self.description,
            "config": self.config.to_json(),
            "provenance": self.provenance,
            "expect": self.expect,
            "violated": self.violated,
        }
        if self.violation is not None:
            out["violation"] = self.violation
        if self.explanation:
            out["explanation"] = self.explanation
        out["actions"] = [action_to_json(a) for a in self.actions]
        if self.checks:
            out["checks"] = self.checks
        return out


def model_version() -> str:
    try:
        from importlib.metadata import version
        return version("isrlab")
    except Exception:  # pragma: no cover - running from a source tree without metadata
        return "unknown"


_SCHEMA = None


def schema() -> dict:
    global _SCHEMA
    if _SCHEMA is None:
        text = resources.files("isrlab").joinpath("trace.schema.json").read_text(encoding="utf-8")
        _SCHEMA = json.loads(text)
    return _SCHEMA


def validate_json(data) -> None:
    """Check decoded JSON against the trace schema; TraceError names the first problem and where."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(e.absolute_path), e.message))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "top level"
        raise TraceError(f"schema: {where}: {e.message}")


def trace_from_json(data) -> Trace:
    validate_json(data)
    try:
        cfg = ModelConfig.from_json(data["config"])
    except ConfigError as e:
        raise TraceError(f"config: {e}") from None
    preset_name = data.get("preset")
    if preset_name is not None:
        try:
            get_preset(preset_name)
        except ConfigError as e:
            raise TraceError(str(e)) from None
    actions = []
    for i, item in enumerate(data["actions"]):
        try:
            actions.append(action_from_json(item))
        except ActionError as e:
            raise TraceError(f"action {i + 1}: {e}") from None
    n = len(actions)
    for c in data.get("checks", []):
        if c["after"] > n:
            raise TraceError(f"check after {c['after']} actions, but the trace has {n}")
    return Trace(config=cfg, actions=actions, expect=data["expect"], violated=data.get("violated"),
                 preset=preset_name, description=data.get("description", ""),
                 provenance=data.get("provenance", {}), checks=list(data.get("checks", [])),
                 violation=data.get("violation"), explanation=data.get("explanation", ""),
                 model_version=data.get("model_version", ""))


def load_trace(path: str) -> Trace:
    """Read and validate a trace file; every failure is a one-line TraceError."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise TraceError(f"cannot read {path}: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TraceError(f"{path} is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise TraceError(f"{path} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    return trace_from_json(data)


def dumps_trace(trace: Trace) -> str:
    return json.dumps(trace.to_json(), indent=1, sort_keys=False) + "\n"


def write_atomic(path: str, text: str) -> None:
    """Write text to path atomically: a temporary file in the same folder, fsynced, then renamed."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_trace(path: str, trace: Trace) -> None:
    write_atomic(path, dumps_trace(trace))
