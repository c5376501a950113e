"""``kubesched run`` logs as kube-scheduler does, and never takes kube-scheduler's pods by accident.

- a plugin that raises is one error line (``Error scheduling pod; retrying``, ``schedule_one.go``)
  with the pod, the plugin, the extension point and the traceback; the same error of the same pod
  again is counted, not logged (:class:`kubesched._logs.ErrorLog`); a simulation prints none of it;
- ``-v=N`` as klog's: the attempts from 3, httpx's request lines from 6, httpcore's from 8;
- without ``--config``, ``default-scheduler`` pods only with ``--take-over-default-scheduler``.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import anyio
import httpx
import pytest
from test_run_e2e import (
    DEFAULT_PROFILE,
    fake_apiserver,
    files,
    free_port,
    kubesched_run,
    wait_for,
    write,
)

from kubesched import ConfigError
from kubesched._logs import ErrorLog, PluginFailure
from kubesched.config._config import DEFAULT_SCHEDULER_NAME
from kubesched.runtime._status import Code, Status
from kubesched.scenario import load_config_file, load_manifests
from kubesched.service import RunOptions, configure_logging, run_scheduler
from kubesched.testing import make_pod
from kubesched.transports.apiserver import APIServer
from kubesched.transports.fake import FakeCluster

__all__ = ["files"]  # the fixture, shared with test_run_e2e

MODULE = "kubesched_boom_example"
PLUGIN = """\
from kubesched import hookimpl


class Boom:
    \"\"\"A Filter plugin that raises for pods labelled boom.\"\"\"

    name = "Boom"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def kubesched_filter(self, state, pod, nodes):
        if (pod.metadata.labels or {}).get("boom"):
            raise RuntimeError("kaboom")
"""
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: kubesched
    plugins:
      multiPoint:
        enabled: [{name: Boom}]
"""
CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}, capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: victim, namespace: default, labels: {boom: "yes"}}
spec:
  schedulerName: kubesched
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: bystander, namespace: default}
spec:
  schedulerName: kubesched
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""
ERROR_LINE = (
    'Error scheduling pod; retrying err="running \\"Boom\\" filter plugin: kaboom" pod="default/victim" '
    'plugin="Boom" extensionPoint="Filter"'
)


@pytest.fixture
def boom(tmp_path: Path) -> dict[str, Path]:
    """An installed distribution whose entry point ``Boom`` raises at Filter, the config enabling
    it, and the cluster (a pod it raises for, one it does not)."""
    site = tmp_path / "site"
    info = site / "boom_example-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: boom-example\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[kubesched]\nBoom = {MODULE}:Boom\n")
    (site / f"{MODULE}.py").write_text(PLUGIN)
    return {"site": site, "config": write(tmp_path, [CONFIG], "config.yaml"), "cluster": write(tmp_path, [CLUSTER])}


def _env(site: Path) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _metric(text: str, key: str) -> float:
    return next((float(line.split()[-1]) for line in text.splitlines() if line.startswith(key + " ")), 0.0)


async def _run_until_errors(boom: dict[str, Path], tmp_path: Path, verbosity: str, errors: int = 3) -> str:
    """``kubesched run -v=N`` on the fake API server until the raising pod has failed ``errors``
    times (the metric counts them); its stderr."""
    key = 'scheduler_schedule_attempts_total{profile="kubesched",result="error"}'
    port = free_port()
    log = tmp_path / f"stderr-{verbosity}.log"
    async with FakeCluster(epoch="2024-01-01T00:00:00Z") as cluster:
        for m in load_manifests([str(boom["cluster"])]):
            cluster.create(m.obj)
        async with APIServer(cluster) as server:
            with log.open("wb") as err:
                proc = await anyio.open_process(
                    [sys.executable, "-m", "kubesched.cli", "run", "--server", server.url, "--config",
                     str(boom["config"]), "--metrics-port", str(port), verbosity],
                    stdout=subprocess.DEVNULL, stderr=err, env=_env(boom["site"]),
                )  # fmt: skip
                try:
                    text = ""
                    async with httpx.AsyncClient() as client:
                        with anyio.fail_after(60):
                            while _metric(text, key) < errors:
                                await anyio.sleep(0.1)
                                with suppress(httpx.HTTPError):
                                    text = (await client.get(f"http://127.0.0.1:{port}/metrics")).text
                    proc.send_signal(signal.SIGTERM)
                    with anyio.fail_after(20):
                        assert await proc.wait() == 0, log.read_text()
                finally:
                    if proc.returncode is None:
                        proc.kill()
                        await proc.wait()
                    await proc.aclose()
            assert cluster.get_pod("default", "bystander").spec.node_name == "n1"  # type: ignore[union-attr]
    return log.read_text()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the subprocess has its own loop: once is enough
@pytest.mark.parametrize("verbosity", ["-v=0", "--v=5"])
async def test_a_raising_plugin_is_one_error_line_with_its_traceback(
    boom: dict[str, Path], tmp_path: Path, verbosity: str, anyio_backend: str
) -> None:
    """Three failed attempts of the same pod with the same error: one ERROR line naming the pod,
    the plugin and the extension point, then the plugin's traceback; the repeats are counted, not
    logged (they are within ErrorLog.repeat_every).  No httpcore line below -v=8 (nor httpx's
    request lines below 6); the attempts from -v=3."""
    text = await _run_until_errors(boom, tmp_path, verbosity)
    lines = text.splitlines()
    errors = [i for i, line in enumerate(lines) if "Error scheduling pod" in line]
    assert len(errors) == 1, text
    first = lines[errors[0]]
    assert " ERROR kubesched: " in first and first.endswith(ERROR_LINE), first
    trace = lines[errors[0] + 1 :]
    assert trace[0] == "Traceback (most recent call last):"
    assert f"{MODULE}.py" in text and "RuntimeError: kaboom" in trace
    assert "httpcore" not in text and "HTTP Request:" not in text
    attempts = [line for line in lines if 'Attempting to schedule pod pod="default/victim"' in line]
    assert bool(attempts) == (verbosity == "--v=5")
    assert all(" INFO kubesched: " in line for line in attempts)


def test_a_simulation_prints_no_error_line(boom: dict[str, Path]) -> None:
    """The same plugin in ``simulate``: the pod's FailedScheduling events, and nothing on stderr
    (only ``run`` configures logging)."""
    out = subprocess.run(
        [sys.executable, "-m", "kubesched.cli", "simulate", str(boom["cluster"]), "--config",
         str(boom["config"]), "--until", "60s", "--output", "json"],
        capture_output=True, text=True, timeout=120, env=_env(boom["site"]),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert '"running \\"Boom\\" filter plugin: kaboom"' in out.stdout
    assert "Error scheduling pod" not in out.stderr and "Traceback" not in out.stderr


# --- the rate limit ---------------------------------------------------------------------------


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def records() -> Iterator[tuple[logging.Logger, _Records]]:
    logger = logging.getLogger("kubesched.test-errorlog")
    handler = _Records()
    logger.addHandler(handler)
    logger.propagate = False
    yield logger, handler
    logger.removeHandler(handler)
    logger.propagate = True


def _raised(message: str = "kaboom") -> Status:
    try:
        raise RuntimeError(message)
    except RuntimeError as e:
        return Status(Code.ERROR, f'running "Boom" filter plugin: {e}', plugin="Boom", error=PluginFailure("Boom", "Filter", e))


def test_the_same_error_of_the_same_pod_is_counted_then_logged_again(
    records: tuple[logging.Logger, _Records],
) -> None:
    logger, handler = records
    now = [0.0]
    errors = ErrorLog(logger, now=lambda: now[0])
    pod, other = make_pod("victim").obj(), make_pod("other").obj()
    for t in (0.0, 1.0, 3.0, 7.0):
        now[0] = t
        errors.failed(pod, _raised())
    assert [r.getMessage() for r in handler.records] == [
        'Error scheduling pod; retrying err="running \\"Boom\\" filter plugin: kaboom" pod="default/victim" '
        'plugin="Boom" extensionPoint="Filter"'
    ]
    assert handler.records[0].levelno == logging.ERROR and handler.records[0].exc_info is not None
    errors.failed(other, _raised())  # another pod: its own first line
    errors.failed(pod, _raised("other error"))  # another error: its own first line
    assert len(handler.records) == 3
    now[0] = 7.0 + errors.repeat_every
    errors.failed(pod, _raised())
    assert handler.records[-1].getMessage().endswith('extensionPoint="Filter" suppressed=3')
    assert handler.records[-1].exc_info is None


def test_lines_beyond_the_bucket_are_dropped_and_counted(records: tuple[logging.Logger, _Records]) -> None:
    logger, handler = records
    now = [0.0]
    errors = ErrorLog(logger, now=lambda: now[0])
    for i in range(errors.burst + 5):
        errors.failed(make_pod(f"p{i}").obj(), _raised())
    assert len(handler.records) == errors.burst
    now[0] = 1.0  # one token back
    errors.failed(make_pod("late").obj(), _raised())
    assert handler.records[-1].getMessage().endswith(' dropped=5')


def test_no_handler_no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """A logger nobody listens to (a simulation): the error is not even keyed."""
    logger = logging.getLogger("kubesched.test-errorlog-silent")
    logger.propagate = False
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    errors = ErrorLog(logger, now=lambda: pytest.fail("the clock was read"))
    errors.failed(make_pod("p").obj(), _raised())
    logger.propagate = True


# --- -v=N ------------------------------------------------------------------------------------------


@pytest.fixture
def restore_levels() -> Iterator[None]:
    names = ["", "httpx", "httpcore"]
    saved = {n: logging.getLogger(n).level for n in names}
    yield
    for n, level in saved.items():
        logging.getLogger(n).setLevel(level)


@pytest.mark.parametrize(
    ("verbosity", "log_level", "levels"),
    [
        pytest.param(0, None, (logging.INFO, logging.WARNING, logging.WARNING), id="default: info"),
        pytest.param(0, "debug", (logging.DEBUG, logging.WARNING, logging.WARNING), id="--log-level debug: no wire"),
        pytest.param(0, "warning", (logging.WARNING, logging.WARNING, logging.WARNING), id="--log-level warning"),
        pytest.param(2, None, (logging.INFO - 2, logging.WARNING, logging.WARNING), id="-v=2: binds, no fit"),
        pytest.param(4, "warning", (logging.INFO - 4, logging.WARNING, logging.WARNING), id="-v=4 wins over warning"),
        pytest.param(5, None, (logging.INFO - 5, logging.WARNING, logging.WARNING), id="-v=5: still no wire"),
        pytest.param(6, None, (logging.INFO - 6, logging.INFO, logging.WARNING), id="-v=6: httpx requests"),
        pytest.param(8, None, (logging.INFO - 8, logging.INFO, logging.DEBUG), id="-v=8: httpcore"),
        pytest.param(12, None, (logging.DEBUG, logging.INFO, logging.DEBUG), id="-v=12: everything"),
    ],
)
def test_verbosity_as_klog(
    verbosity: int, log_level: str | None, levels: tuple[int, int, int], restore_levels: None
) -> None:
    configure_logging(verbosity, log_level)
    assert tuple(logging.getLogger(n).level for n in ("", "httpx", "httpcore")) == levels


# --- who takes default-scheduler pods ---------------------------------------------------------------


def test_cli_run_without_config_needs_take_over_flag() -> None:
    """Without --config the default profile would take kube-scheduler's pods: one line, exit 2,
    before connecting (the server is a closed port), whatever a lease would say."""
    out = subprocess.run(
        [sys.executable, "-m", "kubesched.cli", "run", "--server", "http://127.0.0.1:9"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (out.returncode, out.stderr) == (2, (
        'kubesched: error: without --config the default profile schedules "default-scheduler" pods, '
        "those of kube-scheduler: pass --take-over-default-scheduler to schedule them, or a --config "
        "whose profile has schedulerName: my-scheduler (and spec.schedulerName: my-scheduler on the pods)\n"
    ))  # fmt: skip


@pytest.mark.anyio
async def test_run_without_config_takes_default_scheduler_pods_only_when_told(
    files: dict[str, Path], tmp_path: Path
) -> None:
    """The built-in profile with no kube-scheduler lease at all (RBAC hiding it looks the same):
    refused without the flag, nothing bound; with --take-over-default-scheduler it schedules."""
    config = write(tmp_path, [DEFAULT_PROFILE], "default.yaml")
    cfg = load_config_file(str(config))
    assert [p.scheduler_name for p in cfg.profiles] == [DEFAULT_SCHEDULER_NAME]
    async with fake_apiserver([files["cluster"]]) as h:
        with pytest.raises(ConfigError, match="pass --take-over-default-scheduler"):
            await run_scheduler(RunOptions(server=h.server.url, built_in_profile=True), cfg, handle_signals=False)
        assert h.binds == Counter()
        async with kubesched_run(h, config, built_in_profile=True, take_over_default_scheduler=True):
            await wait_for(lambda: h.placements()["not-ours"] is not None, what="the default-scheduler pod bound")
