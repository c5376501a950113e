"""Request authentication: bearer tokens, rotating token files, exec credential plugins.

An exec plugin (``users[].user.exec`` in a kubeconfig: ``aws eks get-token``, ``gke-gcloud-auth-
plugin``, ``kubelogin``...) is run through ``anyio.run_process`` (so it works on asyncio and
trio), with ``KUBERNETES_EXEC_INFO`` set as client-go does; its ExecCredential is cached until
its ``expirationTimestamp`` and run again on a 401.  Tokens never appear in logs or errors.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncGenerator, Generator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import anyio
import httpx
import msgspec

from kubesched import ConfigError, UnavailableError

EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
TOKEN_FILE_REFRESH = 60.0  # client-go re-reads a token file at most once a minute
EXPIRY_SLACK = 10.0  # refresh an exec credential this many seconds before it expires

__all__ = ["BearerAuth", "ExecConfig", "ExecCredentialAuth", "TokenFileAuth"]


class BearerAuth(httpx.Auth):
    """``Authorization: Bearer <token>``."""

    def __init__(self, token: str) -> None:
        self._token = token

    def __repr__(self) -> str:
        return "BearerAuth(<redacted>)"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token}"
        yield request


class TokenFileAuth(httpx.Auth):
    """A bearer token read from a file, re-read at most once a minute (projected service
    account tokens rotate)."""

    def __init__(self, path: str, *, initial: str | None = None) -> None:
        self._path = path
        self._token = initial
        self._read_at: float | None = None

    def __repr__(self) -> str:
        return f"TokenFileAuth({self._path!r})"

    def _current(self) -> str:
        now = anyio.current_time()
        if (
            self._token is None
            or self._read_at is None
            or now - self._read_at >= TOKEN_FILE_REFRESH
        ):
            try:
                self._token = Path(self._path).read_text().strip()
            except OSError as e:
                if self._token is None:
                    raise ConfigError(
                        f"cannot read the token file: {e.strerror}", source=self._path
                    ) from None
            self._read_at = now
        assert self._token is not None
        return self._token

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        request.headers["Authorization"] = f"Bearer {self._current()}"
        yield request

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("TokenFileAuth works with httpx.AsyncClient only")


@dataclass(kw_only=True)
class ExecConfig:
    """A kubeconfig ``exec`` stanza."""

    api_version: str
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict, repr=False)
    base_dir: str = ""
    """The kubeconfig's folder: a relative command path (``./bin/plugin``) is resolved there."""

    def argv(self) -> list[str]:
        cmd = self.command
        if self.base_dir and (cmd.startswith("./") or cmd.startswith("../")):
            cmd = str(Path(self.base_dir, cmd))
        return [cmd, *self.args]


class _ExecCredentialStatus(msgspec.Struct, rename="camel"):
    token: str = ""
    client_certificate_data: str = ""
    client_key_data: str = ""
    expiration_timestamp: str | None = None


class _ExecCredential(msgspec.Struct, rename="camel"):
    api_version: str = ""
    kind: str = ""
    status: _ExecCredentialStatus | None = None


class ExecCredentialAuth(httpx.Auth):
    """Bearer tokens from an exec credential plugin, cached until they expire."""

    def __init__(self, config: ExecConfig, *, server: str = "") -> None:
        if config.api_version not in EXEC_API_VERSIONS:
            raise ConfigError(
                f"exec plugin apiVersion {config.api_version!r} is not supported "
                f"(expected one of {', '.join(EXEC_API_VERSIONS)})"
            )
        self._config = config
        self._server = server
        self._token: str | None = None
        self._expiry: float | None = None  # Unix seconds
        self._lock: anyio.Lock | None = None
        self.runs = 0
        """How many times the plugin ran (for tests and diagnostics)."""

    def __repr__(self) -> str:
        return f"ExecCredentialAuth({self._config.command!r})"

    def _valid(self) -> bool:
        if self._token is None:
            return False
        return self._expiry is None or self._expiry - time.time() > EXPIRY_SLACK

    async def token(self, *, force: bool = False) -> str:
        """The cached token, or a fresh one from the plugin."""
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if force or not self._valid():
                await self._run()
            assert self._token is not None
            return self._token

    async def _run(self) -> None:
        cfg = self._config
        info = msgspec.json.encode(
            {
                "apiVersion": cfg.api_version,
                "kind": "ExecCredential",
                "spec": {"interactive": False},
            }
        ).decode()
        env = {**os.environ, **cfg.env, "KUBERNETES_EXEC_INFO": info}
        argv = cfg.argv()
        try:
            proc = await anyio.run_process(argv, env=env, check=False)
        except OSError as e:
            raise ConfigError(
                f"cannot run the exec credential plugin: {e.strerror or e}", source=cfg.command
            ) from None
        self.runs += 1
        if proc.returncode != 0:
            lines = proc.stderr.decode(errors="replace").strip().splitlines()
            detail = f": {lines[-1][:200]}" if lines else ""
            raise UnavailableError(
                f"exec credential plugin {cfg.command!r} exited with {proc.returncode}{detail}"
            )
        try:
            cred = msgspec.json.decode(proc.stdout, type=_ExecCredential)
        except msgspec.DecodeError as e:
            raise ConfigError(
                f"the exec credential plugin printed no valid ExecCredential ({e})",
                source=cfg.command,
            ) from None
        if cred.kind != "ExecCredential" or cred.api_version != cfg.api_version:
            raise ConfigError(
                f"the exec credential plugin answered {cred.api_version}/{cred.kind}, "
                f"expected {cfg.api_version}/ExecCredential",
                source=cfg.command,
            )
        st = cred.status
        if st is None or not st.token:
            raise ConfigError(
                "the exec credential plugin gave no token (client certificates from exec plugins are "
                "not supported)",
                source=cfg.command,
            )
        self._token = st.token
        self._expiry = None
        if st.expiration_timestamp:
            try:
                self._expiry = datetime.fromisoformat(st.expiration_timestamp).timestamp()
            except ValueError:
                raise ConfigError(
                    f"bad expirationTimestamp {st.expiration_timestamp!r}", source=cfg.command
                ) from None

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        request.headers["Authorization"] = f"Bearer {await self.token()}"
        response = yield request
        if response.status_code == 401:
            # the credential was revoked or expired early: ask the plugin once more
            await response.aread()
            request.headers["Authorization"] = f"Bearer {await self.token(force=True)}"
            yield request

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("ExecCredentialAuth works with httpx.AsyncClient only")
