"""PyTorch Lightning: a LightningModule's step hooks get their batch on the module's device (the
Trainer moves it there before the hook runs)."""

from __future__ import annotations

from torchsync_lint.inference.index import any_base
from torchsync_lint.inference.values import BATCH, CUDA, DICT, LIST, TENSOR, TUPLE, Value

# LightningModule hooks whose first argument is the batch, moved to the device by the Trainer
LIGHTNING_STEPS = frozenset("training_step validation_step test_step predict_step".split())


def moved_to_device(v: Value) -> Value:
    """What a batch declared as ``v`` holds once moved to the GPU: its tensors there, an unknown
    or ``Any`` batch a device batch (its parts tensors under Tensor methods)."""
    if v.kind == TENSOR:
        return v.with_(device=CUDA, assumed=False)
    if v.kind in (DICT, LIST, TUPLE) and (v.item is not None or v.elts or v.keys):
        return v.with_(item=moved_to_device(v.item) if v.item is not None else None,
                       elts=tuple(moved_to_device(e) for e in v.elts),
                       keys=tuple((k, moved_to_device(x)) for k, x in v.keys))
    return Value(BATCH, device=CUDA)


def is_lightning_module(cls, index, project) -> bool:
    """A LightningModule subclass: by a base's name here, or through the project's bases."""
    if cls is None:
        return False
    return _named(cls) or any_base(cls, index, project, _named,
                                   lambda key: project.has_base_named(key, "LightningModule"))


def _named(cls) -> bool:
    return any(b.split(".")[-1].endswith("LightningModule") for b in cls.bases)
