import torch


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(a, b):
    area_a, area_b = box_area(a), box_area(b)
    lt = torch.max(a[:, None, :2], b[:, :2])
    rb = torch.min(a[:, None, 2:], b[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[:, None] + area_b - inter)


def batched_nms(boxes, scores, idxs, iou_threshold):
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64, device=boxes.device)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + 1)
    boxes_for_nms = boxes + offsets[:, None]
    order = scores.argsort(descending=True)
    keep = []
    suppressed = torch.zeros_like(scores, dtype=torch.bool)
    ious = box_iou(boxes_for_nms, boxes_for_nms)
    for i in order.tolist():  # SYNC
        if suppressed[i]:  # SYNC
            continue
        keep.append(i)
        suppressed |= ious[i] > iou_threshold
    return torch.as_tensor(keep, dtype=torch.long, device=boxes.device)  # SYNC
