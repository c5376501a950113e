"""Fixtures for testing kubesched plugins with pytest.

Enable in your ``conftest.py`` (it is not loaded automatically)::

    pytest_plugins = ["kubesched.pytest_plugin"]

Then::

    import pytest
    from kubesched.testing import make_node, make_pod, scheduler_for

    pytestmark = pytest.mark.anyio          # every async test runs on asyncio and trio

    async def test_gate(temporary_plugin):
        temporary_plugin("Gate", Gate)      # known by name until the test ends
        async with scheduler_for([make_node("n1").obj()], enable=["Gate"]) as sim:
            sim.create(make_pod("p").obj())
            await sim.settle()              # virtual time: backoffs pass at once
            assert sim.placements() == {"p": None}

Fixtures:

- ``anyio_backend``: parametrized over ``asyncio`` and ``trio``, each with a virtual clock (it
  replaces anyio's own fixture of that name; define ``anyio_backend`` in a conftest to narrow it).
- ``temporary_plugin``: ``temporary_plugin(name, factory)`` registers a plugin (see
  :func:`kubesched.testing.register_temporary_plugin`) until the end of the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from kubesched.runtime._entrypoints import Factory, register_temporary_plugin


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    """Each anyio test runs on asyncio and on trio, in virtual time."""
    from kubesched.transports.fake.virtual_time import backend_options

    backend: str = request.param
    return backend, backend_options(backend)


@pytest.fixture
def temporary_plugin() -> Iterator[Callable[[str, Factory], Factory]]:
    """``temporary_plugin(name, factory)``: a plugin known by name until the test ends."""
    with ExitStack() as stack:

        def register(name: str, factory: Factory) -> Factory:
            return stack.enter_context(register_temporary_plugin(name, factory))

        yield register


__all__ = ["anyio_backend", "temporary_plugin"]
