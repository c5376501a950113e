"""InterPodAffinity: required and preferred pod affinity / anti-affinity (``plugins/interpodaffinity``).

Why one file: one module per plugin (so "why did this plugin reject the node" opens one file);
upstream's filtering.go and scoring.go share the PreFilter/PreScore state kept here.

- PreFilter counts, per topology pair ``(topologyKey, value)``: the existing pods whose required
  anti-affinity matches the incoming pod (``existingAntiAffinityCounts``, the symmetry rule), the
  existing pods matching *all* the incoming pod's required affinity terms (``affinityCounts``, one
  per term) and those matching each of its required anti-affinity terms
  (``antiAffinityCounts``).  Skip when the pod has no required terms and no existing pod's
  required anti-affinity matches it.  AddPod / RemovePod update the counts (nominated pods,
  preemption's dry runs).  A pod whose terms do not parse is UnschedulableAndUnresolvable
  ("parsing pod: ...").
- Filter, in this order: every affinity term's topology label present and a matching pod in the
  node's domain for each term — or, for the first pod of a group with affinity to itself, no
  matching pod anywhere and the pod matching its own terms — else "node(s) didn't match pod
  affinity rules" (UnschedulableAndUnresolvable); no pod in the node's domain matching an
  anti-affinity term, else "node(s) didn't match pod anti-affinity rules"; no existing pod whose
  anti-affinity matches the pod in any domain of the node, else "node(s) didn't satisfy existing
  pods anti-affinity rules" (both Unschedulable).
- PreScore / Score: per topology pair, + weight of the incoming pod's preferred affinity terms
  and - weight of its preferred anti-affinity terms for each matching existing pod; + the
  hardPodAffinityWeight for each existing pod whose *required* affinity matches the incoming
  pod, + / - the weights of existing pods' preferred affinity / anti-affinity terms matching
  it.  A node scores the sum over its labels.  NormalizeScore: ``int(100 * (s - min) / (max -
  min))``, 0 everywhere when all are equal.  PreScore skips when nothing matched.

Namespaces.  A term selects the pods of ``namespaces``, or of the pod's own namespace when both
``namespaces`` and ``namespaceSelector`` are unset; ``namespaceSelector: {}`` selects every
namespace.  kubesched has no Namespace objects: a namespace's labels are
``handle.cluster.namespace_labels[ns]`` when the cluster state knows them, else just
``kubernetes.io/metadata.name: <ns>`` (what the API server puts on every namespace) — so a
non-empty selector on other labels matches no namespace unless the mapping says so.

``matchLabelKeys`` / ``mismatchLabelKeys`` are merged into the term's label selector (``key In
(pod's value)`` / ``key NotIn (pod's value)``, keys the pod lacks ignored, nothing when the
selector is unset), as the API server does when the pod is created; kubesched has no admission
step, so the plugin does it when it parses the pod.  With MatchLabelKeysInPodAffinity off (1.30
by default) the fields never reach it: the scenario's and the fake API server's creates drop them
(:mod:`kubesched.scenario._gatedfields`, ``transports/apiserver/_gatedfields.py``).

Speed.  Parsed terms are cached per PodInfo and interned (pods of one workload share them).  The
counting never visits pods one by one: it uses two snapshot pod indexes (pods grouped by
namespace and labels; pods with affinity grouped by their parsed terms), matches each group
once, and sums per topology domain with ``numpy.bincount`` over the snapshot's label codes;
Filter and Score are array lookups over the batch's domain codes.

Args (``InterPodAffinityArgs``): ``hardPodAffinityWeight`` (default 1, 0..100),
``ignorePreferredTermsOfExistingPods`` (default false: when true and the incoming pod has no
preferred terms, PreScore skips).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from kubesched.framework import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    ConfigError,
    EventResource,
    Handle,
    QueueingHint,
    Status,
    compile_label_selector,
    go_value,
    hookimpl,
    qualified_name_errors,
)

from ._helper import SKIP, queueing_hints_enabled

if TYPE_CHECKING:
    from kubesched.framework import (
        CycleState,
        LabelSelector,
        Node,
        NodeBatch,
        NodeInfo,
        Pod,
        PodAffinityTerm,
        PodInfo,
        PreFilterResult,
    )

NAME = "InterPodAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

_SIG_INDEX = NAME + "/labels"
_AFFINITY_INDEX = NAME + "/affinity"

# --- label selectors, validated as metav1.LabelSelectorAsSelector --------------------------------

_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_OPS = {"In", "NotIn", "Exists", "DoesNotExist"}

LabelMatcher = Callable[[Mapping[str, str]], bool]


def _go_aggregate(errs: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``."""
    uniq = list(dict.fromkeys(errs))
    return uniq[0] if len(uniq) == 1 else "[" + ", ".join(uniq) + "]"


def _requirement_errors(key: str, op: str, values: Sequence[str]) -> list[str]:
    """``labels.NewRequirement``'s validation, as ``field.Error`` texts."""
    errs: list[str] = []
    key_errs = qualified_name_errors(key)
    if key_errs:
        errs.append(f"key: Invalid value: {go_value(key)}: {'; '.join(key_errs)}")
    if op in ("In", "NotIn") and not values:
        errs.append(
            f"values: Invalid value: {go_value(list(values))}: for 'in', 'notin' operators, values set can't be empty"
        )
    if op in ("Exists", "DoesNotExist") and values:
        errs.append(
            f"values: Invalid value: {go_value(list(values))}: values set must be empty for exists and does not exist"
        )
    for i, v in enumerate(values):
        v_errs = []
        if len(v) > 63:
            v_errs.append("must be no more than 63 characters")
        if not _LABEL_VALUE.match(v):
            v_errs.append(_LABEL_VALUE_MSG)
        if v_errs:
            errs.append(f"values[{i}][{key}]: Invalid value: {go_value(v)}: {'; '.join(v_errs)}")
    return errs


def compile_selector(
    selector: LabelSelector | None, extra: Sequence[tuple[str, str, str]] = ()
) -> LabelMatcher | None:
    """A validated label selector (None: ``labels.Nothing()``); raises ValueError like upstream.

    ``extra`` holds ``(key, op, value)`` requirements appended to matchExpressions
    (matchLabelKeys / mismatchLabelKeys).
    """
    if selector is None:
        return None
    for k, v in selector.match_labels.items():
        errs = _requirement_errors(k, "In", [v])
        if errs:
            raise ValueError(_go_aggregate(errs))
    for e in selector.match_expressions:
        if e.operator not in _OPS:
            raise ValueError(f'"{e.operator}" is not a valid label selector operator')
        errs = _requirement_errors(e.key, e.operator, e.values)
        if errs:
            raise ValueError(_go_aggregate(errs))
    if extra:
        from kubesched.framework import LabelSelector as LS
        from kubesched.framework import LabelSelectorRequirement as LSR

        selector = LS(
            match_labels=dict(selector.match_labels),
            match_expressions=[
                *selector.match_expressions,
                *(LSR(key=k, operator=op, values=[v]) for k, op, v in extra),
            ],
        )
    return compile_label_selector(selector)


def _everything(_: Mapping[str, str]) -> bool:
    return True


# --- parsed terms (framework.AffinityTerm / PodInfo's terms) -----------------------------------

NamespaceLabels = Callable[[str], Mapping[str, str]]


class AffinityTerm:
    """``framework.AffinityTerm``: namespaces, selector, topology key, namespace selector."""

    __slots__ = ("namespaces", "selector", "topology_key", "namespace_selector")

    def __init__(
        self,
        namespaces: frozenset[str],
        selector: LabelMatcher | None,
        topology_key: str,
        namespace_selector: LabelMatcher | None,
    ) -> None:
        self.namespaces = namespaces
        self.selector = selector  # None: selects nothing
        self.topology_key = topology_key
        self.namespace_selector = namespace_selector  # None: nothing; _everything: all

    def matches(self, ns: str, labels: Mapping[str, str], ns_labels: NamespaceLabels) -> bool:
        """``AffinityTerm.Matches`` for a pod in ``ns`` with ``labels``.

        The namespace selector is evaluated on the labels of the pod's own namespace: for an
        existing pod's term that is the incoming pod's namespace (upstream's ``nsLabels``), for the
        incoming pod's term the existing pod's namespace (upstream merges the selected namespaces
        into ``namespaces`` first) — the same rule.
        """
        if self.selector is None:
            return False
        nss = self.namespace_selector
        if ns in self.namespaces or (
            nss is not None and (nss is _everything or nss(ns_labels(ns)))
        ):
            return self.selector(labels)
        return False


class PodTerms:
    """A pod's parsed terms (``PodInfo.RequiredAffinityTerms`` ...) and its parse error."""

    __slots__ = ("req_aff", "req_anti", "pref_aff", "pref_anti", "error")

    def __init__(self) -> None:
        self.req_aff: list[AffinityTerm] = []
        self.req_anti: list[AffinityTerm] = []
        self.pref_aff: list[tuple[AffinityTerm, int]] = []
        self.pref_anti: list[tuple[AffinityTerm, int]] = []
        self.error: str = ""


def _new_term(pod: Pod, term: PodAffinityTerm) -> AffinityTerm:
    extra: list[tuple[str, str, str]] = []
    if term.label_selector is not None:
        labels = pod.metadata.labels
        extra += [(k, "In", labels[k]) for k in term.match_label_keys if k in labels]
        extra += [(k, "NotIn", labels[k]) for k in term.mismatch_label_keys if k in labels]
    selector = compile_selector(term.label_selector, extra)
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((pod.metadata.namespace,))
    else:
        namespaces = frozenset(term.namespaces)
    ns_sel = term.namespace_selector
    if ns_sel is not None and not ns_sel.match_labels and not ns_sel.match_expressions:
        ns_matcher: LabelMatcher | None = _everything
    else:
        ns_matcher = compile_selector(ns_sel)
    return AffinityTerm(namespaces, selector, term.topology_key, ns_matcher)


def parse_pod_terms(pod: Pod) -> PodTerms:
    """``framework.NewPodInfo``'s term parsing: a category that fails to parse is left empty."""
    out = PodTerms()
    aff = pod.spec.affinity
    if aff is None:
        return out
    errs: list[str] = []
    pa, paa = aff.pod_affinity, aff.pod_anti_affinity
    for attr, what, terms in (
        (
            "req_aff",
            "requiredAffinityTerms",
            pa.required_during_scheduling_ignored_during_execution if pa else [],
        ),
        (
            "req_anti",
            "requiredAntiAffinityTerms",
            paa.required_during_scheduling_ignored_during_execution if paa else [],
        ),
    ):
        try:
            setattr(out, attr, [_new_term(pod, t) for t in terms])
        except ValueError as e:
            errs.append(f"{what}: {e}")
    for attr, what, weighted in (
        (
            "pref_aff",
            "preferredAffinityTerms",
            pa.preferred_during_scheduling_ignored_during_execution if pa else [],
        ),
        (
            "pref_anti",
            "preferredAntiAffinityTerms",
            paa.preferred_during_scheduling_ignored_during_execution if paa else [],
        ),
    ):
        try:
            setattr(out, attr, [(_new_term(pod, w.pod_affinity_term), w.weight) for w in weighted])
        except ValueError as e:
            errs.append(f"{what}: {e}")
    if errs:
        out.error = _go_aggregate(errs)
    return out


_INTERNED: dict[tuple[Any, ...], PodTerms] = {}
_NO_TERMS = PodTerms()
"""The terms of every pod without pod (anti-)affinity (shared, as the interned ones are)."""
_INTERN_LIMIT = 50_000


def _uses_label_keys(pod: Pod) -> bool:
    aff = pod.spec.affinity
    for pa in (aff.pod_affinity, aff.pod_anti_affinity) if aff is not None else ():
        if pa is None:
            continue
        for t in pa.required_during_scheduling_ignored_during_execution:
            if t.match_label_keys or t.mismatch_label_keys:
                return True
        for w in pa.preferred_during_scheduling_ignored_during_execution:
            if w.pod_affinity_term.match_label_keys or w.pod_affinity_term.mismatch_label_keys:
                return True
    return False


def pod_terms(pod: Pod) -> PodTerms:
    """The pod's parsed terms, shared by every pod with the same namespace and affinity."""
    aff = pod.spec.affinity
    if aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None):
        return _NO_TERMS  # nothing to parse (node affinity is not this plugin's)
    key = (
        pod.metadata.namespace,
        msgspec.json.encode(aff),
        tuple(sorted(pod.metadata.labels.items())) if _uses_label_keys(pod) else None,
    )
    terms = _INTERNED.get(key)
    if terms is None:
        if len(_INTERNED) >= _INTERN_LIMIT:
            _INTERNED.clear()
        terms = _INTERNED[key] = parse_pod_terms(pod)
    return terms


def terms_of(pi: PodInfo) -> PodTerms:
    """``pod_terms`` cached on the PodInfo."""
    terms: PodTerms | None = pi.extra.get(NAME)
    if terms is None:
        terms = pi.extra[NAME] = pod_terms(pi.pod)
    return terms


def has_pod_affinity(pod: Pod) -> bool:
    """``podWithAffinity``: the pod has a podAffinity or podAntiAffinity."""
    aff = pod.spec.affinity
    return aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None)


def _affinity_key(pi: PodInfo) -> PodTerms | None:
    aff = pi.pod.spec.affinity  # has_pod_affinity(pi.pod), inlined: asked for every pod the snapshot takes in
    return terms_of(pi) if aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None) else None


def _labels_key(pi: PodInfo) -> tuple[str, tuple[tuple[str, str], ...]]:
    key: tuple[str, tuple[tuple[str, str], ...]] | None = pi.extra.get(_SIG_INDEX)
    if key is None:
        pod = pi.pod
        key = pi.extra[_SIG_INDEX] = (
            pod.metadata.namespace,
            tuple(sorted(pod.metadata.labels.items())),
        )
    return key


def pod_matches_all_terms(
    terms: Sequence[AffinityTerm], ns: str, labels: Mapping[str, str], ns_labels: NamespaceLabels
) -> bool:
    """``podMatchesAllAffinityTerms``: false for no terms."""
    if not terms:
        return False
    return all(t.matches(ns, labels, ns_labels) for t in terms)


# --- topology-domain arithmetic ------------------------------------------------------------------

Pair = tuple[str, str]


class _AllNodes:
    """Every node of the cycle: the snapshot's rows (indexed, cached codes) or a plain list."""

    def __init__(self, snapshot: Any, infos: Sequence[NodeInfo]) -> None:
        self.snapshot = snapshot
        self.infos = infos
        self._codes: dict[str, tuple[np.ndarray, list[str]]] = {}
        self._groups: dict[str, dict[Any, dict[int, int]]] = {}

    def codes(self, key: str) -> tuple[np.ndarray, list[str]]:
        got = self._codes.get(key)
        if got is None:
            if self.snapshot is not None:
                codes, values, _ = self.snapshot.label_codes(key)
            else:
                from kubesched.framework import NodeBatch

                codes, values, _ = NodeBatch.of(self.infos).label_codes(key)
            got = self._codes[key] = (codes, values)
        return got

    def groups(self, name: str, fn: Callable[[PodInfo], Any]) -> dict[Any, dict[int, int]]:
        if self.snapshot is not None:
            out: dict[Any, dict[int, int]] = self.snapshot.pod_index(name, fn)
            return out
        got = self._groups.get(name)
        if got is None:
            got = self._groups[name] = {}
            for i, ni in enumerate(self.infos):
                if ni.node is None:
                    continue
                for pi in ni.pods:
                    k = fn(pi)
                    if k is not None:
                        rows = got.setdefault(k, {})
                        rows[i] = rows.get(i, 0) + 1
        return got


class Dense:
    """Sums per topology domain of one key: ``sums[code]`` over the node set's ``values``."""

    __slots__ = ("values", "sums", "hits")

    def __init__(self, values: list[str], sums: np.ndarray, hits: np.ndarray) -> None:
        self.values = values  # the label codes' value list (the snapshot's own object)
        self.sums = sums  # int64, one per value
        self.hits = hits  # bool: something contributed to the pair (an entry exists upstream)

    def lut(self) -> np.ndarray:
        """``sums`` as a lookup table over ``codes + 1`` (slot 0: node without the label)."""
        return np.concatenate((np.zeros(1, dtype=np.int64), self.sums))


class _DomainSum:
    """Sums ``factor x pods`` per topology pair, one ``bincount`` per topology key."""

    def __init__(self, nodes: _AllNodes) -> None:
        self.nodes = nodes
        self.parts: dict[str, list[tuple[dict[int, int], int]]] = {}

    def add(self, key: str, rows: dict[int, int], factor: int) -> None:
        self.parts.setdefault(key, []).append((rows, factor))

    def dense(self) -> dict[str, Dense]:
        """Per topology key, the sums over its domains (keys nothing contributed to left out)."""
        out: dict[str, Dense] = {}
        for key, parts in self.parts.items():
            codes, values = self.nodes.codes(key)
            rows = np.concatenate([np.fromiter(r.keys(), np.int64, len(r)) for r, _ in parts])
            weights = np.concatenate(
                [np.fromiter(r.values(), np.int64, len(r)) * f for r, f in parts]
            )
            c = codes[rows]
            m = c >= 0
            if not m.any():
                continue
            c = c[m]
            sums = np.bincount(c, weights=weights[m], minlength=len(values)).astype(np.int64)
            hits = np.bincount(c, minlength=len(values)) > 0
            out[key] = Dense(values, sums, hits)
        return out


def _lut(per_value: Mapping[str, int], values: list[str], index: Mapping[str, int]) -> np.ndarray:
    """An int64 lookup table over ``codes + 1`` (slot 0: node without the label)."""
    lut = np.zeros(len(values) + 1, dtype=np.int64)
    for v, n in per_value.items():
        j = index.get(v)
        if j is not None:
            lut[j + 1] = n
    return lut


class TopologyCounts:
    """``topologyToMatchedTermCount``: dense per-key arrays from PreFilter, a pair dict once
    AddPod / RemovePod touch it (or someone reads :attr:`pairs`)."""

    __slots__ = ("_dense", "_pairs", "_by_key", "_luts")

    def __init__(
        self, dense: dict[str, Dense] | None = None, pairs: dict[Pair, int] | None = None
    ) -> None:
        self._dense = dense
        self._pairs = pairs
        self._by_key: dict[str, dict[str, int]] | None = None
        self._luts: dict[str, tuple[list[str], np.ndarray]] = {}

    @property
    def pairs(self) -> dict[Pair, int]:
        """``{(key, value): count}`` without zero entries."""
        if self._pairs is None:
            self._pairs = {}
            for key, d in (self._dense or {}).items():
                for j in np.flatnonzero(d.sums).tolist():
                    self._pairs[(key, d.values[j])] = int(d.sums[j])
        return self._pairs

    def __bool__(self) -> bool:
        if self._pairs is not None:
            return bool(self._pairs)
        return any(d.sums.any() for d in (self._dense or {}).values())

    def topology_keys(self) -> list[str]:
        """The topology keys with a non-zero count."""
        if self._pairs is None and self._dense is not None:
            return [k for k, d in self._dense.items() if d.sums.any()]
        return list(self._key_map())

    def _key_map(self) -> dict[str, dict[str, int]]:
        if self._by_key is None:
            self._by_key = {}
            for (k, v), n in self.pairs.items():
                self._by_key.setdefault(k, {})[v] = n
        return self._by_key

    def lut(self, key: str, values: list[str], index: Mapping[str, int]) -> np.ndarray:
        """Counts over a batch's ``codes + 1`` for topology ``key``."""
        hit = self._luts.get(key)
        if hit is not None and hit[0] is values:
            return hit[1]
        d = self._dense.get(key) if self._pairs is None and self._dense is not None else None
        if d is not None and d.values is values:
            lut = d.lut()
        elif self._pairs is None and self._dense is not None and d is None:
            lut = np.zeros(len(values) + 1, dtype=np.int64)
        else:
            lut = _lut(self._key_map().get(key, {}), values, index)
        self._luts[key] = (values, lut)  # keeps ``values`` alive: the ``is`` test stays sound
        return lut

    def add(self, pair: Pair, n: int) -> None:
        """``m[pair] += n``, dropping the entry at zero (AddPod / RemovePod)."""
        pairs = self.pairs
        self._dense = None
        self._by_key = None
        self._luts = {}
        total = pairs.get(pair, 0) + n
        if total == 0:
            pairs.pop(pair, None)
        else:
            pairs[pair] = total

    def clone(self) -> TopologyCounts:
        if self._pairs is None:
            return TopologyCounts(self._dense)  # dense arrays are never written: share them
        return TopologyCounts(None, dict(self._pairs))


# --- cycle state ---------------------------------------------------------------------------------


class PreFilterState:
    """``preFilterState``: the three topology-pair counts and the incoming pod's parsed terms."""

    __slots__ = ("existing_anti", "affinity", "anti", "terms", "pod", "ns_labels")

    def __init__(
        self,
        existing_anti: TopologyCounts,
        affinity: TopologyCounts,
        anti: TopologyCounts,
        terms: PodTerms,
        pod: Pod,
        ns_labels: NamespaceLabels,
    ) -> None:
        self.existing_anti = existing_anti
        self.affinity = affinity
        self.anti = anti
        self.terms = terms
        self.pod = pod
        self.ns_labels = ns_labels

    @property
    def existing_anti_affinity_counts(self) -> dict[Pair, int]:
        return self.existing_anti.pairs

    @property
    def affinity_counts(self) -> dict[Pair, int]:
        return self.affinity.pairs

    @property
    def anti_affinity_counts(self) -> dict[Pair, int]:
        return self.anti.pairs

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.existing_anti.clone(),
            self.affinity.clone(),
            self.anti.clone(),
            self.terms,
            self.pod,
            self.ns_labels,
        )

    def update_with_pod(self, pi: PodInfo, node: Node | None, multiplier: int) -> None:
        """``updateWithPod``: ``pi`` was added to (1) / removed from (-1) ``node``."""
        if node is None:
            return
        labels = node.metadata.labels
        ns, pod_labels = self.pod.metadata.namespace, self.pod.metadata.labels
        other = pi.pod
        o_ns, o_labels = other.metadata.namespace, other.metadata.labels

        def update(m: TopologyCounts, tk: str) -> None:
            v = labels.get(tk)
            if v is not None:
                m.add((tk, v), multiplier)

        for t in terms_of(pi).req_anti:
            if t.matches(ns, pod_labels, self.ns_labels):
                update(self.existing_anti, t.topology_key)
        if pod_matches_all_terms(self.terms.req_aff, o_ns, o_labels, self.ns_labels):
            for t in self.terms.req_aff:
                update(self.affinity, t.topology_key)
        for t in self.terms.req_anti:
            if t.matches(o_ns, o_labels, self.ns_labels):
                update(self.anti, t.topology_key)


class PreScoreState:
    """``preScoreState``: the score per topology pair (dense per key)."""

    __slots__ = ("dense",)

    def __init__(self, dense: dict[str, Dense]) -> None:
        self.dense = dense

    @property
    def topology_score(self) -> dict[str, dict[str, int]]:
        """``{key: {value: score}}`` with an entry for every pair something contributed to."""
        return {
            k: {d.values[j]: int(d.sums[j]) for j in np.flatnonzero(d.hits).tolist()}
            for k, d in self.dense.items()
        }

    def clone(self) -> PreScoreState:
        return self


# --- the plugin ----------------------------------------------------------------------------------



def _pre_score_state(state: CycleState) -> PreScoreState:
    """``getPreScoreState``: upstream's error text when PreScore did not run."""
    try:
        out: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
    except KeyError:
        raise ValueError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found') from None
    return out

class InterPodAffinity:
    """PreFilter (+ AddPod / RemovePod), Filter, PreScore, Score, NormalizeScore, EnqueueExtensions."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle
        args = args or {}
        for key in args:
            if key not in ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods", "apiVersion", "kind"):
                raise ConfigError(f'strict decoding error: unknown field "{key}"')
        w = args.get("hardPodAffinityWeight")
        if w is None:
            w = DEFAULT_HARD_POD_AFFINITY_WEIGHT
        if isinstance(w, bool) or not isinstance(w, int):
            raise ConfigError(
                f"Invalid value: {go_value(w)}: must be an integer", field="hardPodAffinityWeight"
            )
        if w < MIN_HARD_POD_AFFINITY_WEIGHT or w > MAX_HARD_POD_AFFINITY_WEIGHT:
            raise ConfigError(
                f"Invalid value: {w}: not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}-{MAX_HARD_POD_AFFINITY_WEIGHT}]",
                field="hardPodAffinityWeight",
            )
        self.hard_pod_affinity_weight: int = w
        self.ignore_preferred_terms_of_existing_pods = bool(
            args.get("ignorePreferredTermsOfExistingPods", False)
        )

    # --- namespaces -------------------------------------------------------------------------------
    def namespace_labels(self) -> NamespaceLabels:
        """A per-cycle ``namespace → labels`` function (see the module docstring)."""
        mapping = self.handle.cluster.namespace_labels
        memo: dict[str, Mapping[str, str]] = {}

        def labels_of(ns: str) -> Mapping[str, str]:
            got = memo.get(ns)
            if got is None:
                got = mapping.get(ns) if mapping else None
                if got is None:
                    got = {NAMESPACE_NAME_LABEL: ns}
                memo[ns] = got
            return got

        return labels_of

    def _all_nodes(self, nodes: Sequence[NodeInfo] | None) -> _AllNodes:
        snap = self.handle.snapshot
        if nodes is None or nodes is snap.node_infos:
            return _AllNodes(snap, snap.node_infos)
        return _AllNodes(None, list(nodes or ()))

    # --- EnqueueExtensions --------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        if not queueing_hints_enabled(self.handle):
            # hints off: also taint updates (a Node/Add may be filtered out by preCheckForNode, kubernetes#109437)
            node_actions |= ActionType.UPDATE_NODE_TAINT
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.ASSIGNED_POD,
                    ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
                ),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, node_actions),
                self.is_schedulable_after_node_change,
            ),
        ]

    @staticmethod
    def _hint_terms(pod: Pod) -> tuple[list[AffinityTerm], list[AffinityTerm]] | None:
        """``GetAffinityTerms`` for the hints (namespace selectors not expanded); None on error."""
        aff = pod.spec.affinity
        try:
            req = (
                aff.pod_affinity.required_during_scheduling_ignored_during_execution
                if aff and aff.pod_affinity
                else []
            )
            anti = (
                aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution
                if aff and aff.pod_anti_affinity
                else []
            )
            return [_new_term(pod, t) for t in req], [_new_term(pod, t) for t in anti]
        except ValueError:
            return None

    def is_schedulable_after_pod_change(
        self, pod: Pod, old: Pod | None, new: Pod | None
    ) -> QueueingHint:
        """An assigned pod was added / relabeled / deleted."""
        if (new is not None and not new.spec.node_name) or (
            old is not None and not old.spec.node_name
        ):
            return QueueingHint.QUEUE_SKIP
        parsed = self._hint_terms(pod)
        if parsed is None:
            return QueueingHint.QUEUE
        terms, anti_terms = parsed

        def no_ns(_: str) -> Mapping[str, str]:
            return {}

        def all_match(ts: list[AffinityTerm], p: Pod) -> bool:
            return pod_matches_all_terms(ts, p.metadata.namespace, p.metadata.labels, no_ns)

        if new is not None and old is not None:
            if not all_match(terms, old) and all_match(terms, new):
                return QueueingHint.QUEUE
            if all_match(anti_terms, old) and not all_match(anti_terms, new):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if new is not None:
            return QueueingHint.QUEUE if all_match(terms, new) else QueueingHint.QUEUE_SKIP
        assert old is not None
        return QueueingHint.QUEUE if all_match(anti_terms, old) else QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(
        self, pod: Pod, old: Node | None, new: Node
    ) -> QueueingHint:
        """A node was added or relabeled: Queue when it has one of the pod's topology keys."""
        parsed = self._hint_terms(pod)
        if parsed is None:
            return QueueingHint.QUEUE
        labels = new.metadata.labels
        for t in (*parsed[0], *parsed[1]):
            if t.topology_key in labels:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    # --- PreFilter ----------------------------------------------------------------------------
    @hookimpl
    def kubesched_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> PreFilterResult | Status | None:
        aff = pod.spec.affinity  # has_pod_affinity(pod), inlined
        if aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None):
            # the snapshot's nodes, none of whose pods has pod affinity terms: its index answers
            # without an _AllNodes
            snap = self.handle.snapshot
            if (nodes is None or nodes is snap.node_infos) and not snap.pod_index(_AFFINITY_INDEX, _affinity_key):
                return SKIP  # no term of the pod's (nothing to parse), none of an existing pod's
        everything = self._all_nodes(nodes)
        with_affinity = everything.groups(_AFFINITY_INDEX, _affinity_key)
        if not with_affinity and not has_pod_affinity(pod):
            return SKIP  # as above, for nodes that are not the snapshot's
        pi = state.pod_info
        terms = terms_of(pi) if pi is not None and pi.pod is pod else pod_terms(pod)
        if terms.error:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {terms.error}")
        if not terms.req_aff and not terms.req_anti and not any(other.req_anti for other in with_affinity):
            return SKIP  # no term of the pod's, and no existing pod's anti-affinity
        ns_labels = self.namespace_labels()
        ns, labels = pod.metadata.namespace, pod.metadata.labels

        existing = _DomainSum(everything)
        for other, rows in with_affinity.items():
            for t in other.req_anti:
                if t.matches(ns, labels, ns_labels):
                    existing.add(t.topology_key, rows, 1)
        affinity = _DomainSum(everything)
        anti = _DomainSum(everything)
        if terms.req_aff or terms.req_anti:
            for (o_ns, o_items), rows in everything.groups(_SIG_INDEX, _labels_key).items():
                o_labels = dict(o_items)
                if pod_matches_all_terms(terms.req_aff, o_ns, o_labels, ns_labels):
                    for t in terms.req_aff:
                        affinity.add(t.topology_key, rows, 1)
                for t in terms.req_anti:
                    if t.matches(o_ns, o_labels, ns_labels):
                        anti.add(t.topology_key, rows, 1)
        s = PreFilterState(
            TopologyCounts(existing.dense()),
            TopologyCounts(affinity.dense()),
            TopologyCounts(anti.dense()),
            terms,
            pod,
            ns_labels,
        )
        if not s.existing_anti and not terms.req_aff and not terms.req_anti:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, s)
        return None

    @hookimpl
    def kubesched_pre_filter_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_to_add, node_info, 1)

    @hookimpl
    def kubesched_pre_filter_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_to_remove, node_info, -1)

    @staticmethod
    def _update(
        state: CycleState, pi: PodInfo, node_info: NodeInfo, multiplier: int
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status(
                Code.ERROR, f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            )
        s.update_with_pod(pi, node_info.node, multiplier)
        return None

    # --- Filter -------------------------------------------------------------------------------
    @hookimpl
    def kubesched_filter(
        self, state: CycleState, pod: Pod, nodes: NodeBatch
    ) -> dict[int, Status] | None:
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        n = len(nodes)
        if s is None:
            st = Status(
                Code.ERROR, f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            )
            return dict.fromkeys(range(n), st)
        ok = np.ones(n, dtype=bool)
        out: dict[int, Status] = {}
        terms = s.terms
        if terms.req_aff:
            has_all = np.ones(n, dtype=bool)
            pods_exist = np.ones(n, dtype=bool)
            for t in terms.req_aff:
                codes, values, index = nodes.label_codes(t.topology_key)
                has_all &= codes >= 0
                pods_exist &= s.affinity.lut(t.topology_key, values, index)[codes + 1] > 0
            if not s.affinity and pod_matches_all_terms(
                terms.req_aff, pod.metadata.namespace, pod.metadata.labels, s.ns_labels
            ):
                ok = has_all  # the first pod of a group with affinity to itself
            else:
                ok = has_all & pods_exist
            if not ok.all():
                out.update(
                    dict.fromkeys(
                        np.flatnonzero(~ok).tolist(),
                        Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH),
                    )
                )
        if s.anti and terms.req_anti:
            bad = np.zeros(n, dtype=bool)
            for t in terms.req_anti:
                codes, values, index = nodes.label_codes(t.topology_key)
                bad |= s.anti.lut(t.topology_key, values, index)[codes + 1] > 0
            bad &= ok
            if bad.any():
                out.update(
                    dict.fromkeys(
                        np.flatnonzero(bad).tolist(),
                        Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
                    )
                )
                ok &= ~bad
        if s.existing_anti:
            bad = np.zeros(n, dtype=bool)
            for key in s.existing_anti.topology_keys():
                codes, values, index = nodes.label_codes(key)
                bad |= s.existing_anti.lut(key, values, index)[codes + 1] > 0
            bad &= ok
            if bad.any():
                out.update(
                    dict.fromkeys(
                        np.flatnonzero(bad).tolist(),
                        Status(
                            Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
                        ),
                    )
                )
        return out or None

    # --- Score --------------------------------------------------------------------------------
    @hookimpl
    def kubesched_pre_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
        aff = pod.spec.affinity
        if (
            (aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None))  # not has_pod_affinity(pod)
            and nodes.snapshot is not None
            and not self.handle.snapshot.pod_index(_AFFINITY_INDEX, _affinity_key)
        ):
            # no term of the pod's (nothing to parse), none of an existing pod's (asked first: the
            # usual pod's answer, and every check before the work below only answers Skip)
            return SKIP
        if len(nodes) == 0:
            return SKIP
        has_constraints = aff is not None and (
            (
                aff.pod_affinity is not None
                and len(aff.pod_affinity.preferred_during_scheduling_ignored_during_execution) > 0
            )
            or (
                aff.pod_anti_affinity is not None
                and len(aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution)
                > 0
            )
        )
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP
        everything = self._all_nodes(None if nodes.snapshot is not None else nodes.infos)
        if not has_pod_affinity(pod) and not everything.groups(_AFFINITY_INDEX, _affinity_key):
            return SKIP  # as above, for a batch that is not the snapshot's
        pi = state.pod_info
        terms = terms_of(pi) if pi is not None and pi.pod is pod else pod_terms(pod)
        if terms.error:
            return Status(Code.ERROR, f"failed to parse pod: {terms.error}")
        ns_labels = self.namespace_labels()
        ns, labels = pod.metadata.namespace, pod.metadata.labels
        acc = _DomainSum(everything)
        if has_constraints:
            for (o_ns, o_items), rows in everything.groups(_SIG_INDEX, _labels_key).items():
                o_labels = dict(o_items)
                for t, w in terms.pref_aff:
                    if t.matches(o_ns, o_labels, ns_labels):
                        acc.add(t.topology_key, rows, w)
                for t, w in terms.pref_anti:
                    if t.matches(o_ns, o_labels, ns_labels):
                        acc.add(t.topology_key, rows, -w)
        hard = self.hard_pod_affinity_weight
        for other, rows in everything.groups(_AFFINITY_INDEX, _affinity_key).items():
            if hard > 0:
                for t in other.req_aff:
                    if t.matches(ns, labels, ns_labels):
                        acc.add(t.topology_key, rows, hard)
            for t, w in other.pref_aff:
                if t.matches(ns, labels, ns_labels):
                    acc.add(t.topology_key, rows, w)
            for t, w in other.pref_anti:
                if t.matches(ns, labels, ns_labels):
                    acc.add(t.topology_key, rows, -w)
        dense = acc.dense()
        if not dense:  # upstream: no node produced a topologyScore entry
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(dense))
        return None

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        s = _pre_score_state(state)
        out = np.zeros(len(nodes), dtype=np.int64)
        for key, d in s.dense.items():
            codes, values, index = nodes.label_codes(key)
            if d.values is values:
                lut = d.lut()
            else:
                lut = _lut(s.topology_score[key], values, index)
            out += lut[codes + 1]
        return out

    @hookimpl
    def kubesched_normalize_score(
        self, state: CycleState, pod: Pod, scores: np.ndarray
    ) -> Status | None:
        s = _pre_score_state(state)
        if not s.dense or len(scores) == 0:
            return None
        lo, hi = int(scores.min()), int(scores.max())
        diff = hi - lo
        if diff > 0:
            scores[:] = (
                float(MAX_NODE_SCORE) * ((scores - lo).astype(np.float64) / float(diff))
            ).astype(np.int64)
        else:
            scores[:] = 0
        return None


def new(args: dict[str, Any] | None, handle: Handle) -> InterPodAffinity:
    return InterPodAffinity(args, handle)


__all__ = [
    "DEFAULT_HARD_POD_AFFINITY_WEIGHT",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "AffinityTerm",
    "InterPodAffinity",
    "PodTerms",
    "PreFilterState",
    "PreScoreState",
    "TopologyCounts",
    "new",
    "parse_pod_terms",
    "pod_terms",
    "terms_of",
]
