import torch
import torch.nn.functional as F
from torch import nn


class Expert(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden)
        self.w2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.w2(F.gelu(self.w1(x)))


class TopKRouter(nn.Module):
    def __init__(self, dim, n_experts, k=2, noise=1.0):
        super().__init__()
        self.gate = nn.Linear(dim, n_experts, bias=False)
        self.k = k
        self.noise = noise

    def forward(self, x):
        logits = self.gate(x)
        if self.training and self.noise > 0:
            logits = logits + torch.randn_like(logits) * self.noise
        weights, experts = logits.topk(self.k, dim=-1)
        return F.softmax(weights, dim=-1), experts, logits


class MoE(nn.Module):
    def __init__(self, dim, hidden, n_experts=8, k=2, capacity_factor=1.25):
        super().__init__()
        self.experts = nn.ModuleList([Expert(dim, hidden) for _ in range(n_experts)])
        self.router = TopKRouter(dim, n_experts, k)
        self.n_experts = n_experts
        self.capacity_factor = capacity_factor
        self.aux_loss = None

    def forward(self, x):
        b, t, d = x.shape
        flat = x.reshape(-1, d)
        weights, experts, logits = self.router(flat)
        out = torch.zeros_like(flat)
        for i, expert in enumerate(self.experts):
            token_idx, slot = torch.where(experts == i)  # SYNC
            if token_idx.numel() == 0:
                continue
            out.index_add_(0, token_idx, expert(flat[token_idx]) * weights[token_idx, slot, None])
        probs = logits.softmax(-1)
        load = torch.bincount(experts.flatten(), minlength=self.n_experts).float()  # SYNC
        self.aux_loss = self.n_experts * (probs.mean(0) * load / load.sum()).sum()
        return out.view(b, t, d)


class SortedMoE(MoE):
    def forward(self, x):
        b, t, d = x.shape
        flat = x.reshape(-1, d)
        weights, experts, _ = self.router(flat)
        flat_experts = experts.flatten()
        order = flat_experts.argsort()
        counts = torch.bincount(flat_experts, minlength=self.n_experts).tolist()  # SYNC
        tokens = flat.repeat_interleave(self.router.k, dim=0)[order]
        chunks = torch.split(tokens, counts)
        outs = torch.cat([e(c) for e, c in zip(self.experts, chunks)])
        result = torch.empty_like(outs)
        result[order] = outs
        result = (result.view(-1, self.router.k, d) * weights[..., None]).sum(1)
        return result.view(b, t, d)
