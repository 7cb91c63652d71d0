"""The sync catalog: which callables were measured on a GPU to make the host wait.

Read-only access to ``data/sync_catalog.json`` (written by ``python -m torchsync_lint.catalog.sweep``);
never imports torch. Names are qualified as the rules write them: ``torch.nonzero``,
``torch.Tensor.item``, ``torch.nn.functional.one_hot``, ``torchvision.ops.nms``. A callable *syncs*
when some measured argument variant synced; ``syncs(name, variant)`` asks about one variant.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Dict, List, Optional

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sync_catalog.json")
# Names the rules use for the same callable as the catalog's (an alias module, a raw binding).
ALIASES = {
    "torch.functional.": "torch.",
    "torch._C._nn.": "torch.nn.functional.",
    "torch._C._linalg.linalg_": "torch.linalg.",
    "torch.ops.torchvision.": "torchvision.ops.",
    "torchvision.ops.boxes.": "torchvision.ops.",
    "torchvision.ops.roi_align.": "torchvision.ops.",
    "torch.nn.utils.clip_grad.": "torch.nn.utils.",
    "torch.cuda.memory.": "torch.cuda.",
}


@lru_cache(maxsize=None)
def load(path: str = DATA) -> dict:
    """The whole catalog: ``{"format", "environment", "entries"}``."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def entries() -> Dict[str, dict]:
    return load()["entries"]


def environment() -> dict:
    """Where it was measured: torch and torchvision versions, GPU name, sweep seconds."""
    return load()["environment"]


# Packages that re-export their submodules' functions: `torchvision.ops.giou_loss.generalized_box_iou_loss`
# is measured as `torchvision.ops.generalized_box_iou_loss`.
REEXPORTING = ("torchvision.ops.", "torch.nn.utils.")


def canonical(qualname: str) -> str:
    """The catalog's name for ``qualname`` (rules sometimes name an alias module)."""
    for prefix, replacement in ALIASES.items():
        if qualname.startswith(prefix):
            return replacement + qualname[len(prefix):]
    for prefix in REEXPORTING:
        if qualname.startswith(prefix) and qualname.count(".") > prefix.count(".") and qualname not in entries():
            return prefix + qualname.rsplit(".", 1)[1]
    return qualname


def entry(qualname: str) -> Optional[dict]:
    return entries().get(canonical(qualname))


def syncs(qualname: str, variant: Optional[str] = None) -> Optional[bool]:
    """True (synced), False (did not), None (not measured, or could not run)."""
    e = entry(qualname)
    if e is None:
        return None
    if variant is None:
        return e["syncs"]
    row = e["variants"].get(variant)
    return None if row is None else row["synced"]


def argument_dependent(qualname: str) -> bool:
    """Some argument variants synced and others did not."""
    e = entry(qualname)
    return bool(e and e.get("argument_dependent"))


def syncing_callables(prefix: str = "") -> List[str]:
    """Every callable with a variant that synced, sorted."""
    return [q for q, e in entries().items() if e["syncs"] and q.startswith(prefix)]


def sync_free_callables(prefix: str = "") -> List[str]:
    """Every callable measured not to sync in any of its variants, sorted."""
    return [q for q, e in entries().items() if e["syncs"] is False and q.startswith(prefix)]


def tensor_argument_syncs() -> Dict[str, List[str]]:
    """Callables that synced only when one argument was a (CUDA) tensor: measured as a variant
    ``<param>=tensor`` that synced where the default did not (``torch.Tensor.masked_fill`` ->
    ["value"]), or as a variant ``<param>=scalar`` that did not sync where the default, with a
    tensor there, did (``torch.normal`` -> ["std"]): name -> those parameter names."""
    out: Dict[str, List[str]] = {}
    for q, e in entries().items():
        default = e.get("variants", {}).get("default", {})
        for variant, row in e.get("variants", {}).items():
            if variant.endswith("=tensor") and row.get("synced") and default.get("synced") is False:
                out.setdefault(q, []).append(variant[: -len("=tensor")])
            elif variant.endswith("=scalar") and row.get("synced") is False and default.get("synced") is True:
                out.setdefault(q, []).append(variant[: -len("=scalar")])
    return out


def third_party_syncs() -> List[str]:
    """Syncing callables outside torch itself (torchvision.ops...), for rules that flag them by name."""
    return [q for q in syncing_callables() if not q.startswith("torch.")]


def disagreements() -> List[tuple]:
    """(qualname, variant, verdict) where the debug mode and the timing oracle disagreed."""
    out = []
    for q, e in entries().items():
        for label, row in e["variants"].items():
            if "!" in row["how"]:
                out.append((q, label, row["synced"]))
    return out


EXTRA_ENV = "TORCHSYNC_LINT_EXTRA_SYNC_CALLS"


def set_extra_sync_calls(names) -> None:
    """The user's own syncing callables (``extra-sync-calls``); kept in the environment so that the
    engine's worker processes see them as well."""
    os.environ[EXTRA_ENV] = ",".join(sorted(set(names)))


def extra_sync_calls() -> frozenset:
    return frozenset(n for n in os.environ.get(EXTRA_ENV, "").split(",") if n)
