import numpy as np
import torch


class StreamingIoU:
    def __init__(self, num_classes, ignore_index=255, device="cuda"):
        self.num_classes = num_classes
        self.ignore_index = ignore_index
        self.hist = torch.zeros(num_classes, num_classes, dtype=torch.long, device=device)

    def update(self, pred, target):
        k = (target >= 0) & (target != self.ignore_index)
        idx = self.num_classes * target[k] + pred[k]  # SYNC
        self.hist += torch.bincount(idx, minlength=self.num_classes ** 2).view(self.num_classes, self.num_classes)  # SYNC

    def compute(self):
        hist = self.hist.cpu().numpy().astype(np.float64)  # SYNC
        iou = np.diag(hist) / (hist.sum(0) + hist.sum(1) - np.diag(hist) + 1e-10)
        return {"miou": float(np.nanmean(iou)), "acc": float(np.diag(hist).sum() / hist.sum())}


@torch.no_grad()
def evaluate(model, loader, num_classes, device="cuda", tta=False):
    metric = StreamingIoU(num_classes, device=device)
    model.eval()
    for images, masks in loader:
        images = images.to(device)  # SYNC
        masks = masks.to(device).long()  # SYNC
        logits = model(images)
        if tta:
            logits = logits + model(images.flip(-1)).flip(-1)
        metric.update(logits.argmax(1), masks)
    return metric.compute()
