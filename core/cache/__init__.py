"""The scheduler's view of the cluster (upstream's ``backend/cache``).

``_clusterstate`` holds what the informers reported (the listers); ``_cache`` keeps the node
infos with the assumed pods (assumed → bound → deleted) and takes each cycle's snapshot.
"""
