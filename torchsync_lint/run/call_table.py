"""The callers' table of a run's projects, each built from the one before (``tracked_project``).

``Project._call_index`` places every call entry of every interface (``Project.entry_calls``): the
function a name reaches, the overrides ``self.method(...)`` may run, the method of a receiver's
class. The projects of one run grow (an import wave adds interfaces, the project pass replaces
the interfaces of the files it checked again), and each needs the whole table: built afresh, that
is every entry of the project placed again for every wave.

Here the table of a project is made from the one of the run's previous project:

- the entries of an interface added or replaced since are placed;
- an entry placed by a name, or a ``self.method(...)`` entry, of an interface that is still the
  same object is placed again only where some lookup its placing made (a function, a class or a
  module, found or not: ``tracked_project``'s probes) finds other data now, or (``self.method``)
  a class defining a method of that name came, went or changed. Placing reads a module's
  import table and module-level names, a class's bases and methods, whether a function exists:
  what changed is compared as data (``_changed_lookups``); a name looked up through a module's
  star imports (``("s", module, name)``: what they bind it to) is compared as the project answers it
  (``now``), since a package deep in the star chain changes it;
- an ``obj.method(...)`` entry is placed likewise, its receiver resolved without the project's
  memoised answers (``TrackedProject._place_resolving``); an entry whose placing read anything
  else (a project flag, a parameter's callers) is placed again every time.

The table is the same as one built afresh: the same keys, each with the same call sites in the
same order (interface in the project's order, then entry, then the functions an entry reaches).
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple

Dep = Tuple[str, ...]
_ENTRIES = ("f", "c", "m", "d")  # lookups an interface's arrival or departure tells (``_changed_lookups``)
Pos = Tuple[str, int]  # (calling module, entry)
Site = Tuple[str, int, int]  # (calling module, entry, function the entry reaches)
Placed = List[Tuple[str, list, dict]]  # what ``Project.entry_calls`` returns


class CallTable:
    """One project's table, and what is needed to derive the next project's from it."""

    def __init__(self) -> None:
        self.ifaces: Dict[str, Optional[dict]] = {}  # module -> interface, in the project's order
        self.placed: Dict[Pos, Placed] = {}
        self.rows: Dict[str, Dict[Site, Tuple[list, dict]]] = {}  # callee key -> site -> (args, kwargs)
        self.watch: Dict[Dep, Set[Pos]] = {}  # lookup -> the entries whose placing made it
        self.deps: Dict[Pos, Tuple[Dep, ...]] = {}
        self.volatile: Set[Pos] = set()  # entries placed again every time
        self.seen: Dict[Dep, object] = {}  # derived lookups (``now``) -> what they found when placed
        self.table: Dict[str, List[Tuple[list, dict]]] = {}
        self.spent = False  # a later table was derived from this one (its state moved there)
        self.placings = 0  # entries placed to build this table (the rest came from the one before)

    def sites(self) -> List[Tuple[str, Placed]]:
        """(calling module, what one entry reaches) for every entry, in the project's order."""
        order = {m: i for i, m in enumerate(self.ifaces)}
        return [(pos[0], self.placed[pos]) for pos in sorted(self.placed, key=lambda p: (order[p[0]], p[1]))]


def _lookups(iface: Optional[dict], module: str, out: Set[Dep]) -> None:
    """Every lookup an interface's arrival or departure can answer differently."""
    out.add(("m", module))
    for key in (iface or {}).get("functions", {}):
        out.add(("f", key))
    for key, c in (iface or {}).get("classes", {}).items():
        out.add(("c", key))
        out.update(("d", name) for name in c.get("methods", {}))


def _changed_lookups(old: Optional[dict], new: Optional[dict], module: str, out: Set[Dep]) -> None:
    """The lookups that find other data once ``old`` is replaced by ``new`` (a conservative set:
    a key another interface defines first is listed too)."""
    if old is None or new is None:
        _lookups(old, module, out)
        _lookups(new, module, out)
        return
    if (old.get("values") != new.get("values") or old.get("aliases") != new.get("aliases")
            or old.get("stars") != new.get("stars") or old.get("all") != new.get("all")):
        out.add(("m", module))
    of, nf = old.get("functions", {}), new.get("functions", {})
    out.update(("f", k) for k in set(of) | set(nf) if of.get(k) != nf.get(k))
    oc, nc = old.get("classes", {}), new.get("classes", {})
    for k in set(oc) | set(nc):
        if oc.get(k) != nc.get(k):
            out.add(("c", k))
            for c in (oc.get(k), nc.get(k)):
                out.update(("d", name) for name in (c or {}).get("methods", {}))


def build(ifaces: Dict[str, Optional[dict]], previous: Optional[CallTable], test: Callable[[str], bool],
          place: Callable[[list, bool], Tuple[Placed, Optional[Tuple[Dep, ...]]]],
          now: Optional[Callable[[Dep], object]] = None) -> CallTable:
    """The table of a project over ``ifaces`` (module -> interface, in the project's order), from
    ``previous`` (the table of the run's previous project) where there is one. ``place(entry,
    test)``: what the entry reaches in this project, with the lookups its placing made (None:
    placed again for every project). ``now(dep)``: what a lookup that is not a function, class
    or module entry (the names a module's star imports bind, ``("s", module)``) finds in this
    project; the entries whose placing made it are placed again where that changed."""
    base = previous if previous is not None and not previous.spent else None
    t = CallTable()
    t.ifaces = dict(ifaces)
    todo: Set[Pos] = set()
    if base is not None:
        base.spent = True
        t.placed, t.rows, t.watch, t.deps, t.volatile = base.placed, base.rows, base.watch, base.deps, base.volatile
        t.seen = base.seen
        changed: Set[Dep] = set()
        moved = False
        for module in set(base.ifaces) | set(ifaces):
            old, new = base.ifaces.get(module), ifaces.get(module)
            if old is new:
                continue
            moved = True
            _changed_lookups(old, new, module, changed)
            todo.update((module, j) for iface in (old, new) for j in range(len((iface or {}).get("calls", ()))))
        for dep in list(t.seen) if moved else ():
            if not t.watch.get(dep):
                del t.seen[dep]  # no entry waits on it
            else:
                found = now(dep) if now is not None else None
                if now is None or found != t.seen[dep]:
                    changed.add(dep)  # its entries are placed again below, here
                    t.seen[dep] = found
        todo |= t.volatile
        for dep in changed:
            todo |= t.watch.get(dep, set())
    else:
        todo = {(m, j) for m, iface in ifaces.items() for j in range(len((iface or {}).get("calls", ())))}
    touched: Set[str] = set()
    order = {m: i for i, m in enumerate(ifaces)}
    for pos in sorted(todo, key=lambda p: (order.get(p[0], -1), p[1])):  # as a fresh table places them
        _forget(t, pos, touched)
        module, j = pos
        entries = (ifaces.get(module) or {}).get("calls", ())
        if j >= len(entries):
            continue  # an entry of an interface that went (or was replaced by a shorter one)
        placed, deps = place(entries[j], test(module))
        t.placings += 1
        t.placed[pos] = placed
        for n, (key, args, kwargs) in enumerate(placed):
            t.rows.setdefault(key, {})[(module, j, n)] = (args, kwargs)
            touched.add(key)
        if deps is None:
            t.volatile.add(pos)
        else:
            t.deps[pos] = deps
            for dep in deps:
                t.watch.setdefault(dep, set()).add(pos)
                if dep[0] not in _ENTRIES and dep not in t.seen:
                    t.seen[dep] = now(dep) if now is not None else None
    if base is not None and list(base.ifaces) == list(ifaces):
        table = dict(base.table)
    else:  # interfaces in another order (the project pass lists them by file): every list sorted again
        table, touched = {}, set(t.rows)
    for key in touched:
        sites = t.rows.get(key)
        if sites:
            table[key] = [sites[s] for s in sorted(sites, key=lambda s: (order[s[0]], s[1], s[2]))]
        else:
            t.rows.pop(key, None)
            table.pop(key, None)
    t.table = table
    return t


def _forget(t: CallTable, pos: Pos, touched: Set[str]) -> None:
    """Drop what an entry placed (before placing it again)."""
    placed = t.placed.pop(pos, None)
    for n, (key, _args, _kwargs) in enumerate(placed or ()):
        sites = t.rows.get(key)
        if sites is not None:
            sites.pop((pos[0], pos[1], n), None)
        touched.add(key)
    t.volatile.discard(pos)
    for dep in t.deps.pop(pos, ()):
        watchers = t.watch.get(dep)
        if watchers is not None:
            watchers.discard(pos)
