"""Functions handed to a function of another file, which calls them: what that body passes.

``self.decode_autoregressive(decode_one, ...)`` where the method lives in a base class of another
file whose body calls ``decode_one(idx, lagged, hidden)``: ``decode_one``'s parameters take what
that body passes. Each file's interface records, per function, the calls of its own parameters
(``param_calls``: [position, name, args, kwargs]); the check of the handing file asks for one
parameter of the handed function through a reference, resolved here once every interface is known:
``("handed", target, at, keyword, name, pos)``, where ``target`` is ``("call", qualname)`` or
``("method", base class, method)``, ``at``/``keyword`` say where the call hands the function over,
and ``name``/``pos`` name the handed function's parameter.
"""

from __future__ import annotations

from typing import Optional

from torchsync_lint.inference.values import UNKNOWN_VALUE, Value, from_data, join

HANDED = "handed"


def argument_data(args: list, kwargs: dict, name: str, pos: Optional[int]):
    """What one recorded call ([args], {kwargs}) passes a parameter (by keyword, else by
    position); None where it does not pass it."""
    d = kwargs.get(name)
    if d is None and pos is not None and pos < len(args):
        d = args[pos]
    return d


def handed_value(project, ref: tuple) -> Value:
    """The join of what the target's body passes the handed function's parameter; unknown where
    nothing is recorded (or a call unpacks ``*args``)."""
    _, target, at, keyword, name, pos = ref
    data = _target_data(project, target)
    out: Optional[Value] = None
    for epos, ename, args, kwargs in (data or {}).get("param_calls", ()):
        if not ((at is not None and epos == at) or (keyword is not None and ename == keyword)):
            continue
        if args is None:
            return UNKNOWN_VALUE
        d = argument_data(args, kwargs, name, pos)
        if d is None:
            continue
        v = project.deep(from_data(d))
        out = v if out is None else join(out, v)
    return out if out is not None else UNKNOWN_VALUE


def _target_data(project, target: tuple) -> Optional[dict]:
    if target[0] == "call":
        loc = project.locate(target[1])
        key = loc[1] if loc is not None and loc[0] == "function" else None
    else:
        cls_key = project.class_key(target[1])
        key = project.find_method(cls_key, target[2]) if cls_key is not None else None
    return project.function_data(key) if key is not None else None
