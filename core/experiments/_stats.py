"""Paired differences over seeds: a mean, its 95% confidence interval, and a plain verdict.

The model::

    baseline  {seed: value}  ─┐
                              ├─► paired by seed ─► d_i = variant_i − baseline_i  (i = 1..n)
    variant   {seed: value}  ─┘                       │
                                                      ▼
           mean d̄, sample standard deviation s, interval d̄ ± t(0.975, n−1) · s / √n
                                                      │
                                                      ▼
     "packed: −2.7 mean nodes used [−3.1, −2.3], better in 10/10 seeds"   (interval clear of 0)
     "packed: +0.3 mean nodes used [−0.2, 0.8], no difference"              (interval spans 0)

Pairing by seed removes what the seed alone decides (the generated workload, the scheduler's
random choices) from the comparison: a variant is judged on the same inputs as its baseline.
A seed counts only where both rows have the metric.  The Student t quantile is computed here
(the regularized incomplete beta function, then bisection) so the module needs no scipy; it
matches the printed tables (t(0.975, 9) = 2.262, t(0.975, 1) = 12.706).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

MINUS = "\u2212"  # the verdicts' minus sign, as typeset
K = TypeVar("K", bound=Hashable)


# --- the Student t distribution ---------------------------------------------------------------


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
                    -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


@functools.lru_cache(maxsize=1024)
def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile (0 < p < 1) of Student's t with ``df`` degrees of freedom (a bisection
    of 60-odd CDF evaluations: kept, as a page asks for the same few degrees of freedom often)."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError(f"t_quantile needs 0 < p < 1 and df > 0, got p={p}, df={df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):  # bisection: monotone, deterministic, exact to the last bit or two
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):
            break
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


# --- a mean and its interval ------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """The mean of ``n`` values and its 95% confidence interval (None below two values)."""

    n: int
    mean: float
    low: float | None
    high: float | None

    @property
    def spans_zero(self) -> bool:
        return self.low is not None and self.high is not None and self.low <= 0.0 <= self.high


def interval(values: Sequence[float], level: float = 0.95) -> Interval | None:
    """Mean ± t(1 − (1 − level)/2, n − 1) · s/√n of ``values``; None for no values."""
    n = len(values)
    if n == 0:
        return None
    mean = math.fsum(values) / n
    if n < 2:
        return Interval(n, mean, None, None)
    s = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(1.0 - (1.0 - level) / 2.0, n - 1) * s / math.sqrt(n)
    return Interval(n, mean, mean - half, mean + half)


@dataclass(frozen=True)
class Difference:
    """variant − baseline over the seeds both have: the interval, and how many seeds went which way."""

    interval: Interval
    higher: int  # seeds where the variant's value is above the baseline's
    lower: int
    seeds: tuple[Hashable, ...]

    @property
    def n(self) -> int:
        return self.interval.n


def _difference(a: float, b: float) -> float:
    """a − b, where a difference below a billionth of the values is rounding (0.1 + 0.2 − 0.3), not a change."""
    d = a - b
    return 0.0 if abs(d) <= 1e-9 * max(abs(a), abs(b)) else d


def paired(baseline: Mapping[K, float], variant: Mapping[K, float]) -> Difference | None:
    """The paired difference variant − baseline, seed by seed; None when no seed has both."""
    seeds = tuple(s for s in baseline if s in variant)
    diffs = [_difference(variant[s], baseline[s]) for s in seeds]
    iv = interval(diffs)
    if iv is None:
        return None
    return Difference(iv, sum(1 for d in diffs if d > 0), sum(1 for d in diffs if d < 0), seeds)


# --- numbers and verdicts as text -------------------------------------------------------------


MOST_PLACES = 9  # beyond this, values that still print alike are rounding noise


def same(a: float, b: float) -> bool:
    """Two values that are one (within a billionth of them: rounding, as :func:`_difference`)."""
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def separating(values: Sequence[float | None], places: int) -> int:
    """``places``, or more (up to 9) while two of ``values`` that differ print alike: ``11.6``
    and ``11.4`` are ``11.6`` and ``11.4``, never ``12`` and ``11`` beside an interval ``[11, 12]``.
    Rounding keeps order, so neighbours in sorted order are the pairs to check."""
    finite = sorted(v for v in values if v is not None and math.isfinite(v))
    pairs = [(a, b) for a, b in zip(finite, finite[1:], strict=False) if not same(a, b)]
    while places < MOST_PLACES and any(number(a, places) == number(b, places) for a, b in pairs):
        places += 1
    return places


def decimals(*values: float | None) -> int:
    """Decimal places that give the largest of ``values`` two significant digits (none when every
    value is a whole number), and more where two values that differ would print alike."""
    finite = [v for v in values if v is not None and math.isfinite(v)]
    top = max((abs(v) for v in finite), default=0.0)
    if top == 0.0 or all(float(v).is_integer() for v in finite):
        return 0
    return separating(finite, max(0, min(4, 1 - math.floor(math.log10(top)))))


def number(v: float, places: int, *, signed: bool = False) -> str:
    """``v`` with ``places`` decimals, a typeset minus, a plus when ``signed``; 0 never signed."""
    text = f"{abs(v):.{places}f}"
    if float(text) == 0.0:
        return text
    if v < 0:
        return MINUS + text
    return "+" + text if signed else text


@dataclass(frozen=True)
class Verdict:
    """One metric's verdict for one variant against the baseline."""

    variant: str
    name: str  # the metric's human name, with its unit
    better: str | None  # "lower", "higher", or None when the metric has no better direction
    difference: Difference
    scale: float = 1.0  # shown values are the stored ones times this (fractions as %)

    @property
    def outcome(self) -> str:
        """``better``, ``worse``, ``higher``/``lower`` (no direction), ``same`` or ``unknown`` (one seed)."""
        iv = self.difference.interval
        if iv.low is None:
            return "unknown"
        if iv.spans_zero:
            return "same"
        went = "higher" if iv.mean > 0 else "lower"
        if self.better is None:
            return went
        return "better" if went == self.better else "worse"

    def _count(self) -> int:
        return self.difference.higher if self.difference.interval.mean > 0 else self.difference.lower

    @property
    def figure(self) -> str:
        """The signed mean difference and its interval: ``−2.7 [−3.1, −2.3]`` (one seed: ``−3.0``)."""
        iv = self.difference.interval
        k = self.scale
        if iv.low is None or iv.high is None:
            return number(iv.mean * k, decimals(iv.mean * k), signed=True)
        places = decimals(iv.mean * k, iv.low * k, iv.high * k)
        return (f"{number(iv.mean * k, places, signed=True)} "
                f"[{number(iv.low * k, places)}, {number(iv.high * k, places)}]")

    @property
    def tail(self) -> str:
        """``better in 10/10 seeds``, ``worse in 7/10 seeds``, ``no difference`` or ``1 seed: no interval``."""
        outcome = self.outcome
        if outcome == "unknown":
            return "1 seed: no interval"
        if outcome == "same":
            return "no difference"
        return f"{outcome} in {self._count()}/{self.difference.n} seeds"

    @property
    def short(self) -> str:
        """The verdict without the variant and the metric: ``−2.7 [−3.1, −2.3], better in 10/10 seeds``."""
        return f"{self.figure}, {self.tail}"

    @property
    def text(self) -> str:
        """The whole sentence: ``packed: −2.7 mean nodes used [−3.1, −2.3], better in 10/10 seeds``."""
        value, _, interval_text = self.figure.partition(" ")
        if interval_text:
            return f"{self.variant}: {value} {self.name} {interval_text}, {self.tail}"
        return f"{self.variant}: {value} {self.name}, {self.tail}"


def interval_values(iv: Interval | None, scale: float = 1.0) -> list[float]:
    """The numbers :func:`mean_text` prints for ``iv``: its mean and its bounds, scaled."""
    if iv is None:
        return []
    return [v * scale for v in (iv.mean, iv.low, iv.high) if v is not None]


def mean_text(iv: Interval | None, scale: float = 1.0, places: int | None = None) -> str:
    """``41 [39, 43]``: a mean and its interval, as the tables show them ('n/a' for none).
    ``places``: the decimals (a row's, so that a value and its baseline that differ print
    differently: :func:`decimals` over the row); by default the interval's own."""
    if iv is None:
        return "n/a"
    if places is None:
        places = decimals(*interval_values(iv, scale))
    mean = iv.mean * scale
    if iv.low is None or iv.high is None or same(iv.low, iv.high):  # one seed, or every seed the same
        return number(mean, 0 if mean.is_integer() else places)  # a whole number loses nothing: 6, not 6.0
    return f"{number(mean, places)} [{number(iv.low * scale, places)}, {number(iv.high * scale, places)}]"


__all__ = [
    "Difference", "Interval", "Verdict", "decimals", "interval", "interval_values", "mean_text", "paired", "same", "separating",
    "t_quantile",
]
