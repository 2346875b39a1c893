"""A Spark standalone cluster on this machine's loopback address, started from pyspark's own launcher.

For tests and benchmarks: one master and N workers, each a JVM started with
``$SPARK_HOME/bin/spark-class`` (``SPARK_HOME`` = the installed pyspark package),
every daemon listening on 127.0.0.1 only, on free ports picked at start.
Readiness is read from the master's ``/json/`` endpoint (the daemons' log lines
vanish when logging is quieted).  ``stop()`` stops exactly the processes this
object started, by their PIDs (a worker's executors exit with their worker).

    with StandaloneCluster(workers=2, work_dir=tmp) as cluster:
        subprocess.run(["isrlab", "fuzz", "--master", cluster.master_url, ...])
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request


def spark_home() -> str:
    """The installed pyspark package folder, which carries Spark's jars and launchers."""
    import pyspark

    return os.path.dirname(pyspark.__file__)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ClusterError(RuntimeError):
    """The cluster did not come up (its logs are named in the message)."""


class DaemonExited(ClusterError):
    """A daemon this cluster started exited while the cluster was coming up."""


#: Tries at starting the master, each on two newly picked ports.  A port free when picked can be taken
#: before the master binds it (another test's Spark UI, say); the master is told not to drift to the
#: next port (spark.port.maxRetries=0), since its URL and /json/ endpoint are read from the ports
#: picked here, so it exits instead and is started again.
MASTER_ATTEMPTS = 3


class StandaloneCluster:
    """One master and ``workers`` workers of ``cores`` cores and ``memory`` each, on 127.0.0.1."""

    def __init__(self, work_dir: str, workers: int = 2, cores: int = 1, memory: str = "1g",
                 start_timeout_s: float = 90.0):
        self.work_dir = os.path.abspath(work_dir)
        self.n_workers, self.cores, self.memory = workers, cores, memory
        self.start_timeout_s = start_timeout_s
        self.master: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self.port = self.ui_port = 0
        self._logs: list = []

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _env(self) -> dict:
        env = dict(os.environ)
        env.update(SPARK_HOME=spark_home(), SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1",
                   PYSPARK_PYTHON=env.get("PYSPARK_PYTHON", sys.executable))
        env.pop("SPARK_CONF_DIR", None)
        # no drifting to another port (see MASTER_ATTEMPTS), and no REST submission server (unused; it
        # would take the fixed port 6066)
        env["SPARK_MASTER_OPTS"] = (env.get("SPARK_MASTER_OPTS", "")
                                    + " -Dspark.port.maxRetries=0 -Dspark.master.rest.enabled=false").strip()
        return env

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(os.path.join(self.work_dir, f"{name}.log"), "wb")
        self._logs.append(log)
        launcher = os.path.join(spark_home(), "bin", "spark-class")
        return subprocess.Popen([launcher, *args], stdout=log, stderr=subprocess.STDOUT, env=self._env(),
                                cwd=self.work_dir, start_new_session=True)

    def start(self) -> "StandaloneCluster":
        """Start the master, then the workers, and wait for them; on any failure stop what was started."""
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> "StandaloneCluster":
        os.makedirs(self.work_dir, exist_ok=True)
        for attempt in range(MASTER_ATTEMPTS):
            self.port, self.ui_port = free_port(), free_port()
            self.master = self._spawn("master" if attempt == 0 else f"master-{attempt}", [
                "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(self.port),
                "--webui-port", str(self.ui_port)])
            try:
                self._wait(lambda st: st.get("status") == "ALIVE", "the master")
                break
            except DaemonExited:
                if attempt == MASTER_ATTEMPTS - 1:
                    raise
                self.stop()  # closes its log; the next try starts on two new ports
        for i in range(self.n_workers):
            wdir = os.path.join(self.work_dir, f"worker-{i}")
            os.makedirs(wdir, exist_ok=True)
            self.workers.append(self._spawn(f"worker-{i}", [
                "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", str(free_port()),
                "--webui-port", str(free_port()), "--cores", str(self.cores), "--memory", self.memory,
                "--work-dir", wdir, self.master_url]))
        self._wait(lambda st: st.get("aliveworkers", 0) >= self.n_workers, f"{self.n_workers} workers")
        return self

    def status(self) -> dict:
        """The master's /json/ status (status, aliveworkers, workers, activeapps...)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as r:
            return json.load(r)

    def _wait(self, ready, what: str) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            for p in [self.master, *self.workers]:
                if p is not None and p.poll() is not None:
                    raise DaemonExited(f"a Spark daemon exited (code {p.returncode}) while waiting for {what}; "
                                       f"logs in {self.work_dir}")
            try:
                if ready(self.status()):
                    return
            except (OSError, ValueError):  # not listening yet, or another server holds the port (not JSON)
                pass
            time.sleep(0.5)
        raise ClusterError(f"{what} not up within {self.start_timeout_s:.0f} s; logs in {self.work_dir}")

    def kill_worker(self, i: int) -> int:
        """SIGKILL worker ``i`` (a crash, not a shutdown); its PID.  Its executors exit when it is gone."""
        p = self.workers[i]
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        return p.pid

    def stop(self) -> None:
        """Stop the workers, then the master: SIGTERM, then SIGKILL after 15 s; only the PIDs started here."""
        for p in [*self.workers, self.master]:
            if p is not None and p.poll() is None:
                p.terminate()
        for p in [*self.workers, self.master]:
            if p is None:
                continue
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=15)
        for log in self._logs:
            log.close()
        self._logs = []

    def __enter__(self) -> "StandaloneCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
