"""``kubesched trace openb NODES.csv PODS.csv``: the flags, and the manifests on stdout or in
``--out``.  Reading the trace and what comes out: :mod:`kubesched.traces`."""

from __future__ import annotations

import argparse
import math
import sys

from kubesched._errors import ConfigError
from kubesched._outputs import open_output
from kubesched.config._versions import DEFAULT_VERSION, VERSION_RANGE, parse_version
from kubesched.traces import (
    FILL_FACTOR,
    GANG_APIS,
    GANGS,
    GPU,
    GPU_MILLI,
    MODES,
    NODE_PODS,
    SHARED_GPU,
    Options,
    write,
)

__all__ = ["add_arguments", "cmd_trace"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``kubesched trace`` arguments."""
    p.add_argument("format", choices=("openb",),
                   help="the trace's format: openb (the Alibaba GPU cluster trace v2023, alibaba/clusterdata "
                        "cluster-trace-gpu-v2023)")
    p.add_argument("nodes", metavar="NODES.csv", help="the node list (openb_node_list_*.csv)")
    p.add_argument("pods", metavar="PODS.csv", help="the task list (openb_pod_list_*.csv)")
    p.add_argument("-o", "--out", metavar="FILE", help="write the manifests here (default: stdout)")
    p.add_argument("--mode", choices=MODES, default="replay",
                   help="replay: tasks arrive at creation_time and run as long as in the trace; fill: the "
                        "paper's experiment, tasks shuffled and sampled by --seed, one a second, until their "
                        "GPU requests reach --fill-factor x the cluster's GPUs, never finishing (default replay)")
    p.add_argument("--seed", type=int, default=0, help="seed of the fill's shuffle and draws (default 0)")
    p.add_argument("--fill-factor", type=float, default=None, metavar="F",
                   help=f"with --mode fill: the GPU requests to reach, as a multiple of the cluster's GPUs "
                        f"(default {FILL_FACTOR:g}, as the paper)")
    p.add_argument("--shared-gpu", choices=SHARED_GPU, default="whole",
                   help=f"whole: a task asks for num_gpu {GPU}, a shared GPU (gpu_milli < 1000) as a whole one, as "
                        f"the default scheduler counts devices; milli: num_gpu x gpu_milli of {GPU_MILLI}, "
                        "nodes having 1000 per GPU (default whole)")
    p.add_argument("--gangs", choices=GANGS, default="none",
                   help="group tasks into gangs: same-second (consecutive tasks created in the same second with "
                        "identical requests and QoS), split (a task of k > 1 GPUs as k one-GPU members), or none "
                        "(default)")
    p.add_argument("--gang-api", choices=GANG_APIS, default="podgroup",
                   help="how gangs are declared: podgroup (a PodGroup and the pod-group label, for "
                        "Coscheduling) or labels (the Gang plugin's labels) (default podgroup)")
    p.add_argument("--node-pods", type=int, default=NODE_PODS, metavar="N",
                   help=f"allocatable pods of each node (default {NODE_PODS}, the kubelet's)")
    p.add_argument("--emulated-version", default="", metavar="MAJOR.MINOR",
                   help=f"the Kubernetes minor the scenario is for ({VERSION_RANGE}; default {DEFAULT_VERSION}), "
                        "named in the header line for simulate --emulated-version (the objects are the same for "
                        "every minor)")
    p.set_defaults(func=cmd_trace)


def options_from_args(args: argparse.Namespace) -> Options:
    """The validated options of the command line."""
    factor = args.fill_factor
    if factor is not None and args.mode != "fill":
        raise ConfigError("Forbidden: only with --mode fill", field="--fill-factor")
    if factor is not None and not (math.isfinite(factor) and factor > 0):
        raise ConfigError(f"Invalid value: {factor:g}: must be greater than 0", field="--fill-factor")
    version = str(parse_version(args.emulated_version)) if args.emulated_version else ""
    if args.node_pods < 1:
        raise ConfigError(f"Invalid value: {args.node_pods}: must be greater than or equal to 1", field="--node-pods")
    return Options(mode=args.mode, seed=args.seed, fill_factor=FILL_FACTOR if factor is None else factor,
                   shared_gpu=args.shared_gpu, gangs=args.gangs, gang_api=args.gang_api, node_pods=args.node_pods,
                   emulated_version=version)


def cmd_trace(args: argparse.Namespace) -> int:
    """``kubesched trace``: the manifests on stdout or in ``--out``."""
    opts = options_from_args(args)
    if not args.out:
        write(sys.stdout, args.nodes, args.pods, opts)  # a closed pipe: cli.main ends quietly
        sys.stdout.flush()
        return 0
    try:
        with open_output(args.out) as out:
            write(out, args.nodes, args.pods, opts)
    except OSError as e:
        raise ConfigError(f"cannot write: {e.strerror or e}", source=args.out) from None
    return 0
