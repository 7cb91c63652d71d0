"""Crash sweep (issue 11): the real CLI on every kind of input it can be handed; count what went wrong.

    python bench/crash_sweep.py [--only odd,stdlib,corpus,generated,configs,memory] [--generated N] [--jobs N]

Sweeps, each one run of ``python -m torchsync_lint`` (every rule, no cache, no pyproject):

- ``odd``: files that break parsers or readers (encodings, null bytes, 20,000-term lines, 20,000
  ``elif`` clauses, 5,000 nested brackets, a FIFO, a link to ``/dev/zero``, link loops), in a
  folder and named one by one;
- ``stdlib``: this Python's ``Lib/`` (site-packages left out): test data with bad encodings,
  Python 2 files, deliberately broken syntax;
- ``corpus``: each folder of ``bench/corpus/`` (``python bench/corpus.py`` fetches them);
- ``generated``: N modules from ``hypothesmith.from_grammar()`` (fixed seed), half of them inside
  an ``nn.Module``'s ``forward``, written to a temporary folder;
- ``configs``: malformed ``pyproject.toml`` files (not UTF-8, ``[tool] torchsync-lint = 5``, a
  wrong type at every key and depth), each linted in this process: one line and exit 2 expected;
- ``memory``: peak memory (``/usr/bin/time -v``) of linting one generated 50,000-line file.

The table counts, per sweep: files, exit code, findings, file errors by kind (syntax error,
file skipped as too costly for LibCST, cannot decode, other), internal errors and tracebacks.
Exits 1 on any traceback or internal error, an exit code other than 0 or 2, or a config that
did not give one line with exit 2. bench/robustness.py prints the traceback of a crashing file.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from torchsync_lint.config import KEYS  # noqa: E402
from torchsync_lint.rules.registry import all_rules  # noqa: E402

ERROR_RE = re.compile(r"^(?P<path>.+?)(?::\d+(?::\d+)?)?: error: (?P<message>.*)$")
TRACEBACK = "Traceback (most recent call last)"
HEADER = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\nx = torch.ones(3, device='cuda')\n"
KINDS = (("syntax", "syntax error"), ("skipped", "file skipped"), ("decode", "cannot decode"),
         ("internal", "internal error"))


@dataclass
class Row:
    name: str
    files: int = 0
    exit: str = ""
    seconds: float = 0.0
    findings: int = 0
    errors: Dict[str, int] = field(default_factory=dict)
    tracebacks: int = 0
    problems: List[str] = field(default_factory=list)
    others: List[str] = field(default_factory=list)  # file errors of no known kind, for a look


def kind_of(message: str) -> str:
    for kind, start in KINDS:
        if message.startswith(start):
            return kind
    return "other"


def lint(name: str, paths: List[str], jobs: Optional[int], cwd: str, n_files: int, timeout: int = 1800) -> Row:
    """One CLI run on ``paths``; the row of the table."""
    cmd = [sys.executable, "-m", "torchsync_lint", "--isolated", "--no-respect-gitignore", "--no-cache",
           "--format", "json", "--exit-zero", "--select", ",".join(all_rules())]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd + paths, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                            errors="replace", start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        stderr += f"\nhung: killed after {timeout} s\n"
    proc = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    row = Row(name, n_files, str(proc.returncode), time.perf_counter() - t0)
    if "hung: killed" in stderr:
        row.problems.append(f"hung: killed after {timeout} s")
    row.tracebacks = (proc.stdout + proc.stderr).count(TRACEBACK)
    if row.tracebacks:
        row.problems.append("traceback:\n" + proc.stderr[-3000:])
    if proc.returncode not in (0, 2):
        row.problems.append(f"exit status {proc.returncode}: {proc.stderr[-500:]}")
    try:
        row.findings = sum(1 for f in json.loads(proc.stdout) if f.get("type", "finding") == "finding")
    except (json.JSONDecodeError, AttributeError):
        row.problems.append("stdout is not one JSON array")
    for m in filter(None, map(ERROR_RE.match, proc.stderr.splitlines())):
        kind = kind_of(m["message"])
        row.errors[kind] = row.errors.get(kind, 0) + 1
        if kind == "internal":
            row.problems.append(f"internal error: {m['path']}: {m['message']}")
        elif kind == "other":
            row.others.append(f"{m['path']}: {m['message']}")
    return row


def count_py(paths: List[str]) -> int:
    n = 0
    for p in paths:
        if os.path.isfile(p):
            n += p.endswith(".py")
        for _, _, names in os.walk(p):
            n += sum(name.endswith(".py") for name in names)
    return n


# -- the sweeps -------------------------------------------------------------------------------------
def sweep_stdlib(jobs) -> Row:
    lib = sysconfig.get_paths()["stdlib"]
    paths = sorted(os.path.join(lib, e) for e in os.listdir(lib)
                   if e != "site-packages" and (e.endswith(".py") or os.path.isdir(os.path.join(lib, e))))
    return lint(f"stdlib ({os.path.basename(lib)})", paths, jobs, lib, count_py(paths))


def sweep_corpora(jobs) -> List[Row]:
    root = os.path.join(HERE, "corpus")
    names = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))) if os.path.isdir(root) else []
    if not names:
        print("crash_sweep: no corpus; run `python bench/corpus.py` first", file=sys.stderr)
    return [lint(name, [os.path.join(root, name)], jobs, REPO, count_py([os.path.join(root, name)]))
            for name in names]


def generated_sources(n: int, seed: int = 11) -> List[str]:
    import hypothesmith
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as fixed_seed

    out: List[str] = []

    @fixed_seed(seed)
    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(hypothesmith.from_grammar())
    def collect(source):
        out.append(source)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hypothesmith compiles what it generates
        collect()
    return out[:n]


def in_forward(body: str) -> str:
    return (HEADER + "\n\nclass M(nn.Module):\n    def forward(self, x, mask, idx):\n"
            + textwrap.indent(body, "        ") + "\n        pass\n")


def sweep_generated(n: int, jobs) -> Row:
    t0 = time.perf_counter()
    sources = generated_sources(n)
    print(f"  generated {len(sources)} modules in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="tsl-sweep-") as tmp:
        for i, src in enumerate(sources):
            text = HEADER + src if i % 2 == 0 else in_forward(src)
            with open(os.path.join(tmp, f"gen_{i:05d}.py"), "w", encoding="utf-8", errors="surrogatepass") as fh:
                fh.write(text)
        return lint(f"generated (hypothesmith, {len(sources)})", [tmp], jobs, tmp, len(sources))


H = b"import torch\n"
ODD_FILES = {
    # encodings, line endings, layout
    "formfeed.py": H + b"\x0cx = 1\n\x0c\ndef f(x):\n    return x.item()\n",
    "cr_only.py": b"import torch\rdef f(x):\r    return x.item()\r",
    "mixed_tabs.py": H + b"def f(x):\n\tif x:\n        return x.item()\n",
    "bom_and_latin1.py": b"\xef\xbb\xbf# -*- coding: latin-1 -*-\n" + H,
    "utf16.py": "# -*- coding: utf-16 -*-\nimport torch\n".encode("utf-16"),
    "latin1_comment.py": H + b"# caf\xe9\n",
    "surrogate.py": H + b"x = '\xed\xa0\x80'\n",
    "only_bom.py": b"\xef\xbb\xbf",
    "nul_in_comment.py": H + b"# a\x00b\n",
    "binary.py": bytes(range(256)) * 16,
    "backslash_at_eof.py": H + b"x = 1 \\",
    "if_at_eof.py": H + b"if True:\n",
    "unicode_names.py": H + "def f(\u00e9t\u00e9):\n    return \u00e9t\u00e9.item()\n".encode(),
    # size and depth
    "long_line.py": H + b"x = '" + b"a" * 2_000_000 + b"'\n",
    "indent_99.py": H + b"".join(b" " * i + b"if x:\n" for i in range(99)) + b" " * 99 + b"x.item()\n",
    "brackets_199.py": H + b"x = " + b"(" * 199 + b"1" + b")" * 199 + b"\n",
    "brackets_5000.py": H + b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "sum_20000.py": H + b"x = " + b" + ".join([b"1"] * 20000) + b"\n",
    "attributes_20000.py": H + b"x = a" + b".b" * 20000 + b"\n",
    "and_20000.py": H + b"x = " + b" and ".join([b"a"] * 20000) + b"\n",
    "elif_20000.py": H + b"if x: pass\n" + b"elif x: pass\n" * 20000,
    "lambda_900.py": H + b"x = " + b"lambda: " * 900 + b"1\n",
    "strings_100000.py": H + b"x = " + b" ".join([b"'a'"] * 100000) + b"\n",
    "decorators_20000.py": H + b"@a\n" * 20000 + b"def f(x):\n    return x.item()\n",
    "statements_20000.py": H + b"x = 1; " * 20000 + b"\n",
    "functions_20000.py": H + b"def f(x):\n    return x.item()\n" * 20000,
}


def sweep_odd_files(jobs) -> List[Row]:
    """Odd files in a folder (walked) and named one by one, with pipes, devices, links and loops."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="tsl-odd-") as tmp:
        for name, data in ODD_FILES.items():
            with open(os.path.join(tmp, name), "wb") as fh:
                fh.write(data)
        names = list(ODD_FILES)
        os.mkdir(os.path.join(tmp, "folder.py"))
        os.mkfifo(os.path.join(tmp, "fifo.py"))
        specials = {"zero.py": "/dev/zero", "null.py": "/dev/null", "dangling.py": "nowhere", "loop.py": "loop.py"}
        for name, target in specials.items():
            os.symlink(target, os.path.join(tmp, name))
        os.symlink("..", os.path.join(tmp, "folder.py", "up"))  # a loop, for a walk that follows links
        rows.append(lint("odd files (a folder)", ["."], jobs, tmp, len(names) + 5, timeout=600))
        rows.append(lint("odd files (named)", names + ["fifo.py", "folder.py", *specials], jobs, tmp,
                         len(names) + 6, timeout=600))
    return rows


# every kind of TOML value, for every key (and inside per-file-ignores)
VALUES = {
    "integer": "5", "float": "1.5", "true": "true", "string": '"TSL001"', "empty string": '""',
    "date": "1979-05-27", "datetime": "1979-05-27T07:32:00Z", "list of integers": "[1, 2]",
    "nested list": '[["TSL"]]', "mixed list": '["TSL", 5]', "table": "{ a = 1 }", "empty table": "{}",
    "empty list": "[]", "list of tables": "[{ a = 1 }]", "null byte": '"a\\u0000b"',
    "list with a null byte": '["a\\u0000b"]', "bad patterns": '["[", "!", "**/***", "\\\\", "a/**/"]',
    "long code": '["TSL' + "9" * 60 + '"]', "lower-case code": '["tsl001"]', "spaced code": '[" TSL001 "]',
    "not a name": '["", ".", "a..b", "1x.y", "a.b."]', "surrogate escape": '["\\udcff"]',
    "huge list": "[" + ", ".join(['"TSL001"'] * 5000) + "]",
}
WHOLE_FILES = {
    "not UTF-8": b'[tool.torchsync-lint]\nselect = ["TSL"]  # caf\xe9\n',
    "UTF-8 BOM": "\ufeff[tool.torchsync-lint]\nselect = ['TSL']\n".encode(),
    "tool = 5": b"tool = 5\n[x]\ntorchsync-lint = 1\n",
    "[tool] torchsync-lint = 5": b"[tool]\ntorchsync-lint = 5\n",
    "array of tables": b"[[tool.torchsync-lint]]\nselect = ['TSL']\n",
    "invalid TOML": b"[tool.torchsync-lint]\nselect = [\n",
    "duplicate key": b"[tool.torchsync-lint]\nselect = []\nselect = []\n",
    "deep arrays": b"[tool.torchsync-lint]\nx = " + b"[" * 20000 + b"]" * 20000 + b"\n",
    "deep tables": b"[tool.torchsync-lint]\nx = " + b"{a = " * 5000 + b"1" + b"}" * 5000 + b"\n",
    "null byte in the file": b"[tool.torchsync-lint]\x00\n",
    "huge table": (b"[tool.torchsync-lint.per-file-ignores]\n"
                   + b"".join(b'"f%d.py" = ["TSL001"]\n' % i for i in range(20000))),
    "pattern keys": '[tool.torchsync-lint.per-file-ignores]\n"[" = ["TSL001"]\n"" = ["TSL"]\n"\\u0000" = []\n'
                    '"../../**" = ["TSL"]\n'.encode(),
}
GOOD = ("import torch\nfrom torch import nn\n\n\nclass L(nn.Module):\n    def forward(self, x):\n"
        "        return x.item()\n")


def config_cases() -> List[Tuple[str, bytes, List[str]]]:
    """(name, pyproject bytes, extra CLI arguments)."""
    cases = [(name, data, []) for name, data in WHOLE_FILES.items()]
    for key in sorted(KEYS):
        for vname, value in VALUES.items():
            cases.append((f"{key} = {vname}", f"[tool.torchsync-lint]\n{key} = {value}\n".encode(), []))
    for vname, value in VALUES.items():
        cases.append((f"per-file-ignores.a.py = {vname}",
                      f'[tool.torchsync-lint.per-file-ignores]\n"a.py" = {value}\n'.encode(), []))
    cases.append(("--config a folder", b"", ["--config", "."]))
    cases.append(("--config a missing file", b"", ["--config", "missing.toml"]))
    cases.append(("--config a binary file", b"", ["--config", sys.executable]))
    return cases


def sweep_configs() -> Row:
    """Each malformed config linted in this process: an exception leaving cli.main is a traceback."""
    from torchsync_lint import cli

    row = Row("configs (malformed pyproject.toml)")
    codes: Dict[str, int] = {}
    t0 = time.perf_counter()
    env = dict(os.environ)
    here = os.getcwd()
    for name, data, extra in config_cases():
        row.files += 1
        with tempfile.TemporaryDirectory(prefix="tsl-config-") as tmp:
            if data:
                with open(os.path.join(tmp, "pyproject.toml"), "wb") as fh:
                    fh.write(data)
            with open(os.path.join(tmp, "good.py"), "w") as fh:
                fh.write(GOOD)
            out, err = io.StringIO(), io.StringIO()
            os.chdir(tmp)
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = cli.main([*extra, "good.py"])  # the cache too: cache-dir is a setting
            except BaseException:  # noqa: B036 - what a user would see as a traceback
                code = "traceback"
                row.tracebacks += 1
                row.problems.append(f"{name}: {traceback.format_exc()[-1500:]}")
            finally:
                os.chdir(here)
                os.environ.clear()
                os.environ.update(env)  # extra-sync-calls travel in the environment
        codes[str(code)] = codes.get(str(code), 0) + 1
        lines = err.getvalue().splitlines()
        if code == 2:
            kind = "config" if len(lines) == 1 and lines[0].startswith("torchsync-lint: error: ") else "other"
            row.errors[kind] = row.errors.get(kind, 0) + 1
            if kind == "other":
                row.problems.append(f"{name}: not one error line: {lines[:5]}")
        elif code in (0, 1):
            row.others.append(f"{name}: accepted (exit {code})")
        elif code != "traceback":
            row.problems.append(f"{name}: exit {code}: {lines[:5]}")
    row.exit = ", ".join(f"{c}:{n}" for c, n in sorted(codes.items()))
    row.seconds = time.perf_counter() - t0
    return row


def memory(lines: int = 50_000) -> Row:
    """Peak memory of the CLI on one file of ``lines`` lines (copies of a small nn.Module)."""
    block = textwrap.dedent("""\
        class Block{i}(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                return y.sum().item() + y.max()


    """)
    n = lines // block.count("\n")
    with tempfile.TemporaryDirectory(prefix="tsl-memory-") as tmp:
        path = os.path.join(tmp, "big.py")
        with open(path, "w") as fh:
            fh.write("import torch\nfrom torch import nn\n\n\n" + "".join(block.format(i=i) for i in range(n)))
        with open(path) as fh:
            n_lines = sum(1 for _ in fh)
        cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "torchsync_lint", "--isolated", "--no-cache", "--format",
               "json", "--exit-zero", path]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        row = Row(f"memory: one {n_lines:,}-line file", 1, str(proc.returncode), time.perf_counter() - t0)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    row.tracebacks = proc.stderr.count(TRACEBACK)
    try:
        row.findings = len(json.loads(proc.stdout))
    except json.JSONDecodeError:
        row.problems.append("stdout is not one JSON array")
    row.others.append(f"peak RSS: {int(peak.group(1)) / 1024:.0f} MiB" if peak else "peak RSS: not measured")
    return row


def table(rows: List[Row]) -> str:
    head = ("sweep", "files", "exit", "wall s", "findings", "syntax", "skipped", "decode", "other err",
            "internal", "tracebacks")
    body = [(r.name, str(r.files), r.exit, f"{r.seconds:.0f}", str(r.findings),
             *(str(r.errors.get(k, 0)) for k in ("syntax", "skipped", "decode", "other")),
             str(r.errors.get("internal", 0)), str(r.tracebacks)) for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]

    def fmt(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(b) for b in body])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Lint every kind of input with the CLI; fail on any crash.")
    p.add_argument("--only", default="odd,stdlib,corpus,generated,configs,memory", help="comma-separated sweeps")
    p.add_argument("--generated", type=int, default=5000, help="how many modules to generate")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    args = p.parse_args(argv)
    wanted = set(args.only.split(","))
    rows: List[Row] = []
    steps = [("odd", lambda: sweep_odd_files(args.jobs)), ("stdlib", lambda: [sweep_stdlib(args.jobs)]),
             ("corpus", lambda: sweep_corpora(args.jobs)),
             ("generated", lambda: [sweep_generated(args.generated, args.jobs)]),
             ("configs", lambda: [sweep_configs()]), ("memory", lambda: [memory()])]
    for name, step in steps:
        if name in wanted:
            for row in step():
                rows.append(row)
                print(f"  {row.name}: {row.seconds:.0f} s", file=sys.stderr, flush=True)
    print(table(rows))
    for r in rows:
        for line in r.others[:20]:
            print(f"  {r.name}: {line}")
        if len(r.others) > 20:
            print(f"  {r.name}: ... {len(r.others) - 20} more")
    problems = [f"{r.name}: {msg}" for r in rows for msg in r.problems]
    for msg in problems:
        print("PROBLEM " + msg)
    print("FAIL" if problems else "OK: no traceback, no internal error")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
