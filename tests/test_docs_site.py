"""The documentation site builds with ``mkdocs build --strict``: every page, no broken link."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "docs" / "mkdocs" / "mkdocs.yml"

try:
    import mkdocs  # noqa: F401
except ImportError:  # pragma: no cover
    mkdocs = None


@pytest.mark.skipif(mkdocs is None, reason="mkdocs is not installed (pip install '.[test]')")
def test_site_builds_strictly_with_every_page(tmp_path):
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(CONFIG), "-d", str(site)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    built = {p.relative_to(site).as_posix() for p in site.rglob("index.html")}
    pages = [p.relative_to(REPO / "docs") for p in (REPO / "docs").rglob("*.md")]
    for page in pages:
        name = page.with_suffix("").as_posix()
        expected = "index.html" if page.name == "index.md" and page.parent == Path(".") else (
            f"{page.parent.as_posix()}/index.html" if page.name == "index.md" else f"{name}/index.html")
        assert expected in built, f"{page} is not in the site"
    for required in ("getting-started", "configuration", "ci", "verify", "changelog", "rules/TSL001"):
        assert f"{required}/index.html" in built
    shutil.rmtree(site)
