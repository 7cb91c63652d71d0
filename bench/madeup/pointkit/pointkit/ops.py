import torch


def square_distance(src, dst):
    return torch.cdist(src, dst) ** 2


def index_points(points, idx):
    b = points.shape[0]
    batch = torch.arange(b, device=points.device).view(b, *([1] * (idx.dim() - 1))).expand_as(idx)
    return points[batch, idx]


def farthest_point_sample(xyz, npoint):
    b, n, _ = xyz.shape
    centroids = torch.zeros(b, npoint, dtype=torch.long, device=xyz.device)
    distance = torch.full((b, n), 1e10, device=xyz.device)
    farthest = torch.randint(0, n, (b,), device=xyz.device)
    batch = torch.arange(b, device=xyz.device)
    for i in range(npoint):
        centroids[:, i] = farthest
        centroid = xyz[batch, farthest].view(b, 1, 3)
        dist = ((xyz - centroid) ** 2).sum(-1)
        distance = torch.minimum(distance, dist)
        farthest = distance.argmax(-1)
    return centroids


def ball_query(radius, nsample, xyz, new_xyz):
    b, n, _ = xyz.shape
    s = new_xyz.shape[1]
    group_idx = torch.arange(n, device=xyz.device).view(1, 1, n).repeat(b, s, 1)
    sqr = square_distance(new_xyz, xyz)
    group_idx[sqr > radius ** 2] = n
    group_idx = group_idx.sort(dim=-1)[0][:, :, :nsample]
    first = group_idx[:, :, :1].expand(-1, -1, nsample)
    mask = group_idx == n
    group_idx[mask] = first[mask]  # SYNC
    return group_idx


def voxel_downsample(points, size):
    keys = torch.floor(points / size).long()
    uniq, inverse = torch.unique(keys, dim=0, return_inverse=True)  # SYNC
    out = torch.zeros(uniq.shape[0], 3, device=points.device)
    out.index_add_(0, inverse, points)
    counts = torch.bincount(inverse)  # SYNC
    return out / counts[:, None]
