"""PyTorch Lightning: a LightningModule's step hooks get their batch on the module's device (the
Trainer moves it there before the hook runs)."""

from __future__ import annotations

from typing import Optional

from torchsync_lint.inference.values import BATCH, CUDA, DICT, LIST, TENSOR, TUPLE, Value

# LightningModule hooks whose first argument is the batch, moved to the device by the Trainer
LIGHTNING_STEPS = frozenset("training_step validation_step test_step predict_step".split())


def moved_to_device(v: Value) -> Value:
    """What a batch declared as ``v`` holds once moved to the GPU: its tensors there, an unknown
    or ``Any`` batch a device batch (its parts tensors under Tensor methods)."""
    if v.kind == TENSOR:
        return v.with_(device=CUDA, assumed=False)
    if v.kind in (DICT, LIST, TUPLE) and (v.item is not None or v.elts):
        return v.with_(item=moved_to_device(v.item) if v.item is not None else None,
                       elts=tuple(moved_to_device(e) for e in v.elts))
    return Value(BATCH, device=CUDA)


def is_lightning_module(cls, index, project, depth: int = 0) -> bool:
    """A LightningModule subclass: by a base's name here, or through the project's bases."""
    if cls is None or depth > 16:
        return False
    for b in cls.bases:
        if b.split(".")[-1].endswith("LightningModule"):
            return True
        local = index.classes.get(b.split(".")[-1])
        if local is not None and local is not cls:
            if is_lightning_module(local, index, project, depth + 1):
                return True
        elif local is None and project is not None:
            key: Optional[str] = project.class_key(b)
            if key is not None and project.has_base_named(key, "LightningModule"):
                return True
    return False
