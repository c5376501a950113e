"""The fake cluster served over the Kubernetes REST API, so that real clients (kubectl, the
official Python client, kubesched's own ``kube`` transport) can drive a simulation.

    async with FakeCluster() as cluster, APIServer(cluster) as server:
        write_kubeconfig("kubeconfig", server.url)
        ...  # kubectl --kubeconfig kubeconfig get pods -o wide

Serving a set of manifests until cancelled (what ``kubesched fake-apiserver`` does) is
:func:`kubesched.cli.fake_apiserver.serve_manifests`.
"""

from __future__ import annotations

from ._kubeconfig import write_kubeconfig
from ._server import APIServer

__all__ = ["APIServer", "write_kubeconfig"]
