"""Every async test runs on both anyio backends, in virtual time."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.transports.fake.virtual_time import backend_options


@pytest.fixture(
    params=[
        pytest.param("asyncio", id="asyncio"),
        pytest.param("trio", id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    return request.param, backend_options(request.param)
