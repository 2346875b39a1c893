"""Exit codes and the bad-input error shared by every ``isrlab`` command.

0 no violation, 1 a violation was found (or a claim failed), 2 bad input or usage: one line on
stderr, never a traceback.
"""

from __future__ import annotations

import click

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE = 0, 1, 2


class InputError(click.ClickException):
    """Bad input: one line on stderr, exit code 2."""

    exit_code = EXIT_USAGE

    def show(self, file=None) -> None:
        click.echo(f"isrlab: error: {self.format_message()}", err=True)
