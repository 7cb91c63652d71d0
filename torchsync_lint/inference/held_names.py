"""Which functions a value may hold, by name: ``self.solver = step``, ``{"a": f, "b": g}[kind]``,
``f if c else g``. ``held_sites._stored_sites`` finds through them the calls of a module-level
function made through an attribute or a local name."""

from __future__ import annotations

from typing import Dict

import libcst as cst


def held_function_names(e: cst.BaseExpression) -> frozenset:
    """The names of functions an expression may hold: ``step``; each value of a dict or each
    member of a list or tuple it picks from (``{"a": f, "b": g}[kind]``); either side of
    ``f if c else g`` and of ``f or g``."""
    typ = type(e)
    if typ is cst.Name:
        return frozenset((e.value,))
    if typ is cst.IfExp:
        return held_function_names(e.body) | held_function_names(e.orelse)
    if typ is cst.BooleanOperation:
        return held_function_names(e.left) | held_function_names(e.right)
    if typ is cst.Subscript and len(e.slice) == 1 and type(e.slice[0].slice) is cst.Index:
        box = e.value
        if type(box) is cst.Dict:
            return frozenset(el.value.value for el in box.elements
                             if type(el) is cst.DictElement and type(el.value) is cst.Name)
        if type(box) in (cst.List, cst.Tuple):
            return frozenset(el.value.value for el in box.elements if type(el.value) is cst.Name)
    return frozenset()


def held_by_name(index) -> tuple:
    """Of a file's index (``index.FileIndex``), built on first question and kept on it (asked for
    every module-level function, this read every attribute's assignments and every function's
    bindings again): name -> [(class, attribute, methods assigning it a value holding that
    function)] and name -> [(function, local name it binds to such a value)], in the index's order."""
    got = index.held_by_name
    if got is None:
        attrs: Dict[str, list] = {}
        for cls in index.classes.values():
            for attr, rows in cls.attrs.items():
                setters: Dict[str, list] = {}
                for f, e in rows:
                    if f is not None:
                        for n in held_function_names(e):
                            setters.setdefault(n, []).append(f)
                for n, fs in setters.items():
                    attrs.setdefault(n, []).append((cls, attr, fs))
        names: Dict[str, list] = {}
        for caller in index.functions.values():
            for b in caller.bindings:
                if b[0] == "assign" and len(b[1]) == 1 and type(b[1][0]) is cst.Name and type(b[2]) is not cst.Name:
                    for n in held_function_names(b[2]):
                        names.setdefault(n, []).append((caller, b[1][0].value))
        got = index.held_by_name = (attrs, names)
    return got
