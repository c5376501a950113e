"""Where the live transport finds its API server and credentials: kubeconfig files (tokens, token
files, client certificates, CAs, exec credential plugins), in-cluster service accounts, --server;
credentials never shown."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml

from kubesched import ConfigError
from kubesched.transports.kube import (
    ClusterConfig,
    KubeTransport,
    in_cluster_config,
    load_config,
    load_kubeconfig,
)

pytestmark = pytest.mark.anyio


def write_kubeconfig(
    path: Path,
    *,
    cluster: dict[str, Any],
    user: dict[str, Any] | None = None,
    namespace: str | None = None,
) -> Path:
    ctx: dict[str, Any] = {"cluster": "c"}
    if user is not None:
        ctx["user"] = "u"
    if namespace:
        ctx["namespace"] = namespace
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": cluster}],
        "contexts": [{"name": "ctx", "context": ctx}],
        "users": [{"name": "u", "user": user}] if user is not None else [],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def test_token_user(tmp_path: Path) -> None:
    kc = write_kubeconfig(
        tmp_path / "config",
        cluster={"server": "https://k:6443/"},
        user={"token": "s3cret"},
        namespace="team",
    )
    cfg = load_kubeconfig(kc)
    assert cfg.server == "https://k:6443"
    assert cfg.namespace == "team"
    assert cfg.auth_kind() == "token"
    assert "s3cret" not in repr(cfg) and "s3cret" not in repr(cfg.auth())
    assert "context ctx" in cfg.source


def test_tls_verification_is_on_by_default(tmp_path: Path) -> None:
    cfg = load_kubeconfig(write_kubeconfig(tmp_path / "config", cluster={"server": "https://k"}))
    ctx = cfg.ssl_context()
    import ssl

    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    insecure = load_kubeconfig(
        write_kubeconfig(
            tmp_path / "c2", cluster={"server": "https://k", "insecure-skip-tls-verify": True}
        )
    )
    assert insecure.ssl_context().verify_mode == ssl.CERT_NONE


def test_token_file_is_relative_to_the_kubeconfig(tmp_path: Path) -> None:
    (tmp_path / "tok").write_text("t1\n")
    cfg = load_kubeconfig(
        write_kubeconfig(
            tmp_path / "config", cluster={"server": "http://k"}, user={"tokenFile": "tok"}
        )
    )
    assert cfg.token_file == str(tmp_path / "tok")
    assert cfg.auth_kind() == "token-file"


def test_missing_and_broken_files_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_kubeconfig(tmp_path / "nope")
    bad = write_kubeconfig(tmp_path / "config", cluster={"server": "http://k"})
    with pytest.raises(ConfigError, match="other"):
        load_kubeconfig(bad, context="other")


def test_in_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "namespace").write_text("kubesched")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    cfg = in_cluster_config(tmp_path)
    assert cfg.server == "https://[fd00::1]:443"
    assert cfg.namespace == "kubesched"
    assert cfg.token_file == str(tmp_path / "token") and cfg.auth_kind() == "token-file"
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST")
    with pytest.raises(ConfigError, match="not running in a cluster"):
        in_cluster_config(tmp_path)


def test_load_config_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kc = write_kubeconfig(
        tmp_path / "config", cluster={"server": "https://from-file"}, user={"token": "t"}
    )
    assert load_config(kubeconfig=kc).server == "https://from-file"
    both = load_config(kubeconfig=kc, server="https://override")
    assert both.server == "https://override" and both.token == "t"
    only = load_config(server="http://127.0.0.1:8080/")
    assert only.server == "http://127.0.0.1:8080" and only.auth_kind() == "none"
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{kc}")
    assert load_config().server == "https://from-file"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    d = tmp_path_factory.mktemp("pki")

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    run(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=test-ca",
    )
    run(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "client.key",
        "-out",
        "client.csr",
        "-subj",
        "/CN=kubesched/O=system:kube-scheduler",
    )
    run(
        "x509",
        "-req",
        "-in",
        "client.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "client.crt",
        "-days",
        "2",
    )
    return d


def test_client_certificate_files_and_data(tmp_path: Path, pki: Path) -> None:
    by_file = load_kubeconfig(
        write_kubeconfig(
            tmp_path / "a",
            cluster={"server": "https://k", "certificate-authority": str(pki / "ca.crt")},
            user={
                "client-certificate": str(pki / "client.crt"),
                "client-key": str(pki / "client.key"),
            },
        )
    )
    assert by_file.auth_kind() == "client-certificate" and by_file.auth() is None
    assert len(by_file.ssl_context().get_ca_certs()) == 1

    def b64(name: str) -> str:
        return base64.b64encode((pki / name).read_bytes()).decode()

    by_data = load_kubeconfig(
        write_kubeconfig(
            tmp_path / "b",
            cluster={"server": "https://k", "certificate-authority-data": b64("ca.crt")},
            user={
                "client-certificate-data": b64("client.crt"),
                "client-key-data": b64("client.key"),
            },
        )
    )
    ctx = by_data.ssl_context()
    assert [c["subject"] for c in ctx.get_ca_certs()] == [((("commonName", "test-ca"),),)]
    assert not list(tmp_path.glob("kubesched-*"))  # the key never stays on disk

    broken = ClusterConfig(server="https://k", client_cert_data=b"junk", client_key_data=b"junk")
    with pytest.raises(ConfigError, match="client certificate"):
        broken.ssl_context()


# --- exec credential plugins ----------------------------------------------------------------------

PLUGIN = textwrap.dedent(
    """\
    import json, os, sys
    info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
    count_file = sys.argv[1]
    n = int(open(count_file).read()) + 1 if os.path.exists(count_file) else 1
    open(count_file, "w").write(str(n))
    if os.environ.get("FAIL"):
        print("error: you are not logged in", file=sys.stderr)
        sys.exit(3)
    status = {"token": f"exec-token-{n}"}
    if os.environ.get("EXPIRY"):
        status["expirationTimestamp"] = os.environ["EXPIRY"]
    print(json.dumps({"apiVersion": info["apiVersion"], "kind": "ExecCredential", "status": status}))
    """
)


def exec_kubeconfig(tmp_path: Path, **env: str) -> Path:
    script = tmp_path / "plugin.py"
    script.write_text(PLUGIN)
    return write_kubeconfig(
        tmp_path / "config",
        cluster={"server": "http://k"},
        user={
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": sys.executable,
                "args": [str(script), str(tmp_path / "count")],
                "env": [{"name": k, "value": v} for k, v in env.items()],
            }
        },
    )


def recorder(seen: list[str], *, reject: set[str] = frozenset()) -> httpx.MockTransport:  # type: ignore[assignment]
    def handler(r: httpx.Request) -> httpx.Response:
        token = r.headers.get("authorization", "")
        seen.append(token)
        if token.removeprefix("Bearer ") in reject:
            return httpx.Response(
                401, json={"kind": "Status", "code": 401, "message": "Unauthorized"}
            )
        return httpx.Response(200, json={"items": [], "metadata": {"resourceVersion": "1"}})

    return httpx.MockTransport(handler)


async def test_exec_plugin_token_is_cached(tmp_path: Path) -> None:
    cfg = load_kubeconfig(exec_kubeconfig(tmp_path))
    assert cfg.auth_kind() == "exec"
    seen: list[str] = []
    async with KubeTransport(cfg, http_transport=recorder(seen)) as t:
        await t.api.request("GET", "/api/v1/nodes")
        await t.api.request("GET", "/api/v1/nodes")
    assert seen == ["Bearer exec-token-1", "Bearer exec-token-1"]
    assert (tmp_path / "count").read_text() == "1"


async def test_exec_plugin_runs_again_on_401(tmp_path: Path) -> None:
    cfg = load_kubeconfig(exec_kubeconfig(tmp_path))
    seen: list[str] = []
    async with KubeTransport(cfg, http_transport=recorder(seen, reject={"exec-token-1"})) as t:
        await t.api.request("GET", "/api/v1/nodes")
    assert seen == ["Bearer exec-token-1", "Bearer exec-token-2"]


async def test_exec_plugin_expired_token_is_refreshed(tmp_path: Path) -> None:
    cfg = load_kubeconfig(exec_kubeconfig(tmp_path, EXPIRY="2000-01-01T00:00:00Z"))
    seen: list[str] = []
    async with KubeTransport(cfg, http_transport=recorder(seen)) as t:
        await t.api.request("GET", "/api/v1/nodes")
        await t.api.request("GET", "/api/v1/nodes")
    assert seen == ["Bearer exec-token-1", "Bearer exec-token-2"]


async def test_exec_plugin_failure_is_reported_without_secrets(tmp_path: Path) -> None:
    cfg = load_kubeconfig(exec_kubeconfig(tmp_path, FAIL="1"))
    seen: list[str] = []
    async with KubeTransport(cfg, http_transport=recorder(seen)) as t:
        with pytest.raises(Exception, match="exited with 3: error: you are not logged in"):
            await t.api.request("GET", "/api/v1/nodes", retry=False)
    assert seen == []


async def test_exec_plugin_env_and_exec_info(tmp_path: Path) -> None:
    script = tmp_path / "p.py"
    script.write_text(
        "import json, os\n"
        "info = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
        "assert info == {'apiVersion': 'client.authentication.k8s.io/v1beta1', 'kind': 'ExecCredential',"
        " 'spec': {'interactive': False}}, info\n"
        "print(json.dumps({'apiVersion': info['apiVersion'], 'kind': 'ExecCredential',"
        " 'status': {'token': os.environ['MY_TOKEN']}}))\n"
    )
    kc = write_kubeconfig(
        tmp_path / "config",
        cluster={"server": "http://k"},
        user={
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": sys.executable,
                "args": [str(script)],
                "env": [{"name": "MY_TOKEN", "value": "from-env"}],
            }
        },
    )
    seen: list[str] = []
    async with KubeTransport(load_kubeconfig(kc), http_transport=recorder(seen)) as t:
        await t.api.request("GET", "/api/v1/nodes")
    assert seen == ["Bearer from-env"]
    assert json.dumps(seen)  # plain strings


def test_unknown_exec_api_version(tmp_path: Path) -> None:
    kc = write_kubeconfig(
        tmp_path / "config",
        cluster={"server": "http://k"},
        user={"exec": {"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "x"}},
    )
    with pytest.raises(ConfigError, match="not supported"):
        load_kubeconfig(kc).auth()


async def test_token_file_is_reread_after_a_minute(tmp_path: Path) -> None:
    tok = tmp_path / "token"
    tok.write_text("t1")
    seen: list[str] = []
    cfg = ClusterConfig(server="http://k", token_file=str(tok))
    async with KubeTransport(cfg, http_transport=recorder(seen)) as t:
        await t.api.request("GET", "/api/v1/nodes")
        tok.write_text("t2")
        await t.api.request("GET", "/api/v1/nodes")
        await anyio.sleep(61)
        await t.api.request("GET", "/api/v1/nodes")
    assert seen == ["Bearer t1", "Bearer t1", "Bearer t2"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", "{path}: invalid configuration: no configuration has been provided, try setting "
                     "KUBERNETES_MASTER environment variable", id="empty (client-go clientcmd ErrEmptyConfig)"),
        pytest.param("# only a comment\n", "{path}: invalid configuration: no configuration has been provided, try setting "
                     "KUBERNETES_MASTER environment variable", id="comments only"),
        pytest.param("- a\n- b\n", 'error loading config file "{path}": couldn\'t get version/kind; json parse error: json: '
                     'cannot unmarshal array into Go value of type struct {{ APIVersion string "json:\\"apiVersion,omitempty\\""; '
                     'Kind string "json:\\"kind,omitempty\\"" }}', id="a list (apimachinery's json serializer)"),
    ],
)
def test_a_kubeconfig_that_is_not_one_is_kubectls_line(tmp_path: Path, text: str, message: str) -> None:
    """Issue 38 item 12: an empty or list-shaped kubeconfig is kubectl's one-line error, not a traceback."""
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_kubeconfig(path)
    assert str(info.value) == message.format(path=path)
