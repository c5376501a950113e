"""One hierarchy: every exception a public module offers derives from KubeschedError, and the
public entry points raise plain exceptions, never a task group's ExceptionGroup."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

import anyio
import pytest

import kubesched
import kubesched.plugins
import kubesched.transports
from kubesched import plain_exception
from kubesched.config._config import default_profile
from kubesched.transports.fake import FakeCluster


def _public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split(".")[1:])


def public_modules() -> list[str]:
    """``kubesched`` and every public module below it (no ``_`` in its dotted name), but for the
    command line (``kubesched.cli``, the application); the in-tree plugins' modules too."""
    names = ["kubesched", "kubesched.plugins", "kubesched.transports"]
    for package in (kubesched, kubesched.transports, kubesched.plugins):
        names += [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    return sorted(
        {
            n
            for n in names
            if _public(n) and not n.startswith("kubesched.cli")
        }
    )


def _exported(module: ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    return list(names) if names is not None else [n for n in vars(module) if not n.startswith("_")]


def test_the_walk_sees_the_public_faces() -> None:
    modules = public_modules()
    for expected in (
        "kubesched",
        "kubesched.framework",
        "kubesched.testing",
        "kubesched.plugins",
        "kubesched.api",
        "kubesched.transports.kube",
        "kubesched.transports.fake",
        "kubesched.transports.apiserver",
    ):
        assert expected in modules
    assert not [m for m in modules if m.startswith("kubesched.cli")]


def test_every_public_exception_derives_from_kubesched_error() -> None:
    outside = []
    seen = 0
    for name in public_modules():
        module = importlib.import_module(name)
        for attr in _exported(module):
            obj = getattr(module, attr)
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                seen += 1
                if not issubclass(obj, kubesched.KubeschedError):
                    outside.append(f"{name}.{attr} ({obj.__module__}.{obj.__qualname__})")
    assert seen > 10
    assert not outside, outside


@pytest.mark.parametrize(
    ("exc", "also"),
    [
        pytest.param(kubesched.QuantityError("x"), ValueError, id="QuantityError is a ValueError"),
        pytest.param(kubesched.PluginError("x"), Exception, id="PluginError"),
        pytest.param(kubesched.framework.VolumeError("x"), Exception, id="VolumeError"),
    ],
)
def test_former_outsiders_keep_their_bases(exc: Exception, also: type[Exception]) -> None:
    assert isinstance(exc, kubesched.KubeschedError)
    assert isinstance(exc, also)


def test_fit_error_is_a_kubesched_error() -> None:
    assert issubclass(kubesched.FitError, kubesched.KubeschedError)


# --- plain_exception: which exception a task group's ExceptionGroup stands for -----------------


class _Cancelled(BaseException):
    """A stand-in for a backend's cancellation (trio.Cancelled, asyncio.CancelledError)."""


def test_a_group_of_one_is_that_exception() -> None:
    err = kubesched.ConfigError("bad")
    assert plain_exception(ExceptionGroup("g", [err])) is err
    assert plain_exception(ExceptionGroup("g", [ExceptionGroup("inner", [err])])) is err
    assert not getattr(err, "__notes__", None)


def test_several_give_the_first_kubesched_error_with_the_others_noted() -> None:
    first = ValueError("plain")
    ours = kubesched.UnavailableError("down")
    later = kubesched.ConfigError("late")
    group = ExceptionGroup("g", [first, ExceptionGroup("inner", [ours]), later])
    assert plain_exception(group) is ours
    assert ours.__notes__ == ["also raised: ValueError: plain", "also raised: ConfigError: late"]
    assert plain_exception(group) is ours
    assert len(ours.__notes__) == 2  # asked twice, noted once


def test_several_without_a_kubesched_error_give_the_first() -> None:
    first, second = KeyError("k"), TypeError("t")
    assert plain_exception(ExceptionGroup("g", [first, second])) is first
    assert first.__notes__ == ["also raised: TypeError: t"]


def test_the_callers_own_group_is_one_leaf_even_as_trio_copies_it() -> None:
    mine = ExceptionGroup("mine", [KeyError("a"), ValueError("b")])
    assert plain_exception(ExceptionGroup("tg", [mine]), keep=mine) is mine
    copy = mine.derive(mine.exceptions)  # what trio's nursery wraps: the same leaves
    assert plain_exception(ExceptionGroup("tg", [copy]), keep=mine) is mine
    other = ExceptionGroup("other", [KeyError("a")])
    assert isinstance(plain_exception(ExceptionGroup("tg", [other]), keep=mine), KeyError)
    assert plain_exception(mine, keep=mine) is mine


def test_a_cancellation_leaves_the_group_alone() -> None:
    """Cancel scopes look for their cancellation in the group: it goes on as it is."""
    assert plain_exception(BaseExceptionGroup("g", [_Cancelled()])) is None
    assert plain_exception(BaseExceptionGroup("g", [ValueError("x"), _Cancelled()])) is None
    assert plain_exception(BaseExceptionGroup("g", [KeyboardInterrupt(), _Cancelled()])) is None


def test_an_interrupt_comes_first() -> None:
    """Ctrl-C (or sys.exit) in a task stops the program, whatever else failed meanwhile."""
    interrupt = KeyboardInterrupt()
    assert plain_exception(BaseExceptionGroup("g", [interrupt])) is interrupt
    error = kubesched.ConfigError("bad")
    assert plain_exception(BaseExceptionGroup("g", [error, interrupt])) is interrupt
    assert interrupt.__notes__ == ["also raised: ConfigError: bad"]
    leaving = SystemExit(3)
    assert plain_exception(BaseExceptionGroup("g", [leaving])) is leaving


# --- the public entry points raise plain exceptions ----------------------------------------------


class BrokenWatch(kubesched.Transport):
    """A transport whose watch fails with an error that is not a TransportError (a bug): nothing
    to retry, the scheduler stops."""

    def __init__(self, *, after_sync: bool = False) -> None:
        self.after_sync = after_sync

    def watch(self) -> AsyncIterator[kubesched.WatchEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[kubesched.WatchEvent]:
        if self.after_sync:
            yield kubesched.WatchEvent("SYNCED")
            await anyio.sleep(1)
        raise RuntimeError("the watch broke")

    async def bind(self, binding: kubesched.Binding) -> None:
        raise NotImplementedError

    async def patch_pod_status(self, namespace: str, name: str, **kw: Any) -> None:
        raise NotImplementedError

    async def delete_pod(self, namespace: str, name: str, *, uid: str | None = None) -> None:
        raise NotImplementedError

    async def record_event(self, event: kubesched.Event) -> None:
        raise NotImplementedError


@pytest.mark.anyio
@pytest.mark.parametrize("after_sync", [False, True], ids=["before it started", "while it runs"])
async def test_scheduler_run_raises_what_stopped_it(after_sync: bool) -> None:
    scheduler = kubesched.Scheduler(BrokenWatch(after_sync=after_sync))
    with pytest.raises(RuntimeError, match="^the watch broke$") as exc:
        await scheduler.run()
    assert exc.type is RuntimeError
    assert not isinstance(exc.value.__context__, BaseExceptionGroup)


@pytest.mark.anyio
async def test_scheduler_run_started_in_a_task_group_fails_its_start_plainly() -> None:
    scheduler = kubesched.Scheduler(BrokenWatch())
    async with anyio.create_task_group() as tg:
        with pytest.raises(RuntimeError, match="^the watch broke$"):
            await tg.start(scheduler.run)


@pytest.mark.anyio
async def test_a_profile_that_cannot_be_built_in_the_fake_cluster_is_plain() -> None:
    """What a service writes: the scheduler built inside ``async with FakeCluster()``."""
    profile = default_profile()
    profile.multi_point.append(("Nope", 1))
    with pytest.raises(kubesched.PluginError, match='^"Nope" does not exist$'):
        async with FakeCluster() as cluster:
            kubesched.Scheduler(cluster, kubesched.SchedulerConfig(profiles=[profile]))
    with pytest.raises(kubesched.KubeschedError):
        async with FakeCluster() as cluster:
            kubesched.Scheduler(cluster, kubesched.SchedulerConfig(profiles=[profile]))


@pytest.mark.anyio
async def test_a_simulation_raises_what_failed_in_its_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubesched.simulation import Simulation, _simulation

    async def failing(self: Any) -> None:
        async def fail() -> None:
            raise kubesched.ConfigError("late trouble", source="in.yaml: document 1 (Pod p)")

        async with anyio.create_task_group() as tg:
            tg.start_soon(fail)

    monkeypatch.setattr(_simulation._Run, "run", failing)
    with pytest.raises(kubesched.ConfigError, match=r"^in.yaml: document 1 \(Pod p\): late trouble$"):
        await Simulation([]).run()
