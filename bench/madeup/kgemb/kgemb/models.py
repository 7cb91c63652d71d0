import torch
from torch import nn

from .utils import clamp_norm, resolve_device


class ERModel(nn.Module):
    def __init__(self, num_entities, num_relations, dim=64, device=None):
        super().__init__()
        self.device = resolve_device(device)
        self.num_entities = num_entities
        self.entity = nn.Embedding(num_entities, dim)
        self.relation = nn.Embedding(num_relations, dim)
        self.to(self.device)  # SYNC

    def interaction(self, h, r, t):
        raise NotImplementedError

    def score_hrt(self, hrt_batch):
        h = self.entity(hrt_batch[:, 0])
        r = self.relation(hrt_batch[:, 1])
        t = self.entity(hrt_batch[:, 2])
        return self.interaction(h, r, t)

    def score_t(self, hr_batch, slice_size=None):
        h = self.entity(hr_batch[:, 0]).unsqueeze(1)
        r = self.relation(hr_batch[:, 1]).unsqueeze(1)
        if slice_size is None:
            t = self.entity.weight.unsqueeze(0)
            return self.interaction(h, r, t)
        return batched_scores(lambda a, b, s, e: self.interaction(a, b, self.entity.weight[s:e].unsqueeze(0)),
                              h, r, self.num_entities, slice_size)

    def post_parameter_update(self):
        w = self.entity.weight.data
        self.entity.weight.data = clamp_norm(w, maxnorm=1.0)


class TransE(ERModel):
    def __init__(self, *args, p=2, **kwargs):
        super().__init__(*args, **kwargs)
        self.p = p

    def interaction(self, h, r, t):
        return -(h + r - t).norm(p=self.p, dim=-1)


class DistMult(ERModel):
    def interaction(self, h, r, t):
        return (h * r * t).sum(dim=-1)
