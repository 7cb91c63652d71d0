"""Frequency labels decided across functions: set-up loops around a training loop and what they
call, callers by method name, export entry points, and labels across the files of a project."""

from test_frequency import _check
from torchsync_lint.config import Config



def test_a_loop_before_the_training_loop_is_set_up_and_one_after_it_keeps_its_label():
    """A loop that comes before the first training loop (references to encode, a schedule to
    build) runs once per call, with what it calls; a loop after it (an evaluation pass over data)
    runs as often as that loop does."""
    _check('''
    import torch


    def encode(r):
        return r.sum().item()                       # once


    def score_batch(model, x):
        return model(x).max().item()                # every-step


    def train(model, loader, val_loader, refs, opt):
        stats = []
        for r in refs:
            stats.append(encode(r))
            r.mean().item()                         # once
        for x in loader:
            loss = model(x).sum()
            loss.backward()
            opt.step()
        for x in val_loader:
            score_batch(model, x)
            x.min().item()                          # every-step
    ''')


def test_calls_by_method_name_only_weigh_what_they_may_reach():
    """A method called by name on an attribute whose class is known (`self.schedule.reset()` in a
    forward) is that class's method only: another class's `reset` called only from set-up code
    still runs once. A by-name call in a loop of a function of unknown frequency does not rule
    "once" out either; one made once per epoch makes the method periodic only when no caller
    calls it once."""
    _check('''
    import torch


    class Schedule:
        def reset(self, n):
            self.scale = self._table(n)

        def _table(self, n):
            return n.max().item()                       # once


    class DecoderSchedule:
        def reset(self, n):
            self.scale = self._grid(n)

        def _grid(self, n):
            return n.min().item()                       # every-step


    class Cursor:
        def rewind(self, n):
            return n.std().item()                       # periodic


    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.schedule = DecoderSchedule()

        def forward(self, x, n):
            self.schedule.reset(n)
            return x


    def refresh(schedules, n):
        for s in schedules:
            s.reset(n)


    def sample(model, schedule, x, opt):
        schedule.reset(10)
        for t in range(10):
            x = model(x)
            opt.step()
        return x


    def sample_chunks(model, schedule, cursor, x, opt, chunks):
        for c in chunks:
            schedule.reset(c)
            cursor.rewind(c)
            for t in range(10):
                x = model(x)
                opt.step()
        return x
    ''')


def test_frequency_labels_in_fixture_projects():
    """A line of a fixture project (tests/projects/) that ends in ``frequency: <class>`` has that
    label with --include-cold: callers in other files decide it."""
    import re
    from pathlib import Path

    from torchsync_lint import lint_paths

    marker = re.compile(r"frequency:\s*(every-step|periodic|once|error-path)\s*$")
    projects = Path(__file__).parent / "projects"
    checked = 0
    for root in sorted(p for p in projects.iterdir() if p.is_dir()):
        want = {}
        for path in root.rglob("*.py"):
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                m = marker.search(line)
                if m:
                    want[(str(path.resolve()), i)] = m.group(1)
        if not want:
            continue
        got = {}
        for f in lint_paths([str(root)], Config(hot_tests=True, include_cold=True), jobs=1).findings:
            got.setdefault((str(Path(f.path).resolve()), f.line), set()).add(f.frequency)
        for where, freq in want.items():
            assert got.get(where) == {freq}, (where, got.get(where), freq)
            checked += 1
    assert checked


def test_an_export_entry_point_that_writes_a_file_runs_once():
    """A function that writes a file and that nothing in the project calls exports or reports a
    result: once, with what it calls. Called from a step, or appending to a log, it keeps
    every-step."""
    _check('''
    import torch


    def _vertices(mesh):
        return mesh.verts.cpu().numpy()                     # once


    def export_mesh(mesh, path):
        coords = _vertices(mesh)
        faces = mesh.faces.cpu().numpy()                    # once
        with open(path, "wb") as fh:
            fh.write(coords.tobytes() + faces.tobytes())


    def dump_state(x, path):
        with open(path, mode="w") as fh:
            fh.write(str(x.sum().item()))                   # every-step


    def log_metrics(x, path):
        with open(path, "a") as fh:
            fh.write(str(x.mean().item()))                  # every-step


    class Evaluator:
        def __call__(self, model, x, path):
            score = model(x).max().item()                   # every-step
            with open(path, "w") as fh:
                fh.write(str(score))


    class Model(torch.nn.Module):
        def forward(self, x):
            dump_state(x, "state.txt")
            return x
    ''')


def test_a_call_of_a_base_class_method_reaches_its_overrides():
    """`self._update(batch)` in a base class runs whichever override the instance's class has:
    the override of a per-step update keeps every-step although another class calls a method of
    that name (through `super()`) from set-up code after its own training loop, and the override
    of a builder that the base's `__init__` calls runs once."""
    _check('''
    import torch


    class Algorithm:
        def __init__(self, net):
            self.net = net
            self.table = self._build(net)

        def _build(self, net):
            return None

        def update(self, batches):
            return [self._update(b) for b in batches]

        def _update(self, batch):
            raise NotImplementedError


    class Critic(Algorithm):
        def _build(self, net):
            return net.weight.max().item()                  # once

        def _update(self, batch):
            loss = self.net(batch).sum()
            return loss.item()                              # every-step


    class Adversarial(Algorithm):
        def _update(self, batch):
            for b in batch:
                loss = self.net(b).mean()
                loss.backward()
                self.opt.step()
            return super()._update(batch)
    ''')


def test_a_private_function_nothing_calls_does_not_rule_once_out():
    """A private helper that nothing in the project calls (a deprecated `_encode_prompt` wrapper)
    does not keep what it calls from running once; a public one (an entry point users call) does,
    and so does a private one that something calls."""
    _check('''
    import torch


    class Pipeline:
        def _encode_prompt(self, prompt):
            return self.encode_prompt(prompt)

        def encode_prompt(self, prompt):
            return prompt.sum().item()                      # once

        def prepare(self, x):
            return x.mean().item()                          # every-step

        def legacy_prepare(self, x):
            return self.prepare(x)

        def _check(self, x):
            return x.max().item()                           # every-step

        def _validate(self, x):
            return self._check(x)

        def run(self, x):
            return self._validate(x)

        def __call__(self, prompt, x, steps):
            emb = self.encode_prompt(prompt)
            x = self.prepare(x)
            self._check(x)
            for t in range(steps):
                x = self.unet(x, t, emb)
                x = self.scheduler.step(x, t)
            return x
    ''')


def test_what_a_once_or_periodic_branch_calls_runs_that_often():
    """A call made only in a branch that runs once or periodically runs the callee that often,
    from a caller that runs every step too: a dataset's `plot` that a step hook (or the private
    step its hooks share) calls for the first batches of each epoch is periodic, a table built
    under a first-call cache runs once; a helper that is also called outside such a
    branch keeps every-step."""
    _check('''
    import torch


    def build_table(x):
        return x.max().item()                               # once


    def describe(x):
        return x.min().item()                               # every-step


    class Images:
        def plot(self, sample):
            return sample["prediction"].item()              # periodic


    class Encoder:
        def encode(self, x):
            if self._table is None:
                self._table = build_table(x)
                describe(x)
            describe(x)
            return x


    class Task:
        def _shared_step(self, batch, batch_idx, stage):
            if batch_idx < 10:
                batch["prediction"].mean().item()           # periodic
                self.trainer.datamodule.plot(batch)
            return batch

        def validation_step(self, batch, batch_idx):
            out = self._shared_step(batch, batch_idx, "val")
            if batch_idx < 2:
                self.trainer.datamodule.plot(out)
            return out
    ''')
