"""``isrlab mutate``: the mutation benchmark (``isrlab.mutate``) from the command line.

A click command object only; ``isrlab/cli.py`` registers it.  Exit 0 when the benchmark ran (a
surviving mutant is data, not a failure), 2 for bad input (one ``isrlab: error:`` line, nothing
written), 3 when it could not complete (Spark failed after its retries, an output could not be written).
"""

from __future__ import annotations

import json
import os
import sys
import time

import click

from .campaign import CAMPAIGN_ENGINES
from .exits import EXIT_OK, InputError, RunError
from .inputs import PRESET, SECONDS, SEEDS, Count, Number, check_output_folder, is_remote


def _log(message: str) -> None:
    click.echo(message, err=True)


def _selected(mutant_names, half_name, preset_name: str = "kafka-2.4") -> tuple:
    """The mutants to run: those named, or the registry (one half of it), without the KRaft-only mutants on a
    ZooKeeper-era preset, whose rules it never runs."""
    from .properties import mutants as registry
    from .model.config import preset

    kraft = preset(preset_name).config.kip_500
    if mutant_names and half_name:
        raise InputError("--mutant and --half both choose the mutants: give one")
    if half_name:
        return tuple(registry.names(half_name, kraft=kraft))
    out = []
    for value in mutant_names:
        for name in (n.strip() for n in value.split(",")):
            if not name:
                continue
            if name not in registry.BY_NAME:
                raise InputError(f"--mutant: unknown mutant {name[:60]!r} (isrlab mutate --list shows them)")
            if registry.BY_NAME[name].kraft_only and not kraft:
                raise InputError(f"--mutant: {name} changes a rule only the KRaft era runs; give a KRaft --preset "
                                 f"(kafka-3.7, kafka-4.1, ...), not {preset_name}")
            if name not in out:
                out.append(name)
    if mutant_names and not out:   # --mutant "" or "," names none; it never means the whole registry
        raise InputError("--mutant names no mutant (isrlab mutate --list shows them; leave --mutant out for all)")
    return tuple(out) if out else tuple(registry.names(kraft=kraft))


def _list(as_json: bool) -> None:
    from .properties.mutants import MUTANTS

    rows = [m.to_json() for m in MUTANTS]
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    from rich.table import Table

    from .console import console

    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for col in ("mutant", "area", "kind", "half", "meaning"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["name"], r["area"], r["kind"], r["half"],
                      r["meaning"] + (" [equivalent]" if r["equivalent_reason"] else "")
                      + (" [KRaft presets]" if r["kraft_only"] else ""))
    console().print(table)


def _print(summary: dict, where: dict) -> None:
    from rich.table import Table

    from .console import console
    from .properties.mutants import lookup

    out = console()
    engines = summary["spec"]["engines"]
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold",
                  title=f"{summary['id']}: {len(summary['spec']['mutants'])} mutants on {summary['spec']['preset']}",
                  title_justify="left")
    table.add_column("mutant", overflow="fold")
    table.add_column("area")
    table.add_column("half")
    for e in engines:
        table.add_column(e, overflow="fold")
    tests = {r["mutant"]: r for r in summary.get("tests", {}).get("rows", [])}
    if tests:
        table.add_column("tests", overflow="fold")
    cells = {(e["mutant"], e["engine"]): e for e in summary["mutants"]}
    for name in summary["spec"]["mutants"]:
        m = lookup(name)
        row = [name + (" (equiv.)" if m.equivalent_reason else ""), m.area, m.half]
        for e in engines:
            c = cells[(name, e)]
            if c["killed"]:
                t = c["median_seconds"]
                row.append(f"{c['invariant']} {t:.1f}s {c['median_steps']:,.0f} st"
                           + (f" ->{c['shrunk_length']}" if c["shrunk_length"] is not None else "")
                           + (f" {c['kills']}/{c['seeds']}" if c["seeds"] > 1 else "")
                           + {"holds": ", unmutated holds", "cut": ", unmutated cut"}.get(c.get("unmutated"), ""))
            else:
                row.append("survived")
        if tests:
            t = tests[name]
            row.append("killed" if t["killed"] else "survived")
        table.add_row(*row)
    out.print(table)
    for e in engines:
        r = summary["engines"][e]
        med = r["median_seconds_to_kill"]
        out.print(f"{e}: killed {r['all']['killed']}/{r['all']['non_equivalent']} non-equivalent mutants "
                  f"(tuning {r['tuning']['killed']}/{r['tuning']['non_equivalent']}, held-out "
                  f"{r['held-out']['killed']}/{r['held-out']['non_equivalent']}); "
                  f"median {med if med is None else round(med, 2)} s to a kill; "
                  f"{r['all']['equivalent']} equivalent ({r['all']['killed_equivalent']} of them killed)", soft_wrap=True)
        k = r.get("kill_evidence")
        if k:
            out.print(f"{e}: every kill's trace replayed on the unmutated model: {k['unmutated_holds']} hold the "
                      f"invariant, {k['unmutated_cut']} cannot be run there, {k['model_error']} mutated-model errors; "
                      f"{k['own_violations_not_counted']} violations the unmutated model shows too were not counted",
                      soft_wrap=True)
    if "tests" in summary:
        r = summary["tests"]["rates"]
        out.print(f"fast tests (unit or scenario in {', '.join(summary['tests']['paths'])}): killed {r['all']['killed']}/{r['all']['non_equivalent']} "
                  f"non-equivalent mutants (tuning {r['tuning']['killed']}/{r['tuning']['non_equivalent']}, "
                  f"held-out {r['held-out']['killed']}/{r['held-out']['non_equivalent']})"
                  + (f"; deselected as failing unmutated: {', '.join(summary['tests']['baseline_failures'])}"
                     if summary["tests"]["baseline_failures"] else ""), soft_wrap=True)
    for key, what in (("summary", "summary (JSON)"), ("parquet", "results (Parquet)")):
        if where.get(key):
            out.print(f"{what}: {where[key]}", soft_wrap=True)


@click.command("mutate")
@click.option("--preset", "preset_name", default="kafka-2.4", show_default=True, type=PRESET,
              help="The preset the mutants are applied to.")
@click.option("--engine", "engines", multiple=True, type=click.Choice(list(CAMPAIGN_ENGINES)),
              help="Engine (repeatable, as isrlab fuzz names them). Default: guided.")
@click.option("--budget", default=60.0, show_default=True, type=SECONDS,
              help="Seconds per mutant, engine and seed (checked inside the engines' loops, as isrlab fuzz does).")
@click.option("--steps", "max_steps", default=None, type=Count(1, 10 ** 12),
              help="Model steps per mutant, engine and seed (checked between runs), besides --budget.")
@click.option("--seeds", default=1, show_default=True, type=Count(1, 10_000),
              help="Seeds per mutant and engine: --seed, --seed + 1, ...")
@click.option("--seed", default=0, show_default=True, type=SEEDS, help="The first seed.")
@click.option("--mutant", "mutant_names", multiple=True, metavar="NAME",
              help="Mutant to run (repeatable or comma-separated; default: the whole registry).")
@click.option("--half", "half_name", type=click.Choice(["tuning", "held-out"]), default=None,
              help="Only one half of the registry's fixed split.")
@click.option("--master", default="none", show_default=True,
              help="'none' runs in this process; a Spark master (local[N], spark://HOST:PORT...) runs one task per "
                   "mutant, engine and seed on the cluster.")
@click.option("--conf", "conf", multiple=True, metavar="KEY=VALUE", help="Spark configuration (repeatable).")
@click.option("--shrink-budget", default=5.0, show_default=True, type=Number(0.0, 3600.0, name="seconds"),
              help="Seconds to shrink each kill's trace (its shrunk length).")
@click.option("--tests", "with_tests", is_flag=True,
              help="Also run the fast tests (markers unit, scenario: pytest -x in a subprocess) under each mutant.")
@click.option("--tests-only", is_flag=True, help="Only the fast tests, no engine.")
@click.option("--tests-dir", default="tests", show_default=True, type=click.Path(file_okay=False),
              help="The project's tests folder (for --tests).")
@click.option("--tests-jobs", default=1, show_default=True, type=Count(1, 64),
              help="pytest subprocesses run at once under --tests.")
@click.option("--tests-path", "tests_paths", multiple=True, metavar="PATH",
              help="Run only these test files or folders under the mutants (repeatable; default: all of --tests-dir).")
@click.option("--out", default="campaigns", show_default=True, type=click.Path(file_okay=False),
              help="Folder under which mutate-<id>/ gets summary.json and results.parquet.")
@click.option("--list", "list_only", is_flag=True, help="Print the registry and exit.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary on stdout.")
def mutate(preset_name, engines, budget, max_steps, seeds, seed, mutant_names, half_name, master, conf,
           shrink_budget, with_tests, tests_only, tests_dir, tests_jobs, tests_paths, out, list_only, as_json) -> None:
    """Run the fuzz engines (and, with --tests, the fast tests) against the registry of rule mutants.

    For each mutant and engine: killed or survived, the invariant, seconds and model steps to the kill,
    and its shrunk length; a table, summary.json and results.parquet under OUT/mutate-<id>/. A
    violation kills only if its trace, replayed on the unmutated model, does not fail the same
    invariant; one the unmutated model shows too is counted, not a kill, and the hunt goes on.
    Exit 0 whenever the benchmark ran: a surviving mutant is a result.

    Example: isrlab mutate --engine guided --engine walk --budget 60 --tests
    """
    from .cli import _conf_pairs, _split_presets
    from .mutate import MutateSpec, run_in_process, run_tests, summarize, write_outputs

    if list_only:
        _list(as_json)
        sys.exit(EXIT_OK)
    names = _split_presets((preset_name,))
    if len(names) != 1:
        raise InputError("--preset takes one preset")
    mutants = _selected(mutant_names, half_name, names[0])
    conf_map = _conf_pairs(conf)
    if is_remote(out):
        raise InputError(f"--out {out!r}: the benchmark's results are written by the driver to a local folder")
    check_output_folder(out, "--out")
    if (with_tests or tests_only) and not os.path.isdir(tests_dir):
        raise InputError(f"--tests-dir: {tests_dir} is not a folder (run from the project's checkout)")
    missing = [p for p in tests_paths if not os.path.exists(p)]
    if missing:
        raise InputError(f"--tests-path: {missing[0]} does not exist")
    try:
        spec = MutateSpec(preset=names[0], mutants=mutants, engines=() if tests_only else (tuple(engines) or ("guided",)),
                          seeds=tuple(seed + i for i in range(seeds)), budget_s=budget, max_steps=max_steps,
                          shrink_budget_s=shrink_budget)
    except ValueError as e:
        raise InputError(str(e)) from None
    t0 = time.monotonic()
    if master == "none" or not spec.engines:
        rows = run_in_process(spec, log=_log)
        where_run = "in process"
    else:
        rows = _on_spark(spec, master, conf_map)
        where_run = master
    tests = None
    if with_tests or tests_only:
        try:
            tests = run_tests(mutants, tests_dir, log=_log, paths=tests_paths, jobs=tests_jobs)
        except RuntimeError as e:
            raise RunError(str(e)) from None
    summary = summarize(spec, rows, tests, time.monotonic() - t0, where_run)
    folder = os.path.join(out, spec.run_id())
    try:
        where = write_outputs(folder, summary)
    except OSError as e:
        raise RunError(f"cannot write the results in {folder}: {e.strerror or e}") from None
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        _print(summary, where)
    sys.exit(EXIT_OK)


def _on_spark(spec, master: str, conf_map: dict) -> list:
    """The tasks on a Spark master, started as isrlab fuzz starts its campaigns (code shipped, retries on local)."""
    import shutil

    from . import sparkjob
    from .cli import start_spark, with_task_retries
    from .mutate import run_on_spark
    from .userpresets import export_env

    conf_map = {**export_env((spec.preset,)), **conf_map}
    master = with_task_retries(master)
    ship_dir = sparkjob.default_ship_dir()
    try:
        spark = start_spark(master, "isrlab mutate", conf_map, ship_dir)
        try:
            _log(f"isrlab: Spark {spark.version} on {master} ({spark.sparkContext.defaultParallelism} slots); "
                 f"{len(spec.tasks())} tasks")
            return run_on_spark(spark, spec)
        except Exception as e:  # noqa: BLE001 - a job that failed after Spark's retries
            first = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
            raise RunError(f"the Spark job failed: {first[:300]}") from None
        finally:
            spark.stop()
    finally:
        shutil.rmtree(ship_dir, ignore_errors=True)
