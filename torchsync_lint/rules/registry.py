"""Find rules by walking ``torchsync_lint.rules``: no hand-kept list."""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache
from typing import Dict, Iterable, List, Sequence

import torchsync_lint.rules as pkg
from torchsync_lint.rules.base import Rule

CODE_RE = re.compile(r"^TSL\d{3}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
RULE_MODULE = re.compile(r"^tsl\d{3}_")


@lru_cache(maxsize=None)
def all_rules() -> Dict[str, type]:
    found: Dict[str, type] = {}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if not RULE_MODULE.match(info.name):
            continue  # helpers (``_common``), the base class, this registry, ``claims``
        module = importlib.import_module(f"{pkg.__name__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and obj.code:
                if obj.__module__ != module.__name__:
                    continue  # imported, not defined here
                if not CODE_RE.match(obj.code) or not NAME_RE.match(obj.name):
                    raise ValueError(f"rule {obj.__name__}: bad code or name {obj.code!r} {obj.name!r}")
                if obj.code in found:
                    raise ValueError(f"duplicate rule code {obj.code}")
                found[obj.code] = obj
    return dict(sorted(found.items()))


def matches(code: str, prefixes: Iterable[str]) -> bool:
    return any(code.startswith(p) for p in prefixes)


def select_rules(select: Sequence[str] = (), ignore: Sequence[str] = ()) -> List[type]:
    """Rules enabled by code prefixes, Ruff style: the longest matching prefix wins.

    ``select`` empty means the default set; an opinionated rule needs a prefix at least as long
    as its own code's family ("TSL9") to be turned on.
    """
    chosen = []
    for code, rule in all_rules().items():
        sel = max((len(p) for p in select if code.startswith(p)), default=-1)
        ign = max((len(p) for p in ignore if code.startswith(p)), default=-1)
        if not select:
            on = rule.default_enabled
        elif sel < 0:
            on = False
        else:
            on = rule.default_enabled or sel > len("TSL")
        if ign >= 0 and ign >= sel:
            on = False
        if on:
            chosen.append(rule)
    return chosen


def rule_by_key(key: str) -> type:
    """A rule by code (``TSL001``) or name (``item-call``)."""
    rules = all_rules()
    if key.upper() in rules:
        return rules[key.upper()]
    for rule in rules.values():
        if rule.name == key:
            return rule
    raise KeyError(key)
