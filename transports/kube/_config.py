"""Where the API server is and how to authenticate to it: kubeconfig, in-cluster, or ``--server``.

kubeconfig files are parsed by lightkube's loader (``lightkube.config.kubeconfig``); the result is
turned into a :class:`ClusterConfig` that builds the httpx pieces: an ``ssl.SSLContext`` (TLS
verification on unless the kubeconfig says ``insecure-skip-tls-verify``) and an ``httpx.Auth``
(static token, token file re-read as it rotates, basic auth, or an exec credential plugin run
through ``anyio.run_process``).

Credentials never appear in ``repr()``, in log lines or in error messages.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from kubesched import ConfigError

from ._auth import BearerAuth, ExecConfig, ExecCredentialAuth, TokenFileAuth

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
DEFAULT_KUBECONFIG = "~/.kube/config"

__all__ = ["ClusterConfig", "ExecConfig", "in_cluster_config", "load_config", "load_kubeconfig"]


@dataclass(repr=False, kw_only=True)
class ClusterConfig:
    """One API server and one identity.  Build it with :func:`load_config` (or the loaders
    below); every field may also be set by hand (tests, embedding)."""

    server: str
    """Base URL, e.g. ``https://10.0.0.1:6443`` or ``http://127.0.0.1:8080``."""
    namespace: str = "default"
    token: str | None = None
    token_file: str | None = None
    username: str | None = None
    password: str | None = None
    exec: ExecConfig | None = None
    ca_file: str | None = None
    ca_data: bytes | None = None
    """PEM bytes of the certificate authorities to trust."""
    client_cert_file: str | None = None
    client_key_file: str | None = None
    client_cert_data: bytes | None = None
    client_key_data: bytes | None = None
    insecure_skip_tls_verify: bool = False
    source: str = field(default="")
    """Where this came from (a kubeconfig path and context, ``in-cluster``, ``--server``)."""

    def __repr__(self) -> str:
        return f"ClusterConfig(server={self.server!r}, auth={self.auth_kind()!r}, source={self.source!r})"

    def auth_kind(self) -> str:
        """How requests authenticate, without the secret: token, token-file, basic, exec, cert, none."""
        if self.exec is not None:
            return "exec"
        if self.token_file:
            return "token-file"
        if self.token:
            return "token"
        if self.username:
            return "basic"
        if self.client_cert_file or self.client_cert_data:
            return "client-certificate"
        return "none"

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context: the configured CAs (else the system's), the client certificate."""
        if self.insecure_skip_tls_verify:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            try:
                ctx = ssl.create_default_context(
                    cafile=self.ca_file or None,
                    cadata=self.ca_data.decode("ascii") if self.ca_data else None,
                )
            except (OSError, ssl.SSLError, ValueError) as e:
                raise ConfigError(
                    f"cannot load the certificate authority: {e}", source=self.source
                ) from None
        cert, key = self.client_cert_file, self.client_key_file
        if self.client_cert_data or self.client_key_data:
            _load_cert_data(ctx, self.client_cert_data, self.client_key_data, self.source)
        elif cert:
            try:
                ctx.load_cert_chain(cert, key or None)
            except (OSError, ssl.SSLError) as e:
                raise ConfigError(
                    f"cannot load the client certificate: {e}", source=self.source
                ) from None
        return ctx

    def auth(self) -> httpx.Auth | None:
        """The request authentication (None: TLS client certificate or no authentication)."""
        if self.exec is not None:
            return ExecCredentialAuth(self.exec, server=self.server)
        if self.token_file:
            return TokenFileAuth(self.token_file, initial=self.token)
        if self.token:
            return BearerAuth(self.token)
        if self.username:
            return httpx.BasicAuth(self.username, self.password or "")
        return None


def _load_cert_data(
    ctx: ssl.SSLContext, cert: bytes | None, key: bytes | None, source: str
) -> None:
    """``load_cert_chain`` takes files only: write the PEM to private temporary files, load,
    and remove them at once."""
    if not cert or not key:
        raise ConfigError(
            "client-certificate-data needs client-key-data (and the reverse)", source=source
        )
    with tempfile.TemporaryDirectory(prefix="kubesched-") as d:
        cpath, kpath = Path(d, "tls.crt"), Path(d, "tls.key")
        for path, data in ((cpath, cert), (kpath, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        try:
            ctx.load_cert_chain(str(cpath), str(kpath))
        except (OSError, ssl.SSLError) as e:
            raise ConfigError(f"cannot load the client certificate: {e}", source=source) from None


def _b64(data: str | None, what: str, source: str) -> bytes | None:
    if not data:
        return None
    try:
        return base64.b64decode(data, validate=False)
    except ValueError:
        raise ConfigError(f"{what} is not valid base64", source=source) from None


_GO_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "bool"}


def _check_kubeconfig_shape(path: str | os.PathLike[str], src: str) -> None:
    """What client-go's clientcmd says of a kubeconfig that is empty (``ErrEmptyConfig``) or not a
    mapping (apimachinery's json serializer, through kubectl's "error loading config file")."""
    from kubesched.api import parse_documents, read_text

    try:
        text = read_text(Path(path).expanduser())
    except (OSError, ValueError):
        return  # lightkube's own error for it, below
    docs = parse_documents(text, source=src)
    if not docs:
        raise ConfigError(
            "invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable",
            source=src,
        )
    data = docs[0][1]
    if not isinstance(data, dict):
        go = _GO_TYPES.get(type(data), "string")
        raise ConfigError(
            f"error loading config file {json.dumps(src)}: couldn't get version/kind; json parse error: json: cannot "
            f"unmarshal {go} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
            f"Kind string \"json:\\\"kind,omitempty\\\"\" }}"
        )


def load_kubeconfig(
    path: str | os.PathLike[str] | None = None, *, context: str | None = None
) -> ClusterConfig:
    """A kubeconfig file's context (the current one by default).

    ``path`` None: the first existing file of ``$KUBECONFIG`` (a ``:``-separated list), else
    ``~/.kube/config``.  Relative file paths inside are relative to the kubeconfig's folder.
    """
    from lightkube.config.kubeconfig import KubeConfig
    from lightkube.core.exceptions import ConfigError as LkConfigError

    if path is None:
        candidates = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
        existing = [p for p in candidates if Path(p).expanduser().is_file()]
        path = existing[0] if existing else DEFAULT_KUBECONFIG
    src = str(path)
    _check_kubeconfig_shape(path, src)
    try:
        single = KubeConfig.from_file(path).get(context)
    except LkConfigError as e:
        raise ConfigError(str(e), source=src) from None
    except (OSError, KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"not a valid kubeconfig ({type(e).__name__}: {e})", source=src) from None
    assert single is not None
    cluster, user = single.cluster, single.user

    def rel(p: str | None) -> str | None:
        return str(single.abs_file(p)) if p else None

    cfg = ClusterConfig(
        server=cluster.server.rstrip("/"),
        namespace=single.namespace,
        ca_file=rel(cluster.certificate_auth),
        ca_data=_b64(cluster.certificate_auth_data, "certificate-authority-data", src),
        insecure_skip_tls_verify=bool(cluster.insecure),
        source=f"{src} (context {single.context_name})",
    )
    if user is not None:
        cfg.token = user.token
        cfg.token_file = rel(user.token_file)
        cfg.username, cfg.password = user.username, user.password
        cfg.client_cert_file = rel(user.client_cert)
        cfg.client_key_file = rel(user.client_key)
        cfg.client_cert_data = _b64(user.client_cert_data, "client-certificate-data", src)
        cfg.client_key_data = _b64(user.client_key_data, "client-key-data", src)
        if user.exec is not None:
            ex = user.exec
            cfg.exec = ExecConfig(
                api_version=ex.apiVersion,
                command=ex.command,
                args=list(ex.args or []),
                env={e.name: e.value for e in ex.env or []},
                base_dir=str(Path(src).expanduser().parent),
            )
        if user.auth_provider:
            raise ConfigError(
                "auth-provider is not supported (it was removed from kubectl too): use an exec plugin",
                source=src,
            )
    return cfg


def in_cluster_config(
    service_account_dir: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR,
) -> ClusterConfig:
    """The pod's service account: ``$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT``, its
    CA and its (rotating) token file, as client-go's ``rest.InClusterConfig``."""
    host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise ConfigError("not running in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set")
    d = Path(service_account_dir)
    token_file = d / "token"
    try:
        token = token_file.read_text().strip()
    except OSError as e:
        raise ConfigError(
            f"cannot read the service account token: {e.strerror}", source=str(token_file)
        ) from None
    try:
        namespace = (d / "namespace").read_text().strip() or "default"
    except OSError:
        namespace = "default"
    if ":" in host:  # IPv6
        host = f"[{host}]"
    ca = d / "ca.crt"
    return ClusterConfig(
        server=f"https://{host}:{port}",
        namespace=namespace,
        token=token,
        token_file=str(token_file),
        ca_file=str(ca) if ca.is_file() else None,
        source="in-cluster",
    )


def load_config(
    *,
    kubeconfig: str | os.PathLike[str] | None = None,
    server: str | None = None,
    context: str | None = None,
) -> ClusterConfig:
    """The configuration ``kubesched run`` uses, as kube-scheduler's ``--kubeconfig`` / ``--master``:

    - ``kubeconfig`` given: that file (its server replaced by ``server`` when both are given);
    - only ``server``: that URL, no credentials (a local fake API server, ``kubectl proxy``);
    - neither: in-cluster when ``KUBERNETES_SERVICE_HOST`` is set, else ``$KUBECONFIG`` or
      ``~/.kube/config``.
    """
    if kubeconfig:
        cfg = load_kubeconfig(kubeconfig, context=context)
        if server:
            cfg.server = server.rstrip("/")
        return cfg
    if server:
        return ClusterConfig(server=server.rstrip("/"), source="--server")
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return in_cluster_config()
    return load_kubeconfig(None, context=context)
