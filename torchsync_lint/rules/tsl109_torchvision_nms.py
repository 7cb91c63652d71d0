"""TSL109 torchvision-nms."""

import libcst as cst

from torchsync_lint.rules.base import Rule

NMS_CALLS = frozenset(
    {
        "torch.ops.torchvision.nms",
        "torchvision.ops.nms",
        "torchvision.ops.batched_nms",
        "torchvision.ops.boxes.nms",
        "torchvision.ops.boxes.batched_nms",
        "torchvision.ops.boxes._batched_nms_vanilla",
        "torchvision.ops.boxes._batched_nms_coordinate_trick",
    }
)


class TorchvisionNms(Rule):
    """
    ## What it does
    Flags calls of torchvision's non-maximum suppression: `torchvision.ops.nms`,
    `torchvision.ops.batched_nms` (however imported) and the raw `torch.ops.torchvision.nms`.

    ## Why is this bad?
    The CUDA kernel computes an overlap mask on the GPU, then copies it to the host to pick the
    boxes to keep, so the result has a data-dependent length. The copy waits for every queued
    kernel. Detection models call it per image and per level; each call is a stall.

    ## Example
    ```python
    import torch.nn as nn
    from torchvision.ops import nms


    class Head(nn.Module):
        def forward(self, boxes, scores):
            return nms(boxes, scores, 0.5)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn
    from torchvision.ops import box_iou


    class Head(nn.Module):
        def forward(self, boxes, scores):
            # "fast NMS" (YOLACT): fixed size, suppressed boxes get score 0, no host copy
            order = scores.argsort(descending=True)
            boxes, scores = boxes[order], scores[order]
            iou = box_iou(boxes, boxes).triu(diagonal=1)
            suppressed = (iou > 0.5).any(dim=0)
            return boxes, torch.where(suppressed, torch.zeros_like(scores), scores)
    ```

    ## Fix safety
    Unsafe: there is no sync-free form in torchvision. Batching (`batched_nms` over all images
    and classes) turns many syncs into one; fast NMS (above) removes the sync but suppresses
    slightly more boxes than greedy NMS and keeps a fixed-size, zero-scored output.

    ## Known problems
    Reported wherever it runs in hot or unknown code, also in evaluation post-processing where
    one sync per batch may be acceptable: silence those lines with `# noqa: TSL109`.

    ## Verify
    Measured on an H200 (torch 2.11, torchvision 0.26): every `torch.ops.torchvision.nms` call of
    eight detection models printed the sync debug mode's warning (1,304 in the recorded steps).

    ## References
    - https://pytorch.org/vision/stable/generated/torchvision.ops.nms.html
    - bench/data/torchvision-0.26.0-syncs.json
    """

    code = "TSL109"
    name = "torchvision-nms"
    message = (
        "torchvision NMS copies its keep-mask to the host and waits for the GPU; call it once per batch "
        "(`batched_nms` over all images), or use a fixed-size fast NMS with `box_iou` and `torch.where`"
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) in NMS_CALLS:
            self.report(node)
