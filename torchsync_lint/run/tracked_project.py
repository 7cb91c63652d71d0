"""A ``Project`` that records what each file check asked of it, so a cached report is keyed on
exactly the interface entries it read (``cached_check``), not on a digest of every interface.

A dependency is one entry a check looked up, found or not:

- ``("f", key)``: a function's data (what it returns), ``("c", key)``: a class's data (bases,
  methods, attributes);
- ``("m", module)``: a module's import table, module-level values, star imports and ``__all__``
  (what name lookups read); ``("x", module)``: what ``from module import *`` binds (``exported``);
  ``("s", module, name)``: what the module's own star imports bind ``name`` to (``_starred``);
- ``("k", key)``: the call sites other files have into a function (``passes_informative``);
  ``("kp", key, name, pos)``: the join of what they pass one parameter (``Project.param``, its
  answer, not the call sites: callers that pass the same leave a check as it was); ``("kt", ...)``
  likewise, the join of the tensors some of them pass; ``("kc", ...)``: whether every one of them
  passes a host tensor (``param_on_host``);
  ``("kh", key)``: whether a file that is not a test calls it (``has_callers``); ``("kq", key, name,
  pos)``: whether such files call it and all leave the parameter out (``param_left_out``);
- ``("l",)``: the list of modules (``Project.modules``);
- ``("g", flag)``: a project-wide flag (``FLAGS``: some file moves the default device, turns
  distribution validation off).

``digest(dep)`` is what that entry is in this project. A report checked with the project is
valid for another project whose entries have the same digests for every recorded dependency:
the check asked nothing else, so it would take the same path and give the same answers.

The base class memoises answers (``resolve``, ``param``, ``is_module``, ``is_tensor_class``,
``object_informative``; ``locate`` and ``mro`` are replayed with their entries; ``exported`` is
one entry, ``("x", module)``)
across the files a worker checks; each memoised answer keeps the dependencies met while it was
computed, and a later file that reuses it records them too. Inside a cycle (an answer asked for
while it is being computed) the answers computed above it take every dependency of the cycle's
head when it completes.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from typing import Callable, Dict, List, Optional, Set, Tuple

from torchsync_lint.inference.project import Project, test_module
from torchsync_lint.run import call_table
from torchsync_lint.inference.values import Value, to_data

Dep = Tuple[str, ...]
_UNSHARED = object()  # what ``_entry`` says of a lookup that is not a function, class or module
# ``Project``'s plain attributes that answer for the whole project (tests check this is all)
FLAGS = ("sets_default_device", "validation_off", "own_log_prob")
# the lookups a callers' table entry may wait on (``call_table``): entries, and the names a module's
# star imports bind (compared as data from one project to the next)
_PLACING = ("f", "c", "m", "s")


def _flag(name: str) -> property:
    """A project-wide flag whose every read is noted as a dependency (``("g", name)``)."""
    def get(self) -> bool:
        self._note(("g", name))
        return self._flags[name]

    def put(self, value: bool) -> None:
        self._flags[name] = value
    return property(get, put)


def _digest(data: object) -> str:
    if data is None:
        return "-"
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()[:20]


class _Recording(dict):
    """Function or class entries: every lookup (found or not) is a dependency."""

    __slots__ = ("_note", "_kind")

    def __init__(self, note: Callable[[Dep], None], kind: str) -> None:
        super().__init__()
        self._note = note
        self._kind = kind

    def __contains__(self, key) -> bool:  # type: ignore[override]
        self._note((self._kind, key))
        return dict.__contains__(self, key)

    def get(self, key, default=None):  # type: ignore[override]
        self._note((self._kind, key))
        return dict.get(self, key, default)

    def __getitem__(self, key):
        self._note((self._kind, key))
        return dict.__getitem__(self, key)


class Waves:
    """What the growing projects of one run share: the latest project (its key tables are copied,
    not built again) and its callers' table (the next project's is built from it: ``call_table``)."""

    def __init__(self) -> None:
        self.last: Optional["TrackedProject"] = None
        self.table: Optional[call_table.CallTable] = None  # the latest project's callers' table


class TrackedProject(Project):
    def __init__(self, interfaces: Dict[str, dict], waves: Optional[Waves] = None) -> None:
        self._waves = waves
        self._table: Optional[call_table.CallTable] = None
        self._probe: Optional[Dict[Dep, object]] = None
        self._frames: List[Set[Dep]] = []
        self._cycles: List[List[Set[Dep]]] = []
        self._open: Dict[tuple, int] = {}
        self._dep_memo: Dict[tuple, Set[Dep]] = {}
        self._digests: Dict[Dep, str] = {}
        self._quiet = 0
        self._flags: Dict[str, bool] = {}
        self._pure: Dict[tuple, Tuple[object, List[Dep]]] = {}  # ``_replayed``: answer, entries read
        self._capture: Optional[List[Dep]] = None
        self._exporting: Set[str] = set()  # star-import modules being expanded (``exported``)
        self._stars_memo: Dict[str, Dict[str, str]] = {}
        self._stars_merged: Dict[str, Dict[str, str]] = {}  # ``_star_names``
        super().__init__(interfaces, tables=waves.last if waves is not None else None)
        if waves is not None:
            waves.last = self
        functions, classes = _Recording(self._note, "f"), _Recording(self._note, "c")
        dict.update(functions, self._functions)
        dict.update(classes, self._classes)
        self._functions, self._classes = functions, classes  # type: ignore[assignment]

    # -- recording --------------------------------------------------------------------------------
    def _note(self, dep: Dep) -> None:
        if self._capture is not None:
            self._capture.append(dep)
        if self._probe is not None and dep not in self._probe:
            self._probe[dep] = self._entry(dep)
        if self._frames and not self._quiet:
            self._frames[-1].add(dep)

    def begin(self) -> None:
        """Start recording one file check."""
        self._frames.append(set())
        self._cycles.append([])

    def end(self) -> Set[Dep]:
        """The dependencies of the file check ``begin`` started."""
        self._cycles.pop()
        return self._frames.pop()

    def _memo(self, mk: tuple, done: Callable[[], bool], compute: Callable[[], object]):
        stored = self._dep_memo.get(mk)
        if stored is not None:
            if self._frames:
                self._frames[-1].update(stored)
            return compute()  # the base class answers from its memo
        at = self._open.get(mk)
        if at is not None:  # a cycle: what is computed above ``mk`` depends on all of it
            self._cycles[at].extend(self._frames[at + 1:])
            return compute()
        frame: Set[Dep] = set()
        self._frames.append(frame)
        self._cycles.append([])
        self._open[mk] = len(self._frames) - 1
        try:
            out = compute()
        finally:
            self._frames.pop()
            inside = self._cycles.pop()
            del self._open[mk]
        for s in inside:
            s.update(frame)
        if done():
            self._dep_memo[mk] = frame
        if self._frames:
            self._frames[-1].update(frame)
        return out

    def _replayed(self, mk: tuple, compute: Callable[[], object]):
        """``compute()`` for a question whose answer depends only on the interfaces (no memo of
        the base class inside, no loader: a ``TrackedProject`` holds them all from the start),
        computed once; a later ask records the entries the first one read, as computing it
        again would (the check's entries, ``call_target``'s probes)."""
        got = self._pure.get(mk)
        if got is not None:
            for dep in got[1]:
                self._note(dep)
            return got[0]
        outer, self._capture = self._capture, []
        try:
            out = compute()
            read = self._capture
        finally:
            self._capture = outer
        if outer is not None:
            outer.extend(read)
        self._pure[mk] = (out, read)
        return out

    # -- the base class's questions, recorded ----------------------------------------------------
    def mro(self, cls_key: str) -> List[str]:
        return self._replayed(("mro", cls_key), lambda: Project.mro(self, cls_key))  # type: ignore[return-value]

    def locate(self, q: str, depth: int = 0) -> Optional[Tuple[str, str]]:
        if depth:
            return Project.locate(self, q, depth)
        return self._replayed(("locate", q), lambda: Project.locate(self, q))  # type: ignore[return-value]

    # project-wide flags (``Project`` sets them from every interface): each read is a dependency
    sets_default_device = _flag("sets_default_device")  # type: ignore[assignment]
    validation_off = _flag("validation_off")  # type: ignore[assignment]
    own_log_prob = _flag("own_log_prob")  # type: ignore[assignment]

    def module(self, name: str) -> Optional[dict]:
        self._note(("m", name))
        return super().module(name)

    def resolve(self, ref: tuple) -> Value:
        return self._memo(("r", ref), lambda: ref in self._resolved, lambda: Project.resolve(self, ref))

    def is_module(self, cls_key: str) -> bool:
        return self._memo(("i", cls_key), lambda: cls_key in self._is_module,
                          lambda: Project.is_module(self, cls_key))

    def is_tensor_class(self, cls_key: str) -> bool:
        return self._memo(("t", cls_key), lambda: cls_key in self._is_tensor,
                          lambda: Project.is_tensor_class(self, cls_key))

    def exported(self, module: str, depth: int = 0) -> Dict[str, str]:
        # the answer is the entry (``("x", module)``, its digest the names the star chain binds),
        # not the tables of the chain: a star chain of a large package reads hundreds of them
        self._note(("x", module))
        got = self._stars_memo.get(module)
        if got is not None:
            return got
        if module in self._exporting:
            return {}  # a star-import cycle binds nothing more
        self._exporting.add(module)
        probe, capture, self._probe, self._capture = self._probe, self._capture, None, None
        self.begin()
        try:
            got = Project._exports_of(self, module, depth) or {}
        finally:
            self.end()
            self._probe, self._capture = probe, capture
            self._exporting.discard(module)
        self._stars_memo[module] = got
        return got

    def _starred(self, iface: dict, name: str) -> Optional[str]:
        # one entry, ``("s", module, name)``: the answer, what the module's star imports bind
        # ``name`` to (the last one binding it wins, as ``Project._starred`` takes them), not one
        # ``("x", star)`` per star import: ``transformers.models`` star-imports 515 packages, and
        # every name lookup that missed its table recorded (and ``locate``'s replays noted again)
        # all of them, and found another entry wherever any package the chain reaches came later
        module = iface.get("module")
        if module is None or self._ifaces.get(module) is not iface:
            return Project._starred(self, iface, name)
        self._note(("s", module, name))
        return self._star_names(module).get(name)

    def _star_names(self, module: str) -> Dict[str, str]:
        got = self._stars_merged.get(module)
        if got is None:
            got = {}
            probe, capture, self._probe, self._capture = self._probe, self._capture, None, None
            self.begin()
            try:
                for star in self._ifaces[module].get("stars", ()):
                    got.update(self.exported(star))
            finally:
                self.end()
                self._probe, self._capture = probe, capture
            self._stars_merged[module] = got
        return got

    def object_informative(self, cls_key: Optional[str], informative: Callable[[Value], bool]) -> bool:
        return self._memo(("o", cls_key), lambda: cls_key in self._object_informative,
                          lambda: Project.object_informative(self, cls_key, informative))

    def param(self, func_key: str, name: str, pos: Optional[int], tensors_only: bool = False) -> Value:
        # the answer is the entry (``("kp", ...)``), not the call sites it joins: a check is the same
        # where other files' calls changed but pass this parameter the same (callers added later)
        self._note(("kt" if tensors_only else "kp", func_key, name, pos))
        k = (func_key, name, pos, tensors_only)
        return self._sunk(lambda: self._memo(("p",) + k, lambda: k in self._params,
                                             lambda: Project.param(self, func_key, name, pos, tensors_only)))

    def param_on_host(self, func_key: str, name: str, pos: Optional[int]) -> bool:
        # the answer is one bit: callers that pass GPU or unknown tensors leave a check as it was
        self._note(("kc", func_key, name, pos))
        return self._sunk(lambda: Project.param_on_host(self, func_key, name, pos))

    def param_left_out(self, func_key: str, name: str, pos: Optional[int]) -> bool:
        # one bit: callers added that leave the parameter out too leave a check as it was
        self._note(("kq", func_key, name, pos))
        return self._sunk(lambda: Project.param_left_out(self, func_key, name, pos))

    def _sunk(self, compute: Callable[[], object]):
        """``compute()`` with what it reads recorded (the memoised answers inside it keep their
        entries) but kept out of the check's entries: the check records the answer itself."""
        self.begin()
        try:
            return compute()
        finally:
            self.end()

    def has_callers(self, key: str) -> bool:
        self._note(("kh", key))
        return super().has_callers(key)

    def passes_informative(self, key: str, informative: Callable[[Value], bool]) -> bool:
        self._note(("k", key))
        return super().passes_informative(key, informative)

    def modules(self):
        self._note(("l",))
        return super().modules()

    def _call_index(self):
        if self._calls is None:
            self._quiet += 1  # which call reaches which function: the ("k", key) entries say
            try:
                if self._waves is None:
                    return super()._call_index()
                given = dict(itertools.islice(self._ifaces.items(), self._given))
                table = call_table.build(given, self._waves.table, test_module, self._place, self.data)
                self._waves.table = table
                self._table = table
                self._calls = table.table
            finally:
                self._quiet -= 1
        return self._calls

    def _place(self, entry: list, test: bool):
        """``entry_calls`` with the lookups its placing made (``call_table``); None for an entry
        whose placing read more than functions, classes and modules (placed again for every
        project)."""
        if entry[0] == "@name":
            # the project's methods of that name (``by_name``): the classes defining one say
            return self.entry_calls(entry, test), (("d", entry[1]),)
        if entry[0] == "@method":
            return self._place_resolving(entry, test)
        placed, deps = self._probed(entry, test)
        if any(d[0] not in _PLACING for d in deps):
            return placed, None
        if entry[0] == "@self":
            deps += (("d", entry[2]),)  # the overrides: classes defining a method of that name
        return placed, deps

    def _probed(self, entry: list, test: bool):
        """``entry_calls`` and every lookup its placing made."""
        outer, self._probe = self._probe, {}
        try:
            return self.entry_calls(entry, test), tuple(self._probe)
        finally:
            self._probe = outer

    def _place_resolving(self, entry: list, test: bool):
        """An ``obj.method(...)`` entry: its receiver is resolved (``deep``), and the answers the
        project memoised hide the lookups they made. Placed here without them (nor the cycle
        guards of a question in progress), so every lookup is seen, and the placing, a function
        of those lookups alone, is kept until one of them finds other data; receivers resolved
        in a cycle are the same for every project that holds the same entries."""
        saved = (self._resolved, self._is_module, self._is_tensor, self._object_informative, self._dep_memo,
                 self._busy, self._open, self._frames, self._cycles)
        self._resolved, self._is_module, self._is_tensor, self._object_informative, self._dep_memo = {}, {}, {}, {}, {}
        self._busy, self._open, self._frames, self._cycles = set(), {}, [], []
        try:
            placed, deps = self._probed(entry, test)
        finally:
            (self._resolved, self._is_module, self._is_tensor, self._object_informative, self._dep_memo,
             self._busy, self._open, self._frames, self._cycles) = saved
        if any(d[0] not in _PLACING for d in deps):
            return placed, None
        # a receiver of unknown kind is placed by the method's name (``by_name``)
        return placed, deps + (("d", entry[2]),)

    def calls_by_module(self) -> Dict[str, list]:
        """callee key -> [[calling module, args, kwargs], ...] over every interface, in the order
        of ``calls_from`` over the interfaces (``project_index``)."""
        if self._waves is not None:
            self._call_index()
        if self._table is None or self._table.spent:
            out: Dict[str, list] = {}
            for module, iface in itertools.islice(self._ifaces.items(), self._given):
                for key, args, kwargs in self.calls_from(iface):
                    out.setdefault(key, []).append([module, args, kwargs])
            return out
        out = {}
        for module, placed in self._table.sites():
            for key, args, kwargs in placed:
                out.setdefault(key, []).append([module, args, kwargs])
        return out

    def _entry(self, dep: Dep) -> object:
        """The object an ``f``/``c``/``m`` lookup finds here (None when absent)."""
        kind = dep[0]
        if kind == "f":
            entry = dict.get(self._functions, dep[1])
            return entry[1] if entry is not None else None
        if kind == "c":
            entry = dict.get(self._classes, dep[1])
            return entry[1] if entry is not None else None
        if kind == "m":
            return self._ifaces.get(dep[1])
        return _UNSHARED

    # -- what an entry is in this project --------------------------------------------------------
    def digest(self, dep: Dep) -> str:
        got = self._digests.get(dep)
        if got is not None:
            return got
        got = self._digests[dep] = _digest(self.data(dep))
        return got

    def data(self, dep: Dep) -> object:
        """What an entry is in this project, as data (``digest`` hashes it): equal data in two
        projects, equal answers to a check that read it."""
        if dep[0] in ("kp", "kt"):
            return to_data(self._sunk(lambda: TrackedProject.param(self, dep[1], dep[2], dep[3], dep[0] == "kt")))
        if dep[0] == "kc":
            return self._sunk(lambda: Project.param_on_host(self, dep[1], dep[2], dep[3]))
        if dep[0] == "kq":
            return self._sunk(lambda: Project.param_left_out(self, dep[1], dep[2], dep[3]))
        self._quiet += 1
        try:
            kind = dep[0]
            if kind in ("f", "c"):
                return self._entry(dep)
            if kind == "m":
                iface = self._ifaces.get(dep[1])
                return None if iface is None else [iface.get("values", {}), iface.get("aliases", {}),
                                                   iface.get("stars", []), iface.get("all")]
            if kind == "x":
                return self.exported(dep[1])
            if kind == "s":  # with the module's ("m") entry, which lists its star imports
                return self._star_names(dep[1]).get(dep[2]) if self._ifaces.get(dep[1]) is not None else None
            if kind == "k":
                return self._call_index().get(dep[1])
            if kind == "kh":
                return Project.has_callers(self, dep[1])
            if kind == "l":
                return sorted(m for m, i in self._ifaces.items() if i is not None)
            if kind == "g":
                return bool(self._flags.get(dep[1]))
            return ["unknown dependency", list(dep)]
        finally:
            self._quiet -= 1

    def matches(self, deps: List[list]) -> bool:
        """Every recorded entry is the same in this project."""
        try:
            return all(self.digest(tuple(d[:-1])) == d[-1] for d in deps)
        except (TypeError, IndexError):
            return False

    def record(self, deps: Set[Dep]) -> List[list]:
        """Recorded dependencies with their digests here, as JSON data."""
        return [list(d) + [self.digest(d)] for d in sorted(deps, key=repr)]
