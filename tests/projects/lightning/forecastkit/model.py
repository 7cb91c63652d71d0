from typing import Any, Dict

import torch
import torch.nn as nn

from forecastkit.base import BaseModel


class Forecaster(BaseModel):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        pred = self.net(x["encoder_cont"])
        target = y[0]
        valid = target > 0
        if valid.any():  # error: TSL302  (the Trainer moved the batch to the GPU)
            pred = pred[valid]  # error: TSL103
        longest = int(x["encoder_lengths"].max())  # error: TSL004
        steps = x["decoder_lengths"].to(self.device)  # ok: already on the device, no copy
        names = x.get("groups")  # ok: a lookup in the batch
        if names is None:  # ok: an identity test
            pass
        loss = (pred - target[: pred.shape[0]]).abs().mean()
        self.log_loss(loss)
        return loss + longest * 0 + steps.sum() * 0


class Segmenter(BaseModel):
    def __init__(self):
        super().__init__()
        self.net = nn.Conv2d(3, 2, 1)

    def training_step(self, batch: Any, batch_idx: int):  # `Any` says nothing: still a device batch
        image, mask = batch["image"], batch["mask"]
        if mask.sum() == 0:  # error: TSL302
            return None
        if image.ndim == 3 or image.shape[0] > 1:  # ok: Python ints
            image = image.unsqueeze(0) if image.ndim == 3 else image
        if image.dtype == torch.uint8 or batch["image"].device.type == "cpu":  # ok: Python values
            image = image.float()
        return self.net(image).mean()

    def validation_step(self, batch: Dict[str, torch.Tensor], batch_idx: int):
        labels = batch["label"]
        if labels.max() > 9:  # error: TSL302  (a dict of tensors, moved to the GPU)
            pass
        return self.net(batch["image"]).mean()


class PlainStep(nn.Module):
    # not a LightningModule: its caller passes whatever it has, on whichever device
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def training_step(self, batch):
        x, y = batch
        if y.any():  # ok: nothing says where `y` lives
            pass
        return self.net(x)
