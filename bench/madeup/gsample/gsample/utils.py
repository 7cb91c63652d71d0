from typing import Optional, Tuple

import torch
from torch import Tensor


def maybe_num_nodes(edge_index: Tensor, num_nodes: Optional[int] = None) -> int:
    if num_nodes is not None:
        return num_nodes
    return int(edge_index.max()) + 1 if edge_index.numel() > 0 else 0  # SYNC


def degree(index: Tensor, num_nodes: Optional[int] = None) -> Tensor:
    n = maybe_num_nodes(index[None], num_nodes)
    out = torch.zeros(n, dtype=torch.float, device=index.device)
    return out.scatter_add_(0, index, torch.ones_like(index, dtype=torch.float))


def remove_self_loops(edge_index: Tensor, edge_attr: Optional[Tensor] = None) -> Tuple[Tensor, Optional[Tensor]]:
    mask = edge_index[0] != edge_index[1]
    edge_index = edge_index[:, mask]  # SYNC
    if edge_attr is not None:
        edge_attr = edge_attr[mask]  # SYNC
    return edge_index, edge_attr


def add_self_loops(edge_index: Tensor, num_nodes: int) -> Tensor:
    loop = torch.arange(num_nodes, device=edge_index.device)
    return torch.cat([edge_index, torch.stack([loop, loop])], dim=1)


def subgraph(subset: Tensor, edge_index: Tensor, num_nodes: int, relabel: bool = True) -> Tensor:
    node_mask = torch.zeros(num_nodes, dtype=torch.bool, device=edge_index.device)
    node_mask[subset] = True  # SYNC
    edge_mask = node_mask[edge_index[0]] & node_mask[edge_index[1]]
    edge_index = edge_index[:, edge_mask]  # SYNC
    if relabel:
        mapping = torch.full((num_nodes,), -1, dtype=torch.long, device=edge_index.device)
        mapping[subset] = torch.arange(subset.numel(), device=edge_index.device)
        edge_index = mapping[edge_index]
    return edge_index
