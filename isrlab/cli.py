"""The ``isrlab`` command: results on stdout, logs on stderr.

Exit codes: 0 no violation, 1 a violation was found (or a trace's own checks
failed), 2 bad input or usage.
"""

from __future__ import annotations

import json
import os
import shlex
import sys

import click

from .exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, InputError, Interrupted, RunError  # noqa: F401
from .inputs import (INVARIANT, PRESET, RUN_SEEDS, SECONDS, SEEDS, Count, Number, check_output_file,
                     check_output_folder, is_remote)


def _usage_line(e: click.UsageError) -> str:
    """A usage error in one line: ``--budget: 'nan' is not a finite number``."""
    if isinstance(e, click.BadParameter) and not isinstance(e, click.MissingParameter) and e.param is not None:
        hint = e.param_hint or " / ".join(getattr(e.param, "opts", ()) or [e.param.name or "?"])
        if isinstance(hint, (list, tuple)):
            hint = " / ".join(hint)
        return f"{hint.strip(chr(39))}: {e.message}"
    return e.format_message()


class IsrlabGroup(click.Group):
    """click.Group whose errors are one line on stderr, never a traceback or a usage screen.

    Usage errors exit 2 (``isrlab: error: ...``), a run that could not complete exits 3, and an
    unexpected exception is reported in one line with exit 3 (``ISRLAB_DEBUG=1`` shows its traceback).
    """

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name or "isrlab", complete_var, standalone_mode=False, **extra)
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)
        except click.UsageError as e:
            click.echo(f"isrlab: error: {_usage_line(e)}", err=True)
            sys.exit(EXIT_USAGE)
        except click.ClickException as e:
            e.show()
            sys.exit(e.exit_code)
        except (click.Abort, KeyboardInterrupt):
            click.echo("isrlab: interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:  # stdout closed early (| head): nothing more to say
            try:
                sys.stdout = open(os.devnull, "w")
            except OSError:  # pragma: no cover
                pass
            sys.exit(EXIT_FAILED)
        except Exception as e:  # noqa: BLE001 - the last line of defence: one line, not a traceback
            if os.environ.get("ISRLAB_DEBUG"):
                raise
            from .exits import internal_error_line

            click.echo(internal_error_line(e), err=True)   # one line; the traceback saved in a file it names
            sys.exit(EXIT_FAILED)
        sys.exit(rv if isinstance(rv, int) else EXIT_OK)


@click.group(cls=IsrlabGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="isrlab")
def main() -> None:
    """isrlab: find, shrink, explain and archive Kafka replication bugs.

    User presets come from isrlab.toml, or [tool.isrlab] in pyproject.toml, in the working folder
    (or the file $ISRLAB_CONFIG names); `isrlab presets` shows where each preset comes from.
    """
    from . import userpresets

    userpresets.load()


# --------------------------------------------------------------------------- presets
@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def presets(as_json: bool) -> None:
    """List every preset with its protocol flags and expected outcome.

    Example: isrlab presets --json
    """
    from .model.config import DEFAULT_PRESET, PRESETS, ModelConfig, explore_bounds
    from .userpresets import EXPLORE, SOURCES

    default = ModelConfig().to_json()
    rows = []
    for name in sorted(PRESETS):
        p = PRESETS[name]
        cfg = p.config.to_json()
        changed = {k: v for k, v in cfg.items() if v != default[k]}
        rows.append({"name": name, "expected": p.expected, "bugs": list(p.bugs),
                     "known_bugs": {b.id: list(b.breaks) for b in p.known_bugs if b.id not in p.bugs},
                     "reference": p.reference,
                     "description": p.description, "differs_from_default": changed, "config": cfg,
                     "default": name == DEFAULT_PRESET, "source": SOURCES.get(name, "built-in"),
                     "explore": {**explore_bounds(name), **EXPLORE.get(name, {})}})
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    flags = ("truncation", "kip_320", "kafka_7128", "kafka_7415", "kafka_7164", "kafka_6082", "kafka_8400",
             "kip_497", "kafka_12686", "kafka_12751", "kafka_13091", "partition_epoch_check", "kafka_10554", "kafka_13141",
             "kafka_14704",
             "unclean_leader_election", "min_insync_replicas", "replica_lag_time_max_ms",
             "crash_loses_unflushed_data", "kafka_10706", "offsets_for_leader_epoch_in_flight", "kafka_7786",
             "fetch_from_follower", "replica_selector", "kip_500", "kafka_13916", "kafka_15021", "kafka_15583",
             "eligible_leader_replicas", "isr_join_requires_hw", "kip_903", "kafka_14140", "kafka_15221", "isr_expand_window", "delayed_fetch", "kafka_5634", "kafka_9491",
             "kafka_2143", "old_message_format_partitions", "max_delete_records", "max_retention_runs",
             "controlled_shutdown_enable", "auto_leader_rebalance_enable", "max_preferred_elections",
             "max_topic_deletions", "max_partition_creations", "max_reassignments", "max_disk_wipes", "kafka_14010",
             "max_alter_isr_failures", "follower_clears_remote_replicas", "kafka_13837", "max_forged_alter_partitions",
             "max_expired_heartbeats", "kafka_12670", "max_config_changes", "placed_creations", "log_dirs",
             "metadata_version", "max_log_dir_failures")
    click.echo(f"{'preset':<26} {'expected':<26} flags")
    for r in rows:
        cfg = r["config"]
        flag_text = " ".join(
            f"{k}={cfg[k]}" if not isinstance(cfg[k], bool) else (k if cfg[k] else f"no-{k}")
            for k in flags if k in r["differs_from_default"] or k == "truncation")
        mark = " (default)" if r["default"] else ""
        click.echo(f"{r['name'] + mark:<26} {r['expected']:<26} {flag_text}")
        click.echo(f"{'':<26} {r['description']}")
        if r["bugs"]:
            click.echo(f"{'':<26} expected bugs: {', '.join(r['bugs'])}")
        if r["known_bugs"]:
            click.echo(f"{'':<26} also contains (a violation counts as one only if its fix removes it): "
                       f"{', '.join(r['known_bugs'])}")
        if r["source"] != "built-in":
            click.echo(f"{'':<26} from {r['source']}")


# --------------------------------------------------------------------------- replay
def _short(value, limit: int = 60) -> str:
    text = json.dumps(value, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def load_trace_file(file: str):
    """A trace file read through the bounded loader, its ``violated`` checked against the catalogue: InputError."""
    from .inputs import load_trace
    from .model.trace import TraceError
    from .properties.invariants import NAMES

    try:
        trace = load_trace(file)
    except TraceError as e:
        raise InputError(str(e)) from None
    if trace.violated is not None and trace.violated not in NAMES:
        raise InputError(f"{file}: violated names {_short(trace.violated, 60)}, which is no invariant of the "
                         f"catalogue (isrlab replay --help)")
    return trace


def replay_or_fail(trace, file: str, with_changes: bool = True, every_step: bool = True):
    """properties.replay.replay, with an action the trace's state does not enable as bad input."""
    from .model.trace import TraceError
    from .properties.replay import replay as run_replay

    try:
        return run_replay(trace, with_changes=with_changes, every_step=every_step)
    except TraceError as e:
        raise InputError(f"{file}: {e}") from None


def version_note(recorded: str) -> str | None:
    """A note when a trace was recorded under another model version: its seed may no longer give its actions."""
    from .model.trace import model_version

    now = model_version()
    if not recorded or recorded == now:
        return None
    return (f"note: recorded under model version {_capped(recorded)}, this is {now}: the actions replay as written, "
            f"but the seeds in its provenance may not give this trace again")


def _capped(text: str, limit: int = 60) -> str:
    """A field of a file as one short line: its first ``limit`` characters, unprintable ones escaped, and "..." for
    the rest (a trace's model_version may be any length)."""
    head = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text[:limit])
    return head + ("..." if len(text) > limit else "")


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--max-changes", default=6, show_default=True, type=Count(0, 10_000),
              help="Changed state fields shown per step.")
@click.option("--quiet", is_flag=True, help="Only the outcome, no step table.")
@click.option("--expected", "check_expected", is_flag=True,
              help="Exit 0 when the outcome is the one the trace's header expects (a kept counterexample still "
                   "fails as it says, a passing trace still passes), 1 when it is not.")
def replay(file: str, as_json: bool, max_changes: int, quiet: bool, check_expected: bool) -> None:
    """Replay a trace FILE step by step, checking every invariant after every step.

    Exit 0 when nothing fails (no violation, every check holds) and the trace expects that; 1 when an
    invariant fails or a check does not hold, or the outcome is not the one the trace expects; with
    --expected, 0 exactly when the outcome is the one the trace expects. 2 for a bad file.

    Example: isrlab replay --expected counterexamples/FILE.json
    """
    from .model.actions import action_to_json
    from .properties.explain import sentence
    from .properties.steptable import render

    trace = load_trace_file(file)
    result = replay_or_fail(trace, file, with_changes=not quiet or as_json, every_step=not quiet or as_json)
    note = version_note(trace.model_version)
    if note and trace.provenance:
        _log(f"isrlab: {note}")

    if as_json:
        out = {
            "file": file, "outcome": result.outcome, "expect": trace.expect, "violated": trace.violated,
            "matches_expectation": result.matches_expectation,
            "violations": [v.to_json() for v in result.violations],
            "check_failures": result.check_failures,
            "attribution": result.attribution.to_json() if result.attribution is not None else None,
            "attribution_problem": result.attribution_problem,
            "steps": [{"step": r.index, "action": action_to_json(r.action),
                       "changes": [[p, o, n] for p, o, n in r.changes],
                       "violations": [v.invariant for v in r.violations]} for r in result.steps],
        }
        click.echo(json.dumps(out, indent=1))
    else:
        if not quiet:   # the terminal's width; off a terminal COLUMNS, or as wide as the rows need
            from .console import console as make_console

            render(result, make_console(), max_changes)
        for v in result.violations:   # the explainer's sentence, as in explain and the campaign summary
            click.echo(f"VIOLATION {v.invariant} at step {v.step}: "
                       f"{sentence(trace.config, trace.actions, v, trace.start)}")
        for msg in result.check_failures:
            click.echo(f"CHECK FAILED {msg}")
        if not check_expected and result.attribution is not None:
            click.echo(f"attribution: {result.attribution.summary()}")
        if not check_expected and result.attribution_problem is not None:
            click.echo(f"NOT the trace's attribution: {result.attribution_problem}")
        verdict = "as expected" if result.matches_expectation else "NOT as expected"
        expected = trace.expect if trace.expect == "pass" else f"violation of {trace.violated}"
        click.echo(f"outcome: {result.outcome} ({verdict}; the trace expects {expected}); "
                   f"{len(trace.actions)} actions")
    if check_expected:
        from .properties.replay import verdict

        ok, why = verdict(result)
        if not ok and not as_json:
            click.echo(why)
        sys.exit(EXIT_OK if ok else EXIT_VIOLATION)
    clean = not result.violations and not result.check_failures
    sys.exit(EXIT_OK if clean and result.matches_expectation else EXIT_VIOLATION)


# --------------------------------------------------------------------------- fuzz
def _split_presets(names) -> tuple:
    """The --preset values, with "all" for every preset, "main" for the main job's (every preset but those whose bug
    needs minutes, ``MAIN_JOB_LEAVES_OUT``) and commas allowed; InputError for an unknown one."""
    from .model.config import PRESETS, ConfigError, main_job_presets, preset

    out: list[str] = []
    for value in names or ("kafka-2.4",):
        for name in (n.strip() for n in value.split(",")):
            if not name:
                continue
            for n in (sorted(PRESETS) if name == "all" else main_job_presets() if name == "main" else [name]):
                try:
                    preset(n)
                except ConfigError as e:
                    raise InputError(str(e)) from None
                if n not in out:
                    out.append(n)
    if not out:
        raise InputError("no preset given")
    return tuple(out)


def _conf_pairs(pairs) -> dict:
    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--conf expects KEY=VALUE, got {pair!r}")
        conf[key.strip()] = value
    return conf


@main.command()
@click.option("--preset", "preset_names", multiple=True, metavar="NAME", type=PRESET,
              help="Preset to fuzz (repeatable, or comma-separated; 'all' for every preset, 'main' for every preset "
                   "but those whose bug needs minutes, which it names). Default kafka-2.4.")
@click.option("--master", default="local[*]", show_default=True,
              help="Spark master: local[*] (embedded), local[N], spark://HOST:PORT, anything spark-submit "
                   "accepts; 'none' runs in this process without Spark and stops at the first violation.")
@click.option("--shards", default=None, type=Count(1, 10_000),
              help="Shards per preset (default: the cluster's parallelism).")
@click.option("--seed", default=0, show_default=True, type=SEEDS, help="Campaign seed.")
@click.option("--runs", default=None, type=Count(1, 10 ** 9),
              help="Runs per preset, split over the shards (default: until the budget).")
@click.option("--budget", default=None, type=SECONDS,
              help="Seconds of fuzzing (default 30 when --runs is not given), a wall-clock bound checked inside "
                   "every run (every 256 steps of a walk or extension, before every Hypothesis action): fuzzing "
                   "stops within about 0.1 s of it, then shrinks for at most --shrink-budget; on Spark, shared out "
                   "over the tasks (plus Spark's start-up and scheduling).")
@click.option("--engine", type=click.Choice(["guided", "walk", "hypothesis", "scopes"]), default="guided",
              show_default=True,
              help="guided: novelty-guided walks over a corpus of saved states (one run = --extensions "
                   "extensions); walk: independent random walks (one run = one walk); hypothesis: the "
                   "rule-based state machine (one run = 100 test cases of --max-steps steps); scopes: exhaustive "
                   "coarse searches of small scopes, the smallest first, in an order drawn from the run's seed "
                   "(one run = the whole ladder, as isrlab explore --scopes; each shard races its own order).")
@click.option("--max-steps", default=None, type=Count(1, 1_000_000),
              help="Steps per walk (walk, default 120), per extension (guided, default 40) or per test case "
                   "(hypothesis, default 50); for scopes, the states a scope may store in the first pass "
                   "(default 10,000; halved for each size below 3).")
@click.option("--extensions", default=6000, show_default=True, type=Count(1, 10 ** 8),
              help="Extensions per guided run (kafka-0.10.2's lost write takes a median 7k steps, no-kip-320's "
                   "log divergence 38k, no-kafka-7415's truncation below the HW 23k, within one or a few runs).")
@click.option("--invariant", "invariants", multiple=True, type=INVARIANT, metavar="NAME",
              help="Check only these invariants (repeatable).")
@click.option("--no-swarm", is_flag=True, help="Enable every action kind in every run.")
@click.option("--run-seed", default=None, type=RUN_SEEDS,
              help="Run exactly one run with this seed, in process, to its end (replays a campaign's run from its "
                   "seed, 0 to 2^63-1; not with --budget or --runs).")
@click.option("--shrink-budget", default=20.0, show_default=True, type=Number(0.0, 7 * 24 * 3600.0, name="seconds"),
              help="Seconds to spend shrinking a counterexample (checked before every candidate and every 256 "
                   "replayed actions: at most about 0.1 s more).")
@click.option("--shrink-candidates", default=1, show_default=True, type=Count(1, 1000),
              help="Violating runs shrunk per preset and invariant (Spark campaigns; the shortest first).")
@click.option("--out", default="campaigns", show_default=True,
              help="Folder (or hdfs://, s3a:// URI) under which a Spark campaign writes its Parquet tables. "
                   "In process (--master none, --run-seed) nothing but the counterexample is written: --out "
                   "then names its folder, as --archive does.")
@click.option("--archive", default=None, type=click.Path(file_okay=False),
              help="Folder the shrunk counterexamples are archived in (default: the campaign's own, "
                   "<out>/<campaign id>/counterexamples; `isrlab promote` moves chosen ones into a regression "
                   "folder).")
@click.option("--conf", "conf", multiple=True, metavar="KEY=VALUE", help="Spark configuration (repeatable).")
@click.option("--expected", "check_expected", is_flag=True,
              help="Exit 0 only when every preset is as expected: each expected bug found (a violation its fix "
                   "removes) and no unexpected violation (one no known bug's fix removes); exit 1 otherwise, "
                   "instead of 1 on any violation.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary on stdout.")
@click.option("--verbose", is_flag=True, help="Print each counterexample's step table after the summary.")
@click.option("--resume", default=None, metavar="CAMPAIGN_DIR", type=click.Path(file_okay=False),
              help="Finish an interrupted Spark campaign (a killed driver, a lost cluster, Ctrl-C): run only the shards "
                   "that had not finished, on the campaign's own options (with --master, --conf, --json, --expected "
                   "and --verbose as given); its tables then equal an uninterrupted campaign's under --runs.")
def fuzz(preset_names, master, shards, seed, runs, budget, engine, max_steps, extensions, invariants, no_swarm,
         run_seed, shrink_budget, shrink_candidates, out, archive, conf, check_expected, as_json, verbose,
         resume) -> None:
    """Fuzz presets: seeded runs of one engine (--engine) with every invariant checked after every step.

    By default a campaign on Spark (embedded local[*]): seeds sharded over the cluster, results as
    Parquet tables under --out, violations deduplicated, shrunk, explained and archived under
    --archive. With --master none, one process hunts until the first violation.

    Example: isrlab fuzz --preset kafka-0.11,no-kip-320 --budget 60 --expected
    """
    from .campaign import CampaignSpec

    if resume is not None:
        return _resume_campaign(resume, master, conf, check_expected, as_json, verbose)
    names = _split_presets(preset_names)
    if any(n.strip() == "main" for v in preset_names for n in v.split(",")):
        from .console import isrlab_command
        from .model.config import MAIN_JOB_LEAVES_OUT

        _log("isrlab: the main job leaves out the presets whose bug needs minutes: " + "; ".join(
            f"{n} ({why})" for n, why in MAIN_JOB_LEAVES_OUT.items()) + f". Run one with: {isrlab_command()} fuzz "
            "--preset NAME --budget 900 --expected")
    conf_map = _conf_pairs(conf)
    if run_seed is not None and budget is not None:
        # refused rather than honoured: a seed names one whole run, and a wall-clock cut would end it at a point that
        # depends on the machine, a clean exit saying nothing about the seed
        raise InputError("--run-seed replays one whole run, which --budget would cut at a point that depends on the "
                         "machine's speed: drop --budget (or drop --run-seed to fuzz for --budget seconds)")
    if run_seed is not None and runs not in (None, 1):
        raise InputError(f"--run-seed runs exactly one run, not --runs {runs}: drop --runs")
    if runs is None and budget is None:
        budget = 30.0
    in_process = master == "none" or run_seed is not None
    if in_process and len(names) > 1:
        raise InputError("--master none and --run-seed take one preset")
    try:
        spec = CampaignSpec(presets=names, seed=seed, engine=engine, shards=shards or 1, runs=runs,
                            shard_budget_s=budget, max_steps=max_steps, extensions=extensions,
                            invariants=tuple(invariants), swarm=not no_swarm)
    except ValueError as e:
        raise InputError(str(e)) from None
    if in_process:
        archive = _in_process_archive(out, archive, spec.campaign_id())
        check_output_folder(archive, "--out" if archive == out else "--archive")
    else:
        if any(c in out for c in "[]{}*?"):
            # Hadoop reads these as glob patterns: the tables would be written but could not be read back
            raise InputError(f"--out {out!r} contains a glob character ([]{{}}*?), which Spark's file system "
                             f"reads as a pattern; choose another folder name")
        if not is_remote(out):
            check_output_folder(out, "--out")
        if archive is not None:
            check_output_folder(archive, "--archive")
    if in_process:
        _hunt(spec, names[0], run_seed, budget, runs, shrink_budget, archive, as_json)
    else:
        _spark_campaign(spec, master, shards, budget, shrink_budget, shrink_candidates, out, archive, conf_map,
                        check_expected, as_json, verbose)


def _resume_campaign(folder: str, master: str, conf, check_expected: bool, as_json: bool, verbose: bool) -> None:
    """isrlab fuzz --resume: the campaign in ``folder`` on its own campaign.json, its finished shards kept."""
    from . import sparkjob

    ctx = click.get_current_context()
    own = [p.opts[0] for p in ctx.command.params
           if p.name in ("preset_names", "shards", "seed", "runs", "budget", "engine", "max_steps", "extensions",
                         "invariants", "no_swarm", "run_seed", "shrink_budget", "shrink_candidates", "out", "archive")
           and ctx.get_parameter_source(p.name) is not click.core.ParameterSource.DEFAULT]
    if own:
        raise InputError(f"--resume runs the campaign on its own options (its campaign.json); drop {', '.join(own)}")
    if not os.path.isdir(folder) and os.path.isdir(os.path.join("campaigns", folder)):
        folder = os.path.join("campaigns", folder)    # an id under the default --out
    data = sparkjob.load_resumable(folder)
    if ctx.get_parameter_source("master") is click.core.ParameterSource.DEFAULT:
        master = data["master"]
    out = os.path.dirname(os.path.abspath(folder))
    _spark_campaign(data["spec"], master, data["spec"].shards, None, data["shrink_budget"], data["shrink_candidates"],
                    out, data["archive"], _conf_pairs(conf), check_expected, as_json, verbose, resumed=data["campaign"])


def campaign_archive(out: str, campaign_id: str) -> str:
    """A campaign's own counterexample folder: <out>/<id>/counterexamples (campaigns/ when --out is a URI)."""
    return os.path.join("campaigns" if is_remote(out) else out, campaign_id, "counterexamples")


def _in_process_archive(out: str, archive: str | None, campaign_id: str) -> str:
    """The counterexample folder of an in-process hunt: --archive, or --out when only --out was given."""
    ctx = click.get_current_context()
    if ctx.get_parameter_source("out") is click.core.ParameterSource.DEFAULT:
        return archive if archive is not None else campaign_archive(out, campaign_id)
    if "://" in out:
        raise InputError(f"--out {out!r}: a run in process (--master none, --run-seed) archives its "
                         f"counterexample in a local folder")
    if archive is not None and os.path.abspath(out) != os.path.abspath(archive):
        raise InputError(f"--out {out!r} and --archive {archive!r} both name the counterexample's folder of a run in "
                         f"process (--master none, --run-seed): give one")
    return out


def _log(message: str) -> None:
    click.echo(message, err=True)


def _jvm_reason(path: str) -> str | None:
    """The JVM's own reason for failing to start: the first exception line of its log."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read(1 << 20).splitlines()
    except OSError:
        return None
    for line in lines:
        if "Exception:" in line or line.startswith("Error:"):
            return line.split("Exception:", 1)[-1].strip() if "Exception:" in line else line[len("Error:"):].strip()
    return None


class _stderr_to:
    """Point file descriptor 2 at a file while a child process (Spark's JVM) starts; Python's stderr comes back."""

    def __init__(self, path: str):
        self.path = path

    def __enter__(self):
        sys.stderr.flush()
        self.saved = os.dup(2)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 2)
        os.close(fd)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        return False


def start_spark(master: str, app_name: str, conf_map: dict, ship_dir: str):
    """sparkjob.session with the JVM's stderr in ship_dir/spark.log; a master that cannot start is an InputError
    in one line, with the JVM's own reason."""
    from . import sparkjob

    jvm_log = os.path.join(ship_dir, "spark.log")
    try:
        with _stderr_to(jvm_log):
            return sparkjob.session(master, app_name, conf_map, ship_dir)
    except Exception as e:  # a bad master URL or configuration: say so in one line, with the JVM's reason
        reason = _jvm_reason(jvm_log) or (str(e).splitlines()[0] if str(e) else type(e).__name__)
        raise InputError(f"cannot start Spark on {master!r}: {reason[:300]}") from None


#: attempts per task on Spark's embedded master, as spark.task.maxFailures gives a cluster by default
LOCAL_TASK_ATTEMPTS = 4


def with_task_retries(master: str) -> str:
    """local / local[N] / local[*] as local[N,4]: Spark's embedded master otherwise fails a campaign on one lost
    task (spark.task.maxFailures does not apply to it); a user-given local[N,F] stays as given."""
    import re

    m = re.fullmatch(r"local(?:\[(\*|[1-9][0-9]*)\])?", master.strip())
    if m is None:
        return master
    return f"local[{m.group(1) or 1},{LOCAL_TASK_ATTEMPTS}]"


def _spark_campaign(spec, master, shards, budget, shrink_budget, shrink_candidates, out, archive, conf_map,
                    check_expected, as_json, verbose=False, resumed: str | None = None) -> None:
    """isrlab fuzz on Spark: the campaign pipeline of isrlab.sparkjob."""
    import dataclasses
    import shutil
    import time

    from . import sparkjob

    t0 = time.monotonic()
    from .userpresets import export_env

    conf_map = {**export_env(spec.presets), **conf_map}  # the user's presets travel to the executors
    retrying = with_task_retries(master)
    if retrying != master:
        _log(f"isrlab: {master} runs as {retrying}: a task whose Python worker is lost is retried "
             f"(up to {LOCAL_TASK_ATTEMPTS} attempts)")
        master = retrying
    ship_dir = sparkjob.default_ship_dir()
    # the JVM's own stderr (start-up notices, executor-loss lines) goes to a log file, not the user's screen
    jvm_log = os.path.join(ship_dir, "spark.log")
    cid = None
    interrupted = False
    try:
        _log(f"isrlab: starting Spark on {master}")   # 7 s or more: a line, not a silent wait
        spark = start_spark(master, "isrlab fuzz", conf_map, ship_dir)
        started = time.monotonic() - t0
        try:
            parallelism = spark.sparkContext.defaultParallelism
            n_shards = shards or parallelism
            n_tasks = n_shards * len(spec.presets)
            if resumed is None:   # a resumed campaign keeps its spec: its shards and their budget
                shard_budget = None if budget is None else max(0.5, budget * min(parallelism, n_tasks) / n_tasks)
                spec = dataclasses.replace(spec, shards=n_shards, shard_budget_s=shard_budget)
            if resumed is not None:
                cid = resumed
            elif is_remote(out):
                cid = spec.campaign_id()
            else:   # made here, exclusively: a campaign never writes into another's folder
                from .campaign import new_campaign_folder

                try:
                    cid, _ = new_campaign_folder(out, spec)
                except OSError as e:
                    raise RunError(f"cannot make the campaign's folder under {out}: {e.strerror or e}") from None
            if resumed is None:
                sparkjob.write_campaign_json(out, cid, spec, {"master": master, "shrink_budget": shrink_budget,
                                                              "shrink_candidates": shrink_candidates,
                                                              "archive": archive})
            archive = archive or campaign_archive(out, cid)
            if not sparkjob.is_loopback_master(master) and sparkjob.is_local_path(out):
                _log(f"isrlab: note: on a multi-machine cluster --out {out} must be shared storage "
                     f"(hdfs://, s3a://, NFS); a local path keeps each worker's part files on its own disk")
            _log(f"isrlab: Spark {spark.version} on {master} ({parallelism} slots) started in {started:.1f} s; "
                 f"{n_tasks} tasks")
            try:
                from .console import ProgressLine

                result = sparkjob.run_campaign(
                    spark, spec, out, archive, shrink_candidates, shrink_budget, log=_log, cid=cid,
                    line=lambda label, total, unit: ProgressLine(label, total, unit, plain=as_json))
            except Exception as e:  # a job that failed after Spark's retries: no partial table left behind
                if not is_remote(out):
                    shutil.rmtree(os.path.join(out, cid, "_shards_raw"), ignore_errors=True)
                raise RunError(f"the Spark job failed: {sparkjob.failure_reason(e)[:300]}"
                               f"{sparkjob.kept_note(out, cid, len(spec.tasks()))}") from None
            except KeyboardInterrupt:   # Ctrl-C: Spark stops first, then one line says what was kept
                interrupted = True
        finally:   # never raises: a failed job's or Ctrl-C's line is the one the user reads
            sparkjob.stop_keeping_log(spark, jvm_log, None if is_remote(out) or cid is None else os.path.join(out, cid))
    finally:
        shutil.rmtree(ship_dir, ignore_errors=True)
    if interrupted:
        raise Interrupted(sparkjob.discard_interrupted(out, cid, len(spec.tasks())))
    if not is_remote(out):
        _point_latest(out, cid)
    summary = result.summary
    summary["seconds"]["session_s"] = round(started, 3)
    summary["seconds"]["total_s"] = round(time.monotonic() - t0, 3)
    where = {"archive": archive}
    if not is_remote(out):
        folder = os.path.join(out, cid)
        where["summary"] = os.path.join(folder, "summary.json")
        where["tables"] = os.path.join(folder, "runs") + os.sep
        try:
            from . import report

            _log("isrlab: writing the campaign's report")
            where["report"] = report.write(folder)
        except (OSError, InputError, RunError) as e:  # the campaign's results stand; only the page is missing
            _log(f"isrlab: the report could not be written: {e}")
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        from . import console

        console.campaign(summary, console.console(), where, verbose)
    if check_expected:
        sys.exit(EXIT_OK if summary["as_expected"] else EXIT_VIOLATION)
    sys.exit(EXIT_VIOLATION if summary["violations"] else EXIT_OK)


def _point_latest(out: str, campaign_id: str) -> None:
    """<out>/latest: a relative symbolic link to the campaign just written, replaced atomically."""
    link, tmp = os.path.join(out, "latest"), os.path.join(out, f".latest-{os.getpid()}")
    try:
        if os.path.lexists(link) and not os.path.islink(link):
            return  # a user's own file or folder named latest: leave it alone
        os.symlink(campaign_id, tmp)
        os.replace(tmp, link)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _archived_line(path: str, written: bool) -> str:
    """Where a counterexample went (written now, or found already there) and how to replay it."""
    from .console import isrlab_command   # spelled so that it runs when pasted (.venv/bin/isrlab off PATH)

    return (f"{'archived as' if written else 'already archived as'} {path}; "
            f"replay with: {isrlab_command()} replay {shlex.quote(path)}")


def _archive_or_fail(folder: str, preset_name: str, trace):
    """archive_counterexample, with a write failure (disk full, permissions changed) as a one-line RunError."""
    from .archive import archive_counterexample

    try:
        return archive_counterexample(folder, preset_name, trace)
    except OSError as e:
        raise RunError(f"cannot archive the counterexample in {folder}: {e.strerror or e}") from None


def _hunt(spec, preset_name, run_seed, budget, runs, shrink_budget, archive, as_json) -> None:
    """isrlab fuzz --master none: one process, shard 0's seeds one after another, until the first violation."""
    import time

    from .archive import counterexample
    from .campaign import run_one, run_seed as seed_of, scope_config
    from .properties.budget import Deadline
    from .model.actions import ACTION_KINDS
    from .model.config import preset
    from .properties.invariants import WITNESSES

    from .model.trace import model_version

    p = preset(preset_name)
    engine, max_steps = spec.engine, spec.steps
    if run_seed is not None:
        _log(f"isrlab: run seed {run_seed} under model version {model_version()}: a seed gives the same run only "
             f"under the model version it was recorded with (a trace's model_version); its actions replay anywhere")
    t0 = time.monotonic()
    over = None if budget is None or run_seed is not None else Deadline(budget)
    total_steps = n = 0
    kinds_seen: dict[str, int] = {}
    seen_witnesses: set[str] = set()
    found = None
    known_seen: dict = {}
    from .console import ProgressLine
    from .properties.attribution import attribute, classify, preset_result, shrink_attributed

    line = ProgressLine(f"fuzz {preset_name}", total=runs, unit="runs", plain=as_json)
    while True:
        if run_seed is not None and n == 1:
            break
        if run_seed is None and ((runs is not None and n >= runs) or (over is not None and over())):
            break
        this_seed = run_seed if run_seed is not None else seed_of(spec.seed, 0, n)
        r = run_one(spec, preset_name, this_seed, should_stop=over, keep_going=False)
        n += 1
        total_steps += r.steps
        for k, c in r.kind_counts.items():
            kinds_seen[k] = kinds_seen.get(k, 0) + c
        seen_witnesses |= r.witnesses
        now = time.monotonic()
        line.update(n, eta_s=None if budget is None else budget - (now - t0), **{
            "steps/s": total_steps / (now - t0) if now > t0 else 0,
            "action kinds": f"{len(kinds_seen)}/{len(ACTION_KINDS)}",
            "witnesses": f"{len(seen_witnesses)}/{len(WITNESSES)}", "violations": 0})
        if r.violation is not None:
            cfg = scope_config(preset_name, r.scopes[0] if r.scopes else None)   # a scopes run's: its scope's
            a = attribute(cfg, r.actions, r.violation.invariant, start=None, expected=p.bugs)
            kind, _ = classify(p, a)
            if kind == "known" and run_seed is None:   # a known bug the preset does not expect: go on past it
                line.note(f"run {n}: {a.summary()}: a known bug this preset does not expect; going on")
                known_seen.setdefault(a.bugs, (this_seed, r.violation.invariant))
                continue
            found = (this_seed, r, a, cfg)
            break
        if r.exhausted:   # the run searched all it can: another seed would only repeat it
            break
    line.close()
    secs = time.monotonic() - t0
    summary = {"preset": preset_name, "engine": engine, "expected": p.expected, "breaks": list(p.breaks),
               "campaign_seed": spec.seed, "runs": n, "steps": total_steps, "seconds": round(secs, 3),
               "steps_per_second": round(total_steps / secs) if secs > 0 else None,
               "action_kinds_covered": sorted(kinds_seen), "witnesses": sorted(seen_witnesses),
               "stopped_by_budget": bool(over is not None and over.expired and found is None), "violation": None,
               "known_bugs_passed": [{"bugs": list(k), "run_seed": s_, "invariant": i_}
                                     for k, (s_, i_) in known_seen.items()]}
    if found is not None:
        this_seed, r, first, cfg = found
        v = r.violation
        _log(f"fuzz {preset_name}: {v.invariant} fails in run {n}; shrinking its {len(r.actions)} actions"
             + (f" (at most {shrink_budget:g} s)" if shrink_budget is not None else ""))
        sr, a = shrink_attributed(cfg, r.actions, v.invariant, expected=p.bugs, first=first,
                                  time_budget_s=shrink_budget)
        provenance = {"engine": engine, "campaign_seed": spec.seed, "run_index": None if run_seed is not None else n - 1,
                      "run_seed": this_seed, "max_steps": max_steps,
                      "extensions": spec.extensions if engine == "guided" else None,
                      "swarm": None if engine == "scopes" else spec.swarm,   # the ladder draws no action kinds
                      **({"scope": r.scopes[0]} if r.scopes else {})}
        cx = counterexample(preset_name, cfg, sr.actions, v.invariant, provenance, len(r.actions),
                            sr.seconds, not sr.stopped_early)
        cx.trace.attribution = a.to_json()
        path, written = _archive_or_fail(archive, preset_name, cx.trace)
        summary["violation"] = cx.trace.violation
        summary["attribution"] = a.to_json()
        # a scopes run's earlier scopes passed the known bugs it met, the preset's own among them until all were found
        met = [attribute(scope_config(preset_name, b), pa, pv.invariant, expected=p.bugs)
               for (pv, pa), b in zip(r.passed, r.scopes[len(r.violations):])]
        summary["result"] = preset_result(p, [a] + met)
        summary.update(trace_file=path, newly_archived=written, original_length=len(r.actions),
                       shrunk_length=cx.shrunk_length, shrink_seconds=round(sr.seconds, 3),
                       explanation=cx.trace.explanation, scope=r.scopes[0] if r.scopes else None)
        kept = cx.trace
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        click.echo(f"{preset_name}: {n} runs, {total_steps} steps in {secs:.1f} s "
                   f"({summary['steps_per_second']} steps/s); {len(kinds_seen)}/{len(ACTION_KINDS)} action kinds; "
                   f"witnesses: {', '.join(sorted(seen_witnesses)) or 'none'}")
        if found is not None:   # the step table at the terminal's width
            from .console import console as make_console
            from .properties.replay import replay as replay_trace
            from .properties.steptable import render

            render(replay_trace(kept), make_console())
            click.echo(f"VIOLATION {summary['violation']['invariant']} "
                       f"(run seed {found[0]}, {summary['original_length']} steps shrunk to "
                       f"{summary['shrunk_length']} in {summary['shrink_seconds']} s)")
            if summary["scope"] is not None:
                from .properties.scopes import describe

                click.echo(f"met in the small scope of {describe(summary['scope'])} (the trace's configuration; "
                           f"the preset's has {p.config.n_brokers} brokers)")
            click.echo(summary["explanation"])
            kind, bugs = classify(p, a)
            click.echo({"found": f"as expected: {', '.join(bugs)}, attributed by its fix: {a.summary()}",
                        "known": f"a known bug the preset does not expect: {a.summary()}",
                        "unexpected": f"UNEXPECTED, a new finding: {a.summary()}"}[kind])
            click.echo(_archived_line(summary["trace_file"], summary["newly_archived"]))
        else:
            why = " within --budget" if summary["stopped_by_budget"] else ""
            click.echo(f"no violation{why} (preset expects: {', '.join(p.bugs) or 'no bug'})")
        for k, (s_, i_) in known_seen.items():
            click.echo(f"went on past {i_} in run seed {s_}: attributed to {', '.join(k)}, known bugs this preset "
                       f"does not expect")
    sys.exit(EXIT_VIOLATION if found is not None else EXIT_OK)


# --------------------------------------------------------------------------- shrink
@main.command("shrink")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--bfs-states", default=100_000, show_default=True, type=Count(0, 10 ** 8),
              help="Distinct states the breadth-first pass over the trace's own actions may visit (0: none).")
@click.option("--budget", default=120.0, show_default=True, type=SECONDS,
              help="Seconds before the shrinker stops with the shortest trace so far (checked before every "
                   "candidate and every 256 replayed actions, so within about 0.1 s).")
@click.option("--archive", default=None, type=click.Path(file_okay=False),
              help="Folder the shorter trace is archived in (default: FILE's own folder).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def shrink_cmd(file: str, bfs_states: int, budget: float, archive: str, as_json: bool) -> None:
    """Shrink the failing trace FILE harder than the fuzzer does and archive the result if it is shorter.

    Adds the shrinker's breadth-first pass over the trace's own actions, which finds other orders of
    the same events (properties/shrink.py, pass 8); exit 0 whether or not it found a shorter trace.

    Example: isrlab shrink campaigns/latest/counterexamples/FILE.json --budget 60
    """
    import os

    from .archive import counterexample
    from .properties.shrink import shrink

    trace = load_trace_file(file)
    archive = archive if archive is not None else os.path.dirname(os.path.abspath(file))
    check_output_folder(archive, "--archive")
    if trace.expect != "violation" or not trace.violated:
        raise InputError(f"{file}: the trace expects no violation, so there is nothing to shrink")
    from .console import ProgressLine

    # periodic lines only (the first after a few seconds): a trace that turns out not to fail stays a one-line error
    line = ProgressLine(f"shrink: {len(trace.actions)} actions violating {trace.violated}", plain=as_json)
    polls = [0]

    def tick() -> bool:   # asked before every candidate and every few hundred replayed actions: progress only
        polls[0] += 1
        if polls[0] % 64 == 0:
            line.update(eta_s=budget - (line.clock() - line.t0))
        return False

    try:
        sr = shrink(trace.config, trace.actions, trace.violated, time_budget_s=budget, bfs_states=bfs_states,
                    start=trace.start, should_stop=tick)
    except ValueError as e:
        raise InputError(f"{file}: {e}") from None
    finally:
        line.close()
    out = {"file": file, "invariant": trace.violated, "original_length": len(trace.actions),
           "shrunk_length": sr.shrunk_length, "seconds": round(sr.seconds, 3), "complete": not sr.stopped_early,
           "passes": sr.accepted, "trace_file": None, "newly_archived": False}
    if sr.shrunk_length < len(trace.actions):
        provenance = dict(trace.provenance, reshrunk_from=os.path.basename(file), bfs_states=bfs_states)
        for k in ("replay", "original_length", "shrunk_length"):
            provenance.pop(k, None)
        cx = counterexample(trace.preset, trace.config, sr.actions, trace.violated, provenance,
                            trace.provenance.get("original_length", len(trace.actions)), sr.seconds,
                            not sr.stopped_early, start=trace.start)
        cx.trace.description = trace.description
        path, written = _archive_or_fail(archive, trace.preset, cx.trace)
        out.update(trace_file=path, newly_archived=written, explanation=cx.trace.explanation)
    if as_json:
        click.echo(json.dumps(out, indent=1))
    else:
        how = "" if out["complete"] else " (stopped by --budget)"
        click.echo(f"{file}: {trace.violated}, {out['original_length']} actions shrunk to {out['shrunk_length']} "
                   f"in {sr.seconds:.1f} s{how}")
        if out["trace_file"] is not None:
            click.echo(out["explanation"])
            click.echo(_archived_line(out["trace_file"], out["newly_archived"]))
        else:
            click.echo("no shorter trace found")
    sys.exit(EXIT_OK)


# --------------------------------------------------------------------------- promote, campaigns, invariants
@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--to", "dest", default="counterexamples", show_default=True, type=click.Path(file_okay=False),
              help="The regression folder (replayed by tests/test_counterexamples.py, or by the pytest plugin).")
@click.option("--keep", is_flag=True, help="Copy instead of moving.")
def promote(files, dest: str, keep: bool) -> None:
    """Move chosen counterexamples FILE... from a campaign's folder into a regression folder.

    Each file must replay to the outcome it expects (checked first, for every file, before anything
    moves); one already in the folder (same config and actions) is not written twice.

    Example: isrlab promote campaigns/latest/counterexamples/*-kafka-0.11-*.json
    """
    from .archive import archive_counterexample

    check_output_folder(dest, "--to")
    traces = []
    for file in files:
        trace = load_trace_file(file)
        if trace.expect != "violation":
            raise InputError(f"{file}: the trace expects no violation; promote takes counterexamples")
        if not replay_or_fail(trace, file, with_changes=False).matches_expectation:
            raise InputError(f"{file}: does not replay to a violation of {trace.violated}; not promoted")
        traces.append((file, trace))
    for file, trace in traces:
        try:
            path, written = archive_counterexample(dest, trace.preset, trace, keep_name=os.path.basename(file))
            if not keep and os.path.abspath(path) != os.path.abspath(file):
                os.unlink(file)
        except OSError as e:
            raise RunError(f"cannot promote {file} into {dest}: {e.strerror or e}") from None
        click.echo(f"{'promoted' if written else 'already there'}: {path}")
    sys.exit(EXIT_OK)


@main.command()
@click.option("--out", default="campaigns", show_default=True, type=click.Path(file_okay=False),
              help="The folder campaigns were written under.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def campaigns(out: str, as_json: bool) -> None:
    """List the campaigns under --out, newest first: id, date, presets, engine, result, counterexamples.

    Example: isrlab campaigns --json
    """
    from .report import list_campaigns

    rows, problems = list_campaigns(out)   # a bad summary.json is named at the end, the others listed
    latest = os.path.join(out, "latest")
    if as_json:
        click.echo(json.dumps({"campaigns": rows, "latest": os.path.realpath(latest) if os.path.islink(latest)
                               else None, "unreadable": problems}, indent=1))
    elif not rows and not problems:
        click.echo(f"no campaigns under {out} (run: isrlab fuzz)")
    w = max([len("campaign")] + [len(r["id"]) for r in rows])
    if rows and not as_json:
        click.echo(f"{'campaign':<{w}} {'date (UTC)':<21} {'engine':<8} {'result':<15} {'cx':>3}  presets")
    for r in rows if not as_json else ():   # UNEXPECTED only for a violation no known fix removes; a bug not found is "not as expected"
        result = ("interrupted" if r.get("interrupted") else "as expected" if r["as_expected"]
                  else "UNEXPECTED" if r["unexpected"] else "not as expected" if r["as_expected"] is False else "?")
        presets_text = ", ".join(r["presets"])
        if len(presets_text) > 60:
            presets_text = f"{len(r['presets'])} presets"
        click.echo(f"{r['id']:<{w}} {r['date']:<21} {str(r['engine']):<8} {result:<15} "
                   f"{'?' if r['counterexamples'] is None else r['counterexamples']:>3}  {presets_text}")
    if not as_json and any(r.get("interrupted") for r in rows):
        click.echo("an interrupted campaign is finished by: isrlab fuzz --resume PATH (its shards done are kept)")
    for problem in problems:   # after the others, as ls names an entry it cannot read: exit 2
        _log(f"isrlab: error: {problem}")
    sys.exit(EXIT_USAGE if problems else EXIT_OK)


@main.command("report")
@click.argument("campaign", default="latest")
@click.option("--out", default="campaigns", show_default=True, type=click.Path(file_okay=False),
              help="The folder campaigns were written under (CAMPAIGN may also be a campaign's own folder).")
def report_cmd(campaign: str, out: str) -> None:
    """Write CAMPAIGN's report, one self-contained HTML page: summary, plots, counterexamples with diagrams.

    Campaigns write theirs at the end; this command writes it again (e.g. after promoting).

    Example: isrlab report latest
    """
    from . import report

    folder = report.resolve(campaign, out)
    check_output_file(os.path.join(folder, "report.html"), "report")
    try:
        path = report.write(folder)
    except OSError as e:
        raise RunError(f"cannot write the report in {folder}: {e.strerror or e}") from None
    click.echo(path)
    sys.exit(EXIT_OK)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def invariants(as_json: bool) -> None:
    """List the invariant catalogue: name, kind, what it states and its Kafka source.

    Example: isrlab invariants --json
    """
    from .properties.invariants import CATALOGUE, LIVENESS

    rows = [{"name": inv.name, "kind": inv.kind, "scope": inv.scope, "statement": inv.statement,
             "source": inv.source} for inv in CATALOGUE]
    # liveness: checked after a run by settling the cluster (properties/settle.py), and by isrlab explore --liveness
    rows += [{"name": lv.name, "kind": lv.kind, "scope": "settle", "statement": lv.statement, "source": lv.source}
             for lv in LIVENESS]
    if as_json:
        click.echo(json.dumps(rows, indent=1))
    else:
        width = max(len(r["name"]) for r in rows)
        for r in rows:
            click.echo(f"{r['name']:<{width}}  {r['kind']:<9} {r['scope']:<5} {r['statement']}")
    sys.exit(EXIT_OK)


def bugs_markdown() -> str:
    """The known-bug catalogue as a Markdown table: the documentation's reference page is built from it (docs/hooks.py,
    tests/test_readme_bugs.py)."""
    from .model.bugs import BUGS
    from .model.config import PRESETS

    lines = ["| bug | kind | fixed by | may break | expected by | what |", "|---|---|---|---|---|---|"]
    for b in BUGS.values():
        expected_by = ", ".join(f"`{n}`" for n, p in sorted(PRESETS.items()) if b.id in p.bugs) or "-"
        breaks = ", ".join(f"`{x}`" for x in b.breaks) or "-"
        lines.append(f"| {b.id} | {b.kind} | `{b.flag} = {json.dumps(b.fixed)}` ({b.fixed_in}) | {breaks} | "
                     f"{expected_by} | {b.title} |")
    return "\n".join(lines) + "\n"


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--markdown", is_flag=True, help="The Markdown table the documentation's reference shows.")
def bugs(as_json: bool, markdown: bool) -> None:
    """List the known bugs (model/bugs.toml): id, the flag and value that fix it, what it may break, the presets that
    contain it.

    A violation counts as a known bug only when replaying its trace with that bug's fix removes it (model/README.md).

    Example: isrlab bugs --json
    """
    from .model.bugs import BUGS
    from .model.config import PRESETS

    rows = [dict(b.to_json(), presets=[n for n, p in sorted(PRESETS.items()) if b.present_in(p.config)],
                 expected_by=[n for n, p in sorted(PRESETS.items()) if b.id in p.bugs]) for b in BUGS.values()]
    if markdown:
        click.echo(bugs_markdown(), nl=False)
    elif as_json:
        click.echo(json.dumps(rows, indent=1))
    else:
        width = max(len(r["id"]) for r in rows)
        for r in rows:
            click.echo(f"{r['id']:<{width}}  {r['kind']:<7} fixed by {r['flag']}={json.dumps(r['fixed'])} "
                       f"({r['fixed_in']}): {r['title']}")
            click.echo(f"{'':<{width}}  may break: {', '.join(r['breaks']) or 'nothing in the catalogue'}; "
                       f"expected by: {', '.join(r['expected_by']) or 'no preset'}")
    sys.exit(EXIT_OK)


# --------------------------------------------------------------------------- prove, explore, explain
# These commands live in their own modules; they import this one's names, so they come last.
from .explore_cmd import explain, explore  # noqa: E402
from .prove_cmd import prove  # noqa: E402
from .mutate_cmd import mutate  # noqa: E402
from .interop import export, import_  # noqa: E402

main.add_command(prove)
main.add_command(explore)
main.add_command(explain)
main.add_command(mutate)
main.add_command(export)
main.add_command(import_)


if __name__ == "__main__":  # pragma: no cover
    main()
