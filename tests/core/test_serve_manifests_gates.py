"""``kubesched fake-apiserver``'s cluster follows the server's emulated version and gates: the
API server clears a bound pod's nominated node from 1.35 (ClearingNominatedNodeNameAfterBinding),
and the PV controller matches volumes by class of attributes from 1.34 (VolumeAttributesClass:
beta off in 1.31-1.33, no check at all in 1.30)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from kubesched.config._versions import Version, default_feature_gates
from kubesched.service import _fake_apiserver
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize(
    ("version", "gates", "clear", "vac"),
    [
        (Version(1, 30), None, False, None),
        (Version(1, 33), None, False, False),
        (Version(1, 34), None, False, True),
        (Version(1, 34), {"ClearingNominatedNodeNameAfterBinding": True}, True, True),
        (Version(1, 36), None, True, True),
    ],
    ids=["1.30", "1.33", "1.34", "1.34 clearing on", "1.36"],
)
async def test_the_cluster_takes_the_servers_version(monkeypatch: pytest.MonkeyPatch, version: Version,
                                                     gates: dict[str, bool] | None, clear: bool, vac: bool | None) -> None:  # fmt: skip
    seen: dict[str, Any] = {}

    class Recording(FakeCluster):
        def __init__(self, **options: Any) -> None:
            seen.update(options)
            super().__init__(**options)

    monkeypatch.setattr(_fake_apiserver, "FakeCluster", Recording)
    full = None if gates is None else {**default_feature_gates(version), **gates}
    async with anyio.create_task_group() as tg:

        def ready(_: Any) -> None:
            tg.cancel_scope.cancel()

        tg.start_soon(lambda: _fake_apiserver.serve_manifests([], ready=ready, emulated_version=version,
                                                             feature_gates=full))  # fmt: skip
    assert (seen["clear_nominated_node_name_on_binding"], seen["volume_attributes_class"]) == (clear, vac)
