"""A campaign's report: one self-contained HTML page a person can read and send around.

The summary table, then per preset the distribution of steps to each invariant's first violation
and coverage curves (distinct action kinds, error codes and witnesses against steps, runs in seed
order), then each distinct counterexample with its sentence, the known bugs it is attributed to with
the replays behind that (one per fix tried), its space-time diagram and its step table. Plots are
drawn by matplotlib as inline SVG; the Parquet tables are read with pyarrow, so no JVM is needed.
The page loads nothing from the network.
"""

from __future__ import annotations

import html
import io
import json
import os
import stat

from .exits import InputError, RunError
from .inputs import ANY, Maybe, parse_json, shape_problem

MAX_RUNS_PLOTTED = 200_000


def resolve(campaign: str, out: str = "campaigns") -> str:
    """A campaign's folder from a path, an id under ``out``, or ``latest``; InputError if it holds no summary."""
    for candidate in (campaign, os.path.join(out, campaign)):
        if os.path.isfile(os.path.join(candidate, "summary.json")):
            return candidate
    raise InputError(f"no campaign {campaign!r} (a folder with summary.json, an id under {out}/, or latest; "
                     f"isrlab campaigns lists them)")


#: what the report and the campaign list read from a summary.json (inputs.shape_problem): fields absent from an
#: older summary are optional, every one present has its type
_NAMES = [str]
PRESET_SHAPE = {"preset": str, "verdict": str, "runs": int, "steps": int, "violated": _NAMES, "expected_bugs?": _NAMES,
                "found?": _NAMES, "not_found?": _NAMES, "known?": _NAMES, "unexpected?": [{"invariant": str}]}
COUNTEREXAMPLE_SHAPE = {"preset": str, "invariant": str, "shrunk_length": int, "original_length": int, "file": str,
                        "explanation?": str}
LIST_SHAPE = {"spec?": Maybe({"presets?": _NAMES, "engine?": Maybe(str), "seed?": Maybe(int)}), "runs?": Maybe(int),
              "steps?": Maybe(int), "as_expected?": Maybe(bool), "violations?": Maybe(list)}
SUMMARY_SHAPE = {**LIST_SHAPE, "presets": [PRESET_SHAPE], "counterexamples?": [COUNTEREXAMPLE_SHAPE],
                 "seconds?": {"total_s?": Maybe(float), "fuzz_s?": Maybe(float)}, "tasks?": Maybe(int)}


def read_summary(path: str, shape=SUMMARY_SHAPE) -> dict:
    """A summary.json decoded within the JSON limits and checked against ``shape``; InputError naming the file, the
    field and what it should be."""
    from .model.trace import TraceError, read_regular_file

    try:
        data = parse_json(read_regular_file(path, 64 * 1024 * 1024), path)
    except TraceError as e:
        raise InputError(str(e)) from None
    problem = shape_problem(data, shape)
    if problem is not None:
        raise InputError(f"{path}: {problem} (not a campaign summary isrlab wrote, or edited since)")
    return data


def load_summary(folder: str) -> dict:
    return read_summary(os.path.join(folder, "summary.json"))


#: the runs table's columns the report reads, and what each value must be (a row of ``pyarrow``'s to_pylist)
RUN_SHAPE = {"run_index": int, "seed": int, "steps": int, "kind_counts": Maybe([ANY]), "error_codes": Maybe(_NAMES),
             "witnesses": Maybe(_NAMES), "violations": Maybe([{"invariant": str, "step": int}])}


def _parquet_files(path: str) -> list[tuple[str, str]]:
    """(preset, file) of every part file under a runs table partitioned by preset (Spark's names; hidden ones and
    _SUCCESS skipped as Spark skips them)."""
    from urllib.parse import unquote

    out = []
    try:
        parts = sorted(os.listdir(path))
    except OSError as e:
        raise InputError(f"cannot list {path}: {e.strerror or e}") from None
    for part in parts:
        full = os.path.join(path, part)
        if part.startswith(("_", ".")):
            continue
        if not part.startswith("preset=") or not os.path.isdir(full):
            raise InputError(f"{full}: expected a preset=NAME folder of a runs table partitioned by preset")
        try:
            names = sorted(os.listdir(full))
        except OSError as e:
            raise InputError(f"cannot list {full}: {e.strerror or e}") from None
        out += [(unquote(part[len("preset="):]), os.path.join(full, f)) for f in names if not f.startswith(("_", "."))]
    return out


def load_runs(folder: str, limit: int = MAX_RUNS_PLOTTED) -> list[dict]:
    """The runs table as dicts (preset, run_index, seed, steps, kind_counts, error_codes, witnesses, violations), at
    most ``limit`` of them read, in batches; a part file that is no Parquet or not the table's is an InputError
    naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = os.path.join(folder, "runs")
    if not os.path.isdir(path):
        return []
    rows: list[dict] = []
    columns = list(RUN_SHAPE)
    for preset, file in _parquet_files(path):
        if len(rows) >= limit:
            break
        try:
            if not stat.S_ISREG(os.stat(file).st_mode):   # a FIFO would block the reader for ever
                raise InputError(f"{file}: not a regular file, so no Parquet part file")
            with pq.ParquetFile(file) as pf:
                missing = [c for c in columns if c not in pf.schema_arrow.names]
                if missing:
                    raise InputError(f"{file}: no column {', '.join(missing)} (not a runs table isrlab wrote)")
                for batch in pf.iter_batches(batch_size=8192, columns=columns):
                    for i, r in enumerate(batch.to_pylist()):
                        problem = shape_problem(r, RUN_SHAPE)
                        if problem is not None:
                            raise InputError(f"{file}: row {len(rows) + 1}: {problem}")
                        r["preset"] = preset
                        r["kind_counts"] = dict(r["kind_counts"] or [])
                        rows.append(r)
                    if len(rows) >= limit:
                        break
        except (pa.ArrowException, OSError, ValueError, TypeError) as e:
            # truncated, flipped or foreign bytes: pyarrow's reason, first line, its long paths shortened
            why = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
            raise InputError(f"{file}: not a readable Parquet file: {why.replace(file, 'it')[:200]}") from None
    del rows[limit:]
    rows.sort(key=lambda r: (r["preset"], r["run_index"], r["seed"]))
    return rows


def _interrupted_row(folder: str, name: str) -> dict | None:
    """A campaigns row for a campaign that has its campaign.json but no summary: interrupted, resumable."""
    import datetime

    path = os.path.join(folder, "campaign.json")
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return None
    from .model.trace import TraceError, read_regular_file

    try:
        data = parse_json(read_regular_file(path, 1 << 20), path)
    except TraceError:
        data = {}
    spec = data.get("spec") if isinstance(data, dict) and isinstance(data.get("spec"), dict) else {}
    presets = spec.get("presets") if shape_problem(spec.get("presets"), [str]) is None else []
    when = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc)
    return {"id": name, "date": when.strftime("%Y-%m-%d %H:%M:%SZ"), "presets": presets,
            "engine": spec.get("engine") if isinstance(spec.get("engine"), str) else None, "runs": None,
            "steps": None, "as_expected": None, "unexpected": False, "violations": 0, "counterexamples": 0,
            "path": folder, "interrupted": True}


def list_campaigns(out: str) -> tuple[list[dict], list[str]]:
    """(rows, problems) of the campaigns under ``out``, newest first: a row per folder with a readable summary.json
    (id, date, presets, engine, runs, steps, as_expected, violations, counterexamples, path), and one line per
    folder whose summary.json is not (the others are still listed, as ``ls`` lists a folder's readable entries)."""
    import datetime

    rows, problems = [], []
    try:
        names = sorted(os.listdir(out)) if os.path.isdir(out) else []
    except OSError as e:
        raise InputError(f"cannot list {out}: {e.strerror or e}") from None
    for name in names:
        folder = os.path.join(out, name)
        summary = os.path.join(folder, "summary.json")
        if os.path.islink(folder):
            continue
        if not os.path.lexists(summary):
            row = _interrupted_row(folder, name)   # killed or interrupted: isrlab fuzz --resume finishes it
            if row is not None:
                rows.append(row)
            continue
        try:
            data = read_summary(summary, LIST_SHAPE)
            mtime = os.stat(summary).st_mtime
        except InputError as e:
            problems.append(e.format_message())
            continue
        except OSError as e:
            problems.append(f"cannot read {summary}: {e.strerror or e}")
            continue
        spec = data.get("spec") or {}
        cx = os.path.join(folder, "counterexamples")
        try:   # not the diagrams drawn beside them
            n_cx = sum(n.endswith(".json") for n in os.listdir(cx)) if os.path.isdir(cx) else 0
        except OSError:
            n_cx = None
        when = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc)
        rows.append({"id": name, "date": when.strftime("%Y-%m-%d %H:%M:%SZ"), "presets": spec.get("presets", []),
                     "engine": spec.get("engine"), "runs": data.get("runs"), "steps": data.get("steps"),
                     "as_expected": data.get("as_expected"),
                     # a summary without the list (an older one) keeps the older label
                     "unexpected": data.get("unexpected") is None or bool(data.get("unexpected")),
                     "violations": len(data.get("violations") or []),
                     "counterexamples": n_cx, "path": folder})
    rows.sort(key=lambda r: r["date"], reverse=True)
    return rows, problems


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _plots(preset: str, runs: list[dict]) -> list[tuple[str, str]]:
    """(title, inline SVG) of the steps-to-first-violation histogram and the coverage curves of one preset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "isrlab"  # deterministic ids in the SVG
    out = []
    first: dict[str, list] = {}
    for r in runs:
        for v in r["violations"] or []:
            first.setdefault(v["invariant"], []).append(v["step"])
    if first:
        fig, ax = plt.subplots(figsize=(6.4, 2.8))
        names = sorted(first)
        ax.hist([first[n] for n in names], bins=30, label=names, stacked=True)
        ax.set_xlabel("step of the run at which the invariant first failed")
        ax.set_ylabel("runs")
        ax.legend(fontsize="small")
        ax.set_title(f"{preset}: steps to the first violation ({sum(map(len, first.values()))} violating runs)")
        out.append(("steps to the first violation", _svg(fig)))
        plt.close(fig)
    xs, kinds, errors, witnesses = [0], [0], [0], [0]
    seen_k, seen_e, seen_w, total = set(), set(), set(), 0
    for r in runs:
        total += r["steps"]
        seen_k |= set(r["kind_counts"])
        seen_e |= set(r["error_codes"] or ())
        seen_w |= set(r["witnesses"] or ())
        xs.append(total)
        kinds.append(len(seen_k))
        errors.append(len(seen_e))
        witnesses.append(len(seen_w))
    if total:
        fig, ax = plt.subplots(figsize=(6.4, 2.8))
        ax.step(xs, kinds, where="post", marker=".", label="action kinds")
        ax.step(xs, errors, where="post", marker=".", label="error codes")
        ax.step(xs, witnesses, where="post", marker=".", label="witnesses")
        ax.set_xlabel("steps (runs in seed order)")
        ax.set_ylabel("distinct, seen so far")
        ax.legend(fontsize="small", loc="lower right")
        ax.set_title(f"{preset}: coverage over {len(runs):,} runs")
        out.append(("coverage", _svg(fig)))
        plt.close(fig)
    return out


def _counterexample_html(c: dict, count: int) -> str:
    from . import diagram
    from .model.config import PRESETS
    from .inputs import load_trace
    from .model.config import ConfigError
    from .model.trace import TraceError
    from .properties.attribution import classify
    from .properties.explain import attribution_lines
    from .properties.replay import attribution_of, replay
    from .properties.steptable import step_table

    e = html.escape
    parts = [f'<section class="counterexample"><h3>{e(c["preset"])}: <span class="inv">{e(c["invariant"])}</span> '
             f'in {c["shrunk_length"]} steps (shrunk from {c["original_length"]})'
             + (f", and {count - 1} like it" if count > 1 else "") + "</h3>",
             f'<p class="sentence">{e(c.get("explanation", ""))}</p>',
             f'<p class="file"><code>{e(c["file"])}</code><br><code>isrlab replay --expected '
             f'{e(c["file"])}</code><br><code>isrlab explain {e(c["file"])}</code></p>']
    try:
        trace = load_trace(c["file"])
        result = replay(trace)
    except (TraceError, ConfigError) as err:
        parts.append(f'<p class="missing">the trace cannot be read or replayed: {e(str(err))}</p></section>')
        return "".join(parts)
    shown = (next((v for v in result.violations if v.invariant == c["invariant"]), None)
             or min(result.violations, key=lambda v: v.step, default=None))
    attribution = None
    if shown is not None:      # the replay computed it already for the violation the trace expects, if it records one
        attribution = (result.attribution if result.attribution is not None and shown.invariant == trace.violated
                       else attribution_of(trace, shown))
        summary, *evidence = attribution_lines(attribution)
        kind = classify(PRESETS[c["preset"]], attribution)[0] if c["preset"] in PRESETS else None
        what = {"found": f"a bug {c['preset']} expects", "known": f"a known bug {c['preset']} does not expect",
                "unexpected": "UNEXPECTED: no known bug's fix removes it"}.get(kind, "")
        parts.append(f'<div class="attribution"><p><strong>attribution</strong>'
                     + (f' (<span class="{e(kind)}">{e(what)}</span>)' if what else "") + f': {e(summary)}</p>'
                     f'<ul class="evidence">{"".join(f"<li>{e(x)}</li>" for x in evidence)}</ul>'
                     + (f'<p class="UNEXPECTED">not the trace\'s attribution: {e(result.attribution_problem)}</p>'
                        if result.attribution_problem else "") + "</div>")
    svg = diagram.to_svg(diagram.build(trace, attribution=attribution.summary() if attribution else ""))
    parts.append(f'<div class="diagram">{svg[svg.index("<svg"):]}</div>')
    table = "\n".join(step_table(result))
    parts.append(f"<details><summary>step table</summary><pre>{e(table)}</pre></details></section>")
    return "".join(parts)


_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1400px;color:#222}
h1{font-size:1.5em} h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table.summary{border-collapse:collapse} table.summary td,table.summary th{padding:.25em .8em;text-align:left;
border-bottom:1px solid #eee} td.num{text-align:right}
.ok,.found{color:#1a7f37} .UNEXPECTED,.unexpected{color:#cf222e;font-weight:bold} .notfound{color:#9a6700}
.inv{color:#cf222e} .sentence{font-size:1.05em} pre{font-size:11px;overflow-x:auto;background:#f6f8fa;padding:.5em}
.diagram{overflow-x:auto} .plots{display:flex;flex-wrap:wrap;gap:1em} .plots svg{max-width:100%;height:auto}
code{background:#f6f8fa;padding:0 .2em} .attribution ul{margin:.2em 0}
"""


def render(folder: str) -> str:
    """The report of the campaign in ``folder`` as an HTML document (a string)."""
    from .console import fold

    summary = load_summary(folder)
    runs = load_runs(folder)
    e = html.escape
    presets = summary["presets"]
    unexpected = [p["preset"] for p in presets if p.get("verdict") == "UNEXPECTED"]
    missed = [f"{p['preset']} ({', '.join(p['not_found'])})" for p in presets if p.get("not_found")]
    # the console's verdict (console.campaign): an unexpected violation first, then an expected bug not found
    verdict = (f"UNEXPECTED violations, no known bug's fix removes them: {', '.join(unexpected)}" if unexpected
               else f"not as expected: expected bugs not found within the budget: {', '.join(missed)}" if missed
               else "as expected: every expected bug found and attributed by its fix; nothing unexpected"
               if summary.get("as_expected") else "NOT AS EXPECTED")
    secs = summary.get("seconds") or {}
    spec = summary.get("spec") or {}
    head = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>isrlab campaign {e(str(summary.get('campaign')))}</title><style>{_STYLE}</style></head><body>",
            f"<h1>isrlab campaign <code>{e(str(summary.get('campaign')))}</code></h1>",
            f"<p class=\"verdict\"><strong>{e(verdict)}</strong>: {summary.get('runs') or 0:,} runs, "
            f"{summary.get('steps') or 0:,} steps in {secs.get('total_s') or secs.get('fuzz_s') or 0:.0f} s on "
            f"{e(str(summary.get('master')))} ({summary.get('tasks')} tasks; engine "
            f"{e(str(spec.get('engine')))}, seed {e(str(spec.get('seed')))}).</p>"]
    rows = ["<h2>Presets</h2><table class=\"summary\" id=\"summary\"><tr><th>preset</th><th>expected bugs</th>"
            "<th>runs</th><th>steps</th><th>violated</th><th>found</th><th>not found</th><th>unexpected</th>"
            "<th>known bugs met</th><th>verdict</th></tr>"]

    def cell(items) -> str:
        return e(", ".join(items) or "-")

    for p in presets:
        cls = {"as expected": "ok", "not found": "notfound"}.get(p["verdict"], p["verdict"].replace(" ", ""))
        rows.append(f"<tr><td>{e(p['preset'])}</td><td>{cell(p.get('expected_bugs', []))}</td>"
                    f"<td class=\"num\">{p['runs']:,}</td><td class=\"num\">{p['steps']:,}</td>"
                    f"<td>{cell(p['violated'])}</td><td>{cell(p.get('found', []))}</td>"
                    f"<td>{cell(p.get('not_found', []))}</td>"
                    f"<td>{cell(u['invariant'] for u in p.get('unexpected', []))}</td>"
                    f"<td>{cell(p.get('known', []))}</td><td class=\"{e(cls)}\">{e(p['verdict'])}</td></tr>")
    rows.append("</table>")
    plots = ["<h2>Per preset</h2>"]
    by_preset: dict[str, list] = {}
    for r in runs:
        by_preset.setdefault(r["preset"], []).append(r)
    for p in presets:
        figs = _plots(p["preset"], by_preset.get(p["preset"], []))
        if figs:
            plots.append(f"<section class=\"preset\"><h3>{e(p['preset'])}</h3><div class=\"plots\">"
                         + "".join(f"<figure title=\"{e(t)}\">{svg}</figure>" for t, svg in figs)
                         + "</div></section>")
    folded = fold(summary.get("counterexamples", []))
    cxs = [f"<h2>Counterexamples ({len(folded)} distinct)</h2>"]
    cxs += [_counterexample_html(c, n) for c, n in folded] or ["<p>none</p>"]
    foot = [f"<h2>Data</h2><p><code>{e(os.path.join(folder, 'summary.json'))}</code>, Parquet tables under "
            f"<code>{e(os.path.join(folder, 'runs'))}</code> and <code>{e(os.path.join(folder, 'shards'))}</code> "
            f"(read them with pyarrow or Spark).</p><pre>{e(json.dumps(spec, indent=1))}</pre>",
            "</body></html>"]
    return "\n".join(head + rows + plots + cxs + foot)


def write(folder: str) -> str:
    """Render and write ``<folder>/report.html`` atomically; its path.  A campaign's bad file is an InputError (exit
    2) naming it; only a failure to write the page itself is a RunError (exit 3)."""
    from .model.trace import write_atomic

    path = os.path.join(folder, "report.html")
    page = render(folder)
    try:
        write_atomic(path, page)
    except OSError as e:
        raise RunError(f"cannot write the report in {folder}: {e.strerror or e}") from None
    return path
