"""A name looked up through a module's star imports (``TrackedProject._starred``) is one entry,
``("s", module, name)``: what those star imports bind that name to. A check, a memoised ``locate``
and a callers' table entry that went through ``from .x import *`` wait on that answer only, not on
what every star import binds (``transformers.models`` star-imports 515 packages: the run recorded
and compared all of them for each such lookup, and any package that came later, binding other names,
made the check's entries differ and the table's entry be placed again for every project)."""

from torchsync_lint.inference.project import Project
from torchsync_lint.run.tracked_project import TrackedProject, Waves

TENSOR = {"k": "tensor"}


def _iface(module, functions=None, stars=(), calls=()):
    return {"module": module, "functions": functions or {}, "classes": {}, "values": {}, "aliases": {},
            "stars": list(stars), "all": None, "calls": [list(c) for c in calls]}


USER = _iface("u", calls=[("pkg.helper", [TENSOR], {})])  # `from pkg import helper; helper(x)`
PKG = _iface("pkg", stars=["pkg.a", "pkg.b", "pkg.c"])
A = _iface("pkg.a", functions={"pkg.a.helper": {"returns": TENSOR}})
B = _iface("pkg.b", functions={"pkg.b.other": {}})
C = _iface("pkg.c", functions={"pkg.c.third": {}})


def _placings(order):
    waves = Waves()
    interfaces: dict = {}
    placings = []
    for added in order:
        interfaces.update((i["module"], i) for i in added)
        project = TrackedProject(interfaces, waves)
        assert project._call_index() == Project(dict(interfaces))._call_index()
        placings.append(waves.table.placings)
    return placings


def test_a_table_entry_through_star_imports_waits_on_the_name_it_looked_up():
    # placed with the user; again when pkg.a brings `helper`; not for pkg.b, pkg.c, nor an unrelated module
    # (before: placed again for every project)
    assert _placings([[USER, PKG], [A], [B], [C], [_iface("m.more")]]) == [1, 1, 0, 0, 0]
    # a later star import binding the name again wins, and the entry moves with it
    c_helper = _iface("pkg.c", functions={"pkg.c.helper": {"returns": TENSOR}})
    assert _placings([[USER, PKG, A], [B], [c_helper]]) == [1, 0, 1]


def _deps(interfaces, q):
    p = TrackedProject(interfaces)
    p.begin()
    try:
        found = p.locate(q)
    finally:
        deps = p.end()
    return p, found, deps


def test_a_check_records_the_answer_not_every_star_import():
    p, found, deps = _deps({i["module"]: i for i in (USER, PKG, A, B)}, "pkg.helper")
    assert found == ("function", "pkg.a.helper")
    assert ("s", "pkg", "helper") in deps and not any(d[0] == "x" for d in deps)
    recorded = p.record(deps)
    # another package behind the star binding other names: the check's entries are the same
    assert TrackedProject({i["module"]: i for i in (USER, PKG, A, B, C)}).matches(recorded)
    # a wave that had not brought pkg.a yet answered otherwise
    assert not TrackedProject({i["module"]: i for i in (USER, PKG, B)}).matches(recorded)
    # pkg.c binding `helper` too (the last star import wins): another answer
    c_helper = _iface("pkg.c", functions={"pkg.c.helper": {}})
    assert not TrackedProject({i["module"]: i for i in (USER, PKG, A, B, c_helper)}).matches(recorded)
    # asked again (``locate`` is replayed with its entries), the same one entry
    p.begin()
    p.locate("pkg.helper")
    assert p.end() == deps
