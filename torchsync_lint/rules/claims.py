"""Which torch calls each rule claims to sync, read from the rule modules' own data.

A rule names its calls in module-level sets or dicts of qualified names (``FUNCTIONS``,
``NMS_CALLS``, ``CHECKED``...; for a dict, its keys) and of Tensor method names (``METHODS``,
``NO_EX_METHODS``: every name must be a ``torch.Tensor`` attribute the catalog knows), or returns
them from a module-level ``measured_claims()``. A rule whose calls sync only with certain
arguments says so in a module-level ``SYNC_CONDITION`` string; the sync-free alternatives its message names, in
``SYNC_FREE`` (catalog name -> the variant measured not to sync). Imports the rule modules (LibCST), never torch.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Dict, Iterable, Optional, Set

import torchsync_lint.rules as rules_package
from torchsync_lint import catalog
from torchsync_lint.rules.base import Rule

QUALIFIED_ROOTS = ("torch.", "torchvision.")


def _strings(value) -> Iterable[str]:
    if isinstance(value, dict):
        return [k for k in value if isinstance(k, str)]
    if isinstance(value, (set, frozenset)):
        return [v for v in value if isinstance(v, str)]
    return []


def claimed_calls(module) -> Set[str]:
    """Catalog names of the calls a rule module declares."""
    out: Set[str] = set()
    known = catalog.entries()
    for var, value in vars(module).items():
        if not var.isupper() or var.startswith("_") or var == "SYNC_FREE":
            continue
        names = list(_strings(value))
        out.update(catalog.canonical(n) for n in names if n.startswith(QUALIFIED_ROOTS))
        bare = [n for n in names if n.isidentifier()]
        if bare and (var == "METHODS" or var.endswith("_METHODS")) and all(f"torch.Tensor.{n}" in known for n in bare):
            out.update(f"torch.Tensor.{n}" for n in bare)
        if bare and var == "DISTRIBUTIONS":
            out.update(f"torch.distributions.{n}" for n in bare)
    measured = getattr(module, "measured_claims", None)
    if callable(measured):  # a rule whose calls are the catalog's own list (TSL113)
        out.update(measured())
    return out


def rule_modules() -> Dict[str, object]:
    """Rule code -> its module, for every rule file in torchsync_lint/rules/."""
    out = {}
    for info in sorted(pkgutil.iter_modules(rules_package.__path__), key=lambda m: m.name):
        if info.name.startswith("tsl"):
            out[info.name[:6].upper()] = importlib.import_module(f"torchsync_lint.rules.{info.name}")
    return out


def sync_free(module) -> Dict[str, str]:
    """The sync-free alternatives a rule's message names: catalog name -> measured variant."""
    value = getattr(module, "SYNC_FREE", None)
    return dict(value) if isinstance(value, dict) else {}


def messages(module) -> str:
    """Every message the rule can print: the rule class's ``message`` and module-level ``*_MESSAGE``s."""
    out = [v for k, v in vars(module).items() if k.endswith("MESSAGE") and isinstance(v, str)]
    out += [v.message for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, Rule) and v is not Rule and v.__module__ == module.__name__]
    return "\n".join(out)


def condition(module) -> Optional[str]:
    """The rule's documented argument condition, if its calls sync only with some arguments."""
    text = getattr(module, "SYNC_CONDITION", None)
    return text if isinstance(text, str) and text.strip() else None
