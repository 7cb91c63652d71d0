"""Configuration robustness and rule selection: every malformed pyproject is one line and exit 2;
selection resolves by specificity, as Ruff's does."""

import pytest

from torchsync_lint import cli
from torchsync_lint.config import RuleSelection
from torchsync_lint.run.settings import resolve_selection, rule_defaults

SYNC = "import torch\nfrom torch import nn\n\n\nclass L(nn.Module):\n    def forward(self, x):\n        return x.item()\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "good.py").write_text(SYNC)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def lint(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


BAD_CONFIGS = {
    # name: (pyproject bytes, words the one-line message must hold)
    "non-utf8": ("[tool.torchsync-lint]\n# caf\u00e9\n".encode("latin-1"), ["not valid UTF-8"]),
    "invalid-toml": (b"[tool.torchsync-lint\n", ["invalid TOML"]),
    "tool-not-table": (b"tool = 5\n# torchsync-lint\n", ["[tool] must be a table", "5"]),
    "table-not-table": (b"[tool]\ntorchsync-lint = [1]\n", ["must be a table"]),
    "unknown-key": (b"[tool.torchsync-lint]\nselekt = []\n", ["unknown key 'selekt'"]),
    "select-not-list": (b"[tool.torchsync-lint]\nselect = 3\n", ["select", "expected a list"]),
    "select-item-type": (b"[tool.torchsync-lint]\nselect = [[\"TSL\"]]\n", ["select[0]", "code prefix"]),
    "unknown-code": (b"[tool.torchsync-lint]\nignore = [\"TSL999\"]\n", ["ignore[0]", "'TSL999'", "matches no rule"]),
    "unknown-extend": (b"[tool.torchsync-lint]\nextend-select = [\"TSL8\"]\n", ["extend-select", "'TSL8'"]),
    "pfi-not-table": (b"[tool.torchsync-lint]\nper-file-ignores = 3\n", ["per-file-ignores", "expected a table"]),
    "pfi-value": (b"[tool.torchsync-lint.per-file-ignores]\n\"a.py\" = {x = 1}\n", ["per-file-ignores.a.py", "list of codes"]),
    "pfi-item": (b"[tool.torchsync-lint.per-file-ignores]\n\"a.py\" = [1]\n", ["per-file-ignores.a.py", "code prefix"]),
    "pfi-unknown": (b"[tool.torchsync-lint.per-file-ignores]\n\"a.py\" = [\"TSL777\"]\n", ["'TSL777'"]),
    "exclude-item": (b"[tool.torchsync-lint]\nexclude = [\"a\", 2]\n", ["exclude[1]", "list of strings"]),
    "bool": (b"[tool.torchsync-lint]\nrespect-gitignore = 1\n", ["respect-gitignore", "expected a boolean"]),
    "nested-array": (b"[tool.torchsync-lint]\nhot-functions = [[\"a\"]]\n", ["hot-functions[0]"]),
    "absurdly-nested": (b"[tool.torchsync-lint]\nhot-functions = " + b"[" * 100000 + b"]" * 100000 + b"\n",
                        ["invalid TOML", "nested too deeply"]),
}


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_malformed_config_is_one_line_and_exit_2(project, capsys, name):
    data, words = BAD_CONFIGS[name]
    (project / "pyproject.toml").write_bytes(data)
    rc, out, err = lint(capsys, "good.py")
    assert rc == 2 and out == ""
    [line] = err.splitlines()
    assert line.startswith("torchsync-lint: error: ") and "pyproject.toml" in line
    for word in words:
        assert word in line, line


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_malformed_config_in_a_subprocess_has_no_traceback(project, name):
    import subprocess
    import sys

    (project / "pyproject.toml").write_bytes(BAD_CONFIGS[name][0])
    proc = subprocess.run([sys.executable, "-m", "torchsync_lint", "good.py"], cwd=project,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize("flag", ["--select", "--ignore", "--extend-select"])
@pytest.mark.parametrize("value", ["TSL999", "TSL8", "E501", "TSL00x"])
def test_unknown_codes_on_the_command_line_are_usage_errors(project, capsys, flag, value):
    rc, out, err = lint(capsys, flag, value, "good.py")
    assert rc == 2 and out == ""
    assert value in err and "error" in err


def enabled(*layers):
    return resolve_selection([RuleSelection(*layer) for layer in layers])


def test_more_specific_prefix_wins_in_one_layer():
    assert "TSL003" in enabled((None, ["TSL003"], ["TSL0"]))  # --ignore TSL0 --extend-select TSL003
    assert "TSL001" not in enabled((None, ["TSL003"], ["TSL0"]))
    assert "TSL003" not in enabled((["TSL003"], [], ["TSL003"]))  # a tie: ignore wins
    assert enabled((["TSL0"], [], ["TSL001"])) == {c for c in rule_defaults() if c.startswith("TSL0")} - {"TSL001"}


def test_layers_apply_in_order_and_select_starts_afresh():
    config_layer = (None, [], ["TSL001"])
    assert "TSL001" not in enabled(config_layer, (None, [], []))
    assert "TSL001" in enabled(config_layer, (["TSL0"], [], []))  # the CLI's select replaces
    assert "TSL001" in enabled(config_layer, (None, ["TSL001"], []))  # a more recent layer re-adds


def test_bare_tsl_selects_the_default_set_and_longer_prefixes_also_the_opinionated():
    defaults = rule_defaults()
    assert enabled((["TSL"], [], [])) == {c for c, on in defaults.items() if on}
    off = [c for c, on in defaults.items() if not on]
    if off:
        assert off[0] in enabled((None, [off[0]], []))
    assert enabled((None, [], ["TSL"])) == frozenset()


def test_ignore_tsl0_extend_select_tsl003_from_the_cli(project, capsys):
    (project / "pyproject.toml").write_text("[tool.torchsync-lint]\n")
    src = "import torch\nfrom torch import nn\n\n\nclass L(nn.Module):\n    def forward(self, x):\n        a = x.item()\n        return x.cpu()\n"
    (project / "m.py").write_text(src)
    rc, out, _ = lint(capsys, "--ignore", "TSL0", "--extend-select", "TSL003", "--quiet", "m.py")
    assert [ln.split()[1] for ln in out.splitlines()] == ["TSL003"]


def test_python_310_gets_tomli_and_libcst_is_bounded():
    """tomllib is 3.11+: 3.10 installs tomli (config.py imports it there); LibCST internals may
    change in a major release, so the dependency stops before 2."""
    from pathlib import Path

    from torchsync_lint.run.settings import tomllib  # tomli on 3.10

    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    deps = {d.split(">")[0].split("=")[0].split(";")[0].strip(): d for d in project["dependencies"]}
    assert "python_version < '3.11'" in deps["tomli"]
    assert "<2" in deps["libcst"]
    assert project["requires-python"] == ">=3.10"
    versions = [c.rsplit(":: ", 1)[1] for c in project["classifiers"] if c.startswith("Programming Language :: Python :: 3.")]
    assert versions == ["3.10", "3.11", "3.12", "3.13"]


def test_package_is_typed():
    from pathlib import Path

    import torchsync_lint
    from torchsync_lint.run.settings import tomllib

    assert (Path(torchsync_lint.__file__).parent / "py.typed").is_file()
    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["torchsync_lint"]
