import torch


def get_rays(h, w, focal, c2w):
    i, j = torch.meshgrid(torch.arange(w, device=c2w.device), torch.arange(h, device=c2w.device), indexing="xy")
    dirs = torch.stack([(i - w * 0.5) / focal, -(j - h * 0.5) / focal, -torch.ones_like(i)], -1)
    rays_d = (dirs[..., None, :] * c2w[:3, :3]).sum(-1)
    return c2w[:3, -1].expand(rays_d.shape), rays_d


def sample_along(rays_o, rays_d, near, far, n, perturb=True):
    t = torch.linspace(0.0, 1.0, n, device=rays_o.device)
    z = near * (1.0 - t) + far * t
    z = z.expand(rays_o.shape[0], n)
    if perturb:
        mids = 0.5 * (z[:, 1:] + z[:, :-1])
        upper = torch.cat([mids, z[:, -1:]], -1)
        lower = torch.cat([z[:, :1], mids], -1)
        z = lower + (upper - lower) * torch.rand_like(z)
    return rays_o[:, None] + rays_d[:, None] * z[..., None], z


def sample_pdf(bins, weights, n):
    pdf = weights / weights.sum(-1, keepdim=True)
    cdf = torch.cumsum(pdf, -1)
    cdf = torch.cat([torch.zeros_like(cdf[:, :1]), cdf], -1)
    u = torch.rand(cdf.shape[0], n, device=cdf.device)
    idx = torch.searchsorted(cdf, u, right=True)
    below = (idx - 1).clamp(min=0)
    above = idx.clamp(max=cdf.shape[-1] - 1)
    return torch.gather(bins, 1, below), torch.gather(bins, 1, above)
