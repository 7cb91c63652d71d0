"""Incremental runs (``run.tracked_project``): a file checked with other files' interfaces is
cached on exactly the entries it asked about, so an edit re-checks the edited file and the files
that asked about what changed, and the findings are those of a cold run of the edited tree."""

from pathlib import Path

import pytest

from torchsync_lint import lint_paths
from torchsync_lint.config import Config
from torchsync_lint.run import cached_check
from torchsync_lint.run.tracked_project import TrackedProject

FILES = {
    "pkg/__init__.py": "",
    "pkg/helpers.py": (
        "import torch\n\n\n"
        "def grid(n):\n"
        "    return torch.rand(n, 2)\n\n\n"
        "def same(x):\n"
        "    return x\n"
    ),
    "pkg/user_a.py": (
        "import torch\n\n"
        "from pkg.helpers import grid\n\n\n"
        "def pick(n):\n"
        "    pts = grid(n)\n"
        "    return pts[pts[:, 0] > 0]\n"
    ),
    "pkg/user_b.py": (
        "import torch\n\n"
        "from pkg.helpers import same\n\n\n"
        "def run(t: torch.Tensor):\n"
        "    y = same(t)\n"
        "    return y\n"
    ),
    "pkg/user_c.py": (
        "import torch\n\n\n"
        "def total(t: torch.Tensor):\n"
        "    if t.sum() > 0:\n"
        "        return 1\n"
        "    return 0\n"
    ),
}


def _write(root: Path, files) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")


def _run(root: Path, cache: bool, monkeypatch):
    checked = []
    real = cached_check.check_data

    def spy(data, path, *args, **kwargs):
        checked.append(Path(path).relative_to(root).as_posix())
        return real(data, path, *args, **kwargs)

    monkeypatch.setattr(cached_check, "check_data", spy)
    result = lint_paths([str(root)], Config(), jobs=1, cache_dir=str(root / ".cache") if cache else None)
    monkeypatch.setattr(cached_check, "check_data", real)
    found = sorted((Path(f.path).relative_to(root).as_posix(), f.line, f.col, f.code) for f in result.findings)
    return found, set(checked)


@pytest.mark.parametrize("jobs_note", ["one process"])
def test_an_edit_rechecks_only_the_files_that_asked_about_it(tmp_path, monkeypatch, jobs_note):
    root = tmp_path / "proj"
    _write(root, FILES)
    cold, checked = _run(root, True, monkeypatch)
    assert "pkg/user_a.py" in checked
    warm, checked = _run(root, True, monkeypatch)
    assert warm == cold and checked == set()

    # a function nobody asks about is added: only the edited file is checked again
    _write(root, {"pkg/helpers.py": FILES["pkg/helpers.py"] + "\n\ndef added(y):\n    return y\n"})
    found, checked = _run(root, True, monkeypatch)
    assert checked == {"pkg/helpers.py"}
    assert found == _run(root, False, monkeypatch)[0]

    # what grid returns changes: user_a asked about grid, user_b and user_c did not
    edited = FILES["pkg/helpers.py"].replace("torch.rand(n, 2)", "torch.rand(n, 2, device='cuda')")
    _write(root, {"pkg/helpers.py": edited})
    found, checked = _run(root, True, monkeypatch)
    assert checked == {"pkg/helpers.py", "pkg/user_a.py"}
    fresh = _run(root, False, monkeypatch)[0]
    assert found == fresh
    assert [f for f in found if f[0] == "pkg/user_a.py"] != [f for f in cold if f[0] == "pkg/user_a.py"]

    # and back: the earlier entries are answered again where they match
    _write(root, FILES)
    found, checked = _run(root, True, monkeypatch)
    assert found == cold and "pkg/user_b.py" not in checked and "pkg/user_c.py" not in checked


def test_recorded_entries_and_their_digests():
    a = {"module": "a", "functions": {"a.f": {"returns": {"kind": "tensor"}}}, "classes": {}, "values": {},
         "aliases": {}, "calls": []}
    b = {"module": "b", "functions": {}, "classes": {}, "values": {}, "aliases": {"f": "a.f"},
         "calls": [["a.f", [{"kind": "tensor"}], {}]]}
    p = TrackedProject({"a": a, "b": b})
    p.begin()
    p.resolve(("call", "b.f"))
    deps = p.end()
    assert ("f", "a.f") in deps and ("m", "b") in deps
    p.begin()
    p.resolve(("call", "b.f"))  # memoised: the same entries are recorded again
    assert p.end() == deps
    p.begin()
    p.param("a.f", "x", 0)
    assert p.end() == {("kp", "a.f", "x", 0)}  # the answer, not the call sites it joins
    # another caller that passes the same: the check that asked is the same; one that passes
    # something else: it is not
    asked = p.record({("kp", "a.f", "x", 0)})
    c = {"module": "c", "functions": {}, "classes": {}, "values": {}, "aliases": {"f": "a.f"},
         "calls": [["a.f", [{"kind": "tensor"}], {}]]}
    assert TrackedProject({"a": a, "b": b, "c": c}).matches(asked)
    other = dict(c, calls=[["a.f", [{"k": "number"}], {}]])
    assert not TrackedProject({"a": a, "c": other}).matches(asked)
    recorded = p.record(deps)
    changed = dict(a, functions={"a.f": {"returns": {"kind": "number"}}})
    assert TrackedProject({"a": a, "b": b}).matches(recorded)
    assert not TrackedProject({"a": changed, "b": b}).matches(recorded)
    assert TrackedProject({"a": dict(a, values={"k": {"kind": "number"}}), "b": b}).matches(recorded)


def test_every_project_wide_answer_is_recorded():
    """A plain attribute ``Project`` adds later (a flag over every file) must be a recorded
    dependency too, or a cached report would miss its change."""
    from torchsync_lint.inference.project import Project
    from torchsync_lint.run.tracked_project import FLAGS

    public = {k for k, v in vars(Project({})).items() if not k.startswith("_") and not callable(v)}
    assert public <= set(FLAGS)
    p = TrackedProject({"a": {"module": "a", "validation_off": True}})
    p.begin()
    assert p.validation_off and not p.sets_default_device
    assert p.end() == {("g", "validation_off"), ("g", "sets_default_device")}


def test_growing_wave_projects_place_calls_as_fresh_projects_do():
    """The projects of the import waves share their key tables and where each call entry landed
    (``Waves``); each still answers as a project built from its interfaces alone: a call to a
    name a later wave defines (or re-exports) lands there once that wave's project holds it."""
    from torchsync_lint.inference.project import Project
    from torchsync_lint.run.tracked_project import Waves

    def iface(module, functions=(), aliases=None, calls=()):
        return {"module": module, "functions": {f"{module}.{f}": {"returns": {"kind": "tensor"}} for f in functions},
                "classes": {}, "values": {}, "aliases": aliases or {}, "calls": [list(c) for c in calls]}

    user = iface("u", calls=[("pkg.helper", [{"kind": "tensor"}], {}), ("lib.g", [], {"x": {"kind": "number"}})])
    lib = iface("lib", functions=["g"])
    pkg = iface("pkg", aliases={"helper": "pkg.impl.helper"})
    impl = iface("pkg.impl", functions=["helper"])
    waves = Waves()
    interfaces: dict = {}
    placings = []
    for added in ([user], [lib], [pkg], [impl]):
        interfaces.update((i["module"], i) for i in added)
        grown, fresh = TrackedProject(interfaces, waves), Project(dict(interfaces))
        assert grown._call_index() == fresh._call_index()
        assert {k: v for k, v in grown._functions.items()} == fresh._functions
        placings.append(waves.table.placings)
    assert set(grown._call_index()) == {"lib.g", "pkg.impl.helper"}
    # each entry is placed again only where the wave added what its placing looked up: `lib.g`
    # when lib arrives, `pkg.helper` when pkg arrives (an alias) and when pkg.impl does
    assert placings == [2, 1, 1, 1]


def _table_iface(module, functions=(), classes=None, aliases=None, calls=(), values=None):
    return {"module": module, "functions": {f"{module}.{f}": {"returns": {"kind": "tensor"}} for f in functions},
            "classes": classes or {}, "values": values or {}, "aliases": aliases or {},
            "calls": [list(c) for c in calls]}


def test_callers_table_after_replaced_and_reordered_interfaces_is_a_fresh_one():
    """The project pass replaces the interfaces of the files it checked again and lists them in
    file order: the table built from the previous one (``run.call_table``) places again what a
    replaced interface can change (an override that came, a function that went) and is still,
    key by key and site by site, the table a fresh project builds."""
    from torchsync_lint.inference.project import Project
    from torchsync_lint.run.tracked_project import Waves

    base = _table_iface("m.base", functions=["Base.step", "Base.run"], classes={
        "m.base.Base": {"bases": ["torch.nn.Module"], "methods": {"step": "m.base.Base.step", "run": "m.base.Base.run"},
                        "attrs": {}}},
        calls=[("@self", "m.base.Base", "step", [{"kind": "tensor"}], {})])
    helpers = _table_iface("m.helpers", functions=["grid", "gone"])
    user = _table_iface("m.user", aliases={"grid": "m.helpers.grid", "gone": "m.helpers.gone", "Sub": "m.sub.Sub"},
                        calls=[("m.helpers.grid", [{"kind": "tensor"}], {}), ("m.helpers.gone", [], {}),
                               ("m.sub.Sub", [{"kind": "number"}], {}),
                               ("@method", {"kind": "object", "cls": "m.sub.Sub"}, "step", [{"kind": "tensor"}], {})])
    sub = _table_iface("m.sub", functions=["Sub.__init__"], aliases={"Base": "m.base.Base"}, classes={
        "m.sub.Sub": {"bases": ["m.base.Base"], "methods": {"__init__": "m.sub.Sub.__init__"}, "attrs": {}}})
    test = _table_iface("tests.test_user", aliases={"grid": "m.helpers.grid"},
                        calls=[("m.helpers.grid", [{"kind": "tensor"}], {})])
    waves = Waves()
    interfaces = {}
    for added in ([base, helpers], [sub], [user, test]):
        interfaces.update((i["module"], i) for i in added)
        grown = TrackedProject(interfaces, waves)
        assert grown._call_index() == Project(dict(interfaces))._call_index()
    # the project pass: every interface in file order, two of them replaced by new objects
    sub2 = dict(sub, functions=dict(sub["functions"], **{"m.sub.Sub.step": {"returns": {"kind": "number"}}}),
                classes={"m.sub.Sub": dict(sub["classes"]["m.sub.Sub"], methods={
                    "__init__": "m.sub.Sub.__init__", "step": "m.sub.Sub.step"})})
    helpers2 = dict(helpers, functions={"m.helpers.grid": {"returns": {"kind": "number"}}})
    placings = []
    for final in ({"m.user": user, "m.base": base, "m.helpers": helpers, "m.sub": sub, "tests.test_user": test},
                  {"m.user": user, "m.base": base, "m.helpers": helpers2, "m.sub": sub2, "tests.test_user": test}):
        project, fresh = TrackedProject(final, waves), Project(dict(final))
        assert project._call_index() == fresh._call_index()
        placings.append(waves.table.placings)
        expected = {}
        for module, iface in final.items():
            for key, args, kwargs in fresh.calls_from(iface):
                expected.setdefault(key, []).append([module, args, kwargs])
        assert project.calls_by_module() == expected
    # the override now receives what `self.step(...)` in the base passes; `gone` has no callers
    assert "m.sub.Sub.step" in project._call_index() and "m.helpers.gone" not in project._call_index()
    assert placings[0] == 0  # reordered only: no lookup finds other data, nothing is placed again


@pytest.mark.parametrize("name", sorted(p.name for p in (Path(__file__).parent / "projects").iterdir()))
def test_every_projects_callers_table_is_a_fresh_one(name, monkeypatch):
    """Over a whole run of each fixture project (import waves, the project pass, the index), the
    callers' table each project builds from the one before equals the one a fresh project builds."""
    import itertools

    from torchsync_lint.inference.project import Project

    real = TrackedProject._call_index
    checked = []

    def compared(self):
        fresh = self._calls is None
        got = real(self)
        if fresh:
            given = dict(itertools.islice(self._ifaces.items(), self._given))
            assert got == Project(given)._call_index()
            checked.append(len(given))
        return got

    monkeypatch.setattr(TrackedProject, "_call_index", compared)
    root = Path(__file__).parent / "projects" / name
    lint_paths([str(root)], Config(select=["TSL"], include_cold=True), jobs=1)
    assert checked


def test_memoised_lookups_record_what_computing_them_records():
    """``locate`` and ``mro`` are answered once per project; asked again, they record the same
    entries (for the check's cache key and for the callers' table's probes) as the first time."""
    classes = {"m.a.A": {"bases": ["m.b.B"], "methods": {"f": "m.a.A.f"}, "attrs": {}},
               "m.b.B": {"bases": ["torch.nn.Module"], "methods": {"g": "m.b.B.g"}, "attrs": {}}}
    ifaces = {"m.a": _table_iface("m.a", functions=["A.f"], aliases={"B": "m.b.B"},
                                  classes={"m.a.A": classes["m.a.A"]}),
              "m.b": _table_iface("m.b", functions=["B.g"], classes={"m.b.B": classes["m.b.B"]}),
              "m": _table_iface("m", aliases={"A": "m.a.A"})}
    project = TrackedProject(ifaces)
    for ask in (lambda: project.locate("m.A.g"), lambda: project.mro("m.a.A")):
        seen = []
        for _ in range(2):
            project.begin()
            project._probe = {}
            answer = ask()
            seen.append((answer, project.end(), set(project._probe)))
            project._probe = None
        assert seen[0] == seen[1] and seen[0][1]
    assert project.locate("m.A.g") == ("function", "m.b.B.g")


def test_cached_reports_decode_their_resolved_references_alike(monkeypatch):
    """``report_data`` decodes a value once per JSON text: equal to decoding it afresh, shared
    between reports (values are frozen), and the memo stays bounded."""
    from torchsync_lint.check.report import FileReport
    from torchsync_lint.inference.values import TENSOR, Value, from_data, to_data
    from torchsync_lint.run import report_data

    ref = ("call", "pkg.helpers.mask")
    value = Value(TENSOR, device="cuda", elts=(Value(TENSOR),), ref=None, zero_dim=True)
    report = FileReport("a.py", refs={ref}, ref_values={ref: value})
    data = report_data.to_json(report)
    first = report_data.from_json(data, FileReport)
    second = report_data.from_json(data, FileReport)
    assert first.ref_values == {ref: value} == {ref: from_data(to_data(value))}
    assert first.ref_values[ref] is second.ref_values[ref] and first.refs == {ref}
    monkeypatch.setattr(report_data, "_DECODED", {str(i): value for i in range(65536)})
    report_data.from_json(data, FileReport)
    assert len(report_data._DECODED) == 1


def test_references_holding_tuples_come_back_from_the_cache():
    """A handed function's reference holds its target as a tuple, which JSON gives back as a
    list: decoded, the reference is the same tuple (a list made it unhashable, the entry unreadable
    and the file checked again on every run the project index could not answer)."""
    import json

    from torchsync_lint.check.report import FileReport
    from torchsync_lint.inference.handed import HANDED
    from torchsync_lint.inference.values import TENSOR, Value
    from torchsync_lint.run import report_data

    ref = (HANDED, ("method", "hb.base.AutoRegressive", "decode_autoregressive"), 0, None, "prev", 1)
    joined = ("join", Value(TENSOR), Value(TENSOR, device="cuda"))
    nested = ("value", joined, 0)  # values inside a reference inside a reference: encoded too
    report = FileReport("a.py", refs={ref, joined, nested}, ref_values={ref: Value(TENSOR)})
    back = report_data.from_json(json.loads(json.dumps(report_data.to_json(report))), FileReport)
    assert back.refs == {ref, joined, nested} and back.ref_values == {ref: Value(TENSOR)}


def test_an_unrelated_edit_leaves_the_report_of_a_file_that_hands_a_function_on(tmp_path, monkeypatch):
    import shutil

    root = tmp_path / "proj"
    shutil.copytree(Path(__file__).parent / "projects" / "handed_back", root)
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    cold, checked = _run(root, True, monkeypatch)
    assert "hb/model.py" in checked and any(f[0] == "hb/model.py" for f in cold)
    base = root / "hb" / "base.py"
    base.write_text(base.read_text() + "\n\ndef added(y):\n    return y\n")
    found, checked = _run(root, True, monkeypatch)
    assert checked == {"hb/base.py"}
    assert found == cold == _run(root, False, monkeypatch)[0]


NESTED_REFERENCES = {
    "pkg/__init__.py": "",
    "pkg/conf.py": (
        "class Config:\n"
        "    def __init__(self, bos=None, eos=None):\n"
        "        self.bos = bos\n"
        "        self.eos = eos\n\n\n"
        "def keep(token):\n"
        "    return token\n"
    ),
    # as transformers' generation/utils: a local helper's return is another file's attributes,
    # joined and moved, so a reference holds a reference that holds values
    "pkg/gen.py": (
        "import torch\n\n"
        "from pkg.conf import Config, keep\n\n\n"
        "class Mixin:\n"
        "    def prepare(self, config: Config, device=None):\n"
        "        def _tensor_or_none(token, device=None):\n"
        "            if token is None:\n"
        "                return token\n"
        "            if isinstance(token, torch.Tensor):\n"
        "                return token.to(device)\n"
        "            return torch.tensor(token, device=device, dtype=torch.long)\n\n"
        "        bos = _tensor_or_none(config.bos, device=device)\n"
        "        eos = _tensor_or_none(config.eos, device=device)\n"
        "        return keep(bos), eos\n"
    ),
}


def test_an_interface_whose_references_nest_values_is_cached(tmp_path, monkeypatch):
    """Values inside a reference inside a reference are written as data: the cache keeps the
    interface (a one-file check reads it back), the report, and the project index's callers'
    table (``keep(bos)`` passes such a value), so an unchanged re-run checks nothing and the
    flake8 plugin finds the index. The writes failed silently: every run derived them again, and
    without its callers' table the index was torn (transformers: a warm flake8 run 0.69 s)."""
    import json

    from torchsync_lint.check.report import Options
    from torchsync_lint.run.interfaces import interface_cache_get, interface_for_file
    from torchsync_lint.run.project_index import Index

    _write(tmp_path, NESTED_REFERENCES)
    gen = str(tmp_path / "pkg/gen.py")
    derived = interface_for_file(gen, "pkg.gen", str(tmp_path / ".od-cache"))
    assert json.loads(json.dumps(derived)) is not None
    assert interface_cache_get(gen, "pkg.gen", str(tmp_path / ".od-cache")) == (True, json.loads(json.dumps(derived)))
    cold, checked_cold = _run(tmp_path, True, monkeypatch)
    warm, checked_warm = _run(tmp_path, True, monkeypatch)
    assert "pkg/gen.py" in checked_cold and not checked_warm
    index = Index.load(str(tmp_path / ".cache"), Options(select=("TSL",)))
    assert index is not None and "pkg.conf.keep" in index.calls
    assert warm == cold == _run(tmp_path, False, monkeypatch)[0]
