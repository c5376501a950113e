"""The FGD paper's Figure 9(a) check: kubesched's fill runs against the artifact's published bands.

    OPENB_DIR=/path/to/csv python examples/gpushare/reproduce.py \
        --expected /path/to/analysis_allo_discrete.csv [--workload openb_pod_list_default] \
        [--seeds 42 43] [--jobs 2] [--out results.json]

``OPENB_DIR`` holds the artifact's ``data/csv`` files (openb_node_list_gpu_node.csv and the
openb_pod_list_*.csv); ``--expected`` is the artifact's
experiments/analysis/expected_results/analysis_allo_discrete.csv.  Neither ships with kubesched.
Each run is ``kubesched trace openb ... --fill 1.3 --seed S --config configs/<policy>.yaml
--output json``; a value passes when it lies in the paper's range over its 10 seeds, ±1 point.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
POLICIES = {"01-Random": "random", "02-DotProd": "dotprod", "03-GpuClustering": "gpuclustering",
            "04-GpuPacking": "gpupacking", "05-BestFit": "bestfit", "06-FGD": "fgd"}
CHECKPOINTS = (30, 60, 80, 90, 100, 110, 120, 130)
TOLERANCE = 1.0


def bands(expected: Path, workload: str) -> dict[str, dict[int, tuple[float, float, float]]]:
    out: dict[str, dict[int, list[float]]] = {}
    with expected.open() as f:
        for row in csv.DictReader(f):
            if row["workload"] != workload:
                continue
            pol = out.setdefault(row["sc_policy"], {})
            for pct in range(131):
                if row.get(str(pct)):
                    pol.setdefault(pct, []).append(float(row[str(pct)]))
    return {p: {k: (min(v), max(v), sum(v) / len(v)) for k, v in d.items()} for p, d in out.items()}


def run(openb: Path, workload: str, policy: str, seed: int) -> tuple[dict[str, object], float]:
    cmd = [sys.executable, "-m", "kubesched.cli", "trace", "openb",
           str(openb / "openb_node_list_gpu_node.csv"), str(openb / f"{workload}.csv"),
           "--fill", "1.3", "--seed", str(seed), "--config", str(HERE / "configs" / f"{policy}.yaml"),
           "--output", "json"]
    t0 = time.time()
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    fill: dict[str, object] = json.loads(done.stdout)["fill"]
    return fill, time.time() - t0


COLOURS = {"01-Random": "#7f7f7f", "02-DotProd": "#1f77b4", "03-GpuClustering": "#2ca02c",
           "04-GpuPacking": "#9467bd", "05-BestFit": "#ff7f0e", "06-FGD": "#d62728"}


def svg(paper: dict[str, dict[int, tuple[float, float, float]]], runs: dict[str, object],
        seeds: list[int], workload: str) -> str:
    """GPU allocation against arrived GPU (70-130 %): the paper's range over its 10 seeds as a band
    per policy, kubesched's mean over ``seeds`` as a line."""
    w, h, left, top, right, bottom = 760, 480, 60, 50, 170, 50
    x0, x1, y0, y1 = 70, 130, 75.0, 100.0

    def x(p: float) -> float:
        return left + (p - x0) / (x1 - x0) * (w - left - right)

    def y(v: float) -> float:
        return top + (y1 - v) / (y1 - y0) * (h - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
           f'font-size="12"><rect width="{w}" height="{h}" fill="white"/>',
           f'<defs><clipPath id="plot"><rect x="{left}" y="{top}" width="{w - left - right}" '
           f'height="{h - top - bottom}"/></clipPath></defs>',
           f'<text x="{left}" y="18" font-size="14">GPU allocation, {workload}</text>',
           f'<text x="{left}" y="36">kubesched: lines, the mean of seeds {", ".join(map(str, seeds))}; '
           f'the paper: bands, its range over seeds 42-51</text>']
    for v in range(int(y0), int(y1) + 1, 5):
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ddd"/>'
                   f'<text x="{left - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v}%</text>')
    for p in range(x0, x1 + 1, 10):
        out.append(f'<line x1="{x(p):.1f}" x2="{x(p):.1f}" y1="{top}" y2="{h - bottom}" stroke="#eee"/>'
                   f'<text x="{x(p):.1f}" y="{h - bottom + 16}" text-anchor="middle">{p}%</text>')
    out.append(f'<text x="{(left + w - right) / 2:.0f}" y="{h - 10}" text-anchor="middle">GPU requests '
               'arrived, % of the cluster\'s GPUs</text>')
    pts = range(x0, x1 + 1)
    for i, (pol, colour) in enumerate(COLOURS.items()):
        band = paper.get(pol)
        if band is None:
            continue
        upper = " ".join(f"{x(p):.1f},{y(band[p][1]):.1f}" for p in pts)
        lower = " ".join(f"{x(p):.1f},{y(band[p][0]):.1f}" for p in reversed(pts))
        out.append(f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.18" stroke="none" '
                   'clip-path="url(#plot)"/>')
        curves = [runs[f"{pol}/{s}"]["allocation"] for s in seeds if f"{pol}/{s}" in runs]  # type: ignore[index]
        if curves:
            mean = [sum(c[p] for c in curves) / len(curves) for p in pts]
            line = " ".join(f"{x(p):.1f},{y(v):.1f}" for p, v in zip(pts, mean, strict=True))
            out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2" '
                       'clip-path="url(#plot)"/>')
        ly = top + 20 + 22 * i
        out.append(f'<rect x="{w - right + 15}" y="{ly - 9}" width="14" height="10" fill="{colour}" '
                   f'fill-opacity="0.35"/><line x1="{w - right + 15}" x2="{w - right + 29}" y1="{ly - 4}" '
                   f'y2="{ly - 4}" stroke="{colour}" stroke-width="2"/><text x="{w - right + 35}" '
                   f'y="{ly}">{pol[3:]}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--expected", type=Path, required=True)
    ap.add_argument("--workload", default="openb_pod_list_default")
    ap.add_argument("--seeds", type=int, nargs="+", default=[42, 43])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--plot", type=Path, help="write an SVG: kubesched's curves over the paper's bands")
    ap.add_argument("--from-json", type=Path, help="plot or check a saved --out file instead of running")
    args = ap.parse_args()
    openb = Path(os.environ.get("OPENB_DIR", "."))
    paper = bands(args.expected, args.workload)
    jobs = [(p, s) for p in POLICIES for s in args.seeds]
    if args.from_json:
        saved = json.loads(args.from_json.read_text())["runs"]
        results = [(saved[f"{p}/{s}"], 0.0) for p, s in jobs]
    else:
        with ThreadPoolExecutor(args.jobs) as ex:
            results = list(ex.map(lambda j: run(openb, args.workload, POLICIES[j[0]], j[1]), jobs))
    failures = 0
    table: dict[str, object] = {}
    for (pol, seed), (fill, secs) in zip(jobs, results, strict=True):
        alloc = fill["allocation"]
        assert isinstance(alloc, list)
        marks = []
        for pct in CHECKPOINTS:
            lo, hi, _ = paper[pol][pct]
            v = alloc[pct]
            ok = v is not None and lo - TOLERANCE <= v <= hi + TOLERANCE
            failures += not ok
            marks.append(f"{pct}:{v}{'' if ok else '!'}")
        print(f"{pol:<17} seed {seed}: {' '.join(marks)}  paper@130 {paper[pol][130][0]:.2f}-"
              f"{paper[pol][130][1]:.2f} (mean {paper[pol][130][2]:.2f})  {secs:.0f}s")
        table[f"{pol}/{seed}"] = fill
    if args.out:
        args.out.write_text(json.dumps({"paper": paper, "runs": table}))
    if args.plot:
        args.plot.write_text(svg(paper, table, args.seeds, args.workload))
    print("all within the paper's bands ±1 point" if not failures else f"{failures} values outside")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
