"""Frequency classes: every step, periodic, error path, once, test; and what the default report shows."""

import textwrap

from torchsync_lint.config import Config
from torchsync_lint import lint_source

SOURCE = textwrap.dedent('''
    import torch
    from torch import nn


    class Model(nn.Module):
        def forward(self, x, step: int):
            a = x.sum().item()                      # every-step
            if step % 100 == 0:
                print(x.mean().item())              # periodic
            if (step + 1) % 4 == 0:
                b = x.max().item()                  # periodic
            else:
                c = x.min().item()                  # every-step
            try:
                y = x * 2
            except RuntimeError:
                d = x.std().item()                  # error-path
            if torch.isnan(x).any():                # every-step
                raise ValueError(f"nan {x.sum().item()}")  # error-path
            assert step >= 0, x.abs().max().item()  # error-path
            if self._cache is None:
                self._cache = x.norm().item()       # once
            if not hasattr(self, "scale"):
                self.scale = x.var().item()         # once
            s = "%d" % step
            if s:
                e = x.prod().item()                 # every-step
            def later():
                return x.median().item()            # every-step
            return a
''')


def _expected():
    out = {}
    for i, line in enumerate(SOURCE.splitlines(), 1):
        if "# " in line and line.rstrip().split("# ")[-1] in ("every-step", "periodic", "error-path", "once"):
            out[i] = line.rstrip().split("# ")[-1]
    return out


def test_every_class_is_labelled_with_include_cold():
    cfg = Config(include_cold=True)
    got = {}
    for f in lint_source(SOURCE, "model.py", cfg):
        got.setdefault(f.line, set()).add(f.frequency)
    want = _expected()
    assert set(got) == set(want)
    for line, freq in want.items():
        assert got[line] == {freq}, (line, got[line], freq)


def test_default_report_shows_only_every_step():
    shown = {f.line for f in lint_source(SOURCE, "model.py", Config())}
    assert shown == {line for line, freq in _expected().items() if freq == "every-step"}


def test_test_files_are_labelled_test_and_hidden_by_default():
    assert lint_source(SOURCE, "tests/test_model.py", Config()) == []
    labelled = lint_source(SOURCE, "tests/test_model.py", Config(include_cold=True))
    assert labelled and {f.frequency for f in labelled} == {"test"}
    assert lint_source(SOURCE, "tests/test_model.py", Config(hot_tests=True))
    assert lint_source(SOURCE, "conftest.py", Config()) == []


def test_set_up_code_is_once():
    src = "import torch\n\nclass M(torch.nn.Module):\n    def __init__(self, x):\n        self.n = x.sum().item()\n"
    (f,) = lint_source(src, "m.py", Config(include_cold=True))
    assert f.frequency == "once" and f.temperature == "cold"
