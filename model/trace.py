"""Trace files: a JSON header (format, config, provenance, expected outcome) and the list of actions.

The action list is the source of truth: replaying it through ``step`` never
draws randomness.  ``load_trace`` turns any malformed input (not JSON, wrong
schema, unknown action, impossible config) into a one-line ``TraceError``;
``write_trace`` writes atomically (a temporary file renamed into place).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import os
import re
import stat as statmod
import tempfile
from dataclasses import dataclass, field
from importlib import resources

from .actions import ACTION_BY_NAME, ActionError, action_from_json, action_to_json
from .config import ConfigError, ModelConfig

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
    #: the cluster the scenario starts from (model/start.py), None for the empty cluster
    start: dict | None = None
    #: which known bugs the violation is, with the replays under their fixes (properties/attribution.py)
    attribution: dict | None = None

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
        if self.attribution is not None:
            out["attribution"] = self.attribution
        if self.start is not None:
            out["start"] = self.start
        out["actions"] = [action_to_json(a) for a in self.actions]
        if self.checks:
            out["checks"] = self.checks
        return out


#: the sources whose behaviour a recorded seed depends on: the model and the engines that draw from it
_VERSIONED = (("isrlab.model", None), ("isrlab.properties", None), ("isrlab", "campaign.py"))


@functools.lru_cache(maxsize=1)
def model_version() -> str:
    """The package version and a digest of the model's and engines' source, e.g. ``0.1.0+3f2a9c1d0b7e``.

    A seed in a trace's provenance reproduces its run only under the same digest; the actions
    replay under any version.
    """
    try:
        from importlib.metadata import version
        base = version("isrlab")
    except Exception:  # pragma: no cover - running from a source tree without metadata
        base = "unknown"
    h = hashlib.blake2b(digest_size=6)
    try:
        for package, only in _VERSIONED:
            folder = resources.files(package)
            for entry in sorted(folder.iterdir(), key=lambda e: e.name):
                if entry.name.endswith(".py") and (only is None or entry.name == only):
                    h.update(f"{package}/{entry.name}\0".encode())
                    h.update(entry.read_bytes())
    except (OSError, ModuleNotFoundError):  # pragma: no cover - sources not readable (a frozen build)
        return base
    return f"{base}+{h.hexdigest()}"


_SCHEMA = None


def schema() -> dict:
    global _SCHEMA
    if _SCHEMA is None:
        text = resources.files("isrlab").joinpath("trace.schema.json").read_text(encoding="utf-8")
        _SCHEMA = json.loads(text)
    return _SCHEMA


def validate_json(data, actions_by_schema: bool = False) -> list | None:
    """Check decoded JSON against the trace schema; TraceError names the first problem and where.  Returns the
    decoded actions (None without an action list).

    The actions are decoded one by one first (``action_from_json``, the schema's own rules for them), stopping at
    the first bad one: constant time per action, where the schema's per-type conditions cost about a millisecond
    each.  The rest of the document is then checked by the schema; ``actions_by_schema`` checks the actions by it
    too (the tests keep the two in step)."""
    import jsonschema

    if not isinstance(data, dict):
        raise TraceError(f"schema: top level: a trace is a JSON object, not {_json_kind(data)}")
    actions = data.get("actions")
    decoded = None
    if isinstance(actions, list):  # cheap checks first: a huge list of junk must not cost a schema error each
        if len(actions) > MAX_ACTIONS:
            raise TraceError(f"schema: actions: {len(actions):,} actions (at most {MAX_ACTIONS:,})")
        decoded = [_action_at(i, item) for i, item in enumerate(actions)]
        if not actions_by_schema:
            data = dict(data, actions=[])
    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(itertools.islice(validator.iter_errors(data), 100),
                    key=lambda e: (list(e.absolute_path), e.message))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "top level"
        raise TraceError(f"schema: {where}: {e.message}")
    return decoded


def _action_at(i: int, item, where: bool = False):
    """The action decoded from ``item``, the ``i``-th (from 0) of a trace's list; TraceError naming it otherwise.
    ``where`` adds the element's JSON path and, for an unknown type, what was expected (the streaming loader's
    message: a file of a million actions deserves a pointer into it)."""
    if not isinstance(item, dict):
        raise TraceError(f"schema: actions/{i}: an action is a JSON object, not {_json_kind(item)}")
    try:
        return action_from_json(item)
    except ActionError as e:
        if not where:
            raise TraceError(f"action {i + 1}: {e}") from None
        name = item.get("type")
        expected = ""
        if not isinstance(name, str) or name not in ACTION_BY_NAME:
            import difflib
            close = difflib.get_close_matches(name, ACTION_BY_NAME, 1) if isinstance(name, str) else []
            expected = (f": expected one of the {len(ACTION_BY_NAME)} action types of model/actions.py"
                        + (f"; did you mean {close[0]!r}?" if close else ""))
        raise TraceError(f"action {i + 1}: {e} (at actions/{i}{expected})") from None


def _json_kind(value) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number",
            type(None): "null", dict: "an object"}.get(type(value), type(value).__name__)


def trace_from_json(data) -> Trace:
    return _trace_of(data, validate_json(data))


def _trace_of(data: dict, actions: list) -> Trace:
    """The Trace of a document the schema accepted and its decoded actions."""
    try:
        cfg = ModelConfig.from_json(data["config"])
    except ConfigError as e:
        raise TraceError(f"config: {e}") from None
    # the preset is a name only: the trace carries its whole configuration, so one of a user's own presets (an
    # isrlab.toml elsewhere) replays anywhere; where its name is unknown, no known bug counts as expected
    preset_name = data.get("preset")
    start = data.get("start")
    if start is not None:
        check_start(cfg, start)
    n = len(actions)
    for c in data.get("checks", []):
        if c["after"] > n:
            raise TraceError(f"check after {c['after']} actions, but the trace has {n}")
    return Trace(config=cfg, actions=actions, expect=data["expect"], violated=data.get("violated"),
                 preset=preset_name, description=data.get("description", ""),
                 provenance=data.get("provenance", {}), checks=list(data.get("checks", [])),
                 violation=data.get("violation"), explanation=data.get("explanation", ""),
                 model_version=data.get("model_version", ""), start=start, attribution=data.get("attribution"))


def check_start(cfg: ModelConfig, start: dict) -> None:
    """TraceError (one line) if ``start`` does not describe a consistent cluster for ``cfg`` (model/start.py)."""
    from .start import StartError
    from .step import initial_state
    try:
        initial_state(cfg, start)
    except StartError as e:
        raise TraceError(f"start: {e}") from None


#: limits checked before any parsing work that could blow up on a hostile or broken file
MAX_TRACE_BYTES = 32 * 1024 * 1024
MAX_NESTING = 64
MAX_INT_DIGITS = 40
MAX_ACTIONS = 1_000_000


def read_regular_file(path: str, limit: int = MAX_TRACE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; TraceError for a FIFO, device, folder or larger file.

    Opened without blocking, so a FIFO is refused instead of waiting for a writer.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise TraceError(f"cannot read {path}: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not statmod.S_ISREG(st.st_mode):
            kind = ("a folder" if statmod.S_ISDIR(st.st_mode) else "a FIFO" if statmod.S_ISFIFO(st.st_mode)
                    else "a device" if statmod.S_ISCHR(st.st_mode) or statmod.S_ISBLK(st.st_mode)
                    else "a socket" if statmod.S_ISSOCK(st.st_mode) else "not a regular file")
            raise TraceError(f"{path} is {kind}, not a regular file")
        if st.st_size > limit:
            raise TraceError(f"{path} is {st.st_size:,} bytes, above the limit of {limit:,}")
        chunks, size = [], 0
        while size <= limit:
            try:
                chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            except OSError as e:
                raise TraceError(f"cannot read {path}: {e.strerror}") from None
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise TraceError(f"{path} is larger than the limit of {limit:,} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _parse_int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS:
        raise TraceError(f"an integer of {len(text)} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise TraceError(f"the number {text[:20]} is not finite")
    return value


def _parse_constant(name: str):
    raise TraceError(f"{name} is not a JSON value")


#: the longest string a JSON input may hold (descriptions, names, versions, explanations are short): a cap checked
#: before the document is decoded, so that a 20 MB field costs its bytes, not a decoder's working set
MAX_STRING_BYTES = 1 << 20


def _unescaped(raw: bytes) -> bytes:
    """JSON text with its escaped backslashes and quotes blanked (same length: offsets stay the file's), so that every
    quote left opens or closes a string."""
    if b"\\" not in raw:      # no escapes at all (isrlab writes none): no copy
        return raw
    return raw.replace(b"\\\\", b"  ").replace(b'\\"', b"  ")


def _long_string_at(raw: bytes, limit: int) -> tuple[int, int] | None:
    """(offset, length) of a JSON string literal longer than ``limit`` bytes, or None: runs of ``limit`` non-quote
    bytes are found at C speed, and one inside a string (an odd number of quotes before it) is one."""
    text = _unescaped(raw)
    for m in re.finditer(rb'[^"]{%d,}' % (limit + 1), text):
        if text.count(b'"', 0, m.start()) % 2 == 1:
            return m.start() - 1, m.end() - m.start()
    return None


def _brackets(raw: bytes, chunk: int = 1 << 16) -> bytes:
    """The brackets of JSON text outside its strings, in order.  The text is split at its quotes a chunk at a time
    (C speed; a chunk's pieces, about 9 times its size, are all it holds at once, where one ``re.sub`` over the
    whole text held a piece per string: 600 MB for a million actions), the pieces outside strings kept."""
    text = _unescaped(raw)
    out, inside = [], False
    for at in range(0, len(text), chunk):
        parts = text[at:at + chunk].split(b'"')
        out.append(b"".join(parts[1 if inside else 0::2]).translate(None, delete=_NOT_BRACKETS))
        inside ^= len(parts) % 2 == 0      # an odd number of quotes in the chunk
    return b"".join(out)


def json_nesting(raw: bytes, limit: int = 64) -> int:
    """The deepest nesting of arrays and objects in JSON text, strings skipped; memory linear in the text's size.

    Up to ``limit`` levels, the innermost empty pairs are removed a round at a time at C speed (a million actions in
    well under a second); past it, the brackets left are counted one by one."""
    brackets = _brackets(raw).translate(_ONE_KIND)     # depth does not tell [] from {}: the decoder checks pairs
    depth = 0
    while brackets:
        if depth > limit:
            return depth + max(itertools.accumulate(1 if b == 0x5B else -1 for b in brackets))
        shorter = brackets.replace(b"[]", b"")   # one level per round: pairs as they stand, not as they become
        if len(shorter) == len(brackets):   # unbalanced: the decoder says where
            break
        brackets, depth = shorter, depth + 1
    return depth


_ONE_KIND = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def _checked_text(raw: bytes, what: str, max_string: int = MAX_STRING_BYTES) -> str:
    """The text of untrusted JSON bytes once the limits that need no decoding hold (UTF-8, string length, nesting):
    checked at C speed over the whole input before any value is built."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TraceError(f"{what} is not UTF-8 text (byte {e.start:,})") from None
    if text.startswith("\ufeff"):   # a byte order mark some editors write: no part of the JSON text (RFC 8259 8.1)
        text = text[1:]
    long = _long_string_at(raw, max_string)
    if long is not None:
        raise TraceError(f"{what}: a string of {long[1]:,} bytes at byte {long[0]:,} (at most "
                         f"{max_string:,}: descriptions, names and versions are short)")
    depth = json_nesting(raw, MAX_NESTING)
    if depth > MAX_NESTING:
        raise TraceError(f"{what} nests arrays and objects {depth} deep (at most {MAX_NESTING})")
    return text


#: the one decoder of untrusted JSON: integers of at most MAX_INT_DIGITS digits, finite numbers, no NaN/Infinity
_DECODER = json.JSONDecoder(parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant)


def _decoding_failed(what: str, e: Exception) -> TraceError:
    why = (f" is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}" if isinstance(e, json.JSONDecodeError)
           else " nests too deep" if isinstance(e, RecursionError) else f": {e}")
    return TraceError(what + why)


#: how many times its size a whole JSON document may take once decoded (json.loads builds 25 bytes per byte of
#: "[{},{},...]", 15 of short strings); isrlab's own files take 3 to 5
MAX_DECODED_RATIO = 12


def _decoded_cost(raw: bytes) -> int:
    """About what ``json.loads`` builds from ``raw``, in bytes, counted at C speed before it is built: a hundred per
    array or object, a str object per string (keys too, where the decoder shares them: an overestimate), a pointer per
    element.  Numbers are left out: at most ten times their text."""
    brackets = _brackets(raw)
    strings = _unescaped(raw).count(b'"') // 2
    return 100 * (len(brackets) // 2) + 56 * strings + 8 * raw.count(b",")


def parse_json(raw: bytes, what: str, max_string: int = MAX_STRING_BYTES):
    """Untrusted JSON decoded within the limits (UTF-8, nesting, integer digits, finite numbers, string length),
    with peak memory a small multiple of its size; every failure is a one-line ``TraceError`` naming ``what``."""
    text = _checked_text(raw, what, max_string)
    cost = _decoded_cost(raw)
    if cost > MAX_DECODED_RATIO * len(raw) + (8 << 20):
        raise TraceError(f"{what}: {len(raw):,} bytes of JSON that would take about {cost >> 20:,} MB decoded (at "
                         f"most {MAX_DECODED_RATIO} times its size: this many arrays, objects and strings is no "
                         f"file isrlab writes)")
    try:
        return _DECODER.decode(text)
    except (TraceError, json.JSONDecodeError, RecursionError) as e:
        raise _decoding_failed(what, e) from None


_BLANKS = re.compile(r"[ \t\n\r]*")
#: a JSON object of scalars and strings without escapes (an action as isrlab writes it), its text a cache key, and
#: the separator after it (a comma or the array's end, blanks around it)
_FLAT_ITEM = re.compile(r'(\{[^{}\[\]"]*(?:"[^"\\]*"[^{}\[\]"]*)*\})[ \t\n\r]*([,\]]?)[ \t\n\r]*')


def _stream_trace(text: str) -> tuple[object, list | None]:
    """A trace document decoded field by field, its ``actions`` array element by element straight into actions.

    Returns the document with ``actions`` left empty, and the actions (None when ``actions`` is absent or no array:
    the schema then says so).  The first element that is no action stops the decoding with a TraceError naming it:
    nothing after it is read, and memory is the actions so far, never the whole list as JSON objects (about 23 times
    the text's size).  Syntax errors are ``json.JSONDecodeError``, as ``json.loads`` raises them."""
    blank, end = _BLANKS.match, len(text)
    pos = blank(text).end()
    if not text.startswith("{", pos):
        if text.startswith("[", pos):   # refused unread: a top-level list of a million junk items costs nothing
            raise TraceError("schema: top level: a trace is a JSON object, not an array")
        return _DECODER.decode(text), None      # a scalar: short (strings are capped), the schema refuses it
    doc: dict = {}
    actions = None
    pos = blank(text, pos + 1).end()
    if text.startswith("}", pos):
        pos += 1
    else:
        while True:
            if not text.startswith('"', pos):
                raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
            if len(doc) == MAX_HEADER_FIELDS:
                raise TraceError(f"schema: top level: more than {MAX_HEADER_FIELDS} fields (a trace has about 15)")
            key, pos = _DECODER.raw_decode(text, pos)
            pos = blank(text, pos).end()
            if not text.startswith(":", pos):
                raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
            pos = blank(text, pos + 1).end()
            if key == "actions" and text.startswith("[", pos):
                actions, pos = _stream_actions(text, pos)
                doc[key] = []
            else:
                doc[key], pos = _header_value(text, pos, key)
                if key == "actions":    # a later duplicate wins, as in json.loads
                    actions = None
            pos = blank(text, pos).end()
            if text.startswith(",", pos):
                pos = blank(text, pos + 1).end()
            elif text.startswith("}", pos):
                pos += 1
                break
            else:
                raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
    pos = blank(text, pos).end()
    if pos != end:
        raise json.JSONDecodeError("Extra data", text, pos)
    return doc, actions


#: the most fields a trace's top level may have (the schema knows 15; each one's name and value are decoded apart)
MAX_HEADER_FIELDS = 64
#: the most JSON text one header field of a trace may take (its config, provenance, start state, checks: kilobytes),
#: so that no field but the streamed actions is ever decoded whole at a decoder's 25 bytes per byte
MAX_FIELD_BYTES = 4 << 20


def _header_value(text: str, pos: int, key: str) -> tuple[object, int]:
    """The value of header field ``key`` at ``pos`` and the position after it, decoded from a window of 1 MiB, then
    of MAX_FIELD_BYTES if it goes on past that (and the first MiB, all of it the value's, is not too costly to
    decode): a longer value is refused before it is built."""
    return _windowed_value(text, pos, (1 << 20, MAX_FIELD_BYTES), _capped_key(key),
                           "a trace's header fields are short; only its actions may be long")


def _windowed_value(text: str, pos: int, sizes: tuple, where: str, why: str) -> tuple[object, int]:
    """The JSON value at ``pos`` and the position after it, decoded from the text's next ``sizes[0]`` characters,
    then the next ``sizes[1]``... if it goes on past them (and what it took of the last window is not too costly to
    decode); TraceError ("where: more than N bytes of JSON (why)") if it goes on past the last."""
    for size in sizes:
        window = text[pos:pos + size]
        cut = len(window) == size
        try:
            value, end = _DECODER.raw_decode(window)
        except json.JSONDecodeError as e:
            if not (cut and (e.pos >= size - 64 or e.msg.startswith("Unterminated string"))):
                raise json.JSONDecodeError(e.msg, text, pos + e.pos) from None
            end = size
        if not cut or end < size - 1:   # it ends inside the window
            return value, pos + end
        if size != sizes[-1] and _decoded_cost(window.encode()) > MAX_DECODED_RATIO * size:
            break
    raise TraceError(f"schema: {where}: more than {size:,} bytes of JSON ({why})")


def _capped_key(key: str) -> str:
    return key if len(key) <= 40 and key.isprintable() else repr(key[:40]) + "..."


def _stream_actions(text: str, pos: int) -> tuple[list, int]:
    """The actions of the JSON array at ``pos`` and the position after it: each element decoded, turned into its
    action and dropped, in constant time and memory per element; TraceError at the first that is no action."""
    decode, blank, item_at = _DECODER.raw_decode, _BLANKS.match, _FLAT_ITEM.match
    out: list = []
    # actions are frozen values, and a trace repeats a few hundred of them (ticks, deliveries, fetches): the same
    # text is the same action, so a repeat is looked up by its text, not decoded again (bounded: hostile text
    # that never repeats costs a decode per element, as without it)
    seen: dict = {}
    pos = blank(text, pos + 1).end()
    if text.startswith("]", pos):
        return out, pos + 1
    while True:
        if len(out) == MAX_ACTIONS:
            raise TraceError(f"schema: actions: more than {MAX_ACTIONS:,} actions")
        m = item_at(text, pos)
        action = seen.get(m.group(1)) if m is not None else None
        if action is not None:      # a repeat, and the separator after it
            out.append(action)
            if m.group(2) == ",":
                pos = m.end()
                continue
            if m.group(2) == "]":
                return out, m.end()
            raise json.JSONDecodeError("Expecting ',' delimiter", text, m.end())
        if m is not None:   # an object of scalars: it costs a few times its text, whatever its length
            item, end = decode(text, pos)
        else:               # nested, or strings with escapes: no action needs more than a few hundred bytes
            item, end = _windowed_value(text, pos, (4096,), f"actions/{len(out)}", "an action is a few fields")
        action = _action_at(len(out), item, where=True)
        if m is not None and end == m.end(1) and end - pos <= 200:
            if len(seen) >= 4096:
                seen.clear()
            seen[m.group(1)] = action
        out.append(action)
        pos = blank(text, end).end()
        if text.startswith(",", pos):
            pos = blank(text, pos + 1).end()
        elif text.startswith("]", pos):
            return out, pos + 1
        else:
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)


def load_trace(path: str) -> Trace:
    """Read and validate a trace file; every failure is a one-line TraceError naming the file.

    The limits that need no decoding are checked first over the whole file (size, UTF-8, string length, nesting);
    then the document is decoded a field at a time and its actions one at a time (``_stream_trace``), stopping at the
    first bad one; then the header is checked against the schema."""
    text = _checked_text(read_regular_file(path), path)   # the file's bytes are dropped once decoded
    try:
        doc, actions = _stream_trace(text)
        del text
        if actions is None:
            return trace_from_json(doc)
        validate_json(doc)          # the header; its action list is empty here
        return _trace_of(doc, actions)
    except (json.JSONDecodeError, RecursionError) as e:
        raise _decoding_failed(path, e) from None
    except TraceError as e:        # a number past the limits (the decoder's hooks), a bad action, the schema
        raise TraceError(f"{path}: {e}") from None


def dumps_trace(trace: Trace) -> str:
    return json.dumps(trace.to_json(), indent=1, sort_keys=False) + "\n"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: str, data: str | bytes) -> None:
    """Write text (or bytes) to path atomically: a temporary file in the same folder, fsynced, then renamed.

    The file gets the mode a plain ``open`` would give it (0666 less the umask), not mkstemp's 0600.
    """
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o666 & ~_umask())
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
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
