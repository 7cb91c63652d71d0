"""The call graph across files: each file's ``FileSummary`` (plain data, kept in the cache as
JSON) and the ``CallGraph`` that joins them to find hot functions and functions that run once.

``hotness.summarise`` builds a file's summary from its index (a LibCST walk); this module reads no
syntax, so a report answered from the cache (``run.ondemand``, the flake8 plugin, a warm CLI run)
labels its findings without importing a parser.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Set

from torchsync_lint.inference.labels import COLD_METHODS, ONCE, PERIODIC, names_function


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
    # key -> {callee / method name: ``once`` / ``periodic``} for calls made only in branches of
    # that class (``if batch_idx < 10: dm.plot(x)``; ``guarded``)
    guarded_calls: Dict[str, Dict[str, str]] = field(default_factory=dict)
    guarded_methods: Dict[str, Dict[str, str]] = field(default_factory=dict)


# A by-name call (in a loop or not) in a function whose frequency is unknown: it may not even reach
# this method (any class's method of that name matches); it does not rule "once" out.
WEAK = "weak"


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
        self.guarded_calls: Dict[str, Dict[str, str]] = {}
        self.guarded_methods: Dict[str, Dict[str, str]] = {}
        self.names: Dict[str, str] = {}
        self._resolved: Dict[str, Optional[str]] = {}
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
            self.guarded_calls.update(s.guarded_calls)
            self.guarded_methods.update(s.guarded_methods)
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
        if depth:
            return self._resolve(key, depth)
        # the graph does not change once built: each name is followed once (the hot-path walk and
        # the run-once fixpoint ask for the same callees many times)
        try:
            return self._resolved[key]
        except KeyError:
            out = self._resolved[key] = self._resolve(key, 0)
            return out

    def _resolve(self, key: str, depth: int) -> Optional[str]:
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
                target = ".".join([table[parts[i]]] + parts[i + 1:])
                if target == key:
                    # a package naming its own submodule (`from torchvision import datasets` in
                    # torchvision's `__init__`): following it asks this key again, one level deeper,
                    # where the bases (searched in full above, with more depth left) find nothing
                    # again and the same table leads here again, down to the depth limit
                    return None
                return self.resolve(target, depth + 1)
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

    def overrides(self) -> Dict[str, Set[str]]:
        """method key -> the methods that override it in subclasses, at any depth: a call that
        reaches a method (``self.m()`` in a base class) runs whichever override the instance's
        class has."""
        direct: Dict[str, Set[str]] = {}
        for key, name in self.names.items():
            cls = key[: -len(name) - 1] if key.endswith("." + name) else None
            for base in self.class_bases.get(cls, ()) if cls else ():
                r = self.resolve(f"{base}.{name}")
                if r is not None and r != key:
                    direct.setdefault(r, set()).add(key)
        out: Dict[str, Set[str]] = {}
        for key in direct:
            seen: Set[str] = set()
            todo = list(direct[key])
            while todo:
                k = todo.pop()
                if k not in seen and k != key:
                    seen.add(k)
                    todo.extend(direct.get(k, ()))
            out[key] = seen
        return out

    def _find_once(self) -> Dict[str, str]:
        """Fixpoint over the call graph. Edges: resolved calls, and calls of a method by its name
        on a receiver of unknown class (``self.scheduler.set_timesteps(...)``, ``s.set_timesteps``)
        to every project method of that name. A function runs once when some caller calls it from
        set-up code, from a set-up method (``__init__``...) or runs once itself, and every other
        caller does too, or (by name only) calls it from a function with no training loop that is
        not known to run every step; periodically when one of those is an epoch loop's call (for a
        caller by name only: when no caller calls it once). A by-name call on an attribute whose
        class is known is that class's method only. A call that reaches a method reaches its
        overrides in subclasses too (``self._update(b)`` in a base class), with the same kind. A
        private function that nothing calls (a deprecated ``_encode_prompt`` wrapper) does not rule
        "once" out for what it calls."""
        hot = self.hot()
        overriding = self.overrides()
        callers: Dict[str, List[tuple]] = {}  # callee -> [(caller, ONCE / PERIODIC / None)]
        for caller, callees in self.functions.items():
            setup = self.setup_calls.get(caller, ()) if caller not in hot else ()
            epoch = self.epoch_calls.get(caller, ()) if caller not in hot else ()
            guarded = self.guarded_calls.get(caller, {})
            for c in callees:
                r = self.resolve(c)
                if r is not None and r != caller:
                    edge = (caller, ONCE if c in setup else PERIODIC if c in epoch else guarded.get(c))
                    callers.setdefault(r, []).append(edge)
                    for o in overriding.get(r, ()):  # the call dispatches to a subclass's override
                        if o != caller:
                            callers.setdefault(o, []).append(edge)
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
                guarded = self.guarded_methods.get(caller, {})
                for n in names & by_name.keys():
                    k = kind if caller not in hot else None
                    if k in (None, WEAK) and n in guarded:
                        k = guarded[n]  # called in a once / periodic branch only
                    name_callers.setdefault(n, []).append((caller, k))

        def cold(key: str) -> bool:
            return self.names.get(key) in COLD_METHODS

        def dead(key: str) -> bool:
            """A private function (``_encode_prompt``, not a special method, not a closure) that
            nothing in the project calls, by name or resolved: a deprecated or unused helper, whose
            calls do not rule "once" out (WEAK)."""
            name = self.names.get(key, "")
            return (name.startswith("_") and not name.startswith("__") and ".<locals>." not in key
                    and key not in hot and not callers.get(key) and not name_callers.get(name))

        def reached(calls) -> Set[str]:
            """The functions these calls can run: each resolved callee and its overrides."""
            out: Set[str] = set()
            for c in calls:
                r = self.resolve(c)
                if r is not None:
                    out.add(r)
                    out.update(overriding.get(r, ()))
            return out

        todo: Set[str] = set()
        for table in (self.setup_calls, self.epoch_calls):
            for caller, calls in table.items():
                if caller not in hot:
                    todo.update(reached(calls))
        for table in (self.setup_methods, self.epoch_methods):
            for caller, names in table.items():
                if caller not in hot:
                    for n in names:
                        todo.update(by_name.get(n, ()))
        for caller, guarded in self.guarded_calls.items():  # what once / periodic branches call
            todo.update(reached(guarded))
        for guarded in self.guarded_methods.values():
            for n in guarded:
                todo.update(by_name.get(n, ()))
        for key, callees in self.functions.items():
            if cold(key) and key not in hot:  # what set-up methods call
                todo.update(reached(callees))
        once: Dict[str, str] = {}
        # an export or report entry point: a function that writes a file and that nothing in the
        # project calls (by name or resolved) runs when a user saves a result, not every step
        # (not a special method: `evaluator(model)` calls `__call__` where no call names it)
        for key in self.writes:
            name = self.names.get(key, "")
            if (key in self.functions and key not in hot and not callers.get(key) and not cold(key)
                    and not name.startswith("__") and not name_callers.get(name)):
                once[key] = ONCE
                todo.update(reached(self.functions.get(key, ())))
        changed = True
        while changed:
            changed = False
            for g in sorted(todo - once.keys()):
                if g in hot or cold(g):
                    continue
                resolved = callers.get(g, [])
                edges = resolved + name_callers.get(self.names.get(g, ""), [])
                kinds = [(kind if kind != WEAK else None) or once.get(caller) or (ONCE if cold(caller) else None)
                         or (WEAK if kind == WEAK or dead(caller) else None) for caller, kind in edges]
                if all(kinds) and (ONCE in kinds or PERIODIC in kinds):
                    # a caller by name only may not reach this method: its per-epoch call makes the
                    # method periodic only when no caller calls it once
                    periodic = PERIODIC in kinds[:len(resolved)] or ONCE not in kinds
                    once[g] = PERIODIC if periodic else ONCE
                    changed = True
                    todo.update(reached(self.functions.get(g, ())))
                    for n in self.other_methods.get(g, set()) | self.plain_methods.get(g, set()):
                        todo.update(by_name.get(n, ()))
        return once


def summary_to_data(s: FileSummary) -> dict:
    return {
        "module": s.module,
        "functions": {k: sorted(v) for k, v in s.functions.items()},
        "roots": sorted(s.roots),
        "loop_calls": sorted(s.loop_calls),
        "names": s.names,
        "class_bases": s.class_bases,
        "attr_classes": s.attr_classes,
        "aliases": s.aliases,
        "setup_calls": {k: sorted(v) for k, v in s.setup_calls.items()},
        "setup_methods": {k: sorted(v) for k, v in s.setup_methods.items()},
        "other_methods": {k: sorted(v) for k, v in s.other_methods.items()},
        "plain_methods": {k: sorted(v) for k, v in s.plain_methods.items()},
        "epoch_calls": {k: sorted(v) for k, v in s.epoch_calls.items()},
        "epoch_methods": {k: sorted(v) for k, v in s.epoch_methods.items()},
        "writes": sorted(s.writes),
        "guarded_calls": s.guarded_calls,
        "guarded_methods": s.guarded_methods,
    }


def summary_from_data(d: dict) -> FileSummary:
    return FileSummary(
        module=d["module"],
        functions={k: set(v) for k, v in d["functions"].items()},
        roots=set(d["roots"]),
        loop_calls=set(d["loop_calls"]),
        names=dict(d["names"]),
        class_bases={k: list(v) for k, v in d["class_bases"].items()},
        attr_classes={k: dict(v) for k, v in d["attr_classes"].items()},
        aliases=dict(d["aliases"]),
        setup_calls={k: set(v) for k, v in d.get("setup_calls", {}).items()},
        setup_methods={k: set(v) for k, v in d.get("setup_methods", {}).items()},
        other_methods={k: set(v) for k, v in d.get("other_methods", {}).items()},
        plain_methods={k: set(v) for k, v in d.get("plain_methods", {}).items()},
        epoch_calls={k: set(v) for k, v in d.get("epoch_calls", {}).items()},
        epoch_methods={k: set(v) for k, v in d.get("epoch_methods", {}).items()},
        writes=set(d.get("writes", ())),
        guarded_calls={k: dict(v) for k, v in d.get("guarded_calls", {}).items()},
        guarded_methods={k: dict(v) for k, v in d.get("guarded_methods", {}).items()},
    )
