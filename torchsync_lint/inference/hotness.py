"""Which functions run every step, across all files of one run.

Roots: ``forward`` methods, ``__call__`` of nn.Module subclasses, training/evaluation step hooks
(Lightning, HF Trainer), functions called inside loops that call ``.backward()`` or ``.step()``,
and names the user lists as hot. Everything these call (resolved through imports, ``self.``
methods, base classes, ``self.<attr>.method()`` where the attribute's class is known, and
re-exports in ``__init__`` files) is hot too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Set

from torchsync_lint.inference.index import STEP_HOOKS, FileIndex, names_function


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


def summarise(index: FileIndex) -> FileSummary:
    s = FileSummary(index.module_name, aliases=dict(index.aliases.map))
    for key, f in index.functions.items():
        s.functions[key] = set(f.calls)
        s.names[key] = f.name
        s.loop_calls.update(f.hot_calls)
        if f.is_method and (f.name == "forward" or (f.name == "__call__" and f.cls.is_module)):
            s.roots.add(key)
        if f.name in STEP_HOOKS:
            s.roots.add(key)
    s.loop_calls.update(index.module_hot_calls)
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
        hot_names = set(hot_names)
        loop_calls: Set[str] = set()
        for s in summaries:
            self.functions.update(s.functions)
            self.roots.update(s.roots)
            loop_calls.update(s.loop_calls)
            self.class_bases.update(s.class_bases)
            self.attr_classes.update(s.attr_classes)
            self.aliases[s.module] = s.aliases
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

    @classmethod
    def from_hot(cls, hot: Iterable[str]) -> "CallGraph":
        """A graph that only answers ``is_hot``, from a hot set a whole run worked out."""
        graph = cls(())
        graph._hot = set(hot)
        return graph

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
