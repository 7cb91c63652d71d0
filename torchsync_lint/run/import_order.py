"""The order to check a project's files in: the modules a file imports before the file.

Checked in this order, a file meets the interfaces of what it imports already made, so its
references to other files resolve on the first check instead of a second one (``project_pass``).
Imports are read with a regular expression, not a parse (the parse comes later, once): every
``import a.b`` / ``from .x import y`` line at the top level, resolved against the modules of the
run. Indented imports (inside functions, ``try`` or ``if TYPE_CHECKING``) are left out: libraries
put them there to break import cycles, and following them ties whole packages into one cycle. Files are grouped into *waves*: a wave holds files whose
imports all lie in earlier waves, except within an import cycle (one strongly connected
component), whose files share a wave and learn about each other in the project pass.
"""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Sequence, Set

# `import a.b as c, d` and `from ..x.y import (z, w)`; continuation lines of a parenthesised
# `from` import are not needed: the names imported may be modules, but `from pkg import mod`
# is taken as a dependency on `pkg.mod` when that module exists.
_IMPORT = re.compile(r"^import[ \t]+([\w. \t,]+)", re.M)
_FROM = re.compile(r"^from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([\w \t,]*)", re.M)


def imported_modules(source: str, module: str, is_package: bool, known: Set[str]) -> Set[str]:
    """The modules of ``known`` that ``source`` (the text of ``module``) imports."""
    out: Set[str] = set()
    for m in _IMPORT.finditer(source):
        for part in m.group(1).split(","):
            name = part.split(" as ")[0].strip().split()[0] if part.strip() else ""
            _add_with_parents(name, known, out)
    package = module if is_package else module.rpartition(".")[0]
    for m in _FROM.finditer(source):
        dots, name, names = m.group(1), m.group(2), m.group(3)
        if dots:
            base = package.split(".") if package else []
            up = len(dots) - 1
            if up > len(base):
                continue
            base = base[: len(base) - up] if up else base
            target = ".".join(base + ([name] if name else []))
        else:
            target = name
        if not target:
            continue
        _add_with_parents(target, known, out)
        for n in names.split(","):
            sub = f"{target}.{n.split(' as ')[0].strip()}"
            if sub in known:
                out.add(sub)
    out.discard(module)
    return out


def _add_with_parents(name: str, known: Set[str], out: Set[str]) -> None:
    """``import a.b.c``: the names used come from ``a.b.c`` (or, when that is not a module of the
    run, from the nearest package that is). Parent packages run too, but what they re-export
    their own imports say; counting them would tie every file to its root ``__init__``."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        prefix = ".".join(parts[:i])
        if prefix in known:
            out.add(prefix)
            return


def waves(deps: Dict[str, Set[str]]) -> List[List[str]]:
    """Group modules so that each one's dependencies lie in earlier waves (an import cycle shares
    one wave). Iterative Tarjan: deep import chains must not hit Python's recursion limit."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    on_stack: Set[str] = set()
    stack: List[str] = []
    component: Dict[str, int] = {}
    components: List[List[str]] = []
    counter = 0
    for root in sorted(deps):
        if root in index:
            continue
        work = [(root, iter(sorted(deps.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in deps:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(deps.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component[m] = len(components)
                    members.append(m)
                    if m == node:
                        break
                components.append(sorted(members))
    # Tarjan emits a component after every component it depends on: levels in one sweep
    level: Dict[int, int] = {}
    for c, members in enumerate(components):
        below = [level[component[d]] for m in members for d in deps.get(m, ()) if d in component
                 and component[d] != c]
        level[c] = 1 + max(below, default=-1)
    out: List[List[str]] = [[] for _ in range(1 + max(level.values(), default=-1))]
    for c, members in enumerate(components):
        out[level[c]].extend(members)
    return [sorted(w) for w in out]


def order(modules: Sequence[str], sources: Iterable[str], packages: Sequence[bool]) -> List[List[int]]:
    """Waves of indices into ``modules`` (files named by module, with their texts)."""
    known = set(modules)
    deps: Dict[str, Set[str]] = {}
    for name, source, is_package in zip(modules, sources, packages):
        deps.setdefault(name, set()).update(imported_modules(source, name, is_package, known))
    where: Dict[str, List[int]] = {}
    for i, name in enumerate(modules):
        where.setdefault(name, []).append(i)
    return [[i for name in wave for i in where[name]] for wave in waves(deps)]
