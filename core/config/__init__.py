"""KubeSchedulerConfiguration: ``_config`` (profiles, plugin args, defaults, validation) and
``_extender_config`` (its ``extenders`` section).
"""
