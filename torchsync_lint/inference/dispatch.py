"""Methods called by a name held as text: ``getattr(cb, "on_epoch_end")(self, logs)`` (or a name
bound to the lookup, ``fn = getattr(cb, hook, None)`` then ``fn(self, logs)``), and the
callback loops of training frameworks, ``def _call(self, hook, *args): for cb in self.callbacks:
getattr(cb, hook)(self, *args)`` called as ``self._call("on_epoch_end", logs)``.

Each such call becomes an interface entry ``["@name", name, args, {}]``: the project places it on
its methods of that name (``by_name``), as a call on a receiver it cannot type, so a callback's
parameters take what the loop hands them. A star argument is what the dispatching function's own
``*args`` received at each call that names the hook.
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

import libcst as cst

from torchsync_lint.inference import by_name
from torchsync_lint.inference.defs import node_params
from torchsync_lint.inference.values import to_data


def dispatched_calls(index, evaluator) -> List[list]:
    """``["@name", method, args, {}]`` for each dispatch by text the file makes, per hook named."""
    out: List[list] = []
    for site, lookup in index.dispatches:
        name_expr = lookup.args[1].value
        for name, extra in _hooks(evaluator, site.caller, name_expr):
            if not by_name.eligible(name):
                continue
            args = _arguments(evaluator, site, extra)
            if args is not None:
                out.append(["@name", name, [to_data(v) for v in args], {}])
    return out


def _hooks(evaluator, func, name_expr) -> Iterator[Tuple[str, Optional[tuple]]]:
    """(method name, (the call naming it, the arguments it passes after the name)) for a literal
    name (no such call: None), or for a parameter of ``func`` that the file's calls of ``func``
    give as a literal."""
    if type(name_expr) is cst.SimpleString:
        text = name_expr.evaluated_value
        if isinstance(text, str):
            yield text, None
        return
    if type(name_expr) is not cst.Name or func is None:
        return
    params = [p.name.value for p in node_params(func.node) if p.star not in ("*", "**")]
    if func.is_method and params:
        params = params[1:]
    if name_expr.value not in params:
        return
    at = params.index(name_expr.value)
    for call_site in evaluator._sites(func):
        positional = [a for a in call_site.call.args if a.keyword is None]
        if any(a.star for a in positional[: at + 1]) or at >= len(positional):
            continue
        named = positional[at].value
        if type(named) is cst.SimpleString and isinstance(named.evaluated_value, str):
            yield named.evaluated_value, (call_site, positional[at + 1:])


def _arguments(evaluator, site, extra) -> Optional[list]:
    """The values the dispatch passes; a ``*args`` of the dispatching function is what the naming
    call passed after the name. None where it cannot be followed (keywords, another star)."""
    func = site.caller
    star = func.node.params.star_arg if func is not None else None
    star_name = star.name.value if type(star) is cst.Param else None
    values = []
    for a in site.call.args:
        if a.keyword is not None or a.star == "**":
            return None
        if a.star == "*":
            if extra is None or type(a.value) is not cst.Name or a.value.value != star_name:
                return None
            naming, rest = extra
            if any(a2.star for a2 in rest):
                return None
            values.extend(evaluator.argument(naming.caller, naming.call, a2.value) for a2 in rest)
        else:
            values.append(evaluator.argument(func, site.call, a.value))
    return values


def bound_lookup(func, callee: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """What the function last bound the called name to so far (`fn = getattr(cb, hook, None)`)."""
    if type(callee) is not cst.Name:
        return None
    for b in reversed(func.bindings):
        if b[0] == "assign" and len(b[1]) == 1 and type(b[1][0]) is cst.Name and b[1][0].value == callee.value:
            return b[2]
    return None
