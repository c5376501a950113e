"""The disruption-controller emulation: PodDisruptionBudget status, as a controller fed by the store.

It computes the status of each PDB written without one (a PDB written with a status keeps it:
a test or a simulation states the budget it wants), keeping per PDB its expected pods (name →
healthy: matched by the selector, not terminating; healthy = Running):

- ``admit``, PDB create/update: a PDB without a status (or one already computed) gets it in that
  same write, from the pods of its namespace; one created with a status is left alone.
- ``observe``, every pod write: each computed PDB of the pod's namespace whose expected pods
  change gets a new status — one MODIFIED (verb ``status``) when the status differs, PDBs in
  the order they were first computed.  A PDB deleted is forgotten.

Status as the controller's ``getExpectedPodCount``/``updatePdbStatus``: desiredHealthy from
minAvailable, or expected − maxUnavailable (percentages scaled up on expected pods);
disruptionsAllowed = max(0, currentHealthy − desiredHealthy); an invalid value allows none.
"""

from __future__ import annotations

import math

from msgspec.structs import replace

from kubesched.api import Pod, PodDisruptionBudget, PodDisruptionBudgetStatus, selector_matches

from ._store import Change, Controller, Key, Store


def _scaled(value: int | str, total: int, *, what: str) -> int:
    """``intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)``."""
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.endswith("%"):
        try:
            pct = int(value[:-1])
        except ValueError:
            pass
        else:
            return math.ceil(pct * total / 100)
    raise ValueError(f"invalid {what} {value!r}: an integer or a percentage")


def pdb_member(pdb: PodDisruptionBudget, pod: Pod | None) -> bool | None:
    """None if ``pod`` is not one of the pods ``pdb`` expects, else whether it is healthy."""
    if pod is None or pod.metadata.deletion_timestamp is not None:
        return None
    if not selector_matches(pdb.spec.selector, pod.metadata.labels):
        return None
    return bool(pod.status.phase == "Running")


def pdb_status(pdb: PodDisruptionBudget, members: dict[str, bool]) -> PodDisruptionBudgetStatus:
    """The disruption controller's status for ``pdb``; ``members``: expected pod → healthy."""
    expected = len(members)
    healthy = sum(members.values())
    spec = pdb.spec
    try:
        if spec.max_unavailable is not None:
            unavailable = _scaled(spec.max_unavailable, expected, what="maxUnavailable")
            desired = max(0, expected - unavailable)
        elif spec.min_available is not None:
            desired = _scaled(spec.min_available, expected, what="minAvailable")
        else:
            desired = 0
        allowed = max(0, healthy - desired)
    except ValueError:
        # the controller's fail-safe: no disruption allowed
        desired, allowed = 0, 0
    return PodDisruptionBudgetStatus(
        observed_generation=pdb.metadata.generation,
        disrupted_pods={},
        disruptions_allowed=allowed,
        current_healthy=healthy,
        desired_healthy=desired,
        expected_pods=expected,
    )


class Disruption(Controller):
    """PDB status for PDBs written without one (see the module docstring)."""

    kinds = ("Pod", "PodDisruptionBudget")
    admits = ("PodDisruptionBudget",)

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        # PDBs whose status this controller computes → their expected pods (name → healthy)
        self._computed: dict[Key, dict[str, bool]] = {}
        # pods are fed only while a PDB is computed: observe does nothing for them otherwise
        store.follow(self, "Pod", False)

    def admit(self, change: Change) -> None:
        if change.kind != "PodDisruptionBudget":
            return
        pdb, key = change.obj, change.key
        if change.verb == "create":
            if pdb.status is None:
                pdb.status = self._track(key, pdb)
            else:
                self._forget(key)
        elif change.verb == "update" and (key in self._computed or pdb.status is None):
            pdb.status = self._track(key, pdb)

    def observe(self, change: Change) -> None:
        if change.kind == "Pod":
            if self._computed:
                self._sync(change.key, None if change.type == "DELETED" else change.obj)
        elif change.type == "DELETED" and self.store.get(change.kind, change.key) is None:
            self._forget(change.key)

    def _forget(self, key: Key) -> None:
        """Stop computing the PDB at ``key``'s status (if it was): the last one stops the pods'
        feed."""
        if self._computed.pop(key, None) is not None and not self._computed:
            self.store.follow(self, "Pod", False)

    def _track(self, key: Key, pdb: PodDisruptionBudget) -> PodDisruptionBudgetStatus:
        """Start (or restart) computing ``pdb``'s status; returns it."""
        members = {}
        for pod in self.store.in_namespace("Pod", key[0]):
            healthy = pdb_member(pdb, pod)
            if healthy is not None:
                members[pod.metadata.name] = healthy
        if not self._computed:  # the first: pods are fed from now on
            self.store.follow(self, "Pod", True)
        self._computed[key] = members
        return pdb_status(pdb, members)

    def _sync(self, pod_key: Key, pod: Pod | None) -> None:
        """After a write of the pod at ``pod_key`` (None: removed): update each computed PDB of
        its namespace that counts it, writing its status when it changed."""
        namespace, name = pod_key
        pdbs = self.store.objects("PodDisruptionBudget")
        for key, members in self._computed.items():
            if key[0] != namespace:
                continue
            pdb = pdbs.get(key)
            if pdb is None:
                continue  # deleted, and its DELETED not fed yet
            healthy = pdb_member(pdb, pod)
            if members.get(name) == healthy and (healthy is not None or name not in members):
                continue
            if healthy is None:
                del members[name]
            else:
                members[name] = healthy
            status = pdb_status(pdb, members)
            if status != pdb.status:
                new = replace(pdb, metadata=replace(pdb.metadata), status=status)
                self.store.put("PodDisruptionBudget", key, new, "MODIFIED", "status")
