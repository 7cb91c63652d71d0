"""An entry point on real library code: a torchvision detection model's training step.

    torchsync-lint --verify-entry examples.detection_entry:fasterrcnn_train_step \\
        $(python -c "import torchvision, os; print(os.path.dirname(torchvision.__file__))")/models/detection

Random weights (no download), two 320x320 images with three boxes each. Syncs inside
``torchvision.ops`` (not linted here) land on the detection file's line that called them;
syncs on lines no rule flagged come back as TSL900 findings.
"""

from __future__ import annotations

import torch


def _batch(device: str = "cuda", n: int = 2, size: int = 320, boxes: int = 3):
    g = torch.Generator().manual_seed(0)
    images = [torch.rand(3, size, size, generator=g).to(device) for _ in range(n)]
    targets = []
    for _ in range(n):
        xy = torch.rand(boxes, 2, generator=g) * (size / 2)
        wh = torch.rand(boxes, 2, generator=g) * (size / 3) + 8
        targets.append({"boxes": torch.cat([xy, xy + wh], 1).to(device),
                        "labels": torch.randint(1, 5, (boxes,), generator=g).to(device)})
    return images, targets


def fasterrcnn_train_step():
    from torchvision.models.detection import fasterrcnn_mobilenet_v3_large_320_fpn

    torch.manual_seed(0)
    model = fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None, num_classes=5).cuda().train()
    images, targets = _batch()

    def step(images, targets):
        losses = model(images, targets)
        total = sum(losses.values())
        total.backward()
        return total

    return step, (images, targets)
