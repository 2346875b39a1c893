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
@click.option("--composite/--fine", "composite", default=None,
              help=_bounds_help("Search at the protocol's grain: take each exchange (a request with its handling and "
                                "response, a broker's catch-up on the metadata log, a controller's queue to one "
                                "broker) whole and deliver each controller decision to every live broker at once, "
                                "checking every state it passes (--composite); or every interleaving "
                                "of the model's actions (--fine). A complete composite search proves the invariants "
                                "for those schedules; only --fine covers the interleavings inside "
                                "them. --liveness and --no-compress search --fine; --spark searches either, a level per "
                                "choice."))
@click.option("--max-in-flight", "max_in_flight", type=Count(0, 8), default=None,
              help=_bounds_help("With --composite: requests (a fetch, an OffsetsForLeaderEpoch, an AlterPartition, a "
                                "controlled shutdown) a state may hold unanswered. Each is taken both answered at once "
                                "and held, its answer later a choice of its own, as a TLA+ spec's message in flight; "
                                "0 runs every exchange whole (--fine holds any number)."))
@click.option("--max-lagging", "max_lagging", type=Count(0, 8), default=None,
              help=_bounds_help("With --composite: brokers a state may leave lagging the controller. A step that "
                                "delivers a decision to a broker is taken again with that broker's deliveries held, "
                                "each of them later a choice of its own; 0 delivers every decision to every live "
                                "broker at once (--fine lets any broker lag)."))
@click.option("--scopes", "scopes", is_flag=True,
              help="Small scopes first: instead of one search of the bounds, composite searches of every small choice "
                   "of brokers, records, crashes, expirations, leader and controller epochs and clock (each within "
                   "the preset's budgets; a bound given pins its dimension), the smallest first, each stopped at "
                   "--max-states (default 10,000; half as many a size below 3, a quarter two sizes below...) and the "
                   "stopped ones searched again with four times as many; "
                   "until a violation no known bug explains or the preset's own bugs, --budget, or every scope "
                   "complete (properties/scopes.py).")
@click.option("--seed", "seed", type=Count(0, 2 ** 63 - 1), default=0, show_default=True,
              help="With --scopes: the order of scopes of the same size.")
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
                   "(default: the search goes on past every violation attributed to a known bug other than the "
                   "preset's own, so a known bug neither hides another nor ends a passing preset's search, and stops "
                   "at one no known bug's fix removes; `isrlab bugs` lists them)")
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
@click.option("--spark", "on_spark", is_flag=True,
              help="Search on Spark, a breadth-first level per round (isrlab/spark_explore.py): embedded local[*] "
                   "unless --master; the same counts as --no-compress and the same shortest traces; each level "
                   "checkpointed, so the same search run again resumes from its last level.")
@click.option("--master", default=None, metavar="URL", help="Spark master for --spark (implies it; default local[*]).")
@click.option("--checkpoint", "checkpoint", default=None, type=click.Path(file_okay=False),
              help="Folder of the --spark search's checkpoint (default: campaigns/explore/spark/<preset>-<digest "
                   "of the search>, resumed when it holds the same search).")
@click.option("--conf", "conf", multiple=True, metavar="KEY=VALUE", help="Spark configuration for --spark (repeatable).")
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def explore(preset_name, brokers, max_records, max_epoch, max_crashes, max_expirations, max_controller_epoch,
            max_isr_changes, max_queue, max_depth, max_time, no_time_bound, max_states, budget, acks, without, eager_tasks,
            composite, max_in_flight, max_lagging, scopes, seed, no_compress, symmetry, invariants, all_violations, continue_past, liveness, settle_every, out, no_archive,
            on_spark, master, checkpoint, conf, quiet, as_json) -> None:
    """Breadth-first search of every reachable state of a preset within explicit bounds.

    Checks every safety invariant on every state and transition; on a violation prints and archives the
    shortest trace to it (a minimal counterexample) and exits 1. Bounds not given are the preset's
    (they allow a crash or a session expiration; the README's table says which presets' searches
    complete or find their bug with them). Each violation is attributed to the known bugs whose fix
    removes it (`isrlab bugs`); the result names the preset's bugs found and not found and every
    violation no known fix explains (UNEXPECTED). It says what stopped a search that did not
    complete: a violation, --budget, --max-states or --max-depth. Progress goes to stderr.

    Example (KAFKA-7128; the README gives each preset's time): isrlab explore --preset kafka-0.11
    """
    from .model.actions import ACTION_BY_NAME
    from .model.config import ConfigError, explore_bounds, preset
    from .model.trace import Trace
    from .properties.explain import sentence
    from .properties.budget import Deadline
    from .properties.explore import (ExplorerError, LIVENESS, check_liveness, coverage, explore as run_explore,
                                     search_args)
    from .properties.attribution import KnownBugs, classify, preset_result
    from .properties.invariants import BY_NAME, SAFETY, Violation
    from .properties.replay import replay as run_replay
    from .inputs import check_output_folder
    from .userpresets import EXPLORE as USER_BOUNDS

    if no_time_bound and max_time is not None:
        raise InputError(f"--no-time-bound and --max-time {max_time} contradict each other: give one of them")
    if not no_archive:
        check_output_folder(out, "--out")
    given = {"brokers": brokers, "max_records": max_records, "max_epoch": max_epoch, "max_crashes": max_crashes,
             "max_expirations": max_expirations, "max_controller_epoch": max_controller_epoch,
             "max_isr_changes": max_isr_changes, "max_time": max_time, "max_states": max_states, "max_queue": max_queue,
             "acks": tuple(int(a) for a in acks) or None, "eager_tasks": eager_tasks, "settle_every": settle_every,
             "composite": composite, "max_in_flight": max_in_flight, "max_lagging": max_lagging,
             "without": (() if [w.lower() for w in without] == ["none"] else tuple(without)) if without else None}
    defaults = {**explore_bounds(preset_name), **USER_BOUNDS.get(preset_name, {})}
    b = {k: defaults[k] if v is None else v for k, v in given.items()}
    if no_time_bound or (liveness and max_time is None):
        b["max_time"] = None
    fine_only = "--liveness" if liveness else "--no-compress" if no_compress else None
    if seed and not scopes:
        raise InputError(f"--seed {seed} orders the scopes of --scopes: give --scopes, or drop --seed")
    if scopes and continue_past:
        raise InputError("--scopes goes on past known bugs by attribution: --continue-past is not available with it")
    if scopes and (on_spark or master is not None):
        raise InputError("--scopes and --spark contradict each other: --scopes searches in this process")
    if scopes and (fine_only or composite is False):
        raise InputError(f"--scopes and {fine_only or '--fine'} contradict each other: --scopes searches "
                         f"--composite")
    if fine_only and b["composite"]:
        if composite:
            raise InputError(f"--composite and {fine_only} contradict each other: {fine_only} searches --fine")
        b["composite"] = False
    for option, v, what in (("--max-in-flight", max_in_flight, "holds requests"),
                            ("--max-lagging", max_lagging, "lets brokers lag")):
        if v and not (b["composite"] or scopes):
            raise InputError(f"{option} {v} {what} in a --composite search; {fine_only or '--fine'} "
                             f"{what} without a bound already: give --composite, or drop it")
    if not b["composite"]:
        b["max_in_flight"] = b["max_lagging"] = None   # not bounds of a fine search: it has no such limit
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
    go_on = ()
    if continue_past:
        go_on = () if [c.lower() for c in continue_past] == ["none"] else tuple(continue_past)
        check_safety(go_on, " for --continue-past", ", or none")
    if liveness and max_time is not None:
        raise InputError("--liveness needs time to diverge: drop --max-time")
    # By default every violation is attributed as the search meets it (KnownBugs) and the search goes on past those
    # of known bugs; --continue-past names the invariants to go on past instead (attributed once the search ends).
    judge = None if continue_past else KnownBugs(p, cfg)
    deadline = Deadline(budget)  # the whole command's budget: the search, and the --symmetry comparison
    spark_info = ladder = None
    judges = [judge]
    if scopes:
        res, ladder, cfg, search_kw, b, judges = _scopes(p, p.config, b, given, no_time_bound, seed, judge, deadline,
                                                         dict(max_depth=max_depth, invariants=checked,
                                                              symmetry=symmetry, stop_at_first=not all_violations,
                                                              go_on_past=go_on), quiet)
        judge = judges[-1]
    elif on_spark or master is not None:
        res, spark_info = _on_spark(preset_name, cfg, search_kw, max_depth, checked, all_violations, go_on, judge,
                                    deadline, master, checkpoint, conf, liveness, symmetry, quiet)
    else:
        progress = None if quiet else Progress(preset_name)
        try:
            res = run_explore(cfg, **search_kw, max_depth=max_depth, invariants=checked, symmetry=symmetry,
                              stop_at_first=not all_violations, keep_graph=liveness, progress=progress,
                              should_stop=deadline, compress=not no_compress, go_on_past=go_on, judge=judge)
        except ExplorerError as e:
            raise InputError(str(e)) from None
        finally:
            if progress is not None:
                progress.close()
    attributions = judge if judge is not None else KnownBugs(p, cfg)
    if judge is None:
        judges = [attributions]
    summary = {"preset": preset_name, "expected": p.expected, "expected_bugs": list(p.bugs),
               "known_bugs": [b.id for b in p.known_bugs], "config": cfg.to_json(),
               "bounds": {**search_kw, "max_depth": max_depth, "without": sorted(without)},
               "bounds_from_preset": from_preset, "continue_past": list(go_on), "past_known_bugs": judge is not None,
               "symmetry": symmetry, "distinct_states": res.distinct_states, "chain_states": res.chain_states,
               "compressed": res.compressed, "transitions": res.transitions,
               "pruned": res.pruned, "depth": res.depth, "complete": res.complete, "stop_reason": res.stop_reason,
               "budget_s": budget, "stopped_by_budget": res.stopped_by_budget,
               "seconds": round(res.seconds, 3), "cpu_seconds": round(res.cpu_seconds, 3),
               "states_per_second": round(res.states_per_second),
               "passed_violations": res.passed, "attributions_made": sum(j.made for j in judges),
               "attribution_seconds": round(sum(j.seconds for j in judges), 3),
               "kinds": res.kinds, "bounds_met": sorted(res.bounds_met), "violations": []}
    if ladder is not None:
        summary["scopes"] = ladder
    if symmetry and not res.stopped_by_budget and ladder is None:
        full = run_explore(cfg, **search_kw, max_depth=max_depth, invariants=checked,
                           stop_at_first=not all_violations, should_stop=deadline, compress=not no_compress,
                           go_on_past=go_on, judge=None if judge is None else KnownBugs(p, cfg))
        if full.stopped_by_budget:
            summary["stopped_by_budget"] = True
        else:
            summary["states_without_symmetry"] = full.distinct_states
            summary["symmetry_reduction"] = round(full.distinct_states / res.distinct_states, 3)
    summary["settled_states"] = res.settled
    if spark_info is not None:
        summary["engine"] = "spark"
        summary["spark"] = spark_info
    # what is reported: each violation the search recorded (one that stopped it, or one kept by --continue-past or
    # --all-violations), then the shortest of each attribution it went on past
    reported = [(name, f.actions, f.violation, False, attributions) for name, f in res.found.items()]
    # the shortest of each attribution passed (with --scopes, over every scope's judge: each trace in its scope's
    # configuration)
    best: dict = {}
    for j in judges:
        for k, (acts, facts) in j.passed.items():
            if k not in best or len(acts) < len(best[k][0]):
                best[k] = (acts, Violation(k[0], len(acts), facts), j)
    reported += [(k[0], acts, v, True, j) for k, (acts, v, j) in best.items()]
    reported.sort(key=lambda r: len(r[1]))   # in the order a breadth-first search meets them
    shortest = {}
    for name, acts, _v, _p, _j in reported:
        shortest[name] = min(len(acts), shortest.get(name, len(acts)))
    credited = []
    for name, actions, found_v, passed, by in reported:
        cfg = by.cfg   # the configuration the trace was found in (one scope's, with --scopes)
        sampled = name in LIVENESS   # found by settling a sample of the states: the path to one, not the shortest
        provenance = {"engine": "explore", "bounds": summary["bounds"] if by is attributions else
                      {"scope": by.scope},
                      "minimal": not sampled and not res.composite and len(actions) == shortest[name],
                      "distinct_states": res.distinct_states}
        if res.composite:   # the shortest among schedules that run exchanges whole: a fine search may find shorter
            provenance["composite"] = True
        if sampled:
            # as a fuzzer's: the prefix, then the settling steps that show the cluster stuck (``settle_from``)
            from .archive import counterexample

            trace = counterexample(preset_name, cfg, actions, name, provenance, len(actions)).trace
            v = Violation(**trace.violation)
        else:
            trace = Trace(config=cfg, actions=list(actions), expect="violation", violated=name, preset=preset_name,
                          provenance=provenance)
            rr = run_replay(trace)
            v = next((x for x in rr.violations if x.invariant == name), found_v)
            trace.violation = v.to_json()
            trace.explanation = sentence(cfg, trace.actions, v)
        a = by.attribution(name, trace.actions)
        kind, bugs = classify(p, a)
        credited.append(a)
        trace.attribution = a.to_json()   # archive.counterexample does not attach it (yet): the archived file has it
        item = {"invariant": name, "liveness": sampled, "length": len(trace.actions), "passed": passed,
                "minimal": trace.provenance.get("minimal", False),
                "settle_from": trace.provenance.get("settle_from"), "violation": v.to_json(),
                "explanation": trace.explanation, "attribution": a.to_json(), "attributed": a.summary(),
                "kind": kind, "bugs": list(bugs), "actions": trace.to_json()["actions"]}
        if not no_archive:
            from .cli import _archive_or_fail   # a write failure (disk full) is one line, exit 3

            trace.description = f"found by isrlab explore --preset {preset_name}"
            path, written = _archive_or_fail(out, preset_name, trace)
            item.update(trace_file=path, newly_archived=written)
        summary["violations"].append(item)
    result = preset_result(p, credited)
    if not p.bugs and not result["unexpected"] and result["known"]:
        result["verdict"] = "known bugs only"   # a preset expected to pass met violations, all of known bugs
    summary["result"] = {**result, "text": verdict_text(p, result, res.complete)}
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
    stopper = next((i for i in summary["violations"] if not i["passed"] and i["invariant"] not in go_on), None)
    summary["missed_bug"] = missed_bug_text(
        preset_name, p.expected, p.bugs, result["found"], res, budget, max_states, max_depth, checked,
        None if stopper is None else (stopper["invariant"], stopper["attributed"]),
        b["settle_every"] > 0 or liveness,
        {n for n, r in (summary.get("liveness") or {}).items() if not r["holds"]})
    known_only = bool(summary["violations"]) and not result["unexpected"]
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        if ladder is not None:
            click.echo(f"small scopes first: {ladder['searched']:,} searches of {ladder['scopes']:,} scopes "
                       f"({ladder['complete']:,} complete, {ladder['same']:,} more the same as a complete one below "
                       f"them; stopped at {ladder['first_cap']:,} states, halved for each size below 3, then "
                       f"{ladder['growth']}x as many), "
                       + ("every scope complete" if res.complete else
                          f"the {'deciding' if res.found else 'last'} scope's bounds:"))
        click.echo(f"bounds: {describe_bounds(cfg, b)}"
                   + (f" (the preset's: {', '.join(from_preset)})" if from_preset and ladder is None else ""))
        click.echo(f"{preset_name}: {res.visited:,} states ({res.distinct_states:,} stored, {res.chain_states:,} "
                   f"stepped through in chains), {res.transitions:,} transitions ({res.pruned:,} pruned), depth "
                   f"{res.depth}, {res.seconds:.1f} s ({summary['states_per_second']:,} states/s), "
                   + status_text(res, budget, max_states, max_depth, all_violations, bool(summary["violations"]),
                                 known_only))
        unmet = bounds_never_met(res, b) if ladder is None else []
        if unmet:
            click.echo(f"bounds never met: {', '.join(_option(n) for n in unmet)} (no state used "
                       "them up and no transition was pruned by them: raised, the search is the same)")
        if spark_info is not None:
            resumed = spark_info["resumed_from"]
            click.echo(f"on Spark ({spark_info['master']}): {len(spark_info['levels'])} levels"
                       + (" of choices (each stepping through its exchange and deliveries), every state "
                          "between them stored" if res.composite else ", every state stored")
                       + f" (no chain compression); checkpoint {spark_info['checkpoint']}"
                       + ("" if resumed is None else f", resumed from depth {resumed}"))
        if judge is not None and res.passed:
            click.echo(f"going on past violations attributed to known bugs (`isrlab bugs`; `--continue-past none` "
                       f"stops at the first violation): {res.passed:,} violating states passed, "
                       f"{summary['attributions_made']:,} attributed in {summary['attribution_seconds']:.1f} s")
        elif go_on:
            click.echo(f"going on past violations of {', '.join(go_on)} (--continue-past)")
        if symmetry and "symmetry_reduction" not in summary:
            click.echo("symmetry: reduction not measured (stopped by --budget)")
        elif symmetry:
            click.echo(f"symmetry: {summary['states_without_symmetry']:,} states without, reduction x"
                       f"{summary['symmetry_reduction']}")
        for item in summary["violations"]:
            past = "; the search went on past it" if item["passed"] or item["invariant"] in go_on else ""
            if item["liveness"]:
                click.echo(f"VIOLATION {item['invariant']} (liveness): the cluster does not settle after "
                           f"{item['settle_from']} actions (the path to the first sampled state that does not "
                           f"settle), then {item['length'] - item['settle_from']} settling steps")
            else:
                grain = composite_grain({"max_in_flight": res.max_in_flight, "max_lagging": res.max_lagging})
                how = ("minimal trace" if item["minimal"] else f"shortest composite trace ({grain}; `isrlab shrink` "
                       "or --fine may find a shorter one)" if res.composite else
                       "shortest trace with this attribution")
                click.echo(f"VIOLATION {item['invariant']}: {how} of {item['length']} actions{past}")
            label = {"found": "the preset's bug", "known": "a known bug, not the preset's",
                     "unexpected": "UNEXPECTED"}[item["kind"]]
            click.echo(f"attributed ({label}): {item['attributed']}")
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
                               f"{len(la['prefix'])} and a cycle of {len(la['cycle'])} actions (not attributed)")
            cov = summary["coverage"]
            click.echo(f"reachable: {len(cov['action_kinds'])} action kinds, errors {', '.join(cov['errors'])}; "
                       f"witnesses {', '.join(cov['witnesses']) or 'none'}")
        click.echo(f"{preset_name}: {summary['result']['text']}")
        if summary["missed_bug"]:
            click.echo(summary["missed_bug"])
    sys.exit(EXIT_VIOLATION if (summary["violations"] or live_failed) else EXIT_OK)


def _scopes(p, cfg, b, given, no_time_bound, seed, judge, deadline, explore_kw, quiet):
    """``--scopes``: the ladder of small scopes (properties/scopes.py) within ``cfg``'s budgets (the preset's), judged
    scope by scope as one search is.

    Returns (the combined result, the JSON summary of the ladder, the deciding or last scope's configuration, its
    ``explore`` keyword arguments and bounds, every scope's judge in order)."""
    from .properties.explore import ExplorerError
    from .properties.scopes import DIMENSIONS, GROWTH, SCOPE_STATES, combined, search_scopes
    from .properties.attribution import ScopeJudges

    pinned = {k: b[k] for k, _v in DIMENSIONS if given.get(k) is not None}
    if no_time_bound:
        pinned["max_time"] = None
    base = {**b, "max_isr_changes": given["max_isr_changes"]}
    first_cap = given["max_states"] or SCOPE_STATES
    judge_for = ScopeJudges(p)
    judges = judge_for.made
    progress = None if quiet else ScopeProgress(p.name)
    try:
        out = search_scopes(cfg, base, judge_for=judge_for, seed=seed, scope_states=first_cap, pinned=pinned,
                            should_stop=deadline, progress=progress, **explore_kw)
    except ExplorerError as e:
        raise InputError(str(e)) from None
    finally:
        if progress is not None:
            progress.close()
    if not out.searched:
        raise RunError("--scopes: the budget ended before the first scope was searched")
    for sc in out.searched:
        sc.judge.scope = sc.bounds   # where each judge's passed violations were met (their traces' provenance)
    last = out.decisive or out.searched[-1]
    info = {"scopes": out.scopes, "searched": len(out.searched),
            "complete": sum(1 for s in out.searched if s.result.complete), "same": len(out.same),
            "first_cap": first_cap, "growth": GROWTH,
            "seed": seed, "pinned": sorted(pinned), "deciding": None if out.decisive is None else last.bounds,
            "every_scope_complete": out.complete}
    return combined(out), info, last.cfg, last.kw, last.search, judges


class ScopeProgress:
    """``--scopes`` progress on stderr: a line every ``every`` seconds (the scopes searched, the states so far, the
    scope being left), and one when the ladder ends."""

    def __init__(self, name: str, every: float = 10.0, stream=None):
        import time

        self.name, self.every, self.clock = name, every, time.monotonic
        self.stream = stream if stream is not None else sys.stderr
        self.last = self.clock()
        self.n = self.states = 0
        self.scope = None

    def __call__(self, scope) -> None:
        self.n += 1
        self.states += scope.result.distinct_states
        self.scope = scope
        if self.clock() - self.last >= self.every:
            self.line()

    def line(self) -> None:
        self.last = self.clock()
        from .properties.scopes import describe

        where = describe(self.scope.bounds) if self.scope is not None else "none yet"
        print(f"{self.name}: {self.n:,} scope{'' if self.n == 1 else 's'} searched, {self.states:,} states; last: {where}",
              file=self.stream, flush=True)

    def close(self) -> None:
        if self.n:
            self.line()


def _on_spark(preset_name, cfg, search_kw, max_depth, checked, all_violations, go_on, judge, deadline, master,
              checkpoint, conf, liveness, symmetry, quiet):
    """The search of ``isrlab explore --spark``: (ExploreResult, what the Spark engine adds to the summary)."""
    import os
    import shutil

    from .cli import _conf_pairs, start_spark, with_task_retries
    from .inputs import check_output_folder
    from .properties.explore import ExplorerError
    from .sparkjob import default_ship_dir
    from . import spark_explore

    for flag, on, why in (
            ("--liveness", liveness, "the liveness check needs the whole state graph in one process"),
            ("--symmetry", symmetry, "its reduction is measured against a second, single-process search"),
            (f"--settle-every {search_kw['settle_every']}", search_kw["settle_every"],
             "the sample follows the single-process search's numbering; give --settle-every 0")):
        if on:
            raise InputError(f"{flag} is not available with --spark ({why})")
    conf_map = _conf_pairs(conf)
    root = None
    if checkpoint is None:
        root = os.path.join("campaigns", "explore", "spark")
        check_output_folder(root, "--checkpoint")
    else:
        check_output_folder(checkpoint, "--checkpoint")
        try:        # a damaged manifest is refused before Spark starts (whether it is of this search, after)
            spark_explore.read_manifest(checkpoint, None)
        except spark_explore.CheckpointError as e:
            raise InputError(str(e)) from None
    kw = {k: v for k, v in search_kw.items() if k != "settle_every"}
    master = with_task_retries(master or "local[*]")   # a lost Python worker's task is retried
    ship_dir = default_ship_dir()
    progress = None if quiet else Progress(preset_name)
    try:
        spark = start_spark(master, "isrlab explore", conf_map, ship_dir)
        try:
            res, info = spark_explore.run(
                spark, cfg, **kw, max_depth=max_depth, invariants=checked, stop_at_first=not all_violations,
                should_stop=deadline, go_on_past=go_on, judge=judge, checkpoint=checkpoint, checkpoint_root=root,
                label=preset_name, options={"preset": preset_name, "past_known_bugs": judge is not None},
                progress=None if progress is None else lambda r, _level: progress(r))
        except (ExplorerError, spark_explore.CheckpointError) as e:
            raise InputError(str(e)) from None
        except OSError as e:
            raise RunError(f"cannot write the checkpoint: {e.strerror or e}") from None
        except Exception as e:  # a Spark job that failed after its retries
            first = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
            raise RunError(f"the Spark job failed: {first[:300]}") from None
        finally:
            spark.stop()
    finally:
        if progress is not None:
            progress.close()
        shutil.rmtree(ship_dir, ignore_errors=True)
    info["master"] = master
    return res, info


def verdict_text(p, r: dict, complete: bool) -> str:
    """The preset's result in one line; a preset expected to pass that met known bugs is not "as expected"."""
    met = f"; other known bugs met: {', '.join(r['known'])}" if r["known"] else ""
    if r["unexpected"]:
        names = ", ".join(sorted({u["invariant"] for u in r["unexpected"]}))
        found = f"; bugs found: {', '.join(r['found'])}" if r["found"] else ""
        return (f"UNEXPECTED: {len(r['unexpected'])} violation(s) of {names} that no known bug's fix removes"
                + found + met)
    if p.bugs:
        if r["not_found"]:
            return (f"not found: {', '.join(r['not_found'])}" + (f" (found: {', '.join(r['found'])})" if r["found"]
                                                                  else "") + met)
        return f"as expected: found {', '.join(r['found'])}" + met
    if r["known"]:
        return (f"known bugs only: met {', '.join(r['known'])}, which the preset contains (it expects to pass); "
                f"each violation is removed by one's fix")
    return "as expected: no violation" + ("" if complete else " in the states searched before the search stopped")


def status_text(res, budget, max_states, max_depth, all_violations, violations=False, known_only=False) -> str:
    """How the search ended, naming the bound or limit that stopped one that is not complete."""
    if res.complete:
        if violations and known_only:
            return "complete: every state within the bounds checked, only violations of known bugs found"
        return "complete: every state within the bounds checked" + (", violations found" if violations else "")
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


def missed_bug_text(name: str, expected: str, bugs, found, res, budget, max_states, max_depth, checked,
                    stopped_at=None, settling=False, lassos=frozenset()) -> str | None:
    """One line saying why a breaking preset's own bugs were not all found (attributed), or None: what to try next."""
    from .properties.invariants import LIVENESS_BY_NAME

    missing = [x for x in bugs if x not in found]
    if expected == "pass" or not missing or expected in lassos:
        return None
    what = f"{name}'s bug ({', '.join(missing)}: {expected})"
    if expected in LIVENESS_BY_NAME:
        if not settling:
            return (f"{what} is a liveness property, which this search did not check: "
                    f"`--settle-every 8` settles a sample of the states, `--liveness` checks the whole graph")
    elif expected not in {i.name for i in checked}:
        return None
    fuzz = f"`isrlab fuzz --preset {name}` searches further"
    if res.complete:
        from .properties.explore import BOUND_NAMES

        met = [_option(n) for n in BOUND_NAMES if n in getattr(res, "bounds_met", ())]
        larger = (f"more `--brokers`, or raise a bound it met ({', '.join(met)}; one it never met changes nothing)"
                  if met else "larger ones (`isrlab explore --help`)")
        return f"{what} is not within these bounds (no violation found is attributed to it): try {larger}, or {fuzz}"
    if res.stop_reason == "violation" and stopped_at is not None:
        inv, why = stopped_at
        return (f"{what} not reached: the search stopped at a violation of {inv} ({why}); "
                f"`--invariant {expected}` looks for it alone, or {fuzz}")
    why = {"budget": f"--budget {budget:g} s" if budget is not None else "the budget",
           "max_states": f"--max-states {max_states:,}", "max_depth": f"--max-depth {max_depth}"}
    return (f"{what} not found before {why.get(res.stop_reason, res.stop_reason)} stopped the "
            f"search: raise it, or {fuzz}")


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def bounds_never_met(res, b: dict) -> list:
    """The bounds of a complete search that it never met (``ExploreResult.bounds_met``), by option name."""
    from .properties.explore import BOUND_NAMES

    if not res.complete:
        return []
    return [n for n in BOUND_NAMES if b.get(n) is not None and n not in res.bounds_met]


def composite_grain(b: dict) -> str:
    """What a composite search takes whole, in a few words."""
    held, lag = b.get("max_in_flight") or 0, b.get("max_lagging") or 0
    return ("exchanges whole" + (f" but for up to {held} request{'s' * (held > 1)} held in flight" if held else "")
            + ", decisions delivered at once"
            + (f" to all but up to {lag} lagging broker{'s' * (lag > 1)}" if lag else ""))


def describe_bounds(cfg, b: dict) -> str:
    """The bounds of a search in one line."""
    t = "no time bound" if b["max_time"] is None else f"{b['max_time']:,} ms of model time"
    return (f"{cfg.n_brokers} brokers, {b['max_records']} records, {b['max_crashes']} crashes, "
            f"{b['max_expirations']} expirations, controller epochs <= {b['max_controller_epoch']}, leader epochs <= "
            f"{b['max_epoch']}, "
            + ("any number of ISR changes" if b["max_isr_changes"] is None else f"ISR changes <= {b['max_isr_changes']}")
            + f", {t}, acks {','.join(map(str, b['acks']))}, "
            f"{'eager' if b['eager_tasks'] else 'interleaved'} tasks, without {','.join(b['without']) or 'nothing'}, "
            + ("fine steps, " if not b.get("composite") else "composite steps (" + composite_grain(b) + "), ")
            + f"max {b['max_states']:,} states" + ("" if b["max_queue"] is None else
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
@click.option("--expected", is_flag=True,
              help="Exit 1 when the trace's outcome is not the one it expects (a counterexample that no longer fails "
                   "as recorded), as `isrlab replay --expected`.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def explain(file, svg_out, png_out, expected, as_json) -> None:
    """Explain the trace FILE in one sentence and draw its space-time diagram (--svg / --png).

    After the sentence, the known bugs the violation is attributed to (the bugs whose fix removes it,
    `isrlab bugs`) and the replays behind that, one line per fix tried; a line says when the trace
    records another attribution. Exit 0 once it has explained (the sentence names the invariant that
    fails, and when the trace expects another one that holds, says so first); with --expected, 1 when
    the outcome is not the one the trace expects.

    Example: isrlab explain counterexamples/FILE.json --svg cx.svg --expected
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
    if expected and not (result.matches_expectation and not result.check_failures):
        sys.exit(EXIT_VIOLATION)
    sys.exit(EXIT_OK)
