"""A pytest plugin: a folder of isrlab traces collected as test items, in any project.

Enable it with ``--isrlab-traces DIR`` (repeatable; always collected, beside any paths given) or the ini
option ``isrlab_traces = DIR ...`` (paths relative to the ini file; collected when pytest runs without
paths, as ``testpaths`` are). Each ``*.json`` file under those folders is one test item named after the
file, passing when its outcome is the one its header expects (``properties.replay.verdict``, the definition
``isrlab replay --expected`` uses: a recorded attribution must still name the same known bugs), failing otherwise
with what broke, at which step, in the explainer's sentence, the known bugs it is attributed to by their fixes,
and the ``isrlab replay`` / ``isrlab explain`` commands that show it; a file that is not a usable trace (a
malformed attribution included) is a one-line collection error.

Registered through the ``pytest11`` entry point ``isrlab.pytest_plugin`` (``-p isrlab.pytest_plugin`` loads
it where plugin autoloading is off, ``-p no:isrlab.pytest_plugin`` turns it off). It costs a project that
does not use it nothing: this module imports only pytest and pathlib, and the model is imported when the
first trace is collected.
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


def pytest_collect_file(file_path: Path, parent):
    folders = getattr(parent.config, _FOLDERS, None)
    if folders and file_path.suffix == ".json" and any(f == file_path.parent or f in file_path.parents
                                                       for f in folders):
        return TraceFile.from_parent(parent, path=file_path)
    return None


class TraceFile(pytest.File):
    """One trace file: one item, or a one-line collection error when the file is not a usable trace."""

    def collect(self):
        from .model.trace import TraceError, load_trace
        from .properties.invariants import NAMES
        from .properties.replay import stored_attribution

        try:
            trace = load_trace(str(self.path))
        except TraceError as e:
            msg = str(e)
            if msg.startswith(str(self.path)):     # load_trace names the file by the path it was given
                msg = self.path.name + msg[len(str(self.path)):]
            raise self.CollectError(f"not an isrlab trace: {msg}") from None
        if trace.violated is not None and trace.violated not in NAMES:
            raise self.CollectError(f"not an isrlab trace: {self.path.name}: violated names {trace.violated!r}, "
                                    f"no invariant of the catalogue")
        try:
            stored_attribution(trace)
        except TraceError as e:
            raise self.CollectError(f"not an isrlab trace: {self.path.name}: {e}") from None
        yield TraceItem.from_parent(self, name=self.path.name, trace=trace)


class TraceOutcomeError(AssertionError):
    """The trace's outcome is not the one its header expects."""


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
        return f"see it: isrlab replay {path} (step by step), isrlab explain {path} (in one sentence and a diagram)"

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, TraceOutcomeError):
            return str(excinfo.value)    # the explanation alone, no traceback
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"isrlab trace {self.path.name}"
