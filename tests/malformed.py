"""A seeded generator of malformed invocations, as a user's broken files and flags would be, and their oracle.

Cases mutate the project's own traces (counterexamples/, tests/scenarios/, tests/fixtures/, tests/kafka/)
and command lines: truncated or binary files, nesting and integers beyond the limits, NaN, wrong types,
missing or unknown fields, unknown actions and invariants, special files (FIFO, folder, device), bad
numbers, bad output paths. ``run_case`` runs one in process (click's runner, under an alarm) or as a
subprocess (special files, where a hang must be caught by a timeout), and ``classify`` names what went
wrong: a traceback, a hang, a wrong exit code, a multi-line error, or a file left behind.

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
    files: dict = field(default_factory=dict)   # name -> bytes, or "fifo" / "dir" / ("sparse", size)
    expect: tuple = (2,)                        # acceptable exit codes
    subprocess: bool = False
    outputs: tuple = ()                         # output folders (under {dir}) that must stay empty on exit 2


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
                       "dup_actions", "swap_actions", "drop_action", "provenance_deep", "format", "start"])
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
    out = []
    for cmd in ("replay", "explain", "shrink", "promote"):
        tail = {"shrink": ["--budget", "1", "--archive", "{dir}/out"], "promote": ["--to", "{dir}/out"]}.get(cmd, [])
        out += [Case(f"{cmd}:fifo", [cmd, "{dir}/fifo", *tail], {"fifo": "fifo"}, subprocess=True, outputs=("out",)),
                Case(f"{cmd}:folder", [cmd, "{dir}/d", *tail], {"d": "dir"}, outputs=("out",)),
                Case(f"{cmd}:dev-zero", [cmd, "/dev/zero", *tail], subprocess=True, outputs=("out",)),
                Case(f"{cmd}:dev-null", [cmd, "/dev/null", *tail], outputs=("out",)),
                Case(f"{cmd}:missing", [cmd, "{dir}/nope.json", *tail], outputs=("out",)),
                Case(f"{cmd}:oversized", [cmd, "{dir}/big.json", *tail], {"big.json": ("sparse", 40 << 20)},
                     outputs=("out",))]
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


def generate(seed: int = 0, n: int = 300) -> list[Case]:
    """``n`` cases at least: the special files, the flag and path cases, and mutated traces for the rest."""
    rng = random.Random(seed)
    fixed = _special_cases() + _flag_cases(rng, max(40, n // 6))
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
        if content == "fifo":
            os.mkfifo(p)
        elif content == "dir":
            p.mkdir()
        elif isinstance(content, tuple) and content[0] == "sparse":
            with open(p, "wb") as fh:
                fh.truncate(content[1])
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
    proc = subprocess.Popen([isrlab, *args], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
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
    if o.code not in case.expect:
        return "wrong exit code"
    if o.code == 2:
        lines = [ln for ln in o.stderr.splitlines() if ln.strip()]
        if len(lines) != 1 or not lines[0].startswith("isrlab: error: ") or o.stdout.strip():
            return "multi-line error"
    if o.leftovers:
        return "leftover file"
    return "ok"
