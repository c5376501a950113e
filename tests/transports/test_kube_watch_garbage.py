"""``kubesched run`` against an API server answering garbage (issue 38 item 12): a list or a
watch event that does not decode, even JSON nested 100,000 deep, is a server fault the
reflector retries (UnavailableError), never a traceback."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched._errors import UnavailableError
from kubesched.transports.kube._watch import RESOURCES, Reflector


class _Answer:
    def __init__(self, body: bytes) -> None:
        self.body = body

    async def request(self, method: str, path: str, **_: Any) -> bytes:
        return self.body


DEEP = b'{"items": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        pytest.param(b"<html>502</html>", "JSON is malformed: invalid character (byte 0)", id="an HTML page"),
        pytest.param(DEEP, "nested too deep", id="JSON 100,000 deep"),
        pytest.param(b'{"items": 3}', "Expected `array | null`, got `int` - at `$.items`", id="items not a list"),
    ],
)
@pytest.mark.anyio
async def test_an_undecodable_list_is_retried(body: bytes, why: str) -> None:
    reflector = Reflector(_Answer(body), RESOURCES[1], lambda _: None, rng=random.Random(0))  # type: ignore[arg-type]
    with pytest.raises(UnavailableError) as info:
        await reflector._list()
    assert str(info.value) == f"GET /api/v1/nodes: undecodable list: {why}"


@pytest.mark.parametrize("line", [b"garbage", b'{"type": "ADDED", "object": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"])
def test_an_undecodable_watch_event_is_retried(line: bytes) -> None:
    reflector = Reflector(_Answer(b""), RESOURCES[1], lambda _: None, rng=random.Random(0))  # type: ignore[arg-type]
    with pytest.raises(UnavailableError, match="watch of Node: undecodable event: "):
        reflector._on_line(line)
