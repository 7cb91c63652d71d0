"""Training and evaluation loops that yield host batches: a loop that moves what it iterates over
to a device (or passes it to a function of this file that does), and that makes a training step
(its own ``.backward()`` / ``.step()``, or a call to a function of this file that makes one), or
runs with autograd off, iterates over host batches whatever the iterable's type.

A mixin of ``index.FileIndex``: ``note_batch_loop`` runs as a ``for`` loop is left; the answers
(``is_batch_iter``, ``passes_batch``) are asked by the evaluator once the whole file is read,
since the function making the step may be defined after the loop.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchsync_lint.inference.defs import target_names

# calls that wrap an iterable and yield its items (with a counter, a progress bar): the evaluator
# asks about the wrapped one (`enumerate(loader)`)
WRAPPERS = frozenset(("enumerate", "iter", "tqdm"))


class BatchLoops:
    """Mixin of ``index.FileIndex``."""

    def note_batch_loop(self, node: cst.For, calls: list) -> None:
        names = target_names(node.target)
        moved_here = self._loop_moved.pop(id(node), set())
        comp = self._func_stack[-1].comp_sources if self._func_stack else {}
        # the loop's items moved, or parts of them (`{k: v.to(d) for k, v in sample.items()}`)
        moved = any(m in names or comp.get(m) in names for m in moved_here)
        # a training step's loop, or an evaluation loop (autograd off): its items are batches
        steps = id(node) in self.hot_loops or id(node) in self._eval_loops
        passes = self._loop_passes.pop(id(node), None)
        if not (moved or passes):
            return
        via = None if steps else tuple(k for k in calls if k.startswith(self.module_name + "."))
        if not steps and not via:
            return
        todo = [node.iter]
        while todo:
            it = todo.pop()
            if moved:
                if steps:
                    self.batch_iters.add(id(it))
                else:
                    self._batch_via.add(id(it))
            if passes:
                self.loop_passes[id(it)] = passes
            if via:
                self._step_via[id(it)] = via
            # `enumerate(loader)`, `tqdm(loader)`: the evaluator asks about the wrapped iterable;
            # `zip(range(steps), loader)`: about each (a range or a list is no batch iterable anyway)
            if type(it) is cst.Call and it.args and type(it.func) is cst.Name:
                if it.func.value in WRAPPERS:
                    todo.append(it.args[0].value)
                elif it.func.value == "zip":
                    todo.extend(_zipped_moved(it, node.target, moved_here))

    def _steps_in(self, key: int) -> bool:
        """The loop whose iterable is ``key`` steps: its own ``.backward()``/``.step()``, or a call
        to a function of this file that makes one."""
        via = self._step_via.get(key)
        if via is None:
            return True
        return any(f is not None and f.makes_step for f in map(self.functions.get, via))

    def is_batch_iter(self, iterable: cst.BaseExpression) -> bool:
        """A step loop's iterable whose items the loop moves to a device: host batches."""
        key = id(iterable)
        return key in self.batch_iters or key in self._batch_via and self._steps_in(key)

    def passes_batch(self, iterable: cst.BaseExpression) -> bool:
        """A training-step loop passes what it iterates over to a function of this file that copies
        that parameter to a device (``loss = self.step_one(sample)``, ``step_one`` moving ``sample``):
        whatever the iterable's type, it yields host batches."""
        key = id(iterable)
        got = self._passes_batch.get(key)
        if got is None:
            got = self._steps_in(key) and any(self._moves_param(*p) for p in self.loop_passes.get(key, ()))
            self._passes_batch[key] = got
        return got

    def _moves_param(self, callee: str, pos: Optional[int], keyword: Optional[str], via_self: bool) -> bool:
        f = self.functions.get(callee)
        if f is None:
            return False
        p = f.node.params
        params = [x.name.value for x in list(p.posonly_params) + list(p.params)]
        if via_self and f.is_method:
            params = params[1:]
        name = keyword if keyword is not None else (params[pos] if pos is not None and pos < len(params) else None)
        if name is None:
            return False
        return name in f.moved or any(f.comp_sources.get(m) == name for m in f.moved)


def _zipped_moved(it: cst.Call, target: cst.BaseExpression, moved: set) -> list:
    """The iterables of ``zip(range(steps), loader)`` whose part of the loop's target the body
    moves (``for step, (x, y) in ...: x.to(d)``: ``loader``); none where the target is not
    unpacked member by member."""
    args = [a.value for a in it.args if a.keyword is None and not a.star]
    if type(target) not in (cst.Tuple, cst.List) or len(target.elements) != len(args):
        return []
    # a name or an attribute holding the iterable (`loader`, `self.train_loader`), not a call's
    # result (`model.parameters()`: the items moved are parameters, not batches)
    return [a for a, el in zip(args, target.elements)
            if target_names(el.value) & moved and type(a) in (cst.Name, cst.Attribute)]

