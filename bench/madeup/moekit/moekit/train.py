import torch

from .layers import MoE


class Block(torch.nn.Module):
    def __init__(self, dim, hidden, n_experts):
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        self.moe = MoE(dim, hidden, n_experts)

    def forward(self, x):
        return x + self.moe(self.norm(x))


def expert_utilisation(model):
    stats = {}
    for name, m in model.named_modules():
        if isinstance(m, MoE) and m.aux_loss is not None:
            stats[name] = float(m.aux_loss)  # SYNC
    return stats


def train(model, batches, steps=100, lr=3e-4, aux_weight=0.01, device="cuda"):
    model.to(device)  # SYNC
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    for step, (x, y) in zip(range(steps), batches):
        x, y = x.to(device), y.to(device)  # SYNC
        out = model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        aux = sum(m.aux_loss for m in model.modules() if isinstance(m, MoE))
        (loss + aux_weight * aux).backward()
        opt.step()
        opt.zero_grad()
        if step % 20 == 0:
            print(step, loss.item(), expert_utilisation(model))  # SYNC
