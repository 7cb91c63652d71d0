"""The composite GitHub Action (action.yml): its two steps run as a runner runs them (bash, the
inputs in the environment, GITHUB_ACTION_PATH / GITHUB_PATH / RUNNER_TEMP set), on a small
project: the package installs into a fresh virtual environment, and the findings come out as
pull-request annotations with exit code 1."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

REPO = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
STEPS = {step["name"]: step for step in ACTION["runs"]["steps"]}
SYNC = (REPO / "tests" / "fixtures" / "fixes" / "TSL201_arange_before.py").read_text()
OFFLINE = ("NewConnectionError", "Failed to establish a new connection", "Temporary failure in name resolution",
           "Could not find a version that satisfies", "No matching distribution found", "Network is unreachable")


def _env(step: dict, inputs: dict) -> dict:
    """The step's ``env:`` with ``${{ inputs.x }}`` replaced as the runner replaces it."""
    defaults = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    values = {**defaults, **inputs}
    out = {}
    for key, template in step.get("env", {}).items():
        out[key] = re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: values[m.group(1)], template)
    return out


def test_action_is_composite_and_takes_inputs_through_the_environment():
    assert ACTION["runs"]["using"] == "composite"
    assert set(ACTION["inputs"]) == {"src", "args", "output-format", "version"}
    assert ACTION["inputs"]["output-format"]["default"] == "github"
    assert (REPO / "action.yml").parent == (REPO / ".pre-commit-hooks.yaml").parent
    for step in ACTION["runs"]["steps"]:
        assert step["shell"] == "bash"
        assert "${{" not in step["run"], "inputs go through env:, never into the script (injection)"


def _bash(script: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-c", script], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=900)


@pytest.mark.slow
def test_action_installs_and_annotates(tmp_path):
    # the action's checkout: the files a `uses: owner/torchsync-lint@ref` clone holds
    action_path = tmp_path / "action"
    action_path.mkdir()
    for name in ("pyproject.toml", "README.md", "action.yml", "torchsync_lint"):
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, action_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, action_path / name)
    workspace = tmp_path / "workspace"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "model.py").write_text(SYNC)
    (workspace / "src" / "clean.py").write_text("import torch\n\n\ndef f(x):\n    return x * 2\n")
    github_path = tmp_path / "github_path"
    github_path.write_text("")
    runner = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH"))}
    runner.update(GITHUB_ACTION_PATH=str(action_path), GITHUB_PATH=str(github_path), RUNNER_TEMP=str(tmp_path / "temp"))
    (tmp_path / "temp").mkdir()
    runner["PATH"] = os.pathsep.join(p for p in runner["PATH"].split(os.pathsep) if ".venv" not in p and "venv" not in p)
    inputs = {"src": "src", "args": "--no-cache"}

    install = _bash(STEPS["Install torchsync-lint"]["run"], {**runner, **_env(STEPS["Install torchsync-lint"], inputs)},
                    workspace)
    if install.returncode != 0 and any(s in install.stdout + install.stderr for s in OFFLINE):
        pytest.skip("the action could not install the package's dependencies (no network?)")
    assert install.returncode == 0, install.stderr
    added = github_path.read_text().split()
    assert added == [str(tmp_path / "temp" / "torchsync-lint-venv" / "bin")]

    runner["PATH"] = os.pathsep.join(added + [runner["PATH"]])
    lint = _bash(STEPS["Run torchsync-lint"]["run"], {**runner, **_env(STEPS["Run torchsync-lint"], inputs)}, workspace)
    assert lint.returncode == 1, lint.stderr
    lines = lint.stdout.splitlines()
    assert lines == [l for l in lines if l.startswith("::warning file=src/model.py,line=7,col=18,")], lint.stdout
    assert len(lines) == 1 and "title=TSL201 host-sequence-index::" in lines[0]
    assert not (workspace / ".torchsync_cache").exists()  # args reached the command (--no-cache)

    (workspace / "src" / "model.py").write_text("x = 1\n")
    clean = _bash(STEPS["Run torchsync-lint"]["run"], {**runner, **_env(STEPS["Run torchsync-lint"], inputs)}, workspace)
    assert clean.returncode == 0 and clean.stdout == "", clean.stdout + clean.stderr
