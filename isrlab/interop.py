"""``isrlab export --itf`` and ``isrlab import``: traces to and from the TLA+ world (docs/guides/tla-interop.md).

export writes a trace's states as ITF JSON (isrlab/itf.py); import turns a TLC or ITF counterexample of the KRaft
TLA+ specification into an isrlab trace (isrlab/tla_import.py) and replays it. Bad input of any kind is one line
and exit 2.
"""

from __future__ import annotations

import sys

import click

from .exits import EXIT_OK, EXIT_VIOLATION, InputError
from .inputs import PRESET, check_output_file

#: the largest counterexample import reads (TLC's traces of the specification are 30-70 kB)
MAX_INPUT_BYTES = 8 * 1024 * 1024


def _write_or_echo(text: str, out: str | None) -> None:
    from .model.trace import write_atomic

    if out is None:
        click.echo(text, nl=False)
    else:
        write_atomic(out, text)


@click.command("export")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--itf", "itf", is_flag=True, help="Write the Informal Trace Format (the one format so far).")
@click.option("-o", "--out", metavar="PATH", help="The file to write (default: standard output).")
def export(file: str, itf: bool, out: str | None) -> None:
    """Write trace FILE's state sequence in another tool's format: with --itf, as ITF JSON (the format Apalache and
    Quint write), one state per step, the initial one first, each with its action in #meta.

    Exit 0 when written, 2 for a bad file or a trace that does not replay.

    Example: isrlab export --itf docs/findings/kraft-pending-reset-race.trace.json -o race.itf.json
    """
    from .cli import load_trace_file
    from .itf import dumps_itf, trace_to_itf
    from .model.trace import TraceError

    if not itf:
        raise InputError("export: name the format: --itf")
    if out is not None:
        check_output_file(out, "--out")
    trace = load_trace_file(file)
    try:
        doc = trace_to_itf(trace, source=file)
    except TraceError as e:
        raise InputError(f"{file}: {e}") from None
    _write_or_echo(dumps_itf(doc), out)
    if out is not None:
        click.echo(f"wrote {out}: {len(doc['states'])} states", err=True)
    sys.exit(EXIT_OK)


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--preset", "preset_name", required=True, metavar="NAME", type=PRESET,
              help="The KRaft preset to replay the imported trace on.")
@click.option("-o", "--out", metavar="PATH", help="Write the isrlab trace here (default: standard output).")
def import_(file: str, preset_name: str, out: str | None) -> None:
    """Turn FILE, a counterexample of the KRaft TLA+ specification (Vanlightly/kafka-tlaplus, v3.5) as TLC prints it
    or as ITF with each state's action in #meta.action, into an isrlab trace on --preset, then replay it.

    Each specification action becomes the model actions that do the same (docs/guides/tla-interop.md). Exit 0 when
    the replay breaks no invariant, 1 when it breaks one (the trace then expects that violation), 2 for a bad file
    or a step the model cannot follow (the line says which and why).

    Example: isrlab import tests/fixtures/tla/no-partition-epoch-check.tlc.txt --preset kraft-no-partition-epoch-check
    """
    from .model.config import PRESETS
    from .model.trace import TraceError, dumps_trace, read_regular_file
    from .properties.replay import replay
    from .tla_import import TlaImportError, import_trace

    if preset_name not in PRESETS:
        raise InputError(f"--preset: unknown preset {preset_name!r} (isrlab presets lists them)")
    if out is not None:
        check_output_file(out, "--out")
    try:
        raw = read_regular_file(file, MAX_INPUT_BYTES)
        trace, notes, start, moves = import_trace(raw, file, preset_name)
        result = replay(trace, with_changes=False)
    except (TlaImportError, TraceError) as e:
        raise InputError(str(e)) from None
    if result.violations:    # the preset's own headline invariant where it is among them, else the first
        names = [v.invariant for v in result.violations]
        headline = PRESETS[preset_name].expected
        trace.expect, trace.violated = "violation", headline if headline in names else names[0]
    _write_or_echo(dumps_trace(trace), out)
    spec = trace.provenance.get("spec_invariant") or "no invariant named"
    found = ", ".join(f"{v.invariant} at action {v.step}" for v in result.violations) or "no violation"
    moved = "; steps moved" if any(moves) else ""
    click.echo(f"imported {file}: {len(notes)} specification steps ({spec}) -> {len(trace.actions)} model actions "
               f"on {preset_name} (broker 3 starts {start}{moved}); replay: {found}", err=True)
    sys.exit(EXIT_VIOLATION if result.violations else EXIT_OK)
