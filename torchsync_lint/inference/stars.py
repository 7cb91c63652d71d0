"""``from .imports import *``: the names a star import brings, as Python binds them.

A star import binds every name the imported module lists in ``__all__``, or, without one, every
name of its namespace that does not start with an underscore: its functions, classes and values,
the modules and names it imports (``import torch``, ``import torch.nn as nn``), and what its own
star imports brought. Libraries built this way (a shared ``imports`` module, package
``__init__`` files that re-export their submodules) name ``torch`` and their helpers only through
such lines. Interfaces record the star imports and ``__all__`` (``defs.declared_all``);
``Project.exported`` follows them. Plain data: no syntax tree here.
"""

from __future__ import annotations

from typing import Callable, Dict

def exports(module: str, iface: dict, exported_of: Callable[[str], Dict[str, str]]) -> Dict[str, str]:
    """Name -> qualified target of what ``from module import *`` binds: the module's own functions,
    classes and values (``module.name``), its imports (their targets) and, first, what its own star
    imports bring (later bindings win, as in the module's namespace)."""
    names: Dict[str, str] = {}
    for star in iface.get("stars", ()):
        names.update(exported_of(star))
    prefix = module + "."
    for table in ("functions", "classes"):
        for key in iface.get(table, {}):
            if key.startswith(prefix) and "." not in key[len(prefix):]:
                names[key[len(prefix):]] = key
    for name in iface.get("values", {}):
        names[name] = prefix + name
    names.update(iface.get("aliases", {}))
    listed = iface.get("all")
    if listed is not None:
        return {n: names[n] for n in listed if n in names}
    return {n: t for n, t in names.items() if not n.startswith("_")}


def import_base(module_name: str, is_package: bool, level: int, mod: str) -> str:
    """The module ``from <level dots><mod> import ...`` names, in module ``module_name``."""
    if not level:
        return mod
    parts = module_name.split(".") if module_name else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if len(parts) >= level - 1 else []
    base = ".".join(parts)
    return ".".join(p for p in (base, mod) if p)
