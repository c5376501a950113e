"""The in-tree plugins, named as upstream, and the registry the profiles build from.

Each plugin lives in its own module with its ``NAME``, its reason strings and a factory
``new(args, handle)``.  :data:`IN_TREE` maps plugin names to factories; plugins from other
packages join through the ``kubesched`` entry-point group (see :func:`kubesched.load_entry_point_plugins`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import (
    coscheduling,
    defaultbinder,
    defaultpreemption,
    dynamicresources,
    gang,
    gangscheduling,
    imagelocality,
    interpodaffinity,
    nodeaffinity,
    nodedeclaredfeatures,
    nodename,
    nodeports,
    noderesources,
    nodeunschedulable,
    nodevolumelimits,
    podgrouppodscount,
    podtopologyspread,
    queuesort,
    schedulinggates,
    tainttoleration,
    topologyplacement,
    volumebinding,
    volumerestrictions,
    volumezone,
)

Factory = Callable[[Any, Any], Any]

IN_TREE: dict[str, Factory] = {
    schedulinggates.NAME: schedulinggates.new,
    queuesort.NAME: queuesort.new,
    nodeunschedulable.NAME: nodeunschedulable.new,
    nodename.NAME: nodename.new,
    tainttoleration.NAME: tainttoleration.new,
    nodeaffinity.NAME: nodeaffinity.new,
    nodeports.NAME: nodeports.new,
    noderesources.FIT_NAME: noderesources.new_fit,
    volumerestrictions.NAME: volumerestrictions.new,
    nodevolumelimits.NAME: nodevolumelimits.new,
    volumebinding.NAME: volumebinding.new,
    volumezone.NAME: volumezone.new,
    podtopologyspread.NAME: podtopologyspread.new,
    interpodaffinity.NAME: interpodaffinity.new,
    noderesources.BALANCED_NAME: noderesources.new_balanced_allocation,
    imagelocality.NAME: imagelocality.new,
    dynamicresources.NAME: dynamicresources.new,
    defaultpreemption.NAME: defaultpreemption.new,
    defaultbinder.NAME: defaultbinder.new,
    nodedeclaredfeatures.NAME: nodedeclaredfeatures.new,
    coscheduling.NAME: coscheduling.new,
    gang.NAME: gang.new,
    gangscheduling.NAME: gangscheduling.new,
    topologyplacement.NAME: topologyplacement.new,
    podgrouppodscount.NAME: podgrouppodscount.new,
}
"""Plugin name → factory ``(args, handle) -> plugin``."""

__all__ = ["IN_TREE", "Factory"]
