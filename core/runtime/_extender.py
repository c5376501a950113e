"""Scheduler extenders: upstream's HTTP JSON protocol (``pkg/scheduler/extender.go``).

An extender is an HTTP service the scheduler calls at four points of a pod's life, each one a
``POST <urlPrefix>/<verb>`` with a JSON body (the ``k8s.io/kube-scheduler/extender/v1`` types)::

    Filter      after the Filter plugins, in config order, each on the nodes the previous left
                ExtenderArgs ─► ExtenderFilterResult (nodes kept, failedNodes,
                failedAndUnresolvableNodes, error)
    Prioritize  after the Score plugins, all extenders concurrently; errors are ignored
                ExtenderArgs ─► HostPriorityList; total += score × weight × (100 / 10)
    Preempt     inside DefaultPreemption (callExtenders), on the dry run's candidates
                ExtenderPreemptionArgs ─► ExtenderPreemptionResult (victims by UID)
    Bind        the first interested binder extender binds instead of the Bind plugins
                ExtenderBindingArgs ─► ExtenderBindingResult

The v1 types carry no JSON tags, so on the wire the field names are Go's (``Pod``, ``Nodes``,
``NodeNames``, ``FailedNodes``, ``Host``, ``Score``, ``PodUID``, ...) around the camelCase API
objects, and, like Go's ``encoding/json``, answers are read with case-insensitive field names.
Only ``nodeCacheCapable: false`` is supported: the full Node objects go in ``Nodes.items``.

A pod interests an extender that manages no resources, or one of whose ``managedResources`` the
pod requests or limits in a container or an init container.  An ``ignorable`` extender's errors
(unreachable, timeout, non-200, an ``error`` in the answer) are logged and skipped.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio
import httpx
import msgspec
import numpy as np

from kubesched._errors import KubeschedError
from kubesched.api._objects import Node, Pod
from kubesched.config._extender_config import (
    DEFAULT_EXTENDER_TIMEOUT,
    ExtenderConfig,
    ignored_extended_resources,
    parse_extender_config,
    parse_extenders,
)

if TYPE_CHECKING:
    from kubesched.config._config import ProfileConfig
    from kubesched.runtime._nodeinfo import NodeBatch, NodeInfo

log = logging.getLogger("kubesched.extender")

MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10
EXTENDER_NAME = "Extender"  # framework.ExtenderName, put in UnschedulablePlugins


class ExtenderError(KubeschedError):
    """An extender call failed: unreachable, timed out, non-200, or it answered an error."""


def with_ignored_resources(prof: ProfileConfig, ignored: Sequence[str]) -> ProfileConfig:
    """``buildExtenders``: NodeResourcesFit's ``ignoredResources`` become the extenders' ignored
    resources (upstream replaces the list)."""
    if not ignored:
        return prof
    args = dict(prof.plugin_args)
    fit = dict(args.get("NodeResourcesFit") or {})
    fit["ignoredResources"] = list(ignored)
    args["NodeResourcesFit"] = fit
    return replace(prof, plugin_args=args)


# --- wire format -----------------------------------------------------------------------------


class _NodeList(msgspec.Struct, kw_only=True):
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    items: list[Node] = msgspec.field(default_factory=list)


class ExtenderArgs(msgspec.Struct, rename="pascal", kw_only=True):
    """``extenderv1.ExtenderArgs``: the pod and the candidate nodes (full objects)."""

    pod: Pod
    nodes: _NodeList | None = None
    node_names: list[str] | None = None


class Victims(msgspec.Struct, kw_only=True):
    """``extenderv1.Victims``."""

    pods: list[Pod] = msgspec.field(name="Pods", default_factory=list)
    num_pdb_violations: int = msgspec.field(name="NumPDBViolations", default=0)


class ExtenderPreemptionArgs(msgspec.Struct, rename="pascal", kw_only=True):
    """``extenderv1.ExtenderPreemptionArgs`` (``NodeNameToVictims``: nodeCacheCapable false)."""

    pod: Pod
    node_name_to_victims: dict[str, Victims] | None = None
    node_name_to_meta_victims: dict[str, Any] | None = None


class ExtenderBindingArgs(msgspec.Struct, kw_only=True):
    """``extenderv1.ExtenderBindingArgs``."""

    pod_name: str = msgspec.field(name="PodName")
    pod_namespace: str = msgspec.field(name="PodNamespace")
    pod_uid: str = msgspec.field(name="PodUID")
    node: str = msgspec.field(name="Node")


def _get(d: Any, key: str) -> Any:
    """A field of a decoded JSON object, matched like Go's encoding/json (exact, then any case)."""
    if not isinstance(d, Mapping):
        return None
    if key in d:
        return d[key]
    low = key.lower()
    for k, v in d.items():
        if isinstance(k, str) and k.lower() == low:
            return v
    return None


def _str_map(v: Any, what: str) -> dict[str, str]:
    if v is None:
        return {}
    if not isinstance(v, Mapping) or not all(isinstance(x, str) for x in v.values()):
        raise ExtenderError(
            f"json: cannot unmarshal {what} into Go struct field of type map[string]string"
        )
    return dict(v)


# --- the extender ----------------------------------------------------------------------------


class HTTPExtender:
    """``HTTPExtender``: an extender reached over HTTP(S); one instance per ``extenders[i]``.

    Every call is async (httpx over anyio, so it runs on asyncio and trio); the client is made
    on first use and closed by :meth:`aclose` (the scheduler does it when it stops).
    """

    def __init__(self, config: ExtenderConfig | Mapping[str, Any]) -> None:
        if not isinstance(config, ExtenderConfig):
            config = parse_extender_config(config, "extender")
        self.config = config
        self.url_prefix = config.url_prefix
        self.filter_verb = config.filter_verb
        self.prioritize_verb = config.prioritize_verb
        self.preempt_verb = config.preempt_verb
        self.bind_verb = config.bind_verb
        self.weight = config.weight
        self.timeout = config.http_timeout
        self.managed_resources = frozenset(config.managed_resources)
        self.ignorable = config.ignorable
        self._client: httpx.AsyncClient | None = None

    @property
    def name(self) -> str:
        """``Name()``: the URL prefix identifies the extender."""
        return self.url_prefix

    def __repr__(self) -> str:
        return f"HTTPExtender({self.url_prefix!r})"

    # --- what it does ------------------------------------------------------------------------
    def is_ignorable(self) -> bool:
        return self.ignorable

    def supports_preemption(self) -> bool:
        return bool(self.preempt_verb)

    def is_binder(self) -> bool:
        return bool(self.bind_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.prioritize_verb)

    def is_filter(self) -> bool:
        return bool(self.filter_verb)

    def is_interested(self, pod: Pod) -> bool:
        """``IsInterested``: no managed resources, or the pod requests / limits one of them."""
        if not self.managed_resources:
            return True
        return self._has_managed(pod.spec.containers) or self._has_managed(pod.spec.init_containers)

    def _has_managed(self, containers: Sequence[Any]) -> bool:
        managed = self.managed_resources
        for c in containers:
            res = c.resources
            if res.requests and any(r in managed for r in res.requests):
                return True
            if res.limits and any(r in managed for r in res.limits):
                return True
        return False

    # --- verbs -------------------------------------------------------------------------------
    async def filter(
        self, pod: Pod, nodes: NodeBatch
    ) -> tuple[NodeBatch, dict[str, str], dict[str, str]]:
        """``Filter``: (the nodes kept, failedNodes, failedAndUnresolvableNodes)."""
        if not self.filter_verb:
            return nodes, {}, {}
        args = ExtenderArgs(
            pod=pod, nodes=_NodeList(items=[ni.node for ni in nodes if ni.node is not None])
        )
        result = await self._send(self.filter_verb, args)
        err = _get(result, "Error")
        if err:
            raise ExtenderError(str(err))
        failed = _str_map(_get(result, "FailedNodes"), "FailedNodes")
        unresolvable = _str_map(
            _get(result, "FailedAndUnresolvableNodes"), "FailedAndUnresolvableNodes"
        )
        node_list = _get(result, "Nodes")
        items = _get(node_list, "items") if node_list is not None else None
        position = {name: i for i, name in enumerate(nodes.names)}
        kept: list[int] = []
        for item in items or ():
            name = _get(_get(item, "metadata"), "name")
            if name not in position:
                raise ExtenderError(
                    f'extender "{self.url_prefix}" claims a filtered node "{name}" which is not found in '
                    "the input node list"
                )
            kept.append(position[name])
        return nodes.subset(np.array(kept, dtype=np.int64)), failed, unresolvable

    async def prioritize(self, pod: Pod, nodes: NodeBatch) -> tuple[list[tuple[str, int]], int]:
        """``Prioritize``: ([(host, score)], weight); without a verb, every node scores 0."""
        if not self.prioritize_verb:
            return [(n, 0) for n in nodes.names], 0
        args = ExtenderArgs(
            pod=pod, nodes=_NodeList(items=[ni.node for ni in nodes if ni.node is not None])
        )
        result = await self._send(self.prioritize_verb, args)
        if result is None:
            return [], self.weight
        if not isinstance(result, list):
            raise ExtenderError(
                "json: cannot unmarshal object into Go value of type v1.HostPriorityList"
            )
        out: list[tuple[str, int]] = []
        for hp in result:
            host, score = _get(hp, "Host"), _get(hp, "Score")
            if not isinstance(host, str) or not isinstance(score, int) or isinstance(score, bool):
                raise ExtenderError(
                    f"json: cannot unmarshal {hp!r} into Go value of type v1.HostPriority"
                )
            out.append((host, score))
        return out, self.weight

    async def process_preemption(
        self, pod: Pod, victims: Mapping[str, Any], snapshot: Any
    ) -> dict[str, Any]:
        """``ProcessPreemption``: the candidates (``{node: Candidate}``) the extender keeps, with the
        victims it names by UID resolved against ``snapshot``."""
        from kubesched.preemption import Candidate

        if not self.preempt_verb:
            raise ExtenderError(
                f"preempt verb is not defined for extender {self.url_prefix} but run into ProcessPreemption"
            )
        args = ExtenderPreemptionArgs(
            pod=pod,
            node_name_to_victims={
                node: Victims(pods=list(c.victims), num_pdb_violations=c.num_pdb_violations)
                for node, c in victims.items()
            },
        )
        result = await self._send(self.preempt_verb, args)
        meta = _get(result, "NodeNameToMetaVictims") or {}
        if not isinstance(meta, Mapping):
            raise ExtenderError(
                "json: cannot unmarshal NodeNameToMetaVictims into map[string]*v1.MetaVictims"
            )
        out: dict[str, Any] = {}
        for node, mv in meta.items():
            ni: NodeInfo | None = snapshot.get(node)
            if ni is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node}"')
            if mv is None:
                out[node] = None
                continue
            pods: list[Pod] = []
            for mp in _get(mv, "Pods") or ():
                uid = _get(mp, "UID")
                found = next((p.pod for p in ni.pods if p.uid == uid), None)
                if found is None:
                    raise ExtenderError(
                        f"extender: {self.url_prefix} claims to preempt pod (UID: &{{{uid}}}) on node: {node}, "
                        "but the pod is not found on that node"
                    )
                pods.append(found)
            out[node] = Candidate(node, pods, int(_get(mv, "NumPDBViolations") or 0))
        return out

    async def bind(self, pod: Pod, node: str) -> None:
        """``Bind``: the extender binds the pod (and is responsible for the API write)."""
        if not self.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        md = pod.metadata
        args = ExtenderBindingArgs(
            pod_name=md.name, pod_namespace=md.namespace, pod_uid=md.uid, node=node
        )
        result = await self._send(self.bind_verb, args)
        err = _get(result, "Error")
        if err:
            raise ExtenderError(str(err))

    # --- transport ---------------------------------------------------------------------------
    def _verify(self) -> ssl.SSLContext | bool:
        """``makeTransport``: insecure when asked, or with HTTPS and no CA; else the CA given."""
        tls = self.config.tls_config
        ca_file, ca_data = tls.get("caFile") or "", tls.get("caData") or ""
        if tls.get("insecure") or (self.config.enable_https and not (ca_file or ca_data)):
            return False
        if not (ca_file or ca_data or tls.get("certFile") or tls.get("certData")):
            # plain HTTP (no redirect is followed) never uses TLS: no CA bundle loaded (30-40 ms)
            return not self.url_prefix.startswith("http:")
        ctx = ssl.create_default_context(cafile=ca_file or None, cadata=ca_data or None)
        if tls.get("certFile"):
            ctx.load_cert_chain(tls["certFile"], tls.get("keyFile") or None)
        return ctx

    async def _send(self, action: str, args: msgspec.Struct) -> Any:
        url = self.url_prefix.rstrip("/") + "/" + action
        if self._client is None:
            self._client = httpx.AsyncClient(verify=self._verify(), timeout=None)
        body = msgspec.json.encode(args)
        try:
            with anyio.fail_after(self.timeout):
                resp = await self._client.post(
                    url, content=body, headers={"Content-Type": "application/json"}
                )
        except TimeoutError:
            raise ExtenderError(
                f'Post "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
            ) from None
        except httpx.HTTPError as e:
            raise ExtenderError(f'Post "{url}": {e or type(e).__name__}') from e
        if resp.status_code != 200:
            raise ExtenderError(
                f"failed {action} with extender at URL {url}, code {resp.status_code}"
            )
        try:
            return msgspec.json.decode(resp.content)
        except msgspec.DecodeError as e:
            raise ExtenderError(f"decoding the answer of {url}: {e}") from e

    async def aclose(self) -> None:
        """Close the HTTP client (idempotent)."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


def build_extenders(configs: Sequence[ExtenderConfig | Mapping[str, Any]]) -> list[HTTPExtender]:
    """``buildExtenders``: one HTTPExtender per configured extender, in order."""
    if all(isinstance(c, Mapping) for c in configs):
        configs = parse_extenders(list(configs))
    return [HTTPExtender(c) for c in configs]


__all__ = [
    "DEFAULT_EXTENDER_TIMEOUT",
    "EXTENDER_NAME",
    "MAX_EXTENDER_PRIORITY",
    "ExtenderConfig",
    "ExtenderError",
    "HTTPExtender",
    "build_extenders",
    "ignored_extended_resources",
    "parse_extenders",
    "with_ignored_resources",
]
