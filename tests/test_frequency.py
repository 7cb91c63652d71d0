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


def _labels(src, path="train.py", **cfg):
    return {(f.line, f.code): f.frequency for f in lint_source(textwrap.dedent(src), path, Config(include_cold=True, **cfg))}


def _by_marker(src):
    """line -> the class its trailing comment names."""
    out = {}
    for i, line in enumerate(textwrap.dedent(src).splitlines(), 1):
        tail = line.rstrip().split("# ")[-1] if "# " in line else ""
        if tail in ("every-step", "periodic", "error-path", "once"):
            out[i] = tail
    return out


def _check(src, path="train.py"):
    got = {}
    for (line, _code), freq in _labels(src, path).items():
        got.setdefault(line, set()).add(freq)
    want = _by_marker(src)
    assert set(got) == set(want), (sorted(got), sorted(want))
    for line, freq in want.items():
        assert got[line] == {freq}, (line, got[line], freq)


TRAINING_FUNCTION = '''
    import torch


    def report(model, x):
        print(model(x).max().item())                # once
        return summarise(x)


    def summarise(x):
        return x.std().item()                       # once


    def train(model, loader, opt, x0):
        start = x0.sum().item()                     # once
        first = True
        for epoch in range(3):
            for i, (x, y) in enumerate(loader):
                loss = model(x).sum()
                if first:
                    print(loss.item())              # once
                    first = False
                if i == 0:
                    print(loss.max().item())        # once
                v = loss.item()                     # every-step
                loss.backward()
                opt.step()
            e = x0.mean().item()                    # periodic
        report(model, x0)
        return x0.min().item()                      # once
'''


def test_code_around_a_training_loop_runs_once():
    """Before and after the loop: once; an epoch loop's own code: periodic; what set-up code alone
    calls (a report, and what the report calls): once; first-iteration flags and counters: once."""
    _check(TRAINING_FUNCTION)


def test_a_function_called_every_step_keeps_its_code_every_step():
    """The same function reached from a step hook runs every step: its code outside a loop that
    steps optimizers is every-step, and so is a helper it also calls in the step."""
    _check('''
    import torch


    def helper(x):
        return x.sum().item()                       # every-step


    class Model(torch.nn.Module):
        def forward(self, x):
            a = x.max().item()                      # every-step
            for opt in self.optimizers:
                opt.step()
            first = True
            for layer in self.layers:
                if first:
                    x.min().item()                  # every-step
                    first = False
            found = False
            for t in self.items:
                if found:
                    t.norm().item()                 # every-step
                found = True
            return helper(x)


    def fit(model, loader, opt):
        for x in loader:
            model(x).sum().backward()
            opt.step()
        helper(x)
    ''')


def test_attribute_flags_and_cached_functions_run_once():
    _check('''
    import functools
    from functools import lru_cache, cached_property

    import torch


    class Model(torch.nn.Module):
        def forward(self, x):
            if not self._checked:
                x.min().item()                      # once
                self._checked = True
            if self.verbose:
                x.max().item()                      # every-step
            return x

        @cached_property
        def size(self):
            return self.w.sum().item()              # once


    @functools.cache
    def table(x):
        return x.sum().item()                       # once


    @lru_cache(maxsize=8)
    def other(x):
        return x.mean().item()                      # once


    @functools.wraps(table)
    def not_cached(x):
        return x.std().item()                       # every-step
    ''')


def test_set_up_callee_called_elsewhere_is_not_once():
    """A helper called around the training loop and also from code of unknown frequency keeps
    every-step: one caller not known to run once is enough."""
    _check('''
    import torch


    def helper(x):
        return x.sum().item()                       # every-step


    def evaluate(model, x):
        return helper(model(x))


    def train(model, loader, opt, x0):
        for x in loader:
            model(x).sum().backward()
            opt.step()
        helper(x0)
    ''')


def test_set_up_code_is_hidden_by_default():
    shown = {f.line for f in lint_source(textwrap.dedent(TRAINING_FUNCTION), "train.py", Config())}
    assert shown == {line for line, freq in _by_marker(TRAINING_FUNCTION).items() if freq == "every-step"}


def test_hot_only_rules_outside_hot_code_are_labelled_not_hot():
    src = textwrap.dedent('''
    import torch


    def util(x):
        torch.cuda.synchronize()


    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.cuda.synchronize()

        def forward(self, x):
            torch.cuda.synchronize()
            return x
    ''')
    got = {f.line: f.frequency for f in lint_source(src, "m.py", Config(include_cold=True))}
    assert got == {6: "not-hot", 12: "once", 15: "every-step"}
    assert {f.line for f in lint_source(src, "m.py", Config())} == {15}


def test_branches_that_warn_are_error_paths():
    _check('''
    import warnings

    import torch


    class Model(torch.nn.Module):
        def forward(self, x):
            if x.shape[0] > 8:
                warnings.warn(f"large batch {x.sum().item()}")  # error-path
            if x.shape[1] > 4:
                self.logger.warning("wide input")
                x.max().item()                      # error-path
            if x.shape[1] > 2:
                self.logger.info("ok")
                x.min().item()                      # every-step
            return x
    ''')


def test_what_only_set_up_code_calls_by_method_name_runs_once():
    """A method called on a receiver of unknown class (`self.scheduler.reset(...)`) from set-up
    code only runs once, with what it calls; one call of that name inside a loop keeps it."""
    _check('''
    import torch


    class Schedule:
        def reset(self, n):
            self.scale = self._table(n)

        def _table(self, n):
            return n.max().item()                           # once

        def advance(self, x):
            return x.sum().item()                           # every-step


    def sample(model, schedule, x, opt):
        schedule.reset(10)
        for t in range(10):
            x = model(x)
            y = schedule.advance(x)
            opt.step()
        return x


    class Builder:
        def __init__(self, w):
            self.w = self._norm(w)

        def _norm(self, w):
            return w.norm().item()                          # once
    ''')


def test_what_an_epoch_loop_calls_outside_its_step_loop_is_periodic_and_not_hot():
    src = '''
    import torch


    def validate(model, x):
        return model(x).mean().item()               # periodic


    def step_metric(x):
        return x.max().item()                       # every-step


    def fit(model, loader, opt, x0, epochs):
        for epoch in range(epochs):
            for x in loader:
                loss = model(x).sum()
                step_metric(loss)
                loss.backward()
                opt.step()
            validate(model, x0)
    '''
    _check(src)
    temps = {f.line: f.temperature for f in lint_source(textwrap.dedent(src), "train.py", Config(include_cold=True))}
    assert temps[6] == "unknown" and temps[10] == "hot"


def test_a_branch_that_prints_and_repairs_what_its_test_found_is_an_error_path():
    """``if v.item() > 1: print(...); v = one``: taken only when the value is out of range. A
    branch that prints without repairing (verbosity) or repairs without printing keeps its label."""
    _check('''
    import torch


    class Loss(torch.nn.Module):
        def forward(self, x, verbose: bool):
            v = x.mean()
            if v.item() > 1.0:                          # every-step
                print(f"out of range {v.item()}")       # error-path
                v = torch.ones(())
            if verbose:
                print(f"loss {v.item()}")               # every-step
            if v.item() < 0.0:                          # every-step
                v = x.abs().mean()
                x.min().item()                          # every-step
            return v
    ''')


def test_first_batches_of_a_step_hook_are_periodic_and_first_steps_of_a_loop_once():
    """``if batch_idx < 10 and ...:`` in a step hook runs on the first batches of every epoch
    (periodic); ``if i < 3:`` on a training loop's counter runs on its first steps (once). A bound
    on another name, or an ``or``, keeps the label."""
    _check('''
    import torch


    class Task(torch.nn.Module):
        def validation_step(self, batch, batch_idx):
            y = self(batch)
            if batch_idx < 10 and self.logger:
                y.cpu().numpy()                     # periodic
            if batch_idx == 0:
                y.max().item()                      # periodic
            if batch_idx < 10 or self.verbose:
                y.min().item()                      # every-step
            if y.shape[0] < 10:
                y.mean().item()                     # every-step
            return y


    def train(model, loader, opt):
        for i, x in enumerate(loader):
            loss = model(x).sum()
            if i < 3:
                print(loss.item())                  # once
            loss.backward()
            opt.step()
    ''')


def test_a_branch_that_fills_a_missing_key_runs_once():
    """`if "steps" not in self.acc[kind]: self.acc[kind]["steps"] = ...` fills the key on the first
    call, whatever the key is (a name, a literal) and however the container is reached; a branch
    that stores in another container than the one its test looks in keeps every-step."""
    _check('''
    import torch


    class Tracker:
        def track(self, losses, kind):
            for key, value in losses.items():
                if key not in self.acc[kind]:
                    self.acc[kind][key] = value.sum().item()            # once
            if "steps" not in self.acc[kind]:
                self.acc[kind]["steps"] = torch.tensor(0, device=value.device)  # once
            if "seen" not in self.acc[kind]:
                self.totals[kind]["seen"] = torch.tensor(0, device=value.device)  # every-step
            self.acc[kind]["steps"] += 1
    ''')


def test_a_branch_that_prints_a_warning_is_an_error_path():
    """`print("Warning: ...")` (a literal or an f-string message that says it warns or reports an
    error) marks its branch as an error path, as `warnings.warn` does; another print does not."""
    _check('''
    import torch


    def solve(resid, tol):
        if torch.norm(resid) > tol:                         # every-step
            print(
                "Warning: did not converge. "
                f"Residual norm is {torch.norm(resid)}"     # error-path
            )
        if resid.numel() > 8:
            print(f"ERROR: too large {resid.sum().item()}")  # error-path
        if resid.numel() > 4:
            print(f"residual {resid.max().item()}")        # every-step
        return resid
    ''')


def test_a_default_filled_when_missing_is_not_a_first_call_cache():
    """`if emb is None: emb = ...` on a local or an argument fills a default on every call that
    leaves it out: the branch keeps its function's frequency, and so does what it calls. On an
    attribute it caches across calls (once), and on a local inside a training loop it runs on the
    first step only (once)."""
    _check('''
    import torch


    def encode(x):
        return x.sum().item()                               # every-step


    def mine(model, queries, emb=None):
        if emb is None:
            emb = encode(queries)
            queries.max().item()                            # every-step
        return emb


    class Cache:
        def get(self, x):
            if self._emb is None:
                self._emb = x.min().item()                  # once
            return self._emb


    def train(model, loader, opt):
        first = None
        for x in loader:
            loss = model(x).sum()
            if first is None:
                first = loss.item()                         # once
            loss.backward()
            opt.step()
    ''')
