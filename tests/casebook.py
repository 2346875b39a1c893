"""What tests/kafka/ (Kafka 2.4.0) and tests/kafka_kraft/ (Kafka 3.7.0) share: the registry of a release's test cases,
the half of the trace builder that does not depend on the era, and the script that writes the traces and the README
tables from the registry.

A suite makes one ``Book`` (the release tag, its test sources, the vocabulary its unexpressed cases lack, the test
methods Kafka has) and a ``Case`` subclass of ``CaseBase`` with its era's helpers; its ``build_traces.py`` calls
``build_main`` after importing its cases_*.py modules.  The ``check`` calls of a case state what Kafka's test asserts,
never values read back from the model.
"""

from __future__ import annotations

import json
from pathlib import Path

from isrlab.model import actions as A
from isrlab.model.config import preset
from isrlab.model.encode import encode
from isrlab.model.step import initial_state, step, tick_limit


class Book:
    """The registry of one Kafka release's test cases: "Class.testName" -> ("expressed", builder) |
    ("missing", category, detail) | ("out", detail).

    ``expected``: for each class, either its number of test methods at the tag or their names in file order (then the
    README lists them in that order and the registry must name exactly those)."""

    def __init__(self, tag: str, sources: dict, missing: dict, expected: dict):
        self.tag = tag
        self.sources = sources
        self.missing_vocabulary = missing
        self.expected = expected
        self.registry: dict = {}

    def case(self, name: str):
        """Register a builder for one Kafka test case (it returns a Case)."""
        def register(fn):
            assert name not in self.registry, name
            self.registry[name] = ("expressed", fn)
            return fn
        return register

    def missing(self, name: str, category: str, detail: str) -> None:
        assert name not in self.registry, name
        assert category in self.missing_vocabulary, category
        self.registry[name] = ("missing", category, detail)

    def out_of_scope(self, name: str, detail: str) -> None:
        assert name not in self.registry, name
        self.registry[name] = ("out", detail)

    def _listed(self) -> bool:
        return all(isinstance(v, list) for v in self.expected.values())

    def order(self) -> list:
        """Every registered case in the README's order: Kafka's file order where the names are listed."""
        if self._listed():
            return [f"{cls}.{t}" for cls, tests in self.expected.items() for t in tests
                    if f"{cls}.{t}" in self.registry]
        return list(self.registry)

    def check_registry(self) -> list:
        """The registry against Kafka's test methods at the tag: one line per disagreement."""
        if self._listed():
            want = [f"{cls}.{t}" for cls, tests in self.expected.items() for t in tests]
            problems = [f"{n}: a test case of Kafka {self.tag} not in the registry" for n in want
                        if n not in self.registry]
            problems += [f"{n}: registered, not a test case of Kafka {self.tag}" for n in self.registry
                         if n not in want]
            if len(set(want)) != len(want):
                problems.append("a test case name is listed twice")
            return problems
        got: dict = {}
        for name in self.registry:
            got[name.split(".")[0]] = got.get(name.split(".")[0], 0) + 1
        return [f"{cls}: {got.get(cls, 0)} cases registered, Kafka {self.tag} has {n}"
                for cls, n in self.expected.items() if got.get(cls, 0) != n]


class CaseBase:
    """One trace being written: the model state is kept alongside, so every action is known enabled."""

    BOOK: Book
    DEFAULT_ACKS = -1

    def __init__(self, kafka_case: str, description: str, preset_name: str, start: dict | None = None, **config):
        self.kafka_case = kafka_case
        self.cls, self.test = kafka_case.split(".")
        self.description = description
        self.preset = preset_name
        # budgets for the engines, not Kafka settings
        config.setdefault("max_records", 50)
        config.setdefault("max_crashes", 10)
        config.setdefault("max_session_expirations", 10)
        self.cfg = preset(preset_name).config.replace(**config)
        self.start = start                 # the cluster the trace starts from (model/start.py), None: empty
        self.s = initial_state(self.cfg, start)
        self.actions: list = []
        self.checks: list = []
        self.expect = "pass"
        self.violated = None
        self.failure = None
        self.notes: list = []
        self.not_checked: list = []

    # ------------------------------------------------------------------ raw actions and checks
    def do(self, a):
        s2 = step(self.cfg, self.s, a)
        if s2 is None:
            raise AssertionError(f"{self.kafka_case}: action {len(self.actions) + 1} {A.describe(a)} "
                                 f"is not enabled at {self.s.now}")
        self.s = s2
        self.actions.append(a)
        return self

    def check(self, path: str, equals, why: str):
        equals = json.loads(json.dumps(equals))        # a copy: a list the caller changes later stays as it was
        self.checks.append({"after": len(self.actions), "path": path, "equals": equals, "why": why})
        return self

    def fails(self, reason: str):
        """The model does not meet this case's checks (or expectation): the trace goes to failing/."""
        self.failure = reason
        return self

    def expect_violation(self, invariant: str):
        self.expect, self.violated = "violation", invariant
        return self

    def adapt(self, note: str):
        """How the trace departs from the letter of Kafka's test (the facts it keeps are checked)."""
        self.notes.append(note)
        return self

    def unchecked(self, what: str):
        """An assertion of Kafka's test that the trace cannot check (listed in the README's table)."""
        self.not_checked.append(what)
        return self

    # ------------------------------------------------------------------ helpers both eras use
    def crash(self, b: int, clean: bool = True):
        return self.do(A.BrokerCrash(b, clean))

    def restart(self, b: int):
        return self.do(A.BrokerRestart(b))

    def produce(self, b: int, acks: int | None = None, n: int = 1, p: int = 0):
        for _ in range(n):
            self.do(A.Produce(b, p, self.DEFAULT_ACKS if acks is None else acks))
        return self

    def ofle(self, b: int, p: int = 0):
        """One OffsetsForLeaderEpoch round: one step, or its request and response where the model splits it."""
        if not self.cfg.offsets_for_leader_epoch_in_flight:
            return self.do(A.OffsetsForLeaderEpoch(b, p))
        self.do(A.OffsetsForLeaderEpochRequest(b, p))
        return self.do(A.OffsetsForLeaderEpochResponse(b, p)) if self.s.brokers[b].fetchers[p].epoch_request else self

    def fetch(self, b: int, p: int = 0, rounds: int = 1):
        """Follower b's fetch round(s): the leader reads and answers, b processes the answer."""
        for _ in range(rounds):
            self.do(A.FetchRequest(b, p)).do(A.FetchResponse(b, p))
        return self

    def catch_up(self, followers=None, p: int = 0, max_rounds: int = 50):
        """Followers truncate (OffsetsForLeaderEpoch) if they must and fetch until a round changes nothing."""
        for _ in range(max_rounds):
            before = encode(self.s)
            for b, br in enumerate(self.s.brokers):
                if followers is not None and b not in followers:
                    continue
                f = br.fetchers[p] if br.alive else None
                if f is None:
                    continue
                if f.state == "truncating":
                    self.ofle(b, p)
                    f = self.s.brokers[b].fetchers[p]
                if f is not None and f.state == "fetching" and self.s.brokers[f.leader].alive:
                    self.fetch(b, p)
            if encode(self.s) == before:
                return self
        raise AssertionError(f"{self.kafka_case}: followers did not settle")

    def run_due_tasks(self, skip=()):
        """Everything the cluster does on its own that is due now (the era's tasks)."""
        raise NotImplementedError

    def sleep(self, ms: int, run_at_end: bool = True, skip=(), fetching=()):
        """Let ms of model time pass; what falls due on the way runs when it is due (what falls due exactly at the end
        only with run_at_end, so that other actions can come first).  ``fetching``: (follower, partition) pairs that
        fetch at every instant the clock stops, so that they stay caught up."""
        target = self.s.now + ms
        self.run_due_tasks(skip)
        while self.s.now < target:
            limit = tick_limit(self.cfg, self.s)
            nxt = target if limit is None or limit >= target else limit
            if nxt > self.s.now:
                self.do(A.Tick(nxt - self.s.now))
            for b, p in fetching:
                self.catch_up([b], p)
            if self.s.now < target or run_at_end:
                self.run_due_tasks(skip)
        return self

    # ------------------------------------------------------------------ output
    def to_json(self) -> dict:
        tag = self.BOOK.tag
        source = self.BOOK.sources[self.cls]
        prov = {
            "engine": "hand-written",
            "source": f"Kafka {tag} {source} {self.test} (apache/kafka at tag {tag})",
            "kafka_test": self.kafka_case,
            "kafka_file": source,
            "kafka_tag": tag,
        }
        if self.notes:
            prov["adaptations"] = self.notes
        if self.not_checked:
            prov["not_checked"] = self.not_checked
        if self.failure:
            prov["model_disagrees"] = self.failure
        out = {
            "format": "isrlab-trace",
            "version": 1,
            "preset": self.preset,
            "description": self.description,
            "config": self.cfg.identity_json(),
            "provenance": prov,
            "expect": self.expect,
            "violated": self.violated,
        }
        if self.start is not None:
            out["start"] = self.start
        out["actions"] = [A.action_to_json(a) for a in self.actions]
        out["checks"] = self.checks
        return out


# ====================================================================== building the traces and the README
TABLE_BEGIN = "<!-- cases table: written by build_traces.py -->"
TABLE_END = "<!-- end of cases table -->"
_KINDS = ("expressed", "failing", "missing", "out")


def outcome(data: dict) -> tuple[bool, list]:
    """(matches its expectation with every check holding, the problems) for one trace's JSON."""
    from isrlab.model.trace import trace_from_json
    from isrlab.properties.replay import replay
    result = replay(trace_from_json(data), with_changes=False)
    problems = list(result.check_failures)
    if data["expect"] == "pass" and result.violations:
        problems += [f"violation {v.invariant} at step {v.step}" for v in result.violations]
    if data["expect"] == "violation" and data["violated"] not in {v.invariant for v in result.violations}:
        problems.append(f"expected a violation of {data['violated']}")
    return not problems, problems


def dumps(data: dict) -> str:
    """One action and one check per line: diffs stay readable."""
    head = {k: v for k, v in data.items() if k not in ("actions", "checks")}
    lines = [json.dumps(head, indent=2)[:-2] + ","]
    lines.append('  "actions": [')
    lines.append(",\n".join("    " + json.dumps(a) for a in data["actions"]))
    lines.append("  ],")
    lines.append('  "checks": [')
    lines.append(",\n".join("    " + json.dumps(c) for c in data["checks"]))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def build_all(book: Book) -> dict:
    built = {}
    for name, entry in book.registry.items():
        if entry[0] != "expressed":
            continue
        c = entry[1]()
        assert c.kafka_case == name, (name, c.kafka_case)
        assert c.checks, f"{name}: no checks"
        built[name] = c
    return built


def counts(book: Book, built: dict):
    """(cases per kind, missing-vocabulary category -> cases, class -> cases per kind)."""
    n = dict.fromkeys(_KINDS, 0)
    by_missing: dict = {}
    by_class: dict = {}
    for name, entry in book.registry.items():
        k = "failing" if entry[0] == "expressed" and built[name].failure else entry[0]
        n[k] += 1
        by_class.setdefault(name.split(".")[0], dict.fromkeys(_KINDS, 0))[k] += 1
        if entry[0] == "missing":
            by_missing.setdefault(entry[1], []).append(name)
    return n, by_missing, by_class


def status_of(book: Book, name: str, built: dict, results: dict) -> tuple[str, str]:
    """(the README's status text, the trace's path in the suite's folder or "") of one case."""
    entry = book.registry[name]
    if entry[0] == "missing":
        return f"not expressible: needs {book.missing_vocabulary[entry[1]]}. {entry[2]}", ""
    if entry[0] == "out":
        return f"out of scope: {entry[1]}", ""
    c = built[name]
    ok, problems = results[name]
    if c.failure:
        status = f"expressed, FAILS: {c.failure}" if not ok else "expressed, marked failing but PASSES"
        return status, f"failing/{name}.json"
    status = "expressed, passing" if ok else "expressed, BROKEN: " + "; ".join(problems)
    if c.not_checked:
        status += " (not checked: " + "; ".join(c.not_checked) + ")"
    return status, f"{name}.json"


def render_tables(book: Book, built: dict, results: dict, count_lines) -> str:
    """The README's generated part; ``count_lines(n, in_scope, partial)`` gives the suite's bullet lines."""
    n, by_missing, by_class = counts(book, built)
    in_scope = n["expressed"] + n["failing"] + n["missing"]
    partial = sorted(name for name, c in built.items() if c.not_checked and not c.failure)
    out = [TABLE_BEGIN, "", "### Counts", ""]
    out += count_lines(n, in_scope, partial)
    out.append("")
    out.append("| class | in scope | passing | failing | not expressible | out of scope |")
    out.append("|---|---|---|---|---|---|")
    for cls in book.sources:
        b = by_class.get(cls, dict.fromkeys(_KINDS, 0))
        out.append(f"| {cls} | {b['expressed'] + b['failing'] + b['missing']} | {b['expressed']} | "
                   f"{b['failing']} | {b['missing']} | {b['out']} |")
    out += ["", "### Not expressible, by the vocabulary they need", "",
            "| missing vocabulary | cases | which |", "|---|---|---|"]
    for cat, names in sorted(by_missing.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append(f"| {book.missing_vocabulary[cat]} | {len(names)} | {', '.join(names)} |")
    out += ["", "### Every test case"]
    order = book.order()
    for cls, source in book.sources.items():
        out += ["", f"#### {cls} (`{source}`)", "", "| test case | status | trace |", "|---|---|---|"]
        for name in order:
            if name.split(".")[0] != cls:
                continue
            status, where = status_of(book, name, built, results)
            link = f"[{Path(where).name}]({where})" if where else ""
            out.append(f"| {name.split('.', 1)[1]} | {status.replace('|', '/')} | {link} |")
    out += ["", TABLE_END]
    return "\n".join(out)


def build_main(argv, here: Path, book: Book, count_lines) -> int:
    """Build every case, replay it, write the traces (``failing/`` for the cases marked failing) and the README's
    tables; ``--check`` writes nothing and reports each file that differs from what it would write.  Exit 1 when a
    case does not replay as marked, the registry is off, or (with ``--check``) a file is out of date."""
    write = "--check" not in argv
    failing_dir = here / "failing"
    readme = here / "README.md"
    built = build_all(book)
    results = {}
    bad = []
    for name, c in built.items():
        data = c.to_json()
        ok, problems = outcome(data)
        results[name] = (ok, problems)
        if c.failure and ok:
            bad.append(f"{name}: marked failing ({c.failure}) but replays as expected")
        if not c.failure and not ok:
            bad.append(f"{name}: " + "; ".join(problems))
        folder = failing_dir if c.failure else here
        stale = (here if c.failure else failing_dir) / f"{name}.json"
        if write:
            folder.mkdir(exist_ok=True)
            (folder / f"{name}.json").write_text(dumps(data), encoding="utf-8")
            if stale.exists():
                stale.unlink()
        else:
            target = folder / f"{name}.json"
            if not target.exists() or target.read_text(encoding="utf-8") != dumps(data) or stale.exists():
                bad.append(f"{name}: {target.relative_to(here)} is not what the case builds (run build_traces.py)")
    unknown = [p for folder in (here, failing_dir) for p in folder.glob("*.json") if p.stem not in built]
    text = readme.read_text(encoding="utf-8") if readme.exists() else TABLE_BEGIN + "\n" + TABLE_END + "\n"
    head, _, rest = text.partition(TABLE_BEGIN)
    _, _, tail = rest.partition(TABLE_END)
    new_text = head + render_tables(book, built, results, count_lines) + tail
    if write:
        for p in unknown:
            p.unlink()
        readme.write_text(new_text, encoding="utf-8")
    else:
        bad += [f"{p.relative_to(here)}: no case builds it" for p in unknown]
        if new_text != text:
            bad.append("README.md's tables are not what the registry gives (run build_traces.py)")
    bad += book.check_registry()
    n, _, _ = counts(book, built)
    print(f"{len(built)} traces built: {n['expressed']} passing cases, {n['failing']} failing; "
          f"{n['missing']} not expressible, {n['out']} out of scope")
    for line in bad:
        print("PROBLEM", line)
    return 1 if bad else 0
