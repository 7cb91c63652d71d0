from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def one_hot_ignore(target: Tensor, num_classes: int, ignore_index: int = 255) -> Tensor:
    valid = target != ignore_index
    target = target.clone()
    target[~valid] = 0
    oh = F.one_hot(target, num_classes).permute(0, 3, 1, 2).float()
    return oh * valid[:, None]


class DiceLoss(nn.Module):
    def __init__(self, num_classes, smooth=1.0, ignore_index=255, class_weights=None):
        super().__init__()
        self.num_classes = num_classes
        self.smooth = smooth
        self.ignore_index = ignore_index
        self.class_weights = torch.tensor(class_weights) if class_weights is not None else None

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        probs = logits.softmax(dim=1)
        oh = one_hot_ignore(target, self.num_classes, self.ignore_index)
        dims = (0, 2, 3)
        inter = (probs * oh).sum(dims)
        card = (probs + oh).sum(dims)
        dice = (2 * inter + self.smooth) / (card + self.smooth)
        present = oh.sum(dims) > 0
        loss = 1 - dice[present]  # SYNC
        if self.class_weights is not None:
            w = self.class_weights.to(logits.device)[present]  # SYNC
            return (loss * w).sum() / w.sum()
        return loss.mean()


class OhemCrossEntropy(nn.Module):
    def __init__(self, ignore_index=255, thresh=0.7, min_kept=100000):
        super().__init__()
        self.ignore_index = ignore_index
        self.thresh = thresh
        self.min_kept = min_kept

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        pixel_losses = F.cross_entropy(logits, target, ignore_index=self.ignore_index, reduction="none").view(-1)
        mask = target.view(-1) != self.ignore_index
        tmp_target = target.clone()
        tmp_target[tmp_target == self.ignore_index] = 0
        prob = logits.softmax(1).gather(1, tmp_target.unsqueeze(1)).view(-1)
        prob, ind = prob[mask].sort()  # SYNC
        if prob.numel() == 0:
            return pixel_losses.sum() * 0
        min_value = prob[min(self.min_kept, prob.numel() - 1)]
        threshold = max(min_value, self.thresh)  # SYNC
        pixel_losses = pixel_losses[mask][ind]  # SYNC
        pixel_losses = pixel_losses[prob < threshold]  # SYNC
        return pixel_losses.mean()


def lovasz_grad(gt_sorted: Tensor) -> Tensor:
    gts = gt_sorted.sum()
    intersection = gts - gt_sorted.float().cumsum(0)
    union = gts + (1 - gt_sorted).float().cumsum(0)
    jaccard = 1.0 - intersection / union
    p = len(gt_sorted)
    if p > 1:
        jaccard[1:p] = jaccard[1:p] - jaccard[0:-1]
    return jaccard


def lovasz_softmax_flat(probs: Tensor, labels: Tensor, classes="present") -> Optional[Tensor]:
    if probs.numel() == 0:
        return probs * 0.0
    losses = []
    for c in range(probs.size(1)):
        fg = (labels == c).float()
        if classes == "present" and fg.sum() == 0:  # SYNC
            continue
        errors = (fg - probs[:, c]).abs()
        errors_sorted, perm = torch.sort(errors, 0, descending=True)
        losses.append(torch.dot(errors_sorted, lovasz_grad(fg[perm])))
    return torch.stack(losses).mean() if losses else None
