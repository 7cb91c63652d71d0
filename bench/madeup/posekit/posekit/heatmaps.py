"""Gaussian target heatmaps, and keypoints decoded back from predicted ones."""
import numpy as np
import torch
import torch.nn.functional as F


def gaussian_targets(keypoints, visible, size, sigma=2.0):
    """keypoints: (K, 2) pixel coordinates on the host; built in the loader's workers."""
    h, w = size
    ys = torch.arange(h, dtype=torch.float32)[:, None]
    xs = torch.arange(w, dtype=torch.float32)[None, :]
    maps = torch.zeros(len(keypoints), h, w)
    for k, (x, y) in enumerate(keypoints.tolist()):
        if visible[k] > 0:
            maps[k] = torch.exp(-((xs - x) ** 2 + (ys - y) ** 2) / (2 * sigma ** 2))
    return maps


def decode(heatmaps, kernel=3):
    """(B, K, H, W) -> (B, K, 2) coordinates and (B, K) scores, on the heatmaps' device."""
    b, k, h, w = heatmaps.shape
    pooled = F.max_pool2d(heatmaps, kernel, stride=1, padding=kernel // 2)
    peaks = heatmaps * (pooled == heatmaps)
    scores, idx = peaks.view(b, k, -1).max(dim=-1)
    coords = torch.stack([idx % w, idx // w], dim=-1).float()
    return coords, scores


def refine(coords, heatmaps):
    """Quarter-pixel shift toward the higher neighbour, one keypoint at a time (as reference code does)."""
    b, k, h, w = heatmaps.shape
    for i in range(b):
        for j in range(k):
            x, y = int(coords[i, j, 0]), int(coords[i, j, 1])  # SYNC
            if 1 < x < w - 1 and 1 < y < h - 1:
                dx = heatmaps[i, j, y, x + 1] - heatmaps[i, j, y, x - 1]
                dy = heatmaps[i, j, y + 1, x] - heatmaps[i, j, y - 1, x]
                coords[i, j] += torch.sign(torch.stack([dx, dy])) * 0.25
    return coords


def oks(pred, gt, visible, area, sigmas):
    d2 = ((pred - gt) ** 2).sum(-1)
    e = d2 / (2 * area[:, None] * sigmas[None, :] ** 2 + np.spacing(1))
    vis = visible > 0
    return (torch.exp(-e) * vis).sum(-1) / vis.sum(-1).clamp_min(1)
