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

from typing import List, Set

import libcst as cst

from torchsync_lint.inference import torch_facts
# the summaries' data and the graph over them read no syntax: ``callgraph``, re-exported here
from torchsync_lint.inference.callgraph import WEAK, CallGraph, FileSummary  # noqa: F401
from torchsync_lint.inference.frequency import training_loops
from torchsync_lint.inference.guarded import guarded_calls
from torchsync_lint.inference.labels import PERIODIC
from torchsync_lint.inference.index import STEP_HOOKS, FileIndex
from torchsync_lint.syntax.walk import iter_children


_BUILTIN_METHODS = frozenset(n for t in (list, dict, set, str, bytes, tuple) for n in dir(t))


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
    for callee, name, around, _node in f.call_loops:
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


def _guarded(s: FileSummary, key: str, f) -> None:
    """Callees (and method names) that the function calls only in branches that run once or
    periodically (``if batch_idx < 10: dm.plot(x)``): ``guarded_calls`` / ``guarded_methods``, with
    the more frequent class where calls differ."""
    if not f.has_if:
        return  # no branch to run a call once or periodically
    classes = guarded_calls(f.node, training_loops(f.node, f.hot_loops) if f.hot_loops else {})
    if not classes:
        return
    calls: dict = {}
    names: dict = {}
    for callee, name, _around, node in f.call_loops:
        cls = classes.get(id(node))
        for table, k in ((calls, callee), (names, name)):
            if k is not None:
                # one call outside such a branch runs it as often as the function runs
                table[k] = None if cls is None or table.get(k, cls) is None else (
                    PERIODIC if PERIODIC in (cls, table.get(k, cls)) else cls)
    calls = {k: v for k, v in calls.items() if v is not None}
    names = {k: v for k, v in names.items() if v is not None and k in _named((k,))}
    if calls:
        s.guarded_calls[key] = calls
    if names:
        s.guarded_methods[key] = names


_WRITE_MODES = frozenset("wx")


def _opens_for_writing(node: cst.CSTNode) -> bool:
    """The function (not a nested one) calls the builtin ``open`` with a mode that creates or
    overwrites a file (``"w"``, ``"wb"``, ``"x"``; not ``"a"``, which logs add to)."""
    stack: List[cst.CSTNode] = [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value == "open":
            mode = None
            for i, a in enumerate(n.args):
                if (a.keyword is not None and a.keyword.value == "mode") or (a.keyword is None and i == 1):
                    mode = a.value
            if type(mode) is cst.SimpleString and _WRITE_MODES & set(mode.evaluated_value):
                return True
        if n is node or type(n) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            stack.extend(iter_children(n))
    return False


def summarise(index: FileIndex) -> FileSummary:
    s = FileSummary(index.module_name, aliases=dict(index.aliases.map))
    for key, f in index.functions.items():
        s.functions[key] = set(f.calls)
        s.names[key] = f.name
        # calls in an epoch loop outside its step loop run once per epoch: no hot roots
        epoch_only = _split_calls(s, key, f) if f.hot_loops else set()
        _guarded(s, key, f)
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
