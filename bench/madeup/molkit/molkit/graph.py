"""Molecular graphs: atoms, bonds and a batch of them as one disconnected graph."""
from dataclasses import dataclass

import torch


@dataclass
class Graph:
    z: torch.Tensor
    pos: torch.Tensor
    edge_index: torch.Tensor
    y: torch.Tensor

    @property
    def num_nodes(self):
        return self.z.shape[0]


@dataclass
class Batch:
    z: torch.Tensor
    pos: torch.Tensor
    edge_index: torch.Tensor
    batch: torch.Tensor
    y: torch.Tensor
    num_graphs: int

    def to(self, device):
        return Batch(self.z.to(device), self.pos.to(device), self.edge_index.to(device),  # SYNC
                     self.batch.to(device), self.y.to(device), self.num_graphs)


def collate(graphs):
    offsets, edges, batch = 0, [], []
    for i, g in enumerate(graphs):
        edges.append(g.edge_index + offsets)
        batch.append(torch.full((g.num_nodes,), i, dtype=torch.long))
        offsets += g.num_nodes
    return Batch(torch.cat([g.z for g in graphs]), torch.cat([g.pos for g in graphs]), torch.cat(edges, dim=1),
                 torch.cat(batch), torch.stack([g.y for g in graphs]), len(graphs))


def radius_graph(pos, r, batch):
    d = torch.cdist(pos, pos)
    same = batch[:, None] == batch[None, :]
    adj = (d < r) & same & ~torch.eye(pos.shape[0], dtype=torch.bool, device=pos.device)
    return adj.nonzero().t()  # SYNC
