import torch


def resolve_device(device=None):
    if device is None or device == "gpu":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(device)


def clamp_norm(x, maxnorm, p=2, dim=-1):
    norm = x.norm(p=p, dim=dim, keepdim=True)
    mask = (norm < maxnorm).type_as(x)
    return mask * x + (1 - mask) * (x / norm.clamp_min(1e-12) * maxnorm)


def batched_scores(scorer, h, r, num_entities, slice_size):
    parts = []
    for start in range(0, num_entities, slice_size):
        parts.append(scorer(h, r, start, min(start + slice_size, num_entities)))
    return torch.cat(parts, dim=1)
