"""Copy-on-write base for the model's state records.

The model's transition function is pure: ``step(cfg, s, a)`` never changes
``s``.  Frozen dataclasses would make that structural, but ``dataclasses.replace``
is slow and a step touches several records, which would cap the model well
below the speed the engines need (benchmarks/RESULTS.md).  Instead the state
records are slotted dataclasses that are *copied on write*: a step first takes
a shallow copy of the cluster carrying a fresh write token, and any record it
wants to change is cloned once (``_clone``) and re-linked into its (already
cloned) parent; unchanged branches stay shared with the previous state, as in
stateright's ``Arc``/``Cow`` states.  The token tells a record cloned in this
step from one still shared with the input, so a record is never cloned twice
and no change is lost.  ``tests/test_model_core.py`` checks on random walks
that a step never changes its input state.
"""

from __future__ import annotations

import dataclasses


class Node:
    """Base of every state record: slotted fields plus a private write token."""

    __slots__ = ("_tok",)
    _FIELDS: tuple[str, ...] = ()
    #: fields ``encode`` leaves out at their default value (added after states were fingerprinted), name -> default
    _QUIET: dict = {}

    def _clone(self, tok: object):
        """A shallow copy owned by write token ``tok``."""
        new = object.__new__(self.__class__)
        for name in self._FIELDS:
            object.__setattr__(new, name, object.__getattribute__(self, name))
        new._tok = tok
        return new

    # Pickle only the fields: a write token never crosses a process boundary.
    def __getstate__(self):
        return tuple(getattr(self, n) for n in self._FIELDS)

    def __setstate__(self, state):
        for name, value in zip(self._FIELDS, state):
            object.__setattr__(self, name, value)
        self._tok = None

    def __copy__(self):
        return self._clone(None)

    def __deepcopy__(self, memo):
        raise TypeError("state records are shared between states; use _clone, not deepcopy")


def record(cls):
    """Class decorator: a slotted, comparable dataclass derived from Node."""
    cls = dataclasses.dataclass(slots=True, eq=True, repr=True)(cls)
    cls._FIELDS = tuple(f.name for f in dataclasses.fields(cls))
    cls._QUIET = {f.name: f.default for f in dataclasses.fields(cls) if f.name in getattr(cls, "QUIET_FIELDS", ())}
    cls._clone = _clone_function(cls)
    init = cls.__init__

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._tok = None

    __init__.__doc__ = init.__doc__
    cls.__init__ = __init__
    return cls


def _clone_function(cls):
    """``_clone`` written out field by field for ``cls``, as dataclasses writes ``__init__``.

    The loop in ``Node._clone`` is an order of magnitude slower than this straight-line copy, and a
    step clones several records (benchmarks/RESULTS.md).  The source is built only from the
    class's own field names (Python identifiers checked by dataclasses), never from input.
    """
    body = "".join(f"    new.{name} = self.{name}\n" for name in cls._FIELDS)
    src = f"def _clone(self, tok):\n    new = _new(_cls)\n{body}    new._tok = tok\n    return new\n"
    namespace = {"_new": object.__new__, "_cls": cls}
    exec(src, namespace)  # noqa: S102 -- generated from field names, as dataclasses does
    fn = namespace["_clone"]
    fn.__qualname__ = f"{cls.__qualname__}._clone"
    fn.__doc__ = Node._clone.__doc__
    return fn


def replace_at(t: tuple, i: int, value) -> tuple:
    """``t`` with item ``i`` replaced."""
    return t[:i] + (value,) + t[i + 1:]


def memo_by_identity(cache: dict, obj, build):
    """``build(obj)``, made once per object and kept in ``cache`` (id(obj) -> (obj, value)).

    For values derived from an immutable object on a hot path (a config's action tables, a tuple of
    invariants' check plans): hashing a ModelConfig hashes all its fields (a sizeable share of a
    step), an id is free.  The entry holds ``obj``, so its id is not reused while the entry lives; the
    cache is cleared when it reaches 256 entries.
    """
    entry = cache.get(id(obj))
    if entry is None or entry[0] is not obj:
        if len(cache) >= 256:
            cache.clear()
        entry = cache[id(obj)] = (obj, build(obj))
    return entry[1]
