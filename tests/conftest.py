"""Every async test runs on both anyio backends, in virtual time."""

from __future__ import annotations

import os
from typing import Any

import pytest

from kubesched.transports.fake.virtual_time import backend_options

# The plain progress line a run without a terminal writes every 10 s of wall time would land in
# the stderr a test compares whenever a slow machine stretches a run past 10 s: off for the suite
# (and the processes it starts); tests/e2e/test_compare.py turns it on where it is the subject.
os.environ.setdefault("KUBESCHED_PROGRESS_EVERY", "0")


@pytest.fixture(
    params=[
        pytest.param("asyncio", id="asyncio"),
        pytest.param("trio", id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    return request.param, backend_options(request.param)
