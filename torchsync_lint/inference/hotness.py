"""Which functions run every step, across all files of one run.

Roots: ``forward`` methods, ``__call__`` of nn.Module subclasses, training/evaluation step hooks
(Lightning, HF Trainer), functions called inside loops that call ``.backward()`` or ``.step()``,
and names the user lists as hot. Everything these call (resolved through imports, ``self.``
methods, base classes, ``self.<attr>.method()`` where the attribute's class is known, and
re-exports in ``__init__`` files) is hot too.

Functions that run once (``runs_once``): those called from the set-up code of a function holding a
training loop (before or after the loop: building, evaluating, plotting, reporting) or from a
set-up method (``__init__``...), when every caller the project knows calls them from such code,
from another function that runs once, or from a set-up method, and nothing hot reaches them. A
method called on a receiver of unknown class counts every call of its name as a caller. An export
or report entry point (a function that writes a file, ``open(path, "w")``, and that nothing in the
project calls; not a special method such as ``__call__``, whose calls name no function) runs once,
with what it calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Set

import libcst as cst

from torchsync_lint.inference import torch_facts
from torchsync_lint.inference.frequency import ONCE, PERIODIC, training_loops
from torchsync_lint.inference.index import COLD_METHODS, STEP_HOOKS, FileIndex, names_function
from torchsync_lint.syntax.walk import iter_children


@dataclass
class FileSummary:
    """Plain data (picklable) about one file's call graph."""

    module: str
    functions: Dict[str, Set[str]] = field(default_factory=dict)  # key -> callee keys
    roots: Set[str] = field(default_factory=set)
    loop_calls: Set[str] = field(default_factory=set)  # callees called inside training loops
    names: Dict[str, str] = field(default_factory=dict)  # key -> simple name
    class_bases: Dict[str, List[str]] = field(default_factory=dict)  # class key -> base keys
    attr_classes: Dict[str, Dict[str, str]] = field(default_factory=dict)  # class key -> attr -> class key
    aliases: Dict[str, str] = field(default_factory=dict)  # the module's import table (re-exports)
    # key of a function holding a training loop -> callees it calls outside every loop
    setup_calls: Dict[str, Set[str]] = field(default_factory=dict)
    # method names called on any receiver: key -> names called outside every loop of a function
    # holding a training loop (set-up); key -> every other name a function calls
    setup_methods: Dict[str, Set[str]] = field(default_factory=dict)
    other_methods: Dict[str, Set[str]] = field(default_factory=dict)  # in a step loop, or a loop after it
    plain_methods: Dict[str, Set[str]] = field(default_factory=dict)  # in a function with no training loop
    # the same, called in an epoch loop outside its step loop: once per epoch (periodic)
    epoch_calls: Dict[str, Set[str]] = field(default_factory=dict)
    epoch_methods: Dict[str, Set[str]] = field(default_factory=dict)
    # functions that open a file for writing (``open(path, "w")``): exports and reports
    writes: Set[str] = field(default_factory=set)


_BUILTIN_METHODS = frozenset(n for t in (list, dict, set, str, bytes, tuple) for n in dir(t))


# A by-name call (in a loop or not) in a function whose frequency is unknown: it may not even reach
# this method (any class's method of that name matches); it does not rule "once" out.
WEAK = "weak"


def _named(names) -> Set[str]:
    """Method names that may call a project method: not a Tensor method, not a builtin type's."""
    return {n for n in names if n not in _BUILTIN_METHODS and torch_facts.method(n) is None}


def _split_calls(s: FileSummary, key: str, f) -> Set[str]:
    """Calls of a function holding a training loop: outside every loop, or in a loop before the
    first training loop (set-up), in an epoch loop outside its step loop, or in another loop
    inside it (per epoch), in any other loop (as often as that loop runs). Returns the callees
    called only in an epoch loop's own code (no hot roots)."""
    loops = training_loops(f.node, f.hot_loops)
    setup, epoch, other = (set(), set()), (set(), set()), set()
    stepped: Set[str] = set()
    looped: Set[str] = set()
    trained = False  # call_loops is in source order: a training loop has been seen
    for callee, name, around in f.call_loops:
        kinds = [loops.get(lp) for lp in around]
        if True in kinds:  # in a step loop: every step (resolved calls are hot through the loop's calls)
            trained = True
            if name is not None:
                other.add(name)
            if callee is not None:
                stepped.add(callee)
            continue
        if not around or not trained and False not in kinds:
            target = setup
        elif False in kinds:  # in an epoch loop, or in another loop inside one
            target = epoch
            if callee is not None and None in kinds:
                looped.add(callee)  # an inner loop's callee stays a hot root, as before
        else:
            if name is not None:
                other.add(name)
            continue
        if callee is not None:
            target[0].add(callee)
        if name is not None:
            target[1].add(name)
    for table, values in ((s.setup_calls, setup[0]), (s.setup_methods, _named(setup[1])), (s.epoch_calls, epoch[0]),
                          (s.epoch_methods, _named(epoch[1])), (s.other_methods, _named(other))):
        if values:
            table[key] = values
    return epoch[0] - stepped - looped


_WRITE_MODES = frozenset("wx")


def _opens_for_writing(node: cst.CSTNode) -> bool:
    """The function (not a nested one) calls the builtin ``open`` with a mode that creates or
    overwrites a file (``"w"``, ``"wb"``, ``"x"``; not ``"a"``, which logs add to)."""
    stack: List[cst.CSTNode] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "open":
            mode = None
            for i, a in enumerate(n.args):
                if (a.keyword is not None and a.keyword.value == "mode") or (a.keyword is None and i == 1):
                    mode = a.value
            if isinstance(mode, cst.SimpleString) and _WRITE_MODES & set(mode.evaluated_value):
                return True
        if n is node or not isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(iter_children(n))
    return False


def summarise(index: FileIndex) -> FileSummary:
    s = FileSummary(index.module_name, aliases=dict(index.aliases.map))
    for key, f in index.functions.items():
        s.functions[key] = set(f.calls)
        s.names[key] = f.name
        # calls in an epoch loop outside its step loop run once per epoch: no hot roots
        epoch_only = _split_calls(s, key, f) if f.hot_loops else set()
        s.loop_calls.update(f.hot_calls - epoch_only)
        if not f.hot_loops:
            # by name, from a function whose frequency is unknown, in a loop or not: it may not
            # even reach the method of that name; it does not rule "once" out (WEAK)
            plain = _named(f.method_names | f.looped_method_names)
            if plain:
                s.plain_methods[key] = plain
        if f.is_method and (f.name == "forward" or (f.name == "__call__" and f.cls.is_module)):
            s.roots.add(key)
        if f.name in STEP_HOOKS:
            s.roots.add(key)
    s.loop_calls.update(index.module_hot_calls)
    opener = index.module_name + ".open"
    s.writes.update(key for key, f in index.functions.items() if opener in f.calls and _opens_for_writing(f.node))
    for cls in index.classes.values():
        bases = []
        for b in cls.bases:
            local = index.classes.get(b)
            bases.append(local.key if local is not None else b)
        s.class_bases[cls.key] = bases
        attrs = {}
        for attr, assigns in cls.attrs.items():
            for _func, expr in assigns:
                call_func = getattr(expr, "func", None)
                if call_func is not None:
                    k = index.callee_key(call_func)
                    if k is not None:
                        local = index.classes.get(k.split(".")[-1])
                        attrs[attr] = local.key if local is not None and k.endswith("." + local.name) else k
        if attrs:
            s.attr_classes[cls.key] = attrs
    return s


class CallGraph:
    def __init__(self, summaries: Iterable[FileSummary], hot_names: Iterable[str] = ()) -> None:
        self.functions: Dict[str, Set[str]] = {}
        self.roots: Set[str] = set()
        self.class_bases: Dict[str, List[str]] = {}
        self.attr_classes: Dict[str, Dict[str, str]] = {}
        self.aliases: Dict[str, Dict[str, str]] = {}
        self.setup_calls: Dict[str, Set[str]] = {}
        self.setup_methods: Dict[str, Set[str]] = {}
        self.other_methods: Dict[str, Set[str]] = {}
        self.plain_methods: Dict[str, Set[str]] = {}
        self.epoch_calls: Dict[str, Set[str]] = {}
        self.epoch_methods: Dict[str, Set[str]] = {}
        self.writes: Set[str] = set()
        self.names: Dict[str, str] = {}
        hot_names = set(hot_names)
        loop_calls: Set[str] = set()
        for s in summaries:
            self.functions.update(s.functions)
            self.roots.update(s.roots)
            loop_calls.update(s.loop_calls)
            self.class_bases.update(s.class_bases)
            self.attr_classes.update(s.attr_classes)
            self.aliases[s.module] = s.aliases
            self.setup_calls.update(s.setup_calls)
            self.setup_methods.update(s.setup_methods)
            self.other_methods.update(s.other_methods)
            self.plain_methods.update(s.plain_methods)
            self.epoch_calls.update(s.epoch_calls)
            self.epoch_methods.update(s.epoch_methods)
            self.writes.update(s.writes)
            self.names.update(s.names)
            for key, name in s.names.items():
                if names_function(key, name, hot_names):
                    self.roots.add(key)
        for k in loop_calls:
            r = self.resolve(k)
            if r is not None:
                self.roots.add(r)
        for name in hot_names:  # a public entry point named as users import it (re-exports)
            r = self.resolve(name) if "." in name else None
            if r is not None:
                self.roots.add(r)
        self._hot: Optional[Set[str]] = None
        self._once: Optional[Dict[str, str]] = None

    @classmethod
    def from_hot(cls, hot: Iterable[str], once: Optional[Dict[str, str]] = None) -> "CallGraph":
        """A graph that only answers ``is_hot`` and ``runs_once``, from what a whole run worked out
        (``hot()``, ``once_map()``)."""
        graph = cls(())
        graph._hot = set(hot)
        graph._once = dict(once or {})
        return graph

    def once_map(self) -> Dict[str, str]:
        """Every function ``runs_once`` answers for: key -> ``once`` / ``periodic``."""
        if self._once is None:
            self._once = self._find_once()
        return self._once

    def resolve(self, key: str, depth: int = 0) -> Optional[str]:
        if key in self.functions:
            return key
        if depth > 8:
            return None
        if key.startswith("@attr:"):
            _, cls_key, attr, meth = key.split(":", 3)
            for c in [cls_key] + self.class_bases.get(cls_key, []):
                target = self.attr_classes.get(c, {}).get(attr)
                if target is not None:
                    return self.resolve(f"{target}.{meth}", depth + 1)
            return None
        cls_key, _, meth = key.rpartition(".")
        for base in self.class_bases.get(cls_key, []):
            r = self.resolve(f"{base}.{meth}", depth + 1)
            if r is not None:
                return r
        parts = key.split(".")
        for i in range(len(parts) - 1, 0, -1):
            table = self.aliases.get(".".join(parts[:i]))
            if table and parts[i] in table:
                return self.resolve(".".join([table[parts[i]]] + parts[i + 1:]), depth + 1)
        return None

    def hot(self) -> Set[str]:
        if self._hot is None:
            seen: Set[str] = set()
            todo = list(self.roots)
            while todo:
                k = todo.pop()
                if k in seen:
                    continue
                seen.add(k)
                for callee in self.functions.get(k, ()):
                    r = self.resolve(callee)
                    if r is not None and r not in seen:
                        todo.append(r)
            self._hot = seen
        return self._hot

    def is_hot(self, key: Optional[str]) -> bool:
        if key is None:
            return False
        hot = self.hot()
        while True:
            if key in hot:
                return True
            if ".<locals>." not in key:
                return False
            key = key.rsplit(".<locals>.", 1)[0]  # a closure defined in hot code runs there

    def runs_once(self, key: Optional[str]) -> Optional[str]:
        """``once`` for a function called only from set-up code around training loops (or from
        what runs once itself), ``periodic`` when some of those calls sit in an epoch loop; None
        otherwise."""
        if key is None:
            return None
        if self._once is None:
            self._once = self._find_once()
        return self._once.get(key)

    def _attr_resolved(self, caller: str) -> Set[str]:
        """Method names ``caller`` calls on an attribute whose class the graph knows
        (``@attr:`` callees that resolve)."""
        out = set()
        for c in self.functions.get(caller, ()):
            if c.startswith("@attr:") and self.resolve(c) is not None:
                out.add(c.rsplit(":", 1)[1])
        return out

    def _find_once(self) -> Dict[str, str]:
        """Fixpoint over the call graph. Edges: resolved calls, and calls of a method by its name
        on a receiver of unknown class (``self.scheduler.set_timesteps(...)``, ``s.set_timesteps``)
        to every project method of that name. A function runs once when some caller calls it from
        set-up code, from a set-up method (``__init__``...) or runs once itself, and every other
        caller does too, or (by name only) calls it from a function with no training loop that is
        not known to run every step; periodically when one of those is an epoch loop's call (for a
        caller by name only: when no caller calls it once). A by-name call on an attribute whose
        class is known is that class's method only."""
        hot = self.hot()
        callers: Dict[str, List[tuple]] = {}  # callee -> [(caller, ONCE / PERIODIC / None)]
        for caller, callees in self.functions.items():
            setup = self.setup_calls.get(caller, ()) if caller not in hot else ()
            epoch = self.epoch_calls.get(caller, ()) if caller not in hot else ()
            for c in callees:
                r = self.resolve(c)
                if r is not None and r != caller:
                    callers.setdefault(r, []).append((caller, ONCE if c in setup else PERIODIC if c in epoch else None))
        by_name: Dict[str, List[str]] = {}  # method name -> project methods of that name
        for key, name in self.names.items():
            if not name.startswith("__"):
                by_name.setdefault(name, []).append(key)
        name_callers: Dict[str, List[tuple]] = {}
        for table, kind in ((self.setup_methods, ONCE), (self.epoch_methods, PERIODIC), (self.other_methods, None),
                            (self.plain_methods, WEAK)):
            for caller, names in table.items():
                # `self.sched.set_timesteps()` with the attribute's class known: that class's method
                # is the callee (a resolved edge), not every method of the name
                names = names - self._attr_resolved(caller)
                for n in names & by_name.keys():
                    name_callers.setdefault(n, []).append((caller, kind if caller not in hot else None))

        def cold(key: str) -> bool:
            return self.names.get(key) in COLD_METHODS

        todo: Set[str] = set()
        for table in (self.setup_calls, self.epoch_calls):
            for caller, calls in table.items():
                if caller not in hot:
                    todo.update(r for r in (self.resolve(c) for c in calls) if r is not None)
        for table in (self.setup_methods, self.epoch_methods):
            for caller, names in table.items():
                if caller not in hot:
                    for n in names:
                        todo.update(by_name.get(n, ()))
        for key, callees in self.functions.items():
            if cold(key) and key not in hot:  # what set-up methods call
                todo.update(r for r in (self.resolve(c) for c in callees) if r is not None)
        once: Dict[str, str] = {}
        # an export or report entry point: a function that writes a file and that nothing in the
        # project calls (by name or resolved) runs when a user saves a result, not every step
        # (not a special method: `evaluator(model)` calls `__call__` where no call names it)
        for key in self.writes:
            name = self.names.get(key, "")
            if (key in self.functions and key not in hot and not callers.get(key) and not cold(key)
                    and not name.startswith("__") and not name_callers.get(name)):
                once[key] = ONCE
                todo.update(r for r in (self.resolve(c) for c in self.functions.get(key, ())) if r is not None)
        changed = True
        while changed:
            changed = False
            for g in sorted(todo - once.keys()):
                if g in hot or cold(g):
                    continue
                resolved = callers.get(g, [])
                edges = resolved + name_callers.get(self.names.get(g, ""), [])
                kinds = [(kind if kind != WEAK else None) or once.get(caller) or (ONCE if cold(caller) else None)
                         or (WEAK if kind == WEAK else None) for caller, kind in edges]
                if all(kinds) and (ONCE in kinds or PERIODIC in kinds):
                    # a caller by name only may not reach this method: its per-epoch call makes the
                    # method periodic only when no caller calls it once
                    periodic = PERIODIC in kinds[:len(resolved)] or ONCE not in kinds
                    once[g] = PERIODIC if periodic else ONCE
                    changed = True
                    todo.update(r for r in (self.resolve(c) for c in self.functions.get(g, ())) if r is not None)
                    for n in self.other_methods.get(g, set()) | self.plain_methods.get(g, set()):
                        todo.update(by_name.get(n, ()))
        return once
