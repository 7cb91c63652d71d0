import torch
import torch.nn.functional as F

from posekit.heatmaps import decode, oks, refine

COCO_SIGMAS = [.26, .25, .25, .35, .35, .79, .79, .72, .72, .62, .62, 1.07, 1.07, .87, .87, .89, .89]


def train(model, loader, val_loader, device="cuda", epochs=10):
    model = model.to(device)  # SYNC
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        model.train()
        for images, targets, weights in loader:
            images = images.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            weights = weights.to(device, non_blocking=True)
            pred = model(images)
            loss = (F.mse_loss(pred, targets, reduction="none") * weights[..., None, None]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch} ap {validate(model, val_loader, device):.3f}")


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    sigmas = torch.tensor(COCO_SIGMAS) / 10
    total, n = 0.0, 0
    for images, keypoints, visible, area in loader:
        heatmaps = model(images.to(device, non_blocking=True))
        coords, scores = decode(heatmaps)
        coords = refine(coords, heatmaps)
        stride = images.shape[-1] / heatmaps.shape[-1]
        s = oks(coords * stride, keypoints.to(device), visible.to(device), area.to(device), sigmas.to(device))  # SYNC
        total += (s > 0.5).float().sum().item()  # SYNC
        n += s.numel()
    return total / max(n, 1)
