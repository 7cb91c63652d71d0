import torch


def grid(n):
    # a CPU tensor: indexing it with its own mask stays on the host
    return torch.rand(n, 2)


def as_list(t):
    return t.cpu()  # error: TSL003
