import torch
from torchvision.ops import batched_nms


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1, boxes2):
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area1[:, None] + area2 - inter)


def encode(matched, anchors, weights=(10.0, 10.0, 5.0, 5.0)):
    wx, wy, ww, wh = weights
    aw = anchors[:, 2] - anchors[:, 0]
    ah = anchors[:, 3] - anchors[:, 1]
    ax = anchors[:, 0] + 0.5 * aw
    ay = anchors[:, 1] + 0.5 * ah
    gw = matched[:, 2] - matched[:, 0]
    gh = matched[:, 3] - matched[:, 1]
    gx = matched[:, 0] + 0.5 * gw
    gy = matched[:, 1] + 0.5 * gh
    return torch.stack([wx * (gx - ax) / aw, wy * (gy - ay) / ah, ww * torch.log(gw / aw), wh * torch.log(gh / ah)], dim=1)


class Matcher:
    BELOW_LOW_THRESHOLD = -1
    BETWEEN_THRESHOLDS = -2

    def __init__(self, high=0.5, low=0.4, allow_low_quality_matches=True):
        self.high, self.low = high, low
        self.allow_low_quality_matches = allow_low_quality_matches

    def __call__(self, match_quality_matrix):
        if match_quality_matrix.numel() == 0:
            return torch.full((match_quality_matrix.shape[1],), -1, dtype=torch.int64, device=match_quality_matrix.device)
        matched_vals, matches = match_quality_matrix.max(dim=0)
        all_matches = matches.clone() if self.allow_low_quality_matches else None
        below = matched_vals < self.low
        between = (matched_vals >= self.low) & (matched_vals < self.high)
        matches[below] = self.BELOW_LOW_THRESHOLD
        matches[between] = self.BETWEEN_THRESHOLDS
        if self.allow_low_quality_matches:
            highest, _ = match_quality_matrix.max(dim=1)
            gt_pred_pairs = torch.where(match_quality_matrix == highest[:, None])  # SYNC
            pred_inds = gt_pred_pairs[1]
            matches[pred_inds] = all_matches[pred_inds]
        return matches


def postprocess(cls_logits, box_deltas, anchors, score_thresh=0.05, nms_thresh=0.5, topk=1000, max_det=100):
    results = []
    for logits, deltas in zip(cls_logits, box_deltas):
        scores = torch.sigmoid(logits).flatten()
        keep = scores > score_thresh
        scores = scores[keep]  # SYNC
        idxs = torch.nonzero(keep).squeeze(1)  # SYNC
        num_topk = min(topk, idxs.size(0))
        scores, order = scores.sort(descending=True)
        scores, order = scores[:num_topk], order[:num_topk]
        idxs = idxs[order]
        anchor_idxs = idxs // logits.shape[-1]
        labels = idxs % logits.shape[-1]
        boxes = anchors[anchor_idxs] + deltas[anchor_idxs]
        keep = batched_nms(boxes, scores, labels, nms_thresh)  # SYNC
        keep = keep[:max_det]
        results.append({"boxes": boxes[keep], "scores": scores[keep], "labels": labels[keep]})
    return results
