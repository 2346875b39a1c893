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
    from .model.actions import action_to_json, describe
    from .model.trace import TraceError, load_trace
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
            click.echo(f"{'step':>4}  {'action':<58} changes")
            for r in result.steps:
                shown = [f"{p}: {_short(o, 24)} -> {_short(n, 24)}" for p, o, n in r.changes[:max_changes]]
                more = len(r.changes) - len(shown)
                if more > 0:
                    shown.append(f"(+{more} more)")
                flag = "  !! " + ", ".join(v.invariant for v in r.violations) if r.violations else ""
                click.echo(f"{r.index:>4}  {describe(r.action):<58} {'; '.join(shown)}{flag}")
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
@main.command()
@click.option("--preset", "preset_name", default="kafka-2.4", show_default=True, help="Preset to fuzz.")
@click.option("--seed", default=0, show_default=True, type=int, help="Campaign seed.")
@click.option("--runs", default=None, type=click.IntRange(1), help="Number of runs (default: until the budget).")
@click.option("--budget", default=None, type=click.FloatRange(min=0.1), help="Seconds to run (default 30 "
              "when --runs is not given).")
@click.option("--max-steps", default=400, show_default=True, type=click.IntRange(1), help="Steps per run.")
@click.option("--no-swarm", is_flag=True, help="Enable every action kind in every run.")
@click.option("--out", default="isrlab-out", show_default=True, type=click.Path(file_okay=False),
              help="Folder for counterexample traces.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary on stdout.")
def fuzz(preset_name, seed, runs, budget, max_steps, no_swarm, out, as_json) -> None:
    """Random walks of the model, checking every invariant after every step; stops at the first violation."""
    import datetime
    import os
    import time

    from .model.actions import ACTION_KINDS
    from .model.config import ConfigError, preset
    from .model.trace import Trace, write_trace
    from .properties.walker import derive_seed, walk

    try:
        p = preset(preset_name)
    except ConfigError as e:
        raise InputError(str(e)) from None
    if runs is None and budget is None:
        budget = 30.0
    t0 = time.monotonic()
    total_steps = n = 0
    kinds_seen: dict[str, int] = {}
    found = None
    last_report = t0
    while True:
        if runs is not None and n >= runs:
            break
        if budget is not None and time.monotonic() - t0 >= budget:
            break
        run_seed = derive_seed(seed, n)
        r = walk(p.config, run_seed, max_steps, swarm=not no_swarm)
        n += 1
        total_steps += r.steps
        for k, c in r.kind_counts.items():
            kinds_seen[k] = kinds_seen.get(k, 0) + c
        now = time.monotonic()
        if now - last_report >= 2.0:
            last_report = now
            click.echo(f"fuzz {preset_name}: {n} runs, {total_steps / (now - t0):,.0f} steps/s, "
                       f"{len(kinds_seen)}/{len(ACTION_KINDS)} action kinds", err=True)
        if r.violation is not None:
            found = (run_seed, r)
            break
    secs = time.monotonic() - t0
    summary = {"preset": preset_name, "expected": p.expected, "campaign_seed": seed, "runs": n,
               "steps": total_steps, "seconds": round(secs, 3),
               "steps_per_second": round(total_steps / secs) if secs > 0 else None,
               "action_kinds_covered": sorted(kinds_seen), "violation": None, "trace_file": None}
    if found is not None:
        run_seed, r = found
        v = r.violation
        day = datetime.date.today().isoformat()
        path = os.path.join(out, f"{day}-{preset_name}-{v.invariant}-seed{run_seed}.json")
        trace = Trace(config=p.config, actions=r.actions, expect="violation", violated=v.invariant,
                      preset=preset_name, provenance={"engine": "walk", "campaign_seed": seed,
                                                     "run_seed": run_seed, "max_steps": max_steps,
                                                     "swarm": not no_swarm},
                      violation=v.to_json(),
                      description=f"found by isrlab fuzz --preset {preset_name} --seed {seed}")
        write_trace(path, trace)
        summary["violation"] = v.to_json()
        summary["trace_file"] = path
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        click.echo(f"{preset_name}: {n} runs, {total_steps} steps in {secs:.1f} s "
                   f"({summary['steps_per_second']} steps/s); {len(kinds_seen)}/{len(ACTION_KINDS)} action kinds")
        if found is not None:
            click.echo(f"VIOLATION {found[1].violation.invariant} after {found[1].steps} steps "
                       f"(run seed {found[0]}): {_short(found[1].violation.facts, 200)}")
            click.echo(f"trace written to {summary['trace_file']}; replay with: isrlab replay {summary['trace_file']}")
        else:
            click.echo(f"no violation (preset expects: {p.expected})")
    sys.exit(EXIT_VIOLATION if found is not None else EXIT_OK)


if __name__ == "__main__":  # pragma: no cover
    main()
