import torch


def get_pairs(labels):
    same = labels[:, None] == labels[None, :]
    a1, p = torch.where(same)  # error: TSL101
    return a1, p


def scale_of(boxes):
    return (boxes[:, 2:] - boxes[:, :2]).prod(-1)
