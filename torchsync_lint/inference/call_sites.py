"""Where a file calls a function, and what each call passes: ``self.name(...)`` and
``obj.name(...)`` on instances of its class, constructors, a function stored on an instance
(``self.solver = step``) or passed to another function (``apply(f, x)``, ``functools.partial``),
submodules called as ``self.block(x)``; the join of what those sites pass for a parameter.

A mixin of ``evaluate.Evaluator`` (through ``summaries.Summaries``): it uses the evaluator's
``infer``, scopes and recursion guard, and the summaries' ``params`` and ``self_attr``.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional

import libcst as cst

from torchsync_lint.inference.defs import (  # noqa: F401
    HOST_EVIDENCE,
    CallSite,
    ClassInfo,
    FunctionInfo,
    bound_names,
    class_level,
    positional_params,
    target_names,
)
from torchsync_lint.inference import torch_api as api
from torchsync_lint.inference.handed import HANDED
from torchsync_lint.inference.held_sites import HeldSites, handed_name, shadowed
from torchsync_lint.inference.roots import EXTERNAL_ROOTS
from torchsync_lint.inference.scope import Scope
from torchsync_lint.inference.values import (
    BATCH,
    CPU,
    MODULE,
    OBJECT,
    SELF,
    TENSOR,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    join,
    join_maybe,
    join_passed,
)


class CallSites(HeldSites):
    def _from_call_sites(self, func: FunctionInfo, name: str, pos: Optional[int]) -> Value:
        v = self._passed(func, name, pos)
        return UNKNOWN_VALUE if v is None else v

    def _sites(self, func: FunctionInfo) -> list:
        """The file's calls of ``func``: ``self.name(...)``; for a method also ``obj.name(...)``
        where ``obj`` is an instance of its class (``self.solver.step(t, y)``) and, for
        ``__init__``, ``Cls(...)``; for a function, ``name(...)``."""
        if not func.is_method:
            return self.index.call_sites.get(func.name, []) + self._indirect_sites(func) + self._stored_sites(func)
        sites = [s for s in self.index.call_sites.get("self." + func.name, []) if self._reaches(s.caller, func)]
        sites += self.handed_on_sites("self." + func.name, func)  # `run_chunks(self.part, x)`
        if func.name in ("__init__", "__new__") and func.cls is not None:
            sites += self.index.call_sites.get(func.cls.name, [])
        sites += self._super_sites(func)
        if func.cls is not None and class_level(func.node):  # `Boxes.mask(x)`
            # (`cls._to_tensor(data)` in a classmethod or `__new__` of the same class too)
            sites += [s for s in self.index.call_sites.get("." + func.name, ())
                      if type(s.call.func.value) is cst.Name and (
                          s.call.func.value.value == func.cls.name
                          or s.call.func.value.value == "cls" and s.caller is not None and s.caller.cls is func.cls)]
        if func.name == "forward" and func.cls is not None and func.cls.is_module:
            sites += self._submodule_sites(func.cls)
            # `dist, v = self(obs)` in another method of the module: a call of its forward
            sites += [s for s in self.index.call_sites.get("self", ())
                      if s.caller is not None and s.caller.cls is func.cls and s.caller is not func]
        elif func.name == "__call__" and func.cls is not None and not func.cls.is_module:
            # `self.transform(sample)`, `for t in self.transforms: sample = t(sample)`
            sites += self._submodule_sites(func.cls) + self._instance_called_sites(func.cls)
        others = self.index.call_sites.get("." + func.name)
        if others and func.cls is not None:
            key = ("sites", id(func))
            if key not in self._busy:
                self._busy.add(key)
                try:
                    for site in others:
                        recv = self.infer(site.call.func.value, self.summary_scope(site.caller)
                                          if site.caller is not None else self.module_scope())
                        if self._holds_instance(recv, func.cls):
                            sites.append(site)
                finally:
                    self._busy.discard(key)
        return sites

    def _super_sites(self, func: FunctionInfo) -> list:
        """``super().name(...)`` in a method of a subclass of the file whose first base here
        resolves ``name`` to ``func`` (``super().__init__(table, device="cuda")``)."""
        out = []
        for site in self.index.call_sites.get("." + func.name, ()):
            recv, caller = site.call.func.value, site.caller
            if (type(recv) is not cst.Call or caller is None or not caller.is_method or caller.cls is func.cls
                    or self.aliases.qualify(recv.func) != "builtins.super"):
                continue
            base = next((self.index.classes[b.split(".")[-1]] for b in caller.cls.bases
                         if b.split(".")[-1] in self.index.classes), None)
            if base is not None and base is not caller.cls and self.method(base, func.name) is func:
                out.append(site)
        return out

    def _reaches(self, caller: Optional[FunctionInfo], func: FunctionInfo) -> bool:
        """``self.name(...)`` in ``caller`` can run the method ``func``: the caller's class is its
        class, inherits it, is a base that ``func``'s class overrides it for, or has no such method
        (a mixin calling what another class provides); not another class of the file with a method
        of the same name."""
        own = caller.cls if caller is not None else None
        if own is None or func.cls is None or own is func.cls:
            return True
        if self._is_class_or_sub(own.key, func.cls):
            return self.method(own, func.name) is func
        return self._is_class_or_sub(func.cls.key, own) or self.method(own, func.name) is None

    def _indirect_sites(self, func: FunctionInfo) -> list:
        return self.handed_on_sites(func.name, func)

    def handed_on_sites(self, name: str, func: Optional[FunctionInfo] = None) -> list:
        """Calls of a function through a name that holds it: ``fn = functools.partial(func, a)``
        then ``fn(x)`` (positions shifted by what the partial binds; the partial itself passes
        its keywords), and ``apply(func, x)`` where ``apply`` calls its parameter ``f(x)`` (or,
        for a class, stores it as ``self.f`` and calls ``self.f(x)``). ``name``: the function's
        name here (``func``, this file's; None for one imported from another file), or
        ``self.<method>`` for a bound method handed on; ``checkpoint(func, x)`` calls it too."""
        refs = self._arg_refs().get(name)
        if not refs:
            return []
        out = []
        bound_method = name.startswith("self.")
        for site, pos, kw in refs:
            caller = site.caller
            if bound_method:
                if func is None or caller is None or not self._reaches(caller, func):
                    continue
            elif shadowed(caller, name):
                continue
            callee = site.call.func
            q = self.aliases.qualify(callee)
            if q in api.CALLS_FIRST_ARGUMENT:
                if pos == 0:
                    out.append(CallSite(site.caller, site.call, -1))  # checkpoint(func, a, b) calls func(a, b)
                continue
            if q == "functools.partial":
                if pos != 0:
                    continue
                bound = sum(1 for a in site.call.args if a.keyword is None) - 1
                out.append(CallSite(site.caller, site.call, -1))  # partial(func, a, k=v) passes a and k
                for b in (site.caller.bindings if site.caller is not None else self.index.module_bindings):
                    if b[0] == "assign" and b[2] is site.call and len(b[1]) == 1 and type(b[1][0]) is cst.Name:
                        out.extend(CallSite(s.caller, s.call, bound) for s in
                                   self.index.call_sites.get(b[1][0].value, []) if s.caller is site.caller)
                    elif b[0] == "assign" and b[2] is site.call and len(b[1]) == 1 and site.caller.is_method:
                        # `self.reduce = partial(func, ...)`: the class's `self.reduce(x)` calls
                        held = handed_name(b[1][0])
                        if held is not None and held.startswith("self."):
                            out.extend(CallSite(s.caller, s.call, bound) for s in self.index.call_sites.get(held, [])
                                       if s.caller is not None and s.caller.cls is site.caller.cls)
                continue
            target, skip = None, 0
            if type(callee) is cst.Name:
                target = self._local_function(callee.value, self.summary_scope(site.caller)
                                              if site.caller is not None else self.module_scope())
                cls = self.index.classes.get(callee.value) if target is None else None
                if cls is not None:
                    target, skip = self.method(cls, "__init__"), 1
            elif (type(callee) is cst.Attribute and type(callee.value) is cst.Name
                  and callee.value.value == "self" and site.caller is not None and site.caller.cls is not None):
                target, skip = self.method(site.caller.cls, callee.attr.value), 1
            if target is None or target is func:
                continue
            p = target.node.params
            params = list(p.posonly_params) + list(p.params)
            if kw is not None:
                param = kw
            elif pos + skip < len(params):
                param = params[pos + skip].name.value
            else:
                continue
            if target.name == "__init__" and target.cls is not None:
                # `Solver(func)` storing `self.func = func`: the class's `self.func(...)` calls
                for attr, rows in target.cls.attrs.items():
                    if any(f is target and type(e) is cst.Name and e.value == param for f, e in rows):
                        out.extend(s for s in self.index.call_sites.get("self." + attr, [])
                                   if s.caller is not None and s.caller.cls is target.cls)
            out.extend(s for s in self.index.call_sites.get(param, []) if s.caller is target)
        return out

    def _arg_refs(self) -> Dict[str, list]:
        """Names passed as arguments to calls of this file: name -> [(site, position, keyword)]."""
        got = getattr(self, "_arg_refs_memo", None)
        if got is None:
            got = {}
            for sites in self.index.call_sites.values():
                for site in sites:
                    pos = 0
                    for a in site.call.args:
                        if a.star:
                            break
                        held = handed_name(a.value)
                        if held is not None:
                            got.setdefault(held, []).append(
                                (site, pos if a.keyword is None else None, a.keyword.value if a.keyword else None))
                        if a.keyword is None:
                            pos += 1
            self._arg_refs_memo = got
        return got

    def _passed(self, func: FunctionInfo, name: str, pos: Optional[int], omitted: Optional[list] = None
                ) -> Optional[Value]:
        """The join of what the file's call sites pass for a parameter; None if none passes it.
        ``omitted``: a list that gets True appended when some call site leaves the parameter out."""
        values = self._passed_values(func, name, pos, omitted)
        if values is None:
            return UNKNOWN_VALUE
        if not values:
            return None
        return join_passed(values)[0]

    def _passed_tensor(self, func: FunctionInfo, name: str, pos: Optional[int]) -> Optional[Value]:
        """The join of the tensors some of the file's call sites pass for a parameter (the others
        may pass numbers: ``size: int`` given ``t.size(1)`` here and ``lengths.max()`` there)."""
        values = [v for v in self._passed_values(func, name, pos) or ()
                  if v.kind == TENSOR and not v.assumed and v.ref is None]
        out = values[0] if values else None
        for v in values[1:]:
            out = join(out, v)
        return out

    def tensors_passed(self, func: FunctionInfo, name: str) -> Optional[Value]:
        """What ``isinstance(name, Tensor)`` narrows an unrebound parameter to: the join of the
        tensors its calls pass (others may pass lists or numbers: ``add_state("preds", [])`` beside
        ``add_state("total", torch.tensor(0))``); None where none passes one."""
        where = {n: i for i, n in positional_params(func)}
        if name not in where:
            return None
        at = where[name]
        passed = self._passed_tensor(func, name, at)
        if passed is None and func.parent is None:
            passed = self._other_files_pass(func, name, at, tensors_only=True)
        return passed if passed is not None and passed.kind == TENSOR and not passed.assumed else None

    def _passed_values(self, func: FunctionInfo, name: str, pos: Optional[int], omitted: Optional[list] = None
                       ) -> Optional[List[Value]]:
        """What each of the file's call sites passes for a parameter; None where one unpacks ``*args``."""
        values = list(self._iter_passed(func, name, pos, omitted))
        return None if any(v is None for v in values) else values

    def _iter_passed(self, func: FunctionInfo, name: str, pos: Optional[int], omitted: Optional[list] = None
                     ) -> Iterator[Optional[Value]]:
        """What each call site passes, one at a time (None, and the end, where one unpacks ``*args``):
        a caller that needs one answer stops at the first site that gives it."""
        for site in self._sites(func):
            arg = None
            positional = [a for a in site.call.args if a.keyword is None and not a.star]
            if any(a.star for a in site.call.args):
                yield None
                return
            for a in site.call.args:
                if a.keyword is not None and a.keyword.value == name:
                    arg = a
            at = None if pos is None else pos - site.offset  # a partial binds the first ones
            if arg is None and at is not None and 0 <= at < len(positional):
                arg = positional[at]
            if arg is None:
                if omitted is not None:
                    omitted.append(True)
                continue
            passed = self._passed_parameter(site.caller, arg.value)
            yield self._passed_self(site.caller, passed) if passed is not None else self.argument(
                site.caller, site.call, arg.value)
        for ref in self._handed_elsewhere(func, name, pos):
            v = self._ref(ref)  # without the project: a reference the project pass answers
            if v.kind != UNKNOWN:
                yield v

    def _handed_elsewhere(self, func: FunctionInfo, name: str, pos: Optional[int]) -> List[tuple]:
        """References (``handed``) for ``func`` handed to a function or inherited method of another
        file (``self.decode_autoregressive(decode_one, ...)``): what its body passes ``name``."""
        if func.is_method:
            return []
        out: List[tuple] = []
        for site, at, kw in self._arg_refs().get(func.name, ()):
            caller = site.caller
            if shadowed(caller, func.name):
                continue
            callee = site.call.func
            targets: List[tuple] = []
            if type(callee) is cst.Name:
                q = self.aliases.qualify(callee)
                if (q is not None and q.split(".")[0] not in EXTERNAL_ROOTS and callee.value not in self.index.classes
                        and self._local_function(callee.value, self.module_scope()) is None):
                    targets.append(("call", q))
            elif (type(callee) is cst.Attribute and type(callee.value) is cst.Name and callee.value.value == "self"
                  and caller is not None and caller.cls is not None
                  and self.method(caller.cls, callee.attr.value) is None):
                targets.extend(("method", b, callee.attr.value) for b in caller.cls.bases
                               if b.split(".")[0] not in EXTERNAL_ROOTS and self.index.classes.get(b) is None)
            out.extend((HANDED, t, at, kw, name, pos) for t in targets)
        return out

    def _declared_class(self, func: FunctionInfo, name: str, i: int, positional: bool, static: bool,
                        v: Value) -> Value:
        """``model: BaseModel`` that the calls pass one known class (a subclass): that class. Only
        the calls at hand are asked (this file, the project when there is one): the declared
        class is a sound answer, so no file is checked again for this."""
        pos = i - (1 if func.is_method and not static else 0)
        at = pos if positional else None
        passed = self._passed(func, name, at)
        if passed is None and func.parent is None and self.project is not None:
            got = self.project.param(func.key, name, at)
            passed = got if got.kind != UNKNOWN else None
        if passed is not None and (passed.kind in (MODULE, OBJECT) and passed.cls is not None or passed.kind == BATCH):
            return passed  # a subclass; a batch a training loop passes on
        return v

    def _host_from_callers(self, func: FunctionInfo, name: str, i: int, positional: bool, static: bool,
                           v: Value) -> Value:
        """``positive_batch: LongTensor`` that every call in the project passes a host tensor (a
        batch the training loop samples on the CPU): on the host. Other files are asked only in
        the project pass, and only where some of them pass a host tensor (``HOST_EVIDENCE``)."""
        pos = i - (1 if func.is_method and not static else 0)
        at = pos if positional else None
        seen = cycled = False
        setter = func.name.endswith(".setter")
        mark = len(self._cuts)
        for passed in self._iter_passed(func, name, at):
            # a setter's store of what the property held (`image.data = image.data.flip(-1)`) is
            # cut short where it reads what waits on this answer: it is where the other stores are
            cyclic = setter and any(k in self._busy for k in self._cuts[mark:])
            mark = len(self._cuts)
            if cyclic and passed is not None and (passed.kind == UNKNOWN and passed.ref is None
                                                  or passed.kind == TENSOR and passed.device is None):
                cycled = True
                continue
            if passed is None or passed.kind != TENSOR or passed.device != CPU or passed.assumed:
                return v  # one call passes something else: stop there (most do, at the first)
            seen = True
        if seen:
            return v.with_(device=CPU)
        if func.parent is None:
            if self.project is None or self.recorded is not None:
                self.open_params.add(HOST_EVIDENCE + func.key)
            if self.project is not None:
                if self.project.param_on_host(func.key, name, at):
                    return v.with_(device=CPU)
                if cycled and self.project.param(func.key, name, at).kind != UNKNOWN:
                    return v  # other files pass something else
        if cycled:
            # every store passes back what the property held: it adds no place of its own; what
            # the class's other stores keep decides
            return v.with_(device=CPU)
        return v

    def argument(self, caller: Optional[FunctionInfo], call: cst.Call, expr: cst.BaseExpression) -> Value:
        """What a call site passes: the value in the caller's summary scope, or, for a name the
        call's own result rebinds (`batch = to_device(batch, device)`), what it held before. A
        method passing ``self`` (``cb.on_epoch_end(self)``) passes an instance of its class."""
        return self._passed_self(caller, self._argument(caller, call, expr))

    def _passed_self(self, caller: Optional[FunctionInfo], v: Value) -> Value:
        if v.kind == SELF and caller is not None and caller.cls is not None:
            return Value(MODULE if self.is_module_class(caller.cls) else OBJECT, cls=caller.cls.key)
        return v

    def _argument(self, caller: Optional[FunctionInfo], call: cst.Call, expr: cst.BaseExpression) -> Value:
        if type(expr) is cst.Name and caller is not None:
            before = self._scope_before(caller, call, expr.value)
            if before is not None:
                return self.infer(expr, before)
            at_call = self._value_at_call(caller, call, expr)
            if at_call is not None:
                return at_call
        scope = self.summary_scope(caller) if caller is not None else self.module_scope()
        comps = self.index.comp_calls.get(id(call))
        if comps:  # `[helper(x) for x in xs]`: the comprehensions' variables, as they iterate
            scope = Scope(scope.func, scope, {})
            for comp in comps:
                f = comp.for_in
                while f is not None:
                    self.bind(f.target, self.iter_element(f.iter, scope), scope)
                    f = f.inner_for_in
        return self.infer(expr, scope)

    def _value_at_call(self, func: FunctionInfo, call: cst.Call, expr: cst.Name) -> Optional[Value]:
        """``helper(x)`` before a later ``x = best.cpu()`` (or ``loss = loss.item()``): the name
        as it stands at the call, where the function rebinds it after; in a loop that binds it
        only after the call, joined with what that binding carries round to the next turn. None
        where nothing rebinds it after."""
        mark = self.index.call_marks.get(id(call))
        if mark is None:
            return None
        at, loop = mark
        bound = self._bound_per_binding(func)
        name = expr.value
        if not any(name in names for names in bound[at:]):
            return None
        # in a loop that does not bind the name before the call, a later binding comes round
        carried = loop is not None and not any(name in names for names in bound[loop:at])
        v = self.infer(expr, self._scope_at(func, at))
        return join_maybe(v, self.infer(expr, self.summary_scope(func))) if carried else v

    def _scope_before(self, func: FunctionInfo, call: cst.Call, name: str) -> Optional[Scope]:
        """The function's names just before the assignment of ``call``'s result to ``name``, when
        there is one: the summary scope has the names after it."""
        for i, b in enumerate(func.bindings):
            if b[0] == "assign" and b[2] is call:
                if any(type(t) is cst.Name and t.value == name for t in b[1]):
                    # replayed afresh: asked again later, it may see summaries completed since
                    return self._replayed_to(func, i)
                return None
        return None

    def _scope_at(self, func: FunctionInfo, at: int) -> Scope:
        """``_replayed_to``, memoised per statement."""
        key = (id(func), at)
        scope = self._scopes_at.get(key)
        if scope is None:
            scope = self._scopes_at[key] = self._replayed_to(func, at)
        return scope

    def _replayed_to(self, func: FunctionInfo, at: int) -> Scope:
        """The function's names after its first ``at`` bindings, replayed in order."""
        parent = self.summary_scope(func.parent) if func.parent is not None else self.module_scope()
        scope = Scope(func, parent, dict(self.params(func)))
        for b in func.bindings[:at]:
            self.replay(b, scope)
        return scope

    def _passed_parameter(self, caller: Optional[FunctionInfo], arg: cst.BaseExpression) -> Optional[Value]:
        """``helper(x)`` where ``x`` is a parameter of the caller that it never rebinds: the
        parameter's value, without replaying the caller's body (which may call back into the
        function being summarised)."""
        if caller is None or type(arg) is not cst.Name:
            return None
        name = arg.value
        if name not in bound_names(caller):
            return self.params(caller).get(name)
        return None
