"""``kubesched sweep SWEEP.yaml``: the flags, the Dask client, the progress bar and the closing
note on stderr, the verdict table on stdout (``--summary``).  The sweep itself:
:mod:`kubesched.experiments`."""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import sys
from pathlib import Path
from typing import Any

from kubesched._errors import ConfigError
from kubesched.api._decoding import read_text
from kubesched.cli.options import warn_line
from kubesched.experiments import check_address, connect, load_sweep, run_sweep, summary_text
from kubesched.scenario import load_manifests, validation_mode


class Progress:
    """A progress bar on stderr when it is a terminal (cells done / cells)."""

    def __init__(self, total: int, stream: Any = None) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def step(self, ok: bool) -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        if self.tty:
            width = 30
            filled = width * self.done // max(self.total, 1)
            bad = f", {self.failed} failed" if self.failed else ""
            self.stream.write(f"\rsweep [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} cells{bad}")
            if self.done == self.total:
                self.stream.write("\n")
            self.stream.flush()


def cmd_sweep(args: argparse.Namespace) -> int:
    sweep = load_sweep(args.sweep, warn=warn_line)
    sweep.validation = validation_mode(args.validate)
    if sweep.validation == "Warn":  # said once here, not by every cell in its worker
        for sc in sweep.scenarios:
            if sc.text is not None:
                with contextlib.suppress(ConfigError):  # a bad scenario fails as its cells
                    load_manifests([sc.label], {sc.label: sc.text}, validation="Warn", warn=warn_line)
    if args.scheduler:
        check_address(args.scheduler)
    if args.workers is not None and args.workers < 1:
        raise ConfigError(f"Invalid value: {args.workers}: must be at least 1", field="--workers")
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ConfigError("kubesched sweep runs on Dask: pip install 'kubesched[sweep]'") from None
    out = Path(args.out)
    client, cluster = connect(args.scheduler, args.workers, args.connect_timeout)
    try:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"cannot create the output directory: {e.strerror or e}", source=str(out)) from None
        n = len(client.scheduler_info()["workers"])
        where = args.scheduler or f"a LocalCluster of {n} worker{'' if n == 1 else 's'}"
        report = run_sweep(sweep, out, client, progress=Progress(0))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    note = (f"sweep: {report.cells} cells ({report.ran} run, {report.skipped} already done, "
            f"{report.failed} failed) on {where} in {report.wall:.2f}s wall; "
            f"the cells' own run time adds up to {report.cell_seconds:.2f}s; results in {out}/results.csv, "
            f"{out}/sweep.html")
    print(note, file=sys.stderr)
    for error in report.errors[:5]:
        print(f"  {error}", file=sys.stderr)
    if getattr(args, "summary", False):  # the verdict table, on stdout
        reader = csv.DictReader(io.StringIO(read_text(out / "results.csv")))
        sys.stdout.write(summary_text(list(reader.fieldnames or []), list(reader), sweep.baseline or None))
    return 0
