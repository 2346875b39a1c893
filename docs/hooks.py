"""MkDocs hooks: the pages that restate the code are generated from it at build time, so they cannot drift.

Generated (nothing of it is checked in):

* ``reference/presets.md``, ``reference/bugs.md``, ``reference/flags.md``, ``reference/invariants.md`` and
  ``reference/trace-format.md``: from ``model/config.py`` (presets, ``ModelConfig``'s fields and their ``#:``
  comments), ``model/bugs.toml``, ``properties/invariants.py``'s catalogue and ``isrlab/trace.schema.json``;
* ``findings/index.md`` and one page per known bug: the catalogue entry, the flag's Kafka source, the archived
  counterexamples attributed to it (``counterexamples/``), each with its diagram drawn by ``isrlab/diagram.py``,
  and the measured times (``benchmarks/RESULTS.md``, ``benchmarks/explore_defaults.json``);
* ``fidelity/*.md`` and ``concepts/engine-internals.md``, ``concepts/proof-claims.md``: the repository's own
  READMEs (``model/``, ``tests/kafka/``, ``tests/kafka_kraft/``, ``properties/``, ``specs/``), their links to files
  outside the site turned into code spans;
* ``performance/explore-defaults.md``: ``benchmarks/explore.py --table-from benchmarks/explore_defaults.json``.

The CLI reference is ``reference/cli.md``, drawn by mkdocs-click from ``isrlab.cli.main``.
"""

from __future__ import annotations

import dataclasses
import glob
import inspect
import io
import json
import os
import re
import subprocess
import sys
import tokenize

from mkdocs.structure.files import File

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: repository READMEs shown as pages: (source, page, title)
INCLUDED = (
    ("model/README.md", "fidelity/model.md", None),
    ("tests/kafka/README.md", "fidelity/kafka-2.4-cases.md", None),
    ("tests/kafka_kraft/README.md", "fidelity/kafka-kraft-cases.md", None),
    ("properties/README.md", "concepts/engine-internals.md", None),
    ("specs/README.md", "concepts/proof-claims.md", None),
)

#: the hand-written findings page of a bug, instead of a generated one
WRITTEN = {"pending-reset-race": "kraft-pending-reset-race.md"}

KIND_WORDS = {"fix": "a Kafka fix (JIRA or KIP)", "check": "a guard of Kafka's code switched off (no JIRA)",
              "setting": "a setting or fault that is no bug of Kafka's; its \"fix\" is the safe value",
              "finding": "a model finding, not confirmed upstream; its fix is the model's proposal"}


def _read(rel: str) -> str:
    with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
        return fh.read()


def slug(bug_id: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", bug_id.lower()).strip("-")


def bug_page(bug_id: str) -> str:
    """The findings page of a known bug, relative to findings/."""
    return WRITTEN.get(bug_id, f"{slug(bug_id)}.md")


def upstream_link(bug_id: str) -> str:
    if bug_id.startswith("KAFKA-"):
        return f"[{bug_id}](https://issues.apache.org/jira/browse/{bug_id})"
    if bug_id.startswith("KIP-"):
        return f"{bug_id} (Kafka Improvement Proposal)"
    return "none (no upstream issue)"


# --------------------------------------------------------------------------- the code's data

def flag_docs() -> list[tuple[str, str, object, str]]:
    """(section, field, default, doc) for every ModelConfig field in source order, ``doc`` from its ``#:`` lines."""
    from isrlab.model.config import ModelConfig

    src = inspect.getsource(ModelConfig)
    defaults = {f.name: f.default for f in dataclasses.fields(ModelConfig)}
    out, section, doc = [], "", []
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            text = tok.string
            m = re.match(r"#\s*---\s*(.*?)\s*-*\s*$", text)
            if m:
                section, doc = m.group(1), []
            elif text.startswith("#:"):
                doc.append(text[2:].strip())
        elif tok.type == tokenize.NAME and tok.start[1] == 4 and tok.string in defaults and tok.line.strip().startswith(
                f"{tok.string}:"):
            out.append((section, tok.string, defaults[tok.string], " ".join(doc)))
            doc = []
        elif tok.type == tokenize.NAME and tok.string == "def":
            break
    return out


def archived() -> list[dict]:
    """Every archived counterexample's header, with ``file`` (its path in the repository)."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "counterexamples", "*.json"))):
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
        d["file"] = os.path.relpath(path, ROOT).replace(os.sep, "/")
        out.append(d)
    return out


def attributed_finds() -> tuple[str, list[dict]]:
    """The newest "Time to find by the preset's own bug" table of benchmarks/RESULTS.md: (its command, rows)."""
    text = _read("benchmarks/RESULTS.md")
    at = text.rfind("### Time to find by the preset's own bug")
    if at < 0:
        raise ValueError("benchmarks/RESULTS.md has no section 'Time to find by the preset's own bug'")
    body = text[at:].split("\n### ", 1)[0]
    command = next((line.strip() for line in body.splitlines() if line.startswith("    ")), "")
    lines = [line for line in body.splitlines() if line.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = [dict(zip(head, (c.strip() for c in line.strip("|").split("|")))) for line in lines[2:]]
    return command, rows


def explore_defaults() -> dict:
    with open(os.path.join(ROOT, "benchmarks", "explore_defaults.json"), encoding="utf-8") as fh:
        return {r["preset"]: r for r in json.load(fh)}


# --------------------------------------------------------------------------- pages

def page_bugs() -> str:
    from isrlab.cli import bugs_markdown

    return ("# Known bugs\n\n"
            "*Generated from `model/bugs.toml` by `isrlab bugs --markdown` when the site is built.*\n\n"
            "A verdict names a bug, not an invariant. Each known bug is a configuration flag with the value that fixes "
            "it and the invariants it may break. A violation counts as a known bug only when replaying its trace with "
            "that bug's fix removes it; a violation no known fix removes is UNEXPECTED ([Attribution]"
            "(../concepts/attribution.md)). Kinds: " + "; ".join(f"**{k}**: {v}" for k, v in KIND_WORDS.items())
            + ".\n\nEach bug's page in the [findings catalogue](../findings/index.md) has its archived trace, diagram "
            "and times.\n\n" + bugs_markdown())


def page_presets() -> str:
    from isrlab.model.config import DEFAULT_PRESET, MAIN_JOB_LEAVES_OUT, PRESETS, ModelConfig, explore_bounds

    default = ModelConfig().to_json()
    out = ["# Presets", "",
           "*Generated from `model/config.py` when the site is built; `isrlab presets` (or `--json`) prints the same.*",
           "", f"A preset is a named configuration with the bugs it is expected to show. `{DEFAULT_PRESET}` is the "
           "default. Flags are listed where they differ from `ModelConfig()`'s defaults (Kafka 2.4.0); each flag is "
           "explained in [Flags](flags.md). \"Main job\" says whether `./run main` runs the preset.", "",
           "| preset | era | expected | expected bugs | other known bugs it contains | main job |",
           "|---|---|---|---|---|---|"]
    for name in sorted(PRESETS):
        p = PRESETS[name]
        era = "KRaft" if p.config.kip_500 else "ZooKeeper"
        expected = ", ".join(f"[{b}](../findings/{bug_page(b)})" for b in p.bugs) or "-"
        others = ", ".join(b.id for b in p.known_bugs if b.id not in p.bugs) or "-"
        main = "left out: " + MAIN_JOB_LEAVES_OUT[name] if name in MAIN_JOB_LEAVES_OUT else "yes"
        out.append(f"| `{name}` | {era} | `{p.expected}` | {expected} | {others} | {main} |")
    out += ["", "## Each preset", ""]
    for name in sorted(PRESETS):
        p = PRESETS[name]
        cfg = p.config.to_json()
        changed = {k: v for k, v in cfg.items() if v != default[k]}
        out += [f"### {name}", "", p.description, ""]
        if p.reference:
            out += [f"- Kafka version: {p.reference}"]
        out += [f"- expected: `{p.expected}`" + (f" (bugs: {', '.join(p.bugs)})" if p.bugs else ""),
                "- flags: " + (", ".join(f"`{k} = {json.dumps(v)}`" for k, v in changed.items()) or "the defaults"),
                "- `isrlab explore` bounds: " + ", ".join(f"`{k}` {json.dumps(v)}"
                                                           for k, v in explore_bounds(name).items()), ""]
    return "\n".join(out) + "\n"


def page_flags() -> str:
    from isrlab.model.bugs import BUGS
    from isrlab.model.config import PRESETS, ModelConfig

    default = ModelConfig()
    by_flag: dict = {}
    for b in BUGS.values():
        by_flag.setdefault(b.flag, []).append(b)
    out = ["# Flags", "",
           "*Generated from `ModelConfig` in `model/config.py` (each field's `#:` comment) and `model/bugs.toml` when "
           "the site is built.*", "",
           "Every historical rule change is a flag named after its KIP or JIRA, so `git grep kip_320` finds "
           "everything about it. \"Known bug\" names the bug whose fix is this flag's value; \"presets that change "
           "it\" counts the presets whose value differs from the default.", ""]
    section = None
    for sec, name, value, doc in flag_docs():
        if sec != section:
            section = sec
            out += ["", f"## {sec[:1].upper() + sec[1:]}", "", "| flag | default | known bug | presets that change it | what |",
                    "|---|---|---|---|---|"]
        bugs = ", ".join(f"[{b.id}](../findings/{bug_page(b.id)}) (fixed: `{json.dumps(b.fixed)}`)"
                         for b in by_flag.get(name, [])) or "-"
        n = sum(getattr(p.config, name) != getattr(default, name) for p in PRESETS.values())
        text = (doc or "-").replace("|", "\\|")
        out.append(f"| `{name}` | `{json.dumps(value)}` | {bugs} | {n} | {text} |")
    return "\n".join(out) + "\n"


def page_invariants() -> str:
    from isrlab.properties.invariants import CATALOGUE, LIVENESS

    words = {"always": "Safety: checked on every state (scope `state`) or every transition (scope `step`)",
             "sometimes": "Witnesses: something a run or a campaign must reach, so that a run in which nothing "
                          "happens cannot pass",
             "documented": "Documented losses: never a violation, reported with their facts",
             "eventually": "Liveness: checked after a run by letting the cluster settle, and by "
                           "`isrlab explore --liveness`"}
    out = ["# Invariants", "",
           "*Generated from the catalogue in `properties/invariants.py` when the site is built; "
           "`isrlab invariants` prints the same.*", "",
           "What each kind means: [Invariants](../concepts/invariants.md).", ""]
    rows = [(i.name, i.kind, i.scope, i.statement, i.source) for i in CATALOGUE]
    rows += [(lv.name, lv.kind, "settle", lv.statement, lv.source) for lv in LIVENESS]
    for kind in ("always", "eventually", "sometimes", "documented"):
        mine = [r for r in rows if r[1] == kind]
        if not mine:
            continue
        out += [f"## {kind}", "", words[kind] + f" ({len(mine)}).", "", "| name | scope | statement | Kafka source |",
                "|---|---|---|---|"]
        out += [f"| `{n}` | {sc} | {st.replace('|', chr(92) + '|')} | {so.replace('|', chr(92) + '|')} |"
                for n, _k, sc, st, so in mine]
        out.append("")
    return "\n".join(out)


def _type(prop: dict) -> str:
    if "const" in prop:
        return f"`{json.dumps(prop['const'])}`"
    if "enum" in prop:
        return " or ".join(f"`{json.dumps(v)}`" for v in prop["enum"])
    t = prop.get("type", "")
    return " or ".join(t) if isinstance(t, list) else t or "see the schema"


def page_trace_format() -> str:
    schema = json.loads(_read("isrlab/trace.schema.json"))
    required = set(schema.get("required", []))
    out = ["# Trace format", "",
           "*Generated from `isrlab/trace.schema.json` when the site is built.*", "",
           schema.get("description", ""), "",
           "A trace is a JSON file: a header with the format version, the full configuration, the preset, "
           "provenance, the expected outcome (`pass`, or `violation` with the invariant's name) and the list of "
           "actions, plus optional `checks` on the state after a given step (dotted paths into the state's canonical "
           "JSON, e.g. `brokers.1.logs.0.high_watermark`). Every nondeterministic choice is a field of an action, so "
           "replaying never draws randomness.", "",
           "## Top-level fields", "", "| field | required | type | description |", "|---|---|---|---|"]
    for name, prop in schema.get("properties", {}).items():
        desc = prop.get("description", "").replace("|", "\\|")
        out.append(f"| `{name}` | {'yes' if name in required else 'no'} | {_type(prop)} | {desc} |")
    out += ["", "## A trace, abridged", "", "```json",
            '{"format": "isrlab-trace", "version": 1, "preset": "kafka-2.4", "config": {...},',
            ' "expect": "pass", "violated": null,',
            ' "actions": [{"type": "ElectController", "broker": 0},',
            '             {"type": "DeliverControlRequest", "controller": 0, "broker": 1}, ...]}',
            "```", ""]
    out += page_actions()
    out += ["## The whole schema", "", '??? note "isrlab/trace.schema.json"', "",
            "    ```json"]
    out += ["    " + line for line in json.dumps(schema, indent=1).splitlines()]
    out += ["    ```", ""]
    return "\n".join(out)


def page_actions() -> list[str]:
    """The action vocabulary (model/actions.py): each action's JSON ``type``, its fields and its docstring's first
    paragraph."""
    from isrlab.model import actions as A

    out = ["## Actions", "",
           f"*From `model/actions.py`: its {len(A.ACTION_TYPES)} action types.* Each action is a JSON object whose `type` is the class name and whose other keys are its fields.",
           "", "| type | fields | what |", "|---|---|---|"]
    for cls in A.ACTION_TYPES:
        doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
        fields = ", ".join(f"`{f.name}`" for f in dataclasses.fields(cls)) or "-"
        out.append(f"| `{cls.__name__}` | {fields} | {doc.replace('|', chr(92) + '|')} |")
    return out + [""]


def _cell(row: dict, *keys: str) -> str:
    for k in keys:
        if k in row:
            return row[k]
    return "-"


def page_finding(bug, traces: list[dict], finds: tuple[str, list[dict]], explored: dict) -> tuple[str, dict]:
    """A known bug's findings page, and the diagrams it shows ({path under findings/: svg text})."""
    from isrlab import diagram
    from isrlab.model.config import PRESETS
    from isrlab.model.trace import load_trace
    from isrlab.properties.attribution import Attribution

    docs = {name: doc for _s, name, _v, doc in flag_docs()}
    expected_by = [n for n, p in sorted(PRESETS.items()) if bug.id in p.bugs]
    contains = [n for n, p in sorted(PRESETS.items()) if bug.present_in(p.config)]
    out = [f"# {bug.id}: {bug.title}", "",
           "*Generated from `model/bugs.toml`, `model/config.py`, `counterexamples/` and `benchmarks/` when the site is "
           "built.*", "",
           "| | |", "|---|---|",
           f"| kind | {bug.kind}: {KIND_WORDS[bug.kind]} |",
           f"| fixed by | `{bug.flag} = {json.dumps(bug.fixed)}` ({bug.fixed_in}) |",
           f"| upstream | {upstream_link(bug.id)} |",
           f"| may break | {', '.join(f'`{x}`' for x in bug.breaks) or '-'} |",
           f"| expected by | {', '.join(f'`{n}`' for n in expected_by) or 'no preset'} |",
           f"| contained in | {len(contains)} presets |", ""]
    if docs.get(bug.flag):
        out += ["## In Kafka's terms", "", f"The flag `{bug.flag}` (`model/config.py`): {docs[bug.flag]}", ""]
    svgs = {}
    mine = sorted((t for t in traces if bug.id in (t.get("attribution") or {}).get("bugs", [])),
                  key=lambda t: (len(t["actions"]), t["file"]))
    if mine:
        first = mine[0]
        name = os.path.basename(first["file"])[:-5]
        trace = load_trace(os.path.join(ROOT, first["file"]))
        att = Attribution.from_json(first["attribution"]).summary() if first.get("attribution") else ""
        svgs[f"diagrams/{name}.svg"] = diagram.to_svg(diagram.build(trace, sentence=first.get("explanation", ""),
                                                                    attribution=att))
        prov = first.get("provenance") or {}
        found_by = prov.get("engine", "hand-written")
        length = (f"{prov['original_length']} actions shrunk to {len(first['actions'])}"
                  if prov.get("original_length") else f"{len(first['actions'])} actions")
        out += ["## The archived counterexample", "",
                f"- file: `{first['file']}` (preset `{first.get('preset')}`, {length}, found by the `{found_by}` "
                "engine)",
                f"- violates `{first.get('violated')}` at step {(first.get('violation') or {}).get('step', '?')}",
                f"- attribution: {att}", "",
                f"> {first.get('explanation', '')}", "",
                "Its steps, and the replay that checks it still fails as recorded (exit 0), from the checkout's root "
                "with the environment active ([Tutorial](../tutorial.md)):", "", "```bash",
                f"isrlab replay --expected {first['file']}",
                f"isrlab explain {first['file']} --svg /tmp/{name}.svg", "```", "",
                f"![space-time diagram of {name}](diagrams/{name}.svg)", ""]
        if len(mine) > 1:
            out += ["Other archived traces attributed to it:", ""]
            out += [f"- `{t['file']}`: `{t.get('violated')}`, {len(t['actions'])} actions" for t in mine[1:]]
            out.append("")
    else:
        out += ["## Archived counterexample", "", "None in `counterexamples/`"
                + (": no preset expects this bug, and no campaign archived a trace of it." if not expected_by
                   else "."), ""]
    command, rows = finds
    rows = [r for r in rows if _cell(r, "its bug") == bug.id]
    if rows:
        out += ["## Time to find it", "", "By the guided engine in one process, counted only when a violation is "
                "attributed to this bug by its fix (benchmarks/RESULTS.md, \"Time to find by the preset's own bug\"; "
                "a shared 2-core machine, so read the seconds as about four times a quiet core's); these rows "
                "again:", "", "```bash",
                re.sub(r"--presets .*$", "--presets " + " ".join(_cell(r, "preset").strip("`") for r in rows),
                       command), "```", "",
                "| preset | found | median s to find (a miss counts the cap) | shrunk length median (min) |",
                "|---|---|---|---|"]
        for r in rows:
            out.append(f"| {_cell(r, 'preset')} | {_cell(r, 'found by its own bug')} | "
                       f"{_cell(r, 'median s to find (a miss counts 30)')} | "
                       f"{_cell(r, 'shrunk length median (min)')} |")
        out.append("")
    ex = [explored[n] for n in expected_by if n in explored]
    if ex:
        from importlib import util

        spec = util.spec_from_file_location("_explore_bench", os.path.join(ROOT, "benchmarks", "explore.py"))
        verdict = None
        try:
            mod = util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            verdict = mod.verdict
        except Exception:  # noqa: BLE001 - the table then shows the raw outcome
            verdict = None
        out += ["## The default exhaustive search", "",
                "`isrlab explore --preset P` with no other option (benchmarks/explore_defaults.json; "
                "[Performance](../performance.md) has the command and the whole table):", "",
                "| preset | result | states (stored) | CPU s |", "|---|---|---|---|"]
        for r in ex:
            result = verdict(r) if verdict else ("complete" if r["complete"] else r.get("stop_reason") or "-")
            out.append(f"| `{r['preset']}` | {result} | {r['states']:,} ({r['stored']:,}) | {r['cpu_s']} |")
        out.append("")
    return "\n".join(out), svgs


def page_findings_index(traces: list[dict]) -> str:
    from isrlab.model.bugs import BUGS

    out = ["# Findings catalogue", "",
           "*Generated from `model/bugs.toml` and `counterexamples/` when the site is built.*", "",
           "One page per known bug: the catalogue entry, the flag's Kafka source, the shortest archived "
           "counterexample attributed to it with its space-time diagram, and the measured times. Rediscovered "
           "bugs are Kafka's own (kind `fix`), or guards of Kafka's code switched off (`check`), or settings "
           "(`setting`); the one new bug is a model finding (`finding`), written up by hand:", "",
           "- [The KRaft pending-reset race](kraft-pending-reset-race.md): an equal-epoch metadata replay drops a "
           "pending ISR expansion (every KRaft release preset; not confirmed upstream).", "",
           "| bug | kind | archived traces | what |", "|---|---|---|---|"]
    for b in BUGS.values():
        n = sum(b.id in (t.get("attribution") or {}).get("bugs", []) for t in traces)
        out.append(f"| [{b.id}]({bug_page(b.id)}) | {b.kind} | {n} | {b.title} |")
    return "\n".join(out) + "\n"


_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)\)")


def included(src: str) -> str:
    """A repository README as a page: links to files outside the site become code spans."""
    text = _read(src)

    def unlink(m: re.Match) -> str:
        label, target = m.group(1), m.group(2)
        if re.match(r"[a-z]+://", target) or target.startswith("#"):
            return m.group(0)
        path = os.path.normpath(os.path.join(os.path.dirname(src), target)).replace(os.sep, "/")
        return f"`{path}`" if label.strip("`") == target else f"{label} (`{path}`)"

    note = f"*This page is `{src}`, shown as it is in the repository.*\n\n"
    body = _LINK.sub(unlink, text)
    lines = body.splitlines(keepends=True)
    if lines and lines[0].startswith("# "):
        return lines[0] + "\n" + note + "".join(lines[1:])
    return note + body


def explore_table() -> str:
    r = subprocess.run([sys.executable, os.path.join("benchmarks", "explore.py"), "--table-from",
                        os.path.join("benchmarks", "explore_defaults.json")], cwd=ROOT, capture_output=True,
                       text=True, timeout=300, check=True)
    return r.stdout


# --------------------------------------------------------------------------- MkDocs events

def on_config(config):
    """The findings section of the navigation lists one page per known bug."""
    from isrlab.model.bugs import BUGS

    for item in config["nav"] or []:
        if isinstance(item, dict) and "Findings" in item:
            section = item["Findings"]
            section += [{b.id: f"findings/{bug_page(b.id)}"} for b in BUGS.values() if b.id not in WRITTEN]
    return config


def on_files(files, config):
    from isrlab.model.bugs import BUGS

    added = set()

    def add(path: str, content) -> None:
        if path not in added:   # a trace attributed to two bugs is drawn once
            added.add(path)
            files.append(File.generated(config, path, content=content))

    traces = archived()
    finds = attributed_finds()
    explored = explore_defaults()
    add("reference/bugs.md", page_bugs())
    add("reference/presets.md", page_presets())
    add("reference/flags.md", page_flags())
    add("reference/invariants.md", page_invariants())
    add("reference/trace-format.md", page_trace_format())
    add("findings/index.md", page_findings_index(traces))
    for b in BUGS.values():
        if b.id in WRITTEN:
            continue
        text, svgs = page_finding(b, traces, finds, explored)
        add(f"findings/{bug_page(b.id)}", text)
        for path, svg in svgs.items():
            add(f"findings/{path}", svg)
    for src, page, _title in INCLUDED:
        add(page, included(src))
    add("performance/explore-defaults.md",
        "# Every preset's default exhaustive search\n\n*Generated when the site is built by:*\n\n```bash\n"
        ".venv/bin/python benchmarks/explore.py --table-from benchmarks/explore_defaults.json\n```\n\n"
        "The figures in `benchmarks/explore_defaults.json` were measured with `benchmarks/explore.py --all-defaults "
        "--cpu-cap S --results benchmarks/explore_defaults.json`, one preset at a time, CPU seconds of one process on "
        "a shared 2-core machine (2026-11-28; the caps and the commands of each pass are in "
        "`benchmarks/RESULTS.md`). \"Bounds beyond\" are those the preset sets on top of its era's generic ones; "
        "\"went on past\" lists the known violations the search met first (shortest length in actions), recorded "
        "and passed. They were measured before attribution, when the search went on past an invariant by its "
        "name ([Exhaustive exploration](../concepts/exhaustive.md)).\n\n" + explore_table())
    return files
