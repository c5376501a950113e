"""Go durations ("90s", "5m", "1h30m", "500ms"), as configuration files and annotations write them.

As Go's ``time.ParseDuration``: ASCII digits only, and the value must fit an int64 count of
nanoseconds (about 292 years); anything beyond is an invalid duration, never infinity.
"""

from __future__ import annotations

import re
from fractions import Fraction

_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_BARE_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
_UNIT_NANOS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}
# the largest time.Duration: int64 nanoseconds
MAX_DURATION_NANOS = 2**63 - 1
MAX_DURATION_SECONDS = MAX_DURATION_NANOS / 1e9


def parse_duration(text: str) -> float:
    """A Go duration ("90s", "5m", "1h30m", "500ms", "-1m") in seconds; a bare number is seconds."""
    s = str(text).strip()
    if not s:
        raise ValueError('time: invalid duration ""')
    sign, body = (-1, s[1:]) if s[0] == "-" else (1, s[1:] if s[0] == "+" else s)
    if len(body) > 200:  # no valid int64 duration is this long (and a long one costs time)
        raise ValueError(f'time: invalid duration "{s[:40]}..."')
    if _BARE_NUMBER.fullmatch(body):
        nanos = Fraction(body) * 10**9
    else:
        pos = 0
        nanos = Fraction(0)
        for m in _DURATION_PART.finditer(body):
            if m.start() != pos:
                break
            nanos += Fraction(m.group(1)) * _UNIT_NANOS[m.group(2)]
            pos = m.end()
        if pos != len(body) or pos == 0:
            raise ValueError(f'time: invalid duration "{s}"')
    if nanos > MAX_DURATION_NANOS:
        raise ValueError(f'time: invalid duration "{s}"')
    return sign * float(nanos) / 1e9


__all__ = ["MAX_DURATION_SECONDS", "parse_duration"]
