"""The built-in demo of ``kubesched simulate`` (no FILE given): scheduling, a gang, a preemption.

Three 4-CPU workers.  At t=0 six batch pods (1.5 CPU each, priority 100) spread two per node.
At 20 s a three-member training gang (1 CPU each) arrives: all or nothing, its members wait at
Permit until the whole gang has nodes, then bind together.  At 60 s a critical pod (3 CPU,
priority 10000) arrives: no node has room, so DefaultPreemption evicts the two batch pods of one
node and the pod binds there once they have terminated.  A GPU pod stays pending, and the output
says why.
"""

from __future__ import annotations

DEMO_MANIFESTS = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: training}
value: 500
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: critical}
value: 10000
---
apiVersion: v1
kind: Node
metadata: {name: worker-a, labels: {kubernetes.io/hostname: worker-a, topology.kubernetes.io/zone: zone-1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: worker-b, labels: {kubernetes.io/hostname: worker-b, topology.kubernetes.io/zone: zone-2}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: worker-c, labels: {kubernetes.io/hostname: worker-c, topology.kubernetes.io/zone: zone-3}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
""" + "".join(
    f"""---
apiVersion: v1
kind: Pod
metadata: {{name: batch-{i}, namespace: jobs, labels: {{app: batch}}}}
spec:
  priorityClassName: batch
  containers: [{{name: work, image: batch:1, resources: {{requests: {{cpu: 1500m, memory: 1Gi}}}}}}]
"""
    for i in range(1, 7)
) + "".join(
    f"""---
apiVersion: v1
kind: Pod
metadata:
  name: train-{i}
  namespace: ml
  labels: {{gang.kubesched.io/name: train, gang.kubesched.io/available-count: "3"}}
  annotations: {{kubesched.io/arrival: 20s}}
spec:
  priorityClassName: training
  containers: [{{name: worker, image: trainer:1, resources: {{requests: {{cpu: "1", memory: 2Gi}}}}}}]
"""
    for i in range(1, 4)
) + """---
apiVersion: v1
kind: Pod
metadata:
  name: checkout
  namespace: shop
  annotations: {kubesched.io/arrival: 60s}
spec:
  priorityClassName: critical
  containers: [{name: app, image: checkout:1, resources: {requests: {cpu: "3", memory: 2Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: render, namespace: jobs}
spec:
  nodeSelector: {accelerator: nvidia-a100}
  containers: [{name: render, image: render:1, resources: {requests: {cpu: "1"}}}]
"""

DEMO_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Gang}]
    queueSort:
      enabled: [{name: Gang}]
      disabled: [{name: PrioritySort}]
"""
