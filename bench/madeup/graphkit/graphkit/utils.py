import torch


def maybe_num_nodes(edge_index, num_nodes=None):
    if num_nodes is not None:
        return num_nodes
    return int(edge_index.max()) + 1 if edge_index.numel() > 0 else 0  # SYNC


def scatter_add(src, index, dim_size):
    out = src.new_zeros((dim_size,) + src.shape[1:])
    return out.index_add_(0, index, src)


def degree(index, num_nodes=None, dtype=None):
    n = maybe_num_nodes(index, num_nodes)
    one = torch.ones(index.size(0), dtype=dtype or torch.float, device=index.device)
    return scatter_add(one, index, n)


def add_self_loops(edge_index, num_nodes=None):
    n = maybe_num_nodes(edge_index, num_nodes)
    loop = torch.arange(n, device=edge_index.device).unsqueeze(0).repeat(2, 1)
    return torch.cat([edge_index, loop], dim=1)


def remove_self_loops(edge_index, edge_attr=None):
    mask = edge_index[0] != edge_index[1]
    edge_index = edge_index[:, mask]  # SYNC
    return edge_index, edge_attr if edge_attr is None else edge_attr[mask]  # SYNC


def to_dense_batch(x, batch, fill_value=0.0):
    batch_size = int(batch.max()) + 1  # SYNC
    counts = torch.bincount(batch, minlength=batch_size)  # SYNC
    max_nodes = int(counts.max())  # SYNC
    cum = torch.cat([counts.new_zeros(1), counts.cumsum(0)[:-1]])
    idx = torch.arange(batch.size(0), device=x.device) - cum[batch] + batch * max_nodes
    out = x.new_full((batch_size * max_nodes,) + x.shape[1:], fill_value)
    out[idx] = x
    mask = torch.zeros(batch_size * max_nodes, dtype=torch.bool, device=x.device)
    mask[idx] = True  # SYNC
    return out.view(batch_size, max_nodes, *x.shape[1:]), mask.view(batch_size, max_nodes)
