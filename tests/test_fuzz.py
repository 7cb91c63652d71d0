"""The engine never crashes: on generated Python (hypothesmith) and on mangled real files.

A parse error is a fine answer (``lint_source`` raises SyntaxError); any other exception is a bug.
Every rule is on, cold code included, so every visitor sees every node.
"""

import os
import random
import textwrap
from pathlib import Path

import pytest

from torchsync_lint.config import Config
from torchsync_lint import lint_source
from torchsync_lint.rules.registry import all_rules

REPO = Path(__file__).resolve().parent.parent
SEED_CASES = REPO.parent / "shared" / "cases"
# Gives the generated code tensors to work on, and the prefilter a reason to parse it.
HEADER = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\nx = torch.ones(3, device='cuda')\n"


def config() -> Config:
    return Config(select=list(all_rules()), include_cold=True, hot_functions=["f", "step"])


def lint_never_crashes(source: str) -> None:
    try:
        lint_source(source, "fuzz.py", config())
    except SyntaxError:
        pass  # a clean "cannot parse" is what bad input should give


def in_forward(body: str) -> str:
    return HEADER + "\n\nclass M(nn.Module):\n    def forward(self, x, mask, idx):\n" + textwrap.indent(body, "        ") + "\n        pass\n"


try:
    import hypothesmith
    from hypothesis import HealthCheck, given, settings
except ImportError:  # pragma: no cover - the test extra installs both
    hypothesmith = None

if hypothesmith is not None:
    FUZZ = settings(max_examples=60, deadline=None, database=None, derandomize=bool(os.environ.get("CI")),
                    suppress_health_check=list(HealthCheck))

    @pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it generates
    @FUZZ
    @given(hypothesmith.from_grammar())
    def test_generated_modules_never_crash_the_engine(source):
        lint_never_crashes(HEADER + source)
        lint_never_crashes(in_forward(source))
else:
    def test_generated_modules_never_crash_the_engine():
        pytest.skip("hypothesmith is not installed (pip install '.[test]')")


def _corpus():
    files = sorted((REPO / "tests" / "fixtures").glob("*.py")) + sorted((REPO / "examples").glob("*.py"))
    if SEED_CASES.is_dir():
        files += sorted(SEED_CASES.glob("*.py"))
    return files


SNIPPETS = [
    "x.item()", "t[mask]", "torch.nonzero(x)", "(", ")", ":", "lambda: 0", "*args", "await x", "yield",
    "if x:", "    ", "\t", "**", "x[...]", "f'{x}'", "x.cpu().numpy()", "del x", "nonlocal x", "global x",
    "@property", "async def g():", "match x:", "case _:", "self", "super().__init__()", "for i in x:",
]


def mutations(source: str, rng: random.Random):
    lines = source.splitlines(True)
    n = len(lines)
    for _ in range(2):  # 12 variants a file: the corpus is large enough
        i, j = rng.randrange(n), rng.randrange(n)
        yield "".join(lines[:i] + lines[i + 1:])  # drop a line
        yield "".join(lines[:i] + [lines[j]] + lines[i:])  # duplicate one elsewhere
        swapped = list(lines)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        yield "".join(swapped)
        cut = rng.randrange(len(source) + 1)
        yield source[:cut]  # truncated mid-token
        pos = rng.randrange(len(source) + 1)
        yield source[:pos] + rng.choice(SNIPPETS) + source[pos:]  # an odd token dropped in
        words = source.split(" ")
        k = rng.randrange(len(words))
        yield " ".join(words[:k] + [rng.choice(SNIPPETS)] + words[k + 1:])  # a word replaced


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.name)
def test_mangled_real_files_never_crash_the_engine(path):
    source = path.read_text(encoding="utf-8")
    rng = random.Random(path.name)  # reproducible per file
    for variant in mutations(source, rng):
        lint_never_crashes(variant)
