import torch
from torch import nn

from .utils import add_self_loops, degree, remove_self_loops, scatter_add, to_dense_batch


class GCNConv(nn.Module):
    def __init__(self, in_ch, out_ch, cached=False):
        super().__init__()
        self.lin = nn.Linear(in_ch, out_ch, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_ch))
        self.cached = cached
        self._cache = None

    def norm(self, edge_index, num_nodes):
        edge_index, _ = remove_self_loops(edge_index)
        edge_index = add_self_loops(edge_index, num_nodes)
        row, col = edge_index
        deg = degree(col, num_nodes)
        dinv = deg.pow(-0.5)
        dinv[dinv == float("inf")] = 0
        return edge_index, dinv[row] * dinv[col]

    def forward(self, x, edge_index):
        if self.cached and self._cache is not None:
            edge_index, w = self._cache
        else:
            edge_index, w = self.norm(edge_index, x.size(0))
            if self.cached:
                self._cache = (edge_index, w)
        h = self.lin(x)
        msg = h[edge_index[0]] * w.unsqueeze(-1)
        return scatter_add(msg, edge_index[1], x.size(0)) + self.bias


class GlobalAttentionPool(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.gate = nn.Linear(ch, 1)

    def forward(self, x, batch):
        dense, mask = to_dense_batch(x, batch)
        score = self.gate(dense).squeeze(-1).masked_fill(~mask, float("-inf"))
        att = score.softmax(-1).unsqueeze(-1)
        return (att * dense).sum(1)


class GNN(nn.Module):
    def __init__(self, in_ch, hidden, out_ch, layers=3):
        super().__init__()
        self.convs = nn.ModuleList([GCNConv(in_ch if i == 0 else hidden, hidden) for i in range(layers)])
        self.pool = GlobalAttentionPool(hidden)
        self.head = nn.Linear(hidden, out_ch)

    def forward(self, x, edge_index, batch):
        for conv in self.convs:
            x = conv(x, edge_index).relu()
        return self.head(self.pool(x, batch))


def train_epoch(model, loader, opt, device):
    model.train()
    total, correct, n = 0.0, 0, 0
    for data in loader:
        data = data.to(device)  # SYNC
        out = model(data.x, data.edge_index, data.batch)
        loss = torch.nn.functional.cross_entropy(out, data.y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += float(loss) * data.num_graphs  # SYNC
        correct += int((out.argmax(-1) == data.y).sum())  # SYNC
        n += data.num_graphs
    return total / n, correct / n
