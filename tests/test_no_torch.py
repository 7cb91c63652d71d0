"""Linting never imports torch: the static half must run where torch is not installed.

Runs in a fresh interpreter, so no other test can have imported torch first. A stand-in ``torch``
package is put first on the path: an import of it is seen even where real torch is not installed.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PROBE = textwrap.dedent("""\
    import contextlib, io, json, sys
    from torchsync_lint.cli import main
    from torchsync_lint.rules.registry import all_rules

    codes = ",".join(all_rules())
    paths = sys.argv[1:]
    with contextlib.redirect_stdout(io.StringIO()) as out:
        rcs = [main(["--isolated", "--include-cold", "--select", codes, *paths])]
        rcs += [main(["--isolated", "--format", fmt, paths[0]]) for fmt in ("json", "sarif", "github")]
        main(["--explain", "TSL001"])
        main(["--list-rules"])
    from flake8.api import legacy
    report = legacy.get_style_guide(select=["TSL"]).check_files(paths)
    leaked = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
    print(json.dumps({"rcs": rcs, "flake8": report.total_errors, "leaked": leaked,
                      "findings": out.getvalue().count("TSL")}))
""")


def test_a_lint_run_does_not_import_torch(tmp_path):
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("# stand-in: importing it at all is the failure\n")
    paths = [str(REPO / "examples"), str(REPO / "tests" / "fixtures")]
    env_path = str(tmp_path / "fake")
    proc = subprocess.run([sys.executable, "-c", PROBE, *paths], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**__import__("os").environ, "PYTHONPATH": env_path + ":" + str(REPO)})
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["leaked"] == []
    assert set(result["rcs"]) == {1}, result  # it did lint, and found syncs
    assert result["flake8"] > 0 and result["findings"] > 0
