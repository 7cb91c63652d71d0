"""A real training loop for ``torchsync-lint trace``: torchvision's Faster R-CNN (MobileNetV3-Large
FPN, random weights) on synthetic images and boxes made on the GPU, SGD, the loss logged every
``--log-every`` steps.

    torchsync-lint trace --steps 100 --warmup 2 -- python examples/trace_fasterrcnn.py --steps 200

The syncs it reports are the model's own (torchvision's detection code) and the logging line.
"""

import argparse

import torch
import torchvision


def synthetic_batch(batch: int, size: int, device, classes: int = 91):
    images = [torch.rand(3, size, size, device=device) for _ in range(batch)]
    targets = []
    for _ in range(batch):
        n = 4
        xy = torch.rand(n, 2, device=device) * (size - 80)
        wh = 16 + torch.rand(n, 2, device=device) * 64
        boxes = torch.cat([xy, xy + wh], dim=1)
        labels = torch.randint(1, classes, (n,), device=device)
        targets.append({"boxes": boxes, "labels": labels})
    return images, targets


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--size", type=int, default=320)
    p.add_argument("--log-every", type=int, default=10)
    args = p.parse_args()
    device = torch.device("cuda")
    torch.manual_seed(0)
    model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_fpn(
        weights=None, weights_backbone=None, min_size=args.size, max_size=args.size).to(device)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.005, momentum=0.9, weight_decay=1e-4)
    for step in range(args.steps):
        images, targets = synthetic_batch(args.batch, args.size, device)
        losses = model(images, targets)
        loss = sum(losses.values())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % args.log_every == 0:
            print(f"step {step} loss {loss.item():.4f}", flush=True)


if __name__ == "__main__":
    main()
