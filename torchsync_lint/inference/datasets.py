"""Methods a DataLoader calls to fetch samples (``Dataset.__getitem__``, ``IterableDataset.__iter__``):
they run on the host, in the loader's workers, on what the dataset holds, so a tensor there whose
device inference cannot name is on the host (a dataset that keeps GPU tensors names the device)."""

from __future__ import annotations

from typing import Optional

from torchsync_lint.inference.defs import FunctionInfo, any_base

DATASET_BASES = frozenset(("torch.utils.data.Dataset", "torch.utils.data.IterableDataset",
                           "torch.utils.data.dataset.Dataset", "torch.utils.data.dataset.IterableDataset"))
ITEM_METHODS = frozenset(("__getitem__", "__getitems__", "__iter__", "__next__"))


def fetches_samples(func: Optional[FunctionInfo], index, project) -> bool:
    """``func`` is (or is nested in) a sample-fetching method of a torch dataset class, whose bases
    are followed through this file and, with ``project``, the others."""
    while func is not None and func.parent is not None:
        func = func.parent
    if func is None or func.cls is None or func.name not in ITEM_METHODS:
        return False
    local = lambda c: any(b in DATASET_BASES for b in c.bases)  # noqa: E731
    foreign = (lambda key: any(b in DATASET_BASES for b in project.bases_in_ancestry(key))) if project else (
        lambda _key: False)
    return local(func.cls) or any_base(func.cls, index, project, local, foreign)

