"""The assume caches of PersistentVolumes and PersistentVolumeClaims (upstream
``pkg/scheduler/util/assumecache`` and ``volumebinding/assume_cache.go``).

Upstream an AssumeCache keeps, per object, the informer's version (``apiObj``) and the latest
one (``latestObj``: the informer's, or one assumed in memory).  Here the informer's objects are
the scheduler's :class:`~kubesched.ClusterState` tables (``pvs``, ``pvcs``), read at every call,
and the cache holds only the assumed versions on top of them::

    informer object (ClusterState) ──assume(obj)──► latest = obj   (resourceVersion >= stored)
          ▲                                            │
          └──── restore(key) / a newer informer version / the object's deletion

- ``get`` returns the latest object; ``get_api_obj`` the informer's; ``list_pvs(class)`` the
  latest PVs of a storage class, in the informer's order.
- ``assume(obj)`` fails when the object is unknown ("could not find ...") or older than the
  latest one ("... is out of sync (stored: N, assume: M)").
- An informer update replaces an assumed object only with a strictly newer resourceVersion
  (upstream's ``add``: "only update object if version is newer"); a deleted object drops it.

A missing resourceVersion counts as 0 (objects built in memory, never from an API server); any
other non-integer one is an error as upstream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from .helpers import (
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeError,
    get_persistent_volume_class,
)

PV_DESCRIPTION = "v1.PersistentVolume"
PVC_DESCRIPTION = "v1.PersistentVolumeClaim"

_K = TypeVar("_K")
_T = TypeVar("_T")


class CacheNotFoundError(VolumeError):
    """``assumecache.NotFoundError``: "could not find <type> <key>"."""

    def __init__(self, description: str, key: str) -> None:
        super().__init__(f'could not find {description} "{key}"')


def object_version(obj: Any, description: str, key: str) -> int:
    """``getObjVersion``: the resourceVersion as an integer ("" counts as 0)."""
    rv = obj.metadata.resource_version
    if not rv:
        return 0
    try:
        return int(rv, 10)
    except ValueError:
        raise VolumeError(
            f'error parsing ResourceVersion "{rv}" for {description} "{key}": '
            f'strconv.ParseInt: parsing "{rv}": invalid syntax'
        ) from None


def _version_or_zero(obj: Any) -> int:
    try:
        return int(obj.metadata.resource_version or "0", 10)
    except ValueError:
        return 0


class AssumeCache(Generic[_K, _T]):
    """Assumed objects over an informer table (``store()`` returns it at each call)."""

    def __init__(
        self,
        store: Callable[[], Mapping[_K, _T]],
        description: str,
        key_of: Callable[[_T], _K],
        key_text: Callable[[_K], str],
    ) -> None:
        self._store = store
        self.description = description
        self._key_of = key_of
        self._key_text = key_text
        self._assumed: dict[_K, _T] = {}

    def _latest(self, key: _K, api: _T | None) -> _T | None:
        assumed = self._assumed.get(key)
        if assumed is None:
            return api
        if api is None or _version_or_zero(api) > _version_or_zero(assumed):
            # the informer deleted it, or brought a newer version: the assumption is over
            del self._assumed[key]
            return api
        return assumed

    def get(self, key: _K) -> _T:
        """The latest object; CacheNotFoundError when there is none."""
        obj = self._latest(key, self._store().get(key))
        if obj is None:
            raise CacheNotFoundError(self.description, self._key_text(key))
        return obj

    def get_api_obj(self, key: _K) -> _T:
        """The informer's object; CacheNotFoundError when there is none."""
        obj = self._store().get(key)
        if obj is None:
            raise CacheNotFoundError(self.description, self._key_text(key))
        self._latest(key, obj)
        return obj

    def values(self) -> Iterator[_T]:
        """Every latest object, in the informer's order."""
        for key, api in list(self._store().items()):
            obj = self._latest(key, api)
            if obj is not None:
                yield obj

    def assume(self, obj: _T) -> None:
        """Make ``obj`` the latest version in memory (``Assume``); raises VolumeError."""
        key = self._key_of(obj)
        text = self._key_text(key)
        stored = self.get(key)
        new_version = object_version(obj, self.description, text)
        stored_version = object_version(stored, self.description, text)
        if new_version < stored_version:
            raise VolumeError(
                f'{self.description} "{text}" is out of sync (stored: {stored_version}, assume: {new_version})'
            )
        self._assumed[key] = obj

    def restore(self, key: _K) -> None:
        """Back to the informer's version (``Restore``); a no-op when nothing is assumed."""
        self._assumed.pop(key, None)

    def is_assumed(self, key: _K) -> bool:
        return self._latest(key, self._store().get(key)) is not self._store().get(key)

    def __len__(self) -> int:
        return len(self._assumed)


def _pv_key(pv: PersistentVolume) -> str:
    return pv.metadata.name


def _pvc_key(pvc: PersistentVolumeClaim) -> tuple[str, str]:
    return (pvc.metadata.namespace, pvc.metadata.name)


def pvc_key_text(key: tuple[str, str]) -> str:
    """``getPVCName``: ``namespace/name``."""
    return f"{key[0]}/{key[1]}"


class PVAssumeCache(AssumeCache[str, PersistentVolume]):
    """``PVAssumeCache`` over ``ClusterState.pvs``, indexed by storage class."""

    def __init__(self, store: Callable[[], Mapping[str, PersistentVolume]]) -> None:
        super().__init__(store, PV_DESCRIPTION, _pv_key, str)

    def list_pvs(self, storage_class: str) -> list[PersistentVolume]:
        """``ListPVs``: the latest PVs of the class (``GetPersistentVolumeClass``)."""
        return [pv for pv in self.values() if get_persistent_volume_class(pv) == storage_class]

    def restore_pv(self, pv: PersistentVolume) -> None:
        self.restore(_pv_key(pv))


class PVCAssumeCache(AssumeCache[tuple[str, str], PersistentVolumeClaim]):
    """``PVCAssumeCache`` over ``ClusterState.pvcs`` (keys ``(namespace, name)``)."""

    def __init__(
        self, store: Callable[[], Mapping[tuple[str, str], PersistentVolumeClaim]]
    ) -> None:
        super().__init__(store, PVC_DESCRIPTION, _pvc_key, pvc_key_text)

    def restore_pvc(self, pvc: PersistentVolumeClaim) -> None:
        self.restore(_pvc_key(pvc))


__all__ = [
    "PVC_DESCRIPTION",
    "PV_DESCRIPTION",
    "AssumeCache",
    "CacheNotFoundError",
    "PVAssumeCache",
    "PVCAssumeCache",
    "object_version",
    "pvc_key_text",
]
