"""The checked AST of a compiled CEL expression, read back from the engine, and what kubesched
computes from it: the worst-case cost, the attribute domains a selector looks up, and the
``device`` fields it names.

cel-expr-python hands a compiled expression out only as a serialized ``cel.expr.CheckedExpr``
(an ``Any``-wrapped protobuf).  This module reads that wire format directly (field numbers from
cel-spec's ``proto/cel/expr/syntax.proto`` and ``checked.proto``), so no protobuf runtime is
needed, into :class:`Node` trees.

The cost estimate follows cel-go's ``checker/cost.go`` as Kubernetes configures it
(``k8s.io/apiserver/pkg/cel/library/cost.go``, ``PresenceTestHasCost(false)``): identifiers and
selections cost 1, a call its arguments plus 1, ``&&``/``||`` the sum of both sides, ``?:`` its
condition and the dearer branch, ``==`` with a string a tenth of the shorter side, ``in`` on a
list its size, ``matches`` the string's tenth times the regex's quarter, ``split`` a fifth of
the string, DRA's ``includes`` 48, and a comprehension its range plus the range's size times
its loop condition and step.  Sizes come from the limits the ``device`` variable is declared
with (``k8s.io/dynamic-resource-allocation`` v0.36.2 ``cel/compile.go``: 32 domains of at most
63 bytes, 32 attributes or capacities per domain with ids of at most 64 bytes, 64 bytes per
attribute value, 64 elements per list attribute).  It reproduces every figure of upstream's
compile_test.go; for functions those rows do not use, it is an upper bound of the same kind.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

# k8s.io/api/resource/v1 types.go (v0.36.x).
MAX_ATTRIBUTES_PER_DEVICE = 32
MAX_ATTRIBUTE_VALUE_LENGTH = 64
MAX_ATTRIBUTE_VALUES_PER_DEVICE = 48
MAX_ID_LENGTH = 64
MAX_DOMAIN_LENGTH = 63
UNKNOWN_SIZE = 1 << 20


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def _fields(buf: bytes) -> dict[int, list[int | bytes]]:
    """A protobuf message's fields: number -> values (varints as int, length-delimited as bytes)."""
    out: dict[int, list[int | bytes]] = {}
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        val: int | bytes
        if wt == 0:
            val, i = _varint(buf, i)
        elif wt == 2:
            ln, i = _varint(buf, i)
            val = buf[i : i + ln]
            i += ln
        elif wt == 1:
            val = int.from_bytes(buf[i : i + 8], "little")
            i += 8
        elif wt == 5:
            val = int.from_bytes(buf[i : i + 4], "little")
            i += 4
        else:  # groups are not used by cel.expr
            raise ValueError(f"unsupported wire type {wt}")
        out.setdefault(num, []).append(val)
    return out


def _one(f: dict[int, list[int | bytes]], num: int) -> bytes:
    v = f.get(num)
    return v[-1] if v and isinstance(v[-1], bytes) else b""


def _int(f: dict[int, list[int | bytes]], num: int) -> int:
    v = f.get(num)
    return v[-1] if v and isinstance(v[-1], int) else 0


@dataclass
class Node:
    """One expression node.  ``kind``: const, ident, select, call, list, struct, comprehension."""

    id: int
    kind: str
    name: str = ""  # ident name, select field, call function
    value: object = None  # a constant's value
    test_only: bool = False
    target: Node | None = None
    args: list[Node] = field(default_factory=list)  # call args, list elements, struct values
    # comprehension parts
    iter_var: str = ""
    accu_var: str = ""
    iter_range: Node | None = None
    accu_init: Node | None = None
    loop_condition: Node | None = None
    loop_step: Node | None = None
    result: Node | None = None

    def walk(self) -> Iterator[Node]:
        yield self
        for child in (
            self.target,
            *self.args,
            self.iter_range,
            self.accu_init,
            self.loop_condition,
            self.loop_step,
            self.result,
        ):
            if child is not None:
                yield from child.walk()


def _const(buf: bytes) -> object:
    f = _fields(buf)
    if 2 in f:
        return bool(_int(f, 2))
    if 3 in f:
        v = _int(f, 3)
        return v - (1 << 64) if v >= 1 << 63 else v
    if 4 in f:
        return _int(f, 4)
    if 6 in f:
        return _one(f, 6).decode()
    if 7 in f:
        return _one(f, 7)
    return None


def _expr(buf: bytes) -> Node:
    f = _fields(buf)
    nid = _int(f, 2)
    if 3 in f:
        return Node(nid, "const", value=_const(_one(f, 3)))
    if 4 in f:
        return Node(nid, "ident", name=_one(_fields(_one(f, 4)), 1).decode())
    if 5 in f:
        s = _fields(_one(f, 5))
        return Node(
            nid,
            "select",
            name=_one(s, 2).decode(),
            test_only=bool(_int(s, 3)),
            target=_expr(_one(s, 1)),
        )
    if 6 in f:
        c = _fields(_one(f, 6))
        target = _expr(_one(c, 1)) if 1 in c else None
        args = [_expr(a) for a in c.get(3, []) if isinstance(a, bytes)]
        return Node(nid, "call", name=_one(c, 2).decode(), target=target, args=args)
    if 7 in f:
        lf = _fields(_one(f, 7))
        return Node(nid, "list", args=[_expr(a) for a in lf.get(1, []) if isinstance(a, bytes)])
    if 8 in f:
        sf = _fields(_one(f, 8))
        values: list[Node] = []
        for e in sf.get(2, []):
            if isinstance(e, bytes):
                ef = _fields(e)
                if 3 in ef:
                    values.append(_expr(_one(ef, 3)))
                values.append(_expr(_one(ef, 4)))
        return Node(nid, "struct", args=values)
    if 9 in f:
        cf = _fields(_one(f, 9))
        return Node(
            nid,
            "comprehension",
            iter_var=_one(cf, 1).decode(),
            iter_range=_expr(_one(cf, 2)),
            accu_var=_one(cf, 3).decode(),
            accu_init=_expr(_one(cf, 4)),
            loop_condition=_expr(_one(cf, 5)),
            loop_step=_expr(_one(cf, 6)),
            result=_expr(_one(cf, 7)),
        )
    return Node(nid, "const")


@dataclass
class Checked:
    """A checked expression: its root and, per node id, its offset in the source."""

    root: Node
    positions: dict[int, int]
    line_offsets: list[int]

    def location(self, node_id: int) -> tuple[int, int]:
        """(line, column), both from 1 as cel-go prints them."""
        offset = self.positions.get(node_id, 0)
        line, start = 1, 0
        for lo in self.line_offsets:
            if offset >= lo:
                line += 1
                start = lo
        return line, offset - start + 1


def read_checked(serialized: bytes) -> Checked:
    """Decode cel-expr-python's ``Expression.serialize()`` (an Any holding a CheckedExpr)."""
    anyf = _fields(serialized)
    checked = _fields(_one(anyf, 2))
    root = _expr(_one(checked, 4))
    info = _fields(_one(checked, 5))
    positions: dict[int, int] = {}
    for entry in info.get(4, []):
        if isinstance(entry, bytes):
            ef = _fields(entry)
            positions[_int(ef, 1)] = _int(ef, 2)
    offsets: list[int] = []
    for lo in info.get(3, []):
        if isinstance(lo, bytes):  # packed repeated int32
            i = 0
            while i < len(lo):
                v, i = _varint(lo, i)
                offsets.append(v)
        elif isinstance(lo, int):
            offsets.append(lo)
    return Checked(root, positions, offsets)


# ---- what a selector looks at ------------------------------------------------------------


def _is_device_map(node: Node | None, name: str) -> bool:
    return (
        node is not None
        and node.kind == "select"
        and node.name == name
        and not node.test_only
        and node.target is not None
        and node.target.kind == "ident"
        and node.target.name == "device"
    )


def looked_up_domains(root: Node) -> tuple[frozenset[str], frozenset[str]]:
    """The literal domains indexed on ``device.attributes`` and ``device.capacity``
    (``device.attributes["dra.example.com"]``): upstream's maps answer an unknown domain with an
    empty map (compile.go ``newStringInterfaceMapWithDefault``), which the evaluation input
    provides for exactly these.  A domain only tested with ``in`` is left out, so the test stays
    false."""
    attrs: set[str] = set()
    caps: set[str] = set()
    tested: set[tuple[str, str]] = set()
    for n in root.walk():
        if n.kind != "call" or len(n.args) != 2:
            continue
        if (
            n.name in ("_[_]", "_[?_]")
            and n.args[1].kind == "const"
            and isinstance(n.args[1].value, str)
        ):
            if _is_device_map(n.args[0], "attributes"):
                attrs.add(n.args[1].value)
            elif _is_device_map(n.args[0], "capacity"):
                caps.add(n.args[1].value)
        elif n.name == "@in" and n.args[0].kind == "const" and isinstance(n.args[0].value, str):
            for which in ("attributes", "capacity"):
                if _is_device_map(n.args[1], which):
                    tested.add((which, n.args[0].value))
    return (
        frozenset(d for d in attrs if ("attributes", d) not in tested),
        frozenset(d for d in caps if ("capacity", d) not in tested),
    )


def device_fields(root: Node) -> list[tuple[int, str]]:
    """(node id, field) for every ``device.<field>`` selection."""
    return [
        (n.id, n.name)
        for n in root.walk()
        if n.kind == "select"
        and n.target is not None
        and n.target.kind == "ident"
        and n.target.name == "device"
    ]


# ---- worst-case cost ----------------------------------------------------------------------

_STRING_FUNCS = frozenset(
    {
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "find",
        "findAll",
        "split",
        "lowerAscii",
        "upperAscii",
        "replace",
        "trim",
        "indexOf",
        "lastIndexOf",
        "substring",
        "charAt",
        "join",
    }
)
_LIST_FUNCS = frozenset(
    {
        "sum",
        "min",
        "max",
        "isSorted",
        "includes",
        "sets.contains",
        "sets.intersects",
        "sets.equivalent",
    }
)


class _Estimator:
    def __init__(self, list_type_attributes: bool) -> None:
        self.attr_size = (
            max(MAX_ATTRIBUTE_VALUE_LENGTH, MAX_ATTRIBUTE_VALUES_PER_DEVICE)
            if list_type_attributes
            else MAX_ATTRIBUTE_VALUE_LENGTH
        )
        self.vars: dict[str, int] = {}

    def size(self, n: Node | None) -> int:
        """Worst-case size (elements of a list or map, bytes of a string) of a value."""
        if n is None:
            return UNKNOWN_SIZE
        if n.kind == "const":
            return len(n.value) if isinstance(n.value, str | bytes) else 1
        if n.kind == "list":
            return len(n.args)
        if n.kind == "struct":
            return len(n.args)
        if n.kind == "ident":
            return self.vars.get(n.name, UNKNOWN_SIZE)
        if n.kind == "select":
            if _is_device_map(n, "attributes") or _is_device_map(n, "capacity"):
                return MAX_ATTRIBUTES_PER_DEVICE
            if n.target is not None and n.target.kind == "ident" and n.target.name == "device":
                return MAX_DOMAIN_LENGTH if n.name == "driver" else 1
            return self._element_size(n.target)
        if n.kind == "call":
            if n.name in ("_[_]", "_[?_]") and n.args:
                return self._element_size(n.args[0])
            if n.name == "split" or n.name == "findAll":
                return self.size(n.target)
            if n.name in ("_+_",) and len(n.args) == 2:
                return self.size(n.args[0]) + self.size(n.args[1])
            if n.name == "cel.@block":
                return UNKNOWN_SIZE
        if n.kind == "comprehension":
            return self.size(n.iter_range)
        return UNKNOWN_SIZE

    def _element_size(self, container: Node | None) -> int:
        if _is_device_map(container, "attributes") or _is_device_map(container, "capacity"):
            return MAX_ATTRIBUTES_PER_DEVICE
        if (
            container is not None
            and container.kind == "call"
            and container.name in ("_[_]", "_[?_]")
        ):
            inner = container.args[0] if container.args else None
            if _is_device_map(inner, "attributes"):
                return self.attr_size
            if _is_device_map(inner, "capacity"):
                return 1
        return UNKNOWN_SIZE

    def cost(self, n: Node | None) -> int:
        if n is None:
            return 0
        if n.kind == "const":
            return 0
        if n.kind in ("ident", "select"):
            return 1 + self.cost(n.target)
        if n.kind in ("list", "struct"):
            return 10 + sum(self.cost(a) for a in n.args)
        if n.kind == "comprehension":
            size = min(self.size(n.iter_range), UNKNOWN_SIZE)
            saved = dict(self.vars)
            self.vars[n.iter_var] = self._iter_size(n.iter_range)
            self.vars[n.accu_var] = self.size(n.accu_init)
            per_item = self.cost(n.loop_condition) + self.cost(n.loop_step)
            self.vars = saved
            return (
                self.cost(n.iter_range)
                + self.cost(n.accu_init)
                + size * per_item
                + self.cost(n.result)
            )
        # calls
        if n.name == "_?_:_" and len(n.args) == 3:
            return self.cost(n.args[0]) + max(self.cost(n.args[1]), self.cost(n.args[2]))
        args = sum(self.cost(a) for a in n.args) + self.cost(n.target)
        if n.name == "@in" and len(n.args) == 2:
            right = n.args[1]
            if self._is_map(right):
                return args + 1
            return args + min(self.size(right), UNKNOWN_SIZE)
        if n.name in ("_&&_", "_||_"):
            return args
        if n.name in ("_==_", "_!=_") and len(n.args) == 2:
            if any(a.kind == "const" and isinstance(a.value, str) for a in n.args):
                smallest = min(self.size(n.args[0]), self.size(n.args[1]))
                return args + _ceil_tenth(smallest)
            return args + 1
        if n.name == "includes":
            return args + MAX_ATTRIBUTE_VALUES_PER_DEVICE
        if n.name == "matches" and n.target is not None and n.args:
            # cel-go: string traversal (0.1 a byte) times regex size (0.25 a byte)
            text, regex = min(self.size(n.target), UNKNOWN_SIZE), self.size(n.args[0])
            return args + 1 + -(-(text * regex) // 40)
        if n.name == "split" and n.target is not None:
            # k8s library/cost.go: the traversal and the result's construction
            return args + -(-min(self.size(n.target), UNKNOWN_SIZE) // 5)
        if n.name in _STRING_FUNCS:
            return args + 1 + _ceil_tenth(min(self.size(n.target), UNKNOWN_SIZE))
        if n.name in _LIST_FUNCS:
            first = n.target if n.target is not None else (n.args[0] if n.args else None)
            return args + 1 + min(self.size(first), UNKNOWN_SIZE)
        return args + 1

    def _is_map(self, n: Node) -> bool:
        """``device.attributes``/``device.capacity`` and their per-domain maps."""
        if _is_device_map(n, "attributes") or _is_device_map(n, "capacity"):
            return True
        return (
            n.kind == "call"
            and n.name in ("_[_]", "_[?_]")
            and bool(n.args)
            and (_is_device_map(n.args[0], "attributes") or _is_device_map(n.args[0], "capacity"))
        )

    def _iter_size(self, container: Node | None) -> int:
        """The size of what a comprehension binds: a map's key (a domain, an id), a list's
        element."""
        if _is_device_map(container, "attributes") or _is_device_map(container, "capacity"):
            return MAX_DOMAIN_LENGTH
        if container is not None and self._is_map(container):
            return MAX_ID_LENGTH
        return self._element_size(container)


def _ceil_tenth(size: int) -> int:
    """cel-go's string traversal cost: a tenth of the size, rounded up."""
    return -(-size // 10)


def estimate_cost(root: Node, *, list_type_attributes: bool) -> int:
    """The worst-case cost of evaluating ``root`` against any valid device."""
    return _Estimator(list_type_attributes).cost(root)
