import numpy as np
import torch
import torch.nn.functional as F

from pointkit.model import PointNetPP


def augment(points):
    theta = np.random.uniform(0, 2 * np.pi)
    rot = torch.tensor([[np.cos(theta), -np.sin(theta), 0], [np.sin(theta), np.cos(theta), 0], [0, 0, 1]],
                       dtype=points.dtype)
    return points @ rot  # the batch is still on the host here


def train(loader, epochs=1, device="cuda"):
    model = PointNetPP().to(device)  # SYNC
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    seen, correct = 0, 0
    for _ in range(epochs):
        for points, labels in loader:
            points = augment(points)
            points, labels = points.to(device), labels.to(device)  # SYNC
            logits = model(points)
            loss = F.cross_entropy(logits, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            correct += (logits.argmax(-1) == labels).sum()
            seen += labels.numel()
    return correct.item() / seen  # SYNC


@torch.no_grad()
def confusion(model, loader, classes, device):
    mat = torch.zeros(classes, classes, dtype=torch.long, device=device)
    for points, labels in loader:
        pred = model(points.to(device)).argmax(-1)  # SYNC
        mat.index_put_((labels.to(device), pred), torch.ones_like(pred), accumulate=True)  # SYNC
    per_class = mat.diag() / mat.sum(1).clamp(min=1)
    return per_class.cpu().numpy()  # SYNC
