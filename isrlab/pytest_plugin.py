"""A pytest plugin: a folder of isrlab traces collected as test items, in any project.

Enable it with ``--isrlab-traces DIR`` (repeatable) or the ini option ``isrlab_traces = DIR ...``.
Each ``*.json`` file under those folders is one test, named after the file, passing when its
outcome is the one its header expects (the definition ``isrlab replay --expected`` uses), failing
with the explanation otherwise; a file that is not a usable trace is a one-line collection error.
Registered through the ``pytest11`` entry point; it imports the model only when a trace is collected.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser) -> None:
    group = parser.getgroup("isrlab", "isrlab traces as regression tests")
    group.addoption("--isrlab-traces", action="append", default=[], metavar="DIR",
                    help="collect every isrlab trace (*.json) under DIR as a test item (repeatable)")
    parser.addini("isrlab_traces", "folders of isrlab traces collected as test items", type="paths", default=[])


def _folders(config) -> list[Path]:
    given = [Path(d) for d in config.getoption("isrlab_traces") or []]
    given = [p if p.is_absolute() else Path(config.invocation_params.dir) / p for p in given]
    return [p.resolve() for p in [*given, *config.getini("isrlab_traces")]]


def pytest_configure(config) -> None:
    folders = _folders(config)
    config._isrlab_trace_folders = folders
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        raise pytest.UsageError(f"isrlab traces: no such folder {', '.join(missing)}")
    for folder in folders:  # collected even when pytest was pointed elsewhere
        if str(folder) not in config.args:
            config.args.append(str(folder))


def pytest_collect_file(file_path: Path, parent):
    folders = getattr(parent.config, "_isrlab_trace_folders", ())
    if file_path.suffix == ".json" and any(folder == file_path.parent or folder in file_path.parents
                                           for folder in folders):
        return TraceFile.from_parent(parent, path=file_path)
    return None


class TraceFile(pytest.File):
    """One trace file: one item, or a one-line collection error when the file is not a usable trace."""

    def collect(self):
        from .model.trace import TraceError, load_trace
        from .properties.invariants import BY_NAME

        try:
            trace = load_trace(str(self.path))
        except TraceError as e:
            raise self.CollectError(f"not an isrlab trace: {e}") from None
        if trace.violated is not None and trace.violated not in BY_NAME:
            raise self.CollectError(f"{self.path.name}: violated names {trace.violated!r}, no invariant of the "
                                    f"catalogue")
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
        except TraceError as e:
            raise TraceOutcomeError(f"the trace does not replay: {e}") from None
        ok, why = verdict(result)
        if not ok:
            raise TraceOutcomeError(why)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, TraceOutcomeError):
            return f"{self.path.name}: {excinfo.value}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"isrlab trace {self.path.name}"
