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
        rows.append({"name": name, "expected": p.expected, "reference": p.reference,
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


if __name__ == "__main__":  # pragma: no cover
    main()
