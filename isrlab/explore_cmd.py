"""``isrlab explore`` (exhaustive BFS of a small configuration) and ``isrlab explain FILE`` (a picture).

Click command objects only; ``isrlab/cli.py`` registers them with ``main.add_command``.  Same
conventions as the rest of the CLI: results on stdout, logs on stderr, exit 0 when no violation,
1 on a violation (or a failing liveness property), 2 on bad input with one ``isrlab: error:`` line.
"""

from __future__ import annotations

import json
import sys

import click

from .exits import EXIT_OK, EXIT_VIOLATION, InputError, RunError
from .inputs import INVARIANT, PRESET, SECONDS, Count


def _bounds_help(name: str) -> str:
    return f"{name} (default: the preset's; `isrlab presets --json` shows them)"


@click.command("explore")
@click.option("--preset", "preset_name", default="kafka-2.4", show_default=True, type=PRESET,
              help="Preset to explore.")
@click.option("--brokers", type=Count(1, 6), default=None, help=_bounds_help("Number of brokers (caps the RF)."))
@click.option("--max-records", type=Count(0, 1000), default=None, help=_bounds_help("Records produced."))
@click.option("--max-epoch", type=Count(0, 1000), default=None,
              help=_bounds_help("Largest partition leader epoch (transitions writing a larger one are pruned)."))
@click.option("--max-crashes", type=Count(0, 1000), default=None, help=_bounds_help("Broker crashes."))
@click.option("--max-expirations", type=Count(0, 1000), default=None,
              help=_bounds_help("ZooKeeper session expirations of live brokers (KRaft: lost heartbeats)."))
@click.option("--max-controller-epoch", type=Count(1, 1000), default=None,
              help=_bounds_help("Controller elections (KRaft: 1 + controller failovers)."))
@click.option("--max-isr-changes", type=Count(0, 1000), default=None,
              help=_bounds_help("Leader ISR writes (shrinks + expansions)."))
@click.option("--max-queue", type=Count(0, 1000), default=None,
              help=_bounds_help("Control requests a ZooKeeper-era controller may hold queued for one broker "
                                "(transitions leaving more are pruned; none: no bound)."))
@click.option("--max-depth", type=Count(0, 10 ** 6), default=None, help="Stop at this BFS depth.")
@click.option("--max-time", "max_time", type=Count(0, 10 ** 12), default=None,
              help=_bounds_help("Model time bound in ms from the start: no clock tick past it (a bound, so the search "
                                "can complete; not with --liveness, which drops the preset's)."))
@click.option("--no-time-bound", is_flag=True, help="No model time bound, whatever the preset's.")
@click.option("--max-states", type=Count(1, 10 ** 9), default=None,
              help=_bounds_help("Give up (incomplete) after this many stored states."))
@click.option("--budget", default=None, type=SECONDS,
              help="Seconds before the search stops, incomplete, with what it found so far (default: none). It "
                   "is checked every 256 transitions, so the search stops within about 0.1 s of it; liveness and "
                   "the --symmetry comparison are then left out.")
@click.option("--acks", "acks", multiple=True, type=click.Choice(["-1", "0", "1"]),
              help=_bounds_help("acks values produced (repeatable)."))
@click.option("--without", multiple=True,
              help=_bounds_help("Action kinds never taken (repeatable; replaces the preset's list; `--without none` "
                                "takes every kind), e.g. ConsumerFetch."))
@click.option("--eager-tasks/--no-eager-tasks", default=None,
              help=_bounds_help("Run due scheduled tasks before anything else (reduction)."))
@click.option("--no-compress", is_flag=True, help="Store every state, also those with a single successor "
              "(compression steps through them; it is off anyway with --liveness).")
@click.option("--symmetry", is_flag=True, help="Deduplicate up to renaming brokers; report the reduction factor "
              "(brokers are interchangeable only where the replica assignment does not tell them apart: with every "
              "broker hosting a replica, as in every preset's default bounds, it is 1).")
@click.option("--invariant", "invariants", multiple=True, type=INVARIANT, metavar="NAME",
              help="Check only these invariants (repeatable).")
@click.option("--all-violations", is_flag=True, help="Go on after a violation: the shortest trace of each invariant.")
@click.option("--continue-past", "continue_past", multiple=True, metavar="NAME",
              help="Invariants whose violations do not stop the search (repeatable; `--continue-past none` for "
                   "none): each one's shortest trace is kept and the search goes on past it, like TLC's -continue. "
                   "(default: those the preset is known to break besides its own bug, so a known violation does "
                   "not hide the bug or end a passing preset's search)")
@click.option("--liveness", is_flag=True, help="Keep the state graph and check the liveness properties (SCCs).")
@click.option("--settle-every", "settle_every", type=Count(0, 10 ** 6), default=None,
              help=_bounds_help("Check liveness on a sample: settle every N-th stored state as the fuzzers settle a "
                                "run's end (no more faults, a fair schedule) and report a property still pending "
                                "after it; 0: none. Works within any bounds; each settled state costs a settling phase of "
                                "hundreds of steps."))
@click.option("--out", default="campaigns/explore/counterexamples", show_default=True,
              type=click.Path(file_okay=False),
              help="Folder the shortest counterexample is archived in (untracked, like a campaign's; `isrlab "
                   "promote` moves one into a regression folder).")
@click.option("--no-archive", is_flag=True, help="Do not write the counterexample.")
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def explore(preset_name, brokers, max_records, max_epoch, max_crashes, max_expirations, max_controller_epoch,
            max_isr_changes, max_queue, max_depth, max_time, no_time_bound, max_states, budget, acks, without, eager_tasks,
            no_compress, symmetry, invariants, all_violations, continue_past, liveness, settle_every, out, no_archive,
            quiet, as_json) -> None:
    """Breadth-first search of every reachable state of a preset within explicit bounds.

    Checks every safety invariant on every state and transition; on a violation prints and archives the
    shortest trace to it (a minimal counterexample) and exits 1. Bounds not given are the preset's
    (they allow a crash or a session expiration; the README's table says which presets' searches
    complete or find their bug with them). The result says what stopped a search that did not
    complete: a violation, --budget, --max-states or --max-depth; a line says when a breaking
    preset's own bug was not found. Progress goes to stderr.

    Example (KAFKA-7128; the README gives each preset's time): isrlab explore --preset kafka-0.11
    """
    from .model.actions import ACTION_BY_NAME
    from .model.config import ConfigError, explore_bounds, preset
    from .model.trace import Trace
    from .properties.explain import sentence
    from .properties.budget import Deadline
    from .properties.explore import (ExplorerError, LIVENESS, check_liveness, coverage, explore as run_explore,
                                     search_args)
    from .properties.invariants import BY_NAME, SAFETY, Violation
    from .properties.replay import replay as run_replay
    from .inputs import check_output_folder
    from .userpresets import EXPLORE as USER_BOUNDS

    if not no_archive:
        check_output_folder(out, "--out")
    given = {"brokers": brokers, "max_records": max_records, "max_epoch": max_epoch, "max_crashes": max_crashes,
             "max_expirations": max_expirations, "max_controller_epoch": max_controller_epoch,
             "max_isr_changes": max_isr_changes, "max_time": max_time, "max_states": max_states, "max_queue": max_queue,
             "acks": tuple(int(a) for a in acks) or None, "eager_tasks": eager_tasks, "settle_every": settle_every,
             "without": (() if [w.lower() for w in without] == ["none"] else tuple(without)) if without else None}
    defaults = {**explore_bounds(preset_name), **USER_BOUNDS.get(preset_name, {})}
    b = {k: defaults[k] if v is None else v for k, v in given.items()}
    if no_time_bound or (liveness and max_time is None):
        b["max_time"] = None
    from_preset = sorted(k for k, v in given.items() if v is None and k in defaults)
    try:
        p = preset(preset_name)
        cfg, search_kw = search_args(p.config, b)   # the bounds as explore's keyword arguments
    except ConfigError as e:
        raise InputError(str(e)) from None
    without = tuple(b["without"])
    max_time, max_states = b["max_time"], b["max_states"]
    unknown = [w for w in without if w not in ACTION_BY_NAME]
    if unknown:
        raise InputError(f"unknown action kind(s) {', '.join(unknown)}")

    def check_safety(names, option, also=""):
        bad = [n for n in names if n not in BY_NAME or BY_NAME[n] not in SAFETY]
        if bad:
            raise InputError(f"unknown invariant(s) {', '.join(bad)}{option} "
                             f"(known: {', '.join(i.name for i in SAFETY)}{also})")

    check_safety(invariants, "")
    checked = tuple(BY_NAME[n] for n in invariants) if invariants else SAFETY
    if continue_past:
        go_on = () if [c.lower() for c in continue_past] == ["none"] else tuple(continue_past)
        check_safety(go_on, " for --continue-past", ", or none")
    elif invariants:
        go_on = ()   # the invariants asked for are the search's goal
    else:
        go_on = default_continue_past(p)
    if liveness and max_time is not None:
        raise InputError("--liveness needs time to diverge: drop --max-time")
    deadline = Deadline(budget)  # the whole command's budget: the search, and the --symmetry comparison
    progress = None if quiet else Progress(preset_name)
    try:
        res = run_explore(cfg, **search_kw, max_depth=max_depth, invariants=checked, symmetry=symmetry,
                          stop_at_first=not all_violations, keep_graph=liveness, progress=progress,
                          should_stop=deadline, compress=not no_compress, go_on_past=go_on)
    except ExplorerError as e:
        raise InputError(str(e)) from None
    finally:
        if progress is not None:
            progress.close()
    summary = {"preset": preset_name, "expected": p.expected, "config": cfg.to_json(),
               "bounds": {**search_kw, "max_depth": max_depth, "without": sorted(without)},
               "bounds_from_preset": from_preset, "continue_past": list(go_on),
               "symmetry": symmetry, "distinct_states": res.distinct_states, "chain_states": res.chain_states,
               "compressed": res.compressed, "transitions": res.transitions,
               "pruned": res.pruned, "depth": res.depth, "complete": res.complete, "stop_reason": res.stop_reason,
               "budget_s": budget, "stopped_by_budget": res.stopped_by_budget,
               "seconds": round(res.seconds, 3), "cpu_seconds": round(res.cpu_seconds, 3),
               "states_per_second": round(res.states_per_second),
               "kinds": res.kinds, "violations": []}
    if symmetry and not res.stopped_by_budget:
        full = run_explore(cfg, **search_kw, max_depth=max_depth, invariants=checked,
                           stop_at_first=not all_violations, should_stop=deadline, compress=not no_compress,
                           go_on_past=go_on)
        if full.stopped_by_budget:
            summary["stopped_by_budget"] = True
        else:
            summary["states_without_symmetry"] = full.distinct_states
            summary["symmetry_reduction"] = round(full.distinct_states / res.distinct_states, 3)
    summary["settled_states"] = res.settled
    for name, f in res.found.items():
        sampled = name in LIVENESS   # found by settling a sample of the states: the path to one, not the shortest
        provenance = {"engine": "explore", "bounds": summary["bounds"], "minimal": not sampled,
                      "distinct_states": res.distinct_states}
        if sampled:
            # as a fuzzer's: the prefix, then the settling steps that show the cluster stuck (``settle_from``)
            from .archive import counterexample

            trace = counterexample(preset_name, cfg, f.actions, name, provenance, len(f.actions)).trace
            v = Violation(**trace.violation)
        else:
            trace = Trace(config=cfg, actions=list(f.actions), expect="violation", violated=name, preset=preset_name,
                          provenance=provenance)
            rr = run_replay(trace)
            v = next((x for x in rr.violations if x.invariant == name), f.violation)
            trace.violation = v.to_json()
            trace.explanation = sentence(cfg, trace.actions, v)
        item = {"invariant": name, "liveness": sampled, "length": len(trace.actions),
                "settle_from": trace.provenance.get("settle_from"), "violation": v.to_json(),
                "explanation": trace.explanation, "actions": trace.to_json()["actions"]}
        if not no_archive:
            from .archive import archive_counterexample

            trace.description = f"found by isrlab explore --preset {preset_name}"
            path, written = archive_counterexample(out, preset_name, trace)
            item.update(trace_file=path, newly_archived=written)
        summary["violations"].append(item)
    live_failed = False
    if liveness:
        summary["coverage"] = coverage(res)
    if liveness and res.stopped_by_budget:
        summary["liveness"] = None  # a graph cut by the budget: its lassos and its "holds" would mean little
    elif liveness:
        summary["liveness"] = {}
        for name, lasso in check_liveness(res).items():
            summary["liveness"][name] = {"reference": LIVENESS[name][0], "statement": LIVENESS[name][1],
                                         "holds": lasso is None,
                                         "lasso": None if lasso is None else lasso.to_json()}
            live_failed |= lasso is not None
    summary["missed_bug"] = missed_bug_text(preset_name, p.expected, p.breaks, res, budget, max_states, max_depth,
                                            checked, go_on, b["settle_every"] > 0 or liveness,
                                            {n for n, r in (summary.get("liveness") or {}).items() if not r["holds"]})
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        click.echo(f"bounds: {describe_bounds(cfg, b)}"
                   + (f" (the preset's: {', '.join(from_preset)})" if from_preset else ""))
        click.echo(f"{preset_name}: {res.visited:,} states ({res.distinct_states:,} stored, {res.chain_states:,} "
                   f"stepped through in chains), {res.transitions:,} transitions ({res.pruned:,} pruned), depth "
                   f"{res.depth}, {res.seconds:.1f} s ({summary['states_per_second']:,} states/s), "
                   f"{status_text(res, budget, max_states, max_depth, all_violations, go_on)}")
        if go_on:
            click.echo(f"going on past violations of {', '.join(go_on)} (known to the preset; "
                       f"`--continue-past none` stops at the first violation of any invariant)")
        if symmetry and "symmetry_reduction" not in summary:
            click.echo("symmetry: reduction not measured (stopped by --budget)")
        elif symmetry:
            click.echo(f"symmetry: {summary['states_without_symmetry']:,} states without, reduction x"
                       f"{summary['symmetry_reduction']}")
        for item in summary["violations"]:
            past = " (known to the preset; the search went on past it)" if item["invariant"] in go_on else ""
            if item["liveness"]:
                click.echo(f"VIOLATION {item['invariant']} (liveness): the cluster does not settle after "
                           f"{item['settle_from']} actions (the path to the first sampled state that does not "
                           f"settle), then {item['length'] - item['settle_from']} settling steps")
            else:
                click.echo(f"VIOLATION {item['invariant']}: minimal trace of {item['length']} actions{past}")
            click.echo(item["explanation"])
            if "trace_file" in item:
                verb = "archived as" if item["newly_archived"] else "already archived as"
                click.echo(f"{verb} {item['trace_file']}")
        if liveness:
            if summary["liveness"] is None:
                click.echo("liveness: not checked (the search was stopped by --budget)")
            for name, r in (summary["liveness"] or {}).items():
                if r["holds"]:
                    click.echo(f"liveness {name} ({r['reference']}): holds (no fair lasso within the bounds)")
                else:
                    la = r["lasso"]
                    click.echo(f"liveness {name} ({r['reference']}): FAILS: lasso with a prefix of "
                               f"{len(la['prefix'])} and a cycle of {len(la['cycle'])} actions")
            cov = summary["coverage"]
            click.echo(f"reachable: {len(cov['action_kinds'])} action kinds, errors {', '.join(cov['errors'])}; "
                       f"witnesses {', '.join(cov['witnesses']) or 'none'}")
        if not res.found:
            where = "" if res.complete else " in the states searched before the search stopped"
            click.echo(f"no violation{where} (preset expects: {p.expected})")
        if summary["missed_bug"]:
            click.echo(summary["missed_bug"])
    sys.exit(EXIT_VIOLATION if (res.found or live_failed) else EXIT_OK)


def default_continue_past(p) -> tuple:
    """The safety invariants the preset ``p`` is known to break besides its own bug (``Preset.also_breaks``): the
    violations a default search goes on past, so that a known, shorter one neither hides the preset's bug nor ends
    a passing preset's search."""
    from .properties.invariants import BY_NAME, SAFETY

    return tuple(n for n in p.also_breaks if n != p.expected and n in BY_NAME and BY_NAME[n] in SAFETY)


def status_text(res, budget, max_states, max_depth, all_violations, go_on=()) -> str:
    """How the search ended, naming the bound or limit that stopped one that is not complete."""
    if res.complete:
        if res.found and all(n in go_on for n in res.found):
            return "complete: every state within the bounds checked, only violations known to the preset found"
        return "complete: every state within the bounds checked" + (
            ", violations found" if res.found else "")
    if res.stop_reason == "violation":
        return "stopped at the first violation (--all-violations goes on)" if not all_violations else \
            "stopped: a violation of every invariant found"
    if res.stop_reason == "budget":
        return f"INCOMPLETE: stopped by --budget {budget:g} s"
    if res.stop_reason == "max_states":
        return f"INCOMPLETE: stopped by --max-states {max_states:,}"
    if res.stop_reason == "max_depth":
        return f"INCOMPLETE: states at --max-depth {max_depth} not expanded"
    return "INCOMPLETE"  # pragma: no cover


def missed_bug_text(name: str, expected: str, known, res, budget, max_states, max_depth, checked,
                    go_on=(), settling=False, lassos=frozenset()) -> str | None:
    """One line when a breaking preset's own bug was not found: not within completed bounds, or the search stopped
    (naming what stopped it) before reaching it, or (a liveness bug) no liveness check was asked for; None when
    found, expected to pass, or a safety invariant not checked.  ``settling``: the search settled a sample of its
    states (``--settle-every``) or checked the graph's lassos (``--liveness``; ``lassos`` names those that failed)."""
    from .properties.invariants import LIVENESS_BY_NAME

    if expected == "pass" or expected in res.found or expected in lassos:
        return None
    if expected in LIVENESS_BY_NAME:
        if not settling:
            return (f"{name}'s bug ({expected}) is a liveness property, which this search did not check: "
                    f"`--settle-every 8` settles a sample of the states, `--liveness` checks the whole graph")
    elif expected not in {i.name for i in checked}:
        return None
    fuzz = f"`isrlab fuzz --preset {name}` searches further"
    if res.complete:
        return (f"{name}'s bug ({expected}) is not within these bounds: try larger ones (`isrlab explore --help`), "
                f"or {fuzz}")
    if res.stop_reason == "violation":
        first = next(n for n in res.found if n not in go_on)
        how = "one the preset is known to break as well" if first in known else "another invariant"
        return (f"{name}'s bug ({expected}) not reached: the search stopped at the first violation, {first} ({how}); "
                f"`--invariant {expected}` looks for it alone, or {fuzz}")
    why = {"budget": f"--budget {budget:g} s" if budget is not None else "the budget",
           "max_states": f"--max-states {max_states:,}", "max_depth": f"--max-depth {max_depth}"}
    return (f"{name}'s bug ({expected}) not found before {why.get(res.stop_reason, res.stop_reason)} stopped the "
            f"search: raise it, or {fuzz}")


def describe_bounds(cfg, b: dict) -> str:
    """The bounds of a search in one line."""
    t = "no time bound" if b["max_time"] is None else f"{b['max_time']:,} ms of model time"
    return (f"{cfg.n_brokers} brokers, {b['max_records']} records, {b['max_crashes']} crashes, "
            f"{b['max_expirations']} expirations, controller epochs <= {b['max_controller_epoch']}, leader epochs <= "
            f"{b['max_epoch']}, ISR changes <= {b['max_isr_changes']}, {t}, acks {','.join(map(str, b['acks']))}, "
            f"{'eager' if b['eager_tasks'] else 'interleaved'} tasks, without {','.join(b['without']) or 'nothing'}, "
            f"max {b['max_states']:,} states" + ("" if b["max_queue"] is None else
                                                 f", control requests queued per broker <= {b['max_queue']}")
            + (f", liveness settled on every {b['settle_every']}th stored state" if b["settle_every"] else ""))


class Progress:
    """Progress of a search on stderr, like TLC's: states, states/s, queue and depth.

    On a terminal one live line (rich) redrawn as the search goes; otherwise (a pipe, a log file) a plain line
    every ``every`` seconds.  The engine calls it every few thousand stored states; the clock is read here only.
    """

    def __init__(self, name: str, every: float = 10.0, stream=None):
        import time

        self.name, self.every, self.clock = name, every, time.monotonic
        self.stream = stream if stream is not None else sys.stderr
        self.last = self.clock()
        self.live = None
        if self.stream.isatty():
            from rich.console import Console

            self.live = Console(file=self.stream).status("")
            self.live.start()

    def line(self, r) -> str:
        return (f"explore {self.name}: {r.visited:,} states ({r.distinct_states:,} stored), "
                f"{r.states_per_second:,.0f} states/s, queue {r.queue:,}, depth {r.depth}, {r.seconds:.0f} s")

    def __call__(self, r) -> None:
        if self.live is not None:
            self.live.update(self.line(r))
            return
        now = self.clock()
        if now - self.last >= self.every:
            self.last = now
            print(self.line(r), file=self.stream, flush=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


@click.command("explain")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--svg", "svg_out", type=click.Path(dir_okay=False), default=None, help="Write an SVG diagram here.")
@click.option("--png", "png_out", type=click.Path(dir_okay=False), default=None, help="Write a PNG diagram here.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def explain(file, svg_out, png_out, as_json) -> None:
    """Explain the trace FILE in one sentence and draw its space-time diagram (--svg / --png).

    After the sentence, the known bugs the violation is attributed to (the bugs whose fix removes it,
    `isrlab bugs`) and the replays behind that, one line per fix tried; a line says when the trace
    records another attribution. Exit 0 when no invariant fails and the trace expects none, 1 when one
    fails (the sentence names it; when the trace expects another invariant that holds, the sentence
    says so first).

    Example: isrlab explain counterexamples/FILE.json --svg cx.svg
    """
    from . import diagram
    from .cli import load_trace_file, replay_or_fail
    from .inputs import check_output_file
    from .model.trace import write_atomic
    from .properties.explain import attribution_lines, sentence
    from .properties.replay import attribution_of

    if svg_out is not None and png_out is not None:
        raise InputError("give either --svg or --png, not both")
    target = svg_out if svg_out is not None else png_out
    if target is not None:
        check_output_file(target, "--svg" if svg_out is not None else "--png")
    trace = load_trace_file(file)
    result = replay_or_fail(trace, file, with_changes=False)
    wanted = [v for v in result.violations if trace.violated is None or v.invariant == trace.violated]
    if wanted:
        text = sentence(trace.config, trace.actions, wanted[0], trace.start)
    elif result.violations:
        first = result.violations[0]
        text = (f"The trace expects a violation of {trace.violated}, which holds in its {len(trace.actions)} steps; "
                f"{first.invariant} fails instead: " + sentence(trace.config, trace.actions, first, trace.start))
    else:
        text = f"No invariant fails in the {len(trace.actions)} steps of this trace."
    shown = wanted[0] if wanted else result.violations[0] if result.violations else None
    attribution = None
    if shown is not None:     # the replay computed it already for the violation the trace expects, if it records one
        attribution = (result.attribution if result.attribution is not None and shown.invariant == trace.violated
                       else attribution_of(trace, shown))
    try:
        d = diagram.build(trace, sentence=text, attribution=attribution.summary() if attribution else "")
    except ValueError as e:
        raise InputError(f"{file}: {e}") from None
    written = None
    if target is not None:
        data = diagram.to_svg(d) if svg_out is not None else diagram.to_png(d)
        try:
            write_atomic(target, data)
        except OSError as e:
            raise RunError(f"cannot write {target}: {e.strerror or e}") from None
        written = target
        click.echo(f"wrote {target}", err=True)
    if as_json:
        click.echo(json.dumps({"file": file, "explanation": text, "violation_step": d.violation_step,
                               "violations": [v.invariant for v in result.violations],
                               "matches_expectation": result.matches_expectation,
                               "attribution": attribution.to_json() if attribution else None,
                               "attribution_problem": result.attribution_problem,
                               "lanes": d.lanes, "steps": len(d.events), "diagram": written}, indent=1))
    else:
        click.echo(text)
        if attribution is not None:
            summary, *evidence = attribution_lines(attribution)
            click.echo(f"attribution: {summary}")
            for line in evidence:
                click.echo(f"  {line}")
        if result.attribution_problem is not None:
            click.echo(f"NOT the trace's attribution: {result.attribution_problem}")
    clean = not result.violations and not result.check_failures
    sys.exit(EXIT_OK if clean and result.matches_expectation else EXIT_VIOLATION)
