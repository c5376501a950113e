"""The scheduling queue (upstream's ``backend/queue``).

``_scheduling_queue`` is the PriorityQueue and opens with its model: activeQ (``_activequeue``),
backoffQ (``_backoffqueue``) and the unschedulable pods, ordered on ``_heap``; ``_hints`` decides
which cluster events move a rejected pod back, ``_ticks`` runs the periodic flushes, and
``_nominator`` remembers which pods are nominated to which nodes.
"""
