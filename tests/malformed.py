"""A seeded generator of malformed invocations, as a user's broken files and flags would be, and their oracle.

Cases mutate the project's own traces (counterexamples/, tests/scenarios/, tests/fixtures/, tests/kafka/)
and command lines: truncated or binary files, nesting and integers beyond the limits, NaN, wrong types,
missing or unknown fields, unknown actions and invariants, special files (FIFO, folder, device), bad
numbers, bad output paths. They damage every other file the project reads too: a campaign folder's
summary.json, Parquet runs table and counterexamples (report, campaigns, promote), isrlab.toml and
pyproject.toml under every command, mutate's flags, an interrupted campaign's campaign.json under
``fuzz --resume``, and a folder of traces with one bad file under ``pytest --isrlab-traces``. ``run_case`` runs one in process (click's runner, under an alarm) or as a
subprocess (special files and pytest sessions, where a hang must be caught by a timeout), and ``classify``
names what went wrong: a traceback, the catch-all "internal error" (a crash no validator caught), a hang, a
wrong exit code, a multi-line error, a file left behind, or a pytest session stopped by one bad file.

Used by tests/test_malformed.py (a few hundred cases) and benchmarks/malformed.py (thousands).
"""

from __future__ import annotations

import copy
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HANG_SECONDS = 20

#: numbers no option takes: not finite, not numbers, or beyond every limit
BAD_NUMBERS = ["nan", "NaN", "inf", "-inf", "1e30", "1e309", "9" * 5000, "", " ", "abc", "0x10",
               "99999999999999999999999999"]
#: numbers some options take and others refuse: any answer but a crash
ODD_NUMBERS = ["-1", "0", "-0", "3.5", "1e-300", "1_000"]
#: output paths no command can write (a user's own folder "/" is left out: root may write there)
BAD_PATHS = ["/dev/null/x", "/proc/x", "", "{file}", "{file}/sub"]
WRONG_VALUES = ["", "x", -1, 10 ** 30, 2.5, None, True, [], {}, [1, 2], {"a": 1}]


@dataclass
class Case:
    """One invocation: its arguments (``{dir}`` and ``{file}`` filled in per run), the files it needs, its oracle."""

    name: str
    args: list
    files: dict = field(default_factory=dict)   # name -> bytes, "fifo", "dir", ("sparse", size), ("symlink", to),
                                                # ("mode", bytes, mode)
    expect: tuple = (2,)                        # acceptable exit codes
    subprocess: bool = False
    outputs: tuple = ()                         # output folders (under {dir}) that must stay empty on exit 2
    absent: tuple = ()                          # files (under {dir}) that must not exist on exit 2
    listing: bool = False                       # exit 2 may come after a listing: stdout, one error line per bad entry
    pytest: bool = False                        # a pytest --isrlab-traces session, not an isrlab command


def _sources() -> list[Path]:
    found = []
    for pattern in ("counterexamples/*.json", "tests/scenarios/*.json", "tests/fixtures/*.json", "tests/kafka/*.json"):
        found += sorted(ROOT.glob(pattern))
    return found


def _dump(data) -> bytes:
    return json.dumps(data).encode()


def _mutate_trace(rng: random.Random, data: dict) -> tuple[str, bytes, tuple]:
    """(what, file bytes, acceptable exit codes) of one mutation of a trace."""
    d = copy.deepcopy(data)
    kind = rng.choice(["truncate", "binary", "latin1", "empty", "deep", "bigint", "nan", "junk_actions",
                       "drop_key", "wrong_type", "unknown_action", "action_field", "broker_range", "config_field",
                       "config_unknown", "expect", "violated", "checks_after", "check_path", "top_list",
                       "dup_actions", "swap_actions", "drop_action", "provenance_deep", "format", "start", "bom",
                       "bom_twice", "number_constant", "huge_float", "huge_config_int", "long_name",
                       "late_unknown_action"])
    raw = _dump(d)
    if kind == "truncate":
        return kind, raw[: rng.randrange(0, max(1, len(raw) - 1))], (2,)
    if kind == "binary":
        return kind, bytes(rng.randrange(256) for _ in range(rng.randrange(1, 2000))), (2,)
    if kind == "latin1":
        return kind, raw[:20] + b"\xe9\xff" + raw[20:], (2,)
    if kind == "empty":
        return kind, b"", (2,)
    if kind == "deep":
        depth = rng.choice([65, 200, 1000, 5000, 100000])
        return kind, (b"[" * depth) + (b"]" * depth), (2,)
    if kind == "bigint":
        d["actions"].insert(0, {"type": "Tick", "ms": 12345})
        digits = b"7" * rng.choice([41, 500, 4301, 10000])   # written as text: Python refuses to print it
        return kind, _dump(d).replace(b'"ms": 12345', b'"ms": ' + digits, 1), (2,)
    if kind == "nan":
        return kind, raw.replace(b'"version": 1', b'"version": ' + rng.choice([b"NaN", b"Infinity", b"-Infinity"]),
                                 1), (2,)
    if kind == "bom":     # no part of the JSON text: the trace reads as without it
        return kind, b"\xef\xbb\xbf" + raw, (0, 1, 2)
    if kind == "bom_twice":
        return kind, b"\xef\xbb\xbf" * 2 + raw, (2,)
    if kind == "number_constant" and d["actions"]:    # NaN/Infinity where an action's number goes
        d["actions"][0] = {"type": "Tick", "ms": 12345}
        bad = rng.choice([b"NaN", b"Infinity", b"-Infinity"])
        return kind, _dump(d).replace(b'"ms": 12345', b'"ms": ' + bad, 1), (2,)
    if kind == "huge_float":
        d["actions"].insert(0, {"type": "Tick", "ms": 12345})
        return kind, _dump(d).replace(b'"ms": 12345', b'"ms": ' + rng.choice([b"1e400", b"-1e999", b"1.5"]), 1), (2,)
    if kind == "huge_config_int":
        k = rng.choice(sorted(d["config"]))
        d["config"][k] = 12345
        digits = rng.choice([b"-", b""]) + b"9" * rng.choice([19, 20, 39, 41, 4300])
        return kind, _dump(d).replace(b"12345", digits, 1), (0, 1, 2)
    if kind == "long_name":    # a field's string past the cap, or just under it
        key = rng.choice(["description", "preset", "model_version", "violated", "explanation"])
        d[key] = "n" * rng.choice([(1 << 20) - 8, (1 << 20) + 1, 3 << 20])
        return kind, _dump(d), (0, 1, 2)
    if kind == "late_unknown_action":    # after many good actions, one unknown, then text no decoder takes
        d.pop("checks", None)
        d["actions"] = d["actions"] * rng.choice([1, 50, 2000]) + [{"type": "FlipCoin"}]
        return kind, _dump(d)[:-2] + b", {\"type\": [[[", (2,)
    if kind == "junk_actions":
        d["actions"] = [rng.choice([1, "x", None, [], True])] * rng.choice([10, 1000, 300000])
        return kind, _dump(d), (2,)
    if kind == "drop_key":
        key = rng.choice(["format", "version", "config", "expect", "actions"])
        d.pop(key, None)
        return kind, _dump(d), (2,)
    if kind == "wrong_type":
        key = rng.choice(["format", "version", "config", "expect", "actions", "preset", "provenance", "checks"])
        d[key] = rng.choice(WRONG_VALUES)
        return kind, _dump(d), (0, 1, 2)      # some wrong values are still valid (null preset, [] checks)
    if kind == "unknown_action":
        d["actions"].insert(rng.randrange(len(d["actions"]) + 1), {"type": rng.choice(["FlipCoin", "", "tick"])})
        return kind, _dump(d), (2,)
    if kind in ("action_field", "broker_range") and d["actions"]:
        a = d["actions"][rng.randrange(len(d["actions"]))]
        fields = [k for k in a if k != "type"] or ["extra"]
        k = rng.choice(fields)
        a[k] = rng.choice(WRONG_VALUES if kind == "action_field" else [-1, 3, 99, 2 ** 31, -(2 ** 63)])
        return kind, _dump(d), (0, 1, 2)
    if kind == "config_field":
        k = rng.choice(sorted(d["config"]))
        d["config"][k] = rng.choice(WRONG_VALUES + [0, 10 ** 9, -5])
        return kind, _dump(d), (0, 1, 2)
    if kind == "config_unknown":
        d["config"]["kip_999"] = True
        return kind, _dump(d), (2,)
    if kind == "expect":
        d["expect"] = rng.choice(["maybe", "", "PASS", None, 1])
        return kind, _dump(d), (2,)
    if kind == "violated":
        d["expect"], d["violated"] = "violation", rng.choice(["no_such_invariant", "", "ACKED_DURABILITY", "x" * 300])
        return kind, _dump(d), (2,)
    if kind == "checks_after":
        d["checks"] = [{"after": len(d["actions"]) + rng.randrange(1, 10 ** 6), "path": "zk", "equals": 1}]
        return kind, _dump(d), (2,)
    if kind == "check_path":
        d["checks"] = [{"after": 0, "path": rng.choice(["", "...", "brokers.99.logs", "a" * 1000, "zk.x.y"]),
                        "equals": rng.choice(WRONG_VALUES)}]
        return kind, _dump(d), (0, 1, 2)     # shrink and promote look at the violation, not at the checks
    if kind == "top_list":
        return kind, _dump([d]), (2,)
    if kind == "dup_actions" and d["actions"]:
        i = rng.randrange(len(d["actions"]))
        d["actions"].insert(i, d["actions"][i])
        return kind, _dump(d), (0, 1, 2)      # a repeated action may not be enabled (2) or change the outcome
    if kind == "swap_actions" and len(d["actions"]) > 1:
        i = rng.randrange(len(d["actions"]) - 1)
        d["actions"][i], d["actions"][i + 1] = d["actions"][i + 1], d["actions"][i]
        return kind, _dump(d), (0, 1, 2)
    if kind == "drop_action" and d["actions"]:
        del d["actions"][rng.randrange(len(d["actions"]))]
        return kind, _dump(d), (0, 1, 2)
    if kind == "provenance_deep":
        nest: object = 1
        for _ in range(rng.choice([70, 900])):
            nest = {"a": nest}
        d["provenance"] = nest
        return kind, _dump(d), (2,)
    if kind == "start":     # a starting state (model/start.py) of the wrong shape or an inconsistent cluster
        d["start"] = rng.choice([
            rng.choice(WRONG_VALUES),
            {"brokers": [{"broker": rng.choice([-1, 0, 99]),
                          "logs": [{"partition": rng.choice([0, 5]),
                                    "records": [[rng.choice([0, 3, -1]), rng.choice([0, -1, 2 ** 31, 10 ** 30])]],
                                    "hw_checkpoint": rng.choice([0, 2, 10 ** 30])}]}]},
            {"zookeeper": {"partitions": [{"partition": 0, "leader": rng.choice([-2, 0, 7]),
                                           "leader_epoch": rng.choice([0, -1]),
                                           "isr": rng.choice([[], [0], [0, 0], [9]])}]}},
            {"brokers": [{"broker": 0, "logs": [{"partition": 0, "records": [[0, 0]] * rng.choice([2, 1000])}]}]},
        ])
        return kind, _dump(d), (0, 1, 2)    # a start may be valid; the actions then may not be enabled (2)
    d["format"] = "not-isrlab"
    return "format", _dump(d), (2,)


def _trace_cases(rng: random.Random, n: int) -> list[Case]:
    sources = _sources()
    out = []
    for i in range(n):
        src = rng.choice(sources)
        data = json.loads(src.read_text())
        what, raw, expect = _mutate_trace(rng, data)
        cmd = rng.choice(["replay", "replay-expected", "explain", "explain-svg", "shrink", "promote"])
        args = {"replay": ["replay", "--quiet", "{dir}/t.json"],
                "replay-expected": ["replay", "--expected", "--json", "{dir}/t.json"],
                "explain": ["explain", "{dir}/t.json"],
                "explain-svg": ["explain", "{dir}/t.json", "--svg", "{dir}/out/x.svg"],
                "shrink": ["shrink", "{dir}/t.json", "--budget", "1", "--bfs-states", "200", "--archive", "{dir}/out"],
                "promote": ["promote", "{dir}/t.json", "--to", "{dir}/out"]}[cmd]
        # promote and shrink refuse what they cannot use: a passing trace is bad input to them
        codes = tuple(sorted(set(expect) | ({2} if cmd in ("shrink", "promote") else set())))
        if cmd in ("shrink", "promote"):
            codes = tuple(c for c in codes if c != 1) or (2,)
        out.append(Case(f"{cmd}:{what}:{src.name}:{i}", args, {"t.json": raw}, codes, outputs=("out",)))
    return out


def _special_cases() -> list[Case]:
    base = _campaign_files()
    part = "c/runs/preset=kafka-0.11/part-00000.snappy.parquet"
    out = [Case(f"report:parquet:{kind}", ["report", "c"], {**_campaign_folder(base), part: content},
                subprocess=True, absent=("c/report.html",)) for kind, content in (("fifo", "fifo"), ("folder", "dir"))]
    for cmd in ("replay", "explain", "shrink", "promote"):
        tail = {"shrink": ["--budget", "1", "--archive", "{dir}/out"], "promote": ["--to", "{dir}/out"]}.get(cmd, [])
        out += [Case(f"{cmd}:fifo", [cmd, "{dir}/fifo", *tail], {"fifo": "fifo"}, subprocess=True, outputs=("out",)),
                Case(f"{cmd}:folder", [cmd, "{dir}/d", *tail], {"d": "dir"}, outputs=("out",)),
                Case(f"{cmd}:dev-zero", [cmd, "/dev/zero", *tail], subprocess=True, outputs=("out",)),
                Case(f"{cmd}:dev-null", [cmd, "/dev/null", *tail], outputs=("out",)),
                Case(f"{cmd}:missing", [cmd, "{dir}/nope.json", *tail], outputs=("out",)),
                Case(f"{cmd}:oversized", [cmd, "{dir}/big.json", *tail], {"big.json": ("sparse", 40 << 20)},
                     outputs=("out",)),
                Case(f"{cmd}:fifo-named-json", [cmd, "{dir}/t.json", *tail], {"t.json": "fifo"}, subprocess=True,
                     outputs=("out",)),
                Case(f"{cmd}:symlink-loop", [cmd, "{dir}/t.json", *tail], {"t.json": ("symlink", None)},
                     outputs=("out",)),
                Case(f"{cmd}:dangling-symlink", [cmd, "{dir}/t.json", *tail], {"t.json": ("symlink", "gone.json")},
                     outputs=("out",)),
                # root reads a file of mode 000: then it is refused as the JSON it is not
                Case(f"{cmd}:unreadable", [cmd, "{dir}/t.json", *tail], {"t.json": ("mode", b"{", 0)},
                     outputs=("out",))]
    # a campaign folder whose summary.json is no regular file, or cannot be opened
    for kind, content in (("fifo", "fifo"), ("folder", "dir"), ("symlink-loop", ("symlink", None)),
                          ("unreadable", ("mode", b"{", 0))):
        files = {**_campaign_folder(base), "c/summary.json": content}
        out.append(Case(f"report:summary:{kind}", ["report", "c"], files, subprocess=kind == "fifo",
                        absent=("c/report.html",)))
        listing = {**_campaign_folder(base, prefix="cs/a-good"), **_campaign_folder(base, prefix="cs/b-bad"),
                   "cs/b-bad/summary.json": content}
        out.append(Case(f"campaigns:summary:{kind}", ["campaigns", "--out", "cs"], listing, (0, 2),
                        subprocess=kind == "fifo", listing=True))
        out.append(Case(f"fuzz:resume:campaign.json-{kind}", ["fuzz", "--resume", "c"], {"c/campaign.json": content},
                        subprocess=kind == "fifo", absent=("c/summary.json", "c/_shards_done")))
        for cmd in ("presets", "replay"):
            out.append(Case(f"{cmd}:isrlab.toml:{kind}", [cmd, *(["t.json"] if cmd == "replay" else [])],
                            {"isrlab.toml": content, "t.json": base["cx"]}, subprocess=kind == "fifo"))
    return out


def _flag_cases(rng: random.Random, n: int) -> list[Case]:
    good = sorted((ROOT / "counterexamples").glob("*-kafka-0.11-isr_entry_condition-*.json"))[0]
    raw = good.read_bytes()
    templates = [
        (["fuzz", "--master", "none", "--engine", "walk", "--runs", "1", "--max-steps", "30", "--archive",
          "{dir}/out"],
         ["--budget", "--shards", "--seed", "--runs", "--max-steps", "--extensions", "--shrink-budget",
          "--shrink-candidates", "--run-seed"]),
        (["shrink", "{dir}/t.json", "--budget", "1", "--archive", "{dir}/out"], ["--budget", "--bfs-states"]),
        (["replay", "{dir}/t.json"], ["--max-changes"]),
        (["explore", "--preset", "kafka-2.4", "--brokers", "2", "--max-records", "0", "--max-states", "50",
          "--out", "{dir}/out"],
         ["--brokers", "--max-records", "--max-epoch", "--max-crashes", "--max-states", "--max-time", "--budget",
          "--max-depth"]),
    ]
    out = []
    for i in range(n):
        base, flags = rng.choice(templates)
        flag = rng.choice(flags)
        odd = rng.random() < 0.3
        value = rng.choice(ODD_NUMBERS if odd else BAD_NUMBERS)
        out.append(Case(f"{base[0]}:{flag}={value[:12]!r}:{i}", [*base, flag, value], {"t.json": raw},
                        (0, 1, 2) if odd else (2,), outputs=() if odd else ("out",)))
    names = [(["fuzz", "--master", "none", "--runs", "1", "--archive", "{dir}/out", "--preset"],
              ["kafka-9.9", "", ",", "all,nope", "x" * 500]),
             (["fuzz", "--master", "none", "--runs", "1", "--archive", "{dir}/out", "--engine"], ["quantum", ""]),
             (["fuzz", "--master", "none", "--runs", "1", "--archive", "{dir}/out", "--invariant"],
              ["no_such", ""]),
             (["explore", "--brokers", "2", "--out", "{dir}/out", "--preset"], ["kafka-9.9", ""]),
             (["explore", "--brokers", "2", "--out", "{dir}/out", "--without"], ["FlipCoin"]),
             (["fuzz", "--runs", "1", "--out", "{dir}/out", "--conf"], ["novalue", "=x"]),
             (["report"], ["nope", "{dir}"]),
             (["no-such-command"], ["x"]), (["fuzz", "--no-such-flag"], ["1"])]
    for base, values in names:
        for v in values:
            out.append(Case(f"{base[0]}:{base[-1]}={v[:12]!r}", [*base, v], outputs=("out",)))
    for path in BAD_PATHS:
        for opt in (["explain", "{dir}/t.json", "--svg"], ["explain", "{dir}/t.json", "--png"],
                    ["fuzz", "--master", "none", "--engine", "walk", "--runs", "1", "--max-steps", "30",
                     "--archive"], ["shrink", "{dir}/t.json", "--archive"],
                    ["fuzz", "--runs", "1", "--out"], ["promote", "{dir}/t.json", "--to"]):
            # an existing file is a fine --svg/--png (overwritten), and no folder
            ok_file = path == "{file}" and opt[-1] in ("--svg", "--png")
            out.append(Case(f"{opt[0]}:{opt[-1]}={path!r}", [*opt, path], {"t.json": raw, "file": b""},
                            (0, 1) if ok_file else (2,)))
    return out


# --------------------------------------------------------------------------- generic JSON damage
def _json_paths(data, at=()):
    yield at
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _json_paths(v, at + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data[:3]):
            yield from _json_paths(v, at + (i,))


def _damage_json(rng: random.Random, data) -> tuple[str, bytes, bool]:
    """(what, bytes, certainly bad) of one damage to a JSON document: a field of the wrong type or missing, or bytes
    no decoder takes (truncated, binary, nested too deep, an integer or a string past the limits)."""
    d = copy.deepcopy(data)
    kind = rng.choice(["wrong_type", "wrong_type", "wrong_type", "drop_key", "truncate", "binary", "deep", "bigint",
                       "long_string", "top_list", "empty", "nan"])
    raw = _dump(d)
    if kind in ("wrong_type", "drop_key"):
        paths = [p for p in _json_paths(d) if p]
        at = rng.choice(paths)
        node = d
        for key in at[:-1]:
            node = node[key]
        if kind == "drop_key" and isinstance(node, dict):
            del node[at[-1]]
        else:
            node[at[-1]] = rng.choice(WRONG_VALUES)
        return f"{kind}:{'/'.join(map(str, at))[:40]}", _dump(d), False
    if kind == "truncate":
        return kind, raw[: rng.randrange(0, max(1, len(raw) - 1))], True
    if kind == "binary":
        return kind, bytes(rng.randrange(256) for _ in range(rng.randrange(1, 2000))), True
    if kind == "deep":
        depth = rng.choice([65, 1000, 100000])
        return kind, b"[" * depth + b"]" * depth, True
    if kind == "bigint":
        return kind, raw[:-1] + b', "n": ' + b"7" * rng.choice([41, 4301, 10000]) + b"}", True
    if kind == "long_string":
        return kind, raw[:-1] + b', "s": "' + b"x" * (rng.choice([2, 20]) << 20) + b'"}', True
    if kind == "nan":
        return kind, raw[:-1] + b', "x": NaN}', True
    return kind, (b"[]" if kind == "top_list" else b""), True


# --------------------------------------------------------------------------- campaign folders: report, campaigns
_CAMPAIGN: dict = {}


def _campaign_files() -> dict:
    """A campaign folder as isrlab fuzz leaves it, under c/: summary.json, a runs table (Parquet, Spark's types) and
    one counterexample the summary names (relative to the case's folder, its working folder)."""
    if _CAMPAIGN:
        return _CAMPAIGN
    import pyarrow as pa
    import pyarrow.parquet as pq

    cx = sorted((ROOT / "counterexamples").glob("*-kafka-0.11-isr_entry_condition-*.json"))[0]
    trace = json.loads(cx.read_text())
    violation = pa.struct([("invariant", pa.string()), ("step", pa.int32()), ("facts", pa.string()),
                           ("trace", pa.string())])
    table = pa.table({"campaign": ["c", "c"], "shard": pa.array([0, 0], pa.int32()),
                      "engine": ["guided", "guided"], "run_index": pa.array([0, 1], pa.int32()),
                      "seed": pa.array([7, 8], pa.int64()), "steps": pa.array([1000, 2000], pa.int32()),
                      "kind_counts": pa.array([[("Produce", 3)], [("Produce", 1), ("Tick", 2)]],
                                              pa.map_(pa.string(), pa.int32())),
                      "error_codes": [["NONE"], ["NONE"]], "witnesses": [[], ["hw_advances"]],
                      "violation": ["isr_entry_condition", None],
                      "violations": pa.array([[{"invariant": "isr_entry_condition", "step": 31, "facts": "{}",
                                                "trace": None}], []], pa.list_(violation))})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    summary = {"campaign": "c", "master": "local[2]", "tasks": 1, "runs": 2, "steps": 3000,
               "seconds": {"total_s": 6.0, "fuzz_s": 4.0}, "spec": {"presets": ["kafka-0.11"], "engine": "guided",
                                                                    "seed": 0},
               "as_expected": True, "unexpected": False, "violations": [{"preset": "kafka-0.11", "runs": 1}],
               "presets": [{"preset": "kafka-0.11", "expected": trace["violated"], "expected_bugs": ["KAFKA-7128"],
                            "runs": 2, "steps": 3000, "violated": [trace["violated"]], "verdict": "as expected",
                            "found": ["KAFKA-7128"], "not_found": [], "unexpected": [], "known": []}],
               "counterexamples": [{"preset": "kafka-0.11", "invariant": trace["violated"],
                                    "shrunk_length": len(trace["actions"]), "original_length": 40,
                                    "file": f"c/counterexamples/{cx.name}", "explanation": trace["explanation"],
                                    "attributed": "KAFKA-7128", "kind": "found"}]}
    _CAMPAIGN.update({"summary": summary, "runs": sink.getvalue().to_pybytes(), "table": table,
                      "cx_name": cx.name, "cx": cx.read_bytes(), "trace": trace})
    return _CAMPAIGN


def _campaign_folder(base: dict, summary: bytes | None = None, runs: bytes | None = None,
                     cx: bytes | None = None, prefix: str = "c") -> dict:
    return {f"{prefix}/summary.json": summary if summary is not None else _dump(base["summary"]),
            f"{prefix}/runs/preset=kafka-0.11/part-00000.snappy.parquet": runs if runs is not None else base["runs"],
            f"{prefix}/counterexamples/{base['cx_name']}": cx if cx is not None else base["cx"]}


def _damage_parquet(rng: random.Random, base: dict) -> tuple[str, bytes, tuple]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    raw = bytearray(base["runs"])
    kind = rng.choice(["truncate", "flip", "zero", "text", "empty", "column_type", "no_column", "nulls"])
    if kind == "truncate":
        return kind, bytes(raw[: rng.randrange(len(raw))]), (2,)
    if kind in ("flip", "zero"):       # may land in a data page: other values, still a table
        for _ in range(rng.choice([1, 3, 30])):
            i = rng.randrange(len(raw))
            if kind == "flip":
                raw[i] ^= 1 << rng.randrange(8)
            else:
                raw[i:i + 64] = bytes(len(raw[i:i + 64]))
        return kind, bytes(raw), (0, 2)
    if kind in ("text", "empty"):
        return kind, b"preset,seed\nkafka-0.11,7\n" if kind == "text" else b"", (2,)
    table = base["table"]
    col = rng.choice(["run_index", "seed", "steps", "kind_counts", "error_codes", "witnesses", "violations"])
    i = table.schema.get_field_index(col)
    if kind == "column_type":
        table = table.set_column(i, col, pa.array([rng.choice(["x", "7"]), "y"]))
    elif kind == "no_column":
        table = table.remove_column(i)
    else:
        table = table.set_column(i, col, pa.nulls(2, table.schema.field(col).type))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    # nulls: lists and maps may be null (an older table), numbers may not
    return f"{kind}:{col}", sink.getvalue().to_pybytes(), ((0, 2) if kind == "nulls" else (2,))


def _campaign_cases(rng: random.Random, n: int) -> list[Case]:
    base = _campaign_files()
    out = []
    for i in range(n):
        part = rng.choice(["summary", "summary", "runs", "runs", "counterexample", "listing"])
        if part == "summary":
            what, raw, bad = _damage_json(rng, base["summary"])
            out.append(Case(f"report:summary:{what}:{i}", ["report", "c"], _campaign_folder(base, summary=raw),
                            (2,) if bad else (0, 2), absent=("c/report.html",)))
        elif part == "runs":
            what, raw, codes = _damage_parquet(rng, base)
            out.append(Case(f"report:parquet:{what}:{i}", ["report", "c"], _campaign_folder(base, runs=raw), codes,
                            absent=("c/report.html",)))
        elif part == "counterexample":   # the report says in its section that it cannot be read; promote refuses it
            what, raw, _ = _mutate_trace(rng, base["trace"])
            cmd = rng.choice(["report", "promote"])
            args = (["report", "c"] if cmd == "report" else
                    ["promote", f"c/counterexamples/{base['cx_name']}", "--to", "{dir}/out"])
            out.append(Case(f"{cmd}:campaign-counterexample:{what}:{i}", args, _campaign_folder(base, cx=raw),
                            (0,) if cmd == "report" else (0, 2), outputs=("out",)))
        else:
            what, raw, bad = _damage_json(rng, base["summary"])
            files = {**_campaign_folder(base, prefix="cs/a-good"), **_campaign_folder(base, raw, prefix="cs/b-bad")}
            args = ["campaigns", "--out", "cs"] + (["--json"] if rng.random() < 0.5 else [])
            out.append(Case(f"campaigns:summary:{what}:{i}", args, files, (2,) if bad else (0, 2), listing=True))
    return out


def _summary_field_cases(rng: random.Random, every: bool) -> list[Case]:
    """A wrong value in each field of summary.json in turn (``every``; else a dozen of them), under report and
    campaigns: the report refuses it naming the field, or reads on where any value does (0)."""
    base = _campaign_files()
    paths = [p for p in _json_paths(base["summary"]) if p]
    out = []
    for at in (paths if every else rng.sample(paths, 12)):
        d = copy.deepcopy(base["summary"])
        node = d
        for key in at[:-1]:
            node = node[key]
        node[at[-1]] = rng.choice(WRONG_VALUES)
        where = "/".join(map(str, at))[:40]
        out.append(Case(f"report:summary:field:{where}", ["report", "c"], _campaign_folder(base, summary=_dump(d)),
                        (0, 2), absent=()))
        files = {**_campaign_folder(base, prefix="cs/a-good"), **_campaign_folder(base, _dump(d), prefix="cs/b-bad")}
        out.append(Case(f"campaigns:summary:field:{where}", ["campaigns", "--out", "cs"], files, (0, 2),
                        listing=True))
    return out


#: a checkpoint manifest as isrlab explore --spark writes it (isrlab/spark_explore.py), of some other search
_MANIFEST = {"format": 1, "identity": "0123456789abcdef", "events": [[[0, 1], 1, 0, "acked_durability", {"o": 1}, 0]],
             "levels": [{"depth": 0, "states": 1, "transitions": 0, "pruned": 0, "file": "level-0000.jsonl.gz",
                         "sha256": "0" * 64}], "kinds": {"Produce": 3}, "errors": 0, "witnesses": ["hw_advances"],
             "passed": 0, "stopped_at": None, "done": False, "at_stop": {"depth": 1}}
_MANIFEST_WRONG = {"format": [2, "1", None, 1.0], "identity": [1, None], "levels": [[], [1], None, "x", [{}]],
                   "levels/0/file": ["../level-0000.jsonl.gz", 1, "/etc/passwd", ""],
                   "levels/0/states": ["1", None, 1.5, True], "events": [[1], [[1, 2]], None, [[[0], 1, 0, 7, {}, 0]]],
                   "kinds": [{"a": "x"}, [], None], "errors": ["x", None, []], "witnesses": [[1], "x"],
                   "passed": [None, "1"], "stopped_at": ["x", [1.5], {}], "done": [1, None, "yes"],
                   "at_stop": [{"__class__": 1}, {"depth": "x"}, []]}


def _checkpoint_cases(rng: random.Random, n: int) -> list[Case]:
    """isrlab explore --spark --checkpoint on a folder whose manifest.json is damaged, of a wrong type or no regular
    file: refused before Spark starts (a subprocess each: a Spark session started by mistake is a hang, killed)."""
    args = ["explore", "--spark", "--preset", "kafka-2.4", "--brokers", "2", "--max-records", "0", "--max-states", "30",
            "--checkpoint", "{dir}/ck", "--no-archive", "--quiet"]
    specials = [("fifo", "fifo"), ("folder", "dir"), ("symlink-loop", ("symlink", None)),
                ("dangling-symlink", ("symlink", "gone.json")), ("unreadable", ("mode", b"{", 0))]
    out = []
    for i in range(n):
        roll = rng.random()
        if roll < 0.2:
            what, content = rng.choice(specials)
        elif roll < 0.5:
            what, content = "syntax", b""
            while what == "syntax" or what.startswith(("wrong_type", "drop_key")):
                what, content, _ = _damage_json(rng, _MANIFEST)
        else:
            field_, values = rng.choice(sorted(_MANIFEST_WRONG.items()))
            d = copy.deepcopy(_MANIFEST)
            node, key = d, field_
            if field_.startswith("levels/0/"):
                node, key = d["levels"][0], field_.split("/")[-1]
            node[key] = rng.choice(values)
            what, content = f"wrong:{field_}", _dump(d)
        out.append(Case(f"explore:checkpoint:{what}:{i}", args, {"ck/manifest.json": content}, subprocess=True))
    return out


def _resume_cases(rng: random.Random, n: int) -> list[Case]:
    """isrlab fuzz --resume on an interrupted campaign whose campaign.json is damaged: refused before Spark starts."""
    good = {"campaign": "c", "spec": {"presets": ["kafka-2.4"], "seed": 0, "engine": "walk", "shards": 2, "runs": 20,
                                      "shard_budget_s": None, "max_steps": None, "extensions": 6000, "invariants": [],
                                      "swarm": True, "stop_on_violation": False, "keep_going": True,
                                      "traces_per_invariant": 2, "machine_shrink_budget_s": 5.0},
            "master": "local[2,4]", "shrink_budget": 20.0, "shrink_candidates": 1, "archive": None}
    wrong = {"campaign": [1, None, "other"], "master": [1, None, []], "shrink_candidates": ["1", 0, -1, 2.5],
             "shrink_budget": ["x", -1, 10 ** 12], "archive": [1, []], "spec": [None, [], "x"],
             "spec/presets": ["kafka-2.4", [1], ["kafka-9.9"], []], "spec/seed": ["0", 1.5, None],
             "spec/engine": ["quantum", 1], "spec/shards": [0, -1, "2", 10 ** 6, None], "spec/runs": [0, "x", -5],
             "spec/extensions": [0, None], "spec/invariants": ["all", ["no_such"]], "spec/swarm": [1, "yes"],
             "spec/colour": [1], "spec/shard_budget_s": [0, -1.0, "x"]}
    out = []
    for i in range(n):
        if rng.random() < 0.4:
            what, raw, _ = _damage_json(rng, good)
            if not what.startswith(("truncate", "binary", "deep", "bigint", "long_string", "top_list", "empty", "nan")):
                what, raw = "missing_campaign", _dump({k: v for k, v in good.items() if k != "campaign"})
        else:
            field_, values = rng.choice(sorted(wrong.items()))
            d = copy.deepcopy(good)
            node, key = (d["spec"], field_[5:]) if field_.startswith("spec/") else (d, field_)
            node[key] = rng.choice(values)
            what, raw = f"wrong:{field_}", _dump(d)
        out.append(Case(f"fuzz:resume:{what}:{i}", ["fuzz", "--resume", "c"], {"c/campaign.json": raw},
                        absent=("c/summary.json", "c/_shards_done")))
    return out


# --------------------------------------------------------------------------- isrlab.toml
_GOOD_TOML = 'description = "ours"\nbase = "kafka-2.4"\nflags = { truncation = "hw" }\n'
TOML_WRONG = ['""', '"x"', "-1", "9" * 30, "2.5", "nan", "inf", "true", "[]", "{}", "[1, 2]", "{a = 1}", "[[1]]",
              "1979-05-27T07:32:00Z", "07:32:00", '"kafka-9.9"', '["KAFKA-7128", 1]']


def _toml(rng: random.Random) -> tuple[str, bytes, bool]:
    """(what, bytes of an isrlab.toml, certainly bad)."""
    kind = rng.choice(["deep_array", "deep_table", "dotted", "bigint", "bom", "bom_bad", "binary", "latin1",
                       "wrong_type", "wrong_type", "flag", "bound", "name", "unknown_key", "good", "empty",
                       "oversized", "truncate"])
    head = "[presets.my-broker]\n"
    if kind == "deep_array":
        d = rng.choice([20, 1000, 5000])
        return kind, (head + "flags = { a = " + "[" * d + "]" * d + " }\n").encode(), True
    if kind == "deep_table":
        d = rng.choice([20, 1000, 5000])
        return kind, (head + "flags = { a = " + "{b=" * d + "1" + "}" * d + " }\n").encode(), True
    if kind == "dotted":
        return kind, ("[presets]\n" + "a." * rng.choice([20, 5000]) + "b = 1\n").encode(), True
    if kind == "bigint":
        where = rng.choice(["explore = { max_crashes = %s }", "flags = { min_insync_replicas = %s }", "x = %s"])
        return kind, (head + where % ("7" * rng.choice([30, 4301, 5000])) + "\n").encode(), True
    if kind in ("bom", "bom_bad"):
        body = head + _GOOD_TOML if kind == "bom" else head + "base = \n"
        return kind, b"\xef\xbb\xbf" + body.encode(), kind == "bom_bad"
    if kind == "binary":
        return kind, bytes(rng.randrange(256) for _ in range(rng.randrange(1, 500))), True
    if kind == "latin1":
        return kind, (head + 'description = "caf').encode() + b"\xe9" + b'"\n', True
    if kind == "wrong_type":
        key = rng.choice(["base", "description", "expected", "bugs", "flags", "explore"])
        return f"{kind}:{key}", (head + f"{key} = {rng.choice(TOML_WRONG)}\n").encode(), False
    if kind == "flag":
        from isrlab.model.config import ModelConfig

        flag = rng.choice(sorted(ModelConfig().to_json()) + ["kip_999"])
        return f"{kind}:{flag}", (head + f"flags = {{ {flag} = {rng.choice(TOML_WRONG)} }}\n").encode(), False
    if kind == "bound":
        return kind, (head + f"explore = {{ max_crashes = {rng.choice(TOML_WRONG)} }}\n").encode(), False
    if kind == "name":
        name = rng.choice(["all", "MAIN", '"KAFKA-2.4"', '"a b"', '""', '"' + "n" * 100 + '"', '"caf\u00e9"'])
        return f"{kind}:{name[:12]}", (f"[presets.{name}]\n" + _GOOD_TOML).encode(), "caf" not in name   # a letter
    if kind == "unknown_key":
        return kind, rng.choice(["other = 1\n", "presets = 1\n", "[[presets]]\na = 1\n",
                                 head + "colour = 1\n"]).encode(), True
    if kind == "oversized":
        return kind, (head + 'description = "' + "x" * (2 << 20) + '"\n').encode(), True
    if kind == "truncate":
        raw = (head + _GOOD_TOML).encode()
        return kind, raw[: rng.randrange(len(raw))], False
    return kind, (b"" if kind == "empty" else (head + _GOOD_TOML).encode()), False


def _toml_cases(rng: random.Random, n: int) -> list[Case]:
    trace = sorted((ROOT / "counterexamples").glob("*-kafka-0.11-isr_entry_condition-*.json"))[0].read_bytes()
    commands = [(["presets"], (0,)), (["replay", "--quiet", "t.json"], (1,)), (["campaigns"], (0,)),
                (["invariants"], (0,)), (["bugs"], (0,)), (["mutate", "--list"], (0,)),
                (["fuzz", "--master", "none", "--engine", "walk", "--runs", "1", "--max-steps", "20", "--archive",
                  "out"], (0, 1)),
                (["explore", "--brokers", "2", "--max-records", "0", "--max-states", "30", "--out", "out"], (0, 1)),
                (["report", "c"], (0,))]
    out = []
    for i in range(n):
        what, raw, bad = _toml(rng)
        args, ok = rng.choice(commands)
        name = "pyproject.toml" if rng.random() < 0.15 else "isrlab.toml"
        if name == "pyproject.toml":    # the same table under [tool.isrlab]; other keys are the project's own
            raw = raw.replace(b"[presets", b"[tool.isrlab.presets")
            bad = bad and what != "unknown_key"
        files = {name: raw, "t.json": trace}
        if args[0] == "report":
            files.update(_campaign_folder(_campaign_files()))
        out.append(Case(f"{args[0]}:{name}:{what}:{i}", args, files, (2,) if bad else tuple(sorted({*ok, 2})),
                        outputs=("out",)))
    return out


# --------------------------------------------------------------------------- mutate's flags, the pytest plugin
def _mutate_cases(rng: random.Random, n: int) -> list[Case]:
    out = []
    base = ["mutate", "--out", "{dir}/out", "--budget", "1"]
    for i in range(n):
        flags = ["--budget", "--steps", "--seeds", "--seed", "--shrink-budget", "--tests-jobs", "--mutant", "--preset",
                 "--engine", "--half", "--conf"]
        flag = flags[i % len(flags)]    # each flag in turn: every one is in a sample of 11 or more
        value = (rng.choice(["", ",", " , ", "no_such_mutant", "x" * 500]) if flag == "--mutant" else
                 rng.choice(["kafka-9.9", "", "KAFKA-2.4", "all,nope"]) if flag == "--preset" else
                 rng.choice(["quantum", ""]) if flag in ("--engine", "--half") else
                 rng.choice(["novalue", "=x"]) if flag == "--conf" else rng.choice(BAD_NUMBERS))
        out.append(Case(f"mutate:{flag}={value[:12]!r}:{i}", [*base, flag, value], outputs=("out",)))
    return out


def _plugin_cases(rng: random.Random, n: int) -> list[Case]:
    """pytest --isrlab-traces DIR on a folder of two good traces and a bad file: the session runs the good ones."""
    good = sorted((ROOT / "counterexamples").glob("*-kafka-0.11-*.json"))[:2]
    trace = json.loads(good[0].read_text())
    out = []
    for i in range(n):
        what, raw, _ = _mutate_trace(rng, trace)
        files = {f"traces/{p.name}": p.read_bytes() for p in good}
        files["traces/zz-bad.json"] = raw
        out.append(Case(f"pytest-plugin:{what}:{i}", ["--isrlab-traces", "traces"], files, (0, 1), subprocess=True,
                        pytest=True))
    return out


def generate(seed: int = 0, n: int = 300) -> list[Case]:
    """``n`` cases at least: the special files, the flag and path cases, damaged campaign folders (report, campaigns,
    promote), isrlab.toml files under every command, mutate's flags, pytest sessions on a folder with a bad trace,
    interrupted campaigns under fuzz --resume, damaged explore --spark checkpoints, summary.json's fields one by one
    (every one from 1000 cases up), and mutated traces for the rest."""
    rng = random.Random(seed)
    fixed = (_special_cases() + _flag_cases(rng, max(40, n // 6)) + _campaign_cases(rng, n // 5)
             + _toml_cases(rng, n // 6) + _mutate_cases(rng, max(5, n // 40)) + _plugin_cases(rng, max(2, n // 150))
             + _resume_cases(rng, max(5, n // 40)) + _checkpoint_cases(rng, max(4, n // 100))
             + _summary_field_cases(rng, every=n >= 1000))
    return fixed + _trace_cases(rng, max(0, n - len(fixed)))


# --------------------------------------------------------------------------- running and judging
@dataclass
class Outcome:
    code: int | None          # None: hung
    stdout: str
    stderr: str
    leftovers: list


def _materialise(case: Case, folder: Path) -> list:
    for name, content in case.files.items():
        p = folder / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if content == "fifo":
            p.unlink(missing_ok=True)
            os.mkfifo(p)
        elif content == "dir":
            p.unlink(missing_ok=True)
            p.mkdir()
        elif isinstance(content, tuple) and content[0] == "sparse":
            with open(p, "wb") as fh:
                fh.truncate(content[1])
        elif isinstance(content, tuple) and content[0] == "symlink":     # to a name beside it; None: a loop
            p.unlink(missing_ok=True)
            os.symlink(content[1] or p.name, p)
        elif isinstance(content, tuple) and content[0] == "mode":       # bytes and a mode (0: unreadable)
            p.write_bytes(content[1])
            p.chmod(content[2])
        else:
            p.write_bytes(content)
    return [a.replace("{dir}", str(folder)).replace("{file}", str(folder / "file")) for a in case.args]


def _leftovers(case: Case, folder: Path, code: int | None) -> list:
    left = [str(p.relative_to(folder)) for p in folder.rglob(".tmp-*")]
    left += [str(p.relative_to(folder)) for p in folder.rglob(".isrlab-probe-*")]
    if code == 2:
        for out in case.outputs:
            o = folder / out
            if o.exists() and any(o.iterdir()):
                left.append(f"{out}/ not empty")
        if (folder / "campaigns").exists():
            left.append("campaigns/")
        left += [f"{name} written" for name in case.absent if (folder / name).exists()]
    return left


class _Alarm(Exception):
    pass


def run_case(case: Case) -> Outcome:
    """Run one case in a fresh temporary folder (its working folder too) and collect what the oracle needs."""
    folder = Path(tempfile.mkdtemp(prefix="isrlab-malformed-"))
    cwd = os.getcwd()
    try:
        args = _materialise(case, folder)
        if case.subprocess:
            return _run_subprocess(case, args, folder)
        return _run_in_process(case, args, folder)
    finally:
        os.chdir(cwd)
        shutil.rmtree(folder, ignore_errors=True)


def _run_subprocess(case: Case, args: list, folder: Path) -> Outcome:
    isrlab = os.path.join(os.path.dirname(sys.executable), "isrlab")
    argv = ([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *args] if case.pytest
            else [isrlab, *args])
    proc = subprocess.Popen(argv, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=HANG_SECONDS)
        return Outcome(proc.returncode, out, err, _leftovers(case, folder, proc.returncode))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the process group this case started, and nothing else
        out, err = proc.communicate()
        return Outcome(None, out, err, [])


def _run_in_process(case: Case, args: list, folder: Path) -> Outcome:
    from click.testing import CliRunner

    from isrlab.cli import main

    os.chdir(folder)

    def alarm(signum, frame):
        raise _Alarm()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(HANG_SECONDS)
    try:
        r = CliRunner().invoke(main, args, catch_exceptions=True)
    except _Alarm:
        return Outcome(None, "", "", [])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    err = r.stderr
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        import traceback

        err += "Traceback (in process)\n" + "".join(traceback.format_exception(r.exception))
    code = r.exit_code if isinstance(r.exit_code, int) else 3
    return Outcome(code, r.stdout, err, _leftovers(case, folder, code))


def classify(case: Case, o: Outcome) -> str:
    """"ok", or what went wrong: hang, traceback, internal error, wrong exit code, multi-line error, leftover."""
    if o.code is None:
        return "hang"
    if "Traceback" in o.stderr or "Traceback" in o.stdout:
        return "traceback"
    if "internal error" in o.stderr:
        return "internal error"
    if case.pytest:    # the session goes on past the bad file: the two good traces pass, the bad one is named
        import re

        if "internal error" in o.stdout:
            return "internal error"

        passed = re.search(r"(\d+) passed", o.stdout)
        if "INTERNALERROR" in o.stdout or "Interrupted" in o.stdout or not passed or int(passed.group(1)) < 2:
            return "session stopped"
        if o.code not in case.expect or (o.code == 1 and "zz-bad.json" not in o.stdout):
            return "wrong exit code"
        return "ok"
    if o.code not in case.expect:
        return "wrong exit code"
    if o.code == 2:
        lines = [ln for ln in o.stderr.splitlines() if ln.strip()]
        if case.listing:      # the readable entries on stdout, then one line per bad one
            if not lines or not all(ln.startswith("isrlab: error: ") for ln in lines):
                return "multi-line error"
        elif len(lines) != 1 or not lines[0].startswith("isrlab: error: ") or o.stdout.strip():
            return "multi-line error"
    if o.leftovers:
        return "leftover file"
    return "ok"
