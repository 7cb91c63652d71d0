"""Scatter reductions over node/edge indices, written without an extension."""
from typing import Optional

import torch


def broadcast(src, other, dim):
    if dim < 0:
        dim = other.dim() + dim
    if src.dim() == 1:
        for _ in range(0, dim):
            src = src.unsqueeze(0)
    for _ in range(src.dim(), other.dim()):
        src = src.unsqueeze(-1)
    return src.expand(other.size())


def scatter_sum(src, index, dim: int = -1, dim_size: Optional[int] = None):
    index = broadcast(index, src, dim)
    size = list(src.size())
    if dim_size is not None:
        size[dim] = dim_size
    elif index.numel() == 0:
        size[dim] = 0
    else:
        size[dim] = int(index.max()) + 1  # SYNC
    out = torch.zeros(size, dtype=src.dtype, device=src.device)
    return out.scatter_add_(dim, index, src)


def scatter_mean(src, index, dim: int = -1, dim_size: Optional[int] = None):
    out = scatter_sum(src, index, dim, dim_size)
    ones = torch.ones(index.size(), dtype=src.dtype, device=src.device)
    count = scatter_sum(ones, index, 0, out.size(dim))
    count = count.clamp(min=1)
    return out / broadcast(count, out, dim)


def softmax(src, index, num_nodes: Optional[int] = None):
    n = int(index.max()) + 1 if num_nodes is None else num_nodes  # SYNC
    src_max = torch.zeros(n, dtype=src.dtype, device=src.device).scatter_reduce(0, index, src, reduce="amax",
                                                                               include_self=False)
    out = (src - src_max[index]).exp()
    return out / (scatter_sum(out, index, 0, n)[index] + 1e-16)
