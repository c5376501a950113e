"""One hierarchy: every exception a public module offers derives from KubeschedError, and the
public entry points raise plain exceptions, never a task group's ExceptionGroup."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import kubesched
import kubesched.plugins
import kubesched.transports
from kubesched._errors import plain_exception


def _public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split(".")[1:])


def public_modules() -> list[str]:
    """``kubesched`` and every public module below it (no ``_`` in its dotted name), but for the
    command line (``kubesched.cli``, the application) and the in-tree plugins' own modules
    (``kubesched.plugins`` itself is walked)."""
    names = ["kubesched", "kubesched.plugins", "kubesched.transports"]
    for package in (kubesched, kubesched.transports):
        names += [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    return sorted(
        {
            n
            for n in names
            if _public(n) and not n.startswith(("kubesched.cli", "kubesched.plugins."))
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


def test_a_cancellation_leaves_the_group_alone() -> None:
    """Cancel scopes look for their cancellation in the group: it goes on as it is."""
    assert plain_exception(BaseExceptionGroup("g", [_Cancelled()])) is None
    assert plain_exception(BaseExceptionGroup("g", [ValueError("x"), _Cancelled()])) is None
    assert plain_exception(BaseExceptionGroup("g", [KeyboardInterrupt()])) is None
