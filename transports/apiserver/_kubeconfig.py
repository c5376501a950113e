"""A kubeconfig for a server on 127.0.0.1 (plain HTTP, no credentials)."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

__all__ = ["write_kubeconfig"]


def write_kubeconfig(
    path: str | os.PathLike[str], url: str, *, name: str = "kubesched", namespace: str = "default"
) -> Path:
    """Write a kubeconfig whose current context points at ``url``; returns the path.

    The file is created with mode 0600, as kubectl writes its own.
    """
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": name, "cluster": {"server": url}}],
        "users": [{"name": name, "user": {}}],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": name, "namespace": namespace}}
        ],
        "current-context": name,
    }
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        yaml.safe_dump(config, f, sort_keys=False)
    return p
