"""Go durations ("90s", "5m", "1h30m", "500ms"), as configuration files and annotations write them.

As Go's ``time.ParseDuration``: ASCII digits only, no surrounding spaces, and the value must fit an
int64 count of nanoseconds (about 292 years); anything beyond is an invalid duration, never
infinity.  kubesched's own inputs (annotations, ``--until``) also take a bare number as seconds;
fields of upstream's configuration (``metav1.Duration``) do not (``bare_seconds=False``).
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


def time_quote(text: str) -> str:
    """Go's ``time.quote``: double quotes, a control or unprintable character as the ``\\xNN`` of its
    UTF-8 bytes (so an error stays one line); other characters as written."""
    out: list[str] = []
    for c in text:
        if c < " " or not c.isprintable():
            out.extend(f"\\x{b:02x}" for b in c.encode("utf-8", "surrogatepass"))
        elif c in '"\\':
            out.append("\\" + c)
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def parse_duration_nanos(text: str, *, bare_seconds: bool = True) -> int:
    """A Go duration as an int64 count of nanoseconds (fractions of a nanosecond truncated, as
    Go does); a bare number is seconds when ``bare_seconds``, else refused as Go refuses it."""
    s = str(text)
    if not s:
        raise ValueError('time: invalid duration ""')
    sign, body = (-1, s[1:]) if s[0] == "-" else (1, s[1:] if s[0] == "+" else s)
    if len(body) > 200:  # no valid int64 duration is this long (and a long one costs time)
        raise ValueError(f"time: invalid duration {time_quote(s[:40])[:-1]}...\"")
    if _BARE_NUMBER.fullmatch(body):
        if not bare_seconds and body != "0":
            raise ValueError(f"time: missing unit in duration {time_quote(s)}")
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
            raise ValueError(f"time: invalid duration {time_quote(s)}")
    if nanos > MAX_DURATION_NANOS:
        raise ValueError(f"time: invalid duration {time_quote(s)}")
    return sign * int(nanos)


def parse_duration(text: str, *, bare_seconds: bool = True) -> float:
    """A Go duration ("90s", "5m", "1h30m", "500ms", "-1m") in seconds; a bare number is seconds
    unless ``bare_seconds`` is false."""
    return parse_duration_nanos(text, bare_seconds=bare_seconds) / 1e9


def _fraction(value: int, digits: int) -> str:
    whole, frac = divmod(value, 10**digits)
    tail = f"{frac:0{digits}d}".rstrip("0")
    return f"{whole}.{tail}" if tail else str(whole)


def format_duration(nanos: int) -> str:
    """Go's ``time.Duration.String()``: "15s", "1m30s", "1h0m0s", "1.5s", "500ms", "0s"."""
    if nanos == 0:
        return "0s"
    sign, u = ("-", -nanos) if nanos < 0 else ("", nanos)
    if u < 10**3:
        return f"{sign}{u}ns"
    if u < 10**6:
        return f"{sign}{_fraction(u, 3)}µs"
    if u < 10**9:
        return f"{sign}{_fraction(u, 6)}ms"
    secs, frac = divmod(u, 10**9)
    hours, rest = divmod(secs, 3600)
    minutes, seconds = divmod(rest, 60)
    text = _fraction(seconds * 10**9 + frac, 9) + "s"
    if hours:
        text = f"{hours}h{minutes}m{text}"
    elif minutes:
        text = f"{minutes}m{text}"
    return sign + text


__all__ = ["MAX_DURATION_SECONDS", "format_duration", "parse_duration", "parse_duration_nanos"]
