"""Calls of what a value holds: a function stored on an instance or picked from a dict
(``self.solver = step``, ``{"a": f, "b": g}[kind]``), a submodule or an instance of a class of
the file called through an attribute (``self.block(x)``, ``self.transform(sample)``) or a name
(``for t in self.transforms: sample = t(sample)``), also where it holds one of several classes.

A mixin of ``call_sites.CallSites``: the sites it finds are what ``_sites`` gives for the callee.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchsync_lint.inference import torch_api as api
from torchsync_lint.inference.defs import CallSite, ClassInfo, FunctionInfo, binding_names, bound_names
from torchsync_lint.inference.held_names import held_by_name
from torchsync_lint.inference.scope import Scope
from torchsync_lint.inference.values import MODULE, OBJECT, SELF, Value


class HeldSites:
    """Mixin of ``call_sites.CallSites``."""

    def _stored_sites(self, func: FunctionInfo) -> list:
        """``self.solver = step`` in a method of a class of the file: that class's
        ``self.solver(t, y)`` calls are calls of the module-level function ``step``; so too where
        the attribute, or a name in a function, holds one of several functions
        (``{"robust": robust_stats, "std": std_stats}[kind]``, ``f if c else g``)."""
        if func.parent is not None or func.cls is not None:
            return []
        name = func.name
        attrs, names = held_by_name(self.index)
        out = []
        for cls, attr, setters in attrs.get(name, ()):
            if any(not shadowed(f, name) for f in setters):
                out.extend(s for s in self.index.call_sites.get("self." + attr, [])
                           if s.caller is not None and s.caller.cls is cls)
        for caller, target in names.get(name, ()):
            if not shadowed(caller, name):
                out.extend(s for s in self.index.call_sites.get(target, []) if s.caller is caller)
        return out

    def _submodule_sites(self, cls: ClassInfo) -> list:
        """``self.block(x, m)`` in any class of the file whose ``self.block`` holds an instance of
        ``cls`` (a module of this file): calls of its ``forward``."""
        key = ("submodule_sites", id(cls))
        if key in self._busy:
            self._cuts.append(key)
            return []
        self._busy.add(key)
        out = []
        try:
            for attr, site, owner in self._held_calls():
                if owner is cls or site.caller.cls is not owner:  # (cut once the file is checked)
                    continue
                if self._holds_instance(self.self_attr(owner, attr), cls):
                    out.append(site)
        finally:
            self._busy.discard(key)
        return out

    def _holds_instance(self, v: Value, cls: ClassInfo) -> bool:
        """``v`` is an instance of ``cls`` or a subclass, or one of several classes one of which is."""
        if v.kind not in (MODULE, OBJECT):
            return False
        if v.cls is not None:
            return self._is_class_or_sub(v.cls, cls)
        return any(m.cls is not None and self._is_class_or_sub(m.cls, cls) for m in v.elts)

    def _instance_called_sites(self, cls: ClassInfo) -> list:
        """``t(sample)`` where the name ``t`` holds an instance of ``cls`` (a loop over a list of
        instances, a parameter its callers pass one): calls of its ``__call__``."""
        key = ("instance_sites", id(cls))
        if key in self._busy:
            self._cuts.append(key)  # an answer computed meanwhile is not the whole one: not memoised
            return []
        self._busy.add(key)
        out = []
        try:
            for name, sites in self.index.call_sites.items():
                if "." in name or name in self.index.classes or name in self.index.module_functions:
                    continue
                for site in sites:
                    if site.caller is None or type(site.call.func) is not cst.Name:
                        continue
                    # (what the name holds at the call: not the whole caller's scope, whose loop
                    # may feed the call's own result back, `sample = t(sample)`)
                    held = self._loop_held(site.caller, site.call.func.value)
                    if held is None:
                        held = self._argument(site.caller, site.call, site.call.func)
                    if self._holds_instance(held, cls):
                        out.append(site)
        finally:
            self._busy.discard(key)
        return out

    def _loop_held(self, func: FunctionInfo, name: str) -> Optional[Value]:
        """``for t in self.transforms: sample = t(sample)``: what ``t`` yields, from the loop's
        iterable read without the function's parameters (which are what is being computed, when a
        transform's parameters are asked for: reading them here cut the answer short). None where
        ``name`` is not the target of the function's one loop binding it, or the iterable needs more."""
        found = [b for b, names in zip(func.bindings, self._bound_per_binding(func)) if name in names]
        if len(found) != 1 or found[0][0] != "for" or type(found[0][1]) is not cst.Name:
            return None
        it = found[0][2]
        if not (type(it) is cst.Attribute and type(it.value) is cst.Name and it.value.value == "self"):
            return None  # `self.transforms`: an attribute, read whatever the parameters are
        scope = Scope(func, self.module_scope(), {"self": Value(SELF)})
        v = self.iter_element(it, scope)
        return v if v.kind in (MODULE, OBJECT) else None

    def _bound_per_binding(self, func: FunctionInfo) -> list:
        """The names each of the function's bindings binds, in order (read once per evaluator:
        asked per name and call site, the per-binding sets were the cost)."""
        got = self._binding_names.get(id(func))
        if got is None:
            got = self._binding_names[id(func)] = [binding_names([b]) for b in func.bindings]
        return got

    def _held_calls(self) -> list:
        """(attribute, site, owning class) of every ``self.attr(...)`` call in a method where
        ``attr`` is an attribute of the class, not one of its methods, in the index's order:
        ``_submodule_sites``' candidates, the same for every class asked about (listed once).
        ``checkpoint(self.attr, x)`` calls it too (a site that skips the function argument)."""
        got = self._held_call_list
        if got is None:
            got = self._held_call_list = []
            for name, sites in self.index.call_sites.items():
                checkpoint = not name.startswith("self.")
                for site in sites:
                    attr = name[5:]
                    if checkpoint:
                        if self.aliases.qualify(site.call.func) not in api.CALLS_FIRST_ARGUMENT or not site.call.args:
                            break
                        held = handed_name(site.call.args[0].value)
                        if held is None or not held.startswith("self.") or site.call.args[0].keyword is not None:
                            continue
                        attr, site = held[5:], CallSite(site.caller, site.call, -1)
                    owner = site.caller.cls if site.caller is not None else None
                    if owner is not None and attr not in owner.methods and attr in owner.attrs:
                        got.append((attr, site, owner))
        return got

    def _is_class_or_sub(self, key: str, cls: ClassInfo) -> bool:
        local = self._local_class(key)
        seen = 0
        while local is not None and seen < 16:
            if local is cls:
                return True
            local = next((self.index.classes.get(b.split(".")[-1]) for b in local.bases
                          if self.index.classes.get(b.split(".")[-1]) is not None), None)
            seen += 1
        return False


def shadowed(caller: Optional[FunctionInfo], name: str) -> bool:
    """In ``caller``, ``name`` is a local or a parameter of the same name, not the function."""
    return caller is not None and (name in bound_names(caller) or any(q.name.value == name for q in all_params(caller)))


def handed_name(expr: cst.BaseExpression) -> Optional[str]:
    """``f`` or ``self.f`` passed as an argument: the name ``_arg_refs`` files it under."""
    if type(expr) is cst.Name:
        return expr.value
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self":
        return "self." + expr.attr.value
    return None


def all_params(func: FunctionInfo) -> list:
    p = func.node.params
    return list(p.posonly_params) + list(p.params) + list(p.kwonly_params)
