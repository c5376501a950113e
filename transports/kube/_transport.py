"""``KubeTransport``: the scheduler's Transport over a live Kubernetes API server.

Use it with ``async with`` (it owns the task group its watches run in)::

    async with KubeTransport(load_config()) as transport:
        sched = Scheduler(transport, config)
        async with anyio.create_task_group() as tg:
            await tg.start(sched.run)

Writes, as kube-scheduler makes them:

- bind: ``POST pods/{name}/binding`` (201 with a Status).  A 409 means the pod is already
  bound: if it is bound to the same node (our own earlier attempt whose answer was lost), that
  is success; otherwise ConflictError — never a blind retry.  5xx and connection failures are
  retried (a retry of a bind that did land answers 409, which the check above resolves).
- status: ``PATCH pods/{name}/status``, a strategic merge patch
  ``{"status": {"conditions": [...], "nominatedNodeName": ...}}`` (conditions merge by type).
- delete: ``DELETE pods/{name}`` with ``{"preconditions": {"uid": ...}}``.
- annotations (``run --record-plugin-results``): ``PATCH pods/{name}``, a JSON merge patch
  ``{"metadata": {"annotations": {...}}}``.
- events: ``POST`` an events.k8s.io/v1 Event (best effort).
- volumes (VolumeBinding's PreBind): ``PUT persistentvolumes/{name}`` and
  ``PUT namespaces/{ns}/persistentvolumeclaims/{name}`` with the object's resourceVersion
  (409 → ConflictError, 404 → NotFoundError).  The structs declare only what the scheduler
  reads, so the object is first read whole (``GET``) and the struct laid over it: a field the
  struct does not know (a CSI secret reference, a data source ref) is sent back as it was, never
  dropped (upstream refuses a PersistentVolumeSource or claim spec that changes).
"""

from __future__ import annotations

import itertools
import logging
import random
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self
from urllib.parse import quote

import anyio
import anyio.abc
import httpx
import msgspec

from kubesched import ConflictError, Transport, WatchEvent
from kubesched.api import (
    Binding,
    Condition,
    Event,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodCondition,
    PodExtendedResourceClaimStatus,
    ResourceClaim,
    to_builtins,
)
from kubesched.transports._taskgroups import exit_task_group

from ._client import DEFAULT_BURST, DEFAULT_QPS, ApiClient
from ._config import ClusterConfig
from ._watch import RESOURCES, KubeWatch, Reflector, Resource

log = logging.getLogger("kubesched.kube")

__all__ = ["KubeTransport", "micro_time"]


def micro_time(ts: float) -> str:
    """A metav1.MicroTime: RFC 3339 with microseconds, UTC."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339(ts: float) -> str:
    """A metav1.Time: RFC 3339 to the second, UTC."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod_path(namespace: str, name: str) -> str:
    return f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(name, safe='')}"


def _pv_path(name: str) -> str:
    return f"/api/v1/persistentvolumes/{quote(name, safe='')}"


def _pvc_path(namespace: str, name: str) -> str:
    return f"/api/v1/namespaces/{quote(namespace, safe='')}/persistentvolumeclaims/{quote(name, safe='')}"


def _claim_path(namespace: str, name: str) -> str:
    return f"/apis/resource.k8s.io/v1/namespaces/{quote(namespace, safe='')}/resourceclaims/{quote(name, safe='')}"


def _laid_over(raw: Any, obj: msgspec.Struct) -> dict[str, Any]:
    """``raw`` (the object as the server holds it) with the struct's fields in place of its
    own: a declared field the struct leaves at an empty default is taken out (the struct says
    it is unset); a field the struct does not declare is kept as it is."""
    out: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
    for f in msgspec.structs.fields(obj):
        wire, value = f.encode_name, getattr(obj, f.name)
        if isinstance(value, msgspec.Struct):
            out[wire] = _laid_over(out.get(wire), value)
            continue
        default = f.default_factory() if f.default_factory is not msgspec.NODEFAULT else f.default
        if value == default and not default:  # an empty default: the struct says "unset"
            out.pop(wire, None)
        else:
            out[wire] = to_builtins(value)
    return out


_pod_decoder = msgspec.json.Decoder(Pod)
_pv_decoder = msgspec.json.Decoder(PersistentVolume)
_pvc_decoder = msgspec.json.Decoder(PersistentVolumeClaim)
_claim_decoder = msgspec.json.Decoder(ResourceClaim)


class KubeTransport(Transport):
    """The live API: list-then-watch of the five kinds, and the scheduler's writes.

    ``qps`` / ``burst``: the client-side rate limit (kube-scheduler's defaults, 50 / 100).
    ``http_transport``: an ``httpx.AsyncBaseTransport`` to send requests through (tests pass
    ``httpx.MockTransport``).  ``resources``: the kinds to watch (default: all five).
    """

    def __init__(
        self,
        config: ClusterConfig | str,
        *,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
        timeout: float = 30.0,
        max_retries: int = 5,
        http_transport: httpx.AsyncBaseTransport | None = None,
        resources: tuple[Resource, ...] = RESOURCES,
        min_watch_timeout: float = 300.0,
        page_size: int = 500,
        backoff_initial: float = 0.8,
        backoff_max: float = 30.0,
        seed: int | None = None,
    ) -> None:
        if isinstance(config, str):
            config = ClusterConfig(server=config.rstrip("/"), source="server")
        self.config = config
        self.rng = random.Random(seed)
        self.api = ApiClient(
            config,
            qps=qps,
            burst=burst,
            timeout=timeout,
            max_retries=max_retries,
            http_transport=http_transport,
            rng=self.rng,
        )
        self.resources = resources
        self.min_watch_timeout = min_watch_timeout
        self.page_size = page_size
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self._tg: anyio.abc.TaskGroup | None = None
        self._watches: list[KubeWatch] = []
        self._closed = False
        self._event_seq = itertools.count()
        self.reflectors: list[Reflector] = []
        """The reflectors of the latest watch (for tests and diagnostics)."""

    def __repr__(self) -> str:
        return f"KubeTransport({self.config!r})"

    # --- lifecycle ----------------------------------------------------------------------------
    async def __aenter__(self) -> Self:
        if self._tg is not None or self._closed:
            raise RuntimeError("a KubeTransport can be entered once")
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
        if self._tg is not None:  # what failed (the block, a watch) comes out as itself
            tg, self._tg = self._tg, None
            await exit_task_group(tg, exc_type, exc, tb)

    async def aclose(self) -> None:
        """End every watch and close the HTTP connections."""
        self._closed = True
        for w in self._watches:
            await w.aclose()
        self._watches.clear()
        await self.api.aclose()

    def wall_clock(self) -> float:
        """Real Unix time: the one clock a transport may read (Event and Lease timestamps)."""
        return time.time()

    # --- reads --------------------------------------------------------------------------------
    def watch(self) -> KubeWatch:
        """Every object as ADDED (kind by kind), then SYNCED, then changes; re-lists on its own."""
        if self._tg is None or self._closed:
            raise RuntimeError("KubeTransport.watch() needs `async with KubeTransport(...)`")
        w = KubeWatch()
        self._watches.append(w)
        self._tg.start_soon(self._pump, w)
        return w

    async def _pump(self, w: KubeWatch) -> None:
        with w.scope:
            reflectors = [
                Reflector(
                    self.api,
                    res,
                    w.push,
                    rng=self.rng,
                    page_size=self.page_size,
                    min_watch_timeout=self.min_watch_timeout,
                    backoff_initial=self.backoff_initial,
                    backoff_max=self.backoff_max,
                )
                for res in self.resources
            ]
            self.reflectors = reflectors
            for r in reflectors:
                await r.sync()
            w.synced = True
            w.push(_SYNCED)
            async with anyio.create_task_group() as tg:
                for r in reflectors:
                    tg.start_soon(r.run)

    async def get_pod(self, namespace: str, name: str) -> Pod:
        """GET one pod (NotFoundError if absent)."""
        body = await self.api.request("GET", _pod_path(namespace, name))
        return _pod_decoder.decode(body)

    # --- writes -------------------------------------------------------------------------------
    async def bind(self, binding: Binding) -> None:
        """POST the binding subresource; 409 → ConflictError unless already bound to that node."""
        md = binding.metadata
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {
                "name": md.name,
                "namespace": md.namespace,
                **({"uid": md.uid} if md.uid else {}),
            },
            "target": {"apiVersion": "v1", "kind": "Node", "name": binding.target.name},
        }
        try:
            await self.api.request("POST", _pod_path(md.namespace, md.name) + "/binding", body=body)
        except ConflictError:
            pod = await self.get_pod(md.namespace, md.name)
            if pod.spec.node_name == binding.target.name and (
                not md.uid or pod.metadata.uid == md.uid
            ):
                log.debug(
                    "pod %s/%s is already bound to %s", md.namespace, md.name, pod.spec.node_name
                )
                return
            raise

    async def patch_pod_status(
        self,
        namespace: str,
        name: str,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        """Strategic-merge the pod's status (``util.PatchPodStatus``)."""
        status: dict[str, Any] = {}
        if condition is not None:
            c = to_builtins(condition)
            if not c.get("lastTransitionTime"):
                c["lastTransitionTime"] = rfc3339(self.wall_clock())
            c.setdefault("lastProbeTime", None)
            status["conditions"] = [c]
        if nominated_node_name is not None:
            status["nominatedNodeName"] = nominated_node_name or None
        if not status:
            return
        await self.api.request(
            "PATCH",
            _pod_path(namespace, name) + "/status",
            body={"status": status},
            content_type="application/strategic-merge-patch+json",
        )

    async def patch_pod_group_status(self, namespace: str, name: str, condition: Condition) -> None:
        """Strategic-merge the Workload API PodGroup's status conditions (``PatchPodGroupStatus``;
        conditions merge by type)."""
        c = to_builtins(condition)
        if not c.get("lastTransitionTime"):
            c["lastTransitionTime"] = rfc3339(self.wall_clock())
        path = f"/apis/scheduling.k8s.io/v1alpha2/namespaces/{quote(namespace, safe='')}/podgroups/{quote(name, safe='')}/status"
        await self.api.request(
            "PATCH", path, body={"status": {"conditions": [c]}}, content_type="application/strategic-merge-patch+json"
        )

    async def patch_pod_annotations(
        self, namespace: str, name: str, annotations: Mapping[str, str]
    ) -> None:
        """Merge-patch the pod's ``metadata.annotations`` (the recorded plugin results)."""
        await self.api.request(
            "PATCH",
            _pod_path(namespace, name),
            body={"metadata": {"annotations": dict(annotations)}},
            content_type="application/merge-patch+json",
        )

    async def delete_pod(self, namespace: str, name: str, *, uid: str | None = None) -> None:
        """DELETE the pod (with a UID precondition): 404 → NotFoundError, 409 → ConflictError."""
        body: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if uid:
            body["preconditions"] = {"uid": uid}
        await self.api.request("DELETE", _pod_path(namespace, name), body=body)

    async def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        """PUT the PersistentVolume (read whole first, the struct laid over it); a stale
        resourceVersion → ConflictError, a missing one → NotFoundError."""
        path = _pv_path(pv.metadata.name)
        body = await self._replacement(path, pv)
        return _pv_decoder.decode(await self.api.request("PUT", path, body=body))

    async def update_persistent_volume_claim(
        self, pvc: PersistentVolumeClaim
    ) -> PersistentVolumeClaim:
        """PUT the PersistentVolumeClaim, as :meth:`update_persistent_volume`."""
        path = _pvc_path(pvc.metadata.namespace or "default", pvc.metadata.name)
        body = await self._replacement(path, pvc)
        return _pvc_decoder.decode(await self.api.request("PUT", path, body=body))

    async def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """PUT the ResourceClaim, as :meth:`update_persistent_volume` (its status is the status
        subresource's)."""
        path = _claim_path(claim.metadata.namespace or "default", claim.metadata.name)
        body = await self._replacement(path, claim)
        return _claim_decoder.decode(await self.api.request("PUT", path, body=body))

    async def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        """PUT the claim's status subresource: the stored claim with the struct's status."""
        path = _claim_path(claim.metadata.namespace or "default", claim.metadata.name)
        current = msgspec.json.decode(await self.api.request("GET", path))
        body = dict(current) if isinstance(current, dict) else {}
        body["status"] = _laid_over(body.get("status"), claim.status)
        rv = claim.metadata.resource_version
        if rv:
            body.setdefault("metadata", {})["resourceVersion"] = rv
        return _claim_decoder.decode(await self.api.request("PUT", path + "/status", body=body))

    async def delete_resource_claim(self, namespace: str, name: str, *, uid: str | None = None) -> None:
        """DELETE the ResourceClaim (with a UID precondition): 404 → NotFoundError, 409 →
        ConflictError."""
        body: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if uid:
            body["preconditions"] = {"uid": uid}
        await self.api.request("DELETE", _claim_path(namespace or "default", name), body=body)

    async def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """POST the ResourceClaim (the API server names it from its ``generateName``)."""
        ns = claim.metadata.namespace or "default"
        path = f"/apis/resource.k8s.io/v1/namespaces/{quote(ns, safe='')}/resourceclaims"
        body = to_builtins(claim)
        return _claim_decoder.decode(await self.api.request("POST", path, body=body))

    async def patch_pod_extended_resource_claim_status(
        self, namespace: str, name: str, status: PodExtendedResourceClaimStatus
    ) -> None:
        """Strategic-merge the pod's ``status.extendedResourceClaimStatus`` (``util.PatchPodStatus``)."""
        await self.api.request(
            "PATCH",
            _pod_path(namespace, name) + "/status",
            body={"status": {"extendedResourceClaimStatus": to_builtins(status)}},
            content_type="application/strategic-merge-patch+json",
        )

    async def _replacement(
        self, path: str, obj: PersistentVolume | PersistentVolumeClaim | ResourceClaim
    ) -> dict[str, Any]:
        """The body of a PUT of ``obj``: the stored object (GET; 404 → NotFoundError) with the
        struct laid over it, at the struct's resourceVersion (the server refuses a stale one)."""
        current = msgspec.json.decode(await self.api.request("GET", path))
        body = _laid_over(current, obj)
        rv = obj.metadata.resource_version
        body.setdefault("metadata", {})["resourceVersion"] = rv
        if not rv:
            body["metadata"].pop("resourceVersion")
        body.pop("status", None)  # the status subresource's: a PUT of the object keeps it
        return body

    async def record_event(self, event: Event) -> None:
        """POST an events.k8s.io/v1 Event (a unique name per event, as client-go's recorder)."""
        now = self.wall_clock()
        data = to_builtins(event)
        ref = event.regarding
        namespace = event.metadata.namespace or ref.namespace or "default"
        seq = next(self._event_seq)
        data["metadata"] = {
            "name": f"{ref.name or event.metadata.name}.{time.time_ns():x}{seq:x}",
            "namespace": namespace,
        }
        data.setdefault("eventTime", micro_time(now))
        data.setdefault("reportingController", "kubesched")
        data.setdefault("reportingInstance", "kubesched")
        data.setdefault("action", event.reason or "Scheduling")
        data.setdefault("type", event.type or "Normal")
        await self.api.request(
            "POST",
            f"/apis/events.k8s.io/v1/namespaces/{quote(namespace, safe='')}/events",
            body=data,
            retry=True,
        )


_SYNCED = WatchEvent("SYNCED")
