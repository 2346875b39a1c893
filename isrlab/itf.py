"""A trace's states in the Informal Trace Format (ITF), the JSON that Apalache and Quint write.

One ITF state per model state: the initial state, then the state after each action, its ``#meta`` naming the step
and the action (its trace JSON). The values are built with itf-py and follow one encoding (docs/guides/tla-interop.md):
the state's top-level fields are the ITF variables; records become ITF records, their dataclass name in a field
``dataclass``; lists indexed by a broker or partition id (``ID_MAPS``) become ``#map`` from the id; the sorted tuples
that stand for sets (``SET_FIELDS``: an ISR, a replica set...) become ``#set``; other lists stay sequences; ``None``
is the string ``Nil``; integers are JSON numbers up to 2^53 - 1 and ``#bigint`` beyond.
"""

from __future__ import annotations

import json
from collections import namedtuple
from functools import lru_cache

#: list fields whose index is a broker or partition id: exported as ITF maps from the id
ID_MAPS = frozenset({"brokers", "partitions", "logs", "fetchers", "hw_checkpoint", "registrations", "sessions",
                     "last_contact_ms", "reported_offsets", "shutdown_offsets", "session_since", "assignment",
                     "partition_states"})
#: list fields that hold a set (kept as sorted tuples by the model): exported as ITF sets
SET_FIELDS = frozenset({"isr", "replicas", "alive_brokers", "elr", "last_known_elr", "adding", "removing",
                        "isr_change_set", "fenced", "offline_replicas", "members", "maximal_isr"})
#: the largest integer ITF writes as a plain JSON number (``Number.MAX_SAFE_INTEGER``)
MAX_PLAIN_INT = 2 ** 53 - 1
NIL = "Nil"


@lru_cache(maxsize=None)
def _record_type(fields: tuple):
    return namedtuple("Rec", fields)


def to_itf_value(data, field: str = ""):
    """A state's canonical JSON data (model.encode) as the Python value itf-py serialises in the encoding above."""
    if data is None:
        return NIL
    if isinstance(data, dict):
        items = {("dataclass" if k == "@type" else k): to_itf_value(v, k) for k, v in sorted(data.items())}
        return _record_type(tuple(items))(**items)
    if isinstance(data, list):
        values = [to_itf_value(v) for v in data]
        if field in ID_MAPS:
            return {i: v for i, v in enumerate(values)}
        if field in SET_FIELDS:
            return frozenset(values)
        return values
    return data


def _plain_ints(value):
    """itf-py writes every integer as ``#bigint``; ITF asks for it only beyond 2^53 - 1."""
    if isinstance(value, dict):
        if set(value) == {"#bigint"} and abs(int(value["#bigint"])) <= MAX_PLAIN_INT:
            return int(value["#bigint"])
        return {k: _plain_ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_ints(v) for v in value]
    return value


def states_of(trace):
    """(initial state, [(action, state after it)...]) of a trace, replayed through the model; TraceError (from
    model.trace) at an action its state does not enable."""
    from .model.actions import describe
    from .model.step import initial_state, step
    from .model.trace import TraceError

    s = initial_state(trace.config, trace.start)
    first, after = s, []
    for i, a in enumerate(trace.actions, 1):
        s2 = step(trace.config, s, a)
        if s2 is None:
            raise TraceError(f"action {i}: {describe(a)} is not enabled at time {s.now} ms")
        after.append((a, s2))
        s = s2
    return first, after


def trace_to_itf(trace, source: str = "") -> dict:
    """The ITF JSON document of a trace's states (built and serialised by itf-py)."""
    from itf_py import State, Trace, trace_to_json

    from .model.actions import action_to_json
    from .model.encode import encode

    first, after = states_of(trace)
    states = []
    for i, (a, s) in enumerate([(None, first), *after]):
        data = encode(s)
        meta = {"index": i, "action": action_to_json(a) if a is not None else None}
        states.append(State(meta=meta, values={k: to_itf_value(v, k) for k, v in sorted(data.items())}))
    names = sorted(encode(first))
    meta = {"format": "ITF", "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "source": source, "description": f"isrlab trace of preset {trace.preset or '(none)'}: "
                                             f"{len(trace.actions)} actions, the model's state after each",
            "preset": trace.preset, "encoding": "docs/guides/tla-interop.md"}
    doc = trace_to_json(Trace(meta=meta, params=[], vars=names, states=states, loop=None))
    del doc["loop"]     # a finite trace has no loop: ITF leaves the field out, where itf-py writes null
    return _plain_ints(doc)


def dumps_itf(doc: dict) -> str:
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"
