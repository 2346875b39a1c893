"""A pytest plugin: a folder of isrlab traces collected as test items, in any project.

Enable it with ``--isrlab-traces DIR`` (repeatable; always collected, beside any paths given) or the ini
option ``isrlab_traces = DIR ...`` (paths relative to the ini file; collected when pytest runs without
paths, as ``testpaths`` are). Each ``*.json`` file under those folders is one test item named after the
file, passing when its outcome is the one its header expects (``properties.replay.verdict``, the definition
``isrlab replay --expected`` uses: a recorded attribution must still name the same known bugs), failing otherwise
with what broke, at which step, in the explainer's sentence, the known bugs it is attributed to by their fixes,
and the ``isrlab replay`` / ``isrlab explain`` commands that show it. A ``*.json`` entry that is not a usable
trace is one failing item named after it, with one line saying what is wrong, and every other item still runs:
a malformed file or attribution, a file that cannot be read, and also what pytest itself passes over in
silence, a FIFO (opened without blocking, so never waited on), a device, a dangling symlink or a symlink
loop, a folder named ``*.json`` (its contents are not collected); a folder under them that cannot be listed
is one failing item too. Without the option, ``pytest DIR`` on a folder of traces runs nothing (exit 5):
the plugin then says in one line at the end of the session that DIR holds isrlab traces and to pass
``--isrlab-traces DIR``.

Registered through the ``pytest11`` entry point ``isrlab.pytest_plugin`` (``-p isrlab.pytest_plugin`` loads
it where plugin autoloading is off, ``-p no:isrlab.pytest_plugin`` turns it off). It costs a project that
does not use it nothing: this module imports only pytest and the standard library, and the model is imported
when the first trace is collected.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_FOLDERS = "_isrlab_trace_folders"


def pytest_addoption(parser) -> None:
    group = parser.getgroup("isrlab", "isrlab traces as regression tests")
    group.addoption("--isrlab-traces", action="append", default=[], metavar="DIR",
                    help="collect every isrlab trace (*.json) under DIR as a test item (repeatable)")
    parser.addini("isrlab_traces", "folders of isrlab traces collected as test items (when pytest is run "
                  "without paths, as testpaths)", type="paths", default=[])


def pytest_configure(config) -> None:
    given = [Path(d) for d in config.getoption("isrlab_traces") or []]
    given = [(p if p.is_absolute() else Path(config.invocation_params.dir) / p).resolve() for p in given]
    from_ini = [Path(p).resolve() for p in config.getini("isrlab_traces")]
    folders = list(dict.fromkeys([*given, *from_ini]))
    if not folders:
        return
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        raise pytest.UsageError(f"isrlab traces: no such folder {', '.join(missing)}")
    setattr(config, _FOLDERS, tuple(folders))
    # --isrlab-traces is collected beside the paths given; the ini folders only when none were given
    source = getattr(config, "args_source", None)    # pytest >= 7.2; before it, always collected
    explicit = source is not None and source.name == "ARGS"
    collected = {Path(a).resolve() for a in config.args if "::" not in a}
    for folder in given if explicit else folders:
        if folder not in collected:
            config.args.append(str(folder))
            collected.add(folder)


#: the hint below reads at most this many bytes of at most this many ``*.json`` files per path given
_PEEK_BYTES, _PEEK_FILES = 4096, 20


def _looks_like_trace(path: str) -> bool:
    """Whether a regular file starts like an isrlab trace; never blocks (a FIFO is not read) and never raises."""
    import os
    import re
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        head = os.read(fd, _PEEK_BYTES)
    except OSError:
        return False
    finally:
        os.close(fd)
    return re.search(rb'"format"\s*:\s*"isrlab-trace"', head) is not None


def _trace_folder(arg: str, base: str) -> str | None:
    """The folder to pass as --isrlab-traces for a path given on the command line (relative to ``base``, the
    invocation folder): the path itself when it is a folder with a trace among its first ``*.json`` entries (its
    own entries only, at most _PEEK_FILES of them read: cheap on any folder), its folder when it is a trace file;
    else None."""
    import os

    full = os.path.join(base, arg)
    if os.path.isdir(full):
        try:
            with os.scandir(full) as it:
                names = sorted(e.path for e in it if e.name.endswith(".json"))
        except OSError:
            return None
        return arg if any(_looks_like_trace(n) for n in names[:_PEEK_FILES]) else None
    if arg.endswith(".json") and _looks_like_trace(full):
        return os.path.dirname(arg) or "."
    return None


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Paths named on the command line without --isrlab-traces (or the ini option) that hold isrlab traces, which
    pytest then does not collect: one line at the end saying how to run them."""
    if getattr(config, _FOLDERS, None):
        return
    source = getattr(config, "args_source", None)
    if source is None or source.name != "ARGS":     # only paths the user named, not testpaths or the working folder
        return
    found = {}
    for arg in config.args:
        path = str(arg).split("::")[0]
        folder = _trace_folder(path, str(config.invocation_params.dir))
        if folder is not None:
            found.setdefault(path, folder)
    if found:
        folders = " ".join(f"--isrlab-traces {f}" for f in dict.fromkeys(found.values()))
        terminalreporter.write_line(f"isrlab: the isrlab traces in {', '.join(found)} are collected only from trace "
                                    f"folders: pass {folders} (or the ini option isrlab_traces)")


def _under(folders, path: Path) -> bool:
    return any(f == path or f in path.parents for f in folders)


def pytest_collect_file(file_path: Path, parent):
    folders = getattr(parent.config, _FOLDERS, None)
    if folders and file_path.suffix == ".json" and _under(folders, file_path.parent):
        return TraceFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent):
    """A folder under the trace folders: collected by TraceFolder (or TracePackage), which reports what pytest's own
    collector passes over; a folder named ``*.json`` there is one failing item instead."""
    folders = getattr(parent.config, _FOLDERS, None)
    if not folders or not _under(folders, path):
        return None
    if path.suffix == ".json" and path not in folders:
        return TraceFile.from_parent(parent, path=path)
    import os

    try:
        with os.scandir(path):
            pass
    except OSError as e:    # not a Directory node: pytest would look for its conftest.py and stop the session
        return UnlistedFolder.from_parent(parent, path=path, problem=f"cannot list the folder {path.name}: "
                                                                     f"{e.strerror or e}")
    try:
        package = (path / "__init__.py").is_file()
    except OSError:
        package = False
    return (TracePackage if package else TraceFolder).from_parent(parent, path=path)


def _one_line(text: str, limit: int = 300) -> str:
    """Text on one line, at most ``limit`` characters (a field of a hostile file may be any length)."""
    text = " ".join(text.splitlines())
    return text if len(text) <= limit else text[:limit - 3] + "..."


class _ReportsTheUncollected:
    """A folder's collector that also reports, as one failing item each, the ``*.json`` entries pytest's own
    collector skips without a word or stops the session on (neither a regular file nor a folder: FIFOs, devices,
    sockets, dangling symlinks, symlink loops), and a folder it cannot list as one failing item instead of a
    collection error. Folders and regular files go through pytest's hooks, as in pytest's own ``Dir.collect``."""

    def collect(self):
        import os

        try:
            with os.scandir(self.path) as it:     # __init__.py first, as pytest's Package collects it
                entries = sorted(it, key=lambda e: (e.name != "__init__.py", e.name))
        except OSError as e:
            yield BadTrace.from_parent(self, name=self.path.name,
                                       problem=f"cannot list the folder {self.path.name}: {e.strerror or e}")
            return
        ihook, config = self.ihook, self.config
        for entry in entries:
            path = Path(entry.path)
            try:                                  # both follow symlinks; a loop raises
                is_dir = entry.is_dir()
                is_file = not is_dir and entry.is_file()
            except OSError:
                is_dir = is_file = False
            if is_dir:
                if not _is_initpath(self.session, path, True) and ihook.pytest_ignore_collect(collection_path=path,
                                                                                              config=config):
                    continue
                col = ihook.pytest_collect_directory(path=path, parent=self)
                if col is not None:
                    yield col
            elif is_file or entry.name.endswith(".json"):
                if not _is_initpath(self.session, path) and ihook.pytest_ignore_collect(collection_path=path,
                                                                                        config=config):
                    continue
                if is_file:
                    yield from ihook.pytest_collect_file(file_path=path, parent=self)
                else:
                    yield TraceFile.from_parent(self, path=path)


def _is_initpath(session, path: Path, with_parents: bool = False) -> bool:
    if not with_parents:
        return session.isinitpath(path)
    try:
        return session.isinitpath(path, with_parents=True)
    except TypeError:       # a pytest without with_parents
        return session.isinitpath(path)


class TraceFolder(_ReportsTheUncollected, pytest.Dir):
    """A folder under the trace folders."""


class TracePackage(_ReportsTheUncollected, pytest.Package):
    """A folder under the trace folders that is also a Python package (it has an ``__init__.py``)."""


class UnlistedFolder(pytest.File):
    """A folder under the trace folders that cannot be listed: one failing item saying so."""

    def __init__(self, *, problem: str, **kwargs):
        super().__init__(**kwargs)
        self.problem = problem

    def collect(self):
        yield BadTrace.from_parent(self, name=self.path.name, problem=self.problem)


class TraceFile(pytest.File):
    """One ``*.json`` entry: one item, a failing one (BadTrace) when the entry is not a usable trace."""

    def collect(self):
        from .inputs import load_trace
        from .model.trace import TraceError
        from .properties.invariants import NAMES
        from .properties.replay import stored_attribution

        try:
            trace = load_trace(str(self.path))     # regular files only: a FIFO is opened without blocking
        except TraceError as e:
            yield self._bad(str(e))
            return
        except Exception as e:  # noqa: BLE001 - a reader's bug is this file's failure, not the session's end
            yield self._bad(f"{self.path.name}: internal error reading it: {type(e).__name__}: {e}")
            return
        if trace.violated is not None and trace.violated not in NAMES:
            yield self._bad(f"{self.path.name}: violated names {trace.violated!r}, no invariant of the catalogue")
            return
        try:
            stored_attribution(trace)
        except TraceError as e:
            yield self._bad(f"{self.path.name}: {e}")
            return
        yield TraceItem.from_parent(self, name=self.path.name, trace=trace)

    def _bad(self, msg: str) -> "BadTrace":
        msg = msg.replace(str(self.path), self.path.name)   # load_trace names the file by the path it was given
        if self.path.name not in msg:
            msg = f"{self.path.name}: {msg}"
        return BadTrace.from_parent(self, name=self.path.name, problem=f"not an isrlab trace: {_one_line(msg)}")


class TraceOutcomeError(AssertionError):
    """The trace's outcome is not the one its header expects, or the entry is no usable trace: its message alone."""


class BadTrace(pytest.Item):
    """An entry that is not a usable trace: one failing item named after it, so that the session goes on."""

    def __init__(self, *, problem: str, **kwargs):
        super().__init__(**kwargs)
        self.problem = problem

    def runtest(self) -> None:
        raise TraceOutcomeError(self.problem)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, TraceOutcomeError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"isrlab trace {self.path.name}"


class TraceItem(pytest.Item):
    def __init__(self, *, trace, **kwargs):
        super().__init__(**kwargs)
        self.trace = trace
        expected = "pass" if trace.expect == "pass" else f"violation of {trace.violated}"
        self.user_properties.append(("isrlab_expect", expected))

    def runtest(self) -> None:
        from .model.trace import TraceError
        from .properties.replay import replay, verdict

        try:
            result = replay(self.trace, with_changes=False)
        except TraceError as e:    # an action the model does not enable where the trace applies it
            raise TraceOutcomeError(f"the trace does not replay: {e}\n{self.hint()}") from None
        ok, why = verdict(result)
        if not ok:
            raise TraceOutcomeError(f"{why}\n{self.hint()}")

    def hint(self) -> str:
        """The commands that show the trace step by step and as a diagram, with its path as the run was given it."""
        import os
        import shlex

        try:
            path = os.path.relpath(self.path, self.config.invocation_params.dir)
        except ValueError:         # another drive (Windows): the name alone, never a machine's absolute path
            path = self.path.name
        path = shlex.quote(path)
        from .console import isrlab_command   # `isrlab` when on PATH, else the script beside this interpreter

        isrlab = isrlab_command()
        return f"see it: {isrlab} replay {path} (step by step), {isrlab} explain {path} (in one sentence and a diagram)"

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, TraceOutcomeError):
            return str(excinfo.value)    # the explanation alone, no traceback
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"isrlab trace {self.path.name}"
