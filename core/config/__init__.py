"""KubeSchedulerConfiguration: ``_config`` (profiles, plugin args, defaults, validation),
``_extender_config`` (its ``extenders`` section) and ``_load`` (:func:`kubesched.load_config`: a
file or a text read, validated and its profiles built once, before any scheduler starts).
"""
