"""The Spark side of a fuzz campaign: ship the code, run the shards, keep the results as Parquet, aggregate.

The pipeline, for ``isrlab fuzz --master URL`` (``local[*]`` by default):

1. ``session``: a SparkSession on the master.  The project's code reaches the
   executors as a zip built from the running package at submit time
   (``spark.submit.pyFiles``), so a multi-machine cluster needs nothing of ours
   installed, only Python 3.11 on every worker (``PYSPARK_PYTHON`` names it; it
   defaults to this interpreter).  The walk and guided engines need nothing but
   the standard library on executors; the hypothesis engine needs Hypothesis there.
2. Fuzz: one task per (preset, shard), ``campaign.shard_runs`` on an executor,
   yielding plain records.  Under a local or shared ``--out``, each task streams its
   shard's runs to a file of JSON lines as they end (a million runs never sit in one
   process's memory) and keeps its shard's record beside them, both under
   ``_shards_done``, each written under a temporary name and renamed (a retried
   attempt replaces them whole, never adds to them), beside the campaign's
   ``campaign.json``: ``isrlab fuzz --resume`` after a killed driver, a lost cluster
   or Ctrl-C runs only the shards without a record, and the tables are then those
   of an uninterrupted campaign under ``--runs``.  A running task also replaces a
   small progress note there every second, which the driver's progress line reads
   (runs, steps/s, and an ETA while the tasks run; no port is opened).  Under a
   URI, the records are written once as ``_shards_raw`` Parquet, as one job, and
   the progress line moves as tasks end.
3. Tables: ``runs`` (one row per run, partitioned by preset) and ``shards`` (one
   row per task), both Parquet under ``<out>/<campaign id>/``.  On a multi-machine
   cluster ``--out`` must be shared storage (hdfs://, s3a://, NFS): a ``file:``
   path would leave each worker's part files on its own disk.
4. Aggregations in Spark: violations per preset and invariant, coverage of action
   kinds and error codes, steps/s per executor, and the violating runs to shrink
   (the shortest few per preset and invariant).
5. Shrinking the candidates in parallel on the cluster; the driver then
   deduplicates them by invariant and digest of the shrunk trace, explains them and
   archives the distinct ones (``isrlab.archive``: atomic, never twice).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from .campaign import CampaignSpec, hold_for_test, run_shard, scope_config
from .userpresets import register_env

#: Spark's JVM logging for campaigns: errors only (the driver's; executors keep Spark's default).
LOG4J2 = Path(__file__).with_name("log4j2.properties")
#: The JVM flags that halve a short-lived Spark JVM's start-up CPU (C1 only, serial GC).
FAST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


# --------------------------------------------------------------------------- shipping the code
def package_zip(dest_dir: str) -> str:
    """Zip the running ``isrlab`` package (with model/, properties/, specs/) for executors; its path.

    Built from wherever the package is imported from (a wheel install or an editable checkout,
    whose subpackages live in other folders), so the executors run exactly the driver's code.
    """
    import importlib

    path = os.path.join(dest_dir, "isrlab-code.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for pkg_name in ("isrlab", "isrlab.model", "isrlab.properties", "isrlab.specs"):
            pkg = importlib.import_module(pkg_name)
            root = list(pkg.__path__)[0]
            prefix = pkg_name.replace(".", "/")
            for name in sorted(os.listdir(root)):
                full = os.path.join(root, name)
                if os.path.isfile(full) and not name.endswith((".pyc", ".pyo")):
                    z.write(full, f"{prefix}/{name}")
    return path


# --------------------------------------------------------------------------- the session
def is_loopback_master(master: str) -> bool:
    """True for Spark's embedded modes and for a cluster master on this machine's loopback address."""
    if master.startswith("local"):
        return True
    host = urlparse(master).hostname or ""
    return host in ("127.0.0.1", "localhost", "::1")


def session(master: str, app_name: str, conf: dict | None = None, ship_dir: str | None = None):
    """A SparkSession on ``master`` with the project's code shipped; user ``conf`` overrides our defaults."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    log_conf = f"-Dlog4j2.configurationFile={LOG4J2.as_uri()}"
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",  # our progress line instead (isrlab.sparkjob.Progress)
        "spark.sql.shuffle.partitions": "4",
        "spark.driver.extraJavaOptions": f"{FAST_JVM} {log_conf}",
        "spark.executor.extraJavaOptions": FAST_JVM,
    }
    if is_loopback_master(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        settings.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
    if ship_dir is not None:
        settings["spark.submit.pyFiles"] = package_zip(ship_dir)
    settings.update(conf or {})
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    for k, v in settings.items():
        builder = builder.config(k, v)
    if ship_dir is not None:
        driver_logs_to(os.path.join(ship_dir, "spark.log"))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


#: the handler ``driver_logs_to`` put on Python's root logger, if any
_LOG_HANDLER = None


def driver_logs_to(path: str | None) -> None:
    """Send what py4j and pyspark log in this process (a broken connection's tracebacks: py4j logs through the root
    logger, which Python then prints on stderr, about 50 lines on Ctrl-C) to ``path``, the JVM's own log, instead of
    the user's screen; None takes the handler off again."""
    import logging

    global _LOG_HANDLER
    root = logging.getLogger()
    if _LOG_HANDLER is not None:
        root.removeHandler(_LOG_HANDLER)
        _LOG_HANDLER.close()
        _LOG_HANDLER = None
    if path is not None:
        _LOG_HANDLER = logging.FileHandler(path, delay=True, encoding="utf-8")
        _LOG_HANDLER.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(_LOG_HANDLER)


def stop_keeping_log(spark, jvm_log: str, folder: str | None) -> None:
    """Stop ``spark`` and copy the JVM's log into the campaign's ``folder`` (None: nowhere); never raises, so that
    the campaign's own outcome (a failed job, Ctrl-C) is the one the user reads, not a failure of this clean-up."""
    try:
        spark.stop()
    except Exception:  # noqa: BLE001 - a JVM already gone (Ctrl-C reaches it too): the stop has nothing to do
        pass
    driver_logs_to(None)
    if folder is not None and os.path.isfile(jvm_log) and os.path.isdir(folder):
        try:
            shutil.copyfile(jvm_log, os.path.join(folder, "spark.log"))
        except OSError:
            pass


def failure_reason(error: BaseException) -> str:
    """The line that says why a Spark job failed: the exception a task's Python code raised (the last unindented line
    of the traceback Spark passes on: "An exception was thrown from the Python worker:" says nothing), else the
    error's first line."""
    lines = [ln.rstrip() for ln in str(error).splitlines() if ln.strip()]
    if any(ln.startswith("Traceback") for ln in lines):
        raised = [ln for ln in lines if not ln[0].isspace() and not ln.startswith(("Traceback", "During handling",
                                                                                     "The above exception"))]
        if raised and raised[-1] != lines[0]:
            return f"a task raised {raised[-1]}"
    return lines[0] if lines else type(error).__name__


def discard_interrupted(out: str, cid: str | None, tasks: int | None = None) -> str:
    """After Ctrl-C (Spark stopped): remove what the campaign under ``out`` left half-written (a table without its
    _SUCCESS, _shards_raw and their _temporary); one line saying what was kept and how to resume.  The shards that
    had finished are kept (``_shards_done``), so ``isrlab fuzz --resume`` runs only the others."""
    if cid is None:
        return "before the campaign started; nothing was written"
    if not is_local_path(out):
        return (f"campaign {cid} discarded: its partial tables under {_join(out, cid)} are Spark's to remove "
                f"(_shards_raw, _temporary); rerun the same command to start again")
    root = os.path.join(_local(out), cid)
    shutil.rmtree(os.path.join(root, "_shards_raw"), ignore_errors=True)
    for table in ("runs", "shards"):
        if not os.path.isfile(os.path.join(root, table, "_SUCCESS")):
            shutil.rmtree(os.path.join(root, table), ignore_errors=True)
    try:
        kept = sum(n.endswith(".json") for n in os.listdir(os.path.join(root, DONE)))
    except OSError:
        kept = 0
    if not os.path.isfile(os.path.join(root, CAMPAIGN_JSON)):
        shutil.rmtree(root, ignore_errors=True)
        return f"campaign {cid} discarded before its first shard ran; nothing is left of it under {out}"
    of = f" of {tasks}" if tasks is not None else ""
    return (f"campaign {cid}: {kept}{of} shards had finished and are kept in {root}; "
            f"resume with: isrlab fuzz --resume {root}")


def kept_note(out: str, cid: str | None, tasks: int) -> str:
    """"; 2 of 4 shards had finished and are kept: resume with isrlab fuzz --resume DIR", or "" when none can be."""
    if cid is None or not is_local_path(out):
        return ""
    root = os.path.join(_local(out), cid)
    if not os.path.isfile(os.path.join(root, CAMPAIGN_JSON)):
        return ""
    try:
        kept = sum(n.endswith(".json") for n in os.listdir(os.path.join(root, DONE)))
    except OSError:
        kept = 0
    return f"; {kept} of {tasks} shards had finished and are kept: resume with isrlab fuzz --resume {root}"


def write_campaign_json(out: str, cid: str, spec: CampaignSpec, options: dict) -> None:
    """``<out>/<cid>/campaign.json``: the spec and the options ``isrlab fuzz --resume`` runs the campaign on with."""
    from .model.trace import write_atomic

    if is_local_path(out):
        write_atomic(os.path.join(_local(out), cid, CAMPAIGN_JSON),
                     json.dumps({"campaign": cid, "spec": spec.to_json(), **options}, indent=1) + "\n")


def load_resumable(folder: str) -> dict:
    """The campaign.json of an interrupted campaign's ``folder``, checked: campaign, spec (a CampaignSpec), out,
    and the options; InputError naming the file and the field."""
    from .exits import InputError
    from .inputs import Maybe, parse_json, shape_problem
    from .model.config import ConfigError
    from .model.trace import TraceError, read_regular_file

    path = os.path.join(folder, CAMPAIGN_JSON)
    if os.path.isfile(os.path.join(folder, "summary.json")):
        raise InputError(f"{folder}: the campaign is complete (summary.json); isrlab report {folder} shows it")
    if not os.path.lexists(path):
        raise InputError(f"{folder}: no {CAMPAIGN_JSON}, so no campaign to resume (a campaign folder under --out)")
    try:
        data = parse_json(read_regular_file(path, 1 << 20), path)
    except TraceError as e:
        raise InputError(str(e)) from None
    spec_shape = {"presets": [str], "seed": int, "engine": str, "shards": int, "runs": Maybe(int),
                  "shard_budget_s": Maybe(float), "max_steps": Maybe(int), "extensions": int, "invariants": [str],
                  "swarm": bool, "stop_on_violation": bool, "keep_going": bool, "traces_per_invariant": int,
                  "machine_shrink_budget_s": float}
    problem = shape_problem(data, {"campaign": str, "spec": spec_shape, "master": str,
                                   "shrink_budget": Maybe(float), "shrink_candidates": int, "archive": Maybe(str)})
    if problem is not None:
        raise InputError(f"{path}: {problem}")
    spec = data["spec"]
    unknown = sorted(set(spec) - set(spec_shape))
    if unknown:
        raise InputError(f"{path}: spec: unknown field(s) {', '.join(unknown)}")
    # the limits isrlab fuzz's own options have
    limits = {"spec/shards": (spec["shards"], 1, 10_000), "spec/runs": (spec["runs"], 1, 10 ** 9),
              "spec/max_steps": (spec["max_steps"], 1, 1_000_000), "spec/extensions": (spec["extensions"], 1, 10 ** 8),
              "shrink_candidates": (data["shrink_candidates"], 1, 1000),
              "spec/shard_budget_s": (spec["shard_budget_s"], 1e-3, 7 * 24 * 3600),
              "shrink_budget": (data["shrink_budget"], 0, 7 * 24 * 3600)}
    for field, (value, low, high) in limits.items():
        if value is not None and not low <= value <= high:
            raise InputError(f"{path}: {field}: {value} is not within {low:g} to {high:,}")
    if data["campaign"] != os.path.basename(os.path.normpath(folder)):
        raise InputError(f"{path}: campaign {data['campaign']!r} is not this folder's name")
    try:
        data["spec"] = CampaignSpec.from_json(data["spec"])
    except (ValueError, ConfigError) as e:   # an unknown preset, engine or invariant
        raise InputError(f"{path}: spec: {e}") from None
    return data


@dataclass
class Moment:
    """What a phase's ETA is worked out from, as ``Progress`` sees it at one poll."""

    #: tasks finished, running now, and in the phase; the cluster's task slots; seconds since the phase began
    done: int
    running: int
    total: int
    slots: int
    elapsed: float
    #: seconds each running task has been running, oldest first
    running_for: list
    #: runs done so far (notes of the tasks, running or finished) and runs the phase has to do (None: a budget's)
    runs: int = 0
    runs_total: int | None = None


def budget_eta(m: Moment, budget_s: float) -> float | None:
    """Seconds left when every task runs ``budget_s``: the running tasks' rest of it, then the waiting tasks, each
    on the slot that frees first.  None when it cannot be known: every task left is past its budget (the run it is
    in ends at its next budget check, or a task's start-up took the time)."""
    import heapq

    free = sorted(max(0.0, budget_s - e) for e in m.running_for[:m.slots])
    waiting = max(0, m.total - m.done - len(free))
    free += [0.0] * (max(1, m.slots) - len(free))
    heapq.heapify(free)
    for _ in range(waiting):
        heapq.heappush(free, heapq.heappop(free) + budget_s)
    left = max(free)
    return left if left > 0 else None


def rate_eta(m: Moment) -> float | None:
    """Seconds left at the rate so far: of runs when the phase counts them, else of tasks; None before any is done."""
    if m.runs_total is not None and m.runs:
        return m.elapsed * (m.runs_total - m.runs) / m.runs
    return m.elapsed * (m.total - m.done) / m.done if m.done else None


#: the input each task of the runs table's write reads at most (spark.sql.files.maxPartitionBytes): about 100,000
#: runs' JSON lines, which that task sorts by preset in memory
TABLE_SLICE = "32m"
#: seconds between a running shard's progress notes (``NoteWriter``): a note costs about 0.1 ms
NOTE_EVERY_S = 1.0
#: beside each shard's kept record in ``_shards_done``: its runs, one JSON line each, and its progress note
RUNS_SUFFIX, NOTE_SUFFIX = ".runs", ".progress"


class NoteWriter:
    """Executor side: a running shard's progress note (runs, steps, violating runs, seconds), replaced whole every
    ``NOTE_EVERY_S`` seconds and once more when the shard ends.  The driver reads the notes from the campaign's own
    folder, so the channel needs nothing the kept records do not already need (a local or shared ``--out``) and
    opens no port; without it the counts move when tasks end."""

    def __init__(self, path: str, attempt: int, clock=time.monotonic):
        self.path, self.attempt, self.clock = path, attempt, clock
        self.t0 = self.last = clock()
        self.runs = self.steps = self.violating = 0

    def add(self, run: dict) -> None:
        self.runs += 1
        self.steps += run["steps"]
        self.violating += bool(run["violations"])
        if self.clock() - self.last >= NOTE_EVERY_S:
            self.write(False)

    def write(self, ended: bool) -> None:
        self.last = self.clock()
        note = {"runs": self.runs, "steps": self.steps, "violating": self.violating, "seconds": self.last - self.t0,
                "attempt": self.attempt, "ended": ended}
        tmp = f"{os.path.dirname(self.path)}/.note-{os.getpid()}-{self.attempt}"   # hidden: never a table's input
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(note))
            os.replace(tmp, self.path)   # no fsync: a note lost in a crash is only a progress figure
        except OSError:
            pass   # a full disk or a folder gone: the progress line goes without this note, the shard goes on


def read_notes(folder: str) -> dict:
    """{shard file name: note} of the progress notes in ``folder`` (a note being replaced, or unreadable, is left
    out until the next poll)."""
    notes = {}
    try:
        names = [n for n in os.listdir(folder) if n.endswith(NOTE_SUFFIX)]
    except OSError:
        return notes
    for name in names:
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                notes[name[:-len(NOTE_SUFFIX)]] = json.load(fh)
        except (OSError, ValueError):
            continue
    return notes


class Progress(threading.Thread):
    """Polls Spark's status tracker every half second (and, in the fuzz phase, the running shards' progress notes in
    ``notes``, else the fuzz ``counters`` that move as tasks end) and hands the figures to ``line`` (an
    ``isrlab.console.ProgressLine``: live on a terminal, plain lines otherwise): tasks done and running, failed
    attempts, runs, steps/s and violating runs so far, and an ETA from ``eta(Moment)``, or "ETA unknown" when it
    gives None while work remains."""

    def __init__(self, sc, line, counters=None, eta=None, every: float = 0.5, notes: str | None = None,
                 runs_total: int | None = None, tasks: bool = True):
        super().__init__(daemon=True)
        self.sc, self.line, self.counters, self.eta, self.every = sc, line, counters, eta, every
        self.tasks = tasks   # False: a phase of several Spark jobs, whose task counts mean nothing; the time only
        self.notes, self.runs_total = notes, runs_total
        if eta is not None:
            line.estimated = True   # eta's None means "unknown", not "use the rate of tasks"
        self.stopped = threading.Event()
        self.t0 = time.monotonic()
        self.seen_running: list[float] = []   # when the tracker first counted each running task, oldest first
        self.last_done = 0

    def run(self) -> None:
        try:
            self._poll()
        except Exception:  # noqa: BLE001 - the JVM went away (Ctrl-C, a lost driver): the main thread says so
            pass

    def _poll(self) -> None:
        tracker = self.sc.statusTracker()
        while not self.stopped.wait(self.every):
            done = running = failed = 0
            for sid in tracker.getActiveStageIds():
                info = tracker.getStageInfo(sid)
                if info is not None:
                    done += info.numCompletedTasks
                    running += info.numActiveTasks
                    failed += info.numFailedTasks
            self.show(done, running, failed)

    def _running_for(self, done: int, running: int, now: float) -> list:
        """Seconds each running task has run, oldest first, from when the tracker first counted it (within a poll
        of its start; the driver's own clock, so no skew with a worker's, and no wait for a note: a guided run
        may take a whole budget before its shard notes anything more)."""
        ended = max(0, done - self.last_done)
        self.last_done = done
        del self.seen_running[:ended]   # tasks end about in the order they start
        self.seen_running = self.seen_running[:running] + [now] * max(0, running - len(self.seen_running))
        return [now - t for t in self.seen_running]

    def show(self, done: int, running: int, failed: int, force: bool = False) -> None:
        now = time.monotonic()
        elapsed = now - self.t0
        figures = {"running": running or None, "failed attempts": failed or None}
        notes = read_notes(self.notes) if self.notes is not None else {}
        runs = 0
        if notes:   # while the shards run; a retried shard's note starts again from its first run
            runs = sum(n["runs"] for n in notes.values())
            steps, bad = (sum(n[k] for n in notes.values()) for k in ("steps", "violating"))
        elif self.counters is not None:   # counted as tasks finish (a retried task may count twice)
            runs, steps, bad = (a.value for a in self.counters)
        if notes or self.counters is not None:
            figures.update({"runs": runs if self.runs_total is None else (runs, self.runs_total),
                            "steps/s": steps / elapsed if elapsed else 0, "violating runs": bad})
        total = self.line.total or 0
        eta = None
        if self.eta and not force:
            eta = self.eta(Moment(done, running, total, max(1, self.sc.defaultParallelism), elapsed,
                                  self._running_for(done, running, now), runs, self.runs_total))
        if not self.tasks:
            done, figures = None, {}
        self.line.update(done, eta_s=eta, force=force, **figures)

    def stop(self) -> None:
        self.stopped.set()
        self.join()
        self.line.close()

    def finish(self, total: int) -> None:
        """Stop, with a last line for the finished phase (every task done, the counters' final figures)."""
        self.stopped.set()
        self.join()
        self.line.close()
        self.line.live = None
        self.show(total, 0, 0, force=True)


def counted_shard_row(counters, task: tuple) -> tuple:
    """shard_row, adding the shard's runs, steps and violating runs to the driver's progress counters."""
    row = shard_row(task)
    names = _schemas()[1].names
    for acc, field_name in zip(counters, ("runs_done", "steps", "violating_runs")):
        acc.add(row[names.index(field_name)])
    return row


#: the folder of a campaign where each finished shard's record is kept, one file each, written atomically as the
#: shard ends: what ``isrlab fuzz --resume`` picks up after a killed driver, a lost cluster or Ctrl-C
DONE = "_shards_done"
#: the campaign's own options, written as it starts, for ``isrlab fuzz --resume``
CAMPAIGN_JSON = "campaign.json"


def done_name(preset: str, shard: int) -> str:
    """The file a finished shard's record is kept in: ``000003-kafka-2.4.json`` (never hidden, as Spark skips
    names that start with "." or "_")."""
    return f"{shard:06d}-{preset}.json"


def kept_shard(counters, done_dir: str, task: tuple) -> int:
    """Executor side: run a task's shard, streaming its runs (one JSON line each, never all in memory) to
    ``<name>.runs`` and then its record without them to ``<name>.json`` in ``done_dir``: each written whole under
    a temporary name and renamed, the record last, so a record on disk means its runs are there too, and a
    retried attempt replaces both whole.  Notes its progress as it goes (``NoteWriter``); adds to the driver's
    counters; 1."""
    from pyspark import TaskContext

    from .campaign import shard_runs
    from .model.trace import write_atomic

    run_schema, shard_schema = _schemas()
    ctx = TaskContext.get()
    attempt = ctx.attemptNumber() if ctx is not None else 0
    hold_for_test(task[0], task[1], attempt)
    register_env()
    name = done_name(task[0], task[1])
    stem = os.path.join(done_dir, name[:-len(".json")])
    os.makedirs(done_dir, exist_ok=True)   # a worker's own disk, when --out is no shared storage
    note = NoteWriter(stem + NOTE_SUFFIX, attempt)
    note.write(False)   # running, with no run done yet
    tag = {"preset": task[0], "shard": task[1], "engine": json.loads(task[2])["engine"]}
    tmp = os.path.join(done_dir, f".{name}-{os.getpid()}-{attempt}.tmp")   # hidden, and no table's suffix
    runs = shard_runs(task)
    with open(tmp, "w", encoding="utf-8") as fh:
        while True:
            try:
                run = next(runs)
            except StopIteration as end:
                rec = end.value
                break
            fh.write(json.dumps({**tag, **{f: run[f] for f in run_schema.names}}, separators=(",", ":")) + "\n")
            note.add(run)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, stem + RUNS_SUFFIX)
    rec["attempt"] = attempt
    write_atomic(os.path.join(done_dir, name),
                 json.dumps({f: rec[f] for f in shard_schema.names if f != "runs"}, separators=(",", ":")) + "\n")
    note.write(True)
    for acc, value in zip(counters, (rec["runs_done"], rec["steps"], rec["violating_runs"])):
        acc.add(value)
    return 1


def shards_done(done_dir: str, tasks: list) -> set:
    """The (preset, shard) of the tasks whose record ``done_dir`` holds."""
    try:
        names = set(os.listdir(done_dir))
    except OSError:
        return set()
    return {(t[0], t[1]) for t in tasks if done_name(t[0], t[1]) in names}


# --------------------------------------------------------------------------- schemas and rows
@functools.cache
def _schemas():
    """(run schema, shard schema): the tables' columns, and the order shard_row lays its tuples out in."""
    from pyspark.sql import types as T

    run = T.StructType([
        T.StructField("run_index", T.IntegerType(), False),
        T.StructField("seed", T.LongType(), False),
        T.StructField("steps", T.IntegerType(), False),
        T.StructField("kind_counts", T.MapType(T.StringType(), T.IntegerType()), False),
        T.StructField("error_codes", T.ArrayType(T.StringType()), False),
        T.StructField("witnesses", T.ArrayType(T.StringType()), False),
        T.StructField("violation", T.StringType(), True),
        T.StructField("violations", T.ArrayType(T.StructType([
            T.StructField("invariant", T.StringType(), False),
            T.StructField("step", T.IntegerType(), False),
            T.StructField("facts", T.StringType(), False),
            T.StructField("trace", T.StringType(), True),
            T.StructField("scope", T.StringType(), True),   # the scopes engine: the scope's bounds, JSON
        ])), False),
    ])
    shard = T.StructType([
        T.StructField("preset", T.StringType(), False),
        T.StructField("shard", T.IntegerType(), False),
        T.StructField("engine", T.StringType(), False),
        T.StructField("executor", T.StringType(), False),
        T.StructField("runs_done", T.IntegerType(), False),
        T.StructField("steps", T.LongType(), False),
        T.StructField("violating_runs", T.IntegerType(), False),
        T.StructField("seconds", T.DoubleType(), False),
        T.StructField("started_unix", T.DoubleType(), False),
        T.StructField("ended_unix", T.DoubleType(), False),
        T.StructField("steps_per_second", T.DoubleType(), False),
        T.StructField("action_kinds", T.IntegerType(), False),
        T.StructField("error_codes", T.IntegerType(), False),
        T.StructField("invariants", T.ArrayType(T.StringType()), False),
        T.StructField("attempt", T.IntegerType(), False),
        T.StructField("runs", T.ArrayType(run), False),
    ])
    return run, shard


def run_line_schema():
    """A kept shard's ``.runs`` lines: preset, shard and engine, then the run's own columns."""
    from pyspark.sql import types as T

    run, _ = _schemas()
    return T.StructType([T.StructField("preset", T.StringType(), False), T.StructField("shard", T.IntegerType(), False),
                         T.StructField("engine", T.StringType(), False), *run.fields])


def shard_record_schema():
    """A kept shard's record (``<name>.json``): the shard schema without its runs."""
    from pyspark.sql import types as T

    return T.StructType([f for f in _schemas()[1].fields if f.name != "runs"])


def shard_row(task: tuple) -> tuple:
    """Executor side: run a task's shard and return it as a row tuple in the shard schema's order.

    ``attempt`` is Spark's attempt number of the task (0 unless Spark reran it, e.g. after losing
    an executor): the records themselves do not depend on it.
    """
    from pyspark import TaskContext

    run_schema, shard_schema = _schemas()
    violation_fields = run_schema["violations"].dataType.elementType.names
    ctx = TaskContext.get()
    attempt = ctx.attemptNumber() if ctx is not None else 0
    hold_for_test(task[0], task[1], attempt)
    register_env()
    rec = run_shard(task)
    rec["attempt"] = attempt
    for r in rec["runs"]:
        r["violations"] = [tuple(v[f] for f in violation_fields) for v in r["violations"]]
    rec["runs"] = [tuple(r[f] for f in run_schema.names) for r in rec["runs"]]
    return tuple(rec[f] for f in shard_schema.names)


def _scope_config(preset_name: str, scope_text: str | None):
    """The configuration a violation record's trace was met in (its ``scope`` column: a scope's bounds as JSON)."""
    return scope_config(preset_name, None if scope_text is None else json.loads(scope_text))


def shrink_candidate(cand: tuple) -> dict:
    """Executor side: shrink one violating run's trace; plain data back (actions as JSON)."""
    from .archive import trace_digest
    from .model.actions import action_from_json, action_to_json
    from .model.config import preset as get_preset
    from .properties.attribution import shrink_attributed

    preset_name, invariant, seed, trace_text, scope, budget = cand
    register_env()
    p = get_preset(preset_name)
    cfg = _scope_config(preset_name, scope)
    actions = [action_from_json(a) for a in json.loads(trace_text)]
    sr, a = shrink_attributed(cfg, actions, invariant, expected=p.bugs, time_budget_s=budget)
    return {"preset": preset_name, "invariant": invariant, "seed": seed, "scope": scope, "original_length": len(actions),
            "actions": json.dumps([action_to_json(a) for a in sr.actions]), "seconds": round(sr.seconds, 3),
            "complete": not sr.stopped_early, "digest": trace_digest(cfg, sr.actions),
            "attribution": json.dumps(a.to_json())}


def attribute_candidate(cand: tuple) -> tuple:
    """Executor side: the bugs a violating run's (unshrunk) trace is attributed to, as a sorted tuple of ids."""
    from .model.actions import action_from_json
    from .model.config import preset as get_preset
    from .properties.attribution import attribute

    preset_name, invariant, seed, trace_text, scope = cand
    register_env()
    p = get_preset(preset_name)
    cfg = _scope_config(preset_name, scope)
    a = attribute(cfg, [action_from_json(x) for x in json.loads(trace_text)], invariant, expected=p.bugs)
    return (preset_name, invariant, seed, trace_text, scope, ",".join(sorted(a.bugs)))


# --------------------------------------------------------------------------- storage helpers
def is_local_path(path: str) -> bool:
    scheme = urlparse(path).scheme
    return scheme in ("", "file")


def _local(path: str) -> str:
    return urlparse(path).path if path.startswith("file:") else path


def remove_tree(spark, path: str) -> None:
    """Delete a folder of Parquet output, on the local disk or through Hadoop's FileSystem for URIs."""
    if is_local_path(path):
        shutil.rmtree(_local(path), ignore_errors=True)
        return
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).delete(p, True)


def _join(base: str, *parts: str) -> str:
    return "/".join([base.rstrip("/"), *parts]) if not is_local_path(base) else os.path.join(base, *parts)


# --------------------------------------------------------------------------- the campaign
@dataclass
class CampaignResult:
    """What a campaign found: the summary (also written as summary.json) and the distinct counterexamples."""

    summary: dict
    counterexamples: list = field(default_factory=list)


def run_campaign(spark, spec: CampaignSpec, out: str, archive: str, shrink_candidates: int = 1,
                 shrink_budget_s: float | None = 20.0, log=print, line=None, cid: str | None = None) -> CampaignResult:
    """Run ``spec`` on ``spark``'s cluster; write the tables under ``out``; archive counterexamples in ``archive``.

    ``log`` takes a phase's opening line; ``line(label, total, unit)`` makes a phase's progress line
    (``isrlab.console.ProgressLine`` by default)."""
    if line is None:
        from .console import ProgressLine

        def line(label, total, unit):
            return ProgressLine(label, total, unit)

    from pyspark.sql import functions as F

    from .archive import archive_counterexample, counterexample
    from .model.actions import ACTION_KINDS, action_from_json
    from .properties.attribution import Attribution, classify, preset_result
    from .model.config import preset as get_preset
    from .model.errors import ALL_ERRORS

    sc = spark.sparkContext
    if cid is None:   # the caller's, when it made the folder itself; else made here, never another campaign's
        from .campaign import new_campaign_folder

        cid = new_campaign_folder(_local(out), spec)[0] if is_local_path(out) else spec.campaign_id()
    root = _join(out, cid)
    raw_path, runs_path, shards_path = _join(root, "_shards_raw"), _join(root, "runs"), _join(root, "shards")
    tasks = spec.tasks()
    _run_schema, shard_schema = _schemas()
    timings = {}

    # -- fuzz: one task per (preset, shard), each attempt's rows replace a lost attempt's
    t = time.monotonic()
    sc.setJobDescription(f"isrlab campaign {cid}: fuzz {len(tasks)} shards")
    counters = tuple(sc.accumulator(0) for _ in range(3))
    slots = max(1, sc.defaultParallelism)

    def fuzz_eta(m: Moment):
        """Under --runs, the rate of runs so far; under a budget, what is left of the tasks' budgets."""
        return rate_eta(m) if spec.shard_budget_s is None else budget_eta(m, spec.shard_budget_s)

    keep = is_local_path(out)   # each finished shard kept as it ends (executors write it: local or shared storage)
    done_dir = os.path.join(_local(root), DONE)
    done = shards_done(done_dir, tasks) if keep else set()
    todo = [t_ for t_ in tasks if (t_[0], t_[1]) not in done]
    if done:
        log(f"campaign {cid}: resuming: {len(done)} of {len(tasks)} shards were done and are kept; "
            f"running the other {len(todo)}")
    if keep:
        os.makedirs(done_dir, exist_ok=True)
        for name in os.listdir(done_dir):   # an interrupted campaign's notes: the line counts this run's shards
            if name.endswith(NOTE_SUFFIX):
                os.unlink(os.path.join(done_dir, name))
    runs_total = None if spec.runs is None else sum(spec.runs_for(t_[1]) for t_ in todo)
    progress = Progress(sc, line(f"campaign {cid}: fuzz", len(todo), "tasks"), counters, fuzz_eta,
                        notes=done_dir if keep else None, runs_total=runs_total)
    progress.start()
    try:
        if keep:
            if todo:
                sc.parallelize(todo, len(todo)).map(functools.partial(kept_shard, counters, done_dir)).count()
        else:
            rows = sc.parallelize(tasks, len(tasks)).map(functools.partial(counted_shard_row, counters))
            raw_df = spark.createDataFrame(rows, shard_schema).withColumn("campaign", F.lit(cid))
            raw_df.write.mode("overwrite").parquet(raw_path)
        progress.finish(len(todo))
    finally:
        progress.stop()
    timings["fuzz_s"] = time.monotonic() - t

    # -- the two tables
    log(f"campaign {cid}: fuzz done in {timings['fuzz_s']:.0f} s; writing the runs and shards tables")
    t = time.monotonic()
    sc.setJobDescription(f"isrlab campaign {cid}: tables")
    progress = Progress(sc, line(f"campaign {cid}: writing the tables", None, ""), tasks=False)
    progress.start()
    try:
        run_columns = [c for c in run_line_schema().names if c not in ("preset", "shard", "engine")]
        if keep:   # every shard's runs and record, each from the one attempt that renamed its files last
            run_rows = (spark.read.schema(run_line_schema()).option("mode", "FAILFAST")
                        .json(os.path.join(done_dir, "*" + RUNS_SUFFIX)).withColumn("campaign", F.lit(cid)))
            shard_rows = (spark.read.schema(shard_record_schema()).option("mode", "FAILFAST")
                          .json(os.path.join(done_dir, "*.json")).withColumn("campaign", F.lit(cid)))
        else:
            raw = spark.read.parquet(raw_path)
            run_rows = (raw.select("campaign", "preset", "shard", "engine", F.explode("runs").alias("r"))
                        .select("campaign", "preset", "shard", "engine", "r.*"))
            shard_rows = raw.drop("runs")
        # no shuffle: each task writes the runs of its own slice of the input (the sort by preset that a partitioned
        # write makes holds one slice, TABLE_SLICE), so a million runs never meet in one task's memory
        slice_conf = spark.conf.get("spark.sql.files.maxPartitionBytes")
        spark.conf.set("spark.sql.files.maxPartitionBytes", TABLE_SLICE)
        try:
            (run_rows.select("campaign", "preset", "shard", "engine", *run_columns)
                .write.mode("overwrite").partitionBy("preset").parquet(runs_path))
        finally:
            spark.conf.set("spark.sql.files.maxPartitionBytes", slice_conf)
        shard_rows.coalesce(1).write.mode("overwrite").parquet(shards_path)
        if not keep:
            remove_tree(spark, raw_path)
    finally:
        progress.stop()
    timings["tables_s"] = time.monotonic() - t

    # -- aggregations, in Spark
    log(f"campaign {cid}: aggregating the tables")
    t = time.monotonic()
    sc.setJobDescription(f"isrlab campaign {cid}: aggregations")
    progress = Progress(sc, line(f"campaign {cid}: aggregating", None, ""), tasks=False)
    progress.start()
    try:
        runs = spark.read.parquet(runs_path)
        shards = spark.read.parquet(shards_path)
        per_preset = {r["preset"]: r.asDict() for r in runs.groupBy("preset").agg(
            F.count("*").alias("runs"), F.sum("steps").alias("steps"),
            F.count("violation").alias("violating_runs")).collect()}
        # a campaign begun before the scopes engine has no scope column: its violations are all the presets' own
        scope = (F.col("v.scope") if "scope" in runs.schema["violations"].dataType.elementType.names
                 else F.lit(None).cast("string").alias("scope"))
        violations_df = (runs.select("preset", "seed", F.explode("violations").alias("v"))
                         .select("preset", "seed", "v.invariant", "v.step", "v.trace", scope))
        violations = [r.asDict() for r in violations_df.groupBy("preset", "invariant").agg(
            F.count("*").alias("runs"), F.min("step").alias("shortest_step"),
            F.min_by("seed", "step").alias("example_seed")).orderBy("preset", "invariant").collect()]
        kinds = runs.select("preset", F.explode("kind_counts").alias("kind", "count"))
        kind_rows = kinds.groupBy("preset", "kind").agg(F.sum("count").alias("count")).collect()
        error_rows = runs.select("preset", F.explode("error_codes").alias("error")).distinct().collect()
        executors = [r.asDict() for r in shards.groupBy("executor").agg(
            F.count("*").alias("tasks"), F.sum("runs_done").alias("runs"), F.sum("steps").alias("steps"),
            F.sum("seconds").alias("seconds")).orderBy("executor").collect()]
        span = shards.agg(F.min("started_unix").alias("a"), F.max("ended_unix").alias("b")).first()
        timings["shards_span_s"] = (span["b"] - span["a"]) if span["a"] is not None else 0.0
    finally:
        progress.stop()
    timings["aggregate_s"] = time.monotonic() - t

    # -- attribute every kept violating trace on the cluster (a replay per known bug: milliseconds), then shrink the
    # shortest of each (preset, invariant, attribution): a known bug's many runs never hide another bug's one
    t = time.monotonic()
    kept = (violations_df.where(F.col("trace").isNotNull()).select("preset", "invariant", "seed", "trace", "scope")
            .orderBy("preset", "invariant", "seed").collect())
    cands = []
    if kept:
        sc.setJobDescription(f"isrlab campaign {cid}: attribute {len(kept)} violating runs")
        log(f"campaign {cid}: attributing {len(kept)} violating runs to known bugs by their fixes")
        attributed = sc.parallelize([tuple(r) for r in kept], min(len(kept), slots * 4)).map(
            attribute_candidate).collect()
        groups: dict[tuple, list] = {}
        for preset_name, invariant, seed, trace_text, scope, bugs in attributed:
            groups.setdefault((preset_name, invariant, bugs), []).append((len(trace_text), seed, trace_text,
                                                                          scope or ""))
        for (preset_name, invariant, _), rows_ in sorted(groups.items()):
            for _, seed, trace_text, scope in sorted(rows_)[:shrink_candidates]:
                cands.append({"preset": preset_name, "invariant": invariant, "seed": seed, "trace": trace_text,
                              "scope": scope or None})
    timings["attribute_s"] = time.monotonic() - t

    # -- shrink the candidates on the cluster, deduplicate, explain and archive on the driver
    t = time.monotonic()
    shrunk = []
    if cands:
        sc.setJobDescription(f"isrlab campaign {cid}: shrink {len(cands)} counterexamples")
        work = [(c["preset"], c["invariant"], c["seed"], c["trace"], c["scope"], shrink_budget_s) for c in cands]
        log(f"campaign {cid}: shrinking {len(work)} counterexamples"
            + (f" (at most {shrink_budget_s:g} s each)" if shrink_budget_s is not None else ""))

        def shrink_eta(m: Moment):
            """The rate so far, bounded by the budget's worst case (most shrinks end well before it)."""
            rate = rate_eta(m)
            bound = None if shrink_budget_s is None else budget_eta(m, shrink_budget_s)
            return min(x for x in (rate, bound) if x is not None) if rate is not None or bound is not None else None

        progress = Progress(sc, line(f"campaign {cid}: shrink", len(work), "counterexamples"), None, shrink_eta)
        progress.start()
        try:
            shrunk = sc.parallelize(work, len(work)).map(shrink_candidate).collect()
            progress.finish(len(work))
        finally:
            progress.stop()
    if shrunk:
        log(f"campaign {cid}: explaining and archiving the shrunk counterexamples")
    distinct: dict[tuple, dict] = {}
    for s in sorted(shrunk, key=lambda x: (x["preset"], x["invariant"], len(json.loads(x["actions"])), x["seed"])):
        distinct.setdefault((s["preset"], s["invariant"], s["digest"]), s)
    found = []
    attributions: dict[str, list] = {}
    for s in distinct.values():
        scope = None if s["scope"] is None else json.loads(s["scope"])
        cfg = scope_config(s["preset"], scope)
        actions = [action_from_json(a) for a in json.loads(s["actions"])]
        provenance = {"engine": spec.engine, "campaign": cid, "campaign_seed": spec.seed, "run_seed": s["seed"],
                      "max_steps": spec.steps, "extensions": spec.extensions if spec.engine == "guided" else None,
                      "swarm": None if spec.engine == "scopes" else spec.swarm,
                      **({} if scope is None else {"scope": scope})}
        try:
            cx = counterexample(s["preset"], cfg, actions, s["invariant"], provenance, s["original_length"],
                                s["seconds"], s["complete"])
        except ValueError as e:   # a shrunk trace that does not replay to its violation: said, and left out
            log(f"campaign {cid}: {s['preset']} {s['invariant']} (run seed {s['seed']}) not archived: {e} "
                f"(a bug in isrlab's shrinking; please report it)")
            continue
        attribution = Attribution.from_json(json.loads(s["attribution"]))
        cx.trace.attribution = attribution.to_json()
        attributions.setdefault(s["preset"], []).append(attribution)
        path, written = archive_counterexample(archive, s["preset"], cx.trace)
        kind, credited = classify(get_preset(s["preset"]), attribution)
        found.append({"preset": s["preset"], "invariant": s["invariant"], "run_seed": s["seed"],
                      "attribution": attribution.to_json(), "attributed": attribution.summary(), "kind": kind,
                      "bugs": list(credited),
                      "original_length": s["original_length"], "shrunk_length": cx.shrunk_length,
                      "shrink_seconds": s["seconds"], "digest": cx.digest, "file": path, "newly_archived": written,
                      "explanation": cx.trace.explanation, "scope": scope})
    timings["shrink_s"] = time.monotonic() - t

    # -- the summary
    presets = []
    for name in spec.presets:
        p = get_preset(name)
        row = per_preset.get(name, {"runs": 0, "steps": 0, "violating_runs": 0})
        broken = sorted({v["invariant"] for v in violations if v["preset"] == name})
        kinds_here = sorted({r["kind"] for r in kind_rows if r["preset"] == name})
        errors_here = sorted({r["error"] for r in error_rows if r["preset"] == name})
        result = preset_result(p, attributions.get(name, []))
        presets.append({"preset": name, "expected": p.expected, "expected_bugs": list(p.bugs), "runs": row["runs"],
                        "steps": int(row["steps"] or 0), "violating_runs": row["violating_runs"], "violated": broken,
                        "verdict": result["verdict"], "found": result["found"], "not_found": result["not_found"],
                        "unexpected": result["unexpected"], "known": result["known"],
                        "action_kinds": kinds_here, "error_codes": errors_here})
    total_steps = sum(p["steps"] for p in presets)
    for e in executors:
        e["steps_per_second"] = round(e["steps"] / e["seconds"], 1) if e["seconds"] else None
    summary = {
        "campaign": cid, "spec": spec.to_json(), "master": sc.master, "spark_version": spark.version,
        "default_parallelism": sc.defaultParallelism, "tasks": len(tasks), "output": root,
        "runs": sum(p["runs"] for p in presets), "steps": total_steps,
        "steps_per_second": round(total_steps / timings["fuzz_s"], 1) if timings["fuzz_s"] else None,
        "steps_per_second_in_shards": (round(total_steps / timings["shards_span_s"], 1)
                                       if timings["shards_span_s"] else None),
        "seconds": {k: round(v, 3) for k, v in timings.items()},
        "presets": presets, "violations": violations, "executors": executors,
        "action_kinds_covered": sorted({r["kind"] for r in kind_rows}), "action_kinds_total": len(ACTION_KINDS),
        "error_codes_covered": sorted({r["error"] for r in error_rows}), "error_codes_total": len(ALL_ERRORS),
        "counterexamples": found,
        # "as expected" only when every expected bug was found (attributed by its fix) and nothing was unexpected
        "as_expected": all(p["verdict"] == "as expected" for p in presets),
        "unexpected": any(p["verdict"] == "UNEXPECTED" for p in presets),
        "every_bug_found": all(not p["not_found"] for p in presets),
    }
    if is_local_path(root):
        from .model.trace import write_atomic

        write_atomic(os.path.join(_local(root), "summary.json"), json.dumps(summary, indent=1) + "\n")
        shutil.rmtree(done_dir, ignore_errors=True)   # the tables hold every record now; the campaign is whole
    return CampaignResult(summary, found)


def summary_lines(summary: dict) -> list[str]:
    """The printed summary: one line per preset, then violations, executors and counterexamples."""
    n_kinds, n_err = summary["action_kinds_total"], summary["error_codes_total"]
    out = [f"campaign {summary['campaign']} on {summary['master']} ({summary['tasks']} tasks): "
           f"{summary['runs']} runs, {summary['steps']} steps; {summary['steps_per_second_in_shards']} steps/s while "
           f"the shards ran ({summary['steps_per_second']} over the whole fuzz job); "
           f"results in {summary['output']}",
           f"{'preset':<22} {'expected':<20} {'runs':>7} {'steps':>10} {'viol.runs':>9} {'kinds':>6} "
           f"{'errors':>6}  verdict"]
    for p in summary["presets"]:
        verdict = p["verdict"] + (f" ({', '.join(p['violated'])})" if p["violated"] else "")
        out.append(f"{p['preset']:<22} {p['expected']:<20} {p['runs']:>7} {p['steps']:>10} {p['violating_runs']:>9} "
                   f"{len(p['action_kinds']):>3}/{n_kinds:<2} {len(p['error_codes']):>3}/{n_err:<2}  {verdict}")
    if summary["violations"]:
        out.append(f"{'violations: preset':<22} {'invariant':<26} {'runs':>6} {'shortest':>8}  example seed")
        for v in summary["violations"]:
            out.append(f"{v['preset']:<22} {v['invariant']:<26} {v['runs']:>6} {v['shortest_step']:>8}  "
                       f"{v['example_seed']}")
    out.append(f"{'executor':<28} {'tasks':>5} {'runs':>7} {'steps':>10} {'steps/s':>9}")
    for e in summary["executors"]:
        out.append(f"{e['executor']:<28} {e['tasks']:>5} {e['runs']:>7} {e['steps']:>10} {e['steps_per_second']:>9}")
    for c in summary["counterexamples"]:
        verb = "archived as" if c["newly_archived"] else "already archived as"
        out.append(f"{c['preset']}: {c['invariant']} ({c['original_length']} steps shrunk to {c['shrunk_length']}) "
                   f"{verb} {c['file']}")
        out.append(f"  {c['explanation']}")
        out.append(f"  {c['kind']}: {c['attributed']}")
    out += verdict_lines(summary)
    return out


def verdict_lines(summary: dict) -> list[str]:
    """The campaign's verdict, last: per preset the bugs found, not found and the unexpected violations."""
    out = []
    for p in summary["presets"]:
        parts = []
        if p["found"]:
            parts.append(f"found {', '.join(p['found'])}")
        if p["not_found"]:
            parts.append(f"NOT FOUND {', '.join(p['not_found'])}")
        if p["known"]:
            parts.append(f"also met known {', '.join(p['known'])}")
        for u in p["unexpected"]:
            parts.append(f"UNEXPECTED {u['invariant']} (no known fix removes it)" if not u["bugs"] else
                         f"UNEXPECTED {u['invariant']} (removed by the fix of {', '.join(u['bugs'])}, which is not "
                         f"known to break it)")
        out.append(f"{p['preset']:<30} {p['verdict']:<12} {'; '.join(parts) or 'no bug expected, none met'}")
    unexpected = [p["preset"] for p in summary["presets"] if p["verdict"] == "UNEXPECTED"]
    missed = [p["preset"] for p in summary["presets"] if p["verdict"] == "not found"]
    if unexpected:
        out.append(f"UNEXPECTED violations (new findings, or wrong expectations) in: {', '.join(unexpected)}")
    if missed:
        out.append(f"expected bugs NOT FOUND within the budget in: {', '.join(missed)} (give them a longer --budget)")
    if not unexpected and not missed:
        out.append("as expected: every expected bug found, attributed by its fix, and nothing unexpected")
    return out


def default_ship_dir() -> str:
    """A fresh temporary folder for the code zip of one campaign."""
    return tempfile.mkdtemp(prefix="isrlab-ship-")
