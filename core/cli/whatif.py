"""``kubesched whatif SCENARIO... [--drain NODE@T] [--delete-node NODE@T] [--lose-zone ZONE@T]
[--add [NS/]POD=N@T] -o overlay.yaml``: the flags, and the overlay written out.  What the
overlay holds: :func:`kubesched.scenario.overlay`; how a drain runs in a simulation:
:mod:`kubesched.simulation._drains`."""

from __future__ import annotations

import argparse

from kubesched._errors import ConfigError
from kubesched._outputs import write_output
from kubesched.cli.options import warn_line
from kubesched.scenario import ZONE_LABEL, load_manifests, overlay, overlay_text

__all__ = ["add_arguments", "cmd_whatif"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``kubesched whatif``."""
    p.add_argument("files", nargs="+", metavar="SCENARIO", help="the scenario's manifests (a snapshot, say)")
    p.add_argument("--drain", action="append", default=[], metavar="NODE@TIME",
                   help="cordon NODE at TIME and evict its pods as kubectl drain does (PDBs respected)")
    p.add_argument("--delete-node", action="append", default=[], metavar="NODE@TIME",
                   help="delete NODE at TIME: its pods go with it, their controllers replace them")
    p.add_argument("--lose-zone", action="append", default=[], metavar="ZONE@TIME",
                   help="delete every node of ZONE at TIME (see --zone-label)")
    p.add_argument("--zone-label", default=ZONE_LABEL, metavar="KEY", help=f"the zone label of --lose-zone (default {ZONE_LABEL})")
    p.add_argument("--add", action="append", default=[], metavar="[NS/]POD=COUNT@TIME",
                   help="COUNT unbound copies of the scenario's POD arriving at TIME")
    p.add_argument("-o", "--output", metavar="FILE", default="-", help="where to write the overlay (default: stdout)")


def cmd_whatif(args: argparse.Namespace) -> int:
    """Run ``kubesched whatif``: write the overlay; 2 for bad input."""
    if not (args.drain or args.delete_node or args.lose_zone or args.add):
        raise ConfigError("nothing to do: give --drain, --delete-node, --lose-zone or --add", field="--drain")
    # a field the kind does not have is simulate's to refuse (or not, as its --validate says)
    manifests = load_manifests(args.files, validation="Warn", warn=warn_line)
    objs = overlay(manifests, drain=args.drain, delete_node=args.delete_node, lose_zone=args.lose_zone,
                   add=args.add, zone_label=args.zone_label)  # fmt: skip
    text = overlay_text(args.files, objs)
    try:
        write_output(args.output, text)
    except OSError as e:
        raise ConfigError(f"cannot write: {e.strerror or e}", source=args.output) from None
    return 0
