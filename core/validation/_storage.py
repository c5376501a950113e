"""Storage objects as the API server validates them, in upstream's words.

pkg/apis/core/validation: ``ValidatePersistentVolume`` (``ValidatePersistentVolumeSpec``),
``ValidatePersistentVolumeClaim`` (``ValidatePersistentVolumeClaimSpec``), a pod's volumes
(``ValidateVolumes``, ``validateVolumeSource``); pkg/apis/storage/validation:
``ValidateStorageClass``, ``ValidateCSINode``, ``ValidateCSIDriver``,
``ValidateCSIStorageCapacity``.  Built on ``_validation_base``; ``_validation_pod`` checks a pod's
volumes with :func:`check_volumes`, ``_validation`` dispatches the kinds
(:func:`check_storage_object`) and checks a StatefulSet's claim templates with
:func:`check_claim_spec`.  Each check raises the first error (in upstream's order) as one
:class:`ConfigError` naming the field.

The objects are defaulted before they are checked, as the API server defaults them (the
structs' ``__post_init__``: a PV's reclaim policy Retain, a claim's volume mode Filesystem, a
StorageClass's Delete and Immediate, a CSIDriver's flags), so "Required" is never reported for a
field the API server would have filled in.  Sources kubesched models as plain mappings (NFS,
Fibre Channel, ...) are counted for "exactly one source" and checked only where upstream's check
is a required field.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Iterable
from typing import Any

from kubesched._errors import ConfigError
from kubesched.api._resources import QuantityError, parse_quantity
from kubesched.validation._base import (
    check_label_selector,
    check_node_selector,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    go_quote,
    invalid,
    not_supported,
    qualified_errors,
    supported,
    validate_labels,
)

ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
_RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
_CLASS_RECLAIM_POLICIES = ("Delete", "Retain")
_VOLUME_MODES = ("Block", "Filesystem")
_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
_HOST_PATH_TYPES = (
    "", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice",
)  # fmt: skip
_FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
_LIFECYCLE_MODES = ("Persistent", "Ephemeral")
MORE_THAN_ONE = "Forbidden: may not specify more than 1 volume type"
PD_PARTITION = "must be between 1 and 255, inclusive"  # pdPartitionErrorMsg (the check is 0..255)
_MAX_PARAMETERS = 512
_MAX_PARAMETERS_SIZE = 256 * (1 << 10)
_CSI_NODE_ID_MAX = 256  # CSINodeValidationOptions{AllowLongNodeID: true}, as the registry creates
_IQN = re.compile(r"iqn\.\d{4}-\d{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\s]+)$")
_EUI = re.compile(r"^eui.[A-Za-z0-9]{16}$")
_NAA = re.compile(r"^naa.[A-Za-z0-9]{32}$")

# (field, its JSON name, the name its "more than 1" error gives) in upstream's order of checks
_POD_SOURCES = (
    ("empty_dir", "emptyDir", "emptyDir"), ("host_path", "hostPath", "hostPath"),
    ("git_repo", "gitRepo", "gitRepo"), ("gce_persistent_disk", "gcePersistentDisk", "gcePersistentDisk"),
    ("aws_elastic_block_store", "awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret", "secret"), ("nfs", "nfs", "nfs"), ("iscsi", "iscsi", "iscsi"),
    ("glusterfs", "glusterfs", "glusterfs"), ("flocker", "flocker", "flocker"),
    ("persistent_volume_claim", "persistentVolumeClaim", "persistentVolumeClaim"), ("rbd", "rbd", "rbd"),
    ("cinder", "cinder", "cinder"), ("cephfs", "cephfs", "cephFS"), ("quobyte", "quobyte", "quobyte"),
    ("downward_api", "downwardAPI", "downwarAPI"), ("fc", "fc", "fc"), ("flex_volume", "flexVolume", "flexVolume"),
    ("config_map", "configMap", "configMap"), ("azure_file", "azureFile", "azureFile"),
    ("vsphere_volume", "vsphereVolume", "vsphereVolume"),
    ("photon_persistent_disk", "photonPersistentDisk", "photonPersistentDisk"),
    ("portworx_volume", "portworxVolume", "portworxVolume"), ("azure_disk", "azureDisk", "azureDisk"),
    ("storageos", "storageos", "storageos"), ("projected", "projected", "projected"),
    ("scale_io", "scaleIO", "scaleIO"), ("csi", "csi", "csi"), ("ephemeral", "ephemeral", "ephemeral"),
    ("image", "image", "image"),
)  # fmt: skip
_PV_SOURCES = (
    ("host_path", "hostPath", "hostPath"), ("gce_persistent_disk", "gcePersistentDisk", "gcePersistentDisk"),
    ("aws_elastic_block_store", "awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs", "glusterfs"), ("flocker", "flocker", "flocker"), ("nfs", "nfs", "nfs"),
    ("rbd", "rbd", "rbd"), ("quobyte", "quobyte", "quobyte"), ("cephfs", "cephfs", "cephFS"),
    ("iscsi", "iscsi", "iscsi"), ("cinder", "cinder", "cinder"), ("fc", "fc", "fc"),
    ("flex_volume", "flexVolume", "flexVolume"), ("azure_file", "azureFile", "azureFile"),
    ("vsphere_volume", "vsphereVolume", "vsphereVolume"),
    ("photon_persistent_disk", "photonPersistentDisk", "photonPersistentDisk"),
    ("portworx_volume", "portworxVolume", "portworxVolume"), ("azure_disk", "azureDisk", "azureDisk"),
    ("scale_io", "scaleIO", "scaleIO"), ("local", "local", "local"), ("storageos", "storageos", "storageos"),
    ("csi", "csi", "csi"),
)  # fmt: skip


def _required(fld: str, detail: str = "") -> ConfigError:
    """``field.Required``."""
    return ConfigError(f"Required value: {detail}" if detail else "Required value", field=fld)


def _forbidden(fld: str, detail: str) -> ConfigError:
    return ConfigError(f"Forbidden: {detail}", field=fld)


def _duplicate(fld: str, value: Any) -> ConfigError:
    return ConfigError(f"Duplicate value: {go_quote(value)}", field=fld)


def _check_dns_subdomain(value: str, fld: str) -> None:
    errs = dns1123_subdomain_errors(value)
    if errs:
        raise invalid(fld, value, errs[0])


def _quantity(value: Any, fld: str) -> Any:
    try:
        return parse_quantity(value)
    except QuantityError as e:
        raise ConfigError(str(e), field=fld) from None


def _quantity_string(value: Any) -> str:
    return str(value) if not isinstance(value, float) or not value.is_integer() else str(int(value))


def _check_positive_storage(value: Any, fld: str) -> None:
    """``validateBasicResource`` then ``ValidatePositiveQuantityValue``."""
    q = _quantity(value, fld)
    if q < 0:
        raise invalid(fld, math.ceil(q), "must be a valid resource quantity")
    if q == 0:
        raise invalid(fld, "0", "must be greater than zero")


def _go_resource_list(rl: dict[str, Any]) -> str:
    """A ResourceList as the NotSupported error prints it (its quantities by their text)."""
    items = ", ".join(f"{go_quote(k)}:{go_quote(_quantity_string(v))}" for k, v in sorted(rl.items()))
    return f"core.ResourceList{{{items}}}"


def _check_access_modes(modes: list[str], fld: str) -> None:
    """The access modes of a PV or a claim: supported ones, ReadWriteOncePod alone."""
    rwop = other = False
    for mode in modes:
        if mode not in ACCESS_MODES:
            raise ConfigError(f"Unsupported value: {go_quote(mode)}: supported values: {supported(ACCESS_MODES)}", field=fld)
        if mode == "ReadWriteOncePod":
            rwop = True
        else:
            other = True
    if rwop and other:
        raise _forbidden(fld, "may not use ReadWriteOncePod with other access modes")


def _check_volume_mode(mode: str | None, fld: str) -> None:
    if mode is not None and mode not in _VOLUME_MODES:
        raise ConfigError(f"Unsupported value: {go_quote(mode)}: supported values: {supported(_VOLUME_MODES)}", field=fld)


# --- volume sources (the ones kubesched models as structs) ------------------------------------


def _check_host_path(hp: Any, fld: str) -> None:
    if not hp.path:
        raise _required(f"{fld}.path")
    if ".." in hp.path.replace("\\", "/").split("/"):  # validatePathNoBacksteps
        raise invalid(f"{fld}.path", hp.path, "must not contain '..'")
    if hp.type is not None and hp.type not in _HOST_PATH_TYPES:
        raise ConfigError(
            f"Unsupported value: {go_quote(hp.type)}: supported values: {supported(_HOST_PATH_TYPES)}",
            field=f"{fld}.type",
        )


def _check_disk(pd: Any, fld: str, id_field: str, id_json: str) -> None:
    """GCE persistent disk (``pdName``) and AWS EBS (``volumeID``): the id, the partition."""
    if not getattr(pd, id_field):
        raise _required(f"{fld}.{id_json}")
    if not 0 <= pd.partition <= 255:
        raise invalid(f"{fld}.partition", pd.partition, PD_PARTITION)


def _check_iqn(value: str, fld: str, bad_prefix: str) -> None:
    if not value.startswith(("iqn", "eui", "naa")):
        raise invalid(fld, value, bad_prefix)
    pattern = _IQN if value.startswith("iqn") else _EUI if value.startswith("eui") else _NAA
    if not pattern.search(value):
        raise invalid(fld, value, "must be valid format")


def _check_iscsi(iscsi: Any, fld: str, *, pv: bool) -> None:
    if not iscsi.target_portal:
        raise _required(f"{fld}.targetPortal")
    if not iscsi.iqn:
        raise _required(f"{fld}.iqn")
    bad = "must be valid format" if pv else "must be valid format starting with iqn, eui, or naa"
    _check_iqn(iscsi.iqn, f"{fld}.iqn", bad)
    if not 0 <= iscsi.lun <= 255:
        raise invalid(f"{fld}.lun", iscsi.lun, "must be between 0 and 255, inclusive")


def _check_rbd(rbd: Any, fld: str) -> None:
    if not rbd.monitors:
        raise _required(f"{fld}.monitors")
    if not rbd.image:
        raise _required(f"{fld}.image")


def _check_csi_driver_name(name: str, fld: str) -> None:
    """``ValidateCSIDriverName``."""
    if not name:
        raise _required(fld)
    if len(name) > 63:
        raise ConfigError("Too long: may not be more than 63 bytes", field=fld)
    errs = dns1123_subdomain_errors(name.lower())
    if errs:
        raise invalid(fld, name, errs[0])


def _check_azure_disk(disk: Any, fld: str) -> None:
    if not disk.disk_name:
        raise _required(f"{fld}.diskName")
    if not disk.disk_uri:
        raise _required(f"{fld}.diskURI")


def _check_mapping_source(name: str, source: dict[str, Any], fld: str) -> None:
    """The required fields of the sources kubesched keeps as mappings."""
    required = {
        "secret": ("secretName",), "configMap": ("name",), "nfs": ("server", "path"),
        "gitRepo": ("repository",), "glusterfs": ("endpoints", "path"),
    }.get(name, ())  # fmt: skip
    for key in required:
        if not source.get(key):
            raise _required(f"{fld}.{key}")
    if name == "nfs" and not str(source.get("path")).startswith("/"):
        raise invalid(f"{fld}.path", source.get("path"), "must be an absolute path")
    limit = source.get("sizeLimit") if name == "emptyDir" else None
    if limit is not None and _quantity(limit, f"{fld}.sizeLimit") < 0:
        raise _forbidden(f"{fld}.sizeLimit", "SizeLimit field must be a valid resource quantity")


def _check_source(attr: str, json: str, source: Any, fld: str, *, pv: bool) -> None:
    """One source's own checks (``validate<Source>VolumeSource``), at its path."""
    p = f"{fld}.{json}"
    if isinstance(source, dict):
        _check_mapping_source(json, source, p)
    elif attr == "host_path":
        _check_host_path(source, p)
    elif attr == "gce_persistent_disk":  # upstream names this path "persistentDisk"
        _check_disk(source, f"{fld}.persistentDisk", "pd_name", "pdName")
    elif attr == "aws_elastic_block_store":
        _check_disk(source, p, "volume_id", "volumeID")
    elif attr == "iscsi":
        _check_iscsi(source, p, pv=pv)
    elif attr == "rbd":
        _check_rbd(source, p)
    elif attr == "cinder" and not source.volume_id:
        raise _required(f"{p}.volumeID")
    elif attr == "azure_disk":
        _check_azure_disk(source, p)
    elif attr == "csi":
        _check_csi_driver_name(source.driver, f"{p}.driver")
        if pv and not source.volume_handle:
            raise _required(f"{p}.volumeHandle")
    elif attr == "persistent_volume_claim" and not source.claim_name:
        raise _required(f"{p}.claimName")
    elif attr == "local" and not source.path:
        raise _required(f"{p}.path")


def _check_sources(obj: Any, sources: Iterable[tuple[str, str, str]], fld: str, *, pv: bool) -> str:
    """Exactly one source, each checked: the attribute of the one set."""
    found = ""
    for attr, json, forbidden_name in sources:
        source = getattr(obj, attr)
        if source is None:
            continue
        if found:
            raise ConfigError(MORE_THAN_ONE, field=f"{fld}.{forbidden_name}" if fld else forbidden_name)
        found = attr
        if attr == "ephemeral":
            continue  # checked by the caller, who knows the pod
        _check_source(attr, json, source, fld, pv=pv)
    if not found:
        raise ConfigError("Required value: must specify a volume type", field=fld)
    return found


# --- claims --------------------------------------------------------------------------------------


def check_claim_spec(spec: Any, path: str) -> None:
    """``ValidatePersistentVolumeClaimSpec``: a claim's, an ephemeral volume's claim template's,
    a StatefulSet's volume claim template's."""
    if not spec.access_modes:
        raise _required(f"{path}.accessModes", "at least 1 access mode is required")
    check_label_selector(spec.selector, f"{path}.selector")
    _check_access_modes(spec.access_modes, f"{path}.accessModes")
    fld = f"{path}.resources[storage]"
    requests = spec.resources.requests or {}
    if "storage" not in requests:
        raise _required(fld)
    _check_positive_storage(requests["storage"], fld)
    if spec.storage_class_name:
        _check_dns_subdomain(spec.storage_class_name, f"{path}.storageClassName")
    _check_volume_mode(spec.volume_mode, f"{path}.volumeMode")
    ds = spec.data_source
    if ds is not None:
        p = f"{path}.dataSource"
        if not ds.name:
            raise _required(f"{p}.name")
        if not ds.kind:
            raise _required(f"{p}.kind")
        if not ds.api_group and ds.kind != "PersistentVolumeClaim":
            raise invalid(p, ds.kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup")
        if ds.api_group:
            _check_dns_subdomain(ds.api_group, f"{p}.apiGroup")


def check_volumes(volumes: list[Any], pod_name: str, path: str = "spec.volumes") -> None:
    """``ValidateVolumes``: each volume's one source (checked), then its name (a DNS-1123 label,
    unique); a claim may not name one an ephemeral volume of the pod creates."""
    created = {f"{pod_name}-{v.name}" for v in volumes if v.ephemeral is not None} if pod_name else set()
    names: set[str] = set()
    for i, vol in enumerate(volumes):
        p = f"{path}[{i}]"
        _check_sources(vol, _POD_SOURCES, p, pv=False)
        if vol.ephemeral is not None:
            _check_ephemeral(vol, pod_name, p)
        if not vol.name:
            raise _required(f"{p}.name")
        errs = dns1123_label_errors(vol.name)
        if errs:
            raise invalid(f"{p}.name", vol.name, errs[0])
        if vol.name in names:
            raise _duplicate(f"{p}.name", vol.name)
        names.add(vol.name)
        claim = vol.persistent_volume_claim
        if claim is not None and claim.claim_name in created:
            raise invalid(
                f"{p}.persistentVolumeClaim.claimName", claim.claim_name,
                "must not reference a PVC that gets created for an ephemeral volume",
            )


def _check_ephemeral(vol: Any, pod_name: str, path: str) -> None:
    """``validateEphemeralVolumeSource`` and the name of the claim it makes (``<pod>-<volume>``)."""
    tmpl = vol.ephemeral.volume_claim_template
    p = f"{path}.ephemeral.volumeClaimTemplate"
    if tmpl is None:
        raise _required(p)
    validate_labels(tmpl.metadata.labels, f"{p}.metadata.labels")
    check_claim_spec(tmpl.spec, f"{p}.spec")
    if pod_name and vol.name:
        claim = f"{pod_name}-{vol.name}"
        errs = dns1123_subdomain_errors(claim)
        if errs:
            raise invalid(f"{path}.name", vol.name, f"PVC name {go_quote(claim)}: {errs[0]}")


# --- the kinds -------------------------------------------------------------------------------------


def _check_pv(pv: Any) -> None:
    """``ValidatePersistentVolumeSpec`` (not inline)."""
    spec = pv.spec
    if not spec.access_modes:
        raise _required("spec.accessModes")
    _check_access_modes(spec.access_modes, "spec.accessModes")
    if not spec.capacity:
        raise _required("spec.capacity")
    if "storage" not in spec.capacity or len(spec.capacity) > 1:
        raise ConfigError(
            f'Unsupported value: {_go_resource_list(spec.capacity)}: supported values: "storage"', field="spec.capacity"
        )
    _check_positive_storage(spec.capacity["storage"], "spec.capacity[storage]")
    policy = spec.persistent_volume_reclaim_policy
    if policy and policy not in _RECLAIM_POLICIES:
        raise not_supported("spec.persistentVolumeReclaimPolicy", policy, _RECLAIM_POLICIES)
    if spec.node_affinity is not None:
        if spec.node_affinity.required is None:
            raise _required("spec.nodeAffinity.required", "must specify required node constraints")
        check_node_selector(spec.node_affinity.required, "spec.nodeAffinity.required")
    found = _check_sources(spec, _PV_SOURCES, "spec", pv=True)
    if found == "local" and spec.node_affinity is None:
        raise _required("spec.nodeAffinity", "Local volume requires node affinity")
    if found == "host_path" and posixpath.normpath(spec.host_path.path) == "/" and policy == "Recycle":
        raise _forbidden("spec.persistentVolumeReclaimPolicy", "may not be 'recycle' for a hostPath mount of '/'")
    if spec.storage_class_name:
        _check_dns_subdomain(spec.storage_class_name, "spec.storageClassName")
    _check_volume_mode(spec.volume_mode, "spec.volumeMode")


def _check_storage_class(sc: Any) -> None:
    """``ValidateStorageClass``: provisioner, parameters, reclaim policy, binding mode, allowed
    topologies."""
    if not sc.provisioner:
        raise _required("provisioner")
    errs = qualified_errors(sc.provisioner.lower())
    if errs:
        raise invalid("provisioner", sc.provisioner.lower(), errs[0])
    if len(sc.parameters) > _MAX_PARAMETERS:
        raise ConfigError(f"Too long: may not be more than {_MAX_PARAMETERS} bytes", field="parameters")
    if "" in sc.parameters:
        raise invalid("parameters", "", "field can not be empty.")
    if sum(len(k) + len(v) for k, v in sc.parameters.items()) > _MAX_PARAMETERS_SIZE:
        raise ConfigError(f"Too long: may not be more than {_MAX_PARAMETERS_SIZE} bytes", field="parameters")
    if sc.reclaim_policy and sc.reclaim_policy not in _CLASS_RECLAIM_POLICIES:
        raise not_supported("reclaimPolicy", sc.reclaim_policy, _CLASS_RECLAIM_POLICIES)
    if sc.volume_binding_mode is None:
        raise _required("volumeBindingMode")
    if sc.volume_binding_mode not in _BINDING_MODES:
        raise not_supported("volumeBindingMode", sc.volume_binding_mode, _BINDING_MODES)
    terms: list[dict[str, set[str]]] = []
    for i, term in enumerate(sc.allowed_topologies):
        p = f"allowedTopologies[{i}].matchLabelExpressions"
        exprs: dict[str, set[str]] = {}
        for j, req in enumerate(term.match_label_expressions):  # ValidateTopologySelectorTerm
            q = f"{p}[{j}]"
            if not req.values:
                raise _required(f"{q}.values")
            seen: set[str] = set()
            for k, v in enumerate(req.values):
                if v in seen:
                    raise _duplicate(f"{q}.values[{k}]", v)
                seen.add(v)
            errs = qualified_errors(req.key)
            if errs:
                raise invalid(f"{q}.key", req.key, errs[0])
            if req.key in exprs:
                raise _duplicate(f"{q}.key", req.key)
            exprs[req.key] = seen
        if exprs in terms:
            raise _duplicate(p, "")
        terms.append(exprs)


def _check_csi_node(node: Any) -> None:
    """``validateCSINodeDrivers``: names (unique), node IDs, allocatable counts, topology keys."""
    names: set[str] = set()
    for i, driver in enumerate(node.spec.drivers):
        p = f"spec.drivers[{i}]"
        _check_csi_driver_name(driver.name, f"{p}.name")
        if not driver.node_id:
            raise _required(f"{p}.nodeID")
        if len(driver.node_id) > _CSI_NODE_ID_MAX:
            raise invalid(f"{p}.nodeID", driver.node_id, f"must be {_CSI_NODE_ID_MAX} characters or less")
        count = driver.allocatable.count if driver.allocatable is not None else None
        if count is not None and count < 0:
            raise invalid(f"{p}.allocatable.count", count, "must be greater than or equal to 0")
        if driver.name in names:
            raise _duplicate(f"{p}.name", driver.name)
        names.add(driver.name)
        keys: set[str] = set()
        for key in driver.topology_keys:
            if not key:
                raise _required(p)
            if key in keys:
                raise _duplicate(p, key)
            keys.add(key)
            errs = qualified_errors(key)
            if errs:
                raise invalid(p, key, errs[0])


def _check_csi_driver(driver: Any) -> None:
    """``validateCSIDriverSpec`` (the flags are defaulted, so never missing)."""
    spec = driver.spec
    for attr, json in (("attach_required", "attachedRequired"), ("pod_info_on_mount", "podInfoOnMount"),
                       ("storage_capacity", "storageCapacity")):  # fmt: skip
        if getattr(spec, attr) is None:
            raise _required(f"spec.{json}")
    if spec.fs_group_policy is not None and spec.fs_group_policy not in _FS_GROUP_POLICIES:
        raise not_supported("spec.fsGroupPolicy", spec.fs_group_policy, _FS_GROUP_POLICIES)
    for mode in spec.volume_lifecycle_modes:
        if mode not in _LIFECYCLE_MODES:
            raise not_supported("spec.volumeLifecycleModes", mode, _LIFECYCLE_MODES)


def _check_csi_storage_capacity(cap: Any) -> None:
    """``ValidateCSIStorageCapacity``: the node topology selector, the class name, a capacity
    not negative."""
    check_label_selector(cap.node_topology, "nodeTopology")
    _check_dns_subdomain(cap.storage_class_name, "storageClassName")
    if cap.capacity is not None and _quantity(cap.capacity, "capacity") < 0:
        raise invalid("capacity", _quantity_string(cap.capacity), "must be greater than or equal to 0")


STORAGE_KINDS = {
    "PersistentVolume": _check_pv,
    "PersistentVolumeClaim": lambda pvc: check_claim_spec(pvc.spec, "spec"),
    "StorageClass": _check_storage_class,
    "CSINode": _check_csi_node,
    "CSIDriver": _check_csi_driver,
    "CSIStorageCapacity": _check_csi_storage_capacity,
}
CLUSTER_SCOPED = ("PersistentVolume", "StorageClass", "CSINode", "CSIDriver")


# --- VolumeAttributesClass: checked only with the gate on (the strategies drop the field when off)


def _vac_holders(obj: Any, kind: str) -> list[tuple[Any, str]]:
    """The specs of ``obj`` that may name a VolumeAttributesClass, with their field paths."""
    if kind in ("PersistentVolumeClaim", "PersistentVolume"):
        return [(obj.spec, "spec")]
    if kind == "StatefulSet":
        return [(t.spec, f"spec.volumeClaimTemplates[{i}].spec") for i, t in enumerate(obj.spec.volume_claim_templates)]
    return []


def check_volume_attributes_class(obj: Any, kind: str) -> None:
    """The volumeAttributesClassName checks of ``ValidatePersistentVolumeClaimSpec`` (a name, when
    not empty) and ``ValidatePersistentVolumeSpec`` (not empty, a name, and a CSI source), as
    upstream runs them with VolumeAttributesClass on."""
    for spec, path in _vac_holders(obj, kind):
        name = spec.volume_attributes_class_name
        if name is None:
            continue
        fld = f"{path}.volumeAttributesClassName"
        if kind == "PersistentVolume":
            if not name:
                raise _required(fld, "an empty string is disallowed")
            _check_dns_subdomain(name, fld)
            if spec.csi is None:
                raise _required(f"{path}.csi", "has to be specified when using volumeAttributesClassName")
        elif name:
            _check_dns_subdomain(name, fld)


def drop_volume_attributes_class(obj: Any, kind: str) -> None:
    """The PV, PVC and StatefulSet strategies' drop of ``volumeAttributesClassName`` on create
    while VolumeAttributesClass is off."""
    for spec, _ in _vac_holders(obj, kind):
        spec.volume_attributes_class_name = None


def check_storage_object(obj: Any, kind: str) -> bool:
    """Check ``obj`` if ``kind`` is a storage kind; whether it was one."""
    check = STORAGE_KINDS.get(kind)
    if check is None:
        return False
    check(obj)
    return True


__all__ = [
    "ACCESS_MODES",
    "CLUSTER_SCOPED",
    "check_claim_spec",
    "check_storage_object",
    "check_volume_attributes_class",
    "check_volumes",
    "drop_volume_attributes_class",
]
