"""Admission: what the API server does to a pod it is asked to create, before storing it.

Not a controller upstream but the Priority admission plugin and the pod strategy's
PrepareForCreate; here the store's first in-write step (``Controller.admit``) on Pod creates:

- Priority: ``spec.priorityClassName`` → ``spec.priority`` (the two system classes resolve even
  when not stored; an unknown class is refused unless the pod already has a priority); no class
  name → the globalDefault class, if any, else 0; ``spec.preemptionPolicy`` from the class, else
  PreemptLowerPriority.
- An unbound pod starts ``Pending``, with the PodScheduled=False/SchedulingGated condition when it
  has scheduling gates (applySchedulingGatedCondition).

Updates and the scheduler's writes are not admitted.
"""

from __future__ import annotations

from kubesched import ConfigError
from kubesched.api import Pod, PodCondition, PriorityClass
from kubesched.validation import check_priority_admission

from ._store import Change, Controller, Key, Store

DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"

# The two classes every API server creates at start-up; admission resolves them even when the
# cluster was not given them (they are not listed by watch()).
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}


class Admission(Controller):
    """The store's admission step for Pod creates (see the module docstring)."""

    kinds = ("Pod",)
    admit_verbs = ("create",)

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self._classes: dict[Key, PriorityClass] = store.objects("PriorityClass")  # (the store's own)

    def admit(self, change: Change) -> None:
        if change.verb != "create":
            return
        pod: Pod = change.obj
        spec = pod.spec
        classes = self._classes
        cls: PriorityClass | None = None
        value: int | None = None
        named = bool(spec.priority_class_name)
        if named:
            cls = classes.get(("", spec.priority_class_name))
            if cls is not None:
                value = cls.value
            elif spec.priority_class_name in SYSTEM_PRIORITY_CLASSES:
                value = SYSTEM_PRIORITY_CLASSES[spec.priority_class_name]
            elif spec.priority is None:
                raise ConfigError(
                    f"no PriorityClass with name {spec.priority_class_name} was found",
                    field="spec.priorityClassName",
                )
        else:
            for pc in classes.values():
                if pc.global_default:
                    cls = pc
                    value = pc.value
                    spec.priority_class_name = pc.metadata.name
                    break
        if named:  # a class the pod names (not the global default) decides its priority
            check_priority_admission(pod, cls)
        if spec.priority is None:
            spec.priority = value if value is not None else 0
        if spec.preemption_policy is None:
            policy = cls.preemption_policy if cls is not None else None
            spec.preemption_policy = policy or DEFAULT_PREEMPTION_POLICY
        if spec.node_name:
            return  # created bound: the kubelet starts it (in the same write)
        pod.status.phase = pod.status.phase or "Pending"
        if spec.scheduling_gates and not any(
            c.type == "PodScheduled" for c in pod.status.conditions
        ):
            # the API server's applySchedulingGatedCondition
            pod.status.conditions = [
                *pod.status.conditions,
                PodCondition(
                    type="PodScheduled",
                    status="False",
                    reason="SchedulingGated",
                    message="Scheduling is blocked due to non-empty scheduling gates",
                    last_transition_time=change.stamp or self.store.clock.timestamp(),
                ),
            ]
