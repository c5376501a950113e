"""DefaultBinder: bind the pod through the API (``plugins/defaultbinder``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.framework import Binding, Handle, ObjectMeta, ObjectReference, Status, hookimpl

if TYPE_CHECKING:
    from kubesched.framework import CycleState, Pod

NAME = "DefaultBinder"


class DefaultBinder:
    """Bind: POST a ``v1.Binding`` of the pod (namespace, name, uid) to the node.

    A failure of the transport becomes an Error status (``framework.AsStatus``).
    """

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle

    @hookimpl
    async def kubesched_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        binding = Binding(
            metadata=ObjectMeta(
                namespace=pod.metadata.namespace, name=pod.metadata.name, uid=pod.metadata.uid
            ),
            target=ObjectReference(kind="Node", name=node_name),
        )
        try:
            await self.handle.client.bind(binding)
        except Exception as err:
            return Status.as_error(err)
        return None


def new(args: dict[str, Any] | None, handle: Handle) -> DefaultBinder:
    return DefaultBinder(args, handle)


__all__ = ["NAME", "DefaultBinder", "new"]
