import torch
import torch.nn.functional as F

from .ops import Matcher, box_iou, encode


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(inputs)
    ce = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce * ((1 - p_t) ** gamma)
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    return loss.sum()


class RetinaLoss:
    def __init__(self, num_classes):
        self.num_classes = num_classes
        self.matcher = Matcher()

    def __call__(self, cls_logits, box_deltas, anchors, targets):
        cls_losses, box_losses = [], []
        for logits, deltas, tgt in zip(cls_logits, box_deltas, targets):
            if tgt["boxes"].numel() == 0:
                cls_losses.append(sigmoid_focal_loss(logits, torch.zeros_like(logits)))
                box_losses.append(deltas.sum() * 0)
                continue
            matched_idxs = self.matcher(box_iou(tgt["boxes"], anchors))
            foreground = matched_idxs >= 0
            num_foreground = foreground.sum()
            gt_classes = torch.zeros_like(logits)
            gt_classes[foreground, tgt["labels"][matched_idxs[foreground]]] = 1.0  # SYNC
            valid = matched_idxs != Matcher.BETWEEN_THRESHOLDS
            cls_losses.append(sigmoid_focal_loss(logits[valid], gt_classes[valid]) / max(1, num_foreground))  # SYNC
            matched_boxes = tgt["boxes"][matched_idxs[foreground]]  # SYNC
            target_deltas = encode(matched_boxes, anchors[foreground])  # SYNC
            box_losses.append(F.l1_loss(deltas[foreground], target_deltas, reduction="sum") / max(1, num_foreground))  # SYNC
        return torch.stack(cls_losses).mean(), torch.stack(box_losses).mean()


def train_epoch(model, loss_fn, loader, opt, anchors, device):
    anchors = anchors.to(device)  # SYNC
    for images, targets in loader:
        images = images.to(device)  # SYNC
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]  # SYNC
        cls_logits, box_deltas = model(images)
        cls_loss, box_loss = loss_fn(cls_logits, box_deltas, anchors, targets)
        loss = cls_loss + box_loss
        if not torch.isfinite(loss):  # SYNC
            print("non-finite loss, skipping batch")
            continue
        opt.zero_grad()
        loss.backward()  # SYNC
        opt.step()
