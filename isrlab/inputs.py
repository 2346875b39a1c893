"""One input-validation layer for every ``isrlab`` command.

Numbers are parsed by the parameter types below (finite, within stated limits), input files are
read through ``model.trace``'s bounded reader (regular files only, size, nesting and integer
limits), and output paths are checked before any work starts, so that a run never computes for
minutes to fail at the end. Every failure is a one-line error and exit code 2, nothing written.
"""

from __future__ import annotations

import math
import os
import stat
import tempfile

import click

from .exits import InputError
# the untrusted-JSON decoder and its limits live with the trace format (model/trace.py), used here by the commands
from .model.trace import MAX_STRING_BYTES as MAX_STRING_BYTES, json_nesting as json_nesting  # noqa: F401
from .model.trace import load_trace as load_trace, parse_json as parse_json  # noqa: F401

#: the longest numeral accepted on the command line: enough for any 64-bit seed
MAX_NUMERAL = 24


class Number(click.ParamType):
    """A finite float in [low, high] (``low`` excluded when ``open_low``): NaN, infinities and huge values refused."""

    name = "seconds"

    def __init__(self, low: float, high: float, open_low: bool = False, name: str = "number"):
        self.low, self.high, self.open_low, self.name = low, high, open_low, name

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            x = float(value)
        else:
            text = str(value).strip()
            if len(text) > MAX_NUMERAL:
                self.fail(f"{text[:MAX_NUMERAL]}... is not a number within the limits", param, ctx)
            try:
                x = float(text)
            except ValueError:
                self.fail(f"{text!r} is not a number", param, ctx)
        if not math.isfinite(x):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if x < self.low or (self.open_low and x == self.low):
            self.fail(f"{value} is {'not above' if self.open_low else 'below'} {self.low:g}", param, ctx)
        if x > self.high:
            self.fail(f"{value} is above the limit of {self.high:g}", param, ctx)
        return x

    def __repr__(self) -> str:
        return f"Number({self.low}, {self.high})"


class Count(click.ParamType):
    """An integer in [low, high], written in at most MAX_NUMERAL characters; ``note`` ends an out-of-range message."""

    name = "integer"

    def __init__(self, low: int, high: int | None = None, note: str = ""):
        self.low, self.high, self.note = low, high, note

    def convert(self, value, param, ctx):
        if isinstance(value, int) and not isinstance(value, bool):
            n = value
        else:
            text = str(value).strip()
            if len(text) > MAX_NUMERAL:
                self.fail(f"{text[:MAX_NUMERAL]}... is not an integer within the limits", param, ctx)
            try:
                n = int(text, 10)
            except ValueError:
                self.fail(f"{text!r} is not an integer", param, ctx)
        note = f" ({self.note})" if self.note else ""
        if n < self.low:
            self.fail(f"{n} is below {self.low}{note}", param, ctx)
        if self.high is not None and n > self.high:
            self.fail(f"{n} is above the limit of {self.high:,}{note}", param, ctx)
        return n

    def __repr__(self) -> str:
        return f"Count({self.low}, {self.high})"


#: the limits every command shares
SECONDS = Number(0.0, 7 * 24 * 3600.0, open_low=True, name="seconds")   # a budget: above 0, at most a week
SEEDS = Count(-(2 ** 63), 2 ** 64 - 1)
#: a run's own seed (``fuzz --run-seed``): campaigns derive them in [0, 2^63) (``walker.derive_seed``), and
#: random.Random(-n) is random.Random(n), so a negative one would silently be another run's alias
RUN_SEEDS = Count(0, 2 ** 63 - 1, note="a run seed is 0 to 2^63-1, as a campaign's summary and traces give them")


def _nearest_existing(path: str) -> str:
    """The path itself or its nearest ancestor that exists."""
    p = os.path.abspath(path)
    while not os.path.lexists(p):
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    return p


def _probe_writable(folder: str, what: str) -> None:
    """Create and remove a temporary file in folder: the one test that root, /proc and read-only mounts all answer."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".isrlab-probe-", dir=folder)
    except OSError as e:
        raise InputError(f"{what}: cannot write in {folder}: {e.strerror or e}") from None
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:  # pragma: no cover
        pass


def _check_path_text(path: str, what: str) -> None:
    if not path:
        raise InputError(f"{what}: an empty path")
    if "\0" in path:
        raise InputError(f"{what}: a path with a NUL character")


def check_output_folder(path: str, what: str) -> None:
    """A folder that exists and is writable, or can be created under a writable folder; nothing is created."""
    _check_path_text(path, what)
    existing = _nearest_existing(path)
    if not os.path.isdir(existing):
        where = "is" if existing == os.path.abspath(path) else f"lies under {existing}, which is"
        raise InputError(f"{what}: {path} {where} not a folder")
    _probe_writable(existing, what)


def check_output_file(path: str, what: str) -> None:
    """A file path whose folder exists or can be created and is writable, and that is not itself a folder."""
    _check_path_text(path, what)
    full = os.path.abspath(path)
    if path.endswith(os.sep) or os.path.isdir(full):
        raise InputError(f"{what}: {path} is a folder, not a file")
    if os.path.lexists(full):
        mode = os.stat(full).st_mode if os.path.exists(full) else 0
        if mode and not stat.S_ISREG(mode):
            raise InputError(f"{what}: {path} exists and is not a regular file")
    check_output_folder(os.path.dirname(full), what)


def is_remote(path: str) -> bool:
    """A Hadoop URI (hdfs://, s3a://, file://...) rather than a local path."""
    return "://" in path


class Names(click.ParamType):
    """A name (or comma-separated names) completed from a list: presets, invariants.

    Validation stays with the command (it knows about ``all`` and commas); this type offers shell
    completion of the known names (``eval "$(_ISRLAB_COMPLETE=bash_source isrlab)"``), and refuses
    a name that is unknown but differs from a known one only in case, naming it (names are
    compared case-sensitively: ``KAFKA-2.4`` is not ``kafka-2.4``).
    """

    name = "name"

    def __init__(self, known, extra=(), what: str = "name"):
        self._known, self._extra, self._what = known, tuple(extra), what

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        known = (*self._extra, *self._known())
        exact = set(known)
        for name in (n.strip() for n in value.split(",")):
            if name and name not in exact:
                same = sorted(k for k in known if k.casefold() == name.casefold())
                if same:
                    self.fail(f"unknown {self._what} {name!r}: names are case-sensitive; did you mean "
                              f"{' or '.join(same)}?", param, ctx)
        return value

    def shell_complete(self, ctx, param, incomplete):
        from click.shell_completion import CompletionItem

        head, _, last = incomplete.rpartition(",")
        prefix = f"{head}," if head else ""
        return [CompletionItem(prefix + n) for n in (*self._extra, *self._known()) if n.startswith(last)]


def preset_names() -> list[str]:
    from .model.config import PRESETS

    return sorted(PRESETS)


def invariant_names() -> list[str]:
    from .properties.invariants import CATALOGUE, LIVENESS

    return [inv.name for inv in CATALOGUE] + [lv.name for lv in LIVENESS]


PRESET = Names(preset_names, extra=("all", "main"), what="preset")
INVARIANT = Names(invariant_names, what="invariant")


# --------------------------------------------------------------------------- files: typed fields
#: the shapes ``shape_problem`` knows: a Python type, [shape] (a list of it), {key: shape} (an object with these
#: keys, a key ending in "?" optional, others allowed), Maybe(shape) (it or null), ANY
ANY = object()


class Maybe:
    def __init__(self, shape):
        self.shape = shape


def _shape_text(shape) -> str:
    if isinstance(shape, Maybe):
        return f"{_shape_text(shape.shape)} or null"
    if isinstance(shape, list):
        return "a list"
    if isinstance(shape, dict):
        return "an object"
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list",
            dict: "an object"}.get(shape, "a value")


def _kind(value) -> str:
    text = {list: "a list", dict: "an object", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)
    if isinstance(value, (bool, int, float)) or value is None:
        return f"{text} ({str(value)[:24]})"
    return text


def shape_problem(value, shape, at: str = "") -> str | None:
    """Where ``value`` first differs from ``shape`` and how ("presets/0/runs: expected an integer, not a string"),
    or None.  Iterative: a deep or long document costs no recursion."""
    stack = [(value, shape, at)]
    while stack:
        v, s, where = stack.pop()
        said = s
        if s is ANY:
            continue
        if isinstance(s, Maybe):
            if v is None:
                continue
            s = s.shape
        if isinstance(s, list):
            ok = isinstance(v, list)
            if ok:
                stack.extend((item, s[0], f"{where}/{i}") for i, item in reversed(list(enumerate(v))))
        elif isinstance(s, dict):
            ok = isinstance(v, dict)
            if ok:
                for key, sub in reversed(list(s.items())):
                    name = key.rstrip("?")
                    if name in v:
                        stack.append((v[name], sub, f"{where}/{name}"))
                    elif not key.endswith("?"):
                        return f"{where.lstrip('/') or 'top level'}: no {name!r} field"
        elif s is float:
            ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        elif s is int:
            ok = isinstance(v, int) and not isinstance(v, bool)
        else:
            ok = isinstance(v, s)
        if not ok:
            return f"{where.lstrip('/') or 'top level'}: expected {_shape_text(said)}, not {_kind(v)}"
    return None
