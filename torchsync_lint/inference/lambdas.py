"""Calls of lambdas: ``(lambda x: ...)(t)``, a name bound once to a lambda, a dict literal of
lambdas subscripted (``{"cos": lambda a, b: ...}[name](a, b)``): the join of what each body gives
with the call's arguments bound. A mixin of ``evaluate.Evaluator`` (through ``calls.Calls``)."""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from torchsync_lint.inference.scope import Scope
from torchsync_lint.inference.values import UNKNOWN_VALUE, Value, join


class Lambdas:
    """Mixin of ``evaluate.Evaluator``."""

    def _lambdas(self, func: cst.BaseExpression, scope: Scope) -> List[cst.Lambda]:
        """The lambdas a call may run: ``(lambda x: ...)(t)``, a name the function binds once to a
        lambda, or a subscript of a dict literal of lambdas (``{"cos": lambda a, b: ...}[name]``),
        written here or bound once to a name."""
        if type(func) is cst.Subscript:
            func = func.value
            if type(func) is cst.Name:
                func = self._bound_once(func.value, scope)
            if type(func) is cst.Dict and func.elements and all(
                    type(el) is cst.DictElement and type(el.value) is cst.Lambda for el in func.elements):
                return [el.value for el in func.elements]
            return []
        if type(func) is cst.Name:
            func = self._bound_once(func.value, scope)
        return [func] if type(func) is cst.Lambda else []

    def _bound_once(self, name: str, scope: Scope) -> Optional[cst.BaseExpression]:
        """What the enclosing function binds ``name`` to, where its one binding is a plain assignment."""
        if scope.func is None:
            return None
        # each binding's names computed once per function (``_bound_per_binding``): asked for
        # every call of a name, this read every binding's targets again
        found = [b for b, names in zip(scope.func.bindings, self._bound_per_binding(scope.func)) if name in names]
        if len(found) != 1 or found[0][0] != "assign" or [type(t) for t in found[0][1]] != [cst.Name]:
            return None
        return found[0][2]

    def _call_lambdas(self, lambdas: List[cst.Lambda], call: cst.Call, scope: Scope) -> Value:
        """The join of what each lambda's body gives with the call's arguments bound to its parameters."""
        if any(a.star for a in call.args):
            return UNKNOWN_VALUE
        out = None
        for lam in lambdas:
            key = ("lambda", id(lam))
            if key in self._busy:
                return UNKNOWN_VALUE
            params = [p.name.value for p in lam.params.params]
            values = {n: UNKNOWN_VALUE for n in params}
            positional = [a for a in call.args if a.keyword is None]
            for n, a in zip(params, positional):
                values[n] = self.infer(a.value, scope)
            for a in call.args:
                if a.keyword is not None and a.keyword.value in values:
                    values[a.keyword.value] = self.infer(a.value, scope)
            self._busy.add(key)
            try:
                got = self.infer(lam.body, Scope(scope.func, scope, values))
            finally:
                self._busy.discard(key)
            out = got if out is None else join(out, got)
        return out if out is not None else UNKNOWN_VALUE
