import torch
from torch import nn

from molkit.graph import radius_graph
from molkit.scatter import scatter_sum, softmax


class GaussianSmearing(nn.Module):
    def __init__(self, start=0.0, stop=5.0, num=50):
        super().__init__()
        offset = torch.linspace(start, stop, num)
        self.coeff = -0.5 / (offset[1] - offset[0]).item() ** 2
        self.register_buffer("offset", offset)

    def forward(self, dist):
        return torch.exp(self.coeff * (dist.view(-1, 1) - self.offset.view(1, -1)) ** 2)


class Interaction(nn.Module):
    def __init__(self, hidden, gaussians):
        super().__init__()
        self.filter = nn.Sequential(nn.Linear(gaussians, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.att = nn.Linear(hidden, 1)
        self.out = nn.Linear(hidden, hidden)

    def forward(self, h, edge_index, edge_attr):
        src, dst = edge_index
        msg = h[src] * self.filter(edge_attr)
        alpha = softmax(self.att(msg).squeeze(-1), dst, num_nodes=h.shape[0])
        return h + self.out(scatter_sum(msg * alpha[:, None], dst, 0, h.shape[0]))


class SchNetLike(nn.Module):
    def __init__(self, hidden=64, gaussians=50, cutoff=5.0, layers=3):
        super().__init__()
        self.embedding = nn.Embedding(100, hidden)
        self.smearing = GaussianSmearing(0.0, cutoff, gaussians)
        self.blocks = nn.ModuleList([Interaction(hidden, gaussians) for _ in range(layers)])
        self.head = nn.Linear(hidden, 1)
        self.cutoff = cutoff

    def forward(self, z, pos, batch, num_graphs=None):
        edge_index = radius_graph(pos, self.cutoff, batch)
        row, col = edge_index
        dist = (pos[row] - pos[col]).norm(dim=-1)
        h = self.embedding(z)
        for block in self.blocks:
            h = block(h, edge_index, self.smearing(dist))
        out = scatter_sum(self.head(h), batch, 0, num_graphs)
        return out
