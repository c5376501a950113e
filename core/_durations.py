"""Go durations ("90s", "5m", "1h30m", "500ms"), as configuration files and annotations write them."""

from __future__ import annotations

import math
import re

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """A Go duration ("90s", "5m", "1h30m", "500ms", "-1m") in seconds; a bare number is seconds."""
    s = str(text).strip()
    if not s:
        raise ValueError('time: invalid duration ""')
    try:
        value = float(s)
    except ValueError:
        pass
    else:
        if not math.isfinite(value):
            raise ValueError(f'time: invalid duration "{s}"')
        return value
    sign, body = (-1.0, s[1:]) if s[0] == "-" else (1.0, s[1:] if s[0] == "+" else s)
    pos = 0
    total = 0.0
    for m in _DURATION_PART.finditer(body):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(body) or pos == 0:
        raise ValueError(f'time: invalid duration "{s}"')
    return sign * total


__all__ = ["parse_duration"]
