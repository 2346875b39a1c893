"""A campaign's report: one self-contained HTML page a person can read, send around and decide from.

The verdict first, one line per bug with its count; one overview plot across presets (when each found its first
telling violation, or its budget, marked found / not found / unexpected); the counterexamples grouped by the bug they
are attributed to, the shortest of each drawn (its sentence, the replays behind its attribution, its space-time
diagram fitted to the page, its step table folded) while the page stays under 1 MB; the presets' table and each
preset's detail folded (its plots only where enough points make them mean something, else its runs); and the
verdict again at the end, where the eye lands.  Plots are drawn by matplotlib as inline SVG; the Parquet tables are
read with pyarrow, so no JVM is needed.  The page loads nothing from the network.  A phase that runs past two seconds
says on stderr what it is doing.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import math
import os
import stat
import threading

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
PRESET_SHAPE = {"preset": str, "expected?": str, "verdict": str, "runs": int, "steps": int, "violated": _NAMES,
                "expected_bugs?": _NAMES,
                "found?": _NAMES, "not_found?": _NAMES, "known?": _NAMES, "unexpected?": [{"invariant": str}]}
COUNTEREXAMPLE_SHAPE = {"preset": str, "invariant": str, "shrunk_length": int, "original_length": int, "file": str,
                        "explanation?": str, "kind?": str, "bugs?": _NAMES}
LIST_SHAPE = {"spec?": Maybe({"presets?": _NAMES, "engine?": Maybe(str), "seed?": Maybe(int),
                                "shard_budget_s?": Maybe(float)}), "runs?": Maybe(int),
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
RUN_SHAPE = {"shard": Maybe(int), "run_index": int, "seed": int, "steps": int, "kind_counts": Maybe([ANY]),
             "error_codes": Maybe(_NAMES), "witnesses": Maybe(_NAMES),
             "violations": Maybe([{"invariant": str, "step": int}])}


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


def _read_parquet(file: str, shape: dict, optional: tuple = ()):
    """Each row of a Parquet part file as a dict of the columns in ``shape`` (those in ``optional`` read when the file
    has them, None otherwise), checked against it; InputError naming the file (and the row) when it is no Parquet or
    not the table's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 0
    try:
        if not stat.S_ISREG(os.stat(file).st_mode):   # a FIFO would block the reader for ever
            raise InputError(f"{file}: not a regular file, so no Parquet part file")
        with pq.ParquetFile(file) as pf:
            names = pf.schema_arrow.names
            missing = [c for c in shape if c not in names and c not in optional]
            if missing:
                raise InputError(f"{file}: no column {', '.join(missing)} (not a table isrlab wrote)")
            columns = [c for c in shape if c in names]
            for batch in pf.iter_batches(batch_size=8192, columns=columns):
                for r in batch.to_pylist():
                    n += 1
                    for c in optional:
                        r.setdefault(c, None)
                    problem = shape_problem(r, shape)
                    if problem is not None:
                        raise InputError(f"{file}: row {n}: {problem}")
                    yield r
    except (pa.ArrowException, OSError, ValueError, TypeError) as e:
        # truncated, flipped or foreign bytes: pyarrow's reason, first line, its long paths shortened
        why = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
        raise InputError(f"{file}: not a readable Parquet file: {why.replace(file, 'it')[:200]}") from None


def load_runs(folder: str, limit: int = MAX_RUNS_PLOTTED) -> list[dict]:
    """The runs table as dicts (preset, shard, run_index, seed, steps, kind_counts, error_codes, witnesses,
    violations), at most ``limit`` of them read, in batches; a part file that is no Parquet or not the table's is an
    InputError naming it (a table without the shard column, an older one, reads with shard None)."""
    path = os.path.join(folder, "runs")
    if not os.path.isdir(path):
        return []
    rows: list[dict] = []
    for preset, file in _parquet_files(path):
        if len(rows) >= limit:
            break
        for r in _read_parquet(file, RUN_SHAPE, optional=("shard",)):
            if len(rows) >= limit:
                break
            r["preset"] = preset
            r["kind_counts"] = dict(r["kind_counts"] or [])
            rows.append(r)
    rows.sort(key=lambda r: (r["preset"], r["run_index"], r["seed"]))
    return rows


#: the shards table's columns the report reads (one row per task: how long it ran, how many steps it took)
SHARD_SHAPE = {"preset": str, "shard": int, "steps": int, "seconds": float, "attempt": Maybe(int)}


def load_shards(folder: str) -> list[dict]:
    """The shards table as dicts (preset, shard, steps, seconds, attempt), the last attempt of each task only; empty
    when the campaign has none (``--master none`` writes none)."""
    path = os.path.join(folder, "shards")
    try:
        names = sorted(os.listdir(path)) if os.path.isdir(path) else []
    except OSError as e:
        raise InputError(f"cannot list {path}: {e.strerror or e}") from None
    last: dict[tuple, dict] = {}
    for name in names:
        if not name.startswith(("_", ".")):
            for r in _read_parquet(os.path.join(path, name), SHARD_SHAPE, optional=("attempt",)):
                key = (r["preset"], r["shard"])
                if key not in last or (r["attempt"] or 0) >= (last[key]["attempt"] or 0):
                    last[key] = r
    return [last[k] for k in sorted(last)]


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


#: per-preset plots are drawn only where they can say something (fewer points make a bar or a step of noise): the
#: histogram of steps to the first violation from this many violating runs on, the coverage curves from this many
#: runs on; below that, the preset's runs are listed
MIN_VIOLATIONS_FOR_HISTOGRAM = 20
MIN_RUNS_FOR_COVERAGE = 10
PLOT_RULE = (f"Per-preset plots are drawn only where they can say something: the histogram of steps to the first "
             f"violation from {MIN_VIOLATIONS_FOR_HISTOGRAM} violating runs on, the coverage curves from "
             f"{MIN_RUNS_FOR_COVERAGE} runs on; a preset with fewer lists its runs instead.")


def _pyplot():
    """matplotlib's pyplot on the Agg backend, set up for deterministic SVG (fixed id salt; no date: ``_svg``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "isrlab"  # deterministic ids in the SVG
    plt.rcParams["svg.fonttype"] = "none"    # text as text: smaller than glyph outlines, and found by the browser
    return plt


def _svg(fig, prefix: str = "") -> str:
    """The figure as inline SVG, its ids prefixed (several SVGs share one page's id space), without a date."""
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    return _prefix_ids(text, prefix) if prefix else text


def _prefix_ids(svg: str, prefix: str) -> str:
    """``svg`` with every id and reference to one made unique by ``prefix``: diagrams and plots each carry their own
    (the diagram's arrowheads, the violation band; matplotlib's clip paths), and a page holds many."""
    return (svg.replace(' id="', f' id="{prefix}').replace('url(#', f'url(#{prefix}')
            .replace('xlink:href="#', f'xlink:href="#{prefix}').replace(' href="#', f' href="#{prefix}'))


def _integer_ticks(axis) -> None:
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def _plots(preset: str, runs: list[dict]) -> list[tuple[str, str]]:
    """(title, inline SVG) of the steps-to-first-violation histogram and the coverage curves of one preset, each only
    where the rule above lets it say something."""
    out = []
    first: dict[str, list] = {}
    for r in runs:
        for v in r["violations"] or []:
            first.setdefault(v["invariant"], []).append(v["step"])
    anchor = "".join(ch if ch.isalnum() else "-" for ch in preset)
    if sum(map(len, first.values())) >= MIN_VIOLATIONS_FOR_HISTOGRAM:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(6.4, 2.8))
        names = sorted(first)
        ax.hist([first[n] for n in names], bins=30, label=names, stacked=True)
        ax.set_xlabel("step of the run at which the invariant first failed")
        ax.set_ylabel("runs")
        _integer_ticks(ax.yaxis)
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        ax.set_title(f"{preset}: steps to the first violation ({sum(map(len, first.values()))} violating runs)")
        out.append(("steps to the first violation", _svg(fig, f"h-{anchor}-")))
    if len(runs) >= MIN_RUNS_FOR_COVERAGE:
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
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(6.4, 2.8))
        ax.step(xs, kinds, where="post", label="action kinds")
        ax.step(xs, errors, where="post", label="error codes")
        ax.step(xs, witnesses, where="post", label="witnesses")
        ax.set_xlabel("steps (runs in seed order)")
        ax.set_ylabel("distinct, seen so far")
        _integer_ticks(ax.yaxis)
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        ax.set_title(f"{preset}: coverage over {len(runs):,} runs")
        out.append(("coverage", _svg(fig, f"c-{anchor}-")))
    return out


def _runs_table(runs: list[dict]) -> str:
    """A preset's few runs, one row each: where its shard and seed are, its steps and each invariant's first
    violation (what the plots would show, had they enough points)."""
    e = html.escape
    rows = "".join(
        f"<tr><td class=\"num\">{'-' if r.get('shard') is None else r['shard']}</td><td class=\"num\">"
        f"{r['run_index']}</td><td><code>{r['seed']}</code></td><td class=\"num\">{r['steps']:,}</td><td>"
        + e(", ".join(f"{v['invariant']} at step {v['step']:,}" for v in r["violations"] or []) or "-")
        + "</td></tr>" for r in runs)
    return ("<table class=\"runs\"><tr><th>shard</th><th>run</th><th>seed</th><th>steps</th>"
            f"<th>first violations</th></tr>{rows}</table>")


# --------------------------------------------------------------------------- the overview and the verdict
#: how the overview marks each preset's outcome: (words in the legend, colour, marker)
STATUS = {"unexpected": ("UNEXPECTED violation", "#cf222e", "X"),
          "not found": ("expected bug not found (at the budget)", "#bf8700", ">"),
          "found": ("expected bug found", "#1a7f37", "o"),
          "known": ("only known bugs it does not expect", "#0969da", "D"),
          "pass": ("expected to pass, nothing found (at the budget)", "#8c959f", "s")}


_STATUS_CLASS = {"unexpected": "unexpected", "not found": "notfound", "found": "found", "known": "known", "pass": "ok"}


def _status(p: dict) -> str:
    if p["verdict"] == "UNEXPECTED" or p.get("unexpected"):
        return "unexpected"
    if p.get("not_found"):
        return "not found"
    if p.get("found"):
        return "found"
    return "known" if p["violated"] else "pass"


def first_violations(presets: list[dict], runs: list[dict], shards: list[dict]) -> tuple[list[dict], str]:
    """Per preset (in the summary's order) its status and when its first telling violation came, and the unit.

    The time is estimated from each shard's own rate: a violation at step s of a shard's run, after its earlier runs'
    steps, came (earlier steps + s) / steps x seconds into that shard; a preset's shards run side by side, so its
    first violation is the earliest over them.  The telling violation: the expected headline invariant's for a
    preset that found its bug, an unexpected invariant's for one with an unexpected violation, any for one that met
    only known bugs; the others stand at the budget (their longest shard).  Without the shards table (or the runs'
    shard column), steps into the shard stand for time."""
    rate = {(s["preset"], s["shard"]): s["seconds"] / s["steps"] for s in shards
            if s["steps"] > 0 and math.isfinite(s["seconds"]) and s["seconds"] >= 0}
    by_preset: dict[str, list] = {}
    for r in runs:
        by_preset.setdefault(r["preset"], []).append(r)
    timed = bool(rate) and all(r.get("shard") is not None and (r["preset"], r["shard"]) in rate for r in runs)
    out = []
    for p in presets:
        status = _status(p)
        telling = ({p["expected"]} if p.get("expected") in p["violated"] else set(p["violated"])) \
            if status == "found" else {u["invariant"] for u in p.get("unexpected", [])} \
            if status == "unexpected" else set(p["violated"]) if status == "known" else set()
        done: dict = {}        # shard -> steps of its runs so far (runs in index order)
        first, budget = None, 0.0
        for r in sorted(by_preset.get(p["preset"], []), key=lambda r: (r.get("shard") or 0, r["run_index"])):
            shard = r.get("shard") or 0
            scale = rate[(p["preset"], shard)] if timed else 1.0
            before = done.get(shard, 0)
            for v in r["violations"] or []:
                if v["invariant"] in telling:
                    at = (before + v["step"]) * scale
                    first = at if first is None else min(first, at)
            done[shard] = before + r["steps"]
            budget = max(budget, done[shard] * scale)
        out.append({"preset": p["preset"], "status": status, "at": first, "budget": budget,
                    "x": first if first is not None else budget})
    return out, "seconds" if timed else "steps"


def _overview(points: list[dict], unit: str, shard_budget: float | None) -> str:
    """One plot across presets: each preset's first telling violation (or its budget), marked by its status."""
    plt = _pyplot()
    n = len(points)
    fig, ax = plt.subplots(figsize=(7.5, 1.1 + 0.2 * n))
    ys = {pt["preset"]: n - 1 - k for k, pt in enumerate(points)}       # the summary's order, top down
    xs = [pt["x"] for pt in points if pt["x"] > 0]
    low = min(xs) if xs else 1.0
    for status, (words, colour, marker) in STATUS.items():
        mine = [pt for pt in points if pt["status"] == status]
        if mine:
            ax.scatter([max(pt["x"], low) for pt in mine], [ys[pt["preset"]] for pt in mine], c=colour,
                       marker=marker, s=70 if status == "unexpected" else 36, zorder=3,
                       label=f"{words} ({len(mine)})")
    if unit == "seconds" and shard_budget:
        ax.axvline(shard_budget, color="#57606a", linestyle="--", linewidth=0.8, zorder=1,
                   label=f"each shard's budget ({shard_budget:.0f} s)")
    ax.set_yticks(range(n), [pt["preset"] for pt in reversed(points)], fontsize=8)
    ax.set_ylim(-0.7, n - 0.3)
    ax.grid(axis="x", color="#eaeef2", zorder=0)
    ax.grid(axis="y", color="#f6f8fa", zorder=0)
    top = max(xs + [shard_budget or 0, 1])
    if top / low > 20:
        from matplotlib.ticker import FuncFormatter

        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))    # 0.01, not 10^-2
        scale = " (log scale)"
    else:
        ax.set_xlim(0, top * 1.05)
        scale = ""
    ax.set_xlabel(f"seconds into the shard (estimated from its steps/s){scale}" if unit == "seconds"
                  else f"steps into the shard{scale}")
    # above the axes, never over the points
    ax.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0, 1.01), ncol=2, frameon=False)
    return _svg(fig, "overview-")


def _amount(x: float, unit: str) -> str:
    """Seconds as a person reads them (5 ms, 2.1 s, 95 s), steps as a count."""
    if unit != "seconds":
        return f"{x:,.0f} steps"
    return f"{x * 1000:.0f} ms" if x < 1 else f"{x:.1f} s" if x < 10 else f"{x:,.0f} s"


def _some(names: list, n: int = 6) -> str:
    """Up to ``n`` names, then how many more."""
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")


def verdict_lines(summary: dict) -> tuple[str, str, list[tuple[str, str]]]:
    """(class, the verdict, [(class, line)]) with one line per bug: found, not found (in which presets), known bugs
    met where not expected, and each unexpected invariant, each with its count of presets and of counterexamples."""
    presets = summary["presets"]
    unexpected = [p["preset"] for p in presets if p.get("verdict") == "UNEXPECTED"]
    missed = [f"{p['preset']} ({', '.join(p['not_found'])})" for p in presets if p.get("not_found")]
    # the console's verdict (console.campaign): an unexpected violation first, then an expected bug not found
    if unexpected:
        head = ("UNEXPECTED", f"UNEXPECTED violations, no known bug's fix removes them: {', '.join(unexpected)}")
    elif missed:
        head = ("notfound", f"not as expected: expected bugs not found within the budget: {', '.join(missed)}")
    elif summary.get("as_expected"):
        head = ("ok", "as expected: every expected bug found and attributed by its fix; nothing unexpected")
    else:
        head = ("UNEXPECTED", "NOT AS EXPECTED")
    cxs = summary.get("counterexamples", [])
    groups: dict[tuple, list] = {}       # (order, class, what, name) -> presets
    for p in presets:
        for u in p.get("unexpected", []):
            groups.setdefault((0, "UNEXPECTED", "UNEXPECTED", u["invariant"]), []).append(p["preset"])
        for kind, cls, what, order in (("not_found", "notfound", "not found", 1), ("found", "found", "found", 2),
                                       ("known", "known", "known, not expected", 3)):
            for bug in p.get(kind, []):
                groups.setdefault((order, cls, what, bug), []).append(p["preset"])
    lines = []
    for (order, cls, what, name), where in sorted(groups.items()):
        if order == 0:
            n = sum(c.get("kind") == "unexpected" and c["invariant"] == name and c["preset"] in where for c in cxs)
        elif order == 1:
            n = 0
        else:
            kind = "found" if order == 2 else "known"
            n = sum(c.get("kind") == kind and name in c.get("bugs", []) and c["preset"] in where for c in cxs)
        count = ("within the budget" if order == 1 else f"{n} counterexample{'s' * (n != 1)}")
        lines.append((cls, f"{what}: {name} in {len(where)} preset{'s' * (len(where) != 1)} ({_some(where)}), {count}"))
    return head[0], head[1], lines


def _verdict_html(summary: dict, where: str) -> str:
    e = html.escape
    cls, head, lines = verdict_lines(summary)
    secs = summary.get("seconds") or {}
    spec = summary.get("spec") or {}
    return (f'<div class="verdict" id="verdict-{where}"><p><strong class="{cls}">{e(head)}</strong>: '
            f"{summary.get('runs') or 0:,} runs, {summary.get('steps') or 0:,} steps in "
            f"{secs.get('total_s') or secs.get('fuzz_s') or 0:.0f} s on {e(str(summary.get('master')))} "
            f"({summary.get('tasks')} tasks; engine {e(str(spec.get('engine')))}, seed {e(str(spec.get('seed')))})."
            "</p><ul>" + "".join(f'<li class="{c}">{e(t)}</li>' for c, t in lines) + "</ul></div>")


def _counterexample_html(c: dict, count: int, k: int = 0) -> tuple[str, str]:
    """A counterexample's section, its closing tag left to the caller, and its step table (folded), apart: (section,
    table); ``k`` numbers its diagram's ids."""
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
    parts = [f'<section class="counterexample"><h4>{e(c["preset"])}: <span class="inv">{e(c["invariant"])}</span> '
             f'in {c["shrunk_length"]} steps (shrunk from {c["original_length"]})'
             + (f", and {count - 1} like it" if count > 1 else "") + "</h4>",
             f'<p class="sentence">{e(c.get("explanation", ""))}</p>',
             f'<p class="file"><code>{e(c["file"])}</code><br><code>isrlab replay --expected '
             f'{e(c["file"])}</code><br><code>isrlab explain {e(c["file"])}</code></p>']
    try:
        trace = load_trace(c["file"])
        result = replay(trace)
    except (TraceError, ConfigError) as err:
        parts.append(f'<p class="missing">the trace cannot be read or replayed: {e(str(err))}</p>')
        return "".join(parts), ""
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
    parts.append(f'<div class="diagram">{_prefix_ids(svg[svg.index("<svg"):], f"cx{k}-")}</div>')
    table = "\n".join(step_table(result))
    return "".join(parts), f"<details><summary>step table</summary><pre>{e(table)}</pre></details>"


#: what the whole page may weigh (UTF-8 bytes): the counterexamples' diagrams get what the rest of the page leaves,
#: so it stays under 1 MB however many a campaign found; DRAWN_BUDGET caps the diagrams' share below that
PAGE_BUDGET = 980_000
DRAWN_BUDGET = 700_000
DRAWN_RULE = ("Grouped by what their replays attribute them to (the unexpected first, then the expected bugs found, "
              "then known bugs met where not expected); the shortest of each group is drawn while the page stays "
              "under 1 MB, the others are listed with the command that draws each.")
_GROUP_WORDS = {"unexpected": ("UNEXPECTED", "UNEXPECTED"), "found": ("found", "found"),
                "known": ("known, not expected", "known")}


def bug_groups(folded: list) -> list[tuple[str, str, list]]:
    """(kind, name, [(counterexample, count), ...] shortest first) per bug the counterexamples are attributed to (its
    ``kind`` and credited ``bugs``; an unexpected one's invariant; an older summary's by its invariant): the
    unexpected first, then found, known, the rest, each by name."""
    groups: dict[tuple, list] = {}
    for c, n in folded:
        kind = c.get("kind") if c.get("kind") in _GROUP_WORDS else "other"
        name = " and ".join(c.get("bugs") or []) if kind in ("found", "known") and c.get("bugs") else c["invariant"]
        groups.setdefault((("unexpected", "found", "known", "other").index(kind), kind, name), []).append((c, n))
    return [(kind, name, sorted(items, key=lambda cn: (cn[0]["shrunk_length"], cn[0]["file"])))
            for (_o, kind, name), items in sorted(groups.items())]


def _listed(items: list) -> str:
    """Counterexamples in a table: preset, invariant, length, sentence and the command that draws each."""
    e = html.escape
    rows = "".join(f"<tr><td>{e(c['preset'])}</td><td class=\"inv\">{e(c['invariant'])}</td><td class=\"num\">"
                   f"{c['shrunk_length']}{f' (and {n - 1} like it)' if n > 1 else ''}</td><td>"
                   f"{e(c.get('explanation', ''))}</td><td><code>isrlab explain {e(c['file'])} --svg "
                   f"{e(c['file'][:-5] if c['file'].endswith('.json') else c['file'])}.svg</code></td></tr>"
                   for c, n in items)
    return ("<table class=\"runs listed\"><tr><th>preset</th><th>invariant</th><th>steps</th><th>sentence</th>"
            f"<th>its diagram</th></tr>{rows}</table>")


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _counterexamples_html(groups: list, budget: int | None = None) -> list[str]:
    """Per bug group: a heading with its count, its shortest counterexample drawn while the sections, the groups
    still to come listed without a drawing included, weigh less than ``budget`` bytes (at most DRAWN_BUDGET), the
    others listed in a fold."""
    budget = DRAWN_BUDGET if budget is None else min(budget, DRAWN_BUDGET)
    undrawn = [_size(_group_html(kind, name, items, "")) for kind, name, items in groups]
    out, used = [], 0
    for k, (kind, name, items) in enumerate(groups):
        room = budget - sum(undrawn[k + 1:])
        drawn = ""
        if used < room:               # with its step table if that fits too, else without, else not at all
            section, table = _counterexample_html(*items[0], k)
            drawn = next((x + "</section>" for x in (section + table, section)
                          if used + _size(_group_html(kind, name, items, x + "</section>")) < room), "")
        out.append(_group_html(kind, name, items, drawn))
        used += _size(out[-1])
    return out


def _group_html(kind: str, name: str, items: list, drawn: str) -> str:
    """One bug group's section: its heading, its drawn counterexample (``drawn``, or "") and the others listed."""
    e = html.escape
    words, cls = _GROUP_WORDS.get(kind, ("attributed to no known bug", "notfound"))
    total = sum(n for _c, n in items)
    presets = sorted({c["preset"] for c, _n in items})
    head = (f'<h3 class="group"><span class="{cls}">{e(words)}</span>: {e(name)}: {total} counterexample'
            f'{"s" * (total != 1)} in {len(presets)} preset{"s" * (len(presets) != 1)} ({e(_some(presets))})'
            "</h3>")
    rest = items[1:] if drawn else items
    if not rest:
        listed = ""
    elif drawn:
        listed = f"<details><summary>{len(rest)} more of {e(name)}</summary>{_listed(rest)}</details>"
    else:
        listed = f"<p class=\"rule\">not drawn here (the page stays under 1 MB)</p>{_listed(rest)}"
    return head + drawn + listed


_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1400px;padding:0 1em;
color:#222} h1{font-size:1.5em} h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table.summary,table.runs{border-collapse:collapse} table td,table th{padding:.25em .8em;text-align:left;
border-bottom:1px solid #eee;vertical-align:top} td.num{text-align:right} table.summary td:first-child,
table.summary td:last-child{white-space:nowrap}
.ok,.found{color:#1a7f37} .UNEXPECTED,.unexpected{color:#cf222e;font-weight:bold} .notfound{color:#9a6700}
.known{color:#0969da} .verdict ul{margin:.3em 0;padding-left:1.4em} .verdict p{margin:.3em 0}
#verdict-end{border-top:2px solid #ddd;margin-top:2em;padding-top:.5em}
.inv{color:#cf222e} .sentence{font-size:1.05em} pre{font-size:11px;overflow-x:auto;background:#f6f8fa;padding:.5em}
figure{margin:0} figure svg,.diagram svg{display:block;max-width:100%;height:auto}
.plots{display:flex;flex-wrap:wrap;gap:1em} #overview{max-width:900px}
details.preset{border:1px solid #eee;margin:.3em 0;padding:.2em .6em} details.preset>summary{cursor:pointer}
code{background:#f6f8fa;padding:0 .2em;overflow-wrap:anywhere} .wide{overflow-x:auto} .attribution ul{margin:.2em 0} .rule{color:#57606a;font-size:.9em}
"""


class _Phases:
    """Says on stderr what the report is doing once a phase has run ``after`` seconds (a quick report says
    nothing); ``after=0`` says every phase as it starts.  Lines go through console.ProgressLine's notes."""

    def __init__(self, after: float | None = 2.0, stream=None):
        from .console import ProgressLine

        self.after, self.said = after, False
        self.out = ProgressLine("report", plain=True, stream=stream) if after is not None else None

    def _say(self, what: str) -> None:
        self.said = True
        self.out.note(f"report: {what}…")

    @contextlib.contextmanager
    def phase(self, what: str):
        timer = None
        if self.out is not None and self.after <= 0:
            self._say(what)
        elif self.out is not None:
            timer = threading.Timer(self.after, self._say, (what,))
            timer.daemon = True
            timer.start()
        try:
            yield
        finally:
            if timer is not None:
                timer.cancel()


def render(folder: str, say_after: float | None = 2.0, stream=None) -> str:
    """The report of the campaign in ``folder`` as an HTML document (a string): the verdict (one line per bug), the
    overview plot across presets, the counterexamples with their diagrams, the presets (a table, then each one's
    detail folded), the data, and the verdict again at the end, where the eye lands.  ``say_after``: the seconds
    after which a phase says on stderr (``stream``) what it is doing; None for never."""
    from .console import fold

    phases = _Phases(say_after, stream)
    summary = load_summary(folder)
    n_tables = sum(os.path.isdir(os.path.join(folder, t)) for t in ("runs", "shards"))
    with phases.phase(f"reading {n_tables} Parquet table{'s' * (n_tables != 1)}"):
        runs = load_runs(folder)
        shards = load_shards(folder)
    e = html.escape
    presets = summary["presets"]
    spec = summary.get("spec") or {}
    title = e(str(summary.get("campaign")))
    head = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>isrlab campaign {title}</title><style>{_STYLE}</style></head><body>",
            f"<h1>isrlab campaign <code>{title}</code></h1>", _verdict_html(summary, "top")]
    points, unit = first_violations(presets, runs, shards)
    with phases.phase(f"drawing the overview of {len(presets)} presets"):
        overview = _overview(points, unit, spec.get("shard_budget_s")) if presets else ""
    what = ("seconds into its shard, estimated from the shard's steps per second" if unit == "seconds"
            else "steps into its shard (no shards table to time them)")
    head.append("<h2>Overview</h2><figure id=\"overview\">" + overview + "<figcaption class=\"rule\">Per preset, "
                f"when its first telling violation came ({what}): the expected headline's for a preset that found its "
                "bug, an unexpected one's, any for a preset that met only known bugs; a preset with nothing found "
                "stands at its budget.</figcaption></figure>")
    rows = ["<h2>Presets</h2><details><summary>the presets in one table</summary><div class=\"wide\">"
            "<table class=\"summary\" id=\"summary\"><tr><th>preset</th><th>expected bugs</th>"
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
    rows.append(f"</table></div></details><p class=\"rule\">{e(PLOT_RULE)}</p>")
    by_preset: dict[str, list] = {}
    for r in runs:
        by_preset.setdefault(r["preset"], []).append(r)
    with phases.phase(f"drawing the plots of {len(presets)} presets"):
        for p, pt in zip(presets, points):
            mine = by_preset.get(p["preset"], [])
            figs = _plots(p["preset"], mine)
            body = ("<div class=\"plots\">" + "".join(f"<figure title=\"{e(t)}\">{svg}</figure>" for t, svg in figs)
                    + "</div>" if figs else "")
            if len(mine) < max(MIN_RUNS_FOR_COVERAGE, MIN_VIOLATIONS_FOR_HISTOGRAM):
                body += _runs_table(mine) if mine else "<p>no runs recorded</p>"
            first = ("nothing telling found" if pt["at"] is None
                     else f"first telling violation after {_amount(pt['at'], unit)} into its shard")
            rows.append(f"<details class=\"preset\"><summary><strong>{e(p['preset'])}</strong>: "
                        f"<span class=\"{_STATUS_CLASS[pt['status']]}\">{e(p['verdict'])}</span>; "
                        f"{p['runs']:,} run{'s' * (p['runs'] != 1)}, {p['steps']:,} steps; {e(first)}"
                        f"</summary>{body}</details>")
    foot = [f"<h2>Data</h2><p><code>{e(os.path.join(folder, 'summary.json'))}</code>, Parquet tables under "
            f"<code>{e(os.path.join(folder, 'runs'))}</code> and <code>{e(os.path.join(folder, 'shards'))}</code> "
            f"(read them with pyarrow or Spark).</p><details><summary>the campaign's specification</summary><pre>"
            f"{e(json.dumps(spec, indent=1))}</pre></details>", _verdict_html(summary, "end"), "</body></html>"]
    folded = fold(summary.get("counterexamples", []))
    groups = bug_groups(folded)
    cxs = [f"<h2>Counterexamples ({len(folded)} distinct, {len(groups)} bug{'s' * (len(groups) != 1)})</h2>"
           f"<p class=\"rule\">{e(DRAWN_RULE)}</p>"]
    with phases.phase(f"replaying and drawing up to {len(groups)} diagram{'s' * (len(groups) != 1)}"):
        # the diagrams get what the rest of the page, rendered first, leaves of PAGE_BUDGET
        rest = _size("\n".join(head + cxs + rows + foot)) + len(groups)
        cxs += _counterexamples_html(groups, PAGE_BUDGET - rest) or ["<p>none</p>"]
    return "\n".join(head + cxs + rows + foot)


def write(folder: str, say_after: float | None = 2.0) -> str:
    """Render and write ``<folder>/report.html`` atomically; its path.  A campaign's bad file is an InputError (exit
    2) naming it; only a failure to write the page itself is a RunError (exit 3)."""
    from .model.trace import write_atomic

    path = os.path.join(folder, "report.html")
    page = render(folder, say_after)
    try:
        write_atomic(path, page)
    except OSError as e:
        raise RunError(f"cannot write the report in {folder}: {e.strerror or e}") from None
    return path
