"""Object validation as the API server makes it on create, in upstream's words.

``_base`` (the checks every kind shares: names, labels, selectors, quantities) ← ``_pod``
(``ValidatePodSpec``) and ``_storage`` (PersistentVolume, claims, StorageClass, CSI kinds,
StatefulSet) ← ``_validation`` (one entry point per kind, and priority admission).
"""
