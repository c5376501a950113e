"""``kubesched.load_config``: a configuration validated before any scheduler starts, with the
command line's messages for the same ``--config``."""

from __future__ import annotations

import itertools
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

import kubesched
import kubesched.cli
from kubesched.testing import register_temporary_plugin

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', pods: '10'}}\n"


class AsyncFilter:
    """A Filter declared ``async def``: the scheduling cycle cannot await it."""

    name = "AsyncFilter"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @kubesched.hookimpl
    async def kubesched_filter(self, state: Any, pod: Any, nodes: Any) -> None:
        return None


class Picky:
    """Refuses args it does not know, as a ConfigError naming the field."""

    name = "Picky"

    def __init__(self, args: Any, handle: Any) -> None:
        unknown = sorted(set(args or {}) - {"level"})
        if unknown:
            raise kubesched.ConfigError(f'unknown field "{unknown[0]}"', field=unknown[0])

    @kubesched.hookimpl
    def kubesched_filter(self, state: Any, pod: Any, nodes: Any) -> None:
        return None


# (config text, the error after its "cfg.yaml, " or "cfg.yaml: " prefix); each row as the
# command line prints it for ``--config cfg.yaml``
BAD = [
    pytest.param(
        HEAD + "profiles:\n- plugins:\n    filter:\n      enabled: [{name: Nope}]\n",
        ', profiles[0].plugins.filter.enabled[0].name: Invalid value: "Nope": plugin "Nope" does not exist',
        id="unknown plugin",
    ),
    pytest.param(
        HEAD + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
        "        type: MostAllocated\n        resources: [{name: cpu, weight: 200}]\n",
        ", profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: 200: "
        "resource weight of cpu not in valid range (0, 100]",
        id="bad in-tree plugin args",
    ),
    pytest.param(
        HEAD + "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: Picky}]\n"
        "  pluginConfig:\n  - {name: Picky, args: {levle: 3}}\n",
        ', profiles[0].pluginConfig[0].args.levle: unknown field "levle"',
        id="bad out-of-tree plugin args",
    ),
    pytest.param(
        HEAD + "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: AsyncFilter}]\n",
        ': plugin "AsyncFilter": kubesched_filter (Filter) is declared async def, but it runs in the '
        "scheduling cycle and must be a plain function (only PostFilter, Unreserve, PreBind, Bind, "
        "PostBind may be async)",
        id="async hook that must be plain",
    ),
    pytest.param(
        HEAD + "parallelizm: 4\n", ': strict decoding error: unknown field "parallelizm"', id="unknown field"
    ),
    pytest.param(
        HEAD + "profiles:\n- plugins:\n    filter:\n      enabeld: []\n",
        ': strict decoding error: unknown field "profiles[0].plugins.filter.enabeld"',
        id="unknown nested field",
    ),
    pytest.param(
        HEAD + "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: '*'}]\n",
        ', profiles[0].plugins.queueSort: only one queue sort plugin required for profile with scheduler '
        'name "default-scheduler", but got 0',
        id="no queueSort plugin",
    ),
    pytest.param(
        HEAD.replace("/v1", "/v1beta3"),
        ', apiVersion: no kind "KubeSchedulerConfiguration" is registered for version '
        '"kubescheduler.config.k8s.io/v1beta3"',
        id="another apiVersion",
    ),
    pytest.param(
        HEAD + "profiles: [\n",
        ": document 1: malformed YAML at line 4 column 1: expected the node content, but found '<stream end>'",
        id="malformed YAML",
    ),
    pytest.param(HEAD + "---\n" + HEAD, ": expected one KubeSchedulerConfiguration document, found 2", id="two documents"),
]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.yaml").write_text(NODE)
    with (
        register_temporary_plugin("AsyncFilter", AsyncFilter),
        register_temporary_plugin("Picky", Picky),
    ):
        yield tmp_path


def _error(source: Any, **kwargs: Any) -> str:
    with pytest.raises(kubesched.ConfigError) as exc:
        kubesched.load_config(source, **kwargs)
    return str(exc.value)


@pytest.mark.parametrize(("text", "message"), BAD)
def test_a_bad_file_is_the_command_lines_line(
    workdir: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    (workdir / "cfg.yaml").write_text(text)
    expected = "cfg.yaml" + message
    assert _error("cfg.yaml") == expected
    assert _error(Path("cfg.yaml")) == expected
    assert kubesched.cli.main(["simulate", "in.yaml", "--config", "cfg.yaml"]) == 2
    assert capsys.readouterr().err == f"kubesched: error: {expected}\n"


@pytest.mark.parametrize(("text", "message"), BAD)
def test_a_bad_text_is_the_same_line_without_a_path(workdir: Path, text: str, message: str) -> None:
    assert _error(text) == message.lstrip(",:").lstrip()


def test_a_missing_file(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _error("nope.yaml") == "nope.yaml: cannot read: No such file or directory"
    assert kubesched.cli.main(["simulate", "in.yaml", "--config", "nope.yaml"]) == 2
    assert capsys.readouterr().err == "kubesched: error: nope.yaml: cannot read: No such file or directory\n"


# --- what is a path and what is a text -------------------------------------------------------


def test_path_text_and_mapping_give_the_same_configuration(workdir: Path) -> None:
    text = HEAD + "parallelism: 4\nprofiles:\n- schedulerName: mine\n"
    (workdir / "cfg.yaml").write_text(text)
    as_json = (
        '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", '
        '"parallelism": 4, "profiles": [{"schedulerName": "mine"}]}'
    )
    (workdir / "cfg.json").write_text(as_json)
    mapping = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "parallelism": 4,
        "profiles": [{"schedulerName": "mine"}],
    }
    configs = [
        kubesched.load_config(source)
        for source in ("cfg.yaml", Path("cfg.yaml"), workdir / "cfg.json", text, as_json, "  " + as_json, mapping)
    ]
    for config in configs:
        assert isinstance(config, kubesched.SchedulerConfig)
        assert config == configs[0]
    assert configs[0].parallelism == 4
    assert [p.scheduler_name for p in configs[0].profiles] == ["mine"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        pytest.param("cfg", "cfg: cannot read: No such file or directory", id="a word is a path"),
        pytest.param(
            "kind: KubeSchedulerConfiguration", "kind: KubeSchedulerConfiguration: cannot read: No such file or directory",
            id="one line without a brace is a path",
        ),
        pytest.param("", "expected one KubeSchedulerConfiguration document, found 0", id="empty is a text"),
        pytest.param("\n", "expected one KubeSchedulerConfiguration document, found 0", id="a newline is a text"),
        pytest.param(
            '{"kind": 1',
            "invalid JSON at line 1 column 11: Expecting ',' delimiter",
            id="a brace is JSON text",
        ),
        pytest.param(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nkind: again\n",
            'document 1: strict decoding error: duplicate field "kind" (line 3)',
            id="YAML text: duplicate field",
        ),
        pytest.param({"kind": "KubeSchedulerConfiguration"}, "apiVersion: Object 'apiVersion' is missing", id="mapping"),
    ],
)
def test_the_rule_for_str_sources(workdir: Path, source: Any, message: str) -> None:
    assert _error(source) == message


def test_a_path_like_is_always_a_path(workdir: Path) -> None:
    weird = workdir / "{odd}.yaml"
    weird.write_text(HEAD + "parallelism: 2\n")
    assert kubesched.load_config(weird).parallelism == 2
    assert kubesched.load_config(os.fspath(weird)).parallelism == 2  # "/..." does not start with "{"


def test_other_types_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="not bytes"):
        kubesched.load_config(b"apiVersion: x")  # type: ignore[arg-type]


# --- plugins: the caller's registry, entry points -----------------------------------------------


class Gate:
    name = "Gate"

    def __init__(self, args: Any, handle: Any) -> None:
        self.args = args

    @kubesched.hookimpl
    def kubesched_filter(self, state: Any, pod: Any, nodes: Any) -> None:
        return None


GATE_CONFIG = HEAD + (
    "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: Gate, weight: 2}]\n"
    "  pluginConfig:\n  - {name: Gate, args: {label: x}}\n"
)


def test_the_callers_registry_names_more_plugins() -> None:
    assert _error(GATE_CONFIG).endswith('plugin "Gate" does not exist')
    config = kubesched.load_config(GATE_CONFIG, registry={"Gate": Gate})
    assert ("Gate", 2) in config.profiles[0].multi_point
    assert config.profiles[0].plugin_args["Gate"] == {"label": "x"}


def test_warnings_are_kept_not_printed(capsys: pytest.CaptureFixture[str]) -> None:
    config = kubesched.load_config(
        HEAD + "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: DynamicResources}]\n"
    )
    assert config.warnings == [
        'profiles[0].plugins.multiPoint.enabled[0]: plugin "DynamicResources" is not implemented by '
        "kubesched and is left out: pods with resource claims are placed as if they had none"
    ]
    assert capsys.readouterr() == ("", "")


_seq = itertools.count()


def test_an_entry_point_that_failed_to_load_is_named_with_why(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    site = workdir / "site"
    module = f"kubesched_load_config_broken_{next(_seq)}"
    info = site / "acme_broken-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-broken\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[kubesched]\nFancyGate = {module}:Gate\n")
    (site / f"{module}.py").write_text(textwrap.dedent("raise ImportError('no numpy here')\n"))
    monkeypatch.syspath_prepend(str(site))
    why = (
        f"loading entry point 'FancyGate' ({module}:Gate) of distribution 'acme-broken 1.0' in "
        "group 'kubesched': ImportError: no numpy here"
    )
    (workdir / "cfg.yaml").write_text(
        HEAD + "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: FancyGate}]\n"
    )
    expected = (
        'cfg.yaml, profiles[0].plugins.multiPoint.enabled[0].name: Invalid value: "FancyGate": '
        f'plugin "FancyGate" does not exist: {why}'
    )
    assert _error("cfg.yaml") == expected
    assert kubesched.cli.main(["simulate", "in.yaml", "--config", "cfg.yaml"]) == 2
    assert capsys.readouterr().err == f"kubesched: error: {expected}\n"
    # a configuration that does not name it loads
    assert kubesched.load_config(HEAD).profiles[0].scheduler_name == "default-scheduler"


def test_the_error_is_a_kubesched_error_raised_before_anything_runs() -> None:
    with pytest.raises(kubesched.KubeschedError):
        kubesched.load_config(HEAD + "parallelism: -1\n")
