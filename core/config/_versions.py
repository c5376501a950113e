"""The Kubernetes minors kubesched emulates, and its feature gates per minor.

``--emulated-version MAJOR.MINOR`` (KEP-4330's compatibility versions, as upstream's components
take it) picks one release: its feature gates' defaults and locks, its default plugin set, its
plugins' texts and its queue.  :data:`FEATURE_GATES` is upstream's ``VersionedSpecs``
(``pkg/features/kube_features.go``, ``defaultVersionedKubernetesFeatureGates``): per gate, the
entries ``(since, default, prerelease, lockToDefault)``; the entry in force at a version is the
last one whose ``since`` is not after it (component-base ``featureSpecAtEmulationVersion``).

A gate with no entry at the emulated version did not exist in that release: the code behaves as
the code before the gate (off, for a new feature; on, for a GA gate that was removed), and
``--feature-gates`` refuses it as that release's binary does (``unrecognized feature gate: X``).
Each minor is its latest patch release where they differ (see docs/versions.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from kubesched._errors import ConfigError


class Version(NamedTuple):
    """A Kubernetes ``MAJOR.MINOR``; compares as a tuple (``v >= (1, 34)``)."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


SUPPORTED_VERSIONS: tuple[Version, ...] = tuple(Version(1, m) for m in range(30, 37))
OLDEST_VERSION = SUPPORTED_VERSIONS[0]
NEWEST_VERSION = SUPPORTED_VERSIONS[-1]
DEFAULT_VERSION = NEWEST_VERSION
VERSION_RANGE = f"{OLDEST_VERSION}–{NEWEST_VERSION}"

_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")


def parse_version(text: str, *, field: str = "--emulated-version") -> Version:
    """``MAJOR.MINOR`` of a supported minor, else one :class:`ConfigError` naming the range."""
    m = _VERSION.fullmatch(text.strip()) if isinstance(text, str) else None
    if m is not None:
        v = Version(int(m[1]), int(m[2]))
        if v in SUPPORTED_VERSIONS:
            return v
    raise ConfigError(
        f'Invalid value: "{text}": must be a Kubernetes minor version MAJOR.MINOR from '
        f"{OLDEST_VERSION} to {NEWEST_VERSION}",
        field=field,
    )


ALPHA, BETA, GA, DEPRECATED = "Alpha", "Beta", "GA", "Deprecated"
KUBESCHED = "kubesched"  # a gate of kubesched's own, not upstream's (see KubeschedSourceExact)


@dataclass(frozen=True)
class FeatureSpec:
    """One ``VersionedSpecs`` entry: from ``since`` on, the gate is ``prerelease`` with this
    ``default`` (and, with ``lock_to_default``, cannot be set against it)."""

    since: Version
    default: bool
    prerelease: str
    lock_to_default: bool = False


@dataclass(frozen=True)
class VersionedGate:
    """A feature gate's history (``specs``, oldest first) and what kubesched does with it.

    ``removed``: the first minor whose binary no longer knows the gate (its last default
    stays in force).  ``source``: where the entries are read.  ``effect``: what the gate
    changes in kubesched.
    """

    name: str
    specs: tuple[FeatureSpec, ...]
    source: str
    effect: str
    removed: Version | None = None

    def spec_at(self, v: Version) -> FeatureSpec | None:
        """The entry in force at ``v``; None when the gate does not exist there."""
        if self.removed is not None and v >= self.removed:
            return None
        found = None
        for spec in self.specs:
            if spec.since <= v:
                found = spec
        return found

    def value_without_gate(self, v: Version) -> bool:
        """What the code does at ``v`` where the gate does not exist: before it, the old code
        (off); after its removal, its last default."""
        if self.removed is not None and v >= self.removed:
            return self.specs[-1].default
        return False


def _s(since: str, default: bool, prerelease: str, lock: bool = False) -> FeatureSpec:
    major, minor = since.split(".")
    return FeatureSpec(Version(int(major), int(minor)), default, prerelease, lock)


# Every gate kubesched models.  The 1.30 and 1.31 binaries had no VersionedSpecs yet: their
# entries are read from those tags' ``defaultKubernetesFeatureGates`` and agree with the history
# the later VersionedSpecs carry (an entry before 1.30 is that history's, kept as upstream has it).
# No v1.36 tag was read: the 1.36 column is a stored copy of upstream's VersionedSpecs newer than
# v1.36.0 (entries up to 1.37; kept only up to 1.36) where it has the gate; it no longer has
# SchedulerQueueingHints (removed after its lock), which stays GA locked in 1.36 as in 1.35.
UPSTREAM_AFTER_136 = (
    "upstream's VersionedSpecs after v1.36.0 (pkg/features/kube_features.go), entries up to 1.36; "
    "absent from v1.30.6 and v1.31.8"
)

FEATURE_GATES: dict[str, VersionedGate] = {
    g.name: g
    for g in (
        VersionedGate(
            "ClearingNominatedNodeNameAfterBinding",
            (_s("1.34", False, ALPHA), _s("1.35", True, BETA)),
            "upstream's VersionedSpecs at 1.35 ({1.34 Alpha off}, {1.35 Beta on})",
            "the API server (kubesched's fake cluster in simulate) clears a pod's status.nominatedNodeName when "
            "it binds the pod; off, a bound pod keeps the nominated node its scheduler wrote",
        ),
        VersionedGate(
            "DynamicResourceAllocation",
            (_s("1.26", False, ALPHA), _s("1.32", False, BETA), _s("1.34", True, GA), _s("1.35", True, GA, True)),
            "v1.30.6, v1.31.8 pkg/features/kube_features.go (Alpha, off); "
            "v1.35.4 pkg/features/kube_features.go VersionedSpecs; 1.36: upstream's VersionedSpecs after v1.36.0",
            "the DynamicResources plugin joins the default profile, before DefaultPreemption "
            "(v1.34.7 pkg/scheduler/apis/config/v1/default_plugins.go applyFeatureGates)",
        ),
        VersionedGate(
            "DRAAdminAccess",
            (_s("1.32", False, ALPHA), _s("1.34", True, BETA), _s("1.36", True, GA, True)),
            UPSTREAM_AFTER_136,
            "the DRA allocator honours adminAccess requests (else: \"admin access is requested, but "
            "the feature is disabled\")",
        ),
        VersionedGate(
            "DRAConsumableCapacity",
            (_s("1.34", False, ALPHA), _s("1.36", True, BETA)),
            UPSTREAM_AFTER_136,
            "the DRA allocator shares devices with allowMultipleAllocations by capacity.requests; "
            "CEL selectors see device.allowMultipleAllocations in new expressions",
        ),
        VersionedGate(
            "DRADeviceBindingConditions",
            (_s("1.34", False, ALPHA), _s("1.36", True, BETA)),
            UPSTREAM_AFTER_136,
            "with DRAResourceClaimDeviceStatus: devices with binding conditions can be allocated "
            "(pools with them last, in 1.36's allocator)",
        ),
        VersionedGate(
            "DRADeviceTaintRules",
            (_s("1.35", False, ALPHA), _s("1.36", False, BETA)),
            UPSTREAM_AFTER_136,
            "DeviceTaintRules add their taint to the devices they select in the slices the DRA "
            "allocator sees (before 1.35 DRADeviceTaints does this)",
        ),
        VersionedGate(
            "DRADeviceTaints",
            (_s("1.33", False, ALPHA), _s("1.36", True, BETA)),
            UPSTREAM_AFTER_136,
            "the DRA allocator skips devices with an untolerated NoSchedule/NoExecute taint; "
            "before 1.35 also: DeviceTaintRules taint the devices they select",
        ),
        VersionedGate(
            "DRAExtendedResource",
            (_s("1.34", False, ALPHA), _s("1.36", True, BETA)),
            UPSTREAM_AFTER_136,
            "extended resources a DeviceClass names (extendedResourceName, or the implicit "
            "deviceclass.resource.kubernetes.io/<class>) and a node does not advertise are left by "
            "NodeResourcesFit to DynamicResources, which allocates them in a claim it creates for "
            "the pod at PreBind; NodeResourcesFit and BalancedAllocation then sign no pod",
        ),
        VersionedGate(
            "DRASchedulerFilterTimeout",
            (_s("1.34", True, BETA),),
            "v1.34.7 and v1.35.4 pkg/features/kube_features.go VersionedSpecs ({1.34 Beta on}); 1.36: upstream's "
            "VersionedSpecs after v1.36.0 (unchanged)",
            "DynamicResources' Filter gives up on a node after filterTimeout (10 s by default; \"timed out "
            "trying to allocate devices\"); off (and before 1.34), the allocator runs to its end",
        ),
        VersionedGate(
            "DRAListTypeAttributes",
            (_s("1.36", False, ALPHA),),
            UPSTREAM_AFTER_136,
            "CEL selectors see list-valued device attributes and includes() in new expressions",
        ),
        VersionedGate(
            "DRAPartitionableDevices",
            (_s("1.33", False, ALPHA), _s("1.36", True, BETA)),
            UPSTREAM_AFTER_136,
            "the DRA allocator takes devices that consume shared counters, and slices with "
            "perDeviceNodeSelection",
        ),
        VersionedGate(
            "DRAPrioritizedList",
            (_s("1.33", False, ALPHA), _s("1.34", True, BETA), _s("1.36", True, GA)),
            UPSTREAM_AFTER_136,
            "the DRA allocator takes firstAvailable requests (else: \"has subrequests, but the "
            "DRAPrioritizedList feature is disabled\")",
        ),
        VersionedGate(
            "DRAResourceClaimDeviceStatus",
            (_s("1.32", False, ALPHA), _s("1.33", True, BETA)),
            UPSTREAM_AFTER_136,
            "with DRADeviceBindingConditions: binding conditions (see there)",
        ),
        VersionedGate(
            "GangScheduling",
            (_s("1.35", False, ALPHA),),
            "v1.35 pkg/features/kube_features.go VersionedSpecs (GangScheduling: 1.35 Alpha, off); 1.36: "
            "upstream's VersionedSpecs after v1.36.0 (unchanged)",
            "the GangScheduling plugin joins the default profile (multiPoint, last: default_plugins.go "
            "applyFeatureGates); it holds a gang's pods at PreEnqueue until minCount exist and at Permit "
            "until minCount are assumed; an unscheduled pod's arrival is a cluster event "
            "(addPodToSchedulingQueue)",
        ),
        VersionedGate(
            "GenericWorkload",
            (_s("1.35", False, ALPHA),),
            "v1.35 pkg/features/kube_features.go VersionedSpecs (GenericWorkload: 1.35 Alpha, off); 1.36: "
            "upstream's VersionedSpecs after v1.36.0 (unchanged)",
            "the Workload API is served: scheduling.k8s.io/v1alpha1 Workload and pod.spec.workloadRef "
            "(1.35), scheduling.k8s.io/v1alpha2 Workload and PodGroup and pod.spec.schedulingGroup "
            "(1.36); off, those kinds are refused and the pod fields dropped (dropDisabledPodFields)",
        ),
        VersionedGate(
            "TopologyAwareWorkloadScheduling",
            (_s("1.36", False, ALPHA),),
            "1.36: upstream's VersionedSpecs after v1.36.0 (TopologyAwareWorkloadScheduling: 1.36 Alpha, off); "
            "kubernetes.io docs/concepts/scheduling-eviction/topology-aware-scheduling (v1.36 alpha)",
            "in the PodGroup cycle (GenericWorkload on), the placement algorithm: TopologyPlacement divides "
            "the nodes by the PodGroup's schedulingConstraints.topology key, the group is tried on each "
            "domain, NodeResourcesFit (MostAllocated over the domain) and PodGroupPodsCount score the "
            "domains it fits (schedule_one_podgroup.go podGroupSchedulingPlacementAlgorithm)",
        ),
        VersionedGate(
            "VolumeAttributesClass",
            (_s("1.29", False, ALPHA), _s("1.31", False, BETA), _s("1.34", True, GA), _s("1.36", True, GA, True)),
            "v1.30.6 pkg/features/kube_features.go (Alpha, off); upstream's VersionedSpecs after v1.36.0 "
            "({1.29 Alpha off}, {1.31 Beta off}, {1.34 GA on}, {1.36 GA on, locked})",
            "a claim binds only a volume of its volumeAttributesClassName (VolumeBinding's and the PV controller's "
            "FindMatchingVolume, component-helpers v0.31+; a provisioned volume takes its claim's); off, the API server "
            "drops the field from new claims, volumes and StatefulSet claim templates, a claim that still names one is "
            "an error and a volume that names one matches nothing (1.30's function has no check at all)",
        ),
        VersionedGate(
            "WorkloadAwarePreemption",
            (_s("1.36", False, ALPHA),),
            "1.36: upstream's VersionedSpecs after v1.36.0 (WorkloadAwarePreemption: 1.36 Alpha, off)",
            "in the PodGroup cycle (GenericWorkload on), a group the algorithm cannot place preempts "
            "as one over the whole cluster (podgrouppreemption.go: victims are pods or whole PodGroups "
            "of disruptionMode PodGroup, spared by importance, every placed member nominated)",
        ),
        VersionedGate(
            "InPlacePodLevelResourcesVerticalScaling",
            (_s("1.35", False, ALPHA), _s("1.36", True, BETA)),
            "upstream's VersionedSpecs after v1.36.0 ({1.35 Alpha off}, {1.36 Beta on}); component-helpers "
            "v0.35.4 / v0.36.0 resource/helpers.go PodRequests",
            "with PodLevelResources and InPlacePodVerticalScaling: a pod-level request of a pod whose status has "
            "resources counts the max of the spec's, the actuated (status.resources.requests) and the allocated "
            "(status.allocatedResources) requests, of the last two alone where the resize is infeasible "
            "(determineEffectiveRequests), in NodeResourcesFit, NodeResourcesBalancedAllocation and the cache",
        ),
        VersionedGate(
            "InPlacePodVerticalScaling",
            (_s("1.27", False, ALPHA), _s("1.33", True, BETA), _s("1.35", True, GA, True)),
            "v1.30.6, v1.31.8 pkg/features/kube_features.go (Alpha, off); upstream's VersionedSpecs at 1.33 and "
            "1.35 ({1.27 Alpha off}, {1.33 Beta on}, {1.35 GA on, locked}); 1.36: upstream's VersionedSpecs after "
            "v1.36.0",
            "a resized pod's requests count its container statuses (allocatedResources, resources.requests) "
            "beside its spec in NodeResourcesFit, NodeResourcesBalancedAllocation and the cache (component-helpers "
            "resource.PodRequests with UseStatusResources; an infeasible resize, status.resize before 1.33 and the "
            "PodResizePending condition from 1.33, leaves the spec out)",
        ),
        VersionedGate(
            "KubeschedSourceExact",
            (_s("1.34", False, KUBESCHED),),
            "not an upstream gate: issue 34's acceptance expects the 1.33 behaviour from 1.34 on, "
            "the v1.34.7 and v1.35.4 sources have these two (docs/versions.md, \"Where the issue and the "
            "upstream source disagree\")",
            "the two behaviours of the v1.34.7 and v1.35.4 sources that issue 34 expects otherwise: "
            "NodeResourcesFit answers UnschedulableAndUnresolvable for a request above the node's "
            "allocatable (fit.go, kubernetes#131345), so preemption finds such nodes \"not helpful\", and "
            "DynamicResources' PostFilter answers \"no new claims to deallocate\" for a pod without claims "
            "(dynamicresources.go, state.claims.empty()); off: both as in v1.33.3 (Unschedulable, and no "
            "reason, kubernetes#129823)",
        ),
        VersionedGate(
            "NodeInclusionPolicyInPodTopologySpread",
            (_s("1.25", False, ALPHA), _s("1.26", True, BETA), _s("1.33", True, GA, True)),
            "v1.30.6 pkg/features/kube_features.go (Beta, on); upstream's VersionedSpecs at 1.33 and 1.35 and "
            "after v1.36.0 ({1.25 Alpha off}, {1.26 Beta on}, {1.33 GA on, locked})",
            "PodTopologySpread reads a constraint's nodeAffinityPolicy and nodeTaintsPolicy (which nodes count "
            "towards the skew); off, they are Honor and Ignore whatever the pod says",
        ),
        VersionedGate(
            "NominatedNodeNameForExpectation",
            (_s("1.34", False, ALPHA), _s("1.35", True, BETA)),
            "upstream's VersionedSpecs at 1.35 ({1.34 Alpha off}, {1.35 Beta on})",
            "a binding cycle that will wait at Permit or whose PreBind will act (PreBindPreFlight) first writes "
            "the chosen node as the pod's status.nominatedNodeName (schedule_one.go bindingCycle)",
        ),
        VersionedGate(
            "MatchLabelKeysInPodAffinity",
            (_s("1.29", False, ALPHA), _s("1.31", True, BETA), _s("1.33", True, GA, True)),
            "v1.30.6 pkg/features/kube_features.go (Alpha, off); upstream's VersionedSpecs at 1.33 and 1.35 "
            "({1.29 Alpha off}, {1.31 Beta on}, {1.33 GA on, locked}); 1.36 kept as 1.35 (the gate is not in the "
            "scheduler's own features file after v1.36.0 and no 1.36 copy of kube_features.go was read: if 1.36 "
            "removed it, setting it there is unrecognized upstream)",
            "a pod (anti-)affinity term's matchLabelKeys and mismatchLabelKeys take the pod's values of those "
            "labels into its selector (the API server's mutatePodAffinity on create, KEP-3633); off, the API "
            "server drops both fields from new pods and pod templates (dropDisabledMatchLabelKeysFieldInPodAffinity) "
            "and the terms select by their labelSelector alone",
        ),
        VersionedGate(
            "MatchLabelKeysInPodTopologySpread",
            (_s("1.25", False, ALPHA), _s("1.27", True, BETA)),
            "v1.30.6 pkg/features/kube_features.go (Beta, on); upstream's VersionedSpecs at 1.33 and 1.35 and "
            "after v1.36.0 ({1.25 Alpha off}, {1.27 Beta on})",
            "PodTopologySpread adds a constraint's matchLabelKeys (the pod's values of those labels) to its "
            "selector (podtopologyspread/common.go filterTopologySpreadConstraints); off, they are ignored",
        ),
        VersionedGate(
            "NodeDeclaredFeatures",
            (_s("1.35", False, ALPHA), _s("1.36", True, BETA)),
            "upstream's VersionedSpecs at 1.35 ({1.35 Alpha off}) and after v1.36.0 ({1.36 Beta on}, {1.37 GA locked})",
            "the NodeDeclaredFeatures plugin joins the default profile, last: a pod whose spec needs a feature "
            "(a RestartAllContainers restart rule; from 1.36 hostNetwork with hostUsers false) fits only nodes "
            "whose status.declaredFeatures list it (\"node(s) didn't match Pod's required features\")",
        ),
        VersionedGate(
            "OpportunisticBatching",
            (_s("1.35", True, BETA),),
            "v1.35 pkg/features/kube_features.go VersionedSpecs (OpportunisticBatching, KEP-5598: {1.35 Beta on}); "
            "1.36: upstream's VersionedSpecs after v1.36.0 (unchanged)",
            "a pod whose scheduling signature equals the previous pod's takes the next node of that pod's sorted "
            "scores when the node that pod took now rejects it (pkg/scheduler/framework/runtime/batch.go); the "
            "default profile signs no pod (its PodTopologySpread is system-defaulted), so it places as with the "
            "gate off (docs/versions.md, OpportunisticBatching)",
        ),
        VersionedGate(
            "PodDisruptionConditions",
            (_s("1.25", False, ALPHA), _s("1.26", True, BETA), _s("1.31", True, GA, True)),
            "v1.30.6 pkg/features/kube_features.go (Beta, on); upstream's VersionedSpecs at 1.32 "
            "({1.25 Alpha off}, {1.26 Beta on}, {1.31 GA on, locked}, \"remove in 1.33\"); absent from 1.33",
            "preemption victims get the DisruptionTarget condition (reason PreemptionByScheduler) before they "
            "are deleted, and a preemptor's nominated node holding a lower-priority pod terminating by preemption "
            "makes it ineligible to preempt; off (1.30 only), no condition and any terminating pod counts "
            "(v1.30 preemption.go prepareCandidate, default_preemption.go podTerminatingByPreemption)",
            removed=Version(1, 33),
        ),
        VersionedGate(
            "PodLevelResources",
            (_s("1.32", False, ALPHA), _s("1.34", True, BETA)),
            "upstream's VersionedSpecs at 1.33 and 1.35 (pkg/features/kube_features.go: Alpha off from 1.32, Beta on "
            "from 1.34; absent from v1.31.8); 1.36: upstream's VersionedSpecs after v1.36.0",
            "a pod's spec.resources (pod-level requests of cpu, memory and, from 1.33, hugepages) replace its "
            "containers' aggregate in NodeResourcesFit, NodeResourcesBalancedAllocation and the cache's node "
            "requests (component-helpers resource.PodRequests, SkipPodLevelResources when off; the API server's "
            "defaulting of a left-out request from the pod-level limit)",
        ),
        VersionedGate(
            "SchedulerAsyncPreemption",
            (_s("1.32", False, ALPHA), _s("1.33", True, BETA)),
            "v1.35.4 pkg/features/kube_features.go VersionedSpecs (absent from v1.31.8); 1.36: upstream's "
            "VersionedSpecs after v1.36.0",
            "DefaultPreemption deletes the victims in the background; the preemptor waits in "
            "PreEnqueue (\"waiting for the preemption for this pod to be finished\")",
        ),
        VersionedGate(
            "SchedulerPopFromBackoffQ",
            (_s("1.33", True, BETA),),
            "v1.33.3, v1.35.4 pkg/features/kube_features.go VersionedSpecs; 1.36: upstream's VersionedSpecs "
            "after v1.36.0",
            "backoffQ ordered in 1 s windows; Pop takes from backoffQ when activeQ is empty",
        ),
        VersionedGate(
            "SchedulerQueueingHints",
            (_s("1.28", False, BETA), _s("1.32", True, BETA), _s("1.34", True, GA, True)),
            "v1.30.6, v1.31.8 pkg/features/kube_features.go (Beta, off); "
            "v1.34.7, v1.35.4 pkg/features/kube_features.go VersionedSpecs; 1.36 unverified (kept as 1.35)",
            "plugins' QueueingHints decide which cluster events requeue a pod; off: the legacy queue "
            "(every registered event requeues, moveRequestCycle)",
        ),
        VersionedGate(
            "StorageCapacityScoring",
            (_s("1.33", False, ALPHA),),
            "v1.33.3, v1.35.4 pkg/features/kube_features.go VersionedSpecs (beta on from 1.37 in upstream's "
            "VersionedSpecs after v1.36.0)",
            "VolumeBinding's Score (by the capacity of the node's storage)",
        ),
    )
}


def gates_at(v: Version) -> dict[str, VersionedGate]:
    """The gates the binary of ``v`` knows."""
    return {name: g for name, g in FEATURE_GATES.items() if g.spec_at(v) is not None}


def default_feature_gates(v: Version = DEFAULT_VERSION) -> dict[str, bool]:
    """Every modelled gate's value at ``v`` when none is set: its default where it exists, the
    code's behaviour without it where it does not."""
    out = {}
    for name, g in sorted(FEATURE_GATES.items()):
        spec = g.spec_at(v)
        out[name] = spec.default if spec is not None else g.value_without_gate(v)
    return out


_GO_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_GO_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def parse_feature_gates(
    text: str, base: Mapping[str, bool] | None = None, version: Version = DEFAULT_VERSION
) -> dict[str, bool]:
    """``--feature-gates K=V,K2=V2`` on top of ``base`` (default: the defaults at ``version``),
    checked against the gates ``version`` knows, as component-base's ``featureGate.Set``
    (v0.36.0 featuregate/feature_gate.go ``unsafeSetFromMap``): values are Go booleans
    (``strconv.ParseBool``), an unknown gate or one set against its lock is an error, in
    upstream's words."""
    gates = dict(base if base is not None else default_feature_gates(version))
    wanted: dict[str, bool] = {}  # ``Set`` parses every pair before it checks a gate
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part:
            raise ConfigError(f"missing bool value for {part}", field="--feature-gates")
        k, v = (s.strip() for s in part.split("=", 1))
        if v not in _GO_TRUE and v not in _GO_FALSE:
            raise ConfigError(
                f'invalid value of {k}={v}, err: strconv.ParseBool: parsing "{v}": invalid syntax',
                field="--feature-gates",
            )
        wanted[k] = v in _GO_TRUE
    known = gates_at(version)
    for k, value in wanted.items():
        gate = known.get(k)
        if gate is None:
            raise ConfigError(f"unrecognized feature gate: {k}", field="--feature-gates")
        spec = gate.spec_at(version)
        assert spec is not None
        if spec.lock_to_default and spec.default != value:
            raise ConfigError(
                f"cannot set feature gate {k} to {str(value).lower()}, feature is locked to "
                f"{str(spec.default).lower()}",
                field="--feature-gates",
            )
        gates[k] = value
    return gates


def _cell(g: VersionedGate, v: Version) -> str:
    spec = g.spec_at(v)
    if spec is None:
        return "—"
    text = f"{spec.prerelease} {'on' if spec.default else 'off'}"
    return text + " (locked)" if spec.lock_to_default else text


def feature_gate_table() -> str:
    """docs/feature-gates.md: every gate kubesched models, its default and lock per minor."""
    head = "| gate | " + " | ".join(str(v) for v in SUPPORTED_VERSIONS) + " |"
    rule = "|---|" + "---|" * len(SUPPORTED_VERSIONS)
    rows = [
        f"| {g.name} | " + " | ".join(_cell(g, v) for v in SUPPORTED_VERSIONS) + " |"
        for g in sorted(FEATURE_GATES.values(), key=lambda g: g.name)
    ]
    notes = [f"- **{g.name}**: {g.effect}. Source: {g.source}." for g in sorted(FEATURE_GATES.values(), key=lambda g: g.name)]
    return "\n".join(
        [
            "# Feature gates per emulated version",
            "",
            "Generated from `kubesched.config._versions.FEATURE_GATES` by `feature_gate_table()`; a test",
            "checks that this file is current.  `—`: the gate does not exist in that release (setting it",
            "is `unrecognized feature gate: X`, and the code behaves as before the gate).  `(locked)`:",
            "setting it against its default is `cannot set feature gate X to false, feature is locked to",
            "true`.  `kubesched`: a gate of kubesched's own, not upstream's.  Choose the release with",
            f"`--emulated-version MAJOR.MINOR` (default {DEFAULT_VERSION}).",
            "",
            head,
            rule,
            *rows,
            "",
            "What each gate changes, and where its entries are read:",
            "",
            *notes,
            "",
        ]
    )


__all__ = [
    "DEFAULT_VERSION",
    "FEATURE_GATES",
    "NEWEST_VERSION",
    "OLDEST_VERSION",
    "SUPPORTED_VERSIONS",
    "VERSION_RANGE",
    "FeatureSpec",
    "Version",
    "VersionedGate",
    "default_feature_gates",
    "feature_gate_table",
    "gates_at",
    "parse_feature_gates",
    "parse_version",
]
