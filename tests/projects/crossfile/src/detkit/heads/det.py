import torch
from torch import nn

from detkit import TaskAlignedAssigner, pairs_of
from detkit.heads.base import BaseHead
from detkit.ops import host
from detkit.ops.pairs import scale_of


class DetHead(BaseHead):
    def __init__(self, dim):
        super().__init__(dim)
        self.assigner = TaskAlignedAssigner()

    def forward(self, pred, gt, labels, pos_mask):
        fg_mask, target = self.assigner(pred, gt)
        if fg_mask.sum():  # error: TSL302
            loss = pred[fg_mask] - target[fg_mask]  # error: TSL103
        a1, p = pairs_of(labels)
        pos_mask[a1, p] = 1  # error: TSL203
        keep = self.decode(pred)
        out = pred[keep]  # error: TSL103
        base = super().forward(pred)
        big = base[base > 0]  # error: TSL103
        anchors = self.anchors[self.anchors[:, 0] > 0]  # error: TSL103
        pts = host.grid(8)
        inside = pts[pts[:, 0] > 0]  # ok: CPU tensors
        on_host = host.as_list(pred)
        values = on_host.tolist()  # ok: already on the host
        area = scale_of(gt)
        if area.max() > 10:  # error: TSL302
            pass
        return loss, out, big, anchors, inside, values
