"""The scheduler configuration a scenario runs under, and the options every command shares.

A KubeSchedulerConfiguration file (or the defaults) with feature gates (:func:`load_config_file`),
every profile built once so that a plugin's bad args are input errors (:func:`check_profiles`),
and what a simulation cannot take (HTTP extenders: :func:`simulation_config`); kubectl's field
validation modes (:func:`validation_mode`) and the length of a run (:func:`parse_until`).  Each
problem is one :class:`~kubesched.ConfigError` naming the file, or the option (``--until``), that
holds it.
"""

from __future__ import annotations

from collections.abc import Callable

from kubesched._errors import ConfigError
from kubesched.api._durations import parse_duration
from kubesched.config._config import SchedulerConfig, parse_config, parse_feature_gates
from kubesched.config._load import check_profiles as _check_profiles
from kubesched.scenario._manifests import load_documents

Warn = Callable[[str], object]


def load_config_file(
    path: str, feature_gates: str = "", text: str | None = None, *, warn: Warn | None = None
) -> SchedulerConfig:
    """A KubeSchedulerConfiguration file (or the defaults when ``path`` is empty), with
    ``feature_gates`` (``K=V,...``) over the file's.  ``text`` gives the content directly;
    ``warn`` is told each of the file's warnings (a plugin left out), once, before anything runs
    (they stay in ``SchedulerConfig.warnings``)."""
    if path:
        docs = load_documents(path, text)
        if len(docs) != 1:
            raise ConfigError(f"expected one KubeSchedulerConfiguration document, found {len(docs)}", source=path)
        try:
            cfg = parse_config(docs[0][1])
        except ConfigError as e:
            raise e.at(source=path) from None
        if warn is not None:
            for warning in cfg.warnings:
                warn(f"{path}, {warning}")
    else:
        cfg = SchedulerConfig()
    cfg.feature_gates = parse_feature_gates(feature_gates, cfg.feature_gates)
    return cfg


def check_profiles(cfg: SchedulerConfig, source: str) -> None:
    """Build every profile once so that plugin args errors surface as input errors (as
    :func:`kubesched.load_config` does; a profile of the defaults is named ``config``)."""
    _check_profiles(cfg, source or "config")


def simulation_config(
    config_path: str, feature_gates: str, text: str | None = None, *, warn: Warn | None = None
) -> SchedulerConfig:
    """The configuration of a simulation: the file (or the defaults), the gates, checked."""
    cfg = load_config_file(config_path, feature_gates, text, warn=warn)
    check_profiles(cfg, config_path)
    if cfg.extenders:
        # an HTTP call takes real time, which a virtual clock would jump over (every call
        # would time out at once): extenders are for ``kubesched run``
        raise ConfigError(
            "HTTP extenders need real time and are not supported by simulate (use kubesched run)",
            source=config_path,
            field="extenders",
        )
    return cfg


_VALIDATE = {"strict": "Strict", "true": "Strict", "warn": "Warn", "ignore": "Ignore", "false": "Ignore"}


def validation_mode(text: str) -> str:
    """``--validate`` as kubectl takes it: strict (or true), warn, ignore (or false)."""
    mode = _VALIDATE.get(text.lower())
    if mode is None:
        raise ConfigError(
            f'Invalid value: "{text}": must be one of strict, warn, ignore, true, false', field="--validate"
        )
    return mode


def parse_until(text: str | None) -> float | None:
    """``--until``: a duration, not negative; None when not given (no cap)."""
    if text is None:
        return None
    try:
        until = parse_duration(text)
    except ValueError as e:
        raise ConfigError(str(e), field="--until") from None
    if until < 0:
        raise ConfigError(f'Invalid value: "{text}": must not be negative', field="--until")
    return until


__all__ = ["check_profiles", "load_config_file", "parse_until", "simulation_config", "validation_mode"]
