"""Exit codes and the one-line errors shared by every ``isrlab`` command.

0 no violation (or, with ``--expected``, every outcome as expected); 1 a violation was found, a
trace's outcome differs from the one its header expects, or a claim failed; 2 bad input or usage;
3 the run could not complete (a Spark job that failed after its retries, an output that could not
be written, or, as a last resort, an exception no validator caught: a bug, its traceback saved to a
file the line names); 130 interrupted (Ctrl-C). Errors are one line on stderr, never a traceback.
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


class Interrupted(OneLineError):
    """Ctrl-C: one ``isrlab: interrupted: ...`` line saying what was kept, exit code 130 (as a shell gives)."""

    exit_code = 130

    def show(self, file=None) -> None:
        click.echo(f"isrlab: interrupted: {self.format_message()}", err=True)


class RunError(OneLineError):
    """A run that could not complete for a reason other than its input: one line on stderr, exit code 3."""

    exit_code = EXIT_FAILED


def save_traceback(error: BaseException) -> str | None:
    """Write ``error``'s traceback to a new file under the system's temporary folder; its path, or None if that
    cannot be written (the one-line report then goes without it)."""
    import tempfile
    import time
    import traceback

    try:
        fd, path = tempfile.mkstemp(prefix=time.strftime("isrlab-internal-error-%Y%m%d-%H%M%S-", time.gmtime()),
                                    suffix=".txt")
        with open(fd, "w", encoding="utf-8", errors="replace") as fh:
            fh.write("".join(traceback.format_exception(error)))
        return path
    except OSError:
        return None


def internal_error_line(error: BaseException) -> str:
    """The last-resort line for an exception no validator caught: what it was, where its traceback is, and that it
    is isrlab's bug, not the user's."""
    first = str(error).splitlines()[0][:300] if str(error) else ""
    path = save_traceback(error)
    where = f"traceback in {path}" if path else "ISRLAB_DEBUG=1 shows the traceback"
    return (f"isrlab: internal error: {type(error).__name__}: {first} (a bug in isrlab, not in your input; {where}; "
            f"please report it)")
