"""The ``isrlab`` command: results on stdout, logs on stderr.

Exit codes: 0 no violation, 1 a violation was found (or a trace's own checks
failed), 2 bad input or usage.
"""

from __future__ import annotations

import json
import sys

import click

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE = 0, 1, 2


class InputError(click.ClickException):
    """Bad input: one line on stderr, exit code 2."""

    exit_code = EXIT_USAGE

    def show(self, file=None) -> None:
        click.echo(f"isrlab: error: {self.format_message()}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="isrlab")
def main() -> None:
    """isrlab: find, shrink, explain and archive Kafka replication bugs."""


# --------------------------------------------------------------------------- presets
@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def presets(as_json: bool) -> None:
    """List every preset with its protocol flags and expected outcome."""
    from .model.config import DEFAULT_PRESET, PRESETS, ModelConfig

    default = ModelConfig().to_json()
    rows = []
    for name in sorted(PRESETS):
        p = PRESETS[name]
        cfg = p.config.to_json()
        changed = {k: v for k, v in cfg.items() if v != default[k]}
        rows.append({"name": name, "expected": p.expected, "also_breaks": list(p.also_breaks),
                     "reference": p.reference,
                     "description": p.description, "differs_from_default": changed, "config": cfg,
                     "default": name == DEFAULT_PRESET})
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    flags = ("truncation", "kip_320", "kafka_7128", "kafka_7415", "kafka_7164", "kafka_6082", "kafka_8400",
             "unclean_leader_election", "min_insync_replicas", "replica_lag_time_max_ms",
             "crash_loses_unflushed_data")
    click.echo(f"{'preset':<22} {'expected':<20} flags")
    for r in rows:
        cfg = r["config"]
        flag_text = " ".join(
            f"{k}={cfg[k]}" if not isinstance(cfg[k], bool) else (k if cfg[k] else f"no-{k}")
            for k in flags if k in r["differs_from_default"] or k == "truncation")
        mark = " (default)" if r["default"] else ""
        click.echo(f"{r['name'] + mark:<22} {r['expected']:<20} {flag_text}")
        click.echo(f"{'':<22} {r['description']}")


# --------------------------------------------------------------------------- replay
def _short(value, limit: int = 60) -> str:
    text = json.dumps(value, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 3] + "..."


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--max-changes", default=6, show_default=True, type=click.IntRange(0),
              help="Changed state fields shown per step.")
@click.option("--quiet", is_flag=True, help="Only the outcome, no step table.")
def replay(file: str, as_json: bool, max_changes: int, quiet: bool) -> None:
    """Replay a trace FILE step by step, checking every invariant after every step."""
    from .model.actions import action_to_json
    from .model.trace import TraceError, load_trace
    from .properties.explain import step_table
    from .properties.replay import replay as run_replay

    try:
        trace = load_trace(file)
        result = run_replay(trace, with_changes=not quiet or as_json)
    except TraceError as e:
        raise InputError(str(e)) from None

    if as_json:
        out = {
            "file": file, "outcome": result.outcome, "expect": trace.expect, "violated": trace.violated,
            "matches_expectation": result.matches_expectation,
            "violations": [v.to_json() for v in result.violations],
            "check_failures": result.check_failures,
            "steps": [{"step": r.index, "action": action_to_json(r.action),
                       "changes": [[p, o, n] for p, o, n in r.changes],
                       "violations": [v.invariant for v in r.violations]} for r in result.steps],
        }
        click.echo(json.dumps(out, indent=1))
    else:
        if not quiet:
            click.echo("\n".join(step_table(result, max_changes)))
        for v in result.violations:
            click.echo(f"VIOLATION {v.invariant} at step {v.step}: {_short(v.facts, 200)}")
        for msg in result.check_failures:
            click.echo(f"CHECK FAILED {msg}")
        verdict = "as expected" if result.matches_expectation else "NOT as expected"
        expected = trace.expect if trace.expect == "pass" else f"violation of {trace.violated}"
        click.echo(f"outcome: {result.outcome} ({verdict}; the trace expects {expected}); "
                   f"{len(trace.actions)} actions")
    sys.exit(EXIT_VIOLATION if (result.violations or result.check_failures) else EXIT_OK)


# --------------------------------------------------------------------------- fuzz
def archive_name(trace) -> tuple[str, str]:
    """(file name, digest): the digest covers the config and the actions, so a counterexample is archived once."""
    import datetime
    import hashlib

    from .model.actions import action_to_json

    key = {"config": trace.config.to_json(), "actions": [action_to_json(a) for a in trace.actions]}
    digest = hashlib.blake2b(json.dumps(key, sort_keys=True).encode(), digest_size=6).hexdigest()
    day = datetime.date.today().isoformat()
    return f"{day}-{trace.preset}-{trace.violated}-{digest}.json", digest


def archive_counterexample(out: str, preset_name: str, trace) -> tuple[str, bool]:
    """Write the trace under out/ unless a file with the same digest is already there; (path, written)."""
    import glob
    import os

    from .model.trace import write_trace

    name, digest = archive_name(trace)
    existing = sorted(glob.glob(os.path.join(glob.escape(out), f"*-{digest}.json")))
    if existing:
        return existing[0], False
    path = os.path.join(out, name)
    trace.description = trace.description or f"found by isrlab fuzz --preset {preset_name}"
    # the replay command names the archive folder, never a machine's absolute path
    shown = os.path.join(os.path.basename(os.path.normpath(out)), name)
    trace.provenance = dict(trace.provenance, replay=f"isrlab replay {shown}")
    write_trace(path, trace)
    return path, True


@main.command()
@click.option("--preset", "preset_name", default="kafka-2.4", show_default=True, help="Preset to fuzz.")
@click.option("--seed", default=0, show_default=True, type=int, help="Campaign seed.")
@click.option("--runs", default=None, type=click.IntRange(1), help="Number of runs (default: until the budget).")
@click.option("--budget", default=None, type=click.FloatRange(min=0.1), help="Seconds to run (default 30 "
              "when --runs is not given).")
@click.option("--engine", type=click.Choice(["guided", "walk", "hypothesis"]), default="guided", show_default=True,
              help="guided: novelty-guided walks over a corpus of saved states (one run = --extensions "
                   "extensions); walk: independent random walks (one run = one walk); hypothesis: the "
                   "rule-based state machine (one run = 100 test cases of --max-steps steps).")
@click.option("--max-steps", default=None, type=click.IntRange(1),
              help="Steps per walk (walk, default 120), per extension (guided, default 40) or per test case "
                   "(hypothesis, default 50).")
@click.option("--extensions", default=2000, show_default=True, type=click.IntRange(1),
              help="Extensions per guided run.")
@click.option("--invariant", "invariants", multiple=True, help="Check only these invariants (repeatable).")
@click.option("--no-swarm", is_flag=True, help="Enable every action kind in every run.")
@click.option("--shrink-budget", default=20.0, show_default=True, type=click.FloatRange(min=0.0),
              help="Seconds to spend shrinking a counterexample.")
@click.option("--out", default="counterexamples", show_default=True, type=click.Path(file_okay=False),
              help="Folder the shrunk counterexample is archived in.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary on stdout.")
def fuzz(preset_name, seed, runs, budget, engine, max_steps, extensions, invariants, no_swarm, shrink_budget, out,
         as_json) -> None:
    """Seeded swarm random walks of a preset, every invariant checked after every step.

    Stops at the first violation: shrinks it, prints the explained trace, archives it under --out
    and exits 1. Exits 0 when the runs or the budget are used up without a violation.
    """
    import time

    from .model.actions import ACTION_KINDS
    from .model.config import ConfigError, preset
    from .model.trace import Trace
    from .properties.explain import sentence, step_table
    from .properties.invariants import BY_NAME, SAFETY, WITNESSES, witnesses
    from .properties.replay import replay as run_replay
    from .properties.shrink import shrink
    from .properties.walker import derive_seed, search, walk

    try:
        p = preset(preset_name)
    except ConfigError as e:
        raise InputError(str(e)) from None
    unknown = [n for n in invariants if n not in BY_NAME or BY_NAME[n] not in SAFETY]
    if unknown:
        raise InputError(f"unknown invariant(s) {', '.join(unknown)} (known: {', '.join(i.name for i in SAFETY)})")
    checked = tuple(BY_NAME[n] for n in invariants) if invariants else SAFETY
    if runs is None and budget is None:
        budget = 30.0
    if max_steps is None:
        max_steps = {"walk": 120, "guided": 40, "hypothesis": 50}[engine]
    t0 = time.monotonic()
    total_steps = n = 0
    kinds_seen: dict[str, int] = {}
    seen_witnesses: set[str] = set()
    found = None
    last_report = t0
    while (runs is None or n < runs) and (budget is None or time.monotonic() - t0 < budget):
        run_seed = derive_seed(seed, n)
        if engine == "walk":
            r = walk(p.config, run_seed, max_steps, checked, swarm=not no_swarm)
        elif engine == "hypothesis":
            from .properties.machines import run_machine

            left = None if budget is None else max(budget - (time.monotonic() - t0), 1.0)
            r = run_machine(p.config, run_seed, 100, max_steps, checked, time_budget_s=left,
                            shrink_budget_s=shrink_budget, preset=preset_name)
            r.kind_counts = dict(r.kinds)
        else:
            over = None if budget is None else (lambda: time.monotonic() - t0 >= budget)
            r = search(p.config, run_seed, extensions, max_steps, checked, should_stop=over)
        n += 1
        total_steps += r.steps
        for k, c in r.kind_counts.items():
            kinds_seen[k] = kinds_seen.get(k, 0) + c
        seen_witnesses |= r.witnesses
        now = time.monotonic()
        if now - last_report >= 2.0:
            last_report = now
            click.echo(f"fuzz {preset_name}: {n} runs, {total_steps / (now - t0):,.0f} steps/s, "
                       f"{len(kinds_seen)}/{len(ACTION_KINDS)} action kinds, "
                       f"{len(seen_witnesses)}/{len(WITNESSES)} witnesses, 0 violations", err=True)
        if r.violation is not None:
            found = (run_seed, r)
            break
    secs = time.monotonic() - t0
    summary = {"preset": preset_name, "engine": engine, "expected": p.expected, "breaks": list(p.breaks),
               "campaign_seed": seed,
               "runs": n, "steps": total_steps, "seconds": round(secs, 3),
               "steps_per_second": round(total_steps / secs) if secs > 0 else None,
               "action_kinds_covered": sorted(kinds_seen), "witnesses": sorted(seen_witnesses),
               "violation": None}
    lines = []
    if found is not None:
        run_seed, r = found
        v = r.violation
        sr = shrink(p.config, r.actions, v.invariant, time_budget_s=shrink_budget)
        trace = Trace(config=p.config, actions=list(sr.actions), expect="violation", violated=v.invariant,
                      preset=preset_name, provenance={"engine": engine, "campaign_seed": seed, "run_index": n - 1,
                                                     "run_seed": run_seed, "max_steps": max_steps,
                                                     "extensions": extensions if engine == "guided" else None,
                                                     "swarm": not no_swarm, "original_length": len(r.actions),
                                                     "shrunk_length": sr.shrunk_length})
        result = run_replay(trace)
        shrunk_v = next(x for x in result.violations if x.invariant == v.invariant)
        trace.violation = shrunk_v.to_json()
        trace.explanation = sentence(p.config, trace.actions, shrunk_v)
        path, written = archive_counterexample(out, preset_name, trace)
        summary["violation"] = shrunk_v.to_json()
        summary.update(trace_file=path, newly_archived=written, original_length=len(r.actions),
                       shrunk_length=sr.shrunk_length, shrink_seconds=round(sr.seconds, 3),
                       explanation=trace.explanation)
        lines = step_table(result)
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        click.echo(f"{preset_name}: {n} runs, {total_steps} steps in {secs:.1f} s "
                   f"({summary['steps_per_second']} steps/s); {len(kinds_seen)}/{len(ACTION_KINDS)} action kinds; "
                   f"witnesses: {', '.join(sorted(seen_witnesses)) or 'none'}")
        if found is not None:
            click.echo("\n".join(lines))
            click.echo(f"VIOLATION {summary['violation']['invariant']} "
                       f"(run seed {found[0]}, {summary['original_length']} steps shrunk to "
                       f"{summary['shrunk_length']} in {summary['shrink_seconds']} s)")
            click.echo(summary["explanation"])
            verb = "archived as" if summary["newly_archived"] else "already archived as"
            click.echo(f"{verb} {summary['trace_file']}; replay with: isrlab replay {summary['trace_file']}")
        else:
            click.echo(f"no violation (preset expects: {p.expected})")
    sys.exit(EXIT_VIOLATION if found is not None else EXIT_OK)


if __name__ == "__main__":  # pragma: no cover
    main()
