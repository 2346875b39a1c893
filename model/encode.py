"""Canonical JSON encoding of states, and stable fingerprints.

The encoding is plain JSON data (dicts with sorted keys, lists, ints, strings,
booleans, null), independent of Python's hash seed, of the process and of the
machine, so that fingerprints computed on Spark executors or by the explorer
agree.  Records become objects whose keys are their field names; tuples become
lists.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

from .node import Node


def encode(x):
    """The canonical JSON data of a state, record, request or value."""
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, tuple):
        return [encode(v) for v in x]
    if isinstance(x, Node):
        quiet = getattr(x, "QUIET_FIELDS", ())     # fields added later, left out while empty
        return {name: encode(getattr(x, name)) for name in x._FIELDS if name not in quiet or getattr(x, name) != ()}
    if dataclasses.is_dataclass(x):
        quiet = getattr(x, "QUIET_FIELDS", ())     # fields added later, left out at their default value
        out = {f.name: encode(getattr(x, f.name)) for f in dataclasses.fields(x)
               if f.name not in quiet or getattr(x, f.name) != f.default}
        out["@type"] = type(x).__name__
        return out
    raise TypeError(f"cannot encode {type(x).__name__}")


def canonical_json(x) -> str:
    return json.dumps(encode(x), sort_keys=True, separators=(",", ":"))


def fingerprint(state) -> str:
    """A 128-bit hex digest of the canonical encoding: stable across processes and PYTHONHASHSEED."""
    return hashlib.blake2b(canonical_json(state).encode(), digest_size=16).hexdigest()


def flatten(data, prefix: str = "", out: dict | None = None) -> dict:
    """{"brokers.0.logs.0.high_watermark": 3, ...}: leaves of encoded data by dotted path."""
    if out is None:
        out = {}
    if isinstance(data, dict):
        for k in sorted(data):
            flatten(data[k], f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(data, list) and data and any(isinstance(v, (dict, list)) for v in data):
        for i, v in enumerate(data):
            flatten(v, f"{prefix}.{i}" if prefix else str(i), out)
    else:
        out[prefix] = data
    return out


def lookup(data, path: str):
    """The value at a dotted path of encoded data; KeyError if the path does not exist."""
    cur = data
    for part in path.split("."):
        if isinstance(cur, dict):
            if part not in cur:
                raise KeyError(path)
            cur = cur[part]
        elif isinstance(cur, list):
            if not part.lstrip("-").isdigit() or not -len(cur) <= int(part) < len(cur):
                raise KeyError(path)
            cur = cur[int(part)]
        else:
            raise KeyError(path)
    return cur
