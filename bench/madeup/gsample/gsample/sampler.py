import torch

from .utils import degree, maybe_num_nodes, remove_self_loops, subgraph


class NeighborSampler:
    def __init__(self, edge_index, num_neighbors=(10, 5), num_nodes=None):
        self.edge_index, _ = remove_self_loops(edge_index)
        self.num_nodes = maybe_num_nodes(self.edge_index, num_nodes)
        self.num_neighbors = num_neighbors
        row, col = self.edge_index
        perm = torch.argsort(row)
        self.col = col[perm]
        deg = degree(row, self.num_nodes).long()
        self.rowptr = torch.cat([deg.new_zeros(1), deg.cumsum(0)])

    def sample(self, seeds):
        nodes = seeds
        for k in self.num_neighbors:
            start = self.rowptr[nodes]
            count = self.rowptr[nodes + 1] - start
            rnd = torch.rand(nodes.numel(), k, device=nodes.device)
            pick = (rnd * count[:, None]).long() + start[:, None]
            has = count > 0
            nbrs = self.col[pick[has].flatten()]  # SYNC
            nodes = torch.unique(torch.cat([nodes, nbrs]))  # SYNC
        return nodes, subgraph(nodes, self.edge_index, self.num_nodes)


def train_epoch(model, sampler, x, y, train_idx, opt, batch_size=1024):
    model.train()
    perm = train_idx[torch.randperm(train_idx.numel(), device=train_idx.device)]
    total, correct = 0.0, 0
    for i in range(0, perm.numel(), batch_size):
        seeds = perm[i:i + batch_size]
        nodes, edge_index = sampler.sample(seeds)
        out = model(x[nodes], edge_index)
        pos = torch.searchsorted(nodes, seeds)
        loss = torch.nn.functional.cross_entropy(out[pos], y[seeds])
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += float(loss) * seeds.numel()  # SYNC
        correct += int((out[pos].argmax(-1) == y[seeds]).sum())  # SYNC
    return total / perm.numel(), correct / perm.numel()
