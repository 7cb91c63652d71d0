"""``--verify`` starts its children before the lint: they import torch and the linted packages while
the lint runs, and only what was flagged runs once the job comes."""

from __future__ import annotations

import time

import pytest

from torchsync_lint.verify import _packages
from torchsync_lint.verify import runner

pytest.importorskip("torch")

SETTINGS = {"sleep_ms": 20.0, "short_sleep_ms": 5.0, "reps": 3}


def _package(tmp_path, marker):
    pkg = tmp_path / "src" / "pkgx"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "mod.py").write_text("x = 1\n")
    script = tmp_path / "src" / "train.py"
    script.write_text("raise SystemExit('a script must never run on import')\n")
    return pkg, script


def test_only_packages_are_preloaded_each_once_from_its_folder(tmp_path):
    pkg, script = _package(tmp_path, tmp_path / "marker")
    got = _packages([str(pkg / "__init__.py"), str(pkg / "sub" / "mod.py"), str(script)])
    assert got == [(str(tmp_path / "src"), "pkgx")]


def test_a_started_child_imports_the_package_before_its_job_comes(tmp_path):
    marker = tmp_path / "marker"
    pkg, _ = _package(tmp_path, marker)
    child = runner.start("predict", SETTINGS, preload=[(str(tmp_path / "src"), "pkgx")])
    try:
        deadline = time.monotonic() + 120  # torch's import on a loaded machine
        while not marker.exists() and time.monotonic() < deadline and child.proc.poll() is None:
            time.sleep(0.05)
        assert marker.read_text() == "imported"  # no job was sent
        assert child.proc.poll() is None  # it waits for the job
    finally:
        child.close()
    assert child.proc.poll() is not None


def test_a_package_that_fails_to_import_leaves_the_child_waiting(tmp_path):
    src = tmp_path / "src"
    (src / "broken").mkdir(parents=True)
    (src / "broken" / "__init__.py").write_text("import sys\nsys.exit(3)\n")
    marker = tmp_path / "marker"
    (src / "after").mkdir()
    (src / "after" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    child = runner.start("predict", SETTINGS, preload=[(str(src), "broken"), (str(src), "after")])
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline and child.proc.poll() is None:
            time.sleep(0.05)
        assert marker.exists(), "the preload stopped at the failing package"
        assert child.proc.poll() is None, "the child died on a package's import"
    finally:
        child.close()
