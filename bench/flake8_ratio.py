"""flake8 (the plugin, one file at a time) against the CLI (the whole project), wall clock.

    python bench/flake8_ratio.py [--corpus DIR] [--jobs N]

Copies the corpus to a temporary project (a `pyproject.toml` marks its root, as the plugin looks
for one), then times: the CLI with a cold cache; the CLI again (warm); flake8 `--select TSL` on
the warm tree (it reads the other files' interfaces from the CLI's cache); flake8 on a cold copy
(it indexes what it needs on demand). Prints seconds, the ratios flake8/CLI, and whether both
report the same findings on the warm tree. Timings only; nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LINE = re.compile(r"^(.*?):(\d+):(\d+): (TSL\d+)")


def _run(cmd, cwd):
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return time.perf_counter() - t, out.stdout


def _findings(text: str, root: str):
    out = set()
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            out.add((os.path.relpath(os.path.abspath(os.path.join(root, m.group(1))), root), int(m.group(2)),
                     m.group(4)))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=os.path.join(HERE, "corpus", "torchvision-0.26.0"))
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        warm, cold = os.path.join(tmp, "warm"), os.path.join(tmp, "cold")
        for d in (warm, cold):
            shutil.copytree(args.corpus, d)
            with open(os.path.join(d, "pyproject.toml"), "w") as fh:
                fh.write("[project]\nname = 'corpus'\n")
        cli = [sys.executable, "-m", "torchsync_lint", "--jobs", str(args.jobs), "."]
        f8 = [sys.executable, "-m", "flake8", "--select", "TSL", "--jobs", str(args.jobs), "."]
        t_cli_cold, _ = _run(cli, warm)
        t_cli_warm, cli_out = _run(cli, warm)
        t_f8_warm, f8_out = _run(f8, warm)
        t_f8_cold, _ = _run(f8, cold)
        a, b = _findings(cli_out, warm), _findings(f8_out, warm)
        same = a == b
        if not same:
            print("CLI only:", sorted(a - b)[:10], "\nflake8 only:", sorted(b - a)[:10])
    print(f"corpus: {args.corpus}  jobs: {args.jobs}")
    print(f"CLI cold {t_cli_cold:.1f} s, CLI warm {t_cli_warm:.1f} s, flake8 warm tree {t_f8_warm:.1f} s, "
          f"flake8 cold tree {t_f8_cold:.1f} s")
    print(f"flake8/CLI: warm tree {t_f8_warm / t_cli_cold:.2f} of a cold CLI run ({t_f8_warm / t_cli_warm:.2f} of a "
          f"warm one); cold tree {t_f8_cold / t_cli_cold:.2f}")
    print(f"same findings on the warm tree: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
