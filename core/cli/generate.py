"""``kubesched generate``: the knobs as flags (``--node-cpu``) over an optional spec file, and the
manifests on stdout or in ``--out``.  The workload itself: :mod:`kubesched.generate`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import yaml

from kubesched._errors import ConfigError
from kubesched._outputs import write_output
from kubesched.generate import CHOICES, KNOB_BY_KEY, KNOBS, Knob, Spec, generate_text, parse_spec
from kubesched.scenario import load_documents
from kubesched.validation._validation import go_quote

__all__ = ["add_arguments", "cmd_generate"]


def _format_default(knob: Knob) -> str:
    if knob.kind == "yaml":
        return yaml.safe_dump(knob.default, default_flow_style=True, width=1000).strip()
    return str(knob.default)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", nargs="?", metavar="SPEC.yaml",
                   help="a YAML spec: a mapping of the knobs below by their camelCase keys "
                        "(e.g. nodeCpu); flags given on the command line override it")
    p.add_argument("-o", "--out", metavar="FILE", help="write the manifests here (default: stdout)")
    g = p.add_argument_group(
        "knobs (flag / spec key: meaning, default)",
        "Distributions are NAME:PARAM=V,... : constant:value=V (or a bare value), exponential:mean=V, "
        "lognormal:median=V,spread=S (S >= 1), uniform:min=A,max=B; duration values are Go "
        "durations (90s, 10m, 1h). List and mapping knobs take YAML flow text on the command line.",
    )
    for knob in KNOBS:
        choices = f" ({' | '.join(CHOICES[knob.key])})" if knob.key in CHOICES else ""
        g.add_argument(knob.flag, dest=knob.key, default=None, metavar="V",
                       help=f"[{knob.key}] {knob.help}{choices} (default: {_format_default(knob)})".replace("%", "%%"))


def _flag_value(knob: Knob, text: str) -> Any:
    """A command-line value as the spec would hold it."""
    if knob.kind in ("int", "count"):
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                raise ConfigError(f"Invalid value: {go_quote(text)}: must be a number", field=knob.flag) from None
    if knob.kind == "yaml":
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as e:
            problem = getattr(e, "problem", None) or str(e).splitlines()[0]
            raise ConfigError(f"malformed YAML: {problem}", field=knob.flag) from None
    return text


def spec_from_args(args: argparse.Namespace) -> tuple[set[str], str, Spec]:
    """The flags given, the spec file, and the validated spec."""
    values: dict[str, Any] = {}
    source = ""
    if args.spec:
        source = args.spec
        docs = load_documents(args.spec)
        if len(docs) != 1 or not isinstance(docs[0][1], dict):
            raise ConfigError("expected one mapping of generate knobs", source=source)
        values = dict(docs[0][1])
    flags: set[str] = set()
    for knob in KNOBS:
        text = getattr(args, knob.key)
        if text is not None:
            values[knob.key] = _flag_value(knob, text)
            flags.add(knob.key)
    try:
        return flags, source, parse_spec(values)
    except ConfigError as e:
        raise _named(e, flags, source) from None


def _named(e: ConfigError, flags: set[str], source: str) -> ConfigError:
    """``e`` naming the flag the user typed, or the spec file."""
    top = e.field.split(".")[0].split("[")[0]
    if top in flags:
        return ConfigError(e.message, field=KNOB_BY_KEY[top].flag + e.field[len(top):])
    return e.at(source=source)


def cmd_generate(args: argparse.Namespace) -> int:
    flags, source, spec = spec_from_args(args)
    try:
        text = generate_text(spec)
    except ConfigError as e:
        raise _named(e, flags, source) from None
    if args.out:
        try:
            write_output(args.out, text)
        except OSError as e:
            raise ConfigError(f"cannot write: {e.strerror or e}", source=args.out) from None
    else:
        sys.stdout.write(text)
    return 0
