"""Trainers that move the batch to the device before a hook runs: a PyTorch Lightning
LightningModule's step hooks get it as their first argument, a Hugging Face ``transformers.Trainer``
subclass's ``compute_loss`` / ``training_step`` / ``prediction_step`` as ``inputs``, after the model
(``Trainer._prepare_inputs`` moved it)."""

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


# transformers.Trainer hooks whose second argument (after the model) is the prepared batch
HF_TRAINER_STEPS = frozenset("compute_loss training_step prediction_step".split())


def device_batch_position(func, index, project) -> int:
    """Which parameter of ``func`` (counting ``self``) a trainer fills with a batch already on the
    device; 0 for none."""
    if func.name in LIGHTNING_STEPS and is_lightning_module(func.cls, index, project):
        return 1
    if func.name in HF_TRAINER_STEPS and func.cls is not None and (
            _hf_trainer(func.cls) or any_base(func.cls, index, project, _hf_trainer,
                                              lambda key: any(_hf_base(b) for b in project.bases_in_ancestry(key)))):
        return 2
    return 0


def _hf_base(base: str) -> bool:
    return base.startswith("transformers.") and base.endswith("Trainer")


def _hf_trainer(cls) -> bool:
    return any(_hf_base(b) for b in cls.bases)


def is_lightning_module(cls, index, project) -> bool:
    """A LightningModule subclass: by a base's name here, or through the project's bases."""
    if cls is None:
        return False
    return _named(cls) or any_base(cls, index, project, _named,
                                   lambda key: project.has_base_named(key, "LightningModule"))


def _named(cls) -> bool:
    return any(b.split(".")[-1].endswith("LightningModule") for b in cls.bases)
