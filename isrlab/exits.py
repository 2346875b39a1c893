"""Exit codes and the one-line errors shared by every ``isrlab`` command.

0 no violation (or, with ``--expected``, every outcome as expected); 1 a violation was found, a
trace's outcome differs from the one its header expects, or a claim failed; 2 bad input or usage;
3 the run could not complete (a Spark job that failed after its retries, an output that could not
be written). Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import click

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_FAILED = 0, 1, 2, 3


class OneLineError(click.ClickException):
    """An error shown as one ``isrlab: error:`` line on stderr, with the subclass's exit code."""

    def show(self, file=None) -> None:
        click.echo(f"isrlab: error: {self.format_message()}", err=True)


class InputError(OneLineError):
    """Bad input: one line on stderr, exit code 2."""

    exit_code = EXIT_USAGE


class RunError(OneLineError):
    """A run that could not complete for a reason other than its input: one line on stderr, exit code 3."""

    exit_code = EXIT_FAILED
