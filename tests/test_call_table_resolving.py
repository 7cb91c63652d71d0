"""``obj.method(...)`` entries in the callers' table of a run's growing projects (``run.call_table``,
``TrackedProject._place_resolving``): the receiver is resolved without the answers the project
memoised, so every lookup it makes is known; the entry is placed again only where a later
project finds other data for one of them, and each project's table is still a fresh project's."""

from torchsync_lint.inference.project import Project
from torchsync_lint.run.tracked_project import TrackedProject, Waves


def _iface(module, functions=None, classes=None, aliases=None, calls=()):
    return {"module": module, "functions": functions or {}, "classes": classes or {}, "values": {},
            "aliases": aliases or {}, "calls": [list(c) for c in calls]}


TENSOR = {"k": "tensor"}
# `make().step(x)` in m.user, where m.fac.make returns an m.model.Net
USER = _iface("m.user", aliases={"make": "m.fac.make"},
              calls=[("@method", {"k": "unknown", "r": ["call", "m.fac.make"]}, "step", [TENSOR], {})])
OTHER = _iface("m.other", functions={"m.other.g": {"returns": TENSOR}})
FAC = _iface("m.fac", aliases={"Net": "m.model.Net"}, functions={"m.fac.make": {"returns": {
    "k": "unknown", "r": ["call", "m.model.Net"]}}})
MODEL = _iface("m.model", functions={"m.model.Net.step": {"returns": TENSOR}}, classes={
    "m.model.Net": {"bases": ["torch.nn.Module"], "methods": {"step": "m.model.Net.step"}, "attrs": {}}})


def _waves(order):
    waves = Waves()
    interfaces: dict = {}
    placings, tables = [], []
    for added in order:
        interfaces.update((i["module"], i) for i in added)
        project = TrackedProject(interfaces, waves)
        # a question answered before the table is built: memoised, with its lookups hidden
        project.resolve(("call", "m.fac.make"))
        table = project._call_index()
        assert table == Project(dict(interfaces))._call_index()
        placings.append(waves.table.placings)
        tables.append(table)
    return placings, tables


def test_an_entry_resolving_its_receiver_is_placed_again_only_where_a_lookup_changed():
    placings, tables = _waves([[USER], [OTHER], [FAC], [MODEL], [_iface("m.more")]])
    # placed with the user; m.other is nothing it looked up; m.fac and then m.model are
    assert placings == [1, 0, 1, 1, 0]
    assert "m.model.Net.step" not in tables[2] and tables[3]["m.model.Net.step"] == [([TENSOR], {})]


def test_answers_memoised_before_the_table_do_not_hide_what_placing_reads():
    """The project resolved the receiver before its table (and the wave before it too): the entry's
    placing still lists m.model among its lookups, so the wave that brings it places it again."""
    placings, tables = _waves([[USER, FAC], [MODEL]])
    assert placings == [1, 1]
    assert tables[1]["m.model.Net.step"] == [([TENSOR], {})]
