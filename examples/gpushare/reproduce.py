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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--expected", type=Path, required=True)
    ap.add_argument("--workload", default="openb_pod_list_default")
    ap.add_argument("--seeds", type=int, nargs="+", default=[42, 43])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    openb = Path(os.environ.get("OPENB_DIR", "."))
    paper = bands(args.expected, args.workload)
    jobs = [(p, s) for p in POLICIES for s in args.seeds]
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
    print("all within the paper's bands ±1 point" if not failures else f"{failures} values outside")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
